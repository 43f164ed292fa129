import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, getWorkflow, hits, httpTask, register, startWorkflow, target, waitFor } from "./helpers";

type Issue = { path: string; message: string };

/** A SWITCH task named after its reference name, with `fields` (evaluatorType, expression, cases, and anything else). */
function switchTask(ref: string, fields: JsonObject): JsonObject {
  return { name: ref, taskReferenceName: ref, type: "SWITCH", ...fields };
}

/** A SWITCH routing on `${workflow.input.kind}` by value-param, with a branch per kind and a task after it. */
function routeByKind(name: string, key: string): JsonObject {
  return {
    name,
    tasks: [
      switchTask("route", {
        evaluatorType: "value-param",
        expression: "kind",
        inputParameters: { kind: "${workflow.input.kind}" },
        decisionCases: {
          fast: [httpTask("fast_call", { uri: target(`/count/${key}-fast`), method: "GET" })],
          slow: [
            httpTask("slow_one", { uri: target(`/count/${key}-slow-1`), method: "GET" }),
            httpTask("slow_two", { uri: target(`/echo/slow-two?n=\${slow_one.output.response.body.n}`), method: "GET" }),
          ],
          none: [],
        },
        defaultCase: [httpTask("fallback", { uri: target(`/count/${key}-default`), method: "GET" })],
      }),
      httpTask("after", { uri: target(`/count/${key}-after`), method: "GET" }),
    ],
    outputParameters: { chosen: "${route.output.selectedCase}", fast: "${fast_call.output.statusCode}" },
  };
}

async function refused(definition: JsonObject): Promise<Issue[]> {
  const response = await api("POST", "/api/metadata/workflow", definition);
  expect(response.status, await response.clone().text()).toBe(400);
  const body = (await response.json()) as { error: string; validationErrors: Issue[] };
  expect(body.error).toBe("VALIDATION_ERROR");
  // A refused definition is not stored.
  expect((await api("GET", `/api/metadata/workflow/${String(definition["name"])}`)).status).toBe(404);
  return body.validationErrors;
}

