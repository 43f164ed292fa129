import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { executionStub } from "../../src/worker/executions";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, eventually, getWorkflow, register, startWorkflow, waitFor, waitForIndexRow, type TaskJson } from "./helpers";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const wait = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: { note: "${workflow.input.note}" } });
const simple = (name: string, ref: string): JsonObject => ({ name, taskReferenceName: ref, type: "SIMPLE", inputParameters: {} });

/** A started execution of `name`, once its search row is written (a task is found by id through it), with its tasks. */
async function startedAndIndexed(name: string, input: JsonObject = {}): Promise<{ workflowId: string; tasks: TaskJson[] }> {
  const workflowId = await startWorkflow(name, input);
  await waitForIndexRow(workflowId, "RUNNING");
  return { workflowId, tasks: (await getWorkflow(workflowId)).tasks };
}

/**
 * A started execution of `name` (one HUMAN task) whose task holds a random id, not sharing its execution's prefix, as
 * code older than the id scheme made it, with its search rows written again under the new code (evicted, woken).
 */
async function startedWithOlderTaskId(name: string): Promise<{ workflowId: string; olderId: string }> {
  await register({ name, tasks: [{ name: "approve", taskReferenceName: "approve", type: "HUMAN" }] });
  const { workflowId, tasks } = await startedAndIndexed(name);
  // As the older code stored it: a random task id, and its search rows written under an index signature of an older form.
  const olderId = crypto.randomUUID();
  await runInDurableObject(executionStub(env, workflowId), (_instance, state) => {
    state.storage.sql.exec(`UPDATE tasks SET task_id = ?1, data = json_set(data, '$.taskId', ?1) WHERE task_id = ?2`, olderId, tasks[0]!.taskId);
    state.storage.sql.exec(`UPDATE meta SET value = 'RUNNING' WHERE key = 'indexed'`);
  });
  await abortAllDurableObjects();
  // Woken under the new code, it writes its rows again: the task's row names the id it holds.
  expect((await getWorkflow(workflowId)).tasks[0]!.taskId).toBe(olderId);
  await eventually(() => env.DB.prepare("SELECT workflow_id FROM task_index WHERE task_id = ?1").bind(olderId).first<{ workflow_id: string }>(), (row) => row?.workflow_id === workflowId, "the task's row");
  return { workflowId, olderId };
}

