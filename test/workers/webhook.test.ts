import { SELF, abortAllDurableObjects, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor, waitForIndexRow, type TaskJson, type WorkflowJson } from "./helpers";

const hookTask = (ref: string, inputParameters: JsonObject = {}, extra: JsonObject = {}): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT_FOR_WEBHOOK", inputParameters, ...extra });

/** Starts a workflow and waits until its webhook task (the last task) is waiting; returns both. */
async function startWaiting(name: string, input: JsonObject = {}): Promise<{ workflowId: string; hook: TaskJson }> {
  const workflowId = await startWorkflow(name, input);
  const workflow = await waitFor(workflowId, (candidate) => candidate.tasks.at(-1)?.taskType === "WAIT_FOR_WEBHOOK" && candidate.tasks.at(-1)?.status === "IN_PROGRESS");
  return { workflowId, hook: workflow.tasks.at(-1)! };
}

/** Posts a callback exactly as an external sender would: no API key. */
function callback(url: string, body: string | JsonObject, headers: Record<string, string> = {}): Promise<Response> {
  return SELF.fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
}

async function hmac(secret: string, body: string, encoding: "hex" | "base64"): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
  return encoding === "hex" ? [...mac].map((byte) => byte.toString(16).padStart(2, "0")).join("") : btoa(String.fromCharCode(...mac));
}

/** The workflow without the fields a read itself may not change, for "nothing changed" checks. */
const snapshot = (workflow: WorkflowJson) => JSON.stringify(workflow);

