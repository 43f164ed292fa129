import type { IRequest, RouterType } from "itty-router";
import { ApiError } from "../http/errors";

type Args = [Env, ExecutionContext];

/**
 * Conductor endpoints that the official clients call and this service does not implement (yet), with
 * the feature each belongs to. A bare 404 would read as "that workflow or task does not exist"; these
 * get a 501 that says the endpoint itself is missing. Registered before the real routes because some
 * would otherwise be taken by a real route with path variables; so none may overlap a
 * path the service serves (conductor-client.test.ts checks the webhook callback of a task named "signal"), or
 * come after the routes it would take: the routes naming a definition (lookups, execute) are registered first.
 */
export const UNSUPPORTED_CONDUCTOR_ENDPOINTS: ReadonlyArray<readonly [path: string, feature: string, method?: "GET"]> = [
  // Conductor 3.x's requeuePendingTask, a repair of a queue its store lost entries of: before the pattern below, which
  // would call it administration "not supported yet", where it is no need here.
  ["/api/tasks/queue/requeue/:taskType", "requeueing a task type's pending tasks (none needs it: each execution puts its waiting tasks in their queues itself, again until the queue has them; PUT /api/workflow/decide/{workflowId} puts one execution's waiting tasks in their queues again)"],
  ["/api/tasks/queue/*", "task queue administration beyond sizes, the queue list and poll data (GET /api/tasks/queue/size, GET /api/tasks/queue/sizes, GET /api/tasks/queue/all, GET /api/tasks/queue/all/verbose, GET /api/tasks/queue/polldata)"],
  ["/api/metadata/workflow-importer/*", "importing BPMN"],
  ["/api/metadata/workflow-task-defs/*", "bulk definition uploads"],
  ["/api/workflow/start/:name/:version", "asynchronous start (use POST /api/workflow)"],
  // Orkes' executeWorkflowAsGetApi (deprecated there; the Python and JavaScript clients' execute_workflow_as_get_api),
  // which would read as "takes POST" alone: its POST form reads the input from the body. GET only, as in Orkes: the
  // POST is served (routes/workflows.ts, registered before these).
  ["/api/workflow/execute/:name", "executing a workflow through GET (POST /api/workflow/execute/{name}?version= with the input as the body, and the same headers, waits and answers as it would)", "GET"],
  // A client asks where to upload a payload over its threshold: none is needed here (each payload is kept in its
  // execution, up to MAX_PAYLOAD_BYTES); a 404 would read as "no workflow or task with that id".
  // Conductor maps both spellings, for GET only (@GetMapping({"/externalstoragelocation", "external-storage-location"}) in
  // its WorkflowResource and TaskResource; swift-conductor's Go, TypeScript and .NET clients call the hyphenated one):
  // a POST there starts the workflow of that name.
  ["/api/workflow/externalstoragelocation", "external payload storage (payloads are kept in their execution, up to MAX_PAYLOAD_BYTES each)", "GET"],
  ["/api/workflow/external-storage-location", "external payload storage (payloads are kept in their execution, up to MAX_PAYLOAD_BYTES each)", "GET"],
  ["/api/tasks/externalstoragelocation", "external payload storage (payloads are kept in their execution, up to MAX_PAYLOAD_BYTES each)", "GET"],
  ["/api/tasks/external-storage-location", "external payload storage (payloads are kept in their execution, up to MAX_PAYLOAD_BYTES each)", "GET"],
  // Schedules themselves are served (routes/schedules.ts, registered after these): these paths are not theirs.
  ["/api/scheduler/test/*", "the scheduler's test endpoints"],
  // Event handlers themselves are served (routes/events.ts, registered after these): these paths are Orkes' others.
  ["/api/event/queue/*", "event queue configuration (only Conductor's internal events are published)"],
  ["/api/event/handleIncomingEvent", "incoming events"],
  ["/api/event/handler/", "event handler statistics"],
  ["/api/workflow/document-store/upload", "uploading completed workflows to a document store (executions are kept in their own storage, see retention)"],
  ["/api/users/:email/sendInviteEmail", "invitation e-mails (this service sends no e-mail: give the user an API key, POST /api/security/users/{userId}/api-keys)"],
  ["/api/share/*", "sharing resources between organisations"],
  // Conductor OSS's File API (workflow-scoped files under conductor://file/<id>, docs/documentation/api/files.md):
  // without these a 404 "No route" would read as a missing workflow or file.
  ["/api/files", "the File API (workflow-scoped file uploads and downloads: pass data in the workflow's input and its tasks' output, up to MAX_PAYLOAD_BYTES each)"],
  ["/api/files/*", "the File API (workflow-scoped file uploads and downloads: pass data in the workflow's input and its tasks' output, up to MAX_PAYLOAD_BYTES each)"],
  // Conductor OSS's Agents control plane and its provider and skill routes (docs/documentation/api/agents.md), which
  // need AI providers, as its LLM tasks do (refused at registration).
  ["/api/agent/*", "AI agents (Conductor's Agents runtime)"],
  ["/api/providers/*", "AI providers"],
  ["/api/skills", "AI agent skills"],
  ["/api/skills/*", "AI agent skills"],
  ["/api/prompts/*", "AI prompts"],
  ["/api/prompts", "AI prompts"],
  ["/api/integrations/*", "integrations"],
  ["/api/registry/*", "service registry"],
  // Orkes' MetricsResource (a proxy of task metrics to its Prometheus, GET /metrics/task/{taskName}) and
  // MetricsTokenResource (GET /metrics/token), which the Python SDK's MetricsResourceApi and MetricsTokenResourceApi call:
  // the service's own metrics are GET /api/metrics (routes/metrics.ts), which a pattern ending in /* would take too.
  // Each says where its answer is here: a task type's series in GET /api/metrics, and the credentials a scrape uses.
  ["/api/metrics/task/:taskName", "Orkes' Prometheus proxy of a task's metrics (this service's metrics are GET /api/metrics, in the Prometheus text format: a task type's series carry its taskType label)"],
  ["/api/metrics/token", "Orkes' metrics token (Prometheus scrapes GET /api/metrics with an application's API key, as X-API-Key or through POST /api/security/token's client-credentials form: see docs/api.md, Metrics)"],
  // Orkes' API Gateway (workflows served as REST routes): the Go SDK's ApiGatewayResourceApiService and the Conductor
  // CLI's api-gateway commands call /api/gateway/config/{services,auth}/…, which read as "No route" without it.
  ["/api/gateway/*", "the API Gateway (workflows served as REST routes: start them with POST /api/workflow or /api/workflow/execute/{name}/{version}, or through a webhook)"],
  // The human task routes (routes/human.ts, registered after these) would take it for a task id.
  ["/api/human/tasks/backPopulateFullTextIndex", "rebuilding the human task search index (there is none to rebuild: searches read the tasks)"],
  // Conductor's AdminResource: the sweeper and repair routes are served (routes/workflows.ts); these are not.
  ["/api/admin/config", "the server's configuration (see the README's Configuration: it is the Worker's vars and secrets)"],
  ["/api/admin/task/:taskType", "listing a task type's pending tasks (use GET /api/tasks/search?query=taskType='…' AND status IN (SCHEDULED,IN_PROGRESS))"],
  ["/api/admin/queues", "event queues (only Conductor's internal events are published)"],
  // Orkes' AdminResource getRedisUsage (the Python SDK's AdminResourceApi.get_redis_usage): its Redis's memory figures.
  // What Redis's memory was there is storage here: D1's size (`wrangler d1 info`), the Durable Objects' in the dashboard.
  ["/api/admin/redisUsage", "Redis usage (this service keeps no Redis: executions are Durable Objects, definitions are in D1; npx wrangler d1 info <database> shows D1's size, the Cloudflare dashboard the Durable Objects' storage, GET /api/metrics the executions running and tasks waiting)"],
  // Conductor's QueueAdminResource: its updates of a task by reference name or id are served (routes/tasks.ts); these
  // list its event queues (conductor-sharp's QueueAdminService calls them; Conductor's own names() is GET /api/queue/,
  // which the clients generated from its OpenAPI spec call, such as swift-conductor's TypeScript and .NET ones).
  ["/api/queue/size", "event queues (only Conductor's internal events are published)"],
  ["/api/queue/names", "event queues (only Conductor's internal events are published)"],
  ["/api/queue/", "event queues (only Conductor's internal events are published)"],
];

