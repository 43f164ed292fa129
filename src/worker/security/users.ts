import { addedGrants, authorizeHandingOut } from "../auth/delegation";
import type { Grant } from "../auth/permissions";
import { ApiError } from "../http/errors";
import type { Role, SecurityStore, UserAssignment } from "./store";

/**
 * Throws 403 unless the caller holds every grant an assignment gives anew: direct permissions and the
 * permissions of roles the user did not have before. Keeping what a user already has is not handing it out.
 */
export async function authorizeAssignment(holder: readonly Grant[], store: SecurityStore, assignment: UserAssignment, previous: UserAssignment | null): Promise<void> {
  authorizeHandingOut(holder, addedGrants(previous?.directPermissions ?? [], assignment.directPermissions), `the direct permissions of ${assignment.userId}`);
  const addedRoles = assignment.roles.filter((role) => !(previous?.roles ?? []).includes(role));
  if (addedRoles.length > 0) authorizeHandingOut(holder, await store.roleGrants(addedRoles), `assigning ${addedRoles.join(", ")}`);
}

/** 409 for a change refused because what it was checked against changed meanwhile (nothing was written). */
export function changedMeanwhile(what: string): ApiError {
  return new ApiError(409, "CONFLICT", `${what} changed while this request was being checked; read it again and retry`);
}

/** Orkes' ConductorUser, as its users API and `getUserInfo` answer it. */
export interface ConductorUserJson {
  id: string;
  name: string;
  uuid: string;
  applicationUser: boolean;
  /** The roles assigned, with what each grants (Orkes' `Permission.name` is the action; `scope` is this service's). */
  roles: Array<{ name: string; permissions: Array<{ name: string; scope: string }> }>;
  /** Orkes' groups: none here (roles take their place). */
  groups: never[];
}

/**
 * User `userId` as Orkes shows one: named `name` (its id when it has none), with `roles` (the names assigned) and what
 * each grants, read from `defined` when given (a listing reads every role once) or else from the store; a role no
 * longer defined is left out. `applicationUser` for an application's user (`app:<id>`).
 */
export async function conductorUser(
  store: SecurityStore,
  userId: string,
  roles: readonly string[],
  name: string | undefined,
  applicationUser: boolean,
  defined?: ReadonlyMap<string, Role>,
): Promise<ConductorUserJson> {
  const found = defined === undefined ? await Promise.all(roles.map((role) => store.getRole(role))) : roles.map((role) => defined.get(role) ?? null);
  const shown = found.flatMap((role) =>
    role === null ? [] : [{ name: role.name, permissions: role.permissions.map((grant) => ({ name: grant.action, scope: grant.scope })) }],
  );
  return { id: userId, name: name ?? userId, uuid: userId, applicationUser, roles: shown, groups: [] };
}
