/**
 * Sets `key` on `target` as an own, enumerable, writable property. For keys that come from outside (a
 * header name, a reference name): plain assignment with `__proto__` replaces the prototype instead of
 * adding a key, so the entry silently disappears. The object stays a plain one, as RPC cannot send an
 * object without a prototype.
 */
export function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
