import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject, JsonValue } from "../../src/engine/model";
import dynamicForkExample from "../fixtures/published/DynamicForkExample.json";
import dynamicForkSimple from "../fixtures/published/dynamic_fork_simple.json";
import execPlanInline from "../fixtures/published/exec_plan_inline_task.json";
import getAllStars from "../fixtures/published/get_all_stars_task.json";
import imageResizeFork from "../fixtures/published/image_multiple_convert_resize_fork.json";
import jqCleanupStars from "../fixtures/published/jq_cleanup_stars_task.json";
import jqSimple from "../fixtures/published/jq_simple_example_task.json";
import joinIgnoringOneFork from "../fixtures/published/join_ignoring_one_fork_tasks.json";
import longRunningLoop from "../fixtures/published/long_running_loop_task.json";
import parentWorkflow from "../fixtures/published/parent_wf.json";
import setCorrelationId from "../fixtures/published/Set_Correlation_Id_Workflow.json";
import switchJavascript from "../fixtures/published/switch_javascript_task.json";
import terminateTask from "../fixtures/published/terminate_task.json";
import welcomeUser from "../fixtures/published/Welcome_User_Workflow.json";
import { api, apiOk, eventually, getWorkflow, startWorkflow, statusByRef, target, waitFor, type TaskJson } from "./helpers";
import { answering, registerAll, taskNamed, withUri, work } from "./published-helpers";

// The examples of Conductor OSS's reference pages for its operators and system tasks (test/fixtures/published,
// SOURCES.md says where each is from), registered as published through the API (a task snippet inside the smallest
// workflow that holds it; only hosts rewritten to the test's target server) and run, comparing what each task was
// given and produced, and the workflow's output, with the page's published output or, where it shows none, with what
// Conductor's mappers and system tasks produce.

/** A docs page's task snippet(s) in the smallest workflow registering them: the fields Conductor's validation asks for. */
function workflowOf(name: string, ...tasks: unknown[]): JsonObject {
  return { name, version: 1, schemaVersion: 2, ownerEmail: "example@email.com", tasks: tasks as JsonValue[] };
}

/** An HTTP task's response body (Conductor's `response.body`). */
const bodyOf = (task: TaskJson): JsonValue => (task.outputData["response"] as JsonObject)["body"] ?? null;

describe("Dynamic Fork (operators/dynamic-fork-task.md)", () => {
  it("Running different tasks: INLINE, HTTP and SIMPLE forks, each given its dynamicTasksInput (none for a reference it lacks), joined", async () => {
    await registerAll(withUri(dynamicForkExample, "https://randomuser.me/api/", answering({ results: [{ gender: "female" }] })));
    const workflowId = await startWorkflow("DynamicForkExample");
    // dynamicTasksInput names task3, which no fork is: simple_ref is given nothing.
    const simple = await work("task_38", { resized: true });
    expect({ ref: simple.referenceTaskName, input: simple.inputData }).toEqual({ ref: "simple_ref", input: {} });

    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(statusByRef(workflow)).toEqual({ fork_join_dynamic_ref: "COMPLETED", task1: "COMPLETED", task2: "COMPLETED", simple_ref: "COMPLETED", join_ref: "COMPLETED" });
    expect(taskNamed(workflow, "fork_join_dynamic_ref")).toMatchObject({ taskType: "FORK", inputData: { forkedTasks: ["task1", "task2", "simple_ref"] } });
    // The INLINE fork: its own inputParameters with its input merged in.
    expect(taskNamed(workflow, "task1")).toMatchObject({ inputData: { evaluatorType: "javascript", input: "one" }, outputData: { result: "one" } });
    expect(bodyOf(taskNamed(workflow, "task2"))).toEqual({ results: [{ gender: "female" }] });
    const join = taskNamed(workflow, "join_ref");
    expect(Object.keys(join.outputData).sort()).toEqual(["simple_ref", "task1", "task2"]);
    expect(join.outputData["simple_ref"]).toEqual({ resized: true });
    // outputParameters {}: the workflow's output is its last task's, the JOIN's.
    expect(workflow.output).toEqual(join.outputData);
  });

  it("Running the same task — Worker task: forkTaskName/forkTaskType SIMPLE, one fork per forkTaskInputs item, _name_i references", async () => {
    await registerAll(imageResizeFork);
    const workflowId = await startWorkflow("image_multiple_convert_resize_fork");
    const forks = [await work("fork_task", { location: "out1" }), await work("fork_task", { location: "out2" })];
    expect(forks.map((task) => ({ ref: task.referenceTaskName, input: task.inputData }))).toEqual([
      { ref: "_fork_task_0", input: { image: "url1", location: "location_url", width: 100, height: 200, __index: 0 } },
      { ref: "_fork_task_1", input: { image: "url2", location: "location_url", width: 300, height: 400, __index: 1 } },
    ]);
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(taskNamed(workflow, "image_multiple_convert_resize_join_ref").outputData).toEqual({ _fork_task_0: { location: "out1" }, _fork_task_1: { location: "out2" } });
    // The page's outputParameters name join_task_ref, which the workflow has none of: null, as Conductor's.
    expect(workflow.output).toEqual({ output: null });
  });

  it("Simplified configuration: forkTaskName HTTP without a type, each item an HTTP request given at the top level", async () => {
    await registerAll(withUri(dynamicForkSimple, "https://orkes-api-tester.orkesconductor.com/api", answering({ randomInt: 4512 })));
    const workflow = await waitFor(await startWorkflow("dynamic_fork_simple"), ["COMPLETED"]);
    expect(Object.keys(statusByRef(workflow))).toEqual(["dynamic_fork_http_ref", "_HTTP_0", "_HTTP_1", "dynamic_fork_http_join_ref"]);
    expect(Object.values(statusByRef(workflow)).every((status) => status === "COMPLETED")).toBe(true);
    for (const ref of ["_HTTP_0", "_HTTP_1"]) {
      expect(taskNamed(workflow, ref)).toMatchObject({ taskType: "HTTP", inputData: { method: "GET", accept: "application/json", encode: true } });
      expect(bodyOf(taskNamed(workflow, ref))).toEqual({ randomInt: 4512 });
    }
  });
});

