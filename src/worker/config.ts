import { DEFAULT_ENGINE_CONFIG, MAX_PAYLOAD_BYTES_CEILING, type EngineConfig } from "../engine/config";
import { EgressConfigError, parseEgressPolicy, type EgressPolicy } from "../engine/tasks/http/egress";
import { MAX_RETENTION_SECONDS } from "../engine/retention";
import { DURATION_FORMAT, parseWaitDuration } from "../engine/tasks/wait/schedule";
import { parseApiKey } from "./auth/api-key-format";
import type { CredentialLimits } from "./auth/throttle";
import { parseCorsPolicy, type CorsPolicy } from "./http/headers";
import { urlForLog } from "./http/url-for-log";
import { underlyingEnv } from "./webhooks/call-budget";
import type { RateLimit } from "./rate-limit/window";

/** Service configuration, read from Worker vars (wrangler.toml `[vars]`, `.dev.vars`, secrets; see env.d.ts). */
export interface ServiceConfig {
  engine: EngineConfig;
  /** Largest request body accepted (bytes); larger ones get 413. */
  maxRequestBytes: number;
  /** Largest HTTP task response body kept (bytes); larger ones fail the task. */
  httpMaxResponseBytes: number;
  /**
   * Most HTTP requests an execution's object starts between two of its alarms (`HTTP_REQUESTS_PER_INVOCATION`); the
   * HTTP tasks beyond it start from an alarm set for now, a fresh invocation (see docs/reliability.md, Limits on Cloudflare).
   */
  httpRequestsPerInvocation: number;
  /**
   * Most workflows an execution's SUB_WORKFLOW and START_WORKFLOW tasks start between two of its alarms
   * (`CHILD_STARTS_PER_INVOCATION`): the tasks beyond start from an alarm set for now, a fresh invocation (see
   * docs/reliability.md, Limits on Cloudflare).
   */
  childStartsPerInvocation: number;
  /**
   * Most calls to D1 and Durable Objects one webhook delivery makes (`WEBHOOK_CALLS_PER_DELIVERY`); past it the
   * delivery answers 503 and leaves the rest to the sender's retry (see docs/reliability.md, Limits on Cloudflare).
   */
  webhookCallsPerDelivery: number;
  /**
   * Default and cap of `waitForSeconds` on the synchronous execute endpoint (and of a synchronous signal's
   * `timeoutMillis`): the default is at most the cap, which bounds every wait, asked for or not.
   */
  executeDefaultWaitSeconds: number;
  executeMaxWaitSeconds: number;
  /** How long a synchronous signal waits when it gives no `timeoutMillis` (Conductor's 5 s, at most the cap above). */
  signalDefaultWaitMs: number;
  /** Public base URL for callback URLs; when unset, taken from the request. */
  publicBaseUrl: string | undefined;
  /** How deep sub workflows may nest (a root execution has depth 0). */
  maxSubWorkflowDepth: number;
  /** Browser origins allowed to call the API (`CORS_ALLOWED_ORIGINS`). */
  cors: CorsPolicy;
  /** Brute-force limits on API key checks (token endpoints and `X-API-Key`). */
  credentialLimits: CredentialLimits;
  /** Callbacks one webhook task accepts within a window, valid or not. */
  callbackLimit: RateLimit;
  /** Which hosts HTTP tasks may call; a bad entry is kept as its error, which fails HTTP tasks clearly. */
  egress: EgressPolicy | { error: string };
  /** How many objects batch search-row writes to D1 (`INDEX_WRITER_SHARDS`); one suits up to a few hundred starts/s; raise it with the start rate. */
  indexWriterShards: number;
  /**
   * How long a finished execution is kept when its definition sets no `retentionSeconds` (`EXECUTION_RETENTION`, a
   * duration such as "30d"); undefined keeps executions until they are removed through the API.
   */
  executionRetentionMs: number | undefined;
  /** Lifetimes of the access and refresh tokens this service issues (`ACCESS_TOKEN_TTL_SECONDS`, `REFRESH_TOKEN_TTL_SECONDS`). */
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /**
   * How long after a refresh token was exchanged presenting it again is answered with the same new pair rather than taken
   * for a theft (`REFRESH_TOKEN_REUSE_GRACE_SECONDS`, at most {@link MAX_REFRESH_REUSE_GRACE_SECONDS}; 0 turns it off).
   */
  refreshReuseGraceSeconds: number;
}

/**
 * The longest refresh reuse grace window: within it a thief holding a just-exchanged refresh token is answered like its
 * owner, so a long one would blunt the reuse detection it relaxes (Okta allows up to a minute, Auth0's default is none).
 */
