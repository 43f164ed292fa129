/**
 * The workflow status listener (`workflowStatusListenerEnabled`): an execution that ends publishes its WorkflowSummary
 * to Conductor's internal events, and the event handlers of that event act on it. Through the real router, objects
 * and D1.
 */
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { FAILURE_STATUS_QUEUE, FINALIZE_STATUS_QUEUE, SUCCESS_STATUS_QUEUE } from "../../src/engine/status-listener";
import { api, apiOk, eventually, httpTask, register, startWorkflow, target, waitFor } from "./helpers";

/** Orkes' event message as `GET /api/event/message/{event}` answers it. */
type Message = { id: string; eventTarget: string; fullPayload: JsonObject };

/** A handler of `event` that starts `recorder` with the ended workflow's id, status and reason. */
async function recordingHandler(name: string, event: string, recorder: string, condition?: string): Promise<void> {
  const start = { action: "start_workflow", start_workflow: { name: recorder, input: { endedId: "${workflowId}", endedStatus: "${status}", reason: "${reasonForIncompletion}", type: "${workflowType}" } } };
  expect((await api("POST", "/api/event", { name, event, actions: [start], active: true, ...(condition === undefined ? {} : { condition }) })).status).toBe(200);
}

/** The messages published to `event` about execution `workflowId`, once there are `count` (bounded wait). */
async function messagesAbout(event: string, workflowId: string, count: number): Promise<Message[]> {
  const about = async () => (await apiOk<Message[]>("GET", `/api/event/message/${encodeURIComponent(event)}`)).filter((message) => message.fullPayload["workflowId"] === workflowId);
  return eventually(about, (messages) => messages.length >= count, `${count} status message(s) of ${workflowId} on ${event}`);
}

describe("workflowStatusListenerEnabled", () => {
  it("publishes a completed execution's summary to Conductor's success queue, and a failed one's to its failure queue", async () => {
    await register({ name: "sl_recorder", tasks: [{ name: "noop", taskReferenceName: "noop", type: "NOOP", inputParameters: {} }] });
    await recordingHandler("sl_success", `conductor:${SUCCESS_STATUS_QUEUE}`, "sl_recorder", "$.workflowType == 'sl_flow'");
    await recordingHandler("sl_failure", `conductor:${FAILURE_STATUS_QUEUE}`, "sl_recorder", "$.workflowType == 'sl_flow'");
    await register({
      name: "sl_flow",
      workflowStatusListenerEnabled: true,
      tasks: [httpTask("call", { uri: target("/status/${workflow.input.code}"), method: "GET" })],
    });

    const completed = await startWorkflow("sl_flow", { code: 200 }, "?correlationId=sl-ok");
    await waitFor(completed, ["COMPLETED"]);
    const [success] = await messagesAbout(`conductor:${SUCCESS_STATUS_QUEUE}`, completed, 1);
    expect(success!.fullPayload).toMatchObject({ workflowId: completed, workflowType: "sl_flow", version: 1, status: "COMPLETED", correlationId: "sl-ok" });
    expect(JSON.parse(String(success!.fullPayload["input"]))).toEqual({ code: 200 });

    const failed = await startWorkflow("sl_flow", { code: 500 });
    await waitFor(failed, ["FAILED"]);
    const [failure] = await messagesAbout(`conductor:${FAILURE_STATUS_QUEUE}`, failed, 1);
    expect(failure!.fullPayload).toMatchObject({ workflowId: failed, status: "FAILED", failedReferenceTaskNames: "call" });
    // Conductor's queue publisher tells its finalize queue of every ending besides (onWorkflowFinalized).
    for (const [workflowId, status] of [[completed, "COMPLETED"], [failed, "FAILED"]] as const) {
      const [finalized] = await messagesAbout(`conductor:${FINALIZE_STATUS_QUEUE}`, workflowId, 1);
      expect(finalized!.fullPayload).toMatchObject({ workflowId, workflowType: "sl_flow", status });
    }

    // The handlers acted: each started the recorder with what the summary said.
    const recorded = await eventually(
      () => apiOk<{ results: Array<{ workflowId: string }> }>("GET", "/api/workflow/search?workflowName=sl_recorder&size=100"),
      (page) => page.results.length >= 2,
      "two recorder executions",
    );
    const inputs = await Promise.all(recorded.results.map(async (summary) => (await apiOk<{ input: JsonObject }>("GET", `/api/workflow/${summary.workflowId}`)).input));
    expect(inputs.map((input) => `${String(input["endedId"])}:${String(input["endedStatus"])}`).sort()).toEqual([`${completed}:COMPLETED`, `${failed}:FAILED`].sort());
  });

  it("publishes to the sink it names, once per ending: a retried execution that ends again publishes again", async () => {
    const event = "conductor:sl_retried:sl_custom";
    await register({ name: "sl_retried", workflowStatusListenerEnabled: true, workflowStatusListenerSink: "conductor:sl_custom", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }] });
    const workflowId = await startWorkflow("sl_retried");
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${workflowId}/hold/FAILED`, {});
    await waitFor(workflowId, ["FAILED"]);
    await messagesAbout(event, workflowId, 1);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    await waitFor(workflowId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, {});
    await waitFor(workflowId, ["COMPLETED"]);
    const messages = await messagesAbout(event, workflowId, 2);
    expect(messages.map((message) => message.fullPayload["status"]).sort()).toEqual(["COMPLETED", "FAILED"]);
    expect(new Set(messages.map((message) => message.id)).size).toBe(2);
    // Nothing reaches the default queues when a sink is named.
    const defaults = await apiOk<Message[]>("GET", `/api/event/message/${encodeURIComponent(`conductor:${SUCCESS_STATUS_QUEUE}`)}`);
    const finalized = await apiOk<Message[]>("GET", `/api/event/message/${encodeURIComponent(`conductor:${FINALIZE_STATUS_QUEUE}`)}`);
    expect([...defaults, ...finalized].some((message) => message.fullPayload["workflowId"] === workflowId)).toBe(false);
  });

  it("publishes nothing for a definition without it, and refuses a sink it cannot publish to", async () => {
    await register({ name: "sl_quiet", tasks: [httpTask("call", { uri: target("/echo/sl-quiet"), method: "GET" })] });
    const quiet = await startWorkflow("sl_quiet");
    await waitFor(quiet, ["COMPLETED"]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const published = await apiOk<Message[]>("GET", `/api/event/message/${encodeURIComponent(`conductor:${SUCCESS_STATUS_QUEUE}`)}`);
    expect(published.some((message) => message.fullPayload["workflowId"] === quiet)).toBe(false);

    const refused = await api("POST", "/api/metadata/workflow", { name: "sl_kafka", schemaVersion: 2, workflowStatusListenerEnabled: true, workflowStatusListenerSink: "kafka:orders", tasks: [httpTask("call", { uri: target("/echo"), method: "GET" })] });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path)).toEqual(["workflowStatusListenerSink"]);
    expect((await api("GET", "/api/metadata/workflow/sl_kafka")).status).toBe(404);
    // What clients send for "none" registers, and reads back as the definition's own fields.
    await register({ name: "sl_nulls", workflowStatusListenerEnabled: false, workflowStatusListenerSink: null, tasks: [httpTask("call", { uri: target("/echo"), method: "GET" })] });
    expect(await apiOk("GET", "/api/metadata/workflow/sl_nulls")).toMatchObject({ workflowStatusListenerEnabled: false });
  });
});
