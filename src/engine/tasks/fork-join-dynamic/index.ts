/**
 * FORK_JOIN_DYNAMIC (Conductor's dynamic fork): when it runs, its input says which tasks to fork, one branch each; it
 * completes at once, and the decider runs each forked task as a lane of its own, side by side, until the JOIN after
 * it has seen every one of them end well (see `plan.ts`, which lays the forked tasks out after the definition's own).
 *
 * Three ways of saying what to fork, as in Conductor:
 * - `dynamicForkTasksParam` names the input parameter holding the list of tasks (workflow tasks as a definition
 *   writes them), and `dynamicForkTasksInputParamName` the one holding each one's input by reference name;
 * - `dynamicForkJoinTasksParam` (Conductor's older form) names the one holding a DynamicForkJoinTaskList, each entry
 *   a task and its input, turned into the first form's tasks and inputs (see `fromDynamicForkJoinTaskList`);
 * - the input parameter `forkTaskInputs`, a list: one branch per entry, each running the task `forkTaskName` of type
 *   `forkTaskType` (by default the system task type `forkTaskName` names, else SIMPLE), or the sub workflow
 *   `forkTaskWorkflow` (`forkTaskWorkflowVersion`), named `_<forkTaskName>_<index>`, with the entry (an object, else
 *   `{input: entry}`) and `__index` as input (a sub workflow's child gets a plain entry as `{input: entry, __index}`,
 *   given as its `workflowInput`).
 *
 * In a DO_WHILE's loop it forks afresh in each iteration, its tasks named `<ref>__<iteration>` as the loop's own are;
 * it may not fork a DO_WHILE there (its forked tasks are laid out outside the loop's own steps: a DO_WHILE written in
 * the loop nests instead).
 */
import { describeValue, isNonEmptyString, isRecord, MAX_JAVA_INT, type UnknownRecord } from "../../definition/checks";
import { validateForkedTasks } from "../../definition/validate";
import { environmentVariablesOf } from "../../environment";
import { referencedEnvironmentVariables, referencedSecrets } from "../../expressions";
import { MAX_STORED_DEFINITION_BYTES, MAX_TASK_REASON_LENGTH, oversize } from "../../limits";
import { isLoopType, type DynamicFork, type JsonObject, type JsonValue, type TaskExecution, type TaskType, type WorkflowDef, type WorkflowExecution, type WorkflowTaskDef } from "../../model";
import { flattenTasks, planOf } from "../../plan";
import type { TaskTypeModule } from "../task-type";
import { secretUpdatingTasks } from "../update-secret";
import { FORKABLE_TYPES } from "./forkable";
import { forksEachInput } from "./validate";

/** Most bytes of forked tasks a fork's input shows as `forkedTaskDefs` (beyond, only their reference names). */
export const MAX_SHOWN_FORKED_TASK_BYTES = 64 * 1024;

