// jsonBytesWithin against what it stands for, JSON.stringify written out and UTF-8 encoded, over random values: strings of
// any UTF-16 units (lone surrogates, which JSON.stringify writes \udxxx since ES2019; U+2028/2029; control characters,
// short-escaped or \u00XX; quotes and backslashes), every kind of double (-0, 1e21, NaN, the infinities), undefined in
// arrays (null) and in objects (left out), sparse arrays, shared references, and any cap.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonBytesWithin } from "../../src/engine/json-bytes";

const utf8 = new TextEncoder();

/** The UTF-8 bytes of `value` as JSON.stringify writes it. */
function writtenBytes(value: unknown): number {
  return utf8.encode(JSON.stringify(value)).length;
}

/** One UTF-16 unit, any, with those JSON writes specially more often than chance would draw them. */
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
  fc.constantFrom("\"", "\\", "\n", "\t", "\b", "\f", "\r", "\u0000", "\u001f", "\u007f", "\u2028", "\u2029", "\ud800", "\udbff", "\udc00", "\udfff", "😀", "é", "€"),
  fc.constantFrom("a", " ", "~"),
);

const text = fc.string({ unit, maxLength: 12 });

const number = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(0, -0, 1e21, 1e-7, -1e21, 5e-324, Number.MAX_VALUE, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY));

/** Values as the engine holds them, with what JSON.stringify leaves out or writes null for among them. */
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    text,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.sparseArray(tie("value"), { maxLength: 5 }),
    fc.dictionary(text, tie("value"), { maxKeys: 5 }),
    // The same value written twice: each reference is counted where it appears.
    tie("value").map((shared) => [shared, { again: shared }]),
  ),
}));

describe("jsonBytesWithin", () => {
  it("is the UTF-8 length of JSON.stringify's text, whatever the value", () => {
    fc.assert(
      fc.property(value, (generated) => {
        // Wrapped: undefined alone is no JSON text.
        const wrapped = { v: generated };
        expect(jsonBytesWithin(wrapped, Number.POSITIVE_INFINITY)).toBe(writtenBytes(wrapped));
      }),
      { numRuns: 2_000 },
    );
  });

  it("is exact at or under its cap, and over the cap (where it stopped) past it", () => {
    fc.assert(
      fc.property(value, fc.nat({ max: 200 }), (generated, cap) => {
        const wrapped = [generated];
        const exact = writtenBytes(wrapped);
        const counted = jsonBytesWithin(wrapped, cap);
        if (exact <= cap) expect(counted).toBe(exact);
        else expect(counted).toBeGreaterThan(cap);
      }),
      { numRuns: 2_000 },
    );
  });
});
