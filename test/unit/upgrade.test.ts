import { describe, expect, it } from "vitest";
import { type ExecutionEvent } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import type { JsonObject, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { planOf } from "../../src/engine/plan";
import { attemptEnds, env, httpGet, latestNamed, refusal, startedWith } from "./engine-env";

// The decider's part of Orkes' upgrade of a running execution to another version of its workflow: the engine alone.

const version = (n: number, tasks: WorkflowTaskDef[], extra: Partial<WorkflowDef> = {}): WorkflowDef => ({ name: "orders", version: n, schemaVersion: 2, tasks, ...extra });
const upgrade = (definition: WorkflowDef, fields: { workflowInput?: JsonObject; taskOutput?: Record<string, JsonObject> } = {}): ExecutionEvent => ({ type: "upgrade", definition, ...fields });
const lines = (state: WorkflowExecution) => state.tasks.map((task) => `${task.seq} ${task.referenceTaskName} ${task.status}`);
const fork = (ref: string, branches: WorkflowTaskDef[][]): WorkflowTaskDef[] => [
  { name: ref, taskReferenceName: ref, type: "FORK_JOIN", forkTasks: branches },
  { name: `${ref}_join`, taskReferenceName: `${ref}_join`, type: "JOIN", joinOn: branches.map((branch) => branch.at(-1)!.taskReferenceName) },
];

/** Execution `wf-1` of orders version 1 (`tasks`), its first task answered, the second in flight. */
function atSecondTask(tasks: WorkflowTaskDef[]): WorkflowExecution {
  const state = startedWith("orders", tasks).state;
  return attemptEnds(state, tasks[0]!.taskReferenceName, 2_000, "COMPLETED", { body: { n: 1 } }).state;
}

describe("upgrading a running execution", () => {
  it("goes on from its running task under the new version: tasks it added before it are SKIPPED (with the output given), those after it run", () => {
    const state = atSecondTask([httpGet("a"), httpGet("b")]);
    const v2 = version(2, [httpGet("a"), httpGet("added"), httpGet("b"), httpGet("c", { inputParameters: { uri: "https://example.com/c?x=${added.output.x}", method: "GET" } })]);
    const upgraded = decide(state, upgrade(v2, { taskOutput: { added: { x: "7" } } }), env(3_000));
    expect(upgraded.state.workflowVersion).toBe(2);
    expect(upgraded.state.status).toBe("RUNNING");
    expect(lines(upgraded.state)).toEqual(["1 a COMPLETED", "2 added SKIPPED", "3 b IN_PROGRESS"]);
    expect(latestNamed(upgraded.state, "added")).toMatchObject({ outputData: { x: "7" }, definitionIndex: 1, startTime: 3_000, endTime: 3_000 });
    // b is left running as it was: its call is not made again.
    expect(upgraded.effects).toEqual([]);
    expect(latestNamed(upgraded.state, "b")).toEqual({ ...latestNamed(state, "b"), seq: 3, definitionIndex: 2 });

    const next = attemptEnds(upgraded.state, "b", 4_000);
    expect(lines(next.state)).toEqual(["1 a COMPLETED", "2 added SKIPPED", "3 b COMPLETED", "4 c IN_PROGRESS"]);
    expect(latestNamed(next.state, "c").inputData).toMatchObject({ uri: "https://example.com/c?x=7" });
    expect(attemptEnds(next.state, "c", 5_000).state.status).toBe("COMPLETED");
  });

  it("replaces the workflow input when one is given, and later tasks read it", () => {
    const state = atSecondTask([httpGet("a"), httpGet("b")]);
    const v2 = version(2, [httpGet("a"), httpGet("b"), httpGet("c", { inputParameters: { uri: "https://example.com/${workflow.input.region}", method: "GET" } })]);
    const upgraded = decide(state, upgrade(v2, { workflowInput: { region: "eu" } }), env(3_000)).state;
    expect(upgraded.input).toEqual({ region: "eu" });
    expect(latestNamed(attemptEnds(upgraded, "b", 4_000).state, "c").inputData).toMatchObject({ uri: "https://example.com/eu" });
  });

  it("gives a task waiting out its retry delay the new version's input: the fix reaches the next attempt", () => {
    const retried = httpGet("b", { retryCount: 2, retryLogic: "FIXED", retryDelaySeconds: 60 } as Partial<WorkflowTaskDef>);
    const failing = { ...retried, inputParameters: { uri: "https://broken.example.com/b", method: "GET" } };
    const state = attemptEnds(atSecondTask([httpGet("a"), failing]), "b", 3_000, "FAILED").state;
    const waiting = latestNamed(state, "b");
    expect(waiting).toMatchObject({ status: "SCHEDULED", retryCount: 1, inputData: { uri: "https://broken.example.com/b" } });
    const upgraded = decide(state, upgrade(version(2, [httpGet("a"), retried])), env(4_000)).state;
    expect(latestNamed(upgraded, "b")).toMatchObject({ taskId: waiting.taskId, status: "SCHEDULED", retryCount: 1, inputData: { uri: "https://example.com/b" } });
    // The attempt that failed keeps the input it was sent with.
    expect(upgraded.tasks.find((task) => task.referenceTaskName === "b" && task.status === "FAILED")!.inputData).toMatchObject({ uri: "https://broken.example.com/b" });
  });

  it("inside a fork, records SKIPPED a task the new version added at the start of a running branch, and the JOIN still waits for that branch", () => {
    const v1 = version(1, fork("f", [[httpGet("left")], [httpGet("right")]]));
    let state = startedWith("orders", v1.tasks).state;
    state = attemptEnds(state, "left", 2_000).state;
    const v2 = version(2, fork("f", [[httpGet("left")], [httpGet("prepare"), httpGet("right")]]));
    const upgraded = decide(state, upgrade(v2, { taskOutput: { prepare: { ok: true } } }), env(3_000)).state;
    expect(lines(upgraded)).toEqual(["1 f COMPLETED", "2 left COMPLETED", "3 prepare SKIPPED", "4 right IN_PROGRESS", "5 f_join IN_PROGRESS"]);
    const done = attemptEnds(upgraded, "right", 4_000).state;
    expect(done.status).toBe("COMPLETED");
    expect(latestNamed(done, "f_join").outputData).toMatchObject({ left: { body: "left" }, right: { body: "right" } });
  });

  it("runs a branch the new version added to a FORK_JOIN that has forked, and its running JOIN shows it in its joinOn, as it waits for it", () => {
    const v1 = version(1, fork("f", [[httpGet("left")], [httpGet("right")]]));
    let state = startedWith("orders", v1.tasks).state;
    state = attemptEnds(state, "left", 2_000).state;
    const v2 = version(2, fork("f", [[httpGet("left")], [httpGet("right")], [httpGet("extra")]]));
    const upgraded = decide(state, upgrade(v2), env(3_000)).state;
    expect(lines(upgraded)).toEqual(["1 f COMPLETED", "2 left COMPLETED", "3 right IN_PROGRESS", "4 f_join IN_PROGRESS", "5 extra IN_PROGRESS"]);
    // Conductor's JOIN waits for the joinOn its input shows: it shows the list it waits for.
    expect(latestNamed(upgraded, "f_join").inputData).toEqual({ joinOn: ["left", "right", "extra"] });
    const waiting = attemptEnds(upgraded, "right", 4_000).state;
    expect(latestNamed(waiting, "f_join").status).toBe("IN_PROGRESS");
    const done = attemptEnds(waiting, "extra", 5_000).state;
    expect(done.status).toBe("COMPLETED");
    expect(latestNamed(done, "f_join").outputData).toMatchObject({ left: { body: "left" }, right: { body: "right" }, extra: { body: "extra" } });
  });

  it("gives a running EXCLUSIVE_JOIN the new version's joinOn and defaultExclusiveJoinTask in its input, which it ends by", () => {
    const exclusive = (joinOn: string[], defaults: string[]): WorkflowTaskDef => ({ name: "ej", taskReferenceName: "ej", type: "EXCLUSIVE_JOIN", joinOn, defaultExclusiveJoinTask: defaults });
    const v1 = version(1, fork("f", [[httpGet("a")], [httpGet("b")], [exclusive(["a"], [])]]));
    v1.tasks[1] = { ...v1.tasks[1]!, joinOn: ["a", "ej"] };
    const state = startedWith("orders", v1.tasks).state;
    expect(latestNamed(state, "ej")).toMatchObject({ status: "IN_PROGRESS", inputData: { joinOn: ["a"], defaultExclusiveJoinTask: [] } });
    const v2 = version(2, fork("f", [[httpGet("a")], [httpGet("b")], [exclusive(["b", "a"], ["a"])]]));
    v2.tasks[1] = { ...v2.tasks[1]!, joinOn: ["a", "ej"] };
    const upgraded = decide(state, upgrade(v2), env(3_000)).state;
    // Conductor's ExclusiveJoin reads both lists from its input: it shows those it ends by.
    expect(latestNamed(upgraded, "ej").inputData).toEqual({ joinOn: ["b", "a"], defaultExclusiveJoinTask: ["a"] });
    const ended = attemptEnds(upgraded, "b", 4_000).state;
    expect(latestNamed(ended, "ej")).toMatchObject({ status: "COMPLETED", outputData: { body: "b" } });
  });

  it("inside a loop, keeps the iterations run and runs the new version's loop from the next iteration on", () => {
    const loop = (loopOver: WorkflowTaskDef[]): WorkflowTaskDef => ({ name: "loop", taskReferenceName: "loop", type: "DO_WHILE", inputParameters: {}, loopOver, loopCondition: "$.loop['iteration'] < 2" });
    let state = startedWith("orders", [loop([httpGet("a")])]).state;
    expect(lines(state)).toEqual(["1 loop IN_PROGRESS", "2 a__1 IN_PROGRESS"]);
    state = decide(state, upgrade(version(2, [loop([httpGet("a"), httpGet("audit")])])), env(2_000)).state;
    // Within the running iteration nothing is recorded for the task added after a.
    expect(lines(state)).toEqual(["1 loop IN_PROGRESS", "2 a__1 IN_PROGRESS"]);
    state = attemptEnds(state, "a__1", 3_000).state;
    expect(lines(state)).toEqual(["1 loop IN_PROGRESS", "2 a__1 COMPLETED", "3 audit__1 IN_PROGRESS"]);
    state = attemptEnds(state, "audit__1", 4_000).state;
    state = attemptEnds(attemptEnds(state, "a__2", 5_000).state, "audit__2", 6_000).state;
    expect(state.status).toBe("COMPLETED");
    expect(latestNamed(state, "loop").outputData).toMatchObject({ iteration: 2, 2: { a: { body: "a__2" }, audit: { body: "audit__2" } } });
  });

  it("takes a PAUSED execution, which stays paused until resumed", () => {
    const state = decide(atSecondTask([httpGet("a"), httpGet("b")]), { type: "pause" }, env(2_500)).state;
    const upgraded = decide(state, upgrade(version(2, [httpGet("a"), httpGet("b"), httpGet("c")])), env(3_000)).state;
    expect(upgraded).toMatchObject({ status: "PAUSED", workflowVersion: 2 });
    const resumed = decide(attemptEnds(upgraded, "b", 4_000).state, { type: "resume" }, env(5_000)).state;
    expect(lines(resumed)).toEqual(["1 a COMPLETED", "2 b COMPLETED", "3 c IN_PROGRESS"]);
  });

  it("counts a changed workflow timeout from the execution's start", () => {
    const state = atSecondTask([httpGet("a"), httpGet("b")]);
    expect(state.deadline).toBeUndefined();
    const upgraded = decide(state, upgrade(version(2, [httpGet("a"), httpGet("b")], { timeoutSeconds: 60 })), env(3_000)).state;
    expect(upgraded.deadline).toBe(1_000 + 60_000);
  });

  it("counts a changed workflow timeout from where the old one counted: a resume's time, not the start", () => {
    const timed = decide(atSecondTask([httpGet("a"), httpGet("b")]), upgrade(version(2, [httpGet("a"), httpGet("b")], { timeoutSeconds: 60 })), env(3_000)).state;
    const paused = decide(timed, { type: "pause" }, env(4_000)).state;
    const resumed = decide(paused, { type: "resume" }, env(500_000)).state;
    expect(resumed.deadline).toBe(500_000 + 60_000);
    const longer = decide(resumed, upgrade(version(3, [httpGet("a"), httpGet("b")], { timeoutSeconds: 120 })), env(501_000)).state;
    expect(longer.deadline).toBe(500_000 + 120_000);
    expect(longer.status).toBe("RUNNING");
  });

  it("counts a workflow timeout the old version did not have from the last resume or retry, not the start, as Conductor's checkWorkflowTimeout reads lastRetriedTime", () => {
    const timed = version(2, [httpGet("a"), httpGet("b")], { timeoutSeconds: 60 });
    const paused = decide(atSecondTask([httpGet("a"), httpGet("b")]), { type: "pause" }, env(2_500)).state;
    const resumed = decide(paused, { type: "resume" }, env(500_000)).state;
    expect(resumed.deadline).toBeUndefined();
    const upgraded = decide(resumed, upgrade(timed), env(501_000)).state;
    expect(upgraded.deadline).toBe(500_000 + 60_000);
    // The next tick finds no timeout passed: the minute counts from the resume.
    expect(decide(upgraded, { type: "tick", liveTaskIds: new Set([latestNamed(upgraded, "b").taskId]) }, env(502_000)).state.status).toBe("RUNNING");

    const failed = attemptEnds(atSecondTask([httpGet("a"), httpGet("b")]), "b", 3_000, "FAILED").state;
    expect(failed.status).toBe("FAILED");
    const retried = decide(failed, { type: "retry" }, env(700_000)).state;
    expect(decide(retried, upgrade(timed), env(701_000)).state.deadline).toBe(700_000 + 60_000);
  });
});

describe("an upgrade refused, changing nothing", () => {
  const state = atSecondTask([httpGet("a"), httpGet("b")]);

  it("when a task that ran is not in the new version", () => {
    const error = refusal(state, upgrade(version(2, [httpGet("b")])), 3_000);
    expect(error.kind).toBe("CONFLICT");
    expect(error.message).toBe("Cannot upgrade workflow wf-1 to orders version 2: its task a has run (COMPLETED), and that version has no task of that reference name");
  });

  it("when a task that ran has another type in the new version", () => {
    const v2 = version(2, [httpGet("a"), { name: "b", taskReferenceName: "b", type: "WAIT" }]);
    expect(refusal(state, upgrade(v2), 3_000).message).toBe("Cannot upgrade workflow wf-1 to orders version 2: its task b has run as a HTTP, which that version makes a WAIT");
  });

  it("when a task that ran is somewhere else in the new version (here: in a fork's branch)", () => {
    const v2 = version(2, [httpGet("a"), ...fork("f", [[httpGet("b")], [httpGet("c")]])]);
    expect(refusal(state, upgrade(v2), 3_000).message).toBe("Cannot upgrade workflow wf-1 to orders version 2: its task b has run at the top level, which that version puts in f[branch 1]");
  });

  it("when the definition is another workflow's", () => {
    const other = { ...version(2, [httpGet("a"), httpGet("b")]), name: "invoices" };
    const error = refusal(state, upgrade(other), 3_000);
    expect(error.kind).toBe("INVALID");
    expect(error.message).toContain("it is an execution of orders");
  });

  it("when taskOutput names a task the upgrade does not skip", () => {
    const v2 = version(2, [httpGet("a"), httpGet("added"), httpGet("b")]);
    const error = refusal(state, upgrade(v2, { taskOutput: { b: { x: 1 }, added: {} } }), 3_000);
    expect(error.kind).toBe("INVALID");
    expect(error.message).toBe("Cannot upgrade workflow wf-1 to orders version 2: taskOutput names b, which the upgrade does not skip (it skips added)");
  });

  it("when the execution has ended", () => {
    const ended = attemptEnds(state, "b", 3_000).state;
    expect(ended.status).toBe("COMPLETED");
    const error = refusal(ended, upgrade(version(2, [httpGet("a"), httpGet("b"), httpGet("c")])), 4_000);
    expect(error.kind).toBe("CONFLICT");
    expect(error.message).toBe("Cannot upgrade workflow wf-1: its status is COMPLETED");
  });
});

describe("upgrading an execution whose dynamic fork in a loop forked different tasks in its iterations", () => {
  const forked = (ref: string, path: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { uri: `https://example.com/${path}`, method: "GET" } });
  const loopOfForks: WorkflowTaskDef = {
    name: "pages",
    taskReferenceName: "pages",
    type: "DO_WHILE",
    inputParameters: { items: "${workflow.input.pages}" },
    loopOver: [
      { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { tasks: "${pages.output.loopItem}", inputs: {} }, dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs" },
      { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: [] },
    ],
  };

  it("keeps each forked instance at its own run's step, though a later run forked its name again", () => {
    const pages = [[forked("a", "first")], [forked("a", "second"), forked("b", "b")]];
    let state = startedWith("orders", [loopOfForks], { pages }).state;
    state = attemptEnds(state, "a__1", 2_000).state;
    expect(state.definition.dynamicForks).toHaveLength(2);
    const v2 = version(2, [httpGet("added"), loopOfForks, httpGet("after")]);
    const upgraded = decide(state, upgrade(v2, { taskOutput: { added: {} } }), env(3_000)).state;
    const stepOf = (ref: string) => upgradedStep(upgraded, ref);
    expect(stepOf("a__1")).toMatchObject({ inputParameters: { uri: "https://example.com/first" } });
    expect(stepOf("a__2")).toMatchObject({ inputParameters: { uri: "https://example.com/second" } });
    state = attemptEnds(attemptEnds(upgraded, "a__2", 4_000).state, "b__2", 4_100).state;
    expect(latestNamed(state, "pages").status).toBe("COMPLETED");
    expect(attemptEnds(state, "after", 5_000).state.status).toBe("COMPLETED");
  });
});

/** The definition task the latest instance named `ref` runs as, in `state`'s plan. */
function upgradedStep(state: WorkflowExecution, ref: string): WorkflowTaskDef | undefined {
  return planOf(state.definition).steps[latestNamed(state, ref).definitionIndex]?.task;
}
