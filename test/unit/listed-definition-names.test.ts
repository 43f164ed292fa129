import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { listedDefinitionNames, mayAccessDefinition, mayReadTaskDef, mayReadWorkflowDef } from "../../src/worker/auth/metadata-access";
import { PERMISSIONS, type Grant, type NameFilter } from "../../src/worker/auth/permissions";
import { ACCESS } from "../../src/worker/security/resource-grants";

/** Whether `filter` lets `name` through, as the listing's SQL reads it (bounded-listing's namesLetThrough). */
function letsThrough(filter: NameFilter, name: string): boolean {
  return filter === "every" || filter.names.includes(name) || filter.prefixes.some((prefix) => name.startsWith(prefix));
}

// Scopes near the definitions' own: every one, prefixes of the kind's prefix, of names, exact names, other kinds'.
const scopes = ["*", "w*", "workflow:*", "workflow:", "workflow:a*", "workflow:a_*", "workflow:a", "workflow:ab", "workflow:a*b", "t*", "task:*", "task:a*", "task:ab", "task:b", "tag:a:b", "secret:a"];
const grant = fc.record({ action: fc.constantFrom(...PERMISSIONS), scope: fc.constantFrom(...scopes) }) as fc.Arbitrary<Grant>;
const name = fc.array(fc.constantFrom("a", "b", "_", "*"), { maxLength: 4 }).map((characters) => characters.join(""));

describe("listedDefinitionNames", () => {
  it("lets through exactly the names the listings' own checks let through, for every kind and access", () => {
    fc.assert(
      fc.property(fc.array(grant, { maxLength: 6 }), name, fc.constantFrom("workflow" as const, "task" as const), fc.constantFrom(...ACCESS), (grants, definition, kind, access) => {
        const mayRead = kind === "workflow" ? mayReadWorkflowDef : mayReadTaskDef;
        const listed = mayRead(grants, definition) && mayAccessDefinition(grants, kind, definition, access);
        expect(listedDefinitionNames(grants, kind, access).every((filter) => letsThrough(filter, definition))).toBe(listed);
      }),
      { numRuns: 5_000 },
    );
  });

  it("lets every name through for a holder of every definition, so its listing reads as before", () => {
    expect(listedDefinitionNames([{ action: "METADATA_ADMIN", scope: "*" }], "workflow")).toEqual(["every"]);
    expect(listedDefinitionNames([{ action: "WORKFLOW_READ", scope: "*" }], "task")).toEqual(["every"]);
    expect(listedDefinitionNames([{ action: "TASK_READ", scope: "task:*" }, { action: "TASK_EXECUTE", scope: "t*" }], "task", "EXECUTE")).toEqual(["every", "every"]);
  });
});
