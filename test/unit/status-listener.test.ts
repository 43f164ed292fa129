import { describe, expect, it } from "vitest";
import { createExecution } from "../../src/engine/decider";
import type { WorkflowDef, WorkflowExecution } from "../../src/engine/model";
import { FAILURE_STATUS_QUEUE, FINALIZE_STATUS_QUEUE, SUCCESS_STATUS_QUEUE, isStatusListenerSink, statusPublication, statusPublications } from "../../src/engine/status-listener";

function execution(definition: Partial<WorkflowDef> = {}): WorkflowExecution {
  const full: WorkflowDef = { name: "orders", version: 2, schemaVersion: 2, tasks: [{ name: "a", taskReferenceName: "a", type: "NOOP", inputParameters: {} }], ...definition };
  return createExecution({ workflowId: "wf-1", definition: full, input: { orderId: 7 }, correlationId: "c-1" }, 1_000);
}

const ended = (state: WorkflowExecution, status: WorkflowExecution["status"], endTime: number): WorkflowExecution => ({ ...state, status, endTime, updateTime: endTime });

describe("statusPublication: what a workflow status listener publishes", () => {
  it("publishes each ending once, to Conductor's success or failure queue, with the WorkflowSummary", () => {
    const running = execution({ workflowStatusListenerEnabled: true });
    expect(statusPublication(null, running)).toBeUndefined();
    const completed = ended(running, "COMPLETED", 2_000);
    const publication = statusPublication(running, completed)!;
    expect(publication).toMatchObject({ event: `conductor:${SUCCESS_STATUS_QUEUE}`, messageId: "wf-1:COMPLETED:2000" });
    expect(publication.payload).toMatchObject({ workflowId: "wf-1", workflowType: "orders", version: 2, status: "COMPLETED", correlationId: "c-1", input: '{"orderId":7}', executionTime: 1_000 });
    // Deciding again on an ended execution (a read, a late result) publishes nothing more.
    expect(statusPublication(completed, { ...completed })).toBeUndefined();
    // Ending again (a retry, a rerun) is another message.
    for (const status of ["FAILED", "TIMED_OUT", "TERMINATED"] as const) {
      expect(statusPublication(completed, ended(running, status, 3_000))).toMatchObject({ event: `conductor:${FAILURE_STATUS_QUEUE}`, messageId: `wf-1:${status}:3000` });
    }
  });

  it("publishes to the workflow's queue its sink names, and nothing without the listener", () => {
    const sunk = execution({ workflowStatusListenerEnabled: true, workflowStatusListenerSink: "conductor:done" });
    expect(statusPublication(sunk, ended(sunk, "FAILED", 2_000))?.event).toBe("conductor:orders:done");
    const plain = execution({ workflowStatusListenerEnabled: true, workflowStatusListenerSink: "conductor" });
    expect(statusPublication(plain, ended(plain, "COMPLETED", 2_000))?.event).toBe(`conductor:${SUCCESS_STATUS_QUEUE}`);
    for (const off of [execution(), execution({ workflowStatusListenerEnabled: false, workflowStatusListenerSink: "conductor:done" })]) {
      expect(statusPublication(off, ended(off, "COMPLETED", 2_000))).toBeUndefined();
    }
  });

  it("tells Conductor's finalize queue of every ending too, after the success or failure queue, unless a sink names its queue", () => {
    for (const sink of [undefined, "conductor"]) {
      const running = execution({ workflowStatusListenerEnabled: true, ...(sink === undefined ? {} : { workflowStatusListenerSink: sink }) });
      for (const [status, queue] of [["COMPLETED", SUCCESS_STATUS_QUEUE], ["FAILED", FAILURE_STATUS_QUEUE], ["TERMINATED", FAILURE_STATUS_QUEUE]] as const) {
        const [ending, finalized, ...more] = statusPublications(running, ended(running, status, 2_000));
        expect([ending?.event, finalized?.event, more]).toEqual([`conductor:${queue}`, `conductor:${FINALIZE_STATUS_QUEUE}`, []]);
        // A message of its own (stored and tracked under its id), with the same summary.
        expect(finalized).toMatchObject({ messageId: `wf-1:${status}:2000:FINALIZED`, payload: ending!.payload });
      }
    }
    const sunk = execution({ workflowStatusListenerEnabled: true, workflowStatusListenerSink: "conductor:done" });
    expect(statusPublications(sunk, ended(sunk, "FAILED", 2_000)).map((publication) => publication.event)).toEqual(["conductor:orders:done"]);
    const quiet = execution();
    expect(statusPublications(quiet, ended(quiet, "COMPLETED", 2_000))).toEqual([]);
    const enabled = ended(execution({ workflowStatusListenerEnabled: true }), "COMPLETED", 2_000);
    expect(statusPublications(enabled, { ...enabled })).toEqual([]);
  });

  it("takes conductor and conductor:<queue> as sinks, nothing else", () => {
    expect(["conductor", "conductor:done", "conductor:a_b-c"].map(isStatusListenerSink)).toEqual([true, true, true]);
    expect(["kafka:orders", "conductor:", "conductor:a:b", "conductor: x", "", null, 3].map(isStatusListenerSink)).toEqual([false, false, false, false, false, false, false]);
  });
});
