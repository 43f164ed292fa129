/**
 * Task definitions (Conductor's `/api/metadata/taskdefs`): stored through the real router and D1, and
 * applied to executions (retries, input defaults) through the real objects and a real HTTP target.
 */
import { describe, expect, it } from "vitest";
import { call, createUser, orkes } from "./auth-helpers";
import type { JsonObject } from "../../src/engine/model";
import { MAX_TASK_DEFS_PER_REQUEST } from "../../src/worker/routes/task-defs";
import { api, apiOk, hits, httpTask, register, rowCount, startWorkflow, target, waitFor, type TaskJson } from "./helpers";

type ErrorBody = { status: number; error: string; message: string; validationErrors?: Array<{ path: string; message: string }> };

async function refused(response: Response, status: number, error: string): Promise<ErrorBody> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  const body = JSON.parse(text) as ErrorBody;
  expect(body).toMatchObject({ status, error });
  return body;
}

async function apiKeyWith(userId: string, permissions: Array<{ action: string; scope: string }>): Promise<string> {
  const key = await apiOk<{ keyId: string; keySecret: string }>("POST", `/api/security/users/${userId}/api-keys`, undefined, 201);
  await apiOk("PUT", `/api/security/users/${userId}/roles`, { roles: [], directPermissions: permissions });
  return `${key.keyId}:${key.keySecret}`;
}

