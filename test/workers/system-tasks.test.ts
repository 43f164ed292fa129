import { abortAllDurableObjects, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { LATEST_ALARM_MILLIS } from "../../src/worker/alarm-limit";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, waitForIndexRow, type WorkflowJson } from "./helpers";

const stubFor = (workflowId: string) => env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(workflowId));
const systemTask = (ref: string, type: string, inputParameters: JsonObject = {}, extra: JsonObject = {}): JsonObject => ({ name: ref, taskReferenceName: ref, type, inputParameters, ...extra });
const countTask = (ref: string, key: string) => httpTask(ref, { uri: target(`/count/${key}`), method: "GET" });

/** Registers a definition expecting a 400; returns its validationErrors, and checks that nothing was stored. */
async function refusedRegistration(definition: JsonObject): Promise<Array<{ path: string; message: string }>> {
  const response = await api("POST", "/api/metadata/workflow", { schemaVersion: 2, ownerEmail: "test@example.com", version: 1, ...definition });
  const body = (await response.json()) as { validationErrors?: Array<{ path: string; message: string }> };
  expect(response.status).toBe(400);
  expect((await api("GET", `/api/metadata/workflow/${String(definition["name"])}`)).status).toBe(404);
  return body.validationErrors ?? [];
}

/** Reports a task's result through the task update API, as a worker or a person would. */
function updateTask(workflowId: string, taskId: string, status: string, outputData: JsonObject = {}): Promise<string> {
  return apiOk<string>("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId, status, outputData });
}

describe("WAIT", () => {
  it("an invalid literal duration or until, or both at once, is a 400 naming the field, and the definition is not stored", async () => {
    const errors = await refusedRegistration({ name: "wait_refused", tasks: [systemTask("w", "WAIT", { duration: "10 weeks" }), systemTask("u", "WAIT", { until: "next tuesday" }), systemTask("b", "WAIT", { duration: "1m", until: "2030-01-01" })] });
    expect(errors.map((issue) => issue.path)).toEqual(["tasks[0].inputParameters.duration", "tasks[1].inputParameters.until", "tasks[2].inputParameters"]);
  });

  it("waits out its duration across an eviction of its object, completed by the object's alarm; the next task then runs", async () => {
    await register({ name: "wait_alarm", tasks: [systemTask("pause", "WAIT", { duration: "1s" }), countTask("after", "wait-alarm-after")] });
    const workflowId = await startWorkflow("wait_alarm");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    // Its callbackAfterSeconds shows the wait, as Conductor's WaitTaskMapper sets it.
    expect(waiting.tasks[0]).toMatchObject({ taskType: "WAIT", inputData: { duration: "1s" }, outputData: {}, callbackAfterSeconds: 1 });
    const stub = stubFor(workflowId);
    const alarmAt = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(alarmAt).toBe(Number(waiting.tasks[0]!["startTime"]) + 1000);
    await abortAllDurableObjects();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, alarmAt! - Date.now()) + 20));
    // Run the alarm now, on the object as it comes back (it may already have run by itself: then there is none left to run).
    await runDurableObjectAlarm(stubFor(workflowId));
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["pause:COMPLETED", "after:COMPLETED"]);
    expect(done.tasks[0]!.outputData).toEqual({});
    expect(done.tasks[0]!["callbackAfterSeconds"]).toBe(0);
    expect(Number(done.tasks[0]!["endTime"])).toBeGreaterThanOrEqual(alarmAt!);
    expect(await hits("wait-alarm-after")).toBe(1);
  });

  it("without duration or until, a synchronous execute answers while it waits, and POST /api/tasks completes it", async () => {
    await register({ name: "wait_manual", tasks: [systemTask("approval", "WAIT"), countTask("after", "wait-manual-after")] });
    // Far longer than the test may run: the answer has to come because the workflow waits, not because the wait ran out.
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/wait_manual/1?waitForSeconds=60", { input: {} });
    expect(run.status).toBe("RUNNING");
    expect(run.tasks.map((task) => `${task.referenceTaskName}:${task.taskType}:${task.status}`)).toEqual(["approval:WAIT:IN_PROGRESS"]);
    const taskId = run.tasks[0]!.taskId;
    // Conductor's WaitTaskMapper gives an untimed WAIT Integer.MAX_VALUE, "waiting forever"; the task route shows it too.
    expect(run.tasks[0]!["callbackAfterSeconds"]).toBe(2_147_483_647);
    expect((await apiOk<JsonObject>("GET", `/api/tasks/${taskId}`))["callbackAfterSeconds"]).toBe(2_147_483_647);
    expect(await updateTask(run.workflowId, taskId, "COMPLETED", { approved: true })).toBe(taskId);
    const done = await waitFor(run.workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[0]!.outputData).toEqual({ approved: true });
    // As Conductor's updateTask sets it from the result: 0.
    expect(done.tasks[0]!["callbackAfterSeconds"]).toBe(0);
    expect(await hits("wait-manual-after")).toBe(1);
  });

  it("a timed WAIT completed early through POST /api/tasks moves on at once, and its alarm then completes nothing", async () => {
    await register({ name: "wait_early", tasks: [systemTask("pause", "WAIT", { duration: "1h" }), systemTask("gate", "WAIT")] });
    const workflowId = await startWorkflow("wait_early");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await updateTask(workflowId, waiting.tasks[0]!.taskId, "COMPLETED", { early: true });
    const moved = await waitFor(workflowId, (workflow) => workflow.tasks[1]?.status === "IN_PROGRESS");
    expect(moved.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { early: true } });
    // The alarm armed for the hour may still be set (it is only ever moved earlier): running it changes nothing.
    await runDurableObjectAlarm(stubFor(workflowId));
    const after = await getWorkflow(workflowId);
    expect(after.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["pause:COMPLETED", "gate:IN_PROGRESS"]);
    expect(after.tasks[0]).toEqual(moved.tasks[0]);
  });

  it("an until in the year 3000 (later than an alarm can be set) still arms the object's alarm, at the latest it can hold", async () => {
    await register({ name: "wait_far", tasks: [systemTask("pause", "WAIT", { until: "3000-01-01 00:00 GMT" })] });
    const workflowId = await startWorkflow("wait_far");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    expect(waiting.status).toBe("RUNNING");
    // The alarm stands first as the safety of the search row's write; once that is written, it is run now.
    await waitForIndexRow(workflowId, "RUNNING");
    await runDurableObjectAlarm(stubFor(workflowId));
    // setAlarm refuses such a date: asked for the year 3000 itself, the object was left with no alarm at all.
    const alarmAt = await eventually(() => runInDurableObject(stubFor(workflowId), (_instance, state) => state.storage.getAlarm()), (at) => at === null || at > Date.now() + 86_400_000, "the safety alarm replaced");
    expect(alarmAt).toBe(LATEST_ALARM_MILLIS);
    expect((await getWorkflow(workflowId))["status"]).toBe("RUNNING");
  });

  it("an until from an expression that resolves to garbage fails the task FAILED_WITH_TERMINAL_ERROR, naming the value", async () => {
    await register({ name: "wait_garbage", tasks: [systemTask("pause", "WAIT", { until: "${workflow.input.at}" })] });
    const workflowId = await startWorkflow("wait_garbage", { at: "someday" });
    const failed = await waitFor(workflowId, ["FAILED", "COMPLETED"]);
    expect(failed.status).toBe("FAILED");
    expect(failed.tasks[0]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(failed.tasks[0]!["reasonForIncompletion"]).toContain('WAIT until "someday" is not a date-time');
    expect((await getWorkflow(workflowId))["reasonForIncompletion"]).toContain("someday");
  });
});

