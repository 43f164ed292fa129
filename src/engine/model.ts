/**
 * The data model of workflow definitions and executions, shaped after Conductor's
 * `WorkflowDef`, `WorkflowTask`, `Workflow` and `Task` so existing clients read it unchanged.
 * Pure types: no runtime imports.
 */
import type { HumanProgress } from "./tasks/human/progress";

/** Any JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * Task types this service runs. SIMPLE is Conductor's worker task: it waits in its task type's queue until a
 * worker polls it (`GET /api/tasks/poll/{taskType}`) and reports its result (`POST /api/tasks`). SWITCH runs one
 * of its branches (`decisionCases`, `defaultCase`), chosen by its `expression`. WAIT, SET_VARIABLE and TERMINATE
 * are Conductor's system tasks, run by the engine itself. FORK_JOIN runs its branches (`forkTasks`) side by side, and
 * the JOIN that must follow it waits for the tasks it names (`joinOn`). INLINE computes a value with a script or
 * an input parameter. DO_WHILE runs its `loopOver` tasks again and again, as long as its `loopCondition` holds (or once
 * for each of its `items`); WHILE (Conductor OSS's) is the same loop asking its condition before the first iteration
 * too, so that it may run none. JSON_JQ_TRANSFORM reshapes its input with a jq filter. HUMAN waits for a person's result,
 * reported from outside. DECISION is Conductor's older SWITCH: its case comes from `caseValueParam` or `caseExpression`.
 * FORK_JOIN_DYNAMIC is a fork whose branches (one task each) its input gives when it runs. DYNAMIC runs one task whose
 * name (a worker's task, or a system task type) its input gives when it is scheduled. START_WORKFLOW starts another
 * workflow on its own (not a child); NOOP does nothing. YIELD (Orkes') waits until a signal or a task update resumes it.
 * EVENT publishes a Conductor internal event (its `sink`), which event handlers act on. HTTP_POLL calls an HTTP endpoint
 * again and again, at its polling interval, until its `terminationCondition` holds for a response. LAMBDA is
 * Conductor's older INLINE: a JavaScript function body whose return value is the result. UPDATE_TASK (Orkes') completes,
 * fails or updates another task, as the completion API would; TERMINATE_WORKFLOW (Orkes') terminates other workflows.
 * GET_SIGNED_JWT (Orkes') signs a JSON Web Token with a private key a secret holds; UPDATE_SECRET (Orkes') writes a secret.
 * PULL_WORKFLOW_MESSAGES (Conductor's Workflow Message Queue) waits for messages pushed to its workflow, and takes a batch.
 * EXCLUSIVE_JOIN (Conductor's) ends with the first task of its `joinOn` (else of its `defaultExclusiveJoinTask`) that
 * ran: typically after a SWITCH, the last task of whichever branch it took. CONDITIONAL_FORK (Conductor OSS's) is a
 * FORK_JOIN whose branches (`conditionalBranches`) each may carry a condition: those whose condition holds, and those
 * without one, run side by side (else its `defaultCase`), and the JOIN after it waits for them. HTTP_SYNC (Conductor
 * OSS's) is the HTTP task under another name (see {@link isHttpType}).
 */
export const TASK_TYPES = [
  "HTTP",
  "SUB_WORKFLOW",
  "WAIT_FOR_WEBHOOK",
  "SIMPLE",
  "SWITCH",
  "WAIT",
  "SET_VARIABLE",
  "SET_CORRELATION_ID",
  "TERMINATE",
  "FORK_JOIN",
  "JOIN",
  "EXCLUSIVE_JOIN",
  "INLINE",
  "DO_WHILE",
  "WHILE",
  "JSON_JQ_TRANSFORM",
  "HUMAN",
  "DECISION",
  "FORK_JOIN_DYNAMIC",
  "DYNAMIC",
  "START_WORKFLOW",
  "NOOP",
  "YIELD",
  "EVENT",
  "HTTP_POLL",
  "LAMBDA",
  "UPDATE_TASK",
  "TERMINATE_WORKFLOW",
  "GET_SIGNED_JWT",
  "UPDATE_SECRET",
  "PULL_WORKFLOW_MESSAGES",
  "CONDITIONAL_FORK",
  "HTTP_SYNC",
] as const;
/** One of {@link TASK_TYPES}. */
export type TaskType = (typeof TASK_TYPES)[number];

/**
 * The loop types: DO_WHILE and WHILE run on the same machinery (the plan's loop step, its iterations, keepLastN, items,
 * reruns); they differ only in whether the condition is asked before the first iteration (see `tasks/do-while`).
 */
const LOOP_TYPES: ReadonlySet<unknown> = new Set<TaskType>(["DO_WHILE", "WHILE"]);

/** True when `type` is a loop's (DO_WHILE or WHILE): one whose `loopOver` runs in iterations. */
export function isLoopType(type: unknown): boolean {
  return LOOP_TYPES.has(type);
}

/**
 * The HTTP task types: HTTP, and HTTP_SYNC, which Conductor OSS added to make an HTTP call inside the decision instead of
 * from the async system-task queue (its HttpSyncTask, an HttpTask reading the same `http_request`). Every HTTP call is
 * made by the execution's own Durable Object here, queued nowhere, so the two are one task: the same checks, request,
 * output, failures, retries, limits and cache, differing only in the type the task shows.
 */
const HTTP_TYPES: ReadonlySet<unknown> = new Set<TaskType>(["HTTP", "HTTP_SYNC"]);

/** True when `type` is an HTTP task's (HTTP or HTTP_SYNC): one whose work is the request of its input. */
export function isHttpType(type: unknown): boolean {
  return HTTP_TYPES.has(type);
}

/**
 * True when `type` is an HTTP task's or HTTP_POLL's: a task whose work is HTTP requests made from the execution's object,
 * whose input may nest its request in `http_request`, and whose output is an HTTP response's (`httpOutput`).
 */
