// What a start reads from D1 (src/worker/task-defs.ts withTaskDefs): the latest version of each child named without
// one, the task definitions its tasks follow and the schemas they enforce, each set in one statement whatever its size.
// D1 allows 50 queries per Worker invocation on Workers Free (developers.cloudflare.com/d1/platform/limits/).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { DefinitionRepository } from "../../src/worker/definitions";
import { SchemaRepository } from "../../src/worker/json-schemas";
import { TaskDefRepository } from "../../src/worker/task-defs";
import { apiOk, neverTakenSwitch, register, statementsOf } from "./helpers";

const noop = [{ name: "n", taskReferenceName: "n", type: "NOOP" }];

describe("a start's look-ups in D1", () => {
  it("reads the latest versions of 60 children named without one, 12 task definitions and their 12 enforced schemas in a few statements, cold caches and all (one statement a child and a schema before: 75, past Workers Free's 50)", async () => {
    const children = Array.from({ length: 60 }, (_, index) => `sl_child_${index}`);
    const taskNames = Array.from({ length: 12 }, (_, index) => `sl_task_${index}`);
    const definition: JsonObject = {
      name: "sl_flow",
      // Never taken: nothing starts, only the start's look-ups are counted. sl_unregistered has no definition.
      tasks: [
        neverTakenSwitch([
          ...[...children, "sl_unregistered"].map((child) => ({ name: child, taskReferenceName: child, type: "SUB_WORKFLOW", subWorkflowParam: { name: child } })),
          { name: "pinned", taskReferenceName: "pinned", type: "SUB_WORKFLOW", subWorkflowParam: { name: "sl_child_0", version: 1 } },
          ...taskNames.map((name) => ({ name, taskReferenceName: name, type: "SIMPLE" })),
        ]),
      ],
    };
    const schemas = () => taskNames.map((name) => ({ name: `${name}_in`, data: { type: "object" } }));
    for (const child of children) await register({ name: child, tasks: noop });
    await register({ name: "sl_child_0", version: 2, tasks: noop });
    await apiOk("POST", "/api/schema", schemas());
    await apiOk("POST", "/api/metadata/taskdefs", taskNames.map((name) => ({ name, ownerEmail: "t@example.com", enforceSchema: true, inputSchema: { name: `${name}_in` } })));
    // Written again, each write forgetting what this isolate cached of it (the registrations above read the schemas
    // and task definitions): the start finds every cache cold, as in a fresh isolate.
    for (const child of children.slice(1)) await register({ name: child, tasks: noop });
    await register({ name: "sl_child_0", version: 2, tasks: noop });
    await apiOk("POST", "/api/metadata/taskdefs", taskNames.map((name) => ({ name, ownerEmail: "t@example.com", enforceSchema: true, inputSchema: { name: `${name}_in` } })));
    await apiOk("POST", "/api/schema", schemas());
    await register(definition);

    let workflowId = "";
    const statements = await statementsOf(async () => (workflowId = await apiOk<string>("POST", "/api/workflow/sl_flow", {})));
    // The definition, the children's latest versions, the task definitions, the schemas: 4 here (the caller's key read
    // too in a fresh isolate). Before: the definition, 61 children, the task definitions and 12 schemas, 75.
    expect(statements.length, statements.join("\n")).toBeLessThanOrEqual(6);

    // Each child named without a version runs its latest (sl_child_0's 2); one pinned stays so; one not registered stays unversioned.
    const started = await apiOk<JsonObject>("GET", `/api/workflow/${workflowId}`);
    const cases = ((started["workflowDefinition"] as JsonObject)["tasks"] as JsonObject[])[0]!["decisionCases"] as Record<string, JsonObject[]>;
    const versions = Object.fromEntries(cases["never"]!.filter((task) => task["type"] === "SUB_WORKFLOW").map((task) => [task["taskReferenceName"], (task["subWorkflowParam"] as JsonObject)["version"]]));
    expect(versions).toEqual({ ...Object.fromEntries(children.map((child) => [child, 1])), sl_child_0: 2, sl_unregistered: undefined, pinned: 1 });
  });
});

