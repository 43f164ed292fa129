import { SELF, createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { WorkflowExecution } from "../../src/actors/workflow-execution";
import type { JsonObject } from "../../src/engine/model";
import { LATE_LOOK_DELAYS_MS } from "../../src/worker/webhooks/deliver";
import { WebhookRepository } from "../../src/worker/webhooks/store";
import worker from "../../src/worker/index";
import { createUser, orkes, call } from "./auth-helpers";
import { api, apiOk, eventually, gate, getWorkflow, hits, httpTask, register, rowCount, startWorkflow, target, waitFor } from "./helpers";

// Orkes' webhooks through the real router, objects and D1: configs under /api/metadata/webhook, events sent as an
// outside system sends them (POST /webhook/{id}, no API key), matched to waiting WAIT_FOR_WEBHOOK tasks by key.

type WebhookJson = JsonObject & { id: string; url: string; urlVerified: boolean; headers: Record<string, string> };
type EventAnswer = { webhookId: string; eventId: string; completedTasks: Array<{ workflowId: string; taskId: string }>; startedWorkflows: Array<{ name: string; workflowId?: string; refused?: string }> };

/** A WAIT_FOR_WEBHOOK task waiting for events whose payload holds `matches`. */
const waitingFor = (ref: string, matches: JsonObject): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT_FOR_WEBHOOK", inputParameters: { matches } });

/** An event as an outside system sends it: no API key. */
function eventRequest(webhook: { id: string }, body: string | JsonObject, headers: Record<string, string>, query = ""): Request {
  return new Request(`https://conductor.test/webhook/${webhook.id}${query}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Sends an event as an outside system does: no API key. */
function send(webhook: { id: string }, body: string | JsonObject, headers: Record<string, string> = {}, query = ""): Promise<Response> {
  return SELF.fetch(eventRequest(webhook, body, headers, query));
}

/**
 * Sends an event as {@link send} does, to the Worker configured with another WEBHOOK_CALLS_PER_DELIVERY (a deployment's
 * setting): a test staging a delivery past its budget then needs fewer waiting tasks (each a workflow started) than
 * past the tests' 40. A delivery spends about 10 calls before it asks the tasks (look-ups, starts, records).
 */
async function sendWithCallBudget(calls: number, webhook: { id: string }, body: string | JsonObject, headers: Record<string, string> = {}): Promise<Response> {
  const request = eventRequest(webhook, body, headers) as Parameters<typeof worker.fetch>[0];
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, { ...env, WEBHOOK_CALLS_PER_DELIVERY: String(calls) }, ctx);
  inBackground.push(waitOnExecutionContext(ctx));
  return response;
}

/**
 * What the deliveries sent through {@link sendWithCallBudget} left running (`ctx.waitUntil`: each event's late looks,
 * up to 5 s after it came), which nothing else waits for: a test awaits it to know they are done, and each test's is
 * awaited after it, so that none runs on into the next test (its calls, its counts).
 */
const inBackground: Array<Promise<void>> = [];

/** Resolves once the background work of the deliveries sent through {@link sendWithCallBudget} so far has ended. */
async function backgroundSettled(): Promise<void> {
  await Promise.all(inBackground.splice(0));
}

afterEach(backgroundSettled);

async function hmacOf(secret: string, data: string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(data)));
}
const hex = (bytes: Uint8Array) => [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");

/** WebCrypto's ECDSA signature (r and s, 32 bytes each) as SendGrid sends it: base64 DER. */
function derSignature(raw: Uint8Array): string {
  const integer = (bytes: Uint8Array) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    const value = bytes.subarray(start);
    return value[0]! >= 0x80 ? [0x02, value.length + 1, 0, ...value] : [0x02, value.length, ...value];
  };
  const body = [...integer(raw.subarray(0, 32)), ...integer(raw.subarray(32))];
  return btoa(String.fromCharCode(0x30, body.length, ...body));
}

/** The routing rows of `workflowId`'s waiting tasks, once written (they follow the execution by a moment). */
async function waitsOf(workflowId: string, count = 1): Promise<Array<{ task_id: string; match_key: string }>> {
  return eventually(
    async () => (await env.DB.prepare(`SELECT task_id, match_key FROM webhook_waits WHERE workflow_id = ?`).bind(workflowId).all<{ task_id: string; match_key: string }>()).results,
    (rows) => rows.length === count,
    `${count} webhook routing rows of ${workflowId}`,
  );
}

const listed = async () => (await apiOk<WebhookJson[]>("GET", "/api/metadata/webhook")).map((webhook) => webhook.name).sort();

describe("webhook configs", () => {
  it("saves one under a fresh id with its URL, showing its secrets as ***; reads, updates (*** keeps a secret) and deletes it", async () => {
    await register({ name: "wh_orders", tasks: [waitingFor("paid", { "$['event']['type']": "paid" })] });
    const created = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-crud",
      verifier: "HEADER_BASED",
      headers: { "X-Webhook-Secret": "s3cret-one" },
      receiverWorkflowNamesToVersions: { wh_orders: 1 },
      sourcePlatform: "Custom",
    });
    expect(created).toMatchObject({ name: "wh-crud", verifier: "HEADER_BASED", headers: { "X-Webhook-Secret": "***" }, urlVerified: false, createdBy: expect.any(String), sourcePlatform: "Custom" });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.url).toBe(`https://conductor.test/webhook/${created.id}`);
    expect(JSON.stringify(created)).not.toContain("s3cret-one");
    // Stored encrypted, not as given.
    const stored = await env.DB.prepare(`SELECT config, secrets FROM webhooks WHERE id = ?`).bind(created.id).first<{ config: string; secrets: string }>();
    expect(`${stored!.config}${stored!.secrets}`).not.toContain("s3cret-one");
    expect(await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${created.id}`)).toEqual({ ...created, webhookExecutionHistory: [] });
    expect(await listed()).toContain("wh-crud");

    // Saved again as read (*** for the secret): the secret is kept, and events carrying it still verify.
    const updated = await apiOk<WebhookJson>("PUT", `/api/metadata/webhook/${created.id}`, { ...created, sourcePlatform: "GitHub" });
    expect(updated).toMatchObject({ id: created.id, sourcePlatform: "GitHub", headers: { "X-Webhook-Secret": "***" } });
    expect((await send(created, { event: { type: "other" } }, { "X-Webhook-Secret": "s3cret-one" })).status).toBe(200);
    await apiOk("PUT", `/api/metadata/webhook/${created.id}`, { ...created, headers: { "X-Webhook-Secret": "s3cret-two" } });
    expect((await send(created, {}, { "X-Webhook-Secret": "s3cret-one" })).status).toBe(401);
    expect((await send(created, {}, { "X-Webhook-Secret": "s3cret-two" })).status).toBe(200);

    expect((await api("DELETE", `/api/metadata/webhook/${created.id}`)).status).toBe(200);
    expect((await api("GET", `/api/metadata/webhook/${created.id}`)).status).toBe(404);
    expect((await send(created, {}, { "X-Webhook-Secret": "s3cret-two" })).status).toBe(404);
  });

  it("an update keeping a secret (***) keeps the one stored when it writes: a rotation landing meanwhile is not undone", async () => {
    await register({ name: "wh_rotated", tasks: [waitingFor("w", {})] });
    const created = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-rotated", verifier: "HEADER_BASED", headers: { "X-Token": "old" }, receiverWorkflowNamesToVersions: { wh_rotated: 1 } });
    const sealed = async () => (await env.DB.prepare(`SELECT secrets FROM webhooks WHERE id = ?`).bind(created.id).first<{ secrets: string }>())!.secrets;
    const old = await sealed();
    await apiOk("PUT", `/api/metadata/webhook/${created.id}`, { ...created, headers: { "X-Token": "new" } });
    const rotated = await sealed();
    await env.DB.prepare(`UPDATE webhooks SET secrets = ? WHERE id = ?`).bind(old, created.id).run();
    // An edit that keeps the secret (***) read the webhook; the rotation to "new" landed before its write. Written from
    // its read, the edit put the old secret back: the rotated one was refused and the one meant to be retired verified.
    const read = WebhookRepository.prototype.getWithSecrets;
    let raced = false;
    WebhookRepository.prototype.getWithSecrets = async function (id: string) {
      const found = await read.call(this, id);
      if (id === created.id && !raced) {
        raced = true;
        await env.DB.prepare(`UPDATE webhooks SET secrets = ? WHERE id = ?`).bind(rotated, created.id).run();
      }
      return found;
    };
    try {
      const edited = await apiOk<WebhookJson>("PUT", `/api/metadata/webhook/${created.id}`, { ...created, sourcePlatform: "GitHub" });
      expect(raced).toBe(true);
      expect(edited).toMatchObject({ sourcePlatform: "GitHub", headers: { "X-Token": "***" } });
    } finally {
      WebhookRepository.prototype.getWithSecrets = read;
    }
    expect((await send(created, {}, { "X-Token": "new" })).status).toBe(200);
    expect((await send(created, {}, { "X-Token": "old" })).status).toBe(401);
  });

  it("carry tags: PUT adds (a key again takes the new value), DELETE removes those given, GET lists them", async () => {
    await register({ name: "wh_tagged", tasks: [waitingFor("w", {})] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-tagged", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { wh_tagged: 1 }, tags: [{ key: "team", value: "payments" }] });
    expect(webhook["tags"]).toEqual([{ key: "team", value: "payments" }]);
    await apiOk("PUT", `/api/metadata/webhook/${webhook.id}/tags`, [{ key: "env", value: "prod" }, { key: "team", value: "billing" }]);
    expect(await apiOk("GET", `/api/metadata/webhook/${webhook.id}/tags`)).toEqual([{ key: "env", value: "prod" }, { key: "team", value: "billing" }]);
    await apiOk("DELETE", `/api/metadata/webhook/${webhook.id}/tags`, [{ key: "env", value: "prod" }]);
    expect(await apiOk("GET", `/api/metadata/webhook/${webhook.id}/tags`)).toEqual([{ key: "team", value: "billing" }]);
    expect((await api("PUT", `/api/metadata/webhook/${webhook.id}/tags`, [{ key: "" }])).status).toBe(400);
    expect(await apiOk("GET", `/api/metadata/webhook/${webhook.id}/tags`)).toEqual([{ key: "team", value: "billing" }]);
    expect((await api("GET", `/api/metadata/webhook/${crypto.randomUUID()}/tags`)).status).toBe(404);
    // The secrets are untouched by a change of tags: events still verify.
    expect((await send(webhook, {}, { "X-Token": "t" })).status).toBe(200);
    // Listed with every other tag in use.
    expect(await apiOk("GET", "/api/metadata/tags")).toContainEqual({ key: "team", value: "billing" });
    // Edits made at once all land: none overwrites another's.
    const keys = ["a", "b", "c", "d", "e"];
    await Promise.all(keys.map((key) => apiOk("PUT", `/api/metadata/webhook/${webhook.id}/tags`, [{ key, value: key }])));
    // In the order they landed, which requests sent at once do not fix.
    const landed = await apiOk<Array<{ key: string; value: string }>>("GET", `/api/metadata/webhook/${webhook.id}/tags`);
    expect(landed[0]).toEqual({ key: "team", value: "billing" });
    expect(landed.slice(1).sort((a, b) => a.key.localeCompare(b.key))).toEqual(keys.map((key) => ({ key, value: key })));
  });

  it.each([
    ["a verifier this service cannot check", { verifier: "TWITTER" }, "verifier", /not supported by this service/],
    ["HEADER_BASED without headers", { headers: {} }, "headers", /required with verifier HEADER_BASED/],
    ["HMAC_BASED without its header", { verifier: "HMAC_BASED", secretValue: "k" }, "headerKey", /required with verifier HMAC_BASED/],
    ["a secret given as a reference", { verifier: "HMAC_BASED", headerKey: "X-Signature", secretValue: "${workflow.secrets.PAYMENT_WEBHOOK_SECRET}" }, "secretValue", /reference .* is not resolved/],
    ["a header value given as a reference", { headers: { "X-Key": "${workflow.secrets.key}" } }, "headers", /reference .* is not resolved/],
    ["SIGNATURE_BASED without its key", { verifier: "SIGNATURE_BASED", headerKey: "X-Signature", secretValue: "" }, "secretValue", /required with verifier SIGNATURE_BASED/],
    ["SIGNATURE_BASED keeping a key it never had", { verifier: "SIGNATURE_BASED", headerKey: "X-Signature", secretValue: "***" }, "secretValue", /required with verifier SIGNATURE_BASED/],
    ["no workflow to complete or start", { receiverWorkflowNamesToVersions: {} }, "receiverWorkflowNamesToVersions", /must name the workflows/],
    ["an idempotency key that is no JSONPath", { workflowsToStart: { wh_refused: 1, idempotencyKey: "id" } }, "workflowsToStart.idempotencyKey", /JSONPath/],
    ["a bad header name", { headers: { "Bad Header": "x" } }, "headers", /header name/],
  ])("refuses %s with a 400 naming the field, storing nothing", async (_case, change, path, message) => {
    await register({ name: "wh_refused", tasks: [waitingFor("w", {})] });
    const before = await listed();
    const response = await api("POST", "/api/metadata/webhook", { name: "wh-refused", verifier: "HEADER_BASED", headers: { "X-Key": "v" }, receiverWorkflowNamesToVersions: { wh_refused: 1 }, ...change });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { validationErrors: Array<{ path: string; message: string }> };
    expect(body.validationErrors).toContainEqual({ path: expect.stringContaining(path), message: expect.stringMatching(message) });
    expect(await listed()).toEqual(before);
  });

  it("refuses a second webhook of the same name (409), and one whose saver could not do what its events do (403)", async () => {
    await register({ name: "wh_guarded", tasks: [waitingFor("w", {})] });
    const config = { name: "wh-guarded", verifier: "HEADER_BASED", headers: { "X-Key": "v" }, receiverWorkflowNamesToVersions: { wh_guarded: 1 } };
    await apiOk("POST", "/api/metadata/webhook", config);
    expect((await api("POST", "/api/metadata/webhook", config)).status).toBe(409);
    const admin = await createUser("wh-metadata-admin", { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }] });
    const before = await listed();
    const refused = await call("POST", "/api/metadata/webhook", orkes(admin.token), { ...config, name: "wh-guarded-2" });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toMatch(/TASK_EXECUTE on workflow:wh_guarded/);
    const starts = await call("POST", "/api/metadata/webhook", orkes(admin.token), { ...config, name: "wh-guarded-3", receiverWorkflowNamesToVersions: {}, workflowsToStart: { wh_guarded: 1 } });
    expect(starts.status).toBe(403);
    expect(await listed()).toEqual(before);
    const allowed = await createUser("wh-full", { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }, { action: "TASK_EXECUTE", scope: "workflow:wh_guarded" }] });
    expect((await call("POST", "/api/metadata/webhook", orkes(allowed.token), { ...config, name: "wh-guarded-4" })).status).toBe(200);
    // Reading configs needs what reading metadata does.
    const nobody = await createUser("wh-nobody");
    expect((await call("GET", "/api/metadata/webhook", orkes(nobody.token))).status).toBe(403);
  });

  it("refuses a header value no request could carry (spaces around it, which HTTP drops, or a line break), writing nothing", async () => {
    await register({ name: "wh_header_values", tasks: [waitingFor("w", {})] });
    const before = await listed();
    for (const value of ["s3cret ", " s3cret", "s3cret\t", "s3\r\ncret"]) {
      const refused = await api("POST", "/api/metadata/webhook", { name: "wh-header-values", verifier: "HEADER_BASED", headers: { "X-Webhook-Secret": value }, receiverWorkflowNamesToVersions: { wh_header_values: 1 } });
      expect(refused.status, JSON.stringify(value)).toBe(400);
      const message = ((await refused.json()) as { message: string }).message;
      expect(message).toContain("headers.X-Webhook-Secret");
      expect(message).not.toContain("s3");
    }
    expect(await listed()).toEqual(before);
    // Spaces within it are part of it, as HTTP carries them.
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-header-values", verifier: "HEADER_BASED", headers: { Authorization: "Bearer s3 cret" }, receiverWorkflowNamesToVersions: { wh_header_values: 1 } });
    expect((await send(webhook, {}, { Authorization: "Bearer s3 cret" })).status).toBe(200);
  });
});

describe("events sent to a webhook", () => {
  it("complete the waiting tasks whose matches they meet, by key, with the payload as the task's output; others wait on", async () => {
    await register({
      name: "wh_payments",
      tasks: [
        waitingFor("paid", { "$['event']['type']": "payment.completed", "$.data.orderId": "${workflow.input.orderId}" }),
        httpTask("after", { uri: target("/count/wh-after?amount=${paid.output.data.amount}"), method: "GET" }),
      ],
    });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-payments",
      verifier: "HEADER_BASED",
      headers: { "X-Webhook-Secret": "pay-secret" },
      receiverWorkflowNamesToVersions: { wh_payments: 1 },
    });
    const first = await startWorkflow("wh_payments", { orderId: "ORDER-1" });
    const second = await startWorkflow("wh_payments", { orderId: "order-2" });
    const [firstWait] = await waitsOf(first);
    await waitsOf(second);
    const secret = { "X-Webhook-Secret": "pay-secret" };

    // Refused: no secret, a wrong one. Nothing changes.
    const before = JSON.stringify(await getWorkflow(first));
    const unsigned = await send(webhook, { event: { type: "payment.completed" }, data: { orderId: "ORDER-1" } });
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toMatchObject({ error: "UNAUTHENTICATED", message: "Webhook event refused: Missing header X-Webhook-Secret" });
    expect((await send(webhook, { event: { type: "payment.completed" }, data: { orderId: "ORDER-1" } }, { "X-Webhook-Secret": "wrong" })).status).toBe(401);
    expect(JSON.stringify(await getWorkflow(first))).toBe(before);
    expect((await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${webhook.id}`)).urlVerified).toBe(false);

    // Another event type, and another order: nobody's.
    const other = await send(webhook, { event: { type: "payment.failed" }, data: { orderId: "ORDER-1" } }, secret);
    expect(await other.json()).toEqual({ webhookId: webhook.id, eventId: expect.stringMatching(/^[0-9a-f-]{36}$/), completedTasks: [], startedWorkflows: [] });
    expect((await (await send(webhook, { event: { type: "payment.completed" }, data: { orderId: "ORDER-3" } }, secret)).json()) as EventAnswer).toMatchObject({ completedTasks: [] });
    expect(JSON.stringify(await getWorkflow(first))).toBe(before);
    expect((await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${webhook.id}`)).urlVerified).toBe(true);

    // Values compare as text, trimmed and case-insensitively.
    const payload = { event: { type: "Payment.Completed " }, data: { orderId: "order-1", amount: 42 } };
    const answer = (await (await send(webhook, payload, secret)).json()) as EventAnswer;
    expect(answer.completedTasks).toEqual([{ workflowId: first, taskId: firstWait!.task_id }]);
    const done = await waitFor(first, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[0]!.outputData).toEqual(payload);
    expect((done.tasks[1]!.outputData["body"] as JsonObject)["query"]).toEqual({ amount: "42" });
    expect((await getWorkflow(second)).tasks[0]!.status).toBe("IN_PROGRESS");
    // The ended task's row is gone: the same event again completes nothing.
    await waitsOf(first, 0);
    expect(((await (await send(webhook, payload, secret)).json()) as EventAnswer).completedTasks).toEqual([]);

    // A second task waiting on the same key (another execution for the same order) is completed by one event too.
    const third = await startWorkflow("wh_payments", { orderId: "order-2" });
    await waitsOf(third);
    const both = (await (await send(webhook, { event: { type: "payment.completed" }, data: { orderId: "ORDER-2", amount: 7 } }, secret)).json()) as EventAnswer;
    expect(both.completedTasks.map((task) => task.workflowId).sort()).toEqual([second, third].sort());
    expect(await hits("wh-after")).toBe(3);
  });

  it("reach workflows registered after the webhook was saved (Conductor checks none at a save): an event before, none registered, starts nothing and completes nothing; once registered, both", async () => {
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-ahead",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_ahead_receiver: 1 },
      workflowsToStart: { wh_ahead_started: 1 },
    });
    const early = (await (await send(webhook, { order: "A-1" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(early).toMatchObject({ completedTasks: [], startedWorkflows: [{ name: "wh_ahead_started", refused: expect.stringContaining("wh_ahead_started") }] });

    await register({ name: "wh_ahead_receiver", tasks: [waitingFor("order", { "$.order": "${workflow.input.order}" })] });
    await register({ name: "wh_ahead_started", tasks: [httpTask("call", { uri: target("/count/wh-ahead-started"), method: "GET" })] });
    const waiting = await startWorkflow("wh_ahead_receiver", { order: "A-1" });
    await waitsOf(waiting);
    const answer = (await (await send(webhook, { order: "A-1" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(answer.completedTasks.map((task) => task.workflowId)).toEqual([waiting]);
    expect(answer.startedWorkflows).toEqual([{ name: "wh_ahead_started", workflowId: expect.any(String) }]);
    expect((await waitFor(waiting, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ order: "A-1" });
    await waitFor(answer.startedWorkflows[0]!.workflowId!, ["COMPLETED"]);
    expect(await hits("wh-ahead-started")).toBe(1);
  });

  it("find every task waiting on long values: their routing rows go in as many statements as their size needs, where four keys of 700 KB, bound as one value past D1's 2 MB, failed the execution's whole search row for good", async () => {
    const branches = [0, 1, 2, 3].map((index) => [waitingFor(`long_${index}`, { "$.token": "${workflow.input.token}" })]);
    await register({
      name: "wh_long_keys",
      tasks: [
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: branches },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: branches.map(([task]) => String(task!["taskReferenceName"])) },
      ],
    });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-long-keys", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { wh_long_keys: 1 } });
    const token = "k".repeat(700_000);
    const workflowId = await startWorkflow("wh_long_keys", { token });
    await waitsOf(workflowId, 4);
    const answer = (await (await send(webhook, { token }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(answer.completedTasks).toHaveLength(4);
    const ended = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(ended.tasks.filter((task) => task.referenceTaskName.startsWith("long_")).map((task) => task.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED"]);
    // Their four payloads are more than the JOIN's output holds: it fails, saying so.
    expect(ended.reasonForIncompletion).toMatch(/^Task fan_join failed: The task output is \d+ bytes, over the limit of \d+ bytes \(MAX_PAYLOAD_BYTES\)$/);
  });

  it("match a task waiting with the official client's top-level $ keys, one with no matches at all, and query parameters", async () => {
    await register({ name: "wh_client", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: { "$['repository']['name']": "${workflow.input.repo}" } }] });
    await register({ name: "wh_any", tasks: [waitingFor("any", {})] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-client",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_client: 1, wh_any: 0 },
    });
    const client = await startWorkflow("wh_client", { repo: "edge" });
    const any = await startWorkflow("wh_any");
    await waitsOf(client);
    await waitsOf(any);
    const answer = (await (await send(webhook, { repository: { name: "edge" } }, { "X-Token": "t" }, "?source=test")).json()) as EventAnswer;
    expect(answer.completedTasks.map((task) => task.workflowId).sort()).toEqual([client, any].sort());
    expect((await waitFor(client, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ source: "test", repository: { name: "edge" } });
  });

  it("are kept, the latest 20 of a webhook, newest first: whether each matched, the executions it reached, its payload", async () => {
    await register({ name: "wh_history", tasks: [waitingFor("w", { "$.n": "${workflow.input.n}" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-history", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { wh_history: 1 } });
    expect((await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${webhook.id}`))["webhookExecutionHistory"]).toEqual([]);
    const workflowId = await startWorkflow("wh_history", { n: 1 });
    await waitsOf(workflowId);
    const hit = (await (await send(webhook, { n: 1 }, { "X-Token": "t" })).json()) as EventAnswer;
    const miss = (await (await send(webhook, { n: 2, note: "x".repeat(5000) }, { "X-Token": "t" })).json()) as EventAnswer;
    // Refused events are not kept.
    expect((await send(webhook, { n: 3 }, { "X-Token": "wrong" })).status).toBe(401);
    type History = Array<{ eventId: string; matched: boolean; workflowIds: string[]; payload: string; timeStamp: number }>;
    const history = (await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${webhook.id}`))["webhookExecutionHistory"] as History;
    expect(history.map((event) => [event.eventId, event.matched, event.workflowIds])).toEqual([
      [miss.eventId, false, []],
      [hit.eventId, true, [workflowId]],
    ]);
    expect(JSON.parse(history[1]!.payload)).toEqual({ n: 1 });
    expect(history[0]!.payload).toMatch(/… \(cut: \d+ bytes\)$/);
    for (let n = 0; n < 20; n++) await send(webhook, { n: 100 + n }, { "X-Token": "t" });
    const kept = (await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${webhook.id}`))["webhookExecutionHistory"] as History;
    expect(kept).toHaveLength(20);
    expect(kept.map((event) => event.eventId)).not.toContain(hit.eventId);
    // Deleting the webhook deletes its history.
    await apiOk("DELETE", `/api/metadata/webhook/${webhook.id}`);
    expect((await env.DB.prepare(`SELECT count(*) AS n FROM webhook_events WHERE webhook_id = ?`).bind(webhook.id).first<{ n: number }>())!.n).toBe(0);
  });

  it("sent to a webhook deleted while they are delivered, leave no history behind: the deletion took it, and a record written after it was kept for good", async () => {
    await register({ name: "wh_gone", tasks: [waitingFor("w", { "$.n": "${workflow.input.n}" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-gone", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { wh_gone: 1 } });
    const workflowId = await startWorkflow("wh_gone", { n: 1 });
    await waitsOf(workflowId);
    // The delivery's completion of the waiting task held on its way to the execution (the network boundary), while the
    // webhook is deleted.
    const crossing = gate();
    const { webhookEvent } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.webhookEvent = async function (this: WorkflowExecution, ...args: Parameters<WorkflowExecution["webhookEvent"]>) {
      crossing.hit();
      await crossing.released;
      return webhookEvent.apply(this, args);
    };
    try {
      const delivery = send(webhook, { n: 1 }, { "X-Token": "t" });
      await crossing.reached;
      await apiOk("DELETE", `/api/metadata/webhook/${webhook.id}`);
      crossing.release();
      // Taken by the webhook as it was when it came: its task completes.
      expect((await delivery).status).toBe(200);
    } finally {
      WorkflowExecution.prototype.webhookEvent = webhookEvent;
    }
    expect((await getWorkflow(workflowId)).status).toBe("COMPLETED");
    expect((await env.DB.prepare(`SELECT count(*) AS n FROM webhook_events WHERE webhook_id = ?`).bind(webhook.id).first<{ n: number }>())!.n).toBe(0);
  });

  it("complete the tasks of the executions that take them when another execution fails to answer, and ask the sender to send the event again (503), starting the workflows at once, and only once", async () => {
    await register({ name: "wh_partial", tasks: [waitingFor("w", { "$.batch": "b-1" })] });
    await register({ name: "wh_partial_started", tasks: [httpTask("call", { uri: target("/count/wh-partial-started"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-partial",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_partial: 1 },
      workflowsToStart: { wh_partial_started: 1 },
    });
    const [healthy, failing] = [await startWorkflow("wh_partial"), await startWorkflow("wh_partial")];
    await waitsOf(healthy);
    await waitsOf(failing);
    const { webhookEvent } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.webhookEvent = async function (this: WorkflowExecution, taskId, payload) {
      if (taskId.startsWith(failing.slice(0, 19))) throw new Error("Network connection lost (test)");
      return webhookEvent.call(this, taskId, payload);
    };
    try {
      // Answered 200, the sender would never send it again, and the task it did not reach would wait for good.
      const response = await send(webhook, { batch: "b-1" }, { "X-Token": "t" });
      expect(response.status).toBe(503);
      expect(response.headers.get("Retry-After")).toBe("5");
      expect(await response.json()).toMatchObject({ status: 503, error: "UNAVAILABLE", retryable: true, message: expect.stringMatching(/^1 of the tasks waiting for this event could not be reached \(1 took it\); send it again/) });
    } finally {
      WorkflowExecution.prototype.webhookEvent = webhookEvent;
    }
    expect((await waitFor(healthy, ["COMPLETED"])).status).toBe("COMPLETED");
    // Started at once under the id the delivery claimed (a sender that never resends loses none; it was left to the
    // resend, which started it again after a partial batch, before the delivery was remembered).
    await eventually(() => hits("wh-partial-started"), (n) => n === 1, "the start, at once");
    // The sender's retry reaches the one that did not take it, and finds the webhook's workflow started.
    const retried = (await (await send(webhook, { batch: "b-1" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(retried.completedTasks.map((task) => task.workflowId)).toEqual([failing]);
    expect(retried.startedWorkflows).toEqual([{ name: "wh_partial_started", workflowId: expect.any(String) }]);
    await waitFor(retried.startedWorkflows[0]!.workflowId!, ["COMPLETED"]);
    expect(await hits("wh-partial-started")).toBe(1);

    // With an idempotency key as well: at once, and once only.
    const keyed = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-partial-keyed",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_partial: 1 },
      workflowsToStart: { wh_partial_started: 1, idempotencyKey: "$.batch" },
    });
    const [reached, unreached] = [await startWorkflow("wh_partial"), await startWorkflow("wh_partial")];
    await waitsOf(reached);
    await waitsOf(unreached);
    WorkflowExecution.prototype.webhookEvent = async function (this: WorkflowExecution, taskId, payload) {
      if (taskId.startsWith(unreached.slice(0, 19))) throw new Error("Network connection lost (test)");
      return webhookEvent.call(this, taskId, payload);
    };
    try {
      const response = await send(keyed, { batch: "b-1" }, { "X-Token": "t" });
      expect(response.status).toBe(503);
      expect(((await response.json()) as { message: string }).message).not.toContain("started then");
    } finally {
      WorkflowExecution.prototype.webhookEvent = webhookEvent;
    }
    await eventually(() => hits("wh-partial-started"), (n) => n === 2, "the keyed start, at once");
    const resent = (await (await send(keyed, { batch: "b-1" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(resent.completedTasks.map((task) => task.workflowId)).toEqual([unreached]);
    await waitFor(resent.startedWorkflows[0]!.workflowId!, ["COMPLETED"]);
    expect(await hits("wh-partial-started")).toBe(2);
  });

  it("stop before the delivery's calls to Cloudflare's services pass WEBHOOK_CALLS_PER_DELIVERY (20 here), answering 503 with Retry-After; the sender's retry completes the rest, none twice, and starts the workflows once", async () => {
    await register({ name: "wh_many", tasks: [waitingFor("w", { "$.batch": "m-1" })] });
    await register({ name: "wh_many_started", tasks: [httpTask("call", { uri: target("/count/wh-many-started"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-many",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_many: 1 },
      workflowsToStart: { wh_many_started: 1 },
    });
    // One call to its execution each, past the budget: a deployed Worker is refused past its count (workerd counts none).
    const ids: string[] = [];
    for (let n = 0; n < 15; n++) ids.push(await startWorkflow("wh_many"));
    for (const id of ids) await waitsOf(id);
    const response = await sendWithCallBudget(20, webhook, { batch: "m-1" }, { "X-Token": "t" });
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("5");
    const refusal = (await response.json()) as { status: number; retryable: boolean; message: string };
    expect(refusal).toMatchObject({ status: 503, error: "UNAVAILABLE", retryable: true });
    const [, took, left] = /\(20, WEBHOOK_CALLS_PER_DELIVERY, or the runtime's own count\) and stopped: (\d+) of the tasks it matches took it, (\d+) were not asked; send it again/.exec(refusal.message) ?? [];
    expect(Number(took) + Number(left)).toBe(15);
    expect(Number(took)).toBeGreaterThan(0);
    expect(refusal.message).toContain("what it started is not started again");
    await eventually(() => hits("wh-many-started"), (n) => n === 1, "the start, at once");
    // The sender retries after Retry-After, by when the completed tasks' routing rows are gone (each a call more if not,
    // answered "not waiting"): the retry passes over them and completes the others.
    const rows = async () => (await env.DB.prepare(`SELECT count(*) AS n FROM webhook_waits WHERE workflow_id IN (SELECT value FROM json_each(?))`).bind(JSON.stringify(ids)).first<{ n: number }>())!.n;
    await eventually(rows, (n) => n === Number(left), "the completed tasks' routing rows removed");
    const retried = await sendWithCallBudget(20, webhook, { batch: "m-1" }, { "X-Token": "t" });
    expect(retried.status).toBe(200);
    const answer = (await retried.json()) as EventAnswer;
    expect(answer.completedTasks).toHaveLength(Number(left));
    expect(answer.startedWorkflows).toEqual([{ name: "wh_many_started", workflowId: expect.any(String) }]);
    for (const id of ids) expect((await waitFor(id, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    const firstDone = ids.filter((id) => !answer.completedTasks.some((task) => task.workflowId === id));
    expect(firstDone).toHaveLength(Number(took));
    for (const id of ids) expect((await getWorkflow(id)).tasks.map((task) => task.status)).toEqual(["COMPLETED"]);
    await waitFor(answer.startedWorkflows[0]!.workflowId!, ["COMPLETED"]);
    expect(await hits("wh-many-started")).toBe(1);
    // Sent once more, it finds nothing waiting: a 200 completing nothing.
    const again = (await (await sendWithCallBudget(20, webhook, { batch: "m-1" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(again.completedTasks).toEqual([]);
  }, 60_000);

  it("do a batch whose events' look-ups, starts and records alone pass WEBHOOK_CALLS_PER_DELIVERY (40 in the tests) whole, where each resend stopped at the same event and started the workflows of those before it again", async () => {
    await register({ name: "wh_batch_wait", tasks: [waitingFor("w", { "$.batch": "b-last" })] });
    await register({ name: "wh_batch_started", tasks: [httpTask("call", { uri: target("/count/wh-batch-started"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-batch-calls",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_batch_wait: 1 },
      workflowsToStart: { wh_batch_started: 1 },
    });
    const ids = [await startWorkflow("wh_batch_wait"), await startWorkflow("wh_batch_wait"), await startWorkflow("wh_batch_wait")];
    for (const id of ids) await waitsOf(id);
    // Twelve events, each a look-up, a start and a record (four or five calls), the last matching the three tasks: some
    // 55 calls, past the count before the last event. The count stops only the asking of tasks, never before its first
    // round: stopping before an event's look-ups or starts made every resend of the batch stop at the same event.
    const events = [...Array.from({ length: 11 }, (_, n) => ({ batch: `b-${n}` })), { batch: "b-last" }];
    const response = await send(webhook, JSON.stringify(events), { "X-Token": "t" });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as EventAnswer & { eventIds: string[] };
    expect(answer.eventIds).toHaveLength(12);
    expect(answer.completedTasks.map((task) => task.workflowId).sort()).toEqual([...ids].sort());
    expect(answer.startedWorkflows).toHaveLength(12);
    for (const started of answer.startedWorkflows) await waitFor(started.workflowId!, ["COMPLETED"]);
    expect(await hits("wh-batch-started")).toBe(12);
    for (const id of ids) expect((await waitFor(id, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  }, 60_000);

  it("resent after a 503, do nothing twice: the batch's events done before the stop start nothing again and are kept once in the history", async () => {
    await register({ name: "wh_replay_wait", tasks: [waitingFor("w", { "$.batch": "x-last" })] });
    await register({ name: "wh_replay_started", tasks: [httpTask("call", { uri: target("/count/wh-replay-${workflow.input.batch}"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-replay",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_replay_wait: 1 },
      workflowsToStart: { wh_replay_started: 1 },
    });
    // The last event matches more tasks than the delivery's 20 calls allow (a budget this test sets, where the others'
    // is 40: fewer tasks to start): the first two are done, then it stops.
    const ids: string[] = [];
    for (let n = 0; n < 15; n++) ids.push(await startWorkflow("wh_replay_wait"));
    for (const id of ids) await waitsOf(id);
    const body = JSON.stringify([{ batch: "x-0" }, { batch: "x-1" }, { batch: "x-last" }]);
    const first = await sendWithCallBudget(20, webhook, body, { "X-Token": "t" });
    expect(first.status).toBe(503);
    const refusal = ((await first.json()) as { message: string }).message;
    expect(refusal).toMatch(/2 of its 3 events were handled/);
    // The sender sends the same body again until it is taken whole, after Retry-After, by when the routing rows of the
    // tasks that took it are gone: waited for by their number (each 503 says how many took it), not as a drop below a
    // count read after the 503, which their removal may have passed already (the wait never ended) or only begun (the
    // resend spent its calls asking tasks that had taken it, and could run out of attempts).
    const waiting = async () => (await env.DB.prepare(`SELECT count(*) AS n FROM webhook_waits WHERE workflow_id IN (SELECT value FROM json_each(?))`).bind(JSON.stringify(ids)).first<{ n: number }>())!.n;
    const tookIn = (message: string) => Number(/(\d+) of the tasks it matches took it/.exec(message)?.[1]);
    let taken = tookIn(refusal);
    expect(taken).toBeGreaterThan(0);
    let answer: (EventAnswer & { eventIds: string[] }) | undefined;
    while (answer === undefined) {
      await eventually(waiting, (n) => n === ids.length - taken, "the routing rows of the tasks that took it removed");
      const resent = await sendWithCallBudget(20, webhook, body, { "X-Token": "t" });
      if (resent.status === 200) answer = (await resent.json()) as EventAnswer & { eventIds: string[] };
      else {
        expect(resent.status).toBe(503);
        // Each resend gets further (so the loop ends): the tasks that took it are passed over.
        const took = tookIn(((await resent.json()) as { message: string }).message);
        expect(took).toBeGreaterThan(0);
        taken += took;
      }
    }
    // The last attempt completes the tasks none before reached, each once.
    expect(answer.completedTasks).toHaveLength(ids.length - taken);
    for (const id of ids) expect((await waitFor(id, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    expect(answer!.startedWorkflows).toHaveLength(3);
    for (const started of answer!.startedWorkflows) await waitFor(started.workflowId!, ["COMPLETED"]);
    // One execution per event: the resends found what the first attempt started.
    expect([await hits("wh-replay-x-0"), await hits("wh-replay-x-1"), await hits("wh-replay-x-last")]).toEqual([1, 1, 1]);
    type History = Array<{ eventId: string; workflowIds: string[] }>;
    const history = (await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${webhook.id}`))["webhookExecutionHistory"] as History;
    expect(history.map((event) => event.eventId).sort()).toEqual([...answer!.eventIds].sort());
    // The last event's record lists the executions it reached over every attempt, and the one it started.
    const last = history.find((event) => event.eventId === answer!.eventIds[2])!;
    expect(last.workflowIds.sort()).toEqual([...ids, answer!.startedWorkflows[2]!.workflowId!].sort());
  }, 60_000);

  it("resent after a 503, do not complete a task that began to wait after the delivery first came (a loop's next iteration), and are a new delivery once taken whole", async () => {
    await register({
      name: "wh_replay_loop",
      tasks: [{ name: "rounds", taskReferenceName: "rounds", type: "DO_WHILE", inputParameters: { items: ["a", "b"] }, loopOver: [waitingFor("step", { "$.step": "go" })] }],
    });
    await register({ name: "wh_replay_other", tasks: [waitingFor("w", { "$.step": "go" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-replay-loop",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_replay_loop: 1, wh_replay_other: 1 },
    });
    const loop = await startWorkflow("wh_replay_loop");
    const other = await startWorkflow("wh_replay_other");
    await waitsOf(loop);
    await waitsOf(other);
    const { webhookEvent } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.webhookEvent = async function (this: WorkflowExecution, taskId, payload) {
      if (taskId.startsWith(other.slice(0, 19))) throw new Error("Network connection lost (test)");
      return webhookEvent.call(this, taskId, payload);
    };
    try {
      expect((await sendWithCallBudget(1000, webhook, { step: "go" }, { "X-Token": "t" })).status).toBe(503);
      // Refused through the attempt's late looks too (1 s and 5 s after it came, in its ctx.waitUntil): lifted before
      // them, a late look completed the task (under load, the steps below take past 1 s) and the resend found nothing.
      await backgroundSettled();
    } finally {
      WorkflowExecution.prototype.webhookEvent = webhookEvent;
    }
    // The loop's first iteration took the event; its second now waits for the same values.
    const second = await waitFor(loop, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "step__2" && task.status === "IN_PROGRESS"));
    await eventually(async () => (await waitsOf(loop))[0]!.task_id, (taskId) => taskId === second.tasks.at(-1)!.taskId, "the second iteration's row");
    // The resend reaches the task it missed, not the iteration that began to wait after the event came.
    const resent = (await (await send(webhook, { step: "go" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(resent.completedTasks.map((task) => task.workflowId)).toEqual([other]);
    expect((await waitFor(other, ["COMPLETED"])).status).toBe("COMPLETED");
    expect((await getWorkflow(loop)).tasks.at(-1)).toMatchObject({ referenceTaskName: "step__2", status: "IN_PROGRESS" });
    // Taken whole, the delivery is forgotten: the same body sent again is a new event, which the iteration takes.
    const again = (await (await send(webhook, { step: "go" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(again.eventId).not.toBe(resent.eventId);
    expect(again.completedTasks.map((task) => task.workflowId)).toEqual([loop]);
    expect((await waitFor(loop, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("resent after a start whose answer was lost (the execution's object went away after it started), start it once", async () => {
    await register({ name: "wh_lost_started", tasks: [httpTask("call", { uri: target("/count/wh-lost-started"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-lost",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      workflowsToStart: { wh_lost_started: 1 },
    });
    // The start lands, then its answer is lost as an evicted object's is (workerd marks it retryable), every time.
    const { start } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.start = async function (this: WorkflowExecution, params) {
      await start.call(this, params);
      throw Object.assign(new Error("Network connection lost (test)"), { retryable: true });
    };
    let failed: Response;
    try {
      failed = await send(webhook, { order: "L-1" }, { "X-Token": "t" });
    } finally {
      WorkflowExecution.prototype.start = start;
    }
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const resent = await send(webhook, { order: "L-1" }, { "X-Token": "t" });
    expect(resent.status).toBe(200);
    const answer = (await resent.json()) as EventAnswer;
    await waitFor(answer.startedWorkflows[0]!.workflowId!, ["COMPLETED"]);
    const started = await eventually(
      async () => (await env.DB.prepare(`SELECT count(*) AS n FROM executions WHERE workflow_name = 'wh_lost_started'`).first<{ n: number }>())!.n,
      (n) => n > 0,
      "the started execution indexed",
    );
    expect(started).toBe(1);
    expect(await hits("wh-lost-started")).toBe(1);
  });

  it("resent after a workflow was added to the webhook, count the delivery's rows from its first arrival, all expiring together (and all deleted with the webhook)", async () => {
    await register({ name: "wh_grow_wait", tasks: [waitingFor("w", { "$.grow": "g-1" })] });
    await register({ name: "wh_grow_a", tasks: [httpTask("call", { uri: target("/count/wh-grow-a"), method: "GET" })] });
    await register({ name: "wh_grow_b", tasks: [httpTask("call", { uri: target("/count/wh-grow-b"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-grow",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_grow_wait: 1 },
      workflowsToStart: { wh_grow_a: 1 },
    });
    const unreached = await startWorkflow("wh_grow_wait");
    await waitsOf(unreached);
    const { webhookEvent } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.webhookEvent = async function (this: WorkflowExecution, taskId, payload) {
      if (taskId.startsWith(unreached.slice(0, 19))) throw new Error("Network connection lost (test)");
      return webhookEvent.call(this, taskId, payload);
    };
    try {
      expect((await send(webhook, { grow: "g-1" }, { "X-Token": "t" })).status).toBe(503);
      // The webhook starts one more workflow by the time the sender resends the delivery (answered 503 again).
      await apiOk("PUT", `/api/metadata/webhook/${webhook.id}`, { ...webhook, workflowsToStart: { wh_grow_a: 1, wh_grow_b: 1 } });
      expect((await send(webhook, { grow: "g-1" }, { "X-Token": "t" })).status).toBe(503);
    } finally {
      WorkflowExecution.prototype.webhookEvent = webhookEvent;
    }
    // The workflow added since has its id derived from the delivery's one row, which counts from its first arrival: the
    // delivery expires whole, never wh_grow_b's part of it outliving the rest (as one row per workflow once could).
    const rows = await env.DB.prepare(`SELECT received_at FROM webhook_delivery_seeds WHERE webhook_id = ?`).bind(webhook.id).all<{ received_at: number }>();
    expect(rows.results).toHaveLength(1);
    await eventually(async () => [await hits("wh-grow-a"), await hits("wh-grow-b")], ([a, b]) => a === 1 && b === 1, "each started once");
    // Deleting the webhook forgets its deliveries with it.
    await apiOk("DELETE", `/api/metadata/webhook/${webhook.id}`);
    const left = await env.DB.prepare(`SELECT count(*) AS n FROM webhook_delivery_seeds WHERE webhook_id = ?`).bind(webhook.id).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("of a batch starting several workflows, answered 503, are remembered in one row, from which every attempt derives the same ids; expired, it is taken over as a new delivery", async () => {
    await register({ name: "wh_rows_wait", tasks: [waitingFor("w", { "$.rows": "r-last" })] });
    await register({ name: "wh_rows_a", tasks: [httpTask("call", { uri: target("/count/wh-rows-a"), method: "GET" })] });
    await register({ name: "wh_rows_b", tasks: [httpTask("call", { uri: target("/count/wh-rows-b"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-rows",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_rows_wait: 1 },
      workflowsToStart: { wh_rows_a: 1, wh_rows_b: 1 },
    });
    const unreached = await startWorkflow("wh_rows_wait");
    await waitsOf(unreached);
    const body = JSON.stringify([{ rows: "r-0" }, { rows: "r-1" }, { rows: "r-last" }]);
    type History = Array<{ eventId: string; workflowIds: string[] }>;
    const history = async () => (await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${webhook.id}`))["webhookExecutionHistory"] as History;
    const rows = async () => (await env.DB.prepare(`SELECT count(*) AS n FROM webhook_delivery_seeds WHERE webhook_id = ?`).bind(webhook.id).first<{ n: number }>())!.n;
    const { webhookEvent } = WorkflowExecution.prototype;
    let refusals = 0;
    WorkflowExecution.prototype.webhookEvent = async function (this: WorkflowExecution, taskId, payload) {
      if (taskId.startsWith(unreached.slice(0, 19))) {
        refusals++;
        throw new Error("Network connection lost (test)");
      }
      return webhookEvent.call(this, taskId, payload);
    };
    let first: History;
    // Sent to a Worker whose delivery may make 1,000 calls: under the tests' 40, an attempt left its three events' late
    // looks (two each, 2 or 3 calls a look) about 11 calls, and whether the unreached task's 5 s look was still asked
    // depended on which event's look reached D1 first (under load, 5 refusals of the 6). The budget's own tests are above.
    const attempt = () => sendWithCallBudget(1000, webhook, body, { "X-Token": "t" });
    try {
      expect((await attempt()).status).toBe(503);
      // One row for the delivery: it was one per event and thing it does once (3 x (1 record + 2 starts) = 9 here, 5,100
      // for SendGrid's 100 events to a webhook starting 50 workflows, written again on every attempt).
      expect(await rows()).toBe(1);
      first = await history();
      expect((await attempt()).status).toBe(503);
      expect(await rows()).toBe(1);
      // Each attempt looks for the task again 1 s and 5 s after the delivery first came (its late looks, timers of its
      // ctx.waitUntil): refused too, or the one that came once the refusal was lifted would complete the task before the
      // expired resend below could. Both attempts' background work ended, each look was made.
      await backgroundSettled();
      expect(refusals, "each attempt's first and late looks at the unreached task").toBe(2 * (1 + LATE_LOOK_DELAYS_MS.length));
    } finally {
      WorkflowExecution.prototype.webhookEvent = webhookEvent;
    }
    // Each attempt derived the same ids: each event kept once, each of its starts made once.
    const again = await history();
    expect(again.map((event) => event.eventId).sort()).toEqual(first.map((event) => event.eventId).sort());
    expect(new Set(again.flatMap((event) => event.workflowIds)).size).toBe(6);
    await eventually(async () => [await hits("wh-rows-a"), await hits("wh-rows-b")], ([a, b]) => a === 3 && b === 3, "each event's starts, once");
    // Past its 72 hours, the delivery's row is taken over as a new delivery's (a fresh seed): new ids, new starts, and
    // the task that was waiting when it came (again) takes it.
    await env.DB.prepare(`UPDATE webhook_delivery_seeds SET received_at = received_at - ? WHERE webhook_id = ?`).bind(73 * 3_600_000, webhook.id).run();
    const resent = await send(webhook, body, { "X-Token": "t" });
    expect(resent.status).toBe(200);
    const answer = (await resent.json()) as EventAnswer & { eventIds: string[] };
    expect(answer.eventIds.filter((id) => first.some((event) => event.eventId === id))).toEqual([]);
    expect(answer.completedTasks.map((task) => task.workflowId)).toEqual([unreached]);
    expect(answer.startedWorkflows).toHaveLength(6);
    for (const started of answer.startedWorkflows) expect(again.some((event) => event.workflowIds.includes(started.workflowId!))).toBe(false);
    await eventually(async () => [await hits("wh-rows-a"), await hits("wh-rows-b")], ([a, b]) => a === 6 && b === 6, "the new delivery's starts");
    expect(await rows()).toBe(0);
  });

  it("derive the ids of the events an attempt reaches, not of the whole batch: an attempt stopped at its first event of 20 signs its 3, where it signed all 60", async () => {
    await register({ name: "wh_lazy_a", tasks: [httpTask("call", { uri: target("/count/wh-lazy-a"), method: "GET" })] });
    await register({ name: "wh_lazy_b", tasks: [httpTask("call", { uri: target("/count/wh-lazy-b"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-lazy",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      workflowsToStart: { wh_lazy_a: 1, wh_lazy_b: 1 },
    });
    const body = JSON.stringify(Array.from({ length: 20 }, (_, n) => ({ lazy: n })));
    // Each id is an HMAC-SHA256 over "<event index>:<workflow name>" (see delivery-memory.ts): counted, not changed. A
    // batch of 100 events to a webhook starting 50 workflows signed 5,100 on every attempt, where the runtime's count
    // of calls (or the delivery's) lets an attempt reach a few events: about 20 ms of CPU here (Workers Free allows 10).
    const { sign } = crypto.subtle;
    let derived = 0;
    crypto.subtle.sign = function (this: SubtleCrypto, ...args: Parameters<SubtleCrypto["sign"]>) {
      if (/^\d+:/.test(new TextDecoder().decode(args[2] as Uint8Array))) derived++;
      return sign.apply(this, args);
    } as SubtleCrypto["sign"];
    // What a deployed router's call to an object throws past its count, injected into the first event's starts.
    const { start } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.start = function () {
      return Promise.reject(new Error("Too many API requests by single Worker invocation. To configure this limit, refer to https://developers.cloudflare.com/workers/wrangler/configuration/#limits"));
    };
    let response: Response;
    try {
      response = await send(webhook, body, { "X-Token": "t" });
    } finally {
      WorkflowExecution.prototype.start = start;
      crypto.subtle.sign = sign;
    }
    expect(response.status).toBe(503);
    expect(((await response.json()) as { message: string }).message).toMatch(/0 of its 20 events were handled/);
    // The first event's record and its two starts.
    expect(derived).toBe(3);
    // Its resend derives the same ids for the events it reaches, and starts each event's workflows once.
    const answer = (await (await send(webhook, body, { "X-Token": "t" })).json()) as EventAnswer & { eventIds: string[] };
    expect(answer.eventIds).toHaveLength(20);
    expect(new Set(answer.startedWorkflows.map((started) => started.workflowId)).size).toBe(40);
    await eventually(async () => [await hits("wh-lazy-a"), await hits("wh-lazy-b")], ([a, b]) => a === 20 && b === 20, "each event's starts, once");
  });

  it("claimed, sweep a few deliveries past their 72 hours, any webhook's (one that is never answered 200 again kept them for good), in the claim's batch", async () => {
    await register({ name: "wh_sweep_started", tasks: [httpTask("call", { uri: target("/count/wh-sweep-started"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-sweep",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      workflowsToStart: { wh_sweep_started: 1 },
    });
    // Another webhook's deliveries, never resent: 25 past their time, one not.
    const now = Date.now();
    const insert = env.DB.prepare(`INSERT INTO webhook_delivery_seeds (webhook_id, digest, seed, received_at) VALUES ('wh-silent', ?, '00', ?)`);
    await env.DB.batch([...Array.from({ length: 25 }, (_, n) => insert.bind(`old-${n}`, now - 73 * 3_600_000 - n)), insert.bind("live", now - 3_600_000)]);
    const left = async () => (await env.DB.prepare(`SELECT digest FROM webhook_delivery_seeds WHERE webhook_id = 'wh-silent' ORDER BY received_at DESC`).all<{ digest: string }>()).results.map((row) => row.digest);
    expect((await send(webhook, { sweep: 1 }, { "X-Token": "t" })).status).toBe(200);
    // Twenty, the oldest first: the table is swept as it is used, never all at once.
    expect(await left()).toEqual(["live", "old-0", "old-1", "old-2", "old-3", "old-4"]);
    expect((await send(webhook, { sweep: 2 }, { "X-Token": "t" })).status).toBe(200);
    expect(await left()).toEqual(["live"]);
  });

  it("are remembered in a table of their own (0037), beside 0036's, which the code of the revision before goes on using between the migration and the deploy", async () => {
    // An upgrade applies the migrations, then deploys (README): until the deploy, and in an isolate of it serving a while
    // after, the revision before 0037 runs over the migrated database. These are its statements (a9fe791's
    // delivery-memory.ts and WebhookRepository.delete): 0037 reshaping webhook_deliveries under it (a row per
    // delivery, a seed in place of event_index, workflow_name, id) failed its claim, so every delivery it took, with a 500.
    const now = Date.now();
    const expiry = now - 72 * 3_600_000;
    const claim = (claims: unknown[]) =>
      env.DB.prepare(
        `INSERT INTO webhook_deliveries (webhook_id, digest, event_index, workflow_name, id, received_at)
         SELECT ?1, ?2, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
           coalesce((SELECT min(received_at) FROM webhook_deliveries WHERE webhook_id = ?1 AND digest = ?2 AND received_at >= ?5), ?3)
         FROM json_each(?4) WHERE true
         ON CONFLICT (webhook_id, digest, event_index, workflow_name) DO UPDATE SET
           id = CASE WHEN webhook_deliveries.received_at < ?5 THEN excluded.id ELSE webhook_deliveries.id END,
           received_at = CASE WHEN webhook_deliveries.received_at < ?5 THEN excluded.received_at ELSE webhook_deliveries.received_at END
         RETURNING event_index, workflow_name, id, received_at`,
      ).bind("wh-old", "d-1", now, JSON.stringify(claims), expiry);
    const ids = async (claims: unknown[]) => ((await env.DB.batch([claim(claims)]))[0]!.results as Array<{ id: string }>).map((row) => row.id).sort();
    const first = await ids([[0, "", crypto.randomUUID()], [0, "wh_old_started", crypto.randomUUID()]]);
    expect(first).toHaveLength(2);
    // Its resend finds what its first attempt claimed.
    expect(await ids([[0, "", crypto.randomUUID()], [0, "wh_old_started", crypto.randomUUID()]])).toEqual(first);
    const oldRows = async () => (await env.DB.prepare(`SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = 'wh-old'`).first<{ n: number }>())!.n;
    await env.DB.prepare(`DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND (digest = ?2 OR received_at < ?3)`).bind("wh-old", "d-1", expiry).run();
    expect(await oldRows()).toBe(0);
    await ids([[0, "", crypto.randomUUID()]]);
    await env.DB.prepare(`DELETE FROM webhook_deliveries WHERE webhook_id = ?`).bind("wh-old").run();
    expect(await oldRows()).toBe(0);
  });

  it("remembered, make no round trip to D1 more than before: the delivery's claim rides in its look-ups' batch, its forgetting in its last record's", async () => {
    await register({ name: "wh_trips_wait", tasks: [waitingFor("w", { "$.trip": "t-1" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-trips",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_trips_wait: 1 },
    });
    const waiting = await startWorkflow("wh_trips_wait");
    await waitsOf(waiting);
    // Every D1 round trip made while the event is delivered, as the SQL of its statements (a batch is one round trip).
    const trips: string[][] = [];
    const statementPrototype = Object.getPrototypeOf(env.DB.prepare("SELECT 1")) as Record<string, (...args: unknown[]) => unknown>;
    const databasePrototype = Object.getPrototypeOf(env.DB) as Record<string, (...args: unknown[]) => unknown>;
    const sqlOf = (statement: unknown) => String((statement as { statement?: string }).statement);
    const spied = [...["first", "all", "run", "raw"].map((method) => [statementPrototype, method] as const), [databasePrototype, "batch"] as const];
    const originals = spied.map(([prototype, method]) => prototype[method]!);
    spied.forEach(([prototype, method], index) => {
      prototype[method] = function (this: unknown, ...args: unknown[]) {
        trips.push(method === "batch" ? (args[0] as unknown[]).map(sqlOf) : [sqlOf(this)]);
        return originals[index]!.apply(this, args);
      };
    });
    let answer: EventAnswer;
    try {
      answer = (await (await send(webhook, { trip: "t-1" }, { "X-Token": "t" })).json()) as EventAnswer;
    } finally {
      spied.forEach(([prototype, method], index) => (prototype[method] = originals[index]!));
    }
    expect(answer.completedTasks.map((task) => task.workflowId)).toEqual([waiting]);
    // Claimed with the look-ups, forgotten with the record: each a round trip the delivery made before it was remembered
    // (two round trips to the primary database more on every delivery, when each went alone).
    const remembering = trips.filter((trip) => trip.some((sql) => sql.includes("webhook_delivery_seeds")));
    expect(remembering).toHaveLength(2);
    expect(remembering[0]!.some((sql) => sql.startsWith("SELECT DISTINCT workflow_name"))).toBe(true);
    // The sweep of expired deliveries rides with the claim too.
    expect(remembering[0]!.some((sql) => sql.startsWith("DELETE FROM webhook_delivery_seeds WHERE rowid IN"))).toBe(true);
    expect(remembering[1]!.some((sql) => sql.startsWith("INSERT INTO webhook_events"))).toBe(true);
    const left = await env.DB.prepare(`SELECT count(*) AS n FROM webhook_delivery_seeds WHERE webhook_id = ?`).bind(webhook.id).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("stop as at their budget when the runtime refuses a call past the invocation's count (\"Too many API requests by single Worker invocation.\"), where it read as an internal error", async () => {
    await register({ name: "wh_refused_wait", tasks: [waitingFor("w", { "$.batch": "r-1" })] });
    await register({ name: "wh_refused_started", tasks: [httpTask("call", { uri: target("/count/wh-refused-started"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-refused",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      receiverWorkflowNamesToVersions: { wh_refused_wait: 1 },
      workflowsToStart: { wh_refused_started: 1 },
    });
    const workflowId = await startWorkflow("wh_refused_wait");
    await waitsOf(workflowId);
    // What a deployed router's call to an object throws past its count, injected into the webhook's start.
    const { start } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.start = function () {
      return Promise.reject(new Error("Too many API requests by single Worker invocation. To configure this limit, refer to https://developers.cloudflare.com/workers/wrangler/configuration/#limits"));
    };
    let response: Response;
    try {
      response = await send(webhook, { batch: "r-1" }, { "X-Token": "t" });
    } finally {
      WorkflowExecution.prototype.start = start;
    }
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("5");
    expect(((await response.json()) as { message: string }).message).toMatch(/and stopped: 1 of the tasks it matches took it; send it again/);
    expect((await waitFor(workflowId, ["COMPLETED"])).status).toBe("COMPLETED");
    const retried = (await (await send(webhook, { batch: "r-1" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(retried.completedTasks).toEqual([]);
    expect(retried.startedWorkflows).toEqual([{ name: "wh_refused_started", workflowId: expect.any(String) }]);
    await waitFor(retried.startedWorkflows[0]!.workflowId!, ["COMPLETED"]);
    expect(await hits("wh-refused-started")).toBe(1);
  });

  it("sent just after a task began to wait, before its routing row was written, complete it a moment later; a task that began to wait after the event is not completed", async () => {
    await register({ name: "wh_early", tasks: [waitingFor("w", { "$.order": "${workflow.input.order}" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-early", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { wh_early: 1 } });
    // The start answers once the task waits; its row follows by about a tenth of a second.
    const early = await startWorkflow("wh_early", { order: "o-1" });
    const answer = (await (await send(webhook, { order: "o-1" }, { "X-Token": "t" })).json()) as EventAnswer;
    const later = await startWorkflow("wh_early", { order: "o-1" });
    await waitsOf(later);
    const done = await waitFor(early, ["COMPLETED", "FAILED"]);
    expect(done).toMatchObject({ status: "COMPLETED", tasks: [{ outputData: { order: "o-1" } }] });
    type History = Array<{ eventId: string; matched: boolean; workflowIds: string[] }>;
    const history = async () => (await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${webhook.id}`))["webhookExecutionHistory"] as History;
    // The event's record shows the execution it reached late (recorded once every task that look found had answered).
    const recorded = await eventually(history, (events) => events.some((event) => event.eventId === answer.eventId && event.matched), "the late reach recorded");
    expect(recorded.find((event) => event.eventId === answer.eventId)!.workflowIds).toEqual([early]);
    expect((await getWorkflow(later)).tasks[0]!.status).toBe("IN_PROGRESS");
  });

  it("do not complete, on the first look either, a task whose routing row says it began to wait after the event came", async () => {
    await register({ name: "wh_after", tasks: [waitingFor("w", { "$.order": "o-after" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-after", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { wh_after: 1 } });
    const workflowId = await startWorkflow("wh_after");
    await waitsOf(workflowId);
    // As if the task had begun to wait while the event was being verified (its row written before the first look).
    await env.DB.prepare(`UPDATE webhook_waits SET created_on = ? WHERE workflow_id = ?`).bind(Date.now() + 60_000, workflowId).run();
    const answer = (await (await send(webhook, { order: "o-after" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(answer.completedTasks).toEqual([]);
    expect((await getWorkflow(workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
  });

  it("are taken at /api/webhook/{id} too, where Conductor's Java client sends them, and answer its ping (GET) without a key", async () => {
    await register({ name: "wh_api_path", tasks: [waitingFor("hook", { "$.ref": "${workflow.input.ref}" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-api-path",
      verifier: "HEADER_BASED",
      headers: { "X-Webhook-Secret": "api-path-secret" },
      receiverWorkflowNamesToVersions: { wh_api_path: 1 },
    });
    const workflowId = await startWorkflow("wh_api_path", { ref: "R-1" });
    await waitsOf(workflowId);
    const post = (headers: Record<string, string>) => SELF.fetch(`https://conductor.test/api/webhook/${webhook.id}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ ref: "R-1" }) });
    // Still verified by the webhook's own verifier, not by an API key.
    expect((await post({})).status).toBe(401);
    expect((await getWorkflow(workflowId)).status).toBe("RUNNING");
    const answer = await post({ "X-Webhook-Secret": "api-path-secret" });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as EventAnswer).completedTasks.map((task) => task.workflowId)).toEqual([workflowId]);
    expect((await waitFor(workflowId, ["COMPLETED"])).status).toBe("COMPLETED");

    for (const path of [`/webhook/${webhook.id}`, `/api/webhook/${webhook.id}`]) {
      const ping = await SELF.fetch(`https://conductor.test${path}`);
      expect([ping.status, await ping.text()], path).toEqual([200, "OK"]);
    }
    const unknown = await SELF.fetch(`https://conductor.test/api/webhook/${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
  });

  it("refuse a body that is no JSON object or form, changing nothing", async () => {
    await register({ name: "wh_bodies", tasks: [waitingFor("w", {})] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-bodies", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { wh_bodies: 1 } });
    const workflowId = await startWorkflow("wh_bodies");
    await waitsOf(workflowId);
    expect((await send(webhook, "{not json", { "X-Token": "t" })).status).toBe(400);
    expect((await send(webhook, "[1, 2]", { "X-Token": "t" })).status).toBe(400);
    // A batch of more events than one delivery may carry: refused whole, none taken.
    const crowd = await send(webhook, JSON.stringify(Array.from({ length: 101 }, (_, index) => ({ index }))), { "X-Token": "t" });
    expect(crowd.status).toBe(413);
    expect(((await crowd.json()) as { message: string }).message).toMatch(/at most 100 events; this one has 101/);
    expect((await send(webhook, "hello", { "X-Token": "t", "content-type": "text/plain" })).status).toBe(415);
    // Within the request limit, but no task could take it as its output: refused whole (it was answered 200 and dropped).
    const large = await send(webhook, { blob: "x".repeat(800 * 1024) }, { "X-Token": "t" });
    expect(large.status).toBe(413);
    expect(((await large.json()) as { message: string }).message).toMatch(/^The webhook event is \d+ bytes, over the limit/);
    expect((await getWorkflow(workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
    expect((await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${webhook.id}`))["webhookExecutionHistory"]).toEqual([]);
    // Form fields, as Slack's commands come.
    const form = await SELF.fetch(`https://conductor.test/webhook/${webhook.id}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "X-Token": "t" }, body: "command=%2Fdeploy&text=prod" });
    expect(((await form.json()) as EventAnswer).completedTasks).toHaveLength(1);
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ command: "/deploy", text: "prod" });
  });

  it("take a JSON body whatever type it is labelled with, as Amazon SNS labels its notifications text/plain", async () => {
    await register({ name: "wh_sns", tasks: [waitingFor("note", { "$.Type": "Notification", "$.Subject": "${workflow.input.subject}" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-sns", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { wh_sns: 1 } });
    const workflowId = await startWorkflow("wh_sns", { subject: "deploy" });
    await waitsOf(workflowId);
    // Not JSON and not a form: still refused as a type this service does not read.
    expect((await send(webhook, "Type=Notification", { "X-Token": "t", "content-type": "text/plain; charset=UTF-8" })).status).toBe(415);
    expect((await send(webhook, '"a JSON text"', { "X-Token": "t", "content-type": "text/plain; charset=UTF-8" })).status).toBe(415);
    // Amazon SNS's notification, as it posts it by default (docs.aws.amazon.com/sns/latest/dg/http-header.html).
    const notification = { Type: "Notification", MessageId: "165545c9-2a5c-472c-8df2-7ff2be2b3b1b", Subject: "deploy", Message: "done" };
    const answer = await send(webhook, JSON.stringify(notification), { "X-Token": "t", "content-type": "text/plain; charset=UTF-8", "x-amz-sns-message-type": "Notification" });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as EventAnswer).completedTasks).toEqual([{ workflowId, taskId: expect.any(String) }]);
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toEqual(notification);
  });

  it("verify GitHub-style HMAC signatures (SIGNATURE_BASED and HMAC_BASED, hex or base64)", async () => {
    await register({ name: "wh_signed", tasks: [waitingFor("push", { "$.ref": "refs/heads/main" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-github",
      verifier: "SIGNATURE_BASED",
      headerKey: "X-Hub-Signature-256",
      secretValue: "gh-secret",
      receiverWorkflowNamesToVersions: { wh_signed: 1 },
      sourcePlatform: "GitHub",
    });
    expect(webhook["secretValue"]).toBe("***");
    const workflowId = await startWorkflow("wh_signed");
    await waitsOf(workflowId);
    const body = JSON.stringify({ ref: "refs/heads/main" });
    const forged = await send(webhook, body, { "X-Hub-Signature-256": `sha256=${hex(await hmacOf("not-the-secret", body))}` });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ message: "Webhook event refused: Signature in header X-Hub-Signature-256 does not match the body" });
    const signed = await send(webhook, body, { "X-Hub-Signature-256": `sha256=${hex(await hmacOf("gh-secret", body))}` });
    expect(((await signed.json()) as EventAnswer).completedTasks).toHaveLength(1);

    // Headers given to a webhook of another verifier are checked too.
    const hmacHook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-hmac", verifier: "HMAC_BASED", headerKey: "X-Signature", secretValue: "k", headers: { "X-Tenant": "acme" }, receiverWorkflowNamesToVersions: { wh_signed: 1 } });
    const signature = btoa(String.fromCharCode(...(await hmacOf("k", "{}"))));
    expect((await send(hmacHook, "{}", { "X-Signature": signature })).status).toBe(401);
    expect((await send(hmacHook, "{}", { "X-Signature": signature, "X-Tenant": "acme" })).status).toBe(200);

    // Microsoft Teams' outgoing webhooks: "Authorization: HMAC <base64>", keyed by the bytes of the base64 security token.
    const token = btoa("teams-shared-secret-bytes-0123456789");
    const teams = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-teams", verifier: "HMAC_BASED", headerKey: "Authorization", secretValue: token, receiverWorkflowNamesToVersions: { wh_signed: 1 } });
    const teamsBody = JSON.stringify({ type: "message", text: "hi" });
    const key = await crypto.subtle.importKey("raw", Uint8Array.from(atob(token), (char) => char.charCodeAt(0)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const teamsMac = btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(teamsBody)))));
    expect((await send(teams, teamsBody, { Authorization: `HMAC ${teamsMac}` })).status).toBe(200);
    const wrongKey = btoa(String.fromCharCode(...(await hmacOf("another-token", teamsBody))));
    expect((await send(teams, teamsBody, { Authorization: `HMAC ${wrongKey}` })).status).toBe(401);

    // Orkes' docs save a Teams webhook with "secretValue": "" (Teams gives the token once it has the URL): every event
    // is refused until the token is saved.
    const later = { name: "wh-teams-later", verifier: "HMAC_BASED", headerKey: "Authorization", secretValue: "", receiverWorkflowNamesToVersions: { wh_signed: 1 } };
    const pending = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", later);
    expect(pending).not.toHaveProperty("secretValue");
    const refused = await send(pending, teamsBody, { Authorization: `HMAC ${teamsMac}` });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { message: string }).message).toContain("no secretValue yet");
    await apiOk("PUT", `/api/metadata/webhook/${pending.id}`, { ...later, secretValue: token });
    expect((await send(pending, teamsBody, { Authorization: `HMAC ${teamsMac}` })).status).toBe(200);
  });

  it("verify PagerDuty's v3 signatures, several of them while its secret is rotated (X-PagerDuty-Signature: v1=…,v1=…)", async () => {
    await register({ name: "wh_pagerduty", tasks: [waitingFor("triggered", { "$.event.event_type": "incident.triggered", "$.event.data.id": "${workflow.input.incident}" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-pagerduty", verifier: "HMAC_BASED", headerKey: "X-PagerDuty-Signature", secretValue: "pd-new-secret", receiverWorkflowNamesToVersions: { wh_pagerduty: 1 }, sourcePlatform: "Pagerduty" });
    const workflowId = await startWorkflow("wh_pagerduty", { incident: "PGR0VU2" });
    await waitsOf(workflowId);
    // The bytes PagerDuty signs, as it sends them: its key order, unicode as is.
    const body = '{"event":{"id":"01DEN1HNLBC1VITYAQ3G9VJ1ND","event_type":"incident.triggered","resource_type":"incident","occurred_at":"2026-12-07T01:50:00.000Z","data":{"id":"PGR0VU2","title":"Sérvice dówn ☃"}}}';
    const signature = async (secret: string) => `v1=${hex(await hmacOf(secret, body))}`;
    // PagerDuty signs with each of its secrets while one is rotated, comma-separated: one of them is the webhook's.
    for (const header of [`${await signature("pd-old-secret")},${await signature("pd-new-secret")}`, `${await signature("pd-new-secret")},${await signature("pd-old-secret")}`]) {
      const answer = await send(webhook, body, { "X-PagerDuty-Signature": header });
      expect(answer.status, header).toBe(200);
    }
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toMatchObject({ event: { data: { title: "Sérvice dówn ☃" } } });
    // None of them the webhook's: refused.
    const forged = await send(webhook, body, { "X-PagerDuty-Signature": `${await signature("pd-old-secret")},${await signature("pd-other")}` });
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { message: string }).message).toBe("Webhook event refused: Signature in header X-PagerDuty-Signature does not match the body");
  });

  it("take *** for a secret never saved as none, as Orkes' docs' update of a HEADER_BASED webhook sends it", async () => {
    await register({ name: "wh_masked_update", tasks: [waitingFor("w", {})] });
    const config = { name: "wh-masked-update", verifier: "HEADER_BASED", headers: { "X-Key": "v" }, receiverWorkflowNamesToVersions: { wh_masked_update: 1 } };
    const created = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { ...config, secretValue: "***" });
    expect(created).not.toHaveProperty("secretValue");
    const updated = await apiOk<WebhookJson>("PUT", `/api/metadata/webhook/${created.id}`, { ...config, headers: { "X-Key": "***" }, secretValue: "***" });
    expect(updated).not.toHaveProperty("secretValue");
    // The header's value, given back as ***, is the one saved.
    expect((await send(created, {}, { "X-Key": "v" })).status).toBe(200);
  });

  it("read the JSON of a form's payload field, as GitHub sends it with its default content type (and Slack its interactive messages)", async () => {
    await register({ name: "wh_github_form", tasks: [waitingFor("push", { "$.ref": "refs/heads/main" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-github-form", verifier: "SIGNATURE_BASED", headerKey: "X-Hub-Signature-256", secretValue: "gh-form", receiverWorkflowNamesToVersions: { wh_github_form: 1 } });
    const workflowId = await startWorkflow("wh_github_form");
    await waitsOf(workflowId);
    const body = new URLSearchParams({ payload: JSON.stringify({ ref: "refs/heads/main", commits: [{ id: "c1" }] }) }).toString();
    const answer = await send(webhook, body, { "content-type": "application/x-www-form-urlencoded", "X-Hub-Signature-256": `sha256=${hex(await hmacOf("gh-form", body))}` });
    expect(((await answer.json()) as EventAnswer).completedTasks).toHaveLength(1);
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ ref: "refs/heads/main", commits: [{ id: "c1" }] });
  });

  it("verify Slack's signing secret and answer its URL verification challenge; a stale timestamp is refused", async () => {
    await register({ name: "wh_slack", tasks: [waitingFor("message", { "$.event.type": "message" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-slack", verifier: "SLACK_BASED", secretValue: "slack-signing", receiverWorkflowNamesToVersions: { wh_slack: 1 } });
    const slackHeaders = async (body: string, at = Math.floor(Date.now() / 1000)) => ({
      "X-Slack-Request-Timestamp": String(at),
      "X-Slack-Signature": `v0=${hex(await hmacOf("slack-signing", `v0:${at}:${body}`))}`,
    });
    const challenge = JSON.stringify({ type: "url_verification", challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
    const answered = await send(webhook, challenge, await slackHeaders(challenge));
    expect(await answered.json()).toEqual({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
    expect((await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${webhook.id}`)).urlVerified).toBe(true);
    const message = JSON.stringify({ event: { type: "message", text: "hi" } });
    expect((await send(webhook, message, await slackHeaders(message, Math.floor(Date.now() / 1000) - 600))).status).toBe(401);
    const workflowId = await startWorkflow("wh_slack");
    await waitsOf(workflowId);
    expect(((await (await send(webhook, message, await slackHeaders(message))).json()) as EventAnswer).completedTasks).toHaveLength(1);
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ event: { type: "message", text: "hi" } });
  });

  it("answer Slack's check of a slash command's certificate (ssl_check=1) with an empty 200, signed or not, taking it as no event", async () => {
    await register({ name: "wh_slack_command", tasks: [waitingFor("command", {})] });
    await register({ name: "wh_slack_started", tasks: [httpTask("call", { uri: target("/count/wh-slack-started"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-slack-command", verifier: "SLACK_BASED", secretValue: "slack-command-signing", receiverWorkflowNamesToVersions: { wh_slack_command: 1 }, workflowsToStart: { wh_slack_started: 1 } });
    const workflowId = await startWorkflow("wh_slack_command");
    await waitsOf(workflowId);
    const signedForm = async (body: string) => {
      const at = Math.floor(Date.now() / 1000);
      return { "content-type": "application/x-www-form-urlencoded", "X-Slack-Request-Timestamp": String(at), "X-Slack-Signature": `v0=${hex(await hmacOf("slack-command-signing", `v0:${at}:${body}`))}` };
    };
    const check = "ssl_check=1&token=gIkuvaNzQIHg97ATvDxqgjtO";
    const answered = await send(webhook, check, await signedForm(check));
    expect([answered.status, await answered.text()]).toEqual([200, ""]);
    // Unsigned (Slack's own serverless receivers answer it before any signature check): the same, and nothing more.
    const unsigned = await send(webhook, check, { "content-type": "application/x-www-form-urlencoded" });
    expect([unsigned.status, await unsigned.text()]).toEqual([200, ""]);
    expect((await getWorkflow(workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
    expect((await apiOk<WebhookJson>("GET", `/api/metadata/webhook/${webhook.id}`))["webhookExecutionHistory"]).toEqual([]);
    // The command itself is an event: it completes the task and starts the workflow.
    const command = "command=%2Fdeploy&text=prod&token=gIkuvaNzQIHg97ATvDxqgjtO";
    const taken = (await (await send(webhook, command, await signedForm(command))).json()) as EventAnswer;
    expect([taken.completedTasks.length, taken.startedWorkflows.length]).toEqual([1, 1]);
    await waitFor(taken.startedWorkflows[0]!.workflowId!, ["COMPLETED"]);
    expect(await hits("wh-slack-started")).toBe(1);
  });

  it("verify Stripe's signatures; saved without the secret (Stripe shows it once it has the URL), every event is refused until it is given", async () => {
    await register({ name: "wh_stripe", tasks: [waitingFor("charge", { "$.type": "charge.succeeded" })] });
    const config = { name: "wh-stripe", verifier: "STRIPE", receiverWorkflowNamesToVersions: { wh_stripe: 1 } };
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", config);
    expect(webhook).not.toHaveProperty("secretValue");
    const workflowId = await startWorkflow("wh_stripe");
    await waitsOf(workflowId);
    const body = JSON.stringify({ id: "evt_1", type: "charge.succeeded" });
    const at = Math.floor(Date.now() / 1000);
    for (const signedWith of ["whsec_guess", "whsec_test"]) {
      const unverifiable = await send(webhook, body, { "Stripe-Signature": `t=${at},v1=${hex(await hmacOf(signedWith, `${at}.${body}`))}` });
      expect(unverifiable.status).toBe(401);
      expect(((await unverifiable.json()) as { message: string }).message).toContain("no secretValue yet");
    }
    expect((await getWorkflow(workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
    await apiOk("PUT", `/api/metadata/webhook/${webhook.id}`, { ...config, secretValue: "whsec_test" });
    expect((await send(webhook, body, { "Stripe-Signature": `t=${at},v1=${hex(await hmacOf("whsec_other", `${at}.${body}`))}` })).status).toBe(401);
    const answer = await send(webhook, body, { "Stripe-Signature": `t=${at},v1=${hex(await hmacOf("whsec_test", `${at}.${body}`))}` });
    expect(((await answer.json()) as EventAnswer).completedTasks).toHaveLength(1);
  });

  it("verify SendGrid's signed events (ECDSA P-256 over the timestamp and the body) with the verification key it shows", async () => {
    await register({ name: "wh_sendgrid", tasks: [waitingFor("delivered", { "$.event": "delivered" })] });
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const publicKey = btoa(String.fromCharCode(...new Uint8Array((await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer)));
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-sendgrid", verifier: "SENDGRID", secretValue: publicKey, workflowsToStart: {}, receiverWorkflowNamesToVersions: { wh_sendgrid: 1 } });
    const workflowId = await startWorkflow("wh_sendgrid");
    await waitsOf(workflowId);
    const body = JSON.stringify({ event: "delivered", email: "a@example.com" });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signed = async (key: CryptoKey, data: string) => derSignature(new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key, new TextEncoder().encode(data))));
    const headers = (signature: string) => ({ "X-Twilio-Email-Event-Webhook-Signature": signature, "X-Twilio-Email-Event-Webhook-Timestamp": timestamp });
    const other = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
    expect((await send(webhook, body, headers(await signed(other.privateKey, `${timestamp}${body}`)))).status).toBe(401);
    // Signed over another timestamp: refused too.
    expect((await send(webhook, body, headers(await signed(pair.privateKey, `1${timestamp}${body}`)))).status).toBe(401);
    expect((await send(webhook, body, headers("not-a-signature"))).status).toBe(401);
    const answer = await send(webhook, body, headers(await signed(pair.privateKey, `${timestamp}${body}`)));
    expect(((await answer.json()) as EventAnswer).completedTasks.map((task) => task.workflowId)).toEqual([workflowId]);
  });

  it("take SendGrid's batches (a JSON array of events, as SendGrid always posts them): each event is matched and starts on its own", async () => {
    await register({ name: "wh_sendgrid_batch", tasks: [waitingFor("bounced", { "$.event": "bounce" })] });
    await register({ name: "wh_sendgrid_each", tasks: [httpTask("call", { uri: target("/count/wh-sendgrid-each-${workflow.input.event}"), method: "GET" })] });
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const publicKey = btoa(String.fromCharCode(...new Uint8Array((await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer)));
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-sendgrid-batch", verifier: "SENDGRID", secretValue: publicKey, workflowsToStart: { wh_sendgrid_each: 1 }, receiverWorkflowNamesToVersions: { wh_sendgrid_batch: 1 } });
    const workflowId = await startWorkflow("wh_sendgrid_batch");
    await waitsOf(workflowId);
    const body = JSON.stringify([{ event: "delivered", email: "a@example.com", sg_event_id: "e1" }, { event: "bounce", email: "b@example.com", sg_event_id: "e2" }]);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = derSignature(new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, pair.privateKey, new TextEncoder().encode(`${timestamp}${body}`))));
    const answer = await send(webhook, body, { "X-Twilio-Email-Event-Webhook-Signature": signature, "X-Twilio-Email-Event-Webhook-Timestamp": timestamp });
    expect(answer.status).toBe(200);
    const json = (await answer.json()) as EventAnswer & { eventIds: string[] };
    expect(json.completedTasks.map((task) => task.workflowId)).toEqual([workflowId]);
    expect(json.startedWorkflows).toHaveLength(2);
    expect(json.eventIds).toHaveLength(2);
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toMatchObject({ event: "bounce", email: "b@example.com" });
    for (const started of json.startedWorkflows) await waitFor(started.workflowId!, ["COMPLETED"]);
    expect([await hits("wh-sendgrid-each-delivered"), await hits("wh-sendgrid-each-bounce")]).toEqual([1, 1]);
  });

  it("start the webhook's workflows with the payload as input, once per idempotency key value", async () => {
    await register({ name: "wh_started", tasks: [httpTask("call", { uri: target("/count/wh-started?id=${workflow.input.id}"), method: "GET" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", {
      name: "wh-starts",
      verifier: "HEADER_BASED",
      headers: { "X-Token": "t" },
      workflowsToStart: { wh_started: 0, idempotencyKey: "$.id" },
    });
    expect(webhook["workflowsToStart"]).toEqual({ wh_started: 0, idempotencyKey: "$.id" });
    const first = (await (await send(webhook, { id: "evt-A" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(first.startedWorkflows).toEqual([{ name: "wh_started", workflowId: expect.any(String) }]);
    const started = await waitFor(first.startedWorkflows[0]!.workflowId!, ["COMPLETED", "FAILED"]);
    // Started as the webhook's saver (the bootstrap key's "admin"), though the event came without a key.
    expect(started).toMatchObject({ status: "COMPLETED", input: { id: "evt-A" }, createdBy: "admin" });
    // The sender's retry of the same event: the same execution, nothing started twice.
    const retried = (await (await send(webhook, { id: "evt-A" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(retried.startedWorkflows).toEqual(first.startedWorkflows);
    const another = (await (await send(webhook, { id: "evt-B" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(another.startedWorkflows[0]!.workflowId).not.toBe(first.startedWorkflows[0]!.workflowId);
    await waitFor(another.startedWorkflows[0]!.workflowId!, ["COMPLETED"]);
    expect(await hits("wh-started")).toBe(2);

    // A key longer than a start may carry (512 characters, as through the API) starts nothing and says why.
    const keys = await rowCount("idempotency_keys");
    const tooLong = (await (await send(webhook, { id: "e".repeat(513) }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(tooLong.startedWorkflows).toEqual([{ name: "wh_started", refused: expect.stringContaining("at most 512") }]);
    expect(await rowCount("idempotency_keys")).toBe(keys);
  });

  it("take the idempotency key as Orkes' docs write it, ${workflow.input.<path>}: the same place in the event", async () => {
    await register({ name: "wh_keyed", tasks: [httpTask("call", { uri: target("/count/wh-keyed"), method: "GET" })] });
    const workflowsToStart = { wh_keyed: 0, idempotencyKey: "${workflow.input.bug.id}" };
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-keyed", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, workflowsToStart });
    expect(webhook["workflowsToStart"]).toEqual(workflowsToStart);
    const first = (await (await send(webhook, { bug: { id: 7 } }, { "X-Token": "t" })).json()) as EventAnswer;
    const again = (await (await send(webhook, { bug: { id: 7 } }, { "X-Token": "t" })).json()) as EventAnswer;
    const other = (await (await send(webhook, { bug: { id: 8 } }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(again.startedWorkflows).toEqual(first.startedWorkflows);
    expect(other.startedWorkflows[0]!.workflowId).not.toBe(first.startedWorkflows[0]!.workflowId);
    // Any other expression is no place in the event.
    const refused = await api("POST", "/api/metadata/webhook", { name: "wh-keyed-2", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, workflowsToStart: { wh_keyed: 0, idempotencyKey: "${workflow.variables.id}" } });
    expect(refused.status).toBe(400);
  });

  it("take an idempotency key made of text and several ${workflow.input.<path>} references, as Orkes resolves it", async () => {
    await register({ name: "wh_composed", tasks: [httpTask("call", { uri: target("/count/wh-composed"), method: "GET" })] });
    // A pull request's events: one start per repository and number (neither alone tells them apart).
    const workflowsToStart = { wh_composed: 0, idempotencyKey: "pr-${workflow.input.repository.id}/${workflow.input.number}" };
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-composed", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, workflowsToStart });
    expect(webhook["workflowsToStart"]).toEqual(workflowsToStart);
    const started = async (event: JsonObject) => ((await (await send(webhook, event, { "X-Token": "t" })).json()) as EventAnswer).startedWorkflows[0]!.workflowId;
    const first = await started({ action: "opened", repository: { id: 41 }, number: 7 });
    expect(await started({ action: "edited", repository: { id: 41 }, number: 7 })).toBe(first);
    const otherNumber = await started({ action: "opened", repository: { id: 41 }, number: 8 });
    const otherRepository = await started({ action: "opened", repository: { id: 42 }, number: 7 });
    expect(new Set([first, otherNumber, otherRepository]).size).toBe(3);
    // The key is the text with each reference read in the event.
    const execution = await apiOk<JsonObject>("GET", `/api/workflow/${otherNumber}`);
    expect(execution["idempotencyKey"]).toBe("pr-41/8");
    // A reference to anything but the workflow's input, or a text with no reference, is no place in the event.
    for (const idempotencyKey of ["pr-${workflow.variables.id}", "pr-${workflow.input.number}-${secret}", "pr-fixed"]) {
      const refused = await api("POST", "/api/metadata/webhook", { name: "wh-composed-2", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, workflowsToStart: { wh_composed: 0, idempotencyKey } });
      expect(refused.status).toBe(400);
    }
    // A key written longer than a key may be (its text alone past the 512 characters): every start would be refused.
    const long = await api("POST", "/api/metadata/webhook", { name: "wh-composed-3", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, workflowsToStart: { wh_composed: 0, idempotencyKey: `${"pr".repeat(300)}-\${workflow.input.number}` } });
    expect(long.status).toBe(400);
    expect(JSON.stringify(await long.json())).toContain("at most 512 characters");
  });

  it("limit failed verifications per webhook and address: once limited, a correctly signed event is refused too", async () => {
    await register({ name: "wh_limited", tasks: [waitingFor("w", {})] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-limited", verifier: "HEADER_BASED", headers: { "X-Token": "right" }, receiverWorkflowNamesToVersions: { wh_limited: 1 } });
    let status = 0;
    for (let attempt = 0; attempt < 20 && status !== 429; attempt++) status = (await send(webhook, {}, { "X-Token": `guess-${attempt}` })).status;
    expect(status).toBe(429);
    const right = await send(webhook, {}, { "X-Token": "right" });
    expect(right.status).toBe(429);
    expect(right.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("ask for HTTP Basic credentials as Twilio needs (401 with WWW-Authenticate, not counted as a failure), then take the event sent with them", async () => {
    await register({ name: "wh_twilio", tasks: [waitingFor("reply", { "$.Body": "yes", "$.From": "${workflow.input.phone}" })] });
    // Twilio's webhook URL https://twilio:ahoy!@host/webhook/{id}: it sends the credentials only once a 401 asks for them.
    const credentials = `Basic ${btoa("twilio:ahoy!")}`;
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-twilio", verifier: "HEADER_BASED", headers: { Authorization: credentials }, receiverWorkflowNamesToVersions: { wh_twilio: 1 } });
    const workflowId = await startWorkflow("wh_twilio", { phone: "+15551234567" });
    await waitsOf(workflowId);
    const form = { "content-type": "application/x-www-form-urlencoded; charset=UTF-8" };
    // More messages than the failures the lockout allows (5 in the tests): each asked for first, as Twilio sends them.
    for (let message = 0; message < 7; message++) {
      const body = new URLSearchParams({ MessageSid: `SM${message}`, From: "+15551234567", Body: message === 6 ? "yes" : "no" }).toString();
      const asked = await send(webhook, body, form);
      expect([asked.status, asked.headers.get("www-authenticate")], `message ${message}`).toEqual([401, 'Basic realm="webhook", charset="UTF-8"']);
      expect(((await asked.json()) as { message: string }).message).toBe("Webhook event refused: Missing header Authorization");
      expect((await send(webhook, body, { ...form, Authorization: credentials })).status, `message ${message}`).toBe(200);
    }
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toMatchObject({ MessageSid: "SM6", Body: "yes" });
    // Wrong credentials are guesses: counted, until the address is refused, the right ones too.
    let status = 0;
    for (let attempt = 0; attempt < 20 && status !== 429; attempt++) {
      const wrong = await send(webhook, "{}", { Authorization: `Basic ${btoa(`twilio:guess-${attempt}`)}` });
      status = wrong.status;
      if (status === 401) expect(wrong.headers.get("www-authenticate")).toBe('Basic realm="webhook", charset="UTF-8"');
    }
    expect(status).toBe(429);
    expect((await send(webhook, "{}", { Authorization: credentials })).status).toBe(429);
  });

  it("limit failed signature verifications without refusing a correctly signed event (a provider's shared addresses send every customer's)", async () => {
    await register({ name: "wh_signed_limited", tasks: [waitingFor("w", {})] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-signed-limited", verifier: "SIGNATURE_BASED", headerKey: "X-Signature", secretValue: "right", receiverWorkflowNamesToVersions: { wh_signed_limited: 1 } });
    let status = 0;
    for (let attempt = 0; attempt < 20 && status !== 429; attempt++) status = (await send(webhook, "{}", { "X-Signature": hex(await hmacOf(`guess-${attempt}`, "{}")) })).status;
    expect(status).toBe(429);
    expect((await send(webhook, "{}", { "X-Signature": hex(await hmacOf("right", "{}")) })).status).toBe(200);
  });

  it("complete a task waiting in a loop by its reference name as written, in each iteration", async () => {
    await register({
      name: "wh_loop",
      tasks: [{ name: "rounds", taskReferenceName: "rounds", type: "DO_WHILE", inputParameters: { items: ["a", "b"] }, loopOver: [waitingFor("step", { "$.step": "${rounds.output.loopItem}" })] }],
    });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-loop", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { wh_loop: 1 } });
    const workflowId = await startWorkflow("wh_loop");
    await waitsOf(workflowId);
    expect(((await (await send(webhook, { step: "b" }, { "X-Token": "t" })).json()) as EventAnswer).completedTasks).toEqual([]);
    expect(((await (await send(webhook, { step: "a" }, { "X-Token": "t" })).json()) as EventAnswer).completedTasks).toHaveLength(1);
    const second = await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "step__2" && task.status === "IN_PROGRESS"));
    await eventually(async () => (await waitsOf(workflowId))[0]!.task_id, (taskId) => taskId === second.tasks.at(-1)!.taskId, "the second iteration's row");
    expect(((await (await send(webhook, { step: "b" }, { "X-Token": "t" })).json()) as EventAnswer).completedTasks).toHaveLength(1);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("never reach a test run's waiting task (a test run does nothing real)", async () => {
    await register({ name: "wh_test_run", tasks: [waitingFor("w", { "$.id": "x" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-test-run", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { wh_test_run: 1 } });
    const testRun = await apiOk<{ workflowId: string }>("POST", "/api/workflow/test", { name: "wh_test_run", version: 1 });
    // A real execution started after it has its row: the test run's would be written by now too.
    const real = await startWorkflow("wh_test_run");
    await waitsOf(real);
    await waitsOf(testRun.workflowId, 0);
    const answer = (await (await send(webhook, { id: "x" }, { "X-Token": "t" })).json()) as EventAnswer;
    expect(answer.completedTasks.map((task) => task.workflowId)).toEqual([real]);
    expect((await getWorkflow(testRun.workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
  });

  it("find no task that stopped waiting (terminated), and fail a task whose matches resolved to nothing", async () => {
    await register({ name: "wh_ended", tasks: [waitingFor("w", { "$.id": "${workflow.input.id}" })] });
    const webhook = await apiOk<WebhookJson>("POST", "/api/metadata/webhook", { name: "wh-ended", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { wh_ended: 1 } });
    const workflowId = await startWorkflow("wh_ended", { id: "x" });
    await waitsOf(workflowId);
    await apiOk("DELETE", `/api/workflow/${workflowId}`);
    await waitsOf(workflowId, 0);
    expect(((await (await send(webhook, { id: "x" }, { "X-Token": "t" })).json()) as EventAnswer).completedTasks).toEqual([]);
    const unmatched = await startWorkflow("wh_ended", {});
    const failed = await waitFor(unmatched, ["FAILED", "COMPLETED"]);
    expect(failed.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("matches \"$.id\" resolved to null") });
  });
});
