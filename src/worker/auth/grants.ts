import { APPLICATION_USER_PREFIX } from "../security/applications";
import { SecurityStore } from "../security/store";
import { PERMISSIONS, type Grant } from "./permissions";
import { BOOTSTRAP_ADMIN_USER, type Principal } from "./principal";
import { withTagGrantsExpanded } from "./tag-grants";

/** Every permission at scope `*`: what the bootstrap admin holds. */
export const ALL_GRANTS: readonly Grant[] = PERMISSIONS.map((action) => ({ action, scope: "*" }));

/**
 * A user's effective grants: the bootstrap admin holds everything; others what D1 assigns them (and their groups),
 * plus the permissions of `extraRoles` (role names an external identity provider vouches for), with those given on a
 * tag also given on the definitions holding it (see `tag-grants.ts`).
 * Identities vouched for by an external provider (`external`) are never the bootstrap admin, nor an application's
 * user (`app:<id>`), even when named like one: only this service's own credentials (the application's keys) can be.
 */
export async function grantsFor(env: Env, userId: string, extraRoles: string[] = [], external = false): Promise<Grant[]> {
  if (userId === BOOTSTRAP_ADMIN_USER && !external) return [...ALL_GRANTS];
  const store = new SecurityStore(env.DB);
  const grants = external && namesApplication(userId) ? [] : await store.effectiveGrants(userId);
  return withTagGrantsExpanded(env.DB, extraRoles.length === 0 ? grants : [...grants, ...(await store.roleGrants(extraRoles))]);
}

const namesApplication = (userId: string): boolean => userId.startsWith(APPLICATION_USER_PREFIX);

/** Whether `principal` signed in from outside: the identity provider's token or the custom auth Worker's answer. */
const signedInFromOutside = (principal: Pick<Principal, "method">): boolean => principal.method === "oauth" || principal.method === "custom";

/**
 * Whether `principal` is an outside identity (the identity provider's token, the custom auth Worker's answer) named like
 * an application's user (`app:<id>`): never that application (it holds none of its grants, see {@link grantsFor}), so
 * nothing stored for the application is "its own" either: not its grants, roles, groups or name.
 */
export function isOutsideApplicationName(principal: Pick<Principal, "userId" | "method">): boolean {
  return signedInFromOutside(principal) && namesApplication(principal.userId);
}

/**
 * Whether `principal` is an outside identity named like one of this service's own users: an application's
 * (`app:<id>`, see {@link isOutsideApplicationName}) or the bootstrap admin (`admin`). It is neither, so nothing given
 * to that user by name is its: not a human task assigned to or claimed by that user, nor one of that user's groups.
 */
export function isOutsideReservedName(principal: Pick<Principal, "userId" | "method">): boolean {
  return signedInFromOutside(principal) && (namesApplication(principal.userId) || principal.userId === BOOTSTRAP_ADMIN_USER);
}
