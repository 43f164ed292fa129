import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, eventually, hits, httpTask, register, startWorkflow, target, waitFor, type TaskJson, type WorkflowJson } from "./helpers";

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

    const child = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dyn_task_system/1", { input: { run: "SUB_WORKFLOW", order: 7 } });
    expect(child.status, String(child.reasonForIncompletion)).toBe("COMPLETED");
    expect(child.tasks[0]).toMatchObject({ taskType: "SUB_WORKFLOW", status: "COMPLETED" });
    expect(child.output["result"]).toMatchObject({ got: 7 });
    expect(await hits("dyn-task-child")).toBe(1);
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
