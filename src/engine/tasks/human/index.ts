import type { TaskTypeModule } from "../task-type";
import { escalated, startedProgress } from "./progress";
import { humanSettingsOf } from "./settings";

/**
 * HUMAN: no side effect; it waits, IN_PROGRESS, for a person's result. Orkes' settings in its input
 * (`__humanTaskDefinition`) say whom it is assigned to, along an escalation chain whose steps each last so many minutes
 * (its `timeoutAt` is when the step in force runs out), and which form it is filled in with; people claim it and fill
 * it in through the human task API (see `progress.ts`), and it can still be completed from outside as Conductor OSS's
 * (`POST /api/tasks`, `/api/tasks/{workflowId}/{ref}/{status}`, the UI's Complete).
 */
export const humanTask: TaskTypeModule = {
  type: "HUMAN",
  start(task, _definition, _execution, env) {
    const settings = humanSettingsOf(task.inputData);
    if ("problem" in settings) {
      // Nobody could ever be assigned as asked: fail now rather than leave it with no one to find it.
      const reason = `HUMAN task settings cannot be used: ${settings.problem}`;
      return { task: { ...task, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: reason, startTime: env.now, endTime: env.now, updateTime: env.now }, dispatch: false };
    }
    return { task: { ...task, status: "IN_PROGRESS", startTime: env.now, updateTime: env.now, awaitingExternal: true, ...startedProgress(settings, env.now) }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
  onTimeout(task, env) {
    return escalated(task, env.now);
  },
};
