/**
 * Registration-time checks of a TERMINATE_WORKFLOW's inputs (Orkes' Terminate Workflow). Values from `${...}`
 * expressions are checked when the task runs.
 */
import * as v from "valibot";
import { fieldsOf, isBoolean, isNonEmptyString, isRecord, isString, orExpression, rule, validateWith, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { MAX_TERMINATED_WORKFLOWS } from "./request";

const isIdList = (value: unknown) => Array.isArray(value) && value.length > 0 && value.length <= MAX_TERMINATED_WORKFLOWS && value.every(isNonEmptyString);

const INPUT = fieldsOf({
  workflowId: rule<unknown>("workflowId", `a list of 1 to ${MAX_TERMINATED_WORKFLOWS} workflow ids (or expressions giving them), or an expression`, (value) => isIdList(value) || isNonEmptyString(value)),
  terminationReason: v.nullish(rule<string>("terminationReason", "a string (each terminated workflow's reasonForIncompletion)", isString)),
  triggerFailureWorkflow: v.nullish(rule<unknown>("triggerFailureWorkflow", "true or false, or an expression", orExpression(isBoolean))),
});

/**
 * Problems in a TERMINATE_WORKFLOW's inputs.
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[1]`
 */
export function validateTerminateWorkflowTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const input = task["inputParameters"] ?? {};
  // A non-object inputParameters is reported by the common task checks.
  if (!isRecord(input)) return [];
  return validateWith(INPUT, input, childPath(path, "inputParameters"));
}
