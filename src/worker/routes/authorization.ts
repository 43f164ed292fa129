import type { IRequest, RouterType } from "itty-router";
import * as v from "valibot";
import { START_PERMISSION } from "../auth/access-rules";
import { addedGrants, authorizeHandingOut } from "../auth/delegation";
import { grantsFor, isOutsideApplicationName } from "../auth/grants";
import { grantsAllow, type Grant } from "../auth/permissions";
import { BOOTSTRAP_ADMIN_USER } from "../auth/principal";
import { executionName, principalOf, routeCheckFor } from "../guard";
import { lookUpTask } from "../task-lookup";
import { isUuid } from "../../engine/task-id";
import { ApiError, notFound, validationError } from "../http/errors";
import { decodedPathParam, queryParams } from "../http/params";
import { parseOrThrow } from "../schemas";
import { mayOnSchedule } from "../schedules/access";
import { ScheduleRepository } from "../schedules/store";
import { GroupRepository } from "../security/groups";
import {
  ACCESS,
  AuthorizationRequestSchema,
  CHECKED_ONLY_TARGET_TYPES,
  CheckedOnlyTargetSchema,
  ORKES_TARGET_TYPES,
  TARGET_TYPES,
  accessGiven,
  grantedAccess,
  grantsOf,
  requiredFor,
  scopeOf,
  shownGrants,
  TargetRefSchema,
  targetTypeName,
  type Access,
  type CheckedOnlyTargetType,
  type SubjectRef,
  type TargetRef,
} from "../security/resource-grants";
import { NAME_PATTERN } from "../security/schemas";
import { SecurityStore } from "../security/store";
import { assignmentRefused, authorizeAssignment, changedMeanwhile, userKnown } from "../security/users";
import { requiredBody } from "./metadata";
import { pathName } from "./security";

type Args = [Env, ExecutionContext];

/** Most grants a user's direct permissions, a role or a group may hold (as the security API's schemas bound them). */
const MAX_GRANTS = 200;

/** A change of a subject's grants: what it holds now in, what it is to hold out. */
type GrantChange = (held: readonly Grant[]) => Grant[];

const adding = (grants: readonly Grant[]): GrantChange => (held) => [...held, ...addedGrants(held, grants)];
// What is held and not among `grants`: addedGrants read the other way round.
const removing = (grants: readonly Grant[]): GrantChange => (held) => addedGrants(grants, held);

/** Whether a change left `held` as it was (a change only adds or takes away). */
const sameGrants = (held: readonly Grant[], changed: readonly Grant[]): boolean => held.length === changed.length && addedGrants(held, changed).length === 0;

/** Refuses (400) a change that would leave a subject holding more grants than it may. */
function bounded(grants: Grant[], subject: SubjectRef): Grant[] {
  if (grants.length > MAX_GRANTS) throw validationError("Too many grants", [{ path: "subject", message: `${subject.type} ${subject.id} would hold ${grants.length} grants; at most ${MAX_GRANTS}` }]);
  return grants;
}

/**
 * Changes the permissions `subject` holds directly: a user's direct permissions, a role's permissions, a group's own
 * permissions. What is added is handed out, so the caller must hold it (403); each write goes through only while what
 * it was checked against is still stored (409 otherwise). Giving access to a role or group that does not exist is a
 * 404; giving a user access creates their assignment, as `PUT /api/security/users/{userId}/roles` does. Taking access
 * (`taking`) from a subject that does not exist takes nothing and creates nothing; a change leaving what the subject
 * holds the same writes nothing.
 */
