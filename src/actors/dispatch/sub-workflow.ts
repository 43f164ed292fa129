import type { ExecutionEvent } from "../../engine/decider";
import type { JsonObject, TaskExecution, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../engine/model";
import { childStartRequest, shownChildVersion, subWorkflowFailure, type ChildStartErrorCode } from "../../engine/tasks/sub-workflow";
import { childTestPlan } from "../../engine/test-run";
import { keptTestDomain } from "../../engine/test-domain";
import { startOnBehalfDenial } from "../../worker/auth/access-rules";
import { startExecution, type StartRefusalCode } from "../../worker/start-execution";
import { isJsonObjectValue } from "../../engine/tasks/workflow-start-fields";
import { runtimeDefinition } from "./runtime-definition";

type DispatchResult = Extract<ExecutionEvent, { type: "dispatchResult" }>;

/** The SUB_WORKFLOW_ERROR code of a refused child start. */
function childStartErrorCode(code: StartRefusalCode): ChildStartErrorCode {
  // EXECUTION_REMOVED is an answer of execute (a start with waitMs) only, which a child start is not.
  if (code === "EXECUTION_REMOVED") return "ALREADY_STARTED";
  // The child's input is the parent's to choose: with the child definition's defaults it is too large, or does not
  // match the child's input schema.
  if (code === "INPUT_TOO_LARGE" || code === "INPUT_INVALID") return "INVALID_PARAMETERS";
  // The child's definition with its task definitions is over what an execution holds: no start of it can succeed.
  if (code === "DEFINITION_TOO_LARGE") return "INVALID_PARAMETERS";
  return code;
}

/**
 * Starts the child of a SUB_WORKFLOW task under the id the task chose in advance, if the parent's
 * starter may start it (else the task fails with a terminal error and nothing starts): the registered definition
 * its input names, or the task's `inline` child definition. Start errors
 * (no such workflow or version, bad parameters, nesting too deep, idempotency key taken with FAIL)
 * fail the task with the spec's SUB_WORKFLOW_ERROR shape. With `waitForCompletion` the task then
 * waits for the child's notice; without it, it completes at once. `definition` (the task's) tells which input keys are
 * its own; a child started without a version shown in the input has the version it started with added to it.
 */
export async function dispatchSubWorkflow(env: Env, parent: WorkflowExecution, task: TaskExecution, input: JsonObject, maxDepth: number, definition: WorkflowTaskDef | undefined, inline?: WorkflowDef): Promise<DispatchResult> {
  const plannedId = task.subWorkflowId!;
  const result = (status: DispatchResult["status"], output: JsonObject, extra: Partial<DispatchResult> = {}): DispatchResult => ({
    type: "dispatchResult",
    taskId: task.taskId,
    attempt: task.attempt,
    status,
    output,
    ...extra,
  });
  const fail = (code: ChildStartErrorCode, message: string): DispatchResult => {
    const failure = subWorkflowFailure(null, code, `Sub workflow could not start: ${message}`, message);
    return result("FAILED", failure.output, { reason: failure.reason });
  };
  const request = childStartRequest(input, definition);
  if ("invalid" in request) return fail("INVALID_PARAMETERS", request.invalid);
  // A child an expression gave as the parent ran (a planner task's output, say): checked now, as a registration would.
  const given = input["subWorkflowParam"];
  const expressed = inline === undefined && isJsonObjectValue(given) && isJsonObjectValue(given["workflowDefinition"]) ? given["workflowDefinition"] : undefined;
  if (expressed !== undefined) {
    const checked = await runtimeDefinition(env, expressed, "subWorkflowParam.workflowDefinition");
    if (!checked.ok) return fail("INVALID_PARAMETERS", checked.reason);
    inline = checked.definition;
    // Conductor takes the definition's name, whatever subWorkflowParam.name says.
    request.name = inline.name;
  }
  const depth = (parent.depth ?? 0) + 1;
  if (depth > maxDepth) return fail("NESTING_TOO_DEEP", `sub workflows may nest at most ${maxDepth} levels (MAX_SUBWORKFLOW_DEPTH); ${parent.workflowName} would start level ${depth}`);
  // A definition must not start, and so read, what its starter could not start directly. Retrying as the
  // same caller fails the same way: terminal.
  const message = startOnBehalfDenial(parent.startScopes, parent.workflowName, request.name);
  if (message !== undefined) {
    const failure = subWorkflowFailure(null, "PERMISSION_DENIED", `Sub workflow could not start: ${message}`, message);
    return result("FAILED_WITH_TERMINAL_ERROR", failure.output, { reason: failure.reason });
  }

  // As Conductor's SubWorkflow task: the parent's domains, unless subWorkflowParam gives the child its own.
  const taskToDomain = request.taskToDomain ?? parent.taskToDomain;
  // The child of an execution a test run started (a test run's own child is one too: its plan has the domain) keeps it.
  const testRunDomain = parent.test === undefined ? keptTestDomain(parent, taskToDomain) : undefined;
  const started = await startExecution(env, {
    name: request.name,
    version: request.version,
    // An inline child runs as its parent's definition holds it (its name checked to be `name` at registration).
    ...(inline === undefined ? {} : { definition: inline }),
    input: request.input,
    correlationId: parent.correlationId,
    priority: request.priority ?? parent.priority,
    taskToDomain,
    // Orkes: a strategy without a key of its own takes the parent's key (keys are per workflow name: no clash with it).
    idempotencyKey: request.idempotencyKey ?? (request.idempotencyStrategy === undefined ? undefined : parent.idempotencyKey),
    idempotencyStrategy: request.idempotencyStrategy,
    parentWorkflowId: parent.workflowId,
    parentWorkflowTaskId: task.taskId,
    depth,
    baseUrl: parent.baseUrl ?? "",
    workflowId: plannedId,
    // The child can do no more than its parent's starter, and is shown as theirs.
    startScopes: parent.startScopes,
    ...(parent.createdBy === undefined ? {} : { createdBy: parent.createdBy }),
    // A test run's child is one too, answered by the plan its parent's test request gave it.
    test: childTestPlan(parent, task, taskToDomain),
    ...(testRunDomain === undefined ? {} : { testRunDomain }),
  });
  if (!started.ok) return fail(childStartErrorCode(started.code), started.message);
  const output: JsonObject = { subWorkflowId: started.workflowId };
  const shownInput = shownChildVersion(input, definition, started.version);
  const child = { subWorkflowId: started.workflowId, ...(shownInput === undefined ? {} : { shownInput }) };
  if (!request.waitForCompletion) return result("COMPLETED", output, child);
  return result("IN_PROGRESS", output, { ...child, awaitingExternal: true });
}
