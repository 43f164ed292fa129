import { SignJWT, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from "jose";
import { hexOf } from "../../engine/task-id";
import { serviceConfig } from "../config";
import { ApiError } from "../http/errors";
import { TtlCache } from "../ttl-cache";
import { underlyingEnv } from "../webhooks/call-budget";
import { BOOTSTRAP_ADMIN_USER } from "./principal";

/** Issuer and audience of the tokens this service signs. */
export const TOKEN_ISSUER = "edge-conductor";

/** The answer of the token endpoints (OAuth 2.0 fields plus Orkes' `token`). */
export interface TokenPair {
  token: string;
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
}

interface SigningKey {
  kid: string;
  secret: Uint8Array;
}

const encoder = new TextEncoder();
const keysByEnv = new WeakMap<object, Promise<SigningKey[]>>();
const markersByEnv = new WeakMap<object, Promise<string | undefined>>();
const stretchedByEnv = new WeakMap<object, Promise<Uint8Array>>();

/**
 * What `make` gives for `env`, made once per env object (vars do not change during an isolate's life) and kept in `made`,
 * a webhook delivery's counted `env` read as the one it wraps (see {@link underlyingEnv}).
 */
function oncePerEnv<T>(made: WeakMap<object, T>, env: Env, make: () => T): T {
  const key = underlyingEnv(env);
  let value = made.get(key);
  if (value === undefined) {
    value = make();
    made.set(key, value);
  }
  return value;
}

/** What a verified access token holds: `expiresAt` its `exp` in ms, checked again on every use of the cached entry. */
interface VerifiedToken {
  userId: string;
  jti: string;
  family: string;
  bootstrapKey: unknown;
  expiresAt: number;
}

/** Verified access tokens, briefly: a revocation made in this isolate clears it at once. */
const verifiedCache = new TtlCache<VerifiedToken>(1_000);

/** How the key id of a bootstrap admin session starts (API key ids are UUIDs, so never like this). */
const BOOTSTRAP_MARKER_PREFIX = "bootstrap:";
/** The access token claim carrying the bootstrap admin's key marker. */
const BOOTSTRAP_CLAIM = "bak";
const ROTATED = "The bootstrap admin key this session was obtained with was rotated or removed: sign in with the current BOOTSTRAP_ADMIN_KEY";

function bytesFromBase64(text: string): Uint8Array {
  const normal = text.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(normal + "=".repeat((4 - (normal.length % 4)) % 4)), (c) => c.charCodeAt(0));
}

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  return hexOf(digest);
}

function randomToken(): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * The signing keys, current first: `JWT_SIGNING_KEYS` = `kid:base64secret[,kid:base64secret…]`, so a
 * key can be rotated in while tokens signed with the old one stay valid. Without it, one key is
 * derived (PBKDF2, see {@link stretchedAdminKey}) from the bootstrap admin key, so tokens work out of the box, followed
 * by the one derived before (see {@link legacyDerivedSigningKey}), which only verifies.
 */
function signingKeys(env: Env): Promise<SigningKey[]> {
  return oncePerEnv(keysByEnv, env, () => loadSigningKeys(env));
}

/**
 * A malformed `JWT_SIGNING_KEYS` refuses every request that needs a key with a 409 saying what to fix, as a missing or
 * malformed `SECRETS_ENCRYPTION_KEY` does: the service works as built and its configuration refuses the request, while
 * the contract keeps 500 for bugs (which would tell the operator nothing). Falling back to the derived key instead would
 * sign with a key the operator did not choose. The message never contains a secret.
 */
function misconfiguredKeys(problem: string): ApiError {
  return new ApiError(409, "CONFLICT", `Tokens are not configured: ${problem}; set JWT_SIGNING_KEYS to kid:base64secret[,kid:base64secret] (e.g. k1:$(openssl rand -base64 32))`);
}

/** The key new tokens are signed with, or the 409 saying how to configure one. */
async function currentSigningKey(env: Env): Promise<SigningKey> {
  const [current] = await signingKeys(env);
  if (!current) throw new ApiError(409, "CONFLICT", "Tokens are not configured: set JWT_SIGNING_KEYS or BOOTSTRAP_ADMIN_KEY");
  return current;
}

async function loadSigningKeys(env: Env): Promise<SigningKey[]> {
  const configured = (env.JWT_SIGNING_KEYS ?? "").split(",").map((entry) => entry.trim()).filter(Boolean);
  if (configured.length > 0) {
    return configured.map((entry, index) => {
      const separator = entry.indexOf(":");
      if (separator <= 0) throw misconfiguredKeys(`entry ${index + 1} of JWT_SIGNING_KEYS is not kid:base64secret`);
      let secret: Uint8Array;
      try {
        secret = bytesFromBase64(entry.slice(separator + 1));
      } catch {
        throw misconfiguredKeys(`the secret of JWT_SIGNING_KEYS entry ${index + 1} is not base64`);
      }
      if (secret.length < 32) throw misconfiguredKeys(`the secret of JWT_SIGNING_KEYS entry ${index + 1} is shorter than 32 bytes`);
      return { kid: entry.slice(0, separator), secret };
    });
  }
  if (!env.BOOTSTRAP_ADMIN_KEY) return [];
  return [{ kid: "derived-2", secret: await stretchedAdminKey(env) }, await legacyDerivedSigningKey(env.BOOTSTRAP_ADMIN_KEY)];
}