/**
 * Task queue routes of older Conductor versions that Conductor 3.x no longer serves (conductor-oss/conductor
 * TaskResource maps only `GET /tasks/queue/sizes`, `…/size`, `…/all`, `…/all/verbose`, `…/polldata`, `…/polldata/all`
 * and `POST …/requeue/{taskType}` under `/tasks/queue`; Conductor 3.0's release notes list `GET
 * /tasks/in_progress/{tasktype}` and `POST /tasks/queue/requeue` among its removed APIs), still sent by Netflix's Python
 * client (polyglot-clients/python conductor.py: `getTaskQueueSizes`, `getTasksInQueue`, `removeTaskFromQueue`), the
 * Java client of 2.x (`getPendingTasksByType`) and SDKs generated from older specifications (the Ruby SDK's
 * `get_pending_task_for_task_type`, the Rust client's `get_tasks_in_progress`), with what replaces each. Answered 501
 * as the other unsupported routes are, but saying the route is gone rather than "not supported yet", which would
 * suggest waiting for it. Before {@link UNSUPPORTED_CONDUCTOR_ENDPOINTS}, whose `/api/tasks/queue/*` would take them.
 */
export const REMOVED_CONDUCTOR_ENDPOINTS: ReadonlyArray<readonly [method: "GET" | "POST" | "DELETE", path: string, replacement: string]> = [
  // Older Conductor's sizes took the task types as a JSON list (a POST); 3.x reads them from the query of a GET.
  ["POST", "/api/tasks/queue/sizes", "use GET /api/tasks/queue/sizes?taskType=a&taskType=b (or GET /api/tasks/queue/size?taskType=a for one queue)"],
  // The served names (`sizes`, `size`, `all`, `polldata`) are registered before these (routes/workers.ts).
  ["GET", "/api/tasks/queue/:taskType", "list a task type's waiting tasks with GET /api/tasks/search?query=taskType='…' AND status='SCHEDULED' (Conductor 3.x's GET /api/admin/task/{taskType} is not served here either)"],
  ["DELETE", "/api/tasks/queue/*", "no route takes a task out of its queue: it leaves it once a worker polls it, or once it is completed (POST /api/tasks) or canceled (its workflow terminated)"],
  // A task type's pending tasks (2.x's getPendingTasksByType). One segment: a workflow's pending task by reference name,
  // GET /api/tasks/in_progress/{workflowId}/{taskRefName}, is served (routes/tasks.ts).
  ["GET", "/api/tasks/in_progress/:taskType", "list a task type's pending tasks with GET /api/tasks/search?query=taskType='…' AND status IN (SCHEDULED,IN_PROGRESS)"],
  // Requeueing every running workflow's pending tasks: an execution pushes each of its waiting tasks until the queue has it.
  ["POST", "/api/tasks/queue/requeue", "nothing needs requeueing: each execution puts its waiting tasks in their queues itself, again until the queue has them (PUT /api/workflow/decide/{workflowId} puts one execution's waiting tasks in their queues again)"],
];