export function isHttpFamilyType(type: unknown): boolean {
  return HTTP_TYPES.has(type) || type === "HTTP_POLL";
}

/** Conductor's retry policies for a failed task. */
export const RETRY_LOGICS = ["FIXED", "LINEAR_BACKOFF", "EXPONENTIAL_BACKOFF"] as const;
/** One of {@link RETRY_LOGICS}. */
export type RetryLogic = (typeof RETRY_LOGICS)[number];

/** Conductor's policies for a task that ran past a timeout (stored and shown; see {@link TaskDef}). */
export const TIMEOUT_POLICIES = ["RETRY", "TIME_OUT_WF", "ALERT_ONLY"] as const;
/** One of {@link TIMEOUT_POLICIES}. */
export type TimeoutPolicy = (typeof TIMEOUT_POLICIES)[number];

/** Conductor's policies for a workflow that ran past its `timeoutSeconds` (`WorkflowDef.TimeoutPolicy`). */
export const WORKFLOW_TIMEOUT_POLICIES = ["TIME_OUT_WF", "ALERT_ONLY"] as const;
/** One of {@link WORKFLOW_TIMEOUT_POLICIES}. */
export type WorkflowTimeoutPolicy = (typeof WORKFLOW_TIMEOUT_POLICIES)[number];

/**
 * A task definition (Conductor's `TaskDef`): settings shared by every task of that name, registered under
 * `/api/metadata/taskdefs` or given inline as a workflow task's `taskDefinition`. The retry settings apply
 * (a workflow task's own `retryCount`, `retryLogic` and `retryDelaySeconds` win over them), `inputTemplate`
 * gives default input, the timeouts apply, and so do the rate and concurrency limits to workers' (SIMPLE) tasks;
 * `inputKeys`, `outputKeys`, `ownerEmail` and `metadata` are kept and shown only.
 */
export interface TaskDef {
  name: string;
  description?: string;
  retryCount: number;
  retryLogic: RetryLogic;
  retryDelaySeconds: number;
  /** Multiplies LINEAR_BACKOFF's delay, as in Conductor. */
  backoffScaleFactor: number;
  /** Caps a LINEAR_BACKOFF or EXPONENTIAL_BACKOFF retry delay, in seconds (Conductor's); 0 or absent: no cap. */
  maxRetryDelaySeconds?: number;
  /** Adds up to this many milliseconds, at random, to each retry delay (Conductor's); 0 or absent: none. */
  backoffJitterMs?: number;
  timeoutSeconds: number;
  timeoutPolicy: TimeoutPolicy;
  responseTimeoutSeconds: number;
  /** Default input: keys the workflow task's inputParameters do not set, resolved like them. */
  inputTemplate?: JsonObject;
  inputKeys?: string[];
  outputKeys?: string[];
  ownerEmail?: string;
  /** Conductor's Auditable `ownerApp`: kept and shown only. */
  ownerApp?: string;
  /** Conductor OSS's free-form metadata of a task definition: data, kept and shown as given (never resolved). */
  metadata?: JsonObject;
  concurrentExecLimit?: number;
  rateLimitPerFrequency?: number;
  rateLimitFrequencyInSeconds?: number;
  pollTimeoutSeconds?: number;
  totalTimeoutSeconds?: number;
  /** Orkes' task input schema: a registered JSON schema each instance's resolved input must match (see `enforceSchema`). */
  inputSchema?: SchemaReference;
  /** Orkes' task output schema: a registered JSON schema the output a task completes with must match. */
  outputSchema?: SchemaReference;
  /**
   * Whether `inputSchema` and `outputSchema` are enforced: only when true, as Conductor's TaskDef (whose flag defaults to
   * false, where a WorkflowDef's defaults to true).
   */
  enforceSchema?: boolean;
  createTime?: number;
  updateTime?: number;
  /** Who registered it first, and who last (Orkes' audit fields; set by the service). */
  createdBy?: string;
  updatedBy?: string;
}

/** How a SWITCH computes its case (Conductor's evaluator types; `graaljs` is read as `javascript`). */
export const SWITCH_EVALUATOR_TYPES = ["value-param", "javascript", "graaljs"] as const;
/** One of {@link SWITCH_EVALUATOR_TYPES}. */
export type SwitchEvaluatorType = (typeof SWITCH_EVALUATOR_TYPES)[number];

/** How a JOIN's join script is written (see `joinScript` in scripts.ts): JavaScript, under any of Orkes' names for it. */
export type JoinEvaluatorType = "js" | "javascript" | "graaljs";

/** True for the task types that run one of their branches, chosen by a case (SWITCH and its older form, DECISION). */
export function choosesCase(type: TaskType): type is "SWITCH" | "DECISION" {
  return type === "SWITCH" || type === "DECISION";
}

/**
 * The case a COMPLETED task of `type` (SWITCH or DECISION) chose, as its output records it (`evaluationResult` for a
 * SWITCH, `caseOutput` for a DECISION, each a one-element list in Conductor): `String.valueOf` of that element (JSON
 * for a list or object); undefined when there is none.
 */
export function chosenCase(type: TaskType, output: JsonObject): string | undefined {
  const recorded = output[type === "DECISION" ? "caseOutput" : "evaluationResult"];
  if (!Array.isArray(recorded) || recorded.length === 0) return undefined;
  const value = recorded[0];
  return typeof value === "string" ? value : JSON.stringify(value ?? null);
}

/**
 * A branch of a CONDITIONAL_FORK (Conductor OSS's `ConditionalBranch`): its tasks, run one after another, when its
 * `condition` holds for the fork's input, or always when it has none. An empty branch never runs.
 */
