// @ts-check
/**
 * The service's API as the UI uses it. The access token (and the refresh token) live in sessionStorage only:
 * they are gone when the tab closes, and an API key secret is never stored at all.
 */

const TOKEN_KEY = "edge-conductor.token";
const REFRESH_KEY = "edge-conductor.refresh";
/**
 * Names the login the tokens belong to: set by each login, kept by a refresh, gone at logout. A request refused with
 * one login's token is sent again only within that login, never with the token of a login made since (another user's,
 * maybe), which would run as that user what the first one asked.
 */
const SESSION_KEY = "edge-conductor.session";

/** An API refusal, carrying the contract's error body. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   * @param {Array<{path: string, message: string}>} [validationErrors]
   */
  constructor(status, code, message, validationErrors = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.validationErrors = validationErrors;
  }
}

/**
 * What to tell the user about a failure: the API's message (or any error's), or the thrown value as text.
 * @param {unknown} error
 * @returns {string}
 */
export function errorMessage(error) {
  return error instanceof Error ? error.message : String(error);
}

/** @returns {boolean} */
export function isLoggedIn() {
  return sessionStorage.getItem(TOKEN_KEY) !== null;
}

/** Ends the session in this tab: forgets both tokens and revokes them (best effort, they are forgotten already). */
export function logOut() {
  const refresh = sessionStorage.getItem(REFRESH_KEY);
  const token = sessionStorage.getItem(TOKEN_KEY);
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(REFRESH_KEY);
  sessionStorage.removeItem(SESSION_KEY);
  revoke(refresh, token);
}

/**
 * Asks the server to revoke tokens no longer kept (best effort: they are forgotten already).
 * @param {...(string | null | undefined)} tokens
 */
function revoke(...tokens) {
  for (const value of tokens) {
    if (value) void fetch("/api/security/token/revoke", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token: value }) }).catch(() => {});
  }
}

/** @param {string} text */
function decodeBase64Url(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  return atob(base64.padEnd(base64.length + ((4 - (base64.length % 4)) % 4), "="));
}

/**
 * Whether a credential is a JWT: three base64url parts whose header is a JSON object naming its `alg`.
 * Counting dots is not enough: an API key secret may hold dots too, and must never be used as a token.
 * @param {string} value
 */
function isJwt(value) {
  const parts = value.split(".");
  if (parts.length !== 3 || !parts.every((part) => /^[A-Za-z0-9_-]*$/.test(part)) || !parts[0] || !parts[1]) return false;
  try {
    const header = JSON.parse(decodeBase64Url(parts[0]));
    return typeof header === "object" && header !== null && typeof header.alg === "string";
  } catch {
    return false;
  }
}

/**
 * Logs in with an API key (`keyId:keySecret`, exchanged for a token) or with a token as it is.
 * @param {string} credential
 */
export async function logIn(credential) {
  const value = credential.trim();
  const separator = value.indexOf(":");
  if (separator > 0 && !isJwt(value)) {
    const response = await fetch("/api/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ keyId: value.slice(0, separator), keySecret: value.slice(separator + 1) }),
    });
    const body = await readBody(response);
    if (!response.ok) throw toError(response, body);
    const tokens = /** @type {{token: string, refresh_token?: string}} */ (body);
    startLogin();
    sessionStorage.setItem(TOKEN_KEY, tokens.token);
    if (tokens.refresh_token) sessionStorage.setItem(REFRESH_KEY, tokens.refresh_token);
  } else {
    startLogin();
    sessionStorage.setItem(TOKEN_KEY, value);
    sessionStorage.removeItem(REFRESH_KEY);
  }
  try {
    return await me();
  } catch (error) {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(REFRESH_KEY);
    sessionStorage.removeItem(SESSION_KEY);
    throw error;
  }
}

/**
 * Names a new login (SESSION_KEY), whose tokens are about to be stored: requests of the one before are not sent again
 * with them. getRandomValues, not randomUUID: the latter exists in secure contexts only, and the UI may be served over
 * plain HTTP on a local network.
 */
