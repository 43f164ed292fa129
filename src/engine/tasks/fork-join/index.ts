import { activeLanes, latestInstanceSince, neverReached, ranInEarlierRun, runRestarts, type ActiveLane } from "../../lanes";
import { SUCCESSFUL_TASK_STATUSES, TERMINAL_TASK_STATUSES, type JsonObject, type TaskExecution, type WorkflowDef, type WorkflowExecution } from "../../model";
import { setOwn } from "../../own-property";
import { chosenBranchEnds, failsPermissively, instanceTask, nextPlanIndex, planIndexOf, planOf, planTask, type PlanStep } from "../../plan";
import { describeValue, isJsonObject, isOneOf } from "../../definition/checks";
import { cutText, MAX_TASK_REASON_LENGTH } from "../../limits";
import type { ScriptRunner } from "../../scripts";
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
 * How a task that waits for the execution's other lanes (JOIN, EXCLUSIVE_JOIN) starts: IN_PROGRESS, nothing to
 * dispatch; the decider ends it once the tasks it waits for have.
 */
export const waitingForLanes: Pick<TaskTypeModule, "start" | "attemptDeadline"> = {
  start(task, _definition, _execution, env) {
    return { task: { ...task, status: "IN_PROGRESS", startTime: env.now, updateTime: env.now }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};

/**
 * JOIN: IN_PROGRESS from its start until every task of its `joinOn` has ended well (see {@link joinEnding}), or, with
 * a join script, until that says how it ends (see {@link scriptedJoinEnding}); the decider ends it then. Its input
 * shows what it waits for, as Conductor's does.
 */
export const joinTask: TaskTypeModule = {
  type: "JOIN",
  inputTemplate(definition) {
    return { ...(definition.inputParameters ?? {}), joinOn: definition.joinOn ?? [] };
  },
  ...waitingForLanes,
};

/** How an IN_PROGRESS JOIN ends once every task it waits for has ended (see {@link joinEnding}). */
export interface JoinEnding {
  readonly status: "COMPLETED" | "COMPLETED_WITH_ERRORS" | "FAILED";
  readonly outputData: JsonObject;
  /** With COMPLETED_WITH_ERRORS: which optional joined tasks failed, in Conductor's words; with FAILED, their reasons. */
  readonly reasonForIncompletion?: string;
}

/**
 * How IN_PROGRESS JOIN `join` ends, once it may: each joined task's output under its reference name, as Conductor's
 * JOIN gives. A `joinOn` entry naming a SWITCH (or DECISION) that has ended stands for the last task of the branch it
 * took, as Conductor resolves it (see {@link joinedStep}), and the output holds that task's. COMPLETED_WITH_ERRORS
 * when an optional joined task failed (it ended COMPLETED_WITH_ERRORS), as Conductor's JOIN ends then. FAILED, with
 * the failed ones' reasons, when a permissive joined task failed for good (see `failsPermissively`) and every other
 * one has ended, as Conductor's Join waits for all of them then (the caller makes sure its retries are spent).
 * Undefined while one of them is yet to end well: still to run or running, or failed (its lane then retries it or
 * fails the workflow). A task its branch passed over (a SWITCH took another way), or whose fork was skipped, is not
 * waited for, and has no entry. `lanes`: the active lanes, when the caller has them.
 */
export function joinEnding(state: WorkflowExecution, join: TaskExecution, lanes: readonly ActiveLane[] = activeLanes(state)): JoinEnding | undefined {
  const plan = planOf(state.definition);
  const ended: Array<{ readonly reference: string; readonly index: number; readonly latest: TaskExecution }> = [];
  let failedPermissive: TaskExecution[] | undefined;
  for (const { reference, index, latest } of joinedTasks(state, join)) {
    if (latest === undefined) {
      if (!neverReached(state, index, lanes)) return undefined;
      continue;
    }
    if (!SUCCESSFUL_TASK_STATUSES.has(latest.status)) {
      // Only a permissive task's failure lets the others run on; any other is its lane's to retry or fail the workflow.
      if (!plan.hasPermissive || !TERMINAL_TASK_STATUSES.has(latest.status) || !failsPermissively(state.definition, latest)) return undefined;
      (failedPermissive ??= []).push(latest);
    }
    ended.push({ reference, index, latest });
  }
  // The output is made once the JOIN ends: a JOIN still waiting is looked at after every move of a decision, and made
  // on the way, the output of a wide fork's ended tasks cost a copy of each every time.
  const outputData: JsonObject = {};
  const failedOptional: TaskExecution[] = [];
  for (const { reference, index, latest } of ended) {
    setOwn(outputData, plan.steps[index]?.task.taskReferenceName ?? reference, latest.outputData);
    if (latest.status === "COMPLETED_WITH_ERRORS" && instanceTask(state.definition, latest)?.optional === true) failedOptional.push(latest);
  }
  if (failedPermissive !== undefined) {
    const reasons = failedPermissive.map((task) => task.reasonForIncompletion ?? `Task ${task.referenceTaskName} ended ${task.status}`).join(" ");
    return { status: "FAILED", outputData, reasonForIncompletion: cutText(reasons, MAX_TASK_REASON_LENGTH) };
  }
  if (failedOptional.length === 0) return { status: "COMPLETED", outputData };
  const failures = failedOptional.map((task) => `${task.taskDefName}/${task.taskId} `).join("");
  return { status: "COMPLETED_WITH_ERRORS", outputData, reasonForIncompletion: `${failures}completed with errors` };
}

/** One task a JOIN waits for: the name its `joinOn` gives, the step standing for it, and that step's latest instance. */
interface JoinedTask {
  readonly reference: string;
  readonly index: number;
  readonly latest: TaskExecution | undefined;
}

/**
 * The tasks JOIN `join` waits for, in its `joinOn`'s order (after a dynamic fork, every task the fork ran; after a
 * CONDITIONAL_FORK, the last task of each branch it chose, whatever its `joinOn` says: see {@link joinOnOf}). Each is
 * looked up as it is asked for: a JOIN still waiting is found so at the first task it waits for, and a decision asks
 * after every move of a fork a thousand tasks wide.
 */
function* joinedTasks(state: WorkflowExecution, join: TaskExecution): Generator<JoinedTask> {
  // The JOIN waits for what its fork's latest run ran: instances after that run's fork. In a loop, this iteration's;
  // outside one, a workflow retry that ran a lane again from a permissive task before the fork leaves the earlier
  // run's branch tasks, which the fork reached anew runs afresh.
  const plan = planOf(state.definition);
  const fork = plan.forkOfJoin.get(join.definitionIndex);
  const forkTask = fork === undefined ? undefined : latestInstanceSince(state, fork, -Infinity, (task) => task.seq < join.seq);
  const joinOn = joinOnOf(state.definition, join.definitionIndex, forkTask);
  const since = forkTask?.seq ?? -1;
  // Nor is an instance from a run of its lane that such a retry went back before: the lane runs the task again (its
  // latest instance before it is a task's that ended well, which the retry keeps), and until it reaches it anew, or
  // goes on past it another way, the JOIN waits, as for a task not reached yet. Its latest instance being of that
  // earlier run, so are the ones before it.
  const restarts = runRestarts(state);
  // An instance marked retried is replaced, not the task's last word: that is its next instance, or, where a workflow
  // retry runs its lane again from a permissive task before it, the one the lane makes once it reaches it anew (until
  // then the JOIN waits, as for a task not reached yet).
  const latestOf = (index: number): TaskExecution | undefined => {
    const latest = latestInstanceSince(state, index, since, (task) => task.retried !== true);
    return latest === undefined || ranInEarlierRun(state, latest, restarts) ? undefined : latest;
  };
  for (const reference of joinOn) {
    const index = joinedStep(state.definition, planIndexOf(state.definition, reference), latestOf);
    yield { reference, index, latest: latestOf(index) };
  }
}

/**
 * What the JOIN at step `joinIndex` waits for, after fork instance `forkTask` (the one before it): its `joinOn`; after
 * a CONDITIONAL_FORK, the last task of each branch that fork chose, as Conductor's ConditionalForkTaskMapper gives its
 * JOIN in place of the definition's `joinOn`.
 */
export function joinOnOf(definition: WorkflowDef, joinIndex: number, forkTask: TaskExecution | undefined): string[] {
  if (forkTask !== undefined && planTask(definition, forkTask.definitionIndex)?.type === "CONDITIONAL_FORK") return chosenBranchEnds(definition, forkTask);
  return planTask(definition, joinIndex)?.joinOn ?? [];
}

/** What an IN_PROGRESS JOIN's join script decided, evaluated once (see {@link scriptedJoinEnding}). */
export type JoinScriptDecision =
  /** The JOIN ends so. */
  | { readonly ends: true; readonly status: "COMPLETED" | "FAILED" | "FAILED_WITH_TERMINAL_ERROR"; readonly outputData: JsonObject; readonly reasonForIncompletion?: string }
  /** It keeps waiting, showing `shown` (an IN_PROGRESS result's outputData and reason) when the script gave any. */
  | { readonly ends: false; readonly shown?: { readonly outputData: JsonObject; readonly reasonForIncompletion?: string } };

/** The statuses a join script's result may give, as a worker's TaskResult may. */
const JOIN_SCRIPT_STATUSES = ["COMPLETED", "IN_PROGRESS", "FAILED", "FAILED_WITH_TERMINAL_ERROR"] as const;

/**
 * How IN_PROGRESS JOIN `join`, which has a join script (Orkes': see `joinScript`), ends: the script decides, instead of
 * its `joinOn` (it may end before every joined task has, and those go on running, as a JOIN's unjoined branches do).
 * It runs with `$` bound to the JOIN's input, with `$.joinOn` the reference names it joins on (after a dynamic fork,
 * every task the fork ran) and `$[name]` each of those tasks scheduled so far (its status, outputData, reason…).
 * `true` completes the JOIN; an object `{status, outputData, reasonForIncompletion}` gives it that status (COMPLETED,
 * FAILED, FAILED_WITH_TERMINAL_ERROR, or IN_PROGRESS to keep waiting); `false` or nothing keeps it waiting. Once it
 * ends, its output holds each joined task's output under its name, as a JOIN's does, and then the script's outputData.
 * A script that fails, or returns anything else, fails the JOIN with the reason. Each reason, its own or one the script
 * gave, goes through `scrub` with what the script read (its `$`) before it is cut: it may quote a masked value of a
 * joined task's output (see masked-reason.ts).
 */
export function scriptedJoinEnding(state: WorkflowExecution, join: TaskExecution, script: string, scripts: ScriptRunner, scrub: (reason: string, read: JsonObject) => string): JoinScriptDecision {
  const plan = planOf(state.definition);
  const joined = [...joinedTasks(state, join)];
  const input: JsonObject = { ...join.inputData, joinOn: joined.map(({ reference }) => reference) };
  const outputData: JsonObject = {};
  for (const { reference, index, latest } of joined) {
    if (latest === undefined) continue;
    setOwn(input, reference, joinedTaskView(latest));
    setOwn(outputData, plan.steps[index]?.task.taskReferenceName ?? reference, latest.outputData);
  }
  const shownReason = (reason: string): string => cutText(scrub(reason, input), MAX_TASK_REASON_LENGTH);
  const failed = (reason: string): JoinScriptDecision => ({ ends: true, status: "FAILED", outputData, reasonForIncompletion: shownReason(reason) });
  const outcome = scripts.run(script, input);
  if (!outcome.ok) return failed(`The JOIN script failed: ${outcome.error}`);
  const result = outcome.value;
  if (result === true) return { ends: true, status: "COMPLETED", outputData };
  if (result === false || result === null) return { ends: false };
  const expected = `it must return true, false, or an object whose status is one of ${JOIN_SCRIPT_STATUSES.join(", ")}`;
  if (!isJsonObject(result)) return failed(`The JOIN script returned ${describeValue(result)}: ${expected}`);
  const status = result["status"];
  if (!isOneOf(JOIN_SCRIPT_STATUSES)(status)) return failed(`The JOIN script returned an object whose status is ${describeValue(status)}: ${expected}`);
  const scriptOutput = result["outputData"] ?? {};
  if (!isJsonObject(scriptOutput)) return failed(`The JOIN script returned an object whose outputData is ${describeValue(scriptOutput)}: it must be an object`);
  const reason = result["reasonForIncompletion"];
  const reasonForIncompletion = reason === undefined || reason === null ? undefined : shownReason(typeof reason === "string" ? reason : JSON.stringify(reason));
  const withReason = reasonForIncompletion === undefined ? {} : { reasonForIncompletion };
  if (status === "IN_PROGRESS") return { ends: false, shown: { outputData: scriptOutput, ...withReason } };
  const ended = { ...outputData, ...scriptOutput };
  if (status === "COMPLETED") return { ends: true, status, outputData: ended };
  return { ends: true, status, outputData: ended, reasonForIncompletion: reasonForIncompletion ?? `The JOIN script returned ${status}` };
}

/** What a join script sees of a task it joins on: the fields of Conductor's Task that say how it stands. */
function joinedTaskView(task: TaskExecution): JsonObject {
  const view: JsonObject = {
    taskId: task.taskId,
    referenceTaskName: task.referenceTaskName,
    taskType: task.taskType,
    taskDefName: task.taskDefName,
    status: task.status,
    outputData: task.outputData,
    retryCount: task.retryCount,
    startTime: task.startTime,
    endTime: task.endTime,
  };
  if (task.reasonForIncompletion !== undefined) view["reasonForIncompletion"] = task.reasonForIncompletion;
  return view;
}

/**
 * The step a JOIN waits for in place of step `index`, named in its `joinOn` (Conductor's Switch.getTerminalTaskRef):
 * for a SWITCH (or DECISION) that completed, the last task of the branch it took, and so on down while that is a
 * SWITCH that completed too; the SWITCH itself when that branch is empty. Any other step, or a SWITCH yet to end,
 * stands for itself. `latestOf`: the latest instance of a step that the JOIN looks at.
 */
function joinedStep(definition: WorkflowDef, index: number, latestOf: (index: number) => TaskExecution | undefined): number {
  const steps = planOf(definition).steps;
  let current = index;
  for (;;) {
    const step = steps[current];
    const task = latestOf(current);
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