/**
 * PBKDF2-SHA256 rounds of the signing key derived from `BOOTSTRAP_ADMIN_KEY`. Every token (and every refresh token's
 * successor) is a MAC under that key over text its holder reads, so any user holding one can test guesses of the admin
 * key offline: each guess must cost this many rounds, not the two HMACs of HKDF. Bounded by the CPU of the first
 * request of each isolate, which computes it once (in workerd about 3 ms, against the 10 ms of Workers Free): a strong
 * key or `JWT_SIGNING_KEYS` is still what keeps a guessable one safe (a short one is logged, see config.ts).
 */
const DERIVED_KEY_ITERATIONS = 20_000;

/**
 * `BOOTSTRAP_ADMIN_KEY` stretched (see {@link DERIVED_KEY_ITERATIONS}), computed once per env object: the secret of the key
 * new tokens are signed with when no `JWT_SIGNING_KEYS` is set (kid `derived-2`), and the key of the bootstrap admin's
 * session marker (see {@link bootstrapKeyMarker}), so that neither lets a guess of the admin key be tested for less.
 */
function stretchedAdminKey(env: Env): Promise<Uint8Array> {
  return oncePerEnv(stretchedByEnv, env, () => stretchedKeyOf(env.BOOTSTRAP_ADMIN_KEY ?? ""));
}

async function stretchedKeyOf(bootstrapKey: string): Promise<Uint8Array> {
  const material = await crypto.subtle.importKey("raw", encoder.encode(bootstrapKey), "PBKDF2", false, ["deriveBits"]);
  const salt = encoder.encode(`${TOKEN_ISSUER}/jwt-signing-key`);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations: DERIVED_KEY_ITERATIONS }, material, 256));
}

/**
 * The key derived (HKDF, fast) before {@link stretchedAdminKey}, kept behind it so that the upgrade logs no one out: it
 * signs no new token, verifies those it signed before, each until its `exp` (an access token's lifetime), and finds the
 * successor an exchange made with it wrote when that exchange is sent again within the reuse grace window, answered the
 * same pair again (see {@link replayedExchange}); else the client's retry was taken for a reuse and its session revoked.
 * Refresh tokens are opaque rows, so those issued before go on refreshing into tokens of the new key. It adds nothing an
 * attacker lacks: whoever holds a token it signed could already test guesses against it. It is of use for one access
 * token lifetime after the upgrade (or the reuse grace window, if longer): no token it signed outlives that, and no
 * exchange it made can be sent again later; a later version may drop it (docs/api.md says so).
 */
async function legacyDerivedSigningKey(bootstrapKey: string): Promise<SigningKey> {
  const material = await crypto.subtle.importKey("raw", encoder.encode(bootstrapKey), "HKDF", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt: encoder.encode(TOKEN_ISSUER), info: encoder.encode("jwt-signing-key") }, material, 256);
  return { kid: "derived-1", secret: new Uint8Array(bits) };
}

/** Domain of the bootstrap admin's session marker, so it can be no other MAC under the stretched key (a JWS input holds no NUL). */
const BOOTSTRAP_MARKER_CONTEXT = `${TOKEN_ISSUER}/bootstrap-session\u0000`;
/** How the marker of {@link bootstrapKeyMarker} starts, after {@link BOOTSTRAP_MARKER_PREFIX}: told apart from the legacy one. */
const BOOTSTRAP_MARKER_VERSION = "2:";

/**
 * Names the configured `BOOTSTRAP_ADMIN_KEY` without revealing it: `bootstrap:2:` and 128 bits of an HMAC under the admin
 * key stretched by PBKDF2 ({@link stretchedAdminKey}), the same whether or not `JWT_SIGNING_KEYS` is set and across its
 * rotations. The bootstrap admin's sessions record it, in the access token (`bak`) and the refresh token's row, so
 * rotating or removing the key ends them (the key lives in configuration, not in `api_keys`, so deleting it is not what
 * revokes them). Whoever reads it (the admin's token holder, a D1 export) tests a guess of the admin key for a PBKDF2, as
 * against a token of the derived signing key. Undefined without a key.
 */
function bootstrapKeyMarker(env: Env): Promise<string | undefined> {
  return oncePerEnv(markersByEnv, env, () => (env.BOOTSTRAP_ADMIN_KEY ? stretchedMarker(env) : Promise.resolve(undefined)));
}

