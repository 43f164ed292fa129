/**
 * Orkes' schema registry (`/api/schema`) and a workflow definition's `inputSchema`: starts whose input does not match
 * are refused. Through the real router, objects and D1.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, hits, httpTask, register, target, waitFor, type WorkflowJson } from "./helpers";

const ORDER_SCHEMA: JsonObject = {
  type: "object",
  required: ["orderId"],
  properties: { orderId: { type: "integer", minimum: 1 }, items: { type: "array", items: { type: "object", required: ["sku"], properties: { sku: { type: "string" } } } } },
};

async function problems(response: Response, status = 400): Promise<Array<{ path: string; message: string }>> {
  expect(response.status).toBe(status);
  return ((await response.json()) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors;
}

describe("the schema registry (/api/schema)", () => {
  it("saves, lists, reads (latest or a version), versions and deletes schemas", async () => {
    expect((await api("POST", "/api/schema", { name: "js_order", version: 1, type: "JSON", data: ORDER_SCHEMA })).status).toBe(200);
    // A list, as Orkes' save takes; newVersion puts it after the latest.
    expect((await api("POST", "/api/schema?newVersion=true", [{ name: "js_order", type: "JSON", data: { ...ORDER_SCHEMA, required: ["orderId", "items"] } }])).status).toBe(200);
    expect(await apiOk("GET", "/api/schema/js_order")).toMatchObject({ name: "js_order", version: 2, type: "JSON", data: { required: ["orderId", "items"] } });
    expect(await apiOk("GET", "/api/schema/js_order/1")).toMatchObject({ version: 1, data: ORDER_SCHEMA });
    const listed = await apiOk<Array<{ name: string; version: number; createTime: number }>>("GET", "/api/schema");
    expect(listed.filter((schema) => schema.name === "js_order").map((schema) => schema.version)).toEqual([1, 2]);
    // Short: names, versions and times only, as Orkes' docs describe it.
    const short = await apiOk<JsonObject[]>("GET", "/api/schema?short=true");
    const times = (version: number) => {
      const { createTime, updateTime } = listed.find((schema) => schema.name === "js_order" && schema.version === version)! as unknown as JsonObject;
      return { createTime, updateTime };
    };
    expect(short.filter((schema) => schema["name"] === "js_order")).toEqual([{ name: "js_order", version: 1, ...times(1) }, { name: "js_order", version: 2, ...times(2) }]);
    expect((await api("DELETE", "/api/schema/js_order/2")).status).toBe(200);
    expect(await apiOk("GET", "/api/schema/js_order")).toMatchObject({ version: 1 });
    expect((await api("DELETE", "/api/schema/js_order")).status).toBe(200);
    for (const path of ["/api/schema/js_order", "/api/schema/js_order/1"]) expect((await api("GET", path)).status).toBe(404);
    expect((await api("DELETE", "/api/schema/js_order")).status).toBe(404);
  });

  it("GET answers a version saved or deleted through another isolate at once, not what this isolate read two seconds before", async () => {
    expect((await api("POST", "/api/schema", { name: "js_elsewhere", version: 1, type: "JSON", data: ORDER_SCHEMA })).status).toBe(200);
    expect(await apiOk("GET", "/api/schema/js_elsewhere")).toMatchObject({ version: 1 });
    expect((await api("GET", "/api/schema/js_elsewhere/2")).status).toBe(404);
    // Another isolate's save is a row this isolate's cache was not told of.
    await env.DB.prepare(
      `INSERT INTO json_schemas (name, version, type, data, create_time, update_time) SELECT name, 2, type, json_set(data, '$.title', 'second'), create_time, update_time FROM json_schemas WHERE name = 'js_elsewhere'`,
    ).run();
    expect(await apiOk("GET", "/api/schema/js_elsewhere")).toMatchObject({ version: 2, data: { title: "second" } });
    expect(await apiOk("GET", "/api/schema/js_elsewhere/2")).toMatchObject({ version: 2 });
    await env.DB.prepare(`DELETE FROM json_schemas WHERE name = 'js_elsewhere' AND version = 2`).run();
    expect(await apiOk("GET", "/api/schema/js_elsewhere")).toMatchObject({ version: 1 });
    expect((await api("GET", "/api/schema/js_elsewhere/2")).status).toBe(404);
  });

  it("takes externalRef as Jackson reads Conductor's String field: false (the Rust SDK's SchemaDef) is none, true or a number its text", async () => {
    // SchemaDef::new("js_rust", 1, data) as the Rust SDK serializes it.
    expect((await api("POST", "/api/schema", { name: "js_rust", version: 1, type: "JSON", data: ORDER_SCHEMA, externalRef: false })).status).toBe(200);
    expect(await apiOk("GET", "/api/schema/js_rust/1")).not.toHaveProperty("externalRef");
    expect((await api("POST", "/api/schema", [{ name: "js_rust", version: 2, data: ORDER_SCHEMA, externalRef: "orders-v2" }, { name: "js_rust", version: 3, data: ORDER_SCHEMA, externalRef: 7 }])).status).toBe(200);
    expect(await apiOk("GET", "/api/schema/js_rust/2")).toMatchObject({ externalRef: "orders-v2" });
    expect(await apiOk("GET", "/api/schema/js_rust/3")).toMatchObject({ externalRef: "7" });
    expect(await problems(await api("POST", "/api/schema", { name: "js_rust", data: ORDER_SCHEMA, externalRef: { name: "x" } }))).toEqual([{ path: "externalRef", message: "must be a string" }]);
    expect((await api("DELETE", "/api/schema/js_rust")).status).toBe(200);
  });

  it("refuses what it cannot check with a 400 naming each problem, saving none of a list", async () => {
    const found = await problems(
      await api("POST", "/api/schema", [
        { name: "js_fine", data: ORDER_SCHEMA },
        { name: "js_avro", type: "AVRO", data: {} },
        { name: "js_bad_type", data: { type: "objekt" } },
        { name: "js_remote", data: { $ref: "https://example.com/order.json" } },
        { name: "js_dangling", data: { $ref: "#/$defs/missing" } },
        { name: "bad name", data: {} },
        // Java's regex takes it; unicode-mode ECMA-262, which the validator compiles a pattern in, does not.
        { name: "js_java_pattern", data: { type: "object", properties: { sku: { type: "string", pattern: "^[\\w-.]+$" } } } },
        // Checking any value with an x would never end.
        { name: "js_loop", data: { $defs: { a: { $ref: "#/$defs/a" } }, properties: { x: { $ref: "#/$defs/a" } } } },
      ]),
    );
    expect(found.map((issue) => issue.path)).toEqual(["[1].type", "[2].data", "[3].data", "[4].data", "[5].name", "[6].data", "[7].data"]);
    expect(found[5]!.message).toContain("#/properties/sku/pattern must be a regular expression");
    expect(found[6]!.message).toContain("#/$defs/a refers back to itself through $ref");
    expect((await api("GET", "/api/schema/js_fine")).status).toBe(404);
  });

  it("answers what a save or a deletion wrote once it returns, when a read of the schema ran while it was written (that read is not kept)", async () => {
    type Methods = Record<string, (...args: unknown[]) => Promise<unknown>>;
    /** Runs `write` with `read` made just before its D1 call `method` of `target` on json_schemas goes out. */
    const readingDuring = async (target: Methods, method: string, read: () => Promise<unknown>, write: () => Promise<unknown>) => {
      const original = target[method]!;
      target[method] = async function (this: unknown, ...args: unknown[]) {
        const statements = method === "batch" ? (args[0] as unknown[]) : [this];
        if (statements.some((each) => String((each as { statement?: string }).statement).includes("json_schemas"))) {
          target[method] = original;
          await read();
        }
        return original.apply(this, args);
      };
      try {
        await write();
      } finally {
        target[method] = original;
      }
    };
    await apiOk("POST", "/api/schema", { name: "js_racing", version: 1, data: { title: "one" } });
    let during: JsonObject = {};
    const read = async () => (during = await apiOk("GET", "/api/schema/js_racing"));
    await readingDuring(Object.getPrototypeOf(env.DB) as Methods, "batch", read, () => apiOk("POST", "/api/schema", { name: "js_racing", version: 1, data: { title: "two" } }));
    expect(during).toMatchObject({ data: { title: "one" } });
    expect(await apiOk("GET", "/api/schema/js_racing")).toMatchObject({ data: { title: "two" } });

    const statement = Object.getPrototypeOf(env.DB.prepare("SELECT 1")) as Methods;
    await readingDuring(statement, "run", read, () => apiOk("DELETE", "/api/schema/js_racing"));
    expect(during).toMatchObject({ data: { title: "two" } });
    expect((await api("GET", "/api/schema/js_racing")).status).toBe(404);
  });

  it("is read by readers of definitions and written by metadata admins only", async () => {
    const reader = await createUser("js-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    expect((await call("GET", "/api/schema", orkes(reader.token))).status).toBe(200);
    expect((await call("POST", "/api/schema", orkes(reader.token), { name: "js_denied", data: {} })).status).toBe(403);
    expect((await api("GET", "/api/schema/js_denied")).status).toBe(404);
  });
});

