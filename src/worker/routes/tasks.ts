import type { IRequest, RouterType } from "itty-router";
import * as v from "valibot";
import type { JsonObject } from "../../engine/model";
import type { TaskLogInput, TaskResultInput, TaskUpdated } from "../../actors/workflow-execution";
import { serviceConfig, type ServiceConfig } from "../config";
import { executionStub, repeatableExecutionCall, retryingExecutionCall, unwrap, updateTaskRepeatably } from "../executions";
import { jsonTextResponse, readBodyBytes, readJsonBody, readStringBody, textResponse } from "../http/body";
import { ApiError, errorResponse, notFound, validationError } from "../http/errors";
import { decodedPathParam, nameQuery, queryValue } from "../http/params";
import { ExternalStatus, JsonObjectBody, TaskLogLine, TaskResultRequest, parseOrThrow } from "../schemas";
import { authorizeRead, checkedTaskName, principalOf } from "../guard";
import { findTask, type FoundTask } from "../task-lookup";
import { readableTasks, searchTasks } from "../task-search";
import { searchV2 } from "../search-v2";

type Args = [Env, ExecutionContext];

const CALLBACK_ERRORS = { 400: "VALIDATION_ERROR", 401: "UNAUTHENTICATED", 404: "NOT_FOUND", 409: "CONFLICT", 413: "PAYLOAD_TOO_LARGE", 415: "UNSUPPORTED_MEDIA_TYPE", 429: "RATE_LIMITED" } as const;

/** The webhook callback path; it is authenticated by the task's headers and signature, not a token. */
export const WEBHOOK_CALLBACK_PATH = /^\/api\/tasks\/webhook\/[^/]+\/[^/]+\/[^/]+$/;

/** The status in the path (one of `statuses`) and the output in the body (`{}` when there is none) of an update from outside. */
async function pathStatusAndOutput<S extends string>(request: IRequest, env: Env, statuses: v.GenericSchema<unknown, S>): Promise<{ status: S; output: JsonObject }> {
  const status = parseOrThrow(statuses, request.params["status"], "task status", "status");
  const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  return { status, output: body.present ? parseOrThrow(JsonObjectBody, body.value, "task output") : {} };
}

/** Conductor's QueueAdminResource takes a task's status as its `Status`: IN_PROGRESS, COMPLETED or FAILED. */
const QueueUpdateStatus = v.picklist(["IN_PROGRESS", "COMPLETED", "FAILED"], "status must be one of IN_PROGRESS, COMPLETED, FAILED");

/** The status and output of a `POST /api/queue/update/…`. */
function queueUpdate(request: IRequest, env: Env) {
  return pathStatusAndOutput(request, env, QueueUpdateStatus);
}

/**
 * The update of `POST /api/queue/update/{workflowId}/task/{taskId}/{status}`, any status: made again on a fresh stub
 * when a reset cuts its call off, with the request's id, as the update by reference is (see repeatableExecutionCall).
 * A call of a request that landed (its repeat, or the first call reaching the object late) answers 200 and applies
 * nothing, whatever the task became (a COMPLETED whose output failed the task's output schema ended it
 * FAILED_WITH_TERMINAL_ERROR); one that did not land applies as the first call does, so a task no longer pending is a
 * 409 even when another client ended it with the same status: a guess from the task's status was wrong both ways.
 * An object still on older code is asked as updateTaskRepeatably says.
 */
async function queueUpdateById(env: Env, workflowId: string, taskId: string, status: "IN_PROGRESS" | "COMPLETED" | "FAILED", output: JsonObject, reason: string | undefined) {
  return await updateTaskRepeatably(env, workflowId, taskId, status, output, reason === undefined ? {} : { reason });
}

/**
 * The `?reason=` of a by-id queue update: the task's `reasonForIncompletion` (cut as a TaskResult's is), undefined when
 * absent or empty. In the query, not the body: Conductor's update puts the whole body into the output, so a
 * `reasonForIncompletion` key there stays an output field, as a Conductor client sending one expects. Without it a user
 * failing a task with a reason had only `POST /api/tasks`.
 */
function queueUpdateReason(request: IRequest): string | undefined {
  const reason = queryValue(request, "reason");
  return reason === undefined || reason === "" ? undefined : reason;
}