async function stretchedMarker(env: Env): Promise<string> {
  const key = await crypto.subtle.importKey("raw", await stretchedAdminKey(env), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(BOOTSTRAP_MARKER_CONTEXT)));
  return BOOTSTRAP_MARKER_PREFIX + BOOTSTRAP_MARKER_VERSION + hexOf(mac.slice(0, 16));
}

/**
 * The marker sessions recorded before {@link bootstrapKeyMarker} (64 bits of a plain SHA-256 of the admin key, a guess
 * tested for one hash), still accepted so that the upgrade logs no one out; never recorded again: a session continued
 * records the new one. It can go once every session from before the upgrade has ended: `REFRESH_TOKEN_TTL_SECONDS` after
 * it (its access tokens end an access lifetime after it), or at the next rotation of the admin key, which ends them all.
 */
async function legacyBootstrapKeyMarker(env: Env): Promise<string | undefined> {
  const key = env.BOOTSTRAP_ADMIN_KEY;
  return key ? BOOTSTRAP_MARKER_PREFIX + (await sha256Hex(`${TOKEN_ISSUER}/bootstrap-session\u0000${key}`)).slice(0, 16) : undefined;
}

/** Whether `claimed`, a session's recorded marker, names the admin key configured now, in either form. */
async function namesCurrentBootstrapKey(env: Env, claimed: unknown): Promise<boolean> {
  const marker = await bootstrapKeyMarker(env);
  if (marker === undefined || typeof claimed !== "string") return false;
  if (claimed === marker) return true;
  return !claimed.startsWith(BOOTSTRAP_MARKER_PREFIX + BOOTSTRAP_MARKER_VERSION) && claimed === (await legacyBootstrapKeyMarker(env));
}

/**
 * The key id a bootstrap admin session records: the current key's marker. A session continued (`claimed` is
 * what it recorded, null for one from before markers) must name the current key, or it is refused (401).
 */
async function bootstrapSessionKey(env: Env, claimed: string | null | undefined): Promise<string> {
  const marker = await bootstrapKeyMarker(env);
  if (marker === undefined || (claimed !== undefined && !(await namesCurrentBootstrapKey(env, claimed)))) throw new ApiError(401, "INVALID_TOKEN", ROTATED);
  return marker;
}

function accessTtlSeconds(env: Env): number {
  return serviceConfig(env).accessTokenTtlSeconds;
}

function refreshTtlSeconds(env: Env): number {
  return serviceConfig(env).refreshTokenTtlSeconds;
}

/**
 * Issues an access token and a refresh token for a user. `family` continues a rotated session; `keyId`
 * is the API key the session was obtained with, which must still exist: the check and the insert are one
 * statement, so a key deleted meanwhile leaves no session. The bootstrap admin's sessions record the marker
 * of the configured key instead (see {@link bootstrapKeyMarker}), in the refresh token and the access token.
 */
export async function issueTokens(env: Env, userId: string, session: { family?: string; keyId?: string | null } = {}): Promise<TokenPair> {
  const { pair, inserted } = await writtenSession(env, userId, session);
  if (!inserted) throw keyGoneRefusal();
  return pair;
}

/** The 401 of a session whose API key was deleted or deactivated before its refresh token was written. */
function keyGoneRefusal(): ApiError {
  return new ApiError(401, "INVALID_TOKEN", "The API key this session was obtained with was deleted or deactivated: sign in with another key");
}

/** What a rotation's batch found of the refresh token it exchanges (see {@link writtenSession}). */
type Exchange = "claimed" | "used already" | "key gone";

/**
 * Signs a new pair for `userId` and writes its refresh token (see {@link issueTokens}): `inserted` false when the
 * session's key is gone. With `exchanged` (the refresh token a rotation exchanges, and its hash), the new refresh token is
 * its successor (see {@link successorToken}), written only while the exchanged one is unused, which is claimed in the same
 * D1 batch and only with the new one written: `exchange` says whether it was claimed, was used already (by an earlier
 * exchange or a concurrent one: nothing written, see {@link refreshTokens}), or was refused with the session's key gone.
 * Claimed on its own first, a failure before the new token was written (D1 refusing it, the invocation ending) left the
 * session with no unused refresh token, and the client's retry of the exchange was taken for a reuse, which revoked the
 * session. Written whether or not the exchanged one was unused, a retry after a key rotation (another successor) left the
 * session two live refresh tokens, two lines that would never meet as a reuse.
 */
