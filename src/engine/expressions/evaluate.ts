/**
 * Evaluates a parsed expression against an {@link EvaluationContext}. Never throws for missing
 * data (an unresolved path is null) with one deliberate exception: a missing secret.
 */
import type { JsonObject, JsonValue } from "../model";
import type { Expression, PathExpression, PathSegment, SplicedExpression } from "./ast";
import type { EvaluationContext } from "./context";
import { environmentJsonSteps } from "./environment";
import { MissingSecretError, SecretFieldReadError } from "./errors";
import { isUnderSecrets, secretFieldReadReason, secretNameOf } from "./secrets";
import { applyPathFunction, childOf, pathExists, QueryBudget, selectAll } from "./query";
import { splicedPath } from "./splice";
import { compareOrdered, deepEqual, interpolateOnto, isTruthy, negate, textWithin } from "./values";

/**
 * Computes the value of `expression`. `&&`, `||` and `?:` only evaluate the operand they
 * need, so a secret referenced in a branch that is not taken is never looked up.
 *
 * `tested` is what `@` stands for inside a filter's predicate; `budget` what the expression's queries may still take,
 * shared with its parts (see MAX_QUERY_VALUES in query.ts): for a whole expression, the context's (shared by all that
 * is resolved with it), or a fresh one when it has none.
 *
 * @throws MissingSecretError when a `workflow.secrets.<name>` that is evaluated does not exist
 * @throws SecretFieldReadError when a path read inside a secret (`workflow.secrets.<name>.<field>`) is evaluated
 * @throws ExpressionLimitError when its queries, with those evaluated before them against the same budget, take more
 *   than MAX_QUERY_VALUES values, or a spliced path's text passes the context's maxBytes
 */
export function evaluate(expression: Expression, ctx: EvaluationContext, tested: JsonValue = null, budget = ctx.queryBudget ?? new QueryBudget()): JsonValue {
  switch (expression.kind) {
    case "literal":
      return expression.value;
    case "path":
      return evaluatePath(expression, ctx, tested, budget);
    case "not":
      return !isTruthy(evaluate(expression.operand, ctx, tested, budget));
    case "negate": {
      const value = evaluate(expression.operand, ctx, tested, budget);
      return typeof value === "number" ? negate(value) : null;
    }
    case "compare": {
      const left = evaluate(expression.left, ctx, tested, budget);
      const right = evaluate(expression.right, ctx, tested, budget);
      if (expression.operator === "==") return deepEqual(left, right);
      if (expression.operator === "!=") return !deepEqual(left, right);
      return compareOrdered(expression.operator, left, right);
    }
    case "logical": {
      const left = evaluate(expression.left, ctx, tested, budget);
      const decided = expression.operator === "&&" ? !isTruthy(left) : isTruthy(left);
      return decided ? left : evaluate(expression.right, ctx, tested, budget);
    }
    case "conditional":
      return isTruthy(evaluate(expression.test, ctx, tested, budget))
        ? evaluate(expression.consequent, ctx, tested, budget)
        : evaluate(expression.alternate, ctx, tested, budget);
    case "spliced":
      return evaluateSpliced(expression, ctx, tested, budget);
  }
}

/**
 * A path with nested `${…}`, as Conductor resolves it: the inner values written into its text, which is then read as a
 * path. An inner value that is null leaves nothing to read (Conductor would write `null` in, and find nothing there);
 * so does text that does not read as a path, or one that reaches what the definition did not name (see splice.ts).
 */
function evaluateSpliced(spliced: SplicedExpression, ctx: EvaluationContext, tested: JsonValue, budget: QueryBudget): JsonValue {
  // Bounded as a template's text is: the values written in may be far larger than any path.
  const limit = ctx.maxBytes ?? Infinity;
  let text = "";
  for (const piece of spliced.pieces) {
    if (typeof piece === "string") {
      text = textWithin(text + piece, limit);
      continue;
    }
    const value = evaluate(piece, ctx, tested, budget);
    if (value === null) return null;
    text = interpolateOnto(text, value, limit);
  }
  const path = splicedPath(text, spliced.fixed, ctx.maskedKeys);
  return path === null ? null : evaluate(path, ctx, tested, budget);
}

