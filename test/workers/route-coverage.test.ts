/**
 * The route table's own check, and every route's path asked with a method none of its routes takes, HEAD and OPTIONS.
 * The walk of every route without credentials, without permissions and as the admin is in route-coverage-walk-1 and -2
 * (route-walk.ts): each file runs in a workerd of its own, as a `SELF.fetch` gets slower with every request its workerd
 * has served (cloudflare/workers-sdk#15446), and the walk and this file's PATCH walk in one file took 150 s.
 */
import { describe, expect, it } from "vitest";
import { ROUTE_TABLE } from "../../src/worker/index";
import { UNSUPPORTED_CONDUCTOR_ENDPOINTS } from "../../src/worker/routes/unsupported";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, getWorkflow, register, rowCount, startWorkflow } from "./helpers";
import { ANY_CALLER, concrete, HUMAN_ANY_CALLER, PUBLIC, routes, SCHEDULER_NO_SCHEDULE } from "./route-walk";

describe("every registered route", () => {
  it("the route table is the one the tests expect (a new route must be added to these checks)", () => {
    expect(routes.length).toBeGreaterThanOrEqual(35);
    for (const publicRoute of PUBLIC) expect(routes.map(([method, path]) => `${method} ${path}`)).toContain(publicRoute);
    expect(routes.map(([method, path]) => `${method} ${path}`).filter((route) => route.includes("/bulk/") && !route.includes("/api/scheduler/"))).toEqual([...ANY_CALLER]);
    expect(ANY_CALLER.size).toBe(9);
    expect(routes.map(([method, path]) => `${method} ${path}`).filter((route) => route.includes("/api/scheduler/")).sort()).toEqual(
      [
        ...Object.keys(SCHEDULER_NO_SCHEDULE),
        "GET /api/scheduler/schedules/:name",
        "DELETE /api/scheduler/schedules/:name",
        ...["GET", "PUT", "DELETE"].map((method) => `${method} /api/scheduler/schedules/:name/tags`),
        ...["pause", "resume", "requeue"].map((action) => `GET /api/scheduler/admin/${action}`),
        ...["pause", "resume"].flatMap((action) => [`GET /api/scheduler/schedules/:name/${action}`, `PUT /api/scheduler/schedules/:name/${action}`]),
        "GET /api/scheduler/schedules/:name/executions",
        "GET /api/scheduler/schedules/:name/next-execution-times",
      ].sort(),
    );
    expect(routes.map(([method, path]) => `${method} ${path}`).filter((route) => route.includes("/api/human/")).sort()).toEqual(
      [...Object.keys(HUMAN_ANY_CALLER), "POST /api/human/template", "POST /api/human/template/bulk", "DELETE /api/human/template/:name", "DELETE /api/human/template/:name/:version", "PUT /api/human/template/:name/tags", "DELETE /api/human/template/:name/tags"].sort(),
    );
  });
});


/** Registers task definition `taskName` and workflow `workflowName` of one SIMPLE task of it (`work`), and starts it. */
async function startOneWorkerTask(taskName: string, workflowName: string) {
  await apiOk("POST", "/api/metadata/taskdefs", [{ name: taskName, retryCount: 0 }]);
  await register({ name: workflowName, tasks: [{ name: taskName, taskReferenceName: "work", type: "SIMPLE", inputParameters: {} }] });
  const workflowId = await startWorkflow(workflowName);
  const [task] = (await getWorkflow(workflowId)).tasks;
  return { workflowId, task };
}

/** A refusal's status, `Allow` header and body. */
async function refusalOf(response: Response): Promise<{ status: number; allow: string | null; body: unknown }> {
  return { status: response.status, allow: response.headers.get("allow"), body: await response.json() };
}

