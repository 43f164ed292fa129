/**
 * Registration-time checks of a TERMINATE task's inputs. Values from `${...}` expressions are checked when the task
 * starts.
 */
import * as v from "valibot";
import { jacksonBooleanOf, fieldsOf, isOneOf, isRecord, isString, orExpression, rule, validateWith, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { TERMINATION_STATUSES } from "./index";

const STATUS_TEXT = TERMINATION_STATUSES.join(", ");

const INPUT = fieldsOf({
  terminationStatus: rule<string>("terminationStatus", `one of ${STATUS_TEXT} (the status the workflow ends in), or an expression`, orExpression(isOneOf(TERMINATION_STATUSES))),
  terminationReason: v.nullish(rule<string>("terminationReason", "a string (the workflow's reasonForIncompletion)", isString)),
  // Any value: one that is no object becomes {"output": value}, as in Conductor, whose own test workflows write a string.
  workflowOutput: v.optional(v.unknown()),
});

/**
 * Problems in a TERMINATE task's inputs.
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[1]`
 */
export function validateTerminateTask(task: UnknownRecord, path: string): ValidationIssue[] {
  // Conductor's rule: an optional TERMINATE that failed would let the workflow run on past the end it stands for. Read
  // as the common rule reads `optional` (its text, "true", too: Jackson's coercion).
  const optional = jacksonBooleanOf(task["optional"]) === true ? [{ path: childPath(path, "optional"), message: "a TERMINATE task cannot be optional" }] : [];
  const input = task["inputParameters"] ?? {};
  // A non-object inputParameters is reported by the common task checks.
  if (!isRecord(input)) return optional;
  return [...optional, ...validateWith(INPUT, input, childPath(path, "inputParameters"))];
}
