/** The fields a task that starts a workflow (SUB_WORKFLOW, START_WORKFLOW) reads from its resolved input. */
import type { JsonObject, JsonValue } from "../model";

/** True for a JSON object (not an array or null). */
export function isJsonObjectValue(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The version `value` asks for (`field` names it in the message): undefined when none is given (absent, null, ""), the
 * number for a positive integer or its digits as text, or why it is neither.
 */
export function workflowVersionOf(value: JsonValue | undefined, field: string): number | undefined | { invalid: string } {
  if (value === undefined || value === null || value === "") return undefined;
  const number = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 1) return { invalid: `${field} resolved to ${JSON.stringify(value)}, not a positive integer` };
  return number;
}

/** The string entries of a `taskToDomain` object (others dropped); undefined when `value` is no object. */
export function taskToDomainOf(value: JsonValue | undefined): Record<string, string> | undefined {
  if (!isJsonObjectValue(value)) return undefined;
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
}
