import type { IRequest, RouterType } from "itty-router";
import { authorizeRead, principalOf } from "../guard";
import { workflowNotFoundMessage } from "../definitions";
import { listedDefinitionNames } from "../auth/metadata-access";
import { grantsAllow, type Permission } from "../auth/permissions";
import { ApiError, notFound, validationError } from "../http/errors";
import { decodedPathParam, queryValue } from "../http/params";
import { parseOrThrow } from "../schemas";
import { mayOnSchedule, requireOnSchedule, schedulesReadable } from "../schedules/access";
import { ScheduleRepository } from "../schedules/store";
import { TAGGED_RESOURCE_TYPES, TagListSchema, TagRepository, TagSchema, type Tag, type TaggedResourceType, type TagTarget } from "../tags";
import { HumanTemplateTag } from "../human-schemas";
import { requiredBody } from "./metadata";
import { scheduleJson } from "./schedules";

type Args = [Env, ExecutionContext];

/**
 * The thing a tags route names, once the caller may act on it as asked (`write`: change its tags): a workflow
 * definition's and a task definition's tags are authorized by the access rules alone, a schedule's by its workflow.
 */
type TargetOf = (request: IRequest, env: Env, write: boolean) => Promise<TagTarget>;

const WHAT: Record<TagTarget["type"], string> = {
  WORKFLOW_DEF: "workflow definition",
  TASK_DEF: "task definition",
  SCHEDULE: "schedule",
  EVENT_HANDLER: "event handler",
  SECRET: "secret",
  ENV_VARIABLE: "environment variable",
};

/**
 * The 404 of a target not there. A workflow or task definition's in Conductor's words, as `GET /api/metadata/workflow/{name}`
 * and `GET /api/metadata/taskdefs/{name}` answer them (MetadataServiceImpl.getWorkflowDef and getTaskDef): clients look
 * for them, and a definition's tags answered in other words than the definition itself.
 */
function missing(target: TagTarget) {
  if (target.type === "WORKFLOW_DEF") return notFound(workflowNotFoundMessage(target.name));
  if (target.type === "TASK_DEF") return notFound(`No such taskType found by name: ${target.name}`);
  return notFound(`No ${WHAT[target.type]} named ${target.name}`);
}

const named =
  (type: TagTarget["type"], param: string): TargetOf =>
  async (request) => ({ type, name: decodedPathParam(request, param) });

/** A schedule's tags: read with the right to read it, changed with the right to manage it (both by its workflow). */
const schedule: TargetOf = async (request, env, write) => {
  const name = decodedPathParam(request, "name");
  const stored = await new ScheduleRepository(env.DB).get(name);
  requireOnSchedule(principalOf(request).grants, write ? "manage" : "read", stored?.workflowName, `${write ? "tagging" : "reading the tags of"} schedule ${name}`);
  return { type: "SCHEDULE", name };
};

/** Reads the tags of the target at `path`. */
function listRoute(targetOf: TargetOf) {
  return async (request: IRequest, env: Env): Promise<Response> => {
    const target = await targetOf(request, env, false);
    const repository = new TagRepository(env.DB);
    if (!(await repository.exists(target))) throw missing(target);
    return Response.json(await repository.list(target));
  };
}

/** Changes the tags of the target at `path` as `act` does with the body; 200 with no body once done. */
function changeRoute(targetOf: TargetOf, act: (repository: TagRepository, target: TagTarget, body: unknown) => Promise<boolean>) {
  return async (request: IRequest, env: Env): Promise<Response> => {
    const target = await targetOf(request, env, true);
    if (!(await act(new TagRepository(env.DB), target, await requiredBody(request, env)))) throw missing(target);
    return new Response(null, { status: 200 });
  };
}

const addOne = (repository: TagRepository, target: TagTarget, body: unknown) => repository.add(target, [parseOrThrow(TagSchema, body, "tag")]);
const addAll = (repository: TagRepository, target: TagTarget, body: unknown) => repository.add(target, parseOrThrow(TagListSchema, body, "tags"));
const replaceAll = (repository: TagRepository, target: TagTarget, body: unknown) => repository.set(target, parseOrThrow(TagListSchema, body, "tags"));
const removeAll = async (repository: TagRepository, target: TagTarget, body: unknown) => (await repository.remove(target, parseOrThrow(TagListSchema, body, "tags"))) !== undefined;

