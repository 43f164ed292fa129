/**
 * Turns the body of one `${...}` (or a bare expression) into tokens. Positions are offsets in
 * the whole source string so every later error can point at the right character.
 */
import { ExpressionSyntaxError } from "./errors";

/** Punctuation and operators of the expression grammar. */
export type Operator =
  | "."
  | "["
  | "]"
  | "("
  | ")"
  | "?"
  | ":"
  | "!"
  | "-"
  | "=="
  | "!="
  | "<"
  | ">"
  | "<="
  | ">="
  | "&&"
  | "||"
  | "*"
  | ",";

/** One lexical token; `start`/`end` are offsets in the whole source string (end exclusive). */
export type Token =
  | { readonly kind: "number"; readonly value: number; readonly start: number; readonly end: number }
  | { readonly kind: "string"; readonly value: string; readonly start: number; readonly end: number }
  | { readonly kind: "word"; readonly value: string; readonly start: number; readonly end: number }
  | { readonly kind: "operator"; readonly value: Operator; readonly start: number; readonly end: number }
  /** A nested `${…}` (from its `$` to just past its `}`), parsed as an expression of its own. */
  | { readonly kind: "nested"; readonly start: number; readonly end: number }
  /** The closing `}` of a template expression, or the end of a bare expression. */
  | { readonly kind: "end"; readonly start: number; readonly end: number };

/**
 * Where the expression stops. Inside a template it ends at the first `}` outside a string
 * literal and outside a nested `${…}`; a bare expression ends at the end of the source.
 */
export type LexMode =
  | {
      readonly kind: "template";
      /** Offset of the `$` of the opening `${`, for the unterminated error. */
      readonly openAt: number;
      /** How many `${` enclose this one (0 for a template's own). */
      readonly depth?: number;
    }
  | { readonly kind: "bare" };

/** How deep `${…}` may nest in `${…}`: far beyond any path's needs, and a bound on the recursion hostile text could cause. */
export const MAX_NESTED_EXPRESSIONS = 10;

/** The tokens of one expression and where its source ends (the `}` offset in template mode). */
export interface LexResult {
  readonly tokens: readonly Token[];
  readonly end: number;
}

const TWO_CHAR_OPERATORS: ReadonlySet<string> = new Set(["==", "!=", "<=", ">=", "&&", "||"]);
const ONE_CHAR_OPERATORS: ReadonlySet<string> = new Set([".", "[", "]", "(", ")", "?", ":", "!", "-", "<", ">", "*", ","]);

/** Why a lone `=`, `&` or `|` is wrong: it is almost always a typo of the doubled operator. */
const DOUBLED_HINTS: Readonly<Record<string, string>> = { "=": "==", "&": "&&", "|": "||" };

const ESCAPES: Readonly<Record<string, string>> = {
  "'": "'",
  '"': '"',
  "\\": "\\",
  n: "\n",
  t: "\t",
  r: "\r",
};

function isDigit(c: string): boolean {
  return c >= "0" && c <= "9";
}

function isLetter(c: string): boolean {
  return (c >= "a" && c <= "z") || (c >= "A" && c <= "Z");
}

/** Task reference names may contain `-`, so it is a name character rather than an operator. */
function isNameChar(c: string): boolean {
  return isLetter(c) || isDigit(c) || c === "_" || c === "-";
}

/**
 * Whether the character at `at` continues a path step after `.`: a name character, one the grammar gives no meaning
 * to ({@link isStepOnlyChar}), or a `$` that opens no nested `${`. Conductor's JsonPath (Jayway) reads a dotted step up
 * to the next `.`, `[` or `(`, so `$` is part of a name there (`${workflow.variables.$ref}`, `${task.output.price$}`),
 * as it is in JSON Schema's `$ref` and `$id`.
 */
function isStepChar(source: string, at: number): boolean {
  const c = source.charAt(at);
  return isNameChar(c) || isStepOnlyChar(c) || (c === "$" && source.charAt(at + 1) !== "{");
}

/**
 * Characters the grammar gives no meaning to, which a step after `.` may hold as Conductor's JsonPath reads them:
 * `@` (JSON-LD's `@type`), `#` (`#text`) and any character beyond ASCII but whitespace (`größe`, `名前`). A UTF-16
 * surrogate half counts as one of these, so a character outside the BMP does too.
 */
function isStepOnlyChar(c: string): boolean {
  return c === "@" || c === "#" || (c > "\x7f" && !/\s/u.test(c));
}

function isWhitespace(c: string): boolean {
  return c === " " || c === "\t" || c === "\n" || c === "\r";
}

/**
 * Tokenizes `source` from offset `start`.
 *
 * A name directly after `.` is lexed with the path-segment rule (any run of name characters,
 * digits first allowed) so `items.0.id` and `a.1st-step` stay paths instead of turning into
 * the number `0.1` or a number followed by a name.
 *
 * @throws ExpressionSyntaxError on an unexpected character, a bad string literal, or (template
 *   mode) a missing closing `}`.
 */
