import type { IRequest, RouterType } from "itty-router";
import type { WorkflowCommand } from "../../actors/workflow-execution";
import { oversize, oversizeReason } from "../../engine/limits";
import type { JsonObject } from "../../engine/model";
import { serviceConfig } from "../config";
import { executionStub, unwrap } from "../executions";
import { jsonTextResponse, readJsonBody, textResponse } from "../http/body";
import { ApiError, validationError } from "../http/errors";
import { CorrelationId, JsonObjectBody, RerunRequest, StartWorkflowRequest, parseOrThrow, type StartWorkflowRequest as StartRequest } from "../schemas";
import { readableWorkflows } from "../auth/access-rules";
import { principalOf } from "../guard";
import { booleanQuery, decodedPathParam, integerQuery, queryValue } from "../http/params";
import { searchExecutions } from "../search";
import { startExecution, type StartOptions, type StartOutcome } from "../start-execution";
import { WORKFLOW_ACTIONS, callerStartScopes, type WorkflowAction } from "../workflow-actions";

type Args = [Env, ExecutionContext];

async function startBody(request: IRequest, env: Env): Promise<StartRequest> {
  const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  return body.present ? parseOrThrow(StartWorkflowRequest, body.value, "start workflow request") : {};
}

/** The Workflow JSON of an execution, 404 when there is none. */
async function workflowJson(env: Env, workflowId: string, includeTasks: boolean): Promise<string> {
  const workflow = await executionStub(env, workflowId).getWorkflowJson(includeTasks);
  if (workflow === null) throw new ApiError(404, "NOT_FOUND", `Workflow ${workflowId} not found`);
  return workflow;
}

/** The route of a lifecycle action on the execution its path names: 200 with no body once done. */
function singleAction(action: WorkflowAction) {
  return async (request: IRequest, env: Env): Promise<Response> => {
    const act = action.prepare(request);
    await act(env, decodedPathParam(request, "workflowId"));
    return new Response(null, { status: 200 });
  };
}

/** Refuses (413) an input from the caller that is larger than a stored input may be. */
function checkInputSize(env: Env, what: string, input: JsonObject | undefined): void {
  const limit = serviceConfig(env).engine.maxPayloadBytes;
  const bytes = input === undefined ? undefined : oversize(input, limit);
  if (bytes !== undefined) throw new ApiError(413, "PAYLOAD_TOO_LARGE", oversizeReason(what, bytes, limit));
}

/** Starts through the shared path (definitions, idempotency) and maps its refusals to API errors. */
async function start(env: Env, http: IRequest, request: StartRequest & { name: string }, waitMs?: number): Promise<StartOutcome & { ok: true }> {
  checkInputSize(env, "The workflow input", request.input);
  const options: StartOptions = {
    ...request,
    input: request.input ?? {},
    baseUrl: serviceConfig(env).publicBaseUrl ?? new URL(http.url).origin,
    startScopes: callerStartScopes(http),
  };
  if (waitMs !== undefined) options.waitMs = waitMs;
  const outcome = await startExecution(env, options);
  if (outcome.ok) return outcome;
  throw new ApiError(outcome.code === "ALREADY_STARTED" ? 409 : 404, outcome.code === "ALREADY_STARTED" ? "CONFLICT" : "NOT_FOUND", outcome.message);
}

