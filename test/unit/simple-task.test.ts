import { describe, expect, it } from "vitest";
import { awaitedDomainChoices, createExecution, nextDeadline, type Decision, type Effect } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { EngineError } from "../../src/engine/errors";
import type { TaskDef, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { chooseWorkerDomain, handOutLimits, leftWorkerQueues, workerPlacement, workerQueueKey, type WorkerQueueEntry } from "../../src/engine/tasks/simple";
import { admitted, type HandOutRoom } from "../../src/actors/hand-out-ledger";
import { toTaskView } from "../../src/engine/view";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import { env, taskDefNamed } from "./engine-env";

const taskDef = (fields: Partial<TaskDef>): TaskDef => taskDefNamed("encode", fields);

const encode: WorkflowTaskDef = { name: "encode", taskReferenceName: "encode_ref", type: "SIMPLE", inputParameters: { file: "${workflow.input.file}" } };

function started(task: WorkflowTaskDef = encode, extra: { taskToDomain?: Record<string, string>; priority?: number } = {}): Decision {
  const definition: WorkflowDef = { name: "media", version: 1, schemaVersion: 2, tasks: [task] };
  const execution = createExecution({ workflowId: "wf-1", definition, input: { file: "a.mp4" }, ...extra }, 1_000);
  return decide(execution, { type: "start" }, env(1_000));
}

function queued(effects: Effect[]): WorkerQueueEntry[] {
  return effects.flatMap((effect) => (effect.kind === "queueTask" ? [effect.entry] : []));
}

function poll(state: WorkflowExecution, now: number, workerId = "worker-1"): WorkflowExecution {
  return decide(state, { type: "taskPolled", taskId: state.tasks[0]!.taskId, workerId }, env(now)).state;
}

describe("SIMPLE tasks: waiting in a worker queue", () => {
  it("is registered like any task: no settings of its own to check", () => {
    const result = validateWorkflowDef({ name: "media", version: 1, schemaVersion: 2, tasks: [encode] });
    expect(result.ok).toBe(true);
  });

  it("is scheduled with its input resolved and put in the queue of its name, visible now", () => {
    const { state, effects } = started(encode, { priority: 7 });
    const task = state.tasks[0]!;
    expect(task).toMatchObject({ status: "SCHEDULED", inputData: { file: "a.mp4" }, startTime: 0, pollable: true });
    expect(queued(effects)).toEqual([{ queue: workerQueueKey("encode", undefined), taskId: task.taskId, workflowId: "wf-1", priority: 7, visibleAt: 1_000 }]);
    expect(effects.some((effect) => effect.kind === "dispatch")).toBe(false);
    // Nothing timed: it waits for a worker (no pollTimeoutSeconds), and the alarm is not armed for it.
    expect(nextDeadline(state)).toBeUndefined();
    // The Task JSON shows the task name as its type, as Conductor's workers poll it.
    expect(toTaskView(task, state)).toMatchObject({ taskType: "encode", status: "SCHEDULED", pollCount: 0, responseTimeoutSeconds: 3600 });
  });

  it("with a startDelay, is queued visible only once it has passed, showing it as callbackAfterSeconds; resetCallbacks makes it pollable at once", () => {
    const delayed = validateWorkflowDef({ name: "media", version: 1, schemaVersion: 2, tasks: [{ ...encode, startDelay: 30 }] });
    expect(delayed.ok && delayed.value.tasks[0]!.startDelay).toBe(30);
    const { state, effects } = started({ ...encode, startDelay: 30 });
    expect(queued(effects)[0]!.visibleAt).toBe(31_000);
    expect(toTaskView(state.tasks[0]!, state)).toMatchObject({ status: "SCHEDULED", callbackAfterSeconds: 30 });
    const reset = decide(state, { type: "resetCallbacks" }, env(2_000));
    expect(queued(reset.effects)[0]!.visibleAt).toBe(2_000);
    // Paused and resumed before it passed, it still waits it out; with fallback domains, from its scheduling too.
    const resumed = decide(decide(state, { type: "pause" }, env(5_000)).state, { type: "resume" }, env(6_000));
    expect(queued(resumed.effects)[0]!.visibleAt).toBe(31_000);
    // Its poll timeout counts from when it can be polled.
    const timed = started({ ...encode, startDelay: 30, taskDefinition: taskDef({ pollTimeoutSeconds: 10 }) }).state;
    expect(timed.tasks[0]!.timeoutAt).toBe(41_000);
    const choosing = started({ ...encode, startDelay: 30 }, { taskToDomain: { encode: "gpu,NO_DOMAIN" } });
    const chosen = decide(choosing.state, { type: "workerDomainsChosen", domains: { [choosing.state.tasks[0]!.taskId]: "gpu" } }, env(3_000));
    expect(queued(chosen.effects)[0]!.visibleAt).toBe(31_000);
  });

  it("waits out its startDelay on the first attempt only: a retry waits its retry delay, as Conductor's retry replaces the one with the other", () => {
    const withDef = { ...encode, startDelay: 30, taskDefinition: taskDef({ retryCount: 1, retryDelaySeconds: 10 }) };
    const polled = poll(started(withDef).state, 31_000);
    const failed = decide(polled, { type: "externalUpdate", taskId: polled.tasks[0]!.taskId, status: "FAILED", output: {} }, env(32_000));
    const retry = failed.state.tasks[1]!;
    expect(retry).toMatchObject({ status: "SCHEDULED", retryCount: 1, callbackAfterSeconds: 10 });
    expect(queued(failed.effects).filter((entry) => entry.taskId === retry.taskId).map((entry) => entry.visibleAt)).toEqual([42_000]);
    // Its startDelayInSeconds is that retry delay, as Conductor's DeciderService.retry() sets it, after its poll too.
    expect(toTaskView(retry, failed.state)).toMatchObject({ callbackAfterSeconds: 10, startDelayInSeconds: 10 });
    const taken = decide(failed.state, { type: "taskPolled", taskId: retry.taskId, workerId: "w" }, env(42_000)).state;
    expect(toTaskView(taken.tasks[1]!, taken)).toMatchObject({ callbackAfterSeconds: 0, startDelayInSeconds: 10 });
  });

  it("a retry is scheduled at once and waits out its retry delay in its queue, shown as its callbackAfterSeconds, as Conductor's retry() queues it; resetcallbacks releases it", () => {
    const withDef = { ...encode, taskDefinition: taskDef({ retryCount: 2, retryDelaySeconds: 60, pollTimeoutSeconds: 10, timeoutPolicy: "RETRY" }) };
    const polled = poll(started(withDef).state, 2_000);
    const failed = decide(polled, { type: "externalUpdate", taskId: polled.tasks[0]!.taskId, status: "FAILED", output: {} }, env(3_000));
    const retry = failed.state.tasks[1]!;
    // Scheduled now (not 60 s ahead), queued now, visible once the delay has passed; no alarm is armed for its start.
    expect(retry).toMatchObject({ status: "SCHEDULED", scheduledTime: 3_000, pollable: true, callbackAfterSeconds: 60, timeoutAt: 73_000 });
    expect(queued(failed.effects)).toEqual([{ queue: workerQueueKey("encode", undefined), taskId: retry.taskId, workflowId: "wf-1", priority: 0, visibleAt: 63_000 }]);
    expect(toTaskView(retry, failed.state)).toMatchObject({ status: "SCHEDULED", scheduledTime: 3_000, callbackAfterSeconds: 60, retryCount: 1 });
    expect(nextDeadline(failed.state)).toBe(73_000);
    // Paused and resumed meanwhile, it still waits the delay out.
    const resumed = decide(decide(failed.state, { type: "pause" }, env(5_000)).state, { type: "resume" }, env(6_000));
    expect(queued(resumed.effects).map((entry) => entry.visibleAt)).toEqual([63_000]);
    // Released: pollable at once, its callbackAfterSeconds 0; its poll timeout still counts from the delay's end, as
    // Conductor's checkTaskPollTimeout counts it from scheduledTime + startDelayInSeconds.
    const reset = decide(failed.state, { type: "resetCallbacks" }, env(4_000));
    expect(queued(reset.effects)).toEqual([{ queue: workerQueueKey("encode", undefined), taskId: retry.taskId, workflowId: "wf-1", priority: 0, visibleAt: 4_000 }]);
    expect(reset.state.tasks[1]).toMatchObject({ callbackAfterSeconds: 0, pollable: true, timeoutAt: 73_000 });
    expect(toTaskView(reset.state.tasks[1]!, reset.state).callbackAfterSeconds).toBe(0);
    const taken = decide(reset.state, { type: "taskPolled", taskId: retry.taskId, workerId: "w" }, env(4_500)).state;
    expect(taken.tasks[1]).toMatchObject({ status: "IN_PROGRESS", startTime: 4_500, pollCount: 1 });
    // Nothing left to release: a second resetcallbacks changes nothing.
    const again = decide(reset.state, { type: "resetCallbacks" }, env(4_100));
    expect(again.state).toBe(reset.state);
    expect(again.effects).toEqual([]);
  });

  it("a system task's retry (HTTP) waits for the execution's alarm, not in a queue: resetcallbacks leaves it, as Conductor's resetCallbacksForWorkflow takes no system task", () => {
    const call: WorkflowTaskDef = { name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { uri: "http://a.test/call", method: "GET" }, retryCount: 1, retryDelaySeconds: 60 };
    const state = started(call).state;
    const failed = decide(state, { type: "dispatchResult", taskId: state.tasks[0]!.taskId, attempt: state.tasks[0]!.attempt, status: "FAILED", output: {} }, env(1_200));
    const retry = failed.state.tasks[1]!;
    expect(retry).toMatchObject({ status: "SCHEDULED", scheduledTime: 61_200 });
    expect(retry.callbackAfterSeconds).toBeUndefined();
    expect(nextDeadline(failed.state)).toBe(61_200);
    const reset = decide(failed.state, { type: "resetCallbacks" }, env(2_000));
    expect(reset.state).toBe(failed.state);
    expect(reset.effects).toEqual([]);
  });

  it("a retry's delay with jitter is kept to the millisecond in its queue, and shown in whole seconds, rounded up", () => {
    const withDef = { ...encode, taskDefinition: taskDef({ retryCount: 1, retryDelaySeconds: 2, backoffJitterMs: 900 }) };
    const polled = poll(started(withDef).state, 2_000);
    const failed = decide(polled, { type: "externalUpdate", taskId: polled.tasks[0]!.taskId, status: "FAILED", output: {} }, env(3_000));
    const retry = failed.state.tasks[1]!;
    const visibleAt = queued(failed.effects)[0]!.visibleAt;
    expect(retry.callbackAfterSeconds).toBe((visibleAt - 3_000) / 1000);
    expect(visibleAt).toBeGreaterThanOrEqual(5_000);
    expect(visibleAt).toBeLessThanOrEqual(5_900);
    expect(toTaskView(retry, failed.state).callbackAfterSeconds).toBe(Math.ceil((visibleAt - 3_000) / 1000));
  });

  it("a retry still choosing among fallback domains keeps its delay, counted once it is queued, unless resetcallbacks ended it first", () => {
    const withDef = { ...encode, taskDefinition: taskDef({ retryCount: 1, retryDelaySeconds: 60 }) };
    const first = started(withDef, { taskToDomain: { encode: "gpu,NO_DOMAIN" } }).state;
    const chosen = decide(first, { type: "workerDomainsChosen", domains: { [first.tasks[0]!.taskId]: "gpu" } }, env(1_500)).state;
    const polled = poll(chosen, 2_000);
    const failed = decide(polled, { type: "externalUpdate", taskId: polled.tasks[0]!.taskId, status: "FAILED", output: {} }, env(3_000));
    const retry = failed.state.tasks[1]!;
    expect(retry).toMatchObject({ status: "SCHEDULED", callbackAfterSeconds: 60, domainChoices: ["gpu", "NO_DOMAIN"] });
    expect(queued(failed.effects)).toEqual([]);
    const choose = (state: WorkflowExecution) => decide(state, { type: "workerDomainsChosen", domains: { [retry.taskId]: "gpu" } }, env(3_500));
    expect(queued(choose(failed.state).effects).map((entry) => entry.visibleAt)).toEqual([63_000]);
    const reset = decide(failed.state, { type: "resetCallbacks" }, env(3_200));
    expect(reset.state.tasks[1]!.callbackAfterSeconds).toBe(0);
    expect(queued(reset.effects)).toEqual([]);
    expect(queued(choose(reset.state).effects).map((entry) => entry.visibleAt)).toEqual([3_500]);
  });

  it("a task run again by a workflow retry or a rerun chooses among its fallback domains again (deliberate: Conductor's keep the domain it had)", () => {
    const first = started(encode, { taskToDomain: { encode: "gpu,NO_DOMAIN" } }).state;
    const chosen = decide(first, { type: "workerDomainsChosen", domains: { [first.tasks[0]!.taskId]: "gpu" } }, env(1_500)).state;
    const polled = poll(chosen, 2_000);
    expect(polled.tasks[0]!.domain).toBe("gpu");
    const failed = decide(polled, { type: "externalUpdate", taskId: polled.tasks[0]!.taskId, status: "FAILED", output: {} }, env(3_000)).state;
    expect(failed.status).toBe("FAILED");
    const retried = decide(failed, { type: "retry" }, env(4_000));
    expect(retried.state.tasks[1]).toMatchObject({ status: "SCHEDULED", domainChoices: ["gpu", "NO_DOMAIN"] });
    expect(retried.state.tasks[1]!.domain).toBeUndefined();
    expect(queued(retried.effects)).toEqual([]);
    const rerun = decide(failed, { type: "rerun", fromTaskId: failed.tasks[0]!.taskId }, env(4_000));
    expect(rerun.state.tasks[0]).toMatchObject({ status: "SCHEDULED", domainChoices: ["gpu", "NO_DOMAIN"] });
    expect(rerun.state.tasks[0]!.domain).toBeUndefined();
    expect(queued(rerun.effects)).toEqual([]);
  });

  it("takes startDelay as Conductor does: a worker's task only, 0 being none; a negative one is refused", () => {
    const kept = (task: WorkflowTaskDef) => {
      const result = validateWorkflowDef({ name: "media", version: 1, schemaVersion: 2, tasks: [task] });
      return result.ok ? result.value.tasks[0]!.startDelay : "refused";
    };
    expect(kept({ ...encode, startDelay: 0 })).toBeUndefined();
    expect(kept({ name: "w", taskReferenceName: "w", type: "WAIT", inputParameters: {}, startDelay: 5 })).toBeUndefined();
    expect(kept({ ...encode, startDelay: -1 })).toBe("refused");
    expect(kept({ ...encode, startDelay: 86_401 })).toBe("refused");
  });

  it("goes to the domain taskToDomain gives its name, or `*`'s, and never to a key another name and domain share", () => {
    expect(queued(started(encode, { taskToDomain: { encode: "gpu" } }).effects)[0]!.queue).toBe(workerQueueKey("encode", "gpu"));
    expect(queued(started(encode, { taskToDomain: { "*": "eu" } }).effects)[0]!.queue).toBe(workerQueueKey("encode", "eu"));
    expect(queued(started(encode, { taskToDomain: { other: "eu", "*": "NO_DOMAIN" } }).effects)[0]!.queue).toBe(workerQueueKey("encode", undefined));
    expect(workerQueueKey("b", "a")).not.toBe(workerQueueKey("a:b", undefined));
  });

  it("reads taskToDomain as Conductor does: comma-separated fallback domains, NO_DOMAIN (any case) for the default queue", () => {
    const placed = (value: string, name = "encode") => workerPlacement(started(encode, { taskToDomain: { [name]: value } }).state, "encode");
    expect(placed("gpu")).toEqual({ domain: "gpu" });
    expect(placed(" gpu ")).toEqual({ domain: "gpu" });
    expect(placed("no_domain")).toEqual({ domain: undefined });
    expect(placed("")).toEqual({ domain: undefined });
    // Only a domain before the last makes a choice: without one, the last is the answer whoever polls.
    expect(placed("NO_DOMAIN, gpu")).toEqual({ domain: "gpu" });
    expect(placed("gpu, NO_DOMAIN")).toEqual({ domainChoices: ["gpu", "NO_DOMAIN"] });
    expect(placed("a,,b")).toEqual({ domainChoices: ["a", "b"] });
    expect(placed("a,b", "*")).toEqual({ domainChoices: ["a", "b"] });
  });

  it("chooses among fallback domains as Conductor's documentation says: the first with active workers, else the last listed", () => {
    const active = (...domains: string[]) => (domain: string) => domains.includes(domain);
    // The example of Conductor's task-to-domain page.
    expect(chooseWorkerDomain(["someDomain", "NO_DOMAIN"], active("someDomain"))).toBe("someDomain");
    expect(chooseWorkerDomain(["someDomain", "NO_DOMAIN"], active())).toBeUndefined();
    expect(chooseWorkerDomain(["someInactiveDomain1", "someInactiveDomain2"], active())).toBe("someInactiveDomain2");
    expect(chooseWorkerDomain(["a", "b", "c"], active("c", "b"))).toBe("b");
    // NO_DOMAIN is the default queue's token, never a domain whose workers are looked for.
    expect(chooseWorkerDomain(["NO_DOMAIN", "b"], active("NO_DOMAIN"))).toBe("b");
  });

  it("with fallback domains it waits outside any queue until the choice is made, then goes to the chosen domain's queue", () => {
    const { state, effects } = started(encode, { taskToDomain: { encode: "gpu,NO_DOMAIN" }, priority: 3 });
    const task = state.tasks[0]!;
    expect(task).toMatchObject({ status: "SCHEDULED", domainChoices: ["gpu", "NO_DOMAIN"], awaitingExternal: true });
    expect(task.pollable).toBeUndefined();
    expect(queued(effects)).toEqual([]);
    expect(awaitedDomainChoices(state)).toEqual([{ taskId: task.taskId, taskName: "encode", choices: ["gpu", "NO_DOMAIN"] }]);
    // No poll can take it meanwhile, nor does the Task JSON show the list.
    expect(() => poll(state, 1_500)).toThrow(EngineError);
    expect(toTaskView(task, state)).not.toHaveProperty("domainChoices");
    const chosen = decide(state, { type: "workerDomainsChosen", domains: { [task.taskId]: "gpu" } }, env(2_000));
    expect(chosen.state.tasks[0]).toMatchObject({ domain: "gpu", pollable: true });
    expect(chosen.state.tasks[0]!.domainChoices).toBeUndefined();
    expect(queued(chosen.effects)).toEqual([{ queue: workerQueueKey("encode", "gpu"), taskId: task.taskId, workflowId: "wf-1", priority: 3, visibleAt: 2_000 }]);
    expect(awaitedDomainChoices(chosen.state)).toEqual([]);
    expect(toTaskView(chosen.state.tasks[0]!, chosen.state)).toMatchObject({ domain: "gpu" });
    expect(poll(chosen.state, 2_100).tasks[0]!.status).toBe("IN_PROGRESS");
    // None active and NO_DOMAIN last: the default queue.
    const fallback = decide(state, { type: "workerDomainsChosen", domains: { [task.taskId]: null } }, env(2_000));
    expect(fallback.state.tasks[0]!.domain).toBeUndefined();
    expect(queued(fallback.effects).map((entry) => entry.queue)).toEqual([workerQueueKey("encode", undefined)]);
    // A second answer (an asker from before an eviction) finds nothing left to choose.
    expect(decide(chosen.state, { type: "workerDomainsChosen", domains: { [task.taskId]: null } }, env(2_500)).state).toBe(chosen.state);
  });

  it("an IN_PROGRESS update while the domain is still being chosen keeps it out of any queue; the choice queues it after its callbackAfterSeconds", () => {
    const { state } = started(encode, { taskToDomain: { encode: "gpu,cpu" } });
    const task = state.tasks[0]!;
    const kept = decide(state, { type: "externalUpdate", taskId: task.taskId, status: "IN_PROGRESS", output: { progress: 1 }, callbackAfterSeconds: 5 }, env(1_500));
    // Not in the default queue, where no gpu or cpu worker would look.
    expect(queued(kept.effects)).toEqual([]);
    expect(kept.state.tasks[0]).toMatchObject({ status: "SCHEDULED", domainChoices: ["gpu", "cpu"], outputData: { progress: 1 } });
    expect(awaitedDomainChoices(kept.state)).toEqual([{ taskId: task.taskId, taskName: "encode", choices: ["gpu", "cpu"] }]);
    const chosen = decide(kept.state, { type: "workerDomainsChosen", domains: { [task.taskId]: "cpu" } }, env(2_000));
    expect(queued(chosen.effects)).toEqual([{ queue: workerQueueKey("encode", "cpu"), taskId: task.taskId, workflowId: "wf-1", priority: 0, visibleAt: 6_500 }]);
  });

  it("a task with fallback domains that ends first (terminated) is no longer waiting for a choice, and a late choice changes nothing", () => {
    const { state } = started(encode, { taskToDomain: { "*": "gpu,cpu" } });
    const terminated = decide(state, { type: "terminate" }, env(2_000)).state;
    expect(awaitedDomainChoices(terminated)).toEqual([]);
    expect(decide(terminated, { type: "workerDomainsChosen", domains: { [state.tasks[0]!.taskId]: "gpu" } }, env(3_000)).state).toBe(terminated);
  });

  it("a poll hands it to the worker: IN_PROGRESS, counted, with responseTimeoutSeconds to report", () => {
    const withDef = { ...encode, taskDefinition: taskDef({ responseTimeoutSeconds: 30 }) };
    const state = poll(started(withDef).state, 5_000);
    expect(state.tasks[0]).toMatchObject({ status: "IN_PROGRESS", startTime: 5_000, pollCount: 1, workerId: "worker-1", timeoutAt: 35_000 });
    expect(state.tasks[0]!.pollable).toBeUndefined();
    expect(nextDeadline(state)).toBe(35_000);
    // A second poll of the same task (a queue entry delivered twice) takes nothing.
    expect(() => poll(state, 6_000, "worker-2")).toThrow(EngineError);
  });

  it("a worker's result completes it and the workflow goes on; COMPLETED output is the task's", () => {
    const state = poll(started().state, 2_000);
    const done = decide(state, { type: "externalUpdate", taskId: state.tasks[0]!.taskId, status: "COMPLETED", output: { url: "s3://out" } }, env(3_000));
    expect(done.state.status).toBe("COMPLETED");
    expect(done.state.output).toEqual({ url: "s3://out" });
  });

  it("IN_PROGRESS with callbackAfterSeconds puts it back in the queue SCHEDULED, as Conductor's updateTask does, visible then; the next poll makes it IN_PROGRESS again", () => {
    const withDef = { ...encode, taskDefinition: taskDef({ responseTimeoutSeconds: 30 }) };
    const state = poll(started(withDef).state, 2_000);
    const taskId = state.tasks[0]!.taskId;
    const update = decide(state, { type: "externalUpdate", taskId, status: "IN_PROGRESS", output: { percent: 40 }, callbackAfterSeconds: 60, workerId: "worker-1" }, env(3_000));
    // Its start, worker, poll count and output stay; no responseTimeoutSeconds runs while no worker holds it.
    expect(update.state.tasks[0]).toMatchObject({ status: "SCHEDULED", pollable: true, callbackAfterSeconds: 60, outputData: { percent: 40 }, startTime: 2_000, workerId: "worker-1", pollCount: 1, updateTime: 3_000 });
    expect(update.state.tasks[0]!.timeoutAt).toBeUndefined();
    expect(nextDeadline(update.state)).toBeUndefined();
    expect(toTaskView(update.state.tasks[0]!, update.state)).toMatchObject({ status: "SCHEDULED", callbackAfterSeconds: 60, pollCount: 1, workerId: "worker-1", startTime: 2_000 });
    expect(queued(update.effects)).toMatchObject([{ taskId, visibleAt: 63_000 }]);
    // Long past its responseTimeoutSeconds, it still waits for its poll.
    const waited = decide(update.state, { type: "tick", liveTaskIds: new Set() }, env(500_000)).state;
    expect([waited.status, waited.tasks[0]!.status]).toEqual(["RUNNING", "SCHEDULED"]);
    const again = poll(waited, 500_500, "worker-2");
    expect(again.tasks[0]).toMatchObject({ status: "IN_PROGRESS", pollCount: 2, workerId: "worker-2", startTime: 2_000, callbackAfterSeconds: 0, timeoutAt: 530_500 });
    // Reported IN_PROGRESS before any poll, it goes back SCHEDULED too, still not started.
    const fresh = started(withDef).state;
    const early = decide(fresh, { type: "externalUpdate", taskId: fresh.tasks[0]!.taskId, status: "IN_PROGRESS", output: {}, callbackAfterSeconds: 5 }, env(2_000));
    expect(early.state.tasks[0]).toMatchObject({ status: "SCHEDULED", pollable: true, startTime: 0, callbackAfterSeconds: 5 });
    expect(queued(early.effects)).toMatchObject([{ visibleAt: 7_000 }]);
  });

  it("put back SCHEDULED, its pollTimeoutSeconds runs from the end of its callbackAfterSeconds, not (as Conductor's checkTaskPollTimeout) from its first scheduledTime", () => {
    const withDef = (fields: Partial<TaskDef>) => ({ ...encode, taskDefinition: taskDef({ responseTimeoutSeconds: 2, pollTimeoutSeconds: 10, ...fields }) });
    // Scheduled at 1 s, polled at 2 s, put back at 3 s for 5 s: overdue at 3 + 5 + 10 = 18 s.
    const state = poll(started(withDef({})).state, 2_000);
    const taskId = state.tasks[0]!.taskId;
    const back = decide(state, { type: "externalUpdate", taskId, status: "IN_PROGRESS", output: {}, callbackAfterSeconds: 5 }, env(3_000)).state;
    expect(back.tasks[0]).toMatchObject({ status: "SCHEDULED", timeoutAt: 18_000 });
    expect(nextDeadline(back)).toBe(18_000);
    // Its responseTimeoutSeconds (2 s) does not run meanwhile.
    expect(decide(back, { type: "tick", liveTaskIds: new Set() }, env(17_999)).state.tasks[0]!.status).toBe("SCHEDULED");
    // TIME_OUT_WF (the default): the workflow times out with it.
    const overdue = decide(back, { type: "tick", liveTaskIds: new Set() }, env(18_000)).state;
    expect(overdue.status).toBe("TIMED_OUT");
    expect(overdue.tasks[0]).toMatchObject({ status: "TIMED_OUT", reasonForIncompletion: "Task poll timed out after 10 seconds. Poll timeout configured as 10 seconds. Timeout policy configured to TIME_OUT_WF" });
    // Counted from the report, not from its scheduling: one whose work took longer than pollTimeoutSeconds is not
    // overdue as it is put back (Conductor's count would time its workflow out there).
    const slow = poll(started(withDef({ responseTimeoutSeconds: 100 })).state, 2_000);
    const late = decide(slow, { type: "externalUpdate", taskId, status: "IN_PROGRESS", output: {}, callbackAfterSeconds: 5 }, env(30_000)).state;
    expect(late.tasks[0]).toMatchObject({ status: "SCHEDULED", timeoutAt: 45_000 });
    expect(decide(late, { type: "tick", liveTaskIds: new Set() }, env(30_001)).state.tasks[0]!.status).toBe("SCHEDULED");
    // RETRY: the task times out and its retry settings retry it; ALERT_ONLY: it never times out.
    const retrying = poll(started(withDef({ timeoutPolicy: "RETRY", retryCount: 1, retryDelaySeconds: 0 })).state, 2_000);
    const retried = decide(decide(retrying, { type: "externalUpdate", taskId, status: "IN_PROGRESS", output: {} }, env(3_000)).state, { type: "tick", liveTaskIds: new Set() }, env(13_000)).state;
    expect(retried.status).toBe("RUNNING");
    expect(retried.tasks.map((task) => task.status)).toEqual(["TIMED_OUT", "SCHEDULED"]);
    const alerting = poll(started(withDef({ timeoutPolicy: "ALERT_ONLY" })).state, 2_000);
    expect(decide(alerting, { type: "externalUpdate", taskId, status: "IN_PROGRESS", output: {} }, env(3_000)).state.tasks[0]!.timeoutAt).toBeUndefined();
    // Polled again in time: IN_PROGRESS, with its responseTimeoutSeconds to report.
    expect(poll(back, 9_000).tasks[0]).toMatchObject({ status: "IN_PROGRESS", pollCount: 2, timeoutAt: 11_000 });
  });

  it("put back SCHEDULED, its task definition's timeoutSeconds keeps running from its first poll", () => {
    const state = poll(started({ ...encode, taskDefinition: taskDef({ timeoutSeconds: 20, responseTimeoutSeconds: 10 }) }).state, 2_000);
    expect(state.tasks[0]!.definitionTimeoutAt).toBe(22_000);
    const back = decide(state, { type: "externalUpdate", taskId: state.tasks[0]!.taskId, status: "IN_PROGRESS", output: {}, callbackAfterSeconds: 60 }, env(3_000)).state;
    expect(back.tasks[0]).toMatchObject({ status: "SCHEDULED", definitionTimeoutAt: 22_000 });
    const overdue = decide(back, { type: "tick", liveTaskIds: new Set() }, env(22_000)).state;
    expect([overdue.status, overdue.tasks[0]!.status]).toEqual(["TIMED_OUT", "TIMED_OUT"]);
  });

  it("a task an execution stored before this change keeps IN_PROGRESS in its queue (pollable) is still polled, and timed by its responseTimeoutSeconds", () => {
    const state = poll(started({ ...encode, taskDefinition: taskDef({ responseTimeoutSeconds: 30 }) }).state, 2_000);
    // As the earlier requeue stored it: IN_PROGRESS, pollable, its response timeout counted from when it could be polled.
    const stored: WorkflowExecution = { ...state, tasks: [{ ...state.tasks[0]!, pollable: true, callbackAfterSeconds: 60, updateTime: 3_000, timeoutAt: 93_000 }] };
    expect(nextDeadline(stored)).toBe(93_000);
    expect(poll(stored, 63_000).tasks[0]).toMatchObject({ status: "IN_PROGRESS", pollCount: 2, callbackAfterSeconds: 0, timeoutAt: 93_000 });
    expect(poll(stored, 63_000).tasks[0]!.pollable).toBeUndefined();
    const overdue = decide(stored, { type: "tick", liveTaskIds: new Set() }, env(93_000)).state;
    expect(overdue.tasks[0]).toMatchObject({ status: "TIMED_OUT", reasonForIncompletion: expect.stringMatching(/^responseTimeout: 30 exceeded for the taskId: /) });
    // A heartbeat changes nothing (no worker holds it); a report puts it back SCHEDULED; resetcallbacks releases it.
    expect(decide(stored, { type: "leaseExtended", taskId: state.tasks[0]!.taskId }, env(4_000)).state).toBe(stored);
    expect(decide(stored, { type: "externalUpdate", taskId: state.tasks[0]!.taskId, status: "IN_PROGRESS", output: {} }, env(4_000)).state.tasks[0]).toMatchObject({ status: "SCHEDULED", pollable: true });
    expect(queued(decide(stored, { type: "resetCallbacks" }, env(4_000)).effects)).toMatchObject([{ visibleAt: 4_000 }]);
  });

  it("resetCallbacks makes a task a worker put back with callbackAfterSeconds visible at once; others, and a finished workflow, are left alone", () => {
    const state = poll(started().state, 2_000);
    const taskId = state.tasks[0]!.taskId;
    const later = decide(state, { type: "externalUpdate", taskId, status: "IN_PROGRESS", output: {}, callbackAfterSeconds: 600 }, env(3_000)).state;
    const reset = decide(later, { type: "resetCallbacks" }, env(4_000));
    expect(reset.state.tasks[0]).toMatchObject({ status: "SCHEDULED", pollable: true, callbackAfterSeconds: 0 });
    expect(queued(reset.effects)).toMatchObject([{ taskId, visibleAt: 4_000 }]);
    expect(poll(reset.state, 4_100).tasks[0]!.pollCount).toBe(2);
    // Nothing waits out a callback: no change, nothing queued.
    const none = decide(state, { type: "resetCallbacks" }, env(4_000));
    expect(none.state).toBe(state);
    expect(none.effects).toEqual([]);
    const done = decide(later, { type: "terminate" }, env(5_000)).state;
    expect(() => decide(done, { type: "resetCallbacks" }, env(6_000))).toThrow(/TERMINATED/);
  });

  it("a task that stops waiting in its queue other than by a poll is taken out of it; one a poll hands out, or put back, is not", () => {
    const queued = started(encode, { taskToDomain: { encode: "gpu" } }).state;
    const taskId = queued.tasks[0]!.taskId;
    const removal = [{ queue: workerQueueKey("encode", "gpu"), taskId }];
    // Completed or failed from outside, canceled by a termination, timed out.
    expect(leftWorkerQueues(queued, decide(queued, { type: "externalUpdate", taskId, status: "COMPLETED", output: {} }, env(2_000)).state)).toEqual(removal);
    expect(leftWorkerQueues(queued, decide(queued, { type: "terminate" }, env(2_000)).state)).toEqual(removal);
    const withPollTimeout = started({ ...encode, taskDefinition: taskDef({ pollTimeoutSeconds: 1 }) }).state;
    expect(leftWorkerQueues(withPollTimeout, decide(withPollTimeout, { type: "tick", liveTaskIds: new Set() }, env(5_000)).state)).toHaveLength(1);
    // Handed to a worker by a poll: the poll's own answer drops the entry.
    const polled = poll(queued, 2_000);
    expect(leftWorkerQueues(queued, polled)).toEqual([]);
    // Put back by its worker (IN_PROGRESS with callbackAfterSeconds): still queued; completed from there: taken out.
    const back = decide(polled, { type: "externalUpdate", taskId, status: "IN_PROGRESS", output: {}, callbackAfterSeconds: 60 }, env(3_000)).state;
    expect(leftWorkerQueues(polled, back)).toEqual([]);
    expect(leftWorkerQueues(back, decide(back, { type: "externalUpdate", taskId, status: "FAILED_WITH_TERMINAL_ERROR", output: {} }, env(4_000)).state)).toEqual(removal);
    // Nothing queued, or nothing changed: nothing to take out.
    expect(leftWorkerQueues(null, queued)).toEqual([]);
    expect(leftWorkerQueues(queued, queued)).toEqual([]);
  });

  it("a heartbeat (extendLease) gives its worker responseTimeoutSeconds from now and changes nothing else; a late one finds it timed out", () => {
    const withDef = { ...encode, taskDefinition: taskDef({ responseTimeoutSeconds: 10, timeoutSeconds: 100 }) };
    const state = poll(started(withDef).state, 2_000);
    const taskId = state.tasks[0]!.taskId;
    expect(state.tasks[0]).toMatchObject({ timeoutAt: 12_000, definitionTimeoutAt: 102_000 });
    const beat = decide(state, { type: "leaseExtended", taskId }, env(9_000));
    expect(beat.effects).toEqual([]);
    expect(beat.state.tasks[0]).toEqual({ ...state.tasks[0], timeoutAt: 19_000, updateTime: 9_000 });
    expect(nextDeadline(beat.state)).toBe(19_000);
    expect(decide(beat.state, { type: "tick", liveTaskIds: new Set() }, env(15_000)).state.tasks[0]!.status).toBe("IN_PROGRESS");
    const late = decide(state, { type: "leaseExtended", taskId }, env(12_000));
    expect(late.state.tasks[0]).toMatchObject({ status: "TIMED_OUT", timeoutAt: undefined });
    // Waiting in its queue (not polled yet), it has no worker whose lease could be extended.
    const waiting = started(withDef).state;
    expect(decide(waiting, { type: "leaseExtended", taskId: waiting.tasks[0]!.taskId }, env(3_000)).state).toBe(waiting);
    expect(() => decide(state, { type: "leaseExtended", taskId: "no-such-task" }, env(3_000))).toThrow(EngineError);
  });

  it("times out by responseTimeoutSeconds when the worker goes quiet, and its retry settings retry it as a new queued instance", () => {
    const withDef = { ...encode, taskDefinition: taskDef({ responseTimeoutSeconds: 10, retryCount: 1 }) };
    const state = poll(started(withDef).state, 2_000);
    const tick = decide(state, { type: "tick", liveTaskIds: new Set() }, env(12_000));
    expect(tick.state.tasks[0]).toMatchObject({ status: "TIMED_OUT", retried: true });
    // Conductor's reason word for word (DeciderService.timeoutTask), as its "Debugging workflows" guide lists it:
    // https://conductor-oss.github.io/conductor/devguide/how-tos/Workflows/debugging-workflows.html#understanding-reasonforincompletion
    expect(tick.state.tasks[0]!.reasonForIncompletion).toBe(`responseTimeout: 10 exceeded for the taskId: ${state.tasks[0]!.taskId} with Task Definition: encode`);
    expect(tick.state.tasks[1]).toMatchObject({ status: "SCHEDULED", retryCount: 1, pollable: true });
    expect(queued(tick.effects).map((entry) => entry.taskId)).toEqual([tick.state.tasks[1]!.taskId]);
  });

  it("times out by pollTimeoutSeconds when no worker polls it: TIME_OUT_WF (the default) times the workflow out at once, retries or not", () => {
    const withDef = { ...encode, taskDefinition: taskDef({ pollTimeoutSeconds: 5, retryCount: 3 }) };
    const { state } = started(withDef);
    expect(nextDeadline(state)).toBe(6_000);
    const tick = decide(state, { type: "tick", liveTaskIds: new Set() }, env(6_000));
    expect(tick.state.tasks.map((task) => task.status)).toEqual(["TIMED_OUT"]);
    // Conductor's reason (checkTaskPollTimeout), as its "Debugging workflows" guide lists it.
    expect(tick.state.tasks[0]!.reasonForIncompletion).toBe("Task poll timed out after 5 seconds. Poll timeout configured as 5 seconds. Timeout policy configured to TIME_OUT_WF");
    expect(tick.state.status).toBe("TIMED_OUT");
    expect(tick.state.reasonForIncompletion).toContain("Task encode_ref timed out");
    // A poll arriving after that deadline finds the task timed out: the deadline is applied first.
    expect(() => poll(state, 6_500)).toThrow(EngineError);
  });

  it("pollTimeoutSeconds stands still while the workflow is paused (no poll can take the task) and counts afresh from the resume", () => {
    const { state } = started({ ...encode, taskDefinition: taskDef({ pollTimeoutSeconds: 5 }) });
    const paused = decide(state, { type: "pause" }, env(2_000)).state;
    expect(nextDeadline(paused)).toBeUndefined();
    const later = decide(paused, { type: "tick", liveTaskIds: new Set() }, env(60_000)).state;
    expect([later.status, later.tasks[0]!.status]).toEqual(["PAUSED", "SCHEDULED"]);
    const resumed = decide(later, { type: "resume" }, env(60_000)).state;
    expect(resumed.tasks[0]!.timeoutAt).toBe(65_000);
    expect(nextDeadline(resumed)).toBe(65_000);
    expect(poll(resumed, 64_000).tasks[0]).toMatchObject({ status: "IN_PROGRESS" });
    expect(decide(resumed, { type: "tick", liveTaskIds: new Set() }, env(65_000)).state.status).toBe("TIMED_OUT");
  });

  it("pollTimeoutSeconds under RETRY leaves the timed out task to its retry settings (then the workflow times out); under ALERT_ONLY it never times out", () => {
    const retried = decide(started({ ...encode, taskDefinition: taskDef({ pollTimeoutSeconds: 5, retryCount: 1, retryDelaySeconds: 0, timeoutPolicy: "RETRY" }) }).state, { type: "tick", liveTaskIds: new Set() }, env(6_000)).state;
    expect(retried.status).toBe("RUNNING");
    expect(retried.tasks.map((task) => [task.status, task.retryCount])).toEqual([
      ["TIMED_OUT", 0],
      ["SCHEDULED", 1],
    ]);
    const exhausted = decide(retried, { type: "tick", liveTaskIds: new Set() }, env(nextDeadline(retried)!)).state;
    expect(exhausted.tasks.map((task) => task.status)).toEqual(["TIMED_OUT", "TIMED_OUT"]);
    expect(exhausted.status).toBe("TIMED_OUT");

    const alerted = started({ ...encode, taskDefinition: taskDef({ pollTimeoutSeconds: 5, timeoutPolicy: "ALERT_ONLY" }) }).state;
    expect(alerted.tasks[0]!.timeoutAt).toBeUndefined();
    expect(nextDeadline(alerted)).toBeUndefined();
    expect(poll(alerted, 600_000).tasks[0]).toMatchObject({ status: "IN_PROGRESS" });
  });

  it("the task definition's timeoutSeconds counts from the first poll, not from when it was queued", () => {
    const withDef = { ...encode, taskDefinition: taskDef({ timeoutSeconds: 100, responseTimeoutSeconds: 50 }) };
    const { state } = started(withDef);
    expect(state.tasks[0]!.definitionTimeoutAt).toBeUndefined();
    expect(poll(state, 40_000).tasks[0]!.definitionTimeoutAt).toBe(140_000);
  });

  it("a paused workflow's task is not handed out; resuming makes its queue entry visible at once, in the place it had (visible since it was queued)", () => {
    const { state } = started();
    const queuedAt = state.tasks[0]!.updateTime;
    expect(queuedAt).toBeLessThan(2_000);
    const paused = decide(state, { type: "pause" }, env(2_000)).state;
    expect(() => poll(paused, 2_500)).toThrow(/PAUSED/);
    const resumed = decide(paused, { type: "resume" }, env(3_000));
    expect(queued(resumed.effects)).toMatchObject([{ taskId: state.tasks[0]!.taskId, visibleAt: queuedAt }]);
    expect(poll(resumed.state, 3_100).tasks[0]!.status).toBe("IN_PROGRESS");
  });

  it("a resume leaves a task a worker kept IN_PROGRESS hidden until its callbackAfterSeconds have passed", () => {
    const state = poll(started().state, 2_000);
    const taskId = state.tasks[0]!.taskId;
    const kept = decide(state, { type: "externalUpdate", taskId, status: "IN_PROGRESS", output: {}, callbackAfterSeconds: 60 }, env(3_000)).state;
    const paused = decide(kept, { type: "pause" }, env(4_000)).state;
    const resumed = decide(paused, { type: "resume" }, env(5_000));
    expect(queued(resumed.effects)).toMatchObject([{ taskId, visibleAt: 63_000 }]);
    // One whose delay ran out during the pause is visible at once, in the place it took then.
    expect(queued(decide(paused, { type: "resume" }, env(70_000)).effects)).toMatchObject([{ taskId, visibleAt: 63_000 }]);
  });

  it("a task its worker put back SCHEDULED waits in its queue with its pollTimeoutSeconds standing still while paused, counted afresh from the resume", () => {
    const state = poll(started({ ...encode, taskDefinition: taskDef({ responseTimeoutSeconds: 5, pollTimeoutSeconds: 50 }) }).state, 2_000);
    const taskId = state.tasks[0]!.taskId;
    const kept = decide(state, { type: "externalUpdate", taskId, status: "IN_PROGRESS", output: {}, callbackAfterSeconds: 60 }, env(3_000)).state;
    expect(kept.tasks[0]!.timeoutAt).toBe(113_000);
    const paused = decide(kept, { type: "pause" }, env(4_000)).state;
    expect(nextDeadline(paused)).toBeUndefined();
    const later = decide(paused, { type: "tick", liveTaskIds: new Set() }, env(200_000)).state;
    expect([later.status, later.tasks[0]!.status]).toEqual(["PAUSED", "SCHEDULED"]);
    const resumed = decide(later, { type: "resume" }, env(200_000)).state;
    expect(resumed.tasks[0]!.timeoutAt).toBe(250_000);
    expect(decide(resumed, { type: "tick", liveTaskIds: new Set() }, env(250_000)).state.tasks[0]!.status).toBe("TIMED_OUT");
    // Stored before this change (IN_PROGRESS, pollable): its responseTimeoutSeconds stands still and counts afresh the same way.
    const stored: WorkflowExecution = { ...paused, tasks: [{ ...paused.tasks[0]!, status: "IN_PROGRESS", timeoutAt: 68_000 }] };
    expect(nextDeadline(stored)).toBeUndefined();
    expect(decide(stored, { type: "resume" }, env(200_000)).state.tasks[0]!.timeoutAt).toBe(205_000);
  });

  it("responseTimeoutSeconds of a task a worker holds waits while the workflow is paused: its result then counts; the resume times out one still held past it, or it acts at its own time", () => {
    const state = poll(started({ ...encode, taskDefinition: taskDef({ responseTimeoutSeconds: 5, retryCount: 1, retryDelaySeconds: 0 }) }).state, 2_000);
    const taskId = state.tasks[0]!.taskId;
    expect(state.tasks[0]!.timeoutAt).toBe(7_000);
    const paused = decide(state, { type: "pause" }, env(3_000)).state;
    expect(nextDeadline(paused)).toBeUndefined();
    const later = decide(paused, { type: "tick", liveTaskIds: new Set() }, env(60_000)).state;
    expect([later.status, later.tasks.map((task) => task.status)]).toEqual(["PAUSED", ["IN_PROGRESS"]]);
    // The worker that held it past its responseTimeoutSeconds reports it done, as Conductor's updateTask takes it.
    const reported = decide(later, { type: "externalUpdate", taskId, status: "COMPLETED", output: { url: "s3://out" } }, env(60_000)).state;
    expect(reported.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { url: "s3://out" } });
    expect(decide(reported, { type: "resume" }, env(61_000)).state.status).toBe("COMPLETED");
    // No report by the resume: timed out then, and retried.
    const resumed = decide(later, { type: "resume" }, env(61_000)).state;
    expect(resumed.tasks.map((task) => [task.status, task.retryCount])).toEqual([
      ["TIMED_OUT", 0],
      ["SCHEDULED", 1],
    ]);
    expect(resumed.tasks[0]!.reasonForIncompletion).toBe(`responseTimeout: 5 exceeded for the taskId: ${taskId} with Task Definition: encode`);
    // Resumed before it passed: it acts at its own time, counted from the poll.
    const early = decide(paused, { type: "resume" }, env(4_000)).state;
    expect(nextDeadline(early)).toBe(7_000);
    expect(decide(early, { type: "tick", liveTaskIds: new Set() }, env(7_000)).state.tasks[0]!.status).toBe("TIMED_OUT");
  });

  it("a poll serves the delay a worker asked for: the task handed out again shows callbackAfterSeconds 0, as Conductor resets it", () => {
    const state = poll(started().state, 2_000);
    const taskId = state.tasks[0]!.taskId;
    const kept = decide(state, { type: "externalUpdate", taskId, status: "IN_PROGRESS", output: {}, callbackAfterSeconds: 60 }, env(3_000)).state;
    expect(kept.tasks[0]!.callbackAfterSeconds).toBe(60);
    expect(poll(kept, 63_000).tasks[0]).toMatchObject({ status: "IN_PROGRESS", callbackAfterSeconds: 0, pollCount: 2 });
  });

  it("a terminated workflow's queued task is canceled and no longer polled", () => {
    const { state } = started();
    const terminated = decide(state, { type: "terminate", reason: "stop" }, env(2_000)).state;
    expect(terminated.tasks[0]).toMatchObject({ status: "CANCELED" });
    expect(terminated.tasks[0]!.pollable).toBeUndefined();
    expect(() => poll(terminated, 2_100)).toThrow(EngineError);
  });

  it("a rerun from it queues it again, its worker fields reset", () => {
    const state = poll(started().state, 2_000);
    const taskId = state.tasks[0]!.taskId;
    const failed = decide(state, { type: "externalUpdate", taskId, status: "FAILED", output: {}, reason: "disk full" }, env(3_000)).state;
    expect(failed.status).toBe("FAILED");
    const rerun = decide(failed, { type: "rerun", fromTaskId: taskId }, env(4_000));
    expect(rerun.state.tasks[0]).toMatchObject({ status: "SCHEDULED", pollable: true });
    expect(rerun.state.tasks[0]!.pollCount).toBeUndefined();
    expect(rerun.state.tasks[0]!.workerId).toBeUndefined();
    expect(queued(rerun.effects)).toMatchObject([{ taskId, visibleAt: 4_000 }]);
  });

  it("a rerun keeps the task's retryCount, as Conductor's rerunWF keeps the task it reruns: rerun from its last retry, a failure has no retry left; from its first attempt, the retries count from there", () => {
    const withDef = { ...encode, taskDefinition: taskDef({ retryCount: 1, retryDelaySeconds: 0 }) };
    const fail = (state: WorkflowExecution, index: number, now: number) => {
      const taskId = state.tasks[index]!.taskId;
      const taken = decide(state, { type: "taskPolled", taskId, workerId: "w" }, env(now)).state;
      return decide(taken, { type: "externalUpdate", taskId, status: "FAILED", output: {}, reason: "disk full" }, env(now + 100)).state;
    };
    const once = fail(started(withDef).state, 0, 2_000);
    expect(once.tasks.map((task) => [task.status, task.retryCount])).toEqual([["FAILED", 0], ["SCHEDULED", 1]]);
    const failed = fail(once, 1, 3_000);
    expect(failed.status).toBe("FAILED");
    const fromLast = decide(failed, { type: "rerun", fromTaskId: failed.tasks[1]!.taskId }, env(4_000)).state;
    expect(fromLast.tasks.map((task) => [task.status, task.retryCount])).toEqual([["FAILED", 0], ["SCHEDULED", 1]]);
    const again = fail(fromLast, 1, 5_000);
    expect(again.status).toBe("FAILED");
    expect(again.tasks).toHaveLength(2);
    const fromFirst = decide(failed, { type: "rerun", fromTaskId: failed.tasks[0]!.taskId }, env(4_000)).state;
    expect(fromFirst.tasks.map((task) => [task.status, task.retryCount])).toEqual([["SCHEDULED", 0]]);
    expect(fail(fromFirst, 0, 5_000).tasks.map((task) => [task.status, task.retryCount])).toEqual([["FAILED", 0], ["SCHEDULED", 1]]);
  });
});

