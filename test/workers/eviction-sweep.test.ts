import { SELF, abortAllDurableObjects, env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { WorkflowExecution } from "../../src/actors/workflow-execution";
import type { JsonObject } from "../../src/engine/model";
import { executionStub } from "../../src/worker/executions";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, type TaskJson, type WorkflowJson } from "./helpers";

// One workflow mixing the task types (HTTP, SIMPLE, WAIT_FOR_WEBHOOK, SUB_WORKFLOW, FORK_JOIN/JOIN, DO_WHILE,
// SET_VARIABLE, INLINE, WAIT), driven step by step as its workers, its webhook sender and its alarm would drive it, with
// every object evicted (abortAllDurableObjects) after each step once the workflow has settled where the next step
// finds it. docs/reliability.md promises at-least-once for a call in flight at an eviction only; evicted between
// steps, after the object answered and its calls were answered, every counted call is made exactly once.

/** A SIMPLE task of its own type (a worker polls it by that type). */
const simple = (ref: string, type: string): JsonObject => ({ name: type, taskReferenceName: ref, type: "SIMPLE", inputParameters: { ref } });
/** A counted HTTP call to the target (`/count/<key>`). */
const counted = (ref: string, key: string, extra: JsonObject = {}): JsonObject => httpTask(ref, { uri: target(`/count/${key}`), method: "GET" }, extra);

/** Every object evicted: what is left of each execution, queue, index and limit is what it stored. */
async function evictAll(): Promise<void> {
  await abortAllDurableObjects();
}

/** A single poll (GET /api/tasks/poll/{type}) as a worker sends it, repeated (bounded) until it hands out a task. */
async function pollTask(type: string): Promise<TaskJson> {
  return eventually(
    async () => {
      const response = await api("GET", `/api/tasks/poll/${encodeURIComponent(type)}?workerid=sweeper`);
      if (response.status === 204) return null;
      if (response.status !== 200) throw new Error(`poll of ${type} → ${response.status}: ${await response.text()}`);
      return (await response.json()) as TaskJson;
    },
    (task): task is TaskJson => task !== null,
    `a ${type} task to poll`,
  ) as Promise<TaskJson>;
}

/** Reports a polled task COMPLETED as a worker does (POST /api/tasks). */
async function complete(task: TaskJson, outputData: JsonObject): Promise<void> {
  await apiOk("POST", "/api/tasks", { workflowInstanceId: task["workflowInstanceId"], taskId: task.taskId, status: "COMPLETED", outputData, workerId: "sweeper" });
}

/** Nothing of `type` is left to hand out: a poll answers 204. */
async function nothingToPoll(type: string): Promise<boolean> {
  return (await api("GET", `/api/tasks/poll/${encodeURIComponent(type)}?workerid=sweeper`)).status === 204;
}

/** The task of `ref` in `workflow`, if scheduled. */
const taskOf = (workflow: WorkflowJson, ref: string): TaskJson | undefined => workflow.tasks.find((task) => task.referenceTaskName === ref);
/** Whether the task of `ref` is in `status`. */
const isAt = (workflow: WorkflowJson, ref: string, status: string): boolean => taskOf(workflow, ref)?.status === status;
/** Whether every HTTP task of the workflow has its answer stored: no call is in flight. */
const noCallInFlight = (workflow: WorkflowJson): boolean => workflow.tasks.filter((task) => task["taskType"] === "HTTP").every((task) => task.status === "COMPLETED" || task.status === "FAILED");

/** Waits until `ref` is at `status` with no call in flight, in the workflow (or the child given). */
async function settledAt(workflowId: string, ref: string, status: string): Promise<WorkflowJson> {
  return waitFor(workflowId, (workflow) => isAt(workflow, ref, status) && noCallInFlight(workflow));
}

