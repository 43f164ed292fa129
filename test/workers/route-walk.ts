/**
 * The walk of every route of the router table without credentials, with a token lacking permissions and as the admin,
 * shared by the route-coverage files. The walk is split over two files (route-coverage-walk-1 and -2), each in its own
 * workerd: a `SELF.fetch` gets slower with every request its workerd has served (cloudflare/workers-sdk#15446), and the
 * walk's some 720 requests in one file, after which came the PATCH walk of route-coverage.test.ts, took 150 s.
 */
import { expect } from "vitest";
import { BULK_ACCESS_RULES } from "../../src/worker/auth/access-rules";
import { ROUTE_TABLE } from "../../src/worker/index";
import { call, createUser, orkes, tokenFor } from "./auth-helpers";
import { ADMIN_KEY } from "./helpers";

const [adminKeyId, adminSecret] = ADMIN_KEY.split(":") as [string, string];

/** A route pattern with its parameters filled in: random ids, version 1, status COMPLETED, other names "some_name". */
export function concrete(path: string): string {
  return path
    .replace(/:workflowId|:taskId|:keyId|:id/g, () => crypto.randomUUID())
    .replace(":version", "1")
    .replace(":status", "COMPLETED")
    .replace(/:\w+/g, "some_name");
}

/** The routes answered without credentials. */
export const PUBLIC = new Set(["GET /health", "POST /api/security/token", "POST /api/token", "POST /api/security/token/refresh", "POST /api/security/token/revoke", "POST /api/tasks/webhook/:workflowId/:taskRefName/:taskId", "POST /webhook/:id", "POST /api/webhook/:id", "GET /webhook/:id", "GET /api/webhook/:id"]);
/** Every route of the table but the catch-alls. */
export const routes = ROUTE_TABLE.filter(([method, path]) => method !== "ALL" && path !== "*");

/** The bulk routes take any authenticated caller: each id is authorized as its single-id route (see "bulk operations"). */
export const ANY_CALLER = new Set(BULK_ACCESS_RULES.flatMap((rule) => rule.methods.map((method) => `${method} ${rule.apiPath}`)));
/**
 * The scheduler routes take any authenticated caller and check each schedule's workflow themselves (schedules/access.ts):
 * those naming no schedule answer a caller without permissions as anyone (an empty list; the body or query refused).
 * Those naming one refuse him (403), whether or not it exists.
 */
export const SCHEDULER_NO_SCHEDULE: Record<string, number> = {
  "POST /api/scheduler/schedules": 400,
  "GET /api/scheduler/schedules": 200,
  "GET /api/scheduler/nextFewSchedules": 400,
  // No `tag` query: refused before any schedule is looked at.
  "GET /api/scheduler/schedules/tags": 400,
  // The fires of schedules whose workflow the caller may read: none.
  "GET /api/scheduler/search/executions": 200,
  // The schedules whose workflow the caller may read: none.
  "GET /api/scheduler/schedules/search": 200,
  // The body ({}: not a list of schedule names) refused.
  "PUT /api/scheduler/bulk/pause": 400,
  "PUT /api/scheduler/bulk/resume": 400,
};

/**
 * The human task routes take any authenticated caller and decide by who the caller is to each task (human-tasks.ts):
 * a caller without permissions is refused a task by id (403, though the ids here name none: only one who may read every
 * workflow is told an id names no task, as at `GET /api/tasks/{taskId}`), finds an empty list, or has a body or query
 * refused. A user form by name is no task: 404. Saving and deleting user forms, and changing their tags, needs TASK_WRITE (403).
 */
export const HUMAN_ANY_CALLER: Record<string, number> = {
  "POST /api/human/tasks/search": 200,
  "GET /api/human/tasks/getTaskDisplayNames": 200,
  "POST /api/human/tasks/update/taskRef": 400,
  "DELETE /api/human/tasks/delete": 400,
  "DELETE /api/human/tasks/delete/:taskId": 403,
  "GET /api/human/tasks/:taskId": 403,
  "GET /api/human/tasks/:taskId/conductorTask": 403,
  "POST /api/human/tasks/:taskId/claim": 403,
  "POST /api/human/tasks/:taskId/externalUser/:userId": 403,
  "POST /api/human/tasks/:taskId/release": 403,
  "POST /api/human/tasks/:taskId/reassign": 400,
  "POST /api/human/tasks/:taskId/skip": 403,
  "POST /api/human/tasks/:taskId/update": 403,
  "GET /api/human/template": 200,
  "GET /api/human/template/:humanTaskId": 403,
  "GET /api/human/template/:name/:version": 404,
  "GET /api/human/template/:name/tags": 404,
};

