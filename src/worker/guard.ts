import type { IRequest } from "itty-router";
import { DEFAULT_ACCESS_RULES, authorize, matchApiPath, type AccessRule } from "./auth/access-rules";
import { authenticate } from "./auth/authenticate";
import type { Principal } from "./auth/principal";
import { serviceConfig } from "./config";
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
 * `${workflow.name}` of a request: the targeted execution's definition (named by the path, or by a
 * TaskResult's `workflowInstanceId`), or the name in the body of a start or registration.
 */
async function workflowNameOf(request: Request, env: Env, path: string, variables: Record<string, string>): Promise<string | undefined> {
  const workflowId = variables["workflowId"];
  if (workflowId !== undefined) return executionName(env, workflowId);
  if (request.method !== "POST") return undefined;
  // A TaskResult is scoped only by the execution the route will update, never by a `name` it carries.
  // Matched as the access rules match it, so `/api/tasks/` cannot slip past as another path.
  if (matchApiPath(TASK_RESULT_PATH, path) !== undefined) {
    const instanceId = await bodyField(request, env, "workflowInstanceId");
    return instanceId === undefined ? undefined : executionName(env, instanceId);
  }
  return bodyField(request, env, "name");
}

async function executionName(env: Env, workflowId: string): Promise<string | undefined> {
  return UUID.test(workflowId) ? ((await executionStub(env, workflowId).getWorkflowName()) ?? undefined) : undefined;
}

/** A string field of a JSON request body, read from a clone so the route still gets the body. */
async function bodyField(request: Request, env: Env, field: string): Promise<string | undefined> {
  try {
    const text = await request.clone().text();
    if (text.length > serviceConfig(env).maxRequestBytes) return undefined;
    const body = JSON.parse(text) as Record<string, unknown> | null;
    const value = body?.[field];
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

const principals = new WeakMap<object, Principal>();

/** The principal the guard authenticated for this request (routes behind the guard only). */
export function principalOf(request: IRequest): Principal {
  const principal = principals.get(request);
  if (!principal) throw new Error("principalOf called on a request the guard did not authenticate");
  return principal;
}

/** The access rules in force: stored ones first, then the defaults. */
async function accessRules(env: Env): Promise<AccessRule[]> {
  return [...(await new SecurityStore(env.DB).listRules()), ...DEFAULT_ACCESS_RULES];
}

/** Authenticates and authorizes every request before any route runs. */
export async function guard(request: IRequest, env: Env): Promise<undefined> {
  const path = new URL(request.url).pathname;
  if (isPublic(request.method, path)) return undefined;
  const raw = request as unknown as Request;
  const principal = await authenticate(raw, env);
  principals.set(request, principal);
  await authorize(principal, request.method, path, await accessRules(env), (variables) => workflowNameOf(raw, env, path, variables));
  return undefined;
}

/**
 * Throws 403 unless the request's principal may also `GET path`: for a route whose answer shows what
 * that read route guards (the same rules decide, stored ones included).
 */
export async function authorizeRead(request: IRequest, env: Env, path: string): Promise<void> {
  const read = new Request(new URL(path, request.url), { method: "GET" });
  await authorize(principalOf(request), "GET", path, await accessRules(env), (variables) => workflowNameOf(read, env, path, variables));
}
