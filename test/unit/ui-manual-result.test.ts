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
  });

  it("fails with a reason through the same update, the reason in its query, so a task ended meanwhile is a 409 and nothing shown masked is sent back", () => {
    // A TaskResult to POST /api/tasks is answered 200 for a task already ended (test/workers/task-by-id.test.ts), and
    // its outputData would replace the output with the *** shown.
    expect(manualResult("wf-1", task, "FAILED", {}, "declined")).toEqual({ method: "POST", path: "/api/queue/update/wf-1/task/t-1/FAILED?reason=declined", body: {} });
    const request = manualResult("wf-1", task, "FAILED", { note: "bad" }, "not & done?");
    expect(request).toEqual({ method: "POST", path: "/api/queue/update/wf-1/task/t-1/FAILED?reason=not%20%26%20done%3F", body: { note: "bad" } });
    expect(texts(request.body)).not.toContain("***");
  });
});
