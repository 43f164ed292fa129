/**
 * Registration-time checks of an UPDATE_SECRET's inputs (Orkes' Update Secret). Values from `${...}` expressions are
 * checked when the task runs.
 */
import { fieldsOf, isExpression, isRecord, orExpression, rule, validateWith, type UnknownRecord } from "../../definition/checks";
import { isValidSecretName } from "../../secret-rules";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { UPDATE_SECRET_INPUT } from "./request";

const INPUT = fieldsOf({
  [UPDATE_SECRET_INPUT]: fieldsOf({
    secretKey: rule<string>("secretKey", "a secret name (1 to 128 characters of A-Z, a-z, 0-9, '_', '.' or '-'), or an expression", orExpression((value) => typeof value === "string" && isValidSecretName(value))),
    // A value written into the definition would be stored and shown with it: it must come from an expression.
    secretValue: rule<string>("secretValue", "an expression giving the new value, such as ${get_token.output.response.body.access_token}; a value written in the definition would be stored and shown with it", isExpression),
  }),
});

/**
 * Problems in an UPDATE_SECRET's inputs.
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[1]`
 */
export function validateUpdateSecretTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const input = task["inputParameters"] ?? {};
  // A non-object inputParameters is reported by the common task checks.
  if (!isRecord(input)) return [];
  return validateWith(INPUT, input, childPath(path, "inputParameters"));
}
