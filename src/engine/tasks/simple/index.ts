import type { TaskExecution, WorkflowExecution, WorkflowTaskDef } from "../../model";
import type { TaskTypeModule } from "../task-type";

/** Conductor's default `responseTimeoutSeconds`, for a SIMPLE task without a task definition of its own. */
export const DEFAULT_RESPONSE_TIMEOUT_SECONDS = 3600;

/**
 * One task waiting in a worker queue: what the queue needs to hand it out and the poll to find its execution.
 * A queue holds the tasks of one task name (Conductor's task type) in one domain.
 */
export interface WorkerQueueEntry {
  /** The queue's key (see {@link workerQueueKey}). */
  queue: string;
  taskId: string;
  workflowId: string;
  /** The execution's priority (0 to 99): 1 first, 99 last of those, 0 (none) after them all, as Orkes' queues. */
  priority: number;
  /** Epoch ms from which a poll may take it (later than now after a worker's `callbackAfterSeconds`). */
  visibleAt: number;
  /** What its task definition allows its queue to hand out (none: no limit). */
  limits?: HandOutLimits;
}

/**
 * How many tasks of its queue a task may be handed out among: Conductor's `concurrentExecLimit` (tasks held by
 * workers at once) and `rateLimitPerFrequency` per `rateLimitFrequencyInSeconds` (tasks handed out per window).
 */
export interface HandOutLimits {
  /** Most tasks of the queue held by workers at once, this one included. */
  maxHeld?: number;
  /** Most tasks of the queue handed out within any {@link HandOutLimits.windowMs}, this one included. */
  maxPerWindow?: number;
  windowMs?: number;
}

/** Longest rate-limit window honoured (a year): the queue remembers each hand-out for that long. */
const MAX_RATE_WINDOW_SECONDS = 365 * 24 * 3600;

/**
 * The limits `definition`'s task definition sets on handing its tasks out; undefined when it sets none (a limit of 0 is
 * none, and so is a `rateLimitFrequencyInSeconds` of 0 for the rate, as in Conductor).
 */
export function handOutLimits(definition: Pick<WorkflowTaskDef, "taskDefinition"> | undefined): HandOutLimits | undefined {
  const taskDef = definition?.taskDefinition;
  if (taskDef === undefined) return undefined;
  const limits: HandOutLimits = {};
  if ((taskDef.concurrentExecLimit ?? 0) > 0) limits.maxHeld = taskDef.concurrentExecLimit!;
  // Conductor's window is one second when none is given (its TaskDef's default), and a window of 0 applies no rate
  // limit at all: its rate-limiting DAOs (Redis, Cassandra) skip a limit whose frequency is 0 or less.
  const windowSeconds = taskDef.rateLimitFrequencyInSeconds ?? 1;
  if ((taskDef.rateLimitPerFrequency ?? 0) > 0 && windowSeconds > 0) {
    limits.maxPerWindow = taskDef.rateLimitPerFrequency!;
    limits.windowMs = Math.min(windowSeconds, MAX_RATE_WINDOW_SECONDS) * 1000;
  }
  return limits.maxHeld === undefined && limits.maxPerWindow === undefined ? undefined : limits;
}

/**
 * True while a worker holds `task`: it polled it and has not ended it (nor put it back in its queue: SCHEDULED again, or,
 * in an execution stored before such a task went back to SCHEDULED, IN_PROGRESS and pollable).
 */
export function isHeldByWorker(task: TaskExecution): boolean {
  return task.status === "IN_PROGRESS" && task.pollable !== true;
}

/**
 * The key of the worker queue of task name `taskType` in `domain` (none: the default queue). Conductor calls it
 * `domain:taskType`; a task name may hold a `:` itself, so the key is unambiguous JSON instead.
 */
export function workerQueueKey(taskType: string, domain: string | undefined): string {
  return JSON.stringify([domain ?? null, taskType]);
}

/**
 * Conductor's `activeWorkerLastPollTimeout` (its default): a domain has active workers when one of them polled it this
 * recently.
 */
export const ACTIVE_WORKER_POLL_MS = 10_000;

/** Where a SIMPLE task goes: one domain (undefined: the default queue), or the first of a fallback list with active workers. */
export type WorkerPlacement = { domain: string | undefined } | { domainChoices: string[] };

/** Conductor's token for "no domain" (the default queue), in any case. */
function isNoDomain(token: string): boolean {
  return token.toUpperCase() === "NO_DOMAIN";
}

/**
 * Where a SIMPLE task of `taskName` is queued: the execution's `taskToDomain` for its name, else for `*`, read as
 * Conductor reads it: comma-separated domains, `NO_DOMAIN` for the default queue. One domain is used as it is, active
 * workers or not; a list is a choice made by {@link chooseWorkerDomain} when the task is scheduled.
 */
