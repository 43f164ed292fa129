// The web UI's diagram of FORK_JOIN and JOIN tasks (ui/lib/diagram.js, a plain ES module run in Node): the steps it
// builds from a definition and an execution, and the elements it draws, on a stand-in document just big enough for
// ui/lib/dom.js's builder.
import { describe, expect, it } from "vitest";
import type { FakeElement } from "./ui-document";
import { buttonOf, describeFrame, diagramModule, findItem, notesOf, refsOf, statusOf, stepNamed, type WorkflowTask, type Task, type Step } from "./ui-diagram";

const { allSteps, diagram, stepsOf, systemTaskNote } = diagramModule;

const http = (ref: string): WorkflowTask => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { uri: "https://example.com" } });
const fork = (ref: string, forkTasks: WorkflowTask[][]): WorkflowTask => ({ name: ref, taskReferenceName: ref, type: "FORK_JOIN", inputParameters: {}, forkTasks });
const join = (ref: string, joinOn: string[]): WorkflowTask => ({ name: ref, taskReferenceName: ref, type: "JOIN", joinOn });
const switchOn = (ref: string, decisionCases: Record<string, WorkflowTask[]>, defaultCase: WorkflowTask[] = []): WorkflowTask => ({
  name: ref, taskReferenceName: ref, type: "SWITCH", evaluatorType: "value-param", expression: "kind", inputParameters: { kind: "${workflow.input.kind}" }, decisionCases, defaultCase,
});

/** An execution's task list, in the order given (the service's scheduling order), as the API returns it. */
function execution(definitionTasks: WorkflowTask[], instances: Array<[ref: string, status: string, outputData?: Record<string, unknown>, inputData?: Record<string, unknown>]>): Task[] {
  const byRef = new Map<string, WorkflowTask>();
  const index = (list: WorkflowTask[]): void => {
    for (const task of list) {
      byRef.set(task.taskReferenceName, task);
      for (const branch of [...Object.values(task.decisionCases ?? {}), task.defaultCase ?? [], ...(task.forkTasks ?? []), ...(task.conditionalBranches ?? []).map((each) => each.tasks)]) index(branch);
    }
  };
  index(definitionTasks);
  return instances.map(([ref, status, outputData = {}, inputData = {}], seq) => {
    const workflowTask = byRef.get(ref);
    if (!workflowTask) throw new Error(`no task ${ref} in the definition`);
    const ended = !["SCHEDULED", "IN_PROGRESS"].includes(status);
    return { taskId: `t${seq}`, referenceTaskName: ref, taskType: workflowTask.type, status, seq: seq + 1, startTime: 1000 + seq, endTime: ended ? 2000 + seq : 0, scheduledTime: 1000 + seq, workflowTask, outputData, inputData };
  });
}


/** The list of a FORK_JOIN's (or SWITCH's) branches in a drawn diagram, by the name a screen reader reads. */
function branchList(root: FakeElement, ref: string): FakeElement {
  const list = root.descendants().find((element) => element.tagName === "ul" && element.getAttribute("aria-label") === `Branches of ${ref}`);
  if (!list) throw new Error(`no branches of ${ref}`);
  return list;
}
const describeBranch = describeFrame;

/** Two branches, the first of two tasks, then a JOIN on each branch's last task, then one more task. */
const ORDER_DEFINITION: WorkflowTask[] = [
  http("prepare"),
  fork("fan_out", [[http("charge"), http("receipt")], [http("reserve")]]),
  join("fan_in", ["receipt", "reserve"]),
  http("ship"),
];

