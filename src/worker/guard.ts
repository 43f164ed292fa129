import type { IRequest } from "itty-router";
import { BULK_ACCESS_RULES, DEFAULT_ACCESS_RULES, authorize, type AccessRule, type RequestTarget } from "./auth/access-rules";
import { authenticate } from "./auth/authenticate";
import { ApiError } from "./http/errors";
import type { Principal } from "./auth/principal";
import { serviceConfig } from "./config";
import { peekJsonObject } from "./http/body";
import { executionStub, orOnOlderCode, retryingExecutionCall } from "./executions";
import { SecurityStore } from "./security/store";
import { taskResultMaxBytes, WEBHOOK_CALLBACK_PATH } from "./routes/tasks";
import { WEBHOOK_EVENT_PATH } from "./routes/webhooks";
import { findTask, type FoundTask } from "./task-lookup";
import type { Grant } from "./auth/permissions";
import { isUuid } from "../engine/task-id";

/** Token endpoints: they take credentials in their body instead of a header. */
const TOKEN_PATHS = new Set(["/api/security/token", "/api/token", "/api/security/token/refresh", "/api/security/token/revoke"]);

/**
 * Paths reachable without a token: the health check, the token endpoints, webhook callbacks (authenticated by the
 * waiting task's own headers and signature instead), events sent to webhooks (by the webhook's verifier) and their
 * pings (which say only that the webhook exists).
 */
function isPublic(method: string, path: string): boolean {
  if (method === "GET") return path === "/health" || WEBHOOK_EVENT_PATH.test(path);
  return method === "POST" && (TOKEN_PATHS.has(path) || WEBHOOK_CALLBACK_PATH.test(path) || WEBHOOK_EVENT_PATH.test(path));
}


/**
 * What a request targets, as the route that serves it reads its path: the execution an id in the path names,
 * the definition a name in the path names (a start, execute, a lookup, a definition), a TaskResult's execution
 * and task, or the definition named in the body of `POST /api/workflow` and `POST /api/metadata/workflow`, the
 * only routes whose body names what they act on. Never from the rule that matched: a stored rule with a
 * wildcard (`/api/workflow/*`) would otherwise leave the target to whatever the body says, and a retry or a
 * start by name carrying `{"name": "<a workflow the caller holds>"}` would be checked against the wrong scope.
 */
async function targetOf(request: Request, env: Env, path: string): Promise<RequestTarget> {
  const target = pathTarget(request.method, path);
  if (target === undefined) return {};
  if ("taskRefName" in target) return fromExecution(await taskByRefTarget(env, target.workflowId, target.taskRefName));
  if ("inWorkflow" in target) return fromExecution(taskTarget(await retryingExecutionCall(env, target.inWorkflow, (stub) => stub.getTaskScope(target.taskId))));
  if ("workflowId" in target) return fromExecution({ workflowName: await executionName(env, target.workflowId) });
  if ("workflowName" in target) return { workflowName: target.workflowName };
  if ("taskId" in target) {
    const found = await findTask(request, env, target.taskId);
    return fromExecution(found === undefined ? {} : { workflowName: found.workflowName, taskRefName: found.taskRefName, taskName: found.taskName });
  }
  // As much of the body as its route reads: a worker's large result is scoped by its task like any other.
  const config = serviceConfig(env);
  const body = await peekJsonObject(request, target.body === "taskResult" ? taskResultMaxBytes(config) : config.maxRequestBytes);
  if (target.body === "taskResult") return fromExecution(await taskResultTarget(env, body));
  // A start with an inline definition starts the definition's name, whatever `name` the body gives too (as Conductor
  // runs the workflowDef it is given), so that name is the one whose start right is checked.
  const inline = body?.["workflowDef"];
  const inlineName = typeof inline === "object" && inline !== null && !Array.isArray(inline) ? stringField(inline as Record<string, unknown>, "name") : undefined;
  // The body's `name` as the routes read it: a start trims it (StartWorkflowRequest), so `" billing "` starts billing
  // and is checked as billing; a registration refuses a name with surrounding whitespace after the guard, with a 400.
  return { workflowName: inlineName ?? stringField(body, "name")?.trim() };
}

/** A target read from an execution, not named by the request: a refusal does not name its workflow to a stranger. */
function fromExecution(target: RequestTarget): RequestTarget {
  return { ...target, workflowNameFromExecution: true };
}

/**
 * Where a request names its target: an execution's id, a definition's name or a task's id in the path (a task of
 * an execution by its reference name or its id), or its body.
 */
