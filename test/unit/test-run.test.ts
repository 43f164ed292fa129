import { describe, expect, it } from "vitest";
import { createExecution, isBlocked, type Decision } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import type { TaskMock, WorkflowExecution, WorkflowTaskDef, WorkflowTestPlan } from "../../src/engine/model";
import { applyTestMocks, childTestPlan, EMPTY_TEST_PLAN, ownTestQueues } from "../../src/engine/test-run";
import { workerQueueKey } from "../../src/engine/tasks/simple";
import { keptTestDomain } from "../../src/engine/test-domain";
import { env, httpGet } from "./engine-env";

const simple = (ref: string): WorkflowTaskDef => ({ name: `w_${ref}`, taskReferenceName: ref, type: "SIMPLE", inputParameters: {} });

function plan(mocks: Record<string, TaskMock[]>): WorkflowTestPlan {
  return { taskMocks: Object.entries(mocks).map(([taskReferenceName, list]) => ({ taskReferenceName, mocks: list })), subWorkflows: [] };
}

/** A test run of `tasks` with `test`, started at 1,000 with its mocks applied as the actor applies them. */
function testRun(tasks: WorkflowTaskDef[], test: WorkflowTestPlan | undefined, now = 1_000): Decision {
  const definition = { name: "tested", version: 1, schemaVersion: 2, tasks };
  // One environment for both, as the actor's: its ids must not repeat.
  const at = env(now);
  const started = decide(createExecution({ workflowId: "wf-1", definition, input: {}, ...(test === undefined ? {} : { test }) }, now), { type: "start" }, at);
  return applyTestMocks(started, at);
}

const statuses = (state: WorkflowExecution) => state.tasks.map((task) => `${task.referenceTaskName}:${task.status}`);

