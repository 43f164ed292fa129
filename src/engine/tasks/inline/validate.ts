/**
 * Registration-time checks of an INLINE task. Its evaluatorType and expression sit in its inputParameters, as in
 * Conductor; a script's syntax is checked by the worker, which holds the interpreter (see `scriptSources`).
 */
import { describeValue, isNonEmptyString, isOneOf, isRecord, secretUseIssues, taskInputSources, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { INLINE_EVALUATOR_TYPES } from ".";

const isEvaluatorType = isOneOf(INLINE_EVALUATOR_TYPES);

/** Every problem with an INLINE task's evaluatorType, expression and use of secrets. */
export function validateInlineTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const inputPath = childPath(path, "inputParameters");
  const input = task["inputParameters"];
  // A missing or malformed inputParameters is reported by the common checks when it is not an object.
  const parameters = isRecord(input) ? input : {};
  const issues: ValidationIssue[] = [];
  const evaluatorType = parameters["evaluatorType"];
  if (!isEvaluatorType(evaluatorType)) {
    issues.push({ path: childPath(inputPath, "evaluatorType"), message: `evaluatorType must be one of ${INLINE_EVALUATOR_TYPES.join(", ")}, but received ${describeValue(evaluatorType)}` });
  }
  const expression = parameters["expression"];
  if (!isNonEmptyString(expression)) {
    const what = evaluatorType === "value-param" ? "the name of the input parameter holding the result" : "a script computing the result, such as $.a + $.b";
    issues.push({ path: childPath(inputPath, "expression"), message: `expression must be ${what}, but received ${describeValue(expression)}` });
  }
  for (const [value, at] of taskInputSources(task, path)) {
    issues.push(
      ...secretUseIssues(value, at, (names) => `an INLINE task must not use secrets (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): it runs on its stored input, where they are masked, and shows its result`),
    );
  }
  return issues;
}
