import type { IRequest, RouterType } from "itty-router";
import { givenNames, listedDefinitionNames, mayAccessDefinition, mayReadWorkflowDef, requireWritable } from "../auth/metadata-access";
import { ACCESS, type Access } from "../security/resource-grants";
import { authorizeSecretUse } from "../auth/secret-use";
import { serviceConfig } from "../config";
import { DefinitionRepository, workflowNotFoundMessage, type StoredUpdateTime } from "../definitions";
import { tellLimitChanges, type LimitChange } from "../limit-changes";
import { registeredLimits } from "../../engine/rate-limit";
import { shownWorkflowDef, workflowDefListItem } from "../../engine/view";
import { isRecord, MAX_JAVA_INT } from "../../engine/definition/checks";
import { childPath, type ValidationIssue } from "../../engine/validation-issue";
import { validateRateLimitConfig } from "../../engine/definition/rate-limit-config";
import type { RateLimitConfig, WorkflowDef } from "../../engine/model";
import { BATCH_PATHS, validateDefinitions } from "../definition-validation";
import { TagRepository, registeredTags, withTagOptions, type Tag, type TagTarget } from "../tags";
import { readRequiredJsonBody } from "../http/body";
import { principalOf } from "../guard";
import { notFound, validationError } from "../http/errors";
import { booleanQuery, decodedPathParam, integerQuery, queryValue } from "../http/params";
import { bulkResponse } from "./bulk";

type Args = [Env, ExecutionContext];

/** The request's JSON body, which these routes require. */
export async function requiredBody(request: IRequest, env: Env): Promise<unknown> {
  return readRequiredJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
}

/**
 * A body that registers definitions: a list of them or, as Orkes' docs' curl examples send it, one alone, read as a
 * list of one (`single`: its problems are then named without `[0]`).
 */
export function definitionList(given: unknown): { body: unknown; single: boolean } {
  return isRecord(given) ? { body: [given], single: true } : { body: given, single: false };
}

/**
 * The tag statements of definitions registered together (`inputs[i]` gave `stored[i]`), for their batch. One name given
 * twice with tags (two versions of a workflow) takes the later one's.
 */
export async function registrationTagStatements(env: Env, type: TagTarget["type"], inputs: readonly unknown[], stored: ReadonlyArray<{ name: string }>): Promise<D1PreparedStatement[]> {
  const repository = new TagRepository(env.DB);
  const byName = new Map<string, ReturnType<typeof registeredTags>>();
  inputs.forEach((input, index) => {
    const tags = registeredTags(input, `[${index}]`);
    if (tags !== undefined) byName.set(stored[index]!.name, tags);
  });
  const statements: D1PreparedStatement[] = [];
  for (const [name, tags] of byName) statements.push(...(await repository.registrationStatements({ type, name }, tags)));
  return statements;
}

/** Orkes' `tagKey`, `tagValue` and `metadata` of a listing of definitions (see `withTagOptions`). */
export function tagListingOptions(request: IRequest): {
  tagKey: string | undefined;
  tagValue: string | undefined;
  metadata: boolean;
  /** The tag a listing keeps, for its read to filter by (see `TagRepository.holdingCondition`); undefined: every one. */
  tagged: { key: string; value: string | undefined } | undefined;
} {
  const tagKey = queryValue(request, "tagKey") || undefined;
  const tagValue = queryValue(request, "tagValue");
  if (tagKey === undefined && tagValue !== undefined && tagValue !== "") throw validationError("Invalid query", [{ path: "tagValue", message: "needs tagKey" }]);
  const value = tagKey === undefined ? undefined : tagValue;
  return { tagKey, tagValue: value, metadata: booleanQuery(request, "metadata", false), tagged: tagKey === undefined ? undefined : { key: tagKey, value } };
}

/**
 * Orkes' `access` of a listing of definitions (READ, CREATE, UPDATE, EXECUTE or DELETE; READ when absent or empty): the
 * listing keeps the definitions its caller holds that access to (among those it may read).
 */
export function accessQuery(request: IRequest): Access {
  const given = queryValue(request, "access")?.trim();
  if (given === undefined || given === "") return "READ";
  const access = ACCESS.find((kind) => kind === given.toUpperCase());
  if (access === undefined) throw validationError("Invalid query parameter access", [{ path: "access", message: `must be one of ${ACCESS.join(", ")}` }]);
  return access;
}

