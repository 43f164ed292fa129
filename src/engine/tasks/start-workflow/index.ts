/**
 * START_WORKFLOW (Conductor's): starts another workflow, on its own (not a child: nothing waits for it, and it does
 * not end with this one), and completes with its id (`workflowId`), as `inputParameters.startWorkflow` describes it.
 */
import type { JsonObject, WorkflowDef, WorkflowTaskDef } from "../../model";
import { startDispatched, type TaskTypeModule } from "../task-type";
import { isJsonObjectValue } from "../workflow-start-fields";
import { START_WORKFLOW_PARAMETER } from "./request";

export { START_WORKFLOW_PARAMETER, startWorkflowRequest, type StartWorkflowRequest } from "./request";

/**
 * The definition a START_WORKFLOW's `startWorkflow.workflowDef` gives as written in its workflow's definition (checked
 * when that was registered), undefined when it gives none or an expression: that one is read from the resolved input.
 */
export function inlineStartedDefinition(definition: WorkflowTaskDef | undefined): WorkflowDef | undefined {
  const request = definition?.inputParameters?.[START_WORKFLOW_PARAMETER];
  const inline = isJsonObjectValue(request) ? request["workflowDef"] : undefined;
  return isJsonObjectValue(inline) ? (inline as unknown as WorkflowDef) : undefined;
}

/** The START_WORKFLOW task type: dispatched to the actor, which starts the workflow its input describes. */
export const startWorkflowTask: TaskTypeModule = {
  type: "START_WORKFLOW",
  inputTemplate(definition) {
    // A definition written in place is started as written (see `inlineStartedDefinition`): its expressions are its own,
    // never resolved by the starter. One an expression gives is resolved with the input.
    const input: JsonObject = definition.inputParameters ?? {};
    const request = input[START_WORKFLOW_PARAMETER];
    if (!isJsonObjectValue(request) || !isJsonObjectValue(request["workflowDef"])) return input;
    const { workflowDef: _inline, ...rest } = request;
    return { ...input, [START_WORKFLOW_PARAMETER]: rest };
  },
  start(task, _definition, _execution, env) {
    // The started workflow's id is chosen here and stored before the dispatch: a dispatch repeated after an eviction
    // finds that workflow started instead of starting a second one.
    const planned = task.outputData["workflowId"];
    const workflowId = typeof planned === "string" ? planned : env.newId();
    return startDispatched(this, task, env, { workflowId });
  },
  attemptDeadline(_task, env) {
    // One start: an RPC plus a D1 read, as a SUB_WORKFLOW's.
    return env.now + 2 * env.config.dispatchGraceMs;
  },
};
