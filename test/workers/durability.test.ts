import { abortAllDurableObjects, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ExecutionStore } from "../../src/actors/execution-store";
import { TaskQueue } from "../../src/actors/task-queue";
import { createExecution } from "../../src/engine/decider";
import type { JsonObject, TaskExecution, WorkflowDef, WorkflowExecution } from "../../src/engine/model";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, waitForIndexRow } from "./helpers";

const stubFor = (workflowId: string) => env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(workflowId));

/** Waits until the target has seen `count` hits for `key` (bounded). */
async function untilHits(key: string, count: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await hits(key)) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`target never saw ${count} hits for ${key}`);
}

describe("eviction", () => {
  it("an HTTP call in flight when the object is evicted is dispatched again by the next request, and the workflow completes", async () => {
    await register({
      name: "evict_request",
      tasks: [httpTask("before", { uri: target("/count/evict-req-before"), method: "GET" }), httpTask("slow", { uri: target("/count/evict-req-slow?delay=2000"), method: "GET" }), httpTask("after", { uri: target("/count/evict-req-after"), method: "GET" })],
      outputParameters: { slowN: "${slow.output.body.n}" },
    });
    const workflowId = await startWorkflow("evict_request");
    await untilHits("evict-req-slow", 1);
    await abortAllDurableObjects();
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    // The step that was in flight ran again (at-least-once); the others exactly once.
    expect(await hits("evict-req-before")).toBe(1);
    expect(await hits("evict-req-slow")).toBe(2);
    expect(await hits("evict-req-after")).toBe(1);
    expect(done.output).toEqual({ slowN: 2 });
    expect(done.tasks.map((task) => task.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
  });

  it("terminating a workflow whose HTTP call was lost in an eviction does not send that call again", async () => {
    await register({ name: "evict_terminate", tasks: [httpTask("slow", { uri: target("/count/evict-terminate?delay=3000"), method: "POST", body: { charge: 100 } })] });
    const workflowId = await startWorkflow("evict_terminate");
    await untilHits("evict-terminate", 1);
    await abortAllDurableObjects();
    // The terminate is the first request after the eviction: it re-dispatches the lost call, then cancels it at once.
    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=stop`);
    expect((await getWorkflow(workflowId)).status).toBe("TERMINATED");
    // A call sent anyway would arrive within milliseconds; give it ample time to show up.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await hits("evict-terminate")).toBe(1);
  });

  it("completing an asyncComplete HTTP task from outside right after an eviction does not send its request again", async () => {
    await register({
      name: "evict_complete",
      tasks: [httpTask("slow", { uri: target("/count/evict-complete?delay=3000"), method: "POST", body: { x: 1 } }, { asyncComplete: true })],
    });
    const workflowId = await startWorkflow("evict_complete");
    await untilHits("evict-complete", 1);
    await abortAllDurableObjects();
    await apiOk("POST", `/api/tasks/${workflowId}/slow/COMPLETED`, { done: true });
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await hits("evict-complete")).toBe(1);
  });

  it("with no request after the eviction, the alarm resumes the lost call", async () => {
    await register({ name: "evict_alarm", tasks: [httpTask("slow", { uri: target("/count/evict-alarm?delay=300"), method: "GET" })] });
    const workflowId = await startWorkflow("evict_alarm");
    await untilHits("evict-alarm", 1);
    await abortAllDurableObjects();
    // The watchdog alarm is armed for the attempt; fire it now instead of waiting for its deadline.
    expect(await runDurableObjectAlarm(stubFor(workflowId))).toBe(true);
    await untilHits("evict-alarm", 2);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(await hits("evict-alarm")).toBe(2);
  });

  it("a delayed retry survives eviction and fires from the alarm on time", async () => {
    await register({
      name: "retry_timer",
      tasks: [httpTask("flaky", { uri: target("/flaky/retry-timer?fail=1"), method: "GET" }, { retryCount: 1, retryDelaySeconds: 1 })],
    });
    const workflowId = await startWorkflow("retry_timer");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks.length === 2);
    const [failed, scheduled] = waiting.tasks;
    expect(failed!.status).toBe("FAILED");
    expect(scheduled!.status).toBe("SCHEDULED");
    expect(Number(scheduled!["scheduledTime"]) - Number(failed!["endTime"])).toBeGreaterThanOrEqual(1000);
    await abortAllDurableObjects();
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"], 5_000);
    expect(done.status).toBe("COMPLETED");
    expect(Number(done.tasks[1]!["startTime"])).toBeGreaterThanOrEqual(Number(scheduled!["scheduledTime"]));
    expect(await hits("retry-timer")).toBe(2);
  });

  it("a new execution's search row is written even when its object is evicted before the row's delay", async () => {
    await register({ name: "index_after_eviction", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] });
    const workflowId = await startWorkflow("index_after_eviction");
    // The first row waits in an in-memory timer, which dies here; only the object's alarm can write it now.
    await abortAllDurableObjects();
    await waitForIndexRow(workflowId, "RUNNING", 15_000);
  });

  it("a workflow timeout fires from the alarm even after eviction", async () => {
    await register({
      name: "wf_timeout",
      timeoutSeconds: 1,
      timeoutPolicy: "TIME_OUT_WF",
      tasks: [httpTask("wait", { uri: target("/echo/wf-timeout"), method: "GET" }, { asyncComplete: true })],
    });
    const workflowId = await startWorkflow("wf_timeout");
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await abortAllDurableObjects();
    const deadline = Date.now() + 5_000;
    // Poll the object only through its alarm: read D1's index, which the alarm's tick updates.
    let row: { status: string } | null = null;
    while (Date.now() < deadline) {
      row = await env.DB.prepare("SELECT status FROM executions WHERE workflow_id = ?").bind(workflowId).first<{ status: string }>();
      if (row?.status === "TIMED_OUT") break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(row?.status).toBe("TIMED_OUT");
    const workflow = await getWorkflow(workflowId);
    expect(workflow.status).toBe("TIMED_OUT");
    // Conductor's reason, as its "Debugging workflows" guide lists it (the elapsed seconds are the alarm's, not asserted):
    // https://conductor-oss.github.io/conductor/devguide/how-tos/Workflows/debugging-workflows.html#understanding-reasonforincompletion
    expect(workflow["reasonForIncompletion"]).toMatch(/^Workflow timed out after \d+ seconds\. Timeout configured as 1 seconds\. Timeout policy configured to TIME_OUT_WF$/);
    expect(workflow.tasks[0]!.status).toBe("CANCELED");
  });

  it("a test run's queue still to delist when its object is evicted is delisted by the alarm", async () => {
    await register({ name: "evict_test_queue", tasks: [{ name: "evict_test_queue_work", taskReferenceName: "work", type: "SIMPLE", inputParameters: {} }] });
    const run = await apiOk<{ workflowId: string; tasks: JsonObject[] }>("POST", "/api/workflow/test", { name: "evict_test_queue" });
    const own = `${String(run.tasks[0]!["domain"])}:evict_test_queue_work`;
    const queues = () => apiOk<Record<string, number>>("GET", "/api/tasks/queue/all");
    await eventually(queues, (sizes) => sizes[own] === 1, "the run's queue listed");
    // The delisting its ending owes fails until the object is evicted: only what it stored is left to make it.
    const { delist } = TaskQueue.prototype;
    let calls = 0;
    TaskQueue.prototype.delist = async function () {
      calls++;
      throw new Error("D1 unreachable");
    };
    try {
      await apiOk("DELETE", `/api/workflow/${run.workflowId}`);
      await eventually(async () => calls, (n) => n >= 1, "a delisting tried");
      await abortAllDurableObjects();
    } finally {
      TaskQueue.prototype.delist = delist;
    }
    expect((await queues())[own]).toBe(0);
    expect(await runDurableObjectAlarm(stubFor(run.workflowId))).toBe(true);
    await eventually(queues, (sizes) => !(own in sizes), "the run's queue delisted by the alarm");
  });
});

describe("an object being reset", () => {
  it("an alarm write that fails (the runtime resetting the object) leaves no unhandled rejection behind", async () => {
    await register({ name: "reset_alarm_write", tasks: [{ name: "wait", taskReferenceName: "wait", type: "WAIT", inputParameters: { duration: "1 hour" } }] });
    const workflowId = await startWorkflow("reset_alarm_write");
    // The alarm re-arms itself without waiting for the write; here that write fails, as it does in an object aborted or
    // reset meanwhile. Vitest fails the run on the unhandled rejection that used to follow.
    const failedWrites = await runInDurableObject(stubFor(workflowId), async (instance, state) => {
      const storage = state.storage;
      const setAlarm = storage.setAlarm.bind(storage);
      let calls = 0;
      storage.setAlarm = (() => {
        calls++;
        return Promise.reject(new Error("the object is being reset"));
      }) as typeof storage.setAlarm;
      try {
        await instance.alarm?.();
        await new Promise((resolve) => setTimeout(resolve, 20));
      } finally {
        storage.setAlarm = setAlarm;
      }
      return calls;
    });
    expect(failedWrites).toBe(1);
    expect((await getWorkflow(workflowId)).status).toBe("RUNNING");
  });
});

describe("the test harness", () => {
  // Without test/workers/setup.ts writing the console straight to workerd's, a message logged by an object as it is
  // aborted is never delivered, and this file never finishes (the run hangs until CI's timeout cuts it off).
  it("what an object logs as it is aborted is printed, and does not keep the file from finishing", async () => {
    const logged: string[] = [];
    const error = console.error;
    console.error = (...args: unknown[]) => {
      logged.push(String(args[0]));
      error(...args);
    };
    try {
      for (let attempt = 0; attempt < 20; attempt++) {
        await runInDurableObject(stubFor(crypto.randomUUID()), () => {
          setTimeout(() => console.error(`logged by an object being aborted (${attempt})`), 5);
        });
        await new Promise((resolve) => setTimeout(resolve, 5));
        await abortAllDurableObjects();
      }
    } finally {
      console.error = error;
    }
    expect(logged.length).toBeGreaterThan(0);
  });
});

/**
 * Rewrites the stored execution as it was stored before its payloads were kept apart: input, output and variables in
 * the workflow row (less `dropped`, for layouts older still), no payload table.
 */
function storeAsBefore(sql: SqlStorage, dropped: string[] = []): void {
  const header = JSON.parse(sql.exec<{ data: string }>(`SELECT data FROM workflow WHERE id = 1`).one().data) as Record<string, unknown>;
  for (const { part, data } of sql.exec<{ part: string; data: string }>(`SELECT part, data FROM workflow_parts`).toArray()) {
    if (!dropped.includes(part)) header[part] = JSON.parse(data);
  }
  sql.exec(`UPDATE workflow SET data = ? WHERE id = 1`, JSON.stringify(header));
  sql.exec(`DROP TABLE workflow_parts`);
}

describe("executions stored before a field was kept", () => {
  it("one stored with its input, output and variables in its workflow row is read, and goes on with them kept apart", async () => {
    await register({
      name: "stored_with_payloads_inline",
      variables: { stage: "initial" },
      tasks: [
        { name: "mark", taskReferenceName: "mark", type: "SET_VARIABLE", inputParameters: { marked: "${workflow.input.order}" } },
        { name: "gate", taskReferenceName: "gate", type: "WAIT", inputParameters: {} },
      ],
      outputParameters: { order: "${workflow.input.order}", marked: "${workflow.variables.marked}", stage: "${workflow.variables.stage}" },
    });
    const workflowId = await startWorkflow("stored_with_payloads_inline", { order: "o-7" });
    await waitFor(workflowId, (workflow) => workflow.tasks[1]?.status === "IN_PROGRESS");
    await runInDurableObject(stubFor(workflowId), (_instance, state) => storeAsBefore(state.storage.sql));
    await abortAllDurableObjects();
    expect(await getWorkflow(workflowId)).toMatchObject({ input: { order: "o-7" }, variables: { stage: "initial", marked: "o-7" } });
    await apiOk("POST", `/api/workflow/${workflowId}/variables`, { stage: "updated" });
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.output).toEqual({ order: "o-7", marked: "o-7", stage: "updated" });
    // Moved apart by the first write after the wake-up; nothing of them is left in the workflow row.
    const stored = await runInDurableObject(stubFor(workflowId), (_instance, state) => ({
      header: JSON.parse(state.storage.sql.exec<{ data: string }>(`SELECT data FROM workflow WHERE id = 1`).one().data) as JsonObject,
      parts: state.storage.sql.exec<{ part: string }>(`SELECT part FROM workflow_parts ORDER BY part`).toArray().map((row) => row.part),
    }));
    expect(stored.parts).toEqual(["input", "output", "variables"]);
    expect(Object.keys(stored.header).filter((key) => ["input", "output", "variables"].includes(key))).toEqual([]);
    await abortAllDurableObjects();
    expect(await getWorkflow(workflowId)).toMatchObject({ status: "COMPLETED", input: { order: "o-7" }, output: done.output });
  });

  it("one stored without variables reads as {} after a wake-up: shown, seen by expressions and merged into by an update", async () => {
    await register({
      name: "stored_without_variables",
      tasks: [
        httpTask("gate", { uri: target("/echo/stored-vars-gate"), method: "GET" }, { asyncComplete: true }),
        httpTask("after", { uri: target("/echo/stored-vars-after?stage=${workflow.variables.stage}"), method: "GET" }),
      ],
    });
    const workflowId = await startWorkflow("stored_without_variables");
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && workflow.tasks[0]!.outputData["statusCode"] === 200);
    await runInDurableObject(stubFor(workflowId), (_instance, state) => storeAsBefore(state.storage.sql, ["variables"]));
    await abortAllDurableObjects();
    expect((await getWorkflow(workflowId))["variables"]).toEqual({});
    expect(await apiOk("POST", `/api/workflow/${workflowId}/variables`, { stage: "set" })).toMatchObject({ variables: { stage: "set" } });
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(((done.tasks[1]!.outputData["response"] as { body: { query: JsonObject } }).body.query)).toEqual({ stage: "set" });
  });
});

describe("an execution's payloads", () => {
  it("input, variables and output near MAX_PAYLOAD_BYTES each are stored together: more than a SQLite row holds, once a 500 at the start", async () => {
    await register({
      name: "payloads_at_their_limits",
      tasks: [{ name: "copy", taskReferenceName: "copy", type: "SET_VARIABLE", inputParameters: { copy: "${workflow.input.big}" } }],
      outputParameters: { copy: "${workflow.variables.copy}" },
    });
    const big = "x".repeat(760 * 1024);
    const workflowId = await apiOk<string>("POST", "/api/workflow/payloads_at_their_limits", { big });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, done.reasonForIncompletion as string).toBe("COMPLETED");
    expect((done.output["copy"] as string).length).toBe(big.length);
    await abortAllDurableObjects();
    const reread = await getWorkflow(workflowId);
    expect([(reread.input["big"] as string).length, ((reread["variables"] as JsonObject)["copy"] as string).length, (reread.output["copy"] as string).length]).toEqual([big.length, big.length, big.length]);
  });
});

describe("deadlines whose alarm is late", () => {
  it("a workflow registered with timeoutSeconds and no timeoutPolicy (as the Python SDK sends it) runs past it: Conductor's default is ALERT_ONLY", async () => {
    await register({ name: "wf_timeout_default_policy", timeoutSeconds: 1, tasks: [httpTask("gate", { uri: target("/echo/wf-timeout-default"), method: "GET" }, { asyncComplete: true })] });
    expect((await apiOk("GET", "/api/metadata/workflow/wf_timeout_default_policy"))["timeoutPolicy"]).toBe("ALERT_ONLY");
    const workflowId = await startWorkflow("wf_timeout_default_policy");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && (workflow.tasks[0]!.outputData as { statusCode?: number }).statusCode === 200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(waiting["startTime"]) + 1_000 - Date.now()) + 300));
    await runDurableObjectAlarm(stubFor(workflowId));
    expect((await getWorkflow(workflowId)).status).toBe("RUNNING");
    expect((await api("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, { ok: true })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED", "TIMED_OUT"])).status).toBe("COMPLETED");
  });

  it("a task completion arriving after the workflow's timeoutSeconds is refused and the workflow ends TIMED_OUT, even when the alarm is late", async () => {
    await register({ name: "wf_timeout_late_alarm", timeoutSeconds: 1, timeoutPolicy: "TIME_OUT_WF", tasks: [httpTask("gate", { uri: target("/echo/wf-timeout-late-alarm"), method: "GET" }, { asyncComplete: true })] });
    const workflowId = await startWorkflow("wf_timeout_late_alarm");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && (workflow.tasks[0]!.outputData as { statusCode?: number }).statusCode === 200);
    // Alarms fire at or after their time: make this one 30 s late, then complete the task after the workflow's deadline.
    await runInDurableObject(stubFor(workflowId), (_instance, state) => state.storage.setAlarm(Date.now() + 30_000));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(waiting["startTime"]) + 1_000 - Date.now()) + 100));
    const response = await api("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, { ok: true });
    const after = await getWorkflow(workflowId);
    expect({ completion: response.status, status: after.status, task: after.tasks[0]!.status }).toEqual({ completion: 409, status: "TIMED_OUT", task: "CANCELED" });
  });
});

describe("a workflow's timeoutPolicy", () => {
  it("ALERT_ONLY: a workflow past its timeoutSeconds keeps running (no deadline, no alarm for it) and completes when its task does", async () => {
    await register({
      name: "wf_alert_only",
      timeoutSeconds: 1,
      timeoutPolicy: "ALERT_ONLY",
      tasks: [httpTask("gate", { uri: target("/echo/wf-alert-only"), method: "GET" }, { asyncComplete: true })],
    });
    expect(await apiOk("GET", "/api/metadata/workflow/wf_alert_only")).toMatchObject({ timeoutSeconds: 1, timeoutPolicy: "ALERT_ONLY" });
    const workflowId = await startWorkflow("wf_alert_only");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && (workflow.tasks[0]!.outputData as { statusCode?: number }).statusCode === 200);
    // Past the deadline TIME_OUT_WF would have: whatever alarm is set then has run, or runs now.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(waiting["startTime"]) + 1_000 - Date.now()) + 100));
    await runDurableObjectAlarm(stubFor(workflowId));
    expect((await getWorkflow(workflowId)).status).toBe("RUNNING");
    const response = await api("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, { ok: true });
    expect(response.status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED", "TIMED_OUT"])).status).toBe("COMPLETED");
  });

  it("a timeoutPolicy other than TIME_OUT_WF or ALERT_ONLY is a 400 at timeoutPolicy and stores nothing", async () => {
    const response = await api("POST", "/api/metadata/workflow", {
      name: "wf_bad_policy",
      timeoutSeconds: 1,
      timeoutPolicy: "RETRY",
      tasks: [httpTask("gate", { uri: target("/echo/wf-bad-policy"), method: "GET" })],
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; validationErrors: { path: string; message: string }[] };
    expect(body.error).toBe("VALIDATION_ERROR");
    expect(body.validationErrors).toEqual([{ path: "timeoutPolicy", message: expect.stringContaining("one of TIME_OUT_WF, ALERT_ONLY") }]);
    expect((await api("GET", "/api/metadata/workflow/wf_bad_policy")).status).toBe(404);
  });
});

/** One change a decision makes to the task list between two saves (see the property below). */
type TaskListEdit = { kind: "update" | "replace" | "append" | "dropFront" | "dropAt" | "truncate" | "insert" | "copy" | "clone"; at: number; by: number };

describe("the execution store over random changes to the task list", () => {
  it("writes exactly the tasks whose object changed and deletes exactly those dropped, whatever the decisions did (replaced in place, under another id, dropped from the front, inserted, cut, grown): a new object reads back the decision's tasks", async () => {
    const definition: WorkflowDef = { name: "store_edits", version: 1, schemaVersion: 2, tasks: [{ name: "w", taskReferenceName: "w", type: "WAIT", inputParameters: {} }] };
    const created = createExecution({ workflowId: "wf-store-edits", definition, input: {} }, 1_000);
    const template: TaskExecution = {
      taskId: "",
      taskType: "WAIT",
      referenceTaskName: "w",
      taskDefName: "w",
      seq: 0,
      definitionIndex: 0,
      status: "IN_PROGRESS",
      inputData: {},
      outputData: {},
      retryCount: 0,
      retried: false,
      scheduledTime: 1_000,
      startTime: 1_000,
      endTime: 0,
      updateTime: 1_000,
      attempt: 0,
    };
    const stub = stubFor(`store-edits-${crypto.randomUUID()}`);
    const edit = fc.record({ kind: fc.constantFrom<TaskListEdit["kind"]>("update", "replace", "append", "dropFront", "dropAt", "truncate", "insert", "copy", "clone"), at: fc.nat(), by: fc.nat({ max: 4 }) });
    // Each save applies one to three edits; the object is evicted (a new store reads the execution back) after some.
    const saves = fc.array(fc.tuple(fc.array(edit, { minLength: 1, maxLength: 3 }), fc.boolean()), { minLength: 1, maxLength: 12 });
    await runInDurableObject(stub, (_instance, state) => {
      const real = state.storage.sql;
      let written = 0;
      let deleted = 0;
      const counted = {
        exec: (query: string, ...bindings: unknown[]) => {
          if (query.startsWith("INSERT OR REPLACE INTO tasks")) written++;
          if (query.startsWith("DELETE FROM tasks")) deleted++;
          return real.exec(query, ...bindings);
        },
      } as unknown as SqlStorage;
      fc.assert(
        fc.property(saves, (steps) => {
          for (const table of ["meta", "workflow", "definition", "tasks", "workflow_parts"]) real.exec(`DROP TABLE IF EXISTS ${table}`);
          let ids = 0;
          const fresh = (seq: number): TaskExecution => ({ ...template, taskId: `t-${++ids}`, seq, referenceTaskName: `w__${ids}` });
          let store = new ExecutionStore(counted);
          let held: WorkflowExecution | null = null;
          let tasks: TaskExecution[] = [fresh(1_000)];
          for (const [edits, evicted] of steps) {
            const next = [...tasks];
            for (const { kind, at, by } of edits) {
              const position = next.length === 0 ? 0 : at % next.length;
              const task = next[position];
              if (kind === "update" && task !== undefined) next[position] = { ...task, status: "COMPLETED", outputData: { at, by } };
              // A rerun or a retry replacing the failed instance: another id in its place.
              else if (kind === "replace" && task !== undefined) next[position] = { ...task, taskId: `t-${++ids}`, status: "SCHEDULED" };
              else if (kind === "append") for (let count = 0; count <= by; count++) next.push(fresh((next.at(-1)?.seq ?? 0) + 1_000));
              // keepLastN dropping the oldest iterations.
              else if (kind === "dropFront") next.splice(0, at % (next.length + 1));
              else if (kind === "dropAt" && task !== undefined) next.splice(position, 1);
              // A rerun or restart dropping what came after a task.
              else if (kind === "truncate") next.splice(at % (next.length + 1));
              // An upgrade's skipped task, put before a task that ran: between two seqs, or taking that task's place and
              // moving every later one on (as Draft.insertTask does).
              else if (kind === "insert" && task !== undefined) {
                const before = next[position - 1]?.seq ?? 0;
                if (task.seq - before > 1) next.splice(position, 0, fresh(before + 1));
                else {
                  next.splice(position, 0, fresh(task.seq));
                  for (let later = position + 1; later < next.length; later++) next[later] = { ...next[later]!, seq: next[later - 1]!.seq + 1 };
                }
              }
              // The same content in a new object: written again, harmlessly.
              else if (kind === "clone" && task !== undefined) next[position] = { ...task };
              // "copy": the list copied with nothing changed.
            }
            const execution: WorkflowExecution = { ...(held ?? created), tasks: next, taskRevision: (held?.taskRevision ?? 0) + 1 };
            const kept = new Set(held?.tasks ?? []);
            const nextIds = new Set(next.map((task) => task.taskId));
            const changed = next.filter((task) => !kept.has(task)).length;
            const dropped = (held?.tasks ?? []).filter((task) => !nextIds.has(task.taskId)).length;
            written = 0;
            deleted = 0;
            store.save(held, execution);
            const what = JSON.stringify({ steps, before: held?.tasks.map((task) => task.taskId), after: next.map((task) => task.taskId) });
            expect({ written, deleted }, what).toEqual({ written: changed, deleted: dropped });
            store = new ExecutionStore(counted);
            const read = store.load()!;
            expect(read.tasks, what).toEqual(next);
            // Evicted, the next decision is taken on what a new object read back; else on the one it saved.
            held = evicted ? read : execution;
            tasks = held.tasks;
          }
        }),
        { numRuns: 300, seed: 20261207 },
      );
    });
  });
});