/** The FORK_JOIN_DYNAMIC task type: works out its forked tasks when it starts and completes at once. */
export const forkJoinDynamicTask: TaskTypeModule = {
  type: "FORK_JOIN_DYNAMIC",
  start(task, definition, execution, env) {
    const times = { startTime: env.now, endTime: env.now, updateTime: env.now };
    const forked = recordable(tasksToFork(definition, task, execution.definition), definition, task, execution.definition);
    if (!forked.ok) {
      const reasonForIncompletion = `Tasks could not be forked: ${forked.reason}`;
      return { task: { ...task, ...times, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion }, dispatch: false, reasonCut: MAX_TASK_REASON_LENGTH };
    }
    // Conductor's fork shows what it forked in its input: the reference names, and the tasks themselves (its UI draws
    // the branches from them), these while they are small beside the input. The forked tasks become steps of the plan
    // (see `plan.ts`).
    const inputData: JsonObject = { ...task.inputData, forkedTasks: forked.tasks.map((forkedTask) => forkedTask.taskReferenceName) };
    const definitions = forked.tasks as unknown as JsonValue;
    if (oversize(definitions, MAX_SHOWN_FORKED_TASK_BYTES) === undefined) inputData["forkedTaskDefs"] = definitions;
    const started = { task: { ...task, ...times, status: "COMPLETED" as const, inputData, outputData: {} }, dispatch: false };
    return forked.recorded === execution.definition ? started : { ...started, definition: forked.recorded };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};

type Forked = { ok: true; tasks: WorkflowTaskDef[] } | { ok: false; reason: string };
/** Forked tasks with the execution's definition recording them, or why they cannot be forked. */
type Recorded = { ok: true; tasks: WorkflowTaskDef[]; recorded: WorkflowDef } | { ok: false; reason: string };

/**
 * The tasks FORK_JOIN_DYNAMIC `fork` forks, given its resolved `input`, checked like a definition's tasks (each with
 * the input it will get) and normalised, with `inputParameters` left without the keys that input sets: those come
 * from the fork's own input as they are, never resolved again (see {@link forkedTaskInput}).
 */
function tasksToFork(fork: WorkflowTaskDef, forkTask: TaskExecution, workflow: WorkflowDef): Forked {
  const input = forkTask.inputData;
  const form = formOf(fork);
  const listed = form === "list" ? fromTaskList(fork, input) : form === "taskList" ? fromDynamicForkJoinTaskList(fork, input) : fromForkTaskInputs(fork, input);
  if (!listed.ok) return listed;
  const asRun = listed.raw.map((raw, position) => {
    if (!isRecord(raw)) return raw;
    const own = isRecord(raw["inputParameters"]) ? raw["inputParameters"] : {};
    const extra = forkInputOf(fork, input, position, raw["taskReferenceName"]);
    // A task listed without a type (its docs' dynamic fork lists tasks by name and reference name alone) is typed as a
    // definition's is: see withConductorForms. One without a name is named as Conductor needs none (it goes by the
    // reference name): after its child, its type or its reference name.
    return { ...raw, ...unnamedForkedTaskName(raw), inputParameters: { ...own, ...extra } };
  });
  const checked = validateForkedTasks(asRun, listed.path, takenReferences(workflow, fork.taskReferenceName));
  if (!checked.ok) return { ok: false, reason: `Input '${listed.path}' is invalid: ${checked.errors.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}` };
  const forkedLoop = forkTask.iteration === undefined ? undefined : flattenTasks(checked.tasks).find((task) => isLoopType(task.type));
  if (forkedLoop !== undefined) {
    return { ok: false, reason: `${listed.path}: a ${forkedLoop.type} cannot be forked by a FORK_JOIN_DYNAMIC inside a DO_WHILE's (or WHILE's) loop; fork a SUB_WORKFLOW whose definition holds it` };
  }
  const tasks = checked.tasks.map((task, position) => {
    const extra = forkInputOf(fork, input, position, task.taskReferenceName);
    const inputParameters = Object.fromEntries(Object.entries(task.inputParameters ?? {}).filter(([key]) => !Object.hasOwn(extra, key)));
    return { ...task, inputParameters };
  });
  const secrets = referencedSecrets(tasks as unknown as JsonValue);
  if (secrets.length > 0) return { ok: false, reason: secretsRefusal(listed.path, secrets) };
  const named = environmentVariablesOf(workflow);
  const unread = referencedEnvironmentVariables(withoutInlineChildren(tasks as unknown as JsonValue)).filter((name) => !named.includes(name));
  if (unread.length > 0) return { ok: false, reason: environmentRefusal(listed.path, unread) };
  const writer = secretUpdatingTasks({ tasks })[0];
  if (writer !== undefined) {
    return { ok: false, reason: `${listed.path}: ${writer.taskReferenceName} is an UPDATE_SECRET, which a FORK_JOIN_DYNAMIC cannot fork (at any depth): writing a secret is a right checked when a definition holding one is registered; fork a SUB_WORKFLOW whose registered definition holds it` };
  }
  return { ok: true, tasks };
}

/**
 * `forked` with `workflow` recording it (see {@link withForkedTasks}), unless that would take the execution's copy of its
 * definition (one stored row, with every earlier run of its dynamic forks) over {@link MAX_STORED_DEFINITION_BYTES}: a
 * loop forking different tasks in each of many iterations adds a run each time.
 */
function recordable(forked: Forked, fork: WorkflowTaskDef, forkTask: TaskExecution, workflow: WorkflowDef): Recorded {
  if (!forked.ok) return forked;
  const recorded = withForkedTasks(workflow, fork.taskReferenceName, forked.tasks, forkTask);
  const bytes = recorded === workflow ? undefined : oversize(recorded, MAX_STORED_DEFINITION_BYTES);
  if (bytes === undefined) return { ...forked, recorded };
  const runs = workflow.dynamicForks?.length ?? 0;
  return { ok: false, reason: `with them, the execution's copy of its definition (the tasks of ${runs} earlier ${runs === 1 ? "run" : "runs"} of its dynamic forks included) would be ${bytes} bytes, over the limit of ${MAX_STORED_DEFINITION_BYTES} bytes; fork sub workflows over batches instead` };
}

/**
 * `value` without the definitions of inline sub workflows (`subWorkflowParam.workflowDefinition`): a child reads the
 * variables its own definition names as it starts.
 */
function withoutInlineChildren(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(withoutInlineChildren);
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, entry]): [string, JsonValue] => {
      if (key !== "subWorkflowParam" || !isRecord(entry)) return [key, withoutInlineChildren(entry as JsonValue)];
      const { workflowDefinition: _child, ...param } = entry;
      return [key, withoutInlineChildren(param as JsonValue)];
    }),
  );
}

