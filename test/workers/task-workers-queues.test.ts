/**
 * Task workers, continued from task-workers.test.ts (SIMPLE tasks polled and reported): the execution's alarm while queue
 * work is owed, a result too large to store, a task definition's limits, the queues and poll data. In a file of its own
 * so that it runs in a workerd of its own (cloudflare/workers-sdk#15446: each `SELF.fetch` is slower the more requests
 * its workerd has served).
 */
import { abortAllDurableObjects, createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { workerQueueKey } from "../../src/engine/tasks/simple";
import { TaskQueue, taskQueueAt } from "../../src/actors/task-queue";
import { WakeSignal } from "../../src/actors/wake-signal";
import { executionStub } from "../../src/worker/executions";
import { WorkflowExecution } from "../../src/actors/workflow-execution";
import { DEFAULT_ENGINE_CONFIG } from "../../src/engine/config";
import { LEFT_OUT_HEADER, LISTING_CALL_BUDGET, MAX_LISTED_QUEUES, pollAnswerBudget } from "../../src/worker/routes/workers";
import worker from "../../src/worker/index";
import { call, createUser, orkes } from "./auth-helpers";
import { ADMIN_KEY, api, apiOk, eventually, getWorkflow, register, startWorkflow, waitFor, type TaskJson } from "./helpers";
import { poll, pollOne, queueSize, report, simpleTask } from "./task-worker-helpers";

describe("task workers: the execution's alarm while queue work is owed", () => {
  /**
   * Counts the alarms each execution's object runs (by workflow id) until `stop`. An alarm is a billed invocation on
   * Cloudflare; one that finds nothing to do buys nothing.
   */
  function countWakes(): { of: (workflowId: string) => number; stop: () => void } {
    const counts = new Map<string, number>();
    const { alarm } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.alarm = async function (this: WorkflowExecution) {
      const id = (this as unknown as { ctx: DurableObjectState }).ctx.id.toString();
      counts.set(id, (counts.get(id) ?? 0) + 1);
      return alarm.call(this);
    };
    return {
      of: (workflowId) => counts.get(executionStub(env, workflowId).id.toString()) ?? 0,
      stop: () => {
        WorkflowExecution.prototype.alarm = alarm;
      },
    };
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("a worker that reports IN_PROGRESS with a callbackAfterSeconds every second does not wake its execution at each report", async () => {
    await register({ name: "w_progress_wakes", tasks: [simpleTask("w_progress_wakes")] });
    const workflowId = await startWorkflow("w_progress_wakes");
    const task = await pollOne("w_progress_wakes");
    const wakes = countWakes();
    try {
      // Each report queues the task again, for 30 s later: its push is made within milliseconds, and nobody may poll
      // the task before then. The safety alarm for it was a second after each report (six wake-ups here, one per
      // report); the general one (5 s) covers such a push, as any background work.
      for (let step = 0; step < 6; step++) {
        expect((await report(task, "IN_PROGRESS", { step }, { callbackAfterSeconds: 30 })).status).toBe(200);
        await sleep(1_000);
      }
      expect(wakes.of(workflowId)).toBeLessThanOrEqual(2);
    } finally {
      wakes.stop();
    }
    expect((await report(task, "COMPLETED")).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("a queue push that keeps failing is tried again after its backoff (2 s), not at each safety alarm (1 s); the task is queued once the queue answers", async () => {
    await register({ name: "w_push_fails", tasks: [simpleTask("w_push_fails")] });
    const { push } = TaskQueue.prototype;
    let attempts = 0;
    TaskQueue.prototype.push = async function (this: TaskQueue, entries) {
      if (!entries.some((entry) => entry.queue === workerQueueKey("w_push_fails", undefined))) return push.call(this, entries);
      attempts++;
      throw new Error("queue unreachable (test)");
    };
    const wakes = countWakes();
    let workflowId: string;
    try {
      workflowId = await startWorkflow("w_push_fails");
      await sleep(5_000);
      // At 0, 2 and 4 s (it was every second: six attempts, five of them from the alarm).
      expect(attempts).toBeGreaterThanOrEqual(2);
      expect(attempts).toBeLessThanOrEqual(4);
      expect(wakes.of(workflowId)).toBeLessThanOrEqual(3);
    } finally {
      TaskQueue.prototype.push = push;
      wakes.stop();
    }
    const polled = await pollOne("w_push_fails");
    expect(polled.workflowInstanceId).toBe(workflowId);
    expect((await report(polled, "COMPLETED")).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });
});

describe("task workers: a result too large to store", () => {
  it("fails its task for good and answers 200 (POST /api/tasks and update-v2), as Conductor's server does; the workflow goes on as for any failure", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_big_out", retryCount: 2, retryDelaySeconds: 0, responseTimeoutSeconds: 60, ownerEmail: "t@example.com" }]);
    await register({ name: "w_big_out", tasks: [simpleTask("w_big_out")] });
    // Over MAX_PAYLOAD_BYTES and over MAX_REQUEST_BYTES: the result's body may be larger.
    const huge = { blob: "x".repeat(1_200 * 1024) };
    for (const route of ["/api/tasks", "/api/tasks/update-v2"]) {
      const workflowId = await startWorkflow("w_big_out");
      const task = await pollOne("w_big_out");
      expect(task["workflowInstanceId"]).toBe(workflowId);
      const answer = await api("POST", route, { workflowInstanceId: workflowId, taskId: task.taskId, status: "COMPLETED", outputData: huge, workerId: "worker-1" });
      expect(answer.status, route).toBeLessThan(300);
      const failed = await waitFor(workflowId, ["FAILED", "COMPLETED"]);
      expect(failed.status).toBe("FAILED");
      // Not retried: the same result would fail the same way.
      expect(failed.tasks).toHaveLength(1);
      expect(failed.tasks[0]).toMatchObject({ taskId: task.taskId, status: "FAILED_WITH_TERMINAL_ERROR", outputData: {} });
      expect(String(failed.tasks[0]!["reasonForIncompletion"])).toMatch(/^The task output is \d+ bytes, over the limit of \d+ bytes \(MAX_PAYLOAD_BYTES\)/);
    }
    // A worker whose key holds TASK_EXECUTE on this task name only: its grant is checked against the task the large
    // body names (the guard read less of the body than the route, and answered 403).
    const worker = await createUser("w-big-out-worker", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:w_big_out" }] });
    const scoped = await startWorkflow("w_big_out");
    const scopedTask = await pollOne("w_big_out");
    const scopedAnswer = await call("POST", "/api/tasks", orkes(worker.token), { workflowInstanceId: scoped, taskId: scopedTask.taskId, status: "COMPLETED", outputData: huge });
    expect(scopedAnswer.status, await scopedAnswer.clone().text()).toBe(200);
    expect((await waitFor(scoped, ["FAILED", "COMPLETED"])).tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    // An IN_PROGRESS report too: it would otherwise come back at every poll.
    const kept = await startWorkflow("w_big_out");
    const task = await pollOne("w_big_out");
    expect((await report(task, "IN_PROGRESS", { blob: "y".repeat(800 * 1024) }, { callbackAfterSeconds: 1 })).status).toBe(200);
    expect((await waitFor(kept, ["FAILED", "COMPLETED"])).tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    // The by-reference update is someone's call, not a worker's: it is refused (400), and the task waits on.
    const byRef = await startWorkflow("w_big_out");
    await pollOne("w_big_out");
    expect((await api("POST", `/api/tasks/${byRef}/w_big_out_ref/COMPLETED`, { blob: "z".repeat(800 * 1024) })).status).toBe(400);
    expect((await getWorkflow(byRef)).tasks[0]).toMatchObject({ status: "IN_PROGRESS" });
  });
});

describe("task workers: a task definition's concurrentExecLimit and rateLimitPerFrequency", () => {
  /** Registers task definition `name` with `limits` and a one-task workflow of the same name, and starts `count` of it. */
  async function startLimited(name: string, limits: JsonObject, count: number): Promise<string[]> {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name, retryCount: 0, responseTimeoutSeconds: 60, ownerEmail: "t@example.com", ...limits }]);
    await register({ name, tasks: [simpleTask(name)] });
    const ids: string[] = [];
    for (let index = 0; index < count; index++) ids.push(await startWorkflow(name));
    await eventually(() => queueSize(name), (size) => size === count, `${count} ${name} tasks queued`);
    return ids;
  }

  it("no more than concurrentExecLimit tasks are held by workers at once; a reported one frees its place, and a waiting poll gets the next", async () => {
    const ids = await startLimited("w_lim_conc", { concurrentExecLimit: 2 }, 3);
    const first = await poll("w_lim_conc", { count: "5" });
    expect(first).toHaveLength(2);
    expect(await poll("w_lim_conc", { count: "5", workerid: "worker-2" })).toEqual([]);
    // Left where it was: still SCHEDULED and queued, not polled.
    const third = ids.find((id) => !first.some((task) => task["workflowInstanceId"] === id))!;
    expect((await getWorkflow(third)).tasks[0]).toMatchObject({ status: "SCHEDULED", pollCount: 0 });
    expect(await queueSize("w_lim_conc")).toBe(1);
    const waiting = poll("w_lim_conc", { count: "5", timeout: "5000", workerid: "worker-2" });
    // Waiting in the queue before the place is freed (the release wakes it).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await report(first[0]!, "COMPLETED")).status).toBe(200);
    const [next] = await waiting;
    expect(next).toMatchObject({ workflowInstanceId: third, status: "IN_PROGRESS", workerId: "worker-2" });
    // Two held again: the place the completion freed was taken.
    expect(await poll("w_lim_conc", { count: "5" })).toEqual([]);
  });

  it("a task put back SCHEDULED gives up its place, as Conductor's Redis DAO takes it out of the limit's bucket, and waits for one again at its next poll", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_lim_back", retryCount: 0, responseTimeoutSeconds: 60, concurrentExecLimit: 1, ownerEmail: "t@example.com" }]);
    await register({ name: "w_lim_back", tasks: [simpleTask("w_lim_back")] });
    const a = await startWorkflow("w_lim_back");
    const aTask = await pollOne("w_lim_back");
    const b = await startWorkflow("w_lim_back");
    await eventually(() => queueSize("w_lim_back"), (size) => size === 1, "b's task queued");
    expect(await poll("w_lim_back")).toEqual([]);
    expect((await report(aTask, "IN_PROGRESS", {}, { callbackAfterSeconds: 0 })).status).toBe(200);
    expect((await getWorkflow(a)).tasks[0]).toMatchObject({ status: "SCHEDULED", pollCount: 1 });
    // b's task, queued first, takes the place; a's waits for it, never more than one held at once.
    const bTask = await pollOne("w_lim_back", { workerid: "worker-2" });
    expect(bTask["workflowInstanceId"]).toBe(b);
    expect(await poll("w_lim_back", { count: "5" })).toEqual([]);
    expect((await getWorkflow(a)).tasks[0]).toMatchObject({ status: "SCHEDULED", pollCount: 1 });
    expect((await report(bTask, "COMPLETED")).status).toBe(200);
    expect(await pollOne("w_lim_back", { timeout: "4000" })).toMatchObject({ taskId: aTask.taskId, status: "IN_PROGRESS", pollCount: 2 });
  });

  it("a task put back SCHEDULED and taken at once by a waiting poll counts held again: the release of its earlier hand-out does not free the new one's place", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_lim_reheld", retryCount: 0, responseTimeoutSeconds: 60, concurrentExecLimit: 2, ownerEmail: "t@example.com" }]);
    await register({ name: "w_lim_reheld", tasks: [simpleTask("w_lim_reheld")] });
    const a = await startWorkflow("w_lim_reheld");
    const aTask = await pollOne("w_lim_reheld");
    // Waiting in the empty queue when the report puts the task back: the push wakes it.
    const waiting = poll("w_lim_reheld", { timeout: "5000", workerid: "worker-2" });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await report(aTask, "IN_PROGRESS", {}, { callbackAfterSeconds: 0 })).status).toBe(200);
    expect(await waiting).toEqual([expect.objectContaining({ taskId: aTask.taskId, workerId: "worker-2", pollCount: 2 })]);
    expect((await getWorkflow(a)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", workerId: "worker-2" });
    await startWorkflow("w_lim_reheld");
    await startWorkflow("w_lim_reheld");
    await eventually(() => queueSize("w_lim_reheld"), (size) => size === 2, "two more tasks queued");
    // One place is left beside a's task: the release of its first hand-out, owed before it was taken again, freed none.
    expect(await poll("w_lim_reheld", { count: "5", workerid: "worker-3" })).toHaveLength(1);
    expect(await poll("w_lim_reheld", { count: "5", workerid: "worker-3" })).toEqual([]);
  });

  it("many workers polling at once get no more than concurrentExecLimit tasks between them", async () => {
    await startLimited("w_lim_race", { concurrentExecLimit: 2 }, 6);
    const polls = await Promise.all(Array.from({ length: 10 }, (_, index) => poll("w_lim_race", { workerid: `race-${index}`, count: "3" })));
    expect(polls.flat()).toHaveLength(2);
    expect(await queueSize("w_lim_race")).toBe(4);
  });

  it("a held task frees its place however it stops being held: failed and retried, timed out, put back IN_PROGRESS, its workflow terminated", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_lim_ways", retryCount: 1, retryDelaySeconds: 0, responseTimeoutSeconds: 2, concurrentExecLimit: 1, ownerEmail: "t@example.com" }]);
    await register({ name: "w_lim_ways", tasks: [simpleTask("w_lim_ways")] });
    const held = async (workflowId: string) => {
      const task = await pollOne("w_lim_ways", { timeout: "4000" });
      expect(task["workflowInstanceId"]).toBe(workflowId);
      return task;
    };
    const a = await startWorkflow("w_lim_ways");
    const aTask = await held(a);
    // FAILED: retried as a new task, which may be polled since the failed one left its worker.
    await report(aTask, "FAILED", {}, { reasonForIncompletion: "boom" });
    const aRetry = await held(a);
    expect(aRetry.taskId).not.toBe(aTask.taskId);
    // Put back with callbackAfterSeconds: polled again later, by any worker, which holds it again.
    await report(aRetry, "IN_PROGRESS", {}, { callbackAfterSeconds: 1 });
    const aAgain = await held(a);
    expect(aAgain.taskId).toBe(aRetry.taskId);
    // Timed out (responseTimeoutSeconds 2, no more retries): the next workflow's task may be polled.
    const b = await startWorkflow("w_lim_ways");
    expect(await poll("w_lim_ways")).toEqual([]);
    const bTask = await held(b);
    expect((await waitFor(a, ["FAILED", "COMPLETED", "TIMED_OUT"])).tasks.at(-1)).toMatchObject({ status: "TIMED_OUT" });
    // Its workflow terminated: the task is canceled, and the next one may be polled.
    const c = await startWorkflow("w_lim_ways");
    await eventually(() => queueSize("w_lim_ways"), (size) => size === 1, "c's task queued");
    expect(await poll("w_lim_ways")).toEqual([]);
    expect((await api("DELETE", `/api/workflow/${b}?reason=done`)).status).toBeLessThan(300);
    expect((await getWorkflow(b)).tasks[0]).toMatchObject({ taskId: bTask.taskId, status: "CANCELED" });
    await held(c);
  });

  it("no more than rateLimitPerFrequency tasks are handed out per rateLimitFrequencyInSeconds, held or not", async () => {
    const ids = await startLimited("w_lim_rate", { rateLimitPerFrequency: 2, rateLimitFrequencyInSeconds: 60 }, 3);
    const first = await poll("w_lim_rate", { count: "5" });
    expect(first).toHaveLength(2);
    // The polled Task shows its definition's limit, as Conductor's SimpleTaskMapper copies it.
    expect(first[0]).toMatchObject({ rateLimitPerFrequency: 2, rateLimitFrequencyInSeconds: 60, startDelayInSeconds: 0 });
    for (const task of first) expect((await report(task, "COMPLETED")).status).toBe(200);
    await Promise.all(first.map((task) => waitFor(String(task["workflowInstanceId"]), ["COMPLETED"])));
    // Nothing held, but two were handed out within the minute.
    expect(await poll("w_lim_rate", { count: "5" })).toEqual([]);
    expect(ids.filter((id) => !first.some((task) => task["workflowInstanceId"] === id))).toHaveLength(1);
    expect(await queueSize("w_lim_rate")).toBe(1);
  });

  it("a task handed out again (put back IN_PROGRESS, polled anew) counts again in the rate window, as each hand-out does in Conductor's", async () => {
    const [a] = await startLimited("w_lim_again", { rateLimitPerFrequency: 2, rateLimitFrequencyInSeconds: 60 }, 1);
    const first = await pollOne("w_lim_again");
    expect((await report(first, "IN_PROGRESS", {}, { callbackAfterSeconds: 0 })).status).toBe(200);
    const again = await pollOne("w_lim_again");
    expect(again).toMatchObject({ taskId: first.taskId, workflowInstanceId: a, pollCount: 2 });
    const [b] = await startLimitedMore("w_lim_again", 1);
    // Two hand-outs within the minute already, of one task: the next task waits for the window.
    expect(await poll("w_lim_again", { count: "5" })).toEqual([]);
    expect((await getWorkflow(b!)).tasks[0]).toMatchObject({ status: "SCHEDULED", pollCount: 0 });
  });

  it("a poll held back by a rate window gets the task once the window has room", async () => {
    await startLimited("w_lim_window", { rateLimitPerFrequency: 1, rateLimitFrequencyInSeconds: 1 }, 2);
    expect(await poll("w_lim_window", { count: "5" })).toHaveLength(1);
    expect(await poll("w_lim_window", { count: "5" })).toEqual([]);
    const [next] = await poll("w_lim_window", { count: "5", timeout: "5000" });
    expect(next).toMatchObject({ status: "IN_PROGRESS" });
  });

  /** Resolves once the long poll of `workerId` has reached the default queue of `taskType` (its lease records the poll). */
  async function pollWaiting(taskType: string, workerId: string): Promise<void> {
    await eventually(
      () => apiOk<Array<{ workerId: string }>>("GET", `/api/tasks/queue/polldata?taskType=${encodeURIComponent(taskType)}`),
      (polls) => polls.some((entry) => entry.workerId === workerId),
      `${workerId}'s poll at the queue`,
    );
  }

  /**
   * Resolves after a waiting poll's wake-up due `dueInMs` from the last answer the test saw (a hand-out, a report) has
   * fired, without timing it: the test and the queue's object share one workerd, whose clock fires timers in the order
   * they fall due, and a woken poll leases in the same turn. The extra half second only keeps this timer's due moment
   * after the poll's (its `Date.now()` may be a little older than the answer's arrival here), on any machine's load.
   */
  async function pastWakeOfWaitingPoll(dueInMs: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, dueInMs + 500));
  }

  /**
   * Runs `act`, counting the waits each queue object's WakeSignal starts meanwhile (the queue's the only one waiting in
   * these tests), and answers the counts: a poll woken for nothing waits again, so more than one wait per object shows
   * a wake-up that could not let it take anything.
   */
  async function countingWaits(act: () => Promise<void>): Promise<number[]> {
    const waits = new Map<WakeSignal, number>();
    const { next } = WakeSignal.prototype;
    WakeSignal.prototype.next = function (this: WakeSignal, waitMs: number) {
      waits.set(this, (waits.get(this) ?? 0) + 1);
      return next.call(this, waitMs);
    };
    try {
      await act();
    } finally {
      WakeSignal.prototype.next = next;
    }
    return [...waits.values()];
  }

  it("a long poll held back by a long rate window wakes when a hand-out of a shorter window stops counting, not at the long window's end", async () => {
    // One task name, two inline limits: a hand-out counts in a window only within its own (1 s here), so the task of
    // the 60 s window may go once the 1 s one's hand-out is a second old.
    const limited = (windowSeconds: number) => simpleTask("w_lim_wake", "limited", {}, { taskDefinition: { responseTimeoutSeconds: 60, rateLimitPerFrequency: 1, rateLimitFrequencyInSeconds: windowSeconds } });
    await register({ name: "w_lim_wake_short", tasks: [limited(1)] });
    await register({ name: "w_lim_wake_long", tasks: [limited(60)] });
    const short = await startWorkflow("w_lim_wake_short");
    await eventually(() => queueSize("w_lim_wake"), (size) => size === 1, "the short window's task queued");
    const long = await startWorkflow("w_lim_wake_long");
    await eventually(() => queueSize("w_lim_wake"), (size) => size === 2, "both tasks queued");
    expect(await poll("w_lim_wake")).toMatchObject([{ workflowInstanceId: short }]);
    const waiting = poll("w_lim_wake", { timeout: "10000", workerid: "worker-2" });
    await pollWaiting("w_lim_wake", "worker-2");
    // Past the moment the short hand-out stops counting, a poll that does not wait comes: the waiting poll, woken then,
    // has the long task leased already; one asleep until the end of its wait (the 60 s window's end, capped by it)
    // leaves it to this poll, and then finds nothing.
    await pastWakeOfWaitingPoll(1_000);
    expect(await poll("w_lim_wake", { workerid: "worker-3" })).toEqual([]);
    expect(await waiting).toMatchObject([{ workflowInstanceId: long, workerId: "worker-2" }]);
  });

  it("a long poll held back by a rate window wakes once enough hand-outs have left it, not at each one's exit", async () => {
    // One task name, two inline limits: two hand-outs of a 1 s window (5 a second), some milliseconds apart, fill the
    // 60 s window of 1 a minute; the long task may go once both stopped counting. Woken at the first's
    // exit, a poll finds the window still full: with many such hand-outs (a busy short window), every poll waiting on
    // the queue woke at each.
    const limited = (perWindow: number, windowSeconds: number) =>
      simpleTask("w_lim_room", "limited", {}, { taskDefinition: { responseTimeoutSeconds: 60, rateLimitPerFrequency: perWindow, rateLimitFrequencyInSeconds: windowSeconds } });
    await register({ name: "w_lim_room_short", tasks: [limited(5, 1)] });
    await register({ name: "w_lim_room_long", tasks: [limited(1, 60)] });
    for (let index = 0; index < 2; index++) {
      await startWorkflow("w_lim_room_short");
      await eventually(() => poll("w_lim_room"), (tasks) => tasks.length === 1, "a short window's task polled");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const long = await startWorkflow("w_lim_room_long");
    await eventually(() => queueSize("w_lim_room"), (size) => size === 1, "the long window's task queued");
    // Counted from here: the waits of each object (the queue's the only one waiting meanwhile).
    const waits = await countingWaits(async () => {
      expect(await poll("w_lim_room", { timeout: "10000", workerid: "worker-2" })).toMatchObject([{ workflowInstanceId: long, workerId: "worker-2" }]);
    });
    expect(waits).toEqual([1]);
  });

  it("a long poll whose visible tasks are held back by a limit wakes when an entry first in the queue's order becomes visible", async () => {
    // One task name: two tasks under a concurrentExecLimit of 1, and a task without limits of a priority-1 workflow
    // (first in the queue's order) that its worker puts back for a second.
    await register({ name: "w_lim_later", tasks: [simpleTask("w_lim_later", "limited", {}, { taskDefinition: { responseTimeoutSeconds: 60, concurrentExecLimit: 1 } })] });
    await register({ name: "w_lim_later_free", tasks: [simpleTask("w_lim_later", "free", {}, { taskDefinition: { responseTimeoutSeconds: 60 } })] });
    const free = await apiOk<string>("POST", "/api/workflow", { name: "w_lim_later_free", priority: 1 });
    await eventually(() => queueSize("w_lim_later"), (size) => size === 1, "the free task queued");
    const [first] = [await startWorkflow("w_lim_later"), await startWorkflow("w_lim_later")];
    await eventually(() => queueSize("w_lim_later"), (size) => size === 3, "three tasks queued");
    const taken = await poll("w_lim_later", { count: "2" });
    expect(taken.map((task) => task["workflowInstanceId"])).toEqual([free, first]);
    expect((await report(taken[0]!, "IN_PROGRESS", {}, { callbackAfterSeconds: 1 })).status).toBe(200);
    // The second limited task is visible and held back (the first holds the place); the free one is visible in a second.
    const waiting = poll("w_lim_later", { count: "1", timeout: "10000", workerid: "worker-2" });
    await pollWaiting("w_lim_later", "worker-2");
    // Past the moment the free task is visible again, a poll that does not wait comes: the waiting poll, woken then, has
    // it leased already; one asleep until the end of its wait leaves it to this poll, and then finds nothing.
    await pastWakeOfWaitingPoll(1_000);
    expect(await poll("w_lim_later", { workerid: "worker-3" })).toEqual([]);
    expect(await waiting).toMatchObject([{ workflowInstanceId: free, workerId: "worker-2", pollCount: 2 }]);
  });

  it("a long poll whose visible tasks are held back by a limit is not woken by entries that come after them in the queue's order", async () => {
    // One task name: tasks without limits of the default priority, put back for a second, and two tasks under a
    // concurrentExecLimit of 1 queued before they come back: back, they come after the held one in the queue's order
    // (same priority, visible later), so their return cannot let a poll take anything. Each would wake every poll
    // waiting on the queue, to find the same held task first again.
    await register({ name: "w_lim_after_free", tasks: [simpleTask("w_lim_after", "free", {}, { taskDefinition: { responseTimeoutSeconds: 60 } })] });
    await register({ name: "w_lim_after", tasks: [simpleTask("w_lim_after", "limited", {}, { taskDefinition: { responseTimeoutSeconds: 60, concurrentExecLimit: 1 } })] });
    for (let index = 0; index < 3; index++) await startWorkflow("w_lim_after_free");
    await eventually(() => queueSize("w_lim_after"), (size) => size === 3, "the free tasks queued");
    const free = await poll("w_lim_after", { count: "3" });
    expect(free).toHaveLength(3);
    await startWorkflow("w_lim_after");
    const [holder] = await eventually(() => poll("w_lim_after"), (tasks) => tasks.length === 1, "the first limited task polled");
    const second = await startWorkflow("w_lim_after");
    await eventually(() => queueSize("w_lim_after"), (size) => size === 1, "the second limited task queued");
    for (const task of free) expect((await report(task, "IN_PROGRESS", {}, { callbackAfterSeconds: 1 })).status).toBe(200);
    await eventually(() => queueSize("w_lim_after"), (size) => size === 4, "the free tasks queued again");
    // Counted from here: the waits of each object (the queue's the only one waiting meanwhile).
    const waits = await countingWaits(async () => {
      const waiting = poll("w_lim_after", { timeout: "10000", workerid: "worker-2" });
      await pollWaiting("w_lim_after", "worker-2");
      // Past the free tasks' return (behind the held task), the first limited task ends: its release wakes the poll.
      await pastWakeOfWaitingPoll(1_000);
      expect((await report(holder!, "COMPLETED")).status).toBe(200);
      expect(await waiting).toMatchObject([{ workflowInstanceId: second, workerId: "worker-2" }]);
    });
    expect(waits).toEqual([1]);
  });

  it("a long poll whose first visible task is held back by a limit takes the next once that task is gone (its workflow terminated)", async () => {
    // One task name: a task under a concurrentExecLimit of 1 handed out, a second one held back by it, and a task without
    // limits queued behind that one, which a poll may take once the held task no longer waits.
    await register({ name: "w_lim_gone", tasks: [simpleTask("w_lim_gone", "limited", {}, { taskDefinition: { responseTimeoutSeconds: 60, concurrentExecLimit: 1 } })] });
    await register({ name: "w_lim_gone_free", tasks: [simpleTask("w_lim_gone", "free", {}, { taskDefinition: { responseTimeoutSeconds: 60 } })] });
    await startWorkflow("w_lim_gone");
    expect(await pollOne("w_lim_gone")).toMatchObject({ referenceTaskName: "limited" });
    const held = await startWorkflow("w_lim_gone");
    await eventually(() => queueSize("w_lim_gone"), (size) => size === 1, "the held task queued");
    const free = await startWorkflow("w_lim_gone_free");
    await eventually(() => queueSize("w_lim_gone"), (size) => size === 2, "the free task queued behind it");
    const waiting = poll("w_lim_gone", { timeout: "10000", workerid: "worker-2" });
    await pollWaiting("w_lim_gone", "worker-2");
    expect((await api("DELETE", `/api/workflow/${held}`)).status).toBe(200);
    // Once the held task's entry is out of the queue, a poll that does not wait comes: the waiting poll, woken by the
    // removal, has the free task leased in the same turn; one asleep until the end of its wait leaves it to this poll.
    await eventually(() => queueSize("w_lim_gone"), (size) => size === 1, "the held task's entry removed");
    expect(await poll("w_lim_gone", { workerid: "worker-3" })).toEqual([]);
    expect(await waiting).toMatchObject([{ workflowInstanceId: free, workerId: "worker-2" }]);
  });

  it("an inline taskDefinition's limit counts too, and tasks without limits in other queues are not held back", async () => {
    await register({ name: "w_lim_inline", tasks: [simpleTask("w_lim_inline", "limited", {}, { taskDefinition: { concurrentExecLimit: 1, responseTimeoutSeconds: 60 } })] });
    await register({ name: "w_lim_free", tasks: [simpleTask("w_lim_free")] });
    await startWorkflow("w_lim_inline");
    await startWorkflow("w_lim_inline");
    await startWorkflow("w_lim_free");
    await startWorkflow("w_lim_free");
    await eventually(() => queueSize("w_lim_inline"), (size) => size === 2, "both limited tasks queued");
    expect(await poll("w_lim_inline", { count: "5" })).toHaveLength(1);
    expect(await poll("w_lim_inline", { count: "5" })).toEqual([]);
    await eventually(() => queueSize("w_lim_free"), (size) => size === 2, "both free tasks queued");
    expect(await poll("w_lim_free", { count: "5" })).toHaveLength(2);
  });

  it("a batch poll hands out a limited task behind one without limits (its own taskDefinition sets none): that one takes no place", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_lim_mixed", retryCount: 0, responseTimeoutSeconds: 60, concurrentExecLimit: 1, ownerEmail: "t@example.com" }]);
    await register({ name: "w_lim_mixed_free", tasks: [simpleTask("w_lim_mixed", "free", {}, { taskDefinition: { responseTimeoutSeconds: 60 } })] });
    await register({ name: "w_lim_mixed", tasks: [simpleTask("w_lim_mixed")] });
    const free = await startWorkflow("w_lim_mixed_free");
    const limited = await startWorkflow("w_lim_mixed");
    await eventually(() => queueSize("w_lim_mixed"), (size) => size === 2, "both tasks queued");
    const tasks = await poll("w_lim_mixed", { count: "5" });
    expect(tasks.map((task) => task["workflowInstanceId"])).toEqual([free, limited]);
    // The limited one holds the only place now.
    const [another] = await startLimitedMore("w_lim_mixed", 1);
    expect(await poll("w_lim_mixed", { count: "5" })).toEqual([]);
    expect((await getWorkflow(another!)).tasks[0]).toMatchObject({ status: "SCHEDULED", pollCount: 0 });
  });

  it("a task with a concurrentExecLimit alone takes no place in the rate window of those with a rate limit, held or taken in the same batch, as in Conductor's poll", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_lim_split", retryCount: 0, responseTimeoutSeconds: 60, rateLimitPerFrequency: 2, rateLimitFrequencyInSeconds: 60, ownerEmail: "t@example.com" }]);
    // Tasks of one name in one queue, one workflow's with an inline taskDefinition setting a concurrentExecLimit alone.
    await register({ name: "w_lim_split_held", tasks: [simpleTask("w_lim_split", "held", {}, { taskDefinition: { responseTimeoutSeconds: 60, concurrentExecLimit: 5 } })] });
    await register({ name: "w_lim_split", tasks: [simpleTask("w_lim_split")] });
    const queued = async (workflow: string, size: number) => {
      const id = await startWorkflow(workflow);
      await eventually(() => queueSize("w_lim_split"), (now) => now === size, `${size} w_lim_split tasks queued`);
      return id;
    };
    const first = await queued("w_lim_split_held", 1);
    expect(await pollOne("w_lim_split")).toMatchObject({ workflowInstanceId: first });
    // It is held now; then one more of it and two with the rate limit, taken by one poll.
    const ids = [await queued("w_lim_split_held", 1), await queued("w_lim_split", 2), await queued("w_lim_split", 3)];
    const tasks = await poll("w_lim_split", { count: "5" });
    expect(tasks.map((task) => task["workflowInstanceId"])).toEqual(ids);
    // The two with the rate limit fill its window: the next waits.
    const [next] = await startLimitedMore("w_lim_split", 1);
    expect(await poll("w_lim_split", { count: "5" })).toEqual([]);
    expect((await getWorkflow(next!)).tasks[0]).toMatchObject({ status: "SCHEDULED", pollCount: 0 });
  });

  it("a paused workflow's limited task does not keep a place while the workflow is paused", async () => {
    const [paused, other] = await startLimited("w_lim_paused", { concurrentExecLimit: 1 }, 2);
    expect((await api("PUT", `/api/workflow/${paused}/pause`)).status).toBeLessThan(300);
    // The paused one comes first in the queue: the poll finds it paused, takes nothing, and its reservation goes.
    const [task] = await eventually(() => poll("w_lim_paused", { count: "1" }), (tasks) => tasks.length > 0, "the other workflow's task");
    expect(task!["workflowInstanceId"]).toBe(other);
  });

  it("a release owed when the object was evicted is made when it wakes", async () => {
    const [workflowId, next] = await startLimited("w_lim_evict", { concurrentExecLimit: 1 }, 2);
    if (workflowId === undefined || next === undefined) throw new Error("workflows not started");
    const [task] = await poll("w_lim_evict", { count: "5" });
    expect(task!["workflowInstanceId"]).toBe(workflowId);
    const owed = await runInDurableObject(executionStub(env, workflowId), (_instance, state) =>
      state.storage.sql.exec<{ value: string }>(`SELECT value FROM meta WHERE key = ?`, `release:${task!.taskId}`).toArray(),
    );
    expect(owed).toEqual([{ value: workerQueueKey("w_lim_evict", undefined) }]);
    await report(task!, "COMPLETED");
    await waitFor(workflowId, ["COMPLETED"]);
    const [second] = await eventually(() => poll("w_lim_evict"), (tasks) => tasks.length > 0, "the second task, once the first is released");
    expect(second!["workflowInstanceId"]).toBe(next);
    await report(second!, "COMPLETED");
    await waitFor(next, ["COMPLETED"]);
    // As if the second's completion had been stored and the object evicted before its release left: the queue still
    // counts it held, and a third task waits.
    const [third] = await startLimitedMore("w_lim_evict", 1);
    await runInDurableObject(taskQueueAt(env, workerQueueKey("w_lim_evict", undefined)), (_instance, state) => {
      state.storage.sql.exec(`UPDATE hand_outs SET held = 1 WHERE task_id = ?`, second!.taskId);
    });
    await runInDurableObject(executionStub(env, next), (_instance, state) => {
      state.storage.sql.exec(`INSERT INTO meta (key, value) VALUES (?, ?)`, `release:${second!.taskId}`, workerQueueKey("w_lim_evict", undefined));
    });
    await abortAllDurableObjects();
    expect(await poll("w_lim_evict")).toEqual([]);
    // Any request wakes it (the alarm would too).
    await getWorkflow(next);
    const [polled] = await eventually(() => poll("w_lim_evict"), (tasks) => tasks.length > 0, "the third task, once the owed release is made");
    expect(polled!["workflowInstanceId"]).toBe(third);
  });

  it("a task queued under a limit that an upgrade dropped still frees its place once done (the queue counted it held)", async () => {
    const [upgraded] = await startLimited("w_lim_upgrade", { concurrentExecLimit: 1 }, 1);
    // The limit goes, and the running execution takes the definitions as they are now; its queue entry keeps the limit.
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "w_lim_upgrade", retryCount: 0, responseTimeoutSeconds: 60, ownerEmail: "t@example.com" });
    await apiOk("POST", `/api/workflow/${upgraded}/upgrade`, { name: "w_lim_upgrade", version: 1 });
    const [task] = await poll("w_lim_upgrade");
    expect(task!["workflowInstanceId"]).toBe(upgraded);
    await report(task!, "COMPLETED");
    await waitFor(upgraded!, ["COMPLETED"]);
    // The limit is back: the next task is handed out, the finished one holding no place.
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "w_lim_upgrade", retryCount: 0, responseTimeoutSeconds: 60, concurrentExecLimit: 1, ownerEmail: "t@example.com" });
    const [next] = await startLimitedMore("w_lim_upgrade", 1);
    const [polled] = await eventually(() => poll("w_lim_upgrade"), (tasks) => tasks.length > 0, "the next task, its place free", 3_000);
    expect(polled!["workflowInstanceId"]).toBe(next);
  });

  // A poll's lease of a limited task reserves its place until the task's execution answers; an answer that does not hand
  // it out ("later": its workflow is paused; "gone": it no longer waits) frees the place. A long poll held back by that
  // reservation alone must get the next task then, as it does at a release, not at the end of its wait (up to 10 s).
  for (const [outcome, limits] of [
    ["later", { concurrentExecLimit: 1 }],
    ["gone", { rateLimitPerFrequency: 1, rateLimitFrequencyInSeconds: 60 }],
  ] as const) {
    it(`a long poll held back by another poll's reservation gets the task as soon as that poll's answer is "${outcome}" (${Object.keys(limits)[0]})`, async () => {
      const name = `w_lim_ack_${outcome}`;
      const [first, second] = await startLimited(name, limits, 2);
      const queue = taskQueueAt(env, workerQueueKey(name, undefined));
      // The first poll, its execution not yet answered: the router's poll between its lease and its ack.
      const [reserved] = await queue.lease(1, 0, 30_000);
      expect(reserved).toMatchObject({ workflowId: first, limited: true });
      const waiting = poll(name, { count: "5", timeout: "10000", workerid: "waiter" });
      // The waiting poll recorded itself and found no room in the same turn, before its wait.
      await eventually(() => queue.pollData(), (polls) => polls.some((entry) => entry.workerId === "waiter"), "the long poll waiting in the queue");
      expect(await queue.lease(1, 0, 30_000)).toEqual([]);
      await queue.ack([{ ...reserved!, outcome }]);
      // The woken poll took the second task before anything else reached the queue: nothing is left to lease.
      const leftOver = await queue.lease(1, 0, 30_000);
      expect(leftOver.map((entry) => entry.workflowId)).toEqual([]);
      const [task] = await waiting;
      expect(task).toMatchObject({ workflowInstanceId: second, status: "IN_PROGRESS", workerId: "waiter" });
    });
  }

  /** Starts `count` more of workflow `name` and waits for their tasks to be queued. */
  async function startLimitedMore(name: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) ids.push(await startWorkflow(name));
    await eventually(() => queueSize(name), (size) => size === count, `${count} more ${name} tasks queued`);
    return ids;
  }
});

