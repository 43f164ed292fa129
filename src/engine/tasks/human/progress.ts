/**
 * Where a started HUMAN task stands with the people who work on it (Orkes' human task): whom it is assigned to, along
 * an escalation chain whose steps each last so many minutes, who has claimed it, and what each claim, release,
 * reassignment, skip or deletion makes of that. Pure: the actor checks who the caller is and what they may do in
 * general (their groups, their permissions); the rules that depend on the task's own state are decided here, in the
 * execution's decision, so two callers racing for one task cannot both win.
 */
import { EngineError } from "../../errors";
import { wrapperIntegerOf } from "../../definition/checks";
import type { JsonObject, JsonValue, TaskExecution, TaskStatus } from "../../model";
import type { CompletionStrategy, HumanAssignment, HumanSettings, HumanUser } from "./settings";

/** The states of a human task (Orkes'). */
export const HUMAN_STATES = ["PENDING", "ASSIGNED", "IN_PROGRESS", "COMPLETED", "TIMED_OUT", "DELETED"] as const;
/** One of {@link HUMAN_STATES}. */
export type HumanState = (typeof HUMAN_STATES)[number];

/** A started HUMAN task's assignment and claim (see {@link TaskExecution.human}). */
export interface HumanProgress {
  /** The escalation chain: the settings' own, or the one a reassignment gave. */
  assignments: HumanAssignment[];
  completionStrategy: CompletionStrategy;
  /** The assignment in force, by its index in `assignments`; absent when none is (the task is open to anyone who may see it). */
  assignmentIndex?: number;
  /** Whom it is assigned to: that assignment's assignee, or whoever took it over by claiming it with `overrideAssignment`. */
  assignee?: HumanUser;
  /** When the assignment in force began: its minutes count from here. */
  assignedAt: number;
  /** Who has claimed it (works on it); absent while no one has. */
  claimant?: HumanUser;
  /** Removed from the human task lists by hand (Orkes' delete): its workflow still waits for the task itself. */
  deleted?: true;
  /**
   * Who acted on it last: their user (or application) id, as Orkes' HumanTaskEntry shows it (`ada@example.com`).
   * Progress stored before it was kept so reads `CONDUCTOR_USER:ada@example.com` (see {@link actedByOf}).
   */
  updatedBy?: string;
  /**
   * How an optional task ended before its workflow took it as `COMPLETED_WITH_ERRORS` (FAILED, TIMED_OUT…): its human
   * state is that ending's (TIMED_OUT, DELETED), never COMPLETED, as nobody completed it.
   */
  endedAs?: TaskStatus;
}

/** Why a task whose last assignment ran out ends, with the TERMINATE strategy (Orkes' words). */
export const ASSIGNMENTS_EXHAUSTED = "Task terminated as no more assignments pending and completion strategy is TERMINATE";

/**
 * The human state of a HUMAN task instance: PENDING until it starts, ASSIGNED until claimed (whether assigned to
 * someone or open to anyone), IN_PROGRESS once claimed, then COMPLETED, TIMED_OUT or, however else it ended, DELETED.
 */
export function humanStateOf(task: Pick<TaskExecution, "status" | "human">): HumanState {
  // Scheduled again (a rerun), it is a new piece of work, whatever became of its last run.
  if (task.status === "SCHEDULED") return "PENDING";
  if (task.human?.deleted === true) return "DELETED";
  switch (task.status) {
    case "IN_PROGRESS":
      return task.human?.claimant === undefined ? "ASSIGNED" : "IN_PROGRESS";
    case "COMPLETED":
      return "COMPLETED";
    case "COMPLETED_WITH_ERRORS":
      // An optional task's failure; one recorded before endedAs was kept shows as it always did.
      if (task.human?.endedAs === undefined) return "COMPLETED";
      return task.human.endedAs === "TIMED_OUT" ? "TIMED_OUT" : "DELETED";
    case "TIMED_OUT":
      return "TIMED_OUT";
    default:
      return "DELETED";
  }
}

/** The progress of HUMAN task `task` as it stands: none while it waits to start (a rerun's is its last run's). */
export function currentProgress(task: Pick<TaskExecution, "status" | "human">): HumanProgress | undefined {
  return task.status === "SCHEDULED" ? undefined : task.human;
}

