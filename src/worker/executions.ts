import type { ActorResult, ExecutionSummary, RepeatableRequest, TaskUpdated, TaskUpdateOptions } from "../actors/workflow-execution";
import type { ExternalTaskStatus, JsonObject, WorkflowStatus } from "../engine/model";
import { ApiError, fromEngineRefusal, notFound } from "./http/errors";
import { isUuid } from "../engine/task-id";
import { retryingObjectCall } from "./object-retry";
import { APPLIED_REQUEST_KEEP_MS } from "../actors/execution-store";

/** Ids are random UUIDs; anything else cannot name an execution, so it is refused before touching an object. */

/** True when `workflowId` can be an execution's id (a UUID). */
export function isWorkflowId(workflowId: string): boolean {
  return isUuid(workflowId);
}

/** The id as the execution's object is named: an id shaped like a UUID names the same execution in either case. */
export function canonicalWorkflowId(workflowId: string): string {
  return isWorkflowId(workflowId) ? workflowId.toLowerCase() : workflowId;
}

/** A stub of an execution's Durable Object. */
export type ExecutionStub = DurableObjectStub<import("../actors/workflow-execution").WorkflowExecution>;

/** The Durable Object of an execution, or 404 when the id cannot be one. */
export function executionStub(env: Env, workflowId: string): ExecutionStub {
  if (!isWorkflowId(workflowId)) throw notFound(`Workflow ${workflowId} not found`);
  return env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(canonicalWorkflowId(workflowId)));
}

/**
 * `call` on the execution's object, repeated on a fresh stub when it meets a transient failure of the object (see
 * {@link retryingObjectCall}): only for calls safe to repeat (reads, idempotent writes).
 */
export function retryingExecutionCall<T>(env: Env, workflowId: string, call: (stub: ExecutionStub) => Promise<T>): Promise<T> {
  return retryingObjectCall(() => executionStub(env, workflowId), call);
}

/**
 * `call` on the execution's object for one incoming request, made again on a fresh stub as {@link retryingExecutionCall}
 * makes it, for a call that is not idempotent by itself (an update by reference name: repeated blindly, it would find
 * the reference's next task): each attempt is given the request's one random id, and all but the first are marked as
 * repeats, so that the object, which records the ids it applied in the same transaction as the update, answers any
 * call of one that landed (its repeat, or the first call reaching it late: two stubs are not ordered) as the first
 * would have and applies nothing. No call more on the normal path; a repeat is made only to an object that keeps the
 * records (see keepsAppliedRequests), unless `repeatsOnOlderCode`: the caller's repeat carries what that code reads
 * instead of the id (a signal's guess, lateIsTaken "endedAlike"), so it is made there as that code's router made it.
 */
export function repeatableExecutionCall<T>(
  env: Env,
  workflowId: string,
  call: (stub: ExecutionStub, request: RepeatableRequest) => Promise<T>,
  { repeatsOnOlderCode = false }: { repeatsOnOlderCode?: boolean } = {},
): Promise<T> {
  const id = crypto.randomUUID();
  const firstCalledAt = Date.now();
  let repeat = false;
  let olderObject = false;
  let cutOff: unknown;
  return retryingObjectCall(
    () => executionStub(env, workflowId),
    async (stub) => {
      // Only on the failure path: the normal path makes its one call.
      if (repeat && !repeatsOnOlderCode && !(await keepsAppliedRequests(stub))) {
        olderObject = true;
        throw cutOff;
      }
      const request = { id, repeat };
      repeat = true;
      try {
        return await call(stub, request);
      } catch (error) {
        cutOff = error;
        throw error;
      }
    },
    () => !olderObject && mayRepeatRequest(firstCalledAt, Date.now()),
  );
}

/**
 * Updates task `taskId` of the execution (a by-id queue update, a signal's update of its WAIT, a worker's TaskResult) through
 * {@link repeatableExecutionCall}. A repeat also says lateIsTaken "endedAlike", the guess an object on the code before
 * the request's id (a deploy's first moments, a gradual deployment's previous version) makes without it, which ignores
 * the id; the object on this code ignores the guess for a call with an id. So a COMPLETED or FAILED is repeated on that
 * code too, as its router repeated it (a 503 has the client send it again, which then finds the task ended); an
 * IN_PROGRESS is not, as that router did not (it keeps the task pending, so that code would apply it twice).
 */
export function updateTaskRepeatably(env: Env, workflowId: string, taskId: string, status: ExternalTaskStatus, output: JsonObject, options: TaskUpdateOptions = {}): Promise<ActorResult<TaskUpdated>> {
  const repeated = async (stub: ExecutionStub, made: RepeatableRequest) => {
    const given = made.repeat ? { ...options, lateIsTaken: "endedAlike" as const } : options;
    return await stub.updateTask(taskId, status, output, given, made);
  };
  return repeatableExecutionCall(env, workflowId, repeated, { repeatsOnOlderCode: status !== "IN_PROGRESS" });
}

