// The in-isolate cache of definitions, keys, grants and rules (src/worker/ttl-cache.ts): loads shared by callers
// asking at once, and writes that clear an entry while its load is under way.
import { describe, expect, it, vi } from "vitest";
import { NAME_CACHE_MAX_KEY_LENGTH, SHARED_LOAD_WAIT_MS, TTL_CACHE_MAX_ENTRIES, TTL_CACHE_MAX_KEY_CHARS, TTL_CACHE_MAX_KEY_LENGTH, TtlCache } from "../../src/worker/ttl-cache";

/** Loads that end when told to (`settle(i, …)`: the i-th started), counting how many were started. */
function controlledLoads<V>(): { load: () => Promise<V>; started: () => number; settle: (index: number, outcome: V | Error) => void } {
  const pending: Array<{ resolve: (value: V) => void; reject: (error: Error) => void }> = [];
  return {
    load: () => new Promise<V>((resolve, reject) => pending.push({ resolve, reject })),
    started: () => pending.length,
    settle: (index, outcome) => (outcome instanceof Error ? pending[index]!.reject(outcome) : pending[index]!.resolve(outcome)),
  };
}

describe("TtlCache.getOrLoad", () => {
  it("shares one load among callers asking while it is under way, and caches what it loaded", async () => {
    const cache = new TtlCache<string>(60_000);
    const loads = controlledLoads<string>();
    const asked = [cache.getOrLoad("orders", loads.load), cache.getOrLoad("orders", loads.load), cache.getOrLoad("orders", loads.load)];
    expect(loads.started()).toBe(1);
    loads.settle(0, "v1");
    expect(await Promise.all(asked)).toEqual(["v1", "v1", "v1"]);
    expect(await cache.getOrLoad("orders", loads.load)).toBe("v1");
    expect(loads.started()).toBe(1);
    // Another key loads on its own.
    const other = cache.getOrLoad("billing", loads.load);
    expect(loads.started()).toBe(2);
    loads.settle(1, "b1");
    expect(await other).toBe("b1");
  });

  it("does not keep a load that a write cleared while it ran: callers after the write load afresh", async () => {
    const writes: Array<(cache: TtlCache<string>) => void> = [(cache) => cache.delete("orders"), (cache) => cache.clear((key) => key === "orders"), (cache) => cache.clear()];
    for (const write of writes) {
      const cache = new TtlCache<string>(60_000);
      const loads = controlledLoads<string>();
      const before = cache.getOrLoad("orders", loads.load);
      write(cache);
      // Asked after the write: not joined to the load that may have read what the write replaced.
      const after = cache.getOrLoad("orders", loads.load);
      expect(loads.started()).toBe(2);
      // The older load ends first: its caller gets what it read, and the cache does not keep it.
      loads.settle(0, "old");
      expect(await before).toBe("old");
      expect(cache.get("orders")).toBeUndefined();
      // Asked now: joins the load after the write, which is kept.
      const joined = cache.getOrLoad("orders", loads.load);
      expect(loads.started()).toBe(2);
      loads.settle(1, "new");
      expect([await after, await joined]).toEqual(["new", "new"]);
      expect(cache.get("orders")).toBe("new");
    }
  });

  it("lets every caller of a failed load see the failure, and loads again on the next call", async () => {
    const cache = new TtlCache<string>(60_000);
    const loads = controlledLoads<string>();
    const asked = [cache.getOrLoad("orders", loads.load), cache.getOrLoad("orders", loads.load)];
    loads.settle(0, new Error("D1 unavailable"));
    for (const outcome of await Promise.allSettled(asked)) expect(outcome).toMatchObject({ status: "rejected", reason: { message: "D1 unavailable" } });
    const again = cache.getOrLoad("orders", loads.load);
    expect(loads.started()).toBe(2);
    loads.settle(1, "v1");
    expect(await again).toBe("v1");
  });

  it("does not hold callers for good behind a load that never settles (its request or object was canceled): after a bound they load on their own", async () => {
    vi.useFakeTimers();
    try {
      const cache = new TtlCache<string>(60_000);
      const loads = controlledLoads<string>();
      // The first load's caller was canceled mid-read: its load is never settled.
      void cache.getOrLoad("orders", loads.load);
      const waiting = [cache.getOrLoad("orders", loads.load), cache.getOrLoad("orders", loads.load)];
      await vi.advanceTimersByTimeAsync(SHARED_LOAD_WAIT_MS - 1);
      expect(loads.started()).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      // Both gave up on it together; one load again, shared by the two.
      expect(loads.started()).toBe(2);
      loads.settle(1, "v1");
      expect(await Promise.all(waiting)).toEqual(["v1", "v1"]);
      expect(cache.get("orders")).toBe("v1");
    } finally {
      vi.useRealTimers();
    }
  });
});

