/**
 * A definition's tasks as the decider walks them: every task, those inside SWITCH branches and FORK_JOIN branches
 * included, in document order (a SWITCH, then its cases' tasks in order, then its defaultCase's, then what follows it;
 * a FORK_JOIN, then its branches' tasks in order, then its JOIN), each knowing what comes after it. A task instance's
 * `definitionIndex` is its position here. Only one branch of a SWITCH runs, and the order puts every branch between
 * the SWITCH and its successor, so within one lane an execution's tasks still follow the plan in increasing order:
 * "later in the plan" still means "not reached yet or passed over".
 *
 * A lane is a sequence of tasks that run one after another: the top-level tasks, or one branch of a FORK_JOIN (with
 * the SWITCH branches inside it). The branches of a fork are lanes of their own, which run side by side; a lane ends
 * when its last task is done, where the plan's next step lies outside it.
 *
 * A DO_WHILE is followed by its `loopOver` tasks, in the DO_WHILE's lane; the last of them is followed by the DO_WHILE
 * again, which ends the iteration (the only place a lane goes back in the plan), and the DO_WHILE's own successor
 * comes after them. Loops nest: a DO_WHILE in a loop is one of that loop's tasks, and its own tasks are in both loops
 * (`inLoop` names the innermost; see {@link enclosingLoops}). A FORK_JOIN in a loop is the loop's, and so are the tasks
 * of its branches (lanes of their own): they run afresh in each iteration (see `activeLanes`).
 *
 * A CONDITIONAL_FORK is laid out as a FORK_JOIN is, its `conditionalBranches` then its `defaultCase` each a lane (an
 * empty one has none); only the lanes of the branches it chose as it started run (see {@link lanesRun}).
 *
 * A FORK_JOIN_DYNAMIC has no branches in the definition: the tasks it forked when it ran (recorded in the execution's
 * copy of its definition, `dynamicForks`) come after all of the definition's own, each a lane of its own (with what a
 * forked SWITCH or DO_WHILE holds) followed by the JOIN after the fork, as a FORK_JOIN's branch is; the JOIN waits for
 * them all. Runs are laid out in the order they were forked, so the steps of one never move when another is added.
 * A fork in a DO_WHILE's loop forks in each iteration: its tasks are the loop's too (`inLoop`), though laid out after
 * the loop's own steps; an iteration that forks what the latest run did runs those steps again, as a FORK_JOIN's
 * branches run in each iteration, and one that forks other tasks adds a run.
 *
 * A definition without SWITCH, FORK_JOIN or DO_WHILE tasks plans as its `tasks` list, so the indexes stored in executions
 * started before those existed keep their meaning.
 */
import { chosenCase, choosesCase, isLoopType, type DynamicFork, type TaskDef, type TaskExecution, type TaskStatus, type WorkflowDef, type WorkflowTaskDef } from "./model";
import { setOwn } from "./own-property";
import { taskJqFilter } from "./jq";
import { conditionScripts, taskScript } from "./scripts";
import { dynamicTaskAs } from "./tasks/dynamic/concrete";

/** One task of a {@link Plan}. */
export interface PlanStep {
  readonly task: WorkflowTaskDef;
  /** The step that follows this one when it ends (for a SWITCH, when it runs no branch); the plan's length at the end. */
  readonly next: number;
  /**
   * SWITCH: where each non-empty case's branch starts, where the defaultCase starts (`next` when it is empty), and
   * the step after its last branch.
   */
  readonly branches?: { readonly cases: ReadonlyMap<string, number>; readonly defaultStart: number; readonly end: number };
  /**
   * A task inside a SWITCH's branch: that SWITCH's step and the step after the branch (the innermost one it is in,
   * within the step's lane: a fork's branch starts afresh).
   */
  readonly branch?: BranchSpan;
  /** The lane the step runs in: see {@link Plan.lanes}. */
  readonly lane: number;
  /** FORK_JOIN, CONDITIONAL_FORK: the lane of each of its branches (its first step), and its JOIN's step. */
  readonly fork?: { readonly lanes: readonly number[]; readonly join: number };
  /**
   * CONDITIONAL_FORK: the lane of each of its `conditionalBranches`, then of its `defaultCase`, by place (undefined for
   * an empty one, which has none).
   */
  readonly choices?: readonly (number | undefined)[];
  /** DO_WHILE: its loop's steps are the ones after it, up to (not including) `end`. */
  readonly loop?: { readonly end: number };
  /** A task of a DO_WHILE's `loopOver` (or of a SWITCH branch or fork branch inside one): that DO_WHILE's step. */
  readonly inLoop?: number;
  /** A task a FORK_JOIN_DYNAMIC forked (the first of its branch): that fork's step, and its place among those forked. */
  readonly forked?: { readonly fork: number; readonly position: number };
}

