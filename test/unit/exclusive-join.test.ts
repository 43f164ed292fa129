// EXCLUSIVE_JOIN in the decider: which task it joins on and how it ends (conductor-oss/conductor
// core/src/main/java/com/netflix/conductor/core/execution/tasks/ExclusiveJoin.java), with the lanes of a fork and the
// iterations of a loop, and its registration checks.
import { describe, expect, it } from "vitest";
import type { JsonObject, TaskExecution, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { exclusiveJoinEnding } from "../../src/engine/tasks/exclusive-join";
import { decide } from "./frozen-decide";
import { attemptEnds, env, httpGet, latestNamed, registrationErrors, startedWith } from "./engine-env";

const exclusiveJoin = (ref: string, joinOn: string[], defaultExclusiveJoinTask?: string[]): WorkflowTaskDef => ({
  name: ref,
  taskReferenceName: ref,
  type: "EXCLUSIVE_JOIN",
  joinOn,
  ...(defaultExclusiveJoinTask === undefined ? {} : { defaultExclusiveJoinTask }),
});
/** A fork whose first branch is `first`, the others each one task of `others`, and its JOIN on all of them. */
const fork = (first: WorkflowTaskDef, others: WorkflowTaskDef[]): WorkflowTaskDef[] => [
  { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[first], ...others.map((task) => [task])] },
  { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: [first, ...others].map((task) => task.taskReferenceName) },
];
/** A SWITCH in loop `loop` taking the case named by the loop's iteration (none when it has no such case). */
const switchOnIteration = (decisionCases: Record<string, WorkflowTaskDef[]>): WorkflowTaskDef => ({
  name: "side",
  taskReferenceName: "side",
  type: "SWITCH",
  evaluatorType: "value-param",
  expression: "n",
  inputParameters: { n: "${loop.output.iteration}" },
  decisionCases,
  defaultCase: [],
});

const refs = (state: WorkflowExecution) => state.tasks.map((task) => `${task.referenceTaskName}:${task.status}`);
/** `state` with the latest instance of each of `changes`' names changed so (a hand-made standing, for the pure ending). */
function standing(state: WorkflowExecution, changes: Record<string, Partial<TaskExecution>>): WorkflowExecution {
  return { ...state, tasks: state.tasks.map((task) => (Object.hasOwn(changes, task.referenceTaskName) && latestNamed(state, task.referenceTaskName) === task ? { ...task, ...changes[task.referenceTaskName] } : task)) };
}

