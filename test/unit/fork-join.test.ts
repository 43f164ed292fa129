import { ConductorWorkflow, forkTaskJoin, httpTask as clientHttpTask, joinTask as clientJoinTask, forkTask as clientForkTask } from "@io-orkes/conductor-javascript";
import { describe, expect, it } from "vitest";
import { awaitedChildId, isBlocked, type Decision } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import { EngineError } from "../../src/engine/errors";
import type { JsonObject, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { enclosingJoins, leavesLane, nextPlanIndex, planIndexOf, planOf, ROOT_LANE } from "../../src/engine/plan";
import { attemptEnds, env, httpGet, latestNamed, refusal, registrationErrors, startedWith } from "./engine-env";

const http = httpGet;
/** A WAIT with neither duration nor until: it waits to be completed from outside. */
const hold = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });
const fork = (ref: string, branches: WorkflowTaskDef[][]): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "FORK_JOIN", inputParameters: {}, forkTasks: branches });
const join = (ref: string, joinOn: string[]): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "JOIN", inputParameters: {}, joinOn });
const switchOn = (ref: string, decisionCases: Record<string, WorkflowTaskDef[]>, defaultCase: WorkflowTaskDef[] = []): WorkflowTaskDef => ({
  name: ref,
  taskReferenceName: ref,
  type: "SWITCH",
  evaluatorType: "value-param",
  expression: "kind",
  inputParameters: { kind: "${workflow.input.kind}" },
  decisionCases,
  defaultCase,
});
const definitionOf = (tasks: WorkflowTaskDef[]): WorkflowDef => ({ name: "forks", version: 1, schemaVersion: 2, tasks });

const started = (tasks: WorkflowTaskDef[], input: JsonObject = {}, now = 1_000): Decision => startedWith("forks", tasks, input, now);

const instance = latestNamed;

/** `ref`'s in-flight HTTP attempt ends with `status`. */
const finish = attemptEnds;

/** Completes pending task `ref` from outside. */
function complete(state: WorkflowExecution, ref: string, now: number, output: JsonObject = {}): Decision {
  return decide(state, { type: "externalUpdate", taskId: instance(state, ref).taskId, status: "COMPLETED", output }, env(now));
}

/** Fails pending task `ref` from outside; answers the state after. */
function failed(state: WorkflowExecution, ref: string, now: number): WorkflowExecution {
  return decide(state, { type: "externalUpdate", taskId: instance(state, ref).taskId, status: "FAILED", output: {} }, env(now)).state;
}

const statuses = (state: WorkflowExecution) => Object.fromEntries(state.tasks.map((task) => [task.referenceTaskName, task.status]));
const dispatched = (decision: Decision) => decision.effects.filter((effect) => effect.kind === "dispatch").map((effect) => (effect.kind === "dispatch" ? decision.state.tasks.find((task) => task.taskId === effect.taskId)!.referenceTaskName : ""));

describe("FORK_JOIN plan", () => {
  const definition = definitionOf([http("pre"), fork("fork", [[http("a1"), http("a2")], [http("b1")]]), join("join", ["a2", "b1"]), http("post")]);
  const at = (ref: string) => planIndexOf(definition, ref);

  it("lays a fork's branches out after it, each a lane of its own, then its JOIN in the fork's lane", () => {
    const plan = planOf(definition);
    expect(plan.steps.map((step) => step.task.taskReferenceName)).toEqual(["pre", "fork", "a1", "a2", "b1", "join", "post"]);
    expect(plan.hasForks).toBe(true);
    expect(plan.steps.map((step) => step.lane)).toEqual([ROOT_LANE, ROOT_LANE, at("a1"), at("a1"), at("b1"), ROOT_LANE, ROOT_LANE]);
    expect(plan.steps[at("fork")]!.fork).toEqual({ lanes: [at("a1"), at("b1")], join: at("join") });
    expect(plan.lanes.get(at("a1"))).toEqual({ first: at("a1"), end: at("b1"), fork: at("fork") });
  });

  it("goes from a fork to its JOIN, and ends a branch's lane after its last task", () => {
    const after = (ref: string) => nextPlanIndex(definition, { definitionIndex: at(ref), status: "COMPLETED", outputData: {} });
    expect(after("fork")).toBe(at("join"));
    expect(leavesLane(definition, at("fork"), after("fork"))).toBe(false);
    expect(leavesLane(definition, at("a1"), after("a1"))).toBe(false);
    expect(leavesLane(definition, at("a2"), after("a2"))).toBe(true);
    expect(leavesLane(definition, at("b1"), after("b1"))).toBe(true);
    expect(enclosingJoins(definition, at("a2"))).toEqual([at("join")]);
    expect(enclosingJoins(definition, at("post"))).toEqual([]);
  });

  it("plans a definition without forks as one lane", () => {
    const plain = definitionOf([http("a"), switchOn("s", { x: [http("x1")] })]);
    expect(planOf(plain).hasForks).toBe(false);
    expect(new Set(planOf(plain).steps.map((step) => step.lane))).toEqual(new Set([ROOT_LANE]));
  });
});

