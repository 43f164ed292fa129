/**
 * JSON schemas (Orkes' schema registry): checking a value against one, as a start checks a workflow's input and a task
 * its input and output. `@cfworker/json-schema` interprets schemas rather than generating code, so it runs anywhere.
 */
import { Validator, type OutputUnit } from "@cfworker/json-schema";
import { parseTemplate } from "./expressions";
import { isUnderSecrets } from "./expressions/secrets";
import type { JsonObject, JsonValue, SchemaReference, TaskDef, WorkflowDef } from "./model";
import { flattenTasks } from "./plan";
import { childPath, type ValidationIssue } from "./validation-issue";

/**
 * Keywords whose failure only says that a part below failed: that part's own error is reported instead (the validator
 * reports a failed `then` or `else` as its `if`, and a property `additionalProperties: false` refuses as that keyword's
 * summary followed by the `false` schema's own error).
 */
const SUMMARY_KEYWORDS = new Set(["properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames", "items", "prefixItems", "additionalItems", "unevaluatedItems", "allOf", "$ref", "$dynamicRef", "dependentSchemas", "if"]);

/**
 * What a `false` schema refused, by the keyword that applied it (the summary just before its error): the validator says
 * only "False boolean schema.", which names neither the rule nor the schema's words for it.
 */
const FALSE_SCHEMA_MESSAGES: Record<string, string> = {
  additionalProperties: "is not allowed: the schema names no such property (its additionalProperties is false)",
  unevaluatedProperties: "is not allowed: the schema names no such property (its unevaluatedProperties is false)",
  patternProperties: "is not allowed: its name matches a pattern whose schema is false",
  properties: "is not allowed: its schema is false",
  items: "is not allowed: the array has more items than the schema describes (its items is false)",
  additionalItems: "is not allowed: the array has more items than the schema describes (its additionalItems is false)",
  unevaluatedItems: "is not allowed: the array has more items than the schema describes (its unevaluatedItems is false)",
  prefixItems: "is not allowed: its schema is false",
  propertyNames: "is not an allowed property name: the schema allows none",
};

