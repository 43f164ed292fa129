import * as v from "valibot";
import type { Grant, Permission } from "../auth/permissions";
import { SECRET_USE_PERMISSION } from "../auth/secret-use";

/**
 * Orkes' per-resource grants (the clients' AuthorizationClient: `grantPermissions`, `getPermissions`,
 * `removePermissions`, `checkPermissions`…) in this service's terms: access to a target is a permission at the
 * target's scope. A workflow definition's access is at `workflow:<name>`: READ is WORKFLOW_READ, EXECUTE is
 * WORKFLOW_ADMIN (starting and managing its executions), CREATE, UPDATE and DELETE are WORKFLOW_WRITE. A task
 * definition's, or a task reference name's, is at `task:<name>`: READ is TASK_READ, EXECUTE is TASK_EXECUTE, CREATE,
 * UPDATE and DELETE are TASK_WRITE. So CREATE, UPDATE and DELETE go together here: granting one grants all three, and
 * removing one removes all three. A secret's (SECRET_NAME) READ and EXECUTE are the right to use it in definitions
 * (SYSTEM_ADMIN at `secret:<name>`, see `auth/secret-use.ts`); its CREATE, UPDATE and DELETE are the secrets API's,
 * SYSTEM_ADMIN on every secret, which no grant on one secret gives. A TAG `key:value` is the scope `tag:key:value`,
 * where each access is both the workflow permission and the task permission, and READ and EXECUTE also the right to use
 * secrets: they apply to the workflow and task definitions and the secrets holding that tag (see `auth/tag-grants.ts`,
 * which expands them as a caller's grants are read), as Orkes' tags share every resource carrying them.
 */

/** Orkes' kinds of access. */
export const ACCESS = ["CREATE", "READ", "UPDATE", "EXECUTE", "DELETE"] as const;
/** One of {@link ACCESS}. */
export type Access = (typeof ACCESS)[number];

/** The targets whose access maps onto this service's scopes. */
export const TARGET_TYPES = ["WORKFLOW_DEF", "TASK_DEF", "TASK_REF_NAME", "SECRET_NAME", "TAG"] as const;
/** One of {@link TARGET_TYPES}. */
export type TargetType = (typeof TARGET_TYPES)[number];

/** Orkes' TargetRef, of a type this service maps. */
export interface TargetRef {
  type: TargetType;
  id: string;
}

/** Orkes' SubjectRef: who access is given to. */
export interface SubjectRef {
  type: "USER" | "ROLE" | "GROUP";
  id: string;
}

/** The kinds of scope a target has. */
type ScopeKind = "workflow" | "task" | "secret" | "tag";

/**
 * The permissions each access is at a target's scope (a tag's: the workflow one first, then the task one); an access
 * missing here is not given per target (see {@link requiredFor}).
 */
const PERMISSION_OF: Record<ScopeKind, Partial<Record<Access, readonly Permission[]>>> = {
  workflow: { READ: ["WORKFLOW_READ"], EXECUTE: ["WORKFLOW_ADMIN"], CREATE: ["WORKFLOW_WRITE"], UPDATE: ["WORKFLOW_WRITE"], DELETE: ["WORKFLOW_WRITE"] },
  task: { READ: ["TASK_READ"], EXECUTE: ["TASK_EXECUTE"], CREATE: ["TASK_WRITE"], UPDATE: ["TASK_WRITE"], DELETE: ["TASK_WRITE"] },
  secret: { READ: [SECRET_USE_PERMISSION], EXECUTE: [SECRET_USE_PERMISSION] },
  // READ and EXECUTE carry the right to use the tagged secrets (as a SECRET_NAME's do), so handing either out takes
  // holding that right at the tag (or on *), and taking either away takes it.
  tag: {
    READ: ["WORKFLOW_READ", "TASK_READ", SECRET_USE_PERMISSION],
    EXECUTE: ["WORKFLOW_ADMIN", "TASK_EXECUTE", SECRET_USE_PERMISSION],
    CREATE: ["WORKFLOW_WRITE", "TASK_WRITE"],
    UPDATE: ["WORKFLOW_WRITE", "TASK_WRITE"],
    DELETE: ["WORKFLOW_WRITE", "TASK_WRITE"],
  },
};

const KIND_OF: Record<TargetType, ScopeKind> = { WORKFLOW_DEF: "workflow", TASK_DEF: "task", TASK_REF_NAME: "task", SECRET_NAME: "secret", TAG: "tag" };
const kindOf = (type: TargetType): ScopeKind => KIND_OF[type];

