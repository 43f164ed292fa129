/**
 * HTTP_POLL: a request made again at its polling interval until its terminationCondition holds for a response, its
 * next call woken by the execution object's alarm. Through the real router and objects, calling a real HTTP server on
 * 127.0.0.1 that counts the requests it gets.
 */
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, hits, register, startWorkflow, target, waitFor } from "./helpers";

describe("HTTP_POLL", () => {
  it("polls until the answer satisfies its condition, then the workflow goes on with that answer", async () => {
    await register({
      name: "poll_until_third",
      tasks: [
        {
          name: "await_job",
          taskReferenceName: "await_job",
          type: "HTTP_POLL",
          inputParameters: { http_request: { uri: target("/count/poll-third"), method: "GET", terminationCondition: "$.output.response.body.n >= 3", pollingInterval: "1" } },
        },
      ],
      outputParameters: { polls: "${await_job.output.response.body.n}" },
    });
    const workflowId = await startWorkflow("poll_until_third");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "SCHEDULED");
    expect(waiting.tasks[0]).toMatchObject({ taskType: "HTTP_POLL", pollCount: 1 });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"], 15_000);
    expect(done.status).toBe("COMPLETED");
    expect(done.output).toEqual({ polls: 3 });
    expect(done.tasks[0]).toMatchObject({ status: "COMPLETED", pollCount: 3 });
    expect(await hits("poll-third")).toBe(3);
  });

  it("makes its next call after an eviction between two calls, from the stored schedule (the alarm), once each", async () => {
    await register({
      name: "poll_evicted",
      tasks: [{ name: "p", taskReferenceName: "p", type: "HTTP_POLL", inputParameters: { uri: target("/count/poll-evicted"), method: "GET", terminationCondition: "$.output.response.body.n >= 2", pollingInterval: 1 } }],
    });
    const workflowId = await startWorkflow("poll_evicted");
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "SCHEDULED");
    await abortAllDurableObjects();
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"], 15_000);
    expect(done.tasks[0]).toMatchObject({ status: "COMPLETED", pollCount: 2 });
    expect(await hits("poll-evicted")).toBe(2);
  });

  it("fails once maxPollCount polls did not satisfy it, and a failing call fails it as an HTTP task's would", async () => {
    await register({
      name: "poll_spent",
      tasks: [{ name: "p", taskReferenceName: "p", type: "HTTP_POLL", inputParameters: { uri: target("/count/poll-spent"), method: "GET", terminationCondition: "false", pollingInterval: 1, maxPollCount: 2 } }],
    });
    const spent = await waitFor(await startWorkflow("poll_spent"), ["COMPLETED", "FAILED"], 15_000);
    expect(spent.tasks[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: "terminationCondition did not hold within maxPollCount (2) polls" });
    expect(await hits("poll-spent")).toBe(2);

    await register({ name: "poll_broken", tasks: [{ name: "p", taskReferenceName: "p", type: "HTTP_POLL", inputParameters: { uri: target("/status/500"), method: "GET", terminationCondition: "true" } }] });
    const broken = await waitFor(await startWorkflow("poll_broken"), ["COMPLETED", "FAILED"]);
    expect(broken.tasks[0]).toMatchObject({ status: "FAILED", outputData: { response: { statusCode: 500 } } as JsonObject });
  });

  it("refuses a condition that is not JavaScript at registration, storing nothing", async () => {
    const response = await api("POST", "/api/metadata/workflow", {
      name: "poll_refused", version: 1, schemaVersion: 2, ownerEmail: "test@example.com",
      tasks: [{ name: "p", taskReferenceName: "p", type: "HTTP_POLL", inputParameters: { http_request: { uri: target("/x"), method: "GET", terminationCondition: "$.output ===" } } }],
    });
    expect(response.status).toBe(400);
    expect((await response.json<{ validationErrors: Array<{ path: string }> }>()).validationErrors.map((issue) => issue.path)).toEqual(["tasks[0].inputParameters.http_request.terminationCondition"]);
    expect((await api("GET", "/api/metadata/workflow/poll_refused")).status).toBe(404);
  });
});
