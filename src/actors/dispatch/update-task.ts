import type { TaskUpdateFrom } from "../workflow-execution";
import { deliveryKey, type TaskExecution, type WorkflowExecution as Execution } from "../../engine/model";
import { oversize } from "../../engine/limits";
import { updateTaskRequest } from "../../engine/tasks/update-task";
import { serviceConfig } from "../../worker/config";
import { onBehalfDenial } from "../../worker/auth/access-rules";
import { canonicalWorkflowId } from "../../worker/executions";
import { lookUpTask } from "../../worker/task-lookup";
import type { ExecutionReach } from "./execution-reach";
import { resultOf, type DispatchResult } from "./result";

/**
 * Performs an UPDATE_TASK: finds the task it names (by id: its own execution's, else through the execution index; by
 * reference name: in the workflow it names, its own by default), checks that whoever started its workflow may manage
 * that task's workflow ({@link onBehalfDenial}; a task of its own workflow needs nothing more), and updates it as the
 * completion API would, replacing its output unless `mergeOutput` says otherwise. The same update sent again (a
 * dispatch repeated after an eviction) finds it applied. Completes with where the update went; a task not found, not
 * pending or in a workflow not running fails it (retryable: the task may not be waiting yet); one it may not update,
 * or an update the task cannot take (an output too large), fails it for good.
 */
export async function dispatchUpdateTask(reach: ExecutionReach, updater: Execution, task: TaskExecution): Promise<DispatchResult> {
  const result = resultOf(task);
  const request = updateTaskRequest(task.inputData, updater.workflowId);
  if ("invalid" in request) return result("FAILED", {}, request.invalid);
  const target = request.target;
  let workflowId: string;
  if ("taskId" in target) {
    const own = updater.tasks.some((candidate) => candidate.taskId === target.taskId);
    const found = own ? undefined : await lookUpTask(reach.env, target.taskId);
    if (!own && found === undefined) return result("FAILED", {}, `No workflow holds task ${target.taskId} (or its execution is not searchable yet)`);
    workflowId = found?.workflowId ?? updater.workflowId;
  } else {
    workflowId = canonicalWorkflowId(target.workflowId);
  }
  const holder = reach.execution(workflowId);
  const summary = await holder?.getNameAndStatus();
  if (holder === undefined || summary == null) return result("FAILED", {}, `Workflow ${workflowId} not found`);
  if (workflowId !== updater.workflowId) {
    // Named as the input named it: a task's execution, found by the task's id, is not the caller's to learn.
    const denied =
      "taskId" in target
        ? onBehalfDenial(updater.startScopes, updater.workflowName, summary.workflowName, "update", `task ${target.taskId}`)
        : onBehalfDenial(updater.startScopes, updater.workflowName, summary.workflowName, "update the tasks of", `execution ${workflowId}`);
    if (denied !== undefined) return result("FAILED_WITH_TERMINAL_ERROR", {}, `Task not updated: ${denied}`);
  }
  // By run, not by id: a rerun of this task (which keeps its id) updates anew, not finding its first run's update applied.
  const from: TaskUpdateFrom = { byTask: `${updater.workflowId}/${deliveryKey(task)}`, replaceOutput: !request.merge };
  const updated = "taskId" in target ? await holder.updateTask(target.taskId, request.status, request.output, { from }) : await holder.updateTaskByRef(target.taskRefName, request.status, request.output, from);
  if (!updated.ok) {
    const reason = `Task not updated: ${updated.error.message}`;
    return result(updated.error.kind === "INVALID" || updated.error.kind === "FORBIDDEN" ? "FAILED_WITH_TERMINAL_ERROR" : "FAILED", {}, reason);
  }
  // Orkes' output is `updatedTaskId` and, when the input gave one, `taskOutput`; `taskId` is kept for this service's users.
  // An echo too large to store beside the rest is left out: the update is done, and must not read as failed.
  const output = { workflowId, taskId: updated.value.taskId, updatedTaskId: updated.value.taskId, taskStatus: request.status };
  const echoed = { ...output, taskOutput: request.output };
  const fits = oversize(echoed, serviceConfig(reach.env).engine.maxPayloadBytes) === undefined;
  return result("COMPLETED", task.inputData["taskOutput"] === undefined || !fits ? output : echoed);
}