async function changeSubject(request: IRequest, env: Env, subject: SubjectRef, change: GrantChange, taking = false): Promise<void> {
  if (!NAME_PATTERN.test(subject.id)) throw validationError("Invalid subject", [{ path: "subject.id", message: "must be 1 to 128 letters, digits or _ . @ + : -" }]);
  const holder = principalOf(request).grants;
  const store = new SecurityStore(env.DB);
  const what = `${subject.type} ${subject.id}`;
  if (subject.type === "USER") {
    if (subject.id === BOOTSTRAP_ADMIN_USER) throw validationError("Reserved user id", [{ path: "subject.id", message: `${BOOTSTRAP_ADMIN_USER} is the bootstrap admin of BOOTSTRAP_ADMIN_KEY, which holds everything` }]);
    const previous = await store.getAssignment(subject.id);
    const directPermissions = bounded(change(previous?.directPermissions ?? []), subject);
    // Taking access from a user holding none directly takes nothing: writing their (empty) assignment would create them.
    if (!previous && directPermissions.length === 0) return;
    // Nor is a change leaving what they hold the same written (a new update time, every caller's grants re-read).
    if (previous && sameGrants(previous.directPermissions, directPermissions)) return;
    const assignment = { userId: subject.id, roles: previous?.roles ?? [], directPermissions };
    const unchanged = await authorizeAssignment(holder, store, assignment, previous);
    if (!(await store.putAssignment(assignment, previous, [], unchanged))) throw await assignmentRefused(env.DB, subject.id, `the assignment of ${subject.id}`);
    return;
  }
  if (subject.type === "ROLE") {
    const role = await store.getRole(subject.id);
    // Taking access from a role that does not exist takes nothing, as for a user holding none.
    if (!role && taking) return;
    if (!role) throw notFound(`No role ${subject.id}`);
    const permissions = bounded(change(role.permissions), subject);
    if (sameGrants(role.permissions, permissions)) return;
    authorizeHandingOut(holder, addedGrants(role.permissions, permissions), `giving role ${role.name} access`);
    if (!(await store.updateRole({ ...role, permissions }, role))) throw changedMeanwhile(`role ${role.name}`);
    return;
  }
  const groups = new GroupRepository(env.DB);
  const group = await groups.get(subject.id);
  if (!group && taking) return;
  if (!group) throw notFound(`No group ${subject.id}`);
  const permissions = bounded(change(group.permissions), subject);
  if (sameGrants(group.permissions, permissions)) return;
  authorizeHandingOut(holder, addedGrants(group.permissions, permissions), `giving ${what} access`);
  if (!(await groups.setPermissions(group.id, permissions, group.permissions))) throw changedMeanwhile(`group ${group.id}`);
}

/** Whether `groupBy` asks for Orkes' grouping by subject (`subject`) rather than by access (`access`, the default); anything else is a 400. */
function groupedBySubject(request: IRequest): boolean {
  const groupBy = queryParams(request, ["groupBy"])["groupBy"];
  if (groupBy === undefined || groupBy === "access") return false;
  if (groupBy === "subject") return true;
  throw validationError("Invalid query parameter groupBy", [{ path: "groupBy", message: "must be access or subject" }]);
}

/** A subject's type in a path: USER, ROLE or GROUP, in any case (Orkes' docs write them in both). */
const SubjectTypeSchema = v.pipe(v.string(), v.toUpperCase(), v.picklist(["USER", "ROLE", "GROUP"], "must be USER, ROLE or GROUP"));

/**
 * The type a `resourceType` filter keeps, as {@link grantedAccess} shows targets: a task reference name's grant is a
 * TASK_DEF's (one scope). Another of Orkes' types (WORKFLOW, APPLICATION…) keeps what it names: nothing given here. A
 * type Orkes does not name (a typo such as WORKFLOW_DEFS) is a 400: kept as a filter it would match nothing, and a
 * revocation would answer that it revoked while taking nothing.
 */
function shownTypeOf(resourceType: string): string {
  if (!ORKES_TARGET_TYPES.includes(resourceType)) throw validationError("Invalid query parameter resourceType", [{ path: "resourceType", message: `must be one of Orkes' resource types: ${ORKES_TARGET_TYPES.join(", ")}` }]);
  return resourceType === "TASK_REF_NAME" ? "TASK_DEF" : resourceType;
}

/**
 * Whether user `id` can hold no per-target grant: the bootstrap admin (holding everything at `*`, never assigned
 * anything) and an id outside the names grants are given to (an identity provider's `auth0|abc`), to which nothing can
 * be given. Such a user is one with nothing: its list is `[]` and revoking its grants takes nothing (200), where its id
 * was a 400 as if the request were malformed.
 */