/**
 * `POST /api/tasks/{workflowId}/{taskRefName}/{status}[?workerid=]`: updates the pending task with that reference name;
 * `workerid` (which Orkes' clients send, the host's name) is its worker from then on, as in Conductor. Made again on a
 * fresh stub when a reset cuts its call off, with the request's id, so that a repeat of one that landed applies nothing
 * (see repeatableExecutionCall): the reference's next task (a retry of the FAILED one, a loop's next iteration) is not
 * updated too.
 */
async function updateByRef(request: IRequest, env: Env): Promise<{ taskId: string; workflowId: string }> {
  const workerId = nameQuery(request, "workerid");
  const { status, output } = await pathStatusAndOutput(request, env, ExternalStatus);
  const workflowId = decodedPathParam(request, "workflowId");
  const [taskRefName, checked] = [decodedPathParam(request, "taskRefName"), checkedTaskName(request)];
  const { taskId } = unwrap(await repeatableExecutionCall(env, workflowId, async (stub, made) => await stub.updateTaskByRef(taskRefName, status, output, undefined, checked, workerId, made)));
  return { taskId, workflowId };
}

/**
 * Applies a TaskResult (`POST /api/tasks` and `/api/tasks/update-v2`) to its execution; the API error of a refusal.
 * A heartbeat (`extendLease`) names no worker queue: Conductor's update-v2 hands out no next task for one.
 */
export async function applyTaskResult(env: Env, result: TaskResultRequest): Promise<TaskUpdated> {
  const workflowId = result.workflowInstanceId;
  // A heartbeat repeated only extends the lease again.
  if (result.extendLease === true) return unwrap(await retryingExecutionCall(env, workflowId, async (stub) => await stub.extendLease(result.taskId)));
  // Checked with the body (see TaskResultRequest): only a heartbeat goes without one.
  if (result.status === undefined) throw validationError("Invalid task result", [{ path: "status", message: "is required unless extendLease is true" }]);
  // A worker sends a result it cannot store again and again (Conductor's clients retry, then drop it): the task fails
  // for good instead, as Conductor's server fails it, and the workflow goes on as for any failure.
  const input = {
    ...taskResultInput({ ...result, status: result.status }),
    oversizeFailsTask: true as const,
    ...(typeof result.workerId === "string" && result.workerId !== "" ? { workerId: result.workerId } : {}),
  };
  // A result for a task no longer pending (timed out, canceled with its workflow, or reported before) is a 409, as the
  // contract pins it ("completing a task that is not pending"), where Conductor answers it 200 and changes nothing. A
  // call of this request that a reset cut off after it landed is made again with the request's id and answered 200
  // from the object's record of it (its log lines added once), not refused as a stranger's late result would be.
  return unwrap(await updateTaskRepeatably(env, workflowId, result.taskId, input.status, input.output, input));
}

/**
 * The largest TaskResult body read: four times `MAX_REQUEST_BYTES`, so that a worker's output too large to store (over
 * `MAX_PAYLOAD_BYTES`) fails its task rather than being refused whole, as an output up to Conductor's Java client's
 * own 3 MB threshold would be on Conductor's server.
 */
export function taskResultMaxBytes(config: ServiceConfig): number {
  return 4 * config.maxRequestBytes;
}

/** What a parsed TaskResult asks of its task, as the execution takes it (its log lines included). */
export function taskResultInput(
  result: Pick<TaskResultRequest, "outputData" | "reasonForIncompletion" | "callbackAfterSeconds" | "logs"> & { status: TaskResultInput["status"] },
): TaskResultInput & { logs?: TaskLogInput[] } {
  const input: TaskResultInput & { logs?: TaskLogInput[] } = { status: result.status, output: result.outputData ?? {} };
  // Given, it replaces the task's output (Conductor's updateTask); a result without one (a reason alone) keeps it.
  if (result.outputData !== undefined && result.outputData !== null) input.replaceOutput = true;
  if (result.reasonForIncompletion !== undefined && result.reasonForIncompletion !== null) input.reason = result.reasonForIncompletion;
  if (result.callbackAfterSeconds !== undefined && result.callbackAfterSeconds !== null) input.callbackAfterSeconds = result.callbackAfterSeconds;
  const lines = (result.logs ?? []).flatMap(({ log, createdTime }) => (log === null || log === undefined ? [] : [createdTime === null || createdTime === undefined ? { log } : { log, createdTime }]));
  if (lines.length > 0) input.logs = lines;
  return input;
}

