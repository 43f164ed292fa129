import { describe, expect, it } from "vitest";
import { indexSignature, onlyTasksChanged } from "../../src/actors/execution-index";
import { createExecution } from "../../src/engine/decider";
import type { WorkflowDef, WorkflowExecution } from "../../src/engine/model";
import { summaryRowOf, toWorkflowSummary, toWorkflowView } from "../../src/engine/view";
import { env, taskDefNamed } from "./engine-env";
import { decide } from "./frozen-decide";

const definition: WorkflowDef = { name: "orders", version: 1, schemaVersion: 2, tasks: [{ name: "charge", taskReferenceName: "pay", type: "SIMPLE", inputParameters: {} }] };

/** An execution whose one task has been scheduled. */
function started(): WorkflowExecution {
  return decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
}

/** `execution` with its task failed, then run again under the same reference and failed (timed out), and a loop's run failed: ended FAILED. */
function withFailures(execution: WorkflowExecution): WorkflowExecution {
  const task = execution.tasks[0]!;
  return {
    ...execution,
    status: "FAILED",
    tasks: [
      { ...task, status: "FAILED" },
      { ...task, taskId: `${task.taskId}-2`, status: "TIMED_OUT" },
      { ...task, taskId: `${task.taskId}-3`, referenceTaskName: "pay__2", status: "FAILED" },
    ],
  };
}

describe("a WorkflowSummary's failed tasks (search rows, the status listener's payload)", () => {
  it("keeps no list in the row when no task failed (most rows: every start), and shows failedTaskNames as []", () => {
    const row = summaryRowOf(started());
    expect(row.failedTaskNames).toBeNull();
    expect(toWorkflowSummary(row)).toMatchObject({ failedReferenceTaskNames: "", failedTaskNames: [] });
  });

  it("names the failed tasks' references and their task names, each once", () => {
    const row = summaryRowOf(withFailures(started()));
    expect(row.failedTaskNames).toBe('["charge"]');
    expect(toWorkflowSummary(row)).toMatchObject({ failedReferenceTaskNames: "pay,pay__2", failedTaskNames: ["charge"] });
  });
});

