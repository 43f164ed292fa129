import { correlationIdProblem } from "../../limits";
import type { TaskExecution } from "../../model";
import { failedAtStart, type TaskTypeModule } from "../task-type";

/**
 * SET_CORRELATION_ID (Conductor's): sets the workflow's correlation id to its input's `correlationId` and completes at
 * once, in the same decision, with that id as its output (`{"correlationId": …}`); what the workflow shows, its search
 * row and the tasks scheduled after it carry the new id. An id that is no non-empty string fails it for good with
 * Conductor's reason, and so does one a start would refuse (longer than it takes, or holding a lone surrogate).
 */
export const setCorrelationIdTask: TaskTypeModule = {
  type: "SET_CORRELATION_ID",
  start(task, _definition, _execution, env) {
    const correlationId = task.inputData["correlationId"];
    if (typeof correlationId !== "string" || correlationId === "") return { task: failedAtStart(task, "A non-empty String value must be provided for 'correlationId'", env.now), dispatch: false };
    const refused = correlationIdProblem("'correlationId'", correlationId);
    if (refused !== undefined) return { task: failedAtStart(task, refused, env.now), dispatch: false };
    const completed: TaskExecution = { ...task, status: "COMPLETED", outputData: { correlationId }, startTime: env.now, endTime: env.now, updateTime: env.now };
    return { task: completed, dispatch: false, correlationId };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
