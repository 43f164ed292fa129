import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, target, getWorkflow, register, startWorkflow, waitFor, waitForIndexRow, waitTask, type TaskJson, type WorkflowJson } from "./helpers";
import { pollOne, report, simpleTask } from "./task-worker-helpers";

// The REST examples of Conductor's published API reference (conductor-oss/conductor docs/documentation/api/*.md,
// docs.conductor-oss.org/documentation/api/…), sent as a user with curl would send them, each response compared with
// what the page prints: status, content type, body shape and field names, and the defaults its tables list. Where a page
// and Conductor's source disagree, the source is followed and the case says so.

const WORKFLOW_PAGE = "docs/documentation/api/workflow.md";
const TASK_PAGE = "docs/documentation/api/task.md";
const START_PAGE = "docs/documentation/api/startworkflow.md";
const BULK_PAGE = "docs/documentation/api/bulk.md";
const EVENT_PAGE = "docs/documentation/api/eventhandlers.md";

/** The response's status, media type (without parameters) and body text. */
async function sent(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; type: string; text: string }> {
  const response = await api(method, path, body, headers);
  return { status: response.status, type: (response.headers.get("content-type") ?? "").split(";")[0]!.trim(), text: await response.text() };
}

/** A workflow of one SIMPLE task `taskType` then a WAIT gate `gate_ref`, registered under `name`. */
async function registerWorkerThenGate(name: string, taskType: string): Promise<void> {
  await register({ name, tasks: [simpleTask(taskType, `${taskType}_ref`), waitTask("gate_ref")] });
}