/** Each reference name appears once, each task id once. */
function expectNoDuplicate(workflow: WorkflowJson): void {
  const refs = workflow.tasks.map((task) => task.referenceTaskName);
  expect(new Set(refs).size, `duplicate refs: ${refs.join(",")}`).toBe(refs.length);
  expect(new Set(workflow.tasks.map((task) => task.taskId)).size).toBe(workflow.tasks.length);
}

/** The task index (GET /api/tasks/search) shows exactly the execution's tasks, each once, at their statuses (bounded wait). */
async function expectTaskIndexMatches(workflow: WorkflowJson): Promise<void> {
  const want = workflow.tasks.map((task) => `${task.taskId}:${task.referenceTaskName}:${task.status}`).sort();
  const query = `size=1000&query=${encodeURIComponent(`workflowId = '${workflow.workflowId}'`)}`;
  const read = async () => (await apiOk<{ results: Array<{ taskId: string; referenceTaskName: string; status: string }> }>("GET", `/api/tasks/search?${query}`)).results.map((task) => `${task.taskId}:${task.referenceTaskName}:${task.status}`).sort();
  const found = await eventually(read, (rows) => JSON.stringify(rows) === JSON.stringify(want), `the task index of ${workflow.workflowId} matching its tasks`, 10_000).catch(async (error: Error) => {
    throw new Error(`${error.message}; want ${JSON.stringify(want)}`);
  });
  expect(found).toEqual(want);
}

/** Posts a WAIT_FOR_WEBHOOK callback as an outside sender does: no API key. */
async function callback(url: string, body: JsonObject): Promise<void> {
  const response = await SELF.fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status, await response.clone().text()).toBe(200);
}

/** The alarm step: once the WAIT of `ref` is past its end, the execution's alarm runs (or has already run). */
async function alarmEndsWait(workflowId: string, ref: string): Promise<void> {
  const waiting = await settledAt(workflowId, ref, "IN_PROGRESS");
  const endsAt = Number(taskOf(waiting, ref)!["startTime"]) + 1_000;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, endsAt - Date.now()) + 20));
  // False when the alarm has fired by itself meanwhile; either way the WAIT ends from what the object stored.
  await runDurableObjectAlarm(executionStub(env, workflowId));
}

/** Registers the child (an HTTP call, then a SIMPLE task) and the parent mixing every task type; `key` names the run. */
async function registerSweep(key: string, retried: JsonObject = {}, h1Uri?: string): Promise<void> {
  await register({
    name: `${key}_child`,
    tasks: [counted("ch", `${key}-child`), simple("cwork", `${key}_child_work`)],
    outputParameters: { n: "${ch.output.response.body.n}", worked: "${cwork.output.worked}" },
  });
  await register({
    name: key,
    tasks: [
      h1Uri === undefined ? counted("h1", `${key}-h1`, retried) : httpTask("h1", { uri: h1Uri, method: "GET" }, retried),
      simple("work", `${key}_work`),
      { name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} },
      { name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", inputParameters: {}, subWorkflowParam: { name: `${key}_child`, version: 1 } },
      {
        name: "fork",
        taskReferenceName: "fork",
        type: "FORK_JOIN",
        forkTasks: [[counted("b1", `${key}-b1`)], [counted("b2", `${key}-b2`), simple("b2work", `${key}_branch_work`)]],
      },
      { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["b1", "b2work"] },
      {
        name: "loop",
        taskReferenceName: "loop",
        type: "DO_WHILE",
        inputParameters: {},
        loopCondition: "$.loop['iteration'] < 3",
        // Each iteration its own counted key (`-loop-1`…`-loop-3`): at most twice is a promise about each call, not their sum.
        loopOver: [counted("lh", `${key}-loop-${"${loop.output.iteration}"}`), simple("lwork", `${key}_loop_work`)],
      },
      { name: "setvar", taskReferenceName: "setvar", type: "SET_VARIABLE", inputParameters: { paid: "${hook.output.paid}", last: "${lh.output.response.body.n}" } },
      { name: "inline", taskReferenceName: "inline", type: "INLINE", inputParameters: { evaluatorType: "graaljs", a: "${b1.output.response.body.n}", b: "${b2.output.response.body.n}", expression: "$.a + $.b" } },
      { name: "pause", taskReferenceName: "pause", type: "WAIT", inputParameters: { duration: "1 seconds" } },
      counted("h2", `${key}-h2`),
    ],
    outputParameters: {
      h1: "${h1.output.response.body.n}",
      worked: "${work.output.worked}",
      paid: "${hook.output.paid}",
      child: "${child.output.n}",
      childWorked: "${child.output.worked}",
      b1: "${b1.output.response.body.n}",
      b2: "${b2.output.response.body.n}",
      branchWorked: "${b2work.output.worked}",
      iterations: "${loop.output.iteration}",
      loopHits: "${lh.output.response.body.n}",
      paidVar: "${workflow.variables.paid}",
      lastVar: "${workflow.variables.last}",
      sum: "${inline.output.result}",
      h2: "${h2.output.response.body.n}",
    },
  });
}