describe("applyTestMocks: a test run's tasks take their mocked results", () => {
  it("answers mocked tasks within the decision: nothing is dispatched or queued for them", () => {
    const { state, effects } = testRun([httpGet("call"), simple("work")], plan({ call: [{ status: "COMPLETED", output: { a: 1 } }], work: [{ status: "COMPLETED", output: { b: 2 } }] }));
    expect(state.status).toBe("COMPLETED");
    expect(statuses(state)).toEqual(["call:COMPLETED", "work:COMPLETED"]);
    expect(effects.filter((effect) => effect.kind === "dispatch" || effect.kind === "queueTask")).toEqual([]);
    // Every mock was used up.
    expect(state.test?.taskMocks.map((entry) => entry.mocks.length)).toEqual([0, 0]);
  });

  it("leaves a task without a mock to run as it would: its dispatch or queue push stays", () => {
    const { state, effects } = testRun([simple("work"), httpGet("call")], plan({ work: [{ status: "COMPLETED", output: {} }] }));
    expect(statuses(state)).toEqual(["work:COMPLETED", "call:IN_PROGRESS"]);
    expect(effects).toEqual([{ kind: "dispatch", taskId: state.tasks[1]!.taskId, attempt: 1 }]);
  });

  it("is no change at all outside a test run, or for a paused one", () => {
    const plain = testRun([httpGet("call")], undefined);
    expect(plain.effects.map((effect) => effect.kind)).toEqual(["dispatch"]);
    const definition = { name: "tested", version: 1, schemaVersion: 2, tasks: [simple("a"), simple("b")] };
    const running = decide(createExecution({ workflowId: "wf-1", definition, input: {}, test: plan({ b: [{ status: "COMPLETED", output: {} }] }) }, 1_000), { type: "start" }, env(1_000));
    const paused = decide(running.state, { type: "pause" }, env(1_001)).state;
    const completedA = decide(paused, { type: "externalUpdate", taskId: paused.tasks[0]!.taskId, status: "COMPLETED", output: {} }, env(1_002));
    expect(applyTestMocks(completedA, env(1_002))).toBe(completedA);
  });

  it("fails a task for good, saying why, when its mock cannot be taken (an output over the size limit)", () => {
    const huge = { blob: "x".repeat(800_000) };
    const { state } = testRun([simple("work")], plan({ work: [{ status: "COMPLETED", output: huge }] }));
    expect(state.status).toBe("FAILED");
    expect(state.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    expect(state.tasks[0]!.reasonForIncompletion).toContain("The mocked result could not be applied");
  });

  it("keeps a reference name like __proto__ as data", () => {
    const mocks: WorkflowTestPlan = { taskMocks: [{ taskReferenceName: "__proto__", mocks: [{ status: "COMPLETED", output: { ok: true } }] }], subWorkflows: [] };
    const { state } = testRun([simple("__proto__")], mocks);
    expect(statuses(state)).toEqual(["__proto__:COMPLETED"]);
  });

  it("counts a test run blocked at a SIMPLE task no mock answers, where an ordinary run is only busy", () => {
    expect(isBlocked(testRun([simple("work")], EMPTY_TEST_PLAN).state)).toBe(true);
    expect(isBlocked(testRun([simple("work")], undefined).state)).toBe(false);
  });

  it("gives a child the plan its parent's request names for its task, an empty one otherwise, and none outside test runs", () => {
    const childPlan = plan({ inner: [{ status: "COMPLETED", output: {} }] });
    const sub: WorkflowTaskDef = { name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", inputParameters: {}, subWorkflowParam: { name: "kid", version: 1 } };
    const parent = testRun([sub], { taskMocks: [], subWorkflows: [{ taskReferenceName: "child", plan: childPlan }] }).state;
    expect(childTestPlan(parent, parent.tasks[0]!)).toBe(childPlan);
    const other = testRun([sub], EMPTY_TEST_PLAN).state;
    expect(childTestPlan(other, other.tasks[0]!)).toEqual(EMPTY_TEST_PLAN);
    const plain = testRun([sub], undefined).state;
    expect(childTestPlan(plain, plain.tasks[0]!)).toBeUndefined();
  });

  it("gives a child its parent's own domain only when the child's tasks go there (its taskToDomain keeps the parent's *)", () => {
    const sub: WorkflowTaskDef = { name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", inputParameters: {}, subWorkflowParam: { name: "kid", version: 1 } };
    const parent = testRun([sub], { ...EMPTY_TEST_PLAN, domain: "d-1" }).state;
    expect(childTestPlan(parent, parent.tasks[0]!, { "*": "d-1", w_x: "gpu" })).toEqual({ ...EMPTY_TEST_PLAN, domain: "d-1" });
    // Domains of its own (subWorkflowParam.taskToDomain): a user's, never delisted by the run.
    expect(childTestPlan(parent, parent.tasks[0]!, { "*": "users-own" })).toEqual(EMPTY_TEST_PLAN);
    expect(childTestPlan(parent, parent.tasks[0]!, {})).toEqual(EMPTY_TEST_PLAN);
    const older = testRun([sub], EMPTY_TEST_PLAN).state;
    expect(childTestPlan(older, older.tasks[0]!, { "*": "d-1" })).toEqual(EMPTY_TEST_PLAN);
  });
});

describe("ownTestQueues: the queues of a test run's own domain", () => {
  /** A test run of two SIMPLE tasks, `a` in the run's own domain, `b` in one its caller gave. */
  function started(test: WorkflowTestPlan | undefined, testRunDomain?: string): Decision {
    const tasks: WorkflowTaskDef[] = [
      { type: "FORK_JOIN", name: "fork", taskReferenceName: "fork", inputParameters: {}, forkTasks: [[simple("a")], [simple("b")]] },
      { type: "JOIN", name: "join", taskReferenceName: "join", inputParameters: {}, joinOn: ["a", "b"] },
    ];
    const definition = { name: "tested", version: 1, schemaVersion: 2, tasks };
    const taskToDomain = { "*": "d-1", w_b: "users-own" };
    const params = { workflowId: "wf-1", definition, input: {}, taskToDomain, ...(test === undefined ? {} : { test }), ...(testRunDomain === undefined ? {} : { testRunDomain }) };
    return decide(createExecution(params, 1_000), { type: "start" }, env(1_000));
  }

  it("names the queues its tasks went to in its own domain, never one its caller gave", () => {
    const run = started({ ...EMPTY_TEST_PLAN, domain: "d-1" });
    expect(run.effects.filter((effect) => effect.kind === "queueTask")).toHaveLength(2);
    expect(ownTestQueues(run.state, run.effects)).toEqual([workerQueueKey("w_a", "d-1")]);
  });

  it("names those of an execution a test run started that kept its domain (a failure workflow, a START_WORKFLOW's), as the run's own", () => {
    const run = started(undefined, "d-1");
    expect(ownTestQueues(run.state, run.effects)).toEqual([workerQueueKey("w_a", "d-1")]);
  });

  it("names none for a run without a domain of its own (an older test run, or no test run)", () => {
    for (const test of [EMPTY_TEST_PLAN, undefined]) {
      const run = started(test);
      expect(ownTestQueues(run.state, run.effects)).toEqual([]);
    }
  });
});

describe("keptTestDomain: the test run domain an execution's start keeps", () => {
  const plain = (extra: Partial<WorkflowExecution>): WorkflowExecution => ({ ...createExecution({ workflowId: "wf-1", definition: { name: "w", version: 1, schemaVersion: 2, tasks: [] }, input: {} }, 1_000), ...extra });

  it("is the starter's own domain when the started execution's * is that domain, else none", () => {
    for (const starter of [plain({ test: { ...EMPTY_TEST_PLAN, domain: "d-1" } }), plain({ testRunDomain: "d-1" })]) {
      expect(keptTestDomain(starter, { "*": "d-1", w_x: "gpu" })).toBe("d-1");
      // Domains of its own (a START_WORKFLOW's or subWorkflowParam's taskToDomain): a user's, never delisted.
      expect(keptTestDomain(starter, { "*": "users-own" })).toBeUndefined();
      expect(keptTestDomain(starter, { w_x: "d-1" })).toBeUndefined();
    }
    expect(keptTestDomain(plain({}), { "*": "d-1" })).toBeUndefined();
    expect(keptTestDomain(plain({ test: EMPTY_TEST_PLAN }), { "*": "d-1" })).toBeUndefined();
  });
});
