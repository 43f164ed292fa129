import { ApiError } from "../http/errors";
import { grantsAllow, type Grant } from "./permissions";
import type { Principal } from "./principal";

/**
 * An API access rule (spec 2.5): requests whose path matches `apiPath` and whose method is in
 * `methods` need one of `requiredPermissions`. `apiPath` segments may be `{name}` (one segment,
 * available to scopes as `${path.name}`) and the pattern may end in `*` (any rest, or none).
 */
export interface AccessRule {
  apiPath: string;
  methods: string[];
  requiredPermissions: Grant[];
}

const ANY = "*";
const everywhere = (action: Grant["action"]): Grant => ({ action, scope: ANY });

/**
 * The rule for every route of the service, most specific first. A request that matches none is
 * denied: a new route without a rule is closed until someone decides who may use it.
 */
export const DEFAULT_ACCESS_RULES: readonly AccessRule[] = [
  { apiPath: "/api/metadata/*", methods: ["GET"], requiredPermissions: [everywhere("WORKFLOW_READ"), everywhere("METADATA_ADMIN")] },
  { apiPath: "/api/metadata/*", methods: ["POST", "PUT", "DELETE"], requiredPermissions: [everywhere("METADATA_ADMIN"), everywhere("WORKFLOW_WRITE")] },
  { apiPath: "/api/workflow/*", methods: ["GET"], requiredPermissions: [everywhere("WORKFLOW_READ")] },
  { apiPath: "/api/workflow/*", methods: ["POST", "PUT", "DELETE"], requiredPermissions: [everywhere("WORKFLOW_ADMIN")] },
  { apiPath: "/api/tasks/*", methods: ["GET"], requiredPermissions: [everywhere("TASK_READ")] },
  { apiPath: "/api/tasks/*", methods: ["POST", "PUT"], requiredPermissions: [everywhere("TASK_EXECUTE")] },
  { apiPath: "/api/security/*", methods: ["GET", "POST", "PUT", "DELETE"], requiredPermissions: [everywhere("USER_ADMIN")] },
  { apiPath: "/api/secrets/*", methods: ["GET", "PUT", "POST", "DELETE"], requiredPermissions: [everywhere("SYSTEM_ADMIN")] },
  // Anything else under /api (unknown routes, routes added without a rule) is for system admins only.
  { apiPath: "/api/*", methods: [ANY], requiredPermissions: [everywhere("SYSTEM_ADMIN")] },
];

/** Matches a path against a rule pattern; the captured `{name}` segments, or undefined. */
export function matchApiPath(pattern: string, path: string): Record<string, string> | undefined {
  const wildcard = pattern.endsWith("*");
  const patternSegments = (wildcard ? pattern.slice(0, -1) : pattern).split("/").filter(Boolean);
  const pathSegments = path.split("/").filter(Boolean);
  if (wildcard ? pathSegments.length < patternSegments.length : pathSegments.length !== patternSegments.length) return undefined;
  const variables: Record<string, string> = {};
  for (let i = 0; i < patternSegments.length; i++) {
    const expected = patternSegments[i]!;
    const actual = pathSegments[i]!;
    const variable = /^\{(\w+)\}$/.exec(expected);
    if (variable) variables[variable[1]!] = decodeURIComponent(actual);
    else if (expected !== actual) return undefined;
  }
  return variables;
}

/** Substitutes `${path.<name>}` in a required scope. */
function requiredScope(scope: string, variables: Record<string, string>): string {
  return scope.replace(/\$\{path\.(\w+)\}/g, (_match, name: string) => variables[name] ?? "");
}

/** Throws 403 unless a rule lets the principal make this request. */
export function authorize(principal: Principal, method: string, path: string, rules: readonly AccessRule[] = DEFAULT_ACCESS_RULES): void {
  for (const rule of rules) {
    if (!rule.methods.includes(method) && !rule.methods.includes(ANY)) continue;
    const variables = matchApiPath(rule.apiPath, path);
    if (!variables) continue;
    const allowed = rule.requiredPermissions.some((grant) => grantsAllow(principal.grants, grant.action, requiredScope(grant.scope, variables)));
    if (allowed) return;
    const needed = rule.requiredPermissions.map((grant) => `${grant.action} on ${requiredScope(grant.scope, variables)}`).join(" or ");
    throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: ${method} ${path} needs ${needed}`);
  }
  throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: no access rule allows ${method} ${path}`);
}
