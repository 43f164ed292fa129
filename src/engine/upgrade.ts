/**
 * Orkes' upgrade of a running execution to another version of its definition (`POST /api/workflow/{id}/upgrade`): the
 * execution goes on from where it stands under the new version. Its task instances are mapped onto the new version's
 * steps by reference name; the new version's tasks that come before where a lane stands, which it never ran, are
 * recorded SKIPPED (with the output the upgrade gives them), so that later tasks can read them.
 *
 * What cannot be mapped is refused, changing nothing: a task that has run must be in the new version too, of the same
 * type and in the same place (at the top level, or in the same branch of the same SWITCH, FORK_JOIN or CONDITIONAL_FORK, or in the same
 * DO_WHILE's loop), and a permissive task whose failure the execution ran on past must be permissive there too, or the
 * execution's past would no longer be a path through its definition.
 */
import type { DecideEnv } from "./config";
import type { Draft } from "./draft";
import { EngineError } from "./errors";
import { activeLanes, latestInstance } from "./lanes";
import { overExecutionLimitReason, storedDefinitionOversizeReason, storedTasksBytes } from "./limits";
import type { JsonObject, JsonValue, TaskExecution, WorkflowDef, WorkflowTaskDef } from "./model";
import { definitionReferenceName, failsPermissively, isPermissiveFailure, planIndexOf, planOf, planTask } from "./plan";
import { joinOnOf } from "./tasks/fork-join";
import { taskIdWithin } from "./task-id";
import { withInputTemplate, workflowInputOversizeReason } from "./workflow-input";

/** An upgrade as asked (see the `upgrade` event). */
export interface UpgradeRequest {
  /** The registered definition to run from now on: the execution's workflow, another version. */
  definition: WorkflowDef;
  /** Replaces the execution's input (under the new version's `inputTemplate`). */
  workflowInput?: JsonObject;
  /** The output of each task the upgrade records SKIPPED, by reference name. */
  taskOutput?: Record<string, JsonObject>;
}

/**
 * Moves the execution in `draft` to `request.definition` (see the module comment); throws an {@link EngineError}
 * (nothing changed) when it cannot be. The caller checks the execution's status and settles its deadline.
 */
