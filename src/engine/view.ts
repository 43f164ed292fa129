import { SUCCESSFUL_TASK_STATUSES, TERMINAL_TASK_STATUSES, TERMINAL_WORKFLOW_STATUSES, type FailedTaskLists, type JsonObject, type TaskDef, type TaskExecution, type WorkflowDef, type WorkflowExecution, type WorkflowTaskDef } from "./model";
import { templateReadsKeys, withDerivedMasked } from "./derived-masking";
import { taskInputTemplate } from "./tasks/registry";
import { BoundedCache } from "./expressions/cache";
import { isInFlight } from "./in-flight";
import { cutText } from "./limits";
import { masked, maskedKeysOf } from "./masking";
import { instanceTask, planOf, planTask } from "./plan";
import { responseTimeoutSeconds } from "./tasks/simple";
import { countsRate, isPlacedType, taskPlaceLimits, waitingReason } from "./task-places";

/** A task as the API shows it (Conductor's `Task` JSON). */
export type TaskView = JsonObject;
/** An execution as the API shows it (Conductor's `Workflow` JSON). */
export type WorkflowView = JsonObject;

/** The task types whose instances Conductor names after their type, not their task's name (its mappers' taskDefName). */
const NAMED_BY_TYPE: ReadonlySet<string> = new Set(["FORK_JOIN", "FORK_JOIN_DYNAMIC", "CONDITIONAL_FORK", "JOIN", "EXCLUSIVE_JOIN", "SWITCH", "DECISION"]);

/**
 * `JSON.stringify({ ...view, inputData })` where the input is already written out as JSON (`inputText`: a poll measured
 * it), without writing it out again (a batch poll's inputs are up to MAX_PAYLOAD_BYTES each): the view's fields before
 * `inputData` and those after it, in the view's own order, written out around the text. No list of fields: a field
 * added to the view, before the input or after it, keeps its place (a view without an input gets it last, as the spread).
 */
export function taskJsonWithInput(view: TaskView, inputText: string): string {
  const fields = Object.entries(view);
  let at = fields.findIndex(([key]) => key === "inputData");
  if (at < 0) at = fields.length;
  // The fields written out with their braces, which come off: a field whose value is undefined is left out, as there.
  const before = JSON.stringify(Object.fromEntries(fields.slice(0, at))).slice(1, -1);
  const after = JSON.stringify(Object.fromEntries(fields.slice(at + 1))).slice(1, -1);
  return `{${before === "" ? "" : `${before},`}"inputData":${inputText}${after === "" ? "" : `,${after}`}}`;
}

/**
 * A task's `callbackAfterSeconds` as Conductor's Task shows it, a whole number of seconds (its field is a long): a
 * retry's delay with jitter is kept to the millisecond, and shown rounded up so that no client expects it sooner.
 */
export function shownCallbackAfterSeconds(task: Pick<TaskExecution, "callbackAfterSeconds">): number {
  return Math.ceil(task.callbackAfterSeconds ?? 0);
}

/**
 * A task instance's type as Conductor shows it: a worker's (SIMPLE) task is of the type its name gives, which is what
 * workers poll for; a fork, static or dynamic, is `FORK` (Conductor's ForkJoin mappers' TASK_TYPE_FORK).
 */
export function shownTaskType(task: Pick<TaskExecution, "taskType" | "taskDefName">): string {
  if (task.taskType === "SIMPLE") return task.taskDefName;
  return task.taskType === "FORK_JOIN" || task.taskType === "FORK_JOIN_DYNAMIC" || task.taskType === "CONDITIONAL_FORK" ? "FORK" : task.taskType;
}

/** A task instance's `taskDefName` as Conductor shows it: a fork's, JOIN's, EXCLUSIVE_JOIN's, SWITCH's and DECISION's is their shown type. */
export function shownTaskDefName(task: Pick<TaskExecution, "taskType" | "taskDefName">): string {
  return NAMED_BY_TYPE.has(task.taskType) ? shownTaskType(task) : task.taskDefName;
}

/**
 * Whether the input template of each task of a definition reads a masked value, by step and the name it runs as (a
 * DYNAMIC's choice): found once per definition object, which an execution keeps (templates are immutable).
 */
const templatesReadingMasked = new WeakMap<WorkflowDef, BoundedCache<string, boolean>>();

