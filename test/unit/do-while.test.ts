import { doWhileTask as clientDoWhileTask, newLoopTask, httpTask as clientHttpTask } from "@io-orkes/conductor-javascript";
import { describe, expect, it } from "vitest";
import { createExecution, decide as decideAlone, hasEndedTask, isBlocked, nextDeadline, type Decision } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { definitionScripts } from "../../src/engine/definition/scripts";
import { keysReadOff } from "../../src/engine/scripts";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import type { JsonObject, TaskExecution, TaskStatus, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { SHORT_TASK_LIST } from "../../src/engine/draft";
import { storedTasksBytes } from "../../src/engine/limits";
import { enclosingLoops, nextPlanIndex, planIndexOf, planOf } from "../../src/engine/plan";
import { toTaskView } from "../../src/engine/view";
import { attemptEnds, costlyScriptsEnv, env, latestNamed, refusal, startedWith } from "./engine-env";
import { scriptRunner } from "./script-runner";

const http = (ref: string, inputParameters: JsonObject = {}, extra: Partial<WorkflowTaskDef> = {}): WorkflowTaskDef => ({
  name: ref,
  taskReferenceName: ref,
  type: "HTTP",
  inputParameters: { uri: `https://example.com/${ref}`, method: "GET", ...inputParameters },
  ...extra,
});
/** A WAIT with neither duration nor until: it waits to be completed from outside. */
const hold = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });
const loop = (ref: string, loopOver: WorkflowTaskDef[], loopCondition?: string, extra: Partial<WorkflowTaskDef> = {}): WorkflowTaskDef => ({
  name: ref,
  taskReferenceName: ref,
  type: "DO_WHILE",
  inputParameters: {},
  loopOver,
  ...(loopCondition === undefined ? {} : { loopCondition }),
  ...extra,
});
const definitionOf = (tasks: WorkflowTaskDef[]): WorkflowDef => ({ name: "loops", version: 1, schemaVersion: 2, tasks });

const started = (tasks: WorkflowTaskDef[], input: JsonObject = {}, now = 1_000): Decision => startedWith("loops", tasks, input, now);

const instance = latestNamed;

/** `ref`'s in-flight HTTP attempt ends with `status` and `output`. */
const finish = (state: WorkflowExecution, ref: string, now: number, output: JsonObject = { body: ref }, status: TaskStatus = "COMPLETED"): WorkflowExecution => attemptEnds(state, ref, now, status, output).state;

const refs = (state: WorkflowExecution) => state.tasks.map((task) => `${task.referenceTaskName}:${task.status}`);

describe("DO_WHILE plan", () => {
  const definition = definitionOf([http("pre"), loop("loop", [http("a"), http("b")], "$.loop.iteration < 3"), http("post")]);
  const at = (ref: string) => planIndexOf(definition, ref);

  it("places the loop's tasks after the DO_WHILE, the last followed by the DO_WHILE again, its successor after them", () => {
    const plan = planOf(definition);
    expect(plan.steps.map((step) => step.task.taskReferenceName)).toEqual(["pre", "loop", "a", "b", "post"]);
    expect(plan.hasLoops).toBe(true);
    expect(plan.steps[at("loop")]).toMatchObject({ next: at("post"), loop: { end: at("post") } });
    expect(plan.steps[at("a")]).toMatchObject({ next: at("b"), inLoop: at("loop") });
    expect(plan.steps[at("b")]).toMatchObject({ next: at("loop"), inLoop: at("loop") });
    expect(plan.steps[at("post")]?.inLoop).toBeUndefined();
    expect(nextPlanIndex(definition, { definitionIndex: at("b"), status: "COMPLETED", outputData: {} })).toBe(at("loop"));
  });
});

/** The execution once its latest running WAIT completed at `now` with output `{ now }`, decided without the frozen check. */
const completeWait = (from: WorkflowExecution, now: number): WorkflowExecution => {
  const waiting = from.tasks.findLast((task) => task.taskType === "WAIT" && task.status === "IN_PROGRESS")!;
  return decideAlone(from, { type: "externalUpdate", taskId: waiting.taskId, status: "COMPLETED", output: { now } }, env(now)).state;
};

/**
 * `tasks` with each task but those named in `unwatched` counting the reads of its reference name (`reads()`): what a
 * decision reads of the execution's tasks.
 */
function watchedReads(tasks: readonly TaskExecution[], unwatched: ReadonlySet<string>): { tasks: TaskExecution[]; reads: () => number; reset: () => void } {
  let reads = 0;
  const watched = tasks.map((task) => (unwatched.has(task.referenceTaskName) ? task : new Proxy(task, { get: (target, key, receiver) => (key === "referenceTaskName" && reads++, Reflect.get(target, key, receiver)) })));
  return { tasks: watched, reads: () => reads, reset: () => (reads = 0) };
}

/**
 * The execution once its latest running WAIT completed at `now`, and the reads of its tasks' reference names that
 * decision made, every task watched but the DO_WHILE `loop` and the WAIT `running` (see {@link watchedReads}).
 */
function iterationEndReads(from: WorkflowExecution, running: string, now: number): { state: WorkflowExecution; reads: number } {
  const watched = watchedReads(from.tasks, new Set(["loop", running]));
  // Each task's stored size is measured once per object (limits.ts): measured now, as it was for the tasks themselves.
  storedTasksBytes(watched.tasks);
  watched.reset();
  const state = completeWait({ ...from, tasks: watched.tasks }, now);
  return { state, reads: watched.reads() };
}

