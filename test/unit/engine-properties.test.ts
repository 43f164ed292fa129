// Properties of the decider over random definitions: SWITCHes, FORK_JOINs (nested, in loops), dynamic forks,
// DO_WHILEs over items and DYNAMIC tasks around WAITs completed (or skipped) from outside and HTTP calls answering, in a
// random order. Whatever the shape and the order, every definition registers, the workflow never stalls, never holds
// two pending runs of one task, and completes with nothing left pending.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DecideEnv } from "../../src/engine/config";
import { awaitedTaskDefNames, createExecution, decide as decideAlone, type Decision, type ExecutionEvent } from "../../src/engine/decider";
import { awaitedCacheLookups } from "../../src/engine/task-cache";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import type { JsonObject, TaskExecution, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { definitionReferenceName, loopIterationsOf } from "../../src/engine/plan";
import { env as knowingEnv } from "./engine-env";

/** The decider's environment at `now`, knowing no task definition at once: what a DYNAMIC chooses or a dynamic fork forks waits for its look-up. */
const env = (now: number): DecideEnv => ({ ...knowingEnv(now), taskDefs: () => undefined });

/**
 * A decision, followed by what the actor answers it: the look-up of the task definitions it left tasks waiting for (none
 * registered), the admission of an execution waiting for its rate limit's place, and the look-up of cached outputs (found
 * for the HTTP calls whose reference number is even).
 */
function decide(state: WorkflowExecution, event: ExecutionEvent, environment: DecideEnv): Decision {
  let decision = decideAlone(state, event, environment);
  const then = (next: ExecutionEvent) => {
    const answered = decideAlone(decision.state, next, environment);
    decision = { state: answered.state, effects: [...decision.effects, ...answered.effects] };
  };
  // A cache hit moves the workflow on to more tasks, which may look the cache up in turn.
  for (let round = 0; round < 100; round++) {
    const names = awaitedTaskDefNames(decision.state);
    if (names.length > 0) {
      then({ type: "taskDefsLoaded", taskDefs: Object.fromEntries(names.map((name) => [name, null])) });
      // A DYNAMIC chooses again from the same input: the same name, known now.
      expect(awaitedTaskDefNames(decision.state)).toEqual([]);
      continue;
    }
    if (decision.state.rateLimited === true) {
      then({ type: "admitted" });
      continue;
    }
    const lookups = awaitedCacheLookups(decision.state);
    if (lookups.length === 0) return decision;
    then({ type: "cacheLookedUp", outputs: Object.fromEntries(lookups.map(({ taskId, key }) => [taskId, Number(key.slice(key.lastIndexOf("t") + 1)) % 2 === 0 ? { cached: key } : null])) });
  }
  throw new Error("the actor's answers did not settle");
}

/** The first decision of execution `wf-1` of a definition named `name` holding `tasks` (with `extra` fields), started with `input`. */
function startedWith(name: string, tasks: WorkflowTaskDef[], input: JsonObject, extra: Partial<WorkflowDef> = {}): Decision {
  const definition = { name, version: 1, schemaVersion: 2, tasks, ...extra };
  return decide(createExecution({ workflowId: "wf-1", definition, input }, 1_000), { type: "start" }, env(1_000));
}

/** A definition tree before reference names are given: built by fast-check, named in order afterwards. */
type Shape =
  | { kind: "wait" }
  | { kind: "http" }
  | { kind: "noop" }
  | { kind: "dynamic" }
  | { kind: "switch"; cases: Shape[][] }
  | { kind: "fork"; branches: Shape[][]; joined: boolean[] }
  | { kind: "dynamicFork"; width: number }
  | { kind: "loop"; items: number; body: Shape[] };

const MAX_DEPTH = 3;

function shapes(depth: number, inLoop: boolean): fc.Arbitrary<Shape[]> {
  return fc.array(shape(depth, inLoop), { minLength: 1, maxLength: 3 });
}

function shape(depth: number, inLoop: boolean): fc.Arbitrary<Shape> {
  const leaves: Array<fc.Arbitrary<Shape>> = [fc.constant({ kind: "wait" } as const), fc.constant({ kind: "http" } as const), fc.constant({ kind: "noop" } as const), fc.constant({ kind: "dynamic" } as const)];
  if (depth >= MAX_DEPTH) return fc.oneof(...leaves);
  const inner = (loop: boolean) => shapes(depth + 1, loop);
  const composite: Array<fc.Arbitrary<Shape>> = [
    fc.array(inner(inLoop), { minLength: 1, maxLength: 3 }).map((cases) => ({ kind: "switch" as const, cases })),
    fc
      .array(inner(inLoop), { minLength: 1, maxLength: 3 })
      .chain((branches) => fc.array(fc.boolean(), { minLength: branches.length, maxLength: branches.length }).map((joined) => ({ kind: "fork" as const, branches, joined }))),
  ];
  // Loops nest; they hold no dynamic fork here.
  composite.push(fc.record({ kind: fc.constant("loop" as const), items: fc.integer({ min: 1, max: 3 }), body: inner(true) }));
  if (!inLoop) composite.push(fc.record({ kind: fc.constant("dynamicFork" as const), width: fc.integer({ min: 0, max: 4 }) }));
  return fc.oneof({ weight: 3, arbitrary: fc.oneof(...leaves) }, { weight: 2, arbitrary: fc.oneof(...composite) });
}

/** The workflow tasks of `list`, with reference names t1, t2, … in document order. */
function build(list: Shape[], next: { n: number }): WorkflowTaskDef[] {
  return list.flatMap((item): WorkflowTaskDef[] => {
    const ref = `t${++next.n}`;
    switch (item.kind) {
      case "wait":
        return [{ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} }];
      case "http":
        return [{ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { uri: `https://example.com/${ref}`, method: "GET" } }];
      case "noop":
        return [{ name: ref, taskReferenceName: ref, type: "NOOP", inputParameters: {} }];
      case "dynamic":
        return [{ name: ref, taskReferenceName: ref, type: "DYNAMIC", dynamicTaskNameParam: "run", inputParameters: { run: "WAIT" } }];
      case "switch": {
        const decisionCases = Object.fromEntries(item.cases.map((tasks, index) => [String(index), build(tasks, next)]));
        return [{ name: ref, taskReferenceName: ref, type: "SWITCH", evaluatorType: "value-param", expression: "pick", inputParameters: { pick: "${workflow.input.pick}" }, decisionCases, defaultCase: [] }];
      }
      case "fork": {
        const forkTasks = item.branches.map((tasks) => build(tasks, next));
        // A JOIN waits for the last task of the branches marked joined (their first task when that one is a SWITCH or a
        // fork, whose own tasks come after it: any task of the branch will do).
        const joinOn = forkTasks.flatMap((branch, index) => (item.joined[index] ? [branch.at(-1)!.taskReferenceName] : []));
        const joinRef = `t${++next.n}`;
        return [
          { name: ref, taskReferenceName: ref, type: "FORK_JOIN", inputParameters: {}, forkTasks },
          { name: joinRef, taskReferenceName: joinRef, type: "JOIN", inputParameters: {}, joinOn },
        ];
      }
      case "dynamicFork": {
        // One WAIT forked per entry (named _<ref>_w_<i>), all joined.
        const joinRef = `t${++next.n}`;
        const fork: WorkflowTaskDef = { name: ref, taskReferenceName: ref, type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskInputs: Array.from({ length: item.width }, (_, index) => ({ n: index })), forkTaskName: `${ref}_w`, forkTaskType: "WAIT" } };
        return [fork, { name: joinRef, taskReferenceName: joinRef, type: "JOIN", inputParameters: {}, joinOn: [] }];
      }
      case "loop":
        return [{ name: ref, taskReferenceName: ref, type: "DO_WHILE", inputParameters: { items: Array.from({ length: item.items }, (_, index) => index) }, loopOver: build(item.body, next) }];
    }
  });
}