describe("SWITCH tasks", () => {
  it("run only the branch the value-param names, then the task after the SWITCH", async () => {
    await register(routeByKind("switch_value_param", "svp"));
    const workflowId = await startWorkflow("switch_value_param", { kind: "slow" });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, done.reasonForIncompletion as string).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.taskType, task.status])).toEqual([
      ["route", "SWITCH", "COMPLETED"],
      ["slow_one", "HTTP", "COMPLETED"],
      ["slow_two", "HTTP", "COMPLETED"],
      ["after", "HTTP", "COMPLETED"],
    ]);
    expect(done.tasks[0]!.outputData).toEqual({ evaluationResult: ["slow"], selectedCase: "slow" });
    expect(done.tasks[0]!.inputData).toEqual({ kind: "slow", case: "slow", hasChildren: "true" });
    expect(done.output).toEqual({ chosen: "slow", fast: null });
    // The branch's second task read the first one's output.
    expect(String((done.tasks[2]!.inputData as { uri: string }).uri)).toMatch(/n=1$/);
    expect([await hits("svp-fast"), await hits("svp-slow-1"), await hits("svp-default"), await hits("svp-after")]).toEqual([0, 1, 0, 1]);
  });

  it("take the defaultCase for a value no case names, and for a case whose list is empty (as Conductor's SwitchTaskMapper)", async () => {
    await register(routeByKind("switch_default", "sdf"));
    const other = await waitFor(await startWorkflow("switch_default", { kind: "unknown" }), ["COMPLETED", "FAILED"]);
    expect(other.tasks.map((task) => task.referenceTaskName)).toEqual(["route", "fallback", "after"]);
    expect(other.tasks[0]!.outputData).toEqual({ evaluationResult: ["unknown"], selectedCase: "unknown" });
    // A missing value is Conductor's String.valueOf(null).
    const missing = await waitFor(await startWorkflow("switch_default", {}), ["COMPLETED", "FAILED"]);
    expect(missing.tasks.map((task) => task.referenceTaskName)).toEqual(["route", "fallback", "after"]);
    expect(missing.tasks[0]!.outputData).toEqual({ evaluationResult: ["null"], selectedCase: "null" });
    const empty = await waitFor(await startWorkflow("switch_default", { kind: "none" }), ["COMPLETED", "FAILED"]);
    expect(empty.status).toBe("COMPLETED");
    expect(empty.tasks.map((task) => task.referenceTaskName)).toEqual(["route", "fallback", "after"]);
    expect(empty.tasks[0]!.outputData).toEqual({ evaluationResult: ["none"], selectedCase: "none" });
    expect([await hits("sdf-default"), await hits("sdf-after")]).toEqual([3, 3]);
  });

  it("evaluate a javascript expression over $ (the task's input) and compare the result as a string", async () => {
    await register({
      name: "switch_javascript",
      tasks: [
        switchTask("size", {
          evaluatorType: "javascript",
          expression: "$.amount > 100 ? 'large' : ($.amount === 0 ? 'zero' : $.vip)",
          inputParameters: { amount: "${workflow.input.amount}", vip: "${workflow.input.vip}" },
          decisionCases: {
            large: [httpTask("large", { uri: target("/echo/large"), method: "GET" })],
            zero: [httpTask("zero", { uri: target("/echo/zero"), method: "GET" })],
            true: [httpTask("vip", { uri: target("/echo/vip"), method: "GET" })],
          },
          defaultCase: [httpTask("small", { uri: target("/echo/small"), method: "GET" })],
        }),
      ],
    });
    const refsFor = async (input: JsonObject) => {
      const done = await waitFor(await startWorkflow("switch_javascript", input), ["COMPLETED", "FAILED"]);
      expect(done.status).toBe("COMPLETED");
      return done.tasks.map((task) => task.referenceTaskName);
    };
    expect(await refsFor({ amount: 500 })).toEqual(["size", "large"]);
    expect(await refsFor({ amount: 0 })).toEqual(["size", "zero"]);
    expect(await refsFor({ amount: 5, vip: true })).toEqual(["size", "vip"]);
    expect(await refsFor({ amount: 5, vip: false })).toEqual(["size", "small"]);
  });

  it("nest: a SWITCH inside a branch routes again, and its branches' tasks are reached by reference name", async () => {
    await register({
      name: "switch_nested",
      tasks: [
        switchTask("outer", {
          evaluatorType: "value-param",
          expression: "region",
          inputParameters: { region: "${workflow.input.region}" },
          decisionCases: {
            eu: [
              switchTask("inner", {
                evaluatorType: "javascript",
                expression: "$.tier",
                inputParameters: { tier: "${workflow.input.tier}" },
                decisionCases: { gold: [httpTask("eu_gold", { uri: target("/echo/eu-gold"), method: "GET" })] },
                defaultCase: [httpTask("eu_other", { uri: target("/echo/eu-other"), method: "GET" })],
              }),
              httpTask("eu_done", { uri: target("/echo/eu-done"), method: "GET" }),
            ],
          },
        }),
        httpTask("end", { uri: target("/echo/end?from=${eu_gold.output.statusCode}"), method: "GET" }),
      ],
    });
    const gold = await waitFor(await startWorkflow("switch_nested", { region: "eu", tier: "gold" }), ["COMPLETED", "FAILED"]);
    expect(gold.tasks.map((task) => task.referenceTaskName)).toEqual(["outer", "inner", "eu_gold", "eu_done", "end"]);
    expect(String((gold.tasks[4]!.inputData as { uri: string }).uri)).toMatch(/from=200$/);
    const other = await waitFor(await startWorkflow("switch_nested", { region: "eu", tier: "silver" }), ["COMPLETED", "FAILED"]);
    expect(other.tasks.map((task) => task.referenceTaskName)).toEqual(["outer", "inner", "eu_other", "eu_done", "end"]);
    const elsewhere = await waitFor(await startWorkflow("switch_nested", { region: "us" }), ["COMPLETED", "FAILED"]);
    expect(elsewhere.tasks.map((task) => task.referenceTaskName)).toEqual(["outer", "end"]);
  });

  it("are returned as registered, branches included, by GET /api/metadata/workflow/{name}", async () => {
    await register(routeByKind("switch_stored", "sst"));
    const stored = await apiOk<{ tasks: Array<JsonObject> }>("GET", "/api/metadata/workflow/switch_stored");
    const route = stored.tasks[0]!;
    expect(route).toMatchObject({ type: "SWITCH", evaluatorType: "value-param", expression: "kind" });
    expect(Object.keys(route["decisionCases"] as object)).toEqual(["fast", "slow", "none"]);
    expect((route["decisionCases"] as Record<string, Array<{ taskReferenceName: string }>>)["slow"]!.map((task) => task.taskReferenceName)).toEqual(["slow_one", "slow_two"]);
    expect((route["defaultCase"] as Array<{ taskReferenceName: string }>).map((task) => task.taskReferenceName)).toEqual(["fallback"]);
  });

  it("a failed task inside a branch is retried per its settings and fails the workflow, and a rerun from it runs the rest of the branch", async () => {
    await register({
      name: "switch_branch_failure",
      tasks: [
        switchTask("route", {
          evaluatorType: "value-param",
          expression: "kind",
          inputParameters: { kind: "go" },
          decisionCases: {
            go: [
              httpTask("flaky", { uri: target("/status/500"), method: "GET" }, { retryCount: 1, retryDelaySeconds: 0 }),
              httpTask("next", { uri: target("/count/sbf-next"), method: "GET" }),
            ],
          },
        }),
        httpTask("after", { uri: target("/count/sbf-after"), method: "GET" }),
      ],
    });
    const workflowId = await startWorkflow("switch_branch_failure");
    const failed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    expect(failed.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["route", "COMPLETED"],
      ["flaky", "FAILED"],
      ["flaky", "FAILED"],
    ]);
    // A rerun from the last failed instance, now with a good input, runs the rest of the branch and the task after.
    const flakyId = failed.tasks[2]!.taskId;
    await apiOk("POST", `/api/workflow/${workflowId}/rerun`, { reRunFromTaskId: flakyId, taskInput: { uri: target("/echo/fixed"), method: "GET" } }, 200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => task.referenceTaskName)).toEqual(["route", "flaky", "flaky", "next", "after"]);
    expect([await hits("sbf-next"), await hits("sbf-after")]).toEqual([1, 1]);
  });

  it("a task inside a branch follows the registered task definition of its name, as a top-level one does", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "switch_branch_retried", retryCount: 2, retryLogic: "FIXED", retryDelaySeconds: 0 }]);
    await register({
      name: "switch_branch_taskdef",
      tasks: [
        switchTask("route", {
          evaluatorType: "value-param",
          expression: "kind",
          inputParameters: { kind: "go" },
          decisionCases: { go: [{ ...httpTask("retried", { uri: target("/status/503"), method: "GET" }), name: "switch_branch_retried" }] },
        }),
      ],
    });
    const done = await waitFor(await startWorkflow("switch_branch_taskdef"), ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("FAILED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status, task.retryCount])).toEqual([
      ["route", "COMPLETED", 0],
      ["retried", "FAILED", 0],
      ["retried", "FAILED", 1],
      ["retried", "FAILED", 2],
    ]);
  });

  it("a skip of a task inside a branch not reached yet records it SKIPPED when the branch reaches it", async () => {
    await register({
      name: "switch_skip",
      tasks: [
        httpTask("gate", { uri: target("/echo/gate"), method: "GET" }, { asyncComplete: true }),
        switchTask("route", {
          evaluatorType: "value-param",
          expression: "kind",
          inputParameters: { kind: "go" },
          decisionCases: { go: [httpTask("skipped", { uri: target("/count/ssk-skipped"), method: "GET" }), httpTask("ran", { uri: target("/count/ssk-ran"), method: "GET" })] },
        }),
      ],
    });
    const workflowId = await startWorkflow("switch_skip");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("PUT", `/api/workflow/${workflowId}/skiptask/skipped`, {}, 200);
    await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: waiting.tasks[0]!.taskId, status: "COMPLETED", outputData: {} }, 200);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["gate", "COMPLETED"],
      ["route", "COMPLETED"],
      ["skipped", "SKIPPED"],
      ["ran", "COMPLETED"],
    ]);
    expect([await hits("ssk-skipped"), await hits("ssk-ran")]).toEqual([0, 1]);
  });

  it("synchronous execute runs through the branch in one call", async () => {
    await register(routeByKind("switch_execute", "sex"));
    const workflow = await apiOk<{ status: string; tasks: Array<{ referenceTaskName: string }>; workflowId: string }>("POST", "/api/workflow/execute/switch_execute/1", { input: { kind: "fast" } });
    expect(workflow.status).toBe("COMPLETED");
    expect(workflow.tasks.map((task) => task.referenceTaskName)).toEqual(["route", "fast_call", "after"]);
    expect((await getWorkflow(workflow.workflowId)).output).toEqual({ chosen: "fast", fast: 200 });
  });

  it("compare numbers, booleans and null results as Conductor's String.valueOf does; missing input is null in $", async () => {
    await register({
      name: "switch_case_strings",
      tasks: [
        switchTask("route", {
          evaluatorType: "javascript",
          expression: "$.order === null ? null : $.order.lines[0]['unit-count']",
          inputParameters: { order: "${workflow.input.order}" },
          decisionCases: {
            "4": [httpTask("four", { uri: target("/count/scs-four"), method: "GET" })],
            "2.5": [httpTask("half", { uri: target("/count/scs-half"), method: "GET" })],
            true: [httpTask("yes", { uri: target("/count/scs-yes"), method: "GET" })],
            null: [httpTask("none", { uri: target("/count/scs-none"), method: "GET" })],
          },
        }),
      ],
    });
    const refsFor = async (count: JsonObject["x"] | undefined) => {
      const input: JsonObject = count === undefined ? {} : { order: { lines: [{ "unit-count": count }] } };
      const done = await waitFor(await startWorkflow("switch_case_strings", input), ["COMPLETED", "FAILED"]);
      expect(done.status).toBe("COMPLETED");
      return [done.tasks[0]!.outputData["evaluationResult"], done.tasks.slice(1).map((task) => task.referenceTaskName)];
    };
    expect(await refsFor(4)).toEqual([["4"], ["four"]]);
    expect(await refsFor(2.5)).toEqual([["2.5"], ["half"]]);
    expect(await refsFor(true)).toEqual([["true"], ["yes"]]);
    expect(await refsFor(undefined)).toEqual([["null"], ["none"]]);
    expect(await refsFor("4")).toEqual([["4"], ["four"]]);
    expect([await hits("scs-four"), await hits("scs-half"), await hits("scs-yes"), await hits("scs-none")]).toEqual([2, 1, 1, 1]);
  });

  it("route on a JsonPath function and output JsonPath selections, as Conductor's Jayway paths give them", async () => {
    await register({
      name: "switch_jsonpath",
      tasks: [
        switchTask("by_urgent_count", {
          evaluatorType: "value-param",
          expression: "urgent",
          inputParameters: { urgent: "${workflow.input.items[?(@.urgent == true)].length()}" },
          decisionCases: { "0": [], "2": [httpTask("two_urgent", { uri: target("/count/switch-jsonpath-two"), method: "GET" })] },
        }),
      ],
      outputParameters: { ids: "${workflow.input.items[*].id}", names: "${workflow.input..name}", total: "${workflow.input.items[*].qty.sum()}" },
    });
    const before = await hits("switch-jsonpath-two");
    const items: JsonObject[] = [
      { id: "a", urgent: true, qty: 2, owner: { name: "ann" } },
      { id: "b", qty: 3 },
      { id: "c", urgent: true, qty: 5, owner: { name: "cy" } },
    ];
    const done = await waitFor(await startWorkflow("switch_jsonpath", { items }), ["COMPLETED", "FAILED"]);
    expect(done.status, done.reasonForIncompletion as string).toBe("COMPLETED");
    expect(done.tasks.map((task) => task.referenceTaskName)).toEqual(["by_urgent_count", "two_urgent"]);
    expect(done.tasks[0]!.inputData).toMatchObject({ urgent: 2, case: "2" });
    expect(done.output).toEqual({ ids: ["a", "b", "c"], names: ["ann", "cy"], total: 10 });
    expect(await hits("switch-jsonpath-two")).toBe(before + 1);
  });

  it("refuse definitions with a malformed SWITCH, naming each problem, and store nothing", async () => {
    const errors = await refused({
      name: "switch_refused",
      tasks: [
        { name: "a", taskReferenceName: "a", type: "SWITCH", expression: "x", decisionCases: { one: [] } },
        { name: "b", taskReferenceName: "b", type: "SWITCH", evaluatorType: "python", expression: "x", decisionCases: { one: [] } },
        { name: "c", taskReferenceName: "c", type: "SWITCH", evaluatorType: "javascript", expression: "(function(){ return 1; )()", decisionCases: { one: [] } },
        { name: "d", taskReferenceName: "d", type: "SWITCH", evaluatorType: "value-param", expression: "x", decisionCases: {} },
        { name: "e", taskReferenceName: "e", type: "SWITCH", evaluatorType: "value-param", expression: "x", decisionCases: { one: "not a list" }, defaultCase: [{ name: "bad" }] },
        switchTask("f", {
          evaluatorType: "value-param",
          expression: "x",
          decisionCases: { one: [httpTask("a", { uri: target("/echo/x"), method: "GET" })] },
        }),
        { name: "g", taskReferenceName: "g", type: "SWITCH", evaluatorType: "javascript", expression: " ", decisionCases: { one: [] } },
      ],
    });
    const paths = errors.map((issue) => issue.path);
    expect(paths).toContain("tasks[0].evaluatorType");
    expect(paths).toContain("tasks[1].evaluatorType");
    expect(paths).toContain("tasks[2].expression");
    expect(paths).toContain("tasks[3].decisionCases");
    expect(paths).toContain("tasks[4].decisionCases.one");
    expect(paths.some((path) => path.startsWith("tasks[4].defaultCase[0]"))).toBe(true);
    expect(paths).toContain("tasks[5].decisionCases.one[0].taskReferenceName");
    expect(paths).toContain("tasks[6].expression");
    expect(errors.find((issue) => issue.path === "tasks[2].expression")!.message).toMatch(/^the script does not parse as JavaScript: SyntaxError/);
    expect(errors.find((issue) => issue.path === "tasks[5].decisionCases.one[0].taskReferenceName")!.message).toMatch(/already used by tasks\[0\]/);
  });

  it("refuse a SWITCH whose input uses a secret: it is evaluated on the stored (masked) input, and its case is shown", async () => {
    const errors = await refused({
      name: "switch_secret",
      tasks: [
        switchTask("route", {
          evaluatorType: "value-param",
          expression: "kind",
          inputParameters: { kind: "${workflow.secrets.route_kind}" },
          decisionCases: { fast: [httpTask("fast_call", { uri: target("/echo/fast"), method: "GET" })] },
        }),
        switchTask("inline", {
          evaluatorType: "javascript",
          expression: "$.token === 'x'",
          taskDefinition: { inputTemplate: { token: "${workflow.secrets.api_token}" } },
          decisionCases: { true: [] },
        }),
      ],
    });
    const paths = errors.map((issue) => issue.path);
    expect(paths).toEqual(["tasks[0].inputParameters", "tasks[1].taskDefinition.inputTemplate"]);
    expect(errors[0]!.message).toMatch(/workflow\.secrets\.route_kind/);
  });

  it("count the tasks inside branches toward the per-definition limit", async () => {
    const branch = Array.from({ length: 200 }, (_, index) => httpTask(`t${index}`, { uri: target("/echo/x"), method: "GET" }));
    const errors = await refused({
      name: "switch_too_many",
      tasks: [{ name: "s", taskReferenceName: "s", type: "SWITCH", evaluatorType: "value-param", expression: "x", decisionCases: { one: branch } }],
    });
    expect(errors.map((issue) => issue.message).join("\n")).toMatch(/at most 200 tasks \(counting those inside SWITCH and FORK_JOIN branches and DO_WHILE loops\), but this one has 201/);
  });
});

