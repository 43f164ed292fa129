/**
 * Recursive-descent parser for the expression grammar, lowest precedence first:
 *
 *   expression  := logicalOr ( "?" expression ":" expression )?      (right-associative)
 *   logicalOr   := logicalAnd ( "||" logicalAnd )*
 *   logicalAnd  := equality ( "&&" equality )*
 *   equality    := comparison ( ( "==" | "!=" ) comparison )*
 *   comparison  := unary ( ( "<" | ">" | "<=" | ">=" ) unary )*
 *   unary       := ( "!" | "-" ) unary | primary
 *   primary     := NUMBER | STRING | true | false | null | "(" expression ")" | path
 *   path        := ( root | "$" ( "." root | "[" ( STRING | NESTED ) "]" ) ) step* ( "." FUNCTION "(" ")" )?
 *   root        := NAME | NESTED
 *   step        := "." ( NAME | NESTED ) | "." "*" | ".." ( NAME | "*" | bracket ) | bracket
 *   bracket     := "[" ( key ( "," key )* | "*" | INTEGER? ":" INTEGER? | "?" "(" expression ")" ) "]"
 *   key         := "-"? INTEGER | STRING | NESTED
 *
 * NAME may be `@` inside a filter `[?(...)]`: the value tested. `$` is JSONPath's root, the document whose fields are
 * the roots. NESTED is a `${…}` of its own: a path with one is spliced (see ast.ts). The steps after `*`, `..`, a
 * union, a slice or a filter form the path's JSONPath query (see query.ts).
 */
import {
  filterPredicates,
  PATH_FUNCTIONS,
  splicedExpressions,
  type ComparisonOperator,
  type Expression,
  type FixedPath,
  type PathFunction,
  type PathSegment,
  type QueryStep,
  type SplicedExpression,
} from "./ast";
import { ExpressionSyntaxError } from "./errors";
import { negate } from "./values";
import { tokenize, type LexMode, type Operator, type Token } from "./lexer";

/** A parsed expression and where its source ends (the offset of the closing `}` in a template). */
export interface ParseResult {
  readonly expression: Expression;
  readonly end: number;
}

/**
 * Deep enough for any hand-written condition, shallow enough that hostile input such as
 * ten thousand `(` fails with a syntax error instead of overflowing the stack.
 */
const MAX_NESTING = 100;

/**
 * The evaluator and the registration-time walkers recurse once per operator between the root
 * and the deepest leaf. Operator chains such as `a || b || c` parse in a loop, so MAX_NESTING
 * does not bound them; this does, generously enough for a generated list of alternatives.
 */
const MAX_OPERATOR_DEPTH = 1_000;

/**
 * Operator depth of each operator node built so far, by any parser; leaves are absent and count as 0. Shared, not one
 * per parser, because a nested `${…}` is parsed by a parser of its own and its operators are evaluated below the path
 * it sits in: counting them there keeps ten nested levels of a thousand operators each from overflowing the stack.
 */
const operatorDepths = new WeakMap<Expression, number>();

const COMPARISON_OPERATORS: ReadonlySet<Operator> = new Set(["<", ">", "<=", ">="]);

/**
 * Parses one expression from `source` starting at offset `start`: in template mode the body
 * after `${` up to its closing `}`, in bare mode the whole rest of the source.
 *
 * @throws ExpressionSyntaxError with the offset of the offending character in `source`
 */
export function parseExpression(source: string, start: number, mode: LexMode): ParseResult {
  const { tokens, end } = tokenize(source, start, mode);
  const parser = new Parser(source, tokens, mode);
  return { expression: parser.parseAll(mode.kind === "template" ? mode.openAt : start), end };
}

/** A node under construction: its operands and where the operator that joins them is. */
type Operands = { readonly children: readonly Expression[]; readonly at: number };

class Parser {
  private index = 0;
  private depth = 0;
  /** How many `[?(...)]` the parser is inside: `@` means something only there. */
  private filterDepth = 0;
  /** Each nested `${…}` parsed, by its token: a path's own and those of the filters in it are read again for its pieces. */
  private readonly nestedExpressions = new Map<Token, Expression>();
  /** Set by a bracket key that is a nested `${…}`, for the path step being parsed. */
  private nestedKeySeen = false;