/** The task `taskId` names, found through its execution (see task-lookup.ts); 404 when none holds it. */
async function foundTask(request: IRequest, env: Env, taskId: string): Promise<FoundTask> {
  const found = await findTask(request, env, taskId);
  if (found === undefined) throw notFound(taskNotFound(taskId));
  return found;
}

function taskNotFound(taskId: string): string {
  return `Task ${taskId} not found (no execution holds it: tasks are found by id once their execution is searchable, which a lookup waits up to 1.45 s for)`;
}

/** The body of `POST /api/tasks/{taskId}/log`: one log line, as a JSON string (Conductor's clients) or text/plain. */
async function readLogLine(request: Request, maxBytes: number): Promise<string> {
  const line = await readStringBody(request, maxBytes, { what: "log message", example: '"resized 3 images"', untypedAsJson: true, loneSurrogatesReplaced: true });
  if (line === "") throw validationError("The log message must not be empty", [{ path: "(body)", message: "must not be empty" }]);
  return parseOrThrow(TaskLogLine, line, "log message", "(body)");
}

/**
 * The webhook callback route: public (its task's headers and signature authenticate it), so registered before any
 * route whose pattern could take one of its paths unauthenticated (the signal routes' `/api/tasks/{workflowId}/
 * {status}/signal/sync` took `/api/tasks/webhook/COMPLETED/signal/sync`, and answered 500 with no caller).
 */
