import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { FailureWorkflowStart, JsonObject } from "../../src/engine/model";
import { executionStub } from "../../src/worker/executions";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, storedByExecutionObject, target, waitFor, type WorkflowJson } from "./helpers";

const FAILURE_KEY = "conductor.failure_workflow";
const ENDED = ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"];

/** A workflow whose only task fails for good (HTTP 500, no retries). */
async function registerFailing(name: string, failureWorkflow: string | undefined, extra: Record<string, unknown> = {}) {
  await register({ name, tasks: [httpTask("charge", { uri: target("/status/500"), method: "POST", body: { order: "${workflow.input.orderId}" } }, { retryCount: 0 })], ...(failureWorkflow === undefined ? {} : { failureWorkflow }), ...extra });
}

/** A failure workflow that counts its runs under `key` and outputs what it was given. */
async function registerHandler(name: string, key: string) {
  await register({
    name,
    tasks: [httpTask("notify", { uri: target(`/count/${key}`), method: "GET" })],
    outputParameters: { failed: "${workflow.input.workflowId}", status: "${workflow.input.failureStatus}", reason: "${workflow.input.reason}" },
  });
}

/** A workflow that times out after a second (TIME_OUT_WF) waiting at a webhook, after `before`, with failure workflow `failureWorkflow`. */
async function registerTimingOut(name: string, failureWorkflow: string, before: JsonObject[]) {
  await register({ name, timeoutSeconds: 1, timeoutPolicy: "TIME_OUT_WF", failureWorkflow, tasks: [...before, { name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] });
}

async function failureWorkflowOf(workflowId: string): Promise<string> {
  const failed = await eventually(() => getWorkflow(workflowId), (workflow) => typeof workflow.output[FAILURE_KEY] === "string", "the failure workflow's id in the output");
  return failed.output[FAILURE_KEY] as string;
}

describe("failureWorkflow", () => {
  it("a failed workflow starts its failure workflow with Conductor's input and names it in its output", async () => {
    await registerHandler("fw_handler", "fw-handler");
    await registerFailing("fw_orders", "fw_handler");
    const workflowId = await startWorkflow("fw_orders", { orderId: 42 }, "?correlationId=order-42");
    const failed = await waitFor(workflowId, ENDED);
    expect(failed.status).toBe("FAILED");
    const handlerId = await failureWorkflowOf(workflowId);
    expect(handlerId).toMatch(/^[0-9a-f-]{36}$/);
    const handler = await waitFor(handlerId, ENDED);
    expect(handler).toMatchObject({ status: "COMPLETED", workflowName: "fw_handler", correlationId: "order-42" });
    expect(handler.input).toMatchObject({
      orderId: 42,
      workflowId,
      failureStatus: "FAILED",
      failureTaskId: failed.tasks[0]!.taskId,
      reason: failed["reasonForIncompletion"] as string,
      failedWorkflow: { workflowId, status: "FAILED", tasks: [{ referenceTaskName: "charge", status: "FAILED" }] },
    });
    expect(handler.output).toEqual({ failed: workflowId, status: "FAILED", reason: failed["reasonForIncompletion"] });
    expect(await hits("fw-handler")).toBe(1);
    // Nothing is owed any more: the failed execution can be removed, and the handler outlives it.
    await eventually(() => storedByExecutionObject(workflowId), (stored) => !stored.metaKeys.some((key) => key.startsWith("failureStart:")), "the owed start to be done");
    await apiOk("DELETE", `/api/workflow/${workflowId}/remove`);
    expect((await getWorkflow(handlerId)).status).toBe("COMPLETED");
  });

  it("a failure workflow that cannot start is reported in the output, and nothing runs under its id", async () => {
    await registerFailing("fw_missing", "fw_not_registered");
    const workflowId = await startWorkflow("fw_missing");
    await waitFor(workflowId, ENDED);
    const reported = await eventually(
      () => getWorkflow(workflowId),
      (workflow) => String(workflow.output[FAILURE_KEY]).startsWith("Error workflow"),
      "the output to say the failure workflow did not start",
    );
    expect(reported.output[FAILURE_KEY]).toBe("Error workflow fw_not_registered failed to start.  reason: No such workflow found by name: fw_not_registered, version: null");
    expect((await storedByExecutionObject(workflowId)).metaKeys.filter((key) => key.startsWith("failureStart:"))).toEqual([]);
  });

  it("the name may come from the input (${workflow.input.onFailure})", async () => {
    await registerHandler("fw_dynamic_handler", "fw-dynamic");
    await registerFailing("fw_dynamic", "${workflow.input.onFailure}");
    const workflowId = await startWorkflow("fw_dynamic", { onFailure: "fw_dynamic_handler" });
    const handler = await waitFor(await failureWorkflowOf(workflowId), ENDED);
    expect(handler).toMatchObject({ status: "COMPLETED", workflowName: "fw_dynamic_handler" });
  });

  it("a workflow timing out starts it with failureStatus TIMED_OUT", async () => {
    await registerHandler("fw_timeout_handler", "fw-timeout");
    await registerTimingOut("fw_timeout", "fw_timeout_handler", []);
    const workflowId = await startWorkflow("fw_timeout");
    const timedOut = await waitFor(workflowId, ENDED, 15_000);
    expect(timedOut.status).toBe("TIMED_OUT");
    const handler = await waitFor(await failureWorkflowOf(workflowId), ENDED);
    expect(handler.output).toMatchObject({ failed: workflowId, status: "TIMED_OUT" });
  });

  it("the Workflow JSON names the task that ended it as failedTaskId, a TERMINATE's too, and the failure workflow's failedWorkflow shows it", async () => {
    await registerHandler("fw_task_id_handler", "fw-task-id");
    await registerFailing("fw_task_id", "fw_task_id_handler");
    const workflowId = await startWorkflow("fw_task_id");
    const failed = await waitFor(workflowId, ENDED);
    const failedTaskId = failed.tasks[0]!.taskId;
    expect(failed["failedTaskId"]).toBe(failedTaskId);
    // The failed execution the failure workflow gets shows it too, as Conductor's WorkflowModel does.
    const handler = await waitFor(await failureWorkflowOf(workflowId), ENDED);
    expect(handler.input).toMatchObject({ failureTaskId: failedTaskId, failedWorkflow: { failedTaskId } });
    // An execution no task ended names none.
    expect(handler).not.toHaveProperty("failedTaskId");
    // A TERMINATE ending it FAILED is the task that ended it, as Conductor's endExecution hands it to terminate().
    await register({ name: "fw_task_id_terminate", failureWorkflow: "fw_task_id_handler", tasks: [{ name: "stop", taskReferenceName: "stop", type: "TERMINATE", inputParameters: { terminationStatus: "FAILED", terminationReason: "bad order" } }] });
    const terminated = await waitFor(await startWorkflow("fw_task_id_terminate"), ENDED);
    expect(terminated).toMatchObject({ status: "FAILED", failedTaskId: terminated.tasks[0]!.taskId, failedReferenceTaskNames: [] });
  });

  it("a retry keeps failedTaskId, so a retried run that times out gives its failure workflow the task that failed before as failureTaskId (Conductor's); a restart clears it", async () => {
    await registerHandler("fw_retry_timeout_handler", "fw-retry-timeout");
    // Fails at its first call only: the runs after it wait at the webhook until the workflow times out.
    await registerTimingOut("fw_retry_timeout", "fw_retry_timeout_handler", [httpTask("charge", { uri: target("/flaky/fw-retry-timeout?fail=1"), method: "GET" }, { retryCount: 0 })]);
    const workflowId = await startWorkflow("fw_retry_timeout");
    const failed = await waitFor(workflowId, ENDED);
    expect(failed.status).toBe("FAILED");
    const failedTaskId = failed.tasks[0]!.taskId;
    await waitFor(await failureWorkflowOf(workflowId), ENDED);
    const waitingAtHook = (workflow: WorkflowJson) => workflow.status === "RUNNING" && workflow.tasks.some((task) => task.referenceTaskName === "hook" && task.status === "IN_PROGRESS");
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    expect((await waitFor(workflowId, waitingAtHook))["failedTaskId"]).toBe(failedTaskId);
    const timedOut = await waitFor(workflowId, (workflow) => workflow.status === "TIMED_OUT" && typeof workflow.output[FAILURE_KEY] === "string", 15_000);
    expect(timedOut["failedTaskId"]).toBe(failedTaskId);
    const handler = await waitFor(timedOut.output[FAILURE_KEY] as string, ENDED);
    expect(handler.input).toMatchObject({ workflowId, failureStatus: "TIMED_OUT", failureTaskId: failedTaskId });
    await apiOk("POST", `/api/workflow/${workflowId}/restart`, undefined, 204);
    expect(await waitFor(workflowId, waitingAtHook)).not.toHaveProperty("failedTaskId");
  });

  it("a termination starts it only with ?triggerFailureWorkflow=true", async () => {
    await registerHandler("fw_term_handler", "fw-term");
    await register({ name: "fw_term", failureWorkflow: "fw_term_handler", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] });
    const plain = await startWorkflow("fw_term");
    await apiOk("DELETE", `/api/workflow/${plain}?reason=by%20hand`);
    const asked = await startWorkflow("fw_term");
    await apiOk("DELETE", `/api/workflow/${asked}?reason=by%20hand&triggerFailureWorkflow=true`);
    const handler = await waitFor(await failureWorkflowOf(asked), ENDED);
    expect(handler.output).toEqual({ failed: asked, status: "TERMINATED", reason: "by hand" });
    expect((await getWorkflow(plain)).output).toEqual({});
    expect(await hits("fw-term")).toBe(1);
    // A bad value is refused and terminates nothing.
    const third = await startWorkflow("fw_term");
    expect((await api("DELETE", `/api/workflow/${third}?triggerFailureWorkflow=maybe`)).status).toBe(400);
    expect((await getWorkflow(third)).status).toBe("RUNNING");
  });

  it("a definition with a bad failureWorkflow is refused and not stored", async () => {
    const response = await api("POST", "/api/metadata/workflow", { name: "fw_bad", version: 1, schemaVersion: 2, ownerEmail: "t@example.com", failureWorkflow: "${workflow.secrets.token}", tasks: [httpTask("a", { uri: target("/echo/a"), method: "GET" })] });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ validationErrors: [{ path: "failureWorkflow", message: expect.stringContaining("must not use secrets") }] });
    expect((await api("GET", "/api/metadata/workflow/fw_bad")).status).toBe(404);
    await registerFailing("fw_kept", "fw_handler");
    expect(await apiOk<WorkflowJson>("GET", "/api/metadata/workflow/fw_kept")).toMatchObject({ failureWorkflow: "fw_handler" });
  });

  it("a start owed when the object was evicted is made when it wakes, once", async () => {
    await registerHandler("fw_evict_handler", "fw-evict");
    // No failureWorkflow in the definition: the owed start below is the only one.
    await registerFailing("fw_evict", undefined);
    const workflowId = await startWorkflow("fw_evict");
    const failed = await waitFor(workflowId, ENDED);
    const handlerId = crypto.randomUUID();
    const owed: FailureWorkflowStart = { workflowId: handlerId, name: "fw_evict_handler", input: { workflowId }, triggeringWorkflowId: workflowId, priority: 0, taskToDomain: {}, depth: 1 };
    // What the decision that failed it would have stored, had the object been evicted before the start left.
    await runInDurableObject(executionStub(env, workflowId), (_instance, state) => {
      state.storage.sql.exec(`INSERT INTO meta (key, value) VALUES (?, ?)`, `failureStart:${handlerId}`, JSON.stringify(owed));
    });
    await abortAllDurableObjects();
    expect((await getWorkflow(workflowId)).status).toBe(failed.status);
    // The wake-up makes the start in the background: the handler exists once it is made (a 404 until then).
    await eventually(async () => (await api("GET", `/api/workflow/${handlerId}`)).status, (status) => status === 200, "the owed start to be made");
    expect((await waitFor(handlerId, ENDED)).status).toBe("COMPLETED");
    await eventually(() => storedByExecutionObject(workflowId), (stored) => !stored.metaKeys.includes(`failureStart:${handlerId}`), "the owed start to be done");
    // Woken again, it does not start it a second time.
    await abortAllDurableObjects();
    await getWorkflow(workflowId);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await hits("fw-evict")).toBe(1);
  });
});