describe("the UI and FORK_JOIN tasks", () => {
  it("says what a FORK_JOIN and a JOIN do, from their definitions", () => {
    expect(systemTaskNote(fork("f", [[http("a")], [http("b")], [http("c")]]))).toBe("runs 3 branches in parallel");
    expect(systemTaskNote(fork("f", [[http("a")]]))).toBe("runs 1 branch");
    expect(systemTaskNote(join("j", ["a", "b"]))).toBe("waits for a, b");
    expect(systemTaskNote(join("j", []))).toBe("waits for nothing");
    // A join script decides when its JOIN ends: the note does not claim it waits for every joined task.
    const scripted = (joinOn: string[]): WorkflowTask => ({ ...join("j", joinOn), evaluatorType: "js", expression: "(function(){ return true; })()" });
    expect(systemTaskNote(scripted(["a", "b"]))).toBe("its join script decides when it ends over a, b");
    expect(systemTaskNote(scripted([]))).toBe("its join script decides when it ends");
    expect(systemTaskNote({ ...scripted([]), joinOn: undefined, joinsForked: true })).toBe("its join script decides when it ends over every task its fork forks");
    expect(systemTaskNote({ ...join("j", ["a"]), expression: "  " })).toBe("waits for a");
    // A JOIN's list is its point: every name shows, however many there are (unlike SET_VARIABLE's).
    expect(systemTaskNote(join("j", ["a", "b", "c", "d", "e"]))).toBe("waits for a, b, c, d, e");
  });

  it("gives a definition's fork its branches in the order written, none run and none marked not taken", () => {
    const steps = stepsOf(ORDER_DEFINITION);
    expect(refsOf(steps)).toEqual(["prepare", "fan_out", "fan_in", "ship"]);
    const forkStep = steps[1]!;
    expect(forkStep.forkBranches?.map((branch) => refsOf(branch.steps))).toEqual([["charge", "receipt"], ["reserve"]]);
    expect(forkStep.forkBranches?.map((branch) => branch.notTaken)).toEqual([false, false]);
    expect(allSteps(steps).some((step) => step.notTaken)).toBe(false);
    expect(steps[2]!.waitingOn).toBeUndefined();

    const drawn = diagram(steps);
    expect(branchList(drawn, "fan_out").children.map(describeBranch)).toEqual([
      { label: "branch 1", stepsLabel: "Steps of fan_out, branch 1", steps: ["charge:NOT_STARTED", "receipt:NOT_STARTED"] },
      { label: "branch 2", stepsLabel: "Steps of fan_out, branch 2", steps: ["reserve:NOT_STARTED"] },
    ]);
    expect(notesOf(drawn, "fan_out")).toEqual(["runs 2 branches in parallel"]);
    expect(notesOf(drawn, "fan_in")).toEqual(["waits for receipt, reserve"]);
  });

  it("shows each branch task's own status while branches run side by side, and which tasks a waiting JOIN still waits for", () => {
    // Scheduling order, not branch order: the fork, its JOIN, then the branch tasks as they came.
    const tasks = execution(ORDER_DEFINITION, [
      ["prepare", "COMPLETED"], ["fan_out", "COMPLETED"], ["fan_in", "IN_PROGRESS"], ["charge", "COMPLETED"], ["reserve", "IN_PROGRESS"], ["receipt", "SCHEDULED"],
    ]);
    const steps = stepsOf(ORDER_DEFINITION, tasks);
    const [, forkStep, joinStep] = steps;
    expect(forkStep!.forkBranches?.map((branch) => branch.steps.map((step) => `${step.definitionTask.taskReferenceName}:${statusOf(step)}`)))
      .toEqual([["charge:COMPLETED", "receipt:SCHEDULED"], ["reserve:IN_PROGRESS"]]);
    expect(joinStep!.waitingOn).toEqual(["receipt", "reserve"]);

    const drawn = diagram(steps);
    expect(branchList(drawn, "fan_out").children.map(describeBranch).map((branch) => branch.steps)).toEqual([["charge:COMPLETED", "receipt:SCHEDULED"], ["reserve:IN_PROGRESS"]]);
    // All branches run: none is labelled taken or not.
    expect(drawn.descendants().filter((element) => element.hasClass("branch-state"))).toEqual([]);
    expect(branchList(drawn, "fan_out").children.map((branch) => branch.className)).toEqual(["branch", "branch"]);
    expect(buttonOf(drawn, "fan_in").getAttribute("data-status")).toBe("IN_PROGRESS");
    expect(notesOf(drawn, "fan_in")).toEqual(["waits for receipt, reserve", "still waiting for receipt, reserve"]);

    // One branch done (an optional task's failure counts as done, as for Conductor's JOIN): it waits for the other only.
    const later = stepsOf(ORDER_DEFINITION, execution(ORDER_DEFINITION, [
      ["prepare", "COMPLETED"], ["fan_out", "COMPLETED"], ["fan_in", "IN_PROGRESS"], ["charge", "COMPLETED"], ["reserve", "COMPLETED_WITH_ERRORS"], ["receipt", "IN_PROGRESS"],
    ]));
    expect(later[2]!.waitingOn).toEqual(["receipt"]);

    // Once the JOIN completed, it waits for nothing more.
    const done = stepsOf(ORDER_DEFINITION, execution(ORDER_DEFINITION, [
      ["prepare", "COMPLETED"], ["fan_out", "COMPLETED"], ["fan_in", "COMPLETED", { receipt: {}, reserve: {} }], ["charge", "COMPLETED"], ["reserve", "COMPLETED"], ["receipt", "COMPLETED"],
    ]));
    expect(done[2]!.waitingOn).toBeUndefined();
    expect(notesOf(diagram(done), "fan_in")).toEqual(["waits for receipt, reserve"]);
  });

  it("finds a branch task by its reference name and makes it a selectable step like any other", () => {
    const tasks = execution(ORDER_DEFINITION, [["prepare", "COMPLETED"], ["fan_out", "COMPLETED"], ["fan_in", "IN_PROGRESS"], ["charge", "IN_PROGRESS"], ["reserve", "SCHEDULED"]]);
    const steps = stepsOf(ORDER_DEFINITION, tasks);
    // The execution page looks up the selected step this way (ui/views/execution.js, renderTask).
    const reserve = stepNamed(steps, "reserve");
    expect(reserve.instances.map((task) => task.taskId)).toEqual(["t4"]);
    expect(reserve.notTaken).toBeUndefined();
    expect(refsOf(allSteps(steps))).toEqual(["prepare", "fan_out", "charge", "receipt", "reserve", "fan_in", "ship"]);

    const chosen: string[] = [];
    const drawn = diagram(steps, { selectedRef: "reserve", onSelect: (step) => chosen.push(step.definitionTask.taskReferenceName) });
    const button = buttonOf(drawn, "reserve");
    expect(button.getAttribute("type")).toBe("button");
    expect(button.getAttribute("aria-pressed")).toBe("true");
    expect(buttonOf(drawn, "charge").getAttribute("aria-pressed")).toBe("false");
    expect(findItem(drawn, "reserve").className).toBe("node selected");
    button.click();
    buttonOf(drawn, "receipt").click();
    expect(chosen).toEqual(["reserve", "receipt"]);
  });

  it("marks a fork's branches and their steps not taken inside a SWITCH branch not taken, and runs them inside the one taken", () => {
    const definition: WorkflowTask[] = [
      switchOn("route", {
        split: [fork("inner_fork", [[http("left")], [switchOn("deep", { x: [http("deep_x")] })]]), join("inner_join", ["left"])],
      }, [http("single")]),
    ];
    const notTaken = stepsOf(definition, execution(definition, [["route", "COMPLETED", { evaluationResult: ["other"] }], ["single", "COMPLETED"]]));
    const forkStep = stepNamed(notTaken, "inner_fork");
    expect(forkStep.notTaken).toBe(true);
    expect(forkStep.forkBranches?.map((branch) => branch.notTaken)).toEqual([true, true]);
    expect(["left", "deep", "deep_x", "inner_join"].map((ref) => stepNamed(notTaken, ref).notTaken)).toEqual([true, true, true, true]);
    expect(stepNamed(notTaken, "single").notTaken).toBeUndefined();
    const drawnNotTaken = diagram(notTaken);
    expect(branchList(drawnNotTaken, "inner_fork").children.map((branch) => [branch.className, describeBranch(branch).label]))
      .toEqual([["branch not-taken", "branch 1 not taken"], ["branch not-taken", "branch 2 not taken"]]);

    const taken = stepsOf(definition, execution(definition, [
      ["route", "COMPLETED", { evaluationResult: ["split"] }], ["inner_fork", "COMPLETED"], ["inner_join", "IN_PROGRESS"], ["left", "IN_PROGRESS"], ["deep", "COMPLETED", { evaluationResult: ["x"] }], ["deep_x", "SCHEDULED"],
    ]));
    expect(stepNamed(taken, "inner_fork").forkBranches?.map((branch) => branch.notTaken)).toEqual([false, false]);
    expect(allSteps(taken).filter((step) => step.notTaken).map((step) => step.definitionTask.taskReferenceName)).toEqual(["single"]);
    expect(statusOf(stepNamed(taken, "deep_x"))).toBe("SCHEDULED");
    const drawnTaken = diagram(taken);
    expect(branchList(drawnTaken, "inner_fork").children.map(describeBranch)).toEqual([
      { label: "branch 1", stepsLabel: "Steps of inner_fork, branch 1", steps: ["left:IN_PROGRESS"] },
      { label: "branch 2", stepsLabel: "Steps of inner_fork, branch 2", steps: ["deep:COMPLETED"] },
    ]);
  });

  it("draws a SWITCH inside a fork branch with the case it took, and a fork inside a fork", () => {
    const definition: WorkflowTask[] = [
      fork("outer", [
        [switchOn("pick", { a: [http("pick_a")], b: [http("pick_b")] })],
        [fork("inner", [[http("i1")], [http("i2")]]), join("inner_join", ["i1", "i2"])],
      ]),
      join("outer_join", ["pick", "inner_join"]),
    ];
    const tasks = execution(definition, [
      ["outer", "COMPLETED"], ["outer_join", "IN_PROGRESS"], ["pick", "COMPLETED", { evaluationResult: ["b"] }], ["inner", "COMPLETED"],
      ["inner_join", "IN_PROGRESS"], ["pick_b", "COMPLETED"], ["i1", "FAILED"], ["i2", "FAILED"], ["i1", "COMPLETED"], ["i2", "IN_PROGRESS"],
    ]);
    const steps = stepsOf(definition, tasks);
    expect(stepNamed(steps, "pick").branches?.map((branch) => [branch.caseValue, branch.taken])).toEqual([["a", false], ["b", true], [null, false]]);
    expect(stepNamed(steps, "pick_a").notTaken).toBe(true);
    expect(stepNamed(steps, "pick_b").notTaken).toBeUndefined();
    // Retried branch tasks: each failed attempt stays an instance; the JOIN goes by the latest, so it waits for i2's retry only.
    expect(stepNamed(steps, "i1").instances.map((task) => task.status)).toEqual(["FAILED", "COMPLETED"]);
    expect(stepNamed(steps, "i2").instances.map((task) => task.status)).toEqual(["FAILED", "IN_PROGRESS"]);
    expect(stepNamed(steps, "inner_join").waitingOn).toEqual(["i2"]);
    expect(stepNamed(steps, "outer_join").waitingOn).toEqual(["inner_join"]);

    const drawn = diagram(steps);
    expect(branchList(drawn, "outer").children.map(describeBranch)).toEqual([
      { label: "branch 1", stepsLabel: "Steps of outer, branch 1", steps: ["pick:COMPLETED"] },
      { label: "branch 2", stepsLabel: "Steps of outer, branch 2", steps: ["inner:COMPLETED", "inner_join:IN_PROGRESS"] },
    ]);
    expect(branchList(drawn, "inner").children.map(describeBranch).map((branch) => branch.steps)).toEqual([["i1:COMPLETED"], ["i2:IN_PROGRESS"]]);
    expect(branchList(drawn, "pick").children.map((branch) => describeBranch(branch).label)).toEqual(["case a not taken", "case b taken", "default not taken"]);
    expect(notesOf(drawn, "outer_join")).toEqual(["waits for pick, inner_join", "still waiting for inner_join"]);
  });
});

