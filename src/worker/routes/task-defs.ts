import type { IRequest, RouterType } from "itty-router";
import { validateTaskDef } from "../../engine/definition/task-def";
import type { TaskDef } from "../../engine/model";
import { shownTaskDef } from "../../engine/view";
import { childPath, type ValidationIssue } from "../../engine/validation-issue";
import { notFound, validationError } from "../http/errors";
import { booleanQuery, decodedPathParam } from "../http/params";
import { TaskDefRepository } from "../task-defs";
import { describeSchema, unregisteredSchemas } from "../json-schemas";
import { schemaKey } from "../../engine/json-schema";
import { principalOf } from "../guard";
import { givenNames, listedDefinitionNames, mayAccessDefinition, mayReadTaskDef, requireTemplateWriter, requireWritable } from "../auth/metadata-access";
import { accessQuery, definitionList, registrationTagStatements, requiredBody, tagListingOptions, withOwnTags } from "./metadata";
import { TagRepository, registeredTags, withTagOptions } from "../tags";
import { handOutLimits } from "../../engine/tasks/simple";
import { taskLimitAt } from "../../actors/task-limit";
import { TaskOutputCache } from "../task-output-cache";

type Args = [Env, ExecutionContext];

/** Most task definitions one request registers: they are written in one atomic D1 batch. */
export const MAX_TASK_DEFS_PER_REQUEST = 100;

/** Validates each task definition (`[i].` paths when `indexed`); every problem of every one is reported. */
function validateAll(inputs: readonly unknown[], indexed: boolean): TaskDef[] {
  const taskDefs: TaskDef[] = [];
  const problems: ValidationIssue[] = [];
  inputs.forEach((input, index) => {
    const result = validateTaskDef(input, { path: indexed ? childPath("", index) : "" });
    if (result.ok) taskDefs.push(result.value);
    else problems.push(...result.errors);
  });
  const seen = new Set<string>();
  for (const taskDef of taskDefs) {
    if (seen.has(taskDef.name)) problems.push({ path: "(body)", message: `task definition ${JSON.stringify(taskDef.name)} appears twice` });
    seen.add(taskDef.name);
  }
  if (problems.length > 0) throw validationError("Invalid task definition", problems);
  return taskDefs;
}

/** Refuses task definitions whose `inputSchema` or `outputSchema` names no registered schema (`[i].` paths when `indexed`). */
async function checkSchemasRegistered(env: Env, taskDefs: readonly TaskDef[], indexed: boolean): Promise<void> {
  const problems: ValidationIssue[] = [];
  // All of them read at once (one D1 statement): one read per schema passed Workers Free's 50 queries an invocation
  // with some 50 task definitions registered together.
  const named = taskDefs.flatMap((taskDef) => [taskDef.inputSchema, taskDef.outputSchema].filter((reference) => reference !== undefined));
  const missing = new Set((await unregisteredSchemas(env.DB, named)).map(schemaKey));
  for (const [index, taskDef] of taskDefs.entries()) {
    for (const field of ["inputSchema", "outputSchema"] as const) {
      const reference = taskDef[field];
      if (reference === undefined || !missing.has(schemaKey(reference))) continue;
      problems.push({ path: childPath(indexed ? childPath("", index) : "", field), message: `names ${describeSchema(reference)}, which is not registered (register it with POST /api/schema first)` });
    }
  }
  if (problems.length > 0) throw validationError("Invalid task definition", problems);
}


/**
 * Saves `taskDefs`, then tells the limit objects of their names the limits registered now (see {@link tellLimits}).
 */
async function saveAndTellLimits(env: Env, taskDefs: readonly TaskDef[], save: (repository: TaskDefRepository) => Promise<Map<string, number>>): Promise<void> {
  const repository = new TaskDefRepository(env.DB);
  const before = await repository.findMany(taskDefs.map((taskDef) => taskDef.name));
  const updateTimes = await save(repository);
  const now = Date.now();
  await tellLimits(env, taskDefs.map((taskDef) => ({ name: taskDef.name, before: before.get(taskDef.name), after: taskDef, definedAt: updateTimes.get(taskDef.name) ?? now })));
}

/**
 * Tells the limit objects of task definitions just registered or deleted (`after` undefined) their limits now (see
 * `TaskLimit.resize`), when they had limits before or have some now: tasks waiting for a place under limits raised,
 * removed or deleted run at once (not those waiting under their own `taskDefinition`'s, which still hold). The change
 * is stored either way: an object not told keeps the old limits until an execution started under a newer definition
 * asks, so a failure here is logged, not answered. `definedAt` is a registered definition's stored updateTime (what the
 * executions started under it tell the object too), or when a deletion was asked for: a time taken after the write, as
 * this was, could be later than that of a registration stored after it in another isolate, whose limits the object then
 * passed over for the older ones for good.
 */
async function tellLimits(env: Env, changes: ReadonlyArray<{ name: string; before: TaskDef | undefined; after: TaskDef | undefined; definedAt: number }>): Promise<void> {
  const changed = changes.filter((change) => handOutLimits({ taskDefinition: change.after }) !== undefined || handOutLimits({ taskDefinition: change.before }) !== undefined);
  if (changed.length === 0) return;
  const told = await Promise.allSettled(changed.map((change) => taskLimitAt(env, change.name).resize(handOutLimits({ taskDefinition: change.after }) ?? null, change.definedAt)));
  const failed = told.filter((outcome) => outcome.status === "rejected").length;
  if (failed > 0) console.error(JSON.stringify({ msg: "task definition limits not told to some limit objects", taskDefs: changed.map((change) => change.name), notTold: failed }));
}

