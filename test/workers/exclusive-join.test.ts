import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, eventually, hits, httpTask, register, rowCount, startWorkflow, target, waitFor, type TaskJson, type WorkflowJson } from "./helpers";

/** A worker's task `ref`, of type `<prefix>_<ref>`, whose input says which it is. */
const work = (prefix: string, ref: string): JsonObject => ({ name: `${prefix}_${ref}`, taskReferenceName: ref, type: "SIMPLE", inputParameters: { ref } });

/** A DECISION on workflow input `param`, with its "true" and "false" cases. */
const decision = (ref: string, param: string, cases: Record<string, JsonObject[]>): JsonObject => ({
  name: "decide_task",
  taskReferenceName: ref,
  type: "DECISION",
  caseValueParam: param,
  inputParameters: { [param]: `\${workflow.input.${param}}` },
  decisionCases: cases,
});

/**
 * Conductor's own EXCLUSIVE_JOIN workflow (conductor-oss/conductor test-harness/src/test/resources/
 * exclusive_join_integration_test.json): task1, then nested DECISIONs running task2 and task3, or task4 and task5, then
 * an EXCLUSIVE_JOIN on task3 and task5, falling back on task2, task4 and task1.
 */
function conductorsWorkflow(prefix: string): JsonObject {
  return {
    name: `${prefix}_workflow`,
    tasks: [
      work(prefix, "task1"),
      decision("decision1", "decision_1", {
        true: [work(prefix, "task2"), decision("decision2", "decision_2", { true: [work(prefix, "task3")] })],
        false: [work(prefix, "task4"), decision("decision3", "decision_3", { true: [work(prefix, "task5")] })],
      }),
      { name: "exclusive_join", taskReferenceName: "exclusiveJoin", type: "EXCLUSIVE_JOIN", joinOn: ["task3", "task5"], defaultExclusiveJoinTask: ["task2", "task4", "task1"] },
    ],
    outputParameters: { joined: "${exclusiveJoin.output}" },
  };
}

/** Polls the one task of `type` (bounded) and completes it with `outputData` (or fails it with `status`). */
async function workOn(workflowId: string, type: string, outputData: JsonObject, status = "COMPLETED"): Promise<TaskJson> {
  const params = new URLSearchParams({ workerid: "w", count: "1", timeout: "0" });
  const [task] = await eventually(() => apiOk<TaskJson[]>("GET", `/api/tasks/poll/batch/${type}?${params}`), (tasks) => tasks.length === 1, `a ${type} task to poll`);
  await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task!.taskId, status, outputData, reasonForIncompletion: status === "COMPLETED" ? undefined : `${type} went wrong` });
  return task!;
}

const typesAndStatuses = (workflow: WorkflowJson) => workflow.tasks.map((task) => `${String(task["taskType"])}:${task.status}`);
const taskOf = (workflow: WorkflowJson, ref: string) => workflow.tasks.findLast((task) => task.referenceTaskName === ref)!;