async function writtenSession(
  env: Env,
  userId: string,
  session: { family?: string; keyId?: string | null; exchanged?: { token: string; hash: string } },
): Promise<{ pair: TokenPair; inserted: boolean; exchange: Exchange }> {
  const family = session.family ?? crypto.randomUUID();
  const bootstrap = userId === BOOTSTRAP_ADMIN_USER;
  const keyId = bootstrap ? await bootstrapSessionKey(env, session.keyId) : (session.keyId ?? null);
  const current = await currentSigningKey(env);
  const refreshToken = session.exchanged === undefined ? randomToken() : await successorToken(current, session.exchanged.token);
  const refreshHash = await sha256Hex(refreshToken);
  const now = Date.now();
  const pair = await sessionPair(env, current, { userId, family, keyId }, refreshToken, now);
  const exchangedHash = session.exchanged?.hash ?? null;
  // A bootstrap marker was checked against the configuration above; it is not in api_keys. The key must still be there
  // and active as the session is written: a deactivation's revocation ends only the sessions written before it, and a
  // token request that checked the key just before (or against another isolate's cache) must not start one after it.
  const insert = env.DB.prepare(
    `INSERT INTO refresh_tokens (token_hash, family_id, user_id, expires_at, used, create_time, key_id)
     SELECT ?1, ?2, ?3, ?4, 0, ?5, ?6 WHERE (?6 IS NULL OR ?7 = 1 OR EXISTS (SELECT 1 FROM api_keys WHERE key_id = ?6 AND active = 1))
       AND (?8 IS NULL OR EXISTS (SELECT 1 FROM refresh_tokens WHERE token_hash = ?8 AND used = 0))`,
  ).bind(refreshHash, family, userId, now + refreshTtlSeconds(env) * 1000, now, keyId, bootstrap ? 1 : 0, exchangedHash);
  if (exchangedHash === null) {
    const [inserted] = await writtenPruning(env, [insert], now);
    return { pair, inserted: inserted!.meta.changes > 0, exchange: "claimed" };
  }
  // Read first, in the batch's transaction: whether the exchanged token was used before this batch, which tells a reuse
  // (or a concurrent exchange) from a key gone when neither the insert nor the claim below changed anything.
  const usedBefore = env.DB.prepare(`SELECT used FROM refresh_tokens WHERE token_hash = ?1`).bind(exchangedHash);
  // After the insert, in its transaction: claimed only with the new token written.
  const claim = env.DB.prepare(`UPDATE refresh_tokens SET used = 1 WHERE token_hash = ?1 AND used = 0 AND EXISTS (SELECT 1 FROM refresh_tokens WHERE token_hash = ?2)`).bind(exchangedHash, refreshHash);
  const [before, inserted, claimed] = await writtenPruning(env, [usedBefore, insert, claim], now);
  const exchange: Exchange = claimed!.meta.changes > 0 ? "claimed" : (before!.results[0] as { used?: number } | undefined)?.used === 0 ? "key gone" : "used already";
  return { pair, inserted: inserted!.meta.changes > 0, exchange };
}

/** Domain of the successor derivation, so the MAC of a refresh token can be no other use of the key (a JWS input holds no NUL). */
const SUCCESSOR_CONTEXT = `${TOKEN_ISSUER}/refresh-token-successor\u0000`;
/** Domain of an access token's id, derived from the refresh token issued with it. */
const ACCESS_TOKEN_ID_CONTEXT = `${TOKEN_ISSUER}/access-token-id\u0000`;
const successorKeys = new WeakMap<SigningKey, Promise<CryptoKey>>();

/**
 * The refresh token a rotation of `exchanged` issues: HMAC-SHA256 of it under the signing key `key`. Derived rather than
 * random so that it can be given again: the store keeps only a token's SHA-256, and an exchange sent again (its answer
 * lost, or two sent at once) must be answered the token the first one wrote (see {@link replayedExchange}), not another
 * one that forks the session. It is as unguessable as a random one to whoever lacks the key (who holds the key can sign
 * access tokens anyway), and the exchanged token, its only input, is itself 256 random bits or such a successor.
 */
async function successorToken(key: SigningKey, exchanged: string): Promise<string> {
  let macKey = successorKeys.get(key);
  if (!macKey) {
    macKey = crypto.subtle.importKey("raw", key.secret, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    successorKeys.set(key, macKey);
  }
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await macKey, encoder.encode(SUCCESSOR_CONTEXT + exchanged)));
  return base64Url(mac);
}