/**
 * Routes of task definitions (Conductor's `/api/metadata/taskdefs`). Both POST (a list) and PUT (one) create
 * or replace, as the official clients expect (their workers register with PUT whether or not one exists).
 */
export function registerTaskDefRoutes(router: RouterType<IRequest, Args>): void {
  router.post("/api/metadata/taskdefs", async (request, env) => {
    const { body, single } = definitionList(await requiredBody(request, env));
    if (!Array.isArray(body) || body.length === 0 || body.length > MAX_TASK_DEFS_PER_REQUEST) {
      throw validationError("Invalid request", [
        { path: "(body)", message: `must be a task definition or a non-empty array of at most ${MAX_TASK_DEFS_PER_REQUEST} of them` },
      ]);
    }
    requireWritable(principalOf(request).grants, "task", givenNames(body));
    const taskDefs = validateAll(body, !single);
    requireWritable(principalOf(request).grants, "task", taskDefs.map((taskDef) => taskDef.name));
    requireTemplateWriter(principalOf(request).grants, taskDefs);
    await checkSchemasRegistered(env, taskDefs, true);
    const tags = await registrationTagStatements(env, "TASK_DEF", body, taskDefs);
    await saveAndTellLimits(env, taskDefs, (repository) => repository.save(taskDefs, tags, principalOf(request).userId));
    return new Response(null, { status: 200 });
  });

  router.put("/api/metadata/taskdefs", async (request, env) => {
    const body = await requiredBody(request, env);
    requireWritable(principalOf(request).grants, "task", givenNames([body]));
    const taskDefs = validateAll([body], false);
    requireWritable(principalOf(request).grants, "task", [taskDefs[0]!.name]);
    requireTemplateWriter(principalOf(request).grants, taskDefs);
    await checkSchemasRegistered(env, taskDefs, false);
    const tags = await new TagRepository(env.DB).registrationStatements({ type: "TASK_DEF", name: taskDefs[0]!.name }, registeredTags(body, ""));
    await saveAndTellLimits(env, taskDefs, (repository) => repository.save(taskDefs, tags, principalOf(request).userId));
    return new Response(null, { status: 200 });
  });

  router.get("/api/metadata/taskdefs", async (request, env) => {
    // Orkes' `access` keeps those the caller holds that access to, among those it may read.
    const access = accessQuery(request);
    const { grants } = principalOf(request);
    // Filtered by tag, only the definitions holding it are read.
    const tagOptions = tagListingOptions(request);
    // Only the definitions the caller may list are read (and counted in the listing's bound): see listedDefinitionNames.
    const visible = listedDefinitionNames(grants, "task", access);
    const listed = (taskDef: { name: string }) => mayReadTaskDef(grants, taskDef.name) && mayAccessDefinition(grants, "task", taskDef.name, access);
    // `short=true` (this service's, as the workflow and schema listings have one): the names alone, `[{name}]`, which
    // every client reading TaskDefs parses; the names to read one at a time past the listing's bound.
    const shown = booleanQuery(request, "short", false)
      ? (await new TaskDefRepository(env.DB).list(tagOptions.tagged, visible, true)).filter(listed)
      : (await new TaskDefRepository(env.DB).list(tagOptions.tagged, visible)).filter(listed).map(shownTaskDef);
    return Response.json(await withTagOptions(env.DB, "TASK_DEF", shown, tagOptions));
  });

  router.get("/api/metadata/taskdefs/:name", async (request, env) => {
    const name = decodedPathParam(request, "name");
    const taskDef = await new TaskDefRepository(env.DB).findCurrent(name);
    // Conductor's words (MetadataServiceImpl.getTaskDef): its clients' tests, and code deciding whether to register a
    // task definition, look for them.
    if (!taskDef) throw notFound(`No such taskType found by name: ${name}`);
    return Response.json(await withOwnTags(env.DB, request, "TASK_DEF", shownTaskDef(taskDef)));
  });

  router.delete("/api/metadata/taskdefs/:name", async (request, env) => {
    const name = decodedPathParam(request, "name");
    const repository = new TaskDefRepository(env.DB);
    const before = await repository.find(name);
    // Told with a time after the deleted definition's own updateTime, which the object may have been told; a
    // registration stored after the deletion takes its updateTime after it (D1 records it with the name), whatever the
    // clock of the isolate saving it.
    const deletedAt = await repository.delete(name, Date.now());
    if (deletedAt === undefined) throw notFound(`No task definition named ${name}`);
    // Its limits go with it: tasks waiting under them run (as when it is registered anew without limits).
    await tellLimits(env, [{ name, before: before ?? undefined, after: undefined, definedAt: deletedAt }]);
    return new Response(null, { status: 200 });
  });

  // Orkes' AdminResource `clearTaskExecutionCache` (the Python SDK's AdminResourceApi.clear_task_execution_cache): the
  // outputs a task's cacheConfig stored under its task name, so the next task of that name runs instead of reusing
  // one. 200 without a body, as Orkes answers (void), whether or not anything was cached or a definition is registered:
  // HTTP tasks cache under their name with none.
  router.post("/api/admin/cache/clear/:taskDefName", async (request, env) => {
    await new TaskOutputCache(env.DB).clear(decodedPathParam(request, "taskDefName"));
    return new Response(null, { status: 200 });
  });
}
