// @ts-check
import { api, ApiError, errorMessage } from "../lib/api.js";
import { h, replaceChildren } from "../lib/dom.js";

/**
 * One sample of the Prometheus text format, as `GET /api/metrics` writes it.
 * @typedef {{ name: string, labels: Record<string, string>, value: number }} Sample
 * @typedef {{ workflowName: string, started: number, running: number, paused: number, completed: number, unsuccessful: number,
 *   p50: number | undefined, p95: number | undefined }} WorkflowRow
 * @typedef {{ taskType: string, ended: number, failed: number, p50: number | undefined, p95: number | undefined,
 *   waitP50: number | undefined, waiting: number | undefined }} TaskRow
 */

/** Task statuses that count as failures on the page (not those of tasks canceled or skipped by their workflow). */
const FAILED_TASK_STATUSES = new Set(["FAILED", "FAILED_WITH_TERMINAL_ERROR", "TIMED_OUT"]);

/**
 * The samples of a Prometheus text exposition (comments skipped; label values unescaped).
 * @param {string} text
 * @returns {Sample[]}
 */
export function parseExposition(text) {
  /** @type {Sample[]} */
  const samples = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    /** @type {Record<string, string>} */
    const labels = {};
    for (const label of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[/** @type {string} */ (label[1])] = /** @type {string} */ (label[2]).replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: /** @type {string} */ (match[1]), labels, value: Number(match[3]) });
  }
  return samples;
}

/**
 * The `q` quantile of a histogram from its cumulative buckets (upper bound in seconds, `Infinity` last, and count), as
 * Prometheus' `histogram_quantile` estimates it: linearly within the bucket the rank falls in; the highest finite
 * bound when it falls past it; undefined without observations.
 * @param {number} q
 * @param {Array<[number, number]>} buckets sorted by bound
 * @returns {number | undefined}
 */
export function histogramQuantile(q, buckets) {
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [bound, count] of buckets) {
    if (count >= rank) {
      if (bound === Infinity) return lowerBound;
      return count === lowerCount ? bound : lowerBound + ((bound - lowerBound) * (rank - lowerCount)) / (count - lowerCount);
    }
    lowerBound = bound;
    lowerCount = count;
  }
  return lowerBound;
}

/**
 * The page's two tables from a scrape: per workflow (started, running, paused, ended well and not, and how long
 * completed runs took) and per task type (ended, failed, how long completed runs took and tasks waited to start, and
 * how many wait in its default domain's queue now: undefined when the scrape has no depth for it, as for a task type
 * without a task definition or a domain's queue, which `task_queue_depth` leaves out). Sorted by name. With them, how
 * many workflow names and task types the scrape left out (`metrics_names_left_out`: past those counted most).
 * @param {Sample[]} samples
 * @returns {{ workflows: WorkflowRow[], tasks: TaskRow[], leftOut: { workflows: number, tasks: number } }}
 */
export function metricsTables(samples) {
  /** @type {Map<string, WorkflowRow>} */
  const workflows = new Map();
  /** @param {string} name */
  const workflow = (name) => {
    let row = workflows.get(name);
    if (!row) workflows.set(name, (row = { workflowName: name, started: 0, running: 0, paused: 0, completed: 0, unsuccessful: 0, p50: undefined, p95: undefined }));
    return row;
  };
  /** @type {Map<string, TaskRow>} */
  const tasks = new Map();
  /** @param {string} type */
  const task = (type) => {
    let row = tasks.get(type);
    if (!row) tasks.set(type, (row = { taskType: type, ended: 0, failed: 0, p50: undefined, p95: undefined, waitP50: undefined, waiting: undefined }));
    return row;
  };
  /** @type {Map<string, Array<[number, number]>>} */
  const buckets = new Map();
  const leftOut = { workflows: 0, tasks: 0 };
  for (const { name, labels, value } of samples) {
    if (name === "metrics_names_left_out") {
      if (labels["label"] === "workflowName") leftOut.workflows += value;
      else if (labels["label"] === "taskType") leftOut.tasks += value;
      continue;
    }
    const workflowName = labels["workflowName"];
    const taskType = labels["taskType"];
    if (workflowName !== undefined) {
      if (name === "workflow_started_total") workflow(workflowName).started += value;
      else if (name === "workflow_running") workflow(workflowName).running += value;
      else if (name === "workflow_paused") workflow(workflowName).paused += value;
      else if (name === "workflow_completed_seconds_count") {
        if (labels["status"] === "COMPLETED") workflow(workflowName).completed += value;
        else workflow(workflowName).unsuccessful += value;
      } else if (name === "workflow_completed_seconds_bucket" && labels["status"] === "COMPLETED") addBucket(buckets, `w:${workflowName}`, labels, value);
    } else if (taskType !== undefined) {
      if (name === "task_completed_seconds_count") {
        task(taskType).ended += value;
        if (FAILED_TASK_STATUSES.has(labels["status"] ?? "")) task(taskType).failed += value;
      } else if (name === "task_completed_seconds_bucket" && labels["status"] === "COMPLETED") addBucket(buckets, `t:${taskType}`, labels, value);
      else if (name === "task_queue_wait_seconds_bucket") addBucket(buckets, `q:${taskType}`, labels, value);
      else if (name === "task_queue_depth") task(taskType).waiting = (task(taskType).waiting ?? 0) + value;
    }
  }
  const sorted = (/** @type {Array<[number, number]> | undefined} */ series) => series?.sort((a, b) => a[0] - b[0]) ?? [];
  for (const row of workflows.values()) {
    const series = sorted(buckets.get(`w:${row.workflowName}`));
    row.p50 = histogramQuantile(0.5, series);
    row.p95 = histogramQuantile(0.95, series);
  }
  for (const row of tasks.values()) {
    const series = sorted(buckets.get(`t:${row.taskType}`));
    row.p50 = histogramQuantile(0.5, series);
    row.p95 = histogramQuantile(0.95, series);
    row.waitP50 = histogramQuantile(0.5, sorted(buckets.get(`q:${row.taskType}`)));
  }
  const byName = (/** @type {string} */ a, /** @type {string} */ b) => a.localeCompare(b);
  return {
    workflows: [...workflows.values()].sort((a, b) => byName(a.workflowName, b.workflowName)),
    tasks: [...tasks.values()].sort((a, b) => byName(a.taskType, b.taskType)),
    leftOut,
  };
}

