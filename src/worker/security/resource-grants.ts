import * as v from "valibot";
import type { Grant, Permission } from "../auth/permissions";

/**
 * Orkes' per-resource grants (the clients' AuthorizationClient: `grantPermissions`, `getPermissions`,
 * `removePermissions`, `checkPermissions`…) in this service's terms: access to a target is a permission at the
 * target's scope. A workflow definition's access is at `workflow:<name>`: READ is WORKFLOW_READ, EXECUTE is
 * WORKFLOW_ADMIN (starting and managing its executions), CREATE, UPDATE and DELETE are WORKFLOW_WRITE. A task
 * definition's, or a task reference name's, is at `task:<name>`: READ is TASK_READ, EXECUTE is TASK_EXECUTE, CREATE,
 * UPDATE and DELETE are TASK_WRITE. So CREATE, UPDATE and DELETE go together here: granting one grants all three, and
 * removing one removes all three.
 */

/** Orkes' kinds of access. */
export const ACCESS = ["CREATE", "READ", "UPDATE", "EXECUTE", "DELETE"] as const;
/** One of {@link ACCESS}. */
export type Access = (typeof ACCESS)[number];

/** The targets whose access maps onto this service's scopes. */
export const TARGET_TYPES = ["WORKFLOW_DEF", "TASK_DEF", "TASK_REF_NAME"] as const;
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

const PERMISSION_OF: Record<"workflow" | "task", Record<Access, Permission>> = {
  workflow: { READ: "WORKFLOW_READ", EXECUTE: "WORKFLOW_ADMIN", CREATE: "WORKFLOW_WRITE", UPDATE: "WORKFLOW_WRITE", DELETE: "WORKFLOW_WRITE" },
  task: { READ: "TASK_READ", EXECUTE: "TASK_EXECUTE", CREATE: "TASK_WRITE", UPDATE: "TASK_WRITE", DELETE: "TASK_WRITE" },
};

/** Whether a target's scope is a workflow's or a task's. */
const kindOf = (type: TargetType): "workflow" | "task" => (type === "WORKFLOW_DEF" ? "workflow" : "task");

/** The scope of `target`: `workflow:<name>` or `task:<name>`. */
export function scopeOf(target: TargetRef): string {
  return `${kindOf(target.type)}:${target.id}`;
}

/** The permission that gives `kind` of access to a target of `type`. */
export function permissionFor(type: TargetType, kind: Access): Permission {
  return PERMISSION_OF[kindOf(type)][kind];
}

/** The grants that give `access` to `target` (one per permission: CREATE, UPDATE and DELETE share one). */
export function grantsOf(target: TargetRef, access: readonly Access[]): Grant[] {
  const scope = scopeOf(target);
  const permissions = new Set(access.map((kind) => permissionFor(target.type, kind)));
  return [...permissions].map((action) => ({ action, scope }));
}

/** The access to a target of `type` that `grants` give at exactly `scope` (not through `*` or a prefix), in {@link ACCESS} order. */
export function accessGiven(grants: readonly Grant[], type: TargetType, scope: string): Access[] {
  const held = new Set(grants.filter((grant) => grant.scope === scope).map((grant) => grant.action));
  return ACCESS.filter((kind) => held.has(permissionFor(type, kind)));
}

/**
 * What `grants` give directly to targets, as Orkes' GrantedAccess: one per `workflow:<name>` or `task:<name>` scope
 * (shown as a WORKFLOW_DEF or a TASK_DEF), with the access it gives; other scopes (`*`, prefixes, others) are left out.
 */
export function grantedAccess(grants: readonly Grant[]): Array<{ target: TargetRef; access: Access[] }> {
  const scopes = [...new Set(grants.map((grant) => grant.scope))].sort();
  return scopes.flatMap((scope) => {
    const match = /^(workflow|task):(.+)$/.exec(scope);
    if (match === null || match[2]!.includes("*")) return [];
    const type: TargetType = match[1] === "workflow" ? "WORKFLOW_DEF" : "TASK_DEF";
    const access = accessGiven(grants, type, scope);
    return access.length === 0 ? [] : [{ target: { type, id: match[2]! }, access }];
  });
}

const unsupportedTarget = `must be one of ${TARGET_TYPES.join(", ")} (other targets have no scope here: give roles and direct permissions instead)`;
const targetId = v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(250, "must be at most 250 characters"), v.check((id) => !id.includes("*"), "must name one resource (no *)"));

/** Orkes' TargetRef, refused for a target type this service has no scope for. */
export const TargetRefSchema = v.object({ type: v.picklist(TARGET_TYPES, unsupportedTarget), id: targetId });

/** Orkes' AuthorizationRequest: the access given to (or removed from) a subject on a target. */
export const AuthorizationRequestSchema = v.object({
  subject: v.object({
    type: v.picklist(["USER", "ROLE", "GROUP"], "must be USER, ROLE or GROUP"),
    id: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(128, "must be at most 128 characters")),
  }),
  target: TargetRefSchema,
  access: v.pipe(v.array(v.picklist(ACCESS, `must be one of ${ACCESS.join(", ")}`), "must be an array of access kinds"), v.minLength(1, "must name at least one access kind")),
});
