/**
 * Bulk retry and restart of lists holding a sub workflow with its parent (or grandparent): worked in the order given,
 * as Conductor's WorkflowBulkServiceImpl works them one by one, and never leaving the listed child running again apart
 * from its parent (a duplicate run of its work that no longer moves the parent). In a file of its own, a workerd of its
 * own (cloudflare/workers-sdk#15446).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { WorkflowExecution } from "../../src/actors/workflow-execution";
import { ancestorActedRefusal } from "../../src/worker/routes/bulk";
import { apiOk, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, waitForIndexRow, whilePreparing, type WorkflowJson } from "./helpers";
import { firstChildOf, subTask, terminal, waitTask } from "./sub-workflow-helpers";

type BulkResponse = { bulkErrorResults: Record<string, string>; bulkSuccessfulResults: string[] };

const bulk = (operation: "retry" | "restart", ids: string[], query = "") => apiOk<BulkResponse>("POST", `/api/workflow/bulk/${operation}${query}`, ids);

/**
 * A parent whose one task is a SUB_WORKFLOW of a child counting its runs from the start (`<prefix>-a`, once per
 * execution of the child) and then waiting on `gate` (completed from outside), failed from outside: both FAILED.
 */
async function failedPair(prefix: string): Promise<{ parent: WorkflowJson; child: WorkflowJson }> {
  await register({ name: `${prefix}_child`, tasks: [httpTask("a", { uri: target(`/count/${prefix}-a`), method: "GET" }), waitTask("gate")] });
  await register({ name: `${prefix}_parent`, tasks: [subTask("sub", { subWorkflowParam: { name: `${prefix}_child` } })] });
  const parentId = await startWorkflow(`${prefix}_parent`);
  const childId = await firstChildOf(parentId);
  await waitFor(childId, (workflow) => workflow.tasks[1]?.status === "IN_PROGRESS");
  await apiOk("POST", `/api/tasks/${childId}/gate/FAILED`, {});
  const parent = await waitFor(parentId, terminal);
  const child = await getWorkflow(childId);
  expect([parent.status, child.status]).toEqual(["FAILED", "FAILED"]);
  return { parent, child };
}

/** Completes the gate of `childId` once it waits there again; answers `topId` once it has ended. */
async function openGate(childId: string, topId: string): Promise<WorkflowJson> {
  await waitFor(childId, (workflow) => workflow.tasks.at(-1)?.referenceTaskName === "gate" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
  await apiOk("POST", `/api/tasks/${childId}/gate/COMPLETED`, {});
  return await waitFor(topId, terminal);
}

/** The child the parent's latest `sub` task waits for. */
const childNow = (parent: WorkflowJson): string => String(parent.tasks.findLast((task) => task.referenceTaskName === "sub")!["subWorkflowId"]);

/** Task ids of an execution: a retry or restart changes them as it is applied (before its call answers). */
const taskIds = async (workflowId: string): Promise<string[]> => (await getWorkflow(workflowId)).tasks.map((task) => task.taskId);

describe("bulk retry or restart of a sub workflow listed with its parent", () => {
  for (const operation of ["retry", "restart"] as const) {
    it(`${operation} [parent, child]: the parent runs a new child, the listed child is not acted on and stays as it was`, async () => {
      const prefix = `bulk_pc_${operation}`;
      const { parent, child } = await failedPair(prefix);
      const childTasks = await taskIds(child.workflowId);

      const answer = await bulk(operation, [parent.workflowId, child.workflowId]);
      expect(answer.bulkSuccessfulResults).toEqual([parent.workflowId]);
      expect(Object.keys(answer.bulkErrorResults)).toEqual([child.workflowId]);
      expect(answer.bulkErrorResults[child.workflowId]).toContain(parent.workflowId);
      // Not acted on: a retry or restart would have replaced its tasks before the bulk call answered.
      expect(await taskIds(child.workflowId)).toEqual(childTasks);

      const done = await openGate(childNow(await getWorkflow(parent.workflowId)), parent.workflowId);
      expect(done.status).toBe("COMPLETED");
      expect(childNow(done)).not.toBe(child.workflowId);
      // Two executions of the child ran from the start: the first, and the parent's new one; the listed one not again.
      expect(await hits(`${prefix}-a`)).toBe(2);
      expect(await getWorkflow(child.workflowId)).toMatchObject({ status: "FAILED", tasks: child.tasks });
    });

    it(`${operation} [child, parent]: the child runs again for its parent, whose own ${operation} then answers 409 (it runs), as Conductor's one-by-one order gives`, async () => {
      const prefix = `bulk_cp_${operation}`;
      const { parent, child } = await failedPair(prefix);

      const answer = await bulk(operation, [child.workflowId, parent.workflowId]);
      expect(answer.bulkSuccessfulResults).toEqual([child.workflowId]);
      expect(answer.bulkErrorResults).toEqual({ [parent.workflowId]: `Cannot ${operation} workflow ${parent.workflowId}: its status is RUNNING` });

      const done = await openGate(child.workflowId, parent.workflowId);
      expect(done.status).toBe("COMPLETED");
      // The same child, which the parent waited for again: no other execution of it started.
      expect(childNow(done)).toBe(child.workflowId);
      expect(done.tasks.filter((task) => task.referenceTaskName === "sub")).toHaveLength(1);
      expect(await hits(`${prefix}-a`)).toBe(operation === "retry" ? 1 : 2);
      expect((await getWorkflow(child.workflowId)).status).toBe("COMPLETED");
    });
  }
});

/**
 * Runs `act` while every parent answers its child's reopen only after a while (an object busy or far away): a parent
 * retried before that would start a new child, and then decline the listed one, which ran on apart from it.
 */
async function withSlowParents<T>(act: () => Promise<T>): Promise<T> {
  const { childReopened } = WorkflowExecution.prototype;
  WorkflowExecution.prototype.childReopened = async function (this: WorkflowExecution, notice) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return childReopened.call(this, notice);
  };
  try {
    return await act();
  } finally {
    WorkflowExecution.prototype.childReopened = childReopened;
  }
}