describe("HUMAN", () => {
  it("waits for a person: a synchronous execute answers while it waits; its result through the by-reference route goes on to the next task", async () => {
    const review = systemTask("review", "HUMAN", { __humanTaskDefinition: { displayName: "Review" }, order: "${workflow.input.order}" });
    await register({ name: "human_review", tasks: [review, countTask("after", "human-after")] });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/human_review/1?waitForSeconds=60", { input: { order: 7 } });
    expect(run.status).toBe("RUNNING");
    expect(run.tasks.map((task) => `${task.referenceTaskName}:${task.taskType}:${task.status}`)).toEqual(["review:HUMAN:IN_PROGRESS"]);
    expect(run.tasks[0]!.inputData).toEqual({ __humanTaskDefinition: { displayName: "Review" }, order: 7 });
    expect(await hits("human-after")).toBe(0);
    const response = await api("POST", `/api/tasks/${run.workflowId}/review/COMPLETED`, { approved: true });
    expect(response.status).toBe(200);
    const done = await waitFor(run.workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["review:COMPLETED", "after:COMPLETED"]);
    expect(done.tasks[0]!.outputData).toEqual({ approved: true });
    expect(await hits("human-after")).toBe(1);
  });
});

describe("SET_VARIABLE", () => {
  it("one naming a secret is a 400 at registration, and the definition is not stored", async () => {
    const errors = await refusedRegistration({ name: "set_secret", tasks: [systemTask("set", "SET_VARIABLE", { token: "${workflow.secrets.api_token}" })] });
    expect(errors).toEqual([{ path: "tasks[0].inputParameters.token", message: expect.stringContaining("must not use secrets (api_token)") }]);
  });

  it("its variables reach the next task's input and GET /api/workflow/{id}; the task completes at once with an empty output", async () => {
    await register({
      name: "set_vars",
      variables: { owner: "ops", stage: "new" },
      tasks: [
        systemTask("set", "SET_VARIABLE", { stage: "${workflow.input.stage}", attempts: 2 }),
        httpTask("after", { uri: target("/count/set-vars-after?stage=${workflow.variables.stage}&owner=${workflow.variables.owner}"), method: "GET" }),
      ],
      outputParameters: { stage: "${workflow.variables.stage}" },
    });
    const workflowId = await startWorkflow("set_vars", { stage: "shipped" });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done["variables"]).toEqual({ owner: "ops", stage: "shipped", attempts: 2 });
    expect(done.output).toEqual({ stage: "shipped" });
    expect(done.tasks[0]).toMatchObject({ taskType: "SET_VARIABLE", status: "COMPLETED", inputData: { stage: "shipped", attempts: 2 }, outputData: {} });
    expect(done.tasks[1]!.inputData["uri"]).toBe(target("/count/set-vars-after?stage=shipped&owner=ops"));
  });

  it("a variable whose name holds $ registers and is read after a dot, as Conductor's JsonPath reads ${workflow.variables.$ref}", async () => {
    await register({
      name: "set_vars_dollar",
      tasks: [systemTask("set", "SET_VARIABLE", { $ref: "#/defs/order", "total$": 7 })],
      outputParameters: { ref: "${workflow.variables.$ref}", total: "${workflow.variables.total$}", text: "at ${workflow.variables.$ref}" },
    });
    const done = await waitFor(await startWorkflow("set_vars_dollar"), ["COMPLETED", "FAILED"]);
    expect(done).toMatchObject({ status: "COMPLETED", variables: { $ref: "#/defs/order", total$: 7 }, output: { ref: "#/defs/order", total: 7, text: "at #/defs/order" } });
  });

  it("a variable whose name holds @, # or letters beyond ASCII registers and is read after a dot, as Conductor's JsonPath reads it", async () => {
    await register({
      name: "set_vars_letters",
      tasks: [systemTask("set", "SET_VARIABLE", { größe: 42, "@type": "Order", "#text": "note", 名前: "太郎" })],
      outputParameters: { size: "${workflow.variables.größe}", type: "${workflow.variables.@type}", text: "${workflow.variables.#text}", name: "${workflow.variables.名前}" },
    });
    const done = await waitFor(await startWorkflow("set_vars_letters"), ["COMPLETED", "FAILED"]);
    expect(done).toMatchObject({ status: "COMPLETED", output: { size: 42, type: "Order", text: "note", name: "太郎" } });
  });
});

