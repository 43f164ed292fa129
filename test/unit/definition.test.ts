import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/engine/definition/checks";
import { TASK_VALIDATORS } from "../../src/engine/definition/registry";
import { registeredTaskDefNames, validateTaskDef, withRegisteredTaskDefs } from "../../src/engine/definition/task-def";
import { MAX_TASKS_PER_DEFINITION, validateWorkflowDef } from "../../src/engine/definition/validate";
import { DEFAULT_ENGINE_CONFIG } from "../../src/engine/config";
import { createExecution, nextDeadline } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { TASK_TYPES, type JsonObject, type JsonValue, type WorkflowDef, type WorkflowExecution, type WorkflowTaskDef } from "../../src/engine/model";
import { HTTP_ACCEPT_TYPES, HTTP_CONTENT_TYPES, HTTP_METHODS, MAX_HTTP_TIMEOUT_MS, validateHttpTask } from "../../src/engine/tasks/http/validate";
import { httpTimeouts } from "../../src/engine/tasks/http/request";
import { latestNamed, registrationErrors, startedWith } from "./engine-env";
import { validateSubWorkflowTask } from "../../src/engine/tasks/sub-workflow/validate";
import { validateWaitForWebhookTask } from "../../src/engine/tasks/wait-for-webhook/validate";
import { fractionOf, retryDelayMs, retryDelaySeconds, retryPolicyOf } from "../../src/engine/retry";
import { taskInputTemplate } from "../../src/engine/tasks/registry";
import type { ValidationIssue } from "../../src/engine/validation-issue";
import { workflowInputOversizeReason } from "../../src/engine/workflow-input";
import { env, refusal } from "./engine-env";
import { childStartRequest } from "../../src/engine/tasks/sub-workflow";

type Json = Record<string, unknown>;

function httpTask(ref = "call", inputs: Json = { uri: "https://example.com/a", method: "GET" }, extra: Json = {}): Json {
  return { name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: inputs, ...extra };
}