describe("JSON JQ Transform (systemtasks/json-jq-transform-task.md)", () => {
  it("Simple example: the page's output exactly, result and resultList", async () => {
    await registerAll(workflowOf("jq_simple_example", jqSimple));
    const workflow = await waitFor(await startWorkflow("jq_simple_example"), ["COMPLETED"]);
    expect(taskNamed(workflow, "my_jq_example_task").outputData).toEqual({ result: { key3: ["a", "b", "c", "d"] }, resultList: [{ key3: ["a", "b", "c", "d"] }] });
  });

  it("Simplifying data, after Do While's paging loop: ${workflow.input.cutoff_date} inside the filter, the last page's body as starlist", async () => {
    const stargazers: JsonObject[] = [
      { starred_at: "2016-12-14T19:55:46Z", user: { login: "lzehrung", id: 924226, node_id: "MDQ6VXNlcjkyNDIyNg==", type: "User", site_admin: false } },
      { starred_at: "2021-03-01T08:00:00Z", user: { login: "later", id: 7, type: "User", site_admin: false } },
    ];
    // The loop's "4000" stargazers (40 pages) made "200" (2 pages); GitHub's page URL the target server's.
    const loop = withUri(JSON.parse(JSON.stringify(getAllStars).replace('"4000"', '"200"')), "https://api.github.com/repos/ntflix/conductor/stargazers?", `${answering(stargazers)}&`);
    await registerAll(workflowOf("stargazers", loop, jqCleanupStars));
    const workflow = await waitFor(await startWorkflow("stargazers", { cutoff_date: "2020-01-01", gh_token: "t0k" }), ["COMPLETED"]);

    // Math.ceil("200"/100) = 2 iterations, each page's number from ${get_all_stars_loop_ref.output.iteration}.
    expect(Object.keys(statusByRef(workflow))).toEqual(["get_all_stars_loop_ref", "hundred_stargazers_ref__1", "hundred_stargazers_ref__2", "jq_cleanup_stars_ref"]);
    for (const page of [1, 2]) {
      const request = taskNamed(workflow, `hundred_stargazers_ref__${page}`).inputData;
      expect(request["counter"]).toBe(page);
      expect((request["http_request"] as JsonObject)["uri"]).toMatch(new RegExp(`&page=${page}&per_page=100$`));
      expect((request["http_request"] as JsonObject)["headers"]).toEqual({ Authorization: "token t0k", Accept: "application/vnd.github.v3.star+json" });
    }
    expect(taskNamed(workflow, "get_all_stars_loop_ref").outputData["iteration"]).toBe(2);
    const cleanup = taskNamed(workflow, "jq_cleanup_stars_ref");
    expect(cleanup.inputData["queryExpression"]).toBe('[.starlist[] | select (.starred_at > "2020-01-01") |{occurred_at:.starred_at, member: {github:  .user.login}}]');
    // The page's format: occurred_at and member.github, only those starred after the cutoff.
    expect(cleanup.outputData["result"]).toEqual([{ occurred_at: "2021-03-01T08:00:00Z", member: { github: "later" } }]);
  });
});