describe("which failed tasks an execution names (the Workflow JSON and its summary), as Conductor's", () => {
  /** The Workflow JSON's lists and the summary's, of `execution`. */
  const shown = (execution: WorkflowExecution) => {
    const view = toWorkflowView(execution, false);
    const summary = toWorkflowSummary(summaryRowOf(execution));
    return [view.failedReferenceTaskNames, view.failedTaskNames, summary["failedReferenceTaskNames"], summary["failedTaskNames"]];
  };

  it("counts FAILED and FAILED_WITH_TERMINAL_ERROR tasks, not TIMED_OUT ones (Conductor's completeWorkflow and terminateWorkflow filter so), while the row's signature still signs them as before", () => {
    const running = started();
    const task = running.tasks[0]!;
    const timedOut: WorkflowExecution = { ...running, status: "TIMED_OUT", tasks: [{ ...task, status: "TIMED_OUT" }] };
    expect(shown(timedOut)).toEqual([[], [], "", []]);
    expect(indexSignature(timedOut)).toContain("|pay|");
    const terminal: WorkflowExecution = { ...running, status: "FAILED", tasks: [{ ...task, status: "FAILED_WITH_TERMINAL_ERROR" }] };
    expect(shown(terminal)).toEqual([["pay"], ["charge"], "pay", ["charge"]]);
  });

  it("names none while it runs, though a task failed and its retry is due (Conductor fills them as it ends); a retry keeps those it ended with, a rerun empties them", () => {
    const withRetry: WorkflowDef = { ...definition, tasks: [{ ...definition.tasks[0]!, taskDefinition: taskDefNamed("charge", { retryCount: 1 }) }] };
    const fail = (state: WorkflowExecution, now: number) => {
      const taskId = state.tasks.at(-1)!.taskId;
      const polled = decide(state, { type: "taskPolled", taskId, workerId: "w" }, env(now)).state;
      return decide(polled, { type: "externalUpdate", taskId, status: "FAILED", output: {}, reason: "card declined" }, env(now + 100)).state;
    };
    const first = decide(createExecution({ workflowId: "wf-1", definition: withRetry, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
    const once = fail(first, 2_000);
    expect([once.status, once.tasks.map((task) => task.status)]).toEqual(["RUNNING", ["FAILED", "SCHEDULED"]]);
    expect(shown(once)).toEqual([[], [], "", []]);
    const failed = fail(once, 3_000);
    expect(failed.status).toBe("FAILED");
    expect(shown(failed)).toEqual([["pay"], ["charge"], "pay", ["charge"]]);
    const retried = decide(failed, { type: "retry" }, env(4_000)).state;
    expect(retried.status).toBe("RUNNING");
    expect(shown(retried)).toEqual([["pay"], ["charge"], "pay", ["charge"]]);
    const rerun = decide(failed, { type: "rerun", fromTaskId: failed.tasks[1]!.taskId }, env(4_000)).state;
    expect(rerun.status).toBe("RUNNING");
    expect(shown(rerun)).toEqual([[], [], "", []]);
    // Ended again, it names every failed task it holds (the one before the rerun's too), as Conductor's addAll.
    expect(shown(fail(rerun, 5_000))).toEqual([["pay"], ["charge"], "pay", ["charge"]]);
  });

  it("keeps those it ended with through a restart, as Conductor's WorkflowExecutor.restart clears the tasks but not failedReferenceTaskNames / failedTaskNames", () => {
    const first = started();
    const taskId = first.tasks[0]!.taskId;
    const polled = decide(first, { type: "taskPolled", taskId, workerId: "w" }, env(2_000)).state;
    const failed = decide(polled, { type: "externalUpdate", taskId, status: "FAILED", output: {}, reason: "card declined" }, env(2_100)).state;
    expect(failed.status).toBe("FAILED");
    const restarted = decide(failed, { type: "restart" }, env(3_000)).state;
    expect([restarted.status, restarted.tasks.map((task) => task.status)]).toEqual(["RUNNING", ["SCHEDULED"]]);
    expect(shown(restarted)).toEqual([["pay"], ["charge"], "pay", ["charge"]]);
    // Ended again, well this time, it still names them: Conductor's completeWorkflow adds to the sets the restart kept.
    const againId = restarted.tasks[0]!.taskId;
    const again = decide(restarted, { type: "taskPolled", taskId: againId, workerId: "w" }, env(4_000)).state;
    const completed = decide(again, { type: "externalUpdate", taskId: againId, status: "COMPLETED", output: {} }, env(4_100)).state;
    expect(completed.status).toBe("COMPLETED");
    expect(shown(completed)).toEqual([["pay"], ["charge"], "pay", ["charge"]]);
    // Restarted again, it keeps them again.
    expect(shown(decide({ ...completed, status: "FAILED" }, { type: "restart" }, env(5_000)).state)).toEqual([["pay"], ["charge"], "pay", ["charge"]]);
  });
});

describe("a parent reopened by its child's rerun or retry", () => {
  it("keeps the failed tasks it ended with, as Conductor's updateAndPushParents sets the parent RUNNING and leaves its sets (rerunWF empties only the child's)", () => {
    const parent: WorkflowDef = { name: "parent", version: 1, schemaVersion: 2, tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: {}, subWorkflowParam: { name: "child" } }] };
    const first = decide(createExecution({ workflowId: "parent-1", definition: parent, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
    const task = first.tasks[0]!;
    const failed = decide(first, { type: "childFinished", taskId: task.taskId, subWorkflowId: task.subWorkflowId!, status: "FAILED", output: {}, reason: "declined" }, env(2_000)).state;
    expect(failed.status).toBe("FAILED");
    const view = toWorkflowView(failed, false);
    expect([view.failedReferenceTaskNames, view.failedTaskNames]).toEqual([["sub"], ["sub"]]);
    const reopened = decide(failed, { type: "resumeChild", taskId: task.taskId }, env(3_000)).state;
    expect([reopened.status, reopened.tasks[0]!.status]).toEqual(["RUNNING", "IN_PROGRESS"]);
    const shownReopened = toWorkflowView(reopened, false);
    expect([shownReopened.failedReferenceTaskNames, shownReopened.failedTaskNames]).toEqual([["sub"], ["sub"]]);
  });
});

describe("the search row's signature of the failed tasks (what decides that the row is written again)", () => {
  /** The signature as the code before failedTaskNames stored it: the failed tasks' reference names alone. */
  const signedBefore = (execution: WorkflowExecution, failed: string) =>
    `${execution.status}|${execution.startTime}|${execution.endTime}|${execution.updateTime}|${execution.workflowVersion}|${failed}||#tasks:${execution.taskRevision ?? 0}`;

  it("is what the code before stored, with and without failed tasks: no row is written again for the deploy", () => {
    const running = started();
    expect(indexSignature(running)).toBe(signedBefore(running, ""));
    const failed = withFailures(running);
    expect(indexSignature(failed)).toBe(signedBefore(failed, "pay,pay__2"));
    expect(onlyTasksChanged(failed, signedBefore(failed, "pay,pay__2"))).toBe(true);
  });

  it("changes when a reference fails as another task (a DYNAMIC run again), whose name the row shows", () => {
    const failed = withFailures(started());
    const task = failed.tasks[0]!;
    const renamed = { ...failed, tasks: [...failed.tasks, { ...task, taskId: `${task.taskId}-4`, taskDefName: "refund", status: "FAILED" as const }] };
    expect(onlyTasksChanged(renamed, indexSignature(failed))).toBe(false);
    expect(toWorkflowSummary(summaryRowOf(renamed))["failedTaskNames"]).toEqual(["charge", "refund"]);
    // Failing again as a name already shown changes nothing.
    const again = { ...renamed, tasks: [...renamed.tasks, { ...task, taskId: `${task.taskId}-5`, taskDefName: "refund", status: "FAILED" as const }] };
    expect(indexSignature(again)).toBe(indexSignature(renamed));
  });
});
