import { describe, expect, it } from "vitest";
import { createExecution, nextDeadline, settleOverdue, type ExecutionEvent } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import type { TaskDef, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { toTaskView, toWorkflowView } from "../../src/engine/view";
import { env, refusal } from "./engine-env";

// Alarms fire at or after their time: these events arrive after a deadline whose alarm has not run yet.

const hook = (timeoutSeconds: number, extra: Partial<WorkflowTaskDef> = {}): WorkflowTaskDef => ({
  name: "hook",
  taskReferenceName: "hook",
  type: "WAIT_FOR_WEBHOOK",
  inputParameters: { timeoutSeconds },
  ...extra,
});

function started(definition: Omit<WorkflowDef, "name" | "version" | "schemaVersion">): WorkflowExecution {
  const full: WorkflowDef = { name: "deadlines", version: 1, schemaVersion: 2, ...definition };
  return decide(createExecution({ workflowId: "wf-1", definition: full, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
}

describe("events arriving after a deadline whose alarm has not run yet", () => {
  it("a completion of a webhook task past its timeoutSeconds is refused as not pending (the task timed out)", () => {
    const state = started({ tasks: [hook(1)] });
    const taskId = state.tasks[0]!.taskId;
    const error = refusal(state, { type: "externalUpdate", taskId, status: "COMPLETED", output: { late: true } }, 2_500);
    expect({ kind: error.kind, message: error.message }).toEqual({ kind: "CONFLICT", message: expect.stringContaining("its status is FAILED") });
    // Just before the deadline the same completion is taken.
    const inTime = decide(state, { type: "externalUpdate", taskId, status: "COMPLETED", output: {} }, env(1_999));
    expect(inTime.state.status).toBe("COMPLETED");
  });

  it("a completion past the workflow's timeoutSeconds is refused, as the workflow timed out first", () => {
    const state = started({ timeoutSeconds: 1, tasks: [hook(0)] });
    const error = refusal(state, { type: "externalUpdate", taskId: state.tasks[0]!.taskId, status: "COMPLETED", output: {} }, 2_000);
    expect({ kind: error.kind, message: error.message }).toEqual({ kind: "CONFLICT", message: expect.stringContaining("its status is CANCELED") });
  });

  it("a task result past the workflow's timeoutSeconds is ignored and the workflow ends TIMED_OUT, not COMPLETED", () => {
    const state = started({ timeoutSeconds: 1, tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { uri: "http://a.test/", method: "GET" } }] });
    const task = state.tasks[0]!;
    const late = decide(state, { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "COMPLETED", output: { body: "ok" } }, env(2_000));
    expect(late.state.status).toBe("TIMED_OUT");
    expect(late.state.tasks[0]).toMatchObject({ status: "CANCELED" });
    expect(late.effects).toContainEqual({ kind: "cancelDispatch", taskId: task.taskId });
  });

  it("a child finishing past its parent's timeoutSeconds does not complete the parent", () => {
    const state = started({ timeoutSeconds: 1, tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "child" } } }] });
    const task = state.tasks[0]!;
    const late = decide(state, { type: "childFinished", taskId: task.taskId, subWorkflowId: task.subWorkflowId!, status: "COMPLETED", output: {} }, env(2_000));
    expect(late.state.status).toBe("TIMED_OUT");
  });

  it("a pause past the workflow's timeoutSeconds is refused (it has timed out); a paused workflow's timeout waits, and counts afresh from its resume", () => {
    const state = started({ timeoutSeconds: 1, tasks: [hook(0)] });
    expect(refusal(state, { type: "pause" }, 2_000).message).toContain("its status is TIMED_OUT");
    const paused = decide(state, { type: "pause" }, env(1_500)).state;
    // A second pause of a paused workflow is still a no-op.
    expect(decide(paused, { type: "pause" }, env(1_600)).state).toBe(paused);
    // Paused, it does not time out (Conductor takes it off its sweeper), and nothing wakes it for that.
    expect(nextDeadline(paused)).toBeUndefined();
    expect(decide(paused, { type: "tick", liveTaskIds: new Set() }, env(60_000)).state.status).toBe("PAUSED");
    // Resumed, its timeout counts from the resume (Conductor's lastRetriedTime).
    const resumed = decide(paused, { type: "resume" }, env(60_000)).state;
    expect(resumed.status).toBe("RUNNING");
    expect(nextDeadline(resumed)).toBe(61_000);
    expect(decide(resumed, { type: "tick", liveTaskIds: new Set() }, env(61_000)).state.status).toBe("TIMED_OUT");
  });

  it("terminate past the workflow's timeoutSeconds still terminates (an explicit stop is not second-guessed)", () => {
    const state = started({ timeoutSeconds: 1, tasks: [hook(0)] });
    expect(decide(state, { type: "terminate", reason: "stop" }, env(2_000)).state.status).toBe("TERMINATED");
  });

  it("settleOverdue applies what the late alarm would have: the webhook task times out and its retry is scheduled", () => {
    const state = started({ tasks: [hook(1, { retryCount: 1, retryDelaySeconds: 10 })] });
    const settled = settleOverdue(state, env(2_500));
    expect(settled.state.tasks.map((task) => task.status)).toEqual(["FAILED", "SCHEDULED"]);
    expect(settled.state.tasks[0]!.outputData).toMatchObject({ error: "WEBHOOK_TIMEOUT" });
    expect(settled.state.tasks[1]!.scheduledTime).toBe(12_500);
    // Nothing overdue: the very same state.
    expect(settleOverdue(state, env(1_999)).state).toBe(state);
  });

  it("only deadlines are settled first: a delayed retry that is due stays SCHEDULED when the workflow is paused", () => {
    const state = started({ tasks: [hook(0, { retryCount: 1, retryDelaySeconds: 1 })] });
    const failed = decide(state, { type: "externalUpdate", taskId: state.tasks[0]!.taskId, status: "FAILED", output: {} }, env(1_100));
    const retry = failed.state.tasks[1]!;
    expect(retry).toMatchObject({ status: "SCHEDULED", scheduledTime: 2_100 });
    const paused = decide(failed.state, { type: "pause" }, env(3_000));
    expect(paused.state.status).toBe("PAUSED");
    expect(paused.state.tasks[1]).toMatchObject({ status: "SCHEDULED", scheduledTime: 2_100 });
    expect(paused.effects).toEqual([]);
  });
});

