/**
 * Registration-time checks of a SWITCH (or DECISION) task's own fields. The tasks inside its branches are checked by the
 * definition validator, like any other task (see `validateWorkflowDef`); a javascript expression's syntax by the
 * worker, which holds the interpreter (see `definitionScripts`).
 */
import { describeValue, evaluatorFieldIssues, isRecord, secretUseIssues, taskInputSources, type UnknownRecord } from "../../definition/checks";
import { SWITCH_EVALUATOR_TYPES } from "../../model";
import { childPath, type ValidationIssue } from "../../validation-issue";

/** Every problem with a SWITCH task's evaluatorType, expression, decisionCases and defaultCase. */
export function validateSwitchTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const issues = evaluatorFieldIssues(task, path, SWITCH_EVALUATOR_TYPES, {
    valueParam: "the name of the input parameter holding the case value",
    script: "an expression computing the case value, such as $.kind",
  });
  return [...issues, ...caseIssues(task, path, "SWITCH")];
}

/**
 * Every problem with a DECISION task's caseValueParam or caseExpression (one of them is needed, as in Conductor; the
 * expression wins when both are given), decisionCases and defaultCase.
 */
export function validateDecisionTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const param = task["caseValueParam"];
  const script = task["caseExpression"];
  for (const [field, value] of [["caseValueParam", param], ["caseExpression", script]] as const) {
    if (value !== undefined && value !== null && typeof value !== "string") issues.push({ path: childPath(path, field), message: `${field} must be a string, but received ${describeValue(value)}` });
  }
  const given = (value: unknown) => typeof value === "string" && value.trim() !== "";
  if (!given(param) && !given(script)) {
    issues.push({ path: childPath(path, "caseValueParam"), message: "a DECISION needs caseValueParam (the input parameter holding the case value) or caseExpression (JavaScript computing it, such as $.kind)" });
  }
  return [...issues, ...caseIssues(task, path, "DECISION")];
}

/** Problems with the cases of a task choosing one (`decisionCases`, `defaultCase`), and secrets in its input. */
function caseIssues(task: UnknownRecord, path: string, type: "SWITCH" | "DECISION"): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const cases = task["decisionCases"];
  if (!isRecord(cases) || Object.keys(cases).length === 0) {
    issues.push({ path: childPath(path, "decisionCases"), message: `decisionCases must be an object of at least one case value, each mapped to a list of tasks, but received ${describeValue(cases)}` });
  } else {
    for (const [value, branch] of Object.entries(cases)) {
      if (!Array.isArray(branch)) issues.push({ path: childPath(childPath(path, "decisionCases"), value), message: `each case must be a list of tasks (possibly empty), but received ${describeValue(branch)}` });
    }
  }
  const defaultCase = task["defaultCase"];
  if (defaultCase !== undefined && defaultCase !== null && !Array.isArray(defaultCase)) {
    issues.push({ path: childPath(path, "defaultCase"), message: `defaultCase must be a list of tasks (possibly empty), but received ${describeValue(defaultCase)}` });
  }
  for (const [value, at] of taskInputSources(task, path)) issues.push(...secretReferences(value, at, type));
  return issues;
}

/**
 * A SWITCH (or DECISION) decides in the engine, on its input as stored, where a secret is `***`; and its case is shown
 * in its output. So its input must not use secrets: the case would be computed from the mask, or would reveal the secret.
 */
function secretReferences(value: unknown, path: string, type: "SWITCH" | "DECISION"): ValidationIssue[] {
  return secretUseIssues(value, path, (names) => `a ${type} must not use secrets (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): it decides on its stored input, where they are masked, and shows its case; compute the case in an earlier task`);
}