const pending = (state: WorkflowExecution) => state.tasks.filter((task) => task.status === "SCHEDULED" || task.status === "IN_PROGRESS");

/**
 * The `choice`-th of the WAIT tasks a RUNNING execution waits in (a DYNAMIC runs as one), checking on the way that no
 * task has two pending runs and that something waits: only those WAITs and the DO_WHILEs and JOINs around them may be
 * pending.
 */
function waitingTask(state: WorkflowExecution, choice: number): TaskExecution {
  const open = pending(state);
  const names = open.map((task) => task.referenceTaskName);
  expect(new Set(names).size, `two pending runs of one task: ${names.join(", ")}`).toBe(names.length);
  const waits = open.filter((task) => (task.taskType === "WAIT" || task.taskType === "HTTP") && task.status === "IN_PROGRESS");
  expect(waits.length, `stalled with ${names.join(", ")} pending`).toBeGreaterThan(0);
  return waits[choice % waits.length]!;
}

/** `task` ends with `status` at `now`: an HTTP call's attempt answers, a WAIT is completed (or failed) from outside. */
function ended(state: WorkflowExecution, task: TaskExecution, status: "COMPLETED" | "FAILED", output: JsonObject, now: number): WorkflowExecution {
  const reason = status === "FAILED" ? { reason: "rolled" } : {};
  const event: ExecutionEvent =
    task.taskType === "HTTP" ? { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status, output, ...reason } : { type: "externalUpdate", taskId: task.taskId, status, output, ...reason };
  return decide(state, event, env(now)).state;
}

