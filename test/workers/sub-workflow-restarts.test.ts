/**
 * SUB_WORKFLOW, continued from sub-workflow.test.ts: secrets and children, retries and reruns racing a parent's removal
 * or end, a child's own retry, restart or rerun followed by its parents, and its task definition's concurrentExecLimit.
 * In a file of its own so that it runs in a workerd of its own (cloudflare/workers-sdk#15446: each `SELF.fetch` is
 * slower the more requests its workerd has served).
 */
import { abortAllDurableObjects, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ExecutionIndexWriter } from "../../src/actors/index-writer";
import { taskLimitAt, type TaskLimitSnapshot } from "../../src/actors/task-limit";
import { WorkflowExecution, type ActorResult } from "../../src/actors/workflow-execution";
import { executionStub } from "../../src/worker/executions";
import { api, apiOk, eventually, gate, getWorkflow, heldExecutionAnswers, hits, httpTask, register, startWorkflow, storedByExecutionObject, target, unreachableExecutions, waitFor, waitForIndexRow } from "./helpers";
import { firstChildOf, reopenAnswered, subTask, terminal, waitTask } from "./sub-workflow-helpers";
import type { JsonObject } from "../../src/engine/model";

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
      // The removal finished while the child was looked at: the parent is gone (404), as a retry of any removed one.
      const response = await retry;
      const text = await response.text();
      expect(response.status, text).toBe(404);
      expect(JSON.parse(text)).toMatchObject({ status: 404, error: "NOT_FOUND" });
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
    const childId = await firstChildOf(parentId);
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
    const childId = await firstChildOf(parentId);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("DELETE", `/api/workflow/${parentId}?reason=stop`);
    await waitFor(childId, ["TERMINATED"]);
    const stopped = await waitFor(parentId, ["TERMINATED"]);
    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    await reopenAnswered(childId);
    await apiOk("POST", `/api/tasks/${childId}/stopped_gate/COMPLETED`, {});
    await waitFor(childId, ["COMPLETED"]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await getWorkflow(parentId)).toEqual(stopped);
  });

  it("a child retried on its own after its parent completed the task from outside (and so terminated it) leaves the COMPLETED parent as it is", async () => {
    await register({ name: "overruled_child", tasks: [waitTask("overruled_gate")] });
    await register({ name: "overruled_parent", tasks: [subTask("to_child", { subWorkflowParam: { name: "overruled_child" } }), httpTask("after", { uri: target("/count/overruled-after"), method: "GET" })] });
    const parentId = await startWorkflow("overruled_parent");
    const childId = await firstChildOf(parentId);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${parentId}/to_child/COMPLETED`, { decided: "outside" });
    const completed = await waitFor(parentId, terminal);
    expect(completed.status).toBe("COMPLETED");
    expect((await waitFor(childId, terminal)).status).toBe("TERMINATED");
    await eventually(() => metaOf(parentId, "childTerminations"), (owed) => owed === "{}", "the parent's termination of the child taken");

    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    await reopenAnswered(childId);
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
    const childId = await firstChildOf(parentId);
    const timedOut = await waitFor(parentId, terminal, 5_000);
    expect(timedOut.status).toBe("TIMED_OUT");
    expect((await waitFor(childId, terminal)).status).toBe("TERMINATED");
    await eventually(() => metaOf(parentId, "childTerminations"), (owed) => owed === "{}", "the parent's termination of the child taken");

    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    await reopenAnswered(childId);
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
    await reopenAnswered(childId);
    expect(await getWorkflow(parentId)).toEqual(completed);
  });

  it("the parent's reopen survives a lost answer and an eviction of the child: delivered again, it is taken once", async () => {
    await register({ name: "lost_reopen_child", tasks: [waitTask("lost_reopen_gate")] });
    await register({ name: "lost_reopen_parent", tasks: [subTask("to_child", { subWorkflowParam: { name: "lost_reopen_child" } }), httpTask("after", { uri: target("/count/lost-reopen-after"), method: "GET" })] });
    const parentId = await startWorkflow("lost_reopen_parent");
    const childId = await firstChildOf(parentId);
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

  it("a paused parent follows its child's retry when its SUB_WORKFLOW task is in a fork in a DO_WHILE, or in a branch its fork's JOIN does not wait for (that JOIN ended, what follows it ran): nothing acted on the task's end", async () => {
    const follows = async (prefix: string, tasks: (child: string) => JsonObject[]) => {
      await register({ name: `${prefix}_child`, tasks: [waitTask("w")] });
      await register({ name: `${prefix}_parent`, tasks: tasks(`${prefix}_child`) });
      const parentId = await startWorkflow(`${prefix}_parent`);
      const running = await waitFor(parentId, (workflow) => workflow.tasks.some((task) => task["subWorkflowId"] !== undefined) && workflow.tasks.some((task) => task.referenceTaskName.startsWith("side") && task.status === "IN_PROGRESS"));
      const sub = running.tasks.find((task) => task["subWorkflowId"] !== undefined)!;
      const childId = String(sub["subWorkflowId"]);
      // The other branch ends before the pause, and the parent goes on as far as it can beside the SUB_WORKFLOW task.
      await apiOk<string>("POST", `/api/tasks/${parentId}/${running.tasks.find((task) => task.referenceTaskName.startsWith("side"))!.referenceTaskName}/COMPLETED`, {});
      await waitFor(parentId, (workflow) => workflow.tasks.filter((task) => task.taskId !== sub.taskId).every((task) => task.status !== "SCHEDULED" && (task.status !== "IN_PROGRESS" || ["DO_WHILE", "JOIN"].includes(String(task["taskType"])))));
      await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
      await apiOk("PUT", `/api/workflow/${parentId}/pause`);
      await apiOk<string>("POST", `/api/tasks/${childId}/w/FAILED_WITH_TERMINAL_ERROR`, {});
      expect((await waitFor(childId, terminal)).status).toBe("FAILED");
      await waitFor(parentId, (workflow) => workflow.tasks.find((task) => task.taskId === sub.taskId)?.status === "FAILED");

      await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
      const reopened = await waitFor(parentId, (workflow) => workflow.tasks.find((task) => task.taskId === sub.taskId)?.status === "IN_PROGRESS");
      expect(reopened.status).toBe("PAUSED");
      await waitFor(childId, (workflow) => workflow.tasks.at(-1)?.status === "IN_PROGRESS");
      await apiOk<string>("POST", `/api/tasks/${childId}/w/COMPLETED`, { ok: 1 });
      expect((await waitFor(childId, terminal)).status).toBe("COMPLETED");
      await waitFor(parentId, (workflow) => workflow.tasks.find((task) => task.taskId === sub.taskId)?.status === "COMPLETED");
      await apiOk("PUT", `/api/workflow/${parentId}/resume`);
      return waitFor(parentId, terminal);
    };

    const looped = await follows("paused_loop_fork", (child) => [
      {
        name: "loop",
        taskReferenceName: "loop",
        type: "DO_WHILE",
        inputParameters: {},
        loopCondition: "false",
        loopOver: [
          { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[subTask("to_child", { subWorkflowParam: { name: child } })], [waitTask("side")]] },
          { name: "joined", taskReferenceName: "joined", type: "JOIN", joinOn: ["to_child", "side"] },
        ] as JsonObject[],
      },
    ]);
    expect(looped.status).toBe("COMPLETED");
    expect(looped.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["loop:COMPLETED", "fan__1:COMPLETED", "to_child__1:COMPLETED", "side__1:COMPLETED", "joined__1:COMPLETED"]);

    const unjoined = await follows("paused_unjoined", (child) => [
      { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[subTask("to_child", { subWorkflowParam: { name: child } })], [waitTask("side")]] },
      { name: "joined", taskReferenceName: "joined", type: "JOIN", joinOn: ["side"] },
      httpTask("after", { uri: target("/count/paused-unjoined-after"), method: "GET" }),
    ]);
    expect(unjoined.status).toBe("COMPLETED");
    expect(unjoined.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["fan:COMPLETED", "to_child:COMPLETED", "side:COMPLETED", "joined:COMPLETED", "after:COMPLETED"]);
    expect(await hits("paused-unjoined-after")).toBe(1);
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
    await reopenAnswered(childId);
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

  it("a place taken again (a child retried in place) while the periodic check's answer that it was gone is on its way stays held", async () => {
    const limit = taskLimitAt(env, "sublim_check_race");
    const workflowId = crypto.randomUUID();
    await limit.take("place-1", workflowId);
    const answering = gate();
    await runInDurableObject(limit, (_instance, state) => {
      // Due for its check (checked more than PLACE_CHECK_MS, five minutes, ago).
      state.storage.sql.exec(`UPDATE places SET checked_at = checked_at - ?`, 5 * 60_000 + 1);
    });
    // The execution's answer held on its way: its task had ended, a leave owed.
    await heldExecutionAnswers(limit, "givePlace", answering, "gone");
    const checking = runDurableObjectAlarm(limit);
    await answering.reached;
    // Meanwhile the task's child was retried in place: its execution takes the place again (the leave it replaced never sent).
    await limit.take("place-1", workflowId);
    answering.release();
    expect(await checking).toBe(true);
    expect((await limit.snapshot()).running).toEqual(["place-1"]);
  });

  it("retries a notice of a place given that keeps failing every 2 s, also once it has failed for longer than the check's period, not at once", async () => {
    const limit = taskLimitAt(env, "sublim_notice_failing");
    expect(await limit.enter("place-0", crypto.randomUUID(), { maxHeld: 1 }, 1)).toBe("admitted");
    expect(await limit.enter("place-1", crypto.randomUUID(), { maxHeld: 1 }, 1)).toBe("queued");
    await unreachableExecutions(limit, ["givePlace"]);
    // place-0 ends: place-1 is given its place, whose execution cannot be told.
    await limit.leave("place-0");
    await runInDurableObject(limit, async (_instance, state) => {
      // Its notices have failed for more than PLACE_CHECK_MS (five minutes) since the place was given.
      state.storage.sql.exec(`UPDATE places SET checked_at = checked_at - ?`, 5 * 60_000 + 1);
      // The notice's retry (due in 2 s) an hour ahead: workerd would run it too, beside runDurableObjectAlarm.
      await state.storage.setAlarm(Date.now() + 60 * 60_000);
    });
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    // Retried in NOTICE_RETRY_MS (2 s): the check asks only about told places, so it must not set the alarm to now.
    const alarm = await runInDurableObject(limit, (_instance, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm! - Date.now()).toBeGreaterThan(1_000);
    expect((await limit.snapshot()).running).toEqual(["place-1"]);
  });

  it("a place taken again (a child retried in place) while its owed notice's answer that it was gone is on its way stays held", async () => {
    // The notice is owed again when the execution's earlier answer ("taken") was lost; its task has ended since, the
    // leave owed, so it answers "gone" now, then is retried in place (a take replacing the leave).
    const limit = taskLimitAt(env, "sublim_notice_race");
    const workflowId = crypto.randomUUID();
    expect(await limit.enter("place-0", crypto.randomUUID(), { maxHeld: 1 }, 1)).toBe("admitted");
    expect(await limit.enter("place-1", workflowId, { maxHeld: 1 }, 1)).toBe("queued");
    const answering = gate();
    // The execution's answer held on its way.
    await heldExecutionAnswers(limit, "givePlace", answering, "gone");
    // place-0 ends: place-1 is given its place, to be told.
    await limit.leave("place-0");
    await answering.reached;
    await limit.take("place-1", workflowId);
    answering.release();
    // The alarm's delivery joins the round on its way (one at a time) and returns once that round is done.
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    expect((await limit.snapshot()).running).toEqual(["place-1"]);
  });

  it("an answer that a place given was gone settles that giving only: the place given again under its id meanwhile is told, not freed", async () => {
    // A paused workflow's task gives up the place given to it ("gone", held on its way); meanwhile the workflow is resumed
    // and asks again under the same place id, is admitted, paused again before it took the place (given back), resumed,
    // and asks once more: queued, then given the place anew. The late "gone" was about the first giving.
    const limit = taskLimitAt(env, "sublim_notice_given_again");
    const workflowId = crypto.randomUUID();
    expect(await limit.enter("place-0", crypto.randomUUID(), { maxHeld: 1 }, 1)).toBe("admitted");
    expect(await limit.enter("place-1", workflowId, { maxHeld: 1 }, 1)).toBe("queued");
    const answering = gate();
    // Paused at the first notice, running at the next.
    const notices = await heldExecutionAnswers(limit, "givePlace", answering, (call) => (call === 1 ? "gone" : "taken"));
    await limit.leave("place-0");
    await answering.reached;
    expect(await limit.enter("place-1", workflowId, { maxHeld: 1 }, 1)).toBe("admitted");
    await limit.leave("place-1");
    // The two givings at different milliseconds: the time a place was given is what tells them apart.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await limit.enter("place-2", crypto.randomUUID(), { maxHeld: 1 }, 1)).toBe("admitted");
    expect(await limit.enter("place-1", workflowId, { maxHeld: 1 }, 1)).toBe("queued");
    await limit.leave("place-2");
    answering.release();
    // Told of the second giving, which it takes; freed by the late "gone", its task would have waited for good.
    await eventually(async () => notices(), (count) => count === 2, "the execution told of the place given again");
    expect((await limit.snapshot()).running).toEqual(["place-1"]);
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
