import type { IRequest, RouterType } from "itty-router";
import type { SettledWorkflow, StateUpdate, WorkflowCommand } from "../../actors/workflow-execution";
import { taskResultInput } from "./tasks";
import { MAX_JAVA_INT } from "../../engine/definition/checks";
import { oversize, oversizeReason } from "../../engine/limits";
import { TERMINAL_WORKFLOW_STATUSES, type JsonObject, type WorkflowDef, type WorkflowTestPlan } from "../../engine/model";
import { childPath } from "../../engine/validation-issue";
import { serviceConfig } from "../config";
import { executionStub, orOnOlderCode, refuseOnOlderCode, repeatableExecutionCall, retryingExecutionCall, unwrap } from "../executions";
import { jsonTextResponse, readJsonBody, textResponse } from "../http/body";
import { ApiError, validationError, type ErrorCode } from "../http/errors";
import {
  ConsistencyQuery,
  CorrelatedQuery,
  CorrelationId,
  CorrelationIdsBody,
  CorrelationIdsSearchRequest,
  JsonObjectBody,
  RerunRequest,
  RunningQuery,
  SkipTaskRequest,
  StartWorkflowRequest,
  SubWorkflowTestRequest,
  TaskListQuery,
  UpgradeWorkflowRequest,
  WorkflowName,
  WorkflowStateUpdateBody,
  WorkflowTestRequest,
  WorkflowVariablesBody,
  isBareWorkflowInput,
  parseOrThrow,
  type StartWorkflowRequest as StartRequest,
} from "../schemas";
import { grantsAllow, namesGranted, type NameFilter } from "../auth/permissions";
import { authorizeSecretUse } from "../auth/secret-use";
import { validateDefinitions } from "../definition-validation";
import { DefinitionRepository } from "../definitions";
import { withTaskDefs } from "../task-defs";
import { authorizeRead, principalOf, requestAuthorizer, workflowReadCheck } from "../guard";
import { booleanQuery, decodedPathParam, integerQuery, queryParams, queryValue } from "../http/params";
import { correlatedMapText, correlatedWorkflows, runningWorkflowIds, taskListPage, workflowArrayText } from "../lookups";
import { searchExecutions } from "../search";
import { searchV2 } from "../search-v2";
import { searchExecutionsByTasks } from "../task-search";
import { returnStrategyOf, signalResponse, targetWorkflowText, type ReturnStrategy, type WorkflowView } from "../signal-response";
import { startExecution, type StartOptions, type StartOutcome, type StartRefusalCode } from "../start-execution";
import { WORKFLOW_ACTIONS, callerStartScopes, type WorkflowAction } from "../workflow-actions";

type Args = [Env, ExecutionContext];

/**
 * The StartWorkflowRequest a start or an execute is sent. With `inputMayBeBareFor` (`POST /api/workflow/execute/{name}`,
 * no version in the path: that name), a body that is not one (see {@link isBareWorkflowInput}) is the workflow's input, as Orkes' executeWorkflowAsAPI
 * reads it: the Python, JavaScript and Go clients' `execute_workflow_as_api` send the input itself there, which read
 * as a StartWorkflowRequest would start the workflow with none. Any other body is the contract's StartWorkflowRequest.
 */
async function startBody(request: IRequest, env: Env, inputMayBeBareFor?: string): Promise<StartRequest> {
  const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  if (!body.present) return {};
  if (inputMayBeBareFor !== undefined && isBareWorkflowInput(body.value, inputMayBeBareFor)) return { input: parseOrThrow(JsonObjectBody, body.value, "workflow input") };
  return parseOrThrow(StartWorkflowRequest, body.value, "start workflow request");
}

/**
 * Orkes' executeWorkflowAsAPI takes these as request headers, where its execute with a version in the path takes them
 * in the query: each header is read as the query parameter of its name, which wins when both are given.
 */
const EXECUTE_AS_API_HEADERS = ["requestId", "waitUntilTaskRef", "waitForSeconds"] as const;

/** Copies the {@link EXECUTE_AS_API_HEADERS} a request gives into its query where the query lacks them. */
function executeHeadersAsQuery(request: IRequest): void {
  for (const name of EXECUTE_AS_API_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null && queryValue(request, name) === undefined) request.query[name] = value;
  }
}

/**
 * Orkes' idempotency headers of a start by name (`X-Idempotency-key`, with `X-on-conflict` its strategy), as the Python
 * client sends them: checked as the same fields of a StartWorkflowRequest are; none without a key.
 */
function idempotencyHeaders(request: IRequest): Pick<StartRequest, "idempotencyKey" | "idempotencyStrategy"> {
  const idempotencyKey = request.headers.get("x-idempotency-key") ?? "";
  if (idempotencyKey === "") return {};
  const idempotencyStrategy = request.headers.get("x-on-conflict") || undefined;
  const parsed = parseOrThrow(StartWorkflowRequest, { idempotencyKey, idempotencyStrategy }, "idempotency headers");
  return parsed.idempotencyStrategy === undefined ? { idempotencyKey } : { idempotencyKey, idempotencyStrategy: parsed.idempotencyStrategy };
}