/**
 * Most tasks (by step and name) {@link templatesReadingMasked} keeps per definition, and most characters of their keys:
 * a DYNAMIC's name comes from the data (a loop's may be new each iteration), and an execution's object keeps its
 * definition for as long as it lives. Well above a definition's steps; one dropped is found again when asked for.
 */
const MASKED_READS_KEPT = 4_096;
const MASKED_READS_KEY_CHARS = 262_144;

/** How many tasks' answers {@link templatesReadingMasked} keeps for `definition`; for tests of the bound. */
export function keptMaskedReads(definition: WorkflowDef): number {
  return templatesReadingMasked.get(definition)?.size ?? 0;
}

/**
 * A task's input as the API shows it: masked by key (see masking.ts), and where its template read a masked value (see
 * derived-masking.ts). `runsAs`: the definition task it runs as, when the caller has it.
 */
export function shownTaskInput(task: TaskInputOf, execution: WorkflowExecution, runsAs = instanceTask(execution.definition, task)): JsonObject {
  const keys = maskedKeysOf(execution.definition);
  if (runsAs === undefined) return masked(task.inputData, keys);
  let byTask = templatesReadingMasked.get(execution.definition);
  if (byTask === undefined) templatesReadingMasked.set(execution.definition, (byTask = new BoundedCache(MASKED_READS_KEPT, MASKED_READS_KEY_CHARS)));
  const at = `${task.definitionIndex}:${task.taskDefName}`;
  let reads = byTask.get(at);
  if (reads === undefined) {
    reads = templateReadsKeys(taskInputTemplate(runsAs), keys);
    byTask.set(at, reads);
  }
  return masked(reads ? (withDerivedMasked(taskInputTemplate(runsAs), task.inputData, keys) as JsonObject) : task.inputData, keys);
}

/** What of a task instance its shown input depends on: its input, its step and what it runs as (a DYNAMIC's choice). */
export type TaskInputOf = Pick<TaskExecution, "inputData" | "definitionIndex" | "taskType" | "taskDefName">;

/**
 * A SUB_WORKFLOW task whose child's start is on its way. Its `subWorkflowId` is chosen and stored before the start is
 * sent, so that a start sent again after an eviction finds the same child; shown then, it named a child that answered
 * 404 until its start arrived (or, with an idempotency key returning an existing child, one that never would).
 * Conductor's SubWorkflow sets the task's subWorkflowId once the child's start has returned.
 */
function childStartOnItsWay(task: TaskExecution): boolean {
  return task.taskType === "SUB_WORKFLOW" && isInFlight(task);
}

/**
 * Conductor's `executed`: set by its DeciderService.decide as it acts on a task's end (schedules what follows, or finds
 * nothing left), for an ended task neither SKIPPED nor retried. So it stays false on a task still running, a SKIPPED
 * one, one the decider retried (its retry() marks the task retried instead), the one whose failure ended the workflow
 * (retry() throws before the flag is set, and terminate() stores the task so) and one canceled as the workflow ended
 * (cancelNonTerminalTasks); a task a retry request replaced has it (WorkflowExecutor.taskToBeRescheduled sets it: "task
 * lifecycle is complete"), and a rerun clears it on the task it runs again (rerunWF). A TERMINATE task has it. Its
 * decider returns at once for a PAUSED workflow, so a task that ended during the pause (completed from outside, a
 * worker's result) is not acted on, and shows false, until the resume. Only shown: nothing here reads it.
 */
function executedAsConductorShows(task: TaskExecution, execution: WorkflowExecution): boolean {
  if (task.retried) return task.retriedOnRequest === true;
  if (!TERMINAL_TASK_STATUSES.has(task.status) || task.status === "SKIPPED" || task.status === "CANCELED") return false;
  if (endedWhilePaused(task, execution)) return false;
  // `failedTaskId` names the task that ended the last run that failed (a rerun or restart clears it; a retry request
  // marks that task retried, above); a TERMINATE task ending it FAILED is one that completed.
  return task.taskId !== execution.failedTaskId || SUCCESSFUL_TASK_STATUSES.has(task.status);
}

/**
 * True when `task` ended during the pause `execution` is in, or was in when it was terminated (see
 * {@link WorkflowExecution.pausedAt}), so nothing has acted on its end: Conductor's terminate does not decide either.
 * An end in the pause's own millisecond counts as during it (one just before the pause, acted on, shows false then: a
 * rare, harmless miss).
 */
function endedWhilePaused(task: TaskExecution, execution: WorkflowExecution): boolean {
  return execution.pausedAt !== undefined && task.endTime >= execution.pausedAt;
}

