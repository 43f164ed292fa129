/**
 * Shapes the official Conductor TypeScript client depends on, through the real router. Each block
 * pins one mismatch found by running the client (test/e2e/conductor-client.test.ts) against the service.
 */
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { WorkflowExecution } from "../../src/actors/workflow-execution";
import type { JsonObject } from "../../src/engine/model";
import { DefinitionRepository } from "../../src/worker/definitions";
import { executionStub } from "../../src/worker/executions";
import { call, createUser, orkes } from "./auth-helpers";
import { ADMIN_KEY, api, apiOk, eventually, gate, hits, httpTask, register, startWorkflow, target, waitFor, waitForIndexRow, whilePreparing, type WorkflowJson } from "./helpers";

interface ErrorBody {
  status: number;
  error: string;
  message: string;
}

async function errorOf(method: string, path: string, body?: unknown): Promise<ErrorBody & { httpStatus: number }> {
  const response = await api(method, path, body);
  expect(response.headers.get("content-type")).toContain("application/json");
  return { httpStatus: response.status, ...((await response.json()) as ErrorBody) };
}

describe("Conductor endpoints the service does not serve", () => {
  it.each([
    ["GET", "/api/tasks/queue/all/nested", "task queue administration"],
    // Conductor 3.x's requeuePendingTask: named as what it is, with why nothing needs it, not as administration to come.
    ["POST", "/api/tasks/queue/requeue/encode", "requeueing a task type's pending tasks (none needs it"],
    ["GET", "/api/prompts", "AI prompts"],
    ["POST", "/api/event/handleIncomingEvent", "incoming events"],
    ["GET", "/api/scheduler/test/timeout", "the scheduler's test endpoints"],
    // The Orkes Java client's WorkflowResource.uploadCompletedWorkflows, UserResource.sendInviteEmail, SharedResource.
    ["POST", "/api/workflow/document-store/upload", "document store"],
    ["POST", "/api/users/ada@example.com/sendInviteEmail", "invitation e-mails"],
    ["GET", "/api/share/getSharedResources", "sharing resources"],
    // Not "no workflow (or task) externalstoragelocation".
    ["GET", "/api/workflow/externalstoragelocation?path=input.json&operation=WRITE&payloadType=WORKFLOW_INPUT", "external payload storage"],
    ["GET", "/api/tasks/externalstoragelocation?path=output.json&operation=WRITE&payloadType=TASK_OUTPUT", "external payload storage"],
    // Conductor's other spelling of both (swift-conductor's Go, TypeScript and .NET clients call it).
    ["GET", "/api/workflow/external-storage-location?path=input.json&operation=WRITE&payloadType=WORKFLOW_INPUT", "external payload storage"],
    ["GET", "/api/tasks/external-storage-location?path=output.json&operation=WRITE&payloadType=TASK_OUTPUT", "external payload storage"],
    // The JavaScript and Go clients' human task index rebuild: not a task of that id.
    ["GET", "/api/human/tasks/backPopulateFullTextIndex", "human task search index"],
    // Conductor's AdminResource beyond the sweeper and repair routes.
    ["GET", "/api/admin/config", "configuration"],
    ["GET", "/api/admin/task/encode?start=0&count=100", "pending tasks"],
    ["GET", "/api/admin/queues?verbose=true", "event queues"],
    // Orkes' AdminResource.getRedisUsage (the Python SDK's AdminResourceApi.get_redis_usage).
    // Each names where its answer is here: D1's size, the metrics a task's series are in, a scrape's credentials.
    ["GET", "/api/admin/redisUsage", "Redis usage (this service keeps no Redis: executions are Durable Objects, definitions are in D1; npx wrangler d1 info"],
    // Orkes' MetricsResource.prometheusTaskMetrics and MetricsTokenResource.token (the Python SDK's); GET /api/metrics is served.
    ["GET", "/api/metrics/task/encode?start=1&end=2&step=60", "Prometheus proxy of a task's metrics (this service's metrics are GET /api/metrics"],
    ["GET", "/api/metrics/token", "Orkes' metrics token (Prometheus scrapes GET /api/metrics with an application's API key"],
    // Conductor's QueueAdminResource beyond its task updates (conductor-sharp's QueueAdminService).
    ["GET", "/api/queue/size", "event queues"],
    ["GET", "/api/queue/names", "event queues"],
    // Conductor's QueueAdminResource.names() (@GetMapping("/") under /api/queue), which swift-conductor's clients call.
    ["GET", "/api/queue/", "event queues"],
    // Orkes' API Gateway, as the Go SDK's ApiGatewayResourceApiService (the Conductor CLI's api-gateway commands) calls it.
    ["GET", "/api/gateway/config/services", "the API Gateway"],
    ["POST", "/api/gateway/config/auth", "the API Gateway"],
    ["DELETE", "/api/gateway/config/services/orders/routes?method=GET&path=/orders", "the API Gateway"],
    // Conductor OSS's File API (conductor-oss/conductor docs/documentation/api/files.md): not "No route", whose 404
    // reads as a missing workflow or file.
    ["POST", "/api/files", "the File API"],
    ["GET", "/api/files/3a5b8c2d-1234-5678-9abc-def012345678/f1/download-url", "the File API"],
    ["PUT", "/api/files/content/3a5b8c2d-1234-5678-9abc-def012345678/f1", "the File API"],
    // Conductor OSS's Agents control plane and its provider and skill routes (docs/documentation/api/agents.md).
    ["POST", "/api/agent/start", "AI agents"],
    ["GET", "/api/agent/list", "AI agents"],
    ["GET", "/api/providers/status", "AI providers"],
    ["GET", "/api/skills", "AI agent skills"],
    ["POST", "/api/skills/register", "AI agent skills"],
  ])("%s %s answers 501 NOT_IMPLEMENTED naming the feature, in the contract's error shape", async (method, path, feature) => {
    const body = method === "POST" ? {} : undefined;
    const error = await errorOf(method, path, body);
    expect(error).toMatchObject({ httpStatus: 501, status: 501, error: "NOT_IMPLEMENTED" });
    expect(error.message).toContain(`${method} ${path.split("?")[0]} is a Conductor endpoint this service does not support yet`);
    expect(error.message).toContain(feature);
  });

  it("leaves a POST to the external storage paths to the start of the workflow of that name, as Conductor maps them for GET only", async () => {
    for (const name of ["externalstoragelocation", "external-storage-location"]) {
      await register({ name, tasks: [{ name: "noted", taskReferenceName: "noted", type: "SET_VARIABLE", inputParameters: { seen: true } }] });
      const workflowId = await apiOk<string>("POST", `/api/workflow/${name}`, {});
      expect(await waitFor(workflowId, ["COMPLETED"])).toMatchObject({ workflowName: name, variables: { seen: true } });
    }
  });

  // Netflix's Python client (polyglot-clients/python/conductor/conductor.py) still sends older Conductor's getTaskQueueSizes,
  // getTasksInQueue and removeTaskFromQueue; Conductor 3.x's TaskResource maps none of them: "not supported yet" would
  // suggest waiting for them.
  it.each([
    ["POST", "/api/tasks/queue/sizes", ["py_queue_task"], "use GET /api/tasks/queue/sizes?taskType=a&taskType=b"],
    ["GET", "/api/tasks/queue/py_queue_task", undefined, "GET /api/tasks/search?query=taskType="],
    ["DELETE", "/api/tasks/queue/4f1c2a9e-0000-4000-8000-000000000001", undefined, "no route takes a task out of its queue"],
    ["DELETE", "/api/tasks/queue/py_queue_task/4f1c2a9e-0000-4000-8000-000000000001", undefined, "no route takes a task out of its queue"],
    // Conductor 3.0's release notes list both among its removed APIs; 2.x's Java client and the Ruby SDK call the first.
    ["GET", "/api/tasks/in_progress/py_queue_task", undefined, "GET /api/tasks/search?query=taskType="],
    ["POST", "/api/tasks/queue/requeue", undefined, "nothing needs requeueing"],
  ])("%s %s, an older Conductor route 3.x removed, answers 501 saying so and naming what replaces it", async (method, path, body, replacement) => {
    const error = await errorOf(method, path, body);
    expect(error).toMatchObject({ httpStatus: 501, status: 501, error: "NOT_IMPLEMENTED" });
    expect(error.message).toContain(`${method} ${path} is an older Conductor endpoint that Conductor 3.x removed: `);
    expect(error.message).toContain(replacement);
    expect(error.message).not.toContain("not support yet");
  });

  it("still answers 404 for a path that is no Conductor endpoint at all", async () => {
    expect(await errorOf("GET", "/api/no-such-thing")).toMatchObject({ httpStatus: 404, error: "NOT_FOUND" });
    expect(await errorOf("GET", "/api/metadata/no-such-thing/x/y")).toMatchObject({ httpStatus: 404, error: "NOT_FOUND" });
  });
});

