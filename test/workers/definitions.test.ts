import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject, WorkflowDef } from "../../src/engine/model";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, eventually, hits, httpTask, register, rowCount, startWorkflow, target, waitFor, waitForIndexRow } from "./helpers";

const valid = (name: string, version = 1): JsonObject => ({
  name,
  version,
  schemaVersion: 2,
  ownerEmail: "team@example.com",
  tasks: [httpTask("get", { uri: target("/echo/x"), method: "GET" })],
});

async function refused(response: Response, status: number, error: string) {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { status: number; error: string; message: string; validationErrors?: { path: string; message: string }[] };
  expect(body.status).toBe(status);
  expect(body.error).toBe(error);
  return body;
}

describe("registering definitions", () => {
  it("stores versions, resolves latest, and refuses a duplicate without overwrite", async () => {
    await apiOk("POST", "/api/metadata/workflow", valid("defs_a", 1));
    await apiOk("POST", "/api/metadata/workflow", valid("defs_a", 2));
    expect((await apiOk("GET", "/api/metadata/workflow/defs_a"))["version"]).toBe(2);
    expect((await apiOk("GET", "/api/metadata/workflow/defs_a?version=1"))["version"]).toBe(1);
    const conflict = await refused(await api("POST", "/api/metadata/workflow", { ...valid("defs_a", 2), description: "changed" }), 409, "CONFLICT");
    expect(conflict.message).toContain("overwrite=true");
    expect((await apiOk("GET", "/api/metadata/workflow/defs_a?version=2"))["description"]).toBeUndefined();
    await apiOk("POST", "/api/metadata/workflow?overwrite=true", { ...valid("defs_a", 2), description: "changed" });
    expect((await apiOk("GET", "/api/metadata/workflow/defs_a?version=2"))["description"]).toBe("changed");
  });

  it("refuses a version past a Java int (2147483647, every version's bound) with a 400 wherever one is asked for, as the start's body does and Conductor's Integer parameters do", async () => {
    await register(valid("defs_past_int"));
    for (const [method, path] of [
      ["GET", "/api/metadata/workflow/defs_past_int?version=2147483648"],
      ["POST", "/api/workflow/defs_past_int?version=2147483648"],
      ["DELETE", "/api/metadata/workflow/defs_past_int/2147483648"],
      ["GET", "/api/workflow/running/defs_past_int?version=2147483648"],
    ] as const) {
      expect((await refused(await api(method, path, method === "POST" ? {} : undefined), 400, "VALIDATION_ERROR")).validationErrors?.map((issue) => issue.path)).toEqual(["version"]);
    }
    await refused(await api("POST", "/api/workflow", { name: "defs_past_int", version: 2147483648 }), 400, "VALIDATION_ERROR");
    expect(await apiOk("GET", "/api/metadata/workflow/defs_past_int?version=2147483647", undefined, 404)).toMatchObject({ message: "No such workflow found by name: defs_past_int, version: 2147483647" });
  });

  it("a start or read by a name with its version written into it (name:2) is Conductor's 404, saying the version goes in its own field; nothing starts", async () => {
    await register(valid("defs_colon", 2));
    const hint = ` (a workflow name holds no ':'; for version 2 of "defs_colon", give the name "defs_colon" and version 2)`;
    for (const [method, path, body] of [
      ["POST", "/api/workflow", { name: "defs_colon:2" }],
      ["POST", "/api/workflow/defs_colon:2", {}],
      ["GET", "/api/metadata/workflow/defs_colon:2", undefined],
    ] as const) {
      expect(await refused(await api(method, path, body), 404, "NOT_FOUND")).toMatchObject({ message: `No such workflow found by name: defs_colon:2, version: null${hint}` });
    }
    expect((await refused(await api("POST", "/api/workflow", { name: "defs:colon" }), 404, "NOT_FOUND")).message).toBe("No such workflow found by name: defs:colon, version: null (a workflow name holds no ':')");
    expect(await apiOk("GET", "/api/workflow/running/defs_colon")).toEqual([]);
  });

  it("takes version 0 as the Java SDK's ConductorWorkflow registers and starts it: version 0 when registered, else the latest", async () => {
    await apiOk("POST", "/api/metadata/workflow", { ...valid("defs_zero", 0), description: "zero" });
    expect(await apiOk("GET", "/api/metadata/workflow/defs_zero?version=0")).toMatchObject({ version: 0, description: "zero" });
    const zeroStarted = await apiOk<string>("POST", "/api/workflow", { name: "defs_zero", version: 0 });
    expect((await waitFor(zeroStarted, ["COMPLETED", "FAILED"])).workflowVersion).toBe(0);
    await apiOk("POST", "/api/metadata/workflow", valid("defs_zero", 1));
    // Asked for, version 0 is still the one registered as 0; unasked, the latest.
    expect((await waitFor(await apiOk<string>("POST", "/api/workflow/defs_zero?version=0", {}), ["COMPLETED", "FAILED"])).workflowVersion).toBe(0);
    expect((await waitFor(await apiOk<string>("POST", "/api/workflow/defs_zero", {}), ["COMPLETED", "FAILED"])).workflowVersion).toBe(1);
    // Deleted, 0 means the latest, as Orkes reads it for a task's child.
    await apiOk("DELETE", "/api/metadata/workflow/defs_zero/0");
    expect((await apiOk("GET", "/api/metadata/workflow/defs_zero?version=0"))["version"]).toBe(1);
    expect((await waitFor(await apiOk<string>("POST", "/api/workflow", { name: "defs_zero", version: 0 }), ["COMPLETED", "FAILED"])).workflowVersion).toBe(1);
    await refused(await api("POST", "/api/metadata/workflow", valid("defs_zero", -1)), 400, "VALIDATION_ERROR");
    await refused(await api("POST", "/api/workflow", { name: "defs_zero", version: -1 }), 400, "VALIDATION_ERROR");
  });

  it("validates a definition without registering it (POST /api/metadata/workflow/validate): 200 and nothing stored, or the registration's 400", async () => {
    const before = await rowCount("workflow_defs");
    expect((await api("POST", "/api/metadata/workflow/validate", valid("defs_validated"))).status).toBe(200);
    expect(await rowCount("workflow_defs")).toBe(before);
    expect((await api("GET", "/api/metadata/workflow/defs_validated")).status).toBe(404);
    const broken = { ...valid("defs_validated"), tasks: [{ name: "x", taskReferenceName: "x", type: "HTTP", inputParameters: {} }] };
    const bad = await refused(await api("POST", "/api/metadata/workflow/validate", broken), 400, "VALIDATION_ERROR");
    // The registration's 400: its message and issues, the HTTP task's two missing fields named.
    const registering = await refused(await api("POST", "/api/metadata/workflow", broken), 400, "VALIDATION_ERROR");
    expect(bad.validationErrors?.map((issue) => issue.path)).toEqual(["tasks[0].inputParameters.uri", "tasks[0].inputParameters.method"]);
    expect([bad.message, bad.validationErrors]).toEqual([registering.message, registering.validationErrors]);
    expect(await rowCount("workflow_defs")).toBe(before);
    // Asked as a registration would be: a writer of that workflow only.
    const writer = await createUser("defs-validate-writer", { directPermissions: [{ action: "WORKFLOW_WRITE", scope: "workflow:defs_validated" }] });
    expect((await call("POST", "/api/metadata/workflow/validate", orkes(writer.token), valid("defs_validated"))).status).toBe(200);
    expect((await call("POST", "/api/metadata/workflow/validate", orkes(writer.token), valid("defs_other"))).status).toBe(403);
  });

  it("lists the names alone (GET /api/metadata/workflow/names) and one name's versions as summaries (…/{name}/versions), as Conductor's", async () => {
    await apiOk("PUT", "/api/metadata/workflow", [valid("defs_listed", 1), valid("defs_listed", 2), valid("defs_listed_other", 1)]);
    const names = await apiOk<string[]>("GET", "/api/metadata/workflow/names");
    expect(names.filter((listed) => listed.startsWith("defs_listed"))).toEqual(["defs_listed", "defs_listed_other"]);
    expect(names).toEqual([...names].sort());
    const versions = await apiOk<Array<{ name: string; version: number; createTime: number }>>("GET", "/api/metadata/workflow/defs_listed/versions");
    expect(versions.map(({ name, version }) => [name, version])).toEqual([["defs_listed", 1], ["defs_listed", 2]]);
    expect(typeof versions[0]!.createTime).toBe("number");
    for (const unknown of ["defs_never", "constructor"]) {
      const response = await api("GET", `/api/metadata/workflow/${unknown}/versions`);
      expect(response.status, unknown).toBe(404);
      // Conductor's words, as the definition's own GET answers them.
      expect(((await response.json()) as { message: string }).message).toBe(`No such workflow found by name: ${unknown}, version: null`);
    }
    // A reader of one workflow sees its name alone, and may not list another's versions.
    const reader = await createUser("defs-listed-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:defs_listed" }] });
    expect(await (await call("GET", "/api/metadata/workflow/names", orkes(reader.token))).json()).toEqual(["defs_listed"]);
    expect((await call("GET", "/api/metadata/workflow/defs_listed_other/versions", orkes(reader.token))).status).toBe(403);
  });

  it("overwrite is read as Spring binds a boolean (True, 1, yes, on in any case), and another value is a 400 that writes nothing", async () => {
    await apiOk("POST", "/api/metadata/workflow", valid("defs_overwrite", 1));
    await apiOk("POST", "/api/metadata/workflow?overwrite=True", { ...valid("defs_overwrite", 1), description: "changed" });
    expect((await apiOk("GET", "/api/metadata/workflow/defs_overwrite"))["description"]).toBe("changed");
    for (const [word, description] of [["1", "by one"], ["Yes", "by yes"], ["%20on%20", "by on"]] as const) {
      await apiOk("POST", `/api/metadata/workflow?overwrite=${word}`, { ...valid("defs_overwrite", 1), description });
      expect((await apiOk("GET", "/api/metadata/workflow/defs_overwrite"))["description"]).toBe(description);
    }
    for (const word of ["False", "0", "no", "OFF"]) {
      await refused(await api("POST", `/api/metadata/workflow?overwrite=${word}`, { ...valid("defs_overwrite", 1), description: "again" }), 409, "CONFLICT");
    }
    await refused(await api("POST", "/api/metadata/workflow?overwrite=sure", { ...valid("defs_overwrite", 1), description: "again" }), 400, "VALIDATION_ERROR");
    expect((await apiOk("GET", "/api/metadata/workflow/defs_overwrite"))["description"]).toBe("by on");
  });

  it("registers a new version with newVersion=true (the version after the latest, whatever the body says), as Orkes' clients ask", async () => {
    await apiOk("POST", "/api/metadata/workflow", valid("defs_next", 1));
    await apiOk("POST", "/api/metadata/workflow?newVersion=true", { ...valid("defs_next", 1), description: "second" });
    await apiOk("PUT", "/api/metadata/workflow?newVersion=true", [{ ...valid("defs_next", 7), description: "third" }, { ...valid("defs_next", 7), description: "fourth" }, valid("defs_next_new", 5)]);
    const versions = (await apiOk<JsonObject[]>("GET", "/api/metadata/workflow?name=defs_next")).map((definition) => [definition["version"], definition["description"]]);
    expect(versions).toEqual([[1, undefined], [2, "second"], [3, "third"], [4, "fourth"]]);
    expect((await apiOk<JsonObject[]>("GET", "/api/metadata/workflow?name=defs_next_new")).map((definition) => definition["version"])).toEqual([1]);
    // PUT replaces unless asked not to: overwrite=false refuses an existing version and writes none of the list.
    const conflict = await refused(await api("PUT", "/api/metadata/workflow?overwrite=false", [valid("defs_next_other", 1), { ...valid("defs_next", 4), description: "replaced" }]), 409, "CONFLICT");
    expect(conflict.message).toContain("defs_next version 4");
    expect((await apiOk("GET", "/api/metadata/workflow/defs_next?version=4"))["description"]).toBe("fourth");
    expect(await apiOk<JsonObject[]>("GET", "/api/metadata/workflow?name=defs_next_other")).toEqual([]);
    // Orkes' short listing leaves out the tasks.
    const short = await apiOk<JsonObject[]>("GET", "/api/metadata/workflow?name=defs_next_new&short=true");
    expect(short.map((definition) => [definition["name"], definition["tasks"]])).toEqual([["defs_next_new", []]]);
  });

  it("refuses newVersion=true after version 2147483647 (Java's int, every version's bound) with a 400, storing nothing", async () => {
    await apiOk("POST", "/api/metadata/workflow", valid("defs_next_max", 2147483647));
    const single = await refused(await api("POST", "/api/metadata/workflow?newVersion=true", valid("defs_next_max", 1)), 400, "VALIDATION_ERROR");
    expect(single.validationErrors?.map((issue) => issue.path)).toEqual(["version"]);
    const listed = await refused(await api("PUT", "/api/metadata/workflow?newVersion=true", [valid("defs_next_max_other", 1), valid("defs_next_max", 1)]), 400, "VALIDATION_ERROR");
    expect(listed.validationErrors?.map((issue) => issue.path)).toEqual(["[1].version"]);
    expect((await apiOk<JsonObject[]>("GET", "/api/metadata/workflow?name=defs_next_max")).map((definition) => definition["version"])).toEqual([2147483647]);
    expect(await apiOk<JsonObject[]>("GET", "/api/metadata/workflow?name=defs_next_max_other")).toEqual([]);
  });

  it("PUT takes one definition alone too (Orkes' docs' curl), its problems named without an index", async () => {
    await apiOk("PUT", "/api/metadata/workflow", { ...valid("defs_put_single", 2), description: "one" });
    expect((await apiOk("GET", "/api/metadata/workflow/defs_put_single?version=2"))["description"]).toBe("one");
    const bad = await refused(await api("PUT", "/api/metadata/workflow", { ...valid("defs_put_single", 3), tasks: [] }), 400, "VALIDATION_ERROR");
    expect(JSON.stringify(bad)).toContain('"path":"tasks"');
    await refused(await api("GET", "/api/metadata/workflow/defs_put_single?version=3"), 404, "NOT_FOUND");
  });

  it("PUT creates or updates a list atomically, answering Conductor's BulkResponse; GET lists; DELETE removes one version", async () => {
    // Conductor's MetadataResource update answers a BulkResponse naming each definition, in the order given.
    expect(await apiOk("PUT", "/api/metadata/workflow", [valid("defs_b", 1), valid("defs_c", 1), valid("defs_c", 2)])).toEqual({
      bulkErrorResults: {},
      bulkSuccessfulResults: ["defs_b", "defs_c", "defs_c"],
    });
    const all = await apiOk<JsonObject[]>("GET", "/api/metadata/workflow");
    expect(all.map((definition) => definition["name"])).toEqual(expect.arrayContaining(["defs_b", "defs_c"]));
    await apiOk("DELETE", "/api/metadata/workflow/defs_b/1");
    await refused(await api("GET", "/api/metadata/workflow/defs_b"), 404, "NOT_FOUND");
    await refused(await api("DELETE", "/api/metadata/workflow/defs_b/1"), 404, "NOT_FOUND");
  });

  it("lists every name with its versions (names-and-versions) and each name's latest definition (latest-versions), as Conductor's MetadataClient reads them", async () => {
    await apiOk("PUT", "/api/metadata/workflow", [valid("defs_nv_a", 1), valid("defs_nv_a", 2), { ...valid("defs_nv_b", 3), description: "b3" }]);
    const stored = await env.DB.prepare(`SELECT name, version, create_time FROM workflow_defs WHERE name LIKE 'defs_nv_%' ORDER BY name, version`).all<{ name: string; version: number; create_time: number }>();
    const summaries = await apiOk<Record<string, Array<{ name: string; version: number; createTime: number }>>>("GET", "/api/metadata/workflow/names-and-versions");
    expect({ a: summaries["defs_nv_a"], b: summaries["defs_nv_b"] }).toEqual({
      a: stored.results.slice(0, 2).map((row) => ({ name: row.name, version: row.version, createTime: row.create_time })),
      b: [{ name: "defs_nv_b", version: 3, createTime: stored.results[2]!.create_time }],
    });
    const latest = await apiOk<JsonObject[]>("GET", "/api/metadata/workflow/latest-versions");
    const ours = latest.filter((definition) => String(definition["name"]).startsWith("defs_nv_"));
    expect(ours.map((definition) => [definition["name"], definition["version"], definition["description"]])).toEqual([["defs_nv_a", 2, undefined], ["defs_nv_b", 3, "b3"]]);

    // A workflow named `__proto__` is a name like another (keyed on a plain object, it made these listings a 500).
    await apiOk("POST", "/api/metadata/workflow", valid("__proto__", 1));
    try {
      const withProto = await apiOk<Record<string, unknown>>("GET", "/api/metadata/workflow/names-and-versions");
      expect(Object.hasOwn(withProto, "__proto__") && withProto["__proto__"]).toEqual([{ name: "__proto__", version: 1, createTime: expect.any(Number) }]);
      expect(await apiOk<string[]>("GET", "/api/metadata/workflow/names")).toContain("__proto__");
    } finally {
      await apiOk("DELETE", "/api/metadata/workflow/__proto__/1");
    }
  });

  it("lists each name's latest definition as Conductor OSS's WorkflowDefListItem (GET /api/metadata/workflow/list): its summary fields, its top-level task types and count, its classifier, no tasks", async () => {
    const two: JsonObject = { ...valid("defs_li_a", 2), description: "second", timeoutSeconds: 60, timeoutPolicy: "TIME_OUT_WF", restartable: false, failureWorkflow: "defs_li_fail", inputParameters: ["id"], outputParameters: { r: "${get.output.response}" } };
    two["tasks"] = [httpTask("get", { uri: target("/echo/x"), method: "GET" }), { name: "w", taskReferenceName: "w", type: "WAIT", inputParameters: { duration: "1 s" } }, httpTask("again", { uri: target("/echo/y"), method: "GET" })];
    await apiOk("PUT", "/api/metadata/workflow", [valid("defs_li_a", 1), two, { ...valid("defs_li_b", 1), metadata: { agent_sdk: "python" } }, { ...valid("defs_li_c", 1), metadata: { classifier: "pipeline" } }]);
    const items = (await apiOk<JsonObject[]>("GET", "/api/metadata/workflow/list")).filter((item) => String(item["name"]).startsWith("defs_li_"));
    expect(items.map((item) => item["name"])).toEqual(["defs_li_a", "defs_li_b", "defs_li_c"]);
    const stored = await env.DB.prepare(`SELECT create_time FROM workflow_defs WHERE name = 'defs_li_a' AND version = 2`).first<{ create_time: number }>();
    expect(items[0]).toEqual({
      name: "defs_li_a",
      description: "second",
      version: 2,
      createTime: stored!.create_time,
      schemaVersion: 2,
      restartable: false,
      workflowStatusListenerEnabled: false,
      ownerEmail: "team@example.com",
      inputParameters: ["id"],
      outputParameters: { r: "${get.output.response}" },
      timeoutPolicy: "TIME_OUT_WF",
      timeoutSeconds: 60,
      taskTypes: ["HTTP", "WAIT"],
      taskCount: 3,
      failureWorkflow: "defs_li_fail",
      classifier: "workflow",
    });
    expect(items.slice(1).map((item) => [item["classifier"], item["restartable"], item["taskTypes"], item["taskCount"]])).toEqual([
      ["agent", true, ["HTTP"], 1],
      ["pipeline", true, ["HTTP"], 1],
    ]);
  });

  it("shows a reader of some workflows the definitions of those in every listing, and refuses one who may read none", async () => {
    await apiOk("PUT", "/api/metadata/workflow", [valid("defs_scoped_a", 1), valid("defs_scoped_a", 2), valid("defs_scoped_b", 1), valid("defs_scopedx_c", 1)]);
    const narrow = await createUser("defs-scoped-narrow", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:defs_scoped_a" }, { action: "WORKFLOW_READ", scope: "workflow:defs_scopedx_*" }] });
    const asNarrow = async <T>(path: string) => {
      const response = await call("GET", path, orkes(narrow.token));
      expect(response.status, path).toBe(200);
      return (await response.json()) as T;
    };
    const readable = (names: string[]) => names.filter((name) => name.startsWith("defs_scoped")).sort();
    const listed = await asNarrow<WorkflowDef[]>("/api/metadata/workflow");
    expect(listed.map((definition) => `${definition.name}/${definition.version}`).sort()).toEqual(["defs_scoped_a/1", "defs_scoped_a/2", "defs_scopedx_c/1"]);
    // Nothing else either: only what the grants name.
    expect(listed.every((definition) => definition.name === "defs_scoped_a" || definition.name.startsWith("defs_scopedx_"))).toBe(true);
    expect(readable(Object.keys(await asNarrow<Record<string, unknown>>("/api/metadata/workflow/names-and-versions")))).toEqual(["defs_scoped_a", "defs_scopedx_c"]);
    expect(readable((await asNarrow<WorkflowDef[]>("/api/metadata/workflow/latest-versions")).map((definition) => `${definition.name}/${definition.version}`))).toEqual(["defs_scoped_a/2", "defs_scopedx_c/1"]);
    expect(readable((await asNarrow<WorkflowDef[]>("/api/metadata/workflow/list")).map((definition) => `${definition.name}/${definition.version}`))).toEqual(["defs_scoped_a/2", "defs_scopedx_c/1"]);
    expect(await asNarrow<WorkflowDef[]>("/api/metadata/workflow?name=defs_scoped_b")).toEqual([]);
    expect((await asNarrow<WorkflowDef[]>("/api/metadata/workflow?name=defs_scoped_a")).map((definition) => definition.version)).toEqual([1, 2]);
    expect((await call("GET", "/api/metadata/workflow/defs_scoped_b", orkes(narrow.token))).status).toBe(403);
    // An admin of metadata and a reader of every workflow see them all.
    const everything = (await apiOk<WorkflowDef[]>("GET", "/api/metadata/workflow")).map((definition) => definition.name);
    expect(readable([...new Set(everything)])).toEqual(["defs_scoped_a", "defs_scoped_b", "defs_scopedx_c"]);
    // A caller who may read no workflow is still refused the listings.
    const none = await createUser("defs-scoped-none", { directPermissions: [{ action: "TASK_READ", scope: "*" }] });
    for (const path of ["/api/metadata/workflow/names-and-versions", "/api/metadata/workflow/latest-versions", "/api/metadata/workflow/list", "/api/metadata/workflow"]) {
      expect((await call("GET", path, orkes(none.token))).status, path).toBe(403);
    }
  });

  it("lists with Orkes' access the definitions the caller holds that access to, READ when absent; an unknown access is a 400", async () => {
    await apiOk("PUT", "/api/metadata/workflow", [valid("defs_access_a", 1), valid("defs_access_a", 2), valid("defs_access_b", 1), valid("defs_access_c", 1)]);
    // Orkes' docs (Get All Workflow Definitions): access, "the access level being requested", READ, CREATE, UPDATE,
    // EXECUTE or DELETE, default READ. EXECUTE of a workflow definition is WORKFLOW_ADMIN on it here.
    const caller = await createUser("defs-access-caller", {
      directPermissions: [
        { action: "WORKFLOW_READ", scope: "workflow:defs_access_*" },
        { action: "WORKFLOW_WRITE", scope: "workflow:defs_access_a" },
        { action: "WORKFLOW_ADMIN", scope: "workflow:defs_access_b" },
      ],
    });
    const listed = async (query: string) => {
      const response = await call("GET", `/api/metadata/workflow${query}`, orkes(caller.token));
      expect(response.status, query).toBe(200);
      return ((await response.json()) as WorkflowDef[]).map((definition) => `${definition.name}/${definition.version}`).sort();
    };
    const all = ["defs_access_a/1", "defs_access_a/2", "defs_access_b/1", "defs_access_c/1"];
    expect(await listed("")).toEqual(all);
    expect(await listed("?access=READ&metadata=false")).toEqual(all);
    expect(await listed("?access=")).toEqual(all);
    for (const write of ["CREATE", "UPDATE", "DELETE"]) expect(await listed(`?access=${write}`), write).toEqual(["defs_access_a/1", "defs_access_a/2"]);
    expect(await listed("?access=EXECUTE")).toEqual(["defs_access_b/1"]);
    expect(await listed("?access=UPDATE&name=defs_access_b")).toEqual([]);
    // An admin of metadata writes every definition.
    const admin = (await apiOk<WorkflowDef[]>("GET", "/api/metadata/workflow?access=UPDATE")).map((definition) => definition.name);
    expect([...new Set(admin.filter((name) => name.startsWith("defs_access_")))].sort()).toEqual(["defs_access_a", "defs_access_b", "defs_access_c"]);
    const unknown = await refused(await call("GET", "/api/metadata/workflow?access=WRITE", orkes(caller.token)), 400, "VALIDATION_ERROR");
    expect(unknown.validationErrors?.map((issue) => issue.path)).toEqual(["access"]);
  });

  it("lets a writer of some workflows replace their definitions with PUT (as the UI's Edit saves), all or nothing", async () => {
    await apiOk("PUT", "/api/metadata/workflow", [valid("defs_w_a", 1), valid("defs_other_w", 1)]);
    const writer = await createUser("defs-scoped-writer", { directPermissions: [{ action: "WORKFLOW_WRITE", scope: "workflow:defs_w_*" }] });
    const put = (definitions: JsonObject[]) => call("PUT", "/api/metadata/workflow", orkes(writer.token), definitions);
    expect((await put([{ ...valid("defs_w_a", 1), description: "edited" }, valid("defs_w_b", 1)])).status).toBe(200);
    expect(await apiOk("GET", "/api/metadata/workflow/defs_w_a")).toMatchObject({ description: "edited", updatedBy: "defs-scoped-writer" });
    expect(await apiOk("GET", "/api/metadata/workflow/defs_w_b")).toMatchObject({ version: 1, createdBy: "defs-scoped-writer" });
    // One definition outside the grant refuses the whole list, naming it; nothing of it is written.
    const before = await rowCount("workflow_defs");
    const refusal = await put([{ ...valid("defs_w_a", 1), description: "again" }, { ...valid("defs_other_w", 1), description: "taken" }]);
    expect(refusal.status).toBe(403);
    const message = ((await refusal.json()) as { message: string }).message;
    expect(message).toContain("defs_other_w");
    expect(message).not.toContain("defs_w_a");
    expect(await rowCount("workflow_defs")).toBe(before);
    expect(await apiOk("GET", "/api/metadata/workflow/defs_w_a")).toMatchObject({ description: "edited" });
    expect((await apiOk<JsonObject>("GET", "/api/metadata/workflow/defs_other_w"))["description"]).toBeUndefined();
    // Refused before validation: a definition not its own, even a malformed one, tells it nothing (a 403, not a 400).
    expect((await put([{ name: "defs_other_w", tasks: "not a list", failureWorkflow: "defs_secret_flow" }])).status).toBe(403);
    // A caller without WORKFLOW_WRITE anywhere is refused by the rule, before the body is read.
    const reader = await createUser("defs-scoped-reader-only", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    expect((await call("PUT", "/api/metadata/workflow", orkes(reader.token), [valid("defs_w_c", 1)])).status).toBe(403);
    expect((await api("GET", "/api/metadata/workflow/defs_w_c")).status).toBe(404);
  });

  it("records who registered a version and who last replaced it (never taken from the body), and keeps metadata as given", async () => {
    const author = await createUser("def-author", { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }] });
    const asAuthor = (body: JsonObject) => call("POST", "/api/metadata/workflow?overwrite=true", orkes(author.token), body);
    expect((await asAuthor({ ...valid("audited"), createdBy: "someone-else", ownerApp: "billing-app", metadata: { team: "billing", tags: ["a"] } })).status).toBe(200);
    expect(await apiOk("GET", "/api/metadata/workflow/audited")).toMatchObject({ createdBy: "def-author", updatedBy: "def-author", ownerApp: "billing-app", metadata: { team: "billing", tags: ["a"] } });
    await apiOk("POST", "/api/metadata/workflow?overwrite=true", { ...valid("audited"), description: "changed" });
    expect(await apiOk("GET", "/api/metadata/workflow/audited")).toMatchObject({ createdBy: "def-author", updatedBy: "admin", description: "changed" });
    // Replaced, not merged: Conductor's empty default.
    expect((await apiOk<JsonObject>("GET", "/api/metadata/workflow/audited"))["metadata"]).toEqual({});
    await apiOk("PUT", "/api/metadata/workflow", [valid("audited", 2)]);
    expect(await apiOk("GET", "/api/metadata/workflow/audited?version=2")).toMatchObject({ createdBy: "admin", updatedBy: "admin" });
    const refused = await api("POST", "/api/metadata/workflow", { ...valid("audited_bad"), metadata: "not an object" });
    expect(refused.status).toBe(400);
    expect((await api("GET", "/api/metadata/workflow/audited_bad")).status).toBe(404);
  });

  it("fills Conductor defaults", async () => {
    await apiOk("POST", "/api/metadata/workflow", { name: "defs_defaults", tasks: [httpTask("get", { uri: target("/echo/x"), method: "GET" })] });
    const stored = await apiOk("GET", "/api/metadata/workflow/defs_defaults");
    expect(stored).toMatchObject({ name: "defs_defaults", version: 1, schemaVersion: 2 });
  });

  it("reads back with the fields Conductor's WorkflowDef JSON always holds, its defaults where none was given, in every read and in an execution's workflowDefinition", async () => {
    await apiOk("POST", "/api/metadata/workflow", { name: "defs_shown", tasks: [{ name: "pause", taskReferenceName: "pause", type: "WAIT" }] });
    const defaults = {
      inputParameters: [], outputParameters: {}, workflowStatusListenerEnabled: false, variables: {}, inputTemplate: {},
      enforceSchema: true, metadata: {}, maskedFields: [], restartable: true, timeoutPolicy: "ALERT_ONLY", timeoutSeconds: 0, schemaVersion: 2,
    };
    expect(await apiOk("GET", "/api/metadata/workflow/defs_shown")).toMatchObject(defaults);
    expect((await apiOk<JsonObject[]>("GET", "/api/metadata/workflow?name=defs_shown"))[0]).toMatchObject(defaults);
    expect((await apiOk<JsonObject[]>("GET", "/api/metadata/workflow/latest-versions")).find((definition) => definition["name"] === "defs_shown")).toMatchObject(defaults);
    const workflowId = await startWorkflow("defs_shown");
    expect((await apiOk<JsonObject>("GET", `/api/workflow/${workflowId}`))["workflowDefinition"]).toMatchObject(defaults);
    // What was given is shown as given; read back and registered again, the defaults change nothing.
    await apiOk("POST", "/api/metadata/workflow?overwrite=true", { name: "defs_shown", tasks: [{ name: "pause", taskReferenceName: "pause", type: "WAIT" }], inputParameters: ["a"], enforceSchema: false, workflowStatusListenerEnabled: true });
    const given = await apiOk<JsonObject>("GET", "/api/metadata/workflow/defs_shown");
    expect(given).toMatchObject({ inputParameters: ["a"], enforceSchema: false, workflowStatusListenerEnabled: true, maskedFields: [] });
    await apiOk("PUT", "/api/metadata/workflow", [given]);
    expect(await apiOk("GET", "/api/metadata/workflow/defs_shown")).toEqual({ ...given, updateTime: expect.any(Number) });
  });
});

