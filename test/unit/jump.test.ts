import { describe, expect, it } from "vitest";
import { type Decision, type ExecutionEvent } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import type { JsonObject, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { attemptEnds, env, httpGet, latestNamed, refusal, startedWith } from "./engine-env";

// The decider's part of Orkes' jump to a task (POST /api/workflow/{id}/jump/{taskReferenceName}): the engine alone.

const jump = (taskReferenceName: string, taskInput?: JsonObject): ExecutionEvent => ({ type: "jump", taskReferenceName, ...(taskInput === undefined ? {} : { taskInput }) });
const lines = (state: WorkflowExecution) => state.tasks.map((task) => `${task.referenceTaskName} ${task.status}`);
const fork = (ref: string, branches: WorkflowTaskDef[][]): WorkflowTaskDef[] => [
  { name: ref, taskReferenceName: ref, type: "FORK_JOIN", forkTasks: branches },
  { name: `${ref}_join`, taskReferenceName: `${ref}_join`, type: "JOIN", joinOn: branches.map((branch) => branch.at(-1)!.taskReferenceName) },
];
const loop = (ref: string, loopOver: WorkflowTaskDef[]): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "DO_WHILE", inputParameters: {}, loopOver, loopCondition: "$.loop['iteration'] < 5" });
const dispatched = (decision: Decision) => decision.effects.filter((effect) => effect.kind === "dispatch").map((effect) => "taskId" in effect && decision.state.tasks.find((task) => task.taskId === effect.taskId)!.referenceTaskName);

describe("jumping forward to a task not reached yet", () => {
  it("skips the running task and every task before the target, and runs the target with the input given", () => {
    const state = startedWith("jumps", [httpGet("a"), httpGet("b"), httpGet("c"), httpGet("d")]).state;
    const a = latestNamed(state, "a");
    const jumped = decide(state, jump("c", { uri: "https://example.com/given", method: "POST" }), env(2_000));
    expect(lines(jumped.state)).toEqual(["a SKIPPED", "b SKIPPED", "c IN_PROGRESS"]);
    expect(latestNamed(jumped.state, "a")).toMatchObject({ reasonForIncompletion: "Skipped: workflow jumped to task c", endTime: 2_000 });
    expect(latestNamed(jumped.state, "c").inputData).toEqual({ uri: "https://example.com/given", method: "POST" });
    expect(jumped.effects[0]).toEqual({ kind: "cancelDispatch", taskId: a.taskId });
    expect(dispatched(jumped)).toEqual(["c"]);
    expect(jumped.state.pendingJump).toBeUndefined();
    expect(jumped.state.pendingSkips).toBeUndefined();
    // a's late response changes nothing; the workflow goes on after c.
    expect(attemptEnds(jumped.state, "a", 2_500).state).toBe(jumped.state);
    const next = attemptEnds(jumped.state, "c", 3_000).state;
    expect(lines(next)).toEqual(["a SKIPPED", "b SKIPPED", "c COMPLETED", "d IN_PROGRESS"]);
  });

  it("without an input resolves the target's input from its definition, as when reached normally", () => {
    const state = startedWith("jumps", [httpGet("a"), httpGet("b"), httpGet("c", { inputParameters: { uri: "https://example.com/${workflow.input.who}", method: "GET" } })], { who: "ada" }).state;
    const jumped = decide(state, jump("c"), env(2_000)).state;
    expect(latestNamed(jumped, "c").inputData).toMatchObject({ uri: "https://example.com/ada" });
  });

  it("from inside a fork: the running branches are skipped to their end, the JOIN and what follows it up to the target too", () => {
    const tasks = [httpGet("pre"), ...fork("f", [[httpGet("l1"), httpGet("l2")], [httpGet("r1")]]), httpGet("post"), httpGet("end")];
    let state = attemptEnds(startedWith("jumps", tasks).state, "pre", 1_500).state;
    state = attemptEnds(state, "r1", 1_600).state;
    expect(lines(state)).toEqual(["pre COMPLETED", "f COMPLETED", "l1 IN_PROGRESS", "r1 COMPLETED", "f_join IN_PROGRESS"]);
    const jumped = decide(state, jump("end"), env(2_000));
    expect(lines(jumped.state)).toEqual(["pre COMPLETED", "f COMPLETED", "l1 SKIPPED", "r1 COMPLETED", "f_join SKIPPED", "post SKIPPED", "end IN_PROGRESS", "l2 SKIPPED"]);
    expect(dispatched(jumped)).toEqual(["end"]);
    expect(attemptEnds(jumped.state, "end", 3_000).state.status).toBe("COMPLETED");
  });

  it("from inside a loop: the loop ends SKIPPED with the task it runs, and no other iteration starts", () => {
    const state = startedWith("jumps", [loop("loop", [httpGet("x")]), httpGet("after"), httpGet("end")]).state;
    expect(lines(state)).toEqual(["loop IN_PROGRESS", "x__1 IN_PROGRESS"]);
    const jumped = decide(state, jump("end"), env(2_000)).state;
    expect(lines(jumped)).toEqual(["loop SKIPPED", "x__1 SKIPPED", "after SKIPPED", "end IN_PROGRESS"]);
    expect(attemptEnds(jumped, "end", 3_000).state.status).toBe("COMPLETED");
  });

  it("terminates the child of a running SUB_WORKFLOW task it skips", () => {
    const sub: WorkflowTaskDef = { name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "kid" } } as WorkflowTaskDef;
    let state = startedWith("jumps", [sub, httpGet("end")]).state;
    const child = latestNamed(state, "child");
    state = decide(state, { type: "dispatchResult", taskId: child.taskId, attempt: child.attempt, status: "IN_PROGRESS", output: { subWorkflowId: "kid-1" }, awaitingExternal: true, subWorkflowId: "kid-1" }, env(1_500)).state;
    const jumped = decide(state, jump("end"), env(2_000));
    expect(jumped.effects).toContainEqual({ kind: "terminateChild", taskId: child.taskId, subWorkflowId: "kid-1", reason: "Parent workflow wf-1 workflow jumped to task end" });
    expect(latestNamed(jumped.state, "child").status).toBe("SKIPPED");
  });

  it("in a PAUSED execution stops what runs now and reaches the target, with its input, once resumed", () => {
    const state = decide(startedWith("jumps", [httpGet("a"), httpGet("b"), httpGet("c")]).state, { type: "pause" }, env(1_500)).state;
    const jumped = decide(state, jump("c", { given: true }), env(2_000)).state;
    expect(lines(jumped)).toEqual(["a SKIPPED"]);
    expect(jumped.pendingJump).toEqual({ taskReferenceName: "c", taskInput: { given: true } });
    const resumed = decide(jumped, { type: "resume" }, env(3_000)).state;
    expect(lines(resumed)).toEqual(["a SKIPPED", "b SKIPPED", "c IN_PROGRESS"]);
    expect(latestNamed(resumed, "c").inputData).toEqual({ given: true });
    expect(resumed.pendingJump).toBeUndefined();
  });
});

