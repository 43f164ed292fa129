import { describe, expect, it, vi } from "vitest";
import { createExecution, nextDeadline } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import type { JsonObject, JsonValue, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { awaitedCacheLookups, cacheKeySecrets, taskCacheKey, taskCacheWrites } from "../../src/engine/task-cache";
import { attemptEnds, env, httpGet, latestNamed, registrationErrors } from "./engine-env";

const CACHE = { key: "${uri}-${method}", ttlInSecond: 60 };

function definition(tasks: WorkflowTaskDef[]): WorkflowDef {
  return { name: "cached", version: 1, schemaVersion: 2, tasks };
}

function started(tasks: WorkflowTaskDef[], extra: { test?: WorkflowExecution["test"] } = {}): WorkflowExecution {
  return decide(createExecution({ workflowId: "wf-1", definition: definition(tasks), input: { tenant: "acme" }, ...extra }, 1_000), { type: "start" }, env(1_000)).state;
}

const lookedUp = (state: WorkflowExecution, outputs: Record<string, JsonObject | null>, now = 2_000) => decide(state, { type: "cacheLookedUp", outputs }, env(now));

describe("cacheConfig in a definition", () => {
  it("is kept on HTTP and SIMPLE tasks, dropped when null", () => {
    const result = validateWorkflowDef({ ...definition([httpGet("a", { cacheConfig: CACHE }), { name: "w", taskReferenceName: "w", type: "SIMPLE", cacheConfig: { key: "k", ttlInSecond: 5 } }]) });
    expect(result.ok && result.value.tasks.map((task) => task.cacheConfig)).toEqual([CACHE, { key: "k", ttlInSecond: 5 }]);
    const none = validateWorkflowDef(definition([{ ...httpGet("a"), cacheConfig: null } as unknown as WorkflowTaskDef]));
    expect(none.ok && "cacheConfig" in none.value.tasks[0]!).toBe(false);
  });

  it("is refused on other types, with a bad key or time to live, and with a secret in the key, at its path", () => {
    expect(registrationErrors([{ name: "w", taskReferenceName: "w", type: "WAIT", cacheConfig: CACHE }])).toEqual(["tasks[0].cacheConfig: cacheConfig caches the output of HTTP, HTTP_SYNC, HTTP_POLL and SIMPLE tasks only, not of a WAIT task"]);
    expect(registrationErrors([httpGet("a", { cacheConfig: { key: "", ttlInSecond: 0 } })])).toEqual([
      expect.stringMatching(/^tasks\[0\]\.cacheConfig\.key: key must be a non-empty string/),
      expect.stringMatching(/^tasks\[0\]\.cacheConfig\.ttlInSecond: ttlInSecond must be a whole number of seconds from 1 to 2592000/),
    ]);
    expect(registrationErrors([httpGet("a", { cacheConfig: { ttlInSecond: 5 } as never })])).toEqual([expect.stringMatching(/^tasks\[0\]\.cacheConfig\.key: key is required/)]);
    expect(registrationErrors([httpGet("a", { cacheConfig: { key: "${uri", ttlInSecond: 5 } })])).toEqual([expect.stringMatching(/^tasks\[0\]\.cacheConfig\.key: /)]);
    expect(registrationErrors([httpGet("a", { cacheConfig: { key: "${workflow.secrets.token}", ttlInSecond: 5 } })])).toEqual([
      "tasks[0].cacheConfig.key: key must not use secrets (token): cache keys are stored",
    ]);
  });
});

describe("the cache key", () => {
  const state = started([httpGet("a")]);
  const task = { ...latestNamed(state, "a"), inputData: { uri: "https://example.com/a", method: "GET", n: 3, nested: { uri: "https://example.com/n" } } };
  const keyOf = (key: string) => taskCacheKey(state, task, { key, ttlInSecond: 1 }, 1_000);

  it("names the task's input, or the workflow", () => {
    expect(keyOf("${uri}-${method}")).toBe("https://example.com/a-GET");
    expect(keyOf("${nested.uri}")).toBe("https://example.com/n");
    // An HTTP task's request fields nested in http_request (as the client builders write them) are named directly too,
    // and win over flat ones, as in the request sent.
    const nested = { ...task, inputData: { method: "GET", http_request: { uri: "https://example.com/nested", method: "POST" } } };
    expect(taskCacheKey(state, nested, { key: "${uri}-${method}", ttlInSecond: 1 }, 1_000)).toBe("https://example.com/nested-POST");
    expect(taskCacheKey(state, nested, { key: "${http_request.uri}", ttlInSecond: 1 }, 1_000)).toBe("https://example.com/nested");
    expect(taskCacheKey(state, { ...nested, taskType: "SIMPLE" }, { key: "${uri}", ttlInSecond: 1 }, 1_000)).toBeUndefined();
    expect(keyOf("${n}")).toBe("3");
    expect(keyOf("${workflow.input.tenant}:${uri}")).toBe("acme:https://example.com/a");
    expect(keyOf("fixed")).toBe("fixed");
  });

  it("carries the secrets its task sends, wherever they are, and no key of a task sending none can be the same text", () => {
    const sending = (secrets: string[]) => {
      const headers = Object.fromEntries(secrets.map((name, index) => [`X-Key-${index}`, `\${workflow.secrets.${name}}`]));
      const sender = started([httpGet("a", { inputParameters: { uri: "https://example.com/a", method: "GET", headers } })]);
      return (key: string) => taskCacheKey(sender, latestNamed(sender, "a"), { key, ttlInSecond: 1 }, 1_000);
    };
    const withA = sending(["token_a"])("${uri}");
    expect(withA).toBe("\u001ftoken_a\u001fhttps://example.com/a");
    expect(sending(["token_b"])("${uri}")).not.toBe(withA);
    // Sorted, so the order the input names them in does not matter.
    expect(sending(["token_b", "token_a"])("fixed")).toBe(sending(["token_a", "token_b"])("fixed"));
    // A task sending none, whose key resolves to that very text, is kept apart; and so is one starting with the mark.
    expect(keyOf(withA!)).toBe(`\u001f${withA}`);
    expect(keyOf("\u001f\u001fx")).toBe("\u001f\u001f\u001fx");
    expect(keyOf("plain")).toBe("plain");
    // The names are read back from the key (the actor adds their versions), none from a key carrying none.
    expect(cacheKeySecrets(sending(["token_b", "token_a"])("${uri}")!)).toEqual(["token_a", "token_b"]);
    expect(cacheKeySecrets(keyOf(withA!)!)).toEqual([]);
    expect(cacheKeySecrets("plain")).toEqual([]);
  });

  it("carries the secrets its task sends as it runs, not those of a branch not taken (`?:` choosing the credential)", () => {
    // One definition, the tenant choosing the credential sent in a header; the key (`${uri}`) reads alike for both.
    const headers = { Authorization: "Bearer ${workflow.input.tenant == 'acme' ? workflow.secrets.token_a : workflow.secrets.token_b}" };
    const keyFor = (tenant: string, key = "${uri}") => {
      const run = decide(createExecution({ workflowId: `wf-${tenant}`, definition: definition([httpGet("a", { inputParameters: { uri: "https://example.com/a", method: "GET", headers } })]), input: { tenant } }, 1_000), { type: "start" }, env(1_000)).state;
      return taskCacheKey(run, latestNamed(run, "a"), { key, ttlInSecond: 1 }, 1_000);
    };
    expect(keyFor("acme")).toBe("\u001ftoken_a\u001fhttps://example.com/a");
    expect(keyFor("globex")).toBe("\u001ftoken_b\u001fhttps://example.com/a");
    // A key with no `${...}` carries them too.
    expect(keyFor("acme", "fixed")).toBe("\u001ftoken_a\u001ffixed");
    expect(keyFor("globex", "fixed")).not.toBe(keyFor("acme", "fixed"));
  });

  it("tells masked values that are not secrets apart only where it reads them (`${headers.Authorization}`)", () => {
    // A credential passed masked (`_secrets` of the workflow's input), not as a secret: nothing stands for it but its value.
    const headers = { Authorization: "Bearer ${workflow.input._secrets.token}" };
    const keyFor = (token: string, key: string) => {
      const run = decide(createExecution({ workflowId: `wf-${token}`, definition: definition([httpGet("a", { inputParameters: { uri: "https://example.com/a", method: "GET", headers } })]), input: { _secrets: { token } } }, 1_000), { type: "start" }, env(1_000)).state;
      return taskCacheKey(run, latestNamed(run, "a"), { key, ttlInSecond: 1 }, 1_000);
    };
    expect(keyFor("alpha", "${uri}")).toBe(keyFor("beta", "${uri}"));
    // Read by the key, the value is in it (D1 holds only the key's digest: see task-output-cache.ts).
    expect(keyFor("alpha", "${uri}-${headers.Authorization}")).toBe("https://example.com/a-Bearer alpha");
    expect(keyFor("beta", "${uri}-${headers.Authorization}")).toBe("https://example.com/a-Bearer beta");
  });

  it("is none (the task runs uncached) when it resolves to nothing", () => {
    expect(keyOf("${missing}")).toBeUndefined();
    expect(keyOf("${workflow.input.nothing}")).toBeUndefined();
  });

  it("is none past MAX_CACHE_KEY_LENGTH without the values it reads being written out first (a query's subtrees)", () => {
    // 20 levels over 2,000 numbers: `..*` selects every level, some 200 KB as JSON, for a key of at most 1,024 characters.
    let chain: JsonValue = Array.from({ length: 2_000 }, (_, index) => index);
    for (let level = 0; level < 20; level++) chain = { next: chain };
    const run = decide(createExecution({ workflowId: "wf-tree", definition: definition([httpGet("a")]), input: { chain } }, 1_000), { type: "start" }, env(1_000)).state;
    const keyFor = (key: string) => taskCacheKey(run, latestNamed(run, "a"), { key, ttlInSecond: 1 }, 1_000);
    const stringify = vi.spyOn(JSON, "stringify");
    let keys: Array<string | undefined> = [];
    let written: number[] = [];
    try {
      keys = [keyFor("x${workflow.input.chain..*}"), keyFor("${workflow.input.chain..*}"), keyFor("${workflow.input.chain.next}")];
      written = stringify.mock.results.map((result) => (typeof result.value === "string" ? result.value.length : 0));
    } finally {
      stringify.mockRestore();
    }
    expect(keys).toEqual([undefined, undefined, undefined]);
    expect(Math.max(0, ...written)).toBeLessThan(10_000);
    // Within the bound, a key is what it was: text and a whole value alike.
    expect(keyOf("x${nested}")).toBe('x{"uri":"https://example.com/n"}');
    expect(keyOf("${nested}")).toBe('{"uri":"https://example.com/n"}');
  });
});

describe("a task whose output is cached", () => {
  it("waits for its look-up, sending nothing and setting no timer; found, it completes with the cached output", () => {
    const waiting = started([httpGet("a", { cacheConfig: CACHE }), httpGet("b")]);
    const a = latestNamed(waiting, "a");
    expect(a).toMatchObject({ status: "SCHEDULED", cache: { key: "https://example.com/a-GET", state: "looking" } });
    expect(nextDeadline(waiting)).toBeUndefined();
    expect(awaitedCacheLookups(waiting)).toEqual([{ taskId: a.taskId, taskName: "a", key: "https://example.com/a-GET" }]);

    const hit = lookedUp(waiting, { [a.taskId]: { response: { body: "cached" } } });
    expect(latestNamed(hit.state, "a")).toMatchObject({ status: "COMPLETED", outputData: { response: { body: "cached" } }, cache: { state: "hit" } });
    expect(hit.effects).toEqual([{ kind: "dispatch", taskId: latestNamed(hit.state, "b").taskId, attempt: 1 }]);
    expect(taskCacheWrites(waiting, hit.state)).toEqual([]);
    // An answer for a task that no longer waits changes nothing.
    expect(lookedUp(hit.state, { [a.taskId]: null }).state).toBe(hit.state);
  });

  it("not found, it runs, and its COMPLETED output is cached once; a failure is not", () => {
    const waiting = started([httpGet("a", { cacheConfig: CACHE })]);
    const a = latestNamed(waiting, "a");
    const missed = lookedUp(waiting, { [a.taskId]: null });
    expect(missed.effects).toEqual([{ kind: "dispatch", taskId: a.taskId, attempt: 1 }]);
    const completed = attemptEnds(missed.state, "a", 3_000, "COMPLETED", { body: "fresh" }).state;
    expect(taskCacheWrites(missed.state, completed)).toEqual([{ taskId: a.taskId, taskName: "a", key: "https://example.com/a-GET", output: { body: "fresh" }, ttlSeconds: 60 }]);
    expect(taskCacheWrites(completed, { ...completed })).toEqual([]);
    const failed = attemptEnds(missed.state, "a", 3_000, "FAILED").state;
    expect(taskCacheWrites(missed.state, failed)).toEqual([]);
  });

  it("not found by a finer key (its secrets' versions), it caches its output under that key", () => {
    const waiting = started([httpGet("a", { cacheConfig: CACHE })]);
    const a = latestNamed(waiting, "a");
    const missed = decide(waiting, { type: "cacheLookedUp", outputs: { [a.taskId]: null }, keys: { [a.taskId]: "finer" } }, env(2_000));
    expect(latestNamed(missed.state, "a").cache).toEqual({ key: "finer", state: "missed" });
    const completed = attemptEnds(missed.state, "a", 3_000, "COMPLETED", { body: "fresh" }).state;
    expect(taskCacheWrites(missed.state, completed)).toEqual([{ taskId: a.taskId, taskName: "a", key: "finer", output: { body: "fresh" }, ttlSeconds: 60 }]);
  });

  it("is never cached in a test run, and a rerun looks the cache up again", () => {
    const test = started([httpGet("a", { cacheConfig: CACHE })], { test: { taskMocks: [], subWorkflows: [] } });
    expect(latestNamed(test, "a").cache).toBeUndefined();

    const waiting = started([httpGet("a", { cacheConfig: CACHE })]);
    const a = latestNamed(waiting, "a");
    const done = lookedUp(waiting, { [a.taskId]: { body: "cached" } }).state;
    expect(done.status).toBe("COMPLETED");
    const rerun = decide(done, { type: "rerun", fromTaskId: a.taskId }, env(4_000)).state;
    expect(latestNamed(rerun, "a")).toMatchObject({ status: "SCHEDULED", cache: { state: "looking" } });
  });

  it("runs uncached when its key resolves to nothing", () => {
    const state = started([httpGet("a", { cacheConfig: { key: "${nothing}", ttlInSecond: 5 } })]);
    expect(latestNamed(state, "a")).toMatchObject({ status: "IN_PROGRESS" });
    expect(latestNamed(state, "a").cache).toBeUndefined();
  });
});
