import { ApiError } from "../http/errors";
import { grantsAllow, type Grant } from "./permissions";

/**
 * True for a tag's scope (`tag:<key>:<value>`): handed out only by a holder of that very tag's grant, or of one on
 * `*`. A wildcard that covers it by its text (`tag*`, stored before such scopes were refused) expands to no tag when
 * it is held, and must not let its holder give out every tag.
 */
function tagScope(scope: string): boolean {
  return scope.startsWith("tag:");
}

/** True when the two grants are the same permission at the same scope. */
function sameGrant(a: Grant, b: Grant): boolean {
  return a.action === b.action && a.scope === b.scope;
}

/** The grants of `next` that `previous` did not already hold: what a change hands out anew. */
export function addedGrants(previous: readonly Grant[], next: readonly Grant[]): Grant[] {
  return next.filter((grant) => !previous.some((held) => sameGrant(held, grant)));
}

/**
 * Throws 403 unless `holder` holds every grant of `handedOut` (the same permission at a scope covering
 * it). Without this a USER_ADMIN could put SYSTEM_ADMIN in a role, a user's direct permissions or a
 * user's key and so raise itself above what it was given. A holder of SYSTEM_ADMIN on `*` holds
 * everything the service can grant, so it hands out anything.
 */
export function authorizeHandingOut(holder: readonly Grant[], handedOut: readonly Grant[], what: string): void {
  if (grantsAllow(holder, "SYSTEM_ADMIN", "*")) return;
  const missing = handedOut.filter((grant) => !grantsAllow(tagScope(grant.scope) ? holder.filter((held) => held.scope === "*" || held.scope === grant.scope) : holder, grant.action, grant.scope));
  if (missing.length === 0) return;
  const named = missing.map((grant) => `${grant.action} on ${grant.scope}`).join(", ");
  throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: only permissions the caller holds can be handed out, and ${what} would give ${named}`);
}