/** The Workflow JSON of an execution, 404 when there is none. */
async function workflowJson(env: Env, workflowId: string, includeTasks: boolean): Promise<string> {
  const workflow = await retryingExecutionCall(env, workflowId, (stub) => stub.getWorkflowJson(includeTasks));
  if (workflow === null) throw new ApiError(404, "NOT_FOUND", `Workflow ${workflowId} not found`);
  return workflow;
}

/**
 * Merges `variables` into the execution's, made again on a fresh stub when a reset cuts the call off, with the
 * request's id (see repeatableExecutionCall): a call of a request that landed answers 200 and merges nothing (not
 * again over a key another request changed in between, nor on an execution that ended since), and one whose first
 * call did not land is applied, or refused, as that call would have been. An object still on the code before that
 * method merges through its `command`, as that code did, and is repeated there as that code's router repeated it
 * (`repeatsOnOlderCode`: merging the same keys again, where a 503 would have the client send it again to the same end).
 */
async function mergeVariables(env: Env, workflowId: string, variables: JsonObject) {
  return await repeatableExecutionCall(env, workflowId, async (stub, made) => {
    // An object still on the code before updateVariables merges through its command, as that code did: a repeat there
    // merges again, as before.
    return await orOnOlderCode("updateVariables", async () => await stub.updateVariables(variables, made), async () => await stub.command({ type: "updateVariables", variables }));
  }, { repeatsOnOlderCode: true });
}

/** The workflows whose executions the caller may find in the index (search and the lookups filter by it). */
function callerReadable(request: IRequest): NameFilter {
  return namesGranted(principalOf(request).grants, "WORKFLOW_READ", "workflow:");
}

/** A definition name in a lookup's path. */
function pathWorkflowName(request: IRequest, what: string): string {
  return parseOrThrow(WorkflowName, decodedPathParam(request, "name"), what, "name");
}

/**
 * The executions of `workflowNames` with `correlationIds`, as the request's query asks (`includeClosed`,
 * `includeTasks`), among those the caller may read: by correlation id, in the order asked.
 */
async function correlated(request: IRequest, env: Env, workflowNames: readonly string[], correlationIds: readonly string[]): Promise<Map<string, string[]>> {
  const query = parseOrThrow(CorrelatedQuery, queryParams(request, ["includeClosed", "includeTasks"]), "correlation lookup");
  return correlatedWorkflows(env, { workflowNames, correlationIds, ...query }, callerReadable(request), await workflowReadCheck(request, env));
}

/** The JSON body of a request, undefined when there is none (the schema then says what was expected). */
async function bodyValue(request: IRequest, env: Env): Promise<unknown> {
  const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  return body.present ? body.value : undefined;
}

/** The JSON body of a request whose body may be left out: `{}` when there is none (a JSON `null` is a body, refused as such). */
async function bodyOrEmpty(request: IRequest, env: Env): Promise<unknown> {
  const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  return body.present ? body.value : {};
}

/**
 * The route of a lifecycle action on the execution its path names: `status` (200 unless given) with no body once done.
 */
function singleAction(action: WorkflowAction, status = 200) {
  return async (request: IRequest, env: Env): Promise<Response> => {
    const act = action.prepare(request);
    await act(env, decodedPathParam(request, "workflowId"));
    return new Response(null, { status });
  };
}

/**
 * Conductor's WorkflowResource answers retry, restart and resetcallbacks with 204 No Content (`@ResponseStatus(NO_CONTENT)`,
 * kept for its 2.x client, which expects it; Orkes' docs say 204 too), its other void actions with 200.
 */
const NO_CONTENT = 204;

/** Refuses (413) an input from the caller that is larger than a stored input may be. */
function checkInputSize(env: Env, what: string, input: JsonObject | undefined): void {
  const limit = serviceConfig(env).engine.maxPayloadBytes;
  const bytes = input === undefined ? undefined : oversize(input, limit);
  if (bytes !== undefined) throw new ApiError(413, "PAYLOAD_TOO_LARGE", oversizeReason(what, bytes, limit));
}

/** How long a synchronous call (execute, a state update) waits: Orkes' `waitForSeconds` and `waitUntilTaskRef` (comma-separated). */
interface SynchronousWait {
  ms: number;
  untilTaskRefs: string[];
}

function synchronousWait(request: IRequest, env: Env): SynchronousWait {
  const config = serviceConfig(env);
  const untilTaskRefs = (queryValue(request, "waitUntilTaskRef") ?? "").split(",").map((ref) => ref.trim()).filter((ref) => ref !== "");
  const waitSeconds = integerQuery(request, "waitForSeconds", 0, config.executeMaxWaitSeconds) ?? config.executeDefaultWaitSeconds;
  return { ms: waitSeconds * 1000, untilTaskRefs };
}

