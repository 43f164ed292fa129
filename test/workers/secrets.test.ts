import { SELF, env, runInDurableObject } from "cloudflare:test";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { ExecutionStore } from "../../src/actors/execution-store";
import { decryptSecret, loadKeyring } from "../../src/worker/secrets/crypto";
import { createUser, call as callWith } from "./auth-helpers";
import { api, eventually, hits, httpTask, rowCount, target, waitForIndexRow, type TaskJson, type WorkflowJson } from "./helpers";

/**
 * Every response body this file receives, so the "a secret value never comes back" checks cover
 * all of them (CRUD answers, workflow JSON, search results, callback answers), not just the ones
 * a test happens to look at.
 */
const transcript: string[] = [];
/** Every plaintext value put during this file; none may appear in any response or stored record. */
const plaintexts = new Set<string>();

type Answer = { status: number; text: string; type: string };

/** Calls the service through the real router as the admin, recording the response body. */
async function call(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await api(method, path, body, headers);
  const text = await response.text();
  transcript.push(text);
  return { status: response.status, text, type: response.headers.get("content-type") ?? "" };
}

/** Like {@link call} but fails unless the status is `expected`; returns the parsed JSON (or text). */
async function ok<T = JsonObject>(method: string, path: string, body?: unknown, expected = 200): Promise<T> {
  const answer = await call(method, path, body === undefined ? undefined : JSON.stringify(body));
  if (answer.status !== expected) throw new Error(`${method} ${path} → ${answer.status}, expected ${expected}: ${answer.text}`);
  return (answer.type.includes("json") ? JSON.parse(answer.text) : answer.text) as T;
}

/** Puts a secret as a JSON string (Orkes style), remembering its value for the leak checks. */
async function putSecret(name: string, value: string): Promise<void> {
  plaintexts.add(value);
  const answer = await call("PUT", `/api/secrets/${name}`, JSON.stringify(value));
  expect(answer.status, answer.text).toBe(200);
  expect(answer.text).toBe("");
}

/** A value unlikely to occur anywhere by chance, and safe in a URL path. */
const freshValue = (label: string) => `${label}-${crypto.randomUUID()}`;

async function register(definition: JsonObject): Promise<void> {
  await ok("POST", "/api/metadata/workflow?overwrite=true", { schemaVersion: 2, ownerEmail: "test@example.com", version: 1, ...definition });
}

async function start(name: string): Promise<string> {
  return ok<string>("POST", `/api/workflow/${name}`, {});
}

async function workflowOf(workflowId: string): Promise<WorkflowJson> {
  return ok<WorkflowJson>("GET", `/api/workflow/${workflowId}?includeTasks=true`);
}

