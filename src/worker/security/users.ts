import { addedGrants, authorizeHandingOut } from "../auth/delegation";
import type { Grant } from "../auth/permissions";
import { ApiError, notFound } from "../http/errors";
import { APPLICATION_USER_PREFIX, ApplicationRepository, applicationExists } from "./applications";
import { MAX_LISTING_CHARS, refuseOverListing } from "../bounded-listing";
import { GroupRepository, type Group } from "./groups";
import { ALWAYS, allHold, rolesUnchanged, type Role, type SecurityStore, type UserAssignment, type WriteCondition } from "./store";

/**
 * Whether `userId` is a user this service knows (as `GET /api/users/{id}` finds one): one with roles or permissions
 * assigned, in a group, or holding an API key.
 */
export async function userKnown(db: D1Database, store: SecurityStore, userId: string): Promise<boolean> {
  if ((await store.getAssignment(userId)) !== null) return true;
  if ((await new GroupRepository(db).groupsOf(userId)).length > 0) return true;
  return (await store.listApiKeys(userId)).length > 0;
}

/**
 * Throws 403 unless the caller holds every grant an assignment gives anew: direct permissions and the
 * permissions of roles the user did not have before. Keeping what a user already has is not handing it out. Returns
 * the condition for the write (see `SecurityStore.putAssignment`): the roles added still grant what was checked, and,
 * for an application's user (`app:<id>`), the application exists (see {@link assignmentRefused} for the answer).
 */
export async function authorizeAssignment(holder: readonly Grant[], store: SecurityStore, assignment: UserAssignment, previous: UserAssignment | null): Promise<WriteCondition> {
  const addedDirect = addedGrants(previous?.directPermissions ?? [], assignment.directPermissions);
  authorizeHandingOut(holder, addedDirect, `the direct permissions of ${assignment.userId}`);
  const addedRoles = assignment.roles.filter((role) => !(previous?.roles ?? []).includes(role));
  const rolesChecked = await authorizeRoles(holder, store, addedRoles, `assigning ${addedRoles.join(", ")}`);
  return addedRoles.length > 0 || addedDirect.length > 0 ? whileApplicationExists(assignment.userId, rolesChecked) : rolesChecked;
}

/**
 * `condition`, and for an application's user (`app:<id>`) that the application exists: a write that gives roles or
 * grants gives none to an application deleted meanwhile (or never made), where they would be inert, listed, and alive
 * again were its id reused. A write that only takes away is not held to it, so leftovers can still be trimmed.
 */
export function whileApplicationExists(userId: string, condition: WriteCondition): WriteCondition {
  return allHold(condition, applicationExists(userId) ?? ALWAYS);
}

/**
 * The error for an assignment write its condition refused, nothing written: 404 when `userId` is an application's user
 * (`app:<id>`) whose application does not exist (deleted while the request was checked, or never made), otherwise the
 * 409 of {@link changedMeanwhile} for `what`. Read after the refusal, so it decides only the answer, not the write.
 */
export async function assignmentRefused(db: D1Database, userId: string, what: string): Promise<ApiError> {
  if (userId.startsWith(APPLICATION_USER_PREFIX)) {
    const applicationId = userId.slice(APPLICATION_USER_PREFIX.length);
    if (!(await new ApplicationRepository(db).exists(applicationId))) return notFound(`No application with id ${applicationId}: ${userId} is an application's user`);
  }
  return changedMeanwhile(what);
}

/**
 * Throws 403 unless the caller holds every permission of the roles `names` (handed out by `what`); returns the condition
 * that they still grant only that when the hand-out is written. A role the caller checked exists (see `unknownRoles`)
 * but that is gone now was deleted meanwhile: a 409, as the condition, which covers the roles found, could not hold the
 * hand-out back, and it would keep the name of a role that no longer exists (see the role deletion's 409).
 */
export async function authorizeRoles(holder: readonly Grant[], store: SecurityStore, names: readonly string[], what: string): Promise<WriteCondition> {
  if (names.length === 0) return ALWAYS;
  const roles = await store.rolesAsRead(names);
  if (roles.length < new Set(names).size) throw changedMeanwhile(what);
  authorizeHandingOut(holder, roles.flatMap((role) => role.permissions), what);
  return rolesUnchanged(roles);
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
  /** The groups the user belongs to, each with its roles. */
  groups: ConductorGroupJson[];
}

/** Orkes' Group: its id, description and roles (with what each grants); `defaultAccess` is always empty here. */
export interface ConductorGroupJson {
  id: string;
  description: string;
  roles: ConductorUserJson["roles"];
  defaultAccess: Record<string, string[]>;
}

/** The roles named, with what each grants, read from `defined` when given or else from the store; undefined ones left out. */
async function rolesJson(store: SecurityStore, names: readonly string[], defined?: ReadonlyMap<string, Role>): Promise<ConductorUserJson["roles"]> {
  const found = defined === undefined ? await Promise.all(names.map((role) => store.getRole(role))) : names.map((role) => defined.get(role) ?? null);
  return found.flatMap((role) => (role === null ? [] : [roleJson(role)]));
}

