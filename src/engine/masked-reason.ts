/**
 * Masked values quoted back in a failure reason. A script, jq filter or check that fails on a masked value (Orkes'
 * `_secrets`, `_masked`, a definition's `maskedFields`, or a template that read one: see masking.ts) may quote it in
 * its error ("unexpected token: 'abc'"), and that text becomes the task's reasonForIncompletion, its `output.error`, the
 * workflow's reason, search rows, status events and a failure workflow's input, none of which masking by key reaches.
 * Here the reason is scrubbed where it is set, so everything that copies it gets the scrubbed text.
 */
import { MASKED_SECRET } from "./evaluation";
import { cutText } from "./limits";
import { masked, maskedKeysOf } from "./masking";
import type { JsonObject, JsonValue, TaskExecution, WorkflowExecution } from "./model";
import { longestMarkedEnding, lengthsFoundIn, SEPARATOR, SuffixAutomaton, unitsOf } from "./suffix-automaton";
import { templateMaskedParts } from "./derived-masking";
import { instanceTask } from "./plan";
import { taskInputTemplate } from "./tasks/registry";
import { shownTaskInput, type TaskInputOf } from "./view";

/** The shortest value replaced wherever it occurs in a reason: a shorter one would also hit ordinary words. */
const MIN_REPLACED_LENGTH = 4;

/**
 * The longest reason scrubbed, and kept: one longer (a script error that dumps its input) is cut to this first, ending
 * {@link CUT_MARK}, so that a start of a masked value at the cut is masked as jq's cut operands are. Scrubbing costs
 * the reason's length plus the masked values' (linear: see suffix-automaton.ts), but holds automata of the reason,
 * a few states and a map of transitions per character (an uncut 318 KB reason took 0.6 s). Cut with nothing to scrub
 * too: a script's error is as long as it makes it (`throw new Error(s)`), and stored twice, as the task's reason and
 * its `output.error`, in the task's one row, which holds 2 MB; a longer one failed every save of the execution.
 */
export const MAX_SCRUBBED_REASON_LENGTH = 4_096;

/** A quoted fragment of an error message, as QuickJS and jq quote a token or value: '…' or "…". */
const QUOTED = /'([^'\n]+)'|"([^"\n]+)"/g;

/**
 * The text of the values `task`'s input holds that the API shows as `***` (strings, and numbers as written); none,
 * cheaply, when nothing in its input is masked (shownTaskInput answers the same object then).
 */
export function maskedInputValues(task: TaskInputOf, execution: WorkflowExecution): string[] {
  const shown = shownTaskInput(task, execution);
  if (shown === task.inputData) return [];
  const values = maskedTexts(task.inputData, shown);
  // The parts of a text its template wrote a masked value into ("SSN ***" of "SSN 123-45-6789"): placed by the template.
  const runsAs = instanceTask(execution.definition, task);
  const parts = runsAs === undefined ? [] : templateMaskedParts(taskInputTemplate(runsAs), task.inputData, maskedKeysOf(execution.definition));
  return parts.length === 0 ? values : [...new Set([...values, ...parts])];
}

/**
 * The text of the values of a task's `output` that the API shows as `***` (by key: see masking.ts); none, cheaply, when
 * nothing in it is masked.
 */
export function maskedOutputValues(output: JsonObject, execution: WorkflowExecution): string[] {
  return maskedTexts(output, masked(output, maskedKeysOf(execution.definition)));
}

/**
 * The text of the masked values a script or condition of `task` read: those of its input, and those `read` (what else
 * it was given: the tasks a JOIN script joins, the outputs a DO_WHILE's condition reads, an HTTP_POLL's response) holds
 * under a masked key. None, cheaply, when nothing in either is masked.
 */
export function maskedValuesRead(task: TaskInputOf, read: JsonObject, execution: WorkflowExecution): string[] {
  const values = maskedInputValues(task, execution);
  const others = maskedOutputValues(read, execution);
  return values.length === 0 ? others : others.length === 0 ? values : [...values, ...others];
}

