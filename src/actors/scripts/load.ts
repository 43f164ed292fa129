/**
 * Loads the QuickJS interpreter in workerd, once per isolate and only when an execution needs it: the WebAssembly is
 * imported as a compiled module (wrangler bundles `.wasm` imports as such), so no fetch or file read is involved.
 */
import variant from "@jitl/quickjs-wasmfile-release-sync";
import quickJsWasm from "@jitl/quickjs-wasmfile-release-sync/wasm";
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from "quickjs-emscripten-core";
import type { ScriptRunner } from "../../engine/scripts";
import { quickJsScriptRunner } from "./quickjs-runner";

let loading: Promise<ScriptRunner> | undefined;

/** The interpreter's WebAssembly memory at its start and at its largest, in 64 KiB pages: 16 MiB and 48 MiB. */
const INITIAL_MEMORY_PAGES = 256;
const MAXIMUM_MEMORY_PAGES = 768;

/**
 * A new instance of the interpreter's WebAssembly: the first, and any replacing one a script (or a jq filter) broke.
 * Its memory has a maximum: the emscripten build counts no allocation against the runtime's memory limit but one
 * larger than the limit itself, so without it many smaller ones grew the memory past the isolate's 128 MB, and the
 * Durable Object was reset (over and over, as every retry ran the script again). At the maximum an allocation fails
 * with QuickJS's own "out of memory", which fails the task.
 */
export function loadQuickJsModule(): Promise<QuickJSWASMModule> {
  const wasmMemory = new WebAssembly.Memory({ initial: INITIAL_MEMORY_PAGES, maximum: MAXIMUM_MEMORY_PAGES });
  return newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmModule: quickJsWasm, wasmMemory }));
}

/** The isolate's script runner, loading QuickJS on first use. */
export function loadScriptRunner(): Promise<ScriptRunner> {
  loading ??= loadQuickJsModule().then((quickJs) => quickJsScriptRunner(quickJs, loadQuickJsModule), (error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
