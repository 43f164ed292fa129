/**
 * An execution's lanes as they stand (see `plan.ts`): which lanes run, and the latest task instance in each. The
 * decider moves each lane on by itself; a FORK_JOIN's branches are lanes that run side by side once it completed.
 */
import { copiedFrom, SHORT_TASK_LIST } from "./draft";
import { SUCCESSFUL_TASK_STATUSES, TERMINAL_TASK_STATUSES, type TaskExecution, type WorkflowDef, type WorkflowExecution } from "./model";
import { definitionReferenceName, enclosingLoops, iterationIn, lanesRun, leavesLane, nextPlanIndex, planOf, ROOT_LANE, type LaneSpan } from "./plan";

/** A running lane: its id and span, and its latest task instance (none before its first task is reached). */
export interface ActiveLane {
  readonly id: number;
  readonly span: LaneSpan;
  readonly head: TaskExecution | undefined;
}

/**
 * The lanes of `state` that run: the root lane, and the branches of every FORK_JOIN whose latest instance COMPLETED
 * (a skipped or failed fork runs none; a CONDITIONAL_FORK, those it chose), in plan order. Instances are in the order they were scheduled, so a lane's
 * latest is its furthest along. A fork inside a DO_WHILE's loop runs its branches afresh in each iteration: they run
 * while that iteration's fork instance is the latest and its loop still runs, and only what was scheduled after that
 * instance is theirs.
 */
export function activeLanes(state: WorkflowExecution): ActiveLane[] {
  const plan = planOf(state.definition);
  const root = plan.lanes.get(ROOT_LANE)!;
  // Most definitions have no fork: one lane, whose latest instance is the execution's.
  if (!plan.hasForks) return [{ id: ROOT_LANE, span: root, head: loopAware(state, state.tasks.at(-1)) }];
  // Each lane's latest task, each fork's and loop's: from the walk over the tasks (a decision asks this after every move).
  const walk = walkOf(state);
  const tasks = state.tasks;
  const heads = (lane: number): TaskExecution | undefined => at(tasks, walk.heads.get(lane));
  const latest = (index: number): TaskExecution | undefined => (walk.forksAndLoops.has(index) ? at(tasks, walk.latest.get(index)) : undefined);
  const lanes: ActiveLane[] = [{ id: ROOT_LANE, span: root, head: loopAware(state, heads(ROOT_LANE)) }];
  // A fork some lane around it has gone back before since it ran (a workflow retry running a lane again from a
  // permissive task failed for good) runs again when that lane reaches it anew: until then its branches do not run.
  const wentBack = wentBackOf(walk, tasks);
  const overtaken = (fork: TaskExecution): boolean => laneWentBackBefore(state, fork, wentBack);
  const forks = [...walk.forksAndLoops].map((index) => latest(index)!).filter((task) => plan.steps[task.definitionIndex]!.fork !== undefined && task.status === "COMPLETED" && inCurrentRun(state, task, latest) && !overtaken(task));
  for (const fork of forks.sort((a, b) => a.definitionIndex - b.definitionIndex)) {
    for (const id of lanesRun(state.definition, fork)) {
      // A branch task scheduled before its fork's instance is an earlier run's: a loop's earlier iteration, or the run
      // a workflow retry went back before (from a permissive task), which the fork, reached anew, runs afresh.
      const head = heads(id);
      lanes.push({ id, span: plan.lanes.get(id)!, head: head !== undefined && head.seq < fork.seq ? undefined : loopAware(state, head) });
    }
  }
  return lanes;
}

/**
 * Lane `lane` of `state` as {@link activeLanes} would find it now, when the only change to the tasks since `lane` was
 * found is task `position`, added to the list (`added`) or updated: its head is then that task, and the other lanes are
 * as they were. Undefined when that cannot be told so: the task is not of that lane, or not its latest, or starts or
 * ends lanes (a fork's or a loop's step), or took its lane back to an earlier step (see {@link noteWentBack}), or,
 * updated, was not the lane's head (a DO_WHILE that ended stood for it). The caller makes sure nothing else changed
 * (see `Draft.touchedSince`): a decision asks this after each move of a wide fork, instead of finding every lane afresh.
 */
