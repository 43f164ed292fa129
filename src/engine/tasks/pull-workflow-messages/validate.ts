/**
 * Registration-time checks of a PULL_WORKFLOW_MESSAGES task's inputs: a literal `batchSize` must be a whole number of
 * at least 1 (one above {@link MAX_BATCH_SIZE} is capped as it runs, as Conductor caps it) and `blocking` a boolean.
 * Either may be an expression, read as the task starts.
 */
import * as v from "valibot";
import { isBoolean, isIntegerIn, isRecord, orExpression, rule, validateWith, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { MAX_BATCH_SIZE } from ".";

const INPUT = v.object({
  batchSize: v.optional(
    rule<number>("batchSize", `a whole number of at least 1 (at most ${MAX_BATCH_SIZE} are taken at once), or an expression`, orExpression(isIntegerIn(1, Number.MAX_SAFE_INTEGER))),
  ),
  blocking: v.optional(rule<boolean>("blocking", "true (wait for a message, the default) or false (complete at once), or an expression", orExpression(isBoolean))),
});

/**
 * Problems in a PULL_WORKFLOW_MESSAGES task's inputs.
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[1]`
 */
export function validatePullWorkflowMessagesTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const input = task["inputParameters"] ?? {};
  // A non-object inputParameters is reported by the common task checks.
  if (!isRecord(input)) return [];
  return validateWith(INPUT, input, childPath(path, "inputParameters"));
}