/** A path's value: its segments walked, then its JSONPath query run and its function applied, when it has them. */
function evaluatePath(path: PathExpression, ctx: EvaluationContext, tested: JsonValue, budget: QueryBudget): JsonValue {
  const { root, segments, query, fn } = path;
  if (isUnderSecrets(root, segments)) return secretAt(path, ctx);
  const value = root === "@" ? walk(tested, segments) : resolvePath(root, segments, ctx, query !== undefined);
  const selected = query === undefined ? value : selectAll(value, query, (predicate, candidate) => filterMatches(predicate, candidate, ctx, budget), budget);
  return fn === undefined ? selected : applyPathFunction(fn, selected);
}

/**
 * What a path under `workflow.secrets` evaluates to. Checked only here, so an expression that reads no secret pays
 * nothing for it.
 *
 * @throws SecretFieldReadError for a field read inside a secret (registration refuses it; an older deploy did not)
 */
function secretAt(path: PathExpression, ctx: EvaluationContext): JsonValue {
  const refused = secretFieldReadReason(path);
  if (refused !== undefined) throw new SecretFieldReadError(refused);
  // A secret is a value, whole: nothing may select from it or measure it (registration refuses this too).
  if (path.query !== undefined || path.fn !== undefined) return null;
  return resolveSecret(path.root, path.segments, ctx);
}

/** The workflow record as a query over all of it (`workflow..id`) sees it: never a `secrets` field. */
function withoutSecrets(workflow: JsonObject): JsonObject {
  if (!Object.hasOwn(workflow, "secrets")) return workflow;
  const { secrets: _secrets, ...visible } = workflow;
  return visible;
}

/**
 * Whether a filter keeps `candidate`. A lone `@.field` asks whether the field exists, as in Jayway (`[?(@.isbn)]`);
 * anything else whether its value is truthy.
 */
function filterMatches(predicate: Expression, candidate: JsonValue, ctx: EvaluationContext, budget: QueryBudget): boolean {
  if (predicate.kind === "path" && predicate.root === "@" && predicate.query === undefined && predicate.fn === undefined) {
    return pathExists(candidate, predicate.segments);
  }
  return isTruthy(evaluate(predicate, ctx, candidate, budget));
}

/**
 * Built-in roots win over task reference names of the same spelling, matching Conductor where
 * `workflow` and friends are reserved. The cases are BUILT_IN_ROOTS (ast.ts), which registration reads to tell a
 * task's reference from them: a root added here is added there.
 */
function resolvePath(root: string, segments: readonly PathSegment[], ctx: EvaluationContext, queried = false): JsonValue {
  switch (root) {
    case "workflow":
      // The whole record (`${workflow}`, `workflow..id`) never shows a `secrets` field.
      if (segments.length === 0) return withoutSecrets(ctx.workflow);
      // A path under `workflow.secrets` never gets here: evaluatePath hands it to secretAt.
      const jsonSteps = environmentJsonSteps(segments);
      if (jsonSteps !== undefined) return walk(parsedJson(walk(ctx.workflow, segments.slice(0, 2))), jsonSteps);
      return walk(ctx.workflow, segments);
    case "system":
      return walk({ currentTimeMillis: ctx.now }, segments);
    case "TASK_ID":
    // Conductor's name for it (ParametersUtils' CPEWF_TASK_ID).
    case "CPEWF_TASK_ID":
      return walk(ctx.taskId ?? null, segments);
    default: {
      // A query over the task or its whole output (`ref..x`, `ref.output..x`) reads the record made for queries; a path
      // below the output (`ref.output.response..x`) reaches the same values through either.
      const record = queried && segments.length <= 1 && ctx.queriedTask !== undefined ? ctx.queriedTask(root) : ctx.task(root);
      return walk(record ?? null, segments);
    }
  }
}

/**
 * Secrets are reachable only one at a time, by the exact path `workflow.secrets.<name>`; the
 * collection itself (and `workflow.secrets[0]`) is null so no expression can dump them, and a read below a
 * secret's name never gets here (see {@link secretAt}). `ctx.workflow.secrets` is never read for the same reason.
 */
function resolveSecret(root: string, segments: readonly PathSegment[], ctx: EvaluationContext): JsonValue {
  const name = secretNameOf(root, segments);
  if (name === null) return null;
  const value = ctx.secret?.(name);
  if (value === undefined) throw new MissingSecretError(name);
  return value;
}

/** Text read as JSON (`${workflow.env.<name>.$}`, `${workflow.env.<name>.<path>}`); null for anything else, and for text that is not JSON. */
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

/** One path step: `?? null` turns a missing child (or a hole) into the documented null. */
function step(current: JsonValue, segment: PathSegment): JsonValue {
  return childOf(current, segment) ?? null;
}
