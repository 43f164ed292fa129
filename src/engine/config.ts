import type { JqRunner } from "./jq";
import type { TaskDef } from "./model";
import type { ScriptRunner } from "./scripts";

/** Limits and defaults the engine applies; the worker fills them from configuration. */
export interface EngineConfig {
  /** HTTP `connectionTimeOut` when a task gives none (ms). */
  httpConnectTimeoutMs: number;
  /** HTTP `readTimeOut` when a task gives none (ms). */
  httpReadTimeoutMs: number;
  /** Upper bound on either HTTP timeout, whatever a task asks for (ms). */
  httpMaxTimeoutMs: number;
  /**
   * Slack added to a dispatched effect's own timeout before the engine presumes the attempt lost
   * (the object was evicted mid-call) and dispatches it again.
   */
  dispatchGraceMs: number;
  /**
   * Largest task output or workflow output kept (UTF-8 JSON bytes). Larger ones fail the task or
   * workflow with a clear reason: a Durable Object's SQLite row cannot hold more than 2 MB.
   */
  maxPayloadBytes: number;
  /**
   * Largest total of an execution's task instances (UTF-8 JSON bytes). A new instance that would take it over
   * fails for good instead: retries copy their input, and 200 tasks with 100 retries each of large inputs would
   * make an execution too large to hold in an isolate's memory or to return as one Workflow JSON (32 MiB over RPC).
   */
  maxExecutionBytes: number;
}

/**
 * The most `maxPayloadBytes` may be (960 KiB): a task instance is one SQLite row holding its input and its output, each up
 * to the limit, and a Durable Object's SQLite refuses a row over 2 MB (SQLITE_TOOBIG; Cloudflare's Durable Objects
 * limits, "Maximum string, BLOB or table row size"), which would fail every write of the execution from then on. Two of
 * these leave some 30 KB of the 2,000,000 bytes for the row's other fields (a failure reason is at most 500 characters).
 */
export const MAX_PAYLOAD_BYTES_CEILING = 960 * 1024;

/** Defaults used when configuration leaves a value out. */
export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  httpConnectTimeoutMs: 5_000,
  httpReadTimeoutMs: 30_000,
  httpMaxTimeoutMs: 600_000,
  dispatchGraceMs: 5_000,
  // A task row holds input and output: two of these plus bookkeeping stay under the 2 MB row limit.
  maxPayloadBytes: 768 * 1024,
  // Even as two-byte characters, the Workflow JSON with its header and definition stays under the 32 MiB of an RPC answer.
  maxExecutionBytes: 10 * 1024 * 1024,
};

/** What the engine may not read or do by itself: the clock, the id source, the script interpreter and the jq processor. */
export interface DecideEnv {
  /** Current time, epoch ms. */
  now: number;
  /** A fresh random UUID. */
  newId: () => string;
  config: EngineConfig;
  /** Runs INLINE scripts and SWITCH javascript expressions. */
  scripts: ScriptRunner;
  /** Runs JSON_JQ_TRANSFORM filters. */
  jq: JqRunner;
  /**
   * What the actor knows at once of the task definition registered under `name`: it, null when none is registered,
   * undefined when it must be looked up first (the task then waits for it: see `TaskExecution.awaitingTaskDef`).
   */
  taskDefs: (name: string) => TaskDef | null | undefined;
}
