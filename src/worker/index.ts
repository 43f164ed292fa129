import { Router, type IRequest } from "itty-router";
import { guard } from "./guard";
import { serviceConfig } from "./config";
import { errorResponse, responseForError, type RequestPlace } from "./http/errors";
import { unavailableError } from "./object-retry";
import { MethodTable } from "./http/allowed-methods";
import { isPreflight, preflightResponse, withResponseHeaders } from "./http/headers";
import { registerBulkWorkflowRoutes } from "./routes/bulk";
import { registerEventRoutes } from "./routes/events";
import { registerMessageRoutes } from "./routes/messages";
import { registerMetadataRoutes } from "./routes/metadata";
import { registerMetricsRoutes } from "./routes/metrics";
import { registerEnvironmentRoutes } from "./routes/environment";
import { registerScheduleRoutes } from "./routes/schedules";
import { registerSecretRoutes } from "./routes/secrets";
import { registerSecurityRoutes } from "./routes/security";
import { registerApplicationRoutes } from "./routes/applications";
import { registerOrkesUserRoutes } from "./routes/users";
import { registerGroupRoutes } from "./routes/groups";
import { registerAuthorizationRoutes } from "./routes/authorization";
import { registerSignalRoutes } from "./routes/signals";
import { registerHumanTaskRoutes } from "./routes/human";
import { registerTaskDefRoutes } from "./routes/task-defs";
import { registerJsonSchemaRoutes } from "./routes/json-schemas";
import { registerTagRoutes } from "./routes/tags";
import { tagLimitRefusal } from "./tags";
import { registerTaskRoutes, registerWebhookCallbackRoute } from "./routes/tasks";
import { registerUnsupportedRoutes } from "./routes/unsupported";
import { registerVersionRoute } from "./routes/version";
import { registerWorkerRoutes } from "./routes/workers";
import { registerWebhookRoutes } from "./routes/webhooks";
import { registerWorkflowNameRoutes, registerWorkflowRoutes } from "./routes/workflows";

export { ExecutionIndexWriter } from "../actors/index-writer";
export { ExecutionLimit } from "../actors/execution-limit";
export { TaskLimit } from "../actors/task-limit";
export { RateLimiter } from "../actors/rate-limiter";
export { ScheduleTrigger } from "../actors/schedule-trigger";
export { TaskQueue } from "../actors/task-queue";
export { WorkflowExecution } from "../actors/workflow-execution";

type Args = [Env, ExecutionContext];

const router = Router<IRequest, Args>({ before: [guard, refuseHeadOfActingGet] });
router.get("/health", () => Response.json({ status: "ok" }));
registerVersionRoute(router);
// Before the 501s and the single-id routes: a definition may be named like one of their segments (`decide/correlated`,
// `execute/variables`).
registerWorkflowNameRoutes(router);
// Before the 501s: those of task queues and reading a task by id would take a poll and queue sizes.
registerWorkerRoutes(router);
registerUnsupportedRoutes(router);
registerTagRoutes(router);
registerEventRoutes(router);
registerMetadataRoutes(router);
registerTaskDefRoutes(router);
registerJsonSchemaRoutes(router);
// Before the single-id routes: their `:workflowId` would take "bulk".
registerBulkWorkflowRoutes(router);
registerMessageRoutes(router);
registerWorkflowRoutes(router);
// Before the signal routes: the callback is public, and their patterns would take some of its paths without a caller.
registerWebhookCallbackRoute(router);
// Before the task routes: the update by reference name would take `/api/tasks/{workflowId}/{status}/signal`.
registerSignalRoutes(router);
registerTaskRoutes(router);
registerSecretRoutes(router);
registerSecurityRoutes(router);
registerApplicationRoutes(router);
registerOrkesUserRoutes(router);
registerGroupRoutes(router);
registerAuthorizationRoutes(router);
registerHumanTaskRoutes(router);
registerWebhookRoutes(router);
registerMetricsRoutes(router);
registerEnvironmentRoutes(router);
// After the 501s: `GET /api/scheduler/schedules/tags` (Orkes' lookup by tag) is one, and not a schedule named "tags".
registerScheduleRoutes(router);
/** Every registered route as [method, path pattern], for tests that must cover all of them. */
export const ROUTE_TABLE: ReadonlyArray<readonly [string, string]> = router.routes.map(([method, , , path]) => [method, path ?? ""] as const);