describe("registering task definitions", () => {
  it("stores a list with Conductor's defaults, reads one and all, replaces keeping createTime, and deletes", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "td_crud_a", description: "first" }, { name: "td_crud_b", retryCount: 0, ownerEmail: "" }]);
    const first = await apiOk("GET", "/api/metadata/taskdefs/td_crud_a");
    expect(first).toMatchObject({
      name: "td_crud_a",
      description: "first",
      retryCount: 3,
      retryLogic: "FIXED",
      retryDelaySeconds: 60,
      backoffScaleFactor: 1,
      timeoutSeconds: 0,
      timeoutPolicy: "TIME_OUT_WF",
      responseTimeoutSeconds: 3600,
      // Shown as Conductor's TaskDef JSON shows them: no rate limit, no total timeout, no declared keys.
      rateLimitPerFrequency: 0,
      rateLimitFrequencyInSeconds: 1,
      totalTimeoutSeconds: 0,
      inputKeys: [],
      outputKeys: [],
      inputTemplate: {},
      // Conductor's TaskDef boolean: schemas a task definition names are checked only when it is true.
      enforceSchema: false,
    });
    expect(first["createTime"]).toEqual(expect.any(Number));
    const all = await apiOk<JsonObject[]>("GET", "/api/metadata/taskdefs");
    expect(all.map((taskDef) => taskDef["name"]).filter((name) => String(name).startsWith("td_crud_"))).toEqual(["td_crud_a", "td_crud_b"]);

    await new Promise((resolve) => setTimeout(resolve, 5));
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "td_crud_a", retryCount: 1, retryLogic: "LINEAR_BACKOFF" });
    const replaced = await apiOk("GET", "/api/metadata/taskdefs/td_crud_a");
    expect(replaced).toMatchObject({ retryCount: 1, retryLogic: "LINEAR_BACKOFF", createTime: first["createTime"] });
    expect(replaced["description"]).toBeUndefined();
    expect(replaced["updateTime"] as number).toBeGreaterThan(first["updateTime"] as number);

    await apiOk("DELETE", "/api/metadata/taskdefs/td_crud_a");
    // Conductor's message (MetadataServiceImpl.getTaskDef), which the Python SDK's integration test and the Java
    // client's tests compare whole, and code deciding whether to register a task definition looks for.
    expect((await refused(await api("GET", "/api/metadata/taskdefs/td_crud_a"), 404, "NOT_FOUND")).message).toBe("No such taskType found by name: td_crud_a");
    await refused(await api("DELETE", "/api/metadata/taskdefs/td_crud_a"), 404, "NOT_FOUND");
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_crud_b")).toMatchObject({ retryCount: 0 });
  });

  it("records who registered a task definition and who last replaced it", async () => {
    const author = await createUser("taskdef-author", { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }] });
    expect((await call("POST", "/api/metadata/taskdefs", orkes(author.token), [{ name: "audited_task", createdBy: "someone-else" }])).status).toBe(200);
    expect(await apiOk("GET", "/api/metadata/taskdefs/audited_task")).toMatchObject({ createdBy: "taskdef-author", updatedBy: "taskdef-author" });
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "audited_task", retryCount: 1 });
    expect(await apiOk("GET", "/api/metadata/taskdefs/audited_task")).toMatchObject({ createdBy: "taskdef-author", updatedBy: "admin", retryCount: 1 });
  });

  it("keeps a task definition's metadata and shows it as given, {} when none was given, as Conductor's TaskDef holds it", async () => {
    // Conductor OSS's TaskDef has a free-form metadata map (default empty), round-tripped by its metadata store; it was
    // dropped here like an unknown key, and so missing when read back.
    const metadata = { team: "payments", tier: 2, labels: ["pci"], owner: { name: "ops" } };
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "td_metadata", metadata }, { name: "td_metadata_none", metadata: null }]);
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_metadata")).toMatchObject({ name: "td_metadata", metadata });
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_metadata_none")).toMatchObject({ metadata: {} });
    // A workflow task's own taskDefinition keeps it too, shown in the execution's copy of the definition.
    await register({ name: "td_metadata_flow", tasks: [{ name: "td_metadata_inline", taskReferenceName: "w", type: "SIMPLE", taskDefinition: { metadata: { inline: true } } }] });
    const read = await apiOk<{ tasks: Array<{ taskDefinition: JsonObject }> }>("GET", "/api/metadata/workflow/td_metadata_flow");
    expect(read.tasks[0]!.taskDefinition).toMatchObject({ metadata: { inline: true } });
    const bad = await refused(await api("PUT", "/api/metadata/taskdefs", { name: "td_metadata", metadata: ["not", "a", "map"] }), 400, "VALIDATION_ERROR");
    expect(bad.validationErrors?.map((issue) => issue.path)).toEqual(["metadata"]);
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_metadata")).toMatchObject({ metadata });
  });

  it("PUT creates one that does not exist yet (the official clients' workers register that way)", async () => {
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "td_put_new", timeoutSeconds: 3600, responseTimeoutSeconds: 600 });
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_put_new")).toMatchObject({ timeoutSeconds: 3600, responseTimeoutSeconds: 600 });
  });

  it("POST takes one definition alone too (Orkes' docs' curl), its problems named without an index", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", { name: "td_post_single", timeoutSeconds: 120, responseTimeoutSeconds: 60 });
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_post_single")).toMatchObject({ timeoutSeconds: 120, responseTimeoutSeconds: 60 });
    const bad = await api("POST", "/api/metadata/taskdefs", { name: "td_post_single_bad", retryCount: -1 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path)).toEqual(["retryCount"]);
    expect((await api("GET", "/api/metadata/taskdefs/td_post_single_bad")).status).toBe(404);
    expect((await api("POST", "/api/metadata/taskdefs", JSON.stringify("td_post_single"))).status).toBe(400);
  });

  it("holds a registered ownerEmail to an address as Conductor's TaskDef does (blank meaning none); an inline one is not", async () => {
    // conductor-oss TaskDef.ownerEmail: @Email(message = "ownerEmail should be valid email address"); "" passes it.
    const bad = await refused(await api("PUT", "/api/metadata/taskdefs", { name: "td_owner_put", ownerEmail: "not-an-address" }), 400, "VALIDATION_ERROR");
    expect(bad.validationErrors?.map((issue) => issue.path)).toEqual(["ownerEmail"]);
    await refused(await api("GET", "/api/metadata/taskdefs/td_owner_put"), 404, "NOT_FOUND");
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "td_owner_ok", ownerEmail: "test@test" }, { name: "td_owner_blank", ownerEmail: "" }]);
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_owner_ok")).toMatchObject({ ownerEmail: "test@test" });
    // Conductor validates none of a workflow task's own taskDefinition (WorkflowTask's field has no @Valid).
    await register({ name: "td_owner_inline_flow", tasks: [{ name: "td_owner_inline", taskReferenceName: "w", type: "SIMPLE", taskDefinition: { ownerEmail: "team" } }] });
  });

  it("accepts what the official client's taskDefinition() builder sends", async () => {
    const built = {
      name: "td_sdk_built",
      ownerApp: "",
      description: "",
      retryCount: 3,
      timeoutSeconds: 3600,
      inputKeys: [],
      outputKeys: [],
      timeoutPolicy: "TIME_OUT_WF",
      retryLogic: "FIXED",
      retryDelaySeconds: 60,
      responseTimeoutSeconds: 600,
      concurrentExecLimit: 0,
      inputTemplate: {},
      rateLimitPerFrequency: 0,
      rateLimitFrequencyInSeconds: 1,
      ownerEmail: "",
      pollTimeoutSeconds: 3600,
      backoffScaleFactor: 1,
    };
    await apiOk("POST", "/api/metadata/taskdefs", [built]);
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_sdk_built")).toMatchObject(built);
    // Conductor's Auditable ownerApp is kept as given, as its metadata store round-trips it.
    await apiOk("PUT", "/api/metadata/taskdefs", { ...built, ownerApp: "billing-app" });
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_sdk_built")).toMatchObject({ ownerApp: "billing-app" });
  });

  it.each([
    ["a number instead of a definition or a list", 42, "(body)", /a task definition or a non-empty array/],
    ["an empty list", [], "(body)", /non-empty array/],
    ["a list with one bad entry after a good one", [{ name: "td_bad_ok" }, { name: "td_bad_count", retryCount: -1 }], "[1].retryCount", /retryCount must be an integer from 0 to 100/],
    ["a missing name", [{ retryCount: 1 }], "[0].name", /name is required/],
    ["an unknown retry logic", [{ name: "td_bad_logic", retryLogic: "SOMETIMES" }], "[0].retryLogic", /one of FIXED, LINEAR_BACKOFF, EXPONENTIAL_BACKOFF/],
    ["a response timeout beyond the timeout", [{ name: "td_bad_timeout", timeoutSeconds: 60 }], "[0].responseTimeoutSeconds", /must not exceed timeoutSeconds \(60\)/],
    ["a timeout beyond the attempts' total", [{ name: "td_bad_total", timeoutSeconds: 1000, responseTimeoutSeconds: 1, totalTimeoutSeconds: 900 }], "[0].timeoutSeconds", /must not exceed totalTimeoutSeconds \(900\)/],
    ["a broken expression in inputTemplate", [{ name: "td_bad_template", inputTemplate: { a: "${workflow.input" } }], "[0].inputTemplate.a", /^malformed expression at position 0: expected '}' to close '\$\{'$/],
    ["a secret in inputTemplate", [{ name: "td_bad_secret", inputTemplate: { token: "${workflow.secrets.apiKey}" } }], "[0].inputTemplate", /must not use secrets \(apiKey\)/],
    ["the same name twice", [{ name: "td_bad_twice" }, { name: "td_bad_twice" }], "(body)", /appears twice/],
    ["an ownerEmail that is no address (Conductor's TaskDef @Email)", [{ name: "td_bad_owner_ok" }, { name: "td_bad_owner", ownerEmail: "payments team" }], "[1].ownerEmail", /ownerEmail must be an e-mail address/],
  ])("refuses %s with a 400 naming the field, and stores nothing", async (_what, body, path, message) => {
    const before = await rowCount("task_defs");
    const error = await refused(await api("POST", "/api/metadata/taskdefs", body), 400, "VALIDATION_ERROR");
    const issue = error.validationErrors?.find((candidate) => candidate.path === path);
    expect(issue, JSON.stringify(error.validationErrors)).toBeDefined();
    expect(issue!.message).toMatch(message);
    expect(await rowCount("task_defs")).toBe(before);
  });

  it(`refuses more than ${MAX_TASK_DEFS_PER_REQUEST} in one request and stores none of them`, async () => {
    const before = await rowCount("task_defs");
    const many = Array.from({ length: MAX_TASK_DEFS_PER_REQUEST + 1 }, (_, index) => ({ name: `td_many_${index}` }));
    await refused(await api("POST", "/api/metadata/taskdefs", many), 400, "VALIDATION_ERROR");
    expect(await rowCount("task_defs")).toBe(before);
  });

  it("needs a metadata right to write: a reader is refused with 403 and nothing is stored; the reader may list them", async () => {
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "td_rbac", retryCount: 2 });
    const reader = await apiKeyWith("td-reader", [{ action: "WORKFLOW_READ", scope: "*" }]);
    await refused(await api("PUT", "/api/metadata/taskdefs", { name: "td_rbac", retryCount: 0 }, { "x-api-key": reader }), 403, "PERMISSION_DENIED");
    await refused(await api("POST", "/api/metadata/taskdefs", [{ name: "td_rbac_new" }], { "x-api-key": reader }), 403, "PERMISSION_DENIED");
    await refused(await api("DELETE", "/api/metadata/taskdefs/td_rbac", undefined, { "x-api-key": reader }), 403, "PERMISSION_DENIED");
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_rbac")).toMatchObject({ retryCount: 2 });
    await refused(await api("GET", "/api/metadata/taskdefs/td_rbac_new"), 404, "NOT_FOUND");
    const listed = await api("GET", "/api/metadata/taskdefs", undefined, { "x-api-key": reader });
    expect(listed.status).toBe(200);
    expect((await api("GET", "/api/metadata/taskdefs", undefined, { "x-api-key": "td-nobody:wrong-secret-0123456789" })).status).toBe(401);
  });

  it("lets a reader of some tasks (TASK_READ on task:<name>, Orkes' READ on a TASK_DEF) read and list those task definitions only", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "td_scoped_a" }, { name: "td_scoped_b" }, { name: "td_scopedx_c" }]);
    const narrow = await apiKeyWith("td-scoped-reader", [{ action: "TASK_READ", scope: "task:td_scoped_a" }, { action: "TASK_READ", scope: "task:td_scopedx_*" }]);
    const asNarrow = (path: string) => api("GET", path, undefined, { "x-api-key": narrow });
    expect(await (await asNarrow("/api/metadata/taskdefs/td_scoped_a")).json()).toMatchObject({ name: "td_scoped_a" });
    expect(await (await asNarrow("/api/metadata/taskdefs/td_scopedx_c")).json()).toMatchObject({ name: "td_scopedx_c" });
    await refused(await asNarrow("/api/metadata/taskdefs/td_scoped_b"), 403, "PERMISSION_DENIED");
    const listed = await asNarrow("/api/metadata/taskdefs");
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as Array<{ name: string }>).map((taskDef) => taskDef.name).sort()).toEqual(["td_scoped_a", "td_scopedx_c"]);
    // Readers of every workflow and metadata admins list them all, as before; a caller with neither right is refused.
    const everything = (await apiOk<Array<{ name: string }>>("GET", "/api/metadata/taskdefs")).map((taskDef) => taskDef.name);
    expect(everything.filter((name) => name.startsWith("td_scoped")).sort()).toEqual(["td_scoped_a", "td_scoped_b", "td_scopedx_c"]);
    const executor = await apiKeyWith("td-scoped-executor", [{ action: "TASK_EXECUTE", scope: "task:td_scoped_a" }]);
    await refused(await api("GET", "/api/metadata/taskdefs", undefined, { "x-api-key": executor }), 403, "PERMISSION_DENIED");
    await refused(await api("GET", "/api/metadata/taskdefs/td_scoped_a", undefined, { "x-api-key": executor }), 403, "PERMISSION_DENIED");
  });

  it("lists with Orkes' access the task definitions the caller holds that access to, READ when absent", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "td_access_a" }, { name: "td_access_b" }, { name: "td_access_c" }]);
    const caller = await createUser("td-access-caller", {
      directPermissions: [
        { action: "TASK_READ", scope: "task:td_access_*" },
        { action: "TASK_WRITE", scope: "task:td_access_a" },
        { action: "TASK_EXECUTE", scope: "task:td_access_b" },
      ],
    });
    const listed = async (query: string) => {
      const response = await call("GET", `/api/metadata/taskdefs${query}`, orkes(caller.token));
      expect(response.status, query).toBe(200);
      return ((await response.json()) as JsonObject[]).map((taskDef) => taskDef["name"]).sort();
    };
    expect(await listed("?access=READ")).toEqual(["td_access_a", "td_access_b", "td_access_c"]);
    expect(await listed("?access=UPDATE")).toEqual(["td_access_a"]);
    expect(await listed("?access=CREATE&metadata=true")).toEqual(["td_access_a"]);
    expect(await listed("?access=EXECUTE")).toEqual(["td_access_b"]);
    await refused(await call("GET", "/api/metadata/taskdefs?access=ALL", orkes(caller.token)), 400, "VALIDATION_ERROR");
  });

  it("lets a writer of some tasks (TASK_WRITE on task:<name>, the spec's right to create and modify them) write those only, all or nothing", async () => {
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "td_other_w", retryCount: 1 });
    const writer = await apiKeyWith("td-scoped-writer", [{ action: "TASK_WRITE", scope: "task:td_w_*" }, { action: "TASK_READ", scope: "task:td_w_*" }]);
    const asWriter = (method: string, path: string, body?: unknown) => api(method, path, body, { "x-api-key": writer });
    expect((await asWriter("PUT", "/api/metadata/taskdefs", { name: "td_w_a", retryCount: 4 })).status).toBe(200);
    expect((await asWriter("POST", "/api/metadata/taskdefs", [{ name: "td_w_b" }, { name: "td_w_c", retryCount: 2 }])).status).toBe(200);
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_w_a")).toMatchObject({ retryCount: 4, createdBy: "td-scoped-writer" });
    // One name outside the grant refuses the whole request, naming it; nothing of it is stored.
    const before = await rowCount("task_defs");
    const mixed = await refused(await asWriter("POST", "/api/metadata/taskdefs", [{ name: "td_w_d" }, { name: "td_other_w", retryCount: 9 }]), 403, "PERMISSION_DENIED");
    expect(mixed.message).toContain("td_other_w");
    expect(mixed.message).not.toContain("td_w_d");
    await refused(await asWriter("PUT", "/api/metadata/taskdefs", { name: "td_other_w", retryCount: 9 }), 403, "PERMISSION_DENIED");
    // Refused before validation: not a 400 about a definition it may not write.
    await refused(await asWriter("POST", "/api/metadata/taskdefs", [{ name: "td_other_w", retryCount: "many" }]), 403, "PERMISSION_DENIED");
    await refused(await asWriter("DELETE", "/api/metadata/taskdefs/td_other_w"), 403, "PERMISSION_DENIED");
    await refused(await asWriter("PUT", "/api/metadata/task/td_other_w/tags", [{ key: "team", value: "x" }]), 403, "PERMISSION_DENIED");
    expect(await rowCount("task_defs")).toBe(before);
    expect(await apiOk("GET", "/api/metadata/taskdefs/td_other_w")).toMatchObject({ retryCount: 1 });
    await refused(await api("GET", "/api/metadata/taskdefs/td_w_d"), 404, "NOT_FOUND");
    expect(await apiOk("GET", "/api/metadata/task/td_other_w/tags")).toEqual([]);
    // Its own: tags read and written, and deleted.
    expect((await asWriter("PUT", "/api/metadata/task/td_w_b/tags", [{ key: "team", value: "billing" }])).status).toBe(200);
    expect(await (await asWriter("GET", "/api/metadata/task/td_w_b/tags")).json()).toEqual([{ key: "team", value: "billing" }]);
    expect((await asWriter("DELETE", "/api/metadata/taskdefs/td_w_c")).status).toBe(200);
    await refused(await api("GET", "/api/metadata/taskdefs/td_w_c"), 404, "NOT_FOUND");
    // An inputTemplate reading workflow data (an expression) is for writers of every task definition: resolved in every
    // workflow using the task, it would copy their data into a task this writer may read. Plain defaults are fine.
    const before2 = await rowCount("task_defs");
    const reading = await refused(await asWriter("PUT", "/api/metadata/taskdefs", { name: "td_w_template", inputTemplate: { x: "${workflow.input}" } }), 403, "PERMISSION_DENIED");
    expect(reading.message).toContain("inputTemplate");
    expect(await rowCount("task_defs")).toBe(before2);
    expect((await asWriter("PUT", "/api/metadata/taskdefs", { name: "td_w_template", inputTemplate: { region: "eu" } })).status).toBe(200);
    expect((await api("PUT", "/api/metadata/taskdefs", { name: "td_w_template", inputTemplate: { x: "${workflow.input}" } })).status).toBe(200);
  });
});