/** Conductor's `Task` JSON for one task instance; engine bookkeeping (attempts, deadlines) stays internal. */
export function toTaskView(task: TaskExecution, execution: WorkflowExecution): TaskView {
  // The task definition it follows, when it was looked up as it ran (a DYNAMIC's choice, a forked task).
  const runsAs = instanceTask(execution.definition, task);
  const view: TaskView = {
    taskId: task.taskId,
    taskType: shownTaskType(task),
    referenceTaskName: task.referenceTaskName,
    taskDefName: shownTaskDefName(task),
    seq: task.seq,
    status: task.status,
    inputData: shownTaskInput(task, execution, runsAs),
    outputData: masked(task.outputData, maskedKeysOf(execution.definition)),
    retryCount: task.retryCount,
    retried: task.retried,
    scheduledTime: task.scheduledTime,
    startTime: task.startTime,
    endTime: task.endTime,
    updateTime: task.updateTime,
    workflowInstanceId: execution.workflowId,
    workflowType: execution.workflowName,
    // Conductor's Task carries its workflow's priority (an int: absent, a Java client reads 0).
    workflowPriority: execution.priority,
    pollCount: task.pollCount ?? 0,
    // Conductor's: how long it waited to start (for a worker's task, to be polled); 0 until it starts.
    queueWaitTime: task.startTime > 0 && task.scheduledTime > 0 ? Math.max(0, task.startTime - task.scheduledTime) : 0,
    executed: executedAsConductorShows(task, execution),
  };
  setPresent(view, "reasonForIncompletion", task.reasonForIncompletion);
  // A task held back by its task definition's limits says so (Conductor only postpones it in its queue, unexplained).
  const placeLimits = task.place === "asking" && task.status === "SCHEDULED" ? taskPlaceLimits(task.taskType, runsAs) : undefined;
  if (placeLimits !== undefined) view.reasonForIncompletion = waitingReason(task.taskDefName, placeLimits);
  setPresent(view, "retriedTaskId", task.retriedTaskId);
  setPresent(view, "correlationId", execution.correlationId);
  const definition = planTask(execution.definition, task.definitionIndex);
  const taskDefinition = runsAs?.taskDefinition === definition?.taskDefinition ? undefined : { taskDefinition: runsAs?.taskDefinition };
  // As Conductor shows a DYNAMIC's: its own, named as the task it chose.
  const shown = definition?.type === "DYNAMIC" ? { ...definition, name: task.taskDefName, ...taskDefinition } : taskDefinition === undefined ? definition : runsAs;
  if (shown) view["workflowTask"] = shownWorkflowTask(shown) as unknown as JsonObject;
  if (task.subWorkflowId !== undefined && !childStartOnItsWay(task)) view["subWorkflowId"] = task.subWorkflowId;
  // Conductor's Task: `iteration` 0 and `loopOverTask` false outside loops.
  view["iteration"] = task.iteration ?? 0;
  // As Conductor's Task.isLoopOverTask (iteration > 0): a run of a loop's task, and a DO_WHILE (or WHILE) itself once it
  // runs an iteration (its DoWhile sets the loop task's iteration to 1 as it schedules the first), not a top-level one
  // that ran none. A DO_WHILE or WHILE inside a loop shows it whatever its own iteration (0 when it ran none here): it is
  // a run of the outer loop's task, which Conductor's scheduleNextIteration gives the outer iteration, and the UI's
  // diagram finds it under that loop by it.
  view["loopOverTask"] = (task.iteration ?? 0) > 0 || planOf(execution.definition).steps[task.definitionIndex]?.inLoop !== undefined;
  if (task.callbackUrl !== undefined) view["callbackUrl"] = task.callbackUrl;
  // Conductor's Task: a long, 0 unless a SIMPLE task waits in its queue for that long (a worker's IN_PROGRESS report's
  // delay, a startDelay, a retry's delay), an HTTP_POLL waits for its next call, or a WAIT waits (its wait's seconds,
  // as Conductor's WaitTaskMapper sets them). Whole seconds: a retry's jitter is kept to the millisecond inside.
  view["callbackAfterSeconds"] = shownCallbackAfterSeconds(task);
  // Conductor's Task: true unless a system task took the worker's place (none does here).
  view["callbackFromWorker"] = true;
  // Conductor's SIMPLE and DYNAMIC mappers copy the step's startDelay, and they and its HTTP mapper the task
  // definition's rate limit, shown for each kind it holds back here (an HTTP_POLL's too); other tasks show 0. A retry
  // of any type shows the delay it was scheduled after, as Conductor's DeciderService.retry() sets it.
  view["startDelayInSeconds"] = task.startDelayInSeconds ?? 0;
  const rateLimited = task.taskType === "SIMPLE" || (isPlacedType(task.taskType) && countsRate(task.taskType));
  view["rateLimitPerFrequency"] = rateLimited ? (runsAs?.taskDefinition?.rateLimitPerFrequency ?? 0) : 0;
  // The mappers copy the TaskDef getter's value, which is 1 (second) for a definition that sets no window; without a
  // task definition they leave the task's 0.
  const taskDef = runsAs?.taskDefinition;
  view["rateLimitFrequencyInSeconds"] = rateLimited && taskDef !== undefined ? (taskDef.rateLimitFrequencyInSeconds ?? 1) : 0;
  // Conductor's Task holds it as a long, so its JSON always has it: a worker's task its task definition's (SimpleTaskMapper
  // and the DYNAMIC mapper copy it), every other task 0 (its system task mappers, HTTPTaskMapper's too, leave it unset).
  view["responseTimeoutSeconds"] = 0;
  // Conductor's Task: a boolean, always in its JSON, set only where a sub workflow changed behind its task's back
  // (an action on the child while Conductor's SUB_WORKFLOW task still ran); here a child's changes reach its task as
  // they happen, so it is false.
  view["subworkflowChanged"] = false;
  if (task.taskType === "SIMPLE") {
    view["responseTimeoutSeconds"] = responseTimeoutSeconds(runsAs);
    setPresent(view, "domain", task.domain);
    // A retry waits out its retry delay instead (see the SIMPLE module's start), shown above.
    if (task.retryCount === 0) view["startDelayInSeconds"] = runsAs?.startDelay ?? 0;
  }
  // Any task's: a WAIT or HUMAN task completed with `?workerid=` names who completed it.
  setPresent(view, "workerId", task.workerId);
  return view;
}

