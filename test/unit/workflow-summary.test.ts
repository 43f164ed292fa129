import { describe, expect, it } from "vitest";
import { indexSignature, onlyTasksChanged } from "../../src/actors/execution-index";
import { createExecution } from "../../src/engine/decider";
import type { WorkflowDef, WorkflowExecution } from "../../src/engine/model";
import { summaryRowOf, toWorkflowSummary } from "../../src/engine/view";
import { env } from "./engine-env";
import { decide } from "./frozen-decide";

const definition: WorkflowDef = { name: "orders", version: 1, schemaVersion: 2, tasks: [{ name: "charge", taskReferenceName: "pay", type: "SIMPLE", inputParameters: {} }] };

/** An execution whose one task has been scheduled. */
function started(): WorkflowExecution {
  return decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
}

/** `execution` with its task failed, then run again under the same reference and failed (timed out), and a loop's run failed. */
function withFailures(execution: WorkflowExecution): WorkflowExecution {
  const task = execution.tasks[0]!;
  return {
    ...execution,
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