export interface ConditionalBranch {
  condition?: BranchCondition;
  tasks: WorkflowTaskDef[];
  /** Conductor's field, kept and shown: Conductor's fork does not act on it, and neither does this one. */
  failWorkflowOnFailure?: boolean;
}

/**
 * When a {@link ConditionalBranch} runs (Conductor's `ConditionSpec`): `expression` evaluated over the fork's input as a
 * SWITCH's is (value-param reads the input parameter it names; javascript and graaljs run it with `$` bound to the
 * input); the branch runs when the result is true or the text "true" (any case). `input` and `query` are Conductor's
 * fields, kept and shown, which its fork does not read either.
 */
export interface BranchCondition {
  evaluatorType: SwitchEvaluatorType;
  expression: string;
  input?: JsonObject;
  query?: JsonObject;
}

/** A task as written in a workflow definition (Conductor's `WorkflowTask`). */
export interface WorkflowTaskDef {
  name: string;
  taskReferenceName: string;
  type: TaskType;
  description?: string;
  inputParameters?: JsonObject;
  /** HTTP (and HTTP_SYNC): when true the task stays IN_PROGRESS after its request until completed through the API. */
  asyncComplete?: boolean;
  /** Failure turns into COMPLETED_WITH_ERRORS and the workflow goes on. */
  optional?: boolean;
  /**
   * Conductor's permissive task: failed for good, it stays FAILED and the tasks after it (and its fork's other
   * branches) run on; its JOIN, or the workflow at its end, fails then (see `failsPermissively`).
   */
  permissive?: boolean;
  retryCount?: number;
  retryLogic?: RetryLogic;
  retryDelaySeconds?: number;
  /** SUB_WORKFLOW: task-level placement of the child description. */
  subWorkflowParam?: JsonObject;
  /** SUB_WORKFLOW: whether the parent waits for the child. */
  waitForCompletion?: boolean;
  /**
   * SWITCH: how `expression` is evaluated; DO_WHILE, WHILE: how `loopCondition` is (javascript when absent); JOIN: the
   * language of its join script (JavaScript, however named; absent means it too).
   */
  evaluatorType?: SwitchEvaluatorType | JoinEvaluatorType;
  /**
   * SWITCH: the input parameter naming the case (value-param), or the expression computing it (javascript). JOIN: its
   * join script (Orkes'), which decides when it ends instead of its `joinOn` (see `scriptedJoinEnding`).
   */
  expression?: string;
  /** DECISION: the input parameter whose value is the case (used when there is no `caseExpression`). */
  caseValueParam?: string;
  /** DECISION: JavaScript computing the case, with `$` bound to the task's input. */
  caseExpression?: string;
  /** SWITCH, DECISION: the tasks run for each case value (compared as a string); an empty list takes the defaultCase, as in Conductor. */
  decisionCases?: Record<string, WorkflowTaskDef[]>;
  /**
   * SWITCH, DECISION: the tasks run when no case matches. CONDITIONAL_FORK: the branch run when none of its
   * `conditionalBranches` is chosen.
   */
  defaultCase?: WorkflowTaskDef[];
  /** FORK_JOIN: its branches, each a list of tasks, run side by side; the JOIN that follows it waits for them. */
  forkTasks?: WorkflowTaskDef[][];
  /**
   * CONDITIONAL_FORK: its branches, in order; those chosen as it starts (see {@link ConditionalBranch}) run side by side,
   * and the JOIN that follows it waits for the last task of each.
   */
  conditionalBranches?: ConditionalBranch[];
  /**
   * DO_WHILE: evaluated after each iteration (WHILE: before the first too), the loop goes on while it holds: a script
   * (javascript, graaljs) whose value is true or a positive number, or (value-param) the name of an input parameter
   * holding such a value. Optional with `inputParameters.items`.
   */
  loopCondition?: string;
  /** DO_WHILE, WHILE: the tasks of one iteration, run in order. */
  loopOver?: WorkflowTaskDef[];
  /**
   * JOIN: the reference names of the tasks (in the branches of the FORK_JOIN before it) it waits for. After a
   * FORK_JOIN_DYNAMIC it waits for every task the fork ran, whatever this says (as in Conductor). EXCLUSIVE_JOIN: the
   * reference names it looks at, in order: it ends with the first that ran (see `exclusiveJoinEnding`).
   */
  joinOn?: string[];
  /**
   * EXCLUSIVE_JOIN: the reference names it looks at, in order, when none of its `joinOn` ran (or one ran and is still
   * running): it ends with the first of these that ran (see `exclusiveJoinEnding`).
   */
  defaultExclusiveJoinTask?: string[];
  /** FORK_JOIN_DYNAMIC: the input parameter holding the list of tasks to fork, one branch each (Conductor's). */
  dynamicForkTasksParam?: string;
  /** FORK_JOIN_DYNAMIC: the input parameter holding each forked task's input, by its reference name (Conductor's). */
  dynamicForkTasksInputParamName?: string;
  /**
   * FORK_JOIN_DYNAMIC, Conductor's older form (instead of the two above): the input parameter holding a
   * DynamicForkJoinTaskList, `{dynamicTasks: [{taskName, referenceName, type, input}]}`, each entry a task to fork with
   * its input.
   */
  dynamicForkJoinTasksParam?: string;
  /** DYNAMIC: the input parameter naming the task to run: a worker's task, or a system task type such as HTTP (Conductor's). */
  dynamicTaskNameParam?: string;
  /** EVENT: where it publishes, `conductor` or `conductor:<queue>` (Conductor's), resolved with its input. */
  sink?: string;
  /**
   * SIMPLE: seconds after it is scheduled before a worker's poll can take it (Conductor's `startDelay`, shown as the
   * task's `callbackAfterSeconds` meanwhile).
   */
  startDelay?: number;
  /** HTTP (HTTP_SYNC), HTTP_POLL, SIMPLE: Orkes' task output cache (see {@link TaskCacheConfig}). */
  cacheConfig?: TaskCacheConfig;
  /** TERMINATE_WORKFLOW: Orkes' task-level placement of its `triggerFailureWorkflow` input (the input's wins). */
  triggerFailureWorkflow?: boolean;
  /**
   * The task definition this task follows: given inline, or the one registered under its name, copied in
   * when an execution starts (as Conductor does), so later changes to the registered one do not alter it.
   */
  taskDefinition?: TaskDef;
}

