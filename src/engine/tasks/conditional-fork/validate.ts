/**
 * Registration-time checks of a CONDITIONAL_FORK task's own fields. The tasks inside its branches are checked by the
 * definition validator like any other task, and so is the JOIN that must follow it (see `validateWorkflowDef`); a
 * javascript condition's syntax by the worker, which holds the interpreter (see `definitionScripts`).
 */
import { describeValue, evaluatorFieldIssues, isBoolean, isBoundedJsonObject, isRecord, secretUseIssues, taskInputSources, type UnknownRecord } from "../../definition/checks";
import { SWITCH_EVALUATOR_TYPES } from "../../model";
import { childPath, type ValidationIssue } from "../../validation-issue";

/** Absent or null: how a client writes "none" (a Java client writes null fields). */
const unset = (value: unknown): boolean => value === undefined || value === null;

/**
 * True when `condition` (as received) is none, as Conductor's ConditionSpec reads it: absent, null, or an object giving
 * neither an evaluatorType nor an expression. Its branch always runs.
 */
export function isNoCondition(condition: unknown): boolean {
  if (unset(condition)) return true;
  if (!isRecord(condition)) return false;
  const blank = (value: unknown) => unset(value) || value === "";
  return blank(condition["evaluatorType"]) && blank(condition["expression"]);
}

/**
 * Every problem with a CONDITIONAL_FORK's `conditionalBranches` (a list of branches, each `{condition?, tasks}`),
 * `defaultCase` (a list of tasks, possibly empty) and input: one of its branches or its defaultCase has a task (else
 * every run would fail, choosing nothing), each condition has an evaluatorType this service runs and an expression (one
 * without the other Conductor reads as no condition, running the branch always: a mistake, refused), and its input uses
 * no secrets (its conditions run on its stored input, where they are masked).
 */
export function validateConditionalForkTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const branches = task["conditionalBranches"];
  const at = childPath(path, "conditionalBranches");
  let runsTasks = false;
  if (!unset(branches) && !Array.isArray(branches)) {
    issues.push({ path: at, message: `conditionalBranches must be a list of branches, each {condition, tasks}, but received ${describeValue(branches)}` });
  }
  (Array.isArray(branches) ? branches : []).forEach((branch: unknown, position) => {
    const branchPath = childPath(at, position);
    if (!isRecord(branch)) {
      issues.push({ path: branchPath, message: `each branch must be an object {condition, tasks}, but received ${describeValue(branch)}` });
      return;
    }
    const tasks = branch["tasks"];
    if (!unset(tasks) && !Array.isArray(tasks)) issues.push({ path: childPath(branchPath, "tasks"), message: `tasks must be a list of the tasks the branch runs one after another, but received ${describeValue(tasks)}` });
    if (Array.isArray(tasks) && tasks.length > 0) runsTasks = true;
    const failWorkflowOnFailure = branch["failWorkflowOnFailure"];
    if (!unset(failWorkflowOnFailure) && !isBoolean(failWorkflowOnFailure)) {
      issues.push({ path: childPath(branchPath, "failWorkflowOnFailure"), message: `failWorkflowOnFailure must be a boolean, but received ${describeValue(failWorkflowOnFailure)}` });
    }
    issues.push(...conditionIssues(branch["condition"], childPath(branchPath, "condition")));
  });
  const defaultCase = task["defaultCase"];
  if (!unset(defaultCase) && !Array.isArray(defaultCase)) {
    issues.push({ path: childPath(path, "defaultCase"), message: `defaultCase must be a list of tasks (possibly empty), run when no branch is chosen, but received ${describeValue(defaultCase)}` });
  }
  if (Array.isArray(defaultCase) && defaultCase.length > 0) runsTasks = true;
  if (!runsTasks && issues.length === 0) {
    issues.push({ path: at, message: "a CONDITIONAL_FORK needs a task to run: in one of its conditionalBranches or in its defaultCase (with none, every run fails, choosing nothing)" });
  }
  for (const [value, where] of taskInputSources(task, path)) {
    issues.push(
      ...secretUseIssues(value, where, (names) => `a CONDITIONAL_FORK must not use secrets (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): its conditions run on its stored input, where they are masked; compute what they need in an earlier task`),
    );
  }
  return issues;
}

/** Problems with one branch's `condition`: none, or an object with a supported evaluatorType and an expression. */
function conditionIssues(condition: unknown, path: string): ValidationIssue[] {
  if (isNoCondition(condition)) return [];
  if (!isRecord(condition)) return [{ path, message: `condition must be an object {evaluatorType, expression} (or none, for a branch that always runs), but received ${describeValue(condition)}` }];
  const issues = evaluatorFieldIssues(condition, path, SWITCH_EVALUATOR_TYPES, {
    valueParam: "the name of the fork's input parameter whose value (true or \"true\") chooses the branch",
    script: "an expression over the fork's input choosing the branch when true, such as $.amount > 100",
  });
  for (const field of ["input", "query"]) {
    const value = condition[field];
    if (!unset(value) && !isBoundedJsonObject(value)) issues.push({ path: childPath(path, field), message: `${field} must be an object (Conductor's field, kept and not read), but received ${describeValue(value)}` });
  }
  return issues;
}
