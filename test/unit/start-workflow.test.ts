import { describe, expect, it } from "vitest";
import { decide } from "./frozen-decide";
import type { WorkflowTaskDef } from "../../src/engine/model";
import { startWorkflowRequest } from "../../src/engine/tasks/start-workflow";
import { env, latestNamed, registrationErrors, startedWith } from "./engine-env";

const startWorkflow = (ref: string, request: unknown): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "START_WORKFLOW", inputParameters: { startWorkflow: request } as WorkflowTaskDef["inputParameters"] });
const noop = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "NOOP", inputParameters: {} });

describe("START_WORKFLOW and NOOP", () => {
  it("register with a start request (or an expression giving one); refuse one without a name, a bad version, or secrets passed on", () => {
    expect(registrationErrors([startWorkflow("kick", { name: "billing", version: 2, input: { order: "${workflow.input.order}" }, correlationId: "c" }), noop("nothing")])).toEqual([]);
    expect(registrationErrors([startWorkflow("kick", "${workflow.input.request}")])).toEqual([]);
    expect(registrationErrors([{ name: "kick", taskReferenceName: "kick", type: "START_WORKFLOW", inputParameters: {} }])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.startWorkflow: a START_WORKFLOW needs inputParameters\.startWorkflow/)]);
    expect(registrationErrors([startWorkflow("kick", { version: 1 })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.startWorkflow\.name: /)]);
    expect(registrationErrors([startWorkflow("kick", { name: "billing", version: -1 })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.startWorkflow\.version: /)]);
    // Orkes' own example gives version "" (the latest), as 0 is.
    expect(registrationErrors([startWorkflow("kick", { name: "billing", version: "" }), startWorkflow("kick2", { name: "billing", version: 0 })])).toEqual([]);
    // As the Python SDK's StartWorkflowTask writes a request with no input nor correlation id.
    expect(registrationErrors([startWorkflow("kick", { name: "billing", version: null, input: null, correlationId: null, taskToDomain: null })])).toEqual([]);
    expect(registrationErrors([startWorkflow("kick", "billing")])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.startWorkflow: startWorkflow must be an object/)]);
    expect(registrationErrors([startWorkflow("kick", { name: "billing", input: { token: "${workflow.secrets.api}" } })])).toEqual([expect.stringMatching(/must not pass secrets to the workflow it starts/)]);
  });

  it("reads Orkes' idempotencyKey, idempotencyStrategy and priority of the start, refusing values no start could take", () => {
    const keyed = { name: "billing", idempotencyKey: "${workflow.input.order}", idempotencyStrategy: "FAIL_ON_RUNNING", priority: 5 };
    expect(registrationErrors([startWorkflow("kick", keyed)])).toEqual([]);
    expect(registrationErrors([startWorkflow("kick", { ...keyed, priority: "${workflow.input.priority}", idempotencyStrategy: null })])).toEqual([]);
    expect(registrationErrors([startWorkflow("kick", { ...keyed, idempotencyStrategy: "NOPE" })])).toEqual([expect.stringMatching(/startWorkflow\.idempotencyStrategy: .*RETURN_EXISTING, FAIL, FAIL_ON_RUNNING/)]);
    expect(registrationErrors([startWorkflow("kick", { ...keyed, priority: 100 })])).toEqual([expect.stringMatching(/startWorkflow\.priority: .*0 to 99/)]);
    expect(startWorkflowRequest({ startWorkflow: { ...keyed, idempotencyKey: 42, priority: "7", taskToDomain: {} } })).toEqual({ name: "billing", input: {}, idempotencyKey: "42", idempotencyStrategy: "FAIL_ON_RUNNING", priority: 7 });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", idempotencyKey: { a: 1 } } })).toEqual({ invalid: expect.stringContaining("startWorkflow.idempotencyKey resolved to an object") });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", idempotencyKey: 12345678901234567890 } })).toEqual({ invalid: expect.stringContaining("startWorkflow.idempotencyKey resolved to an integer beyond 2^53") });
    expect(registrationErrors([startWorkflow("kick", { ...keyed, idempotencyKey: 12345678901234567890 })])).toEqual([expect.stringMatching(/startWorkflow\.idempotencyKey: .*beyond 2\^53/)]);
  });

  it("reads a correlationId given as a number or boolean as its text, as Conductor's StartWorkflow reads its StartWorkflowRequest (Jackson); an object fails the task", () => {
    expect(registrationErrors([startWorkflow("kick", { name: "billing", correlationId: 1234 })])).toEqual([]);
    expect(registrationErrors([startWorkflow("kick", { name: "billing", correlationId: { id: 1 } })])).toEqual([expect.stringMatching(/startWorkflow\.correlationId: correlationId must be a string, a number or a boolean/)]);
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", correlationId: 1234 } })).toEqual({ name: "billing", input: {}, correlationId: "1234" });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", correlationId: false } })).toEqual({ name: "billing", input: {}, correlationId: "false" });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", correlationId: "" } })).toEqual({ name: "billing", input: {} });
    // Blank is none, as Conductor's StartWorkflow reads it (StringUtils.defaultIfBlank): the starter's id is taken.
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", correlationId: "  " } })).toEqual({ name: "billing", input: {} });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", correlationId: ["a"] } })).toEqual({ invalid: expect.stringContaining("startWorkflow.correlationId resolved to an array") });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", correlationId: 12345678901234567890 } })).toEqual({ invalid: expect.stringContaining("beyond 2^53") });
    // At most what a start through the API takes (512 characters): longer, no correlation lookup could find the workflow.
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", correlationId: "c".repeat(512) } })).toEqual({ name: "billing", input: {}, correlationId: "c".repeat(512) });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", correlationId: "c".repeat(513) } })).toEqual({ invalid: "startWorkflow.correlationId must be at most 512 characters, but is 513" });
    // Nor one holding a lone surrogate, which the API's starts refuse: stored as text, it would read back as U+FFFD.
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", correlationId: "order-\ud83d" } })).toEqual({ invalid: expect.stringMatching(/^startWorkflow\.correlationId must not hold a lone surrogate/) });
  });

  it("reads taskToDomain as Conductor's StartWorkflow does (Jackson into a Map<String, String>): an expression may give the map, a number or boolean domain is its text, a null one none; anything else fails the task", () => {
    expect(registrationErrors([startWorkflow("kick", { name: "billing", taskToDomain: "${workflow.input.domains}" })])).toEqual([]);
    expect(registrationErrors([startWorkflow("kick", { name: "billing", taskToDomain: { "*": "${workflow.input.region}", encode: 3, resize: null } })])).toEqual([]);
    expect(registrationErrors([startWorkflow("kick", { name: "billing", taskToDomain: "gpu" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.startWorkflow\.taskToDomain: /)]);
    expect(registrationErrors([startWorkflow("kick", { name: "billing", taskToDomain: { encode: ["gpu"] } })])).toEqual([expect.stringMatching(/startWorkflow\.taskToDomain\.encode: taskToDomain value for "encode" must be a domain/)]);
    // The map an expression gave, a region number among its domains.
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", taskToDomain: { "*": "eu", encode: 3, resize: true, thumb: null } } })).toEqual({ name: "billing", input: {}, taskToDomain: { "*": "eu", encode: "3", resize: "true" } });
    // A map naming a task, if only to give it no domain, is the started workflow's own (Conductor's isEmpty() counts it).
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", taskToDomain: { encode: null } } })).toEqual({ name: "billing", input: {}, taskToDomain: {} });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", taskToDomain: null } })).toEqual({ name: "billing", input: {} });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", taskToDomain: "gpu" } })).toEqual({ invalid: expect.stringContaining('startWorkflow.taskToDomain resolved to "gpu", not an object') });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", taskToDomain: { encode: { zone: "eu" } } } })).toEqual({ invalid: expect.stringContaining("startWorkflow.taskToDomain.encode resolved to an object") });
  });

  it("refuses a taskToDomain domain longer than a poll may name (256 characters): written, at registration; resolved, the task fails", () => {
    const long = "d".repeat(257);
    expect(registrationErrors([startWorkflow("kick", { name: "billing", taskToDomain: { encode: "d".repeat(256), "*": "${workflow.input.region}" } })])).toEqual([]);
    expect(registrationErrors([startWorkflow("kick", { name: "billing", taskToDomain: { encode: `gpu,${long}` } })])).toEqual([expect.stringMatching(/startWorkflow\.taskToDomain\.encode: .*at most 256 characters/)]);
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", taskToDomain: { encode: "d".repeat(256) } } })).toEqual({ name: "billing", input: {}, taskToDomain: { encode: "d".repeat(256) } });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", taskToDomain: { encode: long } } })).toEqual({ invalid: expect.stringContaining("startWorkflow.taskToDomain.encode resolved to a domain of 257 characters") });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", taskToDomain: { encode: `gpu, ${long}` } } })).toEqual({ invalid: expect.stringContaining("over the 256") });
  });

  it("fails the task when a resolved taskToDomain domain holds a lone surrogate (no poll's query can name its queue), naming the entry, not the value", () => {
    const half = "\ud83d";
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", taskToDomain: { "*": "eu", encode: `gpu-${half},NO_DOMAIN` } } })).toEqual({
      invalid: expect.stringMatching(/^startWorkflow\.taskToDomain\.encode resolved to a domain that must not hold a lone surrogate .*no worker could poll that queue$/),
    });
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", taskToDomain: { "*": `\ude00` } } })).toEqual({ invalid: expect.not.stringContaining("\ude00") });
    // A whole character outside the BMP is a domain like any other.
    expect(startWorkflowRequest({ startWorkflow: { name: "billing", taskToDomain: { "*": "eu-😀" } } })).toEqual({ name: "billing", input: {}, taskToDomain: { "*": "eu-😀" } });
  });

  it("START_WORKFLOW chooses the started workflow's id before its dispatch, completes with it, and a retry chooses another", () => {
    let state = startedWith("starter", [{ ...startWorkflow("kick", { name: "billing" }), retryCount: 1 }, noop("after")]).state;
    const kick = latestNamed(state, "kick");
    expect(kick).toMatchObject({ status: "IN_PROGRESS", attempt: 1, outputData: { workflowId: expect.any(String) } });
    const planned = kick.outputData["workflowId"];
    state = decide(state, { type: "dispatchResult", taskId: kick.taskId, attempt: 1, status: "FAILED", output: {}, reason: "Workflow billing could not start: no such workflow" }, env(2_000)).state;
    const retried = latestNamed(state, "kick");
    expect(retried.outputData["workflowId"]).not.toEqual(planned);
    state = decide(state, { type: "dispatchResult", taskId: retried.taskId, attempt: 1, status: "COMPLETED", output: { workflowId: retried.outputData["workflowId"]! } }, env(3_000)).state;
    expect(state.status).toBe("COMPLETED");
    expect(state.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["kick:FAILED", "kick:COMPLETED", "after:COMPLETED"]);
  });

  it("a DYNAMIC may run either", () => {
    const dynamic = (ref: string, run: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "DYNAMIC", dynamicTaskNameParam: "run", inputParameters: { run, startWorkflow: { name: "billing" } } });
    const state = startedWith("dyn", [dynamic("d1", "NOOP"), dynamic("d2", "START_WORKFLOW")]).state;
    expect(state.tasks.map((task) => `${task.referenceTaskName}:${task.taskType}:${task.status}`)).toEqual(["d1:NOOP:COMPLETED", "d2:START_WORKFLOW:IN_PROGRESS"]);
  });
});