describe("a task definition's timeoutSeconds (counted from the task's start)", () => {
  const taskDef = (fields: Partial<TaskDef>): TaskDef => ({
    name: "shared",
    retryCount: 0,
    retryLogic: "FIXED",
    retryDelaySeconds: 0,
    backoffScaleFactor: 1,
    timeoutSeconds: 10,
    timeoutPolicy: "TIME_OUT_WF",
    responseTimeoutSeconds: 1,
    ...fields,
  });
  const waitingCall = (fields: Partial<TaskDef>): WorkflowTaskDef => ({
    name: "shared",
    taskReferenceName: "call",
    type: "HTTP",
    inputParameters: { uri: "http://a.test/", method: "GET" },
    asyncComplete: true,
    taskDefinition: taskDef(fields),
  });
  const tick = (state: WorkflowExecution, now: number) => decide(state, { type: "tick", liveTaskIds: new Set() }, env(now));

  it("TIME_OUT_WF: the task times out at its deadline and the workflow with it", () => {
    const state = started({ tasks: [waitingCall({})] });
    expect(nextDeadline(state)).toBe(11_000);
    expect(tick(state, 10_999).state.status).toBe("RUNNING");
    const timedOut = tick(state, 11_000).state;
    expect(timedOut.status).toBe("TIMED_OUT");
    expect(timedOut.tasks[0]).toMatchObject({ status: "TIMED_OUT", reasonForIncompletion: "Task timed out after 10 seconds. Timeout configured as 10 seconds. Timeout policy configured to TIME_OUT_WF" });
    expect(timedOut.reasonForIncompletion).toContain("Task call timed out");
  });

  it("RETRY: the task times out and its retry settings decide, as after a failure", () => {
    const state = started({ tasks: [waitingCall({ timeoutPolicy: "RETRY", retryCount: 1, retryDelaySeconds: 5 })] });
    const retried = tick(state, 11_000).state;
    expect(retried.status).toBe("RUNNING");
    expect(retried.tasks.map((task) => [task.status, task.retryCount])).toEqual([
      ["TIMED_OUT", 0],
      ["SCHEDULED", 1],
    ]);
    expect(retried.tasks[1]!.scheduledTime).toBe(16_000);
    // Shown with the delay it was retried after, as Conductor's DeciderService.retry() sets startDelayInSeconds; the attempt it retries shows none.
    expect(retried.tasks.map((task) => toTaskView(task, retried)["startDelayInSeconds"])).toEqual([0, 5]);
    // The retry gets a deadline of its own once it starts.
    const restarted = tick(retried, 16_000).state;
    expect(restarted.tasks[1]).toMatchObject({ status: "IN_PROGRESS", definitionTimeoutAt: 26_000 });
    // No retry left: the workflow ends as its task did, TIMED_OUT (Conductor's retry()).
    expect(tick(restarted, 26_000).state.status).toBe("TIMED_OUT");
  });

  it("RETRY, paused: the timeout waits for the resume (a completion meanwhile counts), which times the task out if it passed, else it acts at its own time", () => {
    // A webhook without a timeout of its own: only its task definition's can time it out.
    const state = started({ tasks: [hook(0, { taskDefinition: taskDef({ timeoutPolicy: "RETRY", retryCount: 1, retryDelaySeconds: 0 }) })] });
    const paused = decide(state, { type: "pause" }, env(2_000)).state;
    // Nothing wakes the paused workflow for it, and a tick past it changes nothing (Conductor decides nothing while paused).
    expect(nextDeadline(paused)).toBeUndefined();
    const later = tick(paused, 20_000).state;
    expect([later.status, later.tasks.map((task) => task.status)]).toEqual(["PAUSED", ["IN_PROGRESS"]]);
    const completed = decide(later, { type: "externalUpdate", taskId: state.tasks[0]!.taskId, status: "COMPLETED", output: {} }, env(20_000)).state;
    expect(completed.tasks.map((task) => task.status)).toEqual(["COMPLETED"]);
    expect(decide(completed, { type: "resume" }, env(21_000)).state.status).toBe("COMPLETED");
    // Still pending at the resume: timed out and retried by the resume itself.
    const resumed = decide(later, { type: "resume" }, env(21_000)).state;
    expect(resumed.status).toBe("RUNNING");
    expect(resumed.tasks.map((task) => [task.status, task.retryCount])).toEqual([
      ["TIMED_OUT", 0],
      ["IN_PROGRESS", 1],
    ]);
    // Resumed before it passed: it acts at its own time.
    const early = decide(paused, { type: "resume" }, env(5_000)).state;
    expect(nextDeadline(early)).toBe(11_000);
    expect(tick(early, 11_000).state.tasks.map((task) => task.status)).toEqual(["TIMED_OUT", "IN_PROGRESS"]);
  });

  it("ALERT_ONLY and a timeoutSeconds of 0 never time the task out", () => {
    for (const fields of [{ timeoutPolicy: "ALERT_ONLY" as const }, { timeoutSeconds: 0 }]) {
      const state = started({ tasks: [waitingCall(fields)] });
      expect(state.tasks[0]!.definitionTimeoutAt).toBeUndefined();
      expect(tick(state, 1_000_000).state.tasks[0]!.status).toBe("IN_PROGRESS");
    }
  });

  it("a task that ended in time is not timed out later", () => {
    const state = started({ tasks: [waitingCall({}), { ...waitingCall({}), taskReferenceName: "next", taskDefinition: undefined }] });
    const done = decide(state, { type: "externalUpdate", taskId: state.tasks[0]!.taskId, status: "COMPLETED", output: {} }, env(5_000)).state;
    expect(tick(done, 20_000).state.tasks.map((task) => task.status)).toEqual(["COMPLETED", "IN_PROGRESS"]);
  });

  it("a webhook's own timeoutSeconds and its definition's: whichever comes first decides how the task ends", () => {
    const ownFirst = started({ tasks: [hook(5, { taskDefinition: taskDef({ timeoutSeconds: 10 }) })] });
    expect(settleOverdue(ownFirst, env(30_000)).state.tasks[0]!.outputData).toMatchObject({ error: "WEBHOOK_TIMEOUT" });
    const definitionFirst = started({ tasks: [hook(20, { taskDefinition: taskDef({ timeoutSeconds: 10 }) })] });
    const settled = settleOverdue(definitionFirst, env(30_000)).state;
    expect(settled.tasks[0]).toMatchObject({ status: "TIMED_OUT" });
    expect(settled.status).toBe("TIMED_OUT");
  });

  it("an HTTP request still in flight at the deadline is canceled", () => {
    const state = started({ tasks: [{ ...waitingCall({}), asyncComplete: false }] });
    const timedOut = tick(state, 11_000);
    expect(timedOut.state.tasks[0]!.status).toBe("TIMED_OUT");
    expect(timedOut.effects).toContainEqual({ kind: "cancelDispatch", taskId: state.tasks[0]!.taskId });
  });
});

