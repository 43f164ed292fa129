/**
 * Orkes' masked parameters: the value of any `_secrets` or `_masked` key, and of any key its definition's
 * `maskedFields` names, at any depth of an execution's input, output, variables or a task's input and output, is shown
 * as `***` wherever the API shows it (executions, tasks, search, status events). The execution keeps the real values:
 * expressions read them, and the worker that polls a task gets its real input.
 */
import { MASKED_SECRET } from "./evaluation";
import type { JsonObject, JsonValue, WorkflowDef } from "./model";
import { setOwn } from "./own-property";

/** The keys whose values are always masked (Orkes'). */
const MASKED_KEYS: ReadonlySet<string> = new Set(["_secrets", "_masked"]);

/** Most names a definition's `maskedFields` may hold. */
export const MAX_MASKED_FIELDS = 100;
/** The longest name a definition's `maskedFields` may hold. */
export const MAX_MASKED_FIELD_LENGTH = 255;

/** The keys masked in the executions of each definition, made once per definition object. */
const keysByDefinition = new WeakMap<WorkflowDef, ReadonlySet<string>>();

/** The keys whose values the executions of `definition` show masked: Orkes' two and its `maskedFields`. */
export function maskedKeysOf(definition: WorkflowDef): ReadonlySet<string> {
  if (definition.maskedFields === undefined || definition.maskedFields.length === 0) return MASKED_KEYS;
  let keys = keysByDefinition.get(definition);
  if (keys === undefined) {
    keys = new Set([...MASKED_KEYS, ...definition.maskedFields]);
    keysByDefinition.set(definition, keys);
  }
  return keys;
}

/**
 * The keys masked where only a definition's `maskedFields` are at hand (an event message it published): Orkes' two and
 * those.
 */
export function maskedKeysWith(maskedFields: readonly string[] | undefined): ReadonlySet<string> {
  return maskedFields === undefined || maskedFields.length === 0 ? MASKED_KEYS : new Set([...MASKED_KEYS, ...maskedFields]);
}

/**
 * `value` as the API shows it: the same object when nothing in it is masked (no copy), else a copy with the values of
 * `keys` (by default Orkes' two; an execution's are {@link maskedKeysOf} its definition) masked.
 */
export function masked(value: JsonObject, keys: ReadonlySet<string> = MASKED_KEYS): JsonObject {
  return maskedValue(value, keys) as JsonObject;
}

function maskedValue(value: JsonValue, keys: ReadonlySet<string>): JsonValue {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let copy: JsonValue[] | undefined;
    value.forEach((item, index) => {
      const shown = maskedValue(item, keys);
      if (shown !== item) (copy ??= [...value])[index] = shown;
    });
    return copy ?? value;
  }
  let copy: JsonObject | undefined;
  for (const key of Object.keys(value)) {
    const item = value[key]!;
    const shown = keys.has(key) ? MASKED_SECRET : maskedValue(item, keys);
    // setOwn: a `__proto__` key is data here, not the copy's prototype.
    if (shown !== item) setOwn((copy ??= { ...value }), key, shown);
  }
  return copy ?? value;
}
