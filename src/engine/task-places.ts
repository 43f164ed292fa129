/**
 * Places of limited async system tasks (HTTP, HTTP_POLL, SUB_WORKFLOW): a task definition's `concurrentExecLimit` (at most
 * that many of its name running at once, across every execution) and `rateLimitPerFrequency` per
 * `rateLimitFrequencyInSeconds` (at most that many started per window) hold back such a task of that name as
 * Conductor's AsyncSystemTaskExecutor holds back an async system task that `exceedsInProgressLimit` or
 * `exceedsRateLimitPerFrequency`: it stays SCHEDULED until a place is free.
 * The decider marks the task (`TaskExecution.place`); the actor asks the name's limit object for the place, gives it
 * back once the task no longer runs, and hands the decider the places given.
 */
import { TERMINAL_TASK_STATUSES, TERMINAL_WORKFLOW_STATUSES, type TaskExecution, type WorkflowExecution, type WorkflowTaskDef } from "./model";
import { handOutLimits, type HandOutLimits } from "./tasks/simple";

/**
 * The task types whose tasks wait for a place under their task definition's limits (SIMPLE ones wait in their queue):
 * the async system tasks of Conductor (AsyncSystemTaskExecutor) that call a service or run a child here. An HTTP_POLL
 * holds its place from its first call until it ends, SCHEDULED between calls included, as Conductor's stays
 * IN_PROGRESS (counted by `exceedsInProgressLimit`) between them. A SUB_WORKFLOW (async in Conductor: SubWorkflow.isAsync)
 * holds its place from its child's start until the task ends, under the `concurrentExecLimit` only (see
 * {@link countsRate}); its child's own workflow `rateLimitConfig` applies on top. A child run again in place (a retry or rerun reopening the task, see {@link retakenPlaces}) takes its place back
 * at once, without waiting: the child runs already, and Conductor counts the reopened IN_PROGRESS task too. Not the
 * other system tasks: EVENT, HUMAN and WAIT are not async in Conductor; a START_WORKFLOW ends as it starts its
 * workflow, so no place would be held; the others run inside the execution. HTTP_SYNC is the HTTP task here (see
 * `isHttpType`), held back as it is, though Conductor runs it inside the decision, unlimited: its call is the same
 * outbound request, which the limits are there to spare.
 */
const PLACED_TYPES: ReadonlySet<string> = new Set(["HTTP", "HTTP_SYNC", "HTTP_POLL", "SUB_WORKFLOW"]);

/** True when tasks of `taskType` wait for a place under their task definition's limits (see {@link PLACED_TYPES}). */
export function isPlacedType(taskType: string): boolean {
  return PLACED_TYPES.has(taskType);
}

/**
 * True when tasks of placed type `taskType` count under their task definition's `rateLimitPerFrequency` too. Not a
 * SUB_WORKFLOW: Conductor's SubWorkflowTaskMapper leaves the task's rateLimitPerFrequency 0, which its
 * AsyncSystemTaskExecutor reads before it checks the rate, so only `concurrentExecLimit` holds one back.
 */
export function countsRate(taskType: string): boolean {
  return taskType !== "SUB_WORKFLOW";
}

/** The limits a task of `taskType` following `definition` must find a place under; undefined when it runs at once. */
export function taskPlaceLimits(taskType: string, definition: WorkflowTaskDef | undefined): HandOutLimits | undefined {
  if (!isPlacedType(taskType)) return undefined;
  const limits = handOutLimits(definition);
  if (limits === undefined || countsRate(taskType)) return limits;
  return limits.maxHeld === undefined ? undefined : { maxHeld: limits.maxHeld };
}

/**
 * The id of the place a run of `task` asks for: its task id, with how many times it was run again (a rerun or a jump
 * back keeps the task id), so that a late answer about an earlier run is never taken for the current one.
 */
export function placeId(task: TaskExecution): string {
  return task.reruns === undefined || task.reruns === 0 ? task.taskId : `${task.taskId}#${task.reruns}`;
}

/** A place a task asks for or holds: its id (see {@link placeId}) and the task name whose limits it counts under. */
export interface TaskPlace {
  placeId: string;
  taskName: string;
  taskId: string;
}