/** Polls (bounded) until `until` holds for the workflow; every poll's answer lands in the transcript. */
async function waitUntil(workflowId: string, until: (workflow: WorkflowJson) => boolean, timeoutMs = 10_000): Promise<WorkflowJson> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const workflow = await workflowOf(workflowId);
    if (until(workflow)) return workflow;
    if (Date.now() > deadline) throw new Error(`workflow ${workflowId} did not reach the expected state: ${JSON.stringify(workflow).slice(0, 3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const finished = (workflow: WorkflowJson) => ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"].includes(workflow.status);

/** Polls search until it lists the workflow (the index is written off the hot path). */
async function searchListing(name: string, workflowId: string): Promise<void> {
  await eventually(
    () => ok<{ results: Array<{ workflowId: string; status: string }> }>("GET", `/api/workflow/search?workflowName=${name}`),
    (result) => result.results.some((row) => row.workflowId === workflowId && row.status !== "RUNNING"),
    `search listing ${workflowId} as finished`,
    10_000,
  );
}

/** Everything an execution stored: its Durable Object's tables and its row in the D1 index (once that shows its status). */
async function storedRecords(workflowId: string): Promise<string> {
  await waitForIndexRow(workflowId, (await workflowOf(workflowId)).status);
  const stub = env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(workflowId.toLowerCase()));
  const local = await runInDurableObject(stub, (_instance, state) =>
    ["workflow", "definition", "tasks", "meta"].map((table) => JSON.stringify(state.storage.sql.exec(`SELECT * FROM ${table}`).toArray())).join("\n"),
  );
  const indexed = await env.DB.prepare("SELECT * FROM executions WHERE workflow_id = ?1").bind(workflowId).all();
  expect(indexed.results).toHaveLength(1);
  return `${local}\n${JSON.stringify(indexed.results)}`;
}

/** Fails when any recorded response body contains `value`. */
function expectNeverAnswered(value: string): void {
  const leaking = transcript.filter((text) => text.includes(value));
  expect(leaking, "responses containing the secret value").toEqual([]);
}

const storedValue = async (name: string) => (await env.DB.prepare("SELECT value FROM secrets WHERE name = ?1").bind(name).first<{ value: string }>())?.value;

/** What a stored row decrypts to with the test key: proves what was stored without any endpoint returning it. */
async function decryptedValue(name: string): Promise<string | undefined> {
  const keyring = await loadKeyring(env.SECRETS_ENCRYPTION_KEY);
  if (!keyring.ok) throw new Error(keyring.message);
  const stored = await storedValue(name);
  return stored === undefined ? undefined : decryptSecret(keyring.keyring, name, stored);
}

afterAll(() => {
  // Belt and braces over the per-test checks: no value put in this file came back in any answer.
  expect(transcript.length).toBeGreaterThan(0);
  for (const value of plaintexts) expectNeverAnswered(value);
});

describe("secrets API", () => {
  it("puts a value as a JSON string or as text/plain, lists names sorted, answers exists, and deletes", async () => {
    await putSecret("zeta.key", freshValue("zeta"));
    const plainValue = `${freshValue("plain")} with space\tand tab`;
    plaintexts.add(plainValue);
    const plain = await call("PUT", "/api/secrets/Alpha_1", plainValue, { "content-type": "text/plain; charset=utf-8" });
    expect(plain).toMatchObject({ status: 200, text: "" });
    // Every label of UTF-8 a JSON body is read under, as a JSON body's (unicode-1-1-utf-8 was a 415 here).
    const labelled = freshValue("labelled");
    plaintexts.add(labelled);
    expect(await call("PUT", "/api/secrets/labelled_1", labelled, { "content-type": "text/plain; charset=unicode-1-1-utf-8" })).toMatchObject({ status: 200 });
    expect(await decryptedValue("labelled_1")).toBe(labelled);
    expect((await call("DELETE", "/api/secrets/labelled_1")).status).toBe(200);
    await putSecret("mid-name", freshValue("mid"));
    // Each form stores exactly the value sent: the JSON string unquoted, the text byte for byte.
    expect(await decryptedValue("Alpha_1")).toBe(plainValue);
    expect(await decryptedValue("mid-name")).toMatch(/^mid-[0-9a-f-]{36}$/);

    const list = await call("GET", "/api/secrets");
    expect(list.status).toBe(200);
    expect(list.type).toContain("application/json");
    expect(JSON.parse(list.text)).toEqual(["Alpha_1", "mid-name", "zeta.key"]);

    const exists = await call("GET", "/api/secrets/zeta.key/exists");
    expect(exists).toMatchObject({ status: 200, text: "true" });
    expect(exists.type).toContain("application/json");
    expect(await call("GET", "/api/secrets/nope/exists")).toMatchObject({ status: 200, text: "false" });

    // Putting again replaces the value (still one row).
    await putSecret("zeta.key", freshValue("zeta-2"));
    expect(await rowCount("secrets")).toBe(3);

    expect(await call("DELETE", "/api/secrets/zeta.key")).toMatchObject({ status: 200, text: "" });
    expect(await call("GET", "/api/secrets/zeta.key/exists")).toMatchObject({ status: 200, text: "false" });
    const again = await call("DELETE", "/api/secrets/zeta.key");
    expect(again.status).toBe(404);
    expect(JSON.parse(again.text)).toMatchObject({ status: 404, error: "NOT_FOUND" });
    expect(JSON.parse((await call("GET", "/api/secrets")).text)).toEqual(["Alpha_1", "mid-name"]);
    for (const name of ["Alpha_1", "mid-name"]) expect((await call("DELETE", `/api/secrets/${name}`)).status).toBe(200);
    expect(await rowCount("secrets")).toBe(0);
  });

  it("carry tags (the official SecretClient's setSecretTags, getSecretTags, deleteSecretTags), listed with their names by secrets-v2; deleting a secret drops them", async () => {
    await putSecret("tagged.key", freshValue("tagged"));
    await putSecret("plain.key", freshValue("plain"));
    const tags = (name: string) => ok<Array<{ key: string; value: string }>>("GET", `/api/secrets/${name}/tags`);
    expect(await tags("tagged.key")).toEqual([]);
    // PUT adds (a key given again takes the new value); DELETE removes those given (key and value).
    await ok("PUT", "/api/secrets/tagged.key/tags", [{ key: "team", value: "billing" }, { key: "env", value: "dev" }]);
    await ok("PUT", "/api/secrets/tagged.key/tags", [{ key: "env", value: "prod" }]);
    expect(await tags("tagged.key")).toEqual([{ key: "env", value: "prod" }, { key: "team", value: "billing" }]);
    expect(await ok("GET", "/api/secrets-v2")).toEqual([
      { name: "plain.key", tags: [] },
      { name: "tagged.key", tags: [{ key: "env", value: "prod" }, { key: "team", value: "billing" }] },
    ]);
    // Orkes' POST listing: every name.
    expect(await ok("POST", "/api/secrets")).toEqual(["plain.key", "tagged.key"]);
    // Secrets' tags are their admins' business: not in the list of tags every metadata reader sees.
    expect(await ok<Array<{ key: string }>>("GET", "/api/metadata/tags")).not.toContainEqual({ key: "team", value: "billing" });

    // Refused, changing nothing: a malformed list, a secret that does not exist, a caller who is no SYSTEM_ADMIN.
    expect((await call("PUT", "/api/secrets/tagged.key/tags", JSON.stringify([{ key: "" }]))).status).toBe(400);
    expect((await call("PUT", "/api/secrets/nope/tags", JSON.stringify([{ key: "a", value: "b" }]))).status).toBe(404);
    expect((await call("GET", "/api/secrets/nope/tags")).status).toBe(404);
    const reader = await createUser("secret-tag-reader", { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }] });
    for (const [method, path] of [["GET", "/api/secrets/tagged.key/tags"], ["PUT", "/api/secrets/tagged.key/tags"], ["GET", "/api/secrets-v2"]] as const) {
      const refused = await callWith(method, path, { "x-api-key": reader.apiKey }, method === "PUT" ? [{ key: "team", value: "x" }] : undefined);
      expect(refused.status, `${method} ${path}`).toBe(403);
    }
    expect(await rowCount("metadata_tags")).toBe(2);
    expect(await tags("tagged.key")).toEqual([{ key: "env", value: "prod" }, { key: "team", value: "billing" }]);

    await ok("DELETE", "/api/secrets/tagged.key/tags", [{ key: "env", value: "prod" }, { key: "team", value: "other" }]);
    expect(await tags("tagged.key")).toEqual([{ key: "team", value: "billing" }]);
    // Deleting the secret deletes its tags: a secret of that name put again starts with none.
    await ok("DELETE", "/api/secrets/tagged.key");
    expect(await rowCount("metadata_tags")).toBe(0);
    await putSecret("tagged.key", freshValue("tagged-again"));
    expect(await tags("tagged.key")).toEqual([]);
    for (const name of ["tagged.key", "plain.key"]) await ok("DELETE", `/api/secrets/${name}`);
  });

  it.each([
    ["a space", "has%20space"],
    ["a slash", "a%2Fb"],
    ["a non-ASCII letter", "caf%C3%A9"],
    ["a semicolon", "semi%3Bcolon"],
    ["129 characters", "n".repeat(129)],
    ["a broken escape", "bad%zz"],
  ])("refuses a name with %s (400 on every route) and writes nothing", async (_label, name) => {
    await putSecret("existing", freshValue("existing"));
    const before = await rowCount("secrets");
    for (const [method, path, body] of [
      ["PUT", `/api/secrets/${name}`, JSON.stringify("v")],
      ["GET", `/api/secrets/${name}/exists`, undefined],
      ["DELETE", `/api/secrets/${name}`, undefined],
    ] as const) {
      const answer = await call(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(400);
      expect(JSON.parse(answer.text)).toMatchObject({ status: 400, error: "VALIDATION_ERROR", validationErrors: [{ path: "name" }] });
    }
    expect(await rowCount("secrets")).toBe(before);
  });

  it("takes a value as Conductor's Java client sends it: the raw text, labelled application/json, whatever it looks like", async () => {
    const number = String(100_000_000 + Math.floor(Math.random() * 899_999_999));
    const raws = [freshValue("java-raw"), number, "true", "null", JSON.stringify({ type: "service_account", key: freshValue("key") }), JSON.stringify([freshValue("item")])];
    for (const raw of raws) {
      // Answers say "true" and "null" for other reasons: only values that cannot occur by chance are watched for.
      if (raw.length > 4) plaintexts.add(raw);
      const answer = await call("PUT", "/api/secrets/java_sent", raw, { "content-type": "application/json" });
      expect(answer, raw).toMatchObject({ status: 200, text: "" });
      expect(await decryptedValue("java_sent"), raw).toBe(raw);
    }
    // One JSON string is its content, as the other clients send a value.
    await putSecret("java_sent", "quoted-by-the-client");
    expect(await decryptedValue("java_sent")).toBe("quoted-by-the-client");
    // With no Content-Type at all, as the JavaScript client's retry after a refreshed token sends it: read as JSON.
    const untyped = freshValue("untyped");
    plaintexts.add(untyped);
    const response = await SELF.fetch("https://conductor.test/api/secrets/java_sent", {
      method: "PUT",
      headers: { "x-api-key": "test-admin:test-secret-0123456789" },
      body: new TextEncoder().encode(JSON.stringify(untyped)),
    });
    expect(response.status).toBe(200);
    expect(await decryptedValue("java_sent")).toBe(untyped);
  });

  it("accepts a 128-character name and every allowed character", async () => {
    const name = `${"a".repeat(120)}Z9_.-xyz`;
    expect(name).toHaveLength(128);
    await putSecret(name, freshValue("long-name"));
    expect((await call("GET", `/api/secrets/${name}/exists`)).text).toBe("true");
  });

  it("refuses empty, invalid and wrongly typed values (400/415) without writing or echoing anything", async () => {
    await putSecret("keep", freshValue("keep"));
    const original = await storedValue("keep");
    const before = await rowCount("secrets");
    const cases: Array<[string, string, string, number, string]> = [
      ["empty JSON string", JSON.stringify(""), "application/json", 400, "VALIDATION_ERROR"],
      ["empty text", "", "text/plain", 400, "VALIDATION_ERROR"],
      ["no body", "", "application/json", 400, "VALIDATION_ERROR"],
      ["XML", "<v>leaky-xml-value</v>", "application/xml", 415, "UNSUPPORTED_MEDIA_TYPE"],
      ["form", "value=leaky-form-value", "application/x-www-form-urlencoded", 415, "UNSUPPORTED_MEDIA_TYPE"],
      ["text in Latin-1", "leaky-latin1-value", "text/plain; charset=iso-8859-1", 415, "UNSUPPORTED_MEDIA_TYPE"],
    ];
    for (const [label, body, type, status, error] of cases) {
      const answer = await call("PUT", "/api/secrets/keep", body, { "content-type": type });
      expect(answer.status, label).toBe(status);
      expect(JSON.parse(answer.text), label).toMatchObject({ status, error });
      expect(answer.text, label).not.toMatch(/leaky/);
    }
    // Invalid UTF-8 as text/plain.
    const bytes = await SELF.fetch("https://conductor.test/api/secrets/keep", {
      method: "PUT",
      headers: { "x-api-key": "test-admin:test-secret-0123456789", "content-type": "text/plain" },
      body: new Uint8Array([0x61, 0xff, 0xfe, 0x62]),
    });
    expect(bytes.status).toBe(400);
    transcript.push(await bytes.text());
    expect(await rowCount("secrets")).toBe(before);
    expect(await storedValue("keep")).toBe(original);
  });

  it("caps a value at 64 KiB (400) and a body at the request limit (413), writing nothing", async () => {
    const before = await rowCount("secrets");
    const tooLong = await call("PUT", "/api/secrets/big", "x".repeat(64 * 1024 + 1), { "content-type": "text/plain" });
    expect(tooLong.status).toBe(400);
    expect(JSON.parse(tooLong.text)).toMatchObject({ error: "VALIDATION_ERROR", message: expect.stringContaining("65536") });
    // Multi-byte characters count as bytes: 21,846 × 3 bytes > 64 KiB though fewer characters.
    expect((await call("PUT", "/api/secrets/big", JSON.stringify("€".repeat(21_846)))).status).toBe(400);
    const huge = await call("PUT", "/api/secrets/big", JSON.stringify("y".repeat(1024 * 1024 + 1)));
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.text)).toMatchObject({ status: 413, error: "PAYLOAD_TOO_LARGE" });
    expect(await rowCount("secrets")).toBe(before);
    // Exactly 64 KiB is fine.
    const exact = await call("PUT", "/api/secrets/big", "x".repeat(64 * 1024), { "content-type": "text/plain" });
    expect(exact.status).toBe(200);
    expect(await rowCount("secrets")).toBe(before + 1);
    expect(await decryptedValue("big")).toBe("x".repeat(64 * 1024));
  });

  it("answers SecretClient's clearLocalCache and clearRedisCache: there is no cache of values to clear", async () => {
    // An empty map: the Python client reads one.
    for (const cache of ["clearLocalCache", "clearRedisCache"]) expect(await call("GET", `/api/secrets/${cache}`), cache).toMatchObject({ status: 200, text: "{}" });
    expect(await call("GET", "/api/secrets/clearLocalCache", undefined, { "x-api-key": "" })).toMatchObject({ status: 401 });
  });

  it("never returns a value: Orkes' value route is a 501 that says so, and unauthenticated callers get 401 and change nothing", async () => {
    await putSecret("hidden", "hidden-value-123");
    const read = await call("GET", "/api/secrets/hidden");
    expect(read.status).toBe(501);
    expect(JSON.parse(read.text)).toMatchObject({ status: 501, error: "NOT_IMPLEMENTED", message: expect.stringContaining("/exists") });
    const before = await storedValue("hidden");
    for (const [method, path] of [
      ["GET", "/api/secrets"],
      ["PUT", "/api/secrets/hidden"],
      ["GET", "/api/secrets/hidden/exists"],
      ["DELETE", "/api/secrets/hidden"],
    ] as const) {
      const response = await SELF.fetch(`https://conductor.test${path}`, { method, headers: { "content-type": "application/json" }, body: method === "PUT" ? '"overwritten"' : null });
      const text = await response.text();
      transcript.push(text);
      expect(response.status, `${method} ${path}`).toBe(401);
    }
    expect(await storedValue("hidden")).toBe(before);
    expectNeverAnswered("hidden-value-123");
  });
});

