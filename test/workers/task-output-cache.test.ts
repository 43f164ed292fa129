/**
 * Orkes' task output cache (`cacheConfig` on HTTP and SIMPLE tasks): a task whose name and key have an unexpired
 * output completes with it, without its request or its worker; otherwise its COMPLETED output is cached. Through the
 * real router, objects and D1, HTTP calls to a real server on 127.0.0.1.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { call, createUser, orkes } from "./auth-helpers";
import { TaskOutputCache, sealedOutputContext, storedCacheKey } from "../../src/worker/task-output-cache";
import { decryptSecret, loadKeyring } from "../../src/worker/secrets/crypto";
import { api, apiOk, eventually, getWorkflow, hits, httpTask, register, rowCount, startWorkflow, target, waitFor } from "./helpers";

/** A workflow whose one HTTP task GETs `/count/<key>` (the target counts each request) with `cacheConfig`. */
async function registerCounting(name: string, cacheConfig: JsonObject, extra: JsonObject = {}): Promise<void> {
  await register({ name, tasks: [httpTask("fetch", { uri: target("/count/${workflow.input.key}"), method: "GET" }, { cacheConfig, ...extra })] });
}

/** The output D1 holds for task `taskName` (the one row of that name), opened with the configured key, and its raw columns. */
async function cachedRow(taskName: string): Promise<{ output: string; sealed: string; opened: JsonObject | undefined }> {
  const row = await env.DB.prepare("SELECT cache_key, output, sealed_output FROM task_output_cache WHERE task_name = ?").bind(taskName).first<{ cache_key: string; output: string; sealed_output: string | null }>();
  const keyring = await loadKeyring(env.SECRETS_ENCRYPTION_KEY);
  if (row === null || row.sealed_output === null || !keyring.ok) throw new Error(`no sealed output cached for ${taskName}, or no key`);
  const text = await decryptSecret(keyring.keyring, sealedOutputContext(taskName, row.cache_key), row.sealed_output);
  return { output: row.output, sealed: row.sealed_output, opened: text === undefined ? undefined : (JSON.parse(text) as JsonObject) };
}

async function outputOf(name: string, input: JsonObject): Promise<JsonObject> {
  const workflow = await waitFor(await startWorkflow(name, input), ["COMPLETED", "FAILED"]);
  return { status: workflow.status, ...workflow.tasks[0]!.outputData };
}

