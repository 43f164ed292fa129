import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { serviceConfig } from "../../src/worker/config";
import { executionStub } from "../../src/worker/executions";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, storedByExecutionObject, target, waitFor, waitForIndexRow } from "./helpers";

const DAY_MS = 24 * 60 * 60 * 1000;

/** The alarm the execution's object has set (epoch ms), or null. */
function alarmOf(workflowId: string): Promise<number | null> {
  return runInDurableObject(executionStub(env, workflowId), (_instance, state) => state.storage.getAlarm());
}

async function searchRowOf(workflowId: string): Promise<unknown> {
  return env.DB.prepare("SELECT status FROM executions WHERE workflow_id = ?").bind(workflowId).first();
}

async function statusOf(workflowId: string): Promise<number> {
  return (await api("GET", `/api/workflow/${workflowId}`)).status;
}

/** A workflow whose only task waits until the test completes it by reference. */
function waitingDefinition(name: string, extra: Record<string, unknown> = {}) {
  return { name, tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT" }], ...extra };
}

describe("retention", () => {
  it("removes a finished execution, its search row and its idempotency key once its definition's retentionSeconds have passed", async () => {
    await register({ name: "kept_one_second", retentionSeconds: 1, tasks: [httpTask("only", { uri: target("/count/retention-removed"), method: "GET" })] });
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "kept_one_second", idempotencyKey: "retention-key", idempotencyStrategy: "RETURN_EXISTING" });
    const finished = await waitFor(workflowId, ["COMPLETED"]);
    await waitForIndexRow(workflowId, "COMPLETED");
    // Once its search row is written it owes nothing more: the alarm waits for the end of its retention.
    await eventually(() => alarmOf(workflowId), (at) => at === Number(finished["endTime"]) + 1_000, "the alarm set for the end of the retention");
    expect(finished["removalTime"]).toBe(Number(finished["endTime"]) + 1_000);

    await eventually(() => statusOf(workflowId), (status) => status === 404, "the execution's removal", 10_000);
    await eventually(() => searchRowOf(workflowId), (row) => row === null, "the search row's deletion");
    await eventually(() => storedByExecutionObject(workflowId), (left) => left.executionRows === 0 && left.metaKeys.join() === "removed", "the removal's storage deletion");
    // The key went with it: the same request now starts a new execution, which runs the task again.
    const again = await apiOk<string>("POST", "/api/workflow", { name: "kept_one_second", idempotencyKey: "retention-key", idempotencyStrategy: "RETURN_EXISTING" });
    expect(again).not.toBe(workflowId);
    await waitFor(again, ["COMPLETED"]);
    expect(await hits("retention-removed")).toBe(2);
  });

  it("never removes an execution that runs again: retried before its retention passed, it is kept and counts again from its new end", async () => {
    await register(waitingDefinition("kept_then_retried", { retentionSeconds: 1 }));
    const workflowId = await startWorkflow("kept_then_retried");
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${workflowId}/hold/FAILED`, { why: "first run" });
    const failed = await waitFor(workflowId, ["FAILED"]);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    const retried = await waitFor(workflowId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    expect(failed["removalTime"]).toBe(Number(failed["endTime"]) + 1_000);
    expect("removalTime" in retried).toBe(false);
    // Past the first end's retention, whatever alarm the object has set (the first end's, if it is still there) runs.
    const firstDue = Number(failed["endTime"]) + 1_000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstDue - Date.now()) + 200));
    await runDurableObjectAlarm(executionStub(env, workflowId));
    expect((await getWorkflow(workflowId)).status).toBe("RUNNING");

    await apiOk("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, { why: "second run" });
    const completed = await waitFor(workflowId, ["COMPLETED"]);
    await eventually(() => alarmOf(workflowId), (at) => at === Number(completed["endTime"]) + 1_000, "the alarm set from the new end");
    await eventually(() => statusOf(workflowId), (status) => status === 404, "the execution's removal", 10_000);
  });

  it("keeps a child after its parent's removal until its own retention passes, and tells the parent it finished first", async () => {
    await register(waitingDefinition("retained_child", { retentionSeconds: 3600 }));
    await register({
      name: "retained_parent",
      retentionSeconds: 1,
      tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: {}, subWorkflowParam: { name: "retained_child" } }],
    });
    const parentId = await startWorkflow("retained_parent");
    const running = await waitFor(parentId, (workflow) => typeof workflow.tasks[0]?.outputData["subWorkflowId"] === "string");
    const childId = String(running.tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/hold/COMPLETED`, {});
    await waitFor(parentId, ["COMPLETED"]);
    await eventually(() => statusOf(parentId), (status) => status === 404, "the parent's removal", 10_000);
    const child = await getWorkflow(childId);
    expect(child.status).toBe("COMPLETED");
    expect(await alarmOf(childId)).toBe(Number(child["endTime"]) + 3_600_000);
  });

  it("follows EXECUTION_RETENTION for a definition without retentionSeconds, and retentionSeconds: 0 keeps executions whatever it says", async () => {
    await register({ name: "kept_by_default", tasks: [httpTask("only", { uri: target("/echo/retention-default"), method: "GET" })] });
    await register({ name: "kept_for_good", retentionSeconds: 0, tasks: [httpTask("only", { uri: target("/echo/retention-for-good"), method: "GET" })] });
    // The setting is read once per isolate: changed here, in the objects' isolate, for this test (a day, so nothing
    // of another test is removed).
    const config = await runInDurableObject(executionStub(env, crypto.randomUUID()), (instance) => serviceConfig((instance as unknown as { env: Env }).env));
    const before = config.executionRetentionMs;
    config.executionRetentionMs = DAY_MS;
    try {
      const byDefault = await startWorkflow("kept_by_default");
      const forGood = await startWorkflow("kept_for_good");
      const ended = await waitFor(byDefault, ["COMPLETED"]);
      expect(ended["removalTime"]).toBe(Number(ended["endTime"]) + DAY_MS);
      expect("removalTime" in (await waitFor(forGood, ["COMPLETED"]))).toBe(false);
      await eventually(() => alarmOf(byDefault), (at) => at === Number(ended["endTime"]) + DAY_MS, "the default retention's alarm");
      await waitForIndexRow(forGood, "COMPLETED");
      await eventually(() => alarmOf(forGood), (at) => at === null, "the alarm cleared once nothing more is owed");
    } finally {
      config.executionRetentionMs = before;
    }
  });

  it("refuses a retentionSeconds that is not a whole number of seconds from 0, and stores nothing", async () => {
    for (const retentionSeconds of [-1, 2.5, "30d"]) {
      const response = await api("POST", "/api/metadata/workflow", { ...waitingDefinition("badly_kept"), retentionSeconds, schemaVersion: 2, ownerEmail: "test@example.com" });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { validationErrors: Array<{ path: string; message: string }> };
      expect(body.validationErrors).toEqual([{ path: "retentionSeconds", message: expect.stringMatching(/^retentionSeconds must be a whole number of seconds from 0/) }]);
    }
    expect((await api("GET", "/api/metadata/workflow/badly_kept")).status).toBe(404);
  });
  it("a bulk remove leaves nothing naming the execution in any D1 table but its tombstone, nor in its object but the hour's tombstone", async () => {
    await register({
      name: "removed_whole",
      tasks: [
        {
          name: "fork",
          taskReferenceName: "fork",
          type: "FORK_JOIN",
          forkTasks: [
            [{ name: "approve", taskReferenceName: "approve", type: "HUMAN", inputParameters: {} }],
            [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: { matches: { "$['order']": "removed-whole" } } }],
            [{ name: "removed_whole_worker", taskReferenceName: "work", type: "SIMPLE" }],
          ],
        },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["approve", "hook", "work"] },
      ],
    });
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "removed_whole", idempotencyKey: "removed-whole-key", correlationId: "removed-whole" });
    await waitFor(workflowId, (workflow) => workflow.tasks.length === 5);
    await waitForIndexRow(workflowId, "RUNNING");
    // Every table, every column: a table added later that removal forgets is found too.
    const tables = (await env.DB.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_cf%' ESCAPE '\\' AND name NOT LIKE 'd1_%'`).all<{ name: string }>()).results;
    const naming = async () => {
      const found: string[] = [];
      for (const { name: table } of tables) {
        const columns = (await env.DB.prepare(`SELECT name FROM pragma_table_info(?)`).bind(table).all<{ name: string }>()).results;
        for (const { name: column } of columns) {
          const rows = await env.DB.prepare(`SELECT COUNT(*) AS n FROM "${table}" WHERE instr(CAST("${column}" AS TEXT), ?) > 0`).bind(workflowId).first<{ n: number }>();
          if (rows!.n > 0) found.push(`${table}.${column}`);
        }
      }
      return found.sort();
    };
    expect(await naming()).toEqual(expect.arrayContaining(["executions.workflow_id", "human_tasks.workflow_id", "idempotency_keys.workflow_id", "task_index.workflow_id", "webhook_waits.workflow_id"]));

    expect(await apiOk("DELETE", "/api/workflow/bulk/remove", [workflowId])).toMatchObject({ bulkSuccessfulResults: [workflowId] });
    expect(await statusOf(workflowId)).toBe(404);
    // The tombstone refusing late search-row writes, pruned after a day.
    expect(await naming()).toEqual(["removed_executions.workflow_id"]);
    expect(await storedByExecutionObject(workflowId)).toEqual({ executionRows: 0, metaKeys: ["removed"] });
    expect(await alarmOf(workflowId)).toBeGreaterThan(Date.now());
    expect(await apiOk("GET", "/api/tasks/queue/sizes?taskType=removed_whole_worker")).toEqual({ removed_whole_worker: 0 });
  });
});
