import { mayReadTasksNamed } from "../auth/metadata-access";
import { namesGranted, type Grant, type NameFilter } from "../auth/permissions";
import { OBJECT_CALL_RETRIES } from "../object-retry";
import { defaultQueueSizes } from "../routes/workers";
import { applyReadableAny, type Filter } from "../search";
import { durationHistogram, type Labels, type MetricFamily, type Sample } from "./exposition";
import type { CountedMetric } from "./histogram";

/**
 * Most worker queues one scrape asks for their depth: each is a call to its queue's object (tried up to
 * 1 + {@link OBJECT_CALL_RETRIES} times), and Cloudflare allows one request 1,000 calls to its services on Workers Free
 * (developers.cloudflare.com/workers/platform/limits/, "Subrequests"), D1's few statements here included.
 */
export const MAX_DEPTH_QUEUES = 250;

/**
 * Most workflow names, and most task types, one scrape writes series of: the names come from data (a DYNAMIC task's
 * name read from its input is a task type of its own, a series for good), and a scrape writing every one ever counted
 * grows without end, each histogram series 19 lines, until it passes the Worker's CPU or memory, or Prometheus'
 * scrape timeout, and every metric is lost. Past it the names counted least are left out, and
 * `metrics_names_left_out` says how many.
 */
export const MAX_SERIES_NAMES = 500;

/** A row of `metric_counts` (a wait's status is '', its wait the duration): one bucket of one series. */
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
 * writer counted (`metric_counts`, migrations/0026_metrics.sql), gauges from the search index and the worker queues as
 * they are now; of the {@link MAX_SERIES_NAMES} workflow names and task types counted most, with a gauge of how many
 * others were left out.
 */
export async function collectMetrics(env: Env, grants: readonly Grant[]): Promise<MetricFamily[]> {
  const mayReadTasks = (type: string) => mayReadTasksNamed(grants, type);
  // The names first, summed and ranked in D1 (at most a row per name kept reaches the Worker), then the rows of those
  // kept only: a name left out costs the Worker no row, memory or sorting.
  const [workflows, taskTypes, queues] = await Promise.all([
    mostCounted(env.DB, WORKFLOW_COUNTS, namesGranted(grants, "WORKFLOW_READ", "workflow:")),
    mostCounted(env.DB, TASK_COUNTS, namesGranted(grants, "TASK_READ", "task:")),
    mayReadAnyTask(grants) ? registeredQueueDepths(env, mayReadTasks) : Promise.resolve([]),
  ]);
  const keptWorkflows = JSON.stringify(workflows.kept);
  const keptTaskTypes = JSON.stringify(taskTypes.kept);
  // Each metric read on its own, in the primary key's order (a statement of two would be sorted, each row read twice).
  const bucketsOf = (metric: CountedMetric, kept: string) =>
    rowsOf<EndedRow>(env.DB, `SELECT name, status, bucket, count, sum_ms AS duration_ms FROM metric_counts WHERE metric = '${metric}' AND ${KEPT_NAME} ORDER BY name, status, bucket`, kept);
  const [starts, ends, open, taskEnds, taskWaits] = await Promise.all([
    rowsOf<{ name: string; count: number }>(env.DB, `SELECT name, count FROM metric_counts WHERE metric = 'workflow_started' AND ${KEPT_NAME} ORDER BY name`, keptWorkflows),
    bucketsOf("workflow_completed", keptWorkflows),
    rowsOf<{ name: string; version: number; status: string; count: number }>(
      env.DB,
      `SELECT workflow_name AS name, workflow_version AS version, status, COUNT(*) AS count FROM executions
       WHERE status IN ('RUNNING', 'PAUSED') AND workflow_name IN (SELECT value FROM json_each(?))
       GROUP BY workflow_name, workflow_version, status ORDER BY workflow_name, workflow_version`,
      keptWorkflows,
    ),
    bucketsOf("task_completed", keptTaskTypes),
    bucketsOf("task_queue_wait", keptTaskTypes),
  ]);
  const openOf = (status: string): Sample[] =>
    open
      .filter((row) => row.status === status)
      .map((row) => ({ labels: { workflowName: row.name, version: String(row.version) }, value: row.count }));
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
      samples: histogramSamples(taskEnds, (row) => ({ taskType: row.name, status: row.status })),
    },
    {
      name: "task_queue_wait_seconds",
      help: "Tasks started, by task type, and how long each waited from being scheduled to being started (for a worker's task, until a worker polled it).",
      type: "histogram",
      samples: histogramSamples(taskWaits, (row) => ({ taskType: row.name })),
    },
    {
      name: "task_queue_depth",
      help: `Tasks waiting in the default domain's worker queue of each registered task definition (the first ${MAX_DEPTH_QUEUES} by name), for a worker to poll them.`,
      type: "gauge",
      samples: queues.map((queue): Sample => ({ labels: { taskType: queue.taskName }, value: queue.size })),
    },
    {
      name: "metrics_names_left_out",
      help: `Workflow names and task types whose series this scrape left out: past the ${MAX_SERIES_NAMES} counted most of each kind.`,
      type: "gauge",
      samples: [
        { labels: { label: "workflowName" }, value: workflows.leftOut },
        { labels: { label: "taskType" }, value: taskTypes.leftOut },
      ],
    },
  ];
}

/** Where a name's counts come from: the rows of `table` where `where` holds, their name in `name`, `count` of each group of them. */
interface CountSource {
  table: string;
  where: string;
  name: string;
  count: string;
}

/**
 * What ranks a workflow name: its executions started and ended, and those running or paused now (a name whose one
 * execution is still running counts as much as one whose execution ended).
 */
