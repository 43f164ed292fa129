import { doWhileTask as clientDoWhileTask, dynamicForkTask as clientDynamicForkTask, httpTask as clientHttpTask, joinTask as clientJoinTask } from "@io-orkes/conductor-javascript";
import { describe, expect, it } from "vitest";
import { type Decision } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import type { JsonObject, TaskStatus, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { planIndexOf, planOf } from "../../src/engine/plan";
import { MAX_SHOWN_FORKED_TASK_BYTES } from "../../src/engine/tasks/fork-join-dynamic";
import { childStartRequest } from "../../src/engine/tasks/sub-workflow";
import { toTaskView, toWorkflowView } from "../../src/engine/view";
import { attemptEnds, env, httpGet, latestNamed, refusal, registrationErrors, startedWith } from "./engine-env";

const http = httpGet;
/** A fork of the tasks `workflow.input.tasks` lists, with the inputs `workflow.input.inputs` gives. */
const dynamicFork = (ref: string, extra: Partial<WorkflowTaskDef> = {}): WorkflowTaskDef => ({
  name: ref,
  taskReferenceName: ref,
  type: "FORK_JOIN_DYNAMIC",
  inputParameters: { tasks: "${workflow.input.tasks}", inputs: "${workflow.input.inputs}" },
  dynamicForkTasksParam: "tasks",
  dynamicForkTasksInputParamName: "inputs",
  ...extra,
});
/** A fork of one task of `type` (named `name`) per entry of `workflow.input.items`. */
const forkOver = (ref: string, inputs: JsonObject): WorkflowTaskDef => ({
  name: ref,
  taskReferenceName: ref,
  type: "FORK_JOIN_DYNAMIC",
  inputParameters: { forkTaskInputs: "${workflow.input.items}", ...inputs },
});
const join = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "JOIN", inputParameters: {}, joinOn: [] });

const started = (tasks: WorkflowTaskDef[], input: JsonObject = {}, now = 1_000): Decision => startedWith("dynamic", tasks, input, now);

const instance = latestNamed;

/** `ref`'s in-flight attempt ends with `status`. */
const finish = (state: WorkflowExecution, ref: string, now: number, status: TaskStatus = "COMPLETED", output: JsonObject = { body: ref }): WorkflowExecution => attemptEnds(state, ref, now, status, output).state;

const statuses = (state: WorkflowExecution) => Object.fromEntries(state.tasks.map((task) => [task.referenceTaskName, task.status]));
const dispatched = (decision: Decision) =>
  decision.effects.flatMap((effect) => (effect.kind === "dispatch" ? [decision.state.tasks.find((task) => task.taskId === effect.taskId)!.referenceTaskName] : []));
const task = (ref: string, path: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { uri: `https://example.com/${path}`, method: "GET" } });

describe("FORK_JOIN_DYNAMIC registration", () => {
  it("registers either form, the official client's builder included, followed by a JOIN", () => {
    expect(registrationErrors([dynamicFork("fan"), join("fan_join")])).toEqual([]);
    expect(registrationErrors([forkOver("fan", { forkTaskType: "HTTP" }), join("fan_join")])).toEqual([]);
    // As sent over the wire: the builders leave unset fields undefined, which JSON drops.
    const built: unknown[] = JSON.parse(JSON.stringify([clientDynamicForkTask("fan", [clientHttpTask("a", { uri: "https://example.com/a", method: "GET" })], ""), clientJoinTask("fan_join", [])]));
    expect(registrationErrors(built)).toEqual([]);
    // Inside a loop too, as the client builds one.
    const looped: unknown[] = JSON.parse(JSON.stringify([clientDoWhileTask("pages", "$.pages.iteration < 3", [clientDynamicForkTask("fan", [clientHttpTask("a", { uri: "https://example.com/a", method: "GET" })], ""), clientJoinTask("fan_join", [])])]));
    expect(registrationErrors(looped)).toEqual([]);
  });

  it("refuses a fork that does not say what to fork, names inputs it does not set, or is not followed by its JOIN", () => {
    const { dynamicForkTasksParam: _tasks, dynamicForkTasksInputParamName: _inputs, ...bare } = dynamicFork("fan");
    expect(registrationErrors([bare, join("fan_join")])).toEqual([expect.stringMatching(/^tasks\[0\]\.dynamicForkTasksParam: a FORK_JOIN_DYNAMIC needs dynamicForkTasksParam/)]);
    expect(registrationErrors([dynamicFork("fan", { dynamicForkTasksInputParamName: "missing" }), join("fan_join")])).toEqual([
      'tasks[0].dynamicForkTasksInputParamName: dynamicForkTasksInputParamName names input parameter "missing", which inputParameters does not set',
    ]);
    expect(registrationErrors([dynamicFork("fan"), http("after")])).toEqual([expect.stringMatching(/^tasks\[0\]: a FORK_JOIN_DYNAMIC must be followed directly by a JOIN/)]);
    expect(registrationErrors([forkOver("fan", { forkTaskType: "FORK_JOIN" }), join("fan_join")])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.forkTaskType: forkTaskType must be one of/)]);
  });
});

/** A fork in Conductor's older form: the DynamicForkJoinTaskList `workflow.input.dynamicTasks` gives. */
const olderFork = (ref: string, extra: Partial<WorkflowTaskDef> = {}): WorkflowTaskDef => ({
  name: ref,
  taskReferenceName: ref,
  type: "FORK_JOIN_DYNAMIC",
  inputParameters: { dynamicTasks: "${workflow.input.dynamicTasks}" },
  dynamicForkJoinTasksParam: "dynamicTasks",
  ...extra,
});

