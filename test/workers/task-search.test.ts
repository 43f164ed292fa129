/**
 * Task search (`GET /api/tasks/search`, Conductor's TaskClient.search), through the real router, execution objects,
 * index writer and local D1.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_INDEXED_ROWS_BYTES, MAX_INDEXED_TASKS } from "../../src/actors/execution-index";
import type { JsonObject } from "../../src/engine/model";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, boundStatementsOf, eventually, httpTask, queryPlan, register, startWorkflow, target, waitFor, waitForIndexRow } from "./helpers";

type TaskSummary = JsonObject & { taskId: string; workflowId: string; status: string; referenceTaskName: string };
type Found = { totalHits: number; results: TaskSummary[] };

const simple = (ref: string, name: string, inputParameters: JsonObject = {}): JsonObject => ({ name, taskReferenceName: ref, type: "SIMPLE", inputParameters });

async function search(query: string): Promise<Found> {
  return apiOk<Found>("GET", `/api/tasks/search?${query}`);
}

/** Waits (bounded) until the task search `query` answers what `accept` wants. */
async function searchUntil(query: string, accept: (found: Found) => boolean, what: string): Promise<Found> {
  return eventually(() => search(query), accept, what, 8_000);
}

const byWorkflow = (workflowId: string, more = "") => `query=${encodeURIComponent(`workflowId = '${workflowId}'${more}`)}`;