describe("DO_WHILE in the decider", () => {
  it("runs its tasks, then again while the condition holds, naming each run ref__<iteration>; then goes on", () => {
    let state = started([http("pre"), loop("loop", [http("a")], "$.loop['iteration'] < 3"), http("post", { last: "${a.output.body}", first: "${a__1.output.body}" })]).state;
    state = finish(state, "pre", 1_001);
    expect(refs(state)).toEqual(["pre:COMPLETED", "loop:IN_PROGRESS", "a__1:IN_PROGRESS"]);
    expect(instance(state, "loop")).toMatchObject({ iteration: 1, outputData: { iteration: 1 } });
    state = finish(state, "a__1", 1_002, { body: "one" });
    expect(instance(state, "loop")).toMatchObject({ status: "IN_PROGRESS", iteration: 2, outputData: { iteration: 2, 1: { a: { body: "one" } } } });
    expect(instance(state, "a__2")).toMatchObject({ iteration: 2, status: "IN_PROGRESS" });
    state = finish(state, "a__2", 1_003, { body: "two" });
    state = finish(state, "a__3", 1_004, { body: "three" });
    expect(refs(state)).toEqual(["pre:COMPLETED", "loop:COMPLETED", "a__1:COMPLETED", "a__2:COMPLETED", "a__3:COMPLETED", "post:IN_PROGRESS"]);
    expect(instance(state, "loop").outputData).toEqual({ iteration: 3, 1: { a: { body: "one" } }, 2: { a: { body: "two" } }, 3: { a: { body: "three" } } });
    // `${a...}` is the latest iteration's run, `${a__1...}` the first's.
    expect(instance(state, "post").inputData).toMatchObject({ last: "three", first: "one" });
    state = finish(state, "post", 1_005, { done: true });
    expect(state.status).toBe("COMPLETED");
    expect(state.output).toEqual({ done: true });
  });

  it("counts an ended iteration of a loop task for its definition's reference name (execute's waitUntilTaskRef)", () => {
    let state = started([loop("loop", [http("a"), http("b")], "$.loop['iteration'] < 2")]).state;
    const completed = (...names: string[]) => hasEndedTask(state, new Set(names));
    expect([completed("a"), completed("a__1"), completed("loop")]).toEqual([false, false, false]);
    state = finish(state, "a__1", 1_001);
    expect([completed("a"), completed("a__1"), completed("a__2"), completed("b"), completed("loop"), completed("missing", "b", "a")]).toEqual([true, true, false, false, false, true]);
    state = finish(state, "b__1", 1_002);
    state = finish(state, "a__2", 1_003, { body: "a" }, "FAILED_WITH_TERMINAL_ERROR");
    // A failed instance has ended too, as Conductor's waitUntilTaskRef takes any terminal status; so has the loop it failed.
    expect([completed("a__2"), completed("a"), completed("loop")]).toEqual([true, true, true]);
  });

  it("runs its tasks once when the condition is false at once (do ... while), and lets a condition read their outputs", () => {
    let state = started([loop("loop", [http("a"), http("b")], "$.a.body.more === true && $.b.body.count < 5")]).state;
    state = finish(state, "a__1", 1_001, { body: { more: true } });
    state = finish(state, "b__1", 1_002, { body: { count: 7 } });
    expect(state.status).toBe("COMPLETED");
    expect(instance(state, "loop")).toMatchObject({ status: "COMPLETED", iteration: 1 });
    // Without outputParameters the workflow outputs its last task's output, the one scheduled last (Conductor's
    // updateWorkflowOutput reads the last in seq order): the last loop task of the last iteration, not the DO_WHILE.
    expect(state.output).toEqual({ body: { count: 7 } });
  });

  it("takes a value-param condition from its input, resolved again at each iteration's end", () => {
    const task = loop("loop", [http("a")], "more", { evaluatorType: "value-param", inputParameters: { more: "${a.output.body.more}" } });
    let state = started([task]).state;
    state = finish(state, "a__1", 1_001, { body: { more: true } });
    state = finish(state, "a__2", 1_002, { body: { more: 1 } });
    expect(instance(state, "loop").iteration).toBe(3);
    state = finish(state, "a__3", 1_003, { body: { more: "yes" } });
    expect(instance(state, "loop")).toMatchObject({ status: "COMPLETED", iteration: 3 });
  });

  it("accepts the official client's builders (newLoopTask counts iterations)", () => {
    const counted = newLoopTask("count", 2, [clientHttpTask("call", { uri: "https://example.com/x", method: "GET" })]) as unknown as WorkflowTaskDef;
    const parsed = validateWorkflowDef(JSON.parse(JSON.stringify(definitionOf([counted]))));
    expect(parsed.ok).toBe(true);
    let state = decide(createExecution({ workflowId: "wf-2", definition: (parsed as { value: WorkflowDef }).value, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
    state = finish(state, "call__1", 1_001);
    state = finish(state, "call__2", 1_002);
    expect(state.status).toBe("COMPLETED");
    expect(instance(state, "count").iteration).toBe(2);
    const conditioned = clientDoWhileTask("poll", "$.poll['iteration'] < 2", [clientHttpTask("ask", { uri: "https://example.com/y", method: "GET" })]);
    expect(validateWorkflowDef(JSON.parse(JSON.stringify(definitionOf([conditioned as unknown as WorkflowTaskDef])))).ok).toBe(true);
  });

  it("reads items given beside inputParameters (Conductor OSS's form, as its integration tests write it) as inside them", () => {
    const given = { name: "each", taskReferenceName: "each", type: "DO_WHILE", inputParameters: {}, items: "${workflow.input.list}", loopOver: [http("a", { item: "${each.output.loopItem}" })] };
    const checked = validateWorkflowDef({ name: "loops", tasks: [given] });
    if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
    const loopTask = checked.value.tasks[0]!;
    expect(loopTask.inputParameters).toEqual({ items: "${workflow.input.list}" });
    expect(loopTask).not.toHaveProperty("items");
    let state = started(checked.value.tasks, { list: ["x", "y"] }).state;
    expect(instance(state, "a__1").inputData).toMatchObject({ item: "x" });
    state = finish(finish(state, "a__1", 1_001), "a__2", 1_002);
    expect(instance(state, "each")).toMatchObject({ status: "COMPLETED", iteration: 2 });
    // Without inputParameters, and beside a loopCondition (which items then make unused) too; inputParameters' own win.
    const bare = validateWorkflowDef({ name: "loops", tasks: [{ ...given, inputParameters: undefined, loopCondition: "true" }] });
    expect(bare.ok && bare.value.tasks[0]!.inputParameters).toEqual({ items: "${workflow.input.list}" });
    const both = validateWorkflowDef({ name: "loops", tasks: [{ ...given, inputParameters: { items: [1] } }] });
    expect(both.ok && both.value.tasks[0]!.inputParameters).toEqual({ items: [1] });
  });

  it("iterates over items, each visible to its tasks as loopItem and loopIndex; an empty list runs no iteration", () => {
    const task = loop("each", [http("a", { item: "${each.output.loopItem}", index: "${each.output.loopIndex}" })], undefined, { inputParameters: { items: "${workflow.input.list}" } });
    let state = started([task, http("post")], { list: ["x", { y: 1 }] }).state;
    expect(instance(state, "a__1").inputData).toMatchObject({ item: "x", index: 0 });
    state = finish(state, "a__1", 1_001);
    expect(instance(state, "a__2").inputData).toMatchObject({ item: { y: 1 }, index: 1 });
    state = finish(state, "a__2", 1_002);
    expect(instance(state, "each")).toMatchObject({ status: "COMPLETED", iteration: 2 });
    expect(refs(state).at(-1)).toBe("post:IN_PROGRESS");

    const empty = started([task, http("post")], { list: [] }).state;
    expect(refs(empty)).toEqual(["each:COMPLETED", "post:IN_PROGRESS"]);
    expect(instance(empty, "each").outputData).toEqual({ iteration: 0 });

    // Items the definition names, which resolve to nothing (a missing input), are no list either: no run over no item.
    const missing = started([task], {}).state;
    expect(instance(missing, "each")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("items must resolve to a list") });
    expect(refs(missing)).toEqual(["each:FAILED_WITH_TERMINAL_ERROR"]);

    const notList = started([task], { list: "abc" }).state;
    expect(instance(notList, "each")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("items must resolve to a list") });
    expect(notList.status).toBe("FAILED");
  });

  it("runs once per item whatever a condition given too says, as Orkes counts the iterations (the Python SDK's ForEachTask writes one that always says stop)", () => {
    const forEach = "if ( $.each.iteration < 0 ) { true; } else { false; }";
    const task = loop("each", [http("a")], forEach, { inputParameters: { items: [1, 2, 3] } });
    let state = started([task]).state;
    for (let iteration = 1; iteration <= 3; iteration++) state = finish(state, `a__${iteration}`, 1_000 + iteration, { body: iteration });
    expect(instance(state, "each")).toMatchObject({ status: "COMPLETED", iteration: 3 });
    expect(state.status).toBe("COMPLETED");
  });

  it("keeps only the last keepLastN iterations' tasks and outputs", () => {
    let state = started([loop("loop", [http("a")], "$.loop.iteration < 4", { inputParameters: { keepLastN: 2 } })]).state;
    for (let iteration = 1; iteration <= 4; iteration++) state = finish(state, `a__${iteration}`, 1_000 + iteration, { body: iteration });
    expect(state.status).toBe("COMPLETED");
    expect(refs(state)).toEqual(["loop:COMPLETED", "a__3:COMPLETED", "a__4:COMPLETED"]);
    expect(instance(state, "loop").outputData).toEqual({ iteration: 4, 3: { a: { body: 3 } }, 4: { a: { body: 4 } } });
  });

  it("fails when its output grows over MAX_PAYLOAD_BYTES, in the iteration that grew it", () => {
    let state = started([loop("loop", [http("a")], "true")]).state;
    const big = "x".repeat(300 * 1024);
    for (let iteration = 1; iteration <= 3; iteration++) state = finish(state, `a__${iteration}`, 1_000 + iteration, { big });
    expect(state.status).toBe("FAILED");
    expect(refs(state)).toEqual(["loop:FAILED_WITH_TERMINAL_ERROR", "a__1:COMPLETED", "a__2:COMPLETED", "a__3:COMPLETED"]);
    expect(instance(state, "loop")).toMatchObject({ iteration: 3, outputData: {}, reasonForIncompletion: expect.stringContaining("MAX_PAYLOAD_BYTES") });
  });

  it("runs a SWITCH inside the loop afresh at each iteration", () => {
    const choose: WorkflowTaskDef = {
      name: "choose",
      taskReferenceName: "choose",
      type: "SWITCH",
      evaluatorType: "javascript",
      expression: "$.n % 2 === 0 ? 'even' : 'odd'",
      inputParameters: { n: "${loop.output.iteration}" },
      decisionCases: { even: [http("even")], odd: [http("odd")] },
    };
    let state = started([loop("loop", [choose], "$.loop.iteration < 3")]).state;
    state = finish(state, "odd__1", 1_001);
    state = finish(state, "even__2", 1_002);
    state = finish(state, "odd__3", 1_003);
    expect(state.status).toBe("COMPLETED");
    expect(refs(state)).toEqual(["loop:COMPLETED", "choose__1:COMPLETED", "odd__1:COMPLETED", "choose__2:COMPLETED", "even__2:COMPLETED", "choose__3:COMPLETED", "odd__3:COMPLETED"]);
    expect(instance(state, "loop").outputData["2"]).toEqual({ choose: { evaluationResult: ["even"], selectedCase: "even" }, even: { body: "even__2" } });
  });

  it("retries a failing task within its iteration; failing for good, fails the workflow, the DO_WHILE canceled with it; a retry goes on in that iteration, as Conductor's", () => {
    let state = started([loop("loop", [http("a", {}, { retryCount: 1 })], "$.loop.iteration < 3"), http("post")]).state;
    state = finish(state, "a__1", 1_001);
    state = finish(state, "a__2", 1_002, {}, "FAILED");
    expect(refs(state).slice(-2)).toEqual(["a__2:FAILED", "a__2:IN_PROGRESS"]);
    expect(instance(state, "a__2")).toMatchObject({ iteration: 2, retryCount: 1 });
    state = finish(state, "a__2", 1_003, {}, "FAILED");
    expect(state.status).toBe("FAILED");
    expect(instance(state, "loop")).toMatchObject({ status: "CANCELED" });
    expect(state.reasonForIncompletion).toBe("Task a__2 failed: a__2 went wrong");

    state = decide(state, { type: "retry" }, env(70_000)).state;
    expect(state.status).toBe("RUNNING");
    // Iteration 1 is not run again: iteration 2's a is, as a retry of the attempt that failed.
    expect(refs(state)).toEqual(["loop:IN_PROGRESS", "a__1:COMPLETED", "a__2:FAILED", "a__2:FAILED", "a__2:IN_PROGRESS"]);
    expect(instance(state, "loop")).toMatchObject({ iteration: 2 });
    expect(instance(state, "a__2")).toMatchObject({ iteration: 2, retryCount: 2 });
    state = finish(state, "a__2", 70_002);
    state = finish(state, "a__3", 70_003);
    state = finish(state, "post", 70_004);
    expect(state.status).toBe("COMPLETED");
    expect(instance(state, "loop").outputData).toMatchObject({ iteration: 3, "1": { a: { body: "a__1" } }, "2": { a: { body: "a__2" } }, "3": { a: { body: "a__3" } } });
  });

  it("fails the DO_WHILE with its loop task when the DO_WHILE has retries of its own: it then runs again from its first iteration", () => {
    let state = started([loop("loop", [http("a")], "$.loop.iteration < 2", { retryCount: 1 }), http("post")]).state;
    state = finish(state, "a__1", 1_001);
    state = finish(state, "a__2", 1_002, {}, "FAILED");
    expect(state.status).toBe("RUNNING");
    expect(refs(state)).toEqual(["loop:FAILED", "a__1:COMPLETED", "a__2:FAILED", "loop:IN_PROGRESS", "a__1:IN_PROGRESS"]);
    expect(state.tasks.find((task) => task.referenceTaskName === "loop" && task.status === "FAILED")).toMatchObject({ reasonForIncompletion: "Task a__2 failed: a__2 went wrong" });
  });

  it("a retry of a workflow terminated (or timed out) in the middle of a loop goes on where the loop stood, as Conductor's retry reopens a CANCELED DO_WHILE", () => {
    let state = started([loop("loop", [http("a"), http("b")], "$.loop.iteration < 3"), http("post")]).state;
    state = finish(state, "a__1", 1_001);
    state = finish(state, "b__1", 1_002);
    state = finish(state, "a__2", 1_003);
    state = decide(state, { type: "terminate", reason: "stop" }, env(1_004)).state;
    expect(state.status).toBe("TERMINATED");
    expect([instance(state, "loop").status, instance(state, "b__2").status]).toEqual(["CANCELED", "CANCELED"]);

    state = decide(state, { type: "retry" }, env(2_000)).state;
    expect(state.status).toBe("RUNNING");
    // Iteration 1 and iteration 2's a are not run again: the canceled b__2 is, as a retry of it.
    expect(instance(state, "loop")).toMatchObject({ status: "IN_PROGRESS", iteration: 2 });
    expect(refs(state)).toEqual(["loop:IN_PROGRESS", "a__1:COMPLETED", "b__1:COMPLETED", "a__2:COMPLETED", "b__2:CANCELED", "b__2:IN_PROGRESS"]);
    expect(instance(state, "b__2")).toMatchObject({ retryCount: 1, iteration: 2 });
    state = finish(state, "b__2", 2_001);
    state = finish(state, "a__3", 2_002);
    state = finish(state, "b__3", 2_003);
    state = finish(state, "post", 2_004);
    expect(state.status).toBe("COMPLETED");
    expect(instance(state, "loop").outputData).toMatchObject({ iteration: 3, "1": { a: { body: "a__1" } }, "2": { a: { body: "a__2" }, b: { body: "b__2" } }, "3": { b: { body: "b__3" } } });
  });

  it("goes on past an optional DO_WHILE whose loop failed", () => {
    let state = started([loop("loop", [http("a")], "true", { optional: true }), http("post")]).state;
    state = finish(state, "a__1", 1_001);
    state = finish(state, "a__2", 1_002, {}, "FAILED");
    expect(instance(state, "loop").status).toBe("COMPLETED_WITH_ERRORS");
    expect(refs(state).at(-1)).toBe("post:IN_PROGRESS");
  });

  it("fails the DO_WHILE for good when its condition throws, with the error as the reason", () => {
    let state = started([loop("loop", [http("a")], "$.a.body.missing.deeper")]).state;
    state = finish(state, "a__1", 1_001, { body: {} });
    expect(instance(state, "loop")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("The loopCondition could not be evaluated: TypeError") });
    expect(state.status).toBe("FAILED");
  });

  it("a DO_WHILE a retry request replaced, reopened by a rerun from its own iteration and then retried by the decider, shows executed false (Conductor's DeciderService.retry leaves it so)", () => {
    // The condition throws on a's first output (a terminal failure, its own retries left), and ends the loop on the second.
    let state = started([loop("loop", [http("a")], "$.a.body.missing.deeper", { retryCount: 1 })]).state;
    state = finish(state, "a__1", 1_001, { body: {} });
    expect(state.status).toBe("FAILED");
    state = decide(state, { type: "retry" }, env(2_000)).state;
    const replaced = state.tasks[0]!;
    expect([replaced.retried, toTaskView(replaced, state).executed]).toEqual([true, true]);
    state = finish(state, "a__1", 2_001, { body: { missing: { deeper: false } } });
    expect(state.status).toBe("COMPLETED");
    // Rerun from the first run's a__1: the loop it ran in runs again from there, no longer replaced.
    state = decide(state, { type: "rerun", fromTaskId: state.tasks[1]!.taskId }, env(3_000)).state;
    expect(refs(state)).toEqual(["loop:IN_PROGRESS", "a__1:IN_PROGRESS"]);
    state = finish(state, "a__1", 3_001, {}, "FAILED");
    // The loop failed with its task and the decider retried it (its retryCount 0, of 1): not a retry request's doing.
    expect(refs(state)).toEqual(["loop:FAILED", "a__1:FAILED", "loop:IN_PROGRESS", "a__1:IN_PROGRESS"]);
    expect([state.tasks[0]!.retried, toTaskView(state.tasks[0]!, state).executed]).toEqual([true, false]);
  });

  it("a condition reading a name $ does not hold ($.loop['iteration'], as Conductor's own loop is not named loop) fails with those names and what $ holds: the loop's output under its reference name", () => {
    let state = started([loop("repeat", [http("a")], "$.loop['iteration'] < 3 && $[\"a\"].body != null && $.typo.x", { inputParameters: { limit: 3 } })]).state;
    state = finish(state, "a__1", 1_001, { body: {} });
    expect(instance(state, "repeat")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    expect(instance(state, "repeat").reasonForIncompletion).toMatch(
      /^The loopCondition could not be evaluated: TypeError[^;]*; it reads \$\.loop, \$\.typo, which \$ does not hold: \$ holds the DO_WHILE's own output as \$\.repeat \(its iteration is \$\.repeat\['iteration'\]\), its tasks' latest outputs by their reference names and its inputParameters \(limit, repeat, a\)$/,
    );
  });

  it("a condition failing on names $ holds gives the evaluator's error alone", () => {
    let state = started([loop("loop", [http("a")], "$.a.body.missing.deeper")]).state;
    state = finish(state, "a__1", 1_001, { body: {} });
    expect(instance(state, "loop").reasonForIncompletion).toMatch(/^The loopCondition could not be evaluated: TypeError[^;]*$/);
  });

  it("reruns from a task of a finished loop: the DO_WHILE runs again from that task's iteration", () => {
    let state = started([loop("loop", [http("a"), http("b")], "$.loop.iteration < 3")]).state;
    for (let iteration = 1; iteration <= 3; iteration++) {
      state = finish(state, `a__${iteration}`, 1_000 + iteration * 10, { body: `a${iteration}` });
      state = finish(state, `b__${iteration}`, 1_001 + iteration * 10, { body: `b${iteration}` });
    }
    expect(state.status).toBe("COMPLETED");
    state = decide(state, { type: "rerun", fromTaskId: instance(state, "b__2").taskId }, env(2_000)).state;
    expect(state.status).toBe("RUNNING");
    expect(refs(state)).toEqual(["loop:IN_PROGRESS", "a__1:COMPLETED", "b__1:COMPLETED", "a__2:COMPLETED", "b__2:IN_PROGRESS"]);
    expect(instance(state, "loop")).toMatchObject({ iteration: 2, outputData: { iteration: 2, 1: { a: { body: "a1" }, b: { body: "b1" } } } });
    expect(instance(state, "loop").outputData["2"]).toBeUndefined();
    state = finish(state, "b__2", 2_001, { body: "b2 again" });
    state = finish(state, "a__3", 2_002);
    state = finish(state, "b__3", 2_003);
    expect(state.status).toBe("COMPLETED");
    expect(instance(state, "loop").outputData["2"]).toEqual({ a: { body: "a2" }, b: { body: "b2 again" } });
  });

  it("waits again for the child of a failed SUB_WORKFLOW in the loop (resumed in place): the loop goes on from its iteration", () => {
    const child: WorkflowTaskDef = { name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "child" } } };
    let state = started([loop("loop", [child], "$.loop.iteration < 2")]).state;
    const childFinished = (status: "COMPLETED" | "FAILED", now: number) => {
      const task = instance(state, state.tasks.at(-1)!.referenceTaskName);
      return decide(state, { type: "childFinished", taskId: task.taskId, subWorkflowId: task.subWorkflowId!, status, output: {}, ...(status === "FAILED" ? { reason: "boom" } : {}) }, env(now)).state;
    };
    state = childFinished("COMPLETED", 1_001);
    state = childFinished("FAILED", 1_002);
    expect(state.status).toBe("FAILED");
    expect(refs(state)).toEqual(["loop:CANCELED", "sub__1:COMPLETED", "sub__2:FAILED"]);
    state = decide(state, { type: "resumeChild", taskId: instance(state, "sub__2").taskId }, env(2_000)).state;
    expect(state.status).toBe("RUNNING");
    expect(refs(state)).toEqual(["loop:IN_PROGRESS", "sub__1:COMPLETED", "sub__2:IN_PROGRESS"]);
    expect(instance(state, "loop")).toMatchObject({ iteration: 2, outputData: { iteration: 2, 1: { sub: expect.any(Object) } } });
    state = childFinished("COMPLETED", 2_001);
    expect(state.status).toBe("COMPLETED");
    expect(instance(state, "loop")).toMatchObject({ status: "COMPLETED", iteration: 2 });
  });

  it("refuses to skip a running DO_WHILE or to update it from outside; skips a task of the current iteration not reached yet", () => {
    let state = started([loop("loop", [hold("wait"), http("b")], "$.loop.iteration < 2")]).state;
    expect(refusal(state, { type: "skipTask", taskReferenceName: "loop" }, 1_001).message).toMatch(/DO_WHILE whose loop is running/);
    expect(refusal(state, { type: "externalUpdate", taskId: instance(state, "loop").taskId, status: "COMPLETED", output: {} }, 1_001).message).toMatch(/is a DO_WHILE/);
    state = decide(state, { type: "skipTask", taskReferenceName: "b", taskOutput: { skipped: 1 } }, env(1_002)).state;
    state = decide(state, { type: "externalUpdate", taskId: instance(state, "wait__1").taskId, status: "COMPLETED", output: {} }, env(1_003)).state;
    expect(instance(state, "b__1")).toMatchObject({ status: "SKIPPED", outputData: { skipped: 1 } });
    // The skip was used up in iteration 1: iteration 2 runs the task.
    expect(refs(state).slice(-1)).toEqual(["wait__2:IN_PROGRESS"]);
    state = decide(state, { type: "externalUpdate", taskId: instance(state, "wait__2").taskId, status: "COMPLETED", output: {} }, env(1_004)).state;
    expect(instance(state, "b__2").status).toBe("IN_PROGRESS");
    // A task already run in this iteration was processed.
    expect(refusal(state, { type: "skipTask", taskReferenceName: "wait" }, 1_005).message).toMatch(/already processed/);
  });

  it("ends an iteration of a long loop without reading its earlier iterations' tasks, which made n iterations cost n² reads", () => {
    let state = started([loop("loop", [hold("wait")], "$.loop.iteration < 1000 && $.wait.now > 0")]).state;
    for (let now = 1_001; instance(state, "loop").iteration! < 300; now++) state = completeWait(state, now);
    const ended = iterationEndReads(state, "wait__300", 5_000);
    expect(ended.reads).toBeLessThan(10);
    state = ended.state;
    // The condition read the latest output: the loop went on.
    expect(instance(state, "loop")).toMatchObject({ status: "IN_PROGRESS", iteration: 301 });
    expect(instance(state, "loop").outputData["300"]).toEqual({ wait: { now: 5_000 } });
  });

  /** The keys of `$.loop` each run of `condition` was given, over three iterations of a one-WAIT loop, and the loop at the end. */
  const conditionSees = (condition: string): { given: string[][]; loop: TaskExecution } => {
    const given: string[][] = [];
    const scripts = { ...scriptRunner, run: (source: string, input: JsonObject) => (given.push(Object.keys(input["loop"] as JsonObject)), scriptRunner.run(source, input)) };
    let state = started([loop("loop", [hold("wait")], condition)]).state;
    for (let now = 1_001; state.status === "RUNNING" && now < 1_010; now++) {
      const waiting = state.tasks.findLast((task) => task.taskType === "WAIT" && task.status === "IN_PROGRESS")!;
      state = decide(state, { type: "externalUpdate", taskId: waiting.taskId, status: "COMPLETED", output: { now } }, { ...env(now), scripts }).state;
    }
    return { given, loop: instance(state, "loop") };
  };

  it("gives a condition that surely reads no iteration's outputs the loop's output without them: a long loop copied them all into the interpreter at each step", () => {
    const { given, loop: ended } = conditionSees("if ($.loop['iteration'] < 3 && $.wait.now > 0) { true; } else { false; }");
    expect(given).toEqual([["iteration"], ["iteration"], ["iteration"]]);
    // The output itself keeps every iteration's outputs.
    expect(ended).toMatchObject({ status: "COMPLETED", iteration: 3, outputData: { iteration: 3, "1": { wait: { now: 1_001 } }, "3": { wait: { now: 1_003 } } } });
  });

  it("gives a condition that reads an iteration's outputs, or may, the loop's whole output", () => {
    // By its number, by a computed key, or through a call.
    expect(conditionSees("$.loop['1'].wait.now > 0 && $.loop.iteration < 2").given).toEqual([["1", "iteration"], ["1", "2", "iteration"]]);
    expect(conditionSees("$.loop[1].wait.now > 0 && $.loop.iteration < 2").loop).toMatchObject({ status: "COMPLETED", iteration: 2 });
    expect(conditionSees("$.loop[$.loop.iteration].wait.now < 1002").given).toEqual([["1", "iteration"], ["1", "2", "iteration"]]);
    expect(conditionSees("Object.keys($.loop).length < 3").loop).toMatchObject({ status: "COMPLETED", iteration: 2 });
    expect(conditionSees("$.loop.iteration.constructor.constructor('return $.loop[$.loop.iteration].wait.now < 1002')()").loop).toMatchObject({ status: "COMPLETED", iteration: 2 });
  });

  it("tells the keys a condition reads off the loop's output only when nothing else in it could read the output", () => {
    const read = (source: string) => {
      const keys = keysReadOff(source, "loop");
      return keys === undefined ? undefined : [...keys];
    };
    expect(read("true")).toEqual([]);
    expect(read("if ( $.loop['iteration'] < $.max ) { true; } else { false; }")).toEqual(["iteration"]);
    expect(read('$ . loop ["loopItem"] == "x" || $.other[3] > 1.5 ? !false : null')).toEqual(["loopItem"]);
    expect(read("$.loop[2].x > 0")).toEqual(["2"]);
    // No line break ends a read: the next line's key is the same read's.
    expect(read("$.loop.iteration > 0 && $.loop\n['1'].x > 0")).toEqual(["iteration", "1"]);
    for (const unsure of [
      "$.loop.iteration < 3 // $.loop[1]",
      "$.loop.iteration < 3 /* x */",
      "`${$.loop[1]}` > 0",
      "\\u0024.loop[1].x > 0",
      "this.$.loop[1].x > 0",
      "globalThis['$'].loop[1].x > 0",
      "$.loop > 0",
      "$['loop'] > 0",
      "$.loop[$.i] > 0",
      "$[$.i] > 0",
      "$ > 0",
      "$a.loop.x > 0",
      "a$.loop.x > 0",
      "$.loop.iteration.toString() > 0",
      "($.loop.iteration)(1)",
      "1 ? {} : {}(1)",
      "$.loop[1e0] > 0",
      "$.loop[1.0] > 0",
      "'\n' + $.loop.iteration",
      "'\\'$.loop[1]' > 0",
      "typeof $.loop.x",
      "$.loop.iteration = 2",
      // Every other assignment too, compound or by a step: the script only reads.
      "$.loop.iteration >>= 1",
      "$.loop.iteration <<= 1",
      "$.loop.iteration >>>= 1",
      "$.loop.iteration++ < 3",
      "--$.loop.iteration > 0",
      // Keys JavaScript reads as an iteration's number, written otherwise: legacy octal, a trailing point.
      "$.loop[01].x > 0",
      "$.loop[1.].x > 0",
      "$.loop?.[1]",
      "'1' in $.loop",
      "delete $.loop[1]",
      // An HTML-like comment hides the rest of its line from the script, here making the next line's groups calls.
      "$.a.constructor.constructor <!--\n('return $.loop[1].x > 0') <!--\n()",
      "$.a.constructor.constructor\n--> x\n('return $.loop[1].x > 0')\n--> x\n()",
    ]) expect(read(unsure), unsure).toBeUndefined();
  });

  it("ends an iteration of a long loop whose SWITCH took a branch once, long ago, and another never, without reading the iterations since", () => {
    const route: WorkflowTaskDef = {
      name: "route",
      taskReferenceName: "route",
      type: "SWITCH",
      evaluatorType: "value-param",
      expression: "which",
      inputParameters: { which: "${wait.output.now}" },
      decisionCases: { "1003": [hold("rare")], never: [hold("never")] },
      defaultCase: [],
    };
    // The condition reads the rare branch's output, of iteration 3, and the never-taken one's absence.
    let state = started([loop("loop", [hold("wait"), route], "$.loop.iteration < 1000 && ($.loop.iteration < 3 || $.rare.now == 1004) && $.never === undefined")]).state;
    for (let now = 1_001; instance(state, "loop").iteration! < 300; now++) state = completeWait(state, now);
    expect(instance(state, "rare__3").outputData).toEqual({ now: 1_004 });
    const ended = iterationEndReads(state, "wait__300", 5_000);
    // Walking back to rare__3 read some 600 tasks; to the loop's start for `never`, all of them.
    expect(ended.reads).toBeLessThan(10);
    state = ended.state;
    expect(instance(state, "loop")).toMatchObject({ status: "IN_PROGRESS", iteration: 301 });
    expect(instance(state, "loop").outputData["300"]).toEqual({ wait: { now: 5_000 }, route: { evaluationResult: ["5000"], selectedCase: "5000" } });
  });

  it("resolves a reference to the loop itself in its tasks' input without reading its earlier iterations' tasks, which made n iterations cost n² reads", () => {
    const counted: WorkflowTaskDef = { ...hold("wait"), inputParameters: { iteration: "${loop.output.iteration}", previous: "${wait.output.now}" } };
    let state = started([loop("loop", [counted], "$.loop.iteration < 1000")]).state;
    for (let now = 1_001; instance(state, "loop").iteration! < 299; now++) state = completeWait(state, now);
    // Every task but the DO_WHILE and the running iteration's reports each read of its reference name.
    const watched = watchedReads(state.tasks, new Set(["loop", "wait__299"]));
    storedTasksBytes(watched.tasks);
    // The first decision on a task list read anew may read each of its tasks once; the next ones, only what they add.
    state = completeWait({ ...state, tasks: watched.tasks }, 5_000);
    watched.reset();
    state = completeWait(state, 5_001);
    // The latest tasks are searched first (a reference's latest instance is most often among them): no more than those.
    expect(watched.reads()).toBeLessThan(SHORT_TASK_LIST + 10);
    // The references resolved as before: the DO_WHILE itself (not an iteration's task), and the latest iteration's task.
    expect(instance(state, "wait__301").inputData).toMatchObject({ iteration: 301, previous: 5_001 });
    expect(instance(state, "wait__300").inputData).toMatchObject({ iteration: 300, previous: 5_000 });
  });

  it("runs a loop whose iterations never wait in steps, stored between them, rather than without end in one decision", () => {
    const note: WorkflowTaskDef = { name: "note", taskReferenceName: "note", type: "SET_VARIABLE", inputParameters: { last: "${each.output.loopItem}" } };
    const list = Array.from({ length: 5_000 }, (_, index) => index);
    let decision = started([loop("each", [note], undefined, { inputParameters: { items: "${workflow.input.list}", keepLastN: 2 } })], { list });
    let steps = 1;
    while (decision.state.status === "RUNNING") {
      // Each step ran a bounded number of iterations, then waits for its alarm (a moment later) to go on.
      const due = nextDeadline(decision.state);
      expect(due).toBeDefined();
      decision = decide(decision.state, { type: "tick", liveTaskIds: new Set() }, env(due!));
      steps++;
    }
    expect(decision.state.status).toBe("COMPLETED");
    expect(instance(decision.state, "each")).toMatchObject({ status: "COMPLETED", iteration: 5_000 });
    expect(decision.state.variables).toEqual({ last: 4_999 });
    expect(steps).toBeGreaterThan(1);
  });

  it("goes on to a loop's next iteration in a later decision once one has done ten script budgets of work", () => {
    // Each run counts as a whole budget (a script near its limit): 50 iterations of a script and a condition were 100
    // budgets, some 13 s of CPU in one decision; 300 passed the 30 s a Durable Object may take for one request.
    const { env: costlyEnv, runs } = costlyScriptsEnv();
    const add: WorkflowTaskDef = { name: "add", taskReferenceName: "add", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "1" } };
    const definition = { name: "loops", version: 1, schemaVersion: 2, tasks: [loop("loop", [add], "$.loop.iteration < 50", { inputParameters: { loop: "${loop.output}", keepLastN: 2 } })] };
    let state = decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, costlyEnv(1_000)).state;
    expect(instance(state, "loop").iteration).toBeLessThanOrEqual(6);
    let decisions = 1;
    for (let now = 1_000; state.status === "RUNNING" && decisions < 50; decisions++) {
      const before = runs();
      now = Math.max(now, nextDeadline(state)!);
      state = decide(state, { type: "tick", liveTaskIds: new Set() }, costlyEnv(now)).state;
      expect(runs() - before).toBeLessThanOrEqual(11);
    }
    expect(state.status).toBe("COMPLETED");
    expect(instance(state, "loop")).toMatchObject({ status: "COMPLETED", iteration: 50 });
    expect(decisions).toBeGreaterThanOrEqual(10);
  });

  it("ends in a later decision the iterations of many loops that end together, once one has done ten script budgets of work: their conditions are scripts", () => {
    // A fork of 40 polling loops whose WAITs end at the same moment: each iteration's end runs its condition (here a
    // whole budget each), 40 budgets in the one decision that found the WAITs over.
    const { env: costlyEnv, runs } = costlyScriptsEnv();
    const branches = Array.from({ length: 40 }, (_, index): WorkflowTaskDef[] => [
      loop(`poll${index}`, [{ name: `wait${index}`, taskReferenceName: `wait${index}`, type: "WAIT", inputParameters: { duration: "10 seconds" } }], `$.poll${index}.iteration < 2`, { inputParameters: { [`poll${index}`]: `\${poll${index}.output}` } }),
    ]);
    const fork: WorkflowTaskDef = { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: branches };
    const join: WorkflowTaskDef = { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: branches.map((_, index) => `poll${index}`) };
    const definition = { name: "polls", version: 1, schemaVersion: 2, tasks: [fork, join] };
    let state = decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, costlyEnv(1_000)).state;
    let most = 0;
    let decisions = 1;
    for (let now = 1_000; state.status === "RUNNING" && decisions < 30; decisions++) {
      const before = runs();
      now = Math.max(now, nextDeadline(state)!);
      state = decide(state, { type: "tick", liveTaskIds: new Set() }, costlyEnv(now)).state;
      most = Math.max(most, runs() - before);
    }
    expect(state.status).toBe("COMPLETED");
    expect(runs()).toBe(80);
    expect(most).toBeLessThanOrEqual(11);
    // Nothing left to wake the execution for: a wake-up kept past its time would keep the alarm coming.
    expect(state.tasks.filter((task) => task.iterationEndDue !== undefined)).toEqual([]);
  });

  it("is not blocked while an iteration's end waits for a later decision, though another lane waits from outside: a synchronous execute waits on", () => {
    const { env: costlyEnv } = costlyScriptsEnv();
    const branches = Array.from({ length: 20 }, (_, index): WorkflowTaskDef[] => [
      loop(`poll${index}`, [{ name: `wait${index}`, taskReferenceName: `wait${index}`, type: "WAIT", inputParameters: { duration: "10 seconds" } }], `$.poll${index}.iteration < 2`, { inputParameters: { [`poll${index}`]: `\${poll${index}.output}` } }),
    ]);
    const fork: WorkflowTaskDef = { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [...branches, [hold("outside")]] };
    const join: WorkflowTaskDef = { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: [...branches.map((_, index) => `poll${index}`), "outside"] };
    const definition = { name: "polls", version: 1, schemaVersion: 2, tasks: [fork, join] };
    let state = decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, costlyEnv(1_000)).state;
    // The WAITs end together: ten conditions run, the other iterations' ends wait for the next decision.
    state = decide(state, { type: "tick", liveTaskIds: new Set() }, costlyEnv(11_000)).state;
    expect(state.tasks.filter((task) => task.iterationEndDue !== undefined).length).toBeGreaterThan(0);
    expect(isBlocked(state)).toBe(false);
  });

  it("stops the running task of its loop when the DO_WHILE times out by its task definition and the workflow goes on", () => {
    const taskDefinition = { name: "loop", retryCount: 1, retryLogic: "FIXED", retryDelaySeconds: 0, backoffScaleFactor: 1, timeoutSeconds: 10, timeoutPolicy: "RETRY", responseTimeoutSeconds: 10 } as const;
    let state = started([loop("loop", [hold("wait")], "true", { taskDefinition })]).state;
    state = decide(state, { type: "tick", liveTaskIds: new Set() }, env(11_001)).state;
    // The DO_WHILE timed out and runs again from its first iteration: the wait of the run that timed out waits for nothing.
    expect(refs(state)).toEqual(["loop:TIMED_OUT", "wait__1:CANCELED", "loop:IN_PROGRESS", "wait__1:IN_PROGRESS"]);
    expect(state.tasks[1]!.reasonForIncompletion).toBe("Canceled: its DO_WHILE loop timed out");
  });

  it("is not retried past a TERMINATE of its loop that ended the workflow, as a TERMINATE outside a loop is not", () => {
    const stop: WorkflowTaskDef = { name: "stop", taskReferenceName: "stop", type: "TERMINATE", inputParameters: { terminationStatus: "FAILED", terminationReason: "enough" } };
    let state = started([loop("loop", [hold("wait"), stop], "true"), http("never")]).state;
    state = decide(state, { type: "externalUpdate", taskId: instance(state, "wait__1").taskId, status: "COMPLETED", output: {} }, env(1_001)).state;
    expect(state.status).toBe("FAILED");
    expect(refs(state)).toEqual(["loop:CANCELED", "wait__1:COMPLETED", "stop__1:COMPLETED"]);
    expect(refusal(state, { type: "retry" }, 2_000)).toMatchObject({ kind: "CONFLICT", message: expect.stringContaining("ended by its TERMINATE task stop__1") });
  });

  it("terminated while paused between iterations (its loop's task done, no next one scheduled) refuses a retry, as Conductor's retry counts no canceled DO_WHILE (\"There are no retryable tasks!\"); terminated in an iteration, it retries", () => {
    const definition = [loop("loop", [http("a")], "$.loop.iteration < 3"), http("post")];
    const paused = decide(started(definition).state, { type: "pause" }, env(1_001)).state;
    const between = decide(finish(paused, "a__1", 1_002), { type: "terminate", reason: "stop" }, env(1_003)).state;
    expect([between.status, refs(between)]).toEqual(["TERMINATED", ["loop:CANCELED", "a__1:COMPLETED"]]);
    expect(refusal(between, { type: "retry" }, 1_004)).toMatchObject({ kind: "CONFLICT", message: expect.stringContaining("no task failed or was canceled") });
    const within = decide(started(definition).state, { type: "terminate", reason: "stop" }, env(1_003)).state;
    expect(refs(within)).toEqual(["loop:CANCELED", "a__1:CANCELED"]);
    expect(refs(decide(within, { type: "retry" }, env(1_004)).state)).toEqual(["loop:IN_PROGRESS", "a__1:CANCELED", "a__1:IN_PROGRESS"]);
  });

  it("uses a skip of a loop task up with its iteration, reached or not (a SWITCH took another branch)", () => {
    const choose: WorkflowTaskDef = {
      name: "choose",
      taskReferenceName: "choose",
      type: "SWITCH",
      evaluatorType: "value-param",
      expression: "n",
      inputParameters: { n: "${loop.output.iteration}" },
      decisionCases: { "1": [http("one")], "2": [http("two")] },
    };
    let state = started([loop("loop", [hold("wait"), choose], "$.loop.iteration < 2")]).state;
    // Asked in iteration 1, whose SWITCH takes the branch of `one`: `two` is not reached in it.
    state = decide(state, { type: "skipTask", taskReferenceName: "two", taskOutput: { skipped: true } }, env(1_001)).state;
    state = decide(state, { type: "externalUpdate", taskId: instance(state, "wait__1").taskId, status: "COMPLETED", output: {} }, env(1_002)).state;
    state = finish(state, "one__1", 1_003);
    expect(state.pendingSkips).toBeUndefined();
    state = decide(state, { type: "externalUpdate", taskId: instance(state, "wait__2").taskId, status: "COMPLETED", output: {} }, env(1_004)).state;
    expect(instance(state, "two__2").status).toBe("IN_PROGRESS");
  });

  it("shows iteration and loopOverTask as Conductor's Task does (isLoopOverTask: iteration > 0): a loop task's run, and the DO_WHILE itself once it runs an iteration", () => {
    const state = started([loop("loop", [http("a")], "true")]).state;
    expect(toTaskView(instance(state, "a__1"), state)).toMatchObject({ referenceTaskName: "a__1", iteration: 1, loopOverTask: true });
    expect(toTaskView(instance(state, "loop"), state)).toMatchObject({ iteration: 1, loopOverTask: true });
    const outside = started([http("solo")]).state;
    expect(toTaskView(instance(outside, "solo"), outside)).toMatchObject({ iteration: 0, loopOverTask: false });
  });
});

