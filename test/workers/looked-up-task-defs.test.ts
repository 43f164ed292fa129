import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_STORED_DEFINITION_BYTES } from "../../src/engine/limits";
import type { JsonObject, TaskExecution, WorkflowDef } from "../../src/engine/model";
import { executionStub } from "../../src/worker/executions";
import { TaskDefRepository } from "../../src/worker/task-defs";
import { api, apiOk, eventually, getWorkflow, register, startWorkflow, waitFor, type TaskJson } from "./helpers";

/** Registers task definition `name` with `fields` (no retries, an hour to report, unless given). */
async function registerTaskDef(name: string, fields: JsonObject): Promise<void> {
  await apiOk("POST", "/api/metadata/taskdefs", [{ name, retryCount: 0, responseTimeoutSeconds: 3600, ownerEmail: "t@example.com", ...fields }]);
}

async function poll(taskName: string): Promise<TaskJson[]> {
  const params = new URLSearchParams({ workerid: "worker-1", count: "10", timeout: "0" });
  return apiOk<TaskJson[]>("GET", `/api/tasks/poll/batch/${taskName}?${params}`);
}

/** Polls (bounded) until `count` tasks of that name came out. */
async function pollAll(taskName: string, count: number): Promise<TaskJson[]> {
  const polled: TaskJson[] = [];
  await eventually(
    async () => polled.push(...(await poll(taskName))),
    () => polled.length >= count,
    `${count} ${taskName} tasks to poll`,
  );
  return polled;
}

function report(task: TaskJson, status: string, extra: JsonObject = {}): Promise<Response> {
  return api("POST", "/api/tasks", { workflowInstanceId: task["workflowInstanceId"], taskId: task.taskId, status, outputData: {}, ...extra });
}

describe("registered task definitions of what a dynamic fork forks and a DYNAMIC chooses", () => {
  it("a dynamic fork's worker tasks follow the definition registered under their name: its inputTemplate, responseTimeoutSeconds and retries", async () => {
    await registerTaskDef("lk_resize", { retryCount: 1, retryDelaySeconds: 0, responseTimeoutSeconds: 120, inputTemplate: { quality: 80 } });
    await register({
      name: "lk_fan",
      tasks: [
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskInputs: "${workflow.input.images}", forkTaskName: "lk_resize" } },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", inputParameters: {}, joinOn: [] },
      ],
    });
    const workflowId = await startWorkflow("lk_fan", { images: [{ file: "a.png" }, { file: "b.png" }] });
    const tasks = await pollAll("lk_resize", 2);
    for (const task of tasks) {
      expect(task).toMatchObject({ workflowInstanceId: workflowId, responseTimeoutSeconds: 120, inputData: { quality: 80 } });
      expect(task["workflowTask"]).toMatchObject({ name: "lk_resize", taskDefinition: { name: "lk_resize", retryCount: 1 } });
    }
    expect(tasks.map((task) => task.inputData["file"]).sort()).toEqual(["a.png", "b.png"]);
    // Retried by the registered retryCount: without it, the failure would fail the workflow.
    expect((await report(tasks[0]!, "FAILED", { reasonForIncompletion: "out of memory" })).status).toBe(200);
    const [retry] = await pollAll("lk_resize", 1);
    expect(retry).toMatchObject({ retryCount: 1, referenceTaskName: tasks[0]!.referenceTaskName, inputData: { quality: 80 } });
    await report(retry!, "COMPLETED");
    await report(tasks[1]!, "COMPLETED");
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done["reasonForIncompletion"])).toBe("COMPLETED");
    // The definition shown is the registered one.
    expect(done["workflowDefinition"]).not.toHaveProperty("lookedUpTaskDefs");
  });

  it("a DYNAMIC follows the definition registered under the name it chose", async () => {
    await registerTaskDef("lk_encode", { retryCount: 1, retryDelaySeconds: 0, inputTemplate: { codec: "vp9" } });
    await register({
      name: "lk_dynamic",
      tasks: [{ name: "lk_pick", taskReferenceName: "pick", type: "DYNAMIC", dynamicTaskNameParam: "run", inputParameters: { run: "${workflow.input.run}" } }],
    });
    const workflowId = await startWorkflow("lk_dynamic", { run: "lk_encode" });
    const [task] = await pollAll("lk_encode", 1);
    expect(task).toMatchObject({ workflowInstanceId: workflowId, taskDefName: "lk_encode", inputData: { run: "lk_encode", codec: "vp9" } });
    await report(task!, "FAILED", { reasonForIncompletion: "codec crashed" });
    const [retry] = await pollAll("lk_encode", 1);
    expect(retry).toMatchObject({ retryCount: 1, referenceTaskName: "pick" });
    await report(retry!, "COMPLETED");
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("a task left waiting for its definition when the object was evicted gets it when the object wakes", async () => {
    await registerTaskDef("lk_evict", { inputTemplate: { mode: "safe" } });
    await register({
      name: "lk_evicted",
      tasks: [{ name: "lk_pick_evict", taskReferenceName: "pick", type: "DYNAMIC", dynamicTaskNameParam: "run", inputParameters: { run: "${workflow.input.run}" } }],
    });
    const workflowId = await startWorkflow("lk_evicted", { run: "lk_evict" });
    await eventually(() => getWorkflow(workflowId), (workflow) => workflow.tasks[0]?.inputData["mode"] === "safe", "the task to get its input");
    // As if the object had been evicted after the decision that chose the task was stored, before the look-up came
    // back: the task waits, with no input, and the definition records nothing.
    await runInDurableObject(executionStub(env, workflowId), (_instance, state) => {
      const sql = state.storage.sql;
      const row = sql.exec<{ task_id: string; data: string }>(`SELECT task_id, data FROM tasks`).one();
      const { pollable: _pollable, awaitingExternal: _awaiting, ...task } = JSON.parse(row.data) as TaskExecution;
      sql.exec(`UPDATE tasks SET data = ? WHERE task_id = ?`, JSON.stringify({ ...task, status: "SCHEDULED", inputData: {}, awaitingTaskDef: true }), row.task_id);
      const { lookedUpTaskDefs, ...definition } = JSON.parse(sql.exec<{ data: string }>(`SELECT data FROM definition`).one().data) as WorkflowDef;
      expect(lookedUpTaskDefs).toHaveProperty("lk_evict");
      sql.exec(`UPDATE definition SET data = ?`, JSON.stringify(definition));
    });
    await abortAllDurableObjects();
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "SCHEDULED" });
    const woken = await eventually(() => getWorkflow(workflowId), (workflow) => workflow.tasks[0]?.inputData["mode"] === "safe", "the task to get its input after the wake-up");
    expect(woken.tasks[0]).toMatchObject({ status: "SCHEDULED", inputData: { run: "lk_evict", mode: "safe" } });
    const [task] = await pollAll("lk_evict", 1);
    await report(task!, "COMPLETED");
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });
});