describe("FORK_JOIN_DYNAMIC in Conductor's older form (dynamicForkJoinTasksParam)", () => {
  it("registers dynamicForkJoinTasksParam alone, naming an input parameter the fork sets, and keeps it", () => {
    expect(registrationErrors([olderFork("fan"), join("fan_join")])).toEqual([]);
    expect(started([olderFork("fan"), join("fan_join")], { dynamicTasks: { dynamicTasks: [] } }).state.definition.tasks[0]).toMatchObject({ dynamicForkJoinTasksParam: "dynamicTasks" });
  });

  it("refuses it beside the other form's fields (Conductor's WorkflowTaskTypeConstraint), or naming an input the fork does not set", () => {
    const mixed = /^tasks\[0\]\.dynamicForkJoinTasksParam: dynamicForkJoinTasksParam \(Conductor's older form\) cannot be given with dynamicForkTasksInputParamName/;
    expect(registrationErrors([olderFork("fan", { dynamicForkTasksInputParamName: "dynamicTasksInputs" }), join("fan_join")])).toEqual([expect.stringMatching(mixed)]);
    expect(registrationErrors([olderFork("fan", { dynamicForkTasksParam: "dynamicTasks" }), join("fan_join")])).toEqual([expect.stringMatching(/cannot be given with dynamicForkTasksParam/)]);
    expect(registrationErrors([olderFork("fan", { dynamicForkJoinTasksParam: "missing" }), join("fan_join")])).toEqual([
      'tasks[0].dynamicForkJoinTasksParam: dynamicForkJoinTasksParam names input parameter "missing", which inputParameters does not set',
    ]);
  });

  const tasks = [olderFork("fan"), join("fan_join")];
  const list: JsonObject = {
    dynamicTasks: [
      { taskName: "encode", referenceName: "enc_a", input: { file: "a.mp4", note: "literal ${workflow.input.x}" } },
      { taskName: "call", referenceName: "call_b", type: "HTTP", workflowName: null, input: { uri: "https://example.com/b", method: "GET" } },
    ],
  };

  it("forks each entry as the task {name: taskName, taskReferenceName: referenceName, type} (SIMPLE by default), its input given as is", () => {
    const decision = started(tasks, { dynamicTasks: list, x: "resolved" });
    expect(dispatched(decision).sort()).toEqual(["call_b"]);
    const state = decision.state;
    expect(statuses(state)).toMatchObject({ fan: "COMPLETED", fan_join: "IN_PROGRESS", enc_a: "SCHEDULED", call_b: "IN_PROGRESS" });
    expect(instance(state, "fan").inputData["forkedTasks"]).toEqual(["enc_a", "call_b"]);
    expect(toTaskView(instance(state, "enc_a"), state)).toMatchObject({ taskType: "encode", inputData: { file: "a.mp4", note: "literal ${workflow.input.x}" } });
    expect(instance(state, "call_b").inputData).toMatchObject({ uri: "https://example.com/b", method: "GET" });
    expect(instance(state, "fan_join").inputData).toEqual({ joinOn: ["enc_a", "call_b"] });
    // The JOIN waits for the worker's task too (run by workers end to end in test/workers/fork-join-dynamic.test.ts).
    expect(statuses(finish(state, "call_b", 2_000))).toMatchObject({ call_b: "COMPLETED", enc_a: "SCHEDULED", fan_join: "IN_PROGRESS" });
  });

  it("retries the forked tasks that did not end well with the input their entries gave them", () => {
    const failed = finish(started(tasks, { dynamicTasks: list }).state, "call_b", 2_000, "FAILED");
    expect(failed.status).toBe("FAILED");
    expect(statuses(failed)).toMatchObject({ enc_a: "CANCELED", call_b: "FAILED" });
    const retried = decide(failed, { type: "retry" }, env(3_000)).state;
    expect(statuses(retried)).toMatchObject({ enc_a: "SCHEDULED", call_b: "IN_PROGRESS" });
    expect(instance(retried, "enc_a").inputData).toMatchObject({ file: "a.mp4" });
    expect(instance(retried, "call_b").inputData).toMatchObject({ uri: "https://example.com/b" });
  });

  it.each([
    ["no list at all (Conductor's \"Dynamic tasks could not be created\")", null, /^Tasks could not be forked: Dynamic tasks could not be created: input dynamicTasks \(dynamicForkJoinTasksParam\) must be a DynamicForkJoinTaskList, .* but is null/],
    ["a bare list, not {dynamicTasks: [...]}", [{ taskName: "encode", referenceName: "a" }], /must be a DynamicForkJoinTaskList, .* but is an array of 1 item/],
    ["an entry that is no object", { dynamicTasks: ["encode"] }, /dynamicTasks\.dynamicTasks\[0\] must be an object \{taskName, referenceName, type, input\}, but is the string "encode"/],
    ["an entry without a referenceName", { dynamicTasks: [{ taskName: "encode" }] }, /dynamicTasks\.dynamicTasks\[0\]\.referenceName must be the forked task's reference name, but is nothing/],
    ["an entry whose input is no map", { dynamicTasks: [{ taskName: "encode", referenceName: "a", input: [1] }] }, /dynamicTasks\.dynamicTasks\[0\]\.input \(the input of forked task a\) must be a map, but is an array of 1 item/],
    ["an entry of a type that cannot be forked", { dynamicTasks: [{ taskName: "f", referenceName: "f", type: "FORK_JOIN" }] }, /Input 'dynamicTasks\.dynamicTasks' is invalid: .*dynamicTasks\.dynamicTasks\[0\]\.type: a FORK_JOIN cannot be forked/],
    ["a SUB_WORKFLOW, whose workflowName Conductor's mapper ignores", { dynamicTasks: [{ taskName: "child", referenceName: "c", type: "SUB_WORKFLOW", workflowName: "child" }] }, /dynamicTasks\.dynamicTasks\[0\]\.subWorkflowParam/],
    ["an HTTP entry whose input holds no request", { dynamicTasks: [{ taskName: "call", referenceName: "c", type: "HTTP", input: {} }] }, /dynamicTasks\.dynamicTasks\[0\]\.inputParameters/],
  ])("fails the fork for good, and so the workflow, on %s", (_case, value, reason) => {
    const state = started(tasks, { dynamicTasks: value }).state;
    expect(instance(state, "fan").status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(instance(state, "fan").reasonForIncompletion).toMatch(reason);
    expect(state.status).toBe("FAILED");
  });

  it("forks afresh in each iteration of a DO_WHILE, each task with that iteration's entry's input", () => {
    const call = (page: number): JsonObject => ({ dynamicTasks: [{ taskName: "call", referenceName: "call", type: "HTTP", input: { uri: `https://example.com/page-${page}`, method: "GET" } }] });
    const loop: WorkflowTaskDef = { name: "pages", taskReferenceName: "pages", type: "DO_WHILE", inputParameters: { items: "${workflow.input.pages}" }, loopOver: [olderFork("fan", { inputParameters: { dynamicTasks: "${pages.output.loopItem}" } }), join("fan_join")] };
    let state = started([loop], { pages: [call(1), call(2)] }).state;
    expect(instance(state, "call__1")).toMatchObject({ iteration: 1, inputData: { uri: "https://example.com/page-1" } });
    state = finish(state, "call__1", 2_000);
    expect(instance(state, "call__2")).toMatchObject({ iteration: 2, inputData: { uri: "https://example.com/page-2" } });
    state = finish(state, "call__2", 3_000);
    expect(state.status).toBe("COMPLETED");
    expect(instance(state, "fan_join__2").outputData).toEqual({ call: { body: "call__2" } });
  });

  it("forks nothing from an empty list: the JOIN completes at once", () => {
    const state = started(tasks, { dynamicTasks: { dynamicTasks: [] } }).state;
    expect(statuses(state)).toMatchObject({ fan: "COMPLETED", fan_join: "COMPLETED" });
    expect(state.status).toBe("COMPLETED");
  });
});

describe("FORK_JOIN_DYNAMIC with a list of tasks", () => {
  const tasks = [http("before"), dynamicFork("fan"), join("fan_join"), http("after", { inputParameters: { uri: "https://example.com/${fan_join.output.b.body}", method: "GET" } })];
  const input = {
    tasks: [task("a", "a"), { ...task("b", "b"), inputParameters: { method: "GET", note: "${workflow.input.x}" } }],
    // Given as data: a `${...}` inside stays as it is, as in Conductor.
    inputs: { b: { uri: "https://example.com/from-input", note: "literal ${workflow.input.x}" } },
    x: "resolved",
  };

  it("forks one lane per task, with its input from the fork given as is, and joins on all of them", () => {
    const first = started(tasks, input).state;
    const before = instance(first, "before");
    const forked = decide(first, { type: "dispatchResult", taskId: before.taskId, attempt: before.attempt, status: "COMPLETED", output: {} }, env(2_000));
    expect(dispatched(forked).sort()).toEqual(["a", "b"]);
    const state = forked.state;
    expect(statuses(state)).toMatchObject({ before: "COMPLETED", fan: "COMPLETED", fan_join: "IN_PROGRESS", a: "IN_PROGRESS", b: "IN_PROGRESS" });
    expect(instance(state, "fan").inputData["forkedTasks"]).toEqual(["a", "b"]);
    // And the tasks themselves, as Conductor's mapper shows them (its UI draws the branches from them).
    expect((instance(state, "fan").inputData["forkedTaskDefs"] as JsonObject[]).map((forked) => [forked["taskReferenceName"], forked["type"]])).toEqual([
      ["a", "HTTP"],
      ["b", "HTTP"],
    ]);
    expect(instance(state, "fan_join").inputData).toEqual({ joinOn: ["a", "b"] });
    expect(instance(state, "b").inputData).toEqual({ method: "GET", uri: "https://example.com/from-input", note: "literal ${workflow.input.x}" });
    expect(instance(state, "a").inputData).toMatchObject({ uri: "https://example.com/a" });
    // The JOIN waits for every forked task.
    const one = finish(state, "b", 3_000);
    expect(instance(one, "fan_join").status).toBe("IN_PROGRESS");
    const both = finish(one, "a", 3_500);
    expect(instance(both, "fan_join")).toMatchObject({ status: "COMPLETED", outputData: { a: { body: "a" }, b: { body: "b" } } });
    expect(instance(both, "after").inputData).toMatchObject({ uri: "https://example.com/b" });
    expect(finish(both, "after", 4_000).status).toBe("COMPLETED");
  });

  it("shows the forked tasks in the fork's input only while they are small beside it: their reference names always", () => {
    const big = { tasks: [{ ...task("a", "a"), description: "x".repeat(MAX_SHOWN_FORKED_TASK_BYTES) }], inputs: {} };
    const fan = instance(started([dynamicFork("fan"), join("fan_join")], big).state, "fan");
    expect(fan.inputData["forkedTasks"]).toEqual(["a"]);
    expect(fan.inputData).not.toHaveProperty("forkedTaskDefs");
  });

  it("shows the registered definition, and each forked task's own workflowTask", () => {
    const state = finish(started(tasks, input).state, "before", 2_000);
    const view = toWorkflowView(state, true);
    expect(view["workflowDefinition"]).not.toHaveProperty("dynamicForks");
    expect(toTaskView(instance(state, "b"), state)["workflowTask"]).toMatchObject({ taskReferenceName: "b", type: "HTTP" });
  });

  it("forks nothing from an empty list: the JOIN completes at once", () => {
    const state = finish(started(tasks, { ...input, tasks: [], inputs: null }).state, "before", 2_000);
    expect(statuses(state)).toMatchObject({ fan: "COMPLETED", fan_join: "COMPLETED", after: "IN_PROGRESS" });
    expect(instance(state, "fan_join").outputData).toEqual({});
  });

  it.each([
    ["no list of tasks", { tasks: "nope" }, /input tasks \(dynamicForkTasksParam\) must be a list of tasks, but is the string "nope"/],
    ["inputs that are no map", { inputs: [1] }, /must be a map of each forked task's input by its reference name/],
    ["a forked task's input that is no map (Conductor's rule)", { inputs: { a: "v1" } }, /the input of forked task a in inputs must be a map, but is the string "v1"/],
    ["a task that is not valid", { tasks: [{ name: "x", taskReferenceName: "x", type: "NOPE" }] }, /tasks\[0\]\.type: type must be one of the supported task types/],
    ["a reference name used twice", { tasks: [task("a", "a"), task("a", "b")] }, /tasks\[1\]\.taskReferenceName: taskReferenceName "a" is already used/],
    ["the reference name of a task of the definition", { tasks: [task("after", "a")] }, /taskReferenceName "after" is already used by a task of this workflow/],
    ["a forked FORK_JOIN", { tasks: [{ name: "f", taskReferenceName: "f", type: "FORK_JOIN", forkTasks: [[task("z", "z")]] }] }, /a FORK_JOIN cannot be forked/],
  ])("fails the fork for good, and so the workflow, on %s", (_case, change, reason) => {
    const state = finish(started(tasks, { ...input, ...change }).state, "before", 2_000);
    expect(instance(state, "fan").status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(instance(state, "fan").reasonForIncompletion).toMatch(reason);
    expect(state.status).toBe("FAILED");
    expect(state.definition.dynamicForks).toBeUndefined();
  });

  it("names a forked task listed without a name after its child, its type or its reference name, as Conductor needs none (its e2e DynamicForkTests)", () => {
    const unnamed: JsonObject[] = [
      { taskReferenceName: "sub_a", type: "SUB_WORKFLOW", subWorkflowParam: { name: "child_flow" } },
      { taskReferenceName: "wait_b", type: "WAIT" },
      { taskReferenceName: "work_c", type: "SIMPLE" },
    ];
    const state = finish(started(tasks, { ...input, tasks: unnamed, inputs: {} }).state, "before", 2_000);
    expect(instance(state, "fan").status).toBe("COMPLETED");
    expect(["sub_a", "wait_b", "work_c"].map((ref) => instance(state, ref).taskDefName)).toEqual(["child_flow", "WAIT", "work_c"]);
    // One without a reference name still fails the fork, naming Conductor's input.
    const bad = finish(started(tasks, { ...input, tasks: [{ name: "x", type: "WAIT" }] }).state, "before", 2_000);
    expect(instance(bad, "fan").reasonForIncompletion).toMatch(/^Tasks could not be forked: Input 'tasks' is invalid: tasks\[0\]\.taskReferenceName/);
  });

  it("cuts a refusal of the tasks its input gives to 500 characters, once scrubbed of masked values", () => {
    // The refusal names every supported type: longer than 500 characters.
    const bad = finish(started(tasks, { ...input, tasks: [{ name: "x", taskReferenceName: "x", type: "NO_SUCH_TYPE" }] }).state, "before", 2_000);
    expect(instance(bad, "fan").reasonForIncompletion).toMatch(/^Tasks could not be forked: Input 'tasks' is invalid: tasks\[0\]\.type: type must be one of/);
    expect(instance(bad, "fan").reasonForIncompletion).toHaveLength(500);
  });

  it("retries only the forked task that failed, with the input its fork gave it", () => {
    let state = finish(started(tasks, input).state, "before", 2_000);
    state = finish(state, "b", 3_000, "FAILED");
    expect(state.status).toBe("FAILED");
    expect(statuses(state)).toMatchObject({ a: "CANCELED", b: "FAILED" });
    const retried = decide(state, { type: "retry" }, env(4_000));
    expect(dispatched(retried).sort()).toEqual(["a", "b"]);
    expect(instance(retried.state, "b").inputData).toMatchObject({ uri: "https://example.com/from-input" });
    expect(retried.state.definition.dynamicForks).toHaveLength(1);
  });

  it("forks afresh on a rerun from the fork and on a restart, in the plan's same places", () => {
    let state = finish(finish(started(tasks, input).state, "before", 2_000), "a", 2_500);
    state = finish(finish(state, "b", 3_000), "after", 3_500);
    expect(state.status).toBe("COMPLETED");
    const before = planOf(state.definition).steps.length;
    const rerun = decide(state, { type: "rerun", fromTaskId: instance(state, "fan").taskId, workflowInput: { ...input, tasks: [task("c", "c")], inputs: {} } }, env(5_000));
    expect(dispatched(rerun)).toEqual(["c"]);
    expect(rerun.state.definition.dynamicForks).toEqual([{ fork: "fan", tasks: [expect.objectContaining({ taskReferenceName: "c" })], forkSeq: instance(state, "fan").seq }]);
    expect(planOf(rerun.state.definition).steps.length).toBe(before - 1);
    expect(instance(rerun.state, "fan_join").inputData).toEqual({ joinOn: ["c"] });
    const restarted = decide(finish(finish(rerun.state, "c", 6_000), "after", 6_500), { type: "restart" }, env(7_000));
    expect(restarted.state.definition.dynamicForks).toBeUndefined();
    const again = finish(restarted.state, "before", 8_000);
    // With the input the rerun gave it.
    expect(again.definition.dynamicForks?.map((run) => run.tasks.map((forked) => forked.taskReferenceName))).toEqual([["c"]]);
  });

  it("reruns a forked task alone: its JOIN waits for it again, the other branch stays done", () => {
    let state = finish(finish(started(tasks, input).state, "before", 2_000), "a", 2_500);
    state = finish(finish(state, "b", 3_000), "after", 3_500);
    const rerun = decide(state, { type: "rerun", fromTaskId: instance(state, "b").taskId }, env(4_000));
    expect(dispatched(rerun)).toEqual(["b"]);
    expect(statuses(rerun.state)).toMatchObject({ a: "COMPLETED", b: "IN_PROGRESS", fan_join: "IN_PROGRESS" });
    expect(instance(rerun.state, "b").inputData).toMatchObject({ uri: "https://example.com/from-input" });
    expect(rerun.state.tasks.some((task) => task.referenceTaskName === "after")).toBe(false);
    const done = finish(finish(rerun.state, "b", 5_000, "COMPLETED", { body: "again" }), "after", 5_500);
    expect(done.status).toBe("COMPLETED");
    expect(instance(done, "fan_join").outputData).toEqual({ a: { body: "a" }, b: { body: "again" } });
  });

  it("goes on past an optional fork that could not fork, its JOIN waiting for nothing", () => {
    const optional = [http("before"), dynamicFork("fan", { optional: true }), join("fan_join"), http("after")];
    const state = finish(started(optional, { ...input, tasks: "nope" }).state, "before", 2_000);
    expect(statuses(state)).toMatchObject({ fan: "COMPLETED_WITH_ERRORS", fan_join: "COMPLETED", after: "IN_PROGRESS" });
  });

  it("keeps each fork's tasks at their steps when a second dynamic fork forks after the first", () => {
    const two = [dynamicFork("fan"), join("fan_join"), dynamicFork("fan2", { inputParameters: { tasks: "${workflow.input.more}", inputs: {} } }), join("fan2_join")];
    let state = started(two, { ...input, more: [task("c", "c")] }).state;
    const aAt = planIndexOf(state.definition, "a");
    state = finish(finish(state, "a", 2_000), "b", 2_500);
    expect(instance(state, "c").status).toBe("IN_PROGRESS");
    expect(planIndexOf(state.definition, "a")).toBe(aAt);
    expect(instance(state, "a").definitionIndex).toBe(aAt);
    state = finish(state, "c", 3_000);
    expect(state.status).toBe("COMPLETED");
    expect(state.output).toEqual({ c: { body: "c" } });
  });

  it("reruns from a task an earlier run of the fork forked, when workflow retries forked the same tasks again after another fork's run", () => {
    // Retries from the permissive `first` run the fork again: at once over its run's steps, later (once `fan2` has
    // recorded a run) in a run of its own, whose steps the names `a` and `b` then lead to. The rerun from the first run's
    // `b` dropped that first run's steps too, and failed with a TypeError on the step it ran from.
    const hold = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {}, permissive: true });
    const two = [hold("first"), dynamicFork("fan"), join("fan_join"), dynamicFork("fan2", { inputParameters: { tasks: [], inputs: {} } }), join("fan2_join")];
    const update = (state: WorkflowExecution, ref: string, status: "COMPLETED" | "FAILED", now: number) =>
      decide(state, { type: "externalUpdate", taskId: instance(state, ref).taskId, status, output: {} }, env(now)).state;
    let state = update(started(two, input).state, "first", "FAILED", 2_000);
    const firstB = instance(state, "b");
    state = finish(state, "b", 2_100, "FAILED");
    state = decide(state, { type: "retry" }, env(3_000)).state;
    state = finish(finish(update(state, "first", "FAILED", 3_100), "a", 3_200), "b", 3_300);
    expect([state.status, state.definition.dynamicForks?.map((run) => run.fork)]).toEqual(["FAILED", ["fan", "fan2"]]);
    state = decide(state, { type: "retry" }, env(4_000)).state;
    state = finish(finish(update(state, "first", "COMPLETED", 4_100), "a", 4_200), "b", 4_300);
    expect([state.status, state.definition.dynamicForks?.map((run) => run.fork)]).toEqual(["COMPLETED", ["fan", "fan2", "fan", "fan2"]]);
    expect(instance(state, "b").definitionIndex).not.toBe(firstB.definitionIndex);
    const rerun = decide(state, { type: "rerun", fromTaskId: firstB.taskId }, env(5_000));
    // With `a`, canceled beside it as that run failed, as a rerun runs the other branches' canceled tasks again.
    expect(dispatched(rerun).sort()).toEqual(["a", "b"]);
    expect(rerun.state.definition.dynamicForks?.map((run) => run.fork)).toEqual(["fan"]);
    expect(instance(rerun.state, "b")).toMatchObject({ taskId: firstB.taskId, definitionIndex: firstB.definitionIndex, status: "IN_PROGRESS" });
  });

  it("a paused parent does not follow a forked SUB_WORKFLOW's child past a JOIN that acted on its end, with a join script or without; it follows one whose script ended before the task did", () => {
    const hold = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });
    const forked: JsonObject = { tasks: [{ name: "child", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "child", version: 1 }, optional: true }, { name: "w", taskReferenceName: "w", type: "WAIT" }], inputs: {} };
    const scripted = (expression: string): WorkflowTaskDef => ({ ...join("fan_join"), evaluatorType: "js", expression });
    // Every joined task has ended, a failed one too: the script acts on the SUB_WORKFLOW task's end.
    const allEnded = "(function(){ return $.joinOn.every((ref) => $[ref] && !['SCHEDULED', 'IN_PROGRESS'].includes($[ref].status)); })()";
    const paused = (joinTask: WorkflowTaskDef, childEnd = 2_000) => {
      let state = started([dynamicFork("fan"), joinTask, hold("after")], forked).state;
      state = decide(state, { type: "externalUpdate", taskId: instance(state, "w").taskId, status: "COMPLETED", output: {} }, env(1_000)).state;
      const sub = instance(state, "sub");
      state = decide(state, { type: "childFinished", taskId: sub.taskId, subWorkflowId: sub.subWorkflowId!, status: "FAILED", output: {}, reason: "boom" }, env(childEnd)).state;
      return decide(state, { type: "pause" }, env(3_000)).state;
    };
    for (const joinTask of [join("fan_join"), scripted(allEnded)]) {
      const state = paused(joinTask);
      expect(statuses(state)).toMatchObject({ sub: "COMPLETED_WITH_ERRORS", after: "IN_PROGRESS" });
      expect(refusal(state, { type: "resumeChild", taskId: instance(state, "sub").taskId }, 4_000).kind).toBe("CONFLICT");
    }
    // A script that ended the JOIN at once, while the task ran, decided without its end: the parent follows.
    const early = paused(scripted("(function(){ return true; })()"));
    const followed = decide(early, { type: "resumeChild", taskId: instance(early, "sub").taskId }, env(4_000)).state;
    expect([followed.status, statuses(followed)]).toMatchObject(["PAUSED", { sub: "IN_PROGRESS", after: "IN_PROGRESS" }]);
    // The task ended in the same millisecond as that JOIN, in another decision: which came first is not known, and the
    // JOIN counts as having acted on it (the parent stays as it is, the child runs detached), never the other way.
    const tied = paused(scripted("(function(){ return true; })()"), 1_000);
    expect(instance(tied, "fan_join").endTime).toBe(instance(tied, "sub").endTime);
    expect(refusal(tied, { type: "resumeChild", taskId: instance(tied, "sub").taskId }, 4_000).kind).toBe("CONFLICT");
  });
});

