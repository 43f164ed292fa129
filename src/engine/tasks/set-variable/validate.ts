/**
 * Registration-time checks of a SET_VARIABLE task: what it sets becomes workflow variables, which the API shows, so
 * its input must not name a secret (nor may an inline task definition's inputTemplate, which adds to that input).
 */
import { isBoundedJsonObject, secretUseIssues, taskInputSources, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";

/** One issue per key of `template` (at `path`) whose value names a secret. */
function secretIssues(template: unknown, path: string): ValidationIssue[] {
  // A malformed template is reported by the common checks.
  if (!isBoundedJsonObject(template)) return [];
  return Object.entries(template).flatMap(([key, value]) =>
    secretUseIssues(value, childPath(path, key), (names) => `a SET_VARIABLE task must not use secrets (${names.join(", ")}): the workflow variables it sets are shown by the API`),
  );
}

/**
 * Problems in a SET_VARIABLE task.
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[1]`
 */
export function validateSetVariableTask(task: UnknownRecord, path: string): ValidationIssue[] {
  return taskInputSources(task, path).flatMap(([template, at]) => secretIssues(template, at));
}