/** True while `task` asks for a place or holds one (it has not ended). */
function holdsOrAsks(task: TaskExecution): boolean {
  return task.place !== undefined && !TERMINAL_TASK_STATUSES.has(task.status);
}

/**
 * The places `state`'s tasks ask for and have not been given: none once the execution ended, nor while it is PAUSED
 * (a paused workflow's task would hold a place it does not use, keeping other executions' tasks of its name waiting,
 * where Conductor postpones a paused workflow's system task; it asks again once resumed).
 */
export function awaitedPlaces(state: WorkflowExecution): TaskPlace[] {
  if (!asksForPlaces(state)) return [];
  return state.tasks.flatMap((task) => (task.place === "asking" && task.status === "SCHEDULED" ? [{ placeId: placeId(task), taskName: task.taskDefName, taskId: task.taskId }] : []));
}

/**
 * The places asked for or held in `before` that `after` no longer asks for nor holds: the task ended (completed,
 * failed, timed out, canceled, skipped), was run again (a rerun or a jump back asks anew, under another id), or is gone.
 * Each must be given back, so that another task of its name can take it.
 */
export function leftPlaces(before: WorkflowExecution | null, after: WorkflowExecution): TaskPlace[] {
  if (before === null || before === after) return [];
  const placed = before.tasks.filter(holdsOrAsks);
  if (placed.length === 0) return [];
  const now = new Map(after.tasks.map((task) => [task.taskId, task]));
  return placed.flatMap((task) => {
    const later = now.get(task.taskId);
    if (later !== undefined && holdsOrAsks(later) && placeId(later) === placeId(task)) return [];
    return [{ placeId: placeId(task), taskName: task.taskDefName, taskId: task.taskId }];
  });
}

/**
 * The places held in `after` by tasks that had ended in `before` with that same place: a SUB_WORKFLOW task whose child
 * runs again in place (the engine's `resumeChild`) holds its place again, without asking, as its child runs already.
 * Its name's limit object must be told to count it again (`TaskLimit.take`): the place was given back when the task ended.
 */
export function retakenPlaces(before: WorkflowExecution | null, after: WorkflowExecution): TaskPlace[] {
  if (before === null || before === after) return [];
  const ended = new Map(before.tasks.filter((task) => task.place === "held" && TERMINAL_TASK_STATUSES.has(task.status)).map((task) => [task.taskId, task]));
  if (ended.size === 0) return [];
  return after.tasks.flatMap((task) => {
    const earlier = ended.get(task.taskId);
    if (earlier === undefined || task.place !== "held" || TERMINAL_TASK_STATUSES.has(task.status) || placeId(earlier) !== placeId(task)) return [];
    return [{ placeId: placeId(task), taskName: task.taskDefName, taskId: task.taskId }];
  });
}

/** Where the place of run `id` of a task of `state` stands: asked for, held, or not (the run ended, or is not this one). */
export function placeState(state: WorkflowExecution | null, id: string): "asking" | "held" | "gone" {
  if (state === null) return "gone";
  const task = state.tasks.find((candidate) => candidate.place !== undefined && placeId(candidate) === id);
  if (task === undefined || !holdsOrAsks(task)) return "gone";
  return task.place === "asking" && !asksForPlaces(state) ? "gone" : task.place!;
}

/** True while `state`'s tasks may take a place they ask for: not once it ended, nor while PAUSED (see {@link awaitedPlaces}). */
export function asksForPlaces(state: WorkflowExecution): boolean {
  return !TERMINAL_WORKFLOW_STATUSES.has(state.status) && state.status !== "PAUSED";
}

/** Why a task waits for its place, in words (shown as its `reasonForIncompletion` while it waits). */
export function waitingReason(taskName: string, limits: HandOutLimits): string {
  const bounds: string[] = [];
  if (limits.maxHeld !== undefined) bounds.push(`concurrentExecLimit ${limits.maxHeld}`);
  if (limits.maxPerWindow !== undefined) bounds.push(`rateLimitPerFrequency ${limits.maxPerWindow} per ${(limits.windowMs ?? 0) / 1000} s`);
  return `Waiting for a place under the limits of task definition ${taskName} (${bounds.join(", ")})`;
}