describe("DO_WHILE at registration", () => {
  const issues = (tasks: unknown[]) => {
    const result = validateWorkflowDef({ name: "loops", tasks });
    return result.ok ? [] : result.errors;
  };
  const body = [{ name: "a", taskReferenceName: "a", type: "HTTP", inputParameters: { uri: "https://example.com", method: "GET" } }];

  it("keeps loopOver, loopCondition and evaluatorType of a valid DO_WHILE", () => {
    const result = validateWorkflowDef({ name: "loops", tasks: [{ name: "l", taskReferenceName: "l", type: "DO_WHILE", evaluatorType: "graaljs", loopCondition: "$.l.iteration < 2", loopOver: body }] });
    expect(result.ok && result.value.tasks[0]).toMatchObject({ loopCondition: "$.l.iteration < 2", evaluatorType: "graaljs", loopOver: [{ taskReferenceName: "a" }] });
  });

  it("refuses a DO_WHILE without tasks, or without a condition and items, naming each field", () => {
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true" }])).toEqual([{ path: "tasks[0].loopOver", message: expect.stringContaining("non-empty list") }]);
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", loopOver: [] }])).toEqual([{ path: "tasks[0].loopOver", message: expect.stringContaining("non-empty list") }]);
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopOver: body }])).toEqual([{ path: "tasks[0].loopCondition", message: expect.stringContaining("inputParameters.items") }]);
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopOver: body, inputParameters: { items: [1] } }])).toEqual([]);
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", evaluatorType: "python", loopOver: body }])).toEqual([{ path: "tasks[0].evaluatorType", message: expect.stringContaining("javascript") }]);
  });

  it("refuses items that are no list, a keepLastN that is no whole number above 0, and secrets", () => {
    const task = (inputParameters: JsonObject) => ({ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", loopOver: body, inputParameters });
    expect(issues([task({ items: "abc" })])).toEqual([{ path: "tasks[0].inputParameters.items", message: expect.stringContaining("list") }]);
    expect(issues([task({ items: "${workflow.input.list}", keepLastN: "${workflow.input.keep}" })])).toEqual([]);
    expect(issues([task({ keepLastN: 0 })])).toEqual([{ path: "tasks[0].inputParameters.keepLastN", message: expect.stringContaining("at least 1") }]);
    expect(issues([task({ keepLastN: 1.5 })]).map((issue) => issue.path)).toEqual(["tasks[0].inputParameters.keepLastN"]);
    expect(issues([task({ token: "${workflow.secrets.api}" })])).toEqual([{ path: "tasks[0].inputParameters", message: expect.stringContaining("must not use secrets") }]);
  });

  it("registers nested loops, a FORK_JOIN and a FORK_JOIN_DYNAMIC in a loop; refuses a JOIN waiting for a task inside a loop", () => {
    const inner = { name: "inner", taskReferenceName: "inner", type: "DO_WHILE", loopCondition: "false", loopOver: [{ ...body[0], taskReferenceName: "b" }] };
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", loopOver: [inner] }])).toEqual([]);
    const fork = { name: "f", taskReferenceName: "f", type: "FORK_JOIN", forkTasks: [[{ ...body[0], taskReferenceName: "c" }]] };
    const join = { name: "j", taskReferenceName: "j", type: "JOIN", joinOn: ["c"] };
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", loopOver: [fork, join] }])).toEqual([]);
    const dynamicFork = { name: "d", taskReferenceName: "d", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskInputs: [] } };
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", loopOver: [dynamicFork, { ...join, joinOn: [] }] }])).toEqual([]);
    // Inside a FORK_JOIN's branch in the loop too.
    const dynamicInBranch = { name: "f", taskReferenceName: "f", type: "FORK_JOIN", forkTasks: [[dynamicFork, { ...join, name: "dj", taskReferenceName: "dj", joinOn: [] }]] };
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", loopOver: [dynamicInBranch, { ...join, joinOn: ["dj"] }] }])).toEqual([]);
    // A loop in a branch of a fork in a loop is a nested loop too; its JOIN waits for the inner DO_WHILE, not its tasks.
    const loopInForkInLoop = { name: "f", taskReferenceName: "f", type: "FORK_JOIN", forkTasks: [[inner]] };
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", loopOver: [loopInForkInLoop, { ...join, joinOn: ["inner"] }] }])).toEqual([]);
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", loopOver: [loopInForkInLoop, { ...join, joinOn: ["b"] }] }])).toEqual([
      { path: "tasks[0].loopOver[1].joinOn[0]", message: expect.stringContaining("name the DO_WHILE instead") },
    ]);
    const loopInBranch = { name: "f", taskReferenceName: "f", type: "FORK_JOIN", forkTasks: [[{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", loopOver: body }]] };
    expect(issues([loopInBranch, { name: "j", taskReferenceName: "j", type: "JOIN", joinOn: ["l"] }])).toEqual([]);
    expect(issues([loopInBranch, { name: "j", taskReferenceName: "j", type: "JOIN", joinOn: ["a"] }])).toEqual([{ path: "tasks[1].joinOn[0]", message: expect.stringContaining("name the DO_WHILE instead") }]);
    // A SWITCH case may be called "loopOver": its tasks are in no loop.
    const caseNamedLoopOver = { name: "s", taskReferenceName: "s", type: "SWITCH", evaluatorType: "value-param", expression: "x", decisionCases: { loopOver: body } };
    const forkOfSwitch = { name: "f", taskReferenceName: "f", type: "FORK_JOIN", forkTasks: [[caseNamedLoopOver]] };
    expect(issues([forkOfSwitch, { name: "j", taskReferenceName: "j", type: "JOIN", joinOn: ["a"] }])).toEqual([]);
  });

  it("refuses a reference name that one of a loop task's runs takes (a__2 beside loop task a)", () => {
    const loopOf = (ref: string) => ({ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", loopOver: [{ ...body[0], taskReferenceName: ref }] });
    expect(issues([loopOf("a"), { ...body[0], taskReferenceName: "a__2" }])).toEqual([{ path: "tasks[1].taskReferenceName", message: expect.stringContaining("loop task \"a\" (tasks[0].loopOver[0]) takes in iteration 2") }]);
    // Names that no run takes stay free: another base, no number, a leading zero.
    expect(issues([loopOf("a"), { ...body[0], taskReferenceName: "b__2" }, { ...body[0], taskReferenceName: "a__" }, { ...body[0], taskReferenceName: "a__02" }])).toEqual([]);
    // A task of a loop in a loop runs as a__<outer>__<inner>.
    const nested = { name: "o", taskReferenceName: "o", type: "DO_WHILE", loopCondition: "true", loopOver: [loopOf("a")] };
    expect(issues([nested, { ...body[0], taskReferenceName: "a__1__2" }])).toEqual([
      { path: "tasks[1].taskReferenceName", message: expect.stringContaining("loop task \"a\" (tasks[0].loopOver[0].loopOver[0]) takes in iterations 1, 2 of its loops") },
    ]);
  });

  it("counts the loop's tasks among the definition's, reference names included", () => {
    expect(issues([{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "true", loopOver: [...body, { ...body[0] }] }])).toEqual([
      { path: "tasks[0].loopOver[1].taskReferenceName", message: expect.stringContaining("already used by tasks[0].loopOver[0]") },
    ]);
  });

  it("finds the condition among the definition's scripts, for the worker's syntax check (not a value-param one)", () => {
    const definition = { name: "loops", tasks: [{ name: "l", taskReferenceName: "l", type: "DO_WHILE", loopCondition: "$.l.iteration <", loopOver: body }] };
    expect(definitionScripts(definition)).toEqual([{ source: "$.l.iteration <", path: "tasks[0].loopCondition" }]);
    expect(definitionScripts({ name: "loops", tasks: [{ ...definition.tasks[0], evaluatorType: "value-param", loopCondition: "go" }] })).toEqual([]);
    // The Go SDK's client writes an unset evaluatorType as "", which registration reads as none (javascript): its
    // condition runs as a script, so it is checked as one. A JOIN's join script likewise.
    expect(definitionScripts({ name: "loops", tasks: [{ ...definition.tasks[0], evaluatorType: "" }] })).toEqual([{ source: "$.l.iteration <", path: "tasks[0].loopCondition" }]);
    const join = { name: "j", taskReferenceName: "j", type: "JOIN", joinOn: ["a"], evaluatorType: "", expression: "$.joinOn.length >" };
    expect(definitionScripts({ name: "joins", tasks: [join] })).toEqual([{ source: "$.joinOn.length >", path: "tasks[0].expression" }]);
    expect(planOf(definitionOf([loop("l", [http("a")], "true")])).usesScripts).toBe(true);
    expect(planOf(definitionOf([loop("l", [http("a")], "go", { evaluatorType: "value-param" })])).usesScripts).toBe(false);
  });
});

describe("DO_WHILE with a FORK_JOIN in its loop", () => {
  const fork = (ref: string, branches: WorkflowTaskDef[][]): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "FORK_JOIN", inputParameters: {}, forkTasks: branches });
  const join = (ref: string, joinOn: string[]): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "JOIN", inputParameters: {}, joinOn });
  const forkLoop = (extra: Partial<WorkflowTaskDef> = {}) => loop("loop", [fork("fan", [[http("a")], [http("b"), http("c")]]), join("fan_join", ["a", "c"])], "$.loop.iteration < 2", extra);
  const pending = (state: WorkflowExecution) => state.tasks.filter((task) => task.status === "IN_PROGRESS" || task.status === "SCHEDULED").map((task) => task.referenceTaskName);

  it("runs the fork's branches afresh in each iteration, the JOIN waiting for that iteration's tasks, then goes on", () => {
    let state = started([forkLoop(), http("post", { n: "${fan_join.output.c.body}" })]).state;
    expect(pending(state)).toEqual(["loop", "a__1", "b__1", "fan_join__1"]);
    state = finish(state, "a__1", 1_001);
    state = finish(state, "b__1", 1_002);
    expect(pending(state)).toEqual(["loop", "fan_join__1", "c__1"]);
    state = finish(state, "c__1", 1_003);
    // Iteration 2: the same fork again, and a JOIN that does not take iteration 1's outputs for its own.
    expect(pending(state)).toEqual(["loop", "a__2", "b__2", "fan_join__2"]);
    expect(instance(state, "fan_join__1")).toMatchObject({ status: "COMPLETED", outputData: { a: { body: "a__1" }, c: { body: "c__1" } } });
    state = finish(state, "b__2", 1_004);
    state = finish(state, "c__2", 1_005);
    expect(pending(state)).toEqual(["loop", "a__2", "fan_join__2"]);
    state = finish(state, "a__2", 1_006);
    expect(instance(state, "fan_join__2")).toMatchObject({ status: "COMPLETED", outputData: { a: { body: "a__2" }, c: { body: "c__2" } } });
    expect(instance(state, "loop")).toMatchObject({ status: "COMPLETED", iteration: 2 });
    expect(instance(state, "loop").outputData["2"]).toMatchObject({ fan: {}, a: { body: "a__2" }, b: { body: "b__2" }, c: { body: "c__2" } });
    expect(instance(state, "post").inputData).toMatchObject({ n: "c__2" });
    state = finish(state, "post", 1_007);
    expect(state.status).toBe("COMPLETED");
  });

  it("ends an iteration once every task it ran has ended, a branch the JOIN did not wait for included (as Conductor's DO_WHILE)", () => {
    const loose = loop("loop", [fork("fan", [[http("a")], [hold("slow")]]), join("fan_join", ["a"]), http("after")], "$.loop.iteration < 2");
    let state = started([loose]).state;
    state = finish(state, "a__1", 1_001);
    state = finish(state, "after__1", 1_002);
    // The JOIN went on without it; the iteration waits for it.
    expect(pending(state)).toEqual(["loop", "slow__1"]);
    state = decide(state, { type: "externalUpdate", taskId: instance(state, "slow__1").taskId, status: "COMPLETED", output: { late: true } }, env(1_003)).state;
    expect(pending(state)).toEqual(["loop", "a__2", "slow__2", "fan_join__2"]);
    expect(instance(state, "loop").outputData["1"]).toMatchObject({ slow: { late: true } });
  });

  it("fails the workflow when a branch task fails for good, canceling the other branches and the DO_WHILE; a retry goes on in that iteration", () => {
    let state = started([forkLoop()]).state;
    state = finish(state, "a__1", 1_001, {}, "FAILED");
    expect(state.status).toBe("FAILED");
    expect(instance(state, "b__1")).toMatchObject({ status: "CANCELED" });
    expect(instance(state, "loop")).toMatchObject({ status: "CANCELED" });
    state = decide(state, { type: "retry" }, env(5_000)).state;
    expect(state.status).toBe("RUNNING");
    expect(pending(state)).toEqual(["loop", "fan_join__1", "a__1", "b__1"]);
    expect(instance(state, "loop")).toMatchObject({ iteration: 1 });
    // The failed a__1 and the canceled b__1 run again, as retries; the fork is not run again.
    expect(refs(state)).toEqual(["loop:IN_PROGRESS", "fan__1:COMPLETED", "a__1:FAILED", "b__1:CANCELED", "fan_join__1:IN_PROGRESS", "a__1:IN_PROGRESS", "b__1:IN_PROGRESS"]);
    state = finish(state, "a__1", 5_001);
    state = finish(state, "b__1", 5_002);
    state = finish(state, "c__1", 5_003);
    expect(instance(state, "fan_join__1")).toMatchObject({ status: "COMPLETED", outputData: { a: { body: "a__1" }, c: { body: "c__1" } } });
    expect(state.tasks.filter((task) => task.referenceTaskName === "fan__1")).toHaveLength(1);

    // An optional DO_WHILE lets the workflow go on: the other branch's task does not run on beside it.
    let optional = started([forkLoop({ optional: true }), http("post")]).state;
    optional = finish(optional, "a__1", 1_001, {}, "FAILED");
    expect(instance(optional, "loop").status).toBe("COMPLETED_WITH_ERRORS");
    expect(instance(optional, "b__1")).toMatchObject({ status: "CANCELED", reasonForIncompletion: "Canceled: its DO_WHILE loop failed" });
    expect(pending(optional)).toEqual(["post"]);
  });

  it("retries a branch task within its iteration, and reruns from a branch task of an earlier iteration", () => {
    const retried = loop("loop", [fork("fan", [[http("a", {}, { retryCount: 1 })], [http("b")]]), join("fan_join", ["a", "b"])], "$.loop.iteration < 2");
    let state = started([retried]).state;
    state = finish(state, "a__1", 1_001, {}, "FAILED");
    expect(refs(state).filter((line) => line.startsWith("a__1"))).toEqual(["a__1:FAILED", "a__1:IN_PROGRESS"]);
    state = finish(state, "a__1", 1_002);
    state = finish(state, "b__1", 1_003);
    state = finish(state, "a__2", 1_004);
    state = finish(state, "b__2", 1_005);
    expect(state.status).toBe("COMPLETED");

    // From iteration 2's b: iteration 1, its JOIN included, stays as it ended.
    const second = decide(state, { type: "rerun", fromTaskId: instance(state, "b__2").taskId }, env(6_000)).state;
    expect(instance(second, "fan_join__1")).toMatchObject({ status: "COMPLETED", outputData: { a: { body: "a__1" }, b: { body: "b__1" } } });
    expect(instance(second, "fan_join__2").status).toBe("IN_PROGRESS");
    expect(instance(second, "b__2").status).toBe("IN_PROGRESS");

    const rerun = decide(state, { type: "rerun", fromTaskId: instance(state, "b__1").taskId }, env(6_000)).state;
    expect(rerun.status).toBe("RUNNING");
    // Iteration 1 from b on, as a rerun from a branch task outside loops: what was scheduled after b__1 goes (a__1's
    // retry too, so a runs again from its failure), its JOIN waits again; iteration 2 is gone, the loop reopened at 1.
    expect(refs(rerun).filter((line) => !line.startsWith("loop:"))).toEqual(["fan__1:COMPLETED", "a__1:FAILED", "b__1:IN_PROGRESS", "a__1:IN_PROGRESS", "fan_join__1:IN_PROGRESS"]);
    expect(instance(rerun, "loop")).toMatchObject({ status: "IN_PROGRESS", iteration: 1 });
    let again = finish(rerun, "b__1", 6_001);
    again = finish(again, "a__1", 6_002);
    expect(instance(again, "fan_join__1")).toMatchObject({ status: "COMPLETED", outputData: { a: { body: "a__1" }, b: { body: "b__1" } } });
    again = finish(again, "a__2", 6_002);
    again = finish(again, "b__2", 6_003);
    expect(again.status).toBe("COMPLETED");
  });
});

