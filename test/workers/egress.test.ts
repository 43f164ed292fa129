import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { dispatchHttp } from "../../src/actors/dispatch/http";
import { DEFAULT_ENGINE_CONFIG } from "../../src/engine/config";
import type { JsonObject, TaskExecution } from "../../src/engine/model";
import { parseEgressPolicy } from "../../src/engine/tasks/http/egress";
import { hits, httpTask, register, startWorkflow, target, waitFor, type TaskJson } from "./helpers";

/** The target server's port: "localhost" reaches it too, and EGRESS_DENY (vitest.config.ts) lists localhost. */
const port = new URL(env.TARGET_URL).port;
const viaLocalhost = (path: string) => `http://localhost:${port}${path}`;

/** Runs a one-task workflow and returns its finished HTTP task. */
async function runOne(name: string, http: JsonObject): Promise<TaskJson> {
  await register({ name, tasks: [httpTask("call", { http_request: http })] });
  const workflow = await waitFor(await startWorkflow(name), ["COMPLETED", "FAILED"]);
  return workflow.tasks[0]!;
}

describe("egress policy of HTTP tasks", () => {
  it("refuses a denied host before any request is sent, failing the task for good", async () => {
    const task = await runOne("egress_denied", { uri: viaLocalhost("/count/egress-denied"), method: "GET" });
    expect(task.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(task["reasonForIncompletion"]).toBe("egress denied: localhost matches localhost in EGRESS_DENY");
    expect(await hits("egress-denied")).toBe(0);
  });

  it("checks every redirect: a hop to a denied host fails the task and is never called", async () => {
    // The task encodes query values itself (encode: true), so the target URL goes in as it is.
    const task = await runOne("egress_redirect_denied", { uri: target(`/redirect?to=${viaLocalhost("/count/egress-hop")}`), method: "GET" });
    expect(task.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(String(task["reasonForIncompletion"])).toMatch(/^egress denied: localhost matches localhost in EGRESS_DENY \(redirected there from http:\/\/127\.0\.0\.1:\d+\/redirect/);
    expect(await hits("egress-hop")).toBe(0);
  });

  it("follows allowed redirects as fetch would: 302 after POST becomes GET, 307 keeps the method and body", async () => {
    const afterFound = await runOne("egress_redirect_302", { uri: target(`/redirect?status=302&to=${target("/echo")}`), method: "POST", body: { a: 1 } });
    expect(afterFound.status).toBe("COMPLETED");
    expect(afterFound.outputData["response"]).toMatchObject({ statusCode: 200, body: { method: "GET", body: "" } });
    const afterTemporary = await runOne("egress_redirect_307", { uri: target(`/redirect?status=307&to=${target("/echo")}`), method: "POST", body: { a: 1 } });
    expect(afterTemporary.status).toBe("COMPLETED");
    expect(afterTemporary.outputData["response"]).toMatchObject({ statusCode: 200, body: { method: "POST", body: JSON.stringify({ a: 1 }) } });
  });

  it("gives up on a redirect loop", async () => {
    const task = await runOne("egress_redirect_loop", { uri: target("/redirect"), method: "GET" });
    expect(task.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(task["reasonForIncompletion"]).toMatch(/redirected more than 10 times/);
  });

  describe("the dispatcher with other policies (real requests to the target server)", () => {
    const task = { taskId: crypto.randomUUID(), attempt: 1 } as TaskExecution;
    const dispatch = (uri: string, egress: Parameters<typeof dispatchHttp>[2]["egress"]) =>
      dispatchHttp({ ...task, inputData: { uri, method: "GET" } }, { uri, method: "GET" }, { engine: DEFAULT_ENGINE_CONFIG, maxResponseBytes: 1 << 20, asyncComplete: false, cancel: new AbortController().signal, egress });

    it("an allow list admits only what it names; private addresses are denied by default", async () => {
      const onlyPartner = parseEgressPolicy({ allow: "*.partner.example", allowPrivate: true });
      expect(await dispatch(target("/count/egress-allow"), onlyPartner)).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: "egress denied: 127.0.0.1 is not in EGRESS_ALLOW" });
      const production = parseEgressPolicy({ allowPrivate: false });
      expect(await dispatch(target("/count/egress-allow"), production)).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: "egress denied: 127.0.0.1 is in the non-public range 127.0.0.0/8 (EGRESS_ALLOW_PRIVATE is off)" });
      expect(await hits("egress-allow")).toBe(0);
      const explicit = parseEgressPolicy({ allow: "127.0.0.1", allowPrivate: false });
      expect(await dispatch(target("/count/egress-allow"), explicit)).toMatchObject({ status: "COMPLETED" });
      expect(await hits("egress-allow")).toBe(1);
    });

    it("a redirect to another origin carries no Authorization, Cookie or Proxy-Authorization, also when the runtime could follow it (everything admitted)", async () => {
      const headers = { Authorization: "Bearer s3cr3t", Cookie: "session=s3cr3t", "Proxy-Authorization": "Basic s3cr3t", "X-Trace": "kept" };
      const uri = target(`/redirect?to=${viaLocalhost("/echo/cross-origin")}`);
      for (const egress of [parseEgressPolicy({ allowPrivate: true }), parseEgressPolicy({ allowPrivate: true, deny: "192.0.2.0/24" })]) {
        const result = await dispatchHttp({ ...task, inputData: { uri, method: "GET", headers } }, { uri, method: "GET", headers }, { engine: DEFAULT_ENGINE_CONFIG, maxResponseBytes: 1 << 20, asyncComplete: false, cancel: new AbortController().signal, egress });
        expect(result.status).toBe("COMPLETED");
        const echoed = ((result.output["response"] as JsonObject)["body"] as { path: string; headers: Record<string, string> });
        expect(echoed.path).toBe("/echo/cross-origin");
        expect(echoed.headers).toMatchObject({ "x-trace": "kept" });
        expect(Object.keys(echoed.headers)).not.toEqual(expect.arrayContaining(["authorization"]));
        expect(Object.keys(echoed.headers)).not.toEqual(expect.arrayContaining(["cookie"]));
        expect(Object.keys(echoed.headers)).not.toEqual(expect.arrayContaining(["proxy-authorization"]));
      }
    });

    it("a redirect that turns a POST into a GET drops the body's headers (Content-Type, -Encoding, -Language, -Location), also when the runtime could follow it", async () => {
      const headers = { "Content-Encoding": "identity", "Content-Language": "en", "Content-Location": "/drafts/1", "X-Trace": "kept" };
      const send = (status: number, egress: ReturnType<typeof parseEgressPolicy>) => {
        const uri = target(`/redirect?status=${status}&to=${target("/echo/after-redirect")}`);
        const input = { uri, method: "POST", body: { a: 1 }, headers };
        return dispatchHttp({ ...task, inputData: input }, input, { engine: DEFAULT_ENGINE_CONFIG, maxResponseBytes: 1 << 20, asyncComplete: false, cancel: new AbortController().signal, egress });
      };
      const bodyHeaders = ["content-type", "content-encoding", "content-language", "content-location"];
      for (const egress of [parseEgressPolicy({ allowPrivate: true }), parseEgressPolicy({ allowPrivate: true, deny: "192.0.2.0/24" })]) {
        for (const status of [303, 302]) {
          const echoed = ((await send(status, egress)).output["response"] as JsonObject)["body"] as { method: string; body: string; headers: Record<string, string> };
          expect(echoed).toMatchObject({ method: "GET", body: "", headers: { "x-trace": "kept" } });
          expect(Object.keys(echoed.headers).filter((name) => bodyHeaders.includes(name)), `${status}`).toEqual([]);
        }
        // 307 keeps the method, the body and what describes it.
        const kept = ((await send(307, egress)).output["response"] as JsonObject)["body"] as { method: string; headers: Record<string, string> };
        expect(kept).toMatchObject({ method: "POST", headers: { "content-type": "application/json", "content-language": "en", "content-location": "/drafts/1" } });
      }
    });

    it("a misconfigured policy fails the task with the configuration problem", async () => {
      expect(await dispatch(target("/count/egress-misconfigured"), { error: '"10.0.0.0/33": the prefix length must be 0 to 32' })).toMatchObject({
        status: "FAILED_WITH_TERMINAL_ERROR",
        reason: 'The egress policy is misconfigured: "10.0.0.0/33": the prefix length must be 0 to 32',
      });
      expect(await hits("egress-misconfigured")).toBe(0);
    });
  });
});
