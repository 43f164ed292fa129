import { describe, expect, it } from "vitest";
import { call } from "./auth-helpers";
import { ADMIN_KEY, loggedFailure, whilePreparing } from "./helpers";

describe("a deployment whose D1 migrations were not applied", () => {
  it("answers a 500 saying so (and naming no table), its log line the same request id and the hint", async () => {
    // D1 as it is before the migrations: the definitions' table is missing, so D1 itself refuses the statement.
    const unmigrated = (sql: string, prepare: (sql: string) => D1PreparedStatement) => prepare(sql.replace(/\bworkflow_defs\b/g, "workflow_defs_not_migrated"));
    const { status, answer, line, lines } = await whilePreparing(unmigrated, () => loggedFailure(() => call("GET", "/api/metadata/workflow", { "x-api-key": ADMIN_KEY })));
    expect(status).toBe(500);
    expect(answer.error).toBe("INTERNAL_ERROR");
    expect(answer.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.message).toContain("the D1 migrations");
    expect(answer.message).not.toContain("workflow_defs");
    expect(line, lines.join("\n")).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ msg: "unhandled error", requestId: answer.requestId, error: expect.stringContaining("no such table"), hint: expect.stringContaining("migrations") });
    // The tables back, the same request answers.
    expect((await call("GET", "/api/metadata/workflow", { "x-api-key": ADMIN_KEY })).status).toBe(200);
  });
});