describe("DO_WHILE with a fork, terminated and retried", () => {
  const fork = (ref: string, branches: WorkflowTaskDef[][]): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "FORK_JOIN", inputParameters: {}, forkTasks: branches });
  const join = (ref: string, joinOn: string[]): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "JOIN", inputParameters: {}, joinOn });

  it("runs again the branch tasks its termination canceled, in the iteration it stood in; the branch that had ended is not", () => {
    let state = started([loop("loop", [fork("fan", [[http("a")], [http("b")]]), join("fan_join", ["a", "b"])], "$.loop.iteration < 2")]).state;
    state = finish(state, "a__1", 1_001);
    state = finish(state, "b__1", 1_002);
    state = finish(state, "a__2", 1_003);
    state = decide(state, { type: "terminate" }, env(1_004)).state;
    expect([instance(state, "b__2").status, instance(state, "fan_join__2").status]).toEqual(["CANCELED", "CANCELED"]);

    state = decide(state, { type: "retry" }, env(2_000)).state;
    expect(instance(state, "loop")).toMatchObject({ status: "IN_PROGRESS", iteration: 2 });
    expect(state.tasks.filter((task) => task.status === "IN_PROGRESS" || task.status === "SCHEDULED").map((task) => task.referenceTaskName).sort()).toEqual(["b__2", "fan_join__2", "loop"]);
    expect(state.tasks.filter((task) => task.referenceTaskName === "a__2").map((task) => task.status)).toEqual(["COMPLETED"]);
    state = finish(state, "b__2", 2_001);
    expect(instance(state, "fan_join__2")).toMatchObject({ status: "COMPLETED", outputData: { a: { body: "a__2" }, b: { body: "b__2" } } });
    expect(state.status).toBe("COMPLETED");
  });

  it("a rerun from a task beside a loop canceled as the workflow failed reopens the loop where it stood, as a retry does (Conductor's e2e rerun tests)", () => {
    let state = started([fork("fan", [[http("a")], [loop("sibling", [hold("w")], "$.sibling.iteration < 3")]]), join("fan_join", ["a", "sibling"])]).state;
    state = decide(state, { type: "externalUpdate", taskId: instance(state, "w__1").taskId, status: "COMPLETED", output: {} }, env(1_001)).state;
    state = finish(state, "a", 1_002, {}, "FAILED_WITH_TERMINAL_ERROR");
    expect(state.status).toBe("FAILED");
    expect([instance(state, "sibling").status, instance(state, "w__2").status]).toEqual(["CANCELED", "CANCELED"]);

    state = decide(state, { type: "rerun", fromTaskId: instance(state, "a").taskId }, env(2_000)).state;
    expect(state.status).toBe("RUNNING");
    // The loop goes on in iteration 2: w__1 is not run again, w__2 is (a retry of it); no second DO_WHILE.
    expect(state.tasks.filter((task) => task.referenceTaskName === "sibling").map((task) => [task.status, task.iteration])).toEqual([["IN_PROGRESS", 2]]);
    expect(state.tasks.filter((task) => task.referenceTaskName === "w__1").map((task) => task.status)).toEqual(["COMPLETED"]);
    expect(state.tasks.filter((task) => task.referenceTaskName === "w__2").map((task) => task.status)).toEqual(["CANCELED", "IN_PROGRESS"]);
  });
});

