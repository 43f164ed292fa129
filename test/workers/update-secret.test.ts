import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { decryptSecret, loadKeyring } from "../../src/worker/secrets/crypto";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, hits, httpTask, register, rowCount, startWorkflow, target, waitFor, type WorkflowJson } from "./helpers";

const ENDED = ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"];

const updateSecret = (ref: string, secrets: JsonObject | string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "UPDATE_SECRET", inputParameters: { _secrets: secrets } });

/** What the secret's stored row decrypts to with the test key (no endpoint returns a value); undefined when none is stored. */
async function storedSecret(name: string): Promise<string | undefined> {
  const row = await env.DB.prepare("SELECT value FROM secrets WHERE name = ?1").bind(name).first<{ value: string }>();
  if (row === null) return undefined;
  const keyring = await loadKeyring(env.SECRETS_ENCRYPTION_KEY);
  if (!keyring.ok) throw new Error(keyring.message);
  return decryptSecret(keyring.keyring, name, row.value);
}

const taskOf = (run: WorkflowJson, ref: string) => run.tasks.find((task) => task.referenceTaskName === ref)!;

describe("UPDATE_SECRET", () => {
  it("writes the token a task fetched as a secret (creating it, then replacing it), which the next task sends; the API never shows it", async () => {
    // A login that hands out the token it is sent (a real one would make it up).
    await register({
      name: "rotate_token",
      tasks: [
        httpTask("login", { uri: target("/echo/login?token=${workflow.input.token}"), method: "GET" }),
        updateSecret("store", { secretKey: "rotated_api_token", secretValue: "${login.output.response.body.query.token}" }),
        httpTask("use", { uri: target("/count/${workflow.secrets.rotated_api_token}"), method: "GET" }),
      ],
    });
    expect(await storedSecret("rotated_api_token")).toBeUndefined();
    for (const token of [`first-${crypto.randomUUID()}`, `second-${crypto.randomUUID()}`]) {
      const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/rotate_token/1", { input: { token } });
      expect(run.status, String(run["reasonForIncompletion"])).toBe("COMPLETED");
      expect(taskOf(run, "store")).toMatchObject({ status: "COMPLETED", inputData: { _secrets: "***" }, outputData: { secretKey: "rotated_api_token" } });
      expect(await storedSecret("rotated_api_token")).toBe(token);
      // The next task sent the value just written.
      expect(await hits(token)).toBe(1);
      // Neither the task that wrote it nor the one that sent it shows it (the login's own echo does: it is its output).
      const stored = await apiOk<WorkflowJson>("GET", `/api/workflow/${run.workflowId}?includeTasks=true`);
      for (const shown of [run, stored]) expect(JSON.stringify([taskOf(shown, "store"), taskOf(shown, "use")])).not.toContain(token);
    }
    expect(await apiOk<string[]>("GET", "/api/secrets")).toContain("rotated_api_token");
  });

  it("copies another secret's value (read live, never stored), and fails for good on a key or value that is not one, writing nothing", async () => {
    const value = `copied-${crypto.randomUUID()}`;
    await apiOk("PUT", "/api/secrets/copy_source", JSON.stringify(value));
    await register({ name: "copy_secret", tasks: [updateSecret("copy", { secretKey: "${workflow.input.key}", secretValue: "${workflow.secrets.copy_source}" })] });
    const copied = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/copy_secret/1", { input: { key: "copy_target" } });
    expect(copied.status, String(copied["reasonForIncompletion"])).toBe("COMPLETED");
    expect(await storedSecret("copy_target")).toBe(value);

    const secrets = await rowCount("secrets");
    const badKey = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/copy_secret/1", { input: { key: "no spaces/allowed" } });
    expect(taskOf(badKey, "copy")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining('_secrets.secretKey resolved to "no spaces/allowed", not a secret name') });
    await register({ name: "empty_secret", tasks: [updateSecret("empty", { secretKey: "never_written", secretValue: "${workflow.input.value}" })] });
    for (const given of [{}, { value: "" }, { value: 42 }, { value: "x".repeat(64 * 1024 + 1) }]) {
      const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/empty_secret/1", { input: given });
      expect(run.status).toBe("FAILED");
      expect(String(taskOf(run, "empty").reasonForIncompletion)).toMatch(/^_secrets\.secretValue (resolved to no text|is 65537 bytes)/);
    }
    expect(await rowCount("secrets")).toBe(secrets);
    expect(await storedSecret("never_written")).toBeUndefined();
  });

  it("refuses at registration a key that is no secret name, a value written in the definition, or no _secrets, storing nothing", async () => {
    const definitions = await rowCount("workflow_defs");
    const cases: Array<[JsonObject | string, string]> = [
      [{ secretKey: "bad key", secretValue: "${workflow.input.v}" }, "tasks[0].inputParameters._secrets.secretKey"],
      [{ secretKey: "fine", secretValue: "written-in-the-definition" }, "tasks[0].inputParameters._secrets.secretValue"],
      [{ secretKey: "fine" }, "tasks[0].inputParameters._secrets.secretValue"],
      ["${workflow.input.secrets}", "tasks[0].inputParameters._secrets"],
    ];
    for (const [secrets, path] of cases) {
      const response = await api("POST", "/api/metadata/workflow", { name: "bad_update_secret", version: 1, schemaVersion: 2, tasks: [updateSecret("write", secrets)] });
      const body = (await response.json()) as { validationErrors?: Array<{ path: string }> };
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(body.validationErrors?.map((issue) => issue.path)).toContain(path);
    }
    expect(await rowCount("workflow_defs")).toBe(definitions);
  });

  it("writing a secret is the secrets API's right: a definition holding one (in a branch, in an inline child, a DYNAMIC's too) needs SYSTEM_ADMIN on *, and a refusal stores nothing", async () => {
    const author = ["WORKFLOW_WRITE", "WORKFLOW_ADMIN", "WORKFLOW_READ"].map((action) => ({ action, scope: "workflow:usec_*" }));
    // Using every secret is not writing them.
    const user = await createUser("update-secret-author", { directPermissions: [...author, { action: "METADATA_ADMIN", scope: "*" }, { action: "SYSTEM_ADMIN", scope: "secret:*" }] });
    const write = updateSecret("write", { secretKey: "usec_owned", secretValue: "${workflow.input.v}" });
    const definitions = [
      { name: "usec_plain", tasks: [write] },
      { name: "usec_branch", tasks: [{ name: "pick", taskReferenceName: "pick", type: "SWITCH", evaluatorType: "value-param", expression: "k", inputParameters: { k: "a" }, decisionCases: { a: [write] } }] },
      { name: "usec_inline", tasks: [{ name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "usec_child", workflowDefinition: { name: "usec_child", version: 1, schemaVersion: 2, tasks: [write] } } }] },
      // A DYNAMIC's child written in place (Orkes' subWorkflowDefinition) runs as one when it chooses a SUB_WORKFLOW.
      { name: "usec_dynamic", tasks: [{ name: "pick", taskReferenceName: "pick", type: "DYNAMIC", dynamicTaskNameParam: "run", inputParameters: { run: "${workflow.input.run}", subWorkflowDefinition: { name: "usec_dyn_child", version: 1, schemaVersion: 2, tasks: [write] } } }] },
    ].map((definition) => ({ version: 1, schemaVersion: 2, ...definition }));
    const stored = await rowCount("workflow_defs");
    for (const definition of definitions) {
      const refused = await call("POST", "/api/metadata/workflow", orkes(user.token), definition);
      const body = (await refused.json()) as { error: string; message: string };
      expect(refused.status, JSON.stringify(body)).toBe(403);
      expect(body.message).toContain("writing a secret needs SYSTEM_ADMIN on *");
      // Nor may it be run inline, which registers it as it starts.
      expect((await call("POST", "/api/workflow", orkes(user.token), { name: definition.name, workflowDef: definition, input: { v: "x" } })).status).toBe(403);
    }
    expect(await rowCount("workflow_defs")).toBe(stored);
    expect(await storedSecret("usec_owned")).toBeUndefined();

    // One the admin registered runs for whoever may start it: the registrant chose the secret and where its value comes from.
    await register(definitions[0]!);
    const workflowId = await (await call("POST", "/api/workflow/usec_plain", orkes(user.token), { v: "from-the-starter" })).text();
    expect((await waitFor(workflowId, ENDED)).status).toBe("COMPLETED");
    expect(await storedSecret("usec_owned")).toBe("from-the-starter");
  });

  it("a task chosen as the workflow runs may not be one: a DYNAMIC naming it and a dynamic fork listing it fail for good, writing nothing", async () => {
    await register({
      name: "dynamic_update_secret",
      tasks: [{ name: "pick", taskReferenceName: "pick", type: "DYNAMIC", dynamicTaskNameParam: "taskToRun", inputParameters: { taskToRun: "${workflow.input.type}", _secrets: { secretKey: "dyn_written", secretValue: "${workflow.input.v}" } } }],
    });
    const dynamic = await waitFor(await startWorkflow("dynamic_update_secret", { type: "UPDATE_SECRET", v: "value" }), ENDED);
    expect(dynamic.status).toBe("FAILED");
    expect(String(taskOf(dynamic, "pick").reasonForIncompletion)).toContain("names UPDATE_SECRET, which a DYNAMIC cannot run");

    await register({
      name: "fork_update_secret",
      tasks: [
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { tasks: "${workflow.input.tasks}", inputs: {} }, dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs" },
        { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
      ],
    });
    const forked = await waitFor(await startWorkflow("fork_update_secret", { tasks: [updateSecret("write", { secretKey: "dyn_written", secretValue: "${workflow.input.type}" })], type: "v" }), ENDED);
    expect(forked.status).toBe("FAILED");
    expect(String(taskOf(forked, "fan").reasonForIncompletion)).toContain("write is an UPDATE_SECRET, which a FORK_JOIN_DYNAMIC cannot fork");
    expect(forked.tasks.map((task) => task.referenceTaskName)).toEqual(["fan"]);
    expect(await storedSecret("dyn_written")).toBeUndefined();
  });
});
