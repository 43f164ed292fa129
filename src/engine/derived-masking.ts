/**
 * Masking what a task's input took from masked values: a template part that reads a masked key (`${workflow.input.apiKey}`
 * with `apiKey` in `maskedFields`, `${work.output._masked.card}`) is shown `***` in the task's input, as Conductor masks
 * it, even when the value lands under a key that is not masked itself (a header, an interpolated string). The execution
 * keeps the real value: the task runs with it.
 */
import type { Expression, PathSegment, TemplatePart } from "./expressions";
import { ExpressionSyntaxError, parseTemplate, splicedExpressions } from "./expressions";
import { MASKED_SECRET } from "./evaluation";
import type { JsonObject, JsonValue } from "./model";
import { setOwn } from "./own-property";

/** Whether `expression` reads a value through a path step named by one of `keys`: what it gives is that value, or part of it. */
function readsKeys(expression: Expression, keys: ReadonlySet<string>): boolean {
  const named = (key: PathSegment) => typeof key === "string" && keys.has(key);
  switch (expression.kind) {
    case "literal":
      return false;
    case "path":
      return (
        expression.segments.some(named) ||
        (expression.query ?? []).some((step) => (step.kind === "child" && named(step.key)) || (step.kind === "union" && step.keys.some(named)) || (step.kind === "filter" && readsKeys(step.predicate, keys)))
      );
    case "not":
    case "negate":
      return readsKeys(expression.operand, keys);
    case "compare":
    case "logical":
      return readsKeys(expression.left, keys) || readsKeys(expression.right, keys);
    case "conditional":
      return readsKeys(expression.consequent, keys) || readsKeys(expression.alternate, keys);
    case "spliced":
      // Evaluation refuses a masked key that only the written-in values name (see splice.ts).
      return (expression.fixed?.segments ?? []).some(named) || splicedExpressions(expression).some((inner) => readsKeys(inner, keys));
  }
}

function partsOf(text: string): readonly TemplatePart[] | undefined {
  try {
    return parseTemplate(text).parts;
  } catch (error) {
    if (error instanceof ExpressionSyntaxError) return undefined;
    throw error;
  }
}

