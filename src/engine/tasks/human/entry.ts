import { masked, maskedKeysOf } from "../../masking";
import type { JsonObject, JsonValue, TaskExecution, WorkflowExecution } from "../../model";
import { shownTaskInput } from "../../view";
import { actedByOf, bareActor, currentProgress, humanStateOf, shownSettings } from "./progress";
import { HUMAN_SETTINGS_KEY } from "./settings";

/**
 * Orkes' HumanTaskEntry of HUMAN task `task`: its human state, assignee and claimant, input and output (masked as
 * its Task JSON's), its settings (`humanTaskDef`) with the assignment chain in force, and Orkes' audit fields: who
 * started its workflow (`createdBy`) and who acted on it last (`updatedBy`, the starter until someone has), each a
 * bare user or application id.
 */
export function humanTaskEntry(task: TaskExecution, execution: WorkflowExecution): JsonObject {
  // Masked as its Task JSON's input is, what its template read from a masked field too ("SSN ***" of
  // "SSN ${workflow.input.ssn}"): the entry is listed and searched by its text. The settings are read from it (a
  // display name or a trigger's start input may quote masked fields and `_secrets`).
  const input = shownTaskInput(task, execution);
  const given: JsonValue | undefined = input[HUMAN_SETTINGS_KEY];
  const progress = currentProgress(task);
  const settings = shownSettings(typeof given === "object" && given !== null && !Array.isArray(given) ? given : undefined, progress);
  const displayName = settings["displayName"];
  const entry: JsonObject = {
    taskId: task.taskId,
    workflowId: execution.workflowId,
    workflowName: execution.workflowName,
    taskRefName: task.referenceTaskName,
    definitionName: task.taskDefName,
    displayName: typeof displayName === "string" && displayName !== "" ? displayName : task.taskDefName,
    state: humanStateOf(task),
    input,
    output: masked(task.outputData, maskedKeysOf(execution.definition)),
    humanTaskDef: settings,
    createdOn: task.scheduledTime,
    updatedOn: task.updateTime,
  };
  if (progress?.assignee !== undefined) entry["assignee"] = { ...progress.assignee };
  if (progress?.claimant !== undefined) entry["claimant"] = { ...progress.claimant };
  if (execution.createdBy !== undefined) entry["createdBy"] = execution.createdBy;
  // Until someone acts on it, whoever started the workflow, as Orkes' entries show an untouched task.
  const updatedBy = (progress === undefined ? undefined : actedByOf(progress)) ?? execution.createdBy;
  if (updatedBy !== undefined) entry["updatedBy"] = updatedBy;
  return entry;
}

/**
 * A human task list row's entry (as {@link humanTaskEntry} made it when the row was written) as the API shows it.
 * Rows written before `updatedBy` held the bare id keep `CONDUCTOR_USER:<id>` until their workflow next changes:
 * shown as reading the task shows it, the id alone.
 */
export function listedEntry(stored: JsonObject): JsonObject {
  const by = stored["updatedBy"];
  return typeof by === "string" ? { ...stored, updatedBy: bareActor(by) } : stored;
}