describe(`published API: ${WORKFLOW_PAGE}`, () => {
  it("Start Workflow (starting-workflows.md's curl, accept text/plain): 200, the id as text/plain", async () => {
    await register({ name: "pubapi_start", tasks: [waitTask("gate_ref")] });
    const started = await sent("POST", "/api/workflow/pubapi_start", { service: "fedex" }, { accept: "text/plain" });
    expect(started.status).toBe(200);
    expect(started.type).toBe("text/plain");
    const workflow = await getWorkflow(started.text);
    expect(workflow.input).toEqual({ service: "fedex" });
  });

  it("Get Workflow by ID: includeTasks defaults to true; the page's fields", async () => {
    await registerWorkerThenGate("pubapi_get", "pubapi_get_task");
    const workflowId = await startWorkflow("pubapi_get", { orderId: "ORD-123" }, "?correlationId=order-123");
    const got = await sent("GET", `/api/workflow/${workflowId}`);
    expect([got.status, got.type]).toEqual([200, "application/json"]);
    const workflow = JSON.parse(got.text) as WorkflowJson;
    expect(workflow).toMatchObject({ workflowId, workflowName: "pubapi_get", workflowVersion: 1, status: "RUNNING", input: { orderId: "ORD-123" }, correlationId: "order-123" });
    expect(typeof workflow["startTime"]).toBe("number");
    expect(workflow.tasks).toHaveLength(1);
    expect(workflow.tasks[0]).toMatchObject({ taskType: "pubapi_get_task", referenceTaskName: "pubapi_get_task_ref", status: "SCHEDULED" });
    expect(typeof workflow.tasks[0]!.taskId).toBe("string");
  });

  it("Get Tasks for a Workflow: {totalHits, results}; count and status filter as the page's two curls", async () => {
    await register({ name: "pubapi_tasks", tasks: [...Array.from({ length: 17 }, (_, index): JsonObject => ({ name: `set_${index}`, taskReferenceName: `set_${index}`, type: "SET_VARIABLE", inputParameters: { [`v${index}`]: index } })), waitTask("gate_ref")] });
    const workflowId = await startWorkflow("pubapi_tasks");
    await waitFor(workflowId, (workflow) => workflow.tasks.length === 18);
    const firstTen = await apiOk<{ totalHits: number; results: TaskJson[] }>("GET", `/api/workflow/${workflowId}/tasks?count=10`);
    expect(firstTen.totalHits).toBe(18);
    expect(firstTen.results.map((task) => task.referenceTaskName)).toEqual(Array.from({ length: 10 }, (_, index) => `set_${index}`));
    // The page's default count: 15.
    expect((await apiOk<{ results: TaskJson[] }>("GET", `/api/workflow/${workflowId}/tasks`)).results).toHaveLength(15);
    expect(await apiOk("GET", `/api/workflow/${workflowId}/tasks?status=FAILED`)).toMatchObject({ totalHits: 0, results: [] });
    const inProgress = await apiOk<{ totalHits: number; results: TaskJson[] }>("GET", `/api/workflow/${workflowId}/tasks?status=IN_PROGRESS`);
    expect(inProgress.results.map((task) => task.referenceTaskName)).toEqual(["gate_ref"]);
  });

  it("Get Running Workflows (?version=1): a JSON array of ids", async () => {
    await register({ name: "pubapi_running", tasks: [waitTask("gate_ref")] });
    const workflowId = await startWorkflow("pubapi_running");
    // Listed from the search index, written just after the start.
    await waitForIndexRow(workflowId, "RUNNING");
    const running = await sent("GET", "/api/workflow/running/pubapi_running?version=1");
    expect([running.status, running.type]).toEqual([200, "application/json"]);
    expect(JSON.parse(running.text)).toEqual([workflowId]);
  });

  it("Get Workflows by Correlation ID, GET (includeClosed, includeTasks default false) and POST of many ids (a map)", async () => {
    await register({ name: "pubapi_corr", tasks: [waitTask("gate_ref")] });
    const open = await startWorkflow("pubapi_corr", {}, "?correlationId=order-123");
    const closed = await startWorkflow("pubapi_corr", {}, "?correlationId=order-123");
    await apiOk("DELETE", `/api/workflow/${closed}?reason=done`, undefined, 200);
    await waitForIndexRow(open, "RUNNING");
    await waitForIndexRow(closed, "TERMINATED");
    const byDefault = await apiOk<WorkflowJson[]>("GET", "/api/workflow/pubapi_corr/correlated/order-123");
    expect(byDefault.map((workflow) => workflow.workflowId)).toEqual([open]);
    expect(byDefault[0]!.tasks ?? []).toEqual([]);
    const withClosed = await apiOk<WorkflowJson[]>("GET", "/api/workflow/pubapi_corr/correlated/order-123?includeClosed=true");
    expect(withClosed.map((workflow) => workflow.workflowId).sort()).toEqual([open, closed].sort());
    const many = await apiOk<Record<string, WorkflowJson[]>>("POST", "/api/workflow/pubapi_corr/correlated?includeClosed=true", ["order-123", "order-456", "order-789"]);
    expect(Object.keys(many).sort()).toEqual(["order-123", "order-456", "order-789"]);
    expect(many["order-123"]!.map((workflow) => workflow.workflowId).sort()).toEqual([open, closed].sort());
    expect(many["order-456"]).toEqual([]);
  });

  it("Pause, Resume, Terminate (?reason=cancelled+by+user): 200 with no body; Restart and Retry: 204", async () => {
    await register({ name: "pubapi_manage", tasks: [waitTask("gate_ref")] });
    const workflowId = await startWorkflow("pubapi_manage");
    for (const [method, path] of [["PUT", "pause"], ["PUT", "resume"]] as const) {
      const answered = await sent(method, `/api/workflow/${workflowId}/${path}`);
      expect([path, answered.status, answered.text]).toEqual([path, 200, ""]);
    }
    const terminated = await sent("DELETE", `/api/workflow/${workflowId}?reason=cancelled+by+user`);
    expect([terminated.status, terminated.text]).toEqual([200, ""]);
    expect((await getWorkflow(workflowId))).toMatchObject({ status: "TERMINATED", reasonForIncompletion: "cancelled by user" });
    const retried = await sent("POST", `/api/workflow/${workflowId}/retry`);
    expect([retried.status, retried.text]).toEqual([204, ""]);
    await apiOk("DELETE", `/api/workflow/${workflowId}`);
    const restarted = await sent("POST", `/api/workflow/${workflowId}/restart`);
    expect([restarted.status, restarted.text]).toEqual([204, ""]);
    expect((await getWorkflow(workflowId)).status).toBe("RUNNING");
  });

  it("Rerun with the page's body (reRunFromWorkflowId, workflowInput, reRunFromTaskId, taskInput): the id as text", async () => {
    await registerWorkerThenGate("pubapi_rerun", "pubapi_rerun_task");
    const workflowId = await startWorkflow("pubapi_rerun", { orderId: "ORD-1" });
    const task = await pollOne("pubapi_rerun_task");
    expect((await report(task, "COMPLETED", { done: 1 })).status).toBe(200);
    await waitFor(workflowId, (workflow) => workflow.tasks.length === 2);
    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=stop`);
    const rerun = await sent("POST", `/api/workflow/${workflowId}/rerun`, { reRunFromWorkflowId: workflowId, workflowInput: { orderId: "ORD-999" }, reRunFromTaskId: task.taskId, taskInput: { override: true } });
    expect([rerun.status, rerun.type, rerun.text]).toEqual([200, "text/plain", workflowId]);
    const workflow = await getWorkflow(workflowId);
    expect(workflow.status).toBe("RUNNING");
    expect(workflow.input).toEqual({ orderId: "ORD-999" });
    expect(workflow.tasks.find((candidate) => candidate.referenceTaskName === "pubapi_rerun_task_ref")).toMatchObject({ status: "SCHEDULED", inputData: { override: true } });
  });

  it("Skip Task with the page's body: 200, the task SKIPPED with the given output, the workflow going on", async () => {
    await registerWorkerThenGate("pubapi_skip", "pubapi_skip_task");
    const workflowId = await startWorkflow("pubapi_skip");
    const skipped = await sent("PUT", `/api/workflow/${workflowId}/skiptask/pubapi_skip_task_ref`, { taskInput: {}, taskOutput: { skipped: true, reason: "manual override" } });
    expect([skipped.status, skipped.text]).toEqual([200, ""]);
    const workflow = await waitFor(workflowId, (candidate) => candidate.tasks.length === 2);
    expect(workflow.tasks[0]).toMatchObject({ status: "SKIPPED", outputData: { skipped: true, reason: "manual override" } });
  });

  it("Decide, Reset Callbacks, Remove (archiveWorkflow default true), Terminate and Remove", async () => {
    await register({ name: "pubapi_remove", tasks: [waitTask("gate_ref")] });
    const workflowId = await startWorkflow("pubapi_remove");
    const decided = await sent("PUT", `/api/workflow/decide/${workflowId}`);
    expect(decided.status).toBe(200);
    const reset = await sent("POST", `/api/workflow/${workflowId}/resetcallbacks`);
    expect([reset.status, reset.text]).toEqual([204, ""]);
    const terminatedAndRemoved = await sent("DELETE", `/api/workflow/${workflowId}/terminate-remove?reason=&archiveWorkflow=true`);
    expect([terminatedAndRemoved.status, terminatedAndRemoved.text]).toEqual([200, ""]);
    expect((await api("GET", `/api/workflow/${workflowId}`)).status).toBe(404);
    const other = await startWorkflow("pubapi_remove");
    await apiOk("DELETE", `/api/workflow/${other}`);
    const removed = await sent("DELETE", `/api/workflow/${other}/remove`);
    expect([removed.status, removed.text]).toEqual([200, ""]);
    expect((await api("GET", `/api/workflow/${other}`)).status).toBe(404);
  });

  it("Search (Summary) with the page's query: {totalHits, results} of WorkflowSummary fields", async () => {
    await register({ name: "pubapi_search", tasks: [{ name: "set", taskReferenceName: "set", type: "SET_VARIABLE", inputParameters: { done: true } }] });
    const workflowId = await startWorkflow("pubapi_search", {}, "?correlationId=order-123");
    await waitFor(workflowId, ["COMPLETED"]);
    await waitForIndexRow(workflowId, "COMPLETED");
    const query = `query=${encodeURIComponent("workflowType='pubapi_search' AND status='COMPLETED'")}&size=10`;
    const found = await apiOk<{ totalHits: number; results: JsonObject[] }>("GET", `/api/workflow/search?${query}`);
    expect(found.totalHits).toBe(1);
    expect(found.results[0]).toMatchObject({ workflowType: "pubapi_search", version: 1, workflowId, correlationId: "order-123", status: "COMPLETED" });
    for (const field of ["startTime", "updateTime", "endTime", "executionTime"]) expect(found.results[0]).toHaveProperty(field);
    // The page's free-text forms (an id matched in any field, and Lucene's field:"value") and its Query Syntax table's
    // start-time bound.
    const bounded = `query=${encodeURIComponent("workflowType = 'pubapi_search' AND startTime > 1700000000000")}`;
    for (const search of ["freeText=order-123", `freeText=${encodeURIComponent('workflowType:"pubapi_search"')}`, bounded]) {
      const page = await apiOk<{ results: JsonObject[] }>("GET", `/api/workflow/search?${search}`);
      expect([search, page.results.some((summary) => summary["workflowId"] === workflowId)]).toEqual([search, true]);
    }
  });
});

describe(`published API: ${TASK_PAGE}`, () => {
  it("Poll for a Task: 204 when none; 200 the task; Get Task: the page's fields", async () => {
    await registerWorkerThenGate("pubapi_poll", "pubapi_poll_task");
    const none = await sent("GET", "/api/tasks/poll/pubapi_poll_task?workerid=worker-1");
    expect([none.status, none.text]).toEqual([204, ""]);
    const workflowId = await startWorkflow("pubapi_poll", { key: "value" });
    const polled = await sent("GET", "/api/tasks/poll/pubapi_poll_task?workerid=worker-1");
    expect([polled.status, polled.type]).toEqual([200, "application/json"]);
    const task = JSON.parse(polled.text) as TaskJson;
    const got = await apiOk<TaskJson>("GET", `/api/tasks/${task.taskId}`);
    expect(got).toMatchObject({ taskType: "pubapi_poll_task", status: "IN_PROGRESS", referenceTaskName: "pubapi_poll_task_ref", retryCount: 0, pollCount: 1, taskId: task.taskId, workflowInstanceId: workflowId, workerId: "worker-1" });
    for (const field of ["seq", "startTime", "updateTime", "inputData", "outputData"]) expect(got).toHaveProperty(field);
  });

  it("Batch Poll: an empty list when none (count 1, timeout 100 by default); up to count tasks", async () => {
    await registerWorkerThenGate("pubapi_batch", "pubapi_batch_task");
    expect(await apiOk("GET", "/api/tasks/poll/batch/pubapi_batch_task")).toEqual([]);
    for (let index = 0; index < 3; index++) await startWorkflow("pubapi_batch", { key: `value${index}` });
    const one = await apiOk<TaskJson[]>("GET", "/api/tasks/poll/batch/pubapi_batch_task");
    expect(one).toHaveLength(1);
    const rest = await apiOk<TaskJson[]>("GET", "/api/tasks/poll/batch/pubapi_batch_task?count=5&timeout=1000&workerid=worker-1");
    expect(rest).toHaveLength(2);
    for (const task of rest) expect(task).toMatchObject({ taskType: "pubapi_batch_task", status: "IN_PROGRESS" });
  });

  it("Update Task with the page's body: 200, the task id as text/plain; Update Task V2: the next task, else 204", async () => {
    await registerWorkerThenGate("pubapi_update", "pubapi_update_task");
    const first = await startWorkflow("pubapi_update");
    await startWorkflow("pubapi_update");
    const task = await pollOne("pubapi_update_task");
    const updated = await sent("POST", "/api/tasks", { workflowInstanceId: task["workflowInstanceId"], taskId: task.taskId, status: "COMPLETED", outputData: { result: "processed successfully", recordCount: 42 } });
    expect([updated.status, updated.type, updated.text]).toEqual([200, "text/plain", task.taskId]);
    expect((await waitFor(first, (workflow) => workflow.tasks.length === 2)).tasks[0]!.outputData).toEqual({ result: "processed successfully", recordCount: 42 });
    const second = await pollOne("pubapi_update_task");
    const next = await sent("POST", "/api/tasks/update-v2", { workflowInstanceId: second["workflowInstanceId"], taskId: second.taskId, status: "COMPLETED", outputData: { result: "done" } });
    expect(next.status).toBe(204);
  });

  it("Update Task by Reference Name: the task id as text (Conductor's source; the page says no body), and /sync: the workflow", async () => {
    await register({ name: "pubapi_byref", tasks: [waitTask("wait_for_approval"), waitTask("wait_for_signal")] });
    const workflowId = await startWorkflow("pubapi_byref");
    const updated = await sent("POST", `/api/tasks/${workflowId}/wait_for_approval/COMPLETED`, { approved: true, approver: "jane@example.com" });
    expect([updated.status, updated.type]).toEqual([200, "text/plain"]);
    const workflow = await waitFor(workflowId, (candidate) => candidate.tasks.length === 2);
    expect(updated.text).toBe(workflow.tasks[0]!.taskId);
    expect(workflow.tasks[0]!.outputData).toEqual({ approved: true, approver: "jane@example.com" });
    const synced = await sent("POST", `/api/tasks/${workflowId}/wait_for_signal/COMPLETED/sync`, { signal: "proceed" });
    expect([synced.status, synced.type]).toEqual([200, "application/json"]);
    expect(JSON.parse(synced.text)).toMatchObject({ workflowId, status: "COMPLETED" });
  });

  it("Task Logs: none read as [] (Conductor's source; the page says 204), a text/plain log added (200, no body), read back as [{log, taskId, createdTime}]", async () => {
    await registerWorkerThenGate("pubapi_logs", "pubapi_logs_task");
    await startWorkflow("pubapi_logs");
    const task = await pollOne("pubapi_logs_task");
    // The page says 204 when there are none; Conductor's TaskResource.getTaskLogs answers its List: 200, [].
    const none = await sent("GET", `/api/tasks/${task.taskId}/log`);
    expect([none.status, none.text]).toEqual([200, "[]"]);
    const added = await sent("POST", `/api/tasks/${task.taskId}/log`, "Processing started for batch #42", { "content-type": "text/plain" });
    expect([added.status, added.text]).toEqual([200, ""]);
    const logs = await apiOk<JsonObject[]>("GET", `/api/tasks/${task.taskId}/log`);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ log: "Processing started for batch #42", taskId: task.taskId });
    expect(typeof logs[0]!["createdTime"]).toBe("number");
  });

  it("Queue sizes: /queue/size a number, /queue/all a map of counts, /queue/all/verbose; Poll Data", async () => {
    await registerWorkerThenGate("pubapi_queue", "pubapi_queue_task");
    await startWorkflow("pubapi_queue");
    await startWorkflow("pubapi_queue");
    const size = await sent("GET", "/api/tasks/queue/size?taskType=pubapi_queue_task");
    expect([size.status, size.type, JSON.parse(size.text)]).toEqual([200, "application/json", 2]);
    expect((await apiOk<Record<string, number>>("GET", "/api/tasks/queue/all"))["pubapi_queue_task"]).toBe(2);
    const verbose = await apiOk<Record<string, JsonObject>>("GET", "/api/tasks/queue/all/verbose");
    expect(verbose).toHaveProperty("pubapi_queue_task");
    await pollOne("pubapi_queue_task", { workerid: "worker-host-1" });
    const pollData = await apiOk<JsonObject[]>("GET", "/api/tasks/queue/polldata?taskType=pubapi_queue_task");
    expect(pollData).toHaveLength(1);
    expect(pollData[0]).toMatchObject({ queueName: "pubapi_queue_task", workerId: "worker-host-1" });
    expect(typeof pollData[0]!["lastPollTime"]).toBe("number");
    const all = await apiOk<JsonObject[]>("GET", "/api/tasks/queue/polldata/all");
    expect(all.some((entry) => entry["queueName"] === "pubapi_queue_task")).toBe(true);
  });
});

describe(`published API: ${START_PAGE}`, () => {
  it("Start a Workflow (body form, with priority and taskToDomain {\"*\": \"mydomain\"}): the id as text; the task in mydomain", async () => {
    await registerWorkerThenGate("pubapi_start_body", "pubapi_start_body_task");
    const started = await sent("POST", "/api/workflow", { name: "pubapi_start_body", version: 1, correlationId: "order-123", priority: 1, input: { customerId: "CUST-456", amount: 99.99 }, taskToDomain: { "*": "mydomain" } });
    expect([started.status, started.type]).toEqual([200, "text/plain"]);
    expect(await getWorkflow(started.text)).toMatchObject({ correlationId: "order-123", priority: 1, input: { customerId: "CUST-456", amount: 99.99 }, taskToDomain: { "*": "mydomain" } });
    expect((await api("GET", "/api/tasks/poll/pubapi_start_body_task")).status).toBe(204);
    expect(await pollOne("pubapi_start_body_task", { domain: "mydomain" })).toMatchObject({ workflowInstanceId: started.text, domain: "mydomain" });
  });

  it("Execute a Workflow: version 0 for the latest; waitUntilTaskRef a comma-separated list", async () => {
    await register({ name: "pubapi_execute_oss", version: 1, tasks: [waitTask("gate_ref")] });
    await register({ name: "pubapi_execute_oss", version: 2, tasks: [{ name: "set", taskReferenceName: "set_ref", type: "SET_VARIABLE", inputParameters: { url: "${workflow.input.url}" } }, waitTask("gate_ref"), waitTask("other_ref")] });
    const latest = await sent("POST", "/api/workflow/execute/pubapi_execute_oss/0?waitForSeconds=30&waitUntilTaskRef=nothing_ref,set_ref", { name: "pubapi_execute_oss", input: { url: "https://api.example.com/data" } });
    expect(latest.status).toBe(206);
    expect(JSON.parse(latest.text)).toMatchObject({ workflowVersion: 2, status: "RUNNING", variables: { url: "https://api.example.com/data" } });
    expect(typeof (JSON.parse(latest.text) as JsonObject)["requestId"]).toBe("string");
  });

  it("Dynamic Workflows: the page's my_adhoc_workflow (an HTTP task with its taskDefinition) runs unregistered", async () => {
    const uri = target("/echo/pubapi-adhoc");
    const started = await sent("POST", "/api/workflow", {
      name: "pubapi_adhoc_workflow",
      workflowDef: {
        ownerApp: "my_app",
        ownerEmail: "owner@example.com",
        name: "pubapi_adhoc_workflow",
        version: 1,
        tasks: [{ name: "fetch_data", type: "HTTP", taskReferenceName: "fetch_data", inputParameters: { uri: "${workflow.input.uri}", method: "GET" }, taskDefinition: { name: "fetch_data", retryCount: 0, timeoutSeconds: 3600, timeoutPolicy: "TIME_OUT_WF", responseTimeoutSeconds: 3000 } }],
      },
      input: { uri },
    });
    expect([started.status, started.type]).toEqual([200, "text/plain"]);
    const workflow = await waitFor(started.text, ["COMPLETED", "FAILED"]);
    expect(workflow.status).toBe("COMPLETED");
    expect(workflow.tasks[0]!.outputData).toMatchObject({ response: { statusCode: 200 } });
  });
});

describe(`published API: ${BULK_PAGE}`, () => {
  it("Bulk Pause of three (one already paused), Resume, Terminate (?reason=batch+cleanup): BulkResponse", async () => {
    await register({ name: "pubapi_bulk", tasks: [waitTask("gate_ref")] });
    const ids = [await startWorkflow("pubapi_bulk"), await startWorkflow("pubapi_bulk"), await startWorkflow("pubapi_bulk")];
    await apiOk("PUT", `/api/workflow/${ids[2]}/pause`);
    const paused = await sent("PUT", "/api/workflow/bulk/pause", ids);
    expect([paused.status, paused.type]).toEqual([200, "application/json"]);
    const pausedBody = JSON.parse(paused.text) as { bulkSuccessfulResults: string[]; bulkErrorResults: Record<string, string> };
    // Conductor's pauseWorkflow takes a paused one again without an error (WorkflowExecutorOps.pauseWorkflow returns
    // when the status is already PAUSED), where the page's example lists it as an error.
    expect(pausedBody.bulkSuccessfulResults.sort()).toEqual([...ids].sort());
    expect(pausedBody.bulkErrorResults).toEqual({});
    expect(await apiOk("PUT", "/api/workflow/bulk/resume", ids.slice(0, 2))).toEqual({ bulkSuccessfulResults: ids.slice(0, 2), bulkErrorResults: {} });
    const terminated = await apiOk<{ bulkSuccessfulResults: string[]; bulkErrorResults: Record<string, string> }>("POST", "/api/workflow/bulk/terminate?reason=batch+cleanup", ids);
    expect(terminated.bulkSuccessfulResults.sort()).toEqual([...ids].sort());
    expect(await getWorkflow(ids[0]!)).toMatchObject({ status: "TERMINATED", reasonForIncompletion: "batch cleanup" });
  });

  it("Bulk Retry, Restart (?useLatestDefinitions=true), Search (?includeTasks=false), Terminate-Remove, Remove", async () => {
    await register({ name: "pubapi_bulk2", tasks: [waitTask("gate_ref")] });
    const ids = [await startWorkflow("pubapi_bulk2"), await startWorkflow("pubapi_bulk2")];
    const searched = await apiOk<{ bulkSuccessfulResults: WorkflowJson[]; bulkErrorResults: Record<string, string> }>("POST", "/api/workflow/bulk/search?includeTasks=false", ids);
    expect(searched.bulkSuccessfulResults.map((workflow) => workflow.workflowId).sort()).toEqual([...ids].sort());
    for (const workflow of searched.bulkSuccessfulResults) expect(workflow.tasks ?? []).toEqual([]);
    await apiOk("POST", "/api/workflow/bulk/terminate", ids);
    expect(await apiOk("POST", "/api/workflow/bulk/retry", ids)).toEqual({ bulkSuccessfulResults: ids, bulkErrorResults: {} });
    await apiOk("POST", "/api/workflow/bulk/terminate", ids);
    expect(await apiOk("POST", "/api/workflow/bulk/restart?useLatestDefinitions=true", ids)).toEqual({ bulkSuccessfulResults: ids, bulkErrorResults: {} });
    expect(await apiOk("DELETE", "/api/workflow/bulk/terminate-remove?reason=decommissioned", [ids[0]])).toEqual({ bulkSuccessfulResults: [ids[0]], bulkErrorResults: {} });
    await apiOk("POST", "/api/workflow/bulk/terminate", [ids[1]]);
    expect(await apiOk("DELETE", "/api/workflow/bulk/remove", [ids[1]])).toEqual({ bulkSuccessfulResults: [ids[1]], bulkErrorResults: {} });
    for (const workflowId of ids) expect((await api("GET", `/api/workflow/${workflowId}`)).status).toBe(404);
  });
});

describe(`published API: ${EVENT_PAGE}`, () => {
  /** The page's order_event_handler, on a Conductor internal queue (the page's `conductor:my_event:my_event` form). */
  const handler = (active: boolean, version: number): JsonObject => ({
    name: "pubapi_order_event_handler",
    event: "conductor:pubapi_orders:new_order",
    active,
    actions: [{ action: "start_workflow", start_workflow: { name: "order_processing", version, input: { payload: "${eventPayload}" } } }],
  });

  it("Create, Update: 200 with no body; Get All lists it; Get for an Event honours activeOnly (default true); Delete: 200", async () => {
    const created = await sent("POST", "/api/event", handler(true, 1));
    expect([created.status, created.text]).toEqual([200, ""]);
    const listed = await apiOk<JsonObject[]>("GET", "/api/event");
    expect(listed.find((entry) => entry["name"] === "pubapi_order_event_handler")).toMatchObject(handler(true, 1));
    const updated = await sent("PUT", "/api/event", handler(false, 2));
    expect([updated.status, updated.text]).toEqual([200, ""]);
    expect(await apiOk("GET", "/api/event/conductor:pubapi_orders:new_order?activeOnly=true")).toEqual([]);
    expect(await apiOk("GET", "/api/event/conductor:pubapi_orders:new_order")).toEqual([]);
    const inactive = await apiOk<JsonObject[]>("GET", "/api/event/conductor:pubapi_orders:new_order?activeOnly=false");
    expect(inactive).toHaveLength(1);
    expect(inactive[0]).toMatchObject(handler(false, 2));
    const deleted = await sent("DELETE", "/api/event/pubapi_order_event_handler");
    expect([deleted.status, deleted.text]).toEqual([200, ""]);
    expect((await apiOk<JsonObject[]>("GET", "/api/event")).some((entry) => entry["name"] === "pubapi_order_event_handler")).toBe(false);
  });

  it("the page's kafka:orders_topic:new_order is refused 400 (no broker here: docs/api.md), nothing stored", async () => {
    const refused = await sent("POST", "/api/event", { ...handler(true, 1), name: "pubapi_kafka_handler", event: "kafka:orders_topic:new_order" });
    expect(refused.status).toBe(400);
    expect((await apiOk<JsonObject[]>("GET", "/api/event")).some((entry) => entry["name"] === "pubapi_kafka_handler")).toBe(false);
  });
});

describe("published API: Orkes' reference pages (orkes.io/content/reference-docs/api/…)", () => {
  it("task/task-queue/get-task-queue-size-for-individual-tasks: GET /api/tasks/queue/sizes?taskType= answers {<taskType>: size}", async () => {
    await registerWorkerThenGate("pubapi_sizes", "simple-java-worker-pubapi");
    await startWorkflow("pubapi_sizes");
    const sizes = await sent("GET", "/api/tasks/queue/sizes?taskType=simple-java-worker-pubapi", undefined, { accept: "*/*" });
    expect([sizes.status, sizes.type, JSON.parse(sizes.text)]).toEqual([200, "application/json", { "simple-java-worker-pubapi": 1 }]);
  });

  it("task/signal-running-task-asynchronously: 200, the WAIT completed with the page's body as its output", async () => {
    await register({ name: "pubapi_signal", tasks: [waitTask("first_ref"), waitTask("second_ref")] });
    const workflowId = await startWorkflow("pubapi_signal");
    const signalled = await sent("POST", `/api/tasks/${workflowId}/COMPLETED/signal`, { message: "Data processing completed successfully" }, { accept: "*/*" });
    expect(signalled.status).toBe(200);
    const workflow = await waitFor(workflowId, (candidate) => candidate.tasks.length === 2);
    expect(workflow.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { message: "Data processing completed successfully" } });
  });

  it("task/signal-running-task-synchronously (?returnStrategy=TARGET_WORKFLOW): the SignalResponse of the target workflow", async () => {
    await register({ name: "pubapi_signal_sync", tasks: [waitTask("first_ref"), waitTask("second_ref")] });
    const workflowId = await startWorkflow("pubapi_signal_sync");
    const signalled = await sent("POST", `/api/tasks/${workflowId}/COMPLETED/signal/sync?returnStrategy=TARGET_WORKFLOW`, { additionalProp1: {} }, { accept: "application/json" });
    expect([signalled.status, signalled.type]).toEqual([200, "application/json"]);
    expect(JSON.parse(signalled.text)).toMatchObject({ responseType: "TARGET_WORKFLOW", targetWorkflowId: workflowId, targetWorkflowStatus: "RUNNING", workflowId, status: "RUNNING" });
  });

  it("workflow/synchronous-workflow-execution: the workflow's state; 206 when stopped at waitUntilTaskRef with it still running", async () => {
    await register({ name: "pubapi_execute", tasks: [{ name: "set", taskReferenceName: "set_ref", type: "SET_VARIABLE", inputParameters: { seen: "${workflow.input.someKey}" } }, waitTask("gate_ref")] });
    // The page's body is the workflow's input. So it is without a version in the path (Orkes' executeWorkflowAsAPI form);
    // with one, the body is a StartWorkflowRequest, as every Orkes client sends it there (WorkflowClient.executeWorkflow),
    // and the page's keys, none a field of it, are ignored as Jackson ignores unknown properties: the input is empty.
    const byName = await sent("POST", "/api/workflow/execute/pubapi_execute?waitUntilTaskRef=set_ref&waitForSeconds=5", { someKey: "someValue", anotherKey: {} });
    expect([byName.status, byName.type]).toEqual([206, "application/json"]);
    expect(JSON.parse(byName.text)).toMatchObject({ responseType: "TARGET_WORKFLOW", status: "RUNNING", input: { someKey: "someValue", anotherKey: {} }, variables: { seen: "someValue" } });
    const versioned = await sent("POST", "/api/workflow/execute/pubapi_execute/1?waitUntilTaskRef=set_ref", { input: { someKey: "someValue" } });
    expect(versioned.status).toBe(206);
    expect(JSON.parse(versioned.text)).toMatchObject({ status: "RUNNING", input: { someKey: "someValue" }, variables: { seen: "someValue" } });
    const pageBodyVersioned = JSON.parse((await sent("POST", "/api/workflow/execute/pubapi_execute/1?waitUntilTaskRef=set_ref", { someKey: "someValue", anotherKey: {} })).text) as WorkflowJson;
    expect(pageBodyVersioned.input).toEqual({});
  });
  it("workflow/upgrade-workflow: the page's sample (v1 simple_task2, simple_task4; v2 adds simple_task1 and simple_task3 around them) upgraded at simple_task4", async () => {
    const types = ["simple_task1", "simple_task2", "simple_task3", "simple_task4"].map((name) => `pubapi_${name}`);
    await register({ name: "pubapi_upgrade", version: 1, tasks: [simpleTask(types[1]!, "simple_task2"), simpleTask(types[3]!, "simple_task4")] });
    await register({ name: "pubapi_upgrade", version: 2, tasks: types.map((type, index) => simpleTask(type, `simple_task${index + 1}`)) });
    const workflowId = await startWorkflow("pubapi_upgrade", { name: "conductor" }, "?version=1");
    expect((await report(await pollOne(types[1]!), "COMPLETED", { done: 2 })).status).toBe(200);
    await pollOne(types[3]!);
    const output = { updatedBy: "upgrade" };
    const upgraded = await sent("POST", `/api/workflow/${workflowId}/upgrade`, { name: "pubapi_upgrade", version: 2, taskOutput: { simple_task3: output, simple_task1: output }, workflowInput: { name: "orkes" } }, { accept: "*/*" });
    expect([upgraded.status, upgraded.text]).toEqual([200, ""]);
    const workflow = await getWorkflow(workflowId);
    expect(workflow).toMatchObject({ workflowVersion: 2, status: "RUNNING", input: { name: "orkes" } });
    const byRef = Object.fromEntries(workflow.tasks.map((task) => [task.referenceTaskName, task]));
    expect(byRef["simple_task1"]).toMatchObject({ status: "SKIPPED", outputData: output });
    expect(byRef["simple_task2"]).toMatchObject({ status: "COMPLETED", outputData: { done: 2 } });
    expect(byRef["simple_task3"]).toMatchObject({ status: "SKIPPED", outputData: output });
    expect(byRef["simple_task4"]).toMatchObject({ status: "IN_PROGRESS" });
  });
});
