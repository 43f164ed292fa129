/**
 * Task execution logs (Conductor's `TaskExecLog`): lines a worker sends with its TaskResult (`logs`) or alone
 * (`POST /api/tasks/{taskId}/log`), read back with `GET /api/tasks/{taskId}/log`.
 */
import { SELF, abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { executionStub } from "../../src/worker/executions";
import { call, createUser, orkes } from "./auth-helpers";
import { ADMIN_KEY, api, apiOk, eventually, getWorkflow, register, startWorkflow, waitFor, waitForIndexRow, type TaskJson } from "./helpers";

interface LogLine {
  log: string;
  taskId: string;
  createdTime: number;
}

const simpleTask = (name: string, ref: string, inputParameters: JsonObject = {}): JsonObject => ({ name, taskReferenceName: ref, type: "SIMPLE", inputParameters });
const wait = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });

/** Polls (bounded) until a task of that name comes out: a task is queued just after its workflow's start answers. */
async function pollOne(taskType: string): Promise<TaskJson> {
  const poll = () => apiOk<TaskJson[]>("GET", `/api/tasks/poll/batch/${encodeURIComponent(taskType)}?workerid=log-worker&count=1&timeout=0`);
  const [task] = await eventually(poll, (tasks) => tasks.length > 0, `a ${taskType} task to poll`);
  return task!;
}

/** A started execution of `name` whose first task a worker has polled, once the execution is searchable (tasks are found by id through it). */
async function polledTask(name: string, taskName: string, input: JsonObject = {}): Promise<{ workflowId: string; task: TaskJson }> {
  const workflowId = await startWorkflow(name, input);
  const task = await pollOne(taskName);
  await waitForIndexRow(workflowId, "RUNNING");
  return { workflowId, task };
}

function taskResult(task: TaskJson, status: string, extra: JsonObject = {}): JsonObject {
  return { workflowInstanceId: String(task["workflowInstanceId"]), taskId: task.taskId, status, outputData: {}, ...extra };
}

const logsOf = (taskId: string) => apiOk<LogLine[]>("GET", `/api/tasks/${taskId}/log`);

/** Posts one log line as the admin: a JSON string unless a Content-Type says otherwise. */
function postLog(taskId: string, body: string, contentType = "application/json"): Promise<Response> {
  return api("POST", `/api/tasks/${taskId}/log`, body, { "content-type": contentType });
}