/**
 * The reference names of the failed tasks the execution shows, each once, in task order: the Workflow JSON's
 * `failedReferenceTaskNames` and, joined, the search summary's (see {@link shownFailedTasks}).
 */
export function failedReferenceTaskNames(execution: WorkflowExecution): string[] {
  return shownFailedTasks(execution).referenceTaskNames;
}

/**
 * A failed task as Conductor's `failedReferenceTaskNames` counts it: FAILED or FAILED_WITH_TERMINAL_ERROR (its
 * WorkflowExecutor.completeWorkflow and terminateWorkflow filter so), not TIMED_OUT nor CANCELED.
 */
function isFailedTask(task: TaskExecution): boolean {
  return task.status === "FAILED" || task.status === "FAILED_WITH_TERMINAL_ERROR";
}

/** The task names (as the Task JSON's `taskDefName`) of the tasks {@link failedReferenceTaskNames} names, each once: `failedTaskNames`. */
export function failedTaskNames(execution: WorkflowExecution): string[] {
  return shownFailedTasks(execution).taskNames;
}

const NO_FAILED_TASKS: FailedTaskLists = { referenceTaskNames: [], taskNames: [] };

/**
 * The failed tasks an execution shows, as Conductor's Workflow holds them: its sets are filled as the workflow ends
 * (WorkflowExecutor.completeWorkflow and terminateWorkflow add every FAILED and FAILED_WITH_TERMINAL_ERROR task), kept
 * by a retry or restart and emptied by a rerun. So an ended execution shows its failed tasks (and those kept), and one running (or
 * paused) those it had as it last ended, when a retry or restart reopened it ({@link WorkflowExecution.failedAtLastEnd}), else
 * none: a task failing while it runs (its retry due) is not shown until it ends.
 */
export function shownFailedTasks(execution: WorkflowExecution): FailedTaskLists {
  if (!TERMINAL_WORKFLOW_STATUSES.has(execution.status)) return execution.failedAtLastEnd ?? NO_FAILED_TASKS;
  const failed = failedTaskLists(execution);
  const kept = execution.failedAtLastEnd;
  // Ended again, it adds its failures to those kept (Conductor's completeWorkflow addAll): a restart dropped their tasks.
  if (kept === undefined) return failed;
  return { referenceTaskNames: union(kept.referenceTaskNames, failed.referenceTaskNames), taskNames: union(kept.taskNames, failed.taskNames) };
}