describe("the identity routes (security, applications, users, groups, per-resource grants)", () => {
  /** Every route managing who holds what: all of them need USER_ADMIN on *, the access rules' SYSTEM_ADMIN. */
  const identityRoutes = routes.filter(
    ([method, path]) =>
      /^\/api\/(security|applications|users|groups|auth\/authorization)(\/|$)/.test(path) &&
      !PUBLIC.has(`${method} ${path}`) &&
      !["GET /api/security/permissions"].includes(`${method} ${path}`),
  );
  const rulesWrite = (method: string, path: string) => path.startsWith("/api/security/rules") && method !== "GET";

  it("refuses each to a caller holding every other permission on * (403), lets a USER_ADMIN through, and the access rules' writes only a SYSTEM_ADMIN", async () => {
    expect(identityRoutes.length).toBeGreaterThanOrEqual(45);
    const everythingElse = ["WORKFLOW_READ", "WORKFLOW_WRITE", "WORKFLOW_ADMIN", "TASK_READ", "TASK_WRITE", "TASK_EXECUTE", "METADATA_ADMIN"].map((action) => ({ action, scope: "*" }));
    const operator = await createUser("identity-walk-operator", { directPermissions: everythingElse });
    const userAdmin = await createUser("identity-walk-user-admin", { directPermissions: [{ action: "USER_ADMIN", scope: "*" }] });
    for (const [method, pattern] of identityRoutes) {
      const path = concrete(pattern);
      const body = method === "GET" ? undefined : {};
      const refused = await call(method, path, orkes(operator.token), body);
      expect(refused.status, `${method} ${path} with every permission but USER_ADMIN and SYSTEM_ADMIN`).toBe(403);
      expect((await refused.json<{ error: string }>()).error).toBe("PERMISSION_DENIED");
      const managed = await call(method, path, orkes(userAdmin.token), body);
      await managed.body?.cancel();
      if (rulesWrite(method, pattern)) expect(managed.status, `${method} ${path} as a USER_ADMIN`).toBe(403);
      else expect([401, 403], `${method} ${path} as a USER_ADMIN → ${managed.status}`).not.toContain(managed.status);
      // Through, and answered: not a server error.
      expect([500, 502, 503, 504], `${method} ${path} as a USER_ADMIN → ${managed.status}`).not.toContain(managed.status);
    }
  });
});