/**
 * Orkes' WorkflowRun echoes the caller's `requestId` (WorkflowExecutor.executeWorkflow always sends one); without one,
 * a new random id, as Orkes generates it.
 */
function echoedRequestId(request: IRequest): JsonObject {
  const requestId = queryValue(request, "requestId");
  return { requestId: requestId === undefined || requestId === "" ? crypto.randomUUID() : requestId };
}

/** As Orkes: an answer given at a `waitUntilTaskRef` task while the workflow still runs is a 206 (partial), not a 200. */
function workflowRunStatus(settled: SettledWorkflow, wait: SynchronousWait): number {
  return wait.untilTaskRefs.length > 0 && !TERMINAL_WORKFLOW_STATUSES.has(settled.status) ? 206 : 200;
}

/**
 * The WorkflowRun of a synchronous call: the Workflow JSON with the SignalResponse fields of TARGET_WORKFLOW and the
 * caller's `requestId`, made from the actor's text (no parse and re-serialisation per call).
 */
function workflowRunResponse(request: IRequest, workflowId: string, settled: SettledWorkflow, wait: SynchronousWait): Response {
  const extra = { ...echoedRequestId(request), signalTimeout: settled.timedOut };
  return jsonTextResponse(targetWorkflowText(settled, workflowId, extra), workflowRunStatus(settled, wait));
}

/**
 * The inline definition of a start request (`workflowDef`), validated as its registration would be, for a caller who
 * could register it: running a definition of one's own under a name is what registering it and starting it would
 * do, so it needs the rights of both (the start right is the route's rule; the secrets it names, as at registration).
 * `name` must be the definition's: the request's own, the path's (execute), once {@link startedName} has read it.
 */
