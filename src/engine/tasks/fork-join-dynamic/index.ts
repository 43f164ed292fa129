/**
 * FORK_JOIN_DYNAMIC (Conductor's dynamic fork): when it runs, its input says which tasks to fork, one branch each; it
 * completes at once, and the decider runs each forked task as a lane of its own, side by side, until the JOIN after
 * it has seen every one of them end well (see `plan.ts`, which lays the forked tasks out after the definition's own).
 *
 * Two ways of saying what to fork, as in Conductor:
 * - `dynamicForkTasksParam` names the input parameter holding the list of tasks (workflow tasks as a definition
 *   writes them), and `dynamicForkTasksInputParamName` the one holding each one's input by reference name;
 * - the input parameter `forkTaskInputs`, a list: one branch per entry, each running the task `forkTaskName` of type
 *   `forkTaskType` (SIMPLE by default), or the sub workflow `forkTaskWorkflow` (`forkTaskWorkflowVersion`), named
 *   `_<forkTaskName>_<index>`, with the entry (an object, else `{input: entry}`) and `__index` as input.
 */
import { describeValue, isRecord } from "../../definition/checks";
import { validateForkedTasks } from "../../definition/validate";
import { cutText, MAX_TASK_REASON_LENGTH } from "../../limits";
import type { JsonObject, JsonValue, TaskExecution, WorkflowDef, WorkflowTaskDef } from "../../model";
import { flattenTasks } from "../../plan";
import type { TaskTypeModule } from "../task-type";

export const forkJoinDynamicTask: TaskTypeModule = {
  type: "FORK_JOIN_DYNAMIC",
  start(task, definition, execution, env) {
    const times = { startTime: env.now, endTime: env.now, updateTime: env.now };
    const forked = tasksToFork(definition, task.inputData, execution.definition);
    if (!forked.ok) {
      const reasonForIncompletion = cutText(`Tasks could not be forked: ${forked.reason}`, MAX_TASK_REASON_LENGTH);
      return { task: { ...task, ...times, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion }, dispatch: false };
    }
    // Conductor's fork shows what it forked in its input.
    const inputData = { ...task.inputData, forkedTasks: forked.tasks.map((forkedTask) => forkedTask.taskReferenceName) };
    return { task: { ...task, ...times, status: "COMPLETED", inputData, outputData: {} }, dispatch: false, forked: forked.tasks };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};

type Forked = { ok: true; tasks: WorkflowTaskDef[] } | { ok: false; reason: string };

/**
 * The tasks FORK_JOIN_DYNAMIC `fork` forks, given its resolved `input`, checked like a definition's tasks (each with
 * the input it will get) and normalised, with `inputParameters` left without the keys that input sets: those come
 * from the fork's own input as they are, never resolved again (see {@link forkedTaskInput}).
 */
function tasksToFork(fork: WorkflowTaskDef, input: JsonObject, workflow: WorkflowDef): Forked {
  const listed = fork.dynamicForkTasksParam === undefined ? fromForkTaskInputs(fork, input) : fromTaskList(fork, input);
  if (!listed.ok) return listed;
  const asRun = listed.raw.map((raw, position) => {
    const own = isRecord(raw) && isRecord(raw["inputParameters"]) ? raw["inputParameters"] : {};
    const extra = isRecord(raw) ? forkInputOf(fork, input, position, raw["taskReferenceName"]) : {};
    return isRecord(raw) ? { ...raw, inputParameters: { ...own, ...extra } } : raw;
  });
  const checked = validateForkedTasks(asRun, listed.path, takenReferences(workflow, fork.taskReferenceName));
  if (!checked.ok) return { ok: false, reason: checked.errors.map((issue) => `${issue.path}: ${issue.message}`).join("; ") };
  const tasks = checked.tasks.map((task, position) => {
    const extra = forkInputOf(fork, input, position, task.taskReferenceName);
    const inputParameters = Object.fromEntries(Object.entries(task.inputParameters ?? {}).filter(([key]) => !Object.hasOwn(extra, key)));
    return { ...task, inputParameters };
  });
  return { ok: true, tasks };
}

type Listed = { ok: true; raw: unknown[]; path: string } | { ok: false; reason: string };

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
  return { ok: true, raw: list, path: param };
}