/**
 * Why tasks given as the workflow runs may not read environment variables their definition does not name: an execution
 * keeps the values of those its definition names, read as it starts (and as it runs tasks again); any other would
 * silently read as null.
 */
function environmentRefusal(path: string, names: readonly string[]): string {
  const listed = names.map((name) => `\${workflow.env.${name}}`).join(", ");
  return `${path}: tasks given as the workflow runs read environment variables the workflow's definition does not name (${listed}): an execution keeps the variables its definition names, read as it starts, so name them there too (in this FORK_JOIN_DYNAMIC's inputParameters, for instance)`;
}

/**
 * Why tasks given as the workflow runs may not read `secrets`: their text comes from data (the input, a task's output),
 * which whoever may start the workflow chooses, while using a secret is a right checked when a definition is registered
 * (see `worker/auth/secret-use.ts`). Resolved, they would send any secret anywhere for anyone who may start it.
 */
function secretsRefusal(path: string, secrets: readonly string[]): string {
  const named = secrets.map((name) => `\${workflow.secrets.${name}}`).join(", ");
  return `${path}: tasks given as the workflow runs may not read secrets (${named}): only a registered definition may, whoever registers it being checked for the right to use them; fork a SUB_WORKFLOW whose registered definition reads them`;
}

type Listed = { ok: true; raw: unknown[]; path: string } | { ok: false; reason: string };

/**
 * How `fork` says what to fork: the list `dynamicForkTasksParam` names (`list`), the DynamicForkJoinTaskList
 * `dynamicForkJoinTasksParam` names (`taskList`), or one task per `forkTaskInputs` entry (`each`).
 */
function formOf(fork: WorkflowTaskDef): "list" | "taskList" | "each" {
  if (forksEachInput(fork as unknown as UnknownRecord)) return "each";
  if (fork.dynamicForkTasksParam !== undefined) return "list";
  return fork.dynamicForkJoinTasksParam !== undefined ? "taskList" : "each";
}

/** `dynamicForkTasksParam`'s list, as given; its inputs' map is checked here too (an absent or empty one is `{}`). */
function fromTaskList(fork: WorkflowTaskDef, input: JsonObject): Listed {
  const param = fork.dynamicForkTasksParam!;
  const list = input[param];
  const inputs = inputsByReference(fork, input);
  if (inputs === undefined) {
    return { ok: false, reason: `input ${fork.dynamicForkTasksInputParamName} (dynamicForkTasksInputParamName) must be a map of each forked task's input by its reference name, but is ${describeValue(input[fork.dynamicForkTasksInputParamName ?? ""])}` };
  }
  if (list === undefined || list === null) return { ok: true, raw: [], path: param };
  if (!Array.isArray(list)) return { ok: false, reason: `input ${param} (dynamicForkTasksParam) must be a list of tasks, but is ${describeValue(list)}` };
  // Conductor's mapper fails the workflow on a forked task's input that is no map: given nothing, the task would run
  // without the input meant for it.
  for (const task of list) {
    const reference = isRecord(task) ? task["taskReferenceName"] : undefined;
    const own = typeof reference === "string" && Object.hasOwn(inputs, reference) ? inputs[reference] : null;
    if (own !== null && own !== undefined && !isRecord(own)) {
      return { ok: false, reason: `the input of forked task ${reference} in ${fork.dynamicForkTasksInputParamName} must be a map, but is ${describeValue(own)}` };
    }
  }
  return { ok: true, raw: list, path: param };
}

/**
 * The tasks of the DynamicForkJoinTaskList `dynamicForkJoinTasksParam` names (Conductor's older form, the one the Ruby
 * SDK writes), as workflow tasks: each entry `{taskName, referenceName, type, input}` is the task `{name: taskName,
 * taskReferenceName: referenceName, type}` (SIMPLE when no type is given, DynamicForkJoinTask's default), forked with
 * `input` (see {@link forkInputOf}) as the other forms' tasks are. `workflowName` is ignored, as Conductor's mapper
 * ignores it: a SUB_WORKFLOW needs a `subWorkflowParam`, which this form cannot give, and is refused. No list at all
 * fails, as Conductor's "Dynamic tasks could not be created" does: the fork would silently skip its branches.
 */