  constructor(
    private readonly source: string,
    private readonly tokens: readonly Token[],
    private readonly mode: LexMode,
  ) {}

  parseAll(emptyAt: number): Expression {
    if (this.peek().kind === "end") {
      // Conductor resolves `${}` and `${   }` to "".
      if (this.mode.kind === "template") return { kind: "literal", value: "", start: emptyAt };
      throw new ExpressionSyntaxError("empty expression", emptyAt);
    }
    const expression = this.parseConditional();
    const next = this.peek();
    if (next.kind !== "end") {
      if (isOperator(next, ")")) throw new ExpressionSyntaxError("unexpected ')' without a matching '('", next.start);
      throw new ExpressionSyntaxError(`expected an operator or ${this.endName()} but found ${this.describe(next)}`, next.start);
    }
    return expression;
  }

  private parseConditional(): Expression {
    this.enter();
    const test = this.parseOr();
    let result = test;
    if (this.acceptOperator("?")) {
      const consequent = this.parseConditional();
      const colon = this.peek();
      if (!this.acceptOperator(":")) {
        throw new ExpressionSyntaxError(`expected ':' in conditional expression but found ${this.describe(colon)}`, colon.start);
      }
      const alternate = this.parseConditional();
      result = this.node({ kind: "conditional", test, consequent, alternate, start: test.start }, {
        children: [test, consequent, alternate],
        at: test.start,
      });
    }
    this.depth--;
    return result;
  }

  private parseOr(): Expression {
    let left = this.parseAnd();
    for (let at = this.peek().start; this.acceptOperator("||"); at = this.peek().start) {
      const right = this.parseAnd();
      left = this.node({ kind: "logical", operator: "||", left, right, start: left.start }, { children: [left, right], at });
    }
    return left;
  }

  private parseAnd(): Expression {
    let left = this.parseEquality();
    for (let at = this.peek().start; this.acceptOperator("&&"); at = this.peek().start) {
      const right = this.parseEquality();
      left = this.node({ kind: "logical", operator: "&&", left, right, start: left.start }, { children: [left, right], at });
    }
    return left;
  }

  private parseEquality(): Expression {
    let left = this.parseComparison();
    for (;;) {
      const next = this.peek();
      if (next.kind !== "operator" || (next.value !== "==" && next.value !== "!=")) return left;
      this.index++;
      left = this.compare(next, left, this.parseComparison());
    }
  }

  private parseComparison(): Expression {
    let left = this.parseUnary();
    for (;;) {
      const next = this.peek();
      if (next.kind !== "operator" || !COMPARISON_OPERATORS.has(next.value)) return left;
      this.index++;
      left = this.compare(next, left, this.parseUnary());
    }
  }

  private parseUnary(): Expression {
    const token = this.peek();
    if (token.kind !== "operator" || (token.value !== "!" && token.value !== "-")) return this.parsePrimary();
    this.index++;
    this.enter();
    const operand = this.parseUnary();
    this.depth--;
    const operands = { children: [operand], at: token.start };
    if (token.value === "!") return this.node({ kind: "not", operand, start: token.start }, operands);
    // Folding `-3` into a literal keeps negative numbers as cheap to evaluate as positive ones.
    if (operand.kind === "literal" && typeof operand.value === "number") {
      return { kind: "literal", value: negate(operand.value), start: token.start };
    }
    return this.node({ kind: "negate", operand, start: token.start }, operands);
  }

  private parsePrimary(): Expression {
    const token = this.next();
    switch (token.kind) {
      case "number":
      case "string":
        return { kind: "literal", value: token.value, start: token.start };
      case "word":
        if (token.value === "true") return { kind: "literal", value: true, start: token.start };
        if (token.value === "false") return { kind: "literal", value: false, start: token.start };
        if (token.value === "null") return { kind: "literal", value: null, start: token.start };
        return this.parsePath(token);
      case "nested":
        return this.parsePath(token);
      case "end":
        throw new ExpressionSyntaxError(`expected a value but found ${this.describe(token)}`, token.start);
      case "operator":
        break;
    }
    if (token.value === "(") {
      // parseConditional counts this level of nesting.
      const inner = this.parseConditional();
      const close = this.peek();
      if (!this.acceptOperator(")")) {
        throw new ExpressionSyntaxError(
          `expected ')' to close '(' at position ${token.start} but found ${this.describe(close)}`,
          close.start,
        );
      }
      return inner;
    }
    if (token.value === ".") throw new ExpressionSyntaxError("a path cannot start with '.'", token.start);
    if (token.value === ")") throw new ExpressionSyntaxError("unexpected ')' without a matching '('", token.start);
    throw new ExpressionSyntaxError(`expected a value but found ${this.describe(token)}`, token.start);
  }

