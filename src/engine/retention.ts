/**
 * How long a finished execution is kept. Each Durable Object keeps its storage until it is deleted, so without a
 * retention every execution ever run stays stored (and billed) forever, input and output included. A definition's
 * `retentionSeconds` decides for its executions; without one the service's default (`EXECUTION_RETENTION`) does.
 * The actor removes an execution once this says it is due, as `DELETE /api/workflow/{id}/remove` would.
 */
import { TERMINAL_WORKFLOW_STATUSES, type WorkflowExecution } from "./model";

/** The longest retention a definition may ask for: a hundred years, which keeps every alarm time a valid date. */
export const MAX_RETENTION_SECONDS = 100 * 365 * 24 * 60 * 60;

/**
 * When `execution` is due for removal (epoch ms), or undefined while it is kept: it has not ended (a running, paused
 * or reopened execution is never due), its definition says `retentionSeconds: 0` (kept for good), or neither its
 * definition nor the service (`defaultRetentionMs`) sets a retention. Counted from the end of its latest run, so a
 * retry or rerun starts the count again when it ends.
 */
export function removalDueAt(execution: WorkflowExecution, defaultRetentionMs: number | undefined): number | undefined {
  if (!TERMINAL_WORKFLOW_STATUSES.has(execution.status)) return undefined;
  const declared = execution.definition.retentionSeconds;
  const retentionMs = declared === undefined ? defaultRetentionMs : declared === 0 ? undefined : declared * 1000;
  return retentionMs === undefined ? undefined : execution.endTime + retentionMs;
}
