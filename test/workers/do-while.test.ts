import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { executionStub } from "../../src/worker/executions";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, type WorkflowJson } from "./helpers";

const doWhile = (ref: string, loopOver: JsonObject[], loopCondition: string | undefined, inputParameters: JsonObject = {}): JsonObject => ({
  name: ref,
  taskReferenceName: ref,
  type: "DO_WHILE",
  inputParameters,
  loopOver,
  ...(loopCondition === undefined ? {} : { loopCondition }),
});
const waitTask = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });
const references = (workflow: WorkflowJson) => workflow.tasks.map((task) => `${task.referenceTaskName}:${task.status}`);

describe("DO_WHILE through the router", () => {
  it("polls an HTTP endpoint until its answer says done, then calls on with the last answer; a synchronous execute answers the finished workflow", async () => {
    await register({
      name: "dw_poll",
      tasks: [
        doWhile("wait_ready", [httpTask("poll", { uri: target("/count/dw-poll"), method: "GET" })], "$.poll.response.body.n < 3"),
        httpTask("report", { uri: target("/count/dw-report-${poll.output.response.body.n}"), method: "GET" }),
      ],
      outputParameters: { polls: "${wait_ready.output.iteration}", first: "${poll__1.output.response.body.n}" },
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/dw_poll/1", { input: {} });
    expect(run.status, JSON.stringify(run)).toBe("COMPLETED");
    expect(references(run)).toEqual(["wait_ready:COMPLETED", "poll__1:COMPLETED", "poll__2:COMPLETED", "poll__3:COMPLETED", "report:COMPLETED"]);
    expect(run.output).toEqual({ polls: 3, first: 1 });
    expect(run.tasks[2]).toMatchObject({ taskType: "HTTP", iteration: 2, loopOverTask: true });
    expect(run.tasks[0]!.outputData).toMatchObject({ iteration: 3, 3: { poll: { response: { body: { n: 3 } } } } });
    expect(await hits("dw-poll")).toBe(3);
    expect(await hits("dw-report-3")).toBe(1);
  });

  it("iterates over a list from the workflow input, one call per item", async () => {
    await register({
      name: "dw_items",
      tasks: [doWhile("each", [httpTask("call", { uri: target("/count/dw-item-${each.output.loopItem}-${each.output.loopIndex}"), method: "GET" })], undefined, { items: "${workflow.input.ids}" })],
    });
    const done = await waitFor(await startWorkflow("dw_items", { ids: ["a", "b", "c"] }), ["COMPLETED", "FAILED"]);
    expect(references(done)).toEqual(["each:COMPLETED", "call__1:COMPLETED", "call__2:COMPLETED", "call__3:COMPLETED"]);
    expect([await hits("dw-item-a-0"), await hits("dw-item-b-1"), await hits("dw-item-c-2")]).toEqual([1, 1, 1]);
    // Orkes names the item `item`.
    expect(done.tasks[0]!.outputData).toMatchObject({ iteration: 3, loopIndex: 2, loopItem: "c", item: "c" });
  });

  it("keeps no iteration's outputs with captureOutput false (Orkes'), each task keeping its own and the condition reading them", async () => {
    const count = { name: "count", taskReferenceName: "count", type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression: "({ n: 1 })" } };
    await register({ name: "dw_uncaptured", tasks: [doWhile("rounds", [count], "$.rounds.iteration < 3 && $.count.result.n === 1", { captureOutput: false })] });
    const done = await waitFor(await startWorkflow("dw_uncaptured"), ["COMPLETED", "FAILED"]);
    expect(references(done)).toEqual(["rounds:COMPLETED", "count__1:COMPLETED", "count__2:COMPLETED", "count__3:COMPLETED"]);
    expect(done.tasks[0]!.outputData).toEqual({ iteration: 3 });
    expect(done.tasks[3]!.outputData).toEqual({ result: { n: 1 } });
  });

  it("waits in each iteration for a completion by reference name (the iteration's, or the definition's for the latest), across an eviction", async () => {
    await register({ name: "dw_gate", tasks: [doWhile("rounds", [waitTask("gate")], "$.gate.again === true")] });
    const workflowId = await startWorkflow("dw_gate");
    await waitFor(workflowId, (workflow) => workflow.tasks[1]?.status === "IN_PROGRESS");
    // The object is evicted: a fresh one evaluates the condition (a script) when the completion arrives.
    await abortAllDurableObjects();
    await apiOk("POST", `/api/tasks/${workflowId}/gate__1/COMPLETED`, { again: true });
    await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "gate__2" && task.status === "IN_PROGRESS"));
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, { again: false });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(references(done)).toEqual(["rounds:COMPLETED", "gate__1:COMPLETED", "gate__2:COMPLETED"]);
    expect(done.tasks[0]!.outputData).toEqual({ iteration: 2, 1: { gate: { again: true } }, 2: { gate: { again: false } } });
  });

  it("TASK_EXECUTE on task:<ref> covers that loop task's runs of every iteration: by its plain name, and in a TaskResult", async () => {
    // Task names unlike the reference names: a grant on task:<name> (a worker's) is not what is tested here.
    const named = (ref: string): JsonObject => ({ ...waitTask(ref), name: `${ref}_step` });
    await register({ name: "dw_scope", tasks: [doWhile("rounds", [named("approve"), named("other")], "$.rounds.iteration < 3")] });
    const workflowId = await startWorkflow("dw_scope");
    const user = await createUser("dw-scope", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:approve" }] });
    const h = orkes(user.token);
    const pending = async (ref: string) => (await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS"))).tasks.find((task) => task.referenceTaskName === ref)!;
    // Iteration 1, as a TaskResult naming the run's id: the run is scoped by the loop task's reference name.
    const first = await pending("approve__1");
    expect((await call("POST", "/api/tasks", h, { workflowInstanceId: workflowId, taskId: first.taskId, status: "COMPLETED", outputData: {} })).status).toBe(200);
    const other = await pending("other__1");
    expect((await call("POST", "/api/tasks", h, { workflowInstanceId: workflowId, taskId: other.taskId, status: "COMPLETED", outputData: {} })).status).toBe(403);
    await apiOk("POST", `/api/tasks/${workflowId}/other/COMPLETED`, {});
    // Iteration 2, by the plain name (its latest run): the path names what is checked.
    await pending("approve__2");
    expect((await call("POST", `/api/tasks/${workflowId}/approve/COMPLETED`, h, {})).status).toBe(200);
    await apiOk("POST", `/api/tasks/${workflowId}/other__2/COMPLETED`, {});
    // By the run's own name the path asks for task:approve__3, which this grant does not cover (task:approve__* would).
    await pending("approve__3");
    expect((await call("POST", `/api/tasks/${workflowId}/approve__3/COMPLETED`, h, {})).status).toBe(403);
    expect(references(await waitFor(workflowId, () => true)).slice(-2)).toEqual(["other__2:COMPLETED", "approve__3:IN_PROGRESS"]);
  });

  it("runs a long loop of tasks that never wait to its end, in steps its alarm moves on", async () => {
    const note = { name: "note", taskReferenceName: "note", type: "SET_VARIABLE", inputParameters: { last: "${each.output.loopItem}" } };
    await register({ name: "dw_long", tasks: [doWhile("each", [note], undefined, { items: "${workflow.input.list}", keepLastN: 3 })] });
    const workflowId = await startWorkflow("dw_long", { list: Array.from({ length: 6_000 }, (_, index) => index) });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"], 30_000);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[0]).toMatchObject({ status: "COMPLETED", iteration: 6_000 });
    expect(done["variables"]).toEqual({ last: 5_999 });
  });

  it("keeps a keepLastN loop completed from outside flat: as many stored rows, log lines and shown tasks after 30 iterations as after 15", async () => {
    await register({ name: "dw_flat", tasks: [doWhile("events", [waitTask("next")], "true", { keepLastN: 2 })] });
    const workflowId = await startWorkflow("dw_flat");
    // Everything the execution's object stores, by table (the rows of its execution, its bookkeeping, its tasks' logs).
    const stored = () =>
      runInDurableObject(executionStub(env, workflowId), (_instance, state) => {
        const tables = state.storage.sql.exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name`).toArray();
        return Object.fromEntries(tables.map(({ name }) => [name, state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM "${name}"`).one().n]));
      });
    const iterate = async (times: number) => {
      for (let i = 0; i < times; i++) {
        const waiting = (await getWorkflow(workflowId)).tasks.findLast((task) => task.status === "IN_PROGRESS" && task.taskType === "WAIT")!;
        await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: waiting.taskId, status: "COMPLETED", outputData: { i }, logs: [{ log: `event ${i}`, createdTime: Date.now() }] });
      }
      return { stored: await stored(), shown: references(await getWorkflow(workflowId)).length };
    };
    // The search row is written about a second after the start, its signature kept in meta from then on: waited for,
    // so that 15 iterations done sooner than that do not count it as growth.
    const indexed = () => runInDurableObject(executionStub(env, workflowId), (_instance, state) => state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM meta WHERE key = 'indexed'`).one().n);
    await eventually(indexed, (n) => n === 1, "the search row's signature kept");
    // Each result's request is recorded for 15 minutes (APPLIED_REQUEST_KEEP_MS), so that a repeat of a call a reset cut
    // off is answered as the first was: bounded by time, not by iterations, and left out of the comparison.
    const withoutRequests = ({ stored: { applied_requests: requests, ...rest }, shown }: Awaited<ReturnType<typeof iterate>>) => ({ requests, kept: { stored: rest, shown } });
    const after15 = withoutRequests(await iterate(15));
    const after30 = withoutRequests(await iterate(15));
    expect(after30.kept).toEqual(after15.kept);
    expect([after15.requests, after30.requests]).toEqual([15, 30]);
    expect(after30.kept.shown).toBe(4);
    expect(after30.kept.stored).toMatchObject({ tasks: 4, task_logs: 2 });
  });

  it("keeps a keepLastN loop of sub workflows ended from outside flat: it remembers letting go only the children of the iterations it keeps", async () => {
    await register({ name: "dw_flat_child", tasks: [waitTask("hold")] });
    const child = { name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "dw_flat_child" } };
    await register({ name: "dw_flat_children", tasks: [doWhile("calls", [child], "true", { keepLastN: 2 })] });
    const workflowId = await startWorkflow("dw_flat_children");
    const letGo = () =>
      runInDurableObject(executionStub(env, workflowId), (_instance, state) => {
        const row = state.storage.sql.exec<{ value: string }>(`SELECT value FROM meta WHERE key = 'childrenLetGo'`).toArray()[0];
        return row === undefined ? [] : (JSON.parse(row.value) as string[]);
      });
    const ended: string[] = [];
    for (let iteration = 1; iteration <= 6; iteration++) {
      // The iteration's child started; its task set from outside ends it, and the parent terminates the child.
      const running = await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === `child__${iteration}` && task.status === "IN_PROGRESS" && task["subWorkflowId"] !== undefined));
      const task = running.tasks.find((candidate) => candidate.referenceTaskName === `child__${iteration}`)!;
      ended.push(String(task["subWorkflowId"]));
      await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, status: "COMPLETED", outputData: {} });
    }
    await waitFor(ended.at(-1)!, ["TERMINATED"]);
    // The children of the two iterations kept (of the loop's last decisions: at most three), not one per iteration.
    const kept = await letGo();
    expect(kept.length).toBeLessThanOrEqual(3);
    expect(ended.slice(-2).every((childId) => kept.includes(childId))).toBe(true);
    expect(kept.every((childId) => ended.slice(-3).includes(childId))).toBe(true);
    expect((await api("DELETE", `/api/workflow/${workflowId}`)).status).toBe(200);
  });

  it("a task failing in the loop fails the workflow, the DO_WHILE canceled with it; a retry goes on in that iteration, as Conductor's", async () => {
    await register({
      name: "dw_retry",
      tasks: [
        doWhile(
          "loop",
          [httpTask("once", { uri: target("/count/dw-retry-once-${loop.output.iteration}"), method: "GET" }), httpTask("call", { uri: target("/flaky/dw-retry?fail=1&n=${loop.output.iteration}"), method: "GET" })],
          "$.loop.iteration < 2",
        ),
      ],
    });
    const workflowId = await startWorkflow("dw_retry");
    const failed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    expect(references(failed)).toEqual(["loop:CANCELED", "once__1:COMPLETED", "call__1:FAILED"]);
    expect(failed["reasonForIncompletion"]).toMatch(/^Task call__1 failed: /);
    expect(failed["failedReferenceTaskNames"]).toEqual(["call__1"]);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    // The loop's first iteration is not run again: only the task that failed, as a retry of it.
    expect(references(done)).toEqual(["loop:COMPLETED", "once__1:COMPLETED", "call__1:FAILED", "call__1:COMPLETED", "once__2:COMPLETED", "call__2:COMPLETED"]);
    expect(done.tasks[3]!["retriedTaskId"]).toBe(done.tasks[2]!.taskId);
    expect([await hits("dw-retry-once-1"), await hits("dw-retry-once-2"), await hits("dw-retry")]).toEqual([1, 1, 3]);
  });

  it("runs a loop inside a loop: the inner one afresh in each outer iteration, its runs named ref__<outer>__<inner>, completed by those names across an eviction", async () => {
    await register({
      name: "dw_nested",
      tasks: [
        doWhile(
          "batches",
          [
            doWhile("each", [httpTask("call", { uri: target("/count/dw-nest-${batches.output.loopIndex}-${each.output.loopItem}"), method: "GET" })], undefined, { items: "${batches.output.loopItem}" }),
            doWhile("confirm", [waitTask("gate")], "$.gate.again === true"),
          ],
          undefined,
          { items: "${workflow.input.batches}" },
        ),
      ],
      outputParameters: { batches: "${batches.output.iteration}", lastEach: "${each.output.iteration}" },
    });
    const workflowId = await startWorkflow("dw_nested", { batches: [["a", "b"], ["c"]] });
    await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "gate__1__1" && task.status === "IN_PROGRESS"));
    await abortAllDurableObjects();
    // By its run's name, then by its definition's (the latest run), as a task of a loop outside loops is.
    await apiOk("POST", `/api/tasks/${workflowId}/gate__1__1/COMPLETED`, { again: true });
    await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "gate__1__2" && task.status === "IN_PROGRESS"));
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, { again: false });
    await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "gate__2__1" && task.status === "IN_PROGRESS"));
    await apiOk("POST", `/api/tasks/${workflowId}/gate__2__1/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(references(done)).toEqual(
      ["batches", "each__1", "call__1__1", "call__1__2", "confirm__1", "gate__1__1", "gate__1__2", "each__2", "call__2__1", "confirm__2", "gate__2__1"].map((ref) => `${ref}:COMPLETED`),
    );
    expect(done.output).toEqual({ batches: 2, lastEach: 1 });
    expect(done.tasks.find((task) => task.referenceTaskName === "call__1__2")).toMatchObject({ iteration: 2, loopOverTask: true });
    expect(done.tasks.find((task) => task.referenceTaskName === "each__2")).toMatchObject({ iteration: 1, loopOverTask: true, outputData: { iteration: 1, loopItem: "c" } });
    expect([await hits("dw-nest-0-a"), await hits("dw-nest-0-b"), await hits("dw-nest-1-c")]).toEqual([1, 1, 1]);
  });

  it("refuses a condition that does not parse and a DO_WHILE without tasks at registration, and stores nothing", async () => {
    const body = [httpTask("call", { uri: target("/count/dw-never"), method: "GET" })];
    const response = await api("POST", "/api/metadata/workflow", {
      name: "dw_bad",
      version: 1,
      schemaVersion: 2,
      ownerEmail: "test@example.com",
      tasks: [
        doWhile("broken", body, "$.broken.iteration <"),
        doWhile("empty", [], "false"),
        // As the Go SDK's client writes it: an unset evaluatorType as "", read as none (javascript), checked as such.
        { ...doWhile("go_sdk", [httpTask("go_call", { uri: target("/count/dw-never"), method: "GET" })], "$.go_sdk.iteration <"), evaluatorType: "" },
      ],
    });
    expect(response.status).toBe(400);
    const errors = ((await response.json()) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors;
    expect(errors.map((issue) => issue.path).sort()).toEqual(["tasks[0].loopCondition", "tasks[1].loopOver", "tasks[2].loopCondition"]);
    expect(errors.find((issue) => issue.path === "tasks[0].loopCondition")?.message).toMatch(/^the script does not parse as JavaScript: SyntaxError/);
    expect((await api("GET", "/api/metadata/workflow/dw_bad")).status).toBe(404);
    expect(await hits("dw-never")).toBe(0);
  });

  it("runs a FORK_JOIN in each iteration, its calls side by side, its JOIN waiting for that iteration's tasks, across an eviction", async () => {
    // Each pair of calls is held by the target until both arrive: run one after the other, they would not meet.
    const meet = (ref: string) => httpTask(ref, { uri: target("/meet/dw-fork-${each.output.loopItem}?parties=2"), method: "GET" });
    const fork = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[meet("left")], [meet("right")], [waitTask("gate")]] };
    const join = { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: ["left", "right", "gate"] };
    await register({ name: "dw_fork", tasks: [doWhile("each", [fork, join], undefined, { items: "${workflow.input.rounds}" })], outputParameters: { last: "${fan_join.output.gate}" } });
    const workflowId = await startWorkflow("dw_fork", { rounds: ["x", "y"] });
    const done = (ref: string) => (workflow: WorkflowJson) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "COMPLETED");
    const first = await waitFor(workflowId, (workflow) => done("left__1")(workflow) && done("right__1")(workflow));
    expect(references(first)).toContain("fan_join__1:IN_PROGRESS");
    await abortAllDurableObjects();
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, { round: 1 });
    const second = await waitFor(workflowId, (workflow) => done("left__2")(workflow) && done("right__2")(workflow));
    expect(references(second)).toEqual(expect.arrayContaining(["fan_join__1:COMPLETED", "gate__2:IN_PROGRESS", "fan_join__2:IN_PROGRESS"]));
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, { round: 2 });
    const ended = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(ended.status, String(ended.reasonForIncompletion)).toBe("COMPLETED");
    expect(ended.output).toEqual({ last: { round: 2 } });
    const joined = ended.tasks.filter((task) => task.referenceTaskName.startsWith("fan_join")).map((task) => task.outputData);
    expect(joined.map((output) => [(output["left"] as { response: { body: { met: boolean } } }).response.body.met, output["gate"]])).toEqual([[true, { round: 1 }], [true, { round: 2 }]]);
    expect([await hits("dw-fork-x"), await hits("dw-fork-y")]).toEqual([2, 2]);
  });

  it("fails the workflow for a branch task the JOIN does not wait for that fails last in the iteration, and makes an optional one COMPLETED_WITH_ERRORS", async () => {
    // The rest of the iteration has ended when it fails: the iteration ended with it, passing over its failure (the
    // loop and the workflow COMPLETED, the task FAILED).
    const fork = (side: JsonObject) => ({ name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[side], [waitTask("main")]] });
    const join = { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: ["main"] };
    const statusOf = (workflow: WorkflowJson, ref: string) => workflow.tasks.findLast((task) => task.referenceTaskName === ref)?.status;
    for (const [name, side, status, sideStatus] of [
      ["dw_fork_side_fails", waitTask("side"), "FAILED", "FAILED"],
      ["dw_fork_side_optional", { ...waitTask("side"), optional: true }, "COMPLETED", "COMPLETED_WITH_ERRORS"],
    ] as const) {
      await register({ name, tasks: [doWhile("each", [fork(side), join], undefined, { items: [1] })] });
      const workflowId = await startWorkflow(name);
      await waitFor(workflowId, (workflow) => statusOf(workflow, "side__1") === "IN_PROGRESS" && statusOf(workflow, "main__1") === "IN_PROGRESS");
      await apiOk("POST", `/api/tasks/${workflowId}/main/COMPLETED`, {});
      const holding = await waitFor(workflowId, (workflow) => statusOf(workflow, "fan_join__1") === "COMPLETED");
      expect([holding.status, statusOf(holding, "each")]).toEqual(["RUNNING", "IN_PROGRESS"]);
      await apiOk("POST", `/api/tasks/${workflowId}/side/FAILED`, {});
      const ended = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
      expect([ended.status, statusOf(ended, "side__1")], name).toEqual([status, sideStatus]);
    }
  });

  it("fails the workflow for a SUB_WORKFLOW the JOIN does not wait for whose child is terminated last in the iteration", async () => {
    // The child's termination leaves the task CANCELED, a failure its lane settles as outside a loop (the workflow
    // FAILED): the iteration ended with it first, passing over it (the loop and the workflow COMPLETED).
    await register({ name: "dw_fork_side_child", tasks: [waitTask("child_wait")] });
    const sub = { name: "side", taskReferenceName: "side", type: "SUB_WORKFLOW", subWorkflowParam: { name: "dw_fork_side_child", version: 1 } };
    const fork = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[sub], [waitTask("main")]] };
    const join = { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: ["main"] };
    await register({ name: "dw_fork_side_terminated", tasks: [doWhile("each", [fork, join], undefined, { items: [1] })] });
    const workflowId = await startWorkflow("dw_fork_side_terminated");
    const started = await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "side__1" && typeof task.subWorkflowId === "string") && workflow.tasks.some((task) => task.referenceTaskName === "main__1" && task.status === "IN_PROGRESS"));
    const childId = started.tasks.find((task) => task.referenceTaskName === "side__1")!.subWorkflowId as string;
    await apiOk("POST", `/api/tasks/${workflowId}/main/COMPLETED`, {});
    await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "fan_join__1" && task.status === "COMPLETED"));
    await apiOk("DELETE", `/api/workflow/${childId}?reason=stop`);
    const ended = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect([ended.status, ended.tasks.find((task) => task.referenceTaskName === "side__1")?.status, ended.tasks.find((task) => task.referenceTaskName === "each")?.status]).toEqual(["FAILED", "CANCELED", "CANCELED"]);
  });

  it("goes on past an optional inner DO_WHILE that failed for a task of its loop, in a loop with a fork", async () => {
    // The failed task of the inner loop stays FAILED under its COMPLETED_WITH_ERRORS DO_WHILE: the outer iteration
    // waited for it to be settled, and so for good (the JOIN COMPLETED, the outer DO_WHILE IN_PROGRESS).
    const fork = { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[waitTask("a")], [waitTask("b")]] };
    const join = { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: ["a", "b"] };
    const inner = { ...doWhile("inner", [waitTask("t")], undefined, { items: [1] }), optional: true };
    await register({ name: "dw_nested_optional_fails", tasks: [doWhile("outer", [inner, fork, join], undefined, { items: [1, 2] })] });
    const workflowId = await startWorkflow("dw_nested_optional_fails");
    for (const iteration of [1, 2]) {
      await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === `t__${iteration}__1` && task.status === "IN_PROGRESS"));
      await apiOk("POST", `/api/tasks/${workflowId}/t/FAILED`, {});
      await waitFor(workflowId, (workflow) => [`a__${iteration}`, `b__${iteration}`].every((ref) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS")));
      await apiOk("POST", `/api/tasks/${workflowId}/a/COMPLETED`, {});
      await apiOk("POST", `/api/tasks/${workflowId}/b/COMPLETED`, {});
    }
    const ended = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(references(ended).filter((reference) => reference.startsWith("inner") || reference.startsWith("t__") || reference.startsWith("outer"))).toEqual([
      "outer:COMPLETED",
      "inner__1:COMPLETED_WITH_ERRORS",
      "t__1__1:FAILED",
      "inner__2:COMPLETED_WITH_ERRORS",
      "t__2__1:FAILED",
    ]);
    expect(ended.status).toBe("COMPLETED");
  });
});

