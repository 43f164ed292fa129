// Properties of the decider over random definitions: SWITCHes (with a defaultCase), FORK_JOINs (nested, in loops, their
// JOINs joining some branches), CONDITIONAL_FORKs, dynamic forks, DO_WHILEs and WHILEs (over items, or under a
// loopCondition; some keeping their last iterations), DYNAMIC tasks, NOOP, INLINE, SET_VARIABLE and TERMINATE steps
// around WAITs completed (or skipped) from outside and HTTP and HTTP_SYNC calls answering, in a random order, some of
// them optional or permissive. Whatever the shape and the order, every definition registers, the workflow never stalls,
// never holds two pending runs of one task, never ends a JOIN while a branch it joins still runs, and completes with
// nothing left pending; a permissive task failed for good fails it at a JOIN or at its end; and a run whose every
// decision is stored and read back as the execution's object does decides exactly as one kept in memory.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DecideEnv } from "../../src/engine/config";
import { awaitedTaskDefNames, createExecution, type Decision, type ExecutionEvent } from "../../src/engine/decider";
import { decide as decideAlone } from "./frozen-decide";
import { awaitedCacheLookups } from "../../src/engine/task-cache";
import { MAX_TASKS_PER_DEFINITION, validateWorkflowDef } from "../../src/engine/definition/validate";
import { isHttpType, type JsonObject, type TaskExecution, type WorkflowDef, type WorkflowExecution, type WorkflowTaskDef } from "../../src/engine/model";
import { definitionReferenceName, isPermissiveFailure, loopIterationsOf, planIndexOf, planOf, planTask, ranInIterations, ROOT_LANE } from "../../src/engine/plan";
import { ExecutionStore } from "../../src/actors/execution-store";
import { env as knowingEnv } from "./engine-env";

/** The decider's environment at `now`, knowing no task definition at once: what a DYNAMIC chooses or a dynamic fork forks waits for its look-up. */
const env = (now: number): DecideEnv => ({ ...knowingEnv(now), taskDefs: () => undefined });

/**
 * A decision, followed by what the actor answers it: the look-up of the task definitions it left tasks waiting for (none
 * registered), the admission of an execution waiting for its rate limit's place, and the look-up of cached outputs (found
 * for the HTTP calls whose reference number is even).
 */
function decide(state: WorkflowExecution, event: ExecutionEvent, environment: DecideEnv, persist: (state: WorkflowExecution) => WorkflowExecution = (same) => same): Decision {
  let decision = decideAlone(state, event, environment);
  const then = (next: ExecutionEvent) => {
    // The actor stores each decision before it answers the next.
    const answered = decideAlone(persist(decision.state), next, environment);
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
    if (lookups.length === 0) {
      expect(joinsEndedBesideJoinedLanes(state, decision.state), `${event.type} of ${JSON.stringify(state.definition.tasks)}`).toEqual([]);
      return { ...decision, state: persist(decision.state) };
    }
    then({ type: "cacheLookedUp", outputs: Object.fromEntries(lookups.map(({ taskId, key }) => [taskId, Number(key.slice(key.lastIndexOf("t") + 1)) % 2 === 0 ? { cached: key } : null])) });
  }
  throw new Error("the actor's answers did not settle");
}

/**
 * Every JOIN that ended well in the decision from `before` to `after` while a task of a branch it joins (a task's lane,
 * the last of its branch in these definitions) was pending, scheduled since the JOIN's fork: the branch was still to
 * end, running again a task the JOIN took as ended (a workflow retry running a lane again from a permissive task).
 */
function joinsEndedBesideJoinedLanes(before: WorkflowExecution, after: WorkflowExecution): string[] {
  const plan = planOf(after.definition);
  const endedWell = (task: TaskExecution | undefined) => task !== undefined && (task.status === "COMPLETED" || task.status === "COMPLETED_WITH_ERRORS");
  return after.tasks.flatMap((join) => {
    if (join.taskType !== "JOIN" || !endedWell(join) || endedWell(before.tasks.find((task) => task.taskId === join.taskId))) return [];
    const fork = plan.forkOfJoin.get(join.definitionIndex);
    const since = after.tasks.findLast((task) => task.definitionIndex === fork && task.seq < join.seq)?.seq ?? -1;
    // In a loop, the JOIN's own iteration's (the loops around it): a later iteration runs its branches anew.
    const iterations = loopIterationsOf(after.definition, join);
    const joinOn = Array.isArray(join.inputData["joinOn"]) ? join.inputData["joinOn"].filter((name): name is string => typeof name === "string") : [];
    return joinOn.flatMap((name) => {
      const lane = plan.steps[planIndexOf(after.definition, name)]?.lane;
      if (lane === undefined || lane === ROOT_LANE || lane === plan.steps[join.definitionIndex]!.lane) return [];
      const running = pending(after).filter((task) => task.seq > since && plan.steps[task.definitionIndex]?.lane === lane && ranInIterations(after.definition, task, iterations));
      return running.map((task) => `${join.referenceTaskName} ended with ${task.referenceTaskName} of ${name}'s branch ${task.status}`);
    });
  });
}