function subTask(ref = "child", extra: Json = { subWorkflowParam: { name: "child_flow" } }): Json {
  return { name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", ...extra };
}

function webhookTask(ref = "hook", inputs?: Json): Json {
  const task: Json = { name: ref, taskReferenceName: ref, type: "WAIT_FOR_WEBHOOK" };
  if (inputs !== undefined) task["inputParameters"] = inputs;
  return task;
}

function def(extra: Json = {}, tasks: unknown[] = [httpTask()]): Json {
  return { name: "order_flow", tasks, ...extra };
}

function errorsOf(input: unknown): ValidationIssue[] {
  const result = validateWorkflowDef(input);
  if (result.ok) throw new Error(`expected the definition to be rejected: ${JSON.stringify(input)}`);
  return result.errors;
}

function pathsOf(input: unknown): string[] {
  return errorsOf(input).map((issue) => issue.path);
}

/** Asserts exactly one problem, at `path`, and returns its message. */
function onlyError(input: unknown, path: string): string {
  const errors = errorsOf(input);
  expect(errors.map((issue) => issue.path)).toEqual([path]);
  return errors[0]!.message;
}

function accepted(input: unknown) {
  const result = validateWorkflowDef(input);
  if (!result.ok) throw new Error(`expected the definition to pass: ${JSON.stringify(result.errors)}`);
  return result.value;
}

/** The one task of a definition with a single task, after validation. */
function acceptedTask(task: Json) {
  const [only] = accepted(def({}, [task])).tasks;
  return only!;
}

describe("validateWorkflowDef: a valid definition", () => {
  it("accepts three HTTP tasks in both placements and normalises them", () => {
    const input = {
      name: "order_flow",
      description: "Places an order",
      ownerEmail: "dev@example.com",
      inputParameters: ["orderId"],
      outputParameters: { status: "${charge.output.response.statusCode}" },
      createTime: 1700000000000,
      restartable: true,
      timeoutPolicy: "ALERT_ONLY",
      workflowStatusListenerEnabled: false,
      tasks: [
        httpTask("lookup", { uri: "https://shop.example/orders/${workflow.input.orderId}", method: "GET" }),
        httpTask(
          "charge",
          {
            http_request: {
              uri: "https://pay.example/charge",
              method: "POST",
              body: { amount: "${lookup.output.response.body.total}" },
              accept: "application/json",
              contentType: "application/json",
              headers: { "X-Count": 1, "X-Debug": true, Authorization: "Bearer ${workflow.secrets.payKey}" },
              connectionTimeOut: 3000,
              readTimeOut: "5000",
              encode: false,
            },
          },
          { asyncComplete: false, optional: true, retryCount: 2, retryLogic: "EXPONENTIAL_BACKOFF", retryDelaySeconds: 5, taskDefinition: {} },
        ),
        { name: "notify", taskReferenceName: "notify", type: "HTTP", inputParameters: { uri: "https://n.example", method: "DELETE" } },
      ],
    };
    expect(validateWorkflowDef(input)).toEqual({
      ok: true,
      value: {
        name: "order_flow",
        description: "Places an order",
        version: 1,
        schemaVersion: 2,
        ownerEmail: "dev@example.com",
        inputParameters: ["orderId"],
        outputParameters: { status: "${charge.output.response.statusCode}" },
        timeoutSeconds: 0,
        timeoutPolicy: "ALERT_ONLY",
        restartable: true,
        workflowStatusListenerEnabled: false,
        tasks: [
          {
            name: "lookup",
            taskReferenceName: "lookup",
            type: "HTTP",
            inputParameters: { uri: "https://shop.example/orders/${workflow.input.orderId}", method: "GET" },
          },
          {
            name: "charge",
            taskReferenceName: "charge",
            type: "HTTP",
            inputParameters: input.tasks[1]!["inputParameters"],
            asyncComplete: false,
            optional: true,
            retryCount: 2,
            retryLogic: "EXPONENTIAL_BACKOFF",
            retryDelaySeconds: 5,
            // An empty inline task definition is Conductor's defaults, named after its task.
            taskDefinition: {
              name: "charge",
              retryCount: 3,
              retryLogic: "FIXED",
              retryDelaySeconds: 60,
              backoffScaleFactor: 1,
              timeoutSeconds: 0,
              timeoutPolicy: "TIME_OUT_WF",
              responseTimeoutSeconds: 3600,
            },
          },
          { name: "notify", taskReferenceName: "notify", type: "HTTP", inputParameters: { uri: "https://n.example", method: "DELETE" } },
        ],
      },
    });
  });

  it("fills inputParameters with an empty object when a task has none", () => {
    expect(acceptedTask(webhookTask("hook")).inputParameters).toEqual({});
  });

  it("does not share the filled-in inputParameters between definitions", () => {
    const first = acceptedTask(webhookTask("hook"));
    const second = acceptedTask(webhookTask("hook"));
    expect(first.inputParameters).not.toBe(second.inputParameters);
  });

  it("keeps given version, schemaVersion and timeoutSeconds", () => {
    const value = accepted(def({ version: 7, schemaVersion: 2, timeoutSeconds: 30 }));
    expect([value.version, value.schemaVersion, value.timeoutSeconds]).toEqual([7, 2, 30]);
  });

  it("drops the keys Conductor clients send at workflow level that this service does not use, and unknown ones", () => {
    const value = accepted(
      def({ createTime: 1, updateTime: 2, restartable: true, timeoutPolicy: "TIME_OUT_WF", workflowStatusListenerEnabled: true, workflowStatusListenerSink: null, failureWorkflow: "", unknown: 1 }),
    );
    // A null is unset, as Conductor reads it (Java and C# clients, and Orkes' exports, write every unset field so).
    expect(Object.keys(value).sort()).toEqual(["name", "restartable", "schemaVersion", "tasks", "timeoutPolicy", "timeoutSeconds", "version", "workflowStatusListenerEnabled"]);
  });

  it("reads every null field of a definition and of its tasks as unset, as Conductor does (Orkes' exports and Gson-based clients write them)", () => {
    const nulls = { description: null, version: null, schemaVersion: null, restartable: null, timeoutSeconds: null, inputParameters: null, outputParameters: null, failureWorkflow: null, ownerEmail: null, metadata: null, inputSchema: null, outputSchema: null, enforceSchema: null, workflowStatusListenerEnabled: null };
    const task = { ...httpTask("call"), retryCount: null, description: null, sink: null, optional: null, asyncComplete: null, startDelay: null, taskDefinition: null, inputTemplate: null };
    const loop = { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "false", inputParameters: null, loopOver: [{ ...httpTask("inner"), retryCount: null }] };
    const value = accepted(def(nulls, [task, loop]));
    expect(value).toMatchObject({ version: 1, restartable: true, timeoutSeconds: 0 });
    expect(value).not.toHaveProperty("description");
    expect(value.tasks[0]).not.toHaveProperty("retryCount");
    expect(value.tasks[1]!.loopOver![0]).not.toHaveProperty("retryCount");
    expect(value.tasks[1]!.inputParameters).toEqual({});
  });

  it("drops the keys Conductor clients send on tasks that this service does not use", () => {
    const conductorKeys = {
      taskDefinition: null,
      startDelay: 0,
      defaultCase: [],
      decisionCases: {},
      forkTasks: [],
      joinOn: [],
      loopOver: [],
      dynamicTaskNameParam: "x",
      sink: "x",
      onStateChange: {},
      description: "kept",
    };
    const task = acceptedTask(httpTask("call", undefined, conductorKeys));
    expect(Object.keys(task).sort()).toEqual(["description", "inputParameters", "name", "taskReferenceName", "type"]);
  });

  it("keeps a task's permissive flag (Conductor's permissive task), a boolean; null is none", () => {
    expect(acceptedTask(httpTask("call", undefined, { permissive: true })).permissive).toBe(true);
    expect(acceptedTask(httpTask("call", undefined, { permissive: false })).permissive).toBe(false);
    expect(acceptedTask(httpTask("call", undefined, { permissive: null }))).not.toHaveProperty("permissive");
    expect(onlyError(def({}, [httpTask("call", undefined, { permissive: "yes" })]), "tasks[0].permissive")).toMatch(/must be a boolean/);
  });
});

describe("validateWorkflowDef: workflow fields", () => {
  it.each([[null], [[]], ["flow"], [3]])("rejects a root that is not an object (%j)", (input) => {
    expect(onlyError(input, "")).toMatch(/must be a JSON object/);
  });

  it("requires name and tasks", () => {
    const errors = errorsOf({});
    expect(errors.map((issue) => issue.path)).toEqual(["name", "tasks"]);
    expect(errors[0]!.message).toMatch(/name is required/);
    expect(errors[1]!.message).toMatch(/tasks is required/);
  });

  it.each([
    ["", /empty/],
    ["   ", /empty or only whitespace/],
    ["a".repeat(256), /at most 255 characters/],
    ["orders:v2", /must not contain ':'/],
    // A URL naming it (GET /api/metadata/workflow/..) would resolve it away, reaching another route.
    ["..", /must not be \. or \.\./],
    [".", /must not be \. or \.\./],
    ["orders ", /must not start or end with whitespace/],
    [" orders", /must not start or end with whitespace/],
    ["orders\t", /must not start or end with whitespace/],
    [42, /must be a string.*the number 42/],
  ])("rejects the name %j", (name, message) => {
    expect(onlyError(def({ name }), "name")).toMatch(message);
  });

  it("accepts a name of exactly 255 characters", () => {
    expect(accepted(def({ name: "a".repeat(255) })).name).toHaveLength(255);
  });

  it("rejects a description that is not a string", () => {
    expect(onlyError(def({ description: 5 }), "description")).toMatch(/description must be a string/);
  });

  it.each([[1.5], ["1.5"], ["two"], [-1], ["-1"], [2_147_483_648], ["2147483648"]])("rejects the version %j", (version) => {
    expect(onlyError(def({ version }), "version")).toMatch(/integer from 0 to 2147483647/);
  });

  it.each([["2", 2], [" 2 ", 2], ["+2", 2], ["007", 7], ["-0", 0]])("accepts the version %j as Jackson reads it, stored as the number %j", (version, stored) => {
    expect(Object.is(accepted(def({ version })).version, stored)).toBe(true);
  });

  it("accepts version 0, which the Java SDK's ConductorWorkflow sends unless a version is set, and defaults to 1", () => {
    expect(accepted(def({ version: 0 })).version).toBe(0);
    expect(accepted(def({})).version).toBe(1);
  });

  it.each([[1], ["1"], [3]])("rejects the schemaVersion %j", (schemaVersion) => {
    expect(onlyError(def({ schemaVersion }), "schemaVersion")).toMatch(/schemaVersion must be 2/);
  });

  it.each([[""], [null]])("accepts the ownerEmail %j as none, as Conductor's @Email check does", (ownerEmail) => {
    expect(accepted(def({ ownerEmail })).name).toBe(def().name);
  });

  it.each([["not-an-email"], ["a b@example.com"], ["@example.com"], ["dev@"], ["dev@exa..mple"], ["dev@-example"], [7]])("rejects the ownerEmail %j", (ownerEmail) => {
    expect(onlyError(def({ ownerEmail }), "ownerEmail")).toMatch(/e-mail address/);
  });

  it.each([["test@test"], ["dev@localhost"], ["first.last+tag@sub.example.co"], ["x@[127.0.0.1]"]])("accepts the ownerEmail %j, as Conductor's @Email (Hibernate's) does: the Python SDK's tests register with test@test", (ownerEmail) => {
    expect(accepted(def({ ownerEmail })).ownerEmail).toBe(ownerEmail);
  });

  // Hibernate Validator's AbstractEmailValidator takes quoted words in the local part, and its DomainNameUtil RFC 5322's
  // atext (`_` among it) in a domain's labels and `[IPv6:…]` literals: a definition Conductor stores with one is taken.
  const HIBERNATE_ADDRESSES = [['"john doe"@example.com'], ['"ops@night"@example.com'], ['first."x\\"y".last@example.com'], ["ops@build_host.internal"], ["x@[IPv6:2001:db8::1]"], ["x@[IPv6:::ffff:10.0.0.1]"]];
  it.each(HIBERNATE_ADDRESSES)("accepts the ownerEmail %j as Hibernate's @Email does, in a workflow and a task definition", (ownerEmail) => {
    expect(accepted(def({ ownerEmail })).ownerEmail).toBe(ownerEmail);
    expect(validateTaskDef({ name: "owned", ownerEmail })).toMatchObject({ ok: true, value: { ownerEmail } });
  });

  it.each([['"unclosed@example.com'], ['"a"b@example.com'], ["x@[::1]"], ["x@[1.2.3]"], ["x@[IPv6:1::2::3]"], ["x@[IPv6:1:2:3:4:5:6:7]"], ["a@b.com "], ["a@b."]])("rejects the ownerEmail %j, as Hibernate's @Email does", (ownerEmail) => {
    expect(onlyError(def({ ownerEmail }), "ownerEmail")).toMatch(/e-mail address/);
    expect(validateTaskDef({ name: "owned", ownerEmail }).ok).toBe(false);
  });

  it.each([[[]], [{}], ["tasks"]])("rejects tasks given as %j", (tasks) => {
    expect(onlyError({ name: "n", tasks }, "tasks")).toMatch(/non-empty array of task definitions/);
  });

  it(`allows ${MAX_TASKS_PER_DEFINITION} tasks and rejects one more`, () => {
    const tasks = (count: number) => Array.from({ length: count }, (_, i) => httpTask(`t${i}`));
    expect(accepted(def({}, tasks(MAX_TASKS_PER_DEFINITION))).tasks).toHaveLength(MAX_TASKS_PER_DEFINITION);
    expect(onlyError(def({}, tasks(MAX_TASKS_PER_DEFINITION + 1)), "tasks")).toMatch(/at most 200 tasks.*has 201/);
  });

  it("rejects workflow inputParameters that are not an array of strings", () => {
    expect(onlyError(def({ inputParameters: "orderId" }), "inputParameters")).toMatch(/array of input names/);
    expect(onlyError(def({ inputParameters: ["a", 2] }), "inputParameters[1]")).toMatch(/must be a string/);
  });

  it("rejects outputParameters that are not an object", () => {
    expect(onlyError(def({ outputParameters: ["x"] }), "outputParameters")).toMatch(/outputParameters must be an object/);
  });

  it("reports malformed expressions in outputParameters at their own path", () => {
    expect(onlyError(def({ outputParameters: { nested: { list: ["ok", "${broken"] } } }), "outputParameters.nested.list[1]")).toMatch(
      /malformed expression/,
    );
  });

  it.each([[-1], [2.5], ["-1"], ["2.5"], ["30s"], ["0x1E"], ["3e1"]])("rejects the timeoutSeconds %j", (timeoutSeconds) => {
    expect(onlyError(def({ timeoutSeconds }), "timeoutSeconds")).toMatch(/at least 0/);
  });

  it("reads a timeoutSeconds given as digits as the number, as Jackson reads Conductor's long", () => {
    expect(accepted(def({ timeoutSeconds: "30" })).timeoutSeconds).toBe(30);
    expect(accepted(def({ timeoutSeconds: "\t60\n" })).timeoutSeconds).toBe(60);
  });

  it("keeps restartable (true unless given false) and rejects one that is not a boolean", () => {
    expect(accepted(def()).restartable).toBe(true);
    expect(accepted(def({ restartable: false })).restartable).toBe(false);
    // Jackson's words for a boolean, as Conductor reads its `boolean restartable`; stored as the boolean.
    for (const [text, value] of [["false", false], ["False", false], [" FALSE ", false], ["true", true], ["TRUE", true]] as const) {
      expect(accepted(def({ restartable: text })).restartable).toBe(value);
    }
    // "" and "null" are Jackson's null, which its primitive boolean reads as false.
    for (const text of ["", " null "]) expect(accepted(def({ restartable: text })).restartable).toBe(false);
    for (const text of ["no", "0", "fAlse", "nil"]) {
      expect(onlyError(def({ restartable: text }), "restartable")).toBe(`restartable must be a boolean, but received the string ${JSON.stringify(text)}`);
    }
    expect(accepted(def({ restartable: null })).restartable).toBe(true);
  });

  it("keeps timeoutPolicy (Conductor's ALERT_ONLY unless given, null included) and rejects any other value, RETRY (a task's policy only) included", () => {
    expect(accepted(def({ timeoutSeconds: 60 })).timeoutPolicy).toBe("ALERT_ONLY");
    expect(accepted(def({ timeoutSeconds: 60, timeoutPolicy: null })).timeoutPolicy).toBe("ALERT_ONLY");
    expect(accepted(def({ timeoutPolicy: "TIME_OUT_WF", timeoutSeconds: 5 })).timeoutPolicy).toBe("TIME_OUT_WF");
    // "" is none too, as the Go SDK's client writes an unset policy.
    expect(accepted(def({ timeoutSeconds: 60, timeoutPolicy: "" })).timeoutPolicy).toBe("ALERT_ONLY");
    // By its position in WorkflowDef.TimeoutPolicy (TIME_OUT_WF, ALERT_ONLY), as Jackson reads it; 2 is past the last.
    expect(accepted(def({ timeoutSeconds: 60, timeoutPolicy: 1 })).timeoutPolicy).toBe("ALERT_ONLY");
    for (const timeoutPolicy of ["RETRY", "alert_only", 2, "-1"]) {
      expect(onlyError(def({ timeoutPolicy }), "timeoutPolicy")).toMatch(/timeoutPolicy must be one of TIME_OUT_WF, ALERT_ONLY, but received/);
    }
  });

  it("keeps inputTemplate as given (its values are data: a ${...} in one is not checked) and rejects one that is not an object of JSON values", () => {
    expect(accepted(def()).inputTemplate).toBeUndefined();
    const inputTemplate = { region: "eu", nested: { list: [1, "${not an expression"] } };
    expect(accepted(def({ inputTemplate })).inputTemplate).toEqual(inputTemplate);
    for (const bad of [["a"], "x"]) {
      expect(onlyError(def({ inputTemplate: bad }), "inputTemplate")).toMatch(/inputTemplate must be an object of JSON values/);
    }
    // Null is none, as the Go SDK's client writes an unset map.
    expect(accepted(def({ inputTemplate: null, inputParameters: null, outputParameters: null, variables: null }))).not.toHaveProperty("inputTemplate");
    const deep: unknown = JSON.parse(`${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`);
    expect(onlyError(def({ inputTemplate: { deep } }), "inputTemplate")).toMatch(/deeper than/);
  });

  it("keeps variables as given (data: a ${...} in one is not checked) and rejects one that is not an object of JSON values", () => {
    expect(accepted(def()).variables).toBeUndefined();
    // What Conductor's clients send by default.
    expect(accepted(def({ variables: {} })).variables).toEqual({});
    const variables = { count: 0, nested: { list: [1, "${not an expression"] }, none: null };
    expect(accepted(def({ variables })).variables).toEqual(variables);
    for (const bad of [["a"], "x", 3]) {
      expect(onlyError(def({ variables: bad }), "variables")).toMatch(/variables must be an object of JSON values/);
    }
    const deep: unknown = JSON.parse(`${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`);
    expect(onlyError(def({ variables: { deep } }), "variables")).toMatch(/deeper than/);
  });
});

describe("validateWorkflowDef: common task fields", () => {
  it("rejects a task that is not an object", () => {
    expect(onlyError(def({}, [httpTask("a"), "b"]), "tasks[1]")).toMatch(/each task must be an object/);
  });

  it("requires name and taskReferenceName, and a known type", () => {
    const errors = errorsOf(def({}, [{ inputParameters: {} }, { name: "x", taskReferenceName: "x", type: "NOPE" }]));
    expect(errors.map((issue) => issue.path)).toEqual(["tasks[0].name", "tasks[0].taskReferenceName", "tasks[1].type"]);
    expect(errors.map((issue) => issue.message)).toEqual([
      expect.stringMatching(/name is required/),
      expect.stringMatching(/taskReferenceName is required/),
      expect.stringMatching(/type must be one of the supported task types.*HTTP, SUB_WORKFLOW, WAIT_FOR_WEBHOOK/),
    ]);
  });

  it("reads a task without a type as Conductor's WorkflowTask does: its workflowTaskType (the C# SDK's only type field), else SIMPLE, at any depth", () => {
    const definition = accepted(
      def({}, [
        { name: "worker", taskReferenceName: "worker", type: null },
        { name: "wait", taskReferenceName: "wait", workflowTaskType: "WAIT", inputParameters: { duration: "1 s" } },
        {
          name: "fork",
          taskReferenceName: "fork",
          workflowTaskType: "FORK_JOIN",
          forkTasks: [[{ name: "left", taskReferenceName: "left" }], [{ name: "pick", taskReferenceName: "pick", workflowTaskType: "SWITCH", evaluatorType: "value-param", expression: "k", inputParameters: { k: "a" }, decisionCases: { a: [{ name: "in_case", taskReferenceName: "in_case", workflowTaskType: "NOOP" }] }, defaultCase: [{ name: "by_default", taskReferenceName: "by_default" }] }]],
        },
        { name: "join", taskReferenceName: "join", workflowTaskType: "JOIN", joinOn: ["left", "pick"] },
        { name: "loop", taskReferenceName: "loop", workflowTaskType: "DO_WHILE", loopCondition: "false", loopOver: [{ name: "looped", taskReferenceName: "looped", workflowTaskType: "NOOP" }] },
        // A type given wins, as it does in Conductor when both come (Jackson sets type last from its own field here).
        { name: "given", taskReferenceName: "given", type: "NOOP", workflowTaskType: "WAIT" },
      ]),
    );
    const [worker, wait, fork, join, loop, given] = definition.tasks;
    expect([worker, wait, fork, join, loop, given].map((task) => task!.type)).toEqual(["SIMPLE", "WAIT", "FORK_JOIN", "JOIN", "DO_WHILE", "NOOP"]);
    expect(fork!.forkTasks!.map((branch) => branch.map((task) => task.type))).toEqual([["SIMPLE"], ["SWITCH"]]);
    const pick = fork!.forkTasks![1]![0]!;
    expect([pick.decisionCases!["a"]![0]!.type, pick.defaultCase![0]!.type, loop!.loopOver![0]!.type]).toEqual(["NOOP", "SIMPLE", "NOOP"]);
    expect(JSON.stringify(definition)).not.toContain("workflowTaskType");
    // A duplicate reference name inside a branch typed this way is still found.
    expect(errorsOf(def({}, [{ name: "f", taskReferenceName: "f", workflowTaskType: "FORK_JOIN", forkTasks: [[{ name: "a", taskReferenceName: "dup" }], [{ name: "b", taskReferenceName: "dup" }]] }, { name: "j", taskReferenceName: "j", workflowTaskType: "JOIN", joinOn: [] }])).map((issue) => issue.path)).toContain("tasks[0].forkTasks[1][0].taskReferenceName");
  });

  it("reads a task whose type is \"\" as one without a type, as the Go SDK's client writes a WorkflowTask built without one", () => {
    // The Go client (toGeneratedWorkflowTask) writes every unset text field as "", the type among them: this was a 400
    // ("type must be one of the supported task types ..., but received the string \"\"").
    const definition = accepted(
      def({}, [
        { name: "worker", taskReferenceName: "worker", type: "", description: "", evaluatorType: "", expression: "", sink: "", loopCondition: "", startDelay: 0, optional: false },
        { name: "wait", taskReferenceName: "wait", type: "", workflowTaskType: "WAIT", inputParameters: { duration: "1 s" } },
        { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", evaluatorType: "", loopCondition: "false", loopOver: [{ name: "looped", taskReferenceName: "looped", type: "" }] },
      ]),
    );
    const [worker, wait, loop] = definition.tasks;
    expect([worker!.type, wait!.type, loop!.loopOver![0]!.type]).toEqual(["SIMPLE", "WAIT", "SIMPLE"]);
  });

  it("rejects an empty task name", () => {
    expect(onlyError(def({}, [httpTask("a", undefined, { name: " " })]), "tasks[0].name")).toMatch(/non-empty string/);
  });

  it.each([["a.b"], ["with space"], ["x/y"], [""], [5]])("rejects the taskReferenceName %j and says why", (ref) => {
    const message = onlyError(def({}, [httpTask("a", undefined, { taskReferenceName: ref })]), "tasks[0].taskReferenceName");
    expect(message).toMatch(/letters, digits, _ and -/);
    expect(message).toMatch(/expressions and URL paths/);
  });

  it.each([["-step"], ["9"], ["12-ab"]])("rejects the taskReferenceName %j: an expression could not address it (it would read a negation or a number)", (ref) => {
    const message = onlyError(def({}, [httpTask("a", undefined, { taskReferenceName: ref })]), "tasks[0].taskReferenceName");
    expect(message).toMatch(/first character after any leading digits is a letter or _/);
  });

  it("accepts reference names with letters, digits, _ and -, leading digits too (Conductor's e2e tests name tasks 8XILG), which expressions address", () => {
    expect(acceptedTask(httpTask("Step_1-b")).taskReferenceName).toBe("Step_1-b");
    expect(acceptedTask(httpTask("_9-x")).taskReferenceName).toBe("_9-x");
    expect(acceptedTask(httpTask("8XILG")).taskReferenceName).toBe("8XILG");
    const tasks = [httpTask("1st_step"), httpTask("next", { uri: "https://example.com/${1st_step.output.body}", method: "GET" })] as unknown as WorkflowTaskDef[];
    const { state } = startedWith("digits", tasks, {}, 1_000);
    const done = decide(state, { type: "dispatchResult", taskId: state.tasks[0]!.taskId, attempt: 1, status: "COMPLETED", output: { body: "got" } }, env(2_000)).state;
    expect(latestNamed(done, "next").inputData["uri"]).toBe("https://example.com/got");
    // A number not run into a name is still one: a JSONPath filter's bound.
    expect(registrationErrors([httpTask("calc", { uri: "https://example.com/x", method: "GET", n: "${workflow.input.items[?(@.n < 2e3)]}" }) as unknown as WorkflowTaskDef])).toEqual([]);
  });

  it.each([["KAFKA_PUBLISH"], ["http"], ["simple"], [1]])("rejects the task type %j and lists the supported types", (type) => {
    const message = onlyError(def({}, [{ name: "a", taskReferenceName: "a", type }]), "tasks[0].type");
    expect(message).toMatch(/supported task types: HTTP, SUB_WORKFLOW, WAIT_FOR_WEBHOOK, SIMPLE, SWITCH/);
  });

  it.each([
    ["http", "HTTP"],
    ["simple", "SIMPLE"],
    ["fork-join", "FORK_JOIN"],
    ["HTTPP", "HTTP"],
    ["WAIT_FOR_WEBHOK", "WAIT_FOR_WEBHOOK"],
    ["SUBWORKFLOW", "SUB_WORKFLOW"],
    ["Do_While", "DO_WHILE"],
  ])("rejects the task type %j saying the type it most likely meant, %s", (type, meant) => {
    const message = onlyError(def({}, [{ name: "a", taskReferenceName: "a", type }]), "tasks[0].type");
    expect(message).toMatch(/supported task types: HTTP, SUB_WORKFLOW/);
    expect(message.endsWith(`, but received the string ${JSON.stringify(type)}; did you mean ${meant}?`)).toBe(true);
  });

  it.each([["KAFKA_PUBLISH"], ["JION"], ["X"], [1]])("suggests no task type for %j, nearest to none (or to two alike)", (type) => {
    expect(onlyError(def({}, [{ name: "a", taskReferenceName: "a", type }]), "tasks[0].type")).not.toContain("did you mean");
  });

  it.each([
    ["inputParameters", "uri", /inputParameters must be an object/],
    ["asyncComplete", "yes", /asyncComplete must be a boolean/],
    ["optional", 0.5, /optional must be a boolean/],
    ["retryCount", -1, /retryCount must be an integer from 0 to 100/],
    ["retryCount", 101, /retryCount must be an integer from 0 to 100/],
    ["retryCount", 1.5, /retryCount must be an integer from 0 to 100/],
    ["retryLogic", "RANDOM", /retryLogic must be one of FIXED, LINEAR_BACKOFF, EXPONENTIAL_BACKOFF/],
    ["retryDelaySeconds", 86401, /retryDelaySeconds must be an integer from 0 to 86400/],
    ["retryDelaySeconds", -1, /retryDelaySeconds must be an integer from 0 to 86400/],
    ["description", 5, /description must be a string/],
  ])("rejects the task field %s = %j", (key, value, message) => {
    expect(onlyError(def({}, [webhookTask("w", {}), { ...webhookTask("x"), [key]: value }]), `tasks[1].${key}`)).toMatch(message);
  });

  it("accepts the retry fields at their bounds", () => {
    const task = acceptedTask(httpTask("a", undefined, { retryCount: 100, retryLogic: "FIXED", retryDelaySeconds: 86400 }));
    expect([task.retryCount, task.retryLogic, task.retryDelaySeconds]).toEqual([100, "FIXED", 86400]);
  });

  it("reports a later duplicate taskReferenceName on each duplicate, naming the first index", () => {
    const tasks = [httpTask("a"), httpTask("b"), webhookTask("a"), httpTask("a")];
    const errors = errorsOf(def({}, tasks));
    expect(errors.map((issue) => issue.path)).toEqual(["tasks[2].taskReferenceName", "tasks[3].taskReferenceName"]);
    for (const issue of errors) expect(issue.message).toMatch(/"a" is already used by tasks\[0\]/);
  });

  it("reports malformed expressions in task inputParameters at their nested path", () => {
    const inputs = { uri: "https://x.example", method: "GET", headers: { "X-Id": "${workflow.input.id" } };
    expect(onlyError(def({}, [httpTask("a", inputs)]), "tasks[0].inputParameters.headers.X-Id")).toMatch(/malformed expression/);
  });

  it("reports every problem of a definition at once", () => {
    const input = {
      name: "bad:name",
      version: -1,
      ownerEmail: "nobody",
      outputParameters: { x: "${" },
      tasks: [
        httpTask("a", { method: "FETCH" }),
        { name: "b", taskReferenceName: "a", type: "KAFKA_PUBLISH" },
        subTask("c", {}),
        webhookTask("d", { timeoutSeconds: -5 }),
      ],
    };
    expect(pathsOf(input)).toEqual([
      "name",
      "version",
      "ownerEmail",
      "tasks[0].inputParameters.uri",
      "tasks[0].inputParameters.method",
      "tasks[1].type",
      "tasks[2].subWorkflowParam",
      "tasks[3].inputParameters.timeoutSeconds",
      "tasks[1].taskReferenceName",
      "outputParameters.x",
    ]);
  });
});

describe("HTTP tasks", () => {
  const only = (inputs: Json, path: string) => onlyError(def({}, [httpTask("h", inputs)]), path);
  const ok = (inputs: Json) => acceptedTask(httpTask("h", inputs));
  const nested = (request: Json): Json => ({ http_request: request });

  it("requires uri and method, flat and nested", () => {
    expect(pathsOf(def({}, [httpTask("h", {})]))).toEqual(["tasks[0].inputParameters.uri", "tasks[0].inputParameters.method"]);
    expect(pathsOf(def({}, [httpTask("h", nested({}))]))).toEqual([
      "tasks[0].inputParameters.http_request.uri",
      "tasks[0].inputParameters.http_request.method",
    ]);
  });

  it("requires uri and method when the task has no inputParameters at all", () => {
    const task = { name: "h", taskReferenceName: "h", type: "HTTP" };
    expect(pathsOf(def({}, [task]))).toEqual(["tasks[0].inputParameters.uri", "tasks[0].inputParameters.method"]);
  });

  it("checks the request the task will send: flat fields merged with http_request, nested winning", () => {
    ok({ uri: "https://x.example", http_request: { method: "GET" } });
    // A flat field that http_request overrides is never sent, so it is not checked.
    ok({ method: "get", http_request: { uri: "https://x.example", method: "GET" } });
    expect(only({ http_request: { method: "GET" } }, "tasks[0].inputParameters.http_request.uri")).toMatch(/uri is required/);
  });

  it("says where the URL went when a request names it url (or endpoint) rather than Conductor's uri", () => {
    const hint = (key: string) => `uri is required and must be a non-empty string (the URL to call); this request has "${key}", which the HTTP task does not read: name it "uri", as Conductor's HTTP task does`;
    expect(only({ http_request: { url: "https://x.example", method: "GET" } }, "tasks[0].inputParameters.http_request.uri")).toBe(hint("url"));
    expect(only({ endpoint: "https://x.example", method: "GET" }, "tasks[0].inputParameters.uri")).toBe(hint("endpoint"));
    expect(only({ method: "GET" }, "tasks[0].inputParameters.uri")).not.toContain("this request has");
  });

  it.each([
    ["method", "get", /method must be one of GET.*upper case/],
    ["accept", "text/csv", /accept must be one of the supported MIME types/],
    ["contentType", "application/x-unknown", /contentType must be one of/],
    ["headers", ["a"], /headers must be an object/],
    ["encode", "no", /encode must be a boolean/],
    ["readTimeOut", "5s", /milliseconds from 0 to 86400000/],
    ["connectionTimeOut", -1, /milliseconds from 0 to 86400000/],
  ])("refuses a bad flat %s beside http_request, at its flat path", (key, value, message) => {
    const inputs = { [key]: value, http_request: { uri: "https://x.example", ...(key === "method" ? {} : { method: "GET" }) } };
    expect(only(inputs, `tasks[0].inputParameters.${key}`)).toMatch(message);
  });

  it("requires a body when a flat method beside http_request needs one", () => {
    expect(only({ method: "POST", http_request: { uri: "https://x.example" } }, "tasks[0].inputParameters.http_request.body")).toMatch(
      /body is required for POST/,
    );
    ok({ method: "POST", body: null, http_request: { uri: "https://x.example" } });
  });

  it("rejects an http_request that is not an object", () => {
    expect(only({ http_request: "https://x.example" }, "tasks[0].inputParameters.http_request")).toMatch(/http_request must be an object/);
  });

  it("rejects an empty uri", () => {
    expect(only({ uri: " ", method: "GET" }, "tasks[0].inputParameters.uri")).toMatch(/uri must be a non-empty string/);
  });

  it.each([["get"], ["FETCH"], [1]])("rejects the method %j, saying methods are upper case", (method) => {
    const message = only(nested({ uri: "https://x.example", method }), "tasks[0].inputParameters.http_request.method");
    expect(message).toMatch(/one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE/);
    expect(message).toMatch(/upper case/);
  });

  it.each(HTTP_METHODS.map((method) => [method]))("accepts the method %s", (method) => {
    expect(ok({ uri: "https://x.example", method, body: null }).inputParameters?.["method"]).toBe(method);
  });

  it.each([["POST"], ["PUT"], ["PATCH"]])("requires a body for %s, flat and nested", (method) => {
    expect(only({ uri: "https://x.example", method }, "tasks[0].inputParameters.body")).toMatch(new RegExp(`body is required for ${method}`));
    expect(only(nested({ uri: "https://x.example", method }), "tasks[0].inputParameters.http_request.body")).toMatch(/body is required/);
  });

  it("counts a null body as present and needs none for GET or DELETE", () => {
    ok({ uri: "https://x.example", method: "POST", body: null });
    ok({ uri: "https://x.example", method: "GET" });
    ok({ uri: "https://x.example", method: "DELETE" });
  });

  it("accepts every accept type of the spec (Orkes' list) and Conductor's text/html and text/xml, and rejects others", () => {
    expect(HTTP_ACCEPT_TYPES).toHaveLength(29);
    // Conductor's HTTP task docs (conductor-oss/conductor docs/.../systemtasks/http-task.md) list each of these.
    for (const accept of ["application/json", "application/xml", "application/pdf", "application/octet-stream", "application/x-www-form-urlencoded", "text/plain", "text/html", "text/xml", "image/jpeg", "image/png", "image/gif"]) {
      expect(HTTP_ACCEPT_TYPES).toContain(accept);
    }
    for (const accept of HTTP_ACCEPT_TYPES) ok({ uri: "https://x.example", method: "GET", accept });
    ok({ uri: "https://x.example", method: "GET", accept: "text/html; charset=utf-8" });
    expect(only({ uri: "https://x.example", method: "GET", accept: "text/csv" }, "tasks[0].inputParameters.accept")).toMatch(
      /accept must be one of the supported MIME types: application\/java-archive.*text\/html, text\/xml/,
    );
  });

  it("accepts Orkes' documented content types (its accept list) and Conductor's text/html, and rejects others", () => {
    for (const contentType of ["application/json", "text/plain", "application/xml", "image/svg+xml", "application/x-www-form-urlencoded", "application/octet-stream", "text/html"]) {
      expect(HTTP_CONTENT_TYPES).toContain(contentType);
    }
    // Not text/xml, which neither documents as a content type.
    expect(HTTP_CONTENT_TYPES).toHaveLength(HTTP_ACCEPT_TYPES.length - 1);
    expect(HTTP_CONTENT_TYPES).not.toContain("text/xml");
    for (const contentType of HTTP_CONTENT_TYPES) ok({ uri: "https://x.example", method: "POST", body: "", contentType });
    const inputs = nested({ uri: "https://x.example", method: "POST", body: "", contentType: "application/x-unknown" });
    expect(only(inputs, "tasks[0].inputParameters.http_request.contentType")).toMatch(/contentType must be one of.*application\/x-www-form-urlencoded.*text\/html/);
  });

  it("accepts a listed content or accept type in any case and with parameters (a charset), as clients write them", () => {
    ok({ uri: "https://x.example", method: "POST", body: "", contentType: "application/json; charset=utf-8", accept: "Application/JSON;charset=UTF-8" });
    ok({ uri: "https://x.example", method: "POST", body: "", contentType: "TEXT/PLAIN" });
    ok({ uri: "https://x.example", method: "POST", body: "", contentType: "application/x-www-form-urlencoded; charset=UTF-8" });
    expect(only({ uri: "https://x.example", method: "POST", body: "", contentType: "text/csv; charset=utf-8" }, "tasks[0].inputParameters.contentType")).toMatch(/contentType must be one of/);
    expect(only({ uri: "https://x.example", method: "POST", body: "", contentType: "application/json;\r\nX-Injected: 1" }, "tasks[0].inputParameters.contentType")).toMatch(/contentType must be one of/);
  });

  it("rejects headers that are not an object or hold objects; takes lists of values (the Go and Python SDKs') and null (no header)", () => {
    expect(only({ uri: "https://x.example", method: "GET", headers: ["a"] }, "tasks[0].inputParameters.headers")).toMatch(
      /headers must be an object/,
    );
    const inputs = { uri: "https://x.example", method: "GET", headers: { "X-Ok": "1", "X-Bad": { a: 1 }, "X-Null": null, "X-List": ["a", 1], "X-Deep": [["a"]] } };
    expect(pathsOf(def({}, [httpTask("h", inputs)]))).toEqual([
      "tasks[0].inputParameters.headers.X-Bad",
      "tasks[0].inputParameters.headers.X-Deep",
    ]);
  });

  it("takes the whole request from an expression, as Conductor's docs start a workflow (checked as the task runs)", () => {
    expect(errorsOf(def({}, [{ name: "h", taskReferenceName: "h", type: "HTTP", inputParameters: { http_request: { uri: "https://x.example" } } }])).map((issue) => issue.path)).toEqual([
      "tasks[0].inputParameters.http_request.method",
    ]);
    const task = acceptedTask({ name: "h", taskReferenceName: "h", type: "HTTP", inputParameters: { http_request: "${workflow.input.http_request}" } });
    expect(task.inputParameters).toEqual({ http_request: "${workflow.input.http_request}" });
  });

  it("rejects header names that are not RFC 7230 tokens, flat and nested", () => {
    const inputs = { uri: "https://x.example", method: "GET", headers: { "X-Ok": "1", "X Space": "2", "X:Colon": "3", "Ünï": "4", "": "5" } };
    const errors = errorsOf(def({}, [httpTask("h", inputs)]));
    expect(errors.map((issue) => issue.path)).toEqual([
      "tasks[0].inputParameters.headers.X Space",
      "tasks[0].inputParameters.headers.X:Colon",
      "tasks[0].inputParameters.headers.Ünï",
      "tasks[0].inputParameters.headers.",
    ]);
    for (const issue of errors) expect(issue.message).toMatch(/header name .* must be a token \(RFC 7230/);
    expect(only(nested({ uri: "https://x.example", method: "GET", headers: { "a b": "1" } }), "tasks[0].inputParameters.http_request.headers.a b")).toMatch(
      /header name "a b" must be a token/,
    );
    ok({ uri: "https://x.example", method: "GET", headers: { "X-Custom_1.a!#$%&'*+^`|~": "v" } });
  });

  it("rejects encode and asyncComplete inputs that are not booleans", () => {
    expect(only({ uri: "https://x.example", method: "GET", encode: "no" }, "tasks[0].inputParameters.encode")).toMatch(/encode must be a boolean/);
    expect(only({ uri: "https://x.example", method: "GET", asyncComplete: 1 }, "tasks[0].inputParameters.asyncComplete")).toMatch(
      /asyncComplete must be a boolean/,
    );
    expect(
      only({ asyncComplete: "yes", http_request: { uri: "https://x.example", method: "GET" } }, "tasks[0].inputParameters.asyncComplete"),
    ).toMatch(/asyncComplete must be a boolean/);
  });

  // 900000: over the default HTTP_MAX_TIMEOUT_MS, which an operator may raise; the request is capped as it runs.
  it.each([[0], [3000], ["3000"], [900_000], [MAX_HTTP_TIMEOUT_MS], [String(MAX_HTTP_TIMEOUT_MS)]])("accepts the timeout %j", (timeout) => {
    ok(nested({ uri: "https://x.example", method: "GET", connectionTimeOut: timeout, readTimeOut: timeout }));
  });

  it("holds a request to HTTP_MAX_TIMEOUT_MS whatever the task asks, and gives a raised one to a task asking more", () => {
    const input = { http_request: { uri: "https://x.example", method: "GET", connectionTimeOut: 900_000, readTimeOut: 900_000 } };
    expect(httpTimeouts(input, DEFAULT_ENGINE_CONFIG)).toEqual({ connectTimeoutMs: DEFAULT_ENGINE_CONFIG.httpMaxTimeoutMs, readTimeoutMs: DEFAULT_ENGINE_CONFIG.httpMaxTimeoutMs });
    expect(httpTimeouts(input, { ...DEFAULT_ENGINE_CONFIG, httpMaxTimeoutMs: 1_800_000 })).toEqual({ connectTimeoutMs: 900_000, readTimeoutMs: 900_000 });
  });

  it.each([[-1], [1.5], ["5s"], [MAX_HTTP_TIMEOUT_MS + 1], [String(MAX_HTTP_TIMEOUT_MS + 1)], [true]])("rejects the timeout %j", (timeout) => {
    const inputs = nested({ uri: "https://x.example", method: "GET", connectionTimeOut: timeout, readTimeOut: timeout });
    const errors = errorsOf(def({}, [httpTask("h", inputs)]));
    expect(errors.map((issue) => issue.path)).toEqual([
      "tasks[0].inputParameters.http_request.connectionTimeOut",
      "tasks[0].inputParameters.http_request.readTimeOut",
    ]);
    for (const issue of errors) expect(issue.message).toMatch(/milliseconds from 0 to 86400000/);
  });

  it("skips type and value checks for fields holding expressions", () => {
    ok({
      uri: "${workflow.input.url}",
      method: "${workflow.input.method}",
      accept: "${workflow.input.accept}",
      contentType: "${workflow.input.type}",
      headers: "${workflow.input.headers}",
      encode: "${workflow.input.encode}",
      connectionTimeOut: "${workflow.input.ms}",
      readTimeOut: "${workflow.input.ms}",
      asyncComplete: "${workflow.input.async}",
    });
  });

  it("refuses a literal uri no request can be sent to whatever its vipAddress (another scheme, an http URL that does not parse), and leaves scheme-less paths and expressions to the run", () => {
    expect(only({ uri: "localhost:8080/orders", method: "GET" }, "tasks[0].inputParameters.uri")).toMatch(/reads as one of scheme localhost: write https:\/\/localhost:8080\/orders/);
    expect(only({ uri: "ftp://files.example.com/x", method: "GET", vipAddress: "orders.internal:7001" }, "tasks[0].inputParameters.uri")).toMatch(/http or https URL/);
    // A scheme that is one (not a host:port read as one) gets no advice to write https:// before it.
    expect(only({ uri: "ftp://files.example.com/x", method: "GET" }, "tasks[0].inputParameters.uri")).not.toMatch(/write https:\/\/ftp/);
    expect(only({ uri: "mailto:ops@example.com", method: "GET" }, "tasks[0].inputParameters.uri")).toMatch(/http or https requests only/);
    expect(only({ uri: "localhost:8080/x", method: "GET" }, "tasks[0].inputParameters.uri")).toMatch(/write https:\/\/localhost:8080\/x/);
    expect(only(nested({ uri: "http://", method: "GET" }), "tasks[0].inputParameters.http_request.uri")).toMatch(/is not one/);
    expect(only({ ...nested({ method: "GET" }), uri: "mailto:ops@example.com" }, "tasks[0].inputParameters.uri")).toMatch(/scheme mailto/);
    // A path (with or without its leading slash) may meet a vipAddress from the task definition's inputTemplate at run time.
    ok({ uri: "/orders/42", method: "GET" });
    ok({ uri: "example.com/x", method: "GET" });
    ok({ uri: "http://x.test/a?b=c d&e", method: "GET" });
    ok({ uri: "${workflow.input.scheme}://x.test", method: "GET" });
    ok({ uri: "HTTPS://X.TEST", method: "GET" });
  });

  it("refuses a uri with expressions whose literal start names a scheme other than http(s) (localhost:8080/orders/${…}), whatever the expressions give", () => {
    expect(only({ uri: "localhost:8080/orders/${workflow.input.id}", method: "GET" }, "tasks[0].inputParameters.uri")).toMatch(/starts with the scheme localhost, whatever its expressions give: write https:\/\/localhost:8080\/orders\/\$\{workflow.input.id\}/);
    expect(only(nested({ uri: " ftp://files.example.com/${workflow.input.file}", method: "GET" }), "tasks[0].inputParameters.http_request.uri")).toMatch(/scheme ftp/);
    // An http(s) start, a path, a uri starting with an expression, and an escaped `$${` are left to the run.
    ok({ uri: "https://x.test/orders/${workflow.input.id}", method: "GET" });
    ok({ uri: "HTTP://x.test/${workflow.input.id}", method: "GET" });
    ok({ uri: "/orders/${workflow.input.id}", method: "GET" });
    ok({ uri: "${workflow.input.base}:8080/orders", method: "GET" });
    ok({ uri: "$${literal}:x/${workflow.input.id}", method: "GET" });
  });

  it("leaves the registration-only rules (uri scheme, HUMAN autoClaim) out of a definition checked again as it runs, however deep its children nest, and keeps them for a registration", () => {
    // START_WORKFLOW > SUB_WORKFLOW inline child > DYNAMIC inline child, each in a FORK branch in a DO_WHILE: the issues'
    // paths are rewritten at each level, so the mark must be read where the issue is made, not after.
    const http = (ref: string, uri: string) => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { http_request: { uri, method: "GET" } } });
    const assignments = [{ assignee: { user: "ada", userType: "CONDUCTOR_USER" }, slaMinutes: 0 }];
    const human = { name: "hu", taskReferenceName: "hu", type: "HUMAN", inputParameters: { __humanTaskDefinition: { autoClaim: "yes", assignments } } };
    const loopFork = (ref: string, inner: object) => ({
      name: ref,
      taskReferenceName: ref,
      type: "DO_WHILE",
      loopCondition: "false",
      loopOver: [
        { name: `${ref}_f`, taskReferenceName: `${ref}_f`, type: "FORK_JOIN", forkTasks: [[inner]] },
        { name: `${ref}_j`, taskReferenceName: `${ref}_j`, type: "JOIN", joinOn: [] },
      ],
    });
    const def = (name: string, tasks: unknown[]) => ({ name, schemaVersion: 2, tasks });
    const leaf = def("leaf", [http("h", "localhost:8080/x"), human, http("h2", "ftp://files/${workflow.input.x}")]);
    const dynamic = def("d3", [loopFork("l3", { name: "dy", taskReferenceName: "dy", type: "DYNAMIC", dynamicTaskNameParam: "t", inputParameters: { t: "SUB_WORKFLOW", subWorkflowDefinition: leaf } })]);
    const sub = def("d2", [loopFork("l2", { name: "s", taskReferenceName: "s", type: "SUB_WORKFLOW", subWorkflowParam: { name: "d3", workflowDefinition: dynamic } })]);
    const starter = def("d1", [loopFork("l1", { name: "st", taskReferenceName: "st", type: "START_WORKFLOW", inputParameters: { startWorkflow: { name: "d2", workflowDef: sub } } })]);
    const registered = validateWorkflowDef(starter);
    const at = "tasks[0].loopOver[0].forkTasks[0][0].inputParameters.startWorkflow.workflowDef.tasks[0].loopOver[0].forkTasks[0][0].subWorkflowParam.workflowDefinition.tasks[0].loopOver[0].forkTasks[0][0].inputParameters.subWorkflowDefinition";
    expect(registered.ok ? [] : registered.errors.map((issue) => issue.path)).toEqual([`${at}.tasks[0].inputParameters.http_request.uri`, `${at}.tasks[1].inputParameters.__humanTaskDefinition.autoClaim`, `${at}.tasks[2].inputParameters.http_request.uri`]);
    expect(validateWorkflowDef(starter, { accepted: true })).toMatchObject({ ok: true });
    // What the run cannot do is still refused at that depth.
    const broken = def("d1", [loopFork("l1", { name: "st", taskReferenceName: "st", type: "START_WORKFLOW", inputParameters: { startWorkflow: { name: "d2", workflowDef: def("d2", [loopFork("l2", http("h", ""))]) } } })]);
    expect(validateWorkflowDef(broken, { accepted: true })).toMatchObject({ ok: false, errors: [{ path: expect.stringMatching(/workflowDef\.tasks\[0\]\.loopOver\[0\]\.forkTasks\[0\]\[0\]\.inputParameters\.http_request\.uri$/) }] });
  });

  it("still requires uri when method is an expression, and no body then", () => {
    expect(only({ method: "${workflow.input.method}" }, "tasks[0].inputParameters.uri")).toMatch(/uri is required/);
  });

  it("validates HTTP tasks directly with the task's own path", () => {
    expect(validateHttpTask({ inputParameters: { uri: "u", method: "GET" } }, "tasks[4]")).toEqual([]);
    expect(validateHttpTask({ inputParameters: { method: "get" } }, "tasks[4]").map((issue) => issue.path)).toEqual([
      "tasks[4].inputParameters.uri",
      "tasks[4].inputParameters.method",
    ]);
  });
});

describe("validateWorkflowDef: the task reference names expressions read (Conductor's ConstraintParamUtil)", () => {
  const noop = (ref: string): Json => ({ name: ref, taskReferenceName: ref, type: "NOOP" });
  const inline = (ref: string, inputs: Json): Json => ({ name: ref, taskReferenceName: ref, type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "1", ...inputs } });
  const worker = (ref: string, inputs: Json): Json => ({ name: ref, taskReferenceName: ref, type: "SIMPLE", inputParameters: inputs });
  const loop = (ref: string, loopOver: Json[], extra: Json = {}): Json => ({ name: ref, taskReferenceName: ref, type: "DO_WHILE", loopCondition: "false", loopOver, ...extra });
  const fork = (ref: string, branches: Json[][]): Json[] => [
    { name: ref, taskReferenceName: ref, type: "FORK_JOIN", forkTasks: branches },
    { name: `${ref}_join`, taskReferenceName: `${ref}_join`, type: "JOIN", joinOn: branches.map((branch) => String(branch.at(-1)!["taskReferenceName"])) },
  ];

  it("refuses a misspelt reference in a task's input, at the parameter's path (nested maps and lists too), naming the task, the name, the expression and the name likely meant", () => {
    const errors = errorsOf(def({}, [noop("get_user"), inline("send_mail", { body: "${get_usr.output.body}", to: { list: ["x", "Dear ${get_usr.output.name}, ${get_user.output.id}"] } })]));
    expect(errors).toEqual([
      {
        path: "tasks[1].inputParameters.body",
        message: 'task "send_mail" reads "get_usr" in ${get_usr.output.body}, a taskReferenceName not defined in this workflow definition (no task has it, in any branch or loop), so it would resolve to null; did you mean "get_user"?',
      },
      { path: "tasks[1].inputParameters.to.list[1]", message: expect.stringContaining('reads "get_usr" in ${get_usr.output.name}, a taskReferenceName not defined') },
    ]);
  });

  it("reads every expression of a value: operands, filters, nested parts, JSONPath's $ root, each unknown name once per string", () => {
    const input = {
      a: "${lookup.output.ok && cheked.output.ok}",
      b: "${workflow.input.items[?(@.id == pick.output.id)]}",
      c: "${workflow.input.ids[${idx.output.n}]}",
      d: "${$.shape.output}",
      e: "${mising.output.a} and ${mising.output.b}",
    };
    const errors = errorsOf(def({}, [noop("lookup"), inline("use", input)]));
    expect(errors.map(({ path, message }) => [path, /reads "([^"]+)"/.exec(message)?.[1]])).toEqual([
      ["tasks[1].inputParameters.a", "cheked"],
      ["tasks[1].inputParameters.b", "pick"],
      ["tasks[1].inputParameters.c", "idx"],
      ["tasks[1].inputParameters.d", "shape"],
      ["tasks[1].inputParameters.e", "mising"],
    ]);
  });

  it("checks the tasks in branches, cases and loops, a SUB_WORKFLOW's subWorkflowParam, an EVENT's sink and the workflow's outputParameters too, where Conductor checks its top-level tasks' inputs only", () => {
    const tasks = [
      ...fork("split", [[inline("left", { v: "${nope_a.output}" })], [noop("right")]]),
      { name: "route", taskReferenceName: "route", type: "SWITCH", evaluatorType: "value-param", expression: "k", inputParameters: { k: "a" }, decisionCases: { a: [inline("case_a", { v: "${nope_b.output}" })] } },
      loop("again", [inline("inner", { v: "${nope_c.output}" })]),
      { name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "${nope_d.output.name}" } },
      { name: "publish", taskReferenceName: "publish", type: "EVENT", sink: "conductor:${nope_e.output.queue}" },
    ];
    expect(pathsOf(def({ outputParameters: { r: "${nope_f.output}" } }, tasks))).toEqual([
      "tasks[0].forkTasks[0][0].inputParameters.v",
      "tasks[2].decisionCases.a[0].inputParameters.v",
      "tasks[3].loopOver[0].inputParameters.v",
      "tasks[4].subWorkflowParam.name",
      "tasks[5].sink",
      "outputParameters.r",
    ]);
  });

  it("checks the workflow's failureWorkflow and rateLimitKey and a task's own taskDefinition's inputTemplate too (each resolved against the execution); not the legacy $workflow.input form, nor a registered inputTemplate", () => {
    const tasks = [noop("lookup"), { ...worker("work", {}), taskDefinition: { inputTemplate: { region: "${lokup.output.region}", fine: "${lookup.output.ok}" } } }];
    const errors = errorsOf(def({ failureWorkflow: "${lokup.output.onFailure}", rateLimitConfig: { rateLimitKey: "tenant-${lokup.output.tenant}", concurrentExecLimit: 2 } }, tasks));
    expect(errors).toEqual([
      { path: "tasks[1].taskDefinition.inputTemplate.region", message: expect.stringMatching(/^task "work" reads "lokup" in \$\{lokup\.output\.region\}, a taskReferenceName not defined in this workflow definition .*; did you mean "lookup"\?$/) },
      { path: "failureWorkflow", message: expect.stringMatching(/^the workflow's failureWorkflow reads "lokup" in \$\{lokup\.output\.onFailure\}, a taskReferenceName not defined in this workflow definition .*so it would resolve to null; did you mean "lookup"\?$/) },
      { path: "rateLimitConfig.rateLimitKey", message: expect.stringMatching(/^the workflow's rateLimitKey reads "lokup" in \$\{lokup\.output\.tenant\}, a taskReferenceName not defined/) },
    ]);
    // Spelt right, and in the legacy form (the input's key), they are taken.
    const right = def({ failureWorkflow: "${lookup.output.onFailure}", rateLimitConfig: { rateLimitKey: "${workflow.input.tenant}-${lookup.output.tenant}", concurrentExecLimit: 2 } }, [noop("lookup"), { ...worker("work", {}), taskDefinition: { inputTemplate: { region: "${lookup.output.region}" } } }]);
    expect(validateWorkflowDef(right)).toMatchObject({ ok: true });
    expect(validateWorkflowDef(def({ failureWorkflow: "$workflow.input.onFailure" }, [noop("lookup")]))).toMatchObject({ ok: true });
    // A registered task definition's inputTemplate is shared by every workflow with a task of its name: not read against this one.
    const registeredInputTemplates = new Map([["work", { region: "${other_workflows_task.output.region}" }]]);
    expect(validateWorkflowDef(def({}, [worker("work", {})]), { registeredInputTemplates })).toMatchObject({ ok: true });
  });

  it("accepts a name any task of the definition has, in any branch or loop and whatever its place, a loop task's run in an iteration, and the built-in roots", () => {
    const tasks = [
      inline("early", { later: "${late.output}", inLoop: "${inner.output}", run: "${inner__2.output}", nestedRun: "${deep__1__3.output}" }),
      ...fork("split", [[noop("left")], [loop("outer", [noop("inner"), loop("nested", [noop("deep")])])]]),
      worker("late", {
        builtIn: "${workflow.input.a} ${system.currentTimeMillis} ${TASK_ID} ${CPEWF_TASK_ID} ${$.workflow.input.b} ${workflow.secrets.token}",
        filtered: "${left.output.items[?(@.id == workflow.input.id)].name}",
        computed: "${${workflow.input.step}.output}",
        escaped: "$${undefined_name.output} stays text",
        literals: "${'text'} ${-2} ${true} ${null}",
      }),
    ];
    expect(validateWorkflowDef(def({ outputParameters: { fromBranch: "${left.output}", fromLoop: "${deep.output}" } }, tasks))).toMatchObject({ ok: true });
  });

  it("takes `<name>__<n>` for a task in a loop only: any other task's name so is misspelt", () => {
    expect(pathsOf(def({}, [noop("fetch"), inline("use", { v: "${fetch__1.output}" })]))).toEqual(["tasks[1].inputParameters.v"]);
  });

  it("reads an INLINE script's `${…}` as any expression (it is resolved so) and its `$${…}` as text; a cache key's `${…}` names the task's inputs, not tasks", () => {
    const script = (expression: string) => inline("script", { evaluatorType: "graaljs", expression });
    expect(pathsOf(def({}, [script("`Hello ${name}`")]))).toEqual(["tasks[0].inputParameters.expression"]);
    expect(validateWorkflowDef(def({}, [script("`Hello $${name}`")]))).toMatchObject({ ok: true });
    // The message says how to write JavaScript's own `${…}` in a script (a LAMBDA's too, in a loop or not), and only there.
    const lambda = { name: "lambda", taskReferenceName: "lambda", type: "LAMBDA", inputParameters: { scriptExpression: "return `Hi ${who}`;", other: "${who.output}" } };
    expect(errorsOf(def({}, [script("`Hello ${name}`"), loop("again", [lambda])])).map(({ path, message }) => [path, message.endsWith("; in a script, JavaScript's own ${…} is written $${…}")])).toEqual([
      ["tasks[0].inputParameters.expression", true],
      ["tasks[1].loopOver[0].inputParameters.scriptExpression", true],
      ["tasks[1].loopOver[0].inputParameters.other", false],
    ]);
    const cached = { name: "worker", taskReferenceName: "worker", type: "SIMPLE", inputParameters: { account: "${workflow.input.account}" }, cacheConfig: { key: "acct-${account}", ttlInSecond: 60 } };
    expect(validateWorkflowDef(def({}, [cached]))).toMatchObject({ ok: true });
  });

  it("leaves a definition written in place to its own tasks: its expressions read its tasks, not the parent's, wherever it is written", () => {
    const child = (reads: string) => ({ name: "child_flow", tasks: [noop("inside"), inline("use", { v: `\${${reads}.output}` })] });
    const holders = (reads: string): Json[] => [
      { name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "child_flow", workflowDefinition: child(reads) } },
      { name: "start", taskReferenceName: "start", type: "START_WORKFLOW", inputParameters: { startWorkflow: { workflowDef: child(reads) } } },
      { name: "dyn", taskReferenceName: "dyn", type: "DYNAMIC", dynamicTaskNameParam: "t", inputParameters: { t: "SUB_WORKFLOW", subWorkflowName: "child_flow", subWorkflowDefinition: child(reads) } },
    ];
    expect(validateWorkflowDef(def({}, holders("inside")))).toMatchObject({ ok: true });
    expect(pathsOf(def({}, holders("sub")))).toEqual([
      "tasks[0].subWorkflowParam.workflowDefinition.tasks[1].inputParameters.v",
      "tasks[1].inputParameters.startWorkflow.workflowDef.tasks[1].inputParameters.v",
      "tasks[2].inputParameters.subWorkflowDefinition.tasks[1].inputParameters.v",
    ]);
  });

  it("hints the name likely meant for the first 20 unknown names only: each hint compares the name with every task's, so a definition of thousands of unknown names (one request) costs no more than 20", () => {
    const numbers = Array.from({ length: 150 }, (_, index) => 100 + index);
    const tasks = [...numbers.map((n) => noop(`fetch_order_${n}`)), inline("use", { names: numbers.slice(0, 25).map((n) => `\${fetch_ordr_${n}.output}`) })];
    const hinted = errorsOf(def({}, tasks)).map(({ message }) => /did you mean "([^"]+)"/.exec(message)?.[1]);
    expect(hinted).toEqual([...numbers.slice(0, 20).map((n) => `fetch_order_${n}`), ...Array.from({ length: 5 }, () => undefined)]);
    // A name read again keeps its hint (one computed per name, not per read).
    const again = errorsOf(def({}, [noop("get_user"), inline("use", { a: Array.from({ length: 30 }, (_, index) => `\${get_usr.output.f${index}}`) })]));
    expect(again.map(({ message }) => message.endsWith('did you mean "get_user"?'))).toEqual(Array.from({ length: 30 }, () => true));
  });

  it("reads a long name that looks like a loop task's run (`<name>__1__1…`) in one pass: one of 300,000 `__1`s, in or out of a definition with loops, is refused as unknown at once", () => {
    const runs = `x${"__1".repeat(300_000)}`;
    for (const tasks of [[inline("use", { v: `\${${runs}.output}` })], [loop("x_loop", [noop("y")]), inline("use", { v: `\${${runs}.output}` })]]) {
      const result = validateWorkflowDef(def({}, tasks));
      expect(result.ok ? [] : result.errors.map(({ path }) => path)).toEqual([`tasks[${tasks.length - 1}].inputParameters.v`]);
      // Its message quotes the start of the name, as of the expression, not 900 KB of it.
      expect(result.ok ? "" : result.errors[0]!.message).toMatch(/^task "use" reads "x__1__1[_1]{60,}…" in \$\{x__1__1[_1]{60,}…, a taskReferenceName not defined/);
      expect(result.ok ? 0 : result.errors[0]!.message.length).toBeLessThan(400);
    }
    // Still a loop task's run when it is one, at any depth of loops; a run's number has no leading 0.
    expect(validateWorkflowDef(def({}, [loop("outer", [loop("mid", [noop("x")])]), inline("use", { v: `\${x__2__7.output} \${mid__3.output} \${x__1__0.output}` })]))).toMatchObject({
      ok: false,
      errors: [{ path: "tasks[1].inputParameters.v", message: expect.stringContaining('reads "x__1__0"') }],
    });
  });

  it("refuses nothing in a definition holding a FORK_JOIN_DYNAMIC, whose forked tasks are named as it runs, and nothing in one accepted before (checked again as it runs)", () => {
    const dynamicFork = [
      { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs", inputParameters: { tasks: "${workflow.input.tasks}", inputs: {} } },
      { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
      inline("after", { first: "${resize_small.output}" }),
    ];
    expect(validateWorkflowDef(def({}, dynamicFork))).toMatchObject({ ok: true });
    const misspelt = def({}, [noop("get_user"), inline("send", { v: "${get_usr.output}" })]);
    expect(validateWorkflowDef(misspelt, { accepted: true })).toMatchObject({ ok: true });
  });

  it("refuses a near miss of a workflow field (${workflow.inputs.x}, ${workflow.Input.x}, in a task's input and the workflow's output), which resolves to null, naming the field meant; a field near none, or one accepted before, is left alone", () => {
    const errors = errorsOf(
      def({ outputParameters: { r: "${workflow.varaibles.total}" } }, [
        worker("use", { a: "${workflow.inputs.user}", b: "id ${workflow.Input.id}", c: "${workflow.input.ok} ${workflow.workflowId} ${workflow.secrets.key} ${workflow.env.REGION}", d: "${workflow.createdBy}" }),
      ]),
    );
    expect(errors).toEqual([
      { path: "tasks[0].inputParameters.a", message: 'task "use" reads workflow.inputs in ${workflow.inputs.user}, a field the workflow does not have, so it would resolve to null; did you mean workflow.input?' },
      { path: "tasks[0].inputParameters.b", message: 'task "use" reads workflow.Input in ${workflow.Input.id}, a field the workflow does not have, so it would resolve to null; did you mean workflow.input?' },
      { path: "outputParameters.r", message: expect.stringMatching(/reads workflow\.varaibles in \$\{workflow\.varaibles\.total\}, .*; did you mean workflow\.variables\?$/) },
    ]);
    expect(validateWorkflowDef(def({}, [inline("use", { a: "${workflow.inputs.user}" })]), { accepted: true })).toMatchObject({ ok: true });
  });
});

describe("SUB_WORKFLOW tasks", () => {
  const only = (task: Json, path: string) => onlyError(def({}, [task]), path);

  it("accepts subWorkflowParam at task level and keeps it with waitForCompletion", () => {
    const task = acceptedTask(subTask("c", { subWorkflowParam: { name: "child", version: 2 }, waitForCompletion: false }));
    expect(task).toEqual({
      name: "c",
      taskReferenceName: "c",
      type: "SUB_WORKFLOW",
      inputParameters: {},
      subWorkflowParam: { name: "child", version: 2 },
      waitForCompletion: false,
    });
  });

  it("keeps a task-level waitForCompletion given as text as the boolean, as Jackson reads it, and refuses other text", () => {
    expect(acceptedTask(subTask("c", { subWorkflowParam: { name: "child" }, waitForCompletion: " False " })).waitForCompletion).toBe(false);
    expect(acceptedTask(subTask("c", { subWorkflowParam: { name: "child" }, waitForCompletion: "TRUE" })).waitForCompletion).toBe(true);
    expect(onlyError(def({}, [subTask("c", { subWorkflowParam: { name: "child" }, waitForCompletion: "no" })]), "tasks[0].waitForCompletion")).toBe('waitForCompletion must be a boolean, but received the string "no"');
  });

  it("accepts subWorkflowParam inside inputParameters", () => {
    const inputs = { subWorkflowParam: { name: "child" }, waitForCompletion: true, input: { a: 1 } };
    expect(acceptedTask(subTask("c", { inputParameters: inputs })).inputParameters).toEqual(inputs);
  });

  it("drops subWorkflowParam and waitForCompletion from tasks of other types", () => {
    const task = acceptedTask(httpTask("h", undefined, { subWorkflowParam: { name: "x" }, waitForCompletion: true }));
    expect(task).not.toHaveProperty("subWorkflowParam");
    expect(task).not.toHaveProperty("waitForCompletion");
  });

  it("requires subWorkflowParam", () => {
    expect(only(subTask("c", { inputParameters: {} }), "tasks[0].subWorkflowParam")).toMatch(/subWorkflowParam is required/);
  });

  it("uses the task-level subWorkflowParam when both are given and does not check the other", () => {
    acceptedTask(subTask("c", { subWorkflowParam: { name: "child" }, inputParameters: { subWorkflowParam: { name: "" } } }));
    expect(only(subTask("c", { subWorkflowParam: {}, inputParameters: { subWorkflowParam: { name: "ok" } } }), "tasks[0].subWorkflowParam.name")).toMatch(
      /name is required/,
    );
  });

  it("reports problems at the placement used", () => {
    expect(only(subTask("c", { inputParameters: { subWorkflowParam: { name: "" } } }), "tasks[0].inputParameters.subWorkflowParam.name")).toMatch(
      /non-empty string naming the child workflow/,
    );
    expect(only(subTask("c", { subWorkflowParam: "child" }), "tasks[0].subWorkflowParam")).toMatch(/subWorkflowParam must be an object/);
  });

  it("accepts an expression for the name anywhere, for the version, idempotency strategy and taskToDomain inside inputParameters only (Conductor types them in the task)", () => {
    acceptedTask(subTask("c", { subWorkflowParam: { name: "${workflow.input.flag ? 'a' : 'b'}", version: 2 } }));
    acceptedTask(subTask("c", { inputParameters: { subWorkflowParam: { name: "${workflow.input.name}", version: "${workflow.input.v}", idempotencyStrategy: "${workflow.input.strategy}", taskToDomain: "${workflow.input.domains}" } } }));
    expect(only(subTask("c", { subWorkflowParam: { name: "child", taskToDomain: "${workflow.input.domains}" } }), "tasks[0].subWorkflowParam.taskToDomain")).toMatch(/taskToDomain must be an object/);
    // As it runs, the map the expression gave is the child's.
    expect(childStartRequest({ subWorkflowParam: { name: "child", taskToDomain: { a: "gpu" } } })).toMatchObject({ taskToDomain: { a: "gpu" } });
    // Written, a map it is not (or one with a domain that is no text) is refused inside inputParameters too.
    expect(only(subTask("c", { inputParameters: { subWorkflowParam: { name: "child", taskToDomain: "gpu" } } }), "tasks[0].inputParameters.subWorkflowParam.taskToDomain")).toMatch(/taskToDomain must be an object .*\(or an expression\)/);
    expect(only(subTask("c", { inputParameters: { subWorkflowParam: { name: "child", taskToDomain: { a: { zone: "eu" } } } } }), "tasks[0].inputParameters.subWorkflowParam.taskToDomain.a")).toMatch(/taskToDomain value for "a" must be a domain/);
  });

  it("fails a child's start whose taskToDomain an expression gave as no map, naming its kind, rather than leaving the child its parent's domains", () => {
    for (const [domains, kind] of [["gpu", "a string"], [["gpu"], "an array"], [7, "a number"], [true, "a boolean"]] satisfies Array<[JsonValue, string]>) {
      expect(childStartRequest({ subWorkflowParam: { name: "child", taskToDomain: domains } })).toEqual({ invalid: `subWorkflowParam.taskToDomain resolved to ${kind}, not an object of task names to domains` });
    }
    // None given (an expression reading what is not there, or ""): the parent's domains, as when it is left out.
    for (const none of [null, ""]) expect(childStartRequest({ subWorkflowParam: { name: "child", taskToDomain: none } })).not.toHaveProperty("taskToDomain");
    // A map: its domains as Conductor's Map<String, String> reads them (a number as its text; one that is no text is none).
    expect(childStartRequest({ subWorkflowParam: { name: "child", taskToDomain: { a: 3, b: { zone: "eu" }, c: null } } })).toMatchObject({ taskToDomain: { a: "3" } });
    expect(childStartRequest({ subWorkflowParam: { name: "child", taskToDomain: {} } })).toMatchObject({ taskToDomain: {} });
    expect(only(subTask("c", { subWorkflowParam: { name: "child", version: "${workflow.input.v}" } }), "tasks[0].subWorkflowParam.version")).toMatch(/an expression only inside inputParameters.subWorkflowParam/);
    expect(only(subTask("c", { subWorkflowParam: { name: "child", idempotencyStrategy: "${workflow.input.s}" } }), "tasks[0].subWorkflowParam.idempotencyStrategy")).toMatch(/an expression only inside inputParameters.subWorkflowParam/);
  });

  it.each([
    ["version", -1, /version must be an integer of at least 0/],
    ["version", "two", /version must be an integer of at least 0/],
    ["version", 1.5, /version must be an integer of at least 0/],
    ["priority", 100, /priority must be an integer from 0 to 99/],
    ["priority", -1, /priority must be an integer from 0 to 99/],
    ["idempotencyKey", { id: 5 }, /idempotencyKey must be a string, a number or a boolean/],
    ["idempotencyKey", [5], /idempotencyKey must be a string, a number or a boolean/],
    ["idempotencyKey", 12345678901234567890, /idempotencyKey must be a string, a number or a boolean .*beyond 2\^53/],
    ["idempotencyStrategy", "OVERWRITE", /idempotencyStrategy must be one of RETURN_EXISTING, FAIL, FAIL_ON_RUNNING/],
    ["taskToDomain", "d", /taskToDomain must be an object/],
  ])("rejects subWorkflowParam.%s = %j", (key, value, message) => {
    expect(only(subTask("c", { subWorkflowParam: { name: "child", [key]: value } }), `tasks[0].subWorkflowParam.${key}`)).toMatch(message);
  });

  it("accepts what Orkes documents and clients send: version 0 or \"\" (the latest), its digits as text, priority as an expression, nulls for none", () => {
    for (const param of [
      { name: "child", version: 0 },
      { name: "child", version: "2" },
      { name: "child", version: "" },
      { name: "child", version: null, taskToDomain: null, priority: null, idempotencyKey: null, idempotencyStrategy: null },
      { name: "child", priority: "${workflow.input.priority}", idempotencyStrategy: "RETURN_EXISTING" },
      // A key written as a number or boolean, as Jackson reads SubWorkflowParams' String field: its text as it runs.
      { name: "child", idempotencyKey: 42 },
      { name: "child", idempotencyKey: true },
    ]) {
      acceptedTask(subTask("c", { subWorkflowParam: param }));
    }
    // As it runs: 0 asks for version 0 (the latest when there is none), digits are the version, and a priority given as text is read.
    expect(childStartRequest({ subWorkflowParam: { name: "child", version: 0, priority: "7" } })).toMatchObject({ name: "child", version: 0, priority: 7 });
    expect(childStartRequest({ subWorkflowParam: { name: "child", version: "" } })).not.toHaveProperty("version");
    expect(childStartRequest({ subWorkflowParam: { name: "child", version: "2" } })).toMatchObject({ version: 2 });
    expect(childStartRequest({ subWorkflowParam: { name: "child", priority: 500 } })).toEqual({ invalid: expect.stringContaining("subWorkflowParam.priority") });
    expect(childStartRequest({ subWorkflowParam: { name: "child", idempotencyKey: 42 } })).toMatchObject({ idempotencyKey: "42" });
    // Past 2^53 the number has lost digits (…890 and …891 would be one key): refused as the API refuses it.
    expect(childStartRequest({ subWorkflowParam: { name: "child", idempotencyKey: 12345678901234567890 } })).toEqual({ invalid: expect.stringContaining("subWorkflowParam.idempotencyKey resolved to an integer beyond 2^53") });
  });

  it("accepts every optional subWorkflowParam field at its bounds", () => {
    const param = { name: "child", version: 1, taskToDomain: { a: "d" }, priority: 99, idempotencyKey: "k", idempotencyStrategy: "FAIL" };
    expect(acceptedTask(subTask("c", { subWorkflowParam: param })).subWorkflowParam).toEqual(param);
  });

  it("reads taskToDomain as Jackson reads SubWorkflowParams' Map<String, String>: a number or boolean domain is its text, a null one none; an object or array is reported at its key", () => {
    acceptedTask(subTask("c", { subWorkflowParam: { name: "child", taskToDomain: { a: 1, b: true, c: null, "*": "${workflow.input.region}" } } }));
    expect(only(subTask("c", { subWorkflowParam: { name: "child", taskToDomain: { a: { zone: 1 } } } }), "tasks[0].subWorkflowParam.taskToDomain.a")).toMatch(/must be a domain: a string/);
    // As it runs: an expression that gave a region number is that domain's name, a null one leaves the task to `*`.
    expect(childStartRequest({ subWorkflowParam: { name: "child", taskToDomain: { a: 3, b: false, c: null, d: "gpu" } } })).toMatchObject({ taskToDomain: { a: "3", b: "false", d: "gpu" } });
  });

  it("refuses a subWorkflowParam.taskToDomain domain longer than a poll may name (256 characters), written or as it resolves", () => {
    const long = "d".repeat(257);
    acceptedTask(subTask("c", { subWorkflowParam: { name: "child", taskToDomain: { a: "d".repeat(256), b: `gpu, ${"d".repeat(256)} ,NO_DOMAIN` } } }));
    expect(only(subTask("c", { subWorkflowParam: { name: "child", taskToDomain: { a: long } } }), "tasks[0].subWorkflowParam.taskToDomain.a")).toMatch(/at most 256 characters/);
    expect(only(subTask("c", { subWorkflowParam: { name: "child", taskToDomain: { a: `gpu,${long}` } } }), "tasks[0].subWorkflowParam.taskToDomain.a")).toMatch(/at most 256 characters/);
    // As it runs, a resolved one is no domain, as an object is: that task takes the map's `*`.
    expect(childStartRequest({ subWorkflowParam: { name: "child", taskToDomain: { "*": "eu", a: long, b: `gpu,${long}` } } })).toMatchObject({ taskToDomain: { "*": "eu" } });
  });

  it("fails the child's start when a resolved subWorkflowParam.taskToDomain domain holds a lone surrogate (no poll's query can name its queue)", () => {
    const half = "\ud83d";
    expect(childStartRequest({ subWorkflowParam: { name: "child", taskToDomain: { "*": "eu", a: `gpu-${half}` } } })).toEqual({
      invalid: expect.stringMatching(/^subWorkflowParam\.taskToDomain\.a resolved to a domain that must not hold a lone surrogate .*no worker could poll that queue$/),
    });
    expect(childStartRequest({ subWorkflowParam: { name: "child", taskToDomain: { "*": "eu-😀" } } })).toMatchObject({ taskToDomain: { "*": "eu-😀" } });
  });

  it("rejects waitForCompletion that is not a boolean, in either placement", () => {
    expect(only(subTask("c", { subWorkflowParam: { name: "x" }, waitForCompletion: "no" }), "tasks[0].waitForCompletion")).toMatch(
      /waitForCompletion must be a boolean/,
    );
    expect(
      only(subTask("c", { subWorkflowParam: { name: "x" }, inputParameters: { waitForCompletion: 0.5 } }), "tasks[0].inputParameters.waitForCompletion"),
    ).toMatch(/waitForCompletion must be a boolean/);
    // What the task level takes as a boolean (its text, a whole number), the input takes too: read alike as the task starts.
    for (const waitForCompletion of [" FALSE ", 0, "true", 1]) expect(validateWorkflowDef(def({}, [subTask("c", { subWorkflowParam: { name: "x" }, inputParameters: { waitForCompletion } })])).ok).toBe(true);
  });

  it("reads a resolved waitForCompletion as the task-level one is stored: its text or a whole number as Jackson reads a Boolean, anything else waiting", () => {
    const waits = (waitForCompletion: JsonValue) => (childStartRequest({ subWorkflowParam: { name: "child" }, waitForCompletion }) as { waitForCompletion: boolean }).waitForCompletion;
    expect([false, "false", " FALSE ", "False", 0].map(waits)).toEqual([false, false, false, false, false]);
    expect([true, "TRUE", 1, -1, null, "", "null", "no", 0.5].map(waits)).toEqual([true, true, true, true, true, true, true, true, true]);
  });

  it.each(["input", "workflowInput"])("rejects a literal %s that is not an object (it would be dropped), accepting objects, null and expressions", (key) => {
    for (const value of ["text", 5, true, [1, 2]]) {
      const task = subTask("c", { subWorkflowParam: { name: "x" }, inputParameters: { [key]: value } });
      expect(only(task, `tasks[0].inputParameters.${key}`)).toMatch(new RegExp(`${key} must be an object \\(the child workflow's input\\)`));
    }
    for (const value of [{ a: 1 }, {}, null, "${workflow.input.payload}"]) {
      acceptedTask(subTask("c", { subWorkflowParam: { name: "x" }, inputParameters: { [key]: value } }));
    }
  });

  it("reports malformed expressions in a task-level subWorkflowParam", () => {
    expect(only(subTask("c", { subWorkflowParam: { name: "${workflow.input.name" } }), "tasks[0].subWorkflowParam.name")).toMatch(
      /malformed expression/,
    );
  });

  it("validates SUB_WORKFLOW tasks directly", () => {
    expect(validateSubWorkflowTask({ subWorkflowParam: { name: "x" } }, "tasks[1]")).toEqual([]);
    expect(validateSubWorkflowTask({}, "tasks[1]").map((issue) => issue.path)).toEqual(["tasks[1].subWorkflowParam"]);
  });
});

describe("WAIT_FOR_WEBHOOK tasks", () => {
  const only = (inputs: Json, path: string) => onlyError(def({}, [webhookTask("w", inputs)]), path);
  const signature = (extra: Json = {}): Json => ({ secret: "${workflow.secrets.hookKey}", header: "X-Signature", ...extra });

  it("accepts a task without inputs and one with every input", () => {
    acceptedTask(webhookTask("w"));
    const inputs = {
      workflowId: "${workflow.workflowId}",
      taskId: "${TASK_ID}",
      timeoutSeconds: 0,
      headers: { "X-Source": "partner", "X-Key": "${workflow.secrets.k}" },
      signature: signature({ algorithm: "HMAC-SHA256", encoding: "base64", prefix: "sha256=" }),
    };
    expect(acceptedTask(webhookTask("w", inputs)).inputParameters).toEqual(inputs);
  });

  it.each([[-1], [1.5], ["60"]])("rejects timeoutSeconds %j", (timeoutSeconds) => {
    expect(only({ timeoutSeconds }, "tasks[0].inputParameters.timeoutSeconds")).toMatch(/whole number of seconds of at least 0/);
  });

  it("accepts timeoutSeconds as an expression", () => {
    acceptedTask(webhookTask("w", { timeoutSeconds: "${workflow.input.wait}" }));
  });

  it("rejects headers that are not an object of strings", () => {
    expect(only({ headers: "x" }, "tasks[0].inputParameters.headers")).toMatch(/headers must be an object/);
    expect(only({ headers: { "X-Count": 1 } }, "tasks[0].inputParameters.headers.X-Count")).toMatch(/must be a string/);
  });

  it("rejects workflowId and taskId that are not strings", () => {
    expect(pathsOf(def({}, [webhookTask("w", { workflowId: 1, taskId: false })]))).toEqual([
      "tasks[0].inputParameters.workflowId",
      "tasks[0].inputParameters.taskId",
    ]);
  });

  it("requires secret and header in a signature", () => {
    const errors = errorsOf(def({}, [webhookTask("w", { signature: {} })]));
    expect(errors.map((issue) => issue.path)).toEqual([
      "tasks[0].inputParameters.signature.secret",
      "tasks[0].inputParameters.signature.header",
    ]);
    for (const issue of errors) expect(issue.message).toMatch(/is required/);
  });

  it.each([
    ["secret", "", /secret must be a non-empty string/],
    ["header", 5, /header must be a non-empty string/],
    ["algorithm", "HMAC-SHA1", /algorithm must be HMAC-SHA256/],
    ["encoding", "base32", /encoding must be one of hex, base64/],
    ["prefix", 1, /prefix must be a string/],
  ])("rejects signature.%s = %j", (key, value, message) => {
    expect(only({ signature: signature({ [key]: value }) }, `tasks[0].inputParameters.signature.${key}`)).toMatch(message);
  });

  it("rejects header names that are not RFC 7230 tokens, in headers and in signature.header", () => {
    expect(only({ headers: { "X Token": "v" } }, "tasks[0].inputParameters.headers.X Token")).toMatch(/header name "X Token" must be a token \(RFC 7230/);
    expect(only({ headers: { "X:Token": "v" } }, "tasks[0].inputParameters.headers.X:Token")).toMatch(/must be a token/);
    expect(only({ signature: signature({ header: "X Signature" }) }, "tasks[0].inputParameters.signature.header")).toMatch(
      /header must be .*token/,
    );
    // Known only once the workflow runs: checked when the task starts.
    acceptedTask(webhookTask("w", { signature: signature({ header: "${workflow.input.signatureHeader}" }) }));
  });

  it("rejects a signature that is not an object", () => {
    expect(only({ signature: "hmac" }, "tasks[0].inputParameters.signature")).toMatch(/signature must be an object/);
  });

  it("validates WAIT_FOR_WEBHOOK tasks directly", () => {
    expect(validateWaitForWebhookTask({}, "tasks[0]")).toEqual([]);
    expect(validateWaitForWebhookTask({ inputParameters: { timeoutSeconds: -1 } }, "tasks[2]").map((issue) => issue.path)).toEqual([
      "tasks[2].inputParameters.timeoutSeconds",
    ]);
  });
});

describe("validateWorkflowDef: robustness", () => {
  it("has a validator for every task type", () => {
    expect(Object.keys(TASK_VALIDATORS).sort()).toEqual([...TASK_TYPES].sort());
  });

  it("never throws and always reports issues with paths for arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (input) => {
        const result = validateWorkflowDef(input);
        if (!result.ok) {
          expect(result.errors.length).toBeGreaterThan(0);
          for (const issue of result.errors) expect(typeof issue.message).toBe("string");
        }
      }),
    );
  });

  it("never throws for arbitrary task objects and reports them under their own index", () => {
    const task = fc.dictionary(
      fc.constantFrom("name", "taskReferenceName", "type", "inputParameters", "subWorkflowParam", "retryCount", "asyncComplete"),
      fc.oneof(fc.jsonValue(), fc.constantFrom("HTTP", "SUB_WORKFLOW", "WAIT_FOR_WEBHOOK")),
    );
    fc.assert(
      fc.property(task, (raw) => {
        const result = validateWorkflowDef(def({}, [httpTask("first"), raw]));
        if (!result.ok) for (const issue of result.errors) expect(issue.path.startsWith("tasks[1]")).toBe(true);
      }),
    );
  });

  it.each([
    ["NaN", Number.NaN],
    ["undefined", undefined],
    ["a function", () => 1],
    ["a Date", new Date(0)],
  ])("rejects task inputParameters holding %s (not JSON)", (_label, value) => {
    const inputs = { uri: "https://x.example", method: "GET", nested: { value } };
    expect(onlyError(def({}, [httpTask("h", inputs)]), "tasks[0].inputParameters")).toMatch(/object of JSON values/);
  });

  it(`accepts JSON nested ${MAX_JSON_DEPTH} levels deep and rejects one level more`, () => {
    const nest = (levels: number): unknown => (levels === 0 ? "leaf" : [nest(levels - 1)]);
    // The inputParameters object itself is the first level.
    acceptedTask(httpTask("h", { uri: "https://x.example", method: "GET", deep: nest(MAX_JSON_DEPTH - 1) }));
    expect(onlyError(def({}, [httpTask("h", { uri: "https://x.example", method: "GET", deep: nest(MAX_JSON_DEPTH) })]), "tasks[0].inputParameters")).toMatch(
      /deeper than 100 levels/,
    );
    expect(onlyError(def({ outputParameters: { deep: nest(MAX_JSON_DEPTH) } }), "outputParameters")).toMatch(/deeper than 100 levels/);
  });

  it("rejects very deep JSON with an issue instead of overflowing the stack", () => {
    const depth = 50_000;
    const deep: unknown = JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);
    expect(onlyError(def({ outputParameters: { deep } }), "outputParameters")).toMatch(/deeper than/);
    expect(pathsOf(def({}, [subTask("c", { subWorkflowParam: { name: "x", deep } })]))).toEqual(["tasks[0].subWorkflowParam"]);
  });

  it("accepts its own normalised output unchanged", () => {
    const normalised = accepted(def({}, [httpTask("a"), subTask("b"), webhookTask("c")]));
    expect(accepted(normalised)).toEqual(normalised);
  });
});

