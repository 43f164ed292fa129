import type { IRequest, RouterType } from "itty-router";
import { mapBounded } from "../bounded";
import { serviceConfig } from "../config";
import { canonicalWorkflowId } from "../executions";
import { requestAuthorizer, type PathAuthorizer } from "../guard";
import { readJsonBody } from "../http/body";
import { ApiError, validationError } from "../http/errors";
import { BulkWorkflowIds, parseOrThrow } from "../schemas";
import { WORKFLOW_ACTIONS, type ExecutionAct, type WorkflowAction } from "../workflow-actions";

type Args = [Env, ExecutionContext];

/** Ids of one bulk request worked at once: their calls overlap, but 1000 ids never open 1000 calls together. */
export const BULK_CONCURRENCY = 10;

/** Conductor's BulkResponse: each refused id with the reason, and the ids acted on, in the order given. */
interface BulkResponse {
  bulkErrorResults: Record<string, string>;
  bulkSuccessfulResults: string[];
}

/** The ids of the body, 400 unless it is a JSON array of 1 to 1000 non-empty strings. */
async function bulkIds(request: IRequest, env: Env): Promise<string[]> {
  const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  if (!body.present) throw validationError("Invalid bulk request", [{ path: "(body)", message: "is required: a JSON array of workflow ids" }]);
  return parseOrThrow(BulkWorkflowIds, body.value, "bulk request");
}

/** Each id once, in the order first given (as first spelled): a repeated id would be acted on twice. */
function distinct(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  return ids.filter((id) => {
    const key = canonicalWorkflowId(id);
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
  try {
    await authorizeAs(action.method, action.path(workflowId));
    await act(env, workflowId);
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return error.message;
    // Not thrown on: other ids may have been acted on already, and the caller must learn which.
    const requestId = crypto.randomUUID();
    const detail = error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ""}` : String(error);
    console.error(JSON.stringify({ msg: "unhandled error in a bulk workflow operation", requestId, workflowId, error: detail }));
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
    const response: BulkResponse = {
      bulkErrorResults: Object.fromEntries(ids.flatMap((id, index) => (outcomes[index] === undefined ? [] : [[id, outcomes[index]]]))),
      bulkSuccessfulResults: ids.filter((_id, index) => outcomes[index] === undefined),
    };
    return Response.json(response);
  };
}

/**
 * Conductor's WorkflowBulkResource (and Orkes' bulk delete): a JSON array of workflow ids, each acted on and
 * authorized exactly as by its single-id route. Registered before those routes, whose `:workflowId` would take "bulk".
 */
export function registerBulkWorkflowRoutes(router: RouterType<IRequest, Args>): void {
  router.put("/api/workflow/bulk/pause", bulkRoute(WORKFLOW_ACTIONS.pause));
  router.put("/api/workflow/bulk/resume", bulkRoute(WORKFLOW_ACTIONS.resume));
  router.post("/api/workflow/bulk/restart", bulkRoute(WORKFLOW_ACTIONS.restart));
  router.post("/api/workflow/bulk/retry", bulkRoute(WORKFLOW_ACTIONS.retry));
  router.post("/api/workflow/bulk/terminate", bulkRoute(WORKFLOW_ACTIONS.terminate));
  // Orkes' bulk removal (what its clients call `delete`): DELETE /api/workflow/{id}/remove for each id.
  router.post("/api/workflow/bulk/delete", bulkRoute(WORKFLOW_ACTIONS.remove));
}