/** The scope of `target`: `workflow:<name>`, `task:<name>`, `secret:<name>` or `tag:<key>:<value>`. */
export function scopeOf(target: TargetRef): string {
  return `${kindOf(target.type)}:${target.id}`;
}

/** The access kinds a grant on one target of `type` can give. */
export function grantableAccess(type: TargetType): Access[] {
  return ACCESS.filter((kind) => PERMISSION_OF[kindOf(type)][kind] !== undefined);
}

/** What `kind` of access to `target` takes: its permission at the target's scope, or (a secret's writes) SYSTEM_ADMIN everywhere. */
export function requiredFor(target: TargetRef, kind: Access): Grant {
  // A tag's access is given as both of its permissions at once: the first stands for them.
  const action = PERMISSION_OF[kindOf(target.type)][kind]?.[0];
  return action === undefined ? { action: "SYSTEM_ADMIN", scope: "*" } : { action, scope: scopeOf(target) };
}

/** The grants that give `access` to `target` (one per permission: CREATE, UPDATE and DELETE share one); `access` is grantable (the request schema checks it). */
export function grantsOf(target: TargetRef, access: readonly Access[]): Grant[] {
  const scope = scopeOf(target);
  const permissions = new Set(access.flatMap((kind) => PERMISSION_OF[kindOf(target.type)][kind] ?? []));
  return [...permissions].map((action) => ({ action, scope }));
}

/**
 * The access to a target of `type` that `grants` give at exactly `scope` (not through `*` or a prefix), in {@link ACCESS}
 * order. A tag's access is shown by its workflow and task permissions: one given before a tag's READ and EXECUTE
 * carried the use of its secrets, or with that use taken away by removing the other kind, still reads as given.
 */
export function accessGiven(grants: readonly Grant[], type: TargetType, scope: string): Access[] {
  const held = new Set(grants.filter((grant) => grant.scope === scope).map((grant) => grant.action));
  const shownBy = (kind: Access) => PERMISSION_OF[kindOf(type)][kind]!.filter((action) => type !== "TAG" || action !== SECRET_USE_PERMISSION);
  return grantableAccess(type).filter((kind) => shownBy(kind).every((action) => held.has(action)));
}

/** The target type a scope's kind is shown as. */
const SHOWN_AS: Record<ScopeKind, TargetType> = { workflow: "WORKFLOW_DEF", task: "TASK_DEF", secret: "SECRET_NAME", tag: "TAG" };

/**
 * What `grants` give directly to targets, as Orkes' GrantedAccess: one per `workflow:<name>`, `task:<name>`,
 * `secret:<name>` or `tag:<key>:<value>` scope (shown as a WORKFLOW_DEF, a TASK_DEF, a SECRET_NAME or a TAG), with the
 * access it gives; other scopes (`*`, prefixes, others) are left out.
 */
export function grantedAccess(grants: readonly Grant[]): Array<{ target: TargetRef; access: Access[] }> {
  const scopes = [...new Set(grants.map((grant) => grant.scope))].sort();
  return scopes.flatMap((scope) => {
    const target = targetAt(scope);
    if (target === undefined) return [];
    const access = accessGiven(grants, target.type, scope);
    return access.length === 0 ? [] : [{ target, access }];
  });
}

/** The one target a scope names (`workflow:<name>` a WORKFLOW_DEF, …, as {@link grantedAccess} shows it); none for `*`, prefixes and other scopes. */
export function targetAt(scope: string): TargetRef | undefined {
  const match = /^(workflow|task|secret|tag):(.+)$/.exec(scope);
  if (match === null || match[2]!.includes("*")) return undefined;
  return { type: SHOWN_AS[match[1] as ScopeKind], id: match[2]! };
}

/**
 * The grants making up what {@link grantedAccess} shows of `grants` (of targets of type `type` when given): each access
 * shown, as {@link grantsOf} gives it (a tag's READ or EXECUTE with the use of its secrets). A grant showing nothing
 * alone (a tag's workflow permission without its task one, the use of a tag's secrets without either) is not among them.
 */
export function shownGrants(grants: readonly Grant[], type?: string): Grant[] {
  const shown = grantedAccess(grants).filter((granted) => type === undefined || granted.target.type === type);
  return shown.flatMap(({ target, access }) => grantsOf(target, access)).filter((given) => grants.some((grant) => grant.action === given.action && grant.scope === given.scope));
}