/** The regular-expression text matching `text` literally. */
function literally(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Each expression part's value in `resolved`, found between the template's literal text; undefined unless only one split fits. */
function placedValues(parts: readonly TemplatePart[], resolved: string): string[] | undefined {
  const split = (group: string) => new RegExp(`^${parts.map((part) => (part.kind === "text" ? literally(part.text) : group)).join("")}$`).exec(resolved)?.slice(1);
  // The shortest first values and the longest: when they agree, no other split fits (a value holding the literal text
  // that follows it would make them differ, and a part of it could then be shown as another part's value).
  const shortest = split("([\\s\\S]*?)");
  const longest = split("([\\s\\S]*)");
  return shortest !== undefined && longest !== undefined && shortest.every((value, index) => value === longest[index]) ? shortest : undefined;
}

/**
 * A string template's resolved value with the parts read from masked values shown `***`: the whole value when the
 * template is one such expression, else each such part, placed between the template's literal text (the whole value
 * when that text does not place it beyond doubt).
 */
function maskedString(parts: readonly TemplatePart[], sensitive: readonly boolean[], resolved: JsonValue): JsonValue {
  if (parts.length === 1) return MASKED_SECRET;
  if (typeof resolved !== "string") return MASKED_SECRET;
  const values = placedValues(parts, resolved);
  if (values === undefined) return MASKED_SECRET;
  let next = 0;
  return parts
    .map((part, index) => {
      if (part.kind === "text") return part.text;
      const value = values[next++]!;
      return sensitive[index] ? MASKED_SECRET : value;
    })
    .join("");
}

/**
 * The values the parts of `template` that read a value under one of `keys` gave, where a string template wrote them into
 * text (`"SSN ${workflow.input.ssn} on file"`): each such part's own value, as the literal text places it beyond doubt
 * (the whole text when it does not, as {@link withDerivedMasked} shows it). A failure reason may quote the value alone,
 * and only the template tells where it lies in the text: the shown text's `***`s may not (literal `***`, or a `*` beside
 * one, `"a*${…}"` showing `a****`). None where a whole value is masked (that is seen in the shown value itself).
 */
export function templateMaskedParts(template: JsonValue, resolved: JsonValue, keys: ReadonlySet<string>): string[] {
  const parts = new Set<string>();
  collectMaskedParts(template, resolved, keys, parts);
  return [...parts];
}

function collectMaskedParts(template: JsonValue, resolved: JsonValue, keys: ReadonlySet<string>, into: Set<string>): void {
  if (typeof template === "string") {
    if (typeof resolved !== "string" || !template.includes("${")) return;
    const parts = partsOf(template);
    if (parts === undefined || parts.length === 1) return;
    const sensitive = parts.map((part) => part.kind === "expression" && readsKeys(part.expression, keys));
    if (!sensitive.includes(true)) return;
    const values = placedValues(parts, resolved);
    if (values === undefined) {
      into.add(resolved);
      return;
    }
    let next = 0;
    parts.forEach((part, index) => {
      if (part.kind === "text") return;
      const value = values[next++]!;
      if (sensitive[index]) into.add(value);
    });
    return;
  }
  if (template === null || typeof template !== "object" || resolved === null || typeof resolved !== "object") return;
  if (Array.isArray(template)) {
    if (Array.isArray(resolved)) template.forEach((item, index) => index < resolved.length && collectMaskedParts(item, resolved[index]!, keys, into));
    return;
  }
  if (Array.isArray(resolved)) return;
  for (const key of Object.keys(template)) if (Object.hasOwn(resolved, key)) collectMaskedParts(template[key]!, resolved[key]!, keys, into);
}

/** Whether a template string anywhere in `template` has a part that reads a value under one of `keys`. */
export function templateReadsKeys(template: JsonValue, keys: ReadonlySet<string>): boolean {
  if (typeof template === "string") return template.includes("${") && (partsOf(template) ?? []).some((part) => part.kind === "expression" && readsKeys(part.expression, keys));
  if (template === null || typeof template !== "object") return false;
  return (Array.isArray(template) ? template : Object.values(template)).some((item) => templateReadsKeys(item, keys));
}

/**
 * `resolved` (what `template` resolved to) with what the template read from values under `keys` shown `***`; the same
 * object when nothing was read so (no copy).
 */
export function withDerivedMasked(template: JsonValue, resolved: JsonValue, keys: ReadonlySet<string>): JsonValue {
  if (typeof template === "string") {
    if (!template.includes("${")) return resolved;
    const parts = partsOf(template);
    if (parts === undefined) return resolved;
    const sensitive = parts.map((part) => part.kind === "expression" && readsKeys(part.expression, keys));
    return sensitive.includes(true) ? maskedString(parts, sensitive, resolved) : resolved;
  }
  if (template === null || typeof template !== "object" || resolved === null || typeof resolved !== "object") return resolved;
  if (Array.isArray(template)) {
    if (!Array.isArray(resolved)) return resolved;
    let copy: JsonValue[] | undefined;
    template.forEach((item, index) => {
      if (index >= resolved.length) return;
      const shown = withDerivedMasked(item, resolved[index]!, keys);
      if (shown !== resolved[index]) (copy ??= [...resolved])[index] = shown;
    });
    return copy ?? resolved;
  }
  if (Array.isArray(resolved)) return resolved;
  let copy: JsonObject | undefined;
  for (const key of Object.keys(template)) {
    if (!Object.hasOwn(resolved, key)) continue;
    const shown = withDerivedMasked(template[key]!, resolved[key]!, keys);
    if (shown !== resolved[key]) setOwn((copy ??= { ...resolved }), key, shown);
  }
  return copy ?? resolved;
}
