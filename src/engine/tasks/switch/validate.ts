/**
 * Registration-time checks of a SWITCH task's own fields. The tasks inside its branches are checked by the
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
  for (const [value, at] of taskInputSources(task, path)) issues.push(...secretReferences(value, at));
  return issues;
}

/**
 * A SWITCH decides in the engine, on its input as stored, where a secret is `***`; and its case is shown in its
 * output. So its input must not use secrets: the case would be computed from the mask, or would reveal the secret.
 */
function secretReferences(value: unknown, path: string): ValidationIssue[] {
  return secretUseIssues(value, path, (names) => `a SWITCH must not use secrets (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): it decides on its stored input, where they are masked, and shows its case; compute the case in an earlier task`);
}
