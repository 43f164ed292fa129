import { DurableObject } from "cloudflare:workers";
import { SlidingWindowLog, type RateLimit, type RateVerdict } from "../worker/rate-limit/window";

/**
 * Counts failed attempts for one key (an API key id and client address, or an address alone), so that
 * guessing secrets is limited across every isolate and location. The log is persisted, so neither eviction
 * nor a deploy clears a lockout.
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

  /** Counts one failed attempt and says whether the key is now limited. */
  async recordFailure(rule: RateLimit): Promise<RateVerdict> {
    const verdict = this.#log.record(Date.now(), rule);
    await this.ctx.storage.put("events", this.#log.events());
    return verdict;
  }
}
