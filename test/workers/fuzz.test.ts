import { SELF, env } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, apiOk, httpTask, register, target, waitForIndexRow } from "./helpers";

/** Every table a refused request must leave as it was. */
const TABLES = ["workflow_defs", "executions", "idempotency_keys", "roles", "user_assignments", "api_keys", "access_rules", "secrets", "refresh_tokens", "revoked_tokens"];

async function snapshot(): Promise<string> {
  const parts: string[] = [];
  for (const table of TABLES) {
    const { results } = await env.DB.prepare(`SELECT * FROM ${table} ORDER BY 1`).all();
    parts.push(`${table}:${JSON.stringify(results)}`);
  }
  return parts.join("\n");
}

async function send(method: string, path: string, body: string | undefined, contentType = "application/json"): Promise<Response> {
  const headers: Record<string, string> = { "x-api-key": ADMIN_KEY };
  if (body !== undefined) headers["content-type"] = contentType;
  return SELF.fetch(`https://conductor.test${path}`, { method, headers, body: body ?? null });
}

/** JSON values, objects with the keys each schema reads, and mutations of a valid body. */
const anyJson = fc.jsonValue({ maxDepth: 4 });
const keyed = (keys: string[]) => fc.dictionary(fc.constantFrom(...keys), fc.oneof(anyJson, fc.string(), fc.integer(), fc.constant(null)), { maxKeys: keys.length });
const garbage = fc.oneof(fc.string({ maxLength: 200 }), anyJson.map((value) => JSON.stringify(value)), fc.constant("{"), fc.constant("[1,"), fc.constant("\u0000"));

describe("fuzzing every request schema through the router", () => {
  it("random and mutated bodies never cause a 500, and a refused request changes nothing", async () => {
    await register({ name: "fuzz_target", tasks: [httpTask("a", { uri: target("/echo/a"), method: "GET" }, { asyncComplete: true })] });
    const workflowId = await apiOk<string>("POST", "/api/workflow/fuzz_target", {});
    // Its search row is written in the background: let it land before comparing snapshots.
    await waitForIndexRow(workflowId, "RUNNING");
    const endpoints: Array<[string, string, fc.Arbitrary<unknown>]> = [
      ["POST", "/api/metadata/workflow", keyed(["name", "version", "tasks", "ownerEmail", "schemaVersion", "outputParameters", "timeoutSeconds", "inputParameters"])],
      ["PUT", "/api/metadata/workflow", fc.array(keyed(["name", "version", "tasks", "ownerEmail"]), { maxLength: 3 })],
      ["POST", "/api/workflow", keyed(["name", "version", "input", "correlationId", "priority", "taskToDomain", "idempotencyKey", "idempotencyStrategy"])],
      ["POST", "/api/workflow/fuzz_target?version=abc", anyJson],
      ["POST", `/api/workflow/${workflowId}/rerun`, keyed(["reRunFromTaskId", "workflowInput", "taskInput"])],
      ["POST", "/api/tasks", keyed(["workflowInstanceId", "taskId", "status", "outputData", "reasonForIncompletion"])],
      ["POST", `/api/tasks/${workflowId}/a/BOGUS`, anyJson],
      ["POST", "/api/security/roles", keyed(["name", "description", "permissions"])],
      ["PUT", "/api/security/users/fuzz-user/roles", keyed(["roles", "directPermissions"])],
      ["POST", "/api/security/rules", keyed(["apiPath", "methods", "requiredPermissions"])],
      ["POST", "/api/security/token", keyed(["keyId", "keySecret", "grant_type", "client_id", "client_secret"])],
      ["POST", "/api/security/token/refresh", keyed(["refreshToken"])],
      ["PUT", "/api/secrets/fuzz_secret", fc.oneof(anyJson.filter((value) => typeof value !== "string"), fc.constant(""))],
    ];
    for (const [method, path, arbitrary] of endpoints) {
      await fc.assert(
        fc.asyncProperty(fc.oneof(arbitrary.map((value) => JSON.stringify(value)), garbage), async (body) => {
          const before = await snapshot();
          const response = await send(method, path, body);
          const text = await response.text();
          expect(response.status, `${method} ${path} ${body.slice(0, 200)} → ${text.slice(0, 300)}`).toBeLessThan(500);
          if (response.status >= 400) {
            expect(JSON.parse(text)).toMatchObject({ status: response.status, error: expect.any(String), message: expect.any(String) });
            expect(await snapshot(), `${method} ${path} was refused but changed stored state`).toBe(before);
          }
        }),
        { numRuns: 25, seed: 20261123 },
      );
    }
    // The execution itself is untouched by all of the above.
    const workflow = await apiOk<{ status: string; tasks: Array<{ status: string }> }>("GET", `/api/workflow/${workflowId}`);
    expect(workflow.status).toBe("RUNNING");
    // 325 requests, each between two snapshots of every table: 12 s on a quiet machine, past the default 20 s on a busy one (seen in CI).
  }, 90_000);

  it("random paths and methods never cause a 500", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH"),
        fc.array(fc.oneof(fc.constantFrom("api", "workflow", "metadata", "tasks", "security", "secrets", "search", "webhook", "execute", "rerun"), fc.webSegment(), fc.uuid()), { maxLength: 6 }),
        async (method, segments) => {
          const path = `/${segments.map((segment) => encodeURIComponent(segment)).join("/")}`;
          const response = await send(method, path, method === "GET" ? undefined : "{}");
          expect(response.status, `${method} ${path}`).toBeLessThan(500);
        },
      ),
      { numRuns: 100, seed: 20261123 },
    );
  });

  it("a malformed percent escape in any path parameter is a 400 VALIDATION_ERROR that changes nothing", async () => {
    const bad = "%E0%A4%A";
    const id = crypto.randomUUID();
    const before = await snapshot();
    for (const [method, path] of [
      ["POST", `/api/tasks/${bad}/ref/COMPLETED`],
      ["POST", `/api/tasks/${id}/${bad}/COMPLETED`],
      ["POST", `/api/tasks/${id}/${bad}/COMPLETED/sync`],
      ["POST", `/api/tasks/webhook/${id}/${bad}/${id}`],
      ["GET", `/api/metadata/workflow/${bad}`],
      ["DELETE", `/api/metadata/workflow/${bad}/1`],
      ["GET", `/api/workflow/${bad}`],
      ["POST", `/api/workflow/${bad}`],
      ["DELETE", `/api/security/rules/${bad}`],
    ] as const) {
      const response = await send(method, path, method === "POST" ? "{}" : undefined);
      const text = await response.text();
      expect(response.status, `${method} ${path} → ${text}`).toBe(400);
      expect((JSON.parse(text) as { error: string }).error, `${method} ${path}`).toBe("VALIDATION_ERROR");
    }
    expect(await snapshot()).toBe(before);
  });
});
