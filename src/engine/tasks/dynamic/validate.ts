/**
 * Registration-time checks of a DYNAMIC task's own fields. The task it runs is known only once its input is resolved:
 * it is checked then (see `chooseDynamicTask`), or here when the name is written as it is.
 */
import { describeValue, isExpression, isRecord, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { dynamicTarget, dynamicTargetIssue } from "./target";

/** Every problem with how a DYNAMIC names the task it runs: `dynamicTaskNameParam`, an input parameter it sets. */
export function validateDynamicTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const param = task["dynamicTaskNameParam"];
  const at = childPath(path, "dynamicTaskNameParam");
  if (typeof param !== "string" || param === "") {
    return [{ path: at, message: `a DYNAMIC needs dynamicTaskNameParam, the input parameter giving the name of the task to run (such as "taskToExecute"), but received ${describeValue(param)}` }];
  }
  const input = isRecord(task["inputParameters"]) ? task["inputParameters"] : {};
  if (!Object.hasOwn(input, param)) return [{ path: at, message: `dynamicTaskNameParam names input parameter ${JSON.stringify(param)}, which inputParameters does not set` }];
  const name = input[param];
  if (isExpression(name)) return [];
  const problem = dynamicTargetIssue(dynamicTarget(name, param), input);
  return problem === undefined ? [] : [{ path: childPath(childPath(path, "inputParameters"), param), message: problem }];
}