describe("rerun without reRunFromTaskId (WorkflowExecutor.reRun's default body is {})", () => {
  it("runs the whole finished workflow again from its first task, with the new input and correlation id", async () => {
    await register({
      name: "client_rerun_all",
      tasks: [httpTask("a", { uri: target("/count/client-rerun-a?tag=${workflow.input.tag}"), method: "GET" }), httpTask("b", { uri: target("/count/client-rerun-b"), method: "GET" })],
      outputParameters: { tag: "${a.output.response.body.query.tag}" },
    });
    const workflowId = await startWorkflow("client_rerun_all", { tag: "first" }, "?correlationId=before");
    const first = await waitFor(workflowId, ["COMPLETED"]);

    expect(await apiOk<string>("POST", `/api/workflow/${workflowId}/rerun`, {})).toBe(workflowId);
    const again = await waitFor(workflowId, (workflow) => workflow.status === "COMPLETED" && workflow.tasks[0]!.taskId !== first.tasks[0]!.taskId);
    expect(again.tasks.map((task) => task.referenceTaskName)).toEqual(["a", "b"]);
    expect(again.output).toEqual({ tag: "first" });
    expect(await hits("client-rerun-a")).toBe(2);

    await apiOk("POST", `/api/workflow/${workflowId}/rerun`, { workflowInput: { tag: "second" }, correlationId: "after" });
    const third = await waitFor(workflowId, (workflow) => workflow.status === "COMPLETED" && workflow.output["tag"] === "second");
    expect(third).toMatchObject({ input: { tag: "second" }, correlationId: "after" });
    expect(await hits("client-rerun-b")).toBe(3);
    const search = () => apiOk<{ totalHits: number; results: Array<{ workflowId: string }> }>("GET", "/api/workflow/search?correlationId=after");
    const found = await eventually(search, (result) => result.totalHits > 0, "search by the new correlation id");
    expect(found.results.map((summary) => summary.workflowId)).toEqual([workflowId]);
  });

  it("still refuses a running workflow with 409", async () => {
    await register({ name: "client_rerun_running", tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })] });
    const workflowId = await startWorkflow("client_rerun_running");
    expect(await errorOf("POST", `/api/workflow/${workflowId}/rerun`, {})).toMatchObject({ httpStatus: 409, error: "CONFLICT" });
  });
});