/** The fields of a task whose chain moves to assignment `index` (or past its end) at `now`. */
function assignedFrom(progress: HumanProgress, index: number, now: number): Partial<TaskExecution> {
  // Whoever claimed or was given the assignment before has nothing more to do with it.
  const { claimant: _claimant, assignmentIndex: _index, assignee: _assignee, ...rest } = progress;
  const next = progress.assignments[index];
  if (next === undefined) return { human: { ...rest, assignedAt: now }, timeoutAt: undefined };
  return { human: { ...rest, assignedAt: now, assignmentIndex: index, assignee: next.assignee }, timeoutAt: next.slaMinutes > 0 ? now + next.slaMinutes * 60_000 : undefined };
}

/**
 * The progress of a HUMAN task starting at `now` with `settings`: its first assignment, if it has any. With Orkes'
 * `autoClaim`, that assignment's assignee claims it at once when it is a user: it starts IN_PROGRESS, and, claimed,
 * does not escalate. A group claims nothing: in Orkes a claim is a user's (the one who makes it), and a task its group
 * had claimed could be claimed by none of its members, so it starts ASSIGNED to the group, as without the setting.
 */
export function startedProgress(settings: HumanSettings, now: number): Partial<TaskExecution> {
  const started = assignedFrom({ assignments: settings.assignments, completionStrategy: settings.completionStrategy, assignedAt: now }, 0, now);
  const assignee = started.human?.assignee;
  if (settings.autoClaim !== true || assignee === undefined || !isUser(assignee)) return started;
  return { ...started, human: { ...started.human!, claimant: { ...assignee } }, timeoutAt: undefined };
}

/** True when `assignee` is one person (of this service or of the system driving the UI), not a group. */
function isUser(assignee: HumanUser): boolean {
  return assignee.userType === "CONDUCTOR_USER" || assignee.userType === "EXTERNAL_USER";
}

/**
 * What becomes of a HUMAN task whose assignment ran out unclaimed (its `timeoutAt`): the next assignment takes
 * over; after the last, the task stays open to anyone (LEAVE_OPEN) or fails, ending the workflow unless it is
 * optional or retried (TERMINATE).
 */
export function escalated(task: TaskExecution, now: number): Partial<TaskExecution> {
  const progress = task.human;
  if (progress === undefined || progress.claimant !== undefined) return { timeoutAt: undefined };
  return movedOn(task, progress, now);
}

function movedOn(task: TaskExecution, progress: HumanProgress, now: number): Partial<TaskExecution> {
  const nextIndex = (progress.assignmentIndex ?? progress.assignments.length) + 1;
  if (nextIndex < progress.assignments.length || progress.completionStrategy === "LEAVE_OPEN") return { ...assignedFrom(progress, nextIndex, now), updateTime: now };
  return {
    status: "FAILED",
    reasonForIncompletion: ASSIGNMENTS_EXHAUSTED,
    human: { ...progress, assignedAt: now },
    endTime: now,
    updateTime: now,
    startTime: task.startTime || now,
    awaitingExternal: false,
    timeoutAt: undefined,
  };
}

/** Who asks for a human task action, as far as the rules of {@link humanActionFields} need to know. */
export interface HumanCaller {
  /** The caller's user id in this service. */
  userId: string;
  /** The groups the caller belongs to. */
  groups: readonly string[];
  /** May act on the task whoever it is assigned to: what completing it from outside (`POST /api/tasks/...`) needs. */
  manager: boolean;
  /** May read the task's workflow: enough to claim a task assigned to no one. */
  reader: boolean;
  /**
   * True for an outside sign-in named like one of this service's own users (an application's `app:<id>`, the bootstrap
   * admin): it is not that user, so no assignment or claim in that name is its, and it claims nothing in that name.
   */
  impostor?: boolean;
}

/** An action on a human task (Orkes' human task API). */
export type HumanAction =
  /** Claim it for the caller, or (`forUser`, a manager's call on behalf of a user of the system driving the UI) for that user. */
  | { kind: "claim"; override: boolean; forUser?: { userId: string; groups: readonly string[] } }
  | { kind: "release" }
  | { kind: "reassign"; assignments: HumanAssignment[] }
  | { kind: "skip" }
  | { kind: "delete" };

