import type { IRequest, RouterType } from "itty-router";
import type { JsonObject, JsonValue } from "../../engine/model";
import type { HumanAction } from "../../engine/tasks/human/progress";
import { assignmentsFrom, type FormReference } from "../../engine/tasks/human/settings";
import { serviceConfig } from "../config";
import { executionStub, retryingExecutionCall, unwrap } from "../executions";
import { principalOf, requestAuthorizer } from "../guard";
import { jsonTextResponse, readJsonBody } from "../http/body";
import { ApiError, notFound, validationError } from "../http/errors";
import { decodedPathParam, queryParams } from "../http/params";
import {
  ClaimQuery,
  DisplayNamesQuery,
  FormBody,
  HumanTaskIds,
  HumanTaskSearchRequest,
  HumanTemplateList,
  HumanTemplateRequest,
  HumanTemplateTagList,
  ListTemplatesQuery,
  SaveTemplateQuery,
  SkipQuery,
  TemplateName,
  UpdateByRefQuery,
  UpdateQuery,
  WithTemplateQuery,
} from "../human-schemas";
import { groupIdsOf, humanCallerContext, humanTaskAtHand, humanTaskDisplayNames, searchHumanTasks, type HumanTaskAtHand } from "../human-tasks";
import { HumanTemplateRepository, type HumanTemplate } from "../human-templates";
import { integerParam, parseOrThrow } from "../schemas";
import { lookUpCandidates, taskAmong } from "../task-lookup";
import { bulkOutcome, distinct } from "./bulk";

type Args = [Env, ExecutionContext];

/**
 * The request's JSON body, read by `parse` (which refuses what does not fit with a 400); an absent body is read as
 * `whenAbsent` (undefined unless given). A JSON `null` is a body, and no form or list.
 */
async function body<T>(request: IRequest, env: Env, parse: (value: unknown) => T, whenAbsent?: unknown): Promise<T> {
  const read = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  return parse(read.present ? read.value : whenAbsent);
}

/** The user form HUMAN task `entry` names, if it names one and it is saved. */
async function formOf(env: Env, entry: JsonObject): Promise<HumanTemplate | undefined> {
  const settings = entry["humanTaskDef"] as JsonObject | undefined;
  const form = settings?.["userFormTemplate"] as { name?: unknown; version?: unknown } | undefined;
  if (typeof form?.name !== "string") return undefined;
  const reference: FormReference = typeof form.version === "number" && form.version > 0 ? { name: form.name, version: form.version } : { name: form.name };
  return new HumanTemplateRepository(env.DB).forForm(reference);
}

/** `entry` with its form's template in `humanTaskDef.fullTemplate` (Orkes' `withTemplate`), when it names a saved one. */
async function withTemplate(env: Env, entry: JsonObject, wanted: boolean): Promise<JsonObject> {
  if (!wanted) return entry;
  const template = await formOf(env, entry);
  if (template === undefined) return entry;
  return { ...entry, humanTaskDef: { ...(entry["humanTaskDef"] as JsonObject), fullTemplate: template as unknown as JsonValue } };
}

/** Applies `action` to the human task at hand; the entry as it then stands. */
async function act(env: Env, at: HumanTaskAtHand, action: HumanAction): Promise<JsonObject> {
  const json = unwrap(await executionStub(env, at.found.workflowId).humanAction(at.entry["taskId"] as string, at.caller, action));
  return JSON.parse(json) as JsonObject;
}

/** Saves or submits the form of the human task at hand (checked against its user form's schema when submitted). */
async function fillIn(env: Env, at: HumanTaskAtHand, output: JsonObject, complete: boolean): Promise<void> {
  const schema = complete ? (await formOf(env, at.entry))?.jsonSchema : undefined;
  unwrap(await executionStub(env, at.found.workflowId).humanUpdate(at.entry["taskId"] as string, at.caller, output, complete, schema));
}

function taskIdParam(request: IRequest): string {
  return decodedPathParam(request, "taskId");
}

const done = () => new Response(null, { status: 200 });

