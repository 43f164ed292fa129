import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_SCRUBBED_REASON_LENGTH } from "../../src/engine/masked-reason";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, type WorkflowJson } from "./helpers";

const inline = (ref: string, expression: string, inputs: JsonObject = {}, evaluatorType = "javascript"): JsonObject => ({
  name: ref,
  taskReferenceName: ref,
  type: "INLINE",
  inputParameters: { evaluatorType, expression, ...inputs },
});
const waitTask = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });

function updateTask(workflowId: string, taskId: string, outputData: JsonObject): Promise<string> {
  return apiOk<string>("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId, status: "COMPLETED", outputData });
}

describe("INLINE through the router", () => {
  it("computes from an HTTP response, and the next call uses the result; a synchronous execute answers the finished workflow", async () => {
    await register({
      name: "inline_pipeline",
      tasks: [
        httpTask("fetch", { uri: target("/echo/inline?n=20"), method: "GET" }),
        inline(
          "price",
          "(function () { const n = Number($.query.n); return { total: n * $.factor + 2, label: 'order-' + (n * $.factor + 2) }; })()",
          { query: "${fetch.output.response.body.query}", factor: "${workflow.input.factor}" },
        ),
        httpTask("report", { uri: target("/count/inline-${price.output.result.label}"), method: "GET" }),
      ],
      outputParameters: { total: "${price.output.result.total}" },
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/inline_pipeline/1", { input: { factor: 2 } });
    expect(run.status, JSON.stringify(run)).toBe("COMPLETED");
    expect(run.output).toEqual({ total: 42 });
    expect(run.tasks[1]).toMatchObject({ taskType: "INLINE", status: "COMPLETED", outputData: { result: { total: 42, label: "order-42" } } });
    expect(await hits("inline-order-42")).toBe(1);
  });

  it("a script that throws fails its task for good (no retry, as Conductor) and the workflow with the error as reason; nothing after it runs", async () => {
    await register({
      name: "inline_throws",
      tasks: [inline("check", "if (!$.sku) { throw new Error('sku is required'); } $.sku", { sku: "${workflow.input.sku}" }), httpTask("after", { uri: target("/count/inline-throws-after"), method: "GET" })],
    });
    const failed = await waitFor(await startWorkflow("inline_throws", {}), ["FAILED"]);
    expect(failed.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "The INLINE script failed: Error: sku is required" });
    expect(failed["reasonForIncompletion"]).toContain("sku is required");
    expect(await hits("inline-throws-after")).toBe(0);
  });

  it("a script that throws an error of megabytes fails its task with the error cut, where the update that ran it answered 500 (the task's row over 2 MB) as would every one after it", async () => {
    // The reason and output.error each hold the error: 2.4 MB in the task's row, over the local 2.2 MB (2 MB deployed).
    await register({ name: "inline_throws_long", tasks: [waitTask("hold"), inline("dump", "throw new Error('x'.repeat(1200000) + ' end')")] });
    const workflowId = await startWorkflow("inline_throws_long");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await updateTask(workflowId, waiting.tasks[0]!.taskId, {});
    const failed = await waitFor(workflowId, ["FAILED"]);
    const dump = failed.tasks[1]!;
    const reason = String(dump["reasonForIncompletion"]);
    expect(dump.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(reason).toMatch(/^The INLINE script failed: Error: x+\.\.\.$/);
    expect(reason).toHaveLength(MAX_SCRUBBED_REASON_LENGTH + "...".length);
    expect(dump.outputData["error"]).toBe(reason);
  });

  it("completes with a Map the script returns as an object of its entries, as Conductor's GraalJS result does", async () => {
    const tally = "(function () { const byKind = new Map(); $.items.forEach(function (item) { byKind.set(item.kind, (byKind.get(item.kind) || 0) + 1); }); return { byKind: byKind }; })()";
    await register({ name: "inline_map", tasks: [inline("tally", tally, { items: "${workflow.input.items}" }, "graaljs")] });
    const done = await waitFor(await startWorkflow("inline_map", { items: [{ kind: "a" }, { kind: "b" }, { kind: "a" }] }), ["COMPLETED"]);
    expect(done.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { result: { byKind: { a: 2, b: 1 } } } });
  });

  it("names the line of a script of more than one line that fails, as Conductor does: at run time in the reason, at registration in the 400", async () => {
    // As Orkes' UI writes a script: one statement a line.
    const script = "(function () {\n  var order = $.order;\n  return order.lines.length;\n})();";
    await register({ name: "inline_line", tasks: [inline("count", script, { order: "${workflow.input.order}" })] });
    const failed = await waitFor(await startWorkflow("inline_line", { order: {} }), ["FAILED"]);
    expect(failed.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "The INLINE script failed: TypeError: cannot read property 'length' of undefined (at line 3)" });
    const response = await api("POST", "/api/metadata/workflow", {
      name: "inline_line_syntax",
      version: 1,
      schemaVersion: 2,
      ownerEmail: "test@example.com",
      tasks: [inline("count", "(function () {\n  var order = $.order;\n  return order.lines.length;;;\n  if (order {\n})();")],
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { validationErrors: Array<{ path: string; message: string }> };
    expect(body.validationErrors).toEqual([{ path: "tasks[0].inputParameters.expression", message: expect.stringMatching(/^the script does not parse as JavaScript: SyntaxError: .* \(at line 4\)$/) }]);
  });

  it("a script that breaks the interpreter (or replaces JSON.stringify) fails its task; later scripts run on a fresh interpreter", async () => {
    await register({
      name: "inline_breaks",
      tasks: [inline("leak", "var held = new Array(1e6).fill(0); JSON.parse('['.repeat(100000) + ']'.repeat(100000)); 1")],
    });
    const broken = await waitFor(await startWorkflow("inline_breaks"), ["COMPLETED", "FAILED"]);
    expect(broken.tasks[0], JSON.stringify(broken.tasks[0])).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringContaining("broke the script interpreter") });
    await register({ name: "inline_after_break", tasks: [inline("twice", "JSON.stringify = () => '{'; $.n * 2", { n: 21 })] });
    const done = await waitFor(await startWorkflow("inline_after_break"), ["COMPLETED", "FAILED"]);
    expect(done.tasks[0], JSON.stringify(done.tasks[0])).toMatchObject({ status: "COMPLETED", outputData: { result: 42 } });
  });

  it("a script that allocates past its memory budget in many small pieces fails its task for good with out of memory (the same script would again); later scripts run", async () => {
    // 300 strings of 1 MB: each alone is within the budget, which counted none of them (the memory grew to 370 MB).
    await register({ name: "inline_hog", tasks: [inline("hog", "let held = []; for (let i = 0; i < 300; i++) held.push('x'.repeat(1e6)); held.length")] });
    const hog = await waitFor(await startWorkflow("inline_hog"), ["COMPLETED", "FAILED"]);
    expect(hog.tasks[0], JSON.stringify(hog.tasks[0])).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("out of memory") });
    await register({ name: "inline_after_hog", tasks: [inline("twice", "$.n * 2", { n: 21 })] });
    const done = await waitFor(await startWorkflow("inline_after_hog"), ["COMPLETED", "FAILED"]);
    expect(done.tasks[0], JSON.stringify(done.tasks[0])).toMatchObject({ status: "COMPLETED", outputData: { result: 42 } });
  });

  it("a script that fills the interpreter's memory with small objects fails with out of memory, where QuickJS, unable to make its own error, threw null and the reason read 'null'", async () => {
    // A list of small objects: the allocation that fails is a small one, and so is each the "out of memory" error needs.
    // A script that may throw null of its own says so, as the two cannot be told apart.
    await register({
      name: "inline_small_hog",
      tasks: [
        inline("hog", "if (!$.sku) throw new Error('sku is required');\nlet head = null;\nfor (let i = 0; ; i++) head = { next: head, label: 'item ' + i };", { sku: "a1" }),
      ],
    });
    const hog = await waitFor(await startWorkflow("inline_small_hog"), ["COMPLETED", "FAILED"]);
    expect(hog.tasks[0], JSON.stringify(hog.tasks[0])).toMatchObject({
      status: "FAILED_WITH_TERMINAL_ERROR",
      reasonForIncompletion: "The INLINE script failed: InternalError: out of memory",
      outputData: { error: "The INLINE script failed: InternalError: out of memory" },
    });
    await register({ name: "inline_throws_null", tasks: [inline("fail", "let failure = null; throw failure")] });
    const thrown = await waitFor(await startWorkflow("inline_throws_null"), ["COMPLETED", "FAILED"]);
    expect(thrown.tasks[0], JSON.stringify(thrown.tasks[0])).toMatchObject({
      status: "FAILED_WITH_TERMINAL_ERROR",
      reasonForIncompletion: "The INLINE script failed: null (the script threw null, or ran out of memory)",
    });
  });

  it("a script whose result's JSON is larger than the interpreter's memory fails saying it could not be written out, where it read 'is not JSON'", async () => {
    // One text of 1 MB, forty times over: the list takes little memory, its JSON (40 MB) more than the interpreter has.
    await register({ name: "inline_huge_result", tasks: [inline("huge", "const line = 'x'.repeat(1e6); Array(40).fill(line)")] });
    const huge = await waitFor(await startWorkflow("inline_huge_result"), ["COMPLETED", "FAILED"]);
    expect(huge.tasks[0], JSON.stringify(huge.tasks[0]).slice(0, 2000)).toMatchObject({
      status: "FAILED_WITH_TERMINAL_ERROR",
      reasonForIncompletion: "The INLINE script failed: The script's result could not be written out: InternalError: out of memory",
    });
  });

  it("INLINE tasks of one decision (a fork's branches) draw their own Math.random, where they drew the same numbers (QuickJS seeds it from the clock)", async () => {
    const refs = Array.from({ length: 12 }, (_, index) => `ticket${index}`);
    await register({
      name: "inline_random_fork",
      tasks: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: refs.map((ref) => [inline(ref, "'TCK-' + Math.random().toString(36).slice(2)")]) },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: refs },
      ],
    });
    const done = await waitFor(await startWorkflow("inline_random_fork"), ["COMPLETED", "FAILED"]);
    expect(done.status, JSON.stringify(done.tasks)).toBe("COMPLETED");
    const tickets = done.tasks.filter((task) => refs.includes(task.referenceTaskName)).map((task) => task.outputData["result"]);
    expect(tickets).toHaveLength(12);
    expect(new Set(tickets).size, JSON.stringify(tickets)).toBe(12);
  });

  it("runs after the object was evicted: a fresh object loads the interpreter before its first decision", async () => {
    await register({ name: "inline_evicted", tasks: [waitTask("approve"), inline("double", "$.n * 2", { n: "${approve.output.n}" })] });
    const workflowId = await startWorkflow("inline_evicted");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await abortAllDurableObjects();
    await updateTask(workflowId, waiting.tasks[0]!.taskId, { n: 21 });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks[1], JSON.stringify(done.tasks[1])).toMatchObject({ status: "COMPLETED", outputData: { result: 42 } });
  });

  it("a restart with useLatestDefinitions onto a version with scripts runs them", async () => {
    await register({ name: "inline_restart", tasks: [waitTask("gate")] });
    const workflowId = await startWorkflow("inline_restart");
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=stop`);
    await waitFor(workflowId, ["TERMINATED"]);
    await register({ name: "inline_restart", version: 2, tasks: [inline("answer", "[1, 2, 3].map((x) => x * $.k)", { k: 2 })] });
    await apiOk("POST", `/api/workflow/${workflowId}/restart?useLatestDefinitions=true`, undefined, 204);
    const done = await waitFor(workflowId, (workflow) => workflow.status !== "RUNNING" && workflow["workflowVersion"] === 2);
    expect(done.tasks[0], JSON.stringify(done.tasks)).toMatchObject({ status: "COMPLETED", outputData: { result: [2, 4, 6] } });
  });

  it("refuses a script that does not parse at registration, with its path, and stores nothing", async () => {
    const definition = {
      name: "inline_bad_syntax",
      version: 1,
      schemaVersion: 2,
      ownerEmail: "test@example.com",
      tasks: [inline("ok", "$.a"), inline("broken", "function ( { return 1 }")],
    };
    const response = await api("POST", "/api/metadata/workflow", definition);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; validationErrors: Array<{ path: string; message: string }> };
    expect(body.error).toBe("VALIDATION_ERROR");
    expect(body.validationErrors).toEqual([{ path: "tasks[1].inputParameters.expression", message: expect.stringMatching(/^the script does not parse as JavaScript: SyntaxError: /) }]);
    expect((await api("GET", "/api/metadata/workflow/inline_bad_syntax")).status).toBe(404);
    // In a batch, nothing of it is stored either, and the path names the definition.
    const batch = await api("PUT", "/api/metadata/workflow", [{ ...definition, name: "inline_batch_ok", tasks: [inline("ok", "$.a")] }, definition]);
    expect(batch.status).toBe(400);
    expect(((await batch.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path)).toEqual(["[1].tasks[1].inputParameters.expression"]);
    expect((await api("GET", "/api/metadata/workflow/inline_batch_ok")).status).toBe(404);
  });

  it("shows the task in the Workflow JSON as Conductor does: its input, evaluatorType and expression included", async () => {
    await register({ name: "inline_view", tasks: [inline("pick", "chosen", { chosen: "${workflow.input.colour}" }, "value-param")] });
    const done = await waitFor(await startWorkflow("inline_view", { colour: "teal" }), ["COMPLETED"]);
    const workflow = await getWorkflow(done.workflowId);
    expect(workflow.tasks[0]).toMatchObject({
      taskType: "INLINE",
      referenceTaskName: "pick",
      inputData: { evaluatorType: "value-param", expression: "chosen", chosen: "teal" },
      outputData: { result: "teal" },
    });
  });
});

describe("LAMBDA (Conductor's older INLINE)", () => {
  it("runs its function body through the router and objects, the next task reading its result; a syntax error is refused at registration", async () => {
    await register({
      name: "lambda_flow",
      tasks: [{ name: "calc", taskReferenceName: "calc", type: "LAMBDA", inputParameters: { n: "${workflow.input.n}", scriptExpression: "var doubled = $.n * 2; return { doubled: doubled };" } }],
      outputParameters: { doubled: "${calc.output.result.doubled}" },
    });
    const done = await waitFor(await startWorkflow("lambda_flow", { n: 21 }), ["COMPLETED", "FAILED"]);
    expect(done.output).toEqual({ doubled: 42 });

    const refused = await api("POST", "/api/metadata/workflow", {
      name: "lambda_refused", version: 1, schemaVersion: 2, ownerEmail: "test@example.com",
      tasks: [{ name: "calc", taskReferenceName: "calc", type: "LAMBDA", inputParameters: { scriptExpression: "return {" } }],
    });
    expect(refused.status).toBe(400);
    expect((await refused.json<{ validationErrors: Array<{ path: string }> }>()).validationErrors.map((issue) => issue.path)).toEqual(["tasks[0].inputParameters.scriptExpression"]);
    expect((await api("GET", "/api/metadata/workflow/lambda_refused")).status).toBe(404);
  });
});