/** The lane of the top-level tasks. */
export const ROOT_LANE = -1;

/** A lane's steps: `first` up to (not including) `end`, and the FORK_JOIN whose branch it is (-1 for the root lane). */
export interface LaneSpan {
  readonly first: number;
  readonly end: number;
  readonly fork: number;
}

/** The branch a step lies in: see {@link PlanStep.branch}. */
export interface BranchSpan {
  readonly switchIndex: number;
  readonly end: number;
}

/** The steps of a definition, in order (see the module comment). */
export interface Plan {
  readonly steps: readonly PlanStep[];
  /** Reference name → step index. */
  readonly byReference: ReadonlyMap<string, number>;
  /** Every lane, by id: {@link ROOT_LANE}, or the first step of a FORK_JOIN's branch. */
  readonly lanes: ReadonlyMap<number, LaneSpan>;
  /** True when the definition has a FORK_JOIN or FORK_JOIN_DYNAMIC: otherwise the root lane is the only one. */
  readonly hasForks: boolean;
  /** True when the definition has a DO_WHILE. */
  readonly hasLoops: boolean;
  /** JOIN step → the step of the fork (FORK_JOIN or FORK_JOIN_DYNAMIC) whose branches it joins. */
  readonly forkOfJoin: ReadonlyMap<number, number>;
  /** True when running the definition may need the script interpreter (see `taskScript`); any may fork tasks that do. */
  readonly usesScripts: boolean;
  /** True when running the definition may need the jq processor (a JSON_JQ_TRANSFORM); any may fork one. */
  readonly usesJq: boolean;
  /** True when a task of the definition (its own, or one a dynamic fork forked) caches its output (`cacheConfig`). */
  readonly usesCache: boolean;
  /** True when a task of the definition (its own, or one a dynamic fork forked) is `permissive` (see {@link failsPermissively}). */
  readonly hasPermissive: boolean;
  /** True when a task of the definition may wait for its workflow's messages (a PULL_WORKFLOW_MESSAGES; any may fork one). */
  readonly pullsMessages: boolean;
  /** The first step of the tasks dynamic forks forked (the definition's own come before it). */
  readonly firstForkedStep: number;
  /** The steps of each run of `dynamicForks`, by its place there (empty for a run whose fork the definition lacks). */
  readonly forkRunSpans: ReadonlyArray<{ readonly first: number; readonly end: number }>;
}

// Definitions are immutable once stored in an execution, so a plan is computed once per definition object.
const plans = new WeakMap<WorkflowDef, Plan>();

/** The plan of `definition`. */
export function planOf(definition: WorkflowDef): Plan {
  let plan = plans.get(definition);
  if (plan === undefined) {
    plan = buildPlan(definition.tasks, definition.dynamicForks ?? []);
    plans.set(definition, plan);
  }
  return plan;
}

/** The definition task at plan index `index`, if there is one. */
export function planTask(definition: WorkflowDef, index: number): WorkflowTaskDef | undefined {
  return planOf(definition).steps[index]?.task;
}

/**
 * The definition task instance `task` runs as: its plan step's, or for a DYNAMIC, the task it chose (recorded as the
 * instance's type and name; a DYNAMIC that could not choose stays one).
 */
