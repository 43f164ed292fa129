import { DurableObject } from "cloudflare:workers";
import { LATEST_ALARM_MILLIS } from "../worker/alarm-limit";
import { SlidingWindowLog, type RateLimit, type RateVerdict } from "../worker/rate-limit/window";

/**
 * Counts failed attempts for one key (an API key id and client address, or an address alone), so that
 * guessing secrets is limited across every isolate and location. The log is persisted, so neither eviction
 * nor a deploy clears a lockout. Once its window has passed with no failure since, the object empties its storage
 * (its alarm): a key is made of what the client sends (any key id, any address), so the objects of past failures,
 * kept, would add up for good.
 */
export class RateLimiter extends DurableObject<Env> {
  #log = new SlidingWindowLog();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.#log = new SlidingWindowLog((await ctx.storage.get<number[]>("events")) ?? []);
    });
  }

  /** Whether the key is limited now, counting nothing. */
  async check(rule: RateLimit): Promise<RateVerdict> {
    return this.#log.check(Date.now(), rule);
  }

  /**
   * Counts one failed attempt and says whether the key is now limited. The alarm is set for when this failure leaves
   * the window (`forgetAt`, stored with the log), moved on by each later one: by then every failure kept has left it.
   * A window reaching past what an alarm can hold (`AUTH_FAILURE_WINDOW_SECONDS` of centuries, meant as "for good")
   * arms the latest alarm there is, which finds the window still open and keeps the log (see {@link #armFor}).
   */
  async recordFailure(rule: RateLimit): Promise<RateVerdict> {
    const now = Date.now();
    const verdict = this.#log.record(now, rule);
    const forgetAt = now + rule.windowMs;
    await this.ctx.storage.put({ events: this.#log.events(), forgetAt });
    await this.#armFor(forgetAt);
    return verdict;
  }

  /** The window of the latest failure has passed: nothing kept decides anything any more, and the storage goes. */
  override async alarm(): Promise<void> {
    const forgetAt = await this.ctx.storage.get<number>("forgetAt");
    // Woken before its time (alarms may run early when retried): armed again for it, the lockout kept.
    if (forgetAt !== undefined && Date.now() < forgetAt) {
      if (Date.now() < LATEST_ALARM_MILLIS) await this.#armFor(forgetAt);
      return;
    }
    this.#log = new SlidingWindowLog();
    await this.ctx.storage.deleteAll();
  }

  /**
   * Arms the alarm for `forgetAt`, or for the latest time an alarm may have when it is later: `setAlarm` refuses a
   * date after 2189 (a rejected promise), which made every failed API key check a 500 under such a window.
   */
  async #armFor(forgetAt: number): Promise<void> {
    await this.ctx.storage.setAlarm(Math.min(forgetAt, LATEST_ALARM_MILLIS));
  }
}
