import { BoundedCache } from "../engine/expressions/cache";

/**
 * Longest a caller waits for a load another caller began before it loads on its own. A load begun by a request or a
 * Durable Object that was then canceled (an eviction) never settles, and a promise of a canceled I/O context never
 * resumes those awaiting it from another one: without a bound, every later caller of that key in the isolate would
 * hang for good (an owed start of that workflow, every API start of it). A D1 read takes milliseconds; one slower
 * than this is merely read twice.
 */
export const SHARED_LOAD_WAIT_MS = 2_000;

/** What waiting at most `ms` for `promise` gave: its value or error, or nothing yet. */
export async function settledWithin<V>(promise: Promise<V>, ms: number): Promise<{ value: V } | { error: unknown } | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise.then((value) => ({ value }), (error: unknown) => ({ error })), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A copy of `key` sharing no memory with the string it was cut from. Keys come from requests (a header, a path, a
 * body) and a slice keeps its whole source alive: kept as a key, a short id or token cut from a padded header would
 * hold all of it for as long as the entry stays.
 */
function ownCopy(key: string): string {
  return Array.from(key).join("");
}

/** Most entries a {@link TtlCache} keeps (and most loads it tracks), unless told otherwise. */
export const TTL_CACHE_MAX_ENTRIES = 10_000;

/**
 * Most characters the keys of a {@link TtlCache}'s entries hold together (and those of its loads), unless told
 * otherwise: 1 to 2 MB. Keys come from requests (a workflow name in a path, up to a URL's 16 KB, whose absence is
 * cached too), so a count alone let ten thousand such names hold 160 MB, over an isolate's 128 MB. Far above what the
 * service's own keys need: names are at most 255 characters, and most are a few dozen.
 */
export const TTL_CACHE_MAX_KEY_CHARS = 1_000_000;

/**
 * Longest key a {@link TtlCache} keeps (or tracks a load of), unless told otherwise: a value under a longer key is loaded
 * each time it is asked for. Above every key the service makes of its own (an access token is about 1 KB); a longer one
 * comes from a request (a made-up bearer token, a name no definition can have), and kept it would cost a copy of it (see
 * {@link ownCopy}) and a share of {@link TTL_CACHE_MAX_KEY_CHARS} that a few such requests would fill, pushing every
 * entry the service's own requests use out.
 */
export const TTL_CACHE_MAX_KEY_LENGTH = 8_192;

/**
 * Longest key of the caches of definitions by name (workflow and task definitions, schemas, environment variables):
 * a name of at most 255 characters (each kind's limit; twice as many UTF-16 units for characters beyond the BMP) and a version. A start or read naming a longer one, which no
 * definition has, reads D1 and is not cached: about four thousand such requests would otherwise fill the cache's
 * character budget with misses and push out the definitions in use.
 */
export const NAME_CACHE_MAX_KEY_LENGTH = 1_024;

/**
 * A small in-isolate cache with a time to live. Reads that hit it skip D1; writes in the same isolate
 * clear the affected entries at once, other isolates see a change within the TTL. Bounded by its entries and by the
 * characters of their keys (see {@link BoundedCache}): the oldest go first.
 */
export class TtlCache<V> {
  readonly #entries: BoundedCache<string, { value: V; expires: number }>;
  /**
   * Loads under way by {@link TtlCache.getOrLoad}, by key: callers asking meanwhile share one instead of starting their
   * own. Bounded as the entries are: a load whose request or object was canceled never settles, so its key would be
   * left here for good (another caller of that key replaces it, but a key asked once never is); one forgotten to make
   * room is merely not cached when it ends, as one a write cleared.
   */
  readonly #loading: BoundedCache<string, Promise<V>>;
  readonly #ttlMs: number;
  readonly #maxKeyLength: number;

  constructor(ttlMs: number, { maxEntries = TTL_CACHE_MAX_ENTRIES, maxKeyChars = TTL_CACHE_MAX_KEY_CHARS, maxKeyLength = TTL_CACHE_MAX_KEY_LENGTH } = {}) {
    this.#ttlMs = ttlMs;
    this.#maxKeyLength = maxKeyLength;
    this.#entries = new BoundedCache(maxEntries, maxKeyChars);
    this.#loading = new BoundedCache(maxEntries, maxKeyChars);
  }

  /** The cached value, or undefined when absent or expired. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /**
   * Keeps `value` for the TTL, under a copy of `key` (see {@link ownCopy}); the oldest entries go when full, and the
   * expired ones at the front go first: a TTL checked only on read removes nothing, and entries nobody asks for again (a
   * burst of names, large definitions read once) would stay until ten thousand others pushed them out.
   */
  set(key: string, value: V): void {
    if (!this.#keeps(key)) return;
    const now = Date.now();
    for (const [oldest, entry] of this.#entries.entries()) {
      if (entry.expires > now) break;
      this.#entries.delete(oldest);
    }
    // Replaced, not updated in place: a fresh entry goes last, as one added now would, so the entries stay in the order
    // they expire in (one TTL for all), and the sweep above stops at the first one not expired.
    this.#entries.delete(key);
    this.#entries.set(ownCopy(key), { value, expires: now + this.#ttlMs });
  }

  /** Whether a value (or a load) under `key` is kept: not one under a key longer than the cache keeps (see {@link TTL_CACHE_MAX_KEY_LENGTH}). */
  #keeps(key: string): boolean {
    return key.length <= this.#maxKeyLength;
  }

