import { SlidingWindowLog, type RateLimit, type RateVerdict } from "../worker/rate-limit/window";

/**
 * Recent webhook callbacks per task of one execution, for the per-task callback limit; in memory (an evicted object
 * forgets them, which only ever lets a caller try sooner). Holds the logs of the execution's present tasks only: a
 * long-lived loop of WAIT_FOR_WEBHOOK tasks with `keepLastN` would otherwise keep one log per iteration for as long as
 * its object stays in memory, where the execution itself stays the same size.
 */
export class CallbackLogs {
  readonly #logs = new Map<string, SlidingWindowLog>();

  /**
   * Counts a callback for task `taskId` at `now` and says whether it is over `rule` (the task accepts `rule.limit`
   * callbacks per window: the next one is refused). `presentTaskIds` gives the ids of
   * the execution's tasks as it stands: asked only for a task's first callback, when the logs of tasks no longer in it
   * (dropped by a loop's keepLastN, replaced by a restart) are forgotten. A callback for such a task is refused as
   * unknown before it is counted, so their logs could never decide anything again.
   */
  record(taskId: string, now: number, rule: RateLimit, presentTaskIds: () => ReadonlySet<string>): RateVerdict {
    let log = this.#logs.get(taskId);
    if (log === undefined) {
      if (this.#logs.size > 0) {
        const present = presentTaskIds();
        for (const known of this.#logs.keys()) if (!present.has(known)) this.#logs.delete(known);
      }
      log = new SlidingWindowLog();
      this.#logs.set(taskId, log);
    }
    return log.admit(now, rule);
  }

  /** How many tasks' logs are held. */
  get size(): number {
    return this.#logs.size;
  }
}
