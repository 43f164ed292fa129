import type { IRequest, RouterType } from "itty-router";
import { oversize, oversizeReason } from "../../engine/limits";
import type { JsonObject } from "../../engine/model";
import { serviceConfig } from "../config";
import { DefinitionRepository, workflowNotFoundMessage } from "../definitions";
import { namesGranted } from "../auth/permissions";
import { principalOf } from "../guard";
import { readJsonBody } from "../http/body";
import { ApiError, notFound, validationError } from "../http/errors";
import { decodedPathParam, integerQuery, queryParams, queryValue } from "../http/params";
import { BulkScheduleNames, NextFewSchedulesQuery, SaveScheduleRequest, WorkflowName, parseOrThrow } from "../schemas";
import { mapBounded } from "../bounded";
import { BULK_CONCURRENCY, bulkOutcome, bulkResponse } from "./bulk";
import { mayOnSchedule, requireOnSchedule, schedulesReadable, type ScheduleAction } from "../schedules/access";
import { nextFireAfter, nextFires, parseCron, parseZone } from "../schedules/cron";
import { MAX_EXECUTIONS_PER_SCHEDULE, latestScheduleExecutions, searchScheduleExecutions } from "../schedules/executions";
import { searchSchedules } from "../schedules/search";
import { ScheduleRepository, type StoredSchedule } from "../schedules/store";
import { TagRepository } from "../tags";
import { checkSchedule, fireWindow, scheduledInput } from "../schedules/validate";
import { callerStartScopes } from "../workflow-actions";
import { isSubrequestLimitError } from "../subrequest-limit";
import { orOnOlderCode } from "../executions";

type Args = [Env, ExecutionContext];

/** Most schedules one listing answers (in name order); Orkes' listing has no paging either. */
export const MAX_LISTED_SCHEDULES = 1000;
/** Rows read per D1 query while a listing filters by the caller's rights. */
const LISTING_PAGE = 200;

/** The object that fires schedule `name`. */
function trigger(env: Env, name: string) {
  return env.SCHEDULE_TRIGGER.get(env.SCHEDULE_TRIGGER.idFromName(name));
}

/** Orkes' `WorkflowSchedule` JSON of a stored schedule; `nextRunTime` is its next fire from now (none while paused). */
export function scheduleJson(schedule: StoredSchedule, nowMs: number): JsonObject {
  const { config } = schedule;
  const json: JsonObject = {
    name: schedule.name,
    cronExpression: config.cronExpression,
    zoneId: config.zoneId,
    startWorkflowRequest: config.startWorkflowRequest as unknown as JsonObject,
    runCatchupScheduleInstances: config.runCatchupScheduleInstances,
    paused: schedule.paused,
    createTime: schedule.createTime,
    updatedTime: schedule.updatedTime,
    createdBy: schedule.createdBy,
    updatedBy: schedule.updatedBy,
  };
  if (schedule.pausedReason !== undefined) json["pausedReason"] = schedule.pausedReason;
  if (config.scheduleStartTime !== undefined) json["scheduleStartTime"] = config.scheduleStartTime;
  if (config.scheduleEndTime !== undefined) json["scheduleEndTime"] = config.scheduleEndTime;
  if (config.description !== undefined) json["description"] = config.description;
  if (!schedule.paused) {
    const parsed = parseCron(config.cronExpression, config.zoneId);
    const next = parsed.ok ? nextFireAfter(parsed.schedule, nowMs, fireWindow(config)) : undefined;
    if (next !== undefined) json["nextRunTime"] = next;
  }
  return json;
}

/** The schedule named in the path, checked for `action`: 403 without the right, then 404 when there is none. */
async function pathSchedule(request: IRequest, env: Env, action: ScheduleAction, what: string): Promise<StoredSchedule> {
  return namedSchedule(request, env, decodedPathParam(request, "name"), action, what);
}

/** The schedule `name`, once the caller may act on it as `action` (403, else 404 when there is none). */
async function namedSchedule(request: IRequest, env: Env, name: string, action: ScheduleAction, what: string): Promise<StoredSchedule> {
  const schedule = await new ScheduleRepository(env.DB).get(name);
  requireOnSchedule(principalOf(request).grants, action, schedule?.workflowName, `${what} schedule ${name}`);
  if (schedule === undefined) throw notFound(`No schedule named ${name}`);
  return schedule;
}