describe("task definitions", () => {
  const registered = (fields: Json = {}) => {
    const result = validateTaskDef({ name: "shared_call", ...fields });
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    return result.value;
  };
  /** The one problem a task definition with `fields` is refused for, as `path: message`. */
  const onlyTaskDefError = (fields: Json): string => {
    const result = validateTaskDef({ name: "shared_call", ...fields });
    if (result.ok || result.errors.length !== 1) throw new Error(`expected one error, got ${JSON.stringify(result)}`);
    return `${result.errors[0]!.path}: ${result.errors[0]!.message}`;
  };

  it("keeps the limits Conductor's TaskDef holds as Integer within a Java int: a larger one would fail a Java client's whole read", () => {
    expect(registered({ concurrentExecLimit: 2_147_483_647 }).concurrentExecLimit).toBe(2_147_483_647);
    for (const field of ["concurrentExecLimit", "rateLimitPerFrequency", "rateLimitFrequencyInSeconds", "pollTimeoutSeconds"]) {
      expect(onlyTaskDefError({ [field]: 2_147_483_648 })).toBe(`${field}: ${field} must be an integer from 0 to 2147483647, but received the number 2147483648`);
    }
    expect(registered({ totalTimeoutSeconds: 2_147_483_648 }).totalTimeoutSeconds).toBe(2_147_483_648);
  });

  it("names where a response timeout beyond the timeout came from: the default, or what was given", () => {
    expect(onlyTaskDefError({ timeoutSeconds: 300 })).toBe("responseTimeoutSeconds: responseTimeoutSeconds (3600, its default) must not exceed timeoutSeconds (300) when timeoutSeconds is set");
    expect(onlyTaskDefError({ timeoutSeconds: 300, responseTimeoutSeconds: 600 })).toBe("responseTimeoutSeconds: responseTimeoutSeconds (600) must not exceed timeoutSeconds (300) when timeoutSeconds is set");
    // A workflow task's own taskDefinition is not held to the rule (Conductor checks registered ones only): its
    // response timeout is the timeout, within which the task times out anyway.
    expect(acceptedTask(httpTask("call", undefined, { taskDefinition: { timeoutSeconds: 120, responseTimeoutSeconds: 3600 } })).taskDefinition).toMatchObject({ timeoutSeconds: 120, responseTimeoutSeconds: 120 });
    expect(acceptedTask(httpTask("call", undefined, { taskDefinition: { timeoutSeconds: 60 } })).taskDefinition).toMatchObject({ timeoutSeconds: 60, responseTimeoutSeconds: 60 });
  });

  it("takes a response timeout of 0 in a workflow task's own taskDefinition (none, as Conductor reads it), not in a registered one", () => {
    // The Rust SDK's EmbeddedTaskDef::new(name).with_retry_count(0), as its task_status_change_audit example sends it.
    const embedded = { name: "call", retryCount: 0, timeoutSeconds: 0, responseTimeoutSeconds: 0 };
    expect(acceptedTask(httpTask("call", undefined, { taskDefinition: embedded })).taskDefinition).toMatchObject(embedded);
    expect(onlyTaskDefError({ responseTimeoutSeconds: 0 })).toBe("responseTimeoutSeconds: responseTimeoutSeconds must be a whole number of seconds of at least 1, but received the number 0");
  });

  it("reads a null field as Jackson reads it into Conductor's TaskDef: an int, long or boolean as 0 or false, any other as left out, its default applying", () => {
    const nulls = { description: null, retryLogic: null, pollTimeoutSeconds: null, concurrentExecLimit: null, inputTemplate: null, ownerEmail: null, rateLimitPerFrequency: null, backoffScaleFactor: null };
    expect(registered(nulls)).toEqual(registered());
    expect(registered(nulls)).toMatchObject({ retryCount: 3, retryLogic: "FIXED" });
    // Primitives there: FAIL_ON_NULL_FOR_PRIMITIVES is off, so a null is 0 (no retry, no delay), not the default 3 and 60.
    expect(registered({ retryCount: null, retryDelaySeconds: null, timeoutSeconds: null, totalTimeoutSeconds: null })).toMatchObject({ retryCount: 0, retryDelaySeconds: 0, timeoutSeconds: 0 });
    // And a registered responseTimeoutSeconds of 0 is refused there (@Min(1)), as here.
    expect(onlyTaskDefError({ responseTimeoutSeconds: null })).toMatch(/^responseTimeoutSeconds: .*at least 1, but received the number 0$/);
    expect(acceptedTask(httpTask("call", undefined, { taskDefinition: { name: "call", retryCount: null } })).taskDefinition).toMatchObject({ retryCount: 0 });
    expect(validateTaskDef({ name: null }).ok).toBe(false);
  });

  it("refuses the names . and .. (a URL naming them would resolve them away)", () => {
    for (const name of [".", ".."]) expect(onlyTaskDefError({ name })).toMatch(/^name: .*not \. or \.\./);
    expect(registered({ name: "..." }).name).toBe("...");
  });

  it("an inline taskDefinition takes the task's name when it has none, and is validated at the task's path", () => {
    expect(acceptedTask(httpTask("call", undefined, { taskDefinition: { retryCount: 1 } })).taskDefinition).toMatchObject({ name: "call", retryCount: 1, retryDelaySeconds: 60 });
    expect(onlyError(def({}, [httpTask("call", undefined, { taskDefinition: { backoffScaleFactor: 0 } })]), "tasks[0].taskDefinition.backoffScaleFactor")).toMatch(
      /backoffScaleFactor must be an integer from 1 to 86400/,
    );
  });

  it("an inline taskDefinition may use secrets (its workflow's registrant is checked for them); a registered one may not", () => {
    expect(acceptedTask(httpTask("call", undefined, { taskDefinition: { inputTemplate: { key: "${workflow.secrets.k}" } } })).taskDefinition?.inputTemplate).toEqual({ key: "${workflow.secrets.k}" });
    const result = validateTaskDef({ name: "shared", inputTemplate: { nested: { key: "${workflow.secrets['k']}" } } });
    expect(result).toEqual({ ok: false, errors: [{ path: "inputTemplate", message: expect.stringContaining("must not use secrets (k)") }] });
  });

  it("copies registered task definitions into the tasks without an inline one, leaving the definition alone when none applies", () => {
    const definition = accepted(
      def({}, [
        { ...httpTask("a"), name: "shared_call" },
        { ...httpTask("b"), name: "shared_call", taskDefinition: { retryCount: 0 } },
        { ...httpTask("c"), name: "other" },
      ]),
    );
    expect(registeredTaskDefNames(definition)).toEqual(["shared_call", "other"]);
    const shared = registered({ retryCount: 5 });
    const resolved = withRegisteredTaskDefs(definition, new Map([["shared_call", shared]]));
    expect(resolved.tasks.map((task) => task.taskDefinition?.retryCount)).toEqual([5, 0, undefined]);
    expect(definition.tasks[0]!.taskDefinition).toBeUndefined();
    expect(withRegisteredTaskDefs(definition, new Map([["unused", shared]]))).toBe(definition);
  });

  it("a task's own retry settings win over its task definition's; without either there is no retry", () => {
    const taskDefinition = registered({ retryCount: 4, retryLogic: "LINEAR_BACKOFF", retryDelaySeconds: 10, backoffScaleFactor: 3 });
    const task = accepted(def({}, [httpTask("a")])).tasks[0]!;
    const none = { maxDelaySeconds: 0, jitterMs: 0 };
    expect(retryPolicyOf(task)).toEqual({ count: 0, logic: "FIXED", delaySeconds: 0, backoffScaleFactor: 1, ...none });
    expect(retryPolicyOf({ ...task, taskDefinition })).toEqual({ count: 4, logic: "LINEAR_BACKOFF", delaySeconds: 10, backoffScaleFactor: 3, ...none });
    expect(retryPolicyOf({ ...task, taskDefinition, retryCount: 1, retryLogic: "FIXED", retryDelaySeconds: 2 })).toEqual({ count: 1, logic: "FIXED", delaySeconds: 2, backoffScaleFactor: 3, ...none });
    const capped = registered({ retryLogic: "EXPONENTIAL_BACKOFF", maxRetryDelaySeconds: 60, backoffJitterMs: 3000 });
    expect(retryPolicyOf({ ...task, taskDefinition: capped })).toMatchObject({ logic: "EXPONENTIAL_BACKOFF", maxDelaySeconds: 60, jitterMs: 3000 });
  });

  it("maxRetryDelaySeconds caps every delay, FIXED's too (Conductor's e2e RetryPolicyTests); backoffJitterMs adds up to that many milliseconds, at random, to each delay", () => {
    // Conductor's cookbook: EXPONENTIAL_BACKOFF from 2 s, capped at 60 s.
    const policy = { count: 6, logic: "EXPONENTIAL_BACKOFF" as const, delaySeconds: 2, backoffScaleFactor: 1, maxDelaySeconds: 60, jitterMs: 3000 };
    expect([0, 1, 2, 3, 4, 5].map((n) => retryDelaySeconds(policy, n))).toEqual([2, 4, 8, 16, 32, 60]);
    expect([0, 1, 2].map((n) => retryDelaySeconds({ ...policy, logic: "LINEAR_BACKOFF", backoffScaleFactor: 20 }, n))).toEqual([40, 60, 60]);
    expect(retryDelaySeconds({ ...policy, logic: "FIXED", delaySeconds: 90 }, 3)).toBe(60);
    expect(retryDelaySeconds({ ...policy, logic: "FIXED", delaySeconds: 90, maxDelaySeconds: 0 }, 3)).toBe(90);
    expect(retryDelayMs(policy, 5, () => 0)).toBe(60_000);
    expect(retryDelayMs(policy, 5, () => 0.999_999)).toBe(63_000);
    expect(retryDelayMs({ ...policy, jitterMs: 0 }, 5, () => 0.5)).toBe(60_000);
    // Drawn from a random id: spread over the range, never outside it.
    const draws = Array.from({ length: 200 }, () => fractionOf(crypto.randomUUID()));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    expect(new Set(draws.map((draw) => Math.floor(draw * 4))).size).toBe(4);
    expect(onlyTaskDefError({ maxRetryDelaySeconds: -1 })).toMatch(/maxRetryDelaySeconds must be an integer from 0 to 86400/);
    expect(onlyTaskDefError({ backoffJitterMs: 1.5 })).toMatch(/backoffJitterMs must be an integer from 0 to 86400000/);
  });

  it("a failed task's retries come back after the capped delay plus at most the jitter", () => {
    const taskDefinition = { retryCount: 3, retryLogic: "EXPONENTIAL_BACKOFF", retryDelaySeconds: 2, maxRetryDelaySeconds: 3, backoffJitterMs: 500 };
    const definition = accepted(def({}, [httpTask("call", undefined, { taskDefinition })]));
    let state = decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
    const delays: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const task = state.tasks.at(-1)!;
      const now = 10_000 * (attempt + 1);
      // The attempt's call answers with a failure; the retry is scheduled after its delay, and started by the alarm's tick then.
      const failed = decide(state, { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "FAILED", output: {}, reason: "boom" }, env(now)).state;
      const retry = failed.tasks.at(-1)!;
      expect(retry).toMatchObject({ retryCount: attempt + 1, status: "SCHEDULED" });
      delays.push(retry.scheduledTime - now);
      state = decide(failed, { type: "tick", liveTaskIds: new Set() }, env(retry.scheduledTime)).state;
    }
    // 2 s, then 4 s capped at 3 s, then 8 s capped at 3 s; each with up to 500 ms more.
    expect(delays.map((delay) => Math.floor(delay / 1000) * 1000)).toEqual([2_000, 3_000, 3_000]);
    for (const delay of delays) expect(delay % 1000).toBeLessThanOrEqual(500);
    // The jitter is drawn afresh for each (from the environment's ids, fixed in these tests): not all of them land on the second.
    expect(delays.some((delay) => delay % 1000 > 0)).toBe(true);
  });

  describe("totalTimeoutSeconds: the attempts together, from the first one's scheduling", () => {
    const taskDefinition = { retryCount: 5, retryDelaySeconds: 10, totalTimeoutSeconds: 25 };
    /** An execution of `tasks` started at 1 s: its first task's first attempt is scheduled then, its deadline 26 s. */
    const startAt1s = (tasks: unknown[]) => {
      const definition = accepted(def({}, tasks));
      return decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
    };
    const fail = (state: WorkflowExecution, now: number) => {
      const task = state.tasks.at(-1)!;
      return decide(state, { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "FAILED", output: {}, reason: `failed at ${now}` }, env(now)).state;
    };
    const tick = (state: WorkflowExecution, now: number) => decide(state, { type: "tick", liveTaskIds: new Set() }, env(now)).state;

    it("retries only while a retry would start before the deadline, whatever retryCount allows", () => {
      let state = startAt1s([httpTask("call", undefined, { taskDefinition })]);
      state = tick(fail(state, 2_000), 12_000); // retry 1 scheduled for 12 s, started
      state = tick(fail(state, 13_000), 23_000); // retry 2 for 23 s, started
      state = fail(state, 24_000); // a retry would start at 34 s, past 26 s: none
      expect(state.tasks.map((task) => [task.retryCount, task.status])).toEqual([
        [0, "FAILED"],
        [1, "FAILED"],
        [2, "FAILED"],
      ]);
      expect(state).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringContaining("failed at 24000") });
    });

    it("bounds the retries of a task that fails as it starts (a LAMBDA script that throws) as well", () => {
      // A LAMBDA's failing script is retried; an INLINE's is a terminal error, as in Conductor.
      const throwing = { name: "calc", taskReferenceName: "calc", type: "LAMBDA", inputParameters: { scriptExpression: "throw new Error('no');" }, taskDefinition };
      let state = startAt1s([throwing]);
      expect(state.tasks.map((task) => [task.retryCount, task.status])).toEqual([[0, "FAILED"], [1, "SCHEDULED"]]);
      state = tick(state, 11_000); // retry 1 started at 11 s, failed at once: retry 2 for 21 s
      state = tick(state, 21_000); // retry 2 failed at once: a retry would start at 31 s, past 26 s: none
      expect(state.tasks.map((task) => [task.retryCount, task.status])).toEqual([
        [0, "FAILED"],
        [1, "FAILED"],
        [2, "FAILED"],
      ]);
      expect(state.status).toBe("FAILED");
    });

    it("times out the attempt still running at the deadline, with no retry; the alarm is set for it", () => {
      let state = startAt1s([httpTask("call", undefined, { taskDefinition })]);
      state = tick(fail(state, 2_000), 12_000);
      // The second attempt's call is still on its way at 26 s.
      expect(nextDeadline(state)).toBe(26_000);
      const decision = decide(state, { type: "tick", liveTaskIds: new Set([state.tasks.at(-1)!.taskId]) }, env(26_000));
      const held = state.tasks.at(-1)!;
      // Conductor's reason, as its "Debugging workflows" guide lists it: counted from the first attempt's scheduling (1 s).
      expect(decision.state.tasks.at(-1)).toMatchObject({
        retryCount: 1,
        status: "TIMED_OUT",
        reasonForIncompletion: `Task ${held.taskDefName}/${held.taskId} exceeded total timeout of 25 seconds (elapsed 25 seconds across all attempts including retry delays). Timeout policy: TIME_OUT_WF`,
      });
      expect(decision.effects).toContainEqual({ kind: "cancelDispatch", taskId: state.tasks.at(-1)!.taskId });
      expect(decision.state.tasks).toHaveLength(2);
      expect(decision.state.status).toBe("TIMED_OUT");
      // Rerun from it: a fresh first attempt, with all of its 25 s again.
      const rerun = decide(decision.state, { type: "rerun", fromTaskId: state.tasks.at(-1)!.taskId }, env(100_000)).state;
      expect(rerun.status).toBe("RUNNING");
      expect(rerun.tasks.at(-1)).toMatchObject({ status: "IN_PROGRESS" });
      expect(nextDeadline(rerun)).toBe(125_000);
    });

    it("an optional task past its deadline ends COMPLETED_WITH_ERRORS and the workflow goes on", () => {
      let state = startAt1s([httpTask("call", undefined, { taskDefinition, optional: true }), httpTask("after")]);
      state = tick(state, 26_000);
      expect(state.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
        ["call", "COMPLETED_WITH_ERRORS"],
        ["after", "IN_PROGRESS"],
      ]);
    });
  });

  it("LINEAR_BACKOFF scales by backoffScaleFactor as Conductor does; the others ignore it", () => {
    expect([0, 1, 2].map((n) => retryDelaySeconds({ logic: "LINEAR_BACKOFF", delaySeconds: 10, backoffScaleFactor: 3 }, n))).toEqual([30, 60, 90]);
    expect([0, 1, 2].map((n) => retryDelaySeconds({ logic: "EXPONENTIAL_BACKOFF", delaySeconds: 10, backoffScaleFactor: 3 }, n))).toEqual([10, 20, 40]);
    expect(retryDelaySeconds({ logic: "FIXED", delaySeconds: 10, backoffScaleFactor: 3 }, 5)).toBe(10);
  });

  it("inputTemplate's default stands in for an input parameter that resolves to null, as Conductor's getTaskInputV2 does", () => {
    const taskDefinition = registered({ inputTemplate: { retries: 3, region: "${workflow.input.home}", note: "kept" } });
    const work = { name: "work", taskReferenceName: "work", type: "SIMPLE" as const, inputParameters: { retries: "${workflow.input.retries}", region: "${workflow.input.region}", note: null, other: "${workflow.input.none}" }, taskDefinition };
    const input = (workflowInput: Json) => latestNamed(startedWith("defaults", [work], workflowInput as JsonObject).state, "work").inputData;
    expect(input({ home: "eu" })).toEqual({ retries: 3, region: "eu", note: "kept", other: null });
    // A value that resolves wins, whatever the template says.
    expect(input({ retries: 0, region: "us", home: "eu" })).toEqual({ retries: 0, region: "us", note: "kept", other: null });
  });

  it("inputTemplate gives defaults under the task's own inputParameters", () => {
    const task = accepted(def({}, [httpTask("a", { uri: "https://x.example", method: "GET" })])).tasks[0]!;
    const taskDefinition = registered({ inputTemplate: { method: "POST", extra: "${workflow.input.x}" } });
    expect(taskInputTemplate({ ...task, taskDefinition })).toEqual({ uri: "https://x.example", method: "GET", extra: "${workflow.input.x}" });
    expect(taskInputTemplate(task)).toEqual({ uri: "https://x.example", method: "GET" });
  });
});

