import { scriptRunner } from "./script-runner";
import { jqRunner } from "./jq-runner";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_ENGINE_CONFIG, type DecideEnv } from "../../src/engine/config";
import { createExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { jsonBytesWithin } from "../../src/engine/json-bytes";
import { oversize } from "../../src/engine/limits";
import { httpOutcome } from "../../src/engine/tasks/http";
import type { JsonValue, WorkflowDef } from "../../src/engine/model";

const definition: WorkflowDef = {
  name: "limits",
  version: 1,
  schemaVersion: 2,
  tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP", asyncComplete: true, inputParameters: { uri: "http://a.test/", method: "GET" } }],
};

function env(now: number): DecideEnv {
  let n = 0;
  return { now, newId: () => `id-${++n}`, config: { ...DEFAULT_ENGINE_CONFIG, maxPayloadBytes: 1_000 }, scripts: scriptRunner, jq: jqRunner, taskDefs: () => null };
}

describe("payload limits in the decider", () => {
  it("oversize() measures UTF-8 JSON and answers only when over the limit", () => {
    expect(oversize({ a: "x".repeat(10) }, 1_000)).toBeUndefined();
    expect(oversize({ a: "x".repeat(2_000) }, 1_000)).toBe(2_008);
    expect(oversize({ a: "é".repeat(400) }, 1_000)).toBeUndefined(); // 808 bytes: é is two
    expect(oversize({ a: "é".repeat(600) }, 1_000)).toBe(1_208);
  });

  it("oversize() counts a value's JSON as JSON.stringify writes it, each shared reference where it appears, and stops past 8 times the limit", () => {
    const tricky = { q: 'a"b\\c', ctl: "\u0001\n\t\u007f", wide: "é€😀", lone: "\ud800x\udc00", n: [0, -0, 1.5e-7, 1e21, Number.NaN, Number.POSITIVE_INFINITY], t: true, f: false, z: null, skipped: undefined, holes: [undefined] };
    expect(jsonBytesWithin(tricky, Number.POSITIVE_INFINITY)).toBe(new TextEncoder().encode(JSON.stringify(tricky)).length);
    const shared = { text: "x".repeat(90) };
    expect(oversize([shared, shared, shared, shared, shared, shared, shared, shared, shared, shared, shared], 1_000)).toBe(JSON.stringify(Array(11).fill(shared)).length);
    // 2,000 references to the same 1,000 characters: 2 MB written out, counted only until past 8,000 bytes.
    const many = Array(2_000).fill("y".repeat(1_000));
    const stopped = oversize(many, 1_000)!;
    expect(stopped).toBeGreaterThan(8_000);
    expect(stopped).toBeLessThan(10_000);
  });

  it("a resolved input far over MAX_PAYLOAD_BYTES (references to one large input value) fails its task without being written out", () => {
    const big = "z".repeat(900);
    const inputParameters = Object.fromEntries(Array.from({ length: 2_000 }, (_, index) => [`k${index}`, "${workflow.input.big}"]));
    const manyRefs: WorkflowDef = { ...definition, tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { uri: "http://a.test/", method: "POST", body: inputParameters } }] };
    const stringify = vi.spyOn(JSON, "stringify");
    let failed;
    let written: number[] = [];
    try {
      failed = decide(createExecution({ workflowId: "wf", definition: manyRefs, input: { big } }, 1_000), { type: "start" }, env(1_000)).state.tasks[0]!;
      written = stringify.mock.results.map((result) => (typeof result.value === "string" ? result.value.length : 0));
    } finally {
      stringify.mockRestore();
    }
    expect(failed).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", inputData: {}, reasonForIncompletion: "Invalid task input: The resolved input is more than 8000 bytes, over the limit of 1000 bytes (MAX_PAYLOAD_BYTES)" });
    // The input whole is some 1.8 MB as JSON: nothing of that size was written.
    expect(Math.max(0, ...written)).toBeLessThan(100_000);
  });

  it("a task input's text that passes MAX_PAYLOAD_BYTES as its values are written in fails the task, as the limit names it", () => {
    let chain: JsonValue = Array.from({ length: 50 }, (_, index) => index);
    for (let level = 0; level < 20; level++) chain = { next: chain };
    const textual: WorkflowDef = { ...definition, tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { uri: "http://a.test/", method: "POST", body: "x${workflow.input.chain..*}" } }] };
    const failed = decide(createExecution({ workflowId: "wf", definition: textual, input: { chain } }, 1_000), { type: "start" }, env(1_000)).state.tasks[0]!;
    expect(failed).toMatchObject({
      status: "FAILED_WITH_TERMINAL_ERROR",
      reasonForIncompletion: "Invalid task input: expression too costly to evaluate: the text it writes its values into is over the limit of 1000 bytes (MAX_PAYLOAD_BYTES); stopped as it passed it",
    });
  });

  it("a workflow output far over MAX_PAYLOAD_BYTES, by references or by text, fails the workflow as it would complete, without being written out", () => {
    const big = "z".repeat(900);
    const outputOf = (outputParameters: Record<string, string>) => {
      const started = decide(createExecution({ workflowId: "wf", definition: { ...definition, outputParameters }, input: { big } }, 1_000), { type: "start" }, env(1_000));
      const task = started.state.tasks[0]!;
      return decide(started.state, { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "COMPLETED", output: {} }, env(2_000)).state;
    };
    const referenced = outputOf(Object.fromEntries(Array.from({ length: 2_000 }, (_, index) => [`k${index}`, "${workflow.input.big}"])));
    expect(referenced).toMatchObject({ status: "FAILED", reasonForIncompletion: "The workflow output is more than 8000 bytes, over the limit of 1000 bytes (MAX_PAYLOAD_BYTES)" });
    const written = outputOf({ text: "${workflow.input.big}${workflow.input.big}" });
    expect(written).toMatchObject({ status: "FAILED", output: {}, reasonForIncompletion: expect.stringContaining("The workflow output could not be resolved: expression too costly to evaluate: the text it writes its values into is over the limit of 1000 bytes") as unknown });
  });

  it("an oversized asyncComplete result fails the task for good instead of leaving it waiting", () => {
    const started = decide(createExecution({ workflowId: "wf", definition, input: {} }, 1_000), { type: "start" }, env(1_000));
    const task = started.state.tasks[0]!;
    expect(task.status).toBe("IN_PROGRESS");
    const result = decide(started.state, { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "IN_PROGRESS", output: { body: "x".repeat(5_000) }, awaitingExternal: true }, env(2_000));
    const failed = result.state.tasks[0]!;
    expect(failed).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", outputData: {}, awaitingExternal: false, endTime: 2_000 });
    expect(failed.reasonForIncompletion).toMatch(/^The task output is 5\d{3} bytes, over the limit of 1000 bytes/);
    expect(result.state.status).toBe("FAILED");
  });

  it("a result that fits is kept as it came", () => {
    const started = decide(createExecution({ workflowId: "wf", definition, input: {} }, 1_000), { type: "start" }, env(1_000));
    const task = started.state.tasks[0]!;
    const result = decide(started.state, { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "IN_PROGRESS", output: { ok: true }, awaitingExternal: true }, env(2_000));
    expect(result.state.tasks[0]).toMatchObject({ status: "IN_PROGRESS", outputData: { ok: true }, awaitingExternal: true, endTime: 0 });
    expect(result.state.status).toBe("RUNNING");
  });

  it("an HTTP response whose JSON body nests deeper than 100 levels fails the task for good instead of making decide() throw", () => {
    const started = decide(createExecution({ workflowId: "wf", definition, input: {} }, 1_000), { type: "start" }, env(1_000));
    const task = started.state.tasks[0]!;
    const depth = 100_000; // small (200 KB) but far deeper than JSON.stringify can recurse
    const body = new TextEncoder().encode("[".repeat(depth) + "]".repeat(depth));
    const outcome = httpOutcome({ statusCode: 200, statusText: "OK", headers: [["content-type", "application/json"]], body }, false);
    expect(outcome).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: "The response body nests objects and arrays deeper than 100 levels" });
    expect(outcome.output).toMatchObject({ body: null, statusCode: 200, response: { body: null, statusCode: 200 } });
    const event = { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: outcome.status, output: outcome.output, reason: outcome.reason! } as const;
    const failed = decide(started.state, event, { ...env(2_000), config: DEFAULT_ENGINE_CONFIG }).state;
    expect(failed.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: outcome.reason });
    expect(failed.status).toBe("FAILED");
  });

  it("a completion from outside nested deeper than 100 levels is refused, changing nothing", () => {
    const started = decide(createExecution({ workflowId: "wf", definition, input: {} }, 1_000), { type: "start" }, env(1_000));
    const task = started.state.tasks[0]!;
    let deep: JsonValue = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => decide(started.state, { type: "externalUpdate", taskId: task.taskId, status: "COMPLETED", output: { deep } }, env(2_000))).toThrow(
      expect.objectContaining({ kind: "INVALID", message: "The task output nests objects and arrays deeper than 100 levels" }),
    );
  });
});
