import type { IRequest, RouterType } from "itty-router";
import { BULK_ACCESS_RULES, DEFAULT_ACCESS_RULES } from "../auth/access-rules";
import { userForApiKey } from "../auth/api-key";
import { addedGrants, authorizeHandingOut } from "../auth/delegation";
import { clientAddress } from "../auth/throttle";
import { grantsFor, isOutsideApplicationName } from "../auth/grants";
import { BOOTSTRAP_ADMIN_USER } from "../auth/principal";
import { PERMISSIONS, grantsAllow } from "../auth/permissions";
import { forgetVerifiedTokens, issueTokens, keySessionRevocations, refreshTokens, revokeToken } from "../auth/tokens";
import { serviceConfig } from "../config";
import { principalOf } from "../guard";
import { readBodyBytes, readJsonBody } from "../http/body";
import { ApiError, notFound, validationError } from "../http/errors";
import { booleanQuery, decodedPathParam } from "../http/params";
import { parseOrThrow } from "../schemas";
import { AccessRuleSchema, AssignmentSchema, NAME_PATTERN, RoleSchema, RoleUpdateSchema, UserIdSchema } from "../security/schemas";
import { APPLICATION_USER_PREFIX, ApplicationRepository, applicationExists } from "../security/applications";
import { GroupRepository } from "../security/groups";
import { SecurityStore } from "../security/store";
import { assignmentRefused, authorizeAssignment, changedMeanwhile, conductorUser } from "../security/users";

type Args = [Env, ExecutionContext];