export const MAX_REFRESH_REUSE_GRACE_SECONDS = 300;

/** What `EXECUTION_RETENTION` may be, for the log line of one that is not. */
const RETENTION_FORMAT = `a duration longer than nothing and at most a hundred years (${MAX_RETENTION_SECONDS / 86_400}d): ${DURATION_FORMAT}`;

/**
 * `EXECUTION_RETENTION` in ms: a duration as a WAIT task reads one ("30d", "12h", "1d 12h"), longer than nothing and
 * at most a hundred years, the bound a definition's `retentionSeconds` has: the removal's alarm is set for the end plus
 * this, and Cloudflare's `setAlarm` refuses a date after 2189 (the refusal only shows as a rejected promise, so such an
 * execution showed a `removalTime` thousands of years away and kept no alarm for it). Anything else keeps executions
 * (the safe reading of a typo) and says so in the log, once per isolate.
 */
function executionRetention(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const ms = parseWaitDuration(raw);
  if (ms !== undefined && ms > 0 && ms <= MAX_RETENTION_SECONDS * 1000) return ms;
  console.error(JSON.stringify({ msg: "EXECUTION_RETENTION ignored: executions are kept until removed", expected: RETENTION_FORMAT, received: raw }));
  return undefined;
}

/**
 * `PUBLIC_BASE_URL` without its trailing slashes: an absolute `http://` or `https://` URL with no query, fragment or
 * credentials, which callback URLs (`<base>/api/tasks/webhook/…`) and webhook URLs (`<base>/webhook/…`) are built on.
 * Anything else (`flows.example.com` without its scheme, say) would hand every sender a URL that reaches nothing and
 * store it in executions, webhooks and schedules: it is ignored, the request's origin used as when unset, and said
 * in the log, once per isolate (as the README's Configuration says of a value that is not what its row asks for).
 */
function publicBaseUrl(raw: string | undefined): string | undefined {
  const given = raw?.trim().replace(/\/+$/, "");
  if (!given) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(given);
  } catch {
    url = undefined;
  }
  if (url !== undefined && (url.protocol === "https:" || url.protocol === "http:") && url.search === "" && url.hash === "" && url.username === "" && url.password === "" && !given.includes("?") && !given.includes("#")) {
    return given;
  }
  console.error(JSON.stringify({ msg: "PUBLIC_BASE_URL ignored: callback URLs use the request's origin", expected: "an http:// or https:// URL such as https://flows.example.com, without query, fragment or credentials", received: urlForLog(given) }));
  return undefined;
}

/**
 * `MAX_PAYLOAD_BYTES`, at most {@link MAX_PAYLOAD_BYTES_CEILING}: a larger one would let a task's input and output
 * together pass what one stored row holds. A value above it counts as it, and the log says so once per isolate.
 */
function maxPayloadBytes(env: Env): number {
  const raw: unknown = env.MAX_PAYLOAD_BYTES;
  const asked = countVar(env, "MAX_PAYLOAD_BYTES", DEFAULT_ENGINE_CONFIG.maxPayloadBytes);
  if (asked <= MAX_PAYLOAD_BYTES_CEILING) return asked;
  console.error(JSON.stringify({ msg: `MAX_PAYLOAD_BYTES above ${MAX_PAYLOAD_BYTES_CEILING} counts as ${MAX_PAYLOAD_BYTES_CEILING}: a task's input and output share a stored row of at most 2 MB`, received: text(raw) }));
  return MAX_PAYLOAD_BYTES_CEILING;
}

/**
 * The shortest `keySecret` of `BOOTSTRAP_ADMIN_KEY` not logged as weak while the token signing key is derived from it:
 * 32 random base64 characters are 192 bits, past any offline search, while a shorter one is likely a person's choice.
 */
const STRONG_BOOTSTRAP_SECRET_CHARS = 32;

/**
 * Logs, once per isolate, a `BOOTSTRAP_ADMIN_KEY` that is no `<keyId>:<keySecret>` (no colon, or nothing on one side):
 * no request can match it, so the admin cannot sign in, and without the log nothing says why. Logs too one whose
 * `keySecret` is short while no `JWT_SIGNING_KEYS` is set (`signingKeysSet` false): the tokens are then signed with a key
 * derived from it, which a user holding one can test guesses against offline (see tokens.ts, `stretchedAdminKey`).
 * Never its value: the log is read by whoever may read the Worker's logs, not only those who may read its secrets.
 */
