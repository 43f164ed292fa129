/**
 * The decider: (execution, event) → (execution, effects). All workflow semantics live here and in
 * the task-type modules; the actor only persists the result and performs the effects.
 */
import type { DecideEnv } from "./config";
import { Draft, type DraftMark } from "./draft";
import { EngineError } from "./errors";
import { evaluationContext, maskedSecrets } from "./evaluation";
import { isExpressionFailure, referencedSecrets, resolveValue } from "./expressions";
import {
  SUCCESSFUL_TASK_STATUSES,
  type ExternalTaskStatus,
  TERMINAL_TASK_STATUSES,
  isLoopType,
  RETRYABLE_WORKFLOW_STATUSES,
  TERMINAL_WORKFLOW_STATUSES,
  type DynamicFork,
  type EventMessage,
  type FailedTaskLists,
  type FailureWorkflowStart,
  type JsonObject,
  type JsonValue,
  type PendingSkip,
  type TaskDef,
  type TaskExecution,
  type TaskStatus,
  type TaskType,
  type WorkflowDef,
  type WorkflowExecution,
  type WorkflowStatus,
  type WorkflowTaskDef,
  type WorkflowTestPlan,
} from "./model";
import { cutText, definitionBytesWith, MAX_STORED_DEFINITION_BYTES, MAX_TASK_REASON_LENGTH, overdeepReason, overStoredDefinitionReason, rememberDefinitionBytes, overExecutionLimitReason, storedDefinitionOversizeReason, oversize, oversizeReason, storedTaskBytes, storedTasksBytes } from "./limits";
import { fractionOf, retryDelayMs, retryPolicyOf } from "./retry";
import { resolvedTaskInput, taskInputTemplate, taskModule } from "./tasks/registry";
import { childDescriptionTask, childOutcome, withChildDescription, type ChildEnding } from "./tasks/sub-workflow";
import { pollableFrom, pollTimeoutEndsWorkflow, queuedFrom, requeuedPollTimeoutAt, responseTimeoutSeconds, workerQueueEntry, type WorkerQueueEntry } from "./tasks/simple";
import type { TaskStart, WorkflowEnding } from "./tasks/task-type";
import { notStartedText, outputWithoutFailureWorkflow, planFailureWorkflow, FAILURE_WORKFLOW_OUTPUT_KEY } from "./failure-workflow";
import { withInputTemplate, workflowInputOversizeReason } from "./workflow-input";
import { setOwn } from "./own-property";
import { shownFailedTasks } from "./view";
import { isInFlight } from "./in-flight";
import { maskedInputValues, maskedOutputValues, maskedValuesRead, reasonMaskedOf, withReasonMasked } from "./masked-reason";
import { activeLanes, inCurrentLoopRun, laneAfterMove, latestInstance, latestInstanceSince, type ActiveLane } from "./lanes";
import {
  definitionReferenceName,
  enclosingJoins,
  enclosingLoops,
  endsIteration,
  instanceTask,
  iterationIn,
  joinedBy,
  leavesLane,
  loopIterationsOf,
  nextPlanIndex,
  planIndexOf,
  planOf,
  planTask,
  ranInIterations,
  ROOT_LANE,
  taskDefToLookUp,
  type Plan,
  untakenBranchOf,
  withinLoop,
  withLookedUpTaskDefs,
  failsPermissively,
  isPermissiveFailure,
} from "./plan";
import { endIteration, reopenedLoopOutput } from "./tasks/do-while";
import { exclusiveJoinEnding } from "./tasks/exclusive-join";
import { joinEnding, joinOnOf, scriptedJoinEnding } from "./tasks/fork-join";
import { taskJqFilter } from "./jq";
import { conditionScripts, joinScript, taskScript, type ScriptLogs } from "./scripts";
import { taskIdWithin } from "./task-id";
import { schemaIssues, taskSchemaFailure, workflowOutputSchemaFailure, writtenFromSecret } from "./json-schema";
import { checkMayUpdate, humanActionFields, type HumanAction, type HumanCaller } from "./tasks/human/progress";
import { humanTriggerStarts } from "./tasks/human/triggers";
import { chooseDynamicTask } from "./tasks/dynamic";
import { choosingTask } from "./tasks/dynamic/concrete";
import { applyUpgrade, type UpgradeRequest } from "./upgrade";
import { compactedForkRuns, forkedTaskInput, withoutEndedForks } from "./tasks/fork-join-dynamic";
import { admissionFields } from "./rate-limit";
import { taskCacheKey } from "./task-cache";
import { asksForPlaces, placeId, taskPlaceLimits } from "./task-places";
import { mergedVariables, variablesProblem } from "./variables";
import { pulledOutput, waitsForMessages, type WorkflowMessage } from "./tasks/pull-workflow-messages";

export { EXTERNAL_TASK_STATUSES, type ExternalTaskStatus } from "./model";

/**
 * The environment variables a command that runs tasks again (retry, restart, rerun, upgrade, jump) brings: those the
 * definition it runs names, as they are now (read by the actor, as a start reads them), replacing the ones the
 * execution kept, so that fixing a variable and retrying takes the new value. Absent, the execution keeps its own.
 */
export interface EnvironmentRead {
  environment?: Record<string, string>;
}

/** Something that happened to an execution. */
export type ExecutionEvent =
  /** A new execution was created: schedule its first task (once admitted, when its definition has a rate limit). */
  | { type: "start" }
  /** Its rate limit gave a waiting (`rateLimited`) execution a place: it runs from now on. */
  | { type: "admitted" }
  /** The actor finished a dispatched side effect of attempt `attempt`. */
  | {
      type: "dispatchResult";
      taskId: string;
      attempt: number;
      status: TaskStatus;
      output: JsonObject;
      reason?: string;
      awaitingExternal?: boolean;
      /** SUB_WORKFLOW: the child actually started, when an idempotency key returned an existing one. */
      subWorkflowId?: string;
      /** SUB_WORKFLOW: input keys to add to the task's (the version its child started with), shown from now on. */
      shownInput?: JsonObject;
      /** EVENT: the message its event's handlers are owed once this result is taken (see the `publishEvent` effect). */
      published?: EventMessage;
    }
  /**
   * Someone outside completed (or updated) a pending task. Output is merged into the task's (replaces it with
   * `replaceOutput`). A SIMPLE task a worker keeps IN_PROGRESS goes back to its queue, to be polled again after
   * `callbackAfterSeconds` (0 when absent). `byTask` names the UPDATE_TASK sending it (`<workflowId>/<taskId>`): sent
   * again once applied, it changes nothing and is not refused. An output too large to store is refused, unless
   * `oversizeFailsTask` (a worker's TaskResult: its worker would send the same result again and again, then give up):
   * the task then fails for good saying so, as Conductor's server fails it.
   */
  | {
      type: "externalUpdate";
      taskId: string;
      status: ExternalTaskStatus;
      output: JsonObject;
      reason?: string;
      callbackAfterSeconds?: number;
      replaceOutput?: boolean;
      byTask?: string;
      oversizeFailsTask?: boolean;
      /** The worker reporting it (a TaskResult's `workerId`): the task's `workerId` from then on, as in Conductor. */
      workerId?: string;
    }
  /** A worker's poll took SIMPLE task `taskId` from its queue: it is the worker's now (IN_PROGRESS). */
  | { type: "taskPolled"; taskId: string; workerId?: string }
  /**
   * PULL_WORKFLOW_MESSAGES task `taskId` takes `messages` off its workflow's queue (see `tasks/pull-workflow-messages`):
   * it completes with them. The actor takes them off its queue in the same transaction, so each is handed to one task.
   */
  | { type: "messagesPulled"; taskId: string; messages: WorkflowMessage[] }
  /** An action on a HUMAN task through Orkes' human task API (claim, release, reassign, skip, delete): see `tasks/human/progress.ts`. */
  | { type: "humanAction"; taskId: string; caller: HumanCaller; action: HumanAction }
  /**
   * A HUMAN task's form, merged into its output by whoever claimed it: saved (`complete` false, it stays IN_PROGRESS) or
   * submitted (COMPLETED), then checked against the JSON schema of its user form, `formSchema`, when one is given.
   */
  | { type: "humanUpdate"; taskId: string; caller: HumanCaller; output: JsonObject; complete: boolean; formSchema?: JsonObject }
  /** A worker's heartbeat for SIMPLE task `taskId` (Conductor's TaskResult with `extendLease`): see {@link applyLeaseExtension}. */
  | { type: "leaseExtended"; taskId: string }
  /**
   * Time passed (the alarm fired, or the object was just loaded). `liveTaskIds` are tasks whose side
   * effect is running in this isolate right now; any other dispatched attempt was lost with an
   * earlier isolate and is dispatched again.
   */
  | { type: "tick"; liveTaskIds: ReadonlySet<string> }
  /** `triggerFailureWorkflow` starts the definition's failure workflow too (Orkes' option; a termination does not otherwise). */
  | { type: "terminate"; reason?: string; triggerFailureWorkflow?: boolean }
  | { type: "pause" }
  | { type: "resume" }
  /**
   * Retry, restart and rerun replace the execution's `startScopes` with those given (whoever asked for them). They,
   * upgrade and jump run tasks again, with `environment` as the execution's environment variables when given (see
   * {@link EnvironmentRead}).
   */
  | ({ type: "retry"; startScopes?: string[] } & EnvironmentRead)
  /** Starts over from the first task; `definition` replaces the stored one (useLatestDefinitions). */
  | ({ type: "restart"; definition?: WorkflowDef; startScopes?: string[] } & EnvironmentRead)
  /**
   * Orkes' upgrade: the RUNNING or PAUSED execution goes on under `definition`, another version of its workflow (see
   * `upgrade.ts`); tasks scheduled and not started yet take their input from it. Replaces `startScopes` as a rerun does.
   */
  | ({ type: "upgrade"; startScopes?: string[] } & UpgradeRequest & EnvironmentRead)
  /** Runs again from task `fromTaskId`, or from the first task when it is absent (as Conductor's rerun without reRunFromTaskId). */
  | ({ type: "rerun"; fromTaskId?: string; workflowInput?: JsonObject; taskInput?: JsonObject; correlationId?: string; startScopes?: string[] } & EnvironmentRead)
  /**
   * Merges `variables` into a RUNNING or PAUSED execution's variables (Orkes' update of workflow variables): shallow,
   * each given key replaces the one of that name (a null value sets it to null). Tasks scheduled from then on see them.
   */
  | { type: "updateVariables"; variables: JsonObject }
  /** A child workflow started by SUB_WORKFLOW task `taskId` reached a terminal status. */
  | ({ type: "childFinished"; taskId: string; subWorkflowId: string } & ChildEnding)
  /**
   * The child of finished SUB_WORKFLOW task `taskId` is being rerun or retried in place: the task
   * waits for that same child again, later tasks are discarded, and the workflow runs again. Like retry and
   * rerun, it replaces `startScopes` with those of whoever asked, and, asked by this execution's own retry or rerun,
   * its environment variables with those that command read (see {@link EnvironmentRead}). A rerun from a child's task
   * gives this execution (never the child, as in Conductor) its new `workflowInput` and `correlationId`.
   */
  | ({ type: "resumeChild"; taskId: string; startScopes?: string[]; workflowInput?: JsonObject; correlationId?: string } & EnvironmentRead)
  /**
   * Skips task `taskReferenceName` of a RUNNING execution (Conductor's skipTaskFromWorkflow): its pending instance
   * becomes SKIPPED now, or, not reached yet, it is recorded SKIPPED instead of run when the workflow reaches it.
   * `taskInput` and `taskOutput` (both `{}` when absent) are that instance's input and output.
   */
  | { type: "skipTask"; taskReferenceName: string; taskInput?: JsonObject; taskOutput?: JsonObject }
  /**
   * Orkes' jump: a RUNNING or PAUSED execution goes on from its top-level task `taskReferenceName`, run with
   * `taskInput` as given (resolved from its step as usual when absent). Back to a task it ran: that task runs again and
   * the tasks scheduled after it are discarded, as by a rerun from it. Forward to one not reached yet: what is pending
   * ends SKIPPED, and every task between (in each running branch too) is SKIPPED as the workflow reaches it. Without
   * `taskReferenceName` it goes on from its beginning (its first task), as Orkes documents a jump to a null task.
   */
  | ({ type: "jump"; taskReferenceName?: string; taskInput?: JsonObject } & EnvironmentRead)
  /**
   * Conductor's resetCallbacksForWorkflow: SIMPLE tasks waiting out a `callbackAfterSeconds` in their queue (a worker's
   * IN_PROGRESS report's, a startDelay, a retry's delay) may be polled at once. A finished workflow refuses it.
   */
  | { type: "resetCallbacks" }
  /** Failure workflow `workflowId` (see {@link FailureWorkflowStart}) could not be started, for `reason`: the output says so instead of its id. */
  | { type: "failureWorkflowNotStarted"; workflowId: string; name: string; reason: string }
  /**
   * The registered task definitions of names the execution's tasks wait for (see {@link awaitedTaskDefNames}), by
   * name, null for a name none is registered under: recorded, and the tasks that waited for them start.
   */
  | { type: "taskDefsLoaded"; taskDefs: Record<string, TaskDef | null> }
  /**
   * The domains chosen for SIMPLE tasks scheduled with fallback domains (see {@link awaitedDomainChoices}), by task id,
   * null for the default queue: recorded, and each task goes to its queue.
   */
  | { type: "workerDomainsChosen"; domains: Record<string, string | null> }
  /**
   * What the task output cache holds for the tasks that wait for their look-up (see {@link awaitedCacheLookups}), by
   * task id, null for nothing cached: a task with an output completes with it, the others start. `keys`: the key a task
   * was looked up by where the actor made it finer than the one it gave (the versions of the secrets it sends), which
   * its output is then cached under.
   */
  | { type: "cacheLookedUp"; outputs: Record<string, JsonObject | null>; keys?: Record<string, string> }
  /**
   * The limit objects of their task names gave these places (see `task-places.ts`), by place id: each task that still
   * asks for one holds it, and starts.
   */
  | { type: "placesGiven"; placeIds: string[] };

/** Work the actor must do after persisting a decision. */
export type Effect =
  /** Perform the side effect of a task's current attempt. */
  | { kind: "dispatch"; taskId: string; attempt: number }
  /** Stop a side effect in flight (the task was canceled). */
  | { kind: "cancelDispatch"; taskId: string }
  /** Terminate the child of a SUB_WORKFLOW task that was canceled, or decided from outside. */
  | { kind: "terminateChild"; taskId: string; subWorkflowId: string; reason: string }
  /** Start the failure workflow of an execution that just ended, or a workflow a HUMAN task's trigger names (see {@link FailureWorkflowStart}). */
  | { kind: "startFailureWorkflow"; start: FailureWorkflowStart }
  /**
   * Put a SIMPLE task in its worker queue (or move it there to `visibleAt`). An entry whose task no longer waits
   * for a poll is harmless: the poll that takes it finds the task gone and drops it.
   */
  | { kind: "queueTask"; entry: WorkerQueueEntry }
  /**
   * Publish an EVENT task's message to its event's handlers, until that is done (written down with the decision): its
   * result was taken, and the handlers run after it, as Conductor's queue delivers a message after the task put it there.
   */
  | { kind: "publishEvent"; message: EventMessage }
  /**
   * Append lines to a task's log (an INLINE or LAMBDA script's console, see `ScriptLogs`), in the decision's own
   * transaction: written with the task's result, never without it.
   */
  | { kind: "taskLog"; taskId: string; lines: ScriptLogs; createdTime: number };

/** A decision: the new execution and what to do about it. */
export interface Decision {
  state: WorkflowExecution;
  effects: Effect[];
}

/** Parameters of a new execution. */
export interface NewExecution {
  workflowId: string;
  definition: WorkflowDef;
  input: JsonObject;
  correlationId?: string;
  priority?: number;
  taskToDomain?: Record<string, string>;
  idempotencyKey?: string;
  parentWorkflowId?: string;
  parentWorkflowTaskId?: string;
  /** See {@link WorkflowExecution.startedByTask}. */
  startedByTask?: string;
  /** Public base URL for callback URLs. */
  baseUrl?: string;
  /** How many parents the execution has (0 for one started through the API). */
  depth?: number;
  /** See {@link WorkflowExecution.startScopes}. */
  startScopes?: string[];
  /** See {@link WorkflowExecution.createdBy}. */
  createdBy?: string;
  /** See {@link WorkflowExecution.event}. */
  event?: string;
  /** A test run's plan (see {@link WorkflowExecution.test}). */
  test?: WorkflowTestPlan;
  /** See {@link WorkflowExecution.testRunDomain}. */
  testRunDomain?: string;
  /** See {@link WorkflowExecution.environment}. */
  environment?: Record<string, string>;
}

/** A fresh RUNNING execution with no tasks yet; feed it a `start` event. */
export function createExecution(params: NewExecution, now: number): WorkflowExecution {
  const execution: WorkflowExecution = {
    workflowId: params.workflowId,
    workflowName: params.definition.name,
    workflowVersion: params.definition.version,
    status: "RUNNING",
    input: withInputTemplate(params.definition, params.input),
    output: {},
    variables: initialVariables(params.definition),
    priority: params.priority ?? 0,
    taskToDomain: params.taskToDomain ?? {},
    createTime: now,
    startTime: now,
    endTime: 0,
    updateTime: now,
    definition: params.definition,
    tasks: [],
  };
  if (params.correlationId !== undefined) execution.correlationId = params.correlationId;
  if (params.idempotencyKey !== undefined) execution.idempotencyKey = params.idempotencyKey;
  if (params.parentWorkflowId !== undefined) execution.parentWorkflowId = params.parentWorkflowId;
  if (params.parentWorkflowTaskId !== undefined) execution.parentWorkflowTaskId = params.parentWorkflowTaskId;
  if (params.startedByTask !== undefined) execution.startedByTask = params.startedByTask;
  if (params.baseUrl !== undefined) execution.baseUrl = params.baseUrl;
  if (params.depth !== undefined && params.depth > 0) execution.depth = params.depth;
  if (params.startScopes !== undefined) execution.startScopes = params.startScopes;
  if (params.createdBy !== undefined) execution.createdBy = params.createdBy;
  if (params.event !== undefined) execution.event = params.event;
  if (params.test !== undefined) execution.test = params.test;
  if (params.testRunDomain !== undefined) execution.testRunDomain = params.testRunDomain;
  if (params.environment !== undefined && Object.keys(params.environment).length > 0) execution.environment = params.environment;
  const deadline = workflowDeadline(params.definition, now);
  if (deadline !== undefined) execution.deadline = deadline;
  return execution;
}

/** The variables an execution of `definition` starts with: a copy of the definition's, so that updates never reach it. */
function initialVariables(definition: WorkflowDef): JsonObject {
  return { ...(definition.variables ?? {}) };
}

/**
 * When a workflow (re)opened at `from` times out; undefined when it never does. The one place a deadline comes
 * from (start, retry, restart, rerun, resume, a resumed child), so ALERT_ONLY holds on every path.
 */
function workflowDeadline(definition: WorkflowDef, from: number): number | undefined {
  const seconds = definition.timeoutSeconds ?? 0;
  if (seconds <= 0 || definition.timeoutPolicy === "ALERT_ONLY") return undefined;
  return from + seconds * 1000;
}

/** True while the task's status may still change. */
export function isPending(task: TaskExecution): boolean {
  return !TERMINAL_TASK_STATUSES.has(task.status);
}

/** Re-exported for the actors, which read it with the rest of the decider. */
export { isInFlight };

/**
 * Applies one event. Throws {@link EngineError} (and changes nothing) when the event does not fit
 * the execution's state; stale results of superseded attempts are ignored without error.
 *
 * Deadlines that have passed are applied first ({@link settleOverdue}): the alarm that enforces them fires
 * at or after its time, and an event arriving in between (a late callback, a completion or a result after
 * the workflow's timeout) must meet the execution the deadline made, not the one the alarm has not
 * caught up with yet. Except for `start` (nothing is due yet), `tick` (it applies them itself) and
 * `terminate`: an explicit stop ends the workflow either way, and is taken as asked, as Conductor does.
 */
export function decide(state: WorkflowExecution, event: ExecutionEvent, env: DecideEnv): Decision {
  return withHumanTriggers(state, decideUntriggered(state, event, env), env);
}

/** {@link decide}, but for what HUMAN tasks' triggers owe for the decision's changes. */
function decideUntriggered(state: WorkflowExecution, event: ExecutionEvent, env: DecideEnv): Decision {
  if (event.type === "start" || event.type === "tick" || event.type === "terminate") return decideEvent(state, event, env);
  const overdue = settleUntriggered(state, env);
  const decision = decideEvent(overdue.state, event, env);
  // An event that changed nothing (a stale result, a second pause) still leaves the deadlines applied.
  if (decision.state === overdue.state) return overdue;
  return { state: decision.state, effects: [...overdue.effects, ...decision.effects] };
}

/**
 * What the alarm's tick would do about deadlines that have passed by `env.now` (the workflow's timeout, a
 * task's `timeoutAt`), and nothing else: due retries and watchdogs stay the alarm's. The very same state
 * when no deadline has passed. The actor also uses it to record a passed deadline that made it refuse an event.
 */
export function settleOverdue(state: WorkflowExecution, env: DecideEnv): Decision {
  return withHumanTriggers(state, settleUntriggered(state, env), env);
}

/**
 * `decision` (of `before`) with the workflow starts its HUMAN tasks' triggers owe for what it changed (see
 * `tasks/human/triggers.ts`), owed as a failure workflow's start is.
 */
function withHumanTriggers(before: WorkflowExecution, decision: Decision, env: DecideEnv): Decision {
  if (decision.state === before) return decision;
  const starts = humanTriggerStarts(before, decision.state, env);
  if (starts.length === 0) return decision;
  return { state: decision.state, effects: [...decision.effects, ...starts.map((start): Effect => ({ kind: "startFailureWorkflow", start }))] };
}

/** {@link settleOverdue}, but for what HUMAN tasks' triggers owe. */
function settleUntriggered(state: WorkflowExecution, env: DecideEnv): Decision {
  if (!hasOverdueDeadline(state, env.now)) return { state, effects: [] };
  const draft = new Draft(state);
  const effects: Effect[] = [];
  applyDeadlines(draft, env, effects);
  advance(draft, env, effects);
  return { state: draft.state, effects };
}

/** True when a running workflow's own timeout has passed. A paused one's clock stands still (see the resume). */
function workflowOverdue(state: WorkflowExecution, now: number): boolean {
  return state.deadline !== undefined && now >= state.deadline && state.status === "RUNNING";
}

function taskOverdue(state: WorkflowExecution, task: TaskExecution, now: number): boolean {
  const ownTimeout = task.timeoutAt !== undefined && task.timeoutAt <= now && !workerClockWaits(state, task);
  return isPending(task) && (ownTimeout || overdueByDefinition(state, task, now) || overdueInTotal(task, now));
}

/**
 * True when `task` waits for a worker's poll in a paused workflow (a first poll, or, put back SCHEDULED by its worker's
 * IN_PROGRESS report, the next one): no poll can take it then, so its pollTimeoutSeconds stands still (as Conductor
 * decides nothing for a paused workflow) and counts afresh from the resume. An execution stored before such a task went
 * back to SCHEDULED holds it IN_PROGRESS and pollable, with its responseTimeoutSeconds running instead: the same.
 */
