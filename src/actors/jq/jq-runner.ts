/**
 * The {@link JqRunner} over jqjs (a jq written in JavaScript) run inside QuickJS: the filter runs in a separate
 * interpreter, under the same kind of memory and instruction budget as INLINE scripts (see quickjs-runner.ts), so an
 * endless filter such as `last(range(1e12))` or `def f: f; f` fails its task instead of holding the Durable Object.
 * Loading differs between workerd and Node (see load.ts and the unit tests); this part does not.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import type { JsonObject, JsonValue } from "../../engine/model";
import type { JqOutcome, JqRunner } from "../../engine/jq";
import { DATA_CHARS_PER_INTERRUPT, INTERRUPT_BUDGET as SCRIPT_BUDGET_INTERRUPTS } from "../scripts/quickjs-runner";
import { replaceableModule } from "../scripts/replaceable-module";
import { jqSandboxSource } from "./sandbox-source";

/**
 * The sandbox's memory budget: jqjs itself (a few MiB) and a task input at its largest several times over. No more than
 * a script's: the WebAssembly memory it grows to is never given back, and it sits beside the script interpreter's in an
 * isolate of 128 MB.
 */
const MEMORY_LIMIT_BYTES = 32 * 1024 * 1024;
/**
 * QuickJS stops a runaway recursion with its own error ("stack overflow") before the host's stack overflows. This, not
 * QuickJS's memory, bounds how deep a def may recurse (about 190 levels of `def f: … | f`, 115 of a factorial): each jq
 * level is several generators deep in jqjs, and each takes about four times as much of workerd's own stack (the
 * WebAssembly's frames) as of QuickJS's. Raised to 4 MiB, workerd's stack overflowed near 250 levels instead, a
 * RangeError that breaks the interpreter (it is replaced); at a script's 256 KiB (about 260 levels) it still did, now
 * and then, for a runaway `def f: . + 1 | f`, so the jq sandbox keeps a quarter in hand. Fewer generators per level (a
 * scope switched without one) shifted that balance the wrong way. The workers jq-transform test checks it over a dozen
 * shapes of recursion.
 */
const MAX_STACK_BYTES = 192 * 1024;
/**
 * Interrupt-handler calls a filter may take (QuickJS calls it every few thousand operations): five times a script's,
 * a few hundred ms, as jqjs takes many interpreter steps per jq step; a select over 1,000 items takes about 20. A count, not a clock, as for
 * scripts: workerd's clock stands still while code runs.
 */
const INTERRUPT_BUDGET = 1000;


/**
 * Defined once jqjs is loaded: runs a filter over JSON text and answers its values as JSON text; or only compiles it.
 * The sandbox serves every execution of the isolate, so nothing a filter did may reach the next one. jqjs keeps a
 * filter's `def`s in its table of functions, which is put back as it was loaded after each call (a `def join` would
 * otherwise change every later filter's `join`). And jqjs indexes plain objects, so `.["__proto__"]["x"] = 1` changes
 * the sandbox's Object.prototype: each answer starts with "1" while the built-in prototypes are as loaded, else "0",
 * and the runner then replaces the sandbox.
 */
const HELPERS = `const __jqFunctions = Object.assign(Object.create(null), functions);
const __jqFunctionNames = Object.keys;
const __jqAssign = Object.assign;
const __jqOwnKeys = Reflect.ownKeys;
const __jqDescriptor = Object.getOwnPropertyDescriptor;
const __jqPrototypeOf = Object.getPrototypeOf;
const __jqExtensible = Object.isExtensible;
const __jqSameValue = Object.is;
const __jqGuarded = [Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype, Boolean.prototype, Object, Array, Function, String, Number, Boolean, JSON, Math, Reflect];
const __jqLoaded = __jqGuarded.map((target) => ({ prototype: __jqPrototypeOf(target), extensible: __jqExtensible(target), own: __jqOwnKeys(target).map((key) => ({ key, descriptor: __jqDescriptor(target, key) })) }));
// Indexed loops and captured built-ins only: a filter that replaced Array.prototype.every must not switch the check off.
const __jqIntact = () => {
  for (let t = 0; t < __jqGuarded.length; t++) {
    const target = __jqGuarded[t];
    const loaded = __jqLoaded[t];
    if (__jqPrototypeOf(target) !== loaded.prototype || __jqExtensible(target) !== loaded.extensible || __jqOwnKeys(target).length !== loaded.own.length) return false;
    for (let k = 0; k < loaded.own.length; k++) {
      const was = loaded.own[k].descriptor;
      const now = __jqDescriptor(target, loaded.own[k].key);
      // Object.is: Number.NaN is never === itself.
      if (now === undefined || !__jqSameValue(now.value, was.value) || now.get !== was.get || now.set !== was.set) return false;
    }
  }
  return true;
};
const __jqRestore = () => {
  const names = __jqFunctionNames(functions);
  for (let n = 0; n < names.length; n++) if (!(names[n] in __jqFunctions)) delete functions[names[n]];
  __jqAssign(functions, __jqFunctions);
  return __jqIntact() ? "1" : "0";
};
const __jqThenRestore = (work) => {
  let intact = "0";
  let text;
  try {
    text = work();
  } finally {
    intact = __jqRestore();
  }
  return intact + text;
};
globalThis.__jqRun = (filter, input) => __jqThenRestore(() => {
  const values = [];
  for (const value of __compileProgram(filter)(JSON.parse(input))) values.push(value === undefined ? null : value);
  return JSON.stringify(values);
});
globalThis.__jqCompile = (filter, parseOnly) => __jqThenRestore(() => { parseOnly === "1" ? __compileProgram(filter) : __compileChecked(filter); return ""; });`;

