// The web UI's diagram of DO_WHILE tasks (ui/lib/diagram.js, a plain ES module run in Node): the loop's steps under
// their DO_WHILE, each with its instances of every iteration (`ref__<iteration>`), and what the elements drawn say,
// on a stand-in document just big enough for ui/lib/dom.js's builder (as in ui-fork.test.ts).
import { describe, expect, it } from "vitest";
import type { FakeElement } from "./ui-document";
import { buttonOf, describeFrame, diagramModule, findItem, notesOf, refsOf, statusOf, stepNamed, type WorkflowTask, type Task, type Step } from "./ui-diagram";

interface ExecutionModule {
  pendingSkipReference(step: Step): string | null;
}

const { allSteps, attemptsOf, diagram, stepsOf, systemTaskNote } = diagramModule;
const { pendingSkipReference } = (await import(/* @vite-ignore */ new URL("../../ui/views/execution.js", import.meta.url).href)) as ExecutionModule;

const http = (ref: string): WorkflowTask => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { uri: "https://example.com" } });
const loop = (ref: string, loopOver: WorkflowTask[], loopCondition?: string, extra: Partial<WorkflowTask> = {}): WorkflowTask => ({
  name: ref, taskReferenceName: ref, type: "DO_WHILE", inputParameters: {}, loopOver, ...(loopCondition === undefined ? {} : { loopCondition }), ...extra,
});
const switchOn = (ref: string, decisionCases: Record<string, WorkflowTask[]>, defaultCase: WorkflowTask[] = []): WorkflowTask => ({
  name: ref, taskReferenceName: ref, type: "SWITCH", evaluatorType: "value-param", expression: "kind", inputParameters: { kind: "${workflow.input.kind}" }, decisionCases, defaultCase,
});

/**
 * An execution's task list, in the order given, as the API returns it (src/engine/view.ts): a task of a loop is named
 * `ref__<iteration>`, with that iteration and `loopOverTask`; a DO_WHILE carries its iteration (given in `fields`), and
 * `loopOverTask` once it is past 0, as Conductor's Task.isLoopOverTask.
 */
function execution(definitionTasks: WorkflowTask[], instances: Array<[ref: string, status: string, fields?: Partial<Task>]>): Task[] {
  const byRef = new Map<string, { task: WorkflowTask; inLoop: boolean }>();
  const index = (list: WorkflowTask[], inLoop: boolean): void => {
    for (const task of list) {
      byRef.set(task.taskReferenceName, { task, inLoop });
      for (const branch of [...Object.values(task.decisionCases ?? {}), task.defaultCase ?? [], ...(task.forkTasks ?? [])]) index(branch, inLoop);
      index(task.loopOver ?? [], true);
    }
  };
  index(definitionTasks, false);
  return instances.map(([ref, status, fields = {}], seq) => {
    // In a loop nested in others, ref__<outer>__<inner>: the last number is its own loop's iteration.
    const [, base = ref, iterations] = /^(.*?)((?:__[1-9][0-9]*)+)$/.exec(ref) ?? [];
    const iteration = iterations?.split("__").at(-1);
    const found = byRef.get(ref) ?? (iteration === undefined ? undefined : byRef.get(base));
    if (!found) throw new Error(`no task ${ref} in the definition`);
    const inLoop = found.inLoop && found.task.taskReferenceName !== ref;
    const ended = !["SCHEDULED", "IN_PROGRESS"].includes(status);
    const shown: Task = {
      taskId: `t${seq}`, referenceTaskName: ref, taskType: found.task.type, status, seq: seq + 1, startTime: 1000 + seq, endTime: ended ? 2000 + seq : 0, scheduledTime: 1000 + seq,
      workflowTask: found.task, inputData: {}, outputData: {}, iteration: inLoop ? Number(iteration) : 0, ...fields,
    };
    return { ...shown, loopOverTask: fields.loopOverTask ?? (shown.iteration ?? 0) > 0 };
  });
}

