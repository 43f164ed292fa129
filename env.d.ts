interface Env {
  DB: D1Database;
  WORKFLOW_EXECUTION: DurableObjectNamespace<import("./src/actors/workflow-execution").WorkflowExecution>;
}
declare namespace Cloudflare {
  interface Env extends globalThis.Env {}
}
