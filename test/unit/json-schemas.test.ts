// The JSON schema checks of the schema registry, in Node (the workers tests run the same in workerd).
import { describe, expect, it } from "vitest";
import { createExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import type { JsonObject, JsonValue, WorkflowDef } from "../../src/engine/model";
import { schemaIssues, schemaProblem } from "../../src/worker/json-schemas";
import { attemptEnds, env, httpGet, taskDefNamed } from "./engine-env";

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

  it("reports a property or item a false schema refuses once, at its path, saying which keyword refused it; a failed then once", () => {
    // Conductor's docs' own example closes its object with additionalProperties: false.
    const closed = { type: "object", properties: { customerId: { type: "string" }, tags: { type: "array", prefixItems: [{ type: "string" }], items: false } }, additionalProperties: false };
    expect(schemaIssues(closed, { customerId: "c", tier: "gold", tags: ["a", "b"] }, "input")).toEqual([
      { path: "input.tags[1]", message: "is not allowed: the array has more items than the schema describes (its items is false)" },
      { path: "input.tier", message: "is not allowed: the schema names no such property (its additionalProperties is false)" },
    ]);
    expect(schemaIssues({ properties: { a: {} }, unevaluatedProperties: false }, { b: 1 }, "input")).toEqual([{ path: "input.b", message: expect.stringContaining("its unevaluatedProperties is false") }]);
    expect(schemaIssues({ if: { properties: { kind: { const: "card" } } }, then: { required: ["pan"] } }, { kind: "card" }, "input")).toEqual([{ path: "input", message: 'Instance does not have required property "pan".' }]);
    expect(schemaIssues({ propertyNames: false }, { a: 1 }, "input")).toEqual([{ path: expect.stringMatching(/^input/), message: "is not an allowed property name: the schema allows none" }]);
    // Where no keyword says more, the validator's words stand.
    expect(schemaIssues(false as unknown as JsonObject, 1, "input")).toEqual([{ path: "input", message: "False boolean schema." }]);
  });

  it("checks the keywords as api.md's Schemas section says: decimals exactly, formats asserted, deep enums, draft 7's definitions", () => {
    const paths = (schema: JsonObject, value: JsonValue) => schemaIssues(schema, value, "input").map((issue) => issue.path);
    const price = { type: "object", properties: { amount: { type: "number", multipleOf: 0.01, exclusiveMinimum: 0 }, count: { type: ["integer", "null"] } } };
    expect(paths(price, { amount: 19.99, count: 1.0 })).toEqual([]);
    expect(paths(price, { amount: 19.999, count: 1.5 })).toEqual(["input.amount", "input.count"]);
    const formats = { properties: { mail: { format: "email" }, at: { format: "date-time" }, id: { format: "uuid" }, link: { format: "uri" }, color: { format: "x-color" } } };
    expect(paths(formats, { mail: "a@example.com", at: "2026-12-07T07:00:00Z", id: "0b7e4c3a-4f1e-4d6b-9a63-2b8f0d1c9e11", link: "https://example.com/a", color: "?" })).toEqual([]);
    expect(paths(formats, { mail: "a@", at: "2026-12-07", id: "x", link: "/relative", color: "?" })).toEqual(["input.mail", "input.at", "input.id", "input.link"]);
    expect(paths({ enum: [{ a: [1, { b: 2 }] }] }, { a: [1, { b: 2 }] })).toEqual([]);
    expect(paths({ const: { x: 1, y: 2 } }, { y: 2, x: 1 })).toEqual([]);
    expect(paths({ definitions: { sku: { type: "string", pattern: "^\\p{Lu}{2}-\\d+$" } }, items: { $ref: "#/definitions/sku" }, uniqueItems: true }, ["ÄB-1", "ab-2", "ÄB-1"])).toEqual(["input[1]", "input"]);
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

  it("refuses at save a pattern the validator cannot compile and a bound it would misread, wherever they stand", () => {
    // Compiled in unicode mode only when a string meets them: saved, such a schema refused every start that reached it.
    const pasted = { type: "object", properties: { id: { type: "string", pattern: "^[\\w-.]+$" } } };
    expect(schemaIssues(pasted, { id: "a.b" }, "input")[0]?.message).toContain("could not be applied");
    expect(schemaProblem(pasted)).toMatch(/^#\/properties\/id\/pattern must be a regular expression \(ECMA-262, unicode mode.*Invalid/);
    expect(schemaProblem({ items: { pattern: "^\\_$" } })).toContain("#/items/pattern must be a regular expression");
    expect(schemaProblem({ properties: { tags: { patternProperties: { "^a/(": {} } } } })).toContain("#/properties/tags/patternProperties/^a~1( must be a regular expression");
    expect(schemaProblem({ pattern: 5 })).toContain("#/pattern must be a regular expression (a string)");
    // Draft 4's boolean exclusiveMinimum is compared as the bound 1 by a draft 2020-12 validator: 0.5 refused, 2 taken.
    expect(schemaProblem({ properties: { amount: { minimum: 0, exclusiveMinimum: true } } })).toContain("#/properties/amount/exclusiveMinimum must be a number, the bound itself");
    expect(schemaProblem({ multipleOf: 0 })).toContain("#/multipleOf must be a number greater than 0");
    expect(schemaProblem({ maximum: "10" })).toContain("#/maximum must be a number");
    // What a pattern means in unicode mode is taken: a property escape, a class with an escaped '-'.
    expect(schemaProblem({ properties: { name: { pattern: "^\\p{L}[\\p{L} \\-]*$" }, amount: { exclusiveMinimum: 0, multipleOf: 0.01 } }, patternProperties: { "^x-": {} } })).toBeUndefined();
    expect(schemaIssues({ pattern: "^\\p{L}+$" }, "é", "input")).toEqual([]);
  });

  it("refuses at save a $ref cycle that never reaches into the value, and takes recursion through a property or item", () => {
    // Saved, it overflowed the validator's stack for every value that reached it: each start refused, 'could not be applied'.
    const loop = { type: "object", $defs: { a: { $ref: "#/$defs/b" }, b: { allOf: [{ $ref: "#/$defs/a" }] } }, properties: { x: { $ref: "#/$defs/a" } } };
    expect(schemaIssues(loop, { x: 1 }, "input")[0]?.message).toContain("could not be applied");
    expect(schemaProblem(loop)).toBe("#/$defs/a refers back to itself through $ref without reaching into a property or item of the value (checking one would never end)");
    expect(schemaProblem({ anyOf: [{ type: "string" }, { $ref: "#" }] })).toContain("# refers back to itself");
    expect(schemaProblem({ definitions: { "a/b": { not: { $ref: "#/definitions/a~1b" } } }, items: { $ref: "#/definitions/a~1b" } })).toContain("#/definitions/a~1b refers back");
    // A tree: each level is a property of the one above, so the check ends with the value.
    const tree: JsonObject = { $ref: "#/$defs/node", $defs: { node: { type: "object", properties: { value: { type: "integer" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }, anyOf: [{ required: ["value"] }, { $ref: "#/$defs/leaf" }] }, leaf: { required: ["children"] } } };
    expect(schemaProblem(tree)).toBeUndefined();
    expect(schemaIssues(tree, { value: 1, children: [{ value: 2, children: [{ value: "x" }] }] }, "input").map((issue) => issue.path)).toEqual(["input.children[0].children[0].value"]);
  });

  it("answers a schema that cannot be applied with one problem saying so, not an exception", () => {
    const dangling = { type: "object", properties: { a: { $ref: "#/$defs/missing" } } };
    expect(schemaIssues(dangling, { a: 1 }, "input")).toEqual([{ path: "input", message: expect.stringContaining("could not be applied") }]);
  });
});

describe("task schemas in the decider", () => {
  const inputSchema = { type: "object", required: ["n"], properties: { n: { type: "integer" } } };
  const outputSchema = { type: "object", required: ["ok"] };
  function run(input: JsonObject, kept: WorkflowDef["schemas"], enforceSchema: boolean | "absent" = true) {
    const taskDefinition = { ...taskDefNamed("call"), inputSchema: { name: "in" }, outputSchema: { name: "out" }, ...(enforceSchema === "absent" ? {} : { enforceSchema }) };
    const definition: WorkflowDef = { name: "checked", version: 1, schemaVersion: 2, tasks: [{ ...httpGet("call"), inputParameters: { uri: "https://example.com/x", method: "GET", n: "${workflow.input.n}" }, taskDefinition }], ...(kept === undefined ? {} : { schemas: kept }) };
    const at = env(1_000);
    return decide(createExecution({ workflowId: "wf-1", definition, input }, 1_000), { type: "start" }, at);
  }
  const kept = [{ key: "in@latest", data: inputSchema }, { key: "out@latest", data: outputSchema }];

  it("fails a task whose resolved input does not match before anything runs it, and one whose output does not match", () => {
    const refused = run({ n: "x" }, kept);
    expect(refused.state.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    expect(refused.state.tasks[0]!.reasonForIncompletion).toContain("input does not match its schema in: input.n");
    expect(refused.effects.some((effect) => effect.kind === "dispatch")).toBe(false);

    const started = run({ n: 1 }, kept);
    expect(started.state.tasks[0]!.status).toBe("IN_PROGRESS");
    const wrong = attemptEnds(started.state, "call", 2_000, "COMPLETED", { status: 200 });
    expect(wrong.state.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", outputData: { status: 200 } });
    expect(wrong.state.status).toBe("FAILED");
    expect(attemptEnds(started.state, "call", 2_000, "COMPLETED", { ok: true }).state.status).toBe("COMPLETED");
  });

  it("fails a task whose schema was not registered at the start, and leaves unchecked one the execution keeps nothing for", () => {
    const missing = run({ n: 1 }, [{ key: "in@latest", data: null }]);
    expect(missing.state.tasks[0]!.reasonForIncompletion).toContain("schema in is not registered");
    expect(run({ n: "x" }, undefined).state.tasks[0]!.status).toBe("IN_PROGRESS");
  });

  it("does not check the values a secret is written into, which the stored input holds as ***; the others still are", () => {
    const secretSchema = {
      type: "object",
      properties: {
        n: { type: "integer" },
        token: { type: "string", pattern: "^sk_" },
        headers: { type: "object", properties: { Authorization: { type: "string", pattern: "^Bearer sk_" } } },
        keys: { type: "array", items: { type: "string", minLength: 10 } },
      },
    };
    const inputParameters = { uri: "https://example.com/x", method: "GET", n: "${workflow.input.n}", token: "${workflow.secrets.token}", headers: { Authorization: "Bearer ${workflow.secrets.token}" }, keys: ["${workflow.secrets.token}"] };
    const decideWith = (input: JsonObject) => {
      const taskDefinition = { ...taskDefNamed("call"), inputSchema: { name: "in" }, enforceSchema: true };
      const definition: WorkflowDef = { name: "checked", version: 1, schemaVersion: 2, tasks: [{ ...httpGet("call"), inputParameters, taskDefinition }], schemas: [{ key: "in@latest", data: secretSchema }] };
      return decide(createExecution({ workflowId: "wf-1", definition, input }, 1_000), { type: "start" }, env(1_000));
    };
    const started = decideWith({ n: 1 });
    expect(started.state.tasks[0]!.inputData).toMatchObject({ token: "***", headers: { Authorization: "Bearer ***" }, keys: ["***"] });
    expect(started.state.tasks[0]!.status).toBe("IN_PROGRESS");
    const refused = decideWith({ n: "x" });
    expect(refused.state.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    // Only the value no secret wrote: no "(and 3 more)" for the stand-ins.
    expect(refused.state.tasks[0]!.reasonForIncompletion).toBe('The task\'s input does not match its schema in: input.n: Instance type "string" is invalid. Expected "integer".');
  });

  it("refuses a property written from a secret that the schema does not allow at all (additionalProperties: false): its presence is the template's, not the secret's", () => {
    const schema = { type: "object", properties: { uri: { type: "string" }, method: { type: "string" } }, additionalProperties: false };
    const taskDefinition = { ...taskDefNamed("call"), inputSchema: { name: "in" }, enforceSchema: true };
    const inputParameters = { uri: "https://example.com/x", method: "GET", token: "${workflow.secrets.token}" };
    const definition: WorkflowDef = { name: "checked", version: 1, schemaVersion: 2, tasks: [{ ...httpGet("call"), inputParameters, taskDefinition }], schemas: [{ key: "in@latest", data: schema }] };
    const task = decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, env(1_000)).state.tasks[0]!;
    expect(task).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("input.token: is not allowed") });
  });

  it("checks a value whose text reads anything beside secrets: a caller could otherwise choose what skips the schema", () => {
    const schema = { type: "object", properties: { key: { type: "string", pattern: "^sk_" }, mixed: { type: "string", pattern: "^[0-9]+-" } } };
    const decideWith = (inputParameters: JsonObject, input: JsonObject) => {
      const taskDefinition = { ...taskDefNamed("call"), inputSchema: { name: "in" }, enforceSchema: true };
      const definition: WorkflowDef = { name: "checked", version: 1, schemaVersion: 2, tasks: [{ ...httpGet("call"), inputParameters: { uri: "https://example.com/x", method: "GET", ...inputParameters }, taskDefinition }], schemas: [{ key: "in@latest", data: schema }] };
      return decide(createExecution({ workflowId: "wf-1", definition, input }, 1_000), { type: "start" }, env(1_000)).state.tasks[0]!;
    };
    // A secret in one branch of a condition, the caller's value in the other: the caller's is checked.
    const branch = decideWith({ key: "${workflow.input.prod ? workflow.secrets.token : workflow.input.key}" }, { prod: false, key: "anything" });
    expect(branch).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("input.key") });
    // A caller's value beside a secret in one text: checked, as stored.
    const mixed = decideWith({ mixed: "${workflow.input.n}${workflow.secrets.token}" }, { n: "x" });
    expect(mixed).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("input.mixed") });
  });

  it("checks nothing for a task definition whose enforceSchema is false or absent, as Conductor's TaskDef flag defaults to false", () => {
    for (const flag of [false, "absent"] as const) {
      const started = run({ n: "x" }, kept, flag);
      expect(started.state.tasks[0]!.status).toBe("IN_PROGRESS");
      expect(attemptEnds(started.state, "call", 2_000, "COMPLETED", { status: 200 }).state.status).toBe("COMPLETED");
    }
  });
});
