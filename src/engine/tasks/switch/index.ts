import type { JsonValue, TaskExecution, WorkflowTaskDef } from "../../model";
import type { TaskTypeModule } from "../task-type";
import { evaluateSwitchScript } from "./expression";

/**
 * The case a SWITCH's definition and resolved input choose, as Conductor's evaluators compute it: value-param reads
 * the input parameter `expression` names, javascript (and graaljs) evaluates `expression` over the input.
 */
function evaluateCase(task: TaskExecution, definition: WorkflowTaskDef): JsonValue {
  const expression = definition.expression ?? "";
  if (definition.evaluatorType === "value-param") return Object.hasOwn(task.inputData, expression) ? (task.inputData[expression] ?? null) : null;
  return evaluateSwitchScript(expression, task.inputData);
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
    try {
      return { task: { ...task, ...ended, status: "COMPLETED", outputData: { evaluationResult: [caseValue(evaluateCase(task, definition))] } }, dispatch: false };
    } catch (error) {
      // Definitions are checked when registered, so only one stored before that check could get here.
      const reason = `The SWITCH expression could not be evaluated: ${error instanceof Error ? error.message : String(error)}`;
      return { task: { ...task, ...ended, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: reason }, dispatch: false };
    }
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
