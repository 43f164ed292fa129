/**
 * The value semantics of the language: JavaScript truthiness, deep (never coercing) equality,
 * and how a value reads when interpolated into surrounding text.
 */
import { jsonBytesWithin } from "../json-bytes";
import type { JsonValue } from "../model";
import { ExpressionLimitError } from "./errors";

/** JavaScript truthiness: null, false, 0 and "" are falsy; every object and array is truthy. */
export function isTruthy(value: JsonValue): boolean {
  return value !== null && value !== false && value !== 0 && value !== "";
}

/**
 * Structural equality of two JSON values without type coercion, so `1 == '1'` is false and
 * `{a: [1]} == {a: [1]}` is true regardless of key order.
 */
export function deepEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (!deepEqual(a[i] as JsonValue, b[i] as JsonValue)) return false;
    }
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !deepEqual(a[key] as JsonValue, b[key] as JsonValue)) return false;
  }
  return true;
}

/**
 * Ordering is only meaningful between two numbers or two strings; any other pair compares
 * false in every direction rather than guessing a coercion.
 */
export function compareOrdered(operator: "<" | ">" | "<=" | ">=", a: JsonValue, b: JsonValue): boolean {
  if (typeof a === "number" && typeof b === "number") return ordered(operator, a, b);
  if (typeof a === "string" && typeof b === "string") return ordered(operator, a, b);
  return false;
}

function ordered<T extends number | string>(operator: "<" | ">" | "<=" | ">=", a: T, b: T): boolean {
  switch (operator) {
    case "<":
      return a < b;
    case ">":
      return a > b;
    case "<=":
      return a <= b;
    case ">=":
      return a >= b;
  }
}

/** `-0` would serialize as `0` yet compare unequal under Object.is; results stay plain JSON. */
export function negate(value: number): number {
  return value === 0 ? 0 : -value;
}

/**
 * How a value reads inside surrounding text: containers become JSON, null (unresolved too) `null`, as Conductor's
 * `Objects.toString` writes it: `order-${workflow.input.missing}` is `order-null`, which shows what was missing.
 */
function interpolate(value: JsonValue): string {
  if (value === null) return "null";
  if (typeof value === "string") return value;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * `text` with `value` interpolated onto its end, when the whole is at most `limit` UTF-16 units (at least as many UTF-8
 * bytes); a container is measured before it is written out, so a text past the limit is never built.
 *
 * @throws ExpressionLimitError when the text would be longer than `limit`
 */
export function interpolateOnto(text: string, value: JsonValue, limit: number): string {
  if (typeof value === "object" && value !== null && limit !== Infinity) {
    const room = limit - text.length;
    if (jsonBytesWithin(value, room) > room) throw textLimitError(limit);
  }
  return textWithin(text + interpolate(value), limit);
}

/**
 * `text`, when it is at most `limit` UTF-16 units long.
 *
 * @throws ExpressionLimitError when it is longer
 */
export function textWithin(text: string, limit: number): string {
  if (text.length > limit) throw textLimitError(limit);
  return text;
}

function textLimitError(limit: number): ExpressionLimitError {
  return new ExpressionLimitError(`the text it writes its values into is over the limit of ${limit} bytes (MAX_PAYLOAD_BYTES); stopped as it passed it`);
}