function fromDynamicForkJoinTaskList(fork: WorkflowTaskDef, input: JsonObject): Listed {
  const param = fork.dynamicForkJoinTasksParam!;
  const value = input[param];
  const entries = dynamicForkJoinTasks(value);
  if (entries === undefined) {
    return { ok: false, reason: `Dynamic tasks could not be created: input ${param} (dynamicForkJoinTasksParam) must be a DynamicForkJoinTaskList, {"dynamicTasks": [{"taskName", "referenceName", "type", "input"}, ...]}, but is ${describeValue(value)}` };
  }
  const path = `${param}.dynamicTasks`;
  const raw: JsonObject[] = [];
  for (const [index, entry] of entries.entries()) {
    const at = `${path}[${index}]`;
    if (!isRecord(entry)) return { ok: false, reason: `${at} must be an object {taskName, referenceName, type, input}, but is ${describeValue(entry)}` };
    const { taskName, referenceName, type, input: own } = entry;
    if (!isNonEmptyString(referenceName)) return { ok: false, reason: `${at}.referenceName must be the forked task's reference name, but is ${describeValue(referenceName)}` };
    if (taskName !== undefined && taskName !== null && typeof taskName !== "string") return { ok: false, reason: `${at}.taskName must be the name of the task to fork, but is ${describeValue(taskName)}` };
    // Conductor's mapper fails the workflow on an input that is no map: the task would run without the input meant for it.
    if (own !== undefined && own !== null && !isRecord(own)) return { ok: false, reason: `${at}.input (the input of forked task ${referenceName}) must be a map, but is ${describeValue(own)}` };
    const task: JsonObject = { taskReferenceName: referenceName, type: (type ?? "SIMPLE") as JsonValue, inputParameters: {} };
    if (isNonEmptyString(taskName)) task["name"] = taskName;
    raw.push(task);
  }
  return { ok: true, raw, path };
}

/** The entries of DynamicForkJoinTaskList `value` (`{dynamicTasks: [...]}`), undefined when it is none. */
function dynamicForkJoinTasks(value: JsonValue | undefined): readonly JsonValue[] | undefined {
  if (!isRecord(value)) return undefined;
  const tasks = (value as JsonObject)["dynamicTasks"];
  return Array.isArray(tasks) ? tasks : undefined;
}

/** Tasks built from `forkTaskInputs` (see the module comment). */
function fromForkTaskInputs(fork: WorkflowTaskDef, input: JsonObject): Listed {
  const entries = input["forkTaskInputs"];
  if (!Array.isArray(entries)) return { ok: false, reason: `input forkTaskInputs must be a list (one branch per entry), but is ${describeValue(entries)}` };
  const workflow = input["forkTaskWorkflow"];
  const givenName = input["forkTaskName"];
  const type = typeof input["forkTaskType"] === "string" ? input["forkTaskType"] : systemTypeNamed(givenName) ?? "SIMPLE";
  // Conductor's defaults: a system task is named after its type, a worker's task after the fork.
  const name = typeof givenName === "string" && givenName !== "" ? givenName : type !== "SIMPLE" && typeof workflow !== "string" ? type : fork.taskReferenceName;
  const raw = entries.map((_entry, index): JsonObject => {
    const task: JsonObject = { taskReferenceName: `_${name}_${index}`, name, type, inputParameters: {} };
    if (typeof workflow === "string") {
      const version = forkedWorkflowVersionOf(input["forkTaskWorkflowVersion"]);
      Object.assign(task, { name: workflow, type: "SUB_WORKFLOW", subWorkflowParam: version === undefined ? { name: workflow } : { name: workflow, version } });
    }
    if (fork.optional === true) task["optional"] = true;
    return task;
  });
  return { ok: true, raw, path: "forkTaskInputs" };
}

/** Java's `Integer.parseInt` text: a sign, then decimal digits, nothing around (no spaces, fraction, exponent or hex). */
const JAVA_INT_TEXT = /^[+-]?[0-9]+$/;