/**
 * Answers every {@link REMOVED_CONDUCTOR_ENDPOINTS} route with 501 NOT_IMPLEMENTED naming its replacement, and every
 * {@link UNSUPPORTED_CONDUCTOR_ENDPOINTS} path with 501 NOT_IMPLEMENTED naming the feature: for any method, or only
 * for the one an entry names (the others go on to the served routes).
 */
export function registerUnsupportedRoutes(router: RouterType<IRequest, Args>): void {
  for (const [method, path, replacement] of REMOVED_CONDUCTOR_ENDPOINTS) {
    router[method.toLowerCase() as "get" | "post" | "delete"](path, (request) => {
      const pathname = new URL(request.url).pathname;
      throw new ApiError(501, "NOT_IMPLEMENTED", `${request.method} ${pathname} is an older Conductor endpoint that Conductor 3.x removed: ${replacement}`);
    });
  }
  for (const [path, feature, method] of UNSUPPORTED_CONDUCTOR_ENDPOINTS) {
    const refuse = (request: IRequest): never => {
      const pathname = new URL(request.url).pathname;
      throw new ApiError(501, "NOT_IMPLEMENTED", `${request.method} ${pathname} is a Conductor endpoint this service does not support yet: ${feature}`);
    };
    if (method === "GET") router.get(path, refuse);
    else router.all(path, refuse);
  }
}
