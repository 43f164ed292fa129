import { isOneOf } from "../../definition/checks";
import { unstorableReason } from "../../limits";
import { evaluateWith } from "../../scripts";
import type { TaskExecution } from "../../model";
import type { TaskTypeModule } from "../task-type";

/** INLINE's evaluator types, as Conductor's: `value-param` reads an input parameter, the others run JavaScript. */
export const INLINE_EVALUATOR_TYPES = ["javascript", "graaljs", "value-param"] as const;

/** True for one of {@link INLINE_EVALUATOR_TYPES}. */
export const isInlineEvaluatorType = isOneOf(INLINE_EVALUATOR_TYPES);

/**
 * INLINE (Conductor's): computes a value in the engine, in the same decision, and completes with it as
 * `output.result`. `inputParameters.evaluatorType` says how: `javascript` (or `graaljs`) runs
 * `inputParameters.expression` as a script with `$` bound to the task's resolved input, and takes its completion
 * value; `value-param` takes the input parameter `expression` names. A script that throws, does not parse or runs
 * past its budget fails the task (retried as its retry settings say) with the error as reason and `output.error`.
 */
export const inlineTask: TaskTypeModule = {
  type: "INLINE",
  start(task, _definition, _execution, env) {
    const ended = { ...task, startTime: env.now, endTime: env.now, updateTime: env.now };
    const failed = (reason: string): TaskExecution => ({ ...ended, status: "FAILED", reasonForIncompletion: reason, outputData: { error: reason } });
    const evaluatorType = task.inputData["evaluatorType"];
    const expression = task.inputData["expression"];
    if (typeof expression !== "string" || expression.trim() === "") return { task: failed("INLINE inputParameters.expression must be a non-empty string"), dispatch: false };
    if (!isInlineEvaluatorType(evaluatorType)) {
      return { task: failed(`INLINE inputParameters.evaluatorType must be one of ${INLINE_EVALUATOR_TYPES.join(", ")}`), dispatch: false };
    }
    // value-param never fails: only a script can.
    const outcome = evaluateWith(evaluatorType, expression, task.inputData, env.scripts);
    if (!outcome.ok) return { task: failed(`The INLINE script failed: ${outcome.error}`), dispatch: false };
    const outputData = { result: outcome.value };
    // A script's value comes from outside the engine's control, like a response body.
    const unstorable = unstorableReason("The INLINE task's output", outputData, env.config.maxPayloadBytes);
    if (unstorable !== undefined) return { task: failed(unstorable), dispatch: false };
    return { task: { ...ended, status: "COMPLETED", outputData }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
