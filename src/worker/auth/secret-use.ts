import { referencedSecrets } from "../../engine/expressions";
import type { JsonValue, WorkflowDef } from "../../engine/model";
import { secretUpdatingTasks } from "../../engine/tasks/update-secret";
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
 * Throws 403 when a definition holds an UPDATE_SECRET (at any depth) and `grants` do not let their holder write every
 * secret, as the secrets API does ({@link SECRET_USE_PERMISSION} on `*`): its key may be any name an expression gives,
 * and replacing a secret other workflows send would have their calls carry a value of the registrant's choosing. A
 * grant on some secrets, which lets its holder use them, does not let it write them.
 */
function authorizeSecretWrites(grants: readonly Grant[], definitions: readonly WorkflowDef[]): void {
  if (grantsAllow(grants, SECRET_USE_PERMISSION, "*")) return;
  const writers = definitions.flatMap((definition) => secretUpdatingTasks(definition).map((task) => `${definition.name}: ${task.taskReferenceName}`));
  if (writers.length === 0) return;
  throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: the definition writes secrets (UPDATE_SECRET ${writers.join(", ")}); writing a secret needs ${SECRET_USE_PERMISSION} on *, as the secrets API does`);
}

/**
 * Throws 403 unless `grants` let their holder use every secret the definitions reference, and write every secret when
 * one holds an UPDATE_SECRET. Registering a definition decides where its secrets are sent at run time (an HTTP task's
 * URL, for one) and which ones it replaces, so whoever registers it must be trusted with those values; starting a
 * stored definition needs no such right.
 */
export function authorizeSecretUse(grants: readonly Grant[], definitions: readonly WorkflowDef[]): void {
  authorizeSecretWrites(grants, definitions);
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
