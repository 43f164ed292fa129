/**
 * Orkes' human task triggers: workflows a HUMAN task starts as it enters a state or changes hands (`taskTriggers`).
 * Worked out by comparing each HUMAN task before and after a decision, so every way a task changes (a claim, an
 * escalation, a completion from outside, a rerun) fires the same way. The starts are owed as a failure workflow's are:
 * recorded with the decision, started by the actor under an id chosen here.
 */
import type { DecideEnv } from "../../config";
import type { FailureWorkflowStart, JsonObject, TaskExecution, WorkflowExecution } from "../../model";
import { currentProgress, humanStateOf, type HumanState } from "./progress";
import { humanSettingsOf, type HumanTriggerType, type HumanUser } from "./settings";

/** The human states a trigger fires on, as the task enters them. */
const STATE_TRIGGERS: ReadonlySet<HumanState> = new Set(["PENDING", "ASSIGNED", "IN_PROGRESS", "COMPLETED", "TIMED_OUT"]);

function sameUser(a: HumanUser | undefined, b: HumanUser | undefined): boolean {
  return a?.user === b?.user && a?.userType === b?.userType;
}

/**
 * The trigger types a change of HUMAN task `before` (undefined: it is new) into `after` fires, in order: the state it
 * enters (a new task passes through PENDING first), then ASSIGNEE_CHANGED and CLAIMANT_CHANGED when, started before
 * and after, its assignee or claimant changed.
 */
export function firedTriggerTypes(before: TaskExecution | undefined, after: TaskExecution): HumanTriggerType[] {
  const fired: HumanTriggerType[] = [];
  const from = before === undefined ? undefined : humanStateOf(before);
  const to = humanStateOf(after);
  if (from === undefined && to !== "PENDING") fired.push("PENDING");
  if (to !== from && STATE_TRIGGERS.has(to)) fired.push(to as HumanTriggerType);
  const was = before === undefined ? undefined : currentProgress(before);
  const is = currentProgress(after);
  if (was !== undefined && is !== undefined) {
    if (!sameUser(was.assignee, is.assignee)) fired.push("ASSIGNEE_CHANGED");
    if (!sameUser(was.claimant, is.claimant)) fired.push("CLAIMANT_CHANGED");
  }
  return fired;
}

/**
 * The workflow starts HUMAN task `after` of `execution` owes for what changed since `before`: one per trigger of a
 * fired type, with the trigger's input plus `humanTask` (what happened to which task, unless the input has that key).
 * Each is started as its execution's starter could start it, one level deeper, under a new id.
 */
export function triggerStarts(execution: WorkflowExecution, before: TaskExecution | undefined, after: TaskExecution, env: DecideEnv): FailureWorkflowStart[] {
  const settings = humanSettingsOf(after.inputData);
  if ("problem" in settings || settings.triggers.length === 0) return [];
  const fired = firedTriggerTypes(before, after);
  const progress = currentProgress(after);
  return fired.flatMap((type) =>
    settings.triggers
      .filter((trigger) => trigger.triggerType === type)
      .map((trigger) => {
        const context: JsonObject = { triggerType: type, taskId: after.taskId, taskRefName: after.referenceTaskName, workflowId: execution.workflowId, state: humanStateOf(after) };
        if (progress?.assignee !== undefined) context["assignee"] = { ...progress.assignee };
        if (progress?.claimant !== undefined) context["claimant"] = { ...progress.claimant };
        const start: FailureWorkflowStart = {
          workflowId: env.newId(),
          name: trigger.name,
          input: "humanTask" in trigger.input ? trigger.input : { ...trigger.input, humanTask: context },
          triggeringWorkflowId: execution.workflowId,
          // As the failure workflow's start: the trigger's startWorkflowRequest (Orkes' StartWorkflowRequest, whose priority
          // is 0 unless given; a trigger here names none) starts at 0, whatever the execution's priority.
          priority: 0,
          taskToDomain: trigger.taskToDomain ?? {},
          depth: (execution.depth ?? 0) + 1,
          trigger: `human task ${after.referenceTaskName} (${after.taskId}) ${type}`,
        };
        if (trigger.version !== undefined) start.version = trigger.version;
        if (trigger.correlationId !== undefined) start.correlationId = trigger.correlationId;
        if (execution.baseUrl !== undefined) start.baseUrl = execution.baseUrl;
        if (execution.startScopes !== undefined) start.startScopes = execution.startScopes;
        return start;
      }),
  );
}

/**
 * The workflow starts the HUMAN tasks of `after` owe for what a decision changed since `before` (tasks the decision
 * left as they were, by identity, fired nothing; a test run's fire nothing either).
 */
export function humanTriggerStarts(before: WorkflowExecution, after: WorkflowExecution, env: DecideEnv): FailureWorkflowStart[] {
  // A test run starts nothing real.
  if (after.tasks === before.tasks || after.test !== undefined) return [];
  const changed = after.tasks.filter((task) => task.taskType === "HUMAN" && !before.tasks.includes(task));
  if (changed.length === 0) return [];
  const previous = new Map(before.tasks.map((task) => [task.taskId, task]));
  return changed.flatMap((task) => triggerStarts(after, previous.get(task.taskId), task, env));
}
