import type { TaskExecution, WorkflowExecution as Execution } from "../../engine/model";
import { maskedInputValues } from "../../engine/masked-reason";
import { terminateWorkflowRequest } from "../../engine/tasks/terminate-workflow";
import { onBehalfDenial } from "../../worker/auth/access-rules";
import { resultOf, type DispatchResult } from "./result";
import type { ExecutionHandle, ExecutionReach } from "./execution-reach";

/**
 * Performs a TERMINATE_WORKFLOW: first checks that whoever started its workflow may manage every workflow it names
 * ({@link onBehalfDenial}: one it may not fails the task for good, and none is terminated), then terminates each one
 * still running or paused, with its reason (and its failure workflow when asked). Completes with `terminatedWorkflows`,
 * the ids now TERMINATED (one found already terminated counts: a dispatch repeated after an eviction finds those it
 * terminated so), and `notTerminated`, why each other one was not (not found, or it had ended otherwise).
 */
export async function dispatchTerminateWorkflow(reach: ExecutionReach, terminator: Execution, task: TaskExecution): Promise<DispatchResult> {
  const result = resultOf(task);
  const request = terminateWorkflowRequest(task.inputData, maskedInputValues(task, terminator));
  if ("invalid" in request) return result("FAILED", {}, request.invalid);
  const notTerminated: Record<string, string> = {};
  const targets: Array<{ workflowId: string; handle: ExecutionHandle }> = [];
  for (const workflowId of request.workflowIds) {
    const handle = reach.execution(workflowId);
    const summary = await handle?.getNameAndStatus();
    if (handle === undefined || summary == null) {
      notTerminated[workflowId] = "not found";
      continue;
    }
    if (workflowId !== terminator.workflowId) {
      const denied = onBehalfDenial(terminator.startScopes, terminator.workflowName, summary.workflowName, "terminate", `execution ${workflowId}`);
      if (denied !== undefined) return result("FAILED_WITH_TERMINAL_ERROR", {}, `No workflow terminated: ${denied}`);
    }
    targets.push({ workflowId, handle });
  }
  // Its own workflow last: terminating it cancels this task, and the others must not be left out.
  targets.sort((a, b) => Number(a.workflowId === terminator.workflowId) - Number(b.workflowId === terminator.workflowId));
  const terminatedWorkflows: string[] = [];
  const reason = request.reason === "" ? `Terminated by task ${task.referenceTaskName} of workflow ${terminator.workflowId}` : request.reason;
  for (const { workflowId, handle } of targets) {
    const done = await handle.command({ type: "terminate", reason, triggerFailureWorkflow: request.triggerFailureWorkflow });
    if (done.ok || (await handle.getNameAndStatus())?.status === "TERMINATED") terminatedWorkflows.push(workflowId);
    else notTerminated[workflowId] = done.error.message;
  }
  return result("COMPLETED", { terminatedWorkflows, notTerminated });
}