describe("FORK_JOIN and JOIN running", () => {
  const tasks = [http("pre"), fork("fork", [[http("a1"), http("a2")], [http("b1")]]), join("join", ["a2", "b1"]), http("post")];

  it("runs the branches side by side: both first tasks are dispatched in the same decision", () => {
    const afterPre = finish(started(tasks).state, "pre", 2_000);
    expect(statuses(afterPre.state)).toMatchObject({ pre: "COMPLETED", fork: "COMPLETED", join: "IN_PROGRESS", a1: "IN_PROGRESS", b1: "IN_PROGRESS" });
    expect(dispatched(afterPre).sort()).toEqual(["a1", "b1"]);
    expect(instance(afterPre.state, "fork").outputData).toEqual({});
    expect(instance(afterPre.state, "join").inputData).toEqual({ joinOn: ["a2", "b1"] });
    expect(afterPre.state.status).toBe("RUNNING");
  });

  it("lists a fork's branch tasks before its JOIN, as Conductor schedules them; a fork nested in a branch lists its own first", () => {
    const afterPre = finish(started(tasks).state, "pre", 2_000).state;
    expect(afterPre.tasks.map((task) => task.referenceTaskName)).toEqual(["pre", "fork", "a1", "b1", "join"]);
    const nested = started([fork("outer", [[fork("inner", [[http("i1")], [http("i2")]]), join("inner_join", ["i1", "i2"])], [http("b1")]]), join("outer_join", ["inner_join", "b1"])]).state;
    const order = nested.tasks.map((task) => task.referenceTaskName);
    expect(order[0]).toBe("outer");
    expect(order.at(-1)).toBe("outer_join");
    for (const ref of ["i1", "i2"]) expect(order.indexOf(ref)).toBeLessThan(order.indexOf("inner_join"));
    expect(order.indexOf("inner")).toBeLessThan(order.indexOf("i1"));
  });

  it("completes the JOIN with each joined task's output once all of them ended, then goes on", () => {
    let state = finish(started(tasks).state, "pre", 2_000).state;
    state = finish(state, "b1", 3_000).state;
    expect(statuses(state)).toMatchObject({ join: "IN_PROGRESS", a1: "IN_PROGRESS" });
    const afterA1 = finish(state, "a1", 4_000);
    expect(dispatched(afterA1)).toEqual(["a2"]);
    expect(instance(afterA1.state, "join").status).toBe("IN_PROGRESS");
    const afterA2 = finish(afterA1.state, "a2", 5_000);
    expect(instance(afterA2.state, "join").status).toBe("COMPLETED");
    expect(instance(afterA2.state, "join").outputData).toEqual({ a2: { body: "a2" }, b1: { body: "b1" } });
    expect(dispatched(afterA2)).toEqual(["post"]);
    const done = finish(afterA2.state, "post", 6_000).state;
    expect(done.status).toBe("COMPLETED");
  });

  it("fails the workflow when a branch's task fails, canceling the other branch's task in flight", () => {
    let state = finish(started(tasks).state, "pre", 2_000).state;
    const failed = finish(state, "a1", 3_000, "FAILED_WITH_TERMINAL_ERROR");
    state = failed.state;
    expect(state.status).toBe("FAILED");
    expect(statuses(state)).toMatchObject({ a1: "FAILED_WITH_TERMINAL_ERROR", b1: "CANCELED", join: "CANCELED" });
    expect(failed.effects).toContainEqual({ kind: "cancelDispatch", taskId: instance(state, "b1").taskId });
    expect(state.reasonForIncompletion).toMatch(/a1/);
  });

  it("retries every lane that did not end well: the failed task and those canceled with it, not the finished ones", () => {
    let state = finish(started(tasks).state, "pre", 2_000).state;
    state = finish(state, "b1", 2_500).state;
    state = finish(state, "a1", 3_000).state;
    state = finish(state, "a2", 3_500, "FAILED_WITH_TERMINAL_ERROR").state;
    expect(state.status).toBe("FAILED");
    const retried = decide(state, { type: "retry" }, env(4_000));
    expect(retried.state.status).toBe("RUNNING");
    expect(dispatched(retried)).toEqual(["a2"]);
    expect(retried.state.tasks.filter((task) => task.referenceTaskName === "b1")).toHaveLength(1);
    // The JOIN canceled with the workflow waits again where it stood, as Conductor's retry sets it IN_PROGRESS.
    expect(retried.state.tasks.filter((task) => task.referenceTaskName === "join").map((task) => task.status)).toEqual(["IN_PROGRESS"]);
    const done = finish(finish(retried.state, "a2", 5_000).state, "post", 6_000).state;
    expect(done.status).toBe("COMPLETED");
    expect(instance(done, "join").outputData).toEqual({ a2: { body: "a2" }, b1: { body: "b1" } });
  });

  it("retries a branch's task by its retryCount without touching the other branch", () => {
    const retrying = [fork("fork", [[http("a1", { retryCount: 1, retryDelaySeconds: 0 })], [http("b1")]]), join("join", ["a1", "b1"])];
    const state = finish(started(retrying).state, "a1", 2_000, "FAILED");
    expect(state.state.status).toBe("RUNNING");
    expect(dispatched(state)).toEqual(["a1"]);
    expect(state.state.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["fork:COMPLETED", "a1:FAILED", "b1:IN_PROGRESS", "join:IN_PROGRESS", "a1:IN_PROGRESS"]);
  });

  it("absorbs an optional branch task's failure: the JOIN ends COMPLETED_WITH_ERRORS naming it, with its output, and the workflow goes on (Conductor's)", () => {
    const optional = [fork("fork", [[http("a1", { optional: true })], [http("b1")]]), join("join", ["a1", "b1"]), http("post")];
    let state = finish(started(optional).state, "a1", 2_000, "FAILED_WITH_TERMINAL_ERROR", { status: 500 }).state;
    const afterB1 = finish(state, "b1", 3_000);
    state = afterB1.state;
    expect(statuses(state)).toMatchObject({ a1: "COMPLETED_WITH_ERRORS", join: "COMPLETED_WITH_ERRORS" });
    expect(instance(state, "join").reasonForIncompletion).toBe(`a1/${instance(state, "a1").taskId} completed with errors`);
    expect(instance(state, "join").outputData).toEqual({ a1: { status: 500 }, b1: { body: "b1" } });
    expect(dispatched(afterB1)).toEqual(["post"]);
    expect(finish(state, "post", 4_000).state.status).toBe("COMPLETED");
  });

  it("with an empty joinOn, passes the JOIN at once and completes the workflow only when every branch is done (Conductor's)", () => {
    const unjoined = [fork("fork", [[http("a1")], [http("b1")]]), join("join", []), http("post")];
    let decision = started(unjoined);
    expect(statuses(decision.state)).toMatchObject({ join: "COMPLETED", a1: "IN_PROGRESS", b1: "IN_PROGRESS", post: "IN_PROGRESS" });
    decision = finish(finish(decision.state, "post", 2_000).state, "a1", 3_000);
    expect(decision.state.status).toBe("RUNNING");
    decision = finish(decision.state, "b1", 4_000);
    expect(decision.state.status).toBe("COMPLETED");
  });

  it("does not wait for a joined task its branch passed over (a SWITCH took the other way)", () => {
    const switching = [fork("fork", [[switchOn("route", { x: [http("x1")] }, [http("d1")])], [http("b1")]]), join("join", ["x1", "d1", "b1"])];
    let state = started(switching, { kind: "x" }).state;
    expect(statuses(state)).toMatchObject({ route: "COMPLETED", x1: "IN_PROGRESS", b1: "IN_PROGRESS" });
    state = finish(state, "x1", 2_000).state;
    expect(instance(state, "join").status).toBe("IN_PROGRESS");
    state = finish(state, "b1", 3_000).state;
    expect(instance(state, "join").status).toBe("COMPLETED");
    expect(instance(state, "join").outputData).toEqual({ x1: { body: "x1" }, b1: { body: "b1" } });
    expect(state.status).toBe("COMPLETED");
  });

  it("waits, for a joined SWITCH, for the last task of the branch it took, down a nested SWITCH, joining that task's output under its name (Conductor's)", () => {
    const nested = [fork("fork", [[switchOn("outer", { x: [http("x1"), switchOn("inner", { x: [http("i1"), http("i2")] })] })], [http("b1")]]), join("join", ["outer", "b1"]), http("post")];
    let state = finish(started(nested, { kind: "x" }).state, "b1", 2_000).state;
    expect(statuses(state)).toMatchObject({ outer: "COMPLETED", x1: "IN_PROGRESS", join: "IN_PROGRESS" });
    state = finish(finish(state, "x1", 3_000).state, "i1", 4_000).state;
    expect(statuses(state)).toMatchObject({ inner: "COMPLETED", i2: "IN_PROGRESS", join: "IN_PROGRESS" });
    const afterI2 = finish(state, "i2", 5_000);
    expect(instance(afterI2.state, "join")).toMatchObject({ status: "COMPLETED", outputData: { i2: { body: "i2" }, b1: { body: "b1" } } });
    expect(dispatched(afterI2)).toEqual(["post"]);
  });

  it("joins a SWITCH whose case and defaultCase are empty as itself, and a DECISION by the branch it took", () => {
    const decision: WorkflowTaskDef = { name: "decide", taskReferenceName: "decide", type: "DECISION", caseValueParam: "kind", inputParameters: { kind: "${workflow.input.kind}" }, decisionCases: { x: [http("d1")] } };
    const tasks = [fork("fork", [[switchOn("route", { x: [] })], [decision]]), join("join", ["route", "decide"])];
    let state = started(tasks, { kind: "x" }).state;
    expect(statuses(state)).toMatchObject({ route: "COMPLETED", decide: "COMPLETED", d1: "IN_PROGRESS", join: "IN_PROGRESS" });
    state = finish(state, "d1", 2_000).state;
    expect(Object.keys(instance(state, "join").outputData).sort()).toEqual(["d1", "route"]);
    expect(state.status).toBe("COMPLETED");
  });

  it("runs forks nested in a fork's branch, and waits for them through the outer JOIN", () => {
    const nested = [fork("outer", [[fork("inner", [[http("i1")], [http("i2")]]), join("inner_join", ["i1", "i2"])], [http("b1")]]), join("outer_join", ["inner_join", "b1"])];
    let decision = started(nested);
    expect(dispatched(decision).sort()).toEqual(["b1", "i1", "i2"]);
    let state = finish(finish(decision.state, "i1", 2_000).state, "b1", 3_000).state;
    expect(statuses(state)).toMatchObject({ inner_join: "IN_PROGRESS", outer_join: "IN_PROGRESS" });
    decision = finish(state, "i2", 4_000);
    state = decision.state;
    expect(statuses(state)).toMatchObject({ inner_join: "COMPLETED", outer_join: "COMPLETED" });
    expect(instance(state, "outer_join").outputData).toEqual({ inner_join: { i1: { body: "i1" }, i2: { body: "i2" } }, b1: { body: "b1" } });
    expect(state.status).toBe("COMPLETED");
  });

  it("has an outer JOIN joining a task of a nested fork's branch wait for it while that fork is still to start (it completed as the fork was reached)", () => {
    // Reached once `before` ends, the inner fork is SCHEDULED until the decision's next pass starts it: the outer JOIN,
    // looked at first, took its task as one that would never run, and completed with `after` started beside `i1`.
    const nested = [fork("outer", [[hold("before"), fork("inner", [[hold("i1")], [hold("i2")]]), join("inner_join", ["i1", "i2"])], [hold("b1")]]), join("outer_join", ["i1", "b1"]), hold("after")];
    let state = started(nested).state;
    state = complete(complete(state, "b1", 2_000).state, "before", 3_000).state;
    expect(statuses(state)).toMatchObject({ inner: "COMPLETED", i1: "IN_PROGRESS", outer_join: "IN_PROGRESS" });
    expect(state.tasks.some((task) => task.referenceTaskName === "after")).toBe(false);
    state = complete(state, "i1", 4_000, { from: "i1" }).state;
    expect(instance(state, "outer_join")).toMatchObject({ status: "COMPLETED", outputData: { i1: { from: "i1" }, b1: {} } });
  });

  it("is blocked only when no lane can move by itself", () => {
    const mixed = [fork("fork", [[hold("wait_a")], [http("b1")]]), join("join", ["wait_a", "b1"])];
    let state = started(mixed).state;
    expect(isBlocked(state)).toBe(false);
    state = finish(state, "b1", 2_000).state;
    expect(isBlocked(state)).toBe(true);
    expect(awaitedChildId(state)).toBeUndefined();
    state = complete(state, "wait_a", 3_000).state;
    expect(state.status).toBe("COMPLETED");
  });

  it("is not blocked by a WAIT whose time is set (duration or until): it moves on by itself, as Conductor's execute waits for it", () => {
    const timed = (ref: string, inputParameters: JsonObject): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters });
    const waits = [fork("fork", [[timed("two_seconds", { duration: "2s" })], [timed("until", { until: "2099-01-01 00:00 GMT" })], [hold("held")]]), join("join", ["two_seconds", "until", "held"])];
    let state = started(waits).state;
    expect(statuses(state)).toMatchObject({ two_seconds: "IN_PROGRESS", until: "IN_PROGRESS", held: "IN_PROGRESS" });
    // The untimed WAIT alone would block; the timed ones beside it keep the execution busy.
    expect(isBlocked(state)).toBe(false);
    state = complete(complete(state, "two_seconds", 2_000).state, "until", 3_000).state;
    expect(isBlocked(state)).toBe(true);
  });

  it("a TERMINATE in one branch ends the workflow and cancels the other branch's task in flight", () => {
    const terminate: WorkflowTaskDef = { name: "stop", taskReferenceName: "stop", type: "TERMINATE", inputParameters: { terminationStatus: "COMPLETED", workflowOutput: { done: true } } };
    const ending = started([fork("fork", [[hold("wait_a"), terminate], [http("b1")]]), join("join", ["stop", "b1"])]);
    const decision = complete(ending.state, "wait_a", 2_000);
    expect(decision.state.status).toBe("COMPLETED");
    expect(decision.state.output).toEqual({ done: true });
    expect(statuses(decision.state)).toMatchObject({ stop: "COMPLETED", b1: "CANCELED", join: "CANCELED" });
    expect(decision.effects).toContainEqual({ kind: "cancelDispatch", taskId: instance(decision.state, "b1").taskId });
  });

  it("schedules every branch's first task and the JOIN before a branch runs on through tasks that do not wait, as Conductor's ForkJoinTaskMapper does: a TERMINATE there cancels them", () => {
    const setVariable: WorkflowTaskDef = { name: "mark", taskReferenceName: "mark", type: "SET_VARIABLE", inputParameters: { marked: true } };
    const terminate: WorkflowTaskDef = { name: "stop", taskReferenceName: "stop", type: "TERMINATE", inputParameters: { terminationStatus: "FAILED", terminationReason: "too short" } };
    const decision = started([fork("fork", [[setVariable, terminate], [http("b1")]]), join("join", ["stop", "b1"])]);
    expect(decision.state.status).toBe("FAILED");
    expect(decision.state.reasonForIncompletion).toBe("too short");
    // Listed as Conductor lists them: the fork, each branch's first task, the JOIN, then what the branches ran on to.
    expect(decision.state.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["fork:COMPLETED", "mark:COMPLETED", "b1:CANCELED", "join:CANCELED", "stop:COMPLETED"]);
    // Canceled before it started: no call was made.
    expect(dispatched(decision)).toEqual([]);
  });
});

