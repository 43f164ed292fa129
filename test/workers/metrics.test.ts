/**
 * `GET /api/metrics` (Prometheus text format): counters written by the search-row writer, gauges from the index and the
 * worker queues, through the real router, execution objects, index writer and local D1.
 */
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { IndexRow } from "../../src/actors/execution-index";
import { ExecutionIndexWriter, indexBatchStatements } from "../../src/actors/index-writer";
import { TaskQueue } from "../../src/actors/task-queue";
import type { JsonObject } from "../../src/engine/model";
import { collectMetrics, MAX_DEPTH_QUEUES, MAX_SERIES_NAMES } from "../../src/worker/metrics/collect";
import { DURATION_BUCKETS_SECONDS } from "../../src/worker/metrics/histogram";
import { parsePrometheusText } from "../prometheus-text";
import { call, createUser } from "./auth-helpers";
import { ADMIN_KEY, api, apiOk, eventually, gate, loggedFailure, register, searchRow, startWorkflow, waitFor, waitForIndexRow, whilePreparing } from "./helpers";

/** The samples of a scrape, by their line's name and labels as written (`name{a="1",b="2"}`). */
type Scrape = Map<string, number>;

async function scrape(headers: Record<string, string> = { "x-api-key": ADMIN_KEY }): Promise<Scrape> {
  const response = await call("GET", "/api/metrics", headers);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const samples: Scrape = new Map();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/** Waits (bounded) until a scrape shows what `accept` wants. */
async function scrapeUntil(accept: (samples: Scrape) => boolean, what: string, headers?: Record<string, string>): Promise<Scrape> {
  return eventually(() => scrape(headers), accept, what, 8_000);
}

/** Registers a task definition of each of `names` (at most 100: one request). */
async function registerTaskDefs(names: readonly string[]): Promise<void> {
  await apiOk("POST", "/api/metadata/taskdefs", names.map((name) => ({ name, retryCount: 0, responseTimeoutSeconds: 60, ownerEmail: "t@example.com" })));
}

const simple = (ref: string, name: string): JsonObject => ({ name, taskReferenceName: ref, type: "SIMPLE", inputParameters: {} });

/** A search row of a made-up execution of mt_rows that ran from 1,000 to 1,300. */
function row(workflowId: string, fields: Partial<IndexRow> = {}): IndexRow {
  return searchRow(workflowId, { workflowName: "mt_rows", createTime: 1_000, startTime: 1_000, endTime: 1_300, updateTime: 1_300, ...fields });
}

const taskRow = (taskId: string, status: string, startTime: number, endTime: number): IndexRow["tasks"][number] => ({
  taskId,
  taskType: "mt_rows_worker",
  taskDefName: "mt_rows_worker",
  referenceTaskName: "work",
  status,
  domain: null,
  workerId: null,
  reason: null,
  // Started ones waited 100 ms for it.
  scheduledTime: startTime > 0 ? startTime - 100 : 900,
  startTime,
  endTime,
  updateTime: endTime,
  input: "{}",
  output: "{}",
});

/** Writes search rows as the index writer's batch does (one transaction, the counting first). */
async function writeRows(...rows: IndexRow[]): Promise<void> {
  await env.DB.batch(indexBatchStatements(env.DB, rows.map((row) => ({ kind: "upsert" as const, row }))));
}

/** What the counters of mt_rows hold, by metric: [status, bucket, count, sum of milliseconds] rows. */
async function counted(): Promise<Record<string, Array<[string, number, number, number]>>> {
  const { results } = await env.DB.prepare(`SELECT metric, status, bucket, count, sum_ms FROM metric_counts WHERE name IN ('mt_rows', 'mt_rows_worker') ORDER BY metric, status, bucket`).all<{
    metric: string;
    status: string;
    bucket: number;
    count: number;
    sum_ms: number;
  }>();
  const byMetric: Record<string, Array<[string, number, number, number]>> = {};
  for (const row of results) (byMetric[row.metric] ??= []).push([row.status, row.bucket, row.count, row.sum_ms]);
  return byMetric;
}

describe("GET /api/metrics", () => {
  it("counts starts, endings by status with their durations, and tasks' waits and endings, in Conductor's metric names", async () => {
    await register({ name: "mt_flow", tasks: [simple("work", "mt_flow_worker")] });
    const done = await startWorkflow("mt_flow");
    const stopped = await startWorkflow("mt_flow");
    const polled = await apiOk<JsonObject>("GET", "/api/tasks/poll/mt_flow_worker?workerid=metrics");
    const finishing = polled["workflowInstanceId"] === done ? done : stopped;
    const other = finishing === done ? stopped : done;
    await apiOk("POST", `/api/tasks/${finishing}/work/COMPLETED`, { ok: true });
    await apiOk("DELETE", `/api/workflow/${other}?reason=enough`);
    await waitFor(finishing, ["COMPLETED"]);
    await waitForIndexRow(finishing, "COMPLETED");
    await waitForIndexRow(other, "TERMINATED");

    const samples = await scrape();
    expect(samples.get(`workflow_started_total{workflowName="mt_flow"}`)).toBe(2);
    expect(samples.get(`workflow_completed_seconds_count{workflowName="mt_flow",status="COMPLETED"}`)).toBe(1);
    expect(samples.get(`workflow_completed_seconds_bucket{workflowName="mt_flow",status="COMPLETED",le="+Inf"}`)).toBe(1);
    expect(samples.get(`workflow_completed_seconds_sum{workflowName="mt_flow",status="COMPLETED"}`)).toBeGreaterThan(0);
    expect(samples.get(`workflow_completed_seconds_count{workflowName="mt_flow",status="TERMINATED"}`)).toBe(1);
    expect(samples.get(`workflow_failure_total{workflowName="mt_flow",status="TERMINATED"}`)).toBe(1);
    expect(samples.has(`workflow_failure_total{workflowName="mt_flow",status="COMPLETED"}`)).toBe(false);
    // The polled task ran; the other was canceled before any worker took it: no time, the first bucket.
    expect(samples.get(`task_completed_seconds_count{taskType="mt_flow_worker",status="COMPLETED"}`)).toBe(1);
    expect(samples.get(`task_completed_seconds_bucket{taskType="mt_flow_worker",status="CANCELED",le="${DURATION_BUCKETS_SECONDS[0]}"}`)).toBe(1);
    // Only the polled one started, after waiting in the queue.
    expect(samples.get(`task_queue_wait_seconds_count{taskType="mt_flow_worker"}`)).toBe(1);
    // Cumulative buckets never fall, and end at the count.
    const buckets = [...DURATION_BUCKETS_SECONDS.map(String), "+Inf"].map((le) => samples.get(`workflow_completed_seconds_bucket{workflowName="mt_flow",status="COMPLETED",le="${le}"}`)!);
    expect(buckets.every((value, index) => index === 0 || value >= buckets[index - 1]!)).toBe(true);
  });

  it("shows running and paused executions and the worker queues as they are now", async () => {
    await register({ name: "mt_open", tasks: [simple("wait", "mt_open_worker")] });
    await registerTaskDefs(["mt_queued_worker"]);
    await register({ name: "mt_queued", tasks: [simple("wait", "mt_queued_worker")] });
    const running = await startWorkflow("mt_open");
    const paused = await startWorkflow("mt_open");
    await apiOk("PUT", `/api/workflow/${paused}/pause`);
    await startWorkflow("mt_queued");
    await startWorkflow("mt_queued");
    await waitForIndexRow(running, "RUNNING");
    await waitForIndexRow(paused, "PAUSED");
    const samples = await scrapeUntil((found) => found.get(`task_queue_depth{taskType="mt_queued_worker"}`) === 2, "both tasks waiting in the queue");
    expect(samples.get(`workflow_running{workflowName="mt_open",version="1"}`)).toBe(1);
    expect(samples.get(`workflow_paused{workflowName="mt_open",version="1"}`)).toBe(1);
    await apiOk("DELETE", `/api/workflow/${running}?reason=done`);
    await waitForIndexRow(running, "TERMINATED");
    expect((await scrape()).has(`workflow_running{workflowName="mt_open",version="1"}`)).toBe(false);
  });

  it("shows the depth of each registered task definition's default queue, as Conductor's WorkflowMonitor: not a dynamic task's, nor a domain's any poller may name", async () => {
    await registerTaskDefs(["mt_defined"]);
    // A worker naming a task type nobody registered, and one naming a made-up domain: each lists a queue.
    for (const [taskType, domain] of [["mt_undefined", undefined], ["mt_defined", "mt_made_up"], ["mt_undefined", "mt_made_up"]] as const) {
      const query = domain === undefined ? "" : `&domain=${domain}`;
      await apiOk("GET", `/api/tasks/poll/batch/${taskType}?workerid=w&count=1&timeout=0${query}`);
    }
    await eventually(
      () => apiOk<Record<string, number>>("GET", "/api/tasks/queue/all"),
      (queues) => ["mt_undefined", "mt_made_up:mt_defined", "mt_made_up:mt_undefined"].every((name) => name in queues),
      "the polled queues listed",
    );
    const depths = [...(await scrape()).entries()].filter(([name]) => name.startsWith("task_queue_depth{") && (name.includes("mt_defined") || name.includes("mt_undefined")));
    expect(depths).toEqual([[`task_queue_depth{taskType="mt_defined"}`, 0]]);
  });

  it(`asks at most ${MAX_DEPTH_QUEUES} queues a scrape (each is a call, and Workers Free allows a request 1,000), the first registered task definitions by name`, async () => {
    const names = Array.from({ length: MAX_DEPTH_QUEUES + 20 }, (_, index) => `mt_many_${String(index).padStart(3, "0")}`);
    for (let start = 0; start < names.length; start += 100) await registerTaskDefs(names.slice(start, start + 100));
    // Listed too, so that every one of them is a queue the listing knows.
    await env.DB.batch(names.map((name) => env.DB.prepare(`INSERT OR IGNORE INTO worker_queues (task_name, domain) VALUES (?, '')`).bind(name)));
    try {
      // The queue objects' binding counts the queues asked, each answering at once: 250 objects created here took one
      // scrape 16 to 20 s on this machine (a test's whole timeout), for what the count shows.
      const asked: string[] = [];
      const queues = {
        idFromName: (name: string) => env.TASK_QUEUE.idFromName(name),
        get: (id: DurableObjectId) => {
          asked.push(id.name ?? id.toString());
          return { size: async () => 0 };
        },
      } as unknown as Env["TASK_QUEUE"];
      const families = await collectMetrics({ ...env, TASK_QUEUE: queues }, [{ action: "TASK_READ", scope: "*" }]);
      const depths = families.find((family) => family.name === "task_queue_depth")!.samples.map((sample) => sample.labels["taskType"]);
      expect(asked).toHaveLength(MAX_DEPTH_QUEUES);
      expect(depths).toHaveLength(MAX_DEPTH_QUEUES);
      // The first by name: the mt_many_ ones shown are the first of them (the few other names registered in this file
      // take their places), and the last 20 are left out.
      const shown = depths.filter((name) => name?.startsWith("mt_many_"));
      expect(shown.length).toBeGreaterThan(MAX_DEPTH_QUEUES - 10);
      expect(shown).toEqual(names.slice(0, shown.length));
      // A registered definition whose queue was never used (not listed) shows 0 and is not asked: a call would create
      // an empty object for it at every scrape.
      await env.DB.prepare(`DELETE FROM worker_queues WHERE task_name = ?`).bind(names[0]).run();
      asked.length = 0;
      const again = await collectMetrics({ ...env, TASK_QUEUE: queues }, [{ action: "TASK_READ", scope: "*" }]);
      const unused = again.find((family) => family.name === "task_queue_depth")!.samples.find((sample) => sample.labels["taskType"] === names[0]);
      expect(unused?.value).toBe(0);
      expect(asked.some((name) => name.includes(`"${names[0]}"`))).toBe(false);
      expect(asked).toHaveLength(MAX_DEPTH_QUEUES - 1);
    } finally {
      // Out again: left registered, every later scrape of this file asks 250 queue objects (seconds each here: the next
      // test that scrapes as the admin timed out).
      await env.DB.batch([
        env.DB.prepare(`DELETE FROM task_defs WHERE name LIKE 'mt_many_%'`),
        env.DB.prepare(`DELETE FROM worker_queues WHERE task_name LIKE 'mt_many_%'`),
      ]);
    }
  });

  it(`writes the series of the ${MAX_SERIES_NAMES} workflow names and task types counted most, and how many others it left out: names from data (a DYNAMIC's task named by its input) have no other bound`, async () => {
    // One execution of each of many one-off names (an id in each), and a busy name sorting after all of them.
    const flood = Array.from({ length: MAX_SERIES_NAMES + 5 }, (_, index) => `mt_flood_${String(index).padStart(4, "0")}`);
    const busy = "mt_flood_zz_busy";
    const rows = [...flood.map((name) => [name, 1]), [busy, 50]].flatMap(([name, count]) => [
      ["workflow_started", name, "", 0, count, 0],
      ["workflow_completed", name, "COMPLETED", 2, count, 60 * Number(count)],
      ["task_completed", name, "COMPLETED", 2, count, 60 * Number(count)],
    ]);
    await env.DB.prepare(
      `INSERT INTO metric_counts (metric, name, status, bucket, count, sum_ms) SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 FROM json_each(?)`,
    )
      .bind(JSON.stringify(rows))
      .run();
    try {
      const families = await collectMetrics(env, [
        { action: "WORKFLOW_READ", scope: "*" },
        { action: "TASK_READ", scope: "*" },
      ]);
      const labelsOf = (family: string, label: string) => new Set(families.find((found) => found.name === family)!.samples.map((sample) => sample.labels[label]!));
      const distinct = async (sql: string) => (await env.DB.prepare(`SELECT COUNT(*) AS n FROM (${sql})`).first<{ n: number }>())!.n;
      const workflowNames = await distinct(
        `SELECT name FROM metric_counts WHERE metric IN ('workflow_started', 'workflow_completed') UNION SELECT workflow_name FROM executions WHERE status IN ('RUNNING', 'PAUSED')`,
      );
      const taskTypes = await distinct(`SELECT name FROM metric_counts WHERE metric IN ('task_completed', 'task_queue_wait') GROUP BY name`);
      const started = labelsOf("workflow_started_total", "workflowName");
      expect(started.size).toBe(MAX_SERIES_NAMES);
      expect(started.has(busy)).toBe(true);
      // The same names in every workflow family: a name shown has all its series.
      for (const name of labelsOf("workflow_completed_seconds", "workflowName")) expect(started.has(name), name).toBe(true);
      const endedTypes = labelsOf("task_completed_seconds", "taskType");
      expect(endedTypes.size).toBe(MAX_SERIES_NAMES);
      expect(endedTypes.has(busy)).toBe(true);
      // Those left out are one-off names, and counted.
      expect(flood.filter((name) => !started.has(name)).length).toBeGreaterThanOrEqual(5);
      const leftOut = families.find((family) => family.name === "metrics_names_left_out")!.samples;
      expect(leftOut).toEqual([
        { labels: { label: "workflowName" }, value: workflowNames - MAX_SERIES_NAMES },
        { labels: { label: "taskType" }, value: taskTypes - MAX_SERIES_NAMES },
      ]);
      // A reader of one workflow and one task type sees them, and that nothing of its own was left out.
      const narrow = await collectMetrics(env, [
        { action: "WORKFLOW_READ", scope: `workflow:${flood[0]}` },
        { action: "TASK_READ", scope: `task:${flood[0]}` },
      ]);
      expect(narrow.find((family) => family.name === "workflow_started_total")!.samples).toEqual([{ labels: { workflowName: flood[0] }, value: 1 }]);
      expect(narrow.find((family) => family.name === "metrics_names_left_out")!.samples.map((sample) => sample.value)).toEqual([0, 0]);
    } finally {
      await env.DB.prepare(`DELETE FROM metric_counts WHERE name LIKE 'mt_flood_%'`).run();
    }
  });

  it(`reads no row of a name it leaves out: the ${MAX_SERIES_NAMES} names are ranked in D1, and only their rows reach the Worker`, async () => {
    // Many one-off names, each with several buckets of each metric, as a DYNAMIC task named by its input leaves them.
    const flood = Array.from({ length: MAX_SERIES_NAMES + 50 }, (_, index) => `mt_unread_${String(index).padStart(4, "0")}`);
    const rows = flood.flatMap((name) => [
      ["workflow_started", name, "", 0, 1, 0],
      ...[1, 2, 3].flatMap((bucket) => [
        ["workflow_completed", name, "COMPLETED", bucket, 1, 60],
        ["task_completed", name, "COMPLETED", bucket, 1, 60],
        ["task_queue_wait", name, "", bucket, 1, 60],
      ]),
    ]);
    await env.DB.prepare(
      `INSERT INTO metric_counts (metric, name, status, bucket, count, sum_ms) SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 FROM json_each(?)`,
    )
      .bind(JSON.stringify(rows))
      .run();
    // Every row a statement of the collector hands the Worker.
    const statement = Object.getPrototypeOf(env.DB.prepare("SELECT 1")) as { all: (this: D1PreparedStatement) => Promise<D1Result> };
    const { all } = statement;
    const read: Array<Record<string, unknown>> = [];
    statement.all = async function () {
      const result = await all.call(this);
      read.push(...(result.results as Array<Record<string, unknown>>));
      return result;
    };
    try {
      const families = await collectMetrics(env, [
        { action: "WORKFLOW_READ", scope: "*" },
        { action: "TASK_READ", scope: "task:mt_unread_*" },
      ]);
      const shown = (family: string, label: string) => new Set(families.find((found) => found.name === family)!.samples.map((sample) => sample.labels[label]!));
      const shownWorkflows = shown("workflow_started_total", "workflowName");
      const shownTasks = shown("task_completed_seconds", "taskType");
      expect(shownTasks.size).toBe(MAX_SERIES_NAMES);
      const leftOut = flood.filter((name) => !shownWorkflows.has(name) && !shownTasks.has(name));
      expect(leftOut.length).toBeGreaterThanOrEqual(50);
      const readOf = read.filter((row) => typeof row["name"] === "string" && row["name"].startsWith("mt_unread_"));
      expect(readOf.length).toBeGreaterThan(0);
      expect(readOf.filter((row) => leftOut.includes(row["name"] as string))).toEqual([]);
    } finally {
      statement.all = all;
      await env.DB.prepare(`DELETE FROM metric_counts WHERE name LIKE 'mt_unread_%'`).run();
    }
  });

  it("answers a scrape while a worker queue cannot (overloaded, as a hot queue may be), leaving out only that queue's depth, and logs which", async () => {
    await registerTaskDefs(["mt_hot_worker", "mt_calm_worker"]);
    await register({ name: "mt_hot", tasks: [simple("work", "mt_hot_worker")] });
    await register({ name: "mt_calm", tasks: [simple("work", "mt_calm_worker")] });
    await startWorkflow("mt_hot");
    await startWorkflow("mt_calm");
    // The tasks are queued as the executions start, their starts counted when their search rows land (within a second).
    await scrapeUntil(
      (found) => found.get(`task_queue_depth{taskType="mt_hot_worker"}`) === 1 && found.get(`task_queue_depth{taskType="mt_calm_worker"}`) === 1 && found.get(`workflow_started_total{workflowName="mt_hot"}`) === 1,
      "both tasks queued, the starts counted",
    );
    // The hot queue's object refuses every call as workerd refuses one to an overloaded object (RPC finds the queue's
    // methods on its class: patched there).
    const { size } = TaskQueue.prototype;
    TaskQueue.prototype.size = async function (this: TaskQueue) {
      if ((this as unknown as { ctx: DurableObjectState }).ctx.id.name?.includes("mt_hot_worker")) {
        throw Object.assign(new Error("Durable Object is overloaded. Too many requests queued."), { overloaded: true });
      }
      return await size.call(this);
    };
    const warned = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const samples = await scrape();
      expect(samples.has(`task_queue_depth{taskType="mt_hot_worker"}`)).toBe(false);
      expect(samples.get(`task_queue_depth{taskType="mt_calm_worker"}`)).toBe(1);
      expect(samples.get(`workflow_started_total{workflowName="mt_hot"}`)).toBe(1);
      const lines = warned.mock.calls.map((args) => args.map(String).join(" ")).filter((line) => line.includes("task_queue_depth"));
      expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([expect.objectContaining({ queues: ["mt_hot_worker"] })]);
    } finally {
      TaskQueue.prototype.size = size;
      warned.mockRestore();
    }
    expect((await scrape()).get(`task_queue_depth{taskType="mt_hot_worker"}`)).toBe(1);
  });

  it("counts what a search row shows for the first time: a row sent again, or older than the index's, counts nothing", async () => {
    const workflowId = crypto.randomUUID();
    const first = row(workflowId, { tasks: [taskRow("t1", "COMPLETED", 1_000, 1_200), taskRow("t2", "CANCELED", 0, 1_300)] });
    await writeRows(first);
    const once = await counted();
    const bucketOf = (seconds: number) => DURATION_BUCKETS_SECONDS.indexOf(seconds);
    expect(once).toEqual({
      workflow_started: [["", 0, 1, 0]],
      // 300 ms: the bucket up to 0.5 s.
      workflow_completed: [["COMPLETED", bucketOf(0.5), 1, 300]],
      task_completed: [
        ["CANCELED", 0, 1, 0],
        ["COMPLETED", bucketOf(0.25), 1, 200],
      ],
      // The canceled task never started: no wait counted.
      task_queue_wait: [["", bucketOf(0.1), 1, 100]],
    });
    // The same row again (a batch retried after its answer was lost), then an older one arriving late.
    await writeRows({ ...first, firstTaskRows: false });
    await writeRows(row(workflowId, { status: "RUNNING", endTime: 0, updateTime: 1_100, tasks: first.tasks, firstTaskRows: false }));
    expect(await counted()).toEqual(once);
    // Restarted and failed: another ending, with a new end time; its earlier task rows are the same tasks.
    await writeRows(row(workflowId, { status: "FAILED", startTime: 5_000, endTime: 125_000, updateTime: 125_000, tasks: [...first.tasks, taskRow("t3", "FAILED", 5_000, 6_000)], firstTaskRows: false }));
    const after = await counted();
    expect(after["workflow_started"]).toEqual([["", 0, 1, 0]]);
    expect(after["workflow_completed"]).toContainEqual(["FAILED", bucketOf(300), 1, 120_000]);
    expect(after["task_completed"]!.reduce((sum, [, , count]) => sum + count, 0)).toBe(3);
    expect(after["task_queue_wait"]).toEqual([["", bucketOf(0.1), 2, 200]]);
    // One batch of two executions' rows (the writer's batch): both counted, by one statement.
    await writeRows(row(crypto.randomUUID()), row(crypto.randomUUID()));
    expect((await counted())["workflow_started"]).toEqual([["", 0, 3, 0]]);
    expect((await counted())["workflow_completed"]).toContainEqual(["COMPLETED", bucketOf(0.5), 3, 900]);
  });

  it("counts what two rows of one execution in the same batch both show once (a write of an evicted instance still queued at the writer, then its next instance's)", async () => {
    const workflowId = crypto.randomUUID();
    const before = await counted();
    const total = (counts: Awaited<ReturnType<typeof counted>>, metric: string) => (counts[metric] ?? []).reduce((sum, [, , count]) => sum + count, 0);
    const running = row(workflowId, { status: "RUNNING", endTime: 0, updateTime: 1_000, tasks: [taskRow("t1", "IN_PROGRESS", 1_100, 0)], indexSequence: 1 });
    const ended = row(workflowId, { tasks: [taskRow("t1", "COMPLETED", 1_100, 1_250)], firstTaskRows: false, indexSequence: 2 });
    await writeRows(running, ended);
    const after = await counted();
    // Each counted twice before: both rows read the index as it stood before the batch, which showed neither.
    expect(total(after, "workflow_started") - total(before, "workflow_started")).toBe(1);
    expect(total(after, "task_queue_wait") - total(before, "task_queue_wait")).toBe(1);
    expect(total(after, "workflow_completed") - total(before, "workflow_completed")).toBe(1);
    expect(total(after, "task_completed") - total(before, "task_completed")).toBe(1);
  });

  it("counts an execution removed while its search row's write waits for its retry: the removal writes the row first", async () => {
    await register({ name: "mt_owed_row", tasks: [simple("work", "mt_owed_row_worker")] });
    // The writer refuses this execution's rows until the removal is asked for: its last row (TERMINATED) waits for a
    // retry, and none was written before it. RPC finds the writer's methods on its class: patched there for this test.
    let workflowId = "";
    let refusing = true;
    const refusedEnd = gate();
    const { upsert } = ExecutionIndexWriter.prototype;
    ExecutionIndexWriter.prototype.upsert = async function (this: ExecutionIndexWriter, written) {
      if (written.workflowId !== workflowId || !refusing) return upsert.call(this, written);
      if (written.status === "TERMINATED") refusedEnd.hit();
      return { ok: false, error: "refused by the test" };
    };
    try {
      workflowId = await startWorkflow("mt_owed_row");
      await apiOk("DELETE", `/api/workflow/${workflowId}?reason=enough`);
      await refusedEnd.reached;
      refusing = false;
      await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
      expect((await api("GET", `/api/workflow/${workflowId}`)).status).toBe(404);
    } finally {
      ExecutionIndexWriter.prototype.upsert = upsert;
    }
    const { results } = await env.DB.prepare(`SELECT metric, status, count FROM metric_counts WHERE name = 'mt_owed_row' ORDER BY metric, status`).all<{ metric: string; status: string; count: number }>();
    // Its start and its ending are counted, and its row is gone with it.
    expect(results.map(({ metric, status, count }) => [metric, status, count])).toEqual([
      ["workflow_completed", "TERMINATED", 1],
      ["workflow_started", "", 1],
    ]);
    expect(await env.DB.prepare("SELECT status FROM executions WHERE workflow_id = ?").bind(workflowId).first()).toBeNull();
  });

  it("removes an execution whose owed search row the writer refuses for good: the row goes uncounted, the execution still goes", async () => {
    await register({ name: "mt_refused_row", tasks: [simple("work", "mt_refused_row_worker")] });
    // The writer refuses every row of this execution (as D1 refuses a row past its limits, at every retry) but not
    // its deletion: a removal that waited for the row would be refused for ever, and its retention would never end it.
    let workflowId = "";
    const refusedEnd = gate();
    const { upsert } = ExecutionIndexWriter.prototype;
    ExecutionIndexWriter.prototype.upsert = async function (this: ExecutionIndexWriter, written) {
      if (written.workflowId !== workflowId) return upsert.call(this, written);
      if (written.status === "TERMINATED") refusedEnd.hit();
      return { ok: false, error: "refused by the test" };
    };
    try {
      workflowId = await startWorkflow("mt_refused_row");
      await apiOk("DELETE", `/api/workflow/${workflowId}?reason=enough`);
      await refusedEnd.reached;
      await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
      expect((await api("GET", `/api/workflow/${workflowId}`)).status).toBe(404);
    } finally {
      ExecutionIndexWriter.prototype.upsert = upsert;
    }
    expect(await env.DB.prepare("SELECT status FROM executions WHERE workflow_id = ?").bind(workflowId).first()).toBeNull();
    const { results } = await env.DB.prepare(`SELECT metric FROM metric_counts WHERE name = 'mt_refused_row'`).all();
    expect(results).toEqual([]);
  });

  it("shows each caller the workflows and task types it may read, and refuses callers without either", async () => {
    await register({ name: "mt_seen", tasks: [{ name: "noop", taskReferenceName: "noop", type: "NOOP", inputParameters: {} }] });
    await register({ name: "mt_hidden", tasks: [{ name: "noop", taskReferenceName: "noop", type: "NOOP", inputParameters: {} }] });
    const seen = await startWorkflow("mt_seen");
    const hidden = await startWorkflow("mt_hidden");
    await waitForIndexRow(seen, "COMPLETED");
    await waitForIndexRow(hidden, "COMPLETED");
    expect((await scrape()).get(`workflow_started_total{workflowName="mt_hidden"}`)).toBe(1);

    const reader = await createUser("metrics-reader@example.com", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:mt_seen" }] });
    const asReader = await scrape({ "x-api-key": reader.apiKey });
    expect(asReader.get(`workflow_started_total{workflowName="mt_seen"}`)).toBe(1);
    const names = [...asReader.keys()];
    expect(names.some((name) => name.includes("mt_hidden"))).toBe(false);
    expect(names.some((name) => name.startsWith("task_"))).toBe(false);

    const taskReader = await createUser("metrics-tasks@example.com", { directPermissions: [{ action: "TASK_READ", scope: "task:NOOP" }] });
    const asTaskReader = [...(await scrape({ "x-api-key": taskReader.apiKey })).keys()];
    expect(asTaskReader.some((name) => name.startsWith(`task_completed_seconds_count{taskType="NOOP"`))).toBe(true);
    expect(asTaskReader.some((name) => name.startsWith("workflow_") || (name.startsWith("task_") && !name.includes(`taskType="NOOP"`)))).toBe(false);

    const nobody = await createUser("metrics-nobody@example.com");
    expect((await call("GET", "/api/metrics", { "x-api-key": nobody.apiKey })).status).toBe(403);
    expect((await call("GET", "/api/metrics", {})).status).toBe(401);
  });

  it("writes a scrape a strict Prometheus parser reads, with the names users chose (quotes, backslashes, line breaks) as they are, and counters that never fall", async () => {
    const workflowName = 'mt "odd\\ flow\nnamed';
    const taskName = 'mt_odd "worker\\\n';
    await register({ name: workflowName, tasks: [simple("work", taskName)] });
    const workflowId = await startWorkflow(workflowName);
    const [polled] = await apiOk<JsonObject[]>("GET", `/api/tasks/poll/batch/${encodeURIComponent(taskName)}?workerid=metrics&count=1&timeout=0`);
    expect(polled?.["workflowInstanceId"]).toBe(workflowId);
    await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: polled!["taskId"], status: "COMPLETED", outputData: {} });
    await waitForIndexRow(workflowId, "COMPLETED");

    const read = async () => {
      const response = await call("GET", "/api/metrics", { "x-api-key": ADMIN_KEY });
      expect(response.status).toBe(200);
      const families = parsePrometheusText(await response.text());
      const value = (family: string, sample: string, labels: Record<string, string>) =>
        families.find((found) => found.name === family)?.samples.find((found) => found.name === sample && Object.entries(labels).every(([name, label]) => found.labels[name] === label))?.value;
      return { families, value };
    };
    const first = await read();
    expect(first.families.map((family) => family.name)).toEqual([
      "workflow_started_total",
      "workflow_running",
      "workflow_paused",
      "workflow_completed_seconds",
      "workflow_failure_total",
      "task_completed_seconds",
      "task_queue_wait_seconds",
      "task_queue_depth",
      "metrics_names_left_out",
    ]);
    expect(first.value("workflow_started_total", "workflow_started_total", { workflowName })).toBe(1);
    expect(first.value("workflow_completed_seconds", "workflow_completed_seconds_count", { workflowName, status: "COMPLETED" })).toBe(1);
    expect(first.value("task_completed_seconds", "task_completed_seconds_count", { taskType: taskName, status: "COMPLETED" })).toBe(1);
    expect(first.value("task_queue_wait_seconds", "task_queue_wait_seconds_count", { taskType: taskName })).toBe(1);

    // Another execution, started and ended: every counter of the first scrape is still there, none lower.
    const second = await startWorkflow(workflowName);
    await apiOk("DELETE", `/api/workflow/${second}?reason=enough`);
    await waitForIndexRow(second, "TERMINATED");
    const later = await read();
    for (const family of first.families.filter((found) => found.type === "counter" || found.type === "histogram")) {
      for (const sample of family.samples) expect(later.value(family.name, sample.name, sample.labels), `${sample.name} ${JSON.stringify(sample.labels)}`).toBeGreaterThanOrEqual(sample.value);
    }
    expect(later.value("workflow_started_total", "workflow_started_total", { workflowName })).toBe(2);
    expect(later.value("workflow_failure_total", "workflow_failure_total", { workflowName, status: "TERMINATED" })).toBe(1);
  });

  it("answers a scrape that fails with a 500 quoting the request id of its one-line log, which holds no credential", async () => {
    // D1 failing the counters' read, as it answers an error: the statement's promise rejects.
    const refusingCounters = (sql: string, prepare: (sql: string) => D1PreparedStatement) => {
      if (!sql.includes("metric_counts")) return prepare(sql);
      const failing = { bind: () => failing, all: () => Promise.reject(new Error("D1_ERROR: the test refuses the counters")) };
      return failing as unknown as D1PreparedStatement;
    };
    const { status, answer, line, lines } = await whilePreparing(refusingCounters, () => loggedFailure(() => call("GET", "/api/metrics", { "x-api-key": ADMIN_KEY })));
    expect(status).toBe(500);
    expect(answer.error).toBe("INTERNAL_ERROR");
    expect(answer.message).not.toContain("D1_ERROR");
    expect(line, lines.join("\n")).toBeDefined();
    expect(line).not.toContain("\n");
    expect(JSON.parse(line!)).toMatchObject({
      msg: "unhandled error",
      requestId: answer.requestId,
      method: "GET",
      path: "/api/metrics",
      route: "/api/metrics",
      error: expect.stringContaining("the test refuses the counters"),
    });
    expect(line).not.toContain(ADMIN_KEY.split(":")[1]);
    // The stack once, its heading (name and message) not written twice.
    expect((JSON.parse(line!) as { error: string }).error.match(/the test refuses the counters/g)).toHaveLength(1);
    expect((await call("GET", "/api/metrics", { "x-api-key": ADMIN_KEY })).status).toBe(200);
  });
});
