import { referencedSecrets } from "../../engine/expressions";
import type { JsonValue, WorkflowDef } from "../../engine/model";
import { ApiError } from "../http/errors";
import { grantsAllow, type Grant, type Permission } from "./permissions";

/**
 * The permission that lets its holder use a secret in a definition, at `secret:<name>`. The spec fixes
 * the permission list, so using a secret reuses the one the secrets API itself needs, at a narrower scope.
 */
export const SECRET_USE_PERMISSION: Permission = "SYSTEM_ADMIN";

/** The scope at which {@link SECRET_USE_PERMISSION} lets its holder use secret `name`. */
export function secretScope(name: string): string {
  return `secret:${name}`;
}

/**
 * Throws 403 unless `grants` let their holder use every secret the definitions reference. Registering a
 * definition decides where its secrets are sent at run time (an HTTP task's URL, for one), so whoever
 * registers it must be trusted with those values; starting a stored definition needs no such right.
 */
export function authorizeSecretUse(grants: readonly Grant[], definitions: readonly WorkflowDef[]): void {
  const denied = new Set<string>();
  for (const definition of definitions) {
    // The whole definition, not only the fields resolved today: a field that becomes a template later is covered already.
    for (const name of referencedSecrets(definition as unknown as JsonValue)) {
      if (!grantsAllow(grants, SECRET_USE_PERMISSION, secretScope(name))) denied.add(name);
    }
  }
  if (denied.size === 0) return;
  const names = [...denied];
  throw new ApiError(
    403,
    "PERMISSION_DENIED",
    `Permission denied: the definition uses secret${names.length > 1 ? "s" : ""} ${names.join(", ")}; using a secret needs ${SECRET_USE_PERMISSION} on ${names.map(secretScope).join(", ")}`,
  );
}