export function laneAfterMove(state: WorkflowExecution, lane: ActiveLane, position: number, added: boolean): ActiveLane | undefined {
  const plan = planOf(state.definition);
  const task = state.tasks[position];
  const step = task === undefined ? undefined : plan.steps[task.definitionIndex];
  if (task === undefined || step === undefined || !plan.hasForks || step.lane !== lane.id || step.fork !== undefined || step.loop !== undefined) return undefined;
  const walk = walkOf(state);
  if (walk.heads.get(lane.id) !== position || walk.wentBack.get(lane.id)?.at(-1) === position) return undefined;
  // An added task is the latest of all, scheduled after its fork's instance; an update keeps the head's `seq`, and the
  // loops around it are as they were.
  if (!added && lane.head?.taskId !== task.taskId) return undefined;
  return { id: lane.id, span: lane.span, head: loopAware(state, task) };
}

/**
 * What one walk over an execution's tasks in order tells, by position in its task list: each lane's latest instance,
 * each step's latest instance and all its instances, the fork and loop steps that have one (in the order first
 * reached), and where each lane went back (see {@link noteWentBack}).
 */
interface TaskWalk {
  readonly definition: WorkflowDef;
  /** How many of the tasks (from the first) the walk has taken in. */
  walked: number;
  readonly heads: Map<number, number>;
  readonly latest: Map<number, number>;
  readonly instances: Map<number, number[]>;
  readonly forksAndLoops: Set<number>;
  readonly wentBack: Map<number, number[]>;
  /**
   * The positions of the tasks named so (by their reference name, and by their step's when that differs), in order;
   * taken in only when asked for (see {@link latestInstanceNamed}), as far as `named` tasks.
   */
  readonly names: Map<string, number[]>;
  named: number;
}

/**
 * The walk of each task list (by identity) the lanes were asked about, with the definition it was taken under. A
 * decision moves an execution one task at a time and asks about its lanes after every move: taken afresh each time,
 * the walk made a decision forking N tasks cost N² (a thousand-task fork took most of a second). A draft's task list
 * only grows at its end, or has a task replaced by its update, which keeps the task's step, `seq` and reference name (see `Draft`:
 * any other change makes a new list); so what was walked stays true, and only the tasks added since are taken in.
 * What the walk keeps are positions, read in the list as it stands, so updated tasks are seen as they are now.
 */
const walks = new WeakMap<readonly TaskExecution[], TaskWalk>();

/** The walk over `state`'s tasks (see {@link walks}), brought up to date with the tasks added since it was last taken. */
function walkOf(state: WorkflowExecution): TaskWalk {
  const tasks = state.tasks;
  let walk = walks.get(tasks) ?? walkCopied(tasks);
  if (walk === undefined || walk.definition !== state.definition || walk.walked > tasks.length) {
    walk = { definition: state.definition, walked: 0, heads: new Map(), latest: new Map(), instances: new Map(), forksAndLoops: new Set(), wentBack: new Map(), names: new Map(), named: 0 };
    walks.set(tasks, walk);
  }
  const steps = planOf(state.definition).steps;
  for (; walk.walked < tasks.length; walk.walked++) {
    const position = walk.walked;
    const task = tasks[position]!;
    walk.latest.set(task.definitionIndex, position);
    const instances = walk.instances.get(task.definitionIndex);
    if (instances === undefined) walk.instances.set(task.definitionIndex, [position]);
    else instances.push(position);
    const step = steps[task.definitionIndex];
    if (step === undefined) continue;
    noteWentBack(walk.wentBack, step.lane, at(tasks, walk.heads.get(step.lane)), task, position);
    walk.heads.set(step.lane, position);
    if (step.fork !== undefined || step.loop !== undefined) walk.forksAndLoops.add(task.definitionIndex);
  }
  return walk;
}

