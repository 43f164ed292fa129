import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { executionStub } from "../../src/worker/executions";
import { createExecution } from "../../src/engine/decider";
import { api, apiOk, getWorkflow, register, waitFor, type WorkflowJson } from "./helpers";

const wait = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });
const startWorkflow = (ref: string, request: JsonObject | string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "START_WORKFLOW", inputParameters: { startWorkflow: request } });

/** An HTTP task `legacy` sending `request` (a GET unless it says). */
const legacyHttp = (request: JsonObject): JsonObject => ({ name: "legacy", taskReferenceName: "legacy", type: "HTTP", inputParameters: { http_request: { method: "GET", ...request } } });

/** Definition `name`, whose SWITCH runs `legacy` when the input's `route` is "legacy" and waits otherwise. */
const routedChild = (name: string, legacy: JsonObject): JsonObject => ({
  name,
  version: 1,
  schemaVersion: 2,
  tasks: [{ name: "route", taskReferenceName: "route", type: "SWITCH", evaluatorType: "value-param", expression: "route", inputParameters: { route: "${workflow.input.route}" }, decisionCases: { legacy: [legacy] }, defaultCase: [wait("hold")] }],
});

describe("START_WORKFLOW", () => {
  it("starts another workflow on its own, with the starter's correlation id, and goes on at once: neither waits for nor ends the other", async () => {
    await register({ name: "sw_started", tasks: [wait("hold")], outputParameters: { got: "${workflow.input.order}" } });
    await register({ name: "sw_starter", tasks: [startWorkflow("kick", { name: "sw_started", version: 1, input: { order: "${workflow.input.order}" } }), { name: "after", taskReferenceName: "after", type: "NOOP" }], outputParameters: { started: "${kick.output.workflowId}" } });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_starter/1", { input: { order: 7 }, correlationId: "corr-sw" });
    expect(run.status, String(run.reasonForIncompletion)).toBe("COMPLETED");
    expect(run.tasks.map((task) => `${task.referenceTaskName}:${String(task["taskType"])}:${task.status}`)).toEqual(["kick:START_WORKFLOW:COMPLETED", "after:NOOP:COMPLETED"]);
    const startedId = String(run.output["started"]);
    const started = await getWorkflow(startedId);
    // Not a child: no parent, and it runs on after its starter completed.
    expect(started).toMatchObject({ workflowName: "sw_started", status: "RUNNING", input: { order: 7 }, correlationId: "corr-sw" });
    expect(started).not.toHaveProperty("parentWorkflowId");
    await apiOk("POST", `/api/tasks/${startedId}/hold/COMPLETED`, {});
    expect((await waitFor(startedId, ["COMPLETED", "FAILED"])).output).toEqual({ got: 7 });
  });

  it("starts with a correlationId given as a number as its text, as Conductor's StartWorkflow reads its request (Jackson); an object fails the task", async () => {
    await register({ name: "sw_corr_started", tasks: [wait("hold")] });
    await register({
      name: "sw_corr_starter",
      tasks: [startWorkflow("kick", { name: "sw_corr_started", correlationId: "${workflow.input.order}" }), startWorkflow("literal", { name: "sw_corr_started", correlationId: 1234 })],
      outputParameters: { started: "${kick.output.workflowId}", literal: "${literal.output.workflowId}" },
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_corr_starter/1", { input: { order: 77 }, correlationId: "parent-corr" });
    expect(run.status, String(run.reasonForIncompletion)).toBe("COMPLETED");
    // Not dropped for the starter's: the order number's text.
    expect(await getWorkflow(String(run.output["started"]))).toMatchObject({ workflowName: "sw_corr_started", correlationId: "77" });
    expect(await getWorkflow(String(run.output["literal"]))).toMatchObject({ workflowName: "sw_corr_started", correlationId: "1234" });
    const refused = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_corr_starter/1", { input: { order: { id: 77 } }, correlationId: "parent-corr" });
    expect(refused.status).toBe("FAILED");
    expect(refused.tasks[0]).toMatchObject({ referenceTaskName: "kick", status: "FAILED" });
    expect(String(refused.tasks[0]!["reasonForIncompletion"])).toContain("startWorkflow.correlationId resolved to an object");
  });

  it("starts the definition its workflowDef writes (Conductor's StartWorkflowSpec), its expressions its own, or one an expression gives, checked as it runs", async () => {
    const dynamic = { name: "sw_dynamic_wf", version: 1, schemaVersion: 2, tasks: [wait("hold")], outputParameters: { got: "${workflow.input.order}" } };
    await register({
      name: "sw_written_starter",
      tasks: [startWorkflow("kick", { name: "sw_dynamic_wf", workflowDef: dynamic, input: { order: "${workflow.input.order}" } })],
      outputParameters: { started: "${kick.output.workflowId}" },
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_written_starter/1", { input: { order: 9 }, correlationId: "corr-def" });
    expect(run.status, String(run.reasonForIncompletion)).toBe("COMPLETED");
    const startedId = String(run.output["started"]);
    expect(await getWorkflow(startedId)).toMatchObject({ workflowName: "sw_dynamic_wf", status: "RUNNING", input: { order: 9 }, correlationId: "corr-def" });
    // Its own `${workflow.input.order}` was not resolved by the starter: it reads its own input.
    await apiOk("POST", `/api/tasks/${startedId}/hold/COMPLETED`, {});
    expect((await waitFor(startedId, ["COMPLETED", "FAILED"])).output).toEqual({ got: 9 });
    // Not registered by running.
    expect((await api("GET", "/api/metadata/workflow/sw_dynamic_wf")).status).toBe(404);

    // Given by an expression (a planner's output), without a name of its own; one that does not check fails the task for good.
    await register({ name: "sw_planned_starter", tasks: [startWorkflow("kick", { workflowDef: "${workflow.input.plan}", input: {} })] });
    const planned = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_planned_starter/1", { input: { plan: dynamic } });
    expect(planned.status, String(planned.reasonForIncompletion)).toBe("COMPLETED");
    expect(await getWorkflow(String(planned.tasks[0]!.outputData["workflowId"]))).toMatchObject({ workflowName: "sw_dynamic_wf", status: "RUNNING" });
    const broken = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_planned_starter/1", { input: { plan: { ...dynamic, tasks: [{ name: "x", taskReferenceName: "x", type: "HTTP", inputParameters: {} }] } } });
    expect(broken.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringMatching(/^Workflow sw_dynamic_wf could not start: .*startWorkflow\.workflowDef\.tasks\[0\]\.inputParameters/) });
    // A written one is checked at registration, with paths inside it.
    const refused = await api("POST", "/api/metadata/workflow", { name: "sw_bad_written", schemaVersion: 2, tasks: [startWorkflow("kick", { workflowDef: { name: "x", tasks: [] } })] });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toContain("tasks[0].inputParameters.startWorkflow.workflowDef");
    expect((await api("GET", "/api/metadata/workflow/sw_bad_written")).status).toBe(404);
    // Its scripts and jq filters too, as registered on its own (a SUB_WORKFLOW's inline child's are).
    const inline = { name: "calc", taskReferenceName: "calc", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "function ( { return 1 }" } };
    const jq = { name: "shape", taskReferenceName: "shape", type: "JSON_JQ_TRANSFORM", inputParameters: { queryExpression: "[.[" } };
    const unparsed = await api("POST", "/api/metadata/workflow", { name: "sw_bad_script", schemaVersion: 2, tasks: [startWorkflow("kick", { workflowDef: { name: "sw_script_child", schemaVersion: 2, tasks: [inline, jq] } })] });
    expect(unparsed.status).toBe(400);
    expect(((await unparsed.json()) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors).toEqual([
      { path: "tasks[0].inputParameters.startWorkflow.workflowDef.tasks[0].inputParameters.expression", message: expect.stringMatching(/^the script does not parse as JavaScript: SyntaxError: /) },
      { path: "tasks[0].inputParameters.startWorkflow.workflowDef.tasks[1].inputParameters.queryExpression", message: expect.stringMatching(/^the jq filter does not compile: /) },
    ]);
    expect((await api("GET", "/api/metadata/workflow/sw_bad_script")).status).toBe(404);
  });

  it("starts a written definition whose jq filter registered before jq 1.6's compile errors were checked (a misspelt function in a branch not taken), as it did then", async () => {
    const child = (filter: string): JsonObject => ({ name: "sw_jq_child", version: 1, schemaVersion: 2, tasks: [{ name: "shape", taskReferenceName: "shape", type: "JSON_JQ_TRANSFORM", inputParameters: { queryExpression: filter, n: 1 } }] });
    await register({ name: "sw_jq_starter", tasks: [startWorkflow("kick", { name: "sw_jq_child", workflowDef: child(".n"), input: {} })] });
    await env.DB.prepare(`UPDATE workflow_defs SET definition = json_set(definition, '$.tasks[0].inputParameters.startWorkflow.workflowDef.tasks[0].inputParameters.queryExpression', ?1) WHERE name = 'sw_jq_starter'`)
      .bind("if .never then nosuchfn else .n end")
      .run();
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_jq_starter/1", { input: {} });
    expect(run.status, String(run.reasonForIncompletion ?? run.tasks[0]?.["reasonForIncompletion"])).toBe("COMPLETED");
    expect(await getWorkflow(String(run.tasks[0]!.outputData["workflowId"]))).toMatchObject({ workflowName: "sw_jq_child", status: "COMPLETED", tasks: [{ outputData: { result: 1 } }] });
    // Registered now, it is refused.
    const registered = await api("POST", "/api/metadata/workflow", { name: "sw_jq_again", schemaVersion: 2, tasks: [startWorkflow("kick", { name: "sw_jq_child", workflowDef: child("if .never then nosuchfn else .n end") })] });
    expect(registered.status).toBe(400);
    expect(JSON.stringify(await registered.json())).toContain("nosuchfn/0 is not defined");
  });

  /**
   * Writes `value` at `field` of the legacy branch's HTTP request in starter `starter`'s written child (as a definition
   * stored before a registration-only rule), then runs the starter: it completes, its child `childName` running.
   */
  async function expectStartsAsStoredBefore(starter: string, field: string, value: string, childName: string): Promise<void> {
    const path = `$.tasks[0].inputParameters.startWorkflow.workflowDef.tasks[0].decisionCases.legacy[0].inputParameters.http_request.${field}`;
    await env.DB.prepare(`UPDATE workflow_defs SET definition = json_set(definition, ?1, ?2) WHERE name = ?3`).bind(path, value, starter).run();
    const stored = await env.DB.prepare(`SELECT json_extract(definition, ?1) AS value FROM workflow_defs WHERE name = ?2`).bind(path, starter).first<{ value: string }>();
    expect(stored?.value).toBe(value);
    const run = await apiOk<WorkflowJson>("POST", `/api/workflow/execute/${starter}/1`, { input: {} });
    expect(run.status, String(run.reasonForIncompletion ?? run.tasks[0]?.["reasonForIncompletion"])).toBe("COMPLETED");
    expect(await getWorkflow(String(run.tasks[0]!.outputData["workflowId"]))).toMatchObject({ workflowName: childName, status: "RUNNING" });
  }

  it("starts a written definition registered before a registration-only rule it now breaks (an HTTP uri of scheme localhost in a branch not taken), as it did then", async () => {
    const child = (uri: string): JsonObject => routedChild("sw_lint_child", legacyHttp({ uri }));
    await register({ name: "sw_lint_starter", tasks: [startWorkflow("kick", { name: "sw_lint_child", workflowDef: child("https://legacy.example.com/orders"), input: { route: "new" } })] });
    // Stored as registered before HTTP uris were checked for their scheme (194f7cb): the uri a typo, in a branch never taken.
    await expectStartsAsStoredBefore("sw_lint_starter", "uri", "localhost:8080/orders", "sw_lint_child");

    // Registered now, or given in a start request or by an expression, it is still refused.
    const registered = await api("POST", "/api/metadata/workflow", { name: "sw_lint_again", schemaVersion: 2, tasks: [startWorkflow("kick", { name: "sw_lint_child", workflowDef: child("localhost:8080/orders") })] });
    expect(registered.status).toBe(400);
    expect(JSON.stringify(await registered.json())).toContain("startWorkflow.workflowDef.tasks[0].decisionCases.legacy[0].inputParameters.http_request.uri");
    expect((await api("POST", "/api/workflow", { name: "sw_lint_child", input: {}, workflowDef: child("localhost:8080/orders") })).status).toBe(400);
    await register({ name: "sw_lint_planned", tasks: [startWorkflow("kick", { workflowDef: "${workflow.input.plan}", input: {} })] });
    const planned = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_lint_planned/1", { input: { plan: child("localhost:8080/orders") } });
    expect(planned.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("must be an http or https URL") });
  });

  it("starts a written definition registered before the rule on literal header values (an HTTP header holding 日本, in a branch not taken), as it did then; registered now it is refused", async () => {
    const child = (value: string): JsonObject => routedChild("sw_header_child", legacyHttp({ uri: "https://legacy.example.com/orders", headers: { "X-Team": value } }));
    await register({ name: "sw_header_starter", tasks: [startWorkflow("kick", { name: "sw_header_child", workflowDef: child("team"), input: { route: "new" } })] });
    // Stored as registered before literal header values were checked for what a header can carry.
    await expectStartsAsStoredBefore("sw_header_starter", "headers.X-Team", "日本", "sw_header_child");
    const registered = await api("POST", "/api/metadata/workflow", { name: "sw_header_again", schemaVersion: 2, tasks: [startWorkflow("kick", { name: "sw_header_child", workflowDef: child("日本") })] });
    expect(registered.status).toBe(400);
    expect(JSON.stringify(await registered.json())).toContain("decisionCases.legacy[0].inputParameters.http_request.headers.X-Team");
  });

  it("starts a written definition registered before a registration-only rule from a START_WORKFLOW in a FORK branch in a DO_WHILE, at every iteration", async () => {
    const child = (uri: string): JsonObject => routedChild("sw_lint_nested_child", legacyHttp({ uri }));
    const loop = (uri: string): JsonObject => ({
      name: "loop",
      taskReferenceName: "loop",
      type: "DO_WHILE",
      loopCondition: "if ($.loop['iteration'] < 2) { true; } else { false; }",
      inputParameters: {},
      loopOver: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[startWorkflow("kick", { name: "sw_lint_nested_child", workflowDef: child(uri), input: { route: "new" } })], [{ name: "n", taskReferenceName: "n", type: "NOOP" }]] },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["kick", "n"] },
      ],
    });
    await register({ name: "sw_lint_nested", tasks: [loop("https://legacy.example.com/orders")] });
    // Stored as registered before HTTP uris were checked for their scheme (194f7cb).
    await env.DB.prepare(`UPDATE workflow_defs SET definition = json_set(definition, '$.tasks[0].loopOver[0].forkTasks[0][0].inputParameters.startWorkflow.workflowDef.tasks[0].decisionCases.legacy[0].inputParameters.http_request.uri', ?1) WHERE name = 'sw_lint_nested'`)
      .bind("localhost:8080/orders")
      .run();
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_lint_nested/1", { input: {} });
    expect(run.status, String(run.reasonForIncompletion)).toBe("COMPLETED");
    const kicks = run.tasks.filter((task) => task.referenceTaskName.startsWith("kick"));
    expect(kicks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["kick__1:COMPLETED", "kick__2:COMPLETED"]);
    for (const kick of kicks) expect(await getWorkflow(String(kick.outputData["workflowId"]))).toMatchObject({ workflowName: "sw_lint_nested_child", status: "RUNNING" });
    // Registered now, it is refused at the uri's path, however deep.
    const registered = await api("POST", "/api/metadata/workflow", { name: "sw_lint_nested_again", schemaVersion: 2, tasks: [loop("localhost:8080/orders")] });
    expect(registered.status).toBe(400);
    expect(JSON.stringify(await registered.json())).toContain("tasks[0].loopOver[0].forkTasks[0][0].inputParameters.startWorkflow.workflowDef.tasks[0].decisionCases.legacy[0].inputParameters.http_request.uri");
  });

  it("starts one workflow for starts carrying the same idempotencyKey (RETURN_EXISTING unless told), with the priority asked for", async () => {
    await register({ name: "sw_keyed", tasks: [wait("hold")] });
    const keyed = (strategy?: string) => ({ name: "sw_keyed", input: {}, idempotencyKey: "${workflow.input.order}", priority: "${workflow.input.priority}", ...(strategy === undefined ? {} : { idempotencyStrategy: strategy }) });
    await register({ name: "sw_keyed_starter", tasks: [startWorkflow("kick", keyed())], outputParameters: { started: "${kick.output.workflowId}" } });
    await register({ name: "sw_keyed_failing", tasks: [startWorkflow("kick", keyed("FAIL"))] });
    const run = (input: JsonObject, name = "sw_keyed_starter") => apiOk<WorkflowJson>("POST", `/api/workflow/execute/${name}/1`, { input });
    const first = await run({ order: 41, priority: 7 });
    expect(first.status, String(first.reasonForIncompletion)).toBe("COMPLETED");
    const again = await run({ order: 41, priority: 7 });
    expect(again.output["started"]).toBe(first.output["started"]);
    const started = await getWorkflow(String(first.output["started"]));
    expect(started).toMatchObject({ priority: 7, status: "RUNNING" });
    expect((await run({ order: 42, priority: 7 })).output["started"]).not.toBe(first.output["started"]);
    // FAIL: the key is taken, the start is refused and the task fails saying so.
    const refused = await run({ order: 41, priority: 7 }, "sw_keyed_failing");
    expect(refused.status).toBe("FAILED");
    expect(refused.tasks[0]!["reasonForIncompletion"]).toMatch(/could not start: .*idempotency key 41/);
  });

  it("fails (retryable, as Conductor's) when the workflow cannot start, saying why", async () => {
    await register({ name: "sw_unknown", tasks: [startWorkflow("kick", { name: "sw_no_such_workflow" })] });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_unknown/1", { input: {} });
    expect(run.status).toBe("FAILED");
    expect(run.tasks[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringMatching(/^Workflow sw_no_such_workflow could not start: /), outputData: {} });
  });

  it("a start repeated by the same task (its dispatch sent again after an eviction) finds the workflow it started", async () => {
    await register({ name: "sw_again", tasks: [wait("hold")] });
    const definition = JSON.parse(JSON.stringify((await apiOk<JsonObject>("GET", "/api/metadata/workflow/sw_again")))) as Parameters<typeof createExecution>[0]["definition"];
    const workflowId = crypto.randomUUID();
    const params = { workflowId, definition, input: {}, startedByTask: `${crypto.randomUUID()}/task-1` };
    const stub = executionStub(env, workflowId);
    expect(await stub.start(params)).toEqual({ ok: true, value: workflowId });
    expect(await stub.start(params)).toEqual({ ok: true, value: workflowId });
    // Another task (or anyone else) asking for that id is refused.
    expect(await stub.start({ ...params, startedByTask: `${crypto.randomUUID()}/task-2` })).toMatchObject({ ok: false });
    expect((await getWorkflow(workflowId)).tasks).toHaveLength(1);
  });
});