export function instanceTask(definition: WorkflowDef, task: Pick<TaskExecution, "definitionIndex" | "taskType" | "taskDefName">): WorkflowTaskDef | undefined {
  const step = planTask(definition, task.definitionIndex);
  const runsAs = step?.type === "DYNAMIC" && task.taskType !== "DYNAMIC" ? dynamicTaskAs(step, task.taskType, task.taskDefName) : step;
  if (runsAs === undefined || definition.lookedUpTaskDefs === undefined || !followsLookedUpTaskDef(definition, task.definitionIndex, runsAs)) return runsAs;
  const taskDef = Object.hasOwn(definition.lookedUpTaskDefs, runsAs.name) ? definition.lookedUpTaskDefs[runsAs.name] : undefined;
  return taskDef === undefined || taskDef === null ? runsAs : withTaskDef(runsAs, taskDef);
}

/**
 * True when task instance `task`, failed for good (its retries spent), is a permissive one whose failure does not end
 * its workflow at once (Conductor's `permissive`, conductor-oss/conductor pull request #3): the tasks after it, and the
 * other branches of its fork, run on; its JOIN, once every task it joins has ended, or the workflow at its end, fails
 * then. An optional one is absorbed as optional instead; in a DO_WHILE's loop the flag is not applied (the task fails
 * as one without it does), so a loop's iterations never run on past a failure.
 */
export function failsPermissively(definition: WorkflowDef, task: Pick<TaskExecution, "definitionIndex" | "taskType" | "taskDefName">): boolean {
  const runsAs = instanceTask(definition, task);
  return runsAs?.permissive === true && runsAs.optional !== true && planOf(definition).steps[task.definitionIndex]?.inLoop === undefined;
}

/**
 * True when task instance `task` is a permissive failure its workflow ran on past (see {@link failsPermissively}): it
 * failed for good and was not run again since. Its JOIN, or the workflow at its end, fails for it.
 */
export function isPermissiveFailure(definition: WorkflowDef, task: Pick<TaskExecution, "definitionIndex" | "taskType" | "taskDefName" | "status" | "retried">): boolean {
  return PERMISSIVE_FAILURE_STATUSES.has(task.status) && task.retried !== true && failsPermissively(definition, task);
}

/** The statuses a task failed for good has (CANCELED: a SUB_WORKFLOW whose child was terminated). */
const PERMISSIVE_FAILURE_STATUSES: ReadonlySet<TaskStatus> = new Set<TaskStatus>(["FAILED", "FAILED_WITH_TERMINAL_ERROR", "TIMED_OUT", "CANCELED"]);

/**
 * The name whose registered task definition must be looked up before an instance of step `index` running as `runsAs`
 * can start, or undefined when none must: it follows one looked up at run time (see {@link followsLookedUpTaskDef})
 * and none was looked up under its name yet.
 */
export function taskDefToLookUp(definition: WorkflowDef, index: number, runsAs: WorkflowTaskDef): string | undefined {
  if (!followsLookedUpTaskDef(definition, index, runsAs)) return undefined;
  return definition.lookedUpTaskDefs !== undefined && Object.hasOwn(definition.lookedUpTaskDefs, runsAs.name) ? undefined : runsAs.name;
}

/**
 * True when an instance of step `index` running as `runsAs` follows the registered task definition of its name as
 * looked up while the execution runs: it has none inline, and it is what a DYNAMIC chose or a dynamic fork forked (a
 * task of the definition itself got the registered one of its name copied in at the start).
 */
function followsLookedUpTaskDef(definition: WorkflowDef, index: number, runsAs: WorkflowTaskDef): boolean {
  if (runsAs.taskDefinition !== undefined || runsAs.type === "DYNAMIC" || runsAs.type === "JOIN") return false;
  return index >= planOf(definition).firstForkedStep || planTask(definition, index)?.type === "DYNAMIC";
}

/**
 * `definition` with `taskDefs` (by name, null for none registered) added to its looked-up task definitions; the same
 * object when it adds nothing. The plan does not depend on them, so the new definition shares the old one's.
 */
