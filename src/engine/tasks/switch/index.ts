import type { DecideEnv } from "../../config";
import type { JsonValue, TaskExecution, WorkflowTaskDef } from "../../model";
import { evaluateWith, type ScriptOutcome } from "../../scripts";
import type { TaskTypeModule } from "../task-type";

/**
 * The case a SWITCH's definition and resolved input choose, as Conductor's evaluators compute it: value-param reads
 * the input parameter `expression` names, javascript (and graaljs) runs `expression` with `$` bound to the input.
 */
function evaluateCase(task: TaskExecution, definition: WorkflowTaskDef, env: DecideEnv): ScriptOutcome {
  return evaluateWith(definition.evaluatorType ?? "javascript", definition.expression ?? "", task.inputData, env.scripts);
}

/** Conductor's case value: `String.valueOf` of the result (JSON for a list or object, which only a default case takes). */
function caseValue(result: JsonValue): string {
  return typeof result === "string" ? result : JSON.stringify(result);
}

/**
 * SWITCH: completes as it starts, with `evaluationResult: [case]` in its output (as Conductor's); the decider then
 * runs the branch of that case (see `nextPlanIndex`). Nothing is dispatched.
 */
export const switchTask: TaskTypeModule = {
  type: "SWITCH",
  start(task, definition, _execution, env) {
    const ended = { startTime: env.now, endTime: env.now, updateTime: env.now };
    const outcome = evaluateCase(task, definition, env);
    if (outcome.ok) return { task: { ...task, ...ended, status: "COMPLETED", outputData: { evaluationResult: [caseValue(outcome.value)] } }, dispatch: false };
    // Conductor fails the SWITCH too: no case can be chosen, and running the default would hide the error.
    const reason = `The SWITCH expression could not be evaluated: ${outcome.error}`;
    return { task: { ...task, ...ended, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: reason }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
