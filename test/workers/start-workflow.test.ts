import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { executionStub } from "../../src/worker/executions";
import { createExecution } from "../../src/engine/decider";
import { apiOk, getWorkflow, register, waitFor, type WorkflowJson } from "./helpers";

const wait = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });
const startWorkflow = (ref: string, request: JsonObject | string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "START_WORKFLOW", inputParameters: { startWorkflow: request } });

describe("START_WORKFLOW", () => {
  it("starts another workflow on its own, with the starter's correlation id, and goes on at once: neither waits for nor ends the other", async () => {
    await register({ name: "sw_started", tasks: [wait("hold")], outputParameters: { got: "${workflow.input.order}" } });
    await register({ name: "sw_starter", tasks: [startWorkflow("kick", { name: "sw_started", version: 1, input: { order: "${workflow.input.order}" } }), { name: "after", taskReferenceName: "after", type: "NOOP" }], outputParameters: { started: "${kick.output.workflowId}" } });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_starter/1", { input: { order: 7 }, correlationId: "corr-sw" });
    expect(run.status, String(run.reasonForIncompletion)).toBe("COMPLETED");
    expect(run.tasks.map((task) => `${task.referenceTaskName}:${String(task["taskType"])}:${task.status}`)).toEqual(["kick:START_WORKFLOW:COMPLETED", "after:NOOP:COMPLETED"]);
    const startedId = String(run.output["started"]);
    const started = await getWorkflow(startedId);
    // Not a child: no parent, and it runs on after its starter completed.
    expect(started).toMatchObject({ workflowName: "sw_started", status: "RUNNING", input: { order: 7 }, correlationId: "corr-sw" });
    expect(started).not.toHaveProperty("parentWorkflowId");
    await apiOk("POST", `/api/tasks/${startedId}/hold/COMPLETED`, {});
    expect((await waitFor(startedId, ["COMPLETED", "FAILED"])).output).toEqual({ got: 7 });
  });

  it("fails (retryable, as Conductor's) when the workflow cannot start, saying why", async () => {
    await register({ name: "sw_unknown", tasks: [startWorkflow("kick", { name: "sw_no_such_workflow" })] });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/sw_unknown/1", { input: {} });
    expect(run.status).toBe("FAILED");
    expect(run.tasks[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringMatching(/^Workflow sw_no_such_workflow could not start: /), outputData: {} });
  });

  it("a start repeated by the same task (its dispatch sent again after an eviction) finds the workflow it started", async () => {
    await register({ name: "sw_again", tasks: [wait("hold")] });
    const definition = JSON.parse(JSON.stringify((await apiOk<JsonObject>("GET", "/api/metadata/workflow/sw_again")))) as Parameters<typeof createExecution>[0]["definition"];
    const workflowId = crypto.randomUUID();
    const params = { workflowId, definition, input: {}, startedByTask: `${crypto.randomUUID()}/task-1` };
    const stub = executionStub(env, workflowId);
    expect(await stub.start(params)).toEqual({ ok: true, value: workflowId });
    expect(await stub.start(params)).toEqual({ ok: true, value: workflowId });
    // Another task (or anyone else) asking for that id is refused.
    expect(await stub.start({ ...params, startedByTask: `${crypto.randomUUID()}/task-2` })).toMatchObject({ ok: false });
    expect((await getWorkflow(workflowId)).tasks).toHaveLength(1);
  });
});