describe("validation errors (the client shows only `message`)", () => {
  it("names the first problem and how many more there are in the message, and keeps validationErrors", async () => {
    const response = await api("POST", "/api/metadata/workflow", {
      name: "client_invalid",
      schemaVersion: 2,
      tasks: [httpTask("bad", { http_request: { uri: "", method: "GET" } }), httpTask("worse", { http_request: { uri: "http://x.test", method: "FETCH" } })],
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorBody & { validationErrors: Array<{ path: string; message: string }> };
    expect(body.validationErrors.map((issue) => issue.path)).toEqual(["tasks[0].inputParameters.http_request.uri", "tasks[1].inputParameters.http_request.method"]);
    expect(body.message).toBe(`Invalid workflow definition: tasks[0].inputParameters.http_request.uri: ${body.validationErrors[0]!.message} (and 1 more in validationErrors)`);
    expect(body.validationErrors[0]!.message).toContain("uri must be");
  });

  it("names the single problem of a bad query parameter", async () => {
    expect((await errorOf("GET", "/api/workflow/search?size=-1")).message).toBe("Invalid query parameter size: size: must be an integer from 0 to 1000");
  });
});

describe("a bare id is text/plain;charset=UTF-8, as Conductor's Spring server writes it", () => {
  // swift-conductor's Go client (sdk/client/api_client.go) decodes a string answer only when its Content-Type
  // contains exactly this text; under any other spelling it returns an empty workflow or task id, and no error.
  it("answers starts, task updates and reruns so", async () => {
    await register({ name: "client_text_ids", tasks: [{ name: "client_text_work", taskReferenceName: "work", type: "SIMPLE" }] });
    const textOf = async (response: Response) => [response.status, response.headers.get("content-type"), await response.text()];

    const byName = await textOf(await api("POST", "/api/workflow/client_text_ids", {}));
    expect(byName[1]).toBe("text/plain;charset=UTF-8");
    const byRequest = await textOf(await api("POST", "/api/workflow", { name: "client_text_ids", input: {} }));
    expect(byRequest[1]).toBe("text/plain;charset=UTF-8");

    const task = await eventually(
      async () => (await api("GET", "/api/tasks/poll/client_text_work?workerid=w")).text(),
      (text) => text.length > 0,
      "a task of either start to poll",
    );
    const polled = JSON.parse(task) as { taskId: string; workflowInstanceId: string };
    const updated = await textOf(await api("POST", "/api/tasks", { workflowInstanceId: polled.workflowInstanceId, taskId: polled.taskId, status: "COMPLETED" }));
    expect(updated).toEqual([200, "text/plain;charset=UTF-8", polled.taskId]);
    await waitFor(polled.workflowInstanceId, ["COMPLETED"]);

    const rerun = await textOf(await api("POST", `/api/workflow/${polled.workflowInstanceId}/rerun`, {}));
    expect(rerun).toEqual([200, "text/plain;charset=UTF-8", polled.workflowInstanceId]);
    const byRef = await textOf(await api("POST", `/api/tasks/${polled.workflowInstanceId}/work/COMPLETED`, {}));
    expect(byRef[0]).toBe(200);
    expect(byRef[1]).toBe("text/plain;charset=UTF-8");
  });
});

describe("GET /api/version (Conductor's and Orkes' VersionResource; the SDKs' VersionResourceApi.getVersion)", () => {
  it("answers the service's version as text/plain to any authenticated caller, and only to one", async () => {
    const version = await api("GET", "/api/version");
    expect([version.status, version.headers.get("content-type")]).toEqual([200, "text/plain;charset=UTF-8"]);
    expect(await version.text()).toMatch(/^\d+\.\d+\.\d+/);
    // A caller holding no permission reads it too: it says nothing of any workflow or task.
    const nobody = await createUser("version-reader");
    expect((await call("GET", "/api/version", orkes(nobody.token))).status).toBe(200);
    expect((await call("GET", "/api/version", {})).status).toBe(401);
  });
});

describe("GET /api/health (Conductor's HealthCheckResource at /health and /api/health; the SDKs' HealthCheckResourceApi.doCheck)", () => {
  it("answers Conductor's HealthCheckStatus to any authenticated caller under /api, and only to one", async () => {
    const health = await api("GET", "/api/health");
    expect([health.status, health.headers.get("content-type")]).toEqual([200, "application/json"]);
    expect(await health.json()).toEqual({ healthResults: [], suppressedHealthResults: [], healthy: true });
    // A caller holding no permission reads it too: it says only that the server answers.
    const nobody = await createUser("health-reader");
    expect((await call("GET", "/api/health", orkes(nobody.token))).status).toBe(200);
    // Only GET /health is open (the contract's), with its own answer.
    expect((await call("GET", "/api/health", {})).status).toBe(401);
    expect(await (await call("GET", "/health", {})).json()).toEqual({ status: "ok" });
  });
});

describe("GET /api/workflow/{id}/status (WorkflowExecutor.getWorkflowStatus)", () => {
  it("answers Orkes' WorkflowStatus, with output and variables only when asked for", async () => {
    await register({ name: "client_status", tasks: [httpTask("a", { uri: target("/count/client-status"), method: "GET" })], outputParameters: { n: "${a.output.response.body.n}" } });
    const workflowId = await startWorkflow("client_status", {}, "?correlationId=status-check");
    await waitFor(workflowId, ["COMPLETED"]);
    expect(await apiOk("GET", `/api/workflow/${workflowId}/status`)).toEqual({ workflowId, correlationId: "status-check", status: "COMPLETED" });
    expect(await apiOk("GET", `/api/workflow/${workflowId}/status?includeOutput=true&includeVariables=true`)).toEqual({
      workflowId,
      correlationId: "status-check",
      status: "COMPLETED",
      output: { n: 1 },
      variables: {},
    });
    expect(await errorOf("GET", `/api/workflow/${crypto.randomUUID()}/status`)).toMatchObject({ httpStatus: 404, error: "NOT_FOUND" });
  });
});

describe("GET /api/workflow/{id}/size (Orkes' workflow size)", () => {
  it("answers the task data stored against MAX_EXECUTION_BYTES, growing with each task; 404 for an unknown workflow", async () => {
    await register({ name: "client_size", tasks: [httpTask("a", { uri: target("/echo/client-size?pad=" + "x".repeat(2000)), method: "GET" }), { name: "hold", taskReferenceName: "hold", type: "WAIT" }] });
    await register({ name: "client_size_small", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT" }] });
    type Size = { sizeBytes: number; limitBytes: number; ratio: number };
    const sizeOf = async (name: string) => {
      const workflowId = await startWorkflow(name);
      await waitFor(workflowId, (workflow) => workflow.tasks.at(-1)?.taskType === "WAIT");
      return apiOk<Size>("GET", `/api/workflow/${workflowId}/size`);
    };
    const small = await sizeOf("client_size_small");
    const after = await sizeOf("client_size");
    expect(after.limitBytes).toBe(10 * 1024 * 1024);
    // The padded URL is stored in the HTTP task's input and in its echoed output.
    expect(small.sizeBytes).toBeGreaterThan(0);
    expect(after.sizeBytes).toBeGreaterThan(small.sizeBytes + 4000);
    expect(after.ratio).toBe(after.sizeBytes / after.limitBytes);
    expect(await errorOf("GET", `/api/workflow/${crypto.randomUUID()}/size`)).toMatchObject({ httpStatus: 404, error: "NOT_FOUND" });
  });
});

describe("Orkes' idempotency headers of a start by name (X-Idempotency-key, X-on-conflict), as the Python client sends them", () => {
  it("answer the execution holding the key, or refuse as the strategy says; a bad strategy starts nothing", async () => {
    await register({ name: "client_headers_once", tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })] });
    const startWith = (headers: Record<string, string>) => call("POST", "/api/workflow/client_headers_once", { "x-api-key": ADMIN_KEY, ...headers }, { n: 1 });
    const first = await startWith({ "X-Idempotency-key": "order-42" });
    expect(first.status).toBe(200);
    const firstId = await first.text();
    const again = await startWith({ "X-Idempotency-key": "order-42", "X-on-conflict": "RETURN_EXISTING" });
    expect(await again.text()).toBe(firstId);
    expect((await startWith({ "X-Idempotency-key": "order-42", "X-on-conflict": "FAIL" })).status).toBe(409);
    const searched = () => env.DB.prepare("SELECT COUNT(*) AS n FROM executions WHERE workflow_name = 'client_headers_once'").first<{ n: number }>();
    const bad = await startWith({ "X-Idempotency-key": "order-43", "X-on-conflict": "SOMETIMES" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path)).toEqual(["idempotencyStrategy"]);
    // Without a key, each start is its own.
    const other = await startWith({});
    expect(await other.text()).not.toBe(firstId);
    expect(await eventually(searched, (row) => row?.n === 2, "both executions indexed")).toEqual({ n: 2 });
  });
});

describe("idempotencyStrategy FAIL_ON_RUNNING (StartWorkflowRequest)", () => {
  it("refuses while the execution holding the key runs, and starts a new one once it has finished", async () => {
    await register({ name: "client_once", tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })] });
    const request = { name: "client_once", idempotencyKey: "order-17", idempotencyStrategy: "FAIL_ON_RUNNING" };
    const first = await apiOk<string>("POST", "/api/workflow", request);
    await waitFor(first, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    const running = await errorOf("POST", "/api/workflow", request);
    expect(running).toMatchObject({ httpStatus: 409, error: "CONFLICT" });
    expect(running.message).toContain(first);
    // Conductor's words, which its clients' tests look for.
    expect(running.message).toContain("Workflow with the idempotency key order-17 already exists");

    await apiOk("POST", `/api/tasks/${first}/gate/COMPLETED`, {});
    await waitFor(first, ["COMPLETED"]);
    const second = await apiOk<string>("POST", "/api/workflow", request);
    expect(second).not.toBe(first);
    expect((await waitFor(second, (workflow) => workflow.tasks.length === 1)).status).toBe("RUNNING");
    // The key now belongs to the new execution: RETURN_EXISTING answers it, FAIL_ON_RUNNING refuses again.
    expect(await apiOk<string>("POST", "/api/workflow", { ...request, idempotencyStrategy: "RETURN_EXISTING" })).toBe(second);
    expect(await errorOf("POST", "/api/workflow", request)).toMatchObject({ httpStatus: 409 });
  });

  it("starts a new execution right after the one holding the key was removed (the removal released the key)", async () => {
    await register({ name: "client_once_removed", tasks: [httpTask("a", { uri: target("/count/client-once-removed"), method: "GET" })] });
    const request = { name: "client_once_removed", idempotencyKey: "k", idempotencyStrategy: "FAIL_ON_RUNNING" };
    const first = await apiOk<string>("POST", "/api/workflow", request);
    await waitFor(first, ["COMPLETED"]);
    await apiOk("DELETE", `/api/workflow/${first}/remove`);
    const second = await apiOk<string>("POST", "/api/workflow", request);
    expect(second).not.toBe(first);
    expect((await waitFor(second, ["COMPLETED"])).tasks).toHaveLength(1);
  });

  it.each(["FAIL_ON_RUNNING", "FAIL"])("%s takes over at once a key claimed by a start that never happened: a 409 says an execution holds the key, never a start that may not come", async (strategy) => {
    const name = `client_once_dead_claim_${strategy.toLowerCase()}`;
    await register({ name, tasks: [httpTask("a", { uri: target(`/count/${name}`), method: "GET" })] });
    const request = { name, idempotencyKey: "k", idempotencyStrategy: strategy };
    // A claimer that died between claiming the key and starting its execution, or whose start failed (a client sent
    // the start again after its 503, with the same key, and was told it already existed: nothing ever ran).
    const dead = crypto.randomUUID();
    await env.DB.prepare("INSERT INTO idempotency_keys (workflow_name, idempotency_key, workflow_id, create_time) VALUES (?, ?, ?, ?)").bind(name, "k", dead, Date.now()).run();
    const second = await apiOk<string>("POST", "/api/workflow", request);
    expect(second).not.toBe(dead);
    expect((await waitFor(second, ["COMPLETED"])).tasks).toHaveLength(1);
    // The key is the new execution's now: FAIL refuses it even finished, FAIL_ON_RUNNING starts another.
    if (strategy === "FAIL") expect((await errorOf("POST", "/api/workflow", request)).message).toContain(`${second} was already started`);
    else expect(await apiOk<string>("POST", "/api/workflow", request)).not.toBe(second);
  });

  it.each(["FAIL_ON_RUNNING", "FAIL"])("%s taking over a claim with nothing started fences the claimer's start off: one that comes after all is refused, not run beside the new execution", async (strategy) => {
    const name = `client_once_late_claim_${strategy.toLowerCase()}`;
    await register({ name, tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })] });
    const request = { name, idempotencyKey: "k", idempotencyStrategy: strategy };
    // A claimer whose start is still on its way (a stalled request).
    const late = crypto.randomUUID();
    await env.DB.prepare("INSERT INTO idempotency_keys (workflow_name, idempotency_key, workflow_id, create_time) VALUES (?, ?, ?, ?)").bind(name, "k", late, Date.now()).run();
    const taken = await apiOk<string>("POST", "/api/workflow", request);
    expect(taken).not.toBe(late);
    // The late start arrives: the key is no longer its own, and the execution the key went to runs.
    const definition = await new DefinitionRepository(env.DB).get(name);
    const arrived = await executionStub(env, late).start({ workflowId: late, definition, input: {}, idempotencyKey: "k" });
    expect(arrived).toMatchObject({ ok: false, error: { kind: "CONFLICT" } });
    expect((await errorOf("GET", `/api/workflow/${late}`)).httpStatus).toBe(404);
    expect((await waitFor(taken, (workflow) => workflow.tasks.length === 1)).status).toBe("RUNNING");
    expect(await apiOk<string>("POST", "/api/workflow", { ...request, idempotencyStrategy: "RETURN_EXISTING" })).toBe(taken);
  });

  it("FAIL_ON_RUNNING finding the key still naming an execution just removed takes it over, and the removed id's tombstone keeps saying it was removed", async () => {
    const name = "client_once_removed_fence";
    await register({ name, tasks: [httpTask("a", { uri: target(`/count/${name}`), method: "GET" })] });
    const request = { name, idempotencyKey: "k", idempotencyStrategy: "FAIL_ON_RUNNING" };
    const removed = await apiOk<string>("POST", "/api/workflow", request);
    await waitFor(removed, ["COMPLETED"]);
    await apiOk("DELETE", `/api/workflow/${removed}/remove`);
    // The key as it was an instant before the removal's release reached D1.
    await env.DB.prepare("INSERT INTO idempotency_keys (workflow_name, idempotency_key, workflow_id, create_time) VALUES (?, ?, ?, ?)").bind(name, "k", removed, Date.now()).run();
    const taken = await apiOk<string>("POST", "/api/workflow", request);
    expect(taken).not.toBe(removed);
    const definition = await new DefinitionRepository(env.DB).get(name);
    const late = await executionStub(env, removed).start({ workflowId: removed, definition, input: {}, idempotencyKey: "k" });
    expect(late).toMatchObject({ ok: false, error: { kind: "CONFLICT", message: `Workflow ${removed} was removed; start the workflow again for a new execution` } });
  });

  it("a RETURN_EXISTING start whose execution was fenced off before its start landed answers the execution the key went to", async () => {
    const name = "client_once_fenced_return";
    await register({ name, tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })] });
    const taken = await apiOk<string>("POST", "/api/workflow", { name, idempotencyKey: "k", idempotencyStrategy: "FAIL" });
    // The start read the key while it named a claim with nothing started, which a FAIL start (`taken`) then fenced off.
    const fenced = crypto.randomUUID();
    expect(await executionStub(env, fenced).abandonStart()).toBeNull();
    const claimRead = "SELECT workflow_id FROM idempotency_keys WHERE workflow_name = ? AND idempotency_key = ?";
    let reads = 0;
    const readFenced = (sql: string, prepare: (sql: string) => D1PreparedStatement) =>
      sql === claimRead && reads++ === 0 ? prepare(`SELECT '${fenced}' AS workflow_id WHERE ? IS NOT NULL AND ? IS NOT NULL`) : prepare(sql);
    const answer = await whilePreparing(readFenced, () => api("POST", "/api/workflow", { name, idempotencyKey: "k" }));
    expect(reads).toBeGreaterThan(1);
    expect([answer.status, await answer.text()]).toEqual([200, taken]);
    expect((await errorOf("GET", `/api/workflow/${fenced}`)).httpStatus).toBe(404);
  });

  it.each(["RETURN_EXISTING", "FAIL", "FAIL_ON_RUNNING"])("%s finding the key still naming a claim fenced off by a start that never moved the key (it died after the fence) takes the key over: not a 409 for an hour", async (strategy) => {
    const name = `client_once_fenced_stuck_${strategy.toLowerCase()}`;
    await register({ name, tasks: [httpTask("a", { uri: target(`/count/${name}`), method: "GET" })] });
    const fenced = crypto.randomUUID();
    await env.DB.prepare("INSERT INTO idempotency_keys (workflow_name, idempotency_key, workflow_id, create_time) VALUES (?, ?, ?, ?)").bind(name, "k", fenced, Date.now()).run();
    expect(await executionStub(env, fenced).abandonStart()).toBeNull();
    const started = await apiOk<string>("POST", "/api/workflow", { name, idempotencyKey: "k", idempotencyStrategy: strategy });
    expect(started).not.toBe(fenced);
    expect((await waitFor(started, ["COMPLETED"])).tasks).toHaveLength(1);
    expect(await apiOk<string>("POST", "/api/workflow", { name, idempotencyKey: "k" })).toBe(started);
    expect((await errorOf("GET", `/api/workflow/${fenced}`)).httpStatus).toBe(404);
  });

  it("a FAIL start whose compare-and-set lost to another start's answers a 409 naming the execution the key went to, not the claim given up", async () => {
    const name = "client_once_cas_lost";
    await register({ name, tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })] });
    const winner = await apiOk<string>("POST", "/api/workflow", { name, idempotencyKey: "k", idempotencyStrategy: "FAIL" });
    // The start read the key while it named a claim with nothing started, which another FAIL start (`winner`) took first.
    const given = crypto.randomUUID();
    const claimRead = "SELECT workflow_id FROM idempotency_keys WHERE workflow_name = ? AND idempotency_key = ?";
    let reads = 0;
    const readGiven = (sql: string, prepare: (sql: string) => D1PreparedStatement) =>
      sql === claimRead && reads++ === 0 ? prepare(`SELECT '${given}' AS workflow_id WHERE ? IS NOT NULL AND ? IS NOT NULL`) : prepare(sql);
    const refused = await whilePreparing(readGiven, () => errorOf("POST", "/api/workflow", { name, idempotencyKey: "k", idempotencyStrategy: "FAIL" }));
    expect([refused.httpStatus, refused.message]).toEqual([409, `Workflow with the idempotency key k already exists: ${name} ${winner} was just started by another request`]);
    expect(await apiOk<string>("POST", "/api/workflow", { name, idempotencyKey: "k" })).toBe(winner);
  });
});

