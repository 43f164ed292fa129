import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, httpTask, register, startWorkflow, target, waitFor } from "./helpers";

type SearchResult = { totalHits: number; results: Array<JsonObject & { workflowId: string; status: string }> };

/** Polls search until `accept` holds (the index is written off the hot path, within a moment). */
async function searchUntil(query: string, accept: (result: SearchResult) => boolean): Promise<SearchResult> {
  for (let i = 0; i < 200; i++) {
    const result = await apiOk<SearchResult>("GET", `/api/workflow/search?${query}`);
    if (accept(result)) return result;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`search ${query} never matched`);
}

describe("search", () => {
  it("finds running and finished executions by name, status, correlation id and free text", async () => {
    await register({ name: "searchable", tasks: [httpTask("gate", { uri: target("/echo/s"), method: "GET" }, { asyncComplete: true })] });
    const running = await startWorkflow("searchable", {}, "?correlationId=order-17");
    const finished = await startWorkflow("searchable", {}, "?correlationId=order-18");
    await waitFor(finished, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${finished}/gate/COMPLETED`, {});
    await waitFor(finished, ["COMPLETED"]);

    const byRunning = await searchUntil("workflowName=searchable&status=RUNNING", (result) => result.results.some((row) => row.workflowId === running));
    expect(byRunning.results.map((row) => row.workflowId)).not.toContain(finished);
    const byDone = await searchUntil("status=COMPLETED&workflowName=searchable", (result) => result.totalHits === 1);
    expect(byDone.results[0]).toMatchObject({ workflowId: finished, workflowType: "searchable", version: 1, status: "COMPLETED", correlationId: "order-18" });
    expect(typeof byDone.results[0]!["startTime"]).toBe("string");

    const byCorrelation = await apiOk<SearchResult>("GET", "/api/workflow/search?correlationId=order-17");
    expect(byCorrelation.results.map((row) => row.workflowId)).toEqual([running]);
    const byText = await apiOk<SearchResult>("GET", `/api/workflow/search?freeText=${running.slice(0, 13)}`);
    expect(byText.results.map((row) => row.workflowId)).toEqual([running]);
    const byQuery = await apiOk<SearchResult>("GET", `/api/workflow/search?query=${encodeURIComponent("workflowType IN (searchable) AND status IN (COMPLETED,RUNNING)")}`);
    expect(byQuery.totalHits).toBe(2);
    const paged = await apiOk<SearchResult>("GET", "/api/workflow/search?workflowName=searchable&size=1&start=1&sort=startTime:ASC");
    expect(paged.totalHits).toBe(2);
    expect(paged.results.map((row) => row.workflowId)).toEqual([finished]);
  });

  it("refuses bad parameters", async () => {
    for (const query of ["size=-1", "size=abc", "status=DONE", "sort=nope:DESC", "query=status%20LIKE%20x"]) {
      const response = await api("GET", `/api/workflow/search?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    }
  });
});