/**
 * The version of the workflow `forkTaskWorkflow` forks, as Conductor's mapper reads `forkTaskWorkflowVersion`
 * (getDynamicTasksSimple): text `Integer.parseInt` takes is that number (`"2"`, `"+2"`; 0 and a negative one handed to
 * the sub workflow as given, where 0 is version 0 when one is registered, else the latest, and a negative one is refused
 * with the fork), and text it refuses (`" 2 "`, `"2.0"`, `"0x2"`, `""`, one past Java's int) none, the latest, its
 * NumberFormatException ignored. A JSON number, which Conductor's `(String)` cast fails on, is taken when whole; any other
 * value is none.
 */
function forkedWorkflowVersionOf(value: JsonValue | undefined): number | undefined {
  const number = typeof value === "string" && JAVA_INT_TEXT.test(value) ? Number(value) + 0 : typeof value === "number" ? value : undefined;
  return number !== undefined && Number.isInteger(number) && Math.abs(number) <= MAX_JAVA_INT + (number < 0 ? 1 : 0) ? number : undefined;
}

/** The name a forked task listed without one takes: its child workflow's, its (system) type, else its reference name. */
function unnamedForkedTaskName(raw: UnknownRecord): { name?: unknown } {
  if (isNonEmptyString(raw["name"])) return {};
  const child = isRecord(raw["subWorkflowParam"]) ? raw["subWorkflowParam"]["name"] : undefined;
  if (raw["type"] === "SUB_WORKFLOW" && isNonEmptyString(child)) return { name: child };
  if (isNonEmptyString(raw["type"]) && raw["type"] !== "SIMPLE") return { name: raw["type"] };
  return isNonEmptyString(raw["taskReferenceName"]) ? { name: raw["taskReferenceName"] } : {};
}

/**
 * The system task type `forkTaskName` names when no `forkTaskType` is given: Orkes forks "the same task, any type" by
 * name alone (`forkTaskName: "HTTP"`), as a DYNAMIC runs a system task named by its type. A worker's task otherwise.
 */
function systemTypeNamed(name: unknown): TaskType | undefined {
  return typeof name === "string" && name !== "SIMPLE" && (FORKABLE_TYPES as readonly string[]).includes(name) ? (name as TaskType) : undefined;
}

/**
 * The input forked task `reference` (at `position` among the forked) gets from its fork, as it is: its entry in the
 * inputs' map, or its `forkTaskInputs` entry (an object, else `{input: entry}`) with `__index`.
 */
function forkInputOf(fork: WorkflowTaskDef, input: JsonObject, position: number, reference: unknown): JsonObject {
  const form = formOf(fork);
  if (form === "taskList") {
    const entry = dynamicForkJoinTasks(input[fork.dynamicForkJoinTasksParam!])?.[position];
    const own = isRecord(entry) ? entry["input"] : undefined;
    return isRecord(own) ? (own as JsonObject) : {};
  }
  if (form === "list") {
    const own = typeof reference === "string" ? inputsByReference(fork, input)?.[reference] : undefined;
    return isRecord(own) ? (own as JsonObject) : {};
  }
  const entries = input["forkTaskInputs"];
  const entry: JsonValue = Array.isArray(entries) ? (entries[position] ?? null) : null;
  // A sub workflow's task reads `input` as its child's whole input, where Conductor's child gets the entry whole: an
  // entry holding `input` (or a plain value, `{input: entry}`) is handed over as `workflowInput`, so the child gets
  // `{input: …, __index}` as Conductor's does.
  const forksWorkflows = typeof input["forkTaskWorkflow"] === "string";
  if (isRecord(entry) && !Array.isArray(entry)) {
    const given: JsonObject = { ...(entry as JsonObject), __index: position };
    return forksWorkflows && Object.hasOwn(given, "input") ? { workflowInput: given, __index: position } : given;
  }
  if (forksWorkflows) return { workflowInput: { input: entry, __index: position }, __index: position };
  return { input: entry, __index: position };
}

/** The forked tasks' inputs' map; `{}` when absent, null or empty text (the official client's default), undefined when it is no map. */
function inputsByReference(fork: WorkflowTaskDef, input: JsonObject): JsonObject | undefined {
  const inputs = input[fork.dynamicForkTasksInputParamName ?? ""];
  if (inputs === undefined || inputs === null || inputs === "") return {};
  return isRecord(inputs) && !Array.isArray(inputs) ? (inputs as JsonObject) : undefined;
}

/**
 * The input forked task `reference`, at `position` among those the latest run of FORK_JOIN_DYNAMIC `fork` (its instance
 * `forkTask`) forked, gets from it: merged over its resolved `inputParameters`.
 */