/** `first`'s names, then those of `second` it lacks, each once. */
function union(first: readonly string[], second: readonly string[]): string[] {
  return [...new Set([...first, ...second])];
}

/**
 * What an execution's search row shows of its failed tasks (`failedReferenceTaskNames`, `failedTaskNames`), as a text
 * that changes when they do, found in one pass (part of the row's signature in execution-index.ts, read at every
 * change): their reference names, each once in task order, as signed before the row kept their task names. A
 * reference's task name is its first failed task's, which stays while the tasks only grow (a rerun or retry that drops
 * tasks moves `updateTime`); only another name failing under the same reference (a DYNAMIC run again as another task)
 * adds a part, after `/`. So a row signed before the names were kept is not written again for them: the code that
 * deploys them would otherwise rewrite every live execution's row at its next change, and every earlier one's at its
 * removal. For the same reason it still signs the tasks it signed then, TIMED_OUT ones and those failing while the
 * workflow runs, though the row shows neither (see {@link shownFailedTasks}): what the row shows of them changes only
 * as the status does (an ending, a retry, rerun or restart), which the signature holds too.
 */
export function failedTasksSignature(execution: WorkflowExecution): string {
  const nameByReference = new Map<string, string>();
  let otherNames: Set<string> | undefined;
  for (const task of execution.tasks) {
    if (!isSignedFailure(task)) continue;
    const name = shownTaskDefName(task);
    const first = nameByReference.get(task.referenceTaskName);
    if (first === undefined) nameByReference.set(task.referenceTaskName, name);
    else if (first !== name) (otherNames ??= new Set()).add(name);
  }
  const references = [...nameByReference.keys()].join(",");
  return otherNames === undefined ? references : `${references}/${[...otherNames].join(",")}`;
}

/** A task the search row's signature counts as failed: as the code before signed them (see {@link failedTasksSignature}). */
function isSignedFailure(task: TaskExecution): boolean {
  return isFailedTask(task) || task.status === "TIMED_OUT";
}

/**
 * The execution's failed tasks' reference and task names in one pass over the tasks (a long loop's thousands of tasks
 * would otherwise be walked once per list): what it shows once ended, and keeps as a retry reopens it.
 */
export function failedTaskLists(execution: WorkflowExecution): FailedTaskLists {
  const references = new Set<string>();
  const names = new Set<string>();
  for (const task of execution.tasks) {
    if (!isFailedTask(task)) continue;
    references.add(task.referenceTaskName);
    names.add(shownTaskDefName(task));
  }
  return { referenceTaskNames: [...references], taskNames: [...names] };
}

/**
 * Conductor's `Workflow` JSON; tasks only when asked for, as Conductor's `includeTasks`. `removalTime`, when given, is
 * when the execution's retention removes it.
 */
export function toWorkflowView(execution: WorkflowExecution, includeTasks: boolean, removalTime?: number): WorkflowView {
  const failed = shownFailedTasks(execution);
  const view: WorkflowView = {
    workflowId: execution.workflowId,
    workflowName: execution.workflowName,
    workflowVersion: execution.workflowVersion,
    status: execution.status,
    input: masked(execution.input, maskedKeysOf(execution.definition)),
    output: masked(execution.output, maskedKeysOf(execution.definition)),
    variables: masked(execution.variables, maskedKeysOf(execution.definition)),
    priority: execution.priority,
    taskToDomain: execution.taskToDomain,
    createTime: execution.createTime,
    startTime: execution.startTime,
    endTime: execution.endTime,
    updateTime: lastUpdateTime(execution),
    failedReferenceTaskNames: failed.referenceTaskNames,
    failedTaskNames: failed.taskNames,
    // Conductor's long: 0 until it is retried or resumed.
    lastRetriedTime: execution.lastRetriedTime ?? 0,
    workflowDefinition: registeredDefinition(execution.definition) as unknown as JsonObject,
    tasks: includeTasks ? execution.tasks.map((task) => toTaskView(task, execution)) : [],
  };
  setPresent(view, "correlationId", execution.correlationId);
  setPresent(view, "reasonForIncompletion", execution.reasonForIncompletion);
  setPresent(view, "failedTaskId", execution.failedTaskId);
  setPresent(view, "parentWorkflowId", execution.parentWorkflowId);
  setPresent(view, "createdBy", execution.createdBy);
  setPresent(view, "parentWorkflowTaskId", execution.parentWorkflowTaskId);
  // Conductor's Workflow shows the key it was started with.
  setPresent(view, "idempotencyKey", execution.idempotencyKey);
  // Conductor's Workflow shows the event whose handler started it.
  setPresent(view, "event", execution.event);
  // Orkes' fields of an execution under a rate limit: its key, and whether it still waits for a place.
  if (execution.rateLimitKey !== undefined) {
    view["rateLimitKey"] = execution.rateLimitKey;
    view["rateLimited"] = execution.rateLimited === true;
  }
  // This service's: when a finished execution's retention runs out and it is removed (see `retention.ts`).
  if (removalTime !== undefined) view["removalTime"] = removalTime;
  return view;
}