describe("task workers: every queue (Conductor's /api/tasks/queue/all, …/all/verbose and /api/tasks/queue/polldata/all)", () => {
  it("lists each queue pushed to or polled, by Conductor's queue name (domain:taskType), with its size (verbose too), and every named worker's latest poll", async () => {
    await register({ name: "w_all", tasks: [simpleTask("w_all_task")] });
    await startWorkflow("w_all");
    await startWorkflow("w_all");
    await apiOk<string>("POST", "/api/workflow", { name: "w_all", taskToDomain: { w_all_task: "gpu" } });
    expect(await poll("w_all_polled_only", { workerid: "all-idle", domain: "eu" })).toEqual([]);
    const all = await eventually(
      () => apiOk<Record<string, number>>("GET", "/api/tasks/queue/all"),
      (sizes) => sizes["w_all_task"] === 2 && sizes["gpu:w_all_task"] === 1 && sizes["eu:w_all_polled_only"] === 0,
      "the queues listed with their sizes",
    );
    expect(all).not.toHaveProperty("w_all_polled_only:eu");
    await pollOne("w_all_task", { workerid: "all-busy" });
    expect((await apiOk<Record<string, number>>("GET", "/api/tasks/queue/all"))["w_all_task"]).toBe(1);
    // The generated clients' allVerbose: the same queues and sizes, as Conductor's SQL queues answer them (one shard "a").
    const verbose = await apiOk<Record<string, Record<string, { size: number; uacked: number }>>>("GET", "/api/tasks/queue/all/verbose");
    expect(verbose).toMatchObject({ w_all_task: { a: { size: 1, uacked: 0 } }, "gpu:w_all_task": { a: { size: 1, uacked: 0 } }, "eu:w_all_polled_only": { a: { size: 0, uacked: 0 } } });
    expect(Object.keys(verbose).sort()).toEqual(Object.keys(await apiOk<Record<string, number>>("GET", "/api/tasks/queue/all")).sort());
    const polls = await eventually(
      () => apiOk<Array<{ queueName: string; domain?: string; workerId: string; lastPollTime: number }>>("GET", "/api/tasks/queue/polldata/all"),
      (entries) => entries.some((entry) => entry.workerId === "all-idle") && entries.some((entry) => entry.workerId === "all-busy"),
      "both workers' polls",
    );
    expect(polls.filter((entry) => entry.workerId.startsWith("all-")).map((entry) => [entry.queueName, entry.domain, entry.workerId])).toEqual([
      ["w_all_task", undefined, "all-busy"],
      // Conductor's PollData names the task type as its queueName in every domain (the domain is in `domain`).
      ["w_all_polled_only", "eu", "all-idle"],
    ]);
    expect(polls.map((entry) => entry.lastPollTime)).toEqual([...polls.map((entry) => entry.lastPollTime)].sort((a, b) => b - a));
  });
});

