import { describe, expect, it } from "vitest";
import type { JsonObject, JsonValue } from "../../src/engine/model";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, type WorkflowJson } from "./helpers";
import { poll, pollOne, report, simpleTask } from "./task-worker-helpers";

/**
 * `depth` arrays, each holding the next: a few hundred bytes that a query of four `..*` scans multiplies past
 * MAX_QUERY_VALUES, without the test ever allocating those values.
 */
function nestedArrays(depth: number): JsonValue {
  let nested: JsonValue = [];
  for (let level = 0; level < depth; level++) nested = [nested];
  return nested;
}

/**
 * Runs `name`: a fork of a worker task `<source>` and the HTTP task `send` (ref "send", retried once after an hour).
 * The first `send` fails; its retry is scheduled while the branch's output is still empty, then the worker completes
 * `<source>` with `sourceOutput` and the retry is started at once (a worker's IN_PROGRESS), so that it is resolved again
 * with its secrets as it is sent. Answers the ended workflow and the retry.
 */
async function retrySentAfterBranch(name: string, source: string, send: JsonObject, sourceOutput: JsonObject): Promise<{ failed: WorkflowJson; retry: WorkflowJson["tasks"][number] }> {
  await register({
    name,
    tasks: [
      { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[simpleTask(source)], [send]] },
      { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: [`${source}_ref`, "send"] },
    ],
  });
  const workflowId = await startWorkflow(name);
  const isRetry = (task: { referenceTaskName: string; retryCount?: unknown }) => task.referenceTaskName === "send" && task.retryCount === 1;
  const waiting = await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => isRetry(task) && task.status === "SCHEDULED"));
  const retryId = waiting.tasks.find(isRetry)!.taskId;
  expect((await report(await pollOne(source), "COMPLETED", sourceOutput)).status).toBe(200);
  // Its delay is an hour: only this starts it, now that the branch's output is there.
  expect(await apiOk<string>("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: retryId, status: "IN_PROGRESS", outputData: {} })).toBe(retryId);
  const failed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
  return { failed, retry: failed.tasks.find((task) => task.taskId === retryId)! };
}

describe("running a workflow of chained HTTP tasks", () => {
  it("feeds each task's output into the next through expressions and completes with outputParameters", async () => {
    await register({
      name: "chain",
      tasks: [
        httpTask("first", { http_request: { uri: target("/count/chain-a?user=${workflow.input.user}"), method: "GET" } }),
        httpTask("second", { uri: target("/echo/second"), method: "POST", body: { previous: "${first.output.response.body.n}", user: "${workflow.input.user}" } }),
        httpTask("third", { http_request: { uri: target("/echo/third?wf=${workflow.workflowId}&n=${second.output.response.body.body}"), method: "GET" } }),
      ],
      outputParameters: { n: "${first.output.response.body.n}", echoed: "${second.output.body.body}", status: "${third.output.statusCode}" },
    });
    const workflowId = await startWorkflow("chain", { user: "ada" }, "?correlationId=corr-1");
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["first", "COMPLETED"],
      ["second", "COMPLETED"],
      ["third", "COMPLETED"],
    ]);
    const n = done.output["n"];
    expect(typeof n).toBe("number");
    expect(JSON.parse(String(done.output["echoed"]))).toEqual({ previous: n, user: "ada" });
    expect(done.output["status"]).toBe(200);
    expect(done.correlationId).toBe("corr-1");
    // The first task's resolved input is stored as it was sent.
    expect(done.tasks[0]!.inputData).toEqual({ http_request: { uri: target("/count/chain-a?user=ada"), method: "GET" } });
    expect(await hits("chain-a")).toBe(n);
  });

  it("resolves nested ${…}, blank ${} and JSONPath's $ root as Conductor's ParametersUtils does, in task inputs and outputParameters", async () => {
    await register({
      name: "expression_forms",
      tasks: [
        httpTask("lookup", {
          uri: target("/echo/expression-forms"),
          method: "POST",
          body: {
            k1: "${workflow.input.recordIds[${workflow.input.index}]}",
            k2: "${workflow.input.map.${workflow.input.mapValue}[${workflow.input.index}]}",
            k3: "${workflow.input.map.b[${workflow.input.map.${workflow.input.mapValue}[${workflow.input.index}]}]}",
            k4: "${}",
            k5: "${    }",
            k6: "a${}b",
            externalId: "${$.workflow.input.externalId}",
            version: "${$['workflow']['input']['version']}",
            absent: "${workflow.input.recordIds[${workflow.input.absent}]}",
            byId: "${workflow.input.byId}",
          },
        }),
      ],
      outputParameters: { found: "${lookup.input.body.byId.${workflow.input.id}}", label: "id-${workflow.input.recordIds[${workflow.input.index}]}" },
    });
    const input = { recordIds: [1, 2, 3], index: 1, mapValue: "a", map: { a: [1, 2, 3], b: [2, 4, 5], c: [3, 7, 8] }, externalId: "ext-7", version: 2, id: "x", byId: { x: "found" } };
    const done = await waitFor(await startWorkflow("expression_forms", input), ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[0]!.inputData["body"]).toEqual({ k1: 2, k2: 2, k3: 5, k4: "", k5: "", k6: "ab", externalId: "ext-7", version: 2, absent: null, byId: { x: "found" } });
    expect(done.output).toEqual({ found: "found", label: "id-2" });
  });

  it("fails the task, or the workflow for its output, whose JSONPath query would select more than a million values, rather than refusing the start or the worker's result", async () => {
    // 95 arrays nested in each other (some 200 bytes): the four scans would select some 2.5 million values.
    const nested = nestedArrays(95);
    const costly = "${workflow.input.nested..*..*..*..*}";
    const tooCostly = "expression too costly to evaluate: the JSONPath queries resolved together select more than 1000000 values";
    await register({ name: "costly_input", tasks: [httpTask("scan", { uri: target("/echo/costly"), method: "POST", body: { all: costly } })] });
    const failedOnInput = await waitFor(await startWorkflow("costly_input", { nested }), ["COMPLETED", "FAILED"]);
    expect(failedOnInput.status).toBe("FAILED");
    expect(failedOnInput.tasks.map((task) => task.status)).toEqual(["FAILED_WITH_TERMINAL_ERROR"]);
    expect(failedOnInput.tasks[0]!.reasonForIncompletion).toContain(`Invalid task input: ${tooCostly}`);

    await register({ name: "costly_output", tasks: [simpleTask("costly_worker")], outputParameters: { all: costly } });
    const workflowId = await startWorkflow("costly_output", { nested });
    expect((await report(await pollOne("costly_worker"), "COMPLETED", { done: true })).status).toBe(200);
    const failedOnOutput = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(failedOnOutput.status).toBe("FAILED");
    expect(failedOnOutput.reasonForIncompletion).toContain(`The workflow output could not be resolved: ${tooCostly}`);
    expect(failedOnOutput.tasks.map((task) => task.status)).toEqual(["COMPLETED"]);
    expect(failedOnOutput.output).toEqual({});
  });

  it("counts the queries of a task's whole input, or of the workflow's output, together: four expressions each well within a million values fail it, where three run", async () => {
    // 95 arrays nested in each other: each `..*..*..*` takes some 290,000 values, so three pass and four do not.
    const nested = nestedArrays(95);
    const scan = "${workflow.input.nested..*..*..*.length()}";
    const tooCostly = "Invalid task input: expression too costly to evaluate: the JSONPath queries resolved together select more than 1000000 values";
    await register({ name: "costly_together", tasks: [httpTask("scan", { uri: target("/count/costly-together"), method: "POST", body: { a: scan, b: scan, c: scan, d: scan } })] });
    const failed = await waitFor(await startWorkflow("costly_together", { nested }), ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    expect(failed.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining(tooCostly) as unknown });
    expect(await hits("costly-together")).toBe(0);

    await register({ name: "costly_three", tasks: [httpTask("scan", { uri: target("/echo/costly-three"), method: "POST", body: { a: scan, b: scan, c: scan } })] });
    const ran = await waitFor(await startWorkflow("costly_three", { nested }), ["COMPLETED", "FAILED"]);
    expect(ran.status).toBe("COMPLETED");
    expect(ran.tasks[0]!.inputData["body"]).toEqual({ a: 138_415, b: 138_415, c: 138_415 });

    await register({ name: "costly_outputs", tasks: [simpleTask("costly_outputs_worker")], outputParameters: { a: scan, b: scan, c: scan, d: scan } });
    const workflowId = await startWorkflow("costly_outputs", { nested });
    expect((await report(await pollOne("costly_outputs_worker"), "COMPLETED", { done: true })).status).toBe(200);
    const failedOnOutput = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(failedOnOutput.status).toBe("FAILED");
    expect(failedOnOutput.reasonForIncompletion).toContain("The workflow output could not be resolved: expression too costly to evaluate");
  });

  it("fails a task whose resolved input would be far over MAX_PAYLOAD_BYTES (800 references to a 700 KB input, 560 MB written out) without writing it out: nothing is sent and the execution answers", async () => {
    const big = "x".repeat(700 * 1024);
    // Each is a reference to the same string, not a copy: resolving takes no memory, writing the input out 560 MB.
    const body = Object.fromEntries(Array.from({ length: 800 }, (_, index) => [`k${index}`, "${workflow.input.big}"]));
    await register({ name: "huge_input", tasks: [httpTask("send", { uri: target("/count/huge-input"), method: "POST", body })] });
    const started = await api("POST", "/api/workflow/huge_input", { big });
    expect(started.status).toBe(200);
    const workflowId = await started.text();
    const failed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    expect(failed.tasks[0]).toMatchObject({
      status: "FAILED_WITH_TERMINAL_ERROR",
      inputData: {},
      reasonForIncompletion: `Invalid task input: The resolved input is more than ${8 * 768 * 1024} bytes, over the limit of ${768 * 1024} bytes (MAX_PAYLOAD_BYTES)`,
    });
    expect(await hits("huge-input")).toBe(0);
    // The execution still answers its other requests.
    expect((await api("GET", `/api/workflow/${workflowId}/tasks`)).status).toBe(200);

    // Scheduled by a worker's result rather than by the start: the result is taken, and the task after it fails.
    await register({ name: "huge_input_later", tasks: [simpleTask("huge_input_worker"), httpTask("send", { uri: target("/count/huge-input-later"), method: "POST", body })] });
    const laterId = await startWorkflow("huge_input_later", { big });
    expect((await report(await pollOne("huge_input_worker"), "COMPLETED", { done: true })).status).toBe(200);
    const failedLater = await waitFor(laterId, ["COMPLETED", "FAILED"]);
    expect(failedLater.tasks.map((task) => task.status)).toEqual(["COMPLETED", "FAILED_WITH_TERMINAL_ERROR"]);
    expect(await hits("huge-input-later")).toBe(0);
  });

  it("fails a task whose input, resolved again with its secrets as it is sent, would now select more than a million values, rather than leaving the send to be retried for ever", async () => {
    // The send's input reads a parallel branch's output: empty as its retry was scheduled, some 2.5 million values by
    // the four scans once the branch completed; resolved again as it is sent, because it names a secret.
    const nested = nestedArrays(95);
    expect((await api("PUT", "/api/secrets/costly_token", JSON.stringify("Bearer t0ken"))).status).toBe(200);
    const send = httpTask(
      "send",
      { uri: target("/flaky/costly-dispatch?fail=1"), method: "POST", headers: { Authorization: "${workflow.secrets.costly_token}" }, body: { all: "${costly_source_ref.output.nested..*..*..*..*}" } },
      { retryCount: 1, retryDelaySeconds: 3600 },
    );
    const { failed, retry } = await retrySentAfterBranch("costly_dispatch", "costly_source", send, { nested });
    expect(retry.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(retry.reasonForIncompletion).toContain("Invalid task input: expression too costly to evaluate: the JSONPath queries resolved together select more than 1000000 values");
    expect(failed.status).toBe("FAILED");
    expect(await hits("costly-dispatch")).toBe(1);
  });

  it("fails a task whose input, resolved again with its secrets as it is sent, is now far over MAX_PAYLOAD_BYTES (a branch's output read 100 times), without writing it out or sending it", async () => {
    // As above: the retry's input read the branch's output while it was empty; sent after it, 100 times 200 KB of numbers.
    expect((await api("PUT", "/api/secrets/size_token", JSON.stringify("Bearer t0ken"))).status).toBe(200);
    const body = Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`n${index}`, "${size_source_ref.output.nums}"]));
    const send = httpTask("send", { uri: target("/flaky/size-dispatch?fail=1"), method: "POST", headers: { Authorization: "${workflow.secrets.size_token}" }, body }, { retryCount: 1, retryDelaySeconds: 3600 });
    const { failed, retry } = await retrySentAfterBranch("size_dispatch", "size_source", send, { nums: Array(100_000).fill(0) });
    expect(retry).toMatchObject({
      status: "FAILED_WITH_TERMINAL_ERROR",
      reasonForIncompletion: `The input with the secrets' values is more than ${8 * 768 * 1024} bytes, over the limit of ${768 * 1024} bytes (MAX_PAYLOAD_BYTES)`,
    });
    expect(failed.status).toBe("FAILED");
    // The first attempt only: the 20 MB one was never sent.
    expect(await hits("size-dispatch")).toBe(1);
  });

  it("fails a worker's task whose input, resolved again with its secrets as it is polled, would now select more than a million values, with the reason its scheduling gives", async () => {
    const nested = nestedArrays(95);
    expect((await api("PUT", "/api/secrets/costly_poll_token", JSON.stringify("t0ken"))).status).toBe(200);
    const consumer = simpleTask("costly_consumer", "costly_consumer_ref", { token: "${workflow.secrets.costly_poll_token}", all: "${costly_feed_ref.output.nested..*..*..*..*}" });
    await register({
      name: "costly_poll",
      tasks: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[simpleTask("costly_feed")], [consumer]] },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["costly_feed_ref", "costly_consumer_ref"] },
      ],
    });
    const workflowId = await startWorkflow("costly_poll");
    // Both scheduled at once: the consumer's input was resolved while the feed's output was empty.
    expect((await report(await pollOne("costly_feed"), "COMPLETED", { nested })).status).toBe(200);
    const isConsumer = (task: { referenceTaskName: string }) => task.referenceTaskName === "costly_consumer_ref";
    // Polled until its poll has failed it (it is handed out to no one).
    const failed = await eventually(
      async () => ((await poll("costly_consumer")).length > 0 ? null : getWorkflow(workflowId)),
      (workflow) => workflow?.tasks.find(isConsumer)?.status === "FAILED_WITH_TERMINAL_ERROR",
      "the consumer's task failed at its poll",
    );
    const polled = failed!.tasks.find(isConsumer)!;
    expect(polled.reasonForIncompletion).toContain("Invalid task input: expression too costly to evaluate: the JSONPath queries resolved together select more than 1000000 values");
  });

  it("without outputParameters, the output is the last task's output", async () => {
    await register({ name: "last_output", tasks: [httpTask("only", { uri: target("/count/last-output"), method: "GET" })] });
    const workflowId = await startWorkflow("last_output");
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.output["statusCode"]).toBe(200);
    expect((done.output["response"] as { body: { key: string } }).body.key).toBe("last-output");
  });

  it("the synchronous execute endpoint answers with the finished workflow in one call", async () => {
    await register({ name: "sync_exec", tasks: [httpTask("a", { uri: target("/echo/a"), method: "GET" }), httpTask("b", { uri: target("/echo/b"), method: "GET" })] });
    const workflow = await apiOk<{ status: string; tasks: unknown[]; workflowId: string }>("POST", "/api/workflow/execute/sync_exec/1", { input: { x: 1 } });
    expect(workflow.status).toBe("COMPLETED");
    expect(workflow.tasks).toHaveLength(2);
    expect((await getWorkflow(workflow.workflowId)).status).toBe("COMPLETED");
  });

  it("the execute endpoint refuses a JSON array for its StartWorkflowRequest with a 400, running nothing", async () => {
    await register({ name: "sync_exec_array", tasks: [httpTask("a", { uri: target("/count/sync-exec-array"), method: "GET" })] });
    const response = await api("POST", "/api/workflow/execute/sync_exec_array/1", [{ input: { x: 1 } }]);
    expect(response.status, await response.clone().text()).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("VALIDATION_ERROR");
    expect(await hits("sync-exec-array")).toBe(0);
  });

  it("reads boolean query parameters as Spring binds them (True and False as the Python SDK sends them, yes/no, 1/0, on/off) and refuses other values", async () => {
    await register({ name: "bool_params", tasks: [httpTask("a", { uri: target("/echo/bool-params"), method: "GET" })] });
    const workflowId = await startWorkflow("bool_params");
    await waitFor(workflowId, ["COMPLETED"]);
    expect((await apiOk<{ tasks: unknown[] }>("GET", `/api/workflow/${workflowId}?includeTasks=True`)).tasks).toHaveLength(1);
    expect((await apiOk<{ tasks: unknown[] }>("GET", `/api/workflow/${workflowId}?includeTasks=FALSE`)).tasks).toEqual([]);
    const status = await apiOk("GET", `/api/workflow/${workflowId}/status?includeOutput=True&includeVariables=False`);
    expect(status).toHaveProperty("output");
    expect(status).not.toHaveProperty("variables");
    expect((await apiOk<{ tasks: unknown[] }>("GET", `/api/workflow/${workflowId}?includeTasks=yes`)).tasks).toHaveLength(1);
    expect((await apiOk<{ tasks: unknown[] }>("GET", `/api/workflow/${workflowId}?includeTasks=0`)).tasks).toEqual([]);
    for (const value of ["y", "2", "truee"]) {
      const response = await api("GET", `/api/workflow/${workflowId}?includeTasks=${value}`);
      expect(response.status, value).toBe(400);
      expect(await response.json()).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    }
  });

  it("GET /api/workflow/{id}/tasks pages the tasks in order (start=0, count=15 by default), filtered by status, with totalHits and a count per status of all tasks", async () => {
    const echo = (ref: string) => httpTask(ref, { uri: target(`/echo/${ref}`), method: "GET" });
    await register({ name: "task_pages", tasks: [echo("a"), echo("b"), echo("c"), httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true })] });
    const workflowId = await startWorkflow("task_pages");
    await waitFor(workflowId, (workflow) => workflow.tasks[3]?.status === "IN_PROGRESS");
    type TaskPage = { results: Array<{ referenceTaskName: string; status: string; workflowInstanceId: string }>; totalHits: number; summary: Record<string, number> };
    const page = (query = "") => apiOk<TaskPage>("GET", `/api/workflow/${workflowId}/tasks${query}`);
    const refs = (result: TaskPage) => result.results.map((task) => task.referenceTaskName);
    const summary = { COMPLETED: 3, IN_PROGRESS: 1 };

    const all = await page();
    expect(refs(all)).toEqual(["a", "b", "c", "gate"]);
    expect(all).toMatchObject({ totalHits: 4, summary });
    expect(all.results[0]).toMatchObject({ status: "COMPLETED", workflowInstanceId: workflowId });
    expect(await page("?start=1&count=2")).toMatchObject({ totalHits: 4, summary, results: [{ referenceTaskName: "b" }, { referenceTaskName: "c" }] });
    expect(refs(await page("?start=4"))).toEqual([]);
    expect(refs(await page("?count=0"))).toEqual([]);
    const pending = await page("?status=IN_PROGRESS");
    expect(refs(pending)).toEqual(["gate"]);
    expect(pending).toMatchObject({ totalHits: 1, summary });
    const both = await page("?status=IN_PROGRESS&status=COMPLETED&count=2");
    expect(refs(both)).toEqual(["a", "b"]);
    expect(both.totalHits).toBe(4);
    expect((await page("?status=COMPLETED,IN_PROGRESS")).totalHits).toBe(4);
    expect(await page("?status=FAILED")).toMatchObject({ totalHits: 0, results: [], summary });

    const unknown = await api("GET", `/api/workflow/${crypto.randomUUID()}/tasks`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ status: 404, error: "NOT_FOUND" });
    for (const query of ["count=-1", "count=x", "start=-1", "start=1.5", "status=DONE", "status=COMPLETED,NOPE", "count=1001"]) {
      const response = await api("GET", `/api/workflow/${workflowId}/tasks?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json(), query).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    }
  });
});