describe("EXCLUSIVE_JOIN", () => {
  // Three tasks running beside an EXCLUSIVE_JOIN, as the pure ending sees them.
  const started = startedWith("xj", fork(exclusiveJoin("xj", ["x", "a"], ["d"]), [httpGet("a"), httpGet("d"), httpGet("x")])).state;
  const join = () => latestNamed(started, "xj");

  it("ends with the first of its joinOn that ran, passing over one that has no instance or was SKIPPED", () => {
    expect(join().status).toBe("IN_PROGRESS");
    expect(exclusiveJoinEnding(started, join())).toBeUndefined();
    const state = standing(started, { x: { status: "SKIPPED" }, a: { status: "COMPLETED", outputData: { from: "a" } }, d: { status: "COMPLETED", outputData: { from: "d" } } });
    expect(exclusiveJoinEnding(state, join())).toEqual({ status: "COMPLETED", outputData: { from: "a" } });
    const unnamed = startedWith("xj", fork(exclusiveJoin("xj", ["nowhere", "a"]), [httpGet("a")])).state;
    const done = standing(unnamed, { a: { status: "COMPLETED_WITH_ERRORS", outputData: { partial: true } } });
    expect(exclusiveJoinEnding(done, latestNamed(done, "xj"))).toEqual({ status: "COMPLETED", outputData: { partial: true } });
  });

  it("fails with the reason of a joined task that ended unsuccessfully, as Conductor's", () => {
    for (const status of ["FAILED", "FAILED_WITH_TERMINAL_ERROR", "CANCELED", "TIMED_OUT"] as const) {
      const state = standing(started, { x: { status: "SKIPPED" }, a: { status, reasonForIncompletion: "a went wrong" }, d: { status: "COMPLETED" } });
      expect(exclusiveJoinEnding(state, join())).toEqual({ status: "FAILED", outputData: {}, reasonForIncompletion: "a went wrong" });
    }
  });

  it("looks at its defaultExclusiveJoinTask when the first of its joinOn that ran is still running (Conductor's), and waits while that one is", () => {
    const running = standing(started, { x: { status: "SKIPPED" }, a: { status: "IN_PROGRESS" }, d: { status: "COMPLETED", outputData: { from: "d" } } });
    expect(exclusiveJoinEnding(running, join())).toEqual({ status: "COMPLETED", outputData: { from: "d" } });
    expect(exclusiveJoinEnding(standing(running, { d: { status: "SCHEDULED" } }), join())).toBeUndefined();
    // None of its names ran at all: it waits (for good, as Conductor's).
    const skipped = standing(started, { x: { status: "SKIPPED" }, a: { status: "SKIPPED" }, d: { status: "SKIPPED" } });
    expect(exclusiveJoinEnding(skipped, join())).toBeUndefined();
  });

  it("in a fork, ends COMPLETED with an optional joined task that failed in another branch: the failure is absorbed first", () => {
    let state = startedWith("xj", fork(exclusiveJoin("xj", ["a"]), [httpGet("a", { optional: true })])).state;
    state = attemptEnds(state, "a", 1_001, "FAILED").state;
    expect(latestNamed(state, "a").status).toBe("COMPLETED_WITH_ERRORS");
    expect(latestNamed(state, "xj")).toMatchObject({ status: "COMPLETED", outputData: {} });
    expect(state.status).toBe("COMPLETED");
  });

  it("in a fork, waits for a joined task's retry rather than ending with its failed attempt", () => {
    let state = startedWith("xj", fork(exclusiveJoin("xj", ["a"]), [httpGet("a", { retryCount: 1, retryDelaySeconds: 0 } as Partial<WorkflowTaskDef>)])).state;
    state = attemptEnds(state, "a", 1_001, "FAILED").state;
    expect(refs(state)).toEqual(["fan:COMPLETED", "xj:IN_PROGRESS", "a:FAILED", "fan_join:IN_PROGRESS", "a:IN_PROGRESS"]);
    state = attemptEnds(state, "a", 1_002, "COMPLETED", { body: "second" }).state;
    expect(latestNamed(state, "xj")).toMatchObject({ status: "COMPLETED", outputData: { body: "second" } });
  });

  it("on a workflow retry that runs the SWITCH before it again, passes over a joined task's run the retry replaced (it failed again at once for it)", () => {
    // `first` and `ta` both failed permissively, the EXCLUSIVE_JOIN failing for `ta`. The retry runs the lane again from
    // `first`, whose output now takes the SWITCH's other case: `ta`'s failure, marked retried, failed it again.
    const route: WorkflowTaskDef = { name: "route", taskReferenceName: "route", type: "SWITCH", evaluatorType: "value-param", expression: "to", inputParameters: { to: "${first.output.body}" }, decisionCases: { b: [httpGet("tb")] }, defaultCase: [httpGet("ta", { permissive: true })] };
    let state = startedWith("xj_retry_route", [httpGet("first", { permissive: true }), route, exclusiveJoin("xj", ["ta", "tb"])]).state;
    state = attemptEnds(state, "first", 1_001, "FAILED").state;
    state = attemptEnds(state, "ta", 1_002, "FAILED").state;
    expect([state.status, state.reasonForIncompletion]).toEqual(["FAILED", "Task xj failed: ta went wrong"]);
    state = decide(state, { type: "retry" }, env(2_000)).state;
    state = attemptEnds(state, "first", 2_001, "COMPLETED", { body: "b" }).state;
    state = attemptEnds(state, "tb", 2_002, "COMPLETED", { body: "from b" }).state;
    expect(latestNamed(state, "xj")).toMatchObject({ status: "COMPLETED", outputData: { body: "from b" } });
    expect(state.status).toBe("COMPLETED");
  });

  it("on a workflow retry that runs the SWITCH before it again, ends with the route the lane's new run took, not a joined task that completed before the retry", () => {
    // `first` failed permissively and `ta` completed: the workflow failed at its end. The retry runs the lane again from
    // `first`, whose output now takes the SWITCH's other case; the EXCLUSIVE_JOIN, reached anew, ended with `ta`'s
    // COMPLETED run from before the retry, a route this run did not take.
    const route: WorkflowTaskDef = { name: "route", taskReferenceName: "route", type: "SWITCH", evaluatorType: "value-param", expression: "to", inputParameters: { to: "${first.output.body}" }, decisionCases: { b: [httpGet("tb")] }, defaultCase: [httpGet("ta")] };
    let state = startedWith("xj_retry_old_route", [httpGet("first", { permissive: true }), route, exclusiveJoin("xj", ["ta", "tb"])]).state;
    state = attemptEnds(state, "first", 1_001, "FAILED").state;
    state = attemptEnds(state, "ta", 1_002, "COMPLETED", { body: "from a" }).state;
    expect([state.status, latestNamed(state, "xj").outputData]).toEqual(["FAILED", { body: "from a" }]);
    state = decide(state, { type: "retry" }, env(2_000)).state;
    state = attemptEnds(state, "first", 2_001, "COMPLETED", { body: "b" }).state;
    state = attemptEnds(state, "tb", 2_002, "COMPLETED", { body: "from b" }).state;
    expect(latestNamed(state, "xj")).toMatchObject({ status: "COMPLETED", outputData: { body: "from b" } });
    expect(state.status).toBe("COMPLETED");
  });

  it("in a DO_WHILE's loop, joins on its own iteration's tasks (Conductor appends the iteration)", () => {
    const side = switchOnIteration({ "1": [httpGet("a")], "2": [httpGet("b")] });
    const loop: WorkflowTaskDef = { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "$.loop['iteration'] < 2", loopOver: [side, exclusiveJoin("pick", ["a", "b"])] };
    let state = startedWith("xj_loop", [loop]).state;
    state = attemptEnds(state, "a__1", 1_001, "COMPLETED", { body: "one" }).state;
    expect(latestNamed(state, "pick__1")).toMatchObject({ status: "COMPLETED", outputData: { body: "one" } });
    state = attemptEnds(state, "b__2", 1_002, "COMPLETED", { body: "two" }).state;
    expect(latestNamed(state, "pick__2")).toMatchObject({ status: "COMPLETED", outputData: { body: "two" } });
    expect(state.status).toBe("COMPLETED");
  });

  it("in a DO_WHILE's loop, looks its defaultExclusiveJoinTask up as written (a task before the loop, as Conductor's), else in its own iteration", () => {
    const side = switchOnIteration({ "1": [httpGet("a")] });
    // Conductor's ExclusiveJoin appends the iteration to its joinOn only: `quote`, before the loop, is found as written.
    const before: WorkflowTaskDef = { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "$.loop['iteration'] < 2", loopOver: [side, exclusiveJoin("pick", ["a"], ["quote"])] };
    let state = startedWith("xj_loop_default", [httpGet("quote"), before]).state;
    state = attemptEnds(state, "quote", 1_001, "COMPLETED", { body: "quoted" }).state;
    state = attemptEnds(state, "a__1", 1_002, "COMPLETED", { body: "one" }).state;
    expect(latestNamed(state, "pick__1")).toMatchObject({ status: "COMPLETED", outputData: { body: "one" } });
    // Iteration 2 takes no case: the default, before the loop.
    expect(latestNamed(state, "pick__2")).toMatchObject({ status: "COMPLETED", outputData: { body: "quoted" } });
    expect(state.status).toBe("COMPLETED");
    // A default inside the loop (which Conductor's would never find) is its own iteration's.
    const within: WorkflowTaskDef = { ...before, loopOver: [httpGet("quote"), side, exclusiveJoin("pick", ["a"], ["quote"])] };
    state = startedWith("xj_loop_default_within", [within]).state;
    state = attemptEnds(state, "quote__1", 1_001, "COMPLETED", { body: "q1" }).state;
    state = attemptEnds(state, "a__1", 1_002, "COMPLETED", { body: "one" }).state;
    state = attemptEnds(state, "quote__2", 1_003, "COMPLETED", { body: "q2" }).state;
    expect(latestNamed(state, "pick__2")).toMatchObject({ status: "COMPLETED", outputData: { body: "q2" } });
    expect(state.status).toBe("COMPLETED");
  });

  it("registers with joinOn and defaultExclusiveJoinTask lists of names, or none; refuses anything else at the field's path", () => {
    const task = (fields: JsonObject) => [{ name: "a", taskReferenceName: "a", type: "NOOP" }, { name: "xj", taskReferenceName: "xj", type: "EXCLUSIVE_JOIN", ...fields }];
    expect(registrationErrors(task({ joinOn: ["a"], defaultExclusiveJoinTask: ["a"] }))).toEqual([]);
    expect(registrationErrors(task({}))).toEqual([]);
    expect(registrationErrors(task({ joinOn: null, defaultExclusiveJoinTask: null }))).toEqual([]);
    // Names no task has are Conductor's to accept: never found, they are passed over.
    expect(registrationErrors(task({ joinOn: ["elsewhere"] }))).toEqual([]);
    expect(registrationErrors(task({ joinOn: "a", defaultExclusiveJoinTask: [1] }))).toEqual([
      "tasks[1].joinOn: joinOn must be a list of task reference names, the first of which that ran the EXCLUSIVE_JOIN ends with, but received the string \"a\"",
      "tasks[1].defaultExclusiveJoinTask[0]: each defaultExclusiveJoinTask entry must be a task reference name, but received the number 1",
    ]);
  });
});
