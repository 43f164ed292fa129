/**
 * Masked values quoted back in a failure reason. A script, jq filter or check that fails on a masked value (Orkes'
 * `_secrets`, `_masked`, a definition's `maskedFields`, or a template that read one: see masking.ts) may quote it in
 * its error ("unexpected token: 'abc'"), and that text becomes the task's reasonForIncompletion, its `output.error`, the
 * workflow's reason, search rows, status events and a failure workflow's input, none of which masking by key reaches.
 * Here the reason is scrubbed where it is set, so everything that copies it gets the scrubbed text.
 */
import { MASKED_SECRET } from "./evaluation";
import { masked, maskedKeysOf } from "./masking";
import type { JsonObject, JsonValue, TaskExecution, WorkflowExecution } from "./model";
import { shownTaskInput, type TaskInputOf } from "./view";

/** The shortest value replaced wherever it occurs in a reason: a shorter one would also hit ordinary words. */
const MIN_REPLACED_LENGTH = 4;

/**
 * The longest reason scrubbed: one longer (a script error that dumps its input) is cut to this first, ending
 * {@link CUT_MARK}, so that a start of a masked value at the cut is masked as jq's cut operands are. Scrubbing costs
 * the reason's length times the masked values' count and length, and an input may hold 768 KiB of masked values: an
 * uncut 318 KB error took seconds of the object's CPU.
 */
export const MAX_SCRUBBED_REASON_LENGTH = 4_096;

/**
 * Most quoted fragments of one reason looked for in the masked values (each look reads them all); those after are made
 * `***` unread, as masking too much is safe.
 */
const MAX_FRAGMENTS_LOOKED_UP = 64;

/** A quoted fragment of an error message, as QuickJS and jq quote a token or value: '…' or "…". */
const QUOTED = /'([^'\n]+)'|"([^"\n]+)"/g;

/**
 * The text of the values `task`'s input holds that the API shows as `***` (strings, and numbers as written); none,
 * cheaply, when nothing in its input is masked (shownTaskInput answers the same object then).
 */
export function maskedInputValues(task: TaskInputOf, execution: WorkflowExecution): string[] {
  return maskedTexts(task.inputData, shownTaskInput(task, execution));
}

/**
 * The text of the values of a task's `output` that the API shows as `***` (by key: see masking.ts); none, cheaply, when
 * nothing in it is masked.
 */
export function maskedOutputValues(output: JsonObject, execution: WorkflowExecution): string[] {
  return maskedTexts(output, masked(output, maskedKeysOf(execution.definition)));
}

/**
 * The text of the values of `real` that `shown` (`real` as the API shows it, see masking.ts) has as `***`: strings,
 * and numbers as written; none, cheaply, when `shown` is `real` itself (nothing masked).
 */
export function maskedTexts(real: JsonValue, shown: JsonValue): string[] {
  if (shown === real) return [];
  const values = new Set<string>();
  collectMasked(real, shown, values);
  return [...values];
}

/** Adds to `into` the texts under each place where `shown` (a masked copy of `real`) has `***` and `real` had more. */
function collectMasked(real: JsonValue, shown: JsonValue, into: Set<string>): void {
  if (real === shown) return;
  if (shown === MASKED_SECRET) {
    collectTexts(real, into);
    return;
  }
  if (real === null || shown === null || typeof real !== "object" || typeof shown !== "object") return;
  if (Array.isArray(real)) {
    if (!Array.isArray(shown)) return;
    real.forEach((item, index) => collectMasked(item, shown[index] ?? null, into));
    return;
  }
  if (Array.isArray(shown)) return;
  for (const key of Object.keys(real)) if (Object.hasOwn(shown, key)) collectMasked(real[key]!, shown[key]!, into);
}

/** Every string and number (as text) in `value`, at any depth. */
function collectTexts(value: JsonValue, into: Set<string>): void {
  if (typeof value === "string") into.add(value);
  else if (typeof value === "number") into.add(String(value));
  else if (Array.isArray(value)) value.forEach((item) => collectTexts(item, into));
  else if (value !== null && typeof value === "object") for (const item of Object.values(value)) collectTexts(item, into);
}

/**
 * `reason` with each of `values` (of {@link MIN_REPLACED_LENGTH} characters or more, as written and JSON-escaped) made
 * `***`, the start of one that the message cut short before `...` made `***` (jq shows an operand's JSON cut to 11
 * characters, `string ("abcdefghij...)`, with no closing quote), and each quoted fragment that is part of one of them
 * or had one replaced in it made `'***'`: QuickJS quotes the token it stopped at, which may be only the start of a value (`'abc'` of `abc-def`),
 * and replacing whole values cannot catch either.
 */
