/**
 * The {@link ScriptRunner} over QuickJS compiled to WebAssembly: a separate JavaScript interpreter, so a script sees
 * nothing of the Worker (no fetch, no bindings, no globals but the language's own and `$`) and cannot outrun its budget.
 * Loading the WebAssembly differs between workerd and Node (see load.ts and the unit tests); this part does not.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSWASMModule } from "quickjs-emscripten-core";
import type { JsonObject, JsonValue } from "../../engine/model";
import type { ScriptOutcome, ScriptRunner } from "../../engine/scripts";
import { replaceableModule } from "./replaceable-module";

/** A script's memory budget: room for a task input at its largest (768 KiB of JSON) several times over. */
const MEMORY_LIMIT_BYTES = 32 * 1024 * 1024;
/**
 * About 1,400 nested calls: deep enough for any sane recursion, shallow enough that QuickJS stops a runaway one with
 * its own error before the host's stack, which the interpreter shares, overflows (that would leave it unusable).
 */
const MAX_STACK_BYTES = 256 * 1024;
/**
 * QuickJS calls the interrupt handler every few thousand operations (about every 5,000 iterations of a simple loop); a
 * script is stopped at this many calls, about a million loop iterations (a few hundred ms). A count, not a clock:
 * workerd's clock stands still while code runs, and the same script should fail the same way every time.
 */
export const INTERRUPT_BUDGET = 200;

/**
 * Characters of JSON a run moves in or out (its `$`, its result) that count as one interrupt-handler call of work (see
 * `ScriptRunner.spent`): parsing `$` is a builtin that never calls the handler, yet `$.big.length` over an input at its
 * largest (about 730 KB) takes as long as a script stopped by its budget (some 25 ms in Node, where a script stopped so
 * takes 5 to 300 ms by what its loop does). The characters counted are the JSON's own, as the jq runner counts them.
 * Measured so, and rounded down so that such a run counts about one budget: a loop of cheap scripts over a big input is
 * paced as one of scripts near their budget is, and a short one (`$.a + 1`) counts next to nothing more.
 */
export const DATA_CHARS_PER_INTERRUPT = 4096;

/** What a run stopped by {@link INTERRUPT_BUDGET} answers, whether the script or the writing of its result used it up. */
const STOPPED_ERROR = "The script ran too long and was stopped (a script may take about a million loop iterations)";

/** What QuickJS says when a script runs out of memory, and what a run says when QuickJS could not say it (see describeThrown). */
const OUT_OF_MEMORY_ERROR = "InternalError: out of memory";

/**
 * A `throw` that may throw null: the word a script must write to throw a value of its own (`throw x`, a generator's
 * `.throw(x)`), unless an object or a text follows it (`throw new Error(…)`, `throw 'no sku'`), which is never null.
 */
