/**
 * Registration-time checks of a LAMBDA task: its `scriptExpression` (its syntax is checked by the worker with the
 * definition's other scripts, see `definitionScripts`) and no secrets, as an INLINE's.
 */
import { describeValue, isNonEmptyString, isRecord, secretUseIssues, taskInputSources, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";

/** Every problem with a LAMBDA task's scriptExpression and use of secrets. */
export function validateLambdaTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const input = task["inputParameters"];
  const script = isRecord(input) ? input["scriptExpression"] : undefined;
  const issues: ValidationIssue[] = [];
  if (!isNonEmptyString(script)) {
    issues.push({
      path: childPath(childPath(path, "inputParameters"), "scriptExpression"),
      message: `scriptExpression must be the body of a JavaScript function returning the result, such as return $.a + $.b, but received ${describeValue(script)}`,
    });
  }
  for (const [value, at] of taskInputSources(task, path)) {
    issues.push(...secretUseIssues(value, at, (names) => `a LAMBDA task must not use secrets (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): it runs on its stored input, where they are masked, and shows its result`));
  }
  return issues;
}
