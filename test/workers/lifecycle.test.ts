import { abortAllDurableObjects, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { WorkflowExecution } from "../../src/actors/workflow-execution";
import { executionStub } from "../../src/worker/executions";
import { TERMINATED_NOT_REMOVED } from "../../src/worker/workflow-actions";
import { MAX_JSON_DEPTH } from "../../src/engine/definition/checks";
import type { JsonObject } from "../../src/engine/model";
import { BULK_CONCURRENCY, BULK_SEARCH_MAX_CHARS, SUBREQUEST_LIMIT_REFUSAL } from "../../src/worker/routes/bulk";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, startedWithJoinWaiting, statusByRef, storedByExecutionObject, target, waitFor, waitForIndexRow, waitTask, type WorkflowJson } from "./helpers";

/** A workflow whose first task waits for the completion API, so tests can act while it is RUNNING. */
async function registerWaiting(name: string, after: string) {
  await register({
    name,
    tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true }), httpTask("after", { uri: target(`/count/${after}`), method: "GET" })],
  });
}

async function startWaiting(name: string, input: JsonObject = {}): Promise<string> {
  const workflowId = await startWorkflow(name, input);
  await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && (workflow.tasks[0]!.outputData as { statusCode?: number }).statusCode === 200);
  return workflowId;
}

async function expectError(method: string, path: string, status: number, error: string, body?: unknown) {
  const response = await api(method, path, body);
  expect(response.status).toBe(status);
  const json = (await response.json()) as { status: number; error: string; message: string };
  expect(json).toMatchObject({ status, error });
  expect(json.message.length).toBeGreaterThan(10);
  return json;
}

describe("terminate", () => {
  it("terminates a running workflow with a reason, cancels its pending task, and takes a second terminate as done already (Conductor's answer)", async () => {
    await registerWaiting("term", "term-after");
    const workflowId = await startWaiting("term");
    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=${encodeURIComponent("no longer needed")}`);
    const workflow = await getWorkflow(workflowId);
    expect(workflow.status).toBe("TERMINATED");
    expect(workflow["reasonForIncompletion"]).toBe("no longer needed");
    expect(workflow.tasks[0]!.status).toBe("CANCELED");
    expect(workflow["endTime"]).toBeGreaterThan(0);
    // A client retrying the terminate whose answer it missed: 200, and nothing changes (not the reason, not the times).
    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=again`);
    expect(await getWorkflow(workflowId)).toEqual(workflow);
    const late = await expectError("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, 409, "CONFLICT", {});
    expect(late.message).toMatch(/^Found no running task gate of workflow .* to update: its latest, .*, is CANCELED$/);
    expect(await hits("term-after")).toBe(0);
  });
});

describe("terminate without a reason", () => {
  it("records the reason Terminated, also for an empty one, in the execution and its search row (Conductor's leaves it null)", async () => {
    await registerWaiting("term_no_reason", "term-no-reason-after");
    for (const query of ["", "?reason="]) {
      const workflowId = await startWaiting("term_no_reason");
      await apiOk("DELETE", `/api/workflow/${workflowId}${query}`);
      expect((await getWorkflow(workflowId))["reasonForIncompletion"]).toBe("Terminated");
      await waitForIndexRow(workflowId, "TERMINATED");
      expect(await env.DB.prepare("SELECT reason FROM executions WHERE workflow_id = ?").bind(workflowId).first("reason")).toBe("Terminated");
    }
  });
});

