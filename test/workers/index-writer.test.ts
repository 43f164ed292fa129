import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { IndexRow } from "../../src/actors/execution-index";
import { ExecutionIndexWriter, INDEX_MAX_BATCH, indexShardFor, indexWriterAt } from "../../src/actors/index-writer";
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
    const task = (status: string, updateTime: number) => ({
      taskId: `${id}-t1`, taskType: "SIMPLE", taskDefName: "work", referenceTaskName: "work", status, domain: null, workerId: null, reason: null,
      scheduledTime: 500, startTime: 500, endTime: status === "COMPLETED" ? updateTime : 0, updateTime, input: "{}", output: "{}",
    });
    await indexWriterFor(id).upsert(row(id, { status: "COMPLETED", updateTime: 2_000, tasks: [task("COMPLETED", 2_000)] }));
    // The older row (a writer reset with its batch still on its way, say): its search row changed nothing, but its task
    // rows replaced the newer ones, so a task search showed the completed task IN_PROGRESS.
    await indexWriterFor(id).upsert(row(id, { status: "RUNNING", updateTime: 1_000, tasks: [task("IN_PROGRESS", 1_000)], firstTaskRows: false }));
    expect(await storedStatus(id)).toBe("COMPLETED");
    const taskRow = await env.DB.prepare("SELECT status, update_time FROM task_index WHERE workflow_id = ?").bind(id).all<{ status: string; update_time: number }>();
    expect(taskRow.results).toEqual([{ status: "COMPLETED", update_time: 2_000 }]);
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
