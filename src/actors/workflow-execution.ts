import { DurableObject } from "cloudflare:workers";
import type { DecideEnv } from "../engine/config";
import {
  createExecution,
  decide,
  awaitedChildId,
  awaitedDomainChoices,
  awaitedTaskDefNames,
  hasEndedTask,
  isBlocked,
  isInFlight,
  isPending,
  nextDeadline,
  retryRefusal,
  settleOverdue,
  type Decision,
  type Effect,
  type ExecutionEvent,
  type ExternalTaskStatus,
  type NewExecution,
} from "../engine/decider";
import { EngineError, type EngineErrorKind } from "../engine/errors";
import { evaluationContext } from "../engine/evaluation";
import { ENVIRONMENT_READING_COMMANDS, environmentVariablesOf } from "../engine/environment";
import { isExpressionFailure, MissingSecretError, referencedSecrets, resolveValue, type ExpressionFailure } from "../engine/expressions";
import {
  isHttpFamilyType,
  isHttpType,
  RETRYABLE_WORKFLOW_STATUSES,
  TERMINAL_TASK_STATUSES,
  TERMINAL_WORKFLOW_STATUSES,
  type FailureWorkflowStart,
  type JsonObject,
  type JsonValue,
  type TaskExecution,
  type WorkflowExecution as Execution,
  type WorkflowDef,
  type WorkflowStatus,
  type WorkflowTaskDef,
} from "../engine/model";
import { resolvedTaskInput, taskInputTemplate } from "../engine/tasks/registry";
import { isAsyncComplete, requestsPerAttempt } from "../engine/tasks/http/request";
import { childStartRequest, inlineChildDefinition, type ChildEnding } from "../engine/tasks/sub-workflow";
import { inlineStartedDefinition } from "../engine/tasks/start-workflow";
import { handOutLimits, isHeldByWorker, leftWorkerQueues, queuedFrom, workerQueueEntry, workerQueueKey, type WorkerQueueEntry, type WorkerQueueRemoval } from "../engine/tasks/simple";
import { parseWebhookCallback, webhookExpectations } from "../engine/tasks/wait-for-webhook/callback";
import { statusPublications, type StatusPublication } from "../engine/status-listener";
import { applyTestMocks, ownTestQueues } from "../engine/test-run";
import { ownTestDomain } from "../engine/test-domain";
import { limitChanges, type LimitEntry } from "../engine/rate-limit";
import { removalDueAt } from "../engine/retention";
import type { ValidationIssue } from "../engine/validation-issue";
import { cutToBytes, oversize, oversizeReason, storedTasksBytes } from "../engine/limits";
import { definitionReferenceName, instanceTask, planOf } from "../engine/plan";
import { signalledChildIds, signalledWait } from "../engine/signals";
import type { JqRunner } from "../engine/jq";
import type { ScriptRunner } from "../engine/scripts";
import { taskJsonWithInput, toTaskView, toWorkflowView, type WorkflowView } from "../engine/view";
import { humanTaskEntry } from "../engine/tasks/human/entry";
import { eventMeets, writtenMatches } from "../engine/tasks/wait-for-webhook/matches";
import type { HumanAction, HumanCaller } from "../engine/tasks/human/progress";
import { serviceConfig, type ServiceConfig } from "../worker/config";
import { LATEST_ALARM_MILLIS } from "../worker/alarm-limit";
import { jsonRequestText, readsAsJson } from "../worker/http/body";
import { ApiError } from "../worker/http/errors";
import { settledWithin } from "../worker/ttl-cache";
import { TaskDefRepository } from "../worker/task-defs";
import { EnvironmentRepository } from "../worker/environment";
import { retryAfterSeconds } from "../worker/rate-limit/window";
import { MAX_TASK_LOG_BYTES } from "../worker/schemas";
import { executionStub, isWorkflowId } from "../worker/executions";
import { START_PERMISSION, mayStartWorkflow } from "../worker/auth/access-rules";
import { KeptActionProgress } from "./action-progress";
import { CallbackLogs } from "./callback-logs";
import { dispatchEvent, publishEvent, withPublisherMaskedFields } from "./dispatch/event";
import { dispatchHttp } from "./dispatch/http";
import { isSubrequestLimitError } from "../worker/subrequest-limit";
import { isOverloadedObjectError, isTransientObjectError, OBJECT_CALL_RETRIES } from "../worker/object-retry";
import { dispatchStartWorkflow } from "./dispatch/start-workflow";
import { dispatchSignedJwt } from "./dispatch/signed-jwt";
import { dispatchUpdateSecret } from "./dispatch/update-secret";
import { dispatchSubWorkflow } from "./dispatch/sub-workflow";
import { dispatchTerminateWorkflow } from "./dispatch/terminate-workflow";
import { stubHandle, type ExecutionReach } from "./dispatch/execution-reach";
import { dispatchUpdateTask } from "./dispatch/update-task";
import { startFailureWorkflow } from "./dispatch/failure-workflow";
import { hasTasksFoundByRow, indexRow, indexSignature, onlyTasksChanged } from "./execution-index";
import { expectIndexWritten, indexShardFor, indexWriterAt, type ExecutionIndexWriter } from "./index-writer";
import { EXECUTION_LOG_LINES_KEPT, ExecutionStore, TASK_LOG_LINES_KEPT, type TaskLogLine } from "./execution-store";
import { readSecrets, redactSecretValues, unsealSecretValues, type SecretRead } from "./secrets";
import { verifyCallback } from "./webhook-verification";
import { taskQueueAt, type TaskQueue } from "./task-queue";
import { executionLimitAt, type AdmissionAnswer } from "./execution-limit";
import { taskLimitAt, type PlaceAnswer, type PlaceEntry } from "./task-limit";
import { asksForPlaces, awaitedPlaces, countsRate, leftPlaces, placeState, retakenPlaces, type TaskPlace } from "../engine/task-places";
import { awaitedCacheLookups, taskCacheWrites, type TaskCacheWrite } from "../engine/task-cache";
import { TaskOutputCache } from "../worker/task-output-cache";
import { WakeSignal } from "./wake-signal";
import { WaitingTasks } from "./waiting-tasks";
import { fittingBatch, MessageQueue } from "./message-queue";
import { MAX_QUEUED_MESSAGES, messagePulls, pulledOutput, type WorkflowMessage } from "../engine/tasks/pull-workflow-messages";
import { loadJqRunner } from "./jq/load";
import { loadScriptRunner } from "./scripts/load";
import { failedAgain, retryFailureLogged } from "./retry-log";

/** The outcome of an RPC call: refusals travel as values, because thrown errors lose their kind over RPC. */
export type ActorResult<T> = { ok: true; value: T } | { ok: false; error: { kind: EngineErrorKind; message: string } };

/**
 * The answer to a message pushed to the workflow's queue (`POST /api/workflow/{workflowId}/messages`): its id, or why
 * it was refused (nothing stored): no such workflow (404), not RUNNING (409), too large for a task's output (413), the
 * queue full (429), as Conductor's WorkflowMessageQueueResource answers.
 */
export type PushAnswer = { ok: true; messageId: string } | { ok: false; status: 404 | 409 | 413 | 429; message: string };

/**
 * Most PULL_WORKFLOW_MESSAGES tasks one change completes: a loop of them that never wait (`blocking: false`) goes on in
 * later turns (see `#syncMessagePulls`), as the engine paces a loop of tasks that never wait over later decisions.
 */
const MAX_PULLS_PER_CHANGE = 100;

/** The meta key of the first sequence number of the object's latest block of search-row writes (see {@link WorkflowExecution.#indexSequence}). */
const INDEX_SEQUENCE_META = "indexSequence";
/**
 * How many search-row writes one block of sequence numbers numbers: an instance of the object takes a block above every
 * number stored before (one storage write), and numbers its writes within it without storing each.
 */
const INDEX_SEQUENCE_BLOCK = 2 ** 20;

/** The meta key saying the object has a message queue table (see `MessageQueue`). */
const MESSAGE_QUEUE_META = "messageQueue";

/** Why a webhook callback was refused, with the HTTP status to answer. */
export interface CallbackRefusal {
  status: 400 | 401 | 404 | 409 | 413 | 415 | 429;
  message: string;
  validationErrors?: ValidationIssue[];
  /** With 429: when the task accepts callbacks again. */
  retryAfterSeconds?: number;
}

/**
 * How an execution answers a poll that took one of its SIMPLE tasks from a worker queue: the task, handed to the
 * worker (its Task JSON, input with real secret values); "gone" when it no longer waits for a poll (the entry can
 * go); "later" when it is not handed out now but still waits: its workflow is paused (the entry stays, and comes back
 * when the workflow resumes), or its input could not be read (a D1 error reading its secrets: the entry comes back
 * after its lease); "unsent" when it waits but the poll's answer has no room left for it (see {@link PollShare}), with
 * the `bytes` its input takes of a share (the router may offer it again in what the poll has left): else the entry goes
 * back to its queue at once.
 */
export type PollAnswer = { outcome: "polled"; task: string } | { outcome: "gone" } | { outcome: "later" } | { outcome: "unsent"; bytes: number };

/**
 * The part of a batch poll's answer an execution's tasks may take (see the router's batch poll): `bytes` of inputs (as
 * JSON, with their secrets' values), the tasks past it answered "unsent"; `oneAnyway`: its first task goes out even
 * when larger, so that a poll always moves on.
 */
export interface PollShare {
  bytes: number;
  oneAnyway: boolean;
}

/** One task a batch poll took from its worker queue for this execution (see `WorkflowExecution.pollTasks`). */
export interface PollEntry {
  taskId: string;
  /** The queue counts the task among those held at once (see `LeasedTask`): it is released once no longer held. */
  holdsPlace?: boolean;
}

/**
 * Why a polled task's input, with its secrets' values, cannot go to a worker: it cannot be built (a text longer than a
 * string may be) or is over MAX_PAYLOAD_BYTES. The same every time it is built, so the task fails, as a secret that is
 * missing fails it, rather than being held back at every poll or breaking the poll's answer (an RPC answer holds 32 MiB).
 */
class UnsendableInputError extends Error {
  override readonly name = "UnsendableInputError";
}

/**
 * A polled task's input as the worker gets it, or why its task fails instead. `text`: the input as JSON, when the poll
 * wrote it out to measure it, so that its Task JSON is built around that text rather than writing the input out again.
 */
type PollInput = { input: JsonObject; secrets: string[]; sealed?: ReadonlyMap<string, string>; text?: string } | UnresolvedInput | UnsendableInputError;

/**
 * Why a task's input, resolved again with its secrets' values as it is sent, could not be: a secret that does not
 * exist, or an expression failing against the execution's data as it now stands (a parallel branch's output read since
 * the task was scheduled may make a query too costly). Either comes again at every attempt, so the task fails.
 */
type UnresolvedInput = MissingSecretError | ExpressionFailure;

/** The reason a task fails with when its input is {@link UnresolvedInput}: as the engine words it when it schedules the task. */
function unresolvedInputReason(error: UnresolvedInput): string {
  return error instanceof MissingSecretError ? `Task input references an unknown secret: ${error.message}` : `Invalid task input: ${error.message}`;
}

/**
 * A task's input as its side effect needs it: with the real values of the secrets it names (`secrets`), and the
 * encrypted form of each (`sealed`, by name), kept for a task whose input goes to someone who may report it later.
 */
interface LiveInput {
  input: JsonObject;
  secrets: string[];
  sealed: ReadonlyMap<string, string>;
}

/** A polled task's input as read before it is handed out, or the answer when it did not wait for a poll. */
type PollRead = { outcome: "read"; live: PollInput } | Exclude<PollAnswer, { outcome: "polled" }>;

/** A task a batch poll hands out: its entry (at `index` of the poll's), its input as read and the event that applies it. */
interface PollOffer {
  index: number;
  entry: PollEntry;
  live: PollInput;
  event: ExecutionEvent;
}

/**
 * The answer for a polled task whose secrets could not be read (`error`): "later", so its entry stays leased and comes
 * back after the lease, as when its execution could not be asked at all; logged, as the router logs that.
 */
function unreadForPoll(taskId: string, error: unknown): PollRead {
  console.error(JSON.stringify({ msg: "poll could not read a task's input; its task comes back after the lease", taskId, error: String(error) }));
  return { outcome: "later" };
}

/** Why an input with its secrets' values cannot be built or written out: by the error's kind only, which quotes no value. */
function unbuiltInput(error: unknown): UnsendableInputError {
  return new UnsendableInputError(`The input with the secrets' values cannot be built (${error instanceof Error ? error.name : "an error"})`);
}

/**
 * Most bytes of inputs with their secrets' values one answer of `pollTasks` holds beside the execution's own data (at
 * most `maxExecutionBytes`), so that the answer stays under the 32 MiB Cloudflare allows an RPC answer, with room for
 * the tasks' other fields. One task is always handed out, so that a poll moves on whatever the configuration.
 */
const POLL_ANSWER_BYTES = 28 * 1024 * 1024;

const utf8 = new TextEncoder();

/**
 * The input of a polled task with its secrets' values (`live`) and its UTF-8 JSON bytes, or why it cannot go to a worker
 * when it is over `limit` bytes or cannot even be written out (see {@link UnsendableInputError}). It is measured before
 * it is written out (see {@link oversize}): resolved again as it is polled, it may read what has run since many times
 * over (a sibling's output of numbers, few characters of text), tens of MB as JSON in an object of 128 MB.
 */
function sendableInput(live: PollInput, limit: number): { live: PollInput; bytes: number } {
  if (live instanceof Error) return { live, bytes: 0 };
  let text: string;
  let bytes: number;
  try {
    const over = oversizeLiveReason(live.input, limit);
    if (over !== undefined) return { live: new UnsendableInputError(over), bytes: 0 };
    text = JSON.stringify(live.input);
    bytes = utf8.encode(text).byteLength;
  } catch (error) {
    return { live: unbuiltInput(error), bytes: 0 };
  }
  return { live: { ...live, text }, bytes };
}

/**
 * Why a task's input resolved again with its secrets' values cannot be sent, when it is over `limit` bytes (measured, not
 * written out): resolved as it is sent, it may read what has run since (a parallel branch's output) many times over,
 * where the input stored when it was scheduled read nothing of it. Undefined when it fits.
 */
function oversizeLiveReason(input: JsonObject, limit: number): string | undefined {
  const bytes = oversize(input, limit);
  return bytes === undefined ? undefined : oversizeReason("The input with the secrets' values", bytes, limit);
}

/** The event a poll of task `taskId` applies: handed out to `workerId`, or failed when its input cannot go to a worker. */
function pollEvent(taskId: string, live: PollInput, workerId: string | undefined): ExecutionEvent {
  if (live instanceof UnsendableInputError) return { type: "externalUpdate", taskId, status: "FAILED_WITH_TERMINAL_ERROR", output: {}, reason: live.message };
  if (live instanceof Error) return { type: "externalUpdate", taskId, status: "FAILED_WITH_TERMINAL_ERROR", output: {}, reason: unresolvedInputReason(live) };
  return workerId === undefined ? { type: "taskPolled", taskId } : { type: "taskPolled", taskId, workerId };
}

/** A log line a worker sends (Conductor's `TaskExecLog` less its task id, which is the task it is sent for); `createdTime` now unless given. */
export interface TaskLogInput {
  log: string;
  createdTime?: number;
}

/** What a task's worker queue is owed: an entry to put (or move) there, or the task's entry to take out. */
type QueueChange = WorkerQueueEntry | (WorkerQueueRemoval & { remove: true });

/** A task updated from outside: its id and, for a SIMPLE task, its name (what workers poll by) and its worker queue's domain. */
export interface TaskUpdated {
  taskId: string;
  worker?: { taskName: string; domain?: string };
}

/** A task's result given from outside: what `updateTask` takes beside the task's id. */
export interface TaskResultInput {
  status: ExternalTaskStatus;
  output: JsonObject;
  /** Its `reasonForIncompletion`. */
  reason?: string;
  /** A SIMPLE task reported IN_PROGRESS goes back to its queue (SCHEDULED), to be polled again after this many seconds. */
  callbackAfterSeconds?: number;
  /** A worker's result: an output too large to store fails the task for good instead of being refused (see `externalUpdate`). */
  oversizeFailsTask?: true;
  /** The reporting worker (a TaskResult's `workerId`). */
  workerId?: string;
  /**
   * True for a TaskResult with `outputData`: it replaces the task's output, as Conductor's updateTask sets it (a worker's
   * final result drops what its IN_PROGRESS reports gave). The by-reference updates add theirs to it instead, as
   * Conductor's do.
   */
  replaceOutput?: true;
}

/** How an UPDATE_TASK's update differs from a TaskResult's (see the decider's `externalUpdate`). */
export interface TaskUpdateFrom {
  /** The UPDATE_TASK sending it (`<workflowId>/<taskId>`): sent again once applied, it is taken as done. */
  byTask: string;
  /** True: the output replaces the task's instead of being added to it. */
  replaceOutput: boolean;
  /** Why the task failed, when the update fails it (an event handler's fail_task `reasonForIncompletion`). */
  reason?: string;
}

/**
 * Orkes' update of a workflow's state (`WorkflowStateUpdate`): variables merged in, and the result of one task, named
 * by its id or, without one, by its reference name (as `updateTaskByRef` finds it).
 */
export interface StateUpdate {
  variables?: JsonObject;
  task?: TaskResultInput & { taskId?: string; taskRefName?: string; logs?: TaskLogInput[] };
}

/**
 * The router's request a call comes from, so that a repeat of the call applies nothing twice: `id` is random, one per
 * incoming request; `repeat` is true when the router makes the call again on a fresh stub after a reset cut the first
 * off (see retryingObjectCall). The object records the ids of the requests it applied with their updates (see
 * ExecutionStore.recordAppliedRequest), and any call of one it finds answers as the first would have: a repeat, or the
 * first call itself reaching the object after its repeat (calls through two stubs are not ordered).
 */
export interface RepeatableRequest {
  id: string;
  repeat: boolean;
}

/** The Workflow JSON as text, and its status beside it (the caller adds to the answer without parsing it again). */
export interface SettledWorkflow {
  workflowJson: string;
  status: WorkflowStatus;
  /**
   * The wait ran out with the execution neither ended nor waiting on something from outside (nor at a task it was told
   * to stop at): Conductor's `signalTimeout`, which its SignalResponse carries.
   */
  timedOut: boolean;
  /**
   * The execution's `variables` as its Workflow JSON shows them, as text: a SignalResponse's `targetWorkflowVariables`,
   * added without parsing `workflowJson`. Absent from an object still on code from before it was added.
   */
  variablesJson?: string;
}

/** The WAIT task a signal resolves, in the execution that holds it (the signalled one, or a child it runs). */
export interface SignalTarget {
  workflowId: string;
  taskId: string;
  /** Its definition's reference name (a loop task's, not its run's `ref__2`): what grants to complete it are written for. */
  taskRefName: string;
}

/** The outcome of a webhook callback. */
export type CallbackResult = { ok: true; value: { workflowId: string; taskId: string; status: string } } | { ok: false; refusal: CallbackRefusal };

/**
 * Lifecycle commands from the API (jumping and upgrading too, and skipping a task, updating the variables). `retry` may resume a failed child in place instead of starting
 * a new one (Conductor's `resumeSubworkflowTasks`). `byParent` marks a retry or rerun that a parent asks of
 * its child (that parent reopens itself); one asked of a child directly reopens its parents too.
 */
export type WorkflowCommand = (
  | Extract<ExecutionEvent, { type: "terminate" | "pause" | "resume" | "restart" | "rerun" | "skipTask" | "updateVariables" | "resetCallbacks" | "upgrade" | "jump" }>
  | { type: "retry"; resumeSubworkflowTasks?: boolean; startScopes?: string[] }
) & {
  byParent?: boolean;
  /**
   * A retry, restart or rerun asked of a child directly answers only once its parents have taken its reopen (at most
   * {@link PARENT_REOPEN_WAIT_MS}): asked by a bulk request whose next id may be one of those parents, which must find
   * itself running again (Conductor's updateAndPushParents is done before its retry returns), not still ended.
   */
  awaitParents?: boolean;
};

/** What {@link WorkflowExecution.getNameAndStatus} answers. */
export interface ExecutionSummary {
  workflowName: string;
  status: WorkflowStatus;
  parentWorkflowId?: string;
}

/**
 * How long a reopen waits for its parents to take it, when it waits ({@link WorkflowCommand} `awaitParents`, and a
 * parent's answer to its child's reopen, which takes its own parents along first): one that takes longer (a parent
 * unreachable) stays owed and is told again, as always, but the answer no longer waits on it.
 */
const PARENT_REOPEN_WAIT_MS = 3_000;

/** How long {@link PARENT_REOPEN_WAIT_MS}'s wait pauses before telling again a parent that refused at once. */
const PARENT_REOPEN_RETRY_MS = 50;

/** What a finished child tells each execution waiting for it: how it ended (a child that tells is never lost). */
export interface ChildFinishedNotice extends Omit<ChildEnding, "lost"> {
  taskId: string;
  subWorkflowId: string;
}

/**
 * What a child retried, restarted or rerun on its own tells its parent: the parent's task `taskId` should wait
 * for it again (see {@link WorkflowExecution.childReopened}). `startScopes` are those of whoever reopened it.
 */
export interface ChildReopenedNotice {
  taskId: string;
  subWorkflowId: string;
  startScopes?: string[];
}

/**
 * How a parent answers {@link ChildReopenedNotice}: it waits for the child again ("taken"), it will not
 * ("declined": the child runs on detached), or not yet ("retry").
 */
export type ChildReopenedAnswer = "taken" | "declined" | "retry";

/**
 * A reopen of this execution (retry, restart or rerun asked of it directly) that its parent has not answered
 * yet. Stored (meta `parentReopen`) with the reopen itself; while it is owed, this execution's finish notices wait,
 * since a parent that has not reopened yet would drop them and then wait forever.
 */
interface OwedParentReopen {
  workflowId: string;
  taskId: string;
  startScopes?: string[];
}

/** An execution's SUB_WORKFLOW task waiting for this one to finish. */
interface Watcher {
  workflowId: string;
  taskId: string;
  /** Which terminal state it was last told about (status and end time). */
  notified?: string;
}

/**
 * While background work is owed, the alarm comes back this soon at the latest: an eviction kills the
 * job, and nothing else may ever wake a finished execution.
 */
const BACKGROUND_SAFETY_MS = 5_000;

/**
 * The safety alarm while work that something else waits on is owed: a worker's task owed to its queue (a push, or the
 * choice of its domain), which a worker polls for, a parent's notice that this child ended or was reopened, which
 * the parent's SUB_WORKFLOW task waits on, or a running child's termination (the child runs on until it lands). An
 * eviction that killed it would otherwise hold that up for {@link BACKGROUND_SAFETY_MS}. Only executions with SIMPLE
 * tasks, a parent or a running child owe these, so no other workflow is woken sooner; the alarm is the one a decision
 * arms anyway.
 *
 * Each such alarm is a billed wake-up even when no eviction happened (the push is usually made within milliseconds,
 * and the alarm is not moved later for it: see `#syncAlarm`), so it is armed only for what a worker or parent can
 * take sooner: a push of a task that a poll may take only later (after a worker's `callbackAfterSeconds`, a retry's
 * delay) needs it by then, not a second from now (and within {@link BACKGROUND_SAFETY_MS}, as any background work);
 * a removal from a queue, which no worker waits for, only within {@link BACKGROUND_SAFETY_MS}. Work whose job failed
 * is tried again after {@link RETRY_BACKGROUND_MS}, the alarm armed for that and not sooner.
 */
const AWAITED_SAFETY_MS = 1_000;

/**
 * How long a termination waits for the children it terminates (each through its own object, see
 * `#awaitChildTerminations`) before answering. Conductor's terminateWorkflow terminates each running SUB_WORKFLOW's child
 * before it returns (SubWorkflow.cancel calls terminateWorkflow on it); answered first, an eviction right after the
 * answer left the child running on until the parent's safety alarm (up to {@link BACKGROUND_SAFETY_MS}), making its
 * calls and even completing. A child that takes longer (unreachable, or itself terminating a deep tree) stays owed, as
 * before: the answer does not wait on it for good.
 */
const CHILD_TERMINATION_WAIT_MS = 3_000;

/**
 * How long a termination waiting for its children (see {@link CHILD_TERMINATION_WAIT_MS}) pauses before trying again
 * one that was refused: a dozen tries at most within the wait, each a call to that child's object.
 */
const CHILD_TERMINATION_RETRY_MS = 250;

/**
 * How long a new execution's search row may wait (search finds a running execution within a second).
 * An execution that ends sooner gets a single row, written when it ends.
 */
const FIRST_ROW_DELAY_MS = 500;

/** How long a synchronous wait pauses before asking again a child whose object a reset cut off (it is back at once). */
const CHILD_SETTLE_RETRY_MS = 100;

/**
 * Least time between two writes of a running execution's search rows that change only its task rows: task search
 * sees a change within about this long, and a busy execution does not write D1 at every step.
 */
const TASK_ROWS_INTERVAL_MS = 1_000;

/** The part of a child execution its parent reads (see `WorkflowExecution.childViewJson`). */
interface ChildView {
  workflowName: string;
  /** Absent from an object that does not tell. */
  workflowVersion?: number;
  status: WorkflowStatus;
  output: JsonObject;
  reasonForIncompletion?: string;
  endTime: number;
  /**
   * False when it has ended with no task to retry (see `retryRefusal`: it ended before any task was scheduled, or no
   * task failed): its own retry is refused. Absent from an object that does not tell (read as true).
   */
  retryable?: boolean;
}

/**
 * A child asked to run again in place (a retry with `resumeSubworkflowTasks`, a rerun from one of its tasks) whose
 * answer has not been taken yet. Stored (meta `childResume`) before the child is asked, because this execution
 * reopens only once the child accepted: an answer lost to an error or an eviction is found again from the child.
 */
interface PendingChildResume {
  taskId: string;
  subWorkflowId: string;
  /** The child's end time when it was asked: a child that ended at another time since then ran again. */
  childEndTime: number;
  startScopes?: string[];
  /** Asked of this execution directly: once reopened, it owes its parent the reopen too (see {@link OwedParentReopen}). */
  tellParent?: boolean;
  /**
   * The environment variables read for the retry or rerun that asked it (see `EnvironmentRead`): this execution runs
   * its later tasks again with them, as an ordinary retry or rerun would. Absent for a reopen its child asked for.
   */
  environment?: Record<string, string>;
  /** A rerun's new input and correlation id: this execution's, never passed to the child. */
  workflowInput?: JsonObject;
  correlationId?: string;
}


/**
 * How long a child that its parent canceled before it started keeps refusing that parent's start. The start
 * was already on its way (or lost) when the parent ended: it arrives within seconds or never.
 */
const TOMBSTONE_KEEP_MS = 60 * 60 * 1000;
/** The `removed` meta value of a tombstone left by `abandonStart` (a removal's is "1"). */
const ABANDONED_START_MARK = "abandoned";