export function registerWebhookCallbackRoute(router: RouterType<IRequest, Args>): void {
  router.post("/api/tasks/webhook/:workflowId/:taskRefName/:taskId", async (request, env) => {
    const workflowId = decodedPathParam(request, "workflowId");
    let stub: ReturnType<typeof executionStub>;
    try {
      stub = executionStub(env, workflowId);
    } catch (error) {
      if (error instanceof ApiError) throw new ApiError(404, "NOT_FOUND", "No webhook task with that workflow id, reference name and task id");
      throw error;
    }
    const body = await readBodyBytes(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    const result = await stub.webhookCallback({
      taskRefName: decodedPathParam(request, "taskRefName"),
      taskId: decodedPathParam(request, "taskId"),
      headers: [...(request as unknown as Request).headers],
      body,
    });
    if (result.ok) return Response.json(result.value);
    const { status, message, validationErrors, retryAfterSeconds } = result.refusal;
    const headers = retryAfterSeconds === undefined ? undefined : { "Retry-After": String(retryAfterSeconds) };
    return errorResponse(status, CALLBACK_ERRORS[status], message, { validationErrors, headers });
  });
}

/** Routes that complete or update tasks from outside (asyncComplete HTTP tasks, waiting tasks). */
export function registerTaskRoutes(router: RouterType<IRequest, Args>): void {
  router.post("/api/tasks/:workflowId/:taskRefName/:status", async (request, env) => textResponse((await updateByRef(request, env)).taskId));

  // Orkes' synchronous variant (TaskClient/WorkflowExecutor.updateTaskSync): the same update, answered
  // with the Workflow JSON as it stands once the update has been applied. That answer is a read of the
  // execution: checked before the update, so a caller who may not read it changes nothing.
  router.post("/api/tasks/:workflowId/:taskRefName/:status/sync", async (request, env) => {
    await authorizeRead(request, env, `/api/workflow/${request.params["workflowId"] ?? ""}`);
    const { workflowId } = await updateByRef(request, env);
    return jsonTextResponse((await retryingExecutionCall(env, workflowId, (stub) => stub.getWorkflowJson(true)))!);
  });

  // Conductor's pending task of a workflow by reference name (TaskClient.getPendingTaskForWorkflow).
  router.get("/api/tasks/in_progress/:workflowId/:taskRefName", async (request, env) => {
    const [workflowId, taskRefName] = [decodedPathParam(request, "workflowId"), decodedPathParam(request, "taskRefName")];
    const json = await retryingExecutionCall(env, workflowId, (stub) => stub.getPendingTaskJson(taskRefName));
    if (json !== null) return jsonTextResponse(json);
    // Asked only for the 404: a mistyped workflow id is said to be one, not read as a workflow without that task.
    const exists = (await retryingExecutionCall(env, workflowId, (stub) => stub.getWorkflowName())) !== null;
    throw notFound(exists ? `Workflow ${workflowId} has no pending task with reference name ${taskRefName}` : `Workflow ${workflowId} not found`);
  });

  // Conductor's QueueAdminResource updates, which complete a waiting task by reference name or id with the body as its
  // output (there through the default event queue; here at once, as `POST /api/tasks/{workflowId}/{taskRefName}/{status}`).
  router.post("/api/queue/update/:workflowId/task/:taskId/:status", async (request, env) => {
    const { status, output } = await queueUpdate(request, env);
    unwrap(await queueUpdateById(env, decodedPathParam(request, "workflowId"), decodedPathParam(request, "taskId").toLowerCase(), status, output, queueUpdateReason(request)));
    return new Response(null, { status: 200 });
  });
  router.post("/api/queue/update/:workflowId/:taskRefName/:status", async (request, env) => {
    const { status, output } = await queueUpdate(request, env);
    const [taskRefName, checked] = [decodedPathParam(request, "taskRefName"), checkedTaskName(request)];
    // Made again after a reset as the update by reference of /api/tasks is (see updateByRef).
    unwrap(await repeatableExecutionCall(env, decodedPathParam(request, "workflowId"), async (stub, made) => await stub.updateTaskByRef(taskRefName, status, output, undefined, checked, undefined, made)));
    return new Response(null, { status: 200 });
  });

  // Conductor's task search (TaskClient.search), from the task index. Before `/:taskId`, which would take "search".
  // Each caller finds the tasks it may read (by workflow or task name).
  router.get("/api/tasks/search", async (request, env) => Response.json(await searchTasks(env.DB, request, readableTasks(principalOf(request).grants))));
  // The same search, answered with each task's Task JSON, read from its execution.
  router.get("/api/tasks/search-v2", async (request, env) =>
    jsonTextResponse(
      await searchV2(request, {
        search: (search) => searchTasks(env.DB, search, readableTasks(principalOf(request).grants)),
        read: (summary) => retryingExecutionCall(env, String(summary["workflowId"]), (stub) => stub.getTaskJson(String(summary["taskId"]))),
      }),
    ),
  );

  // Conductor's getTask: found through its execution (see task-lookup.ts). The guard has checked the caller may read it.
  router.get("/api/tasks/:taskId", async (request, env) => {
    const taskId = decodedPathParam(request, "taskId");
    const found = await foundTask(request, env, taskId);
    const json = await retryingExecutionCall(env, found.workflowId, (stub) => stub.getTaskJson(taskId.toLowerCase()));
    if (json === null) throw notFound(taskNotFound(taskId));
    return jsonTextResponse(json);
  });

  // Conductor's task logs: `[{log, taskId, createdTime}]`, oldest first. The guard has checked the caller may read the task.
  router.get("/api/tasks/:taskId/log", async (request, env) => {
    const taskId = decodedPathParam(request, "taskId");
    const found = await foundTask(request, env, taskId);
    const logs = await retryingExecutionCall(env, found.workflowId, (stub) => stub.getTaskLogs(taskId.toLowerCase()));
    if (logs === null) throw notFound(taskNotFound(taskId));
    return Response.json(logs);
  });

  // One log line (Conductor's `TaskClient.logMessageForTask`), answered with an empty 200 as Conductor does. The guard has
  // checked the caller may report on the task.
  // Conductor's ack of a polled task (its Java client's TaskClient.ack, sent right after a poll): a poll hands a task out
  // for good here, so there is nothing to acknowledge, and nothing is looked up (a task is found by id only once its
  // execution is searchable): true, as Conductor answers.
  router.post("/api/tasks/:taskId/ack", () => Response.json(true));

  router.post("/api/tasks/:taskId/log", async (request, env) => {
    const taskId = decodedPathParam(request, "taskId");
    const log = await readLogLine(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    const found = await foundTask(request, env, taskId);
    const added = await executionStub(env, found.workflowId).addTaskLogs(taskId.toLowerCase(), [{ log }]);
    if (!added.ok) throw notFound(taskNotFound(taskId));
    return new Response(null, { status: 200 });
  });

  router.post("/api/tasks", async (request, env) => {
    const body = await readJsonBody(request as unknown as Request, taskResultMaxBytes(serviceConfig(env)));
    const result = parseOrThrow(TaskResultRequest, body.present ? body.value : undefined, "task result");
    return textResponse((await applyTaskResult(env, result)).taskId);
  });
}
