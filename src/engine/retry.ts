import type { RetryLogic } from "./model";

/** Longest delay any retry policy may produce, so a large retryCount cannot park a task for years. */
export const MAX_RETRY_DELAY_SECONDS = 86_400;

/**
 * Seconds to wait before retry number `retriesSoFar + 1`, following Conductor's policies:
 * FIXED waits `delay` each time, LINEAR_BACKOFF `delay × (n + 1)`, EXPONENTIAL_BACKOFF `delay × 2ⁿ`.
 */
export function retryDelaySeconds(logic: RetryLogic, delaySeconds: number, retriesSoFar: number): number {
  const base = Math.max(0, delaySeconds);
  let delay: number;
  switch (logic) {
    case "FIXED":
      delay = base;
      break;
    case "LINEAR_BACKOFF":
      delay = base * (retriesSoFar + 1);
      break;
    case "EXPONENTIAL_BACKOFF":
      delay = base * 2 ** retriesSoFar;
      break;
  }
  return Math.min(delay, MAX_RETRY_DELAY_SECONDS);
}