export function applyUpgrade(draft: Draft, request: UpgradeRequest, env: DecideEnv): void {
  const state = draft.state;
  const upgraded = request.definition;
  const what = `Cannot upgrade workflow ${state.workflowId} to ${upgraded.name} version ${upgraded.version}`;
  if (upgraded.name !== state.workflowName) throw new EngineError("INVALID", `${what}: it is an execution of ${state.workflowName}; only another version of the same workflow can be run from where it stands`);
  // The execution's own copy keeps what it learned as it ran: the tasks its dynamic forks forked, the task
  // definitions looked up for them (see WorkflowDef).
  const definition: WorkflowDef = { ...upgraded };
  if (state.definition.dynamicForks !== undefined) definition.dynamicForks = state.definition.dynamicForks;
  if (state.definition.lookedUpTaskDefs !== undefined) definition.lookedUpTaskDefs = state.definition.lookedUpTaskDefs;
  // The new version's task definitions (copied in by the caller) with what it learned: stored whole, or not at all.
  const tooLarge = storedDefinitionOversizeReason(definition, what);
  if (tooLarge !== undefined) throw new EngineError("CONFLICT", tooLarge);
  const indexes = mappedSteps(state.tasks, state.definition, definition, what);
  let input = state.input;
  if (request.workflowInput !== undefined) {
    const reason = workflowInputOversizeReason(definition, request.workflowInput, env.config.maxPayloadBytes);
    if (reason !== undefined) throw new EngineError("INVALID", reason);
    input = withInputTemplate(definition, request.workflowInput);
  }
  // Read before the patch: `state` is the draft's, which the patch changes.
  const current = state.definition;
  draft.patch({ definition, workflowVersion: definition.version, input, updateTime: env.now });
  for (const task of state.tasks) {
    const index = indexes.get(task.taskId)!;
    const forkedBranches = chosenUnder(task, planTask(current, task.definitionIndex), planTask(definition, index));
    if (forkedBranches !== task.forkedBranches) draft.updateTask(task.taskId, { definitionIndex: index, forkedBranches });
    else if (index !== task.definitionIndex) draft.updateTask(task.taskId, { definitionIndex: index });
  }
  showJoinedBranches(draft);
  showExclusiveJoinLists(draft);
  const skipped = skipPassedSteps(draft, request.taskOutput ?? {}, env);
  const unused = Object.keys(request.taskOutput ?? {}).filter((reference) => !skipped.has(reference));
  if (unused.length > 0) {
    const listed = skipped.size === 0 ? "it skips none" : `it skips ${[...skipped].join(", ")}`;
    throw new EngineError("INVALID", `${what}: taskOutput names ${unused.join(", ")}, which the upgrade does not skip (${listed})`);
  }
  const bytes = storedTasksBytes(draft.state.tasks);
  if (bytes > env.config.maxExecutionBytes) throw new EngineError("INVALID", `${what}: ${overExecutionLimitReason(bytes, env.config.maxExecutionBytes)}`);
  // Skips asked for tasks the new version does not have could never apply.
  const pendingSkips = state.pendingSkips?.filter((skip) => planIndexOf(definition, skip.taskReferenceName) >= 0);
  if (pendingSkips !== state.pendingSkips) draft.patch({ pendingSkips: pendingSkips?.length ? pendingSkips : undefined });
  if (state.pendingJump !== undefined && planIndexOf(definition, state.pendingJump.taskReferenceName) < 0) draft.patch({ pendingJump: undefined });
}

/**
 * The branches CONDITIONAL_FORK instance `task` chose, as places in the upgraded fork `now` (`was` its old version):
 * its defaultCase is recorded as the place after its last conditional branch, which moves when the new version adds or
 * removes branches, so it is moved with them (or the fork would run a branch it never chose, its JOIN waiting for it,
 * and leave the defaultCase's tasks running unjoined). A chosen conditional branch keeps its place: its first task ran,
 * and a task that ran must stay in the same branch (see {@link mappedSteps}). Unchanged for any other task.
 */
function chosenUnder(task: TaskExecution, was: WorkflowTaskDef | undefined, now: WorkflowTaskDef | undefined): number[] | undefined {
  if (task.forkedBranches === undefined || was?.type !== "CONDITIONAL_FORK" || now?.type !== "CONDITIONAL_FORK") return task.forkedBranches;
  const before = was.conditionalBranches?.length ?? 0;
  const after = now.conditionalBranches?.length ?? 0;
  return before === after ? task.forkedBranches : task.forkedBranches.map((position) => (position === before ? after : position));
}

/**
 * Gives each running JOIN of a FORK_JOIN or CONDITIONAL_FORK the `joinOn` it waits for under the upgraded definition
 * (the new version's `joinOn`, which may join a branch it added; after a CONDITIONAL_FORK, the last task of each branch
 * its fork chose, which the new version may have changed), as its input shows it (see `resolveTaskInput`): the JOIN
 * waits for that list, and Conductor's JOIN waits for the `joinOn` its input shows. A dynamic fork's JOIN keeps its
 * own: what the fork forked, which the upgrade does not change.
 */
function showJoinedBranches(draft: Draft): void {
  const state = draft.state;
  const plan = planOf(state.definition);
  for (const task of state.tasks) {
    const fork = plan.forkOfJoin.get(task.definitionIndex);
    const forkType = fork === undefined ? undefined : planTask(state.definition, fork)?.type;
    if (task.status !== "IN_PROGRESS" || (forkType !== "CONDITIONAL_FORK" && forkType !== "FORK_JOIN")) continue;
    const forkTask = state.tasks.findLast((other) => other.definitionIndex === fork && other.seq < task.seq);
    const joinOn = joinOnOf(state.definition, task.definitionIndex, forkTask);
    if (sameNames(task.inputData["joinOn"], joinOn)) continue;
    draft.updateTask(task.taskId, { inputData: { ...task.inputData, joinOn } });
  }
}

