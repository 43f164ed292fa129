import type { JsonObject } from "../../model";
import { isJsonObjectValue, taskToDomainOf, workflowVersionOf } from "../workflow-start-fields";

/** The input parameter describing the workflow a START_WORKFLOW starts (Conductor's). */
export const START_WORKFLOW_PARAMETER = "startWorkflow";

/** What a START_WORKFLOW starts, read from its resolved input (Conductor's StartWorkflowRequest). */
export interface StartWorkflowRequest {
  name: string;
  version?: number;
  input: JsonObject;
  correlationId?: string;
  taskToDomain?: Record<string, string>;
}


/** The start a START_WORKFLOW's resolved input asks for, or why it asks for none (as Conductor words a missing one). */
export function startWorkflowRequest(input: JsonObject): StartWorkflowRequest | { invalid: string } {
  const request = input[START_WORKFLOW_PARAMETER];
  if (request === undefined || request === null) return { invalid: `Missing '${START_WORKFLOW_PARAMETER}' in input data.` };
  if (!isJsonObjectValue(request)) return { invalid: `${START_WORKFLOW_PARAMETER} must be an object describing the workflow to start` };
  const name = request["name"];
  if (typeof name !== "string" || name.trim() === "") return { invalid: `${START_WORKFLOW_PARAMETER}.name resolved to ${JSON.stringify(name ?? null)}, not a workflow name` };
  const started: StartWorkflowRequest = { name: name.trim(), input: {} };
  const version = workflowVersionOf(request["version"], `${START_WORKFLOW_PARAMETER}.version`);
  if (typeof version === "object") return version;
  if (version !== undefined) started.version = version;
  const given = request["input"];
  if (given !== undefined && given !== null) {
    if (!isJsonObjectValue(given)) return { invalid: `${START_WORKFLOW_PARAMETER}.input must be an object (the started workflow's input)` };
    started.input = given;
  }
  const correlationId = request["correlationId"];
  if (typeof correlationId === "string" && correlationId !== "") started.correlationId = correlationId;
  const taskToDomain = taskToDomainOf(request["taskToDomain"]);
  if (taskToDomain !== undefined) started.taskToDomain = taskToDomain;
  return started;
}