/** A loop paced across decisions goes on at its alarm: the execution after it, and the time then. */
function pacedOn(state: WorkflowExecution, now: number): { state: WorkflowExecution; now: number } {
  if (!pending(state).some((task) => task.status === "SCHEDULED" && task.scheduledTime > now)) return { state, now };
  return { state: decide(state, { type: "tick", liveTaskIds: new Set() }, env(now + 1_000)).state, now: now + 1_000 };
}

/** Each JOIN's `joinOn`, by the JOIN's reference name. */
function joinsOf(tasks: readonly WorkflowTaskDef[]): Map<string, string[]> {
  const joins = new Map<string, string[]>();
  const walk = (list: readonly WorkflowTaskDef[]): void => {
    for (const task of list) {
      if (task.type === "JOIN") joins.set(task.taskReferenceName, task.joinOn ?? []);
      for (const inner of [...Object.values(task.decisionCases ?? {}), task.defaultCase ?? [], ...(task.forkTasks ?? []), task.loopOver ?? []]) walk(inner);
    }
  };
  walk(tasks);
  return joins;
}

/** The loop iterations a task instance ran in, those of the loops around its loop included (a top-level DO_WHILE runs in none). */
const iterationOf = (state: WorkflowExecution, task: TaskExecution) => loopIterationsOf(state.definition, task).join();

/** Every COMPLETED JOIN run whose joined tasks had not all COMPLETED, in its own iteration, by the time it did. */
function joinsCompletedEarly(state: WorkflowExecution, joins: ReadonlyMap<string, string[]>): string[] {
  return state.tasks.flatMap((join) => {
    const joinOn = joins.get(definitionReferenceName(state.definition, join));
    if (joinOn === undefined || join.status !== "COMPLETED") return [];
    const ranWell = (ref: string) => state.tasks.some((task) => definitionReferenceName(state.definition, task) === ref && iterationOf(state, task) === iterationOf(state, join) && task.status === "COMPLETED" && task.endTime <= join.endTime);
    return joinOn.filter((ref) => !ranWell(ref)).map((ref) => `${join.referenceTaskName} before ${ref}`);
  });
}