describe("the repositories' look-ups of many names in one statement", () => {
  it("DefinitionRepository.findLatestMany answers what find answers of each name: its latest version, none for a name not registered", async () => {
    await register({ name: "sl_many_a", version: 1, tasks: noop });
    await register({ name: "sl_many_a", version: 3, tasks: noop });
    await register({ name: "sl_many_b", version: 2, tasks: noop });
    const repository = new DefinitionRepository(env.DB);
    const found = await repository.findLatestMany(["sl_many_a", "sl_many_b", "sl_many_none", "sl_many_a"]);
    expect(Object.fromEntries([...found].map(([name, definition]) => [name, definition.version]))).toEqual({ sl_many_a: 3, sl_many_b: 2 });
    // Cached as find caches it: the same object, read again without D1.
    expect(await statementsOf(async () => expect(await repository.find("sl_many_a")).toBe(found.get("sl_many_a")))).toEqual([]);
    expect(await statementsOf(async () => expect(await repository.find("sl_many_none")).toBeNull())).toEqual([]);
    // A registration forgets it: the next look-up reads the new latest.
    await register({ name: "sl_many_b", version: 4, tasks: noop });
    expect((await repository.findLatestMany(["sl_many_b"])).get("sl_many_b")?.version).toBe(4);
  });

  it("SchemaRepository.findMany answers each reference's schema: its version, or the latest without one; null for one not registered", async () => {
    await apiOk("POST", "/api/schema", { name: "sl_schema", version: 1, data: { title: "one" } });
    await apiOk("POST", "/api/schema", { name: "sl_schema", version: 2, data: { title: "two" } });
    await apiOk("POST", "/api/schema", { name: "sl_other", version: 5, data: { title: "five" } });
    const found = await new SchemaRepository(env.DB).findMany([
      { name: "sl_schema", version: 1 },
      { name: "sl_schema" },
      { name: "sl_other" },
      { name: "sl_other", version: 4 },
      { name: "sl_nowhere" },
    ]);
    expect(Object.fromEntries([...found].map(([key, schema]) => [key, schema === null ? null : [schema.version, schema.data["title"]]]))).toEqual({
      "sl_schema@1": [1, "one"],
      "sl_schema@latest": [2, "two"],
      "sl_other@latest": [5, "five"],
      "sl_other@4": null,
      "sl_nowhere@latest": null,
    });
  });

  it("TaskDefRepository.findMany reads 150 names (past D1's 100 bound parameters a statement) in one statement", async () => {
    const names = Array.from({ length: 150 }, (_, index) => `sl_many_task_${index}`);
    await apiOk("POST", "/api/metadata/taskdefs", names.slice(0, 2).map((name) => ({ name, ownerEmail: "t@example.com" })));
    let found = new Map<string, unknown>();
    const statements = await statementsOf(async () => (found = await new TaskDefRepository(env.DB).findMany(names)));
    expect(statements).toHaveLength(1);
    expect([...found.keys()]).toEqual(names.slice(0, 2));
  });
});

describe("a registration's look-ups in D1", () => {
  it("reads the schemas named by 60 task definitions registered together, or by 60 workflow definitions, in one statement, cold caches and all (one per schema before: 60 and more, past Workers Free's 50)", async () => {
    const names = Array.from({ length: 60 }, (_, index) => `sl_reg_${index}`);
    await apiOk("POST", "/api/schema", names.map((name) => ({ name: `${name}_in`, data: { type: "object" } })));
    const taskDefs = names.map((name) => ({ name, ownerEmail: "t@example.com", enforceSchema: true, inputSchema: { name: `${name}_in` } }));
    const taskStatements = await statementsOf(() => apiOk("POST", "/api/metadata/taskdefs", taskDefs));
    expect(taskStatements.filter((sql) => sql.includes("json_schemas")), taskStatements.join("\n")).toHaveLength(1);

    // Saved again: a schema write clears the schema cache.
    await apiOk("POST", "/api/schema", names.map((name) => ({ name: `${name}_in`, data: { type: "object" } })));
    const definitions = names.map((name) => ({ name: `${name}_flow`, version: 1, schemaVersion: 2, ownerEmail: "t@example.com", inputSchema: { name: `${name}_in` }, tasks: noop }));
    const flowStatements = await statementsOf(() => apiOk("PUT", "/api/metadata/workflow", definitions));
    expect(flowStatements.filter((sql) => sql.includes("json_schemas")), flowStatements.join("\n")).toHaveLength(1);

    // What is missing is still named at its place, one problem each.
    const refused = await apiOk<{ validationErrors: Array<{ path: string; message: string }> }>(
      "POST",
      "/api/metadata/taskdefs",
      [taskDefs[0], { ...taskDefs[1], outputSchema: { name: "sl_reg_nowhere" } }, { ...taskDefs[2], inputSchema: { name: "sl_reg_nowhere", version: 2 } }],
      400,
    );
    expect(refused.validationErrors.map((issue) => issue.path)).toEqual(["[1].outputSchema", "[2].inputSchema"]);
    const refusedFlows = await apiOk<{ validationErrors: Array<{ path: string; message: string }> }>(
      "PUT",
      "/api/metadata/workflow",
      [definitions[0], { ...definitions[1], outputSchema: { name: "sl_reg_nowhere" } }, { ...definitions[2], inputSchema: { name: "sl_reg_nowhere" } }],
      400,
    );
    expect(refusedFlows.validationErrors.map((issue) => issue.path)).toEqual(["[1].outputSchema", "[2].inputSchema"]);
  });
});

