import { createRemoteJWKSet, customFetch, decodeJwt, errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from "jose";
import { readBounded } from "../http/body";
import { ApiError } from "../http/errors";
import { urlForLog } from "../http/url-for-log";
import { bearerToken } from "./bearer";
import { grantsFor } from "./grants";
import type { Principal } from "./principal";
import type { AuthProvider } from "./provider";

/** Algorithms accepted from an external issuer: asymmetric only, so a public key can never act as an HMAC secret. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];

/**
 * How long after a failed fetch of the issuer's keys no other fetch is made (and `Retry-After`): jose's cooldown
 * (`cooldownDuration`) counts only from a successful fetch, so while the issuer's JWKS endpoint is down or slow every
 * request bearing a token of that issuer (a forged one too: the issuer is read before any check) would fetch again
 * and wait up to jose's 5 s timeout, turning a flood of requests into a flood on the issuer.
 */
export const JWKS_RETRY_AFTER_SECONDS = 5;
/** Largest JWKS document read: a key set is a few KiB; more is refused before it is buffered or parsed. */
export const JWKS_MAX_BYTES = 256 * 1024;

/** The issuer's keys could not be fetched (unreachable, slow, not 200, over JWKS_MAX_BYTES, not a key set). */
class IssuerKeysUnavailable extends Error {
  constructor(reason: string, options?: { cause: unknown }) {
    super(reason, options);
    this.name = "IssuerKeysUnavailable";
  }
}

/** One JWKS URL's keys (jose's cache and rotation) and when a fetch may next be tried after one failed. */
interface IssuerKeys {
  readonly set: ReturnType<typeof createRemoteJWKSet>;
  retryAt: number;
  /** The fetch under way in this isolate, which requests needing the keys meanwhile wait for instead of fetching too. */
  pending: { body: Promise<Uint8Array>; since: number } | undefined;
}

/**
 * How long a fetch under way is waited for by other requests before one of them fetches on its own: jose's timeout
 * (5 s) bounds a fetch, so one older than this belongs to a request that was canceled and will never settle.
 */
const JWKS_PENDING_STALE_MS = 6_000;

const jwksByUrl = new Map<string, IssuerKeys>();

/** A plain JSON object (not an array, not null). */
function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * True for what jose's key set takes (`{keys: [object…]}`, its isJwkSet): one it refuses is refused here, where the
 * failure holds further fetches back, not after this fetch counted as a success (then each request fetched it again).
 */
function isKeySet(value: unknown): boolean {
  return isJsonObject(value) && Array.isArray(value.keys) && value.keys.every(isJsonObject);
}

/** The issuer's key set, read up to {@link JWKS_MAX_BYTES} and checked to be one jose takes. */
async function fetchKeySet(input: string, init: RequestInit): Promise<Uint8Array> {
  const response = await fetch(input, init);
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new IssuerKeysUnavailable(`HTTP ${response.status}`);
  }
  const body = await readBounded(response.body, JWKS_MAX_BYTES);
  if (body === "too-large") throw new IssuerKeysUnavailable(`the key set is over ${JWKS_MAX_BYTES} bytes`);
  if (!isKeySet(JSON.parse(new TextDecoder().decode(body)))) throw new IssuerKeysUnavailable("not a JSON Web Key Set");
  return body;
}

/** {@link fetchKeySet}, a failure logged (never the token) and holding further fetches back. */
async function fetchKeySetOrHold(entry: IssuerKeys, url: string, input: string, init: RequestInit): Promise<Uint8Array> {
  try {
    return await fetchKeySet(input, init);
  } catch (error) {
    entry.retryAt = Date.now() + JWKS_RETRY_AFTER_SECONDS * 1000;
    const reason = error instanceof IssuerKeysUnavailable ? error.message : error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    console.error(JSON.stringify({ msg: "OAuth issuer keys could not be fetched", url: urlForLog(url), reason }));
    throw error instanceof IssuerKeysUnavailable ? error : new IssuerKeysUnavailable(reason, { cause: error });
  }
}

/** `body`, or a failure once `signal` (this request's own jose timeout) aborts first. */
async function waitedFor(body: Promise<Uint8Array>, signal: AbortSignal | null | undefined): Promise<Uint8Array> {
  if (!signal) return body;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new IssuerKeysUnavailable("no answer in time to the fetch under way"));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([body, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort!);
  }
}

/**
 * The fetch jose uses for the JWKS: the body is read up to {@link JWKS_MAX_BYTES} (jose reads any length whole), and a
 * failure (not 200, too large, not a key set, or no answer within jose's timeout) is logged (never the token) and holds
 * further fetches back for {@link JWKS_RETRY_AFTER_SECONDS}. Requests needing the keys while a fetch is under way wait
 * for it: jose shares no fetch between requests on Workers, so while an issuer was slow to fail each request fetched.
 */