describe("a workflow definition's inputSchema", () => {
  it("refuses a start whose input does not match, with each problem at its path, and starts one that does", async () => {
    await apiOk("POST", "/api/schema", { name: "js_checked", data: ORDER_SCHEMA });
    await register({ name: "js_checked_flow", inputSchema: { name: "js_checked", type: "JSON" }, tasks: [httpTask("call", { uri: target("/count/js-checked"), method: "GET" })] });
    const refused = await problems(await api("POST", "/api/workflow/js_checked_flow", { orderId: 0, items: [{ sku: 7 }] }));
    expect(refused.map((issue) => issue.path).sort()).toEqual(["input.items[0].sku", "input.orderId"]);
    expect((await problems(await api("POST", "/api/workflow", { name: "js_checked_flow", input: {} }))).map((issue) => issue.path)).toEqual(["input"]);
    // The message names the first problem once (and counts the rest), as every other 400 with validationErrors does.
    const one = (await (await api("POST", "/api/workflow/js_checked_flow", { orderId: 0, items: [] })).json()) as { message: string; validationErrors: Array<{ path: string; message: string }> };
    expect(one.message).toBe(`The input does not match workflow js_checked_flow's schema js_checked: input.orderId: ${one.validationErrors[0]!.message}`);
    // The synchronous execute refuses the same way.
    expect((await api("POST", "/api/workflow/execute/js_checked_flow/1", { input: { orderId: "seven" } })).status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await hits("js-checked")).toBe(0);

    const workflowId = await apiOk<string>("POST", "/api/workflow/js_checked_flow", { orderId: 7, items: [{ sku: "a-1" }] });
    await waitFor(workflowId, ["COMPLETED"]);
    expect(await hits("js-checked")).toBe(1);

    // Version 0, which the Java client's SchemaDef sends unless told otherwise, names the latest, as in Conductor.
    await register({ name: "js_checked_v0", inputSchema: { name: "js_checked", version: 0, type: "JSON" }, tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP", inputParameters: {} }] });
    expect((await apiOk<JsonObject>("GET", "/api/metadata/workflow/js_checked_v0"))["inputSchema"]).toEqual({ name: "js_checked", type: "JSON" });
    expect((await problems(await api("POST", "/api/workflow/js_checked_v0", { orderId: 0, items: [] }))).map((issue) => issue.path)).toEqual(["input.orderId"]);
  });

  it("counts the inputTemplate's defaults, follows enforceSchema: false, and fails a SUB_WORKFLOW task whose child's input does not match", async () => {
    await apiOk("POST", "/api/schema", { name: "js_child_in", data: { type: "object", required: ["orderId"], properties: { orderId: { type: "integer" } } } });
    await register({ name: "js_defaulted", inputSchema: { name: "js_child_in" }, inputTemplate: { orderId: 5 }, tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP", inputParameters: {} }] });
    await waitFor(await apiOk<string>("POST", "/api/workflow/js_defaulted", {}), ["COMPLETED"]);
    await register({ name: "js_unenforced", inputSchema: { name: "js_child_in" }, enforceSchema: false, tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP", inputParameters: {} }] });
    await waitFor(await apiOk<string>("POST", "/api/workflow/js_unenforced", { orderId: "x" }), ["COMPLETED"]);

    await register({ name: "js_child", inputSchema: { name: "js_child_in" }, tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP", inputParameters: {} }] });
    await register({ name: "js_parent", tasks: [{ name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", inputParameters: { orderId: "${workflow.input.orderId}" }, subWorkflowParam: { name: "js_child", version: 1 } }] });
    const failed = await waitFor(await apiOk<string>("POST", "/api/workflow/js_parent", { orderId: "not a number" }), ["FAILED"]);
    const child = failed.tasks[0]!;
    expect(child.outputData).toMatchObject({ error: "SUB_WORKFLOW_ERROR", details: { errorCode: "INVALID_PARAMETERS" } });
    expect(String(child["reasonForIncompletion"])).toContain("input.orderId");
    const passed: WorkflowJson = await waitFor(await apiOk<string>("POST", "/api/workflow/js_parent", { orderId: 3 }), ["COMPLETED"]);
    expect(passed.tasks[0]!.status).toBe("COMPLETED");
  });

  it("must name a registered schema at registration; one deleted later refuses starts, saying so", async () => {
    const noSchema = await problems(await api("POST", "/api/metadata/workflow", { name: "js_unknown", schemaVersion: 2, inputSchema: { name: "js_nowhere" }, tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP", inputParameters: {} }] }));
    expect(noSchema).toEqual([{ path: "inputSchema", message: expect.stringContaining("js_nowhere") }]);
    expect((await api("GET", "/api/metadata/workflow/js_unknown")).status).toBe(404);

    await apiOk("POST", "/api/schema", { name: "js_gone", data: { type: "object" } });
    await register({ name: "js_gone_flow", inputSchema: { name: "js_gone", version: 1 }, tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP", inputParameters: {} }] });
    await apiOk("DELETE", "/api/schema/js_gone");
    const response = await api("POST", "/api/workflow/js_gone_flow", {});
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toContain("schema js_gone version 1 is not registered");
  });
});

describe("a task definition's inputSchema and outputSchema", () => {
  const work = (ref: string, name: string) => ({ name, taskReferenceName: ref, type: "SIMPLE", inputParameters: { orderId: "${workflow.input.orderId}" } });

  it("fail a task whose input or output does not match, saying why; a task that matches runs as always", async () => {
    await apiOk("POST", "/api/schema", [
      { name: "js_task_in", data: { type: "object", required: ["orderId"], properties: { orderId: { type: "integer" } } } },
      { name: "js_task_out", data: { type: "object", required: ["receipt"], properties: { receipt: { type: "string" } } } },
    ]);
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "js_checked_task", retryCount: 2, retryDelaySeconds: 0, inputSchema: { name: "js_task_in" }, outputSchema: { name: "js_task_out", version: 1 }, enforceSchema: true }]);
    await register({ name: "js_task_flow", tasks: [work("pay", "js_checked_task")] });

    const badInput = await waitFor(await apiOk<string>("POST", "/api/workflow/js_task_flow", { orderId: "seven" }), ["FAILED"]);
    // Terminal: not retried, whatever retryCount says.
    expect(badInput.tasks.map((task) => task.status)).toEqual(["FAILED_WITH_TERMINAL_ERROR"]);
    expect(String(badInput.tasks[0]!["reasonForIncompletion"])).toContain("input does not match its schema js_task_in: input.orderId");
    expect((await apiOk<Record<string, number>>("GET", "/api/tasks/queue/sizes?taskType=js_checked_task"))["js_checked_task"]).toBe(0);
    // Its schema data is the execution's own, not shown with its definition.
    expect(badInput["workflowDefinition"]).not.toHaveProperty("schemas");

    const goodInput = await apiOk<string>("POST", "/api/workflow/js_task_flow", { orderId: 7 });
    await waitFor(goodInput, (workflow) => workflow.tasks[0]?.status === "SCHEDULED");
    await apiOk("POST", `/api/tasks/${goodInput}/pay/COMPLETED`, { receipt: 42 });
    const badOutput = await waitFor(goodInput, ["FAILED"]);
    expect(badOutput.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", outputData: { receipt: 42 } });
    expect(String(badOutput.tasks[0]!["reasonForIncompletion"])).toContain("output does not match its schema js_task_out version 1: output.receipt");

    const fine = await apiOk<string>("POST", "/api/workflow/js_task_flow", { orderId: 8 });
    await waitFor(fine, (workflow) => workflow.tasks[0]?.status === "SCHEDULED");
    await apiOk("POST", `/api/tasks/${fine}/pay/COMPLETED`, { receipt: "r-8" });
    expect((await waitFor(fine, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ receipt: "r-8" });
  });

  it("fail a system task that completes as it starts (INLINE) with an output that does not match, for good (Conductor's e2e SchemaEnforcementE2ETest)", async () => {
    await apiOk("POST", "/api/schema", { name: "js_named_out", data: { type: "object", required: ["result"], properties: { result: { type: "object", required: ["name"] } } } });
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "js_inline_checked", retryCount: 3, retryDelaySeconds: 0, outputSchema: { name: "js_named_out" }, enforceSchema: true }]);
    const inline = (expression: string) => ({ name: "js_inline_checked", taskReferenceName: "calc", type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression } });
    await register({ name: "js_inline_out_flow", tasks: [inline("({ result: 1 + 2 })"), { name: "after", taskReferenceName: "after", type: "SET_VARIABLE", inputParameters: { reached: true } }] });
    const bad = await waitFor(await apiOk<string>("POST", "/api/workflow/js_inline_out_flow", {}), ["FAILED", "COMPLETED"]);
    expect(bad.status).toBe("FAILED");
    // Terminal: no retry scheduled, whatever retryCount says, and nothing after it ran.
    expect(bad.tasks.map((task) => task.status)).toEqual(["FAILED_WITH_TERMINAL_ERROR"]);
    expect(String(bad.tasks[0]!["reasonForIncompletion"])).toContain("output does not match its schema js_named_out");
    expect(bad["variables"]).toEqual({});
    await register({ name: "js_inline_out_fine", tasks: [inline("({ name: 'ok' })")] });
    expect((await waitFor(await apiOk<string>("POST", "/api/workflow/js_inline_out_fine", {}), ["FAILED", "COMPLETED"])).status).toBe("COMPLETED");
  });

  it("do not check a value a secret is written into (*** in the stored input): a token matching its pattern is sent, the other values are checked as always", async () => {
    const token = `sk_live_${crypto.randomUUID()}`;
    await apiOk("PUT", "/api/secrets/js_token", JSON.stringify(token));
    await apiOk("POST", "/api/schema", {
      name: "js_token_in",
      data: {
        type: "object",
        required: ["orderId", "token"],
        properties: { orderId: { type: "integer" }, token: { type: "string", pattern: "^sk_live_" }, headers: { type: "object", properties: { Authorization: { pattern: "^Bearer sk_live_" } } } },
      },
    });
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "js_token_call", inputSchema: { name: "js_token_in" }, enforceSchema: true }]);
    const call = { ...httpTask("call", { uri: target("/count/${workflow.secrets.js_token}"), method: "HEAD", orderId: "${workflow.input.orderId}", token: "${workflow.secrets.js_token}", headers: { Authorization: "Bearer ${workflow.secrets.js_token}" } }), name: "js_token_call" };
    await register({ name: "js_token_flow", tasks: [call] });

    const sent = await waitFor(await apiOk<string>("POST", "/api/workflow/js_token_flow", { orderId: 7 }), ["COMPLETED", "FAILED"]);
    expect(sent.tasks[0]).toMatchObject({ status: "COMPLETED", inputData: { token: "***", headers: { Authorization: "Bearer ***" } } });
    expect(await hits(token)).toBe(1);

    const refused = await waitFor(await apiOk<string>("POST", "/api/workflow/js_token_flow", { orderId: "seven" }), ["COMPLETED", "FAILED"]);
    expect(refused.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    // The value no secret wrote, alone: not "(and 2 more)" for the stand-ins.
    expect(refused.tasks[0]!["reasonForIncompletion"]).toBe('The task\'s input does not match its schema js_token_in: input.orderId: Instance type "string" is invalid. Expected "integer".');
    expect(await hits(token)).toBe(1);
  });

  it("are not checked with enforceSchema false or absent (Conductor's TaskDef flag defaults to false), and must name registered schemas, inline ones included", async () => {
    await apiOk("POST", "/api/schema", { name: "js_loose", data: { type: "object", required: ["x"] } });
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "js_loose_task", inputSchema: { name: "js_loose" }, enforceSchema: false });
    await register({ name: "js_loose_flow", tasks: [work("w", "js_loose_task")] });
    const loose = await apiOk<string>("POST", "/api/workflow/js_loose_flow", {});
    await waitFor(loose, (workflow) => workflow.tasks[0]?.status === "SCHEDULED");
    // What the Python client's register_task_def=True registers: schemas named, the flag left out. Its generated output
    // schema of an int-returning worker is {"type": "integer"} while the worker reports {"result": n}: not checked.
    await apiOk("POST", "/api/schema", { name: "js_unset_out", data: { type: "integer" } });
    await apiOk("PUT", "/api/metadata/taskdefs", { name: "js_unset_task", inputSchema: { name: "js_loose" }, outputSchema: { name: "js_unset_out" } });
    const unsetInline = { ...work("i", "js_unset_inline"), taskDefinition: { inputSchema: { name: "js_loose" } } };
    await register({ name: "js_unset_flow", tasks: [work("w", "js_unset_task"), unsetInline] });
    const unset = await apiOk<string>("POST", "/api/workflow/js_unset_flow", {});
    await waitFor(unset, (workflow) => workflow.tasks[0]?.status === "SCHEDULED");
    await apiOk("POST", `/api/tasks/${unset}/w/COMPLETED`, { result: 6765 });
    await waitFor(unset, (workflow) => workflow.tasks[1]?.status === "SCHEDULED");
    await apiOk("POST", `/api/tasks/${unset}/i/COMPLETED`, {});
    expect((await waitFor(unset, ["COMPLETED", "FAILED"])).tasks.map((task) => task.status)).toEqual(["COMPLETED", "COMPLETED"]);

    expect(await problems(await api("POST", "/api/metadata/taskdefs", [{ name: "js_nowhere_task", outputSchema: { name: "js_nowhere" } }]))).toEqual([
      { path: "[0].outputSchema", message: expect.stringContaining("js_nowhere") },
    ]);
    expect((await api("GET", "/api/metadata/taskdefs/js_nowhere_task")).status).toBe(404);
    const inline = { name: "js_inline_task_flow", schemaVersion: 2, tasks: [{ ...work("w", "js_inline_task"), taskDefinition: { inputSchema: { name: "js_nowhere" } } }] };
    expect(await problems(await api("POST", "/api/metadata/workflow", inline))).toEqual([{ path: "tasks", message: expect.stringContaining("js_nowhere") }]);
  });
});

describe("a workflow definition's outputSchema", () => {
  const output = (expression: string) => ({
    tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP", inputParameters: {} }],
    outputParameters: { orderId: expression },
  });

  it("fails an execution whose output does not match as it completes, saying why and keeping the output; one that matches completes", async () => {
    await apiOk("POST", "/api/schema", { name: "js_wf_out", data: ORDER_SCHEMA });
    await register({ name: "js_out_flow", outputSchema: { name: "js_wf_out" }, ...output("${workflow.input.orderId}") });
    expect((await apiOk<JsonObject>("GET", "/api/metadata/workflow/js_out_flow"))["outputSchema"]).toEqual({ name: "js_wf_out" });

    const bad = await waitFor(await apiOk<string>("POST", "/api/workflow/js_out_flow", { orderId: "seven" }), ["FAILED"]);
    expect(bad.output).toEqual({ orderId: "seven" });
    expect(String(bad["reasonForIncompletion"])).toMatch(/^The workflow's output does not match its schema js_wf_out: output\.orderId/);
    expect(bad.tasks.map((task) => task.status)).toEqual(["COMPLETED"]);
    // Failed as any execution: restarted, it runs again and is checked again.
    expect((await api("POST", `/api/workflow/${bad.workflowId}/restart`)).status).toBe(204);
    const again = await waitFor(bad.workflowId, (workflow) => workflow.status !== "RUNNING" && Number(workflow["endTime"]) > Number(bad["endTime"]));
    expect(again).toMatchObject({ status: "FAILED", reasonForIncompletion: bad["reasonForIncompletion"] });

    const good = await waitFor(await apiOk<string>("POST", "/api/workflow/js_out_flow", { orderId: 9 }), ["COMPLETED", "FAILED"]);
    expect(good).toMatchObject({ status: "COMPLETED", output: { orderId: 9 } });
  });

  it("is not checked with enforceSchema: false, and must name a registered schema", async () => {
    await apiOk("POST", "/api/schema", { name: "js_wf_out_loose", data: ORDER_SCHEMA });
    await register({ name: "js_out_loose_flow", outputSchema: { name: "js_wf_out_loose" }, enforceSchema: false, ...output("nope") });
    expect((await waitFor(await apiOk<string>("POST", "/api/workflow/js_out_loose_flow", {}), ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    const refused = await api("POST", "/api/metadata/workflow", { name: "js_out_nowhere", schemaVersion: 2, outputSchema: { name: "js_nowhere" }, ...output("x") });
    expect(await problems(refused)).toEqual([{ path: "outputSchema", message: expect.stringContaining("js_nowhere") }]);
    expect((await api("GET", "/api/metadata/workflow/js_out_nowhere")).status).toBe(404);
  });
});