describe("the decider over random definitions", () => {
  it("registers each, never stalls or runs a task twice at once, and completes with nothing pending, whatever the order of completions", () => {
    fc.assert(
      fc.property(shapes(0, false), fc.integer({ min: 0, max: 2 }), fc.array(fc.nat(), { minLength: 200, maxLength: 200 }), (tree, pick, choices) => {
        const tasks = build(tree, { n: 0 });
        const registered = validateWorkflowDef({ name: "random", version: 1, schemaVersion: 2, tasks });
        expect(registered.ok ? [] : registered.errors, JSON.stringify(tasks)).toEqual([]);
        let state = startedWith("random", registered.ok ? registered.value.tasks : [], { pick: String(pick) }).state;
        let now = 2_000;
        for (const choice of choices) {
          if (state.status !== "RUNNING") break;
          const task = waitingTask(state, choice);
          state = ended(state, task, "COMPLETED", { by: task.referenceTaskName }, (now += 10));
          ({ state, now } = pacedOn(state, now));
        }
        expect(state.status, `${JSON.stringify(tasks)} left ${pending(state).map((task) => task.referenceTaskName).join(", ")} pending`).toBe("COMPLETED");
        expect(pending(state)).toEqual([]);
        expect(joinsCompletedEarly(state, joinsOf(tasks))).toEqual([]);
      }),
      { numRuns: 300 },
    );
    // A second or two here; far more on a loaded CI machine.
  }, 60_000);

  it("with failures, task retries and workflow retries or reruns on the way, still never stalls or runs a task twice at once, and completes", () => {
    fc.assert(
      fc.property(shapes(0, false), fc.integer({ min: 0, max: 2 }), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 9 })), { minLength: 300, maxLength: 300 }), (tree, pick, choices) => {
        runsThroughFailures(tree, pick, choices, (task) => task, {});
      }),
      { numRuns: 300 },
    );
    // A second or two here; far more on a loaded CI machine.
  }, 60_000);

  it("the same under a rate limit (admitted at each start and reopen) with HTTP calls whose outputs are cached (found for some)", () => {
    const cached = (task: WorkflowTaskDef): WorkflowTaskDef => (task.type === "HTTP" ? { ...task, cacheConfig: { key: "${uri}", ttlInSecond: 60 } } : task);
    fc.assert(
      fc.property(shapes(0, false), fc.integer({ min: 0, max: 2 }), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 9 })), { minLength: 300, maxLength: 300 }), (tree, pick, choices) => {
        runsThroughFailures(tree, pick, choices, cached, { rateLimitConfig: { concurrentExecLimit: 1 } });
      }),
      { numRuns: 150 },
    );
  }, 60_000);
});