describe("encryption at rest", () => {
  it("stores only v1:<iv>:<ciphertext>; equal values encrypt differently; replacing keeps create_time", async () => {
    const value = freshValue("at-rest");
    await putSecret("rest_a", value);
    await putSecret("rest_b", value);
    const a = await env.DB.prepare("SELECT * FROM secrets WHERE name = 'rest_a'").first<{ value: string; create_time: number; update_time: number }>();
    const b = await storedValue("rest_b");
    for (const stored of [a!.value, b!]) {
      expect(stored).toMatch(/^v1:[A-Za-z0-9+/]+={0,2}:[A-Za-z0-9+/]+={0,2}$/);
      expect(stored).not.toContain(value);
      expect(stored).not.toContain(btoa(value));
      expect(atob(stored.split(":")[1]!)).toHaveLength(12);
    }
    expect(a!.value).not.toBe(b);
    // The same value put again under the same name also gets a new ciphertext.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await putSecret("rest_a", value);
    const replaced = await env.DB.prepare("SELECT * FROM secrets WHERE name = 'rest_a'").first<{ value: string; create_time: number; update_time: number }>();
    expect(replaced!.value).not.toBe(a!.value);
    expect(replaced!.create_time).toBe(a!.create_time);
    expect(replaced!.update_time).toBeGreaterThan(a!.update_time);
  });

  it("a ciphertext moved to another name does not decrypt: the task fails naming the secret, and the log names it without the value", async () => {
    const good = freshValue("moved-good");
    const other = freshValue("moved-other");
    await putSecret("moved_src", good);
    await putSecret("moved_dst", other);
    await env.DB.prepare("UPDATE secrets SET value = (SELECT value FROM secrets WHERE name = 'moved_src') WHERE name = 'moved_dst'").run();
    await register({
      name: "secret_moved",
      // Also references a good secret, so a log line that carried decrypted values would be caught below.
      tasks: [httpTask("call", { uri: target("/count/moved-${workflow.secrets.moved_dst}"), method: "HEAD", headers: { "X-Good": "${workflow.secrets.moved_src}" } })],
    });
    await register({
      name: "secret_unmoved",
      tasks: [httpTask("call", { uri: target("/count/unmoved-${workflow.secrets.moved_src}"), method: "HEAD" })],
    });
    const logged = vi.spyOn(console, "error");
    try {
      const moved = await waitUntil(await start("secret_moved"), finished);
      expect(moved.status).toBe("FAILED");
      expect(moved.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "Task input references an unknown secret: secret 'moved_dst' is not defined" });
      expect(await hits(`moved-${good}`)).toBe(0);
      expect(await hits(`moved-${other}`)).toBe(0);
      const lines = logged.mock.calls.map((args) => args.map(String).join(" "));
      expect(lines.some((line) => line.includes("moved_dst") && line.includes("could not be decrypted"))).toBe(true);
      for (const line of lines) {
        expect(line).not.toContain(good);
        expect(line).not.toContain(other);
      }
    } finally {
      logged.mockRestore();
    }
    // Control: the ciphertext still decrypts under its own name.
    const unmoved = await waitUntil(await start("secret_unmoved"), finished);
    expect(unmoved.status).toBe("COMPLETED");
    expect(await hits(`unmoved-${good}`)).toBe(1);
  });
});