  /** A path from its first token (already consumed): a name, `$`, or a nested `${…}`. */
  private parsePath(first: Token): Expression {
    const firstIndex = this.index - 1;
    const start = first.start;
    if (first.kind === "word" && first.value === "@" && this.filterDepth === 0) {
      throw new ExpressionSyntaxError("'@' is the value a filter tests, so it may only appear inside [?(...)]", start);
    }
    const rootToken = first.kind === "word" && first.value === "$" ? this.documentRoot(first) : first;
    // The path up to its first nested `${…}`: undefined while there is none, null when the root is one.
    let fixed: FixedPath | null | undefined = rootToken.kind === "nested" || this.joinsNested() ? null : undefined;
    const root = rootToken.kind === "word" ? rootToken.value : "";
    const segments: PathSegment[] = [];
    const query: QueryStep[] = [];
    // Plain steps are segments until the first query step; from there on every step belongs to the query.
    const add = (step: QueryStep): void => {
      if (step.kind === "child" && query.length === 0) segments.push(step.key);
      else query.push(step);
    };
    let fn: PathFunction | undefined;
    for (;;) {
      const token = this.peek();
      if (fn !== undefined && (isOperator(token, ".") || isOperator(token, "["))) {
        throw new ExpressionSyntaxError(`nothing may follow ${fn}() in a path`, token.start);
      }
      if (isOperator(token, ".")) {
        this.index++;
        // `..` selects from the value and everything below it, by the name, `*` or bracket that follows.
        const descending = this.acceptOperator(".");
        if (descending) query.push({ kind: "descend" });
        if (descending && isOperator(this.peek(), "[")) continue;
        const name = this.next();
        if (isOperator(name, "*")) {
          add({ kind: "wildcard" });
          continue;
        }
        if (name.kind === "word" && !descending && isOperator(this.peek(), "(")) {
          fn = this.parseFunctionCall(name);
          continue;
        }
        if ((name.kind === "word" || name.kind === "nested") && !descending && this.joinsNested()) {
          fixed ??= { root, segments: [...segments] };
          continue;
        }
        if (name.kind === "word") {
          add({ kind: "child", key: name.value });
          continue;
        }
        if (descending) throw new ExpressionSyntaxError(`'..' must be followed by a name, '*' or '[' but found ${this.describe(name)}`, name.start);
        if (name.kind === "end") throw new ExpressionSyntaxError("a path cannot end with '.'", token.start);
        throw new ExpressionSyntaxError(`expected a name after '.' but found ${this.describe(name)}`, name.start);
      }
      if (isOperator(token, "[")) {
        this.index++;
        this.nestedKeySeen = false;
        const step = this.parseBracketStep();
        if (this.nestedKeySeen && step.kind !== "filter") fixed ??= { root, segments: [...segments] };
        else add(step);
        const close = this.peek();
        if (!this.acceptOperator("]")) {
          throw new ExpressionSyntaxError(
            `expected ']' to close '[' at position ${token.start} but found ${this.describe(close)}`,
            close.start,
          );
        }
        continue;
      }
      if (fixed !== undefined) {
        const spliced: SplicedExpression = { kind: "spliced", fixed, pieces: this.splicedPieces(firstIndex, this.index), start };
        // The nested expressions are evaluated below this path: their operators count towards its depth.
        return this.node(spliced, { children: splicedExpressions(spliced), at: start });
      }
      const path: Expression = { kind: "path", root, segments, ...(query.length > 0 ? { query } : {}), ...(fn === undefined ? {} : { fn }), start };
      // A filter's predicate is evaluated below its path: count it towards the evaluator's depth.
      const predicates = filterPredicates(path);
      return predicates.length === 0 ? path : this.node(path, { children: predicates, at: start });
    }
  }