const WORKFLOW_COUNTS: readonly CountSource[] = [
  counted("workflow_started"),
  counted("workflow_completed"),
  { table: "executions", where: "status IN ('RUNNING', 'PAUSED')", name: "workflow_name", count: "COUNT(*)" },
];

/** What ranks a task type: its tasks started and ended. */
const TASK_COUNTS: readonly CountSource[] = [counted("task_queue_wait"), counted("task_completed")];

/**
 * One metric's counters, a source of their own: the primary key's order (metric, name) then serves their sum by name,
 * where two metrics together would be sorted by name first, which D1 counts as every row read twice.
 */
function counted(metric: CountedMetric): CountSource {
  return { table: "metric_counts", where: `metric = '${metric}'`, name: "name", count: "SUM(count)" };
}

/** A row's `name` is one of the names kept, bound as one JSON list (D1 allows a statement 100 bound parameters). */
const KEPT_NAME = "name IN (SELECT value FROM json_each(?))";

/**
 * The {@link MAX_SERIES_NAMES} names counted most in `sources` (ties by name), and how many others there are: the names
 * whose series a scrape writes. Summed and ranked in D1, so that the Worker reads a row per name kept, not a row per
 * bucket of every name ever counted (D1 still reads those rows to sum them: the cap bounds what reaches the Worker, its
 * memory and its CPU, not D1's rows read). Only the names the caller may read (`readable`), so that the number left out
 * tells nothing of others.
 */
async function mostCounted(db: D1Database, sources: readonly CountSource[], readable: NameFilter): Promise<{ kept: string[]; leftOut: number }> {
  // Each source summed by name where it is read (a subquery passing its rows on would have D1 count each read again),
  // limited to the caller's names (at most 22 parameters a source, 66 in all: within D1's 100), then the names ranked.
  const bindings: Filter["bindings"] = [];
  const totals = sources.map(({ table, where, name, count }) => {
    const readableHere: Filter = { clauses: [where], bindings: [] };
    applyReadableAny(readableHere, [{ readable, column: `${table}.${name}` }]);
    bindings.push(...readableHere.bindings);
    return `SELECT ${name} AS name, ${count} AS total FROM ${table} WHERE ${readableHere.clauses.join(" AND ")} GROUP BY ${name}`;
  });
  // Every name is counted (`names`, the same on each row) before LIMIT keeps the first.
  const { results } = await db
    .prepare(
      `SELECT name, COUNT(*) OVER () AS names FROM (SELECT name, SUM(total) AS total FROM (${totals.join(" UNION ALL ")}) GROUP BY name)
       ORDER BY total DESC, name LIMIT ${MAX_SERIES_NAMES}`,
    )
    .bind(...bindings)
    .all<{ name: string; names: number }>();
  return { kept: results.map((row) => row.name), leftOut: Math.max(0, (results[0]?.names ?? 0) - MAX_SERIES_NAMES) };
}

/**
 * The depth of the default domain's queue of each registered task definition the caller may read, the first
 * {@link MAX_DEPTH_QUEUES} by name, as Conductor's WorkflowMonitor reports `task_queue_depth` (for each of
 * `metadataService.getTaskDefs()`, `queueDAO.getSize(taskDef.getName())`). Not every queue listed: a dynamic task's
 * name, or a domain any poller may name (`domain=anything` lists a queue), would each add a series and a call per scrape
 * without bound.
 */
async function registeredQueueDepths(env: Env, mayRead: (taskName: string) => boolean): Promise<Array<{ taskName: string; size: number }>> {
  // A queue lists itself in worker_queues on its first use (see TaskQueue): one not listed has never held a task, so
  // it shows 0 without a call, which would only create an empty object per definition never used at every scrape.
  const { results } = await env.DB.prepare(
    `SELECT t.name AS name, w.task_name IS NOT NULL AS listed FROM task_defs t LEFT JOIN worker_queues w ON w.task_name = t.name AND w.domain = '' ORDER BY t.name`,
  ).all<{ name: string; listed: number }>();
  const shown = results.filter((row) => mayRead(row.name)).slice(0, MAX_DEPTH_QUEUES);
  const listed = shown.filter((row) => row.listed === 1).map((row) => row.name);
  const sizes = await defaultQueueSizes(env, listed);
  const sizeOf = new Map(listed.map((taskName, index) => [taskName, sizes[index]]));
  // A queue that could not answer now (reset, overloaded: a hot queue's, when its depth matters most) has no series in
  // this scrape rather than a 0 that would be false, and the scrape still answers every other metric.
  const unanswered = listed.filter((taskName) => sizeOf.get(taskName) === undefined);
  if (unanswered.length > 0) console.warn(JSON.stringify({ msg: "metrics: worker queues that could not answer left out of task_queue_depth", queues: unanswered }));
  return shown.flatMap((row) => {
    if (row.listed !== 1) return [{ taskName: row.name, size: 0 }];
    const size = sizeOf.get(row.name);
    return size === undefined ? [] : [{ taskName: row.name, size }];
  });
}

/** True when `grants` let their holder read some task type's metrics: only then are the worker queues asked. */
function mayReadAnyTask(grants: readonly Grant[]): boolean {
  return grants.some((grant) => grant.action === "TASK_READ");
}

/** The rows of `sql`, whose one bound parameter is `kept` (a JSON list of names). */
async function rowsOf<T>(db: D1Database, sql: string, kept: string): Promise<T[]> {
  const { results } = await db.prepare(sql).bind(kept).all<T>();
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
