import { afterEach, describe, expect, it, vi } from "vitest";
import { isUnimplementedRpcMethod, repeatableExecutionCall } from "../../src/worker/executions";
import { APPLIED_REQUEST_KEEP_MS } from "../../src/actors/execution-store";
import type { RepeatableRequest } from "../../src/actors/workflow-execution";

const workflowId = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b";

/**
 * An env whose execution namespace hands out stubs; the calls themselves are the test's `call`. `keepsRecords`: the
 * stub's answer to keepsAppliedRequests, which the router asks before a repeat; false stands for an object on code
 * from before it, which workerd answers with its TypeError.
 */
function fakeEnv(keepsRecords = true): Env {
  const keepsAppliedRequests = async () => {
    if (keepsRecords) return true;
    // workerd's words (worker-rpc.c++), not the test pool's wrapper's ('does not implement "keepsAppliedRequests"').
    throw new TypeError('The RPC receiver does not implement the method "keepsAppliedRequests".');
  };
  const namespace = { idFromName: (name: string) => name, get: () => ({ keepsAppliedRequests }) };
  return { WORKFLOW_EXECUTION: namespace } as unknown as Env;
}

/** What workerd throws when a reset cuts a call off: transient, may be repeated. */
function resetError(): Error {
  return Object.assign(new Error("Durable Object reset because its code was updated."), { retryable: true });
}

afterEach(() => vi.useRealTimers());

describe("repeatableExecutionCall", () => {
  it("repeats a call cut off by a reset with the request's one id, marked as a repeat", async () => {
    const seen: RepeatableRequest[] = [];
    const answer = await repeatableExecutionCall(fakeEnv(), workflowId, async (_stub, request) => {
      seen.push(request);
      if (seen.length === 1) throw resetError();
      return "applied";
    });
    expect(answer).toBe("applied");
    expect(seen.map((request) => request.repeat)).toEqual([false, true]);
    expect(seen[1]?.id).toBe(seen[0]?.id);
  });

  it("does not repeat a call whose first attempt began longer ago than the object keeps its record: the 503 stands", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(1_000_000);
    const seen: RepeatableRequest[] = [];
    const call = repeatableExecutionCall(fakeEnv(), workflowId, async (_stub, request) => {
      seen.push(request);
      // A state update that waited past the record's keep time after applying (EXECUTE_MAX_WAIT_SECONDS set high).
      vi.setSystemTime(1_000_000 + APPLIED_REQUEST_KEEP_MS);
      throw resetError();
    });
    await expect(call).rejects.toMatchObject({ retryable: true });
    expect(seen).toHaveLength(1);
  });

  it("does not repeat a call to an object still on code from before the records of applied requests: it would apply the repeat again", async () => {
    const seen: RepeatableRequest[] = [];
    const call = repeatableExecutionCall(fakeEnv(false), workflowId, async (_stub, request) => {
      seen.push(request);
      throw resetError();
    });
    await expect(call).rejects.toMatchObject({ retryable: true, message: expect.stringContaining("reset") });
    expect(seen).toHaveLength(1);
  });

  it("reads a missing method in workerd's words and in the test pool's, and nothing else", () => {
    expect(isUnimplementedRpcMethod(new TypeError('The RPC receiver does not implement the method "updateVariables".'), "updateVariables")).toBe(true);
    expect(isUnimplementedRpcMethod(new TypeError('The RPC receiver does not implement "updateVariables".'), "updateVariables")).toBe(true);
    expect(isUnimplementedRpcMethod(new TypeError('The RPC receiver does not implement the method "command".'), "updateVariables")).toBe(false);
    expect(isUnimplementedRpcMethod(new Error('The RPC receiver does not implement the method "updateVariables".'), "updateVariables")).toBe(false);
  });
});
