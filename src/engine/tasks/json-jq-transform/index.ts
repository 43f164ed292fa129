import { overdeepReason, oversize, oversizeReason } from "../../limits";
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
    // The filter's values come from outside the engine's control, like a response body: too deep, and walking them
    // later (a template reading them, the stored copy) would overflow the stack.
    const deep = overdeepReason("The JSON_JQ_TRANSFORM task's output", outputData);
    if (deep !== undefined) return { task: failed(deep), dispatch: false };
    const bytes = oversize(outputData, env.config.maxPayloadBytes);
    if (bytes !== undefined) return { task: failed(oversizeReason("The JSON_JQ_TRANSFORM task's output", bytes, env.config.maxPayloadBytes)), dispatch: false };
    return { task: { ...ended, status: "COMPLETED", outputData }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
