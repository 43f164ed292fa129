import { describe, expect, it } from "vitest";
import { DEFAULT_ENGINE_CONFIG, type DecideEnv } from "../../src/engine/config";
import { createExecution, decide, settleOverdue, type ExecutionEvent } from "../../src/engine/decider";
import { EngineError } from "../../src/engine/errors";
import type { WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";

// Alarms fire at or after their time: these events arrive after a deadline whose alarm has not run yet.

function env(now: number): DecideEnv {
  let n = 0;
  return { now, newId: () => `id-${now}-${++n}`, config: DEFAULT_ENGINE_CONFIG };
}

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

function refusal(state: WorkflowExecution, event: ExecutionEvent, now: number): EngineError {
  try {
    decide(state, event, env(now));
  } catch (error) {
    if (error instanceof EngineError) return error;
    throw error;
  }
  throw new Error("the event was accepted");
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

  it("pause and resume past the workflow's timeoutSeconds are refused: it has timed out", () => {
    const state = started({ timeoutSeconds: 1, tasks: [hook(0)] });
    expect(refusal(state, { type: "pause" }, 2_000).message).toContain("its status is TIMED_OUT");
    const paused = decide(state, { type: "pause" }, env(1_500)).state;
    expect(refusal(paused, { type: "resume" }, 2_000).message).toContain("its status is TIMED_OUT");
    // A second pause of a paused workflow is still a no-op while nothing is overdue.
    expect(decide(paused, { type: "pause" }, env(1_600)).state).toBe(paused);
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