describe("Do While (operators/do-while-task.md)", () => {
  it("Example with cleanup: keepLastN 5 keeps only the last five iterations in the output", async () => {
    // The page's 1000 iterations made 7.
    await registerAll(workflowOf("long_running_loop", JSON.parse(JSON.stringify(longRunningLoop).replace("< 1000", "< 7"))));
    const workflowId = await startWorkflow("long_running_loop");
    for (let iteration = 1; iteration <= 7; iteration++) expect((await work("process_item", { item: iteration })).referenceTaskName).toBe(`process_item_ref__${iteration}`);
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    const output = taskNamed(workflow, "long_running_loop_ref").outputData;
    expect(output).toEqual({ iteration: 7, ...Object.fromEntries([3, 4, 5, 6, 7].map((n) => [String(n), { process_item_ref: { item: n } }])) });
  });
});

describe("Switch (operators/switch-task.md)", () => {
  it("Using javascript, evaluatorType graaljs: \"2\" takes tomatoes; \"1\" answers apple, no case of that name (the cases say apples): the empty default", async () => {
    await registerAll(workflowOf("switch_javascript", switchJavascript));
    const tomatoes = await waitFor(await startWorkflow("switch_javascript", { num: "2" }), ["COMPLETED"]);
    expect(statusByRef(tomatoes)).toEqual({ switch_ref: "COMPLETED", tomatoes_ref: "COMPLETED" });
    expect(taskNamed(tomatoes, "switch_ref").outputData).toEqual({ evaluationResult: ["tomatoes"], selectedCase: "tomatoes" });
    expect(tomatoes["variables"]).toEqual({ fruit: "tomatoes" });

    const apple = await waitFor(await startWorkflow("switch_javascript", { num: "1" }), ["COMPLETED"]);
    expect(statusByRef(apple)).toEqual({ switch_ref: "COMPLETED" });
    expect(taskNamed(apple, "switch_ref").outputData).toEqual({ evaluationResult: ["apple"], selectedCase: "apple" });
    // A number matches no text case of the script's switch: undefined, Conductor's case "null".
    const none = await waitFor(await startWorkflow("switch_javascript", { num: 3 }), ["COMPLETED"]);
    expect(taskNamed(none, "switch_ref").outputData).toEqual({ evaluationResult: ["null"], selectedCase: "null" });
  });
});

describe("Set Variable (operators/set-variable-task.md)", () => {
  it("Welcome_User_Workflow, published without version or ownerEmail: both workers given the variable", async () => {
    await apiOk("POST", "/api/metadata/workflow", welcomeUser);
    const workflowId = await startWorkflow("Welcome_User_Workflow", { userName: "Ada" });
    for (const taskType of ["greet_user", "send_reminder_email"]) expect((await work(taskType)).inputData).toEqual({ var_name: "Ada" });
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(workflow["variables"]).toEqual({ name: "Ada" });
    expect(workflow["workflowVersion"]).toBe(1);
  });
});

describe("Terminate (operators/terminate-task.md)", () => {
  it("Basic Example: COMPLETED with ${task0.output} as the workflow's output; the task after it never runs", async () => {
    const task0 = { name: "task0", taskReferenceName: "task0", type: "SIMPLE" };
    await registerAll(workflowOf("terminate_basic", task0, terminateTask, { name: "never", taskReferenceName: "never", type: "SIMPLE" }));
    const workflowId = await startWorkflow("terminate_basic");
    await work("task0", { shipped: "fedex" });
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(statusByRef(workflow)).toEqual({ task0: "COMPLETED", terminate0: "COMPLETED" });
    // The page's table says {output: workflowOutput}; Conductor's Terminate (getInputFromParam) spreads a map's fields
    // (only other values go under output), and so do we.
    expect(taskNamed(workflow, "terminate0").outputData).toEqual({ shipped: "fedex" });
    expect(workflow.output).toEqual({ shipped: "fedex" });
  });
});