const NULLABLE_THROW = /\bthrow\b(?!\s*(?:new\b|["'`]))/;

/** The name QuickJS gives a script's text, which its errors' locations name (`script.js:3:10`). */
const SCRIPT_FILE = "script.js";

/** The first place in the script's own text an error's stack names (`    at f (script.js:3:10)`): its line. */
const SCRIPT_LOCATION = /\bscript\.js:(\d+)/;

/**
 * The line of the script an error happened on, when it has one: the innermost frame of the script in the error's stack,
 * which QuickJS writes for a syntax error (`    at script.js:2:7`) as for a runtime one (a thrown value that is no Error
 * has none). Not its `lineNumber`: QuickJS gives one to syntax errors only, and on any other error it is the script's
 * own data (a parser's `{ lineNumber: 57 }`), not where the error happened.
 */
function errorLine(dumped: object): number | undefined {
  const { stack } = dumped as { stack?: unknown };
  const found = typeof stack === "string" ? SCRIPT_LOCATION.exec(stack) : null;
  return found ? Number(found[1]) : undefined;
}

/**
 * What a script ran into when it did not complete. For a script of more than one line, with the line it happened on
 * (`TypeError: cannot read property 'id' of undefined (at line 3)`), as Conductor's ScriptEvaluator names it ("Error
 * evaluating the script `...` at line 3"): the only way to find it in a long script.
 */
function describeError(context: QuickJSContext, handle: QuickJSHandle, source?: string): string {
  const dumped: unknown = context.dump(handle);
  if (typeof dumped === "object" && dumped !== null) {
    const { name, message } = dumped as { name?: unknown; message?: unknown };
    if (typeof message === "string") {
      const described = typeof name === "string" && name !== "" ? `${name}: ${message}` : message;
      const line = source !== undefined && source.includes("\n") ? errorLine(dumped) : undefined;
      return line === undefined ? described : `${described} (at line ${line})`;
    }
    // A thrown value that is no error and has no message (`throw {code: 'E42'}`, `throw ['a', 'b']`) as its JSON,
    // where its text was "[object Object]" or "a,b".
    return JSON.stringify(dumped);
  }
  return String(dumped);
}

/**
 * What a script (or the writing of its result, `lineSource` then absent) ran into, as {@link describeError} says it,
 * but for null. QuickJS throws null when it runs out of memory so completely that it cannot make its own "out of memory"
 * error (quickjs.c, JS_ThrowError2: "out of memory: throw JS_NULL to avoid recursing"), which the interpreter's memory
 * at its largest (see load.ts) makes the usual end of a script that allocates without end in small pieces (a list of
 * objects); and writing that null out may fail as well, leaving "". A script whose text has no `throw` that may throw
 * null (see {@link NULLABLE_THROW}) threw none of its own, so that is the out of memory it is; one that has may have
 * done either. Null is told apart first, as that allocates nothing in a memory still full.
 */
function describeThrown(context: QuickJSContext, handle: QuickJSHandle, source: string, lineSource?: string): string {
  if (!context.sameValue(handle, context.null)) return describeError(context, handle, lineSource);
  return NULLABLE_THROW.test(source) ? "null (the script threw null, or ran out of memory)" : OUT_OF_MEMORY_ERROR;
}

/** What a run or check answers when the interpreter broke: the host's own error, not the script's. */
function brokenOutcome(error: unknown): string {
  return `the script broke the script interpreter (${error instanceof Error ? error.message : String(error)}); it is being replaced`;
}

/**
 * Creates a runner over a loaded QuickJS module; each run gets a fresh runtime, so no state carries over.
 *
 * QuickJS's own limits do not cover everything: a deep enough structure overflows the host's stack inside the
 * WebAssembly (QuickJS's limit counts only its own stack, which such frames barely use), and a stack overflow inside
 * JSON.parse or JSON.stringify leaks objects, so that freeing the runtime aborts the module and strands its memory. Either
 * surfaces as a host exception. The run then fails instead of throwing out of the decision, and the module is not used
 * again: not for the rest of the current turn (an immediate retry would break it the same way), and never once `reload`
 * has given a fresh one. Meanwhile other turns keep using it, which still works, to fail nobody else's script.
 */
export function quickJsScriptRunner(initial: QuickJSWASMModule, reload?: () => Promise<QuickJSWASMModule>): ScriptRunner {
  const quickJs = replaceableModule(initial, reload);
  let brokenThisTurn: string | undefined;

  function replace(error: unknown): string {
    const reason = brokenOutcome(error);
    brokenThisTurn = reason;
    queueMicrotask(() => (brokenThisTurn = undefined));
    quickJs.replace();
    return reason;
  }

  // Interrupt-handler calls of every run so far, and the characters of JSON they moved in and out: the work done (see
  // ScriptRunner.spent).
  let spentInterrupts = 0;
  let movedChars = 0;
  const moved = (chars: number) => (movedChars += chars);

  /** Runs `use` in a fresh, budgeted context; `interrupted` tells whether the budget stopped the script. */
  function withContext<T>(use: (context: QuickJSContext, interrupted: () => boolean) => T, broken: (reason: string) => T): T {
    if (brokenThisTurn !== undefined) return broken(brokenThisTurn);
    try {
      const runtime = quickJs.current().newRuntime();
      let interrupts = 0;
      runtime.setMemoryLimit(MEMORY_LIMIT_BYTES);
      runtime.setMaxStackSize(MAX_STACK_BYTES);
      runtime.setInterruptHandler(() => ++interrupts > INTERRUPT_BUDGET);
      const context = runtime.newContext();
      let used = false;
      try {
        const result = use(context, () => interrupts > INTERRUPT_BUDGET);
        used = true;
        return result;
      } finally {
        spentInterrupts += interrupts;
        try {
          context.dispose();
          runtime.dispose();
        } catch (freeing) {
          // After a host stack overflow inside JSON.parse or JSON.stringify, freeing the runtime aborts on the objects
          // it leaked: the overflow, thrown by use, is the reason to give, not that assertion in quickjs.c.
          if (used) throw freeing;
        }
      }
    } catch (error) {
      return broken(replace(error));
    }
  }
  return {
    spent() {
      return (spentInterrupts + movedChars / DATA_CHARS_PER_INTERRUPT) / INTERRUPT_BUDGET;
    },
    run(source, input) {
      return withContext(
        (context, interrupted) => runInContext(context, source, input, interrupted, moved),
        (error) => ({ ok: false, error, stopped: true }),
      );
    },
    syntaxError(source) {
      return withContext(
        (context) => {
          const compiled = context.evalCode(source, SCRIPT_FILE, { compileOnly: true });
          if (!compiled.error) {
            compiled.value.dispose();
            return undefined;
          }
          const error = describeError(context, compiled.error, source);
          compiled.error.dispose();
          return error;
        },
        (error) => error,
      );
    },
  };
}

const ENGINE_GLOBALS =
  "globalThis.console = { log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} }; globalThis.print = function () {};" +
  " globalThis.Java = { from: (list) => Array.from(list), to: (list) => list," +
  // Nashorn's (and GraalJS's, with host access) way to a Java class: there is none here, which the error says, where
  // calling a missing Java.type said only "not a function".
  " type: (name) => { throw new TypeError('Java.type(\\'' + name + '\\') is not available: scripts run in a JavaScript sandbox, with no Java classes'); } };";

/**
 * A script that names `random` (`Math.random()`), the only way it can draw one (`Math['ran' + 'dom']` aside): only such a
 * script has {@link seededRandom} replace QuickJS's own, and pays for it.
 */
const RANDOM_MENTION = /\brandom\b/;

/**
 * A `Math.random` seeded from the platform's random source, for one run. QuickJS seeds its own from the clock as each
 * context is made, to the millisecond here, and workerd's clock stands still between I/O: every run of a decision (a
 * fork of INLINE tasks making ids, a loop's iterations) drew the same numbers. Marsaglia's xorshift128, two draws to a
 * double's 53 bits as V8's is made, without calls (each would count on the script's budget); the property is the
 * language's own kind (a method named random, writable, configurable, not enumerable).
 */
function seededRandom(): string {
  const [a, b, c, d] = crypto.getRandomValues(new Uint32Array(4));
  return (
    `(() => { let a = ${a} | 0, b = ${b} | 0, c = ${c} | 0, d = ${d} | 0; if ((a | b | c | d) === 0) a = 1;` +
    " Object.defineProperty(Math, 'random', { value: { random() {" +
    " let t = a ^ (a << 11); a = b; b = c; c = d; d = d ^ (d >>> 19) ^ t ^ (t >>> 8); const high = d >>> 5;" +
    " t = a ^ (a << 11); a = b; b = c; c = d; d = d ^ (d >>> 19) ^ t ^ (t >>> 8);" +
    " return (high * 67108864 + (d >>> 6)) / 9007199254740992; } }.random, writable: true, configurable: true }); })();"
  );
}

/**
 * A call of a Java collection's method (`$.list.get(i)`, `$.list.size()`, `$.map.containsKey('k')`): in Conductor's
 * engines `$` is a Java Map whose lists and maps answer them, and its own tests call them. Only a script that may call
 * one has `$` parsed with {@link JAVA_COLLECTIONS}: the others pay nothing for it. `Object.values(x)`, common in scripts,
 * is the language's own (the global `Object`, not a field named so: `$.Object.values()` is a call), and costs nothing.
 */
const JAVA_COLLECTION_CALL = /(?<!(?<![\w$.])\s*Object\s*)\.\s*(?:get|getOrDefault|size|isEmpty|contains|containsKey|keySet|values)\s*\(/;

/**
 * A JSON.parse reviver giving `$`'s lists and maps those methods, on prototypes of their own: not enumerable (the data,
 * its keys and its JSON are unchanged), and a field of the data with such a name is the data's own, read first.
 */
const JAVA_COLLECTIONS =
  "const __javaList = Object.create(Array.prototype, { get: { value(i) { return i >= 0 && i < this.length ? this[i] : undefined; } }," +
  " size: { value() { return this.length; } }, isEmpty: { value() { return this.length === 0; } }, contains: { value(x) { return this.includes(x); } } });" +
  " const __javaMap = Object.create(Object.prototype, { get: { value(k) { return Object.hasOwn(this, k) ? this[k] : null; } }," +
  " size: { value() { return Object.keys(this).length; } }, isEmpty: { value() { return Object.keys(this).length === 0; } }," +
  " getOrDefault: { value(k, d) { return Object.hasOwn(this, k) ? this[k] : d; } }, containsKey: { value(k) { return Object.hasOwn(this, k); } }," +
  // A Java Map's keySet() and values() are collections that answer size(), contains(x)…: lists of the same kind here.
  " keySet: { value() { return Object.setPrototypeOf(Object.keys(this), __javaList); } }, values: { value() { return Object.setPrototypeOf(Object.values(this), __javaList); } } });" +
  " const __javaCollections = (key, value) => { if (value !== null && typeof value === 'object') Object.setPrototypeOf(value, Array.isArray(value) ? __javaList : __javaMap); return value; };";

/**
 * The function that turns the script's result into JSON, made before the script runs from the language's own
 * JSON.stringify and the builtins it needs (the script may replace the globals). A `Map` in the result (at any depth)
 * becomes an object of its entries, as Conductor's ScriptEvaluator reads a JavaScript Map (GraalJS gives its hash
 * entries); plain JSON.stringify writes `{}` and the entries would be lost. The conversion is a `toJSON` added to Map's
 * prototype once the script has run, so that values which are no Map cost nothing; each Map is converted once, so a
 * Map holding itself is a cycle JSON.stringify refuses, not an endless one. The property descriptors have no prototype:
 * one would read fields the script put on Object.prototype (a Nashorn-style `Object.prototype.get`), which the
 * definition then refused as an accessor given a value.
 */
const RESULT_SERIALISER =
  "(() => { const stringify = JSON.stringify, define = Object.defineProperty, apply = Reflect.apply, mapProto = Map.prototype," +
  " forEach = Map.prototype.forEach, sizeOf = Object.getOwnPropertyDescriptor(Map.prototype, 'size').get," +
  " Cache = WeakMap, cacheGet = WeakMap.prototype.get, cacheSet = WeakMap.prototype.set;" +
  " return (value) => { const converted = new Cache();" +
  // Only a real Map has entries: an object that merely inherits Map's prototype (Object.create(Map.prototype), a Proxy
  // around a Map) makes Map's own methods throw, so it is written as JSON.stringify writes it (its own properties, {}).
  // Reading the size is a cheap check of that; the budget's interrupt is no exception a catch can take.
  " const toJSON = function () { try { apply(sizeOf, this, []); } catch { return this; }" +
  " let entries = apply(cacheGet, converted, [this]); if (entries !== undefined) return entries; entries = {};" +
  " apply(cacheSet, converted, [this, entries]);" +
  " apply(forEach, this, [(item, key) => { if (typeof key !== 'symbol') define(entries, '' + key, { __proto__: null, value: item, enumerable: true, writable: true, configurable: true }); }]);" +
  " return entries; };" +
  // A script that froze Map's prototype keeps its Maps as JSON.stringify writes them.
  " try { define(mapProto, 'toJSON', { __proto__: null, value: toJSON, writable: true, configurable: true }); } catch {} return stringify(value); }; })()";

/**
 * A script that names `Map` (`new Map(…)`, `Map.groupBy`), the only way a Map can reach its result (`$` is JSON). Only
 * such a script has its result written by {@link RESULT_SERIALISER}, whose text costs every run about 0.05 ms to compile
 * (a third of a small script's run); the others keep the language's own JSON.stringify. A Map made without writing its
 * name (`globalThis['Ma' + 'p']`) is written `{}`, as before the conversion.
 */
const MAP_MENTION = /\bMap\b/;

/**
 * A script that may make a BigInt: one naming `BigInt` (or `BigUint64Array`, `getBigInt64`…) or writing a BigInt
 * literal (`10n`, `0x1fn`), the only ways one can be made (`$` is JSON). Only such a script has its result written by
 * {@link BIGINT_SERIALISER}; a BigInt made without either (`globalThis['Big' + 'Int']`) fails the result as before.
 */
const BIGINT_MENTION = /Big(?:Int|Uint)|\b(?:\d[\d_]*|0[xX][\da-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+)n\b/;

/**
 * Wraps a result serialiser (the source of a function) so that a BigInt in the result (at any depth) is written as a
 * JSON number, as Conductor's GraalJS result reads one: GraalJS's BigInt is an interop number (fitsInInt, fitsInLong,
 * fitsInDouble when exact), which ScriptEvaluator.getObject takes as an int, a long or a double. One within a Java long
 * is written as the nearest double (exact up to 2^53, as JavaScript reads any JSON number); a larger one is written when
 * a double holds it exactly, and otherwise the result is refused, as before (Conductor reads it as `{}`, losing it). The
 * conversion is a `toJSON` on BigInt's prototype (JSON.stringify asks a BigInt for one), added once the script has run
 * from builtins kept before it, so that a script that froze the prototype keeps a BigInt refused.
 */
const BIGINT_SERIALISER = (serialiser: string): string =>
  "((next) => { const define = Object.defineProperty, apply = Reflect.apply, proto = BigInt.prototype, valueOf = BigInt.prototype.valueOf," +
  " toNumber = Number, toBigInt = BigInt, finite = Number.isFinite, Refused = TypeError;" +
  " const toJSON = function () { let big; try { big = apply(valueOf, this, []); } catch { return this; } const number = toNumber(big);" +
  " if ((big >= -(2n ** 63n) && big < 2n ** 63n) || (finite(number) && toBigInt(number) === big)) return number;" +
  " throw new Refused('a BigInt no JSON number holds exactly (' + big + 'n)'); };" +
  " return (value) => { try { define(proto, 'toJSON', { __proto__: null, value: toJSON, writable: true, configurable: true }); } catch {} return next(value); }; })" +
  `(${serialiser})`;

/**
 * A script that names a typed array's constructor (`Uint8Array`, `Float64Array`, `BigInt64Array`…), the only way one
 * can be made (`$` is JSON; the interpreter has no builtin answering one). Only such a script has its result written by
 * {@link TYPED_ARRAY_SERIALISER}. A typed array made in a script that names none (`globalThis['Uint' + '8Array']`) is
 * written as JSON.stringify writes it (`{"0": 1}`), as a Map made so is written `{}`.
 */
const TYPED_ARRAY_MENTION = /(?:Int|Uint|Float)(?:8|16|32|64)(?:Clamped)?Array\b/;

/**
 * Wraps a result serialiser (the source of a function) so that a typed array in the result (at any depth) is written as
 * the list of its elements, as Conductor's ScriptEvaluator reads one: GraalJS's typed array has array elements
 * (JSTypedArrayObject.hasArrayElements), which ScriptEvaluator.getObject takes as a list; plain JSON.stringify writes an
 * object of indexes (`{"0": 1, "1": 2}`). A view's elements alone (not the rest of its buffer); an ArrayBuffer or a
 * DataView has none and stays `{}`, as in GraalJS. The conversion is a `toJSON` on each typed array prototype, added once
 * the script has run from builtins kept before it (replacing the script's own); an object that only inherits one of
 * those prototypes has no length (its getter throws) and is written as JSON.stringify writes it. Each element is defined
 * on the list, so a setter the script put on Array's prototype is not called.
 */
const TYPED_ARRAY_SERIALISER = (serialiser: string): string =>
  "((next) => { const define = Object.defineProperty, apply = Reflect.apply," +
  " lengthOf = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Int8Array.prototype), 'length').get," +
  " protos = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float16Array'," +
  " 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array'].filter((name) => typeof globalThis[name] === 'function').map((name) => globalThis[name].prototype);" +
  " const toJSON = function () { let length; try { length = apply(lengthOf, this, []); } catch { return this; } const list = [];" +
  " for (let index = 0; index < length; index++) define(list, index, { __proto__: null, value: this[index], enumerable: true, writable: true, configurable: true });" +
  " return list; };" +
  " return (value) => { for (let index = 0; index < protos.length; index++) { try { define(protos[index], 'toJSON', { __proto__: null, value: toJSON, writable: true, configurable: true }); } catch {} } return next(value); }; })" +
  `(${serialiser})`;

/**
 * A script that names `console`, the only way one can log (`$` is JSON; `globalThis['con' + 'sole']` is not logged).
 * Only such a script has its console's lines kept ({@link CONSOLE_CAPTURE}, compiled for it alone); the others keep the
 * console that writes nothing, and pay nothing.
 */
const CONSOLE_MENTION = /\bconsole\b/;

/** Most console lines a run keeps: its first ones, as many as a worker's update may bring in one go is far more. */
export const SCRIPT_LOG_LINES = 100;
/** Most characters of one console line kept (cut beyond, ending `…`), under a task log line's 8 KiB. */
export const SCRIPT_LOG_LINE_CHARS = 2048;
/** Most characters of all a run's console lines together: a script logging in a loop cannot grow its task's log much. */
export const SCRIPT_LOG_CHARS = 32 * 1024;

/**
 * The console of a script that logs: each call writes one line as Conductor's ConsoleBridge does (`[Log] "text"`, its
 * level `Log`, `Info`, `Warn`, `Error` or `Debug`), its arguments joined by a space, a string as it is and anything
 * else as JSON (or its text when JSON cannot hold it). The lines are kept in an array only this closure reaches (the
 * script cannot write to it but through the console), read by the host once the script is done; past the run's bounds
 * a call writes nothing and is counted (the array's own `dropped`, there from the start). Made before the script runs,
 * from the builtins it needs: the script may replace them.
 */
const CONSOLE_CAPTURE =
  "(() => { const lines = [], stringify = JSON.stringify, toText = String, slice = String.prototype.slice, apply = Reflect.apply, define = Object.defineProperty;" +
  // Its own `dropped` from the start: the host reads it after the run, and an absent one would be looked up on the
  // prototypes, where the script may have put a number (a forged count) or a getter (its code run after it ended).
  " define(lines, 'dropped', { __proto__: null, value: 0, configurable: true });" +
  " let chars = 0, dropped = 0;" +
  " const format = (value) => { if (typeof value === 'string') return value; try { const json = stringify(value); if (typeof json === 'string') return json; } catch {}" +
  " try { return toText(value); } catch { return '?'; } };" +
  ` const full = () => lines.length >= ${SCRIPT_LOG_LINES} || chars >= ${SCRIPT_LOG_CHARS};` +
  " const drop = () => { dropped++; define(lines, 'dropped', { __proto__: null, value: dropped, configurable: true }); };" +
  " const writer = (level) => function (...items) {" +
  "   if (full()) { drop(); return; }" +
  "   let text = ''; for (let i = 0; i < items.length; i++) text += (i === 0 ? '' : ' ') + format(items[i]);" +
  `   if (text.length > ${SCRIPT_LOG_LINE_CHARS}) text = apply(slice, text, [0, ${SCRIPT_LOG_LINE_CHARS}]) + '…';` +
  // Checked again: writing the arguments ran the script's code (a toJSON, a getter), which may have logged meanwhile,
  // each nested call past the first check too.
  "   if (full()) { drop(); return; }" +
  "   chars += text.length; define(lines, lines.length, { __proto__: null, value: '[' + level + '] \"' + text + '\"', enumerable: true, writable: true, configurable: true }); };" +
  " globalThis.console = { log: writer('Log'), info: writer('Info'), warn: writer('Warn'), error: writer('Error'), debug: writer('Debug'), trace: writer('Debug') };" +
  " return lines; })()";

/**
 * The lines a run's console kept (see {@link CONSOLE_CAPTURE}), read as data (no script code runs, so a run the budget
 * stopped keeps what it logged), and a last line saying how many calls were left out, when any were.
 */
function readLogs(context: QuickJSContext, lines: QuickJSHandle): string[] {
  const read: string[] = [];
  const length = context.getProp(lines, "length");
  const count = context.typeof(length) === "number" ? Math.min(context.getNumber(length), SCRIPT_LOG_LINES) : 0;
  length.dispose();
  for (let index = 0; index < count; index++) {
    const line = context.getProp(lines, index);
    if (context.typeof(line) === "string") read.push(context.getString(line));
    line.dispose();
  }
  const droppedHandle = context.getProp(lines, "dropped");
  const dropped = context.typeof(droppedHandle) === "number" ? context.getNumber(droppedHandle) : 0;
  droppedHandle.dispose();
  if (dropped > 0) {
    read.push(`[Log] "${dropped} more console line${dropped === 1 ? " was" : "s were"} left out: a script's run keeps its first ${SCRIPT_LOG_LINES} lines, ${SCRIPT_LOG_CHARS / 1024} KiB in all"`);
  }
  return read;
}

/** The global the input's JSON is handed to the interpreter in, deleted before the script runs. */
const INPUT_GLOBAL = "__inputJson";

/** Runs `source` over `input` in `context`; `moved` is told the characters of JSON given to it and read back. */
function runInContext(context: QuickJSContext, source: string, input: JsonObject, interrupted: () => boolean, moved: (chars: number) => void): ScriptOutcome {
  // `$` is parsed inside the interpreter from JSON, so it holds plain data only, and the result leaves it as JSON. The
  // JSON goes in as a string value (a global the binding code deletes once parsed), not as a literal in that code: the
  // literal had to be escaped a second time, copied in as source and tokenised before JSON.parse read it, a fifth of a
  // run over an input of 500 KB (see bench/script-input.mjs). The language's own JSON.stringify is kept aside first: the
  // script may replace the global one, or the global object's properties, and its result must still be read as it is.
  // What scripts written for Conductor's engines call besides: GraalJS's console and Nashorn's print and Java.from (a
  // Java list as an array; `$`'s lists are arrays already). What a script writes to the console goes to its task's log
  // (see CONSOLE_CAPTURE); print's goes nowhere.
  const json = JSON.stringify(input);
  moved(json.length);
  const text = context.newString(json);
  context.setProp(context.global, INPUT_GLOBAL, text);
  text.dispose();
  const parse = JAVA_COLLECTION_CALL.test(source)
    ? `${JAVA_COLLECTIONS} globalThis.$ = JSON.parse(globalThis.${INPUT_GLOBAL}, __javaCollections); delete globalThis.${INPUT_GLOBAL};`
    : `globalThis.$ = JSON.parse(globalThis.${INPUT_GLOBAL}); delete globalThis.${INPUT_GLOBAL};`;
  let serialiser = MAP_MENTION.test(source) ? RESULT_SERIALISER : "JSON.stringify";
  if (TYPED_ARRAY_MENTION.test(source)) serialiser = TYPED_ARRAY_SERIALISER(serialiser);
  if (BIGINT_MENTION.test(source)) serialiser = BIGINT_SERIALISER(serialiser);
  const random = RANDOM_MENTION.test(source) ? seededRandom() : "";
  const bound = context.evalCode(`${ENGINE_GLOBALS} ${random} ${parse} ${serialiser};`, "input.js");
  if (bound.error) {
    const error = describeError(context, bound.error);
    bound.error.dispose();
    return { ok: false, error: `The input could not be given to the script: ${error}` };
  }
  const stringify = bound.value;
  try {
    if (!CONSOLE_MENTION.test(source)) return runBound(context, source, stringify, interrupted, moved);
    const captured = context.evalCode(CONSOLE_CAPTURE, "console.js");
    if (captured.error) {
      const error = describeError(context, captured.error);
      captured.error.dispose();
      return { ok: false, error: `The console could not be given to the script: ${error}` };
    }
    try {
      const outcome = runBound(context, source, stringify, interrupted, moved);
      const logs = readLogs(context, captured.value);
      return logs.length === 0 ? outcome : { ...outcome, logs };
    } finally {
      captured.value.dispose();
    }
  } finally {
    stringify.dispose();
  }
}

/** Runs `source` in a context its input is bound in, and writes its result with `stringify` (see runInContext). */
function runBound(context: QuickJSContext, source: string, stringify: QuickJSHandle, interrupted: () => boolean, moved: (chars: number) => void): ScriptOutcome {
  const ran = context.evalCode(source, SCRIPT_FILE);
  if (ran.error) {
    const error = describeThrown(context, ran.error, source, source);
    ran.error.dispose();
    if (interrupted()) return { ok: false, error: STOPPED_ERROR, stopped: true };
    return { ok: false, error };
  }
  // JSON.stringify answers undefined for undefined, functions and symbols: null, as Conductor's result would be.
  const serialised = context.callFunction(stringify, context.undefined, ran.value);
  ran.value.dispose();
  if (serialised.error) {
    const error = describeThrown(context, serialised.error, source);
    serialised.error.dispose();
    // Writing the result runs on the script's budget (its getters and toJSON, the conversion of its Maps): one that
    // used it up was stopped, as the script would have been, not a result JSON cannot hold.
    if (interrupted()) return { ok: false, error: STOPPED_ERROR, stopped: true };
    // A result whose JSON the interpreter's memory cannot hold (a list of one long text, many times over) is JSON, not
    // one JSON cannot hold.
    if (error === OUT_OF_MEMORY_ERROR) return { ok: false, error: `The script's result could not be written out: ${error}` };
    return { ok: false, error: `The script's result is not JSON: ${error}` };
  }
  const json = context.typeof(serialised.value) === "string" ? context.getString(serialised.value) : "null";
  serialised.value.dispose();
  moved(json.length);
  return { ok: true, value: JSON.parse(json) as JsonValue };
}
