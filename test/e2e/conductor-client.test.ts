/// <reference types="node" />
/**
 * The official Conductor TypeScript client (`@io-orkes/conductor-javascript`) against the real `wrangler dev`.
 *
 * Everything the service is asked goes through the client's public API (`OrkesClients`, `orkesConductorClient`,
 * `MetadataClient`, `WorkflowExecutor`, `TaskClient`, the workflow builders, the `TaskManager` and `TaskHandler` worker
 * runners), as an existing Conductor user's code would. The one exception is the webhook callback: an external
 * system sends it, not the client, so it is a plain fetch to the URL the task shows.
 */
import {
  ConductorWorkflow,
  Consistency,
  InvalidCronExpression,
  MetadataClient,
  NonRetryableException,
  OrkesClients,
  ReturnStrategy,
  Schedule,
  ScheduleNotFound,
  TaskHandler,
  TaskManager,
  TaskResultStatusEnum,
  conductorEventTask,
  doWhileTask,
  dynamicForkTask,
  dynamicTask,
  forkTask,
  forkTaskJoin,
  getTaskContext,
  httpPollTask,
  httpTask,
  humanTask,
  inlineTask,
  joinTask,
  jsonJqTask,
  newLoopTask,
  noopLogger,
  orkesConductorClient,
  setVariableTask,
  simpleTask,
  subWorkflowTask,
  switchTask,
  taskDefinition,
  terminateTask,
  waitForWebhookTask,
  waitTaskDuration,
  workflow,
  type ConductorLogger,
  type ConductorWorker,
  type TaskClient,
  type Task,
  type Workflow,
  type WorkflowDef,
  type WorkflowExecutor,
} from "@io-orkes/conductor-javascript";
import { hostname } from "node:os";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  applyMigrations,
  copyProject,
  generateAdminKey,
  removeDir,
  sleep,
  startDevServer,
  startTarget,
  tempDir,
  type DevServer,
  type Target,
} from "./dev-server";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const CHILD = `client_child_${suffix}`;
const PARENT = `client_parent_${suffix}`;

/** A task of the Workflow JSON; `callbackUrl` is this service's addition (the per-task webhook URL). */
type TaskView = Task & { callbackUrl?: string };

let project: string;
let target: Target;
let server: DevServer;
let keyId: string;
let keySecret: string;
let clients: OrkesClients;
let executor: WorkflowExecutor;
let tasks: TaskClient;
let metadata: MetadataClient;
/** CONDUCTOR_* variables of the environment, put back afterwards: the client prefers them over its config. */
const savedEnv: Record<string, string | undefined> = {};

/** `wrangler dev` in the copied project with its own empty state, the admin key and `vars`. */
async function freshServer(vars: Record<string, string> = {}): Promise<DevServer> {
  const persistTo = tempDir("client-state");
  await applyMigrations(project, persistTo);
  return startDevServer({ root: project, persistTo, adminKey: `${keyId}:${keySecret}`, vars });
}