describe("jumping back to a task that ran", () => {
  it("stops and discards the tasks after it and runs it again, with the input given", () => {
    let state = startedWith("jumps", [httpGet("a"), httpGet("b"), httpGet("c")]).state;
    state = attemptEnds(attemptEnds(state, "a", 1_100).state, "b", 1_200).state;
    const [a, c] = [latestNamed(state, "a"), latestNamed(state, "c")];
    const jumped = decide(state, jump("a", { uri: "https://example.com/again", method: "GET" }), env(2_000));
    expect(lines(jumped.state)).toEqual(["a IN_PROGRESS"]);
    expect(latestNamed(jumped.state, "a")).toMatchObject({ taskId: a.taskId, inputData: { uri: "https://example.com/again", method: "GET" }, reruns: 1 });
    expect(jumped.effects).toEqual([
      { kind: "cancelDispatch", taskId: c.taskId },
      { kind: "dispatch", taskId: a.taskId, attempt: a.attempt + 1 },
    ]);
    const next = attemptEnds(jumped.state, "a", 3_000).state;
    expect(lines(next)).toEqual(["a COMPLETED", "b IN_PROGRESS"]);
  });

  it("from inside a fork back to before it: the fork runs again with fresh branches", () => {
    const tasks = [httpGet("pre"), ...fork("f", [[httpGet("l1")], [httpGet("r1")]]), httpGet("end")];
    let state = attemptEnds(startedWith("jumps", tasks).state, "pre", 1_500).state;
    state = attemptEnds(state, "l1", 1_600).state;
    const jumped = decide(state, jump("pre"), env(2_000)).state;
    expect(lines(jumped)).toEqual(["pre IN_PROGRESS"]);
    const again = attemptEnds(jumped, "pre", 3_000).state;
    expect(lines(again)).toEqual(["pre COMPLETED", "f COMPLETED", "l1 IN_PROGRESS", "r1 IN_PROGRESS", "f_join IN_PROGRESS"]);
    const done = attemptEnds(attemptEnds(attemptEnds(again, "l1", 3_100).state, "r1", 3_200).state, "end", 3_300).state;
    expect(done.status).toBe("COMPLETED");
  });

  it("without a task named: back to the first task, as Orkes documents a null taskReferenceName (from the beginning)", () => {
    let state = startedWith("jumps", [httpGet("a"), httpGet("b"), httpGet("c")]).state;
    state = attemptEnds(attemptEnds(state, "a", 1_100).state, "b", 1_200).state;
    const jumped = decide(state, { type: "jump" }, env(2_000)).state;
    expect(lines(jumped)).toEqual(["a IN_PROGRESS"]);
    expect(latestNamed(jumped, "a")).toMatchObject({ reruns: 1 });
  });
});

describe("a jump refused, changing nothing", () => {
  const tasks = [httpGet("pre"), ...fork("f", [[httpGet("l1")], [httpGet("r1")]]), httpGet("end")];
  const state = startedWith("jumps", tasks).state;

  it("to a task the definition does not have", () => {
    const error = refusal(state, jump("nope"), 2_000);
    expect([error.kind, error.message]).toEqual(["INVALID", "Task reference name nope is not a task of workflow wf-1 (jumps version 1)"]);
  });

  it("to a task inside a fork's branch, or to a JOIN", () => {
    expect(refusal(state, jump("l1"), 2_000).message).toContain("only the workflow's top-level tasks can be jumped to");
    expect(refusal(state, jump("f_join"), 2_000).message).toBe("Task f_join of workflow wf-1 is a JOIN, which waits for its fork's branches: jump to f instead");
  });

  it("in an execution that has ended", () => {
    const ended = decide(state, { type: "terminate" }, env(1_500)).state;
    const error = refusal(ended, jump("end"), 2_000);
    expect([error.kind, error.message]).toEqual(["CONFLICT", "Cannot jump to task end in workflow wf-1: its status is TERMINATED"]);
  });
});