describe("the decider over random definitions, with jumps and upgrades on the way", () => {
  it("jumped back and forth to top-level tasks, and upgraded to a version with a task added first, still never stalls or runs a task twice at once, and completes", () => {
    fc.assert(
      fc.property(shapes(0, false), fc.integer({ min: 0, max: 2 }), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 9 })), { minLength: 300, maxLength: 300 }), (tree, pick, choices) => {
        const tasks = build(tree, { n: 0 });
        const registered = validateWorkflowDef({ name: "random", version: 1, schemaVersion: 2, tasks });
        expect(registered.ok ? [] : registered.errors).toEqual([]);
        const definition = registered.ok ? registered.value : { name: "random", version: 1, schemaVersion: 2, tasks };
        // Any top-level task but a JOIN can be jumped to.
        const targets = definition.tasks.filter((task) => task.type !== "JOIN").map((task) => task.taskReferenceName);
        const added: WorkflowTaskDef = { name: "added", taskReferenceName: "added", type: "NOOP", inputParameters: {} };
        let state = startedWith("random", definition.tasks, { pick: String(pick) }).state;
        let now = 2_000;
        let upgraded = false;
        for (const [choice, roll] of choices) {
          if (state.status !== "RUNNING") break;
          if (roll === 9 && !upgraded) {
            // Version 2 has one more task, first: already passed, it is recorded SKIPPED with the output given.
            state = decide(state, { type: "upgrade", definition: { ...definition, version: 2, tasks: [added, ...definition.tasks] }, taskOutput: { added: { by: "upgrade" } } }, env((now += 10))).state;
            expect(state.workflowVersion).toBe(2);
            expect(state.tasks.find((task) => task.referenceTaskName === "added")).toMatchObject({ status: "SKIPPED", outputData: { by: "upgrade" } });
            upgraded = true;
            ({ state, now } = pacedOn(state, now));
            continue;
          }
          if (roll >= 7) {
            const target = targets[choice % targets.length]!;
            const ran = state.tasks.findLast((task) => task.referenceTaskName === target);
            const wasPending = pending(state);
            state = decide(state, { type: "jump", taskReferenceName: target }, env((now += 10))).state;
            expect(state.status === "RUNNING" || state.status === "COMPLETED", `jump to ${target} of ${JSON.stringify(tasks)}`).toBe(true);
            const reached = state.tasks.findLast((task) => task.referenceTaskName === target);
            // Forward, it reaches the target at once, and nothing that ran before goes on; back, the target runs again and
            // only branches a JOIN before it did not wait for go on.
            expect(reached === undefined ? [] : [reached.referenceTaskName], `jump to ${target} of ${JSON.stringify(tasks)}`).toEqual([target]);
            const goingOn = pending(state).filter((task) => wasPending.some((before) => before.taskId === task.taskId) && task.taskId !== reached!.taskId);
            expect(goingOn.filter((task) => ran === undefined || task.seq > ran.seq).map((task) => task.referenceTaskName), `jump to ${target} of ${JSON.stringify(tasks)}`).toEqual([]);
            ({ state, now } = pacedOn(state, now));
            continue;
          }
          const task = waitingTask(state, choice);
          state = ended(state, task, "COMPLETED", { by: task.referenceTaskName }, (now += 10));
          ({ state, now } = pacedOn(state, now));
        }
        // Then nothing but completions: it ends.
        for (const [choice] of choices) {
          if (state.status !== "RUNNING") break;
          const task = waitingTask(state, choice);
          state = ended(state, task, "COMPLETED", {}, (now += 10));
          ({ state, now } = pacedOn(state, now));
        }
        expect(state.status, `${JSON.stringify(tasks)} left ${pending(state).map((task) => task.referenceTaskName).join(", ")} pending`).toBe("COMPLETED");
        expect(pending(state)).toEqual([]);
        expect(state.pendingJump).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  }, 60_000);
});

/**
 * Runs a definition of `tree` (each task passed through `adapt`, with `extra` definition fields) through failures, task
 * retries, workflow retries and reruns, pauses and skips as `choices` say, then a rerun and a restart, checking that it
 * never stalls or runs a task twice at once and completes each time.
 */
