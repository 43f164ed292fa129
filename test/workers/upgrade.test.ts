import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, waitForIndexRow, type WorkflowJson } from "./helpers";

// Orkes' upgrade of a running execution (POST /api/workflow/{workflowId}/upgrade) through the real router, execution
// objects and D1.

/** Version 1 of `name`: a gate the test completes, then one call. */
const version1 = (name: string) => ({
  name,
  version: 1,
  tasks: [httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true }), httpTask("after", { uri: target(`/count/${name}-after`), method: "GET" })],
});

/** Version 2: a task added before the gate, the call after it, and a new last call that reads the added task's output. */
const version2 = (name: string) => ({
  name,
  version: 2,
  tasks: [
    httpTask("prepare", { uri: target(`/count/${name}-prepare`), method: "GET" }),
    httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true }),
    httpTask("after", { uri: target(`/count/${name}-after`), method: "GET" }),
    httpTask("extra", { uri: target(`/count/${name}-extra`), method: "GET", headers: { "x-region": "${prepare.output.region}" } }),
  ],
});

/** Registers both versions and starts version 1, waiting until its gate is in progress. */
async function startedAtGate(name: string): Promise<string> {
  await register(version1(name));
  await register(version2(name));
  const workflowId = await startWorkflow(name, {}, "?version=1");
  await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && (workflow.tasks[0]!.outputData as { statusCode?: number }).statusCode === 200);
  return workflowId;
}

const upgrade = (workflowId: string, body: unknown, headers?: Record<string, string>) =>
  headers === undefined ? api("POST", `/api/workflow/${workflowId}/upgrade`, body) : call("POST", `/api/workflow/${workflowId}/upgrade`, headers, body);

/** What an upgrade refused must have left as it was. */
const unchanged = (workflow: WorkflowJson) => ({ version: workflow["workflowVersion"], updateTime: workflow["updateTime"], tasks: workflow.tasks.map((task) => [task.referenceTaskName, task.status, task.seq]) });