/** Calls `read` until `done` holds, failing after `timeoutMs` with the last value read. */
async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms; last: ${JSON.stringify(value).slice(0, 3000)}`);
    await sleep(100);
  }
}

function taskOf(execution: Workflow, ref: string): TaskView | undefined {
  return (execution.tasks ?? []).findLast((task) => task.referenceTaskName === ref);
}

/** The execution once its task `ref` (latest instance) has `status`. */
function taskReaches(workflowId: string, ref: string, status: string): Promise<Workflow> {
  return until(`${ref} ${status} in ${workflowId}`, () => executor.getExecution(workflowId), (execution) => taskOf(execution, ref)?.status === status);
}

function workflowReaches(workflowId: string, status: string): Promise<Workflow> {
  return until(`${workflowId} ${status}`, () => executor.getWorkflow(workflowId, true), (execution) => execution.status === status);
}

/** The error a client call rejects with (it must reject: an answer is turned into an error saying what came instead). */
function rejection(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => new Error(`expected a rejection, got ${JSON.stringify(value)}`),
    (reason: unknown) => reason,
  );
}

/** The message of the error a client call rejects with (it must reject, with the SDK's error type). */
async function sdkError(call: Promise<unknown>): Promise<string> {
  const error = await rejection(call);
  // By name: the client's types export ConductorSdkError, but 4.0.0's ES module build does not.
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).name).toBe("[Conductor SDK Error]");
  return (error as Error).message;
}

function childDefinition(): WorkflowDef {
  return {
    ...workflow(CHILD, [httpTask("child_call", { uri: target.url("/count/${workflow.input.key}"), method: "GET" })]),
    outputParameters: { n: "${child_call.output.response.body.n}" },
  };
}

/** HTTP, asyncComplete HTTP, SUB_WORKFLOW and WAIT_FOR_WEBHOOK, built with the client's helpers. */
function parentDefinition(): WorkflowDef {
  const base = workflow(PARENT, [
    httpTask("call", { uri: target.url("/echo?x=${workflow.input.x}"), method: "POST", body: { x: "${workflow.input.x}" } }),
    httpTask("approve", { uri: target.url("/count/approve-${workflow.input.key}"), method: "POST", body: {} }, true),
    { ...subWorkflowTask("child", CHILD, 1), inputParameters: { key: "${workflow.input.key}" } },
  ]);
  return {
    ...base,
    // The client types waitForWebhookTask() as a plain WorkflowTask, which workflow() does not accept: append it here.
    tasks: [...base.tasks, waitForWebhookTask("hook")],
    outputParameters: {
      echoed: "${call.output.response.body.query.x}",
      approvedBy: "${approve.output.by}",
      childN: "${child.output.n}",
      note: "${hook.output.note}",
    },
  };
}

/**
 * The global fetch, printing any error answer that is not the service's JSON error: the client reports those as
 * "Failed to start workflow" and nothing more, and one such answer, seen once in CI, could not be explained afterwards.
 */
const fetchShowingStrayAnswers: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  if (!response.ok && !(response.headers.get("content-type") ?? "").includes("application/json")) {
    const body = await response.clone().text();
    console.error(`stray answer to ${input instanceof Request ? input.method : (init?.method ?? "GET")} ${input instanceof Request ? input.url : String(input)}: ${response.status} ${JSON.stringify([...response.headers])} ${body.slice(0, 2000)}`);
  }
  return response;
};

beforeAll(async () => {
  for (const name of Object.keys(process.env).filter((key) => key.startsWith("CONDUCTOR_"))) {
    savedEnv[name] = process.env[name];
    delete process.env[name];
  }
  project = copyProject();
  target = await startTarget();
  const adminKey = generateAdminKey();
  [keyId, keySecret] = [adminKey.slice(0, adminKey.indexOf(":")), adminKey.slice(adminKey.indexOf(":") + 1)];
  // With a secrets key, as `npm start` gives the service one (webhooks keep their secrets encrypted with it).
  server = await freshServer({ SECRETS_ENCRYPTION_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64") });
  // refreshTokenInterval 0: no background refresh timer outliving the test.
  clients = new OrkesClients(await orkesConductorClient({ serverUrl: `${server.url}/api`, keyId, keySecret, logger: noopLogger, refreshTokenInterval: 0 }, fetchShowingStrayAnswers));
  executor = clients.getWorkflowClient();
  tasks = clients.getTaskClient();
  metadata = clients.getMetadataClient();
});

afterAll(async () => {
  await server?.stop();
  await target?.close();
  removeDir(project);
  Object.assign(process.env, Object.fromEntries(Object.entries(savedEnv).filter(([, value]) => value !== undefined)));
});

describe("the official Conductor TypeScript client", () => {
  let workflowId: string;
  let childId: string;

  it("authenticates with an API key, with serverUrl given with or without /api", async () => {
    // The client strips a trailing /api and adds /api/... itself: both spellings reach the same routes.
    const bare = await orkesConductorClient({ serverUrl: server.url, keyId, keySecret, logger: noopLogger, refreshTokenInterval: 0 });
    await new MetadataClient(bare).registerWorkflowDef(childDefinition(), true);
    const read = await metadata.getWorkflowDef(CHILD);
    expect(read).toMatchObject({ name: CHILD, version: 1, tasks: [{ taskReferenceName: "child_call", type: "HTTP" }] });
  });

  it("registers a workflow built with the builder helpers and reads it back", async () => {
    await metadata.registerWorkflowDef(parentDefinition(), true);
    const read = await metadata.getWorkflowDef(PARENT, 1);
    expect(read.tasks.map((task) => [task.taskReferenceName, task.type])).toEqual([
      ["call", "HTTP"],
      ["approve", "HTTP"],
      ["child", "SUB_WORKFLOW"],
      ["hook", "WAIT_FOR_WEBHOOK"],
    ]);
    expect(read.tasks[1]).toMatchObject({ asyncComplete: true });
    const all = await metadata.getAllWorkflowDefs();
    expect(all.map((definition) => definition.name)).toEqual(expect.arrayContaining([CHILD, PARENT]));
  });

  it("starts a workflow, reads it, completes the asyncComplete task by reference name and finishes on the webhook", async () => {
    workflowId = await executor.startWorkflow({ name: PARENT, version: 1, input: { x: "42", key: suffix }, correlationId: `corr-${suffix}` });
    expect(workflowId).toMatch(UUID);

    const waiting = await taskReaches(workflowId, "approve", "IN_PROGRESS");
    expect(waiting).toMatchObject({ workflowId, workflowName: PARENT, workflowVersion: 1, status: "RUNNING", correlationId: `corr-${suffix}`, input: { x: "42", key: suffix } });
    expect(taskOf(waiting, "call")).toMatchObject({ status: "COMPLETED", taskType: "HTTP", outputData: { response: { statusCode: 200, body: { method: "POST" } } } });

    const approveId = taskOf(waiting, "approve")!.taskId;
    expect(await executor.updateTaskByRefName("approve", workflowId, "COMPLETED", { by: "executor" })).toBe(approveId);

    const hooked = await until("hook callback URL", () => executor.getExecution(workflowId), (execution) => taskOf(execution, "hook")?.callbackUrl !== undefined);
    const hook = taskOf(hooked, "hook")!;
    expect(hook.callbackUrl).toBe(`${server.url}/api/tasks/webhook/${workflowId}/hook/${hook.taskId}`);
    const callback = await fetch(hook.callbackUrl!, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ status: "COMPLETED", output: { note: "called back" } }) });
    expect(callback.status).toBe(200);

    const done = await workflowReaches(workflowId, "COMPLETED");
    expect(done.output).toEqual({ echoed: "42", approvedBy: "executor", childN: 1, note: "called back" });
    childId = taskOf(done, "child")!.subWorkflowId!;
    expect(childId).toMatch(UUID);
    expect(await executor.getWorkflow(childId, false)).toMatchObject({ status: "COMPLETED", parentWorkflowId: workflowId, correlationId: `corr-${suffix}`, tasks: [] });
  });

  it("searches by query and by free text", async () => {
    const byQuery = await until(
      "the search index",
      () => executor.search(0, 10, `workflowType IN (${PARENT}) AND status IN (COMPLETED)`, "*"),
      (result) => result.totalHits === 1,
    );
    expect(byQuery.results).toHaveLength(1);
    expect(byQuery.results![0]).toMatchObject({ workflowId, workflowType: PARENT, version: 1, status: "COMPLETED", correlationId: `corr-${suffix}` });
    expect(Date.parse(byQuery.results![0]!.startTime!)).toBeGreaterThan(0);

    const byText = await executor.search(0, 10, "", `corr-${suffix}`);
    // The child inherits the parent's correlation id, so free text finds both.
    expect(byText.results!.map((summary) => summary.workflowId).sort()).toEqual([workflowId, childId].sort());

    // The index row is there (above): the lookup by correlation id finds the parent, not the child of another name.
    const correlated = await executor.getByCorrelationIds({ workflowNames: [PARENT], correlationIds: [`corr-${suffix}`, "nobody"] }, true, false);
    expect(Object.keys(correlated)).toEqual([`corr-${suffix}`, "nobody"]);
    expect(correlated[`corr-${suffix}`]!.map((workflow) => [workflow.workflowId, workflow.status])).toEqual([[workflowId, "COMPLETED"]]);
    expect(correlated["nobody"]).toEqual([]);
    // Without includeClosed, only running ones: none.
    expect(await executor.getByCorrelationIds({ workflowNames: [PARENT], correlationIds: [`corr-${suffix}`] })).toEqual({ [`corr-${suffix}`]: [] });
  });

  it("restarts, terminates, retries and reruns", async () => {
    await executor.restart(workflowId, false);
    const restarted = await taskReaches(workflowId, "approve", "IN_PROGRESS");
    expect(restarted.status).toBe("RUNNING");
    expect(restarted.tasks!.map((task) => task.referenceTaskName)).toEqual(["call", "approve"]);

    await executor.pause(workflowId);
    expect((await executor.getWorkflow(workflowId, false)).status).toBe("PAUSED");
    await executor.resume(workflowId);
    expect((await executor.getWorkflow(workflowId, false)).status).toBe("RUNNING");

    await executor.terminate(workflowId, "stopped by the client test");
    const terminated = await executor.getWorkflow(workflowId, true);
    expect(terminated).toMatchObject({ status: "TERMINATED", reasonForIncompletion: expect.stringContaining("stopped by the client test") });

    await executor.retry(workflowId, false);
    const retried = await taskReaches(workflowId, "approve", "IN_PROGRESS");
    expect(retried.status).toBe("RUNNING");
    const approve = taskOf(retried, "approve")!;
    // TaskClient wraps the output as {outputData}, and Conductor stores that body as the task's output.
    expect(await tasks.updateTaskResult(workflowId, "approve", "COMPLETED", { by: "task client" })).toBe(approve.taskId);
    const afterTaskClient = await taskReaches(workflowId, "hook", "IN_PROGRESS");
    expect(taskOf(afterTaskClient, "approve")!.outputData).toMatchObject({ outputData: { by: "task client" } });

    await executor.terminate(workflowId, "again");
    const rerunId = await executor.reRun(workflowId, { reRunFromTaskId: approve.taskId, workflowInput: { x: "7", key: suffix } });
    expect(rerunId).toBe(workflowId);
    const rerun = await taskReaches(workflowId, "approve", "IN_PROGRESS");
    expect(rerun).toMatchObject({ status: "RUNNING", input: { x: "7" } });
    expect(taskOf(rerun, "call")).toMatchObject({ status: "COMPLETED" });

    // reRun's default request has no reRunFromTaskId: Conductor runs the whole workflow again.
    await executor.terminate(workflowId, "once more");
    expect(await executor.reRun(workflowId)).toBe(workflowId);
    const whole = await taskReaches(workflowId, "approve", "IN_PROGRESS");
    expect(whole.tasks!.map((task) => task.referenceTaskName)).toEqual(["call", "approve"]);
    expect(taskOf(whole, "call")!.taskId).not.toBe(taskOf(rerun, "call")!.taskId);

    const synced = await tasks.updateTaskSync(workflowId, "approve", "COMPLETED", { by: "sync" });
    expect(synced).toMatchObject({ workflowId, status: "RUNNING" });
    expect(taskOf(synced, "approve")).toMatchObject({ status: "COMPLETED", outputData: { by: "sync" } });
    await executor.terminate(workflowId, "done");
    // Terminated, it keeps what its outputParameters resolve to from what ran (Conductor's updateWorkflowOutput).
    const status = await executor.getWorkflowStatus(workflowId, true, false);
    expect(status).toMatchObject({ workflowId, correlationId: `corr-${suffix}`, status: "TERMINATED", output: { approvedBy: "sync" } });
  });

  it("skips tasks with skipTasksFromWorkflow: one ahead, a waiting one, and refuses one already processed", async () => {
    const skipping = await executor.startWorkflow({ name: PARENT, version: 1, input: { x: "5", key: `skip-${suffix}` } });
    await taskReaches(skipping, "approve", "IN_PROGRESS");
    // Ahead: the SUB_WORKFLOW task is recorded SKIPPED when reached, and no child starts.
    await executor.skipTasksFromWorkflow(skipping, "child", { taskOutput: { n: 5 } });
    expect(await sdkError(executor.skipTasksFromWorkflow(skipping, "call", {}))).toMatch(/^Failed to skip task 'call' in workflow '.*': .*already processed, cannot be skipped/);
    await executor.skipTasksFromWorkflow(skipping, "approve", { taskOutput: { by: "skip" } });
    const hooked = await taskReaches(skipping, "hook", "IN_PROGRESS");
    expect(taskOf(hooked, "child")).toMatchObject({ status: "SKIPPED", outputData: { n: 5 } });
    expect(taskOf(hooked, "child")!.subWorkflowId).toBeUndefined();
    await executor.skipTasksFromWorkflow(skipping, "hook", { taskOutput: { note: "skipped" } });
    const done = await workflowReaches(skipping, "COMPLETED");
    expect(done.output).toEqual({ echoed: "5", approvedBy: "skip", childN: 5, note: "skipped" });
    expect(await sdkError(executor.skipTasksFromWorkflow(skipping, "hook", {}))).toMatch(/its status is COMPLETED/);
  });

  it("registers, executes and starts a ConductorWorkflow (the fluent builder)", async () => {
    const fluent = new ConductorWorkflow(executor, `client_fluent_${suffix}`).description("fluent builder");
    fluent
      .add(httpTask("ping", { uri: target.url(`/count/fluent-${suffix}?who=${fluent.input("who")}`), method: "GET" }))
      .outputParameters({ n: "${ping.output.response.body.n}", who: "${ping.output.response.body.query.who}" });
    await fluent.register(true);
    expect(await fluent.execute({ who: "fluent" })).toMatchObject({ status: "COMPLETED", output: { n: 1, who: "fluent" } });
    const started = await fluent.startWorkflow({ who: "again" }, `fluent-${suffix}`);
    expect(await workflowReaches(started, "COMPLETED")).toMatchObject({ output: { n: 2, who: "again" }, correlationId: `fluent-${suffix}` });
  });

  it("a ConductorWorkflow with failureWorkflow starts it when it fails, and its output names it", async () => {
    const handler = new ConductorWorkflow(executor, `client_failure_handler_${suffix}`);
    handler.add(httpTask("page", { uri: target.url(`/count/failure-handler-${suffix}`), method: "GET" })).outputParameters({ failed: "${workflow.input.workflowId}", status: "${workflow.input.failureStatus}" });
    await handler.register(true);
    const failing = new ConductorWorkflow(executor, `client_failing_${suffix}`).failureWorkflow(`client_failure_handler_${suffix}`);
    failing.add({ ...httpTask("boom", { uri: target.url("/status/500"), method: "GET" }), retryCount: 0 });
    await failing.register(true);
    const failed = await failing.execute({});
    expect(failed.status).toBe("FAILED");
    const failedId = failed.workflowId!;
    const withHandler = await until("the failure workflow's id", () => executor.getWorkflow(failedId, false), (execution) => UUID.test(String(execution.output?.["conductor.failure_workflow"] ?? "")));
    const handlerId = String(withHandler.output!["conductor.failure_workflow"]);
    expect(await workflowReaches(handlerId, "COMPLETED")).toMatchObject({ output: { failed: failedId, status: "FAILED" } });
  });

  it("a ConductorWorkflow's variables start each execution's, updateVariables merges into them, and a later task sends the new value", async () => {
    const withVariables = new ConductorWorkflow(executor, `client_variables_${suffix}`).variables({ stage: "initial", keep: 1 });
    withVariables
      .add(httpTask("gate", { uri: target.url(`/echo/variables-gate-${suffix}`), method: "GET" }, true))
      .add(httpTask("after", { uri: target.url(`/count/variables-${suffix}?stage=\${workflow.variables.stage}`), method: "GET" }))
      .outputParameters({ stage: "${after.output.response.body.query.stage}" });
    await withVariables.register(true);
    const started = await withVariables.startWorkflow({});
    await taskReaches(started, "gate", "IN_PROGRESS");
    expect(await executor.updateVariables(started, { stage: "updated" })).toMatchObject({ workflowId: started, status: "RUNNING", variables: { stage: "updated", keep: 1 } });
    await executor.updateTaskByRefName("gate", started, "COMPLETED", {});
    expect(await workflowReaches(started, "COMPLETED")).toMatchObject({ output: { stage: "updated" }, variables: { stage: "updated", keep: 1 } });
  });

  it("updateState merges variables and completes a task by reference name in one call, answering the WorkflowRun it reached", async () => {
    const stateful = new ConductorWorkflow(executor, `client_state_${suffix}`).variables({ stage: "initial" });
    stateful
      .add(httpTask("gate", { uri: target.url(`/echo/state-gate-${suffix}`), method: "GET" }, true))
      .add(httpTask("after", { uri: target.url(`/count/state-${suffix}?stage=\${workflow.variables.stage}`), method: "GET" }))
      .outputParameters({ stage: "${after.output.response.body.query.stage}", by: "${gate.output.by}" });
    await stateful.register(true);
    const started = await stateful.startWorkflow({});
    await taskReaches(started, "gate", "IN_PROGRESS");
    const requestId = crypto.randomUUID();
    const run = await executor.updateState(started, { taskReferenceName: "gate", taskResult: { taskId: "", workflowInstanceId: started, status: "COMPLETED", outputData: { by: "state" } }, variables: { stage: "updated" } }, requestId);
    expect(run).toMatchObject({ workflowId: started, status: "COMPLETED", requestId, variables: { stage: "updated" }, output: { stage: "updated", by: "state" } });
    // A refused one changes nothing: the task is done, so neither its result nor the variables given with it are taken.
    const late = await sdkError(executor.updateState(started, { taskReferenceName: "gate", taskResult: { taskId: "", workflowInstanceId: "", status: "FAILED" }, variables: { stage: "late" } }, crypto.randomUUID()));
    expect(late).toBe(`Failed to update state for workflow '${started}': Cannot update the variables of workflow ${started}: its status is COMPLETED`);
    expect((await executor.getWorkflow(started, false)).variables).toEqual({ stage: "updated" });
  });

  it("a switchTask from the builders runs the branch its expression names, else the default, then the next task", async () => {
    const routed = new ConductorWorkflow(executor, `client_switch_${suffix}`);
    const call = (ref: string) => httpTask(ref, { uri: target.url(`/count/switch-${ref}-${suffix}`), method: "GET" });
    routed
      .add(switchTask("route", "${workflow.input.kind}", { fast: [call("fast")], slow: [call("slow_a"), call("slow_b")] }, [call("other")]))
      .add(call("after"))
      .outputParameters({ chosen: "${route.output.evaluationResult[0]}" });
    await routed.register(true);
    const refsOf = (execution: Workflow) => (execution.tasks ?? []).map((task) => task.referenceTaskName);
    const slow = await routed.execute({ kind: "slow" });
    expect(slow).toMatchObject({ status: "COMPLETED", output: { chosen: "slow" } });
    expect(refsOf(slow)).toEqual(["route", "slow_a", "slow_b", "after"]);
    const other = await routed.execute({ kind: "express" });
    expect(refsOf(other)).toEqual(["route", "other", "after"]);
    // The stored definition comes back as the builder wrote it, branches included.
    const stored = await metadata.getWorkflowDef(`client_switch_${suffix}`);
    expect(stored.tasks[0]).toMatchObject({ type: "SWITCH", evaluatorType: "value-param", expression: "switchCaseValue", inputParameters: { switchCaseValue: "${workflow.input.kind}" } });
    expect(Object.keys(stored.tasks[0]!.decisionCases ?? {})).toEqual(["fast", "slow"]);
    expect(await target.hits(`switch-fast-${suffix}`)).toBe(0);
    expect([await target.hits(`switch-slow_a-${suffix}`), await target.hits(`switch-other-${suffix}`), await target.hits(`switch-after-${suffix}`)]).toEqual([1, 1, 2]);
  });

  it("a ConductorWorkflow's fork() runs its branches side by side, its JOIN gives each branch's last task's output by reference name, and a later task reads it", async () => {
    const fanned = new ConductorWorkflow(executor, `client_fork_${suffix}`);
    // Both branches' first calls go to /meet, which answers only once both are there: met is true only if they overlapped.
    const meet = (ref: string) => httpTask(ref, { uri: target.url(`/meet/fork-${suffix}?parties=2`), method: "GET" });
    fanned
      .fork([
        [meet("left"), httpTask("left_b", { uri: target.url("/echo?met=${left.output.response.body.met}"), method: "GET" })],
        [meet("right")],
      ])
      .add(httpTask("after", { uri: target.url(`/echo/fork-after-${suffix}`), method: "POST", body: { left: "${__join_1.output.left_b.response.body.query.met}", right: "${__join_1.output.right.response.body.met}" } }))
      .outputParameters({ joined: "${__join_1.output}" });
    await fanned.register(true);
    const stored = await metadata.getWorkflowDef(`client_fork_${suffix}`);
    expect(stored.tasks.map((task) => [task.taskReferenceName, task.type])).toEqual([["__fork_1", "FORK_JOIN"], ["__join_1", "JOIN"], ["after", "HTTP"]]);
    expect(stored.tasks[0]!.forkTasks?.map((branch) => branch.map((task) => task.taskReferenceName))).toEqual([["left", "left_b"], ["right"]]);
    expect(stored.tasks[1]!.joinOn).toEqual(["left_b", "right"]);

    const done = await fanned.execute({});
    expect(done.status).toBe("COMPLETED");
    const statuses = Object.fromEntries((done.tasks ?? []).map((task) => [task.referenceTaskName, task.status]));
    expect(statuses).toEqual({ __fork_1: "COMPLETED", left: "COMPLETED", left_b: "COMPLETED", right: "COMPLETED", __join_1: "COMPLETED", after: "COMPLETED" });
    expect([taskOf(done, "left")!.outputData!["response"], taskOf(done, "right")!.outputData!["response"]]).toMatchObject([{ body: { met: true } }, { body: { met: true } }]);
    const join = taskOf(done, "__join_1")!;
    expect(join.taskType).toBe("JOIN");
    expect(Object.keys(join.outputData ?? {}).sort()).toEqual(["left_b", "right"]);
    expect(join.outputData).toMatchObject({ left_b: { response: { body: { query: { met: "true" } } } }, right: { response: { body: { met: true } } } });
    expect(done.output).toEqual({ joined: join.outputData });
    // As in Conductor, the JOIN is scheduled with the branches' first tasks; it ends after both branches, and the
    // task after it starts once it ended, with the joined outputs as its input.
    const order = (done.tasks ?? []).map((task) => task.referenceTaskName);
    expect(order[0]).toBe("__fork_1");
    expect(order.at(-1)).toBe("after");
    expect(join.endTime).toBeGreaterThanOrEqual(Math.max(taskOf(done, "left_b")!.endTime!, taskOf(done, "right")!.endTime!));
    expect(taskOf(done, "after")!.startTime).toBeGreaterThanOrEqual(join.endTime!);
    expect(taskOf(done, "after")!.inputData).toMatchObject({ http_request: { body: { left: "true", right: true } } });
    expect(await target.hits(`fork-${suffix}`)).toBe(2);
  });

  it("forkTaskJoin's JOIN (empty joinOn) passes at once while its branch still runs, forkTask and joinTask wait for the task named, and the workflow ends when every branch has", async () => {
    const flow = new ConductorWorkflow(executor, `client_fork_builders_${suffix}`);
    const call = (ref: string) => httpTask(ref, { uri: target.url(`/count/fork-builders-${ref}-${suffix}`), method: "GET" });
    flow
      // forkTaskJoin and forkTask both put the tasks they are given in ONE branch, in sequence.
      .add(forkTaskJoin("solo", [httpTask("hold", { uri: target.url(`/count/fork-builders-hold-${suffix}`), method: "POST", body: {} }, true), call("solo_next")]))
      .add([forkTask("pair", [call("pair_a"), call("pair_b")]), joinTask("pair_join", ["pair_b"])])
      .add(httpTask("after", { uri: target.url(`/count/fork-builders-after-${suffix}?n=\${pair_join.output.pair_b.response.body.n}`), method: "GET" }));
    await flow.register(true);
    const stored = await metadata.getWorkflowDef(`client_fork_builders_${suffix}`);
    expect(stored.tasks.map((task) => [task.taskReferenceName, task.type, task.joinOn ?? task.forkTasks?.map((branch) => branch.map((inner) => inner.taskReferenceName))])).toEqual([
      ["solo", "FORK_JOIN", [["hold", "solo_next"]]],
      ["solo_join_ref", "JOIN", []],
      ["pair", "FORK_JOIN", [["pair_a", "pair_b"]]],
      ["pair_join", "JOIN", ["pair_b"]],
      ["after", "HTTP", undefined],
    ]);

    const started = await flow.startWorkflow({});
    // The solo branch waits on hold, yet its JOIN waits for nothing: the rest of the workflow runs to its end.
    const running = await taskReaches(started, "after", "COMPLETED");
    expect(running.status).toBe("RUNNING");
    const statusOf = (execution: Workflow, ref: string) => taskOf(execution, ref)?.status;
    expect(["solo", "hold", "solo_next", "solo_join_ref", "pair_a", "pair_b", "pair_join"].map((ref) => statusOf(running, ref))).toEqual([
      "COMPLETED", "IN_PROGRESS", undefined, "COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED",
    ]);
    expect(taskOf(running, "solo_join_ref")!.outputData).toEqual({});
    expect(Object.keys(taskOf(running, "pair_join")!.outputData ?? {})).toEqual(["pair_b"]);
    expect(taskOf(running, "after")!.outputData).toMatchObject({ response: { body: { query: { n: "1" } } } });

    await executor.updateTaskByRefName("hold", started, "COMPLETED", { by: "hand" });
    const done = await workflowReaches(started, "COMPLETED");
    expect(["hold", "solo_next"].map((ref) => statusOf(done, ref))).toEqual(["COMPLETED", "COMPLETED"]);
    expect(await target.hits(`fork-builders-solo_next-${suffix}`)).toBe(1);
  });

  it("a jsonJqTask from the builders transforms with jq in wrangler dev", async () => {
    // wrangler bundles jqjs's source as text only by the rule naming the import as written (the test pool matched another).
    const flow = new ConductorWorkflow(executor, `client_jq_${suffix}`);
    const sum = jsonJqTask("sum", ".numbers | map(. * 2) | add");
    sum.inputParameters = { ...sum.inputParameters, numbers: "${workflow.input.numbers}" };
    flow.add(sum).outputParameters({ total: "${sum.output.result}" });
    await flow.register(true);
    const done = await flow.execute({ numbers: [1, 2, 3] });
    expect(done.status).toBe("COMPLETED");
    expect(done.output).toEqual({ total: 12 });
  });

  it("a dynamicForkTask from the builders forks the tasks it lists in wrangler dev, side by side, and its JOIN gives their outputs", async () => {
    const flow = new ConductorWorkflow(executor, `client_dynamic_fork_${suffix}`);
    // Both forked calls go to /meet, which answers only once both are there: met is true only if they overlapped.
    const meet = (ref: string) => httpTask(ref, { uri: target.url(`/meet/dynamic-fork-${suffix}?parties=2&of=\${workflow.input.of}`), method: "GET" });
    flow.add([dynamicForkTask("fan", [meet("left"), meet("right")], ""), joinTask("fan_join", [])]).outputParameters({ joined: "${fan_join.output}" });
    await flow.register(true);
    const stored = await metadata.getWorkflowDef(`client_dynamic_fork_${suffix}`);
    expect(stored.tasks.map((task) => [task.taskReferenceName, task.type])).toEqual([["fan", "FORK_JOIN_DYNAMIC"], ["fan_join", "JOIN"]]);

    const done = await flow.execute({ of: "pairs" });
    expect(done.status).toBe("COMPLETED");
    expect(taskOf(done, "fan")!.inputData!["forkedTasks"]).toEqual(["left", "right"]);
    expect(taskOf(done, "fan_join")!.inputData).toEqual({ joinOn: ["left", "right"] });
    const joined = done.output!["joined"] as Record<string, { response: { body: { met: boolean } } }>;
    expect(Object.keys(joined).sort()).toEqual(["left", "right"]);
    expect(Object.values(joined).map((output) => output.response.body.met)).toEqual([true, true]);
    // The listed tasks' own expressions were resolved as the fork's input was.
    expect(String((taskOf(done, "left")!.inputData!["http_request"] as { uri: string }).uri)).toMatch(/of=pairs$/);
    expect(await target.hits(`dynamic-fork-${suffix}`)).toBe(2);
  });

  it("a dynamicTask from the builders runs the task its input names in wrangler dev: an HTTP call, or a worker's task completed by reference name", async () => {
    const name = `client_dynamic_${suffix}`;
    const flow = new ConductorWorkflow(executor, name);
    const pick = dynamicTask("pick", "${workflow.input.run}");
    pick.inputParameters = { ...pick.inputParameters, http_request: { uri: target.url(`/count/dynamic-task-${suffix}`), method: "GET" } };
    flow.add(pick).outputParameters({ result: "${pick.output}" });
    await flow.register(true);
    const called = await flow.execute({ run: "HTTP" });
    expect(called.status).toBe("COMPLETED");
    expect(taskOf(called, "pick")).toMatchObject({ taskType: "HTTP", status: "COMPLETED" });
    expect(await target.hits(`dynamic-task-${suffix}`)).toBe(1);

    const worker = `client_dynamic_worker_${suffix}`;
    const started = await executor.startWorkflow({ name, version: 1, input: { run: worker } });
    expect(taskOf(await executor.getWorkflow(started, true), "pick")).toMatchObject({ taskType: worker, taskDefName: worker, status: "SCHEDULED" });
    await executor.updateTaskByRefName("pick", started, "COMPLETED", { by: "worker" });
    const done = await workflowReaches(started, "COMPLETED");
    expect(done.output).toEqual({ result: { by: "worker" } });
  });

  it("setVariableTask, waitTaskDuration and terminateTask from the builders run against wrangler dev, the wait woken by the object's alarm", async () => {
    const flow = new ConductorWorkflow(executor, `client_system_${suffix}`);
    flow
      .add(setVariableTask("remember", { stage: "${workflow.input.kind}" }))
      .add(waitTaskDuration("pause", "1s"))
      .add(switchTask("route", "${workflow.variables.stage}", { stop: [terminateTask("halt", "FAILED", "stopped by its input")] }))
      .add(httpTask("after", { uri: target.url(`/count/system-after-${suffix}?stage=\${workflow.variables.stage}`), method: "GET" }))
      .outputParameters({ stage: "${after.output.response.body.query.stage}" });
    await flow.register(true);
    const going = await flow.startWorkflow({ kind: "go" });
    const stopping = await flow.startWorkflow({ kind: "stop" });
    await taskReaches(going, "pause", "IN_PROGRESS");
    const went = await workflowReaches(going, "COMPLETED");
    expect(went).toMatchObject({ output: { stage: "go" }, variables: { stage: "go" } });
    const refs = (execution: Workflow) => (execution.tasks ?? []).map((task) => `${task.referenceTaskName}:${task.status}`);
    expect(refs(went)).toEqual(["remember:COMPLETED", "pause:COMPLETED", "route:COMPLETED", "after:COMPLETED"]);
    const stopped = await workflowReaches(stopping, "FAILED");
    expect(stopped.reasonForIncompletion).toBe("stopped by its input");
    expect(refs(stopped)).toEqual(["remember:COMPLETED", "pause:COMPLETED", "route:COMPLETED", "halt:COMPLETED"]);
    expect(await target.hits(`system-after-${suffix}`)).toBe(1);
  });

  it("an inlineTask from the builders computes with JavaScript in wrangler dev, a javascript switchTask routes on it, and a bad script is refused at registration", async () => {
    const flow = new ConductorWorkflow(executor, `client_inline_${suffix}`);
    const call = (ref: string) => httpTask(ref, { uri: target.url(`/count/inline-${ref}-${suffix}?total=\${price.output.result.total}`), method: "GET" });
    const price = inlineTask("price", "(function () { var total = $.items.reduce(function (sum, item) { return sum + item.qty * item.unit; }, 0); return { total: total, big: total > 100 }; })()");
    price.inputParameters = { ...price.inputParameters, items: "${workflow.input.items}" };
    // The builder writes a value-param SWITCH; a javascript one sets its evaluatorType, expression and input itself.
    const route = switchTask("size", "", { big: [call("big")], small: [call("small")] });
    Object.assign(route, { evaluatorType: "javascript", expression: "$.big ? 'big' : 'small'", inputParameters: { big: "${price.output.result.big}" } });
    flow.add(price).add(route).outputParameters({ total: "${price.output.result.total}" });
    await flow.register(true);
    const big = await flow.execute({ items: [{ qty: 3, unit: 40 }, { qty: 1, unit: 5 }] });
    expect(big, JSON.stringify(big.tasks)).toMatchObject({ status: "COMPLETED", output: { total: 125 } });
    expect((big.tasks ?? []).map((task) => `${task.referenceTaskName}:${task.taskType}:${task.status}`)).toEqual(["price:INLINE:COMPLETED", "size:SWITCH:COMPLETED", "big:HTTP:COMPLETED"]);
    const small = await flow.execute({ items: [{ qty: 1, unit: 5 }] });
    expect((small.tasks ?? []).map((task) => task.referenceTaskName)).toEqual(["price", "size", "small"]);
    expect([await target.hits(`inline-big-${suffix}`), await target.hits(`inline-small-${suffix}`)]).toEqual([1, 1]);
    // A script that does not parse never reaches storage: the client surfaces the service's message.
    const broken = new ConductorWorkflow(executor, `client_inline_broken_${suffix}`).add(inlineTask("oops", "function ( {"));
    await expect(broken.register(true)).rejects.toThrow(/does not parse as JavaScript/);
    expect(await sdkError(metadata.getWorkflowDef(`client_inline_broken_${suffix}`))).toMatch(/No such workflow found by name: client_inline_broken_/);
  });

  it("a doWhileTask and a newLoopTask from the builders loop in wrangler dev: each run named ref__<iteration>, the latest read by the plain name", async () => {
    const flow = new ConductorWorkflow(executor, `client_loop_${suffix}`);
    const poll = httpTask("poll", { uri: target.url(`/count/loop-poll-${suffix}`), method: "GET" });
    const ping = httpTask("ping", { uri: target.url(`/count/loop-ping-${suffix}-\${twice.output.iteration}`), method: "GET" });
    flow
      .add(doWhileTask("until_ready", "$.poll.response.body.n < 3", [poll]))
      .add(newLoopTask("twice", 2, [ping]))
      .outputParameters({ polls: "${until_ready.output.iteration}", last: "${poll.output.response.body.n}", first: "${poll__1.output.response.body.n}" });
    await flow.register(true);
    const run = await flow.execute({});
    expect(run, JSON.stringify(run.tasks)).toMatchObject({ status: "COMPLETED", output: { polls: 3, last: 3, first: 1 } });
    expect((run.tasks ?? []).map((task) => `${task.referenceTaskName}:${task.taskType}:${task.status}`)).toEqual([
      "until_ready:DO_WHILE:COMPLETED",
      "poll__1:HTTP:COMPLETED",
      "poll__2:HTTP:COMPLETED",
      "poll__3:HTTP:COMPLETED",
      "twice:DO_WHILE:COMPLETED",
      "ping__1:HTTP:COMPLETED",
      "ping__2:HTTP:COMPLETED",
    ]);
    expect(run.tasks?.[2]).toMatchObject({ iteration: 2, loopOverTask: true });
    expect([await target.hits(`loop-poll-${suffix}`), await target.hits(`loop-ping-${suffix}-1`), await target.hits(`loop-ping-${suffix}-2`)]).toEqual([3, 1, 1]);
  });

  it("a newLoopTask holding a fork and its joinTask from the builders runs the fork's branches side by side in each iteration in wrangler dev", async () => {
    const flow = new ConductorWorkflow(executor, `client_loop_fork_${suffix}`);
    // Each pair of calls is held by the target until both arrive: run one after the other, they would not meet.
    const meet = (ref: string) => httpTask(ref, { uri: target.url(`/meet/loop-fork-${suffix}-\${rounds.output.iteration}?parties=2`), method: "GET" });
    // The builder's forkTask puts its tasks in one branch: two branches are written as its forkTasks.
    const fan = { ...forkTask("fan", []), forkTasks: [[meet("left")], [meet("right")]] };
    flow.add(newLoopTask("rounds", 2, [fan, joinTask("fan_join", ["left", "right"])])).outputParameters({ met: "${right.output.response.body.met}" });
    await flow.register(true);
    const run = await flow.execute({});
    expect(run, JSON.stringify(run.tasks)).toMatchObject({ status: "COMPLETED", output: { met: true } });
    expect((run.tasks ?? []).map((task) => `${task.referenceTaskName}:${task.status}`).sort()).toEqual(
      ["rounds", "fan__1", "fan_join__1", "left__1", "right__1", "fan__2", "fan_join__2", "left__2", "right__2"].map((ref) => `${ref}:COMPLETED`).sort(),
    );
    expect([await target.hits(`loop-fork-${suffix}-1`), await target.hits(`loop-fork-${suffix}-2`)]).toEqual([2, 2]);
  });

  it("executes synchronously and honours idempotency keys", async () => {
    const run = await executor.executeWorkflow({ name: CHILD, version: 1, input: { key: `exec-${suffix}` } }, CHILD, 1, `request-${suffix}`);
    expect(run).toMatchObject({ status: "COMPLETED", output: { n: 1 }, requestId: `request-${suffix}` });
    expect(run.workflowId).toMatch(UUID);

    const once = { name: PARENT, input: { x: "1", key: `once-${suffix}` }, idempotencyKey: `once-${suffix}` };
    const first = await executor.startWorkflow({ ...once, idempotencyStrategy: "FAIL_ON_RUNNING" });
    expect(await executor.startWorkflow({ ...once, idempotencyStrategy: "RETURN_EXISTING" })).toBe(first);
    expect(await sdkError(executor.startWorkflow({ ...once, idempotencyStrategy: "FAIL_ON_RUNNING" }))).toMatch(/^Failed to start workflow: .*is RUNNING/);
    await executor.terminate(first, "finished with it");
    const second = await executor.startWorkflow({ ...once, idempotencyStrategy: "FAIL_ON_RUNNING" });
    expect(second).toMatch(UUID);
    expect(second).not.toBe(first);
    await executor.terminate(second, "finished with it");

    const byName = await executor.startWorkflowByName(PARENT, { x: "3", key: `by-name-${suffix}` }, 1, `by-name-${suffix}`);
    const approve = taskOf(await taskReaches(byName, "approve", "IN_PROGRESS"), "approve")!;
    expect(await executor.updateTask(approve.taskId!, byName, "FAILED", { why: "declined" })).toBe(approve.taskId);
    const failed = await workflowReaches(byName, "FAILED");
    expect(failed).toMatchObject({ correlationId: `by-name-${suffix}`, failedReferenceTaskNames: ["approve"] });
    await executor.deleteWorkflow(byName);
    expect(await sdkError(executor.getWorkflow(byName, false))).toMatch(/not found/);
  });

  it("executeWorkflow's waitUntilTaskRef answers once that task has completed, while a worker's task still waits; returnStrategy shapes the answer", async () => {
    const name = `client_exec_until_${suffix}`;
    const flow = new ConductorWorkflow(executor, name);
    // Nobody polls this task: without waitUntilTaskRef the call would wait out waitForSeconds for it.
    flow.add(inlineTask("prep", "(function () { return 6 * 7; })()")).add(simpleTask("work", `client_exec_until_worker_${suffix}`, {}));
    await flow.register(true);
    const started = Date.now();
    const run = await flow.execute({}, "prep");
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(run.status).toBe("RUNNING");
    expect((run.tasks ?? []).map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["prep:COMPLETED", "work:SCHEDULED"]);
    expect(taskOf(run as Workflow, "prep")!.outputData).toEqual({ result: 42 });

    const blocking = await executor.executeWorkflow({ name, version: 1, input: {} }, name, 1, `until-${suffix}`, "nowhere,prep", 15, Consistency.REGION_DURABLE, ReturnStrategy.BLOCKING_TASK);
    expect(blocking.isBlockingTask()).toBe(true);
    expect(blocking.targetWorkflowStatus).toBe("RUNNING");
    expect(blocking.requestId).toBe(`until-${suffix}`);
    // As Conductor's WorkflowSignalResponder answers it: the named task, once it has ended, is the blocking one.
    expect(blocking.getBlockingTask()).toMatchObject({ referenceTaskName: "prep", status: "COMPLETED", workflowType: name });
    for (const workflowId of [run.workflowId!, blocking.getTargetWorkflowId()]) await executor.terminate(workflowId, "done with it");
  });

  it("testWorkflow runs a definition with mocked task results; startWorkflow runs an inline workflowDef", async () => {
    const name = `client_test_${suffix}`;
    const flow = new ConductorWorkflow(executor, name);
    flow.add(simpleTask("lookup", `client_test_worker_${suffix}`, {})).add(httpTask("charge", { uri: target.url(`/count/client-test-${suffix}`), method: "GET" }));
    flow.outputParameters({ customer: "${lookup.output.customer}", charged: "${charge.output.ok}" });
    await flow.register(true);
    const run = await executor.testWorkflow({
      name,
      version: 1,
      input: {},
      taskRefToMockOutput: {
        lookup: [{ status: "COMPLETED", output: { customer: "ada" } }],
        charge: [{ status: "COMPLETED", output: { ok: "mocked" } }],
      },
    });
    expect(run).toMatchObject({ status: "COMPLETED", output: { customer: "ada", charged: "mocked" } });
    expect((run.tasks ?? []).map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["lookup:COMPLETED", "charge:COMPLETED"]);
    expect(await target.hits(`client-test-${suffix}`)).toBe(0);

    const inlineName = `client_inline_start_${suffix}`;
    const inline = workflow(inlineName, [httpTask("call", { uri: target.url(`/count/client-inline-start-${suffix}`), method: "GET" })]);
    const workflowId = await executor.startWorkflow({ name: inlineName, workflowDef: inline, input: {} });
    expect((await workflowReaches(workflowId, "COMPLETED")).workflowName).toBe(inlineName);
    expect(await target.hits(`client-inline-start-${suffix}`)).toBe(1);
  });

  it("a ConductorWorkflow's toSubWorkflowTask() runs its definition inline as the child, in a parent registered with it", async () => {
    const childName = `client_inline_child_${suffix}`;
    const child = new ConductorWorkflow(executor, childName).add(httpTask("call", { uri: target.url(`/count/client-inline-child-${suffix}`), method: "GET" }));
    child.outputParameters({ n: "${call.output.response.body.n}" });
    const parent = new ConductorWorkflow(executor, `client_inline_parent_${suffix}`).add(child.toSubWorkflowTask("child"));
    parent.outputParameters({ fromChild: "${child.output.n}" });
    await parent.register(true);
    const run = await parent.execute({});
    expect(run).toMatchObject({ status: "COMPLETED", output: { fromChild: 1 } });
    expect(await sdkError(metadata.getWorkflowDef(childName))).toMatch(/No such workflow found by name: /);
  });

  it("surfaces the service's error messages for bad input", async () => {
    expect(await sdkError(executor.getWorkflow("00000000-0000-4000-8000-000000000000", true))).toMatch(/^Failed to get workflow: .*not found/i);
    expect(await sdkError(executor.startWorkflow({ name: `missing_${suffix}` }))).toMatch(/^Failed to start workflow: .*missing_/);
    const invalid = workflow(`invalid_${suffix}`, [httpTask("bad", { uri: "", method: "GET" })]);
    expect(await sdkError(metadata.registerWorkflowDef(invalid))).toMatch(/^Failed to register workflow definition: .*uri/);
    expect(await sdkError(metadata.registerWorkflowDef(parentDefinition(), false))).toMatch(/^Failed to register workflow definition: .*exists/);
    expect(await sdkError(executor.updateTaskByRefName("call", workflowId, "COMPLETED", {}))).toMatch(/^Failed to update task by reference name: /);
    // Terminated again: done already, as Conductor answers; an unknown one is refused.
    await executor.terminate(workflowId, "twice");
    expect(await sdkError(executor.terminate("00000000-0000-4000-8000-000000000000", "unknown"))).toMatch(/^Failed to terminate workflow '.*': .*not found/i);
    expect(await sdkError(executor.reRun(workflowId, { reRunFromTaskId: "no-such-task" }))).toMatch(/^Failed to rerun workflow '.*': .*no-such-task/);
  });

  it("registers, reads, updates and removes task definitions, and a workflow's task follows its definition", async () => {
    const name = `client_taskdef_${suffix}`;
    await metadata.registerTask(taskDefinition({ name, description: "from the builder", retryCount: 1, retryDelaySeconds: 0 }));
    expect(await metadata.getTask(name)).toMatchObject({ name, description: "from the builder", retryCount: 1, timeoutSeconds: 3600, responseTimeoutSeconds: 600 });
    await metadata.updateTask({ ...(await metadata.getTask(name)), description: "updated" });
    expect(await metadata.getTask(name)).toMatchObject({ description: "updated", retryCount: 1 });

    const flow = workflow(`client_taskdef_flow_${suffix}`, [{ ...httpTask("wait", { uri: target.url(`/count/taskdef-${suffix}`), method: "GET" }, true), name }]);
    await metadata.registerWorkflowDef(flow, true);
    const started = await executor.startWorkflow({ name: flow.name, version: 1 });
    await taskReaches(started, "wait", "IN_PROGRESS");
    await executor.updateTaskByRefName("wait", started, "FAILED", { why: "first attempt" });
    // The task definition's retryCount: a second instance of the task, not a failed workflow.
    const retried = await until("the retry", () => executor.getExecution(started), (execution) => (execution.tasks ?? []).length === 2);
    expect(retried.status).toBe("RUNNING");
    expect(retried.tasks!.map((task) => [task.status, task.retryCount])).toEqual([
      ["FAILED", 0],
      [expect.stringMatching(/SCHEDULED|IN_PROGRESS/), 1],
    ]);
    await executor.terminate(started, "done with it");

    await metadata.unregisterTask(name);
    expect(await sdkError(metadata.getTask(name))).toMatch(/No such taskType found by name/);
  });

  it("registerTasks, getAllTaskDefs, registerWorkflow, startWorkflows, getWorkflowStatus, goBackToTask and unregisterWorkflow", async () => {
    const [first, second] = [`client_bulk_a_${suffix}`, `client_bulk_b_${suffix}`];
    await metadata.registerTasks([taskDefinition({ name: first, retryCount: 0 }), taskDefinition({ name: second, retryCount: 0 })]);
    expect((await metadata.getAllTaskDefs()).map((definition) => definition.name)).toEqual(expect.arrayContaining([first, second]));
    const name = `client_bulk_flow_${suffix}`;
    const definition = { ...workflow(name, [simpleTask("a", first, {}), simpleTask("b", second, {})]), outputParameters: { got: "${b.output.got}" } };
    await executor.registerWorkflow(true, definition);
    expect(await sdkError(executor.registerWorkflow(false, definition))).toMatch(/already exists/);

    const ids = await Promise.all(executor.startWorkflows([{ name, version: 1, input: { n: 1 } }, { name, version: 1, input: { n: 2 } }]));
    expect(new Set(ids).size).toBe(2);
    const [workflowId, other] = ids as [string, string];
    await taskReaches(workflowId, "a", "SCHEDULED");
    await executor.updateTaskByRefName("a", workflowId, "COMPLETED", {});
    await taskReaches(workflowId, "b", "SCHEDULED");
    await executor.updateTaskByRefName("b", workflowId, "COMPLETED", { got: "first pass" });
    await workflowReaches(workflowId, "COMPLETED");
    expect(await executor.getWorkflowStatus(workflowId, true, true)).toEqual({ workflowId, status: "COMPLETED", output: { got: "first pass" }, variables: {} });
    expect(await executor.getWorkflowStatus(workflowId, false, false)).toEqual({ workflowId, status: "COMPLETED" });

    // The client finds the task in the execution and reruns from it: "a" stays done, "b" runs again.
    await executor.goBackToTask(workflowId, (task) => task.referenceTaskName === "b");
    const rerun = await taskReaches(workflowId, "b", "SCHEDULED");
    expect(rerun.status).toBe("RUNNING");
    expect(taskOf(rerun, "a")!.status).toBe("COMPLETED");
    for (const id of [workflowId, other]) await executor.terminate(id, "done with it");

    await metadata.unregisterWorkflow(name, 1);
    expect(await sdkError(metadata.getWorkflowDef(name))).toMatch(/No such workflow found by name/);
  });

  it("methods for what this service does not serve reject with the feature named (docs/api.md lists them)", async () => {
    const secrets = clients.getSecretClient();
    await secrets.putSecret(`client_unserved_${suffix}`, "value");
    expect(await sdkError(secrets.getSecret(`client_unserved_${suffix}`))).toMatch(/Secret values are write-only here/);
    const events = clients.getEventClient();
    expect(await sdkError(events.getAllQueueConfigs())).toMatch(/event queue configuration/);
    expect(await sdkError(events.handleIncomingEvent({ a: "b" }))).toMatch(/incoming events/);
    expect(await sdkError(clients.getServiceRegistryClient().getRegisteredServices())).toMatch(/service registry/);
    expect(await sdkError(clients.getPromptClient().getPrompts())).toMatch(/AI prompts/);
    expect(await sdkError(clients.getIntegrationClient().getIntegrationProviders())).toMatch(/integrations/);
    await secrets.deleteSecret(`client_unserved_${suffix}`);
  });

  it("MetadataClient's tag methods add, set, read and delete tags of workflow and task definitions", async () => {
    const flow = workflow(`client_tags_${suffix}`, [waitTaskDuration("nap", "1h")]);
    await metadata.registerWorkflowDef(flow, true);
    await metadata.addWorkflowTag({ key: "team", value: "billing" }, flow.name);
    await metadata.addWorkflowTag({ key: "tier", value: "gold" }, flow.name);
    expect(await metadata.getWorkflowTags(flow.name)).toEqual([
      { key: "team", value: "billing" },
      { key: "tier", value: "gold" },
    ]);
    await metadata.deleteWorkflowTag({ key: "tier", value: "gold" }, flow.name);
    await metadata.setWorkflowTags([{ key: "owner", value: "ann" }], flow.name);
    expect(await metadata.getWorkflowTags(flow.name)).toEqual([{ key: "owner", value: "ann" }]);
    const taskName = `client_tags_task_${suffix}`;
    await metadata.registerTask(taskDefinition({ name: taskName }));
    await metadata.setTaskTags([{ key: "lang", value: "ts" }], taskName);
    await metadata.addTaskTag({ key: "os", value: "linux" }, taskName);
    // One value per key: adding a key it has replaces the value.
    await metadata.addTaskTag({ key: "lang", value: "go" }, taskName);
    expect(await metadata.getTaskTags(taskName)).toEqual([{ key: "lang", value: "go" }, { key: "os", value: "linux" }]);
    await metadata.deleteTaskTag({ key: "os", value: "linux" }, taskName);
    expect(await metadata.getTaskTags(taskName)).toEqual([{ key: "lang", value: "go" }]);
    expect(await sdkError(metadata.getWorkflowTags(`client_tags_none_${suffix}`))).toMatch(/No such workflow found by name: client_tags_none_\S+, version: null/);
  });

  it("SecretClient puts a secret, lists its name, and sets, reads and deletes its tags; deleting the secret drops them", async () => {
    const secrets = clients.getSecretClient();
    const name = `client_secret_${suffix}`;
    await secrets.putSecret(name, "s3cr3t value");
    expect(await secrets.listAllSecretNames()).toContain(name);
    expect(await secrets.listSecretsThatUserCanGrantAccessTo()).toContain(name);
    expect(await secrets.secretExists(name)).toBe(true);
    await secrets.setSecretTags([{ key: "team", value: "billing" }, { key: "env", value: "dev" }], name);
    expect(await secrets.getSecretTags(name)).toEqual([{ key: "env", value: "dev" }, { key: "team", value: "billing" }]);
    await secrets.deleteSecretTags([{ key: "env", value: "dev" }], name);
    expect(await secrets.getSecretTags(name)).toEqual([{ key: "team", value: "billing" }]);
    await secrets.deleteSecret(name);
    expect(await secrets.listAllSecretNames()).not.toContain(name);
    expect(await sdkError(secrets.getSecretTags(name))).toMatch(/No secret named/);
  });

  it("a workflow's rate limit (rateLimitConfig, setWorkflowRateLimit) runs one execution per key at a time; the next runs once the first ends", async () => {
    const name = `client_limited_${suffix}`;
    const flow: WorkflowDef = { ...workflow(name, [simpleTask("gate", `client_limited_gate_${suffix}`, {})]), rateLimitConfig: { rateLimitKey: "${workflow.correlationId}", concurrentExecLimit: 1 } };
    await metadata.registerWorkflowDef(flow, true);
    expect(await metadata.getWorkflowRateLimit(name)).toEqual({ rateLimitKey: "${workflow.correlationId}", concurrentExecLimit: 1 });
    const first = await executor.startWorkflow({ name, version: 1, input: {}, correlationId: `limited-${suffix}` });
    const second = await executor.startWorkflow({ name, version: 1, input: {}, correlationId: `limited-${suffix}` });
    await taskReaches(first, "gate", "SCHEDULED");
    expect(await executor.getWorkflow(second, true)).toMatchObject({ status: "RUNNING", rateLimited: true, rateLimitKey: `limited-${suffix}`, tasks: [] });
    await executor.updateTaskByRefName("gate", first, "COMPLETED", {});
    await workflowReaches(first, "COMPLETED");
    await taskReaches(second, "gate", "SCHEDULED");
    expect((await executor.getWorkflow(second, false)).rateLimited).toBe(false);
    await executor.updateTaskByRefName("gate", second, "COMPLETED", {});
    await workflowReaches(second, "COMPLETED");

    // Raised through the client's endpoint, the limit admits the one waiting at once, with nothing started or ended.
    const third = await executor.startWorkflow({ name, version: 1, input: {}, correlationId: `limited-${suffix}` });
    const fourth = await executor.startWorkflow({ name, version: 1, input: {}, correlationId: `limited-${suffix}` });
    await taskReaches(third, "gate", "SCHEDULED");
    expect((await executor.getWorkflow(fourth, false)).rateLimited).toBe(true);
    await metadata.setWorkflowRateLimit({ rateLimitKey: "${workflow.correlationId}", concurrentExecLimit: 2 }, name);
    await taskReaches(fourth, "gate", "SCHEDULED");
    for (const id of [third, fourth]) {
      await executor.updateTaskByRefName("gate", id, "COMPLETED", {});
      await workflowReaches(id, "COMPLETED");
    }

    // The client's own endpoint replaces it (every version), and removes it.
    await metadata.setWorkflowRateLimit({ concurrentExecLimit: 5 }, name);
    expect(await metadata.getWorkflowRateLimit(name)).toEqual({ concurrentExecLimit: 5 });
    await metadata.removeWorkflowRateLimit(name);
    expect(await metadata.getWorkflowRateLimit(name)).toBeUndefined();
    expect((await metadata.getWorkflowDef(name)).rateLimitConfig).toBeUndefined();
  });

  it("an application made with the ApplicationClient gets an access key the client signs in with, acting with the roles it was given", async () => {
    const applications = clients.getApplicationClient();
    const application = await applications.createApplication(`client_app_${suffix}`);
    expect(application.id).toMatch(UUID);
    const applicationId = application.id!;
    await applications.addApplicationRole(applicationId, "METADATA_MANAGER");
    const key = await applications.createAccessKey(applicationId);
    expect(await applications.getAccessKeys(applicationId)).toEqual([expect.objectContaining({ id: key.id, status: "ACTIVE" })]);
    expect((await applications.getAppByAccessKeyId(key.id!)).id).toBe(applicationId);

    // Signed in with the application's key, the client manages definitions, and may start nothing.
    const asApplication = await orkesConductorClient({ serverUrl: server.url, keyId: key.id!, keySecret: key.secret!, logger: noopLogger });
    const applicationMetadata = new MetadataClient(asApplication);
    const name = `client_app_def_${suffix}`;
    await applicationMetadata.registerWorkflowDef(workflow(name, [simpleTask("gate", `client_app_gate_${suffix}`, {})]), true);
    expect((await metadata.getWorkflowDef(name)).updatedBy).toBe(`app:${applicationId}`);
    expect(await sdkError(new OrkesClients(asApplication).getWorkflowClient().startWorkflow({ name, version: 1, input: {} }))).toMatch(/403|Permission denied/);

    // An inactive key ends its sessions: the signed-in client is refused from then on (its new-token request is refused
    // too, with INVALID_CREDENTIALS, and the call fails rather than waiting on that request forever).
    expect(await applications.toggleAccessKeyStatus(applicationId, key.id!)).toMatchObject({ id: key.id, status: "INACTIVE" });
    expect(await sdkError(applicationMetadata.getWorkflowDef(name))).toMatch(/Token was revoked/);
    expect(await applications.toggleAccessKeyStatus(applicationId, key.id!)).toMatchObject({ status: "ACTIVE" });

    await applications.addApplicationTags(applicationId, [{ key: "team", value: "ci" }]);
    await applications.addApplicationTag(applicationId, { key: "tier", value: "gold" });
    await applications.deleteApplicationTag(applicationId, { key: "tier", value: "gold" });
    expect(await applications.getApplicationTags(applicationId)).toEqual([{ key: "team", value: "ci" }]);
    await applications.deleteAccessKey(applicationId, key.id!);
    expect(await applications.getAccessKeys(applicationId)).toEqual([]);
    expect((await applications.updateApplication(applicationId, `client_app_renamed_${suffix}`)).name).toBe(`client_app_renamed_${suffix}`);
    expect((await applications.getAllApplications()).map((listed) => listed.id)).toContain(applicationId);
    await applications.removeRoleFromApplicationUser(applicationId, "METADATA_MANAGER");
    await applications.deleteApplication(applicationId);
    expect(await sdkError(applications.getApplication(applicationId))).toMatch(/No application/);
  });

  it("the AuthorizationClient's users and groups: upsertUser, getUser, listUsers, upsertGroup, addUserToGroup, getUsersInGroup, removeUserFromGroup, addUsersToGroup, removeUsersFromGroup, deleteGroup, deleteUser", async () => {
    const authorization = clients.getAuthorizationClient();
    const userId = `client_user_${suffix}@example.com`;
    const user = await authorization.upsertUser(userId, { name: "Client User", roles: ["USER_READ_ONLY"] as never, groups: [] });
    expect(user).toMatchObject({ id: userId, name: "Client User", roles: [{ name: "USER_READ_ONLY" }] });
    expect((await authorization.getUser(userId)).name).toBe("Client User");
    expect((await authorization.listUsers()).map((listed) => listed.id)).toContain(userId);

    const groupId = `client_group_${suffix}`;
    expect(await authorization.upsertGroup(groupId, { description: "operators", roles: "WORKFLOW_MANAGER" as never })).toMatchObject({ id: groupId, roles: [{ name: "WORKFLOW_MANAGER" }] });
    await authorization.addUserToGroup(groupId, userId);
    expect((await authorization.getUsersInGroup(groupId)).map((member) => member.id)).toEqual([userId]);
    expect((await authorization.getUser(userId)).groups).toMatchObject([{ id: groupId }]);
    expect((await authorization.listGroups()).map((group) => group.id)).toContain(groupId);
    await authorization.removeUserFromGroup(groupId, userId);
    expect(await authorization.getUsersInGroup(groupId)).toEqual([]);
    await authorization.addUsersToGroup(groupId, [userId]);
    expect((await authorization.getUsersInGroup(groupId)).map((member) => member.id)).toEqual([userId]);
    await authorization.removeUsersFromGroup(groupId, [userId]);
    expect(await authorization.getUsersInGroup(groupId)).toEqual([]);
    await authorization.deleteGroup(groupId);
    expect(await sdkError(authorization.getGroup(groupId))).toMatch(/No group/);
    await authorization.deleteUser(userId);
    expect(await sdkError(authorization.getUser(userId))).toMatch(/No user/);
  });

  it("the AuthorizationClient's per-resource grants: an application given EXECUTE on one workflow starts it, and no longer once removed", async () => {
    const authorization = clients.getAuthorizationClient();
    const applications = clients.getApplicationClient();
    const applicationId = (await applications.createApplication(`client_grants_${suffix}`)).id!;
    const key = await applications.createAccessKey(applicationId);
    const name = `client_granted_${suffix}`;
    await metadata.registerWorkflowDef(workflow(name, [simpleTask("gate", `client_granted_gate_${suffix}`, {})]), true);
    const asApplication = new OrkesClients(await orkesConductorClient({ serverUrl: server.url, keyId: key.id!, keySecret: key.secret!, logger: noopLogger })).getWorkflowClient();
    expect(await sdkError(asApplication.startWorkflow({ name, version: 1, input: {} }))).toMatch(/403|Permission denied/);

    const request = { subject: { type: "USER" as const, id: `app:${applicationId}` }, target: { type: "WORKFLOW_DEF" as const, id: name as never }, access: ["READ" as const, "EXECUTE" as const] };
    await authorization.grantPermissions(request);
    // Every access kind is listed, as the clients index the map by kind.
    expect(await authorization.getPermissions("WORKFLOW_DEF", name)).toEqual({ CREATE: [], READ: [request.subject], UPDATE: [], EXECUTE: [request.subject], DELETE: [] });
    expect(await authorization.checkPermissions(`app:${applicationId}`, "WORKFLOW_DEF", name)).toEqual({ CREATE: false, READ: true, UPDATE: false, EXECUTE: true, DELETE: false });
    expect(await authorization.getGrantedPermissionsForUser(`app:${applicationId}`)).toEqual({ grantedAccess: [{ target: { type: "WORKFLOW_DEF", id: name }, access: ["READ", "EXECUTE"] }] });
    // Grants read from D1 are reused for a second by each isolate.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const started = await asApplication.startWorkflow({ name, version: 1, input: {} });
    expect(started).toMatch(UUID);

    const groupId = `client_grants_group_${suffix}`;
    await authorization.upsertGroup(groupId, { description: "release managers", roles: [] as never });
    await authorization.grantPermissions({ subject: { type: "GROUP", id: groupId }, target: { type: "WORKFLOW_DEF", id: name as never }, access: ["UPDATE"] });
    expect(await authorization.getGrantedPermissionsForGroup(groupId)).toEqual({ grantedAccess: [{ target: { type: "WORKFLOW_DEF", id: name }, access: ["CREATE", "UPDATE", "DELETE"] }] });

    await authorization.removePermissions({ ...request, access: ["EXECUTE"] });
    expect(await authorization.checkPermissions(`app:${applicationId}`, "WORKFLOW_DEF", name)).toMatchObject({ READ: true, EXECUTE: false });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await sdkError(asApplication.startWorkflow({ name, version: 1, input: {} }))).toMatch(/403|Permission denied/);
    await executor.terminate(started, "done");
    await authorization.deleteGroup(groupId);
    await applications.deleteApplication(applicationId);
  });

  it("an httpPollTask from the builders polls in wrangler dev until its terminationCondition holds, woken by the object's alarm", async () => {
    const flow = new ConductorWorkflow(executor, `client_poll_${suffix}`);
    flow.add(httpPollTask("poll", { http_request: { uri: target.url(`/count/poll-${suffix}`), method: "GET" }, pollingInterval: 1, pollingStrategy: "FIXED", terminationCondition: "$.output.response.body.n >= 2" }));
    await flow.register(true);
    const workflowId = await executor.startWorkflow({ name: flow.getName(), version: 1, input: {} });
    const done = await workflowReaches(workflowId, "COMPLETED");
    expect(taskOf(done, "poll")).toMatchObject({ status: "COMPLETED", outputData: { response: { body: { n: 2 } } } });
    expect(await target.hits(`poll-${suffix}`)).toBe(2);
  });

  it("an httpTask with Orkes' cacheConfig answers a second run from the cache, without its request", async () => {
    const flow = new ConductorWorkflow(executor, `client_cached_${suffix}`);
    flow.add({ ...httpTask("fetch", { uri: target.url(`/count/cached-${suffix}`), method: "GET" }), cacheConfig: { key: "${uri}", ttlInSecond: 600 } });
    await flow.register(true);
    const first = await executor.startWorkflow({ name: flow.getName(), version: 1, input: {} });
    const firstRun = await workflowReaches(first, "COMPLETED");
    // The output is cached in the background as the first run completes: a run that starts after that finds it.
    await sleep(500);
    const second = await executor.startWorkflow({ name: flow.getName(), version: 1, input: {} });
    const secondRun = await workflowReaches(second, "COMPLETED");
    expect(taskOf(secondRun, "fetch")?.outputData).toEqual({ ...taskOf(firstRun, "fetch")?.outputData, _cachedResponse: true });
    expect(await target.hits(`cached-${suffix}`)).toBe(1);
  });

  it("signal and signalAsync complete the WAIT the workflow waits in, answering with the workflow (TARGET_WORKFLOW) or nothing", async () => {
    const flow = new ConductorWorkflow(executor, `client_signal_${suffix}`);
    // The second waits with no time set, for a signal: the synchronous signal answers as the workflow waits there (a
    // WAIT whose time is set is waited through, as Conductor's WorkflowSignalResponder does, for waitForSeconds).
    const untimedWait = { name: "second", taskReferenceName: "second", type: "WAIT", inputParameters: {} } as unknown as Parameters<ConductorWorkflow["add"]>[0];
    flow.add(waitTaskDuration("first", "1h")).add(untimedWait);
    await flow.register(true);
    const workflowId = await flow.startWorkflow({});
    await taskReaches(workflowId, "first", "IN_PROGRESS");
    const answer = await executor.signal(workflowId, TaskResultStatusEnum.COMPLETED, { approved: true });
    expect(answer.isTargetWorkflow()).toBe(true);
    expect(answer.getWorkflow()).toMatchObject({ workflowId, status: "RUNNING" });
    expect(answer.targetWorkflowStatus).toBe("RUNNING");
    // The client sends the output wrapped as {taskOutput}; the body becomes the WAIT's output as sent.
    expect(taskOf(await executor.getWorkflow(workflowId, true), "first")!.outputData).toEqual({ taskOutput: { approved: true } });
    await executor.signalAsync(workflowId, TaskResultStatusEnum.COMPLETED, { approved: false });
    const done = await workflowReaches(workflowId, "COMPLETED");
    expect(taskOf(done, "second")!.outputData).toEqual({ taskOutput: { approved: false } });
  });

  it("signal resumes an Orkes YIELD (a type this client has no builder for), and the synchronous execute stops at one", async () => {
    const name = `client_yield_${suffix}`;
    // The client's WorkflowTask type does not list YIELD; the definition is sent as JSON all the same.
    const yieldTask = { name: "paused", taskReferenceName: "paused", type: "YIELD", inputParameters: { stage: "${workflow.input.stage}" } } as unknown as Parameters<ConductorWorkflow["add"]>[0];
    // After it, a WAIT with no time set: the synchronous signal answers as the workflow waits there.
    const afterWait = { name: "after", taskReferenceName: "after", type: "WAIT", inputParameters: {} } as unknown as Parameters<ConductorWorkflow["add"]>[0];
    const flow = new ConductorWorkflow(executor, name).add(yieldTask).add(afterWait);
    await flow.register(true);
    const run = await executor.executeWorkflow({ name, version: 1, input: { stage: "review" } }, name, 1, `client-yield-${suffix}`);
    expect(run).toMatchObject({ status: "RUNNING" });
    expect(taskOf(run, "paused")).toMatchObject({ taskType: "YIELD", status: "IN_PROGRESS", inputData: { stage: "review" } });
    const answer = await executor.signal(run.workflowId!, TaskResultStatusEnum.COMPLETED, { go: true });
    expect(answer.targetWorkflowStatus).toBe("RUNNING");
    expect(taskOf(await executor.getWorkflow(run.workflowId!, true), "paused")).toMatchObject({ status: "COMPLETED", outputData: { taskOutput: { go: true } } });
    await executor.terminate(run.workflowId!, "done");
  });

  it("EventClient manages event handlers, and an EVENT task built with conductorEventTask completes another workflow's WAIT through one", async () => {
    const events = clients.getEventClient();
    const waiterName = `client_event_waiter_${suffix}`;
    const publisherName = `client_event_publisher_${suffix}`;
    await new ConductorWorkflow(executor, waiterName).add(waitTaskDuration("approval", "1h")).register(true);
    const publisher = new ConductorWorkflow(executor, publisherName).add({ ...conductorEventTask("announce", "approvals"), inputParameters: { waiterId: "${workflow.input.waiterId}" } });
    await publisher.register(true);
    const event = `conductor:${publisherName}:approvals`;
    const name = `client_on_approval_${suffix}`;
    await events.addEventHandler({
      name,
      event,
      active: true,
      condition: "$.waiterId !== undefined",
      actions: [{ action: "complete_task", complete_task: { workflowId: "${waiterId}", taskRefName: "approval", output: { by: "${workflowInstanceId}" } } }],
    });
    expect((await events.getEventHandlersForEvent(event, true)).map((handler) => handler.name)).toEqual([name]);
    expect(await events.getEventHandlerByName(name)).toMatchObject({ name, event, active: true });

    const waiterId = await executor.startWorkflow({ name: waiterName, version: 1, input: {} });
    await taskReaches(waiterId, "approval", "IN_PROGRESS");
    const publisherId = await executor.startWorkflow({ name: publisherName, version: 1, input: { waiterId } });
    const published = await workflowReaches(publisherId, "COMPLETED");
    expect(taskOf(published, "announce")!.outputData).toMatchObject({ event_produced: event, waiterId, workflowInstanceId: publisherId });
    const approved = await workflowReaches(waiterId, "COMPLETED");
    expect(taskOf(approved, "approval")!.outputData).toMatchObject({ by: publisherId, "conductor.event.name": event });
    // What the handler did, and the message it did it with.
    const messageId = taskOf(published, "announce")!.taskId;
    expect(await events.getEventExecutions(name)).toEqual([expect.objectContaining({ messageId, name, event, action: "complete_task", status: "COMPLETED" })]);
    expect(await events.getEventMessages(event)).toEqual([expect.objectContaining({ id: messageId, eventTarget: event, status: "HANDLED" })]);
    expect((await events.getAllActiveEventHandlers()).results).toEqual(expect.arrayContaining([{ name, event, active: true, numberOfActions: 1, numberOfMessages: 1 }]));

    await events.putTagForEventHandler(name, [{ key: "owner", value: "e2e" }]);
    expect(await events.getTagsForEventHandler(name)).toEqual([{ key: "owner", value: "e2e" }]);
    await events.deleteTagForEventHandler(name, { key: "owner", value: "e2e" });
    expect(await events.getTagsForEventHandler(name)).toEqual([]);
    await events.updateEventHandler({ name, event, active: false, actions: [{ action: "complete_task", complete_task: { workflowId: "${waiterId}", taskRefName: "approval" } }] });
    expect(await events.getEventHandlersForEvent(event, true)).toEqual([]);
    await events.removeEventHandler(name);
    expect(await sdkError(events.getEventHandlerByName(name))).toMatch(/No event handler named/);
  });

  it("TaskClient.search finds tasks by query and by free text, with their status as it changes; poll data of a task no worker polled is empty", async () => {
    const name = `client_task_search_${suffix}`;
    const worker = `client_task_search_worker_${suffix}`;
    const flow = new ConductorWorkflow(executor, name);
    flow.add(simpleTask("hold", worker, { n: "${workflow.input.n}" }));
    await flow.register(true);
    const workflowId = await executor.startWorkflow({ name, version: 1, input: { n: 3 } });
    const waiting = await until("the task in the task index", () => tasks.search(0, 10, "", "*", `workflowId = '${workflowId}'`), (found) => found.totalHits === 1);
    expect(waiting.results![0]).toMatchObject({ workflowId, workflowType: name, taskType: worker, taskDefName: worker, status: "SCHEDULED", input: JSON.stringify({ n: 3 }) });
    await executor.updateTaskByRefName("hold", workflowId, "COMPLETED", { done: "yes" });
    const done = await until("the task's new status in the index", () => tasks.search(0, 10, "updateTime:DESC", "*", `taskType = ${worker} AND status IN (COMPLETED)`), (found) => found.totalHits === 1);
    expect(done.results![0]).toMatchObject({ workflowId, status: "COMPLETED", output: JSON.stringify({ done: "yes" }) });
    expect((await tasks.search(0, 10, "", workflowId, "")).totalHits).toBe(1);
    expect(await sdkError(tasks.search(0, 10, "", "*", "status = DONE"))).toMatch(/^Failed to search tasks: .*unknown task status DONE/);
    expect(await tasks.getTaskPollData(`client_never_polled_${suffix}`)).toEqual([]);
  });

  it("getTask reads a task by its id once its execution is searchable; an id no execution holds is refused", async () => {
    const name = `client_get_task_${suffix}`;
    const flow = new ConductorWorkflow(executor, name);
    flow.add(simpleTask("hold", `client_get_task_worker_${suffix}`, { n: "${workflow.input.n}" }));
    await flow.register(true);
    const workflowId = await executor.startWorkflow({ name, version: 1, input: { n: 7 } });
    const hold = taskOf(await executor.getWorkflow(workflowId, true), "hold")!;
    const read = await until(`task ${hold.taskId} by id`, () => tasks.getTask(hold.taskId!).catch(() => undefined), (task) => task !== undefined);
    expect(read).toMatchObject({ taskId: hold.taskId, referenceTaskName: "hold", workflowInstanceId: workflowId, status: "SCHEDULED", inputData: { n: 7 } });
    expect(await sdkError(tasks.getTask(crypto.randomUUID()))).toMatch(/^Failed to get task '.*': .*not found/);
    await executor.terminate(workflowId, "done");
  });
});

describe("WAIT_FOR_WEBHOOK matches and webhooks", () => {
  it("a task built with waitForWebhookTask({matches}) is completed by the event a webhook receives", async () => {
    const name = `client_webhook_${suffix}`;
    // The client types waitForWebhookTask() as a plain WorkflowTask, which workflow() does not accept: appended here.
    const definition = workflow(name, []);
    await metadata.registerWorkflowDef({ ...definition, tasks: [waitForWebhookTask("paid", { matches: { "$['event']['type']": "payment.completed", "$.data.orderId": "${workflow.input.orderId}" } })] }, true);
    // The client has no webhook configs: created over the API as any HTTP caller would.
    const created = await fetch(`${server.url}/api/metadata/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": `${keyId}:${keySecret}` },
      body: JSON.stringify({ name: `payments-${suffix}`, verifier: "HEADER_BASED", headers: { "X-Webhook-Secret": "e2e" }, receiverWorkflowNamesToVersions: { [name]: 1 } }),
    });
    expect(created.status).toBe(200);
    const webhook = (await created.json()) as { id: string; url: string };
    expect(webhook.url).toBe(`${server.url}/webhook/${webhook.id}`);
    const workflowId = await executor.startWorkflow({ name, version: 1, input: { orderId: "A-1" } });
    await taskReaches(workflowId, "paid", "IN_PROGRESS");
    const event = { event: { type: "payment.completed" }, data: { orderId: "A-1", amount: 12 } };
    // The task's routing row follows its start by a moment: the sender's retry (as senders retry) finds it.
    const answer = await until(
      "the event completing the task",
      async () => (await (await fetch(webhook.url, { method: "POST", headers: { "content-type": "application/json", "X-Webhook-Secret": "e2e" }, body: JSON.stringify(event) })).json()) as { completedTasks: unknown[] },
      (body) => body.completedTasks.length === 1,
    );
    expect(answer.completedTasks).toEqual([{ workflowId, taskId: expect.any(String) }]);
    const done = await workflowReaches(workflowId, "COMPLETED");
    expect(taskOf(done, "paid")?.outputData).toEqual(event);
  });
});