function base64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The pair of refresh token `refreshToken`, written at `issuedAtMs`, signed with `key`: the same arguments sign the same
 * access token (its `iat` from the write, its `jti` from the refresh token), so an exchange given again is the same
 * answer, not one more live access token. `expires_in` counts from `answeredAtMs` (the issue itself unless given again,
 * read once, so a new pair's is the whole lifetime even when the second turns while it is signed). A bootstrap admin
 * session's `keyId` is the marker of its key (see {@link bootstrapKeyMarker}), carried in the access token.
 */
async function sessionPair(
  env: Env,
  key: SigningKey,
  session: { userId: string; family: string; keyId: string | null },
  refreshToken: string,
  issuedAtMs: number,
  answeredAtMs = issuedAtMs,
): Promise<TokenPair> {
  const issuedAt = Math.floor(issuedAtMs / 1000);
  const expiresAt = issuedAt + accessTtlSeconds(env);
  const claims = session.userId === BOOTSTRAP_ADMIN_USER ? { fam: session.family, [BOOTSTRAP_CLAIM]: session.keyId } : { fam: session.family };
  const accessToken = await new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", kid: key.kid, typ: "JWT" })
    .setSubject(session.userId)
    .setIssuer(TOKEN_ISSUER)
    .setAudience(TOKEN_ISSUER)
    .setIssuedAt(issuedAt)
    .setExpirationTime(expiresAt)
    .setJti((await sha256Hex(ACCESS_TOKEN_ID_CONTEXT + refreshToken)).slice(0, 32))
    .sign(key.secret);
  const expiresIn = Math.max(0, expiresAt - Math.floor(answeredAtMs / 1000));
  return { token: accessToken, access_token: accessToken, token_type: "Bearer", expires_in: expiresIn, refresh_token: refreshToken };
}

/** The signing keys a successor written within the grace window may have been derived with: the current one and those just behind it. */
const SUCCESSOR_KEYS_TRIED = 8;

/**
 * The answer an exchange of `exchanged` (already used) gave, when it is given again: within
 * `REFRESH_TOKEN_REUSE_GRACE_SECONDS` of that exchange, while its successor is unused and the session not revoked. A
 * client whose answer was lost (a timeout, a dropped connection, a proxy's 502) holds only the token it sent, and sends it
 * again; two requests of one client refreshing at once send it twice. Undefined otherwise: a reuse. The successor was
 * derived with the signing key current then, which a rotation since may have put behind another: each is tried.
 */
async function replayedExchange(env: Env, row: { family_id: string; user_id: string }, exchanged: string): Promise<TokenPair | undefined> {
  const graceMs = serviceConfig(env).refreshReuseGraceSeconds * 1000;
  if (graceMs === 0) return undefined;
  const candidates = await Promise.all(
    (await signingKeys(env)).slice(0, SUCCESSOR_KEYS_TRIED).map(async (key) => {
      const token = await successorToken(key, exchanged);
      return { key, token, hash: await sha256Hex(token) };
    }),
  );
  const now = Date.now();
  // One read, so the successor's state and the session's revocation are seen together.
  const found = await env.DB.prepare(
    `SELECT token_hash, create_time, key_id FROM refresh_tokens
     WHERE token_hash IN (${candidates.map((_, index) => `?${index + 4}`).join(", ")}) AND family_id = ?1 AND used = 0 AND create_time >= ?2 AND expires_at > ?3
       AND NOT EXISTS (SELECT 1 FROM revoked_tokens WHERE id = ?1)
     LIMIT 1`,
  )
    .bind(row.family_id, now - graceMs, now, ...candidates.map((candidate) => candidate.hash))
    .first<{ token_hash: string; create_time: number; key_id: string | null }>();
  const successor = candidates.find((candidate) => candidate.hash === found?.token_hash);
  if (!found || !successor) return undefined;
  // The successor's key id, as the exchange signed it: a bootstrap admin's exchanged row may hold the old marker, which
  // the exchange replaced (see bootstrapSessionKey), so the exchanged row's would sign another access token.
  return sessionPair(env, successor.key, { userId: row.user_id, family: row.family_id, keyId: found.key_id }, successor.token, found.create_time, now);
}

/** Most expired rows of each token table one issued token deletes (it adds one row: a backlog goes over the next ones). */
const EXPIRED_TOKEN_ROWS_PRUNED_PER_ISSUE = 20;

/**
 * How long a token row is kept past the time it stops being of use, before a prune may delete it. The moment is read on
 * clocks that differ a little between isolates, and a request that checked a token's `exp` just before it reads
 * revoked_tokens: with the revocation deleted at `exp` exactly, a revoked token checked a moment before it ends would be
 * let in. A refresh racing its session's revocation also writes a row that outlives the revocation by that race's length.
 */
const EXPIRED_TOKEN_ROWS_GRACE_MS = 3_600_000;

/**
 * The session's writes (its insert, and a rotation's claim) run with the deletion of a few token rows past use, in one
 * batch (no round trip more), answering the results of `writes`; when that batch is refused, `writes` alone, in a batch
 * of their own: the pruning is housekeeping, and a token request must not fail for it.
 */
async function writtenPruning(env: Env, writes: readonly D1PreparedStatement[], now: number): Promise<D1Result[]> {
  try {
    return (await env.DB.batch([...writes, ...expiredTokenRowsPruning(env, now)])).slice(0, writes.length);
  } catch (error) {
    console.error(JSON.stringify({ msg: "token rows not pruned: the batch with the session's insert failed, the insert is run alone", reason: error instanceof Error ? error.message : String(error) }));
    return await env.DB.batch([...writes]);
  }
}

/**
 * The statements deleting a few token rows past use, run with each token issued: without them every `POST /api/token`
 * (an SDK client asks at each start, and again as its token nears its end) left a refresh_tokens row for good, and a
 * key's deletion, which revokes the session of each of its rows, grew with the key's whole history. A refresh token's
 * row is kept until the access token issued with it has expired too (one access lifetime past its own end: deleting a
 * key must still find that session to end it), which also keeps the EXPIRED_TOKEN answer for that long, and a
 * revocation until its `expires_at`, by when every token it names has expired (see {@link revokeFamily},
 * {@link revokeToken}); each kept {@link EXPIRED_TOKEN_ROWS_GRACE_MS} longer still.
 */
function expiredTokenRowsPruning(env: Env, now: number): D1PreparedStatement[] {
  const pastUse = now - EXPIRED_TOKEN_ROWS_GRACE_MS;
  return [
    env.DB.prepare(`DELETE FROM refresh_tokens WHERE rowid IN (SELECT rowid FROM refresh_tokens WHERE expires_at <= ? LIMIT ?)`).bind(
      pastUse - accessTtlSeconds(env) * 1000,
      EXPIRED_TOKEN_ROWS_PRUNED_PER_ISSUE,
    ),
    env.DB.prepare(`DELETE FROM revoked_tokens WHERE rowid IN (SELECT rowid FROM revoked_tokens WHERE expires_at <= ? LIMIT ?)`).bind(pastUse, EXPIRED_TOKEN_ROWS_PRUNED_PER_ISSUE),
  ];
}

/** True when the token looks like one of ours (by issuer), so other providers can take the rest. */
export function isOwnToken(token: string): boolean {
  try {
    return decodeJwt(token).iss === TOKEN_ISSUER;
  } catch {
    return false;
  }
}

/**
 * The claims of one of our tokens, checked (HS256, issuer, audience, and what `options` adds) against the configured keys
 * of its `kid`; undefined when no key has that kid. Each key of the kid is tried: `JWT_SIGNING_KEYS` may name two keys
 * with one kid (a rotation that put the new key in front under the old one's kid), and the tokens of either must keep
 * working, as they do with a kid of each. Throws jose's error: a failed signature when no key of the kid signed it; an
 * expiry or claim failure is of the key that did.
 */
async function verifiedByKeyOfKid(env: Env, token: string, kid: string | undefined, options: Pick<JWTVerifyOptions, "requiredClaims" | "currentDate">): Promise<JWTPayload | undefined> {
  const keys = (await signingKeys(env)).filter((candidate) => candidate.kid === kid);
  if (keys.length === 0) return undefined;
  let failure: unknown;
  for (const key of keys) {
    try {
      return (await jwtVerify(token, key.secret, { ...options, algorithms: ["HS256"], issuer: TOKEN_ISSUER, audience: TOKEN_ISSUER })).payload;
    } catch (error) {
      if (!(error instanceof errors.JWSSignatureVerificationFailed)) throw error;
      failure = error;
    }
  }
  throw failure;
}

const INVALID_HINT = "check that it was issued by this service, is complete, and was not altered";

/**
 * Verifies one of our access tokens: HS256 only (no `none`, no algorithm swap), known `kid`,
 * issuer, audience, expiry, not revoked, and for the bootstrap admin obtained with the key configured now.
 * Answers the user id or throws 401.
 */
export async function verifyAccessToken(env: Env, token: string): Promise<{ userId: string; jti: string; family: string }> {
  // Loaded through the cache, not set after: a revocation in this isolate clears the cache while a check may be reading
  // revoked_tokens, and what that check read (before the revocation) must not be kept for the requests after it.
  const verified = await verifiedCache.getOrLoad(token, () => verifySignedToken(env, token));
  // The cache keeps an entry for its TTL from when it was verified: one verified in its last second must not outlive exp.
  if (verified.expiresAt <= Date.now()) throw expiredToken();
  // Checked on every request, not cached: the configuration may differ between requests of one isolate.
  if (verified.userId === BOOTSTRAP_ADMIN_USER && !(await namesCurrentBootstrapKey(env, verified.bootstrapKey))) throw new ApiError(401, "INVALID_TOKEN", ROTATED);
  return { userId: verified.userId, jti: verified.jti, family: verified.family };
}

/** The 401 of one of our access tokens past its `exp`. */
function expiredToken(): ApiError {
  return new ApiError(401, "EXPIRED_TOKEN", "Token expired: request a new one with POST /api/security/token or refresh it with POST /api/security/token/refresh");
}

async function verifySignedToken(env: Env, token: string): Promise<VerifiedToken> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    throw new ApiError(401, "INVALID_TOKEN", `Invalid token: not a JWT; ${INVALID_HINT}`);
  }
  let claims: { sub?: string; jti?: string; exp?: number; fam?: unknown; [BOOTSTRAP_CLAIM]?: unknown } | undefined;
  try {
    claims = await verifiedByKeyOfKid(env, token, kid, { requiredClaims: ["sub", "jti", "exp"] });
  } catch (error) {
    // A JWT_SIGNING_KEYS that cannot be read is its 409, not this token's fault.
    if (error instanceof ApiError) throw error;
    if (error instanceof errors.JWTExpired) throw expiredToken();
    throw new ApiError(401, "INVALID_TOKEN", `Invalid token: signature, algorithm, issuer or audience check failed; ${INVALID_HINT}`);
  }
  if (!claims) throw new ApiError(401, "INVALID_TOKEN", `Invalid token: unknown signing key; ${INVALID_HINT}`);
  const verified = { userId: claims.sub!, jti: claims.jti!, family: typeof claims.fam === "string" ? claims.fam : "", bootstrapKey: claims[BOOTSTRAP_CLAIM], expiresAt: claims.exp! * 1000 };
  const revoked = await env.DB.prepare(`SELECT 1 FROM revoked_tokens WHERE id IN (?, ?) LIMIT 1`).bind(verified.jti, verified.family).first();
  if (revoked) throw revokedRefusal();
  return verified;
}