/** The keys of a JSON pointer (`#/order/items/0`), unescaped: `["order", "items", "0"]`. */
function pointerKeys(pointer: string): string[] {
  return pointer
    .replace(/^#\/?/, "")
    .split("/")
    .filter((part) => part !== "")
    .map((raw) => raw.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** `path` and a JSON pointer into it (`#/order/items/0`) as a validation path (`input.order.items[0]`). */
function locationPath(path: string, pointer: string): string {
  return pointerKeys(pointer).reduce((at, part) => (/^\d+$/.test(part) ? childPath(at, Number(part)) : childPath(at, part)), path);
}

/**
 * Whether the value at `keys` of an input that `template` resolved was written from secrets and literal text alone
 * (`"${workflow.secrets.token}"`, `"Bearer ${workflow.secrets.token}"`): there the stored input holds `***`, not the value
 * sent, and nothing a caller gives is in it. A text with any other expression (`${workflow.input.n}${workflow.secrets.s}`,
 * `${workflow.input.prod ? workflow.secrets.k : workflow.input.key}`) is not: a caller could have it skip the schema.
 */
export function writtenFromSecret(template: JsonValue, keys: readonly string[]): boolean {
  let node: JsonValue | undefined = template;
  for (const key of keys) {
    if (typeof node !== "object" || node === null) return false;
    node = Array.isArray(node) ? node[Number(key)] : node[key];
  }
  return typeof node === "string" && writesOnlySecrets(node);
}

/** Whether every `${…}` of `text` names a secret, and it has one at least. */
function writesOnlySecrets(text: string): boolean {
  let parts: ReturnType<typeof parseTemplate>["parts"];
  try {
    parts = parseTemplate(text).parts;
  } catch {
    return false;
  }
  const expressions = parts.flatMap((part) => (part.kind === "expression" ? [part.expression] : []));
  return expressions.length > 0 && expressions.every((expression) => expression.kind === "path" && isUnderSecrets(expression.root, expression.segments) && expression.segments.length === 2);
}

/**
 * What is wrong with `value` by the JSON schema `data` (draft 2020-12), each at its path under `path`. A schema that
 * cannot be applied to it (a reference it cannot resolve) is one problem, saying so. `passed`: the locations (the keys
 * of a JSON pointer) whose problems do not count.
 */
export function schemaIssues(data: JsonObject, value: JsonValue, path: string, passed?: (keys: readonly string[]) => boolean): ValidationIssue[] {
  let result: ReturnType<Validator["validate"]>;
  try {
    // A copy: the validator marks the schema it is given in place (each part's absolute URI), and `data` is the
    // execution's own (its definition's kept schemas), which a decision must not change.
    result = new Validator(structuredClone(data) as object, "2020-12", false).validate(value);
  } catch (error) {
    return [{ path, message: `the schema could not be applied: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}` }];
  }
  if (result.valid) return [];
  // A property or item a `false` schema refuses is refused for being there, which its template decides, not its value:
  // one written from a secret is not passed (see `passed`), or an enforced `additionalProperties: false` let it through.
  const presenceRefusals = new Set<OutputUnit>();
  const errors = result.errors.map((error: OutputUnit, index: number) => {
    const applied = index > 0 && error.keyword === "false" ? FALSE_SCHEMA_MESSAGES[result.errors[index - 1]!.keyword] : undefined;
    if (applied === undefined) return error;
    const refusal = { ...error, error: applied };
    presenceRefusals.add(refusal);
    return refusal;
  });
  const leaves = errors.filter((error: OutputUnit) => !SUMMARY_KEYWORDS.has(error.keyword));
  // A problem where a passed value stands does not count, nor do the summaries above it: leaves are reported when there are any.
  const counted = (leaves.length > 0 ? leaves : errors).filter((error: OutputUnit) => passed === undefined || presenceRefusals.has(error) || !passed(pointerKeys(error.instanceLocation)));
  return counted.map((error: OutputUnit) => ({ path: locationPath(path, error.instanceLocation), message: error.error }));
}

/** Where a definition's schema is named: its name and version (the latest when none is given). */
export function describeSchema(reference: SchemaReference): string {
  return reference.version === undefined ? `schema ${reference.name}` : `schema ${reference.name} version ${reference.version}`;
}

/** The key under which an execution's definition keeps the data of the schema `reference` names (see `WorkflowDef.schemas`). */
export function schemaKey(reference: SchemaReference): string {
  return `${reference.name}@${reference.version ?? "latest"}`;
}

/**
 * The data of the schema `reference` names, as the execution's definition keeps it: null when it was not registered
 * when the execution started, undefined when the definition keeps nothing for it (it was not known then).
 */
function keptSchema(definition: WorkflowDef, reference: SchemaReference): JsonObject | null | undefined {
  const key = schemaKey(reference);
  return definition.schemas?.find((kept) => kept.key === key)?.data;
}

/**
 * The schemas an execution of `definition` checks as it runs, each once, which it keeps from its start (see
 * `WorkflowDef.schemas`): those its tasks' definitions enforce, and its own enforced `outputSchema`.
 */
export function keptSchemaReferences(definition: WorkflowDef): SchemaReference[] {
  const references = taskSchemaReferences(definition, true);
  const own = definition.outputSchema;
  if (own === undefined || definition.enforceSchema === false || references.some((reference) => schemaKey(reference) === schemaKey(own))) return references;
  return [...references, own];
}

/** The schemas the task definitions of `definition`'s tasks name (enforced or not), each once. */
export function taskSchemaReferences(definition: WorkflowDef, enforcedOnly = false): SchemaReference[] {
  const found = new Map<string, SchemaReference>();
  // The definition's own tasks, branches included, read as they are: no plan is built for a start that checks none.
  for (const task of flattenTasks(definition.tasks)) {
    const taskDef = task.taskDefinition;
    if (taskDef === undefined || (enforcedOnly && taskDef.enforceSchema !== true)) continue;
    for (const reference of [taskDef.inputSchema, taskDef.outputSchema]) {
      if (reference !== undefined) found.set(schemaKey(reference), reference);
    }
  }
  return [...found.values()];
}

/**
 * Why a task following `taskDef` may not take `value` as its input or output (`which`): the first problem by the schema
 * it enforces there, or that the schema was not registered when the execution started; undefined when it may (and for
 * a task whose schema the execution does not keep: see `WorkflowDef.schemas`). A task definition enforces its schemas
 * only with `enforceSchema: true`: Conductor's TaskDef flag defaults to false (its WorkflowDef's to true), and its
 * SchemaEnforcement checks a task only when the flag is set, not because a schema is named.
 */
export function taskSchemaFailure(definition: WorkflowDef, taskDef: TaskDef | undefined, which: "input" | "output", value: JsonObject, passed?: (keys: readonly string[]) => boolean): string | undefined {
  const reference = which === "input" ? taskDef?.inputSchema : taskDef?.outputSchema;
  if (reference === undefined || taskDef?.enforceSchema !== true) return undefined;
  return keptSchemaFailure(definition, reference, `The task's ${which}`, which, value, passed);
}

/**
 * Why an execution of `definition` may not end with `output`: the first problem by its enforced `outputSchema` (Orkes'),
 * or that the schema was not registered when it started; undefined when it may.
 */
export function workflowOutputSchemaFailure(definition: WorkflowDef, output: JsonObject): string | undefined {
  const reference = definition.outputSchema;
  if (reference === undefined || definition.enforceSchema === false) return undefined;
  return keptSchemaFailure(definition, reference, "The workflow's output", "output", output);
}

/** `value` (`what`, at paths under `root`) checked against the data `definition` keeps for `reference`. */
function keptSchemaFailure(definition: WorkflowDef, reference: SchemaReference, what: string, root: string, value: JsonObject, passed?: (keys: readonly string[]) => boolean): string | undefined {
  const data = keptSchema(definition, reference);
  if (data === undefined) return undefined;
  if (data === null) return `${what} ${describeSchema(reference)} is not registered`;
  const issues = schemaIssues(data, value, root, passed);
  if (issues.length === 0) return undefined;
  const first = `${issues[0]!.path}: ${issues[0]!.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""}`;
  return `${what} does not match its ${describeSchema(reference)}: ${first}`;
}