describe("human tasks through the client's HumanExecutor and TemplateClient", () => {
  const approvalForm = (name: string) => ({
    name,
    version: 1,
    jsonSchema: { type: "object", properties: { approved: { type: "boolean" }, comment: { type: "string" } }, required: ["approved"] },
    templateUI: { type: "VerticalLayout", elements: [{ type: "Control", scope: "#/properties/approved" }] },
  });

  it("a humanTask() from the builders is listed by search, claimed for a user of another system, saved, and submitted against its user form", async () => {
    const human = clients.getHumanClient();
    const formName = `client_form_${suffix}`;
    expect(await clients.getTemplateClient().registerTemplate(approvalForm(formName), false)).toMatchObject({ name: formName, version: 1 });
    expect(await human.getTemplateByNameVersion(formName, 1)).toMatchObject({ jsonSchema: { required: ["approved"] } });
    const name = `client_human_${suffix}`;
    const approve = humanTask("approve", { displayName: "Approve the refund", formTemplate: formName, assignee: { userType: "EXTERNAL_USER", user: "x@corp.example" } });
    await metadata.registerWorkflowDef(workflow(name, [approve as never]), true);
    const workflowId = await executor.startWorkflow({ name, version: 1, input: { amount: 3 } });
    await taskReaches(workflowId, "approve", "IN_PROGRESS");

    const [entry] = await until("the task listed", () => human.search({ searchType: "ADMIN", workflowNames: [name] }), (found) => found.length === 1);
    expect(entry).toMatchObject({ workflowId, state: "ASSIGNED", displayName: "Approve the refund", assignee: { user: "x@corp.example", userType: "EXTERNAL_USER" } });
    const taskId = entry!.taskId!;
    const claimed = await human.claimTaskAsExternalUser(taskId, "x@corp.example", { withTemplate: true });
    expect(claimed).toMatchObject({ state: "IN_PROGRESS", claimant: { user: "x@corp.example", userType: "EXTERNAL_USER" }, humanTaskDef: { fullTemplate: { name: formName, version: 1 } } });
    // The client types a form as an object of objects; the service takes any JSON object, as Orkes does.
    await human.updateTaskOutput(taskId, { comment: "receipt checked" } as never);
    expect(await sdkError(human.completeTask(taskId, { approved: "yes" } as never))).toMatch(/approved/);
    await human.completeTask(taskId, { approved: true } as never);
    const done = await workflowReaches(workflowId, "COMPLETED");
    expect(taskOf(done, "approve")!.outputData).toEqual({ comment: "receipt checked", approved: true });
    expect(await human.getTaskById(taskId)).toMatchObject({ state: "COMPLETED", output: { approved: true } });
  });

  it("registerTemplate(form, true) saves the next version, leaving the version the form names as it was; getTemplateById reads version 1", async () => {
    const templates = clients.getTemplateClient();
    const formName = `client_form_versions_${suffix}`;
    expect(await templates.registerTemplate(approvalForm(formName), false)).toMatchObject({ version: 1 });
    // The client's form type requires a version: the form read back, changed and saved as a new version names 1.
    const changed = { ...approvalForm(formName), templateUI: { type: "HorizontalLayout", elements: [] } };
    expect(await templates.registerTemplate(changed, true)).toMatchObject({ version: 2, templateUI: { type: "HorizontalLayout" } });
    const human = clients.getHumanClient();
    expect(await human.getTemplateByNameVersion(formName, 2)).toMatchObject({ templateUI: { type: "HorizontalLayout" } });
    expect(await human.getTemplateById(formName)).toMatchObject({ version: 1, templateUI: { type: "VerticalLayout" } });
  });

  it("pollSearch finds a task assigned to the caller in their inbox, getTasksByFilter by assignee and reference name; claimTaskAsConductorUser claims it, releaseTask gives it back", async () => {
    const human = clients.getHumanClient();
    const name = `client_inbox_${suffix}`;
    const assignments = [{ assignee: { user: "admin", userType: "CONDUCTOR_USER" }, slaMinutes: 0 }];
    await metadata.registerWorkflowDef(workflow(name, [{ name: "review", taskReferenceName: "review", type: "HUMAN", inputParameters: { __humanTaskDefinition: { assignments } } } as never]), true);
    const workflowId = await executor.startWorkflow({ name, version: 1, input: {} });
    const found = await human.pollSearch({ workflowNames: [name], states: ["ASSIGNED"] }, { pollInterval: 200, maxPollTimes: 50 });
    expect(found.map((entry) => entry.workflowId)).toEqual([workflowId]);
    const taskId = found[0]!.taskId!;
    expect((await human.getTasksByFilter("ASSIGNED", "admin", "CONDUCTOR_USER", undefined, "review")).map((entry) => entry.taskId)).toContain(taskId);
    expect(await human.claimTaskAsConductorUser(taskId)).toMatchObject({ state: "IN_PROGRESS", claimant: { user: "admin", userType: "CONDUCTOR_USER" } });
    expect(await sdkError(human.claimTaskAsConductorUser(taskId))).toMatch(/claimed/);
    await human.releaseTask(taskId);
    expect(await human.getTaskById(taskId)).toMatchObject({ state: "ASSIGNED", assignee: { user: "admin" } });
    expect((await human.getTaskById(taskId)).claimant).toBeUndefined();
    await executor.terminate(workflowId, "done");
  });
});

