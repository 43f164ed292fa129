import { describe, expect, it } from "vitest";
import { CallbackLogs } from "../../src/actors/callback-logs";
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

  it("admits `limit` events per window and refuses the next, counting it; a limit of 1 admits one", () => {
    const rule = { limit: 3, windowMs: 1000 };
    const log = new SlidingWindowLog();
    expect([0, 100, 200, 300].map((at) => log.admit(at, rule).limited)).toEqual([false, false, false, true]);
    // Refused ones count: at 1000 the window holds 100, 200, 300 and the refused 1000 itself, so it frees for one
    // more when 200 leaves it, at 1200 (when 100 leaves, at 1100, 200, 300 and 1000 still fill it).
    expect(log.admit(1000, rule)).toEqual({ limited: true, retryAfterMs: 200 });
    expect(log.check(1100, rule)).toEqual({ limited: true, retryAfterMs: 100 });
    expect(log.admit(1300, rule).limited).toBe(false);
    const single = new SlidingWindowLog();
    expect([single.admit(0, { limit: 1, windowMs: 1000 }).limited, single.admit(1, { limit: 1, windowMs: 1000 }).limited]).toEqual([false, true]);
  });
});

describe("retryAfterSeconds", () => {
  it("rounds up and is never 0", () => {
    expect(retryAfterSeconds({ limited: true, retryAfterMs: 1 })).toBe(1);
    expect(retryAfterSeconds({ limited: true, retryAfterMs: 1001 })).toBe(2);
  });
});

describe("CallbackLogs (the per-task webhook callback limit)", () => {
  it("limits each task on its own, and holds logs only for the execution's present tasks: a keepLastN loop of webhook tasks stays flat", () => {
    const rule = { limit: 2, windowMs: 60_000 };
    const logs = new CallbackLogs();
    // A DO_WHILE with keepLastN 2: iteration i's task is hook__i, the execution holds the latest three.
    const present = (iteration: number) => () => new Set([iteration - 2, iteration - 1, iteration].map((n) => `hook__${n}`));
    for (let iteration = 1; iteration <= 1_000; iteration++) logs.record(`hook__${iteration}`, iteration, rule, present(iteration));
    expect(logs.size).toBeLessThanOrEqual(3);
    // A present task's count is kept through the forgetting: its second callback is the last one it accepts.
    expect(logs.record("hook__1001", 1_001, rule, present(1_001)).limited).toBe(false);
    expect(logs.record("hook__1000", 1_002, rule, present(1_001)).limited).toBe(false);
    expect(logs.record("hook__1000", 1_003, rule, present(1_001)).limited).toBe(true);
    expect(logs.size).toBeLessThanOrEqual(3);
  });

  it("accepts CALLBACKS_PER_TASK callbacks per window and refuses the next: a limit of 1 accepts the one callback", () => {
    const logs = new CallbackLogs();
    const present = () => new Set(["hook"]);
    expect(logs.record("hook", 0, { limit: 1, windowMs: 60_000 }, present).limited).toBe(false);
    expect(logs.record("hook", 1, { limit: 1, windowMs: 60_000 }, present).limited).toBe(true);
  });
});