export function tokenize(source: string, start: number, mode: LexMode): LexResult {
  const tokens: Token[] = [];
  let i = start;
  let afterDot = false;

  for (;;) {
    while (i < source.length && isWhitespace(source.charAt(i))) i++;
    if (i >= source.length) {
      if (mode.kind === "template") throw new ExpressionSyntaxError("expected '}' to close '${'", mode.openAt);
      tokens.push({ kind: "end", start: i, end: i });
      return { tokens, end: i };
    }

    const c = source.charAt(i);
    const tokenStart = i;

    if (c === "}" && mode.kind === "template") {
      tokens.push({ kind: "end", start: i, end: i + 1 });
      return { tokens, end: i };
    }

    if (c === "$" && source.charAt(i + 1) === "{" && mode.kind === "template") {
      const end = nestedEnd(source, i, mode.depth ?? 0);
      tokens.push({ kind: "nested", start: i, end });
      i = end;
      afterDot = false;
      continue;
    }

    if (afterDot && (isNameChar(c) || isStepOnlyChar(c) || (c === "$" && isStepChar(source, i + 1)))) {
      while (i < source.length && isStepChar(source, i)) i++;
      tokens.push({ kind: "word", value: source.slice(tokenStart, i), start: tokenStart, end: i });
      afterDot = false;
      continue;
    }
    // Orkes' `${workflow.env.<name>.$}` (the variable read as JSON): a lone `$` is a path segment.
    if (afterDot && c === "$" && !isNameChar(source.charAt(i + 1))) {
      tokens.push({ kind: "word", value: "$", start: i, end: i + 1 });
      i += 1;
      afterDot = false;
      continue;
    }
    afterDot = false;

    // JSONPath's root `$` (`$.workflow.input.id`, `$['workflow']`): the document every path starts from.
    if (c === "$" && !isNameChar(source.charAt(i + 1))) {
      tokens.push({ kind: "word", value: "$", start: i, end: i + 1 });
      i += 1;
      continue;
    }

    // JSONPath's `@` in a filter (`[?(@.price < 10)]`): the value tested, a path root like a task's name.
    const previous = tokens.at(-1);
    if (c === "@" && !(previous?.kind === "operator" && previous.value === ".")) {
      tokens.push({ kind: "word", value: "@", start: i, end: i + 1 });
      i += 1;
      continue;
    }

    if (isLetter(c) || c === "_") {
      i++;
      while (i < source.length && isNameChar(source.charAt(i))) i++;
      tokens.push({ kind: "word", value: source.slice(tokenStart, i), start: tokenStart, end: i });
      continue;
    }

    if (isDigit(c)) {
      i = scanNumber(source, i);
      // A name that starts with digits (a task reference name such as `8XILG` or `1st_step`): a number does not run
      // straight into a letter or _.
      if (isLetter(source.charAt(i)) || source.charAt(i) === "_") {
        while (i < source.length && isNameChar(source.charAt(i))) i++;
        tokens.push({ kind: "word", value: source.slice(tokenStart, i), start: tokenStart, end: i });
        continue;
      }
      const value = Number(source.slice(tokenStart, i));
      if (!Number.isFinite(value)) throw new ExpressionSyntaxError("number is too large", tokenStart);
      tokens.push({ kind: "number", value, start: tokenStart, end: i });
      continue;
    }

    if (c === "'" || c === '"') {
      const literal = scanString(source, i);
      tokens.push({ kind: "string", value: literal.value, start: tokenStart, end: literal.end });
      i = literal.end;
      continue;
    }

    const two = source.slice(i, i + 2);
    if (TWO_CHAR_OPERATORS.has(two)) {
      tokens.push({ kind: "operator", value: two as Operator, start: i, end: i + 2 });
      i += 2;
      continue;
    }
    if (ONE_CHAR_OPERATORS.has(c)) {
      tokens.push({ kind: "operator", value: c as Operator, start: i, end: i + 1 });
      i += 1;
      afterDot = c === ".";
      continue;
    }

    const hint = DOUBLED_HINTS[c];
    throw new ExpressionSyntaxError(
      hint === undefined ? `unexpected character ${quoteChar(c)}` : `unexpected character '${c}'; did you mean '${hint}'?`,
      i,
    );
  }
}

/** Just past the `}` closing the nested `${` at `openAt`. */
function nestedEnd(source: string, openAt: number, depth: number): number {
  if (depth + 1 > MAX_NESTED_EXPRESSIONS) {
    throw new ExpressionSyntaxError(`'\${' is nested more than ${MAX_NESTED_EXPRESSIONS} levels deep`, openAt);
  }
  return tokenize(source, openAt + 2, { kind: "template", openAt, depth: depth + 1 }).end + 1;
}

/** Integer, optional fraction (a digit must follow the dot), optional exponent. */
function scanNumber(source: string, from: number): number {
  let i = from;
  while (isDigit(source.charAt(i))) i++;
  if (source.charAt(i) === "." && isDigit(source.charAt(i + 1))) {
    i++;
    while (isDigit(source.charAt(i))) i++;
  }
  const e = source.charAt(i);
  if (e === "e" || e === "E") {
    let j = i + 1;
    const sign = source.charAt(j);
    if (sign === "+" || sign === "-") j++;
    if (isDigit(source.charAt(j))) {
      while (isDigit(source.charAt(j))) j++;
      i = j;
    }
  }
  return i;
}

/** Reads a quoted literal starting at the quote; a `}` inside it is text, not the end of `${`. */
function scanString(source: string, from: number): { value: string; end: number } {
  const quote = source.charAt(from);
  let value = "";
  let i = from + 1;
  while (i < source.length) {
    const c = source.charAt(i);
    if (c === quote) return { value, end: i + 1 };
    if (c === "\\") {
      if (i + 1 >= source.length) break;
      const escaped = ESCAPES[source.charAt(i + 1)];
      if (escaped === undefined) {
        throw new ExpressionSyntaxError(`unknown escape sequence '\\${source.charAt(i + 1)}' in string literal`, i);
      }
      value += escaped;
      i += 2;
      continue;
    }
    value += c;
    i++;
  }
  throw new ExpressionSyntaxError("unterminated string literal", from);
}

/** Quotes a character for a message, escaping control characters that would garble it. */
function quoteChar(c: string): string {
  const json = JSON.stringify(c);
  return `'${json.slice(1, -1)}'`;
}
