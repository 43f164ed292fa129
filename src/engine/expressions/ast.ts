/**
 * The syntax tree the parser builds and the evaluator walks. Plain data so a parsed template
 * can be cached and shared across executions.
 */

/** One step of a path: a name/quoted key, or a bracketed numeric index. */
export type PathSegment = string | number;

/**
 * A JSONPath step that may select any number of values (Conductor evaluates `${…}` with Jayway JsonPath). Once a path
 * has one, its value is the list of everything selected, in document order, and missing fields select nothing.
 */
export type QueryStep =
  /** `.name`, `['name']` or `[0]` after an earlier query step: that child of each value, where it has one. */
  | { readonly kind: "child"; readonly key: PathSegment }
  /** `.*` or `[*]`: every element of an array, every field value of an object. */
  | { readonly kind: "wildcard" }
  /** `..`: each value and everything below it; the step after it selects from all of them. */
  | { readonly kind: "descend" }
  /** `[0,2]` or `['a','b']`: those children, in the order given. */
  | { readonly kind: "union"; readonly keys: readonly PathSegment[] }
  /** `[from:to]` of an array, `to` excluded; negative bounds count from the end. */
  | { readonly kind: "slice"; readonly from: number | null; readonly to: number | null }
  /** `[?(<predicate>)]`: the elements of an array (or an object itself) for which the predicate, with `@` as the value, holds. */
  | { readonly kind: "filter"; readonly predicate: Expression };

/**
 * The roots a path reads that are not task reference names (see `resolvePath` in evaluate.ts, which gives each its
 * value): any other root, but a filter's `@`, names a task of the workflow. Built-in roots win over a task of the same
 * reference name, as in Conductor.
 */
export const BUILT_IN_ROOTS: ReadonlySet<string> = new Set(["workflow", "system", "TASK_ID", "CPEWF_TASK_ID"]);

/** Jayway's functions without arguments that may end a path: `${t.output.items.length()}`. */
export const PATH_FUNCTIONS = ["length", "min", "max", "avg", "sum", "stddev", "keys", "first", "last"] as const;

/** One of {@link PATH_FUNCTIONS}. */
export type PathFunction = (typeof PATH_FUNCTIONS)[number];

/** Operators whose operands are both evaluated and compared. */
export type ComparisonOperator = "==" | "!=" | "<" | ">" | "<=" | ">=";

/** A parsed expression. `start` is the offset of its first character in the whole template string. */
export type Expression =
  | { readonly kind: "literal"; readonly value: string | number | boolean | null; readonly start: number }
  /**
   * `root.seg1[0]['k']`: `root` is `workflow`, `system`, `TASK_ID` (or `CPEWF_TASK_ID`), a task reference name, or
   * inside a filter `@` (the value tested). `segments` are the steps up to the first query step; `query` the rest
   * (absent when there is none), `fn` a function applied to the result.
   */
  | {
      readonly kind: "path";
      readonly root: string;
      readonly segments: readonly PathSegment[];
      readonly query?: readonly QueryStep[];
      readonly fn?: PathFunction;
      readonly start: number;
    }
  | { readonly kind: "not"; readonly operand: Expression; readonly start: number }
  | { readonly kind: "negate"; readonly operand: Expression; readonly start: number }
  | {
      readonly kind: "compare";
      readonly operator: ComparisonOperator;
      readonly left: Expression;
      readonly right: Expression;
      readonly start: number;
    }
  | {
      readonly kind: "logical";
      readonly operator: "&&" | "||";
      readonly left: Expression;
      readonly right: Expression;
      readonly start: number;
    }
  | {
      readonly kind: "conditional";
      readonly test: Expression;
      readonly consequent: Expression;
      readonly alternate: Expression;
      readonly start: number;
    }
  /**
   * A path with nested `${…}` in it (`workflow.input.ids[${workflow.input.index}]`), as Conductor resolves it: each
   * inner expression's value is written into the path's text, which is then read as a path. `pieces` are that text and
   * the inner expressions in order; `fixed` is the path up to its first nested part (null when the root is nested),
   * which is all that is known of it before it runs.
   */
  | {
      readonly kind: "spliced";
      readonly fixed: FixedPath | null;
      readonly pieces: readonly (string | Expression)[];
      readonly start: number;
    };

/** The part of a {@link Expression spliced} path written out in the definition: its root and plain steps. */
export interface FixedPath {
  readonly root: string;
  readonly segments: readonly PathSegment[];
}

/** A path expression. */
export type PathExpression = Extract<Expression, { kind: "path" }>;

/** A path with nested `${…}` in it. */
export type SplicedExpression = Extract<Expression, { kind: "spliced" }>;

/** The inner expressions of a spliced path. */
export function splicedExpressions(spliced: SplicedExpression): Expression[] {
  return spliced.pieces.filter((piece): piece is Expression => typeof piece !== "string");
}

/** The predicates of a path's filters (`[?(...)]`), expressions of their own that its evaluation runs. */
export function filterPredicates(path: PathExpression): Expression[] {
  return (path.query ?? []).flatMap((step) => (step.kind === "filter" ? [step.predicate] : []));
}

/** The expressions directly below `expression`: its operands, its filters' predicates, a spliced path's inner expressions. */
export function childExpressions(expression: Expression): readonly Expression[] {
  switch (expression.kind) {
    case "literal":
      return [];
    case "path":
      return filterPredicates(expression);
    case "not":
    case "negate":
      return [expression.operand];
    case "compare":
    case "logical":
      return [expression.left, expression.right];
    case "conditional":
      return [expression.test, expression.consequent, expression.alternate];
    case "spliced":
      return splicedExpressions(expression);
  }
}