/** Prefix of the meta keys of owed worker-queue pushes (see {@link WorkflowExecution.#queuePushes}). */
const QUEUE_PUSH_META = "queuePush:";

/** Prefix of the meta keys of the worker queues of a test run's own domain (see {@link WorkflowExecution.#testQueues}). */
const TEST_QUEUE_META = "testQueue:";

/** Prefix of the meta keys of owed releases of limited tasks (see {@link WorkflowExecution.#releases}). */
const RELEASE_META = "release:";

/** True when no worker holds task `taskId` of `execution` any more (or it is gone): its owed release is due. */
function releaseDue(execution: Execution, taskId: string): boolean {
  const task = execution.tasks.find((candidate) => candidate.taskId === taskId);
  return task === undefined || !isHeldByWorker(task);
}

/** Prefix of the meta keys of owed failure-workflow starts (see {@link WorkflowExecution.#failureStarts}). */
const FAILURE_START_META = "failureStart:";

/** Prefix of the meta keys of owed status publications (see {@link WorkflowExecution.#statusPublications}). */
const STATUS_PUBLICATION_META = "statusPublication:";


/** Prefix of the meta keys of owed leaves of rate limits (see {@link WorkflowExecution.#limitLeaves}). */
const LIMIT_LEAVE_META = "limitLeave:";

/** The meta key of the owed entry under a rate limit (see {@link WorkflowExecution.#limitEntry}). */
const LIMIT_ENTRY_META = "limitEntry";

/** Prefix of the meta keys of owed writes to the task output cache (see {@link WorkflowExecution.#cacheWrites}). */
const CACHE_WRITE_META = "cacheWrite:";

/** Prefix of the meta keys of owed leaves of limited tasks' places (see {@link WorkflowExecution.#placeLeaves}). */
const PLACE_LEAVE_META = "placeLeave:";

/** Prefix of the meta keys of owed takes of places held again (see {@link WorkflowExecution.#placeTakes}). */
const PLACE_TAKE_META = "placeTake:";

/** The background job that gives limited tasks' places back and asks for those awaited, in that order. */
const TASK_PLACE_JOB = "taskPlaces";

/** The background job that enters and leaves rate limits, in the order owed. */
const LIMIT_JOB = "executionLimit";

/**
 * How long a failed background job (index write, notification, child termination, queue push) waits before it is
 * tried again. While one waits, the alarm is armed for its retry and no safety alarm comes sooner (each attempt's
 * safety would otherwise wake the object, and try the job again, every {@link AWAITED_SAFETY_MS}): the retry's wake-up
 * runs every owed job, so after an eviction meanwhile owed work waits at most this long.
 */
const RETRY_BACKGROUND_MS = 2_000;

/** After a failed alarm, the next comes this soon, doubled at each failure in a row up to {@link ALARM_RETRY_LAST_MS}. */
const ALARM_RETRY_FIRST_MS = 2_000;
/** The longest wait between two alarms that keep failing (an execution whose alarm throws at every run: a bug). */
const ALARM_RETRY_LAST_MS = 10 * 60_000;
/** Most children one decide asks whether they still exist (see `WorkflowExecution.#failTasksOfLostChildren`). */
const LOST_CHILD_LOOKS_PER_DECIDE = 100;
/**
 * The key of {@link WorkflowExecution}'s count of failed alarms in a row, for `failedAgain`, and of the meta value that
 * keeps it across evictions: an object whose alarm waits minutes between two failures is evicted in between, and a
 * count kept only in memory started again from 1 at each wake-up (the wait back to 2 s, the 1st failure logged again).
 */
const ALARM_FAILURE_KEY = "alarmFailures";

/**
 * How many times an update by reference name reads the secrets of the task the reference names before it gives up (a
 * 409): each read lets other calls in, and one may give the reference another task (a retry) whose secrets are read next.
 */
const MAX_REF_UPDATE_READS = 3;

/** What an update of a task from outside may carry besides its status and output (see `WorkflowExecution.updateTask`). */
export type TaskUpdateOptions = { reason?: string; callbackAfterSeconds?: number; oversizeFailsTask?: true; logs?: TaskLogInput[]; from?: TaskUpdateFrom; workerId?: string };

/**
 * The runner of an object whose definition has no scripts, where none is ever asked to run: should one be, the task
 * fails saying so, rather than the decision throwing.
 */
/**
 * Most HTTP requests an execution's object has open at once. Cloudflare opens 6 connections at a time per invocation
 * and queues the others, unsent (developers.cloudflare.com/workers/platform/limits/, "Simultaneous open connections"),
 * while a task's connectionTimeOut runs from its fetch: a request queued behind slow ones timed out unsent. Here it
 * waits unsent, its timeouts not yet running.
 */
const MAX_OPEN_HTTP_REQUESTS = 6;

/**
 * Whether a `taskType` task's attempt starts a workflow from this object (a SUB_WORKFLOW's child, a START_WORKFLOW's),
 * counted against `childStartsPerInvocation` (see {@link WorkflowExecution.#childStartsMade}). A start reads its
 * definition from D1 and calls the child's object: 20 children took 20 `start` calls and 21 D1 queries, counted in a
 * throwaway test, so 20 starts keep the D1 queries well below Free's 50, with room for the execution's own and for a
 * read more per child (an input schema, environment variables or an idempotency key each read D1 once more).
 */
function startsAWorkflow(taskType: string): boolean {
  return taskType === "SUB_WORKFLOW" || taskType === "START_WORKFLOW";
}

/** What a waiting task's start takes of its execution's shares (see `WorkflowExecution.#startWaiting`). */
interface WaitingCost {
  /** HTTP requests it sends at once (a hedged task's each), 0 for a task of another type. */
  requests: number;
  /** Workflows it starts: 1 for a SUB_WORKFLOW or START_WORKFLOW task, else 0. */
  starts: number;
}

/** {@link WaitingCost} of `task`'s attempt, fixed by its type and input when it is dispatched. */
function waitingCost(task: TaskExecution): WaitingCost {
  return { requests: isHttpFamilyType(task.taskType) ? requestsPerAttempt(task.inputData) : 0, starts: startsAWorkflow(task.taskType) ? 1 : 0 };
}

const SCRIPTS_NOT_LOADED: ScriptRunner = {
  run: () => ({ ok: false, error: "the script interpreter was not loaded for this execution (a bug: please report it)" }),
  syntaxError: () => undefined,
};

/** As {@link SCRIPTS_NOT_LOADED}, for the jq processor of an object whose definition has no JSON_JQ_TRANSFORM. */
const JQ_NOT_LOADED: JqRunner = {
  run: () => ({ ok: false, error: "the jq processor was not loaded for this execution (a bug: please report it)" }),
  compileError: () => undefined,
};

/** True when running `definition` may need the script interpreter or the jq processor, loaded before its decisions. */
function needsInterpreters(definition: WorkflowDef): boolean {
  const plan = planOf(definition);
  return plan.usesScripts || plan.usesJq;
}

/** The rejection of a storage call not waited for, in an object the runtime is resetting: see `#armAlarm`. */
function ignoreResetObject(): void {}

/**
 * Whether a task that ended `ended` may have been ended by an update with `status`: the same status, or, for a failure,
 * COMPLETED_WITH_ERRORS (an optional task's). TIMED_OUT, CANCELED and SKIPPED are never an update's. Only the guess of a
 * signal's repeat from a router on the code before signals carried their request's id (see updateTask).
 */
function mayHaveEndedAs(ended: TaskExecution["status"], status: ExternalTaskStatus): boolean {
  if (ended === status) return true;
  return ended === "COMPLETED_WITH_ERRORS" && (status === "FAILED" || status === "FAILED_WITH_TERMINAL_ERROR");
}

function ok<T>(value: T): ActorResult<T> {
  return { ok: true, value };
}

function refused(error: unknown): ActorResult<never> {
  if (error instanceof EngineError) return { ok: false, error: { kind: error.kind, message: error.message } };
  throw error;
}

/** The values `lookup` has for `names`, those that exist. */
function secretValues(names: readonly string[], lookup: (name: string) => string | undefined): string[] {
  return names.map(lookup).filter((value): value is string => value !== undefined);
}

/** The encrypted values `sealed` has for `names`, those that exist, by name. */
function sealedOf(names: readonly string[], sealed: ReadonlyMap<string, string>): Map<string, string> {
  return new Map(names.flatMap((name) => (sealed.has(name) ? [[name, sealed.get(name)!] as const] : [])));
}

/**
 * The latest instance of the task with reference name `taskRefName`; a task of a DO_WHILE's loop answers to its
 * iteration's name (`ref__2`) and, for its latest iteration, to its definition's (`ref`).
 */
function taskByRef(execution: Execution, taskRefName: string): TaskExecution | undefined {
  return (
    execution.tasks.findLast((candidate) => candidate.referenceTaskName === taskRefName) ??
    execution.tasks.findLast((candidate) => candidate.iteration !== undefined && definitionReferenceName(execution.definition, candidate) === taskRefName)
  );
}

function noTaskWithRef(execution: Execution, taskRefName: string): EngineError {
  return new EngineError("NOT_FOUND", `Workflow ${execution.workflowId} has no task with reference name ${taskRefName}`);
}

/** The terminal state a watcher is told about; a rerun that finishes again is a new one. */
function finishSignature(execution: Execution): string {
  return `${execution.status}|${execution.endTime}`;
}

/**
 * One workflow execution. Holds the execution in its own SQLite, asks the engine what each event
 * means, persists the decision, then performs the effects. Every timer is derived from the
 * execution (`nextDeadline`) and multiplexed onto the object's single alarm, together with retries
 * of background work (search index, notifying parents, terminating children).
 */