/** The first decision of execution `wf-1` of a definition named `name` holding `tasks` (with `extra` fields), started with `input`. */
function startedWith(name: string, tasks: WorkflowTaskDef[], input: JsonObject, extra: Partial<WorkflowDef> = {}): Decision {
  const definition = { name, version: 1, schemaVersion: 2, tasks, ...extra };
  return decide(createExecution({ workflowId: "wf-1", definition, input }, 1_000), { type: "start" }, env(1_000));
}

/** How many times more than by default each property runs: `PROPERTY_RUNS` (hunting locally with many runs: 10 or more). */
const scale = Number(process.env["PROPERTY_RUNS"] ?? "1");

/**
 * Each property's time limit, grown with `PROPERTY_RUNS`: a property is one synchronous call, which vitest fails as timed
 * out once it has returned past the limit, reporting neither fast-check's seed nor its path, so that a hunt at many runs
 * on a loaded machine would fail with nothing to replay.
 */
const TIME_LIMIT = 60_000 * Math.max(1, scale);

/**
 * fast-check's settings for a property run `numRuns` times: `PROPERTY_RUNS` multiplies that (hunting locally with many
 * runs: PROPERTY_RUNS=10), and `PROPERTY_SEED` with `PROPERTY_PATH` replays one counterexample.
 */
function runs(numRuns: number): fc.Parameters<unknown> {
  const seed = process.env["PROPERTY_SEED"];
  const path = process.env["PROPERTY_PATH"];
  const example = process.env["PROPERTY_EXAMPLE"];
  if (example !== undefined) return { numRuns: 1, examples: [JSON.parse(example) as never], endOnFailure: true };
  return { numRuns: Math.max(1, Math.round(numRuns * scale)), ...(seed === undefined ? {} : { seed: Number(seed) }), ...(path === undefined ? {} : { path }) };
}

/** How a leaf that can fail is flagged: neither, `optional`, `permissive`, or both (optional wins). */
type Flag = "none" | "optional" | "permissive" | "both";

/** When a CONDITIONAL_FORK branch runs: always (no condition), never, always by a condition, or as the input's pick says. */
type BranchCondition = "none" | "yes" | "no" | "pick";

/** A definition tree before reference names are given: built by fast-check, named in order afterwards. */
type Shape =
  | { kind: "wait"; flag: Flag }
  | { kind: "http"; flag: Flag; sync: boolean }
  | { kind: "dynamic"; flag: Flag }
  | { kind: "noop" }
  | { kind: "inline" }
  | { kind: "setVariable" }
  | { kind: "terminate" }
  | { kind: "switch"; cases: Shape[][]; defaultCase: Shape[] }
  | { kind: "fork"; branches: Shape[][]; joined: boolean[] }
  | { kind: "conditionalFork"; branches: Array<{ condition: BranchCondition; tasks: Shape[] }>; defaultCase: Shape[] }
  | { kind: "dynamicFork"; width: number }
  | { kind: "loop"; type: "DO_WHILE" | "WHILE"; by: "items" | "condition"; count: number; keepLastN: number | null; body: Shape[] };

/**
 * What the generator may build: TERMINATEs (ending the workflow COMPLETED), how often (in 10) a leaf carries a flag,
 * and whether that flag may be `permissive`.
 */
interface ShapeOptions {
  terminate: boolean;
  flagged: number;
  permissive: boolean;
}

const SHAPES: ShapeOptions = { terminate: true, flagged: 2, permissive: true };

/**
 * For the runs through workflow retries and reruns: permissive tasks too. A workflow retry runs a permissive task that
 * failed for good again (and the tasks after it again, the branches of forks among them once their fork is reached
 * anew, a JOIN joining them waiting for them); a rerun leaves one that tasks ran after as it failed, so that a workflow
 * a TERMINATE had completed over it fails for it once rerun, while one a retry had run again (retried) stays replaced
 * even where the rerun drops that retry's run, going back before it (see runsThroughFailures).
 */
const RETRIED: ShapeOptions = { terminate: true, flagged: 2, permissive: true };

/** For the permissive property: flags on half the leaves, no TERMINATE (its COMPLETED would hide a failure). */
const PERMISSIVE: ShapeOptions = { terminate: false, flagged: 5, permissive: true };

const MAX_DEPTH = 3;

/**
 * The top-level trees of the random definitions: those whose definition registers, within MAX_TASKS_PER_DEFINITION
 * tasks with one to spare (the upgrade property adds a task first). At high run counts the generator builds larger
 * ones now and then, which a hunt would report as a refused definition rather than a bug.
 */
function definitionShapes(options: ShapeOptions = SHAPES): fc.Arbitrary<Shape[]> {
  return shapes(0, false, options).filter((tree) => {
    const next = { n: 0 };
    build(tree, next);
    return next.n < MAX_TASKS_PER_DEFINITION;
  });
}

