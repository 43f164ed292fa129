import { lambdaScript } from "../../scripts";
import { computed } from "../inline";
import type { TaskTypeModule } from "../task-type";

/**
 * LAMBDA (Conductor's older INLINE, still in older definitions): runs `inputParameters.scriptExpression`, JavaScript
 * function body with `$` bound to the task's resolved input, in the same decision, and completes with its return value
 * as `output.result`. A script that throws or runs past its budget fails the task (retried as its retry settings say).
 */
export const lambdaTask: TaskTypeModule = {
  type: "LAMBDA",
  start(task, _definition, _execution, env) {
    const script = task.inputData["scriptExpression"];
    if (typeof script !== "string" || script.trim() === "") return computed(task, "LAMBDA", { ok: false, error: "inputParameters.scriptExpression must be a non-empty string" }, env, false);
    return computed(task, "LAMBDA", env.scripts.run(lambdaScript(script), task.inputData), env);
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
