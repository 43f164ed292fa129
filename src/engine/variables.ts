/**
 * Changes to a workflow's variables, shared by the two ways they change while it runs: an update from outside
 * (`updateVariables`) and a SET_VARIABLE task.
 */
import { oversize, oversizeReason, overdeepReason } from "./limits";
import type { JsonObject } from "./model";
import { setOwn } from "./own-property";

/**
 * `current` with `given` merged in, as Orkes' putAll and Conductor's SET_VARIABLE: shallow, each given key replaces
 * (or adds) the one of that name, as data (a `__proto__` key too). `current` is left as it is.
 */
export function mergedVariables(current: JsonObject, given: JsonObject): JsonObject {
  const variables: JsonObject = { ...current };
  for (const [key, value] of Object.entries(given)) setOwn(variables, key, value);
  return variables;
}

/**
 * Why `variables` (described by `what`) cannot be stored, or undefined: they share the workflow's row, so they must
 * nest no deeper than values from outside may and fit in MAX_PAYLOAD_BYTES (`limit`).
 */
export function variablesProblem(what: string, variables: JsonObject, limit: number): string | undefined {
  // Checked first: measuring the size serialises the value, which a deep one overflows.
  const deep = overdeepReason(what, variables);
  if (deep !== undefined) return deep;
  const bytes = oversize(variables, limit);
  return bytes === undefined ? undefined : oversizeReason(what, bytes, limit);
}