describe("SIMPLE tasks: limits on handing them out", () => {
  it("a task definition's concurrentExecLimit and rateLimitPerFrequency go with the queue entry; 0 or none is no limit, nor is a window of 0; the window is 1 s by default", () => {
    const limited = (fields: Partial<TaskDef>): WorkflowTaskDef => ({ ...encode, taskDefinition: taskDef(fields) });
    expect(handOutLimits(encode)).toBeUndefined();
    expect(handOutLimits(limited({ concurrentExecLimit: 0, rateLimitPerFrequency: 0 }))).toBeUndefined();
    expect(handOutLimits(limited({ concurrentExecLimit: 3 }))).toEqual({ maxHeld: 3 });
    expect(handOutLimits(limited({ rateLimitPerFrequency: 5 }))).toEqual({ maxPerWindow: 5, windowMs: 1_000 });
    // A window of 0 is no rate limit, as Conductor's rate-limiting DAOs apply none then (not a window of 1 s).
    expect(handOutLimits(limited({ rateLimitPerFrequency: 5, rateLimitFrequencyInSeconds: 0 }))).toBeUndefined();
    expect(handOutLimits(limited({ concurrentExecLimit: 2, rateLimitPerFrequency: 5, rateLimitFrequencyInSeconds: 0 }))).toEqual({ maxHeld: 2 });
    expect(handOutLimits(limited({ concurrentExecLimit: 2, rateLimitPerFrequency: 5, rateLimitFrequencyInSeconds: 60 }))).toEqual({ maxHeld: 2, maxPerWindow: 5, windowMs: 60_000 });
    expect(queued(started(limited({ concurrentExecLimit: 2 })).effects)[0]!.limits).toEqual({ maxHeld: 2 });
    expect(queued(started(encode).effects)[0]!.limits).toBeUndefined();
  });

  it("a poll takes candidates in the queue's order while each one's limits, counting those before it, allow it; the first refused stops the rest", () => {
    const room = (held: number, inWindow: number, oldest?: number): HandOutRoom => ({ held, inWindow: () => inWindow, windowFreesAt: (windowMs) => (oldest === undefined ? undefined : oldest + windowMs) });
    expect(admitted([undefined, undefined, undefined], room(50, 50))).toEqual({ count: 3 });
    expect(admitted([{ maxHeld: 3 }, { maxHeld: 3 }, { maxHeld: 3 }], room(1, 0))).toEqual({ count: 2 });
    expect(admitted([{ maxHeld: 3 }, undefined], room(3, 0))).toEqual({ count: 0 });
    // A task without limits behind a refused one waits its turn too.
    expect(admitted([undefined, { maxHeld: 1 }, undefined], room(1, 0))).toEqual({ count: 1 });
    // A full rate window says when its oldest hand-out leaves it; a full held count cannot say.
    expect(admitted([{ maxPerWindow: 2, windowMs: 1_000 }, { maxPerWindow: 2, windowMs: 1_000 }], room(0, 1, 5_000))).toEqual({ count: 1, reopensAt: 6_000 });
    expect(admitted([{ maxHeld: 1, maxPerWindow: 9, windowMs: 1_000 }], room(1, 0))).toEqual({ count: 0 });
  });

  it("a task without limits taken before a limited one takes none of its places (the ledger records it nowhere)", () => {
    const room = (held: number, inWindow: number): HandOutRoom => ({ held, inWindow: () => inWindow, windowFreesAt: () => undefined });
    expect(admitted([undefined, { maxHeld: 1 }], room(0, 0))).toEqual({ count: 2 });
    expect(admitted([undefined, undefined, { maxPerWindow: 1, windowMs: 1_000 }], room(0, 0))).toEqual({ count: 3 });
    // A limited task counts as the ledger records it: held only under a maxHeld, in the rate windows only under a rate limit.
    expect(admitted([{ maxPerWindow: 5, windowMs: 1_000 }, { maxHeld: 1 }], room(0, 0))).toEqual({ count: 2 });
    expect(admitted([{ maxPerWindow: 5, windowMs: 60_000 }, { maxPerWindow: 1, windowMs: 1_000 }], room(0, 0))).toEqual({ count: 1 });
  });

  it("a task with a concurrentExecLimit alone takes no place in a rate window, as Conductor's poll checks a task against the rate limit only when it has one", () => {
    const room = (held: number, inWindow: number): HandOutRoom => ({ held, inWindow: () => inWindow, windowFreesAt: () => undefined });
    expect(admitted([{ maxHeld: 5 }, { maxPerWindow: 1, windowMs: 1_000 }], room(0, 0))).toEqual({ count: 2 });
    expect(admitted([{ maxHeld: 5 }, { maxHeld: 5 }, { maxPerWindow: 2, windowMs: 1_000 }, { maxPerWindow: 2, windowMs: 1_000 }, { maxPerWindow: 2, windowMs: 1_000 }], room(0, 0))).toEqual({ count: 4 });
  });
});
