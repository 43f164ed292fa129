import type { JsonObject, JsonValue } from "../../model";

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

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The start a START_WORKFLOW's resolved input asks for, or why it asks for none (as Conductor words a missing one). */
export function startWorkflowRequest(input: JsonObject): StartWorkflowRequest | { invalid: string } {
  const request = input[START_WORKFLOW_PARAMETER];
  if (request === undefined || request === null) return { invalid: `Missing '${START_WORKFLOW_PARAMETER}' in input data.` };
  if (!isObject(request)) return { invalid: `${START_WORKFLOW_PARAMETER} must be an object describing the workflow to start` };
  const name = request["name"];
  if (typeof name !== "string" || name.trim() === "") return { invalid: `${START_WORKFLOW_PARAMETER}.name resolved to ${JSON.stringify(name ?? null)}, not a workflow name` };
  const started: StartWorkflowRequest = { name: name.trim(), input: {} };
  const version = request["version"];
  if (version !== undefined && version !== null && version !== "") {
    const number = typeof version === "string" && /^\d+$/.test(version.trim()) ? Number(version) : version;
    if (typeof number !== "number" || !Number.isInteger(number) || number < 1) return { invalid: `${START_WORKFLOW_PARAMETER}.version resolved to ${JSON.stringify(version)}, not a positive integer` };
    started.version = number;
  }
  const given = request["input"];
  if (given !== undefined && given !== null) {
    if (!isObject(given)) return { invalid: `${START_WORKFLOW_PARAMETER}.input must be an object (the started workflow's input)` };
    started.input = given;
  }
  const correlationId = request["correlationId"];
  if (typeof correlationId === "string" && correlationId !== "") started.correlationId = correlationId;
  const taskToDomain = request["taskToDomain"];
  if (isObject(taskToDomain)) started.taskToDomain = Object.fromEntries(Object.entries(taskToDomain).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  return started;
}
