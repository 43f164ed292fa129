import type { WorkflowExecution } from "../engine/model";

/** Longest input/output text kept in the index: search shows a summary, the execution holds the rest. */
const SUMMARY_JSON_LIMIT = 4096;

function summaryJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length <= SUMMARY_JSON_LIMIT ? text : `${text.slice(0, SUMMARY_JSON_LIMIT)}…`;
}

/**
 * What the index knows of an execution. When this changes, the row must be rewritten; between such
 * changes (task to task) nothing is written, which keeps D1 off the transition path.
 */
export function indexSignature(execution: WorkflowExecution): string {
  return `${execution.status}|${execution.startTime}|${execution.endTime}|${execution.workflowVersion}`;
}

/** Upserts an execution's search row; an older write arriving after a newer one changes nothing. */
export async function writeIndexRow(db: D1Database, execution: WorkflowExecution): Promise<void> {
  await db
    .prepare(
      `INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, correlation_id, parent_workflow_id, reason,
         priority, create_time, start_time, end_time, update_time, input, output)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
       ON CONFLICT (workflow_id) DO UPDATE SET
         workflow_version = excluded.workflow_version, status = excluded.status, reason = excluded.reason, correlation_id = excluded.correlation_id,
         start_time = excluded.start_time, end_time = excluded.end_time, update_time = excluded.update_time,
         input = excluded.input, output = excluded.output
       WHERE excluded.update_time >= executions.update_time`,
    )
    .bind(
      execution.workflowId,
      execution.workflowName,
      execution.workflowVersion,
      execution.status,
      execution.correlationId ?? null,
      execution.parentWorkflowId ?? null,
      execution.reasonForIncompletion ?? null,
      execution.priority,
      execution.createTime,
      execution.startTime,
      execution.endTime,
      execution.updateTime,
      summaryJson(execution.input),
      summaryJson(execution.output),
    )
    .run();
}

/** Drops an execution's search row. */
export async function deleteIndexRow(db: D1Database, workflowId: string): Promise<void> {
  await db.prepare(`DELETE FROM executions WHERE workflow_id = ?`).bind(workflowId).run();
}