export function forkedTaskInput(fork: WorkflowTaskDef, forkTask: TaskExecution, position: number, reference: string): JsonObject {
  return forkInputOf(fork, forkTask.inputData, position, reference);
}

/** Reference names the forked tasks may not take: the definition's and those other forks forked. */
function takenReferences(workflow: WorkflowDef, fork: string): Set<string> {
  const taken = new Set(flattenTasks(workflow.tasks).map((task) => task.taskReferenceName));
  for (const run of workflow.dynamicForks ?? []) {
    if (run.fork !== fork) for (const task of flattenTasks(run.tasks)) taken.add(task.taskReferenceName);
  }
  return taken;
}

/**
 * `workflow` recording that its FORK_JOIN_DYNAMIC `fork` forked `tasks` as its instance `forkTask` ran (see
 * `WorkflowDef.dynamicForks`). Outside a loop, a fork run again (a rerun) while its earlier run is the latest replaces
 * it. In a DO_WHILE's loop, the same tasks as the fork's latest run are that run again (the same steps serve each
 * iteration, as a FORK_JOIN's branches do: the same object is returned); other tasks are a run of their own. Otherwise
 * the run is added after the others, so that theirs keep their places in the plan.
 */
function withForkedTasks(workflow: WorkflowDef, fork: string, tasks: WorkflowTaskDef[], forkTask: Pick<TaskExecution, "seq" | "iteration">): WorkflowDef {
  const runs = workflow.dynamicForks ?? [];
  const run = { fork, tasks, forkSeq: forkTask.seq };
  if (forkTask.iteration === undefined) {
    const kept = runs.at(-1)?.fork === fork ? runs.slice(0, -1) : runs;
    return { ...workflow, dynamicForks: [...kept, run] };
  }
  const latest = runs.findLast((earlier) => earlier.fork === fork);
  if (latest !== undefined && JSON.stringify(latest.tasks) === JSON.stringify(tasks)) return workflow;
  return { ...workflow, dynamicForks: [...runs, run] };
}

/**
 * `workflow` without the latest fork runs `isCurrent` says are over (their fork's instance gone or run again, as a
 * rerun leaves them), so that a run of the fork replaces, rather than adds to, them. The same object when none is.
 */
export function withoutEndedForks(workflow: WorkflowDef, isCurrent: (run: DynamicFork) => boolean): WorkflowDef {
  const runs = workflow.dynamicForks;
  if (runs === undefined) return workflow;
  let end = runs.length;
  while (end > 0 && !isCurrent(runs[end - 1]!)) end--;
  if (end === runs.length) return workflow;
  if (end === 0) {
    const { dynamicForks: _ended, ...rest } = workflow;
    return rest;
  }
  return { ...workflow, dynamicForks: runs.slice(0, end) };
}

/**
 * `state`'s definition without the dynamic fork runs no task instance stands for any more (a loop's keepLastN dropped
 * the iterations that ran them), each fork's latest run kept, and the new step of each forked instance whose step moved
 * with them; undefined when every run is in use. A loop forking other tasks in each iteration would otherwise add a run
 * each time, until the stored definition's limit fails its fork.
 */
export function compactedForkRuns(state: WorkflowExecution): { definition: WorkflowDef; moved: Map<string, number> } | undefined {
  const runs = state.definition.dynamicForks;
  if (runs === undefined) return undefined;
  const plan = planOf(state.definition);
  const spans = plan.forkRunSpans;
  const runOf = (index: number) => (index < plan.firstForkedStep ? -1 : spans.findIndex((span) => index >= span.first && index < span.end));
  const used = new Set(runs.map((run) => runs.findLastIndex((other) => other.fork === run.fork)));
  for (const task of state.tasks) {
    const run = runOf(task.definitionIndex);
    if (run >= 0) used.add(run);
  }
  if (used.size === runs.length) return undefined;
  const definition: WorkflowDef = { ...state.definition, dynamicForks: runs.filter((_run, at) => used.has(at)) };
  const newSpans = planOf(definition).forkRunSpans;
  const placeOf = new Map([...used].sort((a, b) => a - b).map((old, place) => [old, place]));
  const moved = new Map<string, number>();
  for (const task of state.tasks) {
    const run = runOf(task.definitionIndex);
    if (run < 0) continue;
    const index = newSpans[placeOf.get(run)!]!.first + (task.definitionIndex - spans[run]!.first);
    if (index !== task.definitionIndex) moved.set(task.taskId, index);
  }
  return { definition, moved };
}