function label(user: HumanUser): string {
  return `${user.userType}:${user.user}`;
}

function describeUser(user: HumanUser): string {
  return `${user.userType === "CONDUCTOR_GROUP" || user.userType === "EXTERNAL_GROUP" ? "group" : "user"} ${user.user}`;
}

/** True when `assignee` names this service's user `userId`, or a group of `groups`. */
export function isAssignee(assignee: HumanUser | undefined, userId: string, groups: readonly string[]): boolean {
  if (assignee === undefined) return false;
  if (assignee.userType === "CONDUCTOR_USER") return assignee.user === userId;
  if (assignee.userType === "CONDUCTOR_GROUP") return groups.includes(assignee.user);
  return false;
}

/** True when `user` is the caller as a user of this service (a claim is one person's: never a group's). */
function isCaller(user: HumanUser | undefined, caller: HumanCaller): boolean {
  return caller.impostor !== true && user !== undefined && user.userType === "CONDUCTOR_USER" && user.user === caller.userId;
}

/** True when `assignee` names the caller or a group of theirs (never for an {@link HumanCaller.impostor}). */
function assignedToCaller(assignee: HumanUser | undefined, caller: HumanCaller): boolean {
  return caller.impostor !== true && isAssignee(assignee, caller.userId, caller.groups);
}

function forbidden(message: string): EngineError {
  return new EngineError("FORBIDDEN", message);
}

/** The progress of a pending, started HUMAN task that is not deleted; refused otherwise. */
export function actionableProgress(task: TaskExecution): HumanProgress {
  const name = `Human task ${task.referenceTaskName} (${task.taskId})`;
  if (task.taskType !== "HUMAN") throw new EngineError("NOT_FOUND", `Task ${task.taskId} is a ${task.taskType} task, not a HUMAN task`);
  const state = humanStateOf(task);
  if (state === "PENDING") throw new EngineError("CONFLICT", `${name} has not started yet (its workflow has not reached it, or is paused)`);
  if (state !== "ASSIGNED" && state !== "IN_PROGRESS") throw new EngineError("CONFLICT", `${name} is ${state}: nothing more can be done with it`);
  if (task.human === undefined) throw new EngineError("CONFLICT", `${name} started before assignments were kept, so it has none: complete it with POST /api/tasks`);
  return task.human;
}

/**
 * What action `action` by `caller` makes of HUMAN task `task` at `now` (fields to update the task with), or why it is
 * refused: FORBIDDEN when the caller may not, CONFLICT when the task's state does not allow it.
 */
