import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, type TaskJson, type WorkflowJson } from "./helpers";

/** A DYNAMIC `ref` running the task `workflow.input.run` names (the official client's shape), with `input` beside. */
const dynamic = (ref: string, input: JsonObject = {}): JsonObject => ({
  name: ref,
  taskReferenceName: ref,
  type: "DYNAMIC",
  dynamicTaskNameParam: "taskToExecute",
  inputParameters: { taskToExecute: "${workflow.input.run}", ...input },
});

async function pollOne(taskName: string): Promise<TaskJson> {
  const params = new URLSearchParams({ workerid: "worker-1", count: "1", timeout: "0" });
  const [task] = await eventually(() => apiOk<TaskJson[]>("GET", `/api/tasks/poll/batch/${taskName}?${params}`), (tasks) => tasks.length > 0, `a ${taskName} task to poll`);
  return task!;
}

describe("DYNAMIC", () => {
  it("runs the worker's task its input names: polled by that name, reported after an eviction, and the workflow goes on", async () => {
    await register({
      name: "dyn_task_worker",
      tasks: [dynamic("pick", { file: "${workflow.input.file}" }), httpTask("after", { uri: target("/count/dyn-task-worker?url=${pick.output.url}"), method: "GET" })],
    });
    const workflowId = await startWorkflow("dyn_task_worker", { run: "dyn_encode", file: "a.mp4" });
    const task = await pollOne("dyn_encode");
    expect(task).toMatchObject({ taskType: "dyn_encode", taskDefName: "dyn_encode", referenceTaskName: "pick", workflowInstanceId: workflowId, inputData: { taskToExecute: "dyn_encode", file: "a.mp4" } });
    expect(task["workflowTask"]).toMatchObject({ type: "DYNAMIC", name: "dyn_encode" });
    // What it chose lives in the stored instance: a fresh object still knows the task and where it belongs.
    await abortAllDurableObjects();
    const reported = await api("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, status: "COMPLETED", outputData: { url: "s3://b/a.webm" } });
    expect(reported.status).toBe(200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(done.tasks.map((each) => `${each.referenceTaskName}:${String(each["taskType"])}:${each.status}`)).toEqual(["pick:dyn_encode:COMPLETED", "after:HTTP:COMPLETED"]);
    expect(await hits("dyn-task-worker?url=s3://b/a.webm")).toBe(1);
  });

  it("runs an HTTP call or a sub workflow when its input names that type", async () => {
    await register({ name: "dyn_task_child", tasks: [httpTask("child_call", { uri: target("/count/dyn-task-child"), method: "GET" })], outputParameters: { got: "${workflow.input.order}" } });
    await register({
      name: "dyn_task_system",
      tasks: [dynamic("pick", { http_request: { uri: target("/count/dyn-task-http"), method: "GET" }, subWorkflowName: "dyn_task_child", subWorkflowVersion: 1, order: "${workflow.input.order}" })],
      outputParameters: { result: "${pick.output}" },
    });
    const http = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dyn_task_system/1", { input: { run: "HTTP", order: 7 } });
    expect(http.status, String(http.reasonForIncompletion)).toBe("COMPLETED");
    expect(http.tasks[0]).toMatchObject({ taskType: "HTTP", status: "COMPLETED" });
    expect(await hits("dyn-task-http")).toBe(1);
    // Conductor OSS's HTTP_SYNC, the HTTP task under another name, is a system task type too.
    const sync = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dyn_task_system/1", { input: { run: "HTTP_SYNC", order: 7 } });
    expect(sync.status, String(sync.reasonForIncompletion)).toBe("COMPLETED");
    expect(sync.tasks[0]).toMatchObject({ taskType: "HTTP_SYNC", status: "COMPLETED" });
    expect(await hits("dyn-task-http")).toBe(2);

    const child = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dyn_task_system/1", { input: { run: "SUB_WORKFLOW", order: 7 } });
    expect(child.status, String(child.reasonForIncompletion)).toBe("COMPLETED");
    expect(child.tasks[0]).toMatchObject({ taskType: "SUB_WORKFLOW", status: "COMPLETED" });
    expect(child.output["result"]).toMatchObject({ got: 7 });
    expect(await hits("dyn-task-child")).toBe(1);
  });

  it("runs a sub workflow whose definition its input gives in place (Orkes' subWorkflowDefinition), with the child's own expressions", async () => {
    const child = {
      name: "dyn_inline_child",
      version: 1,
      tasks: [httpTask("child_call", { uri: target("/count/dyn-inline-child?order=${workflow.input.order}"), method: "GET" })],
      // Its expressions are the child's: `who` is the parent's input only, so the child sees none.
      outputParameters: { got: "${workflow.input.order}", who: "${workflow.input.who}" },
    };
    // No subWorkflowName: a child written in place names itself.
    await register({ name: "dyn_inline_parent", tasks: [dynamic("pick", { subWorkflowDefinition: child, order: "${workflow.input.order}" })], outputParameters: { result: "${pick.output}" } });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dyn_inline_parent/1", { input: { run: "SUB_WORKFLOW", order: 7, who: "parent" } });
    expect(run.status, String(run.reasonForIncompletion)).toBe("COMPLETED");
    expect(run.tasks[0]).toMatchObject({ taskType: "SUB_WORKFLOW", status: "COMPLETED", inputData: { subWorkflowName: "dyn_inline_child", order: 7 } });
    expect(run.tasks[0]!.inputData).not.toHaveProperty("subWorkflowDefinition");
    expect(run.output["result"]).toMatchObject({ got: 7 });
    expect((run.output["result"] as JsonObject)["who"] ?? null).toBeNull();
    expect(await hits("dyn-inline-child?order=7")).toBe(1);
    const childRun = await getWorkflow(String(run.tasks[0]!["subWorkflowId"]));
    expect(childRun).toMatchObject({ workflowName: "dyn_inline_child", status: "COMPLETED", input: { order: 7 } });
    // Given in place, it is not registered by running.
    expect((await api("GET", "/api/metadata/workflow/dyn_inline_child")).status).toBe(404);
  });

  it("refuses an inline child definition that does not check at registration; one an expression gives fails the task as it runs", async () => {
    const broken = { name: "dyn_inline_broken", version: 1, tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: {} }] };
    for (const run of ["SUB_WORKFLOW", "${workflow.input.run}"]) {
      const task = { ...dynamic("pick", { subWorkflowDefinition: broken }), inputParameters: { taskToExecute: run, subWorkflowDefinition: broken } };
      const response = await api("POST", "/api/metadata/workflow", { name: "dyn_inline_refused", version: 1, tasks: [task] });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { validationErrors: Array<{ path: string; message: string }> };
      expect(body.validationErrors.map((issue) => issue.path)).toEqual(["tasks[0].inputParameters.subWorkflowDefinition.tasks[0].inputParameters.uri", "tasks[0].inputParameters.subWorkflowDefinition.tasks[0].inputParameters.method"]);
    }
    expect((await api("GET", "/api/metadata/workflow/dyn_inline_refused")).status).toBe(404);
    // Its scripts' syntax too, as registered on its own (a SUB_WORKFLOW's inline child's is checked so).
    const unparsed = { name: "dyn_inline_unparsed", version: 1, tasks: [{ name: "calc", taskReferenceName: "calc", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "function ( { return 1 }" } }] };
    const scripted = { ...dynamic("pick"), inputParameters: { taskToExecute: "SUB_WORKFLOW", subWorkflowDefinition: unparsed } };
    const syntax = await api("POST", "/api/metadata/workflow", { name: "dyn_inline_refused", version: 1, tasks: [scripted] });
    expect(syntax.status).toBe(400);
    expect(((await syntax.json()) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors).toEqual([
      { path: "tasks[0].inputParameters.subWorkflowDefinition.tasks[0].inputParameters.expression", message: expect.stringMatching(/^the script does not parse as JavaScript: SyntaxError: /) },
    ]);

    // Given by an expression (a planner's output), it is checked when the child starts, as a SUB_WORKFLOW's is.
    await register({ name: "dyn_inline_planned", tasks: [dynamic("pick", { subWorkflowDefinition: "${workflow.input.plan}", subWorkflowName: "dyn_inline_planned_child" })] });
    const plan = { name: "dyn_inline_planned_child", version: 1, tasks: [httpTask("planned_call", { uri: target("/count/dyn-inline-planned"), method: "GET" })] };
    const ran = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dyn_inline_planned/1", { input: { run: "SUB_WORKFLOW", plan } });
    expect(ran.status, String(ran.reasonForIncompletion)).toBe("COMPLETED");
    expect(await hits("dyn-inline-planned")).toBe(1);
    const refused = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dyn_inline_planned/1", { input: { run: "SUB_WORKFLOW", plan: { ...broken, name: "dyn_inline_planned_child" } } });
    expect(refused.status).toBe("FAILED");
    expect(refused.tasks[0]).toMatchObject({ taskType: "SUB_WORKFLOW", status: "FAILED", outputData: { error: "SUB_WORKFLOW_ERROR", details: { subWorkflowId: null, errorCode: "INVALID_PARAMETERS" } } });
    expect(String(refused.tasks[0]!.reasonForIncompletion)).toMatch(/workflowDefinition\.tasks\[0\]\.inputParameters/);
  });

  it("fails the workflow, saying why, when its input names no task it can run", async () => {
    await register({ name: "dyn_task_nothing", tasks: [dynamic("pick")] });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dyn_task_nothing/1", { input: { run: "FORK_JOIN" } });
    expect(run.status).toBe("FAILED");
    expect(run.tasks[0]).toMatchObject({ taskType: "DYNAMIC", status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringMatching(/names FORK_JOIN, which a DYNAMIC cannot run/) });
  });

  it("refuses a definition whose DYNAMIC names no input parameter, storing nothing", async () => {
    const { dynamicTaskNameParam: _param, ...bare } = dynamic("pick");
    const response = await api("POST", "/api/metadata/workflow", { name: "dyn_task_unnamed", version: 1, tasks: [bare] });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { validationErrors: Array<{ path: string; message: string }> };
    expect(body.validationErrors).toEqual([{ path: "tasks[0].dynamicTaskNameParam", message: expect.stringMatching(/^a DYNAMIC needs dynamicTaskNameParam/) }]);
    expect((await api("GET", "/api/metadata/workflow/dyn_task_unnamed")).status).toBe(404);
  });
});