describe("EXCLUSIVE_JOIN", () => {
  // Conductor's ExclusiveJoinSpec (conductor-oss/conductor test-harness/src/test/groovy/.../ExclusiveJoinSpec.groovy):
  // each route through the DECISIONs, the tasks it runs, and the task whose output the EXCLUSIVE_JOIN ends with.
  it.each([
    ["the default case: none of its joinOn ran, the last of its defaults did", "xj_a", { decision_1: "null" }, ["task1"], "task1"],
    ["decision_1 true, decision_2 default: task2, a default", "xj_b", { decision_1: "true", decision_2: "null" }, ["task1", "task2"], "task2"],
    ["both true: task3, of its joinOn", "xj_c", { decision_1: "true", decision_2: "true" }, ["task1", "task2", "task3"], "task3"],
    ["decision_1 false, decision_3 default: task4, a default", "xj_d", { decision_1: "false", decision_3: "null" }, ["task1", "task4"], "task4"],
    ["decision_1 false, decision_3 true: task5, of its joinOn", "xj_e", { decision_1: "false", decision_3: "true" }, ["task1", "task4", "task5"], "task5"],
  ])("ends as Conductor's does with %s", async (_route, prefix, input, ran, joined) => {
    await register(conductorsWorkflow(prefix));
    const workflowId = await startWorkflow(`${prefix}_workflow`, input);
    for (const ref of ran) await workOn(workflowId, `${prefix}_${ref}`, { taskReferenceName: ref });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"]);
    expect(done.status, String(done["reasonForIncompletion"])).toBe("COMPLETED");
    const types = typesAndStatuses(done);
    expect(types.at(-1)).toBe("EXCLUSIVE_JOIN:COMPLETED");
    expect(types.filter((type) => type.startsWith(prefix))).toEqual(ran.map((ref) => `${prefix}_${ref}:COMPLETED`));
    const join = taskOf(done, "exclusiveJoin");
    // Its output is the joined task's, as it is (Conductor's ExclusiveJoin: task.setOutputData(exclusiveTask.getOutputData())).
    expect(join.outputData).toEqual({ taskReferenceName: joined });
    expect(done.output).toEqual({ joined: { taskReferenceName: joined } });
    // As Conductor's ExclusiveJoinTaskMapper gives it: named after its type, its input what it joins on.
    expect(join).toMatchObject({ taskType: "EXCLUSIVE_JOIN", taskDefName: "EXCLUSIVE_JOIN", inputData: { joinOn: ["task3", "task5"], defaultExclusiveJoinTask: ["task2", "task4", "task1"] } });
    expect(join["workflowTask"]).toMatchObject({ type: "EXCLUSIVE_JOIN", joinOn: ["task3", "task5"], defaultExclusiveJoinTask: ["task2", "task4", "task1"] });
  });

  /** A SWITCH on workflow input `route` whose cases each end in a task the EXCLUSIVE_JOIN after it joins on. */
  const switched = (name: string, caseTask: (ref: string) => JsonObject, join: JsonObject = {}): JsonObject => ({
    name,
    tasks: [
      {
        name: "route",
        taskReferenceName: "route",
        type: "SWITCH",
        evaluatorType: "value-param",
        expression: "route",
        inputParameters: { route: "${workflow.input.route}" },
        decisionCases: { left: [caseTask("left_end")], right: [caseTask("right_end")] },
        defaultCase: [],
      },
      { name: "joined", taskReferenceName: "joined", type: "EXCLUSIVE_JOIN", joinOn: ["left_end", "right_end"], ...join },
      httpTask("after", { uri: target(`/count/${name}?side=\${joined.output.side}`), method: "GET" }),
    ],
    outputParameters: { side: "${joined.output.side}" },
  });
  const inline = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression: `({ side: "${ref}" })` } });

  it("after a SWITCH, ends with the output of the task of whichever case it took, which the next task reads", async () => {
    await register(switched("xj_switch", inline));
    for (const route of ["left", "right"]) {
      const done = await waitFor(await startWorkflow("xj_switch", { route }), ["COMPLETED", "FAILED"]);
      expect(done.status, String(done["reasonForIncompletion"])).toBe("COMPLETED");
      // An INLINE's output is its result.
      expect(taskOf(done, "joined")).toMatchObject({ status: "COMPLETED", outputData: { result: { side: `${route}_end` } } });
    }
  });

  it("carries a worker's output through, and a workflow output reads it", async () => {
    await register(switched("xj_switch_worker", (ref) => ({ name: "xj_side_worker", taskReferenceName: ref, type: "SIMPLE" })));
    const workflowId = await startWorkflow("xj_switch_worker", { route: "right" });
    await workOn(workflowId, "xj_side_worker", { side: "east" });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.output).toEqual({ side: "east" });
    expect(String(taskOf(done, "after").inputData["uri"])).toMatch(/side=east$/);
    expect(await hits("xj_switch_worker")).toBe(1);
  });

  it("ends with the default task when the case taken ran none of its joinOn", async () => {
    const definition = switched("xj_default", inline, { defaultExclusiveJoinTask: ["before"] });
    await register({ ...definition, tasks: [inline("before"), ...(definition["tasks"] as JsonObject[])] });
    const done = await waitFor(await startWorkflow("xj_default", { route: "neither" }), ["COMPLETED", "FAILED"]);
    expect(done.status, String(done["reasonForIncompletion"])).toBe("COMPLETED");
    expect(taskOf(done, "joined").outputData).toEqual({ result: { side: "before" } });
  });

  it("waits, IN_PROGRESS, when no task it names ran (as Conductor's), until the workflow is terminated", async () => {
    await register(switched("xj_stuck", inline));
    const workflowId = await startWorkflow("xj_stuck", { route: "neither" });
    const waiting = await waitFor(workflowId, (workflow) => taskOf(workflow, "joined")?.status === "IN_PROGRESS");
    expect(waiting.status).toBe("RUNNING");
    expect(typesAndStatuses(waiting)).toEqual(["SWITCH:COMPLETED", "EXCLUSIVE_JOIN:IN_PROGRESS"]);
    // As Conductor's mapper gives it: both lists, the one not given empty.
    expect(taskOf(waiting, "joined").inputData).toEqual({ joinOn: ["left_end", "right_end"], defaultExclusiveJoinTask: [] });
    expect((await api("DELETE", `/api/workflow/${workflowId}?reason=stuck`)).status).toBe(200);
    const ended = await waitFor(workflowId, ["TERMINATED"]);
    expect(taskOf(ended, "joined").status).toBe("CANCELED");
  });

  it("ends COMPLETED with the output of an optional joined task that failed (COMPLETED_WITH_ERRORS, as in Conductor)", async () => {
    await register(switched("xj_optional", (ref) => ({ name: "xj_optional_worker", taskReferenceName: ref, type: "SIMPLE", optional: true })));
    const workflowId = await startWorkflow("xj_optional", { route: "left" });
    await workOn(workflowId, "xj_optional_worker", { partial: true }, "FAILED_WITH_TERMINAL_ERROR");
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(taskOf(done, "left_end").status).toBe("COMPLETED_WITH_ERRORS");
    expect(taskOf(done, "joined")).toMatchObject({ status: "COMPLETED", outputData: { partial: true } });
  });

  it("is never reached when a joined task fails the workflow, and joins the retried task's output once the workflow is retried", async () => {
    await register(switched("xj_failed", (ref) => ({ name: "xj_failed_worker", taskReferenceName: ref, type: "SIMPLE" })));
    const workflowId = await startWorkflow("xj_failed", { route: "left" });
    await workOn(workflowId, "xj_failed_worker", {}, "FAILED");
    const failed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    expect(typesAndStatuses(failed)).toEqual(["SWITCH:COMPLETED", "xj_failed_worker:FAILED"]);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    await workOn(workflowId, "xj_failed_worker", { side: "second" });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(taskOf(done, "joined").outputData).toEqual({ side: "second" });
  });

  it("in a fork, waits for a joined task of another branch (an eviction meanwhile) and ends with it", async () => {
    await register({
      name: "xj_fork",
      tasks: [
        {
          name: "fan",
          taskReferenceName: "fan",
          type: "FORK_JOIN",
          forkTasks: [[{ name: "xj_fork_join", taskReferenceName: "first", type: "EXCLUSIVE_JOIN", joinOn: ["hold"] }], [{ name: "hold", taskReferenceName: "hold", type: "WAIT" }]],
        },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: ["first", "hold"] },
      ],
    });
    const workflowId = await startWorkflow("xj_fork");
    await waitFor(workflowId, (workflow) => taskOf(workflow, "first")?.status === "IN_PROGRESS" && taskOf(workflow, "hold")?.status === "IN_PROGRESS");
    // What it waits for is the execution's stored state: an object that starts afresh reads it back.
    await abortAllDurableObjects();
    await apiOk<string>("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, { approved: true });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(taskOf(done, "first").outputData).toEqual({ approved: true });
  });

  it("ends after an eviction as it would have", async () => {
    await register(switched("xj_evicted", (ref) => httpTask(ref, { uri: target(`/count/xj-evicted-${ref}?delay=1500`), method: "GET" })));
    const workflowId = await startWorkflow("xj_evicted", { route: "right" });
    await eventually(() => hits("xj-evicted-right_end"), (count) => count === 1, "the call sent");
    await abortAllDurableObjects();
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"], 10_000);
    expect(done.status, String(done["reasonForIncompletion"])).toBe("COMPLETED");
    expect(taskOf(done, "joined")).toMatchObject({ status: "COMPLETED", outputData: { response: { body: { n: 2 } } } });
  });

  it.each([
    ["joinOn not a list", { joinOn: "task1" }, "tasks[1].joinOn"],
    ["a joinOn entry not a name", { joinOn: ["task1", 3] }, "tasks[1].joinOn[1]"],
    ["defaultExclusiveJoinTask not a list", { joinOn: ["task1"], defaultExclusiveJoinTask: { task: "task1" } }, "tasks[1].defaultExclusiveJoinTask"],
    ["a blank defaultExclusiveJoinTask entry", { joinOn: ["task1"], defaultExclusiveJoinTask: [""] }, "tasks[1].defaultExclusiveJoinTask[0]"],
  ])("refuses a definition with %s (400, the field's path), storing nothing", async (_what, fields, path) => {
    const before = await rowCount("workflow_defs");
    const response = await api("POST", "/api/metadata/workflow", {
      name: "xj_refused",
      version: 1,
      schemaVersion: 2,
      tasks: [{ name: "task1", taskReferenceName: "task1", type: "NOOP" }, { name: "xj", taskReferenceName: "xj", type: "EXCLUSIVE_JOIN", ...fields }],
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { validationErrors: Array<{ path: string }> };
    expect(body.validationErrors.map((error) => error.path)).toEqual([path]);
    expect(await rowCount("workflow_defs")).toBe(before);
    expect((await api("GET", "/api/metadata/workflow/xj_refused")).status).toBe(404);
  });
});