function checkBootstrapAdminKey(raw: string | undefined, signingKeysSet: boolean): void {
  if (raw === undefined || raw.trim() === "") return;
  const key = parseApiKey(raw.trim());
  if (key === undefined || key.keyId === "" || key.keySecret === "") {
    console.error(JSON.stringify({ msg: "BOOTSTRAP_ADMIN_KEY matches no API key: the admin cannot sign in with it", expected: "<keyId>:<keySecret>, such as ops:<a long random secret>" }));
    return;
  }
  if (signingKeysSet || key.keySecret.length >= STRONG_BOOTSTRAP_SECRET_CHARS) return;
  const fix = `set JWT_SIGNING_KEYS (k1:$(openssl rand -base64 32)), or a keySecret of at least ${STRONG_BOOTSTRAP_SECRET_CHARS} random characters (npm start generates 43)`;
  console.error(JSON.stringify({ msg: "BOOTSTRAP_ADMIN_KEY is short and signs the tokens: a user holding one can guess the admin key offline", keySecretLength: key.keySecret.length, fix }));
}

/**
 * What a browser sends as `Origin`: a scheme, a host and a port that is not the scheme's own, nothing more (or
 * `null`, for an opaque origin). An entry written otherwise is compared with origins all the same, and never equals one.
 * A scheme the URL standard gives no origin of its own (`new URL("capacitor://localhost").origin` is `"null"`) is still
 * sent as `scheme://host[:port]` by the pages that have it: a browser extension's (`chrome-extension://<id>`), a
 * Capacitor app's web view on iOS (`capacitor://localhost`). Such an entry matches them, and is no mistake to log.
 */
function isSerializedOrigin(entry: string): boolean {
  if (entry === "null") return true;
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return false;
  }
  if (url.origin !== "null") return url.origin === entry;
  return url.host !== "" && `${url.protocol}//${url.host}` === entry;
}

/**
 * `CORS_ALLOWED_ORIGINS` as {@link parseCorsPolicy} reads it; an entry that can match no `Origin` (`app.example.com`
 * without its scheme, a path, a default port) is logged once per isolate, as other refused settings are: a browser
 * app on that origin would otherwise meet a 403 with nothing saying which entry was wrong.
 */
function corsPolicy(raw: string | undefined): CorsPolicy {
  const policy = parseCorsPolicy(raw);
  const unmatched = [...policy.origins].filter((entry) => !isSerializedOrigin(entry));
  if (unmatched.length > 0) {
    console.error(JSON.stringify({ msg: "CORS_ALLOWED_ORIGINS entries that match no browser origin", expected: "origins such as https://app.example.com or http://localhost:5173 (scheme, host, and a port only when not the scheme's own), or *", received: unmatched.map(urlForLog) }));
  }
  return policy;
}

/**
 * `EGRESS_ALLOW_PRIVATE`: `true` (any case, or the TOML boolean) opens non-public addresses to HTTP tasks; anything
 * else keeps them closed, the safe reading of a typo. A value that is neither `true` nor `false` ("1", "yes", "on")
 * is logged once per isolate: its HTTP tasks to 127.0.0.1 fail saying "EGRESS_ALLOW_PRIVATE is off", which the
 * operator who set it would not otherwise understand.
 */
function allowPrivateEgress(raw: unknown): boolean {
  const given = text(raw)?.trim().toLowerCase();
  if (given === "true") return true;
  if (given !== undefined && given !== "" && given !== "false") {
    console.error(JSON.stringify({ msg: "EGRESS_ALLOW_PRIVATE ignored: HTTP tasks may not call non-public addresses", expected: "true or false", received: text(raw)?.slice(0, 100) }));
  }
  return false;
}

function egressPolicy(env: Env): EgressPolicy | { error: string } {
  try {
    return parseEgressPolicy({ allow: text(env.EGRESS_ALLOW), deny: text(env.EGRESS_DENY), allowPrivate: allowPrivateEgress(env.EGRESS_ALLOW_PRIVATE) });
  } catch (error) {
    if (error instanceof EgressConfigError) return { error: error.message };
    throw error;
  }
}

/**
 * A var as text. Env declares vars as strings, but wrangler.toml's `[vars]` hands TOML numbers and booleans
 * (`HTTP_READ_TIMEOUT_MS = 5000`, `EGRESS_ALLOW_PRIVATE = true`) to the Worker as they are.
 */
function text(raw: unknown): string | undefined {
  return raw === undefined || raw === null ? undefined : String(raw);
}

/** A synchronous signal's default wait, as Conductor's `timeoutMillis` (5 s). */
const DEFAULT_SIGNAL_WAIT_MS = 5_000;