/**
 * Whether the execution's object keeps the records a repeat relies on: false for an object still on code from before
 * them (see WorkflowExecution.keepsAppliedRequests), to which a call cut off is not repeated (the caller gets the 503,
 * as that code's router answered), since that code ignores the request's id and would apply the repeat again.
 */
async function keepsAppliedRequests(stub: ExecutionStub): Promise<boolean> {
  return await orOnOlderCode("keepsAppliedRequests", () => stub.keepsAppliedRequests(), () => false);
}

/**
 * Whether a call first made at `firstCalledAt` may still be repeated at `now`: only while the object surely keeps the
 * record of its request ({@link APPLIED_REQUEST_KEEP_MS}, less a minute for the object's clock and the call's own
 * time). A state update may wait EXECUTE_MAX_WAIT_SECONDS after it applied, which an operator may set past that; a
 * repeat after the record was dropped would apply blindly to the reference's next task, so the caller gets the 503.
 */
export function mayRepeatRequest(firstCalledAt: number, now: number): boolean {
  return now - firstCalledAt < APPLIED_REQUEST_KEEP_MS - 60_000;
}

/**
 * Whether `error` is workerd's answer to a call of RPC method `method` that the object's code does not have: an object
 * may still run the code before a deploy while the router runs the new one, for seconds to minutes after a deploy, and
 * for as long as a gradual deployment assigns it the previous version (Cloudflare's Durable Objects known issues, and
 * gradual deployments with Durable Objects), so a method added since is not there yet. workerd words it `The RPC
 * receiver does not implement the method "X".` (worker-rpc.c++); the test pool's wrapper of the object, `The RPC
 * receiver does not implement "X".`: both are read. Only that TypeError naming `method` itself: an error from inside
 * the method of an object that has it (a TypeError, a reset, an overload) is not read as its absence.
 * Each fallback on it can go once no deployment's previous version lacks its method: after a deployment of code with
 * the method has finished (every object on it), the next one's previous version has it (docs/reliability.md).
 */
export function isUnimplementedRpcMethod(error: unknown, method: string): boolean {
  if (!(error instanceof TypeError)) return false;
  return error.message.includes(`does not implement the method "${method}"`) || error.message.includes(`does not implement "${method}"`);
}

/**
 * Throws the 503 for a route whose feature came with its object method (a workflow's size, `getSize`; a message push,
 * `pushMessage`): an object still on the previous version (see {@link isUnimplementedRpcMethod}) cannot answer it, but
 * will once the deployment reaches it. The fallback of such a call through {@link orOnOlderCode}, so only the method the
 * router itself called is read as missing: nothing was done (the call never ran), and the client may send it again; a
 * 500 would say the service failed.
 */
export function refuseOnOlderCode(): never {
  throw new ApiError(
    503,
    "UNAVAILABLE",
    "This execution is still served by the service's previous version (a deployment is under way), which cannot answer this request yet; nothing was changed: try again shortly",
    undefined,
    { "Retry-After": String(OLDER_OBJECT_CODE_RETRY_AFTER_SECONDS) },
  );
}

/** What a client refused by an object on the previous version is told to wait (`Retry-After`, seconds): a deployment takes seconds to minutes to reach every object. */
const OLDER_OBJECT_CODE_RETRY_AFTER_SECONDS = 10;

/**
 * What `call` of RPC method `method` answers, or, from an object whose code does not have that method yet (see
 * {@link isUnimplementedRpcMethod}), what `fallback` does in its place, as the code before it did. Every such fallback
 * goes through here, so that those no deployment needs any more are found in one search.
 */
export async function orOnOlderCode<T, F = T>(method: string, call: () => Promise<T>, fallback: () => F | Promise<F>): Promise<T | F> {
  try {
    return await call();
  } catch (error) {
    if (!isUnimplementedRpcMethod(error, method)) throw error;
    return await fallback();
  }
}

/**
 * The definition name and status of the execution `stub` reaches (with its parent, see {@link ExecutionSummary}; an
 * object on the code before it was answered leaves it out), or null when its object holds none. An object still
 * on the code before `getNameAndStatus` (ae1ddb7f; a gradual deployment's previous version, see
 * {@link isUnimplementedRpcMethod}) is read through its Workflow JSON, which every version answers, where the call
 * failed: a 500 to a restart with the latest definitions, an UPDATE_TASK or TERMINATE_WORKFLOW failing its task.
 */
export async function nameAndStatusOf(stub: ExecutionStub): Promise<ExecutionSummary | null> {
  return await orOnOlderCode("getNameAndStatus", () => stub.getNameAndStatus(), async () => {
    const json = await stub.getWorkflowJson(false);
    if (json === null) return null;
    const { workflowName, status, parentWorkflowId } = JSON.parse(json) as { workflowName: string; status: WorkflowStatus; parentWorkflowId?: string };
    return parentWorkflowId === undefined ? { workflowName, status } : { workflowName, status, parentWorkflowId };
  });
}

/** The value of an actor result, or the matching API error. */
export function unwrap<T>(result: ActorResult<T>): T {
  if (result.ok) return result.value;
  throw fromEngineRefusal(result.error);
}
