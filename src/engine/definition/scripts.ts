/**
 * The scripts a definition holds, found for the worker's registration-time syntax check (it holds the interpreter;
 * the engine does not).
 */
import { isRecord } from "./checks";
import { rawTaskEntries } from "./validate";
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
