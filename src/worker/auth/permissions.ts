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

/**
 * The names a test of grants on `<kind>:<name>` scopes lets through, for a search or a listing to read only those:
 * every name, or those given exactly and those starting with one of `prefixes`. `nameTerms` (search.ts) makes it SQL.
 */
export type NameFilter = "every" | { names: string[]; prefixes: string[] };

/**
 * The names `name` for which `grants` give `action` at `scopePrefix + name` (`workflow:` + a definition's name), as
 * {@link grantsAllow} decides each one: every name for a grant at `*` or at a prefix of `scopePrefix` ending in `*`
 * (`work*`), the rest of an exact scope under `scopePrefix` (`workflow:orders`: `orders`), and the rest of a prefix
 * under it (`workflow:orders_*`: names starting with `orders_`).
 */
export function namesGranted(grants: readonly Grant[], action: Permission, scopePrefix: string): NameFilter {
  const names: string[] = [];
  const prefixes: string[] = [];
  for (const grant of grants) {
    if (grant.action !== action) continue;
    if (grant.scope.endsWith("*")) {
      const prefix = grant.scope.slice(0, -1);
      if (scopePrefix.startsWith(prefix)) return "every";
      if (prefix.startsWith(scopePrefix)) prefixes.push(prefix.slice(scopePrefix.length));
    } else if (grant.scope.startsWith(scopePrefix)) {
      names.push(grant.scope.slice(scopePrefix.length));
    }
  }
  return { names, prefixes };
}

/** The names any of `filters` lets through. */
export function eitherName(filters: readonly NameFilter[]): NameFilter {
  const some: Array<Exclude<NameFilter, "every">> = [];
  for (const filter of filters) {
    if (filter === "every") return "every";
    some.push(filter);
  }
  return { names: some.flatMap((filter) => filter.names), prefixes: some.flatMap((filter) => filter.prefixes) };
}
