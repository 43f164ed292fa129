/**
 * Workflow rate limits (Orkes' `rateLimitConfig`): at most `concurrentExecLimit` executions of one key run at once,
 * the others wait RUNNING and `rateLimited`, and run in the order they started as places free up. Through the real
 * router, execution objects, limit objects and D1.
 */
import { abortAllDurableObjects, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { IDLE_KEY_FORGET_MS, executionLimitAt, type ExecutionLimit, type LimitSnapshot } from "../../src/actors/execution-limit";
import { taskLimitAt } from "../../src/actors/task-limit";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, eventually, gate, getWorkflow, heldExecutionAnswers, register, startWorkflow, storedByExecutionObject, unreachableExecutions, waitFor, type WorkflowJson } from "./helpers";

/** A definition named `name` (version 1 unless given) whose one task waits to be completed from outside, limited by `rateLimitConfig`. */
async function registerLimited(name: string, rateLimitConfig: JsonObject, version = 1): Promise<void> {
  await register({ name, version, rateLimitConfig, tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }] });
}

/** The limit object's view of `key`, once `accept` holds (bounded wait): leaves and notices are background work. */
async function limitOf(key: string, accept: (snapshot: LimitSnapshot) => boolean, what: string): Promise<LimitSnapshot> {
  return eventually(() => executionLimitAt(env, key).snapshot(), accept, what);
}

/**
 * Makes every place `limit` holds due for its periodic check (held more than PLACE_CHECK_MS, five minutes), for the
 * test's runDurableObjectAlarm. The alarm goes an hour ahead: one due (a notice's retry in 2 s) would be run by workerd
 * too, at once, beside runDurableObjectAlarm (which then finds none, or its getAlarm() finds none while workerd's runs).
 */
async function placesDue(limit: DurableObjectStub<ExecutionLimit>): Promise<void> {
  await runInDurableObject(limit, async (_instance, state) => {
    state.storage.sql.exec(`UPDATE places SET checked_at = checked_at - ?`, 5 * 60_000 + 1);
    await state.storage.setAlarm(Date.now() + 60 * 60_000);
  });
}

/**
 * What SQLite's planner does for the reads a limit object's alarm makes on every entry and leave, and its check: each
 * should find its rows through places_by_check, not scan every place held.
 */
