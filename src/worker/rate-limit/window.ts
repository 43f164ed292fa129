/** How many events a key may have within a window before it is limited. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/** Whether a key is limited now and, when it is, how long until it is not. */
export interface RateVerdict {
  limited: boolean;
  retryAfterMs: number;
}

/**
 * A sliding-window log: the times of recent events, oldest first. Pure (no clock of its own, no I/O), so the
 * limiter object and the execution actor share it and tests drive it with any time.
 */
export class SlidingWindowLog {
  #events: number[];

  constructor(events: readonly number[] = []) {
    this.#events = [...events];
  }

  /** The events still inside the window at `now` (what is worth persisting). */
  events(): readonly number[] {
    return this.#events;
  }

  /** Forgets events older than the window. */
  #prune(now: number, rule: RateLimit): void {
    const oldest = now - rule.windowMs;
    let drop = 0;
    while (drop < this.#events.length && this.#events[drop]! <= oldest) drop++;
    if (drop > 0) this.#events.splice(0, drop);
  }

  /** Whether the key has reached its limit, without counting anything. */
  check(now: number, rule: RateLimit): RateVerdict {
    this.#prune(now, rule);
    if (this.#events.length < rule.limit) return { limited: false, retryAfterMs: 0 };
    // Limited until enough old events leave the window for one more to fit.
    const freeing = this.#events[this.#events.length - rule.limit]!;
    return { limited: true, retryAfterMs: Math.max(1, freeing + rule.windowMs - now) };
  }

  /**
   * Counts one event (even a refused one: a client that keeps trying stays limited) and says where it stands
   * after it: the `limit`-th event of a window already answers limited, so a lockout starts with the failure
   * that reaches it (the credential limits).
   */
  record(now: number, rule: RateLimit): RateVerdict {
    this.#count(now, rule);
    return this.check(now, rule);
  }

  /**
   * Counts one event (a refused one too) and says whether it was over the limit: the first `limit` events of a
   * window are admitted, the next one is not. For a limit on what is accepted (`CALLBACKS_PER_TASK` callbacks
   * per window), where {@link record} would refuse the `limit`-th itself, and every event under a limit of 1.
   */
  admit(now: number, rule: RateLimit): RateVerdict {
    this.#prune(now, rule);
    const over = this.#events.length >= rule.limit;
    this.#count(now, rule);
    return over ? this.check(now, rule) : { limited: false, retryAfterMs: 0 };
  }

  #count(now: number, rule: RateLimit): void {
    this.#prune(now, rule);
    this.#events.push(now);
    // Bounded memory whatever the traffic: only the newest `limit` events decide anything.
    if (this.#events.length > rule.limit) this.#events.splice(0, this.#events.length - rule.limit);
  }
}

/** `Retry-After` seconds for a verdict (at least 1). */
export function retryAfterSeconds(verdict: RateVerdict): number {
  return Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
}
