/**
 * Numbers and booleans given as text, as Conductor's Jackson reads them (ALLOW_COERCION_OF_SCALARS, on by default):
 * hand-written JSON, YAML converted to JSON and some SDKs' templates send `"retryCount": "3"` or `"optional": "true"`.
 * Each is stored as the number or boolean, never as the text; any other text is still a 400 with the field's message.
 */
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, eventually, httpTask, target, waitFor } from "./helpers";

/** The validation errors of a refused request, after checking it was a 400. */
async function refusedWith(response: Response): Promise<Array<{ path: string; message: string }>> {
  const body = (await response.json()) as { status: number; validationErrors?: Array<{ path: string; message: string }> };
  expect(response.status).toBe(400);
  expect(body.status).toBe(400);
  return body.validationErrors ?? [];
}

describe("numbers and booleans given as text, as Jackson reads them", () => {
  it("registers a workflow definition whose numbers and booleans are text, reads it back with numbers and booleans, and runs it", async () => {
    const definition: JsonObject = {
      name: "coerce_definition",
      version: "2",
      schemaVersion: " 2 ",
      ownerEmail: "team@example.com",
      timeoutSeconds: "30",
      timeoutPolicy: "TIME_OUT_WF",
      restartable: "False",
      retentionSeconds: "0",
      rateLimitConfig: { concurrentExecLimit: "+3" },
      tasks: [
        // Fails (a 500) once, with no retry: optional "true" lets the workflow go on, as Conductor's would.
        httpTask("flaky", { uri: target("/status/500"), method: "GET" }, { optional: "true", retryCount: "0", retryDelaySeconds: "0", asyncComplete: "false" }),
        httpTask("fetch", { uri: target("/echo/coerce"), method: "GET" }, { startDelay: "0", taskDefinition: { retryCount: "1", timeoutSeconds: "60", responseTimeoutSeconds: "30" } }),
      ],
    };
    await apiOk("POST", "/api/metadata/workflow", definition);
    const stored = await apiOk("GET", "/api/metadata/workflow/coerce_definition");
    expect(stored).toMatchObject({ version: 2, schemaVersion: 2, timeoutSeconds: 30, restartable: false, retentionSeconds: 0, rateLimitConfig: { concurrentExecLimit: 3 } });
    const [flaky, fetch] = stored["tasks"] as JsonObject[];
    expect(flaky).toMatchObject({ optional: true, retryCount: 0, retryDelaySeconds: 0, asyncComplete: false });
    expect(fetch?.["taskDefinition"]).toMatchObject({ retryCount: 1, timeoutSeconds: 60, responseTimeoutSeconds: 30 });

    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "coerce_definition", version: "2" });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([
      ["flaky", "COMPLETED_WITH_ERRORS"],
      ["fetch", "COMPLETED"],
    ]);
    expect(done["workflowVersion"]).toBe(2);
  });

  it("registers task definitions whose numbers and booleans are text, stored as numbers and booleans", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [
      { name: "coerce_task", retryCount: "3", retryDelaySeconds: "5", timeoutSeconds: "600", responseTimeoutSeconds: " 60 ", concurrentExecLimit: "2", rateLimitPerFrequency: "10", rateLimitFrequencyInSeconds: "1", pollTimeoutSeconds: "30", enforceSchema: "FALSE", ownerEmail: "team@example.com" },
    ]);
    expect(await apiOk("GET", "/api/metadata/taskdefs/coerce_task")).toMatchObject({
      retryCount: 3,
      retryDelaySeconds: 5,
      timeoutSeconds: 600,
      responseTimeoutSeconds: 60,
      concurrentExecLimit: 2,
      rateLimitPerFrequency: 10,
      rateLimitFrequencyInSeconds: 1,
      pollTimeoutSeconds: 30,
      enforceSchema: false,
    });
  });

  it("starts with a priority given as signed or spaced digits, and an event handler's start_workflow takes its priority and active flag as text", async () => {
    await apiOk("POST", "/api/metadata/workflow", { name: "coerce_start", ownerEmail: "team@example.com", tasks: [httpTask("fetch", { uri: target("/echo/start"), method: "GET" })] });
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "coerce_start", priority: " +5 ", version: "1" });
    expect(await apiOk("GET", `/api/workflow/${workflowId}?includeTasks=false`)).toMatchObject({ priority: 5, workflowVersion: 1 });

    const handler = { name: "coerce_handler", event: "conductor:coerce:q", active: "true", actions: [{ action: "start_workflow", start_workflow: { name: "coerce_start", priority: "5" }, expandInlineJSON: "false" }] };
    await apiOk("POST", "/api/event", handler);
    const saved = (await apiOk<JsonObject[]>("GET", "/api/event")).find((each) => each["name"] === "coerce_handler");
    expect(saved).toMatchObject({ active: true, actions: [{ start_workflow: { priority: 5 }, expandInlineJSON: false }] });
  });

  it("saves a schedule whose paused flag and window are text, stored as a boolean and numbers", async () => {
    await apiOk("POST", "/api/metadata/workflow", { name: "coerce_scheduled", ownerEmail: "team@example.com", tasks: [httpTask("fetch", { uri: target("/echo/s"), method: "GET" })] });
    const schedule = { name: "coerce-schedule", cronExpression: "0 0 0 1 1 ?", paused: "true", scheduleEndTime: "253402300799999", startWorkflowRequest: { name: "coerce_scheduled", version: "1", priority: "5" } };
    await apiOk("POST", "/api/scheduler/schedules", schedule);
    expect(await apiOk("GET", "/api/scheduler/schedules/coerce-schedule")).toMatchObject({ paused: true, scheduleEndTime: 253402300799999, startWorkflowRequest: { version: 1, priority: 5 } });
    await apiOk("DELETE", "/api/scheduler/schedules/coerce-schedule");
  });

  it("takes a TaskResult's callbackAfterSeconds given as digits as the number", async () => {
    await apiOk("POST", "/api/metadata/workflow", { name: "coerce_result", ownerEmail: "team@example.com", tasks: [{ name: "coerce_result_task", taskReferenceName: "work", type: "SIMPLE" }] });
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "coerce_result" });
    const polled = await eventually(() => apiOk<JsonObject[]>("GET", "/api/tasks/poll/batch/coerce_result_task?workerid=w&count=1&timeout=0"), (tasks) => tasks.length === 1, "the task polled");
    const taskId = polled[0]!["taskId"];
    await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId, status: "IN_PROGRESS", callbackAfterSeconds: "30", logs: [{ log: "half way", createdTime: "1700000000000" }] });
    const task = (await apiOk<{ tasks: JsonObject[] }>("GET", `/api/workflow/${workflowId}?includeTasks=true`)).tasks[0];
    expect(task).toMatchObject({ status: "SCHEDULED", callbackAfterSeconds: 30 });
    expect(await apiOk("GET", `/api/tasks/${String(taskId)}/log`)).toEqual([expect.objectContaining({ log: "half way", createdTime: 1700000000000 })]);
  });

  it("reads a whole number given for a boolean as Jackson does, 0 as false and any other as true, and refuses a fraction", async () => {
    const definition: JsonObject = {
      name: "coerce_int_boolean",
      ownerEmail: "team@example.com",
      restartable: 0,
      workflowStatusListenerEnabled: 0,
      tasks: [httpTask("flaky", { uri: target("/status/500"), method: "GET" }, { optional: 1, retryCount: 0, asyncComplete: 0 })],
    };
    await apiOk("POST", "/api/metadata/workflow", definition);
    const stored = await apiOk("GET", "/api/metadata/workflow/coerce_int_boolean");
    expect(stored).toMatchObject({ restartable: false, workflowStatusListenerEnabled: false, tasks: [{ optional: true, asyncComplete: false }] });
    // Optional as 1 said: the failed task lets the workflow complete.
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "coerce_int_boolean" });
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"])).status).toBe("COMPLETED");

    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "coerce_int_boolean_task", enforceSchema: 2, ownerEmail: "team@example.com" }]);
    expect(await apiOk("GET", "/api/metadata/taskdefs/coerce_int_boolean_task")).toMatchObject({ enforceSchema: true });

    const handler = { name: "coerce_int_handler", event: "conductor:coerce:int", active: 1, actions: [{ action: "start_workflow", start_workflow: { name: "coerce_int_boolean" }, expandInlineJSON: 0 }] };
    await apiOk("POST", "/api/event", handler);
    const saved = (await apiOk<JsonObject[]>("GET", "/api/event")).find((each) => each["name"] === "coerce_int_handler");
    expect(saved).toMatchObject({ active: true, actions: [{ expandInlineJSON: false }] });

    const refused = await refusedWith(await api("POST", "/api/metadata/workflow", { ...definition, name: "coerce_int_refused", restartable: 1.5 }));
    expect(refused).toContainEqual({ path: "restartable", message: "restartable must be a boolean, but received the number 1.5" });
    expect((await api("GET", "/api/metadata/workflow/coerce_int_refused")).status).toBe(404);
  });

  it("reads \"\" and \"null\" in a number or boolean field as Jackson reads null there: 0 or false for a primitive, none for a wrapper", async () => {
    const definition: JsonObject = {
      name: "coerce_null_text",
      ownerEmail: "team@example.com",
      // WorkflowDef's int, long and boolean: 0, 0 and false.
      version: "",
      timeoutSeconds: " null ",
      restartable: "",
      // RateLimitConfig's int: 0, no limit.
      rateLimitConfig: { rateLimitKey: "k", concurrentExecLimit: "null" },
      tasks: [
        // WorkflowTask's Integer retryCount and Boolean asyncComplete: none (the task definition's retries apply); its
        // boolean optional and int startDelay: false and 0.
        httpTask("fetch", { uri: target("/echo/null-text"), method: "GET" }, { retryCount: "null", asyncComplete: "", optional: "null", startDelay: "" }),
      ],
    };
    await apiOk("POST", "/api/metadata/workflow", definition);
    const stored = await apiOk<JsonObject>("GET", "/api/metadata/workflow/coerce_null_text?version=0");
    expect(stored).toMatchObject({ version: 0, timeoutSeconds: 0, restartable: false, tasks: [{ optional: false, startDelay: 0, asyncComplete: false }] });
    expect(stored).not.toHaveProperty("rateLimitConfig");
    const [task] = stored["tasks"] as JsonObject[];
    expect(task).not.toHaveProperty("retryCount");
    // StartWorkflowRequest's Integer version and priority: none, the latest version (0, the only one) at priority 0.
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "coerce_null_text", version: "null", priority: " " });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"]);
    expect([done.status, done["workflowVersion"], done["priority"]]).toEqual(["COMPLETED", 0, 0]);

    // TaskDef's int retryCount and retryDelaySeconds: 0, not the defaults (3, 60); its Integer concurrentExecLimit: none.
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "coerce_null_text_task", retryCount: "", retryDelaySeconds: "null", concurrentExecLimit: "", ownerEmail: "team@example.com" }]);
    const taskDef = await apiOk<JsonObject>("GET", "/api/metadata/taskdefs/coerce_null_text_task");
    expect(taskDef).toMatchObject({ retryCount: 0, retryDelaySeconds: 0 });
    expect(taskDef).not.toHaveProperty("concurrentExecLimit");

    // A registered TaskDef's long responseTimeoutSeconds: 0, which its @Min(1) refuses; nothing registered.
    const refused = await refusedWith(await api("POST", "/api/metadata/taskdefs", [{ name: "coerce_null_text_refused", responseTimeoutSeconds: "", ownerEmail: "team@example.com" }]));
    expect(refused).toContainEqual({ path: "[0].responseTimeoutSeconds", message: "responseTimeoutSeconds must be a whole number of seconds of at least 1, but received the number 0" });
    expect((await api("GET", "/api/metadata/taskdefs/coerce_null_text_refused")).status).toBe(404);
  });

  it("reads a started workflow's version and priority as the API does: a sign and spaces around its digits, \"null\" as none", async () => {
    await apiOk("POST", "/api/metadata/workflow", { name: "coerce_child", ownerEmail: "team@example.com", tasks: [{ name: "noop", taskReferenceName: "noop", type: "NOOP" }] });
    const parent: JsonObject = {
      name: "coerce_parent",
      ownerEmail: "team@example.com",
      tasks: [
        // SubWorkflowParams' Integer version, typed at registration as Jackson types it.
        { name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "coerce_child", version: " +1 " } },
        // StartWorkflow reads its request with Jackson's convertValue: the latest version, priority 7.
        { name: "kick", taskReferenceName: "kick", type: "START_WORKFLOW", inputParameters: { startWorkflow: { name: "coerce_child", version: "null", priority: " +7 " } } },
      ],
    };
    await apiOk("POST", "/api/metadata/workflow", parent);
    const stored = await apiOk<{ tasks: JsonObject[] }>("GET", "/api/metadata/workflow/coerce_parent");
    expect(stored.tasks[0]?.["subWorkflowParam"]).toEqual({ name: "coerce_child", version: 1 });

    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "coerce_parent" });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"]);
    expect(done.status).toBe("COMPLETED");
    const started = await apiOk("GET", `/api/workflow/${String(done.tasks[1]?.outputData["workflowId"])}?includeTasks=false`);
    expect(started).toMatchObject({ workflowName: "coerce_child", workflowVersion: 1, priority: 7 });
  });

  it("reads a HUMAN task trigger's version as a start's: a sign and spaces around its digits the number, \"null\" the latest", async () => {
    for (const version of [1, 2]) {
      await apiOk("POST", "/api/metadata/workflow", { name: "coerce_notice", version, ownerEmail: "team@example.com", tasks: [{ name: "noop", taskReferenceName: "noop", type: "NOOP" }] });
    }
    const correlationId = `coerce-notice-${crypto.randomUUID().slice(0, 8)}`;
    // Orkes' StartWorkflowRequest's Integer version, in the task's input: typed as it starts, as a START_WORKFLOW's is.
    const trigger = (version: string) => ({ triggerType: "PENDING", startWorkflowRequest: { name: "coerce_notice", version, correlationId } });
    const settings = { assignments: [{ assignee: { user: "admin", userType: "CONDUCTOR_USER" }, slaMinutes: 0 }], taskTriggers: [trigger(" +1 "), trigger("null")] };
    await apiOk("POST", "/api/metadata/workflow", {
      name: "coerce_human_trigger",
      ownerEmail: "team@example.com",
      tasks: [{ name: "approve", taskReferenceName: "approve", type: "HUMAN", inputParameters: { __humanTaskDefinition: settings } }],
    });
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "coerce_human_trigger" });
    expect((await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.status === "IN_PROGRESS"))).status).toBe("RUNNING");
    type Found = { results: Array<{ workflowId: string }> };
    const page = await eventually(() => apiOk<Found>("GET", `/api/workflow/search?correlationId=${correlationId}`), (found) => found.results.length === 2, "both notices started");
    const versions = await Promise.all(page.results.map(async (found) => (await apiOk<JsonObject>("GET", `/api/workflow/${found.workflowId}?includeTasks=false`))["workflowVersion"]));
    expect(versions.sort()).toEqual([1, 2]);
  });

  it("reads a HUMAN task's user form version and assignment minutes as Jackson reads Orkes' Integer and Long: digits as text the number, \"null\" none", async () => {
    const form = { name: "coerce_form", jsonSchema: { type: "object" }, templateUI: { type: "VerticalLayout" } };
    await apiOk("POST", "/api/human/template", form);
    await apiOk("POST", "/api/human/template?newVersion=true", { ...form, templateUI: { type: "Second" } });
    const chain = (minutes: JsonObject[string]) => [
      { assignee: { user: "admin", userType: "CONDUCTOR_USER" }, slaMinutes: minutes },
      { assignee: { user: "admin", userType: "CONDUCTOR_USER" }, slaMinutes: "null" },
    ];
    const definition = (name: string, settings: JsonObject) => ({
      name,
      ownerEmail: "team@example.com",
      tasks: [{ name: "approve", taskReferenceName: "approve", type: "HUMAN", inputParameters: { __humanTaskDefinition: settings } }],
    });
    await apiOk("POST", "/api/metadata/workflow", definition("coerce_human_form", { assignments: chain(" +30 "), userFormTemplate: { name: "coerce_form", version: " 1 " } }));
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "coerce_human_form" });
    const running = await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.status === "IN_PROGRESS"));
    const taskId = running.tasks[0]!.taskId;
    // Version 1 of the form, not the latest (2); the chain's minutes as numbers, "null" none (no limit).
    expect(await apiOk("GET", `/api/human/template/${taskId}`)).toMatchObject({ name: "coerce_form", version: 1, templateUI: { type: "VerticalLayout" } });
    expect(await apiOk("GET", `/api/human/tasks/${taskId}`)).toMatchObject({
      humanTaskDef: { userFormTemplate: { name: "coerce_form", version: 1 }, assignments: [{ slaMinutes: 30 }, { slaMinutes: 0 }] },
    });

    // Other text is still refused with the field's message, and nothing is registered.
    const refused = await refusedWith(await api("POST", "/api/metadata/workflow", definition("coerce_human_refused", { assignments: chain("30 min"), userFormTemplate: { name: "coerce_form", version: "1.0" } })));
    const at = "tasks[0].inputParameters.__humanTaskDefinition";
    expect(refused.map((issue) => issue.path).sort()).toEqual([`${at}.assignments[0].slaMinutes`, `${at}.userFormTemplate.version`]);
    expect((await api("GET", "/api/metadata/workflow/coerce_human_refused")).status).toBe(404);
  });

  it("reads a SUB_WORKFLOW's waitForCompletion given in its input, written or resolved, as its task-level one is read: \"FALSE\" and 0 do not wait", async () => {
    await apiOk("POST", "/api/metadata/workflow", {
      name: "coerce_slow_child",
      ownerEmail: "team@example.com",
      tasks: [httpTask("gate", { uri: target("/echo/coerce-gate"), method: "GET" }, { asyncComplete: true })],
    });
    const sub = (ref: string, waitForCompletion: JsonObject[string]) => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "coerce_slow_child" }, waitForCompletion } });
    await apiOk("POST", "/api/metadata/workflow", {
      name: "coerce_no_wait",
      ownerEmail: "team@example.com",
      tasks: [sub("written", " FALSE "), sub("zero", 0), sub("resolved", "${workflow.input.wait}")],
    });
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "coerce_no_wait", input: { wait: "FALSE" } });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"]);
    expect([done.status, ...done.tasks.map((task) => task.status)]).toEqual(["COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED"]);
    for (const task of done.tasks) expect((await apiOk<JsonObject>("GET", `/api/workflow/${String(task["subWorkflowId"])}?includeTasks=false`))["status"]).toBe("RUNNING");
  });

  it("takes an enum constant by its position in Conductor's Java enum, as Jackson does, and refuses a position it has not", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "coerce_enum_task", retryLogic: 2, timeoutPolicy: " 0 ", ownerEmail: "team@example.com" }]);
    expect(await apiOk("GET", "/api/metadata/taskdefs/coerce_enum_task")).toMatchObject({ retryLogic: "LINEAR_BACKOFF", timeoutPolicy: "RETRY" });
    await apiOk("POST", "/api/metadata/workflow", { name: "coerce_enum", ownerEmail: "team@example.com", timeoutPolicy: 0, timeoutSeconds: 60, tasks: [{ name: "coerce_enum_task", taskReferenceName: "work", type: "SIMPLE" }] });
    expect(await apiOk("GET", "/api/metadata/workflow/coerce_enum")).toMatchObject({ timeoutPolicy: "TIME_OUT_WF" });

    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "coerce_enum" });
    const polled = await eventually(() => apiOk<JsonObject[]>("GET", "/api/tasks/poll/batch/coerce_enum_task?workerid=w&count=1&timeout=0"), (tasks) => tasks.length === 1, "the task polled");
    const taskId = polled[0]!["taskId"];
    // TaskResult.Status has 4 constants: 4 is none of them, a 400 that changes nothing.
    const refused = await refusedWith(await api("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId, status: 4, outputData: { n: 1 } }));
    expect(refused).toEqual([{ path: "status", message: "must be one of COMPLETED, FAILED, FAILED_WITH_TERMINAL_ERROR, IN_PROGRESS, but received the number 4" }]);
    expect((await apiOk<{ tasks: JsonObject[] }>("GET", `/api/workflow/${workflowId}?includeTasks=true`)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", outputData: {} });
    // 3 is COMPLETED (IN_PROGRESS, FAILED, FAILED_WITH_TERMINAL_ERROR, COMPLETED).
    await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId, status: 3, outputData: { n: 2 } });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { n: 2 } });
  });

  it("still refuses other text with the field's own message, and stores nothing", async () => {
    const task = (extra: JsonObject) => httpTask("fetch", { uri: target("/echo/x"), method: "GET" }, extra);
    const cases: Array<[JsonObject, string, string]> = [
      [{ timeoutSeconds: "thirty" }, "timeoutSeconds", 'timeoutSeconds must be a whole number of seconds of at least 0 (0 means no timeout), but received the string "thirty"'],
      [{ version: "1.0" }, "version", 'version must be an integer from 0 to 2147483647, but received the string "1.0"'],
      [{ restartable: "yes" }, "restartable", 'restartable must be a boolean, but received the string "yes"'],
      [{ tasks: [task({ retryCount: "3 times" })] }, "tasks[0].retryCount", 'retryCount must be an integer from 0 to 100, but received the string "3 times"'],
      [{ tasks: [task({ optional: "tRuE" })] }, "tasks[0].optional", 'optional must be a boolean, but received the string "tRuE"'],
      // Jackson reads "" into WorkflowDef's int schemaVersion as 0, which its @Min(2) refuses.
      [{ schemaVersion: "" }, "schemaVersion", "schemaVersion must be 2 (the only schema version, as in Conductor), but received the number 0"],
    ];
    for (const [fields, path, message] of cases) {
      const errors = await refusedWith(await api("POST", "/api/metadata/workflow", { name: "coerce_refused", ownerEmail: "team@example.com", tasks: [task({})], ...fields }));
      expect(errors).toContainEqual({ path, message });
    }
    expect((await api("GET", "/api/metadata/workflow/coerce_refused")).status).toBe(404);

    const start = await refusedWith(await api("POST", "/api/workflow", { name: "coerce_start", priority: "high" }));
    expect(start).toEqual([{ path: "priority", message: "must be an integer" }]);
  });
});
