import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { call } from "./auth-helpers";
import { ADMIN_KEY } from "./helpers";

describe("a deployment whose D1 migrations were not applied", () => {
  it("answers a 500 saying so (and naming no table), its log line the same request id and the hint", async () => {
    // D1 as it is before the migrations: the definitions' table is missing, so D1 itself refuses the statement.
    const database = Object.getPrototypeOf(env.DB) as { prepare: (this: D1Database, sql: string) => D1PreparedStatement };
    const { prepare } = database;
    database.prepare = function (sql) {
      return prepare.call(this, sql.replace(/\bworkflow_defs\b/g, "workflow_defs_not_migrated"));
    };
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const response = await call("GET", "/api/metadata/workflow", { "x-api-key": ADMIN_KEY });
      expect(response.status).toBe(500);
      const answer = await response.json<{ error: string; requestId: string; message: string }>();
      expect(answer.error).toBe("INTERNAL_ERROR");
      expect(answer.message).toContain("the D1 migrations");
      expect(answer.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.message).not.toContain("workflow_defs");
      const line = logged.mock.calls.map((args) => args.map(String).join(" ")).find((found) => found.includes(answer.requestId));
      expect(JSON.parse(line!)).toMatchObject({ msg: "unhandled error", requestId: answer.requestId, error: expect.stringContaining("no such table"), hint: expect.stringContaining("migrations") });
    } finally {
      database.prepare = prepare;
      logged.mockRestore();
    }
    // The tables back, the same request answers.
    expect((await call("GET", "/api/metadata/workflow", { "x-api-key": ADMIN_KEY })).status).toBe(200);
  });
});