/** 409 for a schedule changed by another request between its read (the rights checked) and its write. */
function changedMeanwhile(name: string): ApiError {
  return new ApiError(409, "CONFLICT", `Schedule ${name} was changed by another request meanwhile; nothing was done, try again`);
}

/** `POST /api/scheduler/schedules`: creates the schedule, or replaces the one of that name (Orkes upserts by name). */
async function saveSchedule(request: IRequest, env: Env, ctx: ExecutionContext): Promise<Response> {
  const config = serviceConfig(env);
  const body = await readJsonBody(request as unknown as Request, config.maxRequestBytes);
  const saved = parseOrThrow(SaveScheduleRequest, body.present ? body.value : undefined, "schedule");
  const now = Date.now();
  const checked = checkSchedule(saved, now);
  if (!checked.ok) throw validationError("Invalid schedule", checked.issues);
  const start = checked.config.startWorkflowRequest;
  // As a start refuses it, with the fields each fire adds.
  const fire = { scheduleName: saved.name, scheduledTime: now, executedTime: now, executionId: crypto.randomUUID() };
  const bytes = oversize(scheduledInput(checked.config, fire), config.engine.maxPayloadBytes);
  if (bytes !== undefined) throw new ApiError(413, "PAYLOAD_TOO_LARGE", oversizeReason("The scheduled workflow input", bytes, config.engine.maxPayloadBytes));

  const principal = principalOf(request);
  requireOnSchedule(principal.grants, "manage", start.name, `saving schedule ${saved.name}`, true);
  // As D1 holds it now: a version registered through another isolate a moment before is no 400 here.
  if (!(await new DefinitionRepository(env.DB).findCurrent(start.name, start.version))) {
    // Conductor's words, which each fire's start would answer (and record in the schedule's history).
    const path = start.version === undefined ? "startWorkflowRequest.name" : "startWorkflowRequest.version";
    throw validationError("Invalid schedule", [{ path, message: `${workflowNotFoundMessage(start.name, start.version)}; register it first` }]);
  }
  const repository = new ScheduleRepository(env.DB);
  const existing = await repository.get(saved.name);
  if (existing !== undefined && existing.workflowName !== start.name) {
    requireOnSchedule(principal.grants, "manage", existing.workflowName, `moving schedule ${saved.name} to another workflow`);
  }
  const write = { name: saved.name, config: checked.config, paused: checked.paused, startScopes: callerStartScopes(request), baseUrl: config.publicBaseUrl ?? new URL(request.url).origin, by: principal.userId, now };
  if (!(await repository.save(write, existing?.revision))) throw changedMeanwhile(saved.name);
  // Saved first: an arm call lost here leaves the old alarm, which finds the new revision and re-arms from it.
  await armed(env, ctx, saved.name);
  const stored = await repository.get(saved.name);
  return Response.json(stored === undefined ? {} : scheduleJson(stored, Date.now()));
}

/**
 * (Re)arms schedule `name`'s object from what D1 now holds. Kept alive past the answer (`waitUntil`): a client that
 * goes away after the write must not cancel the call, or a new or resumed schedule (no alarm yet) would never fire.
 */
async function armed(env: Env, ctx: ExecutionContext, name: string): Promise<void> {
  const arming = trigger(env, name).arm(name);
  ctx.waitUntil(arming.catch(() => undefined));
  await arming;
}

/**
 * Arms schedule `name`'s object for its resume, about to be written (see `ScheduleTrigger.armResuming`); false from an
 * object on the code before that method (a deployment under way), which is armed after the write, as it was.
 */
async function armedAheadOfResume(env: Env, name: string): Promise<boolean> {
  return await orOnOlderCode(
    "armResuming",
    async () => {
      await trigger(env, name).armResuming(name);
      return true;
    },
    () => false,
  );
}

