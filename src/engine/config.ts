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
}

/** Defaults used when configuration leaves a value out. */
export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  httpConnectTimeoutMs: 5_000,
  httpReadTimeoutMs: 30_000,
  httpMaxTimeoutMs: 600_000,
  dispatchGraceMs: 5_000,
  // A task row holds input and output: two of these plus bookkeeping stay under the 2 MB row limit.
  maxPayloadBytes: 768 * 1024,
};

/** What the engine may not read by itself: the clock and the id source. */
export interface DecideEnv {
  /** Current time, epoch ms. */
  now: number;
  /** A fresh random UUID. */
  newId: () => string;
  config: EngineConfig;
}