type PathTarget =
  | { workflowId: string; taskRefName: string }
  | { inWorkflow: string; taskId: string }
  | { workflowId: string }
  | { workflowName: string }
  | { taskId: string }
  | { body: "name" | "taskResult" };

/** {@link targetOf}'s reading of a path, mirroring the routes (src/worker/routes) in the order the router tries them. */
function pathTarget(method: string, path: string): PathTarget | undefined {
  const segments = decodedSegments(path);
  if (segments === undefined || segments[0] !== "api") return undefined;
  const [area, first, second] = segments.slice(1);
  const rest = segments.length - 2;
  if (area === "workflow") {
    if (rest === 0) return method === "POST" ? { body: "name" } : undefined;
    if (first === "execute" && (rest === 2 || rest === 3) && method === "POST") return { workflowName: second! };
    if (first === "running" && rest === 2) return { workflowName: second! };
    if (second === "correlated" && (rest === 2 || rest === 3)) return { workflowName: first! };
    // Conductor's test endpoint names its workflow in the body, as a start does; any other name is a start by name.
    if (rest === 1 && method === "POST") return first === "test" ? { body: "name" } : { workflowName: first! };
    if (rest === 2 && method === "POST" && first === "test" && second === "sync") return { body: "name" };
    if (first === "decide" && rest === 2) return isUuid(second!) ? { workflowId: second! } : undefined;
    return isUuid(first!) ? { workflowId: first! } : undefined;
  }
  if (area === "tasks") {
    if (rest === 0 || (rest === 1 && first === "update-v2")) return method === "POST" ? { body: "taskResult" } : undefined;
    if (rest === 1 && method === "GET") return isUuid(first!) ? { taskId: first! } : undefined;
    // A task's log, read or appended to (`POST` with the line as its body).
    if (rest === 2 && second === "log") return isUuid(first!) ? { taskId: first! } : undefined;
    if (first === "in_progress") return rest === 3 && isUuid(second!) ? { workflowId: second! } : undefined;
    if (!(rest >= 3 && isUuid(first!))) return undefined;
    // An update by reference name (`…/{workflowId}/{taskRefName}/{status}` and `…/sync`); the signal routes come first.
    const third = segments[4];
    const byRef = third !== "signal" && (rest === 3 || (rest === 4 && segments[5] === "sync"));
    return byRef ? { workflowId: first!, taskRefName: second! } : { workflowId: first! };
  }
  // Conductor's AdminResource, acting on one execution: `/api/admin/sweep/requeue/{workflowId}`, `…/verifyAndRepair/{workflowId}`.
  // Those two only: `/api/admin/cache/clear/{taskDefName}` names a task definition, whatever its name looks like.
  if (area === "admin") return rest === 3 && isExecutionAdminPath(first!, second!) && isUuid(segments[4]!) ? { workflowId: segments[4]! } : undefined;
  // Conductor's QueueAdminResource updates: `/api/queue/update/{workflowId}/task/{taskId}/{status}` and
  // `/api/queue/update/{workflowId}/{taskRefName}/{status}`.
  if (area === "queue") {
    if (first !== "update" || !isUuid(second ?? "")) return undefined;
    if (rest === 5 && segments[4] === "task") return { inWorkflow: second!, taskId: segments[5]!.toLowerCase() };
    return rest === 4 ? { workflowId: second!, taskRefName: segments[4]! } : { workflowId: second! };
  }
  if (area === "metadata" && first === "workflow") {
    if (rest === 1) return method === "POST" ? { body: "name" } : undefined;
    if (rest === 2 && second === "validate" && method === "POST") return { body: "name" };
    return rest <= 3 ? { workflowName: second! } : undefined;
  }
  return undefined;
}

/** Whether `/api/admin/{first}/{second}/…` is one of Conductor's AdminResource routes taking an execution id. */
function isExecutionAdminPath(first: string, second: string): boolean {
  return (first === "sweep" && second === "requeue") || (first === "consistency" && second === "verifyAndRepair");
}

/** The path's segments, percent-decoded as the routes decode their parameters; undefined for a malformed escape. */
function decodedSegments(path: string): string[] | undefined {
  try {
    return path.split("/").filter(Boolean).map((segment) => decodeURIComponent(segment));
  } catch {
    return undefined;
  }
}

/**
 * A TaskResult is scoped only by what its execution says: the body just names that execution and the
 * task id, never the workflow or the task's reference name (whatever else it carries). One lookup.
 */
async function taskResultTarget(env: Env, body: Record<string, unknown> | undefined): Promise<RequestTarget> {
  const instanceId = stringField(body, "workflowInstanceId");
  if (instanceId === undefined || !isUuid(instanceId)) return {};
  const taskId = stringField(body, "taskId");
  if (taskId === undefined) return { workflowName: await executionName(env, instanceId) };
  return taskTarget(await retryingExecutionCall(env, instanceId, (stub) => stub.getTaskScope(taskId)));
}

