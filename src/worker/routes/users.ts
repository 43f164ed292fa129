import type { IRequest, RouterType } from "itty-router";
import * as v from "valibot";
import { BOOTSTRAP_ADMIN_USER } from "../auth/principal";
import { forgetVerifiedTokens, userKeySessionRevocations } from "../auth/tokens";
import { principalOf } from "../guard";
import { notFound, validationError } from "../http/errors";
import { booleanQuery, decodedPathParam } from "../http/params";
import { absentWhenNull, parseOrThrow, requestObject, wellFormedText } from "../schemas";
import { APPLICATION_USER_PREFIX } from "../security/applications";
import { NAME_PATTERN, OrkesRolesSchema } from "../security/schemas";
import { GroupRepository } from "../security/groups";
import { ALWAYS, ASSIGNMENT_WRITTEN, SecurityStore, allHold } from "../security/store";
import { authorizeAssignment, changedMeanwhile, conductorUser, conductorUserListing } from "../security/users";
import { authorizeJoining } from "./groups";
import { requiredBody } from "./metadata";
import { pathName } from "./security";

type Args = [Env, ExecutionContext];

/** Longest user name, in characters. */
const MAX_USER_NAME_LENGTH = 255;

/**
 * Orkes' UpsertUserRequest: a name, the roles (replacing those assigned) and the groups (replacing those joined). Null
 * is absent: Orkes' Gson-based Java client sends every field it was not given as null.
 */
const UpsertUserBody = requestObject({
  name: absentWhenNull(v.pipe(v.string("must be a string"), v.trim(), v.maxLength(MAX_USER_NAME_LENGTH, `must be at most ${MAX_USER_NAME_LENGTH} characters`), wellFormedText)),
  roles: absentWhenNull(OrkesRolesSchema),
  groups: absentWhenNull(v.pipe(v.array(v.pipe(v.string("must be a string"), v.regex(NAME_PATTERN, "must be a group id of 1 to 128 letters, digits or _ . @ + : -")), "must be an array of group ids"), v.maxLength(100, "may hold at most 100 groups"))),
});

/**
 * A user id from the path that this API may manage: not the bootstrap admin (configuration, not D1), and not an
 * application's user (managed with its application, so that its keys and roles go with it).
 */
function managedUser(request: IRequest): string {
  const userId = pathName(request, "id");
  if (userId === BOOTSTRAP_ADMIN_USER) throw validationError("Reserved user id", [{ path: "id", message: `${BOOTSTRAP_ADMIN_USER} is the bootstrap admin of BOOTSTRAP_ADMIN_KEY` }]);
  if (userId.startsWith(APPLICATION_USER_PREFIX)) throw validationError("Application user", [{ path: "id", message: "an application's user: manage it through /api/applications" }]);
  return userId;
}

/**
 * Orkes' users API (the clients' AuthorizationClient: `upsertUser`, `getUser`, `listUsers`, `deleteUser`) over this
 * service's users: a user is their assignment (roles and direct permissions, `/api/security/users/{userId}`) and keys,
 * plus the name Orkes gives them and the groups they belong to (see `groups.ts`). Roles are this service's (Orkes'
 * standard names come defined). Authorized as the security API is (`USER_ADMIN`), handing out included.
 */
