import { TERMINAL_TASK_STATUSES, TERMINAL_WORKFLOW_STATUSES, type TaskStatus, type WorkflowStatus } from "../engine/model";
import { durationBucket, type CountedMetric } from "../worker/metrics/histogram";
import { notRemoved, type IndexRow } from "./execution-index";

/**
 * One thing a search row may show for the first time. `at` tells it from what the index shows already: an ending's end
 * time, a task start's start time.
 */
interface Fact {
  metric: CountedMetric;
  name: string;
  status: string;
  bucket: number;
  ms: number;
  /**
   * The execution whose row shows it, that row's update time (what the index's row is compared with), and its create
   * time (what a tombstone of the execution is compared with: a row of it landing after its removal counts nothing).
   */
  workflowId: string;
  updateTime: number;
  createTime: number;
  taskId?: string;
  at?: number;
}

/** Milliseconds from `from` to `to`; 0 when either is unknown (a task that never started took no time). */
function span(from: number, to: number): number {
  return from > 0 && to > from ? to - from : 0;
}

/** What a search row shows that the metrics count: its start, its ending, each task's start and ending. */
function factsOf(row: IndexRow): Fact[] {
  const of = { workflowId: row.workflowId, updateTime: row.updateTime, createTime: row.createTime };
  const facts: Fact[] = [{ metric: "workflow_started", name: row.workflowName, status: "", bucket: 0, ms: 0, ...of }];
  if (TERMINAL_WORKFLOW_STATUSES.has(row.status as WorkflowStatus)) {
    const ms = span(row.startTime, row.endTime);
    facts.push({ metric: "workflow_completed", name: row.workflowName, status: row.status, bucket: durationBucket(ms), ms, ...of, at: row.endTime });
  }
  for (const task of row.tasks) {
    if (task.startTime > 0) {
      const ms = span(task.scheduledTime, task.startTime);
      facts.push({ metric: "task_queue_wait", name: task.taskType, status: "", bucket: durationBucket(ms), ms, ...of, taskId: task.taskId, at: task.startTime });
    }
    if (TERMINAL_TASK_STATUSES.has(task.status as TaskStatus)) {
      const ms = span(task.startTime, task.endTime);
      facts.push({ metric: "task_completed", name: task.taskType, status: task.status, bucket: durationBucket(ms), ms, ...of, taskId: task.taskId, at: task.endTime });
    }
  }
  return facts;
}

/**
 * `facts` with each counted once: an execution's start, an ending of it or of a task (by its status and time), a task's
 * start (by its time). The later row's copy is kept: the ending's count compares its update time, the later one.
 */
function distinctFacts(facts: readonly Fact[]): Fact[] {
  const byIdentity = new Map<string, Fact>();
  // Ids and statuses hold no line break.
  for (const fact of facts) byIdentity.set(`${fact.metric}\n${fact.workflowId}\n${fact.taskId ?? ""}\n${fact.status}\n${fact.at ?? ""}`, fact);
  return [...byIdentity.values()];
}

/**
 * The statement counting what the search rows of one writer batch show for the first time (the counters behind
 * `GET /api/metrics`): an execution's start, when the index has no row of it yet; its ending, when the index does not
 * show that ending yet (nor anything newer); each task's start and ending the task index does not show yet. It reads
 * the rows the same batch then replaces, so it goes first; a row sent again (a retried batch) finds itself and counts
 * nothing, and so does a row of a removed execution landing after its removal (its tombstone, see `deleteIndexRow`),
 * which the index no longer shows. One statement for the whole batch, so counting adds one statement and a row per counter to a batch, not a
 * statement per execution. A batch may hold two rows of one execution (each execution writes one at a time, but a write
 * of an instance evicted while it waited at the writer stays queued there when its next instance writes): both read
 * the index as it stood before the batch, so what both show is counted once ({@link distinctFacts}).
 */
export function metricCountStatement(db: D1Database, rows: readonly IndexRow[]): D1PreparedStatement {
  const field = (name: keyof Fact) => `json_extract(t.value, '$.${name}')`;
  return db
    .prepare(
      `INSERT INTO metric_counts (metric, name, status, bucket, count, sum_ms)
       SELECT f.metric, f.name, f.status, f.bucket, COUNT(*), SUM(f.ms) FROM (
         SELECT ${field("metric")} AS metric, ${field("name")} AS name, ${field("status")} AS status, ${field("bucket")} AS bucket,
           ${field("ms")} AS ms, ${field("workflowId")} AS workflow_id, ${field("updateTime")} AS update_time, ${field("createTime")} AS create_time,
           ${field("taskId")} AS task_id, ${field("at")} AS at
         FROM json_each(?1) AS t
       ) AS f
       WHERE ${notRemoved("f.workflow_id", "f.create_time")} AND CASE f.metric
         WHEN 'workflow_started' THEN NOT EXISTS (SELECT 1 FROM executions WHERE workflow_id = f.workflow_id)
         WHEN 'workflow_completed' THEN NOT EXISTS (SELECT 1 FROM executions WHERE workflow_id = f.workflow_id AND (update_time > f.update_time OR (status = f.status AND end_time = f.at)))
         WHEN 'task_completed' THEN NOT EXISTS (SELECT 1 FROM task_index WHERE task_id = f.task_id AND status = f.status AND end_time = f.at)
         ELSE NOT EXISTS (SELECT 1 FROM task_index WHERE task_id = f.task_id AND start_time = f.at)
       END
       GROUP BY f.metric, f.name, f.status, f.bucket
       ON CONFLICT (metric, name, status, bucket) DO UPDATE SET count = count + excluded.count, sum_ms = sum_ms + excluded.sum_ms`,
    )
    .bind(JSON.stringify(distinctFacts(rows.flatMap(factsOf))));
}
