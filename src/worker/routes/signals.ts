/**
 * Conductor's signals: `POST /api/tasks/{workflowId}/{status}/signal` (and `/signal/sync`) complete, fail or update
 * the WAIT an execution waits in, found by the service (see `WorkflowExecution.signalTarget`), so that the caller
 * needs only the workflow id. The synchronous variant answers, as Orkes' SignalResponse (see `signal-response.ts`),
 * with where the workflow came to: the workflow itself, or what blocks it now (the workflow holding the blocker, the
 * task, or its input).
 */
import type { IRequest, RouterType } from "itty-router";
import type { ExternalTaskStatus, JsonObject } from "../../engine/model";
import { serviceConfig } from "../config";
import { retryingExecutionCall, unwrap, updateTaskRepeatably } from "../executions";
import { readJsonBody } from "../http/body";
import { ApiError, fromEngineRefusal } from "../http/errors";
import { decodedPathParam, integerQuery } from "../http/params";
import { requestAuthorizer, type PathAuthorizer } from "../guard";
import { ExternalStatus, JsonObjectBody, parseOrThrow } from "../schemas";
import { returnStrategyOf, signalResponse, workflowView } from "../signal-response";

type Args = [Env, ExecutionContext];

/**
 * Applies the signal: finds the WAIT, checks that the caller may complete it when it lies in a child (the signal route's
 * own rule covered the signalled workflow), and updates it. Nothing changes when it is refused.
 */
async function applySignal(request: IRequest, env: Env, authorize: () => Promise<PathAuthorizer>): Promise<"applied" | "nothing waiting"> {
  const workflowId = decodedPathParam(request, "workflowId");
  const status = parseOrThrow(ExternalStatus, request.params["status"], "signal status", "status");
  const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  const output: JsonObject = body.present ? parseOrThrow(JsonObjectBody, body.value, "signal output") : {};
  let refusedTaskId: string | undefined;
  for (let attempt = 1; ; attempt++) {
    // An unknown workflow is a 404 (unwrap's).
    const target = unwrap(await retryingExecutionCall(env, workflowId, async (stub) => await stub.signalTarget()));
    if (target === null) return "nothing waiting";
    if (target.workflowId !== workflowId) {
      // As the completion of that very task instance would be checked (by its reference name, its task name or its
      // workflow): the instance updated below, not whichever the reference names by the time of the update.
      await (await authorize())("POST", `/api/queue/update/${target.workflowId}/task/${target.taskId}/${status}`);
    }
    const updated = await signalUpdate(env, target, status, output);
    if (updated.ok) return "applied";
    // Refused because another signal (or a completion, a timeout) ended the task between the look-up and the update:
    // this signal comes after that one, and finds what waits now, as it would have had it been sent a moment later
    // (nothing: 200, as for a signal sent again), where it was a 409. A refused update changed nothing. Refused again
    // for the same task, the refusal is not about its having ended: it is the answer.
    if (updated.error.kind !== "CONFLICT" || target.taskId === refusedTaskId || attempt === MAX_SIGNAL_LOOKUPS) throw fromEngineRefusal(updated.error);
    refusedTaskId = target.taskId;
  }
}

/**
 * The signal's update of the WAIT `target` names, any status: made again on a fresh stub when a reset cuts its call
 * off, with the request's id, as a by-id queue update is (see repeatableExecutionCall). A call of an update that landed
 * (its repeat, or the first call reaching the object late) answers as applied and applies nothing, so the WAIT after it
 * is not signalled too; one that did not land applies as the first call does, so a WAIT another request ended meanwhile
 * (another signal of the same status too) is refused and the signal goes on to what waits after it, as one sent a
 * moment later would. An object still on older code is asked as updateTaskRepeatably says.
 */
async function signalUpdate(env: Env, target: { workflowId: string; taskId: string }, status: ExternalTaskStatus, output: JsonObject) {
  return await updateTaskRepeatably(env, target.workflowId, target.taskId, status, output);
}

/** How many times a signal looks up the task it updates when each one found was ended meanwhile by another request. */
const MAX_SIGNAL_LOOKUPS = 3;

/** Registers the signal routes. Before the task update by reference name, whose `{taskRefName}/{status}` they would fit. */
export function registerSignalRoutes(router: RouterType<IRequest, Args>): void {
  router.post("/api/tasks/:workflowId/:status/signal", async (request, env) => {
    // As Conductor's: a signal that finds nothing waiting for it does nothing, and says so by nothing (its signalTask
    // returns null).
    await applySignal(request, env, () => requestAuthorizer(request, env));
    return new Response(null, { status: 200 });
  });

  router.post("/api/tasks/:workflowId/:status/signal/sync", async (request, env) => {
    const strategy = returnStrategyOf(request);
    const config = serviceConfig(env);
    const waitMs = integerQuery(request, "timeoutMillis", 0, config.executeMaxWaitSeconds * 1000) ?? config.signalDefaultWaitMs;
    const workflowId = decodedPathParam(request, "workflowId");
    const authorize = await requestAuthorizer(request, env);
    // The answer is a read of the workflow: checked first, so a caller who may not read it changes nothing.
    await authorize("GET", `/api/workflow/${workflowId}`);
    // A signal that finds nothing waiting (one more than the workflow waits for, or one sent again) changes nothing and
    // is answered with where the workflow stands, as Orkes answers it: its clients' tests signal once too often.
    const applied = (await applySignal(request, env, async () => authorize)) === "applied";
    // The wait is a read, made again on a fresh stub should a reset cut it off (for the time left): the signal took
    // effect, and a 503 would have the client send it again, completing the WAIT after this one.
    const deadline = Date.now() + waitMs;
    const settled = applied ? await retryingExecutionCall(env, workflowId, (stub) => stub.settle(Math.max(0, deadline - Date.now()))) : undefined;
    const timedOut = settled === "timedOut";
    const top = await workflowView(env, workflowId);
    if (top === undefined) throw new ApiError(404, "NOT_FOUND", `Workflow ${workflowId} not found`);
    return Response.json(await signalResponse(env, strategy, top, async () => authorize, { timedOut }));
  });
}
