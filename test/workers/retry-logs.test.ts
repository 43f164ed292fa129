import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ExecutionIndexWriter } from "../../src/actors/index-writer";
import { register, startWorkflow, waitFor } from "./helpers";

const executionStub = (workflowId: string) => env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(workflowId));

describe("work retried on a timer while it keeps failing", () => {
  it("logs a background job's failure at its 1st, 2nd, 4th and 8th attempt in a row, each line naming the job, the execution and the attempt, not at every retry", async () => {
    await register({ name: "retry_logs_flow", tasks: [{ name: "set", taskReferenceName: "set", type: "SET_VARIABLE", inputParameters: { done: true } }] });
    // The search index refusing every row of this execution, as D1 refuses one past its limits: its retries never end.
    const upsert = ExecutionIndexWriter.prototype.upsert;
    const logError = console.error;
    let refused = 0;
    const lines: string[] = [];
    ExecutionIndexWriter.prototype.upsert = async () => {
      refused++;
      return { ok: false, error: "the test refuses the row" };
    };
    console.error = (...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
    };
    try {
      const workflowId = await startWorkflow("retry_logs_flow");
      await waitFor(workflowId, ["COMPLETED"]);
      // Each alarm run tries the failed job again (once the attempt before it has settled): eight attempts, bounded.
      for (let round = 0; round < 400 && refused < 8; round++) {
        await runDurableObjectAlarm(executionStub(workflowId));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(refused).toBeGreaterThanOrEqual(8);
      const failures = lines.filter((line) => line.includes("background job failed")).map((line) => JSON.parse(line) as { job: string; workflowId: string; attempt: number; error: string });
      expect(failures.map((failure) => failure.attempt)).toEqual([1, 2, 4, 8, 16].filter((attempt) => attempt <= refused));
      expect(failures[0]).toMatchObject({ job: "index", workflowId, error: expect.stringContaining("the test refuses the row") });
    } finally {
      ExecutionIndexWriter.prototype.upsert = upsert;
      console.error = logError;
    }
  });
});
