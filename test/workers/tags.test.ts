import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_TAGS_PER_TARGET, TagRepository, type Tag, type TagTarget } from "../../src/worker/tags";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, register } from "./helpers";

interface TagJson {
  key: string;
  value: string;
}

const tagsOf = (path: string) => apiOk<TagJson[]>("GET", `${path}/tags`);
const pairs = (tags: TagJson[]) => tags.map((tag) => `${tag.key}=${tag.value}`);
const storedRows = async (name: string) =>
  (await env.DB.prepare("SELECT COUNT(*) AS n FROM metadata_tags WHERE target_name = ?").bind(name).first<{ n: number }>())!.n;
const wait = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });

/**
 * Runs `act` while the first read of workflow `name`'s tags is followed, before the request goes on, by another tag
 * (`other=v`) stored directly: an addition of another request landing between this one's read and its write.
 */
async function whileAnotherTagLands(name: string, act: () => Promise<Response>): Promise<Response> {
  const read = TagRepository.prototype.list;
  let raced = false;
  TagRepository.prototype.list = async function (target: TagTarget): Promise<Tag[]> {
    const tags = await read.call(this, target);
    if (target.name === name && !raced) {
      raced = true;
      await env.DB.prepare("INSERT INTO metadata_tags (target_type, target_name, tag_key, tag_value) VALUES ('WORKFLOW_DEF', ?, 'other', 'v')").bind(name).run();
    }
    return tags;
  };
  try {
    const response = await act();
    expect(raced, "the staged race happened").toBe(true);
    return response;
  } finally {
    TagRepository.prototype.list = read;
  }
}