export function humanActionFields(task: TaskExecution, caller: HumanCaller, action: HumanAction, now: number): Partial<TaskExecution> {
  const progress = actionableProgress(task);
  const actedBy = caller.userId;
  const claimedBy = progress.claimant === undefined ? undefined : `it is claimed by ${describeUser(progress.claimant)}`;
  const stamped = (human: HumanProgress, fields: Partial<TaskExecution> = {}): Partial<TaskExecution> => ({ ...fields, human: { ...human, updatedBy: actedBy }, updateTime: now });
  switch (action.kind) {
    case "claim": {
      // A claim is recorded by name, and the name is another's (an application's user, the bootstrap admin): it would
      // be theirs, not the caller's.
      if (action.forUser === undefined && caller.impostor === true) {
        throw forbidden(`Human task ${task.taskId} cannot be claimed in the name ${caller.userId}: you sign in from outside under a name this service keeps for its own user`);
      }
      const claimant: HumanUser = action.forUser === undefined ? { user: caller.userId, userType: "CONDUCTOR_USER" } : { user: action.forUser.userId, userType: "EXTERNAL_USER" };
      if (action.forUser !== undefined && !caller.manager) throw forbidden("Claiming a human task for another user needs the permission to complete the task (TASK_EXECUTE on it or its workflow)");
      const fits =
        action.forUser === undefined || progress.assignee === undefined
          ? fitsAssignment(progress, caller)
          : externalClaimerFits(progress.assignee, action.forUser);
      // The right first: one who could not claim the task unclaimed is refused it claimed too (a 403, as unclaimed),
      // not told to wait for its release. One who may take it over (a manager) learns of the claim.
      if (!fits && !caller.manager) throw cannotClaim(task, progress, claimant, caller);
      if (claimedBy !== undefined) {
        if (!action.override) throw new EngineError("CONFLICT", `Human task ${task.taskId} cannot be claimed: ${claimedBy} (it must be released first)`);
        if (!caller.manager) throw forbidden(`Human task ${task.taskId} cannot be taken over: ${claimedBy}, and overriding a claim needs the permission to complete the task`);
      }
      if (!fits && !(action.override && caller.manager)) throw cannotClaim(task, progress, claimant, caller);
      // overrideAssignment makes the claimant the assignee, as Orkes' docs show it, even one the assignment fitted.
      const assignee = fits && !action.override ? progress.assignee : claimant;
      const human: HumanProgress = assignee === undefined ? { ...progress, claimant } : { ...progress, claimant, assignee };
      // Claimed, it no longer escalates: the minutes of its assignment were for someone to take it.
      return stamped(human, { timeoutAt: undefined });
    }
    case "release": {
      // The right first, as for a claim: one who could neither claim the task nor complete it learns a 403, not that
      // it waits for a claim they may not make.
      if (progress.claimant === undefined && !caller.manager && !fitsAssignment(progress, caller)) {
        throw forbidden(`Human task ${task.taskId} can be released only by whoever claims it or by one who may complete it, and you may not claim it: ${whyNotOpen(progress)}`);
      }
      if (progress.claimant === undefined) throw new EngineError("CONFLICT", `Human task ${task.taskId} is not claimed: there is nothing to release`);
      if (!isCaller(progress.claimant, caller) && !caller.manager) throw forbidden(`Human task ${task.taskId} can be released only by whoever claimed it (${label(progress.claimant)}) or by one who may complete it`);
      const human: HumanProgress = { ...progress };
      delete human.claimant;
      // Its assignment's minutes go on counting from when it began (an escalation due meanwhile happens at once).
      const sla = progress.assignmentIndex === undefined ? 0 : (progress.assignments[progress.assignmentIndex]?.slaMinutes ?? 0);
      return stamped(human, { timeoutAt: sla > 0 ? Math.max(now, progress.assignedAt + sla * 60_000) : undefined });
    }
    case "reassign": {
      // The right first: one who may not reassign the task learns nothing of its claim.
      if (!caller.manager && !assignedToCaller(progress.assignee, caller)) {
        throw forbidden(`Human task ${task.taskId} can be reassigned only by its assignee or by one who may complete it`);
      }
      if (claimedBy !== undefined) throw new EngineError("CONFLICT", `Human task ${task.taskId} cannot be reassigned: ${claimedBy} (it must be released first)`);
      const moved = assignedFrom({ ...progress, assignments: action.assignments }, 0, now);
      return stamped(moved.human!, moved);
    }
    case "skip": {
      // The right first: one who may not skip the task learns nothing of its claim (an unassigned task's assignee is
      // no one, so only a manager may skip it, and learns it has no assignment to skip).
      if (!caller.manager && !assignedToCaller(progress.assignee, caller)) {
        throw forbidden(`Human task ${task.taskId} can be skipped only by its assignee or by one who may complete it`);
      }
      if (claimedBy !== undefined) throw new EngineError("CONFLICT", `Human task ${task.taskId} cannot be skipped: ${claimedBy} (it must be released first)`);
      if (progress.assignee === undefined) throw new EngineError("CONFLICT", `Human task ${task.taskId} has no assignee: there is no assignment to skip`);
      const moved = movedOn(task, progress, now);
      return stamped(moved.human!, moved);
    }
    case "delete":
      if (!caller.manager) throw forbidden(`Human task ${task.taskId} can be deleted only by one who may complete it`);
      return stamped({ ...progress, deleted: true }, { timeoutAt: undefined });
  }
}

/** The refusal of a claim of `task` for `claimant` by `caller`, whom its assignment does not fit. */
function cannotClaim(task: TaskExecution, progress: HumanProgress, claimant: HumanUser, caller: HumanCaller): EngineError {
  return forbidden(`Human task ${task.taskId} cannot be claimed by ${describeUser(claimant)}: ${whyNotOpen(progress)}${caller.manager ? " (claim it with overrideAssignment=true to take it over)" : ""}`);
}

