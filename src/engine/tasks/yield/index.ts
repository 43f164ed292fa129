import type { TaskTypeModule } from "../task-type";

/**
 * YIELD (Orkes'): no side effect; it waits, IN_PROGRESS, until it is resumed from outside: by a signal
 * (`POST /api/tasks/{workflowId}/{status}/signal[/sync]`, which takes the workflow's first WAIT or YIELD) or by any
 * task update naming it. The synchronous execute endpoint answers when the workflow reaches one.
 */
export const yieldTask: TaskTypeModule = {
  type: "YIELD",
  start(task, _definition, _execution, env) {
    return { task: { ...task, status: "IN_PROGRESS", startTime: env.now, updateTime: env.now, awaitingExternal: true }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
