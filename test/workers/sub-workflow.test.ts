import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { WorkflowExecution, type ActorResult } from "../../src/actors/workflow-execution";
import { DefinitionRepository } from "../../src/worker/definitions";
import { executionStub } from "../../src/worker/executions";
import { FAILURE_WORKFLOW_OUTPUT_KEY } from "../../src/engine/failure-workflow";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, eventually, gate, getWorkflow, hits, httpTask, register, startWorkflow, storedByExecutionObject, target, waitFor, waitForIndexRow, type WorkflowJson } from "./helpers";
import { firstChildOf, registerEchoChild, subTask, terminal, waitTask } from "./sub-workflow-helpers";

describe("SUB_WORKFLOW", () => {
  it("runs the child with subWorkflowParam inside inputParameters and the child input as extra keys; output = subWorkflowId + child output; links both ways", async () => {
    await registerEchoChild("child_inside");
    await register({ name: "parent_inside", tasks: [subTask("sub", { subWorkflowParam: { name: "child_inside", version: 1 }, who: "${workflow.input.who}" })] });
    const parentId = await startWorkflow("parent_inside", { who: "ada" });
    const parent = await waitFor(parentId, terminal);
    expect(parent.status).toBe("COMPLETED");
    const task = parent.tasks[0]!;
    const childId = String(task["subWorkflowId"]);
    expect(task.outputData).toEqual({ subWorkflowId: childId, who: "ada", tag: "v1", n: 1 });
    const child = await getWorkflow(childId);
    expect(child).toMatchObject({ status: "COMPLETED", parentWorkflowId: parentId, parentWorkflowTaskId: task.taskId, input: { who: "ada" } });
  });

  it("shows no subWorkflowId while the child's start is on its way, then the child's, which answers (as Conductor sets it once the start returned)", async () => {
    await register({ name: "held_start_child", tasks: [waitTask("gate")] });
    await register({ name: "held_start_parent", tasks: [subTask("sub", { subWorkflowParam: { name: "held_start_child" } })] });
    const startArrived = gate();
    const { start } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.start = async function (this: WorkflowExecution, params: Parameters<WorkflowExecution["start"]>[0]) {
      if (params.definition.name === "held_start_child") {
        startArrived.hit();
        await startArrived.released;
      }
      return start.call(this, params);
    };
    try {
      const parentId = await startWorkflow("held_start_parent");
      await startArrived.reached;
      // The task runs, its child's id chosen and stored, the start held on its way: no id to follow to a 404 yet.
      const starting = await waitFor(parentId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
      expect(starting.tasks[0]!["subWorkflowId"]).toBeUndefined();
      expect(starting.tasks[0]!.outputData["subWorkflowId"]).toBeUndefined();
      const task = await apiOk<JsonObject>("GET", `/api/tasks/${starting.tasks[0]!.taskId}`);
      expect(task["subWorkflowId"]).toBeUndefined();
      startArrived.release();
      const running = await waitFor(parentId, (workflow) => workflow.tasks[0]?.["subWorkflowId"] !== undefined);
      const childId = String(running.tasks[0]!["subWorkflowId"]);
      expect(running.tasks[0]!.outputData["subWorkflowId"]).toBe(childId);
      expect(await getWorkflow(childId)).toMatchObject({ status: "RUNNING", parentWorkflowId: parentId });
    } finally {
      WorkflowExecution.prototype.start = start;
    }
  });

  it("starts a child whose definition an expression gives as the parent runs (a planner task's output, as Conductor's InlineSubWorkflowFromExpressionSpec), checked then as a registration would be", async () => {
    await register({
      name: "planned_parent",
      tasks: [
        { name: "plan_builder", taskReferenceName: "wf_builder", type: "SIMPLE", inputParameters: {} },
        {
          name: "exec_plan",
          taskReferenceName: "exec",
          type: "SUB_WORKFLOW",
          subWorkflowParam: { name: "planned_child", version: 1, workflowDefinition: "${wf_builder.output.result}" },
          inputParameters: { threshold: "${workflow.input.threshold}" },
        },
      ],
      outputParameters: { doubled: "${exec.output.doubled}" },
    });
    const child = {
      name: "planned_child",
      version: 1,
      schemaVersion: 2,
      tasks: [{ name: "double", taskReferenceName: "double", type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression: "$.n * 2", n: "${workflow.input.threshold}" } }],
      outputParameters: { doubled: "${double.output.result}" },
    };
    const completeBuilder = async (workflowId: string, result: JsonObject) => {
      await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "SCHEDULED");
      await apiOk("POST", `/api/tasks/${workflowId}/wf_builder/COMPLETED`, { result });
    };
    const parentId = await startWorkflow("planned_parent", { threshold: 5 });
    await completeBuilder(parentId, child);
    const done = await waitFor(parentId, terminal);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(done.output).toEqual({ doubled: 10 });
    const childRun = await getWorkflow(String(done.tasks[1]!["subWorkflowId"]));
    expect(childRun).toMatchObject({ workflowName: "planned_child", status: "COMPLETED", input: { threshold: 5 } });
    // Given as data, it is not registered by running.
    expect((await api("GET", "/api/metadata/workflow/planned_child")).status).toBe(404);

    // One that does not check, or reads a secret, fails the task with INVALID_PARAMETERS, starting nothing.
    const invalid = await startWorkflow("planned_parent", { threshold: 5 });
    await completeBuilder(invalid, { ...child, tasks: [{ name: "x", taskReferenceName: "x", type: "HTTP", inputParameters: {} }], outputParameters: {} });
    const refused = await waitFor(invalid, terminal);
    expect(refused.status).toBe("FAILED");
    expect(refused.tasks[1]).toMatchObject({ status: "FAILED", outputData: { error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: null, errorCode: "INVALID_PARAMETERS" } } });
    expect(String(refused.tasks[1]!.reasonForIncompletion)).toMatch(/subWorkflowParam\.workflowDefinition\.tasks\[0\]\.inputParameters/);
    const secretive = await startWorkflow("planned_parent", { threshold: 5 });
    const leaky = httpTask("leak", { uri: target("/count/planned-leak"), method: "GET", headers: { Authorization: "${workflow.secrets.api_token}" } });
    await completeBuilder(secretive, { ...child, tasks: [leaky], outputParameters: {} });
    const noSecrets = await waitFor(secretive, terminal);
    expect(noSecrets.tasks[1]!.reasonForIncompletion).toMatch(/reads secrets \(\$\{workflow\.secrets\.api_token\}\)/);
    expect(noSecrets.tasks[1]).not.toHaveProperty("subWorkflowId");
    expect(await hits("planned-leak")).toBe(0);
    // Nor one reading a task it does not hold, which would only read null.
    const misspelt = await startWorkflow("planned_parent", { threshold: 5 });
    await completeBuilder(misspelt, { ...child, outputParameters: { doubled: "${dubble.output.result}" } });
    const unknown = await waitFor(misspelt, terminal);
    expect(unknown.tasks[1]).toMatchObject({ status: "FAILED", outputData: { details: { errorCode: "INVALID_PARAMETERS" } } });
    expect(unknown.tasks[1]!.reasonForIncompletion).toMatch(/workflowDefinition\.outputParameters\.doubled: the workflow's outputParameters reads "dubble" .*did you mean "double"\?/);
  });

  it("runs the child version that was the latest when the parent started, whatever is registered meanwhile, and shows it (Conductor's e2e SubWorkflowVersionTests)", async () => {
    await registerEchoChild("pin_child", 1);
    await register({
      name: "pin_parent",
      tasks: [{ name: "gate", taskReferenceName: "gate", type: "WAIT", inputParameters: {} }, { name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "pin_child" }, inputParameters: { who: "x" } }],
    });
    const parentId = await startWorkflow("pin_parent");
    await waitFor(parentId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await registerEchoChild("pin_child", 2);
    await apiOk("POST", `/api/tasks/${parentId}/gate/COMPLETED`, {});
    const done = await waitFor(parentId, terminal);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(done.tasks[1]!.outputData).toMatchObject({ tag: "v1" });
    expect(done.tasks[1]!["workflowTask"]).toMatchObject({ subWorkflowParam: { name: "pin_child", version: 1 } });
    // A parent started now takes version 2; the registered parent itself still names no version.
    const later = await startWorkflow("pin_parent");
    await waitFor(later, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${later}/gate/COMPLETED`, {});
    expect((await waitFor(later, terminal)).tasks[1]!.outputData).toMatchObject({ tag: "v2" });
    expect(((await apiOk<JsonObject>("GET", "/api/metadata/workflow/pin_parent"))["tasks"] as JsonObject[])[1]!["subWorkflowParam"]).toEqual({ name: "pin_child" });
  });

  it("takes subWorkflowParam beside inputParameters (task level wins) and the child input from inputParameters.input", async () => {
    await registerEchoChild("child_beside");
    await register({
      name: "parent_beside",
      tasks: [subTask("sub", { input: { who: "grace" }, subWorkflowParam: { name: "nope" } }, { subWorkflowParam: { name: "child_beside" } })],
    });
    const parent = await waitFor(await startWorkflow("parent_beside"), terminal);
    expect(parent.status).toBe("COMPLETED");
    expect(parent.tasks[0]!.outputData).toMatchObject({ who: "grace", tag: "v1" });
  });

  it("chooses the child by a ternary expression", async () => {
    await registerEchoChild("fast_path");
    await registerEchoChild("slow_path");
    await register({ name: "parent_ternary", tasks: [subTask("sub", { subWorkflowParam: { name: "${workflow.input.tier == 'gold' ? 'fast_path' : 'slow_path'}" }, who: "x" })] });
    const gold = await waitFor(await startWorkflow("parent_ternary", { tier: "gold" }), terminal);
    const other = await waitFor(await startWorkflow("parent_ternary", { tier: "silver" }), terminal);
    expect((await getWorkflow(String(gold.tasks[0]!["subWorkflowId"])))["workflowName"]).toBe("fast_path");
    expect((await getWorkflow(String(other.tasks[0]!["subWorkflowId"])))["workflowName"]).toBe("slow_path");
  });

  it("without a version, uses the child's latest version at the moment it starts", async () => {
    await registerEchoChild("child_latest", 1);
    await register({ name: "parent_latest", tasks: [subTask("sub", { subWorkflowParam: { name: "child_latest" }, who: "x" })] });
    expect((await waitFor(await startWorkflow("parent_latest"), terminal)).tasks[0]!.outputData["tag"]).toBe("v1");
    await registerEchoChild("child_latest", 2);
    expect((await waitFor(await startWorkflow("parent_latest"), terminal)).tasks[0]!.outputData["tag"]).toBe("v2");
  });

  it("with waitForCompletion false (at either placement) the task completes once the child has started", async () => {
    await register({ name: "child_slow", tasks: [waitTask("gate")] });
    await register({
      name: "parent_nowait",
      tasks: [subTask("a", { subWorkflowParam: { name: "child_slow" }, waitForCompletion: false }), subTask("b", { subWorkflowParam: { name: "child_slow" } }, { waitForCompletion: false })],
    });
    const parent = await waitFor(await startWorkflow("parent_nowait"), terminal);
    expect(parent.status).toBe("COMPLETED");
    expect(parent.tasks.map((task) => task.referenceTaskName)).toEqual(["a", "b"]);
    for (const task of parent.tasks) {
      expect(task.status).toBe("COMPLETED");
      expect((await getWorkflow(String(task["subWorkflowId"]))).status).toBe("RUNNING");
    }
  });

  it("a failed child fails the task with SUB_WORKFLOW_ERROR and the parent; a start error has the same shape", async () => {
    await register({ name: "child_fails", tasks: [httpTask("boom", { uri: target("/status/500"), method: "GET" })] });
    await register({ name: "parent_child_fails", tasks: [subTask("sub", { subWorkflowParam: { name: "child_fails" } })] });
    const parent = await waitFor(await startWorkflow("parent_child_fails"), terminal);
    expect(parent.status).toBe("FAILED");
    const task = parent.tasks[0]!;
    expect(task.status).toBe("FAILED");
    const childId = String(task["subWorkflowId"]);
    expect(task.outputData).toMatchObject({ status: "FAILED", error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: childId, errorCode: "TASK_ERROR" } });
    expect(String((task.outputData["details"] as JsonObject)["errorMessage"])).toContain("HTTP 500");
    expect(task["reasonForIncompletion"]).toBe(task.outputData["message"]);
    // Conductor's reason, as its "Debugging workflows" guide lists it for users to look for, the child named as its
    // WorkflowModel.toShortString does (name.version/id):
    // https://conductor-oss.github.io/conductor/devguide/how-tos/Workflows/debugging-workflows.html#understanding-reasonforincompletion
    expect(task["reasonForIncompletion"]).toBe(`Sub workflow child_fails.1/${childId} failure reason: ${String((await getWorkflow(childId))["reasonForIncompletion"])}`);
    // What the child output as it failed (the failed HTTP call's) is there too, as Conductor adds it for every ending.
    const child = await getWorkflow(childId);
    expect(child.output).toMatchObject({ statusCode: 500 });
    expect(task.outputData).toMatchObject({ statusCode: 500 });

    await register({ name: "parent_missing_child", tasks: [subTask("sub", { subWorkflowParam: { name: "no_such_child" } })] });
    const missing = await waitFor(await startWorkflow("parent_missing_child"), terminal);
    expect(missing.status).toBe("FAILED");
    expect(missing.tasks[0]!.outputData).toMatchObject({ status: "FAILED", error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: null, errorCode: "WORKFLOW_NOT_FOUND" } });
    // No child was started: none is shown for a client or the UI to follow to a 404, as Conductor sets none.
    expect(missing.tasks[0]).not.toHaveProperty("subWorkflowId");
    expect(missing.tasks[0]!.outputData).not.toHaveProperty("subWorkflowId");
    await register({ name: "parent_bad_version", tasks: [subTask("sub", { subWorkflowParam: { name: "child_fails", version: 9 } })] });
    expect((await waitFor(await startWorkflow("parent_bad_version"), terminal)).tasks[0]!.outputData).toMatchObject({ details: { errorCode: "VERSION_NOT_FOUND" } });
  });

  it("an input or workflowInput that resolves to a non-object fails the task with INVALID_PARAMETERS instead of being dropped", async () => {
    await registerEchoChild("child_bad_input");
    for (const key of ["input", "workflowInput"]) {
      const name = `parent_bad_${key}`;
      await register({ name, tasks: [subTask("sub", { subWorkflowParam: { name: "child_bad_input" }, [key]: "${workflow.input.payload}", who: "x" })] });
      const parent = await waitFor(await startWorkflow(name, { payload: ["not", "an", "object"] }), terminal);
      expect(parent.status).toBe("FAILED");
      const task = parent.tasks[0]!;
      expect(task.outputData).toMatchObject({ error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: null, errorCode: "INVALID_PARAMETERS" } });
      expect(task["reasonForIncompletion"]).toContain(`${key} resolved to an array, not an object (the child workflow's input)`);
      // null is "not given", as in Conductor: the child gets the other keys.
      const withNull = await waitFor(await startWorkflow(name, { payload: null }), terminal);
      expect(withNull.status).toBe("COMPLETED");
      expect(withNull.tasks[0]!.outputData).toMatchObject({ who: "x" });
    }
  });

  it("shows the child in the task's input as Conductor's SubWorkflowTaskMapper does (subWorkflowName, subWorkflowVersion, subWorkflowTaskToDomain, priority), none of it in the child's input", async () => {
    const noop = { name: "noop", taskReferenceName: "noop", type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression: "1" } };
    await register({ name: "shown_child", version: 1, tasks: [noop] });
    await register({
      name: "shown_parent",
      tasks: [
        subTask("beside", { who: "${workflow.input.who}" }, { subWorkflowParam: { name: "shown_child", version: 1, taskToDomain: { noop: "blue" }, priority: "${workflow.input.p}" } }),
        subTask("inside", { subWorkflowParam: { name: "shown_child" }, who: "x" }),
        subTask("expressed", { subWorkflowParam: { name: "${workflow.input.child}" }, who: "y" }),
        // Keys the definition gives itself stay its own and the child's input, as before.
        subTask("own", { subWorkflowName: "mine", subWorkflowVersion: "v-mine", priority: 3, who: "z" }, { subWorkflowParam: { name: "shown_child", priority: 5 } }),
      ],
    });
    const parent = await waitFor(await startWorkflow("shown_parent", { who: "ada", p: 7, child: "shown_child" }), terminal);
    expect(parent.status, String(parent.reasonForIncompletion)).toBe("COMPLETED");
    const [beside, inside, expressed, own] = parent.tasks;
    const childOf = (task: WorkflowJson["tasks"][number]) => getWorkflow(String(task["subWorkflowId"]));

    expect(beside!.inputData).toEqual({ subWorkflowParam: { name: "shown_child", version: 1, taskToDomain: { noop: "blue" }, priority: 7 }, who: "ada", subWorkflowName: "shown_child", subWorkflowVersion: 1, subWorkflowTaskToDomain: { noop: "blue" }, priority: 7 });
    expect(await childOf(beside!)).toMatchObject({ input: { who: "ada" }, priority: 7, taskToDomain: { noop: "blue" } });
    expect((await childOf(beside!)).input).toEqual({ who: "ada" });
    // Named without a version, inside inputParameters or by an expression: the version the child started with.
    expect(inside!.inputData).toMatchObject({ subWorkflowName: "shown_child", subWorkflowVersion: 1 });
    expect((await childOf(inside!)).input).toEqual({ who: "x" });
    expect(expressed!.inputData).toMatchObject({ subWorkflowName: "shown_child", subWorkflowVersion: 1 });
    expect(expressed!.inputData).not.toHaveProperty("priority");
    expect((await childOf(expressed!)).input).toEqual({ who: "y" });
    expect(own!.inputData).toMatchObject({ subWorkflowName: "mine", subWorkflowVersion: "v-mine", priority: 3 });
    expect(await childOf(own!)).toMatchObject({ priority: 5 });
    expect((await childOf(own!)).input).toEqual({ subWorkflowName: "mine", subWorkflowVersion: "v-mine", priority: 3, who: "z" });
  });

  it("a taskToDomain an expression gives whole inside inputParameters is the child's; one resolving to no map fails the task naming its kind, and none given leaves the parent's", async () => {
    await registerEchoChild("child_expressed_domains");
    await register({ name: "parent_expressed_domains", tasks: [subTask("sub", { subWorkflowParam: { name: "child_expressed_domains", taskToDomain: "${workflow.input.domains}" }, who: "x" })] });
    const start = (input: JsonObject) => apiOk<string>("POST", "/api/workflow", { name: "parent_expressed_domains", input, taskToDomain: { "*": "parent-zone" } });
    const mapped = await waitFor(await start({ domains: { echo: "gpu", other: 3 } }), terminal);
    expect(mapped.status, String(mapped.reasonForIncompletion)).toBe("COMPLETED");
    expect(await getWorkflow(String(mapped.tasks[0]!["subWorkflowId"]))).toMatchObject({ input: { who: "x" }, taskToDomain: { echo: "gpu", other: "3" } });
    const none = await waitFor(await start({}), terminal);
    expect(none.status, String(none.reasonForIncompletion)).toBe("COMPLETED");
    expect(await getWorkflow(String(none.tasks[0]!["subWorkflowId"]))).toMatchObject({ taskToDomain: { "*": "parent-zone" } });
    const named = await waitFor(await start({ domains: "gpu" }), terminal);
    expect(named.status).toBe("FAILED");
    expect(named.tasks[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: "Sub workflow could not start: subWorkflowParam.taskToDomain resolved to a string, not an object of task names to domains" });
    expect(named.tasks[0]!["subWorkflowId"]).toBeUndefined();
  });

  it("an empty workflowInput is not given (the child gets the other keys, as Conductor's SubWorkflow); an empty input is an empty input", async () => {
    await registerEchoChild("child_empty_input");
    for (const [key, expected] of [["workflowInput", { who: "x" }], ["input", {}]] as const) {
      const name = `parent_empty_${key}`;
      await register({ name, tasks: [subTask("sub", { subWorkflowParam: { name: "child_empty_input" }, [key]: {}, who: "x" })] });
      const parent = await waitFor(await startWorkflow(name), terminal);
      expect(parent.status, String(parent.reasonForIncompletion)).toBe("COMPLETED");
      expect((await getWorkflow(String(parent.tasks[0]!["subWorkflowId"]))).input).toEqual(expected);
    }
  });

  it("a child that times out fails the task (errorCode TIMED_OUT); a terminated child cancels it", async () => {
    await register({ name: "child_times_out", timeoutSeconds: 1, timeoutPolicy: "TIME_OUT_WF", tasks: [waitTask("gate")] });
    await register({ name: "parent_child_timeout", tasks: [subTask("sub", { subWorkflowParam: { name: "child_times_out" } })] });
    const timedOut = await waitFor(await startWorkflow("parent_child_timeout"), terminal, 5_000);
    expect(timedOut.tasks[0]!.outputData).toMatchObject({ error: "SUB_WORKFLOW_ERROR", details: { errorCode: "TIMED_OUT" } });
    expect(timedOut.tasks[0]!["reasonForIncompletion"]).toMatch(/^Sub workflow child_times_out\.1\/\S+ failure reason: Workflow timed out after \d+ seconds\. Timeout configured as 1 seconds\. Timeout policy configured to TIME_OUT_WF$/);

    await register({ name: "child_waits", tasks: [waitTask("gate")] });
    await register({ name: "parent_child_terminated", tasks: [subTask("sub", { subWorkflowParam: { name: "child_waits" } })] });
    const parentId = await startWorkflow("parent_child_terminated");
    const running = await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    const terminatedId = String(running.tasks[0]!.outputData["subWorkflowId"]);
    await apiOk("DELETE", `/api/workflow/${terminatedId}?reason=operator`);
    const parent = await waitFor(parentId, terminal);
    // Failed, so that it follows the child's own retry (Conductor would end it TERMINATED).
    expect(parent.status).toBe("FAILED");
    expect(parent.tasks[0]!.status).toBe("CANCELED");
    // Conductor's SubWorkflow gives a terminated child's task the same reason as a failed one's.
    expect(parent.tasks[0]!["reasonForIncompletion"]).toBe(`Sub workflow child_waits.1/${terminatedId} failure reason: operator`);
  });

  it("terminating a parent terminates its running child", async () => {
    await register({ name: "child_to_stop", tasks: [waitTask("gate")] });
    await register({ name: "parent_to_stop", tasks: [subTask("sub", { subWorkflowParam: { name: "child_to_stop" } })] });
    const parentId = await startWorkflow("parent_to_stop");
    const running = await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    const childId = String(running.tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("DELETE", `/api/workflow/${parentId}?reason=stop`);
    const child = await waitFor(childId, terminal);
    expect(child.status).toBe("TERMINATED");
    expect(child["reasonForIncompletion"]).toContain(parentId);
    expect((await getWorkflow(parentId)).tasks[0]!.status).toBe("CANCELED");
  });

  it("a termination a child's object refuses at once (overloaded, reset) is tried again before the answer: after a parent's terminate its whole tree is TERMINATED, as after Conductor's", async () => {
    await register({ name: "grandchild_refuses_once", tasks: [waitTask("gate")] });
    await register({ name: "child_of_refusing", tasks: [subTask("leaf", { subWorkflowParam: { name: "grandchild_refuses_once" } })] });
    await register({ name: "top_of_refusing", tasks: [subTask("middle", { subWorkflowParam: { name: "child_of_refusing" } })] });
    const topId = await startWorkflow("top_of_refusing");
    const childId = await firstChildOf(topId);
    const grandchildId = await firstChildOf(childId);
    await waitFor(grandchildId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    // The grandchild's object refuses its first termination, as an overloaded or reset object does (the call throws).
    const { terminateAsChild } = WorkflowExecution.prototype;
    let refused = 0;
    WorkflowExecution.prototype.terminateAsChild = async function (this: WorkflowExecution, parent, reason) {
      if (parent === childId && refused === 0) {
        refused++;
        throw new Error("Durable Object is overloaded. Too many requests queued. (test)");
      }
      return terminateAsChild.call(this, parent, reason);
    };
    try {
      await apiOk("DELETE", `/api/workflow/${topId}?reason=stop`);
    } finally {
      WorkflowExecution.prototype.terminateAsChild = terminateAsChild;
    }
    expect(refused).toBe(1);
    const statuses = await Promise.all([topId, childId, grandchildId].map(async (id) => (await getWorkflow(id)).status));
    expect(statuses).toEqual(["TERMINATED", "TERMINATED", "TERMINATED"]);
  });

  it("completing a SUB_WORKFLOW task from outside while its child runs terminates the child, as canceling the task would", async () => {
    await register({ name: "child_overruled", tasks: [waitTask("gate")] });
    await register({ name: "parent_overrules", tasks: [subTask("sub", { subWorkflowParam: { name: "child_overruled" } })] });
    const parentId = await startWorkflow("parent_overrules");
    const running = await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    const childId = String(running.tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${parentId}/sub/COMPLETED`, { decided: "outside" });
    expect((await waitFor(parentId, terminal)).status).toBe("COMPLETED");
    const child = await waitFor(childId, terminal);
    expect(child.status).toBe("TERMINATED");
    expect(child["reasonForIncompletion"]).toContain(parentId);
  });

  it("a SUB_WORKFLOW canceled in the decision that started it (a TERMINATE in another fork branch) shows no subWorkflowId: its child never started, a 404 to follow", async () => {
    await register({ name: "never_started_child", tasks: [waitTask("gate")] });
    await register({
      name: "terminated_beside_start",
      tasks: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[subTask("sub", { subWorkflowParam: { name: "never_started_child" } })], [{ name: "stop", taskReferenceName: "stop", type: "TERMINATE", inputParameters: { terminationStatus: "COMPLETED" } }]] },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["sub", "stop"] },
      ],
    });
    const parentId = await startWorkflow("terminated_beside_start");
    const parent = await waitFor(parentId, terminal);
    expect(parent.status).toBe("COMPLETED");
    const sub = parent.tasks.find((task) => task.referenceTaskName === "sub")!;
    expect(sub.status).toBe("CANCELED");
    expect(sub["subWorkflowId"]).toBeUndefined();
    expect(sub.outputData["subWorkflowId"]).toBeUndefined();
    expect((await apiOk<JsonObject>("GET", `/api/tasks/${sub.taskId}`))["subWorkflowId"]).toBeUndefined();
  });

  it("a parent terminated while its child's start is still on its way: the child never runs on (refused at start, or terminated)", async () => {
    await register({ name: "child_started_late", tasks: [waitTask("gate")] });
    await register({ name: "parent_stopped_early", tasks: [subTask("sub", { subWorkflowParam: { name: "child_started_late" } })] });
    const definition = (await new DefinitionRepository(env.DB).find("parent_stopped_early"))!;
    const parentId = crypto.randomUUID();
    // On the object itself: the terminate lands while the start's dispatch of the child is in flight.
    await runInDurableObject(executionStub(env, parentId), async (instance) => {
      const parent = instance as unknown as WorkflowExecution;
      const started = parent.start({ workflowId: parentId, definition, input: {} });
      const terminated = parent.command({ type: "terminate", reason: "stop" });
      expect(await started).toEqual({ ok: true, value: parentId });
      expect(await terminated).toEqual({ ok: true, value: null });
    });
    const parent = await waitFor(parentId, terminal);
    expect(parent.status).toBe("TERMINATED");
    // The start was never answered: the task shows no child (it may never have started); the parent let go of the id it chose.
    expect(parent.tasks[0]!["subWorkflowId"]).toBeUndefined();
    const [childId] = await runInDurableObject(executionStub(env, parentId), (_instance, state) => JSON.parse(state.storage.sql.exec<{ value: string }>(`SELECT value FROM meta WHERE key = 'childrenLetGo'`).one().value) as string[]);
    expect(childId).toBeDefined();
    // Whichever reached the child first, the outcome settles once the child's start has arrived: gone, or terminated.
    const settled = await eventually(
      async () => {
        const child = await api("GET", `/api/workflow/${childId}`);
        return child.status === 200 ? ((await child.json()) as { status: string }).status : String(child.status);
      },
      (state) => state !== "RUNNING",
      "the child's start settling",
      10_000,
    );
    expect(["TERMINATED", "404"]).toContain(settled);

    // Which of the two reached the child first is not under the test's control; the late start on its own:
    const lateId = crypto.randomUUID();
    const late = executionStub(env, lateId);
    expect(await late.terminateAsChild(parentId, "stop")).toEqual({ ok: true, value: null });
    const childDefinition = (await new DefinitionRepository(env.DB).find("child_started_late"))!;
    const lateStart = await late.start({ workflowId: lateId, definition: childDefinition, input: {}, parentWorkflowId: parentId, parentWorkflowTaskId: parent.tasks[0]!.taskId });
    expect(lateStart).toMatchObject({ ok: false, error: { kind: "CONFLICT" } });
    expect((await api("GET", `/api/workflow/${lateId}`)).status).toBe(404);
  });

  it("a child start the runtime refuses past the invocation's calls to Cloudflare services (\"Too many API requests by single Worker invocation.\", nothing started) is sent again from the alarm, not at the task's watchdog", async () => {
    await registerEchoChild("child_refused_api");
    await register({ name: "parent_refused_api", tasks: [subTask("sub", { subWorkflowParam: { name: "child_refused_api", version: 1 }, who: "ada" })] });
    // What a deployed object's call to another object throws past its count (fetch() throws "Too many subrequests"
    // instead); workerd counts none: injected once, where the call lands.
    let refused = 0;
    let starts = 0;
    const { start } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.start = async function (this: WorkflowExecution, params: Parameters<WorkflowExecution["start"]>[0]) {
      if (params.definition.name === "child_refused_api") {
        starts++;
        if (refused++ === 0) throw new Error("Too many API requests by single Worker invocation. To configure this limit, refer to https://developers.cloudflare.com/workers/wrangler/configuration/#limits");
      }
      return start.call(this, params);
    };
    let parent: WorkflowJson;
    try {
      // Well within the watchdog (10 s), which sent it again without the fix.
      parent = await waitFor(await startWorkflow("parent_refused_api"), terminal, 5_000);
    } finally {
      WorkflowExecution.prototype.start = start;
    }
    expect(parent.status).toBe("COMPLETED");
    expect(parent.tasks[0]!.outputData).toMatchObject({ who: "ada", n: 1 });
    expect(starts).toBe(2);
  });

  it("a parent evicted while its child runs still learns the result", async () => {
    await register({ name: "child_later", tasks: [waitTask("gate"), httpTask("done", { uri: target("/count/child-later-done"), method: "GET" })], outputParameters: { finished: true } });
    await register({ name: "parent_evicted", tasks: [subTask("sub", { subWorkflowParam: { name: "child_later" } }), httpTask("after", { uri: target("/count/parent-evicted-after"), method: "GET" })] });
    const parentId = await startWorkflow("parent_evicted");
    const running = await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    const childId = String(running.tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await abortAllDurableObjects();
    // Complete the child without touching the parent: only the child's notice can wake it.
    await apiOk("POST", `/api/tasks/${childId}/gate/COMPLETED`, {});
    expect(await eventually(() => hits("parent-evicted-after"), (count) => count > 0, "the parent's next task after the child's notice", 10_000)).toBe(1);
    const parent = await waitFor(parentId, terminal);
    expect(parent.status).toBe("COMPLETED");
    expect(parent.tasks[0]!.outputData).toEqual({ subWorkflowId: childId, finished: true });
  });

  it("a child terminated with every object evicted right after tells its parent within a few seconds, with no other request: the alarm comes back sooner while a parent's notice is owed", async () => {
    await register({ name: "child_cut_short", tasks: [waitTask("gate")] });
    await register({ name: "parent_of_cut_short", tasks: [subTask("sub", { subWorkflowParam: { name: "child_cut_short" } })] });
    const parentId = await startWorkflow("parent_of_cut_short");
    const running = await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    const childId = String(running.tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    expect((await api("DELETE", `/api/workflow/${childId}?reason=enough`)).status).toBe(200);
    await abortAllDurableObjects();
    // Only the child's alarm can re-send the notice the eviction killed; bounded below the general safety alarm (5 s),
    // which once held the parent up that long. The search row is read: a GET of the parent would wake it.
    await waitForIndexRow(parentId, "FAILED", 3_000);
    const parent = await waitFor(parentId, terminal);
    expect([parent.status, parent.tasks[0]!.status]).toEqual(["FAILED", "CANCELED"]);
  });

  it("a child removed while its notice to the parent is on its way leaves nothing stored behind (the removal waits for the notice)", async () => {
    await register({ name: "child_removed_early", tasks: [waitTask("gate")] });
    await register({ name: "parent_of_removed", tasks: [subTask("sub", { subWorkflowParam: { name: "child_removed_early" } })] });
    const parentId = await startWorkflow("parent_of_removed");
    const running = await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    const childId = String(running.tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    // The parent holds this child's notice until the child is removed: the notice job finishes after the removal.
    const notice = gate();
    const { childFinished } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.childFinished = async function (this: WorkflowExecution, finished) {
      if (finished.subWorkflowId === childId) {
        notice.hit();
        await notice.released;
      }
      return childFinished.call(this, finished);
    };
    try {
      await apiOk("POST", `/api/tasks/${childId}/gate/COMPLETED`, {});
      await notice.reached;
      // The removal delivers the owed notice first: it waits for the one on its way.
      const removal = apiOk("DELETE", `/api/workflow/${childId}/remove`);
      notice.release();
      await removal;
      expect((await waitFor(parentId, terminal)).status).toBe("COMPLETED");
    } finally {
      WorkflowExecution.prototype.childFinished = childFinished;
      notice.release();
    }
    // The notice job has recorded its delivery (or not) by now; a removed object keeps only its tombstone.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await storedByExecutionObject(childId)).toEqual({ executionRows: 0, metaKeys: ["removed"] });
    expect((await api("GET", `/api/workflow/${childId}`)).status).toBe(404);
  });

  it("the execute endpoint waits through children (and theirs) that finish on their own, answering the finished parent", async () => {
    await registerEchoChild("exec_grandchild");
    await register({ name: "exec_child", tasks: [subTask("inner", { subWorkflowParam: { name: "exec_grandchild" }, who: "${workflow.input.who}" })], outputParameters: { who: "${inner.output.who}" } });
    await register({
      name: "exec_parent",
      tasks: [subTask("outer", { subWorkflowParam: { name: "exec_child" }, who: "${workflow.input.who}" }), httpTask("after", { uri: target("/echo/exec-parent-after"), method: "GET" })],
      outputParameters: { who: "${outer.output.who}" },
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/exec_parent/1?waitForSeconds=10", { input: { who: "ada" } });
    expect(run.status).toBe("COMPLETED");
    expect(run.output).toEqual({ who: "ada" });
    expect(run.tasks.map((task) => task.status)).toEqual(["COMPLETED", "COMPLETED"]);
  });

  it("the execute endpoint answers 404 (not a 500) when the execution it waited for was removed meanwhile", async () => {
    await registerEchoChild("exec_removed_child");
    await register({ name: "exec_removed_parent", tasks: [subTask("outer", { subWorkflowParam: { name: "exec_removed_child" } })] });
    // The child's settle answers only once its parent has finished and been removed.
    const { settle } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.settle = async function (this: WorkflowExecution, waitMs) {
      const answer = await settle.call(this, waitMs);
      const view = JSON.parse((await this.getWorkflowJson(false)) ?? "{}") as { workflowName?: string; parentWorkflowId?: string };
      if (view.workflowName === "exec_removed_child" && view.parentWorkflowId !== undefined) {
        const parent = executionStub(env, view.parentWorkflowId);
        await eventually(() => parent.getWorkflowJson(false), (json) => json?.includes('"status":"COMPLETED"') === true, "the parent completing");
        expect(await parent.remove()).toEqual({ ok: true, value: null });
      }
      return answer;
    };
    let response: Response;
    try {
      response = await api("POST", "/api/workflow/execute/exec_removed_parent/1?waitForSeconds=10", { input: {} });
    } finally {
      WorkflowExecution.prototype.settle = settle;
    }
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ status: 404, error: "NOT_FOUND" });
  });

  it("the execute endpoint answers as soon as a child waits on the outside (not after waitForSeconds)", { timeout: 20_000 }, async () => {
    await register({ name: "exec_blocked_child", tasks: [waitTask("gate")] });
    await register({ name: "exec_blocked_parent", tasks: [subTask("outer", { subWorkflowParam: { name: "exec_blocked_child" } })] });
    // Waiting out the 60 s would overrun this test's own timeout: the answer must come once the child blocks.
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/exec_blocked_parent/1?waitForSeconds=60", { input: {} });
    expect(run.status).toBe("RUNNING");
    const childId = String(run.tasks[0]!.outputData["subWorkflowId"]);
    expect((await getWorkflow(childId)).tasks[0]!.status).toBe("IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/gate/COMPLETED`, {});
    expect((await waitFor(run.workflowId, terminal)).status).toBe("COMPLETED");
  });

  it("a workflow that calls itself stops at the nesting limit with a clear error", async () => {
    await register({ name: "recursive", tasks: [subTask("again", { subWorkflowParam: { name: "recursive" } })] });
    const rootId = await startWorkflow("recursive");
    const root = await waitFor(rootId, terminal, 10_000);
    expect(root.status).toBe("FAILED");
    // Walk down to the deepest execution: its task could not start a child.
    let current: WorkflowJson = root;
    let depth = 0;
    while (current.tasks[0]?.outputData["subWorkflowId"] !== undefined && depth < 20) {
      current = await getWorkflow(String(current.tasks[0]!.outputData["subWorkflowId"]));
      depth++;
    }
    expect(depth).toBe(10);
    expect(current.tasks[0]!.outputData).toMatchObject({ error: "SUB_WORKFLOW_ERROR", details: { errorCode: "NESTING_TOO_DEEP" } });
    expect(String(current.tasks[0]!.outputData["message"])).toContain("MAX_SUBWORKFLOW_DEPTH");
  });
});

/** The children a fork of {@link countedFork} starts, as `counted_child`'s object receives them. */
interface ChildStarts {
  /** Ids of the children started, each once however often its start came. */
  children: Set<string>;
  /** Starts received in all, repeats included. */
  starts: number;
  /**
   * Starts received before the parent's first alarm began (all of them when it had none). A child receives its start a
   * little after the parent sent it, so a share's last starts may arrive after the alarm that begins the next share: this
   * count can only come out lower than what the first share sent, never higher, whatever the timing.
   */
  firstShare: number | undefined;
  /** The parent's first alarm, held by `hold`, has returned. */
  heldAlarmDone: boolean;
}

/**
 * Registers `counted_children`, a dynamic fork of one `counted_child` (a NOOP) per item of its input's `items`, and runs
 * `run` counting the children's starts between two of the parent's alarms: Cloudflare counts an invocation's calls to D1
 * and other objects (D1's 50 queries on Workers Free), workerd none. `hold`, when given, is awaited in the parent's
 * first alarm before it does anything (a test stages an eviction or a cancel there); when it answers `"evicted"`, that
 * alarm ends there, as the object it came to is gone.
 */
async function countedFork(run: (counts: ChildStarts) => Promise<void>, hold?: () => Promise<"evicted" | void>): Promise<ChildStarts> {
  await register({ name: "counted_child", tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP" }], outputParameters: { n: "${workflow.input.n}" } });
  await register({
    name: "counted_children",
    tasks: [
      { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskWorkflow: "counted_child", forkTaskWorkflowVersion: "1", forkTaskInputs: "${workflow.input.items}" } },
      { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
    ],
  });
  const counts: ChildStarts = { children: new Set(), starts: 0, firstShare: undefined, heldAlarmDone: false };
  let parentObject: DurableObjectId | undefined;
  let held = hold === undefined;
  const { start, alarm } = WorkflowExecution.prototype;
  WorkflowExecution.prototype.start = async function (this: WorkflowExecution, params: Parameters<WorkflowExecution["start"]>[0]) {
    if (params.definition.name === "counted_child" && params.parentWorkflowId !== undefined) {
      parentObject ??= env.WORKFLOW_EXECUTION.idFromName(params.parentWorkflowId);
      counts.children.add(params.workflowId);
      counts.starts++;
    }
    return start.call(this, params);
  };
  WorkflowExecution.prototype.alarm = async function (this: WorkflowExecution) {
    if (parentObject !== undefined && (this as unknown as { ctx: DurableObjectState }).ctx.id.equals(parentObject)) {
      counts.firstShare ??= counts.starts;
      if (!held) {
        held = true;
        if ((await hold!()) === "evicted") return;
        await alarm.call(this);
        counts.heldAlarmDone = true;
        return;
      }
    }
    return alarm.call(this);
  };
  try {
    await run(counts);
  } finally {
    WorkflowExecution.prototype.start = start;
    WorkflowExecution.prototype.alarm = alarm;
  }
  return counts;
}

/** `count` items for `counted_children`. */
const countedItems = (count: number): JsonObject => ({ items: Array.from({ length: count }, (_, n) => ({ n })) });

describe("child starts within Cloudflare's calls per invocation", () => {
  it("a dynamic fork of 30 children starts at most 20 between two of the parent's alarms (CHILD_STARTS_PER_INVOCATION, 20), the rest from the alarm, and the parent completes", async () => {
    let parent: WorkflowJson | undefined;
    const counts = await countedFork(async () => {
      parent = await waitFor(await startWorkflow("counted_children", countedItems(30)), terminal, 15_000);
    });
    expect(parent!.status, String(parent!["reasonForIncompletion"])).toBe("COMPLETED");
    expect(parent!.tasks.filter((task) => task["taskType"] === "SUB_WORKFLOW" && task.status === "COMPLETED")).toHaveLength(30);
    expect(counts.children.size).toBe(30);
    // The last 10 waited for an alarm: one came (with all 30 sent at once, none need have, and the count is all 30).
    const seen = JSON.stringify({ firstShare: counts.firstShare, starts: counts.starts, children: counts.children.size });
    expect(counts.firstShare, seen).toBeDefined();
    // Starts are sent without waiting for them, so under load the alarm may begin before any of the first share has
    // reached its child (a loaded run saw a failure when this asked for at least one): the count is at most the share.
    expect(counts.firstShare ?? counts.starts, seen).toBeLessThanOrEqual(20);
  });

  it("the starts left for the alarm survive an eviction before the alarm: the fresh object starts them, and each child runs once", async () => {
    const alarmCame = gate();
    let parent: WorkflowJson | undefined;
    let before = 0;
    const counts = await countedFork(
      async (live) => {
        const parentId = await startWorkflow("counted_children", countedItems(30));
        await alarmCame.reached;
        // The first 20 starts may still be on their way when the alarm, armed for now, comes.
        before = await eventually(async () => live.children.size, (size) => size >= 20, "the first starts", 5_000);
        await abortAllDurableObjects();
        alarmCame.release();
        parent = await waitFor(parentId, terminal, 15_000);
      },
      async () => {
        alarmCame.hit();
        await alarmCame.released;
        // The object was reset under it: this alarm does nothing more (a throw would log an uncaught exception).
        return "evicted";
      },
    );
    expect(before).toBe(20);
    expect(parent!.status, String(parent!["reasonForIncompletion"])).toBe("COMPLETED");
    expect(parent!.tasks.filter((task) => task["taskType"] === "SUB_WORKFLOW" && task.status === "COMPLETED")).toHaveLength(30);
    expect(new Set(parent!.tasks.flatMap((task) => (task["taskType"] === "SUB_WORKFLOW" ? [String(task.outputData["subWorkflowId"])] : [])))).toEqual(counts.children);
    expect(counts.children.size).toBe(30);
  });

  it("a parent terminated while starts wait for the alarm starts none of them", async () => {
    const alarmCame = gate();
    let parent: WorkflowJson | undefined;
    let before = 0;
    const counts = await countedFork(
      async (live) => {
        const parentId = await startWorkflow("counted_children", countedItems(30));
        await alarmCame.reached;
        before = await eventually(async () => live.starts, (starts) => starts >= 20, "the first starts", 5_000);
        // The held alarm is let go once the termination is stored, not once the DELETE answers: that answer waits for
        // the children's terminations too (up to 3 s; here the 10 ids chosen for the starts left, which keep
        // tombstones), 0.2-3.8 s under load, all of it inside the gate's 10 s bound on the held alarm.
        const terminated = apiOk("DELETE", `/api/workflow/${parentId}?reason=stop`).then(() => undefined, (error: unknown) => error);
        parent = await waitFor(parentId, terminal, 15_000);
        alarmCame.release();
        expect(await terminated).toBeUndefined();
        // The alarm that would have started the 10 left has run.
        await eventually(async () => live.heldAlarmDone, (done) => done, "the parent's held alarm", 5_000);
      },
      async () => {
        alarmCame.hit();
        await alarmCame.released;
      },
    );
    expect(before).toBe(20);
    expect(parent!.status).toBe("TERMINATED");
    expect(counts.starts).toBe(20);
    // The 10 the held alarm would have started: canceled with the parent, never started.
    expect(parent!.tasks.filter((task) => task["taskType"] === "SUB_WORKFLOW" && task.outputData["subWorkflowId"] === undefined).map((task) => task.status)).toEqual(Array(10).fill("CANCELED"));
  });
});

describe("idempotent starts", () => {
  it("concurrent identical API starts with RETURN_EXISTING create exactly one execution and all get its id; FAIL refuses", async () => {
    await register({ name: "idem", tasks: [waitTask("gate")] });
    const body = { name: "idem", input: { n: 1 }, idempotencyKey: "order-1", idempotencyStrategy: "RETURN_EXISTING" };
    const ids = await Promise.all(Array.from({ length: 8 }, () => apiOk<string>("POST", "/api/workflow", body)));
    expect(new Set(ids).size).toBe(1);
    const rows = await env.DB.prepare("SELECT workflow_id FROM idempotency_keys WHERE idempotency_key = 'order-1'").all();
    expect(rows.results).toEqual([{ workflow_id: ids[0] }]);
    const refused = await api("POST", "/api/workflow", { ...body, idempotencyStrategy: "FAIL" });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ status: 409, error: "CONFLICT" });
    // Another key, or another workflow name with the same key, starts another execution.
    await register({ name: "idem_other", tasks: [waitTask("gate")] });
    expect(await apiOk<string>("POST", "/api/workflow", { ...body, idempotencyKey: "order-2" })).not.toBe(ids[0]);
    expect(await apiOk<string>("POST", "/api/workflow", { ...body, name: "idem_other" })).not.toBe(ids[0]);
  });

  it("an idempotencyKey resolving to a number (an order id) still de-duplicates the child; one resolving to an object fails the task with INVALID_PARAMETERS", async () => {
    await register({ name: "num_key_child", tasks: [waitTask("gate")] });
    await register({ name: "num_key_parent", tasks: [subTask("sub", { subWorkflowParam: { name: "num_key_child", idempotencyKey: "${workflow.input.orderId}", idempotencyStrategy: "RETURN_EXISTING" } })] });
    const childOf = async (id: string) => String((await waitFor(id, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    const first = await childOf(await startWorkflow("num_key_parent", { orderId: 42 }));
    expect(await childOf(await startWorkflow("num_key_parent", { orderId: 42 }))).toBe(first);
    expect(await childOf(await startWorkflow("num_key_parent", { orderId: 43 }))).not.toBe(first);
    // The number's text is the key: a string "42" names the same child.
    expect(await childOf(await startWorkflow("num_key_parent", { orderId: "42" }))).toBe(first);
    // Longer than a start may carry (as through the API): the task fails saying so, and no child starts.
    const overlong = await waitFor(await startWorkflow("num_key_parent", { orderId: "9".repeat(513) }), terminal);
    expect(overlong.status).toBe("FAILED");
    expect(overlong.tasks[0]!.outputData).toMatchObject({ error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: null, errorCode: "INVALID_PARAMETERS" } });
    expect(overlong.tasks[0]!["reasonForIncompletion"]).toContain("at most 512");
    const parent = await waitFor(await startWorkflow("num_key_parent", { orderId: { id: 42 } }), terminal);
    expect(parent.status).toBe("FAILED");
    expect(parent.tasks[0]!.outputData).toMatchObject({ error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: null, errorCode: "INVALID_PARAMETERS" } });
    expect(parent.tasks[0]!["reasonForIncompletion"]).toContain("subWorkflowParam.idempotencyKey resolved to an object");
    // An integer past 2^53 has lost digits on its way in (…890 and …891 would be one key, one order's child returned
    // for another): refused as the API refuses it, the task failing as for any other key that is none.
    const rounded = await waitFor(await startWorkflow("num_key_parent", { orderId: 12345678901234567890 }), terminal);
    expect(rounded.status).toBe("FAILED");
    expect(rounded.tasks[0]!.outputData).toMatchObject({ error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: null, errorCode: "INVALID_PARAMETERS" } });
    expect(rounded.tasks[0]!["reasonForIncompletion"]).toContain("subWorkflowParam.idempotencyKey resolved to an integer beyond 2^53");
  });

  it("registers a literal idempotencyKey written as a number, as Jackson reads SubWorkflowParams' String field, and keys the child by its text", async () => {
    await register({ name: "lit_key_child", tasks: [waitTask("gate")] });
    await register({ name: "lit_key_parent", tasks: [subTask("sub", { subWorkflowParam: { name: "lit_key_child", idempotencyKey: 4242, idempotencyStrategy: "RETURN_EXISTING" } })] });
    // Beside the task's inputParameters, where Conductor's SubWorkflowParams types the key as a String.
    await register({ name: "lit_key_task", tasks: [subTask("sub", {}, { subWorkflowParam: { name: "lit_key_child", idempotencyKey: 4242, idempotencyStrategy: "RETURN_EXISTING" } })] });
    const childOf = async (id: string) => String((await waitFor(id, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    const first = await childOf(await startWorkflow("lit_key_parent"));
    expect(await childOf(await startWorkflow("lit_key_parent"))).toBe(first);
    expect(await childOf(await startWorkflow("lit_key_task"))).toBe(first);
    expect((await getWorkflow(first))["idempotencyKey"]).toBe("4242");
  });

  it("FAIL_ON_RUNNING refuses a second child while the first runs; a strategy without a key takes the parent's key (Orkes')", async () => {
    await register({ name: "for_child", tasks: [waitTask("gate")] });
    const inherits = subTask("sub", { subWorkflowParam: { name: "for_child", idempotencyStrategy: "FAIL_ON_RUNNING" } });
    await register({ name: "for_parent", tasks: [inherits] });
    const first = await apiOk<string>("POST", "/api/workflow", { name: "for_parent", idempotencyKey: "order-7" });
    const child = String((await waitFor(first, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    expect((await getWorkflow(child))["idempotencyKey"]).toBe("order-7");
    // Another parent with that key (a parent of another name): its child would be a second one running.
    await register({ name: "for_parent_2", tasks: [inherits] });
    const second = await waitFor(await apiOk<string>("POST", "/api/workflow", { name: "for_parent_2", idempotencyKey: "order-7" }), terminal);
    expect(second.status).toBe("FAILED");
    expect(second.tasks[0]!.outputData).toMatchObject({ error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: null, errorCode: "ALREADY_STARTED" } });
    // Once the first child ended, the key starts a new one.
    await apiOk("POST", `/api/tasks/${child}/gate/COMPLETED`, {});
    await waitFor(child, terminal);
    await register({ name: "for_parent_3", tasks: [inherits] });
    const third = await waitFor(await apiOk<string>("POST", "/api/workflow", { name: "for_parent_3", idempotencyKey: "order-7" }), (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    expect(third.tasks[0]!.outputData["subWorkflowId"]).not.toBe(child);
    expect(third.status).toBe("RUNNING");
    // Without a strategy nothing is inherited.
    await register({ name: "for_plain", tasks: [subTask("sub", { subWorkflowParam: { name: "for_child" } })] });
    const plain = await waitFor(await apiOk<string>("POST", "/api/workflow", { name: "for_plain", idempotencyKey: "order-9" }), (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    expect((await getWorkflow(String(plain.tasks[0]!.outputData["subWorkflowId"])))["idempotencyKey"]).toBeUndefined();
  });

  it("SUB_WORKFLOW with RETURN_EXISTING: two parents share one child and both learn its result", async () => {
    await register({ name: "shared_child", tasks: [waitTask("gate")], outputParameters: { done: true } });
    await register({ name: "sharing_parent", tasks: [subTask("sub", { subWorkflowParam: { name: "shared_child", idempotencyKey: "${workflow.input.key}", idempotencyStrategy: "RETURN_EXISTING" } })] });
    const [first, second] = await Promise.all([startWorkflow("sharing_parent", { key: "k1" }), startWorkflow("sharing_parent", { key: "k1" })]);
    const waiting = async (id: string) => String((await waitFor(id, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    const childA = await waiting(first!);
    const childB = await waiting(second!);
    expect(childA).toBe(childB);
    await waitFor(childA, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childA}/gate/COMPLETED`, {});
    for (const id of [first!, second!]) {
      const parent = await waitFor(id, terminal, 6_000);
      expect(parent.status).toBe("COMPLETED");
      expect(parent.tasks[0]!.outputData).toEqual({ subWorkflowId: childA, done: true });
    }
  });
});

describe("a finished child joined by its key", () => {
  it("keeps an alarm while it owes the joining parent its notice: the notice survives an eviction before it is sent", async () => {
    await register({ name: "late_joined_child", tasks: [{ name: "mark", taskReferenceName: "mark", type: "SET_VARIABLE", inputParameters: { done: true } }] });
    const childId = await apiOk<string>("POST", "/api/workflow", { name: "late_joined_child", idempotencyKey: "late-1", idempotencyStrategy: "RETURN_EXISTING" });
    await waitFor(childId, ["COMPLETED"]);
    await waitForIndexRow(childId, "COMPLETED");
    const alarm = () => runInDurableObject(executionStub(env, childId), (_instance, state) => state.storage.getAlarm());
    await eventually(alarm, (at) => at === null, "the finished child's alarm gone");
    const definition = await new DefinitionRepository(env.DB).get("late_joined_child");
    // A parent's dispatch joining the finished child (its RETURN_EXISTING key): the child owes it a notice from now on.
    const joined = await runInDurableObject(executionStub(env, childId), async (instance, state) => {
      const result = await (instance as unknown as WorkflowExecution).start({ workflowId: childId, definition, input: {}, idempotencyKey: "late-1", parentWorkflowId: crypto.randomUUID(), parentWorkflowTaskId: crypto.randomUUID() });
      return { result, alarmAt: await state.storage.getAlarm() };
    });
    expect(joined.result).toEqual({ ok: true, value: childId });
    // Set in the start's own turn: an object evicted before its notice job ran is woken to send it again.
    expect(joined.alarmAt).not.toBeNull();
  });
});

describe("actions across three levels (a DO_WHILE around the middle, a FORK_JOIN of two children in it)", () => {
  /** Registers the tree under `key` (each level with failure workflow `<key>_fw`), starts it and waits for both grandchildren to wait. */
  async function startTree(key: string): Promise<{ top: string; middle: string; left: string; right: string }> {
    await register({ name: `${key}_fw`, tasks: [{ name: "noop", taskReferenceName: "noop", type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression: "1" } }] });
    await register({ name: `${key}_leaf`, failureWorkflow: `${key}_fw`, tasks: [waitTask("gate")] });
    await register({
      name: `${key}_middle`,
      failureWorkflow: `${key}_fw`,
      tasks: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[subTask("left", { subWorkflowParam: { name: `${key}_leaf` } })], [subTask("right", { subWorkflowParam: { name: `${key}_leaf` } })]] },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["left", "right"] },
      ],
    });
    await register({
      name: key,
      failureWorkflow: `${key}_fw`,
      tasks: [{ name: "loop", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "false", loopOver: [subTask("middle", { subWorkflowParam: { name: `${key}_middle` } })] }],
    });
    const top = await startWorkflow(key);
    const childOf = async (workflowId: string, ref: string) => {
      const found = (workflow: WorkflowJson) => workflow.tasks.find((task) => task.referenceTaskName.startsWith(ref) && task.outputData["subWorkflowId"] !== undefined);
      return String(found(await waitFor(workflowId, (workflow) => found(workflow) !== undefined))!.outputData["subWorkflowId"]);
    };
    const middle = await childOf(top, "middle");
    const [left, right] = [await childOf(middle, "left"), await childOf(middle, "right")];
    for (const leaf of [left, right]) await waitFor(leaf, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    return { top, middle, left, right };
  }

  /** Each execution's status, as GET shows it and as its search row does (once written). */
  async function statusesOf(ids: string[]): Promise<string[]> {
    const statuses = await Promise.all(ids.map(async (id) => (await getWorkflow(id)).status));
    for (const [index, id] of ids.entries()) await waitForIndexRow(id, statuses[index]!);
    return statuses;
  }

  it("a pause or resume stays at its level (as Conductor's pauseWorkflow); a grandchild terminated fails its parent and the top, each starting its own failure workflow once, the other grandchild terminated without its own", async () => {
    const { top, middle, left, right } = await startTree("tree_cascade");
    await apiOk("PUT", `/api/workflow/${middle}/pause`);
    expect(await statusesOf([top, middle, left, right])).toEqual(["RUNNING", "PAUSED", "RUNNING", "RUNNING"]);
    await apiOk("PUT", `/api/workflow/${middle}/resume`);
    expect(await statusesOf([top, middle, left, right])).toEqual(["RUNNING", "RUNNING", "RUNNING", "RUNNING"]);

    await apiOk("DELETE", `/api/workflow/${left}?reason=operator`);
    await waitFor(top, terminal);
    expect(await statusesOf([top, middle, left, right])).toEqual(["FAILED", "FAILED", "TERMINATED", "TERMINATED"]);
    const [topRun, middleRun, leftRun, rightRun] = await Promise.all([top, middle, left, right].map(getWorkflow));
    expect(rightRun!["reasonForIncompletion"]).toContain(`Parent workflow ${middle} ended FAILED`);
    // A failure workflow for each level that failed, none for a termination (the API's, or a parent's of its child).
    const started = [topRun, middleRun, leftRun, rightRun].map((run) => run!.output[FAILURE_WORKFLOW_OUTPUT_KEY]);
    expect(started.map((id) => typeof id)).toEqual(["string", "string", "undefined", "undefined"]);
    for (const [index, failed] of [top, middle].entries()) {
      const handler = await waitFor(String(started[index]), terminal);
      expect(handler.input).toMatchObject({ workflowId: failed, failureStatus: "FAILED", reason: expect.stringContaining("failure reason: operator") });
    }
    const handlers = async () => (await apiOk<{ results: Array<{ workflowId: string }> }>("GET", "/api/workflow/search?workflowName=tree_cascade_fw&size=10")).results.map((row) => row.workflowId).sort();
    expect(await eventually(handlers, (ids) => ids.length >= 2, "both failure workflows in search")).toEqual([started[0], started[1]].sort());
  });
});

describe("rerun and retry across levels", () => {
  /** root → mid → leaf, each a SUB_WORKFLOW followed by an HTTP step counted on the target. */
  async function registerThreeLevels(prefix: string) {
    await register({ name: `${prefix}_leaf`, tasks: [httpTask("leaf_a", { uri: target(`/count/${prefix}-leaf-a`), method: "GET" }), httpTask("leaf_b", { uri: target(`/flaky/${prefix}-leaf-b?fail=1`), method: "GET" })] });
    await register({ name: `${prefix}_mid`, tasks: [subTask("to_leaf", { subWorkflowParam: { name: `${prefix}_leaf` } }), httpTask("mid_after", { uri: target(`/count/${prefix}-mid-after`), method: "GET" })] });
    await register({ name: `${prefix}_root`, tasks: [httpTask("root_first", { uri: target(`/count/${prefix}-root-first`), method: "GET" }), subTask("to_mid", { subWorkflowParam: { name: `${prefix}_mid` } }), httpTask("root_after", { uri: target(`/count/${prefix}-root-after`), method: "GET" })] });
  }
  const childOf = async (workflow: WorkflowJson, ref: string) => getWorkflow(String(workflow.tasks.find((task) => task.referenceTaskName === ref)!["subWorkflowId"]));

  it("rerun from a task two levels deep reruns the leaf in place and every parent waits for it again", async () => {
    await registerThreeLevels("deep");
    const rootId = await startWorkflow("deep_root");
    const failed = await waitFor(rootId, terminal);
    expect(failed.status).toBe("FAILED");
    const mid = await childOf(failed, "to_mid");
    const leaf = await childOf(mid, "to_leaf");
    expect(leaf.status).toBe("FAILED");
    const failedLeafTask = leaf.tasks.find((task) => task.referenceTaskName === "leaf_b")!;

    const answer = await apiOk<string>("POST", `/api/workflow/${rootId}/rerun`, { reRunFromTaskId: failedLeafTask.taskId });
    expect(answer).toBe(rootId);
    const done = await waitFor(rootId, (workflow) => workflow.status === "COMPLETED", 6_000);
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["root_first", "COMPLETED"], ["to_mid", "COMPLETED"], ["root_after", "COMPLETED"]]);
    // The same children, rerun in place; earlier steps kept.
    expect(done.tasks[1]!["subWorkflowId"]).toBe(mid.workflowId);
    expect((await getWorkflow(mid.workflowId)).tasks[0]!["subWorkflowId"]).toBe(leaf.workflowId);
    expect((await getWorkflow(leaf.workflowId)).status).toBe("COMPLETED");
    expect(await hits("deep-root-first")).toBe(1);
    expect(await hits("deep-leaf-a")).toBe(1);
    expect(await hits("deep-leaf-b")).toBe(2);
  });

  it("rerun from a child's task with workflowInput and correlationId gives them to the workflow rerun, not to its child (as Conductor)", async () => {
    await register({ name: "rerun_input_leaf", tasks: [httpTask("leaf_step", { uri: target("/flaky/rerun-input-leaf?fail=1"), method: "GET" })] });
    await register({
      name: "rerun_input_root",
      tasks: [subTask("to_leaf", { subWorkflowParam: { name: "rerun_input_leaf" } })],
      outputParameters: { v: "${workflow.input.v}" },
    });
    const rootId = await startWorkflow("rerun_input_root", { v: 1 });
    const failed = await waitFor(rootId, terminal);
    expect(failed.status).toBe("FAILED");
    const leaf = await childOf(failed, "to_leaf");
    const leafTask = leaf.tasks.find((task) => task.referenceTaskName === "leaf_step")!;

    await apiOk<string>("POST", `/api/workflow/${rootId}/rerun`, { reRunFromTaskId: leafTask.taskId, workflowInput: { v: 2 }, correlationId: "rerun-corr" });
    const done = await waitFor(rootId, terminal, 6_000);
    expect(done).toMatchObject({ status: "COMPLETED", input: { v: 2 }, correlationId: "rerun-corr", output: { v: 2 } });
    const leafAfter = await getWorkflow(leaf.workflowId);
    expect(leafAfter.status).toBe("COMPLETED");
    expect(leafAfter.input).toEqual(leaf.input);
    expect(leafAfter["correlationId"]).toBe(leaf["correlationId"]);
  });

  it("rerun from a SUB_WORKFLOW task starts a fresh child; rerun from a parent task keeps earlier outputs", async () => {
    await registerThreeLevels("fresh");
    const rootId = await startWorkflow("fresh_root");
    const failed = await waitFor(rootId, terminal);
    const toMid = failed.tasks.find((task) => task.referenceTaskName === "to_mid")!;
    await apiOk("POST", `/api/workflow/${rootId}/rerun`, { reRunFromTaskId: toMid.taskId });
    const done = await waitFor(rootId, (workflow) => workflow.status === "COMPLETED", 6_000);
    expect(done.tasks[1]!["subWorkflowId"]).not.toBe(toMid["subWorkflowId"]);
    expect(done.tasks[1]!.taskId).toBe(toMid.taskId);
    expect(await hits("fresh-leaf-a")).toBe(2);

    await apiOk("POST", `/api/workflow/${rootId}/rerun`, { reRunFromTaskId: done.tasks[2]!.taskId });
    const again = await waitFor(rootId, (workflow) => workflow.status === "COMPLETED" && (workflow.tasks[2]!.outputData["body"] as JsonObject)["n"] === 2, 6_000);
    expect(again.tasks[0]).toEqual(done.tasks[0]);
    expect(again.tasks[1]).toEqual(done.tasks[1]);
  });

  it("a rerun's taskInput for a SUB_WORKFLOW task (or a jump's input) is its fresh child's input: the child is still the one its step names", async () => {
    await registerEchoChild("given_input_child");
    await register({ name: "given_input_beside", tasks: [subTask("sub", { who: "${workflow.input.who}" }, { subWorkflowParam: { name: "given_input_child", priority: 4 } })] });
    await register({ name: "given_input_inside", tasks: [subTask("sub", { subWorkflowParam: { name: "${workflow.input.child}" }, who: "${workflow.input.who}" })] });
    for (const name of ["given_input_beside", "given_input_inside"]) {
      const parentId = await startWorkflow(name, { who: "ada", child: "given_input_child" });
      const first = await waitFor(parentId, terminal);
      expect(first.status, String(first.reasonForIncompletion)).toBe("COMPLETED");
      await apiOk("POST", `/api/workflow/${parentId}/rerun`, { reRunFromTaskId: first.tasks[0]!.taskId, taskInput: { who: "bob" } });
      const rerun = await waitFor(parentId, (workflow) => terminal.includes(workflow.status) && workflow.tasks[0]!["subWorkflowId"] !== first.tasks[0]!["subWorkflowId"]);
      expect(rerun.status, String(rerun.reasonForIncompletion)).toBe("COMPLETED");
      expect(rerun.tasks[0]!.inputData).toMatchObject({ who: "bob", subWorkflowName: "given_input_child", subWorkflowVersion: 1 });
      expect(rerun.tasks[0]!.outputData).toMatchObject({ who: "bob", tag: "v1" });
      const child = await getWorkflow(String(rerun.tasks[0]!["subWorkflowId"]));
      expect(child.input).toEqual({ who: "bob" });
      if (name === "given_input_beside") expect(child["priority"]).toBe(4);
    }

    // A jump's input likewise, to a SUB_WORKFLOW task not reached yet.
    await register({ name: "given_input_jump", tasks: [{ name: "gate", taskReferenceName: "gate", type: "WAIT", inputParameters: {} }, subTask("sub", { subWorkflowParam: { name: "given_input_child" }, who: "${workflow.input.who}" })] });
    const jumpedId = await startWorkflow("given_input_jump", { who: "ada" });
    await waitFor(jumpedId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/workflow/${jumpedId}/jump/sub`, { who: "eve" });
    const jumped = await waitFor(jumpedId, terminal);
    expect(jumped.status, String(jumped.reasonForIncompletion)).toBe("COMPLETED");
    expect((await getWorkflow(String(jumped.tasks[1]!["subWorkflowId"]))).input).toEqual({ who: "eve" });
  });

  it("retry with resumeSubworkflowTasks retries inside the failed child instead of starting a new one", async () => {
    await registerThreeLevels("resume");
    const rootId = await startWorkflow("resume_root");
    const failed = await waitFor(rootId, terminal);
    const mid = await childOf(failed, "to_mid");
    await apiOk("POST", `/api/workflow/${rootId}/retry?resumeSubworkflowTasks=true`, undefined, 204);
    const done = await waitFor(rootId, (workflow) => workflow.status === "COMPLETED", 6_000);
    expect(done.tasks.filter((task) => task.referenceTaskName === "to_mid")).toHaveLength(1);
    expect(done.tasks[1]!["subWorkflowId"]).toBe(mid.workflowId);
    expect(await hits("resume-leaf-a")).toBe(1);
    expect(await hits("resume-leaf-b")).toBe(2);
    // The middle workflow, reopened for its retried child, shows when, as Conductor's updateAndPushParents sets it.
    expect((await getWorkflow(mid.workflowId))["lastRetriedTime"]).toBeGreaterThan(mid["endTime"] as number);
  });

  it("retry with resumeSubworkflowTasks after the failed child was removed retries the SUB_WORKFLOW task with a new child, as Conductor does when there is no failed child to resume", async () => {
    await register({ name: "removed_child", tasks: [httpTask("flaky", { uri: target("/flaky/removed-child?fail=1"), method: "GET" })] });
    await register({ name: "parent_of_removed_child", tasks: [subTask("to_child", { subWorkflowParam: { name: "removed_child" } })] });
    const parentId = await startWorkflow("parent_of_removed_child");
    const failed = await waitFor(parentId, terminal);
    expect(failed.status).toBe("FAILED");
    const removedChildId = String(failed.tasks[0]!["subWorkflowId"]);
    await apiOk("DELETE", `/api/workflow/${removedChildId}/remove`);

    await apiOk("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`, undefined, 204);
    const done = await waitFor(parentId, terminal, 5_000);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["to_child", "FAILED"], ["to_child", "COMPLETED"]]);
    expect(done.tasks[1]!["subWorkflowId"]).not.toBe(removedChildId);
    expect(await hits("removed-child")).toBe(2);
  });

  it("retry with resumeSubworkflowTasks of a child that failed as it completed (no task failed, its own retry a 409) retries the SUB_WORKFLOW task with a new child, as Conductor finds no failed task in it", async () => {
    const huge = (ref: string) => httpTask(ref, { uri: target(`/huge?bytes=${300 * 1024}`), method: "GET", accept: "text/plain" });
    await register({ name: "output_failed_child", tasks: [huge("a"), huge("b")], outputParameters: { a: "${a.output.body}", b: "${b.output.body}", again: "${a.output.response.body}" } });
    await register({ name: "parent_of_output_failed_child", tasks: [subTask("to_child", { subWorkflowParam: { name: "output_failed_child" } })] });
    const parentId = await startWorkflow("parent_of_output_failed_child");
    const failed = await waitFor(parentId, terminal);
    expect(failed.status).toBe("FAILED");
    const childId = String(failed.tasks[0]!["subWorkflowId"]);
    const child = await getWorkflow(childId);
    expect(child).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringMatching(/^The workflow output is/) });
    expect((await api("POST", `/api/workflow/${childId}/retry`)).status).toBe(409);

    await apiOk("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`, undefined, 204);
    const again = await waitFor(parentId, (workflow) => workflow.tasks.length === 2 && terminal.includes(workflow.status));
    expect(again.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["to_child", "FAILED"], ["to_child", "FAILED"]]);
    expect(again.tasks[1]!["subWorkflowId"]).not.toBe(childId);
    expect(await getWorkflow(childId)).toEqual(child);
  });

  it("retry with resumeSubworkflowTasks of a child a TERMINATE ended FAILED (no task failed, its own retry a 409) retries the SUB_WORKFLOW task with a new child, as Conductor finds no failed task in it", async () => {
    await register({ name: "terminated_child", tasks: [httpTask("a", { uri: target("/count/terminated-child"), method: "GET" }), { name: "stop", taskReferenceName: "stop", type: "TERMINATE", inputParameters: { terminationStatus: "FAILED" } }] });
    await register({ name: "parent_of_terminated_child", tasks: [subTask("to_child", { subWorkflowParam: { name: "terminated_child" } })] });
    const parentId = await startWorkflow("parent_of_terminated_child");
    const failed = await waitFor(parentId, terminal);
    expect(failed.status).toBe("FAILED");
    const childId = String(failed.tasks[0]!["subWorkflowId"]);
    const child = await getWorkflow(childId);
    expect(child.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["a", "COMPLETED"], ["stop", "COMPLETED"]]);
    const refused = await api("POST", `/api/workflow/${childId}/retry`);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { message: string }).message).toContain("ended by its TERMINATE task stop");

    await apiOk("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`, undefined, 204);
    const again = await waitFor(parentId, (workflow) => workflow.tasks.length === 2 && terminal.includes(workflow.status));
    expect(again.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["to_child", "FAILED"], ["to_child", "FAILED"]]);
    expect(again.tasks[1]!["subWorkflowId"]).not.toBe(childId);
    expect(await getWorkflow(childId)).toEqual(child);
    expect(await hits("terminated-child")).toBe(2);
  });

  /** A parent whose child waits at `gate` and then failed there, failing the parent; answers both ids and the failed parent. */
  async function failedParentAndChild(prefix: string, after?: JsonObject) {
    await register({ name: `${prefix}_child`, tasks: [waitTask(`${prefix}_gate`)] });
    await register({ name: `${prefix}_parent`, tasks: [subTask("sub", { subWorkflowParam: { name: `${prefix}_child` } }), ...(after ? [after] : [])] });
    const parentId = await startWorkflow(`${prefix}_parent`);
    const first = await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    const childId = String(first.tasks[0]!.outputData["subWorkflowId"]);
    const gate = (await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS")).tasks[0]!;
    await apiOk("POST", `/api/tasks/${childId}/${prefix}_gate/FAILED`, {});
    const failed = await waitFor(parentId, terminal);
    expect(failed.status).toBe("FAILED");
    return { parentId, childId, gate, failed };
  }

  /** Runs `act` while the child object's lifecycle commands go through `wrap` (the original command is its first argument). */
  async function withChildCommand<T>(childName: string, wrap: (original: () => Promise<ActorResult<null>>, self: WorkflowExecution) => Promise<ActorResult<null>>, act: () => Promise<T>): Promise<T> {
    const { command } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.command = async function (this: WorkflowExecution, cmd) {
      if ((cmd.type === "retry" || cmd.type === "rerun") && (await this.getWorkflowName()) === childName) return wrap(() => command.call(this, cmd), this);
      return command.call(this, cmd);
    };
    try {
      return await act();
    } finally {
      WorkflowExecution.prototype.command = command;
    }
  }

  it("a rerun into a child that refuses it (409: the child runs again) changes nothing in the parent; the child's own retry then brings the parent along", async () => {
    const { parentId, childId, gate, failed } = await failedParentAndChild("refused_rerun", httpTask("after", { uri: target("/count/refused-rerun-after"), method: "GET" }));
    // Someone retries the child on its own: it runs again, so it refuses a rerun. Its parent has not heard yet.
    const { childReopened } = WorkflowExecution.prototype;
    let reachable = false;
    WorkflowExecution.prototype.childReopened = async function (this: WorkflowExecution, reopened) {
      if (!reachable) throw new Error("Network connection lost (test)");
      return childReopened.call(this, reopened);
    };
    try {
      await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
      await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
      const refused = await api("POST", `/api/workflow/${parentId}/rerun`, { reRunFromTaskId: gate.taskId });
      expect(refused.status).toBe(409);
      expect(await getWorkflow(parentId)).toEqual(failed);
      reachable = true;
      await waitFor(parentId, (workflow) => workflow.status === "RUNNING", 10_000);
    } finally {
      WorkflowExecution.prototype.childReopened = childReopened;
    }
    await apiOk("POST", `/api/tasks/${childId}/refused_rerun_gate/COMPLETED`, {});
    const done = await waitFor(parentId, terminal);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task["subWorkflowId"] ?? null, task.status])).toEqual([[childId, "COMPLETED"], [null, "COMPLETED"]]);
    expect(await hits("refused-rerun-after")).toBe(1);
  });

  it("retry with resumeSubworkflowTasks that the child refuses answers the refusal and changes nothing in the parent", async () => {
    const { parentId, failed } = await failedParentAndChild("refused_retry");
    const response = await withChildCommand("refused_retry_child", async () => ({ ok: false, error: { kind: "CONFLICT", message: "busy (test)" } }), () =>
      api("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`),
    );
    expect(response.status).toBe(409);
    expect(await getWorkflow(parentId)).toEqual(failed);
  });

  it("a child that finishes again before its parent has heard it accepted the retry still completes the parent", async () => {
    await register({ name: "quick_child", tasks: [httpTask("flaky", { uri: target("/flaky/quick-child?fail=1"), method: "GET" })] });
    await register({ name: "quick_parent", tasks: [subTask("sub", { subWorkflowParam: { name: "quick_child" } })] });
    const parentId = await startWorkflow("quick_parent");
    const failed = await waitFor(parentId, terminal);
    expect(failed.status).toBe("FAILED");
    const childId = String(failed.tasks[0]!["subWorkflowId"]);
    // The child's answer reaches the parent only after the child finished and sent its notice.
    await withChildCommand("quick_child", async (original, self) => {
      const result = await original();
      for (let i = 0; i < 200 && !String(await self.getWorkflowJson(false)).includes('"status":"COMPLETED"'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, 200));
      return result;
    }, () => apiOk("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`, undefined, 204));
    expect((await getWorkflow(childId)).status).toBe("COMPLETED");
    const done = await waitFor(parentId, terminal, 8_000);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task["subWorkflowId"], task.status])).toEqual([[childId, "COMPLETED"]]);
  });

  it("retry with resumeSubworkflowTasks whose call into the child fails (500) leaves the parent as it was, and a later retry works", async () => {
    const { parentId, childId, failed } = await failedParentAndChild("lost_call");
    let failures = 0;
    const status = await withChildCommand("lost_call_child", async () => {
      failures++;
      throw new Error("Network connection lost (test)");
    }, async () => (await api("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`)).status);
    expect(failures).toBe(1);
    expect(status).toBe(500);
    // The child was never retried: the parent stays FAILED, not RUNNING for a notice that cannot come.
    expect((await getWorkflow(childId)).status).toBe("FAILED");
    await eventually(() => api("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`).then((response) => response.status), (code) => code === 204, "a second retry being accepted");
    expect(failed.status).toBe("FAILED");
    await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/lost_call_gate/COMPLETED`, {});
    expect((await waitFor(parentId, terminal)).status).toBe("COMPLETED");
  });

  it("a parent whose child accepted the retry but whose answer was lost (500) waits for that child and takes its result", async () => {
    const { parentId, childId } = await failedParentAndChild("lost_answer");
    const status = await withChildCommand("lost_answer_child", async (original) => {
      expect((await original()).ok).toBe(true);
      throw new Error("Network connection lost (test)");
    }, async () => (await api("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`)).status);
    expect(status).toBe(500);
    await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    await waitFor(parentId, (workflow) => workflow.status === "RUNNING");
    await apiOk("POST", `/api/tasks/${childId}/lost_answer_gate/COMPLETED`, {});
    const done = await waitFor(parentId, terminal);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task["subWorkflowId"], task.status])).toEqual([[childId, "COMPLETED"]]);
  });

  it("a parent evicted while it waits for its child to accept a retry learns the outcome from the child afterwards", async () => {
    const { parentId, childId } = await failedParentAndChild("evicted_resume");
    const response = await withChildCommand("evicted_resume_child", async (original) => {
      const result = await original();
      // The waiting parent's object goes before the child's answer reaches it.
      await runInDurableObject(executionStub(env, parentId), (_instance, state) => state.abort("evicted (test)")).catch(() => undefined);
      return result;
    }, () => api("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`));
    expect(response.status).toBeGreaterThanOrEqual(500);
    await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    // Only the child is touched from here: its notice (or the parent's own alarm) must bring the parent along.
    await apiOk("POST", `/api/tasks/${childId}/evicted_resume_gate/COMPLETED`, {});
    await waitFor(childId, ["COMPLETED"]);
    const done = await waitFor(parentId, (workflow) => workflow.status === "COMPLETED", 10_000);
    expect(done.tasks.map((task) => [task["subWorkflowId"], task.status])).toEqual([[childId, "COMPLETED"]]);
  });

  it("rerun with an unknown task id is a 400 and changes nothing; rerun of a running workflow is a 409", async () => {
    await registerThreeLevels("bad");
    const rootId = await startWorkflow("bad_root");
    const failed = await waitFor(rootId, terminal);
    const response = await api("POST", `/api/workflow/${rootId}/rerun`, { reRunFromTaskId: crypto.randomUUID() });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    expect(await getWorkflow(rootId)).toEqual(failed);
  });
});

describe("a parent ending on its own while a child runs", () => {
  it("keeps an alarm a second ahead at most while it owes the child its termination, as it does for a notice a parent waits on", async () => {
    await register({ name: "ends_alone_child", tasks: [waitTask("idle")] });
    await register({
      name: "ends_alone_parent",
      tasks: [{ name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[subTask("child", { subWorkflowParam: { name: "ends_alone_child" } })], [waitTask("fails")]] }, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["child", "fails"] }],
    });
    const parentId = await startWorkflow("ends_alone_parent");
    const running = await waitFor(parentId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "child" && task["subWorkflowId"] !== undefined && task.status === "IN_PROGRESS"));
    const childId = String(running.tasks.find((task) => task.referenceTaskName === "child")!["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    // The parent fails in the object's own call, which reads its alarm as it answers (before the termination's job ends
    // or not: the alarm is not moved later once armed).
    const failing = running.tasks.find((task) => task.referenceTaskName === "fails")!;
    const ended = await runInDurableObject(executionStub(env, parentId), async (instance, state) => {
      const result = await (instance as unknown as WorkflowExecution).updateTask(failing.taskId, "FAILED_WITH_TERMINAL_ERROR", {});
      return { result, answeredAt: Date.now(), alarmAt: await state.storage.getAlarm() };
    });
    expect(ended.result).toMatchObject({ ok: true });
    expect(ended.alarmAt).not.toBeNull();
    // AWAITED_SAFETY_MS from the decision (made before the answer), where BACKGROUND_SAFETY_MS (5 s) let a child whose
    // termination an eviction cut off run on for five seconds.
    expect(ended.alarmAt!).toBeLessThanOrEqual(ended.answeredAt + 1_000);
    expect((await waitFor(childId, terminal)).status).toBe("TERMINATED");
  });
});
