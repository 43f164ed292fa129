import * as v from "valibot";
import { PERMISSIONS } from "../auth/permissions";
import { requestObject, wellFormedText } from "../schemas";

/** True for a scope other than `*` whose wildcard would cover tag scopes (`tag:a:*`, `tag*`, `t*`, `*x`). */
function coversTagsByWildcard(scope: string): boolean {
  const star = scope.indexOf("*");
  if (star < 0 || scope === "*") return false;
  const head = scope.slice(0, star);
  return head.startsWith("tag:") || "tag:".startsWith(head);
}

const scope = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(1, "must not be empty"),
  v.maxLength(256, "must be at most 256 characters"),
  // A tag's scope names one tag: a wildcard there would expand to nothing yet cover every tag when handing grants out.
  // So would a wildcard whose head could begin a tag's scope (`tag*`, `t*`): only `*` itself covers every tag.
  v.check((value) => !coversTagsByWildcard(value), "a tag's scope (tag:<key>:<value>) names one tag, without *; and no scope but * may end in a * that covers tag: scopes (tag*, ta*, t*)"),
);

/** A permission grant `{action, scope}`; unknown permission names are refused. */
export const GrantSchema = v.object({
  action: v.picklist(PERMISSIONS, `must be one of ${PERMISSIONS.join(", ")}`),
  scope,
});

/**
 * Names of roles, users and groups: what fits in a path segment and a log line. Not `.` or `..`: as a path segment
 * (`DELETE /api/groups/ops/users/..`) a client's URL resolves it away, and the request reaches another route.
 */
export const NAME_PATTERN = /^(?!\.\.?$)[A-Za-z0-9_.@+:-]{1,128}$/;
const name = (what: string) => v.pipe(v.string("must be a string"), v.regex(NAME_PATTERN, `must be a ${what} of 1 to 128 letters, digits or _ . @ + : - (not . or ..)`));

/** Body of `POST /api/security/roles` (a Role, spec 2.5). */
export const RoleSchema = requestObject({
  name: name("role name"),
  description: v.optional(v.pipe(v.string("must be a string"), v.maxLength(1024, "must be at most 1024 characters"), wellFormedText), ""),
  permissions: v.pipe(v.array(GrantSchema, "must be an array of {action, scope}"), v.maxLength(200, "may hold at most 200 grants")),
});

/** Body of `PUT /api/security/roles/{name}`: the role without its name (the path names it). */
export const RoleUpdateSchema = requestObject({
  name: v.optional(name("role name")),
  description: v.optional(v.pipe(v.string("must be a string"), v.maxLength(1024, "must be at most 1024 characters"), wellFormedText), ""),
  permissions: v.pipe(v.array(GrantSchema, "must be an array of {action, scope}"), v.maxLength(200, "may hold at most 200 grants")),
});

/** Most roles one user (or application) is assigned. */
export const MAX_ASSIGNED_ROLES = 100;

/** Body of `PUT /api/security/users/{userId}/roles`. */
export const AssignmentSchema = requestObject({
  roles: v.optional(v.pipe(v.array(name("role name"), "must be an array of role names"), v.maxLength(MAX_ASSIGNED_ROLES, `may hold at most ${MAX_ASSIGNED_ROLES} roles`)), []),
  directPermissions: v.optional(v.pipe(v.array(GrantSchema, "must be an array of {action, scope}"), v.maxLength(200, "may hold at most 200 grants")), []),
});

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "*"] as const;

/** Body of `POST /api/security/rules`. */
export const AccessRuleSchema = requestObject({
  apiPath: v.pipe(
    v.string("must be a string"),
    v.regex(/^\/api(\/[^\s]*)?$/, "must be a path under /api, optionally ending in *"),
    // A * matches whole segments only: `/workflow/payroll*` would read as the segment payroll and anything under it,
    // not as names starting with payroll, so a rule written so would silently not apply.
    v.check((path: string) => !path.slice(0, -1).includes("*") && (!path.endsWith("*") || path.endsWith("/*")), "may hold a * only as its last segment (/api/metadata/workflow/*): a * inside a segment is no prefix"),
    v.maxLength(512, "must be at most 512 characters"),
  ),
  methods: v.pipe(v.array(v.picklist(METHODS, `must be one of ${METHODS.join(", ")}`), "must be an array of HTTP methods"), v.minLength(1, "must name at least one method")),
  requiredPermissions: v.pipe(v.array(GrantSchema, "must be an array of {action, scope}"), v.maxLength(50, "may hold at most 50 grants")),
});

/** A user id in a path. */
export const UserIdSchema = name("user id");

/**
 * Orkes' roles of a user or group (`UpsertUserRequest.roles`, `UpsertGroupRequest.roles`): role names; a single name
 * is taken as a list of one, as the JavaScript client's types declare the field as one role.
 */
export const OrkesRolesSchema = v.union(
  [
    v.pipe(v.array(name("role name"), "must be an array of role names"), v.maxLength(100, "may hold at most 100 roles")),
    v.pipe(name("role name"), v.transform((role: string) => [role])),
  ],
  "must be a role name or an array of role names",
);
