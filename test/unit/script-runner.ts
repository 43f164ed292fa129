import variant from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant } from "quickjs-emscripten-core";
import { quickJsScriptRunner } from "../../src/actors/scripts/quickjs-runner";
import type { ScriptRunner } from "../../src/engine/scripts";

/** The production script runner, its WebAssembly loaded the Node way (workerd imports it as a module instead). */
export const scriptRunner: ScriptRunner = quickJsScriptRunner(await newQuickJSWASMModuleFromVariant(variant));