/** The reference names the finished parent holds, each once, in order (`h1` twice when its first call fails once). */
const parentRefs = (retried: boolean) => [
  ...(retried ? ["h1", "h1"] : ["h1"]),
  ...["work", "hook", "child", "fork", "b1", "b2", "join", "b2work", "loop", "lh__1", "lwork__1", "lh__2", "lwork__2", "lh__3", "lwork__3", "setvar", "inline", "pause", "h2"],
];

/** How a run is driven: `settle` waits for the workflow to stand where the next step finds it before each eviction. */
interface Drive {
  key: string;
  /** Evict once the step's effects are stored (true), or as soon as the step is answered (false: calls may be in flight). */
  settle: boolean;
  /** h1's first call fails (a 503) and its retry comes 1 s later, from the alarm. */
  retried?: boolean;
}

/** The counted call keys of a run and how often each is made when no call is in flight at an eviction. */
const callsOf = (drive: Drive): Record<string, number> => ({ [drive.retried ? `flaky-${drive.key}-h1` : `${drive.key}-h1`]: drive.retried ? 2 : 1, [`${drive.key}-child`]: 1, [`${drive.key}-b1`]: 1, [`${drive.key}-b2`]: 1, [`${drive.key}-loop-1`]: 1, [`${drive.key}-loop-2`]: 1, [`${drive.key}-loop-3`]: 1, [`${drive.key}-h2`]: 1 });

/**
 * Drives the mixed workflow to its end, every object evicted after each step (start, poll, complete, callback, alarm):
 * once the workflow stands where the next step finds it (`settle`), or right as the step is answered. Answers the ids.
 */
