import { unstorableReason } from "../../limits";
import { JQ_QUERY_FIELD } from "../../jq";
import type { TaskExecution } from "../../model";
import type { TaskTypeModule } from "../task-type";

/**
 * JSON_JQ_TRANSFORM (Conductor's): runs the jq filter `inputParameters.queryExpression` over the task's whole resolved
 * input (the filter included, as Conductor passes it), in the engine and in the same decision, and completes with the
 * first value it produced as `output.result` (null when none) and all of them as `output.resultList`. A filter that does
 * not compile, raises an error or runs past its budget fails the task (retried as its retry settings say) with the
 * error as reason and `output.error`.
 */
export const jsonJqTransformTask: TaskTypeModule = {
  type: "JSON_JQ_TRANSFORM",
  start(task, _definition, _execution, env) {
    const ended = { ...task, startTime: env.now, endTime: env.now, updateTime: env.now };
    const failed = (reason: string): TaskExecution => ({ ...ended, status: "FAILED", reasonForIncompletion: reason, outputData: { error: reason } });
    const filter = task.inputData[JQ_QUERY_FIELD];
    // Registration refuses a missing filter, but a `${...}` one may resolve to anything.
    if (typeof filter !== "string" || filter.trim() === "") return { task: failed(`Missing '${JQ_QUERY_FIELD}' in input parameters (a non-empty jq filter)`), dispatch: false };
    const outcome = env.jq.run(filter, task.inputData);
    if (!outcome.ok) return { task: failed(outcome.error), dispatch: false };
    const outputData = { result: outcome.values[0] ?? null, resultList: outcome.values };
    // The filter's values come from outside the engine's control, like a response body.
    const unstorable = unstorableReason("The JSON_JQ_TRANSFORM task's output", outputData, env.config.maxPayloadBytes);
    if (unstorable !== undefined) return { task: failed(unstorable), dispatch: false };
    return { task: { ...ended, status: "COMPLETED", outputData }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