/** `GET /api/scheduler/schedules[?workflowName=]`: the schedules the caller may read, in name order. */
async function listSchedules(request: IRequest, env: Env): Promise<Response> {
  const workflowParam = queryValue(request, "workflowName");
  const workflowName = workflowParam === undefined || workflowParam === "" ? undefined : parseOrThrow(WorkflowName, workflowParam, "schedule listing", "workflowName");
  const grants = principalOf(request).grants;
  const repository = new ScheduleRepository(env.DB);
  const now = Date.now();
  const listed: JsonObject[] = [];
  for await (const schedule of repository.each(LISTING_PAGE, workflowName)) {
    if (mayOnSchedule(grants, "read", schedule.workflowName)) listed.push(scheduleJson(schedule, now));
    if (listed.length === MAX_LISTED_SCHEDULES) break;
  }
  // Each with its tags, as Orkes lists them: those of the schedules listed only, not of every schedule.
  const tags = await new TagRepository(env.DB).byName("SCHEDULE", listed.map((schedule) => String(schedule["name"])));
  return Response.json(listed.map((schedule) => ({ ...schedule, tags: tags.get(String(schedule["name"])) ?? [] })));
}

/**
 * `GET /api/scheduler/schedules/search`: Conductor's `SearchResult<WorkflowScheduleModel>`, each schedule as its read
 * shows it, tags included (see schedules/search.ts for the parameters).
 */
async function searchSchedulesRoute(request: IRequest, env: Env): Promise<Response> {
  const { totalHits, schedules } = await searchSchedules(env.DB, request, schedulesReadable(principalOf(request).grants));
  const tags = await new TagRepository(env.DB).byName("SCHEDULE", schedules.map((schedule) => schedule.name));
  const now = Date.now();
  return Response.json({ totalHits, results: schedules.map((schedule) => ({ ...scheduleJson(schedule, now), tags: tags.get(schedule.name) ?? [] })) });
}

/** The `pausedReason` of a schedule paused by the pause of every schedule, which the resume of every schedule resumes. */
const PAUSED_WITH_EVERY_SCHEDULE = "paused with every schedule";

/**
 * Orkes' scheduler administration (SchedulerClient's `pauseAllSchedules`, `resumeAllSchedules`,
 * `requeueAllExecutionRecords`): pauses or resumes every schedule (`change`), or re-arms each one's alarm from what
 * D1 holds (none: a requeue, for alarms lost with a restored state). For a caller who may manage schedules of every
 * workflow only. Answers how many schedules it acted on; one changed by another request meanwhile is left as that
 * request made it.
 */
function forEverySchedule(change: { paused: boolean } | undefined, what: string) {
  return async (request: IRequest, env: Env, ctx: ExecutionContext): Promise<Response> => {
    const principal = principalOf(request);
    // The empty workflow name: only grants on every workflow allow it (see schedules/access.ts).
    requireOnSchedule(principal.grants, "manage", undefined, what);
    const repository = new ScheduleRepository(env.DB);
    let acted = 0;
    // A schedule resumed in D1 whose alarm is not armed yet (an object on the code before `armResuming`, which is armed
    // after the write): a call again skips it (resumed already), so it would never fire.
    let resumedUnarmed: string | undefined;
    try {
      for await (const schedule of repository.each(LISTING_PAGE)) {
        if (change === undefined) {
          await armed(env, ctx, schedule.name);
        } else {
          if (schedule.paused === change.paused) continue;
          // Resuming every schedule resumes those paused with every schedule: one paused on its own stays paused.
          if (!change.paused && schedule.pausedReason !== PAUSED_WITH_EVERY_SCHEDULE) continue;
          // A resume is armed before it is written (see `ScheduleTrigger.armResuming`): a failure between the two leaves
          // the schedule paused, which this request again resumes. It is armed after the write as well: an arm of the
          // same schedule whose read started after the ahead one's but before the write (a requeue, its own alarm's
          // re-arm) saw it paused and cleared the alarm, or answered first and made the ahead one's read stale, and
          // only a read after the write sees the resume. A pause is armed after only (its alarm cleared): one left
          // armed fires nothing, as the trigger reads the pause.
          const armedAhead = !change.paused && (await armedAheadOfResume(env, schedule.name));
          const reason = change.paused ? PAUSED_WITH_EVERY_SCHEDULE : undefined;
          if (!(await repository.setPaused(schedule.name, schedule.revision, change.paused, reason, principal.userId, Date.now()))) continue;
          resumedUnarmed = change.paused || armedAhead ? undefined : schedule.name;
          await armed(env, ctx, schedule.name);
          resumedUnarmed = undefined;
        }
        acted++;
      }
    } catch (error) {
      // Past the invocation's calls to D1 and Durable Objects (50 on Workers Free, a write and an arming per schedule
      // here, and an arming ahead of a resume): a 500 said nothing of what was done. A pause or resume called again skips the schedules already done and
      // goes on with the rest.
      if (!isSubrequestLimitError(error)) throw error;
      const more = change === undefined ? "the rest were not re-armed" : "call it again to act on the rest (those done are skipped)";
      const unarmed = resumedUnarmed === undefined ? "" : `; schedule ${resumedUnarmed} was resumed but its next run not armed: resume it by name (PUT /api/scheduler/schedules/${encodeURIComponent(resumedUnarmed)}/resume)`;
      throw new ApiError(503, "UNAVAILABLE", `Acted on ${acted} schedules, then this request reached Cloudflare's limit of calls per request; ${more}${unarmed}`);
    }
    return Response.json({ schedules: acted });
  };
}

