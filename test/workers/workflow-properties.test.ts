// Properties of whole executions over random definitions, end to end: what test/unit/engine-properties checks of the pure
// decider, here through the router, the execution objects and their alarms, the task queues a worker loop polls, HTTP
// calls to the target server, sub-workflows run by child objects, WAITs completed from outside and the D1 search index.
// Whatever the shape and the order the test takes the pending actions in (each run in turn with a pause and resume, a restart, a retry
// after a failure, a rerun from a task, or none of these), the execution ends without stalling, never has two pending runs
// of one task, its times are ordered, its children end with it and as its tasks say, its tasks compute what they should,
// search shows what the execution does once the index settled, and no call answers a 500 or a 4xx out of the error
// shape. Seeded (FIXED_SEED): a failure prints the definition and the order it took, and replays.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, target, type TaskJson, type WorkflowJson } from "./helpers";
import { terminal } from "./sub-workflow-helpers";

/** A definition tree before reference names are given: built by fast-check, named in order by {@link build}. */
type Shape =
  | { kind: "simple"; optional: boolean; failOnce: boolean }
  | { kind: "http"; optional: boolean; fails: boolean }
  | { kind: "wait" }
  | { kind: "setThenRead" }
  | { kind: "jq" }
  | { kind: "terminate" }
  | { kind: "sub" }
  | { kind: "switch"; cases: Shape[][]; defaultCase: Shape[]; pick: number }
  | { kind: "fork"; branches: Shape[][] }
  | { kind: "loop"; iterations: number; body: Shape[] };

/** What the test does to the execution besides driving it: nothing, a pause and resume on the way, or once it ended a restart, a retry (of a failure) or a rerun from one of its tasks. */
type Operation = "none" | "pause" | "restart" | "retry" | "rerun";
const OPERATIONS: readonly Operation[] = ["pause", "restart", "retry", "rerun", "none"];

const WORKER_TYPE = "wfprop_work";
const CHILD = "wfprop_child";
const MAX_DEPTH = 2;
/** Whatever the order, a run takes at most this many actions and idle looks at the execution: a stuck one fails, it does not hang. */
const MAX_STEPS = 300;
/** Consecutive looks finding nothing pending before a running execution counts as stalled. */
const STALL_LOOKS = 40;

function shapes(depth: number, inLoop: boolean): fc.Arbitrary<Shape[]> {
  return fc.array(shape(depth, inLoop), { minLength: 1, maxLength: 3 });
}

function shape(depth: number, inLoop: boolean): fc.Arbitrary<Shape> {
  const leaves = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant("simple" as const), optional: fc.boolean(), failOnce: fc.boolean() }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("http" as const), optional: fc.boolean(), fails: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }) }) },
    { weight: 2, arbitrary: fc.constant({ kind: "wait" } as const) },
    { weight: 2, arbitrary: fc.constant({ kind: "setThenRead" } as const) },
    { weight: 1, arbitrary: fc.constant({ kind: "jq" } as const) },
    { weight: 1, arbitrary: fc.constant({ kind: "terminate" } as const) },
    { weight: 2, arbitrary: fc.constant({ kind: "sub" } as const) },
  );
  if (depth >= MAX_DEPTH) return leaves;
  const inner = shapes(depth + 1, inLoop);
  return fc.oneof(
    { weight: 6, arbitrary: leaves },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("switch" as const), cases: fc.array(inner, { minLength: 1, maxLength: 2 }), defaultCase: fc.array(shape(depth + 1, inLoop), { maxLength: 2 }), pick: fc.nat(2) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("fork" as const), branches: fc.array(inner, { minLength: 1, maxLength: 3 }) }) },
    // Loops not nested: a WAIT's reference inside one is the loop's (t3__2), completed by its id.
    ...(inLoop ? [] : [{ weight: 1, arbitrary: fc.record({ kind: fc.constant("loop" as const), iterations: fc.integer({ min: 1, max: 3 }), body: shapes(depth + 1, true) }) }]),
  );
}