function givenNothing(id: string): boolean {
  return id === BOOTSTRAP_ADMIN_USER || !NAME_PATTERN.test(id);
}

/** The target a path names (`/{type}/{id}` or the `type` and `id` query parameters), refused (400) when unmapped. */
function targetOf(fields: Record<string, unknown>): TargetRef {
  return parseOrThrow(TargetRefSchema, { type: fields["type"], id: fields["id"] }, "target");
}

/** The requests standing for each access to a target (`[method, path]`), where a route of this service serves it. */
type AccessRequests = Partial<Record<Access, readonly [method: string, path: string]>>;

/** The requests of {@link checkedOnly}'s types whose routes the access rules decide alone, for target `id`. */
function ruledRequests(type: CheckedOnlyTargetType, id: string): AccessRequests | undefined {
  const at = encodeURIComponent(id);
  switch (type) {
    case "EVENT_HANDLER":
      return { READ: ["GET", `/api/event/handler/${at}`], CREATE: ["POST", "/api/event"], UPDATE: ["PUT", "/api/event"], DELETE: ["DELETE", `/api/event/${at}`] };
    case "ENV_VARIABLE":
      return { READ: ["GET", `/api/environment/${at}`], CREATE: ["PUT", `/api/environment/${at}`], UPDATE: ["PUT", `/api/environment/${at}`], DELETE: ["DELETE", `/api/environment/${at}`] };
    case "SCHEMA":
      return { READ: ["GET", `/api/schema/${at}`], CREATE: ["POST", "/api/schema"], UPDATE: ["POST", "/api/schema"], DELETE: ["DELETE", `/api/schema/${at}`] };
    case "WEBHOOK":
      return { READ: ["GET", `/api/metadata/webhook/${at}`], CREATE: ["POST", "/api/metadata/webhook"], UPDATE: ["PUT", `/api/metadata/webhook/${at}`], DELETE: ["DELETE", `/api/metadata/webhook/${at}`] };
    // Applications, users, groups and roles: EXECUTE (Orkes' management of one) as their update.
    case "APPLICATION":
      return { READ: ["GET", `/api/applications/${at}`], CREATE: ["POST", "/api/applications"], UPDATE: ["PUT", `/api/applications/${at}`], EXECUTE: ["PUT", `/api/applications/${at}`], DELETE: ["DELETE", `/api/applications/${at}`] };
    case "USER":
      return { READ: ["GET", `/api/users/${at}`], CREATE: ["PUT", `/api/users/${at}`], UPDATE: ["PUT", `/api/users/${at}`], EXECUTE: ["PUT", `/api/users/${at}`], DELETE: ["DELETE", `/api/users/${at}`] };
    case "GROUP":
      return { READ: ["GET", `/api/groups/${at}`], CREATE: ["PUT", `/api/groups/${at}`], UPDATE: ["PUT", `/api/groups/${at}`], EXECUTE: ["PUT", `/api/groups/${at}`], DELETE: ["DELETE", `/api/groups/${at}`] };
    case "ROLE":
      return { READ: ["GET", `/api/security/roles/${at}`], CREATE: ["POST", "/api/security/roles"], UPDATE: ["PUT", `/api/security/roles/${at}`], EXECUTE: ["PUT", `/api/security/roles/${at}`], DELETE: ["DELETE", `/api/security/roles/${at}`] };
    // A form is read by name at GET /api/human/template?name=, saved by POST, never executed.
    case "USER_FORM_TEMPLATE":
      return { READ: ["GET", "/api/human/template"], CREATE: ["POST", "/api/human/template"], UPDATE: ["POST", "/api/human/template"], DELETE: ["DELETE", `/api/human/template/${at}`] };
    default:
      return undefined;
  }
}