/** Removes the one tag of the body: as Orkes, a tag the target does not hold is a 404 too. */
async function removeOne(repository: TagRepository, target: TagTarget, body: unknown): Promise<boolean> {
  const tag = parseOrThrow(TagSchema, body, "tag");
  const removed = await repository.remove(target, [tag]);
  if (removed === 0) throw notFound(`The ${WHAT[target.type]} ${target.name} has no tag ${tag.key}=${tag.value}`);
  return removed !== undefined;
}

/** What reading each kind of resource needs beyond the metadata reads of the route's access rule (at `*`): a secret's names are SYSTEM_ADMIN's, whatever any rule says. */
const RESOURCE_READ_PERMISSION: Partial<Record<TaggedResourceType, Permission>> = {
  SECRET_NAME: "SYSTEM_ADMIN",
};

/**
 * The listing of each kind whose ids show as much as it does (a webhook's id is its inbound URL's path, an environment
 * variable's name tells what the workflows read, event handlers' and applications' names as their listings show them):
 * the caller must be let in there too, by the same rules, stored ones included. A stored rule opening this route wider
 * than the defaults (`WORKFLOW_READ` at `*`, or `METADATA_ADMIN`) would otherwise show them to callers their own
 * listings refuse.
 */
const RESOURCE_LISTING: Partial<Record<TaggedResourceType, string>> = {
  WEBHOOK: "/api/metadata/webhook",
  ENV_VARIABLE: "/api/environment",
  EVENT_HANDLER: "/api/event",
  APPLICATION: "/api/applications",
};

/** The query of `GET /api/metadata/tags/resources`: `tagKey`, `tagValue` and `resourceType`, each required. */
function resourcesQuery(request: IRequest): { resourceType: TaggedResourceType; tag: Tag } {
  const issues: Array<{ path: string; message: string }> = [];
  for (const name of ["tagKey", "tagValue", "resourceType"]) if (queryValue(request, name) === undefined) issues.push({ path: name, message: "is required" });
  const resourceType = queryValue(request, "resourceType");
  if (resourceType !== undefined && !(TAGGED_RESOURCE_TYPES as readonly string[]).includes(resourceType)) {
    issues.push({ path: "resourceType", message: `must be one of ${TAGGED_RESOURCE_TYPES.join(", ")}` });
  }
  if (issues.length > 0) throw validationError("Invalid resources by tag", issues);
  try {
    // Checked as the kind asked for takes its tags: a form's value may be longer, its key empty, and such a form is found.
    const schema = resourceType === "USER_FORM_TEMPLATE" ? HumanTemplateTag : TagSchema;
    return { resourceType: resourceType as TaggedResourceType, tag: parseOrThrow(schema, { key: queryValue(request, "tagKey"), value: queryValue(request, "tagValue") }, "tag") };
  } catch (error) {
    // Named as the query names them.
    if (!(error instanceof ApiError) || error.validationErrors === undefined) throw error;
    throw validationError("Invalid resources by tag", error.validationErrors.map((issue) => ({ ...issue, path: issue.path === "key" ? "tagKey" : issue.path === "value" ? "tagValue" : issue.path })));
  }
}

/** A `tag` query parameter, `key:value` (Orkes' lookup of schedules by tag). */
function tagQuery(request: IRequest): Tag {
  const value = queryValue(request, "tag") ?? "";
  const colon = value.indexOf(":");
  if (colon <= 0) throw validationError("Invalid query parameter tag", [{ path: "tag", message: "must be key:value, such as team:billing" }]);
  return parseOrThrow(TagSchema, { key: value.slice(0, colon), value: value.slice(colon + 1) }, "tag", "tag");
}