describe("GET /api/tasks/search", () => {
  it("finds a finished execution's tasks with Conductor's TaskSummary fields, by query and by free text", async () => {
    await register({
      name: "ts_basic",
      tasks: [httpTask("fetch", { uri: target("/echo/ts-basic"), method: "GET" }), { name: "calc", taskReferenceName: "calc", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "6 * 7" } }],
    });
    const workflowId = await startWorkflow("ts_basic", {}, "?correlationId=ts-corr");
    await waitFor(workflowId, ["COMPLETED"]);
    const found = await searchUntil(byWorkflow(workflowId), (page) => page.totalHits === 2, "both tasks of ts_basic");
    const calc = found.results.find((task) => task.referenceTaskName === "calc")!;
    expect(calc).toMatchObject({ workflowId, workflowType: "ts_basic", correlationId: "ts-corr", taskType: "INLINE", taskDefName: "calc", status: "COMPLETED", workflowPriority: 0 });
    // Orkes' TaskSummary (and its clients' models) holds the reference name as taskReferenceName.
    expect(calc).toMatchObject({ referenceTaskName: "calc", taskReferenceName: "calc" });
    expect(JSON.parse(String(calc["output"]))).toEqual({ result: 42 });
    for (const field of ["scheduledTime", "startTime", "updateTime", "endTime"]) expect(new Date(String(calc[field])).toISOString()).toBe(calc[field]);
    expect(typeof calc["executionTime"]).toBe("number");
    // Narrowed by type and status, sorted, paged; free text finds the reference name and the correlation id.
    expect((await search(byWorkflow(workflowId, " AND taskType IN (HTTP)"))).results.map((task) => task.referenceTaskName)).toEqual(["fetch"]);
    expect((await search(`${byWorkflow(workflowId)}&sort=${encodeURIComponent("scheduledTime:ASC")}&size=1&start=1`)).results.map((task) => task.referenceTaskName)).toEqual(["calc"]);
    expect((await search(`${byWorkflow(workflowId)}&freeText=calc`)).totalHits).toBe(1);
    // Sorted by any column of the UI's task results, the task id among them.
    const ids = found.results.map((task) => task.taskId).sort();
    expect((await search(`${byWorkflow(workflowId)}&sort=${encodeURIComponent("taskId:DESC")}`)).results.map((task) => task.taskId)).toEqual([...ids].reverse());
    expect((await search(`${byWorkflow(workflowId)}&sort=${encodeURIComponent("referenceTaskName:ASC")}`)).results.map((task) => task.referenceTaskName)).toEqual(["calc", "fetch"]);
    expect((await search(`freeText=ts-corr`)).results.map((task) => [task.workflowId, task.referenceTaskName]).sort()).toEqual([[workflowId, "calc"], [workflowId, "fetch"]]);
  });

  it("freeText of Lucene terms field:value (as Conductor's Elasticsearch index reads it) is read as those conditions; a bare word or an unknown field stays a substring", async () => {
    await register({ name: "ts_lucene", tasks: [simple("work", "ts_lucene_worker", { note: "ticket:tl-9" })] });
    const abc1 = await startWorkflow("ts_lucene", {}, "?correlationId=tl-abc-1");
    const abc2 = await startWorkflow("ts_lucene", {}, "?correlationId=tl-abc-2");
    const xyz = await startWorkflow("ts_lucene", {}, "?correlationId=tl-xyz");
    for (const id of [abc1, abc2, xyz]) await searchUntil(byWorkflow(id), (page) => page.results[0]?.status === "SCHEDULED", `the task of ${id}`);
    const workflows = async (freeText: string) =>
      (await search(`freeText=${encodeURIComponent(freeText)}`)).results.map((task) => task.workflowId).sort();
    expect(await workflows("correlationId:tl-abc-*")).toEqual([abc1, abc2].sort());
    expect(await workflows("correlationId:tl-* AND status:SCHEDULED AND taskType:ts_lucene_worker")).toEqual([abc1, abc2, xyz].sort());
    expect(await workflows("correlationId:tl-abc-* AND status:COMPLETED")).toEqual([]);
    expect(await workflows('correlationId:"tl-xyz"')).toEqual([xyz]);
    expect(await workflows('correlationId:"tl-abc-*"')).toEqual([]);
    // An unknown field and a bare word: the substring search, as before.
    expect(await workflows("ticket:tl-9")).toEqual([abc1, abc2, xyz].sort());
    expect(await workflows("tl-xyz")).toEqual([xyz]);
    expect((await api("GET", `/api/tasks/search?freeText=${encodeURIComponent("status:DONE")}`)).status).toBe(200);
  });

  it("shows a running execution's task as it waits, then as it changes, within a second or two", async () => {
    await register({ name: "ts_running", tasks: [simple("work", "ts_running_worker", { n: "${workflow.input.n}" })] });
    const workflowId = await startWorkflow("ts_running", { n: 5 });
    const waiting = await searchUntil(byWorkflow(workflowId), (page) => page.results[0]?.status === "SCHEDULED", "the waiting task");
    expect(waiting.results[0]).toMatchObject({ taskType: "ts_running_worker", referenceTaskName: "work", input: JSON.stringify({ n: 5 }) });
    expect(waiting.results[0]).not.toHaveProperty("startTime");
    const polled = await apiOk<JsonObject>("GET", "/api/tasks/poll/ts_running_worker?workerid=searcher");
    expect(polled["taskId"]).toBe(waiting.results[0]!.taskId);
    const held = await searchUntil(byWorkflow(workflowId), (page) => page.results[0]?.status === "IN_PROGRESS", "the polled task");
    expect(held.results[0]).toMatchObject({ workerId: "searcher" });
    await apiOk("POST", `/api/tasks/${workflowId}/work/COMPLETED`, { sum: 9 });
    await searchUntil(byWorkflow(workflowId, " AND status = COMPLETED"), (page) => page.totalHits === 1, "the completed task");
  });

  it("keeps an execution's rows in step with it: a rerun drops the tasks it discarded, a removal all of them", async () => {
    const inline = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "1" } });
    const route = { name: "route", taskReferenceName: "route", type: "SWITCH", evaluatorType: "value-param", expression: "path", inputParameters: { path: "${workflow.input.path}" }, decisionCases: { a: [inline("a1"), inline("a2")], b: [inline("b1")] }, defaultCase: [] };
    await register({ name: "ts_rerun", tasks: [route] });
    const workflowId = await startWorkflow("ts_rerun", { path: "a" });
    await waitFor(workflowId, ["COMPLETED"]);
    const refs = (page: Found) => page.results.map((task) => task.referenceTaskName).sort().join(",");
    await searchUntil(byWorkflow(workflowId), (page) => refs(page) === "a1,a2,route", "the first run's tasks");
    await apiOk("POST", `/api/workflow/${workflowId}/rerun`, { workflowInput: { path: "b" } });
    await waitFor(workflowId, (workflow) => workflow.status === "COMPLETED" && workflow.tasks.some((task) => task.referenceTaskName === "b1"));
    await searchUntil(byWorkflow(workflowId), (page) => refs(page) === "b1,route", "the rerun's tasks only");
    await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
    expect((await search(byWorkflow(workflowId))).totalHits).toBe(0);
  });

  it(`holds an execution's latest ${MAX_INDEXED_TASKS} tasks`, async () => {
    const loop = { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", inputParameters: {}, loopCondition: `$.loop['iteration'] < ${MAX_INDEXED_TASKS + 10}`, loopOver: [{ name: "tick", taskReferenceName: "tick", type: "SET_VARIABLE", inputParameters: { n: 1 } }] };
    await register({ name: "ts_many", tasks: [loop] });
    const workflowId = await startWorkflow("ts_many");
    const done = await waitFor(workflowId, ["COMPLETED"], 30_000);
    expect(done.tasks.length).toBeGreaterThan(MAX_INDEXED_TASKS);
    await waitForIndexRow(workflowId, "COMPLETED");
    const stored = await env.DB.prepare("SELECT COUNT(*) AS n, MIN(update_time) AS oldest FROM task_index WHERE workflow_id = ?").bind(workflowId).first<{ n: number }>();
    expect(stored?.n).toBe(MAX_INDEXED_TASKS);
    const latest = done.tasks.at(-1)!;
    expect((await search(`query=${encodeURIComponent(`taskId = '${latest.taskId}'`)}`)).totalHits).toBe(1);
    expect((await search(`query=${encodeURIComponent(`taskId = '${done.tasks[0]!.taskId}'`)}`)).totalHits).toBe(0);
  });

  it(`holds fewer of an execution's latest tasks when their rows are over ${MAX_INDEXED_ROWS_BYTES} bytes, rather than failing its whole search row`, async () => {
    // 400 forked tasks, each with an input and an output of 1,100 three-byte characters: their rows, cut at 1,024
    // characters, are some 6.5 KB each, 2.6 MB together as the one JSON value bound for them, which D1 refused (past
    // 2 MB; 2.2 MB locally): the execution's row was never written, its job retried every 2 s for good.
    const count = 400;
    const forked = `Array.from({ length: $.n }, (_, i) => ({ name: 'wide', taskReferenceName: 'wide_' + i, type: 'JSON_JQ_TRANSFORM', inputParameters: { text: '$' + '{workflow.input.text}', queryExpression: '.text' } }))`;
    await register({
      name: "ts_wide_rows",
      tasks: [
        { name: "prepare", taskReferenceName: "prepare", type: "INLINE", inputParameters: { evaluatorType: "javascript", n: count, expression: `({ tasks: ${forked}, inputs: {} })` } },
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { tasks: "${prepare.output.result.tasks}", inputs: "${prepare.output.result.inputs}" }, dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs" },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
      ],
    });
    const workflowId = await startWorkflow("ts_wide_rows", { text: "中".repeat(1_100) });
    const done = await waitFor(workflowId, ["FAILED"], 15_000);
    // The JOIN gathering their outputs is over MAX_PAYLOAD_BYTES: it fails, saying so.
    expect(done.reasonForIncompletion).toMatch(/^Task fan_join failed: The task output is \d+ bytes, over the limit of \d+ bytes \(MAX_PAYLOAD_BYTES\)$/);
    expect(done.tasks.filter((task) => task.referenceTaskName.startsWith("wide_") && task.status === "COMPLETED")).toHaveLength(count);
    await waitForIndexRow(workflowId, "FAILED");
    const stored = await env.DB.prepare("SELECT COUNT(*) AS n, SUM(length(CAST(input AS BLOB)) + length(CAST(output AS BLOB))) AS bytes FROM task_index WHERE workflow_id = ?")
      .bind(workflowId)
      .first<{ n: number; bytes: number }>();
    expect(stored!.n).toBeGreaterThan(100);
    expect(stored!.n).toBeLessThan(done.tasks.length);
    expect(stored!.bytes).toBeLessThan(MAX_INDEXED_ROWS_BYTES);
    // The latest are kept: the JOIN that failed is found, the fork that came first is not.
    const failed = await search(byWorkflow(workflowId, " AND status = FAILED_WITH_TERMINAL_ERROR"));
    expect(failed.results.map((task) => task.referenceTaskName)).toEqual(["fan_join"]);
    const fork = done.tasks.find((task) => task.referenceTaskName === "fan")!;
    expect((await search(`query=${encodeURIComponent(`taskId = '${fork.taskId}'`)}`)).totalHits).toBe(0);
  });

  it(`keeps the rows of an execution's tasks not ended first when its rows are over ${MAX_INDEXED_ROWS_BYTES} bytes: a worker task scheduled before a fork of large rows is still found by its status`, async () => {
    // 400 forked tasks with an input of 1,100 three-byte characters (rows some 3.2 KB each, 1.3 MB together), all
    // scheduled after the worker task, which the latest rows alone left out of the index while it waited.
    const count = 400;
    const forked = `Array.from({ length: $.n }, (_, i) => ({ name: 'wide', taskReferenceName: 'wide_' + i, type: 'JSON_JQ_TRANSFORM', inputParameters: { text: '$' + '{workflow.input.text}', queryExpression: '.text | length' } }))`;
    await register({
      name: "ts_wide_active",
      tasks: [
        {
          name: "split",
          taskReferenceName: "split",
          type: "FORK_JOIN",
          forkTasks: [
            [{ name: "ts_wide_active_worker", taskReferenceName: "worker", type: "SIMPLE" }],
            [
              { name: "prepare", taskReferenceName: "prepare", type: "INLINE", inputParameters: { evaluatorType: "javascript", n: count, expression: `({ tasks: ${forked}, inputs: {} })` } },
              { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { tasks: "${prepare.output.result.tasks}", inputs: "${prepare.output.result.inputs}" }, dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs" },
              { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
            ],
          ],
        },
        { name: "split_join", taskReferenceName: "split_join", type: "JOIN", joinOn: ["worker", "fan_join"] },
      ],
    });
    const workflowId = await startWorkflow("ts_wide_active", { text: "中".repeat(1_100) });
    const running = await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "fan_join" && task.status === "COMPLETED"), 15_000);
    expect(running.status).toBe("RUNNING");
    const worker = running.tasks.find((task) => task.referenceTaskName === "worker")!;
    expect(worker.status).toBe("SCHEDULED");
    // Once the rows show the fork's JOIN ended (the state they then stay at: the worker task is never polled), rows of
    // ended tasks fill what the tasks not ended leave, the latest first: fewer rows than tasks, the worker task's among them.
    await searchUntil(byWorkflow(workflowId, " AND status = COMPLETED AND taskType = JOIN"), (result) => result.totalHits === 1, "the fork's JOIN row, COMPLETED");
    const stored = await env.DB.prepare("SELECT COUNT(*) AS n FROM task_index WHERE workflow_id = ?").bind(workflowId).first<{ n: number }>();
    expect(stored!.n).toBeLessThan(running.tasks.length);
    const scheduled = await search(byWorkflow(workflowId, " AND status = SCHEDULED"));
    expect(scheduled.results.map((task) => task.taskId)).toEqual([worker.taskId]);
  });

  it("reads the workflow search's wildcards (an unquoted * in an = value), groups in parentheses and '' (absent or empty), in task search and search-by-tasks alike", async () => {
    const inline = (name: string, ref: string): JsonObject => ({ name, taskReferenceName: ref, type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "1" } });
    await register({ name: "ts_wild_flow", tasks: [inline("ts_wild_calc_a", "calc_a"), inline("ts_wild_calc_b", "calc_b"), inline("ts_wild_other", "other")] });
    const workflowId = await startWorkflow("ts_wild_flow");
    await waitFor(workflowId, ["COMPLETED"]);
    await searchUntil(byWorkflow(workflowId), (page) => page.totalHits === 3, "the three tasks of ts_wild_flow");
    const refs = async (more: string) => (await search(byWorkflow(workflowId, more))).results.map((task) => task.referenceTaskName).sort();
    expect(await refs(" AND taskDefName = ts_wild_calc*")).toEqual(["calc_a", "calc_b"]);
    expect(await refs(" AND (taskDefName != ts_wild_calc* AND status = COMPLETED)")).toEqual(["other"]);
    expect(await refs(" AND taskDefName = 'ts_wild_calc*'")).toEqual([]);
    // No domain and no worker: '' is the field absent or empty.
    expect(await refs(" AND domain = '' AND workerId = \"\"")).toEqual(["calc_a", "calc_b", "other"]);
    expect(await refs(" AND domain != ''")).toEqual([]);
    const executions = await apiOk<{ results: Array<{ workflowId: string }> }>("GET", `/api/workflow/search-by-tasks?query=${encodeURIComponent("(taskRefName = calc_* AND workflowType = ts_wild_*)")}`);
    expect(executions.results.map((workflow) => workflow.workflowId)).toEqual([workflowId]);
  });

  it("queries and sorts by the other fields of Conductor's task index: reasonForIncompletion, executionTime, queueWaitTime and workflowPriority", async () => {
    await register({ name: "ts_measures", tasks: [simple("first", "ts_measures_worker"), simple("second", "ts_measures_worker")] });
    const workflowId = await startWorkflow("ts_measures", {}, "?priority=7");
    for (const ref of ["first", "second"]) {
      const polled = await apiOk<JsonObject>("GET", "/api/tasks/poll/ts_measures_worker?workerid=measurer");
      expect(polled["referenceTaskName"]).toBe(ref);
      const failed = ref === "second";
      await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: polled["taskId"], status: failed ? "FAILED" : "COMPLETED", ...(failed ? { reasonForIncompletion: "ts measures broke" } : {}), outputData: {} });
    }
    await waitFor(workflowId, ["FAILED"]);
    await searchUntil(byWorkflow(workflowId, " AND status IN (COMPLETED, FAILED)"), (page) => page.totalHits === 2, "both ended tasks of ts_measures");
    const refs = async (more: string, sort = "") => (await search(`${byWorkflow(workflowId, more)}${sort === "" ? "" : `&sort=${encodeURIComponent(sort)}`}`)).results.map((task) => task.referenceTaskName);
    expect(await refs(" AND reasonForIncompletion = 'ts measures broke'")).toEqual(["second"]);
    expect(await refs(" AND workflowPriority = 7", "referenceTaskName:ASC")).toEqual(["first", "second"]);
    expect(await refs(" AND workflowPriority > 7")).toEqual([]);
    // Compared as the summaries show them (numbers, 0 until known), and sorted by them, whatever the times were.
    const all = (await search(byWorkflow(workflowId))).results;
    for (const field of ["executionTime", "queueWaitTime"]) {
      for (const task of all) expect(await refs(` AND ${field} = ${Number(task[field])}`)).toContain(task.referenceTaskName);
      expect(await refs(` AND ${field} >= 0`, "referenceTaskName:ASC")).toEqual(["first", "second"]);
      for (const direction of ["ASC", "DESC"]) {
        const sorted = (await search(`${byWorkflow(workflowId)}&sort=${encodeURIComponent(`${field}:${direction}|referenceTaskName:ASC`)}`)).results;
        const expected = [...all].sort((a, b) => (direction === "ASC" ? 1 : -1) * (Number(a[field]) - Number(b[field])) || a.referenceTaskName.localeCompare(b.referenceTaskName));
        expect(sorted.map((task) => task.referenceTaskName)).toEqual(expected.map((task) => task.referenceTaskName));
      }
    }
    expect((await search(`${byWorkflow(workflowId)}&sort=${encodeURIComponent("reasonForIncompletion:DESC")}`)).results[0]!.referenceTaskName).toBe("second");
    // A task without a reason last either way, as Conductor's index sorts a missing field (Elasticsearch's `missing: _last`).
    expect((await search(`${byWorkflow(workflowId)}&sort=${encodeURIComponent("reasonForIncompletion:ASC")}`)).results[0]!.referenceTaskName).toBe("second");
    expect((await api("GET", `/api/tasks/search?query=${encodeURIComponent("executionTime > soon")}`)).status).toBe(400);
  });

  it("refuses what it cannot search with a 400 naming the parameter, and needs TASK_READ or WORKFLOW_READ", async () => {
    for (const [query, path] of [
      ["query=status%20%3D%20DONE", "query"],
      ["query=nothing%20%3D%201", "query"],
      ["query=startTime%20%3E%20yesterday", "query"],
      ["sort=reference", "sort"],
      ["size=1001", "size"],
    ] as const) {
      const response = await api("GET", `/api/tasks/search?${query}`);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { validationErrors: Array<{ path: string }> }).validationErrors[0]!.path).toBe(path);
    }
    const executor = await createUser("ts-executor", { directPermissions: [{ action: "TASK_EXECUTE", scope: "*" }] });
    expect((await call("GET", "/api/tasks/search", orkes(executor.token))).status).toBe(403);
    const reader = await createUser("ts-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    expect((await call("GET", "/api/tasks/search", orkes(reader.token))).status).toBe(200);
    const taskReader = await createUser("ts-task-reader", { directPermissions: [{ action: "TASK_READ", scope: "*" }] });
    expect((await call("GET", "/api/tasks/search", orkes(taskReader.token))).status).toBe(200);
  });
});

