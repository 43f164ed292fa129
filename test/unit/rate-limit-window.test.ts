import { describe, expect, it } from "vitest";
import { SlidingWindowLog, retryAfterSeconds } from "../../src/worker/rate-limit/window";

describe("SlidingWindowLog", () => {
  it("limits at the limit, frees as events leave the window, and keeps at most `limit` events", () => {
    const rule = { limit: 3, windowMs: 1000 };
    const log = new SlidingWindowLog();
    expect([log.record(0, rule).limited, log.record(100, rule).limited, log.record(200, rule).limited]).toEqual([false, false, true]);
    expect(log.check(200, rule)).toEqual({ limited: true, retryAfterMs: 800 });
    expect(log.check(1000, rule).limited).toBe(false);
    for (let at = 2000; at < 2100; at++) log.record(at, rule);
    expect(log.events()).toHaveLength(3);
    expect(log.check(3099, rule)).toEqual({ limited: false, retryAfterMs: 0 });
  });
});

describe("retryAfterSeconds", () => {
  it("rounds up and is never 0", () => {
    expect(retryAfterSeconds({ limited: true, retryAfterMs: 1 })).toBe(1);
    expect(retryAfterSeconds({ limited: true, retryAfterMs: 1001 })).toBe(2);
  });
});
