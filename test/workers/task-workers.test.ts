import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject, JsonValue, TaskExecution } from "../../src/engine/model";
import { workerQueueKey, type WorkerQueueEntry } from "../../src/engine/tasks/simple";
import { TaskQueue, taskQueueAt } from "../../src/actors/task-queue";
import { executionStub } from "../../src/worker/executions";
import { WorkflowExecution } from "../../src/actors/workflow-execution";
import { api, apiOk, eventually, getWorkflow, httpTask, register, startWorkflow, target, waitFor, waitForIndexRow, type TaskJson, type WorkflowJson } from "./helpers";
import { poll, pollOne, queueSize, report, simpleTask } from "./task-worker-helpers";

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

  it("a TaskResult's workerId, reasonForIncompletion and log lines given as numbers are their text, as Jackson reads the String fields; an object is a 400", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_numbers", retryCount: 0, responseTimeoutSeconds: 60, ownerEmail: "t@example.com" }]);
    await register({ name: "w_numbers", tasks: [simpleTask("w_numbers", "numbers")] });
    const workflowId = await startWorkflow("w_numbers");
    const task = await pollOne("w_numbers");
    const refusals: Array<[string, JsonValue]> = [["workerId", { id: 7 }], ["reasonForIncompletion", [500]], ["logs", [{ log: { n: 1 } }]]];
    for (const [field, value] of refusals) {
      const refused = await report(task, "FAILED", {}, { [field]: value });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path)[0]).toMatch(new RegExp(`^${field}`));
    }
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "IN_PROGRESS" });
    // A numbered worker, an error code, a count logged as it is.
    expect((await report(task, "FAILED", {}, { workerId: 7, reasonForIncompletion: 500, logs: [{ log: 42, createdTime: 1_700_000_000_000 }] })).status).toBe(200);
    const failed = await waitFor(workflowId, ["FAILED"]);
    expect(failed.tasks[0]).toMatchObject({ status: "FAILED", workerId: "7", reasonForIncompletion: "500" });
    expect((await apiOk<Array<{ log: string }>>("GET", `/api/tasks/${task.taskId}/log`)).map((line) => line.log)).toEqual(["42"]);
  });

  it("a status another system's word for it (SUCCESS) or in lower case (completed) is a 400 quoting it and naming the status meant, by TaskResult and by path; the task is untouched", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_status_words", retryCount: 0, responseTimeoutSeconds: 60, ownerEmail: "t@example.com" }]);
    await register({ name: "w_status_words", tasks: [simpleTask("w_status_words", "words")] });
    const workflowId = await startWorkflow("w_status_words");
    const task = await pollOne("w_status_words");
    const messageOf = async (response: Response) => {
      expect(response.status).toBe(400);
      return ((await response.json()) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors.find((issue) => issue.path === "status")?.message;
    };
    const listed = "must be one of COMPLETED, FAILED, FAILED_WITH_TERMINAL_ERROR, IN_PROGRESS";
    expect(await messageOf(await report(task, "SUCCESS"))).toBe(`${listed}, but received the string "SUCCESS"; did you mean COMPLETED?`);
    expect(await messageOf(await report(task, "completed"))).toBe(`${listed}, but received the string "completed"; did you mean COMPLETED?`);
    expect(await messageOf(await report(task, "ERROR"))).toBe(`${listed}, but received the string "ERROR"; did you mean FAILED?`);
    expect(await messageOf(await report(task, "SKIPPED"))).toBe(`${listed}, but received the string "SKIPPED"`);
    expect(await messageOf(await api("POST", `/api/tasks/${workflowId}/words/SUCCESS`, {}))).toBe(`status ${listed}, but received the string "SUCCESS"; did you mean COMPLETED?`);
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", outputData: {} });
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

  it("a task with a startDelay is handed out only once the delay has passed (Conductor's startDelay)", async () => {
    await register({ name: "w_delayed", tasks: [simpleTask("w_delayed_task", "delayed", {}, { startDelay: 2 })] });
    const workflowId = await startWorkflow("w_delayed");
    const scheduled = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "SCHEDULED");
    // As Conductor's SimpleTaskMapper shows it: the step's delay, and the Task fields a client reads.
    expect(scheduled.tasks[0]).toMatchObject({ callbackAfterSeconds: 2, startDelayInSeconds: 2, callbackFromWorker: true, rateLimitPerFrequency: 0, rateLimitFrequencyInSeconds: 0 });
    const startedAt = Number(scheduled.tasks[0]!["scheduledTime"]);
    expect(await poll("w_delayed_task")).toEqual([]);
    const task = await pollOne("w_delayed_task");
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2_000);
    expect((await report(task, "COMPLETED")).status).toBe(200);
    await waitFor(workflowId, ["COMPLETED"]);
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

  it("tasks are polled in Orkes' priority order: 1 first, 99 last of 1 to 99, then 0 (no priority), each priority oldest first", async () => {
    await register({ name: "w_priority", tasks: [simpleTask("w_priority_task")] });
    const started: Record<string, string> = {};
    for (const [label, priority] of [["none-1", 0], ["p99", 99], ["p5", 5], ["none-2", 0], ["p1", 1]] as const) {
      started[label] = await apiOk<string>("POST", "/api/workflow", { name: "w_priority", priority });
      // Each queued before the next starts, so the queue's age order is the start order.
      await eventually(() => queueSize("w_priority_task"), (size) => size === Object.keys(started).length, `${label} queued`);
    }
    const tasks = await poll("w_priority_task", { count: "5" });
    expect(tasks.map((task) => task["workflowInstanceId"])).toEqual(["p1", "p5", "p99", "none-1", "none-2"].map((label) => started[label]));
  });

  it("a paused workflow's task keeps its place in its queue: resumed, it is handed out before the tasks queued after it (as Conductor's pause leaves its queue alone)", async () => {
    await register({ name: "w_pause_place", tasks: [simpleTask("w_pause_place_task")] });
    const paused = await apiOk<string>("POST", "/api/workflow", { name: "w_pause_place" });
    const second = await apiOk<string>("POST", "/api/workflow", { name: "w_pause_place" });
    await eventually(() => queueSize("w_pause_place_task"), (size) => size === 2, "both queued");
    await apiOk("PUT", `/api/workflow/${paused}/pause`, undefined, 200);
    await apiOk("PUT", `/api/workflow/${second}/pause`, undefined, 200);
    // A poll passes over both (found paused: put aside for a while).
    expect(await poll("w_pause_place_task")).toEqual([]);
    const later = await apiOk<string>("POST", "/api/workflow", { name: "w_pause_place" });
    await eventually(() => queueSize("w_pause_place_task"), (size) => size === 3, "the later one queued");
    // Resumed in the other order: the queue's order is their age, not their resumes'.
    await apiOk("PUT", `/api/workflow/${second}/resume`, undefined, 200);
    await apiOk("PUT", `/api/workflow/${paused}/resume`, undefined, 200);
    const tasks = await poll("w_pause_place_task", { count: "3" });
    expect(tasks.map((task) => task["workflowInstanceId"])).toEqual([paused, second, later]);
  });

  it("IN_PROGRESS with callbackAfterSeconds puts the task back SCHEDULED, as Conductor's updateTask does, and hands it out again later, to any worker", async () => {
    await register({ name: "w_progress", tasks: [simpleTask("w_progress_task")] });
    const workflowId = await startWorkflow("w_progress");
    const first = await pollOne("w_progress_task");
    expect((await report(first, "IN_PROGRESS", { percent: 40, cursor: "page-2" }, { callbackAfterSeconds: 1 })).status).toBe(200);
    const waiting = await getWorkflow(workflowId);
    // Its start, worker and poll count stay, as Conductor's do; it waits in its queue for the next poll.
    expect(waiting.tasks[0]).toMatchObject({ status: "SCHEDULED", outputData: { percent: 40, cursor: "page-2" }, callbackAfterSeconds: 1, pollCount: 1, workerId: "worker-1", startTime: first["startTime"] });
    expect(await queueSize("w_progress_task")).toBe(1);
    expect(await poll("w_progress_task")).toEqual([]);
    expect(await apiOk<JsonObject>("GET", `/api/tasks/${first.taskId}`)).toMatchObject({ status: "SCHEDULED", callbackAfterSeconds: 1 });
    // The task search finds it SCHEDULED too.
    const search = `workflowId = '${workflowId}' AND status IN (SCHEDULED)`;
    await eventually(() => apiOk<{ results: JsonObject[] }>("GET", `/api/tasks/search?query=${encodeURIComponent(search)}`), (page) => page.results.some((row) => row["taskId"] === first.taskId), "the task found SCHEDULED by the search");
    const again = await pollOne("w_progress_task", { workerid: "worker-2", timeout: "3000" });
    expect(again).toMatchObject({ taskId: first.taskId, status: "IN_PROGRESS", pollCount: 2, workerId: "worker-2", outputData: { percent: 40, cursor: "page-2" } });
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", pollCount: 2, workerId: "worker-2" });
    // A TaskResult's output replaces the task's, as Conductor's updateTask sets it: the progress report's cursor is gone.
    expect((await report(again, "COMPLETED", { percent: 100 })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).output).toEqual({ percent: 100 });
  });

  it("put back SCHEDULED by the by-reference update or update-v2 too; no responseTimeoutSeconds runs while it waits, and a heartbeat for it changes nothing", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_back", retryCount: 0, responseTimeoutSeconds: 1, ownerEmail: "t@example.com" }]);
    await register({ name: "w_back", tasks: [simpleTask("w_back", "back")] });
    const workflowId = await startWorkflow("w_back");
    const first = await pollOne("w_back");
    // Conductor's by-reference update builds a TaskResult and goes through the same updateTask.
    expect((await api("POST", `/api/tasks/${workflowId}/back/IN_PROGRESS?workerid=hand-1`, { step: 1 })).status).toBe(200);
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "SCHEDULED", pollCount: 1, workerId: "hand-1", outputData: { step: 1 } });
    // Well past its responseTimeoutSeconds (1 s): no worker holds it, so it is not timed out.
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    expect((await report(first, "IN_PROGRESS", {}, { extendLease: true })).status).toBe(200);
    const waited = await getWorkflow(workflowId);
    expect([waited.status, waited.tasks[0]!.status, waited.tasks[0]!["pollCount"]]).toEqual(["RUNNING", "SCHEDULED", 1]);
    const again = await pollOne("w_back", { workerid: "worker-2" });
    expect(again).toMatchObject({ taskId: first.taskId, status: "IN_PROGRESS", pollCount: 2, workerId: "worker-2", outputData: { step: 1 } });
    // update-v2's IN_PROGRESS result: back in the queue for 60 s, so no next task to answer.
    const v2 = await api("POST", "/api/tasks/update-v2", { workflowInstanceId: workflowId, taskId: again.taskId, status: "IN_PROGRESS", outputData: { step: 2 }, callbackAfterSeconds: 60, workerId: "worker-2" });
    expect(v2.status).toBe(204);
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "SCHEDULED", callbackAfterSeconds: 60, pollCount: 2, outputData: { step: 2 } });
    // A result for the task waiting in its queue is taken, as Conductor takes it, and it leaves its queue.
    expect((await report(again, "COMPLETED", { step: 3 })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED", "TIMED_OUT"])).status).toBe("COMPLETED");
    await eventually(() => queueSize("w_back"), (size) => size === 0, "the completed task gone from its queue");
  });

  it("put back SCHEDULED, it times out by pollTimeoutSeconds counted from the end of its callbackAfterSeconds", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_back_poll", retryCount: 0, responseTimeoutSeconds: 60, pollTimeoutSeconds: 1, ownerEmail: "t@example.com" }]);
    await register({ name: "w_back_poll", tasks: [simpleTask("w_back_poll")] });
    const workflowId = await startWorkflow("w_back_poll");
    const task = await pollOne("w_back_poll");
    expect((await report(task, "IN_PROGRESS", { step: 1 }, { callbackAfterSeconds: 1 })).status).toBe(200);
    // Nobody polls it again: its workflow times out with it (TIME_OUT_WF, the default policy), and it leaves its queue.
    const timedOut = await waitFor(workflowId, ["TIMED_OUT", "FAILED", "COMPLETED"]);
    expect(timedOut.status).toBe("TIMED_OUT");
    expect(timedOut.tasks[0]).toMatchObject({ status: "TIMED_OUT", pollCount: 1, reasonForIncompletion: expect.stringMatching(/^Task poll timed out after \d+ seconds\. Poll timeout configured as 1 seconds\. Timeout policy configured to TIME_OUT_WF$/) });
    await eventually(() => queueSize("w_back_poll"), (size) => size === 0, "the timed-out task gone from its queue");
  });

  it("a task an execution stored before IN_PROGRESS reports put tasks back SCHEDULED holds IN_PROGRESS in its queue is still polled and reported", async () => {
    await register({ name: "w_back_stored", tasks: [simpleTask("w_back_stored")] });
    const workflowId = await startWorkflow("w_back_stored");
    const first = await pollOne("w_back_stored");
    expect((await report(first, "IN_PROGRESS", { step: 1 }, { callbackAfterSeconds: 0 })).status).toBe(200);
    // As the earlier service stored such a task: IN_PROGRESS and pollable, its responseTimeoutSeconds running.
    await runInDurableObject(executionStub(env, workflowId), (_instance, state) => {
      const sql = state.storage.sql;
      const row = sql.exec<{ task_id: string; data: string }>(`SELECT task_id, data FROM tasks`).one();
      const task = JSON.parse(row.data) as TaskExecution;
      expect(task).toMatchObject({ status: "SCHEDULED", pollable: true });
      sql.exec(`UPDATE tasks SET data = ? WHERE task_id = ?`, JSON.stringify({ ...task, status: "IN_PROGRESS", timeoutAt: Date.now() + 3_600_000 }), row.task_id);
    });
    await abortAllDurableObjects();
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", pollCount: 1 });
    const again = await pollOne("w_back_stored", { workerid: "worker-2" });
    expect(again).toMatchObject({ taskId: first.taskId, status: "IN_PROGRESS", pollCount: 2, workerId: "worker-2", outputData: { step: 1 } });
    expect((await report(again, "COMPLETED", { step: 2 })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED", "TIMED_OUT"])).status).toBe("COMPLETED");
  });

  it("takes a callbackAfterSeconds with a fraction as its whole seconds, as Jackson reads it into Conductor's long", async () => {
    // netflix-conductor-utilities' Node worker (before RunningTask) sends the seconds its work took with every result.
    await register({ name: "w_fraction", tasks: [simpleTask("w_fraction_task"), simpleTask("w_fraction_next")] });
    const workflowId = await startWorkflow("w_fraction");
    const first = await pollOne("w_fraction_task");
    expect((await report(first, "IN_PROGRESS", { step: 1 }, { callbackAfterSeconds: 1.7 })).status).toBe(200);
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "SCHEDULED", callbackAfterSeconds: 1 });
    const again = await pollOne("w_fraction_task", { timeout: "3000" });
    expect((await report(again, "COMPLETED", { step: 2 }, { callbackAfterSeconds: 0.012 })).status).toBe(200);
    const next = await pollOne("w_fraction_next");
    expect((await report(next, "COMPLETED", {}, { callbackAfterSeconds: 0.4 })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    // Still refused: a negative number, or one that is no number (digits as text are the number, as Jackson reads them,
    // but a fraction as text is not, as Jackson's long refuses it); the task is left as it was.
    const other = await startWorkflow("w_fraction");
    const task = await pollOne("w_fraction_task");
    for (const callbackAfterSeconds of [-0.5, "-1", "1.5", "soon"]) {
      const refused = await report(task, "COMPLETED", {}, { callbackAfterSeconds });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ path: "callbackAfterSeconds" }] });
    }
    expect((await getWorkflow(other)).tasks[0]!.status).toBe("IN_PROGRESS");
  });

  it("an update by reference name adds its output to the task's, as Conductor's does (a TaskResult's replaces it)", async () => {
    await register({ name: "w_ref_merge", tasks: [simpleTask("w_ref_merge_task", "work")] });
    const workflowId = await startWorkflow("w_ref_merge");
    const task = await pollOne("w_ref_merge_task");
    expect((await report(task, "IN_PROGRESS", { percent: 40, cursor: "page-2" })).status).toBe(200);
    expect((await api("POST", `/api/tasks/${workflowId}/work/COMPLETED`, { percent: 100 })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).output).toEqual({ percent: 100, cursor: "page-2" });
  });

  it("resetcallbacks (Conductor's resetCallbacksForWorkflow) lets a task waiting out its callbackAfterSeconds be polled at once", async () => {
    await register({ name: "w_reset", tasks: [simpleTask("w_reset_task")] });
    const workflowId = await startWorkflow("w_reset");
    const first = await pollOne("w_reset_task");
    // 90 days is taken as the longest delay, 30 days, rather than refused (the official runners drop a refused result).
    expect((await report(first, "IN_PROGRESS", { percent: 10 }, { callbackAfterSeconds: 90 * 24 * 3600 })).status).toBe(200);
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "SCHEDULED", callbackAfterSeconds: 30 * 24 * 3600 });
    expect(await poll("w_reset_task")).toEqual([]);
    const reset = await api("POST", `/api/workflow/${workflowId}/resetcallbacks`);
    // 204 No Content, as Conductor's WorkflowResource answers it (@ResponseStatus(NO_CONTENT)).
    expect(reset.status).toBe(204);
    expect(await reset.text()).toBe("");
    const again = await pollOne("w_reset_task", { workerid: "worker-2" });
    expect(again).toMatchObject({ taskId: first.taskId, pollCount: 2, callbackAfterSeconds: 0, outputData: { percent: 10 } });
    await report(again, "COMPLETED");
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    // A finished workflow has no callbacks to reset (Conductor: a conflict); an unknown one is not found.
    expect((await api("POST", `/api/workflow/${workflowId}/resetcallbacks`)).status).toBe(409);
    expect((await api("POST", `/api/workflow/${crypto.randomUUID()}/resetcallbacks`)).status).toBe(404);
  });

  it("a retry waits out its retry delay in its queue, shown as its callbackAfterSeconds (Conductor's retry()); resetcallbacks lets it be polled at once, an eviction after it losing nothing", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_retry_wait", retryCount: 1, retryLogic: "FIXED", retryDelaySeconds: 3600, responseTimeoutSeconds: 60, ownerEmail: "t@example.com" }]);
    await register({ name: "w_retry_wait_flow", tasks: [simpleTask("w_retry_wait")] });
    const workflowId = await startWorkflow("w_retry_wait_flow");
    const first = await pollOne("w_retry_wait");
    await report(first, "FAILED", {}, { reasonForIncompletion: "busy" });
    const [failed, retry] = (await waitFor(workflowId, (workflow) => workflow.tasks.length === 2)).tasks;
    // Scheduled when the attempt failed, not an hour ahead: the hour is its callbackAfterSeconds, in its queue.
    expect(retry).toMatchObject({ status: "SCHEDULED", retryCount: 1, retriedTaskId: first.taskId, callbackAfterSeconds: 3600, startDelayInSeconds: 3600 });
    expect(Number(retry!["scheduledTime"])).toBeGreaterThanOrEqual(Number(failed!["endTime"]));
    expect(Number(retry!["scheduledTime"])).toBeLessThanOrEqual(Date.now());
    await eventually(() => queueSize("w_retry_wait"), (size) => size === 1, "the retry queued");
    expect(await poll("w_retry_wait")).toEqual([]);
    expect((await api("POST", `/api/workflow/${workflowId}/resetcallbacks`)).status).toBe(204);
    // Stored with the release before any queue is told: evicted now, it is made when the object wakes.
    await abortAllDurableObjects();
    const second = await pollOne("w_retry_wait");
    // Its startDelayInSeconds stays the retry delay, as Conductor's DeciderService.retry() set it.
    expect(second).toMatchObject({ taskId: retry!.taskId, retryCount: 1, pollCount: 1, callbackAfterSeconds: 0, startDelayInSeconds: 3600 });
    // Handed out once.
    expect(await poll("w_retry_wait")).toEqual([]);
    await report(second, "COMPLETED");
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("FAILED is retried as a new queued instance by the task definition's retryCount; FAILED_WITH_TERMINAL_ERROR is not", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_flaky", retryCount: 1, retryLogic: "FIXED", retryDelaySeconds: 0, responseTimeoutSeconds: 60, ownerEmail: "t@example.com" }]);
    await register({ name: "w_retry", tasks: [simpleTask("w_flaky")] });
    const workflowId = await startWorkflow("w_retry");
    const first = await pollOne("w_flaky");
    await report(first, "FAILED", {}, { reasonForIncompletion: "disk full" });
    // Queued, not yet polled: no startTime, so a queueWaitTime of 0 (Conductor's TaskModel.getQueueWaitTime).
    const queued = (await waitFor(workflowId, (workflow) => workflow.tasks.length === 2)).tasks[1]!;
    expect([queued.status, queued["startTime"], queued["queueWaitTime"]]).toEqual(["SCHEDULED", 0, 0]);
    const second = await pollOne("w_flaky");
    expect(second.taskId).not.toBe(first.taskId);
    expect(second).toMatchObject({ retryCount: 1, responseTimeoutSeconds: 60, retriedTaskId: first.taskId });
    expect(first).not.toHaveProperty("retriedTaskId");
    // Conductor's queueWaitTime: scheduled to polled.
    expect(second["queueWaitTime"]).toBe((second["startTime"] as number) - (second["scheduledTime"] as number));
    // The execution shows the polled retry with the same queueWaitTime as its poll answered.
    const polled = (await getWorkflow(workflowId)).tasks.at(-1)!;
    expect([polled.taskId, polled.status, polled["queueWaitTime"]]).toEqual([second.taskId, "IN_PROGRESS", second["queueWaitTime"]]);
    await report(second, "FAILED_WITH_TERMINAL_ERROR", {}, { reasonForIncompletion: "corrupt input" });
    const failed = await waitFor(workflowId, ["FAILED", "COMPLETED"]);
    expect(failed.status).toBe("FAILED");
    expect(failed.reasonForIncompletion).toContain("corrupt input");
  });

  it("a task definition's totalTimeoutSeconds bounds its attempts together: the one held at the deadline times out, and no retry follows", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_total", retryCount: 5, retryDelaySeconds: 0, responseTimeoutSeconds: 60, totalTimeoutSeconds: 2, ownerEmail: "t@example.com" }]);
    await register({ name: "w_total_flow", tasks: [simpleTask("w_total")] });
    const workflowId = await startWorkflow("w_total_flow");
    const first = await pollOne("w_total");
    await report(first, "FAILED", {}, { reasonForIncompletion: "flaky" });
    // Retried within the two seconds; the retry is held by its worker past the deadline (its alarm ends it).
    const second = await pollOne("w_total");
    expect(second).toMatchObject({ retryCount: 1 });
    const failed = await waitFor(workflowId, ["FAILED", "TIMED_OUT", "COMPLETED"]);
    // Ended as its last attempt did (Conductor's retry()): timed out.
    expect(failed.status).toBe("TIMED_OUT");
    expect(failed.tasks.map((task) => [task.retryCount, task.status])).toEqual([
      [0, "FAILED"],
      [1, "TIMED_OUT"],
    ]);
    // Conductor's reason, as its "Debugging workflows" guide lists it (the elapsed seconds are the alarm's, not asserted):
    // https://conductor-oss.github.io/conductor/devguide/how-tos/Workflows/debugging-workflows.html#understanding-reasonforincompletion
    expect(failed.tasks[1]!["reasonForIncompletion"]).toMatch(new RegExp(`^Task w_total/${second.taskId} exceeded total timeout of 2 seconds \\(elapsed \\d+ seconds across all attempts including retry delays\\)\\. Timeout policy: TIME_OUT_WF$`));
    // Its report, too late, changes nothing: the contract's 409 for a task no longer pending (Conductor answers 200).
    const before = JSON.stringify(await getWorkflow(workflowId));
    expect((await report(second, "COMPLETED")).status).toBe(409);
    expect(JSON.stringify(await getWorkflow(workflowId))).toBe(before);
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

  it("fallback domains (\"gpu,NO_DOMAIN\") put the task in the first domain a worker polled within 10 s, else in the last one listed", async () => {
    await register({ name: "w_fallback", tasks: [simpleTask("w_fb_task")] });
    const start = (domains: string) => apiOk<string>("POST", "/api/workflow", { name: "w_fallback", taskToDomain: { w_fb_task: domains } });
    const chosenDomain = async (workflowId: string) => {
      const task = await eventually(async () => (await getWorkflow(workflowId)).tasks[0], (found) => found?.["domain"] !== undefined, "a domain chosen");
      return task!["domain"];
    };
    // No worker has polled gpu: NO_DOMAIN, the last one listed, is the default queue.
    const toDefault = await start("gpu,NO_DOMAIN");
    const polledDefault = await pollOne("w_fb_task", { workerid: "fb-default" });
    expect(polledDefault["workflowInstanceId"]).toBe(toDefault);
    expect(polledDefault).not.toHaveProperty("domain");
    // None active and no NO_DOMAIN: the last domain, waiting for its workers to come.
    const toLast = await start("gpu, cpu");
    expect(await chosenDomain(toLast)).toBe("cpu");
    expect(await poll("w_fb_task", { workerid: "fb-default" })).toEqual([]);
    expect(await pollOne("w_fb_task", { workerid: "fb-cpu", domain: "cpu" })).toMatchObject({ workflowInstanceId: toLast, domain: "cpu" });
    // A gpu worker polls (and finds nothing): gpu is active now, and the next task goes there.
    expect(await poll("w_fb_task", { workerid: "fb-gpu", domain: "gpu" })).toEqual([]);
    await eventually(() => apiOk<Array<{ domain?: string }>>("GET", "/api/tasks/queue/polldata?taskType=w_fb_task"), (polls) => polls.some((entry) => entry.domain === "gpu"), "the gpu worker's poll recorded");
    const toGpu = await start("gpu,NO_DOMAIN");
    expect(await chosenDomain(toGpu)).toBe("gpu");
    expect(await pollOne("w_fb_task", { workerid: "fb-gpu", domain: "gpu" })).toMatchObject({ workflowInstanceId: toGpu, domain: "gpu" });
    // The first active one in the list's order: tpu has no workers, cpu's polled a moment ago.
    const toCpu = await start("tpu,cpu,gpu");
    expect(await chosenDomain(toCpu)).toBe("cpu");
    expect(await pollOne("w_fb_task", { workerid: "fb-cpu", domain: "cpu" })).toMatchObject({ workflowInstanceId: toCpu, domain: "cpu" });
  });

  it("a task whose domain choice an eviction interrupted is queued once the object wakes", async () => {
    await register({ name: "w_fb_evict", tasks: [simpleTask("w_fb_evict_task")] });
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "w_fb_evict", taskToDomain: { "*": "gpu, NO_DOMAIN" } });
    await eventually(() => queueSize("w_fb_evict_task"), (size) => size === 1, "the task queued");
    // As if the object had been evicted after the decision that scheduled the task was stored, before the queue answered.
    await runInDurableObject(executionStub(env, workflowId), (_instance, state) => {
      const sql = state.storage.sql;
      const row = sql.exec<{ task_id: string; data: string }>(`SELECT task_id, data FROM tasks`).one();
      const { pollable: _pollable, ...task } = JSON.parse(row.data) as TaskExecution;
      expect(task.domainChoices).toBeUndefined();
      sql.exec(`UPDATE tasks SET data = ? WHERE task_id = ?`, JSON.stringify({ ...task, domainChoices: ["gpu", "NO_DOMAIN"] }), row.task_id);
    });
    await abortAllDurableObjects();
    // Any request wakes it; reading it changes nothing, but the woken object finds the choice owed.
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "SCHEDULED" });
    const storedTask = () =>
      runInDurableObject(executionStub(env, workflowId), (_instance, state) => JSON.parse(state.storage.sql.exec<{ data: string }>(`SELECT data FROM tasks`).one().data) as TaskExecution);
    const chosen = await eventually(storedTask, (task) => task.domainChoices === undefined, "the choice made after the wake-up");
    expect(chosen).toMatchObject({ status: "SCHEDULED", pollable: true });
    expect(await pollOne("w_fb_evict_task")).toMatchObject({ workflowInstanceId: workflowId, status: "IN_PROGRESS" });
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

  it("a start's taskToDomain takes a domain given as a number or boolean as its text and a null one as no mapping, as Jackson reads Conductor's Map<String, String>; an object is a 400", async () => {
    await register({ name: "w_dom_number", tasks: [simpleTask("w_dom_number_task"), simpleTask("w_dom_number_other", "other_ref")] });
    // A Python client keying its domains by a shard number; the null one leaves its task to `*`.
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "w_dom_number", taskToDomain: { "*": "eu", w_dom_number_task: 7, w_dom_number_other: null } });
    expect((await getWorkflow(workflowId))["taskToDomain"]).toEqual({ "*": "eu", w_dom_number_task: "7" });
    const task = await pollOne("w_dom_number_task", { domain: "7" });
    expect(task).toMatchObject({ workflowInstanceId: workflowId, domain: "7" });
    await report(task, "COMPLETED");
    expect(await pollOne("w_dom_number_other", { domain: "eu" })).toMatchObject({ workflowInstanceId: workflowId, domain: "eu" });
    const refused = await api("POST", "/api/workflow", { name: "w_dom_number", taskToDomain: { w_dom_number_task: { zone: "eu" } } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path)).toEqual(["taskToDomain.w_dom_number_task"]);
  });

  it("a start's taskToDomain naming a domain longer than a poll may name (256 characters) is a 400 at its entry, in a fallback list too; one of 256 is polled", async () => {
    await register({ name: "w_dom_long", tasks: [simpleTask("w_dom_long_task")] });
    const long = "d".repeat(257);
    for (const taskToDomain of [{ "*": long }, { w_dom_long_task: `gpu, ${long}` }]) {
      const refused = await api("POST", "/api/workflow", { name: "w_dom_long", taskToDomain });
      expect(refused.status).toBe(400);
      const issues = ((await refused.json()) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors;
      expect(issues).toEqual([{ path: `taskToDomain.${Object.keys(taskToDomain)[0]}`, message: expect.stringContaining("at most 256 characters") }]);
    }
    // The poll's own limit, the same both ways.
    expect((await api("GET", `/api/tasks/poll/w_dom_long_task?domain=${long}`)).status).toBe(400);
    const longest = "d".repeat(256);
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "w_dom_long", taskToDomain: { "*": longest } });
    expect(await pollOne("w_dom_long_task", { domain: longest })).toMatchObject({ workflowInstanceId: workflowId, domain: longest });
    // The refused starts started nothing: once the accepted one is in the search index, it is the name's only execution.
    await waitForIndexRow(workflowId, "RUNNING");
    const started = await env.DB.prepare("SELECT workflow_id FROM executions WHERE workflow_name = ?").bind("w_dom_long").all<{ workflow_id: string }>();
    expect(started.results.map((row) => row.workflow_id)).toEqual([workflowId]);
  });

  it("a START_WORKFLOW's taskToDomain may be an expression giving the map, and a domain a number (its text), as Conductor's StartWorkflow reads its request", async () => {
    await register({ name: "w_dom_started", tasks: [simpleTask("w_dom_started_task"), simpleTask("w_dom_started_other")] });
    const kick = (ref: string, taskToDomain: JsonValue): JsonObject => ({ name: ref, taskReferenceName: ref, type: "START_WORKFLOW", inputParameters: { startWorkflow: { name: "w_dom_started", taskToDomain } } });
    await register({ name: "w_dom_starter", tasks: [kick("passed", "${workflow.input.domains}"), kick("numbered", { w_dom_started_task: "${workflow.input.shard}" })] });
    const starterId = await apiOk<string>("POST", "/api/workflow", { name: "w_dom_starter", input: { domains: { w_dom_started_task: "tenant-a" }, shard: 7 } });
    expect((await waitFor(starterId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    expect(await pollOne("w_dom_started_task", { domain: "tenant-a" })).toMatchObject({ domain: "tenant-a" });
    // The shard number is the domain "7": the task waits there, not in the default queue its workers would take it from.
    expect(await pollOne("w_dom_started_task", { domain: "7" })).toMatchObject({ domain: "7" });
    expect(await poll("w_dom_started_task")).toEqual([]);
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

  it("a paused workflow's worker keeps its task past responseTimeoutSeconds: its result counts; held to the resume, the resume times it out, and resumed in time its alarm still acts", async () => {
    // One task type per case: a retry queued by one case is not polled by the next.
    const held = async (name: string) => {
      await apiOk("POST", "/api/metadata/taskdefs", [{ name, ownerEmail: "a@b.c", retryCount: 1, retryDelaySeconds: 0, responseTimeoutSeconds: 1, timeoutSeconds: 0 }]);
      await register({ name, tasks: [simpleTask(name)] });
      const workflowId = await startWorkflow(name);
      const task = await pollOne(name);
      await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
      return { workflowId, task };
    };
    const pastResponseTimeout = (task: TaskJson) => new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(task["updateTime"]) + 1_000 - Date.now()) + 500));

    const reported = await held("w_pause_held_reported");
    await pastResponseTimeout(reported.task);
    expect((await getWorkflow(reported.workflowId)).tasks.map((task) => task.status)).toEqual(["IN_PROGRESS"]);
    expect((await report(reported.task, "COMPLETED", { done: true })).status).toBe(200);
    await apiOk("PUT", `/api/workflow/${reported.workflowId}/resume`);
    const done = await waitFor(reported.workflowId, ["COMPLETED", "FAILED", "TIMED_OUT"]);
    expect(done).toMatchObject({ status: "COMPLETED", output: { done: true } });

    // No report: the resume times it out at once, and it is retried.
    const silent = await held("w_pause_held_silent");
    await pastResponseTimeout(silent.task);
    await apiOk("PUT", `/api/workflow/${silent.workflowId}/resume`);
    const resumed = await getWorkflow(silent.workflowId);
    expect([resumed.status, resumed.tasks.map((task) => task.status)]).toEqual(["RUNNING", ["TIMED_OUT", "SCHEDULED"]]);
    // Conductor's reason word for word, as its "Debugging workflows" guide lists it:
    // https://conductor-oss.github.io/conductor/devguide/how-tos/Workflows/debugging-workflows.html#understanding-reasonforincompletion
    expect(resumed.tasks[0]!["reasonForIncompletion"]).toBe(`responseTimeout: 1 exceeded for the taskId: ${silent.task.taskId} with Task Definition: w_pause_held_silent`);

    // Resumed before it passed: its alarm times it out at its own time.
    const early = await held("w_pause_held_early");
    await apiOk("PUT", `/api/workflow/${early.workflowId}/resume`);
    await eventually(() => getWorkflow(early.workflowId), (workflow) => workflow.tasks.length === 2, "the response timeout's alarm after the resume");
    expect((await getWorkflow(early.workflowId)).tasks.map((task) => task.status)).toEqual(["TIMED_OUT", "SCHEDULED"]);
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

  it("a queued task that stops waiting (completed by hand, terminated, timed out) leaves its queue without any poll: the size says what waits", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_leave_timed", retryCount: 0, pollTimeoutSeconds: 1, responseTimeoutSeconds: 1, ownerEmail: "t@example.com" }]);
    await register({ name: "w_leave", tasks: [simpleTask("w_leave_task")] });
    await register({ name: "w_leave_timeout", tasks: [simpleTask("w_leave_timed")] });
    const ids = [await startWorkflow("w_leave"), await startWorkflow("w_leave"), await startWorkflow("w_leave")];
    const timing = await startWorkflow("w_leave_timeout");
    await eventually(() => queueSize("w_leave_task"), (size) => size === 3, "three queued");
    await eventually(() => queueSize("w_leave_timed"), (size) => size === 1, "one queued");
    await apiOk("POST", `/api/tasks/${ids[0]}/w_leave_task_ref/COMPLETED`, { by: "hand" });
    await apiOk("DELETE", `/api/workflow/${ids[1]}`, undefined, 200);
    await eventually(() => queueSize("w_leave_task"), (size) => size === 1, "only the one still waiting counted");
    // Not polled within pollTimeoutSeconds: it times out (the alarm), and leaves its queue.
    const timedOut = await waitFor(timing, ["FAILED", "TIMED_OUT", "COMPLETED"]);
    expect([timedOut.status, timedOut.tasks[0]!.status]).toEqual(["TIMED_OUT", "TIMED_OUT"]);
    await eventually(() => queueSize("w_leave_timed"), (size) => size === 0, "the timed-out task gone from its queue");
    // The one still waiting is handed out as before.
    expect(await pollOne("w_leave_task")).toMatchObject({ workflowInstanceId: ids[2] });
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

  it("a TaskResult's workerId is the task's worker from then on, as Conductor's updateTask sets it", async () => {
    await register({ name: "w_reporter", tasks: [simpleTask("w_reporter_task")] });
    const workflowId = await startWorkflow("w_reporter");
    const task = await pollOne("w_reporter_task");
    expect((await report(task, "COMPLETED", {}, { workerId: "worker-7" })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).tasks[0]).toMatchObject({ status: "COMPLETED", workerId: "worker-7" });
  });

  it("an update by reference name takes its worker from ?workerid=, as Orkes' clients send it (Conductor's updateTask(workflowId, taskRefName, status, workerid, output))", async () => {
    await register({ name: "w_ref_reporter", tasks: [simpleTask("w_ref_reporter_task", "work")] });
    const workflowId = await startWorkflow("w_ref_reporter");
    await pollOne("w_ref_reporter_task");
    const tooLong = await api("POST", `/api/tasks/${workflowId}/work/COMPLETED?workerid=${"h".repeat(257)}`, { done: true });
    expect(tooLong.status).toBe(400);
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", workerId: "worker-1" });
    expect((await api("POST", `/api/tasks/${workflowId}/work/COMPLETED?workerid=host-7`, { done: true })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).tasks[0]).toMatchObject({ status: "COMPLETED", workerId: "host-7", outputData: { done: true } });
    // Sent again (an answer missed): no running task to update, the contract's 409 (Orkes answers 404).
    for (const path of [`/api/tasks/${workflowId}/work/COMPLETED`, `/api/tasks/${workflowId}/work/COMPLETED/sync`]) {
      const again = await api("POST", path, { done: false });
      expect(again.status, path).toBe(409);
      expect(await again.json()).toMatchObject({ error: "CONFLICT", message: expect.stringContaining("Found no running task work of workflow") });
    }
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { done: true } });
  });

  it("of two updates by reference name met while the secrets its task's input names are read, the later finds no running task (409) or the retry the first brought", async () => {
    await apiOk("PUT", "/api/secrets/w_ref_race_token", JSON.stringify("race-value"));
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "w_ref_race_task", retryCount: 1, retryLogic: "FIXED", retryDelaySeconds: 0, responseTimeoutSeconds: 60, ownerEmail: "t@example.com" }]);
    await register({ name: "w_ref_race", tasks: [simpleTask("w_ref_race_task", "work", { token: "${workflow.secrets.w_ref_race_token}" })] });
    type Update = { status: "COMPLETED" | "FAILED"; output: JsonObject };
    // Both begin in one turn of the object, so each reads the secrets (a D1 read, during which other calls come in) before
    // either applies: as two requests meet when the second arrives during the first one's read.
    const together = (workflowId: string, first: Update, second: Update) =>
      runInDurableObject(executionStub(env, workflowId), (instance) => {
        const execution = instance as unknown as WorkflowExecution;
        return Promise.all([execution.updateTaskByRef("work", first.status, first.output), execution.updateTaskByRef("work", second.status, second.output)]);
      });

    const twice = await startWorkflow("w_ref_race");
    const [won, late] = await together(twice, { status: "COMPLETED", output: { by: "a" } }, { status: "COMPLETED", output: { by: "b" } });
    expect(won.ok).toBe(true);
    // The answer the second would get arriving after the first: the contract's 409.
    expect(late).toMatchObject({ ok: false, error: { kind: "CONFLICT", message: expect.stringContaining("Found no running task work of workflow") } });
    const done = await waitFor(twice, ["COMPLETED", "FAILED"]);
    expect(done.tasks.map((task) => [task.status, task.outputData])).toEqual([["COMPLETED", { by: "a" }]]);

    // A failure retried at once: the reference names the retry by the time the second applies, which it completes.
    const retried = await startWorkflow("w_ref_race");
    const answers = await together(retried, { status: "FAILED", output: { by: "a" } }, { status: "COMPLETED", output: { by: "b" } });
    expect(answers.map((answer) => answer.ok)).toEqual([true, true]);
    const after = await waitFor(retried, ["COMPLETED", "FAILED"]);
    expect(after.tasks.map((task) => [task.status, task.outputData])).toEqual([
      ["FAILED", { by: "a" }],
      ["COMPLETED", { by: "b" }],
    ]);
  });

  it("a WAIT completed by reference name with ?workerid= shows that worker too, as Conductor's Task does for any type", async () => {
    await register({ name: "w_ref_wait", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT" }] });
    const workflowId = await startWorkflow("w_ref_wait");
    expect((await api("POST", `/api/tasks/${workflowId}/hold/COMPLETED?workerid=approver-3`, { ok: true })).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).tasks[0]).toMatchObject({ taskType: "WAIT", status: "COMPLETED", workerId: "approver-3" });
  });

  it("the Python client's heartbeat (extendLease with no status) keeps the task, and a result sent again once the task has ended is a 409", async () => {
    await register({ name: "w_python_beat", tasks: [simpleTask("w_python_beat_task")] });
    const workflowId = await startWorkflow("w_python_beat");
    const task = await pollOne("w_python_beat_task");
    const beat = await api("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, extendLease: true });
    expect(beat.status).toBe(200);
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", workerId: "worker-1" });
    // Without extendLease a status is still needed.
    const missing = await api("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, outputData: {} });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ validationErrors: [{ path: "status", message: expect.stringContaining("unless extendLease is true") }] });
    // Fields a client leaves unset may come as null, as Jackson reads them.
    const nulls = { reasonForIncompletion: null, callbackAfterSeconds: null, logs: null, workerId: null };
    const done = await api("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, status: "COMPLETED", outputData: { n: 1 }, ...nulls });
    expect(done.status).toBe(200);
    const completed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(completed.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { n: 1 } });
    // The reporting worker is the task's worker from then on, as in Conductor.
    expect(completed.tasks[0]!["workerId"]).toBe("worker-1");
    // A result again (a client that did not hear the answer): the contract's 409 for a task no longer pending (Conductor
    // answers 200), and nothing changes.
    const again = await api("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, status: "FAILED", outputData: { n: 2 } });
    expect([again.status, ((await again.json()) as { error: string }).error]).toEqual([409, "CONFLICT"]);
    expect(await getWorkflow(workflowId)).toEqual(completed);
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
    expect((await getWorkflow(workflowId)).tasks[0]!.outputData).toEqual({ seen: "***" });
    const again = await pollOne("w_echo_task");
    expect((await report(again, "COMPLETED", { echo: token, header: `Bearer ${token}` })).status).toBe(200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks[0]!.outputData).toEqual({ echo: "***", header: "Bearer ***" });
    expect(JSON.stringify(done)).not.toContain("echo-s3cr3t-value");
  });

  it("a worker's result and log lines echoing the value it was handed stay masked after the secret is replaced or deleted", async () => {
    await apiOk("PUT", "/api/secrets/w_rotated_token", JSON.stringify("rotated-old-s3cr3t"));
    await register({ name: "w_rotated", tasks: [simpleTask("w_rotated_task", "echo", { token: "${workflow.secrets.w_rotated_token}" })] });
    const replaced = await startWorkflow("w_rotated");
    const first = await pollOne("w_rotated_task");
    expect(first.inputData).toEqual({ token: "rotated-old-s3cr3t" });
    // Rotated while the worker holds the old value, which it then quotes back (in its log and its result).
    await apiOk("PUT", "/api/secrets/w_rotated_token", JSON.stringify("rotated-new-s3cr3t"));
    expect((await api("POST", `/api/tasks/${first.taskId}/log`, JSON.stringify("called with rotated-old-s3cr3t"))).status).toBe(200);
    expect((await report(first, "COMPLETED", { echo: "rotated-old-s3cr3t" })).status).toBe(200);
    const done = await waitFor(replaced, ["COMPLETED", "FAILED"]);
    expect(done.tasks[0]!.outputData).toEqual({ echo: "***" });
    expect(await apiOk("GET", `/api/tasks/${first.taskId}/log`)).toMatchObject([{ log: "called with ***" }]);

    // Deleted while the worker holds it: its value is still what the worker may quote.
    const deleted = await startWorkflow("w_rotated");
    const second = await pollOne("w_rotated_task");
    expect(second.inputData).toEqual({ token: "rotated-new-s3cr3t" });
    await apiOk("DELETE", "/api/secrets/w_rotated_token");
    expect((await report(second, "COMPLETED", { echo: "Bearer rotated-new-s3cr3t" })).status).toBe(200);
    const after = await waitFor(deleted, ["COMPLETED", "FAILED"]);
    expect(after.tasks[0]!.outputData).toEqual({ echo: "Bearer ***" });
    expect(JSON.stringify([done, after])).not.toMatch(/rotated-(old|new)-s3cr3t/);
  });

  it("the values a task was handed go with it: a restart drops the old task's and the values no task keeps", async () => {
    await apiOk("PUT", "/api/secrets/w_given_dropped", JSON.stringify("dropped-s3cr3t"));
    await register({ name: "w_given_dropped", tasks: [simpleTask("w_given_dropped_task", "echo", { token: "${workflow.secrets.w_given_dropped}" })] });
    const workflowId = await startWorkflow("w_given_dropped");
    const polled = await pollOne("w_given_dropped_task");
    const given = () =>
      runInDurableObject(executionStub(env, workflowId), (_instance, state) => ({
        tasks: state.storage.sql.exec<{ task_id: string }>(`SELECT task_id FROM given_secrets`).toArray().map((row) => row.task_id),
        values: state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM given_values`).one().n,
      }));
    expect(await given()).toEqual({ tasks: [polled.taskId], values: 1 });
    expect((await api("DELETE", `/api/workflow/${workflowId}?reason=stop`)).status).toBeLessThan(300);
    expect((await api("POST", `/api/workflow/${workflowId}/restart`)).status).toBeLessThan(300);
    await eventually(() => getWorkflow(workflowId), (workflow) => workflow.status === "RUNNING" && !workflow.tasks.some((task) => task.taskId === polled.taskId), "the restart");
    expect(await given()).toEqual({ tasks: [], values: 0 });
    await apiOk("DELETE", "/api/secrets/w_given_dropped");
  });

  it("refuses bad polls and bad results with the contract's error, changing nothing", async () => {
    await register({ name: "w_bad", tasks: [simpleTask("w_bad_task")] });
    const workflowId = await startWorkflow("w_bad");
    await eventually(() => queueSize("w_bad_task"), (size) => size === 1, "the task queued");
    for (const query of ["count=0", "count=x", "timeout=-1", `workerid=${"w".repeat(257)}`]) {
      const response = await api("GET", `/api/tasks/poll/batch/w_bad_task?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    }
    expect(await queueSize("w_bad_task")).toBe(1);
    // More than one poll hands out, or a longer wait than it waits, is capped (a worker with more threads still polls).
    const task = await pollOne("w_bad_task", { count: "500", timeout: "60000", workerid: "many-threads" });
    expect(task).toMatchObject({ status: "IN_PROGRESS", workerId: "many-threads" });
    // Conductor's ack of a polled task (the Java TaskClient's ack, right after its poll): true, and nothing changes.
    const polled = JSON.stringify(await getWorkflow(workflowId));
    expect(await apiOk("POST", `/api/tasks/${task.taskId}/ack?workerid=many-threads`)).toBe(true);
    expect(JSON.stringify(await getWorkflow(workflowId))).toBe(polled);
    const before = JSON.stringify(await getWorkflow(workflowId));
    const badExtras: JsonObject[] = [{ callbackAfterSeconds: -1 }, { callbackAfterSeconds: "soon" }, { workerId: { id: 7 } }];
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
    await queue.ack(leased.map((task) => ({ ...task, outcome: "gone" as const })));
    expect(await queue.size()).toBe(1);
    expect((await queue.lease(1, 0, 30_000)).map((task) => task.taskId)).toEqual([entry.taskId]);
  });

  it("a poll's late word on a limited entry (given back, kept for later, handed out) leaves the reservation of the poll that leased it again alone", async () => {
    for (const late of ["giveBack", "later", "polled"] as const) {
      const name = `w_late_${late}_task`;
      const queue = taskQueueAt(env, workerQueueKey(name, undefined));
      const entry = (): WorkerQueueEntry => ({ queue: workerQueueKey(name, undefined), taskId: crypto.randomUUID(), workflowId: crypto.randomUUID(), priority: 0, visibleAt: Date.now(), limits: { maxHeld: 1 } });
      const [held, waiting] = [entry(), entry()];
      await queue.push([held]);
      // Poll A takes it for a lease of 1 ms, and its word is late: the lease runs out and poll B takes the task again.
      const [fromA] = await queue.lease(1, 0, 1);
      expect(fromA?.taskId).toBe(held.taskId);
      const [fromB] = await eventually(() => queue.lease(1, 0, 30_000), (leased) => leased.length === 1, `${late}: poll B's lease`);
      expect(fromB?.taskId).toBe(held.taskId);
      await queue.push([waiting]);
      // A's word comes now, about its own lease; then B's (the execution hands the task to one poll only).
      if (late === "giveBack") await queue.giveBack([fromA!]);
      else await queue.ack([{ ...fromA!, outcome: late }]);
      await queue.ack([{ ...fromB!, outcome: late === "polled" ? "gone" : "polled" }]);
      // One worker holds the one place: the other entry waits (before, A's not handing it out dropped B's reservation).
      expect(await queue.lease(1, 0, 30_000), late).toEqual([]);
    }
  });

  it("a queue push owed when the object was evicted is made when it wakes", async () => {
    await register({ name: "w_evict", tasks: [simpleTask("w_evict_task")] });
    const workflowId = await startWorkflow("w_evict");
    await eventually(() => queueSize("w_evict_task"), (size) => size === 1, "the task queued");
    const taskId = (await getWorkflow(workflowId)).tasks[0]!.taskId;
    // As if the decision that queued it had been stored and the object evicted before the push left: the queue lacks it.
    const queue = taskQueueAt(env, workerQueueKey("w_evict_task", undefined));
    await queue.ack((await queue.lease(1, 0, 30_000)).map((task) => ({ ...task, outcome: "gone" as const })));
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

  it("a task queued as its object was evicted (at the start, after a completion, after an IN_PROGRESS report) is pollable within a few seconds with no other request: the alarm comes back sooner while a push is owed", async () => {
    await register({ name: "w_evict_soon", tasks: [simpleTask("w_soon_a"), simpleTask("w_soon_b")] });
    // Only polls follow each eviction: they reach the queue, never the execution, so its alarm alone re-sends the push.
    // Bounded below the general safety alarm (5 s), which once left the task unpollable that long.
    const pollSoon = async (taskType: string) => (await eventually(() => poll(taskType), (tasks) => tasks.length > 0, `a ${taskType} task to poll after the eviction`, 3_000))[0]!;
    const workflowId = await startWorkflow("w_evict_soon");
    await abortAllDurableObjects();
    const first = await pollSoon("w_soon_a");
    expect(first).toMatchObject({ workflowInstanceId: workflowId, referenceTaskName: "w_soon_a_ref" });
    expect((await report(first, "IN_PROGRESS", { step: 1 }, { callbackAfterSeconds: 1 })).status).toBe(200);
    await abortAllDurableObjects();
    const again = await pollSoon("w_soon_a");
    expect(again.taskId).toBe(first.taskId);
    expect((await report(again, "COMPLETED", { done: 1 })).status).toBe(200);
    await abortAllDurableObjects();
    const second = await pollSoon("w_soon_b");
    expect((await report(second, "COMPLETED")).status).toBe(200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["w_soon_a_ref", "COMPLETED"], ["w_soon_b_ref", "COMPLETED"]]);
    // Each handed out once per queueing: nothing left to poll.
    expect(await poll("w_soon_a")).toEqual([]);
    expect(await poll("w_soon_b")).toEqual([]);
  });

  it("a task queued again for later (callbackAfterSeconds) as its object was evicted is pollable once it is due, with no other request", async () => {
    await register({ name: "w_evict_later", tasks: [simpleTask("w_evict_later")] });
    const workflowId = await startWorkflow("w_evict_later");
    const task = await pollOne("w_evict_later");
    // Past the safety alarm armed for the start's push, which would otherwise make the push this test is about.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // The push the report owes never arrives: the eviction then kills it, and only the execution's alarm makes it again.
    const { push } = TaskQueue.prototype;
    TaskQueue.prototype.push = async function (this: TaskQueue, entries) {
      if (entries.some((entry) => entry.taskId === task.taskId)) return new Promise<void>(() => undefined);
      return push.call(this, entries);
    };
    try {
      expect((await report(task, "IN_PROGRESS", { step: 1 }, { callbackAfterSeconds: 2 })).status).toBe(200);
      await abortAllDurableObjects();
    } finally {
      TaskQueue.prototype.push = push;
    }
    // Owed by the time a poll may take the task (2 s after the report), not a second after the report as for a task due
    // at once, and not after the general safety alarm (5 s) either: the bound lies between the two.
    const [again] = await eventually(() => poll("w_evict_later"), (tasks) => tasks.length > 0, "the task to poll once it is due", 4_000);
    expect(again!.taskId).toBe(task.taskId);
    expect((await report(again!, "COMPLETED")).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });
});
