/**
 * The syntax tree the parser builds and the evaluator walks. Plain data so a parsed template
 * can be cached and shared across executions.
 */

/** One step of a path: a name/quoted key, or a bracketed numeric index. */
export type PathSegment = string | number;

/** Operators whose operands are both evaluated and compared. */
export type ComparisonOperator = "==" | "!=" | "<" | ">" | "<=" | ">=";

/** A parsed expression. `start` is the offset of its first character in the whole template string. */
export type Expression =
  | { readonly kind: "literal"; readonly value: string | number | boolean | null; readonly start: number }
  /** `root.seg1[0]['k']`: `root` is `workflow`, `system`, `TASK_ID` (or `CPEWF_TASK_ID`) or a task reference name. */
  | { readonly kind: "path"; readonly root: string; readonly segments: readonly PathSegment[]; readonly start: number }
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
    };