/** The workflow tasks of `tree`, referenced t0, t1, … in order (`next` counts on). */
function build(tree: Shape[], next: { n: number }): JsonObject[] {
  return tree.flatMap((node): JsonObject[] => {
    const ref = `t${next.n++}`;
    switch (node.kind) {
      case "simple":
        // One that fails once is retried once, at once.
        return [{ name: WORKER_TYPE, taskReferenceName: ref, type: "SIMPLE", optional: node.optional, inputParameters: { failOnce: node.failOnce }, ...(node.failOnce ? { retryCount: 1, retryDelaySeconds: 0 } : {}) }];
      case "http":
        return [{ name: ref, taskReferenceName: ref, type: "HTTP", optional: node.optional, inputParameters: { http_request: { uri: target(node.fails ? "/status/500" : `/count/wfprop-${ref}`), method: "GET" } } }];
      case "wait":
        return [{ name: ref, taskReferenceName: ref, type: "WAIT" }];
      case "setThenRead":
        // The INLINE reads what the SET_VARIABLE before it set: `${ref}!` (checked in checkEnded).
        return [
          { name: ref, taskReferenceName: ref, type: "SET_VARIABLE", inputParameters: { [`v_${ref}`]: ref } },
          { name: `${ref}_read`, taskReferenceName: `${ref}_read`, type: "INLINE", inputParameters: { evaluatorType: "graaljs", v: `\${workflow.variables.v_${ref}}`, expression: "$.v + '!'" } },
        ];
      case "jq":
        return [{ name: ref, taskReferenceName: ref, type: "JSON_JQ_TRANSFORM", inputParameters: { x: "${workflow.input.n}", queryExpression: ".x + 1" } }];
      case "terminate":
        return [{ name: ref, taskReferenceName: ref, type: "TERMINATE", inputParameters: { terminationStatus: "COMPLETED" } }];
      case "sub":
        return [{ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", subWorkflowParam: { name: CHILD, version: 1 }, inputParameters: { who: ref } }];
      case "switch": {
        const decisionCases = Object.fromEntries(node.cases.map((tasks, i) => [`c${i}`, build(tasks, next)]));
        return [{ name: ref, taskReferenceName: ref, type: "SWITCH", evaluatorType: "value-param", expression: "k", inputParameters: { k: `c${node.pick}` }, decisionCases, defaultCase: build(node.defaultCase, next) }];
      }
      case "fork": {
        const forkTasks = node.branches.map((branch) => build(branch, next));
        const join = `t${next.n++}`;
        return [
          { name: ref, taskReferenceName: ref, type: "FORK_JOIN", forkTasks },
          { name: join, taskReferenceName: join, type: "JOIN", joinOn: forkTasks.map((branch) => String(branch.at(-1)!["taskReferenceName"])) },
        ];
      }
      case "loop":
        return [{ name: ref, taskReferenceName: ref, type: "DO_WHILE", loopCondition: `if ($.${ref}['iteration'] < ${node.iterations}) { true; } else { false; }`, inputParameters: {}, loopOver: build(node.body, next) }];
    }
  });
}

/** A small seeded generator (mulberry32) choosing among the pending actions, so that an order replays from its seed. */
function orderFrom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One random run: what went wrong in it, what it did, and the ids of the tasks failed once already. */
class Run {
  readonly problems: string[] = [];
  readonly log: string[] = [];
  readonly failedOnce = new Set<string>();
  paused = false;
  constructor(readonly next: () => number) {}

  /** Calls the API, noting a 500 or a 4xx not in the contract's error shape. */
  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const response = await api(method, path, body);
    const text = await response.text();
    const type = response.headers.get("content-type") ?? "";
    const parsed: unknown = type.includes("json") ? JSON.parse(text) : text;
    if (response.status >= 500) this.problems.push(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    else if (response.status >= 400) {
      const error = parsed as { status?: unknown; error?: unknown; message?: unknown } | null;
      if (typeof error !== "object" || error === null || error.status !== response.status || typeof error.error !== "string" || typeof error.message !== "string") {
        this.problems.push(`${method} ${path} answered ${response.status} out of the error shape: ${text.slice(0, 300)}`);
      }
    }
    return { status: response.status, body: parsed };
  }

  /** The execution and its children, at any depth, as the API shows them now. */
  async family(workflowId: string): Promise<WorkflowJson[]> {
    const answer = await this.call("GET", `/api/workflow/${workflowId}?includeTasks=true`);
    if (answer.status !== 200) {
      this.problems.push(`GET of ${workflowId} answered ${answer.status}`);
      return [];
    }
    const workflow = answer.body as WorkflowJson;
    const children = workflow.tasks.flatMap((task) => (task.taskType === "SUB_WORKFLOW" && typeof task["subWorkflowId"] === "string" ? [task["subWorkflowId"]] : []));
    const below = await Promise.all(children.map((childId) => this.family(childId)));
    return [workflow, ...below.flat()];
  }

  /** Notes two pending runs of one reference, or a task id twice, in any execution of `family`. */
  checkTasks(family: WorkflowJson[]): void {
    for (const workflow of family) {
      const ids = new Set<string>();
      const pendingRefs = new Set<string>();
      for (const task of workflow.tasks) {
        if (ids.has(task.taskId)) this.problems.push(`${workflow.workflowId} shows task ${task.taskId} twice`);
        ids.add(task.taskId);
        if (task.status !== "SCHEDULED" && task.status !== "IN_PROGRESS") continue;
        if (pendingRefs.has(task.referenceTaskName)) this.problems.push(`${workflow.workflowId} has two pending ${task.referenceTaskName}`);
        pendingRefs.add(task.referenceTaskName);
      }
    }
  }

  /** What can be done now to move `family` on: a worker's poll or report, a WAIT's completion, or a resume. */
  actions(family: WorkflowJson[], mayPause: boolean, rootId: string): Array<() => Promise<void>> {
    const actions: Array<() => Promise<void>> = [];
    if (this.paused) actions.push(() => this.act("resume", "PUT", `/api/workflow/${rootId}/resume`).then(() => void (this.paused = false)));
    else if (mayPause && this.next() < 0.05) actions.push(() => this.act("pause", "PUT", `/api/workflow/${rootId}/pause`).then(() => void (this.paused = true)));
    for (const workflow of family) {
      if (terminal.includes(workflow.status)) continue;
      for (const task of workflow.tasks) {
        if (task.taskType === WORKER_TYPE && task.status === "SCHEDULED") actions.push(() => this.poll(family));
        if (task.taskType === WORKER_TYPE && task.status === "IN_PROGRESS") {
          const fails = task.inputData["failOnce"] === true && !this.failedOnce.has(task.referenceTaskName + workflow.workflowId);
          actions.push(async () => {
            if (fails) this.failedOnce.add(task.referenceTaskName + workflow.workflowId);
            await this.act(`${fails ? "fail" : "complete"}:${task.referenceTaskName}`, "POST", "/api/tasks", { workflowInstanceId: workflow.workflowId, taskId: task.taskId, status: fails ? "FAILED" : "COMPLETED", outputData: { by: task.referenceTaskName } });
          });
        }
        if (task.taskType === "WAIT" && task.status === "IN_PROGRESS") {
          // By its reference (Conductor's updateTaskByRefName) or by its id; a loop's run only by its id.
          const byRef = !task.referenceTaskName.includes("__") && this.next() < 0.5;
          actions.push(() =>
            byRef
              ? this.act(`wait-ref:${task.referenceTaskName}`, "POST", `/api/tasks/${workflow.workflowId}/${task.referenceTaskName}/COMPLETED`, { waited: true })
              : this.act(`wait-id:${task.referenceTaskName}`, "POST", "/api/tasks", { workflowInstanceId: workflow.workflowId, taskId: task.taskId, status: "COMPLETED", outputData: { waited: true } }),
          );
        }
      }
    }
    return actions;
  }

  async act(what: string, method: string, path: string, body?: unknown): Promise<void> {
    this.log.push(what);
    await this.call(method, path, body);
  }

  /** A worker's batch poll, which never hands out a task whose reference has a run in progress already. */
  async poll(family: WorkflowJson[]): Promise<void> {
    const polled = (await this.call("GET", `/api/tasks/poll/batch/${WORKER_TYPE}?workerid=prop-worker&count=1&timeout=0`)).body as TaskJson[];
    this.log.push(`poll:${polled.map((task) => task.referenceTaskName).join(",")}`);
    for (const task of polled) {
      const owner = family.find((workflow) => workflow.workflowId === task["workflowInstanceId"]);
      const running = owner?.tasks.find((other) => other.referenceTaskName === task.referenceTaskName && other.taskId !== task.taskId && other.status === "IN_PROGRESS");
      if (running) this.problems.push(`a poll handed out ${task.taskId} (${task.referenceTaskName}) while ${running.taskId} was in progress`);
    }
  }

  /** Takes the pending actions in a random order until the execution ends (bounded); notes a stall. */
  async drive(rootId: string, mayPause: boolean): Promise<WorkflowJson | undefined> {
    let idle = 0;
    for (let step = 0; step < MAX_STEPS; step++) {
      const family = await this.family(rootId);
      const root = family[0];
      if (root === undefined) return undefined;
      this.checkTasks(family);
      if (terminal.includes(root.status)) return root;
      const actions = this.actions(family, mayPause, rootId);
      if (actions.length > 0) {
        idle = 0;
        await actions[Math.floor(this.next() * actions.length)]!();
        continue;
      }
      // Nothing for the test to do: an HTTP call, a child's start or an alarm is on its way, unless nothing is pending.
      const pending = family.some((workflow) => !terminal.includes(workflow.status) && workflow.tasks.some((task) => task.status === "SCHEDULED" || task.status === "IN_PROGRESS"));
      idle = pending ? 0 : idle + 1;
      if (idle > STALL_LOOKS) {
        this.problems.push(`stalled ${root.status} with nothing pending: ${family.map((workflow) => workflow.tasks.map((task) => `${task.referenceTaskName}:${task.status}`).join(",")).join(" | ")}`);
        return root;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    this.problems.push(`not ended after ${MAX_STEPS} steps`);
    return undefined;
  }

  /** The checks of an ended execution and its children, their search rows included (waited for, bounded). */
  async checkEnded(rootId: string): Promise<void> {
    const family = await this.family(rootId);
    this.checkTasks(family);
    for (const workflow of family) {
      for (const task of workflow.tasks) {
        const [scheduled, started, ended] = [Number(task["scheduledTime"]), Number(task["startTime"]), Number(task["endTime"])];
        if (started > 0 && ended > 0 && !(ended >= started && started >= scheduled)) this.problems.push(`${task.referenceTaskName} ${task.status}: scheduled ${scheduled}, started ${started}, ended ${ended}`);
        if (task.taskType === "INLINE" && task.status === "COMPLETED" && task.outputData["result"] !== `${task.referenceTaskName.replace(/_read(__\d+)?$/, "")}!`) {
          this.problems.push(`${task.referenceTaskName} read ${JSON.stringify(task.outputData["result"])}`);
        }
        if (task.taskType === "JSON_JQ_TRANSFORM" && task.status === "COMPLETED" && task.outputData["result"] !== 8) this.problems.push(`${task.referenceTaskName} gave ${JSON.stringify(task.outputData)}`);
        const child = family.find((candidate) => candidate.workflowId === task["subWorkflowId"]);
        if (child === undefined || !terminal.includes(workflow.status) || task.status === "CANCELED") continue;
        if (!terminal.includes(child.status)) this.problems.push(`${workflow.workflowId} ended ${workflow.status} with its child ${child.workflowId} ${child.status}`);
        else if ((child.status === "COMPLETED") !== (task.status === "COMPLETED")) this.problems.push(`${task.referenceTaskName} ${task.status} for a child ${child.status}`);
      }
      await this.checkIndexed(workflow);
    }
  }

  /** Search (executions and tasks) shows what the execution shows, once the index has settled (bounded: 3 s). */
  async checkIndexed(workflow: WorkflowJson): Promise<void> {
    const query = encodeURIComponent(`workflowId='${workflow.workflowId}'`);
    const shown = new Map(workflow.tasks.map((task) => [task.taskId, task.status]));
    const deadline = Date.now() + 3_000;
    for (;;) {
      const found = (await this.call("GET", `/api/workflow/search?query=${query}`)).body as { results: Array<{ status: string }> };
      const tasks = (await this.call("GET", `/api/tasks/search?size=100&query=${query}`)).body as { results: Array<{ taskId: string; status: string }> };
      const indexed = new Map(tasks.results.map((task) => [task.taskId, task.status]));
      if (found.results[0]?.status === workflow.status && indexed.size === shown.size && [...shown].every(([taskId, status]) => indexed.get(taskId) === status)) return;
      if (Date.now() > deadline) {
        this.problems.push(`search shows ${workflow.workflowId} ${found.results[0]?.status} ${JSON.stringify([...indexed])}, the execution ${workflow.status} ${JSON.stringify([...shown])}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** The seed of the runs: a failure replays with it (and the path fast-check prints). */
const FIXED_SEED = 20261206;

describe("random workflows, end to end", () => {
  it("end without stalling, run each task once at a time, and show the same through the API, their children and search", { timeout: 90_000 }, async () => {
    const setup = new Run(() => 0);
    await setup.call("POST", "/api/metadata/workflow?overwrite=true", {
      name: CHILD,
      version: 1,
      schemaVersion: 2,
      ownerEmail: "test@example.com",
      tasks: [
        { name: WORKER_TYPE, taskReferenceName: "c0", type: "SIMPLE", inputParameters: { failOnce: false } },
        { name: "cw", taskReferenceName: "cw", type: "WAIT" },
      ],
      outputParameters: { who: "${workflow.input.who}" },
    });
    let count = 0;
    await fc.assert(
      fc.asyncProperty(shapes(0, false), fc.nat(), async (tree, orderSeed) => {
        // Each operation in turn, so that the few runs take every one.
        const operation = OPERATIONS[count % OPERATIONS.length]!;
        const name = `wfprop_${count++}`;
        const tasks = build(tree, { n: 0 });
        const run = new Run(orderFrom(orderSeed));
        const registered = await run.call("POST", "/api/metadata/workflow?overwrite=true", { name, version: 1, schemaVersion: 2, ownerEmail: "test@example.com", tasks });
        expect(registered.status, JSON.stringify(registered.body)).toBe(200);
        const workflowId = (await run.call("POST", `/api/workflow/${name}`, { n: 7 })).body as string;
        let ended = await run.drive(workflowId, operation === "pause");
        const again =
          ended === undefined
            ? undefined
            : operation === "restart"
              ? { what: "restart", path: "restart", body: undefined }
              : operation === "retry" && ended.status === "FAILED"
                ? { what: "retry", path: "retry", body: undefined }
                : operation === "rerun"
                  ? ((from) => ({ what: `rerun:${from.referenceTaskName}`, path: "rerun", body: { reRunFromTaskId: from.taskId } }))(ended.tasks[Math.floor(run.next() * ended.tasks.length)]!)
                  : undefined;
        if (again !== undefined) {
          await run.act(again.what, "POST", `/api/workflow/${workflowId}/${again.path}`, again.body);
          ended = await run.drive(workflowId, false);
        }
        if (ended !== undefined) await run.checkEnded(workflowId);
        expect(run.problems, `${JSON.stringify(tasks)}; ${operation}; order ${orderSeed}: ${run.log.join(" ")}`).toEqual([]);
      }),
      { numRuns: 5, seed: FIXED_SEED, endOnFailure: true },
    );
  });
});
