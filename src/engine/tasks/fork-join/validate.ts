/**
 * Registration-time checks of FORK_JOIN and JOIN tasks' own fields. The tasks inside a fork's branches are checked by
 * the definition validator like any other task, and so is the pairing of each FORK_JOIN with the JOIN after it
 * (see `validateWorkflowDef`).
 */
import { describeValue, isNonEmptyString, secretUseIssues, taskInputSources, type UnknownRecord } from "../../definition/checks";
import { JOIN_EVALUATOR_TYPES } from "../../scripts";
import { childPath, type ValidationIssue } from "../../validation-issue";

/** Every problem with a FORK_JOIN task's `forkTasks`: a non-empty list of branches, each a non-empty list of tasks. */
export function validateForkJoinTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const forkTasks = task["forkTasks"];
  const at = childPath(path, "forkTasks");
  if (!Array.isArray(forkTasks) || forkTasks.length === 0) {
    return [{ path: at, message: `forkTasks must be a non-empty list of branches, each a non-empty list of tasks run one after another, but received ${describeValue(forkTasks)}` }];
  }
  return forkTasks.flatMap((branch: unknown, index) =>
    Array.isArray(branch) && branch.length > 0 ? [] : [{ path: childPath(at, index), message: `each branch must be a non-empty list of tasks, but received ${describeValue(branch)}` }],
  );
}

/**
 * Every problem with a JOIN task's `joinOn` (absent: waits for nothing, as in Conductor; else a list of reference names)
 * and its join script (Orkes'): `expression` a string when given, its `evaluatorType` JavaScript under one of Orkes'
 * names (or none), and no secrets in its input, which the script reads as stored, masked.
 */
export function validateJoinTask(task: UnknownRecord, path: string): ValidationIssue[] {
  return [...joinOnIssues(task, path), ...joinScriptIssues(task, path)];
}

function joinOnIssues(task: UnknownRecord, path: string): ValidationIssue[] {
  const joinOn = task["joinOn"];
  if (joinOn === undefined || joinOn === null) return [];
  const at = childPath(path, "joinOn");
  if (!Array.isArray(joinOn)) return [{ path: at, message: `joinOn must be a list of the reference names of tasks in the branches of the FORK_JOIN before it, but received ${describeValue(joinOn)}` }];
  return joinOn.flatMap((reference: unknown, index) =>
    isNonEmptyString(reference) ? [] : [{ path: childPath(at, index), message: `each joinOn entry must be a task reference name, but received ${describeValue(reference)}` }],
  );
}

function joinScriptIssues(task: UnknownRecord, path: string): ValidationIssue[] {
  const expression = task["expression"];
  // No script (null is how the Java client writes none): evaluatorType means nothing then, and is not kept.
  if (expression === undefined || expression === null) return [];
  if (typeof expression !== "string") {
    return [{ path: childPath(path, "expression"), message: `expression must be a join script (JavaScript deciding how the JOIN ends, such as (function(){ return true; })()), but received ${describeValue(expression)}` }];
  }
  const issues: ValidationIssue[] = [];
  const evaluatorType = task["evaluatorType"];
  if (evaluatorType !== undefined && evaluatorType !== null && !(JOIN_EVALUATOR_TYPES as readonly unknown[]).includes(evaluatorType)) {
    issues.push({ path: childPath(path, "evaluatorType"), message: `a JOIN's join script is JavaScript: evaluatorType must be one of ${JOIN_EVALUATOR_TYPES.join(", ")} (or absent), but received ${describeValue(evaluatorType)}` });
  }
  if (expression.trim() === "") return issues;
  for (const [value, at] of taskInputSources(task, path)) {
    issues.push(
      ...secretUseIssues(value, at, (names) => `a JOIN with a join script must not use secrets (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): its script runs on its stored input, where they are masked`),
    );
  }
  return issues;
}