function pollClockStopped(state: WorkflowExecution, task: TaskExecution): boolean {
  return state.status === "PAUSED" && task.taskType === "SIMPLE" && (task.status === "SCHEDULED" || (task.status === "IN_PROGRESS" && task.pollable === true));
}

/**
 * True when SIMPLE `task`'s own clock (its `timeoutAt`) waits while `state` is paused: its pollTimeoutSeconds (see
 * {@link pollClockStopped}, counted afresh from the resume) or, held by a worker, its responseTimeoutSeconds. Conductor
 * checks both (checkTaskPollTimeout, isResponseTimedOut) only as its DeciderService decides a workflow that is not
 * paused, while its updateTask takes a worker's result for a paused workflow's task: a worker holding the task past its
 * responseTimeoutSeconds during the pause may still report it done. A response timeout that passed meanwhile acts at the
 * resume, if the task is still pending then.
 */
function workerClockWaits(state: WorkflowExecution, task: TaskExecution): boolean {
  return state.status === "PAUSED" && task.taskType === "SIMPLE";
}

/** True when the task's attempts together have taken their `totalTimeoutSeconds` (see {@link TaskExecution.retryDeadline}). */
function overdueInTotal(task: TaskExecution, now: number): boolean {
  return task.retryDeadline !== undefined && task.retryDeadline <= now;
}

/**
 * True when the task's definition timeout has passed, and comes before its own (a webhook's) timeout. Not while
 * {@link definitionTimeoutWaits}.
 */
function overdueByDefinition(state: WorkflowExecution, task: TaskExecution, now: number): boolean {
  const at = task.definitionTimeoutAt;
  return at !== undefined && at <= now && (task.timeoutAt === undefined || at <= task.timeoutAt) && !definitionTimeoutWaits(state);
}

/**
 * True when `task`'s task definition timeout waits for the resume of paused `state`, whatever its timeoutPolicy: the
 * resume times the task out (and, under TIME_OUT_WF, the workflow) if it has not ended by then. Conductor checks a task's
 * timeoutSeconds only as it decides a workflow that is not paused (checkTaskTimeout, after DeciderService.decide's
 * return for a PAUSED one: conductor-oss/conductor core/.../execution/DeciderService.java), so a worker's or a human's
 * result during the pause still counts, and a RETRY policy's retry waits for the resume as every retry does.
 */
function definitionTimeoutWaits(state: WorkflowExecution): boolean {
  return state.status === "PAUSED";
}

function hasOverdueDeadline(state: WorkflowExecution, now: number): boolean {
  return workflowOverdue(state, now) || state.tasks.some((task) => taskOverdue(state, task, now));
}

/** Applies passed deadlines; true when the workflow itself timed out (then nothing else is left to do). */
function applyDeadlines(draft: Draft, env: DecideEnv, effects: Effect[]): boolean {
  const state = draft.state;
  if (workflowOverdue(state, env.now)) {
    const seconds = state.definition.timeoutSeconds ?? 0;
    // Conductor's reason (DeciderService.checkWorkflowTimeout), which its "Debugging workflows" guide lists; only
    // TIME_OUT_WF sets a deadline. The elapsed time is counted as the deadline is: from the start, retry or resume.
    const elapsed = Math.max(0, Math.floor((env.now - (state.deadline ?? env.now) + seconds * 1000) / 1000));
    endWorkflow(draft, "TIMED_OUT", `Workflow timed out after ${elapsed} seconds. Timeout configured as ${seconds} seconds. Timeout policy configured to TIME_OUT_WF`, env, effects);
    return true;
  }
  for (const task of state.tasks) {
    if (!taskOverdue(state, task, env.now)) continue;
    if (overdueInTotal(task, env.now)) {
      // Final whatever else is due: no retry follows it (see the retry check in moveLane).
      timeOutInTotal(draft, task, env, effects);
      continue;
    }
    if (overdueByDefinition(state, task, env.now)) {
      if (timeOutByDefinition(draft, task, env, effects)) return true;
      continue;
    }
    const onTimeout = taskModule(task.taskType)?.onTimeout;
    if (!onTimeout) continue;
    const definition = instanceTask(state.definition, task);
    const timedOut = onTimeout(task, env, definition);
    draft.updateTask(task.taskId, timedOut);
    if (pollTimeoutEndsWorkflow(task, definition)) {
      endWorkflow(draft, "TIMED_OUT", `Task ${task.referenceTaskName} timed out: ${timedOut.reasonForIncompletion ?? "not polled in time"}`, env, effects, { failedTask: { ...task, ...timedOut } });
      return true;
    }
  }
  return false;
}

function decideEvent(state: WorkflowExecution, event: ExecutionEvent, env: DecideEnv): Decision {
  const draft = new Draft(state);
  const effects: Effect[] = [];
  // Before anything is scheduled again: the tasks it runs again read these. A refused command throws, changing nothing.
  if ("environment" in event && event.environment !== undefined) {
    draft.patch({ environment: Object.keys(event.environment).length > 0 ? event.environment : undefined });
  }
  switch (event.type) {
    case "start":
      draft.patch(admissionFields(state, env));
      break;
    case "admitted":
      if (state.rateLimited !== true || TERMINAL_WORKFLOW_STATUSES.has(state.status)) return { state, effects: [] };
      draft.patch({ rateLimited: undefined, updateTime: env.now });
      break;
    case "dispatchResult":
      if (!applyDispatchResult(draft, event, env)) return { state, effects: [] };
      if (event.published !== undefined) effects.push({ kind: "publishEvent", message: event.published });
      break;
    case "externalUpdate":
      applyExternalUpdate(draft, event, env, effects);
      break;
    case "taskPolled":
      applyTaskPolled(draft, event, env);
      return { state: draft.state, effects };
    case "messagesPulled":
      applyMessagesPulled(draft, event, env);
      break;
    case "humanAction":
      draft.updateTask(event.taskId, humanActionFields(taskToUpdate(draft, event.taskId), event.caller, event.action, env.now));
      break;
    case "humanUpdate":
      applyHumanUpdate(draft, event, env, effects);
      break;
    case "leaseExtended":
      return applyLeaseExtension(draft, event.taskId, env) ? { state: draft.state, effects } : { state, effects: [] };
    case "tick":
      applyTick(draft, event.liveTaskIds, env, effects);
      break;
    case "terminate":
      // Terminating a terminated workflow again is done already, as in Conductor: a repeated DELETE (a client
      // retrying one whose answer it missed, a bulk terminate over a search result) is not a conflict.
      if (state.status === "TERMINATED") return { state, effects: [] };
      requireStatus(state, ["RUNNING", "PAUSED"], "terminate");
      endWorkflow(draft, "TERMINATED", event.reason ?? "Terminated", env, effects, { triggerFailureWorkflow: event.triggerFailureWorkflow === true });
      return { state: draft.state, effects };
    case "failureWorkflowNotStarted": {
      const output = outputWithoutFailureWorkflow(state, event.workflowId, notStartedText(event.name, event.reason));
      return output === undefined ? { state, effects: [] } : { state: { ...state, output }, effects: [] };
    }
    case "pause":
      if (TERMINAL_WORKFLOW_STATUSES.has(state.status)) throw conflict(state, "pause");
      if (state.status === "PAUSED") return { state, effects: [] };
      draft.patch({ status: "PAUSED", updateTime: env.now, pausedAt: env.now });
      return { state: draft.state, effects };
    case "resetCallbacks": {
      if (TERMINAL_WORKFLOW_STATUSES.has(state.status)) throw conflict(state, "reset the callbacks of");
      let released = false;
      for (const task of state.tasks) {
        if ((task.callbackAfterSeconds ?? 0) === 0) continue;
        // In its queue: a worker's IN_PROGRESS report's delay, a startDelay, a retry's delay. Or SCHEDULED in none yet
        // (its domain or task definition being looked up): its delay, counted once it is queued, is gone as well.
        const queued = task.pollable === true;
        if (!queued && !(task.taskType === "SIMPLE" && task.status === "SCHEDULED")) continue;
        const updated = draft.updateTask(task.taskId, { callbackAfterSeconds: 0 });
        if (queued) effects.push({ kind: "queueTask", entry: workerQueueEntry(updated, state, env.now, instanceTask(state.definition, updated)) });
        released = true;
      }
      // Where tasks wait changes; nothing else moves.
      return released ? { state: draft.state, effects } : { state, effects };
    }
    case "updateVariables":
      // Data only: nothing is scheduled or started by it, so the execution does not advance.
      draft.patch({ variables: updatedVariables(state, event.variables, env), updateTime: env.now });
      return { state: draft.state, effects };
    case "resume":
      requireStatus(state, ["PAUSED"], "resume");
      // Its timeout counts again from now, as Conductor's resume sets lastRetriedTime (it does not run while paused).
      draft.patch({ status: "RUNNING", updateTime: env.now, lastRetriedTime: env.now, deadline: workflowDeadline(state.definition, env.now), pausedAt: undefined });
      // So does a worker task's wait for its poll, which no poll could end while paused.
      for (const task of state.tasks) {
        if (!pollClockStopped(state, task) || task.timeoutAt === undefined) continue;
        const definition = instanceTask(state.definition, task);
        const seconds = task.status === "SCHEDULED" ? (definition?.taskDefinition?.pollTimeoutSeconds ?? 0) : responseTimeoutSeconds(definition);
        if (seconds > 0) draft.updateTask(task.taskId, { timeoutAt: pollableFrom(task, env.now) + seconds * 1000 });
      }
      // A poll that found them paused left them out of reach for a while: they can be polled again at once (or once
      // the delay a worker asked for has passed), in the place they had in their queues (as Conductor's pause leaves
      // its queues alone), not behind every task queued while the workflow was paused.
      for (const task of state.tasks) if (task.pollable === true) effects.push({ kind: "queueTask", entry: workerQueueEntry(task, state, queuedFrom(task), instanceTask(state.definition, task)) });
      // A task definition or response timeout that passed while paused and waited for the resume (see
      // definitionTimeoutWaits, workerClockWaits) acts now, as Conductor's resume decides the workflow at once.
      if (applyDeadlines(draft, env, effects)) return { state: draft.state, effects };
      break;
    case "retry":
      applyRetry(draft, env);
      replaceStartScopes(draft, event.startScopes);
      break;
    case "restart":
      applyRestart(draft, env, event.definition);
      replaceStartScopes(draft, event.startScopes);
      break;
    case "rerun":
      applyRerun(draft, event, env);
      replaceStartScopes(draft, event.startScopes);
      break;
    case "upgrade":
      requireStatus(state, ["RUNNING", "PAUSED"], "upgrade");
      applyUpgrade(draft, event, env);
      refreshUnstartedInputs(draft, env);
      // A new timeout counts from where the old one did: the start, or the last retry, rerun or resume (what the old
      // deadline was set from). When the old one set none (ALERT_ONLY, no timeout), from the last retry or resume, else
      // the start, as Conductor's checkWorkflowTimeout counts from lastRetriedTime when it has one: from the start, a
      // workflow resumed or retried a while ago would time out at once under a timeout it has not yet had in full.
      if (event.definition.timeoutSeconds !== state.definition.timeoutSeconds || event.definition.timeoutPolicy !== state.definition.timeoutPolicy) {
        const countedFrom = state.deadline === undefined ? (state.lastRetriedTime ?? state.startTime) : state.deadline - (state.definition.timeoutSeconds ?? 0) * 1000;
        draft.patch({ deadline: workflowDeadline(event.definition, countedFrom) });
      }
      replaceStartScopes(draft, event.startScopes);
      break;
    case "childFinished":
      if (!applyChildFinished(draft, event, env)) return { state, effects: [] };
      break;
    case "resumeChild":
      applyResumeChild(draft, event, env);
      replaceStartScopes(draft, event.startScopes);
      break;
    case "skipTask":
      applySkipTask(draft, event, env, effects);
      break;
    case "jump":
      applyJump(draft, event, env, effects);
      break;
    case "taskDefsLoaded":
      if (!applyTaskDefsLoaded(draft, event.taskDefs, env)) return { state, effects: [] };
      break;
    case "workerDomainsChosen":
      // Where a task waits changes; nothing else moves.
      return applyWorkerDomainsChosen(draft, event.domains, env, effects) ? { state: draft.state, effects } : { state, effects: [] };
    case "cacheLookedUp":
      if (!applyCacheLookups(draft, event.outputs, event.keys ?? {}, env)) return { state, effects: [] };
      break;
    case "placesGiven":
      if (!applyPlacesGiven(draft, event.placeIds)) return { state, effects: [] };
      break;
  }
  // Reopened (a retry, restart, rerun, a child run again): it counts against its rate limit again, under the key its
  // input and correlation id give now, and waits for a place as a new start does.
  if (TERMINAL_WORKFLOW_STATUSES.has(state.status) && !TERMINAL_WORKFLOW_STATUSES.has(draft.state.status)) draft.patch(admissionFields(draft.state, env));
  advance(draft, env, effects);
  return { state: draft.state, effects };
}

/**
 * Gives each task that waited for a looked-up task definition its input (see {@link inputFields}), which records the
 * definition in the execution's, one at a time, each checked against the stored copy's limit (see
 * {@link runsAsLookedUp}): it starts as the execution advances. False when there is nothing to do (the execution ended
 * meanwhile, or no task waits).
 */
function applyTaskDefsLoaded(draft: Draft, taskDefs: Record<string, TaskDef | null>, env: DecideEnv): boolean {
  const state = draft.state;
  const waiting = state.tasks.filter((task) => task.awaitingTaskDef === true && task.status === "SCHEDULED");
  if (TERMINAL_WORKFLOW_STATUSES.has(state.status) || waiting.length === 0) return false;
  const loaded: DecideEnv = { ...env, taskDefs: (name) => (Object.hasOwn(taskDefs, name) ? taskDefs[name] : env.taskDefs(name)) };
  for (const task of waiting) {
    // A DYNAMIC chooses again from its input, which may now name another task (whose definition it then waits for).
    draft.updateTask(task.taskId, { awaitingTaskDef: undefined, ...inputFields(draft, task.definitionIndex, task.taskId, loaded) });
  }
  return true;
}

/**
 * Records the domain chosen for each SIMPLE task that waited for one (see {@link TaskExecution.domainChoices}) and puts
 * it in that domain's queue. False when there is nothing to do (the execution ended meanwhile, or no task named waits).
 */
function applyWorkerDomainsChosen(draft: Draft, domains: Record<string, string | null>, env: DecideEnv, effects: Effect[]): boolean {
  const state = draft.state;
  if (TERMINAL_WORKFLOW_STATUSES.has(state.status)) return false;
  let changed = false;
  for (const task of state.tasks) {
    if (task.domainChoices === undefined || task.status !== "SCHEDULED" || !Object.hasOwn(domains, task.taskId)) continue;
    const updated = draft.updateTask(task.taskId, { domainChoices: undefined, domain: domains[task.taskId] ?? undefined, pollable: true });
    // From its scheduling on, it waits out its startDelay (if any) in that queue.
    effects.push({ kind: "queueTask", entry: workerQueueEntry(updated, draft.state, pollableFrom(updated, env.now), instanceTask(state.definition, updated)) });
    changed = true;
  }
  return changed;
}

/**
 * Completes each task that waited for its cache look-up with the output found, or lets it start (`missed`, keeping the
 * key it was looked up by from `keys`, to cache its output under); false when there is nothing to do (the execution
 * ended meanwhile, or no task named waits).
 */
function applyCacheLookups(draft: Draft, outputs: Record<string, JsonObject | null>, keys: Record<string, string>, env: DecideEnv): boolean {
  const state = draft.state;
  if (TERMINAL_WORKFLOW_STATUSES.has(state.status)) return false;
  let changed = false;
  for (const task of state.tasks) {
    if (task.cache?.state !== "looking" || task.status !== "SCHEDULED" || !Object.hasOwn(outputs, task.taskId)) continue;
    const output = outputs[task.taskId] ?? null;
    const key = Object.hasOwn(keys, task.taskId) ? keys[task.taskId]! : task.cache.key;
    if (output === null) draft.updateTask(task.taskId, { cache: { key, state: "missed" } });
    else {
      draft.updateTask(task.taskId, {
        cache: { key, state: "hit" },
        status: "COMPLETED",
        // Marked as Orkes marks a cache hit's output (only a miss's output is ever cached, so the mark is never stored).
        outputData: { ...output, _cachedResponse: true },
        startTime: env.now,
        endTime: env.now,
        updateTime: env.now,
      });
    }
    changed = true;
  }
  return changed;
}

/**
 * Lets each task that asked for one of the places `placeIds` hold it: it starts as the execution advances. False when
 * there is nothing to do (the execution ended meanwhile, or no task asks for one of them any more).
 */
function applyPlacesGiven(draft: Draft, placeIds: readonly string[]): boolean {
  const state = draft.state;
  if (!asksForPlaces(state)) return false;
  const given = new Set(placeIds);
  let changed = false;
  for (const task of state.tasks) {
    if (task.place !== "asking" || task.status !== "SCHEDULED" || !given.has(placeId(task))) continue;
    draft.updateTask(task.taskId, { place: "held" });
    changed = true;
  }
  return changed;
}

/** SIMPLE tasks scheduled with fallback domains that wait for the choice among them (see {@link TaskExecution.domainChoices}). */
export function awaitedDomainChoices(state: WorkflowExecution): Array<{ taskId: string; taskName: string; choices: string[] }> {
  if (TERMINAL_WORKFLOW_STATUSES.has(state.status)) return [];
  return state.tasks.flatMap((task) =>
    task.domainChoices !== undefined && task.status === "SCHEDULED" ? [{ taskId: task.taskId, taskName: task.taskDefName, choices: task.domainChoices }] : [],
  );
}

/** The names whose registered task definitions the execution's tasks wait for (see {@link TaskExecution.awaitingTaskDef}), each once. */
export function awaitedTaskDefNames(state: WorkflowExecution): string[] {
  const names = new Set<string>();
  for (const task of state.tasks) if (task.awaitingTaskDef === true && task.status === "SCHEDULED") names.add(task.taskDefName);
  return [...names];
}

/** The refusal of `action` (a verb: "restart") on an execution whose status does not allow it. */
export function conflict(state: Pick<WorkflowExecution, "workflowId" | "status">, action: string): EngineError {
  return new EngineError("CONFLICT", `Cannot ${action} workflow ${state.workflowId}: its status is ${state.status}`);
}

function requireStatus(state: WorkflowExecution, allowed: WorkflowExecution["status"][], action: string): void {
  if (!allowed.includes(state.status)) throw conflict(state, action);
}

function applyDispatchResult(draft: Draft, event: Extract<ExecutionEvent, { type: "dispatchResult" }>, env: DecideEnv): boolean {
  const task = draft.task(event.taskId);
  // A result for an attempt that was superseded (re-dispatched, canceled, completed from outside) is stale.
  if (!task || task.attempt !== event.attempt || !isInFlight(task)) return false;
  const fields: Partial<TaskExecution> = { status: event.status, outputData: event.output, updateTime: env.now, attemptDeadline: undefined };
  if (event.reason !== undefined) fields.reasonForIncompletion = event.reason;
  limitOutput(fields, env);
  checkOutputSchema(draft.state, task, fields);
  if (event.subWorkflowId !== undefined) fields.subWorkflowId = event.subWorkflowId;
  if (event.shownInput !== undefined) fields.inputData = { ...task.inputData, ...event.shownInput };
  // Branch on the resulting status: an oversized output has already turned the result into a failure.
  if (fields.status === "IN_PROGRESS") fields.awaitingExternal = event.awaitingExternal ?? true;
  else fields.endTime = env.now;
  const afterResult = taskModule(task.taskType)?.afterResult;
  draft.updateTask(task.taskId, afterResult === undefined ? fields : withOwnReasonMasked(draft.state, task, fields, afterResult(task, fields, env)));
  return true;
}

/**
 * Turns a COMPLETED result whose output does not match the schema the task's definition enforces for it (see
 * `taskSchemaFailure`) into a terminal failure that says why: the output is kept, for whoever looks into it.
 */
function checkOutputSchema(state: WorkflowExecution, task: TaskExecution, fields: Partial<TaskExecution>): void {
  // Most executions keep no schema: nothing to look up on their completions.
  if (fields.status !== "COMPLETED" || state.definition.schemas === undefined) return;
  const failure = taskSchemaFailure(state.definition, instanceTask(state.definition, task)?.taskDefinition, "output", fields.outputData ?? {});
  if (failure === undefined) return;
  fields.status = "FAILED_WITH_TERMINAL_ERROR";
  // The schema's message may quote a value of the output ("41111111111 is greater than 1."), masked there or taken from
  // a masked one of the input: scrubbed before the cut, which could leave the start of one that no rule then knows.
  const values = [...maskedInputValues(task, state), ...maskedOutputValues(fields.outputData ?? {}, state)];
  fields.reasonForIncompletion = cutText(values.length === 0 ? failure : reasonMaskedOf(failure, values), MAX_TASK_REASON_LENGTH);
}

/**
 * `after` (what a task type's afterResult made of result `fields`) with a reason of its own scrubbed of the masked values
 * of the task's input and output: HTTP_POLL's terminationCondition reads both and its error may quote one. A reason the
 * result brought (a service's answer) is its own text, kept as it is.
 */
function withOwnReasonMasked(state: WorkflowExecution, task: TaskExecution, fields: Partial<TaskExecution>, after: Partial<TaskExecution>): Partial<TaskExecution> {
  const reason = after.reasonForIncompletion;
  if (reason === undefined || reason === fields.reasonForIncompletion) return after;
  return { ...after, reasonForIncompletion: reasonMaskedOf(reason, maskedValuesRead(task, after.outputData ?? {}, state)) };
}

/**
 * `started` with the task's failure reason scrubbed of the masked values of its input (masked-reason.ts): a script or
 * jq filter that failed on one may quote it. Only a start that failed pays for the look.
 */
function withReasonsMasked(execution: WorkflowExecution, started: TaskStart): TaskStart {
  if (started.task.reasonForIncompletion === undefined) return started;
  const masked = withReasonMasked(started.task, execution);
  // Cut once scrubbed, when the task type asks: a value split at the cut would leave a start no rule knows.
  const cut = started.reasonCut;
  const reason = masked.reasonForIncompletion;
  const task = cut === undefined || reason === undefined || reason.length <= cut ? masked : { ...masked, reasonForIncompletion: cutText(reason, cut) };
  return task === started.task ? started : { ...started, task };
}

/**
 * A task that completed as it started (INLINE, JSON_JQ_TRANSFORM…) is held to its output schema as a result reported
 * for it would be: one that does not match fails for good instead, and nothing else it asked for (variables, an ending)
 * is done.
 */
function withOutputChecked(state: WorkflowExecution, task: TaskExecution, started: TaskStart): TaskStart {
  if (started.task.status !== "COMPLETED") return started;
  const fields: Partial<TaskExecution> = { status: "COMPLETED", outputData: started.task.outputData };
  checkOutputSchema(state, task, fields);
  if (fields.status === "COMPLETED") return started;
  // What its script logged stays with it: the log says how it came to the output refused.
  return { task: { ...started.task, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: fields.reasonForIncompletion }, dispatch: false, ...(started.logs === undefined ? {} : { logs: started.logs }) };
}