describe("a definition's tasks as Conductor's WorkflowTask JSON shows them", () => {
  it("show startDelay 0, optional and asyncComplete false where none was given, at any depth, in the definition and a task's workflowTask; registered again as read, nothing changes", async () => {
    const noop = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "NOOP" });
    await apiOk("POST", "/api/metadata/workflow", {
      name: "defs_wt_shown",
      tasks: [
        { name: "route", taskReferenceName: "route", type: "SWITCH", evaluatorType: "value-param", expression: "k", inputParameters: { k: "a" }, decisionCases: { a: [noop("in_case")] }, defaultCase: [noop("in_default")] },
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[noop("left")], [{ name: "hold", taskReferenceName: "hold", type: "WAIT", optional: true }]] },
        { name: "gather", taskReferenceName: "gather", type: "JOIN", joinOn: ["left", "hold"] },
        { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "false", loopOver: [noop("in_loop")] },
        { name: "defs_wt_worker", taskReferenceName: "work", type: "SIMPLE", taskDefinition: { timeoutSeconds: 60, responseTimeoutSeconds: 30 } },
      ],
    });
    const defaults = { startDelay: 0, optional: false, asyncComplete: false };
    const read = await apiOk<WorkflowDef>("GET", "/api/metadata/workflow/defs_wt_shown");
    const [route, fan, gather, loop] = read.tasks;
    expect(route).toMatchObject({ ...defaults, decisionCases: { a: [{ taskReferenceName: "in_case", ...defaults }] }, defaultCase: [{ taskReferenceName: "in_default", ...defaults }] });
    expect(fan).toMatchObject({ ...defaults, forkTasks: [[{ taskReferenceName: "left", ...defaults }], [{ taskReferenceName: "hold", ...defaults, optional: true }]] });
    expect(gather).toMatchObject(defaults);
    expect(loop).toMatchObject({ ...defaults, loopOver: [{ taskReferenceName: "in_loop", ...defaults }] });
    // An inline task definition as GET /api/metadata/taskdefs shows one: Conductor's TaskDef defaults.
    expect(read.tasks[4]!.taskDefinition).toMatchObject({ timeoutSeconds: 60, responseTimeoutSeconds: 30, inputKeys: [], outputKeys: [], totalTimeoutSeconds: 0, enforceSchema: false });
    const workflowId = await startWorkflow("defs_wt_shown");
    const run = await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "hold"));
    expect(run.tasks.find((task) => task.referenceTaskName === "hold")!["workflowTask"]).toMatchObject({ ...defaults, optional: true });
    expect(run.tasks.find((task) => task.referenceTaskName === "route")!["workflowTask"]).toMatchObject({ ...defaults, decisionCases: { a: [{ taskReferenceName: "in_case", ...defaults }] } });
    await apiOk("PUT", "/api/metadata/workflow", [read]);
    expect(await apiOk("GET", "/api/metadata/workflow/defs_wt_shown")).toEqual({ ...read, updateTime: expect.any(Number) });
  });
});

