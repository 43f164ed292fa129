/**
 * Shapes the official Conductor TypeScript client depends on, through the real router. Each block
 * pins one mismatch found by running the client (test/e2e/conductor-client.test.ts) against the service.
 */
import { describe, expect, it } from "vitest";
import { api } from "./helpers";

interface ErrorBody {
  status: number;
  error: string;
  message: string;
}

async function errorOf(method: string, path: string, body?: unknown): Promise<ErrorBody & { httpStatus: number }> {
  const response = await api(method, path, body);
  expect(response.headers.get("content-type")).toContain("application/json");
  return { httpStatus: response.status, ...((await response.json()) as ErrorBody) };
}

describe("Conductor endpoints the service does not serve", () => {
  it.each([
    ["GET", "/api/tasks/poll/HTTP?workerid=w1", "task workers"],
    ["GET", "/api/tasks/poll/batch/HTTP?count=5", "task workers"],
    ["POST", "/api/tasks/update-v2", "task workers"],
    ["GET", "/api/tasks/search?start=0&size=10", "task search"],
    ["GET", "/api/tasks/queue/polldata?taskType=HTTP", "task queues"],
    ["GET", `/api/tasks/${crypto.randomUUID()}`, "reading a task by its id"],
    ["POST", `/api/tasks/${crypto.randomUUID()}/COMPLETED/signal`, "signals"],
    ["POST", `/api/tasks/${crypto.randomUUID()}/COMPLETED/signal/sync`, "signals"],
    ["GET", "/api/metadata/taskdefs", "task definitions"],
    ["POST", "/api/workflow/bulk/terminate", "bulk"],
    ["GET", `/api/workflow/${crypto.randomUUID()}/tasks`, "paged task lists"],
    ["GET", "/api/scheduler/schedules", "schedules"],
  ])("%s %s answers 501 NOT_IMPLEMENTED naming the feature, in the contract's error shape", async (method, path, feature) => {
    const body = method === "POST" ? {} : undefined;
    const error = await errorOf(method, path, body);
    expect(error).toMatchObject({ httpStatus: 501, status: 501, error: "NOT_IMPLEMENTED" });
    expect(error.message).toContain(`${method} ${path.split("?")[0]} is a Conductor endpoint this service does not support yet`);
    expect(error.message).toContain(feature);
  });

  it("still answers 404 for a path that is no Conductor endpoint at all", async () => {
    expect(await errorOf("GET", "/api/no-such-thing")).toMatchObject({ httpStatus: 404, error: "NOT_FOUND" });
    expect(await errorOf("GET", "/api/metadata/no-such-thing/x/y")).toMatchObject({ httpStatus: 404, error: "NOT_FOUND" });
  });
});
