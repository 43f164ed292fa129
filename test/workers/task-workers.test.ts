import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { workerQueueKey, type WorkerQueueEntry } from "../../src/engine/tasks/simple";
import { taskQueueAt } from "../../src/actors/task-queue";
import { executionStub } from "../../src/worker/executions";
import { api, apiOk, eventually, getWorkflow, httpTask, register, startWorkflow, target, waitFor, type TaskJson, type WorkflowJson } from "./helpers";

const simpleTask = (name: string, ref = `${name}_ref`, inputParameters: JsonObject = {}, extra: JsonObject = {}): JsonObject => ({ name, taskReferenceName: ref, type: "SIMPLE", inputParameters, ...extra });

/** A batch poll as the official clients send it. */
async function poll(taskType: string, query: Record<string, string> = {}): Promise<TaskJson[]> {
  const params = new URLSearchParams({ workerid: "worker-1", count: "1", timeout: "0", ...query });
  return apiOk<TaskJson[]>("GET", `/api/tasks/poll/batch/${encodeURIComponent(taskType)}?${params}`);
}

/** Polls (bounded) until a task of that type comes out: a task is queued just after its workflow's start answers. */
async function pollOne(taskType: string, query: Record<string, string> = {}): Promise<TaskJson> {
  const [task] = await eventually(() => poll(taskType, query), (tasks) => tasks.length > 0, `a ${taskType} task to poll`);
  return task!;
}

async function queueSize(taskType: string): Promise<number> {
  const sizes = await apiOk<Record<string, number>>("GET", `/api/tasks/queue/sizes?taskType=${encodeURIComponent(taskType)}`);
  return sizes[taskType]!;
}

function report(task: TaskJson, status: string, outputData: JsonObject = {}, extra: JsonObject = {}): Promise<Response> {
  return api("POST", "/api/tasks", { workflowInstanceId: task["workflowInstanceId"], taskId: task.taskId, status, outputData, ...extra });
}

