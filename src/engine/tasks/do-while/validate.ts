/**
 * Registration-time checks of a DO_WHILE (or WHILE) task's own fields. The tasks of its `loopOver` are checked by the definition
 * validator like any other task, and so is what a loop may not hold (see `validateWorkflowDef`); a script condition's
 * syntax by the worker, which holds the interpreter (see `definitionScripts`).
 */
import { hasExpression } from "../../expressions";
import { describeValue, isNonEmptyString, isRecord, secretUseIssues, taskInputSources, type UnknownRecord } from "../../definition/checks";
import { SWITCH_EVALUATOR_TYPES } from "../../model";
import { childPath, type ValidationIssue } from "../../validation-issue";

/** Every problem with a DO_WHILE's (or WHILE's: the same fields) loopOver (its presence), loopCondition, evaluatorType, items, keepLastN and use of secrets. */
export function validateDoWhileTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const type = task["type"] === "WHILE" ? "WHILE" : "DO_WHILE";
  const loopOver = task["loopOver"];
  if (!Array.isArray(loopOver) || loopOver.length === 0) {
    issues.push({ path: childPath(path, "loopOver"), message: `loopOver must be a non-empty list of the tasks each iteration runs, but received ${describeValue(loopOver)}` });
  }
  const input = isRecord(task["inputParameters"]) ? task["inputParameters"] : {};
  const items = input["items"];
  const iteratesItems = items !== undefined && items !== null;
  const evaluatorType = task["evaluatorType"];
  if (evaluatorType !== undefined && evaluatorType !== null && !(SWITCH_EVALUATOR_TYPES as readonly unknown[]).includes(evaluatorType)) {
    issues.push({ path: childPath(path, "evaluatorType"), message: `evaluatorType must be one of ${SWITCH_EVALUATOR_TYPES.join(", ")} (javascript when absent), but received ${describeValue(evaluatorType)}` });
  }
  const condition = task["loopCondition"];
  const conditionGiven = condition !== undefined && condition !== null && condition !== "";
  if (conditionGiven ? !isNonEmptyString(condition) || condition.trim() === "" : !iteratesItems) {
    const what = evaluatorType === "value-param" ? "the name of the input parameter telling whether to go on" : "a script telling whether to go on, such as $.loop_ref.iteration < 3";
    const unless = iteratesItems ? "" : " (it may be left out only when inputParameters.items gives a list to iterate over)";
    issues.push({ path: childPath(path, "loopCondition"), message: `loopCondition must be ${what}${unless}, but received ${describeValue(condition)}` });
  }
  if (iteratesItems && !Array.isArray(items) && !(typeof items === "string" && hasExpression(items))) {
    issues.push({ path: childPath(childPath(path, "inputParameters"), "items"), message: `items must be a list to iterate over, or a \${...} expression giving one, but received ${describeValue(items)}` });
  }
  const keep = input["keepLastN"];
  const keepIsExpression = typeof keep === "string" && hasExpression(keep);
  if (keep !== undefined && keep !== null && !keepIsExpression && !(Number.isInteger(keep) && (keep as number) >= 1)) {
    issues.push({ path: childPath(childPath(path, "inputParameters"), "keepLastN"), message: `keepLastN must be a whole number of at least 1 (how many of the latest iterations to keep), but received ${describeValue(keep)}` });
  }
  for (const [value, at] of taskInputSources(task, path)) {
    issues.push(
      ...secretUseIssues(value, at, (names) => `a ${type} must not use secrets (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): its condition runs on its stored input, where they are masked, and its output is shown`),
    );
  }
  return issues;
}