async function inlineDefinition(http: IRequest, env: Env, raw: unknown, name: string | undefined): Promise<WorkflowDef> {
  const [definition] = await validateDefinitions([raw], env, () => "workflowDef");
  if (name !== undefined && name !== definition!.name) {
    throw validationError("Invalid start workflow request", [{ path: "name", message: `must be the inline definition's name (${definition!.name}), or left out` }]);
  }
  const grants = principalOf(http).grants;
  const scope = `workflow:${definition!.name}`;
  if (!grantsAllow(grants, "METADATA_ADMIN", "*") && !grantsAllow(grants, "WORKFLOW_WRITE", scope)) {
    throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: starting an inline definition needs the right to register it (METADATA_ADMIN, or WORKFLOW_WRITE on ${scope})`);
  }
  authorizeSecretUse(grants, [definition!]);
  return definition!;
}

/**
 * The name a start request starts: its inline definition's when it has one, else its `name` (refused when it has
 * neither). The definition's wins over a `name` given too, as Conductor's StartWorkflowOperation runs the
 * workflowDef it is given without looking at the request's name (elisherer/conductor-nodejs-worker's README starts
 * `{"name": "adhoc_test_nodejs_worker", "workflowDef": {"name": "test_nodejs_worker", …}}`); the guard checks the
 * start right against the same name (guard.ts `targetOf`).
 */
function startedName(body: StartRequest): string {
  const inlineName = typeof body.workflowDef === "object" && body.workflowDef !== null ? (body.workflowDef as { name?: unknown }).name : undefined;
  const name = (typeof inlineName === "string" ? inlineName : undefined) ?? body.name;
  if (name === undefined) throw validationError("Invalid start workflow request", [{ path: "name", message: "is required (or a workflowDef with a name)" }]);
  return name;
}

/**
 * The plan of a test request (`body`, found at `path`): its mocks, and its children's plans, each child's request read
 * at its own path and nested at most as deep as sub workflows may nest.
 */
function testPlan(env: Env, body: SubWorkflowTestRequest, path: string, depth: number): WorkflowTestPlan {
  const taskMocks = Object.entries(body.taskRefToMockOutput ?? {}).map(([taskReferenceName, mocks]) => ({ taskReferenceName, mocks }));
  const subWorkflows = Object.entries(body.subWorkflowTestRequest ?? {}).map(([taskReferenceName, raw]) => {
    const at = childPath(childPath(path, "subWorkflowTestRequest"), taskReferenceName);
    const limit = serviceConfig(env).maxSubWorkflowDepth;
    if (depth >= limit) throw validationError("Invalid workflow test request", [{ path: at, message: `nests deeper than sub workflows may (${limit} levels, MAX_SUBWORKFLOW_DEPTH)` }]);
    const child = parseOrThrow(SubWorkflowTestRequest, raw, "workflow test request", at);
    return { taskReferenceName, plan: testPlan(env, child, at, depth + 1) };
  });
  return { taskMocks, subWorkflows };
}

/** A synchronous call's options (execute's and the synchronous test run's), read before anything starts. */
function synchronousOptions(request: IRequest, env: Env): { strategy: ReturnStrategy; wait: SynchronousWait } {
  const strategy = returnStrategyOf(request);
  const consistency = queryValue(request, "consistency");
  if (consistency !== undefined && consistency !== "") parseOrThrow(ConsistencyQuery, consistency, "consistency", "consistency");
  return { strategy, wait: synchronousWait(request, env) };
}

/**
 * What a synchronous start answers once its wait is over: Orkes' SignalResponse for `strategy`. The caller started it,
 * so may be shown it; what blocks it in a child, only if the caller may read that child.
 */
async function synchronousAnswer(request: IRequest, env: Env, outcome: StartOutcome & { ok: true }, strategy: ReturnStrategy, wait: SynchronousWait): Promise<Response> {
  const settled: SettledWorkflow = { workflowJson: outcome.workflowJson!, status: outcome.workflowStatus!, timedOut: outcome.timedOut === true };
  if (outcome.variablesJson !== undefined) settled.variablesJson = outcome.variablesJson;
  if (strategy === "TARGET_WORKFLOW") return workflowRunResponse(request, outcome.workflowId, settled, wait);
  const answer = await signalResponse(env, strategy, JSON.parse(outcome.workflowJson!) as WorkflowView, () => requestAuthorizer(request, env), { untilTaskRefs: wait.untilTaskRefs, timedOut: settled.timedOut });
  return Response.json({ ...answer, ...echoedRequestId(request) }, { status: workflowRunStatus(settled, wait) });
}

/** Starts the test run a WorkflowTestRequest body asks for (see Test runs), waiting as `wait` says. */
async function startTestRun(request: IRequest, env: Env, wait: SynchronousWait): Promise<StartOutcome & { ok: true }> {
  const body = parseOrThrow(WorkflowTestRequest, (await bodyValue(request, env)) ?? {}, "workflow test request");
  const { taskRefToMockOutput: _mocks, subWorkflowTestRequest: _children, ...startRequest } = body;
  // As Conductor: its SIMPLE tasks go to a domain of their own, so that no real worker takes one a mock does not answer.
  // The plan records it as the run's own: its queues leave the listings when the run ends (see `ownTestQueues`).
  const domain = crypto.randomUUID();
  const test = { ...testPlan(env, body, "", 0), domain };
  const taskToDomain = { ...(startRequest.taskToDomain ?? {}), "*": domain };
  return start(env, request, { ...startRequest, name: startedName(startRequest), taskToDomain, test }, wait);
}

/** Starts through the shared path (definitions, idempotency) and maps its refusals to API errors. */
async function start(env: Env, http: IRequest, request: StartRequest & { name: string; test?: WorkflowTestPlan }, wait?: SynchronousWait): Promise<StartOutcome & { ok: true }> {
  checkInputSize(env, "The workflow input", request.input);
  const { workflowDef, ...fields } = request;
  const options: StartOptions = {
    ...fields,
    input: request.input ?? {},
    baseUrl: serviceConfig(env).publicBaseUrl ?? new URL(http.url).origin,
    startScopes: callerStartScopes(http),
    createdBy: principalOf(http).userId,
  };
  if (workflowDef !== undefined) {
    options.definition = await inlineDefinition(http, env, workflowDef, request.name);
    options.name = options.definition.name;
    options.version = options.definition.version;
  }
  if (wait !== undefined) {
    options.waitMs = wait.ms;
    options.waitUntilTaskRefs = wait.untilTaskRefs;
  }
  const outcome = await startExecution(env, options);
  if (outcome.ok) return outcome;
  // The start's message already names the first problem and counts the rest: validationError would add it again.
  if (outcome.code === "INPUT_INVALID") throw new ApiError(400, "VALIDATION_ERROR", outcome.message, outcome.issues ?? []);
  const [status, code] = START_REFUSAL_STATUS[outcome.code];
  throw new ApiError(status, code, outcome.message);
}

/** The API error of each refused start. */
const START_REFUSAL_STATUS: Record<Exclude<StartRefusalCode, "INPUT_INVALID">, [number, ErrorCode]> = {
  WORKFLOW_NOT_FOUND: [404, "NOT_FOUND"],
  VERSION_NOT_FOUND: [404, "NOT_FOUND"],
  EXECUTION_REMOVED: [404, "NOT_FOUND"],
  ALREADY_STARTED: [409, "CONFLICT"],
  INPUT_TOO_LARGE: [413, "PAYLOAD_TOO_LARGE"],
  DEFINITION_TOO_LARGE: [409, "CONFLICT"],
};

/**
 * Routes whose path names a workflow definition rather than an execution: the lookups by name and execute.
 * Registered before the 501s of unsupported.ts and the single-id routes, whose `{workflowId}` and literal segments
 * would otherwise take a definition named like one of their segments (`GET /api/workflow/running/state`, `POST
 * /api/workflow/decide/correlated`, `POST /api/workflow/execute/variables`), which the access rules already read
 * as these routes.
 */
export function registerWorkflowNameRoutes(router: RouterType<IRequest, Args>): void {
  // Before `/:workflowId/tasks` and `/:workflowId/status`: `running/tasks` lists the workflow named "tasks".
  router.get("/api/workflow/running/:name", async (request, env) => {
    const workflowName = pathWorkflowName(request, "running workflows lookup");
    const query = parseOrThrow(RunningQuery, queryParams(request, ["version", "startTime", "endTime"]), "running workflows lookup");
    return Response.json(await runningWorkflowIds(env.DB, { workflowName, ...query }, callerReadable(request)));
  });

  router.get("/api/workflow/:name/correlated/:correlationId", async (request, env) => {
    const workflowName = pathWorkflowName(request, "correlation lookup");
    const correlationId = parseOrThrow(CorrelationId, decodedPathParam(request, "correlationId"), "correlation lookup", "correlationId");
    const found = await correlated(request, env, [workflowName], [correlationId]);
    return jsonTextResponse(workflowArrayText(found.get(correlationId) ?? []));
  });

  router.post("/api/workflow/correlated/batch", async (request, env) => {
    const search = parseOrThrow(CorrelationIdsSearchRequest, await bodyValue(request, env), "correlation lookup");
    return jsonTextResponse(correlatedMapText(await correlated(request, env, search.workflowNames, search.correlationIds)));
  });

  // Orkes' execute: answers a SignalResponse (see signal-response.ts), whose TARGET_WORKFLOW form is the Workflow JSON
  // the official client reads as its WorkflowRun.
  const execute = async (request: IRequest, env: Env) => {
    const byNameOnly = request.params["version"] === undefined;
    if (byNameOnly) executeHeadersAsQuery(request);
    // Every option is read before the start, so a refused one starts nothing.
    const { strategy, wait } = synchronousOptions(request, env);
    const name = decodedPathParam(request, "name");
    const body = await startBody(request, env, byNameOnly ? name : undefined);
    const pathVersion = byNameOnly ? undefined : Number(request.params["version"]);
    if (pathVersion !== undefined && (!Number.isInteger(pathVersion) || pathVersion < 0)) {
      throw validationError("Invalid workflow version", [{ path: "version", message: "must be an integer of at least 0" }]);
    }
    // Without one in the path, the body's, else the query's (executeWorkflowAsAPI's `?version=`, a Java int as every version).
    const version = pathVersion ?? body.version ?? (byNameOnly ? integerQuery(request, "version", 0, MAX_JAVA_INT) : undefined);
    // Orkes' idempotency headers, as a start by name takes them; a key in the body wins.
    const keyed = body.idempotencyKey === undefined ? { ...body, ...idempotencyHeaders(request) } : body;
    const outcome = await start(env, request, { ...keyed, name, ...(version === undefined ? {} : { version }) }, wait);
    return synchronousAnswer(request, env, outcome, strategy, wait);
  };
  router.post("/api/workflow/execute/:name/:version", execute);
  router.post("/api/workflow/execute/:name", execute);

  // After execute: `POST /api/workflow/execute/correlated` starts the workflow named "correlated".
  router.post("/api/workflow/:name/correlated", async (request, env) => {
    const workflowName = pathWorkflowName(request, "correlation lookup");
    const correlationIds = parseOrThrow(CorrelationIdsBody, await bodyValue(request, env), "correlation lookup");
    return jsonTextResponse(correlatedMapText(await correlated(request, env, [workflowName], correlationIds)));
  });
}

/** An execution search (`search`, of the executions the caller may read) answered with each one's Workflow JSON, without its tasks. */
async function workflowSearchV2(request: IRequest, env: Env, search: typeof searchExecutions): Promise<Response> {
  return jsonTextResponse(
    await searchV2(request, {
      search: (page) => search(env.DB, page, callerReadable(request)),
      read: (summary) => retryingExecutionCall(env, String(summary["workflowId"]), (stub) => stub.getWorkflowJson(false)),
    }),
  );
}

/** Routes of workflow executions: start, read, search and lifecycle actions (see also {@link registerWorkflowNameRoutes}). */
export function registerWorkflowRoutes(router: RouterType<IRequest, Args>): void {
  router.get("/api/workflow/search", async (request, env) => Response.json(await searchExecutions(env.DB, request, callerReadable(request))));
  // The same search, answered with each execution's Workflow JSON (without its tasks, as Conductor's).
  router.get("/api/workflow/search-v2", async (request, env) => workflowSearchV2(request, env, searchExecutions));
  // Conductor's search of executions by their tasks (the Python and Java clients' searchWorkflowsByTasks), and its v2.
  router.get("/api/workflow/search-by-tasks", async (request, env) => Response.json(await searchExecutionsByTasks(env.DB, request, callerReadable(request))));
  router.get("/api/workflow/search-by-tasks-v2", async (request, env) => workflowSearchV2(request, env, searchExecutionsByTasks));

  router.post("/api/workflow", async (request, env) => {
    const body = await startBody(request, env);
    return textResponse((await start(env, request, { ...body, name: startedName(body) })).workflowId);
  });

  // Conductor's testWorkflow (WorkflowTestRequest): before `/:name`, as in Conductor, where this path is the test
  // endpoint and not the start of a workflow named "test" (start that one with POST /api/workflow).
  router.post("/api/workflow/test", async (request, env) => {
    const wait = { ms: serviceConfig(env).executeMaxWaitSeconds * 1000, untilTaskRefs: [] };
    return jsonTextResponse((await startTestRun(request, env, wait)).workflowJson!);
  });
  // Orkes' synchronous test run: waits and answers as execute does (waitUntilTaskRef, waitForSeconds, returnStrategy).
  router.post("/api/workflow/test/sync", async (request, env) => {
    const { strategy, wait } = synchronousOptions(request, env);
    return synchronousAnswer(request, env, await startTestRun(request, env, wait), strategy, wait);
  });

  router.post("/api/workflow/:name", async (request, env) => {
    const name = decodedPathParam(request, "name");
    const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    const input: JsonObject = body.present ? parseOrThrow(JsonObjectBody, body.value, "workflow input") : {};
    const startRequest: StartRequest & { name: string } = { name, input };
    // As the body form bounds it: a Java int, as every version is.
    const version = integerQuery(request, "version", 0, MAX_JAVA_INT);
    if (version !== undefined) startRequest.version = version;
    const correlationId = queryValue(request, "correlationId");
    // The same bound as in the body: the query form must not store what the body form refuses.
    if (correlationId !== undefined) startRequest.correlationId = parseOrThrow(CorrelationId, correlationId, "start workflow request", "correlationId");
    const priority = integerQuery(request, "priority", 0, 99);
    if (priority !== undefined) startRequest.priority = priority;
    Object.assign(startRequest, idempotencyHeaders(request));
    return textResponse((await start(env, request, startRequest)).workflowId);
  });

  router.get("/api/workflow/:workflowId", async (request, env) =>
    jsonTextResponse(await workflowJson(env, decodedPathParam(request, "workflowId"), booleanQuery(request, "includeTasks", true))),
  );

  // Orkes' workflow size: the execution's stored task data against MAX_EXECUTION_BYTES.
  router.get("/api/workflow/:workflowId/size", async (request, env) => {
    const workflowId = decodedPathParam(request, "workflowId");
    const size = await retryingExecutionCall(env, workflowId, (stub) => orOnOlderCode("getSize", () => stub.getSize(), refuseOnOlderCode));
    if (size === null) throw new ApiError(404, "NOT_FOUND", `Workflow ${workflowId} not found`);
    return Response.json(size);
  });
  // Orkes' WorkflowStatus (WorkflowExecutor.getWorkflowStatus): the Workflow JSON cut down to what a
  // status check needs; output and variables only when asked for.
  router.get("/api/workflow/:workflowId/status", async (request, env) => {
    const workflow = JSON.parse(await workflowJson(env, decodedPathParam(request, "workflowId"), false)) as JsonObject;
    const status: JsonObject = { workflowId: workflow["workflowId"]!, status: workflow["status"]! };
    if (typeof workflow["correlationId"] === "string") status["correlationId"] = workflow["correlationId"];
    if (booleanQuery(request, "includeOutput", false)) status["output"] = workflow["output"] ?? {};
    if (booleanQuery(request, "includeVariables", false)) status["variables"] = workflow["variables"] ?? {};
    return Response.json(status);
  });

  // Orkes' TaskListSearchResultSummary, from the Workflow JSON: what GET /api/workflow/{workflowId} shows, so
  // the rules of that route decide too (a stored rule on it alone must not be bypassed through this one).
  router.get("/api/workflow/:workflowId/tasks", async (request, env) => {
    const page = parseOrThrow(TaskListQuery, queryParams(request, ["start", "count"], ["status"]), "task list query");
    await authorizeRead(request, env, `/api/workflow/${request.params["workflowId"] ?? ""}`);
    const workflow = JSON.parse(await workflowJson(env, decodedPathParam(request, "workflowId"), true)) as { tasks: JsonObject[] };
    return Response.json(taskListPage(workflow.tasks, page));
  });

  router.delete("/api/workflow/:workflowId/remove", singleAction(WORKFLOW_ACTIONS.remove));
  router.delete("/api/workflow/:workflowId/terminate-remove", singleAction(WORKFLOW_ACTIONS.terminateRemove));
  router.delete("/api/workflow/:workflowId", singleAction(WORKFLOW_ACTIONS.terminate));
  router.put("/api/workflow/:workflowId/pause", singleAction(WORKFLOW_ACTIONS.pause));
  router.put("/api/workflow/:workflowId/resume", singleAction(WORKFLOW_ACTIONS.resume));
  router.post("/api/workflow/:workflowId/retry", singleAction(WORKFLOW_ACTIONS.retry, NO_CONTENT));
  router.post("/api/workflow/:workflowId/restart", singleAction(WORKFLOW_ACTIONS.restart, NO_CONTENT));
  router.post("/api/workflow/:workflowId/resetcallbacks", singleAction(WORKFLOW_ACTIONS.resetCallbacks, NO_CONTENT));

  // Conductor's decide (the Java client's runDecider): does now what the execution's alarm would do next. Void: 200, no body.
  router.put("/api/workflow/decide/:workflowId", async (request, env) => {
    unwrap(await executionStub(env, decodedPathParam(request, "workflowId")).decide());
    return new Response(null, { status: 200 });
  });
  // Conductor's AdminResource asks the same of one execution: its sweep and its repair. Here an execution holds its own
  // state and timers, so both are the decide. Both answer text/plain, as Conductor's (`produces = TEXT_PLAIN_VALUE`): the
  // sweep `<pushed>.<workflowId>` (AdminServiceImpl.requeueSweep; `true`: the decide ran, as a push would make it run),
  // the repair its boolean as `String.valueOf` gives it.
  router.post("/api/admin/sweep/requeue/:workflowId", async (request, env) => {
    const workflowId = decodedPathParam(request, "workflowId");
    unwrap(await executionStub(env, workflowId).decide());
    return textResponse(`true.${workflowId}`);
  });
  router.post("/api/admin/consistency/verifyAndRepair/:workflowId", async (request, env) => {
    unwrap(await executionStub(env, decodedPathParam(request, "workflowId")).decide());
    return textResponse("true");
  });

  router.post("/api/workflow/:workflowId/rerun", async (request, env) => {
    const workflowId = decodedPathParam(request, "workflowId");
    const rerun = parseOrThrow(RerunRequest, await bodyOrEmpty(request, env), "rerun request");
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

  // Orkes' updateWorkflowState (WorkflowClient.updateVariables): merges the body into the variables and answers the
  // Workflow JSON. Authorized as the other changes of one execution (WORKFLOW_ADMIN on its workflow).
  // Answered with the Workflow JSON, a read of the execution: checked before the change (as the synchronous task update
  // is), so a caller who may change but not read it (WORKFLOW_ADMIN alone, Orkes' EXECUTE) changes nothing.
  router.post("/api/workflow/:workflowId/variables", async (request, env) => {
    await authorizeRead(request, env, `/api/workflow/${request.params["workflowId"] ?? ""}`);
    const workflowId = decodedPathParam(request, "workflowId");
    const variables = parseOrThrow(WorkflowVariablesBody, await bodyValue(request, env), "workflow variables");
    // The merged variables are measured by the engine (a 400); a body too large alone is refused as inputs are.
    checkInputSize(env, "The workflow variables", variables);
    unwrap(await mergeVariables(env, workflowId, variables));
    return jsonTextResponse(await workflowJson(env, workflowId, true));
  });

  // Orkes' updateWorkflowAndTaskState (WorkflowExecutor.updateState): the variables and a task's result in one change
  // (either refused, neither is made), then the WorkflowRun once it settles, as execute answers. Authorized as the other
  // changes of one execution (WORKFLOW_ADMIN on its workflow) and, for that answer, as reading it, before the change.
  router.post("/api/workflow/:workflowId/state", async (request, env) => {
    await authorizeRead(request, env, `/api/workflow/${request.params["workflowId"] ?? ""}`);
    const workflowId = decodedPathParam(request, "workflowId");
    const wait = synchronousWait(request, env);
    const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    const update = parseOrThrow(WorkflowStateUpdateBody, body.present ? body.value : undefined, "workflow state update");
    const stateUpdate: StateUpdate = {};
    if (update.variables !== undefined) {
      checkInputSize(env, "The workflow variables", update.variables);
      stateUpdate.variables = update.variables;
    }
    const result = update.taskResult;
    if (result !== undefined) {
      if (result.workflowInstanceId !== undefined && result.workflowInstanceId !== workflowId) {
        throw validationError("Invalid workflow state update", [{ path: "taskResult.workflowInstanceId", message: `must be ${workflowId}, the workflow updated, when given` }]);
      }
      stateUpdate.task = { ...taskResultInput(result), ...(result.taskId === undefined ? { taskRefName: update.taskReferenceName! } : { taskId: result.taskId.toLowerCase() }) };
    }
    // Made again after a reset with the request's id: a repeat of one that landed only waits (see repeatableExecutionCall),
    // for the time left of the wait, not the whole of it again.
    const deadline = Date.now() + wait.ms;
    const settled = unwrap(await repeatableExecutionCall(env, workflowId, async (stub, made) => await stub.updateState(stateUpdate, made.repeat ? Math.max(0, deadline - Date.now()) : wait.ms, wait.untilTaskRefs, made)));
    return workflowRunResponse(request, workflowId, settled, wait);
  });

  // Orkes' upgradeRunningWorkflowToVersion: void, so 200 with no body. Only another version of the execution's own
  // workflow (the one its route's rules authorized): asked first, so that no other workflow's versions are looked up.
  router.post("/api/workflow/:workflowId/upgrade", async (request, env) => {
    const workflowId = decodedPathParam(request, "workflowId");
    const upgrade = parseOrThrow(UpgradeWorkflowRequest, await bodyValue(request, env), "upgrade workflow request");
    checkInputSize(env, "The workflow input", upgrade.workflowInput ?? undefined);
    checkInputSize(env, "The task output", upgrade.taskOutput ?? undefined);
    const stub = executionStub(env, workflowId);
    const workflowName = await stub.getWorkflowName();
    if (workflowName === null) throw new ApiError(404, "NOT_FOUND", `Workflow ${workflowId} not found`);
    if (upgrade.name !== workflowName) {
      throw validationError("Invalid upgrade workflow request", [{ path: "name", message: `must be ${workflowName}, the workflow of execution ${workflowId}: only another version of it can be run from where it stands` }]);
    }
    const definition = await withTaskDefs(env.DB, await new DefinitionRepository(env.DB).get(upgrade.name, upgrade.version ?? undefined, true));
    const command: WorkflowCommand = { type: "upgrade", definition, startScopes: callerStartScopes(request) };
    if (upgrade.workflowInput) command.workflowInput = upgrade.workflowInput;
    if (upgrade.taskOutput) command.taskOutput = upgrade.taskOutput as Record<string, JsonObject>;
    unwrap(await stub.command(command));
    return new Response(null, { status: 200 });
  });

  // Orkes' jumpToTask: void, so 200 with no body. The body is the task's input; absent or empty, its input is resolved
  // from its definition as when the workflow reaches it. No task named: from the beginning (see jumpTarget).
  router.post("/api/workflow/:workflowId/jump/:taskReferenceName", async (request, env) => {
    const workflowId = decodedPathParam(request, "workflowId");
    const taskReferenceName = jumpTarget(request);
    const taskInput = parseOrThrow(JsonObjectBody, await bodyOrEmpty(request, env), "task input");
    checkInputSize(env, "The task input", taskInput);
    const command: WorkflowCommand = taskReferenceName === undefined ? { type: "jump" } : { type: "jump", taskReferenceName };
    if (Object.keys(taskInput).length > 0) command.taskInput = taskInput;
    unwrap(await executionStub(env, workflowId).command(command));
    return new Response(null, { status: 200 });
  });

  // Conductor's skipTaskFromWorkflow: void, so 200 with no body, as pause and resume answer.
  router.put("/api/workflow/:workflowId/skiptask/:taskReferenceName", async (request, env) => {
    const workflowId = decodedPathParam(request, "workflowId");
    const taskReferenceName = decodedPathParam(request, "taskReferenceName");
    const skip = parseOrThrow(SkipTaskRequest, await bodyOrEmpty(request, env), "skip task request");
    checkInputSize(env, "The task input", skip.taskInput);
    checkInputSize(env, "The task output", skip.taskOutput);
    const command: WorkflowCommand = { type: "skipTask", taskReferenceName };
    if (skip.taskInput) command.taskInput = skip.taskInput;
    if (skip.taskOutput) command.taskOutput = skip.taskOutput;
    unwrap(await executionStub(env, workflowId).command(command));
    return new Response(null, { status: 200 });
  });
}

/** Where the generated clients leave the path's placeholder as it is: `/jump/{taskReferenceName}`. */
const JUMP_PLACEHOLDER = "{taskReferenceName}";

/**
 * The task a jump names: Orkes reads the `taskReferenceName` query parameter, which the Python, Go and JavaScript clients
 * send while leaving the path's placeholder unfilled; else the path's segment. Undefined when neither names one (those
 * clients' default, and the C# client's `taskReferenceName = null`): Orkes' jump docs say a null task reference name
 * runs the workflow from the beginning, which the engine takes an absent name for.
 */
function jumpTarget(request: IRequest): string | undefined {
  const queried = queryValue(request, "taskReferenceName")?.trim();
  if (queried !== undefined && queried !== "") return queried;
  const inPath = decodedPathParam(request, "taskReferenceName");
  return inPath === JUMP_PLACEHOLDER ? undefined : inPath;
}
