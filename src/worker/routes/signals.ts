/**
 * Conductor's signals: `POST /api/tasks/{workflowId}/{status}/signal` (and `/signal/sync`) complete, fail or update
 * the WAIT an execution waits in, found by the service (see `WorkflowExecution.signalTarget`), so that the caller
 * needs only the workflow id. The synchronous variant answers, as Orkes' SignalResponse, with where the workflow
 * came to: the workflow itself, or what blocks it now (the workflow holding the blocker, the task, or its input).
 */
import * as v from "valibot";
import type { IRequest, RouterType } from "itty-router";
import type { JsonObject, JsonValue } from "../../engine/model";
import { TERMINAL_WORKFLOW_STATUSES, type WorkflowStatus } from "../../engine/model";
import { serviceConfig } from "../config";
import { executionStub, unwrap } from "../executions";
import { readJsonBody } from "../http/body";
import { ApiError } from "../http/errors";
import { decodedPathParam, integerQuery, queryValue } from "../http/params";
import { requestAuthorizer, type PathAuthorizer } from "../guard";
import { ExternalStatus, JsonObjectBody, parseOrThrow } from "../schemas";

type Args = [Env, ExecutionContext];

/** What a synchronous signal answers with (Orkes' `returnStrategy`). */
const RETURN_STRATEGIES = ["TARGET_WORKFLOW", "BLOCKING_WORKFLOW", "BLOCKING_TASK", "BLOCKING_TASK_INPUT"] as const;
type ReturnStrategy = (typeof RETURN_STRATEGIES)[number];
const ReturnStrategyQuery = v.picklist(RETURN_STRATEGIES, `returnStrategy must be one of ${RETURN_STRATEGIES.join(", ")}`);

/** How long a synchronous signal waits for the workflow to block again or end, by default (Conductor's `timeoutMillis`). */
const DEFAULT_SIGNAL_WAIT_MS = 5_000;

/** Sub workflows a search for the blocking task goes down at most (a guard: children nest far less deep). */
const MAX_BLOCKING_DEPTH = 32;

/** Workflow JSON as the executions answer it, read for the fields a SignalResponse is made of. */
type WorkflowView = JsonObject & { workflowId: string; workflowName: string; status: WorkflowStatus; tasks?: TaskView[] };
type TaskView = JsonObject & { taskId: string; status: string; taskType: string; inputData: JsonObject; outputData: JsonObject; subWorkflowId?: string };

/** The workflow a signal's answer stops at, and the task that blocks it (none once it has ended or when nothing is pending). */
interface BlockingPoint {
  workflow: WorkflowView;
  task?: TaskView;
}

/**
 * Applies the signal: finds the WAIT, checks that the caller may complete it when it lies in a child (the signal route's
 * own rule covered the signalled workflow), and updates it. Nothing changes when it is refused.
 */
async function applySignal(request: IRequest, env: Env, authorize: () => Promise<PathAuthorizer>): Promise<string> {
  const workflowId = decodedPathParam(request, "workflowId");
  const status = parseOrThrow(ExternalStatus, request.params["status"], "signal status", "status");
  const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  const output: JsonObject = body.present ? parseOrThrow(JsonObjectBody, body.value, "signal output") : {};
  const target = unwrap(await executionStub(env, workflowId).signalTarget());
  if (target.workflowId !== workflowId) {
    // As the completion by reference name of that task would be checked.
    await (await authorize())("POST", `/api/tasks/${target.workflowId}/${encodeURIComponent(target.taskRefName)}/${status}`);
  }
  unwrap(await executionStub(env, target.workflowId).updateTask(target.taskId, status, output));
  return workflowId;
}

async function workflowView(env: Env, workflowId: string): Promise<WorkflowView | undefined> {
  const json = await executionStub(env, workflowId).getWorkflowJson(true);
  return json === null ? undefined : (JSON.parse(json) as WorkflowView);
}

/**
 * What blocks `top` now: its first pending task, and when that is a SUB_WORKFLOW task whose child the caller may read,
 * what blocks that child, and so on down. Nothing once the workflow has ended.
 */