function placeReadPlans(state: DurableObjectState): string[] {
  const reads = [
    `SELECT 1 FROM places WHERE told = 0 LIMIT 1`,
    `SELECT MIN(checked_at) AS at FROM places WHERE told = 1`,
    `SELECT workflow_id FROM places WHERE told = 1 AND checked_at <= 0 ORDER BY checked_at LIMIT 10`,
  ];
  return reads.map((read) =>
    state.storage.sql
      .exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${read}`)
      .toArray()
      .map((step) => step.detail)
      .join("; "),
  );
}

const running = (workflow: WorkflowJson) => workflow.status === "RUNNING" && workflow["rateLimited"] === false && workflow.tasks.length === 1;

/** Completes the execution's waiting task once it has one (an admitted execution schedules it as it takes its place). */
async function completeHold(workflowId: string): Promise<void> {
  await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "hold" && task.status === "IN_PROGRESS"));
  await apiOk("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, {});
  await waitFor(workflowId, ["COMPLETED"]);
}

describe("workflow rate limits", () => {
  it("runs one execution at a time, the others waiting in turn; one that ends while it waits gives its turn up", async () => {
    await registerLimited("wrl_one", { concurrentExecLimit: 1 });
    const first = await startWorkflow("wrl_one");
    await waitFor(first, running);
    const second = await startWorkflow("wrl_one");
    const third = await startWorkflow("wrl_one");
    const fourth = await startWorkflow("wrl_one");
    for (const waiting of [second, third, fourth]) {
      const workflow = await getWorkflow(waiting);
      expect(workflow).toMatchObject({ status: "RUNNING", rateLimited: true, rateLimitKey: "wrl_one", tasks: [] });
    }
    expect(await limitOf("wrl_one", (limit) => limit.waiting.length === 3, "three waiting")).toEqual({ limit: 1, running: [first], waiting: [second, third, fourth] });

    // Terminated while it waits: its turn goes, nobody else's place.
    expect((await api("DELETE", `/api/workflow/${third}?reason=not+needed`)).status).toBe(200);
    expect(await getWorkflow(third)).toMatchObject({ status: "TERMINATED", rateLimited: false, tasks: [] });
    await limitOf("wrl_one", (limit) => limit.waiting.length === 2, "the terminated one's turn given up");

    await completeHold(first);
    const admitted = await waitFor(second, running);
    expect(admitted.tasks[0]).toMatchObject({ referenceTaskName: "hold", status: "IN_PROGRESS" });
    expect((await getWorkflow(fourth))["rateLimited"]).toBe(true);
    expect(await limitOf("wrl_one", (limit) => limit.running[0] === second, "the second running")).toEqual({ limit: 1, running: [second], waiting: [fourth] });

    await completeHold(second);
    await waitFor(fourth, running);
    await completeHold(fourth);
    expect(await limitOf("wrl_one", (limit) => limit.running.length === 0, "every place free")).toEqual({ limit: 1, running: [], waiting: [] });
  });

  it("keeps the places and the turns through an eviction of every object", async () => {
    await registerLimited("wrl_evicted", { concurrentExecLimit: 1 });
    const first = await startWorkflow("wrl_evicted");
    await waitFor(first, running);
    const second = await startWorkflow("wrl_evicted");
    await limitOf("wrl_evicted", (limit) => limit.waiting.length === 1, "the second waiting");
    await abortAllDurableObjects();
    expect(await getWorkflow(second)).toMatchObject({ rateLimited: true, tasks: [] });
    await completeHold(first);
    await waitFor(second, running);
    await completeHold(second);
    expect(await limitOf("wrl_evicted", (limit) => limit.running.length === 0, "every place free")).toEqual({ limit: 1, running: [], waiting: [] });
  });

  it("a limited child waits for its place while its parent's SUB_WORKFLOW task waits for it; a terminated parent's child gives its turn up", async () => {
    await registerLimited("wrl_child", { concurrentExecLimit: 1 });
    await register({ name: "wrl_parent", tasks: [{ name: "wrl_child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "wrl_child", version: 1 } }] });
    const childOf = async (parent: string) => String((await waitFor(parent, (workflow) => workflow.tasks[0]?.["subWorkflowId"] !== undefined)).tasks[0]!["subWorkflowId"]);
    const parents = [await startWorkflow("wrl_parent"), await startWorkflow("wrl_parent"), await startWorkflow("wrl_parent")];
    const children = await Promise.all(parents.map(childOf));
    await limitOf("wrl_child", (limit) => limit.running.length === 1 && limit.waiting.length === 2, "one child running, two waiting");
    const [runningChild] = (await executionLimitAt(env, "wrl_child").snapshot()).running;
    const order = [runningChild!, ...(await executionLimitAt(env, "wrl_child").snapshot()).waiting];
    // Copies sorted: `order` is the turn, used below.
    expect([...order].sort()).toEqual([...children].sort());

    // The last in turn: its parent terminated, the child is terminated with it and leaves the queue.
    const lastParent = parents[children.indexOf(order[2]!)]!;
    expect((await api("DELETE", `/api/workflow/${lastParent}`)).status).toBe(200);
    await waitFor(order[2]!, ["TERMINATED"]);
    await limitOf("wrl_child", (limit) => limit.waiting.length === 1, "the terminated child's turn given up");

    await completeHold(order[0]!);
    await waitFor(parents[children.indexOf(order[0]!)]!, ["COMPLETED"]);
    await waitFor(order[1]!, running);
    await completeHold(order[1]!);
    await waitFor(parents[children.indexOf(order[1]!)]!, ["COMPLETED"]);
  });

  it("a child ended while it waited has no task to retry: its own retry is a 409, its parent's retry?resumeSubworkflowTasks=true starts a new child (Conductor's retry)", async () => {
    await registerLimited("wrl_unstarted_child", { concurrentExecLimit: 1 });
    await register({ name: "wrl_unstarted_parent", tasks: [{ name: "wrl_unstarted_child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "wrl_unstarted_child", version: 1 } }] });
    const holder = await startWorkflow("wrl_unstarted_child");
    await waitFor(holder, running);
    const parent = await startWorkflow("wrl_unstarted_parent");
    const child = String((await waitFor(parent, (workflow) => workflow.tasks[0]?.["subWorkflowId"] !== undefined)).tasks[0]!["subWorkflowId"]);
    await limitOf("wrl_unstarted_child", (limit) => limit.waiting.includes(child), "the child waiting");
    expect((await api("DELETE", `/api/workflow/${parent}`)).status).toBe(200);
    expect(await waitFor(child, ["TERMINATED"])).toMatchObject({ tasks: [] });

    // Nothing ran in it: Conductor's retry refuses a workflow that has not started yet.
    const refused = await api("POST", `/api/workflow/${child}/retry`);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { message: string }).message).toMatch(/has not started yet/);
    expect(await getWorkflow(child)).toMatchObject({ status: "TERMINATED", tasks: [] });

    // Nor is there a failed task to resume in it: the parent's task is retried with a new child, which waits its turn.
    expect((await api("POST", `/api/workflow/${parent}/retry?resumeSubworkflowTasks=true`)).status).toBe(204);
    const retried = await waitFor(parent, (workflow) => workflow.tasks.length === 2 && workflow.tasks[1]?.["subWorkflowId"] !== undefined);
    expect(retried).toMatchObject({ status: "RUNNING" });
    const newChild = String(retried.tasks[1]!["subWorkflowId"]);
    expect(newChild).not.toBe(child);
    expect(await getWorkflow(child)).toMatchObject({ status: "TERMINATED", tasks: [] });
    await completeHold(holder);
    await completeHold(newChild);
    await waitFor(parent, ["COMPLETED"]);
  });

  it("counts each key apart: a key from the correlation id limits each caller on its own", async () => {
    await registerLimited("wrl_keyed", { rateLimitKey: "wrl-${workflow.correlationId}", concurrentExecLimit: 1 });
    const a1 = await startWorkflow("wrl_keyed", {}, "?correlationId=a");
    const a2 = await startWorkflow("wrl_keyed", {}, "?correlationId=a");
    const b1 = await startWorkflow("wrl_keyed", {}, "?correlationId=b");
    await waitFor(a1, running);
    await waitFor(b1, running);
    expect(await getWorkflow(a2)).toMatchObject({ rateLimited: true, rateLimitKey: "wrl-a" });
    expect((await getWorkflow(b1))["rateLimitKey"]).toBe("wrl-b");
    await completeHold(a1);
    await waitFor(a2, running);
    await completeHold(a2);
    await completeHold(b1);
  });

  it("a higher limit admits waiting executions at once; a reopened execution waits for a place again", async () => {
    await registerLimited("wrl_raised", { concurrentExecLimit: 1 });
    const first = await startWorkflow("wrl_raised");
    await waitFor(first, running);
    const second = await startWorkflow("wrl_raised");
    await limitOf("wrl_raised", (limit) => limit.waiting.length === 1, "the second waiting");

    // The next entry under the raised limit gives the freed places: first to the one that waited, then to itself.
    await registerLimited("wrl_raised", { concurrentExecLimit: 3 });
    const third = await startWorkflow("wrl_raised");
    await waitFor(second, running);
    await waitFor(third, running);

    // Terminated, it gives its place up; restarted, it asks again, and waits behind a newer start. Its definition is the
    // one it started with (limit 1), which no longer sets the limit: the newer registration's does.
    expect((await api("DELETE", `/api/workflow/${first}`)).status).toBe(200);
    await limitOf("wrl_raised", (limit) => !limit.running.includes(first), "the terminated one's place given up");
    const fourth = await startWorkflow("wrl_raised");
    await waitFor(fourth, running);
    expect((await api("POST", `/api/workflow/${first}/restart`)).status).toBe(204);
    expect(await getWorkflow(first)).toMatchObject({ status: "RUNNING", rateLimited: true, tasks: [] });
    await completeHold(second);
    await waitFor(first, running);
    expect(await executionLimitAt(env, "wrl_raised").snapshot()).toMatchObject({ limit: 3, waiting: [] });
    for (const id of [first, third, fourth]) await completeHold(id);
    await limitOf("wrl_raised", (limit) => limit.running.length === 0 && limit.waiting.length === 0, "every place free");
  });

  it("a limit raised through its endpoint or a registration admits executions waiting under every key the workflow used, at once", async () => {
    await registerLimited("wrl_raised_later", { rateLimitKey: "wrl-later-${workflow.input.tenant}", concurrentExecLimit: 1 });
    const [a1, a2, a3, b1, b2] = [
      await startWorkflow("wrl_raised_later", { tenant: "a" }),
      await startWorkflow("wrl_raised_later", { tenant: "a" }),
      await startWorkflow("wrl_raised_later", { tenant: "a" }),
      await startWorkflow("wrl_raised_later", { tenant: "b" }),
      await startWorkflow("wrl_raised_later", { tenant: "b" }),
    ];
    await limitOf("wrl-later-a", (limit) => limit.waiting.length === 2, "two waiting under a");
    await limitOf("wrl-later-b", (limit) => limit.waiting.length === 1, "one waiting under b");
    const recorded = await env.DB.prepare(`SELECT rate_limit_key FROM rate_limit_keys WHERE workflow_name = ? ORDER BY rate_limit_key`).bind("wrl_raised_later").all<{ rate_limit_key: string }>();
    expect(recorded.results.map((row) => row.rate_limit_key)).toEqual(["wrl-later-a", "wrl-later-b"]);

    // Nothing starts or ends under either key from here: the change alone admits them.
    expect((await api("PUT", "/api/metadata/workflow/wrl_raised_later/rate-limit", { rateLimitKey: "wrl-later-${workflow.input.tenant}", concurrentExecLimit: 2 })).status).toBe(200);
    await waitFor(a2, running);
    await waitFor(b2, running);
    expect(await executionLimitAt(env, "wrl-later-a").snapshot()).toMatchObject({ limit: 2, waiting: [a3] });

    await registerLimited("wrl_raised_later", { rateLimitKey: "wrl-later-${workflow.input.tenant}", concurrentExecLimit: 3 });
    await waitFor(a3, running);
    for (const id of [a1, a2, a3, b1, b2]) await completeHold(id);
  });

  /**
   * Registers `name` with concurrentExecLimit 1, starts one execution that runs and one that waits, then makes the
   * definition and its limit object look registered by an isolate whose clock is a minute ahead (answered: `ahead`).
   */
  async function limitedByClockAhead(name: string): Promise<{ first: string; second: string; ahead: number }> {
    await registerLimited(name, { concurrentExecLimit: 1 });
    const first = await startWorkflow(name);
    await waitFor(first, running);
    const second = await startWorkflow(name);
    await limitOf(name, (limit) => limit.waiting.length === 1, "the second waiting");
    const ahead = Date.now() + 60_000;
    await env.DB.prepare(`UPDATE workflow_defs SET update_time = ?1, definition = json_set(definition, '$.updateTime', ?1) WHERE name = ?2`).bind(ahead, name).run();
    await executionLimitAt(env, name).resize(name, 1, ahead);
    return { first, second, ahead };
  }

  it("a registration or a limit change stored after one saved with a clock ahead is the limit's, its updateTime later than that one's", async () => {
    // Registered (limit 1) and told by an isolate whose clock is a minute ahead: a registration stored after it takes a
    // time before that one's, and the object passed its limit over for good while D1 held it.
    const { first, second, ahead } = await limitedByClockAhead("wrl_clock");

    await registerLimited("wrl_clock", { concurrentExecLimit: 2 });
    expect((await apiOk<JsonObject>("GET", "/api/metadata/workflow/wrl_clock?version=1"))["updateTime"]).toBe(ahead + 1);
    await waitFor(second, running);
    expect(await executionLimitAt(env, "wrl_clock").snapshot()).toMatchObject({ limit: 2, running: [first, second].sort(), waiting: [] });

    // Its own endpoint too, and an execution started under the stored definition enters with that definition's time.
    expect((await api("PUT", "/api/metadata/workflow/wrl_clock/rate-limit", { concurrentExecLimit: 3 })).status).toBe(200);
    expect((await apiOk<JsonObject>("GET", "/api/metadata/workflow/wrl_clock?version=1"))["updateTime"]).toBe(ahead + 2);
    const third = await startWorkflow("wrl_clock");
    await waitFor(third, running);
    expect((await executionLimitAt(env, "wrl_clock").snapshot()).limit).toBe(3);
    for (const id of [first, second, third]) await completeHold(id);
  });

  it("a definition registered again after all its versions were deleted is the limit's, whatever updateTime the deleted one had (stored by a clock ahead)", async () => {
    // Registered (limit 1) and told by an isolate whose clock is a minute ahead, then deleted: with no version left to
    // follow, a registration stored after the deletion took a time before the deleted one's, which the key passed over.
    const { first, second, ahead } = await limitedByClockAhead("wrl_reborn");
    // A refused deletion (no such version) records nothing.
    expect((await api("DELETE", "/api/metadata/workflow/wrl_reborn/7")).status).toBe(404);
    expect(await env.DB.prepare(`SELECT COUNT(*) AS n FROM workflow_def_deletions WHERE name = ?`).bind("wrl_reborn").first()).toEqual({ n: 0 });
    // The deletion lifts the limit (no version is left), told with a time after the deleted one's.
    expect((await api("DELETE", "/api/metadata/workflow/wrl_reborn/1")).status).toBe(200);
    await waitFor(second, running);

    await registerLimited("wrl_reborn", { concurrentExecLimit: 2 });
    const registered = await apiOk<JsonObject>("GET", "/api/metadata/workflow/wrl_reborn?version=1");
    expect(registered["updateTime"]).toBe(ahead + 2);
    expect(await executionLimitAt(env, "wrl_reborn").snapshot()).toMatchObject({ limit: 2, running: [first, second].sort(), waiting: [] });
    for (const id of [first, second]) await completeHold(id);
  });

  it("a deleted latest version gives the workflow's keys the limit of the version left latest, the last one deleted lifts it; an older one deleted changes nothing", async () => {
    await registerLimited("wrl_deleted", { concurrentExecLimit: 1 }, 1);
    await registerLimited("wrl_deleted", { concurrentExecLimit: 3 }, 2);
    await registerLimited("wrl_deleted", { concurrentExecLimit: 1 }, 3);
    const first = await startWorkflow("wrl_deleted");
    await waitFor(first, running);
    const second = await startWorkflow("wrl_deleted");
    await limitOf("wrl_deleted", (limit) => limit.waiting.length === 1, "the second waiting");

    // Version 3 still governs new starts: the limit stays (the route has told the keys when it answers, if at all).
    expect((await api("DELETE", "/api/metadata/workflow/wrl_deleted/1")).status).toBe(200);
    expect(await executionLimitAt(env, "wrl_deleted").snapshot()).toEqual({ limit: 1, running: [first], waiting: [second] });

    // New starts take version 2 now, and its limit: the execution waiting under the deleted version's runs.
    expect((await api("DELETE", "/api/metadata/workflow/wrl_deleted/3")).status).toBe(200);
    await waitFor(second, running);
    expect((await executionLimitAt(env, "wrl_deleted").snapshot()).limit).toBe(3);
    const third = await startWorkflow("wrl_deleted");
    await waitFor(third, running);
    const fourth = await startWorkflow("wrl_deleted");
    await limitOf("wrl_deleted", (limit) => limit.waiting.length === 1, "the fourth waiting");

    // No version left: no definition limits the workflow's executions, and the one waiting runs.
    expect((await api("DELETE", "/api/metadata/workflow/wrl_deleted/2")).status).toBe(200);
    await waitFor(fourth, running);
    for (const id of [first, second, third, fourth]) await completeHold(id);
  });

  it("an older version registered anew changes no limit: new starts take the latest version, whose limit still holds", async () => {
    await registerLimited("wrl_older", { concurrentExecLimit: 1 }, 1);
    await registerLimited("wrl_older", { concurrentExecLimit: 2 }, 2);
    const first = await startWorkflow("wrl_older");
    const second = await startWorkflow("wrl_older");
    for (const id of [first, second]) await waitFor(id, running);
    const third = await startWorkflow("wrl_older");
    await limitOf("wrl_older", (limit) => limit.waiting.length === 1, "the third waiting");

    // Version 1 corrected (its limit as it was): version 2 still governs, as the rate-limit endpoint shows it. The route
    // has told the keys when it answers, if at all.
    await registerLimited("wrl_older", { concurrentExecLimit: 1 }, 1);
    expect(await apiOk<JsonObject>("GET", "/api/metadata/workflow/wrl_older/rate-limit")).toEqual({ concurrentExecLimit: 2 });
    expect((await executionLimitAt(env, "wrl_older").snapshot()).limit).toBe(2);
    await completeHold(first);
    await waitFor(third, running);
    // A newer version registered in the same request is the latest: its limit is told.
    await apiOk("PUT", "/api/metadata/workflow", [1, 3].map((version) => ({ name: "wrl_older", version, schemaVersion: 2, ownerEmail: "test@example.com", rateLimitConfig: { concurrentExecLimit: version }, tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }] })));
    expect((await executionLimitAt(env, "wrl_older").snapshot()).limit).toBe(3);
    for (const id of [second, third]) await completeHold(id);
  });

  it("a limit removed admits the executions waiting under it, but not under a key another workflow's executions share", async () => {
    await registerLimited("wrl_lifted", { concurrentExecLimit: 1 });
    const holder = await startWorkflow("wrl_lifted");
    await waitFor(holder, running);
    const waiting = await startWorkflow("wrl_lifted");
    await limitOf("wrl_lifted", (limit) => limit.waiting.length === 1, "the second waiting");
    expect((await api("DELETE", "/api/metadata/workflow/wrl_lifted/rate-limit")).status).toBe(200);
    await waitFor(waiting, running);

    await registerLimited("wrl_shares_a", { rateLimitKey: "wrl-shared", concurrentExecLimit: 1 });
    await registerLimited("wrl_shares_b", { rateLimitKey: "wrl-shared", concurrentExecLimit: 1 });
    const a = await startWorkflow("wrl_shares_a");
    await waitFor(a, running);
    const b = await startWorkflow("wrl_shares_b");
    await limitOf("wrl-shared", (limit) => limit.waiting.length === 1, "b waiting behind a");
    // The route has told the key when it answers: workflow b's executions still have a limit there.
    expect((await api("DELETE", "/api/metadata/workflow/wrl_shares_a/rate-limit")).status).toBe(200);
    expect(await executionLimitAt(env, "wrl-shared").snapshot()).toEqual({ limit: 1, running: [a], waiting: [b] });
    expect((await getWorkflow(b))["rateLimited"]).toBe(true);
    await completeHold(a);
    await waitFor(b, running);
    for (const id of [holder, waiting, b]) await completeHold(id);
  });

  it("removes an execution only once its place is given up, leaving nothing of it in the limit", async () => {
    await registerLimited("wrl_removed", { concurrentExecLimit: 1 });
    const holder = await startWorkflow("wrl_removed");
    await waitFor(holder, running);
    const waiting = await startWorkflow("wrl_removed");
    expect((await api("DELETE", `/api/workflow/${waiting}`)).status).toBe(200);
    await eventually(() => api("DELETE", `/api/workflow/${waiting}/remove`), (response) => response.status === 200, "the terminated execution removed");
    expect((await storedByExecutionObject(waiting)).executionRows).toBe(0);
    expect(await executionLimitAt(env, "wrl_removed").snapshot()).toEqual({ limit: 1, running: [holder], waiting: [] });
    await completeHold(holder);
  });

  it("frees a place taken again for a removed execution (its entry arriving after its leave and its removal): the removed execution answers that it is gone", async () => {
    await registerLimited("wrl_removed_late", { concurrentExecLimit: 1 });
    const limit = executionLimitAt(env, "wrl_removed_late");
    const removed = await startWorkflow("wrl_removed_late");
    await waitFor(removed, running);
    expect((await api("DELETE", `/api/workflow/${removed}`)).status).toBe(200);
    // Removed only once its place is given up (retention's removal is the same call).
    await eventually(() => api("DELETE", `/api/workflow/${removed}/remove`), (response) => response.status === 200, "the terminated execution removed");
    expect(await limit.snapshot()).toEqual({ limit: 1, running: [], waiting: [] });
    // An entry of it still on its way (its caller cut off before the answer) arrives now and takes the place.
    expect(await limit.enter("wrl_removed_late", removed, 1, 0)).toBe("admitted");
    const next = await startWorkflow("wrl_removed_late");
    await limitOf("wrl_removed_late", (snapshot) => snapshot.waiting.length === 1, "the next one waiting");
    await placesDue(limit);
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    await waitFor(next, running);
    expect(await limit.snapshot()).toEqual({ limit: 1, running: [next], waiting: [] });
    expect((await storedByExecutionObject(removed)).executionRows).toBe(0);
    await completeHold(next);
  });

  it("applies an entry and a leave in the order they came: a leave coming in while the entry's D1 record is awaited frees the place the entry took", async () => {
    // The call sequence an execution makes when its entry's caller side was cut off (an eviction, a lost connection)
    // while the limit object still waited for D1: the execution, back, ends and leaves before that entry is done.
    const key = "wrl_enter_leave";
    const limit = executionLimitAt(env, key);
    const recording = gate();
    await runInDurableObject(limit, (instance) => {
      const object = instance as unknown as { env: Env };
      const real = object.env.DB;
      // D1 held at the workflow's record (a network boundary: the statements are still the real ones, run once let go).
      const held = {
        prepare: (sql: string) => real.prepare(sql),
        batch: async (statements: D1PreparedStatement[]) => {
          recording.hit();
          await recording.released;
          return real.batch(statements);
        },
      };
      object.env = { ...object.env, DB: held as unknown as D1Database };
    });
    const entering = limit.enter(key, "wf-entering", 1, 1, "wrl_enter_leave");
    await recording.reached;
    await limit.leave("wf-entering");
    recording.release();
    expect(await entering).toBe("admitted");
    expect(await limit.snapshot()).toEqual({ limit: 1, running: [], waiting: [] });
    // Recorded all the same: a change of the workflow's limit reaches this key.
    const recorded = await env.DB.prepare(`SELECT rate_limit_key FROM rate_limit_keys WHERE workflow_name = ?`).bind("wrl_enter_leave").all();
    expect(recorded.results).toEqual([{ rate_limit_key: key }]);
  });

  it("frees a place whose execution never left it (gone, or ended without its leave): the next execution of the key runs", async () => {
    await registerLimited("wrl_lost", { concurrentExecLimit: 1 });
    const limit = executionLimitAt(env, "wrl_lost");
    // A place taken for an execution that does not exist: what a leave lost leaves (an entry delivered after it, a bug).
    const lost = crypto.randomUUID();
    expect(await limit.enter("wrl_lost", lost, 1, 0, "wrl_lost")).toBe("admitted");
    const next = await startWorkflow("wrl_lost");
    expect(await limitOf("wrl_lost", (snapshot) => snapshot.waiting.length === 1, "the next one waiting")).toEqual({ limit: 1, running: [lost], waiting: [next] });
    await placesDue(limit);
    // The alarm's check asks the execution, which does not exist ("gone"): the place goes to the next.
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    await waitFor(next, running);
    await completeHold(next);
    expect(await limitOf("wrl_lost", (snapshot) => snapshot.running.length === 0, "every place free")).toEqual({ limit: 1, running: [], waiting: [] });
    // An idle key keeps only the alarm that forgets it, an hour on: run before that, it forgets nothing and stays armed.
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    expect(await limit.snapshot()).toEqual({ limit: 1, running: [], waiting: [] });
    expect(await runInDurableObject(limit, (_instance, state) => state.storage.getAlarm())).toBeGreaterThan(Date.now() + IDLE_KEY_FORGET_MS - 60_000);
  });

  it("forgets a key idle for an hour, its storage and its D1 record; an execution under it later starts it afresh", async () => {
    // A key an execution's input names, used once (Orkes' example is the correlation id): kept, each would stay for good.
    await registerLimited("wrl_forgotten", { rateLimitKey: "${workflow.correlationId}", concurrentExecLimit: 1 });
    const key = "wrl-once";
    let limit = executionLimitAt(env, key);
    const recorded = async () => (await env.DB.prepare(`SELECT COUNT(*) AS n FROM rate_limit_keys WHERE rate_limit_key = ?`).bind(key).first<{ n: number }>())!.n;
    const stored = () =>
      runInDurableObject(limit, async (_instance, state) => ({
        kv: [...(await state.storage.list()).keys()],
        tables: state.storage.sql.exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).toArray().map((row) => row.name),
        alarm: await state.storage.getAlarm(),
      }));
    const rows = () => runInDurableObject(limit, (_instance, state) => ["places", "waiting", "workflows"].map((table) => state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n));
    const first = await startWorkflow("wrl_forgotten", {}, `?correlationId=${key}`);
    await waitFor(first, running);
    await completeHold(first);
    await limitOf(key, (snapshot) => snapshot.running.length === 0, "its place given back");
    expect(await recorded()).toBe(1);
    const idle = await stored();
    expect(idle.kv).toEqual(expect.arrayContaining(["key", "limit", "idleSince"]));
    expect(await rows()).toEqual([0, 0, 1]);

    // Idle for an hour (its time moved back rather than waited for): the alarm forgets it.
    await runInDurableObject(limit, (_instance, state) => state.storage.kv.put("idleSince", Date.now() - IDLE_KEY_FORGET_MS - 1));
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    // Nothing stored at all, its tables neither: an empty schema is pages kept for good too, most of what a used key holds.
    expect(await stored()).toEqual({ kv: [], tables: [], alarm: null });
    expect(await recorded()).toBe(0);
    // Reached afterwards by calls that enter nothing (a limit change that read its D1 record before it went, a leave
    // repeated after an eviction), in this instance and in a new one: still nothing stored.
    for (const evicted of [false, true]) {
      if (evicted) {
        await abortAllDurableObjects();
        limit = executionLimitAt(env, key);
      }
      await limit.resize("wrl_forgotten", 5, Date.now());
      await limit.leave(first);
      expect(await limit.snapshot()).toEqual({ limit: 0, running: [], waiting: [] });
      expect(await stored()).toEqual({ kv: [], tables: [], alarm: null });
    }

    // Used again: it starts afresh, recorded again, and still limits.
    const second = await startWorkflow("wrl_forgotten", {}, `?correlationId=${key}`);
    const third = await startWorkflow("wrl_forgotten", {}, `?correlationId=${key}`);
    await waitFor(second, running);
    expect(await limitOf(key, (snapshot) => snapshot.waiting.length === 1, "the third waiting")).toEqual({ limit: 1, running: [second], waiting: [third] });
    expect(await recorded()).toBe(1);
    // Not idle: the alarm forgets nothing.
    await runInDurableObject(limit, (_instance, state) => state.storage.kv.put("idleSince", Date.now() - IDLE_KEY_FORGET_MS - 1));
    await placesDue(limit);
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    expect(await limit.snapshot()).toEqual({ limit: 1, running: [second], waiting: [third] });
    await completeHold(second);
    await completeHold(third);
  });

  it("a limit removed from one workflow while the forget of a key it shares is cut short keeps the other workflow's limit", async () => {
    const key = "wrl-forget-shared";
    await registerLimited("wrl_forget_shared_a", { rateLimitKey: key, concurrentExecLimit: 1 });
    await registerLimited("wrl_forget_shared_b", { rateLimitKey: key, concurrentExecLimit: 1 });
    for (const name of ["wrl_forget_shared_a", "wrl_forget_shared_b"]) {
      const id = await startWorkflow(name);
      await waitFor(id, running);
      await completeHold(id);
      await limitOf(key, (snapshot) => snapshot.running.length === 0, "its place given back");
    }
    // Idle for an hour; the forget unrecords both workflows here, then D1 refuses its delete (the alarm would retry it).
    // Meanwhile workflow a's limit is removed: the key must keep b's, which b's executions still run under.
    const limit = await runInDurableObject(executionLimitAt(env, key), async (instance, state) => {
      const object = instance as unknown as { env: Env };
      const real = object.env.DB;
      object.env = { ...object.env, DB: { prepare: (sql: string) => real.prepare(sql), batch: async () => { throw new Error("D1 unavailable"); } } as unknown as D1Database };
      state.storage.kv.put("idleSince", Date.now() - IDLE_KEY_FORGET_MS - 1);
      try {
        await (instance as ExecutionLimit).alarm();
      } catch {
        // The forget's D1 failure, retried by the alarm.
      } finally {
        object.env = { ...object.env, DB: real };
      }
      await (instance as ExecutionLimit).resize("wrl_forget_shared_a", null, Date.now());
      return (await (instance as ExecutionLimit).snapshot()).limit;
    });
    expect(limit).toBe(1);
  });

  it("a forget whose D1 delete went through but did not end (its answer lost, or the object stopped) leaves the key's workflows to be recorded again by the next entry", async () => {
    await registerLimited("wrl_forget_cut", { concurrentExecLimit: 1 });
    const key = "wrl_forget_cut";
    const limit = executionLimitAt(env, key);
    const recorded = async () => (await env.DB.prepare(`SELECT COUNT(*) AS n FROM rate_limit_keys WHERE rate_limit_key = ?`).bind(key).first<{ n: number }>())!.n;
    const first = await startWorkflow(key);
    await waitFor(first, running);
    await completeHold(first);
    await limitOf(key, (snapshot) => snapshot.running.length === 0, "its place given back");
    expect(await recorded()).toBe(1);

    // Idle for an hour; D1 deletes the key's record, but its answer is lost (a network boundary: the statements are real).
    const failed = await runInDurableObject(limit, async (instance, state) => {
      const object = instance as unknown as { env: Env };
      const real = object.env.DB;
      const lost = {
        prepare: (sql: string) => real.prepare(sql),
        batch: async (statements: D1PreparedStatement[]) => {
          await real.batch(statements);
          throw new Error("D1 answer lost");
        },
      };
      object.env = { ...object.env, DB: lost as unknown as D1Database };
      state.storage.kv.put("idleSince", Date.now() - IDLE_KEY_FORGET_MS - 1);
      try {
        await (instance as ExecutionLimit).alarm();
        return "forgot";
      } catch (error) {
        return String(error);
      } finally {
        object.env = { ...object.env, DB: real };
      }
    });
    expect(failed).toContain("D1 answer lost");
    expect(await recorded()).toBe(0);

    // An entry before the forget is retried: recorded again, so a change of the workflow's limit reaches the key.
    const second = await startWorkflow(key);
    await waitFor(second, running);
    expect(await recorded()).toBe(1);
    expect((await api("PUT", `/api/metadata/workflow/${key}/rate-limit`, { concurrentExecLimit: 4 })).status).toBe(200);
    await limitOf(key, (snapshot) => snapshot.limit === 4, "the raised limit told");
    await completeHold(second);

    // Forgotten at last: its record and its storage go.
    await limitOf(key, (snapshot) => snapshot.running.length === 0, "its place given back");
    await runInDurableObject(limit, (_instance, state) => state.storage.kv.put("idleSince", Date.now() - IDLE_KEY_FORGET_MS - 1));
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    expect(await recorded()).toBe(0);
    expect(await runInDurableObject(limit, (_instance, state) => state.storage.sql.exec(`SELECT name FROM sqlite_master`).toArray())).toEqual([]);
  });

  it("a key forgotten after a limit was lowered takes the lowered limit at its next entry, one of an older definition too", async () => {
    await registerLimited("wrl_lowered_forgotten", { concurrentExecLimit: 3 });
    const key = "wrl_lowered_forgotten";
    const [a, b, c] = [await startWorkflow(key), await startWorkflow(key), await startWorkflow(key)];
    for (const id of [a, b, c]) await waitFor(id, running);
    for (const id of [a, b, c]) expect((await api("DELETE", `/api/workflow/${id}`)).status).toBe(200);
    await limitOf(key, (snapshot) => snapshot.running.length === 0, "every place given up");
    // Lowered while the key is recorded: told, it keeps 1 against the limit 3 its executions' definition brings.
    expect((await api("PUT", `/api/metadata/workflow/${key}/rate-limit`, { concurrentExecLimit: 1 })).status).toBe(200);
    await limitOf(key, (snapshot) => snapshot.limit === 1, "the lowered limit told");

    // Idle an hour: forgotten, the lowered limit with it.
    const limit = executionLimitAt(env, key);
    await runInDurableObject(limit, (_instance, state) => state.storage.kv.put("idleSince", Date.now() - IDLE_KEY_FORGET_MS - 1));
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    expect(await limit.snapshot()).toEqual({ limit: 0, running: [], waiting: [] });

    // Restarted, each runs its own definition (limit 3); the key takes the stored one's all the same: one runs at a time.
    expect((await api("POST", `/api/workflow/${a}/restart`)).status).toBe(204);
    await waitFor(a, running);
    await limitOf(key, (snapshot) => snapshot.limit === 1, "the stored limit read at the first entry");
    for (const id of [b, c]) expect((await api("POST", `/api/workflow/${id}/restart`)).status).toBe(204);
    const both = await limitOf(key, (snapshot) => snapshot.running.length + snapshot.waiting.length === 3, "all three entered");
    expect({ ...both, waiting: [...both.waiting].sort() }).toEqual({ limit: 1, running: [a], waiting: [b, c].sort() });
    for (const id of [a, b, c]) await completeHold(id);
  });

  it("frees a place entered again by an execution that had ended and left (the entry arriving late), and keeps the place of one still running", async () => {
    await registerLimited("wrl_late_entry", { concurrentExecLimit: 1 });
    const limit = executionLimitAt(env, "wrl_late_entry");
    const ended = await startWorkflow("wrl_late_entry");
    await waitFor(ended, running);
    await completeHold(ended);
    await limitOf("wrl_late_entry", (snapshot) => snapshot.running.length === 0, "the ended one's place given back");
    // Its entry, delivered late on the network (after its leave), takes a place again.
    expect(await limit.enter("wrl_late_entry", ended, 1, 0)).toBe("admitted");
    const next = await startWorkflow("wrl_late_entry");
    await limitOf("wrl_late_entry", (snapshot) => snapshot.waiting.length === 1, "the next one waiting");
    await placesDue(limit);
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    await waitFor(next, running);
    expect(await limitOf("wrl_late_entry", (snapshot) => snapshot.running[0] === next, "the next one's place")).toEqual({ limit: 1, running: [next], waiting: [] });

    // Running, it still holds its place: the check keeps it, and the one after waits.
    const after = await startWorkflow("wrl_late_entry");
    await limitOf("wrl_late_entry", (snapshot) => snapshot.waiting.length === 1, "the one after waiting");
    await placesDue(limit);
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    expect(await limit.snapshot()).toEqual({ limit: 1, running: [next], waiting: [after] });
    expect((await getWorkflow(after))["rateLimited"]).toBe(true);
    await completeHold(next);
    await waitFor(after, running);
    await completeHold(after);
  });

  it("a place entered again while the periodic check's answer that its execution was gone is on its way stays held", async () => {
    const key = "wrl_check_race";
    const limit = executionLimitAt(env, key);
    const workflowId = crypto.randomUUID();
    expect(await limit.enter(key, workflowId, 1, 1)).toBe("admitted");
    await placesDue(limit);
    const answering = gate();
    // The execution's answer held on its way: it was gone when asked.
    await heldExecutionAnswers(limit, "holdsPlace", answering, "gone");
    const checking = runDurableObjectAlarm(limit);
    await answering.reached;
    // Meanwhile the execution enters again (its entry repeated after an eviction): it holds the place as of now.
    expect(await limit.enter(key, workflowId, 1, 1)).toBe("admitted");
    answering.release();
    expect(await checking).toBe(true);
    expect((await limit.snapshot()).running).toEqual([workflowId]);
  });

  it("an answer to an admission notice settles that admission only: one given again while it was on its way is told too", async () => {
    const key = "wrl_notice_race";
    const limit = executionLimitAt(env, key);
    const [first, waiter, between] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    expect(await limit.enter(key, first, 1, 1)).toBe("admitted");
    expect(await limit.enter(key, waiter, 1, 1)).toBe("queued");
    const answering = gate();
    // The waiter's answer to its first admission ("taken") held on its way.
    const notices = await heldExecutionAnswers(limit, "admit", answering, "taken");
    await limit.leave(first);
    await answering.reached;
    // Meanwhile it leaves (it ended), enters again (retried) and waits, and is given the place again: a later giving.
    await limit.leave(waiter);
    // The two givings at different milliseconds: the time a place was given is what tells them apart.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await limit.enter(key, between, 1, 1)).toBe("admitted");
    expect(await limit.enter(key, waiter, 1, 1)).toBe("queued");
    await limit.leave(between);
    answering.release();
    // The late answer was to the first admission: the waiter is told of the second (taken for it, it waited for good).
    await eventually(async () => notices(), (count) => count === 2, "the waiter told of its second admission");
    expect((await limit.snapshot()).running).toEqual([waiter]);
  });

  it("retries a notice that keeps failing every 2 s, also once it has failed for longer than the check's period, not at once", async () => {
    const key = "wrl_notice_failing";
    const limit = executionLimitAt(env, key);
    const holder = crypto.randomUUID();
    const admitted = crypto.randomUUID();
    expect(await limit.enter(key, holder, 1, 1)).toBe("admitted");
    expect(await limit.enter(key, admitted, 1, 1)).toBe("queued");
    await unreachableExecutions(limit, ["admit", "holdsPlace"]);
    // The holder leaves: the place goes to the one waiting, whose execution cannot be told.
    await limit.leave(holder);
    expect(await limit.snapshot()).toEqual({ limit: 1, running: [admitted], waiting: [] });
    // Its notices have failed for more than PLACE_CHECK_MS (five minutes) since the place was given.
    await placesDue(limit);
    expect(await runDurableObjectAlarm(limit)).toBe(true);
    // Retried in NOTICE_RETRY_MS (2 s), as before: the check (which asks only about places whose execution was told)
    // has nothing due, and must not bring the alarm forward to now, which would fire it back to back.
    const alarm = await runInDurableObject(limit, (_instance, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm! - Date.now()).toBeGreaterThan(1_000);
    expect(await limit.snapshot()).toEqual({ limit: 1, running: [admitted], waiting: [] });
  });

  it("keeps the place of an execution still on the code before holdsPlace (a deploy under way), asking again at the next check", async () => {
    const key = "wrl_old_execution";
    const limit = executionLimitAt(env, key);
    const holder = crypto.randomUUID();
    const waiter = crypto.randomUUID();
    expect(await limit.enter(key, holder, 1, 1)).toBe("admitted");
    expect(await limit.enter(key, waiter, 1, 1)).toBe("queued");
    // workerd's answer to a method the object's code does not have: not "gone", the execution may well hold its place.
    await unreachableExecutions(limit, ["holdsPlace"], new TypeError('The RPC receiver does not implement the method "holdsPlace".'));
    await placesDue(limit);
    const logError = console.error;
    const lines: string[] = [];
    console.error = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
    try {
      expect(await runDurableObjectAlarm(limit)).toBe(true);
    } finally {
      console.error = logError;
    }
    expect(await limit.snapshot()).toEqual({ limit: 1, running: [holder], waiting: [waiter] });
    // Kept, and said so: a place whose execution never answers is one the limit never gives to another.
    const kept = lines.map((line) => JSON.parse(line) as { msg: string }).filter((line) => line.msg.startsWith("held place not checked"));
    expect(kept).toEqual([expect.objectContaining({ workflowId: holder, attempt: 1, error: expect.stringContaining("does not implement") })]);
    // Asked again a check's period (five minutes) later, not at once.
    const alarm = await runInDurableObject(limit, (_instance, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm! - Date.now()).toBeGreaterThan(4 * 60_000);
  });

  it("the reads of the places held on every entry, leave and check go through an index, in both limit objects", async () => {
    const key = "wrl_indexed";
    expect(await executionLimitAt(env, key).enter(key, crypto.randomUUID(), 2, 1)).toBe("admitted");
    const plans = [
      ...(await runInDurableObject(executionLimitAt(env, key), (_instance, state) => placeReadPlans(state))),
      ...(await runInDurableObject(taskLimitAt(env, "wrl_indexed_task"), (_instance, state) => placeReadPlans(state))),
    ];
    expect(plans).toHaveLength(6);
    for (const plan of plans) expect(plan).toContain("places_by_check");
  });

  it("an object created before places were checked gets their checked_at, its places then due for a check", async () => {
    const key = "wrl_old_table";
    const limit = executionLimitAt(env, key);
    const lost = crypto.randomUUID();
    // Its place goes with the old table; its alarm (the check's, five minutes ahead) stays.
    expect(await limit.enter(key, crypto.randomUUID(), 2, 1)).toBe("admitted");
    await runInDurableObject(limit, (_instance, state) => {
      // The table as the code before the check made it, with a place whose execution does not exist.
      state.storage.sql.exec(`DROP TABLE places`);
      state.storage.sql.exec(`CREATE TABLE places (workflow_id TEXT PRIMARY KEY, told INTEGER NOT NULL)`);
      state.storage.sql.exec(`INSERT INTO places (workflow_id, told) VALUES (?, 1)`, lost);
    });
    // The object starts again on the new code (a new stub: the old one's connection is cut), which adds the column; a
    // second start finds it there. Started by reads, not entries: an entry would arm the alarm at once for the place
    // due, and workerd would run it by itself, beside the test's runDurableObjectAlarm.
    await abortAllDurableObjects();
    expect(await executionLimitAt(env, key).snapshot()).toEqual({ limit: 2, running: [lost], waiting: [] });
    await abortAllDurableObjects();
    const restarted = executionLimitAt(env, key);
    expect(await restarted.snapshot()).toEqual({ limit: 2, running: [lost], waiting: [] });
    for (const plan of await runInDurableObject(restarted, (_instance, state) => placeReadPlans(state))) expect(plan).toContain("places_by_check");
    // The old place was never checked: due at once, its execution gone, it is freed.
    expect(await runDurableObjectAlarm(restarted)).toBe(true);
    expect(await restarted.snapshot()).toEqual({ limit: 2, running: [], waiting: [] });
    // The table takes entries as the new code makes them.
    const other = crypto.randomUUID();
    expect(await restarted.enter(key, other, 2, 1)).toBe("admitted");
    expect(await restarted.snapshot()).toEqual({ limit: 2, running: [other], waiting: [] });
  });

  it("refuses a bad rateLimitConfig at registration, storing nothing", async () => {
    const response = await api("POST", "/api/metadata/workflow", {
      name: "wrl_refused",
      version: 1,
      schemaVersion: 2,
      ownerEmail: "test@example.com",
      rateLimitConfig: { rateLimitKey: "${workflow.input", concurrentExecLimit: -2 },
      tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }],
    });
    expect(response.status).toBe(400);
    const body = await response.json<{ validationErrors: Array<{ path: string }> }>();
    expect(body.validationErrors.map((issue) => issue.path).sort()).toEqual(["rateLimitConfig.concurrentExecLimit", "rateLimitConfig.rateLimitKey"]);
    expect((await api("GET", "/api/metadata/workflow/wrl_refused")).status).toBe(404);
  });

  it("shows the config in the registered definition, and no limit fields on unlimited executions", async () => {
    await registerLimited("wrl_shown", { rateLimitKey: "shared", concurrentExecLimit: 3 });
    expect((await apiOk<JsonObject>("GET", "/api/metadata/workflow/wrl_shown"))["rateLimitConfig"]).toEqual({ rateLimitKey: "shared", concurrentExecLimit: 3 });
    await register({ name: "wrl_plain", tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP", inputParameters: {} }] });
    const plain = await waitFor(await startWorkflow("wrl_plain"), ["COMPLETED"]);
    expect(plain).not.toHaveProperty("rateLimited");
  });

  it("sets, reads and removes a workflow's rate limit through its own endpoint (every version's), refusing a bad one whole", async () => {
    await register({ name: "wrl_endpoint", version: 1, tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }] });
    await register({ name: "wrl_endpoint", version: 2, tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }] });
    expect((await api("GET", "/api/metadata/workflow/wrl_endpoint/rate-limit")).status).toBe(404);

    expect((await api("PUT", "/api/metadata/workflow/wrl_endpoint/rate-limit", { rateLimitKey: "${workflow.input.tenant}", concurrentExecLimit: 1 })).status).toBe(200);
    expect(await apiOk("GET", "/api/metadata/workflow/wrl_endpoint/rate-limit")).toEqual({ rateLimitKey: "${workflow.input.tenant}", concurrentExecLimit: 1 });
    const v1 = await apiOk<JsonObject>("GET", "/api/metadata/workflow/wrl_endpoint?version=1");
    expect(v1["rateLimitConfig"]).toEqual({ rateLimitKey: "${workflow.input.tenant}", concurrentExecLimit: 1 });

    // It applies from the next start.
    const first = await startWorkflow("wrl_endpoint", { tenant: "wrl-t1" });
    await waitFor(first, running);
    const second = await startWorkflow("wrl_endpoint", { tenant: "wrl-t1" });
    expect(await getWorkflow(second)).toMatchObject({ rateLimited: true, rateLimitKey: "wrl-t1" });

    // The Python client's name for the limit is taken too; a bad body changes nothing.
    const refused = await api("PUT", "/api/metadata/workflow/wrl_endpoint/rate-limit", { concurrentExecLimit: "lots", rateLimitKey: "${oops" });
    expect(refused.status).toBe(400);
    expect((await refused.json<{ validationErrors: Array<{ path: string }> }>()).validationErrors.map((issue) => issue.path).sort()).toEqual(["concurrentExecLimit", "rateLimitKey"]);
    expect(await apiOk("GET", "/api/metadata/workflow/wrl_endpoint/rate-limit")).toEqual({ rateLimitKey: "${workflow.input.tenant}", concurrentExecLimit: 1 });
    expect((await api("PUT", "/api/metadata/workflow/wrl_endpoint/rate-limit", { concurrentExecutionLimit: 2 })).status).toBe(200);
    expect(await apiOk("GET", "/api/metadata/workflow/wrl_endpoint/rate-limit")).toEqual({ concurrentExecLimit: 2 });

    expect((await api("DELETE", "/api/metadata/workflow/wrl_endpoint/rate-limit")).status).toBe(200);
    expect((await api("GET", "/api/metadata/workflow/wrl_endpoint/rate-limit")).status).toBe(404);
    expect(await apiOk<JsonObject>("GET", "/api/metadata/workflow/wrl_endpoint?version=2")).not.toHaveProperty("rateLimitConfig");
    const unlimited = await startWorkflow("wrl_endpoint", { tenant: "wrl-t1" });
    await waitFor(unlimited, (workflow) => workflow.tasks.length === 1);
    expect(await getWorkflow(unlimited)).not.toHaveProperty("rateLimited");

    // An unknown name in Conductor's words, as the GET of its rate limit (and of its definition) says it.
    for (const [method, body] of [["GET", undefined], ["PUT", { concurrentExecLimit: 1 }], ["DELETE", undefined]] as const) {
      const nowhere = await api(method, "/api/metadata/workflow/wrl_nowhere/rate-limit", body);
      expect(nowhere.status, method).toBe(404);
      expect(((await nowhere.json()) as { message: string }).message, method).toBe("No such workflow found by name: wrl_nowhere, version: null");
    }
    for (const id of [first, unlimited]) await completeHold(id);
    await waitFor(second, running);
    await completeHold(second);
  });
});