/**
 * Gives each running EXCLUSIVE_JOIN the `joinOn` and `defaultExclusiveJoinTask` of its upgraded definition, which it
 * ends by from now on (see `exclusiveJoinEnding`), as its input shows them (Conductor's ExclusiveJoin reads both from
 * its input).
 */
function showExclusiveJoinLists(draft: Draft): void {
  const state = draft.state;
  for (const task of state.tasks) {
    const step = task.status === "IN_PROGRESS" && task.taskType === "EXCLUSIVE_JOIN" ? planTask(state.definition, task.definitionIndex) : undefined;
    if (step?.type !== "EXCLUSIVE_JOIN") continue;
    const lists = { joinOn: step.joinOn ?? [], defaultExclusiveJoinTask: step.defaultExclusiveJoinTask ?? [] };
    if (sameNames(task.inputData["joinOn"], lists.joinOn) && sameNames(task.inputData["defaultExclusiveJoinTask"], lists.defaultExclusiveJoinTask)) continue;
    draft.updateTask(task.taskId, { inputData: { ...task.inputData, ...lists } });
  }
}

/** True when `shown` (an input's value) is the list `names`. */
function sameNames(shown: JsonValue | undefined, names: readonly string[]): boolean {
  return Array.isArray(shown) && shown.length === names.length && shown.every((name, position) => name === names[position]);
}

/** The step of `upgraded` each task instance maps to, by task id; throws when one has none (see the module comment). */
function mappedSteps(tasks: readonly TaskExecution[], current: WorkflowDef, upgraded: WorkflowDef, what: string): Map<string, number> {
  const currentPlaces = placesOf(current);
  const upgradedPlaces = placesOf(upgraded);
  const indexes = new Map<string, number>();
  // What dynamic forks forked is laid out after the definition's own steps, in the same order under either version
  // (the execution keeps its runs): a forked instance keeps its run's step, though a later run forked its name again.
  const shift = planOf(upgraded).firstForkedStep - planOf(current).firstForkedStep;
  for (const task of tasks) {
    const reference = definitionReferenceName(current, task);
    const forked = task.definitionIndex >= planOf(current).firstForkedStep ? task.definitionIndex + shift : -1;
    const index = planTask(upgraded, forked)?.taskReferenceName === reference ? forked : planIndexOf(upgraded, reference);
    if (index < 0) throw new EngineError("CONFLICT", `${what}: its task ${reference} has run (${task.status}), and that version has no task of that reference name`);
    const was = planTask(current, task.definitionIndex)!;
    const now = planTask(upgraded, index)!;
    if (now.type !== was.type) throw new EngineError("CONFLICT", `${what}: its task ${reference} has run as a ${was.type}, which that version makes a ${now.type}`);
    const place = upgradedPlaces.get(reference);
    if (place !== currentPlaces.get(reference)) {
      throw new EngineError("CONFLICT", `${what}: its task ${reference} has run ${describePlace(currentPlaces.get(reference))}, which that version puts ${describePlace(place)}`);
    }
    // A permissive task's failure let the execution run on past it; under a version where it is not permissive that
    // failure would have ended it (or, optional, not be a failure): a past that is no path through that version. Let
    // through, it was forgotten (the workflow completed with the task FAILED) or failed the workflow only once looked at.
    if (isPermissiveFailure(current, task) && !failsPermissively(upgraded, { ...task, definitionIndex: index })) {
      throw new EngineError("CONFLICT", `${what}: its task ${reference} failed (${task.status}) and the execution ran on past it as it is permissive, which that version does not make it`);
    }
    indexes.set(task.taskId, index);
  }
  return indexes;
}

