import { describe, expect, it } from "vitest";
import { DEFAULT_ENGINE_CONFIG } from "../../src/engine/config";
import { createExecution, nextDeadline, type Decision, type ExecutionEvent } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import type { WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { env, refusal } from "./engine-env";

// The decider's part of Conductor's skipTaskFromWorkflow: the engine alone, no actor, no I/O.

const http = (ref: string, extra: Partial<WorkflowTaskDef> = {}, uri = `http://a.test/${ref}`): WorkflowTaskDef => ({
  name: ref,
  taskReferenceName: ref,
  type: "HTTP",
  inputParameters: { uri, method: "GET" },
  ...extra,
});
const hook = (ref: string, timeoutSeconds = 0): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "WAIT_FOR_WEBHOOK", inputParameters: { timeoutSeconds } });
const sub = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "child" } } });
/** A SWITCH choosing its case by the input parameter `kind` (resolved from `kind`, a template or a literal). */
const route = (ref: string, kind: string, decisionCases: Record<string, WorkflowTaskDef[]>, defaultCase: WorkflowTaskDef[] = []): WorkflowTaskDef => ({
  name: ref,
  taskReferenceName: ref,
  type: "SWITCH",
  evaluatorType: "value-param",
  expression: "kind",
  inputParameters: { kind },
  decisionCases,
  defaultCase,
});

function started(tasks: WorkflowTaskDef[], extra: Partial<WorkflowDef> = {}): WorkflowExecution {
  const definition: WorkflowDef = { name: "skips", version: 1, schemaVersion: 2, tasks, ...extra };
  return decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
}

const skip = (taskReferenceName: string, fields: { taskInput?: Record<string, string>; taskOutput?: Record<string, string> } = {}): ExecutionEvent => ({
  type: "skipTask",
  taskReferenceName,
  ...fields,
});

/** Feeds the in-flight HTTP task `ref` its response. */
function answer(state: WorkflowExecution, ref: string, now: number, output: Record<string, string> = {}): Decision {
  const task = state.tasks.findLast((candidate) => candidate.referenceTaskName === ref)!;
  return decide(state, { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "COMPLETED", output }, env(now));
}

describe("skipping a task not reached yet", () => {
  it("is remembered, changes no task, and when reached appends a SKIPPED instance with the given input and output that later tasks read", () => {
    const state = started([http("a"), http("b"), http("c", {}, "http://a.test/c?x=${b.output.x}&why=${b.input.why}")]);
    const remembered = decide(state, skip("b", { taskInput: { why: "manual" }, taskOutput: { x: "1" } }), env(1_500));
    expect(remembered.effects).toEqual([]);
    expect(remembered.state.tasks).toBe(state.tasks);

    const moved = answer(remembered.state, "a", 2_000);
    expect(moved.state.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["a", "COMPLETED"],
      ["b", "SKIPPED"],
      ["c", "IN_PROGRESS"],
    ]);
    expect(moved.state.tasks[1]).toMatchObject({ inputData: { why: "manual" }, outputData: { x: "1" }, scheduledTime: 2_000, startTime: 2_000, endTime: 2_000, updateTime: 2_000, seq: 2, definitionIndex: 1 });
    expect(moved.state.tasks[2]!.inputData).toMatchObject({ uri: "http://a.test/c?x=1&why=manual" });
    // Only c is dispatched: b never runs.
    expect(moved.effects).toEqual([{ kind: "dispatch", taskId: moved.state.tasks[2]!.taskId, attempt: 1 }]);
    // Used up: a later run of the same position (a rerun, say) would run it.
    expect(moved.state.pendingSkips).toBeUndefined();
  });

  it("without a body the skipped instance has empty input and output; skipping the last task completes the workflow with its output", () => {
    const state = decide(started([http("a"), http("b")]), skip("b", { taskOutput: { result: "default" } }), env(1_500)).state;
    const done = answer(state, "a", 2_000).state;
    expect(done.status).toBe("COMPLETED");
    expect(done.output).toEqual({ result: "default" });
    const bare = answer(decide(started([http("a"), http("b")]), skip("b"), env(1_500)).state, "a", 2_000).state;
    expect(bare.tasks[1]).toMatchObject({ status: "SKIPPED", inputData: {}, outputData: {} });
  });

  it("a second skip of the same task replaces the first one's input and output", () => {
    let state = decide(started([http("a"), http("b")]), skip("b", { taskOutput: { n: "1" } }), env(1_500)).state;
    state = decide(state, skip("b", { taskOutput: { n: "2" } }), env(1_600)).state;
    expect(answer(state, "a", 2_000).state.tasks[1]!.outputData).toEqual({ n: "2" });
  });

  it("refuses more pending input and output than one payload may hold, and changes nothing", () => {
    const blob = "x".repeat(DEFAULT_ENGINE_CONFIG.maxPayloadBytes / 2);
    const state = decide(started([http("a"), http("b"), http("c")]), skip("b", { taskOutput: { blob } }), env(1_500)).state;
    const error = refusal(state, skip("c", { taskOutput: { blob } }), 2_000);
    expect({ kind: error.kind, message: error.message }).toEqual({ kind: "INVALID", message: expect.stringContaining("MAX_PAYLOAD_BYTES") });
  });
});