/**
 * What `grants` let their holder do on a target of a type access is not given on here, as the routes of this service's
 * equivalent decide it: an execution (WORKFLOW) is read with WORKFLOW_READ and acted on (paused, rerun, terminated,
 * removed; CREATE: its workflow started) with WORKFLOW_ADMIN, both at its workflow's name; a schedule (WORKFLOW_SCHEDULE)
 * as its workflow's (schedules/access.ts), EXECUTE being its management; a task by id (TASK_ID) READ as
 * `GET /api/tasks/{taskId}` and UPDATE and EXECUTE as reporting its result are authorized; an event handler, an
 * environment variable, a schema, a webhook, an application, a user, a group, a role or a user form as the access rules
 * in force decide its routes (read, save, delete: {@link ruledRequests}; by default applications, users, groups and
 * roles USER_ADMIN's, EXECUTE being their update; forms read by anyone and written with TASK_WRITE on * or
 * METADATA_ADMIN), EXECUTE otherwise never (no request executes one). `userId` naming nobody, with no grants, holds
 * nothing on any type. The workflow an execution, schedule or task belongs to is used only when `callerGrants` (the
 * asking USER_ADMIN's) may read it; otherwise, and when it does not exist, it is answered as one of no workflow name (only a grant on every
 * workflow covers it), so the answer tells the caller nothing of what exists or where it belongs that they could not
 * read anyway. The other types (DOMAIN, the integrations, prompts, the API gateway's, cluster and auth configuration,
 * the service registry), of which this service has nothing, are answered as a target nobody holds access to: every
 * kind false. The answer only describes: nothing here decides a request.
 */
async function checkedOnly(env: Env, callerGrants: readonly Grant[], userId: string, grants: readonly Grant[], type: CheckedOnlyTargetType, id: string): Promise<Record<Access, boolean>> {
  const each = (allowed: (kind: Access) => boolean) => Object.fromEntries(ACCESS.map((kind) => [kind, allowed(kind)])) as Record<Access, boolean>;
  const eachAsync = async (allowed: (kind: Access) => Promise<boolean>) => Object.fromEntries(await Promise.all(ACCESS.map(async (kind) => [kind, await allowed(kind)]))) as Record<Access, boolean>;
  // A user id naming nobody holds nothing, whatever a type's routes let any caller do (a rule open to all, forms).
  if (grants.length === 0 && !(await userKnown(env.DB, new SecurityStore(env.DB), userId))) return each(() => false);
  const ruled = ruledRequests(type, id);
  if (ruled !== undefined) {
    const allows = await routeCheckFor(env, grants);
    return eachAsync(async (kind) => ruled[kind] !== undefined && (await allows(...ruled[kind])));
  }
  switch (type) {
    case "WORKFLOW": {
      const name = await executionName(env, id);
      const scope = `workflow:${name !== undefined && grantsAllow(callerGrants, "WORKFLOW_READ", `workflow:${name}`) ? name : ""}`;
      return each((kind) => grantsAllow(grants, kind === "READ" ? "WORKFLOW_READ" : START_PERMISSION, scope));
    }
    case "WORKFLOW_SCHEDULE": {
      const found = (await new ScheduleRepository(env.DB).get(id))?.workflowName;
      const workflowName = found !== undefined && mayOnSchedule(callerGrants, "read", found) ? found : undefined;
      return each((kind) => mayOnSchedule(grants, kind === "READ" ? "read" : "manage", workflowName));
    }
    case "TASK_ID": {
      const path = `/api/tasks/${encodeURIComponent(id)}`;
      const found = isUuid(id) ? await lookUpTask(env, id.toLowerCase()) : undefined;
      const named = found && { workflowName: found.workflowName, taskRefName: found.taskRefName, taskName: found.taskName };
      const target = named !== undefined && (await (await routeCheckFor(env, callerGrants))("GET", path, named)) ? named : {};
      const allows = await routeCheckFor(env, grants);
      const read = await allows("GET", path, target);
      const complete = await allows("POST", "/api/tasks", target);
      return each((kind) => (kind === "READ" ? read : (kind === "UPDATE" || kind === "EXECUTE") && complete));
    }
    default:
      return each(() => false);
  }
}