/** A token endpoint body: JSON (Orkes style) or an OAuth 2.0 form; field names as sent. */
async function tokenRequestFields(request: IRequest, env: Env): Promise<Record<string, string>> {
  const raw = request as unknown as Request;
  const text = new TextDecoder().decode(await readBodyBytes(raw, serviceConfig(env).maxRequestBytes));
  const type = (raw.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const fields: Record<string, string> = {};
  if (type === "application/x-www-form-urlencoded") {
    for (const [key, value] of new URLSearchParams(text)) fields[key] = value;
  } else if (text.trim() !== "") {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError(400, "VALIDATION_ERROR", "Request body must be JSON or application/x-www-form-urlencoded");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw validationError("Invalid token request", [{ path: "(body)", message: "must be a JSON object" }]);
    for (const [key, value] of Object.entries(body)) if (typeof value === "string") fields[key] = value;
  }
  // RFC 6749 2.3.1: client credentials may come as HTTP Basic authentication.
  const basic = /^Basic\s+(.+)$/i.exec(raw.headers.get("authorization") ?? "");
  if (basic && fields["client_id"] === undefined) {
    try {
      const decoded = atob(basic[1]!.trim());
      const separator = decoded.indexOf(":");
      if (separator > 0) {
        fields["client_id"] = decodeURIComponent(decoded.slice(0, separator));
        fields["client_secret"] = decodeURIComponent(decoded.slice(separator + 1));
      }
    } catch {
      throw new ApiError(401, "INVALID_CREDENTIALS", "Malformed Basic credentials");
    }
  }
  return fields;
}

/** Exchanges API key credentials (either naming) or a refresh token (OAuth form) for tokens. */
async function tokenEndpoint(request: IRequest, env: Env): Promise<Response> {
  const fields = await tokenRequestFields(request, env);
  const grantType = fields["grant_type"];
  if (grantType === "refresh_token") {
    if (!fields["refresh_token"]) throw validationError("Invalid token request", [{ path: "refresh_token", message: "is required" }]);
    return Response.json(await refreshTokens(env, fields["refresh_token"]), { headers: { "cache-control": "no-store" } });
  }
  if (grantType !== undefined && grantType !== "client_credentials") {
    throw validationError("Invalid token request", [{ path: "grant_type", message: "must be client_credentials or refresh_token" }]);
  }
  const keyId = fields["keyId"] ?? fields["client_id"];
  const keySecret = fields["keySecret"] ?? fields["client_secret"];
  if (!keyId || !keySecret) {
    throw validationError("Invalid token request", [{ path: fields["client_id"] === undefined ? "keyId" : "client_secret", message: "keyId and keySecret (or client_id and client_secret) are required" }]);
  }
  const userId = await userForApiKey(env, { keyId, keySecret }, clientAddress(request as unknown as Request));
  // The bootstrap admin's key lives in configuration: issueTokens records which one (rotating it ends the session).
  const session = userId === BOOTSTRAP_ADMIN_USER ? {} : { keyId };
  return Response.json(await issueTokens(env, userId, session), { headers: { "cache-control": "no-store" } });
}

/** A user id in a path that may be given keys or roles: not the reserved bootstrap admin. */
function assignableUser(request: IRequest): string {
  const userId = pathName(request, "userId");
  if (userId === BOOTSTRAP_ADMIN_USER) {
    throw validationError("Reserved user id", [{ path: "userId", message: `${BOOTSTRAP_ADMIN_USER} is the bootstrap admin of BOOTSTRAP_ADMIN_KEY; it cannot be given keys or roles` }]);
  }
  return userId;
}

/** A role, user, group or key id from the path, checked as the security API checks names (400 otherwise). */
export function pathName(request: IRequest, key: string): string {
  const value = decodedPathParam(request, key);
  if (!NAME_PATTERN.test(value)) throw validationError(`Invalid ${key}`, [{ path: key, message: "must be 1 to 128 letters, digits or _ . @ + : -" }]);
  return value;
}

async function jsonBody(request: IRequest, env: Env): Promise<unknown> {
  const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  return body.present ? body.value : undefined;
}

/**
 * 409 for a role kept because users, applications or groups still hold it: the first few named, with where to take it
 * from them. Nothing was deleted.
 */
function roleStillHeld(name: string, holders: ReadonlyArray<{ kind: "user" | "group"; id: string }>, total: number): ApiError {
  const named = holders.map(({ kind, id }) =>
    kind === "group" ? `group ${id}` : id.startsWith(APPLICATION_USER_PREFIX) ? `application ${id.slice(APPLICATION_USER_PREFIX.length)}` : `user ${id}`,
  );
  const more = total > named.length ? ` and ${total - named.length} more` : "";
  return new ApiError(
    409,
    "CONFLICT",
    `Role ${name} is still held by ${named.join(", ")}${more}; take it from them first (PUT /api/security/users/{userId}/roles, PUT /api/groups/{id}, DELETE /api/applications/{id}/roles/${name}). Nothing was deleted`,
  );
}

/** Routes of the security API: tokens, roles, users, API keys, permissions and access rules. */
export function registerSecurityRoutes(router: RouterType<IRequest, Args>): void {
  router.post("/api/security/token", tokenEndpoint);
  router.post("/api/token", tokenEndpoint);

  router.post("/api/security/token/refresh", async (request, env) => {
    const fields = await tokenRequestFields(request, env);
    const token = fields["refreshToken"] ?? fields["refresh_token"];
    if (!token) throw validationError("Invalid refresh request", [{ path: "refreshToken", message: "is required" }]);
    return Response.json(await refreshTokens(env, token), { headers: { "cache-control": "no-store" } });
  });

  router.post("/api/security/token/revoke", async (request, env) => {
    const fields = await tokenRequestFields(request, env);
    if (!fields["token"]) throw validationError("Invalid revoke request", [{ path: "token", message: "is required" }]);
    await revokeToken(env, fields["token"]);
    return new Response(null, { status: 200 });
  });

  router.post("/api/security/roles", async (request, env) => {
    const role = parseOrThrow(RoleSchema, await jsonBody(request, env), "role");
    authorizeHandingOut(principalOf(request).grants, role.permissions, `role ${role.name}`);
    if (!(await new SecurityStore(env.DB).createRole(role))) throw new ApiError(409, "CONFLICT", `Role ${role.name} already exists`);
    return Response.json(role, { status: 201 });
  });
  // `short=true` (this service's, as the task definitions' listing has it): names and descriptions, the grants not read,
  // for a picker of roles (the UI's group and application pages) past what the whole listing answers.
  router.get("/api/security/roles", async (request, env) => {
    const store = new SecurityStore(env.DB);
    return Response.json(booleanQuery(request, "short", false) ? await store.listRoleNames() : await store.listRoles());
  });
  router.get("/api/security/roles/:name", async (request, env) => {
    const role = await new SecurityStore(env.DB).getRole(pathName(request, "name"));
    if (!role) throw notFound(`No role named ${pathName(request, "name")}`);
    return Response.json(role);
  });
  router.put("/api/security/roles/:name", async (request, env) => {
    const name = pathName(request, "name");
    const update = parseOrThrow(RoleUpdateSchema, await jsonBody(request, env), "role");
    if (update.name !== undefined && update.name !== name) throw validationError("Invalid role", [{ path: "name", message: "must match the name in the path" }]);
    const role = { name, description: update.description, permissions: update.permissions };
    const store = new SecurityStore(env.DB);
    const previous = await store.getRole(name);
    if (!previous) throw notFound(`No role named ${name}`);
    // Whoever holds the role gets what is added to it; what it already gave is not handed out again.
    authorizeHandingOut(principalOf(request).grants, addedGrants(previous.permissions, role.permissions), `role ${name}`);
    if (!(await store.updateRole(role, previous))) throw changedMeanwhile(`role ${name}`);
    return Response.json(role);
  });
  router.delete("/api/security/roles/:name", async (request, env) => {
    const name = pathName(request, "name");
    const deletion = await new SecurityStore(env.DB).deleteRole(name);
    if (deletion.outcome === "missing") throw notFound(`No role named ${name}`);
    if (deletion.outcome === "held") throw roleStillHeld(name, deletion.holders, deletion.total);
    return new Response(null, { status: 200 });
  });

  router.put("/api/security/users/:userId/roles", async (request, env) => {
    const userId = assignableUser(request);
    // No body (or `null`, an array) is refused, not read as "no roles": this request replaces everything the user holds.
    const body = parseOrThrow(AssignmentSchema, await jsonBody(request, env), "user assignment");
    const store = new SecurityStore(env.DB);
    const unknown = await store.unknownRoles(body.roles);
    if (unknown.length > 0) throw validationError("Unknown roles", unknown.map((role) => ({ path: `roles[${body.roles.indexOf(role)}]`, message: `no role named ${role}` })));
    const assignment = { userId, roles: body.roles, directPermissions: body.directPermissions };
    const previous = await store.getAssignment(userId);
    const unchanged = await authorizeAssignment(principalOf(request).grants, store, assignment, previous);
    if (!(await store.putAssignment(assignment, previous, [], unchanged))) throw await assignmentRefused(env.DB, userId, `the assignment of ${userId} (or a role it gives)`);
    return Response.json(assignment);
  });
  router.get("/api/security/users", async (_request, env) => Response.json(await new SecurityStore(env.DB).listUsers()));
  router.get("/api/security/users/:userId", async (request, env) => {
    const userId = pathName(request, "userId");
    // An unknown user looks like one with nothing assigned: the answer does not tell who exists.
    const assignment = (await new SecurityStore(env.DB).getAssignment(userId)) ?? { userId, roles: [], directPermissions: [] };
    // The groups they belong to (whose roles they hold too), by id: managed on the groups' pages.
    const groups = (await new GroupRepository(env.DB).groupsOf(userId)).map((group) => group.id).sort();
    return Response.json({ ...assignment, groups });
  });

  router.post("/api/security/users/:userId/api-keys", async (request, env) => {
    const userId = assignableUser(request);
    // A key acts as its user: handing one out hands out everything the user holds.
    authorizeHandingOut(principalOf(request).grants, await grantsFor(env, userId), `a key for ${userId}`);
    // An application's user (`app:<id>`) gets a key only while its application exists: no key acts as one deleted or never made.
    const key = await new SecurityStore(env.DB).createApiKey(userId, applicationExists(userId));
    if (!key) throw notFound(`No application with id ${userId.slice(APPLICATION_USER_PREFIX.length)}: ${userId} is an application's user`);
    return Response.json(key, { status: 201, headers: { "cache-control": "no-store" } });
  });
  router.get("/api/security/users/:userId/api-keys", async (request, env) => Response.json(await new SecurityStore(env.DB).listApiKeys(pathName(request, "userId"))));
  router.delete("/api/security/users/:userId/api-keys/:keyId", async (request, env) => {
    const keyId = pathName(request, "keyId");
    const deleted = await new SecurityStore(env.DB).deleteApiKey(pathName(request, "userId"), keyId, keySessionRevocations(env, keyId));
    forgetVerifiedTokens();
    if (!deleted) throw notFound("No such API key for that user");
    return new Response(null, { status: 200 });
  });

  // Orkes' TokenResource.getUserInfo: who the caller is, the roles assigned to them with their permissions, and what
  // they may do in all (the service's own field: a grant's scope, and permissions held without a role).
  router.get("/api/token/userInfo", async (request, env) => {
    const principal = principalOf(request);
    const store = new SecurityStore(env.DB);
    const id = principal.userId;
    // An outside identity named `app:<id>` is not that application (it holds none of its grants): it is shown as an
    // outside user holding nothing here: without the application's name, roles or groups.
    if (isOutsideApplicationName(principal)) return Response.json({ ...(await conductorUser(store, id, [], undefined)), applicationUser: false, permissions: principal.grants });
    const { assignment, name } = await store.getNamedAssignment(id);
    // An application's key acts as its user `app:<id>`: Orkes names the application.
    const application = id.startsWith(APPLICATION_USER_PREFIX) ? await new ApplicationRepository(env.DB).get(id.slice(APPLICATION_USER_PREFIX.length)) : null;
    const groups = await new GroupRepository(env.DB).groupsOf(id);
    return Response.json({ ...(await conductorUser(store, id, assignment?.roles ?? [], application?.name ?? name, groups)), permissions: principal.grants });
  });

  router.get("/api/security/permissions", async (request, env) => {
    const principal = principalOf(request);
    const scope = typeof request.query["scope"] === "string" && request.query["scope"] !== "" ? request.query["scope"] : "*";
    const asked = request.query["userId"];
    let userId = principal.userId;
    let grants = principal.grants;
    if (typeof asked === "string" && asked !== "" && asked !== principal.userId) {
      if (!grantsAllow(principal.grants, "USER_ADMIN", "*")) throw new ApiError(403, "PERMISSION_DENIED", "Permission denied: asking for another user's permissions needs USER_ADMIN on *");
      userId = parseOrThrow(UserIdSchema, asked, "userId", "userId");
      grants = await grantsFor(env, userId);
    }
    return Response.json({ userId, scope, permissions: PERMISSIONS.filter((action) => grantsAllow(grants, action, scope)) });
  });

  router.get("/api/security/rules", async (_request, env) =>
    Response.json({ rules: await new SecurityStore(env.DB).listRules(), defaults: DEFAULT_ACCESS_RULES, decidedFirst: BULK_ACCESS_RULES }),
  );
  router.post("/api/security/rules", async (request, env) => {
    const rule = parseOrThrow(AccessRuleSchema, await jsonBody(request, env), "access rule");
    return Response.json(await new SecurityStore(env.DB).createRule(rule), { status: 201 });
  });
  router.delete("/api/security/rules/:id", async (request, env) => {
    if (!(await new SecurityStore(env.DB).deleteRule(pathName(request, "id")))) throw notFound("No such access rule");
    return new Response(null, { status: 200 });
  });
}