export function withLookedUpTaskDefs(definition: WorkflowDef, taskDefs: ReadonlyMap<string, TaskDef | null>): WorkflowDef {
  const known = definition.lookedUpTaskDefs ?? {};
  const added = [...taskDefs].filter(([name]) => !Object.hasOwn(known, name));
  if (added.length === 0) return definition;
  const lookedUpTaskDefs: Record<string, TaskDef | null> = { ...known };
  for (const [name, taskDef] of added) setOwn(lookedUpTaskDefs, name, taskDef);
  const updated = { ...definition, lookedUpTaskDefs };
  plans.set(updated, planOf(definition));
  return updated;
}

const withTaskDefs = new WeakMap<WorkflowTaskDef, WeakMap<TaskDef, WorkflowTaskDef>>();

/** `task` following `taskDef`; the same object for the same pair, since a decision asks for it often. */
function withTaskDef(task: WorkflowTaskDef, taskDef: TaskDef): WorkflowTaskDef {
  let byTaskDef = withTaskDefs.get(task);
  if (byTaskDef === undefined) {
    byTaskDef = new WeakMap();
    withTaskDefs.set(task, byTaskDef);
  }
  let following = byTaskDef.get(taskDef);
  if (following === undefined) {
    following = { ...task, taskDefinition: taskDef };
    byTaskDef.set(taskDef, following);
  }
  return following;
}

/**
 * The DO_WHILE steps whose loops hold step `index`, innermost first: a task of a loop nested in another is in both.
 * Empty outside loops.
 */
export function enclosingLoops(definition: WorkflowDef, index: number): number[] {
  const steps = planOf(definition).steps;
  const loops: number[] = [];
  for (let loop = steps[index]?.inLoop; loop !== undefined; loop = steps[loop]?.inLoop) loops.push(loop);
  return loops;
}

/** True when step `index` is a task of the loop of the DO_WHILE at step `loopIndex`, at any depth. */
export function withinLoop(definition: WorkflowDef, index: number, loopIndex: number): boolean {
  const steps = planOf(definition).steps;
  for (let loop = steps[index]?.inLoop; loop !== undefined; loop = steps[loop]?.inLoop) {
    if (loop === loopIndex) return true;
  }
  return false;
}

/**
 * The reference name a task instance has in the definition: its step's. A task of a DO_WHILE's loop runs as
 * `ref__<iteration>`, and in a loop nested in others with the iteration of each, outermost first (`ref__2__3`:
 * iteration 3 of the inner loop in iteration 2 of the outer one); a DO_WHILE in a loop is named after its outer ones'.
 */
export function definitionReferenceName(definition: WorkflowDef, task: Pick<TaskExecution, "referenceTaskName" | "definitionIndex">): string {
  return planTask(definition, task.definitionIndex)?.taskReferenceName ?? task.referenceTaskName;
}

/**
 * The iterations of its enclosing loops that a task instance belongs to, outermost first: the numbers its reference
 * name carries after its definition's (see {@link definitionReferenceName}). Empty outside loops, and for a top-level
 * DO_WHILE (its own `iteration` is its loop's current one).
 */
export function loopIterationsOf(definition: WorkflowDef, task: Pick<TaskExecution, "referenceTaskName" | "definitionIndex">): number[] {
  const base = definitionReferenceName(definition, task);
  const suffix = task.referenceTaskName.startsWith(base) ? task.referenceTaskName.slice(base.length) : "";
  return suffix.startsWith("__") ? suffix.slice(2).split("__").map(Number) : [];
}

/**
 * True when a task instance ran in `iterations` (outermost first) of the loops around it, whatever it ran in loops
 * inside those: `body__2__3` ran in [2] and in [2, 3]. Always true of no iterations.
 */
export function ranInIterations(definition: WorkflowDef, task: Pick<TaskExecution, "referenceTaskName" | "definitionIndex">, iterations: readonly number[]): boolean {
  if (iterations.length === 0) return true;
  const own = loopIterationsOf(definition, task);
  return iterations.every((iteration, position) => own[position] === iteration);
}

/**
 * The iteration of the loop of the DO_WHILE at step `loopIndex` that a task instance of that loop (at any depth) ran
 * in; undefined when it is not in that loop.
 */