async function driveSweep(drive: Drive): Promise<{ workflowId: string; childId: string }> {
  const { key, settle } = drive;
  await registerSweep(key, drive.retried ? { retryCount: 1, retryDelaySeconds: 1 } : {}, drive.retried ? target(`/flaky/flaky-${key}-h1?fail=1`) : undefined);
  /** After a step: evict, before or after waiting for where the workflow should stand. */
  const afterStep = async <T>(stands: () => Promise<T>): Promise<T> => {
    if (!settle) await evictAll();
    const standing = await stands();
    if (settle) await evictAll();
    return standing;
  };

  // Step: start. The first call runs (or fails, its retry waiting); the SIMPLE task is queued.
  const workflowId = await startWorkflow(key);
  if (drive.retried) {
    await afterStep(() => waitFor(workflowId, (workflow) => workflow.tasks.length >= 2 && workflow.tasks[0]!.status === "FAILED" && workflow.tasks[1]!.status === "SCHEDULED"));
    // Step: the alarm makes the retry once its delay is over.
    const waiting = await getWorkflow(workflowId);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(waiting.tasks[1]!["scheduledTime"]) - Date.now()) + 20));
    await runDurableObjectAlarm(executionStub(env, workflowId));
  }
  await afterStep(() => settledAt(workflowId, "work", "SCHEDULED"));

  // Steps: poll, then complete, the SIMPLE task.
  const work = await pollTask(`${key}_work`);
  expect(work).toMatchObject({ referenceTaskName: "work", workflowInstanceId: workflowId });
  await afterStep(() => settledAt(workflowId, "work", "IN_PROGRESS"));
  await complete(work, { worked: "parent" });
  const hooked = await afterStep(() => settledAt(workflowId, "hook", "IN_PROGRESS"));

  // Step: the webhook's callback. The child starts, makes its call and queues its SIMPLE task.
  await callback(String(taskOf(hooked, "hook")!["callbackUrl"]), { status: "COMPLETED", output: { paid: true } });
  const childId = await afterStep(async () => {
    const withChild = await waitFor(workflowId, (workflow) => isAt(workflow, "child", "IN_PROGRESS") && taskOf(workflow, "child")!.outputData["subWorkflowId"] !== undefined);
    const id = String(taskOf(withChild, "child")!.outputData["subWorkflowId"]);
    await settledAt(id, "cwork", "SCHEDULED");
    return id;
  });

  // Steps: poll, then complete, the child's SIMPLE task. The child ends; its parent forks, b1 and b2 run.
  const childWork = await pollTask(`${key}_child_work`);
  expect(childWork["workflowInstanceId"]).toBe(childId);
  await afterStep(() => settledAt(childId, "cwork", "IN_PROGRESS"));
  await complete(childWork, { worked: "child" });
  await afterStep(() => waitFor(workflowId, (workflow) => isAt(workflow, "b1", "COMPLETED") && isAt(workflow, "b2work", "SCHEDULED") && noCallInFlight(workflow)));

  // Steps: poll, then complete, the branch's SIMPLE task. The JOIN ends; the loop's first call runs.
  const branchWork = await pollTask(`${key}_branch_work`);
  await afterStep(() => settledAt(workflowId, "b2work", "IN_PROGRESS"));
  await complete(branchWork, { worked: "branch" });
  await afterStep(() => settledAt(workflowId, "lwork__1", "SCHEDULED"));

  // Steps: each iteration's poll and completion, three times; after the last, SET_VARIABLE and INLINE run, the WAIT waits.
  for (let iteration = 1; iteration <= 3; iteration++) {
    const loopWork = await pollTask(`${key}_loop_work`);
    expect(loopWork.referenceTaskName).toBe(`lwork__${iteration}`);
    await afterStep(() => settledAt(workflowId, `lwork__${iteration}`, "IN_PROGRESS"));
    await complete(loopWork, { worked: `loop-${iteration}` });
    await afterStep(() => (iteration < 3 ? settledAt(workflowId, `lwork__${iteration + 1}`, "SCHEDULED") : settledAt(workflowId, "pause", "IN_PROGRESS")));
    // The worker missed the answer and sends its result again after the eviction: the contract's 409 for a task no
    // longer pending, and nothing changes (no iteration completed twice, the output kept; checked at the end).
    const resent = await api("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: loopWork.taskId, status: "COMPLETED", outputData: { worked: `resent-${iteration}` }, workerId: "sweeper" });
    expect(resent.status).toBe(409);
  }

  // Step: the alarm ends the WAIT; the last call runs and the workflow ends.
  await alarmEndsWait(workflowId, "pause");
  await afterStep(() => waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"]));
  return { workflowId, childId };
}

/** What a driven run must show at its end: completed with the outputs of its calls, each task once, nothing queued. */
async function expectSweepCompleted(drive: Drive, workflowId: string, childId: string): Promise<void> {
  const { key } = drive;
  const done = await getWorkflow(workflowId);
  expect(done.status, String(done["reasonForIncompletion"])).toBe("COMPLETED");
  const h1Key = drive.retried ? `flaky-${key}-h1` : `${key}-h1`;
  const counts = Object.fromEntries(await Promise.all(Object.keys(callsOf(drive)).map(async (path) => [path, await hits(path)] as const)));
  // Each call's answer stored is the last call made: a call is made again only when its answer was lost.
  expect(done.output).toEqual({
    h1: counts[h1Key],
    worked: "parent",
    paid: true,
    child: counts[`${key}-child`],
    childWorked: "child",
    b1: counts[`${key}-b1`],
    b2: counts[`${key}-b2`],
    branchWorked: "branch",
    iterations: 3,
    loopHits: counts[`${key}-loop-3`],
    paidVar: true,
    lastVar: counts[`${key}-loop-3`],
    sum: counts[`${key}-b1`]! + counts[`${key}-b2`]!,
    h2: counts[`${key}-h2`],
  });
  const byTask = done.tasks.map((task) => `${task.referenceTaskName}:${task.status}`);
  expect(done.tasks.map((task) => task.referenceTaskName)).toEqual(parentRefs(drive.retried === true));
  expect(byTask.filter((entry) => !entry.endsWith(":COMPLETED")), byTask.join(",")).toEqual(drive.retried ? ["h1:FAILED"] : []);
  expect(new Set(done.tasks.map((task) => task.taskId)).size).toBe(done.tasks.length);
  expect([1, 2, 3].map((iteration) => taskOf(done, `lwork__${iteration}`)!.outputData["worked"])).toEqual(["loop-1", "loop-2", "loop-3"]);
  const child = await getWorkflow(childId);
  expect(child.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["ch:COMPLETED", "cwork:COMPLETED"]);
  expect(child.status).toBe("COMPLETED");
  await expectTaskIndexMatches(done);
  await expectTaskIndexMatches(child);
  // Nothing left queued to hand out twice.
  for (const type of ["work", "child_work", "branch_work", "loop_work"]) expect(await nothingToPoll(`${key}_${type}`), type).toBe(true);

  // The search finds both ended COMPLETED (the rows are written off the hot path, and may have been batched when an
  // eviction came: the executions' alarms write them again).
  const found = await eventually(
    () => apiOk<{ totalHits: number; results: Array<{ workflowId: string; status: string }> }>("GET", `/api/workflow/search?query=${encodeURIComponent(`workflowType IN (${key},${key}_child)`)}`),
    (result) => result.results.filter((row) => row.status === "COMPLETED").length === 2,
    "the search rows COMPLETED",
    10_000,
  );
  expect(found.results.map((row) => `${row.workflowId}:${row.status}`).sort()).toEqual([`${workflowId}:COMPLETED`, `${childId}:COMPLETED`].sort());
}

describe("eviction at every step of a mixed workflow", () => {
  it("evicted after each of its 15 steps once the workflow stands where the next finds it: completes with each call made exactly once, each task once", async () => {
    const drive = { key: "sweep", settle: true };
    const { workflowId, childId } = await driveSweep(drive);
    await expectSweepCompleted(drive, workflowId, childId);
    // Exactly once each: every eviction came after the object had answered and each call's answer was stored.
    for (const [path, expected] of Object.entries(callsOf(drive))) expect(await hits(path), path).toBe(expected);
  });

  it("the same with h1's first call failing (a 503) and its retry made by the alarm after an eviction: two calls to it, the rest once", async () => {
    const drive = { key: "sweep_retry", settle: true, retried: true };
    const { workflowId, childId } = await driveSweep(drive);
    await expectSweepCompleted(drive, workflowId, childId);
    for (const [path, expected] of Object.entries(callsOf(drive))) expect(await hits(path), path).toBe(expected);
  });

  it("evicted as soon as each step is answered (calls then in flight): completes, a call made at most twice and only when its answer was lost", async () => {
    const drive = { key: "sweep_eager", settle: false };
    const { workflowId, childId } = await driveSweep(drive);
    await expectSweepCompleted(drive, workflowId, childId);
    // docs/reliability.md: a call in flight at an eviction is made again (at-least-once); no call is made a third time.
    for (const [path, expected] of Object.entries(callsOf(drive))) {
      const made = await hits(path);
      expect(made, path).toBeGreaterThanOrEqual(expected);
      expect(made, path).toBeLessThanOrEqual(expected * 2);
    }
  });
});

describe("a mixed workflow terminated midway, evicted around the termination", () => {
  it("terminating the parent while its child's task is with a worker terminates the child; after evictions, no call is made and nothing is handed out again", async () => {
    const key = "sweep_stop";
    await registerSweep(key);
    const workflowId = await startWorkflow(key);
    await settledAt(workflowId, "work", "SCHEDULED");
    await evictAll();
    await complete(await pollTask(`${key}_work`), { worked: "parent" });
    const hooked = await settledAt(workflowId, "hook", "IN_PROGRESS");
    await evictAll();
    await callback(String(taskOf(hooked, "hook")!["callbackUrl"]), { status: "COMPLETED", output: { paid: true } });
    const withChild = await waitFor(workflowId, (workflow) => taskOf(workflow, "child")?.outputData["subWorkflowId"] !== undefined);
    const childId = String(taskOf(withChild, "child")!.outputData["subWorkflowId"]);
    await settledAt(childId, "cwork", "SCHEDULED");
    const childWork = await pollTask(`${key}_child_work`);
    await settledAt(childId, "cwork", "IN_PROGRESS");
    await evictAll();

    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=stopped`);
    await evictAll();

    // The child learns from what the parent stored (its notice owed survives the eviction).
    const child = await waitFor(childId, ["TERMINATED", "COMPLETED", "FAILED"], 10_000);
    expect(child.status).toBe("TERMINATED");
    expect(taskOf(child, "cwork")!.status).toBe("CANCELED");
    // The worker's late report changes nothing: the child stays terminated, its parent too, and nothing runs on.
    const late = await api("POST", "/api/tasks", { workflowInstanceId: childId, taskId: childWork.taskId, status: "COMPLETED", outputData: { worked: "late" }, workerId: "sweeper" });
    expect(late.status).toBeLessThan(500);
    await evictAll();
    // Whatever alarm either object has left runs now, and finds nothing to do.
    await runDurableObjectAlarm(executionStub(env, workflowId));
    await runDurableObjectAlarm(executionStub(env, childId));
    await new Promise((resolve) => setTimeout(resolve, 300));

    const parent = await getWorkflow(workflowId);
    expect(parent.status).toBe("TERMINATED");
    expect(parent.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["h1:COMPLETED", "work:COMPLETED", "hook:COMPLETED", "child:CANCELED"]);
    const stopped = await getWorkflow(childId);
    expect(stopped.status).toBe("TERMINATED");
    await expectTaskIndexMatches(parent);
    await expectTaskIndexMatches(stopped);
    expect(Object.fromEntries(await Promise.all(["h1", "child", "b1", "b2", "loop-1", "h2"].map(async (path) => [path, await hits(`${key}-${path}`)] as const)))).toEqual({ h1: 1, child: 1, b1: 0, b2: 0, "loop-1": 0, h2: 0 });
    for (const type of ["work", "child_work", "branch_work", "loop_work"]) expect(await nothingToPoll(`${key}_${type}`), type).toBe(true);
    await eventually(
      () => apiOk<{ results: Array<{ workflowId: string; status: string }> }>("GET", `/api/workflow/search?query=${encodeURIComponent(`workflowType IN (${key},${key}_child)`)}`),
      (result) => result.results.length === 2 && result.results.every((row) => row.status === "TERMINATED"),
      "the search rows TERMINATED",
      10_000,
    );
  });
});

describe("a parent terminated while its child's call is in flight", () => {
  it("the termination answers with the child terminated too: an eviction right after the answer neither sends the child's call again nor lets it run on", async () => {
    const key = "sweep_stop_inflight";
    await register({
      name: `${key}_child`,
      tasks: [httpTask("ch", { uri: target(`/count/${key}-ch?delay=800`), method: "POST", body: { charge: 1 } }), counted("after", `${key}-after`)],
    });
    await register({
      name: key,
      tasks: [{ name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", inputParameters: {}, subWorkflowParam: { name: `${key}_child`, version: 1 } }, counted("next", `${key}-next`)],
    });
    const workflowId = await startWorkflow(key);
    await eventually(() => hits(`${key}-ch`), (n) => n === 1, "the child's call sent");
    const childId = String(taskOf(await getWorkflow(workflowId), "child")!.outputData["subWorkflowId"]);
    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=stop`);
    // Conductor's terminateWorkflow terminates a running SUB_WORKFLOW's child before it returns (SubWorkflow.cancel).
    await evictAll();
    const child = await getWorkflow(childId);
    expect({ status: child.status, tasks: child.tasks.map((task) => `${task.referenceTaskName}:${task.status}`) }).toEqual({ status: "TERMINATED", tasks: ["ch:CANCELED"] });
    // Whatever alarm either object has left runs now; a call sent after all would arrive within the call's delay.
    await runDurableObjectAlarm(executionStub(env, childId));
    await runDurableObjectAlarm(executionStub(env, workflowId));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect({ ch: await hits(`${key}-ch`), after: await hits(`${key}-after`), next: await hits(`${key}-next`) }).toEqual({ ch: 1, after: 0, next: 0 });
    expect((await getWorkflow(childId)).status).toBe("TERMINATED");
    expect((await getWorkflow(workflowId)).status).toBe("TERMINATED");
  });

  it("a terminate cut off by a reset of the parent's object (workerd's .retryable) once stored, its child not yet terminated, is made again: 200, the child TERMINATED by the answer", async () => {
    const key = "sweep_stop_reset";
    await register({ name: `${key}_child`, tasks: [{ name: "idle", taskReferenceName: "idle", type: "WAIT", inputParameters: {} }] });
    await register({ name: key, tasks: [{ name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", inputParameters: {}, subWorkflowParam: { name: `${key}_child`, version: 1 } }] });
    const workflowId = await startWorkflow(key);
    const started = await waitFor(workflowId, (workflow) => taskOf(workflow, "child")?.outputData["subWorkflowId"] !== undefined);
    const childId = String(taskOf(started, "child")!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => isAt(workflow, "idle", "IN_PROGRESS"));
    // The first call is stored, its child's termination fails (the child out of reach), and a reset cuts it off: what
    // workerd throws to the router then (locally abortAllDurableObjects throws no .retryable, see docs/reliability.md).
    const { command, terminateAsChild } = WorkflowExecution.prototype;
    let calls = 0;
    WorkflowExecution.prototype.command = async function (this: WorkflowExecution, ...args: Parameters<WorkflowExecution["command"]>) {
      if (++calls > 1) return command.apply(this, args);
      WorkflowExecution.prototype.terminateAsChild = () => Promise.reject(new Error("child out of reach"));
      try {
        await command.apply(this, args);
      } finally {
        WorkflowExecution.prototype.terminateAsChild = terminateAsChild;
      }
      throw Object.assign(new Error("Durable Object reset because its code was updated."), { retryable: true });
    };
    let response: Response;
    try {
      response = await api("DELETE", `/api/workflow/${workflowId}?reason=stop`);
    } finally {
      WorkflowExecution.prototype.command = command;
    }
    expect({ status: response.status, calls }).toEqual({ status: 200, calls: 2 });
    // The repeat sent the child's owed termination again and waited for it, as the first call would have.
    const child = await getWorkflow(childId);
    expect({ status: child.status, tasks: child.tasks.map((task) => `${task.referenceTaskName}:${task.status}`) }).toEqual({ status: "TERMINATED", tasks: ["idle:CANCELED"] });
    expect((await getWorkflow(workflowId)).status).toBe("TERMINATED");
  });
});
