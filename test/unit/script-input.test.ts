// How a script's input crosses into QuickJS: the runner hands `$`'s JSON in as a string value, where it was written into
// the binding code as a literal (escaped a second time, then tokenised). What a script sees must be the same either way,
// to the code unit: compared here against the literal way, over random JSON with lone surrogates, U+2028, control
// characters, quotes and backslashes in keys and texts, keys such as __proto__ and "1", -0, large and tiny numbers.
import variant from "@jitl/quickjs-wasmfile-release-sync";
import fc from "fast-check";
import { newQuickJSWASMModuleFromVariant } from "quickjs-emscripten-core";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { scriptRunner } from "./script-runner";

const quickJs = await newQuickJSWASMModuleFromVariant(variant);

/**
 * A script answering all it can see of `$`: each text as its UTF-16 code units, each number with whether it is -0, each
 * object's own keys in order (as code units) and whether its prototype is the plain one, each list's length.
 */
const DESCRIBE =
  "(function describe(value) {" +
  " if (typeof value === 'string') return ['string', Array.from({ length: value.length }, (_, i) => value.charCodeAt(i))];" +
  " if (typeof value === 'number') return ['number', String(value), Object.is(value, -0)];" +
  " if (value === null || typeof value !== 'object') return [typeof value, value];" +
  " const plain = Object.getPrototypeOf(value) === (Array.isArray(value) ? Array.prototype : Object.prototype);" +
  " return [Array.isArray(value) ? 'array' : 'object', plain, value.length ?? null," +
  "  Object.getOwnPropertyNames(value).map((key) => [Array.from({ length: key.length }, (_, i) => key.charCodeAt(i)), describe(value[key])])];" +
  "})($)";

/** What DESCRIBE answers over `input` handed in as the runner did before: a JSON text literal in the binding code. */
function describedThroughLiteral(input: JsonObject): unknown {
  const runtime = quickJs.newRuntime();
  const context = runtime.newContext();
  try {
    const bound = context.unwrapResult(context.evalCode(`globalThis.$ = JSON.parse(${JSON.stringify(JSON.stringify(input))});`));
    bound.dispose();
    const described = context.unwrapResult(context.evalCode(`JSON.stringify(${DESCRIBE})`));
    const json = context.getString(described);
    described.dispose();
    return JSON.parse(json);
  } finally {
    context.dispose();
    runtime.dispose();
  }
}

/** One UTF-16 unit, any, with those a JSON text or a string literal writes specially more often than chance would draw them. */
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
  fc.constantFrom('"', "\\", "'", "`", "${", "\n", "\r", "\u0000", "\u001f", "\u2028", "\u2029", "\ud800", "\udbff", "\udc00", "\udfff", "😀", "é", "€", "\ufeff"),
  fc.constantFrom("a", " "),
);
const text = fc.string({ unit, maxLength: 8 });
const key = fc.oneof(text, fc.constantFrom("__proto__", "constructor", "toString", "1", "01", "-0", "4294967295", "$", "__inputJson"));
const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, 2 ** 53, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, 123456789012345680000, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, -1e300),
);
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: "small" }, text, number, fc.boolean(), fc.constant(null), fc.array(tie("value"), { maxLength: 4 }), fc.dictionary(key, tie("value"), { maxKeys: 4 })),
}));
const input = fc.dictionary(key, value, { maxKeys: 5 }) as fc.Arbitrary<JsonObject>;

describe("a script's input handed to QuickJS", () => {
  it("is seen as the JSON text literal gave it, to the code unit, over random JSON", () => {
    fc.assert(
      fc.property(input, (given) => {
        expect(scriptRunner.run(DESCRIBE, given)).toEqual({ ok: true, value: describedThroughLiteral(given) });
      }),
      { numRuns: 300 },
    );
  });

  it("is seen so by a script that calls a Java collection's method too, whose lists and maps get those methods", () => {
    // `.size(` in the comment is enough for the runner to give `$` the Java methods (a prototype of its own, not plain).
    const described = (given: JsonObject) => JSON.parse(JSON.stringify(describedThroughLiteral(given)).replaceAll('"object",true', '"object",false').replaceAll('"array",true', '"array",false'));
    fc.assert(
      fc.property(input, (given) => {
        expect(scriptRunner.run(`${DESCRIBE} // $.size()`, given)).toEqual({ ok: true, value: described(given) });
      }),
      { numRuns: 100 },
    );
  });

  it("gives the script's result back as it was, and leaves nothing of the handing in the script's globals", () => {
    const given = { lone: "\ud800x\udc00", sep: "\u2028", big: 2 ** 53 + 2, negativeZero: -0, nothing: null, nested: [[{ "": [] }]], ["__proto__"]: { a: 1 } };
    expect(scriptRunner.run("$", given)).toEqual({ ok: true, value: JSON.parse(JSON.stringify(given)) });
    expect(scriptRunner.run("Object.hasOwn($, '__proto__') && Object.getPrototypeOf($) === Object.prototype && $.__proto__.a", given)).toEqual({ ok: true, value: 1 });
    expect(scriptRunner.run("[typeof __inputJson, Object.getOwnPropertyNames(globalThis).filter((name) => name.startsWith('__'))]", given)).toEqual({ ok: true, value: ["undefined", []] });
  });
});
