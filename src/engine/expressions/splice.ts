/**
 * Reading the text of a spliced path (a path with nested `${…}`, once their values are written in) as a path. What it
 * may read is bounded by what the definition names: a secret or an environment variable is looked up, and allowed, by
 * the names written in the definition, so a name that only the data supplies must not reach one.
 */
import { childExpressions, type Expression, type FixedPath, type PathExpression, type PathSegment } from "./ast";
import { BoundedCache } from "./cache";
import { environmentVariableNameOf } from "./environment";
import { ExpressionSyntaxError } from "./errors";
import { parseExpression } from "./parser";
import { isUnderSecrets } from "./secrets";

/** Distinct spliced texts kept parsed: one per value a nested part takes, so bounded apart from the templates. */
const CACHE_CAPACITY = 1_000;
/** Longer texts are parsed on every use: a value written into a path may be as long as its data. */
const MAX_CACHED_LENGTH = 1_024;

/** The parsed text, or null when it is no path (or value); null is cached too. */
const parsed = new BoundedCache<string, Expression | null>(CACHE_CAPACITY);

/**
 * `text` read as a path (or as a value, for a nested part that stands alone: `[?(@.id == ${workflow.input.id})]`), or
 * null when it reads as neither, or when it reads a secret, an environment variable other than the one `fixed` names,
 * or a masked key that `fixed` does not name.
 */
export function splicedPath(text: string, fixed: FixedPath | null, maskedKeys: ReadonlySet<string> = new Set()): Expression | null {
  let expression = parsed.get(text);
  if (expression === undefined) {
    expression = parsePathText(text);
    if (text.length <= MAX_CACHED_LENGTH) parsed.set(text, expression);
  }
  if (expression === null) return null;
  const named: Named = {
    environmentVariable: fixed === null ? null : environmentVariableNameOf(fixed.root, fixed.segments),
    maskedKeys: fixed?.segments.some((segment) => typeof segment === "string" && maskedKeys.has(segment)) ? new Set() : maskedKeys,
  };
  return readsOnlyNamed(expression, named) ? expression : null;
}

/** What a spliced path may read: the environment variable its written-out part names, and no key of `maskedKeys`. */
interface Named {
  readonly environmentVariable: string | null;
  readonly maskedKeys: ReadonlySet<string>;
}

function parsePathText(text: string): Expression | null {
  try {
    const { expression } = parseExpression(text, 0, { kind: "bare" });
    return expression.kind === "path" || expression.kind === "literal" ? expression : null;
  } catch (error) {
    if (error instanceof ExpressionSyntaxError) return null;
    throw error;
  }
}

/** Whether `expression` reads no secret, no environment variable but the one named, and no masked key. */
function readsOnlyNamed(expression: Expression, named: Named): boolean {
  if (expression.kind === "path" && stepKeys(expression).some((key) => typeof key === "string" && named.maskedKeys.has(key))) return false;
  const { environmentVariable } = named;
  if (expression.kind === "path" && expression.root === "workflow") {
    // The whole record (`workflow`, `workflow.*`, `workflow..x`) holds the environment variables too.
    if (expression.segments.length === 0 || isUnderSecrets(expression.root, expression.segments)) return false;
    const underEnvironment = expression.segments[0] === "env";
    if (underEnvironment && (environmentVariable === null || environmentVariableNameOf(expression.root, expression.segments) !== environmentVariable)) return false;
  }
  return childExpressions(expression).every((child) => readsOnlyNamed(child, named));
}

/** The keys a path's steps name. */
function stepKeys(path: PathExpression): PathSegment[] {
  const queried = (path.query ?? []).flatMap((step) => (step.kind === "child" ? [step.key] : step.kind === "union" ? step.keys : []));
  return [...path.segments, ...queried];
}
