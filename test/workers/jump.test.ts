import { describe, expect, it } from "vitest";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, getWorkflow, hits, httpTask, register, startWorkflow, startedWithJoinWaiting, statusByRef, target, waitFor, waitTask, type WorkflowJson } from "./helpers";

// Orkes' jump to a task (POST /api/workflow/{workflowId}/jump/{taskReferenceName}) through the real router, execution
// objects and D1.

/** A gate the test completes, two counted calls, and a last call echoing its input. */
async function startedAtGate(name: string): Promise<string> {
  await register({
    name,
    tasks: [
      httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true }),
      httpTask("middle", { uri: target(`/count/${name}-middle`), method: "GET" }),
      httpTask("last", { uri: target(`/count/${name}-last?from=definition`), method: "GET" }),
    ],
  });
  const workflowId = await startWorkflow(name);
  await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && (workflow.tasks[0]!.outputData as { statusCode?: number }).statusCode === 200);
  return workflowId;
}

const jump = (workflowId: string, ref: string, body?: unknown, headers?: Record<string, string>) =>
  headers === undefined ? api("POST", `/api/workflow/${workflowId}/jump/${ref}`, body) : call("POST", `/api/workflow/${workflowId}/jump/${ref}`, headers, body);
const statuses = (workflow: WorkflowJson) => workflow.tasks.map((task) => `${task.referenceTaskName} ${task.status}`);