/** Loads of many keys that end when told to (`settle(i, …)`: the i-th started), noting the keys each was given. */
function controlledManyLoads(): { load: (keys: readonly string[]) => Promise<Map<string, string>>; asked: string[][]; settle: (index: number, outcome: Error | "values") => void } {
  const pending: Array<{ keys: readonly string[]; resolve: (value: Map<string, string>) => void; reject: (error: Error) => void }> = [];
  return {
    load: (keys) => new Promise((resolve, reject) => pending.push({ keys, resolve, reject })),
    get asked() {
      return pending.map((each) => [...each.keys]);
    },
    settle: (index, outcome) => {
      const load = pending[index]!;
      if (outcome instanceof Error) load.reject(outcome);
      else load.resolve(new Map(load.keys.map((key) => [key, `${key}#${index}`])));
    },
  };
}

describe("TtlCache.getOrLoadMany", () => {
  it("loads every key neither cached nor being loaded with one load, joins the loads under way, and caches what it loaded", async () => {
    const cache = new TtlCache<string>(60_000);
    cache.set("a", "cached");
    const single = controlledLoads<string>();
    const loadingB = cache.getOrLoad("b", single.load);
    const loads = controlledManyLoads();
    const many = cache.getOrLoadMany(["a", "b", "c", "d", "c"], loads.load);
    // One load, of the keys neither cached nor being loaded, each once.
    expect(loads.asked).toEqual([["c", "d"]]);
    // Asked meanwhile, one by one or together: they join it.
    const joined = [cache.getOrLoad("c", single.load), cache.getOrLoadMany(["d", "e"], loads.load)];
    expect(single.started()).toBe(1);
    expect(loads.asked).toEqual([["c", "d"], ["e"]]);
    loads.settle(0, "values");
    loads.settle(1, "values");
    single.settle(0, "b-single");
    expect(Object.fromEntries(await many)).toEqual({ a: "cached", b: "b-single", c: "c#0", d: "d#0" });
    expect(await joined[0]).toBe("c#0");
    expect(Object.fromEntries((await joined[1]) as Map<string, string>)).toEqual({ d: "d#0", e: "e#1" });
    expect(await loadingB).toBe("b-single");
    expect([cache.get("c"), cache.get("d"), cache.get("e")]).toEqual(["c#0", "d#0", "e#1"]);
  });

  it("answers keys all cached as soon as getOrLoad answers a cached key (a warm start's look-ups, on every start, take no load machinery)", async () => {
    const cache = new TtlCache<string | null>(60_000);
    cache.set("http_step1", null);
    cache.set("http_step2", "registered");
    const answered: string[] = [];
    const load = () => Promise.reject(new Error("not loaded: all cached"));
    const many = cache.getOrLoadMany(["http_step1", "http_step2"], load).then((values) => answered.push(`many ${JSON.stringify([...values])}`));
    const one = cache.getOrLoad("http_step2", load).then((value) => answered.push(`one ${value}`));
    await Promise.all([many, one]);
    expect(answered).toEqual([`many [["http_step1",null],["http_step2","registered"]]`, "one registered"]);
  });

  it("does not keep a key that a write cleared while it was loaded (the others are kept)", async () => {
    const cache = new TtlCache<string>(60_000);
    const loads = controlledManyLoads();
    const before = cache.getOrLoadMany(["orders", "billing"], loads.load);
    cache.delete("orders");
    // Asked after the write: loaded afresh, not joined to the load that may have read what the write replaced.
    const after = cache.getOrLoadMany(["orders", "billing"], loads.load);
    expect(loads.asked).toEqual([["orders", "billing"], ["orders"]]);
    loads.settle(0, "values");
    expect(Object.fromEntries(await before)).toEqual({ orders: "orders#0", billing: "billing#0" });
    expect([cache.get("orders"), cache.get("billing")]).toEqual([undefined, "billing#0"]);
    loads.settle(1, "values");
    expect(Object.fromEntries(await after)).toEqual({ orders: "orders#1", billing: "billing#0" });
    expect(cache.get("orders")).toBe("orders#1");
  });

  it("lets the caller and those who joined see a failed load, and loads again on the next call", async () => {
    const cache = new TtlCache<string>(60_000);
    const loads = controlledManyLoads();
    const asked = [cache.getOrLoadMany(["orders", "billing"], loads.load), cache.getOrLoad("billing", () => Promise.resolve("never"))];
    loads.settle(0, new Error("D1 unavailable"));
    for (const outcome of await Promise.allSettled(asked)) expect(outcome).toMatchObject({ status: "rejected", reason: { message: "D1 unavailable" } });
    const again = cache.getOrLoadMany(["orders"], loads.load);
    expect(loads.asked).toEqual([["orders", "billing"], ["orders"]]);
    loads.settle(1, "values");
    expect(Object.fromEntries(await again)).toEqual({ orders: "orders#1" });
  });

  it("does not hold a caller for good behind a load that never settles: after a bound it loads those keys itself", async () => {
    vi.useFakeTimers();
    try {
      const cache = new TtlCache<string>(60_000);
      const single = controlledLoads<string>();
      // The first load's caller was canceled mid-read: its load is never settled.
      void cache.getOrLoad("orders", single.load);
      const loads = controlledManyLoads();
      const waiting = cache.getOrLoadMany(["orders", "billing"], loads.load);
      expect(loads.asked).toEqual([["billing"]]);
      loads.settle(0, "values");
      await vi.advanceTimersByTimeAsync(SHARED_LOAD_WAIT_MS);
      expect(loads.asked).toEqual([["billing"], ["orders"]]);
      loads.settle(1, "values");
      expect(Object.fromEntries(await waiting)).toEqual({ orders: "orders#1", billing: "billing#0" });
      expect(cache.get("orders")).toBe("orders#1");
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("TtlCache bounds", () => {
  /** A long name (4 KB, within the longest key kept), the `i`-th of many: a start of a workflow nobody registered. */
  const longName = (i: number) => `${i}:`.padEnd(4 * 1024, "x");

  it("keeps the characters of its keys under TTL_CACHE_MAX_KEY_CHARS: distinct long names asked for (absent, cached as such) cannot fill the isolate", async () => {
    const cache = new TtlCache<string | null>(60_000);
    for (let i = 0; i < 300; i++) expect(await cache.getOrLoad(longName(i), () => Promise.resolve(null))).toBeNull();
    expect(cache.keyChars).toBeLessThanOrEqual(TTL_CACHE_MAX_KEY_CHARS);
    expect(cache.size).toBe(Math.floor(TTL_CACHE_MAX_KEY_CHARS / longName(0).length));
    // The newest are kept, the oldest went first.
    expect(cache.get(longName(299))).toBeNull();
    expect(cache.get(longName(0))).toBeUndefined();
  });

  it("keeps at most TTL_CACHE_MAX_ENTRIES entries, and a key set again takes no second place", () => {
    const cache = new TtlCache<number>(60_000);
    for (let i = 0; i < TTL_CACHE_MAX_ENTRIES + 50; i++) cache.set(`workflow-${i}`, i);
    expect(cache.size).toBe(TTL_CACHE_MAX_ENTRIES);
    cache.set(`workflow-${TTL_CACHE_MAX_ENTRIES + 49}`, -1);
    expect(cache.size).toBe(TTL_CACHE_MAX_ENTRIES);
    // Replacing a key at full size evicts nothing.
    expect(cache.get("workflow-50")).toBe(50);
  });

  it("forgets the keys of loads that never settle (their requests were canceled) once as many are tracked as entries may be kept", () => {
    const cache = new TtlCache<string>(60_000, { maxEntries: 3 });
    const never = controlledLoads<string>();
    for (let i = 0; i < 10; i++) void cache.getOrLoad(`token-${i}`, never.load);
    expect(never.started()).toBe(10);
    expect(cache.loads).toBe(3);
  });

  it("forgets loads that never settle by the characters of their keys too", () => {
    const cache = new TtlCache<string>(60_000);
    const never = controlledLoads<string>();
    for (let i = 0; i < 300; i++) void cache.getOrLoadMany([longName(i)], (keys) => never.load().then((value) => new Map(keys.map((key) => [key, value]))));
    expect(cache.loads).toBe(Math.floor(TTL_CACHE_MAX_KEY_CHARS / longName(0).length));
  });

  it("removes expired entries as it adds others, not only when each is read again: a burst of names asked once leaves nothing held past the TTL", () => {
    vi.useFakeTimers();
    try {
      const cache = new TtlCache<string>(1_000);
      for (let i = 0; i < 500; i++) cache.set(`workflow-${i}`, "large definition");
      expect(cache.size).toBe(500);
      vi.advanceTimersByTime(600);
      cache.set("fresh", "v");
      expect(cache.size).toBe(501);
      vi.advanceTimersByTime(400);
      cache.set("later", "v");
      // The 500 expired and went; those set within the TTL stay.
      expect(cache.size).toBe(2);
      expect(cache.get("fresh")).toBe("v");
    } finally {
      vi.useRealTimers();
    }
  });

  it("answers a load it forgot to make room, without caching it (as one a write cleared)", async () => {
    const cache = new TtlCache<string>(60_000, { maxEntries: 1 });
    const loads = controlledLoads<string>();
    const first = cache.getOrLoad("orders", loads.load);
    void cache.getOrLoad("billing", loads.load);
    loads.settle(0, "o1");
    expect(await first).toBe("o1");
    expect(cache.get("orders")).toBeUndefined();
  });

  it("neither keeps nor tracks a load under a key longer than it keeps: a few long made-up names (or tokens) cannot push the entries in use out", async () => {
    const cache = new TtlCache<string | null>(60_000, { maxKeyLength: NAME_CACHE_MAX_KEY_LENGTH });
    await cache.getOrLoad("orders\u0000latest", async () => "in use");
    const longName = `orders_${"x".repeat(NAME_CACHE_MAX_KEY_LENGTH)}\u0000latest`;
    // TTL_CACHE_MAX_KEY_CHARS of such misses asked for: kept, they would have pushed the entry in use out.
    for (let i = 0; i < TTL_CACHE_MAX_KEY_CHARS / NAME_CACHE_MAX_KEY_LENGTH + 10; i++) {
      expect(await cache.getOrLoad(`${i}${longName}`, async () => null)).toBeNull();
    }
    expect(cache.get("orders\u0000latest")).toBe("in use");
    expect(cache.size).toBe(1);
    // Each ask of a key too long loads again (nothing kept), and no load of one is tracked while it runs.
    const loads = controlledLoads<string | null>();
    const asked = [cache.getOrLoad(longName, loads.load), cache.getOrLoad(longName, loads.load)];
    expect(loads.started()).toBe(2);
    expect(cache.loads).toBe(0);
    loads.settle(0, null);
    loads.settle(1, null);
    expect(await Promise.all(asked)).toEqual([null, null]);
    const many = await cache.getOrLoadMany([longName, "orders\u0000latest"], async (missing) => new Map(missing.map((key) => [key, null])));
    expect(Object.fromEntries(many)).toEqual({ [longName]: null, "orders\u0000latest": "in use" });
    expect(cache.size).toBe(1);
  });

  it("keeps keys up to TTL_CACHE_MAX_KEY_LENGTH by default (an access token is about 1 KB), not longer", () => {
    const cache = new TtlCache<string>(60_000);
    cache.set("t".repeat(TTL_CACHE_MAX_KEY_LENGTH), "kept");
    cache.set("t".repeat(TTL_CACHE_MAX_KEY_LENGTH + 1), "not kept");
    expect(cache.get("t".repeat(TTL_CACHE_MAX_KEY_LENGTH))).toBe("kept");
    expect(cache.get("t".repeat(TTL_CACHE_MAX_KEY_LENGTH + 1))).toBeUndefined();
  });
});
