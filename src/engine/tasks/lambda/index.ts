import { unstorableReason } from "../../limits";
import type { TaskExecution } from "../../model";
import type { TaskTypeModule } from "../task-type";

/**
 * The script LAMBDA runs for `scriptExpression`: Conductor's LAMBDA takes a function body (`if ($.a) { return 1 }`),
 * so it runs as the body of a function called at once, its return value the result.
 */
export function lambdaScript(scriptExpression: string): string {
  return `(function () {\n${scriptExpression}\n})()`;
}

/**
 * LAMBDA (Conductor's older INLINE, still in older definitions): runs `inputParameters.scriptExpression`, JavaScript
 * function body with `$` bound to the task's resolved input, in the same decision, and completes with its return value
 * as `output.result`. A script that throws or runs past its budget fails the task (retried as its retry settings say).
 */
export const lambdaTask: TaskTypeModule = {
  type: "LAMBDA",
  start(task, _definition, _execution, env) {
    const ended = { ...task, startTime: env.now, endTime: env.now, updateTime: env.now };
    const failed = (reason: string): TaskExecution => ({ ...ended, status: "FAILED", reasonForIncompletion: reason, outputData: { error: reason } });
    const script = task.inputData["scriptExpression"];
    if (typeof script !== "string" || script.trim() === "") return { task: failed("LAMBDA inputParameters.scriptExpression must be a non-empty string"), dispatch: false };
    const outcome = env.scripts.run(lambdaScript(script), task.inputData);
    if (!outcome.ok) return { task: failed(`The LAMBDA script failed: ${outcome.error}`), dispatch: false };
    const outputData = { result: outcome.value };
    const unstorable = unstorableReason("The LAMBDA task's output", outputData, env.config.maxPayloadBytes);
    if (unstorable !== undefined) return { task: failed(unstorable), dispatch: false };
    return { task: { ...ended, status: "COMPLETED", outputData }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
