/**
 * The scripts a definition holds, found for the worker's registration-time syntax check (it holds the interpreter;
 * the engine does not).
 */
import { isExpression, isRecord } from "./checks";
import { rawTaskEntries } from "./validate";
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
  const input = task["inputParameters"];
  if (!isRecord(input)) return undefined;
  const request = task["type"] === "START_WORKFLOW" ? input[START_WORKFLOW_PARAMETER] : undefined;
  if (isRecord(request) && isRecord(request["workflowDef"])) return { definition: request["workflowDef"], at: `inputParameters.${START_WORKFLOW_PARAMETER}.workflowDef` };
  // A DYNAMIC's child written in place, when the validator checks it as one: the DYNAMIC may run a SUB_WORKFLOW.
  const param = task["dynamicTaskNameParam"];
  const chosen = task["type"] === "DYNAMIC" && typeof param === "string" ? input[param] : undefined;
  if (isRecord(input[SUB_WORKFLOW_DEFINITION_PARAM]) && (chosen === "SUB_WORKFLOW" || isExpression(chosen))) {
    return { definition: input[SUB_WORKFLOW_DEFINITION_PARAM], at: `inputParameters.${SUB_WORKFLOW_DEFINITION_PARAM}` };
  }
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
