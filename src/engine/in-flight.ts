import type { TaskExecution } from "./model";

/**
 * True when a dispatched side effect of the task may be running (and is the engine's to finish): an HTTP call, a
 * child's start. Its own module so that the views (which the decider imports) read it as the decider does.
 */
export function isInFlight(task: TaskExecution): boolean {
  return task.status === "IN_PROGRESS" && task.awaitingExternal !== true && task.attemptDeadline !== undefined;
}