// Conductor's Spring MVC answers a mapped path asked with a method it does not map with a 405 (conductor-oss/conductor
// #1396: before it, its catch-all exception mapper made it a 500), and the official clients fall back from PUT to GET
// on a 405 and only on one (conductor-oss/go-sdk#276, csharp-sdk#170, rust-sdk tests/scheduler_verb_fallback_tests.rs).
describe("a path the router serves, asked with a method none of its routes takes", () => {
  it("answers 405 METHOD_NOT_ALLOWED in the error shape, with Allow listing the methods the path takes; a path nothing serves is still a 404", async () => {
    const taskId = crypto.randomUUID();
    expect(await refusalOf(await api("PUT", `/api/tasks/${taskId}`, { status: "COMPLETED" }))).toEqual({
      status: 405,
      allow: "GET",
      body: { status: 405, error: "METHOD_NOT_ALLOWED", message: `Request method 'PUT' is not supported for /api/tasks/${taskId}: it takes GET`, retryable: false },
    });
    // Netflix's Python client posts a skip (polyglot-clients/python/conductor/conductor.py); Conductor maps PUT.
    expect(await refusalOf(await api("POST", `/api/workflow/${crypto.randomUUID()}/skiptask/work`, {}))).toMatchObject({ status: 405, allow: "PUT" });
    expect(await refusalOf(await api("DELETE", "/api/metadata/taskdefs"))).toMatchObject({ status: 405, allow: "GET, POST, PUT", body: { error: "METHOD_NOT_ALLOWED" } });
    // A public route's path too (its other methods are behind authentication, as any path is).
    expect(await refusalOf(await api("GET", "/api/security/token"))).toMatchObject({ status: 405, allow: "POST" });
    expect(await refusalOf(await api("PUT", "/api/no/such/route", {}))).toEqual({
      status: 404,
      allow: null,
      body: { status: 404, error: "NOT_FOUND", message: "No route for PUT /api/no/such/route", retryable: false },
    });
    // The 501s of Conductor endpoints not served stay 501s, whatever the method.
    expect((await api("PUT", "/api/admin/config", {})).status).toBe(501);
  });

  it("is decided after authentication and the access rules, as before: a 401 without credentials, a 403 without a permission for that method", async () => {
    const path = `/api/tasks/${crypto.randomUUID()}`;
    const anonymous = await call("PUT", path, {}, {});
    expect([anonymous.status, anonymous.headers.get("allow")]).toEqual([401, null]);
    // May read every task (GET of this path), not PUT to it: refused before any route is looked at.
    const reader = await createUser("m405-reader", { directPermissions: [{ action: "TASK_READ", scope: "*" }] });
    const forbidden = await call("PUT", path, orkes(reader.token), {});
    expect([forbidden.status, forbidden.headers.get("allow")]).toEqual([403, null]);
    // The scheduler's paths take any authenticated caller: he learns their methods, which are the same for everyone.
    expect(await refusalOf(await call("POST", "/api/scheduler/schedules/m405_nightly/pause", orkes(reader.token), {}))).toMatchObject({ status: 405, allow: "GET, PUT" });
    expect((await call("POST", "/api/scheduler/schedules/m405_nightly/pause", {}, {})).status).toBe(401);
    expect((await api("PUT", path, {})).status).toBe(405);
  });

  it("changes nothing", async () => {
    const { workflowId, task } = await startOneWorkerTask("m405_task", "m405_flow");
    const taskDefs = await rowCount("task_defs");
    // A TaskResult PUT to the task's own path, a skip POSTed, every task definition DELETEd.
    expect((await api("PUT", `/api/tasks/${task!.taskId}`, { workflowInstanceId: workflowId, taskId: task!.taskId, status: "COMPLETED" })).status).toBe(405);
    expect((await api("POST", `/api/workflow/${workflowId}/skiptask/work`, {})).status).toBe(405);
    expect((await api("DELETE", "/api/metadata/taskdefs")).status).toBe(405);
    expect(await rowCount("task_defs")).toBe(taskDefs);
    expect(await apiOk("GET", "/api/metadata/taskdefs/m405_task")).toMatchObject({ name: "m405_task" });
    const after = await getWorkflow(workflowId);
    expect(after.status).toBe("RUNNING");
    expect(after.tasks).toEqual([task]);
  });

  it("lists, for every registered route's path, that route's method (the table is the router's own)", async () => {
    // No route takes PATCH: each path answers 405 with its methods, or 501 where an endpoint not served takes it.
    const routes = ROUTE_TABLE.filter(([method, path]) => method !== "ALL" && path.startsWith("/api/"));
    let answered405 = 0;
    for (const [method, pattern] of routes) {
      const path = concrete(pattern);
      const response = await api("PATCH", path, {});
      if (response.status === 501) {
        await response.body?.cancel();
        continue;
      }
      const { status, allow } = await refusalOf(response);
      expect(status, `PATCH ${path}`).toBe(405);
      expect(allow?.split(", "), `PATCH ${path}`).toContain(method);
      answered405 += 1;
    }
    expect(answered405).toBeGreaterThan(200);
  }, 120_000);
});

/** An answer's status and the headers a HEAD must repeat from its GET, with its body's byte count. */
async function headersOf(response: Response): Promise<{ status: number; type: string | null; length: string | null; allow: string | null; bodyBytes: number }> {
  const bodyBytes = response.body === null ? 0 : (await response.arrayBuffer()).byteLength;
  return { status: response.status, type: response.headers.get("content-type"), length: response.headers.get("content-length"), allow: response.headers.get("allow"), bodyBytes };
}

/** The GET's answer as a HEAD must repeat it: its status and headers, its body's length as Content-Length. */
async function asHeadOf(response: Response): Promise<{ status: number; type: string | null; length: string | null; allow: string | null; bodyBytes: number }> {
  const { status, type, allow, bodyBytes } = await headersOf(response);
  return { status, type, length: String(bodyBytes), allow, bodyBytes: 0 };
}