describe("FORK_JOIN endings and children", () => {
  const child = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", inputParameters: {}, subWorkflowParam: { name: "child", version: 1 } });

  it("without outputParameters, a workflow that ends with a JOIN outputs the JOIN's output (its last task), not a branch task's", () => {
    let state = started([fork("fork", [[http("a1")], [http("b1")]]), join("join", ["a1", "b1"])]).state;
    state = finish(finish(state, "b1", 2_000).state, "a1", 3_000).state;
    expect(state.status).toBe("COMPLETED");
    expect(state.output).toEqual({ a1: { body: "a1" }, b1: { body: "b1" } });
  });

  it("without outputParameters, a workflow ending with a fork whose branch scheduled a task after the JOIN outputs that task's output, as Conductor does (the last in seq order)", () => {
    let state = started([fork("fork", [[http("a1"), http("a2")], [http("b1")]]), join("join", ["a2", "b1"])]).state;
    state = finish(state, "a1", 2_000).state;
    state = finish(finish(state, "a2", 3_000).state, "b1", 4_000).state;
    expect(state.status).toBe("COMPLETED");
    // b1 ended last, but a2 was scheduled last (after the JOIN, which was scheduled with the fork).
    expect(state.tasks.map((task) => task.referenceTaskName)).toEqual(["fork", "a1", "b1", "join", "a2"]);
    expect(state.output).toEqual({ body: "a2" });
  });

  it("a child rerun in place reopens its parent with the other branch's canceled task running again, not failing at once", () => {
    // "other" is scheduled before "sub": the rerun in place keeps it, as it stood when the workflow failed.
    let decision = started([fork("fork", [[hold("other")], [child("sub")]]), join("join", ["other", "sub"])]);
    const sub = instance(decision.state, "sub");
    decision = decide(decision.state, { type: "childFinished", taskId: sub.taskId, subWorkflowId: sub.subWorkflowId!, status: "FAILED", output: {}, reason: "boom" }, env(2_000));
    expect(decision.state.status).toBe("FAILED");
    expect(statuses(decision.state)).toMatchObject({ sub: "FAILED", other: "CANCELED" });
    const resumed = decide(decision.state, { type: "resumeChild", taskId: sub.taskId }, env(3_000)).state;
    expect(resumed.status).toBe("RUNNING");
    expect(statuses(resumed)).toMatchObject({ sub: "IN_PROGRESS", other: "IN_PROGRESS", join: "IN_PROGRESS" });
    let state = complete(resumed, "other", 4_000).state;
    state = decide(state, { type: "childFinished", taskId: sub.taskId, subWorkflowId: sub.subWorkflowId!, status: "COMPLETED", output: { fine: true } }, env(5_000)).state;
    expect(state.status).toBe("COMPLETED");
  });

  it("a paused parent follows its child's retry unless a JOIN that waits for the SUB_WORKFLOW task has ended: one whose joinOn leaves the task out, and what follows it, acted on nothing", () => {
    const childFails = (state: WorkflowExecution, now: number) => {
      const sub = instance(state, "sub");
      return decide(state, { type: "childFinished", taskId: sub.taskId, subWorkflowId: sub.subWorkflowId!, status: "FAILED", output: {}, reason: "boom" }, env(now)).state;
    };
    // Joined by a JOIN that has ended (the optional task's failure let it go on), the task's end was acted on.
    let joined = started([fork("fork", [[{ ...child("sub"), optional: true }], [hold("other")]]), join("join", ["sub", "other"]), hold("after")]).state;
    joined = complete(childFails(joined, 2_000), "other", 3_000).state;
    expect(statuses(joined)).toMatchObject({ sub: "COMPLETED_WITH_ERRORS", join: "COMPLETED_WITH_ERRORS", after: "IN_PROGRESS" });
    joined = decide(joined, { type: "pause" }, env(4_000)).state;
    expect(refusal(joined, { type: "resumeChild", taskId: instance(joined, "sub").taskId }, 5_000).kind).toBe("CONFLICT");
    // Not joined: the JOIN and the task after it ran beside the task, whose failure during the pause nothing acted on.
    let unjoined = started([fork("fork", [[child("sub")], [hold("other")]]), join("join", ["other"]), hold("after")]).state;
    unjoined = decide(complete(unjoined, "other", 2_000).state, { type: "pause" }, env(3_000)).state;
    unjoined = childFails(unjoined, 4_000);
    expect(statuses(unjoined)).toMatchObject({ sub: "FAILED", join: "COMPLETED", after: "IN_PROGRESS" });
    const followed = decide(unjoined, { type: "resumeChild", taskId: instance(unjoined, "sub").taskId }, env(5_000)).state;
    expect([followed.status, statuses(followed)]).toMatchObject(["PAUSED", { sub: "IN_PROGRESS", after: "IN_PROGRESS" }]);
  });

  it("a JOIN with a join script has acted on the SUB_WORKFLOW task, for a paused parent, only if its joinOn names the task's branch and it ended once the task had: its script sees only those tasks (Orkes' $.joinOn and $[ref])", () => {
    // Orkes' sample script, with an optional task's failure counted as an end: it waits for every joined task.
    const waits = "(function(){ return $.joinOn.every((ref) => $[ref] && ['COMPLETED', 'COMPLETED_WITH_ERRORS'].includes($[ref].status)); })()";
    const scripted = (ref: string, joinOn: string[], expression = waits): WorkflowTaskDef => ({ ...join(ref, joinOn), evaluatorType: "js", expression });
    const childFails = (state: WorkflowExecution, now: number) => {
      const sub = instance(state, "sub");
      return decide(state, { type: "childFinished", taskId: sub.taskId, subWorkflowId: sub.subWorkflowId!, status: "FAILED", output: {}, reason: "boom" }, env(now)).state;
    };
    const optionalChild = { ...child("sub"), optional: true };
    const follows = (state: WorkflowExecution) => {
      const followed = decide(state, { type: "resumeChild", taskId: instance(state, "sub").taskId }, env(9_000)).state;
      return [followed.status, statuses(followed)];
    };
    // Its joinOn leaves the task's branch out: the script never saw the task, and the JOIN and what follows it ran beside it.
    let unjoined = started([fork("fork", [[child("sub")], [hold("other")]]), scripted("join", ["other"]), hold("after")]).state;
    unjoined = decide(complete(unjoined, "other", 2_000).state, { type: "pause" }, env(3_000)).state;
    unjoined = childFails(unjoined, 4_000);
    expect(statuses(unjoined)).toMatchObject({ sub: "FAILED", join: "COMPLETED", after: "IN_PROGRESS" });
    expect(follows(unjoined)).toMatchObject(["PAUSED", { sub: "IN_PROGRESS", after: "IN_PROGRESS" }]);
    // Naming the task, it ended before the task did (its script went on while the task ran): it decided without its end.
    let early = started([fork("fork", [[optionalChild], [hold("other")]]), scripted("join", ["sub", "other"], "(function(){ return true; })()"), hold("after")]).state;
    early = childFails(decide(early, { type: "pause" }, env(2_000)).state, 3_000);
    expect(statuses(early)).toMatchObject({ sub: "FAILED", join: "COMPLETED", after: "IN_PROGRESS" });
    expect(follows(early)).toMatchObject(["PAUSED", { sub: "IN_PROGRESS", after: "IN_PROGRESS" }]);
    // Naming the task, it ended once the task had: the parent has gone on past it.
    let joined = started([fork("fork", [[optionalChild], [hold("other")]]), scripted("join", ["sub", "other"]), hold("after")]).state;
    joined = decide(childFails(complete(joined, "other", 2_000).state, 3_000), { type: "pause" }, env(4_000)).state;
    expect(statuses(joined)).toMatchObject({ sub: "COMPLETED_WITH_ERRORS", join: "COMPLETED", after: "IN_PROGRESS" });
    expect(refusal(joined, { type: "resumeChild", taskId: instance(joined, "sub").taskId }, 5_000).kind).toBe("CONFLICT");
  });

  it("a paused parent refuses to follow its child when a JOIN that waits for the SUB_WORKFLOW task has ended, also one scheduled before the task (it follows another task of its branch, or a SWITCH's case the joinOn names)", () => {
    const childEnds = (state: WorkflowExecution, status: "COMPLETED" | "FAILED", now: number) => {
      const sub = instance(state, "sub");
      return decide(state, { type: "childFinished", taskId: sub.taskId, subWorkflowId: sub.subWorkflowId!, status, output: {}, ...(status === "FAILED" ? { reason: "boom" } : {}) }, env(now)).state;
    };
    // Refused as the engine refuses it (a CONFLICT); any other error fails the test.
    const followable = (state: WorkflowExecution) => {
      try {
        return decide(state, { type: "resumeChild", taskId: instance(state, "sub").taskId }, env(9_000)).state.status;
      } catch (error) {
        if (error instanceof EngineError && error.kind === "CONFLICT") return "refused";
        throw error;
      }
    };
    // The JOIN, scheduled with the fork before `sub`, waited for it (by name, or by the SWITCH holding it) and ended;
    // `after` runs. Past it.
    for (const [branch, joinOn] of [
      [[hold("first"), child("sub")], ["sub", "other"]],
      [[switchOn("pick", { a: [child("sub")] })], ["pick", "other"]],
    ] as const) {
      let state = started([fork("fork", [[...branch], [hold("other")]]), join("join", [...joinOn]), hold("after")], { kind: "a" }).state;
      if (branch.length === 2) state = complete(state, "first", 2_000).state;
      state = childEnds(complete(state, "other", 3_000).state, "COMPLETED", 4_000);
      expect(statuses(state)).toMatchObject({ sub: "COMPLETED", join: "COMPLETED", after: "IN_PROGRESS" });
      expect(instance(state, "join").seq).toBeLessThan(instance(state, "sub").seq);
      expect(followable(decide(state, { type: "pause" }, env(5_000)).state)).toBe("refused");
    }
    // A JOIN that does not wait for it ended beside it: followed, as when the task heads its branch.
    let unjoined = started([fork("fork", [[hold("first"), child("sub")], [hold("other")]]), join("join", ["other"]), hold("after")]).state;
    unjoined = decide(complete(complete(unjoined, "first", 2_000).state, "other", 3_000).state, { type: "pause" }, env(4_000)).state;
    unjoined = childEnds(unjoined, "FAILED", 5_000);
    expect(statuses(unjoined)).toMatchObject({ sub: "FAILED", join: "COMPLETED", after: "IN_PROGRESS" });
    expect(followable(unjoined)).toBe("PAUSED");
  });

  it("a paused parent whose SUB_WORKFLOW task lies in a fork in a DO_WHILE follows its child while the task's iteration runs, not once the loop went on from it (to its next iteration or past its end)", () => {
    const loop = (loopOver: WorkflowTaskDef[], loopCondition: string): WorkflowTaskDef => ({ name: "loop", taskReferenceName: "loop", type: "DO_WHILE", inputParameters: {}, loopCondition, loopOver });
    const body = [hold("first"), fork("fan", [[child("sub")], [hold("other")]]), join("join", ["other"])];
    const childCompletes = (state: WorkflowExecution, now: number) => {
      const sub = instance(state, "sub__1");
      return decide(state, { type: "childFinished", taskId: sub.taskId, subWorkflowId: sub.subWorkflowId!, status: "COMPLETED", output: {} }, env(now)).state;
    };
    // Refused as the engine refuses it (a CONFLICT); any other error fails the test.
    const followable = (state: WorkflowExecution) => {
      try {
        return decide(state, { type: "resumeChild", taskId: instance(state, "sub__1").taskId }, env(9_000)).state.status;
      } catch (error) {
        if (error instanceof EngineError && error.kind === "CONFLICT") return "refused";
        throw error;
      }
    };
    // Its iteration still runs (ended during the pause, nothing acted on it yet): the parent waits for the child again.
    let open = complete(complete(started([loop(body, "false"), hold("after")]).state, "first__1", 2_000).state, "other__1", 3_000).state;
    open = childCompletes(decide(open, { type: "pause" }, env(4_000)).state, 5_000);
    expect(followable(open)).toBe("PAUSED");
    // The iteration ended with it (the loop's condition read it) before the pause: the next one runs, its first task
    // outside the task's branch; or the loop ended, and what follows it runs. Past it, either way.
    let next = complete(complete(started([loop(body, "$.loop.iteration < 2")]).state, "first__1", 2_000).state, "other__1", 3_000).state;
    next = decide(childCompletes(next, 4_000), { type: "pause" }, env(5_000)).state;
    expect(statuses(next)).toMatchObject({ loop: "IN_PROGRESS", join__1: "COMPLETED", first__2: "IN_PROGRESS" });
    expect(followable(next)).toBe("refused");
    let ended = complete(complete(started([loop(body, "false"), hold("after")]).state, "first__1", 2_000).state, "other__1", 3_000).state;
    ended = decide(childCompletes(ended, 4_000), { type: "pause" }, env(5_000)).state;
    expect(statuses(ended)).toMatchObject({ loop: "COMPLETED", after: "IN_PROGRESS" });
    expect(followable(ended)).toBe("refused");
  });
});

