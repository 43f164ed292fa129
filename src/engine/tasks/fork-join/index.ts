import { activeLanes, neverReached, type ActiveLane } from "../../lanes";
import { SUCCESSFUL_TASK_STATUSES, type JsonObject, type TaskExecution, type WorkflowExecution } from "../../model";
import { setOwn } from "../../own-property";
import { planIndexOf, planOf, planTask } from "../../plan";
import type { TaskTypeModule } from "../task-type";

/**
 * FORK_JOIN (Conductor's static fork): completes at once, with an empty output; the decider then runs each of its
 * branches as a lane of its own, side by side (see `lanes.ts`).
 */
export const forkJoinTask: TaskTypeModule = {
  type: "FORK_JOIN",
  start(task, _definition, _execution, env) {
    return { task: { ...task, status: "COMPLETED", outputData: {}, startTime: env.now, endTime: env.now, updateTime: env.now }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};

/**
 * JOIN: IN_PROGRESS from its start until every task of its `joinOn` has ended well (see {@link joinOutput}); the
 * decider completes it then. Its input shows what it waits for, as Conductor's does.
 */
export const joinTask: TaskTypeModule = {
  type: "JOIN",
  inputTemplate(definition) {
    return { ...(definition.inputParameters ?? {}), joinOn: definition.joinOn ?? [] };
  },
  start(task, _definition, _execution, env) {
    return { task: { ...task, status: "IN_PROGRESS", startTime: env.now, updateTime: env.now }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};

/**
 * The output of IN_PROGRESS JOIN `join` once it may complete: each `joinOn` task's output under its reference name,
 * as Conductor's JOIN gives. Undefined while one of them is yet to end well: still to run or running, or failed (its
 * lane then retries it or fails the workflow). A task its branch passed over (a SWITCH took another way), or whose
 * fork was skipped, is not waited for, and has no entry. `lanes`: the active lanes, when the caller has them.
 */
export function joinOutput(state: WorkflowExecution, join: TaskExecution, lanes: readonly ActiveLane[] = activeLanes(state)): JsonObject | undefined {
  const joinOn = planTask(state.definition, join.definitionIndex)?.joinOn ?? [];
  // In a loop, the JOIN waits for what its fork's run of this iteration ran: instances after that run's fork.
  const plan = planOf(state.definition);
  const fork = plan.forkOfJoin.get(join.definitionIndex);
  const inLoop = fork !== undefined && plan.steps[fork]?.inLoop !== undefined;
  const since = inLoop ? (state.tasks.findLast((task) => task.definitionIndex === fork && task.seq < join.seq)?.seq ?? -1) : -1;
  // One pass over the tasks, not one per joined task: a dynamic fork's JOIN may wait for a thousand of them.
  const latestByStep = new Map<number, TaskExecution>();
  for (const task of state.tasks) if (task.seq > since) latestByStep.set(task.definitionIndex, task);
  const output: JsonObject = {};
  for (const reference of joinOn) {
    const index = planIndexOf(state.definition, reference);
    const latest = latestByStep.get(index);
    if (latest === undefined) {
      if (!neverReached(state, index, lanes)) return undefined;
      continue;
    }
    if (!SUCCESSFUL_TASK_STATUSES.has(latest.status)) return undefined;
    setOwn(output, reference, latest.outputData);
  }
  return output;
}
