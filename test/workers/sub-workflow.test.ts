import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ExecutionIndexWriter } from "../../src/actors/index-writer";
import { taskLimitAt, type TaskLimitSnapshot } from "../../src/actors/task-limit";
import { WorkflowExecution, type ActorResult } from "../../src/actors/workflow-execution";
import { DefinitionRepository } from "../../src/worker/definitions";
import { executionStub } from "../../src/worker/executions";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, eventually, gate, getWorkflow, hits, httpTask, register, startWorkflow, storedByExecutionObject, target, waitFor, waitForIndexRow, type WorkflowJson } from "./helpers";

const subTask = (ref: string, inputParameters: JsonObject, extra: JsonObject = {}): JsonObject => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", inputParameters, ...extra });
const waitTask = (ref: string): JsonObject => httpTask(ref, { uri: target(`/echo/${ref}`), method: "GET" }, { asyncComplete: true });

/** A child that echoes its input through the target and outputs what it got. */
async function registerEchoChild(name: string, version = 1, tag = `v${version}`): Promise<void> {
  await register({
    name,
    version,
    tasks: [httpTask("echo", { uri: target(`/count/${name}-${tag}?who=\${workflow.input.who}`), method: "GET" })],
    outputParameters: { who: "${workflow.input.who}", tag, n: "${echo.output.body.n}" },
  });
}

const terminal = ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"];

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
    await completeBuilder(invalid, { ...child, tasks: [{ name: "x", taskReferenceName: "x", type: "HTTP", inputParameters: {} }] });
    const refused = await waitFor(invalid, terminal);
    expect(refused.status).toBe("FAILED");
    expect(refused.tasks[1]).toMatchObject({ status: "FAILED", outputData: { error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: null, errorCode: "INVALID_PARAMETERS" } } });
    expect(String(refused.tasks[1]!.reasonForIncompletion)).toMatch(/subWorkflowParam\.workflowDefinition\.tasks\[0\]\.inputParameters/);
    const secretive = await startWorkflow("planned_parent", { threshold: 5 });
    const leaky = httpTask("leak", { uri: target("/count/planned-leak"), method: "GET", headers: { Authorization: "${workflow.secrets.api_token}" } });
    await completeBuilder(secretive, { ...child, tasks: [leaky] });
    const noSecrets = await waitFor(secretive, terminal);
    expect(noSecrets.tasks[1]!.reasonForIncompletion).toMatch(/reads secrets \(\$\{workflow\.secrets\.api_token\}\)/);
    expect(noSecrets.tasks[1]).not.toHaveProperty("subWorkflowId");
    expect(await hits("planned-leak")).toBe(0);
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

    await register({ name: "child_waits", tasks: [waitTask("gate")] });
    await register({ name: "parent_child_terminated", tasks: [subTask("sub", { subWorkflowParam: { name: "child_waits" } })] });
    const parentId = await startWorkflow("parent_child_terminated");
    const running = await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    await apiOk("DELETE", `/api/workflow/${String(running.tasks[0]!.outputData["subWorkflowId"])}?reason=operator`);
    const parent = await waitFor(parentId, terminal);
    // Failed, so that it follows the child's own retry (Conductor would end it TERMINATED).
    expect(parent.status).toBe("FAILED");
    expect(parent.tasks[0]!.status).toBe("CANCELED");
    expect(parent.tasks[0]!["reasonForIncompletion"]).toContain("terminated: operator");
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
    const childId = String(parent.tasks[0]!["subWorkflowId"]);
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

