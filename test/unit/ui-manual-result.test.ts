// The web UI's Complete… and Fail… of a task by hand (ui/views/execution.js, a plain ES module run in Node): the request
// sent never writes back the *** the service shows for masked values.
import { describe, expect, it } from "vitest";

interface ManualRequest {
  method: string;
  path: string;
  body: unknown;
}
interface ExecutionModule {
  manualResult(workflowId: string, task: { taskId: string; outputData?: Record<string, unknown> }, status: "COMPLETED" | "FAILED", fields: Record<string, unknown>, reason: string): ManualRequest;
}

// By URL: the module is plain JavaScript without type declarations, so TypeScript must not resolve it.
const { manualResult } = (await import(/* @vite-ignore */ new URL("../../ui/views/execution.js", import.meta.url).href)) as ExecutionModule;

/** Every text a request's body holds, at any depth. */
function texts(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(texts);
  return [];
}

// A HUMAN task's form saved with an ssn its definition masks, and an _masked value from a worker: shown as ***.
const task = { taskId: "t-1", outputData: { approved: false, ssn: "***", _masked: { card: "***" }, note: "draft" } };

describe("the UI's completion of a task by hand", () => {
  it("merges the fields typed in on the service's side, so the values shown masked keep what the execution holds", () => {
    for (const status of ["COMPLETED", "FAILED"] as const) {
      const request = manualResult("wf-1", task, status, { approved: true }, "");
      expect(request).toEqual({ method: "POST", path: `/api/queue/update/wf-1/task/t-1/${status}`, body: { approved: true } });
      expect(texts(request.body)).not.toContain("***");
    }
  });

  it("sends no output without fields, so the task keeps the output it has", () => {
    // Merged on the service's side, as with fields: a task that ended meanwhile is a 409 the dialog shows, where a
    // TaskResult is answered 200 as taken (test/workers/task-by-id.test.ts) and the page said "completed by hand".
    for (const status of ["COMPLETED", "FAILED"] as const) {
      expect(manualResult("wf-1", task, status, {}, "")).toEqual({ method: "POST", path: `/api/queue/update/wf-1/task/t-1/${status}`, body: {} });
    }
    expect(manualResult("wf-1", task, "FAILED", {}, "declined")).toEqual({
      method: "POST", path: "/api/tasks", body: { workflowInstanceId: "wf-1", taskId: "t-1", status: "FAILED", reasonForIncompletion: "declined" },
    });
  });

  it("fails with a reason and fields as one TaskResult when nothing shown is masked, and refuses rather than store *** otherwise", () => {
    const plain = { taskId: "t-2", outputData: { note: "draft", items: [1, 2] } };
    expect(manualResult("wf-1", plain, "FAILED", { note: "bad" }, "declined")).toEqual({
      method: "POST", path: "/api/tasks",
      body: { workflowInstanceId: "wf-1", taskId: "t-2", status: "FAILED", reasonForIncompletion: "declined", outputData: { note: "bad", items: [1, 2] } },
    });
    expect(() => manualResult("wf-1", task, "FAILED", { note: "bad" }, "declined")).toThrow(/masked values/);
  });
});