/** Routes of workflow executions: start, execute, read, search and lifecycle actions. */
export function registerWorkflowRoutes(router: RouterType<IRequest, Args>): void {
  router.get("/api/workflow/search", async (request, env) =>
    Response.json(await searchExecutions(env.DB, request, readableWorkflows(principalOf(request).grants, "WORKFLOW_READ"))),
  );

  router.post("/api/workflow", async (request, env) => {
    const body = await startBody(request, env);
    if (body.name === undefined) throw validationError("Invalid start workflow request", [{ path: "name", message: "is required" }]);
    return textResponse((await start(env, request, { ...body, name: body.name })).workflowId);
  });

  const execute = async (request: IRequest, env: Env) => {
    const config = serviceConfig(env);
    const body = await startBody(request, env);
    const name = decodedPathParam(request, "name");
    const pathVersion = request.params["version"] === undefined ? undefined : Number(request.params["version"]);
    if (pathVersion !== undefined && (!Number.isInteger(pathVersion) || pathVersion < 1)) {
      throw validationError("Invalid workflow version", [{ path: "version", message: "must be a positive integer" }]);
    }
    const waitSeconds = integerQuery(request, "waitForSeconds", 0, config.executeMaxWaitSeconds) ?? config.executeDefaultWaitSeconds;
    const version = pathVersion ?? body.version;
    const outcome = await start(env, request, { ...body, name, ...(version === undefined ? {} : { version }) }, waitSeconds * 1000);
    // Orkes' WorkflowRun echoes the caller's requestId (WorkflowExecutor.executeWorkflow always sends one).
    const requestId = queryValue(request, "requestId");
    if (requestId === undefined || requestId === "") return jsonTextResponse(outcome.workflowJson!);
    return Response.json({ ...(JSON.parse(outcome.workflowJson!) as JsonObject), requestId });
  };
  router.post("/api/workflow/execute/:name/:version", execute);
  router.post("/api/workflow/execute/:name", execute);

  router.post("/api/workflow/:name", async (request, env) => {
    const name = decodedPathParam(request, "name");
    const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    const input: JsonObject = body.present ? parseOrThrow(JsonObjectBody, body.value, "workflow input") : {};
    const startRequest: StartRequest & { name: string } = { name, input };
    const version = integerQuery(request, "version", 1, Number.MAX_SAFE_INTEGER);
    if (version !== undefined) startRequest.version = version;
    const correlationId = queryValue(request, "correlationId");
    // The same bound as in the body: the query form must not store what the body form refuses.
    if (correlationId !== undefined) startRequest.correlationId = parseOrThrow(CorrelationId, correlationId, "start workflow request", "correlationId");
    const priority = integerQuery(request, "priority", 0, 99);
    if (priority !== undefined) startRequest.priority = priority;
    return textResponse((await start(env, request, startRequest)).workflowId);
  });

  router.get("/api/workflow/:workflowId", async (request, env) =>
    jsonTextResponse(await workflowJson(env, decodedPathParam(request, "workflowId"), booleanQuery(request, "includeTasks", true))),
  );

  // Orkes' WorkflowStatus (WorkflowExecutor.getWorkflowStatus): the Workflow JSON cut down to what a
  // status check needs; output and (always empty here) variables only when asked for.
  router.get("/api/workflow/:workflowId/status", async (request, env) => {
    const workflow = JSON.parse(await workflowJson(env, decodedPathParam(request, "workflowId"), false)) as JsonObject;
    const status: JsonObject = { workflowId: workflow["workflowId"]!, status: workflow["status"]! };
    if (typeof workflow["correlationId"] === "string") status["correlationId"] = workflow["correlationId"];
    if (booleanQuery(request, "includeOutput", false)) status["output"] = workflow["output"] ?? {};
    if (booleanQuery(request, "includeVariables", false)) status["variables"] = {};
    return Response.json(status);
  });

  router.delete("/api/workflow/:workflowId/remove", singleAction(WORKFLOW_ACTIONS.remove));
  router.delete("/api/workflow/:workflowId", singleAction(WORKFLOW_ACTIONS.terminate));
  router.put("/api/workflow/:workflowId/pause", singleAction(WORKFLOW_ACTIONS.pause));
  router.put("/api/workflow/:workflowId/resume", singleAction(WORKFLOW_ACTIONS.resume));
  router.post("/api/workflow/:workflowId/retry", singleAction(WORKFLOW_ACTIONS.retry));
  router.post("/api/workflow/:workflowId/restart", singleAction(WORKFLOW_ACTIONS.restart));

  router.post("/api/workflow/:workflowId/rerun", async (request, env) => {
    const workflowId = decodedPathParam(request, "workflowId");
    const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    const rerun = parseOrThrow(RerunRequest, body.present ? body.value : {}, "rerun request");
    checkInputSize(env, "The workflow input", rerun.workflowInput);
    checkInputSize(env, "The task input", rerun.taskInput);
    const command: WorkflowCommand = { type: "rerun", startScopes: callerStartScopes(request) };
    if (rerun.reRunFromTaskId !== undefined) command.fromTaskId = rerun.reRunFromTaskId;
    if (rerun.workflowInput) command.workflowInput = rerun.workflowInput;
    if (rerun.taskInput) command.taskInput = rerun.taskInput;
    if (rerun.correlationId !== undefined) command.correlationId = rerun.correlationId;
    unwrap(await executionStub(env, workflowId).command(command));
    return textResponse(workflowId);
  });
}