export function reasonMaskedOf(whole: string, values: readonly string[]): string {
  if (values.length === 0) return whole;
  const reason = whole.length > MAX_SCRUBBED_REASON_LENGTH ? whole.slice(0, MAX_SCRUBBED_REASON_LENGTH) + CUT_MARK : whole;
  const forms = new Set<string>();
  for (const value of values) {
    if (value.length < MIN_REPLACED_LENGTH) continue;
    forms.add(value);
    forms.add(JSON.stringify(value).slice(1, -1));
  }
  // Longest first: a value that holds another is replaced whole.
  let masked = reason;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) masked = masked.split(form).join(MASKED_SECRET);
  if (masked.includes(CUT_MARK)) masked = cutStartsMasked(masked, valueForms(values));
  let lookedUp = 0;
  return masked.replace(QUOTED, (quoted: string, single: string | undefined, double: string | undefined) => {
    const fragment = single ?? double ?? "";
    if (fragment === MASKED_SECRET) return quoted;
    // One a shorter value was replaced in ('***_key' of a token 'admin_key' and a value "admin") is no longer text a
    // value holds, yet what is left of it may be part of a longer one: it goes whole.
    if (!fragment.includes(MASKED_SECRET) && lookedUp++ < MAX_FRAGMENTS_LOOKED_UP && !values.some((value) => value.includes(fragment))) return quoted;
    return single !== undefined ? `'${MASKED_SECRET}'` : `"${MASKED_SECRET}"`;
  });
}

/** Where a message cut a value short: jq's messages show an operand's JSON as 11 characters and this. */
const CUT_MARK = "...";

/** Each of `values` as written and JSON-escaped, without empty ones (of any length: the start of a long text may be short). */
function valueForms(values: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const value of values) if (value !== "") forms.add(value).add(JSON.stringify(value).slice(1, -1));
  return [...forms];
}

/**
 * `text` with the text just before each {@link CUT_MARK} that is the start of one of `forms` made `***` (the longest
 * such, so "Bearer abc..." of a value "abcdef" keeps "Bearer "). Looks back no further than the longest form, nor past
 * the previous mark: at most the text's length times the number of forms.
 */
function cutStartsMasked(text: string, forms: readonly string[]): string {
  const parts: string[] = [];
  let from = 0;
  for (let at = text.indexOf(CUT_MARK); at !== -1; at = text.indexOf(CUT_MARK, from)) {
    const start = valueStartBefore(text, from, at, forms);
    parts.push(text.slice(from, start), start < at ? MASKED_SECRET : "", CUT_MARK);
    from = at + CUT_MARK.length;
  }
  parts.push(text.slice(from));
  return parts.join("");
}

/** Where the longest text of `text` from `from` on and ending at `end` begins that one of `forms` starts with; `end` when none. */
function valueStartBefore(text: string, from: number, end: number, forms: readonly string[]): number {
  let start = end;
  for (const form of forms) {
    const first = form.charCodeAt(0);
    for (let at = Math.max(from, end - form.length); at < start; at++) {
      if (text.charCodeAt(at) === first && form.startsWith(text.slice(at, end))) {
        start = at;
        break;
      }
    }
  }
  return start;
}

/**
 * `task` (as a start ended it) with its reasonForIncompletion and its `output.error` scrubbed of the masked values of
 * its input (see {@link reasonMaskedOf}); the same object when it has no reason or its input holds nothing masked.
 */
export function withReasonMasked(task: TaskExecution, execution: WorkflowExecution): TaskExecution {
  if (task.reasonForIncompletion === undefined) return task;
  const values = maskedInputValues(task, execution);
  if (values.length === 0) return task;
  const reasonForIncompletion = reasonMaskedOf(task.reasonForIncompletion, values);
  const error = task.outputData["error"];
  // The error is most often the reason itself: scrubbed once.
  const errorMasked = error === task.reasonForIncompletion ? reasonForIncompletion : typeof error === "string" ? reasonMaskedOf(error, values) : undefined;
  const outputData = errorMasked === undefined ? task.outputData : { ...task.outputData, error: errorMasked };
  return { ...task, reasonForIncompletion, outputData };
}