  /** Removes one entry, and forgets a load of it under way (its value is not kept, see {@link TtlCache.getOrLoad}). */
  delete(key: string): void {
    this.#entries.delete(key);
    this.#loading.delete(key);
  }

  /** Removes entries whose key satisfies `match` (all of them without one), and forgets their loads under way. */
  clear(match?: (key: string) => boolean): void {
    this.#entries.clear(match);
    this.#loading.clear(match);
  }

  /** Entries held (expired ones included until read or swept by a later set); for tests of the bound. */
  get size(): number {
    return this.#entries.size;
  }

  /** Characters of the keys of the entries held; for tests of the bound. */
  get keyChars(): number {
    return this.#entries.keyChars;
  }

  /** Loads tracked as under way; for tests of the bound. */
  get loads(): number {
    return this.#loading.size;
  }

  /**
   * The value for `key`, loading and caching it when absent. Callers asking while a load of the key is under way
   * share it (a burst of requests for one definition reads D1 once), each waiting for it at most
   * {@link SHARED_LOAD_WAIT_MS}. A load that a write cleared while it ran ({@link TtlCache.delete},
   * {@link TtlCache.clear}) answers those who asked before the write but is not cached: it may have read what the
   * write replaced, and callers after the write load afresh.
   */
  async getOrLoad(key: string, load: () => Promise<V>): Promise<V> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const underway = this.#loading.get(key);
    if (underway !== undefined) {
      const shared = await settledWithin(underway, SHARED_LOAD_WAIT_MS);
      if (shared !== undefined) {
        if ("error" in shared) throw shared.error;
        return shared.value;
      }
      // Not settled in time (its caller may have been canceled): forgotten, so this caller (or one that got here
      // first) loads afresh, and later ones share that load.
      if (this.#loading.get(key) === underway) this.#loading.delete(key);
      return this.getOrLoad(key, load);
    }
    const loading = load();
    if (this.#keeps(key)) this.#loading.set(ownCopy(key), loading);
    try {
      const value = await loading;
      if (this.#loading.get(key) === loading) this.set(key, value);
      return value;
    } finally {
      if (this.#loading.get(key) === loading) this.#loading.delete(key);
    }
  }

  /**
   * The values of `keys`, as {@link TtlCache.getOrLoad} would give each, but with one `load` for all the keys neither
   * cached nor being loaded: a start looking up many names makes one D1 statement, not one per name (Workers Free allows
   * 50 an invocation). `load` is given those keys and must answer a value for each. Keys being loaded by another caller
   * share that load, as with getOrLoad (bounded by {@link SHARED_LOAD_WAIT_MS}); a key a write clears while its load
   * runs is answered but not cached.
   */
  async getOrLoadMany(keys: readonly string[], load: (missing: readonly string[]) => Promise<ReadonlyMap<string, V>>): Promise<Map<string, V>> {
    const values = new Map<string, V>();
    const shared: Array<[string, Promise<V>]> = [];
    const missing: string[] = [];
    for (const key of new Set(keys)) {
      const cached = this.get(key);
      const underway = cached === undefined ? this.#loading.get(key) : undefined;
      if (cached !== undefined) values.set(key, cached);
      else if (underway !== undefined) shared.push([key, underway]);
      else missing.push(key);
    }
    // All cached (a warm start's usual case): answered without the machinery of loads below.
    if (shared.length === 0 && missing.length === 0) return values;
    const late: string[] = [];
    const joined = async ([key, underway]: [string, Promise<V>]): Promise<void> => {
      const settled = await settledWithin(underway, SHARED_LOAD_WAIT_MS);
      if (settled === undefined) {
        // As getOrLoad: a load not settled in time is forgotten, and its keys loaded afresh below.
        if (this.#loading.get(key) === underway) this.#loading.delete(key);
        late.push(key);
      } else if ("error" in settled) throw settled.error;
      else values.set(key, settled.value);
    };
    const [loaded] = await Promise.all([missing.length === 0 ? new Map<string, V>() : this.#loadTogether(missing, load), Promise.all(shared.map(joined))]);
    for (const [key, value] of loaded) values.set(key, value);
    if (late.length > 0) for (const [key, value] of await this.getOrLoadMany(late, load)) values.set(key, value);
    return values;
  }

  /**
   * One load of `keys`, each registered as being loaded (so callers asking meanwhile share it, and a write meanwhile
   * keeps it from being cached), each value cached unless a write cleared its key while it ran.
   */
  async #loadTogether(keys: readonly string[], load: (missing: readonly string[]) => Promise<ReadonlyMap<string, V>>): Promise<Map<string, V>> {
    const loading = load(keys);
    const each = new Map(keys.map((key) => [key, loading.then((found) => found.get(key) as V)]));
    for (const [key, promise] of each) {
      // Awaited only by callers that join it: a failure nobody joined is still the caller's own, thrown below.
      promise.catch(() => undefined);
      if (this.#keeps(key)) this.#loading.set(ownCopy(key), promise);
    }
    try {
      const found = await loading;
      const values = new Map<string, V>();
      for (const key of keys) {
        const value = found.get(key) as V;
        values.set(key, value);
        if (this.#loading.get(key) === each.get(key)) this.set(key, value);
      }
      return values;
    } finally {
      for (const [key, promise] of each) if (this.#loading.get(key) === promise) this.#loading.delete(key);
    }
  }
}