function shapes(depth: number, inLoop: boolean, options: ShapeOptions = SHAPES, minLength = 1): fc.Arbitrary<Shape[]> {
  return fc.array(shape(depth, inLoop, options), { minLength, maxLength: 3 });
}

function shape(depth: number, inLoop: boolean, options: ShapeOptions): fc.Arbitrary<Shape> {
  const flag: fc.Arbitrary<Flag> = fc.oneof(
    { weight: 10 - options.flagged, arbitrary: fc.constant("none" as const) },
    { weight: options.flagged, arbitrary: options.permissive ? fc.constantFrom("optional" as const, "permissive" as const, "permissive" as const, "both" as const) : fc.constant("optional" as const) },
  );
  const waiting: Array<fc.Arbitrary<Shape>> = [
    fc.record({ kind: fc.constant("wait" as const), flag }),
    fc.record({ kind: fc.constant("http" as const), flag, sync: fc.boolean() }),
    fc.record({ kind: fc.constant("dynamic" as const), flag }),
  ];
  // Steps that end in the decision that reaches them.
  const passing: Array<fc.Arbitrary<Shape>> = [fc.constant({ kind: "noop" } as const), fc.constant({ kind: "inline" } as const), fc.constant({ kind: "setVariable" } as const)];
  const leaves = fc.oneof({ weight: 6, arbitrary: fc.oneof(...waiting) }, { weight: 2, arbitrary: fc.oneof(...passing) }, ...(options.terminate ? [{ weight: 1, arbitrary: fc.constant({ kind: "terminate" } as const) }] : []));
  if (depth >= MAX_DEPTH) return leaves;
  const inner = (loop: boolean, minLength = 1) => shapes(depth + 1, loop, options, minLength);
  const composite: Array<fc.Arbitrary<Shape>> = [
    fc.record({ kind: fc.constant("switch" as const), cases: fc.array(inner(inLoop), { minLength: 1, maxLength: 3 }), defaultCase: inner(inLoop, 0) }),
    fc
      .array(inner(inLoop), { minLength: 1, maxLength: 3 })
      .chain((branches) => fc.array(fc.boolean(), { minLength: branches.length, maxLength: branches.length }).map((joined) => ({ kind: "fork" as const, branches, joined }))),
    // A defaultCase that holds a task, so that a fork choosing nothing does not fail the workflow.
    fc.record({
      kind: fc.constant("conditionalFork" as const),
      branches: fc.array(fc.record({ condition: fc.constantFrom<BranchCondition>("none", "yes", "no", "pick"), tasks: inner(inLoop) }), { minLength: 1, maxLength: 3 }),
      defaultCase: inner(inLoop),
    }),
    fc.record({
      kind: fc.constant("loop" as const),
      type: fc.constantFrom("DO_WHILE" as const, "WHILE" as const),
      by: fc.constantFrom("items" as const, "condition" as const),
      count: fc.integer({ min: 0, max: 3 }),
      keepLastN: fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 }) }),
      body: inner(true),
    }),
  ];
  // Loops hold no dynamic fork here.
  if (!inLoop) composite.push(fc.record({ kind: fc.constant("dynamicFork" as const), width: fc.integer({ min: 0, max: 4 }) }));
  return fc.oneof({ weight: 3, arbitrary: leaves }, { weight: 2, arbitrary: fc.oneof(...composite) });
}

/** The flags of a leaf, as written in its workflow task. */
const flagged = (flag: Flag): Partial<WorkflowTaskDef> => ({ ...(flag === "optional" || flag === "both" ? { optional: true } : {}), ...(flag === "permissive" || flag === "both" ? { permissive: true } : {}) });

/** A CONDITIONAL_FORK branch's condition over the fork's input `{yes: true, no: false, pick}`. */
const conditionOf = (condition: Exclude<BranchCondition, "none">) =>
  condition === "pick" ? { evaluatorType: "javascript" as const, expression: "$.pick == '1'" } : { evaluatorType: "value-param" as const, expression: condition };