describe("invalid definitions are refused with precise validationErrors and nothing is written", () => {
  const cases: Array<[string, JsonObject, string]> = [
    ["unknown task type", { ...valid("bad_type"), tasks: [{ name: "x", taskReferenceName: "x", type: "KAFKA_PUBLISH", inputParameters: {} }] }, "tasks[0].type"],
    ["missing uri", { ...valid("bad_uri"), tasks: [httpTask("x", { method: "GET" })] }, "tasks[0].inputParameters.uri"],
    ["missing method (nested)", { ...valid("bad_method"), tasks: [httpTask("x", { http_request: { uri: "http://a.test/" } })] }, "tasks[0].inputParameters.http_request.method"],
    ["method not in the list", { ...valid("bad_verb"), tasks: [httpTask("x", { uri: "http://a.test/", method: "FETCH" })] }, "tasks[0].inputParameters.method"],
    ["body missing for POST", { ...valid("bad_body"), tasks: [httpTask("x", { uri: "http://a.test/", method: "POST" })] }, "tasks[0].inputParameters.body"],
    ["contentType not in the list", { ...valid("bad_ct"), tasks: [httpTask("x", { uri: "http://a.test/", method: "PUT", body: {}, contentType: "text/csv" })] }, "tasks[0].inputParameters.contentType"],
    ["accept not in the list", { ...valid("bad_accept"), tasks: [httpTask("x", { uri: "http://a.test/", method: "GET", accept: "video/mp4" })] }, "tasks[0].inputParameters.accept"],
    ["duplicate taskReferenceName", { ...valid("bad_dup"), tasks: [httpTask("x", { uri: "http://a.test/", method: "GET" }), httpTask("x", { uri: "http://a.test/", method: "GET" })] }, "tasks[1].taskReferenceName"],
    ["malformed expression", { ...valid("bad_expr"), tasks: [httpTask("x", { uri: "http://a.test/${workflow.input.x", method: "GET" })] }, "tasks[0].inputParameters.uri"],
    ["malformed nested expression", { ...valid("bad_nested"), tasks: [httpTask("x", { uri: "http://a.test/${workflow.input.ids[${workflow.input.i}}", method: "GET" })] }, "tasks[0].inputParameters.uri"],
    ["secret named by a nested expression", { ...valid("bad_nested_secret"), tasks: [httpTask("x", { uri: "http://a.test/${workflow.secrets.${workflow.input.name}}", method: "GET" })] }, "tasks[0].inputParameters.uri"],
    ["secret written into a path", { ...valid("bad_secret_key"), outputParameters: { x: "${workflow.input.map[${workflow.secrets.k}]}" } }, "outputParameters.x"],
    ["environment variable named by a nested expression", { ...valid("bad_nested_env"), outputParameters: { x: "${workflow.env.${workflow.input.name}}" } }, "outputParameters.x"],
    ["bad ownerEmail", { ...valid("bad_email"), ownerEmail: "not an email" }, "ownerEmail"],
    ["no tasks", { ...valid("bad_empty"), tasks: [] }, "tasks"],
    ["restartable not a boolean", { ...valid("bad_restartable"), restartable: "no" }, "restartable"],
    ["timeoutPolicy not a workflow's", { ...valid("bad_timeout_policy"), timeoutPolicy: "RETRY" }, "timeoutPolicy"],
    ["inputTemplate not an object", { ...valid("bad_input_template"), inputTemplate: ["region"] }, "inputTemplate"],
    ["variables not an object", { ...valid("bad_variables"), variables: ["count"] }, "variables"],
    // Each execution stores a copy in its own row, beside its input and output: bounded like them.
    ["variables over MAX_PAYLOAD_BYTES", { ...valid("bad_variables_size"), variables: { blob: "x".repeat(800 * 1024) } }, "variables"],
  ];
  it.each(cases)("%s", async (_label, definition, path) => {
    const before = await rowCount("workflow_defs");
    const body = await refused(await api("POST", "/api/metadata/workflow", definition), 400, "VALIDATION_ERROR");
    expect(body.validationErrors?.map((issue) => issue.path)).toContain(path);
    expect(await rowCount("workflow_defs")).toBe(before);
  });

  it("reports every problem at once", async () => {
    const body = await refused(
      await api("POST", "/api/metadata/workflow", { name: "", ownerEmail: "x", tasks: [httpTask("a", { method: "GET" }), { name: "b", taskReferenceName: "b", type: "NOPE" }] }),
      400,
      "VALIDATION_ERROR",
    );
    expect(body.validationErrors?.map((issue) => issue.path)).toEqual(expect.arrayContaining(["name", "ownerEmail", "tasks[0].inputParameters.uri", "tasks[1].type"]));
  });

  it("a PUT list with one bad definition writes none of them", async () => {
    const before = await rowCount("workflow_defs");
    const body = await refused(await api("PUT", "/api/metadata/workflow", [valid("put_ok"), { ...valid("put_bad"), ownerEmail: "nope" }]), 400, "VALIDATION_ERROR");
    expect(body.validationErrors?.[0]?.path).toBe("[1].ownerEmail");
    expect(await rowCount("workflow_defs")).toBe(before);
  });

  it("bad JSON, wrong content type, non-object bodies and oversized bodies", async () => {
    const before = await rowCount("workflow_defs");
    const badJson = await refused(await api("POST", "/api/metadata/workflow", '{ "keySecret": "hunter2-secret" '), 400, "VALIDATION_ERROR");
    // The parser's own message quotes the body, which may hold a credential: it is not passed on.
    expect(JSON.stringify(badJson)).not.toContain("hunter2");
    await refused(await api("POST", "/api/metadata/workflow", JSON.stringify(valid("wrong_type")), { "content-type": "text/plain" }), 415, "UNSUPPORTED_MEDIA_TYPE");
    await refused(await api("POST", "/api/metadata/workflow", [1, 2]), 400, "VALIDATION_ERROR");
    await refused(await api("POST", "/api/metadata/workflow"), 400, "VALIDATION_ERROR");
    await refused(await api("PUT", "/api/metadata/workflow", "not_a_list"), 400, "VALIDATION_ERROR");
    // Found by the fuzz test: an empty list reached D1 as an empty batch (a 500).
    await refused(await api("PUT", "/api/metadata/workflow", []), 400, "VALIDATION_ERROR");
    const huge = { ...valid("huge"), description: "x".repeat(2 * 1024 * 1024) };
    await refused(await api("POST", "/api/metadata/workflow", huge), 413, "PAYLOAD_TOO_LARGE");
    expect(await rowCount("workflow_defs")).toBe(before);
  });

  it("a body that is not JSON is answered with the line and column of the mistake and what it is, quoting none of the body", async () => {
    const before = await rowCount("workflow_defs");
    // A newcomer's curl: a definition typed by hand, with a trailing comma after its last task.
    const trailingComma = '{\n  "name": "typed_by_hand",\n  "ownerEmail": "team@example.com",\n  "tasks": [\n    {"name": "w", "taskReferenceName": "w", "type": "WAIT"},\n  ]\n}';
    const body = await refused(await api("POST", "/api/metadata/workflow", trailingComma), 400, "VALIDATION_ERROR");
    expect(body.validationErrors).toEqual([{ path: "(body)", message: "line 6, column 3: a comma before ']': JSON allows no trailing comma" }]);
    expect(body.message).toBe("Request body is not valid JSON: (body): line 6, column 3: a comma before ']': JSON allows no trailing comma");
    const singleQuotes = await refused(await api("POST", "/api/workflow/anything", "{'keySecret': 'hunter2-secret'}"), 400, "VALIDATION_ERROR");
    expect(singleQuotes.validationErrors?.[0]?.message).toBe("line 1, column 2: a single quote: JSON strings and names take double quotes");
    expect(JSON.stringify(singleQuotes)).not.toContain("hunter2");
    expect(await rowCount("workflow_defs")).toBe(before);
  });
});

