import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, target, waitForIndexRow, type WorkflowJson } from "./helpers";

const inline = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "1 + 1" } });
/** A worker's task nobody polls: a synchronous execute waits for it (the workflow is not blocked, only busy). */
const simple = (ref: string): JsonObject => ({ name: `exec_worker_${ref}`, taskReferenceName: ref, type: "SIMPLE", inputParameters: {} });
const wait = (ref: string, inputParameters: JsonObject = {}): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters });
const subTask = (ref: string, child: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", inputParameters: { order: "${workflow.input.order}" }, subWorkflowParam: { name: child, version: 1 } });
const statuses = (workflow: { tasks: Array<{ referenceTaskName: string; status: string }> }) => workflow.tasks.map((task) => `${task.referenceTaskName}:${task.status}`);

type Run = WorkflowJson & { responseType: string; targetWorkflowId: string; targetWorkflowStatus: string; requestId?: string };

/** Executes `name` version 1 with `query`, answering the body, the status (200, or 206 for a partial answer) and how long the call took. */
async function execute(name: string, query: string, input: JsonObject = {}): Promise<{ run: Run; ms: number; status: number }> {
  const started = Date.now();
  const response = await api("POST", `/api/workflow/execute/${name}/1${query}`, { input });
  const ms = Date.now() - started;
  if (response.status !== 200 && response.status !== 206) throw new Error(`execute answered ${response.status}: ${await response.text()}`);
  return { run: (await response.json()) as Run, ms, status: response.status };
}

/** Executions of `name` the search index holds. */
async function indexed(name: string): Promise<number> {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM executions WHERE workflow_name = ?").bind(name).first<{ n: number }>();
  return row?.n ?? 0;
}

describe("execute's waitUntilTaskRef (POST /api/workflow/execute/{name}/{version}?waitUntilTaskRef=)", () => {
  it("answers as soon as the named task has COMPLETED, while the workflow still runs (not after waitForSeconds)", async () => {
    await register({ name: "exec_until", tasks: [inline("prep"), simple("work")] });
    const { run, ms, status } = await execute("exec_until", "?waitUntilTaskRef=prep&waitForSeconds=15");
    expect(ms).toBeLessThan(5_000);
    // Orkes' 206: the answer is partial, the workflow goes on.
    expect(status).toBe(206);
    expect(run).toMatchObject({ status: "RUNNING", responseType: "TARGET_WORKFLOW", targetWorkflowStatus: "RUNNING", targetWorkflowId: run.workflowId });
    expect(statuses(run)).toEqual(["prep:COMPLETED", "work:SCHEDULED"]);
    // Without waitUntilTaskRef, an answer while it runs (after waitForSeconds) is the usual 200.
    expect((await execute("exec_until", "?waitForSeconds=0")).status).toBe(200);
  });

  it("takes a comma-separated list (any one completing answers) and waits past tasks that completed but are not named", async () => {
    await register({ name: "exec_until_many", tasks: [inline("prep"), httpTask("call", { uri: target("/count/exec-until-many"), method: "GET" }), simple("work")] });
    const { run, ms } = await execute("exec_until_many", "?waitUntilTaskRef=nowhere,%20call&waitForSeconds=15");
    expect(ms).toBeLessThan(5_000);
    expect(run.status).toBe("RUNNING");
    expect(statuses(run)).toEqual(["prep:COMPLETED", "call:COMPLETED", "work:SCHEDULED"]);
    expect(await hits("exec-until-many")).toBe(1);
  });

  it("with refs that never complete (unknown ones included), answers as without: once it has ended, once it waits outside, or after waitForSeconds", async () => {
    await register({ name: "exec_until_ends", tasks: [inline("prep"), httpTask("call", { uri: target("/echo/exec-until-ends"), method: "GET" })] });
    const ended = await execute("exec_until_ends", "?waitUntilTaskRef=nowhere");
    expect([ended.run.status, ended.status]).toEqual(["COMPLETED", 200]);

    await register({ name: "exec_until_blocks", tasks: [inline("prep"), wait("hold"), inline("after")] });
    const blocked = await execute("exec_until_blocks", "?waitUntilTaskRef=after,nowhere&waitForSeconds=15");
    expect(blocked.ms).toBeLessThan(5_000);
    expect(statuses(blocked.run)).toEqual(["prep:COMPLETED", "hold:IN_PROGRESS"]);

    await register({ name: "exec_until_times_out", tasks: [inline("prep"), simple("work"), inline("after")] });
    const timedOut = await execute("exec_until_times_out", "?waitUntilTaskRef=after&waitForSeconds=1");
    expect(timedOut.ms).toBeGreaterThanOrEqual(900);
    expect(statuses(timedOut.run)).toEqual(["prep:COMPLETED", "work:SCHEDULED"]);
  });

  it("counts a task of a sub workflow the workflow waits on, as Conductor's WorkflowSignalResponder does; BLOCKING_TASK answers that task", async () => {
    await register({ name: "exec_until_child", tasks: [inline("prep"), simple("work")] });
    await register({ name: "exec_until_parent", tasks: [subTask("sub", "exec_until_child")] });
    // The child's worker task is never polled: only the named task's end answers before waitForSeconds runs out.
    const { run, status } = await execute("exec_until_parent", "?waitUntilTaskRef=prep&waitForSeconds=3");
    expect([status, run.status, run["signalTimeout"]]).toEqual([206, "RUNNING", false]);
    expect(statuses(run)).toEqual(["sub:IN_PROGRESS"]);
    const blocking = (await execute("exec_until_parent", "?waitUntilTaskRef=prep&waitForSeconds=3&returnStrategy=BLOCKING_TASK")).run as unknown as JsonObject;
    expect(blocking).toMatchObject({ responseType: "BLOCKING_TASK", targetWorkflowStatus: "RUNNING", signalTimeout: false, workflowType: "exec_until_child", referenceTaskName: "prep", status: "COMPLETED" });
    expect(blocking["workflowId"]).not.toBe(blocking["targetWorkflowId"]);
  });

  it("counts any completed iteration of a DO_WHILE's task for its reference name; ref__N names that iteration's", async () => {
    const loop = { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", inputParameters: {}, loopCondition: "$.loop['iteration'] < 5", loopOver: [httpTask("ping", { uri: target("/echo/exec-loop"), method: "GET" })] };
    await register({ name: "exec_until_loop", tasks: [loop, simple("work")] });
    const first = (await execute("exec_until_loop", "?waitUntilTaskRef=ping&waitForSeconds=15")).run;
    expect(first.status).toBe("RUNNING");
    expect(first.tasks.find((task) => task.referenceTaskName === "ping__1")?.status).toBe("COMPLETED");
    expect(first.tasks.find((task) => task.referenceTaskName === "loop")?.status).toBe("IN_PROGRESS");

    const second = (await execute("exec_until_loop", "?waitUntilTaskRef=ping__2&waitForSeconds=15")).run;
    expect(second.tasks.find((task) => task.referenceTaskName === "ping__2")?.status).toBe("COMPLETED");
    expect(second.tasks.find((task) => task.referenceTaskName === "loop")?.status).toBe("IN_PROGRESS");
  });
});

describe("execute's returnStrategy and consistency", () => {
  /** A parent whose SUB_WORKFLOW runs a child that waits in `first`, whose input names the order. */
  async function registerParentAndChild(prefix: string): Promise<void> {
    await register({ name: `${prefix}_child`, tasks: [wait("first", { order: "${workflow.input.order}" })], inputParameters: ["order"] });
    await register({ name: `${prefix}_parent`, tasks: [subTask("sub", `${prefix}_child`)] });
  }
  const childOf = (run: WorkflowJson) => String(run.tasks[0]!["subWorkflowId"]);

  it("answers Orkes' SignalResponse: TARGET_WORKFLOW (the default) the workflow, BLOCKING_* what blocks it, in the child it waits for", async () => {
    await registerParentAndChild("exec_strategy");
    const plain = (await execute("exec_strategy_parent", "?requestId=r-0", { order: 7 })).run;
    expect(plain).toMatchObject({ responseType: "TARGET_WORKFLOW", targetWorkflowId: plain.workflowId, targetWorkflowStatus: "RUNNING", workflowName: "exec_strategy_parent", status: "RUNNING", requestId: "r-0" });
    expect(statuses(plain)).toEqual(["sub:IN_PROGRESS"]);
    const target = (await execute("exec_strategy_parent", "?returnStrategy=TARGET_WORKFLOW", { order: 7 })).run;
    expect(target).toMatchObject({ responseType: "TARGET_WORKFLOW", workflowName: "exec_strategy_parent" });
    expect(target["requestId"]).toMatch(/^[0-9a-f-]{36}$/);

    const blockingWorkflow = (await execute("exec_strategy_parent", "?returnStrategy=BLOCKING_WORKFLOW&requestId=r-1", { order: 7 })).run;
    expect(blockingWorkflow).toMatchObject({ responseType: "BLOCKING_WORKFLOW", targetWorkflowStatus: "RUNNING", workflowName: "exec_strategy_child", requestId: "r-1" });
    expect(blockingWorkflow.workflowId).not.toBe(blockingWorkflow.targetWorkflowId);
    expect(statuses(blockingWorkflow)).toEqual(["first:IN_PROGRESS"]);

    const blockingTask = (await execute("exec_strategy_parent", "?returnStrategy=BLOCKING_TASK", { order: 7 })).run as unknown as JsonObject;
    expect(blockingTask).toMatchObject({ responseType: "BLOCKING_TASK", targetWorkflowStatus: "RUNNING", workflowType: "exec_strategy_child", referenceTaskName: "first", taskType: "WAIT", status: "IN_PROGRESS", input: { order: 7 }, output: {} });
    // Orkes' examples show the workflow's priority and the task's creation time.
    expect(blockingTask).toMatchObject({ priority: 0, createTime: blockingTask["scheduledTime"] });
    expect(blockingTask["createTime"]).toBeGreaterThan(0);

    const blockingInput = (await execute("exec_strategy_parent", "?returnStrategy=BLOCKING_TASK_INPUT", { order: 7 })).run as unknown as JsonObject;
    expect(blockingInput).toEqual({
      responseType: "BLOCKING_TASK_INPUT",
      targetWorkflowId: expect.any(String),
      targetWorkflowStatus: "RUNNING",
      targetWorkflowVariables: {},
      signalTimeout: false,
      workflowId: expect.any(String),
      workflowType: "exec_strategy_child",
      taskId: expect.any(String),
      taskType: "WAIT",
      referenceTaskName: "first",
      taskDefName: "first",
      status: "IN_PROGRESS",
      retryCount: 0,
      priority: 0,
      createTime: expect.any(Number),
      updateTime: expect.any(Number),
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      input: { order: 7 },
    });
    expect(blockingInput["workflowId"]).not.toBe(blockingInput["targetWorkflowId"]);

    const blockingList = (await execute("exec_strategy_parent", "?returnStrategy=BLOCKING_TASK_LIST", { order: 7 })).run as unknown as JsonObject;
    expect(blockingList).toMatchObject({ responseType: "BLOCKING_TASK_LIST", targetWorkflowStatus: "RUNNING", workflowType: "exec_strategy_child" });
    expect(blockingList["tasks"]).toEqual([expect.objectContaining({ referenceTaskName: "first", taskType: "WAIT", status: "IN_PROGRESS", inputData: { order: 7 } })]);

    // Ended: nothing blocks it, so only where it ended.
    await register({ name: "exec_strategy_done", tasks: [inline("prep")] });
    const ended = (await execute("exec_strategy_done", "?returnStrategy=BLOCKING_TASK")).run as unknown as JsonObject;
    expect(ended).toEqual({ responseType: "BLOCKING_TASK", targetWorkflowId: ended["workflowId"], targetWorkflowStatus: "COMPLETED", targetWorkflowVariables: {}, signalTimeout: false, workflowId: expect.any(String), workflowType: "exec_strategy_done", requestId: expect.any(String) });
  });

  it("with waitUntilTaskRef, BLOCKING_* answer the named task that has ended (Conductor's WorkflowSignalResponder), not the task pending after it", async () => {
    await register({ name: "exec_strategy_until", tasks: [inline("task1"), wait("later")] });
    const { run, ms, status } = await execute("exec_strategy_until", "?waitUntilTaskRef=task1&returnStrategy=BLOCKING_TASK&waitForSeconds=15");
    expect(ms).toBeLessThan(5_000);
    expect(status).toBe(206);
    expect(run).toMatchObject({ responseType: "BLOCKING_TASK", targetWorkflowStatus: "RUNNING", referenceTaskName: "task1", taskType: "INLINE", status: "COMPLETED", output: { result: 2 }, workflowType: "exec_strategy_until" });
    const blockingWorkflow = (await execute("exec_strategy_until", "?waitUntilTaskRef=task1&returnStrategy=BLOCKING_WORKFLOW&waitForSeconds=15")).run;
    expect(blockingWorkflow).toMatchObject({ workflowName: "exec_strategy_until", blockingTaskReferenceName: "task1" });
    const list = (await execute("exec_strategy_until", "?waitUntilTaskRef=task1&returnStrategy=BLOCKING_TASK_LIST&waitForSeconds=15")).run as unknown as JsonObject;
    expect(list["tasks"]).toEqual([expect.objectContaining({ referenceTaskName: "task1", status: "COMPLETED" })]);

    // Once the workflow has ended the named task is still the answer (Conductor looks for it in any workflow).
    await register({ name: "exec_strategy_until_done", tasks: [inline("task1")] });
    const ended = await execute("exec_strategy_until_done", "?waitUntilTaskRef=task1&returnStrategy=BLOCKING_TASK");
    expect(ended.status).toBe(200);
    expect(ended.run).toMatchObject({ responseType: "BLOCKING_TASK", targetWorkflowStatus: "COMPLETED", referenceTaskName: "task1", status: "COMPLETED" });
  });

  it("with waitUntilTaskRef, a pending worker's task is not blocking: of the named tasks, the one that has ended is answered", async () => {
    const fork = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[simple("task1")], [inline("task2")]] };
    await register({ name: "exec_strategy_until_fork", tasks: [fork, { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: ["task1", "task2"] }] });
    const { run, status } = await execute("exec_strategy_until_fork", "?waitUntilTaskRef=task1,%20task2%20&returnStrategy=BLOCKING_TASK_INPUT&waitForSeconds=15");
    expect(status).toBe(206);
    expect(run).toMatchObject({ responseType: "BLOCKING_TASK_INPUT", referenceTaskName: "task2", taskType: "INLINE", status: "COMPLETED" });
  });

  it("with waitUntilTaskRef, a WAIT with no time set, earlier in task order, blocks before the named task; a timed WAIT does not", async () => {
    const timed = wait("timed", { duration: "1 hour" });
    const fork = (name: string, first: JsonObject) => ({ name, taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[first], [inline("done")]] });
    const join = { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: ["done"] };
    await register({ name: "exec_strategy_until_hold", tasks: [fork("fan_hold", wait("hold")), join] });
    const held = (await execute("exec_strategy_until_hold", "?waitUntilTaskRef=done&returnStrategy=BLOCKING_TASK&waitForSeconds=15")).run;
    expect(held).toMatchObject({ referenceTaskName: "hold", taskType: "WAIT", status: "IN_PROGRESS" });
    await register({ name: "exec_strategy_until_timed", tasks: [fork("fan_timed", timed), join] });
    const named = (await execute("exec_strategy_until_timed", "?waitUntilTaskRef=done&returnStrategy=BLOCKING_TASK&waitForSeconds=15")).run;
    expect(named).toMatchObject({ referenceTaskName: "done", status: "COMPLETED" });
  });

  it("with waitUntilTaskRef and nothing of the kind (the named task not reached), BLOCKING_TASK answers the first pending task, as without it", async () => {
    await register({ name: "exec_strategy_until_none", tasks: [inline("prep"), simple("work"), inline("after")] });
    const { run } = await execute("exec_strategy_until_none", "?waitUntilTaskRef=after&returnStrategy=BLOCKING_TASK&waitForSeconds=1");
    expect(run).toMatchObject({ responseType: "BLOCKING_TASK", targetWorkflowStatus: "RUNNING", referenceTaskName: "work", status: "SCHEDULED" });
  });

  it("with waitUntilTaskRef, answers once the named task has ended whatever its status (Conductor's terminal states): an optional failure", async () => {
    const failing = { name: "exec_fails", taskReferenceName: "check", type: "INLINE", optional: true, inputParameters: { evaluatorType: "javascript", expression: "(function () { throw new Error('no') })()" } };
    await register({ name: "exec_until_failed", tasks: [failing, simple("work")] });
    const { run, ms, status } = await execute("exec_until_failed", "?waitUntilTaskRef=check&waitForSeconds=15");
    expect(ms).toBeLessThan(5_000);
    expect(status).toBe(206);
    expect(run.status).toBe("RUNNING");
    expect(run.tasks[0]).toMatchObject({ referenceTaskName: "check", status: "COMPLETED_WITH_ERRORS" });
  });

  it("shows a child's workflow or task only to a caller who may read that child; others get the parent's SUB_WORKFLOW task", async () => {
    await registerParentAndChild("exec_rights");
    const parentReader = await createUser("exec-parent-reader", {
      directPermissions: [
        { action: "WORKFLOW_ADMIN", scope: "workflow:exec_rights_*" },
        { action: "WORKFLOW_READ", scope: "workflow:exec_rights_parent" },
      ],
    });
    const bothReader = await createUser("exec-both-reader", {
      directPermissions: [
        { action: "WORKFLOW_ADMIN", scope: "workflow:exec_rights_*" },
        { action: "WORKFLOW_READ", scope: "workflow:exec_rights_*" },
      ],
    });
    const as = async (token: string, strategy: string): Promise<JsonObject> => {
      const response = await call("POST", `/api/workflow/execute/exec_rights_parent/1?returnStrategy=${strategy}`, orkes(token), { input: { order: 3 } });
      expect(response.status, await response.clone().text()).toBe(200);
      return (await response.json()) as JsonObject;
    };

    const ownWorkflow = await as(parentReader.token, "BLOCKING_WORKFLOW");
    expect(ownWorkflow).toMatchObject({ responseType: "BLOCKING_WORKFLOW", workflowName: "exec_rights_parent" });
    expect(ownWorkflow["workflowId"]).toBe(ownWorkflow["targetWorkflowId"]);
    const ownTask = await as(parentReader.token, "BLOCKING_TASK");
    expect(ownTask).toMatchObject({ workflowType: "exec_rights_parent", referenceTaskName: "sub", taskType: "SUB_WORKFLOW", status: "IN_PROGRESS" });
    expect(await as(parentReader.token, "BLOCKING_TASK_INPUT")).toMatchObject({ workflowType: "exec_rights_parent", referenceTaskName: "sub" });

    const childWorkflow = (await as(bothReader.token, "BLOCKING_WORKFLOW")) as WorkflowJson;
    expect(childWorkflow).toMatchObject({ workflowName: "exec_rights_child", workflowId: expect.any(String) });
    expect(childWorkflow.workflowId).not.toBe(childWorkflow["targetWorkflowId"]);
    expect(await as(bothReader.token, "BLOCKING_TASK")).toMatchObject({ workflowType: "exec_rights_child", referenceTaskName: "first", input: { order: 3 } });
    // The parent's answer names its child's id (as GET of the parent would): only the child's content is withheld.
    expect(childOf((await as(parentReader.token, "TARGET_WORKFLOW")) as WorkflowJson)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("says signalTimeout (Conductor's SignalResponse flag) only when waitForSeconds ran out with the workflow busy, in the child it waits for too", async () => {
    await register({ name: "exec_timeout_busy", tasks: [inline("prep"), simple("work")] });
    await register({ name: "exec_timeout_waits", tasks: [inline("prep"), wait("hold")] });
    await register({ name: "exec_timeout_ends", tasks: [inline("prep")] });
    await register({ name: "exec_timeout_parent_busy", tasks: [subTask("sub", "exec_timeout_busy")] });
    await register({ name: "exec_timeout_parent_waits", tasks: [subTask("sub", "exec_timeout_waits")] });
    const timedOut = async (name: string, query: string): Promise<unknown> => (await execute(name, query)).run["signalTimeout"];
    for (const strategy of ["TARGET_WORKFLOW", "BLOCKING_WORKFLOW", "BLOCKING_TASK", "BLOCKING_TASK_INPUT", "BLOCKING_TASK_LIST"]) {
      // A worker's task nobody polls keeps the workflow busy: the wait runs out.
      expect(await timedOut("exec_timeout_busy", `?waitForSeconds=1&returnStrategy=${strategy}`), strategy).toBe(true);
      expect(await timedOut("exec_timeout_parent_busy", `?waitForSeconds=1&returnStrategy=${strategy}`), strategy).toBe(true);
      // Ended, or waiting for a signal (here or in the child): the answer came before the time ran out.
      expect(await timedOut("exec_timeout_ends", `?returnStrategy=${strategy}`), strategy).toBe(false);
      expect(await timedOut("exec_timeout_waits", `?waitForSeconds=5&returnStrategy=${strategy}`), strategy).toBe(false);
      expect(await timedOut("exec_timeout_parent_waits", `?waitForSeconds=5&returnStrategy=${strategy}`), strategy).toBe(false);
    }
    // A task named in waitUntilTaskRef that has ended is no timeout, though the workflow goes on (206).
    const partial = await execute("exec_timeout_busy", "?waitUntilTaskRef=prep&waitForSeconds=5");
    expect([partial.status, partial.run["signalTimeout"]]).toEqual([206, false]);
    // No time to wait at all: an ended workflow is still no timeout.
    expect(await timedOut("exec_timeout_ends", "?waitForSeconds=0")).toBe(false);
  });

  it("carries targetWorkflowVariables, the started workflow's variables, whatever the returnStrategy: TARGET_WORKFLOW too, as /signal/sync's", async () => {
    const setVariable: JsonObject = { name: "note", taskReferenceName: "note", type: "SET_VARIABLE", inputParameters: { stage: "held", order: "${workflow.input.order}" } };
    await register({ name: "exec_variables", tasks: [setVariable, wait("hold")] });
    // The Java client's SignalResponse reads it for every strategy (getTargetWorkflowVariables); the default one included.
    for (const query of ["", "?returnStrategy=TARGET_WORKFLOW", "?returnStrategy=BLOCKING_TASK", "?returnStrategy=BLOCKING_WORKFLOW", "?returnStrategy=BLOCKING_TASK_INPUT", "?returnStrategy=BLOCKING_TASK_LIST"]) {
      const { run } = await execute("exec_variables", query, { order: 5 });
      expect(run["targetWorkflowVariables"], query).toEqual({ stage: "held", order: 5 });
    }
    // The state update answers the same WorkflowRun.
    const { run } = await execute("exec_variables", "", { order: 6 });
    const updated = await apiOk<Run>("POST", `/api/workflow/${run.workflowId}/state`, { variables: { stage: "moved" } });
    expect(updated).toMatchObject({ variables: { stage: "moved", order: 6 }, targetWorkflowVariables: { stage: "moved", order: 6 }, responseType: "TARGET_WORKFLOW" });
  });

  it("accepts the consistency levels of the official client (every start here is durable), all alike", async () => {
    await register({ name: "exec_consistency", tasks: [inline("prep")] });
    for (const consistency of ["SYNCHRONOUS", "DURABLE", "REGION_DURABLE", ""]) {
      const { run } = await execute("exec_consistency", `?consistency=${consistency}`);
      expect(run, consistency).toMatchObject({ status: "COMPLETED", responseType: "TARGET_WORKFLOW" });
    }
  });

  it("refuses a bad returnStrategy or consistency with a 400 naming the parameter, starting nothing", async () => {
    await register({ name: "exec_refused", tasks: [httpTask("call", { uri: target("/count/exec-refused"), method: "GET" })] });
    for (const [query, path] of [
      ["returnStrategy=EVERYTHING", "returnStrategy"],
      ["returnStrategy=blocking_task", "returnStrategy"],
      ["consistency=EVENTUAL", "consistency"],
      ["consistency=REGIONAL_DURABLE&returnStrategy=BLOCKING_TASK", "consistency"],
    ] as const) {
      const response = await api("POST", `/api/workflow/execute/exec_refused/1?${query}`, { input: {} });
      expect(response.status, query).toBe(400);
      const body = (await response.json()) as { error: string; validationErrors: Array<{ path: string; message: string }> };
      expect(body.error).toBe("VALIDATION_ERROR");
      expect(body.validationErrors[0]!.path).toBe(path);
    }
    // A start afterwards is the only one: its row and its call are the first.
    const { run } = await execute("exec_refused", "");
    expect(run.status).toBe("COMPLETED");
    await waitForIndexRow(run.workflowId, "COMPLETED");
    expect(await indexed("exec_refused")).toBe(1);
    expect(await hits("exec-refused")).toBe(1);
  });
});

describe("Orkes' state update (POST /api/workflow/{workflowId}/state)", () => {
  /** A workflow waiting in WAIT `approve`, whose next task shows the variable `decision` it was given. */
  async function waitingForApproval(name: string): Promise<string> {
    const show: JsonObject = { name: "show", taskReferenceName: "show", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "$.decision", decision: "${workflow.variables.decision}" } };
    await register({ name, tasks: [wait("approve"), show, wait("ship")] });
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name });
    await eventually(() => getWorkflow(workflowId), (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS", "the WAIT task pending");
    return workflowId;
  }
  const update = (workflowId: string, body: unknown, query = "") => api("POST", `/api/workflow/${workflowId}/state${query}`, body);

  it("merges the variables and completes the task named in one change, then answers the WorkflowRun once it waits again", async () => {
    const workflowId = await waitingForApproval("state_basic");
    const response = await update(workflowId, { taskReferenceName: "approve", taskResult: { status: "COMPLETED", outputData: { by: "ann" } }, variables: { decision: "yes" } }, "?requestId=r-1");
    expect(response.status).toBe(200);
    const run = (await response.json()) as Run;
    expect(run).toMatchObject({ workflowId, status: "RUNNING", variables: { decision: "yes" }, requestId: "r-1", responseType: "TARGET_WORKFLOW", targetWorkflowId: workflowId, targetWorkflowStatus: "RUNNING", signalTimeout: false });
    // The variables were there before the task that follows the completed one was scheduled: one decision.
    expect(statuses(run)).toEqual(["approve:COMPLETED", "show:COMPLETED", "ship:IN_PROGRESS"]);
    expect(run.tasks[0]!.outputData).toEqual({ by: "ann" });
    expect(run.tasks[1]!.outputData).toEqual({ result: "yes" });
    // A task named by its id instead (the TaskResult's taskId), and a waitUntilTaskRef answered partially (206) while it runs on.
    const ship = run.tasks[2]!.taskId;
    const last = await update(workflowId, { taskResult: { taskId: ship, workflowInstanceId: workflowId, status: "COMPLETED" } }, "?waitUntilTaskRef=ship");
    expect(last.status).toBe(200);
    expect(((await last.json()) as Run).status).toBe("COMPLETED");
  });

  it("answers 206 when it stops at a waitUntilTaskRef task with the workflow still running, and takes variables alone", async () => {
    const workflowId = await waitingForApproval("state_partial");
    const variablesOnly = await update(workflowId, { variables: { decision: "maybe", note: { n: 1 } } });
    expect(variablesOnly.status).toBe(200);
    const unchanged = (await variablesOnly.json()) as Run;
    expect(unchanged.variables).toEqual({ decision: "maybe", note: { n: 1 } });
    expect(statuses(unchanged)).toEqual(["approve:IN_PROGRESS"]);
    const partial = await update(workflowId, { taskReferenceName: "approve", taskResult: { status: "COMPLETED" } }, "?waitUntilTaskRef=approve&waitForSeconds=2");
    expect(partial.status).toBe(206);
    expect(((await partial.json()) as Run).tasks[0]!.status).toBe("COMPLETED");
  });

  it("refuses a bad update with the error naming what is wrong, and a refused task result leaves the variables as they were", async () => {
    const workflowId = await waitingForApproval("state_refused");
    const before = await getWorkflow(workflowId);
    const unknownTaskId = crypto.randomUUID();
    const refusals: Array<[unknown, number, string]> = [
      [{ taskResult: { status: "COMPLETED" }, variables: { decision: "no" } }, 400, "taskReferenceName"],
      // Empty ids (the official client's type requires both) are absent ones.
      [{ taskResult: { taskId: "", workflowInstanceId: "", status: "COMPLETED" }, variables: { decision: "no" } }, 400, "taskReferenceName"],
      [{ taskReferenceName: "approve", taskResult: { status: "DONE" }, variables: { decision: "no" } }, 400, "taskResult.status"],
      [{ taskReferenceName: "approve", taskResult: { status: "COMPLETED", workflowInstanceId: crypto.randomUUID() }, variables: { decision: "no" } }, 400, "taskResult.workflowInstanceId"],
      [{ variables: ["decision"] }, 400, "variables"],
      [[{ variables: {} }], 400, "(body)"],
      [{ taskReferenceName: "no_such_task", taskResult: { status: "COMPLETED" }, variables: { decision: "no" } }, 404, "has no task with reference name no_such_task"],
      [{ taskResult: { taskId: unknownTaskId, status: "COMPLETED" }, variables: { decision: "no" } }, 404, `has no task ${unknownTaskId}`],
    ];
    // A 400 names the field among its validationErrors; a 404 says which task the workflow lacks.
    for (const [body, status, what] of refusals) {
      const response = await update(workflowId, body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      const error = (await response.json()) as { message: string; validationErrors?: Array<{ path: string }> };
      if (status === 400) expect(error.validationErrors?.map((issue) => issue.path), JSON.stringify(body)).toContain(what);
      else expect(error.message, JSON.stringify(body)).toBe(`Workflow ${workflowId} ${what}`);
    }
    // A result without a status (the Java client's TaskResult unless set) completes it, as Conductor takes it.
    expect((await update(workflowId, { taskReferenceName: "approve", taskResult: { outputData: { a: "b" }, status: null } })).status).toBe(200);
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { a: "b" } });
    // The task is done: completing it again is a conflict, and the variables given with it are not kept either.
    const done = await update(workflowId, { taskReferenceName: "approve", taskResult: { status: "COMPLETED" }, variables: { decision: "late" } });
    expect(done.status).toBe(409);
    const after = await getWorkflow(workflowId);
    expect(after.variables).toEqual(before.variables);
    expect(after["variables"]).not.toHaveProperty("decision");
    expect(await api("POST", `/api/workflow/${crypto.randomUUID()}/state`, { variables: { a: 1 } }).then((response) => response.status)).toBe(404);
  });
});

