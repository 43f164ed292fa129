import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, hits, httpTask, register, startWorkflow, target, waitFor, type WorkflowJson } from "./helpers";

/** A branch of a CONDITIONAL_FORK: its tasks, run when `condition` holds (always without one). */
const branch = (tasks: JsonObject[], condition?: { evaluatorType: string; expression: string }): JsonObject => (condition === undefined ? { tasks } : { condition, tasks });

/** A CONDITIONAL_FORK over `branches` (with `extra` fields: defaultCase…), followed by its JOIN (whose joinOn is not read). */
function conditionalFork(ref: string, branches: JsonObject[], inputParameters: JsonObject, extra: JsonObject = {}): JsonObject[] {
  return [
    { name: ref, taskReferenceName: ref, type: "CONDITIONAL_FORK", inputParameters, conditionalBranches: branches, ...extra },
    { name: `${ref}_join`, taskReferenceName: `${ref}_join`, type: "JOIN", joinOn: [] },
  ];
}

const noop = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "NOOP" });
const waitTask = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });
const refsAndStatuses = (workflow: WorkflowJson) => workflow.tasks.map((task) => `${task.referenceTaskName}:${task.status}`).sort();
const taskOf = (workflow: WorkflowJson, ref: string) => workflow.tasks.findLast((task) => task.referenceTaskName === ref)!;

