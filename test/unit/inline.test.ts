import { inlineTask } from "@io-orkes/conductor-javascript";
import { describe, expect, it } from "vitest";
import { DEFAULT_ENGINE_CONFIG, type DecideEnv } from "../../src/engine/config";
import { createExecution, nextDeadline } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import variant from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant } from "quickjs-emscripten-core";
import { quickJsScriptRunner } from "../../src/actors/scripts/quickjs-runner";
import type { JsonObject, JsonValue, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { planOf } from "../../src/engine/plan";
import { definitionScripts } from "../../src/engine/definition/scripts";
import { costlyScriptsEnv, env, registrationErrors, startedWith } from "./engine-env";
import { scriptRunner } from "./script-runner";

describe("the QuickJS script runner", () => {
  it("binds $ to the input and answers the script's completion value as JSON", () => {
    expect(scriptRunner.run("$.a + $.b", { a: 2, b: 40 })).toEqual({ ok: true, value: 42 });
    expect(scriptRunner.run("function e() { return { sum: $.xs.reduce((s, x) => s + x, 0), n: $.xs.length }; } e();", { xs: [1, 2, 3] })).toEqual({
      ok: true,
      value: { sum: 6, n: 3 },
    });
    expect(scriptRunner.run("(function () { return $.name.toUpperCase() + '!'; })()", { name: "ada" })).toEqual({ ok: true, value: "ADA!" });
    // JavaScript's own conversions, which the old SWITCH subset did not make.
    expect(scriptRunner.run("$.n == '5' && $.s > 3", { n: 5, s: "10" })).toEqual({ ok: true, value: true });
    // A script that changes $ changes its own copy, as Conductor's evaluators copy the input: the task's input stays.
    const input = { items: [1, 2], order: { id: "o1" } };
    expect(scriptRunner.run("$.items.push(3); $.order.id = 'changed'; delete $.order; $.items.length", input)).toEqual({ ok: true, value: 3 });
    expect(input).toEqual({ items: [1, 2], order: { id: "o1" } });
  });

  it("runs scripts written for Conductor's engines that log (GraalJS's console, Nashorn's print) or convert lists (Java.from)", () => {
    expect(scriptRunner.run("console.log('checking', $.n); console.error('x'); $.n * 2", { n: 21 })).toMatchObject({ ok: true, value: 42 });
    expect(scriptRunner.run("print('hi'); Java.from($.items).map(function (item) { return item.id; })", { items: [{ id: "a" }, { id: "b" }] })).toEqual({ ok: true, value: ["a", "b"] });
  });

  it("fails a script that asks for a Java class (Nashorn's Java.type) saying why, where it read 'TypeError: not a function'", () => {
    const script = "var ArrayList = Java.type('java.util.ArrayList');\nvar list = new ArrayList();\nlist.add($.n);\nlist.size()";
    expect(scriptRunner.run(script, { n: 1 })).toEqual({
      ok: false,
      error: "TypeError: Java.type('java.util.ArrayList') is not available: scripts run in a JavaScript sandbox, with no Java classes (at line 1)",
    });
  });

  it("keeps what a script writes to its console, as Conductor's ConsoleBridge does ([Log] \"text\"), bounded per run; a script that does not log has none", () => {
    // conductor-oss ScriptEvaluator.eval(script, input, ConsoleBridge): each call a TaskExecLog line `[Level] "message"`.
    expect(scriptRunner.run("console.log('checking', $.n, { a: [1] }); console.info($.n); console.warn(null); console.error('x'); console.debug(1n); $.n * 2", { n: 21 })).toEqual({
      ok: true,
      value: 42,
      logs: ['[Log] "checking 21 {"a":[1]}"', '[Info] "21"', '[Warn] "null"', '[Error] "x"', '[Debug] "1"'],
    });
    expect(scriptRunner.run("$.n * 2", { n: 21 })).toEqual({ ok: true, value: 42 });
    // Kept when the script then fails, thrown or stopped by its budget: what it logged says how it got there.
    expect(scriptRunner.run("console.log('before'); throw new Error('late')", {})).toEqual({ ok: false, error: "Error: late", logs: ['[Log] "before"'] });
    expect(scriptRunner.run("console.log('looping'); for (;;) {}", {})).toMatchObject({ ok: false, stopped: true, logs: ['[Log] "looping"'] });
    // Bounded: its first 100 lines, then a line saying how many were left out; a long line is cut.
    const many = scriptRunner.run("for (let i = 0; i < 130; i++) console.log('line ' + i); 1", {});
    expect(many.logs).toHaveLength(101);
    expect(many.logs?.[99]).toBe('[Log] "line 99"');
    expect(many.logs?.[100]).toMatch(/^\[Log\] "30 more console lines were left out/);
    const long = scriptRunner.run("console.log('x'.repeat(5000)); 1", {});
    expect(long.logs?.[0]).toBe(`[Log] "${"x".repeat(2048)}…"`);
    const large = scriptRunner.run("for (let i = 0; i < 40; i++) console.log('y'.repeat(2000)); 1", {});
    expect(large.logs).toHaveLength(18);
    expect(large.logs?.[17]).toMatch(/^\[Log\] "23 more console lines were left out/);
    // The script cannot reach the lines but through the console, nor stop them being read by replacing the builtins.
    expect(scriptRunner.run("console.log('kept'); JSON.stringify = null; String.prototype.slice = null; console.log({ b: 2 }); Object.keys(console)", {})).toEqual({
      ok: true,
      value: ["log", "info", "warn", "error", "debug", "trace"],
      logs: ['[Log] "kept"', '[Log] "{"b":2}"'],
    });
  });

  it("reads a script's console lines as data only: a count or getter the script puts on the prototypes forges no 'left out' line", () => {
    // The host reads the lines' `dropped` after the run: looked up on Array.prototype or Object.prototype, it was the script's.
    expect(scriptRunner.run("console.log('a'); Array.prototype.dropped = 7; 1", {})).toEqual({ ok: true, value: 1, logs: ['[Log] "a"'] });
    expect(scriptRunner.run("console.log('a'); Object.defineProperty(Object.prototype, 'dropped', { get() { return 3; } }); for (;;) {}", {})).toEqual({
      ok: false,
      error: expect.stringMatching(/was stopped/) as unknown as string,
      stopped: true,
      logs: ['[Log] "a"'],
    });
    // A real count is still told.
    expect(scriptRunner.run("Array.prototype.dropped = 7; for (let i = 0; i < 102; i++) console.log(i); 1", {}).logs?.[100]).toMatch(/^\[Log\] "2 more console lines were left out/);
  });

  it("keeps a run's console bounds when writing an argument logs again (a toJSON that calls console.log)", () => {
    // Each nested call passed the bounds' check before any of them had written its line: 41 lines of 2,000 characters
    // were all kept (82 KB, and up to 100 lines of 2 KiB the same way), past the 32 KiB a run may log.
    const nested = scriptRunner.run("let n = 0; const o = { toJSON() { if (n++ < 40) console.log(o); return 'y'.repeat(2000); } }; console.log(o); 1", {});
    expect(nested.logs).toHaveLength(18);
    expect(nested.logs?.[16]).toBe(`[Log] "\"${"y".repeat(2000)}\""`);
    expect(nested.logs?.[17]).toMatch(/^\[Log\] "24 more console lines were left out/);
  });

  it("answers Java collection methods on $'s lists and maps, as Conductor's $ (a Java Map) does: its own test calls $.list.get(i)", () => {
    // Conductor's test-harness do_while_with_decision_task.json.
    expect(scriptRunner.run("function getElement() { return $.list.get($.iterator - 1); } getElement();", { list: [3, -1, 5], iterator: 2 })).toEqual({ ok: true, value: -1 });
    const input = { list: [1, 2], map: { a: 1, b: null }, own: { get: "data", size: 7 }, empty: [] };
    expect(
      scriptRunner.run(
        "[$.list.size(), $.list.isEmpty(), $.empty.isEmpty(), $.list.contains(2), $.map.get('a'), $.map.get('zz'), $.map.containsKey('b'), $.map.keySet(), $.map.size(), $.own.get, $.own.size]",
        input,
      ),
    ).toEqual({ ok: true, value: [2, false, true, true, 1, null, true, ["a", "b"], 2, "data", 7] });
    // A Java Map's keySet() and values() are collections answering size() and contains(x); getOrDefault(k, d).
    expect(
      scriptRunner.run("[$.map.keySet().size(), $.map.keySet().contains('b'), $.map.values().size(), $.map.values().contains(1), $.map.getOrDefault('zz', 'none'), $.map.getOrDefault('a', 0)]", input),
    ).toEqual({ ok: true, value: [2, true, 2, true, "none", 1] });
    // Object.values(x) is the language's own: $ is parsed plainly, as for a script that calls none; a field named
    // Object is data like any other.
    expect(scriptRunner.run("[Object.values($.map), Object.getPrototypeOf($.map) === Object.prototype]", input)).toEqual({ ok: true, value: [[1, null], true] });
    expect(scriptRunner.run("var v = Object .values($.map);\nObject.getPrototypeOf($.map) === Object.prototype", input)).toEqual({ ok: true, value: true });
    expect(scriptRunner.run("$.Object.values()", { Object: { a: 1 } })).toEqual({ ok: true, value: [1] });
    // Nothing of the data changes: its keys, its JSON, and what the script returns of it.
    expect(scriptRunner.run("$.list.size(); [Object.keys($.map), JSON.stringify($), Array.isArray($.list), $]", input)).toEqual({
      ok: true,
      value: [["a", "b"], JSON.stringify(input), true, input],
    });
  });

  it("answers null for undefined, functions and symbols, and JSON's own forms for dates and NaN", () => {
    expect(scriptRunner.run("undefined", {})).toEqual({ ok: true, value: null });
    expect(scriptRunner.run("var x = 1;", {})).toEqual({ ok: true, value: null });
    expect(scriptRunner.run("(() => 1)", {})).toEqual({ ok: true, value: null });
    expect(scriptRunner.run("Symbol('s')", {})).toEqual({ ok: true, value: null });
    expect(scriptRunner.run("NaN", {})).toEqual({ ok: true, value: null });
    expect(scriptRunner.run("new Date(0)", {})).toEqual({ ok: true, value: "1970-01-01T00:00:00.000Z" });
    expect(scriptRunner.run("({ a: undefined, b: [undefined] })", {})).toEqual({ ok: true, value: { b: [null] } });
  });

  it("answers a BigInt in the result, at any depth, as a JSON number, as Conductor's GraalJS result reads one (an interop number: an int, a long or an exact double)", () => {
    expect(scriptRunner.run("10n", {})).toEqual({ ok: true, value: 10 });
    expect(scriptRunner.run("({ total: [BigInt($.n) * 3n], neg: -(2n ** 62n), obj: Object(3n) })", { n: 7 })).toEqual({ ok: true, value: { total: [21], neg: -(2 ** 62), obj: 3 } });
    expect(scriptRunner.run("new Map([['a', 0x1fn]])", {})).toEqual({ ok: true, value: { a: 31 } });
    // Beyond a Java long, when a double holds it exactly (2^70); otherwise refused, as before (Conductor loses it as {}).
    expect(scriptRunner.run("2n ** 70n", {})).toEqual({ ok: true, value: 2 ** 70 });
    expect(scriptRunner.run("2n ** 64n + 1n", {})).toEqual({ ok: false, error: "The script's result is not JSON: TypeError: a BigInt no JSON number holds exactly (18446744073709551617n)" });
    // The script's own toJSON on BigInt's prototype does not change how its result is read; a frozen prototype keeps it refused.
    expect(scriptRunner.run("BigInt.prototype.toJSON = () => 'x'; 5n", {})).toEqual({ ok: true, value: 5 });
    expect(scriptRunner.run("Object.freeze(BigInt.prototype); 5n", {})).toMatchObject({ ok: false, error: expect.stringMatching(/^The script's result is not JSON: TypeError/) });
  });

  it("answers a typed array in the result, at any depth, as a list of its elements, as Conductor's ScriptEvaluator reads one (GraalJS: array elements)", () => {
    expect(scriptRunner.run("new Uint8Array([1, 2, 255])", {})).toEqual({ ok: true, value: [1, 2, 255] });
    expect(scriptRunner.run("({ bytes: [Int16Array.of(-2, 3)], f: new Float64Array([0.5, NaN]), empty: new Uint8ClampedArray(0) })", {})).toEqual({ ok: true, value: { bytes: [[-2, 3]], f: [0.5, null], empty: [] } });
    // A view of part of a buffer is its elements alone; a BigInt64Array's are numbers, as any BigInt in the result.
    expect(scriptRunner.run("new Uint16Array(new Uint16Array([9, 8, 7, 6]).buffer, 2, 2)", {})).toEqual({ ok: true, value: [8, 7] });
    expect(scriptRunner.run("BigInt64Array.of(5n, -1n)", {})).toEqual({ ok: true, value: [5, -1] });
    // An ArrayBuffer and a DataView have no elements (GraalJS: no members either): {}, as before; so is an object that
    // only inherits a typed array's prototype. Inside the script JSON.stringify stays the language's own.
    expect(scriptRunner.run("[new ArrayBuffer(2), new DataView(new ArrayBuffer(2)), Object.create(Uint8Array.prototype)]", {})).toEqual({ ok: true, value: [{}, {}, {}] });
    expect(scriptRunner.run("JSON.stringify(new Uint8Array([1]))", {})).toEqual({ ok: true, value: '{"0":1}' });
    // What the script put on the prototypes (its own toJSON, an index setter on Array's) leaves the elements as they are.
    expect(scriptRunner.run("Uint8Array.prototype.toJSON = () => 'x'; Object.defineProperty(Array.prototype, '0', { set() {} }); new Uint8Array([4])", {})).toEqual({ ok: true, value: [4] });
  });

  it("answers a Map in the result, at any depth, as an object of its entries, as Conductor's ScriptEvaluator reads a JavaScript Map (its hash entries)", () => {
    const tally = "const byKind = new Map(); for (const item of $.items) byKind.set(item.kind, (byKind.get(item.kind) || 0) + 1); byKind";
    expect(scriptRunner.run(tally, { items: [{ kind: "a" }, { kind: "b" }, { kind: "a" }] })).toEqual({ ok: true, value: { a: 2, b: 1 } });
    expect(scriptRunner.run("({ n: new Map([[1, [new Map([['deep', true]])]]]), same: [new Map([['k', 1]])] })", {})).toEqual({ ok: true, value: { n: { "1": [{ deep: true }] }, same: [{ k: 1 }] } });
    // A key "__proto__" is an ordinary key; a symbol key is left out, as JSON.stringify leaves out an object's.
    expect(scriptRunner.run("new Map([['__proto__', 1], [Symbol('s'), 2]])", {})).toEqual({ ok: true, value: JSON.parse('{"__proto__":1}') });
    // A Map holding itself is a cycle, refused as any; inside the script JSON.stringify stays the language's own.
    expect(scriptRunner.run("const m = new Map(); m.set('self', m); m", {})).toEqual({ ok: false, error: expect.stringContaining("not JSON") });
    expect(scriptRunner.run("JSON.stringify(new Map([['a', 1]]))", {})).toEqual({ ok: true, value: "{}" });
    // A Set has no entries of the kind: {} (as GraalJS's members of one); a script that froze Map's prototype keeps {}.
    expect(scriptRunner.run("new Set([1])", {})).toEqual({ ok: true, value: {} });
    expect(scriptRunner.run("Object.freeze(Map.prototype); [new Map([['a', 1]]), 1]", {})).toEqual({ ok: true, value: [{}, 1] });
    // What the script put on Object.prototype (a Nashorn-style get and set for every object) leaves the entries as they are.
    const javaStyle = "Object.prototype.get = function (k) { return this[k]; }; Object.prototype.set = function (k, v) { this[k] = v; };";
    expect(scriptRunner.run(`${javaStyle} ({ byKind: new Map([['a', 2]]) })`, {})).toEqual({ ok: true, value: { byKind: { a: 2 } } });
  });

  it("writes an object that only inherits Map's prototype (Object.create(Map.prototype), a Proxy around a Map) as JSON.stringify does, not failing", () => {
    // Map's methods throw on them ("Map object expected"): they have no entries, only their own properties.
    expect(scriptRunner.run("Object.create(Map.prototype)", {})).toEqual({ ok: true, value: {} });
    expect(scriptRunner.run("new Proxy(new Map([['a', 1]]), {})", {})).toEqual({ ok: true, value: {} });
    expect(scriptRunner.run("Object.assign(Object.create(Map.prototype), { a: 1 })", {})).toEqual({ ok: true, value: { a: 1 } });
    expect(scriptRunner.run("new Map([['fake', new Proxy(new Map(), {})], ['real', new Map([['k', 1]])]])", {})).toEqual({ ok: true, value: { fake: {}, real: { k: 1 } } });
    // One holding itself is still a cycle; a subclass of Map is a Map.
    expect(scriptRunner.run("const o = Object.create(Map.prototype); o.self = o; o", {})).toEqual({ ok: false, error: expect.stringContaining("not JSON") });
    expect(scriptRunner.run("class Tally extends Map {} new Tally([['a', 1]])", {})).toEqual({ ok: true, value: { a: 1 } });
  });

  it("fails, without throwing, on a thrown error, a syntax error and a result JSON cannot hold", () => {
    expect(scriptRunner.run("throw new Error('no stock')", {})).toEqual({ ok: false, error: "Error: no stock" });
    expect(scriptRunner.run("throw 'plain'", {})).toEqual({ ok: false, error: "plain" });
    // A thrown value that is no error, as its JSON (its text was "[object Object]"); one with a message, as that.
    expect(scriptRunner.run("throw { code: 'E42', field: 'sku' }", {})).toEqual({ ok: false, error: '{"code":"E42","field":"sku"}' });
    expect(scriptRunner.run("throw ['sku', 'qty']", {})).toEqual({ ok: false, error: '["sku","qty"]' });
    expect(scriptRunner.run("throw { code: 'E42', message: 'sku is required' }", {})).toEqual({ ok: false, error: "sku is required" });
    // Null is also what QuickJS throws when it runs out of memory too far to make its own error (see inline-task's
    // workerd test, whose interpreter's memory has a maximum): a script that may throw null of its own says both.
    expect(scriptRunner.run("const failure = null; throw failure", {})).toEqual({ ok: false, error: "null (the script threw null, or ran out of memory)" });
    expect(scriptRunner.run("({ toJSON() { throw null; } })", {})).toEqual({ ok: false, error: "The script's result is not JSON: null (the script threw null, or ran out of memory)" });
    expect(scriptRunner.run("$.missing.field", {})).toEqual({ ok: false, error: expect.stringContaining("TypeError") });
    expect(scriptRunner.run("1 +", {})).toEqual({ ok: false, error: expect.stringContaining("SyntaxError") });
    expect(scriptRunner.run("const o = {}; o.self = o; o", {})).toEqual({ ok: false, error: expect.stringContaining("not JSON") });
    // A BigInt made without naming it or writing one (see the BigInt test below).
    expect(scriptRunner.run("globalThis['Big' + 'Int'](10)", {})).toEqual({ ok: false, error: expect.stringContaining("not JSON") });
  });

  it("names the line an error happened on in a script of more than one line, as Conductor's ScriptEvaluator does (\"at line 3\")", () => {
    // The innermost frame of the script: inside a function a builtin called.
    const script = "(function () {\n  return $.items.map(function (item) {\n    return item.price.amount;\n  });\n})()";
    expect(scriptRunner.run(script, { items: [{}] })).toEqual({ ok: false, error: "TypeError: cannot read property 'amount' of undefined (at line 3)" });
    expect(scriptRunner.run("var total = 0;\n\nthrow new Error('no stock');", {})).toEqual({ ok: false, error: "Error: no stock (at line 3)" });
    expect(scriptRunner.syntaxError("var a = 1;\nif (a > 0 {\n  a = 2;\n}")).toMatch(/^SyntaxError: .* \(at line 2\)$/);
    expect(scriptRunner.run("var a = 1;\n\na +", {})).toEqual({ ok: false, error: expect.stringMatching(/^SyntaxError: .* \(at line 3\)$/) });
    // A one-line script's is line 1, which says nothing; a thrown value that is no Error has no line.
    expect(scriptRunner.run("throw new Error('no stock')", {})).toEqual({ ok: false, error: "Error: no stock" });
    expect(scriptRunner.run("1;\nthrow 'plain'", {})).toEqual({ ok: false, error: "plain" });
    // The line is where the error happened, not a lineNumber the script gave its error (a parser's own, say).
    expect(scriptRunner.run("var row = 57;\nthrow Object.assign(new Error('bad csv'), { lineNumber: row })", {})).toEqual({ ok: false, error: "Error: bad csv (at line 2)" });
    expect(scriptRunner.run("1;\nthrow { message: 'bad csv', lineNumber: 57 }", {})).toEqual({ ok: false, error: "bad csv" });
  });

  it("counts the work its scripts did, in script budgets: one stopped by its budget about one, a short one next to none", () => {
    const before = scriptRunner.spent!();
    expect(scriptRunner.run("while (true) {}", {})).toMatchObject({ ok: false, stopped: true });
    const stopped = scriptRunner.spent!() - before;
    expect(stopped).toBeGreaterThanOrEqual(1);
    expect(stopped).toBeLessThan(1.1);
    expect(scriptRunner.run("$.x * 2", { x: 21 })).toEqual({ ok: true, value: 42 });
    expect(scriptRunner.spent!() - before - stopped).toBeLessThan(0.1);
  });

  it("counts the JSON a script is given and gives back as work: a short script over an input at its largest about a budget, as it takes as long", () => {
    // Parsing `$` is a builtin the budget's interrupt never sees: 730 KB of it take as long as a script stopped by its budget.
    const big = Array.from({ length: 18_000 }, (_, index) => ({ k: `v${index}`, n: index, s: "abcdefghij" }));
    const before = scriptRunner.spent!();
    expect(scriptRunner.run("$.big.length", { big })).toEqual({ ok: true, value: 18_000 });
    expect(scriptRunner.spent!() - before).toBeGreaterThan(0.5);
    const afterRead = scriptRunner.spent!();
    expect(scriptRunner.run("'x'.repeat(700000)", {})).toMatchObject({ ok: true });
    expect(scriptRunner.spent!() - afterRead).toBeGreaterThan(0.5);
  });

  it("stops a script that loops forever, recurses without end or allocates without end, and runs the next one fine", () => {
    expect(scriptRunner.run("while (true) {}", {})).toEqual({ ok: false, error: expect.stringContaining("ran too long"), stopped: true });
    expect(scriptRunner.run("function f() { return f() + 1; } f()", {})).toEqual({ ok: false, error: "InternalError: stack overflow" });
    expect(scriptRunner.run("new Array(1e7).fill(1).length", {})).toEqual({ ok: false, error: "InternalError: out of memory" });
    expect(scriptRunner.run("$.x * 2", { x: 21 })).toEqual({ ok: true, value: 42 });
  });

  it("stops, as a script that ran too long, one whose result used up the budget as it was written (a getter, a large Map converted)", () => {
    const stopped = { ok: false, error: expect.stringContaining("ran too long"), stopped: true };
    expect(scriptRunner.run("({ get total() { for (;;) {} } })", {})).toEqual(stopped);
    // The script ends within its budget (450,000 iterations); converting its Map's entries then uses up the rest.
    expect(scriptRunner.run("const m = new Map(); for (let i = 0; i < 450000; i++) m.set(i, 0); m", {})).toEqual(stopped);
    expect(scriptRunner.run("$.x * 2", { x: 21 })).toEqual({ ok: true, value: 42 });
  });

  it("gives each run a Math.random of its own: runs in the same millisecond (in workerd, the same decision) drew the same numbers", () => {
    // QuickJS seeds Math.random from the clock, in milliseconds here, which workerd stands still between I/O: fifty
    // runs in a row share a millisecond many times over (in workerd, every run of a decision did).
    const drawn = Array.from({ length: 50 }, () => scriptRunner.run("[Math.random(), Math.random()]", {}));
    const values = drawn.flatMap((outcome) => (outcome.ok && Array.isArray(outcome.value) ? outcome.value : []));
    expect(values).toHaveLength(100);
    expect(new Set(values).size).toBe(100);
    for (const value of values) expect(value).toSatisfy((drawnValue) => typeof drawnValue === "number" && drawnValue >= 0 && drawnValue < 1);
    // The language's own property still: writable, not enumerable, a function named random taking no argument.
    expect(scriptRunner.run("const d = Object.getOwnPropertyDescriptor(Math, 'random'); [d.writable, d.enumerable, d.configurable, Math.random.name, Math.random.length]", {})).toEqual({
      ok: true,
      value: [true, false, true, "random", 0],
    });
  });

  it("gives a script nothing of the host: no fetch, no require, no state left by an earlier script", () => {
    expect(scriptRunner.run("typeof fetch + ',' + typeof require + ',' + typeof process + ',' + typeof globalThis.caches", {})).toEqual({
      ok: true,
      value: "undefined,undefined,undefined,undefined",
    });
    expect(scriptRunner.run("globalThis.leak = 'secret'; 1", {})).toEqual({ ok: true, value: 1 });
    expect(scriptRunner.run("typeof globalThis.leak", {})).toEqual({ ok: true, value: "undefined" });
  });

  it("serialises the result with the language's own JSON.stringify, whatever the script did to the globals", () => {
    for (const tamper of [
      "JSON.stringify = () => '{not json'",
      "JSON.stringify = () => undefined",
      "JSON.stringify = () => ({ toString() { throw new Error('x'); } })",
      "Object.defineProperty(globalThis, '__result', { get() { return 5; }, set() {} })",
      "Object.freeze(globalThis)",
    ]) {
      expect(scriptRunner.run(`${tamper}; ({ n: $.n })`, { n: 1 }), tamper).toEqual({ ok: true, value: { n: 1 } });
    }
  });

  it("fails, without throwing, when a script breaks the interpreter itself, and runs later scripts on a fresh one", async () => {
    let loads = 0;
    let loaded = 0;
    const load = async () => {
      loads++;
      const module = await newQuickJSWASMModuleFromVariant(variant);
      loaded++;
      return module;
    };
    const runner = quickJsScriptRunner(await load(), load);
    // The fresh interpreter is compiled in the background; on a busy machine that takes a while.
    const reloaded = async () => {
      for (let tries = 0; tries < 200 && loaded < loads; tries++) await new Promise((resolve) => setTimeout(resolve, 25));
      await new Promise((resolve) => setTimeout(resolve, 0));
    };
    const deep = (n: number): JsonObject => ({ a: JSON.parse("[".repeat(n) + "]".repeat(n)) as JsonValue });
    // Too deep for the host's stack, which QuickJS's own limit does not see: the host throws from inside the WebAssembly.
    expect(runner.run("1", deep(50_000))).toEqual({ ok: false, error: expect.stringContaining("broke the script interpreter"), stopped: true });
    // The rest of that decision (an immediate retry, say) does not use the suspect interpreter.
    expect(runner.run("1", {})).toEqual({ ok: false, error: expect.stringContaining("broke the script interpreter"), stopped: true });
    await reloaded();
    expect(runner.run("$.x * 2", { x: 21 })).toEqual({ ok: true, value: 42 });
    // The parser's recursion too, at registration.
    expect(runner.syntaxError("(".repeat(50_000) + ")".repeat(50_000))).toEqual(expect.stringContaining("broke the script interpreter"));
    await reloaded();
    expect(runner.syntaxError("$.a +")).toMatch(/SyntaxError/);
    // A stack overflow inside JSON.parse leaks objects, and freeing the runtime then aborts the WebAssembly.
    for (let i = 0; i < 3; i++) {
      // The reason is the overflow, not the abort that freeing the runtime then raised (an assertion in quickjs.c).
      expect(runner.run("JSON.parse('['.repeat(100000) + ']'.repeat(100000)); 1", {})).toEqual({ ok: false, error: expect.stringMatching(/^the script broke the script interpreter \(Maximum call stack size exceeded\)/), stopped: true });
      await reloaded();
      expect(runner.run("$.x * 2", { x: 21 })).toEqual({ ok: true, value: 42 });
    }
    expect(loads).toBe(6);
  });

  it("checks syntax without running anything", () => {
    expect(scriptRunner.syntaxError("while (true) {}")).toBeUndefined();
    expect(scriptRunner.syntaxError("$.a +")).toMatch(/SyntaxError/);
    expect(scriptRunner.syntaxError("function (")).toMatch(/SyntaxError/);
  });
});

const definitionOf = (tasks: WorkflowTaskDef[]): WorkflowDef => ({ name: "inline", version: 1, schemaVersion: 2, tasks });
const inline = (ref: string, inputParameters: JsonObject): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "INLINE", inputParameters });

/**
 * Decides `state` on at each moment it is due (a tick, as its alarm), until it ends or ten decisions were made: how it
 * ended, and in how many decisions, counting the one that made `state`.
 */
function tickedToEnd(state: WorkflowExecution, environment: (now: number) => DecideEnv): { state: WorkflowExecution; decisions: number } {
  let current = state;
  let decisions = 1;
  for (let now = 0; current.status === "RUNNING" && decisions < 10; decisions++) {
    now = Math.max(now, nextDeadline(current)!);
    current = decide(current, { type: "tick", liveTaskIds: new Set() }, environment(now)).state;
  }
  return { state: current, decisions };
}

const run = (tasks: WorkflowTaskDef[], input: JsonObject = {}) => startedWith("inline", tasks, input).state;

describe("INLINE in the decider", () => {
  it("completes in the start's decision with the script's value as output.result, which later tasks read", () => {
    const state = run(
      [
        inline("sum", { evaluatorType: "javascript", expression: "$.a + $.b", a: "${workflow.input.a}", b: 2 }),
        inline("twice", { evaluatorType: "graaljs", expression: "$.sum * 2", sum: "${sum.output.result}" }),
      ],
      { a: 40 },
    );
    expect(state.status).toBe("COMPLETED");
    expect(state.tasks.map((task) => [task.referenceTaskName, task.status, task.outputData])).toEqual([
      ["sum", "COMPLETED", { result: 42 }],
      ["twice", "COMPLETED", { result: 84 }],
    ]);
    expect(state.output).toEqual({ result: 84 });
  });

  it("writes what its script logged to the task's log, with its result (a taskLog effect of the same decision)", () => {
    const decision = startedWith("inline", [inline("sum", { evaluatorType: "javascript", expression: "console.log('adding', $.a); $.a + 2", a: "${workflow.input.a}" }), inline("quiet", { expression: "1" })], { a: 40 });
    const [sum, quiet] = decision.state.tasks;
    expect(sum).toMatchObject({ status: "COMPLETED", outputData: { result: 42 } });
    expect(decision.effects.filter((effect) => effect.kind === "taskLog")).toEqual([{ kind: "taskLog", taskId: sum!.taskId, lines: ['[Log] "adding 40"'], createdTime: 1_000 }]);
    expect(quiet).toMatchObject({ status: "COMPLETED" });
    // A LAMBDA's script logs the same way; a failed one keeps its lines too.
    const failed = startedWith("inline", [{ name: "l", taskReferenceName: "l", type: "LAMBDA", inputParameters: { scriptExpression: "console.error('no sku'); throw new Error('sku')" } }]);
    expect(failed.effects.filter((effect) => effect.kind === "taskLog")).toEqual([{ kind: "taskLog", taskId: failed.state.tasks[0]!.taskId, lines: ['[Error] "no sku"'], createdTime: 1_000 }]);
  });

  it("takes the named input parameter with value-param, null when it is absent", () => {
    const state = run([inline("pick", { evaluatorType: "value-param", expression: "chosen", chosen: { id: 7 } }), inline("none", { evaluatorType: "value-param", expression: "nope" })]);
    expect(state.tasks.map((task) => task.outputData)).toEqual([{ result: { id: 7 } }, { result: null }]);
  });

  it("fails the task for good and the workflow with the script's error as reason and output.error, as Conductor's Inline ends its evaluator's error", () => {
    for (const expression of ["throw new Error('price missing')", "$.a +"]) {
      const state = run([{ ...inline("bad", { evaluatorType: "javascript", expression: "${workflow.input.script}" }), retryCount: 2 }], { script: expression });
      expect(state.status).toBe("FAILED");
      // No retry: the same script on the same input fails the same way.
      expect(state.tasks).toHaveLength(1);
      expect(state.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringMatching(/^The INLINE script failed: (Error: price missing|SyntaxError)/) });
    }
    const state = run([inline("bad", { evaluatorType: "javascript", expression: "throw new Error('price missing')" })]);
    expect(state.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "The INLINE script failed: Error: price missing", outputData: { error: "The INLINE script failed: Error: price missing" } });
  });

  it("is retried as its retry settings say when its budget stopped it, as Conductor retries its evaluator's timeout", () => {
    const task = { ...inline("slow", { evaluatorType: "javascript", expression: "for (;;) {}" }), retryCount: 1 };
    const state = run([task]);
    // No delay: the retry runs in the same decision, and fails the same way.
    expect(state.tasks.map((t) => [t.status, t.retryCount])).toEqual([
      ["FAILED", 0],
      ["FAILED", 1],
    ]);
    expect(state.tasks[0]?.reasonForIncompletion).toMatch(/ran too long/);
    expect(state.status).toBe("FAILED");
  });

  it("fails for good, without retries, when its expression or evaluatorType resolves to nothing usable as it runs (Conductor's terminal error)", () => {
    const fromInput = (ref: string, parameters: JsonObject) => ({ ...inline(ref, parameters), retryCount: 2 });
    for (const [parameters, reason] of [
      [{ evaluatorType: "javascript", expression: "${workflow.input.none}" }, "INLINE inputParameters.expression must be a non-empty string"],
      [{ evaluatorType: "${workflow.input.kind}", expression: "1" }, "INLINE inputParameters.evaluatorType must be one of javascript, graaljs, value-param"],
    ] as const) {
      const state = run([fromInput("misconfigured", parameters)], { kind: "ruby" });
      expect(state.status).toBe("FAILED");
      expect(state.tasks.map((t) => [t.status, t.reasonForIncompletion])).toEqual([["FAILED_WITH_TERMINAL_ERROR", reason]]);
    }
  });

  it("starts the scripts of a wide fork over several decisions once one decision has done ten script budgets of work, rather than all in one", () => {
    // Each run here counts as a whole budget (a script near its limit, some 130 ms): 40 of them in one decision were
    // 5 s of CPU, and a dynamic fork of 1,000 minutes, past what a Durable Object may take for one request.
    const { env: costlyEnv, runs } = costlyScriptsEnv();
    const branches = Array.from({ length: 40 }, (_, index) => [inline(`add${index}`, { evaluatorType: "javascript", expression: `${index} + 1` })]);
    const fork: WorkflowTaskDef = { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: branches };
    const join: WorkflowTaskDef = { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: branches.map((_, index) => `add${index}`) };
    const definition = { name: "inline", version: 1, schemaVersion: 2, tasks: [fork, join] };
    const state = decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, costlyEnv(1_000)).state;
    expect(runs()).toBe(10);
    // The others wait, scheduled for a moment later, which the alarm is set for.
    expect(state.tasks.filter((task) => task.taskType === "INLINE" && task.status === "SCHEDULED")).toHaveLength(30);
    expect(nextDeadline(state)).toBe(1_001);
    const { state: ended, decisions } = tickedToEnd(state, costlyEnv);
    expect(ended.status).toBe("COMPLETED");
    expect(decisions).toBe(4);
    expect(ended.tasks.find((task) => task.referenceTaskName === "add39")).toMatchObject({ status: "COMPLETED", outputData: { result: 40 } });
  });

  it("starts the CONDITIONAL_FORKs of a wide fork, whose branch conditions are scripts, over several decisions too", () => {
    // Each condition counts as a whole budget (see the case above): 40 forks of them were 40 budgets in one decision.
    const { env: costlyEnv, runs } = costlyScriptsEnv();
    const branches = Array.from({ length: 40 }, (_, index) => [
      { name: `c${index}`, taskReferenceName: `c${index}`, type: "CONDITIONAL_FORK", inputParameters: {}, conditionalBranches: [{ condition: { evaluatorType: "javascript", expression: "true" }, tasks: [inline(`a${index}`, { evaluatorType: "value-param", expression: "x", x: 1 })] }] },
      { name: `c${index}_join`, taskReferenceName: `c${index}_join`, type: "JOIN", joinOn: [] },
    ] satisfies WorkflowTaskDef[]);
    const fork: WorkflowTaskDef = { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: branches };
    const join: WorkflowTaskDef = { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: branches.map((_, index) => `c${index}_join`) };
    const definition = { name: "forks", version: 1, schemaVersion: 2, tasks: [fork, join] };
    const state = decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, costlyEnv(1_000)).state;
    expect(runs()).toBeLessThanOrEqual(11);
    expect(nextDeadline(state)).toBe(1_001);
    const { state: ended, decisions } = tickedToEnd(state, costlyEnv);
    expect(ended.status).toBe("COMPLETED");
    expect(runs()).toBe(40);
    expect(decisions).toBe(4);
  });

  it("paces a loop of short scripts over an input at its largest, which cost as much as scripts near their budget", () => {
    // 30 iterations of `$.big.length` over 730 KB were one decision of some 30 runs of 35 ms: 300 of them, 10 s.
    const big = Array.from({ length: 18_000 }, (_, index) => ({ k: `v${index}`, n: index, s: "abcdefghij" }));
    const body = inline("count", { evaluatorType: "javascript", expression: "$.big.length", big: "${workflow.input.big}" });
    const loop: WorkflowTaskDef = { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "$.loop.iteration < 30", inputParameters: { loop: "${loop.output}", keepLastN: 2 }, loopOver: [body] };
    const definition = { name: "inline", version: 1, schemaVersion: 2, tasks: [loop] };
    const state = decide(createExecution({ workflowId: "wf-1", definition, input: { big } }, 1_000), { type: "start" }, env(1_000)).state;
    expect(state.status).toBe("RUNNING");
    expect(state.tasks.find((task) => task.referenceTaskName === "loop")!.iteration).toBeLessThanOrEqual(15);
    expect(nextDeadline(state)).toBe(1_001);
  });

  it("paces immediate retries that never wait: the later ones start in later decisions instead of one decision never settling", () => {
    // 60 optional tasks failing 101 times each, no delay: about 12,000 passes, more than one decision may make.
    const failing = Array.from({ length: 60 }, (_, index) => ({
      // A LAMBDA's failing script is retried (an INLINE's is a terminal error).
      ...inline(`flaky${index}`, {}),
      type: "LAMBDA" as const,
      inputParameters: { scriptExpression: "throw new Error('down')" },
      optional: true,
      retryCount: 100,
      retryLogic: "FIXED" as const,
      retryDelaySeconds: 0,
    }));
    let state = run(failing);
    let decisions = 1;
    for (let now = 1_000; state.status === "RUNNING" && decisions < 1_000; decisions++) {
      const due = nextDeadline(state);
      expect(due, "a running execution with nothing to wait for is stuck").toBeDefined();
      now = Math.max(now, due!);
      state = decide(state, { type: "tick", liveTaskIds: new Set() }, env(now)).state;
    }
    expect(state.status).toBe("COMPLETED");
    expect(decisions).toBeGreaterThan(1);
    expect(state.tasks).toHaveLength(60 * 101);
    expect(state.tasks.filter((task) => task.status === "COMPLETED_WITH_ERRORS")).toHaveLength(60);
   }, 60_000);

  it("fails a result nested deeper than MAX_JSON_DEPTH, which walking it later would overflow the stack on", () => {
    const state = run([
      inline("deep", { evaluatorType: "javascript", expression: "let a = []; for (let i = 0; i < 1000; i++) a = [a]; a" }),
      inline("next", { evaluatorType: "javascript", expression: "1", v: "${deep.output.result}" }),
    ]);
    expect(state.status).toBe("FAILED");
    expect(state.tasks.map((task) => [task.referenceTaskName, task.status, task.reasonForIncompletion])).toEqual([
      ["deep", "FAILED", "The INLINE task's output nests objects and arrays deeper than 100 levels"],
    ]);
    expect(run([inline("ok", { evaluatorType: "javascript", expression: "let a = []; for (let i = 0; i < 90; i++) a = [a]; a" })]).status).toBe("COMPLETED");
  });

  it("fails a result over MAX_PAYLOAD_BYTES instead of storing it", () => {
    const small = { ...env(1_000), config: { ...DEFAULT_ENGINE_CONFIG, maxPayloadBytes: 1_000 } };
    const execution = createExecution({ workflowId: "wf-1", definition: definitionOf([inline("big", { evaluatorType: "javascript", expression: "'x'.repeat(5000)" })]), input: {} }, 1_000);
    const state = decide(execution, { type: "start" }, small).state;
    expect(state.tasks[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringContaining("MAX_PAYLOAD_BYTES") });
  });
});

describe("INLINE at registration", () => {
  it("accepts the official client's inlineTask", () => {
    expect(registrationErrors([inlineTask("calc", "$.a + 1"), inlineTask("calc2", "$.a + 2", "graaljs")])).toEqual([]);
  });

  it("runs javascript when evaluatorType is absent or null, as Conductor's Inline defaults it; its syntax is checked as a script's", () => {
    expect(registrationErrors([{ name: "a", taskReferenceName: "a", type: "INLINE", inputParameters: { expression: "$.a + 1", a: 1 } }])).toEqual([]);
    expect(registrationErrors([{ name: "a", taskReferenceName: "a", type: "INLINE", inputParameters: { evaluatorType: null, expression: "$.a + 1" } }])).toEqual([]);
    expect(definitionScripts(definitionOf([inline("a", { expression: "$.a +" })]))).toEqual([{ path: "tasks[0].inputParameters.expression", source: "$.a +" }]);
    const state = run([inline("plain", { expression: "$.a + 1", a: "${workflow.input.a}" }), inline("nulled", { evaluatorType: "${workflow.input.none}", expression: "$.b * 2", b: 21 })], { a: 41 });
    expect(state.status).toBe("COMPLETED");
    expect(state.tasks.map((task) => [task.status, task.outputData])).toEqual([
      ["COMPLETED", { result: 42 }],
      ["COMPLETED", { result: 42 }],
    ]);
  });

  it("refuses an unknown evaluatorType, an empty expression and secrets", () => {
    expect(registrationErrors([{ name: "a", taskReferenceName: "a", type: "INLINE", inputParameters: { evaluatorType: "", expression: "1" } }])).toEqual([
      'tasks[0].inputParameters.evaluatorType: evaluatorType must be one of javascript, graaljs, value-param, but received the string ""',
    ]);
    expect(registrationErrors([{ name: "a", taskReferenceName: "a", type: "INLINE", inputParameters: { evaluatorType: "python", expression: " " } }])).toEqual([
      'tasks[0].inputParameters.evaluatorType: evaluatorType must be one of javascript, graaljs, value-param, but received the string "python" (the python evaluator is not supported here: write the script in JavaScript)',
      'tasks[0].inputParameters.expression: expression must be a script computing the result, such as $.a + $.b, but received the string " "',
    ]);
    expect(registrationErrors([{ name: "a", taskReferenceName: "a", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "$.k", k: "${workflow.secrets.api_key}" } }])).toEqual([
      "tasks[0].inputParameters: an INLINE task must not use secrets (workflow.secrets.api_key): it runs on its stored input, where they are masked, and shows its result",
    ]);
  });

  it("lists every fixed script with its path, branches included, for the worker's syntax check", () => {
    const definition = definitionOf([
      inline("a", { evaluatorType: "javascript", expression: "$.x" }),
      inline("b", { evaluatorType: "value-param", expression: "x" }),
      inline("c", { evaluatorType: "javascript", expression: "${workflow.input.script}" }),
      {
        name: "s",
        taskReferenceName: "s",
        type: "SWITCH",
        evaluatorType: "javascript",
        expression: "$.k > 1 ? 'big' : 'small'",
        decisionCases: { big: [inline("d", { evaluatorType: "graaljs", expression: "2" })] },
        inputParameters: {},
      },
    ]);
    expect(definitionScripts(definition)).toEqual([
      { source: "$.x", path: "tasks[0].inputParameters.expression" },
      { source: "$.k > 1 ? 'big' : 'small'", path: "tasks[3].expression" },
      { source: "2", path: "tasks[3].decisionCases.big[0].inputParameters.expression" },
    ]);
    expect(planOf(definition).usesScripts).toBe(true);
    expect(planOf(definitionOf([inline("b", { evaluatorType: "value-param", expression: "x" })])).usesScripts).toBe(false);
  });
});