/** Turns a task result whose output is too large to store into a terminal failure that says so. */
function limitOutput(fields: Partial<TaskExecution>, env: DecideEnv): void {
  const bytes = oversize(fields.outputData ?? {}, env.config.maxPayloadBytes);
  if (bytes === undefined) return;
  fields.status = "FAILED_WITH_TERMINAL_ERROR";
  fields.outputData = {};
  fields.reasonForIncompletion = oversizeReason("The task output", bytes, env.config.maxPayloadBytes);
  fields.awaitingExternal = false;
  fields.endTime = env.now;
}

function applyExternalUpdate(draft: Draft, event: Extract<ExecutionEvent, { type: "externalUpdate" }>, env: DecideEnv, effects: Effect[]): void {
  const task = taskToUpdate(draft, event.taskId);
  // The same UPDATE_TASK's update again (its dispatch repeated after an eviction): it was applied, and the task has moved on.
  if (event.byTask !== undefined && task.updatedByTask === event.byTask && !isPending(task)) return;
  if (!isPending(task)) {
    throw new EngineError("CONFLICT", `Task ${task.referenceTaskName} (${task.taskId}) is not pending: its status is ${task.status}`);
  }
  if (isLoopType(task.taskType)) {
    throw new EngineError("CONFLICT", `Task ${task.referenceTaskName} (${task.taskId}) is a ${task.taskType}: it ends with its loop, so it cannot be updated from outside; update the tasks of its loop, or terminate the workflow`);
  }
  const outputData = event.replaceOutput === true ? event.output : { ...task.outputData, ...event.output };
  const fields: Partial<TaskExecution> = { status: event.status, outputData, updateTime: env.now };
  if (event.reason !== undefined) fields.reasonForIncompletion = cutText(event.reason, MAX_TASK_REASON_LENGTH);
  if (event.byTask !== undefined) fields.updatedByTask = event.byTask;
  if (event.workerId !== undefined && event.workerId !== "") fields.workerId = event.workerId;
  // Conductor's updateTask sets the task's callbackAfterSeconds to the result's, 0 unless given: a WAIT shows the wait
  // its start set (see tasks/wait) only until it is updated from outside. A result's delay means something for a
  // worker's (SIMPLE) task only, so a WAIT's goes back to 0 whatever the result says.
  if (task.taskType === "WAIT") fields.callbackAfterSeconds = undefined;
  // Checked first: measuring the size serialises the value, which a deep one overflows.
  const deep = overdeepReason("The task output", event.output);
  if (deep !== undefined) throw new EngineError("INVALID", deep);
  const bytes = oversize(fields.outputData!, env.config.maxPayloadBytes);
  // A completion the engine cannot store is refused, not half-applied: the caller can send less. A worker cannot.
  if (bytes !== undefined && event.oversizeFailsTask !== true) throw new EngineError("INVALID", oversizeReason("The task output", bytes, env.config.maxPayloadBytes));
  if (bytes !== undefined) Object.assign(fields, { status: "FAILED_WITH_TERMINAL_ERROR", outputData: {}, reasonForIncompletion: oversizeReason("The task output", bytes, env.config.maxPayloadBytes) });
  else checkOutputSchema(draft.state, task, fields);
  if (fields.status === "IN_PROGRESS" && task.taskType === "SIMPLE" && task.awaitingExternal === true) {
    // Its domain is still being chosen among its fallbacks: it stays out of any queue (the default one would hand it to
    // a worker of no domain it names), and the choice puts it in one once callbackAfterSeconds have passed.
    if (task.domainChoices !== undefined) {
      const callbackAfterSeconds = event.callbackAfterSeconds ?? 0;
      draft.updateTask(task.taskId, { ...fields, status: "SCHEDULED", callbackAfterSeconds, timeoutAt: requeuedPollTimeoutAt(env.now, instanceTask(draft.state.definition, task), callbackAfterSeconds) });
    } else requeueForWorker(draft, task, fields, event.callbackAfterSeconds ?? 0, env, effects);
    return;
  }
  if (fields.status === "IN_PROGRESS" && task.status === "SCHEDULED") {
    // Nothing but its start runs a SCHEDULED instance (a retry waiting out its delay, or any task of a
    // paused workflow), so marking it IN_PROGRESS would leave it waiting forever. Like Conductor, which
    // re-queues a task updated to IN_PROGRESS (after callbackAfterSeconds, 0 here), it is due now instead:
    // advance() starts it at once, or on resume.
    fields.status = "SCHEDULED";
    fields.scheduledTime = Math.min(task.scheduledTime, env.now);
  } else if (fields.status !== "IN_PROGRESS") {
    fields.endTime = env.now;
    fields.attemptDeadline = undefined;
    fields.awaitingExternal = false;
    fields.pollable = undefined;
    fields.timeoutAt = undefined;
    fields.definitionTimeoutAt = undefined;
    if (task.startTime === 0) fields.startTime = env.now;
    // The task is decided without its child: nothing waits for that child any more, so it is stopped as when the task is canceled.
    if (task.taskType === "SUB_WORKFLOW" && task.subWorkflowId !== undefined) {
      const reason = `Task ${task.referenceTaskName} of parent workflow ${draft.state.workflowId} was set to ${fields.status} from outside`;
      effects.push({ kind: "terminateChild", taskId: task.taskId, subWorkflowId: task.subWorkflowId, reason });
    }
    Object.assign(fields, childNeverAnswered(task));
  }
  draft.updateTask(task.taskId, fields);
}

/**
 * Completes a waiting PULL_WORKFLOW_MESSAGES task with its batch (Conductor's PullWorkflowMessages.execute). Refused
 * (nothing changes, and the actor keeps the messages queued) when the task no longer waits or the workflow does not run.
 */
function applyMessagesPulled(draft: Draft, event: Extract<ExecutionEvent, { type: "messagesPulled" }>, env: DecideEnv): void {
  const task = taskToUpdate(draft, event.taskId);
  if (!waitsForMessages(task)) throw new EngineError("CONFLICT", `Task ${task.referenceTaskName} (${task.taskId}) does not wait for messages: its status is ${task.status}`);
  requireStatus(draft.state, ["RUNNING"], "deliver messages to");
  const fields: Partial<TaskExecution> = { status: "COMPLETED", outputData: { ...task.outputData, ...pulledOutput(event.messages) }, updateTime: env.now };
  // The actor takes no more than fit (each message fits alone: its push is refused otherwise); kept for safety.
  limitOutput(fields, env);
  checkOutputSchema(draft.state, task, fields);
  Object.assign(fields, { endTime: env.now, awaitingExternal: false, timeoutAt: undefined, definitionTimeoutAt: undefined });
  draft.updateTask(task.taskId, fields);
}

/** Task `taskId` of the execution; NOT_FOUND when it has none. */
function taskToUpdate(draft: Draft, taskId: string): TaskExecution {
  const task = draft.task(taskId);
  if (!task) throw new EngineError("NOT_FOUND", `Task ${taskId} is not part of workflow ${draft.state.workflowId}`);
  return task;
}

/** See the `humanUpdate` event: the form's fields go in as a TaskResult's output would, once the caller may fill it in. */
function applyHumanUpdate(draft: Draft, event: Extract<ExecutionEvent, { type: "humanUpdate" }>, env: DecideEnv, effects: Effect[]): void {
  const task = taskToUpdate(draft, event.taskId);
  const progress = checkMayUpdate(task, event.caller);
  if (event.complete && event.formSchema !== undefined) {
    const issues = schemaIssues(event.formSchema, { ...task.outputData, ...event.output }, "output");
    if (issues.length > 0) throw new EngineError("INVALID", `The form of human task ${task.taskId} does not match its user form's schema: ${issues.map((issue) => `${issue.path} ${issue.message}`).join("; ")}`);
  }
  applyExternalUpdate(draft, { type: "externalUpdate", taskId: task.taskId, status: event.complete ? "COMPLETED" : "IN_PROGRESS", output: event.output }, env, effects);
  draft.updateTask(task.taskId, { human: { ...progress, updatedBy: event.caller.userId } });
}

/**
 * A worker reports SIMPLE task `task` IN_PROGRESS (Conductor's update with `callbackAfterSeconds`): it goes back to its
 * queue SCHEDULED, to be polled again once `callbackAfterSeconds` have passed, as Conductor's updateTask sets a worker's
 * task reported IN_PROGRESS to SCHEDULED and postpones its queue message. Its start time, worker, poll count and output
 * stay. No worker holds it, so no `responseTimeoutSeconds` runs (Conductor's isResponseTimedOut looks at IN_PROGRESS
 * tasks only); its `pollTimeoutSeconds` does, from the end of that delay (see {@link requeuedPollTimeoutAt}), and so does its
 * task definition's `timeoutSeconds`, counted from its first poll.
 */
function requeueForWorker(draft: Draft, task: TaskExecution, fields: Partial<TaskExecution>, callbackAfterSeconds: number, env: DecideEnv, effects: Effect[]): void {
  const visibleAt = env.now + callbackAfterSeconds * 1000;
  const definition = instanceTask(draft.state.definition, task);
  const updated = draft.updateTask(task.taskId, {
    ...fields,
    status: "SCHEDULED",
    pollable: true,
    callbackAfterSeconds,
    timeoutAt: requeuedPollTimeoutAt(env.now, definition, callbackAfterSeconds),
  });
  effects.push({ kind: "queueTask", entry: workerQueueEntry(updated, draft.state, visibleAt, definition) });
}

/**
 * Hands SIMPLE task `event.taskId` to the worker whose poll took it from the queue: IN_PROGRESS, with
 * `responseTimeoutSeconds` to report and, counted from its first poll, its task definition's `timeoutSeconds`.
 * Refused (changing nothing) when the task no longer waits for a poll or the workflow is not RUNNING: the poll
 * then drops the queue entry, or (paused) leaves it for later.
 */
function applyTaskPolled(draft: Draft, event: Extract<ExecutionEvent, { type: "taskPolled" }>, env: DecideEnv): void {
  const state = draft.state;
  requireStatus(state, ["RUNNING"], "poll a task of");
  const task = draft.task(event.taskId);
  if (!task || task.pollable !== true || !isPending(task)) throw new EngineError("NOT_FOUND", `Task ${event.taskId} of workflow ${state.workflowId} is not waiting for a worker`);
  const definition = instanceTask(state.definition, task);
  const responseSeconds = responseTimeoutSeconds(definition);
  const fields: Partial<TaskExecution> = {
    status: "IN_PROGRESS",
    pollable: undefined,
    pollCount: (task.pollCount ?? 0) + 1,
    workerId: event.workerId,
    // Served: the delay a worker asked for (or the startDelay) is over, as Conductor resets it when it hands a task
    // out. A client copying the task into its result (Java's `new TaskResult(task)`) would otherwise ask for it again.
    callbackAfterSeconds: 0,
    startTime: task.startTime || env.now,
    updateTime: env.now,
    timeoutAt: responseSeconds > 0 ? env.now + responseSeconds * 1000 : undefined,
  };
  if (task.definitionTimeoutAt === undefined && definition !== undefined) fields.definitionTimeoutAt = definitionTimeoutAt({ ...task, ...fields }, definition, env);
  draft.updateTask(task.taskId, fields);
}

/**
 * A worker still working on SIMPLE task `taskId` says so without reporting (Conductor's `extendLease`, which the
 * clients' lease tracker sends for a long task): it has `responseTimeoutSeconds` from now to report. Nothing else
 * changes: not its status, output or worker, and it does not go back to its queue, where another poll would take
 * it (an IN_PROGRESS update does that). A task no worker holds (finished, timed out, queued: SCHEDULED again after an
 * IN_PROGRESS report, or pollable in an execution stored before that) is left as it is, as Conductor leaves a finished
 * one: a heartbeat may cross the result it preceded. False when nothing changed.
 */
function applyLeaseExtension(draft: Draft, taskId: string, env: DecideEnv): boolean {
  const task = taskToUpdate(draft, taskId);
  if (task.taskType !== "SIMPLE" || task.status !== "IN_PROGRESS" || task.pollable === true) return false;
  const responseSeconds = responseTimeoutSeconds(instanceTask(draft.state.definition, task));
  draft.updateTask(taskId, { updateTime: env.now, timeoutAt: responseSeconds > 0 ? env.now + responseSeconds * 1000 : undefined });
  return true;
}

function applyTick(draft: Draft, liveTaskIds: ReadonlySet<string>, env: DecideEnv, effects: Effect[]): void {
  if (applyDeadlines(draft, env, effects)) return;
  for (const task of draft.state.tasks) {
    if (!isInFlight(task)) continue;
    const module = taskModule(task.taskType);
    if (!module) continue;
    if (liveTaskIds.has(task.taskId)) {
      // Still running here: its own timeout ends it soon, so only push the watchdog out.
      if (task.attemptDeadline! <= env.now) draft.updateTask(task.taskId, { attemptDeadline: module.attemptDeadline(task, env) });
      continue;
    }
    // The isolate that dispatched this attempt is gone: the call may or may not have happened.
    // Dispatch again (at-least-once); receivers de-duplicate with the task's idempotency key.
    const redispatched = draft.updateTask(task.taskId, { attempt: task.attempt + 1, attemptDeadline: module.attemptDeadline(task, env), updateTime: env.now });
    effects.push({ kind: "dispatch", taskId: task.taskId, attempt: redispatched.attempt });
  }
}

function applyChildFinished(draft: Draft, event: Extract<ExecutionEvent, { type: "childFinished" }>, env: DecideEnv): boolean {
  const task = draft.task(event.taskId);
  // Children of superseded instances, and children whose parent stopped waiting, are ignored.
  if (!task || !isPending(task) || task.subWorkflowId !== event.subWorkflowId) return false;
  const outcome = childOutcome(event.subWorkflowId, event);
  const fields: Partial<TaskExecution> = {
    ...outcome,
    reasonForIncompletion: outcome.reasonForIncompletion,
    endTime: env.now,
    updateTime: env.now,
    attemptDeadline: undefined,
    awaitingExternal: false,
  };
  limitOutput(fields, env);
  draft.updateTask(task.taskId, fields);
  return true;
}

function applyResumeChild(draft: Draft, event: Extract<ExecutionEvent, { type: "resumeChild" }>, env: DecideEnv): void {
  const { taskId } = event;
  const state = draft.state;
  const paused = state.status === "PAUSED";
  if (!TERMINAL_WORKFLOW_STATUSES.has(state.status) && !paused) throw conflict(state, "rerun or retry a sub workflow of");
  const target = state.tasks.find((task) => task.taskId === taskId);
  if (!target || target.taskType !== "SUB_WORKFLOW" || target.subWorkflowId === undefined) {
    throw new EngineError("INVALID", `Task ${taskId} is not a SUB_WORKFLOW task with a child in workflow ${state.workflowId}`);
  }
  if (paused) {
    // A paused execution has not moved on from an ended task unless it had scheduled later ones before the pause:
    // those may be in flight, and only a finished execution drops tasks.
    if (movedPast(state, target)) throw conflict(state, `wait again for the child of task ${target.referenceTaskName}, which later tasks follow, in`);
  } else {
    // What ran beside it in its forks' other branches stays as it ended, as Conductor reopens a parent for its child (its
    // updateAndPushParents): only what followed it (its lane's later tasks, those after its forks' JOINs) goes.
    keepUpTo(draft, target, { keepOtherBranches: true });
    forgetEndedForks(draft);
    // Conductor's updateAndPushParents stamps the reopened parent's lastRetriedTime, as a retry of its own does.
    // It keeps the failed tasks it showed as it ended, as Conductor's updateAndPushParents leaves the parent's sets.
    draft.patch({ ...reopened(state, env), output: {}, lastRetriedTime: env.now, failedAtLastEnd: keptFailedTasks(state) });
    if (event.workflowInput) draft.patch({ input: event.workflowInput });
    if (event.correlationId !== undefined) draft.patch({ correlationId: event.correlationId });
    reopenLoopOf(draft, target, env);
  }
  draft.updateTask(target.taskId, {
    status: "IN_PROGRESS",
    outputData: { subWorkflowId: target.subWorkflowId },
    reasonForIncompletion: undefined,
    retried: false,
    retriedOnRequest: undefined,
    endTime: 0,
    updateTime: env.now,
    attemptDeadline: undefined,
    awaitingExternal: true,
    // Its child runs again on request: the attempts' totalTimeoutSeconds, long spent perhaps, do not end it at once.
    retryDeadline: undefined,
    // A task under its task definition's limits holds its place again at once (the child runs already): the actor
    // tells the limit object (see `retakenPlaces`).
    ...(target.place === undefined ? {} : { place: "held" as const }),
  });
  // The branches of its forks that were canceled as the workflow ended run again, as on a retry: left canceled, they
  // would fail it again at once.
  if (!paused) retryLanes(draft, laneHeads(draft.state, target.taskId), env, target.taskId);
}

/**
 * Whether paused `state` has gone on past SUB_WORKFLOW task `target`, acting on its end: a task scheduled after it in
 * its own lane (the next task, a retry of it), a DO_WHILE around it that went on from its iteration (see
 * {@link loopWentOn}), a later run of a fork it lies in, or a JOIN of a fork it lies in that waits for it (see {@link joinWaitsFor}) and is no longer waiting (the tasks after such a JOIN come after
 * it). Tasks scheduled beside it do not count: the other branches of its forks, their JOINs while they wait, and a JOIN
 * that does not wait for it with what follows that JOIN, which Conductor's JOIN lets go on while the task runs. Those
 * follow the task by `seq` without anything having acted on its end, and Conductor's updateAndPushParents reopens the
 * task whatever the parent scheduled beside it (conductor-oss/conductor core/.../execution/WorkflowExecutor.java).
 */
function movedPast(state: WorkflowExecution, target: TaskExecution): boolean {
  const definition = state.definition;
  const plan = planOf(definition);
  const lane = plan.steps[target.definitionIndex]?.lane;
  const forks = branchesOf(definition, target.definitionIndex);
  if (loopWentOn(state, target)) return true;
  // The JOINs of its forks' runs it lies in: each scheduled with its fork, so before `target` unless `target` heads its
  // branch (a task after another in its branch, or in a SWITCH's case, is scheduled after the JOIN). Any instance after
  // the fork's instance `target` ran under (a later run's too, past it anyway).
  const joinsSince = new Map(
    enclosingJoins(definition, target.definitionIndex).map((join) => {
      const fork = plan.forkOfJoin.get(join);
      return [join, state.tasks.findLast((task) => task.definitionIndex === fork && task.seq < target.seq)?.seq ?? -1];
    }),
  );
  const joinedPast = (task: TaskExecution) => {
    const since = joinsSince.get(task.definitionIndex);
    return since !== undefined && task.seq > since && !isPending(task) && joinWaitsFor(state, task, target);
  };
  return state.tasks.some(
    (task) =>
      joinedPast(task) ||
      (task.seq > target.seq &&
        (plan.steps[task.definitionIndex]?.lane === lane ||
          // A later run of a fork it lies in (a later iteration, or a workflow retry that ran the fork's lane again from a
          // permissive task before it: a dynamic fork's later run forks its tasks in lanes of their own).
          forks.has(task.definitionIndex))),
  );
}

/**
 * Whether a DO_WHILE whose loop holds task `target` (at any depth) has gone on from the iteration `target` ran in: to a
 * later iteration, or to its end, or it ran again. An iteration ends only once every task of it has (see
 * iterationRunning), a task of a fork branch no JOIN waits for included, so the loop's condition (and what followed the
 * loop) acted on `target`'s end, whatever its next iteration's first task is (one outside `target`'s lane too).
 */
function loopWentOn(state: WorkflowExecution, target: TaskExecution): boolean {
  const definition = state.definition;
  return enclosingLoops(definition, target.definitionIndex).some((loopIndex) => {
    const loop = state.tasks.findLast((task) => task.definitionIndex === loopIndex);
    return loop === undefined || loop.seq > target.seq || !isPending(loop) || loop.iteration !== iterationIn(definition, target, loopIndex);
  });
}

/**
 * Whether JOIN instance `join`, of a fork `target` lies in, waits for `target`: a task of its `joinOn` (what its fork's
 * run gave it, see joinOnOf) is `target`'s step, or one after it in the same branch of that fork (by plan order, which
 * may also take in a later task of a fork nested in the branch that does not wait for `target`: then the JOIN counts
 * as waiting, as before), or a SWITCH or DO_WHILE of that branch that holds `target` (a JOIN waits for the last task
 * of the case a SWITCH took, see joinedStep, and for a DO_WHILE's whole loop). A JOIN with a join script (Orkes')
 * waits for it so too, and only if it ended once `target` had: its script sees only its joinOn's tasks (Orkes'
 * `$.joinOn` and `$[ref]`; its input was resolved as it was scheduled, see `scriptedJoinEnding`), and may end the JOIN
 * while they still run, deciding then without `target`'s end.
 */
function joinWaitsFor(state: WorkflowExecution, join: TaskExecution, target: TaskExecution): boolean {
  const definition = state.definition;
  if (joinScript(planTask(definition, join.definitionIndex)) !== undefined && (isPending(target) || join.endTime < target.endTime)) return false;
  const plan = planOf(definition);
  const fork = plan.forkOfJoin.get(join.definitionIndex);
  if (fork === undefined) return true;
  const forkTask = state.tasks.findLast((task) => task.definitionIndex === fork && task.seq < join.seq);
  const branch = branchesOf(definition, target.definitionIndex).get(fork);
  const holdsTarget = (index: number) => {
    const step = plan.steps[index];
    const end = step?.branches?.end ?? step?.loop?.end;
    return end !== undefined && index < target.definitionIndex && target.definitionIndex < end;
  };
  return joinOnOf(definition, join.definitionIndex, forkTask).some((reference) => {
    const index = planIndexOf(definition, reference);
    return (index >= target.definitionIndex || holdsTarget(index)) && branchesOf(definition, index).get(fork) === branch;
  });
}

/**
 * Why a retry of ended `state` (FAILED, TIMED_OUT or TERMINATED) is refused though its status allows one: it has no task
 * to run again, as Conductor's WorkflowExecutor.retry refuses such a workflow; undefined when it has one. A parent's
 * `retry?resumeSubworkflowTasks=true` then retries its SUB_WORKFLOW task with a new child, as Conductor's
 * findLastFailedSubWorkflowIfAny finds no failed task in that child.
 */
