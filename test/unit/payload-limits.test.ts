import { scriptRunner } from "./script-runner";
import { jqRunner } from "./jq-runner";
import { describe, expect, it } from "vitest";
import { DEFAULT_ENGINE_CONFIG, type DecideEnv } from "../../src/engine/config";
import { createExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
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