describe("Sub Workflow (operators/sub-workflow-task.md)", () => {
  it("Static inline definition: runs the embedded WorkflowDef unregistered, its output and subWorkflowId the task's", async () => {
    await registerAll(workflowOf("static_inline_parent", execPlanInline));
    const workflowId = await startWorkflow("static_inline_parent", { threshold: 7 });
    expect((await work("some_task", { result: 42 })).inputData).toEqual({ p1: 7 });
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    const exec = taskNamed(workflow, "exec");
    expect(exec.outputData).toEqual({ result: 42, subWorkflowId: exec["subWorkflowId"] });
    const child = await getWorkflow(String(exec["subWorkflowId"]));
    expect({ name: child["workflowName"], input: child.input, output: child.output }).toEqual({ name: "my_inline_workflow", input: { threshold: 7 }, output: { result: 42 } });
  });

  it("Dynamic inline definition: parent_wf runs the WorkflowDef its planner's output holds", async () => {
    await registerAll(parentWorkflow);
    const workflowId = await startWorkflow("parent_wf", { goal: "ship", threshold: 3, iterations: 2 });
    const plan = { name: "dynamic_plan_wf", version: 1, schemaVersion: 2, tasks: [{ name: "plan_step", taskReferenceName: "s1", type: "SIMPLE", inputParameters: { t: "${workflow.input.threshold}", n: "${workflow.input.iterations}" } }], outputParameters: { done: "${s1.output.done}" } };
    expect((await work("planner_task", { workflow_def: plan })).inputData).toEqual({ goal: "ship" });
    expect((await work("plan_step", { done: true })).inputData).toEqual({ t: 3, n: 2 });
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    const exec = taskNamed(workflow, "exec");
    expect(exec.outputData).toEqual({ done: true, subWorkflowId: exec["subWorkflowId"] });
    expect((await getWorkflow(String(exec["subWorkflowId"])))["workflowName"]).toBe("dynamic_plan_wf");
  });
});

describe("Wait (systemtasks/wait-task.md)", () => {
  it("duration 10m20s waits 620 seconds; until 2022-12-31 11:59, long past, completes at once", async () => {
    const waitOf = (inputParameters: JsonObject) => ({ name: "wait", taskReferenceName: "wait_ref", inputParameters, type: "WAIT" });
    await registerAll(workflowOf("wait_duration", waitOf({ duration: "10m20s" })), workflowOf("wait_until", waitOf({ until: "2022-12-31 11:59" })));
    const waiting = await getWorkflow(await startWorkflow("wait_duration"));
    expect(taskNamed(waiting, "wait_ref")).toMatchObject({ status: "IN_PROGRESS", callbackAfterSeconds: 620 });
    const past = await waitFor(await startWorkflow("wait_until"), ["COMPLETED"]);
    expect(statusByRef(past)).toEqual({ wait_ref: "COMPLETED" });
  });
});

describe("Wait For Webhook (systemtasks/wait-for-webhook-task.md)", () => {
  it("End-to-end example, in its order: the webhook saved before its workflow is registered, the HMAC_BASED event (base64 key bytes) starts wf-smoke", async () => {
    // 1. The webhook first: wf-smoke is not registered yet, which Conductor does not ask of a save.
    const saved = await api("POST", "/api/metadata/webhook", {
      name: "smoke-hook",
      verifier: "HMAC_BASED",
      headerKey: "X-Sig",
      secretKey: "X-Sig",
      secretValue: "c2VrcmV0LWtleQ==",
      sourcePlatform: "smoke",
      workflowsToStart: { "wf-smoke": 1 },
    });
    expect(saved.status).toBe(200);
    const webhook = (await saved.json()) as { id: string };
    // 2. The workflow, as the page registers it (no ownerEmail).
    const echo = { name: "echo", taskReferenceName: "echo_ref", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "function e(){return $.payload}e();" } };
    await apiOk("POST", "/api/metadata/workflow", { name: "wf-smoke", version: 1, tasks: [echo], schemaVersion: 2, timeoutSeconds: 60 });
    // 3. The event, signed as the page's openssl line signs it: base64 of the HMAC-SHA256 under the key "sekret-key".
    const body = '{"event":"smoke-fired"}';
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode("sekret-key"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const signature = btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)))));
    const delivered = await SELF.fetch(`http://localhost:8080/api/webhook/${webhook.id}`, { method: "POST", headers: { "Content-Type": "application/json", "X-Sig": signature }, body });
    expect(delivered.status).toBe(200);
    const started = ((await delivered.json()) as { startedWorkflows: Array<{ name: string; workflowId: string }> }).startedWorkflows;
    expect(started.map((start) => start.name)).toEqual(["wf-smoke"]);
    // The event is the started workflow's input; the INLINE reads $.payload, an input it is not given: null.
    const workflow = await waitFor(started[0]!.workflowId, ["COMPLETED"]);
    expect(workflow.input).toEqual({ event: "smoke-fired" });
    expect(taskNamed(workflow, "echo_ref").outputData).toEqual({ result: null });
  });
});

