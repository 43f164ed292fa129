/**
 * The scripts a definition holds, found for the worker's registration-time syntax check (it holds the interpreter;
 * the engine does not).
 */
import { isRecord } from "./checks";
import { dynamicInlineChildOf, rawTaskEntries, startedDefinitionOf } from "./validate";
import { taskJqFilter } from "../jq";
import { conditionScripts, taskScript } from "../scripts";
import { START_WORKFLOW_PARAMETER } from "../tasks/start-workflow/request";
import { SUB_WORKFLOW_DEFINITION_PARAM } from "../tasks/dynamic/concrete";

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
    // A definition written in place (an inline child, a START_WORKFLOW's workflowDef) has its scripts checked with its
    // parent's, at their paths inside it, as registered on its own it would.
    const written = writtenDefinition(task);
    if (written !== undefined) return fixedTexts(written.definition, pick, `${path}.${written.at}.`);
    const picked = pick(task);
    const texts = picked === undefined ? [] : "source" in picked ? [picked] : picked;
    return texts.flatMap((text) => (text.source.trim() === "" || text.source.includes("${") ? [] : [{ source: text.source, path: `${path}.${text.field}` }]));
  });
}

/**
 * The definition task `task` (as received) writes in place, which the registration checks as a definition of its own,
 * and where it lies in the task: a SUB_WORKFLOW's inline child (`subWorkflowParam.workflowDefinition`), a
 * START_WORKFLOW's `inputParameters.startWorkflow.workflowDef`, a DYNAMIC's `inputParameters.subWorkflowDefinition` that
 * may run (see `validateDynamicInlineChild`). None of these tasks holds a script of its own.
 */
function writtenDefinition(task: unknown): { definition: unknown; at: string } | undefined {
  if (!isRecord(task)) return undefined;
  if (task["type"] === "SUB_WORKFLOW" && isRecord(task["subWorkflowParam"]) && task["subWorkflowParam"]["workflowDefinition"] !== undefined) {
    return { definition: task["subWorkflowParam"]["workflowDefinition"], at: "subWorkflowParam.workflowDefinition" };
  }
  // The validator's own lookups, so what it checks as a definition and what is searched for scripts stay the same.
  const started = task["type"] === "START_WORKFLOW" ? startedDefinitionOf(task["inputParameters"]) : undefined;
  if (started !== undefined) return { definition: started, at: `inputParameters.${START_WORKFLOW_PARAMETER}.workflowDef` };
  const dynamicChild = task["type"] === "DYNAMIC" ? dynamicInlineChildOf(task) : undefined;
  if (dynamicChild !== undefined) return { definition: dynamicChild, at: `inputParameters.${SUB_WORKFLOW_DEFINITION_PARAM}` };
  return undefined;
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