function jwksFetch(keys: () => IssuerKeys, url: string): (input: string, init: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const entry = keys();
    if (Date.now() < entry.retryAt) throw new IssuerKeysUnavailable("a fetch failed moments ago");
    let body: Uint8Array;
    if (entry.pending && Date.now() - entry.pending.since < JWKS_PENDING_STALE_MS) {
      body = await waitedFor(entry.pending.body, init.signal);
    } else {
      const pending = { body: fetchKeySetOrHold(entry, url, input, init), since: Date.now() };
      entry.pending = pending;
      try {
        body = await pending.body;
      } finally {
        if (entry.pending === pending) entry.pending = undefined;
      }
    }
    return new Response(body.slice(), { status: 200, headers: { "content-type": "application/json" } });
  };
}

function jwks(url: string): IssuerKeys {
  let entry = jwksByUrl.get(url);
  if (!entry) {
    // jose caches the keys and refetches on an unknown kid (rotation), with a cooldown against floods after a success;
    // jwksFetch adds one after a failure, and the size bound.
    const created: IssuerKeys = { set: createRemoteJWKSet(new URL(url), { [customFetch]: jwksFetch(() => created, url) }), retryAt: 0, pending: undefined };
    entry = created;
    jwksByUrl.set(url, entry);
  }
  return entry;
}

/** Hosts an `http:` JWKS URL may name: this machine only, for an issuer run locally in development. */
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Refuses an `OAUTH_JWKS_URL` that is unset or no URL, or that is not `https:` (outside a loopback host): keys fetched in the
 * clear can be swapped on the way by anyone on the path, who could then sign tokens the service takes for the issuer's
 * (FAPI 2.0 Security Profile: a jwks_uri is served over TLS only). A 409 as a malformed JWT_SIGNING_KEYS is: the
 * configuration refuses the request, saying what to fix, where a 500 would tell the operator nothing.
 */
function checkedJwksUrl(jwksUrl: string): string {
  let checked = checkedJwksUrls.get(jwksUrl);
  if (checked === undefined) {
    checked = jwksUrlProblem(jwksUrl);
    // Told to the operator once per isolate and value, not on every token of the issuer: the answer's message goes to
    // the client holding the token, who is not the one who can fix the setting.
    if ("problem" in checked) console.error(JSON.stringify({ msg: "OAUTH_JWKS_URL refused", reason: checked.problem }));
    checkedJwksUrls.set(jwksUrl, checked);
  }
  if ("problem" in checked) throw new ApiError(409, "CONFLICT", `OAuth is not configured: ${checked.problem}`);
  return checked.href;
}

/** What {@link checkedJwksUrl} found for each `OAUTH_JWKS_URL` value seen in this isolate. */
const checkedJwksUrls = new Map<string, { href: string } | { problem: string }>();

/** The URL to fetch the issuer's keys from, or what is wrong with the setting. */
function jwksUrlProblem(jwksUrl: string): { href: string } | { problem: string } {
  if (jwksUrl.trim() === "") return { problem: "OAUTH_JWKS_URL is not set; set it to the issuer's jwks_uri (https://…), or unset OAUTH_ISSUER" };
  let url: URL;
  try {
    url = new URL(jwksUrl);
  } catch {
    return { problem: "OAUTH_JWKS_URL is not a URL; set it to the issuer's jwks_uri (https://…)" };
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname))) {
    return { problem: "OAUTH_JWKS_URL must be an https:// URL (http:// only to localhost), so the issuer's keys cannot be swapped on the way" };
  }
  return { href: url.href };
}

/**
 * True when verification failed because the issuer's keys could not be had, not because of the token: then the token
 * was never checked, and the client is told to retry (503) rather than to drop a token that may be good (401).
 */
function keysUnavailable(error: unknown): boolean {
  return error instanceof IssuerKeysUnavailable || error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid;
}

/**
 * Most keys a token without `kid` is checked against (the set's first of its algorithm's type). Anyone can send a
 * token naming the issuer, so each try is a signature check paid by a request nobody authenticated: with no bound a set
 * of many keys (up to {@link JWKS_MAX_BYTES}: a thousand EC keys) made each made-up token a thousand checks. Issuers
 * that leave `kid` out publish one key, or two during a rotation.
 */
export const MAX_KEYS_TRIED_WITHOUT_KID = 4;

/**
 * Verifies `token` against the issuer's keys. A token without `kid` (or one naming a kid the set holds twice) matches
 * every key of its algorithm's type, and jose's key set then refuses to choose (JWKSMultipleMatchingKeys, "Exactly one
 * key must match"): as its documentation shows, each matching key is tried, the token taken if one of them signed it,
 * up to {@link MAX_KEYS_TRIED_WITHOUT_KID} of them.
 */
