/** A size-bounded memo for parsed templates. */

/**
 * A Map that forgets its oldest entry once full. Insertion order is enough (no LRU touch on
 * read) because the working set is the strings of the deployed definitions, which is small and
 * stable; a hit then costs a single Map lookup.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();

  /** @param capacity the most entries kept; must be at least 1 */
  constructor(private readonly capacity: number) {}

  /** The cached value, or undefined when absent. */
  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Stores a value, evicting the oldest entry first when the cache is full. */
  set(key: K, value: V): void {
    if (!this.entries.has(key) && this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, value);
  }

  /** Number of entries held; for tests of the bound. */
  get size(): number {
    return this.entries.size;
  }
}