/** A WHILE (Conductor OSS's): the DO_WHILE's loop, its condition asked before the first iteration too. */
const whileLoop = (ref: string, loopOver: JsonObject[], loopCondition: string | undefined, inputParameters: JsonObject = {}): JsonObject => ({ ...doWhile(ref, loopOver, loopCondition, inputParameters), type: "WHILE" });

describe("WHILE through the router", () => {
  it("runs no iteration when its condition does not hold at the start: no task of its loop, output iteration 0 (as $.<ref>.iteration read), the workflow going on", async () => {
    await register({
      name: "wh_none",
      tasks: [
        whileLoop("loop", [httpTask("call", { uri: target("/count/wh-none-call"), method: "GET" })], "$.loop.iteration < $.times", { times: "${workflow.input.times}" }),
        httpTask("after", { uri: target("/count/wh-none-after-${loop.output.iteration}"), method: "GET" }),
      ],
      outputParameters: { ran: "${loop.output.iteration}" },
    });
    const done = await waitFor(await startWorkflow("wh_none", { times: 0 }), ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(references(done)).toEqual(["loop:COMPLETED", "after:COMPLETED"]);
    expect(done.tasks[0]).toMatchObject({ taskType: "WHILE", iteration: 0, outputData: { iteration: 0 } });
    expect(done.output).toEqual({ ran: 0 });
    expect([await hits("wh-none-call"), await hits("wh-none-after-0")]).toEqual([0, 1]);
  });

  it("runs N iterations when its condition stops holding after the Nth, named ref__<n>, each iteration's outputs under its number", async () => {
    await register({
      name: "wh_times",
      tasks: [whileLoop("loop", [httpTask("call", { uri: target("/count/wh-times-${loop.output.iteration}"), method: "GET" })], "$.loop.iteration < $.times", { times: "${workflow.input.times}" })],
    });
    const done = await waitFor(await startWorkflow("wh_times", { times: 2 }), ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(references(done)).toEqual(["loop:COMPLETED", "call__1:COMPLETED", "call__2:COMPLETED"]);
    expect(done.tasks[2]).toMatchObject({ iteration: 2, loopOverTask: true });
    expect(done.tasks[0]!.outputData).toMatchObject({ iteration: 2, 1: { call: { response: { body: { key: "wh-times-1" } } } }, 2: { call: { response: { body: { key: "wh-times-2" } } } } });
    expect([await hits("wh-times-1"), await hits("wh-times-2"), await hits("wh-times-3")]).toEqual([1, 1, 0]);
  });

  it("asks a condition reading its loop task's output, absent before the first iteration, until that output says done", async () => {
    await register({
      name: "wh_poll",
      tasks: [whileLoop("wait_ready", [httpTask("poll", { uri: target("/count/wh-poll"), method: "GET" })], "!$.poll || $.poll.response.body.n < 3")],
      outputParameters: { polls: "${wait_ready.output.iteration}" },
    });
    const done = await waitFor(await startWorkflow("wh_poll"), ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(references(done)).toEqual(["wait_ready:COMPLETED", "poll__1:COMPLETED", "poll__2:COMPLETED", "poll__3:COMPLETED"]);
    expect(done.output).toEqual({ polls: 3 });
    expect(await hits("wh-poll")).toBe(3);
  });

  it("fails for good, FAILED_WITH_TERMINAL_ERROR with the workflow, when its condition cannot be evaluated at the start, no task of its loop run", async () => {
    await register({
      name: "wh_broken",
      tasks: [whileLoop("loop", [httpTask("call", { uri: target("/count/wh-broken"), method: "GET" })], "$.missing.field > 0"), httpTask("after", { uri: target("/count/wh-broken-after"), method: "GET" })],
    });
    const done = await waitFor(await startWorkflow("wh_broken"), ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("FAILED");
    expect(references(done)).toEqual(["loop:FAILED_WITH_TERMINAL_ERROR"]);
    expect(done.tasks[0]!.reasonForIncompletion).toMatch(/^The loopCondition could not be evaluated: /);
    expect([await hits("wh-broken"), await hits("wh-broken-after")]).toEqual([0, 0]);
  });

  it("refuses at registration what a DO_WHILE's checks refuse (no tasks, no condition, a condition that does not parse), and stores nothing", async () => {
    const body = [httpTask("call", { uri: target("/count/wh-never"), method: "GET" })];
    const response = await api("POST", "/api/metadata/workflow", {
      name: "wh_bad",
      version: 1,
      schemaVersion: 2,
      ownerEmail: "test@example.com",
      tasks: [whileLoop("broken", body, "$.broken.iteration <"), whileLoop("empty", [], "false"), whileLoop("unbounded", [httpTask("other", { uri: target("/count/wh-never"), method: "GET" })], undefined)],
    });
    expect(response.status).toBe(400);
    const errors = ((await response.json()) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors;
    expect(errors.map((issue) => issue.path).sort()).toEqual(["tasks[0].loopCondition", "tasks[1].loopOver", "tasks[2].loopCondition"]);
    expect(errors.find((issue) => issue.path === "tasks[0].loopCondition")?.message).toMatch(/^the script does not parse as JavaScript: SyntaxError/);
    expect((await api("GET", "/api/metadata/workflow/wh_bad")).status).toBe(404);
  });
});