export function retryRefusal(state: WorkflowExecution): EngineError | undefined {
  // Ended before any task was scheduled (terminated or timed out while it waited for its rate limit's place): reopened,
  // it would start afresh, which is a restart's work (Conductor: "Workflow has not started yet").
  if (state.tasks.length === 0) {
    return new EngineError("CONFLICT", `Cannot retry workflow ${state.workflowId}: it has not started yet (it ended before any task was scheduled); restart it to run it`);
  }
  const heads = laneHeads(state);
  // Nothing failed to try again: reopened, the workflow would run the tasks its TERMINATE meant to skip (Conductor refuses too).
  // A DO_WHILE heading its lane stands for its loop, whose last task may be that TERMINATE.
  const terminate = heads.map((head) => lastOfLoop(state, head) ?? head).find((head) => head.taskType === "TERMINATE" && head.status === "COMPLETED");
  // One a rerun kept in another branch ended an earlier run: the run that failed ran on beside it to its end and failed
  // there for a permissive task that the rerun left failed, which the retry runs again (Conductor's retry runs any
  // failed task again), where a 409 said that no task failed.
  const endedEarlier = terminate !== undefined && terminate.endTime < state.endTime && permissiveFailures(state).length > 0;
  if (terminate !== undefined && !endedEarlier) {
    return new EngineError("CONFLICT", `Cannot retry workflow ${state.workflowId}: it was ended by its TERMINATE task ${terminate.referenceTaskName}, and no task failed; restart or rerun it to run it again`);
  }
  // Failed as it completed (its output over the size limit or not matching its schema), every task having ended well:
  // reopened, it would only complete and fail so again, its failure workflow and parent told twice (Conductor's
  // WorkflowExecutor.retry: "There are no retryable tasks!", for any status but TIMED_OUT).
  const nothingToRetry = !heads.some(isUnfinished) && permissiveFailures(state).length === 0;
  if (state.status === "FAILED" && nothingToRetry) {
    return new EngineError("CONFLICT", `Cannot retry workflow ${state.workflowId}: no task failed (it failed as it completed: ${state.reasonForIncompletion ?? "no reason given"}); restart or rerun it to run it again`);
  }
  // Terminated with no task running (paused, a task having ended meanwhile, which a paused workflow does not follow):
  // reopened, it would go on to tasks it never scheduled, where Conductor's retry has no FAILED, TIMED_OUT or CANCELED
  // task to run again and refuses. So when only a DO_WHILE or JOIN was canceled (paused between iterations, or with
  // every branch ended): Conductor sets those back IN_PROGRESS without counting them. A TIMED_OUT one is reopened, as
  // Conductor's is (its own timeoutSeconds may have ended it with nothing to retry).
  if (state.status === "TERMINATED" && (nothingToRetry || (!hasRetriableTask(state) && permissiveFailures(state).length === 0))) {
    return new EngineError("CONFLICT", `Cannot retry workflow ${state.workflowId}: no task failed or was canceled (it was terminated with every task ended: ${state.reasonForIncompletion ?? "no reason given"}); restart or rerun it to run it again`);
  }
  return undefined;
}

/**
 * Whether a retry of `state` has a task to run again by Conductor's rule (WorkflowExecutor.retry's retriableMap): the
 * latest instance of some reference name is FAILED, FAILED_WITH_TERMINAL_ERROR, TIMED_OUT, or CANCELED but a JOIN or a
 * loop (which Conductor sets back IN_PROGRESS instead, not counting them).
 */
function hasRetriableTask(state: WorkflowExecution): boolean {
  const latest = new Map<string, TaskExecution>();
  for (const task of state.tasks) latest.set(task.referenceTaskName, task);
  for (const task of latest.values()) {
    if (task.status === "FAILED" || task.status === "FAILED_WITH_TERMINAL_ERROR" || task.status === "TIMED_OUT") return true;
    if (task.status === "CANCELED" && task.taskType !== "JOIN" && !isLoopType(task.taskType)) return true;
  }
  return false;
}

function applyRetry(draft: Draft, env: DecideEnv): void {
  const state = draft.state;
  requireStatus(state, [...RETRYABLE_WORKFLOW_STATUSES], "retry");
  const refused = retryRefusal(state);
  if (refused !== undefined) throw refused;
  const heads = laneHeads(state);
  // The output it ended with (outputAtEnd's) is not this run's: it is given anew as the retry ends.
  // It keeps the failed tasks it showed as it ended, as Conductor's retry leaves its failedReferenceTaskNames.
  draft.patch({ ...reopened(state, env), output: {}, lastRetriedTime: env.now, failedAtLastEnd: keptFailedTasks(state) });
  // A lane that went on past a permissive task's failure runs again from the first such task: left failed, it would
  // fail the workflow again as it ends. A lane runs one task at a time, so it goes on from it, running the tasks after
  // it again (its head among them), where Conductor's retry runs every failed task again and not those that ended well.
  // One that is its lane's head is run again as any failed head is.
  const passed = permissiveFailures(state).filter((task) => !heads.includes(task));
  if (passed.length === 0) return retryLanes(draft, heads, env);
  const steps = planOf(state.definition).steps;
  const firstByLane = new Map<number, TaskExecution>();
  for (const task of passed) {
    const lane = steps[task.definitionIndex]!.lane;
    if (!firstByLane.has(lane)) firstByLane.set(lane, task);
    draft.updateTask(task.taskId, { retried: true, retriedOnRequest: true });
  }
  // So are the heads of the branches of the forks such a lane ran after that task (a dynamic fork's forked tasks
  // included): the lane forks them again as it reaches their fork anew, and retried here too they ran twice at once.
  const afterOuterFailure = (task: TaskExecution): boolean => {
    for (const fork of branchesOf(state.definition, task.definitionIndex).keys()) {
      const first = firstByLane.get(steps[fork]!.lane);
      if (first !== undefined && fork > first.definitionIndex) return true;
    }
    return false;
  };
  const afterFailure = (head: TaskExecution): boolean => firstByLane.has(steps[head.definitionIndex]!.lane) || afterOuterFailure(head);
  const rerun = heads.filter(afterFailure);
  // The head of such a lane, run again with it when it is reached, counts as replaced too (a permissive one would
  // otherwise fail the workflow again).
  for (const head of rerun) if (!SUCCESSFUL_TASK_STATUSES.has(head.status)) draft.updateTask(head.taskId, { retried: true, retriedOnRequest: true });
  retryLanes(draft, heads.filter((head) => !rerun.includes(head)), env, undefined, rerun);
  // A permissive failure in such a branch runs again with it, once the lane around reaches its fork anew: run here too,
  // it ran twice at once.
  for (const task of firstByLane.values()) {
    if (!afterOuterFailure(task)) addInstance(draft, task.definitionIndex, env, { retryCount: task.retryCount + 1, retriedTaskId: task.taskId });
  }
}

/**
 * Runs again what the lanes whose latest instances are `heads` did not end well (see {@link retryUnfinishedLanes}),
 * but `except`'s lane and the heads `passedOver` (which the caller runs again otherwise). A loop canceled with its
 * workflow (terminated, timed out, or a task beside it failed) goes on where it stood, as Conductor's retry sets a
 * CANCELED DO_WHILE back IN_PROGRESS: the iterations it ran are not run again, its canceled tasks are. One that failed
 * (or timed out by its task definition) is retried as any task, from its first iteration.
 */
function retryLanes(draft: Draft, heads: readonly TaskExecution[], env: DecideEnv, except?: string, passedOver: readonly TaskExecution[] = []): void {
  let reopenedLoop = false;
  for (const head of heads) {
    const last = head.status === "CANCELED" ? lastOfLoop(draft.state, head) : undefined;
    if (last === undefined) continue;
    reopenLoopOf(draft, last, env);
    reopenedLoop = true;
  }
  // Looked up again, the heads include those passed over: a retry's lane run again from a permissive task before its
  // head reaches that head anew, and ran it twice at once when it was run here too.
  const passed = new Set(passedOver.map((head) => head.taskId));
  retryUnfinishedLanes(draft, reopenedLoop ? laneHeads(draft.state, except).filter((head) => !passed.has(head.taskId)) : heads, env);
}

/**
 * True when step `index`, a task of the loop of the DO_WHILE at step `loopIndex`, is one of that loop's own (its loopOver
 * and what that holds), not one a dynamic fork in it forked: those lie after the definition's own steps, out of the
 * loop's order.
 */
function ownLoopStep(plan: Plan, index: number, loopIndex: number): boolean {
  return index < plan.firstForkedStep || loopIndex >= plan.firstForkedStep;
}

/** The latest task of the loop DO_WHILE instance `loop` ran, undefined when `loop` is no DO_WHILE or ran none. */
function lastOfLoop(state: WorkflowExecution, loop: TaskExecution): TaskExecution | undefined {
  return isLoopType(loop.taskType) ? state.tasks.findLast(ranIn(state, loop)) : undefined;
}

/**
 * Whether a task instance is a run of a task of the loop DO_WHILE instance `loop` runs: one of its loop's tasks (those
 * of loops nested in it included), scheduled after it (those before it belong to an earlier instance of the DO_WHILE,
 * one a retry replaced) and, for a DO_WHILE in another loop, in the same iteration of the loops around it as it is.
 */
function ranIn(state: WorkflowExecution, loop: TaskExecution): (task: TaskExecution) => boolean {
  const definition = state.definition;
  const around = loopIterationsOf(definition, loop);
  return (task) => task.seq > loop.seq && withinLoop(definition, task.definitionIndex, loop.definitionIndex) && ranInIterations(definition, task, around);
}

/** The latest task instance of each running lane that has one, but task `except`. */
function laneHeads(state: WorkflowExecution, except?: string): TaskExecution[] {
  return activeLanes(state).flatMap((lane) => (lane.head === undefined || lane.head.taskId === except ? [] : [lane.head]));
}

/** Whether a lane's latest instance did not end well (failed, timed out, canceled): a retry runs it again. */
function isUnfinished(head: TaskExecution): boolean {
  return !SUCCESSFUL_TASK_STATUSES.has(head.status) && !isPending(head);
}

/**
 * Runs again the task of every lane whose latest instance (of `heads`) did not end well: the one that failed, and
 * those canceled with it (Conductor's retry too). A lane still running is left as it is.
 */
function retryUnfinishedLanes(draft: Draft, heads: readonly TaskExecution[], env: DecideEnv): void {
  for (const head of heads) {
    if (!isUnfinished(head)) continue;
    // A JOIN canceled with its workflow waits again where it stood, as Conductor's retry sets it back IN_PROGRESS: a
    // second instance would leave the canceled one first under its name. So does one that failed for a permissive
    // task it joins on (which runs again), as in Conductor; one whose join script failed it is scheduled again.
    if (head.taskType === "JOIN" && (head.status === "CANCELED" || (head.status === "FAILED" && joinScript(planTask(draft.state.definition, head.definitionIndex)) === undefined))) {
      draft.updateTask(head.taskId, { status: "IN_PROGRESS", reasonForIncompletion: undefined, outputData: {}, endTime: 0, updateTime: env.now });
      continue;
    }
    // Only on request: the decider retries a task in moveLane() instead.
    draft.updateTask(head.taskId, { retried: true, retriedOnRequest: true });
    addInstance(draft, head.definitionIndex, env, { retryCount: head.retryCount + 1, retriedTaskId: head.taskId });
  }
}

/**
 * Keeps the tasks scheduled up to `target` (included), which runs again: the later ones go. So do the JOINs of the
 * forks whose branch holds it, scheduled before it, which must wait for it again. A JOIN is scheduled right after its
 * fork, before its branches' tasks: those stay when it runs again, to be joined as they ended (not run again). With
 * `keepOtherBranches`, what the forks around `target` ran in their other branches stays too (outside loops).
 */
function keepUpTo(draft: Draft, target: TaskExecution, options: { keepOtherBranches?: boolean } = {}): void {
  const state = draft.state;
  const definition = state.definition;
  const plan = planOf(definition);
  // Not in a loop, whose iterations' runs of the other branches are not told apart here: there every task scheduled
  // after `target` goes, as Conductor's rerun by seq did.
  const keepOthers = options.keepOtherBranches === true && enclosingLoops(definition, target.definitionIndex).length === 0;
  const besideTarget = keepOthers ? inOtherBranchThan(state, target) : () => false;
  // In a loop, a fork runs once per iteration: only the JOINs of the runs `target` is in wait again (those scheduled
  // after their fork's run that precedes `target`), and a JOIN rerun joins its own iteration's branch tasks.
  const joinsSince = new Map(
    enclosingJoins(definition, target.definitionIndex).map((join) => {
      const fork = plan.forkOfJoin.get(join);
      return [join, fork === undefined ? -1 : (state.tasks.findLast((task) => task.definitionIndex === fork && task.seq < target.seq)?.seq ?? -1)];
    }),
  );
  // Its branch tasks run in the loops around the JOIN, and in loops of their own: those of the JOIN's iterations are its.
  const targetIterations = loopIterationsOf(definition, target);
  const joined = (task: TaskExecution) => target.taskType === "JOIN" && joinedBy(definition, target.definitionIndex, task.definitionIndex) && ranInIterations(definition, task, targetIterations);
  const waitsAgain = (task: TaskExecution) => task.seq > (joinsSince.get(task.definitionIndex) ?? Number.POSITIVE_INFINITY);
  draft.retainTasks((task) => (task.seq <= target.seq || joined(task) || besideTarget(task)) && !waitsAgain(task));
}

/**
 * Whether a task instance ran in another branch than `target` of a fork `target` lies in, in the same run of that fork:
 * beside it, not after it. For a `target` outside loops (see keepUpTo), where a fork runs more than once only when a
 * workflow retry ran a lane around it again from a permissive task before it: the branches of such a later run (a
 * dynamic fork's later run forks its tasks in lanes of their own) ran after `target`'s run, and go as what followed it.
 */
function inOtherBranchThan(state: WorkflowExecution, target: TaskExecution): (task: TaskExecution) => boolean {
  const definition = state.definition;
  const targetBranches = branchesOf(definition, target.definitionIndex);
  // The seq of the instance of each fork `target` ran under, and of that fork's next instance (none: infinity).
  const runs = new Map<number, { from: number; to: number }>();
  for (const fork of targetBranches.keys()) {
    const from = state.tasks.findLast((task) => task.definitionIndex === fork && task.seq < target.seq)?.seq ?? -1;
    const to = state.tasks.find((task) => task.definitionIndex === fork && task.seq > target.seq)?.seq ?? Number.POSITIVE_INFINITY;
    runs.set(fork, { from, to });
  }
  return (task) => {
    const branches = branchesOf(definition, task.definitionIndex);
    for (const [fork, lane] of targetBranches) {
      const taskLane = branches.get(fork);
      const run = runs.get(fork)!;
      if (taskLane !== undefined && taskLane !== lane && task.seq > run.from && task.seq < run.to) return true;
    }
    return false;
  };
}

/** The branch (lane) step `index` lies in of each fork around it: fork step → lane. */
function branchesOf(definition: WorkflowDef, index: number): Map<number, number> {
  const plan = planOf(definition);
  const branches = new Map<number, number>();
  for (let lane = plan.steps[index]?.lane; lane !== undefined && lane !== ROOT_LANE; ) {
    const fork = plan.lanes.get(lane)?.fork;
    if (fork === undefined || fork < 0) break;
    branches.set(fork, lane);
    lane = plan.steps[fork]?.lane;
  }
  return branches;
}

/**
 * Drops the latest dynamic fork runs whose fork no longer stands COMPLETED (a rerun dropped it or runs it again), so
 * that the fork's next run takes their place in the plan instead of adding steps after them. A run stands while the
 * instance that forked it, or a later one of its fork (a later iteration of its loop that forked the same), stands.
 */
function forgetEndedForks(draft: Draft): void {
  const state = draft.state;
  const runs = state.definition.dynamicForks ?? [];
  const spans = planOf(state.definition).forkRunSpans;
  const stands = (run: DynamicFork): boolean => {
    const index = planIndexOf(state.definition, run.fork);
    const forkSeq = run.forkSeq;
    if (forkSeq === undefined) return latestInstance(state, index)?.status === "COMPLETED";
    if (state.tasks.some((task) => task.definitionIndex === index && task.seq >= forkSeq && task.status === "COMPLETED")) return true;
    // A task it forked that the execution still holds keeps it, its step with it: a rerun from a task an earlier
    // instance of the fork forked drops the later instance that recorded the run (a workflow retry running the tasks
    // after a permissive task again runs the fork again, which records its run anew). Its own steps, not those its
    // tasks' reference names lead to: a fork run again after another fork's run forks the same names in a run of its
    // own, laid out after that one, and the names then lead there.
    const span = spans[runs.indexOf(run)];
    return span !== undefined && state.tasks.some((task) => task.definitionIndex >= span.first && task.definitionIndex < span.end);
  };
  const definition = withoutEndedForks(state.definition, stands);
  if (definition !== state.definition) draft.patch({ definition });
}

function applyRestart(draft: Draft, env: DecideEnv, definition: WorkflowDef | undefined): void {
  const state = draft.state;
  if (!TERMINAL_WORKFLOW_STATUSES.has(state.status)) throw conflict(state, "restart");
  refuseNonRestartable(state, definition ?? state.definition);
  // The latest definition with its tasks' registered task definitions: the one the execution stored may be smaller.
  const tooLarge = definition === undefined ? undefined : storedDefinitionOversizeReason(definition, `Cannot restart workflow ${state.workflowId} with the latest definitions`);
  if (tooLarge !== undefined) throw new EngineError("CONFLICT", tooLarge);
  // Conductor's WorkflowExecutor.restart clears the tasks but not failedReferenceTaskNames / failedTaskNames: the run
  // shows the failures it had as it ended, read before its tasks go.
  const failedAtLastEnd = keptFailedTasks(state);
  if (definition) draft.patch({ definition, workflowVersion: definition.version, input: restartInput(state, definition, env) });
  draft.retainTasks(() => false);
  // Its dynamic forks fork afresh.
  draft.patch({ definition: withoutEndedForks(draft.state.definition, () => false) });
  forgetSkips(draft, () => true);
  // The variables stay as the last run left them; its createTime is the restart's, as in Conductor's WorkflowExecutor.restart.
  // Its failedTaskId names a task that is gone: Conductor's restart clears it with the reason.
  draft.patch({ ...reopened(draft.state, env), createTime: env.now, startTime: env.now, output: {}, lastRetriedTime: undefined, failedAtLastEnd, failedTaskId: undefined });
}

/** The input of a restart with the latest `definition`: the execution's, under that definition's inputTemplate defaults. */
function restartInput(state: WorkflowExecution, definition: WorkflowDef, env: DecideEnv): JsonObject {
  const reason = workflowInputOversizeReason(definition, state.input, env.config.maxPayloadBytes);
  if (reason !== undefined) throw new EngineError("INVALID", reason);
  return withInputTemplate(definition, state.input);
}

/**
 * Conductor's `restartable: false`: a COMPLETED execution stays as it is (an unsuccessful one may still be
 * restarted). As in Conductor's WorkflowExecutor.restart, the definition asked is the one the restart would
 * run: with useLatestDefinitions the latest, whose author decides whether running it again is safe.
 */
function refuseNonRestartable(state: WorkflowExecution, definition: WorkflowDef): void {
  if (definition.restartable !== false || state.status !== "COMPLETED") return;
  throw new EngineError(
    "CONFLICT",
    `Cannot restart workflow ${state.workflowId}: it is an instance of workflow definition ${definition.name} version ${definition.version}, which is non restartable (restartable: false)`,
  );
}

function applyRerun(draft: Draft, event: Extract<ExecutionEvent, { type: "rerun" }>, env: DecideEnv): void {
  const state = draft.state;
  if (!TERMINAL_WORKFLOW_STATUSES.has(state.status)) throw conflict(state, "rerun");
  const target = event.fromTaskId === undefined ? undefined : state.tasks.find((task) => task.taskId === event.fromTaskId);
  if (event.fromTaskId !== undefined && !target) throw new EngineError("INVALID", `Task ${event.fromTaskId} is not part of workflow ${state.workflowId}`);
  if (target === undefined) draft.retainTasks(() => false);
  // What the forks around it ran in their other branches stays as it ended, as Conductor keeps a successful sibling
  // (those canceled or failed run again, below): only what followed it goes.
  else keepUpTo(draft, target, { keepOtherBranches: true });
  // The tasks from the rerun's target on run again afresh: skips asked for them before are not carried over.
  const from = target?.definitionIndex ?? 0;
  forgetSkips(draft, (skip) => planIndexOf(state.definition, skip.taskReferenceName) >= from);
  // Conductor's rerunWF empties failedReferenceTaskNames and failedTaskNames, and clears failedTaskId: they fill again as it ends.
  draft.patch({ ...reopened(state, env), output: {}, failedAtLastEnd: undefined, failedTaskId: undefined });
  if (event.workflowInput) draft.patch({ input: event.workflowInput });
  if (event.correlationId !== undefined) draft.patch({ correlationId: event.correlationId });
  // Without a task the first task is scheduled afresh by advance(), with the (new) workflow input.
  if (!target) return forgetEndedForks(draft);
  // It keeps its retryCount, as Conductor's rerunWF keeps the task it reruns (resetting its times, output and flags,
  // not its count): the retries its definition allows count from where it stood, as DeciderService.retry counts them.
  runAgain(draft, target, event.taskInput !== undefined, env, target.retryCount);
  // The other branches' tasks kept canceled (or failed) as the workflow ended run again, as on a retry: left so, they
  // would fail it again at once. So does a permissive task failed for good that heads its branch; one its branch went
  // on past stays as it failed (running it again would run again the tasks after it, which the rerun keeps), as every
  // permissive failure before the rerun's task, and fails the workflow again at its end (or at a JOIN joining it).
  retryLanes(draft, laneHeads(draft.state, target.taskId), env, target.taskId);
  giveInput(draft, target, event.taskInput, env);
}

/**
 * Makes `target` (kept by `keepUpTo`) a fresh first attempt, SCHEDULED, for a rerun from it or a jump back to it:
 * `inputGiven` when its input will be given from outside; {@link giveInput} gives it its input. `retryCount` is the
 * count it runs again with (a jump's starts afresh; a rerun keeps the task's).
 */
function runAgain(draft: Draft, target: TaskExecution, inputGiven: boolean, env: DecideEnv, retryCount = 0): void {
  const reset: Partial<TaskExecution> = {
    status: "SCHEDULED",
    outputData: {},
    reasonForIncompletion: undefined,
    retryCount,
    retried: false,
    retriedOnRequest: undefined,
    scheduledTime: env.now,
    startTime: 0,
    endTime: 0,
    updateTime: env.now,
    attemptDeadline: undefined,
    awaitingExternal: false,
    awaitingTaskDef: undefined,
    // Run again, it looks the cache up again.
    cache: undefined,
    // And asks for a place again (under a new place id: see task-places.ts); the earlier one is given back.
    place: undefined,
    pollable: undefined,
    domain: undefined,
    domainChoices: undefined,
    workerId: undefined,
    pollCount: undefined,
    callbackAfterSeconds: undefined,
    // A fresh first attempt: a retry's delay is not its own.
    startDelayInSeconds: undefined,
    timeoutAt: undefined,
    definitionTimeoutAt: undefined,
    // A rerun is a fresh first attempt, with all of its totalTimeoutSeconds.
    retryDeadline: undefined,
    subWorkflowId: undefined,
    callbackUrl: undefined,
    inputGiven: inputGiven ? true : undefined,
    inputVariables: undefined,
    // Run again, it is updated anew: an earlier UPDATE_TASK's update is not this run's.
    updatedByTask: undefined,
    // A CONDITIONAL_FORK run again chooses afresh.
    forkedBranches: undefined,
    reruns: (target.reruns ?? 0) + 1,
  };
  draft.updateTask(target.taskId, reset);
  forgetEndedForks(draft);
  reopenLoopOf(draft, target, env);
}

/** The input of `target`, made to run again: `taskInput` as given, else resolved anew from its step (or the failure of either). */
function giveInput(draft: Draft, target: TaskExecution, taskInput: JsonObject | undefined, env: DecideEnv): void {
  draft.updateTask(target.taskId, taskInput !== undefined ? givenInputFields(draft, target.definitionIndex, target.taskId, taskInput, env) : inputFields(draft, target.definitionIndex, target.taskId, env));
}