describe("an expression reading a task the definition lacks (Conductor's \"… is not defined in workflow definition\") is refused wherever a definition arrives, and nothing is written or started", () => {
  /** A definition whose second task reads the first by a misspelt name; `reads` spelt right, it is valid. */
  const reading = (name: string, reads = "get_usr"): JsonObject => ({
    ...valid(name),
    tasks: [httpTask("get_user", { uri: target(`/count/${name}`), method: "GET" }), httpTask("send", { uri: target("/echo/send"), method: "POST", body: { to: `\${${reads}.output.response.body}` } })],
  });
  const issue = {
    path: "tasks[1].inputParameters.body.to",
    message: 'task "send" reads "get_usr" in ${get_usr.output.response.body}, a taskReferenceName not defined in this workflow definition (no task has it, in any branch or loop), so it would resolve to null; did you mean "get_user"?',
  };

  it("POST /api/metadata/workflow and its /validate: a 400 naming the task, the parameter and the name, nothing stored", async () => {
    const before = await rowCount("workflow_defs");
    for (const path of ["/api/metadata/workflow", "/api/metadata/workflow/validate"]) {
      const body = await refused(await api("POST", path, reading("refs_single")), 400, "VALIDATION_ERROR");
      expect(body.validationErrors).toEqual([issue]);
    }
    expect(await rowCount("workflow_defs")).toBe(before);
    expect((await api("GET", "/api/metadata/workflow/refs_single")).status).toBe(404);
    await apiOk("POST", "/api/metadata/workflow", reading("refs_single", "get_user"));
  });

  it("PUT /api/metadata/workflow of a list with one such definition writes none of them; alone, the path has no index", async () => {
    const before = await rowCount("workflow_defs");
    const body = await refused(await api("PUT", "/api/metadata/workflow", [valid("refs_bulk_ok"), reading("refs_bulk_bad")]), 400, "VALIDATION_ERROR");
    expect(body.validationErrors).toEqual([{ ...issue, path: `[1].${issue.path}` }]);
    expect((await refused(await api("PUT", "/api/metadata/workflow", reading("refs_bulk_bad")), 400, "VALIDATION_ERROR")).validationErrors).toEqual([issue]);
    expect(await rowCount("workflow_defs")).toBe(before);
    for (const name of ["refs_bulk_ok", "refs_bulk_bad"]) expect((await api("GET", `/api/metadata/workflow/${name}`)).status).toBe(404);
  });

  it("the workflow's failureWorkflow and rateLimitKey and a task's own inputTemplate are read too: a 400 at each, nothing stored; spelt right, it is registered", async () => {
    const before = await rowCount("workflow_defs");
    const definition = (reads: string): JsonObject => ({
      ...valid("refs_workflow_level"),
      failureWorkflow: `\${${reads}.output.response.body.onFailure}`,
      rateLimitConfig: { rateLimitKey: `\${${reads}.output.response.body.tenant}`, concurrentExecLimit: 2 },
      tasks: [
        httpTask("get_user", { uri: target("/count/refs_workflow_level"), method: "GET" }),
        { ...httpTask("send", { uri: target("/echo/send"), method: "POST" }), taskDefinition: { inputTemplate: { body: { to: `\${${reads}.output.response.body}` } } } },
      ],
    });
    const body = await refused(await api("POST", "/api/metadata/workflow", definition("get_usr")), 400, "VALIDATION_ERROR");
    expect(body.validationErrors?.map(({ path, message }) => [path, message.slice(0, message.indexOf(" in "))])).toEqual([
      ["tasks[1].taskDefinition.inputTemplate.body.to", 'task "send" reads "get_usr"'],
      ["failureWorkflow", `the workflow's failureWorkflow reads "get_usr"`],
      ["rateLimitConfig.rateLimitKey", `the workflow's rateLimitKey reads "get_usr"`],
    ]);
    expect(await rowCount("workflow_defs")).toBe(before);
    expect((await api("GET", "/api/metadata/workflow/refs_workflow_level")).status).toBe(404);
    await apiOk("POST", "/api/metadata/workflow", definition("get_user"));
  });

  it("an inline workflowDef of a start, an execute or a test run: a 400 under workflowDef, nothing started", async () => {
    const inline = reading("refs_inline");
    const at = { ...issue, path: `workflowDef.${issue.path}` };
    for (const [path, body] of [
      ["/api/workflow", { name: "refs_inline", workflowDef: inline }],
      ["/api/workflow/execute/refs_inline/1", { workflowDef: inline }],
      ["/api/workflow/test", { name: "refs_inline", workflowDef: inline }],
    ] as const) {
      expect((await refused(await api("POST", path, body), 400, "VALIDATION_ERROR")).validationErrors, path).toEqual([at]);
    }
    // Spelt right, it starts and calls once: none of the refused requests had started it.
    await waitFor(await apiOk<string>("POST", "/api/workflow", { name: "refs_inline", workflowDef: reading("refs_inline", "get_user") }), ["COMPLETED"]);
    expect(await hits("refs_inline")).toBe(1);
  });
});

