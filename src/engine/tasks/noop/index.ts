import type { TaskTypeModule } from "../task-type";

/** NOOP (Conductor's): does nothing, and completes at once (a placeholder, an empty branch made explicit). */
export const noopTask: TaskTypeModule = {
  type: "NOOP",
  start(task, _definition, _execution, env) {
    return { task: { ...task, status: "COMPLETED", startTime: env.now, endTime: env.now, updateTime: env.now, outputData: {} }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
