/**
 * Registration-time checks of a SET_VARIABLE task: what it sets becomes workflow variables, which the API shows, so
 * its input must not name a secret (nor may an inline task definition's inputTemplate, which adds to that input).
 */
import { referencedSecrets } from "../../expressions";
import { isBoundedJsonObject, isRecord, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";

/** One issue per key of `template` (at `path`) whose value names a secret. */
function secretIssues(template: unknown, path: string): ValidationIssue[] {
  // A malformed template is reported by the common checks.
  if (!isBoundedJsonObject(template)) return [];
  return Object.entries(template).flatMap(([key, value]) => {
    const secrets = referencedSecrets(value);
    if (secrets.length === 0) return [];
    const message = `a SET_VARIABLE task must not use secrets (${secrets.join(", ")}): the workflow variables it sets are shown by the API`;
    return [{ path: childPath(path, key), message }];
  });
}

/**
 * Problems in a SET_VARIABLE task.
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[1]`
 */
export function validateSetVariableTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const taskDefinition = task["taskDefinition"];
  const inputTemplate = isRecord(taskDefinition) ? taskDefinition["inputTemplate"] : undefined;
  return [
    ...secretIssues(task["inputParameters"], childPath(path, "inputParameters")),
    ...secretIssues(inputTemplate, childPath(childPath(path, "taskDefinition"), "inputTemplate")),
  ];
}