describe("SET_CORRELATION_ID", () => {
  it("sets the running workflow's correlation id, which the Workflow JSON, the correlated lookup and later tasks' correlationId show", async () => {
    await register({
      name: "set_corr",
      tasks: [
        { name: "gate", taskReferenceName: "gate", type: "WAIT", inputParameters: {} },
        systemTask("mark", "SET_CORRELATION_ID", { correlationId: "order-${workflow.input.n}" }),
        { name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} },
      ],
    });
    const workflowId = await startWorkflow("set_corr", { n: 7 }, "?correlationId=first");
    await eventually(() => apiOk<WorkflowJson[]>("GET", "/api/workflow/set_corr/correlated/first"), (list) => list.length === 1, "the workflow by the id it started with");
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[2]?.status === "IN_PROGRESS");
    expect(waiting).toMatchObject({ correlationId: "order-7" });
    expect(waiting.tasks[1]).toMatchObject({ taskType: "SET_CORRELATION_ID", status: "COMPLETED", outputData: { correlationId: "order-7" } });
    expect(waiting.tasks[2]).toMatchObject({ correlationId: "order-7" });
    // The search row follows while the workflow runs: found by its new id, not by the one it started with.
    const found = await eventually(() => apiOk<WorkflowJson[]>("GET", "/api/workflow/set_corr/correlated/order-7"), (list) => list.length === 1, "the workflow by its new correlation id");
    expect(found[0]!.workflowId).toBe(workflowId);
    expect(await apiOk<WorkflowJson[]>("GET", "/api/workflow/set_corr/correlated/first")).toEqual([]);
  });
});