/**
 * The walk of the list `tasks` was copied from (see `copiedFrom`), taken on for it: a decision copies its execution's
 * list as it first changes it, and walked afresh, every decision on an execution of N tasks would cost N. The list
 * copied from never grows, so it finds the walk gone past its end if it is asked about again, and walks afresh. So
 * does another copy of it: the walk went past the original's end over the tasks an earlier copy added (a decision on
 * the same execution thrown away: a refused command, the actor's trial decision before a child's resume, a test run's
 * mock applied again), which are not this copy's.
 */
function walkCopied(tasks: readonly TaskExecution[]): TaskWalk | undefined {
  const original = copiedFrom(tasks);
  if (original === undefined) return undefined;
  const walk = walks.get(original);
  if (walk === undefined || walk.walked > original.length) return undefined;
  walks.set(tasks, walk);
  return walk;
}

/** The task at `position` of `tasks`, if a position is given. */
function at(tasks: readonly TaskExecution[], position: number | undefined): TaskExecution | undefined {
  return position === undefined ? undefined : tasks[position];
}

/** Where each lane went back (see {@link noteWentBack}), from `walk` over `tasks`. */
function wentBackOf(walk: TaskWalk, tasks: readonly TaskExecution[]): Map<number, TaskExecution[]> {
  const wentBack = new Map<number, TaskExecution[]>();
  for (const [lane, positions] of walk.wentBack) wentBack.set(lane, positions.map((position) => tasks[position]!));
  return wentBack;
}

/** Notes the task at `position` under `name` in `names`. */
function noteName(names: Map<string, number[]>, name: string, position: number): void {
  const positions = names.get(name);
  if (positions === undefined) names.set(name, [position]);
  else positions.push(position);
}

/**
 * The latest task of `state` for which `keep` is true, among those named `name` by their reference name or their
 * step's (`keep` picks from those: it is false of every other task). Searched for among the latest tasks first (where
 * the latest instance of a reference most often is, and in a short list, all there is); then among the tasks so named
 * only, from the walk (see {@link walks}): searching the whole list for a task far back (a DO_WHILE's own reference,
 * read by its loop's tasks) made a loop of n iterations read n² tasks. The names are taken in only when first asked
 * for, and then only the tasks added since.
 */
export function latestInstanceNamed(state: WorkflowExecution, name: string, keep: (task: TaskExecution) => boolean): TaskExecution | undefined {
  const tasks = state.tasks;
  const searched = Math.max(0, tasks.length - SHORT_TASK_LIST);
  for (let position = tasks.length - 1; position >= searched; position--) if (keep(tasks[position]!)) return tasks[position];
  if (searched === 0) return undefined;
  const walk = walkOf(state);
  for (; walk.named < tasks.length; walk.named++) {
    const task = tasks[walk.named]!;
    noteName(walk.names, task.referenceTaskName, walk.named);
    const stepName = definitionReferenceName(state.definition, task);
    if (stepName !== task.referenceTaskName) noteName(walk.names, stepName, walk.named);
  }
  const positions = walk.names.get(name) ?? [];
  for (let i = positions.length - 1; i >= 0; i--) {
    const position = positions[i]!;
    if (position < searched && keep(tasks[position]!)) return tasks[position];
  }
  return undefined;
}

/**
 * The latest instance of plan step `index` scheduled after `since` (its `seq` greater) for which `keep` is true, if
 * any: looked for among that step's instances only, latest first.
 */
export function latestInstanceSince(state: WorkflowExecution, index: number, since: number, keep: (task: TaskExecution) => boolean): TaskExecution | undefined {
  const positions = walkOf(state).instances.get(index);
  if (positions === undefined) return undefined;
  for (let i = positions.length - 1; i >= 0; i--) {
    const task = state.tasks[positions[i]!]!;
    if (task.seq > since && keep(task)) return task;
  }
  return undefined;
}

/**
 * Records in `wentBack` (lane → the positions of its instances scheduled at an earlier step than the lane's instance
 * before them) task `task` of `lane`, at `position`, when it is one such: its lane went back with it. The lane's
 * instance before it is `previous`.
 */