describe("a 400 of many problems lists the first 100 and says how many more, on every route", () => {
  it("20,000 misspelt names: the first 100 issues and one at (more) counting the rest, where the whole list was a 4.6 MB answer; nothing stored", async () => {
    const before = await rowCount("workflow_defs");
    const reads = Object.fromEntries(Array.from({ length: 20_000 }, (_, index) => [`k${index}`, `\${nope_${index}.output}`]));
    const definition = { ...valid("refs_capped"), tasks: [httpTask("send", { uri: target("/echo/capped"), method: "POST", body: reads })] };
    for (const [path, body] of [
      ["/api/metadata/workflow", definition],
      ["/api/workflow", { name: "refs_capped", workflowDef: definition }],
    ] as const) {
      const response = await api("POST", path, body);
      const text = await response.clone().text();
      const refusal = await refused(response, 400, "VALIDATION_ERROR");
      expect(refusal.validationErrors?.length, path).toBe(101);
      expect(refusal.validationErrors?.[0]?.path).toMatch(/inputParameters\.body\.k0$/);
      expect(refusal.validationErrors?.[99]?.path).toMatch(/inputParameters\.body\.k99$/);
      expect(refusal.validationErrors?.[100]).toEqual({ path: "(more)", message: "19900 more problems not listed (only the first 100 are); fix these and send again to see them" });
      // The message still counts them all.
      expect(refusal.message).toMatch(/\(and 19999 more; validationErrors lists the first 100\)$/);
      expect(text.length).toBeLessThan(100_000);
    }
    expect(await rowCount("workflow_defs")).toBe(before);
    // At the bound, the list is whole.
    const hundred = { ...definition, tasks: [httpTask("send", { uri: target("/echo/capped"), method: "POST", body: Object.fromEntries(Object.entries(reads).slice(0, 100)) })] };
    const whole = await refused(await api("POST", "/api/metadata/workflow/validate", hundred), 400, "VALIDATION_ERROR");
    expect(whole.validationErrors?.length).toBe(100);
    expect(whole.validationErrors?.some(({ path }) => path === "(more)")).toBe(false);
  });
});