describe("skipping a pending task", () => {
  it("an HTTP request in flight: SKIPPED at once with the given output (taskInput replacing its input), the dispatch canceled, the next task started; the late result is stale", () => {
    const state = started([http("a"), http("b")]);
    const inFlight = state.tasks[0]!;
    const skipped = decide(state, skip("a", { taskInput: { replaced: "yes" }, taskOutput: { v: "s" } }), env(1_500));
    expect(skipped.state.tasks[0]).toMatchObject({ taskId: inFlight.taskId, status: "SKIPPED", inputData: { replaced: "yes" }, outputData: { v: "s" }, endTime: 1_500, updateTime: 1_500 });
    expect(skipped.state.tasks[0]!.attemptDeadline).toBeUndefined();
    expect(skipped.state.tasks[1]).toMatchObject({ referenceTaskName: "b", status: "IN_PROGRESS" });
    expect(skipped.effects).toEqual([
      { kind: "cancelDispatch", taskId: inFlight.taskId },
      { kind: "dispatch", taskId: skipped.state.tasks[1]!.taskId, attempt: 1 },
    ]);
    const late = decide(skipped.state, { type: "dispatchResult", taskId: inFlight.taskId, attempt: inFlight.attempt, status: "COMPLETED", output: { body: "late" } }, env(1_600));
    expect(late.state).toBe(skipped.state);
  });

  it("a waiting webhook task: its timeout is cleared and a later completion is refused as not pending", () => {
    const state = started([hook("hook", 10), http("b")]);
    expect(nextDeadline(state)).toBe(11_000);
    const skipped = decide(state, skip("hook"), env(1_500)).state;
    expect(skipped.tasks[0]).toMatchObject({ status: "SKIPPED", outputData: {}, awaitingExternal: false });
    expect(skipped.tasks[0]!.timeoutAt).toBeUndefined();
    // The hook's 11 s, earlier than the next task's attempt deadline (dispatched at 1.5 s), no longer counts.
    expect([nextDeadline(skipped), skipped.tasks[1]!.attemptDeadline]).toEqual([41_500, 41_500]);
    const late = refusal(skipped, { type: "externalUpdate", taskId: skipped.tasks[0]!.taskId, status: "COMPLETED", output: {} }, 2_000);
    expect({ kind: late.kind, message: late.message }).toEqual({ kind: "CONFLICT", message: expect.stringContaining("its status is SKIPPED") });
  });

  it("a retry waiting out its delay becomes SKIPPED; the failed instance stays as it was", () => {
    const state = started([http("a", { retryCount: 1, retryDelaySeconds: 3600 }), http("b")]);
    const failed = decide(state, { type: "dispatchResult", taskId: state.tasks[0]!.taskId, attempt: state.tasks[0]!.attempt, status: "FAILED", output: {} }, env(1_200)).state;
    expect(failed.tasks.map((task) => task.status)).toEqual(["FAILED", "SCHEDULED"]);
    const skipped = decide(failed, skip("a"), env(1_500)).state;
    expect(skipped.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["a", "FAILED"],
      ["a", "SKIPPED"],
      ["b", "IN_PROGRESS"],
    ]);
    expect(skipped.tasks[1]!.startTime).toBe(1_500);
  });
});

describe("skips refused (nothing changes)", () => {
  it("a workflow that is not RUNNING: PAUSED or finished", () => {
    const state = started([http("a"), http("b")]);
    const paused = decide(state, { type: "pause" }, env(1_200)).state;
    expect(refusal(paused, skip("b"), 2_000)).toMatchObject({ kind: "CONFLICT", message: expect.stringContaining("its status is PAUSED") });
    const terminated = decide(state, { type: "terminate" }, env(1_200)).state;
    expect(refusal(terminated, skip("b"), 2_000)).toMatchObject({ kind: "CONFLICT", message: expect.stringContaining("its status is TERMINATED") });
  });

  it("a reference name that is not in the definition, named in the refusal", () => {
    expect(refusal(started([http("a")]), skip("nope"), 2_000)).toMatchObject({ kind: "INVALID", message: expect.stringContaining("nope") });
  });

  it("a task already processed", () => {
    const state = answer(started([http("a"), hook("b")]), "a", 1_500).state;
    expect(refusal(state, skip("a"), 2_000)).toMatchObject({ kind: "CONFLICT", message: expect.stringContaining("already processed, cannot be skipped") });
  });

  it("a pending SUB_WORKFLOW task (its child would run on detached); a SUB_WORKFLOW task not reached yet can be skipped", () => {
    const state = started([sub("child")]);
    expect(refusal(state, skip("child"), 2_000)).toMatchObject({ kind: "CONFLICT", message: expect.stringContaining("terminate") });
    const ahead = decide(started([http("a"), sub("child")]), skip("child", { taskOutput: { n: "0" } }), env(1_500)).state;
    const done = answer(ahead, "a", 2_000);
    expect(done.state.status).toBe("COMPLETED");
    expect(done.state.tasks[1]).toMatchObject({ taskType: "SUB_WORKFLOW", status: "SKIPPED", outputData: { n: "0" } });
    expect(done.effects).toEqual([]);
  });
});

