/** Bindings, vars and secrets of the Worker and its Durable Object (see wrangler.toml and docs/configuration.md). */
interface Env {
  DB: D1Database;
  WORKFLOW_EXECUTION: DurableObjectNamespace<import("./src/actors/workflow-execution").WorkflowExecution>;
  /** `<keyId>:<keySecret>` of the bootstrap admin (a Worker secret; `.dev.vars` locally). */
  BOOTSTRAP_ADMIN_KEY?: string;
  MAX_REQUEST_BYTES?: string;
  HTTP_CONNECT_TIMEOUT_MS?: string;
  HTTP_READ_TIMEOUT_MS?: string;
  HTTP_MAX_TIMEOUT_MS?: string;
  HTTP_MAX_RESPONSE_BYTES?: string;
  EXECUTE_DEFAULT_WAIT_SECONDS?: string;
  EXECUTE_MAX_WAIT_SECONDS?: string;
  PUBLIC_BASE_URL?: string;
  MAX_SUBWORKFLOW_DEPTH?: string;
}
declare namespace Cloudflare {
  interface Env extends globalThis.Env {}
}
