import { cutText } from "../engine/limits";
import type { WorkflowExecution } from "../engine/model";
import { failedReferenceTaskNames } from "../engine/view";

/**
 * Longest text kept in a column of the index (input and output JSON, the reason, the failed tasks):
 * search shows a summary, the execution holds the rest. Each row stays far below D1's 2 MB, and a page of
 * a thousand rows stays a few megabytes, whatever a workflow or a caller put into those fields.
 */
const SUMMARY_TEXT_LIMIT = 4096;

/** `text` as the index keeps it: cut at {@link SUMMARY_TEXT_LIMIT}, marked with "…" when cut. */
function summaryText(text: string): string {
  const cut = cutText(text, SUMMARY_TEXT_LIMIT);
  return cut === text ? text : `${cut}…`;
}

function summaryJson(value: unknown): string {
  return summaryText(JSON.stringify(value));
}

/**
 * What the index knows of an execution. When this changes, the row must be rewritten; between such
 * changes (task to task) nothing is written, which keeps D1 off the transition path. `updateTime` moves
 * only with workflow-level changes (pause, resume, end...), and tells apart two states with the same
 * status: a row written for the first of pause, resume, pause would otherwise pass for the last.
 */
export function indexSignature(execution: WorkflowExecution): string {
  return `${execution.status}|${execution.startTime}|${execution.endTime}|${execution.updateTime}|${execution.workflowVersion}|${failedTasksColumn(execution)}`;
}

/** The failed tasks as the index keeps them: joined with ",", as Conductor's WorkflowSummary. */
function failedTasksColumn(execution: WorkflowExecution): string {
  return summaryText(failedReferenceTaskNames(execution).join(","));
}

/** An execution's search row: the columns of `executions` as plain data, so it can travel over RPC. */
export interface IndexRow {
  workflowId: string;
  workflowName: string;
  workflowVersion: number;
  status: string;
  correlationId: string | null;
  parentWorkflowId: string | null;
  /** The reason for incompletion, cut at {@link SUMMARY_TEXT_LIMIT} characters. */
  reason: string | null;
  priority: number;
  createTime: number;
  startTime: number;
  endTime: number;
  updateTime: number;
  /** JSON, cut at {@link SUMMARY_TEXT_LIMIT} characters. */
  input: string;
  output: string;
  /** The failed tasks' reference names, comma-separated ("" when none), cut at {@link SUMMARY_TEXT_LIMIT} characters. */
  failedReferenceTaskNames: string;
}

/** The search row of an execution as it stands. */
export function indexRow(execution: WorkflowExecution): IndexRow {
  return {
    workflowId: execution.workflowId,
    workflowName: execution.workflowName,
    workflowVersion: execution.workflowVersion,
    status: execution.status,
    correlationId: execution.correlationId ?? null,
    parentWorkflowId: execution.parentWorkflowId ?? null,
    reason: execution.reasonForIncompletion === undefined ? null : summaryText(execution.reasonForIncompletion),
    priority: execution.priority,
    createTime: execution.createTime,
    startTime: execution.startTime,
    endTime: execution.endTime,
    updateTime: execution.updateTime,
    input: summaryJson(execution.input),
    output: summaryJson(execution.output),
    failedReferenceTaskNames: failedTasksColumn(execution),
  };
}

/** The upsert of one search row; an older row arriving after a newer one changes nothing. */
export function upsertIndexRow(db: D1Database, row: IndexRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, correlation_id, parent_workflow_id, reason,
         priority, create_time, start_time, end_time, update_time, input, output, failed_reference_task_names)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
       ON CONFLICT (workflow_id) DO UPDATE SET
         workflow_version = excluded.workflow_version, status = excluded.status, reason = excluded.reason, correlation_id = excluded.correlation_id,
         start_time = excluded.start_time, end_time = excluded.end_time, update_time = excluded.update_time,
         input = excluded.input, output = excluded.output, failed_reference_task_names = excluded.failed_reference_task_names
       WHERE excluded.update_time >= executions.update_time`,
    )
    .bind(
      row.workflowId,
      row.workflowName,
      row.workflowVersion,
      row.status,
      row.correlationId,
      row.parentWorkflowId,
      row.reason,
      row.priority,
      row.createTime,
      row.startTime,
      row.endTime,
      row.updateTime,
      row.input,
      row.output,
      row.failedReferenceTaskNames,
    );
}

/** The deletion of an execution's search row. */
export function deleteIndexRow(db: D1Database, workflowId: string): D1PreparedStatement {
  return db.prepare(`DELETE FROM executions WHERE workflow_id = ?`).bind(workflowId);
}

/** An idempotency key an execution was started with: keys are per workflow name. */
export interface HeldIdempotencyKey {
  workflowName: string;
  key: string;
}

/** The release of an idempotency key, only while `workflowId` still holds it (FAIL_ON_RUNNING may have handed it on). */
export function releaseIdempotencyKey(db: D1Database, workflowId: string, held: HeldIdempotencyKey): D1PreparedStatement {
  return db.prepare(`DELETE FROM idempotency_keys WHERE workflow_name = ? AND idempotency_key = ? AND workflow_id = ?`).bind(held.workflowName, held.key, workflowId);
}