  /**
   * What JSONPath's `$` is followed by, which names the root: `$.workflow` or `$['workflow']` (or a nested `${…}` in
   * either place).
   */
  private documentRoot(dollar: Token): Token {
    const next = this.next();
    const bracketed = isOperator(next, "[");
    const dotted = isOperator(next, ".");
    const name = bracketed || dotted ? this.next() : next;
    if (dotted && (name.kind === "word" || name.kind === "nested")) return name;
    if (bracketed && (name.kind === "string" || name.kind === "nested")) {
      const close = this.peek();
      if (!this.acceptOperator("]")) {
        throw new ExpressionSyntaxError(`expected ']' to close '[' at position ${next.start} but found ${this.describe(close)}`, close.start);
      }
      return name.kind === "string" ? { kind: "word", value: name.value, start: name.start, end: name.end } : name;
    }
    throw new ExpressionSyntaxError("'$' must be followed by the name of a root, as in $.workflow.input or $['workflow']", dollar.start);
  }

  /**
   * Whether the name just read is, or is written together with, a nested `${…}` (`byId.${id}`, `item_${n}`, `${ref}`):
   * consumes the rest of such a name.
   */
  private joinsNested(): boolean {
    let previous = this.tokens[this.index - 1] as Token;
    let nested = previous.kind === "nested";
    for (let next = this.peek(); next.start === previous.end && isNamePiece(next); next = this.peek()) {
      nested ||= next.kind === "nested";
      previous = this.next();
    }
    return nested;
  }

  /** The text of the tokens from `from` up to `to` (excluded), each nested `${…}` in it as its expression. */
  private splicedPieces(from: number, to: number): (string | Expression)[] {
    const pieces: (string | Expression)[] = [];
    let at = (this.tokens[from] as Token).start;
    for (let index = from; index < to; index++) {
      const token = this.tokens[index] as Token;
      if (token.kind !== "nested") continue;
      if (token.start > at) pieces.push(this.source.slice(at, token.start));
      pieces.push(this.nestedExpression(token));
      at = token.end;
    }
    const end = (this.tokens[to - 1] as Token).end;
    if (end > at) pieces.push(this.source.slice(at, end));
    return pieces;
  }

  /** A nested `${…}`'s expression, parsed once. */
  private nestedExpression(token: Token): Expression {
    let expression = this.nestedExpressions.get(token);
    if (expression === undefined) {
      const depth = (this.mode.kind === "template" ? (this.mode.depth ?? 0) : 0) + 1;
      expression = parseExpression(this.source, token.start + 2, { kind: "template", openAt: token.start, depth }).expression;
      this.nestedExpressions.set(token, expression);
    }
    return expression;
  }

  /** `name()` after a path's last `.`: one of Jayway's functions that take no arguments. */
  private parseFunctionCall(name: Extract<Token, { kind: "word" }>): PathFunction {
    const fn = PATH_FUNCTIONS.find((known) => known === name.value);
    if (fn === undefined) {
      throw new ExpressionSyntaxError(`unknown path function '${name.value}()'; known: ${PATH_FUNCTIONS.map((known) => `${known}()`).join(", ")}`, name.start);
    }
    this.index++;
    const close = this.peek();
    if (!this.acceptOperator(")")) throw new ExpressionSyntaxError(`${fn}() takes no arguments: expected ')' but found ${this.describe(close)}`, close.start);
    return fn;
  }

  /** What follows `[`: `*`, `?(predicate)`, a slice, a union of keys, or one key (index or quoted name). */
  private parseBracketStep(): QueryStep {
    const first = this.peek();
    if (this.acceptOperator("*")) return { kind: "wildcard" };
    if (this.acceptOperator("?")) {
      const open = this.peek();
      if (!this.acceptOperator("(")) throw new ExpressionSyntaxError(`expected '(' after '[?' but found ${this.describe(open)}`, open.start);
      this.filterDepth++;
      const predicate = this.parseConditional();
      this.filterDepth--;
      const close = this.peek();
      if (!this.acceptOperator(")")) {
        throw new ExpressionSyntaxError(`expected ')' to close '(' at position ${open.start} but found ${this.describe(close)}`, close.start);
      }
      return { kind: "filter", predicate };
    }
    if (isOperator(first, ":")) return this.parseSlice(null);
    const key = this.parseBracketKey();
    if (isOperator(this.peek(), ":")) {
      if (typeof key !== "number") throw new ExpressionSyntaxError("a slice's bounds must be integers", first.start);
      return this.parseSlice(key);
    }
    if (!isOperator(this.peek(), ",")) return { kind: "child", key };
    const keys = [key];
    while (this.acceptOperator(",")) keys.push(this.parseBracketKey());
    return { kind: "union", keys };
  }

