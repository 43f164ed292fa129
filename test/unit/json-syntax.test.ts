import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findJsonSyntaxProblem } from "../../src/worker/http/json-syntax";

describe("findJsonSyntaxProblem", () => {
  it("finds nothing in JSON that JSON.parse takes", () => {
    for (const text of ['{"a": [1, -2.5e3, true, false, null, "x\\n\\u00e9\\"\\\\", {}], "b": {"c": []}}', " 0 ", '"s"', "[[[]]]", "\n{}\n"]) {
      expect(() => JSON.parse(text)).not.toThrow();
      expect(findJsonSyntaxProblem(text)).toBeUndefined();
    }
  });

  it.each([
    ['{"a": 1,}', 1, 9, "a comma before '}': JSON allows no trailing comma"],
    ["[1, 2,\n]", 2, 1, "a comma before ']': JSON allows no trailing comma"],
    ["{'a': 1}", 1, 2, "a single quote: JSON strings and names take double quotes"],
    ['{"a": 1 // one\n}', 1, 9, "expected ',' or '}'"],
    ['{"a": // one\n1}', 1, 7, "a comment: JSON has none"],
    ['{"a" 1}', 1, 6, "expected ':' after the property name"],
    ['{"a": 1 "b": 2}', 1, 9, "expected ',' or '}'"],
    ["[1 2]", 1, 4, "expected ',' or ']'"],
    ['{"a": [1, 2}', 1, 12, "expected ',' or ']'"],
    ['{"a": {"b": 1}', 1, 15, "the body ends before its JSON does: an unclosed '{'"],
    ['{"a": "b', 1, 7, "a string that is not closed"],
    ['{"a": "line\nbreak"}', 1, 12, "a control character (a line break, a tab) inside a string: write it escaped, as \\n or \\t"],
    ['{"a": "C:\\dir"}', 1, 10, "a backslash that starts no JSON escape (write \\\\ for a backslash)"],
    ['{"a": "\\u12"}', 1, 8, "a \\u escape without four hexadecimal digits"],
    ["{a: 1}", 1, 2, "expected a property name in double quotes"],
    ['{"a": TRUE}', 1, 7, "expected a value (an object, an array, a string in double quotes, a number, true, false or null)"],
    ["{} {}", 1, 4, "more after the end of the JSON value (two values? a missing '[' or ','?)"],
    ["", 1, 1, "the body ends before its JSON does"],
    // An empty shell variable in a hand-typed body: no comma there to blame.
    ['{"name": }', 1, 10, "a value missing after ':'"],
    ["[1,}", 1, 4, "a '}' where the '[' before it is still open (it closes with ']')"],
    ['{"a": 1,]', 1, 9, "a ']' where the '{' before it is still open (it closes with '}')"],
    ["[}", 1, 2, "a '}' where the '[' before it is still open (it closes with ']')"],
    ["}", 1, 1, "a '}' that closes nothing"],
  ])("%j: line %i, column %i: %s", (text, line, column, problem) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(findJsonSyntaxProblem(text)).toEqual({ line, column, problem });
  });

  it("reads a deeply nested text without exhausting the stack", () => {
    const text = "[".repeat(200_000) + "}";
    expect(findJsonSyntaxProblem(text)).toEqual({ line: 1, column: 200_001, problem: "a '}' where the '[' before it is still open (it closes with ']')" });
  });

  it("agrees with JSON.parse on what is JSON, for JSON texts and for those texts cut or with a character changed", () => {
    const pieces = ["{", "}", "[", "]", ",", ":", '"', "'", "\\", " ", "\n", "1", "-", "e", "t", "n", "/"];
    const mangled = fc.tuple(fc.json(), fc.nat(), fc.constantFrom(...pieces), fc.boolean()).map(([text, at, piece, cut]) => {
      const position = text.length === 0 ? 0 : at % text.length;
      return cut ? text.slice(0, position) : text.slice(0, position) + piece + text.slice(position + 1);
    });
    fc.assert(
      fc.property(fc.oneof(fc.json(), mangled), (text) => {
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        expect(findJsonSyntaxProblem(text) === undefined).toBe(parses);
      }),
      { numRuns: 2000, seed: 20261207 },
    );
  });
});