/** Revokes every access and refresh token of a session (family). */
async function revokeFamily(env: Env, family: string): Promise<void> {
  const until = Date.now() + Math.max(accessTtlSeconds(env), refreshTtlSeconds(env)) * 1000;
  await env.DB.batch([
    env.DB.prepare(`INSERT OR REPLACE INTO revoked_tokens (id, kind, expires_at) VALUES (?, 'family', ?)`).bind(family, until),
    env.DB.prepare(`UPDATE refresh_tokens SET used = 1 WHERE family_id = ?`).bind(family),
  ]);
  verifiedCache.clear();
}

/**
 * Exchanges a refresh token for a new pair (rotation: the old one stops working). Presenting a token that was already
 * exchanged means it leaked, and the whole session is revoked, unless it is that exchange sent again within
 * `REFRESH_TOKEN_REUSE_GRACE_SECONDS` of it with its new token unused: then it is answered the same pair (see
 * {@link replayedExchange}).
 */
export async function refreshTokens(env: Env, refreshToken: string): Promise<TokenPair> {
  const hash = await sha256Hex(refreshToken);
  const row = await env.DB.prepare(`SELECT family_id, user_id, key_id, expires_at, used FROM refresh_tokens WHERE token_hash = ?`)
    .bind(hash)
    .first<{ family_id: string; user_id: string; key_id: string | null; expires_at: number; used: number }>();
  if (!row) throw new ApiError(401, "INVALID_TOKEN", "Invalid refresh token");
  if (row.expires_at <= Date.now()) throw new ApiError(401, "EXPIRED_TOKEN", "Refresh token expired: request a new one with POST /api/security/token");
  // Before the claim: a session refused for a rotated key is not consumed (nor counted as reuse).
  if (row.user_id === BOOTSTRAP_ADMIN_USER) await bootstrapSessionKey(env, row.key_id);
  // Likewise a refresh refused because no key can sign its new tokens (JWT_SIGNING_KEYS malformed): fixed, it goes on.
  await currentSigningKey(env);
  // A revoked session's tokens are all marked used: say it was revoked rather than reused.
  if (await familyRevoked(env, row.family_id)) throw revokedRefusal();
  // Used already when read: an exchange sent again, or a reuse; nothing to write either way.
  if (row.used !== 0) return await replayedOrRevoked(env, row, refreshToken);
  // Claimed atomically, with the new token written in the same batch: of two concurrent exchanges only one writes, the
  // other finds it used; and one that fails writes neither, so the client may send it again.
  const { pair, exchange } = await writtenSession(env, row.user_id, { family: row.family_id, keyId: row.key_id, exchanged: { token: refreshToken, hash } });
  // The key deleted or deactivated meanwhile, its sessions not revoked with it (its deletion marks their tokens used).
  if (exchange === "key gone") throw keyGoneRefusal();
  if (exchange === "used already") return await replayedOrRevoked(env, row, refreshToken);
  // Revoked between the check above and the claim.
  if (await familyRevoked(env, row.family_id)) throw revokedRefusal();
  return pair;
}

