import type { JsonObject, TaskExecution, WorkflowDef, WorkflowExecution } from "../../engine/model";
import { START_WORKFLOW_PARAMETER, startWorkflowRequest } from "../../engine/tasks/start-workflow";
import { isJsonObjectValue } from "../../engine/tasks/workflow-start-fields";
import { runtimeDefinition } from "./runtime-definition";
import { startOnBehalfDenial } from "../../worker/auth/access-rules";
import { startExecution } from "../../worker/start-execution";
import { keptTestDomain } from "../../engine/test-domain";
import { resultOf, type DispatchResult } from "./result";

/**
 * Starts the workflow a START_WORKFLOW task describes, under the id the task chose in advance (its `workflowId`
 * output), on its own: no parent, so nothing waits for it or ends it with the starter. As Conductor's task, it takes
 * the starter's correlation id and domains unless the request gives its own, and completes with the id once the
 * workflow has started; a start refused (no such workflow, bad input) fails it. The starter's own starter must be
 * allowed to start that workflow (as for a SUB_WORKFLOW's child), or it fails for good.
 */
export async function dispatchStartWorkflow(env: Env, starter: WorkflowExecution, task: TaskExecution, input: TaskExecution["inputData"], written?: WorkflowDef): Promise<DispatchResult> {
  const result = resultOf(task);
  // A definition written in the starter's definition is not in the (resolved) input: it is put back, as written.
  const given = input[START_WORKFLOW_PARAMETER];
  const withWritten = written !== undefined && isJsonObjectValue(given) ? { ...input, [START_WORKFLOW_PARAMETER]: { ...given, workflowDef: written as unknown as JsonObject } } : input;
  const request = startWorkflowRequest(withWritten);
  if ("invalid" in request) return result("FAILED", {}, request.invalid);
  let definition: WorkflowDef | undefined;
  if (request.workflowDef !== undefined) {
    // Checked now as a registration would check it (one written here, accepted by the starter's registration, without
    // its lint rules); one an expression gave may not use secrets (see runtimeDefinition).
    const checked = await runtimeDefinition(env, request.workflowDef, `${START_WORKFLOW_PARAMETER}.workflowDef`, written !== undefined);
    if (!checked.ok) return result("FAILED_WITH_TERMINAL_ERROR", {}, `Workflow ${request.name} could not start: ${checked.reason}`);
    definition = checked.definition;
  }
  const denied = startOnBehalfDenial(starter.startScopes, starter.workflowName, request.name);
  if (denied !== undefined) return result("FAILED_WITH_TERMINAL_ERROR", {}, `Workflow ${request.name} could not start: ${denied}`);
  const taskToDomain = request.taskToDomain ?? starter.taskToDomain;
  // Started by a test run with its domains, it runs its SIMPLE tasks in the run's random domain: it delists those queues too.
  const testRunDomain = keptTestDomain(starter, taskToDomain);
  const started = await startExecution(env, {
    name: request.name,
    version: request.version,
    ...(definition === undefined ? {} : { definition }),
    input: request.input,
    correlationId: request.correlationId ?? starter.correlationId,
    taskToDomain,
    baseUrl: starter.baseUrl ?? "",
    workflowId: String(task.outputData["workflowId"]),
    startedByTask: `${starter.workflowId}/${task.taskId}`,
    // It can do no more than the starter's own starter, and is shown as theirs.
    startScopes: starter.startScopes,
    ...(starter.createdBy === undefined ? {} : { createdBy: starter.createdBy }),
    ...(testRunDomain === undefined ? {} : { testRunDomain }),
    ...(request.priority === undefined ? {} : { priority: request.priority }),
    // A repeated dispatch finds its own start by the task's chosen id; a key makes other starts with it find it too.
    ...(request.idempotencyKey === undefined ? {} : { idempotencyKey: request.idempotencyKey, idempotencyStrategy: request.idempotencyStrategy ?? "RETURN_EXISTING" }),
  });
  if (!started.ok) return result("FAILED", {}, `Workflow ${request.name} could not start: ${started.message}`);
  return result("COMPLETED", { workflowId: started.workflowId });
}