function runsThroughFailures(tree: Shape[], pick: number, choices: Array<[number, number]>, adapt: (task: WorkflowTaskDef) => WorkflowTaskDef, extra: Partial<WorkflowDef>): void {
  // Every WAIT and HTTP call may be retried once.
  const tasks = build(tree, { n: 0 }).map(function retried(task): WorkflowTaskDef {
    return adapt({
      ...task,
      ...(task.type === "WAIT" || task.type === "HTTP" || task.type === "DYNAMIC" ? { retryCount: 1 } : {}),
      ...(task.forkTasks ? { forkTasks: task.forkTasks.map((branch) => branch.map(retried)) } : {}),
      ...(task.loopOver ? { loopOver: task.loopOver.map(retried) } : {}),
      ...(task.decisionCases ? { decisionCases: Object.fromEntries(Object.entries(task.decisionCases).map(([key, branch]) => [key, branch.map(retried)])) } : {}),
    });
  });
  const registered = validateWorkflowDef({ name: "random", version: 1, schemaVersion: 2, tasks, ...extra });
  expect(registered.ok ? [] : registered.errors).toEqual([]);
  // What a retry, rerun or restart leaves: running again, or, when what it runs again is answered from the cache (found
  // before anything waits), already completed.
  const reopened = JSON.stringify(tasks).includes("cacheConfig") ? ["RUNNING", "COMPLETED"] : ["RUNNING"];
  let state = startedWith("random", registered.ok ? registered.value.tasks : [], { pick: String(pick) }, registered.ok ? { rateLimitConfig: registered.value.rateLimitConfig } : {}).state;
  let now = 2_000;
  // Failures for the first half of the choices only, so that the run can end.
  for (const [index, [choice, roll]] of choices.entries()) {
    if (state.status === "COMPLETED") break;
    if (state.status === "FAILED") {
      // Run it again: a retry, or a rerun from the task that failed (answered from the cache, it may complete at once).
      const failed = state.tasks.findLast((task) => task.status === "FAILED");
      const again: ExecutionEvent = roll % 2 === 0 || failed === undefined ? { type: "retry" } : { type: "rerun", fromTaskId: failed.taskId };
      state = decide(state, again, env((now += 10))).state;
      // Either runs the failed task again: the workflow runs on from there.
      expect(reopened, `${again.type} of ${JSON.stringify(tasks)}`).toContain(state.status);
      continue;
    }
    if (roll === 8) {
      // Paused and resumed between two completions: nothing is lost or run twice.
      state = decide(state, { type: "pause" }, env((now += 10))).state;
      expect(state.status).toBe("PAUSED");
      state = decide(state, { type: "resume" }, env((now += 10))).state;
      ({ state, now } = pacedOn(state, now));
      continue;
    }
    const task = waitingTask(state, choice);
    if (roll === 9) {
      // Skipped from outside instead (by its definition's name: a loop task's current run), as if done.
      state = decide(state, { type: "skipTask", taskReferenceName: definitionReferenceName(state.definition, task), taskOutput: { skipped: true } }, env((now += 10))).state;
      expect(state.tasks.find((candidate) => candidate.taskId === task.taskId)?.status).toBe("SKIPPED");
      ({ state, now } = pacedOn(state, now));
      continue;
    }
    const status = index < 150 && roll < 3 ? "FAILED" : "COMPLETED";
    state = ended(state, task, status, { by: task.referenceTaskName }, (now += 10));
    ({ state, now } = pacedOn(state, now));
  }
  expect(state.status, `${JSON.stringify(tasks)} left ${pending(state).map((task) => task.referenceTaskName).join(", ")} pending`).toBe("COMPLETED");
  expect(pending(state)).toEqual([]);

  // Completed, it is rerun from one of its WAITs or HTTP calls (any run of any): it runs on from there and completes again.
  const waits = state.tasks.filter((task) => task.taskType === "WAIT" || task.taskType === "HTTP");
  // (A SWITCH may have taken an empty branch: nothing ran to rerun from.)
  if (waits.length === 0) return;
  const from = waits[(choices[0]?.[0] ?? 0) % waits.length]!;
  state = decide(state, { type: "rerun", fromTaskId: from.taskId }, env((now += 10))).state;
  expect(reopened, `rerun from ${from.referenceTaskName} of ${JSON.stringify(tasks)}`).toContain(state.status);
  for (const [choice] of choices) {
    if (state.status !== "RUNNING") break;
    const task = waitingTask(state, choice);
    state = ended(state, task, "COMPLETED", { again: true }, (now += 10));
    ({ state, now } = pacedOn(state, now));
  }
  expect(state.status, `after the rerun from ${from.referenceTaskName} of ${JSON.stringify(tasks)}, ${pending(state).map((task) => task.referenceTaskName).join(", ")} pending`).toBe("COMPLETED");
  expect(pending(state)).toEqual([]);

  // And restarted: it runs from the start, as new, and completes again.
  state = decide(state, { type: "restart" }, env((now += 10))).state;
  expect(reopened).toContain(state.status);
  for (const [choice] of choices) {
    if (state.status !== "RUNNING") break;
    const task = waitingTask(state, choice);
    state = ended(state, task, "COMPLETED", {}, (now += 10));
    ({ state, now } = pacedOn(state, now));
  }
  expect(state.status, `after a restart of ${JSON.stringify(tasks)}`).toBe("COMPLETED");
  expect(pending(state)).toEqual([]);
}