describe("task output cache", () => {
  it("completes a task with the output cached under its name and key, without sending its request; another key calls", async () => {
    await registerCounting("toc_http", { key: "${uri}", ttlInSecond: 600 });
    const first = await outputOf("toc_http", { key: "toc-a" });
    expect(first).toMatchObject({ status: "COMPLETED", response: { statusCode: 200 } });
    // The cache write is background work, written with the decision's obligations: the next run finds it.
    await eventually(() => rowCount("task_output_cache"), (rows) => rows >= 1, "the output cached");
    const second = await outputOf("toc_http", { key: "toc-a" });
    // Orkes marks a hit's output.
    expect(second).toEqual({ ...first, _cachedResponse: true });
    expect(await hits("toc-a")).toBe(1);
    const other = await outputOf("toc_http", { key: "toc-b" });
    expect(other["status"]).toBe("COMPLETED");
    expect(await hits("toc-b")).toBe(1);
  });

  it("a key naming input that holds a secret tells secrets apart: a task of the same name sending another secret calls for itself", async () => {
    await apiOk("PUT", "/api/secrets/toc_key_a", JSON.stringify("toc-alpha-value"));
    await apiOk("PUT", "/api/secrets/toc_key_b", JSON.stringify("toc-beta-value"));
    for (const [name, secret] of [["toc_secret_a", "toc_key_a"], ["toc_secret_b", "toc_key_b"]] as const) {
      await register({ name, tasks: [httpTask("toc_profile", { uri: target(`/count/\${workflow.secrets.${secret}}`), method: "GET" }, { cacheConfig: { key: "${uri}", ttlInSecond: 600 } })] });
    }
    const first = await outputOf("toc_secret_a", {});
    expect(first["status"]).toBe("COMPLETED");
    await eventually(() => rowCount("task_output_cache"), (rows) => rows >= 1, "the output cached");
    // Stored and shown masked, the two URIs read alike; the cache must not hand one credential's answer to the other.
    const other = await outputOf("toc_secret_b", {});
    expect(other["_cachedResponse"]).toBeUndefined();
    expect(await hits("toc-beta-value")).toBe(1);
    // The same secret still finds its own.
    expect(await outputOf("toc_secret_a", {})).toMatchObject({ _cachedResponse: true });
    expect(await hits("toc-alpha-value")).toBe(1);
    const keys = await env.DB.prepare("SELECT cache_key FROM task_output_cache").all<{ cache_key: string }>();
    expect(JSON.stringify(keys.results)).not.toMatch(/toc-(alpha|beta)-value/);
  });

  it("tells secrets apart when the key names no input holding one: a task sending another credential in a header calls for itself", async () => {
    await apiOk("PUT", "/api/secrets/toc_hdr_a", JSON.stringify("toc-hdr-alpha"));
    await apiOk("PUT", "/api/secrets/toc_hdr_b", JSON.stringify("toc-hdr-beta"));
    // The usual shape: the credential in a header, the key the request's URI (the same for both).
    for (const [name, secret] of [["toc_header_a", "toc_hdr_a"], ["toc_header_b", "toc_hdr_b"]] as const) {
      const request = { uri: target("/count/toc-hdr"), method: "GET", headers: { Authorization: `Bearer \${workflow.secrets.${secret}}` } };
      await register({ name, tasks: [httpTask("toc_me", request, { cacheConfig: { key: "${uri}", ttlInSecond: 600 } })] });
    }
    expect((await outputOf("toc_header_a", {}))["status"]).toBe("COMPLETED");
    await eventually(() => env.DB.prepare("SELECT COUNT(*) AS n FROM task_output_cache WHERE task_name = 'toc_me'").first<{ n: number }>(), (row) => row!.n >= 1, "the output cached");
    // Another credential's answer is not this one's.
    const other = await outputOf("toc_header_b", {});
    expect(other["_cachedResponse"]).toBeUndefined();
    expect(await hits("toc-hdr")).toBe(2);
    // The same credential still finds its own.
    expect(await outputOf("toc_header_a", {})).toMatchObject({ _cachedResponse: true });
    expect(await hits("toc-hdr")).toBe(2);
    // A task sending no secret, whose key resolves to the same text, finds neither.
    await register({ name: "toc_header_none", tasks: [httpTask("toc_me", { uri: target("/count/toc-hdr"), method: "GET" }, { cacheConfig: { key: "${uri}", ttlInSecond: 600 } })] });
    expect((await outputOf("toc_header_none", {}))["_cachedResponse"]).toBeUndefined();
    expect(await hits("toc-hdr")).toBe(3);
  });

  it("tells apart the secrets one definition sends by a `?:`: a run choosing the other credential calls for itself", async () => {
    await apiOk("PUT", "/api/secrets/toc_pick_a", JSON.stringify("toc-pick-alpha"));
    await apiOk("PUT", "/api/secrets/toc_pick_b", JSON.stringify("toc-pick-beta"));
    const headers = { Authorization: "Bearer ${workflow.input.tenant == 'a' ? workflow.secrets.toc_pick_a : workflow.secrets.toc_pick_b}" };
    await register({ name: "toc_pick", tasks: [httpTask("toc_pick_me", { uri: target("/count/toc-pick"), method: "GET", headers }, { cacheConfig: { key: "${uri}", ttlInSecond: 600 } })] });
    expect((await outputOf("toc_pick", { tenant: "a" }))["status"]).toBe("COMPLETED");
    await eventually(() => env.DB.prepare("SELECT COUNT(*) AS n FROM task_output_cache WHERE task_name = 'toc_pick_me'").first<{ n: number }>(), (row) => row!.n >= 1, "the output cached");
    // Tenant b's run sends toc_pick_b: tenant a's answer is not its own.
    expect((await outputOf("toc_pick", { tenant: "b" }))["_cachedResponse"]).toBeUndefined();
    expect(await hits("toc-pick")).toBe(2);
    expect((await outputOf("toc_pick", { tenant: "a" }))["_cachedResponse"]).toBe(true);
    expect(await hits("toc-pick")).toBe(2);
  });

  it("misses the output cached with a secret's old value once it is given a new one (PUT /api/secrets/{name}): the task calls with the new value", async () => {
    await apiOk("PUT", "/api/secrets/toc_rotated", JSON.stringify("toc-rotated-old"));
    const request = { uri: target("/count/toc-rotated"), method: "GET", headers: { Authorization: "Bearer ${workflow.secrets.toc_rotated}" } };
    await register({ name: "toc_rotating", tasks: [httpTask("toc_rotating_me", request, { cacheConfig: { key: "${uri}", ttlInSecond: 600 } })] });
    const cachedRows = () => env.DB.prepare("SELECT COUNT(*) AS n FROM task_output_cache WHERE task_name = 'toc_rotating_me'").first<{ n: number }>();
    expect((await outputOf("toc_rotating", {}))["status"]).toBe("COMPLETED");
    await eventually(cachedRows, (row) => row!.n === 1, "the output cached");
    expect((await outputOf("toc_rotating", {}))["_cachedResponse"]).toBe(true);
    expect(await hits("toc-rotated")).toBe(1);
    // Rotated: the answer to the old credential is not this one's.
    await apiOk("PUT", "/api/secrets/toc_rotated", JSON.stringify("toc-rotated-new"));
    const rotated = await outputOf("toc_rotating", {});
    expect(rotated["status"]).toBe("COMPLETED");
    expect(rotated["_cachedResponse"]).toBeUndefined();
    expect(await hits("toc-rotated")).toBe(2);
    // The new value's output is cached and found in its turn.
    await eventually(cachedRows, (row) => row!.n === 2, "the new value's output cached");
    expect((await outputOf("toc_rotating", {}))["_cachedResponse"]).toBe(true);
    expect(await hits("toc-rotated")).toBe(2);
    const rows = await env.DB.prepare("SELECT * FROM task_output_cache WHERE task_name = 'toc_rotating_me'").all();
    expect(JSON.stringify(rows.results)).not.toMatch(/toc-rotated-(old|new)/);
  });

  it("keeps a key that reads a masked value out of D1 in plain: the output is stored under the key's digest, found by the same value only", async () => {
    // A key reading a value Orkes masks (`_secrets` of the workflow's input): what D1 holds must not show it.
    await register({ name: "toc_masked", tasks: [httpTask("toc_masked_me", { uri: target("/count/toc-masked"), method: "GET", headers: { Authorization: "Bearer ${workflow.input._secrets.token}" } }, { cacheConfig: { key: "${workflow.input._secrets.token}", ttlInSecond: 600 } })] });
    const first = await waitFor(await startWorkflow("toc_masked", { _secrets: { token: "toc-masked-alpha" } }), ["COMPLETED", "FAILED"]);
    expect(first.status).toBe("COMPLETED");
    expect(JSON.stringify(first)).not.toContain("toc-masked-alpha");
    await eventually(() => env.DB.prepare("SELECT COUNT(*) AS n FROM task_output_cache WHERE task_name = 'toc_masked_me'").first<{ n: number }>(), (row) => row!.n >= 1, "the output cached");
    const rows = await env.DB.prepare("SELECT * FROM task_output_cache WHERE task_name = 'toc_masked_me'").all();
    expect(JSON.stringify(rows.results)).not.toContain("toc-masked-alpha");
    expect(rows.results).toEqual([expect.objectContaining({ cache_key: await storedCacheKey("toc-masked-alpha") })]);
    // The same value still finds its output; another does not.
    expect((await outputOf("toc_masked", { _secrets: { token: "toc-masked-alpha" } }))["_cachedResponse"]).toBe(true);
    expect((await outputOf("toc_masked", { _secrets: { token: "toc-masked-beta" } }))["_cachedResponse"]).toBeUndefined();
    expect(await hits("toc-masked")).toBe(2);
  });

  it("migration 0040 deletes outputs cached under a key's text (before keys were digests), keeping those under a digest", async () => {
    const migration = env.TEST_MIGRATIONS.find((candidate) => candidate.name.startsWith("0040_"));
    expect(migration?.name).toBe("0040_task_output_cache_plain_keys.sql");
    const digest = await storedCacheKey("toc-plain-kept");
    const rows: Array<[string, string]> = [["toc_plain", "Bearer eyJ.plain-token"], ["toc_plain", "a".repeat(64)], ["toc_plain", "A".repeat(64)], ["toc_plain", digest]];
    const expiresAt = Date.now() + 3_600_000;
    for (const [name, key] of rows) {
      await env.DB.prepare("INSERT INTO task_output_cache (task_name, cache_key, output, expires_at) VALUES (?, ?, '{}', ?)").bind(name, key, expiresAt).run();
    }
    for (const query of migration!.queries) await env.DB.prepare(query).run();
    const left = await env.DB.prepare("SELECT cache_key FROM task_output_cache WHERE task_name = 'toc_plain' ORDER BY cache_key").all<{ cache_key: string }>();
    expect(left.results.map((row) => row.cache_key)).toEqual(["a".repeat(64), digest].sort());
  });

  it("seals outputs at rest with SECRETS_ENCRYPTION_KEY: D1 holds no output in plain, a hit still completes with it, a row in plain or moved to another key is a miss", async () => {
    // A worker returning a credential (no stored secret's value, so nothing scrubs it): what D1 holds must not show it.
    const workflow = { name: "toc_sealed", tasks: [{ name: "toc_sealed_worker", taskReferenceName: "login", type: "SIMPLE", inputParameters: { account: "${workflow.input.account}" }, cacheConfig: { key: "acct-${account}", ttlInSecond: 600 } }] };
    await register(workflow);
    const runWorker = async (account: string, output: JsonObject): Promise<string> => {
      const id = await startWorkflow("toc_sealed", { account });
      const polled = await eventually(() => apiOk<JsonObject | null>("GET", "/api/tasks/poll/toc_sealed_worker?workerid=w1").catch(() => null), (task) => task !== null && typeof task === "object" && "taskId" in task, "a poll handing the task out");
      await apiOk("POST", "/api/tasks", { workflowInstanceId: id, taskId: polled!["taskId"], status: "COMPLETED", outputData: output });
      await waitFor(id, ["COMPLETED"]);
      return id;
    };
    await runWorker("a1", { access_token: "toc-sealed-credential-1", expires_in: 3600 });
    await eventually(() => rowCount("task_output_cache WHERE task_name = 'toc_sealed_worker'"), (rows) => rows === 1, "the output cached");
    const { output, sealed, opened } = await cachedRow("toc_sealed_worker");
    expect(`${output} ${sealed}`).not.toContain("toc-sealed-credential-1");
    expect(sealed).toMatch(/^v1:/);
    // What the code before sealing reads (it parses `output`): nothing cached, so during a gradual deployment it runs the task.
    expect(JSON.parse(output)).toBeNull();
    expect(opened).toEqual({ access_token: "toc-sealed-credential-1", expires_in: 3600 });
    // A hit still completes the task with the output as the worker gave it.
    const hit = await waitFor(await startWorkflow("toc_sealed", { account: "a1" }), ["COMPLETED"]);
    expect(hit.tasks[0]).toMatchObject({ outputData: { access_token: "toc-sealed-credential-1", expires_in: 3600, _cachedResponse: true }, pollCount: 0 });
    // A row in plain (cached before outputs were sealed, or put there by hand) is not trusted: its task runs.
    const plainKey = await storedCacheKey("acct-a2");
    await env.DB.prepare("INSERT INTO task_output_cache (task_name, cache_key, output, expires_at) VALUES ('toc_sealed_worker', ?, ?, ?)").bind(plainKey, JSON.stringify({ access_token: "forged" }), Date.now() + 600_000).run();
    await runWorker("a2", { access_token: "toc-sealed-credential-2" });
    // Nor is a sealed output moved under another key (its authenticated data names its row).
    await env.DB.prepare("INSERT INTO task_output_cache (task_name, cache_key, output, sealed_output, expires_at) VALUES ('toc_sealed_worker', ?, 'null', ?, ?)").bind(await storedCacheKey("acct-a3"), sealed, Date.now() + 600_000).run();
    await runWorker("a3", { access_token: "toc-sealed-credential-3" });
  });

  it("misses a sealed output that code before sealing wrote over (a gradual deployment): its upsert keeps the earlier sealed output, past its time to live", async () => {
    await registerCounting("toc_overwritten", { key: "${uri}", ttlInSecond: 600 });
    const first = await outputOf("toc_overwritten", { key: "toc-ow" });
    expect(first["status"]).toBe("COMPLETED");
    await eventually(() => rowCount(`task_output_cache WHERE task_name = 'fetch' AND sealed_output IS NOT NULL`), (rows) => rows >= 1, "the output cached, sealed");
    // The previous version's write (main before 30161323, word for word), as it runs when it missed the row (it reads
    // `output`, JSON null): output and expiry replaced, sealed_output left as it was.
    const key = await storedCacheKey(target("/count/toc-ow"));
    await env.DB.prepare(
      `INSERT INTO task_output_cache (task_name, cache_key, output, expires_at) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (task_name, cache_key) DO UPDATE SET output = excluded.output, expires_at = excluded.expires_at`,
    )
      .bind("fetch", key, JSON.stringify({ response: { body: "the older version's" } }), Date.now() + 600_000)
      .run();
    // The sealed output is the one cached at first, not the latest: the task runs again, and caches its output sealed.
    const again = await outputOf("toc_overwritten", { key: "toc-ow" });
    expect(again["_cachedResponse"]).toBeUndefined();
    expect(await hits("toc-ow")).toBe(2);
    await eventually(() => env.DB.prepare("SELECT output FROM task_output_cache WHERE task_name = 'fetch' AND cache_key = ?").bind(key).first<{ output: string }>(), (row) => row?.output === "null", "the row sealed again");
    expect((await outputOf("toc_overwritten", { key: "toc-ow" }))["_cachedResponse"]).toBe(true);
    expect(await hits("toc-ow")).toBe(2);
  });

  it("keeps outputs in plain without SECRETS_ENCRYPTION_KEY and finds them; with one set but unusable caches and finds nothing; each finds none of the other's", async () => {
    const now = Date.now();
    const write = (taskName: string, key: string) => ({ taskId: `t-${taskName}`, taskName, key, output: { body: `of ${taskName}` }, ttlSeconds: 600 });
    const look = (taskName: string, key: string) => [{ taskId: `t-${taskName}`, taskName, key }];
    const plain = new TaskOutputCache(env.DB, undefined);
    await plain.store(write("toc_plain_mode", "k1"), now);
    const row = await env.DB.prepare("SELECT output, sealed_output FROM task_output_cache WHERE task_name = 'toc_plain_mode'").first<{ output: string; sealed_output: string | null }>();
    expect(row).toEqual({ output: JSON.stringify({ body: "of toc_plain_mode" }), sealed_output: null });
    expect((await plain.lookup(look("toc_plain_mode", "k1"), now)).outputs).toEqual({ "t-toc_plain_mode": { body: "of toc_plain_mode" } });
    // With the key, that plain row is a miss; and what the key seals is a miss without it (its output is JSON null).
    const sealed = new TaskOutputCache(env.DB, env.SECRETS_ENCRYPTION_KEY);
    expect((await sealed.lookup(look("toc_plain_mode", "k1"), now)).outputs).toEqual({ "t-toc_plain_mode": null });
    await sealed.store(write("toc_sealed_mode", "k1"), now);
    expect((await sealed.lookup(look("toc_sealed_mode", "k1"), now)).outputs).toEqual({ "t-toc_sealed_mode": { body: "of toc_sealed_mode" } });
    expect((await plain.lookup(look("toc_sealed_mode", "k1"), now)).outputs).toEqual({ "t-toc_sealed_mode": null });
    // A key that is set but not the base64 of 32 bytes: its operator meant outputs sealed, so none is kept in plain.
    const unusable = new TaskOutputCache(env.DB, "not-a-key");
    await unusable.store(write("toc_unusable_mode", "k1"), now);
    expect(await rowCount("task_output_cache WHERE task_name = 'toc_unusable_mode'")).toBe(0);
    expect((await unusable.lookup(look("toc_plain_mode", "k1"), now)).outputs).toEqual({ "t-toc_plain_mode": null });
  });

  it("migration 0041 deletes outputs cached in plain (before outputs were sealed), keeping sealed ones", async () => {
    const migration = env.TEST_MIGRATIONS.find((candidate) => candidate.name.startsWith("0041_"));
    expect(migration?.name).toBe("0041_task_output_cache_sealed_outputs.sql");
    const expiresAt = Date.now() + 3_600_000;
    for (const [key, output, sealed] of [["a".repeat(64), '{"token":"plain"}', null], ["b".repeat(64), "null", "v1:AAAA:AAAA"]]) {
      await env.DB.prepare("INSERT INTO task_output_cache (task_name, cache_key, output, sealed_output, expires_at) VALUES ('toc_unsealed', ?, ?, ?, ?)").bind(key, output, sealed, expiresAt).run();
    }
    // Its column is added already (the tests' D1 has every migration); its deletion runs again over these rows.
    for (const query of migration!.queries.filter((text) => /^\s*DELETE/i.test(text))) await env.DB.prepare(query).run();
    const left = await env.DB.prepare("SELECT sealed_output FROM task_output_cache WHERE task_name = 'toc_unsealed'").all<{ sealed_output: string }>();
    expect(left.results.map((row) => row.sealed_output)).toEqual(["v1:AAAA:AAAA"]);
  });

  it("calls again once the output expired, and never caches a failure", async () => {
    await registerCounting("toc_expiring", { key: "${uri}", ttlInSecond: 1 });
    await outputOf("toc_expiring", { key: "toc-exp" });
    const expiringKey = await storedCacheKey(target("/count/toc-exp"));
    await eventually(() => env.DB.prepare("SELECT expires_at FROM task_output_cache WHERE cache_key = ?").bind(expiringKey).first<{ expires_at: number }>(), (row) => row !== null, "the output cached");
    await outputOf("toc_expiring", { key: "toc-exp" });
    expect(await hits("toc-exp")).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await outputOf("toc_expiring", { key: "toc-exp" });
    expect(await hits("toc-exp")).toBe(2);

    await register({ name: "toc_failing", tasks: [httpTask("fetch", { uri: target("/status/500"), method: "GET" }, { cacheConfig: { key: "failing-${uri}", ttlInSecond: 600 } })] });
    expect((await outputOf("toc_failing", {}))["status"]).toBe("FAILED");
    const failingKey = await storedCacheKey(`failing-${target("/status/500")}`);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM task_output_cache WHERE cache_key = ?").bind(failingKey).first<{ n: number }>()).toEqual({ n: 0 });
  });

  it("completes a worker's task from the cache without queueing it", async () => {
    await register({ name: "toc_simple", tasks: [{ name: "toc_worker", taskReferenceName: "work", type: "SIMPLE", inputParameters: { item: "${workflow.input.item}" }, cacheConfig: { key: "item-${item}", ttlInSecond: 600 } }] });
    const first = await startWorkflow("toc_simple", { item: "x1" });
    await waitFor(first, (workflow) => workflow.tasks[0]?.status === "SCHEDULED" && (workflow.tasks[0]["pollCount"] ?? 0) === 0);
    const polled = await eventually(() => apiOk<JsonObject | null>("GET", "/api/tasks/poll/toc_worker?workerid=w1").catch(() => null), (task) => task !== null && typeof task === "object" && "taskId" in task, "a poll handing the task out");
    await apiOk("POST", "/api/tasks", { workflowInstanceId: first, taskId: polled!["taskId"], status: "COMPLETED", outputData: { price: 42 } });
    await waitFor(first, ["COMPLETED"]);
    await eventually(() => env.DB.prepare("SELECT output FROM task_output_cache WHERE task_name = 'toc_worker'").first<{ output: string }>(), (row) => row !== null, "the worker's output cached");

    const second = await waitFor(await startWorkflow("toc_simple", { item: "x1" }), ["COMPLETED"]);
    expect(second.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { price: 42, _cachedResponse: true }, pollCount: 0 });
    // The mark is not cached: the stored output is the worker's.
    expect((await cachedRow("toc_worker")).opened).toEqual({ price: 42 });
    const sizes = await apiOk<Record<string, number>>("GET", "/api/tasks/queue/sizes?taskType=toc_worker");
    expect(sizes["toc_worker"] ?? 0).toBe(0);
    // Another item is the worker's again.
    const third = await startWorkflow("toc_simple", { item: "x2" });
    await waitFor(third, (workflow) => workflow.tasks[0]?.status === "SCHEDULED");
    expect((await getWorkflow(third)).status).toBe("RUNNING");
    expect((await api("DELETE", `/api/workflow/${third}`)).status).toBe(200);
  });

  it("caches an HTTP_SYNC's output as an HTTP task's, its key naming the request's fields as sent (`${uri}` from http_request)", async () => {
    const fetchTask = httpTask("fetch", { http_request: { uri: target("/count/${workflow.input.key}"), method: "GET" } }, { type: "HTTP_SYNC", cacheConfig: { key: "sync-${uri}", ttlInSecond: 600 } });
    await register({ name: "toc_http_sync", tasks: [fetchTask] });
    const first = await outputOf("toc_http_sync", { key: "toc-sync" });
    expect(first).toMatchObject({ status: "COMPLETED", response: { statusCode: 200 } });
    // Stored under the digest of the key `sync-${uri}` resolves to, the URI read from http_request.
    const syncKey = await storedCacheKey(`sync-${target("/count/toc-sync")}`);
    await eventually(() => env.DB.prepare("SELECT cache_key FROM task_output_cache WHERE task_name = 'fetch' AND cache_key = ?").bind(syncKey).first<{ cache_key: string }>(), (row) => row !== null, "the output cached");
    expect(await outputOf("toc_http_sync", { key: "toc-sync" })).toEqual({ ...first, _cachedResponse: true });
    expect(await hits("toc-sync")).toBe(1);
  });

  it("POST /api/admin/cache/clear/{taskDefName} (Orkes' clearTaskExecutionCache) deletes the outputs cached under that task name only: its next task calls again", async () => {
    const countingTask = (name: string, key: string): JsonObject => ({ ...httpTask(name, { uri: target(`/count/${key}`), method: "GET" }, { cacheConfig: { key: "${uri}", ttlInSecond: 600 } }), name });
    await register({ name: "toc_cleared", tasks: [countingTask("toc_clear_fetch", "toc-clear")] });
    await register({ name: "toc_kept", tasks: [countingTask("toc_kept_fetch", "toc-kept")] });
    await outputOf("toc_cleared", {});
    await outputOf("toc_kept", {});
    const cachedUnder = (taskName: string) => env.DB.prepare("SELECT COUNT(*) AS n FROM task_output_cache WHERE task_name = ?").bind(taskName).first<{ n: number }>();
    await eventually(() => Promise.all([cachedUnder("toc_clear_fetch"), cachedUnder("toc_kept_fetch")]), (counts) => counts.every((count) => count?.n === 1), "both outputs cached");
    expect(await outputOf("toc_cleared", {})).toMatchObject({ _cachedResponse: true });
    expect(await hits("toc-clear")).toBe(1);

    const cleared = await api("POST", "/api/admin/cache/clear/toc_clear_fetch");
    expect([cleared.status, await cleared.text()]).toEqual([200, ""]);
    expect(await cachedUnder("toc_clear_fetch")).toEqual({ n: 0 });
    const again = await outputOf("toc_cleared", {});
    expect(again).toMatchObject({ status: "COMPLETED", response: { statusCode: 200 } });
    expect(again["_cachedResponse"]).toBeUndefined();
    expect(await hits("toc-clear")).toBe(2);
    // Another task name keeps its own.
    expect(await outputOf("toc_kept", {})).toMatchObject({ _cachedResponse: true });
    expect(await hits("toc-kept")).toBe(1);
    // A name with nothing cached (none registered: HTTP tasks cache under their name without a definition) is cleared alike.
    expect((await api("POST", "/api/admin/cache/clear/toc_never_cached")).status).toBe(200);

    // Guarded as deleting the task's definition: TASK_WRITE on that task, not on another.
    const writer = await createUser("toc-cache-clearer", { directPermissions: [{ action: "TASK_WRITE", scope: "task:toc_kept_fetch" }] });
    expect((await call("POST", "/api/admin/cache/clear/toc_clear_fetch", orkes(writer.token))).status).toBe(403);
    expect((await call("POST", "/api/admin/cache/clear/toc_kept_fetch", orkes(writer.token))).status).toBe(200);
    expect(await cachedUnder("toc_kept_fetch")).toEqual({ n: 0 });
  });

  it("takes ttlInSecond written as its digits, as Orkes' docs write it (\"2500\"), storing the number; other text is a 400", async () => {
    await registerCounting("toc_ttl_text", { key: "${uri}", ttlInSecond: "600" }, { name: "toc_ttl_text_fetch" });
    const stored = await apiOk<{ tasks: JsonObject[] }>("GET", "/api/metadata/workflow/toc_ttl_text");
    expect(stored.tasks[0]!["cacheConfig"]).toEqual({ key: "${uri}", ttlInSecond: 600 });
    const first = await outputOf("toc_ttl_text", { key: "toc-ttl-text" });
    expect(first["status"]).toBe("COMPLETED");
    const cached = () => env.DB.prepare("SELECT COUNT(*) AS n FROM task_output_cache WHERE task_name = 'toc_ttl_text_fetch'").first<{ n: number }>();
    await eventually(cached, (row) => row?.n === 1, "the output cached");
    expect(await outputOf("toc_ttl_text", { key: "toc-ttl-text" })).toEqual({ ...first, _cachedResponse: true });
    expect(await hits("toc-ttl-text")).toBe(1);

    const refused = await api("POST", "/api/metadata/workflow", {
      name: "toc_ttl_words", version: 1, schemaVersion: 2, ownerEmail: "test@example.com",
      tasks: [httpTask("fetch", { uri: target("/count/x"), method: "GET" }, { cacheConfig: { key: "${uri}", ttlInSecond: "ten minutes" } })],
    });
    expect(refused.status).toBe(400);
    expect((await refused.json<{ validationErrors: Array<{ path: string }> }>()).validationErrors.map((issue) => issue.path)).toEqual(["tasks[0].cacheConfig.ttlInSecond"]);
    expect((await api("GET", "/api/metadata/workflow/toc_ttl_words")).status).toBe(404);
  });

  it("refuses cacheConfig on a task type that does not cache, storing nothing", async () => {
    const response = await api("POST", "/api/metadata/workflow", {
      name: "toc_refused", version: 1, schemaVersion: 2, ownerEmail: "test@example.com",
      tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {}, cacheConfig: { key: "k", ttlInSecond: 5 } }],
    });
    expect(response.status).toBe(400);
    expect((await response.json<{ validationErrors: Array<{ path: string }> }>()).validationErrors.map((issue) => issue.path)).toEqual(["tasks[0].cacheConfig"]);
    expect((await api("GET", "/api/metadata/workflow/toc_refused")).status).toBe(404);
  });
});
