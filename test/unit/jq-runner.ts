import variant from "@jitl/quickjs-wasmfile-release-sync";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { newQuickJSWASMModuleFromVariant } from "quickjs-emscripten-core";
import { quickJsJqRunner } from "../../src/actors/jq/jq-runner";
import type { JqRunner } from "../../src/engine/jq";

/** jqjs's source, read the Node way (workerd bundles it as text instead). */
export const jqjsSource = readFileSync(createRequire(import.meta.url).resolve("@michaelhomer/jqjs/jq.js"), "utf8");

/** The production jq runner over its own QuickJS instance, loaded the Node way. */
export const jqRunner: JqRunner = quickJsJqRunner(await newQuickJSWASMModuleFromVariant(variant), jqjsSource);
