/**
 * Pinning the version of a SUB_WORKFLOW's child as its workflow starts, as Conductor's start does
 * (`MetadataMapperService.populateVersionForSubWorkflow`): a child named without a version runs the version that was
 * the latest when its parent started, whatever is registered meanwhile, and the task shows it.
 */
import type { WorkflowDef, WorkflowTaskDef } from "../../model";
import { flattenTasks, mapTasks } from "../../plan";
import { isJsonObjectValue } from "../workflow-start-fields";

/** True for a SUB_WORKFLOW whose own subWorkflowParam names its registered child by a literal name and no version. */
function namesUnversionedChild(task: WorkflowTaskDef): boolean {
  const param = task.subWorkflowParam;
  if (task.type !== "SUB_WORKFLOW" || !isJsonObjectValue(param)) return false;
  const name = param["name"];
  const version = param["version"];
  return typeof name === "string" && name !== "" && !name.includes("${") && (version === undefined || version === null || version === "") && param["workflowDefinition"] === undefined;
}

// Definitions are immutable once read (the repository caches them): their children's names are found once per object.
const childNames = new WeakMap<WorkflowDef, readonly string[]>();

/** The children `definition`'s SUB_WORKFLOW tasks name without a version (see {@link withChildVersions}), each once. */
export function unversionedChildNames(definition: WorkflowDef): readonly string[] {
  let names = childNames.get(definition);
  if (names === undefined) {
    names = [...new Set(flattenTasks(definition.tasks).filter(namesUnversionedChild).map((task) => String(task.subWorkflowParam!["name"])))];
    childNames.set(definition, names);
  }
  return names;
}

/** `definition` with each SUB_WORKFLOW naming its child without a version given that child's version in `latest`. */
export function withChildVersions(definition: WorkflowDef, latest: ReadonlyMap<string, number>): WorkflowDef {
  const tasks = mapTasks(definition.tasks, (task) => {
    if (!namesUnversionedChild(task)) return task;
    const version = latest.get(String(task.subWorkflowParam!["name"]));
    return version === undefined ? task : { ...task, subWorkflowParam: { ...task.subWorkflowParam, version } };
  });
  return tasks === definition.tasks ? definition : { ...definition, tasks };
}
