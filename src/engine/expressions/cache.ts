/** A size-bounded memo, for parsed templates and the Worker's caches. */

/** The characters a key counts towards a cache's budget: a string's length, nothing for other keys. */
function keyChars(key: unknown): number {
  return typeof key === "string" ? key.length : 0;
}

/**
 * A Map that forgets its oldest entry once full: full of entries (`capacity`), or of the characters of its string keys
 * (`maxKeyChars`), whichever comes first. Insertion order is enough (no LRU touch on read) because the working set is
 * small and stable (the strings of the deployed definitions, the names started); a hit then costs a single Map lookup.
 * The character budget is what bounds memory when keys come from requests or data: a count alone let a few thousand
 * keys each as long as a URL or a definition's string hold hundreds of megabytes, over an isolate's 128 MB.
 */
export class BoundedCache<K, V> {
  private readonly held = new Map<K, V>();
  private heldKeyChars = 0;

  /**
   * @param capacity the most entries kept; must be at least 1
   * @param maxKeyChars the most characters their string keys hold together; a key longer than this is never kept
   */
  constructor(
    private readonly capacity: number,
    private readonly maxKeyChars = Number.POSITIVE_INFINITY,
  ) {}

  /** The cached value, or undefined when absent. */
  get(key: K): V | undefined {
    return this.held.get(key);
  }

  /** True when `key` is held (its value may be undefined). */
  has(key: K): boolean {
    return this.held.has(key);
  }

  /**
   * Stores a value, evicting the oldest entries first until it fits; a key already held keeps its place. A key over
   * the whole character budget is not kept: the caller computes its value again each time.
   */
  set(key: K, value: V): void {
    if (this.held.has(key)) {
      this.held.set(key, value);
      return;
    }
    const chars = keyChars(key);
    if (chars > this.maxKeyChars) return;
    while (this.held.size > 0 && (this.held.size >= this.capacity || this.heldKeyChars + chars > this.maxKeyChars)) {
      this.delete(this.held.keys().next().value as K);
    }
    this.held.set(key, value);
    this.heldKeyChars += chars;
  }

  /** Forgets `key`; true when it was held. */
  delete(key: K): boolean {
    if (!this.held.delete(key)) return false;
    this.heldKeyChars -= keyChars(key);
    return true;
  }

  /** Forgets every entry whose key satisfies `match` (all of them without one). */
  clear(match?: (key: K) => boolean): void {
    if (!match) {
      this.held.clear();
      this.heldKeyChars = 0;
      return;
    }
    for (const key of [...this.held.keys()]) if (match(key)) this.delete(key);
  }

  /** The keys held, oldest first. */
  keys(): IterableIterator<K> {
    return this.held.keys();
  }

  /** The entries held, oldest first (deleting the one just read while iterating is safe, as with a Map). */
  entries(): IterableIterator<[K, V]> {
    return this.held.entries();
  }

  /** Number of entries held; for tests of the bound. */
  get size(): number {
    return this.held.size;
  }

  /** Characters of the string keys held; for tests of the bound. */
  get keyChars(): number {
    return this.heldKeyChars;
  }
}