export function iterationIn(definition: WorkflowDef, task: Pick<TaskExecution, "referenceTaskName" | "definitionIndex">, loopIndex: number): number | undefined {
  const loops = enclosingLoops(definition, task.definitionIndex);
  const position = loops.indexOf(loopIndex);
  if (position < 0) return undefined;
  const iterations = loopIterationsOf(definition, task);
  return iterations[iterations.length - 1 - position];
}

/** The plan index of the task with that reference name, -1 when the definition has none. */
export function planIndexOf(definition: WorkflowDef, taskReferenceName: string): number {
  return planOf(definition).byReference.get(taskReferenceName) ?? -1;
}

/**
 * True when going from step `from` to step `next` leaves `from`'s lane: the lane is done (the workflow, for the root
 * lane). The last task of a fork's branch is followed by its JOIN, in the lane around the fork.
 */
export function leavesLane(definition: WorkflowDef, from: number, next: number): boolean {
  const steps = planOf(definition).steps;
  return next >= steps.length || steps[next]?.lane !== steps[from]?.lane;
}

/**
 * True when going from step `from` to step `next` ends an iteration of a DO_WHILE's loop: `next` is that DO_WHILE,
 * which `from` (the last of its loop's tasks) follows.
 */
export function endsIteration(definition: WorkflowDef, from: number, next: number): boolean {
  return next < from && planOf(definition).steps[next]?.loop !== undefined;
}

/**
 * The JOIN steps of the forks step `index` lies in, innermost first: running a task of a branch again (a rerun) makes
 * its forks' JOINs wait again.
 */
export function enclosingJoins(definition: WorkflowDef, index: number): number[] {
  const plan = planOf(definition);
  const joins: number[] = [];
  for (let lane = plan.steps[index]?.lane; lane !== undefined && lane !== ROOT_LANE; ) {
    const fork = plan.steps[plan.lanes.get(lane)?.fork ?? -1];
    if (fork?.fork === undefined) break;
    joins.push(fork.fork.join);
    lane = fork.lane;
  }
  return joins;
}

/**
 * True when step `index` lies in a branch of the fork that JOIN step `joinIndex` joins (or in one of a fork inside it).
 * False when `joinIndex` is no fork's JOIN.
 */
export function joinedBy(definition: WorkflowDef, joinIndex: number, index: number): boolean {
  return enclosingJoins(definition, index).includes(joinIndex);
}

/**
 * Where the workflow goes after `task` ended successfully: the first task of the branch a COMPLETED SWITCH (or
 * DECISION) chose (see `chosenCase`; the defaultCase when no case has that value or its list is empty), else the
 * step after it.
 * The plan's length means the workflow is done. A SWITCH skipped or absorbed as optional runs no branch.
 */
export function nextPlanIndex(definition: WorkflowDef, task: Pick<TaskExecution, "definitionIndex" | "status" | "outputData">): number {
  const plan = planOf(definition);
  const step = plan.steps[task.definitionIndex];
  if (step === undefined) return plan.steps.length;
  if (step.branches === undefined || task.status !== "COMPLETED") return step.next;
  const chosen = chosenCase(step.task.type, task.outputData);
  if (chosen === undefined) return step.next;
  return step.branches.cases.get(chosen) ?? step.branches.defaultStart;
}

/**
 * The lanes fork instance `fork` (COMPLETED) runs: every branch of a FORK_JOIN (or of what a FORK_JOIN_DYNAMIC forked);
 * of a CONDITIONAL_FORK, those of the branches it chose (see {@link TaskExecution.forkedBranches}). None for a step
 * that is no fork.
 */
export function lanesRun(definition: WorkflowDef, fork: Pick<TaskExecution, "definitionIndex" | "forkedBranches">): readonly number[] {
  const step = planOf(definition).steps[fork.definitionIndex];
  if (step?.choices === undefined) return step?.fork?.lanes ?? [];
  const choices = step.choices;
  return (fork.forkedBranches ?? []).flatMap((position) => {
    const lane = choices[position];
    return lane === undefined ? [] : [lane];
  });
}