  /** The rest of `[from:to]` from its `:`; either bound may be left out. */
  private parseSlice(from: number | null): QueryStep {
    this.acceptOperator(":");
    const next = this.peek();
    if (isOperator(next, "]")) return { kind: "slice", from, to: null };
    const to = this.parseBracketKey();
    if (typeof to !== "number") throw new ExpressionSyntaxError("a slice's bounds must be integers", next.start);
    return { kind: "slice", from, to };
  }

  private parseBracketKey(): PathSegment {
    let token = this.next();
    if (token.kind === "string") return token.value;
    if (token.kind === "nested") {
      // Its value is only known when the path runs; the key stands in for it until then.
      this.nestedKeySeen = true;
      return 0;
    }
    // JSONPath's index from the end, as Conductor reads `${t.output.items[-1]}`: the last element.
    const fromEnd = isOperator(token, "-") && this.peek().kind === "number";
    if (fromEnd) token = this.next();
    if (token.kind === "number") {
      if (!Number.isSafeInteger(token.value)) {
        throw new ExpressionSyntaxError("an array index must be an integer (negative counts from the end)", token.start);
      }
      return fromEnd ? -token.value : token.value;
    }
    throw new ExpressionSyntaxError(
      `expected an array index or a quoted key after '[' but found ${this.describe(token)}`,
      token.start,
    );
  }

  private compare(operator: Extract<Token, { kind: "operator" }>, left: Expression, right: Expression): Expression {
    const node: Expression = { kind: "compare", operator: operator.value as ComparisonOperator, left, right, start: left.start };
    return this.node(node, { children: [left, right], at: operator.start });
  }

  /** Records `node`'s operator depth, refusing it when the evaluator would recurse too deep. */
  private node<T extends Expression>(node: T, { children, at }: Operands): T {
    const depth = 1 + Math.max(...children.map((child) => operatorDepths.get(child) ?? 0));
    if (depth > MAX_OPERATOR_DEPTH) {
      throw new ExpressionSyntaxError(
        `expression is more than ${MAX_OPERATOR_DEPTH} operators deep (each operator of a chain such as a || b || c is one level, and those of a nested \${…} count too)`,
        at,
      );
    }
    operatorDepths.set(node, depth);
    return node;
  }

  private enter(): void {
    this.depth++;
    if (this.depth > MAX_NESTING) {
      throw new ExpressionSyntaxError(`expression is nested more than ${MAX_NESTING} levels deep`, this.peek().start);
    }
  }

  private peek(): Token {
    // The lexer always ends the list with an `end` token and the parser never steps past it.
    return this.tokens[Math.min(this.index, this.tokens.length - 1)] as Token;
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== "end") this.index++;
    return token;
  }

  private acceptOperator(operator: Operator): boolean {
    if (!isOperator(this.peek(), operator)) return false;
    this.index++;
    return true;
  }

  private endName(): string {
    return this.mode.kind === "template" ? "'}'" : "the end of the expression";
  }

  private describe(token: Token): string {
    if (token.kind === "end") return this.endName();
    if (token.kind === "string") return "a string literal";
    const raw = this.source.slice(token.start, token.end);
    return `'${raw.length > 30 ? `${raw.slice(0, 30)}...` : raw}'`;
  }
}

/** A token a name may be written with: a name, digits, a nested `${…}`. */
function isNamePiece(token: Token): boolean {
  return token.kind === "word" || token.kind === "number" || token.kind === "nested";
}

/** Deliberately not a type guard: a false result must not narrow the token's kind away. */
function isOperator(token: Token, operator: Operator): boolean {
  return token.kind === "operator" && token.value === operator;
}
