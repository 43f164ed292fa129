import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WorkflowExecution } from "../../src/actors/workflow-execution";
import type { JsonObject } from "../../src/engine/model";
import { executionStub } from "../../src/worker/executions";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, getWorkflow, register, startWorkflow, waitFor, type WorkflowJson } from "./helpers";

const pull = (ref: string, inputParameters: JsonObject = {}): JsonObject => ({ name: ref, taskReferenceName: ref, type: "PULL_WORKFLOW_MESSAGES", inputParameters });
const wait = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });
const waitingIn = (ref: string) => (workflow: WorkflowJson) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS");
const statuses = (workflow: WorkflowJson) => workflow.tasks.map((task) => `${task.referenceTaskName}:${task.status}`);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Pushes `payload` to the workflow's queue; fails the test unless it is accepted, and answers the message id. */
async function push(workflowId: string, payload: unknown): Promise<string> {
  const response = await api("POST", `/api/workflow/${workflowId}/messages`, payload);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return text;
}

/** How many messages the execution's queue holds (0 when it never had one). */
async function queued(workflowId: string): Promise<number> {
  return runInDurableObject(executionStub(env, workflowId), (_instance, state) => {
    const table = state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'workflow_messages'`).one().n;
    return table === 0 ? 0 : state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM workflow_messages`).one().n;
  });
}

