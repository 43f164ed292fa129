import type { ActorResult, TaskUpdated, TaskUpdateFrom, WorkflowExecution } from "../workflow-execution";
import type { ExternalTaskStatus, JsonObject, WorkflowStatus } from "../../engine/model";

/** What an UPDATE_TASK or a TERMINATE_WORKFLOW needs of an execution it acts on: its own object, or another's stub. */
export interface ExecutionHandle {
  getNameAndStatus(): Promise<{ workflowName: string; status: WorkflowStatus } | null>;
  updateTask(taskId: string, status: ExternalTaskStatus, output: JsonObject, options: { from: TaskUpdateFrom }): Promise<ActorResult<TaskUpdated>>;
  updateTaskByRef(taskRefName: string, status: ExternalTaskStatus, output: JsonObject, from: TaskUpdateFrom): Promise<ActorResult<TaskUpdated>>;
  command: WorkflowExecution["command"];
}

/** How a dispatch reaches executions: by id (its own execution's object for its own id). */
export interface ExecutionReach {
  env: Env;
  /** The execution of `workflowId`; undefined when no execution can have that id. */
  execution(workflowId: string): ExecutionHandle | undefined;
}