describe("Human (systemtasks/human-task.md)", () => {
  it("Completing the Human task: the body of POST /api/queue/update/{workflowId}/{taskRefName}/COMPLETED is its output, the page's exactly", async () => {
    const human = { name: "human", taskReferenceName: "waiting_around_ref", inputParameters: {}, type: "HUMAN" };
    await registerAll(workflowOf("human_gate", human));
    const workflowId = await startWorkflow("human_gate");
    expect(taskNamed(await getWorkflow(workflowId), "waiting_around_ref").status).toBe("IN_PROGRESS");
    const updated = await api("POST", `/api/queue/update/${workflowId}/waiting_around_ref/COMPLETED`, { data_key: "somedatatoWait1", data_key2: "somedatatoWAit2" });
    expect(updated.status).toBe(200);
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(taskNamed(workflow, "waiting_around_ref").outputData).toEqual({ data_key: "somedatatoWait1", data_key2: "somedatatoWAit2" });
  });
});

describe("Event (systemtasks/event-task.md)", () => {
  it("the conductor sink example: its output the page's table (the workflow, its correlation id, the sink, asyncComplete), the event named conductor:<workflow>:<queue>", async () => {
    // The page's snippet gives type, sink and asyncComplete; a name, a reference and an input make it a task.
    const event = { name: "notify", taskReferenceName: "notify_ref", inputParameters: { orderId: "${workflow.input.orderId}" }, type: "EVENT", sink: "conductor:internal_event_name", asyncComplete: false };
    await registerAll(workflowOf("event_sink", event));
    const workflowId = await startWorkflow("event_sink", { orderId: "o-1" }, "?correlationId=c-9");
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(taskNamed(workflow, "notify_ref").outputData).toEqual({
      orderId: "o-1",
      sink: "conductor:internal_event_name",
      asyncComplete: false,
      workflowInstanceId: workflowId,
      workflowType: "event_sink",
      workflowVersion: 1,
      correlationId: "c-9",
      event_produced: "conductor:event_sink:internal_event_name",
    });
  });
});

describe("Join (operators/join-task.md)", () => {
  it("Ignoring one fork: the JOIN on email and sms outputs the page's map; the workflow ends only once http_notification has too", async () => {
    await registerAll(workflowOf("notifications", ...joinIgnoringOneFork));
    const workflowId = await startWorkflow("notifications");
    await work("email_notification", { email_sent_at: "2021-11-06T07:37:17+0000", email_sent_to: "test@example.com" });
    await work("sms_notification", { sms_sent_at: "2021-11-06T07:37:17+0129", sms_sent_to: "+1-425-555-0189" });
    const joined = await eventually(() => getWorkflow(workflowId), (workflow) => taskNamed(workflow, "notification_join_ref").status === "COMPLETED", "the join, done without http_notification");
    expect(taskNamed(joined, "notification_join_ref").outputData).toEqual({
      email_notification_ref: { email_sent_at: "2021-11-06T07:37:17+0000", email_sent_to: "test@example.com" },
      sms_notification_ref: { sms_sent_at: "2021-11-06T07:37:17+0129", sms_sent_to: "+1-425-555-0189" },
    });
    // Conductor's decider completes a workflow only when every task it holds has ended.
    expect(joined.status).toBe("RUNNING");
    await work("http_notification", { delivered: true });
    expect((await waitFor(workflowId, ["COMPLETED"])).status).toBe("COMPLETED");
  });
});

describe("Set Correlation ID (operators/set-correlation-id-task.md)", () => {
  it("Set_Correlation_Id_Workflow (workflowStatusListenerEnabled, no listener configured): the id the worker parsed becomes the workflow's, found by it", async () => {
    await registerAll(setCorrelationId);
    const workflowId = await startWorkflow("Set_Correlation_Id_Workflow", { s3Path: "s3://inbox/order.xml" });
    expect((await work("convert_xml", { correlationId: "order-77", data: { sku: "A1" } })).inputData).toEqual({ s3Path: "s3://inbox/order.xml" });
    expect((await work("process_data")).inputData).toEqual({ saved_name: { sku: "A1" } });
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(workflow["correlationId"]).toBe("order-77");
    const found = await eventually(() => apiOk<Array<{ workflowId: string }>>("GET", "/api/workflow/Set_Correlation_Id_Workflow/correlated/order-77?includeClosed=true"), (rows) => rows.length === 1, "the workflow under its new correlation id");
    expect(found.map((row) => row.workflowId)).toEqual([workflowId]);
  });
});