describe("FORK_JOIN_DYNAMIC with a list of tasks without types", () => {
  it("forks a listed task without a type (or with a null one) as a worker's task, as Conductor's docs list them", () => {
    const listed: JsonObject = { tasks: [{ name: "encode", taskReferenceName: "encode_1" }, { name: "encode", taskReferenceName: "encode_2", type: null }], inputs: { encode_1: { file: "a" } } };
    const state = started([dynamicFork("fan"), join("fan_join")], listed).state;
    expect(instance(state, "encode_1")).toMatchObject({ taskType: "SIMPLE", taskDefName: "encode", status: "SCHEDULED", inputData: { file: "a" } });
    expect(instance(state, "encode_2")).toMatchObject({ taskType: "SIMPLE", status: "SCHEDULED" });
  });

  it("forks a listed task by its workflowTaskType, as the C# SDK's task builders write a task's type", () => {
    const listed: JsonObject = { tasks: [{ name: "pause", taskReferenceName: "pause_1", workflowTaskType: "WAIT", inputParameters: { duration: "1 s" } }, { name: "encode", taskReferenceName: "encode_1", workflowTaskType: "SIMPLE" }], inputs: {} };
    const state = started([dynamicFork("fan"), join("fan_join")], listed).state;
    expect(instance(state, "pause_1")).toMatchObject({ taskType: "WAIT", status: "IN_PROGRESS" });
    expect(instance(state, "encode_1")).toMatchObject({ taskType: "SIMPLE", taskDefName: "encode", status: "SCHEDULED" });
  });
});