/** Role `role` as Orkes shows one a user or group holds: its name and what it grants. */
const roleJson = (role: Role): ConductorUserJson["roles"][number] => ({ name: role.name, permissions: role.permissions.map((grant) => ({ name: grant.action, scope: grant.scope })) });

/**
 * The characters each role of `defined` takes in an answer ({@link ConductorUserJson}'s `roles`), as a function of the
 * names of the roles a user or group holds (an undefined one takes none, being left out): what a listing repeating
 * roles for every group or user counts before it builds its answer. Each role's JSON is measured once.
 */
export function rolesJsonChars(defined: ReadonlyMap<string, Role>): (names: readonly string[]) => number {
  const measured = new Map<string, number>();
  const charsOf = (name: string): number => {
    let chars = measured.get(name);
    if (chars === undefined) {
      const role = defined.get(name);
      chars = role === undefined ? 0 : JSON.stringify(roleJson(role)).length;
      measured.set(name, chars);
    }
    return chars;
  };
  return (names) => names.reduce((sum, name) => sum + charsOf(name), 0);
}

/** About the characters {@link conductorGroup} answers `group` with, its roles measured by `charsOfRoles` (see {@link rolesJsonChars}). */
export function conductorGroupChars(group: Group, charsOfRoles: (names: readonly string[]) => number): number {
  return group.id.length + group.description.length + JSON.stringify(group.defaultAccess).length + charsOfRoles(group.roles);
}

/**
 * About the characters user `user` takes in a listing's answer (see {@link conductorUser}): its id and name, its roles'
 * grants and those of each group of `groups` it belongs to, by {@link rolesJsonChars}' measure.
 */
function conductorUserChars(user: { userId: string; name?: string | undefined; roles: readonly string[] }, groups: readonly Group[], charsOfRoles: (names: readonly string[]) => number): number {
  return user.userId.length + (user.name?.length ?? 0) + charsOfRoles(user.roles) + groups.reduce((inGroups, group) => inGroups + conductorGroupChars(group, charsOfRoles), 0);
}

/** Group `group` as Orkes shows one. */
export async function conductorGroup(store: SecurityStore, group: Group, defined?: ReadonlyMap<string, Role>): Promise<ConductorGroupJson> {
  return { id: group.id, description: group.description, roles: await rolesJson(store, group.roles, defined), defaultAccess: group.defaultAccess };
}

/**
 * User `userId` as Orkes shows one: named `name` (its id when it has none), with `roles` (the names assigned) and what
 * each grants, and the `groups` it belongs to, roles read from `defined` when given (a listing reads every role once)
 * or else from the store; a role no longer defined is left out. `applicationUser` for an application's user
 * (`app:<id>`, see `applications.ts`).
 */
export async function conductorUser(
  store: SecurityStore,
  userId: string,
  roles: readonly string[],
  name: string | undefined,
  groups: readonly Group[] = [],
  defined?: ReadonlyMap<string, Role>,
): Promise<ConductorUserJson> {
  return {
    id: userId,
    name: name ?? userId,
    uuid: userId,
    applicationUser: userId.startsWith(APPLICATION_USER_PREFIX),
    roles: await rolesJson(store, roles, defined),
    groups: await Promise.all(groups.map((group) => conductorGroup(store, group, defined))),
  };
}

/** A user as a listing reads it (`SecurityStore.listUsers`): the roles assigned, its name, the ids of its groups. */
export interface ListedUser {
  userId: string;
  roles: readonly string[];
  name?: string | undefined;
  groups: readonly string[];
}

/**
 * `users` as Orkes lists them (`GET /api/users`, a group's members), each group they belong to and each role they or
 * their groups hold read once, and only those: counted before the answer is built, a 413 past {@link MAX_LISTING_CHARS}
 * (each user repeats its roles' grants and its groups' roles'), naming the reads one at a time.
 */
export async function conductorUserListing(db: D1Database, store: SecurityStore, users: readonly ListedUser[]): Promise<ConductorUserJson[]> {
  const groupsById = await new GroupRepository(db).byIds(users.flatMap((user) => user.groups));
  const groupsOf = (user: ListedUser) => user.groups.flatMap((id) => groupsById.get(id) ?? []);
  const roles = await store.rolesByName([...users.flatMap((user) => user.roles), ...[...groupsById.values()].flatMap((group) => group.roles)]);
  const charsOfRoles = rolesJsonChars(roles);
  const chars = users.reduce((sum, user) => sum + conductorUserChars(user, groupsOf(user), charsOfRoles), 0);
  refuseOverListing(chars, (total) => `The users with their roles' and groups' grants come to ${total} characters, over the ${MAX_LISTING_CHARS} one listing answers; read them one at a time: GET /api/users/{id}`);
  return Promise.all(users.map((user) => conductorUser(store, user.userId, user.roles, user.name, groupsOf(user), roles)));
}
