/**
 * Registration-time checks of an UPDATE_TASK's inputs (Orkes' Update Task). Values from `${...}` expressions are
 * checked when the task runs.
 */
import * as v from "valibot";
import { fieldsOf, isBoolean, isNonEmptyString, isOneOf, isRecord, orExpression, rule, secretUseIssues, validateWith, type UnknownRecord } from "../../definition/checks";
import { EXTERNAL_TASK_STATUSES } from "../../model";
import { childPath, type ValidationIssue } from "../../validation-issue";

const INPUT = fieldsOf({
  taskStatus: rule<string>("taskStatus", `one of ${EXTERNAL_TASK_STATUSES.join(", ")} (the status the task is updated to), or an expression`, orExpression(isOneOf(EXTERNAL_TASK_STATUSES))),
  workflowId: v.nullish(rule<string>("workflowId", "a workflow id (this workflow's when left out), or an expression", isNonEmptyString)),
  taskRefName: v.nullish(rule<string>("taskRefName", "the reference name of the task to update, or an expression", isNonEmptyString)),
  taskId: v.nullish(rule<string>("taskId", "the id of the task to update, or an expression", isNonEmptyString)),
  taskOutput: v.nullish(rule<unknown>("taskOutput", "an object (the task's new output), or an expression", orExpression(isRecord))),
  mergeOutput: v.nullish(rule<unknown>("mergeOutput", "true (add taskOutput to the task's output) or false (replace it, the default), or an expression", orExpression(isBoolean))),
});

/**
 * Problems in an UPDATE_TASK's inputs: a status, and which task (its id, or its reference name).
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[1]`
 */
export function validateUpdateTaskTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const input = task["inputParameters"] ?? {};
  // A non-object inputParameters is reported by the common task checks.
  if (!isRecord(input)) return [];
  const at = childPath(path, "inputParameters");
  const issues = validateWith(INPUT, input, at);
  const given = (name: string) => input[name] !== undefined && input[name] !== null;
  if (!given("taskId") && !given("taskRefName")) {
    issues.push({ path: at, message: "an UPDATE_TASK names the task it updates: taskId, or taskRefName (with workflowId, unless it is a task of this workflow)" });
  }
  // What it sends becomes another task's output, stored and shown there.
  issues.push(...secretUseIssues(input["taskOutput"], childPath(at, "taskOutput"), (names) => `must not pass secrets to the task it updates (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): that task's output is stored and shown`));
  return issues;
}
