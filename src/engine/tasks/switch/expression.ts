/**
 * A SWITCH's `javascript` expression. This service runs no JavaScript engine (Workers forbid evaluating code), so
 * it evaluates the part of JavaScript such expressions are mostly written in with its own expression language:
 * `$` (the task's resolved input) and paths under it, literals, `!`, unary `-`, comparisons (`===` and `!==`
 * included), `&&`, `||`, `?:` and parentheses. Anything else is refused when the definition is registered.
 */
import { evaluate } from "../../expressions/evaluate";
import { BoundedCache } from "../../expressions/cache";
import { ExpressionSyntaxError } from "../../expressions/errors";
import { parseExpression } from "../../expressions/parser";
import type { Expression } from "../../expressions/ast";
import type { JsonObject, JsonValue } from "../../model";

/** The root a SWITCH expression reads its input through, as Conductor's evaluators bind it. */
const INPUT_ROOT = "$";

/** What the accepted subset is, for messages that refuse something outside it. */
export const SWITCH_SCRIPT_SUBSET =
  "this service evaluates a subset of JavaScript: $ (the task's inputParameters) and paths under it such as $.order.total or $['a-b'][0], " +
  "string, number, true/false/null literals, !, unary -, ==, !=, ===, !==, <, <=, >, >=, &&, ||, ?: and parentheses " +
  "(no functions, methods or arithmetic; use evaluatorType value-param, or compute the value in an earlier task)";

const parsed = new BoundedCache<string, Expression>(200);

/**
 * Parses a SWITCH expression.
 *
 * @throws ExpressionSyntaxError when it is not in the subset, or reads something other than `$`
 */
export function parseSwitchScript(source: string): Expression {
  let expression = parsed.get(source);
  if (expression === undefined) {
    expression = parseExpression(source, 0, { kind: "bare", script: true }).expression;
    const outside = outsideSubset(expression);
    if (outside !== undefined) throw new ExpressionSyntaxError(outside.message, outside.start);
    parsed.set(source, expression);
  }
  return expression;
}

/** Why `source` cannot be a SWITCH expression, or undefined when it can. */
export function switchScriptProblem(source: string): string | undefined {
  try {
    parseSwitchScript(source);
    return undefined;
  } catch (error) {
    if (error instanceof ExpressionSyntaxError) return `${error.message}; ${SWITCH_SCRIPT_SUBSET}`;
    throw error;
  }
}

/**
 * The value of a SWITCH expression over the task's input.
 *
 * @throws ExpressionSyntaxError when the expression is not in the subset (definitions are checked when registered)
 */
export function evaluateSwitchScript(source: string, input: JsonObject): JsonValue {
  return evaluate(parseSwitchScript(source), { workflow: {}, tasks: { [INPUT_ROOT]: input }, now: 0 });
}

/**
 * The first path in `expression` this subset would read differently from JavaScript, if any: one not rooted at `$`,
 * or one reading `length`, which JavaScript answers for every string and list and a JSON path does not (null).
 */
function outsideSubset(expression: Expression): { message: string; start: number } | undefined {
  switch (expression.kind) {
    case "literal":
      return undefined;
    case "path":
      if (expression.root !== INPUT_ROOT) return { message: `'${expression.root}' is not defined: only $ (the task's inputParameters) can be read`, start: expression.start };
      if (expression.segments.includes("length")) return { message: "'length' is not evaluated: strings and lists have no properties here", start: expression.start };
      return undefined;
    case "not":
    case "negate":
      return outsideSubset(expression.operand);
    case "compare":
    case "logical":
      return outsideSubset(expression.left) ?? outsideSubset(expression.right);
    case "conditional":
      return outsideSubset(expression.test) ?? outsideSubset(expression.consequent) ?? outsideSubset(expression.alternate);
  }
}
