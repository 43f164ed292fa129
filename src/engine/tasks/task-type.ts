import type { DecideEnv } from "../config";
import type { JsonObject, TaskExecution, TaskType, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../model";
import type { ScriptLogs } from "../scripts";

/** What a task type does when its task starts. */
export interface TaskStart {
  /** The task in its started form (typically IN_PROGRESS). */
  task: TaskExecution;
  /** True when the actor must perform the task's side effect (an HTTP call, starting a child). */
  dispatch: boolean;
  /** Set (to when a poll may take it) when the task waits in its worker queue for a worker to poll it (SIMPLE). */
  queue?: number;
  /** The workflow's variables from now on, when the task changes them (SET_VARIABLE): they replace the execution's. */
  variables?: JsonObject;
  /** The workflow's correlation id from now on, when the task sets it (SET_CORRELATION_ID). */
  correlationId?: string;
  /** Set when the workflow ends with the task (TERMINATE), in the same decision. */
  ending?: WorkflowEnding;
  /** The execution's definition from now on, when the task changes it (a FORK_JOIN_DYNAMIC records what it forked). */
  definition?: WorkflowDef;
  /** Lines for the task's log, written with this start (an INLINE script's console): see the `taskLog` effect. */
  logs?: ScriptLogs;
  /**
   * The most characters of the task's reason kept, when it is to be cut: the decider cuts it after scrubbing it of the
   * task's masked input values (masked-reason.ts), so that a value split at the cut leaves no start that no rule knows.
   */
  reasonCut?: number;
}

/** How a task asks its workflow to end (TERMINATE). */
export interface WorkflowEnding {
  status: "COMPLETED" | "FAILED" | "TERMINATED";
  /** The workflow's output, whatever its `outputParameters` say. */
  output: JsonObject;
  /** The workflow's `reasonForIncompletion`, for FAILED and TERMINATED. */
  reason: string;
}

/**
 * One task type's behaviour inside the decider. Adding a type means one module implementing
 * this and one line in the registry; the decider itself stays type-agnostic.
 */
export interface TaskTypeModule {
  readonly type: TaskType;
  /** The template the task's input is resolved from, when it is more than `inputParameters`. */
  inputTemplate?(definition: WorkflowTaskDef): JsonObject;
  /** Called when a scheduled task's time has come. `task.inputData` is already resolved. */
  start(task: TaskExecution, definition: WorkflowTaskDef, execution: WorkflowExecution, env: DecideEnv): TaskStart;
  /**
   * The deadline of a dispatched attempt, past which it is presumed lost and dispatched again.
   * Called for every dispatch, including re-dispatches.
   */
  attemptDeadline(task: TaskExecution, env: DecideEnv): number;
  /**
   * What the result of a dispatched attempt (`result`: its status, output, reason) makes of the task, when the type has
   * more to say than that result (HTTP_POLL polls again until its condition holds). Absent: the result as it is.
   */
  afterResult?(task: TaskExecution, result: Partial<TaskExecution>, env: DecideEnv): Partial<TaskExecution>;
  /** How the task ends when its `timeoutAt` passes while it is still pending. */
  onTimeout?(task: TaskExecution, env: DecideEnv, definition: WorkflowTaskDef | undefined): Partial<TaskExecution>;
}

/** `task` failed for good as it started, with `reason`: nothing of it runs, and no retry is made. */
export function failedAtStart(task: TaskExecution, reason: string, now: number): TaskExecution {
  return { ...task, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: reason, startTime: now, endTime: now, updateTime: now };
}

/**
 * The start of a task whose work is a side effect the actor performs (an HTTP call, another workflow's start or
 * update): IN_PROGRESS, its next attempt dispatched with the deadline its `module` gives, and `outputData` (its own
 * output so far when not given) recorded before the dispatch.
 */
export function startDispatched(module: Pick<TaskTypeModule, "attemptDeadline">, task: TaskExecution, env: DecideEnv, outputData: JsonObject = task.outputData): TaskStart {
  return {
    task: { ...task, status: "IN_PROGRESS", startTime: env.now, updateTime: env.now, attempt: task.attempt + 1, attemptDeadline: module.attemptDeadline(task, env), outputData },
    dispatch: true,
  };
}

/**
 * The module of a task type whose whole work is one side effect the actor performs, started by {@link startDispatched}:
 * a dispatched attempt is presumed lost `grace` dispatch graces (`dispatchGraceMs`, one for each call or write it makes
 * in turn) after it starts.
 */
export function dispatchedTaskType(type: TaskType, graces: number): TaskTypeModule {
  return {
    type,
    start(task, _definition, _execution, env) {
      return startDispatched(this, task, env);
    },
    attemptDeadline(_task, env) {
      return env.now + graces * env.config.dispatchGraceMs;
    },
  };
}
