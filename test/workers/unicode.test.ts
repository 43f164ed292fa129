import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createUser } from "./auth-helpers";
import { ADMIN_KEY, api, apiOk, getWorkflow, register, startWorkflow, waitFor, waitForIndexRow } from "./helpers";

const wait = [{ name: "hold", taskReferenceName: "hold", type: "WAIT" }];

/** POSTs `body` (bytes as they are, or text) to `path` as JSON, as the admin. */
function postRaw(path: string, body: Uint8Array | string, contentType = "application/json"): Promise<Response> {
  return SELF.fetch(`https://conductor.test${path}`, { method: "POST", headers: { "x-api-key": ADMIN_KEY, "content-type": contentType }, body });
}

/** The error answer of a refused request, after checking its status and kind. */
async function refusal(response: Response, status: number, error: string): Promise<{ message: string; validationErrors?: Array<{ path: string; message: string }> }> {
  const body = (await response.json()) as { status: number; error: string; message: string; validationErrors?: Array<{ path: string; message: string }> };
  expect({ status: response.status, bodyStatus: body.status, error: body.error }).toEqual({ status, bodyStatus: status, error });
  return body;
}

describe("JSON request bodies as bytes", () => {
  it("a body that is not UTF-8 (Latin-1 'café' sent without its charset) is a 400 that changes nothing, where it was stored with U+FFFD in place of the é; a byte order mark before the JSON is read past, and a declared charset is read", async () => {
    await register({ name: "uni_bytes", tasks: wait });
    // {"name":"uni_bytes","idempotencyKey":"uni-bytes-1","idempotencyStrategy":"FAIL","input":{"city":"caf\xe9"}} in Latin-1.
    const latin1 = Uint8Array.from('{"name":"uni_bytes","idempotencyKey":"uni-bytes-1","idempotencyStrategy":"FAIL","input":{"city":"café"}}', (c) => c.charCodeAt(0));
    const refused = await refusal(await postRaw("/api/workflow", latin1), 400, "VALIDATION_ERROR");
    expect(refused.validationErrors).toEqual([{ path: "(body)", message: "Request body is not valid UTF-8: send JSON as UTF-8" }]);

    // Nothing claimed the key: a FAIL start with it now starts (a claim would have made it a 409).
    const text = '{"name":"uni_bytes","idempotencyKey":"uni-bytes-1","idempotencyStrategy":"FAIL","input":{"city":"café"}}';
    const started = await postRaw("/api/workflow", new TextEncoder().encode(`\ufeff${text}`));
    expect(started.status).toBe(200);
    expect((await getWorkflow(await started.text())).input).toEqual({ city: "café" });

    // Declared as Latin-1, the same bytes are read so (as Spring's Jackson converter reads them); a charset no decoder
    // knows is a 415.
    const declared = await postRaw("/api/workflow/uni_bytes", Uint8Array.from('{"city":"café"}', (c) => c.charCodeAt(0)), "application/json; charset=ISO-8859-1");
    expect(declared.status).toBe(200);
    expect((await getWorkflow(await declared.text())).input).toEqual({ city: "café" });
    await refusal(await postRaw("/api/workflow/uni_bytes", '{"city":"x"}', "application/json; charset=x-nonesuch"), 415, "UNSUPPORTED_MEDIA_TYPE");
  });


  it("a body in a declared charset names, to the permission check, the workflow the start starts: a caller who may start one workflow cannot start another by writing its body in Latin-1", async () => {
    await register({ name: "uni_allowed", tasks: wait });
    await register({ name: "uni_forbidden", tasks: wait });
    const user = await createUser(`uni-starter-${crypto.randomUUID().slice(0, 8)}`, { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:uni_allowed" }] });
    const send = (name: string) =>
      SELF.fetch("https://conductor.test/api/workflow", {
        method: "POST",
        headers: { "x-api-key": user.apiKey, "content-type": "application/json; charset=ISO-8859-1" },
        body: Uint8Array.from(`{"name":"${name}","correlationId":"uni-latin1-start","input":{"city":"café"}}`, (c) => c.charCodeAt(0)),
      });
    await refusal(await send("uni_forbidden"), 403, "PERMISSION_DENIED");
    const allowed = await send("uni_allowed");
    expect(allowed.status).toBe(200);
    expect((await getWorkflow(await allowed.text())).input).toEqual({ city: "café" });
  });
});

describe("WAIT_FOR_WEBHOOK callback bodies as bytes", () => {
  it("a callback body is read as every JSON body is: bytes that are not UTF-8 are a 400 that changes nothing (they were kept as U+FFFD), a declared charset is read, one no decoder knows is a 415", async () => {
    await register({ name: "uni_hook", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] });
    const workflowId = await startWorkflow("uni_hook", {});
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    const url = String(waiting.tasks[0]!["callbackUrl"]);
    const latin1 = Uint8Array.from('{"status":"COMPLETED","output":{"city":"café"}}', (c) => c.charCodeAt(0));
    const send = (contentType: string) => SELF.fetch(url, { method: "POST", headers: { "content-type": contentType }, body: latin1 });
    const before = JSON.stringify(await getWorkflow(workflowId));
    const undeclared = await refusal(await send("application/json"), 400, "VALIDATION_ERROR");
    expect(undeclared.validationErrors).toEqual([{ path: "(body)", message: "Request body is not valid UTF-8: send JSON as UTF-8" }]);
    await refusal(await send("application/json; charset=x-nonesuch"), 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(JSON.stringify(await getWorkflow(workflowId))).toBe(before);
    expect((await send("application/json; charset=ISO-8859-1")).status).toBe(200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks[0]!.outputData).toEqual({ city: "café" });
  });
});

describe("definition names beyond ASCII", () => {
  it("a workflow or task definition name holding a lone surrogate (half an emoji) is a 400 at its name, nothing stored, where it was stored and then answered 404 to every path naming it (none can: a URL has no form for it) and listed as three U+FFFD", async () => {
    const half = "uni_half_\ud83d";
    const workflow = await refusal(await postRaw("/api/metadata/workflow", JSON.stringify({ name: half, version: 1, schemaVersion: 2, ownerEmail: "test@example.com", tasks: wait })), 400, "VALIDATION_ERROR");
    expect(workflow.validationErrors?.map((issue) => issue.path)).toEqual(["name"]);
    expect(workflow.validationErrors?.[0]?.message).toContain("must not hold a lone surrogate");
    const task = await refusal(await postRaw("/api/metadata/taskdefs", JSON.stringify([{ name: half, ownerEmail: "test@example.com" }])), 400, "VALIDATION_ERROR");
    expect(task.validationErrors?.map((issue) => issue.path)).toEqual(["[0].name"]);
    expect(task.validationErrors?.[0]?.message).toContain("without a lone surrogate");

    const workflowNames = await apiOk<string[]>("GET", "/api/metadata/workflow/names");
    const taskNames = (await apiOk<Array<{ name: string }>>("GET", "/api/metadata/taskdefs")).map((definition) => definition.name);
    expect([...workflowNames, ...taskNames].filter((name) => name.startsWith("uni_half_"))).toEqual([]);
  });

  it("a SIMPLE task named with a lone surrogate is a 400 at its name, nothing stored: workers poll by the name in a path (/api/tasks/poll/{taskType}), which cannot carry it, so the task would wait for ever", async () => {
    const simple = { name: "uni_simple_half", version: 1, schemaVersion: 2, ownerEmail: "test@example.com", tasks: [{ name: "resize_\ud83d", taskReferenceName: "resize", type: "SIMPLE" }] };
    const refused = await refusal(await postRaw("/api/metadata/workflow", JSON.stringify(simple)), 400, "VALIDATION_ERROR");
    expect(refused.validationErrors?.map((issue) => issue.path)).toEqual(["tasks[0].name"]);
    expect(refused.validationErrors?.[0]?.message).toContain("lone surrogate");
    expect((await api("GET", "/api/metadata/workflow/uni_simple_half")).status).toBe(404);
  });

  it("a name in any script round-trips through its percent-encoded path, and two names equal but for Unicode normalisation (é precomposed, e and a combining accent) or case are two definitions, as Conductor compares names", async () => {
    const composed = "uni_café_流程_😀";
    const decomposed = "uni_cafe\u0301_流程_😀";
    const capital = "uni_CAFÉ_流程_😀";
    await register({ name: capital, tasks: wait, description: "capital" });
    await register({ name: composed, tasks: wait, description: "composed" });
    await register({ name: decomposed, tasks: wait, description: "decomposed" });
    for (const [name, description] of [[composed, "composed"], [decomposed, "decomposed"]] as const) {
      const read = await apiOk("GET", `/api/metadata/workflow/${encodeURIComponent(name)}`);
      expect({ name: read["name"], description: read["description"] }).toEqual({ name, description });
      const workflowId = await apiOk<string>("POST", `/api/workflow/${encodeURIComponent(name)}`, {});
      expect((await getWorkflow(workflowId)).workflowName).toBe(name);
    }
    await apiOk("DELETE", `/api/metadata/workflow/${encodeURIComponent(decomposed)}/1`);
    expect((await api("GET", `/api/metadata/workflow/${encodeURIComponent(decomposed)}`)).status).toBe(404);
    expect((await apiOk("GET", `/api/metadata/workflow/${encodeURIComponent(composed)}`))["description"]).toBe("composed");
    expect((await apiOk("GET", `/api/metadata/workflow/${encodeURIComponent(capital)}`))["description"]).toBe("capital");
  });
});

describe("tags beyond ASCII", () => {
  it("a tag in any script is found by its percent-encoded key and value; one holding a lone surrogate is a 400 that leaves the tags as they were, where it was stored, listed as three U+FFFD and found by no query", async () => {
    await register({ name: "uni_tagged", tasks: wait });
    await apiOk("PUT", "/api/metadata/workflow/uni_tagged/tags", [{ key: "équipe", value: "支払い😀" }]);
    const found = await apiOk<Array<{ name: string }>>("GET", `/api/metadata/workflow?tagKey=${encodeURIComponent("équipe")}&tagValue=${encodeURIComponent("支払い😀")}`);
    expect(found.map((definition) => definition.name)).toEqual(["uni_tagged"]);

    for (const tag of [{ key: "half\ud83d", value: "v" }, { key: "k", value: "half\ude00" }]) {
      const refused = await refusal(await api("PUT", "/api/metadata/workflow/uni_tagged/tags", JSON.stringify([tag])), 400, "VALIDATION_ERROR");
      expect(refused.validationErrors?.[0]?.message).toContain("must not hold a lone surrogate");
    }
    expect(await apiOk("GET", "/api/metadata/workflow/uni_tagged/tags")).toEqual([{ key: "équipe", value: "支払い😀" }]);
  });
});

describe("free text and JSON data holding a lone surrogate", () => {
  const half = "\ud83d";
  /** Each refused field with whether its message names the lone surrogate. */
  const lone = (issues: Array<{ path: string; message: string }> | undefined) => issues?.map((issue) => [issue.path, issue.message.includes("must not hold a lone surrogate")]);

  it("a correlation id or task domain holding one is a 400 naming it, nothing started, where the correlation id was stored in the search index as three U+FFFD; a workflow's input holding one is kept exactly, by the execution and in the index, as JSON keeps it (an escape)", async () => {
    await register({ name: "uni_free_start", tasks: wait });
    const correlation = await refusal(await postRaw("/api/workflow", JSON.stringify({ name: "uni_free_start", correlationId: `order-${half}` })), 400, "VALIDATION_ERROR");
    expect(lone(correlation.validationErrors)).toEqual([["correlationId", true]]);
    const domain = await refusal(await postRaw("/api/workflow", JSON.stringify({ name: "uni_free_start", taskToDomain: { "*": `eu-${half}` } })), 400, "VALIDATION_ERROR");
    expect(lone(domain.validationErrors)).toEqual([["taskToDomain.*", true]]);

    const input = { note: `cut-${half}`, [`key-${half}`]: "\ude00-alone" };
    const workflowId = await apiOk<string>("POST", "/api/workflow", JSON.stringify({ name: "uni_free_start", correlationId: "order-1", input }));
    expect((await getWorkflow(workflowId)).input).toEqual(input);
    await waitForIndexRow(workflowId, "RUNNING");
    const rows = await env.DB.prepare("SELECT workflow_id, correlation_id, input FROM executions WHERE workflow_name = 'uni_free_start'").all<{ workflow_id: string; correlation_id: string; input: string }>();
    // The refused starts left no row: only the one started.
    expect(rows.results.map((row) => [row.workflow_id, row.correlation_id, JSON.parse(row.input)])).toEqual([[workflowId, "order-1", input]]);
    // Looked up, one holding it is looked up (it finds what such an id was stored as before), not a 400 for the whole list.
    const found = await apiOk<Record<string, Array<{ workflowId: string }>>>("POST", "/api/workflow/uni_free_start/correlated", JSON.stringify(["order-1", `order-${half}`]));
    expect(Object.fromEntries(Object.entries(found).map(([id, workflows]) => [id, workflows.map((workflow) => workflow.workflowId)]))).toEqual({ "order-1": [workflowId], [`order-${half}`]: [] });
  });

  it("a child's task domain an expression gives (SUB_WORKFLOW, START_WORKFLOW) holding one fails the task naming the entry, nothing started, where the child's task waited in a queue no poll could name; a whole emoji is a domain like any other", async () => {
    await register({ name: "uni_domain_child", tasks: [{ name: "uni_domain_worker", taskReferenceName: "work", type: "SIMPLE" }] });
    const taskToDomain = { uni_domain_worker: "${workflow.input.domain}" };
    await register({ name: "uni_domain_sub", tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "uni_domain_child", version: 1, taskToDomain } }] });
    await register({ name: "uni_domain_kick", tasks: [{ name: "kick", taskReferenceName: "kick", type: "START_WORKFLOW", inputParameters: { startWorkflow: { name: "uni_domain_child", taskToDomain } } }] });
    for (const [name, field] of [["uni_domain_sub", "subWorkflowParam"], ["uni_domain_kick", "startWorkflow"]] as const) {
      const workflowId = await apiOk<string>("POST", "/api/workflow", JSON.stringify({ name, input: { domain: `gpu-${half}` } }));
      const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
      expect({ status: done.status, task: done.tasks[0]!.status }).toEqual({ status: "FAILED", task: "FAILED" });
      expect(done.tasks[0]!.reasonForIncompletion).toContain(`${field}.taskToDomain.uni_domain_worker resolved to a domain that must not hold a lone surrogate`);
      // Nothing started: the SUB_WORKFLOW names no child, the START_WORKFLOW's chosen id is no execution.
      if (field === "subWorkflowParam") expect(done.tasks[0]!.outputData).toMatchObject({ details: { subWorkflowId: null, errorCode: "INVALID_PARAMETERS" } });
      else expect((await api("GET", `/api/workflow/${String(done.tasks[0]!.outputData["workflowId"])}`)).status).toBe(404);
    }
    const whole = await apiOk<string>("POST", "/api/workflow", JSON.stringify({ name: "uni_domain_sub", input: { domain: "gpu-😀" } }));
    const running = await waitFor(whole, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && workflow.tasks[0]["subWorkflowId"] !== undefined);
    const [polled] = await apiOk<Array<{ workflowInstanceId: string; domain: string }>>("GET", `/api/tasks/poll/batch/uni_domain_worker?count=1&workerid=w1&domain=${encodeURIComponent("gpu-😀")}`);
    expect(polled).toMatchObject({ workflowInstanceId: running.tasks[0]!["subWorkflowId"], domain: "gpu-😀" });
  });

  it("a worker's reason, log lines and worker id holding one are taken with U+FFFD in its place, as stored, not refused (a refusal lost the whole result: Conductor's Java TaskResult cuts a reason mid-emoji); its output holding one is kept exactly", async () => {
    await register({ name: "uni_free_task", tasks: [{ name: "uni_free_worker", taskReferenceName: "work", type: "SIMPLE" }], outputParameters: { said: "${work.output.said}" } });
    const workflowId = await startWorkflow("uni_free_task", {});
    const [polled] = await apiOk<Array<{ taskId: string }>>("GET", "/api/tasks/poll/batch/uni_free_worker?count=1&workerid=w1");
    const taskId = polled!.taskId;
    const result = { workflowInstanceId: workflowId, taskId };
    await apiOk("POST", `/api/tasks/${taskId}/log`, JSON.stringify(`posted ${half}`));
    await apiOk("POST", "/api/tasks", JSON.stringify({ ...result, status: "IN_PROGRESS", callbackAfterSeconds: 60, reasonForIncompletion: `slow ${half}`, workerId: `w-${half}`, logs: ["fine", { log: `cut ${half}` }] }));
    const running = (await getWorkflow(workflowId)).tasks[0]!;
    // Put back for a later poll (callbackAfterSeconds), with what the worker said.
    expect({ reason: running.reasonForIncompletion, workerId: running.workerId }).toEqual({ reason: "slow \uFFFD", workerId: "w-\uFFFD" });

    const output = { said: `half ${half}`, [`\ude00`]: 1 };
    await apiOk("POST", "/api/tasks", JSON.stringify({ ...result, status: "COMPLETED", outputData: output, logs: ["done 😀"] }));
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect({ status: done.status, task: done.tasks[0]!.outputData, workflow: done.output }).toEqual({ status: "COMPLETED", task: output, workflow: { said: output.said } });
    expect((await apiOk<Array<{ log: string }>>("GET", `/api/tasks/${taskId}/log`)).map((entry) => entry.log)).toEqual(["posted \uFFFD", "fine", "cut \uFFFD", "done 😀"]);
  });

  it("a user's name, a group's or role's description or an application's name holding one is a 400 naming it, nothing stored, where each read back as three U+FFFD", async () => {
    const user = await refusal(await api("PUT", "/api/users/uni-free-user", JSON.stringify({ name: `Zoë ${half}`, roles: ["USER"] })), 400, "VALIDATION_ERROR");
    expect(lone(user.validationErrors)).toEqual([["name", true]]);
    expect((await api("GET", "/api/users/uni-free-user")).status).toBe(404);
    const group = await refusal(await api("PUT", "/api/groups/uni-free-group", JSON.stringify({ description: `team ${half}`, roles: [], defaultAccess: {} })), 400, "VALIDATION_ERROR");
    expect(lone(group.validationErrors)).toEqual([["description", true]]);
    expect((await api("GET", "/api/groups/uni-free-group")).status).toBe(404);
    const role = await refusal(await api("POST", "/api/security/roles", JSON.stringify({ name: "uni-free-role", description: `role ${half}`, permissions: [] })), 400, "VALIDATION_ERROR");
    expect(lone(role.validationErrors)).toEqual([["description", true]]);
    expect((await apiOk<Array<{ name: string }>>("GET", "/api/security/roles")).map((listed) => listed.name)).not.toContain("uni-free-role");
    const applicationsBefore = await apiOk<unknown[]>("GET", "/api/applications");
    const application = await refusal(await api("POST", "/api/applications", JSON.stringify({ name: `billing ${half}` })), 400, "VALIDATION_ERROR");
    expect(lone(application.validationErrors)).toEqual([["name", true]]);
    expect(await apiOk<unknown[]>("GET", "/api/applications")).toEqual(applicationsBefore);
  });

  it("a secret's or environment variable's value holding one is a 400 at (body), nothing stored, where the secret was encrypted with U+FFFD in its place and the variable read back so", async () => {
    for (const [path, what] of [["/api/secrets/uni_free_secret", "secret value"], ["/api/environment/uni_free_variable", "environment variable's value"]] as const) {
      const refused = await refusal(await api("PUT", path, JSON.stringify(`token-${half}`)), 400, "VALIDATION_ERROR");
      expect(lone(refused.validationErrors)).toEqual([["(body)", true]]);
      expect(refused.message.startsWith(`The ${what} must not hold a lone surrogate`)).toBe(true);
    }
    expect(await (await api("GET", "/api/secrets/uni_free_secret/exists")).text()).toBe("false");
    expect((await api("GET", "/api/environment/uni_free_variable")).status).toBe(404);
  });

  it("a webhook's name or checked header's value holding one is a 400 naming it, nothing saved, where the header's value was encrypted with U+FFFD in its place, a value no event's header could carry", async () => {
    await register({ name: "uni_free_hook", tasks: wait });
    const webhook = (name: string, secret: string) => JSON.stringify({ name, verifier: "HEADER_BASED", headers: { "X-Webhook-Secret": secret }, receiverWorkflowNamesToVersions: { uni_free_hook: 1 } });
    const before = await apiOk<unknown[]>("GET", "/api/metadata/webhook");
    for (const [body, field] of [[webhook(`orders-${half}`, "s3cret"), "name"], [webhook("uni-free-hook", `s3cret-${half}`), "headers.X-Webhook-Secret"]] as const) {
      const refused = await refusal(await api("POST", "/api/metadata/webhook", body), 400, "VALIDATION_ERROR");
      expect(lone(refused.validationErrors)).toEqual([[field, true]]);
    }
    expect(await apiOk<unknown[]>("GET", "/api/metadata/webhook")).toEqual(before);
  });

  it("an event handler's event or an EVENT task's literal sink holding one is a 400 naming it, nothing stored: no path (GET /api/event/{event}) can name that event", async () => {
    const complete = { action: "complete_task", complete_task: { workflowId: "${workflowId}", taskRefName: "approval" } };
    const handler = await refusal(await api("POST", "/api/event", JSON.stringify({ name: "uni_free_handler", event: `conductor:orders:${half}`, active: true, actions: [complete] })), 400, "VALIDATION_ERROR");
    expect(lone(handler.validationErrors)).toEqual([["event", true]]);
    expect((await api("GET", "/api/event/handler/uni_free_handler")).status).toBe(404);
    const definition = { name: "uni_free_sink", version: 1, schemaVersion: 2, ownerEmail: "test@example.com", tasks: [{ name: "publish", taskReferenceName: "publish", type: "EVENT", sink: `conductor:${half}` }] };
    const sink = await refusal(await postRaw("/api/metadata/workflow", JSON.stringify(definition)), 400, "VALIDATION_ERROR");
    expect(lone(sink.validationErrors)).toEqual([["tasks[0].sink", true]]);
    expect((await api("GET", "/api/metadata/workflow/uni_free_sink")).status).toBe(404);
  });
});
