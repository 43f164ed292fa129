import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, type TaskJson, type WorkflowJson } from "./helpers";

/** A FORK_JOIN_DYNAMIC of the tasks `tasks` gives (their inputs from `inputs`), and its JOIN. */
function dynamicFork(ref: string, tasks: string, inputs: string | JsonObject): JsonObject[] {
  return [
    { name: ref, taskReferenceName: ref, type: "FORK_JOIN_DYNAMIC", inputParameters: { tasks, inputs }, dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs" },
    { name: `${ref}_join`, taskReferenceName: `${ref}_join`, type: "JOIN" },
  ];
}

/**
 * An INLINE task `prepare` listing, for a dynamic fork, one HTTP task `call_<key>` per key that `keys` (an expression)
 * gives, each GETting `uri` with `key=<key>` added to its query.
 */
function prepareCalls(keys: string, uri: string): JsonObject {
  return {
    name: "prepare",
    taskReferenceName: "prepare",
    type: "INLINE",
    inputParameters: {
      evaluatorType: "javascript",
      keys,
      at: uri,
      expression:
        "({ tasks: $.keys.map((key) => ({ name: 'call', taskReferenceName: 'call_' + key, type: 'HTTP' })), inputs: Object.fromEntries($.keys.map((key) => ['call_' + key, { http_request: { uri: $.at + ($.at.includes('?') ? '&' : '?') + 'key=' + key, method: 'GET' } }])) })",
    },
  };
}

const refsAndStatuses = (workflow: WorkflowJson) => workflow.tasks.map((task) => `${task.referenceTaskName}:${task.status}`).sort();

describe("FORK_JOIN_DYNAMIC", () => {
  it("forks the HTTP calls a previous task listed, runs them side by side and joins their outputs", async () => {
    // Each call is held by the target until all three have arrived: run one after the other, they would not meet.
    const prepare = prepareCalls("${workflow.input.keys}", target("/meet/dynamic-fork?parties=3"));
    await register({
      name: "dynamic_meeting",
      tasks: [prepare, ...dynamicFork("fan", "${prepare.output.result.tasks}", "${prepare.output.result.inputs}")],
      outputParameters: { joined: "${fan_join.output}" },
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dynamic_meeting/1", { input: { keys: ["a", "b", "c"] } });
    expect(run.status, String(run.reasonForIncompletion)).toBe("COMPLETED");
    const joined = run.output["joined"] as Record<string, { response: { body: { met: boolean } } }>;
    expect(Object.keys(joined).sort()).toEqual(["call_a", "call_b", "call_c"]);
    expect(Object.values(joined).map((output) => output.response.body.met)).toEqual([true, true, true]);
    expect(await hits("dynamic-fork")).toBe(3);
    expect(refsAndStatuses(run)).toEqual(["call_a:COMPLETED", "call_b:COMPLETED", "call_c:COMPLETED", "fan:COMPLETED", "fan_join:COMPLETED", "prepare:COMPLETED"]);
    // What was forked shows on the tasks (Conductor's shape), not in the workflow's definition.
    const fork = run.tasks.find((task) => task.referenceTaskName === "fan")!;
    expect(fork.inputData["forkedTasks"]).toEqual(["call_a", "call_b", "call_c"]);
    expect(run.tasks.find((task) => task.referenceTaskName === "fan_join")!.inputData).toEqual({ joinOn: ["call_a", "call_b", "call_c"] });
    expect(run.tasks.find((task) => task.referenceTaskName === "call_b")!["workflowTask"]).toMatchObject({ taskReferenceName: "call_b", type: "HTTP" });
    expect(run["workflowDefinition"]).not.toHaveProperty("dynamicForks");

    // As the Java client writes it (every WorkflowTask's empty forkTasks given), with a JOIN naming tasks in its joinOn:
    // not read after a dynamic fork, so not checked against those empty forkTasks either (it was a 400, "not a task in
    // the branches of the FORK_JOIN").
    const [fork_, join] = dynamicFork("fan", "${prepare.output.result.tasks}", "${prepare.output.result.inputs}");
    await register({ name: "dynamic_meeting_java", tasks: [prepareCalls("${workflow.input.keys}", target("/count/dynamic-java")), { ...fork_, forkTasks: [] }, { ...join, forkTasks: [], joinOn: ["call_a", "elsewhere"] }], outputParameters: { joined: "${fan_join.output}" } });
    const java = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dynamic_meeting_java/1", { input: { keys: ["x"] } });
    expect(java.status, String(java.reasonForIncompletion)).toBe("COMPLETED");
    expect(Object.keys(java.output["joined"] as JsonObject)).toEqual(["call_x"]);
  });

  it("forks a sub workflow per entry of forkTaskInputs and waits for every child", async () => {
    await register({ name: "dynamic_child", tasks: [httpTask("child_call", { uri: target("/count/dynamic-child?n=${workflow.input.n}"), method: "GET" })], outputParameters: { n: "${workflow.input.n}", at: "${workflow.input.__index}" } });
    await register({
      name: "dynamic_children",
      tasks: [
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskWorkflow: "dynamic_child", forkTaskWorkflowVersion: "1", forkTaskInputs: "${workflow.input.items}" } },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
      ],
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dynamic_children/1", { input: { items: [{ n: 10 }, { n: 20 }] } });
    expect(run.status, String(run.reasonForIncompletion)).toBe("COMPLETED");
    expect(run.output).toMatchObject({ _fan_0: { n: 10, at: 0 }, _fan_1: { n: 20, at: 1 } });
    expect(await hits("dynamic-child")).toBe(2);
    expect(run.tasks.filter((task) => task["taskType"] === "SUB_WORKFLOW").map((task) => typeof task["subWorkflowId"])).toEqual(["string", "string"]);

    // Orkes' docs' example: entries holding `input` give the child the entry whole, as Conductor's, not `input` alone.
    await register({ name: "dynamic_child_in", tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP" }], outputParameters: { got: "${workflow.input}" } });
    await register({
      name: "dynamic_children_in",
      tasks: [
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskWorkflow: "dynamic_child_in", forkTaskWorkflowVersion: "1", forkTaskInputs: [{ input: "value1" }, { input: { a: 1 }, b: 2 }] } },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
      ],
    });
    const inRun = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dynamic_children_in/1", { input: {} });
    expect(inRun.status, String(inRun.reasonForIncompletion)).toBe("COMPLETED");
    const joined = inRun.output as Record<string, JsonObject>;
    expect([joined["_fan_0"]!["got"], joined["_fan_1"]!["got"]]).toEqual([{ input: "value1", __index: 0 }, { input: { a: 1 }, b: 2, __index: 1 }]);
  });

  it("keeps what it forked across an eviction: the forked tasks are completed by name, and the JOIN sees them all", async () => {
    const hold = (ref: string) => ({ name: "hold", taskReferenceName: ref, type: "WAIT" });
    await register({ name: "dynamic_evicted", tasks: dynamicFork("fan", "${workflow.input.tasks}", {}), outputParameters: { joined: "${fan_join.output}" } });
    const workflowId = await startWorkflow("dynamic_evicted", { tasks: [hold("h1"), hold("h2")] });
    const forked = await waitFor(workflowId, (workflow) => workflow.tasks.filter((task) => task.status === "IN_PROGRESS").length === 3);
    expect(refsAndStatuses(forked)).toEqual(["fan:COMPLETED", "fan_join:IN_PROGRESS", "h1:IN_PROGRESS", "h2:IN_PROGRESS"]);
    await abortAllDurableObjects();
    await apiOk<string>("POST", `/api/tasks/${workflowId}/h1/COMPLETED`, { one: 1 });
    await abortAllDurableObjects();
    await apiOk<string>("POST", `/api/tasks/${workflowId}/h2/COMPLETED`, { two: 2 });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.output).toEqual({ joined: { h1: { one: 1 }, h2: { two: 2 } } });
  });

  it("forks afresh in each iteration of a DO_WHILE: each page's calls side by side, named by their iteration", async () => {
    // The calls of the loop's current page.
    const prepare = prepareCalls("${pages.output.loopItem}", target("/count/paged-fork"));
    const pages = { name: "pages", taskReferenceName: "pages", type: "DO_WHILE", inputParameters: { items: "${workflow.input.pages}" }, loopOver: [prepare, ...dynamicFork("fan", "${prepare.output.result.tasks}", "${prepare.output.result.inputs}")] };
    await register({ name: "dynamic_pages", tasks: [pages], outputParameters: { pages: "${pages.output}" } });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dynamic_pages/1", { input: { pages: [["a", "b"], ["c"], ["a"]] } });
    expect(run.status, String(run.reasonForIncompletion)).toBe("COMPLETED");
    expect(await hits("paged-fork")).toBe(4);
    expect(refsAndStatuses(run).filter((entry) => entry.startsWith("call_"))).toEqual(["call_a__1:COMPLETED", "call_a__3:COMPLETED", "call_b__1:COMPLETED", "call_c__2:COMPLETED"]);
    const iterations = run.output["pages"] as Record<string, { fan_join: Record<string, { response: { body: { key: string; n: number } } }> }>;
    expect(Object.keys(iterations["1"]!.fan_join).sort()).toEqual(["call_a", "call_b"]);
    expect(Object.keys(iterations["2"]!.fan_join)).toEqual(["call_c"]);
    // The target's count of its hits: page 3's call came last.
    expect(iterations["3"]!.fan_join["call_a"]!.response.body).toMatchObject({ key: "paged-fork", n: 4 });
    expect(run.tasks.find((task) => task.referenceTaskName === "fan_join__2")!.inputData).toEqual({ joinOn: ["call_c"] });
    expect(run.tasks.find((task) => task.referenceTaskName === "call_c__2")).toMatchObject({ iteration: 2, loopOverTask: true });
  });

  it("keeps each iteration's forks across evictions: their tasks completed by name, the loop going on from where it stood", async () => {
    const hold = (ref: string) => ({ name: "hold", taskReferenceName: ref, type: "WAIT" });
    const loop = { name: "pages", taskReferenceName: "pages", type: "DO_WHILE", inputParameters: { items: "${workflow.input.pages}" }, loopOver: dynamicFork("fan", "${pages.output.loopItem}", {}) };
    await register({ name: "dynamic_pages_evicted", tasks: [loop], outputParameters: { last: "${fan_join.output}" } });
    const workflowId = await startWorkflow("dynamic_pages_evicted", { pages: [[hold("h1"), hold("h2")], [hold("h3")]] });
    await waitFor(workflowId, (workflow) => workflow.tasks.filter((task) => task.status === "IN_PROGRESS").length === 4);
    await abortAllDurableObjects();
    await apiOk<string>("POST", `/api/tasks/${workflowId}/h1/COMPLETED`, { one: 1 });
    await apiOk<string>("POST", `/api/tasks/${workflowId}/h2/COMPLETED`, { two: 2 });
    const second = await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "h3__2" && task.status === "IN_PROGRESS"));
    expect(refsAndStatuses(second)).toEqual(["fan__1:COMPLETED", "fan__2:COMPLETED", "fan_join__1:COMPLETED", "fan_join__2:IN_PROGRESS", "h1__1:COMPLETED", "h2__1:COMPLETED", "h3__2:IN_PROGRESS", "pages:IN_PROGRESS"]);
    await abortAllDurableObjects();
    await apiOk<string>("POST", `/api/tasks/${workflowId}/h3/COMPLETED`, { three: 3 });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(done.output).toEqual({ last: { h3: { three: 3 } } });
  });

  it("with keepLastN, drops what dropped iterations forked and keeps the rest where it stands, across evictions", async () => {
    const hold = (ref: string) => ({ name: "hold", taskReferenceName: ref, type: "WAIT" });
    const loop = { name: "pages", taskReferenceName: "pages", type: "DO_WHILE", inputParameters: { items: "${workflow.input.pages}", keepLastN: 1 }, loopOver: dynamicFork("fan", "${pages.output.loopItem}", {}) };
    await register({ name: "dynamic_pages_kept", tasks: [loop], outputParameters: { last: "${fan_join.output}" } });
    const workflowId = await startWorkflow("dynamic_pages_kept", { pages: [[hold("a")], [hold("b")], [hold("c")]] });
    for (const [ref, iteration] of [["a", 1], ["b", 2], ["c", 3]] as const) {
      await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === `${ref}__${iteration}` && task.status === "IN_PROGRESS"));
      await abortAllDurableObjects();
      await apiOk<string>("POST", `/api/tasks/${workflowId}/${ref}/COMPLETED`, { [ref]: iteration });
    }
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(done.output).toEqual({ last: { c: { c: 3 } } });
    // Only the last iteration's tasks are kept, each showing the task it was forked as.
    expect(refsAndStatuses(done)).toEqual(["c__3:COMPLETED", "fan__3:COMPLETED", "fan_join__3:COMPLETED", "pages:COMPLETED"]);
    expect(done.tasks.find((task) => task.referenceTaskName === "c__3")!["workflowTask"]).toMatchObject({ taskReferenceName: "c", type: "WAIT" });
  });

  it("fails the workflow, saying why, when its input does not list valid tasks", async () => {
    await register({ name: "dynamic_bad", tasks: dynamicFork("fan", "${workflow.input.tasks}", {}) });
    const done = await waitFor(await startWorkflow("dynamic_bad", { tasks: [{ name: "x", taskReferenceName: "x", type: "HTTP" }] }), ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("FAILED");
    expect(String(done.reasonForIncompletion)).toMatch(/^Task fan failed: Tasks could not be forked: Input 'tasks' is invalid: tasks\[0\]\.inputParameters/);
  });

  it("forks optional tasks whose request the egress policy refuses, or whose uri only a registration's lint rule refuses (scheme localhost:): each fails as it runs, calling nothing, and the fork goes on (the tasks and the JOIN COMPLETED_WITH_ERRORS), as Conductor's forked task fails when it runs", async () => {
    await register({ name: "dynamic_egress", tasks: dynamicFork("fan", "${workflow.input.tasks}", "${workflow.input.inputs}") });
    const tasks = [
      { name: "denied", taskReferenceName: "denied", type: "HTTP", optional: true },
      { name: "unsendable", taskReferenceName: "unsendable", type: "HTTP", optional: true },
      { name: "allowed", taskReferenceName: "allowed", type: "HTTP", optional: false },
    ];
    const inputs = { denied: { http_request: { uri: "http://localhost:8080/orders", method: "GET" } }, unsendable: { http_request: { uri: "localhost:8080/orders", method: "GET" } }, allowed: { http_request: { uri: target("/count/dynamic-egress"), method: "GET" } } };
    const done = await waitFor(await startWorkflow("dynamic_egress", { tasks, inputs }), ["COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    const denied = done.tasks.find((task) => task.referenceTaskName === "denied")!;
    expect(String(denied.reasonForIncompletion)).toMatch(/localhost/);
    expect(String(done.tasks.find((task) => task.referenceTaskName === "unsendable")!.reasonForIncompletion)).toMatch(/http or https/);
    expect(refsAndStatuses(done)).toEqual(["allowed:COMPLETED", "denied:COMPLETED_WITH_ERRORS", "fan:COMPLETED", "fan_join:COMPLETED_WITH_ERRORS", "unsendable:COMPLETED_WITH_ERRORS"]);
    expect(await hits("dynamic-egress")).toBe(1);
  });

  it("forks an optional HTTP task whose header value a header cannot carry (日本, a line break): it fails as it runs, sending nothing, and the fork goes on, as a uri of another scheme does (a registration-only lint), where the whole fork failed", async () => {
    await register({ name: "dynamic_header_text", tasks: dynamicFork("fan", "${workflow.input.tasks}", "${workflow.input.inputs}") });
    const tasks = [
      { name: "wide", taskReferenceName: "wide", type: "HTTP", optional: true },
      { name: "split", taskReferenceName: "split", type: "HTTP", optional: true },
      { name: "plain", taskReferenceName: "plain", type: "HTTP", optional: false },
    ];
    const call = (headers: JsonObject) => ({ http_request: { uri: target("/count/dynamic-header-text"), method: "GET", headers } });
    const inputs = { wide: call({ "X-Name": "日本" }), split: call({ "X-Name": "a\r\nX-Injected: 1" }), plain: call({ "X-Name": "café" }) };
    const done = await waitFor(await startWorkflow("dynamic_header_text", { tasks, inputs }), ["COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(refsAndStatuses(done)).toEqual(["fan:COMPLETED", "fan_join:COMPLETED_WITH_ERRORS", "plain:COMPLETED", "split:COMPLETED_WITH_ERRORS", "wide:COMPLETED_WITH_ERRORS"]);
    expect(String(done.tasks.find((task) => task.referenceTaskName === "wide")!.reasonForIncompletion)).toContain("header X-Name is not a valid header value: it holds a character beyond Latin-1");
    expect(String(done.tasks.find((task) => task.referenceTaskName === "split")!.reasonForIncompletion)).toContain("header X-Name is not a valid header value: it holds a line break or NUL");
    expect(await hits("dynamic-header-text")).toBe(1);
  });

  it("refuses to fork tasks given at run time that read a secret (at any depth), calling nothing: whoever starts it would choose where the secret goes", async () => {
    expect((await api("PUT", "/api/secrets/fork_guarded", JSON.stringify("guarded-value"))).status).toBe(200);
    await register({ name: "dynamic_secret", tasks: dynamicFork("fan", "${workflow.input.tasks}", "${workflow.input.inputs}") });
    const leaking = { http_request: { uri: target("/count/dynamic-secret?k=${workflow.secrets.fork_guarded}"), method: "GET" } };
    const given = [
      // Directly in a forked task's input, inside a SWITCH branch, and in a sub workflow's inline definition.
      [{ name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: leaking }],
      [{ name: "pick", taskReferenceName: "pick", type: "SWITCH", evaluatorType: "value-param", expression: "k", inputParameters: { k: "a" }, decisionCases: { a: [{ name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: leaking }] } }],
      [{ name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "inline_child", workflowDefinition: { name: "inline_child", version: 1, schemaVersion: 2, tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: leaking }] } } }],
    ];
    for (const tasks of given) {
      const done = await waitFor(await startWorkflow("dynamic_secret", { tasks, inputs: {} }), ["COMPLETED", "FAILED"]);
      expect(done.status).toBe("FAILED");
      const fan = done.tasks.find((task) => task.referenceTaskName === "fan")!;
      expect(fan.status).toBe("FAILED_WITH_TERMINAL_ERROR");
      expect(String(fan.reasonForIncompletion)).toContain("tasks given as the workflow runs may not read secrets (${workflow.secrets.fork_guarded})");
      expect(done.tasks.map((task) => task.referenceTaskName)).toEqual(["fan"]);
    }
    expect(await hits("dynamic-secret")).toBe(0);

    // Data in the inputs' map is given as it is, never resolved: the same text reaches the service literally.
    const echoed = { http_request: { uri: target("/echo/dynamic-secret"), method: "GET", headers: { "X-Key": "${workflow.secrets.fork_guarded}" } } };
    const literal = await waitFor(await startWorkflow("dynamic_secret", { tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP" }], inputs: { call: echoed } }), ["COMPLETED", "FAILED"]);
    expect(literal.status, String(literal.reasonForIncompletion)).toBe("COMPLETED");
    const echo = literal.tasks.find((task) => task.referenceTaskName === "call")!.outputData["response"] as { body: { headers: JsonObject } };
    expect(echo.body.headers["x-key"]).toBe("${workflow.secrets.fork_guarded}");
  });

  it("refuses to fork a task given at run time that reads a field inside a secret, as registration refuses it: the fork fails, calling nothing", async () => {
    await register({ name: "dynamic_secret_field", tasks: dynamicFork("fan", "${workflow.input.tasks}", "${workflow.input.inputs}") });
    const tasks = [{ name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { http_request: { uri: target("/count/dynamic-secret-field?k=${workflow.secrets.fork_guarded.k}"), method: "GET" } } }];
    const done = await waitFor(await startWorkflow("dynamic_secret_field", { tasks, inputs: {} }), ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("FAILED");
    const fan = done.tasks.find((task) => task.referenceTaskName === "fan")!;
    expect(fan.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(String(fan.reasonForIncompletion)).toContain("a secret is read whole here: `${workflow.secrets.fork_guarded}`");
    expect(await hits("dynamic-secret-field")).toBe(0);
  });

  it("forks Conductor's older form: the DynamicForkJoinTaskList dynamicForkJoinTasksParam names, its workers' tasks polled with their entries' input", async () => {
    const definition: JsonObject = {
      name: "dynamic_older_form",
      tasks: [
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { dynamicTasks: "${workflow.input.dynamicTasks}" }, dynamicForkJoinTasksParam: "dynamicTasks" },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
      ],
      outputParameters: { joined: "${fan_join.output}" },
    };
    await register(definition);
    // Kept as given: the definition reads back with it.
    const stored = await apiOk<{ tasks: JsonObject[] }>("GET", "/api/metadata/workflow/dynamic_older_form");
    expect(stored.tasks[0]).toMatchObject({ dynamicForkJoinTasksParam: "dynamicTasks" });
    expect(stored.tasks[0]).not.toHaveProperty("dynamicForkTasksParam");
    const dynamicTasks: JsonObject = {
      dynamicTasks: [
        { taskName: "dfj_resize", referenceName: "resize_a", input: { image: "a.png" } },
        { taskName: "dfj_resize", referenceName: "resize_b", type: "SIMPLE", workflowName: null, input: { image: "b.png" } },
        { taskName: "call", referenceName: "call_c", type: "HTTP", input: { http_request: { uri: target("/count/dfj-older-form"), method: "GET" } } },
      ],
    };
    const workflowId = await startWorkflow("dynamic_older_form", { dynamicTasks });
    const params = new URLSearchParams({ workerid: "resizer", count: "2", timeout: "0" });
    const polled = await eventually(() => apiOk<TaskJson[]>("GET", `/api/tasks/poll/batch/dfj_resize?${params}`), (tasks) => tasks.length === 2, "both resize tasks");
    expect(polled.map((task) => [task.referenceTaskName, task["taskType"], task.inputData["image"]]).sort()).toEqual([
      ["resize_a", "dfj_resize", "a.png"],
      ["resize_b", "dfj_resize", "b.png"],
    ]);
    for (const task of polled) {
      await apiOk<string>("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, status: "COMPLETED", outputData: { resized: `small-${String(task.inputData["image"])}` } });
    }
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    const joined = done.output["joined"] as Record<string, JsonObject>;
    expect(Object.keys(joined).sort()).toEqual(["call_c", "resize_a", "resize_b"]);
    expect([joined["resize_a"], joined["resize_b"]]).toEqual([{ resized: "small-a.png" }, { resized: "small-b.png" }]);
    expect(await hits("dfj-older-form")).toBe(1);
    expect(done.tasks.find((task) => task.referenceTaskName === "fan")!.inputData["forkedTasks"]).toEqual(["resize_a", "resize_b", "call_c"]);
    expect(done.tasks.find((task) => task.referenceTaskName === "fan_join")!.inputData).toEqual({ joinOn: ["resize_a", "resize_b", "call_c"] });
  });

  it("fails the workflow, saying why, when the older form's input is no DynamicForkJoinTaskList or an entry is not valid", async () => {
    await register({
      name: "dynamic_older_bad",
      tasks: [
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { dynamicTasks: "${workflow.input.dynamicTasks}" }, dynamicForkJoinTasksParam: "dynamicTasks" },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
      ],
    });
    const cases: Array<[JsonObject, RegExp]> = [
      [{}, /^Task fan failed: Tasks could not be forked: Dynamic tasks could not be created: input dynamicTasks \(dynamicForkJoinTasksParam\) must be a DynamicForkJoinTaskList/],
      [{ dynamicTasks: [{ taskName: "dfj_resize", referenceName: "a" }] }, /must be a DynamicForkJoinTaskList, .* but is an array of 1 item/],
      [{ dynamicTasks: { dynamicTasks: [{ taskName: "dfj_resize", referenceName: "a", input: "a.png" }] } }, /dynamicTasks\.dynamicTasks\[0\]\.input \(the input of forked task a\) must be a map, but is the string "a\.png"/],
    ];
    for (const [input, reason] of cases) {
      const done = await waitFor(await startWorkflow("dynamic_older_bad", input), ["COMPLETED", "FAILED"]);
      expect(done.status).toBe("FAILED");
      expect(String(done.reasonForIncompletion)).toMatch(reason);
      expect(done.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["fan:FAILED_WITH_TERMINAL_ERROR"]);
    }
  });

  it("forks tasks whose generated reference names hold dots, as Orkes' video_recipes sample names them after its files: polled, updated by reference name and joined under their names", async () => {
    // orkes-io/orkesworkers data/workflow/video_recipes.json as published; its prefork worker (VideoRecipesPreForkWorker)
    // names each task `video_recipes_<file name>_<recipe>_<n>` and lists it as the Java SDK writes a WorkflowTask.
    await register({
      name: "video_recipes",
      description: "Video Recipes Workflow",
      version: 1,
      tasks: [
        { name: "video_recipes_prefork", taskReferenceName: "video_recipes_prefork_ref", inputParameters: { fileLocations: "${workflow.input.fileLocations}", recipeInfos: "${workflow.input.recipeInfos}" }, type: "SIMPLE" },
        { name: "video_recipes_fork", taskReferenceName: "video_recipes_fork_ref", inputParameters: { dynamicTasks: "${video_recipes_prefork_ref.output.dynamicTasks}", dynamicTasksInput: "${video_recipes_prefork_ref.output.dynamicTasksInput}" }, type: "FORK_JOIN_DYNAMIC", decisionCases: {}, dynamicForkTasksParam: "dynamicTasks", dynamicForkTasksInputParamName: "dynamicTasksInput" },
        { name: "video_recipes_join", taskReferenceName: "video_recipes_join_ref", inputParameters: {}, type: "JOIN", decisionCases: {}, defaultCase: [], forkTasks: [], startDelay: 0, joinOn: [], optional: false, defaultExclusiveJoinTask: [], asyncComplete: false, loopOver: [] },
      ],
      inputParameters: ["fileLocations", "recipeInfos"],
      outputParameters: { fileLocations: "${video_recipes_join_ref.output}" },
      schemaVersion: 2,
      restartable: true,
      workflowStatusListenerEnabled: true,
      ownerEmail: "devrel@orkes.io",
      timeoutPolicy: "ALERT_ONLY",
      timeoutSeconds: 0,
      variables: {},
      inputTemplate: {},
    });
    const fileLocations = ["https://cdn.example.com/videos/v1.mp4", "https://cdn.example.com/videos/v2.mp4"];
    const recipeInfos: Array<{ recipe: string; recipeParameters: JsonObject }> = [{ recipe: "transcode", recipeParameters: { videoEncoder: "libx264", frameRate: 30 } }, { recipe: "watermark", recipeParameters: { watermarkFileLocation: "https://cdn.example.com/logo.png" } }];
    const workflowId = await startWorkflow("video_recipes", { fileLocations, recipeInfos });
    const pollOne = (type: string) => eventually(() => apiOk<TaskJson[]>("GET", `/api/tasks/poll/batch/${type}?workerid=recipes&count=1&timeout=0`), (tasks) => tasks.length === 1, `a ${type} task`).then((tasks) => tasks[0]!);
    const prefork = await pollOne("video_recipes_prefork");
    const dynamicTasks: JsonObject[] = [];
    const dynamicTasksInput: JsonObject = {};
    for (const fileLocation of fileLocations) {
      for (const { recipe, recipeParameters } of recipeInfos) {
        const ref = `video_recipes_${fileLocation.split("/").at(-1)!}_${recipe}_${dynamicTasks.length}`;
        dynamicTasks.push({ name: "video_recipes", taskReferenceName: ref, description: null, inputParameters: {}, type: "SIMPLE", dynamicTaskNameParam: null, decisionCases: {}, defaultCase: [], forkTasks: [], startDelay: 0, subWorkflowParam: null, joinOn: [], sink: null, optional: false, taskDefinition: null, rateLimited: null, defaultExclusiveJoinTask: [], asyncComplete: false, loopCondition: null, loopOver: [], retryCount: null, evaluatorType: null, expression: null, onStateChange: {}, permissive: false });
        dynamicTasksInput[ref] = { fileLocation, recipe, recipeParameters };
      }
    }
    await apiOk<string>("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: prefork.taskId, status: "COMPLETED", outputData: { dynamicTasks, dynamicTasksInput, log: "This is a test log" } });
    const refs = ["video_recipes_v1.mp4_transcode_0", "video_recipes_v1.mp4_watermark_1", "video_recipes_v2.mp4_transcode_2", "video_recipes_v2.mp4_watermark_3"];
    // Three completed as the sample's VideoRecipeWorker does (the file it uploaded, its recipe, the parameters)...
    for (let done = 0; done < 3; done++) {
      const task = await pollOne("video_recipes");
      expect(refs).toContain(task.referenceTaskName);
      expect(task.inputData).toEqual(dynamicTasksInput[task.referenceTaskName]);
      const output = { fileLocation: `https://s3.example.com/${task.referenceTaskName}`, recipe: String(task.inputData["recipe"]).toUpperCase(), recipeParameters: task.inputData["recipeParameters"]! };
      await apiOk<string>("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, status: "COMPLETED", outputData: output });
    }
    // ...and the last by its reference name, which a URL path carries as it is.
    const last = (await getWorkflow(workflowId)).tasks.find((task) => refs.includes(task.referenceTaskName) && task.status === "SCHEDULED")!;
    await apiOk<string>("POST", `/api/tasks/${workflowId}/${encodeURIComponent(last.referenceTaskName)}/COMPLETED`, { fileLocation: "by-reference" });
    const run = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(run.status, String(run.reasonForIncompletion)).toBe("COMPLETED");
    const joined = run.output["fileLocations"] as Record<string, JsonObject>;
    expect(Object.keys(joined).sort()).toEqual(refs);
    expect(joined[last.referenceTaskName]).toEqual({ fileLocation: "by-reference" });
    // The three a worker completed (whichever the polls took: their order is not the list's) joined with its output.
    for (const ref of refs.filter((ref) => ref !== last.referenceTaskName)) expect(joined[ref], ref).toHaveProperty("recipeParameters");
    expect(run.tasks.find((task) => task.referenceTaskName === "video_recipes_fork_ref")!.inputData["forkedTasks"]).toEqual(refs);

    // Conductor's older form too; names a URL path would split or that start with a dot (`.`, `..`) stay refused.
    await register({
      name: "dynamic_older_dotted",
      tasks: [
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { dynamicTasks: "${workflow.input.dynamicTasks}" }, dynamicForkJoinTasksParam: "dynamicTasks" },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
      ],
      outputParameters: { joined: "${fan_join.output}" },
    });
    const forkOne = (referenceName: string) => startWorkflow("dynamic_older_dotted", { dynamicTasks: { dynamicTasks: [{ taskName: "call", referenceName, type: "HTTP", input: { http_request: { uri: target("/count/dfj-dotted"), method: "GET" } } }] } });
    const older = await waitFor(await forkOne("thumb_a.png_0"), ["COMPLETED", "FAILED"]);
    expect(older.status, String(older.reasonForIncompletion)).toBe("COMPLETED");
    expect(Object.keys(older.output["joined"] as JsonObject)).toEqual(["thumb_a.png_0"]);
    for (const refused of ["a/b.png", "a b.png", ".png", ".."]) {
      const failed = await waitFor(await forkOne(refused), ["COMPLETED", "FAILED"]);
      expect(failed.status).toBe("FAILED");
      expect(String(failed.reasonForIncompletion)).toMatch(/taskReferenceName must be a non-empty string of letters, digits, _, - and \. only/);
    }
    expect(await hits("dfj-dotted")).toBe(1);
    // A definition's own reference names keep the registration rule: they are what `${...}` names.
    const written = await api("POST", "/api/metadata/workflow", { name: "dotted_written", version: 1, tasks: [{ name: "x", taskReferenceName: "x.y", type: "SIMPLE" }] });
    expect(written.status).toBe(400);
  });

  it("refuses the older form beside the other form's fields, as Conductor's WorkflowTaskTypeConstraint does, storing nothing", async () => {
    // What the Ruby SDK's DynamicForkTask writes: Conductor refuses it too.
    const fork = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { dynamicTasks: "${workflow.input.dynamicTasks}" }, dynamicForkJoinTasksParam: "dynamicTasks", dynamicForkTasksInputParamName: "dynamicTasksInputs" };
    const response = await api("POST", "/api/metadata/workflow", { name: "dynamic_older_mixed", version: 1, tasks: [fork, { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" }] });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { validationErrors: Array<{ path: string; message: string }> };
    expect(body.validationErrors).toEqual([{ path: "tasks[0].dynamicForkJoinTasksParam", message: expect.stringMatching(/cannot be given with dynamicForkTasksInputParamName/) }]);
    expect((await api("GET", "/api/metadata/workflow/dynamic_older_mixed")).status).toBe(404);
  });

  it("refuses a definition whose FORK_JOIN_DYNAMIC has no JOIN after it, storing nothing", async () => {
    const response = await api("POST", "/api/metadata/workflow", { name: "dynamic_unjoined", version: 1, tasks: [dynamicFork("fan", "${workflow.input.tasks}", {})[0]!] });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { validationErrors: Array<{ path: string; message: string }> };
    expect(body.validationErrors).toEqual([{ path: "tasks[0]", message: expect.stringMatching(/must be followed directly by a JOIN/) }]);
    expect((await api("GET", "/api/metadata/workflow/dynamic_unjoined")).status).toBe(404);
  });

  it("retries from a permissive task failed for good without running the tasks its fork forked beside it: they are forked again after it, once", async () => {
    // The retry runs the lane again from the permissive task, so the fork after it forks its tasks again once that task
    // ends. The forked tasks were retried at once as well (IN_PROGRESS beside the permissive task), then forked a
    // second time: two pending runs of each.
    await register({
      name: "dynamic_permissive_retry",
      tasks: [
        { name: "first", taskReferenceName: "first", type: "WAIT", permissive: true },
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskInputs: [{ n: 0 }, { n: 1 }], forkTaskName: "hold", forkTaskType: "WAIT" } },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
      ],
    });
    const workflowId = await startWorkflow("dynamic_permissive_retry");
    const pending = (workflow: WorkflowJson, ref: string) => workflow.tasks.filter((task) => task.referenceTaskName === ref && (task.status === "SCHEDULED" || task.status === "IN_PROGRESS"));
    await waitFor(workflowId, (workflow) => pending(workflow, "first").length === 1);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/first/FAILED`, {});
    await waitFor(workflowId, (workflow) => pending(workflow, "_hold_0").length === 1 && pending(workflow, "_hold_1").length === 1);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/_hold_0/FAILED`, {});
    await waitFor(workflowId, ["FAILED"]);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    const retried = await waitFor(workflowId, (workflow) => pending(workflow, "first").length === 1);
    expect([pending(retried, "_hold_0"), pending(retried, "_hold_1")]).toEqual([[], []]);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/first/COMPLETED`, {});
    const forked = await waitFor(workflowId, (workflow) => pending(workflow, "_hold_0").length > 0 && pending(workflow, "_hold_1").length > 0);
    expect([pending(forked, "_hold_0").length, pending(forked, "_hold_1").length]).toEqual([1, 1]);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/_hold_0/COMPLETED`, { n: 0 });
    await apiOk<string>("POST", `/api/tasks/${workflowId}/_hold_1/COMPLETED`, { n: 1 });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.findLast((task) => task.referenceTaskName === "fan_join")).toMatchObject({ status: "COMPLETED", outputData: { _hold_0: { n: 0 }, _hold_1: { n: 1 } } });
  });

  it("reruns from a forked task after a retry ran the fork again behind a permissive task, its step kept (it failed the rerun with a 500)", async () => {
    // The retry runs the failed permissive task again; it completing runs the fork again after it. The rerun from the
    // task the fork's first instance forked drops the fork's later instance, which had recorded what it forked: the
    // forked task's step went with it.
    await register({
      name: "dynamic_permissive_rerun",
      tasks: [
        { name: "first", taskReferenceName: "first", type: "WAIT", permissive: true },
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskInputs: [{ n: 0 }], forkTaskName: "hold", forkTaskType: "WAIT" } },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
      ],
    });
    const workflowId = await startWorkflow("dynamic_permissive_rerun");
    const running = (ref: string) => (workflow: WorkflowJson) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS");
    await waitFor(workflowId, running("first"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/first/FAILED`, {});
    await waitFor(workflowId, running("_hold_0"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/_hold_0/FAILED`, {});
    await waitFor(workflowId, ["FAILED"]);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    await waitFor(workflowId, running("first"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/first/COMPLETED`, {});
    await waitFor(workflowId, running("_hold_0"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/_hold_0/FAILED`, {});
    const failed = await waitFor(workflowId, ["FAILED"]);
    const from = failed.tasks.find((task) => task.referenceTaskName === "_hold_0")!;
    expect(from.status).toBe("FAILED");
    await apiOk<string>("POST", `/api/workflow/${workflowId}/rerun`, { reRunFromTaskId: from.taskId });
    const rerun = await waitFor(workflowId, running("_hold_0"));
    expect(rerun.tasks.find((task) => task.taskId === from.taskId)).toMatchObject({ status: "IN_PROGRESS", workflowTask: { taskReferenceName: "_hold_0", type: "WAIT" } });
    await apiOk<string>("POST", `/api/tasks/${workflowId}/_hold_0/COMPLETED`, { done: true });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks.findLast((task) => task.referenceTaskName === "fan_join")).toMatchObject({ status: "COMPLETED", outputData: { _hold_0: { done: true } } });
  });

  it("reruns from a forked task of the run a retry went back before, dropping the fork's later run (the rerun completed at once, that task left SCHEDULED)", async () => {
    // The retry runs the permissive task again and the fork after it, which forks its task again; a second dynamic fork
    // after the JOIN gives that later run lanes of its own. Those were kept by the rerun as the fork's other branches,
    // beside its task: the JOIN, reached anew, joined the later run's completed task, and the workflow COMPLETED.
    await register({
      name: "dynamic_permissive_rerun_earlier",
      tasks: [
        { name: "first", taskReferenceName: "first", type: "WAIT", permissive: true },
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskInputs: [{ n: 0 }], forkTaskName: "hold", forkTaskType: "WAIT" } },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
        { name: "none", taskReferenceName: "none", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskInputs: [], forkTaskName: "idle", forkTaskType: "WAIT" } },
        { name: "none_join", taskReferenceName: "none_join", type: "JOIN" },
      ],
    });
    const workflowId = await startWorkflow("dynamic_permissive_rerun_earlier");
    const running = (ref: string) => (workflow: WorkflowJson) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS");
    await waitFor(workflowId, running("first"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/first/FAILED`, {});
    await waitFor(workflowId, running("_hold_0"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/_hold_0/COMPLETED`, { run: 1 });
    await waitFor(workflowId, ["FAILED"]);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    await waitFor(workflowId, running("first"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/first/COMPLETED`, {});
    await waitFor(workflowId, running("_hold_0"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/_hold_0/COMPLETED`, { run: 2 });
    const completed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(completed.status).toBe("COMPLETED");
    const from = completed.tasks.find((task) => task.referenceTaskName === "_hold_0")!;
    await apiOk<string>("POST", `/api/workflow/${workflowId}/rerun`, { reRunFromTaskId: from.taskId });
    const rerun = await waitFor(workflowId, (workflow) => workflow.status !== "RUNNING" || running("_hold_0")(workflow));
    expect([rerun.status, refsAndStatuses(rerun)]).toEqual(["RUNNING", ["_hold_0:IN_PROGRESS", "fan:COMPLETED", "fan_join:IN_PROGRESS", "first:FAILED"]]);
    expect(rerun.tasks.find((task) => task.referenceTaskName === "_hold_0")!.taskId).toBe(from.taskId);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/_hold_0/COMPLETED`, { run: 3 });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect([done.status, done.tasks.findLast((task) => task.referenceTaskName === "fan_join")?.outputData]).toEqual(["COMPLETED", { _hold_0: { run: 3 } }]);
  });
});