describe("TERMINATE", () => {
  it("a missing or unknown literal terminationStatus is a 400 naming it, and the definition is not stored", async () => {
    const errors = await refusedRegistration({ name: "terminate_refused", tasks: [systemTask("a", "TERMINATE", {}), systemTask("b", "TERMINATE", { terminationStatus: "DONE" })] });
    expect(errors.map((issue) => issue.path)).toEqual(["tasks[0].inputParameters.terminationStatus", "tasks[1].inputParameters.terminationStatus"]);
  });

  it("inside a synchronous execute, the answer is the ended workflow: COMPLETED with workflowOutput, and the tasks after it never run", async () => {
    await register({
      name: "terminate_execute",
      tasks: [systemTask("stop", "TERMINATE", { terminationStatus: "COMPLETED", workflowOutput: { answer: "${workflow.input.x}" } }), countTask("never", "terminate-execute-never")],
      outputParameters: { ignored: true },
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/terminate_execute/1?waitForSeconds=60", { input: { x: 42 } });
    expect(run).toMatchObject({ status: "COMPLETED", output: { answer: 42 } });
    expect(run.tasks.map((task) => `${task.referenceTaskName}:${task.taskType}:${task.status}`)).toEqual(["stop:TERMINATE:COMPLETED"]);
    expect(run.tasks[0]!.outputData).toEqual({ answer: 42 });
    expect(await hits("terminate-execute-never")).toBe(0);
    await waitForIndexRow(run.workflowId, "COMPLETED");
  });

  it("FAILED in a child fails its parent's SUB_WORKFLOW task with the child's reason, and the search index sees both ends", async () => {
    await register({ name: "terminate_child", tasks: [systemTask("stop", "TERMINATE", { terminationStatus: "FAILED", terminationReason: "out of stock", workflowOutput: { code: 42 } })] });
    await register({ name: "terminate_parent", tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "terminate_child", version: 1 } } }] });
    const parentId = await startWorkflow("terminate_parent");
    const parent = await waitFor(parentId, ["COMPLETED", "FAILED", "TERMINATED"]);
    const childId = String(parent.tasks[0]!["subWorkflowId"]);
    const child = await getWorkflow(childId);
    expect(child).toMatchObject({ status: "FAILED", reasonForIncompletion: "out of stock", output: { code: 42 } });
    expect(parent.status).toBe("FAILED");
    expect(parent.tasks[0]).toMatchObject({ status: "FAILED", outputData: { error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: childId, errorCode: "TASK_ERROR", errorMessage: "out of stock" } } });
    expect(String(parent["reasonForIncompletion"])).toContain("out of stock");
    await waitForIndexRow(childId, "FAILED");
    await waitForIndexRow(parentId, "FAILED");
  });

  it("TERMINATED ends the workflow TERMINATED with its reason; a synchronous execute answers it", async () => {
    await register({ name: "terminate_terminated", tasks: [systemTask("stop", "TERMINATE", { terminationStatus: "TERMINATED", terminationReason: "cancelled by rule" })] });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/terminate_terminated/1?waitForSeconds=60", { input: {} });
    expect(run).toMatchObject({ status: "TERMINATED", reasonForIncompletion: "cancelled by rule", output: {} });
  });
});