describe("schedules through the client's SchedulerClient", () => {
  it("saves a schedule, reads and lists it, previews fires; its alarm starts the workflow in wrangler dev; pauses, resumes and deletes it", async () => {
    const scheduler = clients.getSchedulerClient();
    const flowName = `client_sched_${suffix}`;
    const scheduleName = `client-sched-${suffix}`;
    await metadata.registerWorkflowDef(
      workflow(flowName, [httpTask("tick", { uri: target.url(`/count/sched-${suffix}?at=\${workflow.input._scheduledTime}`), method: "GET" })]),
      true,
    );
    // Every 10 seconds, the shortest interval allowed: a real fire within the test.
    await scheduler.saveSchedule({ name: scheduleName, cronExpression: "*/10 * * * * ?", startWorkflowRequest: { name: flowName, input: { from: "schedule" } }, description: "e2e" });
    const saved = await scheduler.getSchedule(scheduleName);
    expect(saved).toMatchObject({ name: scheduleName, cronExpression: "*/10 * * * * ?", zoneId: "UTC", paused: false, description: "e2e", startWorkflowRequest: { name: flowName } });
    expect((await scheduler.getAllSchedules(flowName)).map((schedule) => schedule.name)).toEqual([scheduleName]);
    const start = Date.UTC(2031, 0, 1);
    expect(await scheduler.getNextFewSchedules("0 0 12 * * ?", start, undefined, 2)).toEqual([start + 12 * 3_600_000, start + 36 * 3_600_000]);

    const fired = await until(
      "a scheduled execution",
      () => executor.search(0, 10, `workflowType IN (${flowName})`, "*"),
      (result) => (result.totalHits ?? 0) >= 1,
      30_000,
    );
    const execution = await executor.getWorkflow(fired.results![0]!.workflowId!, false);
    expect(execution.input).toMatchObject({ from: "schedule", _scheduledTime: expect.any(Number), _executedTime: expect.any(Number) });
    expect((execution.input!["_scheduledTime"] as number) % 10_000).toBe(0);
    // What the fire did, as the client's search of schedule executions finds it.
    const fires = await until(
      "the fire recorded",
      () => scheduler.search(0, 10, "", "*", `scheduleName = '${scheduleName}'`),
      (result) => (result.results ?? []).some((fire) => fire.workflowId === execution.workflowId),
      10_000,
    );
    expect(fires.results!.find((fire) => fire.workflowId === execution.workflowId)).toMatchObject({ scheduleName, workflowName: flowName, state: "EXECUTED", scheduledTime: execution.input!["_scheduledTime"] });

    // Tags: set (added to those it has), read, removed.
    await scheduler.setSchedulerTags([{ key: "team", value: "ops" }, { key: "tier", value: "gold" }], scheduleName);
    await scheduler.deleteSchedulerTags([{ key: "tier", value: "gold" }], scheduleName);
    expect(await scheduler.getSchedulerTags(scheduleName)).toEqual([{ key: "team", value: "ops" }]);
    // The client tries PUT, then GET on a 405: PUT is served.
    await scheduler.pauseSchedule(scheduleName, "e2e pause");
    expect(await scheduler.getSchedule(scheduleName)).toMatchObject({ paused: true, pausedReason: "e2e pause" });
    await scheduler.resumeSchedule(scheduleName);
    expect(await scheduler.getSchedule(scheduleName)).toMatchObject({ paused: false });
    await scheduler.deleteSchedule(scheduleName);
    expect(await sdkError(scheduler.getSchedule(scheduleName))).toMatch(/No schedule named/);
    expect(await scheduler.getAllSchedules(flowName)).toEqual([]);

    expect(await sdkError(scheduler.saveSchedule({ name: scheduleName, cronExpression: "*/10 * * * *", startWorkflowRequest: { name: flowName } }))).toMatch(/cronExpression: must have 6 fields/);
    expect(await sdkError(scheduler.getSchedulerTags(scheduleName))).toMatch(/No schedule named/);
  });
});