/**
 * What the JOIN after CONDITIONAL_FORK instance `fork` waits for, as Conductor's ConditionalForkTaskMapper gives it in
 * place of the JOIN's own `joinOn`: the reference name of the last task of each branch the fork chose, in order.
 */
export function chosenBranchEnds(definition: WorkflowDef, fork: Pick<TaskExecution, "definitionIndex" | "forkedBranches">): string[] {
  const task = planTask(definition, fork.definitionIndex);
  if (task?.type !== "CONDITIONAL_FORK") return [];
  const lists = branchesOf(task);
  return (fork.forkedBranches ?? []).flatMap((position) => {
    const last = lists[position]?.at(-1);
    return last === undefined ? [] : [last.taskReferenceName];
  });
}

/**
 * The plan index of the SWITCH one of whose other branches holds step `index`, seen from step `from` (the execution's
 * last task), which lies in a branch of that SWITCH: the branch taken. The workflow cannot reach such a step (until
 * a rerun). Undefined when it still may, or has passed it already.
 */
export function untakenBranchOf(definition: WorkflowDef, from: number, index: number): number | undefined {
  const steps = planOf(definition).steps;
  if (index <= from) return undefined;
  for (let branch = steps[from]?.branch; branch !== undefined; branch = steps[branch.switchIndex]?.branch) {
    const end = steps[branch.switchIndex]?.branches?.end ?? branch.end;
    // Branches are laid out one after another: those after the one taken end where the SWITCH's subtree does.
    if (index >= branch.end && index < end) return branch.switchIndex;
  }
  return undefined;
}

/** Every task of `definition`, those inside branches included, in plan order. */
export function allTasks(definition: WorkflowDef): WorkflowTaskDef[] {
  return planOf(definition).steps.map((step) => step.task);
}

/**
 * Every task of a list of definition tasks, branches included, in plan order, for walking a definition that is not
 * planned yet (one being changed).
 */
export function flattenTasks(tasks: readonly WorkflowTaskDef[]): WorkflowTaskDef[] {
  return tasks.flatMap((task) => [task, ...branchesOf(task).flatMap((branch) => flattenTasks(branch))]);
}

/**
 * `tasks` with `update` applied to every task, inside branches too; the same array (and tasks) when nothing changed,
 * so an unchanged definition keeps its identity (and its cached plan).
 */
export function mapTasks(tasks: WorkflowTaskDef[], update: (task: WorkflowTaskDef) => WorkflowTaskDef): WorkflowTaskDef[] {
  let changed = false;
  const mapped = tasks.map((task) => {
    let result = update(task);
    if (task.decisionCases !== undefined || task.defaultCase !== undefined) {
      const decisionCases = mapCases(task.decisionCases, update);
      const defaultCase = task.defaultCase === undefined ? undefined : mapTasks(task.defaultCase, update);
      if (decisionCases !== task.decisionCases || defaultCase !== task.defaultCase) {
        result = { ...result };
        if (decisionCases !== undefined) result.decisionCases = decisionCases;
        if (defaultCase !== undefined) result.defaultCase = defaultCase;
      }
    }
    if (task.forkTasks !== undefined) {
      const forkTasks = mapBranches(task.forkTasks, update);
      if (forkTasks !== task.forkTasks) result = { ...result, forkTasks };
    }
    if (task.conditionalBranches !== undefined) {
      const lists = task.conditionalBranches.map((branch) => branch.tasks);
      const mapped = mapBranches(lists, update);
      if (mapped !== lists) result = { ...result, conditionalBranches: task.conditionalBranches.map((branch, position) => ({ ...branch, tasks: mapped[position]! })) };
    }
    if (task.loopOver !== undefined) {
      const loopOver = mapTasks(task.loopOver, update);
      if (loopOver !== task.loopOver) result = { ...result, loopOver };
    }
    if (result !== task) changed = true;
    return result;
  });
  return changed ? mapped : tasks;
}

function mapBranches(branches: WorkflowTaskDef[][], update: (task: WorkflowTaskDef) => WorkflowTaskDef): WorkflowTaskDef[][] {
  const mapped = branches.map((branch) => mapTasks(branch, update));
  return mapped.some((branch, index) => branch !== branches[index]) ? mapped : branches;
}

