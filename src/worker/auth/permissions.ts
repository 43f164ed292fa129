/** The nine permissions of the spec (section 5.2). */
export const PERMISSIONS = [
  "WORKFLOW_READ",
  "WORKFLOW_WRITE",
  "WORKFLOW_ADMIN",
  "TASK_READ",
  "TASK_WRITE",
  "TASK_EXECUTE",
  "SYSTEM_ADMIN",
  "USER_ADMIN",
  "METADATA_ADMIN",
] as const;
/** One of {@link PERMISSIONS}. */
export type Permission = (typeof PERMISSIONS)[number];

/** A permission at a scope: `*`, a prefix ending in `*` (`app:*`), or an exact scope. */
export interface Grant {
  action: Permission;
  scope: string;
}

/** True when a granted scope covers the required one. */
export function scopeCovers(granted: string, required: string): boolean {
  if (granted === "*") return true;
  if (granted.endsWith("*")) return required.startsWith(granted.slice(0, -1));
  return granted === required;
}

/** True when some grant gives `action` at `scope`. */
export function grantsAllow(grants: readonly Grant[], action: Permission, scope: string): boolean {
  return grants.some((grant) => grant.action === action && scopeCovers(grant.scope, scope));
}