describe("Orkes' executeWorkflowAsAPI (POST /api/workflow/execute/{name}?version=, the Python and JavaScript clients' execute_workflow_as_api)", () => {
  // Those clients send the workflow's input itself as the body, the version in the query and the wait as headers.
  it("takes a body holding none of StartWorkflowRequest's fields as the input, and the wait, request id and key from the headers", async () => {
    await register({ name: "exec_as_api", tasks: [inline("prep"), simple("work")] });
    const response = await api("POST", "/api/workflow/execute/exec_as_api?version=1", { order: 7, customer: { id: "c1" } }, {
      requestId: "req-as-api",
      waitUntilTaskRef: "prep",
      waitForSeconds: "15",
      "X-Idempotency-key": "as-api-key",
    });
    const run = (await response.json()) as Run & { idempotencyKey?: string };
    // Orkes' 206 of an answer at a waitUntilTaskRef task: the header's task was waited for, as a query's would be.
    expect(response.status).toBe(206);
    expect(run).toMatchObject({ workflowVersion: 1, input: { order: 7, customer: { id: "c1" } }, requestId: "req-as-api", idempotencyKey: "as-api-key" });
    expect(statuses(run)).toEqual(["prep:COMPLETED", "work:SCHEDULED"]);
  });

  it("takes an input whose keys are names an object inherits (constructor, toString) as the input too", async () => {
    await register({ name: "exec_as_api_inherited", tasks: [inline("prep")] });
    const response = await api("POST", "/api/workflow/execute/exec_as_api_inherited?version=1", { constructor: "c", toString: 1, order: 3 });
    const run = (await response.json()) as Run;
    expect(run).toMatchObject({ status: "COMPLETED", input: { constructor: "c", toString: 1, order: 3 } });
  });

  it("takes an input that also holds keys of a StartWorkflowRequest (name, version, priority) as the input", async () => {
    await register({ name: "exec_as_api_fields", tasks: [inline("prep")] });
    for (const input of [{ name: "Ann", email: "ann@example.com" }, { name: "Ann", version: 1, priority: 3 }]) {
      const response = await api("POST", "/api/workflow/execute/exec_as_api_fields?version=1", input);
      const run = (await response.json()) as Run;
      expect(run).toMatchObject({ status: "COMPLETED", workflowName: "exec_as_api_fields", input });
    }
  });

  it("still reads a StartWorkflowRequest as one (the contract's body), its fields winning over the query and the headers", async () => {
    await register({ name: "exec_as_api_request", tasks: [inline("prep")] });
    await register({ name: "exec_as_api_request", version: 2, tasks: [inline("prep")] });
    const response = await api("POST", "/api/workflow/execute/exec_as_api_request?version=2&requestId=from-query", { version: 1, input: { order: 8 }, correlationId: "c-8" }, { requestId: "from-header" });
    const run = (await response.json()) as Run;
    expect(run).toMatchObject({ status: "COMPLETED", workflowVersion: 1, input: { order: 8 }, correlationId: "c-8", requestId: "from-query" });
    // Its name as the request's reading takes it, trimmed: the path's name, so still a request.
    const named = await api("POST", "/api/workflow/execute/exec_as_api_request?version=2", { name: " exec_as_api_request ", input: { order: 9 } });
    expect((await named.json()) as Run).toMatchObject({ status: "COMPLETED", input: { order: 9 } });
  });

  it("refuses a bad version in the query or a bad wait header with a 400 naming it, starting nothing", async () => {
    await register({ name: "exec_as_api_refused", tasks: [inline("prep")] });
    for (const [query, headers, path] of [["?version=x", {}, "version"], ["", { waitForSeconds: "soon" }, "waitForSeconds"]] as const) {
      const response = await api("POST", `/api/workflow/execute/exec_as_api_refused${query}`, { order: 9 }, headers);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { validationErrors: Array<{ path: string }> }).validationErrors[0]!.path).toBe(path);
    }
    expect(await indexed("exec_as_api_refused")).toBe(0);
  });

  it("answers its GET form (executeWorkflowAsGetApi) with a 501 naming the POST, starting nothing", async () => {
    await register({ name: "exec_as_get", tasks: [inline("prep")] });
    const response = await api("GET", "/api/workflow/execute/exec_as_get?version=1", undefined, { waitForSeconds: "1" });
    expect(response.status).toBe(501);
    expect(((await response.json()) as { message: string }).message).toContain("POST /api/workflow/execute/{name}");
    expect(await indexed("exec_as_get")).toBe(0);
  });
});