describe("task definitions too large for the execution's copy of its definition (one stored row, 2 MB)", () => {
  /**
   * Four task definitions of 700 KB each (their inputTemplate, which a task's input takes whole: under MAX_PAYLOAD_BYTES):
   * 2.8 MB together, over the 2.2 MB a row holds locally.
   */
  async function registerLargeTaskDefs(prefix: string): Promise<string[]> {
    const names = [0, 1, 2, 3].map((index) => `${prefix}_${index}`);
    for (const name of names) await registerTaskDef(name, { inputTemplate: { pad: "p".repeat(700_000) } });
    return names;
  }

  it("a dynamic fork whose tasks' registered definitions would take it over the limit fails the task that would, where the save recording them failed, retried every 2 s for good, no forked task ever starting", async () => {
    const names = await registerLargeTaskDefs("lk_large");
    await register({
      name: "lk_large_fan",
      tasks: [
        { name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} },
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { tasks: "${workflow.input.tasks}", inputs: {} }, dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs" },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
      ],
    });
    const workflowId = await startWorkflow("lk_large_fan", { tasks: names.map((name, index) => ({ name, taskReferenceName: `large_${index}`, type: "SIMPLE" })) });
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: waiting.tasks[0]!.taskId, status: "COMPLETED", outputData: {} });
    const failed = await waitFor(workflowId, ["FAILED"]);
    const byRef = new Map(failed.tasks.map((task) => [task.referenceTaskName, task]));
    // The first two fit (with the definition, under the limit) and were scheduled; the third would not.
    expect(byRef.get("large_0")?.inputData["pad"]).toHaveLength(700_000);
    expect(byRef.get("large_1")?.inputData["pad"]).toHaveLength(700_000);
    const refused = byRef.get("large_2")!;
    expect(refused.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(refused["reasonForIncompletion"]).toMatch(new RegExp(`^With the registered task definition lk_large_2, the execution's copy of its definition .* would be \\d+ bytes, over the limit of ${MAX_STORED_DEFINITION_BYTES} bytes`));
    expect(failed.reasonForIncompletion).toContain("lk_large_");
    // Readable and removable as any other.
    expect((await api("DELETE", `/api/workflow/${workflowId}/remove`)).status).toBe(200);
  });

  it("a start whose definition with its tasks' registered definitions is over the limit is a 409 saying so, and starts nothing", async () => {
    const names = await registerLargeTaskDefs("lk_large_static");
    await register({ name: "lk_large_static_flow", tasks: names.map((name, index) => ({ name, taskReferenceName: `static_${index}`, type: "SIMPLE" })) });
    const refused = await api("POST", "/api/workflow/lk_large_static_flow", {});
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as JsonObject)["message"]).toMatch(new RegExp(`^The definition with the registered task definitions of its tasks is \\d+ bytes, over the limit of ${MAX_STORED_DEFINITION_BYTES} bytes`));
    const found = await apiOk<{ totalHits: number }>("GET", `/api/workflow/search?query=${encodeURIComponent("workflowType IN (lk_large_static_flow)")}`);
    expect(found.totalHits).toBe(0);
  });

  /** Version 1 of `name` waits; version 2 also runs worker tasks of `names` (whose registered definitions are large). */
  async function registerVersions(name: string, names: readonly string[]): Promise<void> {
    const hold = { name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} };
    await register({ name, version: 1, tasks: [hold] });
    await register({ name, version: 2, tasks: [hold, ...names.map((taskName, index) => ({ name: taskName, taskReferenceName: `large_${index}`, type: "SIMPLE" }))] });
  }

  it("an upgrade to a version whose tasks' registered definitions are over the limit is a 409 saying so, and leaves the execution as it was, where it answered 500 (the save failed)", async () => {
    const names = await registerLargeTaskDefs("lk_large_up");
    await registerVersions("lk_large_up_flow", names);
    const workflowId = await startWorkflow("lk_large_up_flow", {}, "?version=1");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    const refused = await api("POST", `/api/workflow/${workflowId}/upgrade`, { name: "lk_large_up_flow", version: 2 });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as JsonObject)["message"]).toMatch(
      new RegExp(`^Cannot upgrade workflow ${workflowId} to lk_large_up_flow version 2: the definition with the registered task definitions of its tasks is \\d+ bytes, over the limit of ${MAX_STORED_DEFINITION_BYTES} bytes .*: make the task definitions smaller`),
    );
    const after = await getWorkflow(workflowId);
    expect(after).toMatchObject({ status: "RUNNING", workflowVersion: 1, updateTime: waiting["updateTime"] });
    // It runs on as version 1.
    await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: waiting.tasks[0]!.taskId, status: "COMPLETED", outputData: {} });
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("a restart with the latest definitions, whose tasks' registered definitions are over the limit, is a 409 saying so, and leaves the execution as it was, where it answered 500 (the save failed)", async () => {
    const names = await registerLargeTaskDefs("lk_large_rs");
    await registerVersions("lk_large_rs_flow", names);
    const workflowId = await startWorkflow("lk_large_rs_flow", {}, "?version=1");
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("DELETE", `/api/workflow/${workflowId}`);
    const terminated = await waitFor(workflowId, ["TERMINATED"]);
    const refused = await api("POST", `/api/workflow/${workflowId}/restart?useLatestDefinitions=true`);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as JsonObject)["message"]).toMatch(
      new RegExp(`^Cannot restart workflow ${workflowId} with the latest definitions: the definition with the registered task definitions of its tasks is \\d+ bytes, over the limit of ${MAX_STORED_DEFINITION_BYTES} bytes`),
    );
    expect(await getWorkflow(workflowId)).toMatchObject({ status: "TERMINATED", workflowVersion: 1, updateTime: terminated["updateTime"], tasks: [{ status: "CANCELED" }] });
    // A restart on the definition it has still runs.
    expect((await api("POST", `/api/workflow/${workflowId}/restart`)).status).toBe(204);
    expect(await waitFor(workflowId, (workflow) => workflow.status === "RUNNING" && workflow.tasks[0]?.status === "IN_PROGRESS")).toMatchObject({ workflowVersion: 1 });
  });
});

describe("the isolate's cache of task definitions read", () => {
  it("holds a bounded number of names: the first of 10,050 names looked up (none registered) is read again, the last is known absent", async () => {
    // The names a DYNAMIC's input chooses are looked up too, so an unbounded cache grew with every name ever asked.
    const names = Array.from({ length: 10_050 }, (_, index) => `never_registered_${index}`);
    await new TaskDefRepository(env.DB).findMany(names);
    expect(TaskDefRepository.known(names.at(-1)!)).toBeNull();
    expect(TaskDefRepository.known(names[0]!)).toBeUndefined();
  });
});