/**
 * Orkes' task output cache: before the task runs, an output cached under its name and `key` (resolved against its
 * input: `${uri}-${method}`) completes it instead; otherwise its output, once COMPLETED, is cached for `ttlInSecond`.
 */
export interface TaskCacheConfig {
  key: string;
  ttlInSecond: number;
}

/** A workflow definition (Conductor's `WorkflowDef`). */
export interface WorkflowDef {
  name: string;
  description?: string;
  version: number;
  tasks: WorkflowTaskDef[];
  schemaVersion: number;
  ownerEmail?: string;
  /** Conductor's Auditable `ownerApp`: kept and shown only. */
  ownerApp?: string;
  inputParameters?: string[];
  outputParameters?: JsonObject;
  /** 0 = no timeout. */
  timeoutSeconds?: number;
  /**
   * The workflow started when an execution of this one fails or times out (Conductor's `failureWorkflow`): a
   * name, or a `${...}` template resolved against the execution (`${workflow.input.onFailure}`).
   */
  failureWorkflow?: string;
  /**
   * What `timeoutSeconds` does: TIME_OUT_WF ends the workflow TIMED_OUT; ALERT_ONLY (the default at registration,
   * as Conductor's) sets no deadline at all (Conductor only raises an alert, which this service has nowhere to send).
   * Absent only in definitions stored before the policy was kept, which meant TIME_OUT_WF.
   */
  timeoutPolicy?: WorkflowTimeoutPolicy;
  /**
   * False: a COMPLETED execution cannot be restarted (Conductor's rule; an unsuccessful one still can).
   * Absent (definitions stored before it was kept) means true, the default.
   */
  restartable?: boolean;
  /**
   * Default workflow input: each key a start's input lacks is added, as it is (shallow, never `${...}`-resolved;
   * see `withInputTemplate`).
   */
  inputTemplate?: JsonObject;
  /**
   * The initial workflow variables of each execution (Conductor's `variables`): data, never `${...}`-resolved,
   * read by expressions as `${workflow.variables.name}` and changed from outside (`POST /api/workflow/{id}/variables`).
   */
  variables?: JsonObject;
  /**
   * Orkes' input schema: a registered JSON schema (`/api/schema`) the input of each start must match (with the
   * `inputTemplate` defaults), unless `enforceSchema` is false.
   */
  inputSchema?: SchemaReference;
  /**
   * Orkes' output schema: a registered JSON schema the output of each execution must match as it completes; one that does
   * not ends FAILED, saying why (its output kept). Checked against the schema as registered when the execution started.
   */
  outputSchema?: SchemaReference;
  /** Whether `inputSchema` and `outputSchema` are enforced: true unless false, as Orkes. */
  enforceSchema?: boolean;
  /**
   * Conductor's workflow status listener: when true, each time an execution ends (again, after a retry or rerun) its
   * WorkflowSummary is published to Conductor's internal events, where event handlers act on it (see
   * `status-listener.ts`).
   */
  workflowStatusListenerEnabled?: boolean;
  /**
   * Where the listener publishes: `conductor:<queue>`, the workflow's queue (`conductor:<workflow name>:<queue>`, as an
   * EVENT task's sink); absent (or `conductor`), Conductor's success and failure queues.
   */
  workflowStatusListenerSink?: string | null;
  /**
   * Orkes' workflow rate limit: at most `concurrentExecLimit` executions sharing one key run at once, the others
   * wait (RUNNING, `rateLimited`) in the order they started. Kept only with a limit of at least 1 (0 means none).
   */
  rateLimitConfig?: RateLimitConfig;
  /** Orkes' free-form metadata of a definition: data, kept and shown as given. */
  metadata?: JsonObject;
  /**
   * Orkes' masked fields: keys whose values the API shows as `***` wherever they appear in an execution's input,
   * output, variables or its tasks' input and output (see `masking.ts`).
   */
  maskedFields?: string[];
  /**
   * How long each execution is kept after it ends, in seconds, before it is removed (see `retention.ts`); 0 keeps
   * them for good; absent, the service's default (`EXECUTION_RETENTION`) applies. Not a Conductor field.
   */
  retentionSeconds?: number;
  createTime?: number;
  updateTime?: number;
  /** Who registered it first, and who last (Orkes' audit fields; set by the service, never taken from the body). */
  createdBy?: string;
  updatedBy?: string;
  /**
   * Only in an execution's own copy of its definition: the data of the schemas its tasks' definitions (and its own
   * `outputSchema`) enforce, read from the registry when it started (by `schemaKey`; null for one not registered then),
   * so that the decider checks inputs and outputs without a look-up. Tasks whose definitions are known only as they run (a DYNAMIC's choice, a dynamic
   * fork's) have none here and are not checked.
   */
  schemas?: Array<{ key: string; data: JsonObject | null }>;
  /**
   * Only in an execution's own copy of its definition, never in a registered one: the tasks each FORK_JOIN_DYNAMIC
   * forked when it ran, in the order they were forked (see `plan.ts`, which lays them out after the definition's own).
   */
  dynamicForks?: DynamicFork[];
  /**
   * Only in an execution's own copy of its definition: the registered task definitions looked up while it ran, by
   * name (null: none registered), for the tasks that are known only then, what a DYNAMIC chose and what a dynamic
   * fork forked, as Conductor looks them up when it schedules such a task. Kept for the execution's life, so each
   * later instance (a retry, a rerun) follows the same one. See `instanceTask`.
   */
  lookedUpTaskDefs?: Record<string, TaskDef | null>;
}

