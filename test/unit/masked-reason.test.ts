/**
 * masked-reason.ts's scrub, linear since it reads the masked values through suffix automata of the reason, gives what the
 * quadratic one it replaced gave (copied below as the reference, with its constants) wherever occurrences of masked
 * values do not partly overlap; where they do, it masks their union, a superset of what the old one masked.
 */
import { describe, expect, it } from "vitest";
import { templateMaskedParts, withDerivedMasked } from "../../src/engine/derived-masking";
import { maskedTexts, reasonMaskedOf } from "../../src/engine/masked-reason";

const MIN_REPLACED_LENGTH = 4;
const MAX_SCRUBBED_REASON_LENGTH = 4_096;
const MAX_FRAGMENTS_LOOKED_UP = 64;
const QUOTED = /'([^'\n]+)'|"([^"\n]+)"/g;

/** The scrub before it was made linear (masked-reason.ts at 4f256d2a..cf4f9391), the reference. */
/**
 * `reason` with each of `values` (of {@link MIN_REPLACED_LENGTH} characters or more, as written and JSON-escaped) made
 * `***`, the start of one that the message cut short before `...` made `***` (jq shows an operand's JSON cut to 11
 * characters, `string ("abcdefghij...)`, with no closing quote), and each quoted fragment that is part of one of them
 * or had one replaced in it made `'***'`: QuickJS quotes the token it stopped at, which may be only the start of a value (`'abc'` of `abc-def`),
 * and replacing whole values cannot catch either.
 */
