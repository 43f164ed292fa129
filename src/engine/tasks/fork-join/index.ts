import { activeLanes, neverReached, type ActiveLane } from "../../lanes";
import { SUCCESSFUL_TASK_STATUSES, type JsonObject, type TaskExecution, type WorkflowDef, type WorkflowExecution } from "../../model";
import { setOwn } from "../../own-property";
import { instanceTask, nextPlanIndex, planIndexOf, planOf, planTask, type PlanStep } from "../../plan";
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
 * JOIN: IN_PROGRESS from its start until every task of its `joinOn` has ended well (see {@link joinEnding}); the
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

/** How an IN_PROGRESS JOIN ends once every task it waits for has ended well (see {@link joinEnding}). */
export interface JoinEnding {
  readonly status: "COMPLETED" | "COMPLETED_WITH_ERRORS";
  readonly outputData: JsonObject;
  /** With COMPLETED_WITH_ERRORS: which optional joined tasks failed, in Conductor's words. */
  readonly reasonForIncompletion?: string;
}

/**
 * How IN_PROGRESS JOIN `join` ends, once it may: each joined task's output under its reference name, as Conductor's
 * JOIN gives. A `joinOn` entry naming a SWITCH (or DECISION) that has ended stands for the last task of the branch it
 * took, as Conductor resolves it (see {@link joinedStep}), and the output holds that task's. COMPLETED_WITH_ERRORS
 * when an optional joined task failed (it ended COMPLETED_WITH_ERRORS), as Conductor's JOIN ends then.
 * Undefined while one of them is yet to end well: still to run or running, or failed (its lane then retries it or
 * fails the workflow). A task its branch passed over (a SWITCH took another way), or whose fork was skipped, is not
 * waited for, and has no entry. `lanes`: the active lanes, when the caller has them.
 */
export function joinEnding(state: WorkflowExecution, join: TaskExecution, lanes: readonly ActiveLane[] = activeLanes(state)): JoinEnding | undefined {
  const joinOn = planTask(state.definition, join.definitionIndex)?.joinOn ?? [];
  // In a loop, the JOIN waits for what its fork's run of this iteration ran: instances after that run's fork.
  const plan = planOf(state.definition);
  const fork = plan.forkOfJoin.get(join.definitionIndex);
  const inLoop = fork !== undefined && plan.steps[fork]?.inLoop !== undefined;
  const since = inLoop ? (state.tasks.findLast((task) => task.definitionIndex === fork && task.seq < join.seq)?.seq ?? -1) : -1;
  // One pass over the tasks, not one per joined task: a dynamic fork's JOIN may wait for a thousand of them.
  const latestByStep = new Map<number, TaskExecution>();
  for (const task of state.tasks) if (task.seq > since) latestByStep.set(task.definitionIndex, task);
  const outputData: JsonObject = {};
  const failedOptional: TaskExecution[] = [];
  for (const reference of joinOn) {
    const index = joinedStep(state.definition, planIndexOf(state.definition, reference), latestByStep);
    const latest = latestByStep.get(index);
    if (latest === undefined) {
      if (!neverReached(state, index, lanes)) return undefined;
      continue;
    }
    if (!SUCCESSFUL_TASK_STATUSES.has(latest.status)) return undefined;
    setOwn(outputData, plan.steps[index]?.task.taskReferenceName ?? reference, latest.outputData);
    if (latest.status === "COMPLETED_WITH_ERRORS" && instanceTask(state.definition, latest)?.optional === true) failedOptional.push(latest);
  }
  if (failedOptional.length === 0) return { status: "COMPLETED", outputData };
  const failures = failedOptional.map((task) => `${task.taskDefName}/${task.taskId} `).join("");
  return { status: "COMPLETED_WITH_ERRORS", outputData, reasonForIncompletion: `${failures}completed with errors` };
}

/**
 * The step a JOIN waits for in place of step `index`, named in its `joinOn` (Conductor's Switch.getTerminalTaskRef):
 * for a SWITCH (or DECISION) that completed, the last task of the branch it took, and so on down while that is a
 * SWITCH that completed too; the SWITCH itself when that branch is empty. Any other step, or a SWITCH yet to end,
 * stands for itself. `latestByStep`: the latest instance of each step that the JOIN looks at.
 */
function joinedStep(definition: WorkflowDef, index: number, latestByStep: ReadonlyMap<number, TaskExecution>): number {
  const steps = planOf(definition).steps;
  let current = index;
  for (;;) {
    const step = steps[current];
    const task = latestByStep.get(current);
    if (step?.branches === undefined || task === undefined) return current;
    const first = nextPlanIndex(definition, task);
    // A SWITCH not COMPLETED (yet to end, skipped, optional and failed) or whose branch is empty goes on to its successor.
    if (first === step.next) return current;
    // A branch lies after its SWITCH in the plan: each turn goes further down, so this ends.
    current = lastOfBranch(steps, first, step.next);
  }
}

/** The last top-level task of the SWITCH branch starting at step `first`, which its successor `after` follows. */
function lastOfBranch(steps: readonly PlanStep[], first: number, after: number): number {
  let last = first;
  while (steps[last] !== undefined && steps[last]!.next !== after) last = steps[last]!.next;
  return last;
}