function mapCases(cases: Record<string, WorkflowTaskDef[]> | undefined, update: (task: WorkflowTaskDef) => WorkflowTaskDef): Record<string, WorkflowTaskDef[]> | undefined {
  if (cases === undefined) return undefined;
  let changed = false;
  const mapped: Record<string, WorkflowTaskDef[]> = {};
  for (const [value, branch] of Object.entries(cases)) {
    const updated = mapTasks(branch, update);
    if (updated !== branch) changed = true;
    setOwn(mapped, value, updated);
  }
  return changed ? mapped : cases;
}

/**
 * The task lists inside a task, in plan order: a SWITCH's cases' lists in the order written, then its defaultCase; a
 * FORK_JOIN's branches; a CONDITIONAL_FORK's branches' tasks, then its defaultCase; a DO_WHILE's loopOver.
 */
function branchesOf(task: WorkflowTaskDef): WorkflowTaskDef[][] {
  if (task.type === "CONDITIONAL_FORK") return [...(task.conditionalBranches ?? []).map((branch) => branch.tasks), task.defaultCase ?? []];
  if (task.forkTasks !== undefined) return task.forkTasks;
  if (task.loopOver !== undefined) return [task.loopOver];
  if (task.decisionCases === undefined && task.defaultCase === undefined) return [];
  return [...Object.values(task.decisionCases ?? {}), task.defaultCase ?? []];
}