/** See {@link WorkflowDef.rateLimitConfig}. */
export interface RateLimitConfig {
  /**
   * What groups the executions one limit counts: text, or a `${...}` template resolved against each execution as it
   * starts (`${workflow.correlationId}`, `${workflow.input.tenant}`). Executions of any workflow whose keys are equal
   * share the limit; absent (or resolving to nothing), the key is the workflow's name.
   */
  rateLimitKey?: string;
  /** How many executions of one key may run at once (at least 1). */
  concurrentExecLimit: number;
}

/** The tasks one run of a FORK_JOIN_DYNAMIC forked: see {@link WorkflowDef.dynamicForks}. */
export interface DynamicFork {
  /** The FORK_JOIN_DYNAMIC's reference name. */
  fork: string;
  /** One task per branch, in the order given. */
  tasks: WorkflowTaskDef[];
  /**
   * The `seq` of the fork's instance that forked them (absent in runs recorded before it was kept): the run stands
   * while that instance, or a later one of the same fork (a later iteration of its loop, forking the same tasks),
   * stands COMPLETED.
   */
  forkSeq?: number;
}

/** Workflow execution statuses (Conductor's `Workflow.WorkflowStatus`). */
export const WORKFLOW_STATUSES = ["RUNNING", "PAUSED", "COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"] as const;
/** One of {@link WORKFLOW_STATUSES}. */
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

/** Task execution statuses (Conductor's `Task.Status`). */
export const TASK_STATUSES = [
  "SCHEDULED",
  "IN_PROGRESS",
  "COMPLETED",
  "COMPLETED_WITH_ERRORS",
  "FAILED",
  "FAILED_WITH_TERMINAL_ERROR",
  "TIMED_OUT",
  "CANCELED",
  "SKIPPED",
] as const;
/** One of {@link TASK_STATUSES}. */
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Statuses a task can be completed into from outside (the completion API, a callback, an UPDATE_TASK). */
export const EXTERNAL_TASK_STATUSES = ["COMPLETED", "FAILED", "FAILED_WITH_TERMINAL_ERROR", "IN_PROGRESS"] as const;
/** One of {@link EXTERNAL_TASK_STATUSES}. */
export type ExternalTaskStatus = (typeof EXTERNAL_TASK_STATUSES)[number];

/** An execution's failed tasks as its Workflow JSON names them: reference names and task names, each once, in task order. */
export interface FailedTaskLists {
  referenceTaskNames: string[];
  taskNames: string[];
}

/** Statuses after which a workflow changes only through retry, restart or rerun. */
export const TERMINAL_WORKFLOW_STATUSES: ReadonlySet<WorkflowStatus> = new Set([
  "COMPLETED",
  "FAILED",
  "TIMED_OUT",
  "TERMINATED",
]);

/** Statuses from which a workflow can be retried (the unsuccessful terminal ones). */
export const RETRYABLE_WORKFLOW_STATUSES: ReadonlySet<WorkflowStatus> = new Set(["FAILED", "TIMED_OUT", "TERMINATED"]);

/** Statuses after which a task instance never changes again. */
export const TERMINAL_TASK_STATUSES: ReadonlySet<TaskStatus> = new Set([
  "COMPLETED",
  "COMPLETED_WITH_ERRORS",
  "FAILED",
  "FAILED_WITH_TERMINAL_ERROR",
  "TIMED_OUT",
  "CANCELED",
  "SKIPPED",
]);

/** Terminal task statuses that let the workflow move on. */
export const SUCCESSFUL_TASK_STATUSES: ReadonlySet<TaskStatus> = new Set(["COMPLETED", "COMPLETED_WITH_ERRORS", "SKIPPED"]);