/**
 * A workflow definition as Conductor's WorkflowDef JSON shows it: the fields it always holds (collections and
 * primitives, never null), with its defaults where none was given, each meaning here what leaving it out means (no
 * declared inputs, output from the last task, no listener, no initial variables or input defaults, schemas enforced,
 * no metadata, nothing masked). Only shown: what is stored keeps them absent.
 */
export function shownWorkflowDef(definition: WorkflowDef): WorkflowDef {
  return {
    inputParameters: [],
    outputParameters: {},
    workflowStatusListenerEnabled: false,
    variables: {},
    inputTemplate: {},
    enforceSchema: true,
    metadata: {},
    maskedFields: [],
    ...definition,
    tasks: definition.tasks.map(shownWorkflowTask),
  };
}

/**
 * A workflow definition as Conductor OSS's lighter listing shows it (its `WorkflowDefListItem.fromWorkflowDef`, answered
 * by `GET /api/metadata/workflow/list` for its UI's definitions list): the summary fields without the tasks, which can
 * be large, but with the sorted types of its top-level tasks and their count, and its classifier (see
 * {@link workflowClassifier}). Absent fields are left out, as Conductor's JSON leaves its nulls out.
 */
export function workflowDefListItem(definition: WorkflowDef): JsonObject {
  const item: JsonObject = {
    name: definition.name,
    version: definition.version,
    schemaVersion: definition.schemaVersion,
    // Conductor's primitives: its defaults where the definition has none.
    restartable: definition.restartable ?? true,
    workflowStatusListenerEnabled: definition.workflowStatusListenerEnabled ?? false,
    timeoutSeconds: definition.timeoutSeconds ?? 0,
    taskTypes: [...new Set(definition.tasks.map((task) => task.type))].sort(),
    taskCount: definition.tasks.length,
    classifier: workflowClassifier(definition.metadata),
  };
  const optional = {
    description: definition.description,
    createTime: definition.createTime,
    ownerEmail: definition.ownerEmail,
    inputParameters: definition.inputParameters,
    outputParameters: definition.outputParameters,
    timeoutPolicy: definition.timeoutPolicy,
    failureWorkflow: definition.failureWorkflow,
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) item[key] = value;
  return item;
}

/**
 * Conductor OSS's classifier of a definition (its `WorkflowClassifier.classifierOf`), read from its `metadata`: an
 * explicit non-blank `classifier` text, else `agent` for one its agent SDK compiled (`agent_sdk` or `agentDef` set),
 * else `workflow`.
 */
export function workflowClassifier(metadata: JsonObject | undefined): string {
  const explicit = metadata?.["classifier"];
  if (typeof explicit === "string" && explicit.trim() !== "") return explicit;
  const stamped = (key: string): boolean => metadata !== undefined && Object.hasOwn(metadata, key) && metadata[key] !== null;
  return stamped("agent_sdk") || stamped("agentDef") ? "agent" : "workflow";
}

/**
 * A task definition as Conductor's TaskDef JSON shows it: the fields Conductor always shows, with its defaults where
 * none was given (no rate limit, no total timeout, no declared keys, schemas not enforced, no metadata). Only shown: what
 * is stored keeps them absent.
 */
export function shownTaskDef(taskDef: TaskDef): TaskDef {
  return { inputKeys: [], outputKeys: [], inputTemplate: {}, rateLimitPerFrequency: 0, rateLimitFrequencyInSeconds: 1, totalTimeoutSeconds: 0, enforceSchema: false, metadata: {}, ...taskDef };
}

/**
 * A definition's task as Conductor's WorkflowTask JSON shows it: its int `startDelay` and booleans `optional` and
 * `asyncComplete`, never null, with their defaults where none was given (each meaning here what leaving it out means),
 * and so the tasks of its branches and loop. Its empty lists Conductor leaves out (NON_EMPTY), as given here.
 */
