/**
 * The runtime's words for a call refused past the invocation's count (see developers.cloudflare.com/workers/platform/limits/,
 * Subrequests): `fetch()` past its subrequests throws "Too many subrequests", and a call to a Cloudflare service (D1, a
 * Durable Object, KV) past that count throws "Too many API requests by single Worker invocation." instead, as deployed
 * Workers report it (Cloudflare's docs give neither wording). Only the whole phrase: a bare "too many API requests"
 * could be some service's own rate limit, which is no refusal of the runtime's.
 */
const SUBREQUEST_LIMIT_MESSAGE = /too many subrequests|too many api requests by (?:a )?single worker invocation/i;

/**
 * True when `error` is the runtime's refusal of a subrequest past the invocation's count (see
 * {@link SUBREQUEST_LIMIT_MESSAGE}): nothing was sent, and the same call succeeds from a fresh invocation. workerd
 * does not count subrequests locally; only a deployed Worker throws it.
 */
export function isSubrequestLimitError(error: unknown): boolean {
  return error instanceof Error && SUBREQUEST_LIMIT_MESSAGE.test(error.message);
}