describe("WAIT_FOR_WEBHOOK", () => {
  it("waits with its callback URL shown; COMPLETED makes the callback output the task output and the workflow continues", async () => {
    await register({ name: "hook_ok", tasks: [hookTask("hook"), httpTask("after", { uri: target("/count/hook-after?order=${hook.output.orderId}"), method: "GET" })] });
    const { workflowId, hook } = await startWaiting("hook_ok");
    expect(hook["callbackUrl"]).toBe(`https://conductor.test/api/tasks/webhook/${workflowId}/hook/${hook.taskId}`);
    expect(hook.inputData).toMatchObject({ workflowId, taskId: hook.taskId, timeoutSeconds: 0 });
    const response = await callback(String(hook["callbackUrl"]), { status: "COMPLETED", output: { orderId: "o-42", paid: true } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ workflowId, taskId: hook.taskId, status: "COMPLETED" });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[0]!.outputData).toEqual({ orderId: "o-42", paid: true });
    expect((done.tasks[1]!.outputData["body"] as JsonObject)["query"]).toEqual({ order: "o-42" });
  });

  it("FAILED fails the task with {error, reason} and the workflow; with retries a new waiting instance gets a new URL", async () => {
    await register({ name: "hook_fail", tasks: [hookTask("hook")] });
    const { workflowId, hook } = await startWaiting("hook_fail");
    const response = await callback(String(hook["callbackUrl"]), { status: "FAILED", output: { error: "CARD_DECLINED", reason: "insufficient funds" } });
    expect(response.status).toBe(200);
    const failed = await waitFor(workflowId, ["FAILED", "COMPLETED"]);
    expect(failed.status).toBe("FAILED");
    expect(failed.tasks[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: "insufficient funds", outputData: { error: "CARD_DECLINED", reason: "insufficient funds" } });

    await register({ name: "hook_fail_retry", tasks: [hookTask("hook", {}, { retryCount: 1 })] });
    const retrying = await startWaiting("hook_fail_retry");
    await callback(String(retrying.hook["callbackUrl"]), { status: "FAILED", output: { error: "E", reason: "try again" } });
    const second = await waitFor(retrying.workflowId, (workflow) => workflow.tasks.length === 2 && workflow.tasks[1]!.status === "IN_PROGRESS");
    expect(second.tasks[1]!["callbackUrl"]).not.toBe(retrying.hook["callbackUrl"]);
    expect((await callback(String(second.tasks[1]!["callbackUrl"]), { status: "COMPLETED", output: {} })).status).toBe(200);
    expect((await waitFor(retrying.workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("refuses in the order a caller can act on (404, 401, 400, 409) and a refused callback changes nothing", async () => {
    await register({ name: "hook_checks", tasks: [hookTask("hook", { headers: { "X-Source": "billing", "X-Token": "t0k3n" } })] });
    const { workflowId, hook } = await startWaiting("hook_checks");
    const url = String(hook["callbackUrl"]);
    const good = { "x-source": "billing", "x-token": "t0k3n" };
    const before = snapshot(await getWorkflow(workflowId));
    const expectRefused = async (response: Response, status: number, error: string) => {
      expect(response.status).toBe(status);
      const body = (await response.json()) as { status: number; error: string; message: string };
      expect(body).toMatchObject({ status, error });
      expect(snapshot(await getWorkflow(workflowId))).toBe(before);
      return body;
    };
    // Unknown ids: 404 even when everything else is wrong too.
    await expectRefused(await callback(url.replace(workflowId, crypto.randomUUID()), "{bad", {}), 404, "NOT_FOUND");
    await expectRefused(await callback(url.replace(hook.taskId, crypto.randomUUID()), "{bad", {}), 404, "NOT_FOUND");
    await expectRefused(await callback(url.replace("/hook/", "/other/"), "{bad", {}), 404, "NOT_FOUND");
    await expectRefused(await callback(url.replace(workflowId, "not-a-uuid"), "{bad", {}), 404, "NOT_FOUND");
    // A callback path the signal route's pattern would take too: the signal route was reached without a caller (500).
    await expectRefused(await callback(new URL("/api/tasks/webhook/COMPLETED/signal/sync", url).toString(), {}, {}), 404, "NOT_FOUND");
    // Headers before the body: the response names the header, never its expected value.
    const missing = await expectRefused(await callback(url, "{bad", { "x-source": "billing" }), 401, "UNAUTHENTICATED");
    expect(missing.message).toContain("X-Token");
    const wrong = await expectRefused(await callback(url, { status: "COMPLETED" }, { ...good, "x-token": "guess" }), 401, "UNAUTHENTICATED");
    expect(wrong.message).toContain("X-Token");
    expect(wrong.message).not.toContain("t0k3n");
    // Then the body.
    await expectRefused(await callback(url, "{not json", good), 400, "VALIDATION_ERROR");
    await expectRefused(await callback(url, { output: {} }, good), 400, "VALIDATION_ERROR");
    await expectRefused(await callback(url, { status: "DONE", output: {} }, good), 400, "VALIDATION_ERROR");
    await expectRefused(await callback(url, { status: "COMPLETED", output: [1] }, good), 400, "VALIDATION_ERROR");
    await expectRefused(await callback(url, { status: "FAILED", output: { reason: 7 } }, good), 400, "VALIDATION_ERROR");
    const deep = await expectRefused(await callback(url, `{"status":"COMPLETED","output":{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`, good), 400, "VALIDATION_ERROR");
    expect((deep as unknown as { validationErrors: unknown }).validationErrors).toEqual([{ path: "output", message: "must not nest objects and arrays deeper than 100 levels" }]);
    const infinite = await expectRefused(await callback(url, '{"status":"COMPLETED","output":{"n":1e309}}', good), 400, "VALIDATION_ERROR");
    expect((infinite as unknown as { validationErrors: unknown }).validationErrors).toEqual([{ path: "output", message: "must hold only finite numbers: 1e309 and the like do not fit in JSON" }]);
    // Within the request limit but too large to store: the task still waits, and the sender is told why (not 409).
    const large = await expectRefused(await callback(url, { status: "COMPLETED", output: { blob: "x".repeat(800 * 1024) } }, good), 413, "PAYLOAD_TOO_LARGE");
    expect(large.message).toMatch(/^The task output is \d+ bytes, over the limit of \d+ bytes \(MAX_PAYLOAD_BYTES\)/);
    // A good one wins; after it, the task is no longer waiting.
    expect((await callback(url, { status: "COMPLETED", output: { ok: 1 } }, good)).status).toBe(200);
    const after = await waitFor(workflowId, ["COMPLETED"]);
    const second = await callback(url, { status: "COMPLETED", output: { ok: 2 } }, good);
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ status: 409, error: "CONFLICT" });
    expect(snapshot(await getWorkflow(workflowId))).toBe(snapshot(after));
  });

  it("a callback body declared as other than JSON (text, a form) is a 415 after the header check and changes nothing; JSON with a charset, +json or no Content-Type is taken", async () => {
    await register({ name: "hook_media", tasks: [hookTask("hook", { headers: { "X-Token": "t0k3n" } }), hookTask("next"), hookTask("last")] });
    const { workflowId, hook } = await startWaiting("hook_media");
    const url = String(hook["callbackUrl"]);
    const body = JSON.stringify({ status: "COMPLETED", output: { ok: 1 } });
    const before = snapshot(await getWorkflow(workflowId));
    // Headers first: an unauthenticated sender is told nothing else.
    expect((await callback(url, body, { "content-type": "text/plain" })).status).toBe(401);
    for (const contentType of ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded"]) {
      const refused = await callback(url, body, { "content-type": contentType, "x-token": "t0k3n" });
      expect(refused.status, contentType).toBe(415);
      expect(await refused.json()).toMatchObject({ status: 415, error: "UNSUPPORTED_MEDIA_TYPE" });
    }
    expect(snapshot(await getWorkflow(workflowId))).toBe(before);
    expect((await callback(url, body, { "content-type": "application/json; charset=utf-8", "x-token": "t0k3n" })).status).toBe(200);
    const next = (await waitFor(workflowId, (workflow) => workflow.tasks[1]?.status === "IN_PROGRESS")).tasks[1]!;
    expect((await callback(String(next["callbackUrl"]), body, { "content-type": "application/vnd.sender+json" })).status).toBe(200);
    const last = (await waitFor(workflowId, (workflow) => workflow.tasks[2]?.status === "IN_PROGRESS")).tasks[2]!;
    const untyped = await SELF.fetch(String(last["callbackUrl"]), { method: "POST", body: new TextEncoder().encode(body) });
    expect(untyped.status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("verifies GitHub-style HMAC-SHA256 signatures over the raw body (hex with prefix, and base64)", async () => {
    await register({ name: "hook_sig", tasks: [hookTask("hook", { signature: { secret: "s3cr3t", header: "X-Hub-Signature-256", prefix: "sha256=" } })] });
    const { workflowId, hook } = await startWaiting("hook_sig");
    const body = JSON.stringify({ status: "COMPLETED", output: { event: "push" } });
    const forged = await callback(String(hook["callbackUrl"]), body, { "x-hub-signature-256": `sha256=${await hmac("wrong", body, "hex")}` });
    expect(forged.status).toBe(401);
    expect((await callback(String(hook["callbackUrl"]), body, {})).status).toBe(401);
    // The signature covers the exact bytes: re-serialised JSON with other spacing does not match.
    const reformatted = await callback(String(hook["callbackUrl"]), JSON.stringify(JSON.parse(body), null, 2), { "x-hub-signature-256": `sha256=${await hmac("s3cr3t", body, "hex")}` });
    expect(reformatted.status).toBe(401);
    const signed = await callback(String(hook["callbackUrl"]), body, { "x-hub-signature-256": `sha256=${await hmac("s3cr3t", body, "hex")}` });
    expect(signed.status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ event: "push" });

    await register({ name: "hook_sig64", tasks: [hookTask("hook", { signature: { secret: "k", header: "X-Signature", encoding: "base64" } })] });
    const other = await startWaiting("hook_sig64");
    expect((await callback(String(other.hook["callbackUrl"]), body, { "x-signature": await hmac("k", body, "base64") })).status).toBe(200);
  });

  it("takes a plain signature header holding several, comma-separated, as PagerDuty signs while a secret is rotated (v1=<hex>,v1=<hex>): one matching is enough, as on the webhooks route", async () => {
    await register({ name: "hook_sig_rotated", tasks: [hookTask("hook", { signature: { secret: "new-secret", header: "X-PagerDuty-Signature", prefix: "v1=" } })] });
    const { workflowId, hook } = await startWaiting("hook_sig_rotated");
    const url = String(hook["callbackUrl"]);
    const body = JSON.stringify({ status: "COMPLETED", output: { incident: "P1" } });
    const byOld = `v1=${await hmac("old-secret", body, "hex")}`;
    const byOther = `v1=${await hmac("other-secret", body, "hex")}`;
    expect((await callback(url, body, { "x-pagerduty-signature": `${byOld},${byOther}` })).status).toBe(401);
    expect((await getWorkflow(workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
    const response = await callback(url, body, { "x-pagerduty-signature": `${byOld}, v1=${await hmac("new-secret", body, "hex")}` });
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ incident: "P1" });
  });

  it("verifies Stripe-style signatures (t=…,v1=… over \"t.body\") and refuses a replayed old one", async () => {
    const refused = await SELF.fetch("https://conductor.test/api/metadata/workflow", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "test-admin:test-secret-0123456789" },
      body: JSON.stringify({ name: "hook_bad_scheme", tasks: [hookTask("hook", { signature: { secret: "s", header: "X", scheme: "github" } })] }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { validationErrors: Array<{ path: string }> }).validationErrors[0]!.path).toBe("tasks[0].inputParameters.signature.scheme");
    await register({ name: "hook_stripe", tasks: [hookTask("hook", { signature: { secret: "whsec_test", header: "Stripe-Signature", scheme: "stripe" } })] });
    const { workflowId, hook } = await startWaiting("hook_stripe");
    const body = JSON.stringify({ status: "COMPLETED", output: { invoice: "in_1" } });
    const sign = async (t: number) => `t=${t},v1=${await hmac("whsec_test", `${t}.${body}`, "hex")}`;
    const now = Math.floor(Date.now() / 1000);
    const url = String(hook["callbackUrl"]);
    expect((await callback(url, body, { "stripe-signature": await sign(now - 3600) })).status).toBe(401);
    expect((await callback(url, body, { "stripe-signature": `t=${now},v1=${await hmac("other", `${now}.${body}`, "hex")}` })).status).toBe(401);
    expect((await callback(url, body, { "stripe-signature": "v1=abc" })).status).toBe(401);
    expect((await getWorkflow(workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
    // Stripe sends several v1 values while a secret is rotated: any one may match.
    const good = await sign(now);
    const response = await callback(url, body, { "stripe-signature": `${good},v1=${"0".repeat(64)}` });
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ invoice: "in_1" });
  });

  it("a header that references an undefined secret cannot be verified: 401, nothing changes", async () => {
    await register({ name: "hook_secret", tasks: [hookTask("hook", { headers: { Authorization: "Bearer ${workflow.secrets.hook_token}" } })] });
    const { workflowId, hook } = await startWaiting("hook_secret");
    expect(hook.inputData["headers"]).toEqual({ Authorization: "Bearer ***" });
    const response = await callback(String(hook["callbackUrl"]), { status: "COMPLETED", output: {} }, { authorization: "Bearer anything" });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { message: string }).message).toContain("hook_token");
    expect((await getWorkflow(workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
  });

  it("a header check of any name, __proto__ included, is enforced: without it a callback is refused (401)", async () => {
    await register({ name: "hook_proto_header", tasks: [hookTask("hook", { headers: JSON.parse('{"__proto__":"let-me-in"}') as JsonObject })] });
    const { workflowId, hook } = await startWaiting("hook_proto_header");
    const url = String(hook["callbackUrl"]);
    const refused = await callback(url, { status: "COMPLETED", output: {} });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { message: string }).message).toContain("__proto__");
    expect((await getWorkflow(workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
    expect((await callback(url, { status: "COMPLETED", output: {} }, JSON.parse('{"__proto__":"let-me-in"}') as Record<string, string>)).status).toBe(200);
  });

  it("a header value or signature secret that resolves to nothing refuses every callback (fails closed): 401, the task keeps waiting", async () => {
    await register({ name: "hook_unset_header", tasks: [hookTask("hook", { headers: { "X-Token": "${workflow.input.token}" } })] });
    const body = { status: "COMPLETED", output: {} };
    for (const input of [{}, { token: null }, { token: "" }] as JsonObject[]) {
      const { workflowId, hook } = await startWaiting("hook_unset_header", input);
      const url = String(hook["callbackUrl"]);
      for (const headers of [{}, { "x-token": "" }, { "x-token": "null" }] as Array<Record<string, string>>) {
        const response = await callback(url, body, headers);
        expect(response.status, `input ${JSON.stringify(input)}, headers ${JSON.stringify(headers)}`).toBe(401);
        expect(((await response.json()) as { message: string }).message).toContain("X-Token");
      }
      expect((await getWorkflow(workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
    }

    await register({ name: "hook_unset_secret", tasks: [hookTask("hook", { signature: { secret: "${workflow.input.key}", header: "X-Signature" } })] });
    for (const input of [{}, { key: "" }] as JsonObject[]) {
      const { workflowId, hook } = await startWaiting("hook_unset_secret", input);
      const text = JSON.stringify(body);
      for (const headers of [{}, { "x-signature": await hmac("null", text, "hex") }] as Array<Record<string, string>>) {
        const response = await callback(String(hook["callbackUrl"]), text, headers);
        expect(response.status, `input ${JSON.stringify(input)}, headers ${JSON.stringify(headers)}`).toBe(401);
        expect(((await response.json()) as { message: string }).message).toContain("signature");
      }
      expect((await getWorkflow(workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
    }
  });

  it("a signature header name that resolves to a non-token fails the task when it starts, with a clear reason", async () => {
    await register({ name: "hook_bad_header_name", tasks: [hookTask("hook", { signature: { secret: "s", header: "${workflow.input.name}" } })] });
    const workflow = await waitFor(await startWorkflow("hook_bad_header_name", { name: "X Signature" }), ["FAILED"]);
    const task = workflow.tasks[0]! as TaskJson & { reasonForIncompletion: string };
    expect(task.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(task.reasonForIncompletion).toMatch(/signature\.header "X Signature" .*must be a token \(RFC 7230/);
  });

  it("a timeoutSeconds that resolves to something other than a whole number of seconds fails the task when it starts, where it waited forever; digits as text still time out", async () => {
    await register({ name: "hook_bad_timeout", tasks: [hookTask("hook", { timeoutSeconds: "${workflow.input.wait}" })] });
    for (const wait of ["soon", -5, 2.5, true]) {
      const workflowId = await startWorkflow("hook_bad_timeout", { wait });
      const workflow = await waitFor(workflowId, (candidate) => candidate.status !== "RUNNING" || candidate.tasks[0]?.status === "IN_PROGRESS");
      const task = workflow.tasks[0]! as TaskJson & { reasonForIncompletion?: string };
      expect([workflow.status, task.status], JSON.stringify(wait)).toEqual(["FAILED", "FAILED_WITH_TERMINAL_ERROR"]);
      expect(task.reasonForIncompletion).toBe(`WAIT_FOR_WEBHOOK timeoutSeconds resolved to ${JSON.stringify(wait)}, not a whole number of seconds of at least 0 (0 waits forever)`);
    }
    const timed = await waitFor(await startWorkflow("hook_bad_timeout", { wait: "1" }), ["FAILED", "COMPLETED"], 5_000);
    expect(timed.tasks[0]!.outputData).toMatchObject({ error: "WEBHOOK_TIMEOUT", details: { timeoutSeconds: 1 } });
  });

  it("of two concurrent callbacks exactly one wins; the other gets 409", async () => {
    await register({ name: "hook_race", tasks: [hookTask("hook", { headers: { "X-Key": "k" } })] });
    const { workflowId, hook } = await startWaiting("hook_race");
    const results = await Promise.all(
      ["a", "b", "c"].map((who) => callback(String(hook["callbackUrl"]), { status: "COMPLETED", output: { who } }, { "x-key": "k" })),
    );
    expect(results.map((response) => response.status).sort()).toEqual([200, 409, 409]);
    const done = await waitFor(workflowId, ["COMPLETED"]);
    expect(["a", "b", "c"]).toContain(done.tasks[0]!.outputData["who"]);
  });

  it("times out with WEBHOOK_TIMEOUT after timeoutSeconds, from the alarm, even after eviction; a late callback gets 409", async () => {
    await register({ name: "hook_timeout", tasks: [hookTask("hook", { timeoutSeconds: 1 })] });
    const { workflowId, hook } = await startWaiting("hook_timeout");
    await abortAllDurableObjects();
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const failed = await waitFor(workflowId, ["FAILED", "COMPLETED"], 5_000);
    expect(failed.status).toBe("FAILED");
    const task = failed.tasks[0]!;
    expect(task.status).toBe("FAILED");
    expect(task.outputData).toMatchObject({ status: "FAILED", error: "WEBHOOK_TIMEOUT", message: "No callback arrived within 1 seconds" });
    const details = task.outputData["details"] as { timeoutSeconds: number; startTime: string; endTime: string };
    expect(details.timeoutSeconds).toBe(1);
    expect(Date.parse(details.endTime) - Date.parse(details.startTime)).toBeGreaterThanOrEqual(1000);
    expect(details.startTime).toBe(new Date(Number(hook["startTime"])).toISOString());
    expect(task["reasonForIncompletion"]).toBe("No callback arrived within 1 seconds");
    expect((await callback(String(hook["callbackUrl"]), { status: "COMPLETED", output: {} })).status).toBe(409);
  });

  it("a webhook task's timeoutSeconds keeps running while its workflow is paused; the workflow fails when resumed", async () => {
    await register({ name: "hook_timeout_paused", tasks: [hookTask("hook", { timeoutSeconds: 1 })] });
    const { workflowId, hook } = await startWaiting("hook_timeout_paused");
    expect((await api("PUT", `/api/workflow/${workflowId}/pause`)).status).toBe(200);
    const paused = await eventually(() => getWorkflow(workflowId), (workflow) => workflow.tasks[0]!.status !== "IN_PROGRESS", "the paused workflow's webhook task timing out");
    expect({ status: paused.status, task: paused.tasks[0]!.status, error: paused.tasks[0]!.outputData["error"] }).toEqual({ status: "PAUSED", task: "FAILED", error: "WEBHOOK_TIMEOUT" });
    expect((await callback(String(hook["callbackUrl"]), { status: "COMPLETED", output: {} })).status).toBe(409);
    expect((await api("PUT", `/api/workflow/${workflowId}/resume`)).status).toBe(200);
    expect((await waitFor(workflowId, ["FAILED", "COMPLETED"])).status).toBe("FAILED");
  });

  it("a callback arriving after timeoutSeconds is refused (409) and the task times out, even when the alarm is late", async () => {
    await register({ name: "hook_late_alarm", tasks: [hookTask("hook", { timeoutSeconds: 1 })] });
    const { workflowId, hook } = await startWaiting("hook_late_alarm");
    // Alarms fire at or after their time: make this one 30 s late, then call back after the task's deadline.
    const stub = env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(workflowId));
    await runInDurableObject(stub, (_instance, state) => state.storage.setAlarm(Date.now() + 30_000));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(hook["startTime"]) + 1_000 - Date.now()) + 100));
    const response = await callback(String(hook["callbackUrl"]), { status: "COMPLETED", output: { late: true } });
    const message = ((await response.json()) as { message: string }).message;
    const after = await getWorkflow(workflowId);
    expect({ callback: response.status, message, status: after.status, task: after.tasks[0]!.status, error: after.tasks[0]!.outputData["error"] }).toEqual({
      callback: 409,
      message: "Task hook is no longer waiting: its status is FAILED",
      status: "FAILED",
      task: "FAILED",
      error: "WEBHOOK_TIMEOUT",
    });
  });

  it("arms the object's alarm for the timeout, and the alarm handler times the task out", async () => {
    await register({ name: "hook_alarm", tasks: [hookTask("hook", { timeoutSeconds: 2 })] });
    const { workflowId, hook } = await startWaiting("hook_alarm");
    const stub = env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(workflowId));
    const alarmAt = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(alarmAt).toBe(Number(hook["startTime"]) + 2000);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, alarmAt! - Date.now()) + 20));
    // Run the alarm now (it may already have run by itself: then there is none left to run).
    await runDurableObjectAlarm(stub);
    const failed = await waitFor(workflowId, ["FAILED"], 3_000);
    expect(failed.tasks[0]!.outputData["error"]).toBe("WEBHOOK_TIMEOUT");
    // Once its final search row is written, a finished execution owes nothing and its alarm goes.
    await waitForIndexRow(workflowId, "FAILED");
    const alarm = () => runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(await eventually(alarm, (at) => at === null, "the alarm being cleared", 2_000)).toBeNull();
  });

  it("a paused workflow records the callback but schedules nothing until resumed; the completion API also completes a waiting task", async () => {
    await register({ name: "hook_paused", tasks: [hookTask("hook"), httpTask("after", { uri: target("/count/hook-paused-after"), method: "GET" })] });
    const { workflowId, hook } = await startWaiting("hook_paused");
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
    expect((await callback(String(hook["callbackUrl"]), { status: "COMPLETED", output: { x: 1 } })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const paused = await getWorkflow(workflowId);
    expect(paused.status).toBe("PAUSED");
    expect(paused.tasks.map((task) => task.status)).toEqual(["COMPLETED"]);
    expect(await hits("hook-paused-after")).toBe(0);
    await apiOk("PUT", `/api/workflow/${workflowId}/resume`);
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks).toHaveLength(2);

    const other = await startWaiting("hook_paused");
    expect(await apiOk<string>("POST", `/api/tasks/${other.workflowId}/hook/COMPLETED`, { via: "api" })).toBe(other.hook.taskId);
    expect((await waitFor(other.workflowId, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ via: "api" });
  });

  it("the Workflow JSON's updateTime moves when a task changes, not only on workflow-level changes (as Conductor's)", async () => {
    await register({ name: "hook_update_time", tasks: [hookTask("first"), hookTask("second")] });
    const { workflowId } = await startWaiting("hook_update_time");
    const started = await getWorkflow(workflowId);
    // The clock must move past the start for the completion to be told apart from it.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/first/COMPLETED`, {});
    const moved = await waitFor(workflowId, (candidate) => candidate.tasks[1]?.status === "IN_PROGRESS");
    expect(moved.status).toBe("RUNNING");
    const latestTask = Math.max(...moved.tasks.map((task) => Number(task["updateTime"])));
    expect(latestTask).toBeGreaterThan(Number(started["updateTime"]));
    expect(moved["updateTime"]).toBe(latestTask);
    // Without tasks in the answer, the same time.
    const summary = await apiOk<JsonObject>("GET", `/api/workflow/${workflowId}?includeTasks=false`);
    expect(summary["updateTime"]).toBe(latestTask);
  });
});

describe("skipping a waiting WAIT_FOR_WEBHOOK task (PUT /api/workflow/{id}/skiptask/{ref})", () => {
  it("the task becomes SKIPPED with the given output, its timeout no longer counts, the workflow moves on, and a late callback is refused as for a finished task", async () => {
    await register({ name: "hook_skip", tasks: [hookTask("hook", { timeoutSeconds: 3600 }), httpTask("after", { uri: target("/count/hook-skip-after?note=${hook.output.note}"), method: "GET" })] });
    const { workflowId, hook } = await startWaiting("hook_skip");
    expect((await api("PUT", `/api/workflow/${workflowId}/skiptask/hook`, { taskOutput: { note: "skipped" } })).status).toBe(200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[0]).toMatchObject({ taskId: hook.taskId, status: "SKIPPED", outputData: { note: "skipped" } });
    expect((done.tasks[1]!.outputData["body"] as JsonObject)["query"]).toEqual({ note: "skipped" });
    expect(await hits("hook-skip-after")).toBe(1);

    const late = await callback(String(hook["callbackUrl"]), { status: "COMPLETED", output: { note: "too late" } });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ status: 409, error: "CONFLICT", message: expect.stringContaining("SKIPPED") });
    expect((await api("POST", `/api/tasks/${workflowId}/hook/COMPLETED`, { note: "too late" })).status).toBe(409);
    expect(snapshot(await getWorkflow(workflowId))).toBe(snapshot(done));
  });
});