export function shownWorkflowTask(task: WorkflowTaskDef): WorkflowTaskDef {
  // The defaults after what was given, so that a task reads in the order it was written.
  const shown: WorkflowTaskDef = { ...task, startDelay: task.startDelay ?? 0, optional: task.optional ?? false, asyncComplete: task.asyncComplete ?? false };
  if (task.decisionCases !== undefined) {
    shown.decisionCases = Object.fromEntries(Object.entries(task.decisionCases).map(([value, tasks]) => [value, tasks.map(shownWorkflowTask)]));
  }
  if (task.defaultCase !== undefined) shown.defaultCase = task.defaultCase.map(shownWorkflowTask);
  if (task.forkTasks !== undefined) shown.forkTasks = task.forkTasks.map((branch) => branch.map(shownWorkflowTask));
  if (task.conditionalBranches !== undefined) shown.conditionalBranches = task.conditionalBranches.map((branch) => ({ ...branch, tasks: branch.tasks.map(shownWorkflowTask) }));
  if (task.loopOver !== undefined) shown.loopOver = task.loopOver.map(shownWorkflowTask);
  // Its task definition (given inline, or looked up as it ran) as GET /api/metadata/taskdefs shows one.
  if (task.taskDefinition !== undefined) shown.taskDefinition = shownTaskDef(task.taskDefinition);
  return shown;
}

/**
 * The definition as registered: without the tasks its dynamic forks forked, which each task instance shows as its
 * `workflowTask` (Conductor shows them so, not in the definition), nor the task definitions looked up as it ran, which
 * each such task shows in its `workflowTask.taskDefinition`, nor the schemas kept for its tasks (the registry has them).
 */
function registeredDefinition(definition: WorkflowDef): WorkflowDef {
  // Stored before the policy was kept, a definition without one times out as TIME_OUT_WF: shown so, since a client
  // reading no policy takes Conductor's default, ALERT_ONLY.
  const shown = shownWorkflowDef(definition.timeoutPolicy === undefined ? { ...definition, timeoutPolicy: "TIME_OUT_WF" as const } : definition);
  if (shown.dynamicForks === undefined && shown.lookedUpTaskDefs === undefined && shown.schemas === undefined) return shown;
  const { dynamicForks: _forked, lookedUpTaskDefs: _lookedUp, schemas: _schemas, ...registered } = shown;
  return registered;
}

/**
 * When anything of the execution last changed, as Conductor's `updateTime` (it moves with every task it
 * updates). The stored `updateTime` moves only on workflow-level changes, which keeps the search row (and
 * D1) off the task-to-task path; a task's change is its own `updateTime`.
 */
function lastUpdateTime(execution: WorkflowExecution): number {
  let latest = execution.updateTime;
  for (const task of execution.tasks) if (task.updateTime > latest) latest = task.updateTime;
  return latest;
}

/**
 * Sets an optional field only when it has a value. Conductor's JSON leaves absent fields out rather than
 * sending null, and its clients type them `field?: string`: a null would pass an `!== undefined` check.
 */
function setPresent(target: JsonObject, key: string, value: string | null | undefined): void {
  if (value !== undefined && value !== null) target[key] = value;
}

/** One row of search results (Conductor's `WorkflowSummary`). */
export interface WorkflowSummaryRow {
  workflowId: string;
  workflowName: string;
  workflowVersion: number;
  status: string;
  correlationId: string | null;
  reasonForIncompletion: string | null;
  parentWorkflowId: string | null;
  createTime: number;
  startTime: number;
  endTime: number;
  updateTime: number;
  input: string | null;
  output: string | null;
  priority: number;
  /** Comma-separated; null in rows indexed before the index kept them. */
  failedReferenceTaskNames: string | null;
  /**
   * A JSON array of the failed tasks' names; null when none failed, and (or absent, from a row made by older code
   * mid-deploy) in rows indexed before the index kept them.
   */
  failedTaskNames?: string | null;
  /**
   * The event whose handler started the execution (Conductor's WorkflowSummary.event); null for any other start, and
   * (or absent, from a row made by older code mid-deploy) in rows indexed before the index kept it.
   */
  event?: string | null;
}

/**
 * Longest text kept in a summary's column (input and output JSON, the reason, the failed tasks): search and the status
 * listener show a summary, the execution holds the rest. A search row stays far below D1's 2 MB, and a page of a
 * thousand rows a few megabytes, whatever a workflow or a caller put into those fields.
 */
