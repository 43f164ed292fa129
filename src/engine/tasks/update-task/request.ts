import { EXTERNAL_TASK_STATUSES, type ExternalTaskStatus, type JsonObject } from "../../model";
import { isJsonObjectValue } from "../workflow-start-fields";

/** Which task an UPDATE_TASK updates: one of an execution's by reference name, or any by its id. */
export type UpdateTarget = { workflowId: string; taskRefName: string } | { taskId: string };

/** What an UPDATE_TASK asks for, read from its resolved input (Orkes' Update Task). */
export interface UpdateTaskRequest {
  target: UpdateTarget;
  status: ExternalTaskStatus;
  /** The task's output from now on, or what is added to it (`merge`). */
  output: JsonObject;
  /** Orkes' `mergeOutput`: true adds `output` to the task's output, false (the default) replaces it. */
  merge: boolean;
}

/** A non-empty string's trimmed text, or undefined. */
function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/**
 * The update an UPDATE_TASK's resolved `input` asks for, or why it asks for none. `ownWorkflowId` is the workflow the
 * UPDATE_TASK runs in: the one a `taskRefName` is looked for in when `workflowId` is not given (Orkes' default).
 */
export function updateTaskRequest(input: JsonObject, ownWorkflowId: string): UpdateTaskRequest | { invalid: string } {
  const status = input["taskStatus"];
  if (typeof status !== "string" || !(EXTERNAL_TASK_STATUSES as readonly string[]).includes(status)) {
    return { invalid: `taskStatus resolved to ${JSON.stringify(status ?? null)}, not one of ${EXTERNAL_TASK_STATUSES.join(", ")}` };
  }
  const taskId = text(input["taskId"]);
  const taskRefName = text(input["taskRefName"]);
  let target: UpdateTarget;
  if (taskId !== undefined) target = { taskId: taskId.toLowerCase() };
  else if (taskRefName !== undefined) target = { workflowId: text(input["workflowId"]) ?? ownWorkflowId, taskRefName };
  else return { invalid: "Neither taskId nor taskRefName resolved to a value: give the task's id, or its reference name (and workflowId, unless it is a task of this workflow)" };
  const output = input["taskOutput"] ?? {};
  if (!isJsonObjectValue(output)) return { invalid: `taskOutput resolved to ${JSON.stringify(output)}, not an object (the task's output)` };
  const merge = input["mergeOutput"] ?? false;
  if (typeof merge !== "boolean") return { invalid: `mergeOutput resolved to ${JSON.stringify(merge)}, not true or false` };
  return { target, status: status as ExternalTaskStatus, output, merge };
}
