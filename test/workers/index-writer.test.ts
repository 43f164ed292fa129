import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { indexRowStatements, pruneRemovedTombstones, REMOVED_TOMBSTONE_KEEP_MS, REMOVED_TOMBSTONE_PRUNE_LIMIT, type IndexRow } from "../../src/actors/execution-index";
import { ExecutionIndexWriter, INDEX_MAX_BATCH, indexBatchStatements, indexShardFor, indexWriterAt, type IndexWriteOutcome } from "../../src/actors/index-writer";
import { serviceConfig } from "../../src/worker/config";
import { executionStub } from "../../src/worker/executions";
import { api, apiOk, eventually, gate, getWorkflow, httpTask, register, searchRow, startWorkflow, storedByExecutionObject, target, waitFor, waitForIndexRow } from "./helpers";

function row(workflowId: string, overrides: Partial<IndexRow> = {}): IndexRow {
  return searchRow(workflowId, { workflowName: "batched", ...overrides });
}

/** The writer the current setting gives an execution (what an execution started now pins). */
function indexWriterFor(workflowId: string) {
  return indexWriterAt(env, indexShardFor(env, workflowId));
}

async function storedStatus(workflowId: string): Promise<string | undefined> {
  return (await env.DB.prepare("SELECT status FROM executions WHERE workflow_id = ?").bind(workflowId).first<{ status: string }>())?.status;
}

/** A task row of execution `id` (its one task, `t1`) with that status and updateTime, for rows written out of order. */
function taskRowOf(id: string) {
  return (status: string, updateTime: number) => ({
    taskId: `${id}-t1`, taskType: "SIMPLE", taskDefName: "work", referenceTaskName: "work", status, domain: null, workerId: null, reason: null,
    scheduledTime: 500, startTime: 500, endTime: status === "IN_PROGRESS" || status === "SCHEDULED" ? 0 : updateTime, updateTime, input: "{}", output: "{}",
  });
}

/** The task index's rows of an execution, with the sequence of its search row (which wrote them). */
async function storedTasks(workflowId: string): Promise<Array<{ status: string; update_time: number; index_sequence: number }>> {
  const { results } = await env.DB.prepare(
    `SELECT t.status, t.update_time, e.index_sequence FROM task_index t JOIN executions e USING (workflow_id) WHERE t.workflow_id = ? ORDER BY t.task_id`,
  ).bind(workflowId).all<{ status: string; update_time: number; index_sequence: number }>();
  return results;
}

