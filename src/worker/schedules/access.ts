import { START_PERMISSION } from "../auth/access-rules";
import { grantsAllow, namesGranted, type Grant, type NameFilter, type Permission } from "../auth/permissions";
import { ApiError } from "../http/errors";

/**
 * Who may do what with a schedule, decided here and only here. The access rules let any authenticated caller reach
 * `/api/scheduler/*` (a rule cannot read a schedule's workflow), and the routes ask these checks, against the
 * workflow each schedule starts:
 * - reading (one, or in a listing) needs WORKFLOW_READ at `workflow:<name>`;
 * - saving, pausing, resuming and deleting need the right to start it ({@link START_PERMISSION} at
 *   `workflow:<name>`, what the start routes require), on both workflows for a save that moves a schedule to another.
 * A schedule that does not exist is checked as a workflow with the empty name, which only grants on every workflow
 * meet, so whether a name is taken shows only to callers who could act on it anyway (as the guard treats an unknown
 * execution).
 */
export type ScheduleAction = "read" | "manage";

const NEEDED: Record<ScheduleAction, Permission> = { read: "WORKFLOW_READ", manage: START_PERMISSION };

/** True when `grants` allow `action` on schedules of `workflowName` (undefined: a schedule that does not exist). */
export function mayOnSchedule(grants: readonly Grant[], action: ScheduleAction, workflowName: string | undefined): boolean {
  return grantsAllow(grants, NEEDED[action], `workflow:${workflowName ?? ""}`);
}

/** The workflows whose schedules `grants` let their holder read: {@link mayOnSchedule}'s "read", for a filter in SQL. */
export function schedulesReadable(grants: readonly Grant[]): NameFilter {
  return namesGranted(grants, NEEDED.read, "workflow:");
}

/**
 * Throws 403 unless `grants` allow `action` on schedules of `workflowName`. The message names the workflow only when
 * the caller named it (`named`: the workflow of a save's body); a stored schedule's is not told to a caller who may
 * not read it, nor whether there is one.
 */
export function requireOnSchedule(grants: readonly Grant[], action: ScheduleAction, workflowName: string | undefined, what: string, named = false): void {
  if (mayOnSchedule(grants, action, workflowName)) return;
  const scope = named && workflowName !== undefined ? `workflow:${workflowName}` : "the workflow the schedule starts";
  throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: ${what} needs ${NEEDED[action]} on ${scope}`);
}
