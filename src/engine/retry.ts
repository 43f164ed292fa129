import type { RetryLogic, WorkflowTaskDef } from "./model";

/** Most retries a task may ask for. */
export const MAX_RETRY_COUNT = 100;

/** Longest delay any retry policy may produce, so a large retryCount cannot park a task for years. */
export const MAX_RETRY_DELAY_SECONDS = 86_400;

/** How a failed task is retried. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  count: number;
  logic: RetryLogic;
  delaySeconds: number;
  /** Multiplies LINEAR_BACKOFF's delay. */
  backoffScaleFactor: number;
}

/**
 * The retry policy of a workflow task: its own settings where it has them, else its task definition's
 * (Conductor's `WorkflowTask.retryCount` likewise overrides the `TaskDef`'s), else no retry.
 */
export function retryPolicyOf(task: WorkflowTaskDef): RetryPolicy {
  const shared = task.taskDefinition;
  return {
    count: task.retryCount ?? shared?.retryCount ?? 0,
    logic: task.retryLogic ?? shared?.retryLogic ?? "FIXED",
    delaySeconds: task.retryDelaySeconds ?? shared?.retryDelaySeconds ?? 0,
    backoffScaleFactor: shared?.backoffScaleFactor ?? 1,
  };
}

/**
 * Seconds to wait before retry number `retriesSoFar + 1`, following Conductor's policies:
 * FIXED waits `delay` each time, LINEAR_BACKOFF `delay × backoffScaleFactor × (n + 1)`, EXPONENTIAL_BACKOFF
 * `delay × 2ⁿ`.
 */
export function retryDelaySeconds(policy: Pick<RetryPolicy, "logic" | "delaySeconds" | "backoffScaleFactor">, retriesSoFar: number): number {
  const base = Math.max(0, policy.delaySeconds);
  let delay: number;
  switch (policy.logic) {
    case "FIXED":
      delay = base;
      break;
    case "LINEAR_BACKOFF":
      delay = base * Math.max(1, policy.backoffScaleFactor) * (retriesSoFar + 1);
      break;
    case "EXPONENTIAL_BACKOFF":
      delay = base * 2 ** retriesSoFar;
      break;
  }
  return Math.min(delay, MAX_RETRY_DELAY_SECONDS);
}