describe("secrets at run time", () => {
  it("a secret compared, negated or used as a condition is refused at registration: stored input would disagree with what is sent, one bit per probe", async () => {
    const refused = await call(
      "POST",
      "/api/metadata/workflow?overwrite=true",
      JSON.stringify({
        name: "secret_compared",
        version: 1,
        schemaVersion: 2,
        tasks: [httpTask("call", { uri: target("/echo"), method: "POST", body: { lt: "${workflow.secrets.cmp < workflow.input.probe}" } })],
      }),
    );
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text)).toMatchObject({
      validationErrors: [{ path: "tasks[0].inputParameters.body.lt", message: expect.stringMatching(/^workflow\.secrets\.cmp at position 2 .*operand of </) as unknown }],
    });
    expect((await call("GET", "/api/metadata/workflow/secret_compared")).status).toBe(404);
    // As a value it stays usable, including as a branch of ?:.
    await register({ name: "secret_as_value", tasks: [httpTask("call", { uri: target("/echo"), method: "GET", headers: { A: "${workflow.secrets.cmp}", B: "x ${workflow.input.on ? workflow.secrets.cmp : 'none'}" } })] });
  });

  it("a field read inside a secret (${workflow.secrets.creds.user}) is refused at registration: it reads nothing here, where Conductor OSS reads a JSON path", async () => {
    const before = await rowCount("workflow_defs");
    const refused = await call(
      "POST",
      "/api/metadata/workflow",
      JSON.stringify({
        name: "secret_field_read",
        version: 1,
        schemaVersion: 2,
        tasks: [httpTask("call", { uri: target("/echo"), method: "GET", headers: { U: "u=${workflow.secrets.creds.user}", P: "${workflow.input.on ? workflow.secrets.creds['password'] : 'none'}" } })],
      }),
    );
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text)).toMatchObject({
      status: 400,
      error: "VALIDATION_ERROR",
      validationErrors: [
        { path: "tasks[0].inputParameters.headers.U", message: expect.stringMatching(/^a secret is read whole here: `\$\{workflow\.secrets\.creds\}` .*`\.user`/) as unknown },
        { path: "tasks[0].inputParameters.headers.P", message: expect.stringContaining("`.password`") as unknown },
      ],
    });
    expect((await call("GET", "/api/metadata/workflow/secret_field_read")).status).toBe(404);
    expect(await rowCount("workflow_defs")).toBe(before);
  });

  it("a definition an older deploy stored with a field read inside a secret (a D1 row never checked for it) fails that task as it runs, with the words registration answers, sending nothing", async () => {
    const user = freshValue("field-user");
    await putSecret("creds_stored", JSON.stringify({ user }));
    const tasks = [httpTask("call", { uri: target("/count/secret-field-stored"), method: "GET", headers: { U: "u=${workflow.secrets.creds_stored.user}", W: "${workflow.secrets.creds_stored}" } })];
    const now = Date.now();
    const definition = { name: "secret_field_stored", version: 1, schemaVersion: 2, ownerEmail: "test@example.com", tasks, createTime: now, updateTime: now };
    await env.DB.prepare("INSERT INTO workflow_defs (name, version, definition, create_time, update_time) VALUES (?1, 1, ?2, ?3, ?3)").bind(definition.name, JSON.stringify(definition), now).run();
    const registered = await call("POST", "/api/metadata/workflow?overwrite=true", JSON.stringify(definition));
    expect(registered.status).toBe(400);
    const [issue] = (JSON.parse(registered.text) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors;
    expect(issue).toMatchObject({ path: "tasks[0].inputParameters.headers.U", message: expect.stringContaining("a secret is read whole here: `${workflow.secrets.creds_stored}`") as unknown });

    const done = await waitUntil(await start("secret_field_stored"), finished);
    expect(done.status).toBe("FAILED");
    expect(done.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: `Invalid task input: ${issue!.message}` });
    expect(await hits("secret-field-stored")).toBe(0);
    expectNeverAnswered(user);
  });

  it("an HTTP task sends the real value (a changed value from the next run on); input, records, search and answers show only ***", async () => {
    const first = freshValue("api");
    await putSecret("api_token", first);
    await register({
      name: "secret_http",
      tasks: [
        // HEAD: the target's answer has no body, so nothing it echoes can carry the value back (see the echo test below).
        httpTask("call", { uri: target("/count/${workflow.secrets.api_token}"), method: "HEAD", headers: { Authorization: "Bearer ${workflow.secrets.api_token}" } }),
      ],
    });
    const workflowId = await start("secret_http");
    const done = await waitUntil(workflowId, finished);
    expect(done.status).toBe("COMPLETED");
    // The target saw the real value (in the path it counts hits by).
    expect(await hits(first)).toBe(1);
    const task = done.tasks[0]! as TaskJson;
    expect(task.inputData["uri"]).toBe(target("/count/***"));
    expect(task.inputData["headers"]).toEqual({ Authorization: "Bearer ***" });

    // Rotating the value applies to the next dispatch; nothing is cached.
    const second = freshValue("api-rotated");
    await putSecret("api_token", second);
    const rerun = await waitUntil(await start("secret_http"), finished);
    expect(rerun.status).toBe("COMPLETED");
    expect(await hits(second)).toBe(1);
    expect(await hits(first)).toBe(1);

    await searchListing("secret_http", workflowId);
    const searched = await call("GET", `/api/workflow/search?freeText=${first}`);
    expect(JSON.parse(searched.text)).toMatchObject({ totalHits: 0 });
    await ok("GET", "/api/metadata/workflow/secret_http");
    for (const value of [first, second]) {
      expect(await storedRecords(workflowId)).not.toContain(value);
      expect(await storedRecords(rerun.workflowId)).not.toContain(value);
      expectNeverAnswered(value);
    }
  });

  it("a task using a secret, resolved again with the real value when it starts, sends the workflow variables it was scheduled with, not ones updated since", async () => {
    await putSecret("vars_token", freshValue("vars"));
    const initial = freshValue("vars-initial");
    const updated = freshValue("vars-updated");
    await register({
      name: "secret_vars",
      variables: { stage: initial },
      tasks: [
        httpTask(
          "call",
          // Fails once per path: the first attempt fails, and a retry to the same path succeeds.
          { uri: target("/flaky/${workflow.variables.stage}?fail=1"), method: "GET", headers: { Authorization: "Bearer ${workflow.secrets.vars_token}" } },
          { retryCount: 1, retryDelaySeconds: 3600 },
        ),
      ],
    });
    const workflowId = await start("secret_vars");
    const waiting = await waitUntil(workflowId, (workflow) => workflow.tasks[1]?.status === "SCHEDULED");
    const retry = waiting.tasks[1]! as TaskJson;
    expect(retry.inputData["uri"]).toBe(target(`/flaky/${initial}?fail=1`));
    await ok("POST", `/api/workflow/${workflowId}/variables`, { stage: updated });
    // Starts the retry now rather than in an hour.
    await ok("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: retry.taskId, status: "IN_PROGRESS" });
    const done = await waitUntil(workflowId, finished);
    expect([done.status, await hits(initial), await hits(updated)]).toEqual(["COMPLETED", 2, 0]);
    expect((done.tasks[1]! as TaskJson).inputData["uri"]).toBe(target(`/flaky/${initial}?fail=1`));
  });

  // A service that echoes a credential back (as /echo does with its request headers) would put the
  // real value into the task's outputData: the execution object scrubs what a dispatch returns.
  it("a service echoing the secret back does not expose it: the echoed header shows Bearer ***", async () => {
    const value = freshValue("echoed");
    await putSecret("echo_token", value);
    await register({
      name: "secret_echo",
      tasks: [
        httpTask("call", {
          uri: target("/echo/secret"),
          method: "POST",
          headers: { Authorization: "Bearer ${workflow.secrets.echo_token}" },
          contentType: "application/json",
          body: { t: "${workflow.secrets.echo_token}" },
        }),
      ],
    });
    const workflowId = await start("secret_echo");
    const done = await waitUntil(workflowId, finished);
    expect(done.status).toBe("COMPLETED");
    const task = done.tasks[0]! as TaskJson;
    expect(task.inputData["headers"]).toEqual({ Authorization: "Bearer ***" });
    const echo = (task.outputData["response"] as { body: { headers: Record<string, string>; body: string } }).body;
    // The target got the real value: the length it received is that of the real body, not of the masked one.
    expect(Number(echo.headers["content-length"])).toBe(new TextEncoder().encode(JSON.stringify({ t: value })).byteLength);
    expect(echo.headers["authorization"]).toBe("Bearer ***");
    expect(echo.body).toBe(JSON.stringify({ t: "***" }));
    await searchListing("secret_echo", workflowId);
    expect(await storedRecords(workflowId)).not.toContain(value);
    expectNeverAnswered(value);
  });

  it("a failed call whose answer quotes the secret gives a reason with the answer masked, whatever its length", async () => {
    const value = freshValue("quoted");
    await putSecret("quoted_token", value);
    // The answer puts the secret past the reason's 500 characters, where cutting before masking would leave part of it.
    await register({ name: "secret_quoted", tasks: [httpTask("call", { uri: target(`/status/401?say=${"x".repeat(470)}\${workflow.secrets.quoted_token} is not valid`), method: "GET" })] });
    const done = await waitUntil(await start("secret_quoted"), finished);
    expect(done.status).toBe("FAILED");
    const reason = String(done.tasks[0]!["reasonForIncompletion"]);
    expect(reason).toMatch(/^HTTP 401 Unauthorized from the remote service: x{470}/);
    expect(reason).not.toContain(value.slice(0, 8));
    expect(JSON.stringify(done)).not.toContain(value.slice(0, 8));
    expectNeverAnswered(value);
  });

  it("a secret stored with surrounding whitespace (a trailing newline: echo token | put) is sent in a header without it, and masked when echoed", async () => {
    const value = freshValue("newline");
    await putSecret("newline_token", ` ${value}\n`);
    await register({ name: "secret_newline", tasks: [httpTask("call", { uri: target("/echo/newline"), method: "GET", headers: { "X-Api-Key": "${workflow.secrets.newline_token}" } })] });
    const done = await waitUntil(await start("secret_newline"), finished);
    expect(done.status).toBe("COMPLETED");
    const echo = (done.tasks[0]!.outputData["response"] as { body: { headers: Record<string, string> } }).body;
    expect(echo.headers["x-api-key"]).toBe("***");
    expect(JSON.stringify(done)).not.toContain(value);
    expectNeverAnswered(value);
  });

  it("a service completing its asyncComplete HTTP task from outside, echoing the secret it was sent, does not expose it", async () => {
    const value = freshValue("async");
    await putSecret("async_token", value);
    await register({
      name: "secret_async",
      tasks: [httpTask("call", { uri: target("/echo/async"), method: "GET", headers: { Authorization: "Bearer ${workflow.secrets.async_token}" } }, { asyncComplete: true })],
    });
    const workflowId = await start("secret_async");
    await waitUntil(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && Object.keys(workflow.tasks[0].outputData).length > 0);
    // The service got the real value, and reports back quoting it (by reference name, then as a TaskResult's reason).
    expect((await call("POST", `/api/tasks/${workflowId}/call/IN_PROGRESS`, JSON.stringify({ received: `Bearer ${value}` }))).status).toBe(200);
    const taskId = (await workflowOf(workflowId)).tasks[0]!.taskId;
    expect((await call("POST", "/api/tasks", JSON.stringify({ workflowInstanceId: workflowId, taskId, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: `refused ${value}` }))).status).toBe(200);
    const done = await waitUntil(workflowId, finished);
    expect(done.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "refused ***", outputData: { received: "Bearer ***" } });
    expect(await storedRecords(workflowId)).not.toContain(value);
    expectNeverAnswered(value);
  });

  it("a service completing its asyncComplete HTTP task after the secret it was sent was replaced still has the value it quotes masked", async () => {
    const value = freshValue("async-rotated");
    await putSecret("async_rotated_token", value);
    await register({
      name: "secret_async_rotated",
      tasks: [httpTask("call", { uri: target("/echo/async-rotated"), method: "GET", headers: { Authorization: "Bearer ${workflow.secrets.async_rotated_token}" } }, { asyncComplete: true })],
    });
    const workflowId = await start("secret_async_rotated");
    await waitUntil(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && Object.keys(workflow.tasks[0].outputData).length > 0);
    // Rotated while the service holds the value it was sent, which it then quotes in its report.
    await putSecret("async_rotated_token", freshValue("async-rotated-next"));
    expect((await call("POST", `/api/tasks/${workflowId}/call/COMPLETED`, JSON.stringify({ received: `Bearer ${value}` }))).status).toBe(200);
    const done = await waitUntil(workflowId, finished);
    expect(done.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { received: "Bearer ***" } });
    expect(await storedRecords(workflowId)).not.toContain(value);
  });

  it("asking which values a task was handed costs no statement for a task handed none, once the execution holds some", async () => {
    const stub = env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(`given-${crypto.randomUUID()}`));
    const counts = await runInDurableObject(stub, (_instance, state) => {
      const statements: string[] = [];
      const real = state.storage.sql;
      const counted = { exec: (query: string, ...bindings: unknown[]) => (statements.push(query), real.exec(query, ...bindings)) } as unknown as SqlStorage;
      const store = new ExecutionStore(counted);
      store.addGivenSecrets("handed", new Map([["token", "v1:sealed"]]));
      const before = statements.length;
      // A report of each task asks: every other task of an execution where one was handed a secret.
      for (let report = 0; report < 5; report += 1) expect(store.givenSecrets(`plain-${report % 2}`)).toEqual([]);
      const plain = statements.length - before;
      expect(store.givenSecrets("handed")).toEqual([{ name: "token", sealed: "v1:sealed" }]);
      // Woken again: the rows are read back, once.
      const woken = new ExecutionStore(counted);
      const atWake = statements.length;
      for (let report = 0; report < 5; report += 1) expect(woken.givenSecrets("plain")).toEqual([]);
      expect(woken.givenSecrets("handed")).toHaveLength(1);
      return { plain, woken: statements.length - atWake };
    });
    expect(counts).toEqual({ plain: 0, woken: 2 });
  });

  it("a value handed to many tasks (a loop's iterations) is kept once, not once per task", async () => {
    const stub = env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(`given-${crypto.randomUUID()}`));
    const grown = await runInDurableObject(stub, (_instance, state) => {
      const store = new ExecutionStore(state.storage.sql);
      // The stored form of a secret of the largest size (64 KiB, base64 with its IV and tag), and one put after it.
      const sealed = `v1:${"A".repeat(16)}:${"B".repeat(87_400)}`;
      const next = `v1:${"C".repeat(16)}:${"D".repeat(87_400)}`;
      store.addGivenSecrets("first", new Map([["key_file", sealed]]));
      const start = state.storage.sql.databaseSize;
      for (let iteration = 0; iteration < 200; iteration += 1) store.addGivenSecrets(`loop-${iteration}`, new Map([["key_file", sealed]]));
      store.addGivenSecrets("loop-7", new Map([["key_file", next]]));
      expect(store.givenSecrets("loop-199")).toEqual([{ name: "key_file", sealed }]);
      expect(store.givenSecrets("loop-7").map((entry) => entry.sealed).sort()).toEqual([sealed, next]);
      return state.storage.sql.databaseSize - start;
    });
    // 200 copies would be over 17 MB; the one value put since, and 200 references, well under 1 MB.
    expect(grown).toBeLessThan(1_000_000);
  });

  it("an egress refusal of a host a secret gives names it as stored, not as parsed (lower-cased), nor by the rule it met", async () => {
    // EGRESS_DENY holds `localhost`: the URL parser lower-cases the value's host, a shape no scrubbing of it recognises.
    await putSecret("url_host", "LocalHost");
    await register({ name: "secret_host_denied", tasks: [httpTask("call", { uri: "http://${workflow.secrets.url_host}:1/api", method: "GET" })] });
    const workflowId = await start("secret_host_denied");
    const done = await waitUntil(workflowId, finished);
    expect(done.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "egress denied: *** matches an entry in EGRESS_DENY" });
    expect(done["reasonForIncompletion"]).toBe("Task call failed: egress denied: *** matches an entry in EGRESS_DENY");
    expect((await storedRecords(workflowId)).toLowerCase()).not.toContain("localhost");
  });

  // Connection and timeout failures quote the live URL (with the real value): scrubbed the same way.
  it("a failure reason quoting the URL does not expose a secret in it", async () => {
    const value = freshValue("in-url");
    await putSecret("url_key", value);
    // Port 1 on loopback: nothing listens, so the connection is refused at once.
    await register({ name: "secret_url_fail", tasks: [httpTask("call", { uri: "http://127.0.0.1:1/api?key=${workflow.secrets.url_key}", method: "GET" })] });
    const workflowId = await start("secret_url_fail");
    const done = await waitUntil(workflowId, finished);
    expect(done.status).toBe("FAILED");
    expect(done.tasks[0]!["reasonForIncompletion"]).toContain("key=***");
    expect(await storedRecords(workflowId)).not.toContain(value);
    expectNeverAnswered(value);
  });

  it("a secret with a line break or a double space, quoted by a failure reason (whose whitespace is run together), shows ***", async () => {
    const value = `${freshValue("line")}\n${freshValue("line2")}  ${freshValue("spaced")}`;
    await putSecret("multi_line", value);
    await register({ name: "secret_multi_line", tasks: [httpTask("call", { uri: target("/status/500?say=${workflow.secrets.multi_line}"), method: "GET" }, { retryCount: 0 })] });
    const workflowId = await start("secret_multi_line");
    const done = await waitUntil(workflowId, finished);
    expect(done.status).toBe("FAILED");
    expect(done["reasonForIncompletion"]).toContain("***");
    const collapsed = value.replace(/\s+/g, " ");
    expect(JSON.stringify(done)).not.toContain(collapsed);
    expect(await storedRecords(workflowId)).not.toContain(collapsed.split(" ")[0]);
    expectNeverAnswered(collapsed);
  });

  it("a secret echoed by a JSON answer as a number (a PIN), or as the object a JSON secret holds, shows ***", async () => {
    const pin = String(100_000_000_000 + Math.floor(Math.random() * 800_000_000_000));
    const keyFile = JSON.stringify({ type: "service_account", private_key: freshValue("PK") });
    await putSecret("pin_number", pin);
    await putSecret("key_file", keyFile);
    await register({
      name: "secret_json_echo",
      tasks: [
        httpTask("pin", { uri: target("/text?type=application/json&body=${workflow.secrets.pin_number}"), method: "GET" }),
        httpTask("key", { uri: target("/text?type=application/json&body=${workflow.secrets.key_file}"), method: "GET" }),
      ],
    });
    const workflowId = await start("secret_json_echo");
    const done = await waitUntil(workflowId, finished);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => (task.outputData["response"] as JsonObject)["body"])).toEqual(["***", { type: "service_account", private_key: "***" }]);
    const privateKey = (JSON.parse(keyFile) as { private_key: string }).private_key;
    for (const leaked of [pin, privateKey]) {
      expect(JSON.stringify(done)).not.toContain(leaked);
      expect(await storedRecords(workflowId)).not.toContain(leaked);
      expectNeverAnswered(leaked);
    }
  });

  // Base64-style values change shape in a URL: percent-encoded in the query sent (and echoed raw), and
  // read back with + as a space. Each of those forms is scrubbed, and a failure quotes the stored URL.
  it("a secret as a uri's password (even one holding @) is sent as Authorization: Basic; input, reasons, records, search and an echo of the header show it only as ***", async () => {
    const value = freshValue("user@info");
    await putSecret("uri_password", value);
    const withUserinfo = (uri: string) => uri.replace("http://", "http://svc:${workflow.secrets.uri_password}@");
    await register({ name: "secret_userinfo_echo", tasks: [httpTask("call", { uri: withUserinfo(target("/echo/userinfo")), method: "GET" })] });
    await register({ name: "secret_userinfo_fail", tasks: [httpTask("call", { uri: withUserinfo("http://127.0.0.1:1/api"), method: "GET" })] });
    const echoedId = await start("secret_userinfo_echo");
    const failedId = await start("secret_userinfo_fail");
    const echoed = await waitUntil(echoedId, finished);
    const failed = await waitUntil(failedId, finished);
    expect(echoed.status).toBe("COMPLETED");
    expect(echoed.tasks[0]!.inputData["uri"]).toBe(withUserinfo(target("/echo/userinfo")).replace("${workflow.secrets.uri_password}", "***"));
    // The service got svc:<value>: its echo of the header is masked where the value's base64 stands.
    const sent = (echoed.tasks[0]!.outputData["response"] as { body: { headers: Record<string, string> } }).body.headers["authorization"];
    expect(sent).toMatch(/^Basic [A-Za-z0-9+/]{4,6}\*\*\*[A-Za-z0-9+/=]{0,4}$/);
    expect(failed.status).toBe("FAILED");
    expect(failed.tasks[0]!["reasonForIncompletion"]).toMatch(/^GET http:\/\/127\.0\.0\.1:1\/api failed before any response/);
    const basic = btoa(`svc:${value}`);
    for (const workflowId of [echoedId, failedId]) {
      await searchListing(workflowId === echoedId ? "secret_userinfo_echo" : "secret_userinfo_fail", workflowId);
      const stored = await storedRecords(workflowId);
      expect(stored).not.toContain(value);
      expect(stored).not.toContain(basic.slice(4, -4));
    }
    expectNeverAnswered(value);
    expectNeverAnswered(basic.slice(4, -4));
  });

  it("a base64-style secret in a URL comes back neither percent-encoded nor decoded: echoes and failure reasons show ***", async () => {
    const value = `Ab+Cd/${crypto.randomUUID().slice(0, 8)}==`;
    await putSecret("url_b64", value);
    const forms = [value, encodeURIComponent(value), value.replace(/\+/g, " ")];
    await register({ name: "secret_b64_echo", tasks: [httpTask("call", { uri: target("/echo/q?key=${workflow.secrets.url_b64}"), method: "GET" })] });
    await register({ name: "secret_b64_fail", tasks: [httpTask("call", { uri: "http://127.0.0.1:1/api?key=${workflow.secrets.url_b64}&x=1", method: "GET" })] });
    const echoedId = await start("secret_b64_echo");
    const failedId = await start("secret_b64_fail");
    const echoed = await waitUntil(echoedId, finished);
    const failed = await waitUntil(failedId, finished);
    expect(echoed.status).toBe("COMPLETED");
    const body = (echoed.tasks[0]!.outputData["response"] as { body: { rawQuery: string; query: Record<string, string> } }).body;
    expect(body.rawQuery).toBe("?key=***");
    expect(body.query).toEqual({ key: "***" });
    expect(failed.status).toBe("FAILED");
    expect(failed.tasks[0]!["reasonForIncompletion"]).toMatch(/^GET http:\/\/127\.0\.0\.1:1\/api\?key=\*\*\*&x=1 failed/);
    for (const workflowId of [echoedId, failedId]) {
      const stored = await storedRecords(workflowId);
      for (const form of forms) expect(stored).not.toContain(form);
    }
    for (const form of forms) expectNeverAnswered(form);
  });

  // A URL parser leaves some characters of a path as they are (| ^) and escapes others ({ }): a shape no
  // encoder gives. A failure reason quotes the URL as stored, where the secret is ***.
  it("a failure reason quotes the URL before secrets are resolved, whatever shape the secret takes in it", async () => {
    const value = `p|q{${crypto.randomUUID().slice(0, 8)}}`;
    await putSecret("url_path", value);
    await register({ name: "secret_path_fail", tasks: [httpTask("call", { uri: "http://127.0.0.1:1/v1/${workflow.secrets.url_path}/x", method: "GET" })] });
    const workflowId = await start("secret_path_fail");
    const done = await waitUntil(workflowId, finished);
    expect(done.status).toBe("FAILED");
    expect(done.tasks[0]!["reasonForIncompletion"]).toMatch(/^GET http:\/\/127\.0\.0\.1:1\/v1\/\*\*\*\/x failed/);
    const parsed = new URL(`http://h/${value}`).pathname.slice(1);
    expect(await storedRecords(workflowId)).not.toContain(parsed);
    // A service echoing the path it got shows *** too.
    await register({ name: "secret_path_echo", tasks: [httpTask("call", { uri: target("/echo/v1/${workflow.secrets.url_path}"), method: "GET" })] });
    const echoed = await waitUntil(await start("secret_path_echo"), finished);
    expect((echoed.tasks[0]!.outputData["response"] as { body: { path: string } }).body.path).toBe("/echo/v1/***");
    expectNeverAnswered(parsed);
  });

  it("a secret with a quote and a backslash, echoed inside a JSON body, comes back masked rather than JSON-escaped", async () => {
    const value = `pa"ss\\${crypto.randomUUID().slice(0, 8)}`;
    await putSecret("json_quote", value);
    const escaped = JSON.stringify(value).slice(1, -1);
    await register({ name: "secret_json_echo", tasks: [httpTask("call", { uri: target("/echo/b"), method: "POST", contentType: "application/json", body: { t: "${workflow.secrets.json_quote}" } })] });
    const workflowId = await start("secret_json_echo");
    const done = await waitUntil(workflowId, finished);
    expect(done.status).toBe("COMPLETED");
    const echo = (done.tasks[0]!.outputData["response"] as { body: { body: string } }).body;
    expect(JSON.parse(echo.body)).toEqual({ t: "***" });
    const stored = await storedRecords(workflowId);
    expect(stored).not.toContain(escaped);
    expectNeverAnswered(escaped);
  });

  it("a WAIT_FOR_WEBHOOK task checks a header against the real value: the right one is accepted, a wrong one refused", async () => {
    const value = freshValue("hook");
    await putSecret("hook_token", value);
    await register({ name: "secret_hook", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: { headers: { "X-Token": "${workflow.secrets.hook_token}" } } }] });
    const workflowId = await start("secret_hook");
    const waiting = await waitUntil(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    const hook = waiting.tasks[0]!;
    expect(hook.inputData["headers"]).toEqual({ "X-Token": "***" });
    const callback = async (token: string) => {
      const response = await SELF.fetch(String(hook["callbackUrl"]), {
        method: "POST",
        headers: { "content-type": "application/json", "x-token": token },
        body: JSON.stringify({ status: "COMPLETED", output: { paid: true } }),
      });
      const text = await response.text();
      transcript.push(text);
      return { status: response.status, text };
    };
    for (const wrong of ["***", `${value}x`, value.slice(0, -1), ""]) {
      const refused = await callback(wrong);
      expect(refused.status, `token ${wrong === "" ? "(empty)" : "variant"}`).toBe(401);
      expect(JSON.parse(refused.text)).toMatchObject({ status: 401, message: expect.stringContaining("X-Token") });
    }
    expect((await workflowOf(workflowId)).tasks[0]!.status).toBe("IN_PROGRESS");
    const accepted = await callback(value);
    expect(accepted.status).toBe(200);
    const done = await waitUntil(workflowId, finished);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[0]!.outputData).toEqual({ paid: true });
    expect(await storedRecords(workflowId)).not.toContain(value);
    expectNeverAnswered(value);
  });

  it("a WAIT_FOR_WEBHOOK callback quoting the secret its header was checked against (a token echoed in its payload) is stored masked", async () => {
    const value = freshValue("hook-echo");
    await putSecret("hook_echo_token", value);
    await register({ name: "secret_hook_echo", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: { headers: { "X-Token": "${workflow.secrets.hook_echo_token}" } } }] });
    const workflowId = await start("secret_hook_echo");
    const waiting = await waitUntil(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    const response = await SELF.fetch(String(waiting.tasks[0]!["callbackUrl"]), {
      method: "POST",
      headers: { "content-type": "application/json", "x-token": value },
      body: JSON.stringify({ status: "FAILED", output: { reason: `rejected for ${value}`, token: value, event: { auth: `Bearer ${value}` } } }),
    });
    expect(response.status).toBe(200);
    const done = await waitUntil(workflowId, finished);
    expect(done.tasks[0]).toMatchObject({ reasonForIncompletion: "rejected for ***", outputData: { reason: "rejected for ***", token: "***", event: { auth: "Bearer ***" } } });
    expect(await storedRecords(workflowId)).not.toContain(value);
  });

  it("rerun with taskInput sends that input as given, also when the task's definition uses a secret; a secret named in taskInput is never resolved", async () => {
    const value = freshValue("rerun");
    await putSecret("rerun_token", value);
    await register({ name: "secret_rerun_input", tasks: [httpTask("call", { uri: target("/echo/original"), method: "GET", headers: { "X-Tok": "${workflow.secrets.rerun_token}" } })] });
    const workflowId = await start("secret_rerun_input");
    const first = await waitUntil(workflowId, finished);
    expect((first.tasks[0]!.outputData["body"] as JsonObject)["path"]).toBe("/echo/original");
    const taskId = first.tasks[0]!.taskId;
    const rerunFrom = async (taskInput: JsonObject) => {
      const endTime = (await workflowOf(workflowId)).tasks[0]!["endTime"];
      await ok("POST", `/api/workflow/${workflowId}/rerun`, { reRunFromTaskId: taskId, taskInput });
      return waitUntil(workflowId, (workflow) => finished(workflow) && workflow.tasks[0]!["endTime"] !== endTime);
    };

    const replaced = await rerunFrom({ uri: target("/echo/replaced"), method: "GET" });
    expect(replaced.status).toBe("COMPLETED");
    expect(replaced.tasks[0]!.inputData).toEqual({ uri: target("/echo/replaced"), method: "GET" });
    const echo = replaced.tasks[0]!.outputData["body"] as JsonObject;
    expect(echo["path"]).toBe("/echo/replaced");
    expect(echo["headers"]).not.toHaveProperty("x-tok");

    // Whoever may rerun may not choose where a secret goes: taskInput is data (as in Conductor), sent literally.
    const literal = await rerunFrom({ uri: target("/echo/literal"), method: "GET", headers: { "X-Tok": "${workflow.secrets.rerun_token}" } });
    expect(literal.status).toBe("COMPLETED");
    const literalEcho = literal.tasks[0]!.outputData["body"] as JsonObject;
    expect((literalEcho["headers"] as JsonObject)["x-tok"]).toBe("${workflow.secrets.rerun_token}");
    expect(await hits(value)).toBe(0);
    expectNeverAnswered(value);
  });

  it("a missing or deleted secret fails the HTTP task with a reason naming it, and the service is never called", async () => {
    await register({ name: "secret_missing", tasks: [httpTask("call", { uri: target("/count/missing-secret"), method: "GET", headers: { Authorization: "Bearer ${workflow.secrets.never_defined}" } })] });
    const missing = await waitUntil(await start("secret_missing"), finished);
    expect(missing.status).toBe("FAILED");
    expect(missing.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "Task input references an unknown secret: secret 'never_defined' is not defined" });
    expect(await hits("missing-secret")).toBe(0);

    await putSecret("short_lived", freshValue("short"));
    await register({ name: "secret_deleted", tasks: [httpTask("call", { uri: target("/count/deleted-secret"), method: "GET", headers: { "X-Key": "${workflow.secrets.short_lived}" } })] });
    expect((await waitUntil(await start("secret_deleted"), finished)).status).toBe("COMPLETED");
    expect(await hits("deleted-secret")).toBe(1);
    expect((await call("DELETE", "/api/secrets/short_lived")).status).toBe(200);
    const deleted = await waitUntil(await start("secret_deleted"), finished);
    expect(deleted.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("'short_lived'") });
    expect(await hits("deleted-secret")).toBe(1);
  });
});