/** The workflow tasks of `list`, with reference names t1, t2, … in document order. */
function build(list: Shape[], next: { n: number }): WorkflowTaskDef[] {
  return list.flatMap((item): WorkflowTaskDef[] => {
    const ref = `t${++next.n}`;
    switch (item.kind) {
      case "wait":
        return [{ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {}, ...flagged(item.flag) }];
      case "http":
        return [{ name: ref, taskReferenceName: ref, type: item.sync ? "HTTP_SYNC" : "HTTP", inputParameters: { uri: `https://example.com/${ref}`, method: "GET" }, ...flagged(item.flag) }];
      case "dynamic":
        return [{ name: ref, taskReferenceName: ref, type: "DYNAMIC", dynamicTaskNameParam: "run", inputParameters: { run: "WAIT" }, ...flagged(item.flag) }];
      case "noop":
        return [{ name: ref, taskReferenceName: ref, type: "NOOP", inputParameters: {} }];
      case "inline":
        return [{ name: ref, taskReferenceName: ref, type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "$.n + 1", n: 1 } }];
      case "setVariable":
        return [{ name: ref, taskReferenceName: ref, type: "SET_VARIABLE", inputParameters: { [ref]: "${workflow.input.pick}" } }];
      case "terminate":
        return [{ name: ref, taskReferenceName: ref, type: "TERMINATE", inputParameters: { terminationStatus: "COMPLETED" } }];
      case "switch": {
        const decisionCases = Object.fromEntries(item.cases.map((tasks, index) => [String(index), build(tasks, next)]));
        return [{ name: ref, taskReferenceName: ref, type: "SWITCH", evaluatorType: "value-param", expression: "pick", inputParameters: { pick: "${workflow.input.pick}" }, decisionCases, defaultCase: build(item.defaultCase, next) }];
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
      case "conditionalFork": {
        const conditionalBranches = item.branches.map(({ condition, tasks }) => ({ ...(condition === "none" ? {} : { condition: conditionOf(condition) }), tasks: build(tasks, next) }));
        const defaultCase = build(item.defaultCase, next);
        // Its JOIN waits for the last task of each chosen branch, whatever its joinOn says.
        const joinRef = `t${++next.n}`;
        return [
          { name: ref, taskReferenceName: ref, type: "CONDITIONAL_FORK", inputParameters: { yes: true, no: false, pick: "${workflow.input.pick}" }, conditionalBranches, defaultCase },
          { name: joinRef, taskReferenceName: joinRef, type: "JOIN", inputParameters: {} },
        ];
      }
      case "dynamicFork": {
        // One WAIT forked per entry (named _<ref>_w_<i>), all joined.
        const joinRef = `t${++next.n}`;
        const fork: WorkflowTaskDef = { name: ref, taskReferenceName: ref, type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskInputs: Array.from({ length: item.width }, (_, index) => ({ n: index })), forkTaskName: `${ref}_w`, forkTaskType: "WAIT" } };
        return [fork, { name: joinRef, taskReferenceName: joinRef, type: "JOIN", inputParameters: {}, joinOn: [] }];
      }
      case "loop": {
        // Over `count` items, or while its iteration is below `count` (a DO_WHILE runs once at least, a WHILE maybe none).
        const keep: JsonObject = item.keepLastN === null ? {} : { keepLastN: item.keepLastN };
        const over: Partial<WorkflowTaskDef> = item.by === "items" ? { inputParameters: { items: Array.from({ length: item.count }, (_, index) => index), ...keep } } : { inputParameters: keep, loopCondition: `$.${ref}.iteration < ${item.count}` };
        return [{ name: ref, taskReferenceName: ref, type: item.type, ...over, loopOver: build(item.body, next) }];
      }
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
  const waits = open.filter((task) => (task.taskType === "WAIT" || isHttpType(task.taskType)) && task.status === "IN_PROGRESS");
  expect(waits.length, `stalled with ${names.join(", ")} pending`).toBeGreaterThan(0);
  return waits[choice % waits.length]!;
}

/** `task` ends with `status` at `now`: an HTTP call's attempt answers, a WAIT is completed (or failed) from outside. */
function ended(state: WorkflowExecution, task: TaskExecution, status: "COMPLETED" | "FAILED", output: JsonObject, now: number): WorkflowExecution {
  const reason = status === "FAILED" ? { reason: "rolled" } : {};
  const event: ExecutionEvent =
    isHttpType(task.taskType) ? { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status, output, ...reason } : { type: "externalUpdate", taskId: task.taskId, status, output, ...reason };
  return decide(state, event, env(now)).state;
}

/** A loop paced across decisions goes on at its alarm: the execution after it, and the time then. */
function pacedOn(state: WorkflowExecution, now: number): { state: WorkflowExecution; now: number } {
  if (!pending(state).some((task) => task.status === "SCHEDULED" && task.scheduledTime > now)) return { state, now };
  return { state: decide(state, { type: "tick", liveTaskIds: new Set() }, env(now + 1_000)).state, now: now + 1_000 };
}

/** Each JOIN's `joinOn`, by the JOIN's reference name (null after a CONDITIONAL_FORK: its run's input says what it joins). */
function joinsOf(tasks: readonly WorkflowTaskDef[]): Map<string, string[] | null> {
  const joins = new Map<string, string[] | null>();
  const walk = (list: readonly WorkflowTaskDef[]): void => {
    for (const [index, task] of list.entries()) {
      if (task.type === "JOIN") joins.set(task.taskReferenceName, list[index - 1]?.type === "CONDITIONAL_FORK" ? null : (task.joinOn ?? []));
      for (const inner of [...Object.values(task.decisionCases ?? {}), task.defaultCase ?? [], ...(task.forkTasks ?? []), ...(task.conditionalBranches ?? []).map((branch) => branch.tasks), task.loopOver ?? []]) walk(inner);
    }
  };
  walk(tasks);
  return joins;
}

/** The loop iterations a task instance ran in, those of the loops around its loop included (a top-level DO_WHILE runs in none). */
const iterationOf = (state: WorkflowExecution, task: TaskExecution) => loopIterationsOf(state.definition, task).join();

/** Every COMPLETED JOIN run whose joined tasks had not all ended well, in its own iteration, by the time it did. */
function joinsCompletedEarly(state: WorkflowExecution, joins: ReadonlyMap<string, string[] | null>): string[] {
  const endedWell = new Set(["COMPLETED", "COMPLETED_WITH_ERRORS", "SKIPPED"]);
  return state.tasks.flatMap((join) => {
    const written = joins.get(definitionReferenceName(state.definition, join));
    if (written === undefined || (join.status !== "COMPLETED" && join.status !== "COMPLETED_WITH_ERRORS")) return [];
    const joinOn = written ?? (join.inputData["joinOn"] as string[]);
    const ranWell = (ref: string) => state.tasks.some((task) => definitionReferenceName(state.definition, task) === ref && iterationOf(state, task) === iterationOf(state, join) && endedWell.has(task.status) && task.endTime <= join.endTime);
    return joinOn.filter((ref) => !ranWell(ref)).map((ref) => `${join.referenceTaskName} before ${ref}`);
  });
}

describe("the decider over random definitions", () => {
  it("registers each, never stalls or runs a task twice at once, and completes with nothing pending, whatever the order of completions", () => {
    fc.assert(
      fc.property(definitionShapes(), fc.integer({ min: 0, max: 2 }), fc.array(fc.nat(), { minLength: 200, maxLength: 200 }), (tree, pick, choices) => {
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
      runs(300),
    );
    // A second or two here; far more on a loaded CI machine.
  }, TIME_LIMIT);

  it("with failures, task retries and workflow retries or reruns on the way, still never stalls or runs a task twice at once, and completes", () => {
    fc.assert(
      fc.property(definitionShapes(RETRIED), fc.integer({ min: 0, max: 2 }), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 9 })), { minLength: 300, maxLength: 300 }), (tree, pick, choices) => {
        runsThroughFailures(tree, pick, choices, (task) => task, {});
      }),
      runs(300),
    );
    // A second or two here; far more on a loaded CI machine.
  }, TIME_LIMIT);

  it("the same under a rate limit (admitted at each start and reopen) with HTTP calls whose outputs are cached (found for some)", () => {
    const cached = (task: WorkflowTaskDef): WorkflowTaskDef => (isHttpType(task.type) ? { ...task, cacheConfig: { key: "${uri}", ttlInSecond: 60 } } : task);
    fc.assert(
      fc.property(definitionShapes(RETRIED), fc.integer({ min: 0, max: 2 }), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 9 })), { minLength: 300, maxLength: 300 }), (tree, pick, choices) => {
        runsThroughFailures(tree, pick, choices, cached, { rateLimitConfig: { concurrentExecLimit: 1 } });
      }),
      runs(150),
    );
  }, TIME_LIMIT);
});

