/**
 * The engine's view of a JavaScript evaluator (INLINE tasks, SWITCH `javascript` expressions). Workers may not
 * evaluate code themselves, so the actor hands the engine a sandboxed interpreter through {@link DecideEnv}; the
 * engine only asks it to run a script over a task's input.
 */
import { rawTaskEntries } from "./definition/validate";
import { isRecord } from "./definition/checks";
import type { JsonObject, JsonValue, WorkflowDef } from "./model";
import { flattenTasks } from "./plan";

/** What running a script gave: its completion value as JSON, or why it failed. */
export type ScriptOutcome = { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: string };

/** Runs scripts with `$` bound to a task's input, as Conductor's javascript/graaljs evaluators do. */
export interface ScriptRunner {
  /**
   * Runs `source` as a classic script with the global `$` set to `input`. The outcome is the script's completion value
   * (the value of its last expression statement) as JSON; `undefined` and functions become null. A thrown error, a
   * syntax error, or running past the runner's memory or instruction budget is a failed outcome, never an exception.
   */
  run(source: string, input: JsonObject): ScriptOutcome;
  /** Why `source` does not parse as a script, or undefined when it does. Nothing is run. */
  syntaxError(source: string): string | undefined;
}

/** A script a definition holds, with its path in the definition (for validation errors). */
export interface DefinitionScript {
  readonly source: string;
  readonly path: string;
}

/**
 * The script `task` runs, if any, and the field holding it: an INLINE's `inputParameters.expression` or a SWITCH's
 * `expression`, each when its evaluatorType is javascript or graaljs. Reads a task as received too, whatever its shape.
 */
export function taskScript(task: unknown): { source: string; field: string } | undefined {
  if (!isRecord(task)) return undefined;
  if (task["type"] === "INLINE") {
    const input = task["inputParameters"];
    if (!isRecord(input)) return undefined;
    const expression = input["expression"];
    return isScriptEvaluator(input["evaluatorType"]) && typeof expression === "string" ? { source: expression, field: "inputParameters.expression" } : undefined;
  }
  const expression = task["expression"];
  if (task["type"] === "SWITCH" && isScriptEvaluator(task["evaluatorType"]) && typeof expression === "string") return { source: expression, field: "expression" };
  return undefined;
}

function isScriptEvaluator(evaluatorType: unknown): boolean {
  return evaluatorType === "javascript" || evaluatorType === "graaljs";
}

/**
 * Every script of a definition as received (valid or not, so its syntax errors come in the same answer as its other
 * problems) whose text is fixed at registration, with its path: those that hold a `${...}` are known only once
 * resolved, at run time.
 */
export function definitionScripts(definition: unknown): DefinitionScript[] {
  const tasks = isRecord(definition) ? definition["tasks"] : undefined;
  if (!Array.isArray(tasks)) return [];
  return rawTaskEntries(tasks, "tasks").flatMap(({ task, path }) => {
    const script = taskScript(task);
    return script === undefined || script.source.trim() === "" || script.source.includes("${") ? [] : [{ source: script.source, path: `${path}.${script.field}` }];
  });
}

/** True when running `definition` may need the script interpreter. */
export function usesScripts(definition: WorkflowDef): boolean {
  return flattenTasks(definition.tasks).some((task) => taskScript(task) !== undefined);
}