function oldReasonMaskedOf(whole: string, values: readonly string[]): string {
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
  for (const form of [...forms].sort((a, b) => b.length - a.length)) masked = masked.split(form).join("***");
  if (masked.includes(CUT_MARK)) masked = cutStartsMasked(masked, valueForms(values));
  let lookedUp = 0;
  return masked.replace(QUOTED, (quoted: string, single: string | undefined, double: string | undefined) => {
    const fragment = single ?? double ?? "";
    if (fragment === "***") return quoted;
    // One a shorter value was replaced in ('***_key' of a token 'admin_key' and a value "admin") is no longer text a
    // value holds, yet what is left of it may be part of a longer one: it goes whole.
    if (!fragment.includes("***") && lookedUp++ < MAX_FRAGMENTS_LOOKED_UP && !values.some((value) => value.includes(fragment))) return quoted;
    return single !== undefined ? `'${"***"}'` : `"${"***"}"`;
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
    parts.push(text.slice(from, start), start < at ? "***" : "", CUT_MARK);
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

/** Reasons and the masked values of their task, as the decider, DO_WHILE, schemas and event handlers scrub them. */
const CASES: [string, string[]][] = [
  ["bad ssn 123-45-6789", ["123-45-6789"]],
  ['string ("a\\"b-cd") cannot be added', ['a"b-cd']],
  ["SyntaxError: unexpected token: 'zq7token'", ["zq7token-of-mine"]],
  ["expecting ';' at line 1", ["zq7token-of-mine", "ab"]],
  ["an abc", ["abc"]],
  ['string ("zq7token-o...) and number (1) cannot be added', ["zq7token-of-mine-0123"]],
  ['number (41111111111...) and string ("a") cannot be added', ["4111111111111111"]],
  ['object ({"card":"41...) and number (1) cannot be added', ["4111111111111111"]],
  ['Invalid path expression with result "Bearer zq7token-of-mi...', ["zq7token-of-mine-0123"]],
  ['string ("hello worl...) and number (1) cannot be added', ["zq7token-of-mine-0123"]],
  ["SyntaxError: unexpected token: 'admin_prod_key'", ["admin", "admin_prod_key-2026"]],
  ["token abcd and abcdef and abcdefgh, twice abcdabcd", ["abcd", "abcdefgh"]],
  ["nested: key-ABCDEFGH-end in 'key-ABCD'", ["ABCDEFGH", "key-ABCDEFGH-end"]],
  ['escaped "line\\nbreak" and raw line\nbreak', ["line\nbreak"]],
  ["a\u00e9t\u00e9 ùnïcødé ok", ["ùnïcødé"]],
  ["emoji 😀😀😀x here", ["😀😀😀x"]],
  ["...start of abcd... and ab... and ...", ["abcdefg", "abzz"]],
  ["dots.... and abcde.......", ["abcdefgh"]],
  ["quoted 'Bearer' and \"Bear\" and 'earer x'", ["Bearer xyz"]],
  ["'***' kept and '***_rest' masked and 'zz' kept", ["secret_rest"]],
  ["number 1234 and 12345 and 123", ["1234", "123"]],
  ["values 9876 and 98765", [String(9876), String(98765)]],
  ["TypeError: cannot read property 'x' of undefined", ["undefined-ish"]],
  ["spaces  '  ' and 'a b c d'", ["xa b c dx", "    "]],
  ['jq error (at <unknown>): object ({"_secrets":...) has no keys', ['{"_secrets":{"pin":"1234"}}']],
  ["x".repeat(4_090) + "zq7token-of-mine" + " tail".repeat(100), ["zq7token-of-mine"]],
  ["y".repeat(5_000), ["yyyyy-not-here"]],
  ["z".repeat(4_000) + " abcdabcd", ["zzzz-no", "abcd"]],
  [Array.from({ length: 60 }, (_, index) => `'w${index}'`).join(" ") + " 'of-mi'", ["zq7token-of-mine"]],
  ["no values at all 'abc'", []],
  ["empty value '' and ''x", ["", "abcd"]],
];

describe("masked-reason's linear scrub", () => {
  it("gives what the quadratic scrub it replaced gave, on each case of the table", () => {
    for (const [reason, values] of CASES) expect(reasonMaskedOf(reason, values), reason.slice(0, 80)).toBe(oldReasonMaskedOf(reason, values));
  });

  it("cuts a reason past MAX_SCRUBBED_REASON_LENGTH with no value to scrub too (a script's error may be megabytes: stored twice in the task's row)", () => {
    expect(reasonMaskedOf("e".repeat(5_000), [])).toBe(`${"e".repeat(MAX_SCRUBBED_REASON_LENGTH)}...`);
    expect(reasonMaskedOf("short", [])).toBe("short");
  });

  it("masks the union of occurrences that partly overlap, where the old one left a part of one", () => {
    // Old: "bcdef" first (longest), leaving "a" of "abcd"; now both go as one.
    expect(oldReasonMaskedOf("xx abcdef yy", ["bcdef", "abcd"])).toBe("xx a*** yy");
    expect(reasonMaskedOf("xx abcdef yy", ["bcdef", "abcd"])).toBe("xx *** yy");
    // A value that overlaps itself: "aaaaa" holds "aaaa" twice.
    expect(reasonMaskedOf("aaaaa!", ["aaaa"])).toBe("***!");
    expect(oldReasonMaskedOf("aaaaa!", ["aaaa"])).toBe("***a!");
  });
});

describe("masked-reason's quoted fragments", () => {
  it("masks a quoted fragment that shares four characters in a row with a masked value, as a token that starts before it does", () => {
    // QuickJS on JSON.parse('x' + token): neither part of the value nor holding it whole.
    expect(reasonMaskedOf("SyntaxError: unexpected token: 'xzq7token'", ["zq7token-of-mine"])).toBe("SyntaxError: unexpected token: '***'");
    expect(reasonMaskedOf('bad "ab-zq7t"', ["zq7token-of-mine"])).toBe('bad "***"');
    // Three in a row is an ordinary word's share: kept, unless the fragment is all part of the value.
    expect(reasonMaskedOf("token 'xzq7'", ["zq7token-of-mine"])).toBe("token 'xzq7'");
    expect(reasonMaskedOf("token 'zq7'", ["zq7token-of-mine"])).toBe("token '***'");
  });
});

describe("masked-reason's cut of a long reason", () => {
  it("cuts a long reason at 4,096 characters without splitting a surrogate pair", () => {
    const scrubbed = reasonMaskedOf(`${"x".repeat(4_095)}\u{1F600} tail`, ["zzzz"]);
    expect(scrubbed).toBe(`${"x".repeat(4_095)}...`);
  });
});

describe("masked parts of a text an input's template wrote", () => {
  const keys = new Set(["v", "w"]);
  /** What a reason quoting `quoted` shows, scrubbed of the masked values of an input `{msg}` its template `template` resolved to `real`. */
  const shownReason = (template: string, real: string, quoted: string) =>
    reasonMaskedOf(`bad: ${quoted}`, [...maskedTexts({ msg: real }, withDerivedMasked({ msg: template }, { msg: real }, keys)), ...templateMaskedParts({ msg: template }, { msg: real }, keys)]);

  it("takes the parts a template wrote masked values into, or the text whole when its literal text does not place them", () => {
    expect(templateMaskedParts({ msg: "SSN ${workflow.input.v} on file" }, { msg: "SSN 123-45-6789 on file" }, keys)).toEqual(["123-45-6789"]);
    expect(templateMaskedParts({ msg: "a ${workflow.input.v} b ${workflow.input.w}" }, { msg: "a 1234 b 5678" }, keys)).toEqual(["1234", "5678"]);
    // Two side by side: the whole text (its input shows *** whole).
    expect(templateMaskedParts({ msg: "${workflow.input.v}${workflow.input.w}" }, { msg: "12345678" }, keys)).toEqual(["12345678"]);
    expect(templateMaskedParts({ msg: "${workflow.input.x} and ${workflow.input.y}" }, { msg: "1234 and 5678" }, keys)).toEqual([]);
    expect(maskedTexts({ msg: "same" }, { msg: "same" })).toEqual([]);
  });

  it("places them by the template, not by the shown text's ***s, which a literal '***' or a '*' beside one misplaced", () => {
    // "a*${…}" shows "a****": placed from the shown text's first '***', the part was "*secret" and the value stayed shown.
    expect(withDerivedMasked({ msg: "a*${workflow.input.v}" }, { msg: "a*secret*" }, keys)).toEqual({ msg: "a****" });
    expect(shownReason("a*${workflow.input.v}", "a*secret*", "secret*")).toBe("bad: ***");
    // A literal "***" taken for the value's: the parts were "1234" and "5678 ***", and "5678" stayed shown.
    expect(shownReason("${workflow.input.v} *** x", "1234 5678 *** x", "1234 5678")).toBe("bad: ***");
    expect(shownReason("SSN ${workflow.input.v} on file", "SSN 123-45-6789 on file", "123-45-6789")).toBe("bad: ***");
  });
});