describe("a registration's look-ups of task definition templates", () => {
  it("reads the task definitions whose inputTemplate 60 workflow definitions registered together rely on in one statement (one a definition before, past Workers Free's 50)", async () => {
    const names = Array.from({ length: 60 }, (_, index) => `sl_tpl_${index}`);
    // Each HTTP task's request is in its task definition's inputTemplate (Conductor's WorkflowTaskTypeConstraint reads it there).
    await apiOk("POST", "/api/metadata/taskdefs", names.map((name) => ({ name, ownerEmail: "t@example.com", inputTemplate: { http_request: { uri: "https://example.com/", method: "GET" } } })));
    const definitions = names.map((name) => ({ name: `${name}_flow`, version: 1, schemaVersion: 2, ownerEmail: "t@example.com", tasks: [{ name, taskReferenceName: "fetch", type: "HTTP", inputParameters: {} }] }));
    const statements = await statementsOf(() => apiOk("PUT", "/api/metadata/workflow", definitions));
    expect(statements.filter((sql) => sql.includes("task_defs")), statements.join("\n")).toHaveLength(1);

    // One whose template does not hold the request is still refused at its place.
    const refused = await apiOk<{ validationErrors: Array<{ path: string }> }>(
      "PUT",
      "/api/metadata/workflow",
      [definitions[0], { ...definitions[1], tasks: [{ name: "sl_tpl_none", taskReferenceName: "fetch", type: "HTTP", inputParameters: {} }] }],
      400,
    );
    expect(new Set(refused.validationErrors.map((issue) => issue.path.split(".")[0]))).toEqual(new Set(["[1]"]));
  });
});

describe("names D1 stores otherwise than they were given", () => {
  it("a start finds the task definition and the latest child version of a name holding a lone surrogate, as one look-up a name found them (D1 stores the name's bytes, read back as replacement characters)", async () => {
    // "\ud800" in a JSON body is a lone surrogate. Registration refuses such a name now (no URL can name it), but one
    // stored before that rule still runs: the rows are written here as they were then, registered under a plain name
    // and renamed in D1.
    const odd = "sl_odd_\ud800";
    const storedAs = async (plain: string) => {
      await env.DB.prepare("UPDATE workflow_defs SET name = ?1, definition = json_set(definition, '$.name', ?1) WHERE name = ?2").bind(odd, plain).run();
      await env.DB.prepare("UPDATE task_defs SET name = ?1, definition = json_set(definition, '$.name', ?1) WHERE name = ?2").bind(odd, plain).run();
    };
    await register({ name: "sl_odd_v1", tasks: noop });
    await storedAs("sl_odd_v1");
    await register({ name: "sl_odd_flow", tasks: [{ name: "sl_odd_simple", taskReferenceName: "simple", type: "SIMPLE" }, { name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: odd } }] });
    // A SIMPLE task of that name is refused at registration too (no worker could poll it): stored as before the rule.
    // As JSON.stringify wrote it then: the escape "\ud800" as ASCII text.
    await env.DB.prepare("UPDATE workflow_defs SET definition = replace(definition, '\"sl_odd_simple\"', ?1) WHERE name = 'sl_odd_flow'").bind(JSON.stringify(odd)).run();
    // Written after the parent, behind this isolate's caches: the start reads both from D1.
    await register({ name: "sl_odd_v2", version: 2, tasks: noop });
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "sl_odd_v2", ownerEmail: "t@example.com", retryCount: 7 }]);
    await storedAs("sl_odd_v2");

    const workflowId = await apiOk<string>("POST", "/api/workflow/sl_odd_flow", {});
    const started = await apiOk<JsonObject>("GET", `/api/workflow/${workflowId}`);
    const [simple, child] = (started["workflowDefinition"] as JsonObject)["tasks"] as JsonObject[];
    expect((simple!["taskDefinition"] as JsonObject | undefined)?.["retryCount"]).toBe(7);
    expect((child!["subWorkflowParam"] as JsonObject)["version"]).toBe(2);
  });
});