describe("task logs", () => {
  it("drops entries without a line (the C# SDK's InProgress(callbackAfterSeconds) sends {taskId, createdTime}) and keeps the result", async () => {
    await register({ name: "tl_no_line", tasks: [simpleTask("tl_no_line_task", "work")] });
    const { workflowId, task } = await polledTask("tl_no_line", "tl_no_line_task");
    const kept = await api("POST", "/api/tasks", taskResult(task, "IN_PROGRESS", { callbackAfterSeconds: 60, logs: [{ taskId: task.taskId, createdTime: Date.now() }, { log: null }, { log: "real line" }] }));
    expect(kept.status).toBe(200);
    expect((await getWorkflow(workflowId)).tasks.find((one) => one.taskId === task.taskId)).toMatchObject({ status: "SCHEDULED", callbackAfterSeconds: 60 });
    expect((await logsOf(task.taskId)).map((line) => line.log)).toEqual(["real line"]);
    // A line that is no text is still refused (a number is its text, as Jackson reads the String field: see task-workers).
    expect((await api("POST", "/api/tasks", taskResult(task, "IN_PROGRESS", { logs: [{ log: { n: 42 } }] }))).status).toBe(400);
  });

  it("takes an entry given as bare text as that line (Conductor's TaskExecLog(String); the Ruby SDK's TaskRunner sends a failed task's error so)", async () => {
    await register({ name: "tl_text_entry", tasks: [simpleTask("tl_text_entry_task", "work")] });
    const { workflowId, task } = await polledTask("tl_text_entry", "tl_text_entry_task");
    // As the Ruby SDK's TaskRunner reports a worker that raised: its TaskResult#log pushes plain strings.
    const before = Date.now();
    const failed = await api("POST", "/api/tasks", taskResult(task, "FAILED_WITH_TERMINAL_ERROR", { reasonForIncompletion: "boom", workerId: "log-worker", logs: ["Error: RuntimeError: boom\nworker.rb:12", { log: "as an object" }], extendLease: false }));
    expect(failed.status).toBe(200);
    expect((await waitFor(workflowId, ["FAILED"])).tasks.find((one) => one.taskId === task.taskId)).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "boom" });
    const lines = await logsOf(task.taskId);
    expect(lines.map((line) => line.log)).toEqual(["Error: RuntimeError: boom\nworker.rb:12", "as an object"]);
    expect(lines[0]!.taskId).toBe(task.taskId);
    expect(lines[0]!.createdTime).toBeGreaterThanOrEqual(before);
  });

  it("takes a createdTime in seconds (the Python SDK's TaskRunner stamps a failed task's traceback with int(time.time())) as those seconds in milliseconds, not a moment of January 1970", async () => {
    await register({ name: "tl_seconds", tasks: [simpleTask("tl_seconds_task", "work")] });
    const { task } = await polledTask("tl_seconds", "tl_seconds_task");
    const seconds = Math.trunc(Date.now() / 1000);
    const logs: JsonObject[] = [{ log: "Traceback (most recent call last):", taskId: task.taskId, createdTime: seconds }, { log: "in milliseconds", createdTime: 1_700_000_000_000 }, { log: "the epoch itself", createdTime: 0 }];
    expect((await api("POST", "/api/tasks", taskResult(task, "FAILED", { reasonForIncompletion: "boom", logs }))).status).toBe(200);
    expect((await logsOf(task.taskId)).map((line) => [line.log, line.createdTime])).toEqual([
      ["Traceback (most recent call last):", seconds * 1000],
      ["in milliseconds", 1_700_000_000_000],
      ["the epoch itself", 0],
    ]);
  });

  it("takes a line, and shows the task, for a worker that names its task the moment it polled it (the execution's row is written as the task is queued)", async () => {
    await register({ name: "tl_at_once", tasks: [simpleTask("tl_at_once_task", "work")] });
    const workflowId = await startWorkflow("tl_at_once");
    // No wait for the search row: a worker polling every 100 ms gets a new workflow's first task well within the
    // half second a new execution's row may otherwise wait, and the Java worker may log before it works.
    const task = await pollOne("tl_at_once_task");
    expect((await postLog(task.taskId, JSON.stringify("starting"))).status).toBe(200);
    const shown = await api("GET", `/api/tasks/${task.taskId}`);
    expect(shown.status).toBe(200);
    expect(await shown.json()).toMatchObject({ taskId: task.taskId, workflowInstanceId: workflowId, status: "IN_PROGRESS" });
    expect((await logsOf(task.taskId)).map((line) => line.log)).toEqual(["starting"]);
  });

  it("stores the logs of TaskResults (POST /api/tasks, update-v2) and of POST …/log (JSON string, text/plain), answered in order", async () => {
    await register({ name: "tl_basic", tasks: [simpleTask("tl_basic_task", "work")] });
    const { workflowId, task } = await polledTask("tl_basic", "tl_basic_task");
    // A task nobody logged for has an empty log.
    expect(await logsOf(task.taskId)).toEqual([]);

    const before = Date.now();
    // As the official client's TaskRunner sends them (TaskContext.addLog): {log, createdTime, taskId}. The entry's
    // taskId is ignored, as in Conductor: a line belongs to the task the result reports.
    const progress = await api("POST", "/api/tasks", taskResult(task, "IN_PROGRESS", { callbackAfterSeconds: 0, logs: [{ log: "started", createdTime: 1_700_000_000_000, taskId: task.taskId }, { log: "step 1 of 2", taskId: crypto.randomUUID() }] }));
    expect(progress.status).toBe(200);
    const quoted = await postLog(task.taskId, JSON.stringify('a "quoted" line\nwith a newline'));
    expect(quoted.status).toBe(200);
    expect(await quoted.text()).toBe("");
    expect((await postLog(task.taskId, "plain text, not JSON: {", "text/plain; charset=utf-8")).status).toBe(200);

    const again = await pollOne("tl_basic_task");
    expect(again.taskId).toBe(task.taskId);
    const done = await api("POST", "/api/tasks/update-v2", taskResult(again, "COMPLETED", { logs: [{ log: "done", createdTime: 1_700_000_000_001.9 }] }));
    expect(done.status).toBe(204);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    // A finished task still takes lines (Conductor's clients may log after reporting).
    expect((await postLog(task.taskId, JSON.stringify("after the end"))).status).toBe(200);
    const after = Date.now();

    const logs = await logsOf(task.taskId);
    expect(logs.map((line) => line.log)).toEqual(["started", "step 1 of 2", 'a "quoted" line\nwith a newline', "plain text, not JSON: {", "done", "after the end"]);
    expect(logs.every((line) => line.taskId === task.taskId)).toBe(true);
    expect(logs[0]!.createdTime).toBe(1_700_000_000_000);
    expect(logs[4]!.createdTime).toBe(1_700_000_000_001);
    for (const index of [1, 2, 3, 5]) {
      expect(logs[index]!.createdTime).toBeGreaterThanOrEqual(before);
      expect(logs[index]!.createdTime).toBeLessThanOrEqual(after);
    }
    // Upper case names the same task.
    expect(await logsOf(task.taskId.toUpperCase())).toEqual(logs);
    // The Task JSON is unchanged by its log.
    expect((await getWorkflow(workflowId)).tasks[0]).not.toHaveProperty("logs");
  });

  it("a refused TaskResult stores none of its logs; a heartbeat's logs are ignored", async () => {
    await register({ name: "tl_refused", tasks: [simpleTask("tl_refused_task", "work")] });
    const { task } = await polledTask("tl_refused", "tl_refused_task");
    expect((await api("POST", "/api/tasks", taskResult(task, "COMPLETED", { logs: [{ log: "kept" }] }))).status).toBe(200);
    // The task is no longer pending: the contract's 409 (Conductor answers 200), changing nothing, and its lines go nowhere.
    const late = await api("POST", "/api/tasks", taskResult(task, "COMPLETED", { logs: [{ log: "late" }] }));
    expect(late.status).toBe(409);
    const lateV2 = await api("POST", "/api/tasks/update-v2", taskResult(task, "FAILED", { logs: [{ log: "late v2" }] }));
    expect(lateV2.status).toBe(409);
    // A task id this execution does not hold: 404, nothing stored anywhere.
    const unknown = await api("POST", "/api/tasks", { ...taskResult(task, "COMPLETED", { logs: [{ log: "nowhere" }] }), taskId: crypto.randomUUID() });
    expect(unknown.status).toBe(404);
    expect((await logsOf(task.taskId)).map((line) => line.log)).toEqual(["kept"]);

    // A heartbeat is no result: the rest of its TaskResult, logs included, is ignored (as Conductor does).
    await register({ name: "tl_lease", tasks: [simpleTask("tl_lease_task", "work")] });
    const leased = await polledTask("tl_lease", "tl_lease_task");
    expect((await api("POST", "/api/tasks", taskResult(leased.task, "IN_PROGRESS", { extendLease: true, logs: [{ log: "heartbeat" }] }))).status).toBe(200);
    expect(await logsOf(leased.task.taskId)).toEqual([]);
  });

  it("refuses bad logs with 400 (and bad media types with 415), storing nothing, the result included", async () => {
    await register({ name: "tl_bad", tasks: [simpleTask("tl_bad_task", "work")] });
    const { workflowId, task } = await polledTask("tl_bad", "tl_bad_task");
    const shown = JSON.stringify(await getWorkflow(workflowId));
    const badLogs: unknown[] = [
      "a line",
      { log: "not a list" },
      [{ log: [7] }],
      [7],
      [{ log: "ok", createdTime: -1 }],
      [{ log: "ok", createdTime: "now" }],
      [{ log: "ok", taskId: { id: 7 } }],
    ];
    for (const logs of badLogs) {
      for (const path of ["/api/tasks", "/api/tasks/update-v2"]) {
        const response = await api("POST", path, taskResult(task, "COMPLETED", { outputData: { changed: true }, logs: logs as JsonObject[] }));
        const label = `${path} ${JSON.stringify(logs).slice(0, 80)}`;
        expect(response.status, label).toBe(400);
        const error = (await response.json()) as { error: string; validationErrors: Array<{ path: string }> };
        expect(error.error, label).toBe("VALIDATION_ERROR");
        expect(error.validationErrors[0]!.path, label).toMatch(/^logs/);
      }
    }
    expect(JSON.stringify(await getWorkflow(workflowId))).toBe(shown);

    const badBodies: Array<[label: string, body: string, type: string, status: number]> = [
      ["an empty JSON string", JSON.stringify(""), "application/json", 400],
      ["no body", "", "application/json", 400],
      ["empty text", "", "text/plain", 400],
      ["too long", JSON.stringify("y".repeat(8 * 1024 + 1)), "application/json", 400],
      ["too long in bytes", "€".repeat(2_731), "text/plain", 400],
      ["XML", "<log>x</log>", "application/xml", 415],
      ["Latin-1 text", "caf\u00e9", "text/plain; charset=iso-8859-1", 415],
    ];
    for (const [label, body, type, status] of badBodies) {
      const response = await postLog(task.taskId, body, type);
      expect(response.status, label).toBe(status);
      expect(await response.json(), label).toMatchObject({ status });
    }
    // Exactly 8 KiB is a line.
    expect((await postLog(task.taskId, "z".repeat(8 * 1024), "text/plain")).status).toBe(200);
    expect((await logsOf(task.taskId)).map((line) => line.log.length)).toEqual([8 * 1024]);
    // As the SDKs send it again after a token refresh: the body without its Content-Type, read as JSON (bytes: a string
    // body would be given text/plain).
    const untyped = await SELF.fetch(`https://conductor.test/api/tasks/${task.taskId}/log`, { method: "POST", headers: { "x-api-key": ADMIN_KEY }, body: new TextEncoder().encode(JSON.stringify("untyped")) });
    expect(untyped.status).toBe(200);
    expect((await logsOf(task.taskId)).map((line) => line.log.slice(0, 7))).toEqual(["zzzzzzz", "untyped"]);
    // As Conductor's Java client sends a line (its String body raw, labelled application/json): the text as it is.
    for (const raw of ["resized 3 images", "42", JSON.stringify({ step: "resize" })]) expect((await postLog(task.taskId, raw, "application/json")).status, raw).toBe(200);
    expect((await logsOf(task.taskId)).slice(2).map((line) => line.log)).toEqual(["resized 3 images", "42", '{"step":"resize"}']);
  });

  it("keeps a TaskResult whose lines are too long or too many: each line cut to 8 KiB (bytes, masked first), the latest 1,000", async () => {
    const secret = "tl-long-s3cr3t";
    await apiOk("PUT", "/api/secrets/tl_long_token", JSON.stringify(secret));
    await register({ name: "tl_long", tasks: [simpleTask("tl_long_task", "work", { token: "${workflow.secrets.tl_long_token}" })] });
    const { workflowId, task } = await polledTask("tl_long", "tl_long_task");
    // Bytes, not characters: 2,731 × 3 bytes > 8 KiB. The secret straddles where the third line is cut.
    const long = [{ log: "x".repeat(8 * 1024 + 1) }, { log: "€".repeat(2_731) }, { log: `${"y".repeat(8 * 1024 - 40)}${secret}${"z".repeat(100)}` }];
    // A thrown error's long stack must not cost the worker its result.
    expect((await api("POST", "/api/tasks", taskResult(task, "IN_PROGRESS", { callbackAfterSeconds: 60, logs: long }))).status).toBe(200);
    const cut = (await logsOf(task.taskId)).map((line) => line.log);
    expect(cut.map((line) => new TextEncoder().encode(line).length <= 8 * 1024)).toEqual([true, true, true]);
    expect(cut[0]).toMatch(/^x+ … \(cut: 8193 bytes\)$/);
    expect(cut[1]).toMatch(/^€+ … \(cut: 8193 bytes\)$/);
    expect(cut[2]).toMatch(/^y+\*\*\*z* … \(cut: \d+ bytes\)$/);
    expect(cut[2]).not.toContain(secret.slice(0, 4));

    const many = Array.from({ length: 1_001 }, (_, index) => ({ log: `line ${index}` }));
    expect((await api("POST", "/api/tasks", taskResult(task, "COMPLETED", { outputData: { kept: true }, logs: many }))).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).tasks[0]!.outputData).toEqual({ kept: true });
    const stored = await logsOf(task.taskId);
    expect(stored).toHaveLength(1_000);
    expect([stored[0]!.log, stored.at(-1)!.log]).toEqual(["line 1", "line 1000"]);
  });

  it("answers 404 for a task no execution holds, one that is no UUID, and a task of a removed execution", async () => {
    await register({ name: "tl_gone", tasks: [wait("hold")] });
    const workflowId = await startWorkflow("tl_gone");
    await waitForIndexRow(workflowId, "RUNNING");
    const hold = (await getWorkflow(workflowId)).tasks[0]!;
    expect((await postLog(hold.taskId, JSON.stringify("waiting"))).status).toBe(200);
    const unknown = `${workflowId.slice(0, 19)}8000-000000000000`;
    for (const id of [unknown, crypto.randomUUID(), "not-a-task"]) {
      const read = await api("GET", `/api/tasks/${id}/log`);
      expect(read.status, id).toBe(404);
      expect(await read.json()).toMatchObject({ status: 404, error: "NOT_FOUND" });
      expect((await postLog(id, JSON.stringify("lost"))).status, id).toBe(404);
    }
    await apiOk("DELETE", `/api/workflow/${workflowId}`);
    expect((await logsOf(hold.taskId)).map((line) => line.log)).toEqual(["waiting"]);
    await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
    expect((await api("GET", `/api/tasks/${hold.taskId}/log`)).status).toBe(404);
    expect((await postLog(hold.taskId, JSON.stringify("too late"))).status).toBe(404);
  });

  it("a secret value the worker was handed is stored masked in its log lines, whichever way they come", async () => {
    const secret = "tl-s3cr3t/value+1";
    await apiOk("PUT", "/api/secrets/tl_token", JSON.stringify(secret));
    await register({ name: "tl_secret", tasks: [simpleTask("tl_secret_task", "call", { token: "${workflow.secrets.tl_token}" })] });
    const { workflowId, task } = await polledTask("tl_secret", "tl_secret_task");
    expect(task.inputData).toEqual({ token: secret });
    const logs = [{ log: `calling with ${secret}` }, { log: `GET /api?token=${encodeURIComponent(secret)}` }];
    expect((await api("POST", "/api/tasks/update-v2", taskResult(task, "IN_PROGRESS", { callbackAfterSeconds: 60, logs }))).status).toBe(204);
    expect((await postLog(task.taskId, JSON.stringify(`posted ${secret}`))).status).toBe(200);
    expect((await postLog(task.taskId, `plain ${secret}`, "text/plain")).status).toBe(200);
    // A failure's stack, as TaskRunner sends it when the worker throws.
    expect((await api("POST", "/api/tasks", taskResult(task, "FAILED_WITH_TERMINAL_ERROR", { reasonForIncompletion: `bad ${secret}`, logs: [{ log: `Error: bad ${secret}\n    at worker (w.js:1:1)` }] }))).status).toBe(200);
    const stored = await logsOf(task.taskId);
    expect(stored.map((line) => line.log)).toEqual(["calling with ***", "GET /api?token=***", "posted ***", "plain ***", "Error: bad ***\n    at worker (w.js:1:1)"]);
    // Not in the execution's storage either.
    const raw = await runInDurableObject(executionStub(env, workflowId), (_instance, state) => JSON.stringify(state.storage.sql.exec(`SELECT * FROM task_logs`).toArray()));
    expect(raw).not.toContain(secret);
    expect(raw).not.toContain(encodeURIComponent(secret));
  });

  it("reading needs what reading the task needs; posting, what reporting its result needs", async () => {
    await register({ name: "tl_rights", tasks: [simpleTask("tl_rights_task", "tl_rights_ref")] });
    const { task } = await polledTask("tl_rights", "tl_rights_task");
    const path = `/api/tasks/${task.taskId}/log`;
    const worker = await createUser("tl-worker", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:tl_rights_task" }] });
    const byRef = await createUser("tl-ref-worker", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:tl_rights_ref" }] });
    const reader = await createUser("tl-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:tl_rights" }] });
    const other = await createUser("tl-other", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:tl_basic" }, { action: "TASK_EXECUTE", scope: "task:tl_basic_task" }] });

    expect((await call("POST", path, orkes(worker.token), JSON.stringify("from the worker"))).status).toBe(200);
    expect((await call("POST", "/api/tasks", orkes(worker.token), taskResult(task, "IN_PROGRESS", { callbackAfterSeconds: 60, logs: [{ log: "with its result" }] }))).status).toBe(200);
    expect((await call("POST", path, orkes(byRef.token), JSON.stringify("by reference name"))).status).toBe(200);
    const read = await call("GET", path, orkes(worker.token));
    expect(read.status).toBe(200);
    expect(((await read.json()) as LogLine[]).map((line) => line.log)).toEqual(["from the worker", "with its result", "by reference name"]);
    expect((await call("GET", path, orkes(reader.token))).status).toBe(200);

    // Reading the workflow is not reporting its tasks.
    expect((await call("POST", path, orkes(reader.token), JSON.stringify("reader"))).status).toBe(403);
    for (const [method, body] of [["GET", undefined], ["POST", JSON.stringify("other")]] as const) {
      const refused = await call(method, path, orkes(other.token), body);
      expect(refused.status, method).toBe(403);
      expect(await refused.json()).toMatchObject({ status: 403, error: "PERMISSION_DENIED" });
    }
    expect((await call("GET", path, {})).status).toBe(401);
    expect((await logsOf(task.taskId)).map((line) => line.log)).toEqual(["from the worker", "with its result", "by reference name"]);
  });

  it("keeps a task's latest 1,000 lines; a restart drops the old tasks' logs", async () => {
    await register({ name: "tl_many", tasks: [simpleTask("tl_many_task", "work")] });
    const { workflowId, task } = await polledTask("tl_many", "tl_many_task");
    const thousand = Array.from({ length: 1_000 }, (_, index) => ({ log: `line ${index}` }));
    expect((await api("POST", "/api/tasks", taskResult(task, "IN_PROGRESS", { callbackAfterSeconds: 60, logs: thousand }))).status).toBe(200);
    expect((await postLog(task.taskId, JSON.stringify("line 1000"))).status).toBe(200);
    const kept = await logsOf(task.taskId);
    expect(kept).toHaveLength(1_000);
    expect(kept[0]!.log).toBe("line 1");
    expect(kept.at(-1)!.log).toBe("line 1000");

    await apiOk("DELETE", `/api/workflow/${workflowId}`);
    await apiOk("POST", `/api/workflow/${workflowId}/restart`, undefined, 204);
    const restarted = await eventually(() => getWorkflow(workflowId), (workflow) => workflow.tasks[0]?.taskId !== task.taskId, "the restart's new task");
    expect(await logsOf(restarted.tasks[0]!.taskId)).toEqual([]);
    expect((await api("GET", `/api/tasks/${task.taskId}/log`)).status).toBe(404);
    const rows = await runInDurableObject(executionStub(env, workflowId), (_instance, state) => state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM task_logs`).one().n);
    expect(rows).toBe(0);
  });

  it("keeps an execution's latest 20,000 lines across its tasks: the oldest go, whichever task they belong to", async () => {
    const refs = Array.from({ length: 21 }, (_, index) => `w${index}`);
    await register({
      name: "tl_execution_cap",
      tasks: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", inputParameters: {}, forkTasks: refs.map((ref) => [wait(ref)]) },
        { name: "join", taskReferenceName: "join", type: "JOIN", inputParameters: {}, joinOn: refs },
      ],
    });
    const workflowId = await startWorkflow("tl_execution_cap");
    const waiting = await waitFor(workflowId, (workflow) => refs.every((ref) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS")));
    const taskOf = (ref: string) => waiting.tasks.find((task) => task.referenceTaskName === ref)!;
    // Tasks are read by id once their execution is searchable.
    await waitForIndexRow(workflowId, "RUNNING");
    // 21 tasks of 1,000 lines each, in order: 21,000 in all.
    for (const ref of refs) {
      const lines = Array.from({ length: 1_000 }, (_, index) => ({ log: `${ref} line ${index}` }));
      expect((await api("POST", "/api/tasks", taskResult(taskOf(ref), "IN_PROGRESS", { logs: lines }))).status).toBe(200);
    }
    expect(await logsOf(taskOf("w0").taskId)).toEqual([]);
    const second = await logsOf(taskOf("w1").taskId);
    expect(second).toHaveLength(1_000);
    expect(second[0]!.log).toBe("w1 line 0");
    expect((await logsOf(taskOf("w20").taskId)).at(-1)!.log).toBe("w20 line 999");
    // One more line (for a task under its own cap) pushes out the execution's oldest, w1's first.
    expect((await postLog(taskOf("w0").taskId, JSON.stringify("w0 late line"))).status).toBe(200);
    expect((await logsOf(taskOf("w0").taskId)).map((line) => line.log)).toEqual(["w0 late line"]);
    expect((await logsOf(taskOf("w1").taskId))[0]!.log).toBe("w1 line 1");
    const rows = await runInDurableObject(executionStub(env, workflowId), (_instance, state) => state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM task_logs`).one().n);
    expect(rows).toBe(20_000);
    await apiOk("DELETE", `/api/workflow/${workflowId}`);
  });

  it("keeps what an INLINE script writes to its console in its task's log, as Conductor's ConsoleBridge does; one that logs nothing has none", async () => {
    const inline = (ref: string, expression: string, extra: JsonObject = {}): JsonObject => ({ name: ref, taskReferenceName: ref, type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression, ...extra } });
    await register({
      name: "tl_inline",
      tasks: [
        inline("price", "(function () { console.log('pricing', $.items.length, 'items'); console.error({ missing: $.missing ?? null }); return $.items.length * 2; })()", { items: "${workflow.input.items}" }),
        inline("quiet", "$.n + 1", { n: "${price.output.result}" }),
        { ...inline("check", "console.warn('checking', $.n); if ($.n > 3) throw new Error('too many'); 0", { n: "${price.output.result}" }), optional: true },
      ],
    });
    const before = Date.now();
    const workflowId = await startWorkflow("tl_inline", { items: [1, 2] });
    const run = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(run.status).toBe("COMPLETED");
    const [price, quiet, check] = run.tasks;
    const priced = await logsOf(price!.taskId);
    expect(priced.map((line) => line.log)).toEqual(['[Log] "pricing 2 items"', '[Error] "{"missing":null}"']);
    expect(priced.every((line) => line.taskId === price!.taskId && line.createdTime >= before && line.createdTime <= Date.now())).toBe(true);
    expect(await logsOf(quiet!.taskId)).toEqual([]);
    // A script that then fails keeps what it logged before.
    expect(check).toMatchObject({ status: "COMPLETED_WITH_ERRORS" });
    expect((await logsOf(check!.taskId)).map((line) => line.log)).toEqual(['[Warn] "checking 4"']);
    await abortAllDurableObjects();
    expect((await logsOf(price!.taskId)).map((line) => line.log)).toEqual(['[Log] "pricing 2 items"', '[Error] "{"missing":null}"']);
  });

  it("an execution stored without the log table takes lines; logs survive an eviction", async () => {
    await register({ name: "tl_evict", tasks: [wait("hold")] });
    const workflowId = await startWorkflow("tl_evict");
    await waitForIndexRow(workflowId, "RUNNING");
    const hold = (await getWorkflow(workflowId)).tasks[0]!;
    const hasLogTable = () =>
      runInDurableObject(executionStub(env, workflowId), (_instance, state) => state.storage.sql.exec(`SELECT 1 FROM sqlite_master WHERE name = 'task_logs'`).toArray().length > 0);
    // Reading stores nothing: the object still looks as one stored before logs were kept.
    expect(await logsOf(hold.taskId)).toEqual([]);
    expect(await hasLogTable()).toBe(false);
    await abortAllDurableObjects();
    expect((await postLog(hold.taskId, JSON.stringify("first"))).status).toBe(200);
    expect((await postLog(hold.taskId, "second", "text/plain")).status).toBe(200);
    expect(await hasLogTable()).toBe(true);
    await abortAllDurableObjects();
    expect((await logsOf(hold.taskId)).map((line) => line.log)).toEqual(["first", "second"]);
    await apiOk("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, {});
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    expect((await logsOf(hold.taskId)).map((line) => line.log)).toEqual(["first", "second"]);
  });
});
