/**
 * The engine's view of a jq processor (JSON_JQ_TRANSFORM tasks). Like the script interpreter (see scripts.ts), it runs
 * outside the engine, sandboxed and budgeted, and is handed in through {@link DecideEnv}.
 */
import { isRecord } from "./definition/checks";
import type { JsonObject, JsonValue } from "./model";

/** What running a jq filter gave: every value it produced, in order, or why it failed. */
export type JqOutcome = { readonly ok: true; readonly values: JsonValue[] } | { readonly ok: false; readonly error: string };

/** Runs jq filters over a task's input, as Conductor's JSON_JQ_TRANSFORM does. */
export interface JqRunner {
  /**
   * Runs `filter` with `input` as jq's input (`.`). A filter that does not compile, raises an error, or runs past the
   * runner's memory or instruction budget is a failed outcome, never an exception.
   */
  run(filter: string, input: JsonObject): JqOutcome;
  /**
   * Why `filter` does not compile, or undefined when it does. Nothing is run. With `parseOnly`, only whether it parses,
   * as registrations checked before jq 1.6's compile errors were (a filter given as written in an accepted definition).
   */
  compileError(filter: string, parseOnly?: boolean): string | undefined;
  /** The work the runner's filters have done so far, in script budgets, as `ScriptRunner.spent` counts it. */
  spent?(): number;
}

/** The input parameter holding a JSON_JQ_TRANSFORM's filter, as in Conductor. */
export const JQ_QUERY_FIELD = "queryExpression";

/**
 * The jq filter `task` runs, if it is a JSON_JQ_TRANSFORM with a string `inputParameters.queryExpression`, and the
 * field holding it. Reads a task as received too, whatever its shape.
 */
export function taskJqFilter(task: unknown): { source: string; field: string } | undefined {
  if (!isRecord(task) || task["type"] !== "JSON_JQ_TRANSFORM") return undefined;
  const input = task["inputParameters"];
  if (!isRecord(input)) return undefined;
  const filter = input[JQ_QUERY_FIELD];
  return typeof filter === "string" ? { source: filter, field: `inputParameters.${JQ_QUERY_FIELD}` } : undefined;
}