describe("task workers: the listings' calls (each queue a subrequest; Workers Free allows a request 1,000)", () => {
  /**
   * Lists `count` queues named `<prefix>_<n>` in D1, as each lists itself on its first use, and only those: the queues
   * this file's other tests listed are set aside until {@link unlist}, so the counts are these queues'.
   */
  async function listQueues(prefix: string, count: number): Promise<string[]> {
    const names = Array.from({ length: count }, (_, index) => `${prefix}_${String(index).padStart(4, "0")}`);
    await env.DB.batch([env.DB.prepare(`CREATE TABLE worker_queues_aside AS SELECT * FROM worker_queues`), env.DB.prepare(`DELETE FROM worker_queues`)]);
    await env.DB.batch(names.map((name) => env.DB.prepare(`INSERT OR IGNORE INTO worker_queues (task_name, domain) VALUES (?, '')`).bind(name)));
    return names;
  }

  /** Puts back the queues {@link listQueues} set aside, and only them. */
  async function unlist(): Promise<void> {
    await env.DB.batch([
      env.DB.prepare(`DELETE FROM worker_queues`),
      env.DB.prepare(`INSERT INTO worker_queues SELECT * FROM worker_queues_aside`),
      env.DB.prepare(`DROP TABLE worker_queues_aside`),
    ]);
  }

  /**
   * A TASK_QUEUE binding whose objects count the calls made to them and answer at once (a thousand real objects would
   * take a test's whole timeout): `fails(n)` says whether a queue's call number n (from 1) throws a reset.
   */
  function countedQueues(fails: (name: string, call: number) => Error | undefined = () => undefined): { binding: Env["TASK_QUEUE"]; calls: () => number } {
    const callsOf = new Map<string, number>();
    let calls = 0;
    const answer = <T>(name: string, value: T) => async (): Promise<T> => {
      calls++;
      const call = (callsOf.get(name) ?? 0) + 1;
      callsOf.set(name, call);
      const error = fails(name, call);
      if (error !== undefined) throw error;
      return value;
    };
    const binding = {
      idFromName: (name: string) => env.TASK_QUEUE.idFromName(name),
      get: (id: DurableObjectId) => {
        const name = id.name ?? id.toString();
        return { size: answer(name, 0), pollData: answer(name, [{ workerId: `w-${name}`, lastPollTime: 1 }]) };
      },
    } as unknown as Env["TASK_QUEUE"];
    return { binding, calls: () => calls };
  }

  async function listWith(queues: Env["TASK_QUEUE"], path: string): Promise<Response> {
    const ctx = createExecutionContext();
    const request = new Request(`https://conductor.test${path}`, { headers: { "x-api-key": ADMIN_KEY } });
    const response = await worker.fetch(request as Parameters<typeof worker.fetch>[0], { ...env, TASK_QUEUE: queues }, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  }

  const reset = () => Object.assign(new Error("Durable Object reset because its code was updated."), { retryable: true });

  it(`queue/all and polldata/all ask at most ${LISTING_CALL_BUDGET} queues a request and answer what they read, counting the queues left out in ${LEFT_OUT_HEADER}`, async () => {
    const names = await listQueues("w_budget", MAX_LISTED_QUEUES);
    try {
    // The runtime refusing a call past the request's subrequests all the same: that queue is left out, not the listing.
    const queues = countedQueues((name) => (name.includes(`"${names[1]}"`) ? new Error("Too many API requests by single Worker invocation.") : undefined));
    const all = await listWith(queues.binding, "/api/tasks/queue/all");
    expect(all.status).toBe(200);
    expect(queues.calls()).toBe(LISTING_CALL_BUDGET);
    const sizes = await all.json<Record<string, number>>();
    // The first by name, all but the refused one.
    expect(Object.keys(sizes)).toEqual([names[0], ...names.slice(2, LISTING_CALL_BUDGET)]);
    expect(all.headers.get(LEFT_OUT_HEADER)).toBe(String(MAX_LISTED_QUEUES - LISTING_CALL_BUDGET + 1));
    const polled = countedQueues();
    const polls = await listWith(polled.binding, "/api/tasks/queue/polldata/all");
    expect(polls.status).toBe(200);
    expect(polled.calls()).toBe(LISTING_CALL_BUDGET);
    expect(await polls.json<unknown[]>()).toHaveLength(LISTING_CALL_BUDGET);
    expect(polls.headers.get(LEFT_OUT_HEADER)).toBe(String(MAX_LISTED_QUEUES - LISTING_CALL_BUDGET));
    } finally {
      await unlist();
    }
  });

  it("asks every queue once before it asks any again: repeats after resets come from what the budget has left, and a queue read whole shows no header", async () => {
    const names = await listQueues("w_budget_reset", 600);
    try {
    // Each queue's first call is cut off by a reset: 600 first calls leave 300 repeats.
    const queues = countedQueues((_name, call) => (call === 1 ? reset() : undefined));
    const all = await listWith(queues.binding, "/api/tasks/queue/all");
    expect(all.status).toBe(200);
    expect(queues.calls()).toBe(LISTING_CALL_BUDGET);
    const sizes = await all.json<Record<string, number>>();
    expect(Object.keys(sizes)).toHaveLength(LISTING_CALL_BUDGET - names.length);
    expect(all.headers.get(LEFT_OUT_HEADER)).toBe(String(names.length - (LISTING_CALL_BUDGET - names.length)));
    // Within the budget, a reset is repeated as before and nothing is left out.
    const few = countedQueues((name, call) => (call === 1 && name.includes(`"${names[0]}"`) ? reset() : undefined));
    await env.DB.prepare(`DELETE FROM worker_queues WHERE task_name > ?`).bind(names[9]).run();
    const whole = await listWith(few.binding, "/api/tasks/queue/all");
    expect(Object.keys(await whole.json<Record<string, number>>())).toEqual(names.slice(0, 10));
    expect(few.calls()).toBe(11);
    expect(whole.headers.get(LEFT_OUT_HEADER)).toBeNull();
    } finally {
      await unlist();
    }
  });
});

describe("task workers: one queue's size (Conductor's /api/tasks/queue/size, the Java client's getQueueSizeForTask)", () => {
  it("answers the number of tasks waiting in a task type's queue of a domain (the default without one), to callers who may read that task type", async () => {
    await register({ name: "w_size", tasks: [simpleTask("w_size_task")] });
    await startWorkflow("w_size");
    await apiOk<string>("POST", "/api/workflow", { name: "w_size", taskToDomain: { w_size_task: "gpu" } });
    await apiOk<string>("POST", "/api/workflow", { name: "w_size", taskToDomain: { w_size_task: "gpu" } });
    const size = (query: string) => apiOk<number>("GET", `/api/tasks/queue/size?${query}`);
    expect(await eventually(() => size("taskType=w_size_task&domain=gpu"), (n) => n === 2, "both gpu tasks queued")).toBe(2);
    expect(await eventually(() => size("taskType=w_size_task"), (n) => n === 1, "the default domain's task queued")).toBe(1);
    expect(await size("taskType=w_size_task&domain=NO_DOMAIN")).toBe(1);
    expect(await size("taskType=w_size_task&domain=eu")).toBe(0);
    expect((await api("GET", "/api/tasks/queue/size")).status).toBe(400);
    const reader = await createUser("w-size-reader", { directPermissions: [{ action: "TASK_READ", scope: "task:w_size_task" }] });
    const other = await createUser("w-size-other", { directPermissions: [{ action: "TASK_READ", scope: "task:w_size_elsewhere" }] });
    const asked = await call("GET", "/api/tasks/queue/size?taskType=w_size_task&domain=gpu", orkes(reader.token));
    expect([asked.status, await asked.json()]).toEqual([200, 2]);
    expect((await call("GET", "/api/tasks/queue/size?taskType=w_size_task", orkes(other.token))).status).toBe(403);
  });

  it("a removed workflow's task leaves its queue's size: the removal waits (409) while taking it out is still owed", async () => {
    await register({ name: "w_size_removed", tasks: [simpleTask("w_size_removed")] });
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "w_size_removed", taskToDomain: { w_size_removed: "gpu" } });
    const size = () => apiOk<number>("GET", "/api/tasks/queue/size?taskType=w_size_removed&domain=gpu");
    await eventually(size, (n) => n === 1, "the task queued");
    const { remove } = TaskQueue.prototype;
    TaskQueue.prototype.remove = async function () {
      throw new Error("queue unreachable (test)");
    };
    try {
      expect((await api("DELETE", `/api/workflow/${workflowId}?reason=done`)).status).toBe(200);
      // The terminated workflow owes its queue the task's removal; removed now, nobody would make it (it answered 200
      // and the queue counted the task until a worker's poll came to it). Conductor's removeWorkflow takes each task
      // out of its queue.
      const refused = await api("DELETE", `/api/workflow/${workflowId}/remove`);
      expect(refused.status).toBe(409);
      expect(((await refused.json()) as { message: string }).message).toContain("still taking its tasks out of their worker queues");
      expect(await size()).toBe(1);
    } finally {
      TaskQueue.prototype.remove = remove;
    }
    // Tried again by the removal itself: the task leaves the queue, then the workflow goes.
    expect((await api("DELETE", `/api/workflow/${workflowId}/remove`)).status).toBe(200);
    expect(await size()).toBe(0);
    expect((await api("GET", `/api/workflow/${workflowId}`)).status).toBe(404);
  });
});