/** Pauses or resumes the schedule in the path (`?reason=` with a pause, shown as `pausedReason`). */
function pauseOrResume(paused: boolean) {
  return async (request: IRequest, env: Env, ctx: ExecutionContext): Promise<Response> => {
    await setPaused(request, env, ctx, decodedPathParam(request, "name"), paused);
    return new Response(null, { status: 200 });
  };
}

/** Pauses or resumes schedule `name` for the caller (`?reason=` with a pause); throws the API error that refuses it. */
async function setPaused(request: IRequest, env: Env, ctx: ExecutionContext, name: string, paused: boolean): Promise<void> {
  const schedule = await namedSchedule(request, env, name, "manage", paused ? "pausing" : "resuming");
  const reason = paused ? queryValue(request, "reason")?.slice(0, 1024) : undefined;
  const done = await new ScheduleRepository(env.DB).setPaused(schedule.name, schedule.revision, paused, reason || undefined, principalOf(request).userId, Date.now());
  if (!done) throw changedMeanwhile(schedule.name);
  // A resume arms the first fire after now: fires missed while paused are not caught up.
  await armed(env, ctx, schedule.name);
}

/**
 * Orkes' bulk pause or resume (SchedulerClient's `pauseSchedulers`, `resumeSchedulers`): each schedule of the body as
 * its own route would, each on its own; a BulkResponse of those done and why the others were not.
 */
function bulkPauseOrResume(paused: boolean) {
  return async (request: IRequest, env: Env, ctx: ExecutionContext): Promise<Response> => {
    const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    if (!body.present) throw validationError("Invalid bulk request", [{ path: "(body)", message: "is required: a JSON array of schedule names" }]);
    const names = [...new Set(parseOrThrow(BulkScheduleNames, body.value, "bulk request"))];
    const outcomes = await mapBounded(names, BULK_CONCURRENCY, (name) => bulkOutcome(() => setPaused(request, env, ctx, name, paused), { operation: "schedule", schedule: name }));
    return Response.json(bulkResponse(names, outcomes));
  };
}

/** Most fire times `next-execution-times` lists at once. */
const MAX_NEXT_EXECUTION_TIMES = 100;

/** `GET /api/scheduler/nextFewSchedules`: the next fires of a cron expression (Orkes: 3 unless `limit`, at most 5). */
function nextFewSchedules(request: IRequest): Response {
  const query = parseOrThrow(NextFewSchedulesQuery, queryParams(request, ["cronExpression", "scheduleStartTime", "scheduleEndTime", "limit", "zoneId"]), "next schedules query");
  const zone = parseZone(query.zoneId);
  if (!zone.ok) throw validationError("Invalid next schedules query", [{ path: "zoneId", message: zone.message }]);
  const { scheduleStartTime: start, scheduleEndTime: end } = query;
  if (start !== undefined && end !== undefined && end < start) throw validationError("Invalid next schedules query", [{ path: "scheduleEndTime", message: "must not be before scheduleStartTime" }]);
  const parsed = parseCron(query.cronExpression, query.zoneId);
  if (!parsed.ok) throw validationError("Invalid next schedules query", [{ path: "cronExpression", message: parsed.message }]);
  return Response.json(nextFires(parsed.schedule, Date.now(), query.limit, { start, end }));
}