/** `definition` with its `tags` when the request asks for them (`metadata=true`, Orkes' `getWorkflowDef(name, version, true)`). */
export async function withOwnTags<T extends { name: string }>(db: D1Database, request: IRequest, type: "WORKFLOW_DEF" | "TASK_DEF", definition: T): Promise<T & { tags?: Tag[] }> {
  if (!booleanQuery(request, "metadata", false)) return definition;
  return { ...definition, tags: await new TagRepository(db).list({ type, name: definition.name }) };
}

/** Sets (or removes) the rate limit of every version of `workflowName`, and tells the keys its executions use. */
async function setRateLimit(env: Env, workflowName: string, config: RateLimitConfig | undefined): Promise<void> {
  const definedAt = await new DefinitionRepository(env.DB).setRateLimit(workflowName, config);
  // Conductor's words, as the GET of the same rate limit (and of the definition) answers an unknown name.
  if (definedAt === undefined) throw notFound(workflowNotFoundMessage(workflowName));
  await tellLimitChanges(env, new Map([[workflowName, { limit: config?.concurrentExecLimit ?? null, definedAt }]]));
}

/**
 * The limit of each name among `definitions` (that of its latest version, see `registeredLimits`), with the updateTime
 * D1 stored that version with (`stored`, the save's answer): what executions started under it enter their key with.
 * A name whose highest version registered here is not its latest in D1 is left out: new starts take that latest
 * version, whose limit still governs; told, the older version's limit, with an updateTime newer than the latest's,
 * would have held the keys for good.
 */
function limitChanges(definitions: readonly WorkflowDef[], stored: readonly StoredUpdateTime[]): Map<string, LimitChange> {
  const changes = new Map<string, LimitChange>();
  for (const [name, limit] of registeredLimits(definitions)) {
    const highest = Math.max(...definitions.filter((definition) => definition.name === name).map((definition) => definition.version));
    const row = stored.find((candidate) => candidate.name === name && candidate.version === highest);
    // Every saved definition has its row answered; a name without one is not told (its keys take it at their next entry).
    if (row?.latest === true) changes.set(name, { limit, definedAt: row.updateTime });
  }
  return changes;
}

/**
 * `definitions` as new versions (Orkes' `newVersion=true`): each the version after the latest registered of its name
 * (1 for a new name), whatever version it gives; a name given twice takes the next two.
 */
async function asNewVersions(env: Env, definitions: WorkflowDef[], single: boolean): Promise<WorkflowDef[]> {
  const latest = await new DefinitionRepository(env.DB).latestVersionNumbers(definitions.map((definition) => definition.name));
  const problems: ValidationIssue[] = [];
  const numbered = definitions.map((definition, index) => {
    const version = (latest.get(definition.name) ?? 0) + 1;
    latest.set(definition.name, version);
    // A version is a Java int in Conductor's models (the bound registration holds every version to): one past it would
    // be stored and then fail every Java client's read of a listing holding it.
    if (version > MAX_JAVA_INT) {
      problems.push({ path: childPath(single ? "" : childPath("", index), "version"), message: `${definition.name} has version ${MAX_JAVA_INT}, the highest a version may be: no new version can follow it` });
    }
    return { ...definition, version };
  });
  if (problems.length > 0) throw validationError("Invalid workflow definition", problems);
  return numbered;
}

/**
 * The definitions among `definitions` the caller may read (a listing reached with the read right on some workflow), as
 * Conductor's WorkflowDef JSON shows them.
 */
function readableBy(request: IRequest, definitions: WorkflowDef[]): WorkflowDef[] {
  const { grants } = principalOf(request);
  return definitions.filter((definition) => mayReadWorkflowDef(grants, definition.name)).map(shownWorkflowDef);
}

function name(request: IRequest): string {
  return decodedPathParam(request, "name");
}