describe("task workers: poll data", () => {
  interface PollDataJson {
    queueName: string;
    domain?: string;
    workerId: string;
    lastPollTime: number;
  }
  const pollData = (taskType: string) => apiOk<PollDataJson[]>("GET", `/api/tasks/queue/polldata?taskType=${encodeURIComponent(taskType)}`);

  it("lists each named worker's latest poll of a task type, in any domain, the most recent first, and keeps it through an eviction", async () => {
    expect(await pollData("w_pd_task")).toEqual([]);
    const before = Date.now();
    await poll("w_pd_task", { workerid: "pd-a" });
    await poll("w_pd_task", { workerid: "pd-b", timeout: "50" });
    await poll("w_pd_task", { workerid: "pd-c", domain: "gpu" });
    // A poll without a worker id is no worker's.
    await api("GET", "/api/tasks/poll/w_pd_task");
    const listed = await eventually(() => pollData("w_pd_task"), (polls) => polls.length === 3, "three workers' polls");
    // queueName is the task type in every domain, as Conductor's stores write PollData (new PollData(taskDefName, domain,
    // workerId, now)) and Orkes documents it: a client keeping the rows whose queueName is its task type keeps pd-c too.
    expect(listed.map((entry) => [entry.workerId, entry.queueName, entry.domain]).sort()).toEqual([
      ["pd-a", "w_pd_task", undefined],
      ["pd-b", "w_pd_task", undefined],
      ["pd-c", "w_pd_task", "gpu"],
    ]);
    // The default domain's poll has no domain key at all: Conductor's UI finds a task's worker by `domain === undefined`.
    expect(Object.keys(listed.find((entry) => entry.workerId === "pd-a")!).sort()).toEqual(["lastPollTime", "queueName", "workerId"]);
    for (const entry of listed) expect(entry.lastPollTime).toBeGreaterThanOrEqual(before);
    expect(listed.map((entry) => entry.lastPollTime)).toEqual([...listed.map((entry) => entry.lastPollTime)].sort((a, b) => b - a));
    // A worker's next poll moves its time; it stays one entry.
    const first = listed.find((entry) => entry.workerId === "pd-a")!.lastPollTime;
    await new Promise((resolve) => setTimeout(resolve, 5));
    await poll("w_pd_task", { workerid: "pd-a" });
    const again = await pollData("w_pd_task");
    expect(again).toHaveLength(3);
    expect(again[0]).toMatchObject({ workerId: "pd-a" });
    expect(again[0]!.lastPollTime).toBeGreaterThan(first);
    await abortAllDurableObjects();
    expect((await pollData("w_pd_task")).map((entry) => entry.workerId).sort()).toEqual(["pd-a", "pd-b", "pd-c"]);
    // Another task type's workers are its own.
    expect(await pollData("w_pd_other")).toEqual([]);
  });

  it("answers a poll data request without a task type with every task type's (the Java client's getAllPollData), and refuses one too long to be any", async () => {
    await poll("w_pd_every", { workerid: "pd-every" });
    const every = await eventually(() => apiOk<PollDataJson[]>("GET", "/api/tasks/queue/polldata"), (polls) => polls.some((entry) => entry.workerId === "pd-every"), "the poll listed");
    expect(every).toEqual(await apiOk<PollDataJson[]>("GET", "/api/tasks/queue/polldata/all"));
    const response = await api("GET", `/api/tasks/queue/polldata?taskType=${"x".repeat(300)}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ status: 400, message: expect.stringContaining("Invalid query parameter taskType"), validationErrors: [{ path: "taskType" }] });
  });

  it("shows a reader of some task types (TASK_READ on task:<name>) their queues and polls only, and refuses another type's by name", async () => {
    await register({ name: "w_scope", tasks: [simpleTask("w_scope_mine"), simpleTask("w_scope_theirs")] });
    await startWorkflow("w_scope");
    await poll("w_scope_mine_idle", { workerid: "scope-mine" });
    await poll("w_scope_theirs_idle", { workerid: "scope-theirs" });
    await eventually(() => apiOk<Record<string, number>>("GET", "/api/tasks/queue/all"), (sizes) => sizes["w_scope_mine"] === 1 && "w_scope_theirs_idle" in sizes, "the queues listed");
    const reader = await createUser("w-scope-reader", { directPermissions: [{ action: "TASK_READ", scope: "task:w_scope_mine*" }] });
    const asReader = async <T>(path: string, status = 200): Promise<T> => {
      const response = await call("GET", path, orkes(reader.token));
      expect(response.status, path).toBe(status);
      return (await response.json()) as T;
    };
    for (const path of ["/api/tasks/queue/all", "/api/tasks/queue/all/verbose"]) {
      const sizes = await asReader<Record<string, unknown>>(path);
      expect(Object.keys(sizes).filter((name) => name.startsWith("w_scope")).sort(), path).toEqual(["w_scope_mine", "w_scope_mine_idle"]);
      expect(Object.keys(sizes).every((name) => name.startsWith("w_scope_mine")), path).toBe(true);
    }
    for (const path of ["/api/tasks/queue/polldata/all", "/api/tasks/queue/polldata"]) {
      const workers = (await asReader<PollDataJson[]>(path)).map((entry) => entry.workerId);
      expect(workers, path).toContain("scope-mine");
      expect(workers, path).not.toContain("scope-theirs");
    }
    expect(await asReader("/api/tasks/queue/sizes?taskType=w_scope_mine")).toEqual({ w_scope_mine: 1 });
    expect((await asReader<PollDataJson[]>("/api/tasks/queue/polldata?taskType=w_scope_mine_idle")).map((entry) => entry.workerId)).toEqual(["scope-mine"]);
    const refused = await asReader<{ error: string; message: string }>("/api/tasks/queue/sizes?taskType=w_scope_mine&taskType=w_scope_theirs", 403);
    expect(refused).toMatchObject({ error: "PERMISSION_DENIED", message: expect.stringMatching(/not held for w_scope_theirs$/) });
    await asReader("/api/tasks/queue/polldata?taskType=w_scope_theirs_idle", 403);
    // A caller who may read no task at all is refused the queues.
    const executor = await createUser("w-scope-executor", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:w_scope_mine" }] });
    expect((await call("GET", "/api/tasks/queue/all", orkes(executor.token))).status).toBe(403);
    expect((await call("GET", "/api/tasks/queue/all/verbose", orkes(executor.token))).status).toBe(403);
  });
});

describe("task workers: a batch poll over several executions", () => {
  it("answers each task taken by its own execution's word: a running one's tasks handed out (one call for both), a paused one's kept, a missing secret's task failed", async () => {
    await apiOk("PUT", "/api/secrets/w_mix_token", JSON.stringify("mix-s3cr3t-value"));
    const fork = {
      name: "fan",
      taskReferenceName: "fan",
      type: "FORK_JOIN",
      forkTasks: [[simpleTask("w_mix_task", "plain", { n: "${workflow.input.n}" })], [simpleTask("w_mix_task", "keyed", { token: "${workflow.secrets.w_mix_token}" })]],
    };
    await register({ name: "w_mix_fork", tasks: [fork, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["plain", "keyed"] }] });
    await register({ name: "w_mix_missing", tasks: [simpleTask("w_mix_task", "missing", { token: "${workflow.secrets.w_mix_never_defined}" })] });
    // A fork whose other branch names the missing secret: its failure ends the workflow, so its sibling is not handed out.
    const doomedFork = { ...fork, forkTasks: [[simpleTask("w_mix_task", "sibling")], [simpleTask("w_mix_task", "doomed", { token: "${workflow.secrets.w_mix_never_defined}" })]] };
    await register({ name: "w_mix_doomed", tasks: [doomedFork, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["sibling", "doomed"] }] });
    const running = await startWorkflow("w_mix_fork", { n: 1 });
    const paused = await startWorkflow("w_mix_fork", { n: 2 });
    const missing = await startWorkflow("w_mix_missing");
    const doomed = await startWorkflow("w_mix_doomed");
    await eventually(() => queueSize("w_mix_task"), (size) => size === 7, "the seven tasks queued");
    await apiOk("PUT", `/api/workflow/${paused}/pause`, undefined, 200);

    const tasks = await poll("w_mix_task", { count: "10" });
    expect(tasks.map((task) => task["workflowInstanceId"])).toEqual([running, running]);
    const byRef = Object.fromEntries(tasks.map((task) => [task["referenceTaskName"], task]));
    expect(byRef["plain"]).toMatchObject({ status: "IN_PROGRESS", inputData: { n: 1 }, workerId: "worker-1", pollCount: 1 });
    // The worker gets the secret's value; the stored input keeps it masked.
    expect(byRef["keyed"]).toMatchObject({ status: "IN_PROGRESS", inputData: { token: "mix-s3cr3t-value" }, workerId: "worker-1", pollCount: 1 });
    const stored = await getWorkflow(running);
    expect(JSON.stringify(stored)).not.toContain("mix-s3cr3t-value");
    expect(stored.tasks.filter((task) => task.taskType === "w_mix_task").map((task) => task.status)).toEqual(["IN_PROGRESS", "IN_PROGRESS"]);
    // The paused execution's tasks wait, not polled.
    const held = await getWorkflow(paused);
    expect(held.tasks.filter((task) => task.taskType === "w_mix_task").map((task) => [task.status, task["pollCount"]])).toEqual([
      ["SCHEDULED", 0],
      ["SCHEDULED", 0],
    ]);
    // The task whose secret is missing is failed, never handed out.
    const failed = await waitFor(missing, ["FAILED"]);
    expect(failed.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "Task input references an unknown secret: secret 'w_mix_never_defined' is not defined" });
    expect(failed.tasks[0]!["workerId"]).toBeUndefined();
    const ended = await waitFor(doomed, ["FAILED"]);
    const byName = Object.fromEntries(ended.tasks.map((task) => [task.referenceTaskName, task]));
    expect(byName["doomed"]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "Task input references an unknown secret: secret 'w_mix_never_defined' is not defined" });
    expect(byName["sibling"]).toMatchObject({ status: "CANCELED", pollCount: 0 });

    // Resumed, the paused execution's tasks are handed out in turn; the running one goes on with its results.
    await apiOk("PUT", `/api/workflow/${paused}/resume`, undefined, 200);
    const later = await eventually(() => poll("w_mix_task", { count: "10", timeout: "1000" }), (got) => got.length > 0, "the resumed execution's tasks");
    expect(new Set(later.map((task) => task["workflowInstanceId"]))).toEqual(new Set([paused]));
    for (const task of tasks) expect((await report(task, "COMPLETED", { done: task["referenceTaskName"] as string })).status).toBe(200);
    expect((await waitFor(running, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });
});

describe("task workers: a batch poll's secrets", () => {
  it("reads the secrets of all the tasks a batch poll takes from one execution in one D1 query, not one per task (50 queries is all an invocation has on Workers Free)", async () => {
    await apiOk("PUT", "/api/secrets/w_batch_secret_a", JSON.stringify("batch-value-a"));
    await apiOk("PUT", "/api/secrets/w_batch_secret_b", JSON.stringify("batch-value-b"));
    const branch = (ref: string, secret: string): JsonObject[] => [simpleTask("w_batch_secret_task", ref, { token: `\${workflow.secrets.${secret}}` })];
    const fork = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [branch("one", "w_batch_secret_a"), branch("two", "w_batch_secret_b"), branch("three", "w_batch_secret_a")] };
    await register({ name: "w_batch_secrets", tasks: [fork, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["one", "two", "three"] }] });
    const workflowId = await startWorkflow("w_batch_secrets");
    await eventually(() => queueSize("w_batch_secret_task"), (size) => size === 3, "the three tasks queued");
    // Counted where the query is made: the D1 binding's prepare, whose class the object's binding shares.
    const database = Object.getPrototypeOf(env.DB) as { prepare: (this: unknown, query: string) => unknown };
    const { prepare } = database;
    let secretQueries = 0;
    database.prepare = function (this: unknown, query: string) {
      if (/FROM secrets/i.test(query)) secretQueries++;
      return prepare.call(this, query);
    };
    let tasks: JsonObject[];
    try {
      tasks = await poll("w_batch_secret_task", { count: "10" });
    } finally {
      database.prepare = prepare;
    }
    expect(secretQueries).toBe(1);
    expect(tasks.every((task) => task["workflowInstanceId"] === workflowId)).toBe(true);
    const byRef = Object.fromEntries(tasks.map((task) => [task["referenceTaskName"], task["inputData"]]));
    // Each task gets the values of its own secrets.
    expect(byRef).toEqual({ one: { token: "batch-value-a" }, two: { token: "batch-value-b" }, three: { token: "batch-value-a" } });
  });

  it("hands out the other tasks of a fork at once when one task's input cannot be read (its secrets' D1 query fails): only that one comes back after its lease", async () => {
    await apiOk("PUT", "/api/secrets/w_unread_secret", JSON.stringify("unread-value"));
    const fork = {
      name: "fan",
      taskReferenceName: "fan",
      type: "FORK_JOIN",
      forkTasks: [[simpleTask("w_unread_task", "plain_a", { n: 1 })], [simpleTask("w_unread_task", "keyed", { token: "${workflow.secrets.w_unread_secret}" })], [simpleTask("w_unread_task", "plain_b", { n: 2 })]],
    };
    await register({ name: "w_unread", tasks: [fork, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["plain_a", "keyed", "plain_b"] }] });
    const workflowId = await startWorkflow("w_unread");
    await eventually(() => queueSize("w_unread_task"), (size) => size === 3, "the three tasks queued");
    // The secrets' query fails where it is made (the D1 binding's prepare, whose class the object's binding shares).
    const database = Object.getPrototypeOf(env.DB) as { prepare: (this: unknown, query: string) => unknown };
    const { prepare } = database;
    database.prepare = function (this: unknown, query: string) {
      if (/FROM secrets/i.test(query)) throw new Error("D1_ERROR: injected for the test");
      return prepare.call(this, query);
    };
    let tasks: JsonObject[];
    try {
      tasks = await poll("w_unread_task", { count: "10" });
    } finally {
      database.prepare = prepare;
    }
    expect(tasks.map((task) => task["referenceTaskName"]).sort()).toEqual(["plain_a", "plain_b"]);
    // The unread one is neither handed out nor failed: it still waits, its entry leased.
    const stored = await getWorkflow(workflowId);
    expect(stored.tasks.filter((task) => task.taskType === "w_unread_task").map((task) => [task.referenceTaskName, task.status, task["pollCount"]])).toEqual([
      ["plain_a", "IN_PROGRESS", 1],
      ["keyed", "SCHEDULED", 0],
      ["plain_b", "IN_PROGRESS", 1],
    ]);
    expect(await queueSize("w_unread_task")).toBe(1);
    expect(await poll("w_unread_task", { count: "10" })).toEqual([]);
    // Its lease run out (moved forward rather than waited for), the next poll hands it out with its secret.
    await runInDurableObject(taskQueueAt(env, workerQueueKey("w_unread_task", undefined)), (_instance, state) => {
      state.storage.sql.exec(`UPDATE entries SET visible_at = 0`);
    });
    const [keyed] = await poll("w_unread_task", { count: "10" });
    expect(keyed).toMatchObject({ referenceTaskName: "keyed", status: "IN_PROGRESS", inputData: { token: "unread-value" }, pollCount: 1 });
  });

  /** A fork of a plain task and an optional one whose `keyed` input the worker gets with secret `secret`'s value. */
  async function forkWithKeyed(name: string, keyed: JsonObject): Promise<string> {
    const fork = {
      name: "fan",
      taskReferenceName: "fan",
      type: "FORK_JOIN",
      forkTasks: [[simpleTask(`${name}_task`, "plain", { n: 1 })], [simpleTask(`${name}_task`, "keyed", keyed, { optional: true })]],
    };
    await register({ name, tasks: [fork, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["plain", "keyed"] }] });
    const workflowId = await startWorkflow(name);
    await eventually(() => queueSize(`${name}_task`), (size) => size === 2, "the two tasks queued");
    return workflowId;
  }

  it("fails a task whose input, with its secrets' values, is over MAX_PAYLOAD_BYTES, instead of handing it out in an answer too large to return: the plain sibling is handed out", async () => {
    await apiOk("PUT", "/api/secrets/w_huge_secret", JSON.stringify("s".repeat(64 * 1024)));
    // 3 bytes each as stored (***); 520 times 64 KiB (over the 32 MiB of an RPC answer) as the worker would get it.
    const keyed = Object.fromEntries(Array.from({ length: 520 }, (_, index) => [`k${index}`, "${workflow.secrets.w_huge_secret}"]));
    const workflowId = await forkWithKeyed("w_huge", keyed);
    const tasks = await poll("w_huge_task", { count: "10" });
    expect(tasks.map((task) => task["referenceTaskName"])).toEqual(["plain"]);
    const stored = await getWorkflow(workflowId);
    const byRef = Object.fromEntries(stored.tasks.map((task) => [task.referenceTaskName, task]));
    // Failed, never handed out (optional, so COMPLETED_WITH_ERRORS, and the workflow goes on).
    expect(byRef["keyed"]).toMatchObject({ status: "COMPLETED_WITH_ERRORS", pollCount: 0 });
    expect(byRef["keyed"]!.reasonForIncompletion).toMatch(/^The input with the secrets' values is (more than )?\d+ bytes, over the limit of \d+ bytes \(MAX_PAYLOAD_BYTES\)$/);
    expect(await queueSize("w_huge_task")).toBe(0);
  });

  it("fails a task whose input cannot be built with its secrets' values (a text longer than a string can be), instead of holding it back at every poll", async () => {
    await apiOk("PUT", "/api/secrets/w_long_secret", JSON.stringify("l".repeat(64 * 1024)));
    // 8,200 times 64 KiB in one text: past the longest string the runtime makes (2^29 - 24 characters).
    const workflowId = await forkWithKeyed("w_long", { text: "${workflow.secrets.w_long_secret}".repeat(8_200) });
    const tasks = await poll("w_long_task", { count: "10" });
    expect(tasks.map((task) => task["referenceTaskName"])).toEqual(["plain"]);
    const stored = await getWorkflow(workflowId);
    const keyed = stored.tasks.find((task) => task.referenceTaskName === "keyed")!;
    expect(keyed).toMatchObject({ status: "COMPLETED_WITH_ERRORS", pollCount: 0 });
    // The text stops as it passes MAX_PAYLOAD_BYTES while it is built, long before the runtime's longest string.
    expect(keyed.reasonForIncompletion).toBe(
      `Invalid task input: expression too costly to evaluate: the text it writes its values into is over the limit of ${768 * 1024} bytes (MAX_PAYLOAD_BYTES); stopped as it passed it`,
    );
    expect(await queueSize("w_long_task")).toBe(0);
  });

  it("measures a task's input with its secrets' values without writing it out: a sibling's output it reads 100 times (numbers, few characters of text) fails it", async () => {
    await apiOk("PUT", "/api/secrets/w_nums_secret", JSON.stringify("n-value"));
    // Scheduled with the fork, it read nothing of the producer's output; polled after it, it reads 100 times 200 KB.
    const keyed = { token: "${workflow.secrets.w_nums_secret}", ...Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`n${index}`, "${producer.output.nums}"])) };
    const fork = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[simpleTask("w_nums_producer", "producer")], [simpleTask("w_nums_task", "keyed", keyed, { optional: true })]] };
    await register({ name: "w_nums", tasks: [fork, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["producer", "keyed"] }] });
    const workflowId = await startWorkflow("w_nums");
    const producer = await pollOne("w_nums_producer");
    expect((await report(producer, "COMPLETED", { nums: Array(100_000).fill(0) })).status).toBe(200);
    // The object runs in this isolate: what it writes out is seen here.
    const stringify = vi.spyOn(JSON, "stringify");
    let written: number[] = [];
    try {
      expect(await poll("w_nums_task", { count: "10" })).toEqual([]);
      written = stringify.mock.results.map((result) => (typeof result.value === "string" ? result.value.length : 0));
    } finally {
      stringify.mockRestore();
    }
    expect(Math.max(0, ...written)).toBeLessThan(4_000_000);
    const stored = await getWorkflow(workflowId);
    const failed = stored.tasks.find((task) => task.referenceTaskName === "keyed")!;
    expect(failed).toMatchObject({ status: "COMPLETED_WITH_ERRORS", pollCount: 0 });
    // Some 20 MB as JSON: counted only until past 8 times the limit, never written out.
    expect(failed.reasonForIncompletion).toBe(`The input with the secrets' values is more than ${8 * 768 * 1024} bytes, over the limit of ${768 * 1024} bytes (MAX_PAYLOAD_BYTES)`);
  });

  it("hands out a wide fork whose inputs with their secrets' values are over an RPC answer together in parts: those past the poll's answer go back to the queue at once, none is lost", async () => {
    await apiOk("PUT", "/api/secrets/w_wide_secret", JSON.stringify("w".repeat(64 * 1024)));
    // Each input 11 times 64 KiB with the value (under MAX_PAYLOAD_BYTES), 48 of them 34 MB: over the 32 MiB of an RPC answer.
    const keyed = Object.fromEntries(Array.from({ length: 11 }, (_, index) => [`k${index}`, "${workflow.secrets.w_wide_secret}"]));
    const branches = Array.from({ length: 48 }, (_, index) => [simpleTask("w_wide_task", `wide_${index}`, keyed)]);
    const fork = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: branches };
    await register({ name: "w_wide", tasks: [fork, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: branches.map((branch) => branch[0]!["taskReferenceName"] as string) }] });
    const workflowId = await startWorkflow("w_wide");
    await eventually(() => queueSize("w_wide_task"), (size) => size === 48, "the 48 tasks queued");
    const first = await poll("w_wide_task", { count: "100" });
    expect(first.length).toBeGreaterThan(0);
    expect(first.length).toBeLessThan(48);
    expect(first.every((task) => (task["inputData"] as JsonObject)["k0"] === "w".repeat(64 * 1024))).toBe(true);
    // The others still wait, SCHEDULED and never polled, their entries back in the queue: the next polls hand them out.
    const stored = await getWorkflow(workflowId);
    const waiting = stored.tasks.filter((task) => task.taskType === "w_wide_task" && task.status === "SCHEDULED");
    expect(waiting.length).toBe(48 - first.length);
    expect(waiting.every((task) => task["pollCount"] === 0)).toBe(true);
    let handedOut = first.length;
    for (let round = 0; round < 5 && handedOut < 48; round++) {
      const next = await poll("w_wide_task", { count: "100" });
      expect(next.length).toBeGreaterThan(0);
      handedOut += next.length;
    }
    expect(handedOut).toBe(48);
  });

  it("a batch poll answers tasks of at most the poll's budget of inputs (16 of MAX_PAYLOAD_BYTES, at most 16 MiB); the entries past it go back to the queue, handed out by the next poll at once", async () => {
    await register({ name: "w_bulky", tasks: [simpleTask("w_bulky_task", "bulky", { blob: "${workflow.input.blob}" })] });
    // 20 executions, each one task of 700 KiB of input (under the 768 KiB of MAX_PAYLOAD_BYTES): 14 MB together, over
    // the poll's 12 MiB, which a router isolate holds a few times over within its 128 MB.
    const blob = "b".repeat(700 * 1024);
    const workflowIds = await Promise.all(Array.from({ length: 20 }, () => startWorkflow("w_bulky", { blob })));
    await eventually(() => queueSize("w_bulky_task"), (size) => size === 20, "the 20 tasks queued");
    const budget = pollAnswerBudget(DEFAULT_ENGINE_CONFIG.maxPayloadBytes);
    const inputBytes = JSON.stringify({ blob }).length;
    const first = await poll("w_bulky_task", { count: "20" });
    // As many as the budget holds (17), less one at most for the tasks' other fields: not all 20.
    expect(first.length).toBeGreaterThanOrEqual(Math.floor(budget / inputBytes) - 1);
    expect(first.length * inputBytes).toBeLessThanOrEqual(budget);
    expect(first.every((task) => (task["inputData"] as JsonObject)["blob"] === blob)).toBe(true);
    // The others were never offered: SCHEDULED, never polled, and back in the queue now, not after a lease.
    const polled = new Set(first.map((task) => task["workflowInstanceId"] as string));
    const others = await Promise.all(workflowIds.filter((id) => !polled.has(id)).map((id) => getWorkflow(id)));
    expect(others.length).toBe(20 - first.length);
    expect(others.every((workflow) => workflow.tasks[0]!.status === "SCHEDULED" && workflow.tasks[0]!["pollCount"] === 0)).toBe(true);
    const rest = await poll("w_bulky_task", { count: "20" });
    expect(rest.map((task) => task["workflowInstanceId"]).sort()).toEqual(others.map((workflow) => workflow.workflowId).sort());
  });

  it("a batch poll offers the tasks past their executions' shares again in one round, all those executions at once, not one execution after another", async () => {
    await register({ name: "w_rounds", tasks: [simpleTask("w_rounds_task", "rounds", { blob: "${workflow.input.blob}" })] });
    // 20 executions of one 700 KiB input each: over each one's share of the 12 MiB (a twentieth), so all but the first
    // answer "unsent" in the first round, and 16 of them fit in what the first left.
    const blob = "r".repeat(700 * 1024);
    await Promise.all(Array.from({ length: 20 }, () => startWorkflow("w_rounds", { blob })));
    await eventually(() => queueSize("w_rounds_task"), (size) => size === 20, "the 20 tasks queued");
    // Each call to an execution waits at the gate of its round, opened by the test (flags polled: see `gate`).
    const rounds = { arrived: [0, 0, 0], opened: 0, current: 0 };
    const { pollTasks } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.pollTasks = async function (this: WorkflowExecution, ...args: Parameters<WorkflowExecution["pollTasks"]>) {
      const round = Math.min(rounds.current, 2);
      rounds.arrived[round]!++;
      for (let i = 0; i < 2000 && rounds.opened <= round; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      return pollTasks.apply(this, args);
    };
    let polled: Promise<TaskJson[]> | undefined;
    try {
      polled = poll("w_rounds_task", { count: "20" });
      await eventually(async () => rounds.arrived[0], (arrived) => arrived === 20, "the first round's 20 calls");
      rounds.current = 1;
      rounds.opened = 1;
      // The second round: the 16 that fit asked at once (one at a time, the second would wait for the first's answer).
      await eventually(async () => rounds.arrived[1], (arrived) => arrived === 16, "the second round's 16 calls at once", 3_000);
    } finally {
      rounds.current = 2;
      rounds.opened = 3;
      WorkflowExecution.prototype.pollTasks = pollTasks;
    }
    const first = await polled;
    expect(first.length).toBe(17);
    expect(rounds.arrived[2]).toBe(0);
    expect(await poll("w_rounds_task", { count: "20" })).toHaveLength(3);
  });

  it("a batch poll writes each task's input out once, to measure it, and answers that text in its Task JSON (with its secrets' values or without), the fields in their usual order", async () => {
    await apiOk("PUT", "/api/secrets/w_once_secret", JSON.stringify("once-value"));
    const fork = {
      name: "fan",
      taskReferenceName: "fan",
      type: "FORK_JOIN",
      forkTasks: [[simpleTask("w_once_task", "plain", { once_blob: "${workflow.input.blob}" })], [simpleTask("w_once_task", "secret", { once_blob: "${workflow.input.blob}", token: "${workflow.secrets.w_once_secret}" })]],
    };
    await register({ name: "w_once", tasks: [fork, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["plain", "secret"] }] });
    const blob = `once-${"o".repeat(50 * 1024)}`;
    await startWorkflow("w_once", { blob });
    await eventually(() => queueSize("w_once_task"), (size) => size === 2, "the 2 tasks queued");
    // Texts holding the input written out by the poll's execution for its answer: once to measure it, then within the
    // Task JSON, until that was built around the measured text.
    let written = 0;
    const { stringify } = JSON;
    JSON.stringify = function (value: unknown, ...rest: unknown[]) {
      const text = (stringify as (value: unknown, ...rest: unknown[]) => string)(value, ...rest);
      const stack = new Error().stack ?? "";
      // The hand-out's commit stores the tasks (their stored inputs) whatever the answer does: not counted.
      if (typeof text === "string" && text.includes(blob) && stack.includes("pollTasks") && !stack.includes("#commit")) written++;
      return text;
    } as typeof JSON.stringify;
    let tasks: TaskJson[];
    try {
      tasks = await poll("w_once_task", { count: "2" });
    } finally {
      JSON.stringify = stringify;
    }
    const byRef = Object.fromEntries(tasks.map((task) => [task["referenceTaskName"], task]));
    expect(byRef["plain"]!["inputData"]).toEqual({ once_blob: blob });
    expect(byRef["secret"]!["inputData"]).toEqual({ once_blob: blob, token: "once-value" });
    // As any other Task JSON of the task (the input masked there).
    for (const task of tasks) expect(Object.keys(task)).toEqual(Object.keys(await apiOk<TaskJson>("GET", `/api/tasks/${task.taskId}`)));
    expect(written).toBe(2);
  });

  it("a single poll and update-v2's next task do not write a task's input out to measure it: one task goes out whatever its size", async () => {
    await register({ name: "w_single", tasks: [simpleTask("w_single_task", "single", { single_blob: "${workflow.input.blob}" })] });
    const blob = "s".repeat(100 * 1024);
    const workflowIds = await Promise.all([startWorkflow("w_single", { blob }), startWorkflow("w_single", { blob })]);
    await eventually(() => queueSize("w_single_task"), (size) => size === 2, "the 2 tasks queued");
    // The inputs written out on their own by the poll's execution (the Task JSON writes out the whole task, the input
    // within it; the search index's background job writes inputs out too, whenever it runs).
    let inputsWritten = 0;
    const { stringify } = JSON;
    JSON.stringify = function (value: unknown, ...rest: unknown[]) {
      const input = typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).join() === "single_blob";
      if (input && new Error().stack?.includes("pollTasks") === true) inputsWritten++;
      return (stringify as (value: unknown, ...rest: unknown[]) => string)(value, ...rest);
    } as typeof JSON.stringify;
    let first: TaskJson;
    let next: TaskJson;
    try {
      first = await apiOk<TaskJson>("GET", "/api/tasks/poll/w_single_task?workerid=worker-1");
      next = await apiOk<TaskJson>("POST", "/api/tasks/update-v2", { workflowInstanceId: first["workflowInstanceId"], taskId: first["taskId"], status: "COMPLETED", outputData: {}, workerId: "worker-1" });
    } finally {
      JSON.stringify = stringify;
    }
    expect([first["workflowInstanceId"], next["workflowInstanceId"]].sort()).toEqual([...workflowIds].sort());
    expect((next["inputData"] as JsonObject)["single_blob"]).toBe(blob);
    expect(inputsWritten).toBe(0);
  });
});