describe("a required input held by the task definition's inputTemplate (Conductor's WorkflowTaskTypeConstraint reads it there)", () => {
  it("takes an HTTP task whose request, and a JSON_JQ_TRANSFORM whose filter, its registered task definition's inputTemplate holds, and runs them with it", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [
      { name: "tpl_fetch", inputTemplate: { http_request: { uri: target("/echo/from-template"), method: "GET" } } },
      { name: "tpl_shape", inputTemplate: { queryExpression: "{ got: .n }" } },
    ]);
    const tasks: JsonObject[] = [
      { name: "tpl_fetch", taskReferenceName: "fetch", type: "HTTP", inputParameters: {} },
      { name: "tpl_shape", taskReferenceName: "shape", type: "JSON_JQ_TRANSFORM", inputParameters: { n: "${fetch.output.statusCode}" } },
    ];
    await register({ ...valid("tpl_registered"), tasks });
    const done = await waitFor(await startWorkflow("tpl_registered"), ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[1]!.outputData["result"]).toEqual({ got: 200 });
    // An inline taskDefinition's inputTemplate counts as the registered one would.
    const inline: JsonObject[] = [{ name: "tpl_inline", taskReferenceName: "shape", type: "JSON_JQ_TRANSFORM", inputParameters: { n: 3 }, taskDefinition: { inputTemplate: { queryExpression: "{ got: .n }" } } }];
    await register({ ...valid("tpl_inline"), tasks: inline });
    expect((await waitFor(await startWorkflow("tpl_inline"), ["COMPLETED", "FAILED"])).tasks[0]!.outputData["result"]).toEqual({ got: 3 });
  });

  it("still refuses one whose template does not hold it, or that has no task definition, saying what is missing, and stores nothing", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "tpl_partial", inputTemplate: { method: "GET" } }]);
    const before = await rowCount("workflow_defs");
    const body = await refused(
      await api("POST", "/api/metadata/workflow", {
        ...valid("tpl_missing"),
        tasks: [
          { name: "tpl_partial", taskReferenceName: "partial", type: "HTTP", inputParameters: {} },
          { name: "tpl_unregistered", taskReferenceName: "none", type: "JSON_JQ_TRANSFORM", inputParameters: {} },
        ],
      }),
      400,
      "VALIDATION_ERROR",
    );
    expect(body.validationErrors?.map((issue) => issue.path)).toEqual(expect.arrayContaining(["tasks[0].inputParameters.uri", "tasks[1].inputParameters.queryExpression"]));
    expect(await rowCount("workflow_defs")).toBe(before);
  });
});

describe("overwriting definitions", () => {
  /** Back-dates a stored version's creation, so an overwrite that resets it shows without waiting. */
  async function backdate(name: string, createTime: number) {
    await env.DB.prepare(`UPDATE workflow_defs SET create_time = ?2, definition = json_set(definition, '$.createTime', ?2) WHERE name = ?1`).bind(name, createTime).run();
  }

  it("POST ?overwrite=true and PUT keep the version's createTime and change only its updateTime", async () => {
    const created = 1_600_000_000_000;
    for (const [name, overwrite] of [
      ["overwrite_post", () => apiOk("POST", "/api/metadata/workflow?overwrite=true", { ...valid("overwrite_post"), description: "changed" })],
      ["overwrite_put", () => apiOk("PUT", "/api/metadata/workflow", [{ ...valid("overwrite_put"), description: "changed" }])],
    ] as const) {
      await apiOk("POST", "/api/metadata/workflow", valid(name));
      await backdate(name, created);
      await overwrite();
      const stored = await apiOk("GET", `/api/metadata/workflow/${name}?version=1`);
      expect(stored["description"]).toBe("changed");
      expect(stored["createTime"]).toBe(created);
      expect(stored["updateTime"]).toBeGreaterThan(created);
      expect(await env.DB.prepare("SELECT create_time FROM workflow_defs WHERE name = ?").bind(name).first("create_time")).toBe(created);
    }
  });
});