describe("CONDITIONAL_FORK", () => {
  it("runs side by side the branches whose condition holds and those without one, never the others; its JOIN waits for the last task of each it ran, and joins their outputs", async () => {
    await register({
      name: "cfork_chosen",
      tasks: [
        ...conditionalFork(
          "route",
          [
            // javascript over the fork's input: holds.
            branch([noop("big_first"), waitTask("big_hold")], { evaluatorType: "javascript", expression: "$.amount > 100" }),
            // value-param: the input parameter `express` is false.
            branch([waitTask("express_hold")], { evaluatorType: "value-param", expression: "express" }),
            // No condition: always runs.
            branch([noop("audit")]),
            // A text "TRUE" chooses too (Conductor compares "true" whatever its case).
            branch([noop("shouting")], { evaluatorType: "graaljs", expression: "'TRUE'" }),
            // A condition that throws does not hold: its branch is left out, the workflow goes on.
            branch([noop("broken")], { evaluatorType: "javascript", expression: "$.missing.deeper > 1" }),
            // Nor does any other value than true.
            branch([noop("one")], { evaluatorType: "javascript", expression: "1" }),
          ],
          { amount: "${workflow.input.amount}", express: false },
          { defaultCase: [noop("fallback")] },
        ),
        noop("after"),
      ],
    });
    const workflowId = await startWorkflow("cfork_chosen", { amount: 250 });
    const holding = await waitFor(workflowId, (workflow) => taskOf(workflow, "big_hold")?.status === "IN_PROGRESS");
    expect(holding.status).toBe("RUNNING");
    expect(refsAndStatuses(holding)).toEqual(["audit:COMPLETED", "big_first:COMPLETED", "big_hold:IN_PROGRESS", "route:COMPLETED", "route_join:IN_PROGRESS", "shouting:COMPLETED"]);
    const join = taskOf(holding, "route_join");
    // As Conductor's mapper gives it: the last task of each branch chosen, in order, in place of the definition's joinOn.
    expect(join.inputData["joinOn"]).toEqual(["big_hold", "audit", "shouting"]);
    // The fork shows as a static fork's instance does.
    const fork = taskOf(holding, "route");
    expect([fork["taskType"], fork["taskDefName"], fork.outputData]).toEqual(["FORK", "FORK", {}]);
    expect(fork["workflowTask"]).toMatchObject({ type: "CONDITIONAL_FORK", conditionalBranches: expect.any(Array) });

    await apiOk<string>("POST", `/api/tasks/${workflowId}/big_hold/COMPLETED`, { approved: true });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(taskOf(done, "route_join").outputData).toEqual({ big_hold: { approved: true }, audit: {}, shouting: {} });
    expect(refsAndStatuses(done)).toEqual(["after:COMPLETED", "audit:COMPLETED", "big_first:COMPLETED", "big_hold:COMPLETED", "route:COMPLETED", "route_join:COMPLETED", "shouting:COMPLETED"]);
  });

  it("runs its defaultCase when no branch is chosen, and fails the workflow with Conductor's reason when it has none", async () => {
    const branches = [branch([noop("large")], { evaluatorType: "javascript", expression: "$.amount > 100" }), branch([noop("flagged")], { evaluatorType: "value-param", expression: "flag" }), branch([])];
    const input = { amount: "${workflow.input.amount}", flag: "${workflow.input.flag}" };
    await register({ name: "cfork_default", tasks: conditionalFork("route", branches, input, { defaultCase: [noop("small"), noop("small_end")] }) });
    const small = await waitFor(await startWorkflow("cfork_default", { amount: 5, flag: "no" }), ["COMPLETED", "FAILED"]);
    expect(small.status, String(small.reasonForIncompletion)).toBe("COMPLETED");
    expect(refsAndStatuses(small)).toEqual(["route:COMPLETED", "route_join:COMPLETED", "small:COMPLETED", "small_end:COMPLETED"]);
    expect(taskOf(small, "route_join").inputData["joinOn"]).toEqual(["small_end"]);
    // A value-param condition holds for the text "true" too.
    const flagged = await waitFor(await startWorkflow("cfork_default", { amount: 5, flag: "true" }), ["COMPLETED", "FAILED"]);
    expect(refsAndStatuses(flagged)).toEqual(["flagged:COMPLETED", "route:COMPLETED", "route_join:COMPLETED"]);

    await register({ name: "cfork_nothing", tasks: [...conditionalFork("route", branches, input), noop("after")] });
    const failed = await waitFor(await startWorkflow("cfork_nothing", { amount: 5 }), ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    // Conductor's reason, as this service words a task's failure of the workflow.
    expect(failed.reasonForIncompletion).toBe("Task route failed: CONDITIONAL_FORK has no branches selected and no defaultCase defined");
    expect(refsAndStatuses(failed)).toEqual(["route:FAILED_WITH_TERMINAL_ERROR"]);
  });

  it("fails the workflow when a chosen branch fails, cancelling the other, and on retry (or a rerun from it) runs the failed task again, waiting for the chosen branches only", async () => {
    await register({
      name: "cfork_retry",
      tasks: conditionalFork(
        "route",
        [
          branch([httpTask("flaky", { uri: target("/flaky/cfork-retry?fail=1"), method: "GET" })], { evaluatorType: "javascript", expression: "$.go" }),
          branch([waitTask("hold")]),
          branch([httpTask("never", { uri: target("/count/cfork-never"), method: "GET" })], { evaluatorType: "javascript", expression: "!$.go" }),
        ],
        { go: true },
      ),
    });
    const workflowId = await startWorkflow("cfork_retry");
    const failed = await waitFor(workflowId, ["FAILED", "COMPLETED"]);
    expect(failed.status).toBe("FAILED");
    expect(refsAndStatuses(failed)).toEqual(["flaky:FAILED", "hold:CANCELED", "route:COMPLETED", "route_join:CANCELED"]);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    const waiting = await waitFor(workflowId, (workflow) => taskOf(workflow, "flaky").status === "COMPLETED" && taskOf(workflow, "hold").status === "IN_PROGRESS");
    expect(waiting.status).toBe("RUNNING");
    await apiOk<string>("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(Object.keys(taskOf(done, "route_join").outputData).sort()).toEqual(["flaky", "hold"]);
    expect([await hits("cfork-retry"), await hits("cfork-never")]).toEqual([2, 0]);

    // A rerun from a branch's task runs it again; its JOIN waits for it again, the branches chosen as they were.
    await apiOk("POST", `/api/workflow/${workflowId}/rerun`, { reRunFromTaskId: taskOf(done, "flaky").taskId });
    const rerun = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(rerun.status, String(rerun.reasonForIncompletion)).toBe("COMPLETED");
    expect(taskOf(rerun, "route_join").inputData["joinOn"]).toEqual(["flaky", "hold"]);
    expect([await hits("cfork-retry"), await hits("cfork-never")]).toEqual([3, 0]);
  });

  it("chooses afresh in each iteration of a DO_WHILE, its tasks and JOIN named after the iteration, the JOIN waiting for that iteration's branches", async () => {
    const fork = conditionalFork(
      "route",
      [branch([waitTask("odd")], { evaluatorType: "javascript", expression: "$.i % 2 == 1" }), branch([noop("even")], { evaluatorType: "javascript", expression: "$.i % 2 == 0" })],
      { i: "${each.output.iteration}" },
    );
    await register({ name: "cfork_loop", tasks: [{ name: "each", taskReferenceName: "each", type: "DO_WHILE", inputParameters: {}, loopCondition: "$.each.iteration < 3", loopOver: fork }] });
    const workflowId = await startWorkflow("cfork_loop");
    const first = await waitFor(workflowId, (workflow) => taskOf(workflow, "odd__1")?.status === "IN_PROGRESS");
    expect(taskOf(first, "route_join__1").status).toBe("IN_PROGRESS");
    expect(taskOf(first, "route_join__1").inputData["joinOn"]).toEqual(["odd"]);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/odd/COMPLETED`, { round: 1 });
    const third = await waitFor(workflowId, (workflow) => taskOf(workflow, "odd__3")?.status === "IN_PROGRESS");
    expect(taskOf(third, "route_join__2").inputData["joinOn"]).toEqual(["even"]);
    expect(taskOf(third, "route_join__2").outputData).toEqual({ even: {} });
    await apiOk<string>("POST", `/api/tasks/${workflowId}/odd/COMPLETED`, { round: 3 });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(done.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual([
      "each:COMPLETED",
      "route__1:COMPLETED",
      "odd__1:COMPLETED",
      "route_join__1:COMPLETED",
      "route__2:COMPLETED",
      "even__2:COMPLETED",
      "route_join__2:COMPLETED",
      "route__3:COMPLETED",
      "odd__3:COMPLETED",
      "route_join__3:COMPLETED",
    ]);
    expect(taskOf(done, "route_join__3").outputData).toEqual({ odd: { round: 3 } });
  });

  it("upgraded while its defaultCase runs, to a version with a branch more and a task more in its defaultCase, goes on with its defaultCase, not the branch added (which it never chose), its JOIN waiting for the new last task", async () => {
    const large = branch([noop("large")], { evaluatorType: "javascript", expression: "$.amount > 100" });
    const version = (n: number, branches: JsonObject[], defaultCase: JsonObject[]) => ({ name: "cfork_upgrade", version: n, tasks: [...conditionalFork("route", branches, { amount: "${workflow.input.amount}" }, { defaultCase }), noop("after")] });
    await register(version(1, [large], [waitTask("small")]));
    await register(version(2, [large, branch([waitTask("huge")], { evaluatorType: "javascript", expression: "$.amount > 1000" })], [waitTask("small"), noop("small_end")]));
    const workflowId = await startWorkflow("cfork_upgrade", { amount: 5 }, "?version=1");
    await waitFor(workflowId, (workflow) => taskOf(workflow, "small")?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/workflow/${workflowId}/upgrade`, { name: "cfork_upgrade", version: 2 });
    const upgraded = await waitFor(workflowId, (workflow) => workflow["workflowVersion"] === 2);
    // The fork chose its defaultCase, which the new version lists after two branches instead of one.
    expect(refsAndStatuses(upgraded)).toEqual(["route:COMPLETED", "route_join:IN_PROGRESS", "small:IN_PROGRESS"]);
    expect(taskOf(upgraded, "route_join").inputData["joinOn"]).toEqual(["small_end"]);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/small/COMPLETED`, { by: "default" });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(taskOf(done, "route_join").outputData).toEqual({ small_end: {} });
    expect(refsAndStatuses(done)).toEqual(["after:COMPLETED", "route:COMPLETED", "route_join:COMPLETED", "small:COMPLETED", "small_end:COMPLETED"]);
  });

  it("refuses, storing nothing: no JOIN after it, a condition of an evaluator not run here or missing its expression or type, one that does not parse, branches of the wrong shape, a reference name used in two branches, no task to run", async () => {
    const refused = async (name: string, tasks: JsonObject[]) => {
      const response = await api("POST", "/api/metadata/workflow", { name, tasks });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { validationErrors: Array<{ path: string; message: string }> };
      expect((await api("GET", `/api/metadata/workflow/${name}`)).status).toBe(404);
      return body.validationErrors;
    };
    const fork = (fields: JsonObject): JsonObject => ({ name: "route", taskReferenceName: "route", type: "CONDITIONAL_FORK", ...fields });
    const join = { name: "route_join", taskReferenceName: "route_join", type: "JOIN" };

    expect(await refused("cfork_unjoined", [fork({ conditionalBranches: [branch([noop("a")])] }), noop("after")])).toEqual([
      { path: "tasks[0]", message: expect.stringContaining("must be followed directly by a JOIN") },
    ]);
    const conditions = await refused("cfork_conditions", [
      fork({
        conditionalBranches: [
          branch([noop("a")], { evaluatorType: "python", expression: "True" }),
          { condition: { expression: "$.x" }, tasks: [noop("b")] },
          { condition: { evaluatorType: "javascript" }, tasks: [noop("c")] },
          branch([noop("d")], { evaluatorType: "javascript", expression: "$.x >" }),
          { tasks: noop("e") },
          "not a branch",
        ],
        defaultCase: [noop("a")],
      }),
      join,
    ]);
    expect(conditions.map((issue) => issue.path).sort()).toEqual([
      "tasks[0].conditionalBranches[0].condition.evaluatorType",
      "tasks[0].conditionalBranches[1].condition.evaluatorType",
      "tasks[0].conditionalBranches[2].condition.expression",
      "tasks[0].conditionalBranches[3].condition.expression",
      "tasks[0].conditionalBranches[4].tasks",
      "tasks[0].conditionalBranches[5]",
      "tasks[0].defaultCase[0].taskReferenceName",
    ]);
    expect(conditions.find((issue) => issue.path === "tasks[0].defaultCase[0].taskReferenceName")?.message).toContain("tasks[0].conditionalBranches[0].tasks[0]");
    expect(conditions.find((issue) => issue.path === "tasks[0].conditionalBranches[3].condition.expression")?.message).toMatch(/does not parse as JavaScript/);
    expect(await refused("cfork_empty", [fork({ conditionalBranches: [branch([], { evaluatorType: "javascript", expression: "true" })], defaultCase: [] }), join])).toEqual([
      { path: "tasks[0].conditionalBranches", message: expect.stringContaining("needs a task to run") },
    ]);
    expect(await refused("cfork_secret", [fork({ conditionalBranches: [branch([noop("a")])], inputParameters: { key: "${workflow.secrets.api_key}" } }), join])).toEqual([
      { path: "tasks[0].inputParameters", message: expect.stringContaining("must not use secrets") },
    ]);
  });

  it("is registered with a JOIN whose joinOn names anything (it is not read), and shows its branches as given", async () => {
    await register({
      name: "cfork_shown",
      tasks: [
        { name: "route", taskReferenceName: "route", type: "CONDITIONAL_FORK", conditionalBranches: [{ condition: { evaluatorType: "value-param", expression: "k", input: { a: 1 } }, tasks: [noop("a")], failWorkflowOnFailure: true }, { condition: null, tasks: [noop("b")] }] },
        { name: "route_join", taskReferenceName: "route_join", type: "JOIN", joinOn: ["elsewhere"] },
      ],
    });
    const shown = await apiOk<{ tasks: JsonObject[] }>("GET", "/api/metadata/workflow/cfork_shown");
    expect(shown.tasks[0]).toMatchObject({
      type: "CONDITIONAL_FORK",
      conditionalBranches: [
        { condition: { evaluatorType: "value-param", expression: "k", input: { a: 1 } }, tasks: [{ taskReferenceName: "a", type: "NOOP" }], failWorkflowOnFailure: true },
        { tasks: [{ taskReferenceName: "b", type: "NOOP" }] },
      ],
    });
    const done = await waitFor(await startWorkflow("cfork_shown"), ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(taskOf(done, "route_join").outputData).toEqual({ b: {} });

    // As the Java client sends it, every WorkflowTask's empty forkTasks (and other lists) given: its JOIN naming its
    // branches' last tasks is no FORK_JOIN's JOIN, whose joinOn would be checked against those (empty) forkTasks.
    await register({
      name: "cfork_java",
      tasks: [
        { name: "route", taskReferenceName: "route", type: "CONDITIONAL_FORK", forkTasks: [], decisionCases: {}, loopOver: [], conditionalBranches: [{ condition: null, tasks: [{ ...noop("a"), forkTasks: [] }] }, { tasks: [noop("b")] }], defaultCase: [] },
        { name: "route_join", taskReferenceName: "route_join", type: "JOIN", joinOn: ["a", "b"], forkTasks: [], conditionalBranches: [] },
      ],
    });
    const java = await waitFor(await startWorkflow("cfork_java"), ["COMPLETED", "FAILED"]);
    expect(java.status, String(java.reasonForIncompletion)).toBe("COMPLETED");
    expect(taskOf(java, "route_join").outputData).toEqual({ a: {}, b: {} });
  });
});
