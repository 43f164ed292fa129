import { describe, expect, it } from "vitest";
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