/** Deletes the search row of `workflowId` (once it shows FAILED): as if its first row were still on its way. */
async function unindexed(workflowId: string): Promise<void> {
  await waitForIndexRow(workflowId, "FAILED");
  await env.DB.prepare("DELETE FROM executions WHERE workflow_id = ?1").bind(workflowId).run();
}

/** Runs `act` while every execution object fails `getNameAndStatus` (the read of its parent) as one restarting does. */
async function withUnreadableObjects<T>(act: () => Promise<T>): Promise<T> {
  const { getNameAndStatus } = WorkflowExecution.prototype;
  WorkflowExecution.prototype.getNameAndStatus = async () => {
    throw new Error("the object could not answer (test)");
  };
  try {
    return await act();
  } finally {
    WorkflowExecution.prototype.getNameAndStatus = getNameAndStatus;
  }
}

/**
 * Checks that a bulk retry of [parent, child, ...others] found the family: the parent and `others` acted on, the child
 * refused as listed after its retried parent and left as it was (`childTasks`), the parent then completing.
 */
async function expectFamilyFound(answer: BulkResponse, parentId: string, childId: string, childTasks: string[], others: string[] = []): Promise<void> {
  expect(answer).toEqual({ bulkSuccessfulResults: [parentId, ...others], bulkErrorResults: { [childId]: ancestorActedRefusal(parentId, "retry") } });
  expect(await taskIds(childId)).toEqual(childTasks);
  const done = await openGate(childNow(await getWorkflow(parentId)), parentId);
  expect(done.status).toBe("COMPLETED");
}

describe("bulk retry finds the parents in the search index, reading an execution only when the index does not hold it", () => {
  it("[parent, child, other], all indexed: no object is read for its parent (each read failing changes nothing), the family is found", async () => {
    const { parent, child } = await failedPair("bulk_indexed");
    await register({ name: "bulk_indexed_other", tasks: [httpTask("fail", { uri: target("/status/500"), method: "GET" })] });
    const other = (await waitFor(await startWorkflow("bulk_indexed_other"), terminal)).workflowId;
    for (const workflowId of [parent.workflowId, child.workflowId, other]) await waitForIndexRow(workflowId, "FAILED");
    const childTasks = await taskIds(child.workflowId);

    const answer = await withUnreadableObjects(() => bulk("retry", [parent.workflowId, child.workflowId, other]));
    await expectFamilyFound(answer, parent.workflowId, child.workflowId, childTasks, [other]);
  });

  it("[PARENT, child], the parent's id given in upper case: the family is found all the same", async () => {
    const { parent, child } = await failedPair("bulk_upper");
    const childTasks = await taskIds(child.workflowId);
    const answer = await bulk("retry", [parent.workflowId.toUpperCase(), child.workflowId]);
    await expectFamilyFound(answer, parent.workflowId.toUpperCase(), child.workflowId, childTasks);
  });

  it("[parent, child], the child not indexed yet: its parent is read from its object, the family is found", async () => {
    const { parent, child } = await failedPair("bulk_unindexed");
    await unindexed(child.workflowId);
    const childTasks = await taskIds(child.workflowId);
    const answer = await bulk("retry", [parent.workflowId, child.workflowId]);
    await expectFamilyFound(answer, parent.workflowId, child.workflowId, childTasks);
  });
});