// Read only when no route took a request (behind the guard, as every route is), so a matched request pays nothing.
// A plain OPTIONS gets here (no route takes that method, only the 501s of `router.all` may take it first).
const methods = new MethodTable(router.routes);
router.all("*", (request) => {
  const pathname = new URL(request.url).pathname;
  if (request.method === "OPTIONS") return methods.options(pathname);
  throw methods.refusal(request.method, pathname);
});

/** The router's answer; anything thrown becomes the contract's error response. */
async function route(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  try {
    const response: unknown = await router.fetch(request, env, ctx);
    if (response instanceof Response) return response;
    throw new Error("route returned no response");
  } catch (error) {
    // Only an error response quotes a request id: a request answered otherwise makes none.
    const requestId = crypto.randomUUID();
    const place = requestPlace(request);
    // An object that could not answer now (evicted, reset, overloaded) is no bug of the service: a 503 the client may
    // repeat, logged with what the object said.
    const unavailable = unavailableError(error);
    if (unavailable !== undefined) {
      console.warn(JSON.stringify({ msg: "an object could not answer", requestId, ...place, error: String(error) }));
      // The id of that line, quoted as a 500 quotes its own: a client reporting 503s (a hot object's) leads to them.
      return errorResponse(unavailable.status, unavailable.code, unavailable.message, { requestId, headers: unavailable.headers });
    }
    // A definition's tags added past the limit by a batch another addition raced (see `cappedInsertStatements`).
    return responseForError(tagLimitRefusal(error) ?? error, requestId, place);
  }
}

/** Where `request` went, for an error's log line: the router leaves the pattern of the route that took it on it. */
function requestPlace(request: Request): RequestPlace {
  const route: unknown = (request as Request & { route?: unknown }).route;
  return { method: request.method, path: new URL(request.url).pathname, route: typeof route === "string" ? route : undefined };
}

export default {
  async fetch(incoming, env, ctx): Promise<Response> {
    const request = withUnreservedDecoded(withSingleSlashes(incoming));
    const cors = serviceConfig(env).cors;
    if (isPreflight(request)) return withResponseHeaders(preflightResponse(request, cors), request, cors);
    if (request.method === "HEAD") return withResponseHeaders(await headResponse(request, env, ctx), request, cors);
    return withResponseHeaders(await route(request, env, ctx), request, cors);
  },
} satisfies ExportedHandler<Env>;

/** The GETs a HEAD stands for (see {@link headResponse}). */
const headRequests = new WeakSet<object>();

/**
 * GET routes that act (Conductor's and Orkes' APIs define them so): a poll hands tasks out, the scheduler's GET
 * pause/resume/requeue change schedules. Spring would run them for a HEAD too, and throw the answer away: a HEAD must
 * be safe (RFC 9110 9.3.2), and a poll's tasks would wait out their response timeout with no worker holding them.
 */