/**
 * The fields of instance `taskId` of step `index` given its input from outside (a rerun's `taskInput`, a jump's body):
 * that input as it is, except that a SUB_WORKFLOW's is its child's input, the child still the one its step names (see
 * `withChildDescription`): given alone, it would name no child to start. Conductor's rerun of a SUB_WORKFLOW task
 * drops its `taskInput`, waiting for the child it had. A failure on its input, as a resolved one's, when the child's
 * description cannot be resolved, or the two together are over MAX_PAYLOAD_BYTES (each alone may fit; stored over
 * it, the task's row could not hold its output besides).
 */
function givenInputFields(draft: Draft, index: number, taskId: string, taskInput: JsonObject, env: DecideEnv): Partial<TaskExecution> {
  const step = planTask(draft.state.definition, index);
  if (step?.type !== "SUB_WORKFLOW" || Object.hasOwn(taskInput, "subWorkflowParam")) return { inputData: taskInput };
  // Its own template describes the child (no task definition's template is needed).
  const description = resolveTaskInput(draft.state, index, childDescriptionTask(step), taskId, env);
  if (description instanceof Error) return failedOnInput(description, env);
  const inputData = withChildDescription(taskInput, description, step);
  const bytes = oversize(inputData, env.config.maxPayloadBytes);
  return bytes === undefined ? { inputData } : failedOnInput(new Error(oversizeReason("The input given with its child's description", bytes, env.config.maxPayloadBytes)), env);
}

/**
 * The execution's variables with `given` merged in, as Orkes' putAll: each given key replaces (or adds) the one of
 * that name, as data (a `__proto__` key too). Refused unless the execution is RUNNING or PAUSED, or when the result
 * would nest too deep or be over MAX_PAYLOAD_BYTES: it is stored in the workflow's own row.
 */
function updatedVariables(state: WorkflowExecution, given: JsonObject, env: DecideEnv): JsonObject {
  requireStatus(state, ["RUNNING", "PAUSED"], "update the variables of");
  // Checked first: measuring the size serialises the value, which a deep one overflows.
  const deep = overdeepReason("The workflow variables", given);
  if (deep !== undefined) throw new EngineError("INVALID", deep);
  const variables = mergedVariables(state.variables, given);
  const problem = variablesProblem("The workflow's variables object with the update", variables, env.config.maxPayloadBytes);
  if (problem !== undefined) throw new EngineError("INVALID", problem);
  return variables;
}

/**
 * After an upgrade, the tasks scheduled that have not started (waiting out a delay or a retry's backoff, or in their
 * worker queue, never polled) resolve their input again from the new version's step, unless it was given from outside
 * or the step now names another task (a queued task stays in its queue, which is its name's). A DYNAMIC keeps its choice.
 */
function refreshUnstartedInputs(draft: Draft, env: DecideEnv): void {
  for (const task of draft.state.tasks) {
    if (task.status !== "SCHEDULED" || task.startTime !== 0 || task.attempt !== 0 || task.inputGiven === true) continue;
    if (task.awaitingTaskDef === true || task.cache !== undefined || task.domainChoices !== undefined || task.place !== undefined) continue;
    const step = planTask(draft.state.definition, task.definitionIndex)!;
    // An upgrade keeps each task's type (see upgrade.ts); a DYNAMIC's chosen task may be another one's.
    if (step.type === "DYNAMIC" || step.name !== task.taskDefName) continue;
    draft.updateTask(task.taskId, inputFields(draft, task.definitionIndex, task.taskId, env));
  }
}

/** Whoever reopens an execution bounds what its children may start from then on (after the reopen was accepted). */
function replaceStartScopes(draft: Draft, startScopes: string[] | undefined): void {
  if (startScopes !== undefined) draft.patch({ startScopes });
}

/** The failed tasks ended `state` shows, kept as it reopens (see `shownFailedTasks`): undefined when none. */
function keptFailedTasks(state: WorkflowExecution): FailedTaskLists | undefined {
  const failed = shownFailedTasks(state);
  return failed.referenceTaskNames.length === 0 ? undefined : failed;
}

/** Workflow fields of an execution brought back to RUNNING by retry, restart, rerun or resuming a child. */
function reopened(state: WorkflowExecution, env: DecideEnv): Partial<WorkflowExecution> {
  // A jump that was still to reach its task is over with the run it was made in.
  // So is a pause it was terminated in: the reopened run acts on what ended during it.
  const fields: Partial<WorkflowExecution> = { status: "RUNNING", endTime: 0, updateTime: env.now, reasonForIncompletion: undefined, pendingJump: undefined, pausedAt: undefined };
  fields.deadline = workflowDeadline(state.definition, env.now);
  return fields;
}

/**
 * Moves a RUNNING execution forward as far as it can go without waiting: starts due tasks, schedules
 * the next one in each lane, retries or absorbs failures, completes JOINs, and completes or fails the workflow.
 */
function advance(draft: Draft, env: DecideEnv, effects: Effect[]): void {
  // Task instances the passes so far looked at: what a pass costs grows with them (expressions see every task).
  let visited = 0;
  // True for the pass that runs the join scripts of JOINs the previous one found waiting (see below).
  let settling = false;
  // The lanes as the previous pass's move left them, when it can tell (see keptLanes).
  let kept: PassLanes | undefined;
  // The script work done before this decision: what it does itself is counted from there (see scriptWork).
  const workBefore = scriptWork(env);
  if (draft.state.status === "RUNNING") clearIterationEndsDue(draft, env);
  // Each pass either returns or adds/changes a task; the bound only guards against a logic error looping.
  for (let guard = 0; guard < 10_000; guard++) {
    // Waiting for its rate limit's place, it schedules nothing (its timeout still applies: see applyDeadlines).
    if (draft.state.status !== "RUNNING" || draft.state.rateLimited === true) return;
    let waiting = false;
    let moved = false;
    visited += draft.state.tasks.length;
    const scriptsSpent = scriptWork(env) - workBefore >= SCRIPT_BUDGETS_PER_DECISION;
    const paced = guard >= PASSES_PER_DECISION || visited >= VISITS_PER_DECISION || scriptsSpent;
    // Lanes are looked at afresh after every move (a move can start lanes, a fork, or end the workflow), unless the move
    // only added or changed the latest task of its lane (see keptLanes).
    const pass = kept ?? passLanes(draft.state);
    kept = undefined;
    const mark = draft.mark();
    let deferredJoin = false;
    for (const at of passOrder(pass)) {
      const outcome = moveLane(draft, pass.lanes[at]!, pass.lanes, env, effects, { paced, scriptsSpent }, settling);
      if (outcome === "ended") return;
      if (outcome === "waiting") {
        waiting = true;
        quietFrom(pass, at, env.now);
      }
      if (outcome === "deferred") deferredJoin = waiting = true;
      if (outcome === "moved") {
        moved = true;
        kept = keptLanes(draft, pass, at, mark);
        break;
      }
    }
    // The lanes passed by wait, as they would have been found to.
    if (pass.quiet) waiting = true;
    settling = false;
    if (moved) continue;
    // A JOIN's join script runs once the other lanes have gone as far as they can: once per decision, on the tasks as
    // they then stand (as Orkes evaluates it each time the JOIN is checked), not after every move of a wide fork. So
    // is an EXCLUSIVE_JOIN looked at.
    if (deferredJoin) {
      settling = true;
      continue;
    }
    // The workflow is done when every lane is: the branches a JOIN did not wait for too, as in Conductor. It fails
    // then when a permissive task failed on the way (its failure let the tasks after it run).
    if (!waiting) {
      const failed = permissiveFailure(draft.state);
      if (failed === undefined) completeWorkflow(draft, env, effects);
      else failWorkflow(draft, failed, failed.reasonForIncompletion ?? `status ${failed.status}`, env, effects);
    }
    return;
  }
  throw new Error("advance did not settle");
}

/**
 * The lanes a pass of `advance` looks at: every active lane, and by position among them, those deferred, those not
 * reached yet, and those found waiting for something outside the decision (see {@link quietFrom}).
 */
interface PassLanes {
  readonly lanes: ActiveLane[];
  readonly deferred: readonly number[];
  readonly unreached: Set<number>;
  /**
   * For each position, the next one at or after it that is not known to wait (one past the lanes when none): a lane
   * whose head waits outside the decision (`waitsOutside`) keeps waiting while its head is the same, as it is for as
   * long as the lanes are kept, so a pass passes it by without looking (it would find it "waiting" again).
   */
  readonly loud: number[];
  /** Whether some lane is known to wait so (a pass that moves nothing then found a lane waiting). */
  quiet: boolean;
}

/** The lanes of a pass over `state`, found afresh. */
function passLanes(state: WorkflowExecution): PassLanes {
  const lanes = activeLanes(state);
  // Most definitions have no fork: one lane, neither deferred nor waiting to be reached (see below).
  if (lanes.length === 1) return { lanes, deferred: [], unreached: new Set(), loud: [0, 1], quiet: false };
  const positions = lanes.map((_lane, at) => at);
  // As Conductor lists them, a fork's branches (and what they fork in turn) are scheduled before the JOIN that
  // follows it: the lane of a fork whose branches are still starting moves after them (and at the latest when nothing
  // else moves, so this only ever changes the order).
  const deferred = positions.filter((at) => branchesStarting(state, lanes[at]!, lanes));
  // Conductor's fork schedules the first task of every branch, and its JOIN, in one step, before any of them runs:
  // a branch not reached yet is reached before another runs on through tasks that do not wait (an INLINE, a
  // DO_WHILE's loop, a SWITCH), so a TERMINATE there cancels the other branches' first tasks and the JOIN, listed as
  // Conductor lists them, instead of ending the workflow before they were ever scheduled.
  const unreached = new Set(positions.filter((at) => lanes[at]!.head === undefined && lanes[at]!.span.first < lanes[at]!.span.end));
  return { lanes, deferred, unreached, loud: [...positions, lanes.length], quiet: false };
}

/** No lane positions. */
const NO_POSITIONS: ReadonlySet<number> = new Set();

/**
 * The positions of the lanes in the order a pass looks at them: those not reached yet, then the others, those deferred
 * last; those known to wait outside the decision passed by (see {@link PassLanes.loud}).
 */
function passOrder(pass: PassLanes): Iterable<number> {
  // Most definitions have no fork: their one lane.
  return pass.lanes.length === 1 ? ONE_LANE : lanesInOrder(pass);
}

/** The one position of a pass over a single lane. */
const ONE_LANE: readonly number[] = [0];

/** {@link passOrder} of a pass over more than one lane. */
function* lanesInOrder(pass: PassLanes): Generator<number> {
  yield* pass.unreached;
  const deferred = pass.deferred.length === 0 ? NO_POSITIONS : new Set(pass.deferred);
  for (let at = loudFrom(pass, 0); at < pass.lanes.length; at = loudFrom(pass, at + 1)) if (!deferred.has(at) && !pass.unreached.has(at)) yield at;
  for (const at of pass.deferred) if (!pass.unreached.has(at)) yield at;
}

/** The first position at or after `from` of a lane of `pass` not known to wait (see {@link PassLanes.loud}). */
function loudFrom(pass: PassLanes, from: number): number {
  const loud = pass.loud;
  let at = from;
  while (loud[at] !== at) at = loud[at]!;
  // Each position passed on the way now points straight at the answer.
  for (let next = from; next !== at; ) [loud[next], next] = [at, loud[next]!];
  return at;
}

/**
 * Notes that the lane at `at` of `pass`, found "waiting", waits for something outside the decision, when its head does:
 * the passes that keep these lanes pass it by.
 */
function quietFrom(pass: PassLanes, at: number, now: number): void {
  const head = pass.lanes[at]!.head;
  if (head === undefined || !waitsOutside(head, now)) return;
  pass.loud[at] = at + 1;
  pass.quiet = true;
}

/**
 * The lanes of `pass` as the move of the lane at `at` just made leaves them, when that move only added or changed one
 * task, the latest of that lane (see `laneAfterMove`): the pass after it then finds them so without looking at every
 * task and lane again. A wide fork's lanes are reached, then started, one move each, and finding them afresh after each
 * made a decision forking N tasks cost N² (most of a second for a thousand). Undefined when the next pass must find
 * them afresh: anything else changed since `mark`, taken before the pass moved its lanes.
 */
function keptLanes(draft: Draft, pass: PassLanes, at: number, mark: DraftMark): PassLanes | undefined {
  if (pass.lanes.length < 2) return undefined;
  const touched = draft.touchedSince(mark);
  if (touched?.length !== 1) return undefined;
  const position = touched[0]!;
  const state = draft.state;
  const moved = laneAfterMove(state, pass.lanes[at]!, position, position >= mark.length);
  if (moved === undefined) return undefined;
  pass.lanes[at] = moved;
  pass.unreached.delete(at);
  // Its head, a task of its own step (not a fork's), neither holds a fork's lane back nor is one still starting: a lane
  // deferred for it may go now, and no other becomes deferred.
  const deferred = pass.deferred.filter((other) => other !== at && branchesStillStarting(state, pass, other));
  return { ...pass, deferred };
}

/**
 * {@link branchesStarting} of the lane at `at` of `pass`, looking first among the lanes not reached yet: a wide fork's
 * are reached one per move, and its lane, deferred until the last is, would otherwise look at every lane after each.
 */
function branchesStillStarting(state: WorkflowExecution, pass: PassLanes, at: number): boolean {
  const lane = pass.lanes[at]!;
  const head = lane.head;
  const forked = head?.status === "COMPLETED" ? planOf(state.definition).steps[head.definitionIndex]?.fork?.lanes : undefined;
  if (forked !== undefined && forked.length > 0) {
    const forkedIds = idSet(forked);
    // A lane not reached yet has no head and a task to reach: a branch still starting, when it is one of the fork's.
    for (const other of pass.unreached) if (forkedIds.has(pass.lanes[other]!.id)) return true;
  }
  return branchesStarting(state, lane, pass.lanes);
}

/**
 * True when `lane`'s head is a completed fork one of whose branches (among `lanes`) is still starting: it has not
 * scheduled its first task, or its head is a fork of its own (which has its branches, and then its JOIN, to schedule).
 */
function branchesStarting(state: WorkflowExecution, lane: ActiveLane, lanes: readonly ActiveLane[]): boolean {
  const head = lane.head;
  if (head === undefined || head.status !== "COMPLETED") return false;
  const plan = planOf(state.definition);
  const forked = plan.steps[head.definitionIndex]?.fork?.lanes;
  if (forked === undefined || forked.length === 0) return false;
  const forkedIds = idSet(forked);
  return lanes.some(
    (other) =>
      forkedIds.has(other.id) &&
      (other.head === undefined ? other.span.first < other.span.end : plan.steps[other.head.definitionIndex]?.fork !== undefined),
  );
}

/** The lane ids of a fork's plan step, as a set, made once per list: a dynamic fork's may be a thousand long. */
const idSets = new WeakMap<readonly number[], ReadonlySet<number>>();

/** `ids` as a set (see {@link idSets}). */
function idSet(ids: readonly number[]): ReadonlySet<number> {
  let set = idSets.get(ids);
  if (set === undefined) {
    set = new Set(ids);
    idSets.set(ids, set);
  }
  return set;
}

/**
 * Runs the join script of IN_PROGRESS JOIN `join` and applies what it decided: ends the JOIN ("moved"), or keeps it
 * waiting, showing the output and reason an IN_PROGRESS result gave (changed only when they differ).
 */
function settleScriptedJoin(draft: Draft, join: TaskExecution, script: string, env: DecideEnv): LaneOutcome {
  const decision = scriptedJoinEnding(draft.state, join, script, env.scripts, (reason, read) => reasonMaskedOf(reason, maskedValuesRead(join, read, draft.state)));
  if (decision.ends) {
    const { ends: _ends, ...ending } = decision;
    const fields: Partial<TaskExecution> = { ...ending, reasonForIncompletion: ending.reasonForIncompletion, endTime: env.now, updateTime: env.now };
    limitOutput(fields, env);
    draft.updateTask(join.taskId, fields);
    return "moved";
  }
  const shown = decision.shown;
  if (shown !== undefined && (shown.reasonForIncompletion !== join.reasonForIncompletion || JSON.stringify(shown.outputData) !== JSON.stringify(join.outputData))) {
    const fields: Partial<TaskExecution> = { outputData: shown.outputData, reasonForIncompletion: shown.reasonForIncompletion, updateTime: env.now };
    limitOutput(fields, env);
    draft.updateTask(join.taskId, fields);
    // An output too large to keep fails the JOIN: that is a move.
    if (fields.status !== undefined) return "moved";
  }
  return "waiting";
}

/**
 * Ends IN_PROGRESS EXCLUSIVE_JOIN `join` ("moved") once the task it joins on has ended (see `exclusiveJoinEnding`), or
 * finds it waiting.
 */
function settleExclusiveJoin(draft: Draft, join: TaskExecution, env: DecideEnv): LaneOutcome {
  const ending = exclusiveJoinEnding(draft.state, join);
  if (ending === undefined) return "waiting";
  const fields: Partial<TaskExecution> = { ...ending, endTime: env.now, updateTime: env.now };
  limitOutput(fields, env);
  draft.updateTask(join.taskId, fields);
  return "moved";
}

/**
 * Passes of one `advance` after which a DO_WHILE's next iteration, or an immediate retry, waits for a later decision:
 * a loop whose tasks never wait (INLINE, SET_VARIABLE…), or many such tasks failing and retried without delay, would
 * otherwise run on in one decision until the guard above throws, and the execution could never move again. Each
 * iteration costs a few passes per task, so an iteration begun below it still ends well within the guard.
 */
const PASSES_PER_DECISION = 1_000;

/**
 * The same, counted in task instances looked at (a pass costs more as the execution grows, a loop without keepLastN
 * growing it at every iteration): a decision deep into a long loop stays around a second of work, well within a
 * request's CPU time, instead of running hundreds of costly iterations.
 */
const VISITS_PER_DECISION = 500_000;

/**
 * Script work (in script budgets: see `ScriptRunner.spent`) after which one `advance` starts no more tasks that run a
 * script or a jq filter, and a loop's next iteration or an immediate retry waits, all for a later decision. Each run is
 * bounded (a few hundred ms at most), but not how many a decision makes: a loop of 60 INLINE tasks each near its
 * budget held the object for 8 s in one decision (in workerd), so 300 would pass the 30 s of CPU a Durable Object has
 * by default, and a dynamic fork of 1,000 take minutes, the object reset at every try and the execution never moving
 * again. Scripts that take little (most) count little, and rarely reach it.
 */
const SCRIPT_BUDGETS_PER_DECISION = 10;

/** The work the execution's script and jq runners have done so far (see `ScriptRunner.spent`). */
function scriptWork(env: DecideEnv): number {
  return (env.scripts.spent?.() ?? 0) + (env.jq.spent?.() ?? 0);
}

/**
 * How far a decision has gone (see `advance`): `paced`, a loop's next iteration or an immediate retry waits for a later
 * decision; `scriptsSpent`, so does the start of a task that runs a script or a jq filter.
 */
interface Pace {
  readonly paced: boolean;
  readonly scriptsSpent: boolean;
}

/**
 * True when `definition`'s task runs a script or a jq filter (see `taskScript`, `taskJqFilter`), or, a CONDITIONAL_FORK,
 * scripts for its branches' conditions as it starts (see `conditionScripts`).
 */
function runsScript(definition: WorkflowTaskDef): boolean {
  return taskScript(definition) !== undefined || taskJqFilter(definition) !== undefined || conditionScripts(definition).length > 0;
}

/**
 * Leaves the end of the current iteration of the DO_WHILE at step `loopIndex` (its condition) to a later decision, which
 * the loop's `iterationEndDue` wakes the execution for (see {@link nextDeadline}).
 */
function iterationEndWaits(draft: Draft, loopIndex: number, env: DecideEnv): LaneOutcome {
  const loop = latestInstance(draft.state, loopIndex);
  if (loop !== undefined && loop.iterationEndDue === undefined) draft.updateTask(loop.taskId, { iterationEndDue: env.now + PACE_MS });
  return "waiting";
}

/**
 * Clears the `iterationEndDue` of the loops whose wake-up has come (this decision ends their iteration, or sets it again):
 * one left in the past would keep waking the execution.
 */
function clearIterationEndsDue(draft: Draft, env: DecideEnv): void {
  for (const task of draft.state.tasks) {
    if (task.iterationEndDue !== undefined && task.iterationEndDue <= env.now) draft.updateTask(task.taskId, { iterationEndDue: undefined });
  }
}

/** How long an iteration or retry held back so waits: due at once, but only in a later decision (the alarm's), after this one is stored. */
const PACE_MS = 1;

/**
 * What moving a lane did: changed a task, found it waiting, found it done, or ended the workflow; or found a JOIN
 * with a join script, or an EXCLUSIVE_JOIN, which waits for the settling pass (see `advance`).
 */
type LaneOutcome = "moved" | "waiting" | "done" | "ended" | "deferred";

/**
 * Moves `lane` one step on, when it can; `pace`: what waits for a later decision (see {@link Pace}). `lanes`: every
 * active lane, as the execution stands (a pass ends at its first move).
 */