/** A task's scope as its execution reported it (see `getTaskScope`); empty when it holds no execution. */
function taskTarget(scope: { workflowName: string; taskRefName: string | null; taskName: string | null } | null): RequestTarget {
  return { workflowName: scope?.workflowName, taskRefName: scope?.taskRefName ?? undefined, taskName: scope?.taskName ?? undefined };
}

/**
 * The target of an update of task `taskRefName` of execution `workflowId` by its reference name: the workflow and the
 * task the reference names there. An object still on the code before `getTaskScopeByRef` (a deploy's first moments, a
 * gradual deployment's previous version: see `isUnimplementedRpcMethod`) gives the workflow alone, as that code's router
 * checked such an update (by the workflow's rights, not a task name's), where the guard's call failed it with a 500.
 */
async function taskByRefTarget(env: Env, workflowId: string, taskRefName: string): Promise<RequestTarget> {
  return await orOnOlderCode(
    "getTaskScopeByRef",
    async () => taskTarget(await retryingExecutionCall(env, workflowId, (stub) => stub.getTaskScopeByRef(taskRefName))),
    async (): Promise<RequestTarget> => ({ workflowName: await executionName(env, workflowId) }),
  );
}

/** The workflow name of execution `workflowId`; undefined when the id names none (or is no execution id). */
export async function executionName(env: Env, workflowId: string): Promise<string | undefined> {
  return isUuid(workflowId) ? ((await retryingExecutionCall(env, workflowId, (stub) => stub.getWorkflowName())) ?? undefined) : undefined;
}

function stringField(body: Record<string, unknown> | undefined, field: string): string | undefined {
  const value = body?.[field];
  return typeof value === "string" ? value : undefined;
}

const principals = new WeakMap<object, Principal>();
const checkedTaskNames = new WeakMap<object, string>();

/** The principal the guard authenticated for this request (routes behind the guard only). */
export function principalOf(request: IRequest): Principal {
  const principal = principals.get(request);
  if (!principal) throw new Error("principalOf called on a request the guard did not authenticate");
  return principal;
}

/** The access rules in force: those of the bulk routes, then stored ones, then the defaults. */
async function accessRules(env: Env): Promise<AccessRule[]> {
  return [...BULK_ACCESS_RULES, ...(await new SecurityStore(env.DB).listRules()), ...DEFAULT_ACCESS_RULES];
}

/** Authenticates and authorizes every request before any route runs. */
export async function guard(request: IRequest, env: Env): Promise<undefined> {
  const path = new URL(request.url).pathname;
  if (isPublic(request.method, path)) return undefined;
  const raw = request as unknown as Request;
  const principal = await authenticate(raw, env);
  principals.set(request, principal);
  // A plain OPTIONS (a preflight never gets here) asks which methods the path takes, which is the route table, the same
  // for every caller: authenticated, it needs no permission. No route acts on it: only the catch-all, which answers it,
  // and the 501s (`router.all`) take that method (route-coverage.test.ts holds the router's `ALL` routes to those).
  if (request.method === "OPTIONS") return undefined;
  let target: RequestTarget | undefined;
  const admittedBy = await authorize(principal, request.method, path, await accessRules(env), async () => (target = await targetOf(raw, env, path)));
  if (admittedBy?.scope.includes("${task.name}") && target?.taskName !== undefined) checkedTaskNames.set(request, target.taskName);
  return undefined;
}

/**
 * The task name the guard let this request in for, when the permission that did was one on the name of the task it
 * targets (`task:${task.name}`) and not on the workflow or the path's names: a route acting on "the latest task of a
 * reference name" passes it on, so that the task it updates is still of that name (see `updateTaskByRef`).
 */
export function checkedTaskName(request: IRequest): string | undefined {
  return checkedTaskNames.get(request);
}

/** Throws 403 unless the principal may make a request with this method and path (one of {@link requestAuthorizer}'s checks). */
export type PathAuthorizer = (method: string, path: string) => Promise<void>;

/**
 * Checks, for the principal of `request`, other requests it stands for, exactly as the guard would check them
 * had they been sent: the same rules (stored ones included, read once here) and the same targets for their
 * scopes. For a route whose answer shows what another route guards, and for each id of a bulk request.
 */