describe("idempotencyStrategy RETURN_EXISTING (StartWorkflowRequest)", () => {
  it("after the keyed execution was removed, a start with the key is a new execution with a new id, never a second run under the removed id", async () => {
    await register({ name: "client_key_removed", tasks: [httpTask("a", { uri: target("/count/client-key-removed"), method: "GET" })] });
    const request = { name: "client_key_removed", idempotencyKey: "k", input: { n: 1 } };
    const first = await apiOk<string>("POST", "/api/workflow", request);
    await waitFor(first, ["COMPLETED"]);
    await apiOk("DELETE", `/api/workflow/${first}/remove`);
    // The removal released the key with the execution.
    expect(await env.DB.prepare("SELECT workflow_id FROM idempotency_keys WHERE workflow_name = ?").bind("client_key_removed").first()).toBeNull();
    const second = await apiOk<string>("POST", "/api/workflow", { ...request, input: { n: 2 } });
    expect(second).not.toBe(first);
    expect((await waitFor(second, ["COMPLETED"])).input).toEqual({ n: 2 });
    expect((await errorOf("GET", `/api/workflow/${first}`)).httpStatus).toBe(404);
    // The key now belongs to the new execution.
    expect(await apiOk<string>("POST", "/api/workflow", request)).toBe(second);
    expect(await hits("client-key-removed")).toBe(2);
  });
  it("takes a number or boolean key as its text, as Jackson reads the String field (the Python client sends an int as it is)", async () => {
    await register({ name: "client_key_number", tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })] });
    const first = await apiOk<string>("POST", "/api/workflow", { name: "client_key_number", idempotencyKey: 42 });
    // The same key, as text or as the number again, through the body or Orkes' header.
    expect(await apiOk<string>("POST", "/api/workflow", { name: "client_key_number", idempotencyKey: "42" })).toBe(first);
    expect(await apiOk<string>("POST", "/api/workflow", { name: "client_key_number", idempotencyKey: 42 })).toBe(first);
    const byHeader = await call("POST", "/api/workflow/client_key_number", { "x-api-key": ADMIN_KEY, "X-Idempotency-key": "42" }, {});
    expect(await byHeader.text()).toBe(first);
    expect((await waitFor(first, (workflow) => workflow.tasks.length === 1))["idempotencyKey"]).toBe("42");
    const flagged = await apiOk<string>("POST", "/api/workflow", { name: "client_key_number", idempotencyKey: true });
    expect(flagged).not.toBe(first);
    expect(await apiOk<string>("POST", "/api/workflow", { name: "client_key_number", idempotencyKey: "true" })).toBe(flagged);
    // An object or array is no key, as Jackson refuses it; nor is an integer past 2^53, which reached us without some of
    // its digits (12345678901234567890 and …891 would be one key): a 400, nothing claimed.
    for (const key of ['{"id":1}', "[1]", "12345678901234567890"]) {
      const refused = await api("POST", "/api/workflow", `{"name":"client_key_number","idempotencyKey":${key}}`);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path)).toEqual(["idempotencyKey"]);
    }
    const keys = await env.DB.prepare("SELECT idempotency_key FROM idempotency_keys WHERE workflow_name = ? ORDER BY idempotency_key").bind("client_key_number").all();
    expect(keys.results.map((row) => row["idempotency_key"])).toEqual(["42", "true"]);
  });
});

