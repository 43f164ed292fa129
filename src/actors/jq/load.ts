/**
 * Loads the jq processor in workerd, once per isolate and only when an execution (or a registration) needs it: its own
 * QuickJS instance, apart from the script interpreter's, with jqjs's source bundled as text (see wrangler.toml).
 */
import jqjsSource from "@michaelhomer/jqjs/jq.js";
import type { JqRunner } from "../../engine/jq";
import { loadQuickJsModule } from "../scripts/load";
import { quickJsJqRunner } from "./jq-runner";

let loading: Promise<JqRunner> | undefined;

/** The isolate's jq runner, loading it on first use. */
export function loadJqRunner(): Promise<JqRunner> {
  loading ??= loadQuickJsModule().then((quickJs) => quickJsJqRunner(quickJs, jqjsSource, loadQuickJsModule), (error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