describe("FORK_JOIN with skips and reruns", () => {
  const tasks = [fork("fork", [[hold("a1"), http("a2")], [http("b1"), http("b2")]]), join("join", ["a2", "b2"]), http("post")];

  it("skips a task of one branch not reached yet while the other branch is further along the plan", () => {
    let state = started(tasks).state;
    state = finish(state, "b1", 2_000).state;
    // b2 (later in the plan than a2) is running: a2 is still to come in its own lane.
    const skipped = decide(state, { type: "skipTask", taskReferenceName: "a2", taskOutput: { skipped: true } }, env(3_000));
    state = complete(skipped.state, "a1", 4_000).state;
    expect(statuses(state)).toMatchObject({ a2: "SKIPPED", b2: "IN_PROGRESS", join: "IN_PROGRESS" });
    state = finish(state, "b2", 5_000).state;
    expect(instance(state, "join").outputData).toEqual({ a2: { skipped: true }, b2: { body: "b2" } });
  });

  it("a skipped FORK_JOIN uses up the skips waiting for tasks in its branches, which that run will not reach", () => {
    let state = started([hold("pre"), ...tasks]).state;
    state = decide(state, { type: "skipTask", taskReferenceName: "b1" }, env(1_500)).state;
    state = decide(state, { type: "skipTask", taskReferenceName: "fork" }, env(1_600)).state;
    state = complete(state, "pre", 2_000).state;
    expect(statuses(state)).toMatchObject({ fork: "SKIPPED", join: "COMPLETED" });
    expect(state.tasks.some((task) => task.referenceTaskName === "b1")).toBe(false);
    expect(state.pendingSkips).toBeUndefined();
  });

  it("refuses to skip a task its branch already went past", () => {
    let state = started(tasks).state;
    state = finish(state, "b1", 2_000).state;
    expect(refusal(state, { type: "skipTask", taskReferenceName: "b1" }, 3_000).kind).toBe("CONFLICT");
  });

  it("remembers a skip of a task in the branch of a fork not reached yet, and applies it there", () => {
    const later = [http("pre"), ...tasks];
    let state = started(later).state;
    state = decide(state, { type: "skipTask", taskReferenceName: "b1" }, env(1_500)).state;
    state = finish(state, "pre", 2_000).state;
    expect(statuses(state)).toMatchObject({ b1: "SKIPPED", b2: "IN_PROGRESS", a1: "IN_PROGRESS" });
  });

  it("reruns from a task of a branch: its JOIN waits again, what followed it runs again, and what another branch completed stays (Conductor's e2e rerun tests)", () => {
    let state = started(tasks).state;
    state = complete(state, "a1", 2_000).state;
    for (const [ref, now] of [["b1", 3_000], ["a2", 4_000], ["b2", 5_000], ["post", 6_000]] as const) state = finish(state, ref, now).state;
    expect(state.status).toBe("COMPLETED");
    const rerun = decide(state, { type: "rerun", fromTaskId: instance(state, "a2").taskId }, env(7_000));
    expect(rerun.state.status).toBe("RUNNING");
    // b2 was scheduled after a2 (b1 finished later than a1) but in the other branch: it is not run again.
    expect(dispatched(rerun)).toEqual(["a2"]);
    expect(statuses(rerun.state)).toMatchObject({ a1: "COMPLETED", b1: "COMPLETED", a2: "IN_PROGRESS", b2: "COMPLETED", join: "IN_PROGRESS" });
    expect(rerun.state.tasks.some((task) => task.referenceTaskName === "post")).toBe(false);
    const again = finish(rerun.state, "a2", 8_000, "COMPLETED", { body: "again" });
    expect(instance(again.state, "join").outputData).toEqual({ a2: { body: "again" }, b2: { body: "b2" } });
    expect(dispatched(again)).toEqual(["post"]);
  });

  it("reruns from a task of a branch while another branch's task, scheduled before it, was canceled as the workflow failed: that one runs again too", () => {
    let state = started([fork("fork", [[hold("other")], [http("a1"), http("a2")]]), join("join", ["other", "a2"])]).state;
    state = finish(state, "a1", 2_000).state;
    state = finish(state, "a2", 3_000, "FAILED_WITH_TERMINAL_ERROR").state;
    expect(state.status).toBe("FAILED");
    expect(statuses(state)).toMatchObject({ other: "CANCELED", a1: "COMPLETED" });
    const rerun = decide(state, { type: "rerun", fromTaskId: instance(state, "a1").taskId }, env(4_000));
    expect(rerun.state.status).toBe("RUNNING");
    expect(statuses(rerun.state)).toMatchObject({ other: "IN_PROGRESS", a1: "IN_PROGRESS", join: "IN_PROGRESS" });
    let done = complete(finish(rerun.state, "a1", 5_000).state, "other", 6_000).state;
    done = finish(done, "a2", 7_000).state;
    expect(done.status).toBe("COMPLETED");
  });

  it("reruns from a JOIN: joins the branches as they ended and runs on from there, without running the branches again", () => {
    let state = started(tasks).state;
    state = complete(state, "a1", 2_000).state;
    for (const [ref, now] of [["b1", 3_000], ["a2", 4_000], ["b2", 5_000], ["post", 6_000]] as const) state = finish(state, ref, now).state;
    expect(state.status).toBe("COMPLETED");
    const rerun = decide(state, { type: "rerun", fromTaskId: instance(state, "join").taskId }, env(7_000));
    expect(dispatched(rerun)).toEqual(["post"]);
    expect(statuses(rerun.state)).toMatchObject({ a1: "COMPLETED", a2: "COMPLETED", b1: "COMPLETED", b2: "COMPLETED", join: "COMPLETED", post: "IN_PROGRESS" });
    expect(instance(rerun.state, "join").outputData).toEqual({ a2: { body: "a2" }, b2: { body: "b2" } });
  });
});