/**
 * The answer to `exchanged` presented when already used: the pair its exchange gave, within the grace window (see
 * {@link replayedExchange}); else a 401, the session revoked as stolen unless it was revoked already (a logout, its key
 * deleted), which is said instead.
 */
async function replayedOrRevoked(env: Env, row: { family_id: string; user_id: string }, exchanged: string): Promise<TokenPair> {
  const replayed = await replayedExchange(env, row, exchanged);
  if (replayed) return replayed;
  if (await familyRevoked(env, row.family_id)) throw revokedRefusal();
  await revokeFamily(env, row.family_id);
  throw new ApiError(401, "INVALID_TOKEN", "Refresh token was already used: every token of this session is revoked; sign in again");
}

/** The 401 of a token of a revoked session. */
function revokedRefusal(): ApiError {
  return new ApiError(401, "INVALID_TOKEN", "Token was revoked: request a new one with POST /api/security/token");
}

async function familyRevoked(env: Env, family: string): Promise<boolean> {
  return (await env.DB.prepare(`SELECT 1 FROM revoked_tokens WHERE id = ?`).bind(family).first()) !== null;
}

/**
 * The statements that end every session obtained with API key `keyId`, to run in the transaction that
 * deletes or deactivates it (they do nothing while the key still exists and is active, e.g. when the delete named the wrong user):
 * its refresh tokens stop working, and so do access tokens already issued (revoked by session). Call
 * {@link forgetVerifiedTokens} once they ran. Sessions issued before keys were recorded are not covered.
 */