describe("the workflow message queue (POST /api/workflow/{workflowId}/messages, PULL_WORKFLOW_MESSAGES)", () => {
  it("a push wakes the waiting PULL_WORKFLOW_MESSAGES at once: it completes with messages [{id, workflowId, payload, receivedAt}] and count, and the workflow goes on", async () => {
    await register({ name: "wmq_basic", tasks: [pull("pull"), wait("after")], outputParameters: { text: "${pull.output.messages[0].payload.text}" } });
    const workflowId = await startWorkflow("wmq_basic");
    const waiting = await waitFor(workflowId, waitingIn("pull"));
    expect(waiting.tasks[0]).toMatchObject({ taskType: "PULL_WORKFLOW_MESSAGES", status: "IN_PROGRESS", outputData: {} });
    const before = Date.now();
    const messageId = await push(workflowId, { text: "hello" });
    expect(messageId).toMatch(UUID);
    // Taken in the push's own change: read right after its answer, the task has completed.
    const after = await getWorkflow(workflowId);
    expect(statuses(after)).toEqual(["pull:COMPLETED", "after:IN_PROGRESS"]);
    const output = after.tasks[0]!.outputData as { messages: Array<JsonObject & { receivedAt: string }>; count: number };
    expect(output).toEqual({ messages: [{ id: messageId, workflowId, payload: { text: "hello" }, receivedAt: expect.any(String) }], count: 1 });
    expect(Date.parse(output.messages[0]!.receivedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(output.messages[0]!.receivedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await queued(workflowId)).toBe(0);
    await apiOk("POST", `/api/tasks/${workflowId}/after/COMPLETED`, {});
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).output).toEqual({ text: "hello" });
  });

  it("an event loop: a DO_WHILE around a PULL_WORKFLOW_MESSAGES takes one message per iteration, in the order pushed", async () => {
    await register({
      name: "wmq_loop",
      tasks: [
        {
          name: "loop",
          taskReferenceName: "loop",
          type: "DO_WHILE",
          loopCondition: "$.loop['iteration'] < 2",
          loopOver: [
            pull("pull_message", { batchSize: 1 }),
            {
              name: "process",
              taskReferenceName: "process",
              type: "INLINE",
              inputParameters: { evaluatorType: "javascript", expression: "function e() { return { seen: $.messages[0].payload.n }; } e();", messages: "${pull_message.output.messages}" },
            },
          ],
        },
      ],
    });
    const workflowId = await startWorkflow("wmq_loop");
    await waitFor(workflowId, waitingIn("pull_message__1"));
    await push(workflowId, { n: 1 });
    await waitFor(workflowId, waitingIn("pull_message__2"));
    await push(workflowId, { n: 2 });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    const processed = done.tasks.filter((task) => task.referenceTaskName.startsWith("process")).map((task) => task.outputData["result"]);
    expect(processed).toEqual([{ seen: 1 }, { seen: 2 }]);
  });

  it("messages pushed before the task is reached are kept, in order, and taken when it starts; batchSize takes several, the rest wait for the next pull", async () => {
    await register({ name: "wmq_early", tasks: [wait("gate"), pull("first", { batchSize: 2 }), pull("second", { batchSize: "${workflow.input.size}" })], inputParameters: ["size"] });
    const workflowId = await startWorkflow("wmq_early", { size: 10 });
    await waitFor(workflowId, waitingIn("gate"));
    const ids = [];
    for (const n of [1, 2, 3]) ids.push(await push(workflowId, { n }));
    expect(await queued(workflowId)).toBe(3);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(statuses(done)).toEqual(["gate:COMPLETED", "first:COMPLETED", "second:COMPLETED"]);
    const taken = (index: number) => done.tasks[index]!.outputData as { messages: JsonObject[]; count: number };
    expect(taken(1).count).toBe(2);
    expect(taken(1).messages.map((message) => [message["id"], message["payload"]])).toEqual([[ids[0], { n: 1 }], [ids[1], { n: 2 }]]);
    expect(taken(2).count).toBe(1);
    expect(taken(2).messages.map((message) => message["payload"])).toEqual([{ n: 3 }]);
    expect(await queued(workflowId)).toBe(0);
  });

  it("two tasks waiting side by side (a fork's branches) each take their own messages: none is handed to both", async () => {
    await register({
      name: "wmq_fork",
      tasks: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[pull("left", { batchSize: 2 })], [pull("right", { batchSize: 2 })]] },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["left", "right"] },
      ],
    });
    const workflowId = await startWorkflow("wmq_fork");
    await waitFor(workflowId, (workflow) => waitingIn("left")(workflow) && waitingIn("right")(workflow));
    const ids = [await push(workflowId, { n: 1 }), await push(workflowId, { n: 2 })];
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    const taken = (ref: string) => (done.tasks.find((task) => task.referenceTaskName === ref)!.outputData["messages"] as JsonObject[]).map((message) => message["id"]);
    // The first push completes the first waiting task with one message (its batch is what there is); the next, the other.
    expect(taken("left")).toEqual([ids[0]]);
    expect(taken("right")).toEqual([ids[1]]);
    expect(await queued(workflowId)).toBe(0);
  });

  it("a loop of pulls that never wait (blocking false) runs on over later turns: 150 iterations complete", async () => {
    await register({
      name: "wmq_busy_loop",
      tasks: [{ name: "loop", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "$.loop['iteration'] < 150", loopOver: [pull("peek", { blocking: false })] }],
    });
    const workflowId = await startWorkflow("wmq_busy_loop");
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"], 30_000);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.filter((task) => task.taskType === "PULL_WORKFLOW_MESSAGES")).toHaveLength(150);
  }, 60_000);

  it("a paused workflow takes nothing: its task reached while paused takes the queued messages once it is resumed", async () => {
    await register({ name: "wmq_paused", tasks: [wait("gate"), pull("pull")] });
    const workflowId = await startWorkflow("wmq_paused");
    await waitFor(workflowId, waitingIn("gate"));
    const messageId = await push(workflowId, { early: true });
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const paused = await getWorkflow(workflowId);
    expect(paused.status).toBe("PAUSED");
    // Conductor's decider returns for a PAUSED workflow: the gate's completion schedules nothing after it.
    expect(paused.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["gate", "COMPLETED"]]);
    expect(await queued(workflowId)).toBe(1);
    await apiOk("PUT", `/api/workflow/${workflowId}/resume`);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks[1]!.outputData).toMatchObject({ messages: [{ id: messageId, payload: { early: true } }], count: 1 });
    expect(await queued(workflowId)).toBe(0);
  });

  it("blocking false completes at once with what there is, none included", async () => {
    await register({ name: "wmq_nonblocking", tasks: [pull("peek", { blocking: false, batchSize: 5 })] });
    const workflowId = await startWorkflow("wmq_nonblocking");
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks[0]!.outputData).toEqual({ messages: [], count: 0 });
  });

  it("refusals change nothing: unknown workflow 404, not RUNNING 409 (paused or ended), a body that is not an object 400, a caller without the right 403", async () => {
    await register({ name: "wmq_refusals", tasks: [wait("gate"), pull("pull")] });
    const unknown = await api("POST", `/api/workflow/${crypto.randomUUID()}/messages`, { a: 1 });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ status: 404, error: "NOT_FOUND" });

    const workflowId = await startWorkflow("wmq_refusals");
    await waitFor(workflowId, waitingIn("gate"));
    for (const body of [[1, 2], "text", 5, null]) {
      const refused = await api("POST", `/api/workflow/${workflowId}/messages`, JSON.stringify(body));
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(await refused.json()).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    }
    expect((await api("POST", `/api/workflow/${workflowId}/messages`)).status).toBe(400);
    expect(await queued(workflowId)).toBe(0);

    const reader = await createUser("wmq-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:wmq_refusals" }] });
    const denied = await call("POST", `/api/workflow/${workflowId}/messages`, orkes(reader.token), { a: 1 });
    expect(denied.status).toBe(403);
    expect(await queued(workflowId)).toBe(0);
    // The right to complete the workflow's tasks (a signal's) is enough.
    const executor = await createUser("wmq-executor", { directPermissions: [{ action: "TASK_EXECUTE", scope: "workflow:wmq_refusals" }] });
    expect((await call("POST", `/api/workflow/${workflowId}/messages`, orkes(executor.token), { by: "executor" })).status).toBe(200);
    expect(await queued(workflowId)).toBe(1);

    await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
    const paused = await api("POST", `/api/workflow/${workflowId}/messages`, { a: 1 });
    expect(paused.status).toBe(409);
    expect(await paused.json()).toMatchObject({ status: 409, error: "CONFLICT", message: expect.stringContaining("PAUSED") });
    expect(await queued(workflowId)).toBe(1);
    await apiOk("PUT", `/api/workflow/${workflowId}/resume`);

    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=stop`);
    const ended = await api("POST", `/api/workflow/${workflowId}/messages`, { a: 1 });
    expect(ended.status).toBe(409);
    // An ended workflow's queue is emptied: nothing can take what it held.
    expect(await queued(workflowId)).toBe(0);
    expect((await getWorkflow(workflowId)).status).toBe("TERMINATED");
  });

  it("a full queue (1000 messages) refuses the next push with 429 until a task takes some; a message too large for a task's output is a 413", async () => {
    await register({ name: "wmq_full", tasks: [wait("gate"), pull("pull", { batchSize: 100 })] });
    const workflowId = await startWorkflow("wmq_full");
    await waitFor(workflowId, waitingIn("gate"));
    // Straight into the object (the push the route makes), not a thousand requests through the router.
    await runInDurableObject(executionStub(env, workflowId), async (instance) => {
      const execution = instance as unknown as WorkflowExecution;
      for (let n = 0; n < 1000; n++) expect((await execution.pushMessage({ n })).ok).toBe(true);
    });
    const full = await api("POST", `/api/workflow/${workflowId}/messages`, { n: 1000 });
    expect(full.status).toBe(429);
    // As every 429 here (its body says retryable): when to try again.
    expect(full.headers.get("retry-after")).toBe("5");
    expect(await full.json()).toMatchObject({ status: 429, error: "RATE_LIMITED", retryable: true });
    expect(await queued(workflowId)).toBe(1000);
    const large = await api("POST", `/api/workflow/${workflowId}/messages`, { big: "x".repeat(768 * 1024 - 20) });
    expect(large.status).toBe(413);
    expect(await large.json()).toMatchObject({ status: 413, error: "PAYLOAD_TOO_LARGE" });
    expect(await queued(workflowId)).toBe(1000);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    const taken = done.tasks[1]!.outputData as { messages: JsonObject[]; count: number };
    expect(taken.count).toBe(100);
    expect(taken.messages.map((message) => (message["payload"] as JsonObject)["n"])).toEqual([...Array(100).keys()]);
    expect(await queued(workflowId)).toBe(0);
  });

  it("a message pushed before an eviction is delivered after it, once", async () => {
    await register({ name: "wmq_evict", tasks: [wait("gate"), pull("pull")] });
    const workflowId = await startWorkflow("wmq_evict");
    await waitFor(workflowId, waitingIn("gate"));
    const messageId = await push(workflowId, { kept: true });
    await abortAllDurableObjects();
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks[1]!.outputData).toEqual({ messages: [{ id: messageId, workflowId, payload: { kept: true }, receivedAt: expect.any(String) }], count: 1 });
    expect(await queued(workflowId)).toBe(0);
  });

  it("a task that cannot take its batch (its output, with what a worker reported for it, over MAX_PAYLOAD_BYTES) fails without it: the message stays queued for the next task", async () => {
    await register({ name: "wmq_overfull", tasks: [{ ...pull("first"), optional: true }, pull("second")] });
    const workflowId = await startWorkflow("wmq_overfull");
    const waiting = await waitFor(workflowId, waitingIn("first"));
    // A report for the waiting task leaves it waiting, with this output (700 KB of the 768 KB a task's output may hold).
    await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: waiting.tasks[0]!.taskId, status: "IN_PROGRESS", outputData: { blob: "b".repeat(700 * 1024) } });
    const messageId = await push(workflowId, { text: "m".repeat(100 * 1024) });
    const after = await waitFor(workflowId, (workflow) => workflow.tasks.length === 2 && workflow.tasks[1]!.status !== "SCHEDULED");
    expect(after.tasks[0]).toMatchObject({ referenceTaskName: "first", status: "COMPLETED_WITH_ERRORS", outputData: {} });
    expect(after.tasks[0]!.reasonForIncompletion).toMatch(/MAX_PAYLOAD_BYTES/);
    expect(after.tasks[1]).toMatchObject({ referenceTaskName: "second", status: "COMPLETED" });
    expect((after.tasks[1]!.outputData as { messages: JsonObject[] }).messages.map((message) => message["id"])).toEqual([messageId]);
    expect(await queued(workflowId)).toBe(0);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("registration checks the task's inputs: batchSize a whole number of at least 1, blocking a boolean (or expressions)", async () => {
    const refused = await api("POST", "/api/metadata/workflow?overwrite=true", {
      name: "wmq_invalid",
      version: 1,
      schemaVersion: 2,
      tasks: [pull("a", { batchSize: 0 }), pull("b", { blocking: "sometimes" })],
    });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { validationErrors: Array<{ path: string }> };
    expect(body.validationErrors.map((issue) => issue.path)).toEqual(["tasks[0].inputParameters.batchSize", "tasks[1].inputParameters.blocking"]);
    await register({ name: "wmq_valid", tasks: [pull("a", { batchSize: 500, blocking: "${workflow.input.blocking}" })] });
  });
});
