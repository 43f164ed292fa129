import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { executionStub } from "../../src/worker/executions";
import { call, createUser, orkes } from "./auth-helpers";
import { apiOk, eventually, getWorkflow, register, startWorkflow, waitFor, waitForIndexRow, type WorkflowJson } from "./helpers";

const ENDED = ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"];
const wait = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });
const updateTask = (ref: string, input: JsonObject, extra: JsonObject = {}): JsonObject => ({ name: ref, taskReferenceName: ref, type: "UPDATE_TASK", inputParameters: input, ...extra });
const terminateWorkflow = (ref: string, input: JsonObject, extra: JsonObject = {}): JsonObject => ({ name: ref, taskReferenceName: ref, type: "TERMINATE_WORKFLOW", inputParameters: input, ...extra });
const statuses = (workflow: WorkflowJson) => workflow.tasks.map((task) => `${task.referenceTaskName}:${task.status}`);

/** Runs a registered workflow to its end through the synchronous execute endpoint. */
async function execute(name: string, input: JsonObject): Promise<WorkflowJson> {
  const run = await apiOk<WorkflowJson>("POST", `/api/workflow/execute/${name}/1?waitForSeconds=10`, { input });
  return run.status === "RUNNING" ? waitFor(run.workflowId, ENDED) : run;
}

