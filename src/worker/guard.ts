import type { IRequest } from "itty-router";
import { DEFAULT_ACCESS_RULES, authorize, type AccessRule } from "./auth/access-rules";
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

/** `${workflow.name}` of a request: the targeted execution's definition, or the name in the body of a start or registration. */
async function workflowNameOf(request: Request, env: Env, variables: Record<string, string>): Promise<string | undefined> {
  const workflowId = variables["workflowId"];
  if (workflowId !== undefined) return UUID.test(workflowId) ? ((await executionStub(env, workflowId).getWorkflowName()) ?? undefined) : undefined;
  if (request.method !== "POST") return undefined;
  try {
    const text = await request.clone().text();
    if (text.length > serviceConfig(env).maxRequestBytes) return undefined;
    const body = JSON.parse(text) as { name?: unknown };
    return typeof body.name === "string" ? body.name : undefined;
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
  await authorize(principal, request.method, path, await accessRules(env), (variables) => workflowNameOf(raw, env, variables));
  return undefined;
}

/**
 * Throws 403 unless the request's principal may also `GET path`: for a route whose answer shows what
 * that read route guards (the same rules decide, stored ones included).
 */
export async function authorizeRead(request: IRequest, env: Env, path: string): Promise<void> {
  const read = new Request(new URL(path, request.url), { method: "GET" });
  await authorize(principalOf(request), "GET", path, await accessRules(env), (variables) => workflowNameOf(read, env, variables));
}
