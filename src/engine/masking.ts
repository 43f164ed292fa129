/**
 * Orkes' masked parameters: the value of any `_secrets` or `_masked` key, at any depth of an execution's input, output,
 * variables or a task's input and output, is shown as `***` wherever the API shows it (executions, tasks, search,
 * status events). The execution keeps the real values: expressions read them, and the worker that polls a task gets
 * its real input.
 */
import { MASKED_SECRET } from "./evaluation";
import type { JsonObject, JsonValue } from "./model";
import { setOwn } from "./own-property";

/** The keys whose values are masked (Orkes'). */
const MASKED_KEYS: ReadonlySet<string> = new Set(["_secrets", "_masked"]);

/** `value` as the API shows it: the same object when nothing in it is masked (no copy), else a copy with those values masked. */
export function masked(value: JsonObject): JsonObject {
  return maskedValue(value) as JsonObject;
}

function maskedValue(value: JsonValue): JsonValue {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let copy: JsonValue[] | undefined;
    value.forEach((item, index) => {
      const shown = maskedValue(item);
      if (shown !== item) (copy ??= [...value])[index] = shown;
    });
    return copy ?? value;
  }
  let copy: JsonObject | undefined;
  for (const key of Object.keys(value)) {
    const item = value[key]!;
    const shown = MASKED_KEYS.has(key) ? MASKED_SECRET : maskedValue(item);
    // setOwn: a `__proto__` key is data here, not the copy's prototype.
    if (shown !== item) setOwn((copy ??= { ...value }), key, shown);
  }
  return copy ?? value;
}
