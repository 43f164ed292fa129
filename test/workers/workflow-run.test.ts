import { describe, expect, it } from "vitest";
import { api, apiOk, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor } from "./helpers";

describe("running a workflow of chained HTTP tasks", () => {
  it("feeds each task's output into the next through expressions and completes with outputParameters", async () => {
    await register({
      name: "chain",
      tasks: [
        httpTask("first", { http_request: { uri: target("/count/chain-a?user=${workflow.input.user}"), method: "GET" } }),
        httpTask("second", { uri: target("/echo/second"), method: "POST", body: { previous: "${first.output.response.body.n}", user: "${workflow.input.user}" } }),
        httpTask("third", { http_request: { uri: target("/echo/third?wf=${workflow.workflowId}&n=${second.output.response.body.body}"), method: "GET" } }),
      ],
      outputParameters: { n: "${first.output.response.body.n}", echoed: "${second.output.body.body}", status: "${third.output.statusCode}" },
    });
    const workflowId = await startWorkflow("chain", { user: "ada" }, "?correlationId=corr-1");
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["first", "COMPLETED"],
      ["second", "COMPLETED"],
      ["third", "COMPLETED"],
    ]);
    const n = done.output["n"];
    expect(typeof n).toBe("number");
    expect(JSON.parse(String(done.output["echoed"]))).toEqual({ previous: n, user: "ada" });
    expect(done.output["status"]).toBe(200);
    expect(done.correlationId).toBe("corr-1");
    // The first task's resolved input is stored as it was sent.
    expect(done.tasks[0]!.inputData).toEqual({ http_request: { uri: target("/count/chain-a?user=ada"), method: "GET" } });
    expect(await hits("chain-a")).toBe(n);
  });

  it("without outputParameters, the output is the last task's output", async () => {
    await register({ name: "last_output", tasks: [httpTask("only", { uri: target("/count/last-output"), method: "GET" })] });
    const workflowId = await startWorkflow("last_output");
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.output["statusCode"]).toBe(200);
    expect((done.output["response"] as { body: { key: string } }).body.key).toBe("last-output");
  });

  it("the synchronous execute endpoint answers with the finished workflow in one call", async () => {
    await register({ name: "sync_exec", tasks: [httpTask("a", { uri: target("/echo/a"), method: "GET" }), httpTask("b", { uri: target("/echo/b"), method: "GET" })] });
    const workflow = await apiOk<{ status: string; tasks: unknown[]; workflowId: string }>("POST", "/api/workflow/execute/sync_exec/1", { input: { x: 1 } });
    expect(workflow.status).toBe("COMPLETED");
    expect(workflow.tasks).toHaveLength(2);
    expect((await getWorkflow(workflow.workflowId)).status).toBe("COMPLETED");
  });

  it("reads boolean query parameters case-insensitively (the Python SDK sends True and False) and refuses other values", async () => {
    await register({ name: "bool_params", tasks: [httpTask("a", { uri: target("/echo/bool-params"), method: "GET" })] });
    const workflowId = await startWorkflow("bool_params");
    await waitFor(workflowId, ["COMPLETED"]);
    expect((await apiOk<{ tasks: unknown[] }>("GET", `/api/workflow/${workflowId}?includeTasks=True`)).tasks).toHaveLength(1);
    expect((await apiOk<{ tasks: unknown[] }>("GET", `/api/workflow/${workflowId}?includeTasks=FALSE`)).tasks).toEqual([]);
    const status = await apiOk("GET", `/api/workflow/${workflowId}/status?includeOutput=True&includeVariables=False`);
    expect(status).toHaveProperty("output");
    expect(status).not.toHaveProperty("variables");
    for (const value of ["yes", "1", "truee"]) {
      const response = await api("GET", `/api/workflow/${workflowId}?includeTasks=${value}`);
      expect(response.status, value).toBe(400);
      expect(await response.json()).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    }
  });
});
