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
const HEXTET = /^[0-9a-f]{1,4}$/i;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** An IPv4 address as two 16-bit groups, or undefined. */
function ipv4Groups(text: string): number[] | undefined {
  const octets = IPV4.exec(text)?.slice(1).map(Number);
  if (!octets || octets.some((octet) => octet > 255)) return undefined;
  return [(octets[0]! << 8) | octets[1]!, (octets[2]! << 8) | octets[3]!];
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a trailing dotted IPv4 part read), or undefined. */
function ipv6Groups(text: string): number[] | undefined {
  const halves = text.replace(/%.*$/, "").split("::");
  if (halves.length > 2) return undefined;
  const parse = (half: string, last: boolean): number[] | undefined => {
    const parts = half === "" ? [] : half.split(":");
    const groups: number[] = [];
    for (const [index, part] of parts.entries()) {
      if (last && index === parts.length - 1 && part.includes(".")) {
        const embedded = ipv4Groups(part);
        if (!embedded) return undefined;
        groups.push(...embedded);
      } else if (HEXTET.test(part)) groups.push(parseInt(part, 16));
      else return undefined;
    }
    return groups;
  };
  const head = parse(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? parse(halves[1]!, true) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : undefined;
}

/**
 * The network a client address is counted as: an IPv6 client by its /64, since one host commonly holds a
 * whole /64 and can move within it at will (`2001:db8::1` → `2001:db8:0:0::/64`); an IPv4-mapped address
 * (`::ffff:198.51.100.7`) as the IPv4 address; an IPv4 address, or anything that is not an address, as given.
 */
export function clientNetwork(address: string): string {
  if (!address.includes(":")) return address;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(":")}::/64`;
}

const clearedKey = (attempt: CredentialAttempt) => `${attempt.keyId}\u0000${clientNetwork(attempt.address)}`;

function limiters(env: Env, attempt: CredentialAttempt, limits: CredentialLimits) {
  const stub = (name: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
  const network = clientNetwork(attempt.address);
  return [
    { stub: stub(`credential:${attempt.keyId}@${network}`), rule: limits.perKeyAndAddress },
    { stub: stub(`address:${network}`), rule: limits.perAddress },
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
 * for the address (each read as its network, {@link clientNetwork}); once either reaches its limit every attempt is answered 429 with `Retry-After`, **the
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
    // Not INVALID_TOKEN: the official clients take that from their own token request as "get a new token", and
    // asking again with the same key from inside that request never ends.
    throw new ApiError(401, "INVALID_CREDENTIALS", "Unknown API key or wrong secret");
  }
  if (clearedAttempts.get(clearedKey(attempt))) return userId;
  const verdict = worst(await Promise.all(limiters(env, attempt, limits).map(({ stub, rule }) => stub.check(rule))));
  if (verdict) throw tooManyRequests(LIMITED, retryAfterSeconds(verdict));
  clearedAttempts.set(clearedKey(attempt), true);
  return userId;
}
