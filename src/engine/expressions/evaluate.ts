/**
 * Evaluates a parsed expression against an {@link EvaluationContext}. Never throws for missing
 * data (an unresolved path is null) with one deliberate exception: a missing secret.
 */
import type { JsonValue } from "../model";
import type { Expression, PathSegment } from "./ast";
import type { EvaluationContext } from "./context";
import { readsEnvironmentJson } from "./environment";
import { MissingSecretError } from "./errors";
import { isUnderSecrets, secretNameOf } from "./secrets";
import { compareOrdered, deepEqual, isTruthy, negate } from "./values";

/** Path segments that address an array element when the current value is an array. */
const INDEX_KEY = /^[0-9]+$/;

/**
 * Computes the value of `expression`. `&&`, `||` and `?:` only evaluate the operand they
 * need, so a secret referenced in a branch that is not taken is never looked up.
 *
 * @throws MissingSecretError when a `workflow.secrets.<name>` that is evaluated does not exist
 */
export function evaluate(expression: Expression, ctx: EvaluationContext): JsonValue {
  switch (expression.kind) {
    case "literal":
      return expression.value;
    case "path":
      return resolvePath(expression.root, expression.segments, ctx);
    case "not":
      return !isTruthy(evaluate(expression.operand, ctx));
    case "negate": {
      const value = evaluate(expression.operand, ctx);
      return typeof value === "number" ? negate(value) : null;
    }
    case "compare": {
      const left = evaluate(expression.left, ctx);
      const right = evaluate(expression.right, ctx);
      if (expression.operator === "==") return deepEqual(left, right);
      if (expression.operator === "!=") return !deepEqual(left, right);
      return compareOrdered(expression.operator, left, right);
    }
    case "logical": {
      const left = evaluate(expression.left, ctx);
      const decided = expression.operator === "&&" ? !isTruthy(left) : isTruthy(left);
      return decided ? left : evaluate(expression.right, ctx);
    }
    case "conditional":
      return isTruthy(evaluate(expression.test, ctx))
        ? evaluate(expression.consequent, ctx)
        : evaluate(expression.alternate, ctx);
  }
}

/**
 * Built-in roots win over task reference names of the same spelling, matching Conductor where
 * `workflow` and friends are reserved.
 */
function resolvePath(root: string, segments: readonly PathSegment[], ctx: EvaluationContext): JsonValue {
  switch (root) {
    case "workflow":
      if (isUnderSecrets(root, segments)) return resolveSecret(root, segments, ctx);
      if (readsEnvironmentJson(segments)) return walk(parsedJson(walk(ctx.workflow, segments.slice(0, 2))), segments.slice(3));
      return walk(ctx.workflow, segments);
    case "system":
      return walk({ currentTimeMillis: ctx.now }, segments);
    case "TASK_ID":
    // Conductor's name for it (ParametersUtils' CPEWF_TASK_ID).
    case "CPEWF_TASK_ID":
      return walk(ctx.taskId ?? null, segments);
    default:
      return walk(ctx.task(root) ?? null, segments);
  }
}

/**
 * Secrets are reachable only one at a time, by the exact path `workflow.secrets.<name>`; the
 * collection itself and anything below a secret are null so no expression can dump them.
 * `ctx.workflow.secrets` is never read for the same reason.
 */
function resolveSecret(root: string, segments: readonly PathSegment[], ctx: EvaluationContext): JsonValue {
  const name = secretNameOf(root, segments);
  if (name === null) return null;
  const value = ctx.secret?.(name);
  if (value === undefined) throw new MissingSecretError(name);
  return value;
}

/** Text read as JSON (Orkes' `${workflow.env.<name>.$}`); null for anything else, and for text that is not JSON. */
function parsedJson(value: JsonValue): JsonValue {
  if (typeof value !== "string") return null;
  try {
    return JSON.parse(value) as JsonValue;
  } catch {
    return null;
  }
}

function walk(start: JsonValue, segments: readonly PathSegment[]): JsonValue {
  let current = start;
  for (const segment of segments) {
    current = step(current, segment);
    if (current === null) return null;
  }
  return current;
}

/**
 * One path step. Lookups use own properties only, so `__proto__` or `constructor` never reach
 * the prototype, and `?? null` turns holes or `undefined` fields into the documented null.
 */
function step(current: JsonValue, segment: PathSegment): JsonValue {
  if (Array.isArray(current)) {
    // A negative index (a literal `[-1]`) counts from the end; a key, even "-1", is no index.
    const given = typeof segment === "number" ? segment : INDEX_KEY.test(segment) ? Number(segment) : Number.NaN;
    const index = given < 0 ? current.length + given : given;
    return index >= 0 && index < current.length ? (current[index] ?? null) : null;
  }
  if (current !== null && typeof current === "object") {
    const key = String(segment);
    return Object.hasOwn(current, key) ? (current[key] ?? null) : null;
  }
  return null;
}
