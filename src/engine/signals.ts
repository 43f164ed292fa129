import type { TaskExecution, WorkflowExecution } from "./model";

/**
 * The task a signal resolves in `state` (Conductor's `POST /api/tasks/{workflowId}/{status}/signal`): its first WAIT
 * (Conductor OSS's) or YIELD (Orkes') still IN_PROGRESS. When there is none, the signal looks in the children of
 * {@link signalledChildIds}, in order. HUMAN, webhook and worker tasks are never signalled (Conductor OSS's rule): they
 * are completed by reference name.
 */
export function signalledWait(state: WorkflowExecution): TaskExecution | undefined {
  return state.tasks.find((task) => (task.taskType === "WAIT" || task.taskType === "YIELD") && task.status === "IN_PROGRESS");
}

/** Where a signal looks when `state` has no WAIT waiting: the children its running SUB_WORKFLOW tasks run, in task order. */
export function signalledChildIds(state: WorkflowExecution): string[] {
  return state.tasks.flatMap((task) => (task.taskType === "SUB_WORKFLOW" && task.status === "IN_PROGRESS" && task.subWorkflowId !== undefined ? [task.subWorkflowId] : []));
}