describe("FORK_JOIN_DYNAMIC over forkTaskInputs", () => {
  it("forks one worker task per entry, named after the fork, with the entry and its index as input", () => {
    const state = started([forkOver("fan", { forkTaskName: "resize" }), join("fan_join")], { items: [{ image: "a.png" }, "b.png"] }).state;
    expect(statuses(state)).toMatchObject({ fan: "COMPLETED", _resize_0: "SCHEDULED", _resize_1: "SCHEDULED" });
    expect(instance(state, "_resize_0")).toMatchObject({ taskType: "SIMPLE", taskDefName: "resize", inputData: { image: "a.png", __index: 0 } });
    expect(instance(state, "_resize_1").inputData).toEqual({ input: "b.png", __index: 1 });
  });

  it("forks a sub workflow per entry with forkTaskWorkflow, and marks them optional when the fork is", () => {
    const fork = { ...forkOver("fan", { forkTaskWorkflow: "child", forkTaskWorkflowVersion: "2" }), optional: true };
    const state = started([fork, join("fan_join")], { items: [{ n: 1 }] }).state;
    const forked = state.definition.dynamicForks![0]!.tasks[0]!;
    expect(forked).toMatchObject({ taskReferenceName: "_fan_0", type: "SUB_WORKFLOW", subWorkflowParam: { name: "child", version: 2 }, optional: true });
    expect(instance(state, "_fan_0").inputData).toMatchObject({ n: 1, __index: 0 });
  });

  it("reads forkTaskWorkflowVersion as Conductor's Integer.parseInt does: a sign and digits are the version, other text (spaces, a fraction, hex) the latest, a negative one refused", () => {
    const versionOf = (version: JsonObject[string]) => {
      const state = started([forkOver("fan", { forkTaskWorkflow: "child", forkTaskWorkflowVersion: version }), join("fan_join")], { items: [{ n: 1 }] }).state;
      return (state.definition.dynamicForks?.[0]?.tasks[0]?.subWorkflowParam as JsonObject | undefined)?.["version"];
    };
    expect([versionOf("+2"), versionOf(3), versionOf("0"), versionOf("007")]).toEqual([2, 3, 0, 7]);
    // NumberFormatException, ignored by Conductor's mapper: the latest version.
    for (const text of [" 2 ", "2.0", "0x10", "1e1", "", "2147483648", "two"]) expect(versionOf(text), text).toBeUndefined();
    expect(versionOf(2.5)).toBeUndefined();
    // A negative version is none a workflow has: the fork fails, as its child would in Conductor.
    const negative = started([forkOver("fan", { forkTaskWorkflow: "child", forkTaskWorkflowVersion: "-1" }), join("fan_join")], { items: [{ n: 1 }] }).state;
    expect(instance(negative, "fan")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringMatching(/subWorkflowParam\.version/) });
  });

  it("forks a sub workflow per plain entry (ids, say), its child getting {input: entry, __index} as Conductor's does", () => {
    const state = started([forkOver("fan", { forkTaskWorkflow: "child" }), join("fan_join")], { items: ["id-1", 2] }).state;
    expect(statuses(state)).toMatchObject({ fan: "COMPLETED", _fan_0: "IN_PROGRESS", _fan_1: "IN_PROGRESS" });
    expect(childStartRequest(instance(state, "_fan_0").inputData)).toMatchObject({ name: "child", input: { input: "id-1", __index: 0 } });
    expect(childStartRequest(instance(state, "_fan_1").inputData)).toMatchObject({ name: "child", input: { input: 2, __index: 1 } });
  });

  it("forks HTTP tasks from entries holding their request, refusing an entry whose request is not valid", () => {
    const ok = started([forkOver("fan", { forkTaskType: "HTTP" }), join("fan_join")], { items: [{ http_request: { uri: "https://example.com/1", method: "GET" } }] });
    expect(dispatched(ok)).toEqual(["_HTTP_0"]);
    const bad = started([forkOver("fan", { forkTaskType: "HTTP" }), join("fan_join")], { items: [{ http_request: { method: "GET" } }] }).state;
    expect(instance(bad, "fan").reasonForIncompletion).toMatch(/^Tasks could not be forked: Input 'forkTaskInputs' is invalid: forkTaskInputs\[0\]/);
  });

  it("forks a task that only a registration's lint rules refuse (a uri of scheme localhost:), to fail as it runs, as Conductor's forked task does; what the engine cannot run still fails the fork", () => {
    const given = { tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP", optional: true }, task("b", "b")], inputs: { call: { http_request: { uri: "localhost:8080/orders", method: "GET" } } } };
    const forked = started([dynamicFork("fan"), join("fan_join")], given);
    expect(statuses(forked.state)).toMatchObject({ fan: "COMPLETED", fan_join: "IN_PROGRESS", call: "IN_PROGRESS", b: "IN_PROGRESS" });
    expect(dispatched(forked).sort()).toEqual(["b", "call"]);
    // The same uri in a registered definition is refused at registration.
    expect(registrationErrors([{ name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { http_request: { uri: "localhost:8080/orders", method: "GET" } } }])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.http_request\.uri: uri must be an http or https URL/)]);
    // A request without a uri cannot be sent at all: the fork fails, as before.
    const bad = started([dynamicFork("fan"), join("fan_join")], { ...given, inputs: { call: { http_request: { method: "GET" } } } }).state;
    expect(instance(bad, "fan").reasonForIncompletion).toMatch(/^Tasks could not be forked: Input 'tasks' is invalid: tasks\[0\]\.inputParameters/);
  });

  it("forks the system task forkTaskName names when no forkTaskType is given (Orkes' form), a worker's task otherwise", () => {
    const http = started([forkOver("fan", { forkTaskName: "HTTP" }), join("fan_join")], { items: [{ http_request: { uri: "https://example.com/1", method: "GET" } }] });
    expect(dispatched(http)).toEqual(["_HTTP_0"]);
    expect(instance(http.state, "_HTTP_0")).toMatchObject({ taskType: "HTTP", status: "IN_PROGRESS" });
    const waits = started([forkOver("fan", { forkTaskName: "WAIT" }), join("fan_join")], { items: [{ duration: "1 hour" }] }).state;
    expect(instance(waits, "_WAIT_0")).toMatchObject({ taskType: "WAIT", status: "IN_PROGRESS" });
    // A forkTaskType given wins; a name that is no forkable type is a worker's task.
    expect(instance(started([forkOver("fan", { forkTaskName: "HTTP", forkTaskType: "SIMPLE" }), join("fan_join")], { items: [{}] }).state, "_HTTP_0")).toMatchObject({ taskType: "SIMPLE" });
    expect(instance(started([forkOver("fan", { forkTaskName: "JOIN" }), join("fan_join")], { items: [{}] }).state, "_JOIN_0")).toMatchObject({ taskType: "SIMPLE", taskDefName: "JOIN" });
  });

  it("registers and runs Orkes' form carrying dynamicForkTasksParam names its inputParameters do not set: forkTaskInputs decides", () => {
    const orkes = { ...forkOver("fan", { forkTaskName: "resize" }), dynamicForkTasksParam: "dynamicTasks", dynamicForkTasksInputParamName: "dynamicTasksInput" };
    expect(registrationErrors([orkes, join("fan_join")])).toEqual([]);
    const state = started([orkes, join("fan_join")], { items: [{ image: "a.png" }] }).state;
    expect(instance(state, "_resize_0")).toMatchObject({ taskType: "SIMPLE", taskDefName: "resize", inputData: { image: "a.png", __index: 0 } });
    // With the list's input set too, the list is what is forked, as before.
    const both = { ...dynamicFork("fan"), inputParameters: { ...dynamicFork("fan").inputParameters, forkTaskInputs: "${workflow.input.items}" } };
    expect(registrationErrors([both, join("fan_join")])).toEqual([]);
    const listed = started([both, join("fan_join")], { tasks: [task("a", "a")], inputs: {}, items: [{}] }).state;
    expect(statuses(listed)).toMatchObject({ fan: "COMPLETED", a: "IN_PROGRESS" });
  });

  it("forks a thousand tasks in one decision, and refuses more", () => {
    const items = Array.from({ length: 1_000 }, (_, index) => ({ index }));
    const fork = forkOver("fan", { forkTaskType: "WAIT", forkTaskName: "pause" });
    const state = started([fork, join("fan_join")], { items }).state;
    expect(state.tasks.filter((forked) => forked.taskType === "WAIT" && forked.status === "IN_PROGRESS")).toHaveLength(1_000);
    const tooMany = started([fork, join("fan_join")], { items: [...items, { index: 1_000 }] }).state;
    expect(instance(tooMany, "fan").reasonForIncompletion).toMatch(/at most 1000 tasks/);
  });
});