describe("the decider over random definitions, with jumps and upgrades on the way", () => {
  it("jumped back and forth to top-level tasks, and upgraded to a version with a task added first, still never stalls or runs a task twice at once, and completes", () => {
    fc.assert(
      fc.property(definitionShapes(), fc.integer({ min: 0, max: 2 }), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 9 })), { minLength: 300, maxLength: 300 }), (tree, pick, choices) => {
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
      runs(300),
    );
  }, TIME_LIMIT);
});

/** `tasks` with every WAIT, HTTP call and DYNAMIC retried once, at any depth, each task then passed through `adapt`. */
function retriedOnce(tasks: WorkflowTaskDef[], adapt: (task: WorkflowTaskDef) => WorkflowTaskDef = (task) => task): WorkflowTaskDef[] {
  return tasks.map(function retried(task): WorkflowTaskDef {
    return adapt({
      ...task,
      ...(task.type === "WAIT" || isHttpType(task.type) || task.type === "DYNAMIC" ? { retryCount: 1 } : {}),
      ...(task.forkTasks ? { forkTasks: task.forkTasks.map((branch) => branch.map(retried)) } : {}),
      ...(task.loopOver ? { loopOver: task.loopOver.map(retried) } : {}),
      ...(task.decisionCases ? { decisionCases: Object.fromEntries(Object.entries(task.decisionCases).map(([key, branch]) => [key, branch.map(retried)])) } : {}),
      ...(task.defaultCase ? { defaultCase: task.defaultCase.map(retried) } : {}),
      ...(task.conditionalBranches ? { conditionalBranches: task.conditionalBranches.map((branch) => ({ ...branch, tasks: branch.tasks.map(retried) })) } : {}),
    });
  });
}

/**
 * Runs a definition of `tree` (each task passed through `adapt`, with `extra` definition fields) through failures, task
 * retries, workflow retries and reruns, pauses and skips as `choices` say, then a rerun and a restart, checking that it
 * never stalls or runs a task twice at once and completes each time.
 */
