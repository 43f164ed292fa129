import type { IRequest, RouterType } from "itty-router";
import { BULK_OPERATIONS, BULK_SEARCH_PATH, bulkPath, type BulkOperation } from "../auth/access-rules";
import { mapBounded } from "../bounded";
import { serviceConfig } from "../config";
import { canonicalWorkflowId, executionStub, retryingExecutionCall } from "../executions";
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

/** The route acting on every id of its body as `action`'s single-id route would, each on its own. */
function bulkRoute(action: WorkflowAction) {
  return async (request: IRequest, env: Env): Promise<Response> => {
    // Everything that could refuse the whole request is checked before any id is acted on.
    const act = action.prepare(request);
    const ids = distinct(await bulkIds(request, env));
    const authorizeAs = await requestAuthorizer(request, env);
    const outcomes = await mapBounded(ids, BULK_CONCURRENCY, (workflowId) => outcomeFor(action, act, authorizeAs, env, workflowId));
    return Response.json(bulkResponse(ids, outcomes));
  };
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
    const route = bulkRoute(WORKFLOW_ACTIONS[BULK_ACTION[operation]]);
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