export function keySessionRevocations(env: Env, keyId: string): D1PreparedStatement[] {
  // Bootstrap admin sessions end with a change of configuration, never by deleting a key of that name.
  if (keyId.startsWith(BOOTSTRAP_MARKER_PREFIX)) return [];
  const until = Date.now() + Math.max(accessTtlSeconds(env), refreshTtlSeconds(env)) * 1000;
  // Gone, or stopped (an Orkes access key made INACTIVE): either way its sessions end.
  const keyGone = `NOT EXISTS (SELECT 1 FROM api_keys WHERE key_id = ?1 AND active = 1)`;
  return [
    env.DB.prepare(`INSERT OR REPLACE INTO revoked_tokens (id, kind, expires_at) SELECT DISTINCT family_id, 'family', ?2 FROM refresh_tokens WHERE key_id = ?1 AND ${keyGone}`).bind(keyId, until),
    env.DB.prepare(`UPDATE refresh_tokens SET used = 1 WHERE key_id = ?1 AND ${keyGone}`).bind(keyId),
  ];
}

/**
 * The statements that end every session obtained with any API key of `userId` that no longer exists or is inactive,
 * to run after the statement deleting the user's keys, in its transaction: by the user, not by a list of keys read
 * before, so a key created meanwhile (and a session obtained with it) is not missed.
 */
export function userKeySessionRevocations(env: Env, userId: string): D1PreparedStatement[] {
  const until = Date.now() + Math.max(accessTtlSeconds(env), refreshTtlSeconds(env)) * 1000;
  // Bootstrap admin sessions end with a change of configuration only (see keySessionRevocations).
  const keyGone = `key_id IS NOT NULL AND substr(key_id, 1, length(?3)) <> ?3
    AND NOT EXISTS (SELECT 1 FROM api_keys WHERE api_keys.key_id = refresh_tokens.key_id AND active = 1)`;
  return [
    env.DB.prepare(`INSERT OR REPLACE INTO revoked_tokens (id, kind, expires_at) SELECT DISTINCT family_id, 'family', ?2 FROM refresh_tokens WHERE user_id = ?1 AND ${keyGone}`).bind(userId, until, BOOTSTRAP_MARKER_PREFIX),
    env.DB.prepare(`UPDATE refresh_tokens SET used = 1 WHERE user_id = ?1 AND ${keyGone}`).bind(userId, null, BOOTSTRAP_MARKER_PREFIX),
  ];
}

/** Drops this isolate's verified access tokens, so a revocation applies at once here (elsewhere within the cache TTL). */
export function forgetVerifiedTokens(): void {
  verifiedCache.clear();
}

/**
 * The claims of `token`, one of our access tokens, when its signature holds (a forged token must not revoke anything),
 * expired or not (revoking an expired token is harmless); undefined for any token that is not a valid one of ours.
 */
async function revocablePayload(env: Env, token: string): Promise<JWTPayload | undefined> {
  try {
    return await verifiedByKeyOfKid(env, token, decodeProtectedHeader(token).kid, { currentDate: new Date(0) });
  } catch {
    return undefined;
  }
}

/**
 * Revokes an access token (until its expiry) or a refresh token and its session (RFC 7009).
 * Unknown or malformed tokens are accepted silently, as the RFC requires.
 */
export async function revokeToken(env: Env, token: string): Promise<void> {
  if (isOwnToken(token)) {
    const payload = await revocablePayload(env, token);
    // Not a valid token of ours: nothing to revoke. The write is outside the check's catch: a revocation D1 refused is a
    // 5xx the client sends again, where it was answered 200 with the token still working.
    if (typeof payload?.jti !== "string") return;
    await env.DB.prepare(`INSERT OR REPLACE INTO revoked_tokens (id, kind, expires_at) VALUES (?, 'jti', ?)`).bind(payload.jti, (payload.exp ?? 0) * 1000).run();
    verifiedCache.delete(token);
    return;
  }
  const row = await env.DB.prepare(`SELECT family_id FROM refresh_tokens WHERE token_hash = ?`).bind(await sha256Hex(token)).first<{ family_id: string }>();
  if (row) await revokeFamily(env, row.family_id);
}
