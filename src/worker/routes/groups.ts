import type { IRequest, RouterType } from "itty-router";
import * as v from "valibot";
import { authorizeHandingOut } from "../auth/delegation";
import { BOOTSTRAP_ADMIN_USER } from "../auth/principal";
import { principalOf } from "../guard";
import { notFound, validationError, type ApiError } from "../http/errors";
import { parseOrThrow, requestObject, wellFormedText } from "../schemas";
import { GroupRepository, type Group } from "../security/groups";
import { OrkesRolesSchema, UserIdSchema } from "../security/schemas";
import { ALWAYS, SecurityStore, allHold, type WriteCondition } from "../security/store";
import { ApplicationRepository, applicationIdsOf, applicationUserId, applicationsExist } from "../security/applications";
import { authorizeRoles, changedMeanwhile, conductorGroup, conductorGroupChars, conductorUserListing, rolesJsonChars } from "../security/users";
import { MAX_LISTING_CHARS, refuseOverListing } from "../bounded-listing";
import { requiredBody } from "./metadata";
import { pathName } from "./security";
import { ACCESS } from "../security/resource-grants";

type Args = [Env, ExecutionContext];

/**
 * Orkes' UpsertGroupRequest: a description and roles; `defaultAccess` (per-resource grants) must be empty here. Null is
 * absent: Orkes' Gson-based Java client sends every field it was not given as null.
 */
const UpsertGroupBody = requestObject({
  description: v.optional(v.pipe(v.nullable(v.pipe(v.string("must be a string"), v.maxLength(1024, "must be at most 1024 characters"), wellFormedText)), v.transform((description) => description ?? "")), ""),
  roles: v.optional(v.pipe(v.nullable(OrkesRolesSchema), v.transform((roles) => roles ?? [])), []),
  // Orkes' Map<TargetType, Set<Access>> (the Java client's own requests always send one); null is none.
  defaultAccess: v.nullish(
    v.pipe(
      v.custom<Record<string, unknown>>((value) => typeof value === "object" && value !== null && !Array.isArray(value), "must map target types (WORKFLOW_DEF, TASK_DEF, …) to lists of access kinds"),
      v.record(
      v.pipe(v.string(), v.regex(/^[A-Z][A-Z_]{0,63}$/, "must map target types (WORKFLOW_DEF, TASK_DEF, …) to access kinds")),
      v.pipe(v.array(v.picklist(ACCESS, `must list access kinds: ${ACCESS.join(", ")}`)), v.maxLength(ACCESS.length * 4, "is too long")),
        "must map target types (WORKFLOW_DEF, TASK_DEF, …) to lists of access kinds",
      ),
    ),
  ),
});

/** A list of user ids (the bulk member routes' body). */
const UserIds = v.pipe(v.array(UserIdSchema, "must be an array of user ids"), v.minLength(1, "must name at least one user"), v.maxLength(100, "may name at most 100 users"));

async function groupAt(env: Env, id: string): Promise<Group> {
  const group = await new GroupRepository(env.DB).get(id);
  if (!group) throw notFound(`No group ${id}`);
  return group;
}

/**
 * Throws 403 unless the caller holds what members of `groups` hold through them (their roles' permissions and the
 * permissions given to them), joining by `what`; returns the condition that those roles still grant only that.
 */
export async function authorizeJoining(request: IRequest, env: Env, groups: readonly Group[], what: string): Promise<WriteCondition> {
  const holder = principalOf(request).grants;
  authorizeHandingOut(holder, groups.flatMap((group) => group.permissions), what);
  return authorizeRoles(holder, new SecurityStore(env.DB), [...new Set(groups.flatMap((group) => group.roles))], what);
}

/**
 * Adds `added` to and removes `removed` from group `group`: a new member gets the group's roles, so adding one hands them
 * out (403 for a caller not holding them); the bootstrap admin is no member of anything (400).
 */
async function changeMembers(request: IRequest, env: Env, group: Group, added: readonly string[], removed: readonly string[]): Promise<void> {
  if (added.includes(BOOTSTRAP_ADMIN_USER)) throw validationError("Reserved user id", [{ path: "userId", message: `${BOOTSTRAP_ADMIN_USER} is the bootstrap admin of BOOTSTRAP_ADMIN_KEY` }]);
  const repository = new GroupRepository(env.DB);
  const members = await repository.members(group.id);
  const newMembers = added.filter((userId) => !members.includes(userId));
  const rolesChecked = newMembers.length > 0 ? await authorizeJoining(request, env, [group], `adding ${newMembers.join(", ")} to group ${group.id}`) : ALWAYS;
  // New members only while their applications exist (for app:<id> users): a deleted application's memberships went with
  // it, and one added after would be inert, listed, and alive again were the id reused. Removing is not held to it.
  const unchanged = allHold(rolesChecked, applicationsExist(newMembers));
  if (!(await repository.changeMembers(group, newMembers, removed, unchanged))) throw await membersRefused(env.DB, group, newMembers);
}

/**
 * The error for a membership change its condition refused, nothing written: 404 naming the applications' users among
 * `added` whose application does not exist (read after the refusal, so it decides only the answer), else the 409.
 */
async function membersRefused(db: D1Database, group: Group, added: readonly string[]): Promise<ApiError> {
  // One query for all of them: one per user would pass Workers Free's 50 D1 queries per invocation for a bulk addition.
  const missing = (await new ApplicationRepository(db).missing(applicationIdsOf(added))).map(applicationUserId);
  if (missing.length > 0) return notFound(`No application for ${missing.join(", ")}: an application's user joins a group only while its application exists`);
  return changedMeanwhile(`group ${group.id} (or a role it gives)`);
}