describe("task workers: SIMPLE tasks polled and reported over the API", () => {
  it("a worker polls the task with its resolved input, reports COMPLETED, and the workflow goes on with its output", async () => {
    await register({
      name: "w_basic",
      tasks: [simpleTask("w_encode", "encode", { file: "${workflow.input.file}" }), httpTask("after", { uri: target("/count/w-basic-after?url=${encode.output.url}"), method: "GET" })],
    });
    const workflowId = await startWorkflow("w_basic", { file: "a.mp4" });
    const scheduled = await getWorkflow(workflowId);
    expect(scheduled.tasks[0]).toMatchObject({ taskType: "w_encode", status: "SCHEDULED", pollCount: 0 });
    const task = await pollOne("w_encode");
    expect(task).toMatchObject({ taskType: "w_encode", referenceTaskName: "encode", workflowInstanceId: workflowId, status: "IN_PROGRESS", inputData: { file: "a.mp4" }, pollCount: 1, workerId: "worker-1" });
    // Handed out once: the next poll finds nothing.
    expect(await poll("w_encode")).toEqual([]);
    const reported = await report(task, "COMPLETED", { url: "s3://b/a.webm" });
    expect(reported.status).toBe(200);
    expect(await reported.text()).toBe(task.taskId);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { url: "s3://b/a.webm" }, workerId: "worker-1" });
    expect(done.tasks[1]!.inputData).toMatchObject({ uri: target("/count/w-basic-after?url=s3://b/a.webm") });
  });

  it("the single poll answers the task, or 204 when there is none", async () => {
    await register({ name: "w_single", tasks: [simpleTask("w_single_task")] });
    const empty = await api("GET", "/api/tasks/poll/w_single_task?workerid=w");
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe("");
    const workflowId = await startWorkflow("w_single");
    const task = await eventually(
      async () => {
        const response = await api("GET", "/api/tasks/poll/w_single_task?workerid=w");
        return response.status === 200 ? ((await response.json()) as TaskJson) : null;
      },
      (value) => value !== null,
      "a single poll to get the task",
    );
    expect(task).toMatchObject({ workflowInstanceId: workflowId, status: "IN_PROGRESS" });
  });

  it("a batch poll waits up to its timeout for a task to arrive", async () => {
    await register({ name: "w_wait", tasks: [simpleTask("w_wait_task")] });
    const polled = poll("w_wait_task", { timeout: "5000" });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const workflowId = await startWorkflow("w_wait");
    const [task] = await polled;
    expect(task).toMatchObject({ workflowInstanceId: workflowId, status: "IN_PROGRESS" });
  });

  it("many workers polling at once get each task exactly once", async () => {
    await register({ name: "w_race", tasks: [simpleTask("w_race_task")] });
    const ids = await Promise.all(Array.from({ length: 6 }, () => startWorkflow("w_race")));
    await eventually(() => queueSize("w_race_task"), (size) => size === 6, "six tasks queued");
    const polls = await Promise.all(Array.from({ length: 10 }, (_, index) => poll("w_race_task", { workerid: `w${index}`, count: "2", timeout: "0" })));
    const handedOut = polls.flat().map((task) => task["workflowInstanceId"]);
    expect(handedOut.sort()).toEqual([...ids].sort());
    expect(await queueSize("w_race_task")).toBe(0);
  });

  it("higher-priority workflows' tasks are polled first", async () => {
    await register({ name: "w_priority", tasks: [simpleTask("w_priority_task")] });
    const low = await apiOk<string>("POST", "/api/workflow", { name: "w_priority", priority: 1 });
    const high = await apiOk<string>("POST", "/api/workflow", { name: "w_priority", priority: 90 });
    await eventually(() => queueSize("w_priority_task"), (size) => size === 2, "both queued");
    const tasks = await poll("w_priority_task", { count: "2" });
    expect(tasks.map((task) => task["workflowInstanceId"])).toEqual([high, low]);
  });

  it("IN_PROGRESS with callbackAfterSeconds keeps the task and hands it out again later, to any worker", async () => {
    await register({ name: "w_progress", tasks: [simpleTask("w_progress_task")] });
    const workflowId = await startWorkflow("w_progress");
    const first = await pollOne("w_progress_task");
    expect((await report(first, "IN_PROGRESS", { percent: 40 }, { callbackAfterSeconds: 1 })).status).toBe(200);
    const waiting = await getWorkflow(workflowId);
    expect(waiting.tasks[0]).toMatchObject({ status: "IN_PROGRESS", outputData: { percent: 40 }, callbackAfterSeconds: 1 });
    expect(await poll("w_progress_task")).toEqual([]);
    const again = await pollOne("w_progress_task", { workerid: "worker-2", timeout: "3000" });
    expect(again).toMatchObject({ taskId: first.taskId, pollCount: 2, workerId: "worker-2", outputData: { percent: 40 } });
    expect((await report(again, "COMPLETED", { percent: 100 })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).output).toEqual({ percent: 100 });
  });

  it("FAILED is retried as a new queued instance by the task definition's retryCount; FAILED_WITH_TERMINAL_ERROR is not", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_flaky", retryCount: 1, retryLogic: "FIXED", retryDelaySeconds: 0, responseTimeoutSeconds: 60, ownerEmail: "t@example.com" }]);
    await register({ name: "w_retry", tasks: [simpleTask("w_flaky")] });
    const workflowId = await startWorkflow("w_retry");
    const first = await pollOne("w_flaky");
    await report(first, "FAILED", {}, { reasonForIncompletion: "disk full" });
    const second = await pollOne("w_flaky");
    expect(second.taskId).not.toBe(first.taskId);
    expect(second).toMatchObject({ retryCount: 1, responseTimeoutSeconds: 60 });
    await report(second, "FAILED_WITH_TERMINAL_ERROR", {}, { reasonForIncompletion: "corrupt input" });
    const failed = await waitFor(workflowId, ["FAILED", "COMPLETED"]);
    expect(failed.status).toBe("FAILED");
    expect(failed.reasonForIncompletion).toContain("corrupt input");
  });

  it("taskToDomain puts the task in that domain's queue: only workers polling that domain get it", async () => {
    await register({ name: "w_domain", tasks: [simpleTask("w_domain_task")] });
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "w_domain", taskToDomain: { w_domain_task: "gpu" } });
    await eventually(async () => (await getWorkflow(workflowId)).tasks.length, (n) => n === 1, "the task scheduled");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await poll("w_domain_task")).toEqual([]);
    const task = await pollOne("w_domain_task", { domain: "gpu" });
    expect(task).toMatchObject({ workflowInstanceId: workflowId, domain: "gpu" });
  });

  it("a sub workflow's SIMPLE tasks go to its parent's domains (taskToDomain is inherited), unless the subWorkflowParam gives its own", async () => {
    await register({ name: "w_dom_child", tasks: [simpleTask("w_dom_child_task")] });
    const child = (ref: string, param: JsonObject = {}): JsonObject => ({ name: "w_dom_child", taskReferenceName: ref, type: "SUB_WORKFLOW", subWorkflowParam: { name: "w_dom_child", version: 1, ...param } });
    await register({ name: "w_dom_parent", tasks: [child("inherits"), child("own", { taskToDomain: { w_dom_child_task: "cpu" } })] });
    const parentId = await apiOk<string>("POST", "/api/workflow", { name: "w_dom_parent", taskToDomain: { "*": "gpu" } });
    const first = await pollOne("w_dom_child_task", { domain: "gpu", timeout: "3000" });
    expect(first).toMatchObject({ domain: "gpu" });
    expect((await getWorkflow(String(first["workflowInstanceId"]))).parentWorkflowId).toBe(parentId);
    await report(first, "COMPLETED");
    const second = await pollOne("w_dom_child_task", { domain: "cpu", timeout: "3000" });
    expect(second).toMatchObject({ domain: "cpu" });
    await report(second, "COMPLETED");
    expect((await waitFor(parentId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("a synchronous execute waits for the worker's result, not just for its poll", async () => {
    await register({ name: "w_exec", tasks: [simpleTask("w_exec_task")] });
    const executed = apiOk<WorkflowJson>("POST", "/api/workflow/execute/w_exec?waitForSeconds=10", { input: {} });
    const task = await pollOne("w_exec_task", { timeout: "5000" });
    expect((await report(task, "COMPLETED", { done: true })).status).toBe(200);
    const run = await executed;
    expect(run).toMatchObject({ workflowId: task["workflowInstanceId"], status: "COMPLETED", output: { done: true } });
  });

  it("a paused workflow's task is not handed out until it resumes", async () => {
    await register({ name: "w_pause", tasks: [simpleTask("w_pause_task")] });
    const workflowId = await startWorkflow("w_pause");
    await eventually(() => queueSize("w_pause_task"), (size) => size === 1, "the task queued");
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`, undefined, 200);
    expect(await poll("w_pause_task")).toEqual([]);
    expect((await getWorkflow(workflowId)).tasks[0]!.status).toBe("SCHEDULED");
    await apiOk("PUT", `/api/workflow/${workflowId}/resume`, undefined, 200);
    const task = await pollOne("w_pause_task");
    expect(task.workflowInstanceId ?? task["workflowInstanceId"]).toBe(workflowId);
  });

  it("a task completed from outside or canceled before any poll is never handed out, and its entry is dropped", async () => {
    await register({ name: "w_stale", tasks: [simpleTask("w_stale_task")] });
    const completed = await startWorkflow("w_stale");
    const terminated = await startWorkflow("w_stale");
    await eventually(() => queueSize("w_stale_task"), (size) => size === 2, "both queued");
    await apiOk("POST", `/api/tasks/${completed}/w_stale_task_ref/COMPLETED`, { by: "hand" });
    await apiOk("DELETE", `/api/workflow/${terminated}`, undefined, 200);
    expect(await poll("w_stale_task", { count: "5" })).toEqual([]);
    expect(await queueSize("w_stale_task")).toBe(0);
    expect((await getWorkflow(completed)).status).toBe("COMPLETED");
  });

  it("update-v2 reports a result and answers the worker's next task of that type, or 204", async () => {
    await register({ name: "w_v2", tasks: [simpleTask("w_v2_task")] });
    const firstId = await startWorkflow("w_v2");
    const secondId = await startWorkflow("w_v2");
    await eventually(() => queueSize("w_v2_task"), (size) => size === 2, "both queued");
    const [first] = await poll("w_v2_task");
    const nextResponse = await api("POST", "/api/tasks/update-v2", { workflowInstanceId: first!["workflowInstanceId"], taskId: first!.taskId, status: "COMPLETED", outputData: { n: 1 }, workerId: "worker-1" });
    expect(nextResponse.status).toBe(200);
    const next = (await nextResponse.json()) as TaskJson;
    expect([firstId, secondId]).toContain(next["workflowInstanceId"]);
    expect(next["workflowInstanceId"]).not.toBe(first!["workflowInstanceId"]);
    expect(next).toMatchObject({ status: "IN_PROGRESS", workerId: "worker-1" });
    const last = await api("POST", "/api/tasks/update-v2", { workflowInstanceId: next["workflowInstanceId"], taskId: next.taskId, status: "COMPLETED", outputData: { n: 2 } });
    expect(last.status).toBe(204);
    expect((await waitFor(firstId, ["COMPLETED"])).status).toBe("COMPLETED");
    expect((await waitFor(secondId, ["COMPLETED"])).status).toBe("COMPLETED");
  });

  it("a heartbeat (TaskResult extendLease, as TaskRunner's lease tracker sends it) keeps the task with its worker: not queued again, nothing else changed, update-v2 answers 204; a late one changes nothing", async () => {
    await register({ name: "w_lease", tasks: [simpleTask("w_lease_task")] });
    const ids = [await startWorkflow("w_lease"), await startWorkflow("w_lease")];
    await eventually(() => queueSize("w_lease_task"), (size) => size === 2, "both queued");
    const [task] = await poll("w_lease_task");
    const workflowId = task!["workflowInstanceId"] as string;
    const other = ids.find((id) => id !== workflowId)!;
    const beat = await report(task!, "IN_PROGRESS", {}, { extendLease: true, workerId: "worker-1" });
    expect(beat.status).toBe(200);
    expect(await beat.text()).toBe(task!.taskId);
    // Conductor's updateTask returns no task for a heartbeat, so its update-v2 answers 204 even with another task queued.
    const v2 = await api("POST", "/api/tasks/update-v2", { workflowInstanceId: workflowId, taskId: task!.taskId, status: "IN_PROGRESS", outputData: { ignored: true }, extendLease: true, workerId: "worker-1" });
    expect(v2.status).toBe(204);
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", pollCount: 1, workerId: "worker-1", outputData: {}, callbackAfterSeconds: 0 });
    // Still the first worker's: a poll gets the other workflow's task only.
    expect(await queueSize("w_lease_task")).toBe(1);
    expect((await poll("w_lease_task", { workerid: "worker-2", count: "5" })).map((polled) => polled["workflowInstanceId"])).toEqual([other]);
    expect((await report(task!, "COMPLETED", { done: true })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    // A heartbeat that crossed the result: accepted as Conductor does, and nothing changes.
    const before = JSON.stringify(await getWorkflow(workflowId));
    const late = await report(task!, "IN_PROGRESS", {}, { extendLease: true });
    expect(late.status).toBe(200);
    expect(JSON.stringify(await getWorkflow(workflowId))).toBe(before);
    const bad = await report(task!, "IN_PROGRESS", {}, { extendLease: "yes" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
  });

  it("a task's input naming a secret reaches the worker with its value; the stored input stays masked", async () => {
    await apiOk("PUT", "/api/secrets/w_token", JSON.stringify("s3cr3t-value"));
    await register({ name: "w_secret", tasks: [simpleTask("w_secret_task", "call", { token: "${workflow.secrets.w_token}" })] });
    const workflowId = await startWorkflow("w_secret");
    const task = await pollOne("w_secret_task");
    expect(task.inputData).toEqual({ token: "s3cr3t-value" });
    expect((await getWorkflow(workflowId)).tasks[0]!.inputData).toEqual({ token: "***" });
  });

  it("a worker's result echoing a secret it was handed is stored and shown masked", async () => {
    await apiOk("PUT", "/api/secrets/w_echo_token", JSON.stringify("echo-s3cr3t-value"));
    await register({ name: "w_echo", tasks: [simpleTask("w_echo_task", "echo", { token: "${workflow.secrets.w_echo_token}" })] });
    const workflowId = await startWorkflow("w_echo");
    const first = await pollOne("w_echo_task");
    const token = String(first.inputData["token"]);
    expect(token).toBe("echo-s3cr3t-value");
    // A progress report, then the result, each quoting the credential (as workers that echo their input do).
    expect((await report(first, "IN_PROGRESS", { seen: token }, { callbackAfterSeconds: 0 })).status).toBe(200);
    const again = await pollOne("w_echo_task");
    expect((await report(again, "COMPLETED", { echo: token, header: `Bearer ${token}` })).status).toBe(200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks[0]!.outputData).toEqual({ seen: "***", echo: "***", header: "Bearer ***" });
    expect(JSON.stringify(done)).not.toContain("echo-s3cr3t-value");
  });

  it("refuses bad polls and bad results with the contract's error, changing nothing", async () => {
    await register({ name: "w_bad", tasks: [simpleTask("w_bad_task")] });
    const workflowId = await startWorkflow("w_bad");
    await eventually(() => queueSize("w_bad_task"), (size) => size === 1, "the task queued");
    for (const query of ["count=0", "count=101", "count=x", "timeout=-1", "timeout=10001", `workerid=${"w".repeat(257)}`]) {
      const response = await api("GET", `/api/tasks/poll/batch/w_bad_task?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    }
    expect(await queueSize("w_bad_task")).toBe(1);
    const task = await pollOne("w_bad_task");
    const before = JSON.stringify(await getWorkflow(workflowId));
    const badExtras: JsonObject[] = [{ callbackAfterSeconds: -1 }, { callbackAfterSeconds: 1.5 }, { callbackAfterSeconds: "soon" }, { workerId: 7 }];
    for (const extra of badExtras) {
      const response = await report(task, "IN_PROGRESS", {}, extra);
      expect(response.status, JSON.stringify(extra)).toBe(400);
    }
    expect((await api("POST", "/api/tasks/update-v2", { workflowInstanceId: workflowId, taskId: task.taskId, status: "DONE" })).status).toBe(400);
    expect(JSON.stringify(await getWorkflow(workflowId))).toBe(before);
  });

  it("a task queued again while a poll holds its old entry stays queued when that poll drops the entry", async () => {
    const queue = taskQueueAt(env, workerQueueKey("w_repush_task", undefined));
    const entry: WorkerQueueEntry = { queue: workerQueueKey("w_repush_task", undefined), taskId: crypto.randomUUID(), workflowId: crypto.randomUUID(), priority: 0, visibleAt: Date.now() };
    await queue.push([entry]);
    const leased = await queue.lease(1, 0, 30_000);
    expect(leased.map((task) => task.taskId)).toEqual([entry.taskId]);
    // Its execution found the task gone (its workflow had ended), and a rerun from it queues it again (same task id)
    // before the poll drops the entry it took: the new push must survive that.
    await queue.push([{ ...entry, visibleAt: Date.now() }]);
    await queue.ack(leased);
    expect(await queue.size()).toBe(1);
    expect((await queue.lease(1, 0, 30_000)).map((task) => task.taskId)).toEqual([entry.taskId]);
  });

  it("a queue push owed when the object was evicted is made when it wakes", async () => {
    await register({ name: "w_evict", tasks: [simpleTask("w_evict_task")] });
    const workflowId = await startWorkflow("w_evict");
    await eventually(() => queueSize("w_evict_task"), (size) => size === 1, "the task queued");
    const taskId = (await getWorkflow(workflowId)).tasks[0]!.taskId;
    // As if the decision that queued it had been stored and the object evicted before the push left: the queue lacks it.
    const queue = taskQueueAt(env, workerQueueKey("w_evict_task", undefined));
    await queue.ack(await queue.lease(1, 0, 30_000));
    const owed: WorkerQueueEntry = { queue: workerQueueKey("w_evict_task", undefined), taskId, workflowId, priority: 0, visibleAt: Date.now() };
    await runInDurableObject(executionStub(env, workflowId), (_instance, state) => {
      state.storage.sql.exec(`INSERT INTO meta (key, value) VALUES (?, ?)`, `queuePush:${taskId}`, JSON.stringify(owed));
    });
    await abortAllDurableObjects();
    expect(await queueSize("w_evict_task")).toBe(0);
    // Any request wakes it (the alarm would too).
    await getWorkflow(workflowId);
    const task = await pollOne("w_evict_task");
    expect(task.taskId).toBe(taskId);
  });
});