describe("DECISION tasks (Conductor's older SWITCH)", () => {
  /** A DECISION routing on `${workflow.input.kind}`, by caseValueParam or by caseExpression, then a task after it. */
  function decisionDefinition(name: string, key: string, chooser: JsonObject): JsonObject {
    return {
      name,
      tasks: [
        {
          name: "route",
          taskReferenceName: "route",
          type: "DECISION",
          ...chooser,
          inputParameters: { kind: "${workflow.input.kind}" },
          decisionCases: { fast: [httpTask("fast_call", { uri: target(`/count/${key}-fast`), method: "GET" })] },
          defaultCase: [httpTask("fallback", { uri: target(`/count/${key}-default`), method: "GET" })],
        },
        httpTask("after", { uri: target(`/count/${key}-after`), method: "GET" }),
      ],
      outputParameters: { chosen: "${route.output.caseOutput[0]}" },
    };
  }

  it("run the case caseValueParam or caseExpression names, stored and returned as registered", async () => {
    await register(decisionDefinition("decision_param", "dp", { caseValueParam: "kind" }));
    const byParam = await waitFor(await startWorkflow("decision_param", { kind: "fast" }), ["COMPLETED", "FAILED"]);
    expect(byParam.tasks.map((task) => `${task.referenceTaskName}:${task.taskType}:${task.status}`)).toEqual(["route:DECISION:COMPLETED", "fast_call:HTTP:COMPLETED", "after:HTTP:COMPLETED"]);
    expect(byParam.output).toEqual({ chosen: "fast" });
    await register(decisionDefinition("decision_script", "ds", { caseExpression: "$.kind === 'FAST' ? 'fast' : 'other'" }));
    const byScript = await waitFor(await startWorkflow("decision_script", { kind: "fast" }), ["COMPLETED", "FAILED"]);
    expect(byScript.tasks.map((task) => task.referenceTaskName)).toEqual(["route", "fallback", "after"]);
    expect(byScript.output).toEqual({ chosen: "other" });
    expect([await hits("dp-fast"), await hits("dp-default"), await hits("ds-fast"), await hits("ds-default")]).toEqual([1, 0, 0, 1]);
    const stored = await apiOk<{ tasks: Array<JsonObject> }>("GET", "/api/metadata/workflow/decision_script");
    expect(stored.tasks[0]).toMatchObject({ type: "DECISION", caseExpression: "$.kind === 'FAST' ? 'fast' : 'other'" });
  });

  it("refuse a caseExpression that does not parse, or neither field, naming the path; nothing is stored", async () => {
    const unparsable = await refused(decisionDefinition("decision_bad", "db", { caseExpression: "$.kind ===" }));
    expect(unparsable).toEqual([{ path: "tasks[0].caseExpression", message: expect.stringMatching(/^the script does not parse as JavaScript: SyntaxError/) }]);
    const neither = await refused(decisionDefinition("decision_none", "dn", {}));
    expect(neither.map((issue) => issue.path)).toEqual(["tasks[0].caseValueParam"]);
  });
});