function startLogin() {
  sessionStorage.setItem(SESSION_KEY, Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, "0")).join(""));
}

/** @param {Response} response */
async function readBody(response) {
  const text = await response.text();
  if (!text) return null;
  const type = response.headers.get("content-type") ?? "";
  if (type.includes("json")) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/**
 * @param {Response} response
 * @param {unknown} body
 */
function toError(response, body) {
  if (body && typeof body === "object") {
    const { error, message, validationErrors } = /** @type {{error?: string, message?: string, validationErrors?: Array<{path: string, message: string}>}} */ (body);
    return new ApiError(response.status, error ?? "ERROR", message ?? response.statusText, validationErrors ?? []);
  }
  return new ApiError(response.status, "ERROR", typeof body === "string" && body ? body : `${response.status} ${response.statusText}`);
}

/**
 * Exchanges the refresh token for new tokens. Resolves whether it did; false means the server refused it (401),
 * there is none, or the session ended while the exchange was under way, so the session is over. Any other failure (429, 5xx, no network) is thrown: the session
 * may well be fine, and the refresh token is kept for the next try.
 * @returns {Promise<boolean>}
 */
async function exchangeRefreshToken() {
  const refreshToken = sessionStorage.getItem(REFRESH_KEY);
  if (!refreshToken) return false;
  const response = await fetch("/api/security/token/refresh", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ refreshToken }),
  });
  if (response.status === 401) return false;
  const body = await readBody(response);
  if (!response.ok) throw toError(response, body);
  const tokens = /** @type {{token: string, refresh_token?: string}} */ (body);
  // The session that asked has ended meanwhile (a logout) or been replaced (a new login in this tab): stored, the new
  // pair would log the tab back in, or into the earlier session, so it is revoked instead.
  if (sessionStorage.getItem(REFRESH_KEY) !== refreshToken) {
    revoke(tokens.refresh_token, tokens.token);
    return false;
  }
  sessionStorage.setItem(TOKEN_KEY, tokens.token);
  if (tokens.refresh_token) sessionStorage.setItem(REFRESH_KEY, tokens.refresh_token);
  return true;
}

/**
 * The refresh under way, which every request refused meanwhile awaits: the server treats a refresh token
 * exchanged twice as stolen (past a short grace window) and revokes the whole session.
 * @type {Promise<boolean> | null}
 */
