/**
 * True when `error` is the runtime's refusal of a subrequest past the invocation's count ("Too many subrequests", see
 * developers.cloudflare.com/workers/platform/limits/): nothing was sent, and the same call succeeds from a fresh
 * invocation. workerd does not count subrequests locally; only a deployed Worker throws it.
 */
export function isSubrequestLimitError(error: unknown): boolean {
  return error instanceof Error && /too many subrequests/i.test(error.message);
}