export class WorkflowExecution extends DurableObject<Env> {
  /**
   * Most children one decide asks whether they still exist: {@link LOST_CHILD_LOOKS_PER_DECIDE}. A test seam, nothing
   * else sets it and no request reaches it: a test lowers it to stage a lost child past the first decide's look with a
   * few children instead of a hundred (each a workflow started, the test's seconds).
   */
  static lostChildLooksPerDecide = LOST_CHILD_LOOKS_PER_DECIDE;
  readonly #store: ExecutionStore;
  /** The workflow's message queue (see `message-queue.ts`), taken from by its PULL_WORKFLOW_MESSAGES tasks. */
  readonly #messages: MessageQueue;
  readonly #config: ServiceConfig;
  #execution: Execution | null;
  /** Side effects running in this isolate, by task id. After an eviction this is empty, which is how lost attempts are found. */
  readonly #inFlight = new Map<string, AbortController>();
  /**
   * HTTP requests (hedged ones each) this isolate started since its last alarm began, or since it was loaded. Cloudflare
   * counts an invocation's subrequests to the Internet (50 on Workers Free), and an object's background work (the next
   * task an HTTP task's answer starts) is part of an invocation that may have ended long ago: past
   * `httpRequestsPerInvocation`, HTTP tasks wait for an alarm, a fresh invocation, instead of failing with "Too many
   * subrequests". Only an alarm starts the count again here: whether a request to the object does is not documented.
   */
  #httpRequestsStarted = 0;
  /**
   * Workflows this isolate's tasks started (see {@link startsAWorkflow}) since its last alarm began, or since it was
   * loaded: Cloudflare counts each start's D1 queries and object call per invocation (D1's 50 queries on Workers Free),
   * and a fork of a thousand SUB_WORKFLOW tasks starts its children in the invocation that reached it. Past
   * `childStartsPerInvocation`, those tasks wait for the alarm as HTTP tasks do, where each start past D1's count was
   * refused ("Too many API requests by single Worker invocation"), logged, and sent again from the alarm, and the
   * execution's own calls (its search row, a queue push) were refused with them.
   */
  #childStartsMade = 0;
  /** HTTP requests (hedged ones each) of this isolate not answered yet: see {@link MAX_OPEN_HTTP_REQUESTS}. */
  #openHttpRequests = 0;
  /**
   * True once this invocation can start no more (its share of requests taken, or the runtime refused a subrequest):
   * the tasks left waiting start from the alarm, armed for now, a fresh invocation.
   */
  #freshInvocationNeeded = false;
  /**
   * Tasks whose side effect waits to start, by task id, in dispatch order: HTTP tasks waiting for a connection (see
   * {@link MAX_OPEN_HTTP_REQUESTS}) or for a fresh invocation (see {@link WorkflowExecution.#httpRequestsStarted}),
   * child starts waiting for a fresh invocation (see {@link WorkflowExecution.#childStartsMade}), and any task the
   * runtime refused a subrequest ("Too many subrequests", or "Too many API requests by single Worker invocation" for a
   * call to D1 or another object: see `isSubrequestLimitError`), until the alarm. Their controllers stand in `#inFlight`
   * (a cancel aborts them, a tick counts them as live). Each holds what its start will take (see {@link WaitingCost}).
   */
  readonly #waiting = new WaitingTasks<{ attempt: number; controller: AbortController } & WaitingCost>();
  /** Background jobs running in this isolate, by key (so one is never run twice at once), each settled when it has run. */
  readonly #jobs = new Map<string, Promise<void>>();
  /**
   * The background jobs whose last run in this isolate failed, each with how many runs in a row failed (its log lines
   * thinned out by {@link retryFailureLogged}): while any is left, its retry stays due (see {@link RETRY_BACKGROUND_MS}).
   */
  readonly #failingJobs = new Map<string, number>();
  /** Callers of `execute` waiting for the execution to finish or block. */
  readonly #changed = new WakeSignal();
  #watchers: Watcher[];
  /** Children to terminate (id → reason), recorded with the decision that canceled their task. */
  #childTerminations: Record<string, string>;
  /**
   * Children whose task this execution ended itself (it ended, the task timed out or was set from outside), kept
   * after their termination is done: such a child retried on its own no longer reopens this execution.
   */
  #childrenLetGo: string[];
  /**
   * Failure workflows this execution decided to start and has not started yet, each stored under its own meta key
   * ({@link FAILURE_START_META} and its id) in the transaction of the decision that ended the execution.
   */
  #failureStarts: FailureWorkflowStart[];
  /**
   * Endings of this execution its status listener has not published yet (see `statusPublications`), each stored under
   * its own meta key ({@link STATUS_PUBLICATION_META} and its message id) in the transaction of the decision that ended it.
   */
  #statusPublications: StatusPublication[];
  /**
   * SIMPLE tasks to put in (or move in) their worker queues, or to take out of them once they no longer wait there (see
   * `leftWorkerQueues`), by task id, each stored under its own meta key ({@link QUEUE_PUSH_META} and the task id) in
   * the transaction of the decision that queued it or took it out. One task's changes are made in order.
   */
  readonly #queuePushes: Map<string, QueueChange>;
  /**
   * The worker queues of this test run's own random domain (see `ownTestQueues`) it has put tasks in, each stored under
   * its own meta key ({@link TEST_QUEUE_META} and the queue's key) in the transaction of the decision that queued the
   * first. Once the run has ended, each is owed its delisting (`TaskQueue.delist`), made by the queue's push job after
   * the changes owed to it, and then forgotten; a run reopened meanwhile keeps them for its next ending. Always empty
   * outside test runs and the executions they start that keep their domain (see `ownTestDomain`).
   */
  readonly #testQueues: Set<string>;
  /**
   * SIMPLE tasks handed out to workers whose task definitions limit how many a queue's workers hold at once, by task
   * id, with their queue's key; each stored under its own meta key ({@link RELEASE_META} and the task id) in the
   * transaction that handed it out. Once no worker holds the task (it ended, timed out, was canceled or queued again,
   * or a rerun removed it), its queue is told, which frees its place for another.
   */
  readonly #releases: Map<string, { queue: string }>;
  /**
   * The rate limit keys (see `rate-limit.ts`) whose places (or turns) this execution must give up, because it ended;
   * each stored under its own meta key ({@link LIMIT_LEAVE_META} and the key) in the transaction of the decision that
   * ended it. Given up before any entry is asked, so that a reopened execution never loses the place it asks for.
   */
  readonly #limitLeaves: Set<string>;
  /**
   * The places (see `task-places.ts`) of limited tasks that ended or ran again, to give back to their task names' limit
   * objects, by place id with the task name; each stored under its own meta key ({@link PLACE_LEAVE_META} and the place
   * id) in the transaction of the decision that ended the task.
   */
  readonly #placeLeaves: Map<string, string>;
  /**
   * The places held again at once by tasks reopened in place (see `retakenPlaces`), to tell their task names' limit
   * objects (`TaskLimit.take`), by place id with the task name; stored as {@link #placeLeaves} are. A place owes at most
   * one of the two, the latest: a leave and a take of one place each cancel the other one owed.
   */
  readonly #placeTakes: Map<string, string>;
  /**
   * The places asked for that their limit objects queued, or whose entry call is on its way, in this isolate: not asked
   * again until an eviction forgets them (asking again is harmless: see `TaskLimit.enter`), or a `givePlace` answered
   * "gone" unmarks them (see {@link givePlace}). The object tells the execution when it gives one.
   */
  readonly #placesAsked = new Set<string>();
  /**
   * The place this execution (started or reopened waiting: `rateLimited`) must ask its rate limit for, stored (meta
   * {@link LIMIT_ENTRY_META}) with the decision that made it wait. Once asked, the limit admits it at once, or later by
   * calling `admit`.
   */
  #limitEntry: LimitEntry | undefined;
  /**
   * Outputs of tasks that missed the task output cache and completed, to cache (see `task-cache.ts`), by task id; each
   * stored under its own meta key ({@link CACHE_WRITE_META} and the task id) in the transaction that completed it.
   * Best effort beyond that: a removal of the execution drops those not written yet (a later run just misses them).
   */
  readonly #cacheWrites: Map<string, TaskCacheWrite>;
  #indexedSignature: string | undefined;
  /**
   * The sequence of the last search-row write this instance made, or, before its first, the first number of the block
   * the instance before it took (meta `indexSequence`; 0 before any): each write is numbered above every earlier one,
   * so that D1 tells it from a late write of an earlier one with the same updateTime (see `upsertIndexRow`).
   */
  #indexSequence: number;
  /** The end (exclusive) of this instance's block of sequence numbers; undefined until its first search-row write. */
  #indexSequenceBlockEnd: number | undefined;
  /**
   * The search-row writer shard of this execution, stored with its start: every write of its row (and its
   * removal) goes through that one writer, in order, even after `INDEX_WRITER_SHARDS` changes. Executions
   * stored before shards were pinned have none and use what the current setting gives them.
   */
  #indexShard: number | undefined;
  /**
   * Whether a removal has begun. Stored (meta `removing`) before the search row is deleted, so that from then
   * on the removal always completes, even when the object is evicted at any of its awaits: the next wake-up
   * finishes it. Meanwhile nothing may change the execution (a command that answered success would be deleted
   * with it) and no search row may be written (it would outlive the execution).
   */
  #removing: boolean;
  /** The removal running in this isolate, shared by every caller waiting for it. */
  #removal: Promise<void> | undefined;
  /** How many removals in a row failed in this isolate (their log lines thinned out by {@link retryFailureLogged}). */
  #removalFailures = 0;
  /**
   * Set in an object that holds no execution when the parent that was starting it as a child ended first (the
   * parent's id): that parent's start, possibly still on its way, is refused, so the child never runs on alone.
   */
  #canceledByParent: string | undefined;
  /**
   * Set in an object whose execution was removed: a start of that id still on its way (one that read the
   * idempotency key just before the removal released it) is refused instead of running the removed id again.
   * Kept for {@link TOMBSTONE_KEEP_MS}, then the object is emptied by its alarm. Also set, with
   * {@link WorkflowExecution.#startAbandoned}, in an object whose start an idempotency key's claim announced and
   * another start then took the key over (see {@link WorkflowExecution.abandonStart}).
   */
  #removed: boolean;
  /** The tombstone of {@link WorkflowExecution.#removed} was left by {@link WorkflowExecution.abandonStart}, not a removal. */
  #startAbandoned: boolean;
  /** See {@link PendingChildResume}; while set, lifecycle commands and removal are refused. */
  #childResume: PendingChildResume | undefined;
  /** True while this isolate waits for the child's answer to {@link WorkflowExecution.#childResume}. */
  #childResumeAsked = false;
  /** See {@link OwedParentReopen}. */
  #parentReopen: OwedParentReopen | undefined;
  /** Pending write of the search rows, held back for a while (see `#indexRowWait`). */
  #indexRowTimer: ReturnType<typeof setTimeout> | undefined;
  /** When this isolate last wrote the search rows (0: not yet; after an eviction, task rows are then due at once). */
  #indexRowWrittenAt = 0;
  /** Recent callbacks per webhook task, for the per-task callback limit. */
  readonly #callbackLogs = new CallbackLogs();
  #recovered = false;
  #alarmAt: number | null = null;
  /**
   * Where the next decide's look for lost children begins among the SUB_WORKFLOW tasks waiting for theirs (see
   * `#failTasksOfLostChildren`); in memory only: a new instance begins again from the first.
   */
  #lostChildLooksFrom = 0;
  /** Failed alarms in a row, under {@link ALARM_FAILURE_KEY} (see {@link WorkflowExecution.alarm}), stored there too. */
  readonly #alarmFailures = new Map<string, number>();
  /** The script interpreter: loaded before the first decision of an execution whose definition has scripts. */
  #scripts: ScriptRunner = SCRIPTS_NOT_LOADED;
  /** The jq processor: loaded before the first decision of an execution whose definition has a JSON_JQ_TRANSFORM. */
  #jq: JqRunner = JQ_NOT_LOADED;
  #backgroundRetryAt: number | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#config = serviceConfig(env);
    this.#store = new ExecutionStore(ctx.storage.sql);
    this.#execution = this.#store.load();
    const meta = this.#store.loadMeta();
    this.#messages = new MessageQueue(ctx.storage.sql, meta.get(MESSAGE_QUEUE_META) === "1", () => this.#store.setMeta(MESSAGE_QUEUE_META, "1"));
    this.#indexedSignature = meta.get("indexed");
    this.#indexSequence = Number(meta.get(INDEX_SEQUENCE_META) ?? 0);
    const shard = meta.get("indexShard");
    this.#indexShard = shard === undefined ? undefined : Number(shard);
    this.#watchers = JSON.parse(meta.get("watchers") ?? "[]") as Watcher[];
    this.#childTerminations = JSON.parse(meta.get("childTerminations") ?? "{}") as Record<string, string>;
    this.#childrenLetGo = JSON.parse(meta.get("childrenLetGo") ?? "[]") as string[];
    this.#failureStarts = [...meta].filter(([key]) => key.startsWith(FAILURE_START_META)).map(([, value]) => JSON.parse(value) as FailureWorkflowStart);
    this.#statusPublications = [...meta].filter(([key]) => key.startsWith(STATUS_PUBLICATION_META)).map(([, value]) => JSON.parse(value) as StatusPublication);
    this.#queuePushes = new Map(
      [...meta].filter(([key]) => key.startsWith(QUEUE_PUSH_META)).map(([key, value]) => [key.slice(QUEUE_PUSH_META.length), JSON.parse(value) as QueueChange]),
    );
    this.#testQueues = new Set([...meta.keys()].filter((key) => key.startsWith(TEST_QUEUE_META)).map((key) => key.slice(TEST_QUEUE_META.length)));
    this.#releases = new Map(
      [...meta].filter(([key]) => key.startsWith(RELEASE_META)).map(([key, queue]) => [key.slice(RELEASE_META.length), { queue }]),
    );
    this.#placeLeaves = new Map(
      [...meta].filter(([key]) => key.startsWith(PLACE_LEAVE_META)).map(([key, taskName]) => [key.slice(PLACE_LEAVE_META.length), taskName]),
    );
    this.#placeTakes = new Map(
      [...meta].filter(([key]) => key.startsWith(PLACE_TAKE_META)).map(([key, taskName]) => [key.slice(PLACE_TAKE_META.length), taskName]),
    );
    this.#limitLeaves = new Set([...meta.keys()].filter((key) => key.startsWith(LIMIT_LEAVE_META)).map((key) => key.slice(LIMIT_LEAVE_META.length)));
    const limitEntry = meta.get(LIMIT_ENTRY_META);
    this.#limitEntry = limitEntry === undefined ? undefined : (JSON.parse(limitEntry) as LimitEntry);
    this.#cacheWrites = new Map(
      [...meta].filter(([key]) => key.startsWith(CACHE_WRITE_META)).map(([key, value]) => [key.slice(CACHE_WRITE_META.length), JSON.parse(value) as TaskCacheWrite]),
    );
    const alarmFailures = meta.get(ALARM_FAILURE_KEY);
    if (alarmFailures !== undefined) this.#alarmFailures.set(ALARM_FAILURE_KEY, Number(alarmFailures));
    this.#removing = meta.has("removing");
    this.#canceledByParent = meta.get("canceledByParent");
    this.#removed = meta.has("removed");
    this.#startAbandoned = meta.get("removed") === ABANDONED_START_MARK;
    const childResume = meta.get("childResume");
    this.#childResume = childResume === undefined ? undefined : (JSON.parse(childResume) as PendingChildResume);
    const parentReopen = meta.get("parentReopen");
    this.#parentReopen = parentReopen === undefined ? undefined : (JSON.parse(parentReopen) as OwedParentReopen);
    const execution = this.#execution;
    if (execution && needsInterpreters(execution.definition)) void ctx.blockConcurrencyWhile(() => this.#loadInterpreters(execution.definition));
  }

  /** Loads the script interpreter and the jq processor (each once per isolate) when `definition`'s decisions may need them. */
  async #loadInterpreters(definition: WorkflowDef): Promise<void> {
    const plan = planOf(definition);
    if (plan.usesScripts) this.#scripts = await loadScriptRunner();
    if (plan.usesJq) this.#jq = await loadJqRunner();
  }

  // ---- RPC: starting and reading ------------------------------------------------------------

  /**
   * Starts a new execution in this (empty) object. A second start with the same idempotency key
   * answers the existing id (and, from another parent, adds it as a watcher).
   */
  async start(params: NewExecution): Promise<ActorResult<string>> {
    // Before anything is read: the checks below and the first decision then run in one synchronous turn. The plan is
    // the one the decision uses: createExecution keeps this definition object.
    if (needsInterpreters(params.definition)) await this.#loadInterpreters(params.definition);
    this.#recover();
    const existing = this.#execution;
    if (existing) {
      if (this.#removing) return refused(this.#beingRemoved(existing));
      // The same parent task starting its child again (a dispatch repeated after an eviction).
      const sameParentTask = params.parentWorkflowTaskId !== undefined && existing.parentWorkflowTaskId === params.parentWorkflowTaskId;
      // The same START_WORKFLOW task, or the same webhook delivery's event, starting it again (likewise; a resent delivery).
      const sameStarterTask = params.startedByTask !== undefined && existing.startedByTask === params.startedByTask;
      const sameKey = params.idempotencyKey !== undefined && existing.idempotencyKey === params.idempotencyKey;
      if (!sameParentTask && !sameStarterTask && !sameKey) return refused(new EngineError("CONFLICT", `Workflow ${params.workflowId} already exists`));
      if (params.parentWorkflowId !== undefined && params.parentWorkflowTaskId !== undefined) this.#watch(params.parentWorkflowId, params.parentWorkflowTaskId);
      return ok(existing.workflowId);
    }
    if (this.#startAbandoned) {
      const message = `Workflow ${params.workflowId} was not started: its idempotency key went to another start before this one came`;
      return refused(new EngineError("CONFLICT", message));
    }
    if (this.#removed) return refused(new EngineError("CONFLICT", `Workflow ${params.workflowId} was removed; start the workflow again for a new execution`));
    if (this.#canceledByParent !== undefined) {
      if (params.parentWorkflowId === this.#canceledByParent) {
        return refused(new EngineError("CONFLICT", `Workflow ${params.workflowId} was canceled by its parent ${this.#canceledByParent} before it started`));
      }
      // Another start (an idempotency key the child had claimed): the tombstone has nothing more to guard.
      this.#canceledByParent = undefined;
      this.#store.deleteMeta("canceledByParent");
    }
    if (params.parentWorkflowId !== undefined && params.parentWorkflowTaskId !== undefined) {
      this.#watchers = [{ workflowId: params.parentWorkflowId, taskId: params.parentWorkflowTaskId }];
      this.#store.setMeta("watchers", JSON.stringify(this.#watchers));
    }
    this.#apply({ type: "start" }, createExecution(params, Date.now()));
    // Same synchronous turn as the start's writes, so in the same transaction.
    this.#store.setMeta("indexShard", String(this.#indexWriterShard(params.workflowId)));
    return ok(params.workflowId);
  }

  /**
   * Starts a new execution and waits (at most `waitMs`) until it ends or blocks on something from
   * outside, or until a task named in `waitUntilTaskRefs` has ended (see `hasEndedTask`), answering
   * with the Workflow JSON: the synchronous execute endpoint in one round trip.
   */
  async execute(params: NewExecution, waitMs: number, waitUntilTaskRefs: readonly string[] = []): Promise<ActorResult<SettledWorkflow>> {
    const started = await this.start(params);
    if (!started.ok) return started;
    return this.#settledWorkflow(waitMs, waitUntilTaskRefs);
  }

  /**
   * Waits as {@link WorkflowExecution.execute} does for the execution already started here, then answers it: the wait
   * of an execute whose call a reset cut off after its start had landed. Not found when this object holds none.
   */
  async awaitSettled(waitMs: number, waitUntilTaskRefs: readonly string[] = []): Promise<ActorResult<SettledWorkflow>> {
    this.#recover();
    return this.#settledWorkflow(waitMs, waitUntilTaskRefs);
  }

  /** Waits as {@link WorkflowExecution.execute} does, then answers the Workflow JSON. */
  async #settledWorkflow(waitMs: number, waitUntilTaskRefs: readonly string[]): Promise<ActorResult<SettledWorkflow>> {
    const timedOut = await this.#settled(waitMs, new Set(waitUntilTaskRefs));
    // Removed while this call waited (it could finish meanwhile): there is nothing left to show.
    const execution = this.#execution;
    if (!execution || this.#removing) return refused(this.#notFound());
    const view = this.#workflowView(execution, true);
    return ok({ workflowJson: JSON.stringify(view), status: execution.status, timedOut, variablesJson: JSON.stringify(view.variables ?? {}) });
  }

  /**
   * Waits (at most `waitMs`) until this execution ends or waits on something from outside, through any
   * child it waits for: how a parent's execute call follows its children. Answers what it came to: "timedOut" when
   * the time ran out first (it still runs, busy), "waiting" when it waits on something from outside or, of its tasks
   * named in `until` (the parent's call's `waitUntilTaskRef`, which names a child's tasks too, as Conductor's
   * WorkflowSignalResponder reads them), one has ended.
   */
  async settle(waitMs: number, until: readonly string[] = []): Promise<"finished" | "waiting" | "timedOut" | "gone"> {
    this.#recover();
    const timedOut = await this.#settled(waitMs, new Set(until));
    const execution = this.#execution;
    if (!execution || this.#removing) return "gone";
    if (TERMINAL_WORKFLOW_STATUSES.has(execution.status)) return "finished";
    return timedOut ? "timedOut" : "waiting";
  }

  /**
   * What a parent reads of this execution as its child (see `ChildView`), as JSON text, or null when this object holds
   * no execution: its real output, which the Workflow JSON shows masked (see `masking.ts`).
   */
  async childViewJson(): Promise<string | null> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing) return null;
    const view: ChildView = { workflowName: execution.workflowName, workflowVersion: execution.workflowVersion, status: execution.status, output: execution.output, endTime: execution.endTime };
    if (TERMINAL_WORKFLOW_STATUSES.has(execution.status)) view.retryable = RETRYABLE_WORKFLOW_STATUSES.has(execution.status) && retryRefusal(execution) === undefined;
    if (execution.reasonForIncompletion !== undefined) view.reasonForIncompletion = execution.reasonForIncompletion;
    return JSON.stringify(view);
  }

  /** The Workflow JSON as text (the router sends it on unparsed), or null when this object holds no execution. */
  async getWorkflowJson(includeTasks: boolean): Promise<string | null> {
    this.#recover();
    // Being removed: its search row may already be gone, so it is gone for readers too.
    return this.#execution && !this.#removing ? this.#workflowJson(this.#execution, includeTasks) : null;
  }

  /**
   * Orkes' workflow size: how many bytes of task data the execution stores, against what it may store
   * (MAX_EXECUTION_BYTES, past which no further task instance is stored); null when this object holds no execution.
   */
  async getSize(): Promise<{ sizeBytes: number; limitBytes: number; ratio: number } | null> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing) return null;
    const sizeBytes = storedTasksBytes(execution.tasks);
    const limitBytes = this.#config.engine.maxExecutionBytes;
    return { sizeBytes, limitBytes, ratio: sizeBytes / limitBytes };
  }

  /** Conductor's Workflow JSON of `execution`, with the time its retention removes it, if it will. */
  #workflowJson(execution: Execution, includeTasks: boolean): string {
    return JSON.stringify(this.#workflowView(execution, includeTasks));
  }

  #workflowView(execution: Execution, includeTasks: boolean): WorkflowView {
    return toWorkflowView(execution, includeTasks, removalDueAt(execution, this.#config.executionRetentionMs));
  }

  /** The Task JSON of this execution's task `taskId` as text, or null when it has no such task (or no execution). */
  async getTaskJson(taskId: string): Promise<string | null> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing) return null;
    const task = execution.tasks.find((candidate) => candidate.taskId === taskId);
    return task === undefined ? null : JSON.stringify(toTaskView(task, execution));
  }

  /**
   * Conductor's pending task of a workflow by reference name (`GET /api/tasks/in_progress/{workflowId}/{taskRefName}`):
   * the Task JSON of its latest instance (as `taskByRef` finds it) while that has not ended; null otherwise.
   */
  async getPendingTaskJson(taskRefName: string): Promise<string | null> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing) return null;
    const task = taskByRef(execution, taskRefName);
    return task === undefined || TERMINAL_TASK_STATUSES.has(task.status) ? null : JSON.stringify(toTaskView(task, execution));
  }

  /** Task `taskId`'s log lines, oldest first; null when this execution has no such task (or there is no execution). */
  async getTaskLogs(taskId: string): Promise<TaskLogLine[] | null> {
    this.#recover();
    return this.#heldTask(taskId) === undefined ? null : this.#store.taskLog(taskId);
  }

  /**
   * Appends log lines to this execution's task `taskId` (Conductor's `POST /api/tasks/{taskId}/log`), whatever its
   * status, masked of the secret values its input was given (see {@link WorkflowExecution.#appendTaskLog}).
   */
  async addTaskLogs(taskId: string, logs: TaskLogInput[]): Promise<ActorResult<null>> {
    this.#recover();
    const task = this.#heldTask(taskId);
    if (task === undefined) return refused(new EngineError("NOT_FOUND", `Task ${taskId} not found`));
    const secrets = await this.#secretValues(this.#execution!, task);
    // Looked at again after the read: the execution may have been removed meanwhile, or the task dropped (a restart).
    if (this.#heldTask(taskId) === undefined) return refused(new EngineError("NOT_FOUND", `Task ${taskId} not found`));
    this.#appendTaskLog(taskId, logs, secrets);
    return ok(null);
  }

  /** This execution's task `taskId`; undefined when it has none (or there is no execution, or it is being removed). */
  #heldTask(taskId: string): TaskExecution | undefined {
    return this.#removing ? undefined : this.#execution?.tasks.find((candidate) => candidate.taskId === taskId);
  }

  /** The name of the definition this execution runs, or null when this object holds none. */
  async getWorkflowName(): Promise<string | null> {
    this.#recover();
    return this.#removing ? null : (this.#execution?.workflowName ?? null);
  }

  /**
   * The name of the definition this execution runs and its status, or null when this object holds none; with the
   * parent it is a sub workflow of, if any: what a bulk retry or restart orders its ids by when the search index does
   * not hold the execution yet (see routes/bulk.ts).
   */
  async getNameAndStatus(): Promise<ExecutionSummary | null> {
    this.#recover();
    const execution = this.#execution;
    if (this.#removing || !execution) return null;
    const summary: ExecutionSummary = { workflowName: execution.workflowName, status: execution.status };
    if (execution.parentWorkflowId !== undefined) summary.parentWorkflowId = execution.parentWorkflowId;
    return summary;
  }

  /**
   * What a TaskResult for `taskId` is scoped by, in one call: this execution's definition name and the
   * reference name and task name of that task (null when it is not one of this execution's own tasks, which the update
   * would refuse too). Null when this object holds no execution. A run of a DO_WHILE's loop task is scoped by its
   * definition's reference name (`approve`, not `approve__2`): the name grants are written for, whatever the iteration.
   */
  async getTaskScope(taskId: string): Promise<{ workflowName: string; taskRefName: string | null; taskName: string | null } | null> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing) return null;
    const task = execution.tasks.find((candidate) => candidate.taskId === taskId);
    return { workflowName: execution.workflowName, taskRefName: task === undefined ? null : definitionReferenceName(execution.definition, task), taskName: task?.taskDefName ?? null };
  }

  /**
   * What an update by reference name (`POST /api/tasks/{workflowId}/{taskRefName}/{status}`) is scoped by: as
   * {@link WorkflowExecution.getTaskScope}, for the task instance `updateTaskByRef` would update now. Null when this
   * object holds no execution.
   */
  async getTaskScopeByRef(taskRefName: string): Promise<{ workflowName: string; taskRefName: string | null; taskName: string | null } | null> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing) return null;
    const task = taskByRef(execution, taskRefName);
    return { workflowName: execution.workflowName, taskRefName: task === undefined ? null : definitionReferenceName(execution.definition, task), taskName: task?.taskDefName ?? null };
  }

  /** True when the task is part of this execution or of one of its children, at any depth. */
  async locateTask(taskId: string): Promise<boolean> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing) return false;
    if (execution.tasks.some((task) => task.taskId === taskId)) return true;
    for (const child of this.#childTasks(execution)) {
      if (await executionStub(this.env, child.subWorkflowId!).locateTask(taskId)) return true;
    }
    return false;
  }

  /**
   * The task a signal resolves (Conductor's `POST /api/tasks/{workflowId}/{status}/signal`): this execution's (see
   * `signalledWait`), else the first one found in a child it runs (depth first, see `signalledChildIds`); null when
   * nothing waits for a signal. NOT_FOUND when this object holds no execution.
   */
  async signalTarget(): Promise<ActorResult<SignalTarget | null>> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing) return refused(this.#notFound());
    const waiting = signalledWait(execution);
    if (waiting) return ok({ workflowId: execution.workflowId, taskId: waiting.taskId, taskRefName: definitionReferenceName(execution.definition, waiting) });
    for (const childId of signalledChildIds(execution)) {
      const found = await executionStub(this.env, childId).signalTarget();
      if (found.ok && found.value !== null) return found;
    }
    // Nothing waits for a signal: not an error of the workflow's (the callers say what it means to them).
    return ok(null);
  }

  // ---- RPC: lifecycle ---------------------------------------------------------------------

  /** Applies a lifecycle command (terminate, pause, resume, retry, restart, rerun, jump, upgrade), a task skip or an update of the variables. */
  async command(command: WorkflowCommand): Promise<ActorResult<null>> {
    const definition = command.type === "restart" || command.type === "upgrade" ? command.definition : undefined;
    if (definition !== undefined && needsInterpreters(definition)) await this.#loadInterpreters(definition);
    this.#recover();
    const environment = await this.#currentEnvironment(command, definition);
    // Read after that await: other calls may have changed the execution meanwhile.
    const execution = this.#execution;
    if (!execution) return refused(this.#notFound());
    if (this.#removing) return refused(this.#beingRemoved(execution));
    if (this.#childResume) return refused(this.#resumingChild(execution, this.#childResume));
    try {
      // Asked directly (not by its parent, which reopens itself): as Conductor, the parents follow.
      const tellParent = command.byParent !== true && execution.parentWorkflowId !== undefined;
      const fromTaskId = command.type === "rerun" ? command.fromTaskId : undefined;
      if (command.type === "rerun" && fromTaskId !== undefined && !execution.tasks.some((task) => task.taskId === fromTaskId)) {
        return await this.#rerunInChild(execution, { ...command, fromTaskId }, tellParent, environment);
      }
      if (command.type === "retry") {
        if (command.resumeSubworkflowTasks === true) {
          const resumed = await this.#retryInChild(execution, command.startScopes, tellParent, environment);
          if (resumed) {
            // Reopened to wait for its child again, it owes its parents that reopen as any retry does.
            if (resumed.ok && command.awaitParents === true) await this.#awaitParentReopen();
            return resumed;
          }
        }
        this.#reopen({ type: "retry", startScopes: command.startScopes, environment }, tellParent);
        if (command.awaitParents === true) await this.#awaitParentReopen();
        return ok(null);
      }
      const { byParent: _byParent, awaitParents, ...given } = command;
      const event = ENVIRONMENT_READING_COMMANDS.has(given.type) ? { ...given, environment } : given;
      if (event.type === "restart" || event.type === "rerun") {
        this.#reopen(event, tellParent);
        if (awaitParents === true) await this.#awaitParentReopen();
      } else this.#apply(event);
    } catch (error) {
      return refused(error);
    }
    // Applied and stored: a termination answers once the children it canceled are terminated too (see CHILD_TERMINATION_WAIT_MS).
    if (command.type === "terminate") await this.#awaitChildTerminations(execution.workflowId);
    return ok(null);
  }

  /**
   * Waits, at most {@link CHILD_TERMINATION_WAIT_MS}, for the owed terminations of children (jobs `terminate:<id>`, started
   * by the decision that canceled their SUB_WORKFLOW tasks) to be done, trying again within that time one that failed.
   * Never throws: one still failing at the end stays owed, and the alarm tries it again. One owed but not on its way (its last try failed: a terminate made again, by the router
   * or the client, finds the workflow already TERMINATED and decides nothing, so nothing else would send it before the
   * retry alarm) is sent again first, so that the repeat too answers once the children are terminated.
   */
  async #awaitChildTerminations(workflowId: string): Promise<void> {
    const deadline = Date.now() + CHILD_TERMINATION_WAIT_MS;
    for (;;) {
      if (!this.#removing) this.#syncChildTerminations(workflowId);
      const owed = [...this.#jobs].filter(([key]) => key.startsWith("terminate:")).map(([, settled]) => settled.catch(() => undefined));
      if (owed.length === 0) return;
      if ((await settledWithin(Promise.all(owed), deadline - Date.now())) === undefined) return;
      // One refused at once (its object overloaded or reset, or waiting for its own child's answer to a resume) is
      // tried again within the bound, not left to the retry alarm: answered now, the child would run on after the answer.
      if (Object.keys(this.#childTerminations).length === 0 || this.#removing || this.#execution === null) return;
      if (Date.now() + CHILD_TERMINATION_RETRY_MS >= deadline) return;
      await new Promise((resolve) => setTimeout(resolve, CHILD_TERMINATION_RETRY_MS));
    }
  }

  /**
   * Merges `variables` into the execution's (the `updateVariables` command) for the router's `request` (see
   * {@link RepeatableRequest}): any call of it, the first too (it may come after its repeat), that finds the record
   * another call of it left answers as that one did and applies nothing, and one that finds none applies as a first
   * call does (an ended execution refuses it). No await: checked, applied and recorded in one synchronous turn, so in
   * one transaction. A guess from the variables (a repeat finding them holding every value given) answered 200 for an
   * update refused, and merged again over a key another request had changed in between.
   */
  async updateVariables(variables: JsonObject, request?: RepeatableRequest): Promise<ActorResult<null>> {
    this.#recover();
    const execution = this.#execution;
    if (!execution) return refused(this.#notFound());
    if (request !== undefined && this.#store.appliedRequest(request.id) !== undefined) return ok(null);
    if (this.#removing) return refused(this.#beingRemoved(execution));
    if (this.#childResume) return refused(this.#resumingChild(execution, this.#childResume));
    try {
      this.#apply({ type: "updateVariables", variables });
    } catch (error) {
      return refused(error);
    }
    // In the update's synchronous turn, so in its transaction (see ExecutionStore.recordAppliedRequest).
    if (request !== undefined) this.#store.recordAppliedRequest(request.id, null, Date.now());
    return ok(null);
  }

  /**
   * For a command that runs tasks again ({@link ENVIRONMENT_READING_COMMANDS}): the environment variables the
   * definition it will run names (`definition`, a restart's latest or an upgrade's, else the execution's), as they are
   * now in D1; `{}` to drop those kept when it names none. Undefined for any other command, or with no execution.
   */
  async #currentEnvironment(command: WorkflowCommand, definition: WorkflowDef | undefined): Promise<Record<string, string> | undefined> {
    const execution = this.#execution;
    if (!ENVIRONMENT_READING_COMMANDS.has(command.type) || !execution) return undefined;
    const names = environmentVariablesOf(definition ?? execution.definition);
    return names.length === 0 ? {} : new EnvironmentRepository(this.env.DB).currentValuesOf(names);
  }

  /**
   * The parent's SUB_WORKFLOW task that started this child was canceled (the parent ended): terminates it. A
   * child not started yet may still have its start on its way (the parent's dispatch and its end run
   * concurrently, and a 404 here proves nothing): it keeps a tombstone that refuses that start. Answers ok once
   * the parent owes this execution nothing more; a refusal means "not yet", and the parent tries again.
   */
  async terminateAsChild(parentWorkflowId: string, reason: string): Promise<ActorResult<null>> {
    this.#recover();
    if (this.#execution) {
      const result = this.#terminateForParent(this.#execution, reason);
      // Its own children too, before the answer, as the parent's termination waits for this one's.
      if (result.ok) await this.#awaitChildTerminations(this.#execution.workflowId);
      return result;
    }
    if (this.#canceledByParent === undefined) {
      this.#canceledByParent = parentWorkflowId;
      this.#store.setMeta("canceledByParent", parentWorkflowId);
      this.#alarmAt = Date.now() + TOMBSTONE_KEEP_MS;
      this.#armAlarm(this.#alarmAt);
    }
    return ok(null);
  }

  /**
   * An execution that already ended (or is being removed, which only an ended one can be) needs nothing more.
   * One waiting for its own child to accept a resume is refused instead: it may be about to run again, and a
   * termination taken as done now would leave it (and that child) running after its parent ended.
   */
  #terminateForParent(execution: Execution, reason: string): ActorResult<null> {
    if (this.#removing) return ok(null);
    if (this.#childResume) return refused(this.#resumingChild(execution, this.#childResume));
    if (TERMINAL_WORKFLOW_STATUSES.has(execution.status)) return ok(null);
    try {
      this.#apply({ type: "terminate", reason });
      return ok(null);
    } catch (error) {
      return refused(error);
    }
  }

  /** The start a tombstone waited for has come and been refused, or never will: the object is emptied. */
  async #forgetTombstone(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.#store.forgetTables();
    this.#messages.forgetTable();
    this.#canceledByParent = undefined;
    this.#removed = false;
    this.#startAbandoned = false;
  }

  /**
   * The start of this id that an idempotency key's claim announced is given up, the key about to go to another start
   * (a FAIL or FAIL_ON_RUNNING start finding the key's claim with nothing started: see `takeOverKey`). Answers the
   * execution's status when that start came after all; otherwise leaves a tombstone (kept {@link TOMBSTONE_KEEP_MS},
   * as a removal's) refusing it, should it still come, so that it never runs beside the execution the key goes to, and
   * answers null. This runs in one synchronous turn, as `start`'s checks and first decision do: the start lands
   * before it, and is answered here, or after it, refused.
   */
  async abandonStart(): Promise<WorkflowStatus | null> {
    this.#recover();
    if (this.#execution) return this.#execution.status;
    // A removal's tombstone already refuses any start of this id (and says why).
    if (!this.#removed) {
      this.#removed = true;
      this.#startAbandoned = true;
      this.#store.setMeta("removed", ABANDONED_START_MARK);
      this.#alarmAt = Date.now() + TOMBSTONE_KEEP_MS;
      this.#armAlarm(this.#alarmAt);
    }
    return null;
  }

  /**
   * Deletes the execution and its search row. Only a finished execution can be removed, and only once it has
   * told its parents that it finished and terminated the children it canceled: that work is tried once more
   * here, and while it is still owed the removal is refused, since a removed execution can no longer do it.
   * Once begun, a removal always completes (see {@link WorkflowExecution.#removing}); a second call waits for
   * the same one.
   */
  async remove(): Promise<ActorResult<null>> {
    this.#recover();
    if (!this.#removing && this.#execution && !this.#removalRefusal(this.#execution) && this.#owedWorkRefusal(this.#execution)) {
      await this.#deliverOwedWork(this.#execution);
    }
    const execution = this.#execution;
    if (!execution) return refused(this.#notFound());
    // Checked (again, after delivering owed work): the execution may have been reopened, or another call began the removal.
    if (!this.#removing) {
      const refusal = this.#removalRefusal(execution) ?? this.#owedWorkRefusal(execution);
      if (refusal) return refused(refusal);
      // Synchronous, so stored (output gate) before the row's deletion leaves; from here on #apply refuses changes.
      this.#removing = true;
      this.#store.setMeta("removing", "1");
      clearTimeout(this.#indexRowTimer);
      this.#indexRowTimer = undefined;
      // Evicted before the next request, the alarm finishes the removal.
      this.#alarmAt = Date.now() + BACKGROUND_SAFETY_MS;
      this.#armAlarm(this.#alarmAt);
    }
    await this.#finishRemoval();
    return ok(null);
  }

  /** Why this execution cannot begin a removal now, if it cannot (before its owed work is looked at). */
  #removalRefusal(execution: Execution): EngineError | undefined {
    if (!TERMINAL_WORKFLOW_STATUSES.has(execution.status)) {
      return new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId}: its status is ${execution.status}; terminate it first`);
    }
    if (this.#childResume) return this.#resumingChild(execution, this.#childResume);
    return undefined;
  }

  /**
   * Refuses a removal while a parent has not heard that this execution finished, a canceled child is not terminated
   * yet, its failure workflow is not started yet, a limited task's place is not given back to its queue yet or a
   * canceled task is not taken out of its worker queue yet.
   */
  #owedWorkRefusal(execution: Execution): EngineError | undefined {
    const finished = finishSignature(execution);
    if (this.#parentReopen) {
      return new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId} yet: it is still notifying its parent workflow that it ran again; try again shortly`);
    }
    if (this.#watchers.some((watcher) => watcher.notified !== finished)) {
      return new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId} yet: it is still notifying its parent workflow that it finished; try again shortly`);
    }
    if (Object.keys(this.#childTerminations).length > 0) {
      return new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId} yet: it is still terminating its children; try again shortly`);
    }
    if (this.#failureStarts.length > 0) {
      return new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId} yet: it is still starting its failure workflow (or one a human task's trigger names); try again shortly`);
    }
    if (this.#statusPublications.length > 0) {
      return new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId} yet: it is still publishing its status; try again shortly`);
    }
    if (this.#releases.size > 0) {
      return new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId} yet: it is still giving its tasks' places back to their worker queues; try again shortly`);
    }
    // A removed execution no longer takes its canceled tasks out of their queues, whose sizes would count them until a
    // worker's poll came to them (Conductor's removeWorkflow takes each task out of its queue).
    if (this.#queuePushes.size > 0) {
      return new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId} yet: it is still taking its tasks out of their worker queues; try again shortly`);
    }
    if (this.#testQueues.size > 0) {
      return new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId} yet: it is still taking its test run's worker queues out of the queue listings; try again shortly`);
    }
    if (this.#limitLeaves.size > 0) {
      return new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId} yet: it is still giving its place back to its rate limit; try again shortly`);
    }
    if (this.#placeLeaves.size > 0 || this.#placeTakes.size > 0) {
      return new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId} yet: it is still giving its limited tasks' places back to their task definitions' limits; try again shortly`);
    }
    return undefined;
  }

  /**
   * Tries owed notices to parents, terminations of children, starts of failure workflows and worker-queue changes now (joining any attempt already running), and waits
   * for them: a second round for the finish notices that waited for a parent's reopen delivered in the first.
   */
  async #deliverOwedWork(execution: Execution): Promise<void> {
    for (let round = 0; round < 2; round++) {
      const current = this.#execution;
      if (!current || this.#removing) return;
      this.#syncParentReopen();
      this.#syncWatchers(current);
      this.#syncChildTerminations(execution.workflowId);
      this.#syncFailureStarts();
      this.#syncStatusPublications();
      this.#syncReleases(current);
      this.#syncQueuePushes();
      this.#syncExecutionLimit();
      this.#syncTaskPlaces(current);
      // A test run's queues are delisted by their push jobs (see #testQueues), waited for with the other pushes.
      const owedJob = (key: string) =>
        key === LIMIT_JOB ||
        key === TASK_PLACE_JOB ||
        key === "parentReopen" ||
        key.startsWith("notify:") ||
        key.startsWith("terminate:") ||
        key.startsWith(FAILURE_START_META) ||
        key.startsWith(STATUS_PUBLICATION_META) ||
        key.startsWith(RELEASE_META) ||
        key.startsWith(QUEUE_PUSH_META);
      const owed = [...this.#jobs].filter(([key]) => owedJob(key)).map(([, settled]) => settled);
      if (owed.length === 0) return;
      await Promise.all(owed);
    }
  }

  /**
   * Sets the alarm without waiting for it: storage calls are ordered and covered by the output gate, so nothing this
   * turn sends leaves the object before the alarm is stored. A write that fails resets the object (an abort, a storage
   * failure) with the turn's other writes, and its next instance starts from the state stored before, alarm included;
   * the call's rejection has nothing left to do, and left alone it would be reported as unhandled.
   * A deadline past what an alarm can hold (a WAIT until 2200, a timeout of centuries) arms the latest alarm there
   * is: `setAlarm` refuses a later date, and the refusal, ignored here, left such an execution with no alarm at all.
   * Woken then with nothing due, the execution arms its alarm again, unless that latest time has passed: armed at
   * once again and again, the alarm would spin.
   */
  #armAlarm(at: number): void {
    const armed = at > LATEST_ALARM_MILLIS && Date.now() < LATEST_ALARM_MILLIS ? LATEST_ALARM_MILLIS : at;
    this.ctx.storage.setAlarm(armed).catch(ignoreResetObject);
  }

  /** Deletes the alarm without waiting for it, as {@link #armAlarm} sets it. */
  #disarmAlarm(): void {
    this.ctx.storage.deleteAlarm().catch(ignoreResetObject);
  }

  /**
   * Writes the search row a removal finds still owed (a write that failed and waits for its retry, which the removal
   * stops), before the row is deleted: the writer counts the metrics from the rows it writes, so a row never written
   * leaves the execution's start or ending uncounted, where the metrics keep a removed execution counted. Through the
   * same writer, so the delete that follows is ordered after it.
   *
   * A refusal does not stop the removal: the delete that follows decides. When D1 is failing, it fails too, and the
   * removal (this write with it) is tried again; when it goes through, D1 refused this row alone (its content, such as
   * a text past D1's 2 MB limit), which every retry would send again: the removal then completes, the row uncounted,
   * rather than never.
   */
  async #writeOwedRow(writer: DurableObjectStub<ExecutionIndexWriter>): Promise<void> {
    const execution = this.#execution!;
    const signature = indexSignature(execution);
    if (signature === this.#indexedSignature) return;
    const outcome = await writer.upsert(indexRow(execution, this.#indexedSignature === undefined, this.#nextIndexSequence()));
    if (!outcome.ok) {
      console.error(JSON.stringify({ msg: "owed search row refused; removing without it", workflowId: execution.workflowId, error: outcome.error }));
      return;
    }
    this.#indexedSignature = signature;
    this.#store.setMeta("indexed", signature);
  }

  /** Runs the begun removal, once at a time; a failure leaves it owed and the alarm tries it again. */
  #finishRemoval(): Promise<void> {
    this.#removal ??= this.#deleteEverything().catch((error: unknown) => {
      this.#removal = undefined;
      const attempt = ++this.#removalFailures;
      if (retryFailureLogged(attempt)) console.error(JSON.stringify({ msg: "removal failed; will retry", workflowId: this.#execution?.workflowId, attempt, error: String(error) }));
      this.#alarmAt = Date.now() + RETRY_BACKGROUND_MS;
      this.#armAlarm(this.#alarmAt);
      throw error;
    });
    return this.#removal;
  }

  /**
   * The search row and the idempotency key first (through the writer: after any write of this execution still
   * queued there), then the storage. The key goes with the row so that a RETURN_EXISTING start with it, once
   * this object is empty, is a new execution under a new id rather than a second run of this one.
   */
  async #deleteEverything(): Promise<void> {
    const { workflowId, workflowName, idempotencyKey, createTime } = this.#execution!;
    const held = idempotencyKey === undefined ? undefined : { workflowName, key: idempotencyKey };
    // A row write still on its way goes first: calls through two stubs are not ordered, and one landing after the
    // deletion would be refused by the tombstone the deletion leaves, what it shows left uncounted.
    await this.#jobs.get("index")?.catch(() => undefined);
    const writer = indexWriterAt(this.env, this.#indexWriterShard(workflowId));
    await this.#writeOwedRow(writer);
    // Its tombstone, by its create time, refuses a row write of it landing after the delete (see `deleteIndexRow`).
    expectIndexWritten(await writer.delete(workflowId, held, createTime), "deleting the search row");
    // The alarm goes with the storage, in the one call (compatibility date 2026-02-24 on): no eviction can come
    // between the two and leave a flagged removal with no alarm to finish it.
    await this.ctx.storage.deleteAll();
    this.#alarmAt = null;
    this.#store.forgetTables();
    this.#messages.forgetTable();
    // The tombstone the removal leaves (see #removed), emptied by the alarm.
    this.#removed = true;
    this.#store.setMeta("removed", "1");
    this.#alarmAt = Date.now() + TOMBSTONE_KEEP_MS;
    this.#armAlarm(this.#alarmAt);
    this.#execution = null;
    this.#indexedSignature = undefined;
    // Its row is deleted: a start of the id again (refused while the object's own `removed` mark lasts, an hour; D1's
    // tombstone then lets the later execution's rows in) numbers its writes afresh.
    this.#indexSequence = 0;
    this.#indexSequenceBlockEnd = undefined;
    this.#indexShard = undefined;
    this.#watchers = [];
    this.#childTerminations = {};
    this.#childrenLetGo = [];
    this.#failureStarts = [];
    this.#statusPublications = [];
    this.#queuePushes.clear();
    this.#testQueues.clear();
    this.#releases.clear();
    this.#limitLeaves.clear();
    this.#limitEntry = undefined;
    this.#placeLeaves.clear();
    this.#placeTakes.clear();
    this.#placesAsked.clear();
    this.#cacheWrites.clear();
    this.#parentReopen = undefined;
    this.#removing = false;
    this.#removal = undefined;
    this.#removalFailures = 0;
  }

  // ---- RPC: tasks completed from outside -----------------------------------------------------

  /**
   * True: this object keeps the records of the requests it applied (see {@link RepeatableRequest}). The router asks
   * before it repeats a call a reset cut off: an object still on code from before the records (a deploy's first
   * moments, a gradual deployment's previous version) has no such method, ignores the request's id, and would apply a
   * repeat of a call that landed again (an update by reference on the reference's next task).
   */
  keepsAppliedRequests(): boolean {
    return true;
  }

  /**
   * Completes, fails or updates the pending task with reference name `taskRefName` (as `taskByRef` finds it).
   * `checkedTaskName`: the task name the caller's permission was checked against (a grant on the task's name, not on
   * the reference name or the workflow), refused unless the instance found here still has it: the latest instance of
   * a reference name can change between that check and this update (a rerun, an upgrade to another version).
   * `workerId`: the reporting worker (Conductor's `?workerid=`), the task's worker from then on.
   * A caller's update of a reference whose latest task has ended finds no task to update: a 409, as the pinned contract
   * has it ("409 when no such task is pending"; Orkes answers 404, which its clients also read as an error).
   * `request`: the router's request (see {@link RepeatableRequest}). Its repeat after a reset finds the record the first
   * left if that one landed, and answers with the task it updated, applying nothing: a blind repeat would find the
   * reference's next task (a FAILED task's retry, a loop's next iteration) and update that one too.
   */
  async updateTaskByRef(
    taskRefName: string,
    status: ExternalTaskStatus,
    output: JsonObject,
    from?: TaskUpdateFrom,
    checkedTaskName?: string,
    workerId?: string,
    request?: RepeatableRequest,
  ): Promise<ActorResult<TaskUpdated>> {
    this.#recover();
    // Read by the first call too, not only by a repeat: the repeat goes through a fresh stub, and calls through two stubs
    // are not ordered, so a first call may reach the object after its repeat applied (then, applied blindly, it would
    // find the reference's next task). One lookup by primary key; none while the object has no table of them.
    const applied = request === undefined ? undefined : this.#appliedTaskUpdate(request.id);
    if (applied !== undefined) return applied;
    const options = {
      ...(from === undefined ? {} : { from, ...(from.reason === undefined ? {} : { reason: from.reason }) }),
      ...(workerId === undefined ? {} : { workerId }),
    };
    let found = this.#taskToUpdateByRef(taskRefName, from, checkedTaskName);
    for (let reads = 0; found.ok; reads++) {
      const task = found.value;
      // Without secrets to read, nothing runs in between: the task found is the one to update.
      if (this.#namedSecrets(this.#execution!, task) === undefined) return this.#recordedIfApplied(request, this.#applyTaskUpdate(task.taskId, status, output, options, []));
      const secrets = await this.#secretValues(this.#execution!, task);
      // A repeat of this request may have applied it meanwhile (the router lost this call's connection, not the object):
      // answered as that one was, rather than found again, which would find the reference's next task.
      const appliedMeanwhile = request === undefined ? undefined : this.#appliedTaskUpdate(request.id);
      if (appliedMeanwhile !== undefined) return appliedMeanwhile;
      // Found again after the read, by the same rules: another update may have ended the task meanwhile (its caller
      // then gets the 409 it would have got after that update), or a retry given the reference a new task.
      const again = this.#taskToUpdateByRef(taskRefName, from, checkedTaskName);
      if (!again.ok) return again;
      if (again.value.taskId === task.taskId) return this.#recordedIfApplied(request, this.#applyTaskUpdate(task.taskId, status, output, options, secrets));
      if (reads + 1 >= MAX_REF_UPDATE_READS) {
        return refused(new EngineError("CONFLICT", `Task ${taskRefName} of workflow ${this.#execution!.workflowId} kept changing while this update was being applied; try again`));
      }
      found = again;
    }
    return found;
  }

  /** What a task update (by reference or by id) for request `requestId` answered, when this object applied it (see RepeatableRequest); else undefined. */
  #appliedTaskUpdate(requestId: string): ActorResult<TaskUpdated> | undefined {
    const applied = this.#store.appliedRequest(requestId);
    if (applied === undefined) return undefined;
    const task = applied.taskId === null ? undefined : this.#execution?.tasks.find((candidate) => candidate.taskId === applied.taskId);
    return ok(task === undefined ? { taskId: applied.taskId ?? "" } : this.#taskUpdated(task));
  }

  /**
   * `result` of an update made for the router's `request`, recorded with it when it applied (see
   * ExecutionStore.recordAppliedRequest). Called in the update's synchronous turn, so in its transaction.
   */
  #recordedIfApplied(request: RepeatableRequest | undefined, result: ActorResult<TaskUpdated>): ActorResult<TaskUpdated> {
    if (request !== undefined && result.ok) this.#store.recordAppliedRequest(request.id, result.value.taskId, Date.now());
    return result;
  }

  /**
   * The task an update by reference name applies to (see {@link WorkflowExecution.updateTaskByRef}), or why there is none:
   * checked before and again after the await of the update, which other calls may come in during.
   */
  #taskToUpdateByRef(taskRefName: string, from: TaskUpdateFrom | undefined, checkedTaskName: string | undefined): ActorResult<TaskExecution> {
    const execution = this.#execution;
    if (!execution) return refused(this.#notFound());
    const task = (from === undefined ? undefined : execution.tasks.findLast((candidate) => candidate.updatedByTask === from.byTask)) ?? taskByRef(execution, taskRefName);
    if (!task) return refused(noTaskWithRef(execution, taskRefName));
    if (checkedTaskName !== undefined && task.taskDefName !== checkedTaskName) {
      return refused(new EngineError("FORBIDDEN", `Task ${taskRefName} of workflow ${execution.workflowId} is no longer a ${checkedTaskName} task, which your permission was checked for; try again`));
    }
    if (from === undefined && !isPending(task)) {
      return refused(new EngineError("CONFLICT", `Found no running task ${taskRefName} of workflow ${execution.workflowId} to update: its latest, ${task.taskId}, is ${task.status}`));
    }
    return ok(task);
  }

  /**
   * Orkes' update of a workflow's state: merges `update.variables` into the variables and applies `update.task`'s
   * result in one decision, so a refusal of either changes nothing; then waits, answers and is answered as
   * {@link WorkflowExecution.execute} (the state reached, at most `waitMs` later or once a `waitUntilTaskRefs` task
   * has completed). `request`: the router's request (see {@link RepeatableRequest}); its repeat after a reset that cut
   * off a first call which applied only waits and answers, as that call would have: a blind repeat would apply the
   * task's result to its reference's next task (a retry, a loop's next iteration).
   */
  async updateState(update: StateUpdate, waitMs: number, waitUntilTaskRefs: readonly string[], request?: RepeatableRequest): Promise<ActorResult<SettledWorkflow>> {
    this.#recover();
    const execution = this.#execution;
    if (!execution) return refused(this.#notFound());
    // Read by the first call too (see updateTaskByRef): it may come after its repeat.
    if (request !== undefined && this.#store.appliedRequest(request.id) !== undefined) return this.#settledWorkflow(waitMs, waitUntilTaskRefs);
    const events: ExecutionEvent[] = [];
    if (update.variables !== undefined) events.push({ type: "updateVariables", variables: update.variables });
    const result = update.task;
    let updated: { taskId: string; secrets: string[] } | undefined;
    if (result !== undefined) {
      const { taskId, taskRefName } = result;
      const task = taskId !== undefined ? execution.tasks.find((candidate) => candidate.taskId === taskId) : taskByRef(execution, taskRefName ?? "");
      if (!task) return refused(taskId !== undefined ? new EngineError("NOT_FOUND", `Workflow ${execution.workflowId} has no task ${taskId}`) : noTaskWithRef(execution, taskRefName ?? ""));
      updated = { taskId: task.taskId, secrets: await this.#secretValues(execution, task) };
      // A repeat of this request may have applied it meanwhile (see updateTaskByRef): only the wait is left.
      if (request !== undefined && this.#store.appliedRequest(request.id) !== undefined) return this.#settledWorkflow(waitMs, waitUntilTaskRefs);
      events.push(this.#externalUpdateEvent(task.taskId, result, updated.secrets));
    }
    if (!this.#execution) return refused(this.#notFound());
    try {
      this.#applyAll(events);
    } catch (error) {
      return refused(error);
    }
    // In the update's synchronous turn, so in its transaction (see ExecutionStore.recordAppliedRequest).
    if (request !== undefined) this.#store.recordAppliedRequest(request.id, updated?.taskId ?? null, Date.now());
    if (updated !== undefined && result !== undefined) {
      // In the same synchronous turn as the update, so in its transaction (as `updateTask` stores a result's lines).
      if ((result.logs?.length ?? 0) > 0 && this.#heldTask(updated.taskId) !== undefined) this.#appendTaskLog(updated.taskId, result.logs!, updated.secrets);
      if (result.status !== "IN_PROGRESS") this.#inFlight.get(updated.taskId)?.abort();
    }
    return this.#settledWorkflow(waitMs, waitUntilTaskRefs);
  }

  /** The `externalUpdate` event of `result` for task `taskId`, scrubbed of the values of `secrets` (see `updateTask`). */
  #externalUpdateEvent(taskId: string, result: TaskResultInput & { from?: TaskUpdateFrom }, secrets: readonly string[]): ExecutionEvent {
    const scrub = <T extends JsonValue>(value: T): T => (secrets.length > 0 ? redactSecretValues(value, secrets) : value);
    const event: ExecutionEvent = { type: "externalUpdate", taskId, status: result.status, output: scrub(result.output) };
    if (result.reason !== undefined) event.reason = scrub(result.reason);
    if (result.callbackAfterSeconds !== undefined) event.callbackAfterSeconds = result.callbackAfterSeconds;
    if (result.oversizeFailsTask === true) event.oversizeFailsTask = true;
    if (result.workerId !== undefined) event.workerId = result.workerId;
    if (result.replaceOutput === true) event.replaceOutput = true;
    if (result.from !== undefined) {
      event.byTask = result.from.byTask;
      event.replaceOutput = result.from.replaceOutput;
    }
    return event;
  }

  /**
   * Completes, fails or updates one task instance by id (a TaskResult: `reason` is its reasonForIncompletion, and
   * `callbackAfterSeconds` delays the next poll of a SIMPLE task reported IN_PROGRESS, which goes back to its queue SCHEDULED).
   * `request`: the router's request (see {@link RepeatableRequest}), for an update whose late call must be known, not
   * guessed (the by-id queue update, a signal's update of its WAIT, a worker's TaskResult): any call of it that finds the record another left answers with that task and
   * applies nothing, and one that finds none applies as a first call does (a task no longer pending is refused).
   */
  async updateTask(
    taskId: string,
    status: ExternalTaskStatus,
    output: JsonObject,
    options: TaskUpdateOptions & { lateIsTaken?: true | "endedAlike" } = {},
    request?: RepeatableRequest,
  ): Promise<ActorResult<TaskUpdated>> {
    this.#recover();
    const execution = this.#execution;
    if (!execution) return refused(this.#notFound());
    const reported = execution.tasks.find((candidate) => candidate.taskId === taskId);
    // Whoever reports the task may have been handed the real values of the secrets its input names (a worker its input,
    // the service an asyncComplete HTTP call reached its request): one echoed back is scrubbed before it is stored and
    // shown, as an HTTP task's response is; so are its log lines.
    const secrets = reported === undefined ? [] : await this.#secretValues(execution, reported);
    if (!this.#execution) return refused(this.#notFound());
    // Read by the first call too (see updateTaskByRef), after the await: checked, applied and recorded in one turn.
    const applied = request === undefined ? undefined : this.#appliedTaskUpdate(request.id);
    if (applied !== undefined) return applied;
    // `lateIsTaken: true` answers a result for a task no longer pending as taken, changing nothing, as Conductor answers
    // it: sent only by a router on the code before `POST /api/tasks` refused such a result with the contract's 409 (a
    // gradual deployment's previous version), which repeats a call cut off without the request's id.
    const current = this.#execution.tasks.find((candidate) => candidate.taskId === taskId);
    // "endedAlike" is a repeat guessing (a signal's, a by-id queue update's): a task found ended with its status taken as its own. The router sends it
    // for an object on the code before the request's id (which ignores the id); a call with the id knows from the record
    // read above, so here it is only heeded without one (a router on that older code).
    const guessed = options.lateIsTaken === "endedAlike" && request === undefined && current !== undefined && mayHaveEndedAs(current.status, status);
    if (current !== undefined && !isPending(current) && (options.lateIsTaken === true || guessed)) {
      return ok(this.#taskUpdated(current));
    }
    return this.#recordedIfApplied(request, this.#applyTaskUpdate(taskId, status, output, options, secrets));
  }

  /** Applies an update of task `taskId` (see {@link WorkflowExecution.updateTask}) with the values of `secrets` scrubbed, in one synchronous turn. */
  #applyTaskUpdate(taskId: string, status: ExternalTaskStatus, output: JsonObject, options: TaskUpdateOptions, secrets: readonly string[]): ActorResult<TaskUpdated> {
    const logs = options.logs ?? [];
    try {
      this.#apply(this.#externalUpdateEvent(taskId, { status, output, ...options }, secrets));
      // In the same synchronous turn as the update, so in its transaction: a refused update (thrown above) logs nothing.
      if (logs.length > 0 && this.#heldTask(taskId) !== undefined) this.#appendTaskLog(taskId, logs, secrets);
      if (status !== "IN_PROGRESS") this.#inFlight.get(taskId)?.abort();
      const task = this.#execution!.tasks.find((candidate) => candidate.taskId === taskId);
      return ok(task === undefined ? { taskId } : this.#taskUpdated(task));
    } catch (error) {
      return refused(error);
    }
  }

  /** What an update of `task` answers: its id, and for a worker's (SIMPLE) task the queue its next task comes from. */
  #taskUpdated(task: TaskExecution): TaskUpdated {
    if (task.taskType !== "SIMPLE") return { taskId: task.taskId };
    return { taskId: task.taskId, worker: task.domain === undefined ? { taskName: task.taskDefName } : { taskName: task.taskDefName, domain: task.domain } };
  }

  // ---- RPC: Orkes' human tasks ---------------------------------------------------------------

  /** Orkes' HumanTaskEntry JSON of this execution's HUMAN task `taskId` (as text); null when it has no such HUMAN task. */
  async getHumanTask(taskId: string): Promise<string | null> {
    this.#recover();
    const task = this.#heldTask(taskId);
    return task?.taskType === "HUMAN" ? JSON.stringify(humanTaskEntry(task, this.#execution!)) : null;
  }

  /**
   * The id of the HUMAN task with reference name `taskRefName`: of a task in a loop, the run of iteration `iteration`,
   * or the latest run when none is given. Null when there is none.
   */
  async humanTaskIdByRef(taskRefName: string, iteration?: number): Promise<string | null> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing) return null;
    const named = (task: TaskExecution) =>
      task.taskType === "HUMAN" && (iteration === undefined ? task.referenceTaskName === taskRefName || definitionReferenceName(execution.definition, task) === taskRefName : definitionReferenceName(execution.definition, task) === taskRefName && task.iteration === iteration);
    return execution.tasks.findLast(named)?.taskId ?? null;
  }

  /** Applies a human task action by `caller` (the decider's `humanAction` event) and answers with the entry (JSON text) as it then stands. */
  async humanAction(taskId: string, caller: HumanCaller, action: HumanAction): Promise<ActorResult<string>> {
    this.#recover();
    if (this.#heldTask(taskId) === undefined) return refused(new EngineError("NOT_FOUND", `Human task ${taskId} not found`));
    try {
      this.#apply({ type: "humanAction", taskId, caller, action });
    } catch (error) {
      return refused(error);
    }
    return ok(JSON.stringify(humanTaskEntry(this.#heldTask(taskId)!, this.#execution!)));
  }

  /**
   * Saves (`complete` false) or submits the form of HUMAN task `taskId` for `caller` (the decider's `humanUpdate` event),
   * scrubbed of the secret values its input was given as any update from outside is.
   */
  async humanUpdate(taskId: string, caller: HumanCaller, output: JsonObject, complete: boolean, formSchema?: JsonObject): Promise<ActorResult<null>> {
    this.#recover();
    const task = this.#heldTask(taskId);
    if (task === undefined) return refused(new EngineError("NOT_FOUND", `Human task ${taskId} not found`));
    const secrets = await this.#secretValues(this.#execution!, task);
    if (this.#heldTask(taskId) === undefined) return refused(new EngineError("NOT_FOUND", `Human task ${taskId} not found`));
    const scrubbed = secrets.length > 0 ? redactSecretValues(output, secrets) : output;
    try {
      this.#apply(formSchema === undefined ? { type: "humanUpdate", taskId, caller, output: scrubbed, complete } : { type: "humanUpdate", taskId, caller, output: scrubbed, complete, formSchema });
    } catch (error) {
      return refused(error);
    }
    return ok(null);
  }

  /**
   * A worker's heartbeat for task `taskId` (a TaskResult with `extendLease`): a SIMPLE task its worker holds gets
   * `responseTimeoutSeconds` from now to be reported; any other task is left as it is. 404 for an unknown task only.
   */
  async extendLease(taskId: string): Promise<ActorResult<TaskUpdated>> {
    this.#recover();
    if (!this.#execution) return refused(this.#notFound());
    try {
      this.#apply({ type: "leaseExtended", taskId });
      return ok({ taskId });
    } catch (error) {
      return refused(error);
    }
  }

  /**
   * A worker's poll took SIMPLE task `taskId` from its queue (see {@link PollAnswer}): {@link pollTasks} of that one
   * entry. `holdsPlace`: the queue counts the task among those held at once (see `LeasedTask`). The router no longer
   * calls it; it stays for a router of the version before, which calls it while a deploy reaches every isolate.
   */
  async pollTask(taskId: string, workerId: string | undefined, holdsPlace = false): Promise<PollAnswer> {
    const [answer] = await this.pollTasks([{ taskId, holdsPlace }], workerId);
    return answer!;
  }

  /**
   * A worker's poll took these SIMPLE tasks of this execution from their queue: one {@link PollAnswer} per entry, in
   * order. Exactly one poll gets a task: the decision that hands it out is this object's, one at a time. The worker
   * receives the input with the real values of the secrets it names, as an HTTP task sends them; the stored input keeps
   * them masked; a secret that is missing fails its task instead ("gone"), as does an input that with the secrets' values
   * is over MAX_PAYLOAD_BYTES or cannot be built; a read that fails holds back only the tasks it was for ("later": their
   * entries come back after the lease). `holdsPlace`: the queue counts the task among those held
   * at once (see `LeasedTask`), so it is released once no longer held. Every input is read first (the only await: one
   * read of the secrets they name), then all the tasks are handed out in one synchronous turn, so in one transaction: a
   * batch poll costs one call and one commit per execution, not one per task. The answers are its own tasks' views, so
   * together no larger than its Workflow JSON, which `maxExecutionBytes` keeps under the 32 MiB of an RPC answer, and
   * the inputs with secrets' values no more than room is left for (see POLL_ANSWER_BYTES): the tasks past it answer
   * "later", their entries coming back after the lease. A batch poll's `share` of its answer (see {@link PollShare})
   * bounds the inputs too, those without secrets included: the tasks past it answer "unsent" with their sizes.
   */
  async pollTasks(entries: readonly PollEntry[], workerId: string | undefined, share?: PollShare): Promise<PollAnswer[]> {
    this.#recover();
    // Each looked at before the read. The secrets all the tasks name are read at once, one query however many tasks:
    // one per task would make a batch of 100 a hundred D1 queries in this one invocation, past the 50 Workers Free allows.
    const befores = entries.map((entry) => this.#waitingForPoll(entry.taskId));
    const named = befores.map((before) => (before.outcome === "waiting" ? this.#namedSecrets(before.execution, before.task) : undefined));
    const names = named.flatMap((secrets) => secrets?.names ?? []);
    const lookup = names.length === 0 ? undefined : await readSecrets(this.env, names).catch((error: unknown) => ({ failed: error }));
    // Read before the task is handed out: a missing secret fails it instead, so no worker gets a task it cannot run.
    // A read that fails (the secrets' query, a resolution that throws) holds back the tasks it was for only: the
    // others still go to this poll's worker.
    // Room for the inputs with secrets' values in this answer (see POLL_ANSWER_BYTES); the first always fits. A poll's
    // share (a router of this version gives one) bounds every input, with secrets or not, the first too unless `oneAnyway`.
    let room = Math.min(POLL_ANSWER_BYTES - this.#config.engine.maxExecutionBytes, share?.bytes ?? Number.POSITIVE_INFINITY);
    let sentAny = share !== undefined && !share.oneAnyway;
    // Past the room: handed out by a later poll, rather than breaking this one's answer; at once when the poll gave a share.
    const overRoom = (bytes: number): PollRead => (share === undefined ? { outcome: "later" } : { outcome: "unsent", bytes });
    const reads = befores.map((before, index): PollRead => {
      if (before.outcome !== "waiting") return before;
      const secrets = named[index];
      if (secrets === undefined || lookup === undefined) {
        if (share !== undefined) {
          // Stored within MAX_PAYLOAD_BYTES, so written out here without fear for this object's memory; the text
          // goes into the task's answer as it is.
          const text = JSON.stringify(before.task.inputData);
          const bytes = text.length;
          if (sentAny && bytes > room) return overRoom(bytes);
          room -= bytes;
          sentAny = true;
          return { outcome: "read", live: { input: before.task.inputData, secrets: [], text } };
        }
        return { outcome: "read", live: { input: before.task.inputData, secrets: [] } };
      }
      if ("failed" in lookup) return unreadForPoll(before.task.taskId, lookup.failed);
      // Building it is pure, so a throw (a text longer than a string may be) comes again at every poll: it fails the task.
      let live: PollInput;
      try {
        live = this.#inputWithSecrets(before.execution, before.task, secrets, lookup);
      } catch (error) {
        live = unbuiltInput(error);
      }
      const sendable = sendableInput(live, this.#config.engine.maxPayloadBytes);
      if (sendable.bytes > 0) {
        if (sentAny && sendable.bytes > room) return overRoom(sendable.bytes);
        room -= sendable.bytes;
        sentAny = true;
      }
      return { outcome: "read", live: sendable.live };
    });
    // From here on synchronous. Each looked at again: it may have moved on during the reads (polled by another
    // worker, completed, canceled, paused).
    const answers: Array<PollAnswer | undefined> = [];
    const offers: PollOffer[] = [];
    const offered = new Set<string>();
    entries.forEach((entry, index) => {
      const read = reads[index]!;
      const after = this.#waitingForPoll(entry.taskId);
      if (read.outcome !== "read") answers[index] = read;
      else if (after.outcome !== "waiting") answers[index] = after;
      else if (offered.has(entry.taskId)) answers[index] = { outcome: "gone" };
      else {
        offered.add(entry.taskId);
        offers.push({ index, entry, live: read.live, event: pollEvent(entry.taskId, read.live, workerId) });
      }
    });
    // The failures first: one that fails the workflow then refuses the others' hand-outs (see #handOut), so no worker
    // gets a task its workflow's failure cancels in the same change.
    const failuresFirst = [...offers.filter((offer) => offer.live instanceof Error), ...offers.filter((offer) => !(offer.live instanceof Error))];
    for (const { index, entry, live } of this.#handOut(failuresFirst)) {
      if (live instanceof Error) answers[index] = { outcome: "gone" };
      else answers[index] = this.#handedOut(entry, live);
    }
    return answers.map((answer) => answer ?? { outcome: "gone" });
  }

  /**
   * Applies the events of `offers` as one change and answers the offers applied. A refusal of one (a deadline that had
   * passed, its alarm late, took its task first; a failure before it ended the workflow) refuses them all, so then each
   * is applied on its own and the refused ones left out: "gone" for that task only.
   */
  #handOut(offers: readonly PollOffer[]): PollOffer[] {
    if (offers.length === 0) return [];
    try {
      this.#applyAll(offers.map((offer) => offer.event));
      return [...offers];
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      if (offers.length === 1) return [];
    }
    return offers.filter((offer) => {
      if (this.#waitingForPoll(offer.entry.taskId).outcome !== "waiting") return false;
      try {
        this.#apply(offer.event);
        return true;
      } catch (error) {
        if (error instanceof EngineError) return false;
        throw error;
      }
    });
  }

  /**
   * The answer to a poll whose task `entry` was just handed out, with its input as the worker gets it (`live`). In the turn
   * that handed it out, so in its transaction: the place it takes in its queue is always given back. The queue's word
   * counts too: it held a place by the limits the task was queued with, which an upgrade may have dropped.
   */
  #handedOut(entry: PollEntry, live: { input: JsonObject; sealed?: ReadonlyMap<string, string>; text?: string }): PollAnswer {
    const current = this.#execution!;
    const task = current.tasks.find((candidate) => candidate.taskId === entry.taskId)!;
    // In the turn that hands it out: the worker's report, however late, is scrubbed of the values it got.
    if (live.sealed !== undefined) this.#store.addGivenSecrets(entry.taskId, live.sealed);
    if (entry.holdsPlace === true || handOutLimits(instanceTask(current.definition, task))?.maxHeld !== undefined) {
      const owed = { queue: workerQueueKey(task.taskDefName, task.domain) };
      this.#releases.set(entry.taskId, owed);
      this.#store.setMeta(RELEASE_META + entry.taskId, owed.queue);
    }
    const view = toTaskView(task, current);
    return { outcome: "polled", task: live.text === undefined ? JSON.stringify({ ...view, inputData: live.input }) : taskJsonWithInput(view, live.text) };
  }

  /** Whether SIMPLE task `taskId` waits for a poll that may take it now: "gone" or "later" (paused) when it does not. */
  #waitingForPoll(taskId: string): { outcome: "waiting"; execution: Execution; task: TaskExecution } | Exclude<PollAnswer, { outcome: "polled" }> {
    const execution = this.#execution;
    const task = execution?.tasks.find((candidate) => candidate.taskId === taskId && candidate.pollable === true);
    if (!execution || this.#removing || !task) return { outcome: "gone" };
    if (execution.status === "PAUSED") return { outcome: "later" };
    return { outcome: "waiting", execution, task };
  }

  /**
   * A WAIT_FOR_WEBHOOK callback. Checked in the order a caller can act on: unknown ids (404), too many callbacks to
   * the task (429), headers or signature (401), a body declared as other than JSON (415), body (400), task no longer
   * waiting (409), output too large (413). A refused callback changes nothing; of two concurrent callbacks exactly one
   * wins (the engine refuses the second as not pending).
   */
  async webhookCallback(call: { taskRefName: string; taskId: string; headers: Array<[string, string]>; body: Uint8Array }): Promise<CallbackResult> {
    this.#recover();
    const refuse = (status: CallbackRefusal["status"], message: string, validationErrors?: ValidationIssue[]): CallbackResult => ({
      ok: false,
      refusal: validationErrors ? { status, message, validationErrors } : { status, message },
    });
    const execution = this.#execution;
    const task = execution?.tasks.find((candidate) => candidate.taskId === call.taskId);
    if (!execution || !task || task.referenceTaskName !== call.taskRefName || task.taskType !== "WAIT_FOR_WEBHOOK") {
      return refuse(404, "No webhook task with that workflow id, reference name and task id");
    }
    // Every callback counts, valid or not: guessing a task's headers or signature is limited like any secret.
    // The counts live in memory: an evicted object forgets them, which only ever lets a caller try sooner.
    const verdict = this.#callbackLogs.record(task.taskId, Date.now(), this.#config.callbackLimit, () => new Set(execution.tasks.map((present) => present.taskId)));
    if (verdict.limited) {
      const seconds = retryAfterSeconds(verdict);
      return { ok: false, refusal: { status: 429, message: `Too many callbacks for task ${call.taskRefName}; try again in ${seconds} s`, retryAfterSeconds: seconds } };
    }
    const live = await this.#liveInput(execution, task);
    if (live instanceof Error) return refuse(401, `The callback cannot be verified: ${live.message}`);
    const expected = webhookExpectations(live.input);
    if (!expected.ok) return refuse(401, `The callback cannot be verified: ${expected.reason}`);
    const headers = new Headers(call.headers);
    const failure = await verifyCallback(expected.expectations, headers, call.body);
    if (failure) return refuse(401, `Callback refused: ${failure}`);
    // The spec's callback is sent with `Content-Type: application/json`, and every other JSON route refuses a body declared
    // as anything else (415): a sender labelling it text or a form has the wrong idea of what it sends. Checked after the
    // headers, so an unauthenticated sender learns nothing about the task; no Content-Type is read as JSON, as elsewhere.
    if (call.body.byteLength > 0 && !readsAsJson(headers.get("content-type"))) {
      return refuse(415, "The callback body must be JSON: send it with Content-Type: application/json");
    }
    // Read as every JSON body is (its declared charset, UTF-8 bytes or a 400), where invalid bytes were kept as U+FFFD.
    let text: string;
    try {
      text = jsonRequestText(call.body, headers.get("content-type"));
    } catch (error) {
      if (error instanceof ApiError && (error.status === 400 || error.status === 415)) return refuse(error.status, error.message, error.validationErrors);
      throw error;
    }
    const parsed = parseWebhookCallback(text);
    if (!parsed.ok) return refuse(400, "Invalid callback body", parsed.issues);
    // Re-read: the task may have moved on while this callback was being verified.
    const noLongerWaiting = (): CallbackResult | undefined => {
      const current = this.#execution?.tasks.find((candidate) => candidate.taskId === call.taskId);
      if (current && current.status === "IN_PROGRESS") return undefined;
      return refuse(409, `Task ${call.taskRefName} is no longer waiting: its status is ${current?.status ?? "gone"}`);
    };
    const gone = noLongerWaiting();
    if (gone) return gone;
    // The sender holds the secrets its headers were checked against: one it quotes back (a token echoed in its payload,
    // as some services put theirs) is scrubbed before it is stored and shown, as any report from outside is.
    const scrub = <T extends JsonValue>(value: T): T => (live.secrets.length > 0 ? redactSecretValues(value, live.secrets) : value);
    const { status } = parsed.callback;
    const output = scrub(parsed.callback.output);
    const reason = parsed.callback.reason === undefined ? undefined : scrub(parsed.callback.reason);
    const event: ExecutionEvent = { type: "externalUpdate", taskId: call.taskId, status, output };
    if (reason !== undefined) event.reason = reason;
    try {
      this.#apply(event);
    } catch (error) {
      // A timeout whose alarm is late is only applied with the refusal: answer as if it had been on time.
      if (error instanceof EngineError) return noLongerWaiting() ?? this.#callbackOutputTooLarge(call.taskId, output, refuse) ?? refuse(409, error.message);
      throw error;
    }
    return { ok: true, value: { workflowId: execution.workflowId, taskId: call.taskId, status } };
  }

  /**
   * The 413 of a callback the engine refused whose output, merged into waiting task `taskId`'s, is over MAX_PAYLOAD_BYTES:
   * the sender is told the output is too large, not that the task no longer waits (the engine refuses it as INVALID).
   * Measured only once the engine has refused, so an accepted callback's output is serialised once, by the engine's own
   * size check, and not a second time before it.
   */
  #callbackOutputTooLarge(taskId: string, output: JsonObject, refuse: (status: 413, message: string) => CallbackResult): CallbackResult | undefined {
    const maxPayloadBytes = this.#config.engine.maxPayloadBytes;
    const waiting = this.#execution?.tasks.find((candidate) => candidate.taskId === taskId);
    const bytes = oversize({ ...waiting?.outputData, ...output }, maxPayloadBytes);
    return bytes === undefined ? undefined : refuse(413, oversizeReason("The task output", bytes, maxPayloadBytes));
  }

  /**
   * An event sent to a webhook, which the routing table says task `taskId` waits for (see `matches.ts`): completes the
   * task with the event's `payload` as its output, when it still waits and its matches hold for the payload (the
   * table lags the execution by the time a row takes to be written). "not waiting" changes nothing.
   */
  async webhookEvent(taskId: string, payload: JsonObject): Promise<"completed" | "not waiting"> {
    this.#recover();
    const execution = this.#execution;
    const task = execution?.tasks.find((candidate) => candidate.taskId === taskId);
    // A test run does nothing real: no real event reaches it.
    if (!execution || this.#removing || execution.test !== undefined || !task || task.taskType !== "WAIT_FOR_WEBHOOK" || task.status !== "IN_PROGRESS") return "not waiting";
    const matches = writtenMatches(task.inputData);
    if (matches === undefined || !eventMeets(payload, execution.workflowName, execution.workflowVersion, definitionReferenceName(execution.definition, task), matches)) return "not waiting";
    try {
      this.#apply({ type: "externalUpdate", taskId, status: "COMPLETED", output: payload });
    } catch (error) {
      if (error instanceof EngineError) return "not waiting";
      throw error;
    }
    return "completed";
  }

  // ---- RPC: the workflow's message queue -------------------------------------------------------

  /**
   * Pushes a message (`payload`, any JSON object) to the workflow's queue, as Conductor's WorkflowMessageQueueResource:
   * only while it is RUNNING, and while the queue holds fewer than {@link MAX_QUEUED_MESSAGES}. Stored before the answer
   * leaves, and in the same transaction taken by a PULL_WORKFLOW_MESSAGES task waiting for it, which completes at once.
   */
  async pushMessage(payload: JsonObject): Promise<PushAnswer> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing) return { ok: false, status: 404, message: "Workflow not found" };
    const { workflowId } = execution;
    if (execution.status !== "RUNNING") {
      return { ok: false, status: 409, message: `Workflow ${workflowId} is not in RUNNING state (current: ${execution.status}): messages are taken only while it runs` };
    }
    const message: WorkflowMessage = { id: crypto.randomUUID(), workflowId, payload, receivedAt: new Date().toISOString() };
    // Measured as the output of a task that takes it alone: any message queued can then be taken.
    const maxPayloadBytes = this.#config.engine.maxPayloadBytes;
    const bytes = oversize(pulledOutput([message]), maxPayloadBytes);
    if (bytes !== undefined) return { ok: false, status: 413, message: oversizeReason("The message, as a PULL_WORKFLOW_MESSAGES task's output holds it,", bytes, maxPayloadBytes) };
    if (this.#messages.size() >= MAX_QUEUED_MESSAGES) {
      return { ok: false, status: 429, message: `The message queue of workflow ${workflowId} is full (${MAX_QUEUED_MESSAGES} messages): try again once its PULL_WORKFLOW_MESSAGES tasks have taken some` };
    }
    this.#messages.push(message);
    // No await since the push: one transaction with the completion of a task waiting for it, if one does.
    this.#commit(execution, { state: execution, effects: [] });
    return { ok: true, messageId: message.id };
  }

  // ---- RPC: between executions --------------------------------------------------------------

  /**
   * A child this execution waits for has finished. Answers "retry" only when the task does not wait for
   * this child yet but is about to: it is still starting a child and does not yet know this one (an existing
   * child returned by an idempotency key can finish before its start returns), or the child accepted a retry
   * or rerun whose answer this execution has not taken yet. Anything else is taken or ignored as stale, and
   * the child can stop telling.
   */
  async childFinished(notice: ChildFinishedNotice): Promise<"taken" | "retry"> {
    this.#recover();
    const task = this.#execution?.tasks.find((candidate) => candidate.taskId === notice.taskId);
    if (!task) return "taken";
    if (isInFlight(task) && task.subWorkflowId !== notice.subWorkflowId) return "retry";
    // The child accepted running again and already finished, before this execution reopened to wait for it.
    if (this.#childResume?.taskId === notice.taskId) return "retry";
    this.#takeChildState(notice.taskId, notice.subWorkflowId, notice);
    return "taken";
  }

  /**
   * A child of this execution was retried, restarted or rerun on its own. As Conductor's `updateAndPushParents`,
   * the task that started it waits for it again and this execution reopens (telling its own parent in turn), but
   * only while that task is still where the child left it: the latest instance of its task, finished, not
   * optional, and one that waited for the child; in an execution that ended other than by a termination; and not
   * one this execution ended itself, terminating that child (see {@link WorkflowExecution.#childrenLetGo}).
   * Otherwise (the task was retried with a new child, timed out or was set from outside, this execution runs on,
   * was terminated or is being removed) the answer is "declined" and the child runs on detached. A repeated delivery finds the task waiting
   * for the child already and is "taken" again without a change.
   */
  async childReopened(notice: ChildReopenedNotice): Promise<ChildReopenedAnswer> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing) return "declined";
    // Asking one of its children to run again: its own reopen may be on its way, so answer once that is known.
    if (this.#childResume) return "retry";
    const task = execution.tasks.find((candidate) => candidate.taskId === notice.taskId);
    if (!task || task.subWorkflowId !== notice.subWorkflowId) return "declined";
    if (isPending(task)) {
      // A telling again (its first answer lost on its way) answers no sooner than the first: its own parents first.
      await this.#awaitParentReopen();
      return "taken";
    }
    if (!this.#mayFollowChild(execution, task)) return "declined";
    // Reopening runs this execution's later tasks again: only for someone who could have started this workflow,
    // not for one whose rights cover the child alone.
    if (notice.startScopes !== undefined && !mayStartWorkflow(notice.startScopes, execution.workflowName)) return "declined";
    try {
      // A paused execution has not ended: its own parent still waits for it and needs no word.
      this.#reopen({ type: "resumeChild", taskId: task.taskId, startScopes: notice.startScopes }, TERMINAL_WORKFLOW_STATUSES.has(execution.status));
    } catch (error) {
      if (error instanceof EngineError) return "declined";
      throw error;
    }
    // Its own parents first (bounded): a child whose reopen waits for its parents (`awaitParents`) then finds every
    // one of them running again, as Conductor's updateAndPushParents leaves them, grandparents too.
    await this.#awaitParentReopen();
    return "taken";
  }

  /** Whether this execution (ended, or paused with the task's end not acted on) waits again for its SUB_WORKFLOW task's child that runs again (see {@link WorkflowExecution.childReopened}). */
  #mayFollowChild(execution: Execution, task: TaskExecution): boolean {
    // A paused one follows too, unless it went on past the task before the pause (a later task in its lane, or after
    // its forks' JOINs; what its forks' other branches ran is beside it): the engine's resumeChild refuses that (an
    // EngineError, so declined).
    if (execution.status !== "PAUSED" && (!TERMINAL_WORKFLOW_STATUSES.has(execution.status) || execution.status === "TERMINATED")) return false;
    if (execution.tasks.findLast((candidate) => candidate.referenceTaskName === task.referenceTaskName) !== task) return false;
    // Conductor too stops at an optional task: the execution went on without that child.
    if (instanceTask(execution.definition, task)?.optional === true) return false;
    // A task that never waited for its child (waitForCompletion false) does not start waiting now.
    const request = childStartRequest(task.inputData);
    if ("invalid" in request || !request.waitForCompletion) return false;
    // This execution ended the task itself and terminated the child: the child no longer left the task where it is.
    return !this.#childrenLetGo.includes(task.subWorkflowId!) && !Object.hasOwn(this.#childTerminations, task.subWorkflowId!);
  }

  /**
   * The single timer: fires for the earliest deadline of the execution or a background retry. One that fails is armed
   * again by this object, after a backoff ({@link ALARM_RETRY_FIRST_MS} doubling up to {@link ALARM_RETRY_LAST_MS}), for as
   * long as it fails: the runtime retries a failed alarm only a few times and then gives up, which left a RUNNING
   * execution with no alarm at all (a WAIT, a timeout or a retry's delay never applied) until some request happened to
   * come to its object. Should the alarm not be stored (the object reset), the failure goes to the runtime's retries.
   */
  override async alarm(): Promise<void> {
    try {
      await this.#runAlarm();
      this.#forgetAlarmFailures();
    } catch (error) {
      const logged = failedAgain(this.#alarmFailures, ALARM_FAILURE_KEY);
      const attempt = this.#alarmFailures.get(ALARM_FAILURE_KEY)!;
      try {
        this.#store.setMeta(ALARM_FAILURE_KEY, String(attempt));
      } catch {
        // The store may be what fails (or gone: a tombstone emptied before the failure): the count stays in memory.
      }
      const retryAt = Date.now() + Math.min(ALARM_RETRY_FIRST_MS * 2 ** Math.min(attempt - 1, 20), ALARM_RETRY_LAST_MS);
      // The runtime's own log names the object by a hex id: this line names the execution. The error's kind and where it
      // was thrown only (its message may quote a value). At the 1st, 2nd, 4th… failure in a row (see failedAgain).
      if (logged !== undefined) {
        const frames = error instanceof Error ? (error.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line)).map((line) => line.trim()) : [];
        console.error(JSON.stringify({ msg: "alarm failed; tried again", workflowId: this.#execution?.workflowId ?? this.ctx.id.name, attempt, retryAt: new Date(retryAt).toISOString(), error: error instanceof Error ? error.name : typeof error, frames }));
      }
      // An alarm the failed run armed sooner (for work that did go through) stands.
      if (this.#alarmAt !== null && this.#alarmAt > Date.now() && this.#alarmAt <= retryAt) return;
      try {
        await this.ctx.storage.setAlarm(retryAt);
      } catch {
        throw error;
      }
      this.#alarmAt = retryAt;
    }
  }

  /**
   * Ends a run of failed alarms (see {@link WorkflowExecution.alarm}): an alarm went through, or none is armed any more
   * (an execution that ended owing nothing), so a later failure counts from 1 again, is logged and retried after 2 s.
   * Stored only after a failure, so an ordinary alarm writes nothing here.
   */
  #forgetAlarmFailures(): void {
    if (this.#alarmFailures.delete(ALARM_FAILURE_KEY)) this.#store.deleteMeta(ALARM_FAILURE_KEY);
  }

  async #runAlarm(): Promise<void> {
    this.#alarmAt = null;
    const freshIsolate = !this.#recovered;
    this.#recovered = true;
    const now = Date.now();
    const retryDue = this.#backgroundRetryAt !== undefined && this.#backgroundRetryAt <= now;
    if (retryDue) this.#backgroundRetryAt = undefined;
    if (this.#removing) {
      await this.#finishRemoval().catch(() => undefined);
      return;
    }
    const execution = this.#execution;
    if (!execution) {
      if (this.#canceledByParent !== undefined || this.#removed) await this.#forgetTombstone();
      return;
    }
    const removalDue = removalDueAt(execution, this.#config.executionRetentionMs);
    if (removalDue !== undefined && removalDue <= now) {
      await this.#expire(execution);
      return;
    }
    // The failed jobs run again below. Should one fail again, or the isolate die meanwhile, the next retry is due after
    // the same backoff, which the alarm is armed for instead of a safety alarm sooner (see RETRY_BACKGROUND_MS).
    if (retryDue && this.#failingJobs.size > 0) this.#backgroundRetryAt = now + RETRY_BACKGROUND_MS;
    // Before what this alarm dispatches itself: they waited first.
    this.#startWaitingAfresh();
    this.#applyDue(execution, freshIsolate);
    // A failed job that did not run again is owed no more (its task ended, its watcher went): no retry waits for it.
    for (const key of this.#failingJobs.keys()) if (!this.#jobs.has(key)) this.#failingJobs.delete(key);
    if (this.#failingJobs.size === 0 && retryDue) this.#backgroundRetryAt = undefined;
  }

  /**
   * Removes an execution whose retention ran out, as `DELETE /api/workflow/{id}/remove` would. Refused while it still
   * owes work outside itself (a parent's notice, a child's termination…): that work is retried, and so is the removal.
   */
  async #expire(execution: Execution): Promise<void> {
    const removed = await this.remove();
    if (removed.ok || this.#removing || this.#execution !== execution) return;
    this.#backgroundRetryAt = Date.now() + RETRY_BACKGROUND_MS;
    this.#syncAlarm(execution);
  }

  /**
   * What the alarm does: applies what is due by now and, in a fresh isolate (`attemptsLost`), dispatches again every
   * in-flight attempt, which died with the earlier one. Otherwise only an overdue deadline needs the engine; an early
   * wake-up retries owed background work and re-arms the alarm.
   */
  #applyDue(execution: Execution, attemptsLost: boolean): void {
    const due = nextDeadline(execution);
    if ((attemptsLost && execution.tasks.some(isInFlight)) || (due !== undefined && due <= Date.now())) {
      this.#apply({ type: "tick", liveTaskIds: new Set(this.#inFlight.keys()) });
    } else {
      this.#afterChange(execution);
    }
  }

  /**
   * Conductor's decide (`PUT /api/workflow/decide/{id}`): does now what the alarm would do next (see
   * {@link WorkflowExecution.#applyDue}). An execution decides on every event, so this mostly hurries a passed deadline
   * or owed background work (a queue push, a search row, a parent's notice) that waits for a retry. It also mends what
   * nothing else would: each task waiting for a worker's poll is put in its queue again (see {@link #requeuePollable}).
   */
  async decide(): Promise<ActorResult<null>> {
    this.#recover();
    const execution = this.#execution;
    if (!execution) return refused(this.#notFound());
    if (this.#removing) return refused(this.#beingRemoved(execution));
    try {
      this.#backgroundRetryAt = undefined;
      this.#requeuePollable(execution);
      this.#applyDue(execution, false);
      await this.#failTasksOfLostChildren();
      return ok(null);
    } catch (error) {
      return refused(error);
    }
  }

  /**
   * Fails each SUB_WORKFLOW task of this running execution that waits for a child whose object no longer holds it (its
   * storage lost: no fault Durable Objects have, a bug). Such a task waits for the child's notice, which would never
   * come, where Conductor's system task worker re-reads the child and fails the task on a child its store lost. A child
   * removed cannot be waited for (its removal waits for this execution to have heard it ended), and one whose start is
   * still on its way leaves its task in flight, not looked at here.
   */
  async #failTasksOfLostChildren(): Promise<void> {
    const running = this.#execution;
    if (running?.status !== "RUNNING") return;
    const waiting = running.tasks.filter((task) => task.taskType === "SUB_WORKFLOW" && task.status === "IN_PROGRESS" && !isInFlight(task) && task.subWorkflowId !== undefined);
    // One call to each child's object: a bounded number per decide, within a request's subrequests (a wide fork's children),
    // each call going on from where the last stopped, so that repeated calls reach them all (the same first ones each
    // time would never reach a lost child past them).
    const most = WorkflowExecution.lostChildLooksPerDecide;
    const from = waiting.length > most ? this.#lostChildLooksFrom % waiting.length : 0;
    const looked = [...waiting.slice(from), ...waiting.slice(0, from)].slice(0, most);
    // The next call goes on past the children asked, not past those this one never reached.
    let asked = 0;
    try {
      for (const task of looked) {
        let view: ChildView | null | undefined;
        try {
          view = await this.#childView(task.subWorkflowId!);
        } catch (error) {
          // The invocation's calls spent: every call after is refused alike, and spends nothing on the children left.
          if (isSubrequestLimitError(error)) return;
          // Any other failed call (the child's object reset, overloaded, on its way to new code) proves nothing, and must
          // neither fail the task nor stop the look at the others: only an answer that the object holds no execution does.
          view = undefined;
        }
        asked++;
        if (view !== null) continue;
        // Looked at again after the await: the task may have moved on meanwhile (the engine ignores it then).
        if (this.#removing || this.#execution?.status !== "RUNNING" || this.#childResume?.taskId === task.taskId) return;
        this.#takeChildState(task.taskId, task.subWorkflowId!, { status: "FAILED", output: {}, lost: true });
      }
    } finally {
      this.#lostChildLooksFrom = from + asked;
    }
  }

  /**
   * Owes a push of each task of running `execution` that waits for a worker's poll to its queue, as Conductor's
   * verifyAndRepair pushes a SCHEDULED task its queue lacks. A queue push is made once, until the queue has it: an entry
   * lost after that (the queue's object reset or its storage lost) left the task SCHEDULED with nothing to hand it out,
   * and with no `pollTimeoutSeconds` nothing to time it out either. The push keeps the task's place in its queue's
   * order (see `queuedFrom`), and over an entry still there only moves it, as a resume's does. A task with a change
   * already owed to its queue keeps that one; a paused execution's tasks are pushed by its resume.
   */
  #requeuePollable(execution: Execution): void {
    if (execution.status !== "RUNNING") return;
    for (const task of execution.tasks) {
      if (task.pollable !== true || this.#queuePushes.has(task.taskId)) continue;
      this.#oweQueueChange(task.taskId, workerQueueEntry(task, execution, queuedFrom(task), instanceTask(execution.definition, task)));
    }
  }

  /**
   * Its task name's limit object gave place `placeId` (see `TaskLimit`), or asks whether it is still held: a task that
   * asked for it holds it from now on, and starts. "gone" when no task of this execution asks for it nor holds it.
   */
  async givePlace(placeId: string): Promise<PlaceAnswer> {
    this.#recover();
    const execution = this.#execution;
    if (!execution || this.#removing || this.#placeLeaves.has(placeId)) return "gone";
    const state = placeState(execution, placeId);
    if (state === "gone") {
      // Paused while it waited (or ended): the place goes to the next task, and a resumed task asks again.
      this.#placesAsked.delete(placeId);
      return "gone";
    }
    if (state === "asking") this.#apply({ type: "placesGiven", placeIds: [placeId] });
    return "taken";
  }

  /** The rate limit `key` gave this execution a place (see `ExecutionLimit`): it runs from now on, when it still waits there. */
  async admit(key: string): Promise<AdmissionAnswer> {
    this.#recover();
    return this.#takeAdmission(key);
  }

  /**
   * Rate limit `key` asks whether this execution still holds its place there (its periodic check, see `ExecutionLimit`):
   * "gone" when it does not count under that key (see {@link #countsUnder}), or does not exist. Changes nothing, unlike
   * {@link admit}: a reopened execution between the leave of its old place and the entry asking for a new one counts
   * under the key but holds no place, and must not be admitted by a check that asked about the old one.
   */
  async holdsPlace(key: string): Promise<AdmissionAnswer> {
    this.#recover();
    return this.#countsUnder(key) ? "taken" : "gone";
  }

  // ---- the decide → persist → act loop --------------------------------------------------------

  #notFound(): EngineError {
    return new EngineError("NOT_FOUND", `Workflow ${this.ctx.id.name ?? this.ctx.id.toString()} not found`);
  }

  #beingRemoved(execution: Execution): EngineError {
    return new EngineError("CONFLICT", `Workflow ${execution.workflowId} is being removed`);
  }

  #resumingChild(execution: Execution, pending: PendingChildResume): EngineError {
    return new EngineError("CONFLICT", `Workflow ${execution.workflowId} is waiting for its sub workflow ${pending.subWorkflowId} to accept a retry or rerun; try again shortly`);
  }

  #decideEnv(): DecideEnv {
    return {
      now: Date.now(),
      newId: () => crypto.randomUUID(),
      config: this.#config.engine,
      scripts: this.#scripts,
      jq: this.#jq,
      taskDefs: (name) => TaskDefRepository.known(name),
    };
  }

  /**
   * The first call after the object was (re)loaded: any attempt that was in flight died with the
   * previous isolate, so dispatch it again now rather than at its watchdog deadline; and resume
   * background work that may not have happened.
   */
  #recover(): void {
    if (this.#recovered) return;
    this.#recovered = true;
    if (this.#removing) {
      // A removal began in an isolate that is gone: finish it (a caller of remove() waits for the same one).
      void this.#finishRemoval().catch(() => undefined);
      return;
    }
    const execution = this.#execution;
    if (!execution) return;
    if (execution.tasks.some(isInFlight)) this.#apply({ type: "tick", liveTaskIds: new Set() });
    else this.#afterChange(execution);
  }

  /** Decides, persists, then performs effects. Throws EngineError with nothing changed when refused. */
  #apply(event: ExecutionEvent, base: Execution | null = this.#execution): void {
    this.#applyAll([event], base);
  }

  /**
   * Decides `events` one after the other and persists them as one change (none: nothing changes): a refusal of any of
   * them (an EngineError thrown) leaves the execution as it was.
   */
  #applyAll(events: readonly ExecutionEvent[], base: Execution | null = this.#execution): void {
    if (!base) throw this.#notFound();
    const previous = this.#execution;
    const env = this.#decideEnv();
    let decision: Decision = { state: base, effects: [] };
    try {
      for (const event of events) {
        const next = decide(decision.state, event, env);
        decision = decision.effects.length === 0 ? next : { state: next.state, effects: [...decision.effects, ...next.effects] };
      }
      // A test run's tasks take their mocked results in the same change, before anything would run them.
      if (decision.state.test !== undefined) decision = applyTestMocks(decision, env);
    } catch (error) {
      // The refusal may come from a deadline the (late) alarm has not applied yet: record it now, as the alarm
      // would, so that what the caller reads next agrees with the refusal.
      if (error instanceof EngineError && base === previous && !this.#removing) this.#commit(previous, settleOverdue(base, env));
      throw error;
    }
    // Covers commands whose change comes after an await (a rerun in a child), and every other way in.
    if (decision.state !== previous && this.#removing) throw this.#beingRemoved(base);
    this.#commit(previous, decision);
  }

  /**
   * Persists a decision taken on `previous`, with the messages its waiting PULL_WORKFLOW_MESSAGES tasks take (see
   * {@link WorkflowExecution.#withMessagesPulled}), then performs its effects.
   */
  #commit(previous: Execution | null, given: Decision): void {
    const { decision, taken } = this.#withMessagesPulled(given);
    if (decision.state === previous) return;
    this.#store.save(previous, decision.state);
    this.#writeTaskLogs(decision);
    // In the transaction that completed the tasks with them: each message is handed to exactly one task.
    this.#messages.remove(taken);
    // Ended, nothing can take them any more (pushes are refused from now on): Conductor deletes the queue then.
    if (TERMINAL_WORKFLOW_STATUSES.has(decision.state.status) && !(previous && TERMINAL_WORKFLOW_STATUSES.has(previous.status))) this.#messages.clear();
    this.#recordObligations(decision.state, decision.effects, leftWorkerQueues(previous, decision.state));
    if (ownTestDomain(decision.state) !== undefined) this.#noteTestQueues(ownTestQueues(decision.state, decision.effects));
    for (const publication of statusPublications(previous, decision.state)) this.#oweStatusPublication(publication);
    this.#oweLimitChanges(previous, decision.state);
    this.#owePlaceLeaves(leftPlaces(previous, decision.state));
    this.#owePlaceTakes(retakenPlaces(previous, decision.state));
    if (planOf(decision.state.definition).usesCache) this.#oweCacheWrites(taskCacheWrites(previous, decision.state));
    this.#execution = decision.state;
    for (const effect of decision.effects) {
      if (effect.kind === "dispatch") this.#dispatch(effect.taskId, effect.attempt);
      else if (effect.kind === "cancelDispatch") this.#inFlight.get(effect.taskId)?.abort();
    }
    this.#afterChange(decision.state);
  }

  /**
   * Writes the log lines `decision` brings (an INLINE or LAMBDA script's console) in its transaction, after the state
   * it saved: with the task's result, never before it. No secret to mask: such a task may not name one in its input.
   */
  #writeTaskLogs(decision: Decision): void {
    for (const effect of decision.effects) {
      if (effect.kind !== "taskLog" || !decision.state.tasks.some((task) => task.taskId === effect.taskId)) continue;
      this.#appendTaskLog(effect.taskId, effect.lines.map((log) => ({ log, createdTime: effect.createdTime })), []);
    }
  }

  /**
   * `decision` with its waiting PULL_WORKFLOW_MESSAGES tasks (see `messagePulls`) completed, oldest first, each with the
   * next batch of the queue (up to its `batchSize`, as many as its output can hold), and the queue rows they took, to
   * remove in the decision's transaction. A blocking one waits on while the queue is empty; one the engine refuses (it
   * no longer waits) takes nothing. The tasks the completions bring (a loop's next iteration) take their turn too.
   */
  #withMessagesPulled(given: Decision): { decision: Decision; taken: number[] } {
    let decision = given;
    const taken: number[] = [];
    if (this.#removing || !planOf(decision.state.definition).pullsMessages) return { decision, taken };
    const tried = new Set<string>();
    let env: DecideEnv | undefined;
    for (let pulls = 0; pulls < MAX_PULLS_PER_CHANGE; pulls++) {
      const pull = messagePulls(decision.state).find((candidate) => !tried.has(candidate.taskId) && (!candidate.blocking || this.#messages.size() > taken.length));
      if (pull === undefined) break;
      tried.add(pull.taskId);
      const batch = fittingBatch(this.#messages.peek(pull.batchSize, taken.length), this.#config.engine.maxPayloadBytes);
      env ??= this.#decideEnv();
      try {
        const next = decide(decision.state, { type: "messagesPulled", taskId: pull.taskId, messages: batch.map((queued) => queued.message) }, env);
        decision = { state: next.state, effects: [...decision.effects, ...next.effects] };
        // A task that could not take its batch (its output over MAX_PAYLOAD_BYTES with what a worker reported for it, or
        // refused by its output schema) failed without it: the messages stay queued for another task.
        if (next.state.tasks.find((task) => task.taskId === pull.taskId)?.status === "COMPLETED") taken.push(...batch.map((queued) => queued.seq));
      } catch (error) {
        if (!(error instanceof EngineError)) throw error;
      }
    }
    // A test run's tasks the completions brought take their mocked results, as in any other change.
    if (decision.state.test !== undefined && env !== undefined && decision !== given) decision = applyTestMocks(decision, env);
    return { decision, taken };
  }

  /** True when a PULL_WORKFLOW_MESSAGES task of `execution` can take its batch now (see {@link WorkflowExecution.#withMessagesPulled}). */
  #messagesDeliverable(execution: Execution): boolean {
    return messagePulls(execution).some((pull) => !pull.blocking || this.#messages.size() > 0);
  }

  /**
   * Completes, in turns of their own, the PULL_WORKFLOW_MESSAGES tasks that can take their batch and a change left
   * waiting: beyond {@link MAX_PULLS_PER_CHANGE}, or found so on a wake-up. Stops when a round changes nothing.
   */
  #syncMessagePulls(execution: Execution): void {
    if (!this.#messagesDeliverable(execution)) return;
    this.#runJob("messages", async () => {
      for (;;) {
        // A turn of its own each round: other calls come in between (a terminate of a loop that never waits).
        await new Promise((resolve) => setTimeout(resolve, 0));
        const current = this.#execution;
        if (!current || this.#removing || !this.#messagesDeliverable(current)) return;
        this.#commit(current, { state: current, effects: [] });
        if (this.#execution === current) return;
      }
    });
  }

  /** Writes down, in the same synchronous transaction as the decision, work that must outlive this isolate. */
  #recordObligations(state: Execution, effects: Effect[], removals: readonly WorkerQueueRemoval[]): void {
    for (const removal of removals) this.#oweQueueChange(removal.taskId, { ...removal, remove: true });
    for (const effect of effects) {
      if (effect.kind === "queueTask") this.#oweQueueChange(effect.entry.taskId, effect.entry);
      // An EVENT task's message, owed to its handlers as the status listener's endings are (published by the same job).
      if (effect.kind === "publishEvent") this.#oweStatusPublication(effect.message);
      if (effect.kind !== "startFailureWorkflow") continue;
      this.#failureStarts.push(effect.start);
      this.#store.setMeta(FAILURE_START_META + effect.start.workflowId, JSON.stringify(effect.start));
    }
    const terminations = effects.filter((effect) => effect.kind === "terminateChild");
    if (terminations.length === 0) return;
    for (const effect of terminations) {
      this.#childTerminations[effect.subWorkflowId] = effect.reason;
      if (!this.#childrenLetGo.includes(effect.subWorkflowId)) this.#childrenLetGo.push(effect.subWorkflowId);
    }
    // Only a child a task of the execution still names is ever looked up here (`childReopened` declines any other): the
    // children of tasks gone since (dropped by a DO_WHILE's keepLastN, replaced by a restart) go, or a long loop whose
    // children it ends (timed out, set from outside) would keep one id per iteration for good, the list rewritten whole
    // with each, until it passed what one stored value may hold. Those of this decision stay, named or not (a start
    // never answered leaves its task naming no child), until the next.
    const kept = new Set([...terminations.map((effect) => effect.subWorkflowId), ...state.tasks.flatMap((task) => (task.subWorkflowId === undefined ? [] : [task.subWorkflowId]))]);
    this.#childrenLetGo = this.#childrenLetGo.filter((childId) => kept.has(childId));
    this.#store.setMeta("childTerminations", JSON.stringify(this.#childTerminations));
    this.#store.setMeta("childrenLetGo", JSON.stringify(this.#childrenLetGo));
  }

  /** Writes down, in the decision's transaction, the queues of its own domain a test run put tasks in (see {@link WorkflowExecution.#testQueues}). */
  #noteTestQueues(queues: readonly string[]): void {
    for (const queue of queues) {
      if (this.#testQueues.has(queue)) continue;
      this.#testQueues.add(queue);
      this.#store.setMeta(TEST_QUEUE_META + queue, "1");
    }
  }

  /** Writes down, in the decision's transaction, the publication of an ending the status listener owes (if any). */
  #oweStatusPublication(publication: StatusPublication | undefined): void {
    if (publication === undefined) return;
    // Its actions named by content from its first run on (see EventMessage.actionKeys): an edit of a handler between
    // two of its runs neither passes a new action over nor takes a taken one again.
    const owed: StatusPublication = { ...publication, actionKeys: "content" };
    this.#statusPublications.push(owed);
    this.#store.setMeta(STATUS_PUBLICATION_META + owed.messageId, JSON.stringify(owed));
  }

  /**
   * Writes down, in the decision's transaction, what the execution owes its rate limit: giving its place up when it
   * ended, asking for one when it (re)opened waiting. An entry not asked yet when it ends is dropped (the leave that
   * follows is harmless either way).
   */
  #oweLimitChanges(previous: Execution | null, state: Execution): void {
    const { leave, enter } = limitChanges(previous, state);
    if (leave !== undefined) {
      this.#limitEntry = undefined;
      this.#store.deleteMeta(LIMIT_ENTRY_META);
      this.#limitLeaves.add(leave);
      this.#store.setMeta(LIMIT_LEAVE_META + leave, "1");
    }
    if (enter !== undefined) {
      this.#limitEntry = enter;
      this.#store.setMeta(LIMIT_ENTRY_META, JSON.stringify(enter));
    }
  }

  /** Writes down, in the decision's transaction, the places of limited tasks it ended (or ran again) that are owed back. */
  #owePlaceLeaves(left: readonly TaskPlace[]): void {
    for (const place of left) {
      this.#placesAsked.delete(place.placeId);
      this.#placeLeaves.set(place.placeId, place.taskName);
      this.#store.setMeta(PLACE_LEAVE_META + place.placeId, place.taskName);
      if (this.#placeTakes.delete(place.placeId)) this.#store.deleteMeta(PLACE_TAKE_META + place.placeId);
    }
  }

  /** Writes down, in the decision's transaction, the places of tasks reopened in place that their limit objects must count again. */
  #owePlaceTakes(taken: readonly TaskPlace[]): void {
    for (const place of taken) {
      this.#placeTakes.set(place.placeId, place.taskName);
      this.#store.setMeta(PLACE_TAKE_META + place.placeId, place.taskName);
      if (this.#placeLeaves.delete(place.placeId)) this.#store.deleteMeta(PLACE_LEAVE_META + place.placeId);
    }
  }

  /** Writes down, in the decision's transaction, the outputs it completed that the task output cache is owed. */
  #oweCacheWrites(writes: readonly TaskCacheWrite[]): void {
    for (const write of writes) {
      this.#cacheWrites.set(write.taskId, write);
      this.#store.setMeta(CACHE_WRITE_META + write.taskId, JSON.stringify(write));
    }
  }

  /** Owes `change` to task `taskId`'s worker queue, in place of any change still owed to it (see {@link WorkflowExecution.#queuePushes}). */
  #oweQueueChange(taskId: string, change: QueueChange): void {
    this.#queuePushes.set(taskId, change);
    this.#store.setMeta(QUEUE_PUSH_META + taskId, JSON.stringify(change));
  }

  /** Keeps the alarm, the search index, watchers, children and waiting callers in step with the execution. */
  #afterChange(execution: Execution): void {
    // A removal owns the object's background state now: rewriting the search row would resurrect it.
    if (this.#removing) return;
    this.#syncIndex(execution);
    this.#syncWatchers(execution);
    this.#syncChildTerminations(execution.workflowId);
    this.#syncFailureStarts();
    this.#syncStatusPublications();
    this.#syncQueuePushes();
    this.#syncReleases(execution);
    this.#syncExecutionLimit();
    this.#syncTaskPlaces(execution);
    this.#syncTaskDefLookups(execution);
    this.#syncDomainChoices(execution);
    this.#syncCacheLookups(execution);
    this.#syncCacheWrites();
    this.#syncChildResume();
    this.#syncParentReopen();
    this.#syncMessagePulls(execution);
    this.#syncAlarm(execution);
    // Every change: each waiter decides for itself whether it is settled (see #settled).
    this.#changed.wakeAll();
  }

  /**
   * Keeps the alarm no later than the earliest deadline. Scheduling an alarm is a storage write, so
   * while the execution runs it is only moved earlier, never later (each dispatch has a new watchdog
   * deadline): an alarm that fires before anything is due costs one cheap wake-up and re-arms itself.
   * Cloudflare bills each `setAlarm()` as a row written ($1.00 a million) and each alarm invocation as a request
   * ($0.15 a million): a wake-up is the cheaper of the two, unless it would re-arm the alarm anyway. That is so when
   * a background job failed (`afterFailure`): the work it owes keeps the alarm coming back, so the alarm that stood
   * as that work's safety is moved at once to the job's retry, the write its wake-up would have made.
   * A finished execution that owes nothing more is woken only when its retention runs out; without one, its
   * alarm is cleared, so it is not woken for nothing.
   */
  #syncAlarm(execution: Execution, afterFailure = false): void {
    let due = nextDeadline(execution);
    // Background work dies with the isolate; while any is owed, the alarm must come back for it. While a failed job
    // waits for its retry, that retry's wake-up runs every owed job: no safety comes sooner (see RETRY_BACKGROUND_MS).
    const safety = this.#backgroundRetryAt === undefined ? this.#safetyAlarm(execution, Date.now()) : undefined;
    // Tasks past this invocation's share start from the alarm, at once (see #waiting).
    const fresh = this.#freshInvocationNeeded && this.#waiting.size > 0 ? Date.now() : undefined;
    for (const candidate of [this.#backgroundRetryAt, safety, fresh]) {
      if (candidate !== undefined && (due === undefined || candidate < due)) due = candidate;
    }
    if (due === undefined) {
      if (!TERMINAL_WORKFLOW_STATUSES.has(execution.status)) return;
      const removalDue = removalDueAt(execution, this.#config.executionRetentionMs);
      if (removalDue === undefined) {
        if (this.#alarmAt !== null) {
          this.#alarmAt = null;
          this.#disarmAlarm();
          // No alarm left to fail again: a count kept would start a later run of failures (a reopened execution's) at its end.
          this.#forgetAlarmFailures();
        }
      } else if (this.#alarmAt !== removalDue) {
        // Later than a safety alarm it replaces: nothing else is due, so moving it later loses nothing.
        this.#alarmAt = removalDue;
        this.#armAlarm(removalDue);
      }
      return;
    }
    if (this.#alarmAt !== null && (this.#alarmAt === due || (this.#alarmAt < due && !afterFailure))) return;
    this.#alarmAt = due;
    this.#armAlarm(due);
  }

  /**
   * When the alarm must come back for the background work owed now, should the isolate die: soon
   * ({@link AWAITED_SAFETY_MS}) for what a worker or a parent waits on, later ({@link BACKGROUND_SAFETY_MS}) for the
   * rest; undefined when nothing is owed.
   */
  #safetyAlarm(execution: Execution, now: number): number | undefined {
    let safety = this.#awaitedQueueWorkAt(execution, now);
    // A child's termination too: until it lands the child runs on, making calls its ended parent no longer wants.
    if (this.#owesParentNotice(execution) || Object.keys(this.#childTerminations).length > 0) safety = now + AWAITED_SAFETY_MS;
    if (this.#owesBackgroundWork(execution)) safety = Math.min(safety ?? Infinity, now + BACKGROUND_SAFETY_MS);
    return safety;
  }

  /**
   * When a worker may wait for this object's owed queue work (see {@link AWAITED_SAFETY_MS}): a task's push, by the
   * time a poll may take it and not before a second from now; the choice of a task's domain, a second from now. An owed
   * removal from a queue is waited on by nobody: it is only background work. Undefined when no worker waits.
   */
  #awaitedQueueWorkAt(execution: Execution, now: number): number | undefined {
    let at: number | undefined;
    for (const change of this.#queuePushes.values()) {
      if ("remove" in change) continue;
      const needed = Math.max(now + AWAITED_SAFETY_MS, change.visibleAt);
      if (at === undefined || needed < at) at = needed;
    }
    // Only an execution with a taskToDomain can have a domain to choose: the others skip the look at their tasks.
    if (Object.keys(execution.taskToDomain).length > 0 && awaitedDomainChoices(execution).length > 0) at = now + AWAITED_SAFETY_MS;
    return at;
  }

  /** True while this child owes its parent the news that it ended, or that it was reopened (see {@link AWAITED_SAFETY_MS}). */
  #owesParentNotice(execution: Execution): boolean {
    if (this.#parentReopen !== undefined) return true;
    if (this.#watchers.length === 0 || !TERMINAL_WORKFLOW_STATUSES.has(execution.status)) return false;
    const finished = finishSignature(execution);
    return this.#watchers.some((watcher) => watcher.notified !== finished);
  }

  /** True while this object owes work outside itself: its search row, a parent's notice, a child's termination, a failure workflow's start. */
  #owesBackgroundWork(execution: Execution): boolean {
    if (indexSignature(execution) !== this.#indexedSignature) return true;
    if (Object.keys(this.#childTerminations).length > 0) return true;
    if (this.#failureStarts.length > 0 || this.#statusPublications.length > 0 || this.#queuePushes.size > 0) return true;
    if (this.#owesDelistings(execution)) return true;
    if (this.#dueReleases(execution).length > 0) return true;
    if (this.#limitLeaves.size > 0 || this.#limitEntry !== undefined || this.#cacheWrites.size > 0) return true;
    if (this.#placeLeaves.size > 0 || this.#placeTakes.size > 0 || this.#unaskedPlaces(execution).length > 0) return true;
    if (planOf(execution.definition).usesCache && awaitedCacheLookups(execution).length > 0) return true;
    if (awaitedTaskDefNames(execution).length > 0 || awaitedDomainChoices(execution).length > 0) return true;
    if (this.#childResume) return true;
    if (this.#messagesDeliverable(execution)) return true;
    return this.#owesParentNotice(execution);
  }

  /**
   * Runs background work once at a time per key; on failure the alarm tries it again soon. After a
   * success, background state is checked again: the execution may have changed while the job ran.
   */
  #runJob(key: string, job: () => Promise<void>): void {
    if (this.#jobs.has(key)) return;
    const settled = job().then(
      () => {
        this.#jobs.delete(key);
        // The last failing job done: the retry is no longer due, and the safety alarms apply again (the alarm armed
        // for the retry stays, a wake-up being cheaper than a write: see #syncAlarm).
        if (this.#failingJobs.delete(key) && this.#failingJobs.size === 0) this.#backgroundRetryAt = undefined;
        // Not during a removal: an index write that was on its way must not be followed by another.
        if (this.#execution && !this.#removing) {
          this.#syncIndex(this.#execution);
          this.#syncWatchers(this.#execution);
          // A task queued again while its earlier push was on its way.
          this.#syncQueuePushes();
          this.#syncReleases(this.#execution);
          // An execution that ended (or reopened) while its limit was being asked.
          this.#syncExecutionLimit();
          // Tasks that ended, or came to ask for a place, while places were being asked for.
          this.#syncTaskPlaces(this.#execution);
          // Tasks that came to wait for other names while the look-up was on its way.
          this.#syncTaskDefLookups(this.#execution);
          this.#syncDomainChoices(this.#execution);
          // Tasks that came to wait for their cache look-up while another was on its way; an output completed again.
          this.#syncCacheLookups(this.#execution);
          this.#syncCacheWrites();
          // With nothing more owed, a finished execution's safety alarm can go.
          this.#syncAlarm(this.#execution);
        }
      },
      (error: unknown) => {
        this.#jobs.delete(key);
        const attempt = failedAgain(this.#failingJobs, key);
        if (attempt !== undefined) {
          console.error(JSON.stringify({ msg: "background job failed; will retry", job: key, workflowId: this.#execution?.workflowId, attempt, error: String(error) }));
        }
        // A retry already due stays as it is: another job's failure does not put it off.
        const now = Date.now();
        if (this.#backgroundRetryAt === undefined || this.#backgroundRetryAt <= now) this.#backgroundRetryAt = now + RETRY_BACKGROUND_MS;
        if (this.#execution && !this.#removing) this.#syncAlarm(this.#execution, true);
      },
    );
    // What follows a job touches storage, which throws once the runtime resets the object (its next instance resumes
    // from what was stored); anything else here is a bug to report, not a rejection to leave unhandled.
    settled.catch((error: unknown) => {
      console.error(JSON.stringify({ msg: "background job's follow-up failed", job: key, workflowId: this.#execution?.workflowId, error: String(error) }));
    });
    this.#jobs.set(key, settled);
  }

  /**
   * Writes the search row when what it shows changed; never awaited by a transition. A new execution's
   * first row waits up to {@link FIRST_ROW_DELAY_MS} (an in-memory timer; the safety alarm covers an
   * eviction): most finish sooner, and then one row is written instead of two.
   */
  #syncIndex(execution: Execution): void {
    if (this.#removing) return;
    const signature = indexSignature(execution);
    if (signature === this.#indexedSignature) return;
    const wait = this.#indexRowWait(execution);
    if (wait > 0) {
      this.#indexRowTimer ??= setTimeout(() => {
        this.#indexRowTimer = undefined;
        if (this.#execution) this.#syncIndex(this.#execution);
      }, wait);
      return;
    }
    this.#runJob(`index`, async () => {
      const snapshot = this.#execution!;
      const written = indexSignature(snapshot);
      const row = indexRow(snapshot, this.#indexedSignature === undefined, this.#nextIndexSequence());
      expectIndexWritten(await indexWriterAt(this.env, this.#indexWriterShard(snapshot.workflowId)).upsert(row), "writing the search row");
      // Removed while the row was on its way: its storage is gone, and the removal deleted the row after this write.
      if (this.#execution === null) return;
      this.#indexedSignature = written;
      this.#indexRowWrittenAt = Date.now();
      this.#store.setMeta("indexed", written);
    });
  }

  /**
   * The sequence of the search-row write being made. An instance's first write takes a block of numbers above the one
   * stored (or above the last number, as code before blocks stored it) and stores the block's start before the write
   * leaves: the runtime holds an object's outgoing calls until the storage writes made before them are durable, so the
   * next instance after an eviction takes a block above every number this one sent, even for a write still on its way.
   * One storage write an instance (and a block), not one a row write: the rows a running execution writes are many.
   */
  #nextIndexSequence(): number {
    if (this.#indexSequenceBlockEnd === undefined || this.#indexSequence + 1 >= this.#indexSequenceBlockEnd) {
      const start = (Math.floor(this.#indexSequence / INDEX_SEQUENCE_BLOCK) + 1) * INDEX_SEQUENCE_BLOCK;
      this.#store.setMeta(INDEX_SEQUENCE_META, String(start));
      this.#indexSequenceBlockEnd = start + INDEX_SEQUENCE_BLOCK;
      this.#indexSequence = start;
      return start;
    }
    this.#indexSequence += 1;
    return this.#indexSequence;
  }

  /**
   * How long a running execution's search rows may wait before they are written (0: now). Its first row waits up to
   * {@link FIRST_ROW_DELAY_MS} after its start; a change of its tasks alone (the execution's own row unchanged) waits
   * until {@link TASK_ROWS_INTERVAL_MS} after the last write, so that a busy execution writes its task rows at most
   * that often. A change of the execution itself, and any once it has ended, are written at once.
   */
  #indexRowWait(execution: Execution): number {
    if (TERMINAL_WORKFLOW_STATUSES.has(execution.status)) return 0;
    if (this.#indexedSignature === undefined) return hasTasksFoundByRow(execution) ? 0 : execution.createTime + FIRST_ROW_DELAY_MS - Date.now();
    return onlyTasksChanged(execution, this.#indexedSignature) ? this.#indexRowWrittenAt + TASK_ROWS_INTERVAL_MS - Date.now() : 0;
  }

  /** This execution's search-row writer shard: the pinned one, or (stored before pinning) the current setting's. */
  #indexWriterShard(workflowId: string): number {
    return (this.#indexShard ??= indexShardFor(this.env, workflowId));
  }

  /** Tells every execution waiting for this one that it finished, until each has heard. */
  #syncWatchers(execution: Execution): void {
    if (!TERMINAL_WORKFLOW_STATUSES.has(execution.status)) return;
    // Not before the parent has reopened for this run: a parent still ended would drop the notice (see OwedParentReopen).
    if (this.#parentReopen) return;
    const signature = finishSignature(execution);
    for (const watcher of this.#watchers) {
      if (watcher.notified === signature) continue;
      this.#runJob(`notify:${watcher.workflowId}:${watcher.taskId}`, async () => {
        const notice: ChildFinishedNotice = {
          taskId: watcher.taskId,
          subWorkflowId: execution.workflowId,
          status: execution.status,
          output: execution.output,
          workflowName: execution.workflowName,
          workflowVersion: execution.workflowVersion,
        };
        if (execution.reasonForIncompletion !== undefined) notice.reason = execution.reasonForIncompletion;
        const answer = await executionStub(this.env, watcher.workflowId).childFinished(notice);
        if (answer === "retry") throw new Error(`execution ${watcher.workflowId} does not wait for this child yet; telling it again later`);
        // Removed meanwhile: there is nothing left to record it in, and a write would store a table again.
        if (this.#execution === null) return;
        watcher.notified = signature;
        this.#store.setMeta("watchers", JSON.stringify(this.#watchers));
      });
    }
  }

  /** Adds an execution waiting for this one (a second parent through RETURN_EXISTING). */
  #watch(workflowId: string, taskId: string): void {
    if (this.#watchers.some((watcher) => watcher.workflowId === workflowId && watcher.taskId === taskId)) return;
    this.#watchers.push({ workflowId, taskId });
    this.#store.setMeta("watchers", JSON.stringify(this.#watchers));
    if (!this.#execution) return;
    this.#syncWatchers(this.#execution);
    // A finished execution may have no alarm left: the notice now owed needs one, should the object go before it is sent.
    this.#syncAlarm(this.#execution);
  }

  /** Terminates children whose task was canceled, until each is gone or finished. */
  #syncChildTerminations(workflowId: string): void {
    for (const [childId, reason] of Object.entries(this.#childTerminations)) {
      this.#runJob(`terminate:${childId}`, async () => {
        const result = await executionStub(this.env, childId).terminateAsChild(workflowId, reason);
        // Any refusal means the child may still run (see terminateAsChild): the termination stays owed and is tried again.
        if (!result.ok) throw new Error(result.error.message);
        if (this.#execution === null) return; // removed meanwhile (see the notice job)
        delete this.#childTerminations[childId];
        this.#store.setMeta("childTerminations", JSON.stringify(this.#childTerminations));
      });
    }
  }

  /**
   * Starts each owed failure workflow (and workflow a HUMAN task's trigger names), until it has started or is refused
   * for good; a failure workflow's refusal replaces its id in the output by why (Conductor's "Error workflow … failed
   * to start"), a trigger's is logged. Either way it is then no longer owed.
   */
  #syncFailureStarts(): void {
    for (const start of this.#failureStarts) {
      this.#runJob(FAILURE_START_META + start.workflowId, async () => {
        const outcome = await startFailureWorkflow(this.env, start, this.#config.maxSubWorkflowDepth);
        if (this.#execution === null) return; // removed meanwhile (see the notice job)
        if (!outcome.started && start.trigger !== undefined) {
          // Nothing of the execution shows a trigger's start: the log is where its refusal is told.
          console.warn(JSON.stringify({ msg: "triggered workflow not started", workflowId: start.triggeringWorkflowId, trigger: start.trigger, workflow: start.name, reason: outcome.reason }));
        } else if (!outcome.started) {
          console.warn(JSON.stringify({ msg: "failure workflow not started", workflowId: start.triggeringWorkflowId, failureWorkflow: start.name, reason: outcome.reason }));
          this.#apply({ type: "failureWorkflowNotStarted", workflowId: start.workflowId, name: start.name, reason: outcome.reason });
        }
        this.#failureStarts = this.#failureStarts.filter((owed) => owed !== start);
        this.#store.deleteMeta(FAILURE_START_META + start.workflowId);
      });
    }
  }

  /**
   * Publishes each owed ending to the event handlers of its event (as an EVENT task publishes), until it has been: a
   * publication repeated after an eviction is the same message, whose actions repeat harmlessly.
   */
  #syncStatusPublications(): void {
    for (const publication of this.#statusPublications) {
      this.#runJob(STATUS_PUBLICATION_META + publication.messageId, async () => {
        // What an earlier run took before it failed (refused past its invocation's subrequests, say): not taken again.
        const progress = new KeptActionProgress(this.#store, publication.messageId, () => this.#execution !== null);
        try {
          // One stored before messages carried their publisher's maskedFields takes them from the execution.
          const message = withPublisherMaskedFields(publication, this.#execution?.definition);
          await publishEvent({ env: this.env, scripts: loadScriptRunner }, message, this.#execution?.baseUrl ?? "", progress);
        } catch (error) {
          progress.keepTaken();
          throw error;
        }
        if (this.#execution === null) return; // removed meanwhile (see the notice job)
        this.#statusPublications = this.#statusPublications.filter((owed) => owed !== publication);
        this.#store.deleteMeta(STATUS_PUBLICATION_META + publication.messageId);
        progress.forget();
      });
    }
  }

  /**
   * Puts each owed SIMPLE task in its worker queue (or takes it out), until the queue has it: one call per queue for all
   * the changes owed to it, so a fork of a thousand tasks makes one round trip to its queue, not a thousand (each of
   * which, done, ran every sync of the execution again). One batch per queue is on its way at a time: a task queued again
   * meanwhile is pushed by the next one (pushes of one task never overtake each other). A task whose queue is still owed
   * the release of its earlier hand-out (put back by an IN_PROGRESS report, queued again by a rerun) is pushed only once
   * that release is made (its job, done, calls this again): pushed first, a poll could take it again while the queue
   * still counted the earlier hand-out, and the late release would then free the place of the new one, letting one task
   * more than `concurrentExecLimit` out for as long as the worker holds it.
   */
  #syncQueuePushes(): void {
    const execution = this.#execution;
    const sendable = ([taskId, change]: [string, QueueChange]) => "remove" in change || execution === null || !this.#releases.has(taskId) || !releaseDue(execution, taskId);
    const queues = new Set([...this.#queuePushes].filter(sendable).map(([, change]) => change.queue));
    if (this.#testQueues.size > 0 && this.#execution !== null) for (const queue of this.#owedTestQueues(this.#execution)) queues.add(queue);
    for (const queue of queues) {
      this.#runJob(QUEUE_PUSH_META + queue, async () => {
        const owed = [...this.#queuePushes].filter((owedChange) => owedChange[1].queue === queue && sendable(owedChange));
        const stub = taskQueueAt(this.env, queue);
        const removed = owed.flatMap(([taskId, change]) => ("remove" in change ? [taskId] : []));
        const pushed = owed.flatMap(([, change]) => ("remove" in change ? [] : [change]));
        if (removed.length > 0) await stub.remove(removed);
        if (pushed.length > 0) await stub.push(pushed);
        if (this.#execution === null) return; // removed meanwhile (see the notice job)
        for (const [taskId, change] of owed) {
          if (this.#queuePushes.get(taskId) !== change) continue; // queued again meanwhile: the next batch has it
          this.#queuePushes.delete(taskId);
          this.#store.deleteMeta(QUEUE_PUSH_META + taskId);
        }
        if (this.#testQueues.has(queue)) await this.#delistTestQueue(queue, stub);
      });
    }
  }

  /**
   * The queues of this test run's own domain owed their delisting now: all of them once it has ended and owes them no
   * other change (what a push job sends first), none while it runs (see {@link WorkflowExecution.#testQueues}).
   */
  #owedTestQueues(execution: Execution): string[] {
    return this.#owesDelistings(execution) ? [...this.#testQueues] : [];
  }

  /**
   * True once this test run has ended with queues of its own domain still listed (see {@link WorkflowExecution.#owedTestQueues}).
   * Allocates nothing: {@link WorkflowExecution.#owesBackgroundWork} asks it at every change of every execution.
   */
  #owesDelistings(execution: Execution): boolean {
    return this.#testQueues.size > 0 && TERMINAL_WORKFLOW_STATUSES.has(execution.status);
  }

  /**
   * Delists `queue`, one of this ended test run's own (see {@link WorkflowExecution.#testQueues}), once no change is
   * owed to it, and forgets it unless the run was reopened (and may have queued a task there again) meanwhile.
   */
  async #delistTestQueue(queue: string, stub: DurableObjectStub<TaskQueue>): Promise<void> {
    const owesChange = () => [...this.#queuePushes.values()].some((change) => change.queue === queue);
    const execution = this.#execution;
    if (execution === null || !this.#owedTestQueues(execution).includes(queue) || owesChange()) return;
    await stub.delist(execution.workflowId);
    const current = this.#execution;
    if (current === null || !TERMINAL_WORKFLOW_STATUSES.has(current.status) || owesChange()) return;
    this.#testQueues.delete(queue);
    this.#store.deleteMeta(TEST_QUEUE_META + queue);
  }

  /**
   * Looks up the registered task definitions that tasks wait for (what a DYNAMIC chose, what a dynamic fork forked,
   * when this isolate did not know them: see `TaskExecution.awaitingTaskDef`) and hands them to the decider, which
   * starts those tasks. Nothing is stored until then: an eviction meanwhile leaves the tasks waiting, and the next
   * wake-up (the safety alarm, at the latest) looks again.
   */
  #syncTaskDefLookups(execution: Execution): void {
    if (awaitedTaskDefNames(execution).length === 0) return;
    this.#runJob("taskDefs", async () => {
      const current = this.#execution;
      const names = current === null ? [] : awaitedTaskDefNames(current);
      if (names.length === 0) return;
      const found = await new TaskDefRepository(this.env.DB).findMany(names);
      if (this.#execution === null || this.#removing) return;
      this.#apply({ type: "taskDefsLoaded", taskDefs: Object.fromEntries(names.map((name) => [name, found.get(name) ?? null])) });
    });
  }

  /**
   * Asks the task names' queues which of the fallback domains of SIMPLE tasks scheduled with them have active workers
   * (see `TaskExecution.domainChoices`) and hands the choices to the decider, which queues each task there. Nothing is
   * stored until then: an eviction meanwhile leaves the tasks waiting, and the next wake-up (the safety alarm, at the
   * latest) asks again.
   */
  #syncDomainChoices(execution: Execution): void {
    if (awaitedDomainChoices(execution).length === 0) return;
    this.#runJob("domainChoices", async () => {
      const current = this.#execution;
      const awaited = current === null ? [] : awaitedDomainChoices(current);
      if (awaited.length === 0) return;
      // One question per task name and list: a fork of many such tasks asks once.
      const questions = new Map<string, Promise<string | null>>();
      const answers = awaited.map(({ taskId, taskName, choices }) => {
        const key = JSON.stringify([taskName, choices]);
        let answer = questions.get(key);
        if (answer === undefined) {
          answer = taskQueueAt(this.env, workerQueueKey(taskName, undefined)).chooseDomain(choices);
          questions.set(key, answer);
        }
        return answer.then((domain) => [taskId, domain] as const);
      });
      const domains = Object.fromEntries(await Promise.all(answers));
      if (this.#execution === null || this.#removing) return;
      this.#apply({ type: "workerDomainsChosen", domains });
    });
  }

  /**
   * Looks up the task output cache for the tasks that wait for it (see `TaskExecution.cache`) and hands what it holds to
   * the decider, which completes those it found and starts the others. Nothing is stored until then: an eviction
   * meanwhile leaves the tasks waiting, and the next wake-up (the safety alarm, at the latest) looks again.
   */
  #syncCacheLookups(execution: Execution): void {
    if (!planOf(execution.definition).usesCache || awaitedCacheLookups(execution).length === 0) return;
    this.#runJob("cacheLookup", async () => {
      const current = this.#execution;
      const lookups = current === null ? [] : awaitedCacheLookups(current);
      if (lookups.length === 0) return;
      const { outputs, keys } = await new TaskOutputCache(this.env.DB, this.env.SECRETS_ENCRYPTION_KEY).lookup(lookups, Date.now());
      if (this.#execution === null || this.#removing) return;
      // The finer keys are kept with the tasks that missed: their outputs are cached under the secrets' versions they looked up by.
      this.#apply(Object.keys(keys).length === 0 ? { type: "cacheLookedUp", outputs } : { type: "cacheLookedUp", outputs, keys });
    });
  }

  /** Caches each owed output, until D1 has it. */
  #syncCacheWrites(): void {
    for (const [taskId, write] of this.#cacheWrites) {
      this.#runJob(CACHE_WRITE_META + taskId, async () => {
        await new TaskOutputCache(this.env.DB, this.env.SECRETS_ENCRYPTION_KEY).store(write, Date.now());
        if (this.#execution === null || this.#cacheWrites.get(taskId) !== write) return; // removed, or completed again (a rerun) meanwhile
        this.#cacheWrites.delete(taskId);
        this.#store.deleteMeta(CACHE_WRITE_META + taskId);
      });
    }
  }

  /** The owed releases of tasks that no worker holds any more (see {@link WorkflowExecution.#releases}). */
  #dueReleases(execution: Execution): Array<[taskId: string, owed: { queue: string }]> {
    if (this.#releases.size === 0) return [];
    return [...this.#releases].filter(([taskId]) => releaseDue(execution, taskId));
  }

  /**
   * Gives each limited task that no worker holds any more its place back in its queue, until the queue has it. A task
   * handed out again meanwhile keeps its new owed release (a late release may free its place early: a rare extra one, as a
   * task put back in its queue is pushed there only once its release is made, see {@link WorkflowExecution.#syncQueuePushes}).
   */
  #syncReleases(execution: Execution): void {
    for (const [taskId, owed] of this.#dueReleases(execution)) {
      this.#runJob(RELEASE_META + taskId, async () => {
        await taskQueueAt(this.env, owed.queue).release([taskId]);
        if (this.#releases.get(taskId) !== owed) return;
        this.#releases.delete(taskId);
        this.#store.deleteMeta(RELEASE_META + taskId);
      });
    }
  }

  /**
   * Gives up the places of the rate limits this execution left, then asks for the one it waits for, in that order (see
   * {@link WorkflowExecution.#limitLeaves}); admitted at once, it runs on. Each call is repeated harmlessly after an
   * eviction.
   */
  #syncExecutionLimit(): void {
    if (this.#limitLeaves.size === 0 && this.#limitEntry === undefined) return;
    this.#runJob(LIMIT_JOB, async () => {
      const workflowId = this.#execution?.workflowId;
      if (workflowId === undefined) return;
      for (const key of [...this.#limitLeaves]) {
        await executionLimitAt(this.env, key).leave(workflowId);
        if (this.#execution === null) return; // removed meanwhile (see the notice job)
        this.#limitLeaves.delete(key);
        this.#store.deleteMeta(LIMIT_LEAVE_META + key);
      }
      const entry = this.#limitEntry;
      if (entry === undefined) return;
      const answer = await executionLimitAt(this.env, entry.key).enter(entry.key, workflowId, entry.limit, entry.definedAt, entry.workflowName);
      // Ended (or ended and reopened) meanwhile: what it owes now is done next.
      if (this.#execution === null || this.#limitEntry !== entry) return;
      this.#limitEntry = undefined;
      this.#store.deleteMeta(LIMIT_ENTRY_META);
      if (answer === "admitted") this.#takeAdmission(entry.key);
    });
  }

  /** The places this execution's tasks ask for that this isolate has not asked their limit objects for (see {@link #placesAsked}). */
  #unaskedPlaces(execution: Execution): TaskPlace[] {
    return awaitedPlaces(execution).filter((place) => !this.#placesAsked.has(place.placeId));
  }

  /**
   * Gives the places of limited tasks that ended back to their task names' limit objects, has them count the places
   * held again by tasks reopened in place, then asks for the places tasks wait for (see `task-places.ts`); each call is
   * repeated harmlessly after an eviction. The places given at once let their tasks start; the others are given later
   * by the objects' notices (see {@link givePlace}).
   */
  #syncTaskPlaces(execution: Execution): void {
    if (this.#placeLeaves.size === 0 && this.#placeTakes.size === 0 && this.#unaskedPlaces(execution).length === 0) return;
    this.#runJob(TASK_PLACE_JOB, async () => {
      for (const [placeId, taskName] of [...this.#placeLeaves]) {
        await taskLimitAt(this.env, taskName).leave(placeId);
        if (this.#execution === null) return; // removed meanwhile
        // A take owed meanwhile replaced this leave (it follows below); deleting is then a no-op.
        this.#placeLeaves.delete(placeId);
        this.#store.deleteMeta(PLACE_LEAVE_META + placeId);
      }
      for (const [placeId, taskName] of [...this.#placeTakes]) {
        if (this.#execution === null) return;
        await taskLimitAt(this.env, taskName).take(placeId, this.#execution.workflowId);
        if (this.#execution === null) return; // removed meanwhile
        // A leave owed meanwhile replaced this take: it is sent when this job ends, after the take, as it came.
        this.#placeTakes.delete(placeId);
        this.#store.deleteMeta(PLACE_TAKE_META + placeId);
      }
      const given: TaskPlace[] = [];
      for (const place of this.#execution === null ? [] : this.#unaskedPlaces(this.#execution)) {
        const current = this.#execution;
        const task = current?.tasks.find((candidate) => candidate.taskId === place.taskId);
        // Ended (or run again) while the places before it were asked for: its leave follows.
        if (current === null || task === undefined || placeState(current, place.placeId) !== "asking") continue;
        const definition = instanceTask(current.definition, task);
        // The definition's limits as they are (the object keeps the registered one's for every task of the name); a
        // SUB_WORKFLOW is held to its concurrentExecLimit only (see `countsRate`).
        const limits = handOutLimits(definition) ?? null;
        const definedAt = definition?.taskDefinition?.updateTime ?? definition?.taskDefinition?.createTime ?? 0;
        // Marked asked before the call, not after its answer: the limit object may give the place and hear "gone" from
        // this execution while the answer is on its way (paused meanwhile, see givePlace), which unmarks it so that the
        // task asks again once resumed. Marked after, it stayed marked for a place the object no longer holds, and the
        // resumed task waited for good (nothing else asks while this isolate lives).
        this.#placesAsked.add(place.placeId);
        let entry: PlaceEntry;
        try {
          entry = await taskLimitAt(this.env, place.taskName).enter(place.placeId, current.workflowId, limits, definedAt, countsRate(task.taskType), current.priority);
        } catch (error) {
          this.#placesAsked.delete(place.placeId);
          throw error;
        }
        // A place given is applied below, or given back (paused): either way not one to wait for.
        if (entry === "admitted") {
          this.#placesAsked.delete(place.placeId);
          given.push(place);
        }
      }
      if (given.length === 0 || this.#execution === null || this.#removing) return;
      if (asksForPlaces(this.#execution)) {
        this.#apply({ type: "placesGiven", placeIds: given.map((place) => place.placeId) });
        return;
      }
      // Paused while it asked: the places go back (to be asked for again once resumed), not held unused meanwhile.
      for (const place of given) await taskLimitAt(this.env, place.taskName).leave(place.placeId);
    });
  }

  /**
   * Takes a place under rate limit `key`: a waiting execution runs from now on. "gone" when it does not count under that
   * key (any more): it ended, was removed, or ended and was reopened and has not given that place up yet (its leave
   * and its new entry follow, in order).
   */
  #takeAdmission(key: string): AdmissionAnswer {
    if (!this.#countsUnder(key)) return "gone";
    if (this.#execution?.rateLimited === true) this.#apply({ type: "admitted" });
    return "taken";
  }

  /** True while this execution counts under rate limit `key`: it exists, is not being removed, has not ended, and owes that key no leave. */
  #countsUnder(key: string): boolean {
    const execution = this.#execution;
    if (!execution || this.#removing || TERMINAL_WORKFLOW_STATUSES.has(execution.status)) return false;
    return execution.rateLimitKey === key && !this.#limitLeaves.has(key);
  }

  /**
   * Resolves when the execution is finished or waits on something from outside, or after `waitMs`, or once one of
   * its tasks named in `until` has ended. One that waits for its child is settled only once that child is (the
   * child's own wait follows its children, with `until`: a named task of the child ending settles both): a child that
   * finishes sends its notice, which moves this execution on.
   * True when it stopped because `waitMs` had passed with none of those reached (Conductor's `signalTimeout`): what
   * it came to is looked at before the time is, so a wait of 0 over an execution that has ended or blocks is no timeout.
   */
  async #settled(waitMs: number, until: ReadonlySet<string> = new Set()): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    let unreachable = 0;
    for (;;) {
      const execution = this.#execution;
      if (!execution) return false;
      if (until.size > 0 && hasEndedTask(execution, until)) return false;
      const remaining = deadline - Date.now();
      if (!isBlocked(execution)) {
        if (remaining <= 0) return true;
        await this.#changed.next(remaining);
        continue;
      }
      const childId = awaitedChildId(execution);
      if (childId === undefined) return false;
      // With no time left the child is still asked (it answers at once) whether it waits outside or is busy.
      const child = await this.#childSettled(childId, Math.max(0, remaining), until);
      // Its object has more requests than it can take: not asked again (Cloudflare: retrying an overloaded object
      // worsens the overload), the wait ends as one that ran out, this execution answered as it stands, as below.
      if (child === "overloaded") return true;
      if (child === "unreachable") {
        // Its object was reset or evicted under the call: asked again shortly (a fresh stub), within the time left, as
        // often as a call safe to repeat is (retryingObjectCall). Still unreachable, the wait ends as one that ran out
        // (this execution is answered as it stands, busy), not with an error: it has started, and a 503 has the client
        // of an execute start another.
        const left = deadline - Date.now();
        if (left <= 0 || ++unreachable > OBJECT_CALL_RETRIES) return true;
        await this.#changed.next(Math.min(left, CHILD_SETTLE_RETRY_MS));
        continue;
      }
      unreachable = 0;
      if (child !== "finished") return child === "timedOut";
      // Its notice may have come while the child was asked (look again); if not, it is on its way: wait for it, or,
      // with no time left for that, a timeout (this execution has not moved on).
      const now = this.#execution;
      if (!now || awaitedChildId(now) !== childId) continue;
      const left = deadline - Date.now();
      if (left <= 0) return true;
      await this.#changed.next(left);
    }
  }

  /**
   * The child's {@link WorkflowExecution.settle}, or "unreachable" when its object failed under the call transiently
   * (a reset, an eviction), "overloaded" when its object refused it (`.overloaded`): the wait goes on, or ends, rather
   * than failing the call that waits, whose execution has started (an execute answered 503 would have its client
   * start another).
   */
  async #childSettled(childId: string, waitMs: number, until: ReadonlySet<string>): Promise<"finished" | "waiting" | "timedOut" | "gone" | "unreachable" | "overloaded"> {
    try {
      return await executionStub(this.env, childId).settle(waitMs, [...until]);
    } catch (error) {
      if (isOverloadedObjectError(error)) return "overloaded";
      if (isTransientObjectError(error)) return "unreachable";
      throw error;
    }
  }

  // ---- children ---------------------------------------------------------------------------

  #childTasks(execution: Execution): TaskExecution[] {
    return execution.tasks.filter((task) => task.taskType === "SUB_WORKFLOW" && task.subWorkflowId !== undefined).reverse();
  }

  /**
   * Reruns from a task that belongs to a child (at any depth): the child reruns, and this execution waits
   * for it again (see {@link WorkflowExecution.#resumeChild}).
   */
  async #rerunInChild(
    execution: Execution,
    command: Extract<WorkflowCommand, { type: "rerun" }> & { fromTaskId: string },
    tellParent: boolean,
    environment: Record<string, string> | undefined,
  ): Promise<ActorResult<null>> {
    if (!TERMINAL_WORKFLOW_STATUSES.has(execution.status)) throw new EngineError("CONFLICT", `Cannot rerun workflow ${execution.workflowId}: its status is ${execution.status}`);
    for (const task of this.#childTasks(execution)) {
      const child = executionStub(this.env, task.subWorkflowId!);
      if (!(await child.locateTask(command.fromTaskId))) continue;
      const view = await this.#childView(task.subWorkflowId!);
      if (view === null) continue;
      // Rerunning inside a child runs that child again: only for someone who may start it.
      if (command.startScopes !== undefined && !mayStartWorkflow(command.startScopes, view.workflowName)) {
        throw new EngineError("FORBIDDEN", `Cannot rerun task ${command.fromTaskId}: it belongs to sub workflow ${view.workflowName}, which you may not start (${START_PERMISSION} on workflow:${view.workflowName})`);
      }
      const { workflowInput, correlationId, ...forChild } = command;
      const asked = { startScopes: command.startScopes, tellParent, environment, workflowInput, correlationId };
      return this.#resumeChild(task, view, asked, () => child.command({ ...forChild, byParent: true }));
    }
    throw new EngineError("INVALID", `Task ${command.fromTaskId} is not part of workflow ${execution.workflowId} or its sub workflows`);
  }

  /**
   * Retries a failed child in place when the failure came from a SUB_WORKFLOW task whose child can be retried;
   * undefined when it cannot, and the task is then retried like any other, with a new child. As Conductor:
   * it resumes inside the child only when there is a failed child to resume. Also undefined when the retrier
   * may not start that child (the ordinary retry then fails at its dispatch).
   */
  async #retryInChild(
    execution: Execution,
    startScopes: string[] | undefined,
    tellParent: boolean,
    environment: Record<string, string> | undefined,
  ): Promise<ActorResult<null> | undefined> {
    const last = execution.tasks.at(-1);
    if (!TERMINAL_WORKFLOW_STATUSES.has(execution.status) || execution.status === "COMPLETED") return undefined;
    // With forks the failed task need not be the last, and other branches may have to run again too: the ordinary
    // retry does both (the failed SUB_WORKFLOW task gets a new child).
    if (planOf(execution.definition).hasForks) return undefined;
    if (!last || last.taskType !== "SUB_WORKFLOW" || last.subWorkflowId === undefined || last.status === "COMPLETED") return undefined;
    const child = executionStub(this.env, last.subWorkflowId);
    // Asked before this execution reopens to wait for it: a child that is gone (removed) would never tell.
    const view = await this.#childView(last.subWorkflowId);
    // A child with no task to retry (it ended before any was scheduled, or none failed) refuses its own retry: as
    // Conductor's findLastFailedSubWorkflowIfAny, which finds no failed task in it, the task is retried with a new child.
    if (view === null || !RETRYABLE_WORKFLOW_STATUSES.has(view.status) || view.retryable === false) return undefined;
    if (startScopes !== undefined && !mayStartWorkflow(startScopes, view.workflowName)) return undefined;
    return this.#resumeChild(last, view, { startScopes, tellParent, environment }, () => child.command({ type: "retry", resumeSubworkflowTasks: true, startScopes, byParent: true }));
  }

  /**
   * Asks the child to run again and reopens this execution to wait for it only once it accepted: a refusal
   * changes nothing here. The request is stored first (see {@link PendingChildResume}); an answer lost to an
   * error or an eviction is found again by {@link WorkflowExecution.#syncChildResume}.
   */
  async #resumeChild(
    task: TaskExecution,
    child: ChildView,
    asked: {
      startScopes: string[] | undefined;
      tellParent: boolean;
      environment: Record<string, string> | undefined;
      workflowInput?: JsonObject | undefined;
      correlationId?: string | undefined;
    },
    restartChild: () => Promise<ActorResult<null>>,
  ): Promise<ActorResult<null>> {
    const { startScopes, tellParent, environment, workflowInput, correlationId } = asked;
    // Checked again: a removal may have begun, or finished, while the child was being looked at.
    const execution = this.#execution;
    if (!execution) throw this.#notFound();
    if (this.#removing) throw this.#beingRemoved(execution);
    if (this.#childResume) throw this.#resumingChild(execution, this.#childResume);
    const pending: PendingChildResume = { taskId: task.taskId, subWorkflowId: task.subWorkflowId!, childEndTime: child.endTime };
    if (startScopes !== undefined) pending.startScopes = startScopes;
    if (tellParent) pending.tellParent = true;
    if (environment !== undefined) pending.environment = environment;
    if (workflowInput !== undefined) pending.workflowInput = workflowInput;
    if (correlationId !== undefined) pending.correlationId = correlationId;
    // The execution may have changed during the awaits before: refuse now, before the child is asked, what the reopen would.
    decide(execution, this.#resumeChildEvent(pending), this.#decideEnv());
    this.#setChildResume(pending);
    this.#syncAlarm(execution);
    this.#childResumeAsked = true;
    let result: ActorResult<null>;
    try {
      result = await restartChild();
    } catch (error) {
      // The child may or may not have accepted: ask it what it is doing now.
      this.#childResumeAsked = false;
      this.#syncChildResume();
      throw error;
    }
    this.#childResumeAsked = false;
    if (result.ok) this.#reopenForChild(pending);
    else this.#setChildResume(undefined);
    return result;
  }

  /** Finds out whether the child accepted a resume whose answer was lost, and acts on it (once at a time, retried until known). */
  #syncChildResume(): void {
    if (!this.#childResume || this.#childResumeAsked) return;
    this.#runJob("childResume", async () => {
      const pending = this.#childResume;
      if (!pending || this.#childResumeAsked) return;
      const child = await this.#childView(pending.subWorkflowId);
      if (this.#childResume !== pending) return;
      const ranAgain = child !== null && (!TERMINAL_WORKFLOW_STATUSES.has(child.status) || child.endTime !== pending.childEndTime);
      if (!ranAgain) {
        this.#setChildResume(undefined);
        return;
      }
      this.#reopenForChild(pending);
      // Finished again already: its notice was turned away while the reopen was owed.
      if (TERMINAL_WORKFLOW_STATUSES.has(child.status)) {
        const state: ChildEnding = { status: child.status, output: child.output, workflowName: child.workflowName };
        if (child.workflowVersion !== undefined) state.workflowVersion = child.workflowVersion;
        if (child.reasonForIncompletion !== undefined) state.reason = child.reasonForIncompletion;
        this.#takeChildState(pending.taskId, pending.subWorkflowId, state);
      }
    });
  }

  /** The child accepted: this execution waits for it again (in the same turn as forgetting the request). */
  #reopenForChild(pending: PendingChildResume): void {
    this.#setChildResume(undefined);
    this.#reopen(this.#resumeChildEvent(pending), pending.tellParent === true);
    // Waited for again, the child's own retries reopen this execution again.
    if (this.#childrenLetGo.includes(pending.subWorkflowId)) {
      this.#childrenLetGo = this.#childrenLetGo.filter((childId) => childId !== pending.subWorkflowId);
      this.#store.setMeta("childrenLetGo", JSON.stringify(this.#childrenLetGo));
    }
  }

  /**
   * Applies a retry, restart, rerun or resumed child; when `tellParent`, this execution owes its parent the reopen
   * (see {@link OwedParentReopen}), recorded in the same synchronous turn, so in the same transaction.
   */
  #reopen(event: Extract<ExecutionEvent, { type: "retry" | "restart" | "rerun" | "resumeChild" }>, tellParent: boolean): void {
    const execution = this.#execution!;
    if (!tellParent || execution.parentWorkflowId === undefined || execution.parentWorkflowTaskId === undefined) {
      this.#apply(event);
      return;
    }
    if (this.#parentReopen) {
      // Reopened again before the parent answered: that one answer covers this reopen as well, and the parent takes
      // this reopener's start scopes, as it would had it answered in between (and ended again with the child).
      this.#apply(event);
      if (event.startScopes === undefined) return;
      this.#parentReopen.startScopes = event.startScopes;
      this.#store.setMeta("parentReopen", JSON.stringify(this.#parentReopen));
      return;
    }
    const owed: OwedParentReopen = { workflowId: execution.parentWorkflowId, taskId: execution.parentWorkflowTaskId };
    if (event.startScopes !== undefined) owed.startScopes = event.startScopes;
    // Owed before the event applies: a reopen that ends at once (a task that fails as it starts) must hold back
    // that end's notice too, or the still-ended parent would drop it and, once reopened, wait for it forever.
    this.#parentReopen = owed;
    try {
      this.#apply(event);
    } catch (error) {
      this.#parentReopen = undefined;
      throw error;
    }
    this.#store.setMeta("parentReopen", JSON.stringify(owed));
  }

  /**
   * Waits, at most {@link PARENT_REOPEN_WAIT_MS}, for the parent to answer this execution's reopen (see
   * {@link OwedParentReopen}); nothing when none is owed. Never throws: one still owed at the end is told again later.
   */
  async #awaitParentReopen(): Promise<void> {
    const deadline = Date.now() + PARENT_REOPEN_WAIT_MS;
    // A telling refused at once (the parent busy answering another, or reset) is tried again within the bound.
    while (this.#parentReopen !== undefined && this.#execution !== null) {
      this.#syncParentReopen();
      const telling = this.#jobs.get("parentReopen");
      if (telling === undefined || (await settledWithin(telling, deadline - Date.now())) === undefined) return;
      if (this.#parentReopen === undefined || Date.now() + PARENT_REOPEN_RETRY_MS >= deadline) return;
      await new Promise((resolve) => setTimeout(resolve, PARENT_REOPEN_RETRY_MS));
    }
  }

  /** Tells the parent that this execution runs again (see {@link OwedParentReopen}), until it has answered. */
  #syncParentReopen(): void {
    const owed = this.#parentReopen;
    if (!owed) return;
    this.#runJob("parentReopen", async () => {
      // A notice of the end before this reopen may still be on its way: the parent takes it first, so that
      // the reopen then finds the task ended, as it is to reopen it (the settled job never rejects).
      await this.#jobs.get(`notify:${owed.workflowId}:${owed.taskId}`);
      const execution = this.#execution;
      if (!execution || this.#parentReopen !== owed) return;
      const notice: ChildReopenedNotice = { taskId: owed.taskId, subWorkflowId: execution.workflowId };
      if (owed.startScopes !== undefined) notice.startScopes = owed.startScopes;
      const answer = await executionStub(this.env, owed.workflowId).childReopened(notice);
      if (answer === "retry") throw new Error(`execution ${owed.workflowId} cannot answer this child's reopen yet; telling it again later`);
      // Removed meanwhile (see the notice job).
      if (this.#execution === null || this.#parentReopen !== owed) return;
      this.#parentReopen = undefined;
      this.#store.deleteMeta("parentReopen");
    });
  }

  #resumeChildEvent(pending: PendingChildResume): Extract<ExecutionEvent, { type: "resumeChild" }> {
    // The reopened execution's later children start with the asker's rights, and its tasks read the variables as the
    // asking retry or rerun read them, as after any other reopening.
    const event: Extract<ExecutionEvent, { type: "resumeChild" }> = { type: "resumeChild", taskId: pending.taskId, startScopes: pending.startScopes };
    if (pending.environment !== undefined) event.environment = pending.environment;
    if (pending.workflowInput !== undefined) event.workflowInput = pending.workflowInput;
    if (pending.correlationId !== undefined) event.correlationId = pending.correlationId;
    return event;
  }

  #setChildResume(pending: PendingChildResume | undefined): void {
    this.#childResume = pending;
    if (pending) this.#store.setMeta("childResume", JSON.stringify(pending));
    else this.#store.deleteMeta("childResume");
  }

  /** Feeds a child's terminal state to the task waiting for it. */
  #takeChildState(taskId: string, subWorkflowId: string, child: ChildEnding): void {
    const { status, output, reason, workflowName, workflowVersion, lost } = child;
    // Only what a child's ending holds: a notice is an RPC argument, which may carry more than its type says.
    const event: ExecutionEvent = { type: "childFinished", taskId, subWorkflowId, status, output };
    if (reason !== undefined) event.reason = reason;
    if (workflowName !== undefined) event.workflowName = workflowName;
    if (workflowVersion !== undefined) event.workflowVersion = workflowVersion;
    if (lost === true) event.lost = true;
    this.#apply(event);
  }

  /** What this execution needs to know of a child, or null when the child does not exist (or is being removed). */
  async #childView(childId: string): Promise<ChildView | null> {
    const json = await executionStub(this.env, childId).childViewJson();
    return json === null ? null : (JSON.parse(json) as ChildView);
  }

  // ---- side effects -----------------------------------------------------------------------

  /**
   * The task's input as its side effect needs it: with real secret values when it references any
   * (they exist only in memory, for this call), else the stored input.
   */
  async #liveInput(execution: Execution, task: TaskExecution): Promise<LiveInput | UnresolvedInput> {
    const named = this.#namedSecrets(execution, task);
    if (!named) return { input: task.inputData, secrets: [], sealed: new Map() };
    return this.#inputWithSecrets(execution, task, named, await readSecrets(this.env, named.names));
  }

  /**
   * {@link WorkflowExecution.#liveInput} of `task`, which names the secrets of `named`, with their values as `read` gives
   * them (`sealed`: the encrypted form of each, to keep where whoever is handed the input may quote it back later).
   */
  #inputWithSecrets(execution: Execution, task: TaskExecution, named: { definition: WorkflowTaskDef; names: string[] }, read: SecretRead): LiveInput | UnresolvedInput {
    const { lookup } = read;
    try {
      // As when it was scheduled: the variables may have changed since, and what is sent must match what is stored.
      const asScheduled: Execution = { ...execution, variables: task.inputVariables ?? {} };
      // Defaults a task type added at start (e.g. webhook ids) stay; the template's values win.
      const context = evaluationContext(asScheduled, Date.now(), task.taskId, lookup, this.#config.engine.maxPayloadBytes);
      const input = { ...task.inputData, ...(resolvedTaskInput(named.definition, (template) => resolveValue(template, context)) as JsonObject) };
      // The values themselves, so whatever the side effect brings back can be scrubbed of them.
      return { input, secrets: secretValues(named.names, lookup), sealed: sealedOf(named.names, read.sealed) };
    } catch (error) {
      // Returned, not thrown: thrown out of a dispatch, the watchdog would send the task again for ever.
      if (error instanceof MissingSecretError || isExpressionFailure(error)) return error;
      throw error;
    }
  }

  /**
   * Stores log lines of task `taskId` (which this execution holds), masked of `secrets` (the values its worker was
   * handed) and cut to MAX_TASK_LOG_BYTES, each `createdTime` now unless given; the task keeps its latest
   * {@link TASK_LOG_LINES_KEPT}, the execution its latest {@link EXECUTION_LOG_LINES_KEPT}. Synchronous: written in the
   * caller's transaction, before it answers.
   */
  #appendTaskLog(taskId: string, logs: readonly TaskLogInput[], secrets: readonly string[]): void {
    const now = Date.now();
    // Masked before it is cut: a cut through a secret's value would leave the part before it unmasked.
    const lines = logs.map((line) => ({ log: cutToBytes(secrets.length > 0 ? redactSecretValues(line.log, secrets) : line.log, MAX_TASK_LOG_BYTES), createdTime: line.createdTime ?? now }));
    this.#store.appendTaskLog(taskId, lines, TASK_LOG_LINES_KEPT, EXECUTION_LOG_LINES_KEPT);
  }

  /** The values of the secrets `task`'s input names, those that exist (none for a rerun's literal input). */
  async #secretValues(execution: Execution, task: TaskExecution): Promise<string[]> {
    const named = this.#namedSecrets(execution, task);
    const current = named ? secretValues(named.names, (await readSecrets(this.env, named.names)).lookup) : [];
    // Those it was handed too: a secret replaced or deleted since is still what a worker (or a service) may quote back.
    const given = await unsealSecretValues(this.env, this.#store.givenSecrets(task.taskId));
    return given.length === 0 ? current : [...new Set([...current, ...given])];
  }

  /**
   * The template `task`'s input resolves from and the secrets it names; undefined when it names none, or when its
   * input is a rerun's `taskInput`, sent as given: literal, like any data from outside.
   */
  #namedSecrets(execution: Execution, task: TaskExecution): { definition: WorkflowTaskDef; names: string[] } | undefined {
    const definition = instanceTask(execution.definition, task);
    if (task.inputGiven === true || !definition) return undefined;
    const names = referencedSecrets(taskInputTemplate(definition));
    return names.length === 0 ? undefined : { definition, names };
  }

  /**
   * Runs a task's side effect and feeds its result back; the attempt number makes late results harmless. An HTTP task
   * waits its turn (see {@link WorkflowExecution.#waiting}).
   */
  #dispatch(taskId: string, attempt: number): void {
    const task = this.#execution?.tasks.find((candidate) => candidate.taskId === taskId);
    if (!task || task.attempt !== attempt) return;
    this.#inFlight.get(taskId)?.abort();
    this.#waiting.delete(taskId);
    const controller = new AbortController();
    this.#inFlight.set(taskId, controller);
    if (!isHttpFamilyType(task.taskType) && !startsAWorkflow(task.taskType)) {
      this.#send(task, controller, 0);
      return;
    }
    this.#wait(task, controller);
    this.#startWaiting();
  }

  /** Puts `task`'s attempt in {@link WorkflowExecution.#waiting}, with what its start will take. */
  #wait(task: TaskExecution, controller: AbortController): void {
    const { taskId, attempt } = task;
    this.#waiting.set(taskId, { attempt, controller, ...waitingCost(task) });
    // Canceled before its turn (the workflow terminated, the task timed out): it sends nothing, and holds nothing.
    controller.signal.addEventListener("abort", () => {
      if (this.#waiting.get(taskId)?.controller !== controller) return;
      this.#waiting.delete(taskId);
      if (this.#inFlight.get(taskId) === controller) this.#inFlight.delete(taskId);
    });
  }

  /**
   * Starts the waiting tasks, in the order they were dispatched, while connections are free and this invocation's
   * shares of requests and of child starts allow; past a share, arms the alarm for now. One canceled
   * or dispatched again meanwhile is dropped. A task needing more than a whole share at once (hedged) goes first in a
   * fresh count, or it would never go. A child start needs no connection: it does not wait behind HTTP tasks that do.
   */
  #startWaiting(): void {
    let connectionsTaken = false;
    // The map itself, not a copy: nothing here adds to it (a send's work starts after an await), and an entry deleted
    // once visited is one a Map's iteration has passed. A copy at each dispatch and answer was as costly as the look.
    for (const [taskId, { attempt, controller, requests, starts }] of this.#waiting) {
      // Behind an HTTP task waiting for a connection, the HTTP tasks after it wait too: passed over without being looked
      // up, as a fork of a thousand would otherwise look each one up among the execution's tasks at every answer; and
      // once only they are left (each task visited that sends no request was started or dropped), not visited at all.
      if (connectionsTaken && requests > 0) {
        if (this.#waiting.withoutRequests === 0) return;
        continue;
      }
      const task = this.#execution?.tasks.find((candidate) => candidate.taskId === taskId);
      if (controller.signal.aborted || !task || task.attempt !== attempt || this.#inFlight.get(taskId) !== controller) {
        this.#waiting.delete(taskId);
        if (this.#inFlight.get(taskId) === controller) this.#inFlight.delete(taskId);
        continue;
      }
      if (this.#freshInvocationNeeded) return;
      // An answer frees a connection, and starts the next; HTTP tasks keep their order among themselves.
      if (requests > 0 && !this.#connectionsFree(requests)) {
        connectionsTaken = true;
        continue;
      }
      if (!this.#withinShares(requests, starts)) {
        this.#needFreshInvocation();
        return;
      }
      this.#waiting.delete(taskId);
      this.#httpRequestsStarted += requests;
      this.#childStartsMade += starts;
      this.#send(task, controller, requests);
    }
  }

  /** Whether `requests` more requests may be open at once (see {@link MAX_OPEN_HTTP_REQUESTS}); the first always may. */
  #connectionsFree(requests: number): boolean {
    return this.#openHttpRequests === 0 || this.#openHttpRequests + requests <= MAX_OPEN_HTTP_REQUESTS;
  }

  /**
   * Whether a task sending `requests` HTTP requests and starting `starts` workflows may start in this invocation:
   * within its share of each it uses (see {@link WorkflowExecution.#httpRequestsStarted} and
   * {@link WorkflowExecution.#childStartsMade}). The first of a fresh count always may, whatever it needs.
   */
  #withinShares(requests: number, starts: number): boolean {
    const requestsFit = requests === 0 || this.#httpRequestsStarted === 0 || this.#httpRequestsStarted + requests <= this.#config.httpRequestsPerInvocation;
    const startsFit = starts === 0 || this.#childStartsMade === 0 || this.#childStartsMade + starts <= this.#config.childStartsPerInvocation;
    return requestsFit && startsFit;
  }

  /** This invocation starts nothing more: the alarm, armed for now, starts what waits (see {@link WorkflowExecution.#waiting}). */
  #needFreshInvocation(): void {
    if (this.#freshInvocationNeeded) return;
    this.#freshInvocationNeeded = true;
    if (this.#execution) this.#syncAlarm(this.#execution);
  }

  /** In the alarm, a fresh invocation: new shares of requests and child starts, and the waiting tasks start. */
  #startWaitingAfresh(): void {
    this.#httpRequestsStarted = 0;
    this.#childStartsMade = 0;
    this.#freshInvocationNeeded = false;
    this.#startWaiting();
  }

  /** Performs `task`'s side effect under `controller`, holding `requests` connections until it has ended (see {@link WorkflowExecution.#dispatch}). */
  #send(task: TaskExecution, controller: AbortController, requests: number): void {
    const { taskId } = task;
    this.#openHttpRequests += requests;
    // Once per send: the success path releases before it applies the result, and a throw there (or in the next start)
    // reaches the catch below, which releases too; twice would leave #openHttpRequests short, past the connection cap.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#openHttpRequests -= requests;
      if (requests > 0) this.#startWaiting();
    };
    this.#perform(task, controller.signal)
      .then((event) => {
        if (this.#inFlight.get(taskId) === controller) this.#inFlight.delete(taskId);
        release();
        if (this.#execution) this.#applyResult(event);
      })
      .catch((error: unknown) => {
        const current = this.#execution?.tasks.find((candidate) => candidate.taskId === taskId);
        if (isSubrequestLimitError(error) && this.#inFlight.get(taskId) === controller && !controller.signal.aborted && current?.attempt === task.attempt) {
          // Nothing was sent, and this invocation can send no more: the alarm, a fresh invocation, sends it again
          // instead of the watchdog, much later, or the task failing as if the connection had been refused.
          this.#wait(task, controller);
          this.#needFreshInvocation();
          release();
          return;
        }
        if (this.#inFlight.get(taskId) === controller) this.#inFlight.delete(taskId);
        release();
        // The watchdog deadline re-dispatches; log for the operator (the error's kind only: its
        // message may quote a URL or value holding a secret).
        console.error(JSON.stringify({ msg: "task dispatch failed; the watchdog will retry", workflowId: this.#execution?.workflowId, taskId, error: error instanceof Error ? error.name : typeof error }));
      });
  }

  /**
   * Applies a side effect's result. One the engine cannot apply for a reason other than its rules (a value
   * it cannot handle, a bug) fails the task for good: left alone, the watchdog would send it again forever,
   * and the same result would fail the same way each time.
   */
  #applyResult(event: ExecutionEvent): void {
    try {
      this.#apply(event);
    } catch (error) {
      if (error instanceof EngineError || event.type !== "dispatchResult") throw error;
      const kind = error instanceof Error ? error.name : typeof error;
      // The error's kind only: its message may quote a value holding a secret.
      console.error(JSON.stringify({ msg: "task result could not be applied; failing the task", workflowId: this.#execution?.workflowId, taskId: event.taskId, error: kind }));
      this.#apply({
        type: "dispatchResult",
        taskId: event.taskId,
        attempt: event.attempt,
        status: "FAILED_WITH_TERMINAL_ERROR",
        output: {},
        reason: `The task's result could not be recorded (${kind})`,
      });
    }
  }

  async #perform(task: TaskExecution, cancel: AbortSignal): Promise<ExecutionEvent> {
    const execution = this.#execution!;
    const definition = instanceTask(execution.definition, task)!;
    const failed = (reason: string): ExecutionEvent => ({ type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "FAILED_WITH_TERMINAL_ERROR", output: {}, reason });
    const live = await this.#liveInput(execution, task);
    if (live instanceof Error) return failed(unresolvedInputReason(live));
    const unsendable = live.input === task.inputData ? undefined : oversizeLiveReason(live.input, this.#config.engine.maxPayloadBytes);
    if (unsendable !== undefined) return failed(unsendable);
    // The task may have been canceled or completed while its input was read: start nothing for it.
    if (cancel.aborted) return { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "CANCELED", output: {}, reason: "Canceled before it was dispatched" };
    // Before the call: the service an asyncComplete HTTP task reaches reports it from outside, perhaps after the secret
    // it was sent was replaced or deleted, and what it quotes back is scrubbed of the values it was sent.
    if (isHttpType(task.taskType) && isAsyncComplete(definition.asyncComplete, live.input)) this.#store.addGivenSecrets(task.taskId, live.sealed);
    const event = await this.#sideEffect(task, definition, execution, live.input, cancel, failed);
    if (live.secrets.length === 0 || event.type !== "dispatchResult") return event;
    // A service may echo a credential back (or an error may quote a URL): scrub before it is stored and shown.
    const scrubbed = { ...event, output: redactSecretValues(event.output, live.secrets) };
    if (event.reason !== undefined) scrubbed.reason = redactSecretValues(event.reason, live.secrets);
    return scrubbed;
  }

  async #sideEffect(
    task: TaskExecution,
    definition: Execution["definition"]["tasks"][number],
    execution: Execution,
    input: JsonObject,
    cancel: AbortSignal,
    failed: (reason: string) => ExecutionEvent,
  ): Promise<ExecutionEvent> {
    switch (task.taskType) {
      case "HTTP":
      case "HTTP_SYNC":
      case "HTTP_POLL":
        return dispatchHttp(task, input, {
          engine: this.#config.engine,
          maxResponseBytes: this.#config.httpMaxResponseBytes,
          // A poll's answer is always the poll's: it never waits to be completed from outside.
          asyncComplete: isHttpType(task.taskType) && isAsyncComplete(definition.asyncComplete, input),
          cancel,
          egress: this.#config.egress,
        });
      case "SUB_WORKFLOW":
        // The stored (masked) input: whatever reaches the child is stored and shown as the child's.
        return dispatchSubWorkflow(this.env, execution, task, task.inputData, this.#config.maxSubWorkflowDepth, definition, inlineChildDefinition(definition));
      case "START_WORKFLOW":
        // The stored (masked) input too: the started workflow's input is stored and shown as its own.
        return dispatchStartWorkflow(this.env, execution, task, task.inputData, inlineStartedDefinition(definition));
      case "EVENT":
        // The stored (masked) input: the payload is stored and shown as the task's output.
        return dispatchEvent(execution, task, definition);
      case "GET_SIGNED_JWT":
        // The live input: the private key the secret holds, never stored.
        return dispatchSignedJwt(task, input, Date.now());
      case "UPDATE_SECRET":
        // The live input: a value taken from another secret is `***` in the stored one.
        return dispatchUpdateSecret(this.env.DB, this.env.SECRETS_ENCRYPTION_KEY, task, input, Date.now());
      case "UPDATE_TASK":
      case "TERMINATE_WORKFLOW": {
        // The stored (masked) input: what it sends is stored and shown where it lands.
        const reach: ExecutionReach = {
          env: this.env,
          // Its own execution is this object: a call through a stub would come back here as another request.
          execution: (workflowId) => (workflowId === execution.workflowId ? this : isWorkflowId(workflowId) ? stubHandle(executionStub(this.env, workflowId)) : undefined),
        };
        return task.taskType === "UPDATE_TASK" ? dispatchUpdateTask(reach, execution, task) : dispatchTerminateWorkflow(reach, execution, task);
      }
      default:
        return failed(`Task type ${task.taskType} has no dispatcher`);
    }
  }
}