describe("StartWorkflowRequest.workflowDef (an inline definition)", () => {
  it("runs the definition given, not the one registered under its name, and keeps it with the execution", async () => {
    await register({ name: "client_inline", tasks: [httpTask("a", { uri: target("/count/client-inline"), method: "GET" })] });
    const inline = { name: "client_inline", version: 7, tasks: [httpTask("other", { uri: target("/count/client-inline-other"), method: "GET" })], outputParameters: { n: "${other.output.response.body.n}" } };
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "client_inline", workflowDef: inline, input: { x: 1 } });
    const done = await waitFor(workflowId, ["COMPLETED"]);
    expect(done).toMatchObject({ workflowName: "client_inline", workflowVersion: 7, input: { x: 1 }, output: { n: 1 } });
    expect(done.tasks.map((task) => task.referenceTaskName)).toEqual(["other"]);
    expect(await hits("client-inline")).toBe(0);
    // The name may be left to the definition; a restart runs the kept definition again (nothing is registered under version 7).
    const unnamed = await apiOk<string>("POST", "/api/workflow", { workflowDef: inline });
    await waitFor(unnamed, ["COMPLETED"]);
    await apiOk("POST", `/api/workflow/${unnamed}/restart`, undefined, 204);
    expect((await waitFor(unnamed, ["COMPLETED"])).output).toEqual({ n: 3 });
    expect(await hits("client-inline")).toBe(0);
  });

  it("answers the run of an inline definition through execute, whose path must name it", async () => {
    const inline = { name: "client_inline_exec", tasks: [httpTask("a", { uri: target("/count/client-inline-exec"), method: "GET" })], outputParameters: { n: "${a.output.response.body.n}" } };
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/client_inline_exec/1", { workflowDef: inline });
    expect(run).toMatchObject({ status: "COMPLETED", workflowName: "client_inline_exec", output: { n: 1 } });
    const mismatch = await errorOf("POST", "/api/workflow/execute/other_name/1", { workflowDef: inline });
    expect(mismatch).toMatchObject({ httpStatus: 400, error: "VALIDATION_ERROR" });
    expect(await hits("client-inline-exec")).toBe(1);
  });

  it("refuses an invalid definition with a 400 naming the field, and starts nothing", async () => {
    const counted = (ref: string) => httpTask(ref, { uri: target("/count/client-inline-refused"), method: "GET" });
    const invalid = await api("POST", "/api/workflow", { workflowDef: { name: "client_inline_bad", tasks: [counted("a"), { name: "b", taskReferenceName: "a", type: "INLINE", inputParameters: {} }] } });
    expect(invalid.status).toBe(400);
    const problems = ((await invalid.json()) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors;
    expect(problems.length).toBeGreaterThan(0);
    for (const problem of problems) expect(problem.path).toMatch(/^workflowDef\.tasks\[1\]/);
    expect(await errorOf("POST", "/api/workflow", { workflowDef: { tasks: [counted("a")] } })).toMatchObject({ httpStatus: 400 });
    expect(await errorOf("POST", "/api/workflow", { workflowDef: "client_inline_bad" })).toMatchObject({ httpStatus: 400 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await hits("client-inline-refused")).toBe(0);
  });

  it("starts the definition's name when the request names another, as Conductor runs the workflowDef it is given; rights are those of the definition's name", async () => {
    // elisherer/conductor-nodejs-worker's README starts its test workflow so.
    const inline = { name: "client_inline_named", tasks: [httpTask("a", { uri: target("/count/client-inline-named"), method: "GET" })] };
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "adhoc_client_inline_named", workflowDef: inline, input: { x: 1 } });
    expect(await waitFor(workflowId, ["COMPLETED"])).toMatchObject({ workflowName: "client_inline_named", input: { x: 1 } });
    // A caller who may register the definition but start only the name it gives is refused, and nothing runs: the
    // start right is checked on the name that starts.
    const other = await createUser("inline-other-name", {
      directPermissions: [
        { action: "WORKFLOW_ADMIN", scope: "workflow:adhoc_client_inline_named" },
        { action: "WORKFLOW_WRITE", scope: "workflow:client_inline_named" },
      ],
    });
    expect((await call("POST", "/api/workflow", orkes(other.token), { name: "adhoc_client_inline_named", workflowDef: inline })).status).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await hits("client-inline-named")).toBe(1);
  });

  it("needs the right to register the definition as well as to start it", async () => {
    const inline = { name: "client_inline_rbac", tasks: [httpTask("a", { uri: target("/count/client-inline-rbac"), method: "GET" })] };
    const starter = await createUser("inline-starter", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:client_inline_rbac" }] });
    const refused = await call("POST", "/api/workflow", orkes(starter.token), { workflowDef: inline });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as ErrorBody).message).toContain("WORKFLOW_WRITE on workflow:client_inline_rbac");
    // Register rights alone do not start it either.
    const writer = await createUser("inline-writer", { directPermissions: [{ action: "WORKFLOW_WRITE", scope: "workflow:client_inline_rbac" }] });
    expect((await call("POST", "/api/workflow", orkes(writer.token), { workflowDef: inline })).status).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await hits("client-inline-rbac")).toBe(0);
    const both = await createUser("inline-both", {
      directPermissions: [
        { action: "WORKFLOW_ADMIN", scope: "workflow:client_inline_rbac" },
        { action: "WORKFLOW_WRITE", scope: "workflow:client_inline_rbac" },
      ],
    });
    const started = await call("POST", "/api/workflow", orkes(both.token), { workflowDef: inline });
    expect(started.status).toBe(200);
    await waitFor(await started.text(), ["COMPLETED"]);
    expect(await hits("client-inline-rbac")).toBe(1);
  });
});