describe("FORK_JOIN registration", () => {
  it("accepts a fork followed by its JOIN, keeping branches and joinOn", () => {
    const result = validateWorkflowDef({ name: "forks", version: 1, schemaVersion: 2, tasks: [fork("f", [[http("a")], [http("b")]]), join("j", ["a", "b"])] });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.tasks[0]!.forkTasks!.map((branch) => branch.map((task) => task.taskReferenceName))).toEqual([["a"], ["b"]]);
    expect(result.value.tasks[1]!.joinOn).toEqual(["a", "b"]);
  });

  it("refuses a fork without a JOIN after it, a JOIN without a fork before it, and a joinOn outside the fork", () => {
    expect(registrationErrors([fork("f", [[http("a")]]), http("x")])).toEqual(["tasks[0]: a FORK_JOIN must be followed directly by a JOIN task (in the same list), which waits for its branches"]);
    expect(registrationErrors([http("x"), join("j", [])])).toEqual(["tasks[1]: a JOIN must come directly after the FORK_JOIN (or FORK_JOIN_DYNAMIC, or CONDITIONAL_FORK) whose branches it waits for"]);
    expect(registrationErrors([http("x"), fork("f", [[http("a")]]), join("j", ["a", "x"])])).toEqual([
      'tasks[2].joinOn[1]: joinOn names "x", which is not a task in the branches of the FORK_JOIN before this JOIN',
    ]);
  });

  it("refuses empty or malformed branches and joinOn entries, and checks the tasks inside branches", () => {
    expect(registrationErrors([{ ...fork("f", []) }, join("j", [])])).toEqual([expect.stringMatching(/^tasks\[0\]\.forkTasks: forkTasks must be a non-empty list of branches/)]);
    expect(registrationErrors([fork("f", [[http("a")], []]), join("j", [])])).toEqual([expect.stringMatching(/^tasks\[0\]\.forkTasks\[1\]: each branch must be a non-empty list of tasks/)]);
    expect(registrationErrors([fork("f", [[{ name: "a", taskReferenceName: "a", type: "HTTP", inputParameters: { method: "GET" } }]]), join("j", [])])).toEqual([
      expect.stringMatching(/^tasks\[0\]\.forkTasks\[0\]\[0\]\.inputParameters\.uri: uri is required/),
    ]);
    expect(registrationErrors([fork("f", [[http("a")]]), { ...join("j", []), joinOn: "a" }])).toEqual([expect.stringMatching(/^tasks\[1\]\.joinOn: joinOn must be a list/)]);
    // Inside a branch, the pairing rule holds too.
    expect(registrationErrors([fork("f", [[fork("g", [[http("a")]]), http("b")]]), join("j", [])])).toEqual([expect.stringMatching(/^tasks\[0\]\.forkTasks\[0\]\[0\]: a FORK_JOIN must be followed directly by a JOIN/)]);
  });

  it("keeps reference names unique across branches and counts branch tasks toward the task limit", () => {
    expect(registrationErrors([fork("f", [[http("a")], [http("a")]]), join("j", [])])).toEqual([expect.stringMatching(/^tasks\[0\]\.forkTasks\[1\]\[0\]\.taskReferenceName: taskReferenceName "a" is already used by tasks\[0\]\.forkTasks\[0\]\[0\]/)]);
    const many = Array.from({ length: 200 }, (_, index) => [http(`t${index}`)]);
    expect(registrationErrors([fork("f", many), join("j", [])])).toEqual([expect.stringMatching(/^tasks: a workflow definition may hold at most 200 tasks \(counting those inside SWITCH and FORK_JOIN branches and DO_WHILE loops\), but this one has 202/)]);
  });

  it("accepts what the official client's fork builders produce", () => {
    const branches = [[clientHttpTask("c_a", { uri: "https://example.com/a", method: "GET" })], [clientHttpTask("c_b", { uri: "https://example.com/b", method: "GET" })]];
    const built = new ConductorWorkflow(undefined as never, "client_forks").fork(branches).toWorkflowDef();
    expect(validateWorkflowDef({ ...built, tasks: built.tasks }).ok).toBe(true);
    const [forkPart, joinPart] = forkTaskJoin("f2", [clientHttpTask("c_c", { uri: "https://example.com/c", method: "GET" })]);
    expect(registrationErrors([forkPart, joinPart])).toEqual([]);
    expect(registrationErrors([clientForkTask("f3", [clientHttpTask("c_d", { uri: "https://example.com/d", method: "GET" })]), clientJoinTask("f3_join", ["c_d"])])).toEqual([]);
  });
});