describe("FORK_JOIN_DYNAMIC inside a DO_WHILE", () => {
  /** A loop over `workflow.input.pages`, each page forking its `tasks` with its `inputs`, then `after` in the loop. */
  const pagedLoop = (extra: JsonObject = {}, loopOver: WorkflowTaskDef[] = [pageFork(), join("fan_join"), http("after")]): WorkflowTaskDef => ({
    name: "pages",
    taskReferenceName: "pages",
    type: "DO_WHILE",
    inputParameters: { items: "${workflow.input.pages}", ...extra },
    loopOver,
  });
  const pageFork = (): WorkflowTaskDef => dynamicFork("fan", { inputParameters: { tasks: "${pages.output.loopItem.tasks}", inputs: "${pages.output.loopItem.inputs}" } });
  const page = (tasks: JsonObject[], inputs: JsonObject = {}): JsonObject => ({ tasks, inputs });
  const startedLoop = (pages: JsonObject[], extra: JsonObject = {}, loopOver?: WorkflowTaskDef[]) => started([pagedLoop(extra, loopOver), http("post")], { pages }).state;
  const runOf = (state: WorkflowExecution, ref: string) => planOf(state.definition).steps[instance(state, ref).definitionIndex]!.task;

  it("forks afresh in each iteration, the tasks named by their iteration, each with that iteration's input, the JOIN joining that iteration's", () => {
    const pages = [page([task("a", "a"), task("b", "b")], { a: { uri: "https://example.com/page-1" } }), page([task("a", "a"), task("b", "b")], { a: { uri: "https://example.com/page-2" } })];
    let state = startedLoop(pages);
    expect(statuses(state)).toMatchObject({ pages: "IN_PROGRESS", fan__1: "COMPLETED", fan_join__1: "IN_PROGRESS", a__1: "IN_PROGRESS", b__1: "IN_PROGRESS" });
    expect(instance(state, "a__1")).toMatchObject({ iteration: 1, inputData: { uri: "https://example.com/page-1" } });
    state = finish(finish(state, "a__1", 2_000, "COMPLETED", { page: 1 }), "b__1", 2_100);
    expect(instance(state, "fan_join__1")).toMatchObject({ status: "COMPLETED", outputData: { a: { page: 1 }, b: { body: "b__1" } } });
    state = finish(state, "after__1", 2_200);
    // Iteration 2 forks the same tasks: the steps iteration 1's ran serve again, the definition unchanged.
    expect(state.definition.dynamicForks).toHaveLength(1);
    expect(instance(state, "a__2")).toMatchObject({ iteration: 2, status: "IN_PROGRESS", inputData: { uri: "https://example.com/page-2" } });
    expect(instance(state, "a__2").definitionIndex).toBe(instance(state, "a__1").definitionIndex);
    state = finish(state, "a__2", 3_000, "COMPLETED", { page: 2 });
    // The JOIN waits for iteration 2's b, not taking iteration 1's for its own.
    expect(instance(state, "fan_join__2").status).toBe("IN_PROGRESS");
    state = finish(finish(state, "b__2", 3_100), "after__2", 3_200);
    expect(instance(state, "fan_join__2").outputData).toEqual({ a: { page: 2 }, b: { body: "b__2" } });
    // As in Conductor, the loop records its own tasks; what was forked is in its JOIN's output.
    expect(instance(state, "pages")).toMatchObject({ status: "COMPLETED", iteration: 2 });
    expect(Object.keys(instance(state, "pages").outputData["2"] as JsonObject).sort()).toEqual(["after", "fan", "fan_join"]);
    expect(finish(state, "post", 4_000).status).toBe("COMPLETED");
  });

  it("records other tasks an iteration forks as a run of their own, leaving the earlier iterations' tasks their steps", () => {
    let state = startedLoop([page([task("a", "a"), task("b", "b")]), page([task("c", "c")])]);
    state = finish(finish(finish(state, "a__1", 2_000), "b__1", 2_100), "after__1", 2_200);
    expect(state.definition.dynamicForks?.map((run) => run.tasks.map((forked) => forked.taskReferenceName))).toEqual([["a", "b"], ["c"]]);
    expect(statuses(state)).toMatchObject({ fan__2: "COMPLETED", fan_join__2: "IN_PROGRESS", c__2: "IN_PROGRESS" });
    expect(instance(state, "fan_join__2").inputData).toEqual({ joinOn: ["c"] });
    expect(runOf(state, "a__1")).toMatchObject({ taskReferenceName: "a", type: "HTTP" });
    expect(runOf(state, "c__2")).toMatchObject({ taskReferenceName: "c", type: "HTTP" });
    state = finish(finish(state, "c__2", 3_000), "after__2", 3_100);
    expect(instance(state, "fan_join__2").outputData).toEqual({ c: { body: "c__2" } });
    expect(instance(state, "pages").status).toBe("COMPLETED");
  });

  it("fails the workflow when a forked task fails for good, canceling the others and the loop; a retry runs them again in that iteration", () => {
    let state = startedLoop([page([task("a", "a"), task("b", "b")]), page([task("a", "a")])]);
    state = finish(state, "a__1", 2_000, "FAILED");
    expect(statuses(state)).toMatchObject({ a__1: "FAILED", b__1: "CANCELED", pages: "CANCELED" });
    expect(state.status).toBe("FAILED");
    const retry = decide(state, { type: "retry" }, env(3_000));
    expect(dispatched(retry).sort()).toEqual(["a__1", "b__1"]);
    const retried = retry.state;
    expect(instance(retried, "pages")).toMatchObject({ status: "IN_PROGRESS", iteration: 1 });
    expect(statuses(retried)).toMatchObject({ a__1: "IN_PROGRESS", b__1: "IN_PROGRESS" });
    const done = finish(finish(finish(finish(finish(retried, "a__1", 4_000), "b__1", 4_100), "after__1", 4_200), "a__2", 4_300), "after__2", 4_400);
    expect(finish(done, "post", 4_500).status).toBe("COMPLETED");
  });

  it("runs again from a forked task of an earlier iteration, forgetting what later iterations forked", () => {
    let state = startedLoop([page([task("a", "a")]), page([task("c", "c")])]);
    state = finish(finish(finish(finish(finish(state, "a__1", 2_000), "after__1", 2_100), "c__2", 2_200), "after__2", 2_300), "post", 2_400);
    expect(state.status).toBe("COMPLETED");
    expect(state.definition.dynamicForks).toHaveLength(2);
    const rerun = decide(state, { type: "rerun", fromTaskId: instance(state, "a__1").taskId }, env(3_000));
    expect(dispatched(rerun)).toEqual(["a__1"]);
    expect(rerun.state.definition.dynamicForks?.map((run) => run.tasks.map((forked) => forked.taskReferenceName))).toEqual([["a"]]);
    expect(instance(rerun.state, "pages")).toMatchObject({ status: "IN_PROGRESS", iteration: 1 });
    state = finish(finish(rerun.state, "a__1", 3_100), "after__1", 3_200);
    expect(instance(state, "fan_join__2").inputData).toEqual({ joinOn: ["c"] });
    state = finish(finish(finish(state, "c__2", 3_300), "after__2", 3_400), "post", 3_500);
    expect(state.status).toBe("COMPLETED");
  });

  it("keeps a run that later iterations forked again after keepLastN dropped the iteration that first forked it", () => {
    const same = page([task("a", "a")]);
    let state = startedLoop([same, same, same], { keepLastN: 1 });
    for (const [iteration, now] of [[1, 2_000], [2, 3_000], [3, 4_000]] as const) state = finish(finish(state, `a__${iteration}`, now), `after__${iteration}`, now + 100);
    state = finish(state, "post", 5_000);
    expect(state.tasks.map((each) => each.referenceTaskName)).not.toContain("fan__1");
    const rerun = decide(state, { type: "rerun", fromTaskId: instance(state, "a__3").taskId }, env(6_000));
    expect(dispatched(rerun)).toEqual(["a__3"]);
    expect(rerun.state.definition.dynamicForks).toHaveLength(1);
    expect(runOf(rerun.state, "a__3")).toMatchObject({ taskReferenceName: "a" });
    expect(finish(finish(finish(rerun.state, "a__3", 6_100), "after__3", 6_200), "post", 6_300).status).toBe("COMPLETED");
  });

  it("skips a task of the loop after the JOIN while the iteration's forked tasks run, a retry of one scheduled after the JOIN", () => {
    let state = startedLoop([page([{ ...task("a", "a"), retryCount: 1, retryDelaySeconds: 0 }])]);
    state = finish(state, "a__1", 1_200, "FAILED");
    expect(state.tasks.map((each) => `${each.referenceTaskName}:${each.status}`)).toEqual(["pages:IN_PROGRESS", "fan__1:COMPLETED", "a__1:FAILED", "fan_join__1:IN_PROGRESS", "a__1:IN_PROGRESS"]);
    const skipped = decide(state, { type: "skipTask", taskReferenceName: "after" }, env(1_500)).state;
    expect(skipped.pendingSkips).toEqual([expect.objectContaining({ taskReferenceName: "after" })]);
    const done = finish(skipped, "a__1", 2_000);
    expect(instance(done, "after__1").status).toBe("SKIPPED");
  });

  it("fails the fork (and so its loop) when it would fork a loop inside a loop", () => {
    const loopTask = { name: "inner", taskReferenceName: "inner", type: "DO_WHILE", loopCondition: "false", inputParameters: {}, loopOver: [task("x", "x")] };
    const state = startedLoop([page([loopTask])]);
    expect(instance(state, "fan__1").status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(instance(state, "fan__1").reasonForIncompletion).toMatch(/a DO_WHILE cannot be forked by a FORK_JOIN_DYNAMIC inside a DO_WHILE's \(or WHILE's\) loop; fork a SUB_WORKFLOW/);
    expect(state.status).toBe("FAILED");
    // Outside a loop, the same tasks fork (a forked DO_WHILE is a loop of its own).
    const outside = started([dynamicFork("fan"), join("fan_join")], { tasks: [loopTask], inputs: {} }).state;
    expect(instance(outside, "fan").status).toBe("COMPLETED");
  });

  it("drops what its fork forked in the iterations keepLastN drops: a loop forking other tasks each time runs on", () => {
    // Each iteration forks another task (named after it) carrying 300 KB: a run of its own every time. Without the runs
    // of dropped iterations, the execution's copy of its definition would reach its limit at the sixth.
    const expression = '(function () { return [{ name: "t", taskReferenceName: "t" + $.n, type: "HTTP", inputParameters: { uri: "https://example.com/t", method: "GET", note: "x".repeat(300000) } }]; })()';
    const make: WorkflowTaskDef = { name: "make", taskReferenceName: "make", type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression, n: "${pages.output.iteration}" } };
    const fork = dynamicFork("fan", { inputParameters: { tasks: "${make.output.result}", inputs: {} } });
    let state = startedLoop([1, 2, 3, 4, 5, 6, 7, 8] as unknown as JsonObject[], { keepLastN: 2 }, [make, fork, join("fan_join")]);
    for (let iteration = 1; iteration <= 8; iteration++) {
      state = finish(state, `t${iteration}__${iteration}`, 2_000 + iteration);
      // Never more runs than the iterations kept and the one running: each forked instance at its own run's steps.
      expect(state.definition.dynamicForks!.length).toBeLessThanOrEqual(3);
      for (const task of state.tasks.filter((each) => /^t\d/.test(each.referenceTaskName))) expect(runOf(state, task.referenceTaskName).taskReferenceName).toBe(task.referenceTaskName.replace(/__\d+$/, ""));
    }
    expect(state.status).toBe("RUNNING");
    state = finish(state, "post", 3_000);
    expect(state.status).toBe("COMPLETED");
    expect(state.definition.dynamicForks!.map((run) => run.tasks[0]!.taskReferenceName)).toEqual(["t7", "t8"]);
    // The kept iterations rerun as they ran.
    const rerun = decide(state, { type: "rerun", fromTaskId: instance(state, "t7__7").taskId }, env(4_000));
    expect(dispatched(rerun)).toEqual(["t7__7"]);
  });

  it("fails a fork that would take the execution's copy of its definition over its limit (the runs it keeps are in use)", () => {
    // Three forks one after the other, each of one INLINE task carrying 700 KB: the third would make 2.1 MB.
    const expression = '(function () { return [{ name: "k", taskReferenceName: "k" + $.n, type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression: "1", note: "x".repeat(700000) } }]; })()';
    const stage = (n: number): WorkflowTaskDef[] => [
      { name: `make${n}`, taskReferenceName: `make${n}`, type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression, n } },
      dynamicFork(`fan${n}`, { inputParameters: { tasks: `\${make${n}.output.result}`, inputs: {} } }),
      join(`fan${n}_join`),
    ];
    const state = started([...stage(1), ...stage(2), ...stage(3)]).state;
    expect(statuses(state)).toMatchObject({ fan1: "COMPLETED", k1: "COMPLETED", fan2: "COMPLETED", k2: "COMPLETED", fan3: "FAILED_WITH_TERMINAL_ERROR" });
    expect(instance(state, "fan3").reasonForIncompletion).toMatch(/the execution's copy of its definition \(the tasks of 2 earlier runs of its dynamic forks included\) would be \d+ bytes, over the limit of 1572864 bytes/);
    expect(state.definition.dynamicForks).toHaveLength(2);
    expect(state.status).toBe("FAILED");
  });
});
