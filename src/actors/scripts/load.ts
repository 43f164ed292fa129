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

/** A new instance of the interpreter's WebAssembly: the first, and any replacing one a script (or a jq filter) broke. */
export function loadQuickJsModule(): Promise<QuickJSWASMModule> {
  return newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmModule: quickJsWasm }));
}

/** The isolate's script runner, loading QuickJS on first use. */
export function loadScriptRunner(): Promise<ScriptRunner> {
  loading ??= loadQuickJsModule().then((quickJs) => quickJsScriptRunner(quickJs, loadQuickJsModule), (error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