/**
 * Where each task of `definition` lies, by reference name: the chain of SWITCH cases, FORK_JOIN branches and DO_WHILE
 * loops around it (empty at the top level); the tasks a dynamic fork forked lie in that fork.
 */
function placesOf(definition: WorkflowDef): Map<string, string> {
  const places = new Map<string, string>();
  const visit = (tasks: readonly WorkflowTaskDef[], place: string): void => {
    for (const task of tasks) {
      if (!places.has(task.taskReferenceName)) places.set(task.taskReferenceName, place);
      const inside = `${place}/${task.taskReferenceName}`;
      for (const [value, branch] of Object.entries(task.decisionCases ?? {})) visit(branch, `${inside}[case ${JSON.stringify(value)}]`);
      if (task.defaultCase !== undefined) visit(task.defaultCase, `${inside}[defaultCase]`);
      task.forkTasks?.forEach((branch, position) => visit(branch, `${inside}[branch ${position + 1}]`));
      task.conditionalBranches?.forEach((branch, position) => visit(branch.tasks, `${inside}[branch ${position + 1}]`));
      if (task.loopOver !== undefined) visit(task.loopOver, `${inside}[loop]`);
    }
  };
  visit(definition.tasks, "");
  for (const run of definition.dynamicForks ?? []) visit(run.tasks, `${places.get(run.fork) ?? ""}/${run.fork}[forked]`);
  return places;
}

/** A place of {@link placesOf} in words. */
function describePlace(place: string | undefined): string {
  if (place === undefined) return "nowhere";
  return place === "" ? "at the top level" : `in ${place.slice(1).replaceAll("/", " > ")}`;
}

/**
 * Records SKIPPED every step the upgraded definition has before the head of a running lane that no instance stands
 * for (a task the new version added there), just before the lane's first task after it; its output is the one
 * `taskOutput` gives its reference name. Steps in SWITCH branches and DO_WHILE loops are left alone: those branches
 * and iterations were chosen and run under the old version. The reference names skipped.
 */
function skipPassedSteps(draft: Draft, taskOutput: Record<string, JsonObject>, env: DecideEnv): Set<string> {
  const skipped = new Set<string>();
  const steps = planOf(draft.state.definition).steps;
  for (const lane of activeLanes(draft.state)) {
    const head = lane.head;
    if (head === undefined) continue;
    for (let index = lane.span.first; index < head.definitionIndex; index++) {
      const step = steps[index]!;
      if (step.lane !== lane.id || step.branch !== undefined || step.inLoop !== undefined || latestInstance(draft.state, index) !== undefined) continue;
      const next = draft.state.tasks.find((task) => steps[task.definitionIndex]?.lane === lane.id && task.definitionIndex > index)!;
      const reference = step.task.taskReferenceName;
      draft.insertTask(skippedInstance(draft.state.workflowId, step.task, index, taskOutput[reference] ?? {}, env), next.taskId);
      skipped.add(reference);
    }
  }
  return skipped;
}

/** A task instance of step `index` (`task`) that the upgrade recorded SKIPPED: see {@link skipPassedSteps}. */
function skippedInstance(workflowId: string, task: WorkflowTaskDef, index: number, output: JsonObject, env: DecideEnv): TaskExecution {
  return {
    taskId: taskIdWithin(workflowId, env.newId()),
    taskType: task.type,
    referenceTaskName: task.taskReferenceName,
    taskDefName: task.name,
    // Draft.insertTask gives it its place's.
    seq: 0,
    definitionIndex: index,
    status: "SKIPPED",
    inputData: {},
    outputData: output,
    retryCount: 0,
    retried: false,
    scheduledTime: env.now,
    startTime: env.now,
    endTime: env.now,
    updateTime: env.now,
    attempt: 0,
  };
}