describe("invalid start requests are refused and start nothing", () => {
  it("refuses bad bodies and parameters with the contract's error body", async () => {
    // Counted by what its task calls: the search index counted executions of any workflow, and one an earlier test of
    // the file had started reached it meanwhile (its row written in the background) as it did once in CI, while one of
    // these requests starting an execution would have shown there only after the 100 ms the test waited.
    await register({ ...valid("start_checks"), tasks: [httpTask("get", { uri: target("/count/start-checks"), method: "GET" })] });
    await refused(await api("POST", "/api/workflow", { version: 1 }), 400, "VALIDATION_ERROR");
    await refused(await api("POST", "/api/workflow", { name: "start_checks", input: [1] }), 400, "VALIDATION_ERROR");
    await refused(await api("POST", "/api/workflow", { name: "start_checks", priority: 1000 }), 400, "VALIDATION_ERROR");
    await refused(await api("POST", "/api/workflow", { name: "start_checks", idempotencyStrategy: "MAYBE" }), 400, "VALIDATION_ERROR");
    await refused(await api("POST", "/api/workflow/start_checks", [1, 2]), 400, "VALIDATION_ERROR");
    await refused(await api("POST", "/api/workflow/start_checks", "not json"), 400, "VALIDATION_ERROR");
    await refused(await api("POST", "/api/workflow/start_checks?version=abc", {}), 400, "VALIDATION_ERROR");
    await refused(await api("POST", "/api/workflow/start_checks", "{}", { "content-type": "application/x-www-form-urlencoded" }), 415, "UNSUPPORTED_MEDIA_TYPE");
    await refused(await api("POST", "/api/workflow/execute/start_checks/zero", {}), 400, "VALIDATION_ERROR");
    await refused(await api("POST", "/api/workflow/execute/start_checks?waitForSeconds=100000", {}), 400, "VALIDATION_ERROR");
    // One valid start after them, awaited: any execution a refused request had started would have called before it ended.
    await waitFor(await startWorkflow("start_checks"), ["COMPLETED"]);
    expect(await hits("start-checks")).toBe(1);
  });

  it("refuses a correlationId over 512 characters in the query form as in the body, and starts nothing", async () => {
    await register({ ...valid("start_long_correlation"), tasks: [httpTask("get", { uri: target("/count/start-long-correlation"), method: "GET" })] });
    const long = "c".repeat(513);
    await refused(await api("POST", "/api/workflow", { name: "start_long_correlation", correlationId: long }), 400, "VALIDATION_ERROR");
    const query = await refused(await api("POST", `/api/workflow/start_long_correlation?correlationId=${long}`, {}), 400, "VALIDATION_ERROR");
    expect(query.validationErrors).toEqual([{ path: "correlationId", message: "must be at most 512 characters" }]);
    // Exactly 512 is fine on both; that start, awaited, is the only one the target saw (as in the test before).
    const accepted = await apiOk<string>("POST", `/api/workflow/start_long_correlation?correlationId=${"c".repeat(512)}`, {});
    expect(accepted).toMatch(/^[0-9a-f-]{36}$/);
    await waitFor(accepted, ["COMPLETED"]);
    expect(await hits("start-long-correlation")).toBe(1);
  });

  it("starts through both endpoints, with correlationId and input", async () => {
    await register(valid("start_both"));
    const first = await apiOk<string>("POST", "/api/workflow", { name: "start_both", version: 1, input: { a: 1 }, correlationId: "c-1", priority: 5 });
    const second = await apiOk<string>("POST", "/api/workflow/start_both?correlationId=c-2&priority=3", { b: 2 });
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).not.toBe(first);
    const one = await apiOk("GET", `/api/workflow/${first}?includeTasks=false`);
    expect(one).toMatchObject({ workflowName: "start_both", workflowVersion: 1, input: { a: 1 }, correlationId: "c-1", priority: 5, tasks: [] });
    expect((await apiOk("GET", `/api/workflow/${second}`))).toMatchObject({ input: { b: 2 }, correlationId: "c-2", priority: 3 });
  });

  it("takes a version and priority given as digits, or as \"\" (none), as Jackson reads Conductor's Integer fields; other text is still a 400 and starts nothing", async () => {
    // realeyeeos/conductor-client's Go SDK (sdk/sdk.go RunWorkFlow) sends its version as a string.
    await register(valid("start_text_version", 1));
    await register(valid("start_text_version", 2));
    for (const bad of [{ version: "one" }, { version: "1.5" }, { version: "-1" }, { priority: "100" }]) {
      const body = await refused(await api("POST", "/api/workflow", { name: "start_text_version", ...bad }), 400, "VALIDATION_ERROR");
      expect(body.validationErrors?.[0]?.path).toBe(Object.keys(bad)[0]);
    }
    const asText = await apiOk<string>("POST", "/api/workflow", { name: "start_text_version", version: "1", input: { a: 1 }, priority: "7" });
    // Counted by name once the accepted start's search row is written (rows go in as executions start): the earlier
    // tests' executions still being indexed do not count, and a refused start that had started would by then.
    await eventually(() => env.DB.prepare("SELECT 1 AS found FROM executions WHERE workflow_id = ?").bind(asText).first(), (row) => row !== null, "the accepted start's search row");
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM executions WHERE workflow_name = ?").bind("start_text_version").first<{ n: number }>())?.n).toBe(1);
    expect(await apiOk("GET", `/api/workflow/${asText}?includeTasks=false`)).toMatchObject({ workflowVersion: 1, priority: 7, input: { a: 1 } });
    const empty = await apiOk<string>("POST", "/api/workflow", { name: "start_text_version", version: "", priority: "" });
    expect(await apiOk("GET", `/api/workflow/${empty}?includeTasks=false`)).toMatchObject({ workflowVersion: 2, priority: 0 });
  });
});

describe("a definition's inputTemplate (default workflow input)", () => {
  const inputTemplate = { region: "eu", retries: 3, options: { fast: true, depth: 1 }, literal: "${workflow.input.region}" };
  const inputOf = async (workflowId: string) => (await apiOk("GET", `/api/workflow/${workflowId}`))["input"];

  it("is kept, and its keys missing from the input are added as they are (shallow, given keys win) by start, execute and a SUB_WORKFLOW child's start", async () => {
    await register({ ...valid("template_defaults"), inputTemplate });
    expect(await apiOk("GET", "/api/metadata/workflow/template_defaults")).toMatchObject({ inputTemplate });

    const byName = await apiOk<string>("POST", "/api/workflow/template_defaults", { region: "us", options: { fast: false } });
    expect(await inputOf(byName)).toEqual({ region: "us", options: { fast: false }, retries: 3, literal: "${workflow.input.region}" });
    const byBody = await apiOk<string>("POST", "/api/workflow", { name: "template_defaults" });
    expect(await inputOf(byBody)).toEqual(inputTemplate);
    const executed = await apiOk("POST", "/api/workflow/execute/template_defaults", { input: { retries: 0 } });
    expect(executed["input"]).toEqual({ ...inputTemplate, retries: 0 });

    await register({
      name: "template_parent",
      tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "template_defaults" }, inputParameters: { region: "ap" } }],
    });
    const parent = await waitFor(await startWorkflow("template_parent"), ["COMPLETED", "FAILED"]);
    expect(parent.status).toBe("COMPLETED");
    expect(await inputOf(String(parent.tasks[0]!["subWorkflowId"]))).toEqual({ ...inputTemplate, region: "ap" });
  });

  it("stands in for a key given as null, as Java's putIfAbsent does: a start's explicit null, a child's input resolved to null", async () => {
    await register({ ...valid("template_nulls"), inputTemplate: { region: "eu", tier: null } });
    const started = await apiOk<string>("POST", "/api/workflow/template_nulls", { region: null, tier: null, given: null });
    expect(await inputOf(started)).toEqual({ region: "eu", tier: null, given: null });
    await register({
      name: "template_nulls_parent",
      tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "template_nulls" }, inputParameters: { region: "${workflow.input.region}" } }],
    });
    const parent = await waitFor(await startWorkflow("template_nulls_parent", {}), ["COMPLETED", "FAILED"]);
    expect(parent.status).toBe("COMPLETED");
    expect(await inputOf(String(parent.tasks[0]!["subWorkflowId"]))).toEqual({ region: "eu", tier: null });
  });

  it("a restart with useLatestDefinitions adds the latest definition's defaults; a plain restart keeps the input as started", async () => {
    await register({ ...valid("template_restart"), inputTemplate: { region: "eu" } });
    const workflowId = await startWorkflow("template_restart", { given: 1 });
    await waitFor(workflowId, ["COMPLETED"]);
    await register({ ...valid("template_restart", 2), inputTemplate: { region: "us", tier: "gold" } });
    await apiOk("POST", `/api/workflow/${workflowId}/restart`, undefined, 204);
    expect((await waitFor(workflowId, ["COMPLETED"])).input).toEqual({ given: 1, region: "eu" });
    await apiOk("POST", `/api/workflow/${workflowId}/restart?useLatestDefinitions=true`, undefined, 204);
    const restarted = await waitFor(workflowId, (workflow) => workflow.status === "COMPLETED" && workflow["workflowVersion"] === 2);
    expect(restarted.input).toEqual({ given: 1, region: "eu", tier: "gold" });
  });

  it("counts toward MAX_PAYLOAD_BYTES: a start whose input fits alone but not with the defaults is a 413 that starts nothing; a child's start fails its task", async () => {
    const half = "x".repeat(500 * 1024);
    await register({ ...valid("template_huge"), inputTemplate: { fromTemplate: half } });
    const refusal = await refused(await api("POST", "/api/workflow/template_huge", { given: half }), 413, "PAYLOAD_TOO_LARGE");
    expect(refusal.message).toMatch(/^The workflow input with the defaults of its definition's inputTemplate is \d+ bytes, over the limit/);
    await refused(await api("POST", "/api/workflow", { name: "template_huge", input: { given: half }, idempotencyKey: "huge-1" }), 413, "PAYLOAD_TOO_LARGE");
    await refused(await api("POST", "/api/workflow/execute/template_huge", { input: { given: half } }), 413, "PAYLOAD_TOO_LARGE");
    // A small input is fine (the template alone fits), and the refused start did not claim its idempotency key.
    const small = await apiOk<string>("POST", "/api/workflow", { name: "template_huge", input: { given: 1 }, idempotencyKey: "huge-1" });
    expect(await inputOf(small)).toEqual({ given: 1, fromTemplate: half });
    await waitFor(small, ["COMPLETED"]);
    await waitForIndexRow(small, "COMPLETED");
    const started = await env.DB.prepare("SELECT COUNT(*) AS n FROM executions WHERE workflow_name = ?").bind("template_huge").first<{ n: number }>();
    expect(started?.n).toBe(1);

    await register({
      name: "template_huge_parent",
      tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "template_huge" }, inputParameters: { given: "${workflow.input.given}" } }],
    });
    const parent = await waitFor(await startWorkflow("template_huge_parent", { given: half }), ["COMPLETED", "FAILED"]);
    expect(parent.status).toBe("FAILED");
    expect(parent.tasks[0]!.outputData).toMatchObject({ error: "SUB_WORKFLOW_ERROR", details: { errorCode: "INVALID_PARAMETERS", errorMessage: expect.stringContaining("inputTemplate") } });
  });
});

