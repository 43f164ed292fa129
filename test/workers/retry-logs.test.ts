import { abortAllDurableObjects, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ExecutionIndexWriter } from "../../src/actors/index-writer";
import { ExecutionStore } from "../../src/actors/execution-store";
import { ADMIN_KEY, apiOk, eventually, getWorkflow, register, startWorkflow, storedByExecutionObject, waitFor, whilePreparing } from "./helpers";
import { call } from "./auth-helpers";

const executionStub = (workflowId: string) => env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(workflowId));
/** When the execution's object's alarm is armed for, or null. */
const alarmOf = (workflowId: string) => runInDurableObject(executionStub(workflowId), (_instance, state) => state.storage.getAlarm());

/**
 * Starts workflow `name`, a WAIT of an hour (its alarm cannot fire while the test runs; the test runs it), and answers
 * its id and when the WAIT ends, for the test to set the object's clock past it.
 */
async function startedHourWait(name: string): Promise<{ workflowId: string; waitEnds: number }> {
  await register({ name, tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: { duration: "1 hours" } }] });
  const workflowId = await startWorkflow(name);
  const started = await eventually(() => getWorkflow(workflowId), (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS", "the WAIT started");
  return { workflowId, waitEnds: Number(started.tasks[0]!["startTime"]) + 3_600_000 };
}

/**
 * Runs `failing` with the objects' clock past `waitEnds` and every save of an execution throwing (its log lines in
 * `lines`, else dropped), then `mended`, the store whole again, on the same clock; real time again after both.
 */
async function pastTheWait(waitEnds: number, failing: () => Promise<void>, mended: () => Promise<void> = async () => undefined, lines?: string[]): Promise<void> {
  const save = ExecutionStore.prototype.save;
  const logError = console.error;
  vi.useFakeTimers({ toFake: ["Date"] });
  try {
    vi.setSystemTime(waitEnds + 1_000);
    ExecutionStore.prototype.save = () => {
      throw new TypeError("the test breaks the store");
    };
    console.error = (...args: unknown[]) => void lines?.push(args.map(String).join(" "));
    try {
      await failing();
    } finally {
      ExecutionStore.prototype.save = save;
      console.error = logError;
    }
    await mended();
  } finally {
    vi.useRealTimers();
  }
}

describe("work retried on a timer while it keeps failing", () => {
  it("logs a background job's failure at its 1st, 2nd, 4th and 8th attempt in a row, each line naming the job, the execution and the attempt, not at every retry", async () => {
    await register({ name: "retry_logs_flow", tasks: [{ name: "set", taskReferenceName: "set", type: "SET_VARIABLE", inputParameters: { done: true } }] });
    // The search index refusing every row of this execution, as D1 refuses one past its limits: its retries never end.
    const upsert = ExecutionIndexWriter.prototype.upsert;
    const logError = console.error;
    let refused = 0;
    const lines: string[] = [];
    ExecutionIndexWriter.prototype.upsert = async () => {
      refused++;
      return { ok: false, error: "the test refuses the row" };
    };
    console.error = (...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
    };
    try {
      const workflowId = await startWorkflow("retry_logs_flow");
      await waitFor(workflowId, ["COMPLETED"]);
      // Each alarm run tries the failed job again (once the attempt before it has settled): eight attempts, bounded.
      for (let round = 0; round < 400 && refused < 8; round++) {
        await runDurableObjectAlarm(executionStub(workflowId));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(refused).toBeGreaterThanOrEqual(8);
      const failures = lines.filter((line) => line.includes("background job failed")).map((line) => JSON.parse(line) as { job: string; workflowId: string; attempt: number; error: string });
      expect(failures.map((failure) => failure.attempt)).toEqual([1, 2, 4, 8, 16].filter((attempt) => attempt <= refused));
      expect(failures[0]).toMatchObject({ job: "index", workflowId, error: expect.stringContaining("the test refuses the row") });
    } finally {
      ExecutionIndexWriter.prototype.upsert = upsert;
      console.error = logError;
    }
  });

  it("logs a worker queue that D1 will not list at its 1st, 2nd and 4th try, not at every poll that tries it again", async () => {
    const taskName = `retry_logs_queue_${crypto.randomUUID().slice(0, 8)}`;
    let tried = 0;
    // D1 refusing the queue's listing, as it fails while it is down: each use of the queue (a poll here) tries it again.
    const refusingListing = (sql: string, prepare: (sql: string) => D1PreparedStatement) => {
      if (!sql.includes("INSERT OR IGNORE INTO worker_queues")) return prepare(sql);
      const failing = { bind: () => failing, run: () => ((tried++, Promise.reject(new Error("D1_ERROR: the test refuses the listing")))) };
      return failing as unknown as D1PreparedStatement;
    };
    const logError = console.error;
    const lines: string[] = [];
    console.error = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
    try {
      await whilePreparing(refusingListing, async () => {
        for (let poll = 0; poll < 200 && tried < 5; poll++) {
          const answer = await call("GET", `/api/tasks/poll/${taskName}?workerid=w`, { "x-api-key": ADMIN_KEY });
          expect(answer.status).toBe(204);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      });
    } finally {
      console.error = logError;
    }
    expect(tried).toBeGreaterThanOrEqual(5);
    const failures = lines.filter((line) => line.includes("could not list a worker queue")).map((line) => JSON.parse(line) as { queue: string; attempt: number });
    expect(failures.map((failure) => failure.attempt)).toEqual([1, 2, 4, 8].filter((attempt) => attempt <= tried));
    expect(failures[0]!.queue).toContain(taskName);
  });

  it("an execution's alarm that throws is logged naming the workflow, the error's kind and where, and armed again after a backoff by the object itself", async () => {
    await register({ name: "retry_logs_alarm", tasks: [{ name: "set", taskReferenceName: "set", type: "SET_VARIABLE", inputParameters: { done: true } }] });
    const workflowId = await startWorkflow("retry_logs_alarm");
    await waitFor(workflowId, ["COMPLETED"]);
    // Removed, it keeps a tombstone its alarm empties; emptying it throws here, as a bug there would.
    await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
    const forgetTables = ExecutionStore.prototype.forgetTables;
    const logError = console.error;
    const lines: string[] = [];
    ExecutionStore.prototype.forgetTables = () => {
      throw new TypeError("the test breaks the alarm: secret-looking value 0123");
    };
    console.error = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
    const before = Date.now();
    try {
      // Not thrown to the runtime, which gives up after a few retries: the object arms its own retry.
      expect(await runDurableObjectAlarm(executionStub(workflowId))).toBe(true);
      expect(await alarmOf(workflowId)).toBeGreaterThanOrEqual(before + 2_000);
      expect(await runDurableObjectAlarm(executionStub(workflowId))).toBe(true);
      // The second failure in a row waits twice as long.
      expect(await alarmOf(workflowId)).toBeGreaterThanOrEqual(before + 4_000);
    } finally {
      ExecutionStore.prototype.forgetTables = forgetTables;
      console.error = logError;
    }
    const failed = lines.filter((line) => line.includes("alarm failed"));
    expect(failed).toHaveLength(2);
    expect(JSON.parse(failed[0]!)).toMatchObject({ msg: "alarm failed; tried again", workflowId, attempt: 1, error: "TypeError", frames: expect.arrayContaining([expect.stringContaining("forgetTables")]) });
    expect(JSON.parse(failed[1]!)).toMatchObject({ attempt: 2 });
    expect(failed.join("\n")).not.toContain("0123");
    // Mended, the next alarm empties the tombstone, and none is left.
    expect(await runDurableObjectAlarm(executionStub(workflowId))).toBe(true);
    expect(await alarmOf(workflowId)).toBeNull();
  });

  it("a RUNNING workflow whose alarm failed is still moved by it later: a WAIT whose time passed ends once the fault is gone", async () => {
    const { workflowId, waitEnds } = await startedHourWait("retry_logs_wait");
    await pastTheWait(
      waitEnds,
      // The runtime's retries are not in play here (the test runs the alarm itself), as when they have given up.
      async () => void (await runDurableObjectAlarm(executionStub(workflowId)).catch(() => undefined)),
      async () => {
        expect((await getWorkflow(workflowId)).status).toBe("RUNNING");
        // Armed again by the object: it comes back, and moves the workflow on.
        expect(await alarmOf(workflowId)).not.toBeNull();
        expect(await runDurableObjectAlarm(executionStub(workflowId))).toBe(true);
        expect(await getWorkflow(workflowId)).toMatchObject({ status: "COMPLETED", tasks: [{ status: "COMPLETED" }] });
      },
    );
  });

  it("an alarm that keeps failing keeps its backoff and its count of failures across evictions: the wait grows to its longest, not back to 2 s at each new instance", async () => {
    const { workflowId, waitEnds } = await startedHourWait("retry_logs_evicted");
    const lines: string[] = [];
    const failing = async () => {
      for (let failure = 1; failure <= 3; failure++) {
        // Each wake-up in an instance of its own (an object idle for minutes between two of them is evicted).
        await abortAllDurableObjects();
        const before = Date.now();
        expect(await runDurableObjectAlarm(executionStub(workflowId))).toBe(true);
        expect(await alarmOf(workflowId)).toBeGreaterThanOrEqual(before + 2_000 * 2 ** (failure - 1));
      }
    };
    await pastTheWait(waitEnds, failing, async () => {
      expect(lines.filter((line) => line.includes("alarm failed")).map((line) => (JSON.parse(line) as { attempt: number }).attempt)).toEqual([1, 2]);
      // Mended, the alarm moves the workflow on and forgets the failures: the next failure counts from 1 again.
      expect(await runDurableObjectAlarm(executionStub(workflowId))).toBe(true);
      expect(await getWorkflow(workflowId)).toMatchObject({ status: "COMPLETED" });
      await abortAllDurableObjects();
      expect((await storedByExecutionObject(workflowId)).metaKeys).not.toContain("alarmFailures");
    }, lines);
  });

  it("an execution that ended owing nothing after its alarm failed forgets the failures with its alarm: a later run of failures counts from 1", async () => {
    const { workflowId, waitEnds } = await startedHourWait("retry_logs_ended");
    await pastTheWait(waitEnds, async () => {
      expect(await runDurableObjectAlarm(executionStub(workflowId))).toBe(true);
      expect(await runDurableObjectAlarm(executionStub(workflowId))).toBe(true);
    });
    expect((await storedByExecutionObject(workflowId)).metaKeys).toContain("alarmFailures");
    // A request ends it (the WAIT completed from outside), before any alarm went through: no alarm is left.
    const hold = (await getWorkflow(workflowId)).tasks[0]!;
    await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: hold["taskId"], status: "COMPLETED", outputData: {} });
    await waitFor(workflowId, ["COMPLETED"]);
    await eventually(() => alarmOf(workflowId), (alarm) => alarm === null, "no alarm left");
    expect((await storedByExecutionObject(workflowId)).metaKeys).not.toContain("alarmFailures");
  });
});