describe("pause and resume", () => {
  it("a paused workflow records a completion but schedules nothing until resumed", async () => {
    await registerWaiting("pause", "pause-after");
    const workflowId = await startWaiting("pause");
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`); // idempotent, as in Conductor
    expect((await getWorkflow(workflowId)).status).toBe("PAUSED");
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, { ok: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const paused = await getWorkflow(workflowId);
    expect(paused.status).toBe("PAUSED");
    expect(paused.tasks.map((task) => task.status)).toEqual(["COMPLETED"]);
    expect(await hits("pause-after")).toBe(0);

    await apiOk("PUT", `/api/workflow/${workflowId}/resume`);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(await hits("pause-after")).toBe(1);
    await expectError("PUT", `/api/workflow/${workflowId}/resume`, 409, "CONFLICT");
    await expectError("PUT", `/api/workflow/${workflowId}/pause`, 409, "CONFLICT");
  });

  it("a task completed while paused shows executed false until the resume, as Conductor's decider does not run for a paused workflow; one ended before the pause keeps true", async () => {
    await register({ name: "pause_executed", tasks: [waitTask("first"), waitTask("second"), waitTask("third")] });
    const workflowId = await startWorkflow("pause_executed", {});
    await apiOk("POST", `/api/tasks/${workflowId}/first/COMPLETED`, {});
    await waitFor(workflowId, (workflow) => workflow.tasks.length === 2);
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
    await apiOk("POST", `/api/tasks/${workflowId}/second/COMPLETED`, {});
    const paused = await getWorkflow(workflowId);
    expect(paused.status).toBe("PAUSED");
    const shown = (workflow: WorkflowJson) => workflow.tasks.map((task) => [task.referenceTaskName, task.status, task["executed"]]);
    expect(shown(paused)).toEqual([
      ["first", "COMPLETED", true],
      ["second", "COMPLETED", false],
    ]);

    await apiOk("PUT", `/api/workflow/${workflowId}/resume`);
    const resumed = await waitFor(workflowId, (workflow) => workflow.tasks.length === 3);
    expect(shown(resumed)).toEqual([
      ["first", "COMPLETED", true],
      ["second", "COMPLETED", true],
      ["third", "IN_PROGRESS", false],
    ]);

    // Paused again: what the resume acted on stays true; only what ends in this pause shows false.
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
    await apiOk("POST", `/api/tasks/${workflowId}/third/COMPLETED`, {});
    expect(shown(await getWorkflow(workflowId))).toEqual([
      ["first", "COMPLETED", true],
      ["second", "COMPLETED", true],
      ["third", "COMPLETED", false],
    ]);
  });

  it("a task completed while paused keeps executed false when the workflow is terminated before the resume, as Conductor's, whose decider never acted on it; a retry acts on it and shows true", async () => {
    await register({
      name: "pause_executed_terminated",
      tasks: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[waitTask("left")], [waitTask("right")]] },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["left", "right"] },
      ],
    });
    const workflowId = await startWorkflow("pause_executed_terminated", {});
    await waitFor(workflowId, (workflow) => workflow.tasks.length === 4);
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
    await apiOk("POST", `/api/tasks/${workflowId}/left/COMPLETED`, {});
    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=stop`);
    const shown = (workflow: WorkflowJson) => workflow.tasks.map((task) => [task.referenceTaskName, task.status, task["executed"]]);
    const terminated = await getWorkflow(workflowId);
    expect(terminated.status).toBe("TERMINATED");
    expect(shown(terminated)).toEqual([
      ["fork", "COMPLETED", true],
      ["left", "COMPLETED", false],
      ["right", "CANCELED", false],
      ["join", "CANCELED", false],
    ]);

    // The retry reopens it (its canceled tasks run again): the completion made during the pause is acted on now.
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    const retried = await waitFor(workflowId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.some((task) => task.referenceTaskName === "right" && task.status === "IN_PROGRESS"));
    expect(retried.tasks.find((task) => task.referenceTaskName === "left")).toMatchObject({ status: "COMPLETED", executed: true });
  });

  it("terminated while paused, its task having completed meanwhile, refuses a retry (409, as Conductor's \"There are no retryable tasks!\"), which would go on to a task it never scheduled; a restart runs it", async () => {
    await registerWaiting("pause_terminated", "pause-terminated-after");
    const workflowId = await startWaiting("pause_terminated");
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, { ok: true });
    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=stop`);
    const terminated = await getWorkflow(workflowId);
    expect([terminated.status, terminated.tasks.map((task) => task.status)]).toEqual(["TERMINATED", ["COMPLETED"]]);
    const refused = await expectError("POST", `/api/workflow/${workflowId}/retry`, 409, "CONFLICT");
    expect(refused.message).toMatch(/no task failed or was canceled \(it was terminated with every task ended: stop\); restart or rerun it/);
    expect(await getWorkflow(workflowId)).toEqual(terminated);
    expect(await hits("pause-terminated-after")).toBe(0);
    expect((await api("POST", `/api/workflow/${workflowId}/restart`)).status).toBe(204);
    expect((await getWorkflow(workflowId)).status).toBe("RUNNING");
  });

  it("a task definition timeout with TIME_OUT_WF that passes while paused waits for the resume: a completion meanwhile counts; without one the resume times the workflow out", async () => {
    // HUMAN: no timeout of its own, so only its task definition's timeoutSeconds (1 s, TIME_OUT_WF) can time it out.
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "pause_timed_human", ownerEmail: "a@b.c", retryCount: 0, timeoutSeconds: 1, responseTimeoutSeconds: 1, timeoutPolicy: "TIME_OUT_WF" }]);
    await register({ name: "pause_timed", tasks: [{ name: "pause_timed_human", taskReferenceName: "review", type: "HUMAN" }, httpTask("after", { uri: target("/count/pause-timed-after"), method: "GET" })] });
    const startPaused = async () => {
      const workflowId = await startWorkflow("pause_timed");
      const started = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
      await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
      // Past the task's timeout (and its alarm, had one been set for it).
      const due = Number(started.tasks[0]!["startTime"]) + 1_000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now()) + 500));
      return workflowId;
    };

    const completed = await startPaused();
    expect((await getWorkflow(completed)).tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["review:IN_PROGRESS"]);
    expect((await getWorkflow(completed)).status).toBe("PAUSED");
    await apiOk("POST", `/api/tasks/${completed}/review/COMPLETED`, { approved: true });
    await apiOk("PUT", `/api/workflow/${completed}/resume`);
    const done = await waitFor(completed, ["COMPLETED", "FAILED", "TIMED_OUT"]);
    expect(done.status).toBe("COMPLETED");
    expect(await hits("pause-timed-after")).toBe(1);

    const untouched = await startPaused();
    expect((await getWorkflow(untouched)).status).toBe("PAUSED");
    await apiOk("PUT", `/api/workflow/${untouched}/resume`);
    // Timed out by the resume itself, as Conductor's resume decides at once.
    const timedOut = await getWorkflow(untouched);
    expect(timedOut.status).toBe("TIMED_OUT");
    expect(timedOut.tasks[0]).toMatchObject({ status: "TIMED_OUT" });
    expect(timedOut["reasonForIncompletion"]).toMatch(/^Task review timed out: Task timed out after \d+ seconds\. Timeout configured as 1 seconds\. Timeout policy configured to TIME_OUT_WF$/);
    expect(await hits("pause-timed-after")).toBe(1);
  });

  it("resume of a running workflow is a 409", async () => {
    await registerWaiting("resume_running", "resume-running-after");
    const workflowId = await startWaiting("resume_running");
    await expectError("PUT", `/api/workflow/${workflowId}/resume`, 409, "CONFLICT");
    expect((await getWorkflow(workflowId)).status).toBe("RUNNING");
  });
});

describe("retry, restart, rerun", () => {
  it("retry resumes a failed workflow from the failed task; restart runs it from the start", async () => {
    await register({
      name: "retry_me",
      tasks: [httpTask("one", { uri: target("/count/retry-me-one"), method: "GET" }), httpTask("two", { uri: target("/flaky/retry-me-two?fail=1"), method: "GET" })],
    });
    const workflowId = await startWorkflow("retry_me");
    const failed = await waitFor(workflowId, ["FAILED", "COMPLETED"]);
    expect(failed.status).toBe("FAILED");
    // As Conductor's Workflow: the failed tasks' names beside their reference names, and no retry yet.
    expect(failed).toMatchObject({ failedReferenceTaskNames: ["two"], failedTaskNames: ["two"], lastRetriedTime: 0 });
    await expectError("POST", `/api/workflow/${workflowId}/restart?useLatestDefinitions=maybe`, 400, "VALIDATION_ERROR");

    // 204 No Content, as Conductor's WorkflowResource answers retry, restart and resetcallbacks (@ResponseStatus(NO_CONTENT)).
    const retry = await api("POST", `/api/workflow/${workflowId}/retry`);
    expect([retry.status, retry.headers.get("content-type"), await retry.text()]).toEqual([204, null, ""]);
    const retried = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(retried.status).toBe("COMPLETED");
    expect(retried).not.toHaveProperty("reasonForIncompletion");
    expect(retried.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["one", "COMPLETED"],
      ["two", "FAILED"],
      ["two", "COMPLETED"],
    ]);
    // The new attempt names the one it retries, as Conductor's retriedTaskId does; the first attempt names none.
    expect(retried.tasks[2]!["retriedTaskId"]).toBe(retried.tasks[1]!.taskId);
    expect(retried.tasks[1]).not.toHaveProperty("retriedTaskId");
    // Conductor's taskToBeRescheduled sets `executed` on the task a retry request replaces, as its decider does on
    // those it moved on from.
    expect(retried.tasks.every((task) => task["executed"] === true)).toBe(true);
    expect(await hits("retry-me-one")).toBe(1);
    expect(retried["lastRetriedTime"]).toBeGreaterThanOrEqual(failed.endTime as number);
    await expectError("POST", `/api/workflow/${workflowId}/retry`, 409, "CONFLICT");

    await apiOk("POST", `/api/workflow/${workflowId}/restart`, undefined, 204);
    const restarted = await waitFor(workflowId, (workflow) => workflow.status === "COMPLETED" && workflow.tasks.length === 2);
    expect(restarted.tasks.map((task) => task.status)).toEqual(["COMPLETED", "COMPLETED"]);
    expect(restarted["lastRetriedTime"]).toBe(0);
    // A restart is a new run: created and started anew, as Conductor's restart sets both.
    expect(restarted["createTime"]).toBeGreaterThan(failed["createTime"] as number);
    expect(restarted["createTime"]).toBe(restarted["startTime"]);
    expect(await hits("retry-me-one")).toBe(2);
  });

  it("a task the decider retried shows executed false, as Conductor's DeciderService.retry() leaves it", async () => {
    await register({ name: "retried_by_decider", tasks: [httpTask("flaky", { uri: target("/flaky/retried-by-decider?fail=1"), method: "GET" }, { retryCount: 1, retryDelaySeconds: 0 })] });
    const done = await waitFor(await startWorkflow("retried_by_decider"), ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task.status, task["retried"], task["executed"]])).toEqual([
      ["FAILED", true, false],
      ["COMPLETED", false, true],
    ]);
  });

  it("restart and retry of a running workflow are 409s that change nothing", async () => {
    await registerWaiting("restart_running", "restart-running-after");
    const workflowId = await startWaiting("restart_running");
    const before = await getWorkflow(workflowId);
    // Conductor's `executed`: false while the task runs, true once it ended.
    expect(before.tasks.map((task) => [task.status, task["executed"]])).toEqual([["IN_PROGRESS", false]]);
    await expectError("POST", `/api/workflow/${workflowId}/restart`, 409, "CONFLICT");
    await expectError("POST", `/api/workflow/${workflowId}/retry`, 409, "CONFLICT");
    await expectError("POST", `/api/workflow/${workflowId}/rerun`, 409, "CONFLICT", { reRunFromTaskId: before.tasks[0]!["taskId"] });
    expect(await getWorkflow(workflowId)).toEqual(before);
  });

  it("every recovery action a workflow's status refuses is a 409 naming that status that changes neither the execution nor its search row (where Conductor answers some with a 404 or a 500)", async () => {
    await registerWaiting("refused_actions", "refused-actions-after");
    await register({ name: "refused_actions_timing_out", timeoutSeconds: 1, timeoutPolicy: "TIME_OUT_WF", tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })] });
    const actions = {
      pause: ["PUT", "pause"],
      resume: ["PUT", "resume"],
      terminate: ["DELETE", ""],
      retry: ["POST", "retry?resumeSubworkflowTasks=true"],
      restart: ["POST", "restart?useLatestDefinitions=true"],
      rerun: ["POST", "rerun"],
      "skip task after of": ["PUT", "skiptask/after"],
      "jump to task gate in": ["POST", "jump/gate"],
      "reset the callbacks of": ["POST", "resetcallbacks"],
    } as const;
    const refusedIn: Record<string, (keyof typeof actions)[]> = {
      RUNNING: ["resume", "retry", "restart", "rerun"],
      PAUSED: ["retry", "restart", "rerun", "skip task after of"],
      COMPLETED: ["pause", "resume", "terminate", "retry", "skip task after of", "jump to task gate in", "reset the callbacks of"],
      FAILED: ["pause", "resume", "terminate", "skip task after of", "jump to task gate in", "reset the callbacks of"],
      TIMED_OUT: ["pause", "resume", "terminate", "skip task after of", "jump to task gate in", "reset the callbacks of"],
      TERMINATED: ["pause", "resume", "skip task after of", "jump to task gate in", "reset the callbacks of"],
    };
    const searchRowOf = (workflowId: string) => env.DB.prepare("SELECT * FROM executions WHERE workflow_id = ?").bind(workflowId).first();
    for (const [status, refused] of Object.entries(refusedIn)) {
      const workflowId = await startWaiting(status === "TIMED_OUT" ? "refused_actions_timing_out" : "refused_actions");
      if (status === "PAUSED") await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
      if (status === "COMPLETED" || status === "FAILED") await apiOk("POST", `/api/tasks/${workflowId}/gate/${status}`, {});
      if (status === "TERMINATED") await apiOk("DELETE", `/api/workflow/${workflowId}`);
      await waitFor(workflowId, [status]);
      await waitForIndexRow(workflowId, status);
      const [before, rowBefore] = [await getWorkflow(workflowId), await searchRowOf(workflowId)];
      for (const action of refused) {
        const [method, path] = actions[action];
        const answer = await expectError(method, `/api/workflow/${workflowId}${path === "" ? "" : `/${path}`}`, 409, "CONFLICT", method === "POST" ? {} : undefined);
        expect(answer.message).toBe(`Cannot ${action} workflow ${workflowId}: its status is ${status}`);
      }
      expect(await getWorkflow(workflowId)).toEqual(before);
      expect(await searchRowOf(workflowId)).toEqual(rowBefore);
    }
  });

  it("restart with useLatestDefinitions of a running workflow with no registered definition (started inline) is a 409, as Conductor asks the state first; ended, a 404", async () => {
    const inline = { name: "restart_running_inline", tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })] };
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "restart_running_inline", workflowDef: inline });
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    const refused = await expectError("POST", `/api/workflow/${workflowId}/restart?useLatestDefinitions=true`, 409, "CONFLICT");
    expect(refused.message).toBe(`Cannot restart workflow ${workflowId}: its status is RUNNING`);
    expect(await bulk("POST", "restart", [workflowId], "?useLatestDefinitions=true")).toEqual({ bulkSuccessfulResults: [], bulkErrorResults: { [workflowId]: refused.message } });
    await apiOk("DELETE", `/api/workflow/${workflowId}`);
    await expectError("POST", `/api/workflow/${workflowId}/restart?useLatestDefinitions=true`, 404, "NOT_FOUND");
    expect((await getWorkflow(workflowId)).status).toBe("TERMINATED");
  });

  it("restart with useLatestDefinitions picks up a changed definition", async () => {
    await register({ name: "restart_latest", tasks: [httpTask("v", { uri: target("/count/restart-latest-v1"), method: "GET" })] });
    const workflowId = await startWorkflow("restart_latest");
    await waitFor(workflowId, ["COMPLETED"]);
    await register({ name: "restart_latest", version: 2, tasks: [httpTask("v", { uri: target("/count/restart-latest-v2"), method: "GET" })] });
    await apiOk("POST", `/api/workflow/${workflowId}/restart?useLatestDefinitions=true`, undefined, 204);
    const restarted = await waitFor(workflowId, (workflow) => workflow.status === "COMPLETED" && workflow["workflowVersion"] === 2);
    expect(restarted.tasks).toHaveLength(1);
    expect(await hits("restart-latest-v2")).toBe(1);
  });

  it("restartable false: restarting a COMPLETED execution is a 409 (single and bulk, with or without useLatestDefinitions) that changes nothing; a FAILED one restarts", async () => {
    await register({ name: "not_restartable", restartable: false, tasks: [httpTask("call", { uri: target("/flaky/not-restartable-${workflow.input.key}?fail=${workflow.input.fail}"), method: "GET" })] });
    expect(await apiOk("GET", "/api/metadata/workflow/not_restartable")).toMatchObject({ restartable: false });
    const completedId = await startWorkflow("not_restartable", { key: "ok", fail: 0 });
    const failedId = await startWorkflow("not_restartable", { key: "failing", fail: 1 });
    const completed = await waitFor(completedId, ["COMPLETED", "FAILED"]);
    expect(completed.status).toBe("COMPLETED");
    expect((await waitFor(failedId, ["COMPLETED", "FAILED"])).status).toBe("FAILED");

    const refused = await expectError("POST", `/api/workflow/${completedId}/restart`, 409, "CONFLICT");
    expect(refused.message).toContain("non restartable");
    await expectError("POST", `/api/workflow/${completedId}/restart?useLatestDefinitions=true`, 409, "CONFLICT");
    expect(await bulk("POST", "restart", [completedId])).toEqual({ bulkSuccessfulResults: [], bulkErrorResults: { [completedId]: refused.message } });
    expect(await getWorkflow(completedId)).toEqual(completed);
    expect(await hits("not-restartable-ok")).toBe(1);

    await apiOk("POST", `/api/workflow/${failedId}/restart`, undefined, 204);
    const restarted = await waitFor(failedId, ["COMPLETED"]);
    expect(restarted.tasks.map((task) => task.status)).toEqual(["COMPLETED"]);
  });

  it("rerun from a task keeps earlier outputs, discards later tasks and runs from there with new input", async () => {
    await register({
      name: "rerun_me",
      tasks: [
        httpTask("a", { uri: target("/count/rerun-a"), method: "GET" }),
        httpTask("b", { uri: target("/count/rerun-b?tag=${workflow.input.tag}"), method: "GET" }),
        httpTask("c", { uri: target("/count/rerun-c"), method: "GET" }),
      ],
    });
    const workflowId = await startWorkflow("rerun_me", { tag: "first" });
    const first = await waitFor(workflowId, ["COMPLETED"]);
    const [a, b] = first.tasks;
    await expectError("POST", `/api/workflow/${workflowId}/rerun`, 400, "VALIDATION_ERROR", { reRunFromTaskId: "no-such-task" });
    // An empty body is Conductor's "rerun the whole workflow" (see conductor-client.test.ts); an empty id is not.
    await expectError("POST", `/api/workflow/${workflowId}/rerun`, 400, "VALIDATION_ERROR", { reRunFromTaskId: "" });
    // Nor is a JSON array: valibot's object schema alone takes one as {}, which would rerun the whole workflow.
    await expectError("POST", `/api/workflow/${workflowId}/rerun`, 400, "VALIDATION_ERROR", [{ reRunFromTaskId: b!["taskId"] }]);
    expect((await getWorkflow(workflowId)).tasks).toEqual(first.tasks);

    const rerunId = await apiOk<string>("POST", `/api/workflow/${workflowId}/rerun`, { reRunFromTaskId: b!["taskId"], workflowInput: { tag: "second" } });
    expect(rerunId).toBe(workflowId);
    const second = await waitFor(workflowId, (workflow) => workflow.status === "COMPLETED" && (workflow.tasks[1]!.outputData as { response?: { body: { query: { tag: string } } } }).response?.body.query.tag === "second");
    expect(second.tasks).toHaveLength(3);
    expect(second.tasks[0]).toEqual(a);
    expect(second.tasks[1]!["taskId"]).toBe(b!["taskId"]);
    expect(second.input).toEqual({ tag: "second" });
    expect(await hits("rerun-a")).toBe(1);
    expect(await hits("rerun-b")).toBe(2);
    expect(await hits("rerun-c")).toBe(2);
  });
});

describe("remove", () => {
  it("removes a running workflow as Conductor does, terminating it first so that nothing it started runs on; removes a finished one and its search row", async () => {
    await registerWaiting("remove_me", "remove-after");
    const running = await startWaiting("remove_me");
    await waitForIndexRow(running, "RUNNING");
    await apiOk("DELETE", `/api/workflow/${running}/remove`);
    await expectError("GET", `/api/workflow/${running}`, 404, "NOT_FOUND");
    await eventually(() => env.DB.prepare("SELECT 1 FROM executions WHERE workflow_id = ?").bind(running).first(), (row) => row === null, "the removed execution's search row gone");
    // The call its waiting task would have made once completed is never made.
    expect(await hits("remove-after")).toBe(0);

    const workflowId = await startWaiting("remove_me");
    await apiOk("DELETE", `/api/workflow/${workflowId}`);
    await waitFor(workflowId, ["TERMINATED"]);
    // The index row exists (written off the hot path) before removal.
    await waitForIndexRow(workflowId, "TERMINATED");
    await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
    await expectError("GET", `/api/workflow/${workflowId}`, 404, "NOT_FOUND");
    expect(await env.DB.prepare("SELECT 1 FROM executions WHERE workflow_id = ?").bind(workflowId).first()).toBeNull();
    await expectError("DELETE", `/api/workflow/${workflowId}/remove`, 404, "NOT_FOUND");
  });

  it("a restart arriving while a remove waits for the search-row writer is refused (409), and the removed execution stays gone from search", async () => {
    await register({ name: "remove_vs_restart", tasks: [httpTask("only", { uri: target("/count/remove-vs-restart"), method: "GET" })] });
    const workflowId = await startWorkflow("remove_vs_restart");
    await waitFor(workflowId, ["COMPLETED"]);
    await waitForIndexRow(workflowId, "COMPLETED");
    // Called on the object itself, so the restart lands exactly while the remove awaits its first (writer) call.
    const [removed, restarted] = await runInDurableObject(executionStub(env, workflowId), async (instance) => {
      const execution = instance as unknown as WorkflowExecution;
      const removing = execution.remove();
      const restarting = execution.command({ type: "restart" });
      return Promise.all([removing, restarting]);
    });
    expect(removed).toEqual({ ok: true, value: null });
    expect(restarted).toMatchObject({ ok: false, error: { kind: "CONFLICT" } });
    // The removal went through: nothing is left to restart.
    await expectError("POST", `/api/workflow/${workflowId}/restart`, 404, "NOT_FOUND");
    // Let any background search-row write that might still come land before looking.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await expectError("GET", `/api/workflow/${workflowId}`, 404, "NOT_FOUND");
    expect(await env.DB.prepare("SELECT status FROM executions WHERE workflow_id = ?").bind(workflowId).first()).toBeNull();
    expect(await hits("remove-vs-restart")).toBe(1);
  });

  it("a remove evicted after deleting the search row but before the storage is finished by the next wake-up, which refuses reopening meanwhile", async () => {
    await register({ name: "remove_evicted", tasks: [httpTask("only", { uri: target("/echo/remove-evicted"), method: "GET" })] });
    const workflowId = await startWorkflow("remove_evicted");
    await waitFor(workflowId, ["COMPLETED"]);
    await waitForIndexRow(workflowId, "COMPLETED");
    // remove's first await after the row's deletion is deleteAll (which takes the alarm with it): the object is
    // evicted right there, its storage and its removal's safety alarm still in place.
    await runInDurableObject(executionStub(env, workflowId), (_instance, state) => {
      const storage = state.storage as unknown as { deleteAll: () => Promise<void> };
      storage.deleteAll = () => {
        state.abort("evicted (test)");
        return Promise.resolve();
      };
    });
    expect((await api("DELETE", `/api/workflow/${workflowId}/remove`)).status).toBe(500);
    expect(await env.DB.prepare("SELECT status FROM executions WHERE workflow_id = ?").bind(workflowId).first()).toBeNull();
    // The woken object knows the removal began: it neither reopens the execution nor shows it, and finishes the removal.
    await expectError("POST", `/api/workflow/${workflowId}/restart`, 409, "CONFLICT");
    await expectError("GET", `/api/workflow/${workflowId}`, 404, "NOT_FOUND");
    // Nothing of the execution is left, only the tombstone that refuses a late start of the removed id.
    await eventually(() => storedByExecutionObject(workflowId), (left) => left.executionRows === 0 && left.metaKeys.join() === "removed", "the removal's storage deletion");
    expect(await env.DB.prepare("SELECT status FROM executions WHERE workflow_id = ?").bind(workflowId).first()).toBeNull();
  });
});

describe("remove while background work is owed", () => {
  const subTask = (ref: string, child: string) => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: child } } });
  const gateTask = (ref: string) => httpTask(ref, { uri: target(`/echo/${ref}`), method: "GET" }, { asyncComplete: true });
  const terminal = ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"];

  /** A parent running a child that waits at `gate`; answers both ids. */
  async function parentAndChild(prefix: string) {
    await register({ name: `${prefix}_child`, tasks: [gateTask(`${prefix}_gate`)] });
    await register({ name: `${prefix}_parent`, tasks: [subTask("sub", `${prefix}_child`)] });
    const parentId = await startWorkflow(`${prefix}_parent`);
    const first = await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    const childId = String(first.tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    return { parentId, childId };
  }

  const removed = (workflowId: string) => eventually(() => api("DELETE", `/api/workflow/${workflowId}/remove`).then((response) => response.status), (status) => status === 200, `the removal of ${workflowId}`, 8_000);

  it("a finished child whose notice to its parent is still owed refuses removal (409) until the parent has heard, so the parent completes", async () => {
    const { parentId, childId } = await parentAndChild("owed_notice");
    // The parent's object fails the notices (a transient RPC error) until the end of the try: the child owes it.
    const { childFinished } = WorkflowExecution.prototype;
    let refused = 0;
    WorkflowExecution.prototype.childFinished = async function (this: WorkflowExecution, notice) {
      if (notice.subWorkflowId === childId) {
        refused++;
        throw new Error("Network connection lost (test)");
      }
      return childFinished.call(this, notice);
    };
    try {
      await apiOk("POST", `/api/tasks/${childId}/owed_notice_gate/COMPLETED`, {});
      await waitFor(childId, ["COMPLETED"]);
      await eventually(async () => refused, (count) => count > 0, "the first notice being refused");
      const refusal = await expectError("DELETE", `/api/workflow/${childId}/remove`, 409, "CONFLICT");
      expect(refusal.message).toContain("parent");
      expect((await getWorkflow(childId)).status).toBe("COMPLETED");
    } finally {
      WorkflowExecution.prototype.childFinished = childFinished;
    }
    expect((await waitFor(parentId, terminal)).status).toBe("COMPLETED");
    await removed(childId);
    await expectError("GET", `/api/workflow/${childId}`, 404, "NOT_FOUND");
  });

  it("a terminated parent whose child's termination is still owed refuses removal (409) until the child is terminated", async () => {
    const { parentId, childId } = await parentAndChild("owed_termination");
    // The child's object fails the terminations until the end of the try: the parent owes it.
    const { terminateAsChild } = WorkflowExecution.prototype;
    let refused = 0;
    WorkflowExecution.prototype.terminateAsChild = async function (this: WorkflowExecution, parent, reason) {
      if (parent === parentId) {
        refused++;
        throw new Error("Network connection lost (test)");
      }
      return terminateAsChild.call(this, parent, reason);
    };
    try {
      await apiOk("DELETE", `/api/workflow/${parentId}?reason=stop`);
      await eventually(async () => refused, (count) => count > 0, "the first termination being refused");
      const refusal = await expectError("DELETE", `/api/workflow/${parentId}/remove`, 409, "CONFLICT");
      expect(refusal.message).toContain("children");
      expect((await getWorkflow(parentId)).status).toBe("TERMINATED");
    } finally {
      WorkflowExecution.prototype.terminateAsChild = terminateAsChild;
    }
    expect((await waitFor(childId, terminal)).status).toBe("TERMINATED");
    await removed(parentId);
  });

  it("a remove that finds a notice to the parent on its way waits for it, then removes", async () => {
    const { parentId, childId } = await parentAndChild("notice_on_way");
    // The parent holds this child's notice until released.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const { childFinished } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.childFinished = async function (this: WorkflowExecution, notice) {
      if (notice.subWorkflowId === childId) {
        held = true;
        await released;
      }
      return childFinished.call(this, notice);
    };
    try {
      await apiOk("POST", `/api/tasks/${childId}/notice_on_way_gate/COMPLETED`, {});
      await eventually(async () => held, (value) => value, "the notice reaching the parent");
      const removal = api("DELETE", `/api/workflow/${childId}/remove`);
      release();
      expect((await removal).status).toBe(200);
    } finally {
      WorkflowExecution.prototype.childFinished = childFinished;
    }
    expect((await waitFor(parentId, terminal)).status).toBe("COMPLETED");
    await expectError("GET", `/api/workflow/${childId}`, 404, "NOT_FOUND");
  });
});

describe("unknown things are 404s", () => {
  it("unknown execution ids, malformed ids, unknown definitions and versions", async () => {
    await expectError("GET", `/api/workflow/${crypto.randomUUID()}`, 404, "NOT_FOUND");
    await expectError("GET", "/api/workflow/not-a-uuid", 404, "NOT_FOUND");
    await expectError("PUT", `/api/workflow/${crypto.randomUUID()}/pause`, 404, "NOT_FOUND");
    await expectError("POST", `/api/workflow/${crypto.randomUUID()}/retry`, 404, "NOT_FOUND");
    // A start's 404 in Conductor's words (MetadataServiceImpl.getWorkflowDef, as its start by name and the metadata GET answer).
    expect((await expectError("POST", "/api/workflow/no_such_workflow", 404, "NOT_FOUND", {})).message).toBe("No such workflow found by name: no_such_workflow, version: null");
    expect((await expectError("POST", "/api/workflow", 404, "NOT_FOUND", { name: "no_such_workflow" })).message).toBe("No such workflow found by name: no_such_workflow, version: null");
    expect((await expectError("GET", "/api/metadata/workflow/no_such_workflow", 404, "NOT_FOUND")).message).toBe("No such workflow found by name: no_such_workflow, version: null");
    await register({ name: "versioned", tasks: [httpTask("x", { uri: target("/echo/x"), method: "GET" })] });
    expect((await expectError("POST", "/api/workflow/versioned?version=7", 404, "NOT_FOUND", {})).message).toBe("No such workflow found by name: versioned, version: 7");
    await expectError("POST", "/api/workflow", 404, "NOT_FOUND", { name: "versioned", version: 9 });
    await expectError("POST", `/api/tasks/${crypto.randomUUID()}/x/COMPLETED`, 404, "NOT_FOUND", {});
  });
});

type BulkResponse = { bulkErrorResults: Record<string, string>; bulkSuccessfulResults: string[] };

/** A bulk operation through the real router as the admin; fails the test unless it answers 200. */
async function bulk(method: string, operation: string, ids: unknown, query = ""): Promise<BulkResponse> {
  return apiOk<BulkResponse>(method, `/api/workflow/bulk/${operation}${query}`, ids);
}

/** The message the single-id endpoint answers for this request (which must be refused). */
async function singleRefusal(method: string, path: string): Promise<string> {
  const response = await api(method, path);
  expect(response.status).toBeGreaterThanOrEqual(400);
  return ((await response.json()) as { message: string }).message;
}

describe("bulk operations (Conductor's WorkflowBulkResource)", () => {
  it("pause and resume act on each id alone: running ones succeed; a completed, an unknown and a malformed id fail with their single endpoint's message; a repeated id acts once", async () => {
    await registerWaiting("bulk_pause", "bulk-pause-after");
    await register({ name: "bulk_pause_done", tasks: [httpTask("a", { uri: target("/echo/bulk-done"), method: "GET" })] });
    const [first, second] = [await startWaiting("bulk_pause"), await startWaiting("bulk_pause")];
    const done = await startWorkflow("bulk_pause_done");
    await waitFor(done, ["COMPLETED"]);
    const unknown = crypto.randomUUID();

    const paused = await bulk("PUT", "pause", [first, second, first, done, unknown, "not-a-uuid"]);
    expect(paused.bulkSuccessfulResults).toEqual([first, second]);
    expect(paused.bulkErrorResults).toEqual({
      [done]: await singleRefusal("PUT", `/api/workflow/${done}/pause`),
      [unknown]: await singleRefusal("PUT", `/api/workflow/${unknown}/pause`),
      "not-a-uuid": await singleRefusal("PUT", "/api/workflow/not-a-uuid/pause"),
    });
    expect(paused.bulkErrorResults[done]).toContain("COMPLETED");
    expect(paused.bulkErrorResults[unknown]).toBe(`Workflow ${unknown} not found`);
    expect((await getWorkflow(first)).status).toBe("PAUSED");
    expect((await getWorkflow(second)).status).toBe("PAUSED");
    expect((await getWorkflow(done)).status).toBe("COMPLETED");

    // A second resume of the same execution would be a 409: the id written twice (in either case) is resumed once.
    const resumed = await bulk("PUT", "resume", [first, first.toUpperCase(), second]);
    expect(resumed).toEqual({ bulkErrorResults: {}, bulkSuccessfulResults: [first, second] });
    expect((await getWorkflow(first)).status).toBe("RUNNING");
    expect((await getWorkflow(second)).status).toBe("RUNNING");
    const again = await bulk("PUT", "resume", [first]);
    expect(again).toEqual({ bulkErrorResults: { [first]: await singleRefusal("PUT", `/api/workflow/${first}/resume`) }, bulkSuccessfulResults: [] });
  });

  it("terminate (with the reason), retry, restart (with useLatestDefinitions) and delete each do what their single endpoint does", async () => {
    await registerWaiting("bulk_life", "bulk-life-after");
    const [first, second] = [await startWaiting("bulk_life"), await startWaiting("bulk_life")];
    await register({ name: "bulk_life_done", tasks: [httpTask("v", { uri: target("/count/bulk-life-v1"), method: "GET" })] });
    const done = await startWorkflow("bulk_life_done");
    await waitFor(done, ["COMPLETED"]);

    const terminated = await bulk("POST", "terminate", [first, second, done], `?reason=${encodeURIComponent("bulk stop")}`);
    expect(terminated.bulkSuccessfulResults).toEqual([first, second]);
    expect(terminated.bulkErrorResults).toEqual({ [done]: await singleRefusal("DELETE", `/api/workflow/${done}`) });
    const stopped = await getWorkflow(first);
    expect({ status: stopped.status, reason: stopped["reasonForIncompletion"], task: stopped.tasks[0]!.status }).toEqual({ status: "TERMINATED", reason: "bulk stop", task: "CANCELED" });

    const retried = await bulk("POST", "retry", [first, done]);
    expect(retried.bulkSuccessfulResults).toEqual([first]);
    expect(retried.bulkErrorResults).toEqual({ [done]: await singleRefusal("POST", `/api/workflow/${done}/retry`) });
    const running = await waitFor(first, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    expect(running.tasks.map((task) => task.status)).toEqual(["CANCELED", "IN_PROGRESS"]);

    // A bad query parameter is refused before any id is acted on.
    await expectError("POST", "/api/workflow/bulk/restart?useLatestDefinitions=maybe", 400, "VALIDATION_ERROR", [done]);
    expect(await hits("bulk-life-v1")).toBe(1);
    await register({ name: "bulk_life_done", version: 2, tasks: [httpTask("v", { uri: target("/count/bulk-life-v2"), method: "GET" })] });
    const restarted = await bulk("POST", "restart", [done, first], "?useLatestDefinitions=true");
    expect(restarted.bulkSuccessfulResults).toEqual([done]);
    expect(restarted.bulkErrorResults).toEqual({ [first]: await singleRefusal("POST", `/api/workflow/${first}/restart`) });
    const rerun = await waitFor(done, (workflow) => workflow.status === "COMPLETED" && workflow["workflowVersion"] === 2);
    expect(rerun.tasks).toHaveLength(1);
    expect(await hits("bulk-life-v2")).toBe(1);

    // Running or ended, each is removed (a running one terminated first), as Conductor's removeWorkflow does.
    const removed = await bulk("POST", "delete", [second, first]);
    expect(removed).toEqual({ bulkSuccessfulResults: [second, first], bulkErrorResults: {} });
    await expectError("GET", `/api/workflow/${second}`, 404, "NOT_FOUND");
    await expectError("GET", `/api/workflow/${first}`, 404, "NOT_FOUND");
  });

  // A call to an object past the count of calls to Cloudflare services is refused with the second wording, as deployed
  // Workers report it (fetch() past its own count with the first).
  it.each([
    ["Too many subrequests.", "bulk_refused"],
    ["Too many API requests by single Worker invocation.", "bulk_refused_api"],
  ])("an id whose call the runtime refused past the request's subrequests (%s: Cloudflare's count; workerd counts none) is listed as not acted on, to send again, where it read as an internal error", async (refusal, name) => {
    await registerWaiting(name, `${name}-after`.replaceAll("_", "-"));
    const ids = [await startWaiting(name), await startWaiting(name), await startWaiting(name)];
    const refusedId = env.WORKFLOW_EXECUTION.idFromName(ids[1]!);
    const { command } = WorkflowExecution.prototype;
    // The refusal a deployed router meets past its count, injected where the call lands.
    WorkflowExecution.prototype.command = function (this: WorkflowExecution, ...args: Parameters<WorkflowExecution["command"]>) {
      if ((this as unknown as { ctx: DurableObjectState }).ctx.id.equals(refusedId)) return Promise.reject(new Error(refusal));
      return command.apply(this, args);
    };
    let paused: BulkResponse;
    try {
      paused = await bulk("PUT", "pause", ids);
    } finally {
      WorkflowExecution.prototype.command = command;
    }
    expect(paused.bulkSuccessfulResults).toEqual([ids[0], ids[2]]);
    expect(paused.bulkErrorResults).toEqual({ [ids[1]!]: SUBREQUEST_LIMIT_REFUSAL });
    expect((await getWorkflow(ids[1]!)).status).toBe("RUNNING");
    expect(await bulk("PUT", "pause", [ids[1]])).toEqual({ bulkErrorResults: {}, bulkSuccessfulResults: [ids[1]] });
  });

  it("search answers each workflow as its single read does (tasks unless includeTasks=false), and lists the ids it cannot show with why", async () => {
    await registerWaiting("bulk_read", "bulk-read-after");
    await registerWaiting("bulk_read_hidden", "bulk-read-hidden-after");
    const [first, second, hidden] = [await startWaiting("bulk_read"), await startWaiting("bulk_read"), await startWaiting("bulk_read_hidden")];
    const unknown = crypto.randomUUID();
    const found = (await apiOk<{ bulkErrorResults: Record<string, string>; bulkSuccessfulResults: JsonObject[] }>("POST", "/api/workflow/bulk/search", [second, first, unknown, second]));
    expect(found.bulkSuccessfulResults).toEqual([await getWorkflow(second), await getWorkflow(first)]);
    expect(found.bulkSuccessfulResults[0]!["tasks"]).toHaveLength(1);
    expect(found.bulkErrorResults).toEqual({ [unknown]: `Workflow ${unknown} not found` });
    const bare = await apiOk<{ bulkSuccessfulResults: JsonObject[] }>("POST", "/api/workflow/bulk/search?includeTasks=false", [first]);
    expect(bare.bulkSuccessfulResults).toEqual([await apiOk("GET", `/api/workflow/${first}?includeTasks=false`)]);
    // A caller who may read one of the workflows: the other is refused as its single read refuses it.
    const reader = await createUser("bulk-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:bulk_read" }] });
    const asReader = (await (await call("POST", "/api/workflow/bulk/search", orkes(reader.token), [first, hidden])).json()) as { bulkErrorResults: Record<string, string>; bulkSuccessfulResults: JsonObject[] };
    expect(asReader.bulkSuccessfulResults.map((workflow) => workflow["workflowId"])).toEqual([first]);
    const single = await call("GET", `/api/workflow/${hidden}`, orkes(reader.token));
    expect(single.status).toBe(403);
    expect(asReader.bulkErrorResults).toEqual({ [hidden]: ((await single.json()) as { message: string }).message });
    // An id with a `/` is checked as the single read of that id, not as the correlated search its raw path would name.
    const slashed = "bulk_read/correlated";
    const slashedRead = await call("GET", `/api/workflow/${encodeURIComponent(slashed)}`, orkes(reader.token));
    expect(slashedRead.status).toBe(403);
    expect(await (await call("POST", "/api/workflow/bulk/search", orkes(reader.token), [slashed])).json()).toEqual({
      bulkErrorResults: { [slashed]: ((await slashedRead.json()) as { message: string }).message },
      bulkSuccessfulResults: [],
    });
    await expectError("POST", "/api/workflow/bulk/search", 400, "VALIDATION_ERROR", { ids: [first] });
  });

  it(`search answers at most ${BULK_SEARCH_MAX_CHARS} characters of workflows, listing the ids past it as not included`, async () => {
    await registerWaiting("bulk_read_large", "bulk-read-large-after");
    // Each about 700 KB (its input), so that a dozen are more than one answer holds.
    const big = "x".repeat(700 * 1024);
    const ids: string[] = [];
    for (let index = 0; index < 13; index++) ids.push(await startWaiting("bulk_read_large", { big }));
    const found = await apiOk<{ bulkErrorResults: Record<string, string>; bulkSuccessfulResults: JsonObject[] }>("POST", "/api/workflow/bulk/search?includeTasks=false", ids);
    const left = Object.keys(found.bulkErrorResults);
    expect(found.bulkSuccessfulResults.length).toBeGreaterThan(0);
    expect(left.length).toBeGreaterThan(0);
    expect(found.bulkSuccessfulResults.length + left.length).toBe(ids.length);
    expect(Object.values(found.bulkErrorResults).every((reason) => reason.startsWith("Not included"))).toBe(true);
    expect(JSON.stringify(found.bulkSuccessfulResults).length).toBeLessThanOrEqual(BULK_SEARCH_MAX_CHARS + 2);
    // In the order asked for.
    const shownIds = found.bulkSuccessfulResults.map((workflow) => String(workflow["workflowId"]));
    expect(shownIds).toEqual(ids.filter((id) => shownIds.includes(id)));
  });

  it("a removal whose terminate was done but whose removal the runtime refused past the request's subrequests says the workflow was terminated, not that nothing was done; one that had ended is not acted on; sent again, each is removed", async () => {
    await registerWaiting("bulk_remove_refused", "bulk-remove-refused-after");
    await register({ name: "bulk_remove_refused_done", tasks: [httpTask("a", { uri: target("/echo/bulk-remove-refused-done"), method: "GET" })] });
    const [running, removed] = [await startWaiting("bulk_remove_refused"), await startWaiting("bulk_remove_refused")];
    const ended = await startWorkflow("bulk_remove_refused_done");
    await waitFor(ended, (workflow) => workflow.status === "COMPLETED");
    const refused = [running, ended].map((id) => env.WORKFLOW_EXECUTION.idFromName(id));
    const { remove } = WorkflowExecution.prototype;
    // The refusal a deployed router meets past its count, injected where the removal lands (the terminate before it is not refused).
    WorkflowExecution.prototype.remove = function (this: WorkflowExecution) {
      const id = (this as unknown as { ctx: DurableObjectState }).ctx.id;
      if (refused.some((one) => one.equals(id))) return Promise.reject(new Error("Too many API requests by single Worker invocation."));
      return remove.apply(this);
    };
    let answer: BulkResponse;
    try {
      answer = await bulk("DELETE", "terminate-remove", [running, removed, ended], "?reason=cleanup");
    } finally {
      WorkflowExecution.prototype.remove = remove;
    }
    expect(answer.bulkSuccessfulResults).toEqual([removed]);
    expect(answer.bulkErrorResults).toEqual({ [running]: TERMINATED_NOT_REMOVED, [ended]: SUBREQUEST_LIMIT_REFUSAL });
    const stopped = await getWorkflow(running);
    expect({ status: stopped.status, reason: stopped["reasonForIncompletion"] }).toEqual({ status: "TERMINATED", reason: "cleanup" });
    expect((await getWorkflow(ended)).status).toBe("COMPLETED");
    expect(await bulk("DELETE", "terminate-remove", [running, ended])).toEqual({ bulkErrorResults: {}, bulkSuccessfulResults: [running, ended] });
    for (const id of [running, removed, ended]) await expectError("GET", `/api/workflow/${id}`, 404, "NOT_FOUND");
    expect(await hits("bulk-remove-refused-after")).toBe(0);
  });

  it("a single-id removal whose terminate was done but whose removal the runtime refused answers 503 UNAVAILABLE with Retry-After, as every 503 of the service does; sent again, it is removed", async () => {
    await registerWaiting("single_remove_refused", "single-remove-refused-after");
    const running = await startWaiting("single_remove_refused");
    const refused = env.WORKFLOW_EXECUTION.idFromName(running);
    const { remove } = WorkflowExecution.prototype;
    // The refusal a deployed router meets past its count, injected where the removal lands (the terminate is not refused).
    WorkflowExecution.prototype.remove = function (this: WorkflowExecution) {
      if (refused.equals((this as unknown as { ctx: DurableObjectState }).ctx.id)) return Promise.reject(new Error("Too many subrequests."));
      return remove.apply(this);
    };
    let response: Response;
    try {
      response = await api("DELETE", `/api/workflow/${running}/remove`);
    } finally {
      WorkflowExecution.prototype.remove = remove;
    }
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("1");
    expect(await response.json()).toMatchObject({ status: 503, error: "UNAVAILABLE", message: TERMINATED_NOT_REMOVED, retryable: true });
    expect((await getWorkflow(running)).status).toBe("TERMINATED");
    await apiOk("DELETE", `/api/workflow/${running}/remove`);
    await expectError("GET", `/api/workflow/${running}`, 404, "NOT_FOUND");
  });

  it("Conductor's newer remove and terminate-remove (DELETE, in bulk and for one id) remove ended executions, and terminate running ones first", async () => {
    await registerWaiting("bulk_remove", "bulk-remove-after");
    const [first, second, third] = [await startWaiting("bulk_remove"), await startWaiting("bulk_remove"), await startWaiting("bulk_remove")];
    await apiOk("DELETE", `/api/workflow/${first}?reason=stopped`);
    const unknown = crypto.randomUUID();
    // remove takes an ended execution as it is, and terminates a running one first, as the single-id remove.
    const fourth = await startWaiting("bulk_remove");
    const removed = await bulk("DELETE", "remove", [first, fourth]);
    expect(removed).toEqual({ bulkErrorResults: {}, bulkSuccessfulResults: [first, fourth] });
    await expectError("GET", `/api/workflow/${first}`, 404, "NOT_FOUND");
    await expectError("GET", `/api/workflow/${fourth}`, 404, "NOT_FOUND");
    // terminate-remove ends a running one, then removes it; an unknown one is refused as the single route refuses it.
    const gone = await bulk("DELETE", "terminate-remove", [second, unknown], "?reason=cleanup");
    expect(gone).toEqual({ bulkErrorResults: { [unknown]: await singleRefusal("DELETE", `/api/workflow/${unknown}/terminate-remove`) }, bulkSuccessfulResults: [second] });
    expect(gone.bulkErrorResults[unknown]).toBe(`Workflow ${unknown} not found`);
    await expectError("GET", `/api/workflow/${second}`, 404, "NOT_FOUND");
    const response = await api("DELETE", `/api/workflow/${third}/terminate-remove`);
    expect([response.status, await response.text()]).toEqual([200, ""]);
    await expectError("GET", `/api/workflow/${third}`, 404, "NOT_FOUND");
    // The call after each task of those terminated was never made.
    expect(await hits("bulk-remove-after")).toBe(0);
  });

  it("a refused body (not an array, a non-string or empty id, no id, more than 1000 ids, not JSON) is a 400 in the contract's shape and changes nothing; 1000 ids are taken", async () => {
    await registerWaiting("bulk_refused", "bulk-refused-after");
    const workflowId = await startWaiting("bulk_refused");
    const tooMany = [workflowId, ...Array.from({ length: 1000 }, (_, n) => `no-such-${n}`)];
    const refusals: Array<[string, unknown]> = [
      ["an object", { workflowIds: [workflowId] }],
      ["a string", JSON.stringify(workflowId)],
      ["a number among the ids", [workflowId, 5]],
      ["an empty id", [workflowId, ""]],
      ["an id longer than any workflow id could be", [workflowId, "x".repeat(101)]],
      ["no ids", []],
      ["1001 ids", tooMany],
      ["not JSON", `["${workflowId}"`],
    ];
    for (const [what, body] of refusals) {
      // A string body is sent as written: JSON text here.
      const response = await api("PUT", "/api/workflow/bulk/pause", body);
      const text = await response.text();
      expect(response.status, `${what}: ${text}`).toBe(400);
      expect(JSON.parse(text), what).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    }
    const noBody = await expectError("PUT", "/api/workflow/bulk/pause", 400, "VALIDATION_ERROR");
    expect(noBody.message).toContain("workflow ids");
    const capped = await expectError("PUT", "/api/workflow/bulk/pause", 400, "VALIDATION_ERROR", tooMany);
    expect(capped.message).toContain("1000");
    expect((await getWorkflow(workflowId)).status).toBe("RUNNING");

    const taken = await bulk("PUT", "pause", tooMany.slice(0, 1000));
    expect(taken.bulkSuccessfulResults).toEqual([workflowId]);
    expect(Object.keys(taken.bulkErrorResults)).toHaveLength(999);
    expect((await getWorkflow(workflowId)).status).toBe("PAUSED");
  });

  it("works the ids a few at a time, never all at once", async () => {
    const { command } = WorkflowExecution.prototype;
    let inFlight = 0;
    let most = 0;
    WorkflowExecution.prototype.command = async function (this: WorkflowExecution, request) {
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return await command.call(this, request);
      } finally {
        inFlight--;
      }
    };
    try {
      const ids = Array.from({ length: 40 }, () => crypto.randomUUID());
      const answer = await bulk("PUT", "pause", ids);
      expect(Object.keys(answer.bulkErrorResults)).toEqual(ids);
    } finally {
      WorkflowExecution.prototype.command = command;
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(BULK_CONCURRENCY);
    expect(BULK_CONCURRENCY).toBeLessThanOrEqual(10);
  });
});

describe("skip a task (PUT /api/workflow/{id}/skiptask/{taskReferenceName}, Conductor's skipTaskFromWorkflow)", () => {
  const skip = (workflowId: string, ref: string, body?: unknown) => api("PUT", `/api/workflow/${workflowId}/skiptask/${encodeURIComponent(ref)}`, body);

  it("a task not reached yet is remembered and, once reached, recorded SKIPPED with the given input and output, which later tasks read; answers 200 with no body", async () => {
    await register({
      name: "skip_ahead",
      tasks: [
        httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true }),
        httpTask("b", { uri: target("/count/skip-ahead-b"), method: "GET" }),
        httpTask("c", { uri: target("/count/skip-ahead-c?x=${b.output.x}&why=${b.input.why}"), method: "GET" }),
      ],
    });
    const workflowId = await startWaiting("skip_ahead");
    const before = await getWorkflow(workflowId);
    const response = await skip(workflowId, "b", { taskInput: { why: "manual" }, taskOutput: { x: "from-skip" } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
    // Nothing is shown before the task is reached: the Workflow JSON keeps its shape.
    expect(await getWorkflow(workflowId)).toEqual(before);

    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["gate", "COMPLETED"],
      ["b", "SKIPPED"],
      ["c", "COMPLETED"],
    ]);
    const b = done.tasks[1]!;
    expect(b).toMatchObject({ inputData: { why: "manual" }, outputData: { x: "from-skip" } });
    expect(b["startTime"]).toBeGreaterThan(0);
    expect(b["endTime"]).toBeGreaterThanOrEqual(b["startTime"] as number);
    expect((done.tasks[2]!.outputData["response"] as { body: { query: JsonObject } }).body.query).toEqual({ x: "from-skip", why: "manual" });
    expect(await hits("skip-ahead-b")).toBe(0);
  });

  it("a pending asyncComplete HTTP task becomes SKIPPED with the given output and the workflow moves on; without a body the output is empty", async () => {
    await registerWaiting("skip_pending", "skip-pending-after");
    const workflowId = await startWaiting("skip_pending");
    expect((await skip(workflowId, "gate")).status).toBe(200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[0]).toMatchObject({ status: "SKIPPED", outputData: {} });
    expect(done.tasks[0]!.inputData).toMatchObject({ uri: target("/echo/gate") });
    expect(await hits("skip-pending-after")).toBe(1);
    // Completing it afterwards is refused as for any finished task.
    const late = await expectError("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, 409, "CONFLICT", {});
    expect(late.message).toMatch(/^Found no running task gate of workflow .* to update: its latest, .*, is SKIPPED$/);
  });

  it("an HTTP task whose request is in flight becomes SKIPPED (taskInput replacing its input); its late result changes nothing", async () => {
    await register({
      name: "skip_in_flight",
      tasks: [httpTask("slow", { uri: target("/count/skip-in-flight?delay=800"), method: "GET" }), httpTask("next", { uri: target("/count/skip-in-flight-next?v=${slow.output.v}"), method: "GET" })],
    });
    const workflowId = await startWorkflow("skip_in_flight");
    await eventually(() => hits("skip-in-flight"), (n) => n === 1, "the slow request reaching the target");
    expect((await skip(workflowId, "slow", { taskInput: { replaced: true }, taskOutput: { v: "skipped" } })).status).toBe(200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["slow", "SKIPPED"],
      ["next", "COMPLETED"],
    ]);
    expect(done.tasks[0]).toMatchObject({ inputData: { replaced: true }, outputData: { v: "skipped" } });
    expect((done.tasks[1]!.outputData["response"] as { body: { query: JsonObject } }).body.query).toEqual({ v: "skipped" });
    // Past the time the slow answer would have come back.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await getWorkflow(workflowId)).toEqual(done);
  });

  it("a retry waiting out its delay becomes SKIPPED and the workflow moves on", async () => {
    await register({
      name: "skip_retry_delay",
      tasks: [
        httpTask("flaky", { uri: target("/flaky/skip-retry-delay?fail=5"), method: "GET" }, { retryCount: 2, retryDelaySeconds: 3600 }),
        httpTask("after", { uri: target("/count/skip-retry-delay-after"), method: "GET" }),
      ],
    });
    const workflowId = await startWorkflow("skip_retry_delay");
    await waitFor(workflowId, (workflow) => workflow.tasks.length === 2 && workflow.tasks[1]!.status === "SCHEDULED");
    expect((await skip(workflowId, "flaky", { taskOutput: { default: true } })).status).toBe(200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["flaky", "FAILED"],
      ["flaky", "SKIPPED"],
      ["after", "COMPLETED"],
    ]);
    expect(done.tasks[1]!.outputData).toEqual({ default: true });
    expect(await hits("skip-retry-delay")).toBe(1);
  });

  it("a PAUSED or finished workflow is a 409 and nothing changes (the refused skip is not remembered)", async () => {
    await registerWaiting("skip_paused", "skip-paused-after");
    const workflowId = await startWaiting("skip_paused");
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
    const paused = await getWorkflow(workflowId);
    expect((await expectError("PUT", `/api/workflow/${workflowId}/skiptask/after`, 409, "CONFLICT", { taskOutput: { x: 1 } })).message).toContain("PAUSED");
    await expectError("PUT", `/api/workflow/${workflowId}/skiptask/gate`, 409, "CONFLICT");
    expect(await getWorkflow(workflowId)).toEqual(paused);
    await apiOk("PUT", `/api/workflow/${workflowId}/resume`);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks.map((task) => task.status)).toEqual(["COMPLETED", "COMPLETED"]);
    expect(await hits("skip-paused-after")).toBe(1);
    for (const ref of ["gate", "after"]) {
      expect((await expectError("PUT", `/api/workflow/${workflowId}/skiptask/${ref}`, 409, "CONFLICT")).message).toContain("COMPLETED");
    }
    expect(await getWorkflow(workflowId)).toEqual(done);
  });

  it("a reference name not in the definition is a 400 naming it, an unknown execution a 404; neither changes anything", async () => {
    await registerWaiting("skip_unknown", "skip-unknown-after");
    const workflowId = await startWaiting("skip_unknown");
    const before = await getWorkflow(workflowId);
    expect((await expectError("PUT", `/api/workflow/${workflowId}/skiptask/nope`, 400, "VALIDATION_ERROR")).message).toContain("nope");
    await expectError("PUT", `/api/workflow/${crypto.randomUUID()}/skiptask/gate`, 404, "NOT_FOUND");
    await expectError("PUT", "/api/workflow/not-a-uuid/skiptask/gate", 404, "NOT_FOUND");
    expect(await getWorkflow(workflowId)).toEqual(before);
  });

  describe("in a fork's branch while its JOIN waits", () => {
    const joinOutput = (workflow: WorkflowJson) => workflow.tasks.find((task) => task.referenceTaskName === "join")!.outputData;

    it("the branch's waiting task becomes SKIPPED with the output given, the branch goes on and the JOIN completes", async () => {
      const workflowId = await startedWithJoinWaiting("skip_fork_waiting");
      expect((await skip(workflowId, "l1", { taskOutput: { from: "skip" } })).status).toBe(200);
      const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"]);
      expect(statusByRef(done)).toEqual({ fan: "COMPLETED", l1: "SKIPPED", l2: "COMPLETED", r1: "COMPLETED", join: "COMPLETED", post: "COMPLETED", end: "COMPLETED" });
      expect(done.tasks.find((task) => task.referenceTaskName === "l1")!.outputData).toEqual({ from: "skip" });
      expect(joinOutput(done)).toMatchObject({ r1: { right: true } });
      expect(await hits("skip_fork_waiting-l2")).toBe(1);
    });

    it("the task the JOIN waits for, not reached yet, is SKIPPED once reached and the JOIN takes its given output", async () => {
      const workflowId = await startedWithJoinWaiting("skip_fork_ahead");
      expect((await skip(workflowId, "l2", { taskOutput: { from: "skip" } })).status).toBe(200);
      await apiOk("POST", `/api/tasks/${workflowId}/l1/COMPLETED`, {});
      const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"]);
      expect(statusByRef(done)).toEqual({ fan: "COMPLETED", l1: "COMPLETED", l2: "SKIPPED", r1: "COMPLETED", join: "COMPLETED", post: "COMPLETED", end: "COMPLETED" });
      expect(joinOutput(done)).toEqual({ l2: { from: "skip" }, r1: { right: true } });
      expect(await hits("skip_fork_ahead-l2")).toBe(0);
    });

    it("the JOIN itself becomes SKIPPED and the workflow goes on past it; the branch it no longer waits for ends before the workflow does", async () => {
      const workflowId = await startedWithJoinWaiting("skip_fork_join");
      expect((await skip(workflowId, "join", { taskOutput: { joined: false } })).status).toBe(200);
      const past = await waitFor(workflowId, (workflow) => statusByRef(workflow)["end"] === "COMPLETED");
      expect([past.status, statusByRef(past)["l1"], joinOutput(past)]).toEqual(["RUNNING", "IN_PROGRESS", { joined: false }]);
      await apiOk("POST", `/api/tasks/${workflowId}/l1/COMPLETED`, {});
      const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"]);
      expect(statusByRef(done)).toEqual({ fan: "COMPLETED", l1: "COMPLETED", l2: "COMPLETED", r1: "COMPLETED", join: "SKIPPED", post: "COMPLETED", end: "COMPLETED" });
    });

    it("a FORK_JOIN_DYNAMIC's waiting branch task: SKIPPED, its given output in the JOIN's", async () => {
      await register({
        name: "skip_fork_dynamic",
        tasks: [
          { name: "dyn", taskReferenceName: "dyn", type: "FORK_JOIN_DYNAMIC", dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs", inputParameters: { tasks: [waitTask("d1"), waitTask("d2")], inputs: { d1: {}, d2: {} } } },
          { name: "join", taskReferenceName: "join", type: "JOIN" },
        ],
      });
      const workflowId = await startWorkflow("skip_fork_dynamic");
      await waitFor(workflowId, (workflow) => statusByRef(workflow)["join"] === "IN_PROGRESS" && statusByRef(workflow)["d2"] === "IN_PROGRESS");
      expect((await skip(workflowId, "d2", { taskOutput: { from: "skip" } })).status).toBe(200);
      await apiOk("POST", `/api/tasks/${workflowId}/d1/COMPLETED`, { d: 1 });
      const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"]);
      expect(statusByRef(done)).toEqual({ dyn: "COMPLETED", d1: "COMPLETED", d2: "SKIPPED", join: "COMPLETED" });
      expect(joinOutput(done)).toEqual({ d1: { d: 1 }, d2: { from: "skip" } });
    });
  });

  it("an already completed task is a 409 (already processed) and nothing changes", async () => {
    await register({
      name: "skip_processed",
      tasks: [httpTask("first", { uri: target("/count/skip-processed-first"), method: "GET" }), httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })],
    });
    const workflowId = await startWorkflow("skip_processed");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[1]?.status === "IN_PROGRESS" && (workflow.tasks[1]!.outputData as { statusCode?: number }).statusCode === 200);
    expect((await expectError("PUT", `/api/workflow/${workflowId}/skiptask/first`, 409, "CONFLICT")).message).toContain("already processed, cannot be skipped");
    expect(await getWorkflow(workflowId)).toEqual(waiting);
  });

  it("a pending SUB_WORKFLOW task is a 409 that says to terminate the child instead; parent and child are left as they were", async () => {
    await registerWaiting("skip_child", "skip-child-after");
    await register({ name: "skip_parent", tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "skip_child", version: 1 } } }] });
    const parentId = await startWorkflow("skip_parent");
    const parent = await waitFor(parentId, (workflow) => typeof workflow.tasks[0]?.["subWorkflowId"] === "string" && workflow.tasks[0]!.status === "IN_PROGRESS");
    const childId = String(parent.tasks[0]!["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && (workflow.tasks[0]!.outputData as { statusCode?: number }).statusCode === 200);
    const [parentBefore, childBefore] = [await getWorkflow(parentId), await getWorkflow(childId)];
    expect((await expectError("PUT", `/api/workflow/${parentId}/skiptask/sub`, 409, "CONFLICT")).message).toContain("terminate");
    expect(await getWorkflow(parentId)).toEqual(parentBefore);
    expect(await getWorkflow(childId)).toEqual(childBefore);
  });

  it("a body that is not a JSON object with object taskInput and taskOutput is a 400 (a too large one a 413) and nothing changes, nor is remembered", async () => {
    await registerWaiting("skip_bad_body", "skip-bad-body-after");
    const workflowId = await startWaiting("skip_bad_body");
    const before = await getWorkflow(workflowId);
    const path = `/api/workflow/${workflowId}/skiptask/after`;
    expect((await expectError("PUT", path, 400, "VALIDATION_ERROR", { taskOutput: "done" })).message).toContain("taskOutput");
    await expectError("PUT", path, 400, "VALIDATION_ERROR", { taskInput: [1, 2] });
    await expectError("PUT", path, 400, "VALIDATION_ERROR", [{ taskOutput: {} }]);
    await expectError("PUT", path, 400, "VALIDATION_ERROR", "null");
    await expectError("PUT", path, 400, "VALIDATION_ERROR", "{not json");
    await expectError("PUT", path, 413, "PAYLOAD_TOO_LARGE", { taskOutput: { blob: "x".repeat(800 * 1024) } });
    expect(await getWorkflow(workflowId)).toEqual(before);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks.map((task) => task.status)).toEqual(["COMPLETED", "COMPLETED"]);
    expect(await hits("skip-bad-body-after")).toBe(1);
  });

  it("a retry keeps a skip still waiting to happen; a restart forgets it", async () => {
    await registerWaiting("skip_reopen", "skip-reopen-after");
    const workflowId = await startWaiting("skip_reopen");
    await apiOk("PUT", `/api/workflow/${workflowId}/skiptask/after`, { taskOutput: { kept: true } });
    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=stop`);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    await waitFor(workflowId, (workflow) => workflow.tasks.length === 2 && workflow.tasks[1]!.status === "IN_PROGRESS" && (workflow.tasks[1]!.outputData as { statusCode?: number }).statusCode === 200);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const retried = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(retried.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["gate", "CANCELED"],
      ["gate", "COMPLETED"],
      ["after", "SKIPPED"],
    ]);
    expect(retried.output).toEqual({ kept: true });
    expect(await hits("skip-reopen-after")).toBe(0);

    await apiOk("POST", `/api/workflow/${workflowId}/restart`, undefined, 204);
    await waitFor(workflowId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.length === 1 && (workflow.tasks[0]!.outputData as { statusCode?: number }).statusCode === 200);
    await apiOk("PUT", `/api/workflow/${workflowId}/skiptask/after`);
    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=stop`);
    await apiOk("POST", `/api/workflow/${workflowId}/restart`, undefined, 204);
    await waitFor(workflowId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.length === 1 && (workflow.tasks[0]!.outputData as { statusCode?: number }).statusCode === 200);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const restarted = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(restarted.tasks.map((task) => task.status)).toEqual(["COMPLETED", "COMPLETED"]);
    expect(await hits("skip-reopen-after")).toBe(1);
  });
});

describe("workflow variables (the definition's `variables`, Orkes' POST /api/workflow/{id}/variables)", () => {
  const update = (workflowId: string, body?: unknown) => api("POST", `/api/workflow/${workflowId}/variables`, body);
  const queryOf = (task: JsonObject) => ((task["outputData"] as JsonObject)["response"] as { body: { query: JsonObject } }).body.query;

  /** A workflow whose first task waits for its completion and whose second one sends the variables it sees. */
  async function registerWithVariables(name: string): Promise<void> {
    await register({
      name,
      variables: { stage: "initial", keep: 1 },
      tasks: [
        httpTask("gate", { uri: target(`/echo/${name}-gate?stage=\${workflow.variables.stage}`), method: "GET" }, { asyncComplete: true }),
        httpTask("after", { uri: target(`/echo/${name}-after?stage=\${workflow.variables.stage}&keep=\${workflow.variables.keep}`), method: "GET" }),
      ],
    });
  }

  it("start as the definition's; an update is merged (200, the Workflow JSON), a later HTTP task sends the new value, the running one keeps its input; the status endpoint shows them", async () => {
    await registerWithVariables("vars_update");
    expect(await apiOk("GET", "/api/metadata/workflow/vars_update")).toMatchObject({ variables: { stage: "initial", keep: 1 } });
    const workflowId = await startWaiting("vars_update");
    expect((await getWorkflow(workflowId))["variables"]).toEqual({ stage: "initial", keep: 1 });

    const response = await update(workflowId, { stage: "updated", added: { list: [1, "two"] }, gone: null });
    expect(response.status).toBe(200);
    const answered = (await response.json()) as JsonObject & { tasks: JsonObject[] };
    const variables = { stage: "updated", keep: 1, added: { list: [1, "two"] }, gone: null };
    expect(answered).toMatchObject({ workflowId, status: "RUNNING", variables });
    expect((answered.tasks[0]!["inputData"] as JsonObject)["uri"]).toBe(target("/echo/vars_update-gate?stage=initial"));
    expect(await apiOk("GET", `/api/workflow/${workflowId}/status?includeVariables=true`)).toEqual({ workflowId, status: "RUNNING", variables });
    expect(await apiOk("GET", `/api/workflow/${workflowId}/status`)).toEqual({ workflowId, status: "RUNNING" });

    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done["variables"]).toEqual(variables);
    expect(done.tasks[0]!.inputData["uri"]).toBe(target("/echo/vars_update-gate?stage=initial"));
    expect(queryOf(done.tasks[1]!)).toEqual({ stage: "updated", keep: "1" });
  });

  it("a PAUSED execution takes an update; a finished one is a 409 that changes nothing; unknown and malformed ids are 404s", async () => {
    await registerWithVariables("vars_states");
    const workflowId = await startWaiting("vars_states");
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
    expect(await apiOk("POST", `/api/workflow/${workflowId}/variables`, { stage: "paused" })).toMatchObject({ status: "PAUSED", variables: { stage: "paused", keep: 1 } });
    await apiOk("PUT", `/api/workflow/${workflowId}/resume`);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(queryOf(done.tasks[1]!)).toEqual({ stage: "paused", keep: "1" });

    const before = await getWorkflow(workflowId);
    const refused = await expectError("POST", `/api/workflow/${workflowId}/variables`, 409, "CONFLICT", { stage: "late" });
    expect(refused.message).toBe(`Cannot update the variables of workflow ${workflowId}: its status is COMPLETED`);
    expect(await getWorkflow(workflowId)).toEqual(before);
    await expectError("POST", `/api/workflow/${crypto.randomUUID()}/variables`, 404, "NOT_FOUND", { a: 1 });
    await expectError("POST", "/api/workflow/not-an-id/variables", 404, "NOT_FOUND", { a: 1 });
  });

  it("a body that is not a JSON object (an array, null, none, not JSON) or nests too deep is a 400, one too large a 413, merged variables too large a 400; none changes anything", async () => {
    await registerWithVariables("vars_bad_body");
    const workflowId = await startWaiting("vars_bad_body");
    const path = `/api/workflow/${workflowId}/variables`;
    const half = "x".repeat(500 * 1024);
    await apiOk("POST", path, { big: half });
    const before = await getWorkflow(workflowId);
    await expectError("POST", path, 400, "VALIDATION_ERROR", [{ stage: "array" }]);
    await expectError("POST", path, 400, "VALIDATION_ERROR", "null");
    await expectError("POST", path, 400, "VALIDATION_ERROR");
    await expectError("POST", path, 400, "VALIDATION_ERROR", "{not json");
    await expectError("POST", path, 400, "VALIDATION_ERROR", { deep: JSON.parse(`${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`) as JsonObject });
    await expectError("POST", path, 413, "PAYLOAD_TOO_LARGE", { blob: "x".repeat(800 * 1024) });
    const merged = await expectError("POST", path, 400, "VALIDATION_ERROR", { more: half });
    expect(merged.message).toMatch(/^The workflow's variables object with the update is \d+ bytes, over the limit of \d+ bytes \(MAX_PAYLOAD_BYTES\)$/);
    expect(await getWorkflow(workflowId)).toEqual(before);
    // Replacing the large value instead fits.
    expect(await apiOk("POST", path, { big: "small" })).toMatchObject({ variables: { stage: "initial", keep: 1, big: "small" } });
  });

  it("retry, rerun and restart keep them as the last run left them (as Conductor), also with useLatestDefinitions", async () => {
    await registerWithVariables("vars_reopen");
    const workflowId = await startWaiting("vars_reopen");
    await apiOk("POST", `/api/workflow/${workflowId}/variables`, { stage: "updated" });
    await apiOk("POST", `/api/tasks/${workflowId}/gate/FAILED_WITH_TERMINAL_ERROR`, {});
    expect(await waitFor(workflowId, ["FAILED"])).toMatchObject({ variables: { stage: "updated", keep: 1 } });

    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    await waitFor(workflowId, (workflow) => workflow.tasks.at(-1)?.status === "IN_PROGRESS" && workflow.tasks.at(-1)!.outputData["statusCode"] === 200);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const retried = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(retried).toMatchObject({ status: "COMPLETED", variables: { stage: "updated", keep: 1 } });
    expect(queryOf(retried.tasks.at(-1)!)).toEqual({ stage: "updated", keep: "1" });
    await apiOk("POST", `/api/workflow/${workflowId}/rerun`, {});
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && workflow.tasks[0]!.outputData["statusCode"] === 200);
    expect((await getWorkflow(workflowId))["variables"]).toEqual({ stage: "updated", keep: 1 });

    await apiOk("DELETE", `/api/workflow/${workflowId}`);
    await apiOk("POST", `/api/workflow/${workflowId}/restart`, undefined, 204);
    expect((await getWorkflow(workflowId))["variables"]).toEqual({ stage: "updated", keep: 1 });
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && workflow.tasks[0]!.outputData["statusCode"] === 200);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    expect(queryOf((await waitFor(workflowId, ["COMPLETED", "FAILED"])).tasks[1]!)).toEqual({ stage: "updated", keep: "1" });

    await register({ name: "vars_reopen", version: 2, variables: { stage: "v2" }, tasks: [httpTask("only", { uri: target("/echo/vars-reopen-v2"), method: "GET" })] });
    await apiOk("POST", `/api/workflow/${workflowId}/restart?useLatestDefinitions=true`, undefined, 204);
    const latest = await waitFor(workflowId, (workflow) => workflow.status === "COMPLETED" && workflow["workflowVersion"] === 2);
    expect(latest["variables"]).toEqual({ stage: "updated", keep: 1 });
  });
});

describe("decide (PUT /api/workflow/decide/{workflowId}) and Conductor's AdminResource sweep and repair of one execution (the same decide)", () => {
  it.each([
    ["PUT /api/workflow/decide/{workflowId}", "PUT", (id: string) => `/api/workflow/decide/${id}`, () => "", null],
    // Conductor's AdminResource produces TEXT_PLAIN for both (the repair's boolean as its text).
    // The sweep answers `<pushed>.<workflowId>`, as Conductor's AdminServiceImpl.requeueSweep.
    ["POST /api/admin/sweep/requeue/{workflowId}", "POST", (id: string) => `/api/admin/sweep/requeue/${id}`, (id: string) => `true.${id}`, "text/plain;charset=UTF-8"],
    ["POST /api/admin/consistency/verifyAndRepair/{workflowId}", "POST", (id: string) => `/api/admin/consistency/verifyAndRepair/${id}`, () => "true", "text/plain;charset=UTF-8"],
  ])("%s does now what the alarm would: a WAIT whose time has passed ends without waiting for the alarm", async (_label, method, path, answer, contentType) => {
    // An hour: its alarm cannot fire while the test runs, however slow the machine (a 1 s WAIT's did, before it was cleared).
    await register({ name: "decide_wait", tasks: [{ name: "pause", taskReferenceName: "pause", type: "WAIT", inputParameters: { duration: "1 hours" } }] });
    const workflowId = await startWorkflow("decide_wait");
    const started = await eventually(() => getWorkflow(workflowId), (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS", "the WAIT started");
    // As if the alarm were late: it is cleared, so only decide can end the wait now.
    await runInDurableObject(executionStub(env, workflowId), (_instance, state) => state.storage.deleteAlarm());
    // Past the wait's end on the clock the router and the object read (both run in this isolate), without waiting for it.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Number(started.tasks[0]!["startTime"]) + 3_600_000 + 1_000);
      expect((await getWorkflow(workflowId)).status).toBe("RUNNING");
      // One who may only read the workflow changes nothing.
      const reader = await createUser("decide-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:decide_wait" }] });
      expect((await call(method, path(workflowId), orkes(reader.token))).status).toBe(403);
      expect((await getWorkflow(workflowId)).status).toBe("RUNNING");
      const decided = await api(method, path(workflowId));
      expect(decided.status).toBe(200);
      expect(decided.headers.get("content-type")).toBe(contentType);
      expect(await decided.text()).toBe(answer(workflowId));
      expect(await getWorkflow(workflowId)).toMatchObject({ status: "COMPLETED", tasks: [{ status: "COMPLETED" }] });
      // A finished workflow has nothing due: decide changes nothing. An unknown id is not found.
      expect((await api(method, path(workflowId))).status).toBe(200);
      expect((await api(method, path(crypto.randomUUID()))).status).toBe(404);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("decide of a parent whose child's object lost its storage", () => {
  it("fails the SUB_WORKFLOW task waiting for it, naming the child, where it waited for a notice that would never come; a live child is left alone", async () => {
    await register({ name: "lost_child", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }] });
    await register({ name: "lost_child_parent", tasks: [{ name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "lost_child", version: 1 } }] });
    const parentId = await startWorkflow("lost_child_parent");
    const running = await waitFor(parentId, (workflow) => typeof workflow.tasks[0]?.["subWorkflowId"] === "string");
    const childId = String(running.tasks[0]!["subWorkflowId"]);
    await waitFor(childId, ["RUNNING"]);
    // A child that is there: decide changes nothing.
    expect((await api("PUT", `/api/workflow/decide/${parentId}`)).status).toBe(200);
    expect(await getWorkflow(parentId)).toMatchObject({ status: "RUNNING", tasks: [{ status: "IN_PROGRESS" }] });
    // The child's object loses everything, then its instance goes (an eviction), so none holds the child any more.
    await runInDurableObject(executionStub(env, childId), async (_instance, state) => {
      await state.storage.deleteAlarm();
      await state.storage.deleteAll();
    });
    await abortAllDurableObjects();
    expect((await api("GET", `/api/workflow/${childId}`)).status).toBe(404);
    expect((await api("PUT", `/api/workflow/decide/${parentId}`)).status).toBe(200);
    const failed = await waitFor(parentId, ["FAILED", "COMPLETED", "TERMINATED"]);
    expect(failed).toMatchObject({ status: "FAILED", tasks: [{ status: "FAILED" }] });
    // As docs/api.md says: no reason of the child's to quote, so not Conductor's "<child> failure reason: <its reason>".
    expect(failed.tasks[0]!["reasonForIncompletion"]).toBe(`Sub workflow ${childId} no longer exists`);
  });
});

describe("decide of a parent waiting for more children than one call looks at", () => {
  it("looks at the next ones at the next call: a lost child past the first call's look is found by the second decide", async () => {
    // Three children a decide instead of a hundred (the test seam WorkflowExecution.lostChildLooksPerDecide), four of
    // them instead of 101: the same staging of a lost child past the first look, without starting a hundred workflows.
    const looks = WorkflowExecution.lostChildLooksPerDecide;
    WorkflowExecution.lostChildLooksPerDecide = 3;
    try {
      await register({ name: "many_children_child", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }] });
      const refs = Array.from({ length: 4 }, (_, index) => `child_${index}`);
      // Permissive: the lost child's failed task leaves the parent RUNNING (its JOIN waits for the other branches), so
      // the parent does not cancel and terminate the other children, work in this isolate that proves nothing here and
      // went on into the next tests.
      const branches = refs.map((ref) => [{ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", subWorkflowParam: { name: "many_children_child", version: 1 }, permissive: true }]);
      await register({ name: "many_children_parent", tasks: [{ name: "all", taskReferenceName: "all", type: "FORK_JOIN", forkTasks: branches }, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: refs }] });
      const parentId = await startWorkflow("many_children_parent");
      const waiting = (workflow: { tasks: Array<Record<string, unknown>> }) => workflow.tasks.filter((task) => task["taskType"] === "SUB_WORKFLOW" && task["status"] === "IN_PROGRESS" && typeof task["subWorkflowId"] === "string");
      const running = await waitFor(parentId, (workflow) => waiting(workflow).length === refs.length);
      // The last of them, in the parent's order of tasks, loses its storage, then its instance goes (an eviction of that
      // object only: evicting all of them made each other child's object wake up and recover at the first decide's call).
      const lost = waiting(running).at(-1)!;
      const lostId = String(lost["subWorkflowId"]);
      await waitFor(lostId, ["RUNNING"]);
      await runInDurableObject(executionStub(env, lostId), async (_instance, state) => {
        await state.storage.deleteAlarm();
        await state.storage.deleteAll();
        state.abort("evicted (test)");
      }).catch(() => undefined);
      expect((await api("GET", `/api/workflow/${lostId}`)).status).toBe(404);
      const lostTask = async () => (await getWorkflow(parentId)).tasks.find((task) => task["taskId"] === lost["taskId"])!;
      // The first call looks at the first three, all there; the second goes on from the fourth.
      expect((await api("PUT", `/api/workflow/decide/${parentId}`)).status).toBe(200);
      expect(await lostTask()).toMatchObject({ status: "IN_PROGRESS" });
      expect((await api("PUT", `/api/workflow/decide/${parentId}`)).status).toBe(200);
      expect(await lostTask()).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringContaining(`Sub workflow ${lostId} no longer exists`) });
      // The objects may still have an alarm armed for their owed search rows, due within seconds: run here, not in the
      // next tests (whose counts of calls, and time, they would take).
      const objects = [parentId, ...waiting(running).map((task) => String(task["subWorkflowId"])).filter((id) => id !== lostId)];
      for (let round = 0; round < 3; round++) {
        let ran = 0;
        for (const id of objects) if (await runDurableObjectAlarm(executionStub(env, id))) ran++;
        if (ran === 0) break;
      }
    } finally {
      WorkflowExecution.lostChildLooksPerDecide = looks;
    }
  });
});

describe("decide of a parent one of whose children cannot be reached", () => {
  it("still answers 200 and fails the task of a lost child beside it; the unreachable child's task is left waiting (an error is no proof the child is gone)", async () => {
    await register({ name: "lost_or_not_child", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }] });
    const child = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", subWorkflowParam: { name: "lost_or_not_child", version: 1 } });
    await register({ name: "lost_or_not_parent", tasks: [{ name: "both", taskReferenceName: "both", type: "FORK_JOIN", forkTasks: [[child("unreachable")], [child("lost")]] }, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["unreachable", "lost"] }] });
    const parentId = await startWorkflow("lost_or_not_parent");
    const childOf = (workflow: { tasks: Array<Record<string, unknown>> }, ref: string) => workflow.tasks.find((task) => task["referenceTaskName"] === ref)?.["subWorkflowId"];
    const running = await waitFor(parentId, (workflow) => typeof childOf(workflow, "unreachable") === "string" && typeof childOf(workflow, "lost") === "string");
    const [unreachableId, lostId] = [String(childOf(running, "unreachable")), String(childOf(running, "lost"))];
    await waitFor(unreachableId, ["RUNNING"]);
    await waitFor(lostId, ["RUNNING"]);
    await runInDurableObject(executionStub(env, lostId), async (_instance, state) => {
      await state.storage.deleteAlarm();
      await state.storage.deleteAll();
    });
    await abortAllDurableObjects();
    // The first child's object fails the call (reset, overloaded, on its way to new code): a transient error.
    const childViewJson = WorkflowExecution.prototype.childViewJson;
    WorkflowExecution.prototype.childViewJson = async function (this: WorkflowExecution) {
      if ((this as unknown as { ctx: DurableObjectState }).ctx.id.name === unreachableId) throw new Error("Durable Object reset because its code was updated.");
      return childViewJson.call(this);
    };
    try {
      expect((await api("PUT", `/api/workflow/decide/${parentId}`)).status).toBe(200);
    } finally {
      WorkflowExecution.prototype.childViewJson = childViewJson;
    }
    const parent = await waitFor(parentId, (workflow) => workflow.tasks.find((task) => task["referenceTaskName"] === "lost")?.["status"] === "FAILED");
    expect(String(parent.tasks.find((task) => task["referenceTaskName"] === "lost")!["reasonForIncompletion"])).toContain(`Sub workflow ${lostId} no longer exists`);
    // Not failed for the error: it ended only as its parent's failure canceled it.
    expect(parent.tasks.find((task) => task["referenceTaskName"] === "unreachable")!["reasonForIncompletion"] ?? "").not.toContain(`Sub workflow ${unreachableId} no longer exists`);
  });
});

describe("decide of a parent whose calls to its children the runtime refuses past the invocation's count", () => {
  it("stops asking at the first refusal (every call after is refused alike), and the next decide asks the children left", async () => {
    await register({ name: "counted_child", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }] });
    const refs = ["first", "second", "third"];
    const child = (ref: string) => [{ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", subWorkflowParam: { name: "counted_child", version: 1 } }];
    await register({ name: "counted_parent", tasks: [{ name: "all", taskReferenceName: "all", type: "FORK_JOIN", forkTasks: refs.map(child) }, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: refs }] });
    const parentId = await startWorkflow("counted_parent");
    const childOf = (workflow: { tasks: Array<Record<string, unknown>> }, ref: string) => workflow.tasks.find((task) => task["referenceTaskName"] === ref)?.["subWorkflowId"];
    const running = await waitFor(parentId, (workflow) => refs.every((ref) => typeof childOf(workflow, ref) === "string"));
    const childIds = new Set(refs.map((ref) => String(childOf(running, ref))));
    const lostId = String(childOf(running, "third"));
    await waitFor(lostId, ["RUNNING"]);
    await runInDurableObject(executionStub(env, lostId), async (_instance, state) => {
      await state.storage.deleteAlarm();
      await state.storage.deleteAll();
    });
    await abortAllDurableObjects();
    // As a deployed runtime refuses every call past the invocation's count: here, each after the first. Only calls to
    // this parent's children count: the prototype is the isolate's, and an earlier test's work still going on (a
    // timed-out one's decide) called it too, counted 3.
    let calls = 0;
    const childViewJson = WorkflowExecution.prototype.childViewJson;
    WorkflowExecution.prototype.childViewJson = async function (this: WorkflowExecution) {
      if (!childIds.has(String((this as unknown as { ctx: DurableObjectState }).ctx.id.name))) return childViewJson.call(this);
      calls++;
      if (calls > 1) throw new Error("Too many API requests by single Worker invocation.");
      return childViewJson.call(this);
    };
    try {
      expect((await api("PUT", `/api/workflow/decide/${parentId}`)).status).toBe(200);
    } finally {
      WorkflowExecution.prototype.childViewJson = childViewJson;
    }
    expect(calls).toBe(2);
    expect((await getWorkflow(parentId)).tasks.find((task) => task["referenceTaskName"] === "third")!["status"]).toBe("IN_PROGRESS");
    // The invocation's count fresh: the children left are asked, and the lost one's task fails.
    expect((await api("PUT", `/api/workflow/decide/${parentId}`)).status).toBe(200);
    const parent = await waitFor(parentId, (workflow) => workflow.tasks.find((task) => task["referenceTaskName"] === "third")?.["status"] === "FAILED");
    expect(String(parent.tasks.find((task) => task["referenceTaskName"] === "third")!["reasonForIncompletion"])).toContain(`Sub workflow ${lostId} no longer exists`);
  });
});

describe("createdBy (Orkes' Workflow field)", () => {
  it("names who started a workflow through the API; its SUB_WORKFLOW child, a restart and its failure workflow keep it", async () => {
    await register({ name: "created_child", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT" }] });
    await register({ name: "created_on_failure", tasks: [{ name: "note", taskReferenceName: "note", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "1" } }] });
    await register({
      name: "created_parent",
      failureWorkflow: "created_on_failure",
      tasks: [{ name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "created_child", version: 1 } }],
    });
    const starter = await createUser("created-by-starter", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:created_*" }, { action: "WORKFLOW_READ", scope: "workflow:created_*" }] });
    const started = await call("POST", "/api/workflow/created_parent", orkes(starter.token), {});
    expect(started.status).toBe(200);
    const parentId = await started.text();
    const running = await waitFor(parentId, (workflow) => typeof workflow.tasks[0]?.["subWorkflowId"] === "string");
    expect(running["createdBy"]).toBe("created-by-starter");
    const childId = String(running.tasks[0]!["subWorkflowId"]);
    expect((await getWorkflow(childId))["createdBy"]).toBe("created-by-starter");
    // Failed (its child terminated), it starts its failure workflow as the same starter.
    await apiOk("DELETE", `/api/workflow/${childId}`);
    const failed = await waitFor(parentId, ["FAILED"]);
    const failureId = String(failed.output["conductor.failure_workflow"]);
    expect((await waitFor(failureId, ["COMPLETED", "FAILED"]))["createdBy"]).toBe("created-by-starter");
    await apiOk("POST", `/api/workflow/${parentId}/restart`, undefined, 204);
    expect((await getWorkflow(parentId))["createdBy"]).toBe("created-by-starter");
    // The bootstrap admin key acts as the user "admin".
    expect((await getWorkflow(await startWorkflow("created_child")))["createdBy"]).toBe("admin");
  });
});