let refreshing = null;
function refresh() {
  refreshing ??= exchangeRefreshToken().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

/** Called when the session is over (401 that a refresh could not fix). */
let onSessionEnd = () => {};
/** @param {() => void} handler */
export function setSessionEndHandler(handler) {
  onSessionEnd = handler;
}

function endSession() {
  logOut();
  onSessionEnd();
}

/**
 * Whether a request refused with the token it sent is worth sending again: another request may have
 * refreshed the token meanwhile, else this one refreshes it (once for all); not once the tab has logged out, nor
 * once another login has replaced the one it was sent in (see SESSION_KEY).
 * @param {string | null} sent
 * @param {string | null} sentIn the login the request was sent in
 */
async function renewedSince(sent, sentIn) {
  const sameLogin = () => sessionStorage.getItem(SESSION_KEY) === sentIn;
  const now = sessionStorage.getItem(TOKEN_KEY);
  // Logged out meanwhile: there is nothing to send it with, and the session was ended on purpose.
  if (now === null || !sameLogin()) return false;
  if (now !== sent) return true;
  if (await refresh()) return sameLogin();
  const current = sessionStorage.getItem(TOKEN_KEY);
  return current !== null && current !== sent && sameLogin();
}

/**
 * A path segment the browser's URL parser resolves away before a request leaves (WHATWG URL: `.` and `..`, either
 * dot also spelled `%2e`), so that `/api/groups/${encodeURIComponent(id)}/users` for the id `..` is sent as
 * `/api/users` (encodeURIComponent leaves dots alone). The service refuses such names (src/engine/http-syntax.ts),
 * so only an address made up to mislead (a link to `#/access/groups/..`) yields one.
 */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * Whether `path` (before its query) holds a segment the browser would resolve away: such a request would reach
 * another route than the one the page names, with the session's token (a client-side path traversal).
 * Tabs and newlines are dropped first, as the URL parser drops them; `\` separates segments as `/` does there.
 * @param {string} path
 */
export function holdsDotSegment(path) {
  const cleaned = path.replace(/[\t\n\r]/g, "");
  const end = cleaned.search(/[?#]/);
  return (end < 0 ? cleaned : cleaned.slice(0, end)).split(/[\/\\]/).some((segment) => DOT_SEGMENT.test(segment));
}

/**
 * Calls the API with the session's token; JSON in and out. Throws {@link ApiError} for refusals.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
export async function api(method, path, body) {
  return (await apiWithHeaders(method, path, body)).body;
}

/**
 * {@link api}, answering the response's headers beside its body: for the answers whose headers say more than the body
 * (the queue listings' `X-Queues-Left-Out`).
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<{ body: any, headers: Headers }>}
 */
export async function apiWithHeaders(method, path, body) {
  if (holdsDotSegment(path)) throw new Error(`No request sent: ${path} holds a "." or ".." segment, which the browser would resolve to another address`);
  for (let attempt = 0; ; attempt++) {
    const sent = sessionStorage.getItem(TOKEN_KEY);
    const sentIn = sessionStorage.getItem(SESSION_KEY);
    /** @type {Record<string, string>} */
    const headers = { "x-authorization": sent ?? "" };
    /** @type {RequestInit} */
    const init = { method, headers };
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    if (response.status === 401 && attempt === 0 && (await renewedSince(sent, sentIn))) continue;
    const parsed = await readBody(response);
    if (response.ok) return { body: parsed, headers: response.headers };
    // Another request may have ended the session already, or a new login started one: leave that alone.
    if (response.status === 401 && sessionStorage.getItem(TOKEN_KEY) === sent) endSession();
    if (response.status === 401 && sessionStorage.getItem(TOKEN_KEY) !== null && sessionStorage.getItem(SESSION_KEY) !== sentIn) {
      throw new ApiError(401, "SESSION_REPLACED", `Not sent again: ${method} ${path} was refused to the login that sent it, which another login has replaced since`);
    }
    throw toError(response, parsed);
  }
}

/** @returns {Promise<{userId: string, scope: string, permissions: string[]}>} */
export function me(scope = "*") {
  return api("GET", `/api/security/permissions?scope=${encodeURIComponent(scope)}`);
}

/**
 * The caller's permissions at a scope, cached for HELD_PERMISSIONS_KEPT_MS (a login starts over).
 * @type {Map<string, Promise<Set<string>>>}
 */
const permissionCache = new Map();
/**
 * How long a failed look-up's "none" stands before its scope is asked again. The execution page looks up its task's
 * scopes on every refresh (2 s) and the executions list one scope per workflow name shown (up to 25, every 3 s): asked
 * again at once, a look-up failing for a while (a 503 or 429, which ask the caller to wait; no network) would be sent
 * again on every refresh, each adding to the load that refused it.
 */
export const FAILED_PERMISSIONS_KEPT_MS = 30_000;
/**
 * How long what the service said stands before its scope is asked again: editors are shown read-only without the
 * right to write, so a grant (or a revocation) made while the tab is open shows within minutes, not at the next login.
 */
export const HELD_PERMISSIONS_KEPT_MS = 5 * 60_000;
/**
 * When each scope's look-up may be asked again (Date.now() time).
 * @type {Map<string, number>}
 */
const askAgainAt = new Map();
/**
 * The caller's permissions at `scope`; none while the service cannot say (a 5xx, a 429, no network), which is kept for
 * FAILED_PERMISSIONS_KEPT_MS only: a later page asks again rather than hiding the actions the caller holds until the
 * next login, without asking on every refresh meanwhile. What it said is kept for HELD_PERMISSIONS_KEPT_MS.
 * @param {string} scope
 */
export function permissionsAt(scope) {
  return cachedPermissions(scope, async () => (await me(scope)).permissions);
}

/** The cache key of {@link permissionsAnywhere}: no scope is written so (a scope holds no space). */
const ANYWHERE = "(any scope)";

/**
 * The permissions the caller holds at one scope or another (`GET /api/token/userInfo`'s `permissions`), cached as
 * {@link permissionsAt}'s are: for what is written under a name not known yet, such as a new workflow definition, which
 * `WORKFLOW_WRITE` at `workflow:orders_*` lets its holder register under a name of that prefix.
 */
export function permissionsAnywhere() {
  return cachedPermissions(ANYWHERE, async () => {
    const info = /** @type {{ permissions?: Array<{ action: string }> }} */ (await api("GET", "/api/token/userInfo"));
    return (info.permissions ?? []).map((grant) => grant.action);
  });
}

/**
 * The keys whose kept answer is what the service said (not a failed look-up's "none"): past its time such an answer
 * still stands while its scope is asked again, so a page drawn meanwhile (the execution page's task panel, drawn before
 * its Complete and Fail buttons are added from the answer) does not drop the actions until the new answer arrives.
 * @type {Set<string>}
 */
const heldAnswers = new Set();

/**
 * The permissions `ask` answers, kept under `key` for HELD_PERMISSIONS_KEPT_MS, then asked again while the old answer
 * stands until the new one arrives (an answer that fails to come keeps the old one FAILED_PERMISSIONS_KEPT_MS more);
 * none while the service cannot say, kept for FAILED_PERMISSIONS_KEPT_MS only.
 * @param {string} key
 * @param {() => Promise<string[]>} ask
 */
function cachedPermissions(key, ask) {
  const cached = permissionCache.get(key);
  const retryAt = askAgainAt.get(key);
  if (cached && (retryAt === undefined || Date.now() < retryAt)) return cached;
  askAgainAt.delete(key);
  if (cached && heldAnswers.has(key)) {
    askAgainInBackground(key, ask, cached);
    return cached;
  }
  // Unless a login has started over meanwhile (forgetPermissions), and so asks for itself.
  const keepFor = (/** @type {number} */ ms) => {
    if (permissionCache.get(key) === asked) askAgainAt.set(key, Date.now() + ms);
  };
  /** @type {Promise<Set<string>>} */
  const asked = ask().then(
    (permissions) => {
      if (permissionCache.get(key) === asked) heldAnswers.add(key);
      keepFor(HELD_PERMISSIONS_KEPT_MS);
      return new Set(permissions);
    },
    () => {
      keepFor(FAILED_PERMISSIONS_KEPT_MS);
      return new Set();
    },
  );
  permissionCache.set(key, asked);
  return asked;
}

/**
 * Asks `key`'s permissions again while `kept`, what the service said before, stays the answer: the new answer
 * replaces it when it arrives; a failure leaves it, asked again after FAILED_PERMISSIONS_KEPT_MS. Nothing is written
 * when a login has started over meanwhile (forgetPermissions) or another answer has replaced `kept`.
 * @param {string} key
 * @param {() => Promise<string[]>} ask
 * @param {Promise<Set<string>>} kept
 */
function askAgainInBackground(key, ask, kept) {
  // Asked once: until it settles, the key has no time to ask again, so later calls take `kept` as they find it.
  const stillKept = () => permissionCache.get(key) === kept;
  ask().then(
    (permissions) => {
      if (!stillKept()) return;
      permissionCache.set(key, Promise.resolve(new Set(permissions)));
      askAgainAt.set(key, Date.now() + HELD_PERMISSIONS_KEPT_MS);
    },
    () => {
      if (stillKept()) askAgainAt.set(key, Date.now() + FAILED_PERMISSIONS_KEPT_MS);
    },
  );
}
export function forgetPermissions() {
  permissionCache.clear();
  askAgainAt.clear();
  heldAnswers.clear();
}