function runsThroughFailures(tree: Shape[], pick: number, choices: Array<[number, number]>, adapt: (task: WorkflowTaskDef) => WorkflowTaskDef, extra: Partial<WorkflowDef>): void {
  const tasks = retriedOnce(build(tree, { n: 0 }), adapt);
  const registered = validateWorkflowDef({ name: "random", version: 1, schemaVersion: 2, tasks, ...extra });
  expect(registered.ok ? [] : registered.errors).toEqual([]);
  // What a retry, rerun or restart leaves: running again, or, when what it runs again is answered from the cache (found
  // before anything waits), already completed.
  // A TERMINATE reached before anything waits ends it COMPLETED at once too.
  const reopened = JSON.stringify(tasks).includes("cacheConfig") || JSON.stringify(tasks).includes('"TERMINATE"') ? ["RUNNING", "COMPLETED"] : ["RUNNING"];
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
  const waits = state.tasks.filter((task) => task.taskType === "WAIT" || isHttpType(task.taskType));
  // (A SWITCH may have taken an empty branch: nothing ran to rerun from.)
  if (waits.length === 0) return;
  const from = waits[(choices[0]?.[0] ?? 0) % waits.length]!;
  // A TERMINATE may have completed it over a permissive task failed for good: a rerun from another task leaves that
  // failure where tasks ran after it, and the workflow, run again to its end, fails for it (at once when nothing of the
  // rerun waits). One the TERMINATE canceled runs again. One a retry ran again (retried) is not failed for, also where
  // the rerun drops the retry's run of it (rerun from a task of a fork's run the retry went back before).
  const leftFailed = (execution: WorkflowExecution) => execution.tasks.filter((task) => task.status !== "CANCELED" && isPermissiveFailure(execution.definition, task)).map((task) => task.taskId);
  const failedBefore = new Set(leftFailed(state));
  state = decide(state, { type: "rerun", fromTaskId: from.taskId }, env((now += 10))).state;
  expect([...reopened, ...(failedBefore.size > 0 ? ["FAILED"] : [])], `rerun from ${from.referenceTaskName} of ${JSON.stringify(tasks)}`).toContain(state.status);
  for (const [choice] of choices) {
    if (state.status !== "RUNNING") break;
    const task = waitingTask(state, choice);
    state = ended(state, task, "COMPLETED", { again: true }, (now += 10));
    ({ state, now } = pacedOn(state, now));
  }
  if (state.status === "FAILED") {
    // Only for such a failure, left as it was; a retry then runs it again, and the workflow completes.
    const left = leftFailed(state);
    expect(left.length > 0 && left.every((taskId) => failedBefore.has(taskId)), `after the rerun from ${from.referenceTaskName} of ${JSON.stringify(tasks)}: ${state.reasonForIncompletion}`).toBe(true);
    state = decide(state, { type: "retry" }, env((now += 10))).state;
    for (const [choice] of choices) {
      if (state.status !== "RUNNING") break;
      const task = waitingTask(state, choice);
      state = ended(state, task, "COMPLETED", { again: true }, (now += 10));
      ({ state, now } = pacedOn(state, now));
    }
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


describe("the decider over random definitions with optional and permissive tasks failing for good", () => {
  it("an optional task failed is COMPLETED_WITH_ERRORS and the workflow goes on; a permissive one stays FAILED, the workflow runs on and fails at a JOIN joining it or at its end, never stalling", () => {
    fc.assert(
      fc.property(definitionShapes(PERMISSIVE), fc.integer({ min: 0, max: 2 }), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 9 })), { minLength: 300, maxLength: 300 }), (tree, pick, choices) => {
        const tasks = build(tree, { n: 0 });
        const registered = validateWorkflowDef({ name: "random", version: 1, schemaVersion: 2, tasks });
        expect(registered.ok ? [] : registered.errors).toEqual([]);
        let state = startedWith("random", registered.ok ? registered.value.tasks : [], { pick: String(pick) }).state;
        let now = 2_000;
        // A permissive task (not optional, outside any loop) failed: the workflow must fail, at a JOIN or at its end.
        let permissiveFailed = false;
        for (const [choice, roll] of choices) {
          if (state.status !== "RUNNING") break;
          const task = waitingTask(state, choice);
          const step = planTask(state.definition, task.definitionIndex)!;
          const fails = (step.optional === true || step.permissive === true) && roll < 4;
          const pendingBefore = new Set(pending(state).map((pendingTask) => pendingTask.taskId));
          state = ended(state, task, fails ? "FAILED" : "COMPLETED", { by: task.referenceTaskName }, (now += 10));
          ({ state, now } = pacedOn(state, now));
          const what = `${task.referenceTaskName} of ${JSON.stringify(tasks)}`;
          const after = state.tasks.find((candidate) => candidate.taskId === task.taskId)!;
          if (fails && step.optional === true) expect(after.status, what).toBe("COMPLETED_WITH_ERRORS");
          else if (fails && loopIterationsOf(state.definition, task).length > 0) {
            // Inside a loop the flag is not applied: the workflow fails at once.
            expect(state.status, what).toBe("FAILED");
            return;
          } else if (fails) {
            expect(after.status, what).toBe("FAILED");
            permissiveFailed = true;
          }
          if (state.status === "FAILED") {
            expect(permissiveFailed, what).toBe(true);
            // At a JOIN that failed for it, or at the end: nothing that was running was canceled.
            const joinFailed = state.tasks.some((candidate) => candidate.taskType === "JOIN" && candidate.status === "FAILED");
            if (!joinFailed) expect(state.tasks.filter((candidate) => candidate.status === "CANCELED" && pendingBefore.has(candidate.taskId)).map((candidate) => candidate.referenceTaskName), what).toEqual([]);
          } else expect(state.status, what).toBe(pending(state).length > 0 ? "RUNNING" : "COMPLETED");
        }
        expect(state.status, `${JSON.stringify(tasks)} left ${pending(state).map((task) => task.referenceTaskName).join(", ")} pending`).toBe(permissiveFailed ? "FAILED" : "COMPLETED");
        expect(pending(state)).toEqual([]);
      }),
      runs(100),
    );
  }, TIME_LIMIT);
});