const ACTING_GET_PATHS = [/^\/api\/tasks\/poll\//, /^\/api\/scheduler\/admin\/(?:pause|resume|requeue)$/, /^\/api\/scheduler\/schedules\/[^/]+\/(?:pause|resume)$/];

/**
 * After the guard (a HEAD needs what its GET needs), refuses a HEAD of a GET that acts with the 405 of a method the
 * path does not take (`Allow` lists the path's methods).
 */
function refuseHeadOfActingGet(request: IRequest): undefined {
  if (!headRequests.has(request)) return undefined;
  const pathname = new URL(request.url).pathname;
  if (ACTING_GET_PATHS.some((pattern) => pattern.test(pathname))) throw methods.refusal("HEAD", pathname);
  return undefined;
}

/**
 * A HEAD answered as Conductor's Spring MVC answers it (a GET mapping takes HEAD too): the request runs as its GET,
 * through the same guard (authentication, access rules, the same target) and the same route, so it does nothing its GET
 * would not do and answers the GET's status and headers, without the body. The GET's `Content-Length` is kept, as
 * Spring's HEAD response counts the bytes it drops: workerd sends none for a HEAD unless the Worker sets it.
 */
async function headResponse(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  const asGet = new Request(request, { method: "GET" });
  headRequests.add(asGet);
  const answer = await route(asGet, env, ctx);
  const headers = new Headers(answer.headers);
  if (answer.body !== null && !headers.has("Content-Length")) headers.set("Content-Length", String((await answer.arrayBuffer()).byteLength));
  else await answer.body?.cancel();
  return new Response(null, { status: answer.status, statusText: answer.statusText, headers });
}

/**
 * The request with each run of slashes in its path read as one, as Conductor's server reads it (its Tomcat merges
 * them before Spring routes: apache/tomcat CoyoteAdapter.normalize). Netflix's Python client joins its base URL and
 * each path with a slash (polyglot-clients/python/conductor/conductor.py), and its default base URL
 * `http://localhost:8080/api/` ends with one, so every call it makes reads `/api//workflow/…`. Done before anything
 * reads the path, so the access rules, the guard and the router all see the same one.
 */
function withSingleSlashes(request: Request): Request {
  // Past the scheme's own "//" (index 5 or 6): most requests have no other, and skip the URL parse.
  if (request.url.indexOf("//", 8) === -1) return request;
  const url = new URL(request.url);
  if (!url.pathname.includes("//")) return request;
  url.pathname = url.pathname.replace(/\/{2,}/g, "/");
  return new Request(url.toString(), request);
}

/**
 * Whether serialized `url` has a `%` before its query: only the path is normalized, and a query's escapes (common in
 * search and filter parameters) need no URL parse. Its first `?` ends the path, which holds none unencoded.
 */
function pathMayHoldEscape(url: string): boolean {
  const percent = url.indexOf("%");
  if (percent === -1) return false;
  const query = url.indexOf("?");
  return query === -1 || percent < query;
}

/** A percent-encoded octet. */
const PERCENT_ENCODED = /%([0-9A-Fa-f]{2})/g;
/** RFC 3986's unreserved characters (2.3), which no route's literal segment is spelt without. */
const UNRESERVED = /^[A-Za-z0-9._~-]$/;

/**
 * The request with each percent-encoded unreserved character of its path decoded (`/api/workflow/%74est` is
 * `/api/workflow/test`), as RFC 3986 6.2.2.2 says such URIs are equivalent and should be normalized, and as Conductor's
 * Spring MVC matches the decoded path. The access rules compare a path's literal segments decoded, while the router
 * matches them as written: without this, `POST /api/workflow/%74est` was authorized as the test endpoint (the start
 * right on the workflow its body names) and routed as the start of the workflow named "test". Other escapes (`%2F`,
 * `%25`, a space) stay for the route's parameters to decode, once; what is decoded here is never `%`, so nothing is
 * decoded twice. Done before anything reads the path, with the single slashes.
 */
function withUnreservedDecoded(request: Request): Request {
  if (!pathMayHoldEscape(request.url)) return request;
  const url = new URL(request.url);
  const pathname = url.pathname.replace(PERCENT_ENCODED, (escape: string, hex: string) => {
    const character = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(character) ? character : escape;
  });
  if (pathname === url.pathname) return request;
  url.pathname = pathname;
  return new Request(url.toString(), request);
}