describe("UPDATE_TASK", () => {
  it("completes a task another workflow waits in, by that workflow's id and the task's reference name, its output replaced; that workflow goes on", async () => {
    await register({ name: "ut_waiter", tasks: [wait("approval"), { name: "after", taskReferenceName: "after", type: "NOOP" }], outputParameters: { approved: "${approval.output.approved}", by: "${approval.output.by}" } });
    await register({ name: "ut_updater", tasks: [updateTask("approve", { taskStatus: "COMPLETED", workflowId: "${workflow.input.waiter}", taskRefName: "approval", taskOutput: { approved: true } })] });
    const waiter = await startWorkflow("ut_waiter");
    // Something the update replaces (Orkes' mergeOutput defaults to false).
    await apiOk("POST", "/api/tasks", { workflowInstanceId: waiter, taskId: (await getWorkflow(waiter)).tasks[0]!.taskId, status: "IN_PROGRESS", outputData: { by: "someone" } });
    const updater = await execute("ut_updater", { waiter });
    expect(updater.status, String(updater["reasonForIncompletion"])).toBe("COMPLETED");
    const approval = (await getWorkflow(waiter)).tasks[0]!;
    // Orkes' output names the task updated `updatedTaskId` and repeats the output given.
    expect(updater.tasks[0]!.status).toBe("COMPLETED");
    expect(updater.tasks[0]!.outputData).toEqual({ workflowId: waiter, taskId: approval.taskId, updatedTaskId: approval.taskId, taskStatus: "COMPLETED", taskOutput: { approved: true } });
    const done = await waitFor(waiter, ENDED);
    expect(done.status).toBe("COMPLETED");
    expect(statuses(done)).toEqual(["approval:COMPLETED", "after:COMPLETED"]);
    expect(done.output).toEqual({ approved: true, by: null });
  });

  it("leaves out the taskOutput echo when it would not fit beside the rest of its output: the update is done", async () => {
    await register({ name: "ut_big_waiter", tasks: [wait("gate")] });
    await register({ name: "ut_big_updater", tasks: [updateTask("open", { taskStatus: "COMPLETED", workflowId: "${workflow.input.waiter}", taskRefName: "gate", taskOutput: "${workflow.input.output}" })] });
    const waiter = await startWorkflow("ut_big_waiter");
    // A blob that fits the UPDATE_TASK's input (MAX_PAYLOAD_BYTES) but not the echo beside its output's three ids.
    const limit = 768 * 1024;
    const id = crypto.randomUUID();
    const echoOverhead = JSON.stringify({ workflowId: id, taskId: id, updatedTaskId: id, taskStatus: "COMPLETED", taskOutput: { blob: "" } }).length;
    const output = { blob: "x".repeat(limit - echoOverhead + 1) };
    expect(JSON.stringify({ taskStatus: "COMPLETED", workflowId: id, taskRefName: "gate", taskOutput: output }).length).toBeLessThanOrEqual(limit);
    const updater = await execute("ut_big_updater", { waiter, output });
    expect(updater.status, String(updater["reasonForIncompletion"])).toBe("COMPLETED");
    expect(updater.tasks[0]!.outputData).toEqual({ workflowId: waiter, taskId: expect.any(String), updatedTaskId: expect.any(String), taskStatus: "COMPLETED" });
    expect((await waitFor(waiter, ENDED)).tasks[0]!.outputData).toEqual(output);
  });

  it("merges its output with mergeOutput, finds a task by its id, and completes a task another branch of its own workflow waits in", async () => {
    await register({ name: "ut_by_id", tasks: [wait("hold")], outputParameters: { held: "${hold.output}" } });
    await register({ name: "ut_id_updater", tasks: [updateTask("release", { taskStatus: "COMPLETED", taskId: "${workflow.input.taskId}", taskOutput: { released: 1 }, mergeOutput: true })] });
    const held = await startWorkflow("ut_by_id");
    const hold = (await getWorkflow(held)).tasks[0]!;
    await apiOk("POST", "/api/tasks", { workflowInstanceId: held, taskId: hold.taskId, status: "IN_PROGRESS", outputData: { kept: 0 } });
    // A task is found by its id through the execution index, which lags a start by up to a second.
    await waitForIndexRow(held, "RUNNING");
    expect((await execute("ut_id_updater", { taskId: hold.taskId.toUpperCase() })).status).toBe("COMPLETED");
    expect((await waitFor(held, ENDED)).output).toEqual({ held: { kept: 0, released: 1 } });

    // Its own workflow: a branch opens the gate the other branch waits at (its workflowId left to default to its own).
    await register({
      name: "ut_self",
      tasks: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[wait("gate")], [updateTask("open", { taskStatus: "COMPLETED", taskRefName: "gate", taskOutput: { by: "open" } })]] },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["gate", "open"] },
      ],
      outputParameters: { gate: "${gate.output.by}" },
    });
    const self = await execute("ut_self", {});
    expect(self.status).toBe("COMPLETED");
    expect(statuses(self)).toEqual(["fork:COMPLETED", "gate:COMPLETED", "open:COMPLETED", "join:COMPLETED"]);
    expect(self.output).toEqual({ gate: "open" });
  });

  it("run again (a rerun of its workflow from it) updates the task the reference names now, not the one its first run updated", async () => {
    const loop: JsonObject = { name: "rounds", taskReferenceName: "rounds", type: "DO_WHILE", inputParameters: {}, loopOver: [wait("gate")], loopCondition: "$.gate.again === true" };
    await register({ name: "ut_rounds", tasks: [loop] });
    await register({ name: "ut_poker", tasks: [updateTask("poke", { taskStatus: "COMPLETED", workflowId: "${workflow.input.rounds}", taskRefName: "gate", taskOutput: { again: true } })] });
    const rounds = await startWorkflow("ut_rounds");
    const gateRun = async (ref: string) => (await waitFor(rounds, (w) => w.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS"))).tasks.find((task) => task.referenceTaskName === ref)!;
    await gateRun("gate__1");
    const poker = await execute("ut_poker", { rounds });
    expect(poker.status).toBe("COMPLETED");
    const second = await gateRun("gate__2");

    await apiOk("POST", `/api/workflow/${poker.workflowId}/rerun`, { reRunFromTaskId: poker.tasks[0]!.taskId });
    const rerun = await waitFor(poker.workflowId, (w) => w.status === "COMPLETED" && w.tasks[0]!.outputData["taskId"] === second.taskId);
    expect(rerun.tasks[0]!.outputData).toMatchObject({ workflowId: rounds, taskId: second.taskId, taskStatus: "COMPLETED" });
    await gateRun("gate__3");
    expect(statuses(await getWorkflow(rounds))).toEqual(["rounds:IN_PROGRESS", "gate__1:COMPLETED", "gate__2:COMPLETED", "gate__3:IN_PROGRESS"]);
  });

  it("fails, saying why, when the task is not found, not waiting, or in no workflow; and its update sent again is taken as done", async () => {
    await register({ name: "ut_target", tasks: [wait("only")] });
    await register({ name: "ut_missing", tasks: [updateTask("poke", { taskStatus: "COMPLETED", workflowId: "${workflow.input.target}", taskRefName: "${workflow.input.ref}" })] });
    const targetId = await startWorkflow("ut_target");
    const missingRef = await execute("ut_missing", { target: targetId, ref: "nowhere" });
    expect(missingRef.tasks[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: `Task not updated: Workflow ${targetId} has no task with reference name nowhere` });
    const noWorkflow = await execute("ut_missing", { target: crypto.randomUUID(), ref: "only" });
    expect(noWorkflow.tasks[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringMatching(/^Workflow [0-9a-f-]{36} not found$/) });
    const badId = await execute("ut_missing", { target: "not-an-id", ref: "only" });
    expect(badId.tasks[0]!["reasonForIncompletion"]).toBe("Workflow not-an-id not found");
    expect((await getWorkflow(targetId)).tasks[0]!.status).toBe("IN_PROGRESS");

    const first = await execute("ut_missing", { target: targetId, ref: "only" });
    expect(first.status).toBe("COMPLETED");
    // No taskOutput given: none repeated.
    expect(first.tasks[0]!.outputData).toEqual({ workflowId: targetId, taskId: expect.any(String), updatedTaskId: first.tasks[0]!.outputData["taskId"], taskStatus: "COMPLETED" });
    expect((await waitFor(targetId, ENDED)).status).toBe("COMPLETED");
    // Another update of the ended task is refused (retryable: a task may not be waiting yet)...
    const late = await execute("ut_missing", { target: targetId, ref: "only" });
    expect(late.tasks[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringMatching(/^Task not updated: Task only \(.*\) is not pending: its status is COMPLETED$/) });
    // ...but the first one's, sent again (its dispatch repeated after an eviction), is answered as applied.
    const from = { byTask: `${first.workflowId}/${first.tasks[0]!.taskId}`, replaceOutput: true };
    const repeated = await executionStub(env, targetId).updateTaskByRef("only", "COMPLETED", { other: 1 }, from);
    expect(repeated).toMatchObject({ ok: true });
    expect((await getWorkflow(targetId)).tasks[0]!.outputData).toEqual({});
  });

  it("updates only tasks of workflows whoever started it may manage: otherwise it fails for good and the task is left as it was", async () => {
    await register({ name: "ut_guarded", tasks: [wait("vault")] });
    await register({ name: "ut_mine", tasks: [updateTask("open", { taskStatus: "COMPLETED", workflowId: "${workflow.input.target}", taskRefName: "vault" })] });
    const eve = await createUser("ut-eve", { directPermissions: ["WORKFLOW_ADMIN", "WORKFLOW_READ"].map((action) => ({ action, scope: "workflow:ut_mine" })) });
    const guarded = await startWorkflow("ut_guarded");
    const started = await call("POST", "/api/workflow/ut_mine", orkes(eve.token), { target: guarded });
    expect(started.status).toBe(200);
    const mine = await waitFor(await started.text(), ENDED);
    expect(mine.status).toBe("FAILED");
    // The reason, which Eve reads, names the execution she gave, not its workflow, which she holds nothing on.
    expect(mine.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: `Task not updated: whoever started ut_mine may not update the tasks of execution ${guarded} (it needs WORKFLOW_ADMIN on its workflow)` });
    expect(JSON.stringify(mine)).not.toContain("ut_guarded");
    expect((await getWorkflow(guarded)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", outputData: {} });

    // Named by its task's id, the task's execution (found through the index, never given) is not named either.
    await register({ name: "ut_mine_by_id", tasks: [updateTask("open", { taskStatus: "COMPLETED", taskId: "${workflow.input.taskId}" })] });
    const mallory = await createUser("ut-mallory", { directPermissions: ["WORKFLOW_ADMIN", "WORKFLOW_READ"].map((action) => ({ action, scope: "workflow:ut_mine_by_id" })) });
    const vault = (await getWorkflow(guarded)).tasks[0]!;
    await waitForIndexRow(guarded, "RUNNING");
    const byId = await call("POST", "/api/workflow/ut_mine_by_id", orkes(mallory.token), { taskId: vault.taskId });
    expect(byId.status).toBe(200);
    const mineById = await waitFor(await byId.text(), ENDED);
    expect(mineById.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: `Task not updated: whoever started ut_mine_by_id may not update task ${vault.taskId} (it needs WORKFLOW_ADMIN on its workflow)` });
    expect(JSON.stringify(mineById)).not.toContain(guarded);
    expect((await getWorkflow(guarded)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", outputData: {} });
  });
});

describe("TERMINATE_WORKFLOW", () => {
  it("terminates the running workflows it names with its reason, lists one not found or already ended, and goes on", async () => {
    await register({ name: "tw_victim", tasks: [wait("idle")] });
    await register({ name: "tw_done", tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP" }] });
    await register({ name: "tw_terminator", tasks: [terminateWorkflow("stop", { workflowId: "${workflow.input.ids}", terminationReason: "superseded" }), { name: "after", taskReferenceName: "after", type: "NOOP" }] });
    const victims = [await startWorkflow("tw_victim"), await startWorkflow("tw_victim")];
    const finished = (await execute("tw_done", {})).workflowId;
    const unknown = crypto.randomUUID();
    const run = await execute("tw_terminator", { ids: [...victims, finished, unknown] });
    expect(run.status).toBe("COMPLETED");
    expect(run.tasks[0]!.outputData).toEqual({
      terminatedWorkflows: victims,
      notTerminated: { [finished]: expect.stringMatching(/COMPLETED/), [unknown]: "not found" },
    });
    for (const victim of victims) expect(await getWorkflow(victim)).toMatchObject({ status: "TERMINATED", reasonForIncompletion: "superseded" });
    expect((await getWorkflow(finished)).status).toBe("COMPLETED");
  });

  it("gives the workflows it terminates its reason with the values its own workflow masks as ***, as a TERMINATE's reason is", async () => {
    await register({ name: "tw_masked_victim", tasks: [wait("idle")] });
    await register({ name: "tw_masked", maskedFields: ["ssn"], tasks: [terminateWorkflow("stop", { workflowId: "${workflow.input.id}", terminationReason: "SSN ${workflow.input.ssn} refused" })] });
    const victim = await startWorkflow("tw_masked_victim");
    const run = await execute("tw_masked", { id: victim, ssn: "123-45-6789" });
    expect(run.tasks[0]!.outputData).toEqual({ terminatedWorkflows: [victim], notTerminated: {} });
    const ended = await getWorkflow(victim);
    expect(ended).toMatchObject({ status: "TERMINATED", reasonForIncompletion: "SSN *** refused" });
    expect(JSON.stringify(ended)).not.toContain("123-45-6789");
  });

  it("starts the failure workflows when asked (beside its input, as Orkes' first examples place it), and may end its own workflow last", async () => {
    await register({ name: "tw_cleanup", tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP" }] });
    await register({ name: "tw_watched", tasks: [wait("idle")], failureWorkflow: "tw_cleanup" });
    await register({
      name: "tw_all",
      tasks: [terminateWorkflow("stop", { workflowId: ["${workflow.workflowId}", "${workflow.input.watched}"] }, { triggerFailureWorkflow: true }), { name: "never", taskReferenceName: "never", type: "NOOP" }],
    });
    const watched = await startWorkflow("tw_watched");
    const run = await execute("tw_all", { watched });
    expect(run.status).toBe("TERMINATED");
    expect(run["reasonForIncompletion"]).toBe(`Terminated by task stop of workflow ${run.workflowId}`);
    expect(statuses(run)).toEqual(["stop:CANCELED"]);
    const ended = await getWorkflow(watched);
    expect(ended.status).toBe("TERMINATED");
    const cleanup = await eventually(() => getWorkflow(watched), (workflow) => typeof workflow.output["conductor.failure_workflow"] === "string", "the failure workflow's start");
    expect((await waitFor(String(cleanup.output["conductor.failure_workflow"]), ENDED)).workflowName).toBe("tw_cleanup");
  });

  it("terminates nothing when whoever started it may not manage one of them: it fails for good, naming that execution (not its workflow)", async () => {
    await register({ name: "tw_theirs", tasks: [wait("idle")] });
    await register({ name: "tw_ours", tasks: [wait("idle")] });
    await register({ name: "tw_eve", tasks: [terminateWorkflow("stop", { workflowId: "${workflow.input.ids}" })] });
    const eve = await createUser("tw-eve", { directPermissions: ["WORKFLOW_ADMIN", "WORKFLOW_READ"].flatMap((action) => [{ action, scope: "workflow:tw_eve" }, { action, scope: "workflow:tw_ours" }]) });
    const ours = await startWorkflow("tw_ours");
    const theirs = await startWorkflow("tw_theirs");
    const started = await call("POST", "/api/workflow/tw_eve", orkes(eve.token), { ids: [ours, theirs] });
    expect(started.status).toBe(200);
    const run = await waitFor(await started.text(), ENDED);
    // Naming the id she gave, not the workflow of an execution she holds nothing on.
    expect(run.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: `No workflow terminated: whoever started tw_eve may not terminate execution ${theirs} (it needs WORKFLOW_ADMIN on its workflow)` });
    expect(JSON.stringify(run)).not.toContain("tw_theirs");
    expect((await getWorkflow(ours)).status).toBe("RUNNING");
    expect((await getWorkflow(theirs)).status).toBe("RUNNING");
  });
});

describe("against an object still on the code before getNameAndStatus (a gradual deployment's previous version)", () => {
  it("UPDATE_TASK and TERMINATE_WORKFLOW act on it, read through its Workflow JSON, and a restart with the latest definitions restarts it, where workerd's 'does not implement' failed the tasks and the restart answered 500", async () => {
    await register({ name: "old_reach_waiter", tasks: [wait("approval"), wait("second")] });
    await register({ name: "old_reach_updater", tasks: [updateTask("approve", { taskStatus: "COMPLETED", workflowId: "${workflow.input.target}", taskRefName: "approval", taskOutput: { approved: true } })] });
    await register({ name: "old_reach_terminator", tasks: [terminateWorkflow("stop", { workflowId: "${workflow.input.target}", terminationReason: "stopped" })] });
    const target = await startWorkflow("old_reach_waiter");
    await waitFor(target, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    let restore = () => {};
    await runInDurableObject(executionStub(env, target), (instance: object) => {
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      const getNameAndStatus = prototype["getNameAndStatus"];
      delete prototype["getNameAndStatus"];
      restore = () => Object.assign(prototype, { getNameAndStatus });
    });
    try {
      const updater = await execute("old_reach_updater", { target });
      expect(updater.status, String(updater["reasonForIncompletion"])).toBe("COMPLETED");
      await waitFor(target, (workflow) => workflow.tasks[1]?.status === "IN_PROGRESS");
      const terminator = await execute("old_reach_terminator", { target });
      expect(terminator.status, String(terminator["reasonForIncompletion"])).toBe("COMPLETED");
      expect(terminator.tasks[0]!.outputData["terminatedWorkflows"]).toEqual([target]);
      expect((await waitFor(target, ENDED)).status).toBe("TERMINATED");
      await apiOk("POST", `/api/workflow/${target}/restart?useLatestDefinitions=true`, undefined, 204);
    } finally {
      restore();
    }
    expect((await getWorkflow(target)).status).toBe("RUNNING");
  });
});