/**
 * Throws 403 unless the caller may learn that workflow `workflowId` holds no such task: one who may read that workflow,
 * or complete its task of that reference name from outside (`POST /api/tasks/{workflowId}/{taskRefName}/COMPLETED`).
 * Others (an assignee is known only from the task) are told nothing more than a 403, as a task's own checks tell them.
 */
async function requireMayAskByRef(request: IRequest, env: Env, workflowId: string, taskRefName: string): Promise<void> {
  const authorize = await requestAuthorizer(request, env);
  const workflowPath = `/api/workflow/${encodeURIComponent(workflowId)}`;
  try {
    await authorize("GET", workflowPath);
  } catch (refusal) {
    if (!(refusal instanceof ApiError) || refusal.status !== 403) throw refusal;
    await authorize("POST", `/api/tasks/${encodeURIComponent(workflowId)}/${encodeURIComponent(taskRefName)}/COMPLETED`).catch(() => {
      throw refusal;
    });
  }
}

/** Orkes' human task API: the human task list, claims, assignments, the form, and user forms (templates). */
export function registerHumanTaskRoutes(router: RouterType<IRequest, Args>): void {
  router.post("/api/human/tasks/search", async (request, env) => {
    const search = await body(request, env, (value) => parseOrThrow(HumanTaskSearchRequest, value, "human task search"));
    const page = await searchHumanTasks(request, env, search);
    return Response.json({ totalHits: page.totalHits, results: page.results, start: search.start, hits: page.results.length, pageSizeLimit: search.size });
  });

  router.get("/api/human/tasks/getTaskDisplayNames", async (request, env) => {
    const { searchType } = parseOrThrow(DisplayNamesQuery, queryParams(request, ["searchType"]), "query");
    return Response.json(await humanTaskDisplayNames(request, env, searchType));
  });

  // Orkes' update by workflow and reference name (a task in a loop: its latest run, or `iteration`'s).
  router.post("/api/human/tasks/update/taskRef", async (request, env) => {
    const query = parseOrThrow(UpdateByRefQuery, queryParams(request, ["workflowId", "taskRefName", "complete", "iteration"]), "query");
    const output = await body(request, env, (value) => parseOrThrow(FormBody, value, "form"), {});
    const taskId = await retryingExecutionCall(env, query.workflowId, (stub) => stub.humanTaskIdByRef(query.taskRefName, query.iteration));
    if (taskId === null) await requireMayAskByRef(request, env, query.workflowId, query.taskRefName);
    if (taskId === null) throw notFound(`Workflow ${query.workflowId} has no HUMAN task ${query.taskRefName}${query.iteration === undefined ? "" : ` in iteration ${query.iteration}`}`);
    await fillIn(env, await humanTaskAtHand(request, env, taskId), output, query.complete);
    return done();
  });

  // Several at once: each as `DELETE /api/human/tasks/delete/{taskId}`; what was refused is listed with why.
  router.delete("/api/human/tasks/delete", async (request, env) => {
    // Each task once (its id in either case, as a lookup reads it): a repeated id was listed both deleted and failed.
    const ids = distinct(await body(request, env, (value) => parseOrThrow(HumanTaskIds, value, "task ids")), (id) => id.toLowerCase());
    // Read before the loop: a failure is this request's, not an unheeded promise's.
    const context = Promise.resolve(await humanCallerContext(request, env));
    // Looked up together, the wait for executions not yet searchable once for all: one id at a time, each unknown id
    // waited 1.45 s (100 of them, 2.5 minutes). Its failure (past the request's subrequests) is each id's, as below.
    const candidates = lookUpCandidates(env, ids);
    candidates.catch(() => undefined);
    const deleted: string[] = [];
    const failed: Record<string, string> = {};
    for (const taskId of ids) {
      // Any failure is this id's (an unexpected one too, logged with a request id): the others may be deleted already.
      const deletion = async () => {
        const located = taskAmong(env, taskId, (await candidates).get(taskId.toLowerCase()) ?? []);
        await act(env, await humanTaskAtHand(request, env, taskId, context, located), { kind: "delete" });
      };
      const refusal = await bulkOutcome(deletion, { operation: "human task delete", taskId });
      if (refusal === undefined) deleted.push(taskId);
      else failed[taskId] = refusal;
    }
    return Response.json({ deleted, failed });
  });

  router.delete("/api/human/tasks/delete/:taskId", async (request, env) => {
    await act(env, await humanTaskAtHand(request, env, taskIdParam(request)), { kind: "delete" });
    return done();
  });

  router.get("/api/human/tasks/:taskId", async (request, env) => {
    const query = parseOrThrow(WithTemplateQuery, queryParams(request, ["withTemplate"]), "query");
    const at = await humanTaskAtHand(request, env, taskIdParam(request));
    return Response.json(await withTemplate(env, at.entry, query.withTemplate));
  });

  router.get("/api/human/tasks/:taskId/conductorTask", async (request, env) => {
    const at = await humanTaskAtHand(request, env, taskIdParam(request));
    const json = await retryingExecutionCall(env, at.found.workflowId, (stub) => stub.getTaskJson(at.entry["taskId"] as string));
    if (json === null) throw notFound(`Human task ${taskIdParam(request)} not found`);
    return jsonTextResponse(json);
  });

  router.post("/api/human/tasks/:taskId/claim", async (request, env) => {
    const query = parseOrThrow(ClaimQuery, queryParams(request, ["overrideAssignment", "withTemplate"]), "query");
    const at = await humanTaskAtHand(request, env, taskIdParam(request));
    return Response.json(await withTemplate(env, await act(env, at, { kind: "claim", override: query.overrideAssignment }), query.withTemplate));
  });

  // Claimed on behalf of a user of the system that drives the form (an application acting for its signed-in user).
  router.post("/api/human/tasks/:taskId/externalUser/:userId", async (request, env) => {
    const query = parseOrThrow(ClaimQuery, queryParams(request, ["overrideAssignment", "withTemplate"]), "query");
    const userId = decodedPathParam(request, "userId");
    if (userId.trim() === "" || userId.length > 256) throw validationError("Invalid user id", [{ path: "userId", message: "must be 1 to 256 characters" }]);
    const at = await humanTaskAtHand(request, env, taskIdParam(request));
    const forUser = { userId, groups: await groupIdsOf(env, userId) };
    return Response.json(await withTemplate(env, await act(env, at, { kind: "claim", override: query.overrideAssignment, forUser }), query.withTemplate));
  });

  router.post("/api/human/tasks/:taskId/release", async (request, env) => {
    await act(env, await humanTaskAtHand(request, env, taskIdParam(request)), { kind: "release" });
    return done();
  });

  router.post("/api/human/tasks/:taskId/reassign", async (request, env) => {
    const read = await body(request, env, (value) => assignmentsFrom(value));
    if ("issues" in read) throw validationError("Invalid assignments", read.issues);
    await act(env, await humanTaskAtHand(request, env, taskIdParam(request)), { kind: "reassign", assignments: read.assignments });
    return done();
  });

  // Orkes' `reason` is accepted and checked, not kept: the skip shows in the task's `updatedBy`.
  router.post("/api/human/tasks/:taskId/skip", async (request, env) => {
    parseOrThrow(SkipQuery, queryParams(request, ["reason"]), "query");
    await act(env, await humanTaskAtHand(request, env, taskIdParam(request)), { kind: "skip" });
    return done();
  });

  router.post("/api/human/tasks/:taskId/update", async (request, env) => {
    const query = parseOrThrow(UpdateQuery, queryParams(request, ["complete"]), "query");
    const output = await body(request, env, (value) => parseOrThrow(FormBody, value, "form"), {});
    await fillIn(env, await humanTaskAtHand(request, env, taskIdParam(request)), output, query.complete);
    return done();
  });

  router.get("/api/human/template", async (request, env) => {
    const query = parseOrThrow(ListTemplatesQuery, queryParams(request, ["name", "version"]), "query");
    return Response.json(await new HumanTemplateRepository(env.DB).list(query.name, query.version));
  });

  router.post("/api/human/template", async (request, env) => {
    const { newVersion } = parseOrThrow(SaveTemplateQuery, queryParams(request, ["newVersion"]), "query");
    const template = await body(request, env, (value) => parseOrThrow(HumanTemplateRequest, value, "user form"));
    return Response.json(await new HumanTemplateRepository(env.DB).save(template, newVersion, principalOf(request).userId));
  });

  router.post("/api/human/template/bulk", async (request, env) => {
    const { newVersion } = parseOrThrow(SaveTemplateQuery, queryParams(request, ["newVersion"]), "query");
    const templates = await body(request, env, (value) => parseOrThrow(HumanTemplateList, value, "user forms"));
    return Response.json(await new HumanTemplateRepository(env.DB).saveAll(templates, newVersion, principalOf(request).userId));
  });

  // One segment: the form of a human task, by the task's id (Orkes' getTemplateByTaskId).
  router.get("/api/human/template/:humanTaskId", async (request, env) => {
    const at = await humanTaskAtHand(request, env, decodedPathParam(request, "humanTaskId"));
    const template = await formOf(env, at.entry);
    if (template === undefined) throw notFound(`Human task ${at.entry["taskId"] as string} names no saved user form`);
    return Response.json(template);
  });

  // Orkes' user form tags (the clients' getTagsForUserFormTemplate, putTagForUserFormTemplate, …): of the form by name,
  // every version alike. Before `/:name/:version`, which would read "tags" as a version.
  router.get("/api/human/template/:name/tags", async (request, env) => {
    const name = parseOrThrow(TemplateName, decodedPathParam(request, "name"), "user form name", "name");
    const tags = await new HumanTemplateRepository(env.DB).tagsOf(name);
    if (tags === undefined) throw notFound(`User form ${name} not found`);
    return Response.json(tags);
  });

  router.put("/api/human/template/:name/tags", async (request, env) => {
    const name = parseOrThrow(TemplateName, decodedPathParam(request, "name"), "user form name", "name");
    const tags = await body(request, env, (value) => parseOrThrow(HumanTemplateTagList, value, "tags"));
    if (!(await new HumanTemplateRepository(env.DB).addTags(name, tags, principalOf(request).userId))) throw notFound(`User form ${name} not found`);
    return done();
  });

  router.delete("/api/human/template/:name/tags", async (request, env) => {
    const name = parseOrThrow(TemplateName, decodedPathParam(request, "name"), "user form name", "name");
    const tags = await body(request, env, (value) => parseOrThrow(HumanTemplateTagList, value, "tags"));
    if (!(await new HumanTemplateRepository(env.DB).removeTags(name, tags, principalOf(request).userId))) throw notFound(`User form ${name} not found`);
    return done();
  });

  router.get("/api/human/template/:name/:version", async (request, env) => {
    const { name, version } = templatePath(request);
    const template = await new HumanTemplateRepository(env.DB).get(name, version);
    if (template === undefined) throw notFound(`User form ${name} version ${version} not found`);
    return Response.json(template);
  });

  router.delete("/api/human/template/:name", async (request, env) => {
    const name = parseOrThrow(TemplateName, decodedPathParam(request, "name"), "user form name", "name");
    if (!(await new HumanTemplateRepository(env.DB).deleteAll(name))) throw notFound(`User form ${name} not found`);
    return done();
  });

  router.delete("/api/human/template/:name/:version", async (request, env) => {
    const { name, version } = templatePath(request);
    if (!(await new HumanTemplateRepository(env.DB).deleteVersion(name, version))) throw notFound(`User form ${name} version ${version} not found`);
    return done();
  });
}

/** A template route's name and version. */
function templatePath(request: IRequest): { name: string; version: number } {
  const name = parseOrThrow(TemplateName, decodedPathParam(request, "name"), "user form name", "name");
  const version = parseOrThrow(integerParam(1, 1_000_000), decodedPathParam(request, "version"), "user form version", "version");
  return { name, version };
}
