import { isOneOf } from "../../definition/checks";
import { unstorableReason } from "../../limits";
import type { DecideEnv } from "../../config";
import { evaluateWith, type ScriptOutcome } from "../../scripts";
import type { TaskExecution } from "../../model";
import type { TaskStart, TaskTypeModule } from "../task-type";

/** INLINE's evaluator types, as Conductor's: `value-param` reads an input parameter, the others run JavaScript. */
export const INLINE_EVALUATOR_TYPES = ["javascript", "graaljs", "value-param"] as const;

/** True for one of {@link INLINE_EVALUATOR_TYPES}. */
export const isInlineEvaluatorType = isOneOf(INLINE_EVALUATOR_TYPES);

/**
 * An INLINE's evaluatorType as it runs: `javascript` when its input has none (absent or null), as Conductor's Inline
 * reads it ("optional and defaults to javascript for backward compatibility"); anything else as given.
 */
export function inlineEvaluatorType(parameters: Readonly<Record<string, unknown>>): unknown {
  return parameters["evaluatorType"] ?? "javascript";
}

/**
 * INLINE (Conductor's): computes a value in the engine, in the same decision, and completes with it as
 * `output.result`. `inputParameters.evaluatorType` says how: `javascript` (the default) or `graaljs` runs
 * `inputParameters.expression` as a script with `$` bound to the task's resolved input, and takes its completion
 * value; `value-param` takes the input parameter `expression` names. A script that throws or does not parse fails the
 * task for good (FAILED_WITH_TERMINAL_ERROR, as Conductor's Inline ends a TerminateWorkflowException from its evaluator:
 * a retry would run the same script on the same input); one stopped by its budget fails it (FAILED, retried as its
 * retry settings say), as Conductor's evaluator timeout does. The error is the reason and `output.error`.
 */
/**
 * How a task that computes its result in the engine (INLINE, LAMBDA: `type`) ends, in the same decision: COMPLETED with
 * the value as `output.result`, or FAILED with the reason as `output.error`, saying the script failed (`ranScript`) or,
 * for a task that could not run it, what was wrong.
 */
export function computed(task: TaskExecution, type: string, outcome: ScriptOutcome, env: DecideEnv, ranScript = true): TaskStart {
  const ended = { ...task, startTime: env.now, endTime: env.now, updateTime: env.now };
  // What the script wrote to its console goes to the task's log, whatever its end (Conductor's ConsoleBridge).
  const logs = outcome.logs !== undefined && outcome.logs.length > 0 ? { logs: outcome.logs } : {};
  const failed = (reason: string): TaskStart => ({ task: { ...ended, status: "FAILED", reasonForIncompletion: reason, outputData: { error: reason } }, dispatch: false, ...logs });
  if (!outcome.ok) return failed(ranScript ? `The ${type} script failed: ${outcome.error}` : `${type} ${outcome.error}`);
  const outputData = { result: outcome.value };
  // A script's value comes from outside the engine's control, like a response body.
  const unstorable = unstorableReason(`The ${type} task's output`, outputData, env.config.maxPayloadBytes);
  if (unstorable !== undefined) return failed(unstorable);
  return { task: { ...ended, status: "COMPLETED", outputData }, dispatch: false, ...logs };
}

/**
 * An INLINE whose expression or evaluator resolved to nothing it can run: FAILED_WITH_TERMINAL_ERROR, as Conductor's
 * Inline ends it (a retry would resolve the same input again).
 */
function misconfigured(task: TaskExecution, error: string, env: DecideEnv): TaskStart {
  return terminal(computed(task, "INLINE", { ok: false, error }, env, false));
}

/** A failed start made FAILED_WITH_TERMINAL_ERROR: no retry. */
function terminal(start: TaskStart): TaskStart {
  return start.task.status === "FAILED" ? { ...start, task: { ...start.task, status: "FAILED_WITH_TERMINAL_ERROR" } } : start;
}

/** The INLINE task type: evaluates its expression when it starts and ends in that same decision, with its result or why it failed. */
export const inlineTask: TaskTypeModule = {
  type: "INLINE",
  start(task, _definition, _execution, env) {
    const evaluatorType = inlineEvaluatorType(task.inputData);
    const expression = task.inputData["expression"];
    if (typeof expression !== "string" || expression.trim() === "") return misconfigured(task, "inputParameters.expression must be a non-empty string", env);
    if (!isInlineEvaluatorType(evaluatorType)) return misconfigured(task, `inputParameters.evaluatorType must be one of ${INLINE_EVALUATOR_TYPES.join(", ")}`, env);
    // value-param never fails: only a script can. Conductor's Inline (conductor-oss/conductor core/.../tasks/Inline.java)
    // fails for good on its evaluator's TerminateWorkflowException, which a script's own error is there, and plainly
    // on its timeout, which a stop by the budget stands for here. A result too large to store stays FAILED.
    const outcome = evaluateWith(evaluatorType, expression, task.inputData, env.scripts);
    const start = computed(task, "INLINE", outcome, env);
    return outcome.ok || outcome.stopped === true ? start : terminal(start);
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