/** Routes of workflow definitions (Conductor's metadata API). */
export function registerMetadataRoutes(router: RouterType<IRequest, Args>): void {
  router.post("/api/metadata/workflow", async (request, env) => {
    const newVersion = booleanQuery(request, "newVersion", false);
    // A new version is never an existing one replaced: registered meanwhile by another request, it is a 409.
    const overwrite = !newVersion && booleanQuery(request, "overwrite", false);
    const body = await requiredBody(request, env);
    const validated = await validateDefinitions([body], env);
    const [definition] = newVersion ? await asNewVersions(env, validated, true) : validated;
    authorizeSecretUse(principalOf(request).grants, [definition!]);
    const tags = await new TagRepository(env.DB).registrationStatements({ type: "WORKFLOW_DEF", name: definition!.name }, registeredTags(body, ""));
    const stored = await new DefinitionRepository(env.DB).save([definition!], overwrite, tags, principalOf(request).userId);
    await tellLimitChanges(env, limitChanges([definition!], stored));
    return new Response(null, { status: 200 });
  });

  // Conductor's validation of a definition, without registering it (a CI step before a deploy): 200 and nothing
  // stored when it would register, a 400 listing every problem otherwise, as the registration would answer.
  router.post("/api/metadata/workflow/validate", async (request, env) => {
    const [definition] = await validateDefinitions([await requiredBody(request, env)], env);
    authorizeSecretUse(principalOf(request).grants, [definition!]);
    return new Response(null, { status: 200 });
  });

  router.put("/api/metadata/workflow", async (request, env) => {
    const { body, single } = definitionList(await requiredBody(request, env));
    if (!Array.isArray(body) || body.length === 0) throw validationError("Invalid request", [{ path: "(body)", message: "must be a workflow definition or a non-empty array of them" }]);
    // Conductor's update replaces; Orkes' clients may ask for `overwrite=false` (a 409 for one that exists) or `newVersion`.
    const newVersion = booleanQuery(request, "newVersion", false);
    const overwrite = !newVersion && booleanQuery(request, "overwrite", true);
    // Checked before validation too, whose messages may tell of other workflows (those a definition names).
    requireWritable(principalOf(request).grants, "workflow", givenNames(body));
    const validated = await validateDefinitions(body, env, single ? undefined : BATCH_PATHS);
    requireWritable(principalOf(request).grants, "workflow", validated.map((definition) => definition.name));
    const definitions = newVersion ? await asNewVersions(env, validated, single) : validated;
    const names = new Set<string>();
    for (const definition of definitions) {
      const key = `${definition.name}@${definition.version}`;
      if (names.has(key)) throw validationError("Invalid request", [{ path: "(body)", message: `${definition.name} version ${definition.version} appears twice` }]);
      names.add(key);
    }
    authorizeSecretUse(principalOf(request).grants, definitions);
    const stored = await new DefinitionRepository(env.DB).save(definitions, overwrite, await registrationTagStatements(env, "WORKFLOW_DEF", body, definitions), principalOf(request).userId);
    await tellLimitChanges(env, limitChanges(definitions, stored));
    // Conductor's update answers a BulkResponse naming each definition updated, in the order given (MetadataResource's
    // `BulkResponse update`, MetadataServiceImpl.updateWorkflowDef); all or nothing here, so every one succeeded.
    const updated = definitions.map((definition) => definition.name);
    return Response.json(bulkResponse(updated, updated.map(() => undefined)));
  });

  router.get("/api/metadata/workflow", async (request, env) => {
    // Orkes' `name` lists the versions of one workflow; `short=true` leaves out their tasks (Orkes' docs: "tasks": []);
    // `access` keeps those the caller holds that access to (Orkes' docs: "The access level being requested").
    const access = accessQuery(request);
    const { grants } = principalOf(request);
    // Short, the tasks are not read at all: they make most of a large definition, and the whole listing of a large
    // tenant is over what one listing answers (a 413 naming `short=true` among the narrower requests).
    const shape = booleanQuery(request, "short", false) ? "withoutTasks" : "whole";
    // Filtered by tag, only the definitions holding it are read.
    const tagOptions = tagListingOptions(request);
    // Only the definitions the caller may list are read (and counted in the listing's bound): see listedDefinitionNames.
    const listed = await new DefinitionRepository(env.DB).list(queryValue(request, "name") || undefined, shape, tagOptions.tagged, listedDefinitionNames(grants, "workflow", access));
    const definitions = readableBy(request, listed.filter((definition) => mayAccessDefinition(grants, "workflow", definition.name, access)));
    return Response.json(await withTagOptions(env.DB, "WORKFLOW_DEF", definitions, tagOptions));
  });

  // Conductor's summaries (MetadataClient's getWorkflowNamesAndVersions, getAllWorkflowsWithLatestVersions). Before
  // `/:name`, which would take them for definitions so named.
  router.get("/api/metadata/workflow/names-and-versions", async (request, env) => {
    const { grants } = principalOf(request);
    // Only the names the caller may list are read (and counted in the listing's bound), as the definitions' listing.
    const byName = await new DefinitionRepository(env.DB).namesAndVersions(listedDefinitionNames(grants, "workflow"));
    return Response.json(Object.fromEntries([...byName].filter(([name]) => mayReadWorkflowDef(grants, name))));
  });
  router.get("/api/metadata/workflow/latest-versions", async (request, env) => {
    const visible = listedDefinitionNames(principalOf(request).grants, "workflow");
    return Response.json(readableBy(request, await new DefinitionRepository(env.DB).latestVersions("whole", visible)));
  });
  // Conductor OSS's lighter listing for its UI's definitions list (WorkflowDefListItem: no tasks, their types and count).
  router.get("/api/metadata/workflow/list", async (request, env) => {
    const { grants } = principalOf(request);
    const latest = (await new DefinitionRepository(env.DB).latestVersions("taskTypes", listedDefinitionNames(grants, "workflow"))).filter((definition) => mayReadWorkflowDef(grants, definition.name));
    return Response.json(latest.map(workflowDefListItem));
  });
  // Conductor's lighter look-ups: the names alone (sorted), and one name's versions as WorkflowDefSummary values.
  router.get("/api/metadata/workflow/names", async (request, env) => {
    const { grants } = principalOf(request);
    const names = await new DefinitionRepository(env.DB).names(listedDefinitionNames(grants, "workflow"));
    return Response.json(names.filter((name) => mayReadWorkflowDef(grants, name)).sort());
  });
  router.get("/api/metadata/workflow/:name/versions", async (request, env) => {
    // That name's rows alone, through its index (every version of every name was read to answer one).
    const versions = await new DefinitionRepository(env.DB).versionsOf(name(request));
    if (versions.length === 0) throw notFound(workflowNotFoundMessage(name(request)));
    return Response.json(versions);
  });

  router.get("/api/metadata/workflow/:name", async (request, env) => {
    // A Java int, as every version is (Conductor's Integer parameter refuses a larger one with a 400).
    const version = integerQuery(request, "version", 0, MAX_JAVA_INT);
    const definition = await new DefinitionRepository(env.DB).get(name(request), version, true);
    return Response.json(await withOwnTags(env.DB, request, "WORKFLOW_DEF", shownWorkflowDef(definition)));
  });

  // Orkes' rate limit of a workflow (the clients' setWorkflowRateLimit): the `rateLimitConfig` of all its versions.
  // Before the version delete, which would take "rate-limit" for a version.
  router.get("/api/metadata/workflow/:name/rate-limit", async (request, env) => {
    const config = (await new DefinitionRepository(env.DB).get(name(request), undefined, true)).rateLimitConfig;
    if (config === undefined) throw notFound(`Workflow ${name(request)} has no rate limit`);
    return Response.json(config);
  });

  router.put("/api/metadata/workflow/:name/rate-limit", async (request, env) => {
    const result = validateRateLimitConfig(await requiredBody(request, env));
    if (!result.ok) throw validationError("Invalid rate limit", result.errors);
    await setRateLimit(env, name(request), result.value);
    return new Response(null, { status: 200 });
  });

  router.delete("/api/metadata/workflow/:name/rate-limit", async (request, env) => {
    await setRateLimit(env, name(request), undefined);
    return new Response(null, { status: 200 });
  });

  router.delete("/api/metadata/workflow/:name/:version", async (request, env) => {
    const version = Number(request.params["version"]);
    if (!Number.isInteger(version) || version < 0 || version > MAX_JAVA_INT) throw validationError("Invalid version", [{ path: "version", message: `must be an integer from 0 to ${MAX_JAVA_INT}` }]);
    // Told with a time after every updateTime of the name (which the keys may have been told), taken before the
    // deletion: a registration stored after it takes a later one (D1 records it with the name), whatever its clock.
    const deleted = await new DefinitionRepository(env.DB).delete(name(request), version, Date.now());
    if (deleted === undefined) throw notFound(`No such workflow found by name: ${name(request)}, version: ${version}`);
    // The latest version deleted: new starts take the version left latest, whose limit (or none, when no version is
    // left) the keys of the workflow's executions take now, as for a registration; executions waiting under the deleted
    // version's limit are admitted by a higher one (or none) rather than waiting under a limit no definition has.
    // Another version deleted changes nothing that governs, and is not told: it would make this workflow's limit that
    // of a key other workflows share, which their own registrations had set since.
    if (deleted.latest === undefined || deleted.latest.version < version) {
      await tellLimitChanges(env, new Map([[name(request), { limit: deleted.latest?.limit ?? null, definedAt: deleted.deletedAt }]]));
    }
    return new Response(null, { status: 200 });
  });
}
