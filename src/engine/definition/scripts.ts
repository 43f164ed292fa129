/**
 * The scripts a definition holds, found for the worker's registration-time syntax check (it holds the interpreter;
 * the engine does not).
 */
import { isRecord } from "./checks";
import { rawTaskEntries } from "./validate";
import { taskJqFilter } from "../jq";
import { taskScript } from "../scripts";

/** A script a definition holds, with its path in the definition (for validation errors). */
export interface DefinitionScript {
  readonly source: string;
  readonly path: string;
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

/**
 * Every JSON_JQ_TRANSFORM filter of a definition as received whose text is fixed at registration, with its path, for
 * the worker's compile check (as {@link definitionScripts} for scripts).
 */
export function definitionJqFilters(definition: unknown): DefinitionScript[] {
  const tasks = isRecord(definition) ? definition["tasks"] : undefined;
  if (!Array.isArray(tasks)) return [];
  return rawTaskEntries(tasks, "tasks").flatMap(({ task, path }) => {
    const filter = taskJqFilter(task);
    return filter === undefined || filter.source.trim() === "" || filter.source.includes("${") ? [] : [{ source: filter.source, path: `${path}.${filter.field}` }];
  });
}