function noteWentBack(wentBack: Map<number, number[]>, lane: number, previous: TaskExecution | undefined, task: TaskExecution, position: number): void {
  if (previous === undefined || task.definitionIndex >= previous.definitionIndex) return;
  const list = wentBack.get(lane);
  if (list === undefined) wentBack.set(lane, [position]);
  else list.push(position);
}

/** Where each lane of `state` went back (see {@link noteWentBack}). */
function wentBackIn(state: WorkflowExecution): Map<number, TaskExecution[]> {
  return wentBackOf(walkOf(state), state.tasks);
}

/**
 * Whether a lane around fork instance `fork` (its own, or one that a fork around it lies in) has gone back before it
 * since it ran: it scheduled, after `fork`, an instance of an earlier step of the lane than the fork (or than the fork
 * around it), wherever it stands now (a SWITCH run again may have taken a route past the fork's place without it).
 * `wentBack`: where each lane went back (see {@link noteWentBack}); the first instance a lane scheduled before the fork
 * after it is one of those, as the lane's instances after the fork were at the fork or after it until then. Only a
 * workflow retry running a lane again from a permissive task failed for good goes back so (a loop's next iteration
 * does too, but an instance of a fork in that loop from an earlier iteration is no longer its fork's current one): the
 * fork then runs again, afresh, once that lane reaches it anew.
 */
function laneWentBackBefore(state: WorkflowExecution, fork: TaskExecution, wentBack: ReadonlyMap<number, readonly TaskExecution[]>): boolean {
  const plan = planOf(state.definition);
  for (let index = fork.definitionIndex; index >= 0; ) {
    const lane = plan.steps[index]!.lane;
    if (wentBack.get(lane)?.some((task) => task.seq > fork.seq && task.definitionIndex < index) === true) return true;
    if (lane === ROOT_LANE) return false;
    index = plan.lanes.get(lane)?.fork ?? -1;
  }
  return false;
}

/**
 * Where each lane of `state` went back at a step outside loops (see {@link noteWentBack}), as a workflow retry running it
 * again from a permissive task failed for good does (such a task is never in a loop); not a loop's next iteration,
 * whose earlier iterations' tasks are told apart by their iteration. Empty for most executions: then every instance is
 * of its lane's current run.
 */
export function runRestarts(state: WorkflowExecution): ReadonlyMap<number, readonly TaskExecution[]> {
  const plan = planOf(state.definition);
  const restarts = new Map<number, TaskExecution[]>();
  for (const [lane, tasks] of wentBackIn(state)) {
    const outsideLoops = tasks.filter((task) => plan.steps[task.definitionIndex]?.inLoop === undefined);
    if (outsideLoops.length > 0) restarts.set(lane, outsideLoops);
  }
  return restarts;
}

/**
 * Whether task instance `task` ran in an earlier run of its lane than the one going on: a lane around it (its own, or
 * one a fork around it lies in) has since gone back before it (see {@link runRestarts}), to run again the task (or
 * the fork holding it) once it reaches it anew. Such an instance is not the task's word in the lane's current run: a
 * JOIN or EXCLUSIVE_JOIN reading it would end for how the task ended before the retry, while the lane runs it again.
 * `restarts`: {@link runRestarts} of `state`.
 */
export function ranInEarlierRun(state: WorkflowExecution, task: TaskExecution, restarts: ReadonlyMap<number, readonly TaskExecution[]>): boolean {
  return restarts.size > 0 && laneWentBackBefore(state, task, restarts);
}

/**
 * True unless `task` is an instance of a step of a DO_WHILE's loop from before the loop's current iteration (or from an
 * earlier run of the DO_WHILE), or the loop has ended; in a loop nested in others, the same of its DO_WHILE's instance.
 * `latest`: the latest instance of a DO_WHILE step.
 */
function inCurrentRun(state: WorkflowExecution, task: TaskExecution, latest: (index: number) => TaskExecution | undefined): boolean {
  const loopIndex = planOf(state.definition).steps[task.definitionIndex]?.inLoop;
  if (loopIndex === undefined) return true;
  const loop = latest(loopIndex);
  if (loop === undefined || TERMINAL_TASK_STATUSES.has(loop.status) || task.seq <= loop.seq) return false;
  return iterationIn(state.definition, task, loopIndex) === loop.iteration && inCurrentRun(state, loop, latest);
}

