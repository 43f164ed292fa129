import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { loadJqRunner } from "../../src/actors/jq/load";
import { api, apiOk, hits, httpTask, register, startWorkflow, target, waitFor, type WorkflowJson } from "./helpers";

const jq = (ref: string, queryExpression: string, inputs: JsonObject = {}): JsonObject => ({
  name: ref,
  taskReferenceName: ref,
  type: "JSON_JQ_TRANSFORM",
  inputParameters: { queryExpression, ...inputs },
});
const waitTask = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });

/** The validation errors of registering workflow `name` with `tasks`, refused (a 400 VALIDATION_ERROR) and stored nowhere. */
async function refusedRegistration(name: string, tasks: JsonObject[]): Promise<Array<{ path: string; message: string }>> {
  const response = await api("POST", "/api/metadata/workflow", { name, version: 1, schemaVersion: 2, ownerEmail: "test@example.com", tasks });
  expect(response.status).toBe(400);
  const body = (await response.json()) as { error: string; validationErrors: Array<{ path: string; message: string }> };
  expect(body.error).toBe("VALIDATION_ERROR");
  expect((await api("GET", `/api/metadata/workflow/${name}`)).status).toBe(404);
  return body.validationErrors;
}

describe("JSON_JQ_TRANSFORM through the router", () => {
  it("reshapes an HTTP response, and the next call uses the result", async () => {
    await register({
      name: "jq_pipeline",
      tasks: [
        httpTask("fetch", { uri: target("/echo/jq?sku=ab&qty=3"), method: "GET" }),
        jq("shape", '{ label: ("order-" + .query.sku + "-" + .query.qty), skus: [.query.sku] }', { query: "${fetch.output.response.body.query}" }),
        httpTask("report", { uri: target("/count/jq-${shape.output.result.label}"), method: "GET" }),
      ],
      outputParameters: { shaped: "${shape.output.result}", all: "${shape.output.resultList}" },
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/jq_pipeline/1", { input: {} });
    expect(run.status, JSON.stringify(run)).toBe("COMPLETED");
    expect(run.output).toEqual({ shaped: { label: "order-ab-3", skus: ["ab"] }, all: [{ label: "order-ab-3", skus: ["ab"] }] });
    expect(run.tasks[1]).toMatchObject({ taskType: "JSON_JQ_TRANSFORM", status: "COMPLETED" });
    expect(await hits("jq-order-ab-3")).toBe(1);
  });

  it("runs jq's try … catch, error and @base64 in the Worker's sandbox, and an uncaught error fails the task with its message", async () => {
    await register({
      name: "jq_try_catch",
      tasks: [
        jq("parse", '.items | map(try (.qty | tonumber) catch "bad: \\(.)") | {qtys: ., token: ("user:é" | @base64)}', { items: "${workflow.input.items}" }),
        jq("check", 'if (.qtys | map(numbers) | length) < 2 then error("too few quantities") else "ok" end', { qtys: "${parse.output.result.qtys}" }),
      ],
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/jq_try_catch/1", { input: { items: [{ qty: "2" }, { qty: "x" }] } });
    expect(run.status, JSON.stringify(run)).toBe("FAILED");
    expect(run.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { result: { qtys: [2, 'bad: string ("x") cannot be parsed as a number'], token: "dXNlcjrDqQ==" } } });
    expect(run.tasks[1]).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringContaining("too few quantities") });
  });

  it("a filter that errors or runs forever fails the workflow with the error as reason; nothing after it runs", async () => {
    await register({ name: "jq_endless", tasks: [jq("spin", "last(range(1000000000000))"), httpTask("after", { uri: target("/count/jq-endless-after"), method: "GET" })] });
    const failed = await waitFor(await startWorkflow("jq_endless"), ["FAILED"]);
    expect(failed.tasks[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringContaining("ran too long"), outputData: { error: expect.stringContaining("ran too long") } });
    expect(await hits("jq-endless-after")).toBe(0);
  });

  it("a filter's definitions and changes to the sandbox's prototypes never reach another execution's filter", async () => {
    await register({
      name: "jq_tamper",
      tasks: [jq("redefine", 'def join($s): "PWNED"; .'), jq("pollute", '.["__proto__"]["role"] = "admin" | 1')],
    });
    const tampering = await waitFor(await startWorkflow("jq_tamper"), ["COMPLETED", "FAILED"]);
    expect(tampering.status, JSON.stringify(tampering.tasks)).toBe("COMPLETED");
    await register({ name: "jq_victim", tasks: [jq("use", '{joined: (.tags | join(",")), role: (.role // "guest")}', { tags: ["a", "b"] })] });
    const victim = await waitFor(await startWorkflow("jq_victim"), ["COMPLETED", "FAILED"]);
    expect(victim.tasks[0], JSON.stringify(victim.tasks[0])).toMatchObject({ status: "COMPLETED", outputData: { result: { joined: "a,b", role: "guest" } } });
  });

  it("a filter recursing through // without end fails its task (each stack overflow was caught as a jq error, and it ran for good)", async () => {
    await register({ name: "jq_alternative_loop", tasks: [jq("spin", "def f: f // f; f")] });
    const failed = await waitFor(await startWorkflow("jq_alternative_loop"), ["COMPLETED", "FAILED"], 20_000);
    expect(failed.tasks[0], JSON.stringify(failed.tasks[0])).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringMatching(/stack overflow|ran too long|broke the jq interpreter/) });
  });

  it("a filter that allocates past its memory budget in many small pieces fails its task with out of memory", async () => {
    await register({ name: "jq_hog", tasks: [jq("hog", '[range(300) as $i | reduce range(20) as $j ("x"; . + .) | split("y")] | length')] });
    const hog = await waitFor(await startWorkflow("jq_hog"), ["COMPLETED", "FAILED"]);
    expect(hog.tasks[0], JSON.stringify(hog.tasks[0])).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringContaining("out of memory") });
  });

  it("says out of memory when the sandbox's memory is too full to make an error (QuickJS throws null then)", async () => {
    const runner = await loadJqRunner();
    // Larger than a task's input may be (MAX_PAYLOAD_BYTES may be raised): about 8 MiB of items, written out as text
    // four times over (an update no longer copies the whole input, so it no longer fills the memory).
    const items = Array.from({ length: 60_000 }, (_, index) => ({ id: index, note: "n".repeat(120) }));
    const outcome = runner.run(".items | tojson | . + . + . + . | length", { items });
    expect(outcome).toMatchObject({ ok: false, error: expect.stringContaining("out of memory") });
    expect(runner.run(".n * 2", { n: 21 })).toEqual({ ok: true, values: [42] });
  });

  it("recurses a def about 115 to 190 levels deep, and stops a deeper or endless recursion with QuickJS's stack overflow before the isolate's own stack overflows", async () => {
    const runner = await loadJqRunner();
    expect(runner.run("def f: if . < 150 then . + 1 | f else . end; 0 | f", {})).toEqual({ ok: true, values: [150] });
    expect(runner.run("def fact: if . <= 1 then 1 else . * (. - 1 | fact) end; 100 | fact | . > 1e157", {})).toEqual({ ok: true, values: [true] });
    expect(runner.run('def build: if . > 0 then {c: (. - 1 | build)} else {} end; def depth: if has("c") then (.c | depth) + 1 else 0 end; 120 | build | depth', {})).toEqual({ ok: true, values: [120] });
    // Each level takes about four times as much of workerd's own stack as of QuickJS's: with QuickJS's limit raised to
    // 4 MiB, the host's stack overflowed near 250 levels ("the filter broke the jq interpreter", which replaces it), and
    // at 256 KiB it still did now and then for the first filter. The limit must stay below that for every shape.
    for (const filter of [
      "def f: if . < 100000 then . + 1 | f else . end; 0 | f",
      "def fact: if . <= 1 then 1 else . * (. - 1 | fact) end; 5000 | fact",
      "def f: f; f",
      "def f: 1 + f; f",
      "def f: [f]; f",
      "def f: f?; f",
      "def f: try f catch 0; f",
      "def f: label $a | f; f",
      "def f: . as $x | f; f",
      "def f($a): f($a); f(1)",
      "def f: reduce f as $x (0; .); f",
      "def f: first(f); f",
      'def f: "\\(f)"; f',
    ]) {
      expect(runner.run(filter, {}), filter).toEqual({ ok: false, error: "The jq filter failed: stack overflow" });
    }
    expect(runner.run(".n * 2", { n: 21 })).toEqual({ ok: true, values: [42] });
  });

  it("fails a task whose filter writes out a value nested thousands of levels deep, which overflows the Worker's own stack, and the next filters of the same run work", async () => {
    // QuickJS's JSON.stringify takes far more of workerd's stack per level than of its own, so no stack limit short of
    // crippling recursion stops it first: the host's RangeError is caught, and the sandbox is made again.
    await register({
      name: "jq_deep_value",
      tasks: [
        { ...jq("deep", "try (reduce range(20000) as $i (1; [.]) | tojson | length) catch 0"), optional: true },
        jq("next", ".n * 2", { n: 21 }),
        jq("then", "def f: if . < 150 then . + 1 | f else . end; 0 | f"),
      ],
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/jq_deep_value/1", { input: {} });
    expect(run.status, JSON.stringify(run.tasks)).toBe("COMPLETED");
    expect(run.tasks[0]).toMatchObject({ status: "COMPLETED_WITH_ERRORS", reasonForIncompletion: expect.stringContaining("the filter broke the jq interpreter") });
    expect(run.tasks.slice(1).map((task) => task.outputData)).toEqual([expect.objectContaining({ result: 42 }), expect.objectContaining({ result: 150 })]);
  });

  it("runs after the object was evicted: a fresh object loads jq before its first decision", async () => {
    await register({ name: "jq_evicted", tasks: [waitTask("approve"), jq("double", ".n * 2", { n: "${approve.output.n}" })] });
    const workflowId = await startWorkflow("jq_evicted");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await abortAllDurableObjects();
    await apiOk<string>("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: waiting.tasks[0]!.taskId, status: "COMPLETED", outputData: { n: 21 } });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks[1], JSON.stringify(done.tasks[1])).toMatchObject({ status: "COMPLETED", outputData: { result: 42, resultList: [42] } });
  });

  it("refuses a filter that does not compile and a missing one at registration, with their paths, and stores nothing", async () => {
    const validationErrors = await refusedRegistration("jq_bad_filter", [jq("ok", ".a"), jq("broken", "{ a: .b"), { name: "none", taskReferenceName: "none", type: "JSON_JQ_TRANSFORM", inputParameters: { a: 1 } }]);
    expect(validationErrors).toEqual([
      { path: "tasks[2].inputParameters.queryExpression", message: expect.stringContaining("is required") },
      { path: "tasks[1].inputParameters.queryExpression", message: expect.stringMatching(/^the jq filter does not compile: /) },
    ]);
  });

  it("reads filters as jq 1.6 does: defs alone give the input, a label ends only its own run, and try binds to a term, so an error on an operator's right fails the task", async () => {
    await register({
      name: "jq_grammar",
      tasks: [
        jq("defs", "def f: 1;", { n: 5 }),
        jq("labels", "[label $a | def f(g): label $a | g, 2; f(break $a), 3]"),
        // (try .n) + error(…): the error is raised, where the body ran to the end and caught it (a null result).
        jq("tried", 'try .n + error("late: \\(.n)")', { n: "${defs.output.result.n}" }),
        httpTask("after", { uri: target("/count/jq-grammar-after"), method: "GET" }),
      ],
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/jq_grammar/1", { input: {} });
    expect(run.status, JSON.stringify(run.tasks)).toBe("FAILED");
    expect(run.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { result: { queryExpression: "def f: 1;", n: 5 } } });
    expect(run.tasks[1]).toMatchObject({ status: "COMPLETED", outputData: { result: [] } });
    expect(run.tasks[2]).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringContaining("late: 5") });
    expect(await hits("jq-grammar-after")).toBe(0);
  });

  it("refuses at registration a string whose \\u escape jq 1.6 refuses: a lone high surrogate, or fewer than four hexadecimal digits", async () => {
    const validationErrors = await refusedRegistration("jq_bad_escape", [jq("surrogate", '.name + "\\ud800"'), jq("short", '"\\u12" + .name')]);
    expect(validationErrors).toEqual([
      { path: "tasks[0].inputParameters.queryExpression", message: expect.stringContaining("the jq filter does not compile: Invalid \\uXXXX\\uXXXX surrogate pair escape") },
      { path: "tasks[1].inputParameters.queryExpression", message: expect.stringContaining("the jq filter does not compile: Invalid \\uXXXX escape") },
    ]);
  });

  it("refuses at registration, as jq 1.6 refuses to compile them, a misspelt function, a variable nothing binds and a dangling pipe, and stores nothing", async () => {
    const validationErrors = await refusedRegistration("jq_undefined_names", [jq("misspelt", "if .vip then uppercase(.name) else .name end"), jq("unbound", ".items | map(. * $rate)"), jq("dangling", ".a |")]);
    expect(validationErrors).toEqual([
      { path: "tasks[0].inputParameters.queryExpression", message: "the jq filter does not compile: uppercase/1 is not defined" },
      { path: "tasks[1].inputParameters.queryExpression", message: "the jq filter does not compile: $rate is not defined" },
      { path: "tasks[2].inputParameters.queryExpression", message: expect.stringMatching(/^the jq filter does not compile: syntax error: an expression is missing/) },
    ]);
  });
});