/** The loop drawn under a DO_WHILE's step, by the name a screen reader reads. */
function loopOf(root: FakeElement, ref: string): FakeElement {
  const group = root.descendants().find((element) => element.getAttribute("role") === "group" && element.getAttribute("aria-label") === `Loop of ${ref}`);
  if (!group) throw new Error(`no loop of ${ref}`);
  return group;
}
/** A loop's (or branch's) class, label, and the reference names and statuses of its steps. */
const describeGroup = (group: FakeElement) => ({ className: group.className, ...describeFrame(group) });
/** What a step's button says under its status (attempts, iteration), null when nothing. */
const runNoteOf = (root: FakeElement, ref: string): string | null => buttonOf(root, ref).children.find((child) => child.hasClass("node-attempts"))?.textContent ?? null;

/** A task, a loop of two tasks repeated while the second says so, then one more task. */
const POLL_DEFINITION: WorkflowTask[] = [http("prepare"), loop("poll_loop", [http("poll"), http("check")], "$.check.body.pending"), http("ship")];

describe("the UI and DO_WHILE tasks", () => {
  it("says what a DO_WHILE repeats, from its definition: its condition cut as an INLINE script is, its items, keepLastN", () => {
    expect(systemTaskNote(loop("l", [http("a")], "$.l.iteration < 3"))).toBe("repeats while $.l.iteration < 3");
    expect(systemTaskNote(loop("l", [http("a")], "$.a.body.status\n   !== 'done'", { evaluatorType: "graaljs" }))).toBe("repeats while $.a.body.status !== 'done'");
    const long = `(function () { return ${"$.a.n + ".repeat(20)}0 < 100; })()`;
    expect(systemTaskNote(loop("l", [http("a")], long))).toBe(`repeats while ${long.slice(0, 60)}…`);
    // The same cut as an INLINE step's script.
    expect(systemTaskNote({ taskReferenceName: "i", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: long } })).toBe(`computes ${long.slice(0, 60)}…`);
    expect(systemTaskNote(loop("l", [http("a")], "goOn", { evaluatorType: "value-param", inputParameters: { goOn: "${a.output.more}" } }))).toBe("repeats while input goOn holds");
    expect(systemTaskNote(loop("l", [http("a")], undefined, { inputParameters: { items: "${workflow.input.orders}" } }))).toBe("once for each item of ${workflow.input.orders}");
    expect(systemTaskNote(loop("l", [http("a")], undefined, { inputParameters: { items: [1, 2, 3] } }))).toBe("once for each item of [1,2,3]");
    expect(systemTaskNote(loop("l", [http("a")], "$.a.body !== 'stop'", { inputParameters: { items: "${workflow.input.orders}", keepLastN: 2 } })))
      .toBe("once for each item of ${workflow.input.orders}; keeps the last 2 iterations");
    expect(systemTaskNote(loop("l", [http("a")], "$.l.iteration < 9", { inputParameters: { keepLastN: "${workflow.input.keep}" } })))
      .toBe("repeats while $.l.iteration < 9; keeps the last ${workflow.input.keep} iterations");
    expect(systemTaskNote(loop("l", [http("a")], "true", { inputParameters: { keepLastN: 1 } }))).toBe("repeats while true; keeps the last iteration");
  });

  it("gives a definition's DO_WHILE its loop's steps, in the order written, none run, drawn under it", () => {
    const steps = stepsOf(POLL_DEFINITION);
    expect(refsOf(steps)).toEqual(["prepare", "poll_loop", "ship"]);
    const loopStep = steps[1]!;
    expect(loopStep.loop && refsOf(loopStep.loop.steps)).toEqual(["poll", "check"]);
    expect(loopStep.loop?.notTaken).toBe(false);
    expect(loopStep.loop?.steps.map((step) => step.inLoop)).toEqual([true, true]);
    expect(refsOf(allSteps(steps))).toEqual(["prepare", "poll_loop", "poll", "check", "ship"]);

    const drawn = diagram(steps);
    expect(describeGroup(loopOf(drawn, "poll_loop"))).toEqual({ className: "loop", label: "each iteration", stepsLabel: "Steps of poll_loop, each iteration", steps: ["poll:NOT_STARTED", "check:NOT_STARTED"] });
    // The loop lies in the DO_WHILE's own item, not after it as a step of the workflow.
    expect(findItem(drawn, "poll_loop").children.some((child) => child.hasClass("loop"))).toBe(true);
    expect(notesOf(drawn, "poll_loop")).toEqual(["repeats while $.check.body.pending"]);
    expect(runNoteOf(drawn, "poll")).toBeNull();
  });

  it("takes ref__<iteration> as the loop step ref's instances, shows the latest iteration's status, and which iteration the DO_WHILE runs", () => {
    const tasks = execution(POLL_DEFINITION, [
      ["prepare", "COMPLETED"],
      ["poll_loop", "IN_PROGRESS", { iteration: 3, outputData: { iteration: 3, 1: { poll: {}, check: {} }, 2: { poll: {}, check: {} } } }],
      ["poll__1", "COMPLETED"], ["check__1", "COMPLETED"], ["poll__2", "COMPLETED"], ["check__2", "COMPLETED"], ["poll__3", "IN_PROGRESS"],
    ]);
    const steps = stepsOf(POLL_DEFINITION, tasks);
    const poll = stepNamed(steps, "poll");
    expect(poll.instances.map((task) => task.referenceTaskName)).toEqual(["poll__1", "poll__2", "poll__3"]);
    expect(statusOf(poll)).toBe("IN_PROGRESS");
    // Its run in iteration 3 has not come yet: the status shown is iteration 2's.
    expect(stepNamed(steps, "check").instances.map((task) => task.referenceTaskName)).toEqual(["check__1", "check__2"]);
    expect(attemptsOf(poll).map((task) => task.referenceTaskName)).toEqual(["poll__3"]);
    expect(stepNamed(steps, "poll_loop").instances.map((task) => task.referenceTaskName)).toEqual(["poll_loop"]);

    const drawn = diagram(steps);
    expect(describeGroup(loopOf(drawn, "poll_loop")).steps).toEqual(["poll:IN_PROGRESS", "check:COMPLETED"]);
    expect(buttonOf(drawn, "poll_loop").getAttribute("data-status")).toBe("IN_PROGRESS");
    expect(notesOf(drawn, "poll_loop")).toEqual(["repeats while $.check.body.pending", "iteration 3"]);
    // Iterations are not attempts: each loop step says which iteration its status is from.
    expect(runNoteOf(drawn, "poll")).toBe("iteration 3");
    expect(runNoteOf(drawn, "check")).toBe("iteration 2");
    expect(runNoteOf(drawn, "poll_loop")).toBeNull();

    // Done: how many iterations it ran.
    const done = stepsOf(POLL_DEFINITION, execution(POLL_DEFINITION, [
      ["prepare", "COMPLETED"], ["poll_loop", "COMPLETED", { iteration: 2, outputData: { iteration: 2 } }],
      ["poll__1", "COMPLETED"], ["check__1", "COMPLETED"], ["poll__2", "COMPLETED"], ["check__2", "COMPLETED"], ["ship", "IN_PROGRESS"],
    ]));
    expect(notesOf(diagram(done), "poll_loop")).toEqual(["repeats while $.check.body.pending", "ran 2 iterations"]);
  });

  it("draws a loop inside a loop under its DO_WHILE, each step with its runs of every iteration of both (ref__<outer>__<inner>)", () => {
    const definition: WorkflowTask[] = [loop("outer", [loop("inner", [http("body")], "$.inner.iteration < 2"), http("post")], "$.outer.iteration < 2")];
    const tasks = execution(definition, [
      ["outer", "IN_PROGRESS", { iteration: 2, outputData: { iteration: 2 } }],
      ["inner__1", "COMPLETED", { iteration: 2, outputData: { iteration: 2 } }], ["body__1__1", "COMPLETED"], ["body__1__2", "COMPLETED"], ["post__1", "COMPLETED"],
      ["inner__2", "IN_PROGRESS", { iteration: 1, outputData: { iteration: 1 } }], ["body__2__1", "IN_PROGRESS"],
    ]);
    const steps = stepsOf(definition, tasks);
    expect(refsOf(allSteps(steps))).toEqual(["outer", "inner", "body", "post"]);
    expect(stepNamed(steps, "inner").instances.map((task) => task.referenceTaskName)).toEqual(["inner__1", "inner__2"]);
    expect(stepNamed(steps, "body").instances.map((task) => task.referenceTaskName)).toEqual(["body__1__1", "body__1__2", "body__2__1"]);
    const drawn = diagram(steps);
    expect(describeGroup(loopOf(drawn, "outer")).steps).toEqual(["inner:IN_PROGRESS", "post:COMPLETED"]);
    expect(describeGroup(loopOf(drawn, "inner")).steps).toEqual(["body:IN_PROGRESS"]);
    expect(notesOf(drawn, "inner")).toEqual(["repeats while $.inner.iteration < 2", "iteration 1"]);
  });

  it("counts a loop step's retries within its latest iteration, and says where a DO_WHILE ended or how far its items went", () => {
    const definition: WorkflowTask[] = [loop("each", [http("charge")], undefined, { inputParameters: { items: "${workflow.input.orders}" } })];
    const tasks = execution(definition, [
      ["each", "FAILED", { iteration: 2, inputData: { items: ["a", "b", "c"] }, outputData: { iteration: 2, loopIndex: 1, loopItem: "b" } }],
      ["charge__1", "COMPLETED"], ["charge__2", "FAILED"], ["charge__2", "FAILED"],
    ]);
    const steps = stepsOf(definition, tasks);
    const charge = stepNamed(steps, "charge");
    expect(charge.instances.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["charge__1:COMPLETED", "charge__2:FAILED", "charge__2:FAILED"]);
    expect(attemptsOf(charge).map((task) => task.taskId)).toEqual(["t2", "t3"]);
    const drawn = diagram(steps);
    expect(runNoteOf(drawn, "charge")).toBe("iteration 2, 2 attempts");
    expect(notesOf(drawn, "each")).toEqual(["once for each item of ${workflow.input.orders}", "ended in iteration 2"]);

    const running = execution(definition, [["each", "IN_PROGRESS", { iteration: 2, inputData: { items: ["a", "b", "c"] }, outputData: { iteration: 2 } }], ["charge__1", "COMPLETED"], ["charge__2", "SCHEDULED"]]);
    expect(notesOf(diagram(stepsOf(definition, running)), "each")).toEqual(["once for each item of ${workflow.input.orders}", "iteration 2 of 3"]);
    // An empty list: the DO_WHILE completes at once, having run no iteration.
    const empty = execution(definition, [["each", "COMPLETED", { iteration: 0, inputData: { items: [] }, outputData: { iteration: 0 } }]]);
    expect(notesOf(diagram(stepsOf(definition, empty)), "each")).toEqual(["once for each item of ${workflow.input.orders}", "ran no iteration"]);
  });

  it("keeps a task outside the loop named like an iteration (poll__2) apart from the loop's instances", () => {
    const poll = http("poll");
    const definition: WorkflowTask[] = [loop("l", [poll], "$.l.iteration < 2"), http("poll__2")];
    const tasks = execution(definition, [
      ["l", "COMPLETED", { iteration: 2 }], ["poll__1", "COMPLETED"],
      // The loop's run in iteration 2 (loopOverTask), then the task after the loop, of the same name (no loopOverTask).
      ["poll__2", "COMPLETED", { iteration: 2, loopOverTask: true, workflowTask: poll }], ["poll__2", "IN_PROGRESS"],
    ]);
    // The DO_WHILE shows loopOverTask too (its iteration is past 0), as Conductor's; it stays its own step's.
    expect(tasks.map((task) => [task.referenceTaskName, task.loopOverTask])).toEqual([["l", true], ["poll__1", true], ["poll__2", true], ["poll__2", false]]);
    expect(stepNamed(stepsOf(definition, tasks), "l").instances.map((task) => task.taskId)).toEqual(["t0"]);
    const steps = stepsOf(definition, tasks);
    expect(stepNamed(steps, "poll").instances.map((task) => task.taskId)).toEqual(["t1", "t2"]);
    expect(stepNamed(steps, "poll__2").instances.map((task) => task.taskId)).toEqual(["t3"]);
  });

  it("shows the branch a SWITCH in the loop took in its latest iteration, the others not taken", () => {
    const definition: WorkflowTask[] = [loop("l", [switchOn("choose", { even: [http("even")], odd: [http("odd")] }), http("after")], "$.l.iteration < 3")];
    const tasks = execution(definition, [
      ["l", "IN_PROGRESS", { iteration: 2 }],
      ["choose__1", "COMPLETED", { outputData: { evaluationResult: ["odd"] } }], ["odd__1", "COMPLETED"], ["after__1", "COMPLETED"],
      ["choose__2", "COMPLETED", { outputData: { evaluationResult: ["even"] } }], ["even__2", "IN_PROGRESS"],
    ]);
    const steps = stepsOf(definition, tasks);
    expect(refsOf(allSteps(steps))).toEqual(["l", "choose", "even", "odd", "after"]);
    const choose = stepNamed(steps, "choose");
    expect(choose.branches?.map((branch) => [branch.caseValue, branch.taken])).toEqual([["even", true], ["odd", false], [null, false]]);
    expect(stepNamed(steps, "even")).toMatchObject({ inLoop: true });
    expect(stepNamed(steps, "even").notTaken).toBeUndefined();
    expect(statusOf(stepNamed(steps, "even"))).toBe("IN_PROGRESS");
    // Not taken in the latest iteration; its run in iteration 1 stays its instance.
    expect(stepNamed(steps, "odd")).toMatchObject({ notTaken: true, inLoop: true });
    expect(stepNamed(steps, "odd").instances.map((task) => task.referenceTaskName)).toEqual(["odd__1"]);

    const drawn = diagram(steps);
    expect(describeGroup(loopOf(drawn, "l")).steps).toEqual(["choose:COMPLETED", "after:COMPLETED"]);
    const branches = drawn.descendants().find((element) => element.getAttribute("aria-label") === "Branches of choose");
    expect(branches?.children.map((branch) => describeGroup(branch)).map(({ className, steps: branchSteps }) => [className, branchSteps])).toEqual([
      ["branch taken", ["even:IN_PROGRESS"]], ["branch not-taken", ["odd:COMPLETED"]], ["branch not-taken", []],
    ]);
    expect(runNoteOf(drawn, "odd")).toBe("iteration 1");
    expect(notesOf(drawn, "l")).toEqual(["repeats while $.l.iteration < 3", "iteration 2"]);
  });

  it("draws a FORK_JOIN in the loop with its branches, its JOIN waiting for its own iteration's tasks", () => {
    const fork: WorkflowTask = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", inputParameters: {}, forkTasks: [[http("a")], [http("b")]] };
    const join: WorkflowTask = { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", inputParameters: {}, joinOn: ["a", "b"] };
    const definition: WorkflowTask[] = [loop("l", [fork, join], "$.l.iteration < 3")];
    const tasks = execution(definition, [
      ["l", "IN_PROGRESS", { iteration: 2 }],
      ["fan__1", "COMPLETED"], ["fan_join__1", "COMPLETED"], ["a__1", "COMPLETED"], ["b__1", "COMPLETED"],
      ["fan__2", "COMPLETED"], ["fan_join__2", "IN_PROGRESS"], ["a__2", "COMPLETED"], ["b__2", "IN_PROGRESS"],
    ]);
    const steps = stepsOf(definition, tasks);
    expect(refsOf(allSteps(steps))).toEqual(["l", "fan", "a", "b", "fan_join"]);
    expect(stepNamed(steps, "b")).toMatchObject({ inLoop: true });
    expect(stepNamed(steps, "b").instances.map((task) => task.referenceTaskName)).toEqual(["b__1", "b__2"]);
    // Iteration 1's b ended well: the JOIN of iteration 2 still waits for its own.
    expect(stepNamed(steps, "fan_join").waitingOn).toEqual(["b"]);
    const drawn = diagram(steps);
    expect(notesOf(drawn, "fan_join")).toEqual(["waits for a, b", "still waiting for b"]);
  });

  it("marks a loop and its steps not taken inside a SWITCH branch not taken, and makes a loop step selectable", () => {
    const definition: WorkflowTask[] = [switchOn("route", { repeat: [loop("l", [http("a")], "$.l.iteration < 2")] }, [http("once")])];
    const notTaken = stepsOf(definition, execution(definition, [["route", "COMPLETED", { outputData: { evaluationResult: ["other"] } }], ["once", "COMPLETED"]]));
    expect(stepNamed(notTaken, "l").loop?.notTaken).toBe(true);
    expect(stepNamed(notTaken, "a").notTaken).toBe(true);
    expect(describeGroup(loopOf(diagram(notTaken), "l"))).toMatchObject({ className: "loop not-taken", label: "each iteration not taken" });

    const taken = stepsOf(definition, execution(definition, [["route", "COMPLETED", { outputData: { evaluationResult: ["repeat"] } }], ["l", "IN_PROGRESS", { iteration: 1 }], ["a__1", "IN_PROGRESS"]]));
    expect(stepNamed(taken, "a").notTaken).toBeUndefined();
    const chosen: string[] = [];
    const drawn = diagram(taken, { selectedRef: "a", onSelect: (step) => chosen.push(`${step.definitionTask.taskReferenceName}:${statusOf(step)}`) });
    expect(buttonOf(drawn, "a").getAttribute("aria-pressed")).toBe("true");
    buttonOf(drawn, "a").click();
    expect(chosen).toEqual(["a:IN_PROGRESS"]);
  });

  it("skips a pending loop task by its definition's name (the service knows no poll__2), and offers no skip of a running DO_WHILE", () => {
    const hold: WorkflowTask = { name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} };
    const child: WorkflowTask = { name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", inputParameters: {} };
    const definition: WorkflowTask[] = [http("first"), loop("l", [hold, http("after")], "$.l.iteration < 3"), child];
    const running = stepsOf(definition, execution(definition, [
      ["first", "COMPLETED"], ["l", "IN_PROGRESS", { iteration: 2 }], ["hold__1", "COMPLETED"], ["after__1", "COMPLETED"], ["hold__2", "IN_PROGRESS"],
    ]));
    expect(pendingSkipReference(stepNamed(running, "hold"))).toBe("hold");
    // The service refuses to skip a DO_WHILE while its loop runs; ended tasks and those not reached are no pending skip.
    expect(pendingSkipReference(stepNamed(running, "l"))).toBeNull();
    expect(pendingSkipReference(stepNamed(running, "after"))).toBeNull();
    expect(pendingSkipReference(stepNamed(running, "first"))).toBeNull();
    expect(pendingSkipReference(stepNamed(running, "child"))).toBeNull();

    const later = stepsOf(definition, execution(definition, [["first", "COMPLETED"], ["l", "COMPLETED", { iteration: 1 }], ["hold__1", "COMPLETED"], ["after__1", "COMPLETED"], ["child", "IN_PROGRESS"]]));
    expect(pendingSkipReference(stepNamed(later, "child"))).toBeNull();
    const outside = stepsOf([http("call")], execution([http("call")], [["call", "SCHEDULED"]]));
    expect(pendingSkipReference(outside[0]!)).toBe("call");
  });

  it("draws a WHILE (Conductor OSS's) as a DO_WHILE, its note saying the condition is asked first; one that ran none shows its loop not run, and no skip while it runs", () => {
    const definition: WorkflowTask[] = [loop("poll_loop", [http("poll"), http("check")], "$.check.body.pending", { type: "WHILE" }), http("ship")];
    expect(systemTaskNote(definition[0]!)).toBe("repeats while $.check.body.pending, asked before the first iteration too");
    expect(systemTaskNote(loop("each", [http("a")], undefined, { type: "WHILE", inputParameters: { items: "${workflow.input.orders}" } }))).toBe("once for each item of ${workflow.input.orders}");
    const running = stepsOf(definition, execution(definition, [["poll_loop", "IN_PROGRESS", { iteration: 2 }], ["poll__1", "COMPLETED"], ["check__1", "COMPLETED"], ["poll__2", "IN_PROGRESS"]]));
    expect(refsOf(allSteps(running))).toEqual(["poll_loop", "poll", "check", "ship"]);
    const drawn = diagram(running);
    expect(describeGroup(loopOf(drawn, "poll_loop")).steps).toEqual(["poll:IN_PROGRESS", "check:COMPLETED"]);
    expect(notesOf(drawn, "poll_loop")).toEqual(["repeats while $.check.body.pending, asked before the first iteration too", "iteration 2"]);
    expect(runNoteOf(drawn, "poll")).toBe("iteration 2");
    expect(pendingSkipReference(stepNamed(running, "poll_loop"))).toBeNull();
    expect(pendingSkipReference(stepNamed(running, "poll"))).toBe("poll");

    const none = stepsOf(definition, execution(definition, [["poll_loop", "COMPLETED", { iteration: 0, outputData: { iteration: 0 } }], ["ship", "IN_PROGRESS"]]));
    const drawnNone = diagram(none);
    expect(notesOf(drawnNone, "poll_loop")).toEqual(["repeats while $.check.body.pending, asked before the first iteration too", "ran no iteration"]);
    expect(describeGroup(loopOf(drawnNone, "poll_loop")).steps).toEqual(["poll:NOT_STARTED", "check:NOT_STARTED"]);
  });
});