/**
 * A count or size var: a positive whole number, as digits ("5000") or a TOML number (`5000`); undefined for anything
 * else (unset included). Text that `Number()` reads but the README's table does not ask for ("1e3", "0x10", "5.0",
 * "+5") is refused like a word or a negative, so "0x10" is never taken for 16 nor "1e3" for a thousand by a reader who
 * did not write them.
 */
function readPositiveInt(raw: unknown): number | undefined {
  const value = readWholeNumber(raw);
  return value !== undefined && value > 0 ? value : undefined;
}

/** A whole number of 0 or more, written as {@link readPositiveInt} asks; undefined for anything else. */
function readWholeNumber(raw: unknown): number | undefined {
  if (typeof raw === "number") return Number.isSafeInteger(raw) && raw >= 0 ? raw : undefined;
  const given = text(raw)?.trim();
  if (given === undefined || !/^[0-9]+$/.test(given)) return undefined;
  const value = Number(given);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** The Worker vars read as counts and sizes (see {@link countVar}). */
type CountVarName =
  | "HTTP_CONNECT_TIMEOUT_MS"
  | "HTTP_READ_TIMEOUT_MS"
  | "HTTP_MAX_TIMEOUT_MS"
  | "MAX_PAYLOAD_BYTES"
  | "MAX_EXECUTION_BYTES"
  | "MAX_REQUEST_BYTES"
  | "HTTP_MAX_RESPONSE_BYTES"
  | "HTTP_REQUESTS_PER_INVOCATION"
  | "CHILD_STARTS_PER_INVOCATION"
  | "WEBHOOK_CALLS_PER_DELIVERY"
  | "EXECUTE_DEFAULT_WAIT_SECONDS"
  | "EXECUTE_MAX_WAIT_SECONDS"
  | "MAX_SUBWORKFLOW_DEPTH"
  | "AUTH_FAILURES_PER_KEY"
  | "AUTH_FAILURES_PER_ADDRESS"
  | "AUTH_FAILURE_WINDOW_SECONDS"
  | "CALLBACKS_PER_TASK"
  | "CALLBACK_WINDOW_SECONDS"
  | "INDEX_WRITER_SHARDS"
  | "ACCESS_TOKEN_TTL_SECONDS"
  | "REFRESH_TOKEN_TTL_SECONDS"
  | "REFRESH_TOKEN_REUSE_GRACE_SECONDS";

/**
 * The count or size var `name` as {@link readPositiveInt} reads it (with `"zero allowed"`, {@link readWholeNumber}: for a
 * var whose 0 turns something off), else `fallback`. A value set but refused ("2MB", "1e3", "-1", "30s") is
 * logged once per isolate with the default kept, as a refused PUBLIC_BASE_URL or EXECUTION_RETENTION is: the
 * deployment otherwise runs on the default (a 413 at 1 MiB, say) with nothing saying which setting was not read.
 * Unset or blank keeps the default silently.
 */
function countVar(env: Env, name: CountVarName, fallback: number, zero: "zero allowed" | "positive" = "positive"): number {
  const raw: unknown = env[name];
  const value = zero === "zero allowed" ? readWholeNumber(raw) : readPositiveInt(raw);
  if (value !== undefined) return value;
  const given = text(raw);
  if (given !== undefined && given.trim() !== "") {
    const expected = zero === "zero allowed" ? "a whole number (0 or more) written as digits, such as 30" : "a positive whole number written as digits, such as 5000";
    console.error(JSON.stringify({ msg: `${name} ignored: the default ${fallback} stays`, expected, received: given.slice(0, 100) }));
  }
  return fallback;
}

const cache = new WeakMap<object, ServiceConfig>();

/**
 * Parses configuration once per `env` object (vars do not change during an isolate's life), a webhook delivery's counted
 * `env` read as the one it wraps: so its lines (a refused value, a short admin key) are logged once per isolate.
 */
export function serviceConfig(env: Env): ServiceConfig {
  const cached = cache.get(underlyingEnv(env));
  if (cached) return cached;
  // Set as tokens.ts reads it: at least one entry between its commas.
  checkBootstrapAdminKey(text(env.BOOTSTRAP_ADMIN_KEY), (text(env.JWT_SIGNING_KEYS) ?? "").split(",").some((entry) => entry.trim() !== ""));
  const executeMaxWaitSeconds = countVar(env, "EXECUTE_MAX_WAIT_SECONDS", 60);
  // Read once: both limits share the window, and a refused value is logged once.
  const authFailureWindowMs = countVar(env, "AUTH_FAILURE_WINDOW_SECONDS", 300) * 1000;
  const config: ServiceConfig = {
    engine: {
      httpConnectTimeoutMs: countVar(env, "HTTP_CONNECT_TIMEOUT_MS", DEFAULT_ENGINE_CONFIG.httpConnectTimeoutMs),
      httpReadTimeoutMs: countVar(env, "HTTP_READ_TIMEOUT_MS", DEFAULT_ENGINE_CONFIG.httpReadTimeoutMs),
      httpMaxTimeoutMs: countVar(env, "HTTP_MAX_TIMEOUT_MS", DEFAULT_ENGINE_CONFIG.httpMaxTimeoutMs),
      dispatchGraceMs: DEFAULT_ENGINE_CONFIG.dispatchGraceMs,
      maxPayloadBytes: maxPayloadBytes(env),
      maxExecutionBytes: countVar(env, "MAX_EXECUTION_BYTES", DEFAULT_ENGINE_CONFIG.maxExecutionBytes),
    },
    maxRequestBytes: countVar(env, "MAX_REQUEST_BYTES", 1024 * 1024),
    // The body is kept twice in the output (response.body and body): half the payload limit, minus headers.
    httpMaxResponseBytes: countVar(env, "HTTP_MAX_RESPONSE_BYTES", 360 * 1024),
    // Workers Free allows 50 subrequests to the Internet per invocation, each redirect followed counting as one: 40
    // leaves room for a few. Workers Paid allows 10,000 by default (wrangler.toml [limits] subrequests).
    httpRequestsPerInvocation: countVar(env, "HTTP_REQUESTS_PER_INVOCATION", 40),
    // Workers Free allows 50 D1 queries per invocation, a start making one or more (its definition's read) and a call to
    // the child's object: 20 leaves room for the execution's own (its search row, a queue push) and a read more per
    // child. Workers Paid allows 1,000 D1 queries and 10,000 calls.
    childStartsPerInvocation: countVar(env, "CHILD_STARTS_PER_INVOCATION", 20),
    // Workers Free refuses a request's 1,001st call to Cloudflare's services (D1, Durable Objects): this leaves room for
    // the calls made outside a delivery's count and a margin. Workers Paid allows 10,000 by default.
    webhookCallsPerDelivery: countVar(env, "WEBHOOK_CALLS_PER_DELIVERY", 800),
    // The cap bounds the default too: an operator who lowers EXECUTE_MAX_WAIT_SECONDS to 5 means no call to wait longer.
    executeDefaultWaitSeconds: Math.min(countVar(env, "EXECUTE_DEFAULT_WAIT_SECONDS", 10), executeMaxWaitSeconds),
    executeMaxWaitSeconds,
    signalDefaultWaitMs: Math.min(DEFAULT_SIGNAL_WAIT_MS, executeMaxWaitSeconds * 1000),
    publicBaseUrl: publicBaseUrl(text(env.PUBLIC_BASE_URL)),
    maxSubWorkflowDepth: countVar(env, "MAX_SUBWORKFLOW_DEPTH", 10),
    cors: corsPolicy(text(env.CORS_ALLOWED_ORIGINS)),
    credentialLimits: {
      perKeyAndAddress: { limit: countVar(env, "AUTH_FAILURES_PER_KEY", 10), windowMs: authFailureWindowMs },
      perAddress: { limit: countVar(env, "AUTH_FAILURES_PER_ADDRESS", 100), windowMs: authFailureWindowMs },
    },
    callbackLimit: { limit: countVar(env, "CALLBACKS_PER_TASK", 60), windowMs: countVar(env, "CALLBACK_WINDOW_SECONDS", 60) * 1000 },
    egress: egressPolicy(env),
    indexWriterShards: Math.min(countVar(env, "INDEX_WRITER_SHARDS", 1), 256),
    executionRetentionMs: executionRetention(text(env.EXECUTION_RETENTION)),
    accessTokenTtlSeconds: countVar(env, "ACCESS_TOKEN_TTL_SECONDS", 3600),
    refreshTokenTtlSeconds: countVar(env, "REFRESH_TOKEN_TTL_SECONDS", 30 * 86_400),
    // 0 is a setting here (no grace: every reuse revokes), not a refused value.
    refreshReuseGraceSeconds: Math.min(countVar(env, "REFRESH_TOKEN_REUSE_GRACE_SECONDS", 30, "zero allowed"), MAX_REFRESH_REUSE_GRACE_SECONDS),
  };
  cache.set(underlyingEnv(env), config);
  return config;
}