describe("DO_WHILE inside a DO_WHILE", () => {
  /** pre, then an inner loop of `body` run twice, then post; all of it twice. */
  const nested = (extra: Partial<WorkflowTaskDef> = {}, inner: Partial<WorkflowTaskDef> = {}) =>
    loop("outer", [http("pre"), loop("inner", [http("body")], "$.inner['iteration'] < 2", inner), http("post", { last: "${body.output.body}" })], "$.outer['iteration'] < 2", extra);
  /** Runs the outer iteration `n` through: pre, both runs of body, post. */
  const runIteration = (state: WorkflowExecution, n: number, now: number): WorkflowExecution => {
    for (const ref of [`pre__${n}`, `body__${n}__1`, `body__${n}__2`, `post__${n}`]) state = finish(state, ref, (now += 1));
    return state;
  };
  const pending = (state: WorkflowExecution) => state.tasks.filter((task) => task.status === "IN_PROGRESS" || task.status === "SCHEDULED").map((task) => task.referenceTaskName);

  it("plans the inner loop's tasks inside both loops", () => {
    const definition = definitionOf([nested()]);
    const at = (ref: string) => planIndexOf(definition, ref);
    expect(planOf(definition).steps[at("inner")]).toMatchObject({ inLoop: at("outer"), next: at("post"), loop: { end: at("post") } });
    expect(planOf(definition).steps[at("body")]).toMatchObject({ inLoop: at("inner"), next: at("inner") });
    expect(enclosingLoops(definition, at("body"))).toEqual([at("inner"), at("outer")]);
    expect(enclosingLoops(definition, at("post"))).toEqual([at("outer")]);
  });

  it("runs the inner loop afresh in each iteration of the outer one, naming its tasks' runs ref__<outer>__<inner>", () => {
    let state = started([nested(), http("after", { inner: "${inner.output.iteration}", early: "${body__1__2.output.body}" })]).state;
    expect(refs(state)).toEqual(["outer:IN_PROGRESS", "pre__1:IN_PROGRESS"]);
    state = finish(state, "pre__1", 1_001);
    expect(refs(state).slice(2)).toEqual(["inner__1:IN_PROGRESS", "body__1__1:IN_PROGRESS"]);
    state = finish(state, "body__1__1", 1_002);
    state = finish(state, "body__1__2", 1_003);
    // The inner condition read the inner DO_WHILE as `$.inner`, though it runs as inner__1.
    expect(instance(state, "inner__1")).toMatchObject({ status: "COMPLETED", iteration: 2, outputData: { iteration: 2, 1: { body: { body: "body__1__1" } }, 2: { body: { body: "body__1__2" } } } });
    expect(instance(state, "post__1").inputData).toMatchObject({ last: "body__1__2" });
    state = finish(state, "post__1", 1_004);
    // The outer loop records its own tasks, the inner DO_WHILE's output holding what its loop ran.
    expect(instance(state, "outer")).toMatchObject({ status: "IN_PROGRESS", iteration: 2 });
    expect(instance(state, "outer").outputData["1"]).toEqual({ pre: { body: "pre__1" }, inner: instance(state, "inner__1").outputData, post: { body: "post__1" } });
    state = finish(state, "pre__2", 1_005);
    expect(instance(state, "inner__2")).toMatchObject({ status: "IN_PROGRESS", iteration: 1 });
    state = finish(state, "body__2__1", 1_006);
    state = finish(state, "body__2__2", 1_007);
    expect(instance(state, "post__2").inputData).toMatchObject({ last: "body__2__2" });
    state = finish(state, "post__2", 1_008);
    expect(refs(state)).toEqual([
      "outer:COMPLETED",
      ...["pre__1", "inner__1", "body__1__1", "body__1__2", "post__1", "pre__2", "inner__2", "body__2__1", "body__2__2", "post__2"].map((ref) => `${ref}:COMPLETED`),
      "after:IN_PROGRESS",
    ]);
    expect(instance(state, "after").inputData).toMatchObject({ inner: 2, early: "body__1__2" });
    expect(toTaskView(instance(state, "inner__2"), state)).toMatchObject({ referenceTaskName: "inner__2", iteration: 2, loopOverTask: true });
    expect(toTaskView(instance(state, "body__2__1"), state)).toMatchObject({ iteration: 1, loopOverTask: true });
    expect(toTaskView(instance(state, "outer"), state)).toMatchObject({ iteration: 2, loopOverTask: true });
    expect([hasEndedTask(state, new Set(["body"])), hasEndedTask(state, new Set(["inner"])), hasEndedTask(state, new Set(["body__2__1"]))]).toEqual([true, true, true]);
    state = finish(state, "after", 1_009);
    expect(state.status).toBe("COMPLETED");
  });

  it("shows loopOverTask on an inner DO_WHILE or WHILE that ran no iteration (its iteration 0), as Conductor's, whose loop schedules it with the outer iteration: it is a task of the outer loop", () => {
    const inner = (type: "DO_WHILE" | "WHILE", extra: Partial<WorkflowTaskDef>) => loop("outer", [loop("inner", [http("body")], "false", { type, ...extra })], "false");
    const cases: Array<["DO_WHILE" | "WHILE", Partial<WorkflowTaskDef>]> = [["DO_WHILE", { inputParameters: { items: [] } }], ["WHILE", {}]];
    for (const [type, extra] of cases) {
      const state = started([inner(type, extra), hold("after")]).state;
      expect(instance(state, "inner__1")).toMatchObject({ status: "COMPLETED", iteration: 0 });
      expect(toTaskView(instance(state, "inner__1"), state)).toMatchObject({ referenceTaskName: "inner__1", iteration: 0, loopOverTask: true });
      expect(toTaskView(instance(state, "outer"), state)).toMatchObject({ iteration: 1, loopOverTask: true });
      expect(toTaskView(instance(state, "after"), state)).toMatchObject({ iteration: 0, loopOverTask: false });
    }
  });

  it("fails the workflow when an inner task fails for good, both loops canceled with it; a retry reopens both where they stood", () => {
    let state = started([nested()]).state;
    state = runIteration(state, 1, 1_000);
    state = finish(state, "pre__2", 1_010);
    state = finish(state, "body__2__1", 1_011, {}, "FAILED");
    expect(state.status).toBe("FAILED");
    expect(state.reasonForIncompletion).toBe("Task body__2__1 failed: body__2__1 went wrong");
    expect([instance(state, "outer").status, instance(state, "inner__2").status]).toEqual(["CANCELED", "CANCELED"]);
    expect(pending(state)).toEqual([]);

    state = decide(state, { type: "retry" }, env(5_000)).state;
    expect(state.status).toBe("RUNNING");
    expect(instance(state, "outer")).toMatchObject({ status: "IN_PROGRESS", iteration: 2 });
    expect(instance(state, "inner__2")).toMatchObject({ status: "IN_PROGRESS", iteration: 1 });
    expect(pending(state)).toEqual(["outer", "inner__2", "body__2__1"]);
    state = finish(state, "body__2__1", 5_001);
    state = finish(state, "body__2__2", 5_002);
    state = finish(state, "post__2", 5_003);
    expect(state.status).toBe("COMPLETED");
    // Iteration 1 of the outer loop ran once.
    expect(state.tasks.filter((task) => task.referenceTaskName === "pre__1")).toHaveLength(1);
  });

  it("fails the inner loop, and the outer one, when the outer DO_WHILE has retries of its own: it runs again from its first iteration", () => {
    let state = started([nested({ retryCount: 1 })]).state;
    state = runIteration(state, 1, 1_000);
    state = finish(state, "pre__2", 1_010);
    state = finish(state, "body__2__1", 1_011, {}, "FAILED");
    expect(state.status).toBe("RUNNING");
    expect(instance(state, "inner__2")).toMatchObject({ status: "FAILED", reasonForIncompletion: "Task body__2__1 failed: body__2__1 went wrong" });
    expect(state.tasks.find((task) => task.referenceTaskName === "outer" && task.status === "FAILED")).toMatchObject({
      reasonForIncompletion: "Task inner__2 failed: Task body__2__1 failed: body__2__1 went wrong",
    });
    expect(refs(state).slice(-2)).toEqual(["outer:IN_PROGRESS", "pre__1:IN_PROGRESS"]);
  });

  it("a retry after a termination in the inner loop reopens both loops where they stood", () => {
    let state = started([nested()]).state;
    state = runIteration(state, 1, 1_000);
    state = finish(state, "pre__2", 1_010);
    state = finish(state, "body__2__1", 1_011);
    state = decide(state, { type: "terminate" }, env(1_012)).state;
    expect([instance(state, "outer").status, instance(state, "inner__2").status, instance(state, "body__2__2").status]).toEqual(["CANCELED", "CANCELED", "CANCELED"]);

    state = decide(state, { type: "retry" }, env(2_000)).state;
    expect(instance(state, "outer")).toMatchObject({ status: "IN_PROGRESS", iteration: 2 });
    expect(instance(state, "inner__2")).toMatchObject({ status: "IN_PROGRESS", iteration: 2 });
    expect(pending(state)).toEqual(["outer", "inner__2", "body__2__2"]);
    state = finish(state, "body__2__2", 2_001);
    state = finish(state, "post__2", 2_002);
    expect(state.status).toBe("COMPLETED");
  });

  it("lets an optional inner loop fail and the outer iteration go on", () => {
    let state = started([nested({}, { optional: true })]).state;
    state = finish(state, "pre__1", 1_001);
    state = finish(state, "body__1__1", 1_002, {}, "FAILED");
    expect(instance(state, "inner__1").status).toBe("COMPLETED_WITH_ERRORS");
    expect(pending(state)).toEqual(["outer", "post__1"]);
  });

  it("keeps the last keepLastN iterations of the outer loop with the inner loops' tasks in them", () => {
    let state = started([nested({ inputParameters: { keepLastN: 1 } })]).state;
    state = runIteration(state, 1, 1_000);
    state = runIteration(state, 2, 1_010);
    expect(state.status).toBe("COMPLETED");
    expect(refs(state)).toEqual(["outer:COMPLETED", ...["pre__2", "inner__2", "body__2__1", "body__2__2", "post__2"].map((ref) => `${ref}:COMPLETED`)]);
    expect(Object.keys(instance(state, "outer").outputData).sort()).toEqual(["2", "iteration"]);
  });

  it("reruns from a task of an inner loop: both loops run again from the iterations it ran in", () => {
    let state = started([nested()]).state;
    state = runIteration(state, 1, 1_000);
    state = runIteration(state, 2, 1_010);
    state = decide(state, { type: "rerun", fromTaskId: instance(state, "body__1__2").taskId }, env(2_000)).state;
    expect(state.status).toBe("RUNNING");
    expect(refs(state)).toEqual(["outer:IN_PROGRESS", "pre__1:COMPLETED", "inner__1:IN_PROGRESS", "body__1__1:COMPLETED", "body__1__2:IN_PROGRESS"]);
    expect(instance(state, "inner__1")).toMatchObject({ iteration: 2, outputData: { iteration: 2, 1: { body: { body: "body__1__1" } } } });
    expect(instance(state, "outer")).toMatchObject({ iteration: 1, outputData: { iteration: 1 } });
    state = finish(state, "body__1__2", 2_001);
    state = finish(state, "post__1", 2_002);
    state = runIteration(state, 2, 2_010);
    expect(state.status).toBe("COMPLETED");
    expect(instance(state, "outer").outputData["2"]).toMatchObject({ post: { body: "post__2" } });
  });

  it("jumps out of both loops: the running tasks and both DO_WHILEs end SKIPPED, and the workflow goes on at the target", () => {
    let state = started([nested(), http("end")]).state;
    state = finish(state, "pre__1", 1_001);
    state = decide(state, { type: "jump", taskReferenceName: "end" }, env(1_002)).state;
    expect(refs(state)).toEqual(["outer:SKIPPED", "pre__1:COMPLETED", "inner__1:SKIPPED", "body__1__1:SKIPPED", "end:IN_PROGRESS"]);
  });

  it("skips a task of the inner loop in the outer iteration asked in, whether the inner loop started in it or not", () => {
    let state = started([nested()]).state;
    // Iteration 1 has not reached the inner loop yet.
    state = decide(state, { type: "skipTask", taskReferenceName: "body", taskOutput: { skipped: 1 } }, env(1_001)).state;
    state = finish(state, "pre__1", 1_002);
    expect(instance(state, "body__1__1")).toMatchObject({ status: "SKIPPED", outputData: { skipped: 1 } });
    state = finish(state, "body__1__2", 1_003);
    state = finish(state, "post__1", 1_004);
    // Iteration 2, before its inner loop starts (the one of iteration 1 ended): a skip for this iteration.
    state = decide(state, { type: "skipTask", taskReferenceName: "body", taskOutput: { skipped: 2 } }, env(1_005)).state;
    state = finish(state, "pre__2", 1_006);
    expect(instance(state, "body__2__1")).toMatchObject({ status: "SKIPPED", outputData: { skipped: 2 } });
    expect(instance(state, "body__2__2").status).toBe("IN_PROGRESS");
    // A task the current inner iteration ran was processed.
    expect(refusal(state, { type: "skipTask", taskReferenceName: "pre" }, 1_007).message).toMatch(/already processed/);
    state = finish(state, "body__2__2", 1_008);
    state = finish(state, "post__2", 1_009);
    expect(state.status).toBe("COMPLETED");
    expect(refusal(state, { type: "skipTask", taskReferenceName: "body" }, 1_010).kind).toBe("CONFLICT");
  });
});