/** One task instance of an execution (Conductor's `Task`). A retry is a new instance. */
export interface TaskExecution {
  taskId: string;
  taskType: TaskType;
  referenceTaskName: string;
  taskDefName: string;
  /** 1-based position in the execution's task list. */
  seq: number;
  /**
   * DO_WHILE, WHILE: the iteration it runs (the last, once it ended; 0 for a WHILE that ran none). A task of its
   * `loopOver`: the iteration it belongs to (its `referenceTaskName` is the definition's with `__<iteration>` appended,
   * as in Conductor). Absent for others.
   */
  iteration?: number;
  /**
   * Position of the task in the definition's plan (see `plan.ts`): its tasks in document order, those inside a
   * SWITCH's branches included. For a definition without branches, the index in `definition.tasks`.
   */
  definitionIndex: number;
  status: TaskStatus;
  /** Resolved input as stored and shown: secrets appear as `***`. */
  inputData: JsonObject;
  /**
   * The workflow variables `inputData` was resolved with, kept when the input is resolved again with the real
   * secrets as the task is sent (its template names one): the variables may have changed since it was scheduled,
   * and what is sent must be what is stored. Absent: `{}` (none, or no secret to resolve). Never shown by the API.
   */
  inputVariables?: JsonObject;
  outputData: JsonObject;
  reasonForIncompletion?: string;
  retryCount: number;
  /** True once a newer instance replaced this failed one. */
  retried: boolean;
  /**
   * True when a request (a workflow retry or rerun, or a child's, reopening it) replaced this instance, not the
   * decider's own retry: the Task JSON's `executed` tells them apart, as Conductor's WorkflowExecutor.taskToBeRescheduled
   * sets `executed` on the task a retry request replaces and its DeciderService.retry() does not (see view.ts).
   * Absent on every other instance, and on those replaced on request before it was recorded.
   */
  retriedOnRequest?: true;
  /** The id of the failed instance this one retries (Conductor's `retriedTaskId`); absent on a first attempt. */
  retriedTaskId?: string;
  /** Epoch ms. For a delayed retry this lies in the future. */
  scheduledTime: number;
  startTime: number;
  endTime: number;
  updateTime: number;
  /**
   * Increments each time the task's side effect is dispatched; a result carrying an older
   * attempt is stale and ignored.
   */
  attempt: number;
  /** When the current attempt's side effect must have finished; past it, the attempt is presumed lost. */
  attemptDeadline?: number;
  /** Set while the task waits for something outside the engine (async completion, a callback, a child). */
  awaitingExternal?: boolean;
  /**
   * SCHEDULED, waiting for the registered task definition of its name to be looked up (see
   * {@link WorkflowDef.lookedUpTaskDefs}): it has no input yet, and starts once the actor has brought it. Never shown.
   */
  awaitingTaskDef?: true;
  /**
   * A task whose definition caches its output (see {@link TaskCacheConfig}): the key its input gave, and where its cache
   * look-up stands: SCHEDULED, `looking` until the actor has looked (it starts nothing meanwhile); then `hit` (completed
   * with the cached output) or `missed` (run, and its output cached once COMPLETED). Never shown.
   */
  cache?: { key: string; state: "looking" | "hit" | "missed" };
  /**
   * An HTTP (or HTTP_SYNC), HTTP_POLL or SUB_WORKFLOW task whose task definition limits how many of its name run at once or start per window (see
   * `task-places.ts`): SCHEDULED, `asking` until its name's limit object gives it a place (it starts nothing meanwhile);
   * `held` from then until it ends, when the place is given back (a SUB_WORKFLOW task reopened for its child run again
   * in place holds it again at once). Never shown.
   */
  place?: "asking" | "held";
  /** When a waiting task gives up (WAIT_FOR_WEBHOOK `timeoutSeconds`) or wakes (WAIT); its module decides how it ends. */
  timeoutAt?: number;
  /**
   * When the task times out by its task definition's `timeoutSeconds`, counted from its start as in Conductor
   * (set when it starts, unless the policy is ALERT_ONLY); the definition's `timeoutPolicy` says what follows.
   */
  definitionTimeoutAt?: number;
  /**
   * When the task's attempts, this one and its retries together, have taken its task definition's
   * `totalTimeoutSeconds` (counted from the first attempt's scheduling): this attempt then times out and none follows.
   * Set as the first attempt starts, and carried to each retry. Never shown.
   */
  retryDeadline?: number;
  /**
   * A DO_WHILE whose iteration ended after its decision had done its share of script work (see
   * `SCRIPT_BUDGETS_PER_DECISION` in decider.ts): its condition, a script, runs in a later decision, which this moment
   * wakes the execution for. Cleared by the next decision that runs. Never shown.
   */
  iterationEndDue?: number;
  subWorkflowId?: string;
  callbackUrl?: string;
  /**
   * SIMPLE: the task waits in its worker queue, and the next poll of that queue may hand it to a worker. Set when
   * it is scheduled and when a worker reports it IN_PROGRESS (SCHEDULED again, it comes back after
   * `callbackAfterSeconds`), cleared when a poll hands it out or it ends. Always with status SCHEDULED, except in an
   * execution stored before an IN_PROGRESS report made the task SCHEDULED again: such a task is IN_PROGRESS and
   * pollable, polled and timed (by its responseTimeoutSeconds) as it was then. Never shown by the API.
   */
  pollable?: true;
  /** SIMPLE: the worker queue's domain (the execution's `taskToDomain` for the task's name, else `*`'s), if any. */
  domain?: string;
  /**
   * SIMPLE, SCHEDULED: the fallback domains its `taskToDomain` lists (Conductor's `"gpu,NO_DOMAIN"`), while which of
   * them has active workers is not known yet: the task is in no queue until the actor has asked and the decider has
   * recorded the choice as its `domain` (see `chooseWorkerDomain`). Never shown.
   */
  domainChoices?: string[];
  /** SIMPLE: the worker that polled it last (the poll's `workerid`). */
  workerId?: string;
  /** SIMPLE: how many times a poll handed it to a worker. */
  pollCount?: number;
  /**
   * SIMPLE: how long the task waits in its queue, counted from its `updateTime`, before a poll can take it (again): the
   * delay a worker's last IN_PROGRESS update asked for, its step's startDelay, or a retry's delay (with a fraction when
   * the retry policy adds jitter). 0 once a poll has served it or resetcallbacks has ended it. HTTP_POLL: the wait
   * before its next call. WAIT: shown only, as Conductor sets it (see tasks/wait); its alarm wakes it, not this.
   */
  callbackAfterSeconds?: number;
  /**
   * A retry the decider made after a delay: that delay in whole seconds (a jitter's fraction rounded up), which the Task
   * JSON shows as its `startDelayInSeconds`, as Conductor's DeciderService.retry() sets it on the retried instance of any
   * task type. Unset for a first attempt (a worker's task shows its step's `startDelay`), a retry without delay and a
   * rerun.
   */
  startDelayInSeconds?: number;
  /** HUMAN, once started: whom it is assigned to and who has claimed it (see `tasks/human/progress.ts`). Never shown as is. */
  human?: HumanProgress;
  /**
   * True when a rerun gave this instance's input (`taskInput`): taken literally, as Conductor does, and sent
   * as it is stored, never through the definition's template again. Not evaluated, so a rerun cannot make a
   * task send a secret the definition's registrant did not choose to send.
   */
  inputGiven?: true;
  /**
   * How many times a rerun brought this task instance back (absent: never). A rerun keeps the task's id,
   * as Conductor does; this tells the rerun's delivery apart from the first one (see {@link deliveryKey}).
   */
  reruns?: number;
  /**
   * The UPDATE_TASK (`<workflowId>/<taskId>`) that updated this task last: the same update sent again (its dispatch
   * repeated after an eviction) finds it applied instead of refused. Never shown.
   */
  updatedByTask?: string;
  /**
   * CONDITIONAL_FORK, once COMPLETED: the branches it chose as it started, by their place in its `conditionalBranches`
   * (that list's length for its `defaultCase`), in order. Its lanes run those alone; its JOIN waits for their last
   * tasks. Never shown.
   */
  forkedBranches?: number[];
}