describe("GET /api/tasks/{taskId} (Conductor's getTask)", () => {
  it("answers the task as its workflow shows it; its id is a version 4 UUID sharing its execution id's first 64 bits", async () => {
    await register({ name: "tb_read", tasks: [wait("hold"), simple("tb_worker_task", "work")] });
    const { workflowId, tasks } = await startedAndIndexed("tb_read", { note: "first" });
    const [hold] = tasks;
    expect(hold!.taskId).toMatch(UUID_V4);
    expect(hold!.taskId.slice(0, 19)).toBe(workflowId.slice(0, 19));
    expect(await apiOk<TaskJson>("GET", `/api/tasks/${hold!.taskId}`)).toEqual(hold);
    // Upper case names the same task, as it does an execution.
    expect((await apiOk<TaskJson>("GET", `/api/tasks/${hold!.taskId.toUpperCase()}`)).taskId).toBe(hold!.taskId);

    // A later task, a retry's new instance too, is found as well.
    await apiOk("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, { done: true });
    const work = (await waitFor(workflowId, (workflow) => workflow.tasks.length === 2)).tasks[1]!;
    expect(await apiOk<TaskJson>("GET", `/api/tasks/${work.taskId}`)).toMatchObject({ taskId: work.taskId, referenceTaskName: "work", taskType: "tb_worker_task", status: "SCHEDULED", workflowInstanceId: workflowId });
  });

  it("shows the fields Conductor's Task JSON always holds: responseTimeoutSeconds (a system task's 0) and subworkflowChanged", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "tb_fields_task", timeoutSeconds: 60, responseTimeoutSeconds: 30, ownerEmail: "a@b.c" }]);
    await register({ name: "tb_fields", tasks: [wait("hold"), simple("tb_fields_task", "work")] });
    const { workflowId, tasks } = await startedAndIndexed("tb_fields", { note: "x" });
    // A long and a boolean in Conductor's Task: a typed client reads 0 and false, never a missing field.
    expect(await apiOk<TaskJson>("GET", `/api/tasks/${tasks[0]!.taskId}`)).toMatchObject({ taskType: "WAIT", responseTimeoutSeconds: 0, subworkflowChanged: false });
    await apiOk("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, {});
    const work = (await waitFor(workflowId, (workflow) => workflow.tasks.length === 2)).tasks[1]!;
    expect(work).toMatchObject({ taskType: "tb_fields_task", responseTimeoutSeconds: 30, subworkflowChanged: false });
  });

  it("finds a task by the id a start's answer just gave, before its execution's search row is written (the JavaScript client's getTask after executeWorkflow)", async () => {
    await register({ name: "by_id_at_once", tasks: [wait("hold")] });
    const run = await apiOk<{ workflowId: string; tasks: TaskJson[] }>("POST", "/api/workflow/execute/by_id_at_once/1", { note: "now" });
    const taskId = run.tasks[0]!.taskId;
    expect(await apiOk("GET", `/api/tasks/${taskId}`)).toMatchObject({ taskId, workflowInstanceId: run.workflowId, referenceTaskName: "hold", status: "IN_PROGRESS" });
  });

  it("answers 404 for an id no execution holds, one that is no UUID, and a task of a removed execution", async () => {
    await register({ name: "tb_gone", tasks: [wait("hold")] });
    const { workflowId, tasks } = await startedAndIndexed("tb_gone");
    const unknown = `${workflowId.slice(0, 19)}8000-000000000000`;
    for (const id of [unknown, crypto.randomUUID(), "not-a-task"]) {
      const response = await api("GET", `/api/tasks/${id}`);
      expect(response.status, id).toBe(404);
      expect(await response.json()).toMatchObject({ status: 404, error: "NOT_FOUND" });
    }
    await apiOk("DELETE", `/api/workflow/${workflowId}`);
    await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
    expect((await api("GET", `/api/tasks/${tasks[0]!.taskId}`)).status).toBe(404);
  });

  it("finds a task whose id does not share its execution's prefix (made by code older than the scheme, running on after a deploy) once its execution woke", async () => {
    const { workflowId, olderId } = await startedWithOlderTaskId("tb_older_ids");
    expect((await apiOk<TaskJson>("GET", `/api/tasks/${olderId}`)).taskId).toBe(olderId);
    expect(await apiOk("GET", `/api/human/tasks/${olderId}`)).toMatchObject({ taskId: olderId, workflowId });
    await apiOk("POST", `/api/tasks/${olderId}/log`, "still here");
    expect(await apiOk("GET", `/api/tasks/${olderId}/log`)).toMatchObject([{ log: "still here", taskId: olderId }]);
    await apiOk("POST", `/api/human/tasks/${olderId}/update?complete=true`, { approved: true });
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]).toMatchObject({ taskId: olderId, status: "COMPLETED", outputData: { approved: true } });
  });

  it("finds tasks of older ids, in upper case and sharing an execution in a bulk human task delete, as one at a time: the ids looked up together (by prefix, then the task index)", async () => {
    await register({
      name: "tb_pair_bulk",
      tasks: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[{ name: "a", taskReferenceName: "a", type: "HUMAN" }], [{ name: "b", taskReferenceName: "b", type: "HUMAN" }]] },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["a", "b"] },
      ],
    });
    const { olderId } = await startedWithOlderTaskId("tb_older_bulk");
    // Two tasks of one execution (one prefix), and one whose execution the start's answer just gave (no search row yet).
    const pair = (await startedAndIndexed("tb_pair_bulk")).tasks.filter((task) => task.taskType === "HUMAN").map((task) => task.taskId);
    expect(pair).toHaveLength(2);
    const fresh = (await apiOk<{ tasks: TaskJson[] }>("POST", "/api/workflow/execute/tb_older_bulk/1", {})).tasks[0]!.taskId;
    const ids = ["not-a-task", olderId.toUpperCase(), pair[0]!.toUpperCase(), pair[1]!, fresh, pair[1]!.toUpperCase()];
    const bulk = await apiOk<{ deleted: string[]; failed: Record<string, string> }>("DELETE", "/api/human/tasks/delete", ids);
    expect(bulk).toMatchObject({ deleted: [olderId.toUpperCase(), pair[0]!.toUpperCase(), pair[1]!, fresh] });
    expect(Object.keys(bulk.failed)).toEqual(["not-a-task"]);
    for (const id of [olderId, ...pair, fresh]) expect(await apiOk("GET", `/api/human/tasks/${id}`)).toMatchObject({ taskId: id, state: "DELETED" });
  });

  it("shows a task to whoever may read its workflow, or read or execute tasks of its name, and to no one else (not by its reference name)", async () => {
    await register({ name: "tb_rights", tasks: [simple("tb_rights_task", "work")] });
    const { tasks } = await startedAndIndexed("tb_rights");
    const path = `/api/tasks/${tasks[0]!.taskId}`;
    const reader = await createUser("tb-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:tb_rights" }] });
    const worker = await createUser("tb-worker", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:tb_rights_task" }] });
    // The spec's TASK_READ "for a given task": by its name (a TASK_DEF grant); a reference name, which any workflow may
    // give a task, reads nothing.
    const taskReader = await createUser("tb-task-reader", { directPermissions: [{ action: "TASK_READ", scope: "task:tb_rights_task" }] });
    const refReader = await createUser("tb-ref-reader", { directPermissions: [{ action: "TASK_READ", scope: "task:work" }] });
    const other = await createUser("tb-other", {
      directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:tb_read" }, { action: "TASK_EXECUTE", scope: "task:tb_worker_task" }, { action: "TASK_READ", scope: "task:tb_worker_task" }],
    });
    expect((await call("GET", path, orkes(reader.token))).status).toBe(200);
    expect((await call("GET", path, orkes(worker.token))).status).toBe(200);
    expect(await (await call("GET", path, orkes(taskReader.token))).json()).toMatchObject({ taskId: tasks[0]!.taskId, referenceTaskName: "work" });
    expect((await call("GET", path, orkes(refReader.token))).status).toBe(403);
    const refused = await call("GET", path, orkes(other.token));
    expect(refused.status).toBe(403);
    // The refusal names what would be needed (as every refusal does), never the task itself, nor its name, nor (to a
    // caller holding nothing on it) its workflow: as an unknown id's refusal reads.
    expect(await refused.json()).toEqual({ status: 403, error: "PERMISSION_DENIED", retryable: false, message: `Permission denied: GET ${path} needs TASK_READ on task:<task name> or WORKFLOW_READ on workflow:<workflow> or TASK_EXECUTE on task:<task name>` });
    const unknownPath = `/api/tasks/${crypto.randomUUID()}`;
    expect(await (await call("GET", unknownPath, orkes(other.token))).json()).toMatchObject({ status: 403, message: `Permission denied: GET ${unknownPath} needs TASK_READ on task:<task name> or WORKFLOW_READ on workflow:<workflow> or TASK_EXECUTE on task:<task name>` });
  });
});