describe("a workflow's timeoutPolicy", () => {
  const tick = (state: WorkflowExecution, now: number) => decide(state, { type: "tick", liveTaskIds: new Set() }, env(now)).state;

  it("TIME_OUT_WF (as when none is given) ends the workflow TIMED_OUT after timeoutSeconds", () => {
    const state = started({ timeoutSeconds: 1, timeoutPolicy: "TIME_OUT_WF", tasks: [hook(0)] });
    expect(nextDeadline(state)).toBe(2_000);
    expect(tick(state, 2_000).status).toBe("TIMED_OUT");
  });

  it("a definition stored with no policy (before one was kept) times out as TIME_OUT_WF, and its Workflow JSON says so", () => {
    const state = started({ timeoutSeconds: 1, tasks: [hook(0)] });
    expect(tick(state, 2_000).status).toBe("TIMED_OUT");
    expect(toWorkflowView(state, false).workflowDefinition).toMatchObject({ timeoutPolicy: "TIME_OUT_WF" });
    const alertOnly = started({ timeoutSeconds: 1, timeoutPolicy: "ALERT_ONLY", tasks: [hook(0)] });
    expect(toWorkflowView(alertOnly, false).workflowDefinition).toMatchObject({ timeoutPolicy: "ALERT_ONLY" });
  });

  it("ALERT_ONLY sets no deadline: the workflow keeps running past timeoutSeconds, and gets none from a retry, restart or rerun either", () => {
    const state = started({ timeoutSeconds: 1, timeoutPolicy: "ALERT_ONLY", tasks: [hook(0)] });
    expect(state.deadline).toBeUndefined();
    expect(nextDeadline(state)).toBeUndefined();
    const later = tick(state, 60_000);
    expect(later.status).toBe("RUNNING");
    const terminated = decide(later, { type: "terminate" }, env(61_000)).state;
    for (const event of [{ type: "retry" }, { type: "restart" }, { type: "rerun" }] satisfies ExecutionEvent[]) {
      const reopened = decide(terminated, event, env(62_000)).state;
      expect({ event: event.type, status: reopened.status, deadline: reopened.deadline }).toEqual({ event: event.type, status: "RUNNING", deadline: undefined });
      expect(tick(reopened, 120_000).status).toBe("RUNNING");
    }
  });

  it("TIME_OUT_WF counts afresh from each retry, restart and rerun (a rerun too, where Conductor's keeps counting from the start); only a retry shows lastRetriedTime", () => {
    const timedOut = tick(started({ timeoutSeconds: 1, timeoutPolicy: "TIME_OUT_WF", tasks: [hook(0)] }), 2_000);
    expect(timedOut.status).toBe("TIMED_OUT");
    for (const event of [{ type: "retry" }, { type: "restart" }, { type: "rerun" }, { type: "rerun", fromTaskId: timedOut.tasks[0]!.taskId }] satisfies ExecutionEvent[]) {
      const reopened = decide(timedOut, event, env(10_000)).state;
      const what = { event: event.type, status: reopened.status, deadline: reopened.deadline, lastRetriedTime: toWorkflowView(reopened, false).lastRetriedTime };
      expect(what).toEqual({ event: event.type, status: "RUNNING", deadline: 11_000, lastRetriedTime: event.type === "retry" ? 10_000 : 0 });
      expect(tick(reopened, 10_999).status).toBe("RUNNING");
      expect(tick(reopened, 11_000).status).toBe("TIMED_OUT");
    }
  });

  it("a restart with the latest definition follows that definition's policy, both ways", () => {
    const alertOnly = started({ timeoutSeconds: 1, timeoutPolicy: "ALERT_ONLY", tasks: [hook(0)] });
    const terminated = decide(alertOnly, { type: "terminate" }, env(5_000)).state;
    const timingOut: WorkflowDef = { ...terminated.definition, version: 2, timeoutPolicy: "TIME_OUT_WF" };
    expect(decide(terminated, { type: "restart", definition: timingOut }, env(6_000)).state.deadline).toBe(7_000);
    const timedOut = tick(started({ timeoutSeconds: 1, tasks: [hook(0)] }), 2_000);
    expect(timedOut.status).toBe("TIMED_OUT");
    const relaxed: WorkflowDef = { ...timedOut.definition, version: 2, timeoutPolicy: "ALERT_ONLY" };
    expect(decide(timedOut, { type: "restart", definition: relaxed }, env(3_000)).state.deadline).toBeUndefined();
  });
});

