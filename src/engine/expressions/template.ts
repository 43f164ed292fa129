/**
 * Template strings: literal text with any number of `${...}` expressions, `$${` escaping a
 * literal `${`. Parsed once per distinct string and cached, because the same definition
 * strings are resolved for every execution.
 */
import type { JsonValue } from "../model";
import type { Expression } from "./ast";
import { BoundedCache } from "./cache";
import type { EvaluationContext } from "./context";
import { evaluate } from "./evaluate";
import { parseExpression } from "./parser";
import { interpolateOnto, textWithin } from "./values";

/** A piece of a template: literal text (escapes already applied) or one `${...}` expression. */
export type TemplatePart =
  | { readonly kind: "text"; readonly text: string }
  | {
      readonly kind: "expression";
      readonly expression: Expression;
      /** Offset of the `$` of `${` in the template string. */
      readonly start: number;
      /** Offset just past the closing `}`. */
      readonly end: number;
    };

/** A parsed template. Shared through the cache, so frozen and never to be mutated. */
export interface Template {
  readonly source: string;
  /** Adjacent text is merged, so a template is a lone expression exactly when `parts` is one expression part. */
  readonly parts: readonly TemplatePart[];
}

/** Distinct template strings kept parsed; comfortably above the strings of many deployed definitions. */
const CACHE_CAPACITY = 2_000;
/**
 * Longer strings are parsed on every use instead of cached: the parts copy the text, and the
 * cache must stay small even if a definition embeds large documents.
 */
const MAX_CACHED_LENGTH = 16_384;

/**
 * Most characters the cached strings hold together: a template's parts copy its text, so about twice this in memory at
 * most (2 to 4 MB). Comfortably above the strings of many deployed definitions (2,000 of 500 characters); without it,
 * 2,000 strings of 16 KB each, from definitions registered or started inline, held 64 MB or more in the isolate.
 */
const CACHE_MAX_CHARS = 1_000_000;

const cache = new BoundedCache<string, Template>(CACHE_CAPACITY, CACHE_MAX_CHARS);

/** Characters of the template strings kept parsed; for tests of the bound. */
export function cachedTemplateChars(): number {
  return cache.keyChars;
}

/**
 * Parses a template string (cached).
 *
 * @throws ExpressionSyntaxError with the 0-based offset of the problem in `text`
 */
export function parseTemplate(text: string): Template {
  const cached = cache.get(text);
  if (cached !== undefined) return cached;
  const template = scanTemplate(text);
  if (text.length <= MAX_CACHED_LENGTH) cache.set(text, template);
  return template;
}

/**
 * A lone expression keeps its JSON type (`"${workflow.input.count}"` gives a number); with
 * any surrounding text every expression is interpolated as a string.
 *
 * @throws MissingSecretError when an evaluated secret reference does not exist
 * @throws ExpressionLimitError when the text built passes the context's maxBytes (checked as each part is added)
 */
export function renderTemplate(template: Template, ctx: EvaluationContext): JsonValue {
  const { parts } = template;
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only !== undefined) return only.kind === "expression" ? evaluate(only.expression, ctx) : only.text;
  const limit = ctx.maxBytes ?? Infinity;
  let out = "";
  for (const part of parts) out = part.kind === "text" ? textWithin(out + part.text, limit) : interpolateOnto(out, evaluate(part.expression, ctx), limit);
  return out;
}

/**
 * True when `text` contains at least one `${` that opens an expression (a `$${` escape does
 * not count). A lexical check only: the expression may still be malformed.
 */
export function hasExpression(text: string): boolean {
  let from = 0;
  for (;;) {
    const at = text.indexOf("${", from);
    if (at < 0) return false;
    if (!isEscaped(text, at)) return true;
    from = at + 2;
  }
}

/**
 * `$${` is Conductor's escape for a literal `${`. Everything before `from` has been consumed
 * and ends in `{` or `}`, so the character before `at` is never the tail of an earlier token.
 */
function isEscaped(text: string, at: number): boolean {
  return at > 0 && text.charCodeAt(at - 1) === 36; /* "$" */
}

function scanTemplate(text: string): Template {
  const parts: TemplatePart[] = [];
  let pending = "";
  let from = 0;
  for (;;) {
    const at = text.indexOf("${", from);
    if (at < 0) {
      pending += text.slice(from);
      break;
    }
    if (isEscaped(text, at)) {
      pending += text.slice(from, at - 1) + "${";
      from = at + 2;
      continue;
    }
    pending += text.slice(from, at);
    if (pending !== "") parts.push(Object.freeze({ kind: "text", text: pending }));
    pending = "";
    const { expression, end } = parseExpression(text, at + 2, { kind: "template", openAt: at });
    parts.push(Object.freeze({ kind: "expression", expression, start: at, end: end + 1 }));
    from = end + 1;
  }
  if (pending !== "") parts.push(Object.freeze({ kind: "text", text: pending }));
  return Object.freeze({ source: text, parts: Object.freeze(parts) });
}