describe("the UI and FORK_JOIN_DYNAMIC tasks", () => {
  const dynamicFork: WorkflowTask = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { tasks: "${prepare.output.tasks}" }, dynamicForkTasksParam: "tasks" };
  const definition: WorkflowTask[] = [http("prepare"), dynamicFork, join("fan_join", []), http("ship")];
  const task = (seq: number, ref: string, status: string, workflowTask: WorkflowTask, inputData: Record<string, unknown> = {}): Task => ({
    taskId: `t${seq}`, referenceTaskName: ref, taskType: workflowTask.type, status, seq, startTime: 1000 + seq, endTime: status === "COMPLETED" ? 2000 + seq : 0, scheduledTime: 1000 + seq, workflowTask, inputData, outputData: {},
  });

  it("says what it forks before it ran, and that its JOIN waits for all of it", () => {
    expect(systemTaskNote(dynamicFork)).toBe("forks each task of input tasks, in parallel");
    const olderForm: WorkflowTask = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { dynamicTasks: "${prepare.output.list}" }, dynamicForkJoinTasksParam: "dynamicTasks" };
    expect(systemTaskNote(olderForm)).toBe("forks each task of input dynamicTasks.dynamicTasks, in parallel");
    expect(systemTaskNote({ name: "f", taskReferenceName: "f", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskInputs: "${workflow.input.items}" } })).toBe("forks a task for each entry of ${workflow.input.items}, in parallel");
    const steps = stepsOf(definition, [task(1, "prepare", "IN_PROGRESS", http("prepare"))]);
    expect(stepNamed(steps, "fan").forkBranches).toBeUndefined();
    expect(systemTaskNote(stepNamed(steps, "fan_join").definitionTask)).toBe("waits for every task its fork forks");
  });

  it("draws each task it forked as a branch, from the forked tasks' own workflowTask, and what its JOIN waits for", () => {
    const tasks = [
      task(1, "prepare", "COMPLETED", http("prepare")),
      task(2, "fan", "COMPLETED", dynamicFork, { forkedTasks: ["call_a", "call_b"] }),
      task(3, "fan_join", "IN_PROGRESS", join("fan_join", []), { joinOn: ["call_a", "call_b"] }),
      task(4, "call_a", "COMPLETED", http("call_a")),
      task(5, "call_b", "IN_PROGRESS", http("call_b")),
    ];
    const steps = stepsOf(definition, tasks);
    expect(stepNamed(steps, "fan").forkBranches?.map((branch) => refsOf(branch.steps))).toEqual([["call_a"], ["call_b"]]);
    expect(statusOf(stepNamed(steps, "call_b"))).toBe("IN_PROGRESS");
    expect(stepNamed(steps, "fan_join").waitingOn).toEqual(["call_b"]);
    expect(systemTaskNote(stepNamed(steps, "fan_join").definitionTask)).toBe("waits for call_a, call_b");
    const drawn = diagram(steps);
    expect(branchList(drawn, "fan").children.map((branch) => describeBranch(branch).steps)).toEqual([["call_a:COMPLETED"], ["call_b:IN_PROGRESS"]]);
  });

  it("in a DO_WHILE's loop, draws what its latest iteration forked, and what that iteration's JOIN waits for", () => {
    const pages: WorkflowTask = { name: "pages", taskReferenceName: "pages", type: "DO_WHILE", inputParameters: {}, loopOver: [dynamicFork, join("fan_join", [])] };
    // As the API names a loop's tasks: `ref__<iteration>`, with that iteration and `loopOverTask`.
    const looped = (seq: number, ref: string, iteration: number, status: string, workflowTask: WorkflowTask, inputData: Record<string, unknown> = {}): Task => ({
      ...task(seq, `${ref}__${iteration}`, status, workflowTask, inputData), iteration, loopOverTask: true,
    });
    const tasks = [
      { ...task(1, "pages", "IN_PROGRESS", pages), iteration: 2 },
      looped(2, "fan", 1, "COMPLETED", dynamicFork, { forkedTasks: ["call_a", "call_b"] }),
      looped(3, "call_a", 1, "COMPLETED", http("call_a")),
      looped(4, "call_b", 1, "COMPLETED", http("call_b")),
      looped(5, "fan_join", 1, "COMPLETED", join("fan_join", []), { joinOn: ["call_a", "call_b"] }),
      looped(6, "fan", 2, "COMPLETED", dynamicFork, { forkedTasks: ["call_c"] }),
      looped(7, "call_c", 2, "IN_PROGRESS", http("call_c")),
      looped(8, "fan_join", 2, "IN_PROGRESS", join("fan_join", []), { joinOn: ["call_c"] }),
    ];
    const steps = stepsOf([pages], tasks);
    expect(stepNamed(steps, "fan").forkBranches?.map((branch) => refsOf(branch.steps))).toEqual([["call_c"]]);
    expect(stepNamed(steps, "call_c").instances.map((instance) => instance.referenceTaskName)).toEqual(["call_c__2"]);
    expect(stepNamed(steps, "fan_join").waitingOn).toEqual(["call_c"]);
    expect(systemTaskNote(stepNamed(steps, "fan_join").definitionTask)).toBe("waits for call_c");
  });
});

