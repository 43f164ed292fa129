import type { TaskType } from "../model";
import type { TaskTypeModule } from "./task-type";

/**
 * A task type with no side effect that waits, IN_PROGRESS and untimed, until it is ended from outside (a task update,
 * the UI's Complete, a signal for the types signals take), whose output becomes its own.
 */
export function awaitingOutsideTask(type: TaskType): TaskTypeModule {
  return {
    type,
    start(task, _definition, _execution, env) {
      return { task: { ...task, status: "IN_PROGRESS", startTime: env.now, updateTime: env.now, awaitingExternal: true }, dispatch: false };
    },
    attemptDeadline(_task, env) {
      return env.now;
    },
  };
}
