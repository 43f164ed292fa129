import { describe, expect, it } from "vitest";
import { authorizeHandingOut } from "../../src/worker/auth/delegation";
import { ApiError } from "../../src/worker/http/errors";

// Handing out grants (src/worker/auth/delegation.ts): only what the caller holds.
describe("handing out grants", () => {
  const refusal = (holder: Array<{ action: string; scope: string }>, scope: string): string | undefined => {
    try {
      authorizeHandingOut(holder as never, [{ action: "WORKFLOW_ADMIN", scope }] as never, "this change");
      return undefined;
    } catch (error) {
      if (error instanceof ApiError) return `${error.status}`;
      throw error;
    }
  };

  it("gives out a tag's grant only to a holder of that tag's grant or of one on *, not of a wildcard covering it by its text", () => {
    // A wildcard like tag* (refused as a scope now, but perhaps stored before) expands to no tag when held.
    for (const scope of ["tag*", "ta*", "t*"]) expect(refusal([{ action: "WORKFLOW_ADMIN", scope }], "tag:team:payroll"), scope).toBe("403");
    expect(refusal([{ action: "WORKFLOW_ADMIN", scope: "tag:team:payroll" }], "tag:team:payroll")).toBeUndefined();
    expect(refusal([{ action: "WORKFLOW_ADMIN", scope: "*" }], "tag:team:payroll")).toBeUndefined();
    expect(refusal([{ action: "WORKFLOW_ADMIN", scope: "tag:team:billing" }], "tag:team:payroll")).toBe("403");
    // Other scopes as before: a prefix wildcard covers what it names.
    expect(refusal([{ action: "WORKFLOW_ADMIN", scope: "workflow:pay*" }], "workflow:payroll")).toBeUndefined();
  });
});
