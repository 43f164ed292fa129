/**
 * The scripts a definition holds, found for the worker's registration-time syntax check (it holds the interpreter;
 * the engine does not).
 */
import { isRecord } from "./checks";
import { rawTaskEntries } from "./validate";
import { taskJqFilter } from "../jq";
import { conditionScripts, taskScript } from "../scripts";

/** A script a definition holds, with its path in the definition (for validation errors). */
export interface DefinitionScript {
  readonly source: string;
  readonly path: string;
}

/**
 * Every text `pick` finds in a task of a definition as received (valid or not, so its errors come in the same answer as
 * the definition's other problems) that is fixed at registration, with its path: one holding a `${...}` is known only
 * once resolved, at run time.
 */
function fixedTexts(definition: unknown, pick: (task: unknown) => { source: string; field: string } | readonly { source: string; field: string }[] | undefined, at = ""): DefinitionScript[] {
  const tasks = isRecord(definition) ? definition["tasks"] : undefined;
  if (!Array.isArray(tasks)) return [];
  return rawTaskEntries(tasks, `${at}tasks`).flatMap(({ task, path }) => {
    // An inline child's scripts are checked with its parent's, at their paths inside it.
    const child = isRecord(task) && task["type"] === "SUB_WORKFLOW" && isRecord(task["subWorkflowParam"]) ? task["subWorkflowParam"]["workflowDefinition"] : undefined;
    if (child !== undefined) return fixedTexts(child, pick, `${path}.subWorkflowParam.workflowDefinition.`);
    const picked = pick(task);
    const texts = picked === undefined ? [] : "source" in picked ? [picked] : picked;
    return texts.flatMap((text) => (text.source.trim() === "" || text.source.includes("${") ? [] : [{ source: text.source, path: `${path}.${text.field}` }]));
  });
}

/** Every script of a definition as received whose text is fixed at registration, with its path (see {@link fixedTexts}). */
export function definitionScripts(definition: unknown): DefinitionScript[] {
  // A task holds one script, but a CONDITIONAL_FORK one per branch condition.
  return fixedTexts(definition, (task) => {
    const script = taskScript(task);
    return [...(script === undefined ? [] : [script]), ...conditionScripts(task)];
  });
}

/**
 * Every JSON_JQ_TRANSFORM filter of a definition as received whose text is fixed at registration, with its path, for
 * the worker's compile check (as {@link definitionScripts} for scripts).
 */
export function definitionJqFilters(definition: unknown): DefinitionScript[] {
  return fixedTexts(definition, taskJqFilter);
}