describe("POST /api/tasks/{workflowId}/{taskRefName}/{status}/sync (updateTaskSync)", () => {
  it("updates the pending task like the plain route and answers the Workflow JSON after the update", async () => {
    await register({ name: "client_sync", tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })], outputParameters: { by: "${gate.output.by}" } });
    const workflowId = await startWorkflow("client_sync");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    const response = await api("POST", `/api/tasks/${workflowId}/gate/COMPLETED/sync`, { by: "sync" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    const workflow = (await response.json()) as WorkflowJson;
    expect(workflow).toMatchObject({ workflowId, status: "COMPLETED", output: { by: "sync" } });
    expect(workflow.tasks).toHaveLength(1);
    expect(workflow.tasks[0]).toMatchObject({ taskId: waiting.tasks[0]!.taskId, status: "COMPLETED", outputData: { by: "sync" } });
    expect(await errorOf("POST", `/api/tasks/${workflowId}/gate/COMPLETED/sync`, {})).toMatchObject({ httpStatus: 409, error: "CONFLICT" });
  });
});

describe("WAIT_FOR_WEBHOOK with Orkes webhook matches (waitForWebhookTask({matches}))", () => {
  it("registers as the official client builds it (was a 400), and an event sent to a webhook completes it", async () => {
    // What waitForWebhookTask("hook", {matches}) builds: the matches spread over inputParameters.
    const hook = { name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: { "$['event']['type']": "order.paid", "$.order": "${workflow.input.order}" } };
    await register({ name: "client_matches", schemaVersion: 2, tasks: [hook] });
    const webhook = await apiOk<{ id: string }>("POST", "/api/metadata/webhook", { name: "client-matches", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { client_matches: 1 } });
    const workflowId = await startWorkflow("client_matches", { order: "o-7" });
    await eventually(
      async () => (await env.DB.prepare(`SELECT count(*) AS n FROM webhook_waits WHERE workflow_id = ?`).bind(workflowId).first<{ n: number }>())!.n,
      (rows) => rows === 1,
      "the task's routing row",
    );
    const event = { event: { type: "order.paid" }, order: "o-7" };
    const response = await SELF.fetch(`https://conductor.test/webhook/${webhook.id}`, { method: "POST", headers: { "content-type": "application/json", "X-Token": "t" }, body: JSON.stringify(event) });
    expect(response.status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).tasks[0]!.outputData).toEqual(event);
  });
});

describe("the 501 routes and the signal routes, registered before the task routes, shadow none of them", () => {
  it("still delivers the webhook callback of a task whose reference name is \"signal\"", async () => {
    await register({ name: "client_signal_ref", tasks: [{ name: "signal", taskReferenceName: "signal", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] });
    const workflowId = await startWorkflow("client_signal_ref");
    const waiting = await waitFor(workflowId, (workflow) => typeof workflow.tasks[0]?.["callbackUrl"] === "string");
    const callback = new URL(String(waiting.tasks[0]!["callbackUrl"])).pathname;
    expect(callback).toBe(`/api/tasks/webhook/${workflowId}/signal/${waiting.tasks[0]!.taskId}`);
    const response = await api("POST", callback, { status: "COMPLETED", output: { via: "signal" } });
    expect(response.status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ via: "signal" });
  });
});

describe("POST /api/workflow/execute/{name}/{version}?requestId= (executeWorkflow's WorkflowRun)", () => {
  it("echoes the requestId beside the Workflow JSON, and makes a random one when none was sent (as Orkes); takes the idempotency headers", async () => {
    await register({ name: "client_execute", tasks: [httpTask("a", { uri: target("/count/client-execute"), method: "GET" })], outputParameters: { n: "${a.output.response.body.n}" } });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/client_execute/1?requestId=req-1", { input: {} });
    expect(run).toMatchObject({ requestId: "req-1", status: "COMPLETED", output: { n: 1 }, workflowName: "client_execute" });
    const plain = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/client_execute/1", { input: {} });
    expect(plain).toMatchObject({ status: "COMPLETED", output: { n: 2 } });
    expect(plain["requestId"]).toMatch(/^[0-9a-f-]{36}$/);
    const again = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/client_execute/1", { input: {} });
    expect(again["requestId"]).not.toBe(plain["requestId"]);
    // Orkes' idempotency headers: a second call with the key answers the first execution.
    const keyed = async () => (await call("POST", "/api/workflow/execute/client_execute/1", { "x-api-key": ADMIN_KEY, "X-Idempotency-key": "exec-key-1", "X-on-conflict": "RETURN_EXISTING" }, { input: {} })).json() as Promise<WorkflowJson>;
    const first = await keyed();
    expect((await keyed()).workflowId).toBe(first.workflowId);
    expect(await hits("client-execute")).toBe(4);
  });
});