describe("DO_WHILE in a FORK_JOIN's branch", () => {
  it("keeps a loop in a fork's branch as it ended when its JOIN runs again (a rerun from the JOIN): the loop does not run again", () => {
    const fork: WorkflowTaskDef = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", inputParameters: {}, forkTasks: [[loop("each", [http("a")], "$.each.iteration < 2")], [http("b")]] };
    const join: WorkflowTaskDef = { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", inputParameters: {}, joinOn: ["each", "b"] };
    let state = started([fork, join, http("post")]).state;
    let now = 1_100;
    for (const ref of ["a__1", "a__2", "b", "post"]) state = finish(state, ref, (now += 1));
    expect(state.status).toBe("COMPLETED");
    state = decide(state, { type: "rerun", fromTaskId: instance(state, "fan_join").taskId }, env(2_000)).state;
    // The JOIN joins again what its branches ran, as it ended: no a__ is run again. (The fork schedules each branch's
    // first task and its JOIN before the loop schedules its first task, as Conductor's mappers do.)
    expect(refs(state)).toEqual(["fan:COMPLETED", "each:COMPLETED", "b:COMPLETED", "fan_join:COMPLETED", "a__1:COMPLETED", "a__2:COMPLETED", "post:IN_PROGRESS"]);
  });
});

describe("WHILE (Conductor OSS's): the DO_WHILE's loop, its condition asked before the first iteration too", () => {
  const whileLoop = (ref: string, loopOver: WorkflowTaskDef[], loopCondition?: string, extra: Partial<WorkflowTaskDef> = {}): WorkflowTaskDef => ({ ...loop(ref, loopOver, loopCondition, extra), type: "WHILE" });

  it("runs no iteration when the condition does not hold at the start, reading its iteration as 0: it completes, no task of its loop scheduled, and the workflow goes on", () => {
    const state = started([whileLoop("loop", [http("a")], "$.loop.iteration < $.times", { inputParameters: { times: "${workflow.input.times}" } }), http("post", { ran: "${loop.output.iteration}" })], { times: 0 }).state;
    expect(refs(state)).toEqual(["loop:COMPLETED", "post:IN_PROGRESS"]);
    expect(instance(state, "loop")).toMatchObject({ taskType: "WHILE", iteration: 0, outputData: { iteration: 0 } });
    expect(instance(state, "post").inputData).toMatchObject({ ran: 0 });
    expect(toTaskView(instance(state, "loop"), state)).toMatchObject({ taskType: "WHILE", iteration: 0, loopOverTask: false });
    // A DO_WHILE with the same condition runs its loop once first.
    expect(refs(started([loop("loop", [http("a")], "$.loop.iteration < $.times", { inputParameters: { times: "${workflow.input.times}" } })], { times: 0 }).state)).toEqual(["loop:IN_PROGRESS", "a__1:IN_PROGRESS"]);
  });

  it("runs N iterations when the condition stops holding after the Nth, as a DO_WHILE does from there on: ref__<n>, outputs by iteration, the condition reading its tasks", () => {
    let state = started([whileLoop("loop", [http("a")], "$.loop.iteration < 2 && (!$.a || $.a.body !== 'stop')")]).state;
    expect(refs(state)).toEqual(["loop:IN_PROGRESS", "a__1:IN_PROGRESS"]);
    expect(instance(state, "loop")).toMatchObject({ iteration: 1, outputData: { iteration: 1 } });
    state = finish(state, "a__1", 1_001, { body: "go" });
    state = finish(state, "a__2", 1_002, { body: "go" });
    expect(refs(state)).toEqual(["loop:COMPLETED", "a__1:COMPLETED", "a__2:COMPLETED"]);
    expect(instance(state, "loop")).toMatchObject({ iteration: 2, outputData: { iteration: 2, 1: { a: { body: "go" } }, 2: { a: { body: "go" } } } });
    expect(state.status).toBe("COMPLETED");
    // Stopped by its task's output after the first iteration.
    let stopped = started([whileLoop("loop", [http("a")], "$.loop.iteration < 2 && (!$.a || $.a.body !== 'stop')")]).state;
    stopped = finish(stopped, "a__1", 1_001, { body: "stop" });
    expect(refs(stopped)).toEqual(["loop:COMPLETED", "a__1:COMPLETED"]);
  });

  it("takes a value-param condition from its input at the start too", () => {
    const task = whileLoop("loop", [http("a")], "goOn", { evaluatorType: "value-param", inputParameters: { goOn: "${workflow.input.go}" } });
    expect(refs(started([task], { go: false }).state)).toEqual(["loop:COMPLETED"]);
    expect(refs(started([task], { go: true }).state)).toEqual(["loop:IN_PROGRESS", "a__1:IN_PROGRESS"]);
  });

  it("fails for good when the condition cannot be evaluated at the start, its loop not run, the workflow failing", () => {
    const state = started([whileLoop("loop", [http("a")], "$.a.body.missing"), http("post")]).state;
    expect(refs(state)).toEqual(["loop:FAILED_WITH_TERMINAL_ERROR"]);
    expect(instance(state, "loop")).toMatchObject({ outputData: {}, reasonForIncompletion: expect.stringContaining("The loopCondition could not be evaluated: TypeError") });
    expect(instance(state, "loop").iteration).toBeUndefined();
    expect(state.status).toBe("FAILED");
  });

  it("iterates over items as a DO_WHILE does: one iteration per item, none for an empty list, the condition not asked", () => {
    const task = whileLoop("each", [http("a", { item: "${each.output.loopItem}" })], "false", { inputParameters: { items: "${workflow.input.list}" } });
    let state = started([task], { list: ["x", "y"] }).state;
    expect(instance(state, "a__1").inputData).toMatchObject({ item: "x" });
    state = finish(finish(state, "a__1", 1_001), "a__2", 1_002);
    expect(instance(state, "each")).toMatchObject({ status: "COMPLETED", iteration: 2 });
    const empty = started([task, http("post")], { list: [] }).state;
    expect(refs(empty)).toEqual(["each:COMPLETED", "post:IN_PROGRESS"]);
    expect(instance(empty, "each").outputData).toEqual({ iteration: 0 });
  });

  it("asks its condition afresh in each iteration of a DO_WHILE around it, as a new run of it: there it may run none", () => {
    const inner = whileLoop("inner", [http("body")], "$.inner.iteration < 2 - $.round", { inputParameters: { round: "${outer.output.iteration}" } });
    let state = started([loop("outer", [inner], "$.outer.iteration < 2")]).state;
    expect(refs(state)).toEqual(["outer:IN_PROGRESS", "inner__1:IN_PROGRESS", "body__1__1:IN_PROGRESS"]);
    state = finish(state, "body__1__1", 1_001);
    expect(refs(state)).toEqual(["outer:COMPLETED", "inner__1:COMPLETED", "body__1__1:COMPLETED", "inner__2:COMPLETED"]);
    expect(instance(state, "inner__2")).toMatchObject({ iteration: 0, outputData: { iteration: 0 } });
    expect(instance(state, "outer").outputData["2"]).toEqual({ inner: { iteration: 0 } });
  });

  it("reruns from a task of a finished WHILE, and refuses to skip it or update it while its loop runs, as a DO_WHILE", () => {
    let state = started([whileLoop("loop", [hold("wait"), http("b")], "$.loop.iteration < 2")]).state;
    expect(refusal(state, { type: "skipTask", taskReferenceName: "loop" }, 1_001).message).toMatch(/is a WHILE whose loop is running/);
    expect(refusal(state, { type: "externalUpdate", taskId: instance(state, "loop").taskId, status: "COMPLETED", output: {} }, 1_001).message).toMatch(/is a WHILE/);
    for (let iteration = 1; iteration <= 2; iteration++) {
      state = decide(state, { type: "externalUpdate", taskId: instance(state, `wait__${iteration}`).taskId, status: "COMPLETED", output: {} }, env(1_000 + iteration * 10)).state;
      state = finish(state, `b__${iteration}`, 1_001 + iteration * 10, { body: `b${iteration}` });
    }
    expect(state.status).toBe("COMPLETED");
    state = decide(state, { type: "rerun", fromTaskId: instance(state, "b__2").taskId }, env(2_000)).state;
    expect(refs(state)).toEqual(["loop:IN_PROGRESS", "wait__1:COMPLETED", "b__1:COMPLETED", "wait__2:COMPLETED", "b__2:IN_PROGRESS"]);
    state = finish(state, "b__2", 2_001, { body: "again" });
    expect(state.status).toBe("COMPLETED");
    expect(instance(state, "loop").outputData["2"]).toMatchObject({ b: { body: "again" } });
  });

  it("is checked at registration as a DO_WHILE is, its condition among the definition's scripts", () => {
    const issues = (tasks: unknown[]) => {
      const result = validateWorkflowDef({ name: "loops", tasks });
      return result.ok ? [] : result.errors;
    };
    const body = [{ name: "a", taskReferenceName: "a", type: "HTTP", inputParameters: { uri: "https://example.com", method: "GET" } }];
    const valid = validateWorkflowDef({ name: "loops", tasks: [{ name: "l", taskReferenceName: "l", type: "WHILE", loopCondition: "$.l.iteration < 2", loopOver: body }] });
    expect(valid.ok && valid.value.tasks[0]).toMatchObject({ type: "WHILE", loopCondition: "$.l.iteration < 2", loopOver: [{ taskReferenceName: "a" }] });
    expect(issues([{ name: "l", taskReferenceName: "l", type: "WHILE", loopCondition: "true" }])).toEqual([{ path: "tasks[0].loopOver", message: expect.stringContaining("non-empty list") }]);
    expect(issues([{ name: "l", taskReferenceName: "l", type: "WHILE", loopCondition: "true", loopOver: [] }])).toEqual([{ path: "tasks[0].loopOver", message: expect.stringContaining("non-empty list") }]);
    expect(issues([{ name: "l", taskReferenceName: "l", type: "WHILE", loopOver: body }])).toEqual([{ path: "tasks[0].loopCondition", message: expect.stringContaining("inputParameters.items") }]);
    expect(issues([{ name: "l", taskReferenceName: "l", type: "WHILE", loopCondition: "true", loopOver: body, inputParameters: { keepLastN: 0 } }]).map((issue) => issue.path)).toEqual(["tasks[0].inputParameters.keepLastN"]);
    expect(issues([{ name: "l", taskReferenceName: "l", type: "WHILE", loopCondition: "true", loopOver: body, inputParameters: { token: "${workflow.secrets.api}" } }])).toEqual([{ path: "tasks[0].inputParameters", message: expect.stringContaining("a WHILE must not use secrets") }]);
    // Its loop's run names are taken, as a DO_WHILE's.
    expect(issues([{ name: "l", taskReferenceName: "l", type: "WHILE", loopCondition: "true", loopOver: body }, { ...body[0], taskReferenceName: "a__2" }]).map((issue) => issue.path)).toEqual(["tasks[1].taskReferenceName"]);
    expect(definitionScripts({ name: "loops", tasks: [{ name: "l", taskReferenceName: "l", type: "WHILE", loopCondition: "$.l.iteration <", loopOver: body }] })).toEqual([{ source: "$.l.iteration <", path: "tasks[0].loopCondition" }]);
    expect(planOf(definitionOf([whileLoop("l", [http("a")], "true")])).usesScripts).toBe(true);
    expect(planOf(definitionOf([whileLoop("l", [http("a")], "true"), http("post")])).steps[0]).toMatchObject({ loop: { end: 2 }, next: 2 });
  });
});
