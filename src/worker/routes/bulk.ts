import type { IRequest, RouterType } from "itty-router";
import { BULK_OPERATIONS, BULK_SEARCH_PATH, bulkPath, type BulkOperation } from "../auth/access-rules";
import { mapBounded } from "../bounded";
import { serviceConfig } from "../config";
import { canonicalWorkflowId, nameAndStatusOf, retryingExecutionCall } from "../executions";
import { requestAuthorizer, type PathAuthorizer } from "../guard";
import { jsonTextResponse, readJsonBody } from "../http/body";
import { ApiError, errorDetail, validationError } from "../http/errors";
import { booleanQuery } from "../http/params";
import { BulkWorkflowIds, parseOrThrow } from "../schemas";
import { unavailableError } from "../object-retry";
import { isSubrequestLimitError } from "../subrequest-limit";
import { WORKFLOW_ACTIONS, type ExecutionAct, type WorkflowAction } from "../workflow-actions";

type Args = [Env, ExecutionContext];

/** Ids of one bulk request worked at once: their calls overlap, but 1000 ids never open 1000 calls together. */
export const BULK_CONCURRENCY = 10;

/** Conductor's BulkResponse: each refused id with the reason, and the ids acted on, in the order given. */
export interface BulkResponse {
  bulkErrorResults: Record<string, string>;
  bulkSuccessfulResults: string[];
}

/** The BulkResponse of `ids`, given each one's outcome (in the same order): undefined when done, else why not. */
export function bulkResponse(ids: readonly string[], outcomes: ReadonlyArray<string | undefined>): BulkResponse {
  return {
    bulkErrorResults: Object.fromEntries(ids.flatMap((id, index) => (outcomes[index] === undefined ? [] : [[id, outcomes[index]]]))),
    bulkSuccessfulResults: ids.filter((_id, index) => outcomes[index] === undefined),
  };
}

/** The ids of the body, 400 unless it is a JSON array of 1 to 1000 non-empty strings. */
async function bulkIds(request: IRequest, env: Env): Promise<string[]> {
  const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  if (!body.present) throw validationError("Invalid bulk request", [{ path: "(body)", message: "is required: a JSON array of workflow ids" }]);
  return parseOrThrow(BulkWorkflowIds, body.value, "bulk request");
}

/**
 * Each id once, in the order first given (as first spelled), ids of the same `key` being one: a repeated id would be
 * acted on twice, and listed both as done and as refused (the second time finding it done).
 */
