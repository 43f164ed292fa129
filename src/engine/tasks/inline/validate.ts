/**
 * Registration-time checks of an INLINE task. Its evaluatorType and expression sit in its inputParameters, as in
 * Conductor; a script's syntax is checked by the worker, which holds the interpreter (see `definitionScripts`).
 */
import { evaluatorFieldIssues, isRecord, secretUseIssues, taskInputSources, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { INLINE_EVALUATOR_TYPES, inlineEvaluatorType } from ".";

/** Every problem with an INLINE task's evaluatorType, expression and use of secrets. */
export function validateInlineTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const inputPath = childPath(path, "inputParameters");
  const input = task["inputParameters"];
  // A missing or malformed inputParameters is reported by the common checks when it is not an object.
  const parameters = isRecord(input) ? input : {};
  // Without an evaluatorType (absent or null) it runs javascript, as Conductor's Inline does.
  const issues = evaluatorFieldIssues({ ...parameters, evaluatorType: inlineEvaluatorType(parameters) }, inputPath, INLINE_EVALUATOR_TYPES, {
    valueParam: "the name of the input parameter holding the result",
    script: "a script computing the result, such as $.a + $.b",
  });
  for (const [value, at] of taskInputSources(task, path)) {
    issues.push(
      ...secretUseIssues(value, at, (names) => `an INLINE task must not use secrets (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): it runs on its stored input, where they are masked, and shows its result`),
    );
  }
  return issues;
}