describe("task search at a large tenant's size", () => {
  it("counts at most 10,000 hits (or the page's end plus one), as the execution search, and pages past them; one task type's page through its index in order", async () => {
    // 10,050 COMPLETED tasks of one type, in 10,050 executions: the task index written as the index writer writes it.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10050)
       INSERT INTO task_index (task_id, workflow_id, workflow_name, correlation_id, workflow_priority, task_type, task_def_name, reference_task_name, status,
         domain, worker_id, reason, scheduled_time, start_time, end_time, update_time, input, output)
       SELECT printf('ts-scale-%05d', i), printf('ts-scale-wf-%05d', i), 'ts_scale', NULL, 0, 'ts_scale_task', 'ts_scale_task', 'work', 'COMPLETED',
         NULL, 'w', NULL, 1000 + i, 1000 + i, 2000 + i, 2000 + i, '{}', '{}' FROM n`,
    ).run();
    try {
      const typed = (more: string) => `query=${encodeURIComponent("taskType IN (ts_scale_task)")}&sort=updateTime:DESC${more}`;
      let first: Found | undefined;
      const [count, page] = await boundStatementsOf(/FROM task_index/, async () => {
        first = await search(typed("&size=15"));
      });
      // A list of one type is an equality: the type's index walked in update order, not every row of the type sorted.
      expect(await queryPlan(page!)).toContain("SEARCH task_index USING INDEX task_index_by_type (task_type=?)");
      expect(await queryPlan(page!)).not.toContain("USE TEMP B-TREE FOR ORDER BY");
      expect((await env.DB.prepare(count!.sql).bind(...count!.bindings).all()).meta.rows_read).toBeLessThanOrEqual(10_000);
      expect(first!.totalHits).toBe(10_000);
      expect(first!.results.map((task) => task.taskId)).toEqual(Array.from({ length: 15 }, (_, k) => `ts-scale-${10_050 - k}`));
      expect((await search(typed("&start=9990&size=15"))).totalHits).toBe(10_006);
      const last = await search(typed("&start=10040&size=15"));
      expect(last.totalHits).toBe(10_050);
      expect(last.results.map((task) => task.taskId)).toEqual(Array.from({ length: 10 }, (_, k) => `ts-scale-${String(10 - k).padStart(5, "0")}`));
      // Below 10,000 hits, the exact count.
      expect((await search(`query=${encodeURIComponent("workflowType IN (ts_scale) AND updateTime > 10000")}`)).totalHits).toBe(2_050);
    } finally {
      await env.DB.prepare("DELETE FROM task_index WHERE workflow_name = 'ts_scale'").run();
    }
  });

  it("finds an execution's tasks through the executions' index beside one status or type, not by walking every task of that status or type", async () => {
    // 2,000 COMPLETED tasks of one type in 2,000 executions; execution ts-narrow-wf holds three (one FAILED) of them.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
       INSERT INTO task_index (task_id, workflow_id, workflow_name, correlation_id, workflow_priority, task_type, task_def_name, reference_task_name, status,
         domain, worker_id, reason, scheduled_time, start_time, end_time, update_time, input, output)
       SELECT printf('ts-narrow-%05d', i), CASE WHEN i IN (7, 1500, 1999) THEN 'ts-narrow-wf' ELSE printf('ts-narrow-wf-%05d', i) END, 'ts_narrow', NULL, 0,
         'ts_narrow_task', 'ts_narrow_task', 'work', CASE WHEN i = 1999 THEN 'FAILED' ELSE 'COMPLETED' END, NULL, 'w', NULL, 1000 + i, 1000 + i, 2000 + i, 2000 + i, '{}', '{}' FROM n`,
    ).run();
    try {
      const queries: Array<[query: string, tasks: string[]]> = [
        ["workflowId='ts-narrow-wf' AND status IN (COMPLETED)", ["ts-narrow-01500", "ts-narrow-00007"]],
        ["workflowId IN (ts-narrow-wf) AND taskType IN (ts_narrow_task) AND status = FAILED", ["ts-narrow-01999"]],
      ];
      for (const [query, tasks] of queries) {
        let found: Found | undefined;
        const [count, page] = await boundStatementsOf(/FROM task_index/, async () => {
          found = await search(`query=${encodeURIComponent(query)}&sort=updateTime:DESC`);
        });
        expect(found!.totalHits, query).toBe(tasks.length);
        expect(found!.results.map((task) => task.taskId), query).toEqual(tasks);
        for (const read of [count!, page!]) {
          expect(await queryPlan(read), read.sql).toContain("USING INDEX task_index_by_workflow (workflow_id=?)");
          expect((await env.DB.prepare(read.sql).bind(...read.bindings).all()).meta.rows_read, read.sql).toBeLessThan(50);
        }
      }
    } finally {
      await env.DB.prepare("DELETE FROM task_index WHERE workflow_name = 'ts_narrow'").run();
    }
  });
});