/** Who may claim `progress`'s task, as a refusal says it. */
function whyNotOpen(progress: HumanProgress): string {
  return progress.assignee === undefined ? "it is open to those who may read its workflow" : `it is assigned to ${describeUser(progress.assignee)}`;
}

/** True when `caller`'s claim for themselves fits the task's assignment: its assignee, or, unassigned, a reader of its workflow. */
function fitsAssignment(progress: HumanProgress, caller: HumanCaller): boolean {
  return progress.assignee === undefined ? caller.reader || caller.manager : assignedToCaller(progress.assignee, caller);
}

/** True when a user claimed for by a manager's call on their behalf fits `assignee`. */
function externalClaimerFits(assignee: HumanUser, claimer: { userId: string; groups: readonly string[] }): boolean {
  // A group of the system driving the UI is that system's to check: its call on a user's behalf vouches for them.
  if (assignee.userType === "EXTERNAL_GROUP") return true;
  if (assignee.userType === "EXTERNAL_USER") return assignee.user === claimer.userId;
  return isAssignee(assignee, claimer.userId, claimer.groups);
}

/**
 * Refused unless `caller` may save or complete the form of HUMAN task `task`: whoever claimed it, or one who may
 * complete it from outside anyway.
 */
export function checkMayUpdate(task: TaskExecution, caller: HumanCaller): HumanProgress {
  const progress = actionableProgress(task);
  if (caller.manager || isCaller(progress.claimant, caller)) return progress;
  if (progress.claimant === undefined && !fitsAssignment(progress, caller)) {
    // The right first: telling one who may not claim the task to claim it first sends them to a 403.
    throw forbidden(`Human task ${task.taskId} can be filled in only by whoever claims it, and you may not claim it: ${whyNotOpen(progress)}`);
  }
  if (progress.claimant === undefined) throw new EngineError("CONFLICT", `Human task ${task.taskId} is not claimed: claim it first (POST /api/human/tasks/${task.taskId}/claim)`);
  throw forbidden(`Human task ${task.taskId} is claimed by ${describeUser(progress.claimant)}: only they can fill it in`);
}

/** Prefix of {@link HumanProgress.updatedBy} as progress stored before it held the bare id kept it. */
const LEGACY_ACTED_BY_PREFIX = "CONDUCTOR_USER:";

/** Who acted on a human task last, as its entry shows it: the id alone, whichever way its progress was stored. */
export function actedByOf(progress: HumanProgress): string | undefined {
  return progress.updatedBy === undefined ? undefined : bareActor(progress.updatedBy);
}

/**
 * Stored actor `by` as the API shows it: the id alone. Progress, and the human task list rows made from it, written
 * before the bare id was kept read `CONDUCTOR_USER:<id>`.
 */
export function bareActor(by: string): string {
  return by.startsWith(LEGACY_ACTED_BY_PREFIX) ? by.slice(LEGACY_ACTED_BY_PREFIX.length) : by;
}

/**
 * The human task settings as the entry shows them (`humanTaskDef`): those given, with the chain in force and the user
 * form's version as it was read (`"2"` as 2, `"null"` left out), as Orkes shows the UserFormTemplate it read.
 */
export function shownSettings(given: JsonObject | undefined, progress: HumanProgress | undefined): JsonObject {
  const shown: JsonObject = { ...(given ?? {}) };
  const form = shown["userFormTemplate"];
  if (typeof form === "object" && form !== null && !Array.isArray(form) && Object.hasOwn(form, "version")) {
    const { version: written, ...rest } = form;
    const version = wrapperIntegerOf(written);
    shown["userFormTemplate"] = version === undefined ? rest : { ...rest, version: version as JsonValue };
  }
  if (progress !== undefined) {
    shown["assignments"] = progress.assignments.map((entry) => ({ assignee: { ...entry.assignee }, slaMinutes: entry.slaMinutes }));
    shown["assignmentCompletionStrategy"] = progress.completionStrategy;
  }
  return shown;
}