/**
 * True unless `task` is an instance of a task of a DO_WHILE's loop from an iteration (or a run of the DO_WHILE) other
 * than the one running, or the loop has ended (see {@link inCurrentRun}).
 */
export function inCurrentLoopRun(state: WorkflowExecution, task: TaskExecution): boolean {
  return inCurrentRun(state, task, (index) => latestInstance(state, index));
}

/** The latest instance of plan step `index` in the current run of its loop (see {@link inCurrentRun}), if it has one. */
function currentInstance(state: WorkflowExecution, index: number): TaskExecution | undefined {
  const task = latestInstance(state, index);
  return task !== undefined && inCurrentLoopRun(state, task) ? task : undefined;
}

/**
 * The head of a lane whose latest instance is `latest`: that instance, unless it is a task of a DO_WHILE's loop whose
 * latest DO_WHILE instance has ended (completed, failed, canceled); that DO_WHILE then stands for the loop, and the
 * lane goes on (or is retried) from it. Of nested loops, the outermost one that ended stands for them.
 */
function loopAware(state: WorkflowExecution, latest: TaskExecution | undefined): TaskExecution | undefined {
  if (latest === undefined) return undefined;
  const plan = planOf(state.definition);
  if (!plan.hasLoops) return latest;
  let head = latest;
  for (const loopIndex of enclosingLoops(state.definition, latest.definitionIndex)) {
    const loop = latestInstance(state, loopIndex);
    if (loop !== undefined && TERMINAL_TASK_STATUSES.has(loop.status)) head = loop;
  }
  return head;
}

/** True when `lane` has nothing left to run: its latest task ended well and nothing follows it in the lane. */
export function laneDone(state: WorkflowExecution, lane: ActiveLane): boolean {
  const head = lane.head;
  if (head === undefined) return lane.span.first >= lane.span.end;
  return SUCCESSFUL_TASK_STATUSES.has(head.status) && leavesLane(state.definition, head.definitionIndex, nextPlanIndex(state.definition, head));
}

/** The latest instance of plan step `index`, if it has one. */
export function latestInstance(state: WorkflowExecution, index: number): TaskExecution | undefined {
  // A short list is searched: its walk would cost more than the search.
  if (state.tasks.length <= SHORT_TASK_LIST && !walks.has(state.tasks)) return state.tasks.findLast((task) => task.definitionIndex === index);
  return at(state.tasks, walkOf(state).latest.get(index));
}

/**
 * True when plan step `index`, which has no instance, will not run in this run of the workflow: its lane is done
 * without it, or the fork whose branch holds it ended without running it (skipped) or will not run itself. False while
 * it still may (its fork not started yet included).
 * Only asked of steps whose fork has been reached, or of the steps inside them.
 */
export function neverReached(state: WorkflowExecution, index: number, lanes: readonly ActiveLane[] = activeLanes(state)): boolean {
  const plan = planOf(state.definition);
  const laneId = plan.steps[index]?.lane;
  if (laneId === undefined) return true;
  const lane = lanes.find((candidate) => candidate.id === laneId);
  if (lane !== undefined) return laneDone(state, lane);
  const fork = plan.lanes.get(laneId)?.fork ?? -1;
  if (fork < 0) return false;
  // A fork that ended without running this lane (skipped, failed, a CONDITIONAL_FORK that chose others) never will in
  // this run. One still to start (reached, SCHEDULED, in a later pass of the decision; a dynamic fork awaiting its
  // forked tasks' definitions) has not run its branches yet: they may still be reached. So may those of one a lane
  // around it went back before (see activeLanes), which runs again once that lane reaches it anew.
  const forkTask = currentInstance(state, fork);
  if (forkTask === undefined || !TERMINAL_TASK_STATUSES.has(forkTask.status)) return neverReached(state, fork, lanes);
  return laneWentBackBefore(state, forkTask, wentBackIn(state)) ? neverReached(state, fork, lanes) : true;
}
