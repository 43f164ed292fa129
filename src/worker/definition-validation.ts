import { rawTaskEntries, TEMPLATE_COMPLETED_TYPES, validateWorkflowDef, type DefinitionResult, type ValidationContext } from "../engine/definition/validate";
import { isRecord } from "../engine/definition/checks";
import { TaskDefRepository } from "./task-defs";
import { definitionJqFilters, definitionScripts, type DefinitionScript } from "../engine/definition/scripts";
import { oversize, oversizeReason } from "../engine/limits";
import type { JsonObject, SchemaReference, WorkflowDef } from "../engine/model";
import { childPath, type ValidationIssue } from "../engine/validation-issue";
import { loadJqRunner } from "../actors/jq/load";
import { loadScriptRunner } from "../actors/scripts/load";
import { serviceConfig } from "./config";
import { SchemaRepository, describeSchema, unregisteredSchemas } from "./json-schemas";
import { taskSchemaReferences } from "../engine/json-schema";
import { validationError } from "./http/errors";

/**
 * Problems of a valid definition that depend on the configuration: its `variables`, copied into each execution's
 * own row beside its input and output, may be no larger than those (MAX_PAYLOAD_BYTES).
 */
function configuredLimitIssues(definition: WorkflowDef, env: Env): ValidationIssue[] {
  if (definition.variables === undefined) return [];
  const limit = serviceConfig(env).engine.maxPayloadBytes;
  const bytes = oversize(definition.variables, limit);
  return bytes === undefined ? [] : [{ path: "variables", message: oversizeReason("variables", bytes, limit) }];
}

/**
 * Problems with the fixed texts of a definition as received (`texts`: its scripts, or its jq filters), each found by
 * `problem` with the runner `load` gives; the runner is loaded only for a definition that has some.
 */
async function textIssues<R>(texts: DefinitionScript[], load: () => Promise<R>, problem: (runner: R, source: string) => string | undefined): Promise<ValidationIssue[]> {
  if (texts.length === 0) return [];
  const runner = await load();
  return texts.flatMap(({ source, path }) => {
    const message = problem(runner, source);
    return message === undefined ? [] : [{ path, message }];
  });
}

/** Scripts of a definition as received that do not parse (INLINE scripts, SWITCH javascript expressions). */
function scriptSyntaxIssues(definition: unknown): Promise<ValidationIssue[]> {
  return textIssues(definitionScripts(definition), loadScriptRunner, (runner, source) => {
    const error = runner.syntaxError(source);
    return error === undefined ? undefined : `the script does not parse as JavaScript: ${error}`;
  });
}

/**
 * JSON_JQ_TRANSFORM filters of a definition as received that do not compile. One `accepted` by an earlier registration
 * is only parsed again: the names and missing expressions jq 1.6 refuses were not checked before, and a filter that
 * registered and ran then (a misspelt function in a branch never taken) must not fail the workflow holding it now.
 */
function jqCompileIssues(definition: unknown, accepted: boolean): Promise<ValidationIssue[]> {
  return textIssues(definitionJqFilters(definition), loadJqRunner, (runner, source) => {
    const error = runner.compileError(source, accepted);
    return error === undefined ? undefined : `the jq filter does not compile: ${error}`;
  });
}

/**
 * A definition's `inputSchema` and `outputSchema`, and those of its inline task definitions, must name registered
 * schemas: a start would otherwise be refused, or the task or the execution fail, for want of them.
 */
async function schemaReferenceIssues(definition: WorkflowDef, env: Env): Promise<ValidationIssue[]> {
  const notRegistered = (reference: SchemaReference) => `names ${describeSchema(reference)}, which is not registered (register it with POST /api/schema first)`;
  const issues: ValidationIssue[] = [];
  for (const field of ["inputSchema", "outputSchema"] as const) {
    const reference = definition[field];
    if (reference === undefined) continue;
    for (const missing of await unregisteredSchemas(env.DB, [reference])) issues.push({ path: field, message: notRegistered(missing) });
  }
  const taskLevel = await unregisteredSchemas(env.DB, taskSchemaReferences(definition));
  return [...issues, ...taskLevel.map((reference) => ({ path: "tasks", message: `a task's taskDefinition ${notRegistered(reference)}` }))];
}