/**
 * Orkes' groups (the clients' AuthorizationClient: `upsertGroup`, `getGroup`, `listGroups`, `deleteGroup`,
 * `addUserToGroup`, `addUsersToGroup`, `getUsersInGroup`, …): users sharing roles, each member holding the group's roles
 * as if assigned them. A group's roles reach its members, so changing them hands them out as assigning them would.
 * Per-resource grants given to a group (`routes/authorization.ts`) reach its members too; `defaultAccess` is kept and
 * shown, not applied.
 * Needs `USER_ADMIN`.
 */
export function registerGroupRoutes(router: RouterType<IRequest, Args>): void {
  router.get("/api/groups", async (_request, env) => {
    const store = new SecurityStore(env.DB);
    const groups = await new GroupRepository(env.DB).list();
    // The roles they hold alone, each once.
    const roles = await store.rolesByName(groups.flatMap((group) => group.roles));
    // Each group answers its roles with their grants: a role of many grants held by many groups is repeated in each,
    // so the answer is counted before it is built (nothing caps how many groups there are).
    const charsOfRoles = rolesJsonChars(roles);
    const chars = groups.reduce((sum, group) => sum + conductorGroupChars(group, charsOfRoles), 0);
    refuseOverListing(chars, (total) => `The groups with their roles' grants come to ${total} characters, over the ${MAX_LISTING_CHARS} one listing answers; read them one at a time: GET /api/groups/{id}`);
    return Response.json(await Promise.all(groups.map((group) => conductorGroup(store, group, roles))));
  });

  router.get("/api/groups/:id", async (request, env) => Response.json(await conductorGroup(new SecurityStore(env.DB), await groupAt(env, pathName(request, "id")))));

  router.put("/api/groups/:id", async (request, env) => {
    const id = pathName(request, "id");
    const body = parseOrThrow(UpsertGroupBody, await requiredBody(request, env), "group");
    if (Object.keys(body.defaultAccess ?? {}).length > 16) throw validationError("Invalid group", [{ path: "defaultAccess", message: "may name at most 16 target types" }]);
    // Kept as given, each list without repeats, and shown; not applied (docs/api.md, Groups): it never gives anything.
    const defaultAccess = Object.fromEntries(Object.entries(body.defaultAccess ?? {}).map(([type, kinds]) => [type, [...new Set(kinds)]]));
    const store = new SecurityStore(env.DB);
    const roles = [...new Set(body.roles)];
    const unknown = await store.unknownRoles(roles);
    if (unknown.length > 0) throw validationError("Unknown roles", unknown.map((role) => ({ path: `roles[${body.roles.indexOf(role)}]`, message: `no role named ${role}` })));
    const repository = new GroupRepository(env.DB);
    const previous = await repository.get(id);
    // Every member gets the roles added: handing them out.
    const added = roles.filter((role) => !(previous?.roles ?? []).includes(role));
    const rolesChecked = await authorizeRoles(principalOf(request).grants, store, added, `giving group ${id} ${added.join(", ")}`);
    const group = { id, description: body.description, roles, permissions: previous?.permissions ?? [], defaultAccess };
    if (!(await repository.put(group, previous, rolesChecked))) throw changedMeanwhile(`group ${id} (or a role it gives)`);
    return Response.json(await conductorGroup(store, group));
  });

  router.delete("/api/groups/:id", async (request, env) => {
    if (!(await new GroupRepository(env.DB).delete(pathName(request, "id")))) throw notFound(`No group ${pathName(request, "id")}`);
    // Orkes' answer (its docs' example): a client reading the answer as JSON needs a body.
    return Response.json({ message: `Deleted group '${pathName(request, "id")}'` });
  });

  router.get("/api/groups/:id/users", async (request, env) => {
    const group = await groupAt(env, pathName(request, "id"));
    const store = new SecurityStore(env.DB);
    // Its members alone, selected in D1 in one read (with their groups and roles, each once), as the users' listing answers them.
    const members = await store.listUsers(group.id);
    return Response.json(await conductorUserListing(env.DB, store, members));
  });

  router.post("/api/groups/:groupId/users", async (request, env) => {
    const group = await groupAt(env, pathName(request, "groupId"));
    await changeMembers(request, env, group, parseOrThrow(UserIds, await requiredBody(request, env), "user ids"), []);
    return new Response(null, { status: 200 });
  });

  router.delete("/api/groups/:groupId/users", async (request, env) => {
    const group = await groupAt(env, pathName(request, "groupId"));
    await changeMembers(request, env, group, [], parseOrThrow(UserIds, await requiredBody(request, env), "user ids"));
    return new Response(null, { status: 200 });
  });

  router.post("/api/groups/:groupId/users/:userId", async (request, env) => {
    const group = await groupAt(env, pathName(request, "groupId"));
    await changeMembers(request, env, group, [pathName(request, "userId")], []);
    return new Response(null, { status: 200 });
  });

  router.delete("/api/groups/:groupId/users/:userId", async (request, env) => {
    const group = await groupAt(env, pathName(request, "groupId"));
    await changeMembers(request, env, group, [], [pathName(request, "userId")]);
    return new Response(null, { status: 200 });
  });
}
