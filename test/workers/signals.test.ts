import { describe, expect, it } from "vitest";
import { WorkflowExecution } from "../../src/actors/workflow-execution";
import type { JsonObject } from "../../src/engine/model";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, type WorkflowJson } from "./helpers";

const wait = (ref: string, inputParameters: JsonObject = {}): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters });
const countTask = (ref: string, key: string) => httpTask(ref, { uri: target(`/count/${key}`), method: "GET" });
const subTask = (ref: string, child: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", inputParameters: {}, subWorkflowParam: { name: child, version: 1 } });
const statuses = (workflow: WorkflowJson) => workflow.tasks.map((task) => `${task.referenceTaskName}:${task.status}`);
const waitingIn = (ref: string) => (workflow: WorkflowJson) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS");

/** A parent whose SUB_WORKFLOW runs a child that waits twice (`first`, then `second`, whose input names the order). */
async function parentWithWaitingChild(prefix: string): Promise<{ parentId: string; childId: string }> {
  await register({ name: `${prefix}_child`, tasks: [wait("first"), wait("second", { order: "${workflow.input.order}" })], inputParameters: ["order"] });
  await register({ name: `${prefix}_parent`, tasks: [{ ...subTask("sub", `${prefix}_child`), inputParameters: { order: "${workflow.input.order}" } }] });
  const parentId = await startWorkflow(`${prefix}_parent`, { order: 42 });
  const parent = await waitFor(parentId, (workflow) => typeof workflow.tasks[0]?.["subWorkflowId"] === "string");
  const childId = String(parent.tasks[0]!["subWorkflowId"]);
  await waitFor(childId, waitingIn("first"));
  return { parentId, childId };
}

describe("signals (POST /api/tasks/{workflowId}/{status}/signal)", () => {
  it("complete the workflow's waiting WAIT with the body as its output; the workflow goes on (asynchronous: 200, no body)", async () => {
    await register({ name: "signal_async", tasks: [wait("approval"), countTask("after", "signal-async-after")] });
    const workflowId = await startWorkflow("signal_async");
    await waitFor(workflowId, waitingIn("approval"));
    const response = await api("POST", `/api/tasks/${workflowId}/COMPLETED/signal`, { approved: true });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(statuses(done)).toEqual(["approval:COMPLETED", "after:COMPLETED"]);
    expect(done.tasks[0]!.outputData).toEqual({ approved: true });
    expect(await hits("signal-async-after")).toBe(1);
  });

  it("resume Orkes' YIELD as they resume a WAIT, in task order with WAITs; the synchronous execute answers when one is reached; a HUMAN is passed over", async () => {
    const yieldTask = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "YIELD", inputParameters: { stage: ref } });
    await register({
      name: "signal_yield",
      tasks: [
        { type: "FORK_JOIN", name: "both", taskReferenceName: "both", forkTasks: [[{ name: "review", taskReferenceName: "review", type: "HUMAN" }], [yieldTask("paused")]] },
        { type: "JOIN", name: "joined", taskReferenceName: "joined", joinOn: ["paused"] },
        yieldTask("again"),
        countTask("after", "signal-yield-after"),
      ],
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/signal_yield/1?waitForSeconds=5", { input: {} });
    expect(run.status).toBe("RUNNING");
    expect(run.tasks.find((task) => task.referenceTaskName === "paused")).toMatchObject({ taskType: "YIELD", status: "IN_PROGRESS", inputData: { stage: "paused" } });
    // The HUMAN comes first in task order, but a signal never takes a HUMAN.
    const first = await apiOk<WorkflowJson>("POST", `/api/tasks/${run.workflowId}/COMPLETED/signal/sync`, { go: 1 });
    expect(statuses(first).sort()).toEqual(["again:IN_PROGRESS", "both:COMPLETED", "joined:COMPLETED", "paused:COMPLETED", "review:IN_PROGRESS"]);
    expect(first.tasks.find((task) => task.referenceTaskName === "paused")!.outputData).toEqual({ go: 1 });
    expect((await api("POST", `/api/tasks/${run.workflowId}/COMPLETED/signal`, { go: 2 })).status).toBe(200);
    await waitFor(run.workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "after" && task.status === "COMPLETED"));
    expect(await hits("signal-yield-after")).toBe(1);
    // Only the HUMAN is left, and nothing waits for a signal: as Conductor's, the signal does nothing, and says nothing.
    const before = await getWorkflow(run.workflowId);
    expect((await api("POST", `/api/tasks/${run.workflowId}/COMPLETED/signal`, {})).status).toBe(200);
    expect(await getWorkflow(run.workflowId)).toEqual(before);
  });

  it("synchronous: answers with the workflow once it waits again (TARGET_WORKFLOW by default), then once it has ended; FAILED fails it", async () => {
    await register({ name: "signal_sync", tasks: [wait("one"), countTask("between", "signal-sync-between"), wait("two")] });
    const workflowId = await startWorkflow("signal_sync");
    await waitFor(workflowId, waitingIn("one"));
    const first = await apiOk<WorkflowJson & { responseType: string; targetWorkflowId: string; targetWorkflowStatus: string }>("POST", `/api/tasks/${workflowId}/COMPLETED/signal/sync`, { step: 1 });
    expect(first).toMatchObject({ responseType: "TARGET_WORKFLOW", targetWorkflowId: workflowId, targetWorkflowStatus: "RUNNING", workflowId, status: "RUNNING" });
    // It waited past the HTTP call for the next WAIT.
    expect(statuses(first)).toEqual(["one:COMPLETED", "between:COMPLETED", "two:IN_PROGRESS"]);
    const second = await apiOk<WorkflowJson & { targetWorkflowStatus: string }>("POST", `/api/tasks/${workflowId}/FAILED/signal/sync?returnStrategy=TARGET_WORKFLOW`, { why: "rejected" });
    expect(second).toMatchObject({ targetWorkflowStatus: "FAILED", status: "FAILED" });
    expect(second.tasks[2]).toMatchObject({ status: "FAILED", outputData: { why: "rejected" } });
    expect(await hits("signal-sync-between")).toBe(1);
  });

  it("synchronous: says signalTimeout (Conductor's SignalResponse flag) only when timeoutMillis ran out with the workflow busy after the signal", async () => {
    const unpolled: JsonObject = { name: "signal_timeout_worker", taskReferenceName: "work", type: "SIMPLE", inputParameters: {} };
    await register({ name: "signal_timeout", tasks: [wait("approval"), unpolled] });
    await register({ name: "signal_timeout_waits", tasks: [wait("approval"), wait("again")] });
    for (const strategy of ["TARGET_WORKFLOW", "BLOCKING_TASK"]) {
      // The signal moves the workflow on to a worker's task nobody polls: busy when the time runs out.
      const busyId = await startWorkflow("signal_timeout");
      await waitFor(busyId, waitingIn("approval"));
      const busy = await apiOk<JsonObject>("POST", `/api/tasks/${busyId}/COMPLETED/signal/sync?timeoutMillis=500&returnStrategy=${strategy}`, {});
      expect(busy, strategy).toMatchObject({ targetWorkflowStatus: "RUNNING", signalTimeout: true });
      // Waiting again for a signal, or nothing applied (nothing waits): answered in time.
      const waitsId = await startWorkflow("signal_timeout_waits");
      await waitFor(waitsId, waitingIn("approval"));
      const waits = await apiOk<JsonObject>("POST", `/api/tasks/${waitsId}/COMPLETED/signal/sync?timeoutMillis=5000&returnStrategy=${strategy}`, {});
      expect(waits, strategy).toMatchObject({ targetWorkflowStatus: "RUNNING", signalTimeout: false });
      const nothing = await apiOk<JsonObject>("POST", `/api/tasks/${busyId}/COMPLETED/signal/sync?timeoutMillis=500&returnStrategy=${strategy}`, {});
      expect(nothing, strategy).toMatchObject({ signalTimeout: false });
    }
  });

  it("find the WAIT in a sub workflow the workflow runs; BLOCKING_WORKFLOW, BLOCKING_TASK and BLOCKING_TASK_INPUT answer with what blocks it next", async () => {
    const { parentId, childId } = await parentWithWaitingChild("signal_nested");
    const blockingWorkflow = await apiOk<JsonObject>("POST", `/api/tasks/${parentId}/COMPLETED/signal/sync?returnStrategy=BLOCKING_WORKFLOW`, { seen: true });
    expect(blockingWorkflow).toMatchObject({ responseType: "BLOCKING_WORKFLOW", targetWorkflowId: parentId, targetWorkflowStatus: "RUNNING", workflowId: childId, workflowName: "signal_nested_child" });
    expect(statuses(blockingWorkflow as WorkflowJson)).toEqual(["first:COMPLETED", "second:IN_PROGRESS"]);
    // Which task blocks it, and the target's variables, as the clients' SignalResponse reads them.
    const blocker = (blockingWorkflow as WorkflowJson).tasks[1]!;
    expect(blockingWorkflow).toMatchObject({ blockingTaskId: blocker.taskId, blockingTaskReferenceName: "second", targetWorkflowVariables: (await getWorkflow(parentId))["variables"] });
    expect((await getWorkflow(childId)).tasks[0]!.outputData).toEqual({ seen: true });

    const blockingTask = await apiOk<JsonObject>("POST", `/api/tasks/${parentId}/IN_PROGRESS/signal/sync?returnStrategy=BLOCKING_TASK`, { note: "still thinking" });
    expect(blockingTask).toMatchObject({
      responseType: "BLOCKING_TASK",
      targetWorkflowId: parentId,
      workflowId: childId,
      workflowType: "signal_nested_child",
      referenceTaskName: "second",
      taskType: "WAIT",
      status: "IN_PROGRESS",
      input: { order: 42 },
      output: { note: "still thinking" },
    });
    const blockingInput = await apiOk<JsonObject>("POST", `/api/tasks/${parentId}/IN_PROGRESS/signal/sync?returnStrategy=BLOCKING_TASK_INPUT`, {});
    expect(blockingInput).toEqual({
      responseType: "BLOCKING_TASK_INPUT",
      targetWorkflowId: parentId,
      targetWorkflowStatus: "RUNNING",
      targetWorkflowVariables: {},
      signalTimeout: false,
      workflowId: childId,
      workflowType: "signal_nested_child",
      taskId: expect.any(String),
      taskType: "WAIT",
      referenceTaskName: "second",
      taskDefName: "second",
      status: "IN_PROGRESS",
      retryCount: 0,
      priority: 0,
      createTime: expect.any(Number),
      updateTime: expect.any(Number),
      input: { order: 42 },
    });
    // The newer clients' BLOCKING_TASK_LIST: the blocking task whole, as a Task, in `tasks`.
    const blockingList = await apiOk<JsonObject>("POST", `/api/tasks/${parentId}/IN_PROGRESS/signal/sync?returnStrategy=BLOCKING_TASK_LIST`, { again: true });
    expect(blockingList).toMatchObject({ responseType: "BLOCKING_TASK_LIST", targetWorkflowId: parentId, targetWorkflowStatus: "RUNNING", targetWorkflowVariables: {}, workflowId: childId, workflowType: "signal_nested_child" });
    expect(blockingList["taskId"]).toBeUndefined();
    expect(blockingList["tasks"]).toEqual([expect.objectContaining({ referenceTaskName: "second", taskType: "WAIT", status: "IN_PROGRESS", workflowInstanceId: childId, inputData: { order: 42 }, outputData: { note: "still thinking", again: true } })]);
    const ended = await apiOk<JsonObject>("POST", `/api/tasks/${parentId}/COMPLETED/signal/sync?returnStrategy=BLOCKING_TASK`, {});
    expect(ended).toEqual({ responseType: "BLOCKING_TASK", targetWorkflowId: parentId, targetWorkflowStatus: "COMPLETED", targetWorkflowVariables: {}, signalTimeout: false, workflowId: parentId, workflowType: "signal_nested_parent" });
    expect((await getWorkflow(childId)).status).toBe("COMPLETED");
    const endedList = await apiOk<JsonObject>("POST", `/api/tasks/${parentId}/COMPLETED/signal/sync?returnStrategy=BLOCKING_TASK_LIST`, {});
    expect(endedList).toEqual({ responseType: "BLOCKING_TASK_LIST", targetWorkflowId: parentId, targetWorkflowStatus: "COMPLETED", targetWorkflowVariables: {}, signalTimeout: false, workflowId: parentId, workflowType: "signal_nested_parent", tasks: [] });
  });

  it("refuse what they cannot apply, changing nothing: nothing waiting (a 200 doing nothing, the synchronous one answering where the workflow stands, as Orkes'), an unknown workflow (404), a bad status or returnStrategy (400)", async () => {
    await register({ name: "signal_refused", tasks: [wait("approval")] });
    const workflowId = await startWorkflow("signal_refused");
    await waitFor(workflowId, waitingIn("approval"));
    const badStatus = await api("POST", `/api/tasks/${workflowId}/DONE/signal`, {});
    expect(badStatus.status).toBe(400);
    expect(((await badStatus.json()) as { validationErrors: Array<{ path: string }> }).validationErrors[0]!.path).toBe("status");
    const badStrategy = await api("POST", `/api/tasks/${workflowId}/COMPLETED/signal/sync?returnStrategy=EVERYTHING`, {});
    expect(badStrategy.status).toBe(400);
    expect((await api("POST", `/api/tasks/${workflowId}/COMPLETED/signal`, ["not", "an", "object"])).status).toBe(400);
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", outputData: {} });
    expect((await api("POST", `/api/tasks/${crypto.randomUUID()}/COMPLETED/signal`, {})).status).toBe(404);
    expect((await api("POST", `/api/tasks/${crypto.randomUUID()}/COMPLETED/signal/sync`, {})).status).toBe(404);

    await register({ name: "signal_nothing", tasks: [{ name: "worker_job", taskReferenceName: "job", type: "SIMPLE", inputParameters: {} }] });
    const busy = await startWorkflow("signal_nothing");
    await waitFor(busy, (workflow) => workflow.tasks[0]?.status === "SCHEDULED");
    const before = await getWorkflow(busy);
    const nothing = await apiOk<JsonObject>("POST", `/api/tasks/${busy}/COMPLETED/signal/sync`, { ignored: true });
    expect(nothing).toMatchObject({ responseType: "TARGET_WORKFLOW", targetWorkflowId: busy, targetWorkflowStatus: "RUNNING", workflowId: busy, status: "RUNNING" });
    expect((nothing as WorkflowJson).tasks[0]).toMatchObject({ referenceTaskName: "job", status: "SCHEDULED", outputData: {} });
    expect((await api("POST", `/api/tasks/${busy}/COMPLETED/signal`, {})).status).toBe(200);
    expect(await getWorkflow(busy)).toEqual(before);
  });

  it("two sent at once that both found the same WAIT are applied one after the other: the second updates what waits then (200 each, where the second was a 409)", async () => {
    await register({ name: "signal_race", tasks: [wait("first"), wait("second")] });
    const workflowId = await startWorkflow("signal_race");
    await waitFor(workflowId, waitingIn("first"));
    // Each signal's look-up answers only once both have looked up: both found `first`, and one updates it first.
    const { signalTarget } = WorkflowExecution.prototype;
    let lookups = 0;
    WorkflowExecution.prototype.signalTarget = async function (this: WorkflowExecution) {
      const found = await signalTarget.call(this);
      lookups++;
      for (let i = 0; i < 2000 && lookups < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      return found;
    };
    let answers: number[];
    try {
      const signals = [1, 2].map((n) => api("POST", `/api/tasks/${workflowId}/COMPLETED/signal`, { n }));
      answers = (await Promise.all(signals)).map((response) => response.status);
    } finally {
      WorkflowExecution.prototype.signalTarget = signalTarget;
    }
    expect(answers).toEqual([200, 200]);
    // The loser looked up again and found `second`, as a signal sent after the first would have.
    expect(lookups).toBe(3);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(statuses(done)).toEqual(["first:COMPLETED", "second:COMPLETED"]);
    expect(done.tasks.map((task) => task.outputData["n"]).sort()).toEqual([1, 2]);
    // A third, with nothing waiting, does nothing (200), as before.
    expect((await api("POST", `/api/tasks/${workflowId}/COMPLETED/signal`, { n: 3 })).status).toBe(200);
  });

  it("need TASK_EXECUTE on the workflow, and on the child's too for a WAIT there; the synchronous answer needs the read right first", async () => {
    const { parentId, childId } = await parentWithWaitingChild("signal_rights");
    const parentOnly = await createUser("signal-parent-only", { directPermissions: [{ action: "TASK_EXECUTE", scope: "workflow:signal_rights_parent" }] });
    const refused = await call("POST", `/api/tasks/${parentId}/COMPLETED/signal`, orkes(parentOnly.token), { by: "parent-only" });
    expect(refused.status).toBe(403);
    const writerNoReader = await createUser("signal-no-read", { directPermissions: [{ action: "TASK_EXECUTE", scope: "workflow:signal_rights_*" }] });
    expect((await call("POST", `/api/tasks/${parentId}/COMPLETED/signal/sync`, orkes(writerNoReader.token), { by: "no-read" })).status).toBe(403);
    const nobody = await createUser("signal-nobody");
    expect((await call("POST", `/api/tasks/${parentId}/COMPLETED/signal`, orkes(nobody.token), {})).status).toBe(403);
    expect((await getWorkflow(childId)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", outputData: {} });
    // Both workflows' tasks: the signal reaches the child's WAIT.
    const accepted = await call("POST", `/api/tasks/${parentId}/COMPLETED/signal`, orkes(writerNoReader.token), { by: "both" });
    expect(accepted.status).toBe(200);
    expect((await waitFor(childId, waitingIn("second"))).tasks[0]!.outputData).toEqual({ by: "both" });
  });
});
