import type { ActorResult, TaskUpdated, TaskUpdateFrom, WorkflowExecution } from "../workflow-execution";
import type { ExternalTaskStatus, JsonObject, WorkflowStatus } from "../../engine/model";
import { nameAndStatusOf, type ExecutionStub } from "../../worker/executions";

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

/**
 * Another execution's object as a handle: its stub, but for the name and status, read as {@link nameAndStatusOf}
 * reads them, so that an object still on the code before `getNameAndStatus` (a gradual deployment's previous version)
 * is acted on, not failed with workerd's "does not implement".
 */
export function stubHandle(stub: ExecutionStub): ExecutionHandle {
  return {
    getNameAndStatus: () => nameAndStatusOf(stub),
    updateTask: async (taskId, status, output, options) => await stub.updateTask(taskId, status, output, options),
    updateTaskByRef: async (taskRefName, status, output, from) => await stub.updateTaskByRef(taskRefName, status, output, from),
    command: async (command) => await stub.command(command),
  };
}