export const SUMMARY_TEXT_LIMIT = 4096;

/** `text` as a summary keeps it: cut at `limit` characters, marked with "…" when cut. */
export function summaryText(text: string, limit = SUMMARY_TEXT_LIMIT): string {
  const cut = cutText(text, limit);
  return cut === text ? text : `${cut}…`;
}

/** An execution's summary as search keeps it (the columns of its search row), its texts cut by {@link summaryText}. */
export function summaryRowOf(execution: WorkflowExecution): WorkflowSummaryRow & { input: string; output: string; failedReferenceTaskNames: string; failedTaskNames: string | null } {
  const failed = shownFailedTasks(execution);
  return {
    workflowId: execution.workflowId,
    workflowName: execution.workflowName,
    workflowVersion: execution.workflowVersion,
    status: execution.status,
    correlationId: execution.correlationId ?? null,
    parentWorkflowId: execution.parentWorkflowId ?? null,
    reasonForIncompletion: execution.reasonForIncompletion === undefined ? null : summaryText(execution.reasonForIncompletion),
    priority: execution.priority,
    createTime: execution.createTime,
    startTime: execution.startTime,
    endTime: execution.endTime,
    updateTime: execution.updateTime,
    input: summaryText(JSON.stringify(masked(execution.input, maskedKeysOf(execution.definition)))),
    output: summaryText(JSON.stringify(masked(execution.output, maskedKeysOf(execution.definition)))),
    failedReferenceTaskNames: summaryText(failed.referenceTaskNames.join(",")),
    // Most rows have none (every running start, most endings): null, shown as [] as a row indexed before the column.
    failedTaskNames: failed.taskNames.length === 0 ? null : summaryNameList(failed.taskNames),
    event: execution.event ?? null,
  };
}

/**
 * `names` as a JSON array of at most {@link SUMMARY_TEXT_LIMIT} characters: the first names that fit, whole (a list cut
 * as text would no longer be JSON); the Workflow JSON holds them all.
 */
function summaryNameList(names: readonly string[]): string {
  const kept: string[] = [];
  let length = 2;
  for (const name of names) {
    const written = JSON.stringify(name).length + (kept.length > 0 ? 1 : 0);
    if (length + written > SUMMARY_TEXT_LIMIT) break;
    kept.push(name);
    length += written;
  }
  return JSON.stringify(kept);
}

/** A summary row's `failedTaskNames` column read back: the names, none when it is null (none failed, or a row indexed before the column was kept). */
function storedNameList(text: string | null | undefined): string[] {
  if (text === null || text === undefined) return [];
  try {
    const names: unknown = JSON.parse(text);
    return Array.isArray(names) ? names.filter((name): name is string => typeof name === "string") : [];
  } catch {
    // Only this module writes the column; a value that is not its JSON shows no names rather than failing the page.
    return [];
  }
}

/** Conductor's `WorkflowSummary` JSON for a search result row. */
export function toWorkflowSummary(row: WorkflowSummaryRow): JsonObject {
  const summary: JsonObject = {
    workflowType: row.workflowName,
    version: row.workflowVersion,
    workflowId: row.workflowId,
    startTime: new Date(row.startTime).toISOString(),
    updateTime: new Date(row.updateTime).toISOString(),
    status: row.status,
    executionTime: row.endTime > 0 ? row.endTime - row.startTime : 0,
    failedReferenceTaskNames: row.failedReferenceTaskNames ?? "",
    // Conductor's WorkflowSummary holds them as a set, always in its JSON (`[]` when none).
    failedTaskNames: storedNameList(row.failedTaskNames),
    priority: row.priority,
    createTime: row.createTime,
  };
  setPresent(summary, "correlationId", row.correlationId);
  setPresent(summary, "endTime", row.endTime > 0 ? new Date(row.endTime).toISOString() : null);
  setPresent(summary, "input", row.input);
  setPresent(summary, "output", row.output);
  setPresent(summary, "reasonForIncompletion", row.reasonForIncompletion);
  setPresent(summary, "parentWorkflowId", row.parentWorkflowId);
  setPresent(summary, "event", row.event);
  // Conductor's getInputSize()/getOutputSize(): the length of the (cut) JSON text shown, 0 without one.
  summary["inputSize"] = row.input?.length ?? 0;
  summary["outputSize"] = row.output?.length ?? 0;
  return summary;
}