/**
 * The text of the values of `real` that `shown` (`real` as the API shows it, see masking.ts) has as `***`: strings,
 * and numbers as written; none, cheaply, when `shown` is `real` itself (nothing masked). Not the parts of a text shown
 * with `***` in it (a template wrote a masked value into it): {@link maskedInputValues} takes those from the template.
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
 * characters, `string ("abcdefghij...)`, with no closing quote), and each quoted fragment that is part of one of them,
 * shares four characters in a row with one, or had one replaced in it made `'***'`: QuickJS quotes the token it stopped
 * at, which may be only the start of a value (`'abc'` of `abc-def`) or start before it (`'xabc'`),
 * and replacing whole values cannot catch either. Linear in the reason's length plus the values' total length: each
 * rule reads the values through a suffix automaton of (part of) the reason.
 */
export function reasonMaskedOf(whole: string, values: readonly string[]): string {
  // cutText: a cut between the two halves of a surrogate pair would leave half a character, which UTF-8 cannot store.
  const reason = whole.length > MAX_SCRUBBED_REASON_LENGTH ? cutText(whole, MAX_SCRUBBED_REASON_LENGTH) + CUT_MARK : whole;
  if (values.length === 0) return reason;
  const forms = new Set<string>();
  for (const value of values) {
    if (value.length < MIN_REPLACED_LENGTH) continue;
    forms.add(value);
    forms.add(JSON.stringify(value).slice(1, -1));
  }
  let masked = forms.size === 0 ? reason : occurrencesMasked(reason, forms);
  if (masked.includes(CUT_MARK)) masked = cutStartsMasked(masked, valueForms(values));
  return quotedPartsMasked(masked, values);
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
 * `text` with every place one of `forms` occurs made `***`: occurrences that overlap (a value that holds another, or
 * two that share text) go as one, those side by side as one each. For each end in `text`, the longest form ending
 * there (an automaton of `text`, each form read through it once) covers every shorter one ending there.
 */
function occurrencesMasked(text: string, forms: Iterable<string>): string {
  const automaton = new SuffixAutomaton(unitsOf(text));
  const marked = new Int32Array(automaton.size);
  for (const form of forms) {
    if (form.length > text.length) continue;
    const state = automaton.stateOf(form);
    if (state !== -1 && form.length > marked[state]!) marked[state] = form.length;
  }
  // Spans [start, end) to mask, in order, those that overlap merged.
  const spans: [number, number][] = [];
  longestMarkedEnding(automaton, marked).forEach((length, last) => {
    if (length === 0) return;
    let start = last + 1 - length;
    while (spans.length > 0 && spans[spans.length - 1]![1] > start) start = Math.min(start, spans.pop()![0]);
    spans.push([start, last + 1]);
  });
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of spans) {
    parts.push(text.slice(from, start), MASKED_SECRET);
    from = end;
  }
  parts.push(text.slice(from));
  return parts.join("");
}

/**
 * `text` with the text just before each {@link CUT_MARK} that is the start of one of `forms` made `***` (the longest
 * such, so "Bearer abc..." of a value "abcdef" keeps "Bearer "), looking no further back than the previous mark. The
 * text's parts between marks, apart, make one automaton; each form's starts are read through it once.
 */
function cutStartsMasked(text: string, forms: readonly string[]): string {
  const parts = text.split(CUT_MARK);
  const units: number[] = [];
  /** Where each part but the last ends in `units` (-1: an empty first part). */
  const partEnds: number[] = [];
  parts.forEach((part, index) => {
    if (index > 0) units.push(SEPARATOR);
    for (let at = 0; at < part.length; at++) units.push(part.charCodeAt(at));
    partEnds.push(units.length - 1);
  });
  const automaton = new SuffixAutomaton(units);
  const marked = new Int32Array(automaton.size);
  for (const form of forms) {
    // No start of a form holds a separator: what is read stays within a part.
    let state = 0;
    for (let length = 1; length <= form.length; length++) {
      const reached = automaton.next[state]!.get(form.charCodeAt(length - 1));
      if (reached === undefined) break;
      state = reached;
      if (length > marked[state]!) marked[state] = length;
    }
  }
  const ending = longestMarkedEnding(automaton, marked);
  return parts
    .map((part, index) => {
      if (index === parts.length - 1) return part;
      const end = partEnds[index]!;
      const cut = end === -1 || units[end] === SEPARATOR ? 0 : ending[end]!;
      return (cut === 0 ? part : part.slice(0, part.length - cut) + MASKED_SECRET) + CUT_MARK;
    })
    .join("");
}