export async function requestAuthorizer(request: IRequest, env: Env): Promise<PathAuthorizer> {
  const principal = principalOf(request);
  const rules = await accessRules(env);
  return async (method, path) => {
    // Bodiless: what stands in for the request names its target in the path alone.
    const standIn = new Request(new URL(path, request.url), { method });
    await authorize(principal, method, path, rules, () => targetOf(standIn, env, path));
  };
}

/**
 * Throws 403 unless the request's principal may also `GET path`: for a route whose answer shows what
 * that read route guards (the same rules decide, stored ones included).
 */
export async function authorizeRead(request: IRequest, env: Env, path: string): Promise<void> {
  await (await requestAuthorizer(request, env))("GET", path);
}

/** Whether the caller may read an execution whose id and definition name are known: see {@link workflowReadCheck}. */
export type WorkflowReadCheck = (workflowId: string, workflowName: string) => Promise<boolean>;

/**
 * For a route answering with executions it found in the search index: whether the request's principal may
 * `GET /api/workflow/{workflowId}` of each, decided by the same rules (stored ones included) as that route,
 * read once. The definition name comes from the index (a name never changes), so no execution is asked for it.
 */
export async function workflowReadCheck(request: IRequest, env: Env): Promise<WorkflowReadCheck> {
  return readCheckWith(principalOf(request), await accessRules(env));
}

/** {@link workflowReadCheck}'s check for `principal` under `rules`. */
function readCheckWith(principal: Principal, rules: AccessRule[]): WorkflowReadCheck {
  // As targetOf reads that path: the execution it names.
  return (workflowId, workflowName) => permitted(authorize(principal, "GET", `/api/workflow/${workflowId}`, rules, async () => ({ workflowName })));
}

/** Whether the caller may report a task's result: see {@link taskChecks}. */
export type TaskResultCheck = (task: FoundTask) => Promise<boolean>;

/**
 * For a route acting on tasks found by id: whether the request's principal may read a task's execution (`read`, as
 * {@link workflowReadCheck}), read the task itself (`readTask`: `GET /api/tasks/{taskId}`; `readUnknownTask` for an id
 * no execution holds, so that a route tells that only to whom the guard would) and complete or fail the
 * task from outside (`complete`: `POST /api/tasks` naming it), each task's scope as the execution reported it, decided
 * by the same rules (stored ones included) as those routes, read once.
 */
export async function taskChecks(
  request: IRequest,
  env: Env,
): Promise<{ read: WorkflowReadCheck; readTask: TaskReadCheck; readUnknownTask: (taskId: string) => Promise<boolean>; complete: TaskResultCheck }> {
  const principal = principalOf(request);
  const rules = await accessRules(env);
  const taskTarget = (task: FoundTask) => async () => ({ workflowName: task.workflowName, taskRefName: task.taskRefName, taskName: task.taskName });
  return {
    read: readCheckWith(principal, rules),
    readTask: (taskId, task) => permitted(authorize(principal, "GET", `/api/tasks/${taskId}`, rules, taskTarget(task))),
    // As the guard checks an id no execution holds: with no workflow or task names (only rights on every one meet it).
    readUnknownTask: (taskId) => permitted(authorize(principal, "GET", `/api/tasks/${taskId}`, rules, async () => fromExecution({}))),
    complete: (task) => permitted(authorize(principal, "POST", "/api/tasks", rules, taskTarget(task))),
  };
}

/** Whether the caller may read task `taskId` (of `task`'s execution, name and reference name) as `GET /api/tasks/{taskId}` is authorized. */
export type TaskReadCheck = (taskId: string, task: FoundTask) => Promise<boolean>;

/** True when `check` passes, false when it refuses with a 403; any other failure is thrown. */
async function permitted(check: Promise<unknown>): Promise<boolean> {
  try {
    await check;
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return false;
    throw error;
  }
}

/** Whether a request of `method` to `path`, aimed at `target`, would pass the access rules: see {@link routeCheckFor}. */
export type RouteCheck = (method: string, path: string, target?: RequestTarget) => Promise<boolean>;

/**
 * Whether the holder of `grants` (another user's, as `GET /api/users/{id}/checkPermissions` asks about them) would pass
 * the access rules in force (stored ones included, read once here) with a request of `method` to `path`, its scopes'
 * workflow and task names being `target`'s (none given: a target not found, which only rights on every one meet).
 * Only the rules: a route that checks more itself (schedules, a webhook's workflows) is not asked.
 */
export async function routeCheckFor(env: Env, grants: readonly Grant[]): Promise<RouteCheck> {
  const rules = await accessRules(env);
  const holder: Principal = { userId: "", grants: [...grants], method: "api-key" };
  return (method, path, target = {}) => permitted(authorize(holder, method, path, rules, async () => target));
}