describe("upgrading a running execution (POST /api/workflow/{workflowId}/upgrade)", () => {
  it("runs on under the new version: the task it added before the running one is SKIPPED with the output given, the rest runs, search shows the version", async () => {
    const workflowId = await startedAtGate("upgr");
    const response = await upgrade(workflowId, { name: "upgr", version: 2, taskOutput: { prepare: { region: "eu" } } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
    const upgraded = await getWorkflow(workflowId);
    expect(upgraded).toMatchObject({ status: "RUNNING", workflowVersion: 2 });
    expect(upgraded.tasks.map((task) => [task.seq, task.referenceTaskName, task.status])).toEqual([
      [1, "prepare", "SKIPPED"],
      [2, "gate", "IN_PROGRESS"],
    ]);
    expect(upgraded.tasks[0]!.outputData).toEqual({ region: "eu" });
    await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, { fine: true });
    const done = await waitFor(workflowId, (workflow) => workflow.status === "COMPLETED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["prepare", "SKIPPED"],
      ["gate", "COMPLETED"],
      ["after", "COMPLETED"],
      ["extra", "COMPLETED"],
    ]);
    expect((done.tasks[3]!.inputData as { headers: JsonHeaders }).headers["x-region"]).toBe("eu");
    // The skipped task never ran; the others ran once each.
    expect([await hits("upgr-prepare"), await hits("upgr-after"), await hits("upgr-extra")]).toEqual([0, 1, 1]);
    await waitForIndexRow(workflowId, "COMPLETED");
    const row = await env.DB.prepare("SELECT workflow_version FROM executions WHERE workflow_id = ?").bind(workflowId).first<{ workflow_version: number }>();
    expect(row?.workflow_version).toBe(2);
  });

  it("without a version takes the latest, and a new workflowInput replaces the input", async () => {
    const workflowId = await startedAtGate("upgr-latest");
    await apiOk("POST", `/api/workflow/${workflowId}/upgrade`, { name: "upgr-latest", version: null, workflowInput: { tenant: "t-9" } });
    expect(await getWorkflow(workflowId)).toMatchObject({ workflowVersion: 2, input: { tenant: "t-9" } });
  });

  it("refuses, changing nothing: another workflow's name, an unknown version, a version that lacks a task that ran, a bad body, an ended execution", async () => {
    const workflowId = await startedAtGate("upgr-refused");
    await register({ name: "upgr-refused", version: 3, tasks: [httpTask("other", { uri: target("/echo/other"), method: "GET" })] });
    const before = unchanged(await getWorkflow(workflowId));
    const refusals: Array<[unknown, number, string, string]> = [
      [{ name: "upgr", version: 2 }, 400, "VALIDATION_ERROR", "must be upgr-refused"],
      [{ name: "upgr-refused", version: 9 }, 404, "NOT_FOUND", "No such workflow found by name: upgr-refused, version: 9"],
      [{ name: "upgr-refused", version: 3 }, 409, "CONFLICT", "its task gate has run (IN_PROGRESS), and that version has no task of that reference name"],
      [{ name: "upgr-refused", version: 2, taskOutput: { after: { x: 1 } } }, 400, "VALIDATION_ERROR", "taskOutput names after, which the upgrade does not skip (it skips prepare)"],
      [{ name: "upgr-refused", version: 2, taskOutput: { prepare: 5 } }, 400, "VALIDATION_ERROR", ""],
      [{ version: 2 }, 400, "VALIDATION_ERROR", ""],
      [[], 400, "VALIDATION_ERROR", ""],
    ];
    for (const [body, status, error, message] of refusals) {
      const response = await upgrade(workflowId, body);
      const json = (await response.json()) as { error: string; message: string; validationErrors?: Array<{ message: string }> };
      expect([response.status, json.error], JSON.stringify(body)).toEqual([status, error]);
      expect(`${json.message} ${JSON.stringify(json.validationErrors ?? [])}`).toContain(message);
      expect(unchanged(await getWorkflow(workflowId))).toEqual(before);
    }
    expect((await upgrade(crypto.randomUUID(), { name: "upgr-refused", version: 2 })).status).toBe(404);
    await apiOk("DELETE", `/api/workflow/${workflowId}`);
    const ended = await upgrade(workflowId, { name: "upgr-refused", version: 2 });
    expect(ended.status).toBe(409);
    expect(((await ended.json()) as { message: string }).message).toContain("its status is TERMINATED");
    expect(await getWorkflow(workflowId)).toMatchObject({ status: "TERMINATED", workflowVersion: 1 });
  });

  it("refuses a version where a permissive task whose failure the execution ran on past is not permissive; one keeping it permissive fails at the end for it", async () => {
    const maybe = (permissive: boolean) => httpTask("maybe", { uri: target("/status/500"), method: "GET" }, { permissive });
    const hold = { name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} };
    await register({ name: "upgr-permissive", version: 1, tasks: [maybe(true), hold] });
    await register({ name: "upgr-permissive", version: 2, tasks: [maybe(false), hold] });
    await register({ name: "upgr-permissive", version: 3, tasks: [maybe(true), hold, httpTask("extra", { uri: target("/count/upgr-permissive-extra"), method: "GET" })] });
    const workflowId = await startWorkflow("upgr-permissive", {}, "?version=1");
    const holding = await waitFor(workflowId, (workflow) => workflow.tasks[1]?.status === "IN_PROGRESS");
    expect(holding.tasks[0]!.status).toBe("FAILED");
    const before = unchanged(holding);
    // Under version 2 the failure would have ended the execution: let through, it was forgotten and the workflow completed.
    const refused = await upgrade(workflowId, { name: "upgr-permissive", version: 2 });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { message: string }).message).toContain("its task maybe failed (FAILED) and the execution ran on past it as it is permissive, which that version does not make it");
    expect(unchanged(await getWorkflow(workflowId))).toEqual(before);
    expect((await upgrade(workflowId, { name: "upgr-permissive", version: 3 })).status).toBe(200);
    await apiOk("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, {});
    const failed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    expect(String(failed["reasonForIncompletion"])).toMatch(/^Task maybe failed: /);
    expect(failed.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["maybe", "FAILED"],
      ["hold", "COMPLETED"],
      ["extra", "COMPLETED"],
    ]);
  });

  it("needs WORKFLOW_ADMIN on the execution's workflow, as its other changes do", async () => {
    const workflowId = await startedAtGate("upgr-rights");
    const reader = await createUser(`upgr-reader-${crypto.randomUUID()}`, { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:upgr-rights" }] });
    const refused = await upgrade(workflowId, { name: "upgr-rights", version: 2 }, orkes(reader.token));
    expect(refused.status).toBe(403);
    expect((await getWorkflow(workflowId))["workflowVersion"]).toBe(1);
    const admin = await createUser(`upgr-admin-${crypto.randomUUID()}`, { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:upgr-rights" }] });
    expect((await upgrade(workflowId, { name: "upgr-rights", version: 2 }, orkes(admin.token))).status).toBe(200);
    await eventually(() => getWorkflow(workflowId), (workflow) => workflow["workflowVersion"] === 2, "the upgraded version");
  });
});

type JsonHeaders = Record<string, string>;