describe("metadata tags (Orkes' /api/metadata/workflow/{name}/tags, /api/metadata/task/{taskName}/tags)", () => {
  it("adds, replaces, lists and removes a workflow definition's tags, for every version of its name", async () => {
    await register({ name: "tagged_flow", tasks: [wait("w")] });
    const path = "/api/metadata/workflow/tagged_flow";
    expect(await tagsOf(path)).toEqual([]);
    expect((await api("POST", `${path}/tags`, { key: "team", value: "billing" })).status).toBe(200);
    // Adding one it has is no change; the deprecated `type` is taken and ignored.
    expect((await api("POST", `${path}/tags`, { key: "team", value: "billing", type: "METADATA" })).status).toBe(200);
    expect((await api("POST", `${path}/tags`, { key: "tier", value: "silver" })).status).toBe(200);
    // One value per key, as Orkes keeps them: adding a key it has replaces the value.
    expect((await api("POST", `${path}/tags`, { key: "tier", value: "gold" })).status).toBe(200);
    expect(await tagsOf(path)).toEqual([
      { key: "team", value: "billing" },
      { key: "tier", value: "gold" },
    ]);
    expect((await api("PUT", `${path}/tags`, [{ key: "owner", value: "bob" }, { key: "owner", value: "ann" }, { key: "env", value: "" }])).status).toBe(200);
    expect(pairs(await tagsOf(path))).toEqual(["env=", "owner=ann"]);
    expect((await api("DELETE", `${path}/tags`, { key: "env", value: "" })).status).toBe(200);
    expect(pairs(await tagsOf(path))).toEqual(["owner=ann"]);
    // Removing a tag it does not hold (that key with another value included) is a 404, as in Orkes.
    const absent = await api("DELETE", `${path}/tags`, { key: "owner", value: "bob" });
    expect(absent.status).toBe(404);
    expect(((await absent.json()) as { message: string }).message).toContain("has no tag owner=bob");
    // A second version shares the name's tags; every tag in use is listed once.
    await register({ name: "tagged_flow", version: 2, tasks: [wait("w")] });
    expect(pairs(await tagsOf(path))).toEqual(["owner=ann"]);
    expect(pairs(await apiOk<TagJson[]>("GET", "/api/metadata/tags"))).toContain("owner=ann");
  });

  it("takes a number or boolean key or value as its text, as Jackson reads Orkes' Tag: the Python client's set_workflow_rate_limit works", async () => {
    await register({ name: "tagged_scalars", tasks: [wait("w")] });
    const path = "/api/metadata/workflow/tagged_scalars";
    // What the Python client's set_workflow_rate_limit(10, name) sends: its RateLimitTag, the limit a number.
    expect((await api("POST", `${path}/tags`, { key: "tagged_scalars", type: "RATE_LIMIT", value: 10 })).status).toBe(200);
    expect((await api("PUT", `${path}/tags`, [{ key: "tagged_scalars", type: "RATE_LIMIT", value: 10 }, { key: 7, value: true }, { key: "ratio", value: 0.5 }])).status).toBe(200);
    expect(await tagsOf(path)).toEqual([
      { key: "7", value: "true" },
      { key: "ratio", value: "0.5" },
      { key: "tagged_scalars", value: "10" },
    ]);
    // Removed as it was added (remove_workflow_rate_limit sends the number again).
    expect((await api("DELETE", `${path}/tags`, { key: "tagged_scalars", type: "RATE_LIMIT", value: 10 })).status).toBe(200);
    expect(pairs(await tagsOf(path))).toEqual(["7=true", "ratio=0.5"]);
  });

  it("a task definition's tags: registered with it (ExtendedTaskDef's tags), replaced or added to (overwriteTags), gone with it", async () => {
    const taskDef = { name: "tagged_task", ownerEmail: "t@example.com", responseTimeoutSeconds: 60 };
    await apiOk("POST", "/api/metadata/taskdefs", [{ ...taskDef, tags: [{ key: "lang", value: "go" }] }]);
    const path = "/api/metadata/task/tagged_task";
    expect(pairs(await tagsOf(path))).toEqual(["lang=go"]);
    await apiOk("PUT", "/api/metadata/taskdefs", { ...taskDef, tags: [{ key: "os", value: "linux" }], overwriteTags: false });
    expect(pairs(await tagsOf(path))).toEqual(["lang=go", "os=linux"]);
    await apiOk("PUT", "/api/metadata/taskdefs", { ...taskDef, tags: [{ key: "lang", value: "zig" }] });
    expect(pairs(await tagsOf(path))).toEqual(["lang=zig"]);
    // Registered again without tags: they stay.
    await apiOk("PUT", "/api/metadata/taskdefs", taskDef);
    expect(pairs(await tagsOf(path))).toEqual(["lang=zig"]);
    // The task definition itself does not carry them.
    expect(await apiOk("GET", "/api/metadata/taskdefs/tagged_task")).not.toHaveProperty("tags");
    await apiOk("DELETE", "/api/metadata/taskdefs/tagged_task");
    expect((await api("GET", `${path}/tags`)).status).toBe(404);
    expect(await storedRows("tagged_task")).toBe(0);
    // Registered anew, it starts with none.
    await apiOk("PUT", "/api/metadata/taskdefs", taskDef);
    expect(await tagsOf(path)).toEqual([]);
  });

  it("a workflow definition registered with tags keeps them; they go with its last version, not before", async () => {
    await apiOk("POST", "/api/metadata/workflow", { name: "tagged_reg", tasks: [wait("w")], tags: [{ key: "team", value: "ops" }] });
    await apiOk("PUT", "/api/metadata/workflow", [{ name: "tagged_reg", version: 2, tasks: [wait("w")], tags: [{ key: "pager", value: "sre" }], overwriteTags: false }]);
    const path = "/api/metadata/workflow/tagged_reg";
    expect(pairs(await tagsOf(path))).toEqual(["pager=sre", "team=ops"]);
    await apiOk("DELETE", "/api/metadata/workflow/tagged_reg/1");
    expect(pairs(await tagsOf(path))).toEqual(["pager=sre", "team=ops"]);
    await apiOk("DELETE", "/api/metadata/workflow/tagged_reg/2");
    expect((await api("GET", `${path}/tags`)).status).toBe(404);
    expect(await storedRows("tagged_reg")).toBe(0);
  });

  it("refuses bad tags and unknown definitions with a clear error, storing nothing; a definition with bad tags is not registered either", async () => {
    await register({ name: "tagged_refused", tasks: [wait("w")] });
    const path = "/api/metadata/workflow/tagged_refused/tags";
    const refusals: Array<[string, unknown, string]> = [
      ["POST", { key: "", value: "x" }, "key"],
      ["POST", { key: "k" }, "value"],
      ["POST", { key: "k", value: "v".repeat(257) }, "value"],
      ["POST", [{ key: "k", value: "v" }], "(body)"],
      ["PUT", { key: "k", value: "v" }, "(body)"],
      ["PUT", [{ key: "k", value: "v" }, { key: { name: "k" }, value: "v" }], "[1].key"],
      ["POST", { key: "k", value: null }, "value"],
      ["POST", { key: "k", value: ["v"] }, "value"],
      ["PUT", Array.from({ length: MAX_TAGS_PER_TARGET + 1 }, (_, index) => ({ key: `k${index}`, value: "v" })), "(body)"],
    ];
    for (const [method, body, errorPath] of refusals) {
      const response = await api(method, path, body);
      expect(response.status, `${method} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
      const error = (await response.json()) as { error: string; validationErrors: Array<{ path: string }> };
      expect(error.error).toBe("VALIDATION_ERROR");
      expect(error.validationErrors.map((issue) => issue.path)).toContain(errorPath);
    }
    expect(await storedRows("tagged_refused")).toBe(0);
    // Past the limit by adding one: refused, the others kept.
    await apiOk("PUT", path, Array.from({ length: MAX_TAGS_PER_TARGET }, (_, index) => ({ key: `k${index}`, value: "v" })));
    expect((await api("POST", path, { key: "one", value: "more" })).status).toBe(400);
    expect(await storedRows("tagged_refused")).toBe(MAX_TAGS_PER_TARGET);
    for (const [method, body] of [["GET", undefined], ["POST", { key: "k", value: "v" }], ["PUT", []], ["DELETE", { key: "k0", value: "v" }]] as const) {
      const response = await api(method, "/api/metadata/workflow/no_such_flow/tags", body);
      expect(response.status, method).toBe(404);
      // Conductor's words, as GET /api/metadata/workflow/no_such_flow answers them.
      expect(((await response.json()) as { message: string }).message, method).toBe("No such workflow found by name: no_such_flow, version: null");
    }
    const noTask = await api("GET", "/api/metadata/task/no_such_task/tags");
    expect(noTask.status).toBe(404);
    expect(((await noTask.json()) as { message: string }).message).toBe("No such taskType found by name: no_such_task");
    expect(await storedRows("no_such_flow")).toBe(0);
    const badTags = await api("POST", "/api/metadata/workflow", { name: "tagged_bad_reg", tasks: [wait("w")], tags: [{ key: "" }] });
    expect(badTags.status).toBe(400);
    expect(((await badTags.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path)).toContain("tags[0].key");
    expect((await api("GET", "/api/metadata/workflow/tagged_bad_reg")).status).toBe(404);
  });

  it("an addition racing another stays within the limit: the count is checked by the insert, not before it", async () => {
    await register({ name: "tagged_race", tasks: [wait("w")] });
    const path = "/api/metadata/workflow/tagged_race/tags";
    await apiOk("PUT", path, Array.from({ length: MAX_TAGS_PER_TARGET - 1 }, (_, index) => ({ key: `k${index}`, value: "v" })));
    // Another addition lands between this request's read of the 99 tags and its insert (D1 has no transaction across
    // the two): checked in JavaScript only, the request found room for its one and stored the 101st.
    const response = await whileAnotherTagLands("tagged_race", () => api("POST", path, { key: "mine", value: "v" }));
    expect(response.status).toBe(400);
    const refused = (await response.json()) as { error: string; validationErrors: Array<{ message: string }> };
    expect(refused.error).toBe("VALIDATION_ERROR");
    expect(refused.validationErrors[0]!.message).toContain(`this would make ${MAX_TAGS_PER_TARGET + 1}`);
    expect(await storedRows("tagged_race")).toBe(MAX_TAGS_PER_TARGET);
    expect(pairs(await tagsOf("/api/metadata/workflow/tagged_race"))).not.toContain("mine=v");

    // A version registered with tags added to the name's (overwriteTags: false), raced the same way: refused whole,
    // the version not stored either (its batch is one transaction), a 400 and not a 500.
    await apiOk("DELETE", path, { key: "other", value: "v" });
    const registration = await whileAnotherTagLands("tagged_race", () =>
      api("POST", "/api/metadata/workflow", { name: "tagged_race", version: 2, tasks: [wait("w")], tags: [{ key: "mine", value: "v" }], overwriteTags: false }),
    );
    expect(registration.status, await registration.clone().text()).toBe(400);
    expect(((await registration.json()) as { error: string }).error).toBe("VALIDATION_ERROR");
    expect(await storedRows("tagged_race")).toBe(MAX_TAGS_PER_TARGET);
    expect((await api("GET", "/api/metadata/workflow/tagged_race?version=2")).status).toBe(404);
  });

  it("a workflow definition's tags are read with the right to read it and written with the right to write it", async () => {
    await register({ name: "tagged_mine", tasks: [wait("w")] });
    await register({ name: "tagged_theirs", tasks: [wait("w")] });
    const author = await createUser("tags-author", { directPermissions: ["WORKFLOW_READ", "WORKFLOW_WRITE"].map((action) => ({ action, scope: "workflow:tagged_mine" })) });
    const asAuthor = orkes(author.token);
    expect((await call("POST", "/api/metadata/workflow/tagged_mine/tags", asAuthor, { key: "by", value: "author" })).status).toBe(200);
    expect((await call("GET", "/api/metadata/workflow/tagged_mine/tags", asAuthor)).status).toBe(200);
    expect((await call("POST", "/api/metadata/workflow/tagged_theirs/tags", asAuthor, { key: "by", value: "author" })).status).toBe(403);
    expect((await call("GET", "/api/metadata/workflow/tagged_theirs/tags", asAuthor)).status).toBe(403);
    expect(await storedRows("tagged_theirs")).toBe(0);
  });

  it("a schedule's tags: added (a key it has gets the new value), listed, removed, found by tag with the right to read it, gone with it", async () => {
    await register({ name: "tagged_sched_flow", tasks: [wait("w")] });
    const save = (name: string) => apiOk("POST", "/api/scheduler/schedules", { name, cronExpression: "0 0 0 1 1 ?", startWorkflowRequest: { name: "tagged_sched_flow" } });
    await save("tagged-nightly");
    await save("tagged-weekly");
    const path = "/api/scheduler/schedules/tagged-nightly/tags";
    expect(await apiOk<TagJson[]>("GET", path)).toEqual([]);
    await apiOk("PUT", path, [{ key: "team", value: "ops" }, { key: "tier", value: "silver" }]);
    await apiOk("PUT", path, [{ key: "tier", value: "gold" }]);
    expect(pairs(await apiOk<TagJson[]>("GET", path))).toEqual(["team=ops", "tier=gold"]);
    await apiOk("PUT", "/api/scheduler/schedules/tagged-weekly/tags", [{ key: "team", value: "ops" }]);
    const found = await apiOk<Array<{ name: string }>>("GET", "/api/scheduler/schedules/tags?tag=team:ops");
    expect(found.map((schedule) => schedule.name)).toEqual(["tagged-nightly", "tagged-weekly"]);
    expect(await apiOk<unknown[]>("GET", "/api/scheduler/schedules/tags?tag=team:dev")).toEqual([]);
    expect((await api("GET", "/api/scheduler/schedules/tags?tag=team")).status).toBe(400);
    // DELETE takes a list and removes those it holds.
    await apiOk("DELETE", path, [{ key: "tier", value: "gold" }, { key: "team", value: "other" }]);
    expect(pairs(await apiOk<TagJson[]>("GET", path))).toEqual(["team=ops"]);
    // Someone who may not read the schedule's workflow sees neither its tags nor it among those with a tag.
    const stranger = await createUser("tags-stranger", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:someone_else" }] });
    expect((await call("GET", path, orkes(stranger.token))).status).toBe(403);
    expect((await call("PUT", path, orkes(stranger.token), [{ key: "x", value: "y" }])).status).toBe(403);
    expect(await (await call("GET", "/api/scheduler/schedules/tags?tag=team:ops", orkes(stranger.token))).json()).toEqual([]);
    await apiOk("DELETE", "/api/scheduler/schedules/tagged-nightly");
    expect(await storedRows("tagged-nightly")).toBe(0);
    expect((await api("GET", path)).status).toBe(404);
  });

  it("an event handler's tags: added, listed and removed by system admins; gone with the handler", async () => {
    const handler = { name: "tagged_handler", event: "conductor:tagged:q", active: true, actions: [{ action: "terminate_workflow", terminate_workflow: { workflowId: "${workflowId}" } }] };
    await apiOk("POST", "/api/event", handler);
    const path = "/api/event/tagged_handler/tags";
    await apiOk("PUT", path, [{ key: "owner", value: "ops" }]);
    expect(await apiOk<TagJson[]>("GET", path)).toEqual([{ key: "owner", value: "ops" }]);
    await apiOk("DELETE", path, [{ key: "owner", value: "ops" }]);
    expect(await apiOk<TagJson[]>("GET", path)).toEqual([]);
    await apiOk("PUT", path, [{ key: "owner", value: "ops" }]);
    expect((await api("GET", "/api/event/no_such_handler/tags")).status).toBe(404);
    await apiOk("DELETE", "/api/event/tagged_handler");
    expect(await storedRows("tagged_handler")).toBe(0);
  });

  // Orkes' getResourcesByTag, as its page shows it: https://orkes.io/content/reference-docs/api/tags/get-resources-by-tag
  it("finds the things of one kind holding a tag (GET /api/metadata/tags/resources), each as {id, displayName}, as the caller may read them", async () => {
    const tag = { key: "restag", value: "backend" };
    const found = (type: string, value = "backend") => apiOk<Array<{ id: string; displayName: string }>>("GET", `/api/metadata/tags/resources?tagKey=restag&tagValue=${value}&resourceType=${type}`);
    await register({ name: "restag_flow", tasks: [wait("w")] });
    await register({ name: "restag_other_flow", tasks: [wait("w")] });
    await apiOk("POST", "/api/metadata/workflow/restag_flow/tags", tag);
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "restag_task", ownerEmail: "t@example.com", tags: [tag] }]);
    for (const [name, workflow] of [["restag_annual_upgrade", "restag_flow"], ["restag_other", "restag_other_flow"]]) {
      await apiOk("POST", "/api/scheduler/schedules", { name, cronExpression: "0 0 12 31 JAN ?", zoneId: "UTC", startWorkflowRequest: { name: workflow } });
      await apiOk("PUT", `/api/scheduler/schedules/${name}/tags`, [tag]);
    }
    await apiOk("PUT", "/api/secrets/restag_secret", "s3cret");
    await apiOk("PUT", "/api/secrets/restag_secret/tags", [tag]);
    await apiOk("POST", "/api/event", { name: "restag_handler", event: "conductor:restag:q", active: true, actions: [{ action: "terminate_workflow", terminate_workflow: { workflowId: "${workflowId}" } }] });
    await apiOk("PUT", "/api/event/restag_handler/tags", [tag]);
    expect((await api("PUT", "/api/environment/restag_env", "https://pay.example.com", { "content-type": "text/plain" })).status).toBe(200);
    await apiOk("PUT", "/api/environment/restag_env/tags", [tag]);
    const webhook = await apiOk<{ id: string }>("POST", "/api/metadata/webhook", { name: "restag-hook", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { restag_flow: 1 }, tags: [tag] });
    const application = await apiOk<{ id: string }>("POST", "/api/applications", { name: "restag-app" });
    await apiOk("PUT", `/api/applications/${application.id}/tags`, [tag]);
    await apiOk("POST", "/api/human/template", { name: "RestagForm", jsonSchema: { type: "object" }, templateUI: { type: "VerticalLayout", elements: [] }, tags: [tag] });

    // The page's example: the schedules tagged team:backend.
    expect(await found("WORKFLOW_SCHEDULE")).toEqual([
      { id: "restag_annual_upgrade", displayName: "restag_annual_upgrade" },
      { id: "restag_other", displayName: "restag_other" },
    ]);
    expect(await found("WORKFLOW_DEF")).toEqual([{ id: "restag_flow", displayName: "restag_flow" }]);
    expect(await found("TASK_DEF")).toEqual([{ id: "restag_task", displayName: "restag_task" }]);
    expect(await found("SECRET_NAME")).toEqual([{ id: "restag_secret", displayName: "restag_secret" }]);
    expect(await found("EVENT_HANDLER")).toEqual([{ id: "restag_handler", displayName: "restag_handler" }]);
    expect(await found("ENV_VARIABLE")).toEqual([{ id: "restag_env", displayName: "restag_env" }]);
    // A webhook by its id, a form by name/version (as the page says), an application by its id.
    expect(await found("WEBHOOK")).toEqual([{ id: webhook.id, displayName: "restag-hook" }]);
    expect(await found("USER_FORM_TEMPLATE")).toEqual([{ id: "RestagForm/1", displayName: "RestagForm" }]);
    expect(await found("APPLICATION")).toEqual([{ id: application.id, displayName: "restag-app" }]);
    // The value counts; kinds this service has none of hold none.
    expect(await found("WORKFLOW_DEF", "frontend")).toEqual([]);
    expect(await found("PROMPT")).toEqual([]);

    // Each parameter is required, and the type is one of Orkes' (a 400 for another, as the page says).
    for (const query of ["tagValue=backend&resourceType=WORKFLOW_DEF", "tagKey=restag&resourceType=WORKFLOW_DEF", "tagKey=restag&tagValue=backend", "tagKey=restag&tagValue=backend&resourceType=workflow_def"]) {
      const refused = await api("GET", `/api/metadata/tags/resources?${query}`);
      expect(refused.status, query).toBe(400);
    }

    // A reader of every workflow sees the schedules of workflows he may read, and no secret or application names.
    const reader = await createUser("restag-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    const asReader = (type: string) => call("GET", `/api/metadata/tags/resources?tagKey=restag&tagValue=backend&resourceType=${type}`, orkes(reader.token));
    expect(await (await asReader("WORKFLOW_DEF")).json()).toEqual([{ id: "restag_flow", displayName: "restag_flow" }]);
    for (const type of ["SECRET_NAME", "APPLICATION", "EVENT_HANDLER"]) expect((await asReader(type)).status, type).toBe(403);
    // A metadata admin who may read one workflow: its schedules only, as the schedule routes decide.
    const scheduler = await createUser("restag-scheduler", { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }, { action: "WORKFLOW_READ", scope: "workflow:restag_flow" }] });
    const scoped = await call("GET", "/api/metadata/tags/resources?tagKey=restag&tagValue=backend&resourceType=WORKFLOW_SCHEDULE", orkes(scheduler.token));
    expect(await scoped.json()).toEqual([{ id: "restag_annual_upgrade", displayName: "restag_annual_upgrade" }]);
    // Who may read no metadata is refused by the route's access rule.
    const stranger = await createUser("restag-stranger", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:restag_flow" }] });
    expect((await call("GET", "/api/metadata/tags/resources?tagKey=restag&tagValue=backend&resourceType=WORKFLOW_DEF", orkes(stranger.token))).status).toBe(403);

    // A form's tags as a form takes them (a value of up to 1,024 characters, an empty key) are found too; the other
    // kinds keep their own bounds (a value of at most 256), and a form's are bounded by its own.
    const long = "v".repeat(300);
    await apiOk("POST", "/api/human/template", { name: "RestagLongForm", jsonSchema: { type: "object" }, templateUI: { type: "VerticalLayout", elements: [] }, tags: [{ key: "restag", value: long }, { key: "", value: "keyless" }] });
    expect(await found("USER_FORM_TEMPLATE", long)).toEqual([{ id: "RestagLongForm/1", displayName: "RestagLongForm" }]);
    expect(await apiOk("GET", "/api/metadata/tags/resources?tagKey=&tagValue=keyless&resourceType=USER_FORM_TEMPLATE")).toEqual([{ id: "RestagLongForm/1", displayName: "RestagLongForm" }]);
    for (const [value, type] of [[long, "WORKFLOW_DEF"], ["v".repeat(1025), "USER_FORM_TEMPLATE"]] as const) {
      const refused = await api("GET", `/api/metadata/tags/resources?tagKey=restag&tagValue=${value}&resourceType=${type}`);
      expect(refused.status, type).toBe(400);
      expect(await refused.json(), type).toMatchObject({ validationErrors: [{ path: "tagValue" }] });
    }
    expect((await api("GET", "/api/metadata/tags/resources?tagKey=&tagValue=keyless&resourceType=WORKFLOW_DEF")).status).toBe(400);

    // A stored rule letting in a reader of one workflow shows him the definitions he may read, as their listings do.
    await apiOk("POST", "/api/metadata/workflow/restag_other_flow/tags", tag);
    const narrow = await createUser("restag-narrow", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:restag_other_flow" }] });
    const tasker = await createUser("restag-tasker", { directPermissions: [{ action: "TASK_READ", scope: "task:restag_task" }] });
    const rule = await apiOk<{ id: string }>("POST", "/api/security/rules", {
      apiPath: "/api/metadata/tags/resources",
      methods: ["GET"],
      requiredPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:restag_other_flow" }, { action: "TASK_READ", scope: "task:restag_task" }],
    }, 201);
    try {
      const as = (token: string) => (type: string) => call("GET", `/api/metadata/tags/resources?tagKey=restag&tagValue=backend&resourceType=${type}`, orkes(token));
      const [asNarrow, asTasker] = [as(narrow.token), as(tasker.token)];
      expect(await (await asNarrow("WORKFLOW_DEF")).json()).toEqual([{ id: "restag_other_flow", displayName: "restag_other_flow" }]);
      expect(await (await asNarrow("TASK_DEF")).json()).toEqual([]);
      // Webhooks and environment variables as their own listings let each in: GET /api/metadata/webhook needs
      // WORKFLOW_READ on every workflow (a webhook's id is its inbound URL's path), GET /api/environment WORKFLOW_READ
      // on any; neither lets in a reader of one task.
      expect(await (await asNarrow("ENV_VARIABLE")).json()).toEqual([{ id: "restag_env", displayName: "restag_env" }]);
      expect(await (await asTasker("TASK_DEF")).json()).toEqual([{ id: "restag_task", displayName: "restag_task" }]);
      // Event handlers and applications likewise, as GET /api/event and GET /api/applications decide (stored rules included).
      const listings = await Promise.all(["/api/event", "/api/applications"].map((apiPath) => apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath, methods: ["GET"], requiredPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:restag_other_flow" }] }, 201)));
      try {
        expect(await (await asNarrow("EVENT_HANDLER")).json()).toEqual([{ id: "restag_handler", displayName: "restag_handler" }]);
        expect(await (await asNarrow("APPLICATION")).json()).toEqual([{ id: application.id, displayName: "restag-app" }]);
      } finally {
        for (const listing of listings) await apiOk("DELETE", `/api/security/rules/${listing.id}`);
      }
      for (const [who, type, listing] of [[asNarrow, "WEBHOOK", "/api/metadata/webhook"], [asTasker, "WEBHOOK", "/api/metadata/webhook"], [asTasker, "ENV_VARIABLE", "/api/environment"], [asTasker, "EVENT_HANDLER", "/api/event"], [asTasker, "APPLICATION", "/api/applications"]] as const) {
        const refused = await who(type);
        expect(refused.status, type).toBe(403);
        expect(await refused.json(), type).toMatchObject({ message: expect.stringContaining(`GET ${listing} needs`) });
      }
    } finally {
      await apiOk("DELETE", `/api/security/rules/${rule.id}`);
    }
  });

  it("finds by tag the schedules a caller may read when more than a page of those he may not read sort before them", async () => {
    const tag = { key: "pagetag", value: "x" };
    for (const name of ["pagetag_mine", "pagetag_theirs"]) await register({ name, tasks: [wait("w")] });
    const save = (name: string, workflow: string) => apiOk("POST", "/api/scheduler/schedules", { name, cronExpression: "0 0 12 31 JAN ?", zoneId: "UTC", startWorkflowRequest: { name: workflow } });
    await save("zz_pagetag_mine", "pagetag_mine");
    await save("aa_pagetag_theirs", "pagetag_theirs");
    // A page's worth (1,000) more schedules of the other workflow, each tagged, ahead by name: copies of the one saved,
    // written in one statement each (1,000 saves through the API would take long).
    const columns = (await env.DB.prepare("SELECT name FROM pragma_table_info('schedules')").all<{ name: string }>()).results.map((row) => row.name);
    const copied = columns.map((column) => (column === "name" ? "'aa_pagetag_' || printf('%04d', n)" : column)).join(", ");
    await env.DB.batch([
      env.DB.prepare(`WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 1000) INSERT INTO schedules (${columns.join(", ")}) SELECT ${copied} FROM seq, schedules WHERE schedules.name = 'aa_pagetag_theirs'`),
      env.DB.prepare("INSERT INTO metadata_tags (target_type, target_name, tag_key, tag_value) SELECT 'SCHEDULE', name, ?, ? FROM schedules WHERE name LIKE 'aa_pagetag_%' OR name = 'zz_pagetag_mine'").bind(tag.key, tag.value),
    ]);
    try {
      const reader = await createUser("pagetag-reader", { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }, { action: "WORKFLOW_READ", scope: "workflow:pagetag_mine" }] });
      const asReader = async (path: string) => (await call("GET", path, orkes(reader.token))).json();
      expect(await asReader("/api/scheduler/schedules/tags?tag=pagetag:x")).toMatchObject([{ name: "zz_pagetag_mine" }]);
      expect(await asReader("/api/metadata/tags/resources?tagKey=pagetag&tagValue=x&resourceType=WORKFLOW_SCHEDULE")).toEqual([{ id: "zz_pagetag_mine", displayName: "zz_pagetag_mine" }]);
    } finally {
      await env.DB.batch([
        env.DB.prepare("DELETE FROM metadata_tags WHERE target_type = 'SCHEDULE' AND target_name LIKE 'aa_pagetag_%'"),
        env.DB.prepare("DELETE FROM schedules WHERE name LIKE 'aa_pagetag_%'"),
      ]);
    }
  });

  it("definitions are listed by tag (Orkes' tagKey, tagValue) and with their tags (metadata=true)", async () => {
    await register({ name: "tagged_list_a", tasks: [wait("w")] });
    await register({ name: "tagged_list_b", tasks: [wait("w")] });
    await apiOk("PUT", "/api/metadata/workflow/tagged_list_a/tags", [{ key: "listteam", value: "ops" }]);
    await apiOk("PUT", "/api/metadata/workflow/tagged_list_b/tags", [{ key: "listteam", value: "dev" }]);
    const names = async (query: string) => (await apiOk<Array<{ name: string; tags?: TagJson[] }>>("GET", `/api/metadata/workflow?${query}`)).map((definition) => definition.name);
    expect(await names("tagKey=listteam&tagValue=ops")).toEqual(["tagged_list_a"]);
    expect(await names("tagKey=listteam")).toEqual(["tagged_list_a", "tagged_list_b"]);
    expect(await names("tagKey=listteam&tagValue=qa")).toEqual([]);
    // Filtered by tag, each carries its tags, metadata=true or not, as Orkes answers (its docs' example of
    // `?metadata=false&tagKey=api&tagValue=doc`).
    const filtered = await apiOk<Array<{ name: string; tags?: TagJson[] }>>("GET", "/api/metadata/workflow?metadata=false&tagKey=listteam&tagValue=ops");
    expect(filtered.map((definition) => [definition.name, definition.tags])).toEqual([["tagged_list_a", [{ key: "listteam", value: "ops" }]]]);
    const withTags = await apiOk<Array<{ name: string; tags?: TagJson[] }>>("GET", "/api/metadata/workflow?metadata=true&tagKey=listteam");
    expect(withTags.map((definition) => [definition.name, definition.tags])).toEqual([
      ["tagged_list_a", [{ key: "listteam", value: "ops" }]],
      ["tagged_list_b", [{ key: "listteam", value: "dev" }]],
    ]);
    // Without metadata=true the definitions are as ever, tagless.
    expect((await apiOk<Array<Record<string, unknown>>>("GET", "/api/metadata/workflow")).every((definition) => !("tags" in definition))).toBe(true);
    expect((await api("GET", "/api/metadata/workflow?tagValue=ops")).status).toBe(400);
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "tagged_list_task", ownerEmail: "t@example.com", tags: [{ key: "listlang", value: "go" }] }]);
    expect((await apiOk<Array<{ name: string; tags: TagJson[] }>>("GET", "/api/metadata/taskdefs?metadata=true&tagKey=listlang&tagValue=go")).map((taskDef) => [taskDef.name, taskDef.tags])).toEqual([
      ["tagged_list_task", [{ key: "listlang", value: "go" }]],
    ]);
    expect((await apiOk<Array<{ name: string; tags: TagJson[] }>>("GET", "/api/metadata/taskdefs?tagKey=listlang")).map((taskDef) => [taskDef.name, taskDef.tags])).toEqual([
      ["tagged_list_task", [{ key: "listlang", value: "go" }]],
    ]);
    // One definition read with metadata=true (Orkes' getWorkflowDef(name, version, true)) carries its tags too.
    expect((await apiOk("GET", "/api/metadata/workflow/tagged_list_a?metadata=true"))["tags"]).toEqual([{ key: "listteam", value: "ops" }]);
    expect(await apiOk("GET", "/api/metadata/workflow/tagged_list_a")).not.toHaveProperty("tags");
    expect((await apiOk("GET", "/api/metadata/taskdefs/tagged_list_task?metadata=true"))["tags"]).toEqual([{ key: "listlang", value: "go" }]);
  });
});