function buildPlan(tasks: readonly WorkflowTaskDef[], dynamicForks: readonly DynamicFork[]): Plan {
  const steps: PlanStep[] = [];
  const byReference = new Map<string, number>();
  const lanes = new Map<number, LaneSpan>();
  /**
   * Places `list` (a branch of SWITCH `within.switchIndex`, a fork's branch, a DO_WHILE's loopOver, or the top-level
   * tasks) in `lane`, inside SWITCH branch `within.branch` and DO_WHILE `within.loop` when given; its last task is
   * followed by step `after`.
   */
  const place = (list: readonly WorkflowTaskDef[], after: number, lane: number, within: { switchIndex?: number; branch?: BranchSpan; loop?: number } = {}): void => {
    const branch: BranchSpan | undefined = within.switchIndex === undefined ? within.branch : { switchIndex: within.switchIndex, end: steps.length + flattenTasks(list).length };
    const inLoop = within.loop;
    let index = steps.length;
    list.forEach((task, position) => {
      const size = 1 + flattenTasks(branchesOf(task).flat()).length;
      const next = position < list.length - 1 ? index + size : after;
      const own = steps.length;
      const step = (fields: Pick<PlanStep, "branches" | "fork" | "loop" | "choices">): PlanStep => ({
        task,
        next,
        lane,
        ...(branch === undefined ? {} : { branch }),
        ...(inLoop === undefined ? {} : { inLoop }),
        ...fields,
      });
      steps.push(step({}));
      if (!byReference.has(task.taskReferenceName)) byReference.set(task.taskReferenceName, own);
      if (choosesCase(task.type)) {
        const cases = new Map<string, number>();
        for (const [value, list] of Object.entries(task.decisionCases ?? {})) {
          // An empty case is not a branch of its own: like Conductor's SwitchTaskMapper, it takes the defaultCase.
          if (list.length > 0) cases.set(value, steps.length);
          place(list, next, lane, { switchIndex: own, loop: inLoop });
        }
        const defaultCase = task.defaultCase ?? [];
        const defaultStart = defaultCase.length > 0 ? steps.length : next;
        place(defaultCase, next, lane, { switchIndex: own, loop: inLoop });
        steps[own] = step({ branches: { cases, defaultStart, end: steps.length } });
      } else if (task.type === "FORK_JOIN_DYNAMIC") {
        // Its branches, once it forked them, are laid out after the definition's own tasks (below).
        steps[own] = step({ fork: { lanes: [], join: next } });
      } else if (task.type === "FORK_JOIN" || task.type === "CONDITIONAL_FORK") {
        const forkLanes: number[] = [];
        const choices: Array<number | undefined> = [];
        for (const list of branchesOf(task)) {
          const first = steps.length;
          // A CONDITIONAL_FORK's empty branch never runs: it has no lane (a FORK_JOIN has none).
          choices.push(list.length > 0 ? first : undefined);
          if (list.length === 0) continue;
          forkLanes.push(first);
          lanes.set(first, { first, end: first + flattenTasks(list).length, fork: own });
          // Followed by the JOIN, in the lane around the fork: the branch's lane ends there. In a loop, its tasks are the loop's.
          place(list, next, first, { loop: inLoop });
        }
        steps[own] = step({ fork: { lanes: forkLanes, join: next }, ...(task.type === "CONDITIONAL_FORK" ? { choices } : {}) });
      } else if (isLoopType(task.type)) {
        // Its last task is followed by the DO_WHILE itself: the decider ends the iteration there.
        place(task.loopOver ?? [], own, lane, { branch, loop: own });
        steps[own] = step({ loop: { end: steps.length } });
      }
      index += size;
    });
  };
  // After the last top-level task comes the end of the plan.
  const size = flattenTasks(tasks).length;
  lanes.set(ROOT_LANE, { first: 0, end: size, fork: -1 });
  place(tasks, size, ROOT_LANE);
  const firstForkedStep = steps.length;
  const forks = steps.some((step) => step.task.type === "FORK_JOIN_DYNAMIC");
  const forkRunSpans: Array<{ first: number; end: number }> = [];
  for (const run of dynamicForks) {
    const own = byReference.get(run.fork);
    const forkStep = own === undefined ? undefined : steps[own];
    forkRunSpans.push({ first: steps.length, end: steps.length });
    if (own === undefined || forkStep?.task.type !== "FORK_JOIN_DYNAMIC" || forkStep.fork === undefined) continue;
    const join = forkStep.fork.join;
    const forkLanes = run.tasks.map((task, position) => {
      const first = steps.length;
      lanes.set(first, { first, end: first + flattenTasks([task]).length, fork: own });
      // Followed by the JOIN, in the lane around the fork: the branch's lane ends there. In a loop, its tasks are the loop's.
      place([task], join, first, { loop: forkStep.inLoop });
      steps[first] = { ...steps[first]!, forked: { fork: own, position } };
      // The latest run's tasks are the ones a reference name means (an earlier run of a fork rerun keeps its places).
      for (let index = first; index < steps.length; index++) byReference.set(steps[index]!.task.taskReferenceName, index);
      return first;
    });
    steps[own] = { ...forkStep, fork: { lanes: forkLanes, join } };
    forkRunSpans[forkRunSpans.length - 1]!.end = steps.length;
    const joinStep = steps[join];
    if (joinStep !== undefined) steps[join] = { ...joinStep, task: { ...joinStep.task, joinOn: run.tasks.map((task) => task.taskReferenceName) } };
  }
  const forkOfJoin = new Map<number, number>();
  steps.forEach((step, index) => {
    if (step.fork !== undefined) forkOfJoin.set(step.fork.join, index);
  });
  return {
    steps,
    byReference,
    lanes,
    forkOfJoin,
    hasForks: lanes.size > 1 || forks,
    hasLoops: steps.some((step) => step.loop !== undefined),
    // What a dynamic fork forks, or a DYNAMIC runs, is known only when it runs.
    usesScripts: forks || steps.some((step) => taskScript(step.task) !== undefined || conditionScripts(step.task).length > 0 || step.task.type === "DYNAMIC"),
    usesJq: forks || steps.some((step) => step.task.type === "JSON_JQ_TRANSFORM" || step.task.type === "DYNAMIC"),
    usesCache: steps.some((step) => step.task.cacheConfig !== undefined),
    hasPermissive: steps.some((step) => step.task.permissive === true),
    pullsMessages: forks || steps.some((step) => step.task.type === "PULL_WORKFLOW_MESSAGES" || step.task.type === "DYNAMIC"),
    firstForkedStep,
    forkRunSpans,
  };
}
