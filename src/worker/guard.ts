import type { IRequest } from "itty-router";
import { BULK_ACCESS_RULES, DEFAULT_ACCESS_RULES, authorize, matchApiPath, type AccessRule, type RequestTarget } from "./auth/access-rules";
import { authenticate } from "./auth/authenticate";
import { ApiError } from "./http/errors";
import type { Principal } from "./auth/principal";
import { serviceConfig } from "./config";
import { peekJsonObject } from "./http/body";
import { executionStub } from "./executions";
import { SecurityStore } from "./security/store";
import { WEBHOOK_CALLBACK_PATH } from "./routes/tasks";

/** Token endpoints: they take credentials in their body instead of a header. */
const TOKEN_PATHS = new Set(["/api/security/token", "/api/token", "/api/security/token/refresh", "/api/security/token/revoke"]);

/**
 * Paths reachable without a token: the health check, the token endpoints, and webhook callbacks
 * (authenticated by the waiting task's own headers and signature instead).
 */
function isPublic(method: string, path: string): boolean {
  if (method === "GET" && path === "/health") return true;
  return method === "POST" && (TOKEN_PATHS.has(path) || WEBHOOK_CALLBACK_PATH.test(path));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The route taking Conductor's TaskResult, whose body names the task's execution. */
const TASK_RESULT_PATH = "/api/tasks";

/**
 * What a request targets: the execution named by the path (its definition), a TaskResult's execution
 * and task, or the definition named in the body of a start or registration.
 */
async function targetOf(request: Request, env: Env, path: string, variables: Record<string, string>): Promise<RequestTarget> {
  const workflowId = variables["workflowId"];
  if (workflowId !== undefined) return { workflowName: await executionName(env, workflowId) };
  if (request.method !== "POST") return {};
  // Matched as the access rules match it, so `/api/tasks/` cannot slip past as another path.
  if (matchApiPath(TASK_RESULT_PATH, path) !== undefined) return taskResultTarget(env, await jsonBody(request, env));
  return { workflowName: stringField(await jsonBody(request, env), "name") };
}

/**
 * A TaskResult is scoped only by what its execution says: the body just names that execution and the
 * task id, never the workflow or the task's reference name (whatever else it carries). One lookup.
 */
async function taskResultTarget(env: Env, body: Record<string, unknown> | undefined): Promise<RequestTarget> {
  const instanceId = stringField(body, "workflowInstanceId");
  if (instanceId === undefined || !UUID.test(instanceId)) return {};
  const taskId = stringField(body, "taskId");
  if (taskId === undefined) return { workflowName: await executionName(env, instanceId) };
  const scope = await executionStub(env, instanceId).getTaskScope(taskId);
  return { workflowName: scope?.workflowName, taskRefName: scope?.taskRefName ?? undefined };
}

async function executionName(env: Env, workflowId: string): Promise<string | undefined> {
  return UUID.test(workflowId) ? ((await executionStub(env, workflowId).getWorkflowName()) ?? undefined) : undefined;
}

async function jsonBody(request: Request, env: Env): Promise<Record<string, unknown> | undefined> {
  return peekJsonObject(request, serviceConfig(env).maxRequestBytes);
}

function stringField(body: Record<string, unknown> | undefined, field: string): string | undefined {
  const value = body?.[field];
  return typeof value === "string" ? value : undefined;
}

const principals = new WeakMap<object, Principal>();

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
  await authorize(principal, request.method, path, await accessRules(env), (variables) => targetOf(raw, env, path, variables));
  return undefined;
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
    await authorize(principal, method, path, rules, (variables) => targetOf(standIn, env, path, variables));
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
  const principal = principalOf(request);
  const rules = await accessRules(env);
  return async (workflowId, workflowName) => {
    try {
      // As targetOf: only a `{workflowId}` in the matched rule names the execution.
      await authorize(principal, "GET", `/api/workflow/${workflowId}`, rules, async (variables) => (variables["workflowId"] !== undefined ? { workflowName } : {}));
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) return false;
      throw error;
    }
  };
}
