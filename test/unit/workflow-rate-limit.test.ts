import { describe, expect, it, vi } from "vitest";
import { createExecution, nextDeadline, type NewExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import type { JsonValue, RateLimitConfig, WorkflowDef, WorkflowExecution } from "../../src/engine/model";
import { limitChanges, rateLimitKeyOf, registeredLimits } from "../../src/engine/rate-limit";
import { toWorkflowView } from "../../src/engine/view";
import { attemptEnds, env, httpGet, latestNamed, refusal } from "./engine-env";

function limited(config: RateLimitConfig | undefined, extra: Partial<WorkflowDef> = {}): WorkflowDef {
  const definition: WorkflowDef = { name: "orders", version: 1, schemaVersion: 2, tasks: [httpGet("a"), httpGet("b")], ...extra };
  if (config !== undefined) definition.rateLimitConfig = config;
  return definition;
}

function started(definition: WorkflowDef, extra: Partial<NewExecution> = {}, now = 1_000): WorkflowExecution {
  return decide(createExecution({ workflowId: "wf-1", definition, input: { tenant: "acme" }, correlationId: "c-1", ...extra }, now), { type: "start" }, env(now)).state;
}

describe("workflow rate limits in the definition", () => {
  it("keeps rateLimitConfig with a limit of at least 1, and drops it without one", () => {
    const kept = validateWorkflowDef({ ...limited(undefined), rateLimitConfig: { rateLimitKey: " ${workflow.correlationId} ", concurrentExecLimit: 3 } });
    expect(kept.ok && kept.value.rateLimitConfig).toEqual({ rateLimitKey: "${workflow.correlationId}", concurrentExecLimit: 3 });
    const unkeyed = validateWorkflowDef({ ...limited(undefined), rateLimitConfig: { rateLimitKey: null, concurrentExecLimit: 1 } });
    expect(unkeyed.ok && unkeyed.value.rateLimitConfig).toEqual({ concurrentExecLimit: 1 });
    for (const none of [null, {}, { rateLimitKey: "k", concurrentExecLimit: 0 }, { rateLimitKey: "k" }]) {
      const result = validateWorkflowDef({ ...limited(undefined), rateLimitConfig: none });
      expect(result.ok && "rateLimitConfig" in result.value).toBe(false);
    }
  });

  it("refuses a config that is not one, a bad limit, a bad template and a secret in the key, each at its path", () => {
    const errors = (rateLimitConfig: unknown) => {
      const result = validateWorkflowDef({ ...limited(undefined), rateLimitConfig });
      return result.ok ? [] : result.errors.map((issue) => `${issue.path}: ${issue.message}`);
    };
    expect(errors(5)).toEqual([expect.stringMatching(/^rateLimitConfig: rateLimitConfig must be Orkes' workflow rate limit/)]);
    expect(errors({ concurrentExecLimit: -1 })).toEqual([expect.stringMatching(/^rateLimitConfig.concurrentExecLimit: concurrentExecLimit must be an integer from 0/)]);
    expect(errors({ concurrentExecLimit: 1.5 })).toHaveLength(1);
    expect(errors({ concurrentExecLimit: 1, rateLimitKey: 7 })).toEqual([expect.stringMatching(/^rateLimitConfig.rateLimitKey: rateLimitKey must be a string/)]);
    expect(errors({ concurrentExecLimit: 1, rateLimitKey: "x".repeat(256) })).toHaveLength(1);
    expect(errors({ concurrentExecLimit: 1, rateLimitKey: "${workflow.input" })).toEqual([expect.stringMatching(/^rateLimitConfig.rateLimitKey: /)]);
    expect(errors({ concurrentExecLimit: 1, rateLimitKey: "${workflow.secrets.token}" })).toEqual([expect.stringMatching(/rateLimitKey must not use secrets \(token\)/)]);
  });

  it("resolves the key against the execution, falling back to the workflow's name", () => {
    const state = started(limited(undefined));
    const keyOf = (declared: string | undefined) => rateLimitKeyOf(state, declared, env(2_000));
    expect(keyOf(undefined)).toBe("orders");
    expect(keyOf("payments")).toBe("payments");
    expect(keyOf("${workflow.correlationId}")).toBe("c-1");
    expect(keyOf("tenant-${workflow.input.tenant}")).toBe("tenant-acme");
    expect(keyOf("${workflow.input}")).toBe('{"tenant":"acme"}');
    expect(keyOf("${workflow.input.missing}")).toBe("orders");
    expect(rateLimitKeyOf({ ...state, correlationId: undefined }, "${workflow.correlationId}", env(2_000))).toBe("orders");
  });

  it("falls back to the workflow's name for a key resolving to a value over MAX_PAYLOAD_BYTES, without writing it out", () => {
    // 100 levels over 10,000 numbers (some 50 KB): `..*` selects every level, some 5 MB as JSON, over MAX_PAYLOAD_BYTES.
    let chain: JsonValue = Array.from({ length: 10_000 }, (_, index) => index % 10);
    for (let level = 0; level < 99; level++) chain = { next: chain };
    const state = started(limited(undefined), { input: { chain } });
    let key: string | undefined;
    const stringify = vi.spyOn(JSON, "stringify");
    let written: number[] = [];
    try {
      key = rateLimitKeyOf(state, "${workflow.input.chain..*}", env(2_000));
      written = stringify.mock.results.map((result) => (typeof result.value === "string" ? result.value.length : 0));
    } finally {
      stringify.mockRestore();
    }
    expect(Math.max(0, ...written)).toBeLessThan(1_000_000);
    expect(key).toBe("orders");
  });
});

describe("an execution under a rate limit", () => {
  it("starts waiting, schedules nothing and sets no timer for it, and runs once admitted", () => {
    const waiting = started(limited({ rateLimitKey: "${workflow.input.tenant}", concurrentExecLimit: 1 }));
    expect(waiting).toMatchObject({ status: "RUNNING", rateLimited: true, rateLimitKey: "acme", tasks: [] });
    expect(nextDeadline(waiting)).toBeUndefined();
    expect(toWorkflowView(waiting, true)).toMatchObject({ rateLimitKey: "acme", rateLimited: true });

    const admitted = decide(waiting, { type: "admitted" }, env(2_000));
    expect(admitted.state.rateLimited).toBeUndefined();
    expect(admitted.state.tasks.map((task) => task.referenceTaskName)).toEqual(["a"]);
    expect(admitted.effects).toEqual([{ kind: "dispatch", taskId: latestNamed(admitted.state, "a").taskId, attempt: 1 }]);
    expect(toWorkflowView(admitted.state, false)).toMatchObject({ rateLimitKey: "acme", rateLimited: false });
    // A second admission (the limit repeating itself after an eviction) changes nothing.
    expect(decide(admitted.state, { type: "admitted" }, env(3_000)).state).toBe(admitted.state);
  });

  it("is not limited without a config, nor in a test run", () => {
    const plain = started(limited(undefined));
    expect(plain.tasks).toHaveLength(1);
    expect(toWorkflowView(plain, false)).not.toHaveProperty("rateLimited");
    const test = started(limited({ concurrentExecLimit: 1 }), { test: { taskMocks: [], subWorkflows: [] } });
    expect(test.rateLimited).toBeUndefined();
    expect(test.tasks).toHaveLength(1);
  });

  it("still times out and can be terminated while it waits, and ends no longer waiting", () => {
    const waiting = started(limited({ concurrentExecLimit: 1 }, { timeoutSeconds: 10 }));
    expect(nextDeadline(waiting)).toBe(11_000);
    const timedOut = decide(waiting, { type: "tick", liveTaskIds: new Set() }, env(11_000)).state;
    expect(timedOut).toMatchObject({ status: "TIMED_OUT" });
    expect(timedOut.rateLimited).toBeUndefined();
    const terminated = decide(waiting, { type: "terminate", reason: "no longer needed" }, env(2_000)).state;
    expect(terminated.status).toBe("TERMINATED");
    expect(terminated.rateLimited).toBeUndefined();
    // Admitted after it ended (the limit's notice crossed its end): nothing happens.
    expect(decide(terminated, { type: "admitted" }, env(3_000)).state).toBe(terminated);
  });

  it("ended while it waited (no task scheduled), it refuses a retry, as Conductor's retry refuses a workflow not started yet; a restart or rerun runs it", () => {
    const waiting = started(limited({ concurrentExecLimit: 1 }, { timeoutSeconds: 10 }));
    const ended = [decide(waiting, { type: "terminate", reason: "no longer needed" }, env(2_000)).state, decide(waiting, { type: "tick", liveTaskIds: new Set() }, env(11_000)).state];
    expect(ended.map((state) => state.status)).toEqual(["TERMINATED", "TIMED_OUT"]);
    for (const state of ended) {
      const refused = refusal(state, { type: "retry" }, 20_000);
      expect(refused.kind).toBe("CONFLICT");
      expect(refused.message).toMatch(/has not started yet.*restart it/);
      expect(decide(state, { type: "restart" }, env(20_000)).state).toMatchObject({ status: "RUNNING", rateLimited: true, tasks: [] });
      expect(decide(state, { type: "rerun" }, env(20_000)).state).toMatchObject({ status: "RUNNING", rateLimited: true, tasks: [] });
    }
  });

  it("paused while waiting, it is admitted but runs only once resumed", () => {
    const paused = decide(started(limited({ concurrentExecLimit: 1 })), { type: "pause" }, env(1_500)).state;
    const admitted = decide(paused, { type: "admitted" }, env(2_000)).state;
    expect(admitted).toMatchObject({ status: "PAUSED", tasks: [] });
    expect(decide(admitted, { type: "resume" }, env(3_000)).state.tasks).toHaveLength(1);
  });

  it("waits again when reopened, under the key its new input gives, keeping the retried task unstarted", () => {
    const running = decide(started(limited({ rateLimitKey: "${workflow.input.tenant}", concurrentExecLimit: 1 })), { type: "admitted" }, env(1_500)).state;
    const failed = attemptEnds(running, "a", 2_000, "FAILED").state;
    expect(failed).toMatchObject({ status: "FAILED", rateLimitKey: "acme" });

    const retried = decide(failed, { type: "retry" }, env(3_000)).state;
    expect(retried).toMatchObject({ status: "RUNNING", rateLimited: true, rateLimitKey: "acme" });
    const retry = latestNamed(retried, "a");
    expect(retry).toMatchObject({ status: "SCHEDULED", retryCount: 1 });
    // Its scheduled retry sets no timer while it waits: the limit's admission starts it.
    expect(nextDeadline(retried)).toBeUndefined();
    expect(decide(retried, { type: "admitted" }, env(4_000)).effects).toEqual([{ kind: "dispatch", taskId: retry.taskId, attempt: 1 }]);

    const rerun = decide(failed, { type: "rerun", workflowInput: { tenant: "globex" } }, env(3_000)).state;
    expect(rerun).toMatchObject({ rateLimited: true, rateLimitKey: "globex", tasks: [] });
    const restarted = decide(failed, { type: "restart", definition: limited(undefined) }, env(3_000)).state;
    expect(restarted.rateLimited).toBeUndefined();
    expect(restarted.rateLimitKey).toBeUndefined();
    expect(restarted.tasks).toHaveLength(1);
  });

  it("refuses what a waiting execution cannot do as any running one", () => {
    const waiting = started(limited({ concurrentExecLimit: 1 }));
    expect(refusal(waiting, { type: "retry" }, 2_000).kind).toBe("CONFLICT");
  });

  it("owes its limit an entry when it starts or reopens waiting and a leave when it ends, nothing otherwise", () => {
    const waiting = started(limited({ rateLimitKey: "k", concurrentExecLimit: 2 }, { updateTime: 500 }));
    expect(limitChanges(null, waiting)).toEqual({ enter: { key: "k", limit: 2, definedAt: 500, workflowName: "orders" } });
    const running = decide(waiting, { type: "admitted" }, env(1_500)).state;
    expect(limitChanges(waiting, running)).toEqual({});
    const ended = decide(running, { type: "terminate" }, env(2_000)).state;
    expect(limitChanges(running, ended)).toEqual({ leave: "k" });
    const reopened = decide(ended, { type: "restart" }, env(3_000)).state;
    expect(limitChanges(ended, reopened)).toEqual({ enter: { key: "k", limit: 2, definedAt: 500, workflowName: "orders" } });
    // Ended while it still waited: the leave (its turn), no entry.
    expect(limitChanges(waiting, decide(waiting, { type: "terminate" }, env(2_000)).state)).toEqual({ leave: "k" });
    const plain = started(limited(undefined));
    expect(limitChanges(null, plain)).toEqual({});
  });
});

describe("registeredLimits", () => {
  it("gives each workflow of a registration the limit of its highest version there, null for none", () => {
    const limits = registeredLimits([
      limited({ concurrentExecLimit: 5 }, { version: 2 }),
      limited({ concurrentExecLimit: 1 }, { version: 1 }),
      limited(undefined, { name: "plain" }),
      limited({ concurrentExecLimit: 3 }, { name: "later", version: 1 }),
      limited(undefined, { name: "later", version: 4 }),
    ]);
    expect(Object.fromEntries(limits)).toEqual({ orders: 5, plain: null, later: null });
  });
});
