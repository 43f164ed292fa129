/**
 * START_WORKFLOW (Conductor's): starts another workflow, on its own (not a child: nothing waits for it, and it does
 * not end with this one), and completes with its id (`workflowId`), as `inputParameters.startWorkflow` describes it.
 */
import { startDispatched, type TaskTypeModule } from "../task-type";

export { START_WORKFLOW_PARAMETER, startWorkflowRequest, type StartWorkflowRequest } from "./request";

export const startWorkflowTask: TaskTypeModule = {
  type: "START_WORKFLOW",
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