describe("skips waiting to happen across reopening", () => {
  /** An execution that skipped `c` ahead, then failed at `a`. */
  function failedWithSkip(): WorkflowExecution {
    const state = decide(started([http("a"), http("b"), http("c")]), skip("c", { taskOutput: { kept: "yes" } }), env(1_100)).state;
    const a = state.tasks[0]!;
    return decide(state, { type: "dispatchResult", taskId: a.taskId, attempt: a.attempt, status: "FAILED", output: {} }, env(1_200)).state;
  }

  it("retry keeps them", () => {
    let state = decide(failedWithSkip(), { type: "retry" }, env(1_300)).state;
    state = answer(state, "a", 1_400).state;
    state = answer(state, "b", 1_500).state;
    expect(state.status).toBe("COMPLETED");
    expect(state.tasks.at(-1)).toMatchObject({ referenceTaskName: "c", status: "SKIPPED", outputData: { kept: "yes" } });
  });

  it("restart forgets them", () => {
    let state = decide(failedWithSkip(), { type: "restart" }, env(1_300)).state;
    expect(state.pendingSkips).toBeUndefined();
    state = answer(answer(state, "a", 1_400).state, "b", 1_500).state;
    expect(state.tasks.at(-1)).toMatchObject({ referenceTaskName: "c", status: "IN_PROGRESS" });
  });

  it("rerun forgets those at or after the task it reruns from (all of them without one)", () => {
    const failed = failedWithSkip();
    expect(decide(failed, { type: "rerun", fromTaskId: failed.tasks[0]!.taskId }, env(1_300)).state.pendingSkips).toBeUndefined();
    expect(decide(failed, { type: "rerun" }, env(1_300)).state.pendingSkips).toBeUndefined();
  });
});

describe("skips of tasks inside SWITCH branches", () => {
  it("a task in a branch the SWITCH did not take is refused: the workflow can no longer reach it", () => {
    const state = started([route("route", "a", { a: [hook("a1")], b: [http("b1"), route("inner", "x", { x: [http("x1")] })] }, [http("d1")]), http("after")]);
    expect(state.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["route", "COMPLETED"],
      ["a1", "IN_PROGRESS"],
    ]);
    for (const reference of ["b1", "inner", "x1", "d1"]) {
      expect(refusal(state, skip(reference), 2_000), reference).toMatchObject({ kind: "CONFLICT", message: expect.stringContaining("in a branch SWITCH route did not take") });
    }
    // The task after the SWITCH is still ahead.
    expect(decide(state, skip("after"), env(2_000)).state.pendingSkips).toEqual([{ taskReferenceName: "after" }]);
  });

  it("a skip asked before the SWITCH ran is used up when the branch holding its task is passed over, and does not skip it in a later run", () => {
    const definition = [sub("child"), route("route", "${child.output.kind}", { a: [http("a1")], b: [http("b1")] })];
    let state = decide(started(definition), skip("b1", { taskOutput: { skipped: "yes" } }), env(1_100)).state;
    const child = () => state.tasks[0]!;
    const finish = (kind: string, now: number) =>
      decide(state, { type: "childFinished", taskId: child().taskId, subWorkflowId: child().subWorkflowId!, status: "COMPLETED", output: { kind } }, env(now)).state;
    state = decide(state, { type: "dispatchResult", taskId: child().taskId, attempt: child().attempt, status: "IN_PROGRESS", output: {}, subWorkflowId: "child-1", awaitingExternal: true }, env(1_150)).state;
    state = finish("a", 1_200);
    state = answer(state, "a1", 1_300).state;
    expect(state.status).toBe("COMPLETED");
    expect(state.pendingSkips).toBeUndefined();
    // The child is rerun in place and now routes to b: b1 runs, the skip having been for the run that passed it over.
    state = decide(state, { type: "resumeChild", taskId: child().taskId }, env(1_400)).state;
    state = finish("b", 1_500);
    expect(state.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["child", "COMPLETED"],
      ["route", "COMPLETED"],
      ["b1", "IN_PROGRESS"],
    ]);
  });
});

