import type { DecideEnv } from "../../config";
import type { JoinEvaluatorType, JsonObject, JsonValue, SwitchEvaluatorType, TaskExecution, WorkflowTaskDef } from "../../model";
import { evaluateWith, listedNames, unboundScriptNames, type ScriptOutcome } from "../../scripts";
import type { TaskStart, TaskTypeModule } from "../task-type";

/** How a task's case is computed: an evaluator type and what it evaluates, as a SWITCH's `evaluatorType`/`expression`. */
export interface CaseEvaluator {
  evaluatorType: SwitchEvaluatorType | JoinEvaluatorType;
  expression: string;
}

/**
 * A DECISION's evaluator, as Conductor's DecisionTaskMapper chooses it: `caseExpression` (JavaScript, `$` bound to
 * the input) when it is not blank, else the input parameter `caseValueParam` names.
 */
export function decisionEvaluator(definition: Pick<WorkflowTaskDef, "caseExpression" | "caseValueParam">): CaseEvaluator {
  const script = definition.caseExpression;
  if (script !== undefined && script.trim() !== "") return { evaluatorType: "javascript", expression: script };
  return { evaluatorType: "value-param", expression: definition.caseValueParam ?? "" };
}

/** Conductor's case value: `String.valueOf` of the result (JSON for a list or object, which only a default case takes). */
function caseValue(result: JsonValue): string {
  return typeof result === "string" ? result : JSON.stringify(result);
}

/**
 * True when the branch case `chosen` takes runs a task: its `decisionCases` list, or the `defaultCase` when that list
 * is absent or empty (as `nextPlanIndex` chooses it).
 */
function branchRunsTasks(definition: WorkflowTaskDef, chosen: string): boolean {
  const cases = definition.decisionCases ?? {};
  const list = Object.hasOwn(cases, chosen) ? cases[chosen] : undefined;
  return (list !== undefined && list.length > 0) || (definition.defaultCase ?? []).length > 0;
}

/**
 * Starts a task choosing a case: it completes as it starts, with `output(case)` as its output and `case` in its input;
 * the decider
 * then runs the branch of that case (see `nextPlanIndex`). Nothing is dispatched. One whose case cannot be computed
 * fails for good, as Conductor fails it: running the default would hide the error.
 */
function startCaseTask(task: TaskExecution, definition: WorkflowTaskDef, evaluator: CaseEvaluator, output: (chosen: string) => JsonObject, env: DecideEnv): TaskStart {
  const ended = { startTime: env.now, endTime: env.now, updateTime: env.now };
  const outcome: ScriptOutcome = evaluateWith(evaluator.evaluatorType, evaluator.expression, task.inputData, env.scripts);
  if (outcome.ok) {
    const chosen = caseValue(outcome.value);
    // Conductor's mappers put the case in the task's input too (`${sw.input.case}`), and `hasChildren: "true"` (a
    // string, as they write it) when the branch taken runs a task.
    const inputData: JsonObject = { ...task.inputData, case: chosen };
    if (branchRunsTasks(definition, chosen)) inputData["hasChildren"] = "true";
    return { task: { ...task, ...ended, status: "COMPLETED", inputData, outputData: output(chosen) }, dispatch: false };
  }
  // A script's `$` is the task's input: one reading `$.workflow.input.kind` (a `${…}` path written as a script) names
  // what it missed, which the bare TypeError does not.
  const unbound = evaluator.evaluatorType === "value-param" ? [] : unboundScriptNames(evaluator.expression, task.inputData);
  const missed = unbound.length === 0 ? "" : `; it reads ${unbound.map((name) => `$.${name}`).join(", ")}, which $ does not hold: $ holds the ${task.taskType}'s inputParameters (${listedNames(task.inputData)})`;
  const reason = `The ${task.taskType} expression could not be evaluated: ${outcome.error}${missed}`;
  return { task: { ...task, ...ended, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: reason }, dispatch: false };
}

/**
 * SWITCH: its case from `evaluatorType` and `expression` (value-param reads the input parameter `expression` names,
 * javascript and graaljs run `expression` with `$` bound to the input), recorded as Conductor's SwitchTaskMapper records
 * it: `evaluationResult: [case]` and `selectedCase: case`.
 */
export const switchTask: TaskTypeModule = {
  type: "SWITCH",
  start(task, definition, _execution, env) {
    return startCaseTask(task, definition, { evaluatorType: definition.evaluatorType ?? "javascript", expression: definition.expression ?? "" }, (chosen) => ({ evaluationResult: [chosen], selectedCase: chosen }), env);
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};

/** DECISION (Conductor's older SWITCH): its case from {@link decisionEvaluator}, recorded as `caseOutput: [case]`. */
export const decisionTask: TaskTypeModule = {
  type: "DECISION",
  start(task, definition, _execution, env) {
    return startCaseTask(task, definition, decisionEvaluator(definition), (chosen) => ({ caseOutput: [chosen] }), env);
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