describe("SUB_WORKFLOW with an inline child definition (ConductorWorkflow.toSubWorkflowTask())", () => {
  const childTask = (key: string) => httpTask("call", { uri: target(`/count/${key}?n=\${workflow.input.n}`), method: "GET" });
  const inlineParent = (name: string, child: unknown, extra: Record<string, unknown> = {}) => ({
    name,
    schemaVersion: 2,
    tasks: [{ name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "client_inline_child", version: 1, workflowDefinition: child }, inputParameters: { n: "${workflow.input.n}" }, ...extra }],
    outputParameters: { fromChild: "${child.output.got}" },
  });

  it("runs the child as its parent's definition holds it, its expressions resolved as the child's", async () => {
    const child = { name: "client_inline_child", version: 1, tasks: [childTask("client-inline-child")], outputParameters: { got: "${call.output.response.body.n}" } };
    await apiOk("POST", "/api/metadata/workflow?overwrite=true", inlineParent("client_inline_parent", child));
    // Nothing is registered under the child's name: the inline definition is what runs.
    expect((await api("GET", "/api/metadata/workflow/client_inline_child")).status).toBe(404);
    const workflowId = await startWorkflow("client_inline_parent", { n: 5 });
    const done = await waitFor(workflowId, ["COMPLETED"]);
    expect(done.output).toEqual({ fromChild: 1 });
    const childRun = await waitFor(String(done.tasks[0]!["subWorkflowId"]), ["COMPLETED"]);
    expect(childRun).toMatchObject({ workflowName: "client_inline_child", input: { n: 5 } });
    expect(childRun.tasks[0]!.inputData["uri"]).toBe(target("/count/client-inline-child?n=5"));
    // The parent's task input shows the child's name, not its whole definition.
    expect(done.tasks[0]!.inputData["subWorkflowParam"]).toEqual({ name: "client_inline_child", version: 1 });
  });

  it("is checked at registration as a definition of its own, with paths inside it; a second name or a place inside inputParameters is a 400", async () => {
    const problems = async (definition: unknown): Promise<string[]> => {
      const response = await api("POST", "/api/metadata/workflow", definition);
      expect(response.status).toBe(400);
      return ((await response.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path);
    };
    const badChild = { name: "client_inline_child", version: 1, tasks: [{ name: "x", taskReferenceName: "x", type: "HTTP", inputParameters: {} }] };
    expect(await problems(inlineParent("client_inline_bad", badChild))).toEqual(["tasks[0].subWorkflowParam.workflowDefinition.tasks[0].inputParameters.uri", "tasks[0].subWorkflowParam.workflowDefinition.tasks[0].inputParameters.method"]);
    const script = { name: "client_inline_child", version: 1, tasks: [{ name: "s", taskReferenceName: "s", type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression: "function ( {" } }] };
    expect(await problems(inlineParent("client_inline_bad", script))).toEqual(["tasks[0].subWorkflowParam.workflowDefinition.tasks[0].inputParameters.expression"]);
    const renamed = { name: "another_child", version: 1, tasks: [childTask("client-inline-renamed")] };
    expect(await problems(inlineParent("client_inline_bad", renamed))).toEqual(["tasks[0].subWorkflowParam.name"]);
    const inside = { name: "client_inline_bad", schemaVersion: 2, tasks: [{ name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "client_inline_child", workflowDefinition: { name: "client_inline_child", tasks: [childTask("x")] } } } }] };
    expect(await problems(inside)).toEqual(["tasks[0].inputParameters.subWorkflowParam.workflowDefinition"]);
    expect((await api("GET", "/api/metadata/workflow/client_inline_bad")).status).toBe(404);
  });
});

describe("the SDK's repeat after a token refresh (retryFetch drops the request's Content-Type)", () => {
  it("reads a JSON body sent without Content-Type as JSON; a body declared as something else is still a 415", async () => {
    await register({ name: "client_no_content_type", tasks: [httpTask("a", { uri: target("/count/client-no-content-type"), method: "GET" })] });
    // A byte body, so fetch adds no Content-Type of its own (a string body would get text/plain).
    const bytes = new TextEncoder().encode(JSON.stringify({ name: "client_no_content_type", input: { x: 1 } }));
    const started = await SELF.fetch("https://conductor.test/api/workflow", { method: "POST", headers: { "x-api-key": ADMIN_KEY }, body: bytes });
    expect(started.headers.get("content-type") ?? "").not.toContain("json");
    const workflowId = await started.text();
    expect(started.status, workflowId).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED"])).input).toEqual({ x: 1 });
    const declaredText = await SELF.fetch("https://conductor.test/api/workflow", { method: "POST", headers: { "x-api-key": ADMIN_KEY, "content-type": "text/plain" }, body: bytes });
    expect(declaredText.status).toBe(415);
  });
});

describe("absent fields are left out, as Conductor's JSON does (the SDK types them `field?: string`)", () => {
  it("a workflow without correlation id, parent or failure: no null in the Workflow JSON, its tasks, the status or the search summary", async () => {
    await register({ name: "client_no_nulls", tasks: [httpTask("a", { uri: target("/count/client-no-nulls"), method: "GET" })] });
    const workflowId = await startWorkflow("client_no_nulls");
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    const nullKeys = (value: Record<string, unknown>) => Object.keys(value).filter((key) => value[key] === null);
    expect(nullKeys(workflow)).toEqual([]);
    expect(workflow.tasks.flatMap((task) => nullKeys(task))).toEqual([]);
    expect(nullKeys(await apiOk("GET", `/api/workflow/${workflowId}/status`))).toEqual([]);
    const summary = await eventually(
      async () => {
        const page = await apiOk<{ results: Array<Record<string, unknown>> }>("GET", `/api/workflow/search?workflowName=client_no_nulls&status=COMPLETED`);
        return page.results.find((result) => result["workflowId"] === workflowId);
      },
      (found) => found !== undefined,
      "the completed execution in search",
    );
    expect(nullKeys(summary!)).toEqual([]);
    expect(summary).toMatchObject({ workflowId, status: "COMPLETED", endTime: expect.any(String) });
  });
});

describe("idempotencyStrategy RETURN_EXISTING racing a removal", () => {
  it("a start that read the key just before the removal released it does not run the removed id again", async () => {
    await register({ name: "client_key_race", tasks: [httpTask("only", { uri: target("/count/client-key-race"), method: "GET" })] });
    const key = `k-${crypto.randomUUID()}`;
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "client_key_race", idempotencyKey: key, input: {} });
    await waitFor(workflowId, ["COMPLETED"]);
    const held = gate();
    // RPC finds the object's methods on its class: the second start is held there, after it read the key row.
    const { start } = WorkflowExecution.prototype;
    let armed = true;
    WorkflowExecution.prototype.start = async function (this: WorkflowExecution, params) {
      if (params.workflowId === workflowId && armed) {
        armed = false;
        held.hit();
        await held.released;
      }
      return start.call(this, params);
    };
    try {
      const second = api("POST", "/api/workflow", { name: "client_key_race", idempotencyKey: key, input: {} });
      await held.reached;
      await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
      expect(await env.DB.prepare("SELECT workflow_id FROM idempotency_keys WHERE idempotency_key = ?").bind(key).first()).toBeNull();
      held.release();
      const answer = await second;
      expect(answer.status).toBe(409);
      expect((await api("GET", `/api/workflow/${workflowId}`)).status).toBe(404);
      expect(await hits("client-key-race")).toBe(1);
    } finally {
      WorkflowExecution.prototype.start = start;
      held.release();
    }
    // Started again, the key makes a new execution with a new id.
    const again = await apiOk<string>("POST", "/api/workflow", { name: "client_key_race", idempotencyKey: key, input: {} });
    expect(again).not.toBe(workflowId);
    await waitFor(again, ["COMPLETED"]);
  });
});

