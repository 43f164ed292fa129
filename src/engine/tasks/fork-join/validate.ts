/**
 * Registration-time checks of FORK_JOIN and JOIN tasks' own fields. The tasks inside a fork's branches are checked by
 * the definition validator like any other task, and so is the pairing of each FORK_JOIN with the JOIN after it
 * (see `validateWorkflowDef`).
 */
import { describeValue, isNonEmptyString, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";

/** Every problem with a FORK_JOIN task's `forkTasks`: a non-empty list of branches, each a non-empty list of tasks. */
export function validateForkJoinTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const forkTasks = task["forkTasks"];
  const at = childPath(path, "forkTasks");
  if (!Array.isArray(forkTasks) || forkTasks.length === 0) {
    return [{ path: at, message: `forkTasks must be a non-empty list of branches, each a non-empty list of tasks run one after another, but received ${describeValue(forkTasks)}` }];
  }
  return forkTasks.flatMap((branch: unknown, index) =>
    Array.isArray(branch) && branch.length > 0 ? [] : [{ path: childPath(at, index), message: `each branch must be a non-empty list of tasks, but received ${describeValue(branch)}` }],
  );
}

/** Every problem with a JOIN task's `joinOn`: absent (waits for nothing, as in Conductor) or a list of reference names. */
export function validateJoinTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const joinOn = task["joinOn"];
  if (joinOn === undefined || joinOn === null) return [];
  const at = childPath(path, "joinOn");
  if (!Array.isArray(joinOn)) return [{ path: at, message: `joinOn must be a list of the reference names of tasks in the branches of the FORK_JOIN before it, but received ${describeValue(joinOn)}` }];
  return joinOn.flatMap((reference: unknown, index) =>
    isNonEmptyString(reference) ? [] : [{ path: childPath(at, index), message: `each joinOn entry must be a task reference name, but received ${describeValue(reference)}` }],
  );
}
