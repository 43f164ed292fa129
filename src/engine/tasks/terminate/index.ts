import { isOneOf } from "../../definition/checks";
import type { JsonObject, JsonValue, TaskExecution } from "../../model";
import type { TaskTypeModule, WorkflowEnding } from "../task-type";

/** The statuses a TERMINATE task may end its workflow in (Conductor's, case-sensitive as there). */
export const TERMINATION_STATUSES = ["COMPLETED", "FAILED", "TERMINATED"] as const;

const isTerminationStatus = isOneOf(TERMINATION_STATUSES);

/** A value for a message: its JSON, cut so that an expression resolving to a whole object stays readable. */
function shown(value: JsonValue | undefined): string {
  const json = JSON.stringify(value ?? null);
  return json.length <= 100 ? json : `${json.slice(0, 100)}…`;
}

/**
 * The task's output, and so the workflow's, as Conductor's Terminate makes it: `workflowOutput` when it is an
 * object, `{output: value}` for any other value, empty when it is absent or null.
 */
function terminationOutput(workflowOutput: JsonValue | undefined): JsonObject {
  if (workflowOutput === undefined || workflowOutput === null) return {};
  if (typeof workflowOutput === "object" && !Array.isArray(workflowOutput)) return workflowOutput;
  return { output: workflowOutput };
}

/**
 * The workflow's `reasonForIncompletion`: `terminationReason`, else Conductor's default naming the status and the task.
 * Uncut: the decider scrubs it of the task's masked input values (it may have been written from one) and then cuts it
 * as a reason given from outside is, since the workflow's row keeps it beside its input and output.
 */
function terminationReason(given: JsonValue | undefined, status: string, taskId: string): string {
  const text = typeof given === "string" ? given : given === undefined || given === null ? "" : JSON.stringify(given);
  return text.trim() === "" ? `Workflow is ${status} by TERMINATE task: ${taskId}` : text;
}

/**
 * TERMINATE (Conductor's): ends its workflow, in the same decision, with `terminationStatus` (COMPLETED, FAILED or
 * TERMINATED), `terminationReason` as the reason of a FAILED or TERMINATED one, and the task's output (`workflowOutput`)
 * as its output. The task itself completes; a status that is none of the three fails it for good instead.
 */
export const terminateTask: TaskTypeModule = {
  type: "TERMINATE",
  start(task, _definition, _execution, env) {
    const status = task.inputData["terminationStatus"];
    const begun = { ...task, startTime: env.now, endTime: env.now, updateTime: env.now };
    if (!isTerminationStatus(status)) {
      const reason = `TERMINATE terminationStatus ${shown(status)} is not one of COMPLETED, FAILED or TERMINATED`;
      return { task: { ...begun, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: reason }, dispatch: false };
    }
    const output = terminationOutput(task.inputData["workflowOutput"]);
    const completed: TaskExecution = { ...begun, status: "COMPLETED", outputData: output };
    const ending: WorkflowEnding = { status, output, reason: terminationReason(task.inputData["terminationReason"], status, task.taskId) };
    return { task: completed, dispatch: false, ending };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
