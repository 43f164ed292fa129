import { serviceConfig } from "../config";
import { ApiError, tooManyRequests } from "../http/errors";
import { retryAfterSeconds, type RateLimit, type RateVerdict } from "../rate-limit/window";
import { TtlCache } from "../ttl-cache";

/** Limits on failed credential checks (see `AUTH_FAILURES_PER_KEY` and friends). */
export interface CredentialLimits {
  /** Failures of one API key id from one client address. */
  perKeyAndAddress: RateLimit;
  /** Failures of any key from one client address (spraying many key ids). */
  perAddress: RateLimit;
}

/** What a credential check is about: which key, with which secret, from where. */
export interface CredentialAttempt {
  keyId: string;
  keySecret: string;
  address: string;
}

/**
 * The client's address: `CF-Connecting-IP`, which Cloudflare sets on every request and a client cannot
 * forge there. Locally (wrangler dev, tests) it may be absent: all such clients then share one address.
 */
export function clientAddress(request: Request): string {
  return request.headers.get("cf-connecting-ip")?.trim() || "unknown";
}

/**
 * Key ids recently found valid and not limited at an address, so a busy client pays the limiter once per half
 * minute instead of on every request. A failure at that address drops the entry at once; a lockout reached
 * elsewhere applies here within the half minute, and only to a caller holding the right secret.
 */
const clearedAttempts = new TtlCache<true>(30_000);
const clearedKey = (attempt: CredentialAttempt) => `${attempt.keyId}\u0000${attempt.address}`;

function limiters(env: Env, attempt: CredentialAttempt, limits: CredentialLimits) {
  const stub = (name: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
  return [
    { stub: stub(`credential:${attempt.keyId}@${attempt.address}`), rule: limits.perKeyAndAddress },
    { stub: stub(`address:${attempt.address}`), rule: limits.perAddress },
  ];
}

function worst(verdicts: RateVerdict[]): RateVerdict | undefined {
  const limited = verdicts.filter((verdict) => verdict.limited);
  if (limited.length === 0) return undefined;
  return limited.reduce((a, b) => (a.retryAfterMs >= b.retryAfterMs ? a : b));
}

const LIMITED = "Too many failed attempts with this API key from this address";

/**
 * Runs a credential check under brute-force limits. A failure is counted for the key id at this address and
 * for the address; once either reaches its limit every attempt is answered 429 with `Retry-After`, **the
 * right secret included**, until the window has passed, so guessing gains nothing. The limits are kept by
 * `RateLimiter` objects, the same for every isolate and location.
 *
 * `check` answers the user id, or undefined when the credential is wrong.
 */
export async function throttledCredentialCheck(
  env: Env,
  attempt: CredentialAttempt,
  check: () => Promise<string | undefined>,
  limits: CredentialLimits = serviceConfig(env).credentialLimits,
): Promise<string> {
  const userId = await check();
  if (userId === undefined) {
    clearedAttempts.delete(clearedKey(attempt));
    const verdict = worst(await Promise.all(limiters(env, attempt, limits).map(({ stub, rule }) => stub.recordFailure(rule))));
    if (verdict) throw tooManyRequests(LIMITED, retryAfterSeconds(verdict));
    throw new ApiError(401, "INVALID_TOKEN", "Unknown API key or wrong secret");
  }
  if (clearedAttempts.get(clearedKey(attempt))) return userId;
  const verdict = worst(await Promise.all(limiters(env, attempt, limits).map(({ stub, rule }) => stub.check(rule))));
  if (verdict) throw tooManyRequests(LIMITED, retryAfterSeconds(verdict));
  clearedAttempts.set(clearedKey(attempt), true);
  return userId;
}