/**
 * The `Idempotency-Key` an HTTP task's request carries: the same for every delivery of one run of the task
 * (a repeat after an eviction is recognised as a duplicate), different for each rerun, which asks for the
 * call to be made again; a receiver that de-duplicates would otherwise answer a rerun with the first run's
 * stored response. A retry is a new task instance with its own id. Each call of an HTTP_POLL is a call of its
 * own (it asks for a fresh answer): the polls made before it tell it apart.
 */
export function deliveryKey(task: Pick<TaskExecution, "taskId" | "reruns" | "pollCount" | "taskType">): string {
  const run = task.reruns === undefined ? task.taskId : `${task.taskId}.rerun-${task.reruns}`;
  return task.taskType === "HTTP_POLL" && (task.pollCount ?? 0) > 0 ? `${run}.poll-${task.pollCount}` : run;
}

/** Where a definition names a registered schema (Orkes' SchemaDef reference): its name, and its version (the latest when absent). */
export interface SchemaReference {
  name: string;
  version?: number;
  type?: "JSON";
}

/**
 * Conductor's `WorkflowTestRequest.TaskMock`: the result a test run gives a task instead of running it. `output` is
 * merged into the task's output as a worker's would be.
 */
export interface TaskMock {
  status: "COMPLETED" | "FAILED" | "FAILED_WITH_TERMINAL_ERROR" | "IN_PROGRESS";
  output: JsonObject;
  /** How long (ms) the task is shown to have run: its start that long before its end. */
  executionTime?: number;
  /** How long (ms) the task is shown to have waited before it started: its scheduled time that long before its start. */
  queueWaitTime?: number;
}

/**
 * What a test run answers with (Conductor's `WorkflowTestRequest`): mocked results by task reference name, used in
 * order, and the plans of the children its SUB_WORKFLOW tasks start, by their reference names. Lists, not maps keyed
 * by reference name, so that a name like `__proto__` stays data.
 */
export interface WorkflowTestPlan {
  taskMocks: Array<{ taskReferenceName: string; mocks: TaskMock[] }>;
  subWorkflows: Array<{ taskReferenceName: string; plan: WorkflowTestPlan }>;
  /**
   * The random domain the test request gave the run's SIMPLE tasks (its `taskToDomain` `*`), on the run it was made for
   * and on its children that kept it: the worker queues of that domain are the run's own, taken out of the queue
   * listings once it ends (see `ownTestQueues`). Absent on runs started before it was recorded. Never a user's domain.
   */
  domain?: string;
}

/**
 * A skip asked for a task the execution has not reached yet (Conductor's `SkipTaskRequest`): when the task is
 * reached, an instance with status SKIPPED and this input and output is recorded instead of running it.
 */
export interface PendingSkip {
  taskReferenceName: string;
  taskInput?: JsonObject;
  taskOutput?: JsonObject;
}

/**
 * A workflow the execution owes a start of: its failure workflow (see {@link WorkflowDef.failureWorkflow}), or one a
 * HUMAN task's trigger names (`trigger`). Everything the actor needs, fixed when the start became owed, so that a start
 * repeated after an eviction, or after the execution was retried meanwhile, starts the same workflow with the same
 * input under the same id.
 */
export interface FailureWorkflowStart {
  /** Chosen in advance (a failure workflow's is shown at once as the failed execution's `output["conductor.failure_workflow"]`). */
  workflowId: string;
  name: string;
  /** The version to start (a trigger's); absent: the latest. */
  version?: number;
  /** What owes the start, when not a failure: `human task <ref> (<taskId>) <triggerType>`. */
  trigger?: string;
  /** The failed execution's input plus `workflowId`, `reason`, `failureStatus`, `failureTaskId` and `failedWorkflow`. */
  input: JsonObject;
  /** The failed execution's id. */
  triggeringWorkflowId: string;
  correlationId?: string;
  /** 0, as Conductor starts it (starts recorded before that carry the failed execution's priority). */
  priority: number;
  taskToDomain: Record<string, string>;
  /** One more than the failed execution's, so that failure workflows failing in turn cannot go on for ever. */
  depth: number;
  baseUrl?: string;
  /** The failed execution's `startScopes`: it starts only what whoever started that execution could. */
  startScopes?: string[];
  /** The failed execution's `createdBy`. */
  createdBy?: string;
  /** The test run domain the failure workflow keeps (see `WorkflowExecution.testRunDomain`). */
  testRunDomain?: string;
}

