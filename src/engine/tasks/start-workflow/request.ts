import type { JsonObject, JsonValue } from "../../model";
import { correlationIdProblem } from "../../limits";
import { correlationIdOf, idempotencyKeyOf, isJsonObjectValue, priorityOf, startedTaskToDomainOf, workflowVersionOf } from "../workflow-start-fields";

/** The input parameter describing the workflow a START_WORKFLOW starts (Conductor's). */
export const START_WORKFLOW_PARAMETER = "startWorkflow";

/** What a START_WORKFLOW starts, read from its resolved input (Conductor's StartWorkflowRequest). */
export interface StartWorkflowRequest {
  /** The workflow to start; the name of `workflowDef` when it gives one. */
  name: string;
  /** A definition to run instead of the registered one (Conductor's StartWorkflowRequest.workflowDef), as given. */
  workflowDef?: JsonObject;
  version?: number;
  input: JsonObject;
  correlationId?: string;
  taskToDomain?: Record<string, string>;
  priority?: number;
  /** With it, starts carrying the same key start one workflow (Orkes' START_WORKFLOW `idempotencyKey`). */
  idempotencyKey?: string;
  idempotencyStrategy?: StartIdempotencyStrategy;
}

/** What a START_WORKFLOW's start does when its idempotency key was used before (Orkes' StartWorkflowRequest's). */
export const START_IDEMPOTENCY_STRATEGIES = ["RETURN_EXISTING", "FAIL", "FAIL_ON_RUNNING"] as const;
/** One of {@link START_IDEMPOTENCY_STRATEGIES}. */
export type StartIdempotencyStrategy = (typeof START_IDEMPOTENCY_STRATEGIES)[number];


/** The start a START_WORKFLOW's resolved input asks for, or why it asks for none (as Conductor words a missing one). */
export function startWorkflowRequest(input: JsonObject): StartWorkflowRequest | { invalid: string } {
  const request = input[START_WORKFLOW_PARAMETER];
  if (request === undefined || request === null) return { invalid: `Missing '${START_WORKFLOW_PARAMETER}' in input data.` };
  if (!isJsonObjectValue(request)) return { invalid: `${START_WORKFLOW_PARAMETER} must be an object describing the workflow to start` };
  const workflowDef = request["workflowDef"];
  if (workflowDef !== undefined && workflowDef !== null && !isJsonObjectValue(workflowDef)) {
    return { invalid: `${START_WORKFLOW_PARAMETER}.workflowDef resolved to ${JSON.stringify(workflowDef)}, not a workflow definition` };
  }
  // A definition given names the workflow itself, as Conductor takes it.
  const defined = isJsonObjectValue(workflowDef) && typeof workflowDef["name"] === "string" ? workflowDef["name"] : undefined;
  const name = defined ?? request["name"];
  if (typeof name !== "string" || name.trim() === "") return { invalid: `${START_WORKFLOW_PARAMETER}.name resolved to ${JSON.stringify(name ?? null)}, not a workflow name` };
  const started: StartWorkflowRequest = { name: name.trim(), input: {} };
  if (isJsonObjectValue(workflowDef)) started.workflowDef = workflowDef;
  const version = workflowVersionOf(request["version"], `${START_WORKFLOW_PARAMETER}.version`);
  if (typeof version === "object") return version;
  if (version !== undefined) started.version = version;
  const given = request["input"];
  if (given !== undefined && given !== null) {
    if (!isJsonObjectValue(given)) return { invalid: `${START_WORKFLOW_PARAMETER}.input must be an object (the started workflow's input)` };
    started.input = given;
  }
  const correlationId = correlationIdOf(request["correlationId"], `${START_WORKFLOW_PARAMETER}.correlationId`);
  if (typeof correlationId === "object") return correlationId;
  // A blank one (spaces only) is none too: Conductor's StartWorkflow takes the starter's id for it (defaultIfBlank).
  if (correlationId !== undefined && correlationId.trim() !== "") {
    const refused = correlationIdProblem(`${START_WORKFLOW_PARAMETER}.correlationId`, correlationId);
    if (refused !== undefined) return { invalid: refused };
    started.correlationId = correlationId;
  }
  const taskToDomain = startedTaskToDomainOf(request["taskToDomain"], `${START_WORKFLOW_PARAMETER}.taskToDomain`);
  if (taskToDomain !== undefined && "invalid" in taskToDomain) return taskToDomain;
  // An empty map is none, as Conductor's StartWorkflow reads it: the starter's domains then apply.
  if (taskToDomain !== undefined && taskToDomain.given) started.taskToDomain = taskToDomain.map;
  const priority = priorityOf(request["priority"], `${START_WORKFLOW_PARAMETER}.priority`);
  if (typeof priority === "object") return priority;
  if (priority !== undefined) started.priority = priority;
  const idempotencyKey = idempotencyKeyOf(request["idempotencyKey"], `${START_WORKFLOW_PARAMETER}.idempotencyKey`);
  if (typeof idempotencyKey === "object") return idempotencyKey;
  if (idempotencyKey !== undefined) started.idempotencyKey = idempotencyKey;
  const strategy = request["idempotencyStrategy"];
  if (strategy !== undefined && strategy !== null && strategy !== "") {
    if (!(START_IDEMPOTENCY_STRATEGIES as readonly JsonValue[]).includes(strategy)) {
      return { invalid: `${START_WORKFLOW_PARAMETER}.idempotencyStrategy resolved to ${JSON.stringify(strategy)}, not one of ${START_IDEMPOTENCY_STRATEGIES.join(", ")}` };
    }
    started.idempotencyStrategy = strategy as StartIdempotencyStrategy;
  }
  return started;
}
