/**
 * TERMINATE_WORKFLOW (Orkes'): terminates other workflows by their ids (`workflowId`, a list), with
 * `terminationReason`, starting their failure workflows when `triggerFailureWorkflow` says so (in `inputParameters`, or
 * beside them as Orkes' first examples place it). The actor performs the terminations
 * (`actors/dispatch/terminate-workflow.ts`); the task completes with the ids now terminated.
 */
import { startDispatched, type TaskTypeModule } from "../task-type";

export { MAX_TERMINATED_WORKFLOWS, terminateWorkflowRequest, type TerminateWorkflowRequest } from "./request";

/** The TERMINATE_WORKFLOW task type: dispatched to the actor, which terminates the workflows it names. */
export const terminateWorkflowTask: TaskTypeModule = {
  type: "TERMINATE_WORKFLOW",
  inputTemplate(definition) {
    const input = definition.inputParameters ?? {};
    // The task-level placement, unless the input gives its own.
    return definition.triggerFailureWorkflow === undefined ? input : { triggerFailureWorkflow: definition.triggerFailureWorkflow, ...input };
  },
  start(task, _definition, _execution, env) {
    return startDispatched(this, task, env);
  },
  attemptDeadline(_task, env) {
    // Two calls to each execution it terminates, one after the other at worst.
    return env.now + 4 * env.config.dispatchGraceMs;
  },
};
