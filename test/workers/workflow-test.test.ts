/**
 * Test runs: `POST /api/workflow/test` (Conductor's WorkflowTestRequest), through the real router and objects. Mocked
 * tasks take their results instead of running; everything else runs as it always does.
 */
import { describe, expect, it } from "vitest";
import { ExecutionStore } from "../../src/actors/execution-store";
import { TaskQueue } from "../../src/actors/task-queue";
import type { JsonObject } from "../../src/engine/model";
import { call, createUser, orkes } from "./auth-helpers";
import { ADMIN_KEY, api, apiOk, eventually, hits, httpTask, register, target, waitFor, type TaskJson, type WorkflowJson } from "./helpers";
import { poll, report } from "./task-worker-helpers";

const simple = (ref: string, name = `wt_${ref}`, inputParameters: JsonObject = {}): JsonObject => ({ name, taskReferenceName: ref, type: "SIMPLE", inputParameters });
const counted = (ref: string, key: string): JsonObject => httpTask(ref, { uri: target(`/count/${key}`), method: "GET" });
const statuses = (workflow: WorkflowJson) => workflow.tasks.map((task) => `${task.referenceTaskName}:${task.status}`);

async function testRun(request: JsonObject): Promise<WorkflowJson> {
  return apiOk<WorkflowJson>("POST", "/api/workflow/test", request);
}

async function validationPaths(response: Response): Promise<string[]> {
  expect(response.status).toBe(400);
  const body = (await response.json()) as { error: string; validationErrors: Array<{ path: string }> };
  expect(body.error).toBe("VALIDATION_ERROR");
  return body.validationErrors.map((issue) => issue.path);
}