describe("secrets and children", () => {
  it("refuses a SUB_WORKFLOW task that passes a secret into the child's input (it would be stored and shown there)", async () => {
    const response = await api("POST", "/api/metadata/workflow", {
      name: "leaky_parent",
      tasks: [subTask("sub", { subWorkflowParam: { name: "x" }, token: "Bearer ${workflow.secrets.api_token}" })],
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { validationErrors: Array<{ path: string; message: string }> };
    expect(body.validationErrors[0]).toMatchObject({ path: "tasks[0].inputParameters" });
    expect(body.validationErrors[0]!.message).toContain("workflow.secrets.api_token");
  });
});

async function failedParentAndChild(prefix: string) {
  await register({ name: `${prefix}_child`, tasks: [waitTask(`${prefix}_gate`)] });
  await register({ name: `${prefix}_parent`, tasks: [subTask("sub", { subWorkflowParam: { name: `${prefix}_child` } })] });
  const parentId = await startWorkflow(`${prefix}_parent`);
  const first = await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
  const childId = String(first.tasks[0]!.outputData["subWorkflowId"]);
  await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
  await apiOk("POST", `/api/tasks/${childId}/${prefix}_gate/FAILED`, {});
  const failed = await waitFor(parentId, terminal);
  expect(failed.status).toBe("FAILED");
  await waitForIndexRow(parentId, "FAILED");
  return { parentId, childId };
}

/** Holds the first childViewJson asked of `childId` (the parent's #childView in #retryInChild) at a gate. */
function holdChildView(childId: string) {
  const g = gate();
  const { childViewJson } = WorkflowExecution.prototype;
  let armed = true;
  WorkflowExecution.prototype.childViewJson = async function (this: WorkflowExecution) {
    const self = this as unknown as { ctx: DurableObjectState };
    if (armed && self.ctx.id.name === childId) {
      armed = false;
      g.hit();
      await g.released;
    }
    return childViewJson.call(this);
  };
  return { ...g, restore: () => (WorkflowExecution.prototype.childViewJson = childViewJson) };
}

describe("retry or rerun into a child racing the parent's removal", () => {
  it("retry with resumeSubworkflowTasks racing a finished removal of the parent answers a refusal, not a 500, and changes nothing", async () => {
    const { parentId, childId } = await failedParentAndChild("r6a");
    const held = holdChildView(childId);
    try {
      const retry = api("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`);
      await held.reached;
      await apiOk("DELETE", `/api/workflow/${parentId}/remove`);
      held.release();
      const response = await retry;
      const text = await response.text();
      expect(response.status, text).not.toBe(500);
    } finally {
      held.restore();
    }
    expect((await storedByExecutionObject(parentId)).metaKeys).toEqual(["removed"]);
    expect((await getWorkflow(childId)).status).toBe("FAILED");
  });

  it("retry with resumeSubworkflowTasks racing a removal in progress is refused (409) and does not run the child again", async () => {
    const { parentId, childId } = await failedParentAndChild("r6b");
    const held = holdChildView(childId);
    const rowGate = gate();
    const { delete: del } = ExecutionIndexWriter.prototype;
    ExecutionIndexWriter.prototype.delete = async function (this: ExecutionIndexWriter, workflowId: string, key?: never) {
      if (workflowId === parentId) {
        rowGate.hit();
        await rowGate.released;
      }
      return del.call(this, workflowId, key);
    };
    let retryStatus = 0;
    try {
      const retry = api("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`);
      await held.reached;
      const removal = api("DELETE", `/api/workflow/${parentId}/remove`);
      await rowGate.reached;
      held.release();
      const response = await retry;
      retryStatus = response.status;
      await response.text();
      rowGate.release();
      expect((await removal).status).toBe(200);
    } finally {
      held.restore();
      ExecutionIndexWriter.prototype.delete = del;
      rowGate.release();
    }
    expect(retryStatus).toBe(409);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The refused retry of a parent being removed must not have run its child again.
    expect((await getWorkflow(childId)).status).toBe("FAILED");
  });
});

describe("a parent that ends while its child is resuming its own child", () => {
  /** The id an execution object was addressed by. */
  const idOf = (instance: WorkflowExecution) => (instance as unknown as { ctx: DurableObjectState }).ctx.id.name;

  /**
   * top → mid → leaf, where the leaf failed at its gate and so did mid, but top has not heard yet (its intake of
   * mid's notice fails until `restore`): top still runs and waits for mid, which is already FAILED.
   */
  async function midFailedTopUnaware(prefix: string) {
    await register({ name: `${prefix}_leaf`, tasks: [waitTask(`${prefix}_gate`)] });
    await register({ name: `${prefix}_mid`, tasks: [subTask("to_leaf", { subWorkflowParam: { name: `${prefix}_leaf` } })] });
    await register({ name: `${prefix}_top`, tasks: [subTask("to_mid", { subWorkflowParam: { name: `${prefix}_mid` } })] });
    const topId = await startWorkflow(`${prefix}_top`);
    const { childFinished } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.childFinished = async function (this: WorkflowExecution, notice) {
      if (idOf(this) === topId) throw new Error("Network connection lost (test)");
      return childFinished.call(this, notice);
    };
    const restore = () => (WorkflowExecution.prototype.childFinished = childFinished);
    try {
      const midId = String((await waitFor(topId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
      const leafId = String((await waitFor(midId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
      await waitFor(leafId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
      await apiOk("POST", `/api/tasks/${leafId}/${prefix}_gate/FAILED`, {});
      expect((await waitFor(midId, terminal)).status).toBe("FAILED");
      expect((await getWorkflow(topId)).status).toBe("RUNNING");
      return { topId, midId, leafId, restore };
    } catch (error) {
      restore();
      throw error;
    }
  }

  /**
   * Holds the leaf's answer to mid's resume (retry with resumeSubworkflowTasks) at a gate, and records what mid answers
   * to each of top's terminations; `answer` decides what the leaf answers once released.
   */
  function holdLeafResume(leafId: string, midId: string, answer: (original: () => Promise<ActorResult<null>>) => Promise<ActorResult<null>>) {
    const g = gate();
    const terminations: ActorResult<null>[] = [];
    const { command, terminateAsChild } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.command = async function (this: WorkflowExecution, cmd) {
      if (idOf(this) !== leafId || cmd.type !== "retry") return command.call(this, cmd);
      g.hit();
      await g.released;
      return answer(() => command.call(this, cmd));
    };
    WorkflowExecution.prototype.terminateAsChild = async function (this: WorkflowExecution, parent, reason) {
      const result = await terminateAsChild.call(this, parent, reason);
      if (idOf(this) === midId) terminations.push(result);
      return result;
    };
    const restore = () => {
      WorkflowExecution.prototype.command = command;
      WorkflowExecution.prototype.terminateAsChild = terminateAsChild;
      g.release();
    };
    return { ...g, terminations, restore };
  }

  /**
   * Retries mid into its leaf and, while mid waits for the leaf's answer, terminates top and waits for that
   * termination to reach mid; then lets the leaf answer. Answers the retry's status. Restores every patch.
   */
  async function terminateTopDuringResume(held: ReturnType<typeof holdLeafResume>, topId: string, midId: string, restore: () => void): Promise<number> {
    try {
      const retry = api("POST", `/api/workflow/${midId}/retry?resumeSubworkflowTasks=true`);
      await held.reached;
      // Mid is asking the leaf; top ends now, and its termination of mid arrives in the middle of that.
      await apiOk("DELETE", `/api/workflow/${topId}?reason=stop`);
      await eventually(async () => held.terminations.length, (count) => count > 0, "top's termination reaching mid");
      held.release();
      return (await retry).status;
    } finally {
      held.restore();
      restore();
    }
  }

  it("a parent terminated while its child waits for the grandchild to accept a resume still terminates both: the termination is owed until the child can take it", async () => {
    const { topId, midId, leafId, restore } = await midFailedTopUnaware("owed_through_resume");
    const held = holdLeafResume(leafId, midId, (original) => original());
    expect(await terminateTopDuringResume(held, topId, midId, restore)).toBe(204);
    expect((await getWorkflow(topId)).status).toBe("TERMINATED");
    // Mid ran again after top ended: top's owed termination must still reach it, and mid's end reaches the leaf.
    const mid = await waitFor(midId, terminal);
    expect(mid.status).toBe("TERMINATED");
    expect(mid["reasonForIncompletion"]).toContain(topId);
    expect((await waitFor(leafId, terminal)).status).toBe("TERMINATED");
    await eventually(async () => (await api("DELETE", `/api/workflow/${topId}/remove`)).status, (status) => status === 200, "top's removal (nothing owed any more)", 10_000);
  });

  it("a parent terminated while its child waits for a resume that the grandchild refuses leaves the child FAILED and owes nothing once the refusal is known", async () => {
    const { topId, midId, leafId, restore } = await midFailedTopUnaware("owed_refused_resume");
    const held = holdLeafResume(leafId, midId, async () => ({ ok: false, error: { kind: "CONFLICT", message: "busy (test)" } }));
    expect(await terminateTopDuringResume(held, topId, midId, restore)).toBe(409);
    expect((await getWorkflow(topId)).status).toBe("TERMINATED");
    // The owed termination settles against a mid that stays ended: top can be removed, nothing ran again.
    await eventually(async () => (await api("DELETE", `/api/workflow/${topId}/remove`)).status, (status) => status === 200, "top's removal (nothing owed any more)", 10_000);
    expect((await getWorkflow(midId)).status).toBe("FAILED");
    expect((await getWorkflow(leafId)).status).toBe("FAILED");
  });
});

describe("retry, restart or rerun of a child on its own: its parents follow (Conductor's updateAndPushParents)", () => {
  /** parent → child, where the child's only step fails once (then succeeds) and so fails both; answers both ids. */
  async function failedTree(prefix: string) {
    await register({ name: `${prefix}_child`, tasks: [httpTask("flaky", { uri: target(`/flaky/${prefix}-child?fail=1`), method: "GET" })], outputParameters: { n: "${flaky.output.body.n}" } });
    await register({ name: `${prefix}_parent`, tasks: [subTask("to_child", { subWorkflowParam: { name: `${prefix}_child` } }), httpTask("after", { uri: target(`/count/${prefix}-after`), method: "GET" })] });
    const parentId = await startWorkflow(`${prefix}_parent`);
    const failed = await waitFor(parentId, terminal);
    expect(failed.status).toBe("FAILED");
    const childId = String(failed.tasks[0]!["subWorkflowId"]);
    expect((await getWorkflow(childId)).status).toBe("FAILED");
    return { parentId, childId };
  }

  /** One bookkeeping value of an execution's object (meta), as stored. */
  const metaOf = (workflowId: string, key: string) =>
    runInDurableObject(executionStub(env, workflowId), (_instance, state) => state.storage.sql.exec<{ value: string }>(`SELECT value FROM meta WHERE key = ?`, key).toArray()[0]?.value);

  /** Makes the parent's intake of `childId`'s reopen fail (the parent cannot be reached) until `reach`; counts the calls. */
  function unreachableParentFor(childId: string) {
    const { childReopened } = WorkflowExecution.prototype;
    const state = { calls: 0, reachable: false };
    WorkflowExecution.prototype.childReopened = async function (this: WorkflowExecution, reopened) {
      if (reopened.subWorkflowId === childId) {
        state.calls++;
        if (!state.reachable) throw new Error("Network connection lost (test)");
      }
      return childReopened.call(this, reopened);
    };
    return { state, reach: () => void (state.reachable = true), restore: () => (WorkflowExecution.prototype.childReopened = childReopened) };
  }

  // A retry and a restart answer 204, a rerun the id (200), as Conductor's.
  for (const [command, body, status] of [["retry", undefined, 204], ["restart", undefined, 204], ["rerun", {}, 200]] as const) {
    it(`${command} of a failed child on its own reopens its FAILED parent, whose SUB_WORKFLOW task then completes with the child's output`, async () => {
      const { parentId, childId } = await failedTree(`own_${command}`);
      await apiOk("POST", `/api/workflow/${childId}/${command}`, body, status);
      expect((await waitFor(childId, terminal)).status).toBe("COMPLETED");
      // The parent hears in the background: FAILED until then.
      const done = await waitFor(parentId, ["COMPLETED"], 8_000);
      expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["to_child", "COMPLETED"], ["after", "COMPLETED"]]);
      expect(done.tasks[0]!.outputData).toEqual({ subWorkflowId: childId, n: 2 });
      expect(await hits(`own_${command}-after`)).toBe(1);
    });
  }

  it("retry of a failed grandchild on its own reopens both ancestors, which complete", async () => {
    await register({ name: "own3_leaf", tasks: [httpTask("leaf_b", { uri: target("/flaky/own3-leaf-b?fail=1"), method: "GET" })], outputParameters: { leaf: true } });
    await register({ name: "own3_mid", tasks: [subTask("to_leaf", { subWorkflowParam: { name: "own3_leaf" } }), httpTask("mid_after", { uri: target("/count/own3-mid-after"), method: "GET" })] });
    await register({ name: "own3_root", tasks: [subTask("to_mid", { subWorkflowParam: { name: "own3_mid" } }), httpTask("root_after", { uri: target("/count/own3-root-after"), method: "GET" })] });
    const rootId = await startWorkflow("own3_root");
    const failed = await waitFor(rootId, terminal);
    expect(failed.status).toBe("FAILED");
    const midId = String(failed.tasks[0]!["subWorkflowId"]);
    const leafId = String((await getWorkflow(midId)).tasks[0]!["subWorkflowId"]);
    await apiOk("POST", `/api/workflow/${leafId}/retry`, undefined, 204);
    const done = await waitFor(rootId, ["COMPLETED"], 8_000);
    expect(done.tasks.map((task) => [task.referenceTaskName, task["subWorkflowId"] ?? null, task.status])).toEqual([["to_mid", midId, "COMPLETED"], ["root_after", null, "COMPLETED"]]);
    const mid = await getWorkflow(midId);
    expect(mid.status).toBe("COMPLETED");
    expect(mid.tasks.map((task) => [task.referenceTaskName, task["subWorkflowId"] ?? null, task.status])).toEqual([["to_leaf", leafId, "COMPLETED"], ["mid_after", null, "COMPLETED"]]);
    expect([await hits("own3-leaf-b"), await hits("own3-mid-after"), await hits("own3-root-after")]).toEqual([2, 1, 1]);
  });

  it("a child retried on its own reopens its parent without running again what the parent's other fork branches completed (Conductor's hierarchical fork specs)", async () => {
    await register({ name: "beside_child", tasks: [waitTask("gate")], outputParameters: { done: true } });
    await register({
      name: "beside_parent",
      tasks: [
        {
          name: "fan",
          taskReferenceName: "fan",
          type: "FORK_JOIN",
          forkTasks: [[subTask("st1", { subWorkflowParam: { name: "beside_child" } })], [httpTask("t2", { uri: target("/count/beside-t2"), method: "GET" })]],
        },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: ["st1", "t2"] },
        httpTask("after", { uri: target("/count/beside-after"), method: "GET" }),
      ],
    });
    const parentId = await startWorkflow("beside_parent");
    const running = await waitFor(parentId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "t2" && task.status === "COMPLETED") && workflow.tasks.some((task) => task["subWorkflowId"] !== undefined));
    const childId = String(running.tasks.find((task) => task.referenceTaskName === "st1")!["subWorkflowId"]);
    await waitFor(childId, (child) => child.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/gate/FAILED`, { why: "no" });
    expect((await waitFor(parentId, terminal)).status).toBe("FAILED");

    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    const reopened = await waitFor(parentId, ["RUNNING"]);
    // t2 stays as it completed; the fork's JOIN waits for the child again.
    expect(reopened.tasks.filter((task) => task.referenceTaskName === "t2").map((task) => task.status)).toEqual(["COMPLETED"]);
    expect(reopened.tasks.find((task) => task.referenceTaskName === "st1")!.status).toBe("IN_PROGRESS");
    await waitFor(childId, (child) => child.tasks.at(-1)?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/gate/COMPLETED`, {});
    const done = await waitFor(parentId, terminal);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => `${task.referenceTaskName}:${task.status}`).filter((line) => line.startsWith("t2") || line.startsWith("after"))).toEqual(["t2:COMPLETED", "after:COMPLETED"]);
    expect([await hits("beside-t2"), await hits("beside-after")]).toEqual([1, 1]);
  });

  it("a middle parent evicted while it tells its own parent that it reopened still brings the top along once it wakes again", async () => {
    await register({ name: "evict3_leaf", tasks: [httpTask("leaf_b", { uri: target("/flaky/evict3-leaf-b?fail=1"), method: "GET" })] });
    await register({ name: "evict3_mid", tasks: [subTask("to_leaf", { subWorkflowParam: { name: "evict3_leaf" } })] });
    await register({ name: "evict3_root", tasks: [subTask("to_mid", { subWorkflowParam: { name: "evict3_mid" } }), httpTask("root_after", { uri: target("/count/evict3-root-after"), method: "GET" })] });
    const rootId = await startWorkflow("evict3_root");
    expect((await waitFor(rootId, terminal)).status).toBe("FAILED");
    const midId = String((await getWorkflow(rootId)).tasks[0]!["subWorkflowId"]);
    const leafId = String((await getWorkflow(midId)).tasks[0]!["subWorkflowId"]);
    const { childReopened } = WorkflowExecution.prototype;
    let evictions = 0;
    WorkflowExecution.prototype.childReopened = async function (this: WorkflowExecution, notice) {
      // The middle's first delivery: the middle's object goes (and its job with it) before the top answers.
      if (notice.subWorkflowId === midId && evictions++ === 0) {
        await runInDurableObject(executionStub(env, midId), (_instance, state) => state.abort("evicted (test)")).catch(() => undefined);
        throw new Error("Network connection lost (test)");
      }
      return childReopened.call(this, notice);
    };
    try {
      await apiOk("POST", `/api/workflow/${leafId}/retry`, undefined, 204);
      await eventually(async () => evictions, (count) => count > 0, "the middle's first delivery");
      const done = await waitFor(rootId, ["COMPLETED"], 15_000);
      expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["to_mid", "COMPLETED"], ["root_after", "COMPLETED"]]);
    } finally {
      WorkflowExecution.prototype.childReopened = childReopened;
    }
    expect(evictions).toBeGreaterThan(1);
    expect(await hits("evict3-root-after")).toBe(1);
  });

  it("a parent terminated while its child's reopen is owed still terminates the child, whose reopen it then declines", async () => {
    await register({ name: "owed_stop_child", tasks: [waitTask("owed_stop_gate")] });
    await register({ name: "owed_stop_parent", tasks: [subTask("to_child", { subWorkflowParam: { name: "owed_stop_child" } })] });
    const parentId = await startWorkflow("owed_stop_parent");
    const childId = String((await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    // The parent hears neither the child's failure nor its reopen: it still waits for the child.
    const { childFinished } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.childFinished = async function (this: WorkflowExecution, notice) {
      if (notice.subWorkflowId === childId) throw new Error("Network connection lost (test)");
      return childFinished.call(this, notice);
    };
    const parent = unreachableParentFor(childId);
    try {
      await apiOk("POST", `/api/tasks/${childId}/owed_stop_gate/FAILED`, {});
      await waitFor(childId, ["FAILED"]);
      await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
      await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
      await apiOk("DELETE", `/api/workflow/${parentId}?reason=stop`);
      expect((await waitFor(childId, terminal)).status).toBe("TERMINATED");
      parent.reach();
      await eventually(async () => (await storedByExecutionObject(childId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the parent's answer to the child's reopen", 10_000);
    } finally {
      parent.restore();
      WorkflowExecution.prototype.childFinished = childFinished;
    }
    expect((await getWorkflow(parentId)).status).toBe("TERMINATED");
    expect((await getWorkflow(childId)).status).toBe("TERMINATED");
  });

  it("a child retried on its own after its parent retried the task with a new child runs detached: the parent keeps waiting for the new child", async () => {
    await register({ name: "detached_child", tasks: [waitTask("detached_gate")], outputParameters: { from: "${workflow.workflowId}" } });
    await register({ name: "detached_parent", tasks: [subTask("to_child", { subWorkflowParam: { name: "detached_child" } })] });
    const parentId = await startWorkflow("detached_parent");
    const oldId = String((await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(oldId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${oldId}/detached_gate/FAILED`, {});
    expect((await waitFor(parentId, terminal)).status).toBe("FAILED");
    // The parent's own retry: a new task instance with a new child.
    await apiOk("POST", `/api/workflow/${parentId}/retry`, undefined, 204);
    const retried = await waitFor(parentId, (workflow) => workflow.tasks[1]?.outputData["subWorkflowId"] !== undefined);
    const newId = String(retried.tasks[1]!.outputData["subWorkflowId"]);
    await waitFor(newId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");

    await apiOk("POST", `/api/workflow/${oldId}/retry`, undefined, 204);
    await waitFor(oldId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    // The parent has answered (declined) once nothing is owed to it any more.
    await eventually(async () => (await storedByExecutionObject(oldId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the parent's answer to the old child's reopen");
    await apiOk("POST", `/api/tasks/${oldId}/detached_gate/COMPLETED`, {});
    await waitFor(oldId, ["COMPLETED"]);
    const waiting = await getWorkflow(parentId);
    expect(waiting.status).toBe("RUNNING");
    expect(waiting.tasks.map((task) => [task["subWorkflowId"], task.status])).toEqual([[oldId, "FAILED"], [newId, "IN_PROGRESS"]]);
    await apiOk("POST", `/api/tasks/${newId}/detached_gate/COMPLETED`, {});
    const done = await waitFor(parentId, terminal);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[1]!.outputData).toEqual({ subWorkflowId: newId, from: newId });
  });

  it("a child retried on its own after its parent was terminated leaves the parent TERMINATED", async () => {
    await register({ name: "stopped_child", tasks: [waitTask("stopped_gate")] });
    await register({ name: "stopped_parent", tasks: [subTask("to_child", { subWorkflowParam: { name: "stopped_child" } })] });
    const parentId = await startWorkflow("stopped_parent");
    const childId = String((await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("DELETE", `/api/workflow/${parentId}?reason=stop`);
    await waitFor(childId, ["TERMINATED"]);
    const stopped = await waitFor(parentId, ["TERMINATED"]);
    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    await eventually(async () => (await storedByExecutionObject(childId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the parent's answer to the child's reopen");
    await apiOk("POST", `/api/tasks/${childId}/stopped_gate/COMPLETED`, {});
    await waitFor(childId, ["COMPLETED"]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await getWorkflow(parentId)).toEqual(stopped);
  });

  it("a child retried on its own after its parent completed the task from outside (and so terminated it) leaves the COMPLETED parent as it is", async () => {
    await register({ name: "overruled_child", tasks: [waitTask("overruled_gate")] });
    await register({ name: "overruled_parent", tasks: [subTask("to_child", { subWorkflowParam: { name: "overruled_child" } }), httpTask("after", { uri: target("/count/overruled-after"), method: "GET" })] });
    const parentId = await startWorkflow("overruled_parent");
    const childId = String((await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${parentId}/to_child/COMPLETED`, { decided: "outside" });
    const completed = await waitFor(parentId, terminal);
    expect(completed.status).toBe("COMPLETED");
    expect((await waitFor(childId, terminal)).status).toBe("TERMINATED");
    await eventually(() => metaOf(parentId, "childTerminations"), (owed) => owed === "{}", "the parent's termination of the child taken");

    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    await eventually(async () => (await storedByExecutionObject(childId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the parent's answer to the child's reopen");
    expect(await getWorkflow(parentId)).toEqual(completed);
    expect(await hits("overruled-after")).toBe(1);

    // Once the parent waits for that child again of its own accord (a rerun inside it), the child's own retries reopen it again.
    const gateTask = (await waitFor(childId, (workflow) => workflow.tasks.at(-1)?.status === "IN_PROGRESS")).tasks.at(-1)!;
    await apiOk("POST", `/api/tasks/${childId}/overruled_gate/FAILED`, {});
    await waitFor(childId, ["FAILED"]);
    await apiOk("POST", `/api/workflow/${parentId}/rerun`, { reRunFromTaskId: gateTask.taskId });
    await waitFor(parentId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.length === 1);
    await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/overruled_gate/FAILED`, {});
    expect((await waitFor(parentId, terminal)).status).toBe("FAILED");
    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    await waitFor(parentId, ["RUNNING"]);
    await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/overruled_gate/COMPLETED`, {});
    expect((await waitFor(parentId, terminal)).status).toBe("COMPLETED");
    expect(await hits("overruled-after")).toBe(2);
  });

  it("a child retried on its own after its parent timed out (and so terminated it) leaves the TIMED_OUT parent as it is", async () => {
    await register({ name: "outlived_child", tasks: [waitTask("outlived_gate")] });
    await register({ name: "outlived_parent", timeoutSeconds: 1, timeoutPolicy: "TIME_OUT_WF", tasks: [subTask("to_child", { subWorkflowParam: { name: "outlived_child" } })] });
    const parentId = await startWorkflow("outlived_parent");
    const childId = String((await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    const timedOut = await waitFor(parentId, terminal, 5_000);
    expect(timedOut.status).toBe("TIMED_OUT");
    expect((await waitFor(childId, terminal)).status).toBe("TERMINATED");
    await eventually(() => metaOf(parentId, "childTerminations"), (owed) => owed === "{}", "the parent's termination of the child taken");

    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    await eventually(async () => (await storedByExecutionObject(childId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the parent's answer to the child's reopen");
    expect(await getWorkflow(parentId)).toEqual(timedOut);
  });

  it("a child retried on its own whose task did not wait for it (waitForCompletion false) leaves the COMPLETED parent as it is", async () => {
    await register({ name: "nowait_child", tasks: [waitTask("nowait_gate")] });
    await register({ name: "nowait_parent", tasks: [subTask("to_child", { subWorkflowParam: { name: "nowait_child" }, waitForCompletion: false })] });
    const parentId = await startWorkflow("nowait_parent");
    const completed = await waitFor(parentId, terminal);
    expect(completed.status).toBe("COMPLETED");
    const childId = String(completed.tasks[0]!["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/nowait_gate/FAILED`, {});
    await waitFor(childId, ["FAILED"]);
    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    await eventually(async () => (await storedByExecutionObject(childId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the parent's answer to the child's reopen");
    expect(await getWorkflow(parentId)).toEqual(completed);
  });

  it("the parent's reopen survives a lost answer and an eviction of the child: delivered again, it is taken once", async () => {
    await register({ name: "lost_reopen_child", tasks: [waitTask("lost_reopen_gate")] });
    await register({ name: "lost_reopen_parent", tasks: [subTask("to_child", { subWorkflowParam: { name: "lost_reopen_child" } }), httpTask("after", { uri: target("/count/lost-reopen-after"), method: "GET" })] });
    const parentId = await startWorkflow("lost_reopen_parent");
    const childId = String((await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/lost_reopen_gate/FAILED`, {});
    expect((await waitFor(parentId, terminal)).status).toBe("FAILED");

    const { childReopened } = WorkflowExecution.prototype;
    const answers: string[] = [];
    WorkflowExecution.prototype.childReopened = async function (this: WorkflowExecution, reopened) {
      const answer = await childReopened.call(this, reopened);
      answers.push(answer);
      // The first answer is taken by the parent but never reaches the child.
      if (answers.length === 1) throw new Error("Network connection lost (test)");
      return answer;
    };
    try {
      await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
      await eventually(async () => answers.length, (count) => count > 0, "the first delivery");
      expect((await getWorkflow(parentId)).status).toBe("RUNNING");
      // The child's job dies with it: only its alarm can deliver the reopen again; the parent, evicted too, must know
      // from its storage that it took the first.
      await abortAllDurableObjects();
      await eventually(async () => (await storedByExecutionObject(childId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the reopen delivered again", 10_000);
    } finally {
      WorkflowExecution.prototype.childReopened = childReopened;
    }
    expect(answers).toEqual(["taken", "taken"]);
    await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/lost_reopen_gate/COMPLETED`, {});
    const done = await waitFor(parentId, terminal);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["to_child", "COMPLETED"], ["after", "COMPLETED"]]);
    expect(await hits("lost-reopen-after")).toBe(1);
  });

  it("a child that finishes before its parent took the reopen still completes the parent (its notice waits), and cannot be removed meanwhile", async () => {
    const { parentId, childId } = await failedTree("early_finish");
    const parent = unreachableParentFor(childId);
    try {
      await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
      expect((await waitFor(childId, terminal)).status).toBe("COMPLETED");
      await eventually(async () => parent.state.calls, (calls) => calls > 0, "a delivery of the reopen");
      // Time for a notice that did not wait to reach the parent, still FAILED, which would drop it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const removal = await api("DELETE", `/api/workflow/${childId}/remove`);
      expect(removal.status).toBe(409);
      expect(await removal.text()).toContain("still notifying its parent");
      expect((await getWorkflow(parentId)).status).toBe("FAILED");
      parent.reach();
      // The parent, FAILED until now, reopens on the next delivery and then takes the notice that waited.
      const done = await waitFor(parentId, ["COMPLETED"], 10_000);
      expect(done.tasks[0]!.outputData).toEqual({ subWorkflowId: childId, n: 2 });
    } finally {
      parent.restore();
    }
    await eventually(async () => (await api("DELETE", `/api/workflow/${childId}/remove`)).status, (status) => status === 200, "the child's removal (nothing owed any more)");
  });

  it("a paused parent whose child failed meanwhile follows the child's own retry: it stays PAUSED, waits for that child again, and completes once resumed", async () => {
    await register({ name: "paused_follow_child", tasks: [waitTask("w")] });
    await register({ name: "paused_follow_parent", tasks: [subTask("to_child", { subWorkflowParam: { name: "paused_follow_child" } }), httpTask("after", { uri: target("/count/paused-follow-after"), method: "GET" })] });
    const parentId = await startWorkflow("paused_follow_parent");
    const running = await waitFor(parentId, (workflow) => workflow.tasks[0]?.["subWorkflowId"] !== undefined);
    const childId = String(running.tasks[0]!["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("PUT", `/api/workflow/${parentId}/pause`);
    await apiOk<string>("POST", `/api/tasks/${childId}/w/FAILED_WITH_TERMINAL_ERROR`, {});
    expect((await waitFor(childId, terminal)).status).toBe("FAILED");
    // The paused parent records the child's end and does nothing more until resumed.
    const recorded = await waitFor(parentId, (workflow) => workflow.tasks[0]?.status === "FAILED");
    expect(recorded.status).toBe("PAUSED");

    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    const reopened = await waitFor(parentId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    expect(reopened.status).toBe("PAUSED");
    expect(reopened.tasks.map((task) => task.referenceTaskName)).toEqual(["to_child"]);
    await waitFor(childId, (workflow) => workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    await apiOk<string>("POST", `/api/tasks/${childId}/w/COMPLETED`, { ok: 1 });
    expect((await waitFor(childId, terminal)).status).toBe("COMPLETED");
    await waitFor(parentId, (workflow) => workflow.tasks[0]?.status === "COMPLETED");
    expect((await getWorkflow(parentId)).status).toBe("PAUSED");

    await apiOk("PUT", `/api/workflow/${parentId}/resume`);
    const done = await waitFor(parentId, terminal);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status, task["subWorkflowId"] ?? null])).toEqual([["to_child", "COMPLETED", childId], ["after", "COMPLETED", null]]);
    expect(await hits("paused-follow-after")).toBe(1);
  });

  it("a paused parent whose SUB_WORKFLOW task is in a fork follows the child's own retry too: the JOIN and the other branch's later tasks are beside it, not past it", async () => {
    await register({ name: "paused_fork_child", tasks: [waitTask("w")] });
    await register({
      name: "paused_fork_parent",
      tasks: [
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[subTask("to_child", { subWorkflowParam: { name: "paused_fork_child" } })], [waitTask("side"), httpTask("side_after", { uri: target("/count/paused-fork-side"), method: "GET" })]] },
        { name: "joined", taskReferenceName: "joined", type: "JOIN", joinOn: ["to_child", "side_after"] },
      ],
    });
    const parentId = await startWorkflow("paused_fork_parent");
    const running = await waitFor(parentId, (workflow) => workflow.tasks.some((task) => task["subWorkflowId"] !== undefined) && workflow.tasks.some((task) => task.referenceTaskName === "side" && task.status === "IN_PROGRESS"));
    const childId = String(running.tasks.find((task) => task.referenceTaskName === "to_child")!["subWorkflowId"]);
    // The other branch moves on before the pause: its later task is scheduled after the SUB_WORKFLOW task, beside it.
    await apiOk<string>("POST", `/api/tasks/${parentId}/side/COMPLETED`, {});
    await waitFor(parentId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "side_after" && task.status === "COMPLETED"));
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("PUT", `/api/workflow/${parentId}/pause`);
    await apiOk<string>("POST", `/api/tasks/${childId}/w/FAILED_WITH_TERMINAL_ERROR`, {});
    expect((await waitFor(childId, terminal)).status).toBe("FAILED");
    await waitFor(parentId, (workflow) => workflow.tasks.find((task) => task.referenceTaskName === "to_child")?.status === "FAILED");

    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    const reopened = await waitFor(parentId, (workflow) => workflow.tasks.find((task) => task.referenceTaskName === "to_child")?.status === "IN_PROGRESS");
    expect(reopened.status).toBe("PAUSED");
    expect(reopened.tasks.map((task) => `${task.referenceTaskName}:${task.status}`).sort()).toEqual(["fan:COMPLETED", "joined:IN_PROGRESS", "side:COMPLETED", "side_after:COMPLETED", "to_child:IN_PROGRESS"]);
    await waitFor(childId, (workflow) => workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    await apiOk<string>("POST", `/api/tasks/${childId}/w/COMPLETED`, { ok: 1 });
    expect((await waitFor(childId, terminal)).status).toBe("COMPLETED");
    await waitFor(parentId, (workflow) => workflow.tasks.find((task) => task.referenceTaskName === "to_child")?.status === "COMPLETED");
    expect((await getWorkflow(parentId)).status).toBe("PAUSED");

    await apiOk("PUT", `/api/workflow/${parentId}/resume`);
    const done = await waitFor(parentId, terminal);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.find((task) => task.referenceTaskName === "joined")!.status).toBe("COMPLETED");
    expect(await hits("paused-fork-side")).toBe(1);
  });

  it("a paused parent that has gone past its SUB_WORKFLOW task does not follow the child's restart (the child runs detached)", async () => {
    await register({ name: "paused_past_child", tasks: [httpTask("one", { uri: target("/echo/paused-past"), method: "GET" })] });
    await register({ name: "paused_past_parent", tasks: [subTask("to_child", { subWorkflowParam: { name: "paused_past_child" } }), waitTask("later")] });
    const parentId = await startWorkflow("paused_past_parent");
    const waiting = await waitFor(parentId, (workflow) => workflow.tasks[1]?.status === "IN_PROGRESS");
    const childId = String(waiting.tasks[0]!["subWorkflowId"]);
    await apiOk("PUT", `/api/workflow/${parentId}/pause`);
    await apiOk("POST", `/api/workflow/${childId}/restart`, undefined, 204);
    expect((await waitFor(childId, terminal)).status).toBe("COMPLETED");
    await eventually(async () => (await storedByExecutionObject(childId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the parent's answer to the child's restart");
    const after = await getWorkflow(parentId);
    expect(after.status).toBe("PAUSED");
    expect(after.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["to_child", "COMPLETED"], ["later", "IN_PROGRESS"]]);
  });

  it("a child that fails again within its own retry (a webhook task that cannot start) fails its reopened parent again instead of leaving it waiting", async () => {
    // The header name comes from the input and is not a valid one: the task fails as it starts, in the same decision.
    await register({ name: "instant_child", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: { signature: { secret: "s", header: "${workflow.input.h}" } } }] });
    await register({ name: "instant_parent", tasks: [subTask("to_child", { subWorkflowParam: { name: "instant_child" }, h: "not a header" })] });
    const parentId = await startWorkflow("instant_parent");
    const failed = await waitFor(parentId, terminal);
    expect(failed.status).toBe("FAILED");
    const childId = String(failed.tasks[0]!["subWorkflowId"]);
    expect((await getWorkflow(childId)).status).toBe("FAILED");

    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    expect((await getWorkflow(childId)).status).toBe("FAILED");
    await eventually(async () => (await storedByExecutionObject(childId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the parent's answer to the child's reopen");
    // The parent followed the child and heard its new end: FAILED again, not RUNNING for a notice that was spent.
    const again = await waitFor(parentId, terminal, 5_000);
    expect(again.status).toBe("FAILED");
    expect(again.endTime).toBeGreaterThan(failed.endTime as number);
  });
});

describe("SUB_WORKFLOW: its task definition's concurrentExecLimit (a place held from the child's start until the task ends)", () => {
  /** Registers task definition `name` (concurrentExecLimit 1), a child whose one task waits to be completed, and a parent whose SUB_WORKFLOW task `name` runs it. */
  async function registerLimited(name: string): Promise<void> {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name, retryCount: 0, responseTimeoutSeconds: 60, ownerEmail: "t@example.com", concurrentExecLimit: 1 }]);
    await register({ name: `${name}_child`, tasks: [waitTask("gate")] });
    await register({ name: `${name}_parent`, tasks: [subTask(name, { subWorkflowParam: { name: `${name}_child` } })] });
  }

  function limitOf(name: string, accept: (snapshot: TaskLimitSnapshot) => boolean, what: string): Promise<TaskLimitSnapshot> {
    return eventually(() => taskLimitAt(env, name).snapshot(), accept, what);
  }

  /** The child started by `parentId`'s SUB_WORKFLOW task, once that runs it. */
  async function runningChild(parentId: string): Promise<string> {
    const parent = await waitFor(parentId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && workflow.tasks[0]["subWorkflowId"] !== undefined);
    return String(parent.tasks[0]!["subWorkflowId"]);
  }

  /** Ends the waiting task of child `childId` with `status`. */
  async function finishChild(childId: string, status: "COMPLETED" | "FAILED"): Promise<void> {
    const child = await waitFor(childId, (workflow) => workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    const response = await api("POST", "/api/tasks", { workflowInstanceId: childId, taskId: child.tasks.at(-1)!.taskId, status, reasonForIncompletion: status === "FAILED" ? "no" : undefined });
    expect(response.status).toBe(200);
  }

  /** Starts a second parent while the first holds the place: its task waits SCHEDULED, no child started. */
  async function secondWaits(name: string): Promise<string> {
    const second = await startWorkflow(`${name}_parent`);
    const waiting = await limitOf(name, (snapshot) => snapshot.waiting.length === 1, "the second task waiting for a place");
    const held = await getWorkflow(second);
    expect(waiting.waiting).toEqual([held.tasks[0]!.taskId]);
    expect(held.tasks[0]).toMatchObject({ status: "SCHEDULED", reasonForIncompletion: expect.stringMatching(/concurrentExecLimit 1/) });
    expect(held.tasks[0]!["subWorkflowId"]).toBeUndefined();
    return second;
  }

  it("a second parent's SUB_WORKFLOW task waits SCHEDULED, no child started, until the first's child ends, then starts its child", async () => {
    await registerLimited("sublim_conc");
    const first = await startWorkflow("sublim_conc_parent");
    const firstChild = await runningChild(first);
    const second = await secondWaits("sublim_conc");

    await finishChild(firstChild, "COMPLETED");
    expect((await waitFor(first, terminal)).status).toBe("COMPLETED");
    const secondChild = await runningChild(second);
    expect(secondChild).not.toBe(firstChild);
    await finishChild(secondChild, "COMPLETED");
    expect((await waitFor(second, terminal)).status).toBe("COMPLETED");
    await limitOf("sublim_conc", (snapshot) => snapshot.running.length === 0 && snapshot.waiting.length === 0, "every place given back");
  });

  it("a terminated first parent gives its place back: the second parent's task starts its child", async () => {
    await registerLimited("sublim_term");
    const first = await startWorkflow("sublim_term_parent");
    await runningChild(first);
    const second = await secondWaits("sublim_term");

    await apiOk("DELETE", `/api/workflow/${first}`);
    const secondChild = await runningChild(second);
    expect((await getWorkflow(first)).status).toBe("TERMINATED");
    await finishChild(secondChild, "COMPLETED");
    expect((await waitFor(second, terminal)).status).toBe("COMPLETED");
    await limitOf("sublim_term", (snapshot) => snapshot.running.length === 0 && snapshot.waiting.length === 0, "every place given back");
  });

  it("rateLimitPerFrequency does not hold a SUB_WORKFLOW task back, and its Task JSON shows 0, as Conductor's SubWorkflowTaskMapper leaves the task's rate 0", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "sublim_rate", retryCount: 0, responseTimeoutSeconds: 60, ownerEmail: "t@example.com", rateLimitPerFrequency: 1, rateLimitFrequencyInSeconds: 600 }]);
    await register({ name: "sublim_rate_child", tasks: [waitTask("gate")] });
    await register({ name: "sublim_rate_parent", tasks: [subTask("sublim_rate", { subWorkflowParam: { name: "sublim_rate_child" } })] });
    const first = await startWorkflow("sublim_rate_parent");
    const firstChild = await runningChild(first);
    const second = await startWorkflow("sublim_rate_parent");
    const secondChild = await runningChild(second);
    expect((await getWorkflow(second)).tasks[0]).toMatchObject({ rateLimitPerFrequency: 0, rateLimitFrequencyInSeconds: 0 });
    for (const child of [firstChild, secondChild]) await finishChild(child, "COMPLETED");
    for (const parent of [first, second]) expect((await waitFor(parent, terminal)).status).toBe("COMPLETED");
  });

  it("a child retried in place takes its task's place back at once: another parent's task waits until it ends", async () => {
    await registerLimited("sublim_reopen");
    const first = await startWorkflow("sublim_reopen_parent");
    const child = await runningChild(first);
    await finishChild(child, "FAILED");
    const failed = await waitFor(first, terminal);
    expect(failed.status).toBe("FAILED");
    await limitOf("sublim_reopen", (snapshot) => snapshot.running.length === 0, "the failed task's place given back");

    await apiOk("POST", `/api/workflow/${first}/retry?resumeSubworkflowTasks=true`, undefined, 204);
    expect(await runningChild(first)).toBe(child);
    await limitOf("sublim_reopen", (snapshot) => snapshot.running.length === 1 && snapshot.running[0] === failed.tasks[0]!.taskId, "the reopened task's place taken again");
    const second = await secondWaits("sublim_reopen");

    await finishChild(child, "COMPLETED");
    expect((await waitFor(first, terminal)).status).toBe("COMPLETED");
    const secondChild = await runningChild(second);
    await finishChild(secondChild, "COMPLETED");
    expect((await waitFor(second, terminal)).status).toBe("COMPLETED");
    await limitOf("sublim_reopen", (snapshot) => snapshot.running.length === 0 && snapshot.waiting.length === 0, "every place given back");
  });
});
