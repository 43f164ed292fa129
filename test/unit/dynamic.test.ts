import { dynamicTask as clientDynamicTask } from "@io-orkes/conductor-javascript";
import { describe, expect, it } from "vitest";
import { type Decision } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import type { JsonObject, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { instanceTask } from "../../src/engine/plan";
import { childStartRequest, inlineChildDefinition } from "../../src/engine/tasks/sub-workflow";
import { keptDynamicChoices } from "../../src/engine/tasks/dynamic/concrete";
import { keptMaskedReads, toTaskView } from "../../src/engine/view";
import { attemptEnds, env, latestNamed, registrationErrors, startedWith } from "./engine-env";

/** A DYNAMIC `ref` running the task `workflow.input.run` names, with `extra` input. */
const dynamic = (ref: string, extraInput: JsonObject = {}, extra: Partial<WorkflowTaskDef> = {}): WorkflowTaskDef => ({
  name: ref,
  taskReferenceName: ref,
  type: "DYNAMIC",
  dynamicTaskNameParam: "taskToExecute",
  inputParameters: { taskToExecute: "${workflow.input.run}", ...extraInput },
  ...extra,
});
const after: WorkflowTaskDef = { name: "after", taskReferenceName: "after", type: "SET_VARIABLE", inputParameters: { done: true } };

const started = (tasks: WorkflowTaskDef[], input: JsonObject): Decision => startedWith("dynamic", tasks, input);
const queued = (decision: Decision) => decision.effects.flatMap((effect) => (effect.kind === "queueTask" ? [JSON.parse(effect.entry.queue) as unknown] : []));
const dispatched = (decision: Decision) => decision.effects.flatMap((effect) => (effect.kind === "dispatch" ? [effect.taskId] : []));
const summary = (state: WorkflowExecution) => state.tasks.map((task) => `${task.referenceTaskName}:${task.taskType}:${task.taskDefName}:${task.status}`);

describe("DYNAMIC registration", () => {
  it("registers the official client's builder and a name given by an expression", () => {
    const built: unknown[] = JSON.parse(JSON.stringify([clientDynamicTask("run_it", "${workflow.input.run}")]));
    expect(built[0]).toMatchObject({ type: "DYNAMIC", dynamicTaskNameParam: "taskToExecute" });
    expect(registrationErrors(built)).toEqual([]);
    expect(registrationErrors([dynamic("d")])).toEqual([]);
  });

  it("refuses a DYNAMIC that does not say which parameter names its task, or names one it does not set", () => {
    const { dynamicTaskNameParam: _param, ...bare } = dynamic("d");
    expect(registrationErrors([bare])).toEqual([expect.stringMatching(/^tasks\[0\]\.dynamicTaskNameParam: a DYNAMIC needs dynamicTaskNameParam/)]);
    expect(registrationErrors([dynamic("d", {}, { dynamicTaskNameParam: "missing" })])).toEqual([
      'tasks[0].dynamicTaskNameParam: dynamicTaskNameParam names input parameter "missing", which inputParameters does not set',
    ]);
  });

  it("refuses a name written as it is that no DYNAMIC can run", () => {
    expect(registrationErrors([dynamic("d", { taskToExecute: "SWITCH" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.taskToExecute: input taskToExecute names SWITCH, which a DYNAMIC cannot run/)]);
    expect(registrationErrors([dynamic("d", { taskToExecute: "KAFKA_PUBLISH" })])).toEqual(["tasks[0].inputParameters.taskToExecute: input taskToExecute names KAFKA_PUBLISH, a system task type this version does not support"]);
    // Conductor OSS's Python script task (its TaskType enum's CUSTOM_CODE): a system task there, no worker's task here.
    expect(registrationErrors([dynamic("d", { taskToExecute: "CUSTOM_CODE" })])).toEqual(["tasks[0].inputParameters.taskToExecute: input taskToExecute names CUSTOM_CODE, a system task type this version does not support"]);
    expect(registrationErrors([dynamic("d", { taskToExecute: "SUB_WORKFLOW" })])).toEqual([expect.stringMatching(/names the child workflow in input parameter subWorkflowName/)]);
    expect(registrationErrors([dynamic("d", { taskToExecute: "" })])).toEqual([expect.stringMatching(/must give the name of the task to run/)]);
    expect(registrationErrors([dynamic("d", { taskToExecute: "encode" })])).toEqual([]);
  });

  it("checks a child definition written in place (Orkes' subWorkflowDefinition) as a definition of its own; subWorkflowName may then be left out, or must be its name", () => {
    const child = { name: "billing", version: 1, tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP", inputParameters: { who: "${workflow.input.who}" } }] };
    for (const run of ["SUB_WORKFLOW", "${workflow.input.run}"]) {
      expect(registrationErrors([dynamic("d", { taskToExecute: run, subWorkflowDefinition: child })])).toEqual([]);
      expect(registrationErrors([dynamic("d", { taskToExecute: run, subWorkflowDefinition: child, subWorkflowName: "billing" })])).toEqual([]);
      expect(registrationErrors([dynamic("d", { taskToExecute: run, subWorkflowDefinition: child, subWorkflowName: "other" })])).toEqual(['tasks[0].inputParameters.subWorkflowName: must be the inline child\'s name ("billing")']);
      expect(registrationErrors([dynamic("d", { taskToExecute: run, subWorkflowDefinition: { ...child, tasks: [] } })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.subWorkflowDefinition\.tasks: /)]);
    }
    // Named as another task, the key is that task's input like any other.
    expect(registrationErrors([dynamic("d", { taskToExecute: "encode", subWorkflowDefinition: { tasks: [] } })])).toEqual([]);
    // One an expression gives is named beside it, as a SUB_WORKFLOW's is; anything else is no definition.
    expect(registrationErrors([dynamic("d", { taskToExecute: "SUB_WORKFLOW", subWorkflowDefinition: "${workflow.input.plan}" })])).toEqual([expect.stringMatching(/names the child in input parameter subWorkflowName too/)]);
    expect(registrationErrors([dynamic("d", { taskToExecute: "SUB_WORKFLOW", subWorkflowDefinition: "${workflow.input.plan}", subWorkflowName: "billing" })])).toEqual([]);
    expect(registrationErrors([dynamic("d", { taskToExecute: "SUB_WORKFLOW", subWorkflowDefinition: 3 })])).toEqual([expect.stringMatching(/input subWorkflowDefinition must be the child's workflow definition \(an object\) or an expression giving one, but is/)]);
  });
});

describe("DYNAMIC at run time", () => {
  it("runs a worker's task of the name its input gives, queued under that name, shown as Conductor shows it", () => {
    const decision = started([dynamic("d", { file: "${workflow.input.file}" }), after], { run: "encode", file: "a.mp4" });
    expect(summary(decision.state)).toEqual(["d:SIMPLE:encode:SCHEDULED"]);
    expect(queued(decision)).toEqual([[null, "encode"]]);
    const task = latestNamed(decision.state, "d");
    expect(task.inputData).toEqual({ taskToExecute: "encode", file: "a.mp4" });
    const view = toTaskView(task, decision.state);
    expect(view).toMatchObject({ taskType: "encode", taskDefName: "encode", referenceTaskName: "d", workflowTask: { type: "DYNAMIC", name: "encode", dynamicTaskNameParam: "taskToExecute" } });

    let state = decide(decision.state, { type: "taskPolled", taskId: task.taskId, workerId: "w1" }, env(1_100)).state;
    state = decide(state, { type: "externalUpdate", taskId: task.taskId, status: "COMPLETED", output: { encoded: true } }, env(1_200)).state;
    expect(state.status).toBe("COMPLETED");
    expect(summary(state)).toEqual(["d:SIMPLE:encode:COMPLETED", "after:SET_VARIABLE:after:COMPLETED"]);
  });

  it("runs a system task of the type its input names, with the input that type reads", () => {
    const input = { http_request: { uri: "https://example.com/${workflow.input.path}", method: "GET" } };
    const decision = started([dynamic("d", input), after], { run: "HTTP", path: "x" });
    expect(summary(decision.state)).toEqual(["d:HTTP:HTTP:IN_PROGRESS"]);
    expect(dispatched(decision)).toEqual([latestNamed(decision.state, "d").taskId]);
    expect(latestNamed(decision.state, "d").inputData).toMatchObject({ http_request: { uri: "https://example.com/x" } });
    expect(instanceTask(decision.state.definition, latestNamed(decision.state, "d"))).toMatchObject({ type: "HTTP", name: "HTTP", taskReferenceName: "d" });
    const state = attemptEnds(decision.state, "d", 1_500).state;
    expect(state.status).toBe("COMPLETED");

    const inline = started([dynamic("d", { evaluatorType: "javascript", expression: "$.n * 2", n: 21 })], { run: "INLINE" }).state;
    expect(inline.status).toBe("COMPLETED");
    expect(latestNamed(inline, "d")).toMatchObject({ taskType: "INLINE", outputData: { result: 42 } });
  });

  it("runs an EVENT whose sink its input parameter sink gives, as Conductor's Event reads it from the task's input; one it cannot publish to is refused", () => {
    const decision = started([dynamic("d", { sink: "conductor:${workflow.input.queue}", orderId: 7 }), after], { run: "EVENT", queue: "approvals" });
    const task = latestNamed(decision.state, "d");
    expect(task).toMatchObject({ taskType: "EVENT", status: "IN_PROGRESS", inputData: { sink: "conductor:approvals", orderId: 7 } });
    expect(dispatched(decision)).toEqual([task.taskId]);
    // A literal sink this service has no queue for: a 400 at registration when the DYNAMIC names EVENT as it is, and a
    // failure for good when an expression names it.
    const sqs = { ...dynamic("d", { sink: "sqs:orders" }), inputParameters: { taskToExecute: "EVENT", sink: "sqs:orders" } };
    expect(registrationErrors([sqs])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.taskToExecute: input sink: sink "sqs:orders" is not supported/)]);
    const failed = latestNamed(started([dynamic("d", { sink: "sqs:orders" })], { run: "EVENT" }).state, "d");
    expect(failed).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining('input sink: sink "sqs:orders" is not supported') });
  });

  it("runs a sub workflow named by subWorkflowName and subWorkflowVersion, its input the other parameters", () => {
    const decision = started([dynamic("d", { subWorkflowName: "${workflow.input.child}", subWorkflowVersion: 2, order: 7 })], { run: "SUB_WORKFLOW", child: "billing" });
    const task = latestNamed(decision.state, "d");
    expect(task.taskType).toBe("SUB_WORKFLOW");
    expect(dispatched(decision)).toEqual([task.taskId]);
    expect(childStartRequest(task.inputData)).toMatchObject({ name: "billing", version: 2, input: { order: 7 } });
  });

  it("runs a sub workflow whose definition subWorkflowDefinition gives in place, as a SUB_WORKFLOW's inline child: its expressions are the child's", () => {
    const child = { name: "billing", version: 1, tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP", inputParameters: { who: "${workflow.input.who}" } }] };
    const decision = started([dynamic("d", { subWorkflowDefinition: child, order: "${workflow.input.order}" })], { run: "SUB_WORKFLOW", order: 7, who: "parent" });
    const task = latestNamed(decision.state, "d");
    expect(task.taskType).toBe("SUB_WORKFLOW");
    expect(dispatched(decision)).toEqual([task.taskId]);
    expect(task.inputData).not.toHaveProperty("subWorkflowDefinition");
    expect(childStartRequest(task.inputData)).toMatchObject({ name: "billing", input: { order: 7 } });
    expect(inlineChildDefinition(instanceTask(decision.state.definition, task))).toEqual(child);
    // Nor does the parent resolve it to choose: one that cannot run shows its input without it.
    const failed = latestNamed(started([dynamic("d", { subWorkflowDefinition: child })], { run: "JOIN", who: "parent" }).state, "d");
    expect(failed).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", inputData: { taskToExecute: "JOIN" } });
    expect(failed.inputData).not.toHaveProperty("subWorkflowDefinition");
  });

  it("fails for good when its input names no task it can run; an optional one lets the workflow go on", () => {
    for (const [input, reason] of [
      [{}, /input taskToExecute \(dynamicTaskNameParam\) must give the name of the task to run, but is null/],
      [{ run: "JOIN" }, /names JOIN, which a DYNAMIC cannot run/],
      // Not a worker's task named CUSTOM_CODE, queued for a worker that never comes.
      [{ run: "CUSTOM_CODE" }, /names CUSTOM_CODE, a system task type this version does not support/],
      [{ run: "HTTP" }, /^The dynamic task could not be scheduled: HTTP: inputParameters\.uri: uri is required/],
    ] as const) {
      const state = started([dynamic("d"), after], input).state;
      expect(state.status).toBe("FAILED");
      expect(latestNamed(state, "d")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringMatching(reason) });
    }
    const optional = started([dynamic("d", {}, { optional: true }), after], {}).state;
    expect(optional.status).toBe("COMPLETED");
    expect(summary(optional)).toEqual(["d:DYNAMIC:d:COMPLETED_WITH_ERRORS", "after:SET_VARIABLE:after:COMPLETED"]);
  });

  it("runs a chosen task its definition holds as registered, though a registration-only rule added since refuses it (HTTP uri scheme, HUMAN autoClaim): the task deals with it as it runs", () => {
    // A HUMAN whose autoClaim is no boolean: registered before autoClaim was read, the run reads it as false (d9332c5).
    const assignments = [{ assignee: { user: "ada", userType: "CONDUCTOR_USER" }, slaMinutes: 0 }];
    const human = started([dynamic("d", { __humanTaskDefinition: { autoClaim: "yes", assignments } }), after], { run: "HUMAN" }).state;
    expect(human.status).toBe("RUNNING");
    expect(summary(human)).toEqual(["d:HUMAN:HUMAN:IN_PROGRESS"]);
    // An HTTP uri of scheme localhost (refused at registration since 194f7cb): sent to the actor, whose request fails it.
    const http = started([dynamic("d", { http_request: { uri: "localhost:8080/orders", method: "GET" } }), after], { run: "HTTP" });
    expect(summary(http.state)).toEqual(["d:HTTP:HTTP:IN_PROGRESS"]);
    expect(dispatched(http)).toEqual([latestNamed(http.state, "d").taskId]);
    // What the run cannot do is still refused as it is chosen.
    expect(latestNamed(started([dynamic("d", { http_request: { method: "GET" } })], { run: "HTTP" }).state, "d")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("uri is required") });
  });

  it("retries the task it chose by the DYNAMIC's own retry settings", () => {
    let state = started([dynamic("d", {}, { retryCount: 1, retryDelaySeconds: 0 })], { run: "encode" }).state;
    const first = latestNamed(state, "d");
    state = decide(state, { type: "externalUpdate", taskId: first.taskId, status: "FAILED", output: {}, reason: "busy" }, env(1_100)).state;
    expect(summary(state)).toEqual(["d:SIMPLE:encode:FAILED", "d:SIMPLE:encode:SCHEDULED"]);
    expect(latestNamed(state, "d").retryCount).toBe(1);
  });

  it("chooses afresh for each instance: a rerun with another input runs another task", () => {
    let state = started([dynamic("d")], { run: "encode" }).state;
    const first = latestNamed(state, "d");
    state = decide(state, { type: "externalUpdate", taskId: first.taskId, status: "FAILED", output: {}, reason: "no" }, env(1_100)).state;
    expect(state.status).toBe("FAILED");
    state = decide(state, { type: "rerun", fromTaskId: first.taskId, workflowInput: { run: "INLINE" } }, env(2_000)).state;
    // An INLINE needs its script: the rerun's choice is checked as the first one was.
    expect(latestNamed(state, "d")).toMatchObject({ taskType: "DYNAMIC", status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("INLINE: ") });
    state = decide(state, { type: "rerun", fromTaskId: first.taskId, workflowInput: { run: "transcode" } }, env(3_000)).state;
    expect(summary(state)).toEqual(["d:SIMPLE:transcode:SCHEDULED"]);
  });
});

describe("DYNAMIC choices kept in memory", () => {
  it("keeps a bounded number of the tasks its choices run as, and of their masked-read answers, however many names the data chose (an execution's object keeps its definition while it lives)", () => {
    const decision = started([dynamic("d", { file: "${workflow.input.file}" })], { run: "encode", file: "a.mp4" });
    const task = latestNamed(decision.state, "d");
    const step = decision.state.definition.tasks[0]!;
    // A long loop choosing a new worker's task each iteration: each instance shown, as the search rows show it.
    for (let i = 0; i < 5_000; i++) {
      const chosen = { ...task, taskDefName: `encode_${i}` };
      expect(instanceTask(decision.state.definition, chosen)).toMatchObject({ type: "SIMPLE", name: `encode_${i}` });
      expect(toTaskView(chosen, decision.state).taskDefName).toBe(`encode_${i}`);
    }
    expect(keptDynamicChoices(step)).toBeLessThanOrEqual(64);
    expect(keptMaskedReads(decision.state.definition)).toBeLessThanOrEqual(4_096);
  });
});