export function workerPlacement(execution: WorkflowExecution, taskName: string): WorkerPlacement {
  const domains = execution.taskToDomain;
  const value = Object.hasOwn(domains, taskName) ? domains[taskName] : Object.hasOwn(domains, "*") ? domains["*"] : undefined;
  const tokens = (value ?? "").split(",").map((token) => token.trim()).filter((token) => token !== "");
  // Only the domains before the last can change the outcome: without one of them, the last is the answer.
  if (!tokens.slice(0, -1).some((token) => !isNoDomain(token))) return { domain: chooseWorkerDomain(tokens.slice(-1), () => false) };
  return { domainChoices: tokens };
}

/**
 * Conductor's choice among fallback domains `choices`: the first whose workers are active (`NO_DOMAIN` is never
 * checked), else the last of them (hoping its workers come), where `NO_DOMAIN` means the default queue (undefined).
 */
export function chooseWorkerDomain(choices: readonly string[], hasActiveWorkers: (domain: string) => boolean): string | undefined {
  const chosen = choices.find((domain) => !isNoDomain(domain) && hasActiveWorkers(domain)) ?? choices[choices.length - 1];
  return chosen === undefined || isNoDomain(chosen) ? undefined : chosen;
}

/** A SIMPLE task's entry to take out of its worker queue: the task no longer waits there. */
export interface WorkerQueueRemoval {
  /** The queue's key (see {@link workerQueueKey}). */
  queue: string;
  taskId: string;
}

/**
 * The SIMPLE tasks that waited in their worker queues in `before` and no longer do in `after` for another reason than
 * a poll handing them to a worker (whose answer drops the entry): completed or failed from outside, timed out,
 * canceled, skipped, or discarded by a rerun. Each entry must be taken out of its queue, or the queue's size counts it
 * until a poll comes to it.
 */
export function leftWorkerQueues(before: WorkflowExecution | null, after: WorkflowExecution): WorkerQueueRemoval[] {
  if (before === null || before === after) return [];
  const queued = before.tasks.filter((task) => task.pollable === true);
  if (queued.length === 0) return [];
  const now = new Map(after.tasks.map((task) => [task.taskId, task]));
  return queued.flatMap((task) => {
    const later = now.get(task.taskId);
    if (later !== undefined && (later.pollable === true || isHeldByWorker(later))) return [];
    return [{ queue: workerQueueKey(task.taskDefName, task.domain), taskId: task.taskId }];
  });
}

/** The queue entry that lets a poll take `task` (following `definition`) from `visibleAt` on. */
export function workerQueueEntry(task: TaskExecution, execution: WorkflowExecution, visibleAt: number, definition: WorkflowTaskDef | undefined): WorkerQueueEntry {
  const entry: WorkerQueueEntry = { queue: workerQueueKey(task.taskDefName, task.domain), taskId: task.taskId, workflowId: execution.workflowId, priority: execution.priority, visibleAt };
  const limits = handOutLimits(definition);
  if (limits !== undefined) entry.limits = limits;
  return entry;
}

/**
 * From when a poll may take pollable `task` (again), at `now` or later: a task waits out its `callbackAfterSeconds`,
 * counted from its `updateTime` (nothing else changes a task waiting in its queue): that of a worker's IN_PROGRESS report
 * that put it back, or its `startDelay` from when it was scheduled.
 */
export function pollableFrom(task: TaskExecution, now: number): number {
  return Math.max(now, queuedFrom(task));
}

/**
 * When pollable `task` became (or becomes) visible in its queue, past or not, as its times tell it: {@link pollableFrom}
 * without the clamp to now (a task pushed later than its updateTime, after a look-up of its domain or task definition,
 * is placed a little before it was). Its place in its queue's order among the tasks of its priority (the oldest first), so that an entry pushed again
 * where it already waited (a resume) keeps it rather than going behind every task queued since.
 */
export function queuedFrom(task: TaskExecution): number {
  return task.updateTime + (task.callbackAfterSeconds ?? 0) * 1000;
}

/**
 * When SIMPLE task, put back in its queue SCHEDULED at `now` by a worker's IN_PROGRESS report asking for
 * `callbackAfterSeconds`, has waited too long for its next poll: `pollTimeoutSeconds` after it may be polled again.
 * Conductor's checkTaskPollTimeout adds the `callbackAfterSeconds` to the poll timeout but counts from the task's first
 * `scheduledTime`, so a task whose work ran longer than that is overdue the moment its report puts it back, and under
 * TIME_OUT_WF (the default) its workflow times out: deliberately not followed, as no worker reporting progress on a
 * long task wants that. Undefined when its task definition sets no `pollTimeoutSeconds`, or its `timeoutPolicy` is
 * ALERT_ONLY (which never times it out here, see {@link simpleTask}).
 */