async function blockingPoint(env: Env, top: WorkflowView, authorize: PathAuthorizer): Promise<BlockingPoint> {
  let workflow = top;
  for (let depth = 0; depth < MAX_BLOCKING_DEPTH; depth++) {
    if (TERMINAL_WORKFLOW_STATUSES.has(workflow.status)) return { workflow };
    const task = (workflow.tasks ?? []).find((candidate) => candidate.status === "SCHEDULED" || candidate.status === "IN_PROGRESS");
    if (task === undefined) return { workflow };
    const childId = task.taskType === "SUB_WORKFLOW" ? task.subWorkflowId : undefined;
    if (childId === undefined || !(await mayRead(authorize, childId))) return { workflow, task };
    const child = await workflowView(env, childId);
    if (child === undefined) return { workflow, task };
    workflow = child;
  }
  return { workflow };
}

async function mayRead(authorize: PathAuthorizer, workflowId: string): Promise<boolean> {
  try {
    await authorize("GET", `/api/workflow/${workflowId}`);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return false;
    throw error;
  }
}

/** Orkes' SignalResponse: which answer it is and the signalled workflow's status, with the fields `strategy` asks for. */
function signalResponse(strategy: ReturnStrategy, top: WorkflowView, blocking: BlockingPoint): JsonObject {
  const header: JsonObject = { responseType: strategy, targetWorkflowId: top.workflowId, targetWorkflowStatus: top.status };
  if (strategy === "TARGET_WORKFLOW") return { ...top, ...header };
  if (strategy === "BLOCKING_WORKFLOW") return { ...blocking.workflow, ...header };
  const task = blocking.task;
  const where: JsonObject = { workflowId: blocking.workflow.workflowId, workflowType: blocking.workflow.workflowName };
  if (task === undefined) return { ...header, ...where };
  // The task's input and output go under `input` and `output`, as a SignalResponse carries them.
  const { inputData, outputData, ...fields } = task;
  if (strategy === "BLOCKING_TASK_INPUT") {
    const identity: Record<string, JsonValue | undefined> = { taskId: fields.taskId, taskType: fields.taskType, referenceTaskName: fields["referenceTaskName"] };
    return { ...header, ...where, ...definedFields(identity), input: inputData };
  }
  return { ...fields, ...header, ...where, input: inputData, output: outputData };
}

function definedFields(fields: Record<string, JsonValue | undefined>): JsonObject {
  return Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, JsonValue] => entry[1] !== undefined));
}

/** Registers the signal routes. Before the task update by reference name, whose `{taskRefName}/{status}` they would fit. */
export function registerSignalRoutes(router: RouterType<IRequest, Args>): void {
  router.post("/api/tasks/:workflowId/:status/signal", async (request, env) => {
    await applySignal(request, env, () => requestAuthorizer(request, env));
    return new Response(null, { status: 200 });
  });

  router.post("/api/tasks/:workflowId/:status/signal/sync", async (request, env) => {
    const raw = queryValue(request, "returnStrategy");
    const strategy = raw === undefined || raw === "" ? "TARGET_WORKFLOW" : parseOrThrow(ReturnStrategyQuery, raw, "return strategy", "returnStrategy");
    const waitMs = integerQuery(request, "timeoutMillis", 0, serviceConfig(env).executeMaxWaitSeconds * 1000) ?? DEFAULT_SIGNAL_WAIT_MS;
    const workflowId = decodedPathParam(request, "workflowId");
    const authorize = await requestAuthorizer(request, env);
    // The answer is a read of the workflow: checked first, so a caller who may not read it changes nothing.
    await authorize("GET", `/api/workflow/${workflowId}`);
    await applySignal(request, env, async () => authorize);
    await executionStub(env, workflowId).settle(waitMs);
    const top = await workflowView(env, workflowId);
    if (top === undefined) throw new ApiError(404, "NOT_FOUND", `Workflow ${workflowId} not found`);
    const blocking = strategy === "TARGET_WORKFLOW" ? { workflow: top } : await blockingPoint(env, top, authorize);
    return Response.json(signalResponse(strategy, top, blocking));
  });
}
