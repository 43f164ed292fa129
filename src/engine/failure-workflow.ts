/**
 * Conductor's `failureWorkflow`: when an execution fails or times out (or is terminated with
 * `triggerFailureWorkflow`), another workflow is started to deal with it, and the failed execution's output
 * says which (`conductor.failure_workflow`). This module decides what to start; the actor starts it.
 */
import type { DecideEnv } from "./config";
import { evaluationContext, maskedSecrets } from "./evaluation";
import { hasExpression, resolveValue } from "./expressions";
import { jsonWithin } from "./json-bytes";
import { cutText, oversize, oversizeReason } from "./limits";
import type { FailureWorkflowStart, JsonObject, WorkflowExecution } from "./model";
import { keptTestDomain } from "./test-domain";
import { toWorkflowView } from "./view";

/** The output key of a failed execution that holds its failure workflow's id, or why none started (as in Conductor). */
export const FAILURE_WORKFLOW_OUTPUT_KEY = "conductor.failure_workflow";

/** What an ended execution's failure workflow comes to: the start to make, or why there is none. */
export type FailureWorkflowPlan = { start: FailureWorkflowStart } | { notStarted: string };

/**
 * The failure workflow of `state`, an execution that has just ended (its status, reason, end time and `failedTaskId`
 * set). Undefined when its definition names none. The new execution's id is chosen here, so the output can show it at once.
 */
export function planFailureWorkflow(state: WorkflowExecution, env: DecideEnv): FailureWorkflowPlan | undefined {
  const declared = state.definition.failureWorkflow;
  if (declared === undefined) return undefined;
  const name = failureWorkflowName(state, declared, env);
  // An expression naming nothing (`${workflow.input.onFailure}` left out of this start's input) names no failure
  // workflow, as in Conductor, which starts one only when the name it resolves is not blank.
  if (name === undefined) return undefined;
  if (typeof name !== "string") return { notStarted: notStartedText(declared, name.invalid) };
  const input = failureWorkflowInput(state, env.config.maxPayloadBytes);
  if ("invalid" in input) return { notStarted: notStartedText(name, input.invalid) };
  const start: FailureWorkflowStart = {
    workflowId: env.newId(),
    name,
    input: input.value,
    triggeringWorkflowId: state.workflowId,
    // Not the failed execution's: Conductor's terminateWorkflow copies its correlationId and taskToDomain into the
    // StartWorkflowInput but no priority, which StartWorkflowOperation then starts at 0.
    priority: 0,
    taskToDomain: state.taskToDomain,
    depth: (state.depth ?? 0) + 1,
  };
  if (state.correlationId !== undefined) start.correlationId = state.correlationId;
  if (state.baseUrl !== undefined) start.baseUrl = state.baseUrl;
  if (state.startScopes !== undefined) start.startScopes = state.startScopes;
  if (state.createdBy !== undefined) start.createdBy = state.createdBy;
  // A test run's failure workflow runs its SIMPLE tasks in the run's domain, as Conductor's: it delists those queues too.
  const testRunDomain = keptTestDomain(state, state.taskToDomain);
  if (testRunDomain !== undefined) start.testRunDomain = testRunDomain;
  return { start };
}

/**
 * What the failed execution's output says when its failure workflow could not start: Conductor's wording, to the two
 * spaces before `reason` (WorkflowExecutor.terminateWorkflow), so a check written against Conductor's text holds here.
 */
export function notStartedText(name: string, reason: string): string {
  return `Error workflow ${name} failed to start.  reason: ${reason}`;
}

/**
 * The output of an ended execution once its failure workflow `workflowId` turned out not to start: the id is
 * replaced by why. Undefined when the output no longer shows that id (retried meanwhile, the execution failed again
 * and names a later one).
 */
export function outputWithoutFailureWorkflow(state: WorkflowExecution, workflowId: string, notStarted: string): JsonObject | undefined {
  if (state.output[FAILURE_WORKFLOW_OUTPUT_KEY] !== workflowId) return undefined;
  return { ...state.output, [FAILURE_WORKFLOW_OUTPUT_KEY]: notStarted };
}

function failureWorkflowName(state: WorkflowExecution, declared: string, env: DecideEnv): string | { invalid: string } | undefined {
  if (!hasExpression(declared)) return declared.trim();
  let resolved;
  try {
    resolved = resolveValue(declared, evaluationContext(state, env.now, undefined, maskedSecrets, env.config.maxPayloadBytes));
  } catch (error) {
    return { invalid: `failureWorkflow ${declared} could not be resolved: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof resolved === "string" && resolved.trim() !== "") return resolved.trim();
  // Nothing, or blank text: no failure workflow is named.
  if (resolved === null || resolved === undefined || typeof resolved === "string") return undefined;
  // Cut: the output shows it, and an expression may resolve to a whole object.
  const written = jsonWithin(resolved, env.config.maxPayloadBytes);
  const shown = written === undefined ? `a value of more than ${env.config.maxPayloadBytes} bytes` : cutText(written, 200);
  return { invalid: `failureWorkflow ${declared} resolved to ${shown}, not a workflow name` };
}

/**
 * Conductor's input of a failure workflow: the failed execution's input, plus `workflowId`, `reason`,
 * `failureStatus`, `failureTaskId` (its `failedTaskId`, when it has one: the task that ended it, or that ended it before
 * a retry, as Conductor's terminateWorkflow reads it) and the failed execution's Workflow JSON as
 * `failedWorkflow`. Over the payload limit, `failedWorkflow` loses its tasks, then is left out.
 */
function failureWorkflowInput(state: WorkflowExecution, limit: number): { value: JsonObject } | { invalid: string } {
  const base: JsonObject = { ...state.input, workflowId: state.workflowId, reason: state.reasonForIncompletion ?? "", failureStatus: state.status };
  if (state.failedTaskId !== undefined) base["failureTaskId"] = state.failedTaskId;
  for (const failedWorkflow of [toWorkflowView(state, true), toWorkflowView(state, false)]) {
    const input = { ...base, failedWorkflow };
    if (oversize(input, limit) === undefined) return { value: input };
  }
  const bytes = oversize(base, limit);
  return bytes === undefined ? { value: base } : { invalid: oversizeReason("Its input", bytes, limit) };
}
