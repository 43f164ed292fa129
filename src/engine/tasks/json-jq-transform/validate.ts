/**
 * Registration-time checks of a JSON_JQ_TRANSFORM task. Its filter sits in its inputParameters, as in Conductor; whether
 * it compiles is checked by the worker, which holds the jq processor (see `definitionJqFilters`).
 */
import { describeValue, isRecord, secretUseIssues, taskInputSources, type UnknownRecord } from "../../definition/checks";
import { JQ_QUERY_FIELD } from "../../jq";
import { childPath, type ValidationIssue } from "../../validation-issue";

/** Every problem with a JSON_JQ_TRANSFORM task's filter and use of secrets. */
export function validateJsonJqTransformTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const inputPath = childPath(path, "inputParameters");
  const input = task["inputParameters"];
  // A missing or malformed inputParameters is reported by the common checks when it is not an object.
  const filter = isRecord(input) ? input[JQ_QUERY_FIELD] : undefined;
  const issues: ValidationIssue[] = [];
  if (typeof filter !== "string" || filter.trim() === "") {
    // A filter given as another value (a number, an object) is named as such, not called missing.
    const given = filter !== undefined && filter !== null && typeof filter !== "string";
    const message = given ? `must be a jq filter (text) over the task's input, such as { total: (.a + .b) }, but received ${describeValue(filter)}` : "is required: a jq filter over the task's input, such as { total: (.a + .b) }";
    issues.push({ path: childPath(inputPath, JQ_QUERY_FIELD), message });
  }
  for (const [value, at] of taskInputSources(task, path)) {
    issues.push(
      ...secretUseIssues(value, at, (names) => `a JSON_JQ_TRANSFORM task must not use secrets (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): it runs on its stored input, where they are masked, and shows its result`),
    );
  }
  return issues;
}