/**
 * Orkes' scheduler API (SchedulerResource): schedules and their fires. Registered after the 501s of unsupported.ts,
 * which list the scheduler paths not served (the test endpoints) and so must not overlap these, and
 * after the tag routes (routes/tags.ts): `GET /api/scheduler/schedules/tags` is the lookup by tag, which is why no
 * schedule may be named "tags" (nor "search", the search's path, registered before `/:name` here).
 */
export function registerScheduleRoutes(router: RouterType<IRequest, Args>): void {
  router.post("/api/scheduler/schedules", saveSchedule);
  router.get("/api/scheduler/schedules", listSchedules);
  router.get("/api/scheduler/nextFewSchedules", nextFewSchedules);
  router.get("/api/scheduler/admin/pause", forEverySchedule({ paused: true }, "pausing every schedule"));
  router.get("/api/scheduler/admin/resume", forEverySchedule({ paused: false }, "resuming every schedule"));
  router.get("/api/scheduler/admin/requeue", forEverySchedule(undefined, "re-arming every schedule"));
  router.get("/api/scheduler/search/executions", async (request, env) =>
    Response.json(await searchScheduleExecutions(env.DB, request, namesGranted(principalOf(request).grants, "WORKFLOW_READ", "workflow:"))),
  );
  router.get("/api/scheduler/schedules/search", searchSchedulesRoute);
  router.get("/api/scheduler/schedules/:name", async (request, env) => {
    const schedule = await pathSchedule(request, env, "read", "reading");
    const tags = await new TagRepository(env.DB).list({ type: "SCHEDULE", name: schedule.name });
    return Response.json({ ...scheduleJson(schedule, Date.now()), tags });
  });
  // Conductor OSS's scheduler: a schedule's latest fires, and its next fire times.
  router.get("/api/scheduler/schedules/:name/executions", async (request, env) => {
    const limit = integerQuery(request, "limit", 1, MAX_EXECUTIONS_PER_SCHEDULE) ?? 10;
    const schedule = await pathSchedule(request, env, "read", "reading the fires of");
    return Response.json(await latestScheduleExecutions(env.DB, schedule.name, limit, namesGranted(principalOf(request).grants, "WORKFLOW_READ", "workflow:")));
  });
  router.get("/api/scheduler/schedules/:name/next-execution-times", async (request, env) => {
    const count = integerQuery(request, "count", 1, MAX_NEXT_EXECUTION_TIMES) ?? 5;
    const { config } = await pathSchedule(request, env, "read", "reading");
    const parsed = parseCron(config.cronExpression, config.zoneId);
    return Response.json(parsed.ok ? nextFires(parsed.schedule, Date.now(), count, fireWindow(config)) : []);
  });
  router.delete("/api/scheduler/schedules/:name", async (request, env, ctx) => {
    const name = decodedPathParam(request, "name");
    const schedule = await new ScheduleRepository(env.DB).get(name);
    requireOnSchedule(principalOf(request).grants, "manage", schedule?.workflowName, `deleting schedule ${name}`);
    // Already gone is done, as Orkes answers it: the Java client's tests delete a schedule that never was before each test.
    if (schedule === undefined) return new Response(null, { status: 200 });
    if (!(await new ScheduleRepository(env.DB).delete(schedule.name, schedule.revision))) throw changedMeanwhile(schedule.name);
    // Deleted first: an object whose call is lost finds no schedule at its next alarm and stops then. Armed from what
    // D1 holds (gone: disarmed), not disarmed outright: the schedule may be created again under its name before this
    // call comes in (another client's save, which armed it), and a disarm then stopped the new schedule for good (no
    // alarm left to find it). A read started now sees that save, and one started before it is not acted on.
    await armed(env, ctx, schedule.name);
    return new Response(null, { status: 200 });
  });
  // The official clients try PUT (Conductor OSS) and fall back to GET on 405 (Orkes): both are served.
  for (const [action, paused] of [["pause", true], ["resume", false]] as const) {
    router.put(`/api/scheduler/bulk/${action}`, bulkPauseOrResume(paused));
    router.put(`/api/scheduler/schedules/:name/${action}`, pauseOrResume(paused));
    router.get(`/api/scheduler/schedules/:name/${action}`, pauseOrResume(paused));
  }
}