/**
 * @param {Map<string, Array<[number, number]>>} buckets
 * @param {string} key
 * @param {Record<string, string>} labels
 * @param {number} value
 */
function addBucket(buckets, key, labels, value) {
  const bound = labels["le"] === "+Inf" ? Infinity : Number(labels["le"]);
  const series = buckets.get(key) ?? [];
  series.push([bound, value]);
  buckets.set(key, series);
}

/**
 * A duration in seconds in words: milliseconds below a second, seconds below two minutes, then minutes and hours;
 * "—" when there is none.
 * @param {number | undefined} seconds
 */
export function durationText(seconds) {
  if (seconds === undefined) return "—";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 120) return `${Number(seconds.toFixed(1))} s`;
  if (seconds < 7200) return `${Number((seconds / 60).toFixed(1))} min`;
  return `${Number((seconds / 3600).toFixed(1))} h`;
}

/**
 * Counts and durations per workflow and task type, from the service's Prometheus metrics.
 * @type {import("../app.js").View}
 */
export async function renderMetrics(container, _params, context) {
  const head = h("div", { className: "page-head" }, h("h1", {}, "Metrics"));
  const body = h("div", { "aria-live": "polite" });
  head.append(h("button", { type: "button", className: "secondary", onclick: () => void load() }, "Refresh"));
  replaceChildren(container,
    head,
    h("p", { className: "help" },
      "What ran since the service started counting, from ", h("code", {}, "GET /api/metrics"), " (the Prometheus metrics: point a scraper there for history and alerts). ",
      "Durations are estimated from the histograms' buckets; a run appears within about a second of its change."),
    body);

  async function load() {
    /** @type {string} */
    let text;
    try {
      text = /** @type {string} */ (await api("GET", "/api/metrics"));
    } catch (error) {
      // Shown in the page, whether it was its first read or a Refresh (whose click has no one else to tell).
      if (context.active()) replaceChildren(body, error instanceof ApiError && error.status === 403
        ? h("p", { className: "empty" }, "Metrics are shown to users who may read workflows (WORKFLOW_READ) or tasks (TASK_READ).")
        : h("p", { className: "error", role: "alert" }, errorMessage(error)));
      return;
    }
    if (!context.active()) return;
    const { workflows, tasks, leftOut } = metricsTables(parseExposition(text));
    /** A note under a table whose scrape left names out (it writes the series of those counted most). @param {number} count @param {string} what */
    const leftOutNote = (count, what) => count > 0 ? h("p", { className: "help" }, `${count} more ${what}, counted less, left out: the metrics show those counted most.`) : null;
    replaceChildren(body,
      h("h2", { id: "metrics-workflows" }, "Workflows"),
      workflows.length === 0
        ? h("p", { className: "empty" }, "No workflow you may read has run yet.")
        : h("div", { className: "table-wrap" }, h("table", { "aria-labelledby": "metrics-workflows" },
          h("thead", {}, h("tr", {}, ["Workflow", "Started", "Running", "Paused", "Completed", "Failed, timed out or terminated", "Completed in (p50)", "(p95)"].map((title) => h("th", { scope: "col" }, title)))),
          h("tbody", {}, workflows.map((row) => h("tr", {},
            h("td", {}, h("a", { href: `#/executions?workflowName=${encodeURIComponent(row.workflowName)}` }, row.workflowName)),
            h("td", {}, String(row.started)),
            h("td", {}, String(row.running)),
            h("td", {}, String(row.paused)),
            h("td", {}, String(row.completed)),
            h("td", {}, String(row.unsuccessful)),
            h("td", {}, durationText(row.p50)),
            h("td", {}, durationText(row.p95))))))),
      leftOutNote(leftOut.workflows, leftOut.workflows === 1 ? "workflow" : "workflows"),
      h("h2", { id: "metrics-tasks" }, "Task types"),
      tasks.length === 0
        ? h("p", { className: "empty" }, "No task type you may read has run yet.")
        : h("div", { className: "table-wrap" }, h("table", { "aria-labelledby": "metrics-tasks" },
          h("thead", {}, h("tr", {}, ["Task type", "Ended", "Failed", "Completed in (p50)", "(p95)", "Waited to start (p50)", "Waiting now"].map((title) => h("th", { scope: "col" }, title)))),
          h("tbody", {}, tasks.map((row) => h("tr", {},
            h("td", {}, row.taskType),
            h("td", {}, String(row.ended)),
            h("td", {}, String(row.failed)),
            h("td", {}, durationText(row.p50)),
            h("td", {}, durationText(row.p95)),
            h("td", {}, durationText(row.waitP50)),
            h("td", {}, row.waiting === undefined ? "—" : String(row.waiting))))))),
      leftOutNote(leftOut.tasks, leftOut.tasks === 1 ? "task type" : "task types"));
  }
  await load();
}