describe("task workers: a queue entry lost while its task waits (Conductor's verifyAndRepair)", () => {
  it.each([
    ["PUT /api/workflow/decide/{workflowId}", "PUT", (id: string) => `/api/workflow/decide/${id}`, "decide"],
    ["POST /api/admin/consistency/verifyAndRepair/{workflowId}", "POST", (id: string) => `/api/admin/consistency/verifyAndRepair/${id}`, "repair"],
    ["POST /api/admin/sweep/requeue/{workflowId}", "POST", (id: string) => `/api/admin/sweep/requeue/${id}`, "sweep"],
  ])("%s puts each task still waiting for a poll back in its queue; a task a worker holds stays with it", async (_label, method, path, name) => {
    // Task types of each case's own, so that a case's tasks never meet another's in a queue.
    const [heldType, queuedType] = [`w_lost_held_${name}`, `w_lost_queued_${name}`];
    await register({ name: `w_lost_entry_${name}`, tasks: [{ name: "both", taskReferenceName: "both", type: "FORK_JOIN", forkTasks: [[simpleTask(heldType, "held")], [simpleTask(queuedType, "queued")]] }, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["held", "queued"] }] });
    const workflowId = await startWorkflow(`w_lost_entry_${name}`);
    const held = await pollOne(heldType);
    await eventually(() => queueSize(queuedType), (size) => size === 1, "the other task queued");
    // The queue's object lost its entry (its storage reset): nothing else would ever hand the task to a worker.
    await runInDurableObject(taskQueueAt(env, workerQueueKey(queuedType, undefined)), (_instance, state) => {
      state.storage.sql.exec(`DELETE FROM entries`);
    });
    expect(await poll(queuedType)).toEqual([]);
    const repaired = await api(method, path(workflowId));
    expect(repaired.status).toBe(200);
    const queued = await pollOne(queuedType);
    expect(queued.workflowInstanceId).toBe(workflowId);
    // The task its worker holds was not queued again: no second worker gets it.
    expect(await poll(heldType)).toEqual([]);
    expect((await report(held, "COMPLETED")).status).toBe(200);
    expect((await report(queued, "COMPLETED")).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });
});
