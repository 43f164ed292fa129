/**
 * Registration-time checks of a START_WORKFLOW task (Conductor's): `inputParameters.startWorkflow` describes the
 * workflow it starts.
 */
import * as v from "valibot";
import { isExpression, isNonEmptyString, isOneOf, isRecord, mapOf, objectOf, orExpression, rule, secretUseIssues, validateWith, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { DOMAIN_RULE, isDomainValue, isStartedPriority, isStartedVersion, MAX_STARTED_PRIORITY } from "../workflow-start-fields";
import { START_IDEMPOTENCY_STRATEGIES, START_WORKFLOW_PARAMETER } from "./request";
import { isTextScalar, TEXT_SCALAR_RULE } from "../../scalar-text";

const START_WORKFLOW = objectOf(START_WORKFLOW_PARAMETER, "an object describing the workflow to start (at least its name), or an expression giving one", {
  // Not needed with a workflowDef, which names the workflow itself (see validateStartWorkflowTask).
  name: v.optional(rule<string>("name", "a non-empty string naming the workflow to start (an expression is allowed)", isNonEmptyString)),
  // Conductor's StartWorkflowRequest.workflowDef: a definition to run instead of a registered one, written here (checked
  // as a definition of its own by validateWorkflowDef) or given by an expression (checked as it runs).
  workflowDef: v.nullish(rule<unknown>("workflowDef", "an object (the definition to start) or an expression giving one", orExpression(isRecord))),
  version: v.optional(
    rule<unknown>("version", "an integer of at least 0, its digits as text, or an expression; leave it out (or give \"\") for the latest version (0: version 0 when one is registered, else the latest)", orExpression(isStartedVersion)),
  ),
  // Null is none, as the Python SDK's StartWorkflowTask writes its request's unset input and correlationId.
  input: v.nullish(rule<unknown>("input", "an object (the started workflow's input) or an expression", orExpression(isRecord))),
  // A number or boolean is its text, as Conductor's StartWorkflow reads its StartWorkflowRequest (Jackson).
  correlationId: v.nullish(rule<unknown>("correlationId", TEXT_SCALAR_RULE, isTextScalar)),
  // Read as Conductor's StartWorkflow reads it (Jackson's convertValue after the input is resolved): the map may be an
  // expression giving it, and a domain a number or boolean (its text) or null (none for that task).
  taskToDomain: v.nullish(mapOf("taskToDomain", DOMAIN_RULE, isDomainValue, { wholeExpression: true })),
  priority: v.nullish(rule<unknown>("priority", `an integer from 0 to ${MAX_STARTED_PRIORITY} (or an expression)`, orExpression(isStartedPriority))),
  idempotencyKey: v.nullish(rule<unknown>("idempotencyKey", TEXT_SCALAR_RULE, isTextScalar)),
  idempotencyStrategy: v.nullish(
    rule<unknown>("idempotencyStrategy", `one of ${START_IDEMPOTENCY_STRATEGIES.join(", ")} (or an expression)`, orExpression(isOneOf(START_IDEMPOTENCY_STRATEGIES))),
  ),
});

/** Every problem with how a START_WORKFLOW describes the workflow it starts. */
export function validateStartWorkflowTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const inputPath = childPath(path, "inputParameters");
  const input = isRecord(task["inputParameters"]) ? task["inputParameters"] : {};
  const request = input[START_WORKFLOW_PARAMETER];
  const at = childPath(inputPath, START_WORKFLOW_PARAMETER);
  if (request === undefined) return [{ path: at, message: `a START_WORKFLOW needs inputParameters.${START_WORKFLOW_PARAMETER}: an object with at least the name of the workflow to start` }];
  const issues = isExpression(request) ? [] : validateWith(START_WORKFLOW, request, at);
  if (isRecord(request) && request["name"] === undefined && !isRecord(request["workflowDef"]) && !isExpression(request["workflowDef"])) {
    issues.push({ path: childPath(at, "name"), message: "name is required (a non-empty string naming the workflow to start), unless a workflowDef gives the definition to start" });
  }
  // The started workflow's input is stored and shown as its own: it must reference the secret itself. A definition
  // written here may name secrets itself, as a SUB_WORKFLOW's inline child may: resolved as its own tasks run.
  const passed = isRecord(request) && isRecord(request["workflowDef"]) ? Object.fromEntries(Object.entries(request).filter(([key]) => key !== "workflowDef")) : request;
  issues.push(...secretUseIssues(passed, at, (names) => `must not pass secrets to the workflow it starts (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): its input is stored and shown; reference the secret inside that workflow instead`));
  return issues;
}
