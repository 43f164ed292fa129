import { describe, expect, it } from "vitest";
import { createExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import type { WorkflowDef } from "../../src/engine/model";
import { env } from "./engine-env";

const parent: WorkflowDef = {
  name: "parent",
  version: 1,
  schemaVersion: 2,
  tasks: [
    { name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "child" } } },
    { name: "after", taskReferenceName: "after", type: "HTTP", inputParameters: { uri: "http://a.test/${sub.output.answer}", method: "GET" } },
  ],
};

function started() {
  const decision = decide(createExecution({ workflowId: "parent-1", definition: parent, input: {} }, 1_000), { type: "start" }, env(1_000));
  const task = decision.state.tasks[0]!;
  return { state: decision.state, task, childId: task.subWorkflowId! };
}

describe("a child finishing while its parent is mid-transition", () => {
  it("is taken even before the parent has recorded that the child started (its id was chosen in advance)", () => {
    const { state, task, childId } = started();
    expect(task).toMatchObject({ status: "IN_PROGRESS", attempt: 1 });
    expect(childId).toBeDefined();
    // The child's notice arrives while the parent still awaits the start call.
    const finished = decide(state, { type: "childFinished", taskId: task.taskId, subWorkflowId: childId, status: "COMPLETED", output: { answer: 42 } }, env(2_000));
    expect(finished.state.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { answer: 42, subWorkflowId: childId } });
    expect(finished.state.tasks[1]).toMatchObject({ referenceTaskName: "after", inputData: { uri: "http://a.test/42" } });
    // Then the start call returns: a stale result for that attempt, ignored without a change.
    const late = decide(finished.state, { type: "dispatchResult", taskId: task.taskId, attempt: 1, status: "IN_PROGRESS", output: { subWorkflowId: childId }, awaitingExternal: true, subWorkflowId: childId }, env(2_001));
    expect(late.state).toBe(finished.state);
    expect(late.effects).toEqual([]);
  });

  it("after the start result, the notice completes the waiting task; a second notice is ignored", () => {
    const { state, task, childId } = started();
    const waiting = decide(state, { type: "dispatchResult", taskId: task.taskId, attempt: 1, status: "IN_PROGRESS", output: { subWorkflowId: childId }, awaitingExternal: true, subWorkflowId: childId }, env(1_500));
    expect(waiting.state.tasks[0]).toMatchObject({ status: "IN_PROGRESS", awaitingExternal: true });
    const finished = decide(waiting.state, { type: "childFinished", taskId: task.taskId, subWorkflowId: childId, status: "FAILED", output: {}, reason: "boom" }, env(2_000));
    expect(finished.state.tasks[0]).toMatchObject({ status: "FAILED", outputData: { error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: childId, errorCode: "TASK_ERROR", errorMessage: "boom" } } });
    expect(finished.state.status).toBe("FAILED");
    const again = decide(finished.state, { type: "childFinished", taskId: task.taskId, subWorkflowId: childId, status: "COMPLETED", output: {} }, env(2_100));
    expect(again.state).toBe(finished.state);
  });

  it("a notice from another child than the task's is ignored", () => {
    const { state, task } = started();
    const stray = decide(state, { type: "childFinished", taskId: task.taskId, subWorkflowId: "someone-else", status: "COMPLETED", output: {} }, env(2_000));
    expect(stray.state).toBe(state);
  });

  it("an idempotency key returning an existing child replaces the planned id before the notice can match", () => {
    const { state, task } = started();
    const existing = "existing-child";
    const waiting = decide(state, { type: "dispatchResult", taskId: task.taskId, attempt: 1, status: "IN_PROGRESS", output: { subWorkflowId: existing }, awaitingExternal: true, subWorkflowId: existing }, env(1_500));
    expect(waiting.state.tasks[0]!.subWorkflowId).toBe(existing);
    const finished = decide(waiting.state, { type: "childFinished", taskId: task.taskId, subWorkflowId: existing, status: "COMPLETED", output: { answer: 1 } }, env(2_000));
    expect(finished.state.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { answer: 1, subWorkflowId: existing } });
  });
});

describe("a SUB_WORKFLOW task decided from outside", () => {
  it("terminates its child when set to a terminal status, and leaves it running when set to IN_PROGRESS", () => {
    const { state, task, childId } = started();
    const waiting = decide(state, { type: "dispatchResult", taskId: task.taskId, attempt: 1, status: "IN_PROGRESS", output: { subWorkflowId: childId }, awaitingExternal: true, subWorkflowId: childId }, env(1_500));
    const updated = decide(waiting.state, { type: "externalUpdate", taskId: task.taskId, status: "IN_PROGRESS", output: { note: 1 } }, env(1_600));
    expect(updated.effects.filter((effect) => effect.kind === "terminateChild")).toEqual([]);
    const completed = decide(updated.state, { type: "externalUpdate", taskId: task.taskId, status: "COMPLETED", output: { answer: 7 } }, env(2_000));
    expect(completed.effects).toContainEqual({ kind: "terminateChild", taskId: task.taskId, subWorkflowId: childId, reason: `Task sub of parent workflow parent-1 was set to COMPLETED from outside` });
    expect(completed.state.tasks[0]).toMatchObject({ status: "COMPLETED" });
  });
});
