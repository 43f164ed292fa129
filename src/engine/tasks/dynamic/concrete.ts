/**
 * What a DYNAMIC task is once its input has named the task to run. The instance alone records the choice (its
 * `taskType` and `taskDefName`), so the task it runs as is derived from the definition's DYNAMIC and that choice,
 * never stored: each instance (a retry, a loop's next iteration, a rerun) chooses afresh from its own input.
 */
import { TASK_TYPES, type JsonObject, type TaskType, type WorkflowTaskDef } from "../../model";
import { BoundedCache } from "../../expressions/cache";
import { isJsonObjectValue } from "../workflow-start-fields";

/**
 * The types a DYNAMIC may run as, besides a worker's task (SIMPLE): a single task. Not SWITCH, DECISION, DO_WHILE or
 * a fork, which hold tasks of their own, nor a JOIN (it pairs with a fork), an EXCLUSIVE_JOIN (the tasks it joins on are
 * the definition's task's own fields, which a DYNAMIC has not) or another DYNAMIC. Nor UPDATE_SECRET: writing
 * a secret is a right checked when a definition holding one is registered, which a choice made at run time escapes.
 */
export const DYNAMIC_TARGET_TYPES: readonly TaskType[] = TASK_TYPES.filter(
  (type) => !["SWITCH", "DECISION", "DO_WHILE", "WHILE", "FORK_JOIN", "FORK_JOIN_DYNAMIC", "CONDITIONAL_FORK", "JOIN", "EXCLUSIVE_JOIN", "DYNAMIC", "UPDATE_SECRET"].includes(type),
);

/**
 * The input parameters a DYNAMIC that runs a SUB_WORKFLOW names its child with (Orkes'); they become the
 * sub workflow's `subWorkflowParam`, not part of the child's input.
 */
export const SUB_WORKFLOW_NAME_PARAM = "subWorkflowName";
/** See {@link SUB_WORKFLOW_NAME_PARAM}: the child's version. */
export const SUB_WORKFLOW_VERSION_PARAM = "subWorkflowVersion";

/**
 * The input parameter a DYNAMIC that runs a SUB_WORKFLOW may give its child's definition in instead of naming a
 * registered one (Orkes'): it becomes the sub workflow's `subWorkflowParam.workflowDefinition`, so it runs as a
 * SUB_WORKFLOW's inline child does.
 */
export const SUB_WORKFLOW_DEFINITION_PARAM = "subWorkflowDefinition";

/** The input parameter a DYNAMIC that runs an EVENT gives its sink in, as Conductor's Event task reads it from its input. */
export const EVENT_SINK_PARAM = "sink";

/**
 * The child definition DYNAMIC `dynamic` writes in place in its input (`subWorkflowDefinition`, checked and normalised
 * at registration), undefined when it gives none or an expression giving one.
 */
export function dynamicInlineChild(dynamic: WorkflowTaskDef): JsonObject | undefined {
  const given = dynamic.inputParameters?.[SUB_WORKFLOW_DEFINITION_PARAM];
  return isJsonObjectValue(given) ? given : undefined;
}

const choosing = new WeakMap<WorkflowTaskDef, WorkflowTaskDef>();

/**
 * DYNAMIC `dynamic` as its input is resolved to choose the task it runs: without a child definition written in place,
 * whose expressions are the child's own (resolved as the child runs, never by the parent), as a SUB_WORKFLOW's inline
 * child is left out of its input.
 */
export function choosingTask(dynamic: WorkflowTaskDef): WorkflowTaskDef {
  if (dynamicInlineChild(dynamic) === undefined) return dynamic;
  let task = choosing.get(dynamic);
  if (task === undefined) {
    const { [SUB_WORKFLOW_DEFINITION_PARAM]: _child, ...input } = dynamic.inputParameters ?? {};
    task = { ...dynamic, inputParameters: input };
    choosing.set(dynamic, task);
  }
  return task;
}