describe("agent schedules through the client's SchedulerClient (its 4.0.0 Schedule methods)", () => {
  it("saves under <workflow>-<name>, lists, pauses with a reason, runs now, previews, reconciles and deletes; refusals are its typed errors", async () => {
    const scheduler = clients.getSchedulerClient();
    const flowName = `client_agent_sched_${suffix}`;
    await metadata.registerWorkflowDef({ ...workflow(flowName, [setVariableTask("keep", { x: "${workflow.input.x}" })]), outputParameters: { x: "${workflow.variables.x}" } }, true);
    await scheduler.save(new Schedule({ name: "nightly", cron: "0 0 2 * * ?", input: { x: 7 }, description: "e2e" }), flowName);
    const wireName = `${flowName}-nightly`;
    const [listed] = await scheduler.listForAgent(flowName);
    expect(listed).toMatchObject({ name: wireName, shortName: "nightly", agent: flowName, cron: "0 0 2 * * ?", timezone: "UTC", input: { x: 7 }, paused: false, description: "e2e", createdBy: expect.any(String) });
    expect(listed!.nextRun).toEqual(expect.any(Number));
    expect(listed!.updateTime).toEqual(expect.any(Number));

    await scheduler.pause(wireName, "maintenance");
    const paused = await scheduler.get(wireName, flowName);
    expect(paused).toMatchObject({ paused: true, pausedReason: "maintenance" });
    // runNow starts the schedule's workflow with its input, paused or not.
    const workflowId = await scheduler.runNow(paused);
    expect(workflowId).toMatch(UUID);
    expect((await workflowReaches(workflowId, "COMPLETED")).output).toEqual({ x: 7 });
    await scheduler.resume(wireName);
    expect((await scheduler.get(wireName)).paused).toBe(false);

    const start = Date.UTC(2031, 0, 1);
    expect(await scheduler.previewNext("0 0 12 * * ?", { n: 2, startAt: start })).toEqual([start + 12 * 3_600_000, start + 36 * 3_600_000]);
    expect(await rejection(scheduler.previewNext("0 0 25 * * ?"))).toBeInstanceOf(InvalidCronExpression);
    expect(await rejection(scheduler.save(new Schedule({ name: "bad", cron: "0 0 25 * * ?" }), flowName))).toBeInstanceOf(InvalidCronExpression);
    expect(await rejection(scheduler.get(`${flowName}-missing`))).toBeInstanceOf(ScheduleNotFound);

    // Those listed are saved, the others of the workflow deleted.
    await scheduler.reconcile(flowName, [new Schedule({ name: "hourly", cron: "0 0 * * * ?" })]);
    expect((await scheduler.listForAgent(flowName)).map((schedule) => schedule.name)).toEqual([`${flowName}-hourly`]);
    await scheduler.reconcile(flowName, []);
    expect(await scheduler.listForAgent(flowName)).toEqual([]);
    expect(await rejection(scheduler.get(wireName))).toBeInstanceOf(ScheduleNotFound);
  });
});

