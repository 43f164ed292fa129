import type { IRequest, RouterType } from "itty-router";
import * as v from "valibot";
import { BOOTSTRAP_ADMIN_USER } from "../auth/principal";
import { forgetVerifiedTokens, keySessionRevocations } from "../auth/tokens";
import { principalOf } from "../guard";
import { notFound, validationError } from "../http/errors";
import { booleanQuery, decodedPathParam } from "../http/params";
import { parseOrThrow, requestObject } from "../schemas";
import { APPLICATION_USER_PREFIX } from "../security/applications";
import { NAME_PATTERN } from "../security/schemas";
import { SecurityStore } from "../security/store";
import { authorizeAssignment, changedMeanwhile, conductorUser } from "../security/users";
import { requiredBody } from "./metadata";

type Args = [Env, ExecutionContext];

/** Longest user name, in characters. */
const MAX_USER_NAME_LENGTH = 255;

const roleName = v.pipe(v.string("must be a string"), v.regex(NAME_PATTERN, "must be a role name of 1 to 128 letters, digits or _ . @ + : -"));

/** Orkes' UpsertUserRequest: a name, the roles (replacing those assigned) and groups (none here). */
const UpsertUserBody = requestObject({
  name: v.optional(v.pipe(v.string("must be a string"), v.trim(), v.maxLength(MAX_USER_NAME_LENGTH, `must be at most ${MAX_USER_NAME_LENGTH} characters`))),
  roles: v.optional(v.pipe(v.array(roleName, "must be an array of role names"), v.maxLength(100, "may hold at most 100 roles"))),
  groups: v.optional(v.array(v.string("must be a string"), "must be an array of group ids")),
});

/**
 * A user id from the path that this API may manage: not the bootstrap admin (configuration, not D1), and not an
 * application's user (managed with its application, so that its keys and roles go with it).
 */
function managedUser(request: IRequest): string {
  const userId = decodedPathParam(request, "id");
  if (!NAME_PATTERN.test(userId)) throw validationError("Invalid user id", [{ path: "id", message: "must be 1 to 128 letters, digits or _ . @ + : -" }]);
  if (userId === BOOTSTRAP_ADMIN_USER) throw validationError("Reserved user id", [{ path: "id", message: `${BOOTSTRAP_ADMIN_USER} is the bootstrap admin of BOOTSTRAP_ADMIN_KEY` }]);
  if (userId.startsWith(APPLICATION_USER_PREFIX)) throw validationError("Application user", [{ path: "id", message: "an application's user: manage it through /api/applications" }]);
  return userId;
}

/**
 * Orkes' users API (the clients' AuthorizationClient: `upsertUser`, `getUser`, `listUsers`, `deleteUser`) over this
 * service's users: a user is their assignment (roles and direct permissions, `/api/security/users/{userId}`) and keys,
 * plus the name Orkes gives them. Roles are this service's (Orkes' standard names come defined); groups are not kept,
 * so a request giving some is refused. Authorized as the security API is (`USER_ADMIN`), handing out included.
 */
export function registerOrkesUserRoutes(router: RouterType<IRequest, Args>): void {
  router.get("/api/users", async (request, env) => {
    const store = new SecurityStore(env.DB);
    const withApplications = booleanQuery(request, "apps", false);
    const listed = (await store.listUsers()).filter((user) => withApplications || !user.userId.startsWith(APPLICATION_USER_PREFIX));
    const roles = new Map((await store.listRoles()).map((role) => [role.name, role]));
    return Response.json(await Promise.all(listed.map((user) => conductorUser(store, user.userId, user.roles, user.name, user.userId.startsWith(APPLICATION_USER_PREFIX), roles))));
  });

  router.get("/api/users/:id", async (request, env) => {
    const userId = decodedPathParam(request, "id");
    const store = new SecurityStore(env.DB);
    const assignment = await store.getAssignment(userId);
    if (!assignment && (await store.listApiKeys(userId)).length === 0) throw notFound(`No user ${userId}`);
    return Response.json(await conductorUser(store, userId, assignment?.roles ?? [], await store.getUserName(userId), userId.startsWith(APPLICATION_USER_PREFIX)));
  });

  router.put("/api/users/:id", async (request, env) => {
    const userId = managedUser(request);
    const body = parseOrThrow(UpsertUserBody, await requiredBody(request, env), "user");
    if ((body.groups ?? []).length > 0) {
      throw validationError("Groups are not supported", [{ path: "groups", message: "this service has no groups: give the user roles (a role can stand for what a group holds)" }]);
    }
    const store = new SecurityStore(env.DB);
    const roles = body.roles ?? [];
    const unknown = await store.unknownRoles(roles);
    if (unknown.length > 0) throw validationError("Unknown roles", unknown.map((role) => ({ path: `roles[${roles.indexOf(role)}]`, message: `no role named ${role}` })));
    const previous = await store.getAssignment(userId);
    const assignment = { userId, roles: body.roles ?? previous?.roles ?? [], directPermissions: previous?.directPermissions ?? [] };
    await authorizeAssignment(principalOf(request).grants, store, assignment, previous);
    if (!(await store.putAssignment(assignment, previous))) throw changedMeanwhile(`the assignment of ${userId}`);
    const name = body.name === undefined || body.name === "" ? await store.getUserName(userId) : body.name;
    if (name !== undefined) await store.setUserName(userId, name);
    return Response.json(await conductorUser(store, userId, assignment.roles, name, false));
  });

  // Their keys (and every session obtained with them) and their assignment go.
  router.delete("/api/users/:id", async (request, env) => {
    const userId = managedUser(request);
    const store = new SecurityStore(env.DB);
    const keyIds = (await store.listApiKeys(userId)).map((key) => key.keyId);
    if (!(await store.getAssignment(userId)) && keyIds.length === 0) throw notFound(`No user ${userId}`);
    await store.deleteUser(userId, keyIds, keyIds.flatMap((keyId) => keySessionRevocations(env, keyId)));
    forgetVerifiedTokens();
    return new Response(null, { status: 200 });
  });
}