describe("task search for a caller who may read some tasks", () => {
  const inline = (name: string, ref: string): JsonObject => ({ name, taskReferenceName: ref, type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "1" } });
  const both = `query=${encodeURIComponent("workflowType IN (ts_scope_a, ts_scope_b)")}`;

  it("shows each caller the tasks of the workflows it may read, and those of the task names it may read (not by reference name)", async () => {
    await register({ name: "ts_scope_a", tasks: [inline("ts_scope_pick", "first"), inline("ts_scope_plain", "ts_scope_ref_x")] });
    await register({ name: "ts_scope_b", tasks: [inline("ts_scope_pick", "b_first"), inline("ts_scope_plain", "b_second")] });
    for (const name of ["ts_scope_a", "ts_scope_b"]) await waitFor(await startWorkflow(name), ["COMPLETED"]);
    await searchUntil(both, (page) => page.totalHits === 4, "the four tasks of ts_scope_a and ts_scope_b");
    const seenBy = async (...directPermissions: Array<{ action: string; scope: string }>) => {
      const user = await createUser(`ts-scope-${crypto.randomUUID().slice(0, 8)}`, { directPermissions });
      const response = await call("GET", `/api/tasks/search?${both}`, orkes(user.token));
      expect(response.status).toBe(200);
      const found = (await response.json()) as Found;
      const v2 = await call("GET", `/api/tasks/search-v2?${both}`, orkes(user.token));
      const v2Refs = ((await v2.json()) as { results: Array<{ referenceTaskName: string }> }).results.map((task) => task.referenceTaskName).sort();
      const refs = found.results.map((task) => task.referenceTaskName).sort();
      expect(v2Refs).toEqual(refs);
      expect(found.totalHits).toBe(refs.length);
      return refs;
    };
    expect(await seenBy({ action: "WORKFLOW_READ", scope: "workflow:ts_scope_a" })).toEqual(["first", "ts_scope_ref_x"]);
    expect(await seenBy({ action: "TASK_READ", scope: "task:ts_scope_pick" })).toEqual(["b_first", "first"]);
    expect(await seenBy({ action: "TASK_READ", scope: "task:ts_scope_ref_*" })).toEqual([]);
    expect(await seenBy({ action: "WORKFLOW_READ", scope: "workflow:ts_scope_b" }, { action: "TASK_READ", scope: "task:ts_scope_pick" })).toEqual(["b_first", "b_second", "first"]);
    // A grant on another workflow or task finds none of them; one on every task, all.
    expect(await seenBy({ action: "WORKFLOW_READ", scope: "workflow:ts_read" }, { action: "TASK_READ", scope: "task:other" })).toEqual([]);
    expect(await seenBy({ action: "TASK_READ", scope: "task:*" })).toEqual(["b_first", "b_second", "first", "ts_scope_ref_x"]);
  });
});