/**
 * Orkes' per-resource grants (see `security/resource-grants.ts` for how access maps onto this service's permissions and
 * scopes): `POST` and `DELETE /api/auth/authorization` give and take access, `GET /api/auth/authorization/{type}/{id}`
 * lists who has which on a target, `GET /api/users/{id}/permissions` and `/api/groups/{id}/permissions` what a user or
 * group was given directly, and `GET /api/users/{id}/checkPermissions` what a user can do on a target, however they
 * hold it. Needs `USER_ADMIN`; giving access is handing it out (the caller must hold it).
 */
export function registerAuthorizationRoutes(router: RouterType<IRequest, Args>): void {
  router.post("/api/auth/authorization", async (request, env) => {
    const body = parseOrThrow(AuthorizationRequestSchema, await requiredBody(request, env), "authorization request");
    await changeSubject(request, env, body.subject, adding(grantsOf(body.target, body.access)));
    // Orkes answers with this message (its docs' example); a client reading the answer as JSON needs a body.
    return Response.json({ message: "Granted permission" });
  });

  router.delete("/api/auth/authorization", async (request, env) => {
    const body = parseOrThrow(AuthorizationRequestSchema, await requiredBody(request, env), "authorization request");
    await changeSubject(request, env, body.subject, removing(grantsOf(body.target, body.access)), true);
    return Response.json({ message: "Removed permission" });
  });

  // Orkes' map of access kind → subjects holding it on the target, given at the target's own scope: every kind, with
  // an empty list when nobody holds it (the clients index the map by kind). A target type this service gives no access
  // on per target (APPLICATION, USER, DOMAIN…: Orkes' other TargetTypes) has no holders. `groupBy=subject` (Orkes'
  // other grouping) maps each holder, as `TYPE:id`, to the access it holds instead.
  router.get("/api/auth/authorization/:type/:id", async (request, env) => {
    const bySubject = groupedBySubject(request);
    const type = targetTypeName(decodedPathParam(request, "type"));
    const byAccess = Object.fromEntries(ACCESS.map((kind) => [kind, [] as SubjectRef[]])) as Record<Access, SubjectRef[]>;
    const subjects: Record<string, Access[]> = {};
    if (/^[A-Z][A-Z_]*$/.test(type) && !(TARGET_TYPES as readonly string[]).includes(type)) return Response.json(bySubject ? subjects : byAccess);
    const target = targetOf({ type, id: decodedPathParam(request, "id") });
    const scope = scopeOf(target);
    // Only those holding a grant at the target's scope are read (every user, role and group was).
    for (const holder of await new SecurityStore(env.DB).grantHoldersAt(scope)) {
      const given = accessGiven(holder.grants, target.type, scope);
      for (const kind of given) byAccess[kind].push({ type: holder.kind, id: holder.id });
      if (given.length > 0) subjects[`${holder.kind}:${holder.id}`] = given;
    }
    return Response.json(bySubject ? subjects : byAccess);
  });

  router.get("/api/users/:userId/permissions", async (request, env) => {
    const assignment = await new SecurityStore(env.DB).getAssignment(pathName(request, "userId"));
    return Response.json({ grantedAccess: grantedAccess(assignment?.directPermissions ?? []) });
  });

  // What the user can do on the target, however they hold it (roles, groups, direct permissions, `*` and prefixes).
  // Orkes' other target types are answered too (see checkedOnly), never refused: a client asks about any it lists.
  router.get("/api/users/:userId/checkPermissions", async (request, env) => {
    const query = queryParams(request, ["type", "id"]);
    const type = typeof query["type"] === "string" ? targetTypeName(query["type"]) : undefined;
    if (type !== undefined && (CHECKED_ONLY_TARGET_TYPES as readonly string[]).includes(type)) {
      const target = parseOrThrow(CheckedOnlyTargetSchema, { type, id: query["id"] }, "target");
      const userId = pathName(request, "userId");
      const grants = await grantsFor(env, userId);
      return Response.json(await checkedOnly(env, principalOf(request).grants, userId, grants, target.type, target.id));
    }
    // Refused with the types this route takes: targetOf's message lists only the grantable ones.
    if (type === undefined || !ORKES_TARGET_TYPES.includes(type)) throw validationError("Invalid target", [{ path: "type", message: `must be one of ${ORKES_TARGET_TYPES.join(", ")}` }]);
    const target = targetOf(query);
    const grants = await grantsFor(env, pathName(request, "userId"));
    const allows = (required: Grant) => grantsAllow(grants, required.action, required.scope);
    return Response.json(Object.fromEntries(ACCESS.map((kind) => [kind, allows(requiredFor(target, kind))])));
  });

  // Orkes' list of the grants a subject was given per target (v5.4.2): a user's direct permissions, a role's, a group's
  // own, as `GET /api/users/{id}/permissions` shows them but as a bare list, `resourceType` keeping one type's. A
  // caller's own, or anyone's for one with USER_ADMIN on *.
  router.get("/api/auth/subjects/:subjectType/:subjectId/grants", async (request, env) => {
    const principal = principalOf(request);
    // Anyone may list their own (Orkes' rule); anything else is USER_ADMIN's, as the route's rule lets every caller in.
    // Decided first, so a caller without it learns nothing of what the path names, valid or not. An outside identity
    // named `app:<id>` is not that application: its grants are not the identity's own.
    const own =
      decodedPathParam(request, "subjectType").toUpperCase() === "USER" && decodedPathParam(request, "subjectId") === principal.userId && !isOutsideApplicationName(principal);
    if (!own && !grantsAllow(principal.grants, "USER_ADMIN", "*")) {
      throw new ApiError(403, "PERMISSION_DENIED", "Permission denied: listing another subject's grants needs USER_ADMIN on *");
    }
    const subject = parseOrThrow(SubjectTypeSchema, decodedPathParam(request, "subjectType"), "subjectType", "subjectType");
    const resourceType = queryParams(request, ["resourceType"])["resourceType"];
    const kept = resourceType === undefined ? undefined : shownTypeOf(targetTypeName(String(resourceType)));
    const store = new SecurityStore(env.DB);
    let grants: readonly Grant[];
    if (subject === "USER") {
      const id = decodedPathParam(request, "subjectId");
      grants = givenNothing(id) ? [] : ((await store.getAssignment(id))?.directPermissions ?? []);
    } else if (subject === "ROLE") {
      const id = pathName(request, "subjectId");
      const role = await store.getRole(id);
      if (!role) throw notFound(`No role ${id}`);
      grants = role.permissions;
    } else {
      const id = pathName(request, "subjectId");
      const group = await new GroupRepository(env.DB).get(id);
      if (!group) throw notFound(`No group ${id}`);
      grants = group.permissions;
    }
    return Response.json(grantedAccess(grants).filter((granted) => kept === undefined || granted.target.type === kept));
  });

  // Orkes' revocation of every grant a subject was given per target (v5.4.2), or of one resourceType's: what the list
  // above shows goes (a role's or a group's roles stay); taking away hands nothing out.
  router.delete("/api/auth/subjects/:subjectType/:subjectId/grants", async (request, env) => {
    const type = parseOrThrow(SubjectTypeSchema, decodedPathParam(request, "subjectType"), "subjectType", "subjectType");
    const resourceType = queryParams(request, ["resourceType"])["resourceType"];
    const kept = resourceType === undefined ? undefined : shownTypeOf(targetTypeName(String(resourceType)));
    // As its list shows, such a user holds nothing per target: nothing to take.
    if (type === "USER" && givenNothing(decodedPathParam(request, "subjectId"))) return Response.json({ message: "Revoked grants" });
    const id = pathName(request, "subjectId");
    // Exactly what the list shows goes: a grant it does not show (a tag's workflow permission without its task one) stays.
    await changeSubject(request, env, { type, id }, (held) => removing(shownGrants(held, kept))(held), true);
    return Response.json({ message: "Revoked grants" });
  });

  router.get("/api/groups/:groupId/permissions", async (request, env) => {
    const group = await new GroupRepository(env.DB).get(pathName(request, "groupId"));
    if (!group) throw notFound(`No group ${pathName(request, "groupId")}`);
    return Response.json({ grantedAccess: grantedAccess(group.permissions) });
  });
}