describe("fields Conductor's Java models read from the Workflow and Task JSON", () => {
  it("shows the idempotency key a workflow was started with, and each task's workflowPriority", async () => {
    await register({ name: "client_model_fields", tasks: [{ name: "gate", taskReferenceName: "gate", type: "WAIT", inputParameters: {} }] });
    const keyed = await apiOk<string>("POST", "/api/workflow", { name: "client_model_fields", idempotencyKey: `model-${crypto.randomUUID()}`, priority: 42 });
    const workflow = await waitFor(keyed, (run) => run.tasks[0]?.status === "IN_PROGRESS");
    expect(workflow["idempotencyKey"]).toMatch(/^model-/);
    expect(workflow.tasks[0]).toMatchObject({ workflowPriority: 42 });
    const unkeyed = await waitFor(await startWorkflow("client_model_fields"), (run) => run.tasks[0]?.status === "IN_PROGRESS");
    expect(unkeyed).not.toHaveProperty("idempotencyKey");
    expect(unkeyed.tasks[0]).toMatchObject({ workflowPriority: 0 });
  });
});

describe("fields a client sends as null", () => {
  it("read as absent in a start, a test run, a rerun, a skip and a state update, as Conductor's Jackson reads them", async () => {
    await register({ name: "null_fields", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT" }, { name: "after", taskReferenceName: "after", type: "WAIT" }] });
    const nulls = { correlationId: null, idempotencyKey: null, idempotencyStrategy: null, priority: null, taskToDomain: null, workflowDef: null };
    const started = await api("POST", "/api/workflow", { name: "null_fields", version: null, input: null, ...nulls });
    expect(started.status).toBe(200);
    const workflowId = await started.text();
    expect(await apiOk("GET", `/api/workflow/${workflowId}`)).toMatchObject({ workflowId, workflowVersion: 1, input: {}, priority: 0 });
    const tested = await api("POST", "/api/workflow/test", { name: "null_fields", input: null, taskRefToMockOutput: null, subWorkflowTestRequest: null, ...nulls });
    expect(tested.status).toBe(200);

    const updated = await api("POST", `/api/workflow/${workflowId}/state`, { taskReferenceName: "hold", variables: null, taskResult: { workflowInstanceId: null, taskId: null, status: "COMPLETED", outputData: { ok: true } } });
    expect(updated.status).toBe(200);
    expect(((await updated.json()) as WorkflowJson).tasks[0]).toMatchObject({ referenceTaskName: "hold", status: "COMPLETED", outputData: { ok: true } });
    expect((await api("PUT", `/api/workflow/${workflowId}/skiptask/after`, { taskInput: null, taskOutput: null })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    expect((await api("POST", `/api/workflow/${workflowId}/rerun`, { reRunFromTaskId: null, workflowInput: null, taskInput: null, correlationId: null })).status).toBe(200);
    expect((await apiOk<WorkflowJson>("GET", `/api/workflow/${workflowId}`)).status).toBe("RUNNING");
  });
});

describe("a correlationId sent as a number (Jackson reads it into Conductor's String field as its text)", () => {
  it("is that text in a start, the execute endpoint, a test run, a rerun and the correlation lookups; an object, array or integer past 2^53 is a 400", async () => {
    await register({ name: "client_corr_number", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT" }] });
    // The Python client sends an int order number as it is.
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "client_corr_number", correlationId: 1234 });
    expect(await apiOk<WorkflowJson>("GET", `/api/workflow/${workflowId}`)).toMatchObject({ correlationId: "1234" });
    const executed = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/client_corr_number/1", { correlationId: 99 });
    expect(executed.correlationId).toBe("99");
    expect(await apiOk<WorkflowJson>("POST", "/api/workflow/test", { name: "client_corr_number", correlationId: true })).toMatchObject({ correlationId: "true" });
    await waitForIndexRow(workflowId, "RUNNING", 10_000);
    const found = await apiOk<Record<string, WorkflowJson[]>>("POST", "/api/workflow/client_corr_number/correlated", [1234]);
    expect(found["1234"]!.map((workflow) => workflow.workflowId)).toEqual([workflowId]);
    const batch = await apiOk<Record<string, WorkflowJson[]>>("POST", "/api/workflow/correlated/batch", { workflowNames: ["client_corr_number"], correlationIds: [1234] });
    expect(batch["1234"]!.map((workflow) => workflow.workflowId)).toEqual([workflowId]);

    expect((await api("DELETE", `/api/workflow/${workflowId}`)).status).toBe(200);
    await waitFor(workflowId, ["TERMINATED"]);
    expect(await apiOk<string>("POST", `/api/workflow/${workflowId}/rerun`, { correlationId: 5678 })).toBe(workflowId);
    expect(await apiOk<WorkflowJson>("GET", `/api/workflow/${workflowId}`)).toMatchObject({ correlationId: "5678" });

    for (const path of ["/api/workflow", "/api/workflow/execute/client_corr_number/1", "/api/workflow/test"]) {
      for (const id of ['{"order":1}', "[1]", "12345678901234567890"]) {
        const refused = await api("POST", path, `{"name":"client_corr_number","correlationId":${id}}`);
        expect(refused.status).toBe(400);
        expect(((await refused.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path)).toEqual(["correlationId"]);
      }
    }
  });
});

describe("a path with a doubled slash (Netflix's Python client: base URL `http://localhost:8080/api/` + `/metadata/…`)", () => {
  it("is served as the path with single slashes, as Conductor's Tomcat reads it: a worker's whole round trip", async () => {
    // conductor.py joins "{baseURL}/{resource}/…", so every call of WFClientMgr() with its default base URL reads /api//….
    expect((await api("POST", "/api//metadata/taskdefs", [{ name: "py_slash_task", timeoutSeconds: 60, responseTimeoutSeconds: 60 }])).status).toBe(200);
    const definition = { name: "py_slash", version: 1, schemaVersion: 2, ownerEmail: "test@example.com", tasks: [{ name: "py_slash_task", taskReferenceName: "work", type: "SIMPLE", inputParameters: { n: "${workflow.input.n}" } }], outputParameters: { doubled: "${work.output.doubled}" } };
    expect((await api("POST", "/api//metadata/workflow?overwrite=true", definition)).status).toBe(200);
    expect(await apiOk("GET", "/api//metadata/workflow/py_slash")).toMatchObject({ name: "py_slash", version: 1 });

    const started = await api("POST", "/api//workflow/py_slash?version=1", { n: 21 }, { accept: "text/plain" });
    const workflowId = await started.text();
    expect(started.status, workflowId).toBe(200);
    const polled = await eventually(() => api("GET", "/api//tasks/poll/py_slash_task?workerid=py-host"), (response) => response.status === 200, "the task to be pollable");
    // The Python worker sends the polled task back as its TaskResult, with status and outputData set.
    const task = (await polled.json()) as JsonObject;
    const updated = await api("POST", "/api//tasks/", { ...task, status: "COMPLETED", outputData: { doubled: 42 }, logs: ["done"] }, { accept: "text/plain" });
    expect(await updated.text()).toBe(task["taskId"]);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).output).toEqual({ doubled: 42 });
    expect(await apiOk("GET", `/api//workflow/${workflowId}?includeTasks=False`)).toMatchObject({ workflowId, status: "COMPLETED" });
    expect(await apiOk("GET", `//api///tasks/${String(task["taskId"])}/log`)).toEqual([expect.objectContaining({ log: "done" })]);
  });

  it("is authorized as that path: no credentials is still a 401, and a path that is no route still a 404 naming it", async () => {
    const anonymous = await SELF.fetch("https://conductor.test/api//metadata/workflow", { method: "GET" });
    expect(anonymous.status).toBe(401);
    expect(await errorOf("GET", "/api//no-such-thing")).toMatchObject({ httpStatus: 404, message: "No route for GET /api/no-such-thing" });
  });
});