describe("Conductor's pending task by reference name and QueueAdminResource updates", () => {
  it("GET /api/tasks/in_progress/{workflowId}/{taskRefName} answers the waiting task; none once it has ended, nor for a name the workflow lacks", async () => {
    await register({ name: "tb_pending", tasks: [wait("hold"), wait("next")] });
    const { workflowId, tasks } = await startedAndIndexed("tb_pending", { note: "n" });
    expect(await apiOk<TaskJson>("GET", `/api/tasks/in_progress/${workflowId}/hold`)).toEqual(tasks[0]);
    await apiOk("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, {});
    const ended = await api("GET", `/api/tasks/in_progress/${workflowId}/hold`);
    expect(ended.status).toBe(404);
    expect(await ended.json()).toMatchObject({ error: "NOT_FOUND", message: `Workflow ${workflowId} has no pending task with reference name hold` });
    expect((await api("GET", `/api/tasks/in_progress/${workflowId}/nope`)).status).toBe(404);
    // A workflow id no execution has is said to be unknown, not a workflow without that task.
    const unknownId = crypto.randomUUID();
    const unknown = await api("GET", `/api/tasks/in_progress/${unknownId}/hold`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: "NOT_FOUND", message: `Workflow ${unknownId} not found` });
    // Read as the workflow is.
    const reader = await createUser("tb-pending-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:tb_pending" }] });
    const other = await createUser("tb-pending-other", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:tb_read" }, { action: "TASK_READ", scope: "task:hold" }] });
    const refReader = await createUser("tb-pending-ref-reader", { directPermissions: [{ action: "TASK_READ", scope: "task:next" }] });
    expect((await call("GET", `/api/tasks/in_progress/${workflowId}/next`, orkes(reader.token))).status).toBe(200);
    expect((await call("GET", `/api/tasks/in_progress/${workflowId}/next`, orkes(refReader.token))).status).toBe(403);
    expect((await call("GET", `/api/tasks/in_progress/${workflowId}/next`, orkes(other.token))).status).toBe(403);
  });

  it("POST /api/queue/update/{workflowId}/{taskRefName}/{status} and …/task/{taskId}/{status} complete a waiting task with the body as its output; a bad status changes nothing", async () => {
    await register({ name: "tb_queue", tasks: [wait("first"), wait("second")] });
    const { workflowId, tasks } = await startedAndIndexed("tb_queue");
    const before = JSON.stringify(await getWorkflow(workflowId));
    for (const path of [`/api/queue/update/${workflowId}/first/SKIPPED`, `/api/queue/update/${workflowId}/task/${tasks[0]!.taskId}/FAILED_WITH_TERMINAL_ERROR`]) {
      const refused = await api("POST", path, { a: 1 });
      expect(refused.status, path).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ path: "status", message: "status must be one of IN_PROGRESS, COMPLETED, FAILED" }] });
    }
    expect(JSON.stringify(await getWorkflow(workflowId))).toBe(before);
    const byRef = await api("POST", `/api/queue/update/${workflowId}/first/COMPLETED`, { approved: true });
    expect(byRef.status).toBe(200);
    expect(await byRef.text()).toBe("");
    const second = (await waitFor(workflowId, (workflow) => workflow.tasks.length === 2)).tasks[1]!;
    expect((await api("POST", `/api/queue/update/${workflowId}/task/${second.taskId}/COMPLETED`, { by: "id" })).status).toBe(200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => task.outputData)).toEqual([{ approved: true }, { by: "id" }]);
    // A reference whose task has ended finds no running task to update: the contract's 409, as any by-reference update
    // (Orkes answers 404); by id, a 409 too.
    expect((await api("POST", `/api/queue/update/${workflowId}/first/COMPLETED`, {})).status).toBe(409);
    expect((await api("POST", `/api/queue/update/${workflowId}/task/${second.taskId}/COMPLETED`, {})).status).toBe(409);
  });

  it("POST /api/queue/update/{workflowId}/task/{taskId}/FAILED?reason= fails the task with that reason, its body merged into the output; a task ended meanwhile is a 409", async () => {
    await register({ name: "tb_queue_reason", tasks: [wait("first")] });
    const { workflowId, tasks } = await startedAndIndexed("tb_queue_reason");
    const path = `/api/queue/update/${workflowId}/task/${tasks[0]!.taskId}/FAILED?reason=${encodeURIComponent("refused by hand")}`;
    // A `reasonForIncompletion` key in the body stays an output field, as Conductor puts the whole body into the output.
    expect((await api("POST", path, { checked: true, reasonForIncompletion: "a field" })).status).toBe(200);
    const failed = await waitFor(workflowId, ["FAILED"]);
    expect(failed.tasks[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: "refused by hand", outputData: { checked: true, reasonForIncompletion: "a field" } });
    // Sent again (a user failing a task that has ended since): refused, not answered as taken.
    expect((await api("POST", path, { checked: true })).status).toBe(409);
  });
});