export function distinct(ids: readonly string[], keyOf: (id: string) => string = canonicalWorkflowId): string[] {
  const seen = new Set<string>();
  return ids.filter((id) => {
    const key = keyOf(id);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * One id of a bulk request, as if its single-id route had been called: authorized as that route, then acted on.
 * Undefined when done, else what that route would have answered as its error message.
 */
async function outcomeFor(action: WorkflowAction, act: ExecutionAct, authorizeAs: PathAuthorizer, env: Env, workflowId: string): Promise<string | undefined> {
  return bulkOutcome(async () => {
    await authorizeAs(action.method, action.path(workflowId));
    await act(env, workflowId);
  }, { operation: "workflow", workflowId });
}

/**
 * Why an item of a bulk request was not acted on when the runtime refused its call past the request's subrequests
 * (Cloudflare counts them per invocation: 1,000 calls to its services on Workers Free; docs/reliability.md, Limits on
 * Cloudflare). Nothing is wrong with the item: sent again in another request, it is acted on.
 */
export const SUBREQUEST_LIMIT_REFUSAL =
  "Not acted on: this request reached Cloudflare's limit of subrequests per request; send the ids not acted on again, in smaller bulk requests";

/**
 * What one item of a bulk request came to: undefined when `work` was done, else the message of the API error that
 * refused it, {@link SUBREQUEST_LIMIT_REFUSAL} past the request's subrequests, the message of the 503 its single
 * request would have answered when an object could not answer now (reset, evicted, overloaded: logged as the router
 * logs it, with `context`), or, for any other error (logged with `context` under a request id), an internal error
 * quoting that id.
 */
export async function bulkOutcome(work: () => Promise<void>, context: Record<string, string>): Promise<string | undefined> {
  try {
    await work();
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return error.message;
    if (isSubrequestLimitError(error)) return SUBREQUEST_LIMIT_REFUSAL;
    // No bug of the service (a deploy resets every object): the item may be sent again, as the single request's 503
    // says, and is no "unhandled error" in the logs, where a deploy's resets would bury the real ones.
    const unavailable = unavailableError(error);
    if (unavailable !== undefined) {
      console.warn(JSON.stringify({ msg: "an object could not answer", ...context, error: String(error) }));
      return unavailable.message;
    }
    // Not thrown on: other items may have been acted on already, and the caller must learn which.
    const requestId = crypto.randomUUID();
    console.error(JSON.stringify({ msg: "unhandled error in a bulk operation", requestId, ...context, error: errorDetail(error) }));
    return `Internal error; quote the request id ${requestId} when reporting it`;
  }
}

/**
 * The route acting on every id of its body as `action`'s single-id route would, each on its own. A retry or restart
 * (`reopens` names which) of more than one id works them as {@link familyOutcomes} says.
 */
function bulkRoute(action: WorkflowAction, reopens: ReopeningOperation | undefined) {
  return async (request: IRequest, env: Env): Promise<Response> => {
    // Everything that could refuse the whole request is checked before any id is acted on.
    const act = action.prepare(request);
    const ids = distinct(await bulkIds(request, env));
    const authorizeAs = await requestAuthorizer(request, env);
    const outcomes =
      reopens !== undefined && ids.length > 1
        ? await familyOutcomes(ids, reopens, action, act, authorizeAs, env)
        : await mapBounded(ids, BULK_CONCURRENCY, (workflowId) => outcomeFor(action, act, authorizeAs, env, workflowId));
    return Response.json(bulkResponse(ids, outcomes));
  };
}

/**
 * How a listed sub workflow is refused when a workflow it runs under (`ancestorId`, listed before it) was retried or
 * restarted earlier in the same request: that one is running again and runs its sub workflows itself (a new one, or
 * this one in place), so this one's own retry or restart would run apart from it, never moving it, its work done twice.
 */
export function ancestorActedRefusal(ancestorId: string, operation: ReopeningOperation): string {
  const done = operation === "retry" ? "retried" : "restarted";
  return `Not ${done}: workflow ${ancestorId}, which it is a sub workflow of, was ${done} earlier in this request and runs its sub workflows itself; acted on too, this one would run apart from it. Send this id alone to ${operation} it anyway`;
}

/** The bulk operations that run sub workflows again, and tell their parents: see {@link familyOutcomes}. */
type ReopeningOperation = Extract<BulkOperation, "retry" | "restart">;

/** The most parents walked up from one listed id (a bound only: a chain of sub workflows is far shorter). */
const MAX_LINEAGE_STEPS = 64;

/** What a bulk retry or restart knows of how one listed id stands to the others. */
interface Lineage {
  /** The indexes of the listed ids it is a sub workflow of (at any depth), nearest first. */
  listedAncestors: number[];
  /** Why its lineage could not be read (an object that could not answer): it is then refused with that error. */
  unread?: unknown;
}

/**
 * The outcomes of a bulk retry or restart of `ids`, in their order, worked as Conductor's WorkflowBulkServiceImpl works
 * them (one by one, in the order given) wherever that order matters: ids of one family (a listed id and the listed ids
 * it is a sub workflow of, at any depth) are worked one after another in the order given, the families 10 at a time.
 * In a family, a sub workflow listed after a workflow it runs under that was acted on is refused
 * ({@link ancestorActedRefusal}); one listed before is acted on first and answers once its parents run again, so that
 * they then answer 409 as Conductor's do (its updateAndPushParents reopened them). Worked together, the parent could be
 * reached first and run a new child while the listed child ran again apart from it.
 *
 * Finding the families costs one D1 query, one more per level of sub workflows above the listed ones, and a call to the
 * object of each workflow the search index does not hold yet ({@link parentReads}): a request on Workers Free, whose
 * 1,000 calls per request its ids' own calls may use up, is not made to spend one more on each id.
 */
async function familyOutcomes(
  ids: string[],
  operation: ReopeningOperation,
  action: WorkflowAction,
  act: ExecutionAct,
  authorizeAs: PathAuthorizer,
  env: Env,
): Promise<Array<string | undefined>> {
  const lineages = await lineagesOf(ids, env);
  const families = familiesOf(lineages);
  const outcomes = new Array<string | undefined>(ids.length);
  await mapBounded(families, BULK_CONCURRENCY, async (family) => {
    const acted = new Set<number>();
    for (const index of family) {
      const workflowId = ids[index]!;
      const { listedAncestors, unread } = lineages[index]!;
      const actedAncestor = listedAncestors.find((ancestor) => acted.has(ancestor));
      outcomes[index] = await bulkOutcome(async () => {
        await authorizeAs(action.method, action.path(workflowId));
        if (unread !== undefined) throw unread;
        if (actedAncestor !== undefined) throw new ApiError(409, "CONFLICT", ancestorActedRefusal(ids[actedAncestor]!, operation));
        // Its parents, listed after it, must find themselves running again when their turn comes.
        await act(env, workflowId, { awaitParents: listedAncestors.some((ancestor) => ancestor > index) });
      }, { operation: "workflow", workflowId });
      if (outcomes[index] === undefined) acted.add(index);
    }
  });
  return outcomes;
}

/** What is known of one workflow's parent: its id (none: a workflow started on its own, or none found), or why its read failed. */
type ParentRead = { parentId: string | undefined } | { error: unknown };

/**
 * The {@link Lineage} of each id, in their order, from the parents of the listed ids and of the unlisted workflows above
 * them, read level by level ({@link parentReads}) until every chain has reached a workflow started on its own.
 */
async function lineagesOf(ids: string[], env: Env): Promise<Lineage[]> {
  const listed = new Map(ids.map((workflowId, index) => [canonicalWorkflowId(workflowId), index]));
  const parents = new Map<string, ParentRead>();
  let wanted = [...listed.keys()];
  for (let step = 0; wanted.length > 0 && step <= MAX_LINEAGE_STEPS; step++) {
    const level = await parentReads(wanted, env);
    for (const [workflowId, read] of level) parents.set(workflowId, read);
    const above = [...level.values()].flatMap((read) => ("parentId" in read && read.parentId !== undefined ? [canonicalWorkflowId(read.parentId)] : []));
    wanted = [...new Set(above)].filter((workflowId) => !parents.has(workflowId));
  }
  return ids.map((workflowId): Lineage => {
    const listedAncestors: number[] = [];
    let read = parents.get(canonicalWorkflowId(workflowId));
    for (let step = 0; read !== undefined && step <= MAX_LINEAGE_STEPS; step++) {
      if ("error" in read) return { listedAncestors, unread: read.error };
      if (read.parentId === undefined) break;
      const parentId = canonicalWorkflowId(read.parentId);
      const parentIndex = listed.get(parentId);
      if (parentIndex !== undefined) listedAncestors.push(parentIndex);
      read = parents.get(parentId);
    }
    return { listedAncestors };
  });
}

/**
 * The parent of each of `workflowIds` (canonical), read from the search index's rows (one D1 query for all: a workflow's
 * parent never changes, and any workflow old enough to have been retried or restarted has its row), and from the
 * execution's object only for those without one (one started a moment ago, its first row still on its way; one not
 * found; every one, when D1 could not answer).
 */
async function parentReads(workflowIds: string[], env: Env): Promise<Map<string, ParentRead>> {
  const reads = new Map<string, ParentRead>();
  try {
    const { results } = await env.DB.prepare(
      "SELECT workflow_id AS workflowId, parent_workflow_id AS parentWorkflowId FROM executions WHERE workflow_id IN (SELECT value FROM json_each(?1))",
    )
      .bind(JSON.stringify(workflowIds))
      .all<{ workflowId: string; parentWorkflowId: string | null }>();
    for (const row of results) reads.set(canonicalWorkflowId(row.workflowId), { parentId: row.parentWorkflowId ?? undefined });
  } catch (error) {
    console.warn(JSON.stringify({ msg: "the search index could not answer a bulk request's parents; reading them from the executions", error: String(error) }));
  }
  const unindexed = workflowIds.filter((workflowId) => !reads.has(workflowId));
  const read = await mapBounded(unindexed, BULK_CONCURRENCY, async (workflowId): Promise<ParentRead> => {
    try {
      return { parentId: (await retryingExecutionCall(env, workflowId, (stub) => nameAndStatusOf(stub)))?.parentWorkflowId };
    } catch (error) {
      return { error };
    }
  });
  unindexed.forEach((workflowId, index) => reads.set(workflowId, read[index]!));
  return reads;
}

/** The families of {@link familyOutcomes}: the indexes of ids related through their listed ancestors, each in list order. */
function familiesOf(lineages: readonly Lineage[]): number[][] {
  const root = lineages.map((_lineage, index) => index);
  const find = (index: number): number => {
    while (root[index] !== index) index = root[index] = root[root[index]!]!;
    return index;
  };
  lineages.forEach((lineage, index) => {
    for (const ancestor of lineage.listedAncestors) root[find(index)] = find(ancestor);
  });
  const families = new Map<number, number[]>();
  lineages.forEach((_lineage, index) => {
    const family = families.get(find(index));
    if (family === undefined) families.set(find(index), [index]);
    else family.push(index);
  });
  return [...families.values()];
}

/**
 * How much Workflow JSON one bulk search answers at most (in characters): the ids past it are listed as refused (ask
 * for them separately), so that 1000 large executions are never held, or sent, at once.
 */
export const BULK_SEARCH_MAX_CHARS = 8 * 1024 * 1024;

/**
 * Conductor's bulk search (`POST /api/workflow/bulk/search?includeTasks=`): the Workflow JSON of each id, as its
 * single-id read (`GET /api/workflow/{id}`) answers it and authorizes it, in a BulkResponse whose successful results
 * are the workflows themselves, in the order asked for.
 */
async function bulkSearch(request: IRequest, env: Env): Promise<Response> {
  const includeTasks = booleanQuery(request, "includeTasks", true);
  const ids = distinct(await bulkIds(request, env));
  const authorizeAs = await requestAuthorizer(request, env);
  const found = new Map<string, string>();
  let held = 0;
  const outcomes = await mapBounded(ids, BULK_CONCURRENCY, (workflowId) =>
    bulkOutcome(async () => {
      // Encoded as the single read's path: an id with a `/` ("billing/correlated") would otherwise be authorized as another route.
      await authorizeAs("GET", `/api/workflow/${encodeURIComponent(workflowId)}`);
      const tooMuch = new ApiError(413, "PAYLOAD_TOO_LARGE", "Not included: one answer holds at most 8 Mi characters of workflows; ask for this one separately");
      if (held >= BULK_SEARCH_MAX_CHARS) throw tooMuch;
      const workflow = await retryingExecutionCall(env, workflowId, (stub) => stub.getWorkflowJson(includeTasks));
      if (workflow === null) throw new ApiError(404, "NOT_FOUND", `Workflow ${workflowId} not found`);
      if (held + workflow.length > BULK_SEARCH_MAX_CHARS) throw tooMuch;
      held += workflow.length;
      found.set(workflowId, workflow);
    }, { operation: "search", workflowId }),
  );
  const shown = ids.flatMap((workflowId, index) => (outcomes[index] === undefined ? [found.get(workflowId)!] : []));
  const { bulkErrorResults } = bulkResponse(ids, outcomes);
  // The workflows as the actor wrote them: no parse and re-serialisation of each.
  return jsonTextResponse(`{"bulkErrorResults":${JSON.stringify(bulkErrorResults)},"bulkSuccessfulResults":[${shown.join(",")}]}`);
}

/**
 * Conductor's WorkflowBulkResource (and Orkes' bulk delete): a JSON array of workflow ids, each acted on and
 * authorized exactly as by its single-id route. Registered before those routes, whose `:workflowId` would take "bulk".
 */
export function registerBulkWorkflowRoutes(router: RouterType<IRequest, Args>): void {
  for (const { method, operation } of BULK_OPERATIONS) {
    const route = bulkRoute(WORKFLOW_ACTIONS[BULK_ACTION[operation]], operation === "retry" || operation === "restart" ? operation : undefined);
    if (method === "PUT") router.put(bulkPath(operation), route);
    else if (method === "DELETE") router.delete(bulkPath(operation), route);
    else router.post(bulkPath(operation), route);
  }
  router.post(BULK_SEARCH_PATH, bulkSearch);
}

/** The single-id action each bulk operation repeats; Orkes' bulk `delete` and Conductor's `remove` are DELETE /api/workflow/{id}/remove. */
const BULK_ACTION: Record<BulkOperation, keyof typeof WORKFLOW_ACTIONS> = {
  pause: "pause",
  resume: "resume",
  restart: "restart",
  retry: "retry",
  terminate: "terminate",
  delete: "remove",
  remove: "remove",
  "terminate-remove": "terminateRemove",
};
