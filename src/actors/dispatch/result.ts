import type { ExecutionEvent } from "../../engine/decider";
import type { JsonObject, TaskExecution } from "../../engine/model";

/** What a dispatch answers: the result of one attempt of its task. */
export type DispatchResult = Extract<ExecutionEvent, { type: "dispatchResult" }>;

/** Builds the results of `task`'s current attempt: its status, output and, when it did not succeed, why. */
export function resultOf(task: Pick<TaskExecution, "taskId" | "attempt">): (status: DispatchResult["status"], output: JsonObject, reason?: string) => DispatchResult {
  return (status, output, reason) => ({
    type: "dispatchResult",
    taskId: task.taskId,
    attempt: task.attempt,
    status,
    output,
    ...(reason === undefined ? {} : { reason }),
  });
}