describe("POST /api/workflow/test (Conductor's testWorkflow)", () => {
  it("gives mocked tasks their results instead of running them, and answers the finished Workflow", async () => {
    await register({
      name: "wt_basic",
      tasks: [simple("lookup", "wt_lookup", { id: "${workflow.input.id}" }), counted("charge", "wt-basic-charge"), httpTask("notify", { uri: target("/echo/wt-basic"), method: "GET" })],
      outputParameters: { customer: "${lookup.output.customer}", charged: "${charge.output.response.body.ok}", notified: "${notify.output.response.statusCode}" },
    });
    const run = await testRun({
      name: "wt_basic",
      input: { id: 7 },
      taskRefToMockOutput: {
        lookup: [{ status: "COMPLETED", output: { customer: "ada" } }],
        charge: [{ status: "COMPLETED", output: { response: { body: { ok: "mocked" } } } }],
      },
    });
    expect(run).toMatchObject({ workflowName: "wt_basic", status: "COMPLETED", output: { customer: "ada", charged: "mocked", notified: 200 } });
    expect(statuses(run)).toEqual(["lookup:COMPLETED", "charge:COMPLETED", "notify:COMPLETED"]);
    expect(run.tasks[0]!.inputData).toEqual({ id: 7 });
    // The mocked HTTP call was never made; the unmocked one was.
    expect(await hits("wt-basic-charge")).toBe(0);
    // It is an execution like any other: read back the same.
    expect(statuses(await waitFor(run.workflowId, ["COMPLETED"]))).toEqual(statuses(run));
    // Nothing was left in a worker queue for the mocked SIMPLE task.
    expect(await apiOk<Record<string, number>>("GET", "/api/tasks/queue/sizes?taskType=wt_lookup")).toEqual({ wt_lookup: 0 });
  });

  it("POST /api/workflow/test/sync (Orkes') waits and answers as execute does: a SignalResponse, waitUntilTaskRef, returnStrategy", async () => {
    await register({ name: "wt_sync", tasks: [simple("lookup", "wt_sync_lookup"), { name: "hold", taskReferenceName: "hold", type: "WAIT" }], outputParameters: { customer: "${lookup.output.customer}" } });
    const request = { name: "wt_sync", taskRefToMockOutput: { lookup: [{ status: "COMPLETED", output: { customer: "ada" } }] } };
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/test/sync?requestId=r-7&waitForSeconds=5", request);
    expect(run).toMatchObject({ responseType: "TARGET_WORKFLOW", targetWorkflowId: run.workflowId, targetWorkflowStatus: "RUNNING", requestId: "r-7", status: "RUNNING" });
    expect(statuses(run)).toEqual(["lookup:COMPLETED", "hold:IN_PROGRESS"]);
    const blocking = await apiOk<JsonObject>("POST", "/api/workflow/test/sync?returnStrategy=BLOCKING_TASK", request);
    expect(blocking).toMatchObject({ responseType: "BLOCKING_TASK", referenceTaskName: "hold", taskType: "WAIT", status: "IN_PROGRESS" });
    const until = await call("POST", "/api/workflow/test/sync?waitUntilTaskRef=lookup", { "x-api-key": ADMIN_KEY }, request);
    expect(until.status).toBe(206);
    // Refused as a test run is, and as a start of that workflow: nothing starts.
    expect(await validationPaths(await api("POST", "/api/workflow/test/sync", { name: "wt_sync", taskRefToMockOutput: { lookup: [{ status: "DONE" }] } }))).toEqual(["taskRefToMockOutput.lookup[0].status"]);
    expect((await api("POST", "/api/workflow/test/sync?returnStrategy=NOPE", request)).status).toBe(400);
    const stranger = await createUser("wt-sync-stranger");
    expect((await call("POST", "/api/workflow/test/sync", orkes(stranger.token), request)).status).toBe(403);
  });

  it("takes a task's mocks in order: a FAILED one is retried as its definition says, and the retry takes the next", async () => {
    await register({ name: "wt_retries", tasks: [simple("flaky", "wt_flaky")] });
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "wt_flaky", retryCount: 2, retryLogic: "FIXED", retryDelaySeconds: 30, timeoutSeconds: 0, responseTimeoutSeconds: 60 }]);
    const recovered = await testRun({
      name: "wt_retries",
      taskRefToMockOutput: { flaky: [{ status: "FAILED", output: { try: 1 } }, { status: "FAILED", output: { try: 2 } }, { status: "COMPLETED", output: { try: 3 } }] },
    });
    expect(recovered.status).toBe("COMPLETED");
    expect(statuses(recovered)).toEqual(["flaky:FAILED", "flaky:FAILED", "flaky:COMPLETED"]);
    expect(recovered.tasks.map((task) => task.outputData["try"])).toEqual([1, 2, 3]);

    const exhausted = await testRun({ name: "wt_retries", taskRefToMockOutput: { flaky: [{ status: "FAILED" }, { status: "FAILED" }, { status: "FAILED" }] } });
    expect(exhausted.status).toBe("FAILED");
    expect(statuses(exhausted)).toEqual(["flaky:FAILED", "flaky:FAILED", "flaky:FAILED"]);

    const terminal = await testRun({ name: "wt_retries", taskRefToMockOutput: { flaky: [{ status: "FAILED_WITH_TERMINAL_ERROR" }, { status: "COMPLETED" }] } });
    expect([terminal.status, statuses(terminal)]).toEqual(["FAILED", ["flaky:FAILED_WITH_TERMINAL_ERROR"]]);
  });

  it("routes a SWITCH on mocked outputs, so each branch can be tested", async () => {
    const decide = { name: "route", taskReferenceName: "route", type: "SWITCH", evaluatorType: "value-param", expression: "kind", inputParameters: { kind: "${classify.output.kind}" }, decisionCases: { big: [simple("big")], small: [simple("small")] }, defaultCase: [] };
    await register({ name: "wt_switch", tasks: [simple("classify"), decide] });
    const mocks = { big: [{ output: { size: "L" } }], small: [{ output: { size: "S" } }] };
    const big = await testRun({ name: "wt_switch", taskRefToMockOutput: { ...mocks, classify: [{ output: { kind: "big" } }] } });
    expect([big.status, statuses(big)]).toEqual(["COMPLETED", ["classify:COMPLETED", "route:COMPLETED", "big:COMPLETED"]]);
    const small = await testRun({ name: "wt_switch", taskRefToMockOutput: { ...mocks, classify: [{ output: { kind: "small" } }] } });
    expect(statuses(small)).toEqual(["classify:COMPLETED", "route:COMPLETED", "small:COMPLETED"]);
  });

  it("answers at once where a task has no mock and nothing else will move it: its SIMPLE task waits in a domain of its own", async () => {
    await register({ name: "wt_unmocked", tasks: [simple("first", "wt_unmocked_first"), simple("second", "wt_unmocked_second")] });
    const started = Date.now();
    const run = await testRun({ name: "wt_unmocked", taskRefToMockOutput: { first: [{ output: { a: 1 } }] } });
    // Not after the 60 s a synchronous call may wait: blocked, not busy.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.status).toBe("RUNNING");
    expect(statuses(run)).toEqual(["first:COMPLETED", "second:SCHEDULED"]);
    const domain = run.tasks[1]!["domain"];
    expect(domain).toMatch(/^[0-9a-f-]{36}$/);
    expect((run["taskToDomain"] as Record<string, string>)["*"]).toBe(domain);
    // A real worker of that task name never gets it.
    expect((await api("GET", "/api/tasks/poll/wt_unmocked_second?workerid=real")).status).toBe(204);
    // The run can still be finished from outside, as any execution.
    await apiOk("POST", `/api/tasks/${run.workflowId}/second/COMPLETED`, { by: "hand" });
    expect((await waitFor(run.workflowId, ["COMPLETED"])).tasks[1]!.outputData).toEqual({ by: "hand" });
  });

  it("takes the queues of its own domain out of queue/all and polldata/all once it ends (a user's domain stays), and lists them again when it runs again", async () => {
    await register({ name: "wt_listed", tasks: [simple("work", "wt_listed_work"), simple("mine", "wt_listed_mine")] });
    interface PollDataJson {
      queueName: string;
      domain?: string;
      workerId: string;
    }
    const queues = () => apiOk<Record<string, number>>("GET", "/api/tasks/queue/all");
    const pollData = () => apiOk<PollDataJson[]>("GET", "/api/tasks/queue/polldata/all");
    // Its task `mine` goes to a domain the caller gave it, the other to the run's own random domain.
    const run = await testRun({ name: "wt_listed", taskToDomain: { wt_listed_mine: "wt-own" } });
    const domain = String(run.tasks[0]!["domain"]);
    expect(domain).toMatch(/^[0-9a-f-]{36}$/);
    const own = `${domain}:wt_listed_work`;
    // Someone standing in for a worker takes the task from the run's domain (a poll of it is poll data).
    const [task] = await eventually(() => poll("wt_listed_work", { domain, workerid: "wt-stand-in" }), (tasks) => tasks.length === 1, "the run's task to poll");
    expect((await report(task!, "COMPLETED")).status).toBe(200);
    await eventually(queues, (sizes) => sizes[own] === 0 && sizes["wt-own:wt_listed_mine"] === 1, "both queues listed");
    await eventually(pollData, (polls) => polls.some((entry) => entry.queueName === "wt_listed_work" && entry.domain === domain && entry.workerId === "wt-stand-in"), "the stand-in's poll listed");

    await apiOk("DELETE", `/api/workflow/${run.workflowId}`);
    await eventually(queues, (sizes) => !(own in sizes), "the run's own queue delisted");
    await eventually(pollData, (polls) => !polls.some((entry) => entry.domain === domain), "the run's domain gone from the poll data");
    // The domain its caller gave a task is a real one: listed still (its task, canceled, left it).
    expect((await queues())["wt-own:wt_listed_mine"]).toBe(0);

    // Retried, it queues its canceled task again in the caller's domain, and a rerun puts its first back in its own: listed again.
    await apiOk("POST", `/api/workflow/${run.workflowId}/rerun`, {});
    await eventually(queues, (sizes) => sizes[own] === 1, "the run's own queue listed again");
    // Removed while it runs (terminated first), it takes its queue out again before it goes.
    expect((await api("DELETE", `/api/workflow/${run.workflowId}/remove`)).status).toBe(200);
    await eventually(queues, (sizes) => !(own in sizes), "the run's own queue delisted on its removal");
    expect((await queues())["wt-own:wt_listed_mine"]).toBe(0);
  });

  it("tries the delisting of its queues again until it is done: it is work its ending owes", async () => {
    await register({ name: "wt_delist_retry", tasks: [simple("work", "wt_delist_retry_work")] });
    const run = await testRun({ name: "wt_delist_retry" });
    const own = `${String(run.tasks[0]!["domain"])}:wt_delist_retry_work`;
    const queues = () => apiOk<Record<string, number>>("GET", "/api/tasks/queue/all");
    await eventually(queues, (sizes) => sizes[own] === 1, "the run's queue listed");
    const { delist } = TaskQueue.prototype;
    let calls = 0;
    TaskQueue.prototype.delist = async function (this: TaskQueue, workflowId: string) {
      calls++;
      if (calls === 1) throw new Error("D1 unreachable");
      return delist.call(this, workflowId);
    };
    try {
      await apiOk("DELETE", `/api/workflow/${run.workflowId}`);
      await eventually(queues, (sizes) => !(own in sizes), "the run's queue delisted on the retry", 10_000);
    } finally {
      TaskQueue.prototype.delist = delist;
    }
    expect(calls).toBeGreaterThanOrEqual(2);
    expect((await api("DELETE", `/api/workflow/${run.workflowId}/remove`)).status).toBe(200);
  });

  it("leaves an ordinary execution's queues listed, a domain its caller named * included, and writes nothing more for them", async () => {
    await register({ name: "wt_plain_listed", tasks: [simple("work", "wt_plain_listed_work")] });
    const written: string[] = [];
    const { setMeta } = ExecutionStore.prototype;
    ExecutionStore.prototype.setMeta = function (this: ExecutionStore, key: string, value: string) {
      if (key.startsWith("testQueue:")) written.push(key);
      return setMeta.call(this, key, value);
    };
    const queues = () => apiOk<Record<string, number>>("GET", "/api/tasks/queue/all");
    try {
      const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "wt_plain_listed", taskToDomain: { "*": "wt-real" } });
      await eventually(queues, (sizes) => sizes["wt-real:wt_plain_listed_work"] === 1, "its queue listed");
      await apiOk("DELETE", `/api/workflow/${workflowId}`);
      await eventually(queues, (sizes) => sizes["wt-real:wt_plain_listed_work"] === 0, "its task taken out of its queue");
      expect((await api("DELETE", `/api/workflow/${workflowId}/remove`)).status).toBe(200);
    } finally {
      ExecutionStore.prototype.setMeta = setMeta;
    }
    expect(written).toEqual([]);
    expect((await queues())["wt-real:wt_plain_listed_work"]).toBe(0);
  });

  it("takes the queues its failure workflow and its START_WORKFLOW's workflow use in its domain out of queue/all when they end (not one given its own)", async () => {
    // As Conductor's, they are no test runs but take the run's taskToDomain, so their SIMPLE tasks wait in its domain too.
    await register({ name: "wt_fw", tasks: [simple("fwork", "wt_fw_work")] });
    await register({ name: "wt_started", tasks: [simple("swork", "wt_started_work")] });
    const kick = (ref: string, request: JsonObject): JsonObject => ({ name: ref, taskReferenceName: ref, type: "START_WORKFLOW", inputParameters: { startWorkflow: request } });
    await register({
      name: "wt_starter",
      failureWorkflow: "wt_fw",
      tasks: [kick("kick", { name: "wt_started" }), kick("kick_own", { name: "wt_started", taskToDomain: { "*": "wt-started-own" } }), simple("work", "wt_starter_work")],
    });
    const run = await testRun({ name: "wt_starter", taskRefToMockOutput: { work: [{ status: "FAILED", output: {} }] } });
    expect(run.status).toBe("FAILED");
    const domain = String((run["taskToDomain"] as Record<string, string>)["*"]);
    const started = [String(run.output["conductor.failure_workflow"]), String(run.tasks[0]!.outputData["workflowId"]), String(run.tasks[1]!.outputData["workflowId"])];
    const [failureQueue, startedQueue] = [`${domain}:wt_fw_work`, `${domain}:wt_started_work`];
    const queues = () => apiOk<Record<string, number>>("GET", "/api/tasks/queue/all");
    await eventually(queues, (sizes) => sizes[failureQueue] === 1 && sizes[startedQueue] === 1 && sizes["wt-started-own:wt_started_work"] === 1, "their tasks queued");
    for (const workflowId of started) await apiOk("DELETE", `/api/workflow/${workflowId}`);
    await eventually(queues, (sizes) => !(failureQueue in sizes) && !(startedQueue in sizes), "their queues in the run's domain delisted");
    // The domain its START_WORKFLOW gave the other one is a real one: listed still.
    expect((await queues())["wt-started-own:wt_started_work"]).toBe(0);
    for (const workflowId of [run.workflowId, ...started]) expect((await api("DELETE", `/api/workflow/${workflowId}/remove`)).status).toBe(200);
  });

  it("answers a synchronous test run at once at an unmocked WAIT whose time is set, as at a worker's task, rather than waiting it out", async () => {
    await register({ name: "wt_wait_unmocked", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: { duration: "1 hour" } }, simple("work")] });
    const answer = await apiOk<WorkflowJson & { signalTimeout: boolean }>("POST", "/api/workflow/test/sync?waitForSeconds=5", { name: "wt_wait_unmocked", taskRefToMockOutput: {} });
    expect(answer).toMatchObject({ status: "RUNNING", signalTimeout: false });
    expect(answer.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["hold", "IN_PROGRESS"]]);
  });

  it("mocks WAIT tasks too, and shows a mock's executionTime and queueWaitTime in the task's times", async () => {
    await register({ name: "wt_wait", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: { duration: "1 hour" } }, simple("work")] });
    const run = await testRun({ name: "wt_wait", taskRefToMockOutput: { hold: [{ output: {} }], work: [{ output: { done: true }, executionTime: 1500, queueWaitTime: 400 }] } });
    expect(run.status).toBe("COMPLETED");
    const work = run.tasks[1] as TaskJson & { scheduledTime: number; startTime: number; endTime: number };
    expect(work.endTime - work.startTime).toBe(1500);
    expect(work.startTime - work.scheduledTime).toBe(400);
  });

  it("runs a SUB_WORKFLOW's child as a test run too, answered by subWorkflowTestRequest, and follows it to its end", async () => {
    await register({ name: "wt_child", tasks: [simple("inner", "wt_inner")], outputParameters: { inner: "${inner.output.value}" } });
    await register({
      name: "wt_parent",
      tasks: [{ name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", inputParameters: {}, subWorkflowParam: { name: "wt_child", version: 1 } }, simple("after")],
      outputParameters: { fromChild: "${child.output.inner}", after: "${after.output.value}" },
    });
    const run = await testRun({
      name: "wt_parent",
      taskRefToMockOutput: { after: [{ output: { value: "parent" } }] },
      subWorkflowTestRequest: { child: { name: "wt_child", taskRefToMockOutput: { inner: [{ output: { value: "child" } }] } } },
    });
    expect(run).toMatchObject({ status: "COMPLETED", output: { fromChild: "child", after: "parent" } });
    const childId = String(run.tasks[0]!["subWorkflowId"]);
    const child = await waitFor(childId, ["COMPLETED"]);
    expect(child.tasks[0]!["domain"]).toBe((run["taskToDomain"] as Record<string, string>)["*"]);

    // A child with no plan of its own is a test run with no mocks: its worker task waits, and the answer comes at once.
    const started = Date.now();
    const waiting = await testRun({ name: "wt_parent" });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(statuses(waiting)).toEqual(["child:IN_PROGRESS"]);
    // The child's task waits in the run's own domain, which the child shares: its ending (terminated with its parent)
    // takes that queue out of the listings too.
    const shared = `${String((waiting["taskToDomain"] as Record<string, string>)["*"])}:wt_inner`;
    const queues = () => apiOk<Record<string, number>>("GET", "/api/tasks/queue/all");
    await eventually(queues, (sizes) => sizes[shared] === 1, "the child's task queued in the run's domain");
    await apiOk("DELETE", `/api/workflow/${waiting.workflowId}`);
    await waitFor(String(waiting.tasks[0]!["subWorkflowId"]), ["TERMINATED"]);
    await eventually(queues, (sizes) => !(shared in sizes), "the child's queue delisted");
  });

  it("keys mocks of a loop's task by its reference name (every iteration) or by an iteration's own (ping__2)", async () => {
    const loop = { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", inputParameters: {}, loopCondition: "$.loop['iteration'] < 3", loopOver: [simple("ping")] };
    await register({ name: "wt_loop", tasks: [loop] });
    const run = await testRun({ name: "wt_loop", taskRefToMockOutput: { ping__2: [{ output: { n: "second" } }], ping: [{ output: { n: "any" } }, { output: { n: "any" } }] } });
    expect(run.status).toBe("COMPLETED");
    expect(run.tasks.filter((task) => task.referenceTaskName.startsWith("ping")).map((task) => `${task.referenceTaskName}=${String(task.outputData["n"])}`)).toEqual(["ping__1=any", "ping__2=second", "ping__3=any"]);
  });

  it("runs a WHILE as it always does, not mocked (the DO_WHILE's loop): its condition asked first, its loop's tasks mocked", async () => {
    const loop = { name: "loop", taskReferenceName: "loop", type: "WHILE", inputParameters: { times: "${workflow.input.times}" }, loopCondition: "$.loop['iteration'] < $.times", loopOver: [simple("ping")] };
    await register({ name: "wt_while", tasks: [loop] });
    // A mock given for the WHILE itself is not used, as Conductor does not use one of a DO_WHILE.
    const run = await testRun({ name: "wt_while", input: { times: 2 }, taskRefToMockOutput: { loop: [{ output: { fake: true } }], ping: [{ output: { n: 1 } }, { output: { n: 2 } }] } });
    expect(run.status).toBe("COMPLETED");
    expect(run.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["loop:COMPLETED", "ping__1:COMPLETED", "ping__2:COMPLETED"]);
    const none = await testRun({ name: "wt_while", input: { times: 0 }, taskRefToMockOutput: { ping: [{ output: { n: 1 } }] } });
    expect(none.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["loop:COMPLETED"]);
    expect(none.tasks[0]!.outputData).toEqual({ iteration: 0 });
  });

  it("tests an inline definition, and a workflow named \"test\" is still started with POST /api/workflow", async () => {
    const inline = { name: "wt_inline", version: 1, tasks: [simple("a")], outputParameters: { a: "${a.output.a}" } };
    expect(await testRun({ workflowDef: inline, taskRefToMockOutput: { a: [{ output: { a: 1 } }] } })).toMatchObject({ status: "COMPLETED", output: { a: 1 } });
    await register({ name: "test", tasks: [counted("a", "wt-named-test")] });
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "test" });
    await waitFor(workflowId, ["COMPLETED"]);
    expect(await hits("wt-named-test")).toBe(1);
  });

  it("takes an idempotencyKey as a start does (Orkes documents it on this endpoint): a later start with the key finds the test run", async () => {
    await register({ name: "wt_keyed", tasks: [simple("lookup", "wt_keyed_lookup")] });
    const run = await testRun({ name: "wt_keyed", idempotencyKey: "wt-key-1", taskRefToMockOutput: { lookup: [{ status: "COMPLETED", output: {} }] } });
    expect(run.status).toBe("COMPLETED");
    // The key is the workflow name's, whoever claimed it: a real start with it is the test run (RETURN_EXISTING).
    const started = await api("POST", "/api/workflow", { name: "wt_keyed", idempotencyKey: "wt-key-1" });
    expect(await started.text()).toBe(run.workflowId);
    expect((await testRun({ name: "wt_keyed", idempotencyKey: "wt-key-1", taskRefToMockOutput: {} })).workflowId).toBe(run.workflowId);
  });

  it("refuses a request it cannot run with a 400 naming the field, and runs nothing", async () => {
    await register({ name: "wt_refused", tasks: [counted("a", "wt-refused")] });
    expect(await validationPaths(await api("POST", "/api/workflow/test", { name: "wt_refused", taskRefToMockOutput: { a: [{ status: "DONE" }] } }))).toEqual(["taskRefToMockOutput.a[0].status"]);
    expect(await validationPaths(await api("POST", "/api/workflow/test", { name: "wt_refused", taskRefToMockOutput: { a: { status: "COMPLETED" } } }))).toEqual(["taskRefToMockOutput.a"]);
    expect(await validationPaths(await api("POST", "/api/workflow/test", { name: "wt_refused", taskRefToMockOutput: { a: [{ executionTime: -1 }] } }))).toEqual(["taskRefToMockOutput.a[0].executionTime"]);
    const nested = { name: "wt_refused", subWorkflowTestRequest: { child: { taskRefToMockOutput: { inner: [{ status: 3 }] } } } };
    expect(await validationPaths(await api("POST", "/api/workflow/test", nested))).toEqual(["subWorkflowTestRequest.child.taskRefToMockOutput.inner[0].status"]);
    let deep: JsonObject = {};
    for (let level = 0; level < 12; level++) deep = { subWorkflowTestRequest: { child: deep } };
    expect((await api("POST", "/api/workflow/test", { name: "wt_refused", ...deep })).status).toBe(400);
    expect(await validationPaths(await api("POST", "/api/workflow/test", {}))).toEqual(["name"]);
    expect((await api("POST", "/api/workflow/test", { name: "wt_nowhere" })).status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await hits("wt-refused")).toBe(0);
  });

  it("needs the right to start the workflow its body names", async () => {
    await register({ name: "wt_allowed", tasks: [simple("a")] });
    await register({ name: "wt_other", tasks: [counted("a", "wt-other")] });
    const user = await createUser("wt-tester", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:wt_allowed" }] });
    const allowed = await call("POST", "/api/workflow/test", orkes(user.token), { name: "wt_allowed", taskRefToMockOutput: { a: [{}] } });
    expect(allowed.status).toBe(200);
    expect(((await allowed.json()) as WorkflowJson).status).toBe("COMPLETED");
    expect((await call("POST", "/api/workflow/test", orkes(user.token), { name: "wt_other" })).status).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await hits("wt-other")).toBe(0);
  });
});