/**
 * Orkes' tags (`{key, value}`, one value per key): on workflow definitions (every version of a name) and task
 * definitions (MetadataClient's `addWorkflowTag`, `setTaskTags`, …: POST adds one, PUT replaces all, DELETE removes
 * one), on schedules (SchedulerClient's `setSchedulerTags`, … and the lookup of schedules by tag) and on event handlers
 * (EventClient's `putTagForEventHandler`, …), on secrets (SecretClient's `setSecretTags`, …) and on environment
 * variables (EnvironmentClient's `setEnvironmentVariableTags`, …), where PUT adds and
 * DELETE removes a list; and the list of every tag in use. Registered before the routes of what they tag, whose `/{name}/{version}` would take `…/{name}/tags`.
 */
export function registerTagRoutes(router: RouterType<IRequest, Args>): void {
  for (const [path, targetOf] of [
    ["/api/metadata/workflow/:name/tags", named("WORKFLOW_DEF", "name")],
    ["/api/metadata/task/:taskName/tags", named("TASK_DEF", "taskName")],
  ] as const) {
    router.get(path, listRoute(targetOf));
    router.post(path, changeRoute(targetOf, addOne));
    router.put(path, changeRoute(targetOf, replaceAll));
    router.delete(path, changeRoute(targetOf, removeOne));
  }
  // Before `/api/scheduler/schedules/:name`, which it would otherwise be (no schedule may be named "tags").
  router.get("/api/scheduler/schedules/tags", async (request, env) => {
    const tag = tagQuery(request);
    const grants = principalOf(request).grants;
    const now = Date.now();
    const holders = await new ScheduleRepository(env.DB).named(await new TagRepository(env.DB).holders("SCHEDULE", tag));
    return Response.json(holders.filter((stored) => mayOnSchedule(grants, "read", stored.workflowName)).map((stored) => scheduleJson(stored, now)));
  });
  for (const [path, targetOf] of [
    ["/api/scheduler/schedules/:name/tags", schedule],
    ["/api/event/:name/tags", named("EVENT_HANDLER", "name")],
    // SecretClient's setSecretTags, getSecretTags, deleteSecretTags (SYSTEM_ADMIN, as the secrets).
    ["/api/secrets/:name/tags", named("SECRET", "name")],
    // EnvironmentClient's setEnvironmentVariableTags, … (read and written as the variables are, see access-rules.ts).
    ["/api/environment/:name/tags", named("ENV_VARIABLE", "name")],
  ] as const) {
    router.get(path, listRoute(targetOf));
    router.put(path, changeRoute(targetOf, addAll));
    router.delete(path, changeRoute(targetOf, removeAll));
  }
  router.get("/api/metadata/tags", async (_request, env) => Response.json(await new TagRepository(env.DB).all()));
  // Orkes' getResourcesByTag: the things of one kind holding a tag, each as {id, displayName}.
  router.get("/api/metadata/tags/resources", async (request, env) => {
    const { resourceType, tag } = resourcesQuery(request);
    const grants = principalOf(request).grants;
    // The route's access rule (metadata reads) lets the caller in; secrets need more, and the kinds with a listing of
    // their own are read as that listing is.
    const needed = RESOURCE_READ_PERMISSION[resourceType];
    if (needed !== undefined && !grantsAllow(grants, needed, "*")) {
      throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: the resources of type ${resourceType} by tag need ${needed} on *, as reading them does`);
    }
    const listing = RESOURCE_LISTING[resourceType];
    if (listing !== undefined) await authorizeRead(request, env, listing);
    // Filtered in D1 before the bound (a page of things the caller may not read, sorting first, left out those he
    // may): schedules by the read right of each one's workflow; definitions by name as their listings filter them,
    // so that a stored rule letting more callers reach this route shows none a caller could not read at its own.
    const visible =
      resourceType === "WORKFLOW_SCHEDULE" ? [schedulesReadable(grants)]
      : resourceType === "WORKFLOW_DEF" ? listedDefinitionNames(grants, "workflow")
      : resourceType === "TASK_DEF" ? listedDefinitionNames(grants, "task")
      : [];
    return Response.json(await new TagRepository(env.DB).resources(resourceType, tag, visible));
  });
}
