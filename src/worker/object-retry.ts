import { ApiError } from "./http/errors";

/**
 * Durable Object calls that met a transient failure of the object (an eviction, a reset, a lost connection).
 *
 * workerd marks what a stub call throws: `.retryable` when the failure is transient (the same call may succeed once
 * the object is back), `.overloaded` when the object has more requests than it can take (retrying adds to the load).
 * Cloudflare's guide (developers.cloudflare.com/durable-objects/best-practices/error-handling) recommends retrying
 * idempotent calls on `.retryable` with a backoff and a fresh stub, never on `.overloaded`. The runtime itself retries
 * only calls that never reached the object; a call the object got before it went away is the caller's to repeat.
 */

/** How many more times a call safe to repeat is made after a transient failure. */
export const OBJECT_CALL_RETRIES = 2;
/** The waits before those retries: an evicted object is back for the next request, so a short one is enough. */
const RETRY_BACKOFF_MS: readonly number[] = [25, 100];
/** What a client that met an unreachable object is told to wait (`Retry-After`, seconds). */
export const OBJECT_UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** The flags workerd sets on an error a Durable Object stub threw. */
interface ObjectErrorFlags {
  retryable?: unknown;
  overloaded?: unknown;
}

function flagsOf(error: unknown): ObjectErrorFlags {
  return typeof error === "object" && error !== null ? (error as ObjectErrorFlags) : {};
}

/** True when `error` is a transient failure of a Durable Object that may be retried: `.retryable`, not `.overloaded`. */
export function isTransientObjectError(error: unknown): boolean {
  const flags = flagsOf(error);
  return flags.retryable === true && flags.overloaded !== true;
}

/** True when `error` says a Durable Object has more requests than it can take (`.overloaded`): never to be asked again soon. */
export function isOverloadedObjectError(error: unknown): boolean {
  return flagsOf(error).overloaded === true;
}

/** True when `error` says a Durable Object could not answer now (transient or overloaded), not that a request was wrong. */
export function isObjectUnavailable(error: unknown): boolean {
  const flags = flagsOf(error);
  return flags.retryable === true || flags.overloaded === true;
}

/**
 * Makes `call` on a fresh stub from `stub`, again (at most {@link OBJECT_CALL_RETRIES} more times, after a short
 * wait) while it fails transiently (see {@link isTransientObjectError}). Only for calls whose repetition after one
 * that landed answers what the caller should get: reads, and writes idempotent by construction. A fresh stub each
 * time, as Cloudflare advises: a failure can leave a stub broken. Any other error, or the last one, is thrown (the
 * router answers an object's unavailability with a 503, see {@link unavailableError}); so is one whose repeat
 * `mayRepeat` refuses (a request's budget of calls spent).
 */
export async function retryingObjectCall<S, T>(stub: () => S, call: (stub: S) => Promise<T>, mayRepeat: () => boolean = () => true): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call(stub());
    } catch (error) {
      // mayRepeat last: asked only for a repeat that would be made, so a budget it draws on pays for repeats alone.
      if (attempt >= OBJECT_CALL_RETRIES || !isTransientObjectError(error) || !mayRepeat()) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_BACKOFF_MS[attempt] ?? 100));
    }
  }
}

/**
 * The 503 for an error that says an object could not answer now (see {@link isObjectUnavailable}), else undefined:
 * the call was not retried (not safe to repeat: a start without an idempotency key, a poll) or kept failing. The
 * client may send the request again after `Retry-After`; whether the first one took effect is unknown.
 */
export function unavailableError(error: unknown): ApiError | undefined {
  if (!isObjectUnavailable(error)) return undefined;
  const overloaded = flagsOf(error).overloaded === true;
  const message = overloaded
    ? "The service is overloaded for this resource; try again later"
    : "The service could not finish this request now (an internal object was restarting); try again. A request that changes something may have taken effect";
  return new ApiError(503, "UNAVAILABLE", message, undefined, { "Retry-After": String(OBJECT_UNAVAILABLE_RETRY_AFTER_SECONDS) });
}