describe("GET /api/tasks/search-v2", () => {
  it("answers the same search with each task's whole Task JSON, read from its execution, and needs TASK_READ or WORKFLOW_READ", async () => {
    await register({ name: "ts_v2", tasks: [{ name: "calc", taskReferenceName: "calc", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "'x'.repeat(2000)" } }] });
    const workflowId = await startWorkflow("ts_v2");
    await waitFor(workflowId, ["COMPLETED"]);
    await searchUntil(byWorkflow(workflowId), (page) => page.totalHits === 1, "the task of ts_v2");
    const found = await apiOk<{ totalHits: number; results: JsonObject[] }>("GET", `/api/tasks/search-v2?${byWorkflow(workflowId)}`);
    expect(found.totalHits).toBe(1);
    // The whole task: its output as an object, not the summary's cut text.
    expect(found.results[0]).toMatchObject({ workflowInstanceId: workflowId, referenceTaskName: "calc", taskType: "INLINE", status: "COMPLETED", outputData: { result: "x".repeat(2000) } });
    const refused = await api("GET", `/api/tasks/search-v2?size=101`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { validationErrors: Array<{ path: string }> }).validationErrors[0]!.path).toBe("size");
    const executor = await createUser("ts-v2-executor", { directPermissions: [{ action: "TASK_EXECUTE", scope: "*" }] });
    expect((await call("GET", "/api/tasks/search-v2", orkes(executor.token))).status).toBe(403);
  });
});

describe("the search index's plan", () => {
  const plan = async (sql: string, ...bindings: unknown[]) =>
    (await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...bindings).all<{ detail: string }>()).results.map((row) => row.detail).join("; ");

  it("finds tasks by workflow name or correlation id, and executions by their last change, through an index rather than a scan", async () => {
    expect(await plan("SELECT task_id FROM task_index WHERE workflow_name IN (SELECT value FROM json_each(?)) ORDER BY update_time DESC", JSON.stringify(["a", "b"]))).toContain("task_index_by_workflow_name");
    expect(await plan("SELECT task_id FROM task_index WHERE correlation_id = ?", "c")).toContain("task_index_by_correlation");
    expect(await plan("SELECT workflow_id FROM executions WHERE update_time > ?", 5)).toContain("executions_by_update");
    // A wildcard with a literal head (workflowType = billing_*) is a GLOB the name index serves.
    expect(await plan("SELECT workflow_id FROM executions WHERE workflow_name GLOB ?", "billing_*")).toContain("executions_by_name");
  });
});
