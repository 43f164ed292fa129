/**
 * UPDATE_TASK (Orkes'): completes, fails or updates another task, as the completion API would: one of a workflow's by
 * its reference name (`workflowId`, this workflow's by default, and `taskRefName`), or any by its id (`taskId`), to
 * `taskStatus`, with `taskOutput` replacing its output (or added to it, with `mergeOutput`). Typically a WAIT, HUMAN or
 * WAIT_FOR_WEBHOOK task another workflow, or another branch of this one, waits in. The actor performs the update
 * (`actors/dispatch/update-task.ts`); the task completes once it is applied.
 */
import { dispatchedTaskType } from "../task-type";

export { updateTaskRequest, type UpdateTaskRequest, type UpdateTarget } from "./request";

/** Its attempt: an index read (a task found by id) and two RPCs to the execution holding the task. */
export const updateTaskTask = dispatchedTaskType("UPDATE_TASK", 2);
