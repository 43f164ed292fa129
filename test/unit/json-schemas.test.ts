// The JSON schema checks of the schema registry, in Node (the workers tests run the same in workerd).
import { describe, expect, it } from "vitest";
import { schemaIssues, schemaProblem } from "../../src/worker/json-schemas";

const order = {
  type: "object",
  required: ["orderId"],
  properties: { orderId: { type: "integer", minimum: 1 }, "a/b": { type: "string" }, items: { type: "array", items: { $ref: "#/$defs/item" } } },
  $defs: { item: { type: "object", required: ["sku"], properties: { sku: { type: "string" } } } },
};

describe("JSON schema checks", () => {
  it("reports each problem once, at its path under the given one, never the summaries above it", () => {
    expect(schemaIssues(order, { orderId: 3, items: [{ sku: "a" }] }, "input")).toEqual([]);
    const issues = schemaIssues(order, { orderId: 0, "a/b": 1, items: [{ sku: "a" }, {}] }, "input");
    expect(issues.map((issue) => issue.path).sort()).toEqual(["input.a/b", "input.items[1]", "input.orderId"]);
    expect(issues.find((issue) => issue.path === "input.orderId")?.message).toContain("less than 1");
    expect(schemaIssues(order, "not an object", "input")).toEqual([{ path: "input", message: expect.stringContaining("object") }]);
  });

  it("takes a schema it can check, and says why it cannot check another", () => {
    expect(schemaProblem(order)).toBeUndefined();
    expect(schemaProblem({})).toBeUndefined();
    expect(schemaProblem({ type: "objekt" })).toContain("#/type");
    expect(schemaProblem({ properties: { a: { required: "a" } } })).toContain("#/properties/a/required");
    expect(schemaProblem({ allOf: {} })).toContain("#/allOf");
    expect(schemaProblem({ $ref: "https://example.com/s.json" })).toContain("outside this one");
    expect(schemaProblem({ $ref: "#/$defs/missing" })).toContain("Unresolved");
  });

  it("answers a schema that cannot be applied with one problem saying so, not an exception", () => {
    const dangling = { type: "object", properties: { a: { $ref: "#/$defs/missing" } } };
    expect(schemaIssues(dangling, { a: 1 }, "input")).toEqual([{ path: "input", message: expect.stringContaining("could not be applied") }]);
  });
});
