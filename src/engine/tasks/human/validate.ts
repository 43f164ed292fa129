import type { UnknownRecord } from "../../definition/checks";
import { isRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { humanSettingsIssues } from "./settings";

/**
 * Problems in a HUMAN task's settings (`inputParameters.__humanTaskDefinition`) as registered; values given as
 * `${...}` are checked once resolved, when the task starts.
 */
export function validateHumanTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const input = task["inputParameters"] ?? {};
  // A non-object inputParameters is reported by the common task checks.
  if (!isRecord(input)) return [];
  return humanSettingsIssues(input, childPath(path, "inputParameters"));
}