/** Every schema `definition` names: its own `inputSchema` and `outputSchema`, and its tasks' definitions'. */
function schemasNamed(definition: WorkflowDef): SchemaReference[] {
  return [definition.inputSchema, definition.outputSchema, ...taskSchemaReferences(definition)].filter((reference) => reference !== undefined);
}

/**
 * The names of `input`'s HTTP and JSON_JQ_TRANSFORM tasks without an inline `taskDefinition`, as received: the
 * `inputTemplate` of a registered task definition of that name may hold what such a task requires.
 */
function templateTaskNames(input: unknown): string[] {
  if (!isRecord(input) || !Array.isArray(input["tasks"])) return [];
  const names = new Set<string>();
  for (const { task } of rawTaskEntries(input["tasks"], "tasks")) {
    if (isRecord(task) && TEMPLATE_COMPLETED_TYPES.has(task["type"]) && typeof task["name"] === "string" && task["taskDefinition"] == null) names.add(task["name"]);
  }
  return [...names];
}

/**
 * {@link validateWorkflowDef} of each input, and for one with problems, again with the `inputTemplate`s of the
 * registered task definitions its HTTP and JSON_JQ_TRANSFORM tasks follow: one may hold what such a task requires.
 * Read only then, so valid definitions cost no read, and for all the inputs at once: one read per definition passed
 * Workers Free's 50 queries an invocation with some 50 registered together that each rely on a template.
 */
async function validatedWithTemplates(inputs: readonly unknown[], env: Env, context: ValidationContext): Promise<DefinitionResult[]> {
  const results = inputs.map((input) => validateWorkflowDef(input, context));
  const namesOf = results.map((result, index) => (result.ok ? [] : templateTaskNames(inputs[index])));
  const wanted = [...new Set(namesOf.flat())];
  if (wanted.length === 0) return results;
  const taskDefs = await new TaskDefRepository(env.DB).findMany(wanted);
  return results.map((result, index) => {
    const templates = new Map<string, JsonObject>();
    for (const name of namesOf[index]!) {
      const template = taskDefs.get(name)?.inputTemplate;
      if (template !== undefined && Object.keys(template).length > 0) templates.set(name, template);
    }
    return templates.size === 0 ? result : validateWorkflowDef(inputs[index], { ...context, registeredInputTemplates: templates });
  });
}

/**
 * Validates workflow definitions as received, as a registration does (the definition's rules, the configured limits,
 * the schemas it names, its scripts and jq filters): every problem of every definition is reported, each path under `at(i)` (`[i]` for
 * a batch, `workflowDef` for an inline definition, none for a single registration). Refused with one 400. With
 * `accepted`, the definitions were accepted by an earlier registration and are checked again as they run: the rules
 * that only catch mistakes at registration are left out (see `ValidationContext.accepted`).
 */
export async function validateDefinitions(inputs: readonly unknown[], env: Env, at: (index: number) => string = () => "", accepted = false): Promise<WorkflowDef[]> {
  const definitions: WorkflowDef[] = [];
  const problems: ValidationIssue[] = [];
  const results = await validatedWithTemplates(inputs, env, accepted ? { accepted } : {});
  // The schemas every definition names, read in one D1 statement before each definition's check finds them cached: one
  // read per definition passed Workers Free's 50 queries an invocation with some 50 definitions registered together.
  await new SchemaRepository(env.DB).findMany(results.flatMap((result) => (result.ok ? schemasNamed(result.value) : [])));
  for (const [index, input] of inputs.entries()) {
    const result = results[index]!;
    const errors = [
      ...(result.ok ? [...configuredLimitIssues(result.value, env), ...(await schemaReferenceIssues(result.value, env))] : result.errors),
      ...(await scriptSyntaxIssues(input)),
      ...(await jqCompileIssues(input, accepted)),
    ];
    if (result.ok && errors.length === 0) definitions.push(result.value);
    else problems.push(...errors.map((issue) => ({ ...issue, path: underPath(at(index), issue.path) })));
  }
  if (problems.length > 0) throw validationError("Invalid workflow definition", problems);
  return definitions;
}

/** `path` under `parent`: `[0]` and `name` give `[0].name`, `workflowDef` and `tasks[1]` give `workflowDef.tasks[1]`. */
function underPath(parent: string, path: string): string {
  if (parent === "" || path === "") return parent || path;
  return path.startsWith("[") ? `${parent}${path}` : childPath(parent, path);
}

/** Paths of a batch's definitions: `[i].` before each. */
export const BATCH_PATHS = (index: number): string => `[${index}]`;
