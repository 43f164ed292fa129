/**
 * A small in-isolate cache with a time to live. Reads that hit it skip D1; writes in the same isolate
 * clear the affected entries at once, other isolates see a change within the TTL.
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; expires: number }>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;

  constructor(ttlMs: number, maxEntries = 10_000) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
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

  set(key: string, value: V): void {
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { value, expires: Date.now() + this.#ttlMs });
  }

  /** Removes one entry. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Removes entries whose key satisfies `match` (all of them without one). */
  clear(match?: (key: string) => boolean): void {
    if (!match) return this.#entries.clear();
    for (const key of [...this.#entries.keys()]) if (match(key)) this.#entries.delete(key);
  }

  /** The value for `key`, loading and caching it when absent. */
  async getOrLoad(key: string, load: () => Promise<V>): Promise<V> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const value = await load();
    this.set(key, value);
    return value;
  }
}
