/**
 * Callers inside a Durable Object waiting, each for at most its own time, until something happens there (a change
 * of the execution, a push to a queue). In memory only: an evicted object's waiters are gone with their requests.
 */
export class WakeSignal {
  readonly #waiters = new Set<() => void>();

  /** Resolves at the next {@link WakeSignal.wakeAll}, or after `waitMs`. */
  next(waitMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        resolve();
      }, waitMs);
      this.#waiters.add(wake);
    });
  }

  /** Wakes every caller waiting now. */
  wakeAll(): void {
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }
}