/**
 * Most choices derived and kept per DYNAMIC, and most characters their keys hold together: the names come from the
 * data (a loop's DYNAMIC may choose a new name each iteration), and a definition stays in memory with its execution's
 * object for as long as the object lives, so without a bound its DYNAMICs kept one task per name ever chosen. A choice
 * dropped is derived again when asked for.
 */
const CHOICES_KEPT = 64;
const CHOICE_KEY_CHARS = 16_384;

const derived = new WeakMap<WorkflowTaskDef, BoundedCache<string, WorkflowTaskDef>>();

/** How many choices of DYNAMIC `dynamic` are kept derived; for tests of the bound. */
export function keptDynamicChoices(dynamic: WorkflowTaskDef): number {
  return derived.get(dynamic)?.size ?? 0;
}

/**
 * DYNAMIC `dynamic` as the task of `type` named `name` it chose to run (a worker's task is SIMPLE): the same reference
 * name, input, retry and timeout settings. Derived once per choice: a view or a decision asks for it often.
 */
export function dynamicTaskAs(dynamic: WorkflowTaskDef, type: TaskType, name: string): WorkflowTaskDef {
  let choices = derived.get(dynamic);
  if (choices === undefined) {
    choices = new BoundedCache(CHOICES_KEPT, CHOICE_KEY_CHARS);
    derived.set(dynamic, choices);
  }
  const key = JSON.stringify([type, name]);
  let task = choices.get(key);
  if (task === undefined) {
    task = concreteTask(dynamic, type, name);
    choices.set(key, task);
  }
  return task;
}

function concreteTask(dynamic: WorkflowTaskDef, type: TaskType, name: string): WorkflowTaskDef {
  const { dynamicTaskNameParam, ...common } = dynamic;
  const task: WorkflowTaskDef = { ...common, type, name };
  if (type === "EVENT") return withInputSink(task);
  if (type !== "SUB_WORKFLOW") return task;
  // The child is named by two input parameters, or given by a third; the child's input is the others, the task's name
  // among them left out.
  const input: JsonObject = { ...(dynamic.inputParameters ?? {}) };
  const subWorkflowParam: JsonObject = {};
  const definition = input[SUB_WORKFLOW_DEFINITION_PARAM];
  delete input[SUB_WORKFLOW_DEFINITION_PARAM];
  for (const [param, field] of [
    [SUB_WORKFLOW_NAME_PARAM, "name"],
    [SUB_WORKFLOW_VERSION_PARAM, "version"],
  ] as const) {
    const value = input[param];
    if (value !== undefined) subWorkflowParam[field] = value;
    delete input[param];
  }
  // Null is none, as in Conductor's SubWorkflow task. Written in place, the child names itself (Orkes' DYNAMIC takes
  // either the definition or a name); an expression giving one needs the name beside it, as a SUB_WORKFLOW's does.
  if (definition !== undefined && definition !== null) {
    subWorkflowParam["workflowDefinition"] = definition;
    if (subWorkflowParam["name"] === undefined && isJsonObjectValue(definition) && definition["name"] !== undefined) subWorkflowParam["name"] = definition["name"];
  }
  if (dynamicTaskNameParam !== undefined) delete input[dynamicTaskNameParam];
  return { ...task, inputParameters: input, subWorkflowParam };
}

/**
 * An EVENT a DYNAMIC runs, its `sink` its input parameter `sink`: Conductor's DynamicTaskMapper gives the task the
 * DYNAMIC's whole input, from which its Event task reads `sink` (an EVENT's mapper puts its task-level `sink` there).
 * Here an EVENT reads the task-level field, so the input's is lifted to it (its `${...}`, if any, resolved as the task
 * starts); without one, the DYNAMIC's own task-level `sink` stays.
 */
function withInputSink(task: WorkflowTaskDef): WorkflowTaskDef {
  const sink = task.inputParameters?.[EVENT_SINK_PARAM];
  return typeof sink === "string" ? { ...task, sink } : task;
}