/** A context with jqjs loaded, kept between runs: loading it again for each would cost more than most filters. */
interface Sandbox {
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  readonly run: QuickJSHandle;
  readonly compile: QuickJSHandle;
  /** Interrupt-handler calls since the current call began. */
  interrupts: number;
}

/** What jqjs threw: its parse errors are plain strings, its others errors. Only the message: a stack overflow's trace is huge. */
function describeError(context: QuickJSContext, handle: QuickJSHandle): string {
  const dumped: unknown = context.dump(handle);
  // Nothing a filter raises is null (jq's errors are JqErrors, jqjs's strings): QuickJS throws null when its memory is
  // so full that it cannot even make the error.
  if (dumped === null || dumped === undefined) return "out of memory (the sandbox's memory is full)";
  if (typeof dumped === "string") return dumped;
  if (typeof dumped === "object" && dumped !== null) {
    const { message } = dumped as { message?: unknown };
    if (typeof message === "string" && message !== "") return message;
  }
  return String(dumped);
}

/**
 * Creates a runner over a loaded QuickJS module and jqjs's source (`@michaelhomer/jqjs/jq.js`, as text). The sandbox is
 * built on first use and kept while runs succeed; a run that fails is followed by a fresh one, so nothing a stopped or
 * failed filter left half-done (a generator cut off by the budget, memory near its limit) reaches the next filter.
 * A host exception (the WebAssembly broke) fails the run and, when `reload` is given, replaces the module, as scripts do.
 */
export function quickJsJqRunner(initial: QuickJSWASMModule, jqjsSource: string, reload?: () => Promise<QuickJSWASMModule>): JqRunner {
  const source = jqSandboxSource(jqjsSource);
  const quickJs = replaceableModule(initial, reload);
  let sandbox: Sandbox | undefined;
  // Interrupt-handler calls of every filter so far, and the characters of JSON moved in and out: the work done (see
  // JqRunner.spent; the input's parsing never calls the handler).
  let spentInterrupts = 0;
  let movedChars = 0;

  function discard(): void {
    const current = sandbox;
    sandbox = undefined;
    if (current === undefined) return;
    try {
      current.run.dispose();
      current.compile.dispose();
      current.context.dispose();
      current.runtime.dispose();
    } catch {
      // A module that broke may fail to free; it is being replaced.
    }
  }

  function broken(error: unknown): string {
    discard();
    quickJs.replace();
    return `the filter broke the jq interpreter (${error instanceof Error ? error.message : String(error)}); it is being replaced`;
  }

  function load(): Sandbox {
    const runtime = quickJs.current().newRuntime();
    runtime.setMemoryLimit(MEMORY_LIMIT_BYTES);
    runtime.setMaxStackSize(MAX_STACK_BYTES);
    const context = runtime.newContext();
    const loaded = context.evalCode(`${source}\n${HELPERS}`, "jq.js");
    if (loaded.error) {
      const error = describeError(context, loaded.error);
      loaded.error.dispose();
      context.dispose();
      runtime.dispose();
      throw new Error(`jqjs did not load: ${error}`);
    }
    loaded.value.dispose();
    const created: Sandbox = { runtime, context, run: context.getProp(context.global, "__jqRun"), compile: context.getProp(context.global, "__jqCompile"), interrupts: 0 };
    runtime.setInterruptHandler(() => ++created.interrupts > INTERRUPT_BUDGET);
    return created;
  }

  /** Calls the sandbox's `fn` with string arguments; its string result, or why it failed. */
  function call(pick: (sandbox: Sandbox) => QuickJSHandle, args: string[]): { ok: true; value: string } | { ok: false; error: string } {
    try {
      const current = (sandbox ??= load());
      const { context } = current;
      current.interrupts = 0;
      for (const arg of args) movedChars += arg.length;
      const handles = args.map((arg) => context.newString(arg));
      const result = context.callFunction(pick(current), context.undefined, ...handles);
      spentInterrupts += current.interrupts;
      for (const handle of handles) handle.dispose();
      if (result.error) {
        const error = current.interrupts > INTERRUPT_BUDGET ? "the filter ran too long and was stopped (a filter may run five times as long as an INLINE script, a few hundred ms)" : describeError(context, result.error);
        result.error.dispose();
        discard();
        return { ok: false, error };
      }
      const answer = context.typeof(result.value) === "string" ? context.getString(result.value) : "0";
      result.value.dispose();
      movedChars += answer.length;
      // The filter changed what the sandbox's built-ins are (see HELPERS): the next filter gets a fresh one.
      if (!answer.startsWith("1")) discard();
      return { ok: true, value: answer.slice(1) };
    } catch (error) {
      return { ok: false, error: broken(error) };
    }
  }

  return {
    spent(): number {
      // In a script's budgets (see `ScriptRunner.spent`, whose unit it is): a filter's budget is five of them.
      return (spentInterrupts + movedChars / DATA_CHARS_PER_INTERRUPT) / SCRIPT_BUDGET_INTERRUPTS;
    },
    run(filter: string, input: JsonObject): JqOutcome {
      const called = call((current) => current.run, [filter, JSON.stringify(input)]);
      if (!called.ok) return { ok: false, error: `The jq filter failed: ${called.error}` };
      return { ok: true, values: JSON.parse(called.value === "" ? "[]" : called.value) as JsonValue[] };
    },
    compileError(filter: string, parseOnly = false): string | undefined {
      const called = call((current) => current.compile, [filter, parseOnly ? "1" : "0"]);
      return called.ok ? undefined : called.error;
    },
  };
}