describe("workflow definition options in the engine", () => {
  const hookDefinition = (extra: Partial<WorkflowDef> = {}): WorkflowDef => ({
    name: "options_flow",
    version: 1,
    schemaVersion: 2,
    tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }],
    ...extra,
  });

  /** An execution of `definition` whose only task was completed from outside with `status`. */
  function ended(definition: WorkflowDef, status: "COMPLETED" | "FAILED"): WorkflowExecution {
    const state = decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
    return decide(state, { type: "externalUpdate", taskId: state.tasks[0]!.taskId, status, output: {} }, env(1_100)).state;
  }

  it("restartable false: a COMPLETED execution's restart is refused (CONFLICT); a FAILED one restarts; absent means restartable", () => {
    const completed = ended(hookDefinition({ restartable: false }), "COMPLETED");
    expect(completed.status).toBe("COMPLETED");
    const error = refusal(completed, { type: "restart" }, 2_000);
    expect({ kind: error.kind, message: error.message }).toEqual({
      kind: "CONFLICT",
      message: "Cannot restart workflow wf-1: it is an instance of workflow definition options_flow version 1, which is non restartable (restartable: false)",
    });
    const failed = ended(hookDefinition({ restartable: false }), "FAILED");
    expect(decide(failed, { type: "restart" }, env(2_000)).state).toMatchObject({ status: "RUNNING", tasks: [{ status: "IN_PROGRESS" }] });
    expect(decide(ended(hookDefinition(), "COMPLETED"), { type: "restart" }, env(2_000)).state.status).toBe("RUNNING");
  });

  it("inputTemplate: each key missing from a start's input is added as it is (shallow, no ${...} resolution); given keys win", () => {
    const inputTemplate = { region: "eu", options: { fast: true, depth: 1 }, literal: "${workflow.input.region}" };
    const execution = createExecution({ workflowId: "wf-1", definition: hookDefinition({ inputTemplate }), input: { region: "us", options: { fast: false } } }, 1_000);
    expect(execution.input).toEqual({ region: "us", options: { fast: false }, literal: "${workflow.input.region}" });
    expect(createExecution({ workflowId: "wf-2", definition: hookDefinition(), input: { a: 1 } }, 1_000).input).toEqual({ a: 1 });
    // A template key named __proto__ is data, not the input's prototype.
    const proto = JSON.parse('{"__proto__": {"polluted": true}}') as JsonObject;
    const withProto = createExecution({ workflowId: "wf-3", definition: hookDefinition({ inputTemplate: proto }), input: {} }, 1_000).input;
    expect([Object.keys(withProto), Object.getPrototypeOf(withProto) === Object.prototype]).toEqual([["__proto__"], true]);
  });

  it("inputTemplate on restart: the latest definition's defaults join the execution's input; a plain restart keeps the input as started", () => {
    const completed = ended(hookDefinition({ inputTemplate: { region: "eu" } }), "COMPLETED");
    expect(decide(completed, { type: "restart" }, env(2_000)).state.input).toEqual({ region: "eu" });
    const latest = hookDefinition({ version: 2, inputTemplate: { region: "us", tier: "gold" } });
    expect(decide(completed, { type: "restart", definition: latest }, env(2_000)).state.input).toEqual({ region: "eu", tier: "gold" });
  });

  it("inputTemplate counts toward the input size limit: a start input that fits alone may not with the defaults, and a restart with such a latest definition is refused", () => {
    const limit = DEFAULT_ENGINE_CONFIG.maxPayloadBytes;
    const big = "x".repeat(Math.floor(limit / 2));
    const definition = hookDefinition({ inputTemplate: { fromTemplate: big } });
    expect(workflowInputOversizeReason(definition, { given: "small" }, limit)).toBeUndefined();
    // Without a template the given input was measured where it arrived.
    expect(workflowInputOversizeReason(hookDefinition(), { given: big, more: big }, limit)).toBeUndefined();
    expect(workflowInputOversizeReason(definition, { given: big }, limit)).toMatch(
      /^The workflow input with the defaults of its definition's inputTemplate is \d+ bytes, over the limit of \d+ bytes \(MAX_PAYLOAD_BYTES\)$/,
    );
    const completed = ended(hookDefinition(), "COMPLETED");
    const large = { ...completed, input: { given: big } };
    const error = refusal(large, { type: "restart", definition: { ...definition, version: 2 } }, 2_000);
    expect({ kind: error.kind, message: error.message }).toEqual({ kind: "INVALID", message: expect.stringContaining("inputTemplate is") });
  });

  it("restartable with useLatestDefinitions: the definition the restart would run decides, as in Conductor", () => {
    const completed = ended(hookDefinition({ restartable: false }), "COMPLETED");
    const latest = hookDefinition({ version: 2, restartable: true });
    expect(decide(completed, { type: "restart", definition: latest }, env(2_000)).state).toMatchObject({ status: "RUNNING", workflowVersion: 2 });
    const restartable = ended(hookDefinition(), "COMPLETED");
    const error = refusal(restartable, { type: "restart", definition: hookDefinition({ version: 2, restartable: false }) }, 2_000);
    expect({ kind: error.kind, message: error.message }).toEqual({ kind: "CONFLICT", message: expect.stringContaining("options_flow version 2, which is non restartable") });
  });
});