// Conductor's Spring MVC answers a HEAD with the GET mapping of its path (RequestMethodsRequestCondition matches HEAD to
// GET; spring-projects/spring-framework spring-webmvc/.../mvc/method/RequestMappingInfoHandlerMapping.java): the same
// status and headers, Content-Length included, no body. Uptime monitors and load balancers probe with HEAD /health.
describe("a HEAD request", () => {
  it("answers as its GET without the body: /health without credentials, any route with the GET's status, Content-Type and Content-Length", async () => {
    const health = await headersOf(await call("HEAD", "/health", {}));
    expect(health).toEqual(await asHeadOf(await call("GET", "/health", {})));
    expect(health).toMatchObject({ status: 200, type: "application/json", length: '{"status":"ok"}'.length.toString() });
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "head_task", retryCount: 0 }]);
    for (const path of ["/api/metadata/taskdefs/head_task", "/api/metadata/workflow", "/api/version", "/api/metadata/taskdefs/no_such_task", "/api/no/such/route", "/api/admin/config"]) {
      expect(await headersOf(await api("HEAD", path)), `HEAD ${path}`).toEqual(await asHeadOf(await api("GET", path)));
    }
    expect(await headersOf(await api("HEAD", "/api/version"))).toMatchObject({ status: 200, type: "text/plain;charset=UTF-8" });
    // A path with no GET: the GET's 405, Allow listing the path's methods.
    expect(await headersOf(await api("HEAD", "/api/security/token"))).toMatchObject({ status: 405, allow: "POST", bodyBytes: 0 });
  });

  it("needs what its GET needs: credentials, and the permission for that GET", async () => {
    expect((await call("HEAD", "/api/metadata/workflow", {})).status).toBe(401);
    const taskReader = await createUser("head-task-reader", { directPermissions: [{ action: "TASK_READ", scope: "*" }] });
    expect((await call("HEAD", "/api/metadata/workflow", orkes(taskReader.token))).status).toBe(403);
    expect((await call("HEAD", "/api/metadata/taskdefs", orkes(taskReader.token))).status).toBe(200);
    // Answered to anyone signed in, as its GET.
    expect((await call("HEAD", "/api/version", orkes(taskReader.token))).status).toBe(200);
  });

  it("changes nothing on a path whose other methods act: it runs the GET route or none", async () => {
    const { workflowId, task } = await startOneWorkerTask("head_flow_task", "head_flow");
    const taskDefs = await rowCount("task_defs");
    // A path with only a PUT has no GET to run (405); a path with a GET beside its DELETE or POST runs the GET (200).
    const expected: Array<[string, number]> = [
      [`/api/workflow/${workflowId}/pause`, 405],
      [`/api/workflow/${workflowId}/skiptask/work`, 405],
      [`/api/workflow/${workflowId}`, 200],
      ["/api/metadata/taskdefs/head_flow_task", 200],
      ["/api/metadata/taskdefs", 200],
    ];
    for (const [path, status] of expected) expect((await api("HEAD", path)).status, `HEAD ${path}`).toBe(status);
    expect(await rowCount("task_defs")).toBe(taskDefs);
    const after = await getWorkflow(workflowId);
    expect(after.status).toBe("RUNNING");
    expect(after.tasks).toEqual([task]);
  });

  it("is refused with a 405 on a GET that acts (a poll, the scheduler's GET pause and resume), after the GET's checks, and the act is not done", async () => {
    const { workflowId } = await startOneWorkerTask("head_poll_task", "head_poll");
    await register({ name: "head_scheduled", tasks: [{ name: "head_poll_task", taskReferenceName: "work", type: "SIMPLE", inputParameters: {} }] });
    await apiOk("POST", "/api/scheduler/schedules", { name: "head-yearly", cronExpression: "0 0 0 1 1 ?", startWorkflowRequest: { name: "head_scheduled" } });
    for (const path of ["/api/tasks/poll/head_poll_task", "/api/tasks/poll/batch/head_poll_task?count=5", "/api/scheduler/schedules/head-yearly/pause", "/api/scheduler/admin/pause"]) {
      const answer = await headersOf(await api("HEAD", path));
      expect(answer, `HEAD ${path}`).toMatchObject({ status: 405, bodyBytes: 0 });
      expect(answer.allow, `HEAD ${path}`).toMatch(/^GET\b/);
    }
    expect((await call("HEAD", "/api/tasks/poll/head_poll_task", {})).status).toBe(401);
    const [task] = (await getWorkflow(workflowId)).tasks;
    expect([task?.status, task?.pollCount ?? 0]).toEqual(["SCHEDULED", 0]);
    expect((await apiOk("GET", "/api/scheduler/schedules/head-yearly")).paused).toBe(false);
    // The GET itself still acts: the task is handed out.
    expect((await apiOk("GET", "/api/tasks/poll/head_poll_task")).taskId).toBe(task?.taskId);
  });
});