function moveLane(draft: Draft, lane: ActiveLane, lanes: readonly ActiveLane[], env: DecideEnv, effects: Effect[], pace: Pace, settling: boolean): LaneOutcome {
  const paced = pace.paced;
  const state = draft.state;
  const head = lane.head;
  if (!head) {
    if (lane.span.first >= lane.span.end) return "done";
    reachTask(draft, lane.span.first, env);
    return "moved";
  }
  // Checked first: a decision looks at every lane after each move, and most lanes of a wide fork wait.
  if (waitsOutside(head, env.now)) return "waiting";
  const definition = instanceTask(state.definition, head);
  if (!definition) {
    failWorkflow(draft, head, `task definition ${head.definitionIndex} is missing`, env, effects);
    return "ended";
  }
  switch (head.status) {
    case "SCHEDULED":
      if (pace.scriptsSpent && runsScript(definition)) {
        draft.updateTask(head.taskId, { scheduledTime: env.now + PACE_MS });
        return "moved";
      }
      startTask(draft, head, definition, env, effects);
      // A task can fail as it starts (an input no callback could satisfy): handled in the next pass, not at some later
      // event. A start always moves the task on; the check only guards against one that did not.
      return draft.task(head.taskId)?.status === "SCHEDULED" ? "waiting" : "moved";
    case "IN_PROGRESS": {
      // A DO_WHILE that just started: its loop's first task is next (once a task of its loop is scheduled, that is the lane's head).
      if (isLoopType(head.taskType)) {
        reachTask(draft, head.definitionIndex + 1, env);
        return "moved";
      }
      // Looked at once the other lanes have gone as far as they can: a task it joins on that failed is retried, absorbed
      // (optional) or fails the workflow first, so it never ends with a failure that was not the task's last word.
      if (head.taskType === "EXCLUSIVE_JOIN") return settling ? settleExclusiveJoin(draft, head, env) : "deferred";
      const script = joinScript(definition);
      if (script !== undefined) return settling ? settleScriptedJoin(draft, head, script, env) : "deferred";
      const ending = joinEnding(state, head, lanes);
      if (ending === undefined) return "waiting";
      // A permissive joined task's failure fails the JOIN once the other lanes have gone as far as they can: by then its
      // own lane has retried it, when it had retries left, and the JOIN waits for that retry instead.
      if (ending.status === "FAILED" && !settling) return "deferred";
      const fields: Partial<TaskExecution> = { ...ending, endTime: env.now, updateTime: env.now };
      limitOutput(fields, env);
      draft.updateTask(head.taskId, fields);
      return "moved";
    }
    case "COMPLETED":
    case "COMPLETED_WITH_ERRORS":
    case "SKIPPED":
      return moveOn(draft, lane, head, definition, env, effects, pace);
    case "FAILED":
    case "TIMED_OUT":
    case "FAILED_WITH_TERMINAL_ERROR":
    case "CANCELED": {
      const retryable = head.status === "FAILED" || head.status === "TIMED_OUT";
      const retry = retryPolicyOf(definition);
      if (retryable && head.retryCount < retry.count) {
        const delayMs = retryDelayMs(retry, head.retryCount, () => fractionOf(env.newId()));
        // Immediate retries of tasks that never wait would, like a loop, keep one decision going: paced the same way.
        const options = { retryCount: head.retryCount + 1, retriedTaskId: head.taskId, delayMs: paced ? Math.max(delayMs, PACE_MS) : delayMs, retryDelayMs: delayMs, retryDeadline: head.retryDeadline };
        // A retry that would start once the attempts' totalTimeoutSeconds are spent is not made: the task fails as it is.
        if (head.retryDeadline === undefined || env.now + options.delayMs < head.retryDeadline) {
          draft.updateTask(head.taskId, { retried: true });
          addInstance(draft, head.definitionIndex, env, options);
          return "moved";
        }
      }
      if (definition.optional === true) {
        // A HUMAN task keeps how it ended: its human state (and the trigger it fires) is that ending's, not COMPLETED.
        const human = head.human === undefined ? {} : { human: { ...head.human, endedAs: head.status } };
        draft.updateTask(head.taskId, { status: "COMPLETED_WITH_ERRORS", ...human });
        return "moved";
      }
      // A permissive task stays as it failed, and its lane goes on as after a task that ended well: its JOIN, or the
      // workflow at its end (see advance), fails for it. Looked at again in later passes, it is passed by again.
      if (definition.permissive === true && failsPermissively(state.definition, head)) return moveOn(draft, lane, head, definition, env, effects, pace);
      const reason = head.reasonForIncompletion ?? `status ${head.status}`;
      // In a loop whose DO_WHILE (or one around it) has retries or is optional, the DO_WHILE fails with it, and its own
      // settings say what follows. Otherwise, as in Conductor, the task fails the workflow: the DO_WHILE is canceled with
      // the other pending tasks, and a retry of the workflow goes on with the loop where it stood.
      if (loopSettlesFailure(state.definition, head) && failLoopOf(draft, head, reason, env, effects)) return "moved";
      failWorkflow(draft, head, reason, env, effects);
      return "ended";
    }
  }
}

/**
 * Moves `lane` on past its head `head`, which ended well (or failed permissively): the next task of its lane is reached,
 * its DO_WHILE's iteration ends, or the lane is done.
 */
function moveOn(draft: Draft, lane: ActiveLane, head: TaskExecution, definition: WorkflowTaskDef, env: DecideEnv, effects: Effect[], pace: Pace): LaneOutcome {
  const state = draft.state;
  const next = nextPlanIndex(state.definition, head);
  if (endsIteration(state.definition, head.definitionIndex, next)) {
    if (iterationRunning(state, next)) return "waiting";
    // Its condition is a script: past the decision's share of script work, it runs in a later one (many loops' iterations
    // may end in one decision, a fork of polling loops whose WAITs end together).
    if (pace.scriptsSpent && runsScript(planTask(state.definition, next) ?? definition)) return iterationEndWaits(draft, next, env);
    return endLoopIteration(draft, next, env, effects, pace.paced);
  }
  const leaves = leavesLane(state.definition, head.definitionIndex, next);
  // A fork's successor is its JOIN: the steps in between are its branches, which run (not passed over) unless it was skipped.
  if ((definition.type !== "FORK_JOIN" && definition.type !== "CONDITIONAL_FORK") || head.status !== "COMPLETED") forgetPassedOver(draft, head.definitionIndex, leaves ? lane.span.end : next);
  if (leaves) return "done";
  reachTask(draft, next, env);
  return "moved";
}

/**
 * The first task that failed for good permissively (see `failsPermissively`) and was not run again since, or undefined.
 * Looked for once, as the workflow ends: most instances are looked at for their status only.
 */
function permissiveFailure(state: WorkflowExecution): TaskExecution | undefined {
  // Most definitions have no permissive task: nothing to look for.
  return planOf(state.definition).hasPermissive ? state.tasks.find((task) => isPermissiveFailure(state.definition, task)) : undefined;
}

/** Every task {@link permissiveFailure} could name, in task order. */
function permissiveFailures(state: WorkflowExecution): TaskExecution[] {
  return planOf(state.definition).hasPermissive ? state.tasks.filter((task) => isPermissiveFailure(state.definition, task)) : [];
}

/**
 * True when lane head `head` waits for something outside this decision, whatever the other lanes do: a SCHEDULED task
 * whose time has not come or that waits in its worker queue for a poll (SIMPLE, started already), or a task IN_PROGRESS
 * (its call, child, callback or worker) other than a JOIN or EXCLUSIVE_JOIN (which wait for other lanes) or a DO_WHILE that
 * just started.
 */
function waitsOutside(head: TaskExecution, now: number): boolean {
  if (head.status === "SCHEDULED") return head.awaitingExternal === true || head.awaitingTaskDef === true || head.cache?.state === "looking" || head.place === "asking" || head.scheduledTime > now;
  return head.status === "IN_PROGRESS" && !JOIN_TYPES.has(head.taskType) && !isLoopType(head.taskType);
}

/** The types whose IN_PROGRESS task waits for tasks of the execution's other lanes, ended by the decider (see `moveLane`). */
const JOIN_TYPES: ReadonlySet<TaskType> = new Set<TaskType>(["JOIN", "EXCLUSIVE_JOIN"]);

/**
 * True while a task the current run of the DO_WHILE at step `loopIndex` ran is still pending: a task of a fork in the
 * loop that the fork's JOIN did not wait for. As Conductor's DO_WHILE, the iteration ends once every task it ran has.
 * One that failed and that its lane has not settled yet (retried, made COMPLETED_WITH_ERRORS, or failing the loop or
 * the workflow) holds it too: ended first, the iteration passed over that failure, the loop and workflow completing.
 * Such a task is the latest run of its name (a failure a retry of the workflow settled has a later run), and a step of
 * this loop's own, not of a loop nested in it.
 */
function iterationRunning(state: WorkflowExecution, loopIndex: number): boolean {
  const loop = latestInstance(state, loopIndex);
  if (loop === undefined || !planOf(state.definition).hasForks) return false;
  const ofLoop = ranIn(state, loop);
  const steps = planOf(state.definition).steps;
  const latest = new Map<string, TaskExecution>();
  for (const task of state.tasks) {
    if (!ofLoop(task)) continue;
    if (isPending(task)) return true;
    // A failure in a loop nested in this one is its DO_WHILE's to settle, and that DO_WHILE (this loop's own step) is
    // pending until it has: once it ended, the failed task may stay FAILED (the inner DO_WHILE optional, or run again
    // without reaching it), and waiting for it would hold this iteration for good.
    if (steps[task.definitionIndex]?.inLoop === loopIndex) latest.set(task.referenceTaskName, task);
  }
  for (const task of latest.values()) if (UNSETTLED_FAILURE_STATUSES.has(task.status) && task.retried !== true) return true;
  return false;
}

/**
 * How a loop task that its lane has not settled yet may have failed (see {@link iterationRunning}): CANCELED too, a
 * SUB_WORKFLOW whose child was terminated, which its lane settles as a failure (outside a loop it fails the workflow).
 */
const UNSETTLED_FAILURE_STATUSES: ReadonlySet<TaskStatus> = new Set<TaskStatus>(["FAILED", "TIMED_OUT", "FAILED_WITH_TERMINAL_ERROR", "CANCELED"]);

/**
 * Ends the current iteration of the DO_WHILE at step `loopIndex`, whose loop's last task just ended well: the loop goes
 * on with the next iteration's first task (`paced`: scheduled to start in a later decision), or the DO_WHILE completes
 * (or fails, its condition not evaluable), its output recording the iteration. With keepLastN, the tasks of iterations
 * no longer kept are dropped.
 */
function endLoopIteration(draft: Draft, loopIndex: number, env: DecideEnv, effects: Effect[], paced: boolean): LaneOutcome {
  const state = draft.state;
  const loop = latestInstance(state, loopIndex);
  const definition = planTask(state.definition, loopIndex);
  if (loop === undefined || definition === undefined || !isPending(loop)) {
    // Not reachable: a loop's tasks follow its DO_WHILE, which stands for them once it ended (see `lanes.ts`).
    const last = state.tasks.at(-1)!;
    failWorkflow(draft, last, `the loop at plan step ${loopIndex} is not running at the end of an iteration`, env, effects);
    return "ended";
  }
  const steps = planOf(state.definition).steps;
  // A skip applies to one iteration: one of a task this iteration did not reach (a SWITCH took another branch) goes with it.
  forgetSkips(draft, (skip) => withinLoop(state.definition, planIndexOf(state.definition, skip.taskReferenceName), loopIndex));
  const plan = planOf(state.definition);
  // As in Conductor, the loop records its own tasks: what a dynamic fork in it forked is its JOIN's output, what a
  // loop in it ran that loop's.
  const ownStep = (index: number) => ownLoopStep(plan, index, loopIndex) && steps[index]!.inLoop === loopIndex;
  const iterationOutputs: JsonObject = {};
  const latestOutputs: JsonObject = {};
  for (const task of latestRunsOfLoop(state, loop, loopIndex, ownStep)) {
    if (!ownStep(task.definitionIndex)) continue;
    const reference = steps[task.definitionIndex]!.task.taskReferenceName;
    setOwn(latestOutputs, reference, task.outputData);
    if (iterationIn(state.definition, task, loopIndex) === loop.iteration) setOwn(iterationOutputs, reference, task.outputData);
  }
  const input = resolveTaskInput(state, loopIndex, definition, loop.taskId, env);
  const outcome = input instanceof Error ? { kind: "failed" as const, output: loop.outputData, reason: `Invalid task input: ${input.message}` } : endIteration({ loop, definition, iterationOutputs, latestOutputs, input }, env);
  if (outcome.kind !== "failed" && outcome.dropBefore !== undefined) {
    const dropBefore = outcome.dropBefore;
    const ofLoop = ranIn(state, loop);
    draft.retainTasks((task) => !(ofLoop(task) && (iterationIn(state.definition, task, loopIndex) ?? 0) < dropBefore));
    // What its dynamic forks forked in the iterations dropped goes with them.
    const compacted = compactedForkRuns(draft.state);
    if (compacted !== undefined) {
      draft.patch({ definition: compacted.definition });
      for (const [taskId, definitionIndex] of compacted.moved) draft.updateTask(taskId, { definitionIndex });
    }
  }
  const fields: Partial<TaskExecution> = { outputData: outcome.output, updateTime: env.now };
  if (outcome.kind !== "again") {
    fields.status = outcome.kind === "done" ? "COMPLETED" : "FAILED_WITH_TERMINAL_ERROR";
    fields.endTime = env.now;
    // A loopCondition that failed on a masked value of the loop's input may quote it, as a script task's error may.
    // Or of the output of a task of the loop, which the condition reads too.
    if (outcome.kind === "failed") fields.reasonForIncompletion = cutText(reasonMaskedOf(outcome.reason, maskedValuesRead(loop, latestOutputs, state)), MAX_TASK_REASON_LENGTH);
  }
  // An output grown too large to store fails the DO_WHILE, as any task's would: in this iteration, not going on to the next.
  limitOutput(fields, env);
  if (outcome.kind === "again" && fields.status === undefined) fields.iteration = outcome.iteration;
  const updated = draft.updateTask(loop.taskId, fields);
  if (outcome.kind === "again" && isPending(updated)) reachTask(draft, loopIndex + 1, env, paced ? PACE_MS : 0);
  return "moved";
}

/**
 * The task instances of the loop DO_WHILE instance `loop` runs (see {@link ranIn}) that its iteration's end reads, in
 * order: those of its current iteration, and before them the latest instance of each of its own steps (`ownStep`),
 * whose outputs its condition reads. Read from the latest task back, stopping past the iteration's first task (an
 * instance of the loop's first step): walking every earlier iteration at each iteration's end made a loop of n
 * iterations read n² task instances (a 5,000-iteration loop without keepLastN spent most of each step so). The latest
 * instance of an own step not met by then (a SWITCH branch not taken in this iteration, or never) is looked up among
 * that step's instances alone: walking back to it, or to the loop's start for a branch never taken, made a loop with
 * such a SWITCH read n² task instances again.
 */
function latestRunsOfLoop(state: WorkflowExecution, loop: TaskExecution, loopIndex: number, ownStep: (index: number) => boolean): TaskExecution[] {
  const steps = planOf(state.definition).steps;
  const unseen = new Map<string, number>();
  steps.forEach((step, index) => {
    if (ownStep(index)) unseen.set(step.task.taskReferenceName, index);
  });
  const ofLoop = ranIn(state, loop);
  const runs: TaskExecution[] = [];
  // Whether the scan has passed the start of the current iteration, an instance of the loop's first step: a task of an
  // earlier iteration after it (a fork branch its JOIN did not wait for, retried meanwhile) is no sign of that.
  let pastStart = false;
  for (let position = state.tasks.length - 1; position >= 0; position--) {
    const task = state.tasks[position]!;
    if (!ofLoop(task)) continue;
    const current = iterationIn(state.definition, task, loopIndex) === loop.iteration;
    if (!current && pastStart) {
      // Those of an earlier iteration, each before every task read so far (else it would have been met).
      const earlier = [...unseen.values()].flatMap((index) => latestInstanceSince(state, index, loop.seq, ofLoop) ?? []);
      runs.push(...earlier.sort((a, b) => b.seq - a.seq));
      break;
    }
    if (current && task.definitionIndex === loopIndex + 1) pastStart = true;
    runs.push(task);
    if (ownStep(task.definitionIndex)) unseen.delete(steps[task.definitionIndex]!.task.taskReferenceName);
  }
  return runs.reverse();
}

/** True when a DO_WHILE whose loop holds `task` (at any depth) has retries or is optional: its failure is then the loop's. */
function loopSettlesFailure(definition: WorkflowDef, task: TaskExecution): boolean {
  return enclosingLoops(definition, task.definitionIndex).some((index) => {
    const loop = planTask(definition, index);
    return loop !== undefined && (loop.optional === true || retryPolicyOf(loop).count > 0);
  });
}

/**
 * Task `task` of a DO_WHILE's loop failed for good, and the DO_WHILE settles it (see {@link loopSettlesFailure}): the
 * DO_WHILE fails, then is retried, absorbed as optional or fails the workflow like any task (run again, it starts from
 * its first iteration). False when `task` is in no running loop.
 */
function failLoopOf(draft: Draft, task: TaskExecution, reason: string, env: DecideEnv, effects: Effect[]): boolean {
  const loopIndex = planOf(draft.state.definition).steps[task.definitionIndex]?.inLoop;
  const loop = loopIndex === undefined ? undefined : latestInstance(draft.state, loopIndex);
  if (loop === undefined || !isPending(loop)) return false;
  draft.updateTask(loop.taskId, {
    status: "FAILED",
    reasonForIncompletion: cutText(`Task ${task.referenceTaskName} failed: ${reason}`, MAX_TASK_REASON_LENGTH),
    endTime: env.now,
    updateTime: env.now,
  });
  // The other branches of a fork in the loop stop with it: run again, the DO_WHILE starts from its first iteration.
  cancelLoopTasks(draft, loop, `its ${loop.taskType} ${loop.referenceTaskName} failed`, env, effects);
  return true;
}

/**
 * Task `target` of a DO_WHILE's loop runs again (a rerun from it, its child waited for again): the DO_WHILE, which
 * ended, runs again from `target`'s iteration; so do the DO_WHILEs of the loops around it, from the iterations it ran in.
 */
function reopenLoopOf(draft: Draft, target: TaskExecution, env: DecideEnv): void {
  const definition = draft.state.definition;
  for (const loopIndex of enclosingLoops(definition, target.definitionIndex)) {
    const loop = latestInstance(draft.state, loopIndex);
    if (loop === undefined || loop.seq > target.seq) continue;
    const iteration = iterationIn(definition, target, loopIndex) ?? 1;
    draft.updateTask(loop.taskId, {
      status: "IN_PROGRESS",
      iteration,
      outputData: reopenedLoopOutput(loop, iteration),
      reasonForIncompletion: undefined,
      // Replaced no more, on request or otherwise (its replacement, scheduled after `target`, is gone): a retry of it by
      // the decider later must not show the `executed` of one a retry request replaced (see view.ts).
      retried: false,
      retriedOnRequest: undefined,
      endTime: 0,
      updateTime: env.now,
    });
  }
}

/**
 * The workflow reaches definition task `index`: a new instance of it, SKIPPED at once with the skip's input and
 * output when a skip waits for it (the skip is then used up), else SCHEDULED to run (`delayMs` from now).
 */
function reachTask(draft: Draft, index: number, env: DecideEnv, delayMs = 0): void {
  const reference = planTask(draft.state.definition, index)!.taskReferenceName;
  const jump = draft.state.pendingJump;
  if (jump?.taskReferenceName === reference) {
    draft.patch({ pendingJump: undefined });
    const instance = newInstance(draft.state, index, env, { delayMs });
    const task: TaskExecution = { ...instance, ...givenInputFields(draft, index, instance.taskId, jump.taskInput, env), inputGiven: true };
    limitExecution(task, draft.state.tasks, env);
    return draft.addTask(task);
  }
  const skip = draft.state.pendingSkips?.find((candidate) => candidate.taskReferenceName === reference);
  if (!skip) return addInstance(draft, index, env, { delayMs });
  forgetSkips(draft, (candidate) => candidate === skip);
  const state = draft.state;
  const task: TaskExecution = { ...newInstance(state, index, env, {}), ...skippedFields(skip, env), startTime: env.now };
  limitExecution(task, state.tasks, env);
  draft.addTask(task);
}

/** What a skip makes of a task instance: SKIPPED now, with the skip's output and (when it gives one) input. */
function skippedFields(skip: Omit<PendingSkip, "taskReferenceName">, env: DecideEnv): Partial<TaskExecution> {
  const fields: Partial<TaskExecution> = { status: "SKIPPED", outputData: skip.taskOutput ?? {}, endTime: env.now, updateTime: env.now };
  if (skip.taskInput !== undefined) {
    fields.inputData = skip.taskInput;
    // Given from outside, like a rerun's taskInput: never evaluated through the definition's template.
    fields.inputGiven = true;
  }
  return fields;
}

/**
 * Applies a skip (see the `skipTask` event). Refused, changing nothing, unless the execution is RUNNING and the
 * task is one of its definition's, pending or not reached yet. A pending SUB_WORKFLOW task is refused too: its
 * child would run on with nothing waiting for it.
 */
function applySkipTask(draft: Draft, event: Extract<ExecutionEvent, { type: "skipTask" }>, env: DecideEnv, effects: Effect[]): void {
  const state = draft.state;
  const reference = event.taskReferenceName;
  requireStatus(state, ["RUNNING"], `skip task ${reference} of`);
  const index = planIndexOf(state.definition, reference);
  if (index < 0) {
    throw new EngineError("INVALID", `Task reference name ${reference} is not a task of workflow ${state.workflowId} (${state.workflowName} version ${state.workflowVersion})`);
  }
  const { latest, unreachable } = skipTarget(state, index);
  if (latest !== undefined && isLoopType(latest.taskType) && isPending(latest)) {
    throw new EngineError("CONFLICT", `Task ${reference} of workflow ${state.workflowId} is a ${latest.taskType} whose loop is running, cannot be skipped; skip the tasks of its loop, or terminate the workflow`);
  }
  if ((latest && !isPending(latest)) || unreachable === "passed") {
    const status = latest ? ` (its status is ${latest.status})` : "";
    throw new EngineError("CONFLICT", `Task ${reference} of workflow ${state.workflowId} was already processed, cannot be skipped${status}`);
  }
  if (unreachable !== undefined) {
    const switchReference = planTask(state.definition, unreachable.untakenBy)?.taskReferenceName;
    throw new EngineError("CONFLICT", `Task ${reference} of workflow ${state.workflowId} is in a branch SWITCH ${switchReference} did not take, cannot be skipped`);
  }
  const skip: Omit<PendingSkip, "taskReferenceName"> = {};
  if (event.taskInput !== undefined) skip.taskInput = event.taskInput;
  if (event.taskOutput !== undefined) skip.taskOutput = event.taskOutput;
  if (!latest) return rememberSkip(draft, { taskReferenceName: reference, ...skip }, env);
  if (latest.taskType === "SUB_WORKFLOW") {
    const child = latest.subWorkflowId === undefined ? "its sub workflow" : `its sub workflow ${latest.subWorkflowId}`;
    throw new EngineError("CONFLICT", `Task ${reference} of workflow ${state.workflowId} waits for ${child}, which would run on detached: terminate the sub workflow instead`);
  }
  if (isInFlight(latest)) effects.push({ kind: "cancelDispatch", taskId: latest.taskId });
  // Outstanding work for the instance turns harmless: a result of its attempt or a callback finds it no longer pending.
  draft.updateTask(latest.taskId, {
    ...skippedFields(skip, env),
    startTime: latest.startTime === 0 ? env.now : latest.startTime,
    attemptDeadline: undefined,
    awaitingExternal: false,
    pollable: undefined,
    timeoutAt: undefined,
  });
}

/**
 * Applies a jump (see the `jump` event). Refused, changing nothing, unless the execution is RUNNING or PAUSED and the
 * task is one of its definition's top-level tasks other than a JOIN (which belongs to its fork: jump to the fork).
 */
function applyJump(draft: Draft, event: Extract<ExecutionEvent, { type: "jump" }>, env: DecideEnv, effects: Effect[]): void {
  const state = draft.state;
  // No task named: from the beginning, the definition's first task (a definition has at least one, and it is top-level).
  const reference = event.taskReferenceName ?? state.definition.tasks[0]!.taskReferenceName;
  requireStatus(state, ["RUNNING", "PAUSED"], `jump to task ${reference} in`);
  const index = planIndexOf(state.definition, reference);
  if (index < 0) {
    throw new EngineError("INVALID", `Task reference name ${reference} is not a task of workflow ${state.workflowId} (${state.workflowName} version ${state.workflowVersion})`);
  }
  const step = planOf(state.definition).steps[index]!;
  if (step.lane !== ROOT_LANE || step.branch !== undefined || step.inLoop !== undefined) {
    throw new EngineError("INVALID", `Task ${reference} of workflow ${state.workflowId} is inside a SWITCH, FORK_JOIN or DO_WHILE: only the workflow's top-level tasks can be jumped to`);
  }
  if (step.task.type === "JOIN") {
    const fork = planTask(state.definition, planOf(state.definition).forkOfJoin.get(index) ?? -1)?.taskReferenceName ?? "its fork";
    throw new EngineError("INVALID", `Task ${reference} of workflow ${state.workflowId} is a JOIN, which waits for its fork's branches: jump to ${fork} instead`);
  }
  const why = `workflow jumped to task ${reference}`;
  const latest = latestInstance(state, index);
  if (latest !== undefined) return jumpBack(draft, latest, event.taskInput, why, env, effects);
  jumpForward(draft, index, why, env, effects);
  if (event.taskInput !== undefined) draft.patch({ pendingJump: { taskReferenceName: reference, taskInput: event.taskInput } });
}