describe("a workflow retry from a permissive task failed for good before a FORK_JOIN", () => {
  it("runs the fork's branches again once the fork is reached anew, not at once beside the permissive task", () => {
    const pending = (state: WorkflowExecution) => state.tasks.filter((task) => task.status === "SCHEDULED" || task.status === "IN_PROGRESS").map((task) => task.referenceTaskName);
    let state = started([{ ...hold("first"), permissive: true }, fork("f", [[hold("a")], [hold("b")]]), join("f_join", ["a", "b"])]).state;
    state = failed(state, "first", 2_000);
    expect(pending(state).sort()).toEqual(["a", "b", "f_join"]);
    state = failed(state, "a", 3_000);
    expect(state.status).toBe("FAILED");
    state = decide(state, { type: "retry" }, env(4_000)).state;
    // Retried here too, a and b ran beside first, then once more when first completed.
    expect(pending(state)).toEqual(["first"]);
    state = complete(state, "first", 5_000).state;
    expect(pending(state).sort()).toEqual(["a", "b", "f_join"]);
    state = complete(complete(state, "a", 6_000).state, "b", 7_000).state;
    expect(state.status).toBe("COMPLETED");
  });
  it("has the fork's JOIN, reached anew, wait for the branch tasks run again, not fail for a permissive one's failure of the run before", () => {
    const pending = (state: WorkflowExecution) => state.tasks.filter((task) => task.status === "SCHEDULED" || task.status === "IN_PROGRESS").map((task) => task.referenceTaskName);
    let state = started([{ ...hold("first"), permissive: true }, fork("f", [[hold("a"), { ...hold("b"), permissive: true }]]), join("f_join", ["b"])]).state;
    state = failed(state, "first", 2_000);
    state = complete(state, "a", 3_000).state;
    state = failed(state, "b", 4_000);
    expect([state.status, state.reasonForIncompletion]).toEqual(["FAILED", expect.stringContaining("f_join")]);
    state = decide(state, { type: "retry" }, env(5_000)).state;
    state = complete(state, "first", 6_000).state;
    // The JOIN looked at b's failure from before the retry and failed the workflow again at once.
    expect([state.status, pending(state).sort()]).toEqual(["RUNNING", ["a", "f_join"]]);
    state = complete(complete(state, "a", 7_000).state, "b", 8_000).state;
    expect(state.status).toBe("COMPLETED");
  });
  it("has a JOIN waiting again for a joined task its branch, run again from the permissive task, runs again (it ended with the task's run before the retry)", () => {
    // The retry runs the branch again from `maybe`, then `b` after it. The JOIN, set IN_PROGRESS, took `b`'s COMPLETED
    // run from before the retry as its last word: it completed once `maybe` did, with that run's output, and `after`
    // ran while `b` ran again.
    let state = started([fork("f", [[{ ...hold("maybe"), permissive: true }, hold("b")], [hold("side")]]), join("f_join", ["maybe", "b", "side"]), hold("after")]).state;
    state = failed(state, "maybe", 2_000);
    state = complete(complete(state, "side", 3_000).state, "b", 4_000, { run: 1 }).state;
    expect([state.status, state.reasonForIncompletion]).toEqual(["FAILED", "Task f_join failed: Task maybe ended FAILED"]);
    state = decide(state, { type: "retry" }, env(5_000)).state;
    state = complete(state, "maybe", 6_000).state;
    expect(statuses(state)).toMatchObject({ f_join: "IN_PROGRESS", b: "IN_PROGRESS" });
    expect(state.tasks.some((task) => task.referenceTaskName === "after")).toBe(false);
    state = complete(state, "b", 7_000, { run: 2 }).state;
    expect(instance(state, "f_join")).toMatchObject({ status: "COMPLETED", outputData: { maybe: {}, b: { run: 2 }, side: {} } });
    state = complete(state, "after", 8_000).state;
    expect(state.status).toBe("COMPLETED");
  });
  it("has a JOIN canceled with the workflow wait for a joined task its branch runs again, not end while the branch still runs", () => {
    // `side` failed the workflow while the branch, gone on past `maybe`'s failure, ran `c` after `b`. The retry runs the
    // branch again from `maybe`; the JOIN took `b`'s run from before the retry as ended and completed once `side` did,
    // `maybe` still running.
    let state = started([fork("f", [[{ ...hold("maybe"), permissive: true }, hold("b"), hold("c")], [hold("side")]]), join("f_join", ["b", "side"]), hold("after")]).state;
    state = failed(state, "maybe", 2_000);
    state = complete(state, "b", 3_000).state;
    state = failed(state, "side", 4_000);
    state = decide(state, { type: "retry" }, env(5_000)).state;
    state = complete(state, "side", 6_000).state;
    expect(statuses(state)).toMatchObject({ f_join: "IN_PROGRESS", maybe: "IN_PROGRESS" });
    state = complete(complete(complete(state, "maybe", 7_000).state, "b", 8_000).state, "c", 9_000).state;
    expect(instance(state, "f_join").status).toBe("COMPLETED");
    state = complete(state, "after", 10_000).state;
    expect(state.status).toBe("COMPLETED");
  });
  it("has an outer JOIN joining a task of a fork nested after the permissive task wait for the nested fork's run anew (it completed at once)", () => {
    // The retry runs the outer branch again from `maybe`; the outer JOIN joins `x`, in the inner fork's branch, whose
    // failure the retry replaced (retried). The inner fork, gone back before, took the branch as never to run: the
    // JOIN completed once `side` did, and `after` ran while the inner fork was still to run again.
    const inner = [fork("inner", [[{ ...hold("x"), permissive: true }], [hold("y")]]), join("inner_join", ["x", "y"])];
    let state = started([fork("outer", [[{ ...hold("maybe"), permissive: true }, ...inner], [hold("side")]]), join("outer_join", ["x", "side"]), hold("after")]).state;
    state = failed(state, "maybe", 2_000);
    state = complete(state, "y", 3_000).state;
    state = failed(state, "x", 4_000);
    expect([state.status, state.reasonForIncompletion]).toEqual(["FAILED", expect.stringContaining("inner_join")]);
    state = decide(state, { type: "retry" }, env(5_000)).state;
    state = complete(state, "side", 6_000).state;
    expect([state.status, statuses(state)]).toEqual(["RUNNING", expect.objectContaining({ outer_join: "IN_PROGRESS", maybe: "IN_PROGRESS" })]);
    state = complete(complete(state, "maybe", 7_000).state, "y", 8_000).state;
    expect(statuses(state)).toMatchObject({ outer_join: "IN_PROGRESS", x: "IN_PROGRESS" });
    state = complete(state, "x", 9_000, { again: true }).state;
    expect(instance(state, "outer_join")).toMatchObject({ status: "COMPLETED", outputData: { x: { again: true }, side: {} } });
    state = complete(state, "after", 10_000).state;
    expect(state.status).toBe("COMPLETED");
  });
  it("has an outer JOIN stop waiting for a nested fork's task once the branch, run again, took a SWITCH's later case past that fork (it waited for good)", () => {
    // The retry runs the outer branch again from `maybe`, whose output now takes the SWITCH's default case, laid out
    // after the case holding the inner fork. The inner fork's instance from before the retry was taken as not gone back
    // before (the branch's latest task, `d`, lies after it): its branches ran on, `x` failed and replaced, never to run
    // again, and the outer JOIN waited for it for good with nothing else pending.
    const inner = [fork("inner", [[{ ...hold("x"), permissive: true }], [hold("y")]]), join("inner_join", ["x", "y"])];
    const route: WorkflowTaskDef = { ...switchOn("route", { go: inner }, [hold("d")]), inputParameters: { kind: "${maybe.output.kind}" } };
    let state = started([fork("outer", [[{ ...hold("maybe"), permissive: true }, route], [hold("side")]]), join("outer_join", ["x", "side"]), hold("after")]).state;
    state = decide(state, { type: "externalUpdate", taskId: instance(state, "maybe").taskId, status: "FAILED", output: { kind: "go" } }, env(2_000)).state;
    state = complete(complete(state, "y", 3_000).state, "side", 4_000).state;
    state = failed(state, "x", 5_000);
    expect([state.status, state.reasonForIncompletion]).toEqual(["FAILED", "Task outer_join failed: Task x ended FAILED"]);
    state = decide(state, { type: "retry" }, env(6_000)).state;
    state = complete(state, "maybe", 7_000, { kind: "other" }).state;
    expect(statuses(state)).toMatchObject({ outer_join: "IN_PROGRESS", d: "IN_PROGRESS" });
    state = complete(state, "d", 8_000).state;
    expect(instance(state, "outer_join")).toMatchObject({ status: "COMPLETED", outputData: { side: {} } });
    state = complete(state, "after", 9_000).state;
    expect(state.status).toBe("COMPLETED");
  });
});
