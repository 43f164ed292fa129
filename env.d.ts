/** Bindings, vars and secrets of the Worker and its Durable Object (see wrangler.toml and the README's Configuration table). */
interface Env {
  DB: D1Database;
  WORKFLOW_EXECUTION: DurableObjectNamespace<import("./src/actors/workflow-execution").WorkflowExecution>;
  RATE_LIMITER: DurableObjectNamespace<import("./src/actors/rate-limiter").RateLimiter>;
  INDEX_WRITER: DurableObjectNamespace<import("./src/actors/index-writer").ExecutionIndexWriter>;
  TASK_QUEUE: DurableObjectNamespace<import("./src/actors/task-queue").TaskQueue>;
  SCHEDULE_TRIGGER: DurableObjectNamespace<import("./src/actors/schedule-trigger").ScheduleTrigger>;
  EXECUTION_LIMIT: DurableObjectNamespace<import("./src/actors/execution-limit").ExecutionLimit>;
  TASK_LIMIT: DurableObjectNamespace<import("./src/actors/task-limit").TaskLimit>;
  /** `<keyId>:<keySecret>` of the bootstrap admin (a Worker secret; `.dev.vars` locally). */
  BOOTSTRAP_ADMIN_KEY?: string;
  MAX_REQUEST_BYTES?: string;
  HTTP_CONNECT_TIMEOUT_MS?: string;
  HTTP_READ_TIMEOUT_MS?: string;
  HTTP_MAX_TIMEOUT_MS?: string;
  HTTP_MAX_RESPONSE_BYTES?: string;
  HTTP_REQUESTS_PER_INVOCATION?: string;
  CHILD_STARTS_PER_INVOCATION?: string;
  WEBHOOK_CALLS_PER_DELIVERY?: string;
  EXECUTE_DEFAULT_WAIT_SECONDS?: string;
  EXECUTE_MAX_WAIT_SECONDS?: string;
  PUBLIC_BASE_URL?: string;
  MAX_SUBWORKFLOW_DEPTH?: string;
  MAX_PAYLOAD_BYTES?: string;
  MAX_EXECUTION_BYTES?: string;
  /** base64 of 32 random bytes: the AES-256-GCM key of the secrets store (a Worker secret). */ SECRETS_ENCRYPTION_KEY?: string;
  /** `kid:base64secret[,kid:base64secret…]`, current signing key first (a Worker secret). */
  JWT_SIGNING_KEYS?: string;
  ACCESS_TOKEN_TTL_SECONDS?: string;
  /** External OAuth 2.0 / OIDC issuer whose access tokens are accepted (with OAUTH_JWKS_URL). */
  OAUTH_ISSUER?: string;
  OAUTH_AUDIENCE?: string;
  OAUTH_JWKS_URL?: string;
  /** Claim naming the user (default `sub`) and claim listing role names (optional); dotted paths allowed. */
  OAUTH_USER_CLAIM?: string;
  OAUTH_ROLES_CLAIM?: string;
  /** The `typ` header the issuer's access tokens must carry (`at+jwt`, RFC 9068), when set; unchecked by default. */
  OAUTH_TOKEN_TYPE?: string;
  /** A Worker asked who a request is when no built-in credentials are recognised (service binding). */
  AUTH_SERVICE?: Fetcher;
  REFRESH_TOKEN_TTL_SECONDS?: string;
  /** Seconds after a refresh within which the same refresh token sent again is answered the same pair (0: none). */
  REFRESH_TOKEN_REUSE_GRACE_SECONDS?: string;
  /** Browser origins allowed to call the API across origins: comma-separated, or `*`; unset means none. */
  CORS_ALLOWED_ORIGINS?: string;
  /** Failed API key checks allowed per key id and client address, per client address, and their window. */
  AUTH_FAILURES_PER_KEY?: string;
  AUTH_FAILURES_PER_ADDRESS?: string;
  AUTH_FAILURE_WINDOW_SECONDS?: string;
  /** Callbacks (valid or not) one webhook task accepts per window. */
  CALLBACKS_PER_TASK?: string;
  CALLBACK_WINDOW_SECONDS?: string;
  /** Egress of HTTP tasks: comma-separated host names, `*.suffix`, IPs and CIDR ranges; and whether non-public addresses may be called. */
  EGRESS_ALLOW?: string;
  EGRESS_DENY?: string;
  EGRESS_ALLOW_PRIVATE?: string;
  /** How many objects batch search-row writes to D1 (default 1). */
  INDEX_WRITER_SHARDS?: string;
  /** How long finished executions are kept before they are removed ("30d", "12h"); unset keeps them (see src/engine/retention.ts). */
  EXECUTION_RETENTION?: string;
}
declare namespace Cloudflare {
  interface Env extends globalThis.Env {}
}