describe("workflow variables in the engine", () => {
  const hook = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "WAIT_FOR_WEBHOOK" as const, inputParameters: { seen: "${workflow.variables.stage}" } });
  const variablesDefinition = (extra: Partial<WorkflowDef> = {}): WorkflowDef => ({
    name: "variables_flow",
    version: 1,
    schemaVersion: 2,
    tasks: [hook("first"), hook("second")],
    variables: { stage: "initial", count: 0 },
    ...extra,
  });
  const started = (definition = variablesDefinition()) =>
    decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
  const complete = (state: WorkflowExecution, ref: string, now: number, status: "COMPLETED" | "FAILED" = "COMPLETED") =>
    decide(state, { type: "externalUpdate", taskId: state.tasks.findLast((task) => task.referenceTaskName === ref)!.taskId, status, output: {} }, env(now)).state;
  const update = (state: WorkflowExecution, variables: JsonObject, now = 1_500) => decide(state, { type: "updateVariables", variables }, env(now)).state;

  it("an execution starts with a copy of its definition's variables ({} without any)", () => {
    const definition = variablesDefinition();
    const execution = createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000);
    expect(execution.variables).toEqual({ stage: "initial", count: 0 });
    expect(execution.variables).not.toBe(definition.variables);
    expect(createExecution({ workflowId: "wf-2", definition: variablesDefinition({ variables: undefined }), input: {} }, 1_000).variables).toEqual({});
  });

  it("updateVariables merges shallowly (a null value is set to null, other keys stay) and moves updateTime; a paused execution takes it too", () => {
    const state = started();
    const updated = decide(state, { type: "updateVariables", variables: { stage: "later", extra: { a: 1 }, count: null } }, env(1_500)).state;
    expect(updated.variables).toEqual({ stage: "later", count: null, extra: { a: 1 } });
    expect(updated.updateTime).toBe(1_500);
    expect(state.variables).toEqual({ stage: "initial", count: 0 });
    // A key named __proto__ is data, not the variables' prototype.
    const proto = update(state, JSON.parse('{"__proto__": {"polluted": true}}') as JsonObject).variables;
    expect([Object.keys(proto), Object.getPrototypeOf(proto) === Object.prototype]).toEqual([["stage", "count", "__proto__"], true]);
    const paused = decide(state, { type: "pause" }, env(1_200)).state;
    expect(update(paused, { stage: "while paused" })).toMatchObject({ status: "PAUSED", variables: { stage: "while paused", count: 0 } });
  });

  it("updateVariables is refused, changing nothing, on an ended execution (CONFLICT), over MAX_PAYLOAD_BYTES merged or nested too deep (INVALID)", () => {
    const done = complete(complete(started(), "first", 1_100), "second", 1_200);
    expect(done.status).toBe("COMPLETED");
    const ended = refusal(done, { type: "updateVariables", variables: { stage: "late" } }, 2_000);
    expect({ kind: ended.kind, message: ended.message }).toEqual({ kind: "CONFLICT", message: "Cannot update the variables of workflow wf-1: its status is COMPLETED" });
    expect(done.variables).toEqual({ stage: "initial", count: 0 });

    const half = "x".repeat(Math.floor(DEFAULT_ENGINE_CONFIG.maxPayloadBytes / 2) + 10);
    const large = update(started(), { a: half });
    const oversized = refusal(large, { type: "updateVariables", variables: { b: half } }, 2_000);
    expect({ kind: oversized.kind, message: oversized.message }).toEqual({ kind: "INVALID", message: expect.stringMatching(/^The workflow's variables object with the update is \d+ bytes, over the limit of \d+ bytes \(MAX_PAYLOAD_BYTES\)$/) });
    const deep = JSON.parse(`${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`) as JsonObject;
    expect(refusal(started(), { type: "updateVariables", variables: { deep } }, 2_000).kind).toBe("INVALID");
  });

  it("${workflow.variables.x}: a task scheduled after an update sees the new value; the input of one already scheduled stays", () => {
    const state = started();
    expect(state.tasks[0]!.inputData["seen"]).toBe("initial");
    const updated = update(state, { stage: "updated" });
    expect(updated.tasks[0]!.inputData["seen"]).toBe("initial");
    const next = complete(updated, "first", 1_600);
    expect(next.tasks.map((task) => task.inputData["seen"])).toEqual(["initial", "updated"]);
  });

  it("a task whose input names a secret keeps the variables it was resolved with (the actor resolves it again to send it); others keep none", () => {
    const secretHook = { ...hook("first"), inputParameters: { seen: "${workflow.variables.stage}", token: "${workflow.secrets.token}" } };
    const state = started(variablesDefinition({ tasks: [secretHook, hook("second")] }));
    expect(state.tasks[0]!.inputVariables).toEqual({ stage: "initial", count: 0 });
    const next = complete(update(state, { stage: "updated" }), "first", 1_600);
    expect(next.tasks.map((task) => task.inputVariables)).toEqual([{ stage: "initial", count: 0 }, undefined]);
    expect(started(variablesDefinition({ tasks: [secretHook], variables: undefined })).tasks[0]!.inputVariables).toBeUndefined();
    const rerun = decide(complete(update(state, { stage: "updated" }), "first", 1_600, "FAILED"), { type: "rerun", fromTaskId: state.tasks[0]!.taskId }, env(2_000)).state;
    expect(rerun.tasks[0]).toMatchObject({ inputVariables: { stage: "updated", count: 0 }, inputData: { seen: "updated" } });
  });

  it("a task with a secret whose input and the variables it keeps are over MAX_PAYLOAD_BYTES together fails on its input (its row must fit)", () => {
    const secretHook = { ...hook("first"), inputParameters: { seen: "${workflow.variables.stage}", copy: "${workflow.input.big}", token: "${workflow.secrets.token}" } };
    const big = "x".repeat(Math.floor(DEFAULT_ENGINE_CONFIG.maxPayloadBytes * 0.6));
    const definition = variablesDefinition({ tasks: [secretHook], variables: { stage: "s", big } });
    const state = decide(createExecution({ workflowId: "wf-1", definition, input: { big } }, 1_000), { type: "start" }, env(1_000)).state;
    expect(state.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", inputData: {}, reasonForIncompletion: expect.stringContaining("The resolved input with the workflow variables it was resolved with is") });
    expect(state.tasks[0]!.inputVariables).toBeUndefined();
    // Either alone fits: without the secret the same input is kept (and no variables with it).
    const plain = { ...secretHook, inputParameters: { seen: "${workflow.variables.stage}", copy: "${workflow.input.big}" } };
    const fits = decide(createExecution({ workflowId: "wf-2", definition: variablesDefinition({ tasks: [plain], variables: { stage: "s", big } }), input: { big } }, 1_000), { type: "start" }, env(1_000)).state;
    expect(fits.tasks[0]).toMatchObject({ status: "IN_PROGRESS", inputData: { seen: "s", copy: big } });
  });

  it("retry, rerun and restart (also with the latest definition) keep the variables as the last run left them, as in Conductor", () => {
    const failed = complete(update(started(), { stage: "updated", added: true }), "first", 1_600, "FAILED");
    expect(failed.status).toBe("FAILED");
    const retried = decide(failed, { type: "retry" }, env(2_000)).state;
    expect(retried.variables).toEqual({ stage: "updated", count: 0, added: true });
    expect(retried.tasks.at(-1)!.inputData["seen"]).toBe("updated");
    expect(decide(failed, { type: "rerun" }, env(2_000)).state.variables).toEqual({ stage: "updated", count: 0, added: true });
    const restarted = decide(failed, { type: "restart" }, env(2_000)).state;
    expect(restarted.variables).toEqual({ stage: "updated", count: 0, added: true });
    expect(restarted.tasks.map((task) => task.inputData["seen"])).toEqual(["updated"]);
    const latest = variablesDefinition({ version: 2, variables: { stage: "v2" } });
    expect(decide(failed, { type: "restart", definition: latest }, env(2_000)).state.variables).toEqual({ stage: "updated", count: 0, added: true });
  });
});

describe("SUB_WORKFLOW with an inline child (subWorkflowParam.workflowDefinition)", () => {
  const child = (tasks: unknown[]) => ({ name: "kid", version: 1, tasks });
  const sub = (param: Record<string, unknown>, inputParameters: Record<string, unknown> = {}) => ({ name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: param, inputParameters });
  const call = { name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { uri: "https://example.com/${workflow.secrets.token}", method: "GET" } };

  it("lets the child name secrets of its own, but a secret passed to it from the parent is still refused", () => {
    expect(registrationErrors([sub({ name: "kid", workflowDefinition: child([call]) })])).toEqual([]);
    expect(registrationErrors([sub({ name: "kid", workflowDefinition: child([call]) }, { token: "${workflow.secrets.token}" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters: must not pass secrets to a child workflow/)]);
  });

  it("keeps the child's expressions out of the parent's checks and stores the child normalised", () => {
    const result = validateWorkflowDef({ name: "parent", version: 1, schemaVersion: 2, tasks: [sub({ name: "kid", workflowDefinition: child([call]) })] });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const stored = result.value.tasks[0]!.subWorkflowParam!["workflowDefinition"] as { name: string; tasks: unknown[]; timeoutSeconds?: number };
    expect(stored).toMatchObject({ name: "kid", version: 1 });
    expect(stored.tasks).toHaveLength(1);
  });

  it("reports a broken child at its paths, nested children included", () => {
    const broken = child([{ name: "x", taskReferenceName: "x", type: "NOPE" }]);
    expect(registrationErrors([sub({ name: "kid", workflowDefinition: child([sub({ name: "kid", workflowDefinition: broken })]) })]).map((line) => line.split(":")[0])).toEqual([
      "tasks[0].subWorkflowParam.workflowDefinition.tasks[0].subWorkflowParam.workflowDefinition.tasks[0].type",
    ]);
  });
});

describe("definitions as the Go SDK's client writes them (every field, \"\" or null when unset)", () => {
  /** The fields its toGeneratedWorkflowTask writes on every task, left unset. */
  const unset = {
    description: "",
    dynamicTaskNameParam: "",
    caseValueParam: "",
    caseExpression: "",
    scriptExpression: "",
    evaluatorType: "",
    expression: "",
    dynamicForkJoinTasksParam: "",
    dynamicForkTasksParam: "",
    dynamicForkTasksInputParamName: "",
    sink: "",
    loopCondition: "",
    startDelay: 0,
    optional: false,
  };

  it("takes the unset fields as absent: a DO_WHILE, a FORK_JOIN_DYNAMIC and a plain task register", () => {
    const loop = { ...unset, name: "loop", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "$.loop.iteration < 2", loopOver: [{ ...httpTask("inner"), ...unset }] };
    const fork = { ...unset, name: "fork", taskReferenceName: "fork", type: "FORK_JOIN_DYNAMIC", dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs", inputParameters: { tasks: "${workflow.input.tasks}", inputs: "${workflow.input.inputs}" } };
    const join = { ...unset, name: "join", taskReferenceName: "join", type: "JOIN" };
    const value = accepted(def({}, [{ ...httpTask("first"), ...unset }, loop, fork, join]));
    expect(value.tasks[1]).toMatchObject({ type: "DO_WHILE", loopCondition: "$.loop.iteration < 2" });
    expect(value.tasks[1]).not.toHaveProperty("evaluatorType");
    expect(value.tasks[2]).toMatchObject({ dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs" });
    expect(value.tasks[0]).not.toHaveProperty("description");
  });

  it("stores a task-level subWorkflowParam version given as digits as the number (Java's and Go's Integer), \"\" as none", () => {
    expect(acceptedTask(subTask("c", { subWorkflowParam: { name: "child", version: "2" } })).subWorkflowParam).toEqual({ name: "child", version: 2 });
    expect(acceptedTask(subTask("c", { subWorkflowParam: { name: "child", version: "" } })).subWorkflowParam).toEqual({ name: "child" });
  });

  it("stores a task-level subWorkflowParam.taskToDomain's number or boolean domains as their text, as Jackson reads SubWorkflowParams' Map<String, String> (the Go client's map[string]string takes no number)", () => {
    const param = acceptedTask(subTask("c", { subWorkflowParam: { name: "child", taskToDomain: { a: 7, b: true, c: null, "*": "${workflow.input.region}" } } })).subWorkflowParam;
    expect(param).toEqual({ name: "child", taskToDomain: { a: "7", b: "true", c: null, "*": "${workflow.input.region}" } });
    // Inside inputParameters it is the task's input, a map of any values: kept as written, read as it runs.
    const inInput = acceptedTask(subTask("c", { inputParameters: { subWorkflowParam: { name: "child", taskToDomain: { a: 7 } } } }));
    expect((inInput.inputParameters as Json)["subWorkflowParam"]).toEqual({ name: "child", taskToDomain: { a: 7 } });
  });

  it("stores a task-level subWorkflowParam.idempotencyKey given as a number or boolean as its text, as Jackson reads SubWorkflowParams' String (the Go client's IdempotencyKey is a string)", () => {
    expect(acceptedTask(subTask("c", { subWorkflowParam: { name: "child", idempotencyKey: 42 } })).subWorkflowParam).toEqual({ name: "child", idempotencyKey: "42" });
    expect(acceptedTask(subTask("c", { subWorkflowParam: { name: "child", idempotencyKey: true } })).subWorkflowParam).toEqual({ name: "child", idempotencyKey: "true" });
    expect(acceptedTask(subTask("c", { subWorkflowParam: { name: "child", idempotencyKey: "${workflow.input.orderId}" } })).subWorkflowParam).toEqual({ name: "child", idempotencyKey: "${workflow.input.orderId}" });
    // Inside inputParameters it is the task's input, a map of any values: kept as written, read as it runs.
    const inInput = acceptedTask(subTask("c", { inputParameters: { subWorkflowParam: { name: "child", idempotencyKey: 42 } } }));
    expect((inInput.inputParameters as Json)["subWorkflowParam"]).toEqual({ name: "child", idempotencyKey: 42 });
  });

  it("registers an inline child whose unset maps are null and whose unset timeoutPolicy is \"\"", () => {
    const child = { name: "inline_child", version: 1, tasks: [httpTask("c1")], inputParameters: null, outputParameters: null, variables: null, inputTemplate: null, timeoutPolicy: "" };
    const param = acceptedTask(subTask("c", { subWorkflowParam: { name: "inline_child", version: 1, taskToDomain: null, workflowDefinition: child } })).subWorkflowParam as Json;
    expect(param["workflowDefinition"]).toMatchObject({ name: "inline_child", timeoutPolicy: "ALERT_ONLY" });
    expect(param["workflowDefinition"]).not.toHaveProperty("variables");
  });
});