/**
 * A Durable Object's SqlStorage, in memory: the statements ExecutionStore runs, and no other (any other throws). A
 * replaced row goes last in its table, as SQLite gives it a new row id.
 */
class MemorySql {
  readonly #tables = new Map<string, Map<string, Record<string, unknown>>>();

  exec(query: string, ...bindings: unknown[]): { toArray(): Array<Record<string, unknown>>; one(): Record<string, unknown> } {
    const rows = this.#run(query.replace(/\s+/g, " ").trim(), bindings);
    return {
      toArray: () => rows,
      one: () => {
        if (rows.length !== 1) throw new Error(`${rows.length} rows for ${query}`);
        return rows[0]!;
      },
    };
  }

  #table(name: string): Map<string, Record<string, unknown>> {
    const table = this.#tables.get(name);
    if (table === undefined) throw new Error(`no table ${name}`);
    return table;
  }

  #run(query: string, bindings: unknown[]): Array<Record<string, unknown>> {
    let match: RegExpMatchArray | null;
    if (query.startsWith("SELECT name FROM sqlite_master")) return ["meta", "task_logs", "workflow_parts"].filter((name) => this.#tables.has(name)).map((name) => ({ name }));
    if ((match = query.match(/^CREATE TABLE IF NOT EXISTS (\w+)/))) {
      if (!this.#tables.has(match[1]!)) this.#tables.set(match[1]!, new Map());
      return [];
    }
    if ((match = query.match(/^INSERT OR REPLACE INTO (\w+) \(([^)]*)\) VALUES \(([^)]*)\)$/))) {
      const columns = match[2]!.split(",").map((column) => column.trim());
      const given = [...bindings];
      const values = match[3]!.split(",").map((value) => (value.trim() === "?" ? given.shift() : Number(value.trim())));
      const row = Object.fromEntries(columns.map((column, index) => [column, values[index]]));
      const table = this.#table(match[1]!);
      const key = String(values[0]);
      table.delete(key);
      table.set(key, row);
      return [];
    }
    if ((match = query.match(/^DELETE FROM (tasks|meta) WHERE (task_id|key) = \?$/))) {
      this.#table(match[1]!).delete(String(bindings[0]));
      return [];
    }
    if ((match = query.match(/^SELECT data FROM (workflow|definition) WHERE id = 1$/))) return [...this.#table(match[1]!).values()].map(({ data }) => ({ data }));
    if (query === "SELECT data FROM tasks ORDER BY seq") return [...this.#table("tasks").values()].sort((a, b) => Number(a["seq"]) - Number(b["seq"])).map(({ data }) => ({ data }));
    if (query === "SELECT part, data FROM workflow_parts") return [...this.#table("workflow_parts").values()];
    if (query === "SELECT key, value FROM meta") return [...this.#table("meta").values()];
    throw new Error(`not served: ${query}`);
  }
}

/** What a run of `tree` decided, step by step: each decision's effects and the execution after it. */
type Trace = Array<{ effects: Decision["effects"]; state: WorkflowExecution }>;

/**
 * Runs a definition of `tree` through completions, failures (in the first half), task and workflow retries, reruns,
 * pauses and skips as `choices` say, each decision's execution passed through `persist` (given whether the object is
 * evicted after it), and checks on the way that deciding an event twice from the same execution decides the same and
 * changes nothing in it.
 */
function traced(tree: Shape[], pick: number, choices: Array<[number, number]>, persist: (state: WorkflowExecution, evicted: boolean) => WorkflowExecution): Trace {
  const tasks = retriedOnce(build(tree, { n: 0 }));
  const registered = validateWorkflowDef({ name: "random", version: 1, schemaVersion: 2, tasks });
  expect(registered.ok ? [] : registered.errors).toEqual([]);
  const trace: Trace = [];
  const first = startedWith("random", registered.ok ? registered.value.tasks : [], { pick: String(pick) });
  let state = persist(first.state, true);
  trace.push({ effects: first.effects, state });
  let now = 2_000;
  const step = (event: ExecutionEvent, evicted: boolean) => {
    now += 10;
    const before = structuredClone(state);
    const decision = decide(state, event, env(now), (next) => persist(next, evicted));
    // The same event from the same execution: the same decision, and the execution it was taken on left as it was.
    const again = decide(state, event, env(now));
    expect(again.effects).toEqual(decision.effects);
    expect(again.state).toEqual(decision.state);
    expect(state).toEqual(before);
    state = decision.state;
    trace.push({ effects: decision.effects, state });
    if (pending(state).some((task) => task.status === "SCHEDULED" && task.scheduledTime > now)) step({ type: "tick", liveTaskIds: new Set() }, evicted);
  };
  for (const [index, [choice, roll]] of choices.entries()) {
    const evicted = choice % 3 === 0;
    if (state.status === "COMPLETED") break;
    if (state.status === "FAILED") {
      const failed = state.tasks.findLast((task) => task.status === "FAILED");
      step(roll % 2 === 0 || failed === undefined ? { type: "retry" } : { type: "rerun", fromTaskId: failed.taskId }, evicted);
      continue;
    }
    if (roll === 8) {
      step({ type: "pause" }, evicted);
      step({ type: "resume" }, evicted);
      continue;
    }
    const task = waitingTask(state, choice);
    if (roll === 9) {
      step({ type: "skipTask", taskReferenceName: definitionReferenceName(state.definition, task), taskOutput: { skipped: true } }, evicted);
      continue;
    }
    const status = index < 150 && roll < 3 ? "FAILED" : "COMPLETED";
    const reason = status === "FAILED" ? { reason: "rolled" } : {};
    const output = { by: task.referenceTaskName };
    step(isHttpType(task.taskType) ? { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status, output, ...reason } : { type: "externalUpdate", taskId: task.taskId, status, output, ...reason }, evicted);
  }
  expect(state.status).toBe("COMPLETED");
  return trace;
}

describe("the decider over random definitions, stored and evicted on the way", () => {
  it("decides the same, effects and executions, whether each decision is kept in memory or stored and read back as the execution's object stores it", () => {
    fc.assert(
      fc.property(definitionShapes(RETRIED), fc.integer({ min: 0, max: 2 }), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 9 })), { minLength: 300, maxLength: 300 }), (tree, pick, choices) => {
        const kept = traced(tree, pick, choices, (state) => state);
        // As the actor: each decision saved over the one before (by object identity), and after an eviction the next one
        // taken on the execution read back by a new object.
        const sql = new MemorySql() as unknown as SqlStorage;
        let store = new ExecutionStore(sql);
        let held: WorkflowExecution | null = null;
        const stored = traced(tree, pick, choices, (state, evicted) => {
          if (state === held) return state;
          store.save(held, state);
          if (evicted) store = new ExecutionStore(sql);
          held = evicted ? store.load()! : state;
          return held;
        });
        expect(stored).toEqual(kept);
      }),
      runs(50),
    );
  }, TIME_LIMIT);
});

