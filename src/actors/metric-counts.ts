import { TERMINAL_TASK_STATUSES, TERMINAL_WORKFLOW_STATUSES, type TaskStatus, type WorkflowStatus } from "../engine/model";
import { durationBucketSql } from "../worker/metrics/histogram";
import type { IndexRow } from "./execution-index";

/**
 * The statements counting what an execution's search row shows for the first time (the counters behind
 * `GET /api/metrics`: migrations/0026_metrics.sql): its start, when the index has no row of it yet; its ending, when
 * the index does not show that ending yet; each task's start and ending the task index does not show yet. They read
 * the rows the same batch then replaces, so they go first; a row sent again (a retried batch) finds itself and counts
 * nothing.
 */
export function metricCountStatements(db: D1Database, row: IndexRow): D1PreparedStatement[] {
  const statements = [countStart(db, row)];
  if (TERMINAL_WORKFLOW_STATUSES.has(row.status as WorkflowStatus)) statements.push(countEnd(db, row));
  const endedTasks = row.tasks.filter((task) => TERMINAL_TASK_STATUSES.has(task.status as TaskStatus));
  if (endedTasks.length > 0) statements.push(countTaskEnds(db, endedTasks));
  const startedTasks = row.tasks.filter((task) => task.startTime > 0);
  if (startedTasks.length > 0) statements.push(countTaskWaits(db, startedTasks));
  return statements;
}

/** A field of the facts a statement reads with `json_each(?1) AS t`. */
function factField(name: string): string {
  return `json_extract(t.value, '$.${name}')`;
}

function countStart(db: D1Database, row: IndexRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO workflow_starts (workflow_name, count) SELECT ?1, 1 WHERE NOT EXISTS (SELECT 1 FROM executions WHERE workflow_id = ?2)
       ON CONFLICT (workflow_name) DO UPDATE SET count = count + 1`,
    )
    .bind(row.workflowName, row.workflowId);
}

/**
 * Counts the ending unless the index shows it already (same status and end time) or shows something newer (the
 * upsert that follows would not write this row either). A retry or restart that ends again has a new end time: it
 * counts again, as another ending.
 */
function countEnd(db: D1Database, row: IndexRow): D1PreparedStatement {
  const durationMs = row.startTime > 0 && row.endTime > row.startTime ? row.endTime - row.startTime : 0;
  return db
    .prepare(
      `INSERT INTO workflow_ends (workflow_name, status, bucket, count, duration_ms) SELECT ?1, ?2, ${durationBucketSql("?3")}, 1, ?3
       WHERE NOT EXISTS (SELECT 1 FROM executions WHERE workflow_id = ?4 AND (update_time > ?5 OR (status = ?2 AND end_time = ?6)))
       ON CONFLICT (workflow_name, status, bucket) DO UPDATE SET count = count + 1, duration_ms = duration_ms + excluded.duration_ms`,
    )
    .bind(row.workflowName, row.status, durationMs, row.workflowId, row.updateTime, row.endTime);
}

/** Counts the tasks of `ended` whose ending the task index does not show yet, by type, status and duration bucket. */
function countTaskEnds(db: D1Database, ended: IndexRow["tasks"]): D1PreparedStatement {
  const facts = ended.map((task) => ({
    taskId: task.taskId,
    taskType: task.taskType,
    status: task.status,
    endTime: task.endTime,
    // A task that never started (canceled or skipped while scheduled) took no time.
    durationMs: task.startTime > 0 && task.endTime > task.startTime ? task.endTime - task.startTime : 0,
  }));
  const field = (name: keyof (typeof facts)[number]) => factField(name);
  return db
    .prepare(
      `INSERT INTO task_ends (task_type, status, bucket, count, duration_ms)
       SELECT ${field("taskType")}, ${field("status")}, ${durationBucketSql(field("durationMs"))} AS bucket, COUNT(*), SUM(${field("durationMs")})
       FROM json_each(?1) AS t
       WHERE NOT EXISTS (SELECT 1 FROM task_index WHERE task_id = ${field("taskId")} AND status = ${field("status")} AND end_time = ${field("endTime")})
       GROUP BY 1, 2, 3
       ON CONFLICT (task_type, status, bucket) DO UPDATE SET count = count + excluded.count, duration_ms = duration_ms + excluded.duration_ms`,
    )
    .bind(JSON.stringify(facts));
}

/**
 * Counts the tasks of `started` whose start the task index does not show yet, by type and how long each waited from
 * being scheduled to being started (for a worker's task, the time until a worker polled it).
 */
function countTaskWaits(db: D1Database, started: IndexRow["tasks"]): D1PreparedStatement {
  const facts = started.map((task) => ({
    taskId: task.taskId,
    taskType: task.taskType,
    startTime: task.startTime,
    waitMs: task.scheduledTime > 0 && task.startTime > task.scheduledTime ? task.startTime - task.scheduledTime : 0,
  }));
  const field = (name: keyof (typeof facts)[number]) => factField(name);
  return db
    .prepare(
      `INSERT INTO task_waits (task_type, bucket, count, wait_ms)
       SELECT ${field("taskType")}, ${durationBucketSql(field("waitMs"))} AS bucket, COUNT(*), SUM(${field("waitMs")})
       FROM json_each(?1) AS t
       WHERE NOT EXISTS (SELECT 1 FROM task_index WHERE task_id = ${field("taskId")} AND start_time = ${field("startTime")})
       GROUP BY 1, 2
       ON CONFLICT (task_type, bucket) DO UPDATE SET count = count + excluded.count, wait_ms = wait_ms + excluded.wait_ms`,
    )
    .bind(JSON.stringify(facts));
}