/** Tasks built from `forkTaskInputs` (see the module comment). */
function fromForkTaskInputs(fork: WorkflowTaskDef, input: JsonObject): Listed {
  const entries = input["forkTaskInputs"];
  if (!Array.isArray(entries)) return { ok: false, reason: `input forkTaskInputs must be a list (one branch per entry), but is ${describeValue(entries)}` };
  const workflow = input["forkTaskWorkflow"];
  const type = typeof input["forkTaskType"] === "string" ? input["forkTaskType"] : "SIMPLE";
  const givenName = input["forkTaskName"];
  // Conductor's defaults: a system task is named after its type, a worker's task after the fork.
  const name = typeof givenName === "string" && givenName !== "" ? givenName : type !== "SIMPLE" && typeof workflow !== "string" ? type : fork.taskReferenceName;
  const raw = entries.map((_entry, index): JsonObject => {
    const task: JsonObject = { taskReferenceName: `_${name}_${index}`, name, type, inputParameters: {} };
    if (typeof workflow === "string") {
      const version = Number(input["forkTaskWorkflowVersion"]);
      Object.assign(task, { name: workflow, type: "SUB_WORKFLOW", subWorkflowParam: Number.isInteger(version) && version > 0 ? { name: workflow, version } : { name: workflow } });
    }
    if (fork.optional === true) task["optional"] = true;
    return task;
  });
  return { ok: true, raw, path: "forkTaskInputs" };
}

/**
 * The input forked task `reference` (at `position` among the forked) gets from its fork, as it is: its entry in the
 * inputs' map, or its `forkTaskInputs` entry (an object, else `{input: entry}`) with `__index`.
 */
function forkInputOf(fork: WorkflowTaskDef, input: JsonObject, position: number, reference: unknown): JsonObject {
  if (fork.dynamicForkTasksParam !== undefined) {
    const own = typeof reference === "string" ? inputsByReference(fork, input)?.[reference] : undefined;
    return isRecord(own) ? (own as JsonObject) : {};
  }
  const entries = input["forkTaskInputs"];
  const entry: JsonValue = Array.isArray(entries) ? (entries[position] ?? null) : null;
  return { ...(isRecord(entry) && !Array.isArray(entry) ? (entry as JsonObject) : { input: entry }), __index: position };
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
 * `workflow` recording that its FORK_JOIN_DYNAMIC `fork` forked `tasks` (see `WorkflowDef.dynamicForks`). A fork run
 * again (a rerun) while its earlier run is the latest replaces it; otherwise the run is added after the others, so
 * that theirs keep their places in the plan.
 */
export function withForkedTasks(workflow: WorkflowDef, fork: string, tasks: WorkflowTaskDef[]): WorkflowDef {
  const runs = workflow.dynamicForks ?? [];
  const kept = runs.at(-1)?.fork === fork ? runs.slice(0, -1) : runs;
  return { ...workflow, dynamicForks: [...kept, { fork, tasks }] };
}

/**
 * `workflow` without the latest fork runs `isCurrent` says are over (their fork's instance gone or run again, as a
 * rerun leaves them), so that a run of the fork replaces, rather than adds to, them. The same object when none is.
 */
export function withoutEndedForks(workflow: WorkflowDef, isCurrent: (fork: string) => boolean): WorkflowDef {
  const runs = workflow.dynamicForks;
  if (runs === undefined) return workflow;
  let end = runs.length;
  while (end > 0 && !isCurrent(runs[end - 1]!.fork)) end--;
  if (end === runs.length) return workflow;
  if (end === 0) {
    const { dynamicForks: _ended, ...rest } = workflow;
    return rest;
  }
  return { ...workflow, dynamicForks: runs.slice(0, end) };
}