/**
 * A jump back to `target` (top-level, run before): the tasks scheduled after it are stopped and discarded, and it runs
 * again, as a rerun from it makes it (the branches of forks before it that still run, which a JOIN did not wait for, go on).
 */
function jumpBack(draft: Draft, target: TaskExecution, taskInput: JsonObject | undefined, why: string, env: DecideEnv, effects: Effect[]): void {
  const state = draft.state;
  for (const task of state.tasks) {
    if (task.seq >= target.seq && isPending(task)) stopPendingTask(draft, task, "CANCELED", `Canceled: ${why}`, `Parent workflow ${state.workflowId} ${why}`, env, effects);
  }
  keepUpTo(draft, target);
  forgetSkips(draft, (skip) => planIndexOf(state.definition, skip.taskReferenceName) >= target.definitionIndex);
  draft.patch({ pendingJump: undefined, updateTime: env.now });
  runAgain(draft, target, taskInput !== undefined, env);
  giveInput(draft, target, taskInput, env);
}

/**
 * A jump forward to top-level step `index`, not reached yet: in every running lane, the pending task (or the DO_WHILE
 * whose loop it runs) ends SKIPPED, and each task the lane would reach after it, up to `index` in the top-level lane and
 * to the end of a fork's branch, is to be SKIPPED when reached (a skip waits for it, unless one already does).
 */
function jumpForward(draft: Draft, index: number, why: string, env: DecideEnv, effects: Effect[]): void {
  const state = draft.state;
  const steps = planOf(state.definition).steps;
  const skips = [...(state.pendingSkips ?? [])];
  for (const lane of activeLanes(state)) {
    let from = lane.head;
    if (from !== undefined) {
      const loopIndex = enclosingLoops(state.definition, from.definitionIndex).at(-1);
      const loop = loopIndex === undefined ? undefined : latestInstance(draft.state, loopIndex);
      // A lane in a loop goes on from its (outermost) DO_WHILE, which ends with the tasks its loop runs (those of its
      // forks' branches and inner loops too, whose lanes then end: nothing is to be skipped in them).
      if (loop !== undefined) {
        for (const task of draft.state.tasks.filter(ranIn(draft.state, loop))) skipPending(draft, task, why, env, effects);
        from = draft.task(loop.taskId)!;
      }
      from = skipPending(draft, from, why, env, effects);
    }
    const until = lane.id === ROOT_LANE ? index : -1;
    let next = from === undefined ? lane.span.first : nextPlanIndex(state.definition, from);
    for (; next !== until && next < steps.length && steps[next]!.lane === lane.id; next = steps[next]!.next) {
      const reference = steps[next]!.task.taskReferenceName;
      if (!skips.some((skip) => skip.taskReferenceName === reference)) skips.push({ taskReferenceName: reference });
    }
    if (next !== until && until >= 0) throw new Error(`jump target ${until} is not ahead of the top-level lane`);
  }
  draft.patch({ pendingSkips: skips.length > 0 ? skips : undefined, updateTime: env.now });
}

/** Ends `task` SKIPPED when it is pending (stopping its request, terminating its child); the task as it stands now. */
function skipPending(draft: Draft, task: TaskExecution, why: string, env: DecideEnv, effects: Effect[]): TaskExecution {
  if (!isPending(task)) return task;
  stopPendingTask(draft, task, "SKIPPED", `Skipped: ${why}`, `Parent workflow ${draft.state.workflowId} ${why}`, env, effects);
  return draft.updateTask(task.taskId, { startTime: task.startTime === 0 ? env.now : task.startTime });
}

/**
 * The instance a skip of plan step `index` is about (its latest, pending or not), or, with none, why the step will not be
 * reached (see {@link whyUnreachable}). A task of a DO_WHILE's loop counts its instances of the current iteration only:
 * one not reached yet in it can be skipped there; once the DO_WHILE ended, the whole loop was processed.
 */
function skipTarget(state: WorkflowExecution, index: number): { latest?: TaskExecution; unreachable?: ReturnType<typeof whyUnreachable> } {
  const steps = planOf(state.definition).steps;
  const loopIndex = steps[index]?.inLoop;
  const loop = loopIndex === undefined ? undefined : latestInstance(state, loopIndex);
  if (loop === undefined) {
    const latest = latestInstance(state, index);
    return latest === undefined ? { unreachable: whyUnreachable(state, index) } : { latest };
  }
  // A loop inside another that has not started in the current iteration of the loops around it: as reachable as it is.
  if (steps[loop.definitionIndex]?.inLoop !== undefined && !inCurrentLoopRun(state, loop)) {
    const unreachable = skipTarget(state, loop.definitionIndex).unreachable;
    return unreachable === undefined ? {} : { unreachable };
  }
  if (!isPending(loop)) return { unreachable: "passed" };
  const inIteration = (task: TaskExecution) => task.seq > loop.seq && iterationIn(state.definition, task, loop.definitionIndex) === loop.iteration;
  const latest = state.tasks.findLast((task) => task.definitionIndex === index && inIteration(task));
  if (latest !== undefined) return { latest };
  const plan = planOf(state.definition);
  const head = state.tasks.findLast((task) => inIteration(task) && steps[task.definitionIndex]?.inLoop === loop.definitionIndex && ownLoopStep(plan, task.definitionIndex, loop.definitionIndex));
  if (head === undefined) return {};
  if (head.definitionIndex > index) return { unreachable: "passed" };
  const untakenBy = untakenBranchOf(state.definition, head.definitionIndex, index);
  return untakenBy === undefined ? {} : { unreachable: { untakenBy } };
}

/**
 * Why plan step `index`, which has no instance, will not be reached in this run: the workflow went past it in its lane
 * ("passed"), or it lies in a branch a SWITCH did not take (that SWITCH's step). Undefined while it still may be. A
 * step in the branch of a fork not reached yet is as reachable as that fork.
 */
function whyUnreachable(state: WorkflowExecution, index: number): "passed" | { untakenBy: number } | undefined {
  const plan = planOf(state.definition);
  const laneId = plan.steps[index]?.lane;
  const lane = activeLanes(state).find((candidate) => candidate.id === laneId);
  if (lane === undefined) {
    const fork = plan.lanes.get(laneId ?? ROOT_LANE)?.fork ?? -1;
    if (fork < 0) return undefined;
    // A fork that has an instance but runs no branch was skipped.
    return latestInstance(state, fork) !== undefined ? "passed" : whyUnreachable(state, fork);
  }
  if (state.tasks.some((task) => task.definitionIndex > index && plan.steps[task.definitionIndex]?.lane === laneId)) return "passed";
  const untakenBy = lane.head === undefined ? undefined : untakenBranchOf(state.definition, lane.head.definitionIndex, index);
  return untakenBy === undefined ? undefined : { untakenBy };
}

/**
 * Keeps a skip for a task not reached yet, replacing an earlier one for the same task. What all of them hold is
 * bounded by one payload's size: they are stored with the workflow's own fields, in one row with its input.
 */
function rememberSkip(draft: Draft, skip: PendingSkip, env: DecideEnv): void {
  const pendingSkips = [...(draft.state.pendingSkips ?? []).filter((other) => other.taskReferenceName !== skip.taskReferenceName), skip];
  const held: JsonValue = pendingSkips.map((pending) => ({ input: pending.taskInput ?? {}, output: pending.taskOutput ?? {} }));
  const bytes = oversize(held, env.config.maxPayloadBytes);
  if (bytes !== undefined) {
    throw new EngineError("INVALID", oversizeReason("The input and output of the skips waiting for their tasks", bytes, env.config.maxPayloadBytes));
  }
  draft.patch({ pendingSkips });
}

/**
 * Uses up the skips of the tasks the workflow passes over going from step `from` to step `to`: those of the branches
 * a SWITCH did not take. Like a skip used when its task is reached, it does not outlive the run it was asked in, so
 * a later run reaching that branch (a child rerun in place, say) runs the task.
 */
function forgetPassedOver(draft: Draft, from: number, to: number): void {
  if (to <= from + 1 || draft.state.pendingSkips === undefined) return;
  forgetSkips(draft, (skip) => {
    const index = planIndexOf(draft.state.definition, skip.taskReferenceName);
    return index > from && index < to;
  });
}

/** Drops the skips waiting for their tasks that `drop` picks. */
function forgetSkips(draft: Draft, drop: (skip: PendingSkip) => boolean): void {
  const pending = draft.state.pendingSkips;
  if (!pending) return;
  const kept = pending.filter((skip) => !drop(skip));
  draft.patch({ pendingSkips: kept.length > 0 ? kept : undefined });
}

/**
 * Resolves the inputParameters of a task of step `definitionIndex`, run as `runsAs` (the step's task, or what a DYNAMIC
 * chose), for storage and display (secrets masked). A task a FORK_JOIN_DYNAMIC forked gets the input its fork gave it
 * on top, as it is.
 */
function resolveTaskInput(state: WorkflowExecution, definitionIndex: number, runsAs: WorkflowTaskDef, taskId: string, env: DecideEnv): JsonObject | Error {
  const step = planOf(state.definition).steps[definitionIndex];
  if (!step) return new Error(`task definition ${definitionIndex} is missing`);
  let resolved: JsonValue;
  try {
    const context = evaluationContext(state, env.now, taskId, maskedSecrets, env.config.maxPayloadBytes);
    resolved = resolvedTaskInput(runsAs, (template) => resolveValue(template, context));
  } catch (error) {
    // The task fails with it; thrown out of the decision, it would refuse the event that led here (a start, a worker's
    // result) again at every attempt.
    if (isExpressionFailure(error)) return error;
    throw error;
  }
  const input = typeof resolved === "object" && resolved !== null && !Array.isArray(resolved) ? resolved : {};
  const joined = planOf(state.definition).forkOfJoin.get(definitionIndex);
  // The JOIN of a CONDITIONAL_FORK shows what it waits for: the branches its fork chose (Conductor's mapper gives it so).
  if (joined !== undefined && planTask(state.definition, joined)?.type === "CONDITIONAL_FORK") return { ...input, joinOn: joinOnOf(state.definition, definitionIndex, latestInstance(state, joined)) };
  if (step.forked === undefined) return input;
  const fork = planTask(state.definition, step.forked.fork);
  const forkTask = latestInstance(state, step.forked.fork);
  return fork === undefined || forkTask === undefined ? input : { ...input, ...forkedTaskInput(fork, forkTask, step.forked.position, step.task.taskReferenceName) };
}

function failedOnInput(error: Error, env: DecideEnv): Partial<TaskExecution> {
  return { status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: `Invalid task input: ${error.message}`, endTime: env.now, updateTime: env.now };
}

/** How a new task instance comes about: a retry's number, delay and deadline (see {@link TaskExecution.retryDeadline}). */
interface InstanceOptions {
  retryCount?: number;
  /** The instance the new one retries. */
  retriedTaskId?: string;
  /** How long the engine holds the new instance back before it starts (its `scheduledTime` lies that far ahead). */
  delayMs?: number;
  /**
   * A retry's delay, by its retry policy (without the pacing `delayMs` may add): a worker's (SIMPLE) task waits it out
   * in its queue instead (see {@link addInstance}).
   */
  retryDelayMs?: number;
  retryDeadline?: number | undefined;
}

/** A new SCHEDULED instance of definition task `index`, with no input yet, to follow the execution's last task. */
function newInstance(state: WorkflowExecution, index: number, env: DecideEnv, options: InstanceOptions): TaskExecution {
  const definition = planTask(state.definition, index)!;
  const run = loopRunOf(state, index);
  const instance: TaskExecution = {
    // Findable by its id alone: see task-id.ts.
    taskId: taskIdWithin(state.workflowId, env.newId()),
    taskType: definition.type,
    referenceTaskName: run === undefined ? definition.taskReferenceName : `${definition.taskReferenceName}${run.suffix}`,
    taskDefName: definition.name,
    seq: (state.tasks.at(-1)?.seq ?? 0) + 1,
    definitionIndex: index,
    status: "SCHEDULED",
    inputData: {},
    outputData: {},
    retryCount: options.retryCount ?? 0,
    retried: false,
    scheduledTime: env.now + (options.delayMs ?? 0),
    startTime: 0,
    endTime: 0,
    updateTime: env.now,
    attempt: 0,
  };
  if (run !== undefined) instance.iteration = run.iteration;
  if (options.retryDeadline !== undefined) instance.retryDeadline = options.retryDeadline;
  if (options.retriedTaskId !== undefined) instance.retriedTaskId = options.retriedTaskId;
  return instance;
}

/**
 * The iteration a new instance of step `index` belongs to, when it is a task of a DO_WHILE's loop: the DO_WHILE's current
 * one; and the suffix of its reference name, which names the iterations of the loops around that DO_WHILE too.
 */
function loopRunOf(state: WorkflowExecution, index: number): { iteration: number; suffix: string } | undefined {
  const loopIndex = planOf(state.definition).steps[index]?.inLoop;
  if (loopIndex === undefined) return undefined;
  const loop = latestInstance(state, loopIndex);
  const iteration = loop?.iteration ?? 1;
  const around = loop === undefined ? [] : loopIterationsOf(state.definition, loop);
  return { iteration, suffix: [...around, iteration].map((each) => `__${each}`).join("") };
}

/** Appends a new SCHEDULED instance of definition task `index`. */
function addInstance(draft: Draft, index: number, env: DecideEnv, options: InstanceOptions): void {
  const state = draft.state;
  const task = newInstance(state, index, env, options);
  Object.assign(task, inputFields(draft, index, task.taskId, env));
  const retryDelayMs = options.retryDelayMs ?? 0;
  // Shown as its startDelayInSeconds, whatever its type, as Conductor's retry() sets it (and its callbackAfterSeconds).
  if (retryDelayMs > 0) task.startDelayInSeconds = Math.ceil(retryDelayMs / 1000);
  if (task.taskType === "SIMPLE" && task.status === "SCHEDULED" && retryDelayMs > 0) {
    // As Conductor's DeciderService.retry() schedules a worker's task: at once, waiting out the delay in its queue as
    // its callbackAfterSeconds (the SIMPLE module queues it so), which the Task JSON shows and resetcallbacks releases.
    // Not through the alarm: no poll can take it earlier either way, and a queued delay is one the queue can end.
    task.scheduledTime = env.now;
    task.callbackAfterSeconds = retryDelayMs / 1000;
  }
  limitExecution(task, state.tasks, env);
  draft.addTask(task);
}

/**
 * The fields a new (or rerun) instance of step `index` gets from its input, resolved now: that input and, for a
 * DYNAMIC, the task it chose to run as (see `instanceTask`), its input resolved again from that task; or, when the
 * input cannot be resolved or names no task a DYNAMIC can run, a failure for good (the same input fails again).
 */
function inputFields(draft: Draft, index: number, taskId: string, env: DecideEnv): Partial<TaskExecution> {
  const step = planTask(draft.state.definition, index)!;
  if (step.type !== "DYNAMIC") {
    const runsAs = runsAsLookedUp(draft, index, { taskType: step.type, taskDefName: step.name }, env);
    // Its input follows its task definition's inputTemplate: resolved once that definition is here.
    if (runsAs === undefined) return { awaitingTaskDef: true };
    if (runsAs instanceof LookUpFailure) return runsAs.failed;
    return inputOf(draft.state, runsAs, resolveTaskInput(draft.state, index, runsAs, taskId, env), env);
  }
  const state = draft.state;
  // A child definition written in place is left out: its expressions are the child's (see `choosingTask`).
  const choosing = choosingTask(step);
  const input = resolveTaskInput(state, index, choosing, taskId, env);
  if (input instanceof Error) return inputOf(state, choosing, input, env);
  const choice = chooseDynamicTask(step, input);
  if (!choice.ok) {
    const fields = { taskType: "DYNAMIC", taskDefName: step.name, ...inputOf(state, choosing, input, env) } as const;
    // The reason may quote the name it was given ("but is the number 41111111111"), which a masked value may give.
    const values = fields.inputData === undefined ? [] : maskedInputValues({ ...fields, inputData: fields.inputData, definitionIndex: index }, state);
    // Scrubbed before it is cut: a value split at the cut would leave a start no rule knows.
    const reasonForIncompletion = cutText(values.length === 0 ? choice.reason : reasonMaskedOf(choice.reason, values), MAX_TASK_REASON_LENGTH);
    return { status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion, endTime: env.now, updateTime: env.now, ...fields };
  }
  const chosen = { taskType: choice.type, taskDefName: choice.name };
  const runsAs = runsAsLookedUp(draft, index, chosen, env);
  if (runsAs === undefined) return { ...chosen, awaitingTaskDef: true };
  if (runsAs instanceof LookUpFailure) return { ...chosen, ...runsAs.failed };
  const sameTemplate = runsAs.inputParameters === choosing.inputParameters && runsAs.taskDefinition === step.taskDefinition;
  return { ...chosen, ...inputOf(draft.state, runsAs, sameTemplate ? input : resolveTaskInput(draft.state, index, runsAs, taskId, env), env) };
}

/** What {@link runsAsLookedUp} answers when the instance fails instead: its fields. */
class LookUpFailure {
  constructor(readonly failed: Partial<TaskExecution>) {}
}

/**
 * The task an instance of step `index` (of type and name `chosen`) runs as, with the registered task definition it
 * follows when it follows one looked up at run time (see `instanceTask`): recorded in the definition from what `env`
 * knows when it was not yet, or undefined when `env` does not know it either (the actor must look it up first). The
 * failure of the instance, for good, when recording it would take the definition's stored copy over its limit.
 */
function runsAsLookedUp(draft: Draft, index: number, chosen: Pick<TaskExecution, "taskType" | "taskDefName">, env: DecideEnv): WorkflowTaskDef | undefined | LookUpFailure {
  const instance = { definitionIndex: index, ...chosen };
  const runsAs = instanceTask(draft.state.definition, instance)!;
  const name = taskDefToLookUp(draft.state.definition, index, runsAs);
  if (name === undefined) return runsAs;
  const known = env.taskDefs(name);
  if (known === undefined) return undefined;
  const bytes = definitionBytesWith(draft.state.definition, name, known);
  if (bytes > MAX_STORED_DEFINITION_BYTES) {
    return new LookUpFailure({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: overStoredDefinitionReason(name, bytes), endTime: env.now, updateTime: env.now });
  }
  const definition = withLookedUpTaskDefs(draft.state.definition, new Map([[name, known]]));
  rememberDefinitionBytes(definition, bytes);
  draft.patch({ definition });
  return instanceTask(draft.state.definition, instance)!;
}

/** {@link resolvedInputFields} of a resolved input, or the failure of one that could not be resolved or stored. */
function inputOf(state: WorkflowExecution, runsAs: WorkflowTaskDef, input: JsonObject | Error, env: DecideEnv): Partial<TaskExecution> {
  const fields = input instanceof Error ? input : resolvedInputFields(state, runsAs, input, env);
  return fields instanceof Error ? failedOnInput(fields, env) : fields;
}

/**
 * The fields of a task instance whose input was just resolved as `inputData`: that input and, when the actor will
 * resolve it again with the real secrets, the variables it saw (see {@link TaskExecution.inputVariables}). An error
 * when the two are over MAX_PAYLOAD_BYTES together: they share the task's row with its output, and a row holds 2 MB.
 */
function resolvedInputFields(state: WorkflowExecution, runsAs: WorkflowTaskDef, inputData: JsonObject, env: DecideEnv): Pick<TaskExecution, "inputData" | "inputVariables"> | Error {
  const inputVariables = Object.keys(state.variables).length > 0 && referencedSecrets(taskInputTemplate(runsAs)).length > 0 ? state.variables : undefined;
  const limit = env.config.maxPayloadBytes;
  const bytes = oversize(inputVariables === undefined ? inputData : { inputData, inputVariables }, limit);
  if (bytes !== undefined) return new Error(oversizeReason(inputVariables === undefined ? "The resolved input" : "The resolved input with the workflow variables it was resolved with", bytes, limit));
  return { inputData, inputVariables };
}

/** Fails a new task instance for good, with no input, when storing it would take the execution over its size limit. */
function limitExecution(task: TaskExecution, tasks: readonly TaskExecution[], env: DecideEnv): void {
  const bytes = storedTasksBytes(tasks) + storedTaskBytes(task);
  if (bytes <= env.config.maxExecutionBytes) return;
  Object.assign(task, {
    status: "FAILED_WITH_TERMINAL_ERROR",
    inputData: {},
    outputData: {},
    reasonForIncompletion: overExecutionLimitReason(bytes, env.config.maxExecutionBytes),
    endTime: env.now,
    updateTime: env.now,
  } satisfies Partial<TaskExecution>);
}

/**
 * The locations of `task`'s input that its input schema does not check: the values its template wrote a secret into,
 * which the stored input holds as `***`. Checking the stand-in would fail a token that matches its schema's `pattern`,
 * and checking the value sent would tell whoever reads the execution (or may change the schema) something about the
 * secret, as a secret compared in an expression would. A rerun's literal `taskInput` is data: all of it is checked.
 */
function secretWrittenPasses(task: TaskExecution, definition: WorkflowTaskDef): ((keys: readonly string[]) => boolean) | undefined {
  if (task.inputGiven === true) return undefined;
  const template = taskInputTemplate(definition);
  return (keys) => writtenFromSecret(template, keys);
}