describe("task workers written against the client (TaskManager, TaskHandler)", () => {
  const GREET = `client_greet_${suffix}`;
  const SLOW = `client_slow_${suffix}`;
  const FLAKY = `client_flaky_${suffix}`;
  const FLOW = `client_workers_${suffix}`;
  const LEASE = `client_lease_${suffix}`;
  const WORKER_ID = `e2e-worker-${suffix}`;

  /** One request of the workers' client and how the service answered it. */
  interface Exchange {
    method: string;
    path: string;
    status: number;
    contentType: string | null;
  }
  const exchanges: Exchange[] = [];
  /** What the client's runners logged as errors or warnings. */
  const complaints: string[] = [];
  const logger: ConductorLogger = {
    info: () => {},
    debug: () => {},
    warn: (...args: unknown[]) => complaints.push(`WARN ${describeLog(args)}`),
    error: (...args: unknown[]) => complaints.push(describeLog(args)),
  };
  /** The worker client's transport: the global fetch, recording each exchange (the body is left to the client). */
  const recordingFetch: typeof fetch = async (input, init) => {
    const method = input instanceof Request ? input.method : (init?.method ?? "GET");
    const url = input instanceof Request ? input.url : String(input);
    inFlight++;
    try {
      const response = await fetch(input, init);
      exchanges.push({ method, path: new URL(url).pathname, status: response.status, contentType: response.headers.get("content-type") });
      return response;
    } finally {
      inFlight--;
    }
  };
  /** Requests of the workers' client not answered yet. */
  let inFlight = 0;
  let workerClient: Awaited<ReturnType<typeof orkesConductorClient>>;
  let manager: TaskManager | undefined;
  let handler: TaskHandler | undefined;
  /** How often the slow worker has seen each task: IN_PROGRESS the first time, COMPLETED the next. */
  const slowChecks = new Map<string, number>();

  function describeLog(args: unknown[]): string {
    return args.map((arg) => (arg instanceof Error ? `${arg.name}: ${arg.message}` : typeof arg === "string" ? arg : JSON.stringify(arg))).join(" ");
  }

  /** The workers as a Conductor user writes them: plain functions of the polled Task. */
  const workers: ConductorWorker[] = [
    {
      taskDefName: GREET,
      execute: async (task) => ({ status: "COMPLETED", outputData: { greeting: `hello-${String(task.inputData?.["name"])}` } }),
    },
    {
      taskDefName: SLOW,
      execute: async (task) => {
        const checks = (slowChecks.get(task.taskId!) ?? 0) + 1;
        slowChecks.set(task.taskId!, checks);
        if (checks === 1) return { status: "IN_PROGRESS", callbackAfterSeconds: 1, outputData: { checks } };
        return { status: "COMPLETED", outputData: { checks, greeting: task.inputData?.["greeting"] } };
      },
    },
    {
      taskDefName: FLAKY,
      execute: async (task) => {
        if (task.inputData?.["terminal"] === true) throw new NonRetryableException("flaky: gave up for good");
        if (task.inputData?.["failAlways"] === true || task.retryCount === 0) throw new Error(`flaky: attempt ${task.retryCount}`);
        return { status: "COMPLETED", outputData: { attempt: task.retryCount } };
      },
    },
  ];

  function instances(execution: Workflow, ref: string): TaskView[] {
    return (execution.tasks ?? []).filter((task) => task.referenceTaskName === ref);
  }

  /** A happy run: each worker's output reaches the next task, the HTTP task and the workflow output. */
  async function expectHappyRun(workflowId: string, workerId: string): Promise<void> {
    const done = await workflowReaches(workflowId, "COMPLETED");
    expect(done.output).toEqual({ greeting: "hello-e2e", checks: 2, attempt: 1, echoed: "hello-e2e" });
    expect(taskOf(done, "greet")).toMatchObject({ status: "COMPLETED", taskType: GREET, workerId, outputData: { greeting: "hello-e2e" } });
    // Kept IN_PROGRESS once with callbackAfterSeconds, then polled again (which serves the delay: 0 again, as
    // Conductor resets it) and completed by the second call.
    expect(taskOf(done, "slow")).toMatchObject({ status: "COMPLETED", callbackAfterSeconds: 0, outputData: { checks: 2, greeting: "hello-e2e" } });
    expect(taskOf(done, "slow")!.pollCount).toBeGreaterThanOrEqual(2);
    // The throw failed the first attempt; the task definition's retryCount 1 ran it again.
    expect(instances(done, "flaky").map((task) => [task.status, task.retryCount, task.reasonForIncompletion])).toEqual([
      ["FAILED", 0, "flaky: attempt 0"],
      ["COMPLETED", 1, undefined],
    ]);
  }

  beforeAll(async () => {
    workerClient = await orkesConductorClient({ serverUrl: server.url, keyId, keySecret, logger: noopLogger, refreshTokenInterval: 0 }, recordingFetch);
    await metadata.registerTask(taskDefinition({ name: GREET, description: "greets", retryCount: 0 }));
    await metadata.registerTask(taskDefinition({ name: SLOW, description: "checks twice", retryCount: 0 }));
    await metadata.registerTask(taskDefinition({ name: FLAKY, description: "fails its first attempt", retryCount: 1, retryDelaySeconds: 0 }));
    // 2 s to report: the lease worker below takes longer and keeps the task with heartbeats.
    await metadata.registerTask(taskDefinition({ name: LEASE, description: "outlives its response timeout", retryCount: 0, responseTimeoutSeconds: 2 }));
    const flow = new ConductorWorkflow(executor, FLOW).description("SIMPLE tasks run by the client's workers");
    flow
      .add(simpleTask("greet", GREET, { name: flow.input("name") }))
      .add(simpleTask("slow", SLOW, { greeting: "${greet.output.greeting}" }))
      .add(simpleTask("flaky", FLAKY, { failAlways: flow.input("failAlways"), terminal: flow.input("terminal") }))
      .add(httpTask("report", { uri: target.url(`/echo/workers-${suffix}?greeting=\${greet.output.greeting}`), method: "GET" }))
      .outputParameters({
        greeting: "${greet.output.greeting}",
        checks: "${slow.output.checks}",
        attempt: "${flaky.output.attempt}",
        echoed: "${report.output.response.body.query.greeting}",
      });
    await flow.register(true);
    await new ConductorWorkflow(executor, LEASE).add(simpleTask("long", LEASE, {})).outputParameters({ calls: "${long.output.calls}" }).register(true);
    expect((await metadata.getWorkflowDef(FLOW)).tasks.map((task) => [task.taskReferenceName, task.type, task.name])).toEqual([
      ["greet", "SIMPLE", GREET],
      ["slow", "SIMPLE", SLOW],
      ["flaky", "SIMPLE", FLAKY],
      ["report", "HTTP", "report"],
    ]);
  });

  /**
   * Waits for the last poll of stopped runners to come back. Stopping does not wait for it (in the client, as
   * against Conductor): a task it still brings back is run and reported by the stopped runner, and would not be the
   * next test's runner's.
   */
  async function drained(): Promise<void> {
    await until("the stopped runners' last requests", async () => inFlight, (count) => count === 0);
  }

  afterEach(async () => {
    // A failed test still stops its pollers, so the run ends by itself.
    await manager?.stopPolling();
    await handler?.stopWorkers();
    manager = undefined;
    handler = undefined;
    await drained();
  });

  it("a TaskManager's workers complete, keep IN_PROGRESS with callbackAfterSeconds, and fail (retried, or terminal)", async () => {
    manager = new TaskManager(workerClient, workers, { logger, options: { workerID: WORKER_ID, pollInterval: 100, concurrency: 2 } });
    manager.startPolling();
    const happy = await executor.startWorkflow({ name: FLOW, version: 1, input: { name: "e2e", failAlways: false, terminal: false } });
    const always = await executor.startWorkflow({ name: FLOW, version: 1, input: { name: "e2e", failAlways: true, terminal: false } });
    const terminal = await executor.startWorkflow({ name: FLOW, version: 1, input: { name: "e2e", failAlways: false, terminal: true } });

    await expectHappyRun(happy, WORKER_ID);

    const failed = await workflowReaches(always, "FAILED");
    expect(instances(failed, "flaky").map((task) => [task.status, task.retryCount, task.reasonForIncompletion])).toEqual([
      ["FAILED", 0, "flaky: attempt 0"],
      ["FAILED", 1, "flaky: attempt 1"],
    ]);
    expect(failed).toMatchObject({ failedReferenceTaskNames: ["flaky"], reasonForIncompletion: expect.stringContaining("flaky: attempt 1") });
    expect(instances(failed, "report")).toEqual([]);

    // NonRetryableException: FAILED_WITH_TERMINAL_ERROR, not retried despite the definition's retryCount.
    const gaveUp = await workflowReaches(terminal, "FAILED");
    expect(instances(gaveUp, "flaky").map((task) => [task.status, task.reasonForIncompletion])).toEqual([["FAILED_WITH_TERMINAL_ERROR", "flaky: gave up for good"]]);

    await manager.stopPolling();
    expect(manager.isPolling).toBe(false);
    expect(await tasks.getQueueSizeForTask([GREET, SLOW, FLAKY])).toEqual({ [GREET]: 0, [SLOW]: 0, [FLAKY]: 0 });
    // Its polls are on record, as the official client reads them.
    expect(await tasks.getTaskPollData(GREET)).toEqual([{ queueName: GREET, workerId: WORKER_ID, lastPollTime: expect.any(Number) }]);

    // The runner took update-v2 (no fallback to POST /api/tasks) and logged nothing but the workers' own throws.
    expect(complaints.filter((line) => !/^(Error executing \S+ Error: flaky: attempt [01]|Error executing \S+ NonRetryableException: flaky: gave up for good|Task \S+ failed with terminal error \(no retry\): flaky: gave up for good)$/.test(line))).toEqual([]);
    const calls = new Set(exchanges.map((exchange) => `${exchange.method} ${exchange.path.replace(/\/(client_[a-z]+)_[a-z0-9]+$/, "/$1")} ${exchange.status} ${exchange.contentType ?? "-"}`));
    expect([...calls].sort()).toEqual(
      expect.arrayContaining([
        "GET /api/tasks/poll/batch/client_greet 200 application/json",
        "POST /api/tasks/update-v2 204 -",
      ]),
    );
    expect([...calls].filter((call) => !/^(POST \/api\/token 200 application\/json|GET \/api\/tasks\/poll\/batch\/client_(greet|slow|flaky) 200 application\/json|POST \/api\/tasks\/update-v2 (204 -|200 application\/json))$/.test(call))).toEqual([]);
  });

  it("a worker of a domain gets the tasks of a workflow started with fallback domains (\"<domain>,NO_DOMAIN\") while it polls", async () => {
    const taskName = `client_domain_task_${suffix}`;
    const domain = "e2e-gpu";
    const flowName = `client_domain_flow_${suffix}`;
    await new ConductorWorkflow(executor, flowName).add(simpleTask("render", taskName, {})).outputParameters({ by: "${render.output.by}" }).register(true);
    const gpuWorker: ConductorWorker = { taskDefName: taskName, domain, execute: async () => ({ status: "COMPLETED", outputData: { by: "gpu" } }) };
    manager = new TaskManager(workerClient, [gpuWorker], { logger, options: { workerID: WORKER_ID, pollInterval: 100, concurrency: 1 } });
    manager.startPolling();
    // Its polls make the domain active: then, and only then, the fallback list sends tasks there.
    await until("the domain worker's polls recorded", () => tasks.getTaskPollData(taskName), (polls) => polls.some((poll) => poll.domain === domain), 10_000);
    const workflowId = await executor.startWorkflow({ name: flowName, version: 1, input: {}, taskToDomain: { [taskName]: `${domain},NO_DOMAIN` } });
    const done = await workflowReaches(workflowId, "COMPLETED");
    expect(done.output).toEqual({ by: "gpu" });
    expect(taskOf(done, "render")).toMatchObject({ domain, workerId: WORKER_ID });
  });

  it("a TaskHandler (the 4.0.0 runner) runs the same workers and stops", async () => {
    const before = complaints.length;
    handler = new TaskHandler({ client: workerClient, workers, scanForDecorated: false, logger });
    await handler.startWorkers();
    expect(handler.running).toBe(true);
    const happy = await executor.startWorkflow({ name: FLOW, version: 1, input: { name: "e2e", failAlways: false, terminal: false } });
    await expectHappyRun(happy, hostname());
    await handler.stopWorkers();
    expect(handler.running).toBe(false);
    expect(complaints.slice(before).filter((line) => !/^Error executing \S+ Error: flaky: attempt 0$/.test(line))).toEqual([]);
  });

  it("a worker with leaseExtendEnabled keeps its task past responseTimeoutSeconds with heartbeats, and no other poll gets it", async () => {
    const calls = new Map<string, number>();
    const long: ConductorWorker = {
      taskDefName: LEASE,
      leaseExtendEnabled: true,
      execute: async (task) => {
        const n = (calls.get(task.taskId!) ?? 0) + 1;
        calls.set(task.taskId!, n);
        // Longer than the 2 s responseTimeoutSeconds; the runner heartbeats (extendLease) every 1.6 s meanwhile.
        await sleep(3_500);
        return { status: "COMPLETED", outputData: { calls: n } };
      },
    };
    const before = complaints.length;
    const exchangesBefore = exchanges.length;
    // Concurrency 2: the runner polls again while the first task runs, as a second worker would.
    manager = new TaskManager(workerClient, [long], { logger, options: { workerID: WORKER_ID, pollInterval: 100, concurrency: 2 } });
    manager.startPolling();
    const started = await executor.startWorkflow({ name: LEASE, version: 1 });
    const done = await until("the lease workflow's end", () => executor.getWorkflow(started, true), (execution) => execution.status !== "RUNNING");
    await manager.stopPolling();
    expect(done).toMatchObject({ status: "COMPLETED", output: { calls: 1 } });
    expect(taskOf(done, "long")).toMatchObject({ status: "COMPLETED", pollCount: 1, workerId: WORKER_ID });
    expect([...calls.values()]).toEqual([1]);
    expect(complaints.slice(before)).toEqual([]);
    // The heartbeats: TaskResults with extendLease through POST /api/tasks, each answered 200.
    const heartbeats = exchanges.slice(exchangesBefore).filter((exchange) => exchange.method === "POST" && exchange.path === "/api/tasks");
    expect(heartbeats.length).toBeGreaterThanOrEqual(1);
    expect(heartbeats.map((exchange) => exchange.status)).toEqual(heartbeats.map(() => 200));
  });

  it("a worker's TaskContext.addLog lines and a thrown error's stack are its task's logs, read with TaskClient.getTaskLogs; addTaskLog adds a line", async () => {
    const LOGGED = `client_logged_${suffix}`;
    const BROKEN = `client_broken_${suffix}`;
    const LOG_FLOW = `client_logs_${suffix}`;
    await metadata.registerTask(taskDefinition({ name: LOGGED, description: "logs as it works", retryCount: 0 }));
    await metadata.registerTask(taskDefinition({ name: BROKEN, description: "throws", retryCount: 0 }));
    await new ConductorWorkflow(executor, LOG_FLOW).add(simpleTask("logged", LOGGED, { n: "${workflow.input.n}" })).add(simpleTask("broken", BROKEN, {})).register(true);
    const loggingWorkers: ConductorWorker[] = [
      {
        taskDefName: LOGGED,
        execute: async (task) => {
          const context = getTaskContext();
          context?.addLog(`working on ${String(task.inputData?.["n"])}`);
          context?.addLog("done");
          return { status: "COMPLETED", outputData: { logged: context !== undefined } };
        },
      },
      {
        taskDefName: BROKEN,
        execute: async () => {
          throw new Error("broken: no luck");
        },
      },
    ];
    manager = new TaskManager(workerClient, loggingWorkers, { logger, options: { workerID: WORKER_ID, pollInterval: 100, concurrency: 1 } });
    manager.startPolling();
    const workflowId = await executor.startWorkflow({ name: LOG_FLOW, version: 1, input: { n: 3 } });
    const failed = await workflowReaches(workflowId, "FAILED");
    await manager.stopPolling();
    const logged = taskOf(failed, "logged")!;
    const broken = taskOf(failed, "broken")!;
    expect(logged).toMatchObject({ status: "COMPLETED", outputData: { logged: true } });
    expect(broken).toMatchObject({ status: "FAILED", reasonForIncompletion: "broken: no luck" });

    // A task is found by id once its execution is searchable.
    const lines = await until(`the logs of ${logged.taskId}`, () => tasks.getTaskLogs(logged.taskId!).catch(() => undefined), (read) => read !== undefined);
    expect(lines!.map((line) => [line.log, line.taskId])).toEqual([
      ["working on 3", logged.taskId],
      ["done", logged.taskId],
    ]);
    expect(lines!.every((line) => typeof line.createdTime === "number" && line.createdTime > 0)).toBe(true);
    // The runner reports a throw with the error and its stack as a log line.
    const brokenLines = await tasks.getTaskLogs(broken.taskId!);
    expect(brokenLines).toHaveLength(1);
    expect(brokenLines![0]).toMatchObject({ taskId: broken.taskId, log: expect.stringMatching(/^Error: broken: no luck\n(Error: broken: no luck\n)?\s+at /) });

    await tasks.addTaskLog(logged.taskId!, "reviewed by e2e");
    expect((await tasks.getTaskLogs(logged.taskId!))!.map((line) => line.log)).toEqual(["working on 3", "done", "reviewed by e2e"]);
    expect(await sdkError(tasks.getTaskLogs(crypto.randomUUID()))).toMatch(/^Failed to get logs for task '.*': .*not found/);
  });
});

describe("a client outliving its token", () => {
  let shortLived: DevServer;

  beforeAll(async () => {
    shortLived = await freshServer({ ACCESS_TOKEN_TTL_SECONDS: "2" });
  });

  afterAll(async () => {
    await shortLived?.stop();
  });

  it("gets a new token when the service answers 401 EXPIRED_TOKEN, and the call succeeds", async () => {
    const client = await orkesConductorClient({ serverUrl: shortLived.url, keyId, keySecret, logger: noopLogger, refreshTokenInterval: 0 });
    const shortMetadata = new MetadataClient(client);
    await shortMetadata.registerWorkflowDef(childDefinition(), true);
    const before = await client.getAuthenticationHeaders();
    await sleep(3_000);
    // The client's own clock says its token is fresh (it assumes 45 minutes); only the service's EXPIRED_TOKEN makes it re-authenticate.
    expect((await shortMetadata.getWorkflowDef(CHILD)).name).toBe(CHILD);
    const after = await client.getAuthenticationHeaders();
    expect(after?.["X-Authorization"]).toMatch(/^ey/);
    expect(after?.["X-Authorization"]).not.toBe(before?.["X-Authorization"]);
  });
});
