/**
 * DYNAMIC (Conductor's): one task whose name its input gives when it is scheduled, `dynamicTaskNameParam` naming the
 * input parameter: a system task type (HTTP, INLINE, SUB_WORKFLOW...) runs as that task, any other name as a worker's
 * task of that name. It has no behaviour of its own: its instance is created as the task it chose (see `concrete.ts`).
 */
import { concreteTaskIssues } from "../../definition/validate";
import type { JsonObject, WorkflowTaskDef } from "../../model";
import { dynamicTaskAs } from "./concrete";
import { dynamicTarget, dynamicTargetIssue, type DynamicTarget } from "./target";


/**
 * What a DYNAMIC chose to run: the task and its definition; or why it cannot run what its input names, uncut (the
 * decider scrubs it of masked values, then cuts it to MAX_TASK_REASON_LENGTH: see masked-reason.ts).
 */
export type DynamicChoice = (DynamicTarget & { ok: true; task: WorkflowTaskDef }) | { ok: false; reason: string };

/**
 * The task DYNAMIC `dynamic` runs, given its input resolved from its own `inputParameters`, checked as a registration
 * checks a task of that type (the fields it needs, with the input it will get).
 */
export function chooseDynamicTask(dynamic: WorkflowTaskDef, input: JsonObject): DynamicChoice {
  const param = dynamic.dynamicTaskNameParam ?? "";
  const target = dynamicTarget(input[param], param);
  const problem = dynamicTargetIssue(target, dynamic.inputParameters ?? {});
  if (problem !== undefined || "invalid" in target) return { ok: false, reason: dynamicFailure(problem ?? "") };
  const task = dynamicTaskAs(dynamic, target.type, target.name);
  const issues = concreteTaskIssues(task);
  if (issues.length > 0) return { ok: false, reason: dynamicFailure(`${target.name}: ${issues.map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`)).join("; ")}`) };
  return { ok: true, ...target, task };
}

function dynamicFailure(reason: string): string {
  return `The dynamic task could not be scheduled: ${reason}`;
}