const unsupportedTarget = `must be one of ${TARGET_TYPES.join(", ")} (other targets have no scope here: give roles and direct permissions instead)`;
const targetId = v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(250, "must be at most 250 characters"), v.check((id) => !id.includes("*"), "must name one resource (no *)"));

/**
 * A target type as a client names it: Orkes' Gson-based Java client writes its `TargetRef.TypeEnum.SECRET` by the
 * constant's name, `SECRET`, where the API (and every other client) says `SECRET_NAME`.
 */
export function targetTypeName(type: string): string {
  return type === "SECRET" ? "SECRET_NAME" : type;
}

/**
 * The target types Orkes' `GET /api/users/{id}/checkPermissions` takes beyond {@link TARGET_TYPES} (its page lists
 * them as supported): answered there by what this service's routes let the user do on the equivalent thing, or as a
 * target nobody has access to when there is none (see routes/authorization.ts), rather than refused.
 */
export const CHECKED_ONLY_TARGET_TYPES = [
  "WORKFLOW",
  "WORKFLOW_SCHEDULE",
  "EVENT_HANDLER",
  "TASK_ID",
  "APPLICATION",
  "USER",
  "ENV_VARIABLE",
  "DOMAIN",
  "INTEGRATION_PROVIDER",
  "INTEGRATION",
  "PROMPT",
  "USER_FORM_TEMPLATE",
  "SCHEMA",
  "WEBHOOK",
  "API_GATEWAY_SERVICE",
  "API_GATEWAY_SERVICE_ROUTE",
  "CLUSTER_CONFIG",
  "AUTH_CONFIG",
  "GROUP",
  "ROLE",
  "SERVICE_REGISTRY",
] as const;
/**
 * Every target type Orkes names (its clients' TargetRef types): those of {@link TARGET_TYPES} and those of
 * {@link CHECKED_ONLY_TARGET_TYPES}, on which no access is given per target here. One list, so a type checkPermissions
 * answers is never refused as unknown elsewhere (a `resourceType` filter).
 */
export const ORKES_TARGET_TYPES: readonly string[] = [...new Set<string>([...TARGET_TYPES, ...CHECKED_ONLY_TARGET_TYPES])];

/** One of {@link CHECKED_ONLY_TARGET_TYPES}. */
export type CheckedOnlyTargetType = (typeof CHECKED_ONLY_TARGET_TYPES)[number];

/** A target of one of the {@link CHECKED_ONLY_TARGET_TYPES}, by its name or id. */
export const CheckedOnlyTargetSchema = v.object({ type: v.picklist(CHECKED_ONLY_TARGET_TYPES), id: targetId });

/** Orkes' TargetRef, refused for a target type this service has no scope for; a TAG's id is `key:value`. */
export const TargetRefSchema = v.pipe(
  v.object({ type: v.pipe(v.unknown(), v.transform((type) => (typeof type === "string" ? targetTypeName(type) : type)), v.picklist(TARGET_TYPES, unsupportedTarget)), id: targetId }),
  v.forward(
    v.check((target) => target.type !== "TAG" || /^[^:]+:./.test(target.id), "a TAG is named key:value (the tag a definition holds)"),
    ["id"],
  ),
);

/** Orkes' AuthorizationRequest: the access given to (or removed from) a subject on a target. */
export const AuthorizationRequestSchema = v.pipe(
  v.object({
    subject: v.object({
      // Orkes' docs list (and send) them in lower case too.
      type: v.pipe(v.string("must be USER, ROLE or GROUP"), v.toUpperCase(), v.picklist(["USER", "ROLE", "GROUP"], "must be USER, ROLE or GROUP")),
      id: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(128, "must be at most 128 characters")),
    }),
    target: TargetRefSchema,
    access: v.pipe(v.array(v.picklist(ACCESS, `must be one of ${ACCESS.join(", ")}`), "must be an array of access kinds"), v.minLength(1, "must name at least one access kind")),
  }),
  v.forward(
    v.check(
      (request) => request.access.every((kind) => grantableAccess(request.target.type).includes(kind)),
      "a secret's CREATE, UPDATE and DELETE are the secrets API's (SYSTEM_ADMIN on every secret): per secret, READ or EXECUTE (using it in definitions) is given",
    ),
    ["access"],
  ),
);