function startTask(draft: Draft, task: TaskExecution, definition: WorkflowTaskDef, env: DecideEnv, effects: Effect[]): void {
  const module = taskModule(task.taskType);
  if (!module) {
    draft.updateTask(task.taskId, {
      status: "FAILED_WITH_TERMINAL_ERROR",
      reasonForIncompletion: `Task type ${task.taskType} is not supported by this version of the service`,
      startTime: env.now,
      endTime: env.now,
      updateTime: env.now,
    });
    return;
  }
  const inputFailure = draft.state.definition.schemas === undefined ? undefined : taskSchemaFailure(draft.state.definition, definition.taskDefinition, "input", task.inputData, secretWrittenPasses(task, definition));
  if (inputFailure !== undefined) {
    // The schema's message may quote a value of the input ("987654321 is greater than 100."): scrubbed before the cut,
    // which could leave the start of a masked value that no rule then knows.
    const reasonForIncompletion = cutText(reasonMaskedOf(inputFailure, maskedInputValues(task, draft.state)), MAX_TASK_REASON_LENGTH);
    draft.updateTask(task.taskId, { status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion, startTime: env.now, endTime: env.now, updateTime: env.now });
    return;
  }
  // Its output may be cached: the actor looks first (a test run's tasks neither read nor fill the cache).
  if (definition.cacheConfig !== undefined && task.cache === undefined && draft.state.test === undefined) {
    const key = taskCacheKey(draft.state, task, definition.cacheConfig, env.now);
    if (key !== undefined) {
      draft.updateTask(task.taskId, { cache: { key, state: "looking" } });
      return;
    }
  }
  // Limited by its task definition (an HTTP, HTTP_POLL or SUB_WORKFLOW task): it waits for a place under its name's limits before it runs (a
  // test run's tasks run as mocked, outside any limit).
  if (task.place === undefined && draft.state.test === undefined && taskPlaceLimits(task.taskType, definition) !== undefined) {
    draft.updateTask(task.taskId, { place: "asking" });
    return;
  }
  const started = withReasonsMasked(draft.state, withOutputChecked(draft.state, task, module.start(task, definition, draft.state, env)));
  // A task that has not really started (waiting for a worker's poll) is timed from when it does.
  const timeoutAt = started.task.startTime === 0 ? undefined : definitionTimeoutAt(started.task, definition, env);
  // Also for an attempt that failed as it started (a script that throws): its retries carry the deadline on.
  const retryDeadline = isPending(started.task) || started.task.status === "FAILED" || started.task.status === "TIMED_OUT" ? retryDeadlineOf(task, definition) : undefined;
  const updated = draft.updateTask(task.taskId, {
    ...started.task,
    ...(timeoutAt === undefined ? {} : { definitionTimeoutAt: timeoutAt }),
    ...(retryDeadline === undefined ? {} : { retryDeadline }),
  });
  if (started.dispatch) effects.push({ kind: "dispatch", taskId: task.taskId, attempt: started.task.attempt });
  if (started.queue !== undefined) effects.push({ kind: "queueTask", entry: workerQueueEntry(updated, draft.state, started.queue, definition) });
  if (started.logs !== undefined && started.logs.length > 0) effects.push({ kind: "taskLog", taskId: task.taskId, lines: started.logs, createdTime: env.now });
  // Not the workflow's updateTime: the task's own shows the change, and moving it would rewrite the search row on the task-to-task path.
  if (started.variables !== undefined) draft.patch({ variables: started.variables });
  if (started.correlationId !== undefined) draft.patch({ correlationId: started.correlationId });
  if (started.ending !== undefined) endAsAsked(draft, updated, started.ending, env, effects);
  // A dynamic fork's tasks become steps of the plan (see `plan.ts`): the next pass finds their lanes running.
  if (started.definition !== undefined) draft.patch({ definition: started.definition });
}

/**
 * Ends the workflow as task `task` asked (TERMINATE), through the same endings as any other, so that what follows one
 * (a waiting parent told, pending work canceled, a failure workflow for FAILED) follows this one too.
 */
function endAsAsked(draft: Draft, task: TaskExecution, asked: WorkflowEnding, env: DecideEnv, effects: Effect[]): void {
  // Its terminationReason may have been written from a masked value ("card ${workflow.input.card} declined"), which its
  // input shows as ***: scrubbed before it is cut, as a task's reason is.
  const ending = { ...asked, reason: cutText(reasonMaskedOf(asked.reason, maskedInputValues(task, draft.state)), MAX_TASK_REASON_LENGTH) };
  if (ending.status === "COMPLETED") {
    // Tasks still running in other branches of a fork are canceled, as Conductor's TERMINATE does.
    cancelPending(draft, `Workflow completed by TERMINATE task ${task.referenceTaskName}`, `Parent workflow ${draft.state.workflowId} was completed by its TERMINATE task ${task.referenceTaskName}`, env, effects);
    completeWorkflow(draft, env, effects, ending.output);
    // Conductor keeps the reason on a workflow its TERMINATE completed too ("Workflow is COMPLETED by TERMINATE task:
    // <id>", or terminationReason): what tells such an ending from running to the end.
    if (draft.state.status === "COMPLETED") draft.patch({ reasonForIncompletion: ending.reason });
    return;
  }
  endWorkflow(draft, ending.status, ending.reason, env, effects, ending.status === "FAILED" ? { failedTask: task, output: ending.output } : { output: ending.output });
}

/** When a task that has just started times out by its task definition; undefined when it never does. */
function definitionTimeoutAt(task: TaskExecution, definition: WorkflowTaskDef, env: DecideEnv): number | undefined {
  const taskDef = definition.taskDefinition;
  if (taskDef === undefined || taskDef.timeoutSeconds <= 0 || taskDef.timeoutPolicy === "ALERT_ONLY" || !isPending(task)) return undefined;
  return (task.startTime || env.now) + taskDef.timeoutSeconds * 1000;
}

/**
 * Times out a task whose attempts together took its task definition's `totalTimeoutSeconds`: TIMED_OUT, its request or
 * child stopped, and not retried (it is past its retry deadline), so its retry settings and `optional` decide no
 * further than whether the workflow fails.
 */
function timeOutInTotal(draft: Draft, task: TaskExecution, env: DecideEnv, effects: Effect[]): void {
  const taskDef = instanceTask(draft.state.definition, task)?.taskDefinition;
  const total = taskDef?.totalTimeoutSeconds ?? 0;
  // Conductor's reason, as its "Debugging workflows" guide lists it; the elapsed time counted from the first attempt.
  const elapsed = Math.max(0, Math.floor((env.now - (task.retryDeadline ?? env.now) + total * 1000) / 1000));
  const reason = `Task ${task.taskDefName}/${task.taskId} exceeded total timeout of ${total} seconds (elapsed ${elapsed} seconds across all attempts including retry delays). Timeout policy: ${taskDef?.timeoutPolicy ?? "TIME_OUT_WF"}`;
  timeOutTask(draft, task, reason, env, effects);
}

/**
 * Ends pending `task` TIMED_OUT for `reason`, its request or child stopped. A DO_WHILE's loop ends with it: the lane
 * goes on from the DO_WHILE (retried, passed over, or failing the workflow), and the task of the loop still running
 * would be left waiting for nothing.
 */
function timeOutTask(draft: Draft, task: TaskExecution, reason: string, env: DecideEnv, effects: Effect[]): void {
  stopPendingTask(draft, task, "TIMED_OUT", reason, `Task ${task.referenceTaskName} of parent workflow ${draft.state.workflowId} timed out`, env, effects);
  if (isLoopType(task.taskType)) cancelLoopTasks(draft, task, `its ${task.taskType} ${task.referenceTaskName} timed out`, env, effects);
}

/** When a task that starts now must have ended, its retries included, by its task definition's `totalTimeoutSeconds`. */
function retryDeadlineOf(task: TaskExecution, definition: WorkflowTaskDef): number | undefined {
  if (task.retryDeadline !== undefined) return task.retryDeadline;
  const seconds = definition.taskDefinition?.totalTimeoutSeconds ?? 0;
  // Counted from the first attempt's scheduling: a retry carries its deadline, so only a first attempt gets here.
  return seconds > 0 ? task.scheduledTime + seconds * 1000 : undefined;
}

/**
 * Times out a task by its task definition's `timeoutSeconds`: TIMED_OUT, its request or child stopped. With
 * the RETRY policy the retry settings then decide, as for a failure; with TIME_OUT_WF the workflow times out
 * too (Conductor's default). True when the workflow ended.
 */
function timeOutByDefinition(draft: Draft, task: TaskExecution, env: DecideEnv, effects: Effect[]): boolean {
  const taskDef = instanceTask(draft.state.definition, task)?.taskDefinition;
  const seconds = taskDef?.timeoutSeconds ?? 0;
  const policy = taskDef?.timeoutPolicy ?? "TIME_OUT_WF";
  // Conductor's reason (DeciderService.checkTaskTimeout), which its "Debugging workflows" guide lists.
  const elapsed = Math.max(0, Math.floor((env.now - (task.startTime || env.now)) / 1000));
  const reason = `Task timed out after ${elapsed} seconds. Timeout configured as ${seconds} seconds. Timeout policy configured to ${policy}`;
  timeOutTask(draft, task, reason, env, effects);
  if (policy !== "TIME_OUT_WF") return false;
  endWorkflow(draft, "TIMED_OUT", `Task ${task.referenceTaskName} timed out: ${reason}`, env, effects, { failedTask: task });
  return true;
}

/**
 * The output a workflow ends with when it does not complete (failed, timed out, terminated), as Conductor's
 * terminateWorkflow gives it, calling `updateWorkflowOutput(workflow, null)` before it cancels anything (so overwriting
 * the failed task's output its DeciderService.retry() had set): its definition's `outputParameters`, resolved against
 * what ran, or else the output of its last task, the one scheduled last (as it stands, not yet canceled), whichever task
 * ended it. In a fork that is often the JOIN (scheduled with the fork, before the branches' later tasks), not the branch
 * task that failed. Empty when that is over MAX_PAYLOAD_BYTES or does not resolve: the workflow ends all the same.
 */
function outputAtEnd(state: WorkflowExecution, env: DecideEnv): JsonObject {
  let output: JsonObject;
  const outputParameters = state.definition.outputParameters;
  if (outputParameters && Object.keys(outputParameters).length > 0) {
    try {
      const resolved = resolveValue(outputParameters, evaluationContext(state, env.now, undefined, maskedSecrets, env.config.maxPayloadBytes));
      output = typeof resolved === "object" && resolved !== null && !Array.isArray(resolved) ? resolved : {};
    } catch {
      output = {};
    }
  } else {
    output = lastScheduledOutput(state);
  }
  return oversize(output, env.config.maxPayloadBytes) === undefined ? output : {};
}

/**
 * The output of the execution's last task, the one scheduled last (the highest `seq`), whatever its lane or loop: a
 * workflow without `outputParameters` ends with it, as Conductor's updateWorkflowOutput(workflow, null) gives it.
 */
function lastScheduledOutput(state: WorkflowExecution): JsonObject {
  return state.tasks.at(-1)?.outputData ?? {};
}

/** The definition's `outputParameters` resolved against what ran, or the expression failure that stops them (see {@link isExpressionFailure}). */
function resolvedOutput(state: WorkflowExecution, outputParameters: JsonObject, env: DecideEnv): JsonObject | Error {
  let resolved: JsonValue;
  try {
    resolved = resolveValue(outputParameters, evaluationContext(state, env.now, undefined, maskedSecrets, env.config.maxPayloadBytes));
  } catch (error) {
    if (isExpressionFailure(error)) return error;
    throw error;
  }
  return typeof resolved === "object" && resolved !== null && !Array.isArray(resolved) ? resolved : {};
}

/**
 * Completes the workflow with `given` as its output, or else the one its definition's `outputParameters` give, or
 * else its last task's: the one scheduled last, as Conductor's completeWorkflow takes it (updateWorkflowOutput(workflow,
 * null) reads the last of the tasks in `seq` order). After a trailing FORK_JOIN that is the JOIN only when no branch
 * scheduled a task after it (each branch one task long); otherwise the branch task scheduled last. After a trailing
 * DO_WHILE it is the last task of its last iteration, not the DO_WHILE.
 */
function completeWorkflow(draft: Draft, env: DecideEnv, effects: Effect[], given?: JsonObject): void {
  const state = draft.state;
  let output: JsonObject;
  const outputParameters = state.definition.outputParameters;
  if (given !== undefined) {
    output = given;
  } else if (outputParameters && Object.keys(outputParameters).length > 0) {
    const resolved = resolvedOutput(state, outputParameters, env);
    if (resolved instanceof Error) {
      // outputAtEnd would resolve the same outputParameters again (up to MAX_QUERY_VALUES of work) to the same {}.
      endWorkflow(draft, "FAILED", `The workflow output could not be resolved: ${resolved.message}`, env, effects, { output: {} });
      return;
    }
    output = resolved;
  } else {
    output = lastScheduledOutput(state);
  }
  const bytes = oversize(output, env.config.maxPayloadBytes);
  if (bytes !== undefined) {
    endWorkflow(draft, "FAILED", oversizeReason("The workflow output", bytes, env.config.maxPayloadBytes), env, effects);
    return;
  }
  // Most executions keep no schema: nothing to look up as they complete.
  const schemaFailure = state.definition.schemas === undefined ? undefined : workflowOutputSchemaFailure(state.definition, output);
  if (schemaFailure !== undefined) {
    // The output is kept, for whoever looks into the failure. The reason may quote a masked value of it ("output.card:
    // 4111111111 is greater than 1."), which the output shows as ***.
    endWorkflow(draft, "FAILED", reasonMaskedOf(schemaFailure, maskedOutputValues(output, state)), env, effects, { output });
    return;
  }
  draft.patch({ status: "COMPLETED", output, endTime: env.now, updateTime: env.now });
}

/**
 * Ends the workflow as the task that ended it did, as Conductor's `retry()` does once no retry is left: TIMED_OUT when
 * the task timed out, FAILED otherwise. Conductor ends it TERMINATED after a canceled task (a terminated child); here it
 * fails, so that the parent's SUB_WORKFLOW task fails as the spec's section 7 shows a child's failure, and the parent
 * follows the child's own retry (a TERMINATED execution follows none).
 */
function failWorkflow(draft: Draft, task: TaskExecution, reason: string, env: DecideEnv, effects: Effect[]): void {
  const timedOut = task.status === "TIMED_OUT";
  endWorkflow(draft, timedOut ? "TIMED_OUT" : "FAILED", `Task ${task.referenceTaskName} ${timedOut ? "timed out" : "failed"}: ${reason}`, env, effects, { failedTask: task });
}

/**
 * What a SUB_WORKFLOW task ending while its child's start is still on its way (in flight: chosen, not answered) drops:
 * the id chosen for that child, which the task must not show, as the view does not while the start is on its way
 * (see childStartOnItsWay in view.ts). The child may never start (the dispatch is canceled, or its start is refused
 * once the termination reached it first), so a client following the id found a 404 for good; Conductor sets a task's
 * subWorkflowId only once the start returned. The termination effect sent with the end carries the id, so a child
 * that did start is still terminated.
 */
function childNeverAnswered(task: TaskExecution): Partial<TaskExecution> {
  return task.taskType === "SUB_WORKFLOW" && isInFlight(task) ? { subWorkflowId: undefined } : {};
}

/**
 * Ends a pending task in `status` from the engine's side: its request in flight is abandoned, its child (told
 * `childReason`) terminated, and nothing of it stays timed.
 */
function stopPendingTask(draft: Draft, task: TaskExecution, status: TaskStatus, reason: string, childReason: string, env: DecideEnv, effects: Effect[]): void {
  if (isInFlight(task)) effects.push({ kind: "cancelDispatch", taskId: task.taskId });
  if (task.taskType === "SUB_WORKFLOW" && task.subWorkflowId !== undefined) {
    effects.push({ kind: "terminateChild", taskId: task.taskId, subWorkflowId: task.subWorkflowId, reason: childReason });
  }
  draft.updateTask(task.taskId, {
    ...childNeverAnswered(task),
    status,
    reasonForIncompletion: reason,
    endTime: env.now,
    updateTime: env.now,
    attemptDeadline: undefined,
    awaitingExternal: false,
    pollable: undefined,
    timeoutAt: undefined,
    definitionTimeoutAt: undefined,
  });
}

/** Cancels the tasks still pending of the loop DO_WHILE instance `loop` runs, which ended before they did (`why`). */
function cancelLoopTasks(draft: Draft, loop: TaskExecution, why: string, env: DecideEnv, effects: Effect[]): void {
  const ofLoop = ranIn(draft.state, loop);
  for (const task of draft.state.tasks) {
    if (!ofLoop(task) || !isPending(task)) continue;
    stopPendingTask(draft, task, "CANCELED", `Canceled: ${why}`, `Task ${task.referenceTaskName} of parent workflow ${draft.state.workflowId} was canceled: ${why}`, env, effects);
  }
}

/** Cancels every task still pending, as its workflow ends: `reason` unless it has one already; its child is told `childReason`. */
function cancelPending(draft: Draft, reason: string, childReason: string, env: DecideEnv, effects: Effect[]): void {
  for (const task of draft.state.tasks) {
    if (isPending(task)) stopPendingTask(draft, task, "CANCELED", task.reasonForIncompletion ?? reason, childReason, env, effects);
  }
}

/** How an execution came to end, for its output, its `failedTaskId` and its failure workflow. */
interface Ending {
  /** The task whose failure or timeout ended it. */
  failedTask?: TaskExecution;
  /** A termination that starts the failure workflow all the same. */
  triggerFailureWorkflow?: boolean;
  /** The output it ends with (a TERMINATE task's); otherwise as {@link outputAtEnd} says. */
  output?: JsonObject;
}

/**
 * Ends the workflow in a terminal status, canceling whatever is still pending. A failure or timeout (or a
 * termination that asks for it) starts the definition's failure workflow, as Conductor's `terminateWorkflow` does.
 */
function endWorkflow(draft: Draft, status: "FAILED" | "TERMINATED" | "TIMED_OUT", reason: string, env: DecideEnv, effects: Effect[], ending: Ending = {}): void {
  // Before anything is canceled, as Conductor's updateWorkflowOutput reads the tasks.
  const output = ending.output ?? outputAtEnd(draft.state, env);
  cancelPending(draft, `Workflow ${status.toLowerCase().replace("_", " ")}: ${reason}`, `Parent workflow ${draft.state.workflowId} ended ${status}: ${reason}`, env, effects);
  draft.patch({ status, reasonForIncompletion: reason, endTime: env.now, updateTime: env.now, rateLimited: undefined, output });
  // Conductor's terminate() records the task that ended it as failedTaskId; an ending no task brought (a termination,
  // the workflow's own timeout) leaves the one a retried run ended with. Conductor keeps the first run's even when a
  // task ends a retried run again; here the latest shows, as the failure workflow's failureTaskId names it.
  if (ending.failedTask !== undefined) draft.patch({ failedTaskId: ending.failedTask.taskId });
  if (status === "TERMINATED" && ending.triggerFailureWorkflow !== true) return;
  const plan = planFailureWorkflow(draft.state, env);
  if (plan === undefined) return;
  const shown = "start" in plan ? plan.start.workflowId : plan.notStarted;
  draft.patch({ output: { ...draft.state.output, [FAILURE_WORKFLOW_OUTPUT_KEY]: shown } });
  if ("start" in plan) effects.push({ kind: "startFailureWorkflow", start: plan.start });
}

/**
 * The earliest moment something must happen without outside input: a delayed retry, a lost
 * attempt's watchdog, the workflow timeout. Undefined when the execution waits on nothing timed.
 */
export function nextDeadline(state: WorkflowExecution): number | undefined {
  if (TERMINAL_WORKFLOW_STATUSES.has(state.status)) return undefined;
  // A paused workflow's own timeout waits for its resume, and so do the task clocks Conductor's decider checks (see
  // definitionTimeoutWaits, workerClockWaits); the others (a webhook's timeout, a WAIT's time) keep running.
  let earliest = state.status === "PAUSED" ? undefined : state.deadline;
  const consider = (at: number | undefined) => {
    if (at !== undefined && (earliest === undefined || at < earliest)) earliest = at;
  };
  for (const task of state.tasks) {
    // One waiting for its task definition (or its cache look-up) starts when the actor brings it, not at any time.
    // Nor does one of an execution waiting for its rate limit's place (see admissionFields): that waits for the limit.
    if (task.status === "SCHEDULED" && task.awaitingExternal !== true && task.awaitingTaskDef !== true && task.cache?.state !== "looking" && task.place !== "asking" && state.status === "RUNNING" && state.rateLimited !== true) {
      consider(task.scheduledTime);
    }
    if (task.iterationEndDue !== undefined && isPending(task) && state.status === "RUNNING" && state.rateLimited !== true) consider(task.iterationEndDue);
    if (isInFlight(task)) consider(task.attemptDeadline);
    if (isPending(task)) {
      if (!workerClockWaits(state, task)) consider(task.timeoutAt);
      if (!definitionTimeoutWaits(state)) consider(task.definitionTimeoutAt);
      consider(task.retryDeadline);
    }
  }
  return earliest;
}

/**
 * True when the execution cannot move by itself: it has ended or is paused, or no loop's iteration end waits for a
 * later decision and each of its lanes has either nothing left, or a JOIN waiting for the others, or a task waiting for something from outside (a completion, a callback) or
 * for its child (see {@link awaitedChildId}), which at least one has. A worker's (SIMPLE) task is not: like an HTTP
 * call, it is the work the workflow runs, polled or not, and it moves on by its worker's report (a synchronous execute
 * waits for that, as Conductor's does). Nor is a WAIT whose time is set: its time moves it on (see {@link waitsFromOutside}).
 */
export function isBlocked(state: WorkflowExecution): boolean {
  if (state.status !== "RUNNING") return true;
  // A loop whose iteration's end waits for a later decision (script pacing) moves by itself: its lane's head has ended.
  if (state.tasks.some((task) => task.iterationEndDue !== undefined && isPending(task))) return false;
  let blocked = false;
  for (const { head } of activeLanes(state)) {
    if (head === undefined) return false;
    if (waitsFromOutside(head) || waitsForUnmockedWorker(state, head)) blocked = true;
    else if (isPending(head) && !JOIN_TYPES.has(head.taskType)) return false;
  }
  return blocked;
}

/**
 * True when pending SIMPLE task `task` of a test run waits for a worker: none takes it (a test run's tasks are in a domain
 * of their own), so a test run whose lanes wait there is blocked, not busy. So does an unmocked WAIT, its time set or
 * not: Conductor's testWorkflow stops at the first unmocked task that is no operator, where a timed WAIT would hold a
 * synchronous test run for its whole wait.
 */
function waitsForUnmockedWorker(state: WorkflowExecution, task: TaskExecution): boolean {
  return state.test !== undefined && (task.taskType === "SIMPLE" || task.taskType === "WAIT") && isPending(task);
}

/**
 * True when pending task `task` waits for something from outside (not a worker's SIMPLE task: see {@link isBlocked}).
 * Nor a WAIT whose time is set (`duration` or `until`, its `timeoutAt`): it ends by itself when its time comes, so a
 * synchronous execute waits for it as for a worker, as Conductor's WorkflowSignalResponder counts only a WAIT whose
 * waitTimeout is 0 as blocking.
 */
function waitsFromOutside(task: TaskExecution): boolean {
  if (task.taskType === "WAIT" && task.timeoutAt !== undefined) return false;
  return task.status === "IN_PROGRESS" && task.awaitingExternal === true && task.taskType !== "SIMPLE";
}

/**
 * The child a blocked execution waits for (one of its lanes is at a SUB_WORKFLOW task waiting for completion, and no
 * lane waits for anything else from outside), or undefined: such an execution is only as blocked as its children are,
 * and this one comes first.
 */
export function awaitedChildId(state: WorkflowExecution): string | undefined {
  if (state.status !== "RUNNING") return undefined;
  let child: string | undefined;
  for (const { head } of activeLanes(state)) {
    if (head === undefined || !waitsFromOutside(head)) continue;
    if (head.taskType !== "SUB_WORKFLOW" || head.subWorkflowId === undefined) return undefined;
    child ??= head.subWorkflowId;
  }
  return child;
}

/**
 * True when a task named in `refs` has ended in the execution, whatever its status (a synchronous execute's
 * `waitUntilTaskRef`, as Conductor's WorkflowSignalResponder takes any terminal status: a failed attempt, an optional
 * task COMPLETED_WITH_ERRORS, a skipped task answer too). A task of a DO_WHILE's loop counts under its definition's
 * reference name as well as its own: any ended iteration of `ref` answers for `ref`, and `ref__2` names iteration 2's alone.
 */
export function hasEndedTask(state: WorkflowExecution, refs: ReadonlySet<string>): boolean {
  return state.tasks.some((task) => TERMINAL_TASK_STATUSES.has(task.status) && (refs.has(task.referenceTaskName) || refs.has(definitionReferenceName(state.definition, task))));
}