async function verifyWithIssuerKeys(token: string, keys: IssuerKeys, options: JWTVerifyOptions): Promise<JWTPayload> {
  try {
    return (await jwtVerify(token, keys.set, options)).payload;
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
    let tried = 0;
    for await (const key of error) {
      if (++tried > MAX_KEYS_TRIED_WITHOUT_KID) break;
      try {
        return (await jwtVerify(token, key, options)).payload;
      } catch (inner) {
        if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

/**
 * Seconds an issuer's clock may run ahead of this service's: a token whose `nbf` (RFC 7519 4.1.5: "some small leeway
 * ... to account for clock skew") is at most this far ahead is taken. An issuer that sets `nbf` to the moment it signs
 * and whose clock runs a second ahead otherwise makes a token used at once a 401, which the client takes for a bad token.
 * 60 s is what Spring Security's resource servers allow (JwtTimestampValidator's default). `exp` is checked without it
 * (see {@link expiredByOurClock}): tolerating skew never extends a token's life here.
 */
export const OAUTH_CLOCK_SKEW_SECONDS = 60;

/** True when `payload`'s `exp` (required, a number: jose checked it) has passed by this service's clock. */
function expiredByOurClock(payload: JWTPayload): boolean {
  return payload.exp! <= Math.floor(Date.now() / 1000);
}

/** Reads a claim by dotted path (`realm_access.roles`). */
function claim(payload: JWTPayload, path: string): unknown {
  let value: unknown = payload;
  for (const part of path.split(".")) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The 401 of an issuer's token past its `exp`. */
function expiredIssuerToken(issuer: string): ApiError {
  return new ApiError(401, "EXPIRED_TOKEN", `Token expired: get a new one from ${issuer}`);
}

/**
 * Access tokens of an external OAuth 2.0 / OIDC issuer, when configured (`OAUTH_ISSUER`,
 * `OAUTH_AUDIENCE`, `OAUTH_JWKS_URL`). The user is the `OAUTH_USER_CLAIM` claim (default `sub`);
 * role names in `OAUTH_ROLES_CLAIM` add the permissions of the roles of those names. A token must name the audience
 * and expire: an issuer mints tokens for many clients (ID tokens too), and one for another client, or one that never
 * expires, is not a key to this service. Without `OAUTH_AUDIENCE` the issuer's tokens are refused, saying why.
 */
export const oauthProvider: AuthProvider = {
  name: "oauth",
  async authenticate(request, env): Promise<Principal | undefined> {
    const issuer = env.OAUTH_ISSUER;
    if (!issuer) return undefined;
    const token = bearerToken(request);
    if (token === undefined) return undefined;
    try {
      if (decodeJwt(token).iss !== issuer) return undefined;
    } catch {
      return undefined;
    }
    const audience = env.OAUTH_AUDIENCE;
    if (!audience) throw new ApiError(401, "INVALID_TOKEN", `Tokens of ${issuer} are refused: the service is configured without OAUTH_AUDIENCE, so it cannot tell a token meant for it from one the issuer made for another client`);
    // Unset, it is refused as a malformed one is (a 409 naming it, logged): a token of the issuer answered as one of no
    // configured issuer sent the operator to look at the token, not at the configuration.
    const keysUrl = checkedJwksUrl(env.OAUTH_JWKS_URL ?? "");
    let payload: JWTPayload;
    try {
      // RFC 9068's explicit type (at+jwt) tells an access token from an ID token of the same issuer and audience; many
      // issuers still send "JWT", so it is checked only when configured (jose compares it without "application/").
      const typ = env.OAUTH_TOKEN_TYPE?.trim() || undefined;
      const options: JWTVerifyOptions = { issuer, audience, algorithms: ALGORITHMS, requiredClaims: ["exp"], clockTolerance: OAUTH_CLOCK_SKEW_SECONDS, ...(typ ? { typ } : {}) };
      payload = await verifyWithIssuerKeys(token, jwks(keysUrl), options);
    } catch (error) {
      if (error instanceof errors.JWTExpired) throw expiredIssuerToken(issuer);
      if (error instanceof errors.JWTClaimValidationFailed && error.claim === "nbf") {
        throw new ApiError(401, "INVALID_TOKEN", `Token not valid yet: its nbf is more than ${OAUTH_CLOCK_SKEW_SECONDS} s ahead of this service's clock; check the clock of ${issuer}`);
      }
      if (keysUnavailable(error)) {
        throw new ApiError(503, "UNAVAILABLE", `The keys of ${issuer} could not be fetched, so the token was not checked: try again in ${JWKS_RETRY_AFTER_SECONDS} s`, undefined, { "Retry-After": String(JWKS_RETRY_AFTER_SECONDS) });
      }
      throw new ApiError(401, "INVALID_TOKEN", `Invalid token: signature, algorithm, audience or expiry check failed against ${issuer}; check the token's audience and expiry`);
    }
    if (expiredByOurClock(payload)) throw expiredIssuerToken(issuer);
    const userId = claim(payload, env.OAUTH_USER_CLAIM || "sub");
    if (typeof userId !== "string" || userId === "") throw new ApiError(401, "INVALID_TOKEN", `Invalid token: no ${env.OAUTH_USER_CLAIM || "sub"} claim naming the user`);
    const roles = env.OAUTH_ROLES_CLAIM ? claim(payload, env.OAUTH_ROLES_CLAIM) : undefined;
    const roleNames = Array.isArray(roles) ? roles.filter((role): role is string => typeof role === "string") : [];
    return { userId, grants: await grantsFor(env, userId, roleNames, true), method: "oauth" };
  },
};