/**
 * The walk is in four parts, each its own test with its own time limit: three requests for each of some 240 routes, one
 * after the other, took over a minute on a loaded machine as one test.
 */
export const WALK_PARTS = 4;

/** The title of each part's test (vitest's `%i` is the part). */
export const WALK_TITLE = "refuses every non-public route without credentials (401), with a token lacking permissions (403), and lets the admin through (part %i)";

/**
 * How many routes of a part are walked at once. A request naming an unknown task waits 1.45 s on timers before its 404
 * (task-lookup.ts: an execution's search row lags its start), and some 20 of the walk's requests do: one after the
 * other they were half the walk's time. Each route's own three requests stay one after the other, in the same order.
 */
const ROUTES_AT_ONCE = 4;

/**
 * Walks part `part` of the route table (every WALK_PARTS-th route): each non-public route refused without credentials
 * (401), refused to a user without permissions (403, or the answer those routes give anyone), and not refused to the
 * admin. Routes are walked ROUTES_AT_ONCE at a time; the first failure is thrown once every route started has ended.
 */
export async function walkPart(part: number): Promise<void> {
  const nobody = await createUser(`route-walker-${part}`);
  const admin = await tokenFor(adminKeyId, adminSecret);
  const queue = routes.filter((_route, index) => index % WALK_PARTS === part).filter(([method, pattern]) => !PUBLIC.has(`${method} ${pattern}`));
  const walkRoute = async ([method, pattern]: (typeof routes)[number]): Promise<void> => {
    const path = concrete(pattern);
    const body = method === "GET" ? undefined : {};
    expect((await call(method, path, {}, body)).status, `${method} ${path} without credentials`).toBe(401);
    const forbidden = await call(method, path, orkes(nobody.token), body);
    // About the caller themselves, or the server's version: answered to anyone signed in.
    if (pattern === "/api/security/permissions" || pattern === "/api/token/userInfo" || pattern === "/api/version" || pattern === "/api/health") expect(forbidden.status).toBe(200);
    // Reached, and the body ({}: not a list of ids) refused.
    else if (ANY_CALLER.has(`${method} ${pattern}`)) expect(forbidden.status, `${method} ${path} without permission`).toBe(400);
    else if (`${method} ${pattern}` in SCHEDULER_NO_SCHEDULE) expect(forbidden.status, `${method} ${path} without permission`).toBe(SCHEDULER_NO_SCHEDULE[`${method} ${pattern}`]);
    else if (`${method} ${pattern}` in HUMAN_ANY_CALLER) expect(forbidden.status, `${method} ${path} without permission`).toBe(HUMAN_ANY_CALLER[`${method} ${pattern}`]);
    else expect(forbidden.status, `${method} ${path} without permission`).toBe(403);
    const allowed = await call(method, path, orkes(admin.token), body);
    expect([401, 403], `${method} ${path} as admin → ${allowed.status}`).not.toContain(allowed.status);
    // Answered, not failed: no server error (501 is a route documented as not implemented here).
    expect([500, 502, 503, 504], `${method} ${path} as admin → ${allowed.status}`).not.toContain(allowed.status);
  };
  // ROUTES_AT_ONCE lanes, each taking the next route off the queue; a lane stops at its first failure.
  const lanes = await Promise.allSettled(
    Array.from({ length: ROUTES_AT_ONCE }, async () => {
      for (let route = queue.shift(); route !== undefined; route = queue.shift()) await walkRoute(route);
    }),
  );
  const failed = lanes.find((lane): lane is PromiseRejectedResult => lane.status === "rejected");
  if (failed !== undefined) throw failed.reason;
}