/**
 * `text` with each quoted fragment made `***` whole that is part of one of `values`, shares {@link MIN_REPLACED_LENGTH}
 * characters in a row with one (a token that starts before the value, `'xzq7token'` of a script that glued "x" to a
 * value "zq7token-of-mine", is neither part of it nor holds it whole), or that holds `***` (one a shorter value was
 * replaced in, `'***_key'` of a token 'admin_key' and a value "admin", is no longer text a value holds, yet what is left
 * of it may be part of a longer one). The fragments, apart, make one automaton, and each value is read through it once.
 */
function quotedPartsMasked(text: string, values: readonly string[]): string {
  const looked: string[] = [];
  for (const [, single, double] of text.matchAll(QUOTED)) {
    const fragment = single ?? double ?? "";
    if (!fragment.includes(MASKED_SECRET)) looked.push(fragment);
  }
  const sharesWithValue = sharingWithValues(looked, values);
  return text.replace(QUOTED, (quoted: string, single: string | undefined, double: string | undefined) => {
    const fragment = single ?? double ?? "";
    if (fragment === MASKED_SECRET) return quoted;
    if (!fragment.includes(MASKED_SECRET) && !sharesWithValue(fragment)) return quoted;
    return single !== undefined ? `'${MASKED_SECRET}'` : `"${MASKED_SECRET}"`;
  });
}

/**
 * Whether a text of `fragments` is part of one of `values` or shares {@link MIN_REPLACED_LENGTH} characters in a row with
 * one: none read when there are no fragments. For each end in the fragment, the longest of its texts ending there that
 * a value holds is the nearest state on its links' path that a value reached (see lengthsFoundIn).
 */
function sharingWithValues(fragments: readonly string[], values: readonly string[]): (fragment: string) => boolean {
  if (fragments.length === 0) return () => false;
  const automaton = new SuffixAutomaton(separated(fragments));
  const found = lengthsFoundIn(automaton, values);
  const nearest = new Int32Array(automaton.size);
  for (const state of automaton.byLength()) {
    const link = automaton.link[state]!;
    nearest[state] = found[state]! > 0 || link === -1 ? found[state]! : nearest[link]!;
  }
  return (fragment) => {
    let state = 0;
    for (let at = 0; at < fragment.length; at++) {
      state = automaton.next[state]!.get(fragment.charCodeAt(at))!;
      const shared = Math.min(nearest[state]!, at + 1);
      if (shared >= MIN_REPLACED_LENGTH || shared === fragment.length) return true;
    }
    return false;
  };
}

/** The code units of `texts`, one after another, each pair apart by a {@link SEPARATOR}. */
function separated(texts: readonly string[]): number[] {
  const units: number[] = [];
  texts.forEach((text, index) => {
    if (index > 0) units.push(SEPARATOR);
    for (let at = 0; at < text.length; at++) units.push(text.charCodeAt(at));
  });
  return units;
}

/**
 * `task` (as a start ended it) with its reasonForIncompletion and its `output.error` scrubbed of the masked values of
 * its input and cut (see {@link reasonMaskedOf}); the same object when it has no reason, or neither changed (its input
 * holds nothing masked and both are short).
 */
export function withReasonMasked(task: TaskExecution, execution: WorkflowExecution): TaskExecution {
  if (task.reasonForIncompletion === undefined) return task;
  const values = maskedInputValues(task, execution);
  const reasonForIncompletion = reasonMaskedOf(task.reasonForIncompletion, values);
  const error = task.outputData["error"];
  // The error is most often the reason itself: scrubbed once.
  const errorMasked = error === task.reasonForIncompletion ? reasonForIncompletion : typeof error === "string" ? reasonMaskedOf(error, values) : undefined;
  const outputData = errorMasked === undefined || errorMasked === error ? task.outputData : { ...task.outputData, error: errorMasked };
  return reasonForIncompletion === task.reasonForIncompletion && outputData === task.outputData ? task : { ...task, reasonForIncompletion, outputData };
}