// Another isolate's write is a change to D1 this isolate's caches were not told of: written here straight to D1, as
// that isolate's statements leave it (the registration's own statements are not needed to stand in for it).
describe("what a client asks of one definition, after a write through another isolate", () => {
  /** Version `to` of workflow `name`: its version `from` as stored, renumbered and described, as another isolate registers it. */
  async function registeredElsewhere(name: string, from: number, to: number, description: string): Promise<void> {
    await env.DB.prepare(
      `INSERT INTO workflow_defs (name, version, definition, create_time, update_time)
         SELECT name, ?3, json_set(definition, '$.version', ?3, '$.description', ?4), create_time, update_time + 1 FROM workflow_defs WHERE name = ?1 AND version = ?2`,
    )
      .bind(name, from, to, description)
      .run();
  }

  it("GET /api/metadata/workflow/{name} and its rate limit answer what D1 holds now, not what this isolate read within its cache's two seconds", async () => {
    await apiOk("POST", "/api/metadata/workflow", { ...valid("defs_elsewhere"), rateLimitConfig: { rateLimitKey: "k", concurrentExecLimit: 3 } });
    // Read here (cached), and an unregistered version's absence too.
    expect((await apiOk("GET", "/api/metadata/workflow/defs_elsewhere"))["version"]).toBe(1);
    await refused(await api("GET", "/api/metadata/workflow/defs_elsewhere?version=2"), 404, "NOT_FOUND");
    expect(await apiOk("GET", "/api/metadata/workflow/defs_elsewhere/rate-limit")).toMatchObject({ concurrentExecLimit: 3 });
    await registeredElsewhere("defs_elsewhere", 1, 2, "second");
    await env.DB.prepare(`UPDATE workflow_defs SET definition = json_set(definition, '$.rateLimitConfig.concurrentExecLimit', 5) WHERE name = 'defs_elsewhere' AND version = 2`).run();
    expect(await apiOk("GET", "/api/metadata/workflow/defs_elsewhere")).toMatchObject({ version: 2, description: "second" });
    expect(await apiOk("GET", "/api/metadata/workflow/defs_elsewhere?version=2")).toMatchObject({ version: 2, description: "second" });
    expect(await apiOk("GET", "/api/metadata/workflow/defs_elsewhere/rate-limit")).toMatchObject({ concurrentExecLimit: 5 });
    // Deleted elsewhere: gone at once.
    await env.DB.prepare(`DELETE FROM workflow_defs WHERE name = 'defs_elsewhere' AND version = 2`).run();
    expect((await apiOk("GET", "/api/metadata/workflow/defs_elsewhere"))["version"]).toBe(1);
    await refused(await api("GET", "/api/metadata/workflow/defs_elsewhere?version=2"), 404, "NOT_FOUND");
  });

  it("GET /api/metadata/taskdefs/{name} answers a task definition saved or deleted elsewhere at once", async () => {
    await refused(await api("GET", "/api/metadata/taskdefs/defs_elsewhere_task"), 404, "NOT_FOUND");
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "defs_elsewhere_task", ownerEmail: "team@example.com", retryCount: 1, timeoutSeconds: 60, responseTimeoutSeconds: 60 }]);
    expect(await apiOk("GET", "/api/metadata/taskdefs/defs_elsewhere_task")).toMatchObject({ retryCount: 1 });
    await env.DB.prepare(`UPDATE task_defs SET definition = json_set(definition, '$.retryCount', 4) WHERE name = 'defs_elsewhere_task'`).run();
    expect(await apiOk("GET", "/api/metadata/taskdefs/defs_elsewhere_task")).toMatchObject({ retryCount: 4 });
    await env.DB.prepare(`DELETE FROM task_defs WHERE name = 'defs_elsewhere_task'`).run();
    await refused(await api("GET", "/api/metadata/taskdefs/defs_elsewhere_task"), 404, "NOT_FOUND");
  });

  it("a start of a version this isolate found missing a moment before runs it once registered elsewhere", async () => {
    await register(valid("defs_elsewhere_start"));
    const missing = await refused(await api("POST", "/api/workflow/defs_elsewhere_start?version=2", {}), 404, "NOT_FOUND");
    expect(missing.message).toBe("No such workflow found by name: defs_elsewhere_start, version: 2");
    await registeredElsewhere("defs_elsewhere_start", 1, 2, "second");
    const workflowId = await apiOk<string>("POST", "/api/workflow/defs_elsewhere_start?version=2", {});
    expect((await apiOk("GET", `/api/workflow/${workflowId}`))["workflowVersion"]).toBe(2);
  });

  it("a schedule's save finds a version this isolate found missing a moment before, once registered elsewhere", async () => {
    await register(valid("defs_elsewhere_scheduled"));
    const schedule = { name: "defs-elsewhere-schedule", cronExpression: "0 0 0 1 1 ?", startWorkflowRequest: { name: "defs_elsewhere_scheduled", version: 2 } };
    await refused(await api("POST", "/api/scheduler/schedules", schedule), 400, "VALIDATION_ERROR");
    await registeredElsewhere("defs_elsewhere_scheduled", 1, 2, "second");
    expect(await apiOk("POST", "/api/scheduler/schedules", schedule)).toMatchObject({ name: "defs-elsewhere-schedule" });
    await apiOk("DELETE", "/api/scheduler/schedules/defs-elsewhere-schedule");
  });

  it("a restart with useLatestDefinitions, alone or in bulk, runs the version registered elsewhere just before", async () => {
    await register(valid("defs_elsewhere_restart"));
    // Each start reads (and caches) the latest, version 1.
    const [first, second] = [await startWorkflow("defs_elsewhere_restart"), await startWorkflow("defs_elsewhere_restart")];
    for (const workflowId of [first!, second!]) await waitFor(workflowId, ["COMPLETED"]);
    await registeredElsewhere("defs_elsewhere_restart", 1, 2, "second");
    await apiOk("POST", `/api/workflow/${first}/restart?useLatestDefinitions=true`, undefined, 204);
    await apiOk("POST", "/api/workflow/bulk/restart?useLatestDefinitions=true", [second]);
    for (const workflowId of [first!, second!]) {
      const restarted = await waitFor(workflowId, ["COMPLETED"]);
      expect([restarted["workflowVersion"], (restarted["workflowDefinition"] as JsonObject)["description"]]).toEqual([2, "second"]);
    }
  });

  it("an upgrade to the latest version runs the one registered elsewhere just before, not the latest this isolate's starts last read", async () => {
    await register({ name: "defs_elsewhere_up", version: 1, tasks: [httpTask("held", { uri: target("/echo/held"), method: "GET" }, { asyncComplete: true })] });
    // The start reads (and caches) the latest, version 1.
    const workflowId = await startWorkflow("defs_elsewhere_up");
    await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "held" && task.status === "IN_PROGRESS"));
    await registeredElsewhere("defs_elsewhere_up", 1, 2, "second");
    await apiOk("POST", `/api/workflow/${workflowId}/upgrade`, { name: "defs_elsewhere_up" });
    const upgraded = await waitFor(workflowId, () => true);
    expect(upgraded["workflowVersion"]).toBe(2);
    expect((upgraded["workflowDefinition"] as JsonObject)["description"]).toBe("second");
  });
});
