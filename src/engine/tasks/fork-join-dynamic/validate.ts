/**
 * Registration-time checks of a FORK_JOIN_DYNAMIC task's own fields. Its branches exist only once it runs: they are
 * checked then (see `forkedTasks`), and the JOIN after it by the definition validator (see `validateWorkflowDef`).
 */
import { describeValue, isExpression, isRecord, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { FORKABLE_TYPES } from "./forkable";

/**
 * Every problem with how a FORK_JOIN_DYNAMIC says what to fork: either `dynamicForkTasksParam` and
 * `dynamicForkTasksInputParamName`, each naming one of its input parameters (a list of tasks; their inputs by reference
 * name), or `dynamicForkJoinTasksParam` alone (Conductor's older form), naming the input parameter holding a
 * DynamicForkJoinTaskList (`{dynamicTasks: [{taskName, referenceName, type, input}]}`), or the input parameter
 * `forkTaskInputs` (one branch per entry, all running the task `forkTaskName` of type `forkTaskType`, or the sub
 * workflow `forkTaskWorkflow`).
 */
export function validateForkJoinDynamicTask(task: UnknownRecord, path: string): ValidationIssue[] {
  if (task["dynamicForkJoinTasksParam"] !== undefined && !forksEachInput(task)) return forkJoinTaskListIssues(task, path);
  const issues: ValidationIssue[] = [];
  const input = isRecord(task["inputParameters"]) ? task["inputParameters"] : {};
  const tasksParam = task["dynamicForkTasksParam"];
  const inputParam = task["dynamicForkTasksInputParamName"];
  if ((tasksParam === undefined && inputParam === undefined) || forksEachInput(task)) {
    if (!Object.hasOwn(input, "forkTaskInputs")) {
      issues.push({
        path: childPath(path, "dynamicForkTasksParam"),
        message:
          "a FORK_JOIN_DYNAMIC needs dynamicForkTasksParam and dynamicForkTasksInputParamName (the input parameters holding the tasks to fork and their inputs), or inputParameters.forkTaskInputs (one branch per entry)",
      });
    }
    return [...issues, ...forkTaskTypeIssues(input, path)];
  }
  for (const [field, value, holds] of [
    ["dynamicForkTasksParam", tasksParam, "the list of tasks to fork"],
    ["dynamicForkTasksInputParamName", inputParam, "the forked tasks' inputs, by reference name"],
  ] as const) {
    const at = childPath(path, field);
    if (typeof value !== "string" || value === "") {
      issues.push({ path: at, message: `${field} must name the input parameter holding ${holds}, but received ${describeValue(value)}` });
    } else if (!Object.hasOwn(input, value)) {
      issues.push({ path: at, message: `${field} names input parameter ${JSON.stringify(value)}, which inputParameters does not set` });
    }
  }
  return issues;
}

/**
 * True when FORK_JOIN_DYNAMIC `task` forks one task per `forkTaskInputs` entry: its `inputParameters` set
 * `forkTaskInputs` and not the list `dynamicForkTasksParam` names. Orkes' definitions of that form may still carry
 * `dynamicForkTasksParam` (and `dynamicForkTasksInputParamName`), naming inputs they do not set: Conductor forks the
 * list only when it is there, so those names are ignored (and not kept: see `validateWorkflowDef`).
 */
export function forksEachInput(task: UnknownRecord): boolean {
  const input = isRecord(task["inputParameters"]) ? task["inputParameters"] : {};
  if (!Object.hasOwn(input, "forkTaskInputs")) return false;
  const tasksParam = task["dynamicForkTasksParam"] ?? task["dynamicForkJoinTasksParam"];
  return typeof tasksParam !== "string" || !Object.hasOwn(input, tasksParam);
}

/**
 * Problems with FORK_JOIN_DYNAMIC `task` given `dynamicForkJoinTasksParam`: it must name an input parameter the fork
 * sets, and come alone, as Conductor's WorkflowTaskTypeConstraint has it (the two forms' fields together are refused
 * there: which one would say what to fork?).
 */
function forkJoinTaskListIssues(task: UnknownRecord, path: string): ValidationIssue[] {
  const input = isRecord(task["inputParameters"]) ? task["inputParameters"] : {};
  const param = task["dynamicForkJoinTasksParam"];
  const at = childPath(path, "dynamicForkJoinTasksParam");
  const others = (["dynamicForkTasksParam", "dynamicForkTasksInputParamName"] as const).filter((field) => task[field] !== undefined);
  if (others.length > 0) {
    return [{ path: at, message: `dynamicForkJoinTasksParam (Conductor's older form) cannot be given with ${others.join(" or ")}: give dynamicForkJoinTasksParam alone, or dynamicForkTasksParam and dynamicForkTasksInputParamName` }];
  }
  if (typeof param !== "string") return [{ path: at, message: `dynamicForkJoinTasksParam must name the input parameter holding the tasks to fork ({dynamicTasks: [...]}), but received ${describeValue(param)}` }];
  if (!Object.hasOwn(input, param)) return [{ path: at, message: `dynamicForkJoinTasksParam names input parameter ${JSON.stringify(param)}, which inputParameters does not set` }];
  return [];
}

/** A `forkTaskType` given as it is (not a `${...}`) must be a type this version can fork. */
function forkTaskTypeIssues(input: UnknownRecord, path: string): ValidationIssue[] {
  const type = input["forkTaskType"];
  if (type === undefined || type === null || isExpression(type)) return [];
  if (typeof type === "string" && (FORKABLE_TYPES as readonly string[]).includes(type)) return [];
  return [{ path: childPath(childPath(path, "inputParameters"), "forkTaskType"), message: `forkTaskType must be one of ${FORKABLE_TYPES.join(", ")}, but received ${describeValue(type)}` }];
}
