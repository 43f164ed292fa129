/** Resolving whole JSON values (task inputs, output parameters) against an execution. */
import type { JsonObject, JsonValue } from "../model";
import type { Expression } from "./ast";
import { BoundedCache } from "./cache";
import type { EvaluationContext } from "./context";
import { evaluate } from "./evaluate";
import { parseExpression } from "./parser";
import { parseTemplate, renderTemplate } from "./template";

const expressionCache = new BoundedCache<string, Expression>(500);

/**
 * Deep-resolves a JSON value: every string containing `${` is rendered as a template, objects
 * and arrays are walked, other values pass through.
 *
 * Objects and arrays of `value` are rebuilt so the (possibly cached) definition is never
 * aliased by the result; values taken from the context (e.g. `${workflow.input}`) are returned
 * by reference and must be treated as read-only. Object keys are not templates.
 *
 * @throws ExpressionSyntaxError when a string holds a malformed expression (validate
 *   definitions with findTemplateErrors first)
 * @throws MissingSecretError when an evaluated `${workflow.secrets.<name>}` does not exist
 */
export function resolveValue(value: JsonValue, ctx: EvaluationContext): JsonValue {
  if (typeof value === "string") {
    // Fast path: most strings in a definition are plain text and must cost nothing.
    return value.includes("${") ? renderTemplate(parseTemplate(value), ctx) : value;
  }
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => resolveValue(item, ctx));
  const out: JsonObject = {};
  for (const key of Object.keys(value)) setOwn(out, key, resolveValue(value[key] as JsonValue, ctx));
  return out;
}

/**
 * Evaluates one expression written without `${` and `}` (e.g. `workflow.input.a > 3`).
 * Error positions are offsets in `source`.
 *
 * @throws ExpressionSyntaxError when `source` is malformed
 * @throws MissingSecretError when an evaluated secret reference does not exist
 */
export function evaluateExpression(source: string, ctx: EvaluationContext): JsonValue {
  let expression = expressionCache.get(source);
  if (expression === undefined) {
    expression = parseExpression(source, 0, { kind: "bare" }).expression;
    expressionCache.set(source, expression);
  }
  return evaluate(expression, ctx);
}

/**
 * A JSON key `__proto__` is an ordinary own property after JSON.parse; plain assignment would
 * instead replace the prototype of the result, so that one key is defined explicitly.
 */
function setOwn(target: JsonObject, key: string, value: JsonValue): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}