export function requeuedPollTimeoutAt(now: number, definition: WorkflowTaskDef | undefined, callbackAfterSeconds: number): number | undefined {
  const taskDef = definition?.taskDefinition;
  const pollTimeout = taskDef?.pollTimeoutSeconds ?? 0;
  if (pollTimeout <= 0 || taskDef?.timeoutPolicy === "ALERT_ONLY") return undefined;
  return now + (callbackAfterSeconds + pollTimeout) * 1000;
}

/** The task's `responseTimeoutSeconds`: its task definition's, else Conductor's default; 0 never times out. */
export function responseTimeoutSeconds(definition: WorkflowTaskDef | undefined): number {
  return definition?.taskDefinition?.responseTimeoutSeconds ?? DEFAULT_RESPONSE_TIMEOUT_SECONDS;
}

/**
 * SIMPLE (Conductor's worker task): nothing runs in the engine. The task stays SCHEDULED in its worker queue until
 * a worker polls it (then IN_PROGRESS, with `responseTimeoutSeconds` to report), and ends with the worker's result; an
 * IN_PROGRESS result puts it back in its queue SCHEDULED, for a later poll (see the decider's `requeueForWorker`).
 * A task definition's `pollTimeoutSeconds` bounds the wait for a poll, under its `timeoutPolicy` as Conductor's
 * `checkTaskPollTimeout` applies it: TIME_OUT_WF (the default) times the workflow out at once, RETRY leaves the timed
 * out task to its retry settings, ALERT_ONLY never times it out. `responseTimeoutSeconds` (no update from the worker
 * holding it) makes it TIMED_OUT whatever the policy, for its retry settings to retry.
 */
export const simpleTask: TaskTypeModule = {
  type: "SIMPLE",
  start(task, definition, execution, env) {
    const queued: TaskExecution = { ...task, status: "SCHEDULED", awaitingExternal: true, updateTime: env.now };
    // Conductor's startDelay: the task waits out its callbackAfterSeconds before a poll can take it, which its poll
    // timeout does not count (as Conductor's checkTaskPollTimeout adds it). Its first attempt only: a retry waits out
    // its retry delay instead (set as its callbackAfterSeconds when it was scheduled; none after a workflow's retry),
    // as Conductor's retry sets that delay in its place.
    const delay = task.retryCount > 0 ? (task.callbackAfterSeconds ?? 0) : (definition.startDelay ?? 0);
    if (delay > 0) queued.callbackAfterSeconds = delay;
    const pollTimeout = definition.taskDefinition?.pollTimeoutSeconds ?? 0;
    // ALERT_ONLY (Conductor only logs it): the task waits for a poll however long that takes.
    if (pollTimeout > 0 && definition.taskDefinition?.timeoutPolicy !== "ALERT_ONLY") queued.timeoutAt = env.now + (delay + pollTimeout) * 1000;
    const placement = workerPlacement(execution, definition.name);
    // Which domain has active workers is the queues' to say: the task waits outside any queue until the actor asks.
    if ("domainChoices" in placement) return { task: { ...queued, domainChoices: placement.domainChoices }, dispatch: false };
    if (placement.domain !== undefined) queued.domain = placement.domain;
    return { task: { ...queued, pollable: true }, dispatch: false, queue: pollableFrom(queued, env.now) };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
  onTimeout(task, env, definition) {
    // Conductor's own reasons (DeciderService's timeoutTask and checkTaskPollTimeout), word for word: its "Debugging
    // workflows" guide lists them as what a user looks for in reasonForIncompletion.
    const pollTimeout = definition?.taskDefinition?.pollTimeoutSeconds ?? 0;
    const reason =
      task.status !== "SCHEDULED"
        ? `responseTimeout: ${responseTimeoutSeconds(definition)} exceeded for the taskId: ${task.taskId} with Task Definition: ${task.taskDefName}`
        : `Task poll timed out after ${pollTimeout + lateSeconds(task.timeoutAt, env.now)} seconds. Poll timeout configured as ${pollTimeout} seconds. Timeout policy configured to ${definition?.taskDefinition?.timeoutPolicy ?? "TIME_OUT_WF"}`;
    return { status: "TIMED_OUT", reasonForIncompletion: reason, endTime: env.now, updateTime: env.now, awaitingExternal: false, pollable: undefined, timeoutAt: undefined };
  },
};

/** Whole seconds `now` is past `deadline` (0 when none or not past): what a timeout's elapsed time adds to its setting. */
function lateSeconds(deadline: number | undefined, now: number): number {
  return deadline === undefined ? 0 : Math.max(0, Math.floor((now - deadline) / 1000));
}

/** True when a SIMPLE task timed out waiting for a poll ends its workflow at once (its `timeoutPolicy` is TIME_OUT_WF). */
export function pollTimeoutEndsWorkflow(task: TaskExecution, definition: WorkflowTaskDef | undefined): boolean {
  return task.taskType === "SIMPLE" && task.status === "SCHEDULED" && (definition?.taskDefinition?.timeoutPolicy ?? "TIME_OUT_WF") === "TIME_OUT_WF";
}