/** A workflow execution (Conductor's `Workflow`), with the definition it runs. */
export interface WorkflowExecution {
  workflowId: string;
  workflowName: string;
  workflowVersion: number;
  status: WorkflowStatus;
  input: JsonObject;
  output: JsonObject;
  /**
   * The workflow variables: a copy of the definition's at the start (and at a restart), merged into from
   * outside since. Tasks see them when their input is resolved, so a change reaches only tasks scheduled after it.
   * Read as `{}` from executions stored before they were kept.
   */
  variables: JsonObject;
  /**
   * Orkes' environment variables its definition names (`${workflow.env.<name>}`), as they were when it started, or when
   * it was last retried, restarted, rerun, upgraded or jumped (which run tasks again with the values of then): name to
   * text (`${workflow.env.<name>.$}` reads it as JSON). Absent when it names none, or none of them existed.
   */
  environment?: Record<string, string>;
  correlationId?: string;
  reasonForIncompletion?: string;
  /**
   * The task whose failure or timeout ended it as it last ended (a TERMINATE task's, for one ending it FAILED):
   * Conductor's `failedTaskId`, which the Workflow JSON shows and a failure workflow gets as `failureTaskId`. Kept by a
   * retry until it ends again, as Conductor's is; a restart or rerun clears it. Absent when no task ended it.
   */
  failedTaskId?: string;
  parentWorkflowId?: string;
  parentWorkflowTaskId?: string;
  /**
   * The START_WORKFLOW task (`<workflowId>/<taskId>`) that started it, if one did: not a parent, it only started it; or
   * the webhook delivery's event (`webhook:<id>/<digest>/<index>`) that did. A start from the same one finds it started.
   */
  startedByTask?: string;
  priority: number;
  taskToDomain: Record<string, string>;
  idempotencyKey?: string;
  /**
   * The event whose handler's start_workflow action started it (Conductor's Workflow `event`, which its
   * StartWorkflowOperation sets from the action's event); absent for any other start.
   */
  event?: string;
  createTime: number;
  startTime: number;
  endTime: number;
  updateTime: number;
  /** When it was last retried or resumed (epoch ms; Conductor's `lastRetriedTime`); absent when never. */
  lastRetriedTime?: number;
  /**
   * When its pause began (epoch ms), while it is paused, and kept when it is terminated paused: a task that ended since
   * then has not been acted on (see view.ts's `executed`). Absent once resumed (or retried, restarted, rerun), and in
   * executions paused before it was recorded.
   */
  pausedAt?: number;
  /** Workflow-level deadline (epoch ms) from `timeoutSeconds`; absent when none. */
  deadline?: number;
  /** How many parents the execution has; absent (0) for one started through the API. */
  depth?: number;
  /** Public base URL of the service when the execution started, for callback URLs (e.g. `https://api.example.com`). */
  baseUrl?: string;
  /**
   * The scopes at which whoever started (or last restarted, reran or retried) the execution could start
   * workflows, inherited by its children: its SUB_WORKFLOW tasks may start only workflows these cover.
   * Absent on executions stored before this was recorded, which start children unchecked as they did.
   * Never shown by the API.
   */
  startScopes?: string[];
  /**
   * Who started it (Orkes' `createdBy`): the user or application of an API start, the parent's for a child (a
   * SUB_WORKFLOW's, a START_WORKFLOW's, a failure workflow), a schedule's or a webhook's saver. Absent for an event
   * handler's start and on executions stored before it was recorded.
   */
  createdBy?: string;
  /**
   * Skips of tasks not reached yet, at most one per reference name (see {@link PendingSkip}); absent when none.
   * A list, not a map keyed by reference name: a name like `__proto__` must stay data. Never shown by the API.
   */
  pendingSkips?: PendingSkip[];
  /**
   * A forward jump's target (see the `jump` event) and the input it was given: when the workflow reaches that task,
   * its instance takes that input as given (never evaluated through its template). Absent when none waits. Never shown.
   */
  pendingJump?: { taskReferenceName: string; taskInput: JsonObject };
  /**
   * The failed tasks it had as it last ended, kept as a retry, a restart (or a child's retry or rerun) reopened it: what
   * its `failedReferenceTaskNames` and `failedTaskNames` show while it runs again, as Conductor's sets are filled as a
   * workflow ends and kept by a retry or restart (see `shownFailedTasks` in view.ts). Absent when none, and after a rerun.
   */
  failedAtLastEnd?: FailedTaskLists;
  /**
   * Set on a test run (`POST /api/workflow/test`) and its children: the mocked results still to give, taken one by one
   * as tasks reach them (see `applyTestMocks`). Never shown by the API.
   */
  test?: WorkflowTestPlan;
  /**
   * Set on an execution that is no test run but was started by one (its failure workflow, a START_WORKFLOW's workflow,
   * or a child of such an execution) and kept its random domain (its `taskToDomain` `*`, see `WorkflowTestPlan.domain`):
   * the worker queues of that domain it puts tasks in leave the queue listings once it ends, as the run's own do (see
   * `ownTestDomain`). Never a user's domain. Never shown by the API.
   */
  testRunDomain?: string;
  /**
   * How many changes its tasks have had (a new instance, a status, an output...), counted by the decision that made
   * them: the search index's task rows are written again when it moves. Absent (0) before the first. Never shown.
   */
  taskRevision?: number;
  /**
   * The key of the rate limit it counts against (see {@link RateLimitConfig}), resolved when it started (or was last
   * reopened); absent when its definition has none. Shown as Orkes' `rateLimitKey`.
   */
  rateLimitKey?: string;
  /**
   * True while it waits for a place under its rate limit: nothing is scheduled until the limit admits it (event
   * `admitted`). Cleared once admitted or ended. Shown as Orkes' `rateLimited`.
   */
  rateLimited?: boolean;
  definition: WorkflowDef;
  tasks: TaskExecution[];
}

/** A message published to Conductor's internal events: its event, its id (the same for a repeated publication) and its payload. */
export interface EventMessage {
  event: string;
  messageId: string;
  /** What handlers act on: the real values, masked ones included (as expressions read them). */
  payload: JsonObject;
  /**
   * The publishing definition's `maskedFields`, when it has some: the record of the message (Orkes' event messages and
   * executions) shows their values, as those of `_secrets` and `_masked`, as `***`, as the publishing task shows them.
   */
  maskedFields?: string[];
  /**
   * How what the handlers' actions did is named (their kept progress, the ids of the workflows they start, the update
   * they make to a task): `content`, each by its handler and its content (see `actionKeys` in dispatch/event.ts), which
   * an edit of the handler between two runs of the publication does not shift. Set when the publication is owed; one
   * stored without it (owed before the deploy that added it) is named by place, as it was when its first run began.
   */
  actionKeys?: "content";
}