// Spring Boot's DispatcherServlet dispatches OPTIONS (dispatchOptionsRequest): a path some mapping serves answers 200
// with Allow, its declared methods with HEAD after GET, and OPTIONS (RequestMappingInfoHandlerMapping's
// HttpOptionsHandler). A CORS preflight keeps its own answer (headers.test.ts).
describe("a plain OPTIONS request", () => {
  it("answers 200 with Allow listing the path's methods, HEAD after GET, and OPTIONS, without a body; a path nothing serves is a 404", async () => {
    const taskId = crypto.randomUUID();
    expect(await headersOf(await api("OPTIONS", "/api/metadata/taskdefs"))).toMatchObject({ status: 200, allow: "GET, HEAD, POST, PUT, OPTIONS", bodyBytes: 0 });
    expect(await headersOf(await api("OPTIONS", `/api/tasks/${taskId}`))).toMatchObject({ status: 200, allow: "GET, HEAD, OPTIONS", bodyBytes: 0 });
    expect(await headersOf(await api("OPTIONS", `/api/workflow/${taskId}/skiptask/work`))).toMatchObject({ status: 200, allow: "PUT, OPTIONS" });
    expect(await headersOf(await api("OPTIONS", "/health"))).toMatchObject({ status: 200, allow: "GET, HEAD, OPTIONS" });
    expect(await refusalOf(await api("OPTIONS", "/api/no/such/route"))).toEqual({
      status: 404,
      allow: null,
      body: { status: 404, error: "NOT_FOUND", message: "No route for OPTIONS /api/no/such/route", retryable: false },
    });
    // The 501s of Conductor endpoints not served stay 501s, whatever the method.
    expect((await api("OPTIONS", "/api/admin/config")).status).toBe(501);
    // The 405's Allow stays the declared methods, as Spring's HttpRequestMethodNotSupportedException carries them.
    expect((await api("PUT", `/api/tasks/${taskId}`, {})).headers.get("allow")).toBe("GET");
  });

  it("needs credentials, as every request but GET /health, and no permission: the methods are the same for every caller", async () => {
    expect(await refusalOf(await call("OPTIONS", "/health", {}))).toMatchObject({ status: 401, allow: null });
    expect((await call("OPTIONS", "/api/metadata/workflow", {})).status).toBe(401);
    const nobody = await createUser("options-nobody");
    expect(await headersOf(await call("OPTIONS", "/api/metadata/workflow", orkes(nobody.token)))).toMatchObject({ status: 200, allow: "GET, HEAD, POST, PUT, OPTIONS" });
    expect((await call("GET", "/api/metadata/workflow", orkes(nobody.token))).status).toBe(403);
    // Safe because it reaches no route but the catch-all and the 501s: the router's only routes for any method are those.
    const anyMethod = ROUTE_TABLE.filter(([method]) => method === "ALL").map(([, path]) => path);
    // (The table is taken before the catch-all is added, and itty-router keeps a path without its trailing slash.)
    const unsupported = UNSUPPORTED_CONDUCTOR_ENDPOINTS.filter(([, , method]) => method === undefined).map(([path]) => path.replace(/(.)\/$/, "$1"));
    expect(anyMethod).toEqual(unsupported);
  });
});