describe("bulk retry when the search index cannot answer", () => {
  it("[parent, child], D1 failing the read of the parents: each is read from its object instead, the family is found", async () => {
    const { parent, child } = await failedPair("bulk_index_down");
    const childTasks = await taskIds(child.workflowId);
    const refusingParents = (sql: string, prepare: (sql: string) => D1PreparedStatement) => {
      if (!sql.includes("parent_workflow_id AS parentWorkflowId")) return prepare(sql);
      const failing = { bind: () => failing, all: () => Promise.reject(new Error("D1_ERROR: the test refuses the parents")) };
      return failing as unknown as D1PreparedStatement;
    };
    const answer = await whilePreparing(refusingParents, () => bulk("retry", [parent.workflowId, child.workflowId]));
    await expectFamilyFound(answer, parent.workflowId, child.workflowId, childTasks);
  });
});

describe("bulk retry when a listed id's parent cannot be read", () => {
  it("[parent, child], the child not indexed and its object failing the read: the child is not acted on (its error listed), the parent is", async () => {
    const { parent, child } = await failedPair("bulk_unread");
    await unindexed(child.workflowId);
    const { getNameAndStatus } = WorkflowExecution.prototype;
    // The child's object fails the read, as one restarting or overloaded does; its commands still go through.
    WorkflowExecution.prototype.getNameAndStatus = async function (this: WorkflowExecution) {
      if ((await this.getWorkflowName()) === "bulk_unread_child") throw new Error("the object could not answer (test)");
      return getNameAndStatus.call(this);
    };
    let answer: BulkResponse;
    try {
      answer = await bulk("retry", [parent.workflowId, child.workflowId]);
    } finally {
      WorkflowExecution.prototype.getNameAndStatus = getNameAndStatus;
    }
    expect(answer.bulkSuccessfulResults).toEqual([parent.workflowId]);
    expect(Object.keys(answer.bulkErrorResults)).toEqual([child.workflowId]);
    // Nothing done to it: sent again alone, it would be acted on as any single retry.
    expect(await getWorkflow(child.workflowId)).toMatchObject({ status: "FAILED", tasks: child.tasks });
    const done = await openGate(childNow(await getWorkflow(parent.workflowId)), parent.workflowId);
    expect(done.status).toBe("COMPLETED");
  });
});

describe("bulk retry of a child listed before a parent slow to take its reopen", () => {
  it("[child, parent]: the parent's turn waits for its answer to the child, and finds itself running (409), not still FAILED (a new child beside the listed one)", async () => {
    const { parent, child } = await failedPair("bulk_slow_parent");
    const answer = await withSlowParents(() => bulk("retry", [child.workflowId, parent.workflowId]));
    expect(answer).toEqual({ bulkSuccessfulResults: [child.workflowId], bulkErrorResults: { [parent.workflowId]: `Cannot retry workflow ${parent.workflowId}: its status is RUNNING` } });
    const done = await openGate(child.workflowId, parent.workflowId);
    expect(done.status).toBe("COMPLETED");
    expect(childNow(done)).toBe(child.workflowId);
    expect(await hits("bulk_slow_parent-a")).toBe(1);
  });
});

