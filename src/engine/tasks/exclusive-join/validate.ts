/** Registration-time checks of an EXCLUSIVE_JOIN task's own fields. */
import { describeValue, isNonEmptyString, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";

/**
 * Every problem with an EXCLUSIVE_JOIN's `joinOn` and `defaultExclusiveJoinTask`: each absent (none, as Conductor's
 * WorkflowTask defaults them) or a list of task reference names, as Conductor's `List<String>` fields. The names are
 * not checked against the definition's tasks, as Conductor does not: one no task has is never found, and passed over.
 */
export function validateExclusiveJoinTask(task: UnknownRecord, path: string): ValidationIssue[] {
  return [...referenceListIssues(task, path, "joinOn"), ...referenceListIssues(task, path, "defaultExclusiveJoinTask")];
}

function referenceListIssues(task: UnknownRecord, path: string, field: "joinOn" | "defaultExclusiveJoinTask"): ValidationIssue[] {
  const names = task[field];
  if (names === undefined || names === null) return [];
  const at = childPath(path, field);
  if (!Array.isArray(names)) return [{ path: at, message: `${field} must be a list of task reference names, the first of which that ran the EXCLUSIVE_JOIN ends with, but received ${describeValue(names)}` }];
  return names.flatMap((reference: unknown, index) =>
    isNonEmptyString(reference) ? [] : [{ path: childPath(at, index), message: `each ${field} entry must be a task reference name, but received ${describeValue(reference)}` }],
  );
}