export function registerOrkesUserRoutes(router: RouterType<IRequest, Args>): void {
  router.get("/api/users", async (request, env) => {
    const store = new SecurityStore(env.DB);
    const withApplications = booleanQuery(request, "apps", false);
    const listed = (await store.listUsers()).filter((user) => withApplications || !user.userId.startsWith(APPLICATION_USER_PREFIX));
    return Response.json(await conductorUserListing(env.DB, store, listed));
  });

  router.get("/api/users/:id", async (request, env) => {
    const userId = decodedPathParam(request, "id");
    const store = new SecurityStore(env.DB);
    const { assignment, name } = await store.getNamedAssignment(userId);
    const groups = await new GroupRepository(env.DB).groupsOf(userId);
    if (!assignment && groups.length === 0 && (await store.listApiKeys(userId)).length === 0) throw notFound(`No user ${userId}`);
    return Response.json(await conductorUser(store, userId, assignment?.roles ?? [], name, groups));
  });

  router.put("/api/users/:id", async (request, env) => {
    const userId = managedUser(request);
    const body = parseOrThrow(UpsertUserBody, await requiredBody(request, env), "user");
    const store = new SecurityStore(env.DB);
    const roles = body.roles ?? [];
    const unknown = await store.unknownRoles(roles);
    if (unknown.length > 0) throw validationError("Unknown roles", unknown.map((role) => ({ path: `roles[${roles.indexOf(role)}]`, message: `no role named ${role}` })));
    const groupRepository = new GroupRepository(env.DB);
    const groupIds = body.groups === undefined ? undefined : [...new Set(body.groups)];
    const joined = groupIds === undefined ? undefined : await Promise.all(groupIds.map((id) => groupRepository.get(id)));
    const missing = (groupIds ?? []).filter((_, index) => joined![index] === null);
    if (missing.length > 0) throw validationError("Unknown groups", missing.map((id) => ({ path: `groups[${body.groups!.indexOf(id)}]`, message: `no group ${id}` })));
    const { assignment: previous, name: previousName } = await store.getNamedAssignment(userId);
    const assignment = { userId, roles: body.roles ?? previous?.roles ?? [], directPermissions: previous?.directPermissions ?? [] };
    const rolesChecked = await authorizeAssignment(principalOf(request).grants, store, assignment, previous);
    // Joining a group gives its roles and permissions: handed out as assigning them would be.
    const memberOf = (await groupRepository.groupsOf(userId)).map((group) => group.id);
    const newGroups = (joined ?? []).flatMap((group) => (group === null || memberOf.includes(group.id) ? [] : [group]));
    const groupsChecked = newGroups.length > 0 ? await authorizeJoining(request, env, newGroups, `adding ${userId} to ${newGroups.map((group) => group.id).join(", ")}`) : ALWAYS;
    // The groups joined anew and the roles assigned were checked as they were read: changed meanwhile, nothing is written.
    const unchanged = allHold(rolesChecked, GroupRepository.unchangedCondition(newGroups), groupsChecked);
    // The name and the memberships are written with the assignment, in its transaction, or not at all.
    const writtenWith = [
      ...(body.name === undefined || body.name === "" ? [] : [store.withAssignment(assignment, unchanged, `UPDATE user_assignments SET name = ?4 WHERE user_id = ?1 AND ${ASSIGNMENT_WRITTEN}`, body.name)]),
      ...(groupIds === undefined ? [] : groupRepository.membershipStatements(store, assignment, groupIds, unchanged)),
    ];
    if (!(await store.putAssignment(assignment, previous, writtenWith, unchanged))) throw changedMeanwhile(`the assignment of ${userId} (or a role or group it gives)`);
    const name = body.name === undefined || body.name === "" ? previousName : body.name;
    return Response.json(await conductorUser(store, userId, assignment.roles, name, await groupRepository.groupsOf(userId)));
  });

  // Their keys (and every session obtained with them), their assignment and their memberships go.
  router.delete("/api/users/:id", async (request, env) => {
    const userId = managedUser(request);
    const store = new SecurityStore(env.DB);
    const keyIds = (await store.listApiKeys(userId)).map((key) => key.keyId);
    const groups = await new GroupRepository(env.DB).groupsOf(userId);
    if (!(await store.getAssignment(userId)) && keyIds.length === 0 && groups.length === 0) throw notFound(`No user ${userId}`);
    await store.deleteUser(userId, userKeySessionRevocations(env, userId));
    forgetVerifiedTokens();
    // Orkes' answer (its docs' example): a client reading the answer as JSON needs a body.
    return Response.json({ message: `Deleted user '${userId}'` });
  });
}
