import { SELF, abortAllDurableObjects, createExecutionContext, env, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { clientNetwork, throttledCredentialCheck } from "../../src/worker/auth/throttle";
import { ApiError } from "../../src/worker/http/errors";
import { LATEST_ALARM_MILLIS } from "../../src/worker/alarm-limit";
import worker from "../../src/worker/index";
import { ADMIN_KEY, apiOk, getWorkflow, register, rowCount, startWorkflow, waitFor } from "./helpers";

/** AUTH_FAILURES_PER_KEY and CALLBACKS_PER_TASK of the test Worker (vitest.config.ts). */
const FAILURES_PER_KEY = 5;
const CALLBACKS_PER_TASK = 20;

const [adminKeyId, adminSecret] = ADMIN_KEY.split(":") as [string, string];
/** A client address of its own per test (CF-Connecting-IP), so limits reached here touch no other test. */
let addressCounter = 0;
const freshAddress = () => `198.51.100.${++addressCounter}`;

function token(address: string, keyId: string, keySecret: string): Promise<Response> {
  return SELF.fetch("https://conductor.test/api/token", {
    method: "POST",
    headers: { "content-type": "application/json", "cf-connecting-ip": address },
    body: JSON.stringify({ keyId, keySecret }),
  });
}

describe("brute-force limits on API key checks", () => {
  it("after too many wrong secrets from one address, even the right one is refused with 429 and Retry-After", async () => {
    const address = freshAddress();
    // A success first: the in-isolate "recently valid" entry it leaves must not outlive the failures that follow.
    expect((await token(address, adminKeyId, adminSecret)).status).toBe(200);
    const tokensBefore = await rowCount("refresh_tokens");
    const statuses: number[] = [];
    for (let attempt = 1; attempt <= FAILURES_PER_KEY; attempt++) statuses.push((await token(address, adminKeyId, `guess-${attempt}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429]);

    const right = await token(address, adminKeyId, adminSecret);
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await right.json()).toMatchObject({ status: 429, error: "RATE_LIMITED", retryable: true });
    // Used directly as X-API-Key from that address: refused the same way, and nothing was issued meanwhile.
    const direct = await SELF.fetch("https://conductor.test/api/metadata/workflow", { headers: { "x-api-key": ADMIN_KEY, "cf-connecting-ip": address } });
    expect(direct.status).toBe(429);
    expect(await rowCount("refresh_tokens")).toBe(tokensBefore);

    // Another address is not affected: the legitimate owner is not locked out by someone else's guessing.
    expect((await token(freshAddress(), adminKeyId, adminSecret)).status).toBe(200);
  });

  it("keeps the lockout when the limiter object is evicted (the log is persisted)", async () => {
    const address = freshAddress();
    for (let attempt = 1; attempt <= FAILURES_PER_KEY; attempt++) await token(address, adminKeyId, `guess-${attempt}`);
    await abortAllDurableObjects();
    expect((await token(address, adminKeyId, adminSecret)).status).toBe(429);
  });

  it("counts an IPv6 client by its /64 (however the address is written) and an IPv4-mapped one as IPv4", async () => {
    const statuses: number[] = [];
    for (let attempt = 1; attempt <= FAILURES_PER_KEY; attempt++) statuses.push((await token(`2001:db8:3b:1::${attempt.toString(16)}`, adminKeyId, `guess-${attempt}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    // Other addresses of the same /64, in other spellings: still locked out, the right secret too.
    for (const sameNetwork of ["2001:db8:3b:1:ffff:ffff:ffff:fffe", "2001:0DB8:003B:0001:0:0:0:9", "2001:db8:3b:1::10.0.0.1"]) {
      expect((await token(sameNetwork, adminKeyId, adminSecret)).status, sameNetwork).toBe(429);
    }
    // The next /64 is another client.
    expect((await token("2001:db8:3b:2::1", adminKeyId, adminSecret)).status).toBe(200);

    const v4 = freshAddress();
    for (let attempt = 1; attempt <= FAILURES_PER_KEY; attempt++) await token(v4, adminKeyId, `guess-${attempt}`);
    expect((await token(`::ffff:${v4}`, adminKeyId, adminSecret)).status).toBe(429);
    expect((await token(`::FFFF:${v4}`, adminKeyId, adminSecret)).status).toBe(429);
    expect((await token(freshAddress(), adminKeyId, adminSecret)).status).toBe(200);
  });

  it("reads client addresses as networks: IPv6 to its /64 with :: expanded, IPv4 and IPv4-mapped as the IPv4 address", () => {
    expect(clientNetwork("198.51.100.7")).toBe("198.51.100.7");
    expect(clientNetwork("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(clientNetwork("0:0:0:0:0:ffff:c633:6407")).toBe("198.51.100.7");
    expect(clientNetwork("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(clientNetwork("2001:DB8:0:0:1::")).toBe("2001:db8:0:0::/64");
    expect(clientNetwork("::1")).toBe("0:0:0:0::/64");
    expect(clientNetwork("::")).toBe("0:0:0:0::/64");
    expect(clientNetwork("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(clientNetwork("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    // Not an address (only local runs lack CF-Connecting-IP): kept as given.
    expect(clientNetwork("unknown")).toBe("unknown");
    expect(clientNetwork("1::2::3")).toBe("1::2::3");
  });

  it("limits an address spraying many key ids, and lets the right key through below the limit", async () => {
    const limits = { perKeyAndAddress: { limit: 100, windowMs: 60_000 }, perAddress: { limit: 3, windowMs: 60_000 } };
    const address = freshAddress();
    const attempt = (keyId: string, valid: boolean) =>
      throttledCredentialCheck(env, { keyId, keySecret: "s", address }, async () => (valid ? "someone" : undefined), limits).then(
        (userId) => userId,
        (error: unknown) => (error instanceof ApiError ? error.status : error),
      );
    expect(await attempt("k-0", true)).toBe("someone");
    expect([await attempt("k-1", false), await attempt("k-2", false), await attempt("k-3", false)]).toEqual([401, 401, 429]);
    expect(await attempt("k-4", true)).toBe(429);
  });
});

describe("the limiter objects of past failures", () => {
  const limiter = (name: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
  const storedKeys = (stub: DurableObjectStub) => runInDurableObject(stub, async (_instance, state) => [...(await state.storage.list()).keys()]);

  it("arm an alarm with each failure, and one run before the window has passed keeps the lockout", async () => {
    const address = freshAddress();
    for (let attempt = 1; attempt <= FAILURES_PER_KEY; attempt++) await token(address, adminKeyId, `guess-${attempt}`);
    for (const stub of [limiter(`credential:${adminKeyId}@${address}`), limiter(`address:${address}`)]) {
      expect(await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm())).not.toBeNull();
      expect(await runDurableObjectAlarm(stub)).toBe(true);
      expect(await storedKeys(stub)).toEqual(["events", "forgetAt"]);
      expect(await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm())).not.toBeNull();
    }
    expect((await token(address, adminKeyId, adminSecret)).status).toBe(429);
  });

  it("keep a window reaching past 2189 (AUTH_FAILURE_WINDOW_SECONDS meant as for good) under the latest alarm there is: a wrong secret is a 401, then a 429, not a 500", async () => {
    // About 317 years: setAlarm refuses a date after 2189, which made every failed check a 500 and locked nobody out.
    const forGood = { ...env, AUTH_FAILURE_WINDOW_SECONDS: "9999999999" } as unknown as Env;
    const address = freshAddress();
    const tokenWith = async (keySecret: string) => {
      const ctx = createExecutionContext();
      const request = new Request("https://conductor.test/api/token", { method: "POST", headers: { "content-type": "application/json", "cf-connecting-ip": address }, body: JSON.stringify({ keyId: adminKeyId, keySecret }) });
      const response = await worker.fetch(request as Parameters<typeof worker.fetch>[0], forGood, ctx);
      await waitOnExecutionContext(ctx);
      return response;
    };
    const statuses: number[] = [];
    for (let attempt = 1; attempt <= FAILURES_PER_KEY; attempt++) statuses.push((await tokenWith(`guess-${attempt}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    expect((await tokenWith(adminSecret)).status).toBe(429);
    const stub = limiter(`credential:${adminKeyId}@${address}`);
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm())).toBe(LATEST_ALARM_MILLIS);
    // Woken by that alarm (run early here), the window is still open: the lockout and the alarm are kept.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await storedKeys(stub)).toEqual(["events", "forgetAt"]);
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm())).toBe(LATEST_ALARM_MILLIS);
  });

  it("empty their storage once the window of the latest failure has passed", async () => {
    const stub = limiter(`address:${freshAddress()}`);
    const rule = { limit: 1, windowMs: 5 };
    expect((await stub.recordFailure(rule)).limited).toBe(true);
    // Until the failure has left the window (bounded: it is 5 ms), which is when its alarm is due.
    for (let wait = 0; wait < 100 && (await stub.check(rule)).limited; wait++) await scheduler.wait(5);
    expect((await stub.check(rule)).limited).toBe(false);
    // Its alarm is due: run now unless it has run already.
    await runDurableObjectAlarm(stub);
    expect(await storedKeys(stub)).toEqual([]);
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm())).toBeNull();
    expect((await stub.check(rule)).limited).toBe(false);
    // A failure after it is counted afresh, and kept: under a window of a minute, which no alarm ends while this reads
    // (under the 5 ms one, its own alarm emptied the storage first whenever a loaded machine took 5 ms to read it).
    expect((await stub.recordFailure({ limit: 1, windowMs: 60_000 })).limited).toBe(true);
    expect(await storedKeys(stub)).toEqual(["events", "forgetAt"]);
  });
});

describe("callback limits", () => {
  it("refuses callbacks beyond the limit per task with 429, changing nothing, while other tasks are unaffected", async () => {
    await register({ name: "hook_limited", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: { headers: { "X-Token": "t0k3n" } } }] });
    const waiting = async () => {
      const workflowId = await startWorkflow("hook_limited");
      const workflow = await waitFor(workflowId, (candidate) => candidate.tasks[0]?.status === "IN_PROGRESS");
      return { workflowId, url: String((workflow.tasks[0] as JsonObject)["callbackUrl"]) };
    };
    const post = (url: string, token: string) =>
      SELF.fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-token": token }, body: JSON.stringify({ status: "COMPLETED", output: { paid: true } }) });

    const limited = await waiting();
    const statuses: number[] = [];
    // The task accepts CALLBACKS_PER_TASK callbacks (each refused here on its wrong token); the next is a 429.
    for (let guess = 1; guess <= CALLBACKS_PER_TASK + 1; guess++) statuses.push((await post(limited.url, `guess-${guess}`)).status);
    expect(statuses.slice(0, -1)).toEqual(new Array<number>(CALLBACKS_PER_TASK).fill(401));
    expect(statuses.at(-1)).toBe(429);
    const before = JSON.stringify(await getWorkflow(limited.workflowId));
    const right = await post(limited.url, "t0k3n");
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await right.json()).toMatchObject({ status: 429, error: "RATE_LIMITED", retryable: true });
    expect(JSON.stringify(await getWorkflow(limited.workflowId))).toBe(before);

    const other = await waiting();
    expect((await post(other.url, "t0k3n")).status).toBe(200);
    expect((await apiOk<JsonObject>("GET", `/api/workflow/${other.workflowId}`))["status"]).toBe("COMPLETED");
  });
});