describe("bulk retry of a chain: grandparent, parent, child", () => {
  /** root → mid → leaf, the leaf counting its runs from the start and waiting on `gate`, failed from outside: all three FAILED. */
  async function failedChain(prefix: string) {
    await register({ name: `${prefix}_leaf`, tasks: [httpTask("a", { uri: target(`/count/${prefix}-a`), method: "GET" }), waitTask("gate")] });
    await register({ name: `${prefix}_mid`, tasks: [subTask("sub", { subWorkflowParam: { name: `${prefix}_leaf` } })] });
    await register({ name: `${prefix}_root`, tasks: [subTask("sub", { subWorkflowParam: { name: `${prefix}_mid` } })] });
    const rootId = await startWorkflow(`${prefix}_root`);
    const midId = await firstChildOf(rootId);
    const leafId = await firstChildOf(midId);
    await waitFor(leafId, (workflow) => workflow.tasks[1]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${leafId}/gate/FAILED`, {});
    const root = await waitFor(rootId, terminal);
    const [mid, leaf] = [await getWorkflow(midId), await getWorkflow(leafId)];
    expect([root.status, mid.status, leaf.status]).toEqual(["FAILED", "FAILED", "FAILED"]);
    return { root, mid, leaf };
  }

  for (const midIndexed of [true, false]) {
    it(`[root, leaf] (the middle one not listed${midIndexed ? "" : ", nor indexed yet"}): the root runs a new middle one, the leaf is not acted on`, async () => {
      const prefix = midIndexed ? "bulk_chain_rl" : "bulk_chain_rl_unindexed";
      const { root, mid, leaf } = await failedChain(prefix);
      if (!midIndexed) await unindexed(mid.workflowId);
      const leafTasks = await taskIds(leaf.workflowId);
      const answer = await bulk("retry", [root.workflowId, leaf.workflowId]);
      expect(answer.bulkSuccessfulResults).toEqual([root.workflowId]);
      expect(answer.bulkErrorResults[leaf.workflowId]).toContain(root.workflowId);
      expect(await taskIds(leaf.workflowId)).toEqual(leafTasks);
      const done = await openGate(childNow(await getWorkflow(childNow(await getWorkflow(root.workflowId)))), root.workflowId);
      expect(done.status).toBe("COMPLETED");
      expect(childNow(done)).not.toBe(mid.workflowId);
      expect(await hits(`${prefix}-a`)).toBe(2);
      expect(await getWorkflow(mid.workflowId)).toMatchObject({ status: "FAILED", tasks: mid.tasks });
      expect(await getWorkflow(leaf.workflowId)).toMatchObject({ status: "FAILED", tasks: leaf.tasks });
    });
  }

  /**
   * Checks that a bulk retry of `listed` acted on its first id only, the workflows above it answering 409 as running
   * again for it, and that the chain then completed on its own middle one and leaf, the leaf's first task run once.
   */
  async function expectChainRanOnce(answer: BulkResponse, chain: Awaited<ReturnType<typeof failedChain>>, prefix: string, [first, ...later]: string[]): Promise<void> {
    const running = (workflowId: string) => [workflowId, `Cannot retry workflow ${workflowId}: its status is RUNNING`];
    expect(answer).toEqual({ bulkSuccessfulResults: [first], bulkErrorResults: Object.fromEntries(later.map(running)) });
    const done = await openGate(chain.leaf.workflowId, chain.root.workflowId);
    expect(done.status).toBe("COMPLETED");
    expect(childNow(done)).toBe(chain.mid.workflowId);
    expect(childNow(await getWorkflow(chain.mid.workflowId))).toBe(chain.leaf.workflowId);
    expect(await hits(`${prefix}-a`)).toBe(1);
  }

  it("[leaf, mid, root], the middle one's first answer to the leaf lost on its way and the root slow: the leaf's telling again waits for the root too", async () => {
    const prefix = "bulk_chain_lost";
    const { root, mid, leaf } = await failedChain(prefix);
    const { childReopened } = WorkflowExecution.prototype;
    let lost = false;
    WorkflowExecution.prototype.childReopened = async function (this: WorkflowExecution, notice) {
      const name = await this.getWorkflowName();
      if (name === `${prefix}_root`) await new Promise((resolve) => setTimeout(resolve, 300));
      if (name !== `${prefix}_mid` || lost) return childReopened.call(this, notice);
      // Taken, but the answer never reaches the leaf (a connection cut): the leaf tells it again, finding its task waiting.
      lost = true;
      void childReopened.call(this, notice).catch(() => undefined);
      throw new Error("the answer was lost on its way (test)");
    };
    let answer: BulkResponse;
    try {
      answer = await bulk("retry", [leaf.workflowId, mid.workflowId, root.workflowId]);
    } finally {
      WorkflowExecution.prototype.childReopened = childReopened;
    }
    expect(lost).toBe(true);
    await expectChainRanOnce(answer, { root, mid, leaf }, prefix, [leaf.workflowId, mid.workflowId, root.workflowId]);
  });

  it("retry?resumeSubworkflowTasks=true [mid, root], the root slow: the middle one retries the leaf in place and answers once the root waits for it again (409)", async () => {
    const prefix = "bulk_chain_resume";
    const { root, mid, leaf } = await failedChain(prefix);
    const answer = await withSlowParents(() => bulk("retry", [mid.workflowId, root.workflowId], "?resumeSubworkflowTasks=true"));
    await expectChainRanOnce(answer, { root, mid, leaf }, prefix, [mid.workflowId, root.workflowId]);
  });

  for (const slow of [false, true]) {
    it(`[leaf, mid, root]${slow ? ", the parents slow to answer" : ""}: the leaf runs again in place, both parents wait for it again and answer 409`, async () => {
      const prefix = slow ? "bulk_chain_lmr_slow" : "bulk_chain_lmr";
      const { root, mid, leaf } = await failedChain(prefix);
      // Slow: the middle one answers the leaf only once the root has answered it (the root then runs, when its turn comes).
      const retry = () => bulk("retry", [leaf.workflowId, mid.workflowId, root.workflowId]);
      const answer = slow ? await withSlowParents(retry) : await retry();
      await expectChainRanOnce(answer, { root, mid, leaf }, prefix, [leaf.workflowId, mid.workflowId, root.workflowId]);
    });
  }
});
