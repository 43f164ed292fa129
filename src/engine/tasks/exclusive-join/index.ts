import { SUCCESSFUL_TASK_STATUSES, TERMINAL_TASK_STATUSES, type JsonObject, type TaskExecution, type WorkflowExecution } from "../../model";
import { ranInEarlierRun, runRestarts } from "../../lanes";
import { definitionReferenceName, planTask } from "../../plan";
import type { TaskTypeModule } from "../task-type";
import { waitingForLanes } from "../fork-join";

/**
 * EXCLUSIVE_JOIN (Conductor's): IN_PROGRESS from its start until one of the tasks it names has ended (see
 * {@link exclusiveJoinEnding}); the decider ends it then. Its input is what Conductor's ExclusiveJoinTaskMapper gives:
 * its `joinOn` and its `defaultExclusiveJoinTask`, each empty when not given (its `inputParameters` are not used).
 */
export const exclusiveJoinTask: TaskTypeModule = {
  type: "EXCLUSIVE_JOIN",
  inputTemplate(definition) {
    // Conductor's WorkflowTask holds both as lists, empty when not given, and its mapper copies them both.
    return { joinOn: definition.joinOn ?? [], defaultExclusiveJoinTask: definition.defaultExclusiveJoinTask ?? [] };
  },
  ...waitingForLanes,
};

/** How an IN_PROGRESS EXCLUSIVE_JOIN ends (see {@link exclusiveJoinEnding}). */
export interface ExclusiveJoinEnding {
  readonly status: "COMPLETED" | "FAILED";
  /** The joined task's output, as it is. */
  readonly outputData: JsonObject;
  /** With FAILED: the joined task's reason. */
  readonly reasonForIncompletion?: string;
}

/**
 * How IN_PROGRESS EXCLUSIVE_JOIN `join` ends, once it may, as Conductor's ExclusiveJoin does: the joined task is the
 * first of its `joinOn` that ran (has an instance, not SKIPPED: a SWITCH branch not taken ran none of its tasks; nor
 * replaced, `retried`, with no run since; nor from a run of its lane a workflow retry went back before: see
 * `firstThatRan`); when
 * none did, or that one is still running, the first of its `defaultExclusiveJoinTask` that ran. Once that task has
 * ended, the EXCLUSIVE_JOIN ends with it: COMPLETED with its output when it ended well (COMPLETED_WITH_ERRORS, an
 * optional task that failed, included), else FAILED with its reason. Undefined while there is no such task or it is
 * still running: the EXCLUSIVE_JOIN keeps waiting (for good when no task it names ever runs, as in Conductor). In a
 * DO_WHILE's loop, its joinOn names those of its own iteration (`task3__2`), as Conductor appends the iteration; its
 * defaults are looked up as written (see `defaultThatRan`).
 */
export function exclusiveJoinEnding(state: WorkflowExecution, join: TaskExecution): ExclusiveJoinEnding | undefined {
  const definition = planTask(state.definition, join.definitionIndex);
  // `ref__2` (`ref__2__3` in nested loops) in a loop: the same iterations apply to the names it joins on.
  const base = definitionReferenceName(state.definition, join);
  const iterations = join.referenceTaskName.startsWith(base) ? join.referenceTaskName.slice(base.length) : "";
  let joined = firstThatRan(state, definition?.joinOn ?? [], iterations);
  if (joined === undefined || !TERMINAL_TASK_STATUSES.has(joined.status)) joined = defaultThatRan(state, definition?.defaultExclusiveJoinTask ?? [], iterations);
  if (joined === undefined || !TERMINAL_TASK_STATUSES.has(joined.status)) return undefined;
  if (SUCCESSFUL_TASK_STATUSES.has(joined.status)) return { status: "COMPLETED", outputData: joined.outputData };
  const reason = joined.reasonForIncompletion ?? `${joined.referenceTaskName} ended ${joined.status}`;
  return { status: "FAILED", outputData: {}, reasonForIncompletion: reason };
}

/**
 * The default task an EXCLUSIVE_JOIN falls back on: the first of `defaults` that ran, each looked up as written, as
 * Conductor's ExclusiveJoin looks them up (it appends the iteration to its joinOn only), so that in a loop a task before
 * the loop (one every route ran) is found; only when none of them has an instance, in the join's own iteration (a task
 * of the loop), where Conductor's would wait for good.
 */
function defaultThatRan(state: WorkflowExecution, defaults: readonly string[], iterations: string): TaskExecution | undefined {
  return firstThatRan(state, defaults, "") ?? (iterations === "" ? undefined : firstThatRan(state, defaults, iterations));
}

/**
 * The latest instance of the first of `names` (with `iterations` appended) that has one neither SKIPPED nor replaced
 * (`retried`) nor of a run of its lane that a workflow retry has since gone back before (see `ranInEarlierRun`).
 */
function firstThatRan(state: WorkflowExecution, names: readonly string[], iterations: string): TaskExecution | undefined {
  const restarts = runRestarts(state);
  for (const name of names) {
    const reference = name + iterations;
    // Its latest instance (a retry's, when it was retried), as Conductor's getTaskByRefName gives. One marked retried
    // has no run of its own yet: a workflow retry that runs a lane again from a permissive task before it runs it again
    // only if the lane reaches it anew (a SWITCH before it may now take another case). Until then it is passed over as
    // a task that has not run, as Conductor's decider passes over retried tasks: read, its failure failed the
    // EXCLUSIVE_JOIN the retry reached again, for a route that run did not take.
    const latest = state.tasks.findLast((task) => task.referenceTaskName === reference);
    // Nor is one from a run of its lane that such a retry went back before (see `ranInEarlierRun`): the lane, run
    // again, took this route anew (it then runs the task again) or another one, whose task is the one joined.
    if (latest !== undefined && latest.status !== "SKIPPED" && latest.retried !== true && !ranInEarlierRun(state, latest, restarts)) return latest;
  }
  return undefined;
}