describe("executions follow the task definition of each task's name", () => {
  it("retries an HTTP task as its registered task definition says, and shows the definition in the execution", async () => {
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "td_flaky_call", retryCount: 2, retryDelaySeconds: 0 });
    await register({ name: "td_registered_retry", tasks: [{ ...httpTask("call", { uri: target("/flaky/td-registered?fail=2"), method: "GET" }), name: "td_flaky_call" }] });
    const workflow = await waitFor(await startWorkflow("td_registered_retry"), ["COMPLETED", "FAILED"]);
    expect(workflow.status).toBe("COMPLETED");
    expect(workflow.tasks.map((task) => [task.status, task["retryCount"]])).toEqual([
      ["FAILED", 0],
      ["FAILED", 1],
      ["COMPLETED", 2],
    ]);
    expect(await hits("td-registered")).toBe(3);
    const definition = workflow["workflowDefinition"] as { tasks: Array<{ taskDefinition?: JsonObject }> };
    expect(definition.tasks[0]!.taskDefinition).toMatchObject({ name: "td_flaky_call", retryCount: 2, retryDelaySeconds: 0 });
    // The registered workflow definition itself is unchanged.
    const stored = await apiOk<{ tasks: JsonObject[] }>("GET", "/api/metadata/workflow/td_registered_retry");
    expect(stored.tasks[0]!["taskDefinition"]).toBeUndefined();
  });

  it("a workflow task's own retryCount wins over its task definition's", async () => {
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "td_overridden", retryCount: 2, retryDelaySeconds: 0 });
    await register({ name: "td_own_retry", tasks: [{ ...httpTask("call", { uri: target("/flaky/td-own?fail=2"), method: "GET" }, { retryCount: 0 }), name: "td_overridden" }] });
    const workflow = await waitFor(await startWorkflow("td_own_retry"), ["COMPLETED", "FAILED"]);
    expect(workflow.status).toBe("FAILED");
    expect(workflow.tasks).toHaveLength(1);
    expect(await hits("td-own")).toBe(1);
  });

  it("a task's rateLimitFrequencyInSeconds shows 1 when its task definition sets no window (Conductor's TaskDef getter), 0 without one", async () => {
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "td_no_window", retryCount: 0 });
    await register({
      name: "td_window_shown",
      tasks: [
        { ...httpTask("defined", { uri: target("/count/td-window-a"), method: "GET" }), name: "td_no_window" },
        httpTask("td_window_undefined", { uri: target("/count/td-window-b"), method: "GET" }),
      ],
    });
    const workflow = await waitFor(await startWorkflow("td_window_shown"), ["COMPLETED", "FAILED"]);
    expect(workflow.status).toBe("COMPLETED");
    expect(workflow.tasks.map((task) => [task.rateLimitPerFrequency, task.rateLimitFrequencyInSeconds])).toEqual([[0, 1], [0, 0]]);
  });

  it("an inline taskDefinition applies, and wins over the registered one of the same name", async () => {
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "td_inline_call", retryCount: 0 });
    await register({
      name: "td_inline",
      tasks: [{ ...httpTask("call", { uri: target("/flaky/td-inline?fail=1"), method: "GET" }), name: "td_inline_call", taskDefinition: { retryCount: 1, retryDelaySeconds: 0 } }],
    });
    const workflow = await waitFor(await startWorkflow("td_inline"), ["COMPLETED", "FAILED"]);
    expect(workflow.status).toBe("COMPLETED");
    expect(workflow.tasks.map((task) => task.status)).toEqual(["FAILED", "COMPLETED"]);
    expect(await hits("td-inline")).toBe(2);
  });

  it("an inline taskDefinition with timeouts of 0 (the Rust SDK's EmbeddedTaskDef) is taken: its worker task never times out", async () => {
    // EmbeddedTaskDef::new("td_embedded_work").with_retry_count(0), as the Rust SDK serializes it; Conductor takes it
    // (a workflow task's own taskDefinition is not validated) and reads 0 as no timeout.
    const taskDefinition = { name: "td_embedded_work", retryCount: 0, timeoutSeconds: 0, responseTimeoutSeconds: 0 };
    await register({ name: "td_embedded", tasks: [{ name: "td_embedded_work", taskReferenceName: "work", type: "SIMPLE", taskDefinition }] });
    const workflowId = await startWorkflow("td_embedded");
    const [task] = await apiOk<TaskJson[]>("GET", "/api/tasks/poll/batch/td_embedded_work?workerid=rust&count=1&timeout=5000");
    expect(task).toMatchObject({ workflowInstanceId: workflowId, status: "IN_PROGRESS", responseTimeoutSeconds: 0 });
    await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task!.taskId, status: "COMPLETED", outputData: { ok: true } });
    const workflow = await waitFor(workflowId, ["COMPLETED", "FAILED", "TIMED_OUT"]);
    expect(workflow.status).toBe("COMPLETED");
    expect(workflow["workflowDefinition"]).toMatchObject({ tasks: [{ taskDefinition }] });
  });

  it("an inline taskDefinition is validated with the workflow definition: a bad one is a 400 that stores nothing", async () => {
    const response = await api("POST", "/api/metadata/workflow", {
      name: "td_inline_bad",
      version: 1,
      schemaVersion: 2,
      tasks: [{ ...httpTask("call", { uri: target("/echo/x"), method: "GET" }), taskDefinition: { retryDelaySeconds: "soon" } }],
    });
    const error = await refused(response, 400, "VALIDATION_ERROR");
    expect(error.validationErrors?.map((issue) => issue.path)).toEqual(["tasks[0].taskDefinition.retryDelaySeconds"]);
    await refused(await api("GET", "/api/metadata/workflow/td_inline_bad"), 404, "NOT_FOUND");
  });

  it("inputTemplate gives default input, resolved like the task's own; a key the task sets wins", async () => {
    await apiOk("PUT", "/api/metadata/taskdefs", {
      name: "td_templated",
      inputTemplate: { headers: { "X-Team": "${workflow.input.team}" }, method: "DELETE", note: "from the task definition" },
    });
    await register({ name: "td_template_flow", tasks: [{ ...httpTask("call", { uri: target("/echo/td-template"), method: "GET" }), name: "td_templated" }] });
    const workflow = await waitFor(await startWorkflow("td_template_flow", { team: "payments" }), ["COMPLETED", "FAILED"]);
    expect(workflow.status).toBe("COMPLETED");
    const task = workflow.tasks[0] as TaskJson;
    expect(task.inputData).toMatchObject({ method: "GET", note: "from the task definition", headers: { "X-Team": "payments" } });
    const echoed = (task.outputData["response"] as { body: { method: string; headers: Record<string, string> } }).body;
    expect(echoed.method).toBe("GET");
    expect(echoed.headers["x-team"]).toBe("payments");
  });

  it("timeoutSeconds times out a task still waiting for its completion, and the workflow with it (TIME_OUT_WF)", async () => {
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "td_slow_call", timeoutSeconds: 1, responseTimeoutSeconds: 1 });
    await register({ name: "td_timeout_flow", tasks: [{ ...httpTask("call", { uri: target("/echo/td-timeout"), method: "GET" }, { asyncComplete: true }), name: "td_slow_call" }] });
    const workflowId = await startWorkflow("td_timeout_flow");
    const timedOut = await waitFor(workflowId, ["TIMED_OUT", "COMPLETED", "FAILED"]);
    expect(timedOut.status).toBe("TIMED_OUT");
    // Conductor's reason, as its "Debugging workflows" guide lists it (the elapsed seconds are the alarm's, not asserted):
    // https://conductor-oss.github.io/conductor/devguide/how-tos/Workflows/debugging-workflows.html#understanding-reasonforincompletion
    expect(timedOut.tasks[0]).toMatchObject({ status: "TIMED_OUT", reasonForIncompletion: expect.stringMatching(/^Task timed out after \d+ seconds\. Timeout configured as 1 seconds\. Timeout policy configured to TIME_OUT_WF$/) });
    await refused(await api("POST", `/api/tasks/${workflowId}/call/COMPLETED`, {}), 409, "CONFLICT");
  });

  it("an execution keeps the task definition it started with; later ones start with the change", async () => {
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "td_snapshot", retryCount: 1, retryDelaySeconds: 0 });
    await register({ name: "td_snapshot_flow", tasks: [{ ...httpTask("call", { uri: target("/echo/td-snapshot"), method: "GET" }, { asyncComplete: true }), name: "td_snapshot" }] });
    const first = await startWorkflow("td_snapshot_flow");
    await waitFor(first, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "td_snapshot", retryCount: 0 });

    await apiOk("POST", `/api/tasks/${first}/call/FAILED`, {});
    const retried = await waitFor(first, (workflow) => workflow.tasks.length === 2);
    expect(retried.status).toBe("RUNNING");

    const second = await startWorkflow("td_snapshot_flow");
    await waitFor(second, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${second}/call/FAILED`, {});
    const failed = await waitFor(second, ["FAILED"]);
    expect(failed.tasks).toHaveLength(1);
  });
});