describe("the elapsed time Conductor's timeout reasons give, counted as the deadline is (from the resume or retry, not the start)", () => {
  const tick = (state: WorkflowExecution, now: number) => decide(state, { type: "tick", liveTaskIds: new Set() }, env(now)).state;
  const workflowReason = (elapsed: number) => `Workflow timed out after ${elapsed} seconds. Timeout configured as 1 seconds. Timeout policy configured to TIME_OUT_WF`;
  const shared = (fields: Partial<TaskDef>): TaskDef => ({ name: "shared", retryCount: 0, retryLogic: "FIXED", retryDelaySeconds: 0, backoffScaleFactor: 1, timeoutSeconds: 0, timeoutPolicy: "TIME_OUT_WF", responseTimeoutSeconds: 1, ...fields });

  it("a workflow's timeout after a pause and resume: the second since the resume, not the 10 since the start", () => {
    // Started at 1 s, paused at 1.5 s, resumed at 10 s: due at 11 s, decided half a second late.
    const paused = decide(started({ timeoutSeconds: 1, tasks: [hook(0)] }), { type: "pause" }, env(1_500)).state;
    const resumed = decide(paused, { type: "resume" }, env(10_000)).state;
    const timedOut = tick(resumed, 11_500);
    expect([timedOut.status, timedOut.reasonForIncompletion]).toEqual(["TIMED_OUT", workflowReason(1)]);
  });

  it("a workflow's timeout after a retry: the second since the retry, not the 10 since the start", () => {
    const timedOut = tick(started({ timeoutSeconds: 1, tasks: [hook(0)] }), 2_000);
    expect(timedOut.reasonForIncompletion).toBe(workflowReason(1));
    const retried = decide(timedOut, { type: "retry" }, env(10_000)).state;
    const again = tick(retried, 11_500);
    expect([again.status, again.reasonForIncompletion]).toEqual(["TIMED_OUT", workflowReason(1)]);
  });

  it("a worker task's poll timeout after a pause and resume: the 5 seconds since the resume, not the 14 since its scheduling", () => {
    const poll: WorkflowTaskDef = { name: "shared", taskReferenceName: "encode", type: "SIMPLE", inputParameters: {}, taskDefinition: shared({ pollTimeoutSeconds: 5 }) };
    // Scheduled at 1 s, paused at 2 s, resumed at 10 s: its poll timeout counts afresh, due at 15 s.
    const paused = decide(started({ tasks: [poll] }), { type: "pause" }, env(2_000)).state;
    const resumed = decide(paused, { type: "resume" }, env(10_000)).state;
    expect(nextDeadline(resumed)).toBe(15_000);
    const timedOut = tick(resumed, 15_500);
    expect(timedOut.tasks[0]).toMatchObject({
      status: "TIMED_OUT",
      reasonForIncompletion: "Task poll timed out after 5 seconds. Poll timeout configured as 5 seconds. Timeout policy configured to TIME_OUT_WF",
    });
  });

  it("a task definition's timeout after a retry of the workflow: the 10 seconds since the retried task started, not the 29 since the workflow's start", () => {
    const call: WorkflowTaskDef = { name: "shared", taskReferenceName: "call", type: "HTTP", inputParameters: { uri: "http://a.test/", method: "GET" }, asyncComplete: true, taskDefinition: shared({ timeoutSeconds: 10 }) };
    const timedOut = tick(started({ tasks: [call] }), 11_000);
    expect(timedOut.status).toBe("TIMED_OUT");
    const retried = decide(timedOut, { type: "retry" }, env(20_000)).state;
    const again = tick(retried, 30_500);
    expect(again.tasks.at(-1)).toMatchObject({ status: "TIMED_OUT", reasonForIncompletion: "Task timed out after 10 seconds. Timeout configured as 10 seconds. Timeout policy configured to TIME_OUT_WF" });
  });
});