describe("the execution store", () => {
  it("saves a decision that replaced and appended tasks by position, without a look-up of every task the execution keeps; what it reads back is the decision's", () => {
    const definition: WorkflowDef = { name: "many", version: 1, schemaVersion: 2, tasks: [{ name: "w", taskReferenceName: "w", type: "WAIT", inputParameters: {} }] };
    const created = createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000);
    const template = decideAlone(created, { type: "start" }, env(1_000)).state.tasks[0]!;
    // Each task's `taskId` read is counted: a save that maps every kept task by its id reads them all.
    let reads = 0;
    const counted = (task: TaskExecution) => new Proxy(task, { get: (target, key, receiver) => (key === "taskId" && reads++, Reflect.get(target, key, receiver)) });
    const tasks = Array.from({ length: 500 }, (_, seq) => counted({ ...template, taskId: `t-${seq}`, seq, referenceTaskName: `w__${seq}` }));
    const previous: WorkflowExecution = { ...created, tasks };
    const store = new ExecutionStore(new MemorySql() as unknown as SqlStorage);
    store.save(null, previous);
    const next: WorkflowExecution = { ...previous, tasks: [...tasks.slice(0, 499), { ...tasks[499]!, status: "COMPLETED" }, { ...template, taskId: "t-500", seq: 500 }] };
    reads = 0;
    store.save(previous, next);
    expect(reads).toBeLessThan(10);
    expect(store.load()!.tasks).toEqual(next.tasks);
    // A decision that dropped a task (a loop's keepLastN) still has it deleted.
    const dropped: WorkflowExecution = { ...next, tasks: next.tasks.slice(1) };
    store.save(next, dropped);
    expect(store.load()!.tasks.map((task) => task.taskId)).toEqual(dropped.tasks.map((task) => task.taskId));
  });
});