describe("the UI and CONDITIONAL_FORK tasks", () => {
  const conditional = (ref: string, branches: NonNullable<WorkflowTask["conditionalBranches"]>, defaultCase: WorkflowTask[] = []): WorkflowTask => ({
    name: ref, taskReferenceName: ref, type: "CONDITIONAL_FORK", inputParameters: {}, conditionalBranches: branches, defaultCase,
  });
  const DEFINITION: WorkflowTask[] = [
    conditional("route", [
      { condition: { evaluatorType: "javascript", expression: "$.amount > 100" }, tasks: [http("review"), http("approve")] },
      { condition: { evaluatorType: "value-param", expression: "express" }, tasks: [http("ship_fast")] },
      { condition: null, tasks: [http("audit")] },
    ], [http("ship_slow")]),
    join("route_join", []),
  ];

  it("draws it as a fork: its branches, each labelled with its condition, then its default; its JOIN waits for the branches it chooses", () => {
    expect(systemTaskNote(DEFINITION[0]!)).toBe("runs each of its 3 branches whose condition holds, in parallel, else its default branch");
    const steps = stepsOf(DEFINITION);
    expect(steps[0]!.forkBranches?.map((branch) => refsOf(branch.steps))).toEqual([["review", "approve"], ["ship_fast"], ["audit"], ["ship_slow"]]);
    // Before it ran, nothing is marked not taken, and its JOIN's definition joinOn (which is not read) is not shown.
    expect(allSteps(steps).some((step) => step.notTaken)).toBe(false);
    expect(systemTaskNote(steps[1]!.definitionTask)).toBe("waits for the last task of each branch its fork chooses");
    expect(branchList(diagram(steps), "route").children.map((branch) => describeBranch(branch).label)).toEqual([
      "branch 1 if $.amount > 100",
      "branch 2 if input express",
      "branch 3 always",
      "default, when no branch is chosen",
    ]);
  });

  it("once it ran, marks the branches it did not choose not taken, and its JOIN waits for the last tasks of those it chose", () => {
    const tasks = execution(DEFINITION, [
      ["route", "COMPLETED"],
      ["review", "COMPLETED"],
      ["audit", "COMPLETED"],
      ["route_join", "IN_PROGRESS", {}, { joinOn: ["approve", "audit"] }],
      ["approve", "IN_PROGRESS"],
    ]);
    const steps = stepsOf(DEFINITION, tasks);
    expect(steps[0]!.forkBranches?.map((branch) => branch.notTaken)).toEqual([false, true, false, true]);
    expect(["review", "approve", "ship_fast", "audit", "ship_slow"].map((ref) => stepNamed(steps, ref).notTaken === true)).toEqual([false, false, true, false, true]);
    expect(steps[1]!.waitingOn).toEqual(["approve"]);
    expect(systemTaskNote(steps[1]!.definitionTask)).toBe("waits for approve, audit");
    const drawn = branchList(diagram(steps), "route").children.map(describeBranch);
    expect(drawn.map((branch) => branch.label)).toEqual(["branch 1 if $.amount > 100", "branch 2 if input express not taken", "branch 3 always", "default, when no branch is chosen not taken"]);

    // Nothing chosen: the default branch alone runs.
    const fallback = stepsOf(DEFINITION, execution(DEFINITION, [["route", "COMPLETED"], ["ship_slow", "COMPLETED"], ["route_join", "COMPLETED", {}, { joinOn: ["ship_slow"] }]]));
    expect(fallback[0]!.forkBranches?.map((branch) => branch.notTaken)).toEqual([true, true, true, false]);
  });
});
