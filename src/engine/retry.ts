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
  /** Caps every delay, FIXED's too (the task definition's `maxRetryDelaySeconds`); 0: no cap. */
  maxDelaySeconds: number;
  /** Up to this many milliseconds, at random, are added to each delay (the task definition's `backoffJitterMs`). */
  jitterMs: number;
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
    maxDelaySeconds: shared?.maxRetryDelaySeconds ?? 0,
    jitterMs: shared?.backoffJitterMs ?? 0,
  };
}

/**
 * Seconds to wait before retry number `retriesSoFar + 1`, following Conductor's policies:
 * FIXED waits `delay` each time, LINEAR_BACKOFF `delay × backoffScaleFactor × (n + 1)`, EXPONENTIAL_BACKOFF
 * `delay × 2ⁿ`, none longer than `maxDelaySeconds` when it is set (FIXED's too, as Conductor's e2e RetryPolicyTests has it).
 */
export function retryDelaySeconds(policy: Pick<RetryPolicy, "logic" | "delaySeconds" | "backoffScaleFactor"> & Partial<Pick<RetryPolicy, "maxDelaySeconds">>, retriesSoFar: number): number {
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
  const cap = policy.maxDelaySeconds ?? 0;
  if (cap > 0) delay = Math.min(delay, cap);
  return Math.min(delay, MAX_RETRY_DELAY_SECONDS);
}

/**
 * Milliseconds to wait before retry number `retriesSoFar + 1`: {@link retryDelaySeconds} and, with `jitterMs`, a random
 * part of up to that many more (`random` in [0, 1)), so that tasks failing together do not all come back at once.
 */
export function retryDelayMs(policy: RetryPolicy, retriesSoFar: number, random: () => number): number {
  const jitter = Math.min(Math.max(policy.jitterMs, 0), MAX_RETRY_DELAY_SECONDS * 1000);
  return retryDelaySeconds(policy, retriesSoFar) * 1000 + (jitter > 0 ? Math.floor(random() * (jitter + 1)) : 0);
}

/**
 * A number in [0, 1) drawn from `id`, a fresh random UUID: the engine's only source of randomness is the one its
 * environment gives for ids (FNV-1a over its characters, so any string will do, as in tests).
 */
export function fractionOf(id: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < id.length; index++) {
    hash ^= id.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash / 2 ** 32;
}