describe("the search-row writer", () => {
  it("commits rows that arrive together in shared D1 batches, and every row lands", async () => {
    const ids = Array.from({ length: INDEX_MAX_BATCH + 5 }, () => crypto.randomUUID());
    const outcomes = await Promise.all(ids.map((id) => indexWriterFor(id).upsert(row(id))));
    const batchSizes = outcomes.map((outcome) => (outcome.ok ? outcome.batchSize : 0));
    expect(batchSizes).not.toContain(0);
    expect(Math.max(...batchSizes)).toBeGreaterThan(1);
    expect(Math.max(...batchSizes)).toBeLessThanOrEqual(INDEX_MAX_BATCH);
    for (const id of ids) expect(await storedStatus(id)).toBe("COMPLETED");
  });

  it("a row D1 refuses fails alone; the rows batched with it still land", async () => {
    const [good1, bad, good2] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const refused = row(bad, { workflowName: null as unknown as string });
    const outcomes = await Promise.all([good1, bad, good2].map((id) => indexWriterFor(id).upsert(id === bad ? refused : row(id))));
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, false, true]);
    expect(outcomes[1]).toMatchObject({ ok: false, error: expect.stringContaining("NOT NULL") });
    expect(await storedStatus(good1)).toBe("COMPLETED");
    expect(await storedStatus(good2)).toBe("COMPLETED");
    expect(await storedStatus(bad)).toBeUndefined();
  });

  it("an older row arriving after a newer one changes nothing", async () => {
    const id = crypto.randomUUID();
    await indexWriterFor(id).upsert(row(id, { status: "COMPLETED", updateTime: 2_000 }));
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", updateTime: 1_000 }));
    expect(await storedStatus(id)).toBe("COMPLETED");
  });

  it("an older row arriving after a newer one leaves the newer one's task rows: they are replaced only with their execution's row", async () => {
    const id = crypto.randomUUID();
    const task = taskRowOf(id);
    await indexWriterFor(id).upsert(row(id, { status: "COMPLETED", updateTime: 2_000, tasks: [task("COMPLETED", 2_000)] }));
    // The older row (a writer reset with its batch still on its way, say): its search row changed nothing, but its task
    // rows replaced the newer ones, so a task search showed the completed task IN_PROGRESS.
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", updateTime: 1_000, tasks: [task("IN_PROGRESS", 1_000)], firstTaskRows: false }));
    expect(await storedStatus(id)).toBe("COMPLETED");
    const taskRow = await env.DB.prepare("SELECT status, update_time FROM task_index WHERE workflow_id = ?").bind(id).all<{ status: string; update_time: number }>();
    expect(taskRow.results).toEqual([{ status: "COMPLETED", update_time: 2_000 }]);
  });

  it("of two rows with the same updateTime (task changes), a late one of a lower sequence leaves the higher one's rows", async () => {
    const id = crypto.randomUUID();
    const task = taskRowOf(id);
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", updateTime: 1_000, tasks: [task("IN_PROGRESS", 1_500)], indexSequence: 1 }));
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", updateTime: 1_000, tasks: [task("COMPLETED", 1_800)], firstTaskRows: false, indexSequence: 3 }));
    // The second write of the object (sequence 2), sent to a writer evicted with it on its way and landing only now:
    // it showed the completed task IN_PROGRESS again in task search until the execution's next workflow-level change.
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", updateTime: 1_000, tasks: [task("IN_PROGRESS", 1_600)], firstTaskRows: false, indexSequence: 2 }));
    expect(await storedTasks(id)).toEqual([{ status: "COMPLETED", update_time: 1_800, index_sequence: 3 }]);
    // The same write sent again (a retry whose first try committed) changes nothing either; a later one lands.
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", updateTime: 1_000, tasks: [task("COMPLETED", 1_800)], firstTaskRows: false, indexSequence: 3 }));
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", updateTime: 1_000, tasks: [task("COMPLETED", 1_800), { ...task("SCHEDULED", 1_900), taskId: `${id}-t2` }], firstTaskRows: false, indexSequence: 4 }));
    expect((await storedTasks(id)).map((stored) => stored.status)).toEqual(["COMPLETED", "SCHEDULED"]);
  });

  it("a row without a sequence (older code, mid-deploy) is ordered by its updateTime alone, and never holds back the sequenced rows after it", async () => {
    const id = crypto.randomUUID();
    const task = taskRowOf(id);
    // Older code's writer inserts the first row with its own statement, which names no index_sequence: the default, 0.
    await env.DB.prepare(
      `INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, correlation_id, parent_workflow_id, reason,
         priority, create_time, start_time, end_time, update_time, input, output, failed_reference_task_names, failed_task_names, event)
       VALUES (?1, 'batched', 1, 'RUNNING', NULL, NULL, NULL, 0, 500, 500, 0, 1000, '{}', '{}', '', NULL, NULL)`,
    ).bind(id).run();
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", updateTime: 1_000, tasks: [task("IN_PROGRESS", 1_500)], firstTaskRows: false, indexSequence: 7 }));
    expect(await storedTasks(id)).toEqual([{ status: "IN_PROGRESS", update_time: 1_500, index_sequence: 7 }]);
    // An object still on older code sends no sequence: taken by its updateTime (the same one), as older code takes it,
    // the stored sequence left as it was.
    const { indexSequence: _none, ...older } = row(id, { status: "RUNNING", updateTime: 1_000, tasks: [task("COMPLETED", 1_800)], firstTaskRows: false });
    await indexWriterFor(id).upsert(older);
    expect(await storedTasks(id)).toEqual([{ status: "COMPLETED", update_time: 1_800, index_sequence: 7 }]);
    // The object on newer code again numbers above what it sent before: taken.
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", updateTime: 1_000, tasks: [task("FAILED", 1_900)], firstTaskRows: false, indexSequence: 8 }));
    expect(await storedTasks(id)).toEqual([{ status: "FAILED", update_time: 1_900, index_sequence: 8 }]);
    // A later updateTime is taken whatever the sequence (older code's upsert leaves the stored one, 8, as it is).
    await indexWriterFor(id).upsert({ ...older, status: "COMPLETED", updateTime: 2_000, tasks: [task("COMPLETED", 2_000)] });
    expect(await storedTasks(id)).toEqual([{ status: "COMPLETED", update_time: 2_000, index_sequence: 8 }]);
    await indexWriterFor(id).upsert(row(id, { status: "COMPLETED", updateTime: 2_000, tasks: [task("COMPLETED", 2_000)], firstTaskRows: false, indexSequence: 9 }));
    expect(await storedStatus(id)).toBe("COMPLETED");
    expect(await storedTasks(id)).toEqual([{ status: "COMPLETED", update_time: 2_000, index_sequence: 9 }]);
  });

  it("an execution numbers its row writes upwards, across an eviction too: its next instance's writes are never taken for older ones", async () => {
    const simple = (ref: string) => ({ name: `sequenced_${ref}`, taskReferenceName: ref, type: "SIMPLE", inputParameters: {} });
    await register({ name: "sequenced_rows", tasks: [simple("first"), simple("second")] });
    const sent: Array<number | undefined> = [];
    const { upsert } = ExecutionIndexWriter.prototype;
    let workflowId = "";
    ExecutionIndexWriter.prototype.upsert = async function (this: ExecutionIndexWriter, written) {
      if (written.workflowId === workflowId) sent.push(written.indexSequence);
      return upsert.call(this, written);
    };
    try {
      workflowId = await startWorkflow("sequenced_rows");
      const firstTask = () => env.DB.prepare("SELECT status FROM task_index WHERE workflow_id = ? AND reference_task_name = 'first'").bind(workflowId).first<{ status: string }>();
      const taskShown = (status: string) => eventually(firstTask, (task) => task?.status === status, `the first task ${status} in the index`);
      await taskShown("SCHEDULED");
      await apiOk("POST", `/api/tasks/${workflowId}/first/COMPLETED`, {});
      await taskShown("COMPLETED");
      // Its next instance starts from what was stored: the number of the last write it sent included.
      await abortAllDurableObjects();
      await apiOk("POST", `/api/tasks/${workflowId}/second/COMPLETED`, {});
      await waitForIndexRow(workflowId, "COMPLETED");
    } finally {
      ExecutionIndexWriter.prototype.upsert = upsert;
    }
    // Numbers only go up (one a write sent but lost with an evicted writer would leave a gap, never a repeat): each
    // instance numbers within a block of its own, above the blocks before it.
    const block = 2 ** 20;
    expect(sent.length).toBeGreaterThanOrEqual(3);
    expect(sent[0]).toBe(block);
    expect(sent.every((sequence, index) => index === 0 || sequence! > sent[index - 1]!)).toBe(true);
    expect(sent.at(-1)).toBeGreaterThanOrEqual(2 * block);
    const stored = await env.DB.prepare("SELECT index_sequence FROM executions WHERE workflow_id = ?").bind(workflowId).first<{ index_sequence: number }>();
    expect(stored?.index_sequence).toBe(sent.at(-1));
    // The object stored its block's start once, not each number it sent.
    const storedStart = await runInDurableObject(executionStub(env, workflowId), (_instance, state) =>
      state.storage.sql.exec<{ value: string }>(`SELECT value FROM meta WHERE key = 'indexSequence'`).one().value,
    );
    expect(Number(storedStart)).toBe(Math.floor(sent.at(-1)! / block) * block);
  });

  it("a row without the event (from code older than the column, mid-deploy) keeps the event an earlier row wrote: it never changes", async () => {
    const id = crypto.randomUUID();
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", updateTime: 1_000, event: "conductor:orders:started" }));
    // Older code's row: no event field at all. The same updateTime (a task-level change) and a later one alike.
    const { event: _none, ...older } = row(id, { status: "RUNNING", updateTime: 1_000 });
    await indexWriterFor(id).upsert(older);
    await indexWriterFor(id).upsert({ ...older, status: "COMPLETED", updateTime: 2_000 });
    const stored = await env.DB.prepare("SELECT status, event FROM executions WHERE workflow_id = ?").bind(id).first<{ status: string; event: string | null }>();
    expect(stored).toEqual({ status: "COMPLETED", event: "conductor:orders:started" });
  });

  it("a restart's row shows the restart's createTime, as the execution does (the row kept the first start's)", async () => {
    const name = `restart_create_${crypto.randomUUID().slice(0, 8)}`;
    await register({ name, tasks: [httpTask("a", { uri: target("/echo/restart-create"), method: "GET" })] });
    const workflowId = await startWorkflow(name);
    await waitFor(workflowId, ["COMPLETED"]);
    await waitForIndexRow(workflowId, "COMPLETED");
    const first = (await getWorkflow(workflowId))["createTime"] as number;
    // A restart in a later millisecond than the start: its createTime is the restart's.
    await eventually(async () => Date.now(), (now) => now > first + 5, "a later millisecond");
    expect((await api("POST", `/api/workflow/${workflowId}/restart`)).status).toBe(204);
    await waitFor(workflowId, ["COMPLETED"]);
    const restarted = (await getWorkflow(workflowId))["createTime"] as number;
    expect(restarted).toBeGreaterThan(first);
    const indexed = () => env.DB.prepare("SELECT create_time, status, update_time FROM executions WHERE workflow_id = ?").bind(workflowId).first<{ create_time: number; status: string; update_time: number }>();
    const row = await eventually(indexed, (found) => found?.status === "COMPLETED" && found.update_time >= restarted, "the restart's search row");
    expect(row?.create_time).toBe(restarted);
    const byId = encodeURIComponent(`workflowId = '${workflowId}'`);
    const found = await apiOk<{ results: Array<{ createTime: number }> }>("GET", `/api/workflow/search?query=${byId}`);
    expect(found.results.map((summary) => summary.createTime)).toEqual([restarted]);
  });

  it("removing an execution right after it ends leaves no search row behind", async () => {
    await register({ name: "ends_then_removed", tasks: [httpTask("only", { uri: target("/echo/ends-then-removed"), method: "GET" })] });
    const workflowId = await startWorkflow("ends_then_removed");
    await waitFor(workflowId, ["COMPLETED"]);
    // Its final row is still queued in the writer (it waits for others); the removal must not overtake it.
    await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
    // Writes leave the writer in order: once a later write is through, the execution's own are too.
    const sentinel = crypto.randomUUID();
    await indexWriterFor(workflowId).upsert(row(sentinel));
    expect(await storedStatus(workflowId)).toBeUndefined();
    expect((await api("GET", `/api/workflow/${workflowId}`)).status).toBe(404);
  });

  it("a removal waits for the row write on its way, then writes the row still owed, then deletes: nothing reappears, the execution is counted", async () => {
    await register({ name: "removed_while_first_row", tasks: [httpTask("gate", { uri: target("/echo/removed-while-first-row"), method: "GET" }, { asyncComplete: true })] });
    const workflowId = await startWorkflow("removed_while_first_row");
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    // The writer holds its answer to the first (RUNNING) row, then refuses it: the execution completes and its removal
    // begins while that write is on its way, and the removal finds the COMPLETED row still owed once it has failed.
    const firstRow = gate();
    const calls: string[] = [];
    // RPC finds the writer's methods on its class: patched there for this test only, and only for this execution.
    const { upsert, delete: remove } = ExecutionIndexWriter.prototype;
    ExecutionIndexWriter.prototype.upsert = async function (this: ExecutionIndexWriter, written) {
      if (written.workflowId !== workflowId) return upsert.call(this, written);
      calls.push(`upsert ${written.status}`);
      if (written.status !== "RUNNING") return upsert.call(this, written);
      firstRow.hit();
      await firstRow.released;
      return { ok: false, error: "refused by the test" };
    };
    ExecutionIndexWriter.prototype.delete = async function (this: ExecutionIndexWriter, id, key) {
      if (id === workflowId) calls.push("delete");
      return remove.call(this, id, key);
    };
    try {
      await firstRow.reached;
      await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
      const removal = apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
      // The removal is flagged in the turn that goes on to wait for the write on its way: nothing was deleted yet.
      await eventually(() => storedByExecutionObject(workflowId), (stored) => stored.metaKeys.includes("removing"), "the removal begun", 5_000);
      expect(calls).toEqual(["upsert RUNNING"]);
      firstRow.release();
      await removal;
      // The COMPLETED row (the execution's first, counting its start and its ending) goes before the delete.
      expect(calls).toEqual(["upsert RUNNING", "upsert COMPLETED", "delete"]);
    } finally {
      ExecutionIndexWriter.prototype.upsert = upsert;
      ExecutionIndexWriter.prototype.delete = remove;
      firstRow.release();
    }
    expect((await api("GET", `/api/workflow/${workflowId}`)).status).toBe(404);
    expect(await storedStatus(workflowId)).toBeUndefined();
    const { results } = await env.DB.prepare(`SELECT metric, status, count FROM metric_counts WHERE name = 'removed_while_first_row' AND metric LIKE 'workflow_%' ORDER BY metric`).all();
    expect(results).toEqual([
      { metric: "workflow_completed", status: "COMPLETED", count: 1 },
      { metric: "workflow_started", status: "", count: 1 },
    ]);
  });

  it("a row write landing after its execution's removal (a writer reset with its batch on its way) puts nothing back in search, task search or the human task list, nor counts again", async () => {
    await register({ name: "removed_then_late_row", tasks: [{ name: "removed_then_late_review", taskReferenceName: "review", type: "HUMAN" }] });
    const sent: IndexRow[] = [];
    const { upsert } = ExecutionIndexWriter.prototype;
    let workflowId = "";
    ExecutionIndexWriter.prototype.upsert = async function (this: ExecutionIndexWriter, written) {
      if (written.workflowId === workflowId) sent.push(structuredClone(written));
      return upsert.call(this, written);
    };
    try {
      workflowId = await startWorkflow("removed_then_late_row");
      await waitForIndexRow(workflowId, "RUNNING");
      // Removing a running execution terminates it first: its TERMINATED row, then the delete.
      await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
    } finally {
      ExecutionIndexWriter.prototype.upsert = upsert;
    }
    const counted = () => env.DB.prepare(`SELECT metric, status, count FROM metric_counts WHERE name = 'removed_then_late_row' ORDER BY metric, status`).all().then((all) => all.results);
    const countedBefore = await counted();
    // The RUNNING row, sent by a writer that was reset before D1 answered, D1 running it only now; the TERMINATED row
    // likewise (a removal sends the execution's last row before its delete, and may itself be tried again).
    const [running, terminated] = [sent.find((row) => row.status === "RUNNING")!, sent.find((row) => row.status === "TERMINATED")!];
    expect(running.humanTasks).toHaveLength(1);
    for (const late of [running, terminated]) expect(await indexWriterFor(workflowId).upsert(late)).toMatchObject({ ok: true });
    expect(await storedStatus(workflowId)).toBeUndefined();
    const byId = encodeURIComponent(`workflowId = '${workflowId}'`);
    expect((await apiOk<{ totalHits: number }>("GET", `/api/workflow/search?query=${byId}`)).totalHits).toBe(0);
    expect((await apiOk<{ totalHits: number }>("GET", `/api/tasks/search?query=${byId}`)).totalHits).toBe(0);
    expect((await apiOk<{ totalHits: number }>("POST", "/api/human/tasks/search", { searchType: "ADMIN", workflowIds: [workflowId] })).totalHits).toBe(0);
    for (const table of ["task_index", "human_tasks", "webhook_waits"]) {
      expect(await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE workflow_id = ?`).bind(workflowId).first("n")).toBe(0);
    }
    expect(await counted()).toEqual(countedBefore);
    expect((await api("GET", `/api/workflow/${workflowId}`)).status).toBe(404);
  });

  it("a row write of an execution reset with it on its way, reaching the writer after the next instance removed the execution, is refused", async () => {
    await register({ name: "reset_then_removed", tasks: [{ name: "reset_then_removed_review", taskReferenceName: "review", type: "HUMAN" }] });
    // The first row write of the execution is held on its way to the writer (the network between the two objects)
    // until the execution's object has been reset and its next instance has removed the execution.
    const onItsWay = gate();
    let late: Promise<IndexWriteOutcome> | undefined;
    let workflowId = "";
    const { upsert } = ExecutionIndexWriter.prototype;
    ExecutionIndexWriter.prototype.upsert = async function (this: ExecutionIndexWriter, written) {
      if (written.workflowId !== workflowId || late !== undefined) return upsert.call(this, written);
      late = onItsWay.released.then(() => upsert.call(this, written));
      onItsWay.hit();
      return late;
    };
    try {
      workflowId = await startWorkflow("reset_then_removed");
      await onItsWay.reached;
      await runInDurableObject(executionStub(env, workflowId), (_instance, state) => state.abort("reset by the test")).catch(() => undefined);
      // Its next instance knows of no write in this isolate to wait for: it writes the row it owes, then deletes.
      await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
      onItsWay.release();
      // D1 took the write (it changed nothing): the writer answers as for any row.
      expect(await late).toMatchObject({ ok: true });
    } finally {
      ExecutionIndexWriter.prototype.upsert = upsert;
      onItsWay.release();
    }
    expect(await storedStatus(workflowId)).toBeUndefined();
    const byId = encodeURIComponent(`workflowId = '${workflowId}'`);
    expect((await apiOk<{ totalHits: number }>("GET", `/api/workflow/search?query=${byId}`)).totalHits).toBe(0);
    expect((await api("GET", `/api/workflow/${workflowId}`)).status).toBe(404);
  });

  it("a removal's tombstone refuses only rows of the removed execution: one started later under the same id is indexed", async () => {
    const id = crypto.randomUUID();
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", createTime: 1_000, updateTime: 1_000 }));
    // Restarted at 2 000 (a restart makes the execution's createTime the restart's), then removed.
    expect(await indexWriterFor(id).delete(id, undefined, 2_000)).toMatchObject({ ok: true });
    for (const createTime of [1_000, 2_000]) {
      await indexWriterFor(id).upsert(row(id, { status: "COMPLETED", createTime, updateTime: 3_000, indexSequence: 9 }));
      expect(await storedStatus(id)).toBeUndefined();
    }
    // An execution started under the id after the removal (an event's start derives its id from the event, and the
    // removed object forgets its own tombstone after an hour): created later, so its rows land.
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", createTime: 4_000, updateTime: 4_000, indexSequence: 1 }));
    expect(await storedStatus(id)).toBe("RUNNING");
  });

  it("a removal by older code (no create time, mid-deploy) leaves a tombstone refusing every row created before it", async () => {
    const id = crypto.randomUUID();
    const created = Date.now();
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", createTime: created, updateTime: created }));
    expect(await indexWriterFor(id).delete(id)).toMatchObject({ ok: true });
    await indexWriterFor(id).upsert(row(id, { status: "COMPLETED", createTime: created, updateTime: created + 1 }));
    expect(await storedStatus(id)).toBeUndefined();
  });

  it("tombstones are pruned a day after their removal, by a later batch that removes an execution; a batch of rows alone adds no statement", async () => {
    const [stale, fresh, removed] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const insert = env.DB.prepare(`INSERT INTO removed_executions (workflow_id, create_time, removed_at) VALUES (?, 0, ?)`);
    await env.DB.batch([insert.bind(stale, Date.now() - REMOVED_TOMBSTONE_KEEP_MS - 60_000), insert.bind(fresh, Date.now() - REMOVED_TOMBSTONE_KEEP_MS + 60_000)]);
    const tombstoned = async (id: string) => (await env.DB.prepare(`SELECT 1 FROM removed_executions WHERE workflow_id = ?`).bind(id).first()) !== null;
    await indexWriterFor(removed).upsert(row(removed));
    expect(await tombstoned(stale)).toBe(true);
    await indexWriterFor(removed).delete(removed, undefined, Date.now());
    expect([await tombstoned(stale), await tombstoned(fresh), await tombstoned(removed)]).toEqual([false, true, true]);
    const rowsAlone = indexBatchStatements(env.DB, [{ kind: "upsert", row: row(stale) }]);
    expect(rowsAlone).toHaveLength(1 + indexRowStatements(env.DB, row(stale)).length);
  });

  it("a removal's batch prunes a bounded number of tombstones, the oldest first: a backlog goes over the removals that follow", async () => {
    // A bulk removal a day ago and none since: the next removal's batch (one D1 transaction) must not delete them all.
    const backlog = REMOVED_TOMBSTONE_PRUNE_LIMIT + 50;
    const dayAgo = Date.now() - REMOVED_TOMBSTONE_KEEP_MS - 60_000;
    const prefix = `backlog-${crypto.randomUUID()}-`;
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       INSERT INTO removed_executions (workflow_id, create_time, removed_at) SELECT ?2 || i, 0, ?3 - i FROM n`,
    ).bind(backlog, prefix, dayAgo).run();
    const staleLeft = async () => (await env.DB.prepare(`SELECT COUNT(*) AS n FROM removed_executions WHERE removed_at < ?`).bind(dayAgo + 1).first<number>("n"))!;
    const oldestLeft = () => env.DB.prepare(`SELECT MIN(removed_at) AS at FROM removed_executions WHERE workflow_id LIKE ? || '%'`).bind(prefix).first<number>("at");
    const before = await staleLeft();
    const [first, second] = [crypto.randomUUID(), crypto.randomUUID()];
    expect(await indexWriterFor(first).delete(first, undefined, Date.now())).toMatchObject({ ok: true });
    expect(await staleLeft()).toBe(before - REMOVED_TOMBSTONE_PRUNE_LIMIT);
    // The oldest went: those left are the newest 50 of the backlog (removed at dayAgo - 1 ... dayAgo - 50).
    expect(await oldestLeft()).toBe(dayAgo - 50);
    expect(await indexWriterFor(second).delete(second, undefined, Date.now())).toMatchObject({ ok: true });
    expect(await oldestLeft()).toBeNull();
  });

  it("the tombstone check of a row write and of its counting looks a tombstone up by its primary key", async () => {
    const id = crypto.randomUUID();
    const plan = async (statement: D1PreparedStatement) => {
      const { statement: sql, params } = statement as unknown as { statement: string; params: unknown[] };
      return (await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...params).all<{ detail: string }>()).results.map((step) => step.detail).join("; ");
    };
    const [counting, upsert] = indexBatchStatements(env.DB, [{ kind: "upsert", row: row(id) }]);
    for (const statement of [counting!, upsert!]) expect(await plan(statement)).toContain("SEARCH removed_executions USING PRIMARY KEY (workflow_id=?)");
    expect(await plan(pruneRemovedTombstones(env.DB, Date.now()))).toContain("removed_executions_by_time");
  });

  it("a pause, resume and pause while the first pause's row is on its way leave the row with the workflow's last updateTime", async () => {
    await register({ name: "pause_resume_pause_row", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] });
    const workflowId = await startWorkflow("pause_resume_pause_row");
    await waitForIndexRow(workflowId, "RUNNING");
    // The writer holds its answer to the first PAUSED row until the resume and the second pause are through.
    const pausedRow = gate();
    const { upsert } = ExecutionIndexWriter.prototype;
    let held = false;
    ExecutionIndexWriter.prototype.upsert = async function (this: ExecutionIndexWriter, written) {
      const outcome = await upsert.call(this, written);
      if (written.workflowId === workflowId && written.status === "PAUSED" && !held) {
        held = true;
        pausedRow.hit();
        await pausedRow.released;
      }
      return outcome;
    };
    try {
      await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
      await pausedRow.reached;
      // Distinct updateTimes: the clock moves on between requests.
      await new Promise((resolve) => setTimeout(resolve, 5));
      await apiOk("PUT", `/api/workflow/${workflowId}/resume`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
      pausedRow.release();
      const workflow = await getWorkflow(workflowId);
      expect(workflow.status).toBe("PAUSED");
      const read = () => env.DB.prepare("SELECT status, update_time FROM executions WHERE workflow_id = ?").bind(workflowId).first<{ status: string; update_time: number }>();
      const row = await eventually(read, (stored) => stored?.update_time === workflow["updateTime"], "the search row showing the last pause", 2_000).catch(() => read());
      expect({ status: row?.status, updateTime: row?.update_time }).toEqual({ status: "PAUSED", updateTime: workflow["updateTime"] });
    } finally {
      ExecutionIndexWriter.prototype.upsert = upsert;
      pausedRow.release();
    }
  });

  it("an execution keeps its writer when INDEX_WRITER_SHARDS changes, so its removal still comes after its last row", async () => {
    await register({ name: "resharded_then_removed", tasks: [httpTask("only", { uri: target("/echo/resharded-then-removed"), method: "GET" })] });
    const workflowId = await startWorkflow("resharded_then_removed");
    await waitFor(workflowId, ["COMPLETED"]);
    const pinned = indexShardFor(env, workflowId);
    // Stored with the start, so the pin outlives an eviction.
    const stored = await runInDurableObject(executionStub(env, workflowId), (_instance, state) =>
      state.storage.sql.exec<{ value: string }>(`SELECT value FROM meta WHERE key = 'indexShard'`).toArray(),
    );
    expect(stored).toEqual([{ value: String(pinned) }]);
    // A deploy changes the setting while the final row is still queued: pick a count that moves this execution.
    const prefix = Number.parseInt(workflowId.slice(0, 8), 16);
    const shards = Array.from({ length: 62 }, (_, i) => i + 2).find((count) => prefix % count !== pinned)!;
    const config = await runInDurableObject(executionStub(env, workflowId), (instance) => serviceConfig((instance as unknown as { env: Env }).env));
    const before = config.indexWriterShards;
    config.indexWriterShards = shards;
    try {
      await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
    } finally {
      config.indexWriterShards = before;
    }
    // Once a later write is through the writer the execution started with, its queued final row is too.
    await indexWriterAt(env, pinned).delete(crypto.randomUUID());
    expect(await storedStatus(workflowId)).toBeUndefined();
  });
});
