/**
 * The input a workflow execution runs with: what its start gave, under the defaults of its definition's
 * `inputTemplate`. Pure; the one place those defaults are applied (a start, execute and a SUB_WORKFLOW child
 * through `createExecution`, a restart with the latest definition through the decider).
 */
import { oversize, oversizeReason } from "./limits";
import type { JsonObject, WorkflowDef } from "./model";
import { setOwn } from "./own-property";

/**
 * `given` with each key of the definition's `inputTemplate` that it lacks or holds as null, as Conductor does
 * (ParametersUtils.getWorkflowInput: `inputTemplate.forEach(inputParams::putIfAbsent)`, and Java's
 * `Map.putIfAbsent` also replaces a key mapped to null): shallow, given keys win, template values taken as
 * they are (data, never `${...}`-resolved). `given` itself when there is no template.
 */
export function withInputTemplate(definition: WorkflowDef, given: JsonObject): JsonObject {
  const template = definition.inputTemplate;
  if (template === undefined) return given;
  const input: JsonObject = { ...given };
  for (const [key, value] of Object.entries(template)) {
    if (!hasValue(input, key)) setOwn(input, key, value);
  }
  return input;
}

/**
 * Whether `input` holds a value at `key` in Java's sense: a null one counts as none, so a child's
 * `${workflow.input.x}` that resolved to null, or a start's explicit `null`, takes the default.
 */
function hasValue(input: JsonObject, key: string): boolean {
  return Object.hasOwn(input, key) && input[key] !== null;
}

/**
 * Why an execution of `definition` cannot start with `given`: its input with the template's defaults would be
 * over `limit` bytes (MAX_PAYLOAD_BYTES). Undefined when it fits, and without a template: the given input alone
 * is bounded where it arrives (the API's start and rerun check it, a child's is a task input), so only a
 * template can take it over.
 */
export function workflowInputOversizeReason(definition: WorkflowDef, given: JsonObject, limit: number): string | undefined {
  if (definition.inputTemplate === undefined) return undefined;
  const bytes = oversize(withInputTemplate(definition, given), limit);
  return bytes === undefined ? undefined : oversizeReason("The workflow input with the defaults of its definition's inputTemplate", bytes, limit);
}