describe("jumping to a task (POST /api/workflow/{workflowId}/jump/{taskReferenceName})", () => {
  it("forward: the waiting task and those before the target are SKIPPED, the target runs with the input given; back: it runs again", async () => {
    const workflowId = await startedAtGate("jmp");
    const response = await jump(workflowId, "last", { uri: target("/count/jmp-last?from=jump"), method: "GET" });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
    const done = await waitFor(workflowId, ["COMPLETED"]);
    expect(statuses(done)).toEqual(["gate SKIPPED", "middle SKIPPED", "last COMPLETED"]);
    expect(done.tasks[2]!.inputData).toMatchObject({ uri: target("/count/jmp-last?from=jump") });
    expect([await hits("jmp-middle"), await hits("jmp-last")]).toEqual([0, 1]);
    // A finished execution takes no jump: rerun it instead.
    const ended = await jump(workflowId, "gate");
    expect(ended.status).toBe(409);
    expect(((await ended.json()) as { message: string }).message).toBe(`Cannot jump to task gate in workflow ${workflowId}: its status is COMPLETED`);
  });

  it("back to the running task itself, without a body: it starts again with the input its definition gives", async () => {
    const workflowId = await startedAtGate("jmp-back");
    const before = (await getWorkflow(workflowId)).tasks[0]!;
    await apiOk("POST", `/api/workflow/${workflowId}/jump/gate`);
    const again = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && workflow.tasks[0]!["startTime"] !== before["startTime"]);
    expect(again.tasks.map((task) => task.taskId)).toEqual([before.taskId]);
    expect(again.tasks[0]!.inputData).toMatchObject({ uri: target("/echo/gate") });
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    expect(statuses(await waitFor(workflowId, ["COMPLETED"]))).toEqual(["gate COMPLETED", "middle COMPLETED", "last COMPLETED"]);
  });

  it("takes the task from the taskReferenceName query parameter, as the Python, Go and JavaScript clients send it with the path's placeholder unfilled", async () => {
    const workflowId = await startedAtGate("jmp-query");
    await apiOk("POST", `/api/workflow/${workflowId}/jump/%7BtaskReferenceName%7D?taskReferenceName=last`, {});
    expect(statuses(await waitFor(workflowId, ["COMPLETED"]))).toEqual(["gate SKIPPED", "middle SKIPPED", "last COMPLETED"]);
    expect([await hits("jmp-query-middle"), await hits("jmp-query-last")]).toEqual([0, 1]);
  });

  it("without a task named, in the path or the query (the clients' default), goes on from the beginning, as Orkes documents a null taskReferenceName", async () => {
    await register({
      name: "jmp-start",
      tasks: [
        httpTask("first", { uri: target("/count/jmp-start-first"), method: "GET" }),
        httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true }),
      ],
    });
    const workflowId = await startWorkflow("jmp-start");
    const atGate = (workflow: WorkflowJson) => workflow.tasks[1]?.status === "IN_PROGRESS" && (workflow.tasks[1]!.outputData as { statusCode?: number }).statusCode === 200;
    const before = await waitFor(workflowId, atGate);
    // The Python, Go and JavaScript clients leave the placeholder in the path; an empty query parameter names nothing either.
    await apiOk("POST", `/api/workflow/${workflowId}/jump/%7BtaskReferenceName%7D?taskReferenceName=`, {});
    const again = await waitFor(workflowId, (workflow) => atGate(workflow) && workflow.tasks[0]!["endTime"] !== before.tasks[0]!["endTime"]);
    expect(statuses(again)).toEqual(["first COMPLETED", "gate IN_PROGRESS"]);
    expect(again.tasks[0]!.taskId).toBe(before.tasks[0]!.taskId);
    expect(await hits("jmp-start-first")).toBe(2);
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    expect(statuses(await waitFor(workflowId, ["COMPLETED"]))).toEqual(["first COMPLETED", "gate COMPLETED"]);
  });

  it("past a JOIN waiting for a branch: the branch's waiting task and those after it, the JOIN and the tasks up to the target are SKIPPED; the target runs", async () => {
    const workflowId = await startedWithJoinWaiting("jmp-fork-past");
    await apiOk("POST", `/api/workflow/${workflowId}/jump/end`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"]);
    expect(done.status).toBe("COMPLETED");
    expect(statusByRef(done)).toEqual({ fan: "COMPLETED", l1: "SKIPPED", l2: "SKIPPED", r1: "COMPLETED", join: "SKIPPED", post: "SKIPPED", end: "COMPLETED" });
    expect([await hits("jmp-fork-past-l2"), await hits("jmp-fork-past-post"), await hits("jmp-fork-past-end")]).toEqual([0, 0, 1]);
  });

  it("past a JOIN whose branch waits in a nested fork: every branch's waiting task is SKIPPED, the inner JOIN too", async () => {
    const inner = { name: "inner", taskReferenceName: "inner", type: "FORK_JOIN", forkTasks: [[waitTask("i1")], [waitTask("i2")]] };
    const workflowId = await startedWithJoinWaiting("jmp-fork-nested", [inner, { name: "inner_join", taskReferenceName: "inner_join", type: "JOIN", joinOn: ["i1", "i2"] }]);
    await apiOk("POST", `/api/workflow/${workflowId}/jump/post`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"]);
    expect(done.status).toBe("COMPLETED");
    expect(statusByRef(done)).toEqual({ fan: "COMPLETED", inner: "COMPLETED", i1: "SKIPPED", i2: "SKIPPED", inner_join: "SKIPPED", r1: "COMPLETED", join: "SKIPPED", post: "COMPLETED", end: "COMPLETED" });
  });

  it("from before a fork to past its JOIN: the fork, never started, is SKIPPED with its JOIN and runs no branch", async () => {
    await register({
      name: "jmp-fork-ahead",
      tasks: [
        waitTask("gate"),
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[httpTask("l1", { uri: target("/count/jmp-fork-ahead-l1"), method: "GET" })], [waitTask("r1")]] },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["l1", "r1"] },
        httpTask("end", { uri: target("/count/jmp-fork-ahead-end"), method: "GET" }),
      ],
    });
    const workflowId = await startWorkflow("jmp-fork-ahead");
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/workflow/${workflowId}/jump/end`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"]);
    expect(statuses(done)).toEqual(["gate SKIPPED", "fan SKIPPED", "join SKIPPED", "end COMPLETED"]);
    expect(await hits("jmp-fork-ahead-l1")).toBe(0);
  });

  it("back to the fork while its JOIN waits: the fork runs again with fresh branches, the JOIN waiting for both again", async () => {
    const workflowId = await startedWithJoinWaiting("jmp-fork-back");
    await apiOk("POST", `/api/workflow/${workflowId}/jump/fan`, {});
    const again = await waitFor(workflowId, (workflow) => ["l1", "r1", "join"].every((ref) => statusByRef(workflow)[ref] === "IN_PROGRESS"));
    expect(statuses(again)).toEqual(["fan COMPLETED", "l1 IN_PROGRESS", "r1 IN_PROGRESS", "join IN_PROGRESS"]);
    await apiOk("POST", `/api/tasks/${workflowId}/r1/COMPLETED`, { again: true });
    await apiOk("POST", `/api/tasks/${workflowId}/l1/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"]);
    expect(statusByRef(done)).toEqual({ fan: "COMPLETED", l1: "COMPLETED", l2: "COMPLETED", r1: "COMPLETED", join: "COMPLETED", post: "COMPLETED", end: "COMPLETED" });
    expect(done.tasks.find((task) => task.referenceTaskName === "join")!.outputData).toMatchObject({ r1: { again: true } });
  });

  it("into a fork's branch, or to its JOIN, is a 400 saying where to jump instead, changing nothing", async () => {
    const workflowId = await startedWithJoinWaiting("jmp-fork-into");
    const before = await getWorkflow(workflowId);
    for (const ref of ["l1", "l2", "r1"]) {
      const refused = await jump(workflowId, ref, {});
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { message: string }).message).toBe(`Task ${ref} of workflow ${workflowId} is inside a SWITCH, FORK_JOIN or DO_WHILE: only the workflow's top-level tasks can be jumped to`);
    }
    const join = await jump(workflowId, "join", {});
    expect(join.status).toBe(400);
    expect(((await join.json()) as { message: string }).message).toBe(`Task join of workflow ${workflowId} is a JOIN, which waits for its fork's branches: jump to fan instead`);
    const after = await getWorkflow(workflowId);
    expect([statuses(after), after["updateTime"]]).toEqual([statuses(before), before["updateTime"]]);
  });

  it("to a task after a FORK_JOIN_DYNAMIC whose JOIN waits: the waiting branch and the JOIN are SKIPPED", async () => {
    await register({
      name: "jmp-dynamic",
      tasks: [
        { name: "dyn", taskReferenceName: "dyn", type: "FORK_JOIN_DYNAMIC", dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs", inputParameters: { tasks: [waitTask("d1"), waitTask("d2")], inputs: { d1: {}, d2: {} } } },
        { name: "djoin", taskReferenceName: "djoin", type: "JOIN" },
        httpTask("end", { uri: target("/count/jmp-dynamic-end"), method: "GET" }),
      ],
    });
    const workflowId = await startWorkflow("jmp-dynamic");
    await waitFor(workflowId, (workflow) => statusByRef(workflow)["djoin"] === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${workflowId}/d1/COMPLETED`, {});
    await waitFor(workflowId, (workflow) => statusByRef(workflow)["d1"] === "COMPLETED");
    await apiOk("POST", `/api/workflow/${workflowId}/jump/end`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"]);
    expect(statuses(done)).toEqual(["dyn COMPLETED", "d1 COMPLETED", "d2 SKIPPED", "djoin SKIPPED", "end COMPLETED"]);
  });

  it("refuses, changing nothing: an unknown task, a bad body, a caller without WORKFLOW_ADMIN on the workflow", async () => {
    const workflowId = await startedAtGate("jmp-refused");
    const before = await getWorkflow(workflowId);
    const unknown = await jump(workflowId, "nope", {});
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { message: string }).message).toContain("Task reference name nope is not a task of workflow");
    expect((await jump(workflowId, "last", [1, 2])).status).toBe(400);
    expect((await jump(workflowId, "last", "null")).status).toBe(400);
    const reader = await createUser(`jmp-reader-${crypto.randomUUID()}`, { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:jmp-refused" }] });
    expect((await jump(workflowId, "last", {}, orkes(reader.token))).status).toBe(403);
    expect((await jump(crypto.randomUUID(), "last", {})).status).toBe(404);
    const after = await getWorkflow(workflowId);
    expect([statuses(after), after["updateTime"]]).toEqual([statuses(before), before["updateTime"]]);
    expect(await hits("jmp-refused-last")).toBe(0);
  });
});
