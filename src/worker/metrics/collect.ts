import { readableWorkflows } from "../auth/access-rules";
import { grantsAllow, type Grant } from "../auth/permissions";
import { listedQueueSizes } from "../routes/workers";
import { applyReadable, type Filter, type ReadableWorkflows } from "../search";
import { durationHistogram, type Labels, type MetricFamily, type Sample } from "./exposition";

/** A row of `workflow_ends`, `task_ends` or `task_waits` (no status; its wait as the duration): one bucket of one series. */
interface EndedRow {
  name: string;
  status: string;
  bucket: number;
  count: number;
  duration_ms: number;
}

/**
 * The service's metrics as a caller with `grants` may see them, in Conductor's names (its Micrometer metrics, as Orkes
 * exports them to Prometheus): workflow series for the workflows the caller may read (`WORKFLOW_READ`), task series
 * for the task types the caller may read (`TASK_READ` at `task:<type>`). Counters come from what the search-row
 * writer counted (migrations/0026_metrics.sql), gauges from the search index and the worker queues as they are now.
 */
export async function collectMetrics(env: Env, grants: readonly Grant[]): Promise<MetricFamily[]> {
  const readable = readableWorkflows(grants, "WORKFLOW_READ");
  const mayReadTasks = (type: string) => grantsAllow(grants, "TASK_READ", `task:${type}`);
  const [starts, ends, open, taskEnds, taskWaits, queues] = await Promise.all([
    readableRows<{ name: string; count: number }>(env.DB, `SELECT workflow_name AS name, count FROM workflow_starts`, readable, "workflow_starts", "ORDER BY workflow_name"),
    readableRows<EndedRow>(env.DB, `SELECT workflow_name AS name, status, bucket, count, duration_ms FROM workflow_ends`, readable, "workflow_ends", "ORDER BY workflow_name, status, bucket"),
    readableRows<{ name: string; version: number; status: string; count: number }>(
      env.DB,
      `SELECT workflow_name AS name, workflow_version AS version, status, COUNT(*) AS count FROM executions WHERE status IN ('RUNNING', 'PAUSED')`,
      readable,
      "executions",
      "GROUP BY workflow_name, workflow_version, status ORDER BY workflow_name, workflow_version",
    ),
    env.DB.prepare(`SELECT task_type AS name, status, bucket, count, duration_ms FROM task_ends ORDER BY task_type, status, bucket`).all<EndedRow>(),
    env.DB.prepare(`SELECT task_type AS name, '' AS status, bucket, count, wait_ms AS duration_ms FROM task_waits ORDER BY task_type, bucket`).all<EndedRow>(),
    mayReadAnyTask(grants) ? listedQueueSizes(env) : Promise.resolve([]),
  ]);
  const openOf = (status: string): Sample[] =>
    open.filter((row) => row.status === status).map((row) => ({ labels: { workflowName: row.name, version: String(row.version) }, value: row.count }));
  return [
    { name: "workflow_started_total", help: "Workflow executions started.", type: "counter", samples: starts.map((row) => ({ labels: { workflowName: row.name }, value: row.count })) },
    { name: "workflow_running", help: "Workflow executions running now (as the search index shows them, within about a second).", type: "gauge", samples: openOf("RUNNING") },
    { name: "workflow_paused", help: "Workflow executions paused now (as the search index shows them).", type: "gauge", samples: openOf("PAUSED") },
    {
      name: "workflow_completed_seconds",
      help: "Workflow executions ended, by final status, and how long each ran (start to end).",
      type: "histogram",
      samples: histogramSamples(ends, (row) => ({ workflowName: row.name, status: row.status })),
    },
    {
      name: "workflow_failure_total",
      help: "Workflow executions ended unsuccessfully (FAILED, TIMED_OUT, TERMINATED).",
      type: "counter",
      samples: seriesTotals(ends.filter((row) => row.status !== "COMPLETED"), (row) => ({ workflowName: row.name, status: row.status })),
    },
    {
      name: "task_completed_seconds",
      help: "Tasks ended, by task type (a worker task's name) and final status, and how long each ran (start to end; 0 when it never started).",
      type: "histogram",
      samples: histogramSamples(taskEnds.results.filter((row) => mayReadTasks(row.name)), (row) => ({ taskType: row.name, status: row.status })),
    },
    {
      name: "task_queue_wait_time_seconds",
      help: "Tasks started, by task type, and how long each waited from being scheduled to being started (for a worker's task, until a worker polled it).",
      type: "histogram",
      samples: histogramSamples(taskWaits.results.filter((row) => mayReadTasks(row.name)), (row) => ({ taskType: row.name })),
    },
    {
      name: "task_queue_depth",
      help: "Tasks waiting in a worker queue for a worker to poll them, by task type (and domain).",
      type: "gauge",
      samples: queues
        .filter((queue) => mayReadTasks(queue.taskName))
        .map((queue): Sample => ({ labels: queueLabels(queue.taskName, queue.domain), value: queue.size })),
    },
  ];
}

/** A worker queue's labels: its task type, and its domain when it has one. */
function queueLabels(taskType: string, domain: string | undefined): Labels {
  return domain === undefined ? { taskType } : { taskType, domain };
}

/** True when `grants` let their holder read some task type's metrics: only then are the worker queues asked. */
function mayReadAnyTask(grants: readonly Grant[]): boolean {
  return grants.some((grant) => grant.action === "TASK_READ");
}

/** The rows of `select` (a query on `table`, by its `workflow_name`) of the workflows the caller may read, then `rest`. */
async function readableRows<T>(db: D1Database, select: string, readable: ReadableWorkflows, table: string, rest: string): Promise<T[]> {
  const filter: Filter = { clauses: [], bindings: [] };
  applyReadable(filter, readable, table);
  const where = filter.clauses.length === 0 ? "" : `${select.includes(" WHERE ") ? " AND" : " WHERE"} ${filter.clauses.join(" AND ")}`;
  const { results } = await db.prepare(`${select}${where} ${rest}`).bind(...filter.bindings).all<T>();
  return results;
}

/** One histogram series per distinct labels of `rows` (which come sorted by them), from its buckets' counts and durations. */
function histogramSamples(rows: readonly EndedRow[], labelsOf: (row: EndedRow) => Labels): Sample[] {
  return groupByLabels(rows, labelsOf).flatMap(({ labels, rows: series }) =>
    durationHistogram(labels, new Map(series.map((row) => [row.bucket, row.count])), series.reduce((sum, row) => sum + row.duration_ms, 0)),
  );
}

/** One counter sample per distinct labels of `rows`: the sum of their counts. */
function seriesTotals(rows: readonly EndedRow[], labelsOf: (row: EndedRow) => Labels): Sample[] {
  return groupByLabels(rows, labelsOf).map(({ labels, rows: series }) => ({ labels, value: series.reduce((sum, row) => sum + row.count, 0) }));
}

function groupByLabels(rows: readonly EndedRow[], labelsOf: (row: EndedRow) => Labels): Array<{ labels: Labels; rows: EndedRow[] }> {
  const groups = new Map<string, { labels: Labels; rows: EndedRow[] }>();
  for (const row of rows) {
    const labels = labelsOf(row);
    const key = JSON.stringify(labels);
    const group = groups.get(key) ?? { labels, rows: [] };
    group.rows.push(row);
    groups.set(key, group);
  }
  return [...groups.values()];
}
