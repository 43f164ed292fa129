/**
 * Every call the official Java client (conductor-oss/java-sdk: conductor-client's WorkflowClient, TaskClient,
 * MetadataClient, EventClient; orkes-client's Orkes*Client and *Resource classes) and Python client
 * (conductor-python's generated `*_resource_api.py`, as its Orkes*Client classes call them) sends, as they send it:
 * the method, the path, the query parameters spelled as each spells them (Python's `True`), and the body as each
 * writes it (the Java client's empty body labelled `application/json` on a POST or PUT without one; its raw text
 * labelled `application/json` for a String body). Each reaches a route that serves it, or, for what this service
 * deliberately does not serve, the 501 that says so: none falls through to "No route" or a 405.
 * test/e2e/conductor-client.test.ts does the same for the JavaScript client, through the client itself.
 *
 * The Go client (conductor-sdk/conductor-go, conductor-oss/go-sdk) has its own section below: its calls as its
 * APIClient sends them, and its answers read as Go's encoding/json reads them into the Go SDK's structs. So has the C#
 * client (conductor-oss/csharp-sdk): its calls as its ApiClient sends them (`True`/`False`, a string body as a JSON
 * string, no body and no Content-Type on a call without one), and its answers read as its Newtonsoft.Json reads them
 * (test/workers/csharp-models.ts); the Java client's model check reads the same answers into the C# models too.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, apiOk, eventually, getWorkflow, httpTask, register, startWorkflow, statusByRef, target, api, waitFor, waitTask } from "./helpers";
import type { JsonObject } from "../../src/engine/model";
import { CSHARP_MODELS, NEWTONSOFT } from "./csharp-models";
import { type JavaType, readAs, readAsModel } from "./java-models";
import { poll, pollOne, report } from "./task-worker-helpers";

/** [client method(s), HTTP method, path after /api, body (a string is sent as it is), extra headers]. */
type ClientCall = readonly [string, string, string, unknown?, Record<string, string>?];

/** Sends `call` as the clients do; answers the status and the error's code and message, if any. */
async function send([, method, path, body, extra = {}]: ClientCall): Promise<{ status: number; error: string; message: string }> {
  const headers: Record<string, string> = { "x-api-key": ADMIN_KEY, ...extra };
  let payload: string | undefined;
  if (body !== undefined) {
    payload = typeof body === "string" ? body : JSON.stringify(body);
    headers["content-type"] ??= "application/json";
  } else if (method === "POST" || method === "PUT") {
    // The Java client's ConductorClient sends an empty body labelled application/json when it has none.
    payload = "";
    headers["content-type"] = "application/json";
  }
  const response = await SELF.fetch(`https://conductor.test/api${path}`, { method, headers, body: payload });
  const text = await response.text();
  const failure = response.status >= 400 ? (JSON.parse(text) as { error?: string; message?: string }) : {};
  return { status: response.status, error: failure.error ?? "", message: failure.message ?? "" };
}

const TASK = "census_work";
const FLOW = "census_flow";
const tag = { key: "team", type: "METADATA", value: "census" };
const definition = { name: FLOW, version: 1, ownerEmail: "census@example.com", schemaVersion: 2, tasks: [{ name: TASK, taskReferenceName: "work", type: "SIMPLE" }, { name: "hold", taskReferenceName: "hold", type: "WAIT" }] };
const start = { name: FLOW, version: 1, input: { order: 1 }, correlationId: "census-c1" };

/** The calls made on one running workflow (`wf`), a second one the calls end (`other`), and `wf`'s polled task. */
function servedCalls(wf: string, other: string, taskId: string): ClientCall[] {
  return [
    // WorkflowClient / OrkesWorkflowClient / WorkflowResourceApi
    ["startWorkflow / start_workflow", "POST", "/workflow", start],
    ["start_workflow1 (by name)", "POST", `/workflow/${FLOW}?version=1&correlationId=census-c1&priority=0`, { order: 2 }, { "X-Idempotency-key": "census-k", "X-on-conflict": "RETURN_EXISTING" }],
    ["getWorkflow / get_execution_status", "GET", `/workflow/${wf}?includeTasks=True&summarize=False`],
    ["getWorkflows (correlated) / get_workflows2", "GET", `/workflow/${FLOW}/correlated/census-c1?includeClosed=false&includeTasks=false`],
    ["get_workflows (correlated, list body)", "POST", `/workflow/${FLOW}/correlated?includeClosed=True&includeTasks=False`, ["census-c1"]],
    ["getWorkflowsByNamesAndCorrelationIds / get_workflows1", "POST", "/workflow/correlated/batch?includeClosed=true&includeTasks=false", { correlationIds: ["census-c1"], workflowNames: [FLOW] }],
    ["getRunningWorkflow / getWorkflowsByTimePeriod", "GET", `/workflow/running/${FLOW}?version=1&startTime=0&endTime=4102444800000`],
    ["runDecider / decide", "PUT", `/workflow/decide/${wf}`],
    ["pauseWorkflow", "PUT", `/workflow/${other}/pause`],
    ["resumeWorkflow", "PUT", `/workflow/${other}/resume`],
    ["skipTaskFromWorkflow", "PUT", `/workflow/${other}/skiptask/hold`, {}],
    ["resetCallbacksForInProgressTasks / reset_workflow", "POST", `/workflow/${wf}/resetcallbacks`],
    ["getWorkflowStatusSummary", "GET", `/workflow/${wf}/status?includeOutput=true&includeVariables=true`],
    ["get_execution_status_task_list", "GET", `/workflow/${wf}/tasks?start=0&count=15&status=SCHEDULED&status=IN_PROGRESS`],
    ["updateVariables / update_workflow_state", "POST", `/workflow/${wf}/variables`, { census: true }],
    ["updateWorkflow / update_workflow_and_task_state", "POST", `/workflow/${wf}/state?requestId=census-r1&waitUntilTaskRef=&waitForSeconds=0`, { variables: { step: 1 } }],
    ["upgradeRunningWorkflow", "POST", `/workflow/${wf}/upgrade`, { name: FLOW, version: 1, taskOutput: {}, workflowInput: {} }],
    ["jump_to_task", "POST", `/workflow/${wf}/jump/%7BtaskReferenceName%7D?taskReferenceName=work`, {}],
    ["search", "GET", "/workflow/search?start=0&size=10&sort=startTime:DESC&freeText=*&query=&skipCache=True"],
    ["searchV2", "GET", "/workflow/search-v2?start=0&size=10&freeText=*"],
    ["testWorkflow", "POST", "/workflow/test", { name: FLOW, version: 1, input: {}, taskRefToMockOutput: {} }],
    ["executeWorkflow", "POST", `/workflow/execute/${FLOW}/1?requestId=census-e1&waitUntilTaskRef=work&waitForSeconds=0`, start],
    ["executeWorkflowWithReturnStrategy", "POST", `/workflow/execute/${FLOW}/1?requestId=census-e2&waitForSeconds=0&consistency=SYNCHRONOUS&returnStrategy=BLOCKING_TASK_INPUT`, start],
    ["execute_workflow_as_api", "POST", `/workflow/execute/${FLOW}?version=1`, { order: 3 }, { requestId: "census-e3", waitForSeconds: "0" }],
    ["pauseWorkflows (bulk)", "PUT", "/workflow/bulk/pause", [other]],
    ["resumeWorkflows (bulk)", "PUT", "/workflow/bulk/resume", [other]],
    ["retryWorkflows (bulk)", "POST", "/workflow/bulk/retry", [other]],
    ["restartWorkflows (bulk)", "POST", "/workflow/bulk/restart?useLatestDefinitions=false", [other]],
    ["retryLastFailedTask / retry", "POST", `/workflow/${wf}/retry?resumeSubworkflowTasks=true&retryIfRetriedByParent=True`],
    ["terminateWorkflowsWithFailure (bulk)", "POST", "/workflow/bulk/terminate?reason=census&triggerFailureWorkflow=false", [other]],
    ["terminateWorkflowWithFailure / terminate1", "DELETE", `/workflow/${other}?reason=census&triggerFailureWorkflow=True`],
    ["restart", "POST", `/workflow/${other}/restart?useLatestDefinitions=True`],
    ["rerunWorkflow", "POST", `/workflow/${other}/rerun`, { reRunFromWorkflowId: other, workflowInput: {} }],
    ["deleteWorkflows (bulk)", "POST", "/workflow/bulk/delete", ["census-none"]],
    ["deleteWorkflow / delete1", "DELETE", `/workflow/${other}/remove?archiveWorkflow=true`],
    // TaskClient / OrkesTaskClient / TaskResourceApi
    ["pollTask / poll", "GET", `/tasks/poll/${TASK}?workerid=census-w&domain=`],
    ["batchPollTasksInDomain / batch_poll", "GET", `/tasks/poll/batch/${TASK}?workerid=census-w&domain=census-d&count=2&timeout=10`],
    ["ack", "POST", `/tasks/${taskId}/ack?workerid=census-w`],
    ["logMessageForTask (Java's raw text)", "POST", `/tasks/${taskId}/log`, "a log line"],
    ["log (Python's JSON string)", "POST", `/tasks/${taskId}/log`, JSON.stringify("a log line")],
    ["getTaskLogs", "GET", `/tasks/${taskId}/log`],
    ["getTaskDetails / get_task", "GET", `/tasks/${taskId}`],
    ["getQueueSizeForTask (Conductor)", "GET", `/tasks/queue/size?taskType=${TASK}`],
    ["getQueueSizeForTask (Orkes) / size", "GET", `/tasks/queue/sizes?taskType=${TASK}`],
    ["getPollData", "GET", `/tasks/queue/polldata?taskType=${TASK}`],
    ["getAllPollData", "GET", "/tasks/queue/polldata"],
    ["all / all_verbose", "GET", "/tasks/queue/all/verbose"],
    ["search (tasks)", "GET", "/tasks/search?start=0&size=5&sort=&freeText=*&query="],
    ["searchV2 (tasks)", "GET", "/tasks/search-v2?start=0&size=5&freeText=*"],
    ["updateTaskV2", "POST", "/tasks/update-v2", { workflowInstanceId: wf, taskId, status: "IN_PROGRESS", outputData: {}, callbackAfterSeconds: 0 }],
    ["updateTask / update_task", "POST", "/tasks", { workflowInstanceId: wf, taskId, status: "IN_PROGRESS", outputData: {}, callbackAfterSeconds: 0 }],
    ["updateTask (by reference name) / update_task1", "POST", `/tasks/${wf}/work/IN_PROGRESS?workerid=census-w`, { step: 2 }],
    ["updateTaskSync", "POST", `/tasks/${wf}/work/IN_PROGRESS/sync?workerid=census-w`, { step: 3 }],
    ["signal (sync)", "POST", `/tasks/${wf}/COMPLETED/signal/sync?returnStrategy=TARGET_WORKFLOW&timeoutMillis=1000`, { step: 4 }],
    ["signalAsync", "POST", `/tasks/${wf}/COMPLETED/signal`, { step: 5 }],
    // MetadataClient / MetadataResource / TagsResource
    ["registerWorkflowDef", "POST", "/metadata/workflow?overwrite=true&newVersion=false", { ...definition, name: "census_flow2" }],
    ["updateWorkflowDefs", "PUT", "/metadata/workflow?overwrite=true&newVersion=false", [{ ...definition, name: "census_flow2" }]],
    ["getWorkflowDef", "GET", `/metadata/workflow/${FLOW}?version=1&metadata=true`],
    ["getAllWorkflowsWithLatestVersions", "GET", "/metadata/workflow/latest-versions"],
    ["getAllWorkflows", "GET", `/metadata/workflow?access=READ&metadata=false&tagKey=&tagValue=&name=${FLOW}&short=true`],
    ["unregisterWorkflowDef", "DELETE", "/metadata/workflow/census_flow2/1"],
    ["registerTaskDefs", "POST", "/metadata/taskdefs", [{ name: "census_gone", ownerEmail: "census@example.com", timeoutSeconds: 0, responseTimeoutSeconds: 60 }]],
    ["updateTaskDef", "PUT", "/metadata/taskdefs", { name: "census_gone", ownerEmail: "census@example.com", retryCount: 1, timeoutSeconds: 0, responseTimeoutSeconds: 60 }],
    ["getTaskDef", "GET", `/metadata/taskdefs/${TASK}?metadata=false`],
    ["getTaskDefs / getAllTaskDefs", "GET", "/metadata/taskdefs?access=READ&metadata=false"],
    ["unregisterTaskDef", "DELETE", "/metadata/taskdefs/census_gone"],
    ["addTaskTag", "POST", `/metadata/task/${TASK}/tags`, tag],
    ["setTaskTags", "PUT", `/metadata/task/${TASK}/tags`, [tag]],
    ["getTaskTags", "GET", `/metadata/task/${TASK}/tags`],
    ["deleteTaskTag", "DELETE", `/metadata/task/${TASK}/tags`, tag],
    ["addWorkflowTag", "POST", `/metadata/workflow/${FLOW}/tags`, tag],
    ["setWorkflowTags", "PUT", `/metadata/workflow/${FLOW}/tags`, [tag]],
    ["getWorkflowTags", "GET", `/metadata/workflow/${FLOW}/tags`],
    ["deleteWorkflowTag", "DELETE", `/metadata/workflow/${FLOW}/tags`, tag],
    ["getTags", "GET", "/metadata/tags"],
    // EventClient / EventResource
    ["registerEventHandler", "POST", "/event", { name: "census_handler", event: `conductor:${FLOW}:done`, actions: [{ action: "start_workflow", start_workflow: { name: FLOW } }], active: true }],
    ["updateEventHandler", "PUT", "/event", { name: "census_handler", event: `conductor:${FLOW}:done`, actions: [{ action: "start_workflow", start_workflow: { name: FLOW } }], active: false }],
    ["getEventHandlers", "GET", "/event"],
    ["getEventHandlers (by event)", "GET", `/event/conductor:${FLOW}:done?activeOnly=false`],
    ["putTagsForEventHandler", "PUT", "/event/census_handler/tags", [tag]],
    ["getTagsForEventHandler", "GET", "/event/census_handler/tags"],
    ["unregisterEventHandler", "DELETE", "/event/census_handler"],
    // SecretResource (its String body raw), EnvironmentResource (text/plain)
    ["putSecret", "PUT", "/secrets/census_key", "a secret value"],
    ["secretExists", "GET", "/secrets/census_key/exists"],
    ["listAllSecretNames", "GET", "/secrets"],
    ["listAllSecretNamesV2", "GET", "/secrets-v2"],
    ["putTagForSecret", "PUT", "/secrets/census_key/tags", [tag]],
    ["getTags (secret)", "GET", "/secrets/census_key/tags"],
    ["deleteTagForSecret", "DELETE", "/secrets/census_key/tags", [tag]],
    ["clearLocalCache", "GET", "/secrets/clearLocalCache"],
    ["clearRedisCache", "GET", "/secrets/clearRedisCache"],
    ["deleteSecret", "DELETE", "/secrets/census_key"],
    ["createOrUpdateEnvironmentVariable", "PUT", "/environment/census_env", "a value", { "content-type": "text/plain" }],
    ["getEnvironmentVariable", "GET", "/environment/census_env"],
    ["getAllEnvironmentVariables", "GET", "/environment"],
    ["setEnvironmentVariableTags", "PUT", "/environment/census_env/tags", [tag]],
    ["getEnvironmentVariableTags", "GET", "/environment/census_env/tags"],
    ["deleteEnvironmentVariableTags", "DELETE", "/environment/census_env/tags", [tag]],
    ["deleteEnvironmentVariable", "DELETE", "/environment/census_env"],
    // TokenResource, UserResource, GroupResource, AuthorizationResource, ApplicationResource
    ["getUserInfo", "GET", "/token/userInfo?claims=false"],
    ["upsertUser", "PUT", "/users/census_user", { name: "Census", roles: ["USER"], groups: [] }],
    ["getUser", "GET", "/users/census_user"],
    ["listUsers", "GET", "/users?apps=false"],
    ["getGrantedPermissions (user)", "GET", "/users/census_user/permissions"],
    ["checkPermissions", "GET", `/users/census_user/checkPermissions?type=WORKFLOW_DEF&id=${FLOW}`],
    ["upsertGroup", "PUT", "/groups/census_group", { description: "census", roles: ["USER"] }],
    ["getGroup", "GET", "/groups/census_group"],
    ["listGroups", "GET", "/groups"],
    ["addUserToGroup", "POST", "/groups/census_group/users/census_user"],
    ["getUsersInGroup", "GET", "/groups/census_group/users"],
    ["getGrantedPermissions (group)", "GET", "/groups/census_group/permissions"],
    ["removeUserFromGroup", "DELETE", "/groups/census_group/users/census_user"],
    ["grantPermissions", "POST", "/auth/authorization", { subject: { type: "GROUP", id: "census_group" }, target: { type: "WORKFLOW_DEF", id: FLOW }, access: ["READ"] }],
    ["getPermissions", "GET", `/auth/authorization/WORKFLOW_DEF/${FLOW}`],
    ["removePermissions", "DELETE", "/auth/authorization", { subject: { type: "GROUP", id: "census_group" }, target: { type: "WORKFLOW_DEF", id: FLOW }, access: ["READ"] }],
    ["deleteGroup", "DELETE", "/groups/census_group"],
    ["deleteUser", "DELETE", "/users/census_user"],
    ["createApplication", "POST", "/applications", { name: "census_app" }],
    ["listApplications", "GET", "/applications"],
    // SchedulerClient / SchedulerResourceApi, SchedulerBulkResource
    ["saveSchedule", "POST", "/scheduler/schedules", { name: "census_schedule", cronExpression: "0 0 * * * ?", startWorkflowRequest: { name: FLOW, version: 1, input: {} }, paused: true, scheduleStartTime: 0, scheduleEndTime: 0 }],
    ["getAllSchedules", "GET", `/scheduler/schedules?workflowName=${FLOW}`],
    ["getSchedule", "GET", "/scheduler/schedules/census_schedule"],
    ["getNextFewSchedules", "GET", "/scheduler/nextFewSchedules?cronExpression=0%200%20*%20*%20*%20%3F&scheduleStartTime=0&scheduleEndTime=0&limit=3"],
    ["pauseSchedule", "GET", "/scheduler/schedules/census_schedule/pause"],
    ["resumeSchedule", "GET", "/scheduler/schedules/census_schedule/resume"],
    ["searchV2 (schedule executions)", "GET", "/scheduler/search/executions?start=0&size=10&sort=&freeText=*&query="],
    ["setSchedulerTags", "PUT", "/scheduler/schedules/census_schedule/tags", [tag]],
    ["getSchedulerTags", "GET", "/scheduler/schedules/census_schedule/tags"],
    ["deleteSchedulerTags", "DELETE", "/scheduler/schedules/census_schedule/tags", [tag]],
    ["pauseSchedulers (bulk)", "PUT", "/scheduler/bulk/pause", ["census_schedule"]],
    ["resumeSchedulers (bulk)", "PUT", "/scheduler/bulk/resume", ["census_schedule"]],
    ["deleteSchedule", "DELETE", "/scheduler/schedules/census_schedule"],
    // WebhookResource, VersionResourceApi, HealthCheckResourceApi
    ["getAllWebhooks", "GET", "/metadata/webhook"],
    ["getVersion", "GET", "/version"],
    ["doCheck", "GET", "/health"],
  ];
}

/** Calls of features this service deliberately does not serve: each a 501 naming what to use instead (docs/api.md). */
const NOT_SERVED: ClientCall[] = [
  ["getSecret (values are write-only here)", "GET", "/secrets/census_none"],
  ["removeTaskFromQueue", "GET", `/tasks/queue/${TASK}/census-task`],
  ["requeueAllPendingTasks", "POST", "/tasks/queue/requeue"],
  ["requeuePendingTasksByTaskType", "POST", `/tasks/queue/requeue/${TASK}`],
  ["uploadCompletedWorkflows", "POST", "/workflow/document-store/upload"],
  ["uploadWorkflowTaskDefs", "POST", "/metadata/workflow-task-defs/upload"],
  ["handleIncomingEvent", "POST", "/event/handleIncomingEvent", { event: "x" }],
  ["getQueueConfig", "GET", "/event/queue/config/kafka/census"],
  ["sendInviteEmail", "POST", "/users/census@example.com/sendInviteEmail"],
  ["execute_workflow_as_get_api", "GET", `/workflow/execute/${FLOW}?version=1`],
];

describe("the Java and Python clients' calls", () => {
  it("each reaches a route that serves it: none is 'No route', a 405, a 501 or a 5xx", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: TASK, ownerEmail: "census@example.com", retryCount: 0, timeoutSeconds: 0, responseTimeoutSeconds: 60 }]);
    await register(definition);
    const wf = await startWorkflow(FLOW, {}, "?correlationId=census-c1");
    const polled = await eventually(async () => (await api("GET", `/api/tasks/poll/${TASK}?workerid=census-w`)).text(), (text) => text.length > 0, "a task to poll");
    const taskId = (JSON.parse(polled) as { taskId: string }).taskId;
    const other = await startWorkflow(FLOW, {});
    const misrouted: string[] = [];
    for (const call of servedCalls(wf, other, taskId)) {
      const { status, message } = await send(call);
      if (status === 405 || status === 501 || status >= 500 || message.startsWith("No route")) misrouted.push(`${call[0]}: ${call[1]} ${call[2]} → ${status} ${message}`);
    }
    expect(misrouted).toEqual([]);
  });

  it("each call of a feature not served here is a 501 saying so, not 'No route' or a 405", async () => {
    for (const call of NOT_SERVED) {
      const { status, error } = await send(call);
      expect({ call: call[0], status, error }).toEqual({ call: call[0], status: 501, error: "NOT_IMPLEMENTED" });
    }
  });
});

/**
 * The C# client's model for an answer the Java client reads as `model` (test/workers/csharp-models.ts), or undefined
 * where the C# client reads that call as an Object or a Dictionary, or makes no such call (conductor-oss/csharp-sdk
 * Conductor/Api/*ResourceApi.cs): GetUser, the token's and a group's reads, GetAllPollData (a Dictionary), the
 * latest versions, all tags, one schedule.
 */
function csharpModel(model: string, call: string): string | undefined {
  if (call === "GET /workflow/search") return "ScrollableSearchResultWorkflowSummary";
  if (/^GET \/(users\/|token\/|groups\/|tasks\/queue\/polldata\/all|metadata\/workflow\/latest-versions|metadata\/tags|scheduler\/schedules\/)/.test(call)) return undefined;
  if (model in CSHARP_MODELS) return model;
  // Named, so that a model renamed in csharp-models.ts fails here instead of dropping its checks unseen.
  if (NOT_READ_BY_CSHARP.has(model)) return undefined;
  throw new Error(`no C# model for the Java client's ${model} (${call}): add it to csharp-models.ts, or to NOT_READ_BY_CSHARP`);
}

/** The Java client's models whose calls the C# client makes without a model of its own (or does not make). */
const NOT_READ_BY_CSHARP: ReadonlySet<string> = new Set(["SignalResponse", "WebhookConfig", "GrantedAccessResponse", "ConductorApplication", "SecretWithTags"]);

describe("the Java client's response models (test/workers/java-models.ts)", () => {
  it("the checker reads as the client's Jackson does: it flags what would fail the call and passes what Jackson coerces", () => {
    const task = { taskId: "t", status: "COMPLETED", retryCount: "2", startTime: 1.5, retried: "true", workflowTask: { name: "n", optional: 0 } };
    expect(readAsModel("Task", task)).toEqual([]);
    expect(readAsModel("Task", { ...task, status: "PENDING", startTime: "2026-01-01T00:00:00Z", seq: 2 ** 31, inputData: "{}", workflowTask: { joinOn: "a" } })).toEqual([
      'Task.status: Cannot deserialize value of type enum from the string "PENDING": not one of the values accepted for Enum class: [IN_PROGRESS, CANCELED, FAILED, FAILED_WITH_TERMINAL_ERROR, COMPLETED, COMPLETED_WITH_ERRORS, SCHEDULED, TIMED_OUT, SKIPPED]',
      "Task.inputData: Cannot deserialize value of type `java.util.Map` from the string \"{}\"",
      "Task.seq: Numeric value (2147483648) out of range of int",
      'Task.startTime: Cannot deserialize value of type `long` from String "2026-01-01T00:00:00Z": not a valid `long` value',
      "Task.workflowTask.joinOn: Cannot deserialize value of type `java.util.List` from the string \"a\"",
    ]);
    expect(readAsModel("WorkflowSummary", { workflowId: "w", input: { a: 1 }, status: 2 })).toEqual(["WorkflowSummary.input: Cannot deserialize value of type `java.lang.String` from an object"]);
    expect(readAsModel("Workflow", { priority: 100, tasks: [] })).toEqual(["Workflow.priority: IllegalArgumentException: priority MUST be between 0 and 99 (inclusive)"]);
    // An answer holding no model (a poll that found none) checks nothing: flagged, so that no check passes for want of one.
    expect(readAsModel("Task", undefined, "GET /tasks/poll/batch")).toEqual(["GET /tasks/poll/batch: no Task in the answer (undefined), so nothing of it was checked"]);
    expect(readAsModel("Task", null)).toHaveLength(1);
  });

  it("every response the Java client reads into a model, from executions in every state, reads without a mismatch", async () => {
    const worker = "jm_work";
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: worker, ownerEmail: "jm@example.com", retryCount: 1, retryDelaySeconds: 0, timeoutSeconds: 0, responseTimeoutSeconds: 60, concurrentExecLimit: 5, rateLimitPerFrequency: 100, rateLimitFrequencyInSeconds: 1 }]);
    const simple = (ref: string) => ({ name: worker, taskReferenceName: ref, type: "SIMPLE" });
    const inline = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "INLINE", inputParameters: { evaluatorType: "graaljs", expression: "(function () { return 1; })()" } });
    await register({ name: "jm_child", ownerEmail: "jm@example.com", tasks: [simple("work")] });
    await register({
      name: "jm_main",
      ownerEmail: "jm@example.com",
      timeoutSeconds: 3600,
      timeoutPolicy: "ALERT_ONLY",
      inputParameters: ["order"],
      outputParameters: { done: "${loop.output.iteration}" },
      tasks: [
        { name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "jm_child", version: 1 } },
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[waitTask("hold")], [inline("calc")]] },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["hold", "calc"] },
        { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "$.loop.iteration < 2", loopOver: [inline("step")] },
        { name: "setvar", taskReferenceName: "setvar", type: "SET_VARIABLE", inputParameters: { seen: true } },
        {
          name: "route",
          taskReferenceName: "route",
          type: "SWITCH",
          evaluatorType: "value-param",
          expression: "pick",
          inputParameters: { pick: "a" },
          decisionCases: { a: [httpTask("flaky", { uri: target("/status/500"), method: "GET" }, { optional: true, retryCount: 0 })] },
          defaultCase: [inline("other")],
        },
        { name: "approve", taskReferenceName: "approve", type: "HUMAN", inputParameters: { __humanTaskDefinition: { assignments: [{ assignee: { user: "admin", userType: "CONDUCTOR_USER" }, slaMinutes: 0 }] } } },
        waitTask("gate"),
      ],
    });
    // Timed out while the rest runs: one second, waited for at the end.
    await register({ name: "jm_timeout", ownerEmail: "jm@example.com", timeoutSeconds: 1, timeoutPolicy: "TIME_OUT_WF", tasks: [waitTask("forever")] });
    const timedOut = await startWorkflow("jm_timeout");

    const main = await startWorkflow("jm_main", { order: 7 }, "?correlationId=jm-c1&priority=5");
    const child = String((await waitFor(main, (workflow) => typeof workflow.tasks[0]?.["subWorkflowId"] === "string")).tasks[0]!["subWorkflowId"]);
    // The child's task fails once (retried), then completes; its log and poll data are kept.
    const first = await pollOne(worker, { workerid: "jm-w" });
    const polled: string[] = readAsModel("Task", first, "GET /tasks/poll/batch");
    await apiOk("POST", `/api/tasks/${first.taskId}/log`, "a line");
    expect((await report(first, "FAILED", {}, { reasonForIncompletion: "once" })).status).toBe(200);
    const second = await eventually(() => poll(worker, { workerid: "jm-w" }), (tasks) => tasks.length === 1, "the retry polled");
    expect((await report(second[0]!, "COMPLETED", { n: 1 })).status).toBe(200);
    await waitFor(main, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "hold" && task.status === "IN_PROGRESS"));
    await apiOk("POST", `/api/tasks/${main}/hold/COMPLETED`, { held: true });
    const atGate = await waitFor(main, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "approve" && task.status === "IN_PROGRESS"));
    expect(statusByRef(atGate)).toMatchObject({ child: "COMPLETED", join: "COMPLETED", loop: "COMPLETED", flaky: "COMPLETED_WITH_ERRORS", approve: "IN_PROGRESS" });
    await apiOk("POST", `/api/tasks/${main}/approve/COMPLETED`, {});
    await waitFor(main, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "gate"));
    expect((await api("PUT", `/api/workflow/${main}/pause`)).status).toBe(200);

    // Terminated with its child cancelled; failed; skipped.
    const terminated = await startWorkflow("jm_main", {}, "?correlationId=jm-c1");
    await waitFor(terminated, (workflow) => typeof workflow.tasks[0]?.["subWorkflowId"] === "string");
    expect((await api("DELETE", `/api/workflow/${terminated}?reason=jm`)).status).toBe(200);
    await register({ name: "jm_fails", ownerEmail: "jm@example.com", tasks: [simple("only"), waitTask("after")] });
    const failed = await startWorkflow("jm_fails");
    const doomed = await pollOne(worker);
    expect((await report(doomed, "FAILED_WITH_TERMINAL_ERROR", {}, { reasonForIncompletion: "no" })).status).toBe(200);
    await register({ name: "jm_skips", ownerEmail: "jm@example.com", tasks: [waitTask("skipped"), waitTask("next")] });
    const skipped = await startWorkflow("jm_skips");
    await waitFor(skipped, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    expect((await api("PUT", `/api/workflow/${skipped}/skiptask/skipped`, {})).status).toBe(200);
    await waitFor(failed, ["FAILED"]);
    await waitFor(timedOut, ["TIMED_OUT"]);

    // Definitions, handlers, schedules, users, groups, applications and tags the Orkes client reads.
    await apiOk("POST", "/api/event", { name: "jm_handler", event: "conductor:jm_main:done", actions: [{ action: "start_workflow", start_workflow: { name: "jm_child", version: 1, input: { a: 1 } } }, { action: "complete_task", complete_task: { workflowId: "${workflowId}", taskRefName: "x", output: {} } }], active: true });
    await apiOk("POST", "/api/scheduler/schedules", { name: "jm_schedule", cronExpression: "0 0 * * * ?", startWorkflowRequest: { name: "jm_child", version: 1, input: {}, correlationId: "jm-s" }, paused: true });
    await apiOk("PUT", "/api/users/jm_user", { name: "JM", roles: ["USER"], groups: [] });
    await apiOk("PUT", "/api/groups/jm_group", { description: "jm", roles: ["USER"], defaultAccess: { WORKFLOW_DEF: ["READ"] } });
    await apiOk("POST", "/api/applications", { name: "jm_app" });
    await apiOk("PUT", "/api/metadata/workflow/jm_main/tags", [{ key: "team", type: "METADATA", value: "jm" }]);
    const hook = await apiOk("POST", "/api/metadata/webhook", { name: "jm_hook", sourcePlatform: "Custom", verifier: "HEADER_BASED", headers: { "x-jm": "secret" }, receiverWorkflowNamesToVersions: { jm_main: 1 }, workflowsToStart: { jm_child: 1 } });
    expect((await api("PUT", "/api/secrets/jm_key", "a secret value")).status).toBe(200);
    await apiOk("PUT", "/api/secrets/jm_key/tags", [{ key: "team", type: "METADATA", value: "jm" }]);
    await apiOk("POST", "/api/auth/authorization", { subject: { type: "GROUP", id: "jm_group" }, target: { type: "WORKFLOW_DEF", id: "jm_main" }, access: ["READ", "EXECUTE"] });
    await apiOk("POST", "/api/groups/jm_group/users/jm_user");
    const bulk = await apiOk("PUT", "/api/workflow/bulk/resume", [main, "jm-none"]);
    await apiOk("PUT", "/api/workflow/bulk/pause", [main]);

    // The synchronous calls: execute (WorkflowRun, and a SignalResponse per strategy), and a signal per strategy.
    const answers: Array<[string, string, unknown]> = [];
    answers.push(["WorkflowRun", "POST /workflow/execute", await apiOk("POST", "/api/workflow/execute/jm_child/1?requestId=jm-r&waitForSeconds=0", { name: "jm_child", version: 1 })]);
    await register({ name: "jm_signal", ownerEmail: "jm@example.com", tasks: ["s1", "s2", "s3", "s4", "s5"].map(waitTask) });
    const signalled = await startWorkflow("jm_signal");
    await waitFor(signalled, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    for (const strategy of ["TARGET_WORKFLOW", "BLOCKING_WORKFLOW", "BLOCKING_TASK", "BLOCKING_TASK_INPUT"]) {
      answers.push(["SignalResponse", `POST /workflow/execute ${strategy}`, await apiOk("POST", `/api/workflow/execute/jm_signal/1?requestId=jm-${strategy}&waitForSeconds=0&returnStrategy=${strategy}`, { name: "jm_signal", version: 1 })]);
      answers.push(["SignalResponse", `POST /tasks/{id}/COMPLETED/signal/sync ${strategy}`, await apiOk("POST", `/api/tasks/${signalled}/COMPLETED/signal/sync?returnStrategy=${strategy}`, { step: strategy })]);
    }

    // Search rows are written just after each change: read once every execution is there.
    await eventually(() => apiOk<{ totalHits: number }>("GET", "/api/workflow/search?freeText=*&query=workflowType IN (jm_main,jm_child,jm_fails,jm_skips,jm_timeout)"), (page) => page.totalHits >= 7, "the executions searchable");
    await eventually(() => apiOk<{ totalHits: number }>("GET", "/api/tasks/search?freeText=*"), (page) => page.totalHits > 0, "the tasks searchable");
    const read: Array<[string, string, string]> = [];
    const ids = [main, child, terminated, failed, skipped, timedOut];
    for (const id of ids) read.push(["Workflow", `GET /workflow/${id}`, `/api/workflow/${id}?includeTasks=true`]);
    for (const id of ids) read.push(["WorkflowStatus", `GET /workflow/${id}/status`, `/api/workflow/${id}/status?includeOutput=true&includeVariables=true`]);
    read.push(["SearchResult<WorkflowSummary>", "GET /workflow/search", "/api/workflow/search?start=0&size=50&freeText=*"]);
    read.push(["SearchResult<Workflow>", "GET /workflow/search-v2", "/api/workflow/search-v2?start=0&size=50&freeText=*"]);
    read.push(["SearchResult<TaskSummary>", "GET /tasks/search", "/api/tasks/search?start=0&size=50&freeText=*"]);
    read.push(["SearchResult<Task>", "GET /tasks/search-v2", "/api/tasks/search-v2?start=0&size=50&freeText=*"]);
    read.push(["Task", "GET /tasks/{id}", `/api/tasks/${first.taskId}`]);
    read.push(["TaskDef", "GET /metadata/taskdefs/{name}", `/api/metadata/taskdefs/${worker}`]);
    read.push(["WorkflowDef", "GET /metadata/workflow/{name}", "/api/metadata/workflow/jm_main"]);
    const lists: Array<[string, string, string]> = [
      ["TaskExecLog", "GET /tasks/{id}/log", `/api/tasks/${first.taskId}/log`],
      ["PollData", "GET /tasks/queue/polldata", `/api/tasks/queue/polldata?taskType=${worker}`],
      ["PollData", "GET /tasks/queue/polldata/all", "/api/tasks/queue/polldata/all"],
      ["Workflow", "GET /workflow/{name}/correlated/{id}", "/api/workflow/jm_main/correlated/jm-c1?includeClosed=true&includeTasks=true"],
      ["TaskDef", "GET /metadata/taskdefs", "/api/metadata/taskdefs"],
      ["WorkflowDef", "GET /metadata/workflow", "/api/metadata/workflow"],
      ["WorkflowDef", "GET /metadata/workflow/latest-versions", "/api/metadata/workflow/latest-versions"],
      ["EventHandler", "GET /event", "/api/event"],
      ["WorkflowSchedule", "GET /scheduler/schedules", "/api/scheduler/schedules"],
      ["ConductorUser", "GET /users", "/api/users"],
      ["Group", "GET /groups", "/api/groups"],
      ["ConductorApplication", "GET /applications", "/api/applications"],
      ["TagObject", "GET /metadata/workflow/{name}/tags", "/api/metadata/workflow/jm_main/tags"],
      ["TagObject", "GET /metadata/tags", "/api/metadata/tags"],
      ["WebhookConfig", "GET /metadata/webhook", "/api/metadata/webhook"],
      ["SecretWithTags", "GET /secrets-v2", "/api/secrets-v2"],
      ["ConductorUser", "GET /groups/{id}/users", "/api/groups/jm_group/users"],
    ];
    read.push(["GrantedAccessResponse", "GET /users/{id}/permissions", "/api/users/jm_user/permissions"]);
    read.push(["GrantedAccessResponse", "GET /groups/{id}/permissions", "/api/groups/jm_group/permissions"]);
    read.push(["WebhookConfig", "GET /metadata/webhook/{id}", `/api/metadata/webhook/${String(hook["id"])}`]);
    read.push(["WorkflowSchedule", "GET /scheduler/schedules/{name}", "/api/scheduler/schedules/jm_schedule"]);
    read.push(["SearchResult<WorkflowScheduleExecutionModel>", "GET /scheduler/search/executions", "/api/scheduler/search/executions?start=0&size=10&freeText=*"]);
    read.push(["ConductorUser", "GET /users/{id}", "/api/users/jm_user"]);
    read.push(["ConductorUser", "GET /token/userInfo", "/api/token/userInfo"]);
    read.push(["Group", "GET /groups/{id}", "/api/groups/jm_group"]);
    const mismatches: string[] = [...polled, ...readAsModel("BulkResponse", bulk, "PUT /workflow/bulk/resume")];
    // The C# client's reads of the same answers, each into its own model where it reads that call into one.
    const csharp: string[] = [...readAsModel("Task", first, "GET /tasks/poll/batch", NEWTONSOFT), ...readAsModel("BulkResponse", bulk, "PUT /workflow/bulk/resume", NEWTONSOFT)];
    const readAsCsharp = (model: string, call: string, answer: unknown, list = false): void => {
      const csModel = csharpModel(model, call);
      if (csModel !== undefined) csharp.push(...(list ? readAs({ list: { model: csModel } }, answer, call, NEWTONSOFT) : readAsModel(csModel, answer, call, NEWTONSOFT)));
    };
    answers.push(["WebhookConfig", "POST /metadata/webhook", hook]);
    const versions = await apiOk("GET", "/api/metadata/workflow/names-and-versions");
    mismatches.push(...readAs({ map: { list: { model: "WorkflowDefSummary" } } }, versions, "GET /metadata/workflow/names-and-versions"));
    mismatches.push(...readAs({ map: { list: { model: "Subject" } } }, await apiOk("GET", "/api/auth/authorization/WORKFLOW_DEF/jm_main"), "GET /auth/authorization/{type}/{id}"));
    for (const [model, call, answer] of answers) {
      mismatches.push(...readAsModel(model, answer, call));
      readAsCsharp(model, call, answer);
    }
    for (const [model, call, path] of read) {
      const answer = await apiOk("GET", path);
      mismatches.push(...readAsModel(model, answer, call));
      readAsCsharp(model, call, answer);
    }
    const empty: string[] = [];
    for (const [model, call, path] of lists) {
      const items = await apiOk<unknown[]>("GET", path);
      if (items.length === 0) empty.push(call);
      mismatches.push(...readAs({ list: { model } }, items, call));
      readAsCsharp(model, call, items, true);
    }
    // The C# client's own: WorkflowResourceApi.GetExecutionStatusTaskList.
    csharp.push(...readAsModel("TaskListSearchResultSummary", await apiOk("GET", `/api/workflow/${main}/tasks?start=0&count=15`), "GET /workflow/{id}/tasks", NEWTONSOFT));
    expect(mismatches).toEqual([]);
    expect(csharp).toEqual([]);
    // Nothing passed for want of content.
    expect(empty).toEqual([]);

    // Each state was reached, and is in what was read.
    const statuses = await Promise.all(ids.map(async (id) => (await getWorkflow(id)).status));
    expect(statuses).toEqual(["PAUSED", "COMPLETED", "TERMINATED", "FAILED", "RUNNING", "TIMED_OUT"]);
    const taskStatuses = new Set((await Promise.all(ids.map(getWorkflow))).flatMap((workflow) => workflow.tasks.map((task) => task.status)));
    expect([...taskStatuses].sort()).toEqual(["CANCELED", "COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED", "FAILED_WITH_TERMINAL_ERROR", "IN_PROGRESS", "SKIPPED"]);
  });

  it("refuses a SUB_WORKFLOW's workflowDefinition text that is not a whole ${...} expression, which the Java client's SubWorkflowParams throws on", async () => {
    await register({ name: "jm_inline_child", ownerEmail: "jm@example.com", tasks: [waitTask("c")] });
    const parent = (name: string, workflowDefinition: string) => ({
      name,
      ownerEmail: "jm@example.com",
      tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "jm_inline_child", workflowDefinition } }],
    });
    const message = (text: string) => `workflowDefinition must be an object (the child's workflow definition), or an expression giving one: text that starts with \${ and ends with }, nothing around it, but received the string ${JSON.stringify(text)}`;
    for (const [index, text] of [" ${workflow.input.def}", "${workflow.input.def} ", "child: ${workflow.input.def}"].entries()) {
      // What the client would throw reading the definition back, had it been kept.
      expect(readAsModel("WorkflowDef", parent("x", text))).toEqual(["WorkflowDef.tasks[0].subWorkflowParam.workflowDefinition: IllegalArgumentException: workflowDefinition is a string, but not a valid DSL string"]);
      const response = await api("POST", "/api/metadata/workflow", parent(`jm_inline_refused${index}`, text));
      const body = (await response.json()) as { validationErrors?: Array<{ path: string; message: string }> };
      expect({ status: response.status, errors: body.validationErrors }).toEqual({ status: 400, errors: [{ path: "tasks[0].subWorkflowParam.workflowDefinition", message: message(text) }] });
      expect((await api("GET", `/api/metadata/workflow/jm_inline_refused${index}`)).status).toBe(404);
    }
    // The whole expression is kept, and read back as the client reads it.
    await register(parent("jm_inline_kept", "${workflow.input.def}"));
    expect(readAsModel("WorkflowDef", await apiOk("GET", "/api/metadata/workflow/jm_inline_kept"))).toEqual([]);
  });
});

/*
 * The C# client (conductor-oss/csharp-sdk, formerly conductor-sdk/conductor-csharp): Conductor/Api/*ResourceApi.cs as
 * Conductor/Client/ApiClient.cs sends and reads them (RestSharp, Newtonsoft.Json). A query value is
 * ParameterToString's: Convert.ToString, so a bool is `True`/`False`, an enum its C# member name (IN_PROGRESS is
 * `INPROGRESS`), a model its ToString() (SkipTaskFromWorkflow sends its SkipTaskRequest so), a list joined with commas
 * unless the parameter is `multi` (Size's taskType repeats); each escaped as Uri.EscapeDataString escapes it. A body is
 * JsonConvert.SerializeObject's: a string is written as a JSON string (Log's line), a model without its null fields,
 * StartWorkflowRequest with `"idempotencyStrategy": "FAIL"` always (a non-nullable enum, EmitDefaultValue = true). A
 * call without a body sends neither a body nor a Content-Type. An unreplaced path placeholder is sent as it is
 * (JumpToTask names taskReferenceName in the query, so `{taskReferenceName}` stays in the path, escaped). The answer is
 * read by ApiClient.Deserialize: a `string` result is the body as it is (Convert.ChangeType), so a JSON-quoted id would
 * reach the caller with its quotes; a void call is read as `Object` through JsonConvert, so a body that is not JSON
 * fails it; a model as csharp-models.ts says.
 */

/** What the C# client reads an answer into: a model type (checked), the body as a string, or an Object (void calls). */
type CsResult = { type: JavaType } | "string" | "none";

/** [C# method(s), HTTP method, path after /api, body (a string is JSON-serialized, as JsonConvert writes it), result]. */
type CsCall = readonly [string, string, string, unknown, CsResult];

const CS_TASK = "census_cs_work";
const CS_FLOW = "census_cs_flow";
const CS_QUICK = "census_cs_quick";
const CS_TAG = { key: "team", type: "METADATA", value: "census-cs" };
const csModel = (model: string): CsResult => ({ type: { model } });
const csList = (model: string): CsResult => ({ type: { list: { model } } });
const csDefinition: JsonObject = {
  name: CS_FLOW, version: 1, ownerEmail: "census@example.com", schemaVersion: 2, timeoutSeconds: 0, timeoutPolicy: "ALERT_ONLY",
  // The DSL's WorkflowTask sets workflowTaskType beside type.
  tasks: [{ name: CS_TASK, taskReferenceName: "work", type: "SIMPLE", workflowTaskType: "SIMPLE", inputParameters: {} }, { name: "hold", taskReferenceName: "hold", type: "WAIT" }],
};
const csQuick: JsonObject = { name: CS_QUICK, version: 1, ownerEmail: "census@example.com", timeoutSeconds: 0, tasks: [{ name: "note", taskReferenceName: "note", type: "SET_VARIABLE", inputParameters: { done: true } }] };
/** StartWorkflowRequest as JsonConvert writes it: idempotencyStrategy always, null fields left out. */
const csStart = { idempotencyStrategy: "FAIL", correlationId: "census-cs-c1", input: { order: 1 }, name: CS_FLOW, version: 1 };
/** SkipTaskRequest.ToString(), the query value SkipTaskFromWorkflow sends in place of a body. */
const CS_SKIP_REQUEST = encodeURIComponent("class SkipTaskRequest {\n  TaskInput: \n  TaskOutput: \n}\n");

/** The C# client's calls on one running workflow (`wf`), a second one the calls end (`other`), and `wf`'s polled task. */
function csCalls(wf: string, other: string, taskId: string): CsCall[] {
  return [
    // WorkflowResourceApi
    ["StartWorkflow(StartWorkflowRequest)", "POST", "/workflow", csStart, "string"],
    ["StartWorkflow(name, input, ...)", "POST", `/workflow/${CS_FLOW}?version=1&correlationId=census-cs-c1&priority=0`, { order: 2 }, "string"],
    ["GetExecutionStatus / GetWorkflow", "GET", `/workflow/${wf}?includeTasks=True&summarize=False`, undefined, csModel("Workflow")],
    ["GetExecutionStatusTaskList", "GET", `/workflow/${wf}/tasks?start=0&count=15&status=IN_PROGRESS`, undefined, csModel("TaskListSearchResultSummary")],
    ["GetWorkflowStatusSummary", "GET", `/workflow/${wf}/status?includeOutput=True&includeVariables=True`, undefined, csModel("WorkflowStatus")],
    ["GetWorkflows (list body)", "POST", `/workflow/${CS_FLOW}/correlated?includeClosed=False&includeTasks=True`, ["census-cs-c1"], { type: { map: { list: { model: "Workflow" } } } }],
    ["GetWorkflows (CorrelationIdsSearchRequest)", "POST", "/workflow/correlated/batch?includeClosed=True&includeTasks=False", { correlationIds: ["census-cs-c1"], workflowNames: [CS_FLOW] }, { type: { map: { list: { model: "Workflow" } } } }],
    ["GetWorkflows (name, correlationId)", "GET", `/workflow/${CS_FLOW}/correlated/census-cs-c1?includeClosed=True&includeTasks=True`, undefined, csList("Workflow")],
    ["GetRunningWorkflow", "GET", `/workflow/running/${CS_FLOW}?version=1&startTime=0&endTime=4102444800000`, undefined, { type: { list: "String" } }],
    ["Decide", "PUT", `/workflow/decide/${wf}`, undefined, "none"],
    ["ResetWorkflow", "POST", `/workflow/${wf}/resetcallbacks`, undefined, "none"],
    ["UpdateWorkflowVariables", "POST", `/workflow/${wf}/variables`, { census: true }, csModel("Workflow")],
    ["PauseWorkflow", "PUT", `/workflow/${other}/pause`, undefined, "none"],
    ["ResumeWorkflow", "PUT", `/workflow/${other}/resume`, undefined, "none"],
    ["SkipTaskFromWorkflow (its request in the query, no body)", "PUT", `/workflow/${other}/skiptask/hold?skipTaskRequest=${CS_SKIP_REQUEST}`, undefined, "none"],
    ["JumpToTask ({taskReferenceName} left in the path)", "POST", `/workflow/${wf}/jump/%7BtaskReferenceName%7D?taskReferenceName=work`, {}, "none"],
    // UpdateWorkflow joins its waitUntilTaskRefs with ", ".
    ["UpdateWorkflow", "POST", `/workflow/${wf}/state?requestId=census-cs-r1&waitUntilTaskRef=${encodeURIComponent("work, hold")}&waitForSeconds=0`, { variables: { step: 1 } }, csModel("WorkflowRun")],
    ["ExecuteWorkflow", "POST", `/workflow/execute/${CS_QUICK}/1?requestId=census-cs-e1&waitUntilTaskRef=note`, { idempotencyStrategy: "FAIL", input: {}, name: CS_QUICK, version: 1 }, csModel("WorkflowRun")],
    ["TestWorkflow", "POST", "/workflow/test", { name: CS_QUICK, version: 1, input: {}, taskRefToMockOutput: {}, workflowDef: csQuick }, csModel("Workflow")],
    ["Search", "GET", "/workflow/search?start=0&size=10&sort=startTime%3ADESC&freeText=%2A&query=&skipCache=False", undefined, csModel("ScrollableSearchResultWorkflowSummary")],
    ["SearchV2", "GET", "/workflow/search-v2?start=0&size=10&freeText=%2A", undefined, csModel("SearchResult<Workflow>")],
    ["SearchWorkflowsByTasks", "GET", "/workflow/search-by-tasks?start=0&size=10&freeText=%2A", undefined, csModel("SearchResult<WorkflowSummary>")],
    ["SearchWorkflowsByTasksV2", "GET", "/workflow/search-by-tasks-v2?start=0&size=10&freeText=%2A", undefined, csModel("SearchResult<Workflow>")],
    // WorkflowBulkResourceApi
    ["PauseWorkflow (bulk)", "PUT", "/workflow/bulk/pause", [other], csModel("BulkResponse")],
    ["ResumeWorkflow (bulk)", "PUT", "/workflow/bulk/resume", [other], csModel("BulkResponse")],
    ["Restart (bulk)", "POST", "/workflow/bulk/restart?useLatestDefinitions=False", [other], csModel("BulkResponse")],
    ["Retry (bulk)", "POST", "/workflow/bulk/retry", [other], csModel("BulkResponse")],
    ["Terminate (bulk)", "POST", "/workflow/bulk/terminate?reason=census%20cs&triggerFailureWorkflow=False", [other], csModel("BulkResponse")],
    ["Retry", "POST", `/workflow/${other}/retry?resumeSubworkflowTasks=False`, undefined, "none"],
    ["Terminate", "DELETE", `/workflow/${other}?reason=census%20cs&triggerFailureWorkflow=False`, undefined, "none"],
    ["Rerun", "POST", `/workflow/${other}/rerun`, { reRunFromWorkflowId: other }, "string"],
    ["Terminate (the rerun)", "DELETE", `/workflow/${other}?reason=census%20cs`, undefined, "none"],
    ["Restart", "POST", `/workflow/${other}/restart?useLatestDefinitions=False`, undefined, "none"],
    ["Delete", "DELETE", `/workflow/${other}/remove?archiveWorkflow=True`, undefined, "none"],
    // TaskResourceApi (the worker's WorkflowTaskHttpClient polls in batches and updates with a TaskResult)
    ["BatchPoll", "GET", `/tasks/poll/batch/${CS_TASK}?workerid=census-cs-host&count=1&timeout=100`, undefined, csList("Task")],
    ["Poll", "GET", `/tasks/poll/${CS_TASK}?workerid=census-cs-host`, undefined, csModel("Task")],
    ["Log (a JSON string)", "POST", `/tasks/${taskId}/log`, "a log line", "none"],
    ["GetTaskLogs", "GET", `/tasks/${taskId}/log`, undefined, csList("TaskExecLog")],
    ["GetTask", "GET", `/tasks/${taskId}`, undefined, csModel("Task")],
    ["GetPollData", "GET", `/tasks/queue/polldata?taskType=${CS_TASK}`, undefined, csList("PollData")],
    ["All", "GET", "/tasks/queue/all", undefined, { type: { map: "Long" } }],
    ["AllVerbose", "GET", "/tasks/queue/all/verbose", undefined, { type: { map: { map: { map: "Long" } } } }],
    ["Size (taskType multi)", "GET", `/tasks/queue/sizes?taskType=${CS_TASK}&taskType=census_cs_other`, undefined, { type: { map: "Integer" } }],
    ["Search (tasks)", "GET", "/tasks/search?start=0&size=5&freeText=%2A", undefined, csModel("SearchResult<TaskSummary>")],
    ["SearchV2 (tasks)", "GET", "/tasks/search-v2?start=0&size=5&freeText=%2A", undefined, csModel("SearchResult<Task>")],
    ["UpdateTask(TaskResult)", "POST", "/tasks", { callbackAfterSeconds: 0, outputData: { step: 1 }, status: "IN_PROGRESS", taskId, workerId: "census-cs-host", workflowInstanceId: wf }, "string"],
    ["UpdateTask (by reference name)", "POST", `/tasks/${wf}/work/IN_PROGRESS?workerid=census-cs-host`, { step: 2 }, "string"],
    ["UpdateTaskSync", "POST", `/tasks/${wf}/work/COMPLETED/sync?workerid=census-cs-host`, { step: 3 }, csModel("Workflow")],
    // MetadataResourceApi, TagsApi, EventResourceApi
    ["Create", "POST", "/metadata/workflow?overwrite=True", { ...csDefinition, name: "census_cs_flow2" }, "none"],
    ["UpdateWorkflowDefinitions", "PUT", "/metadata/workflow?overwrite=True", [{ ...csDefinition, name: "census_cs_flow2" }], "none"],
    ["Get", "GET", `/metadata/workflow/${CS_FLOW}?version=1&metadata=False`, undefined, csModel("WorkflowDef")],
    ["UnregisterWorkflowDef", "DELETE", "/metadata/workflow/census_cs_flow2/1", undefined, "none"],
    ["RegisterTaskDef", "POST", "/metadata/taskdefs", [{ name: "census_cs_gone", ownerEmail: "census@example.com", retryCount: 0, timeoutSeconds: 0, responseTimeoutSeconds: 60 }], "none"],
    ["UpdateTaskDef", "PUT", "/metadata/taskdefs", { name: "census_cs_gone", ownerEmail: "census@example.com", retryCount: 1, timeoutSeconds: 0, responseTimeoutSeconds: 60 }, "none"],
    ["GetTaskDef", "GET", `/metadata/taskdefs/${CS_TASK}?metadata=False`, undefined, csModel("TaskDef")],
    ["GetTaskDefs", "GET", "/metadata/taskdefs?access=READ&metadata=False", undefined, csList("TaskDef")],
    ["UnregisterTaskDef", "DELETE", "/metadata/taskdefs/census_cs_gone", undefined, "none"],
    ["AddWorkflowTag", "POST", `/metadata/workflow/${CS_FLOW}/tags`, CS_TAG, "none"],
    ["GetWorkflowTags", "GET", `/metadata/workflow/${CS_FLOW}/tags`, undefined, csList("TagObject")],
    // Its own definitions only: the C# WorkflowDef cannot read another test's SUB_WORKFLOW whose workflowDefinition is
    // a "${...}" expression (SubWorkflowParams.workflowDefinition is a WorkflowDef), from this service or Conductor.
    ["GetAllWorkflows", "GET", "/metadata/workflow?access=READ&metadata=False&tagKey=team&tagValue=census-cs&short=False", undefined, csList("WorkflowDef")],
    ["AddEventHandler", "POST", "/event", { actions: [{ action: "start_workflow", start_workflow: { name: CS_QUICK } }], active: true, event: `conductor:${CS_FLOW}:done`, name: "census_cs_handler" }, "none"],
    ["UpdateEventHandler", "PUT", "/event", { actions: [{ action: "start_workflow", start_workflow: { name: CS_QUICK } }], active: false, event: `conductor:${CS_FLOW}:done`, name: "census_cs_handler" }, "none"],
    ["GetEventHandlers", "GET", "/event", undefined, csList("EventHandler")],
    ["GetEventHandlersForEvent", "GET", `/event/conductor:${CS_FLOW}:done?activeOnly=False`, undefined, csList("EventHandler")],
    ["RemoveEventHandlerStatus", "DELETE", "/event/census_cs_handler", undefined, "none"],
    // SecretResourceApi: its results Objects (its value a JSON string, as JsonConvert writes a string)
    ["PutSecret", "PUT", "/secrets/census_cs_key", "a secret value", "none"],
    ["SecretExists", "GET", "/secrets/census_cs_key/exists", undefined, "none"],
    ["ListAllSecretNames", "GET", "/secrets", undefined, "none"],
    ["PutTagForSecret", "PUT", "/secrets/census_cs_key/tags", [tag], "none"],
    ["DeleteTagForSecret", "DELETE", "/secrets/census_cs_key/tags", [tag], "none"],
    ["DeleteSecret", "DELETE", "/secrets/census_cs_key", undefined, "none"],
    // SchedulerResourceApi, UserResourceApi, GroupResourceApi
    ["SaveSchedule", "POST", "/scheduler/schedules", { cronExpression: "0 0 * * * ?", name: "census_cs_schedule", paused: true, startWorkflowRequest: { idempotencyStrategy: "FAIL", input: {}, name: CS_QUICK, version: 1 } }, "none"],
    ["GetAllSchedules", "GET", `/scheduler/schedules?workflowName=${CS_QUICK}`, undefined, csList("WorkflowSchedule")],
    ["DeleteSchedule", "DELETE", "/scheduler/schedules/census_cs_schedule", undefined, "none"],
    ["UpsertUser", "PUT", "/users/census_cs_user", { groups: [], name: "Census", roles: ["USER"] }, "none"],
    ["ListUsers", "GET", "/users?apps=False", undefined, csList("ConductorUser")],
    ["UpsertGroup", "PUT", "/groups/census_cs_group", { defaultAccess: { WORKFLOW_DEF: ["READ"] }, description: "census", roles: ["USER"] }, "none"],
    ["ListGroups", "GET", "/groups", undefined, csList("Group")],
  ];
}

/** Sends `call` as the C# client's ApiClient does; answers the status and the body's text. */
async function sendAsCsharp([, method, path, body, result]: CsCall): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { "x-api-key": ADMIN_KEY, accept: result === "string" ? "text/plain" : "*/*" };
  let payload: string | undefined;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    headers["content-type"] = "application/json";
  }
  const response = await SELF.fetch(`https://conductor.test/api${path}`, { method, headers, body: payload });
  return { status: response.status, text: await response.text() };
}

/** What goes wrong reading a 2xx `answer` as ApiClient.Deserialize reads it into `result` (empty when nothing does). */
function csReadProblems(text: string, result: CsResult): string[] {
  if (result === "string") {
    // The body as it is: a JSON-quoted or JSON-structured answer reaches the caller as that text, an empty one as no id.
    if (text.trim() === "") return ["a string result answered empty: the caller gets no id"];
    return /^\s*["{[]/.test(text) ? [`a string result answered as JSON (${text.slice(0, 60)}): the caller gets the quotes and braces`] : [];
  }
  if (text.trim() === "") return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [`JsonConvert: not JSON (${JSON.stringify(text.slice(0, 60))})`];
  }
  return result === "none" ? [] : readAs(result.type, value, "answer", NEWTONSOFT);
}

describe("the C# client's calls", () => {
  it("each is served, and its answer reads into the C# client's model", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: CS_TASK, ownerEmail: "census@example.com", retryCount: 0, timeoutSeconds: 0, responseTimeoutSeconds: 60 }]);
    await register(csDefinition);
    await register(csQuick);
    const wf = await startWorkflow(CS_FLOW, {}, "?correlationId=census-cs-c1");
    const polled = await eventually(async () => (await api("GET", `/api/tasks/poll/${CS_TASK}?workerid=census-cs-host`)).text(), (text) => text.length > 0, "a task to poll");
    const taskId = (JSON.parse(polled) as { taskId: string }).taskId;
    const other = await startWorkflow(CS_FLOW, {});
    const problems: string[] = [];
    const empty: string[] = [];
    for (const call of csCalls(wf, other, taskId)) {
      const answer = await sendAsCsharp(call);
      // Each is made where it succeeds: a refusal is a C# user's error too.
      if (answer.status >= 400 || answer.text.includes("No route")) problems.push(`${call[0]}: ${call[1]} ${call[2]} → ${answer.status} ${answer.text.slice(0, 200)}`);
      else problems.push(...csReadProblems(answer.text, call[4]).map((problem) => `${call[0]}: ${problem}`));
      if (typeof call[4] === "object" && answer.status < 300 && /^\s*(|\[\]|\{\}|null)\s*$/.test(answer.text)) empty.push(call[0]);
    }
    expect(problems).toEqual([]);
    // Nothing passed for want of content (a poll that found no task would leave the Task unchecked).
    expect(empty).toEqual([]);
  });

  it("UpdateTaskSync's status as the client spells it (INPROGRESS, FAILEDWITHTERMINALERROR) is refused, as Conductor refuses it, and changes nothing", async () => {
    // TaskResourceApi.UpdateTaskSync puts its TaskResult.StatusEnum in the path through Convert.ToString: the C#
    // member name, not the EnumMember value. Conductor's TaskResult.Status.valueOf refuses it too (a 400); COMPLETED
    // and FAILED, spelled alike in both, pass (above).
    await register({ name: "census_cs_sync", ownerEmail: "census@example.com", tasks: [waitTask("gate")] });
    const id = await startWorkflow("census_cs_sync");
    await waitFor(id, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    for (const status of ["INPROGRESS", "FAILEDWITHTERMINALERROR"]) {
      const answer = await sendAsCsharp(["UpdateTaskSync", "POST", `/tasks/${id}/gate/${status}/sync?workerid=census-cs-host`, { step: 1 }, csModel("Workflow")]);
      const body = JSON.parse(answer.text) as { error?: string; message?: string };
      expect({ status: answer.status, error: body.error }).toEqual({ status: 400, error: "VALIDATION_ERROR" });
      expect(body.message).toContain("COMPLETED, FAILED, FAILED_WITH_TERMINAL_ERROR, IN_PROGRESS");
    }
    const after = await getWorkflow(id);
    expect({ status: after.status, task: after.tasks[0]?.status, output: after.tasks[0]?.outputData }).toEqual({ status: "RUNNING", task: "IN_PROGRESS", output: {} });
  });

  it("the checker reads as Newtonsoft.Json does where it is stricter than Jackson", () => {
    // A fraction into an int?, a null into the non-nullable IdempotencyStrategy, a constant it lacks, an inline
    // definition given as an expression (SubWorkflowParams.workflowDefinition is a WorkflowDef): each fails the call.
    expect(readAsModel("Task", { retryCount: 1.5 }, "Task")).toEqual([]);
    expect(readAsModel("Task", { retryCount: 1.5 }, "Task", NEWTONSOFT)).toEqual(["Task.retryCount: Input string '1.5' is not a valid integer (int)"]);
    expect(readAsModel("StartWorkflowRequest", { name: "x", idempotencyStrategy: null }, "S", NEWTONSOFT)).toEqual(["S.idempotencyStrategy: Error converting value {null} to a non-nullable type (Newtonsoft.Json)"]);
    expect(readAsModel("StartWorkflowRequest", { name: "x", idempotencyStrategy: "FAIL_ON_RUNNING" }, "S", NEWTONSOFT)).toHaveLength(1);
    expect(readAsModel("WorkflowTask", { subWorkflowParam: { name: "c", workflowDefinition: "${workflow.input.def}" } }, "T", NEWTONSOFT)).toHaveLength(1);
    // What it skips: unknown fields, nulls into nullable ones, numbers as text, a number into a string.
    expect(readAsModel("Task", { retryCount: "2", endTime: null, taskId: 7, unknown: { a: 1 } }, "Task", NEWTONSOFT)).toEqual([]);
    expect(csReadProblems('"abc-123"', "string")).toHaveLength(1);
    expect(csReadProblems("abc-123", "string")).toEqual([]);
    expect(csReadProblems("abc-123", "none")).toHaveLength(1);
    expect(csReadProblems("", "none")).toEqual([]);
  });
});

/*
 * The Go client (conductor-sdk/conductor-go and conductor-oss/go-sdk: sdk/client's *ResourceApiService, the worker's
 * TaskRunner, the workflow executor and DSL). Its APIClient sends a body json-encoded by json.Encoder (a trailing
 * newline) labelled `application/json`, a string body raw (a log line), and a call without a body (nil) with neither a
 * body nor a Content-Type; every call asks `Accept: application/json`. Its query parameters are url.Values-encoded
 * (`+` for a space, sorted) and lower-case booleans. It reads a 2xx answer's body by its Content-Type alone: JSON
 * through encoding/json, `text/plain` set into the result as a string (a reflect SetString, which panics when the
 * result is a struct, a slice or a map), anything else "undefined response type". encoding/json is strict: a string
 * into an int32 field, a fraction into an integer, an object into a slice fails the whole call.
 */

/** A Go type as encoding/json decodes into it (a null is always accepted: it leaves the zero value). */
type GoType = "string" | "bool" | "int32" | "int64" | "any" | "object" | { slice: GoType } | { map: GoType } | { struct: () => Record<string, GoType> };

const goSlice = (of: GoType): GoType => ({ slice: of });
const goMap = (of: GoType): GoType => ({ map: of });
const goStruct = (fields: () => Record<string, GoType>): GoType => ({ struct: fields });

/** The Go SDK's model structs (sdk/model), the fields it declares with the types it declares them with. */
const GO_TASK_DEF = goStruct(() => ({
  backoffScaleFactor: "int32", concurrentExecLimit: "int32", createTime: "int64", createdBy: "string", description: "string", executionNameSpace: "string",
  inputKeys: goSlice("string"), inputTemplate: "object", isolationGroupId: "string", name: "string", outputKeys: goSlice("string"), ownerApp: "string",
  ownerEmail: "string", pollTimeoutSeconds: "int32", rateLimitFrequencyInSeconds: "int32", rateLimitPerFrequency: "int32", responseTimeoutSeconds: "int64",
  retryCount: "int32", retryDelaySeconds: "int32", retryLogic: "string", timeoutPolicy: "string", timeoutSeconds: "int64", updateTime: "int64", updatedBy: "string",
}));
const GO_WORKFLOW_TASK: GoType = goStruct(() => ({
  name: "string", taskReferenceName: "string", description: "string", inputParameters: "object", type: "string", dynamicTaskNameParam: "string",
  caseValueParam: "string", caseExpression: "string", scriptExpression: "string", decisionCases: goMap(goSlice(GO_WORKFLOW_TASK)),
  dynamicForkJoinTasksParam: "string", dynamicForkTasksParam: "string", dynamicForkTasksInputParamName: "string", defaultCase: goSlice(GO_WORKFLOW_TASK),
  forkTasks: goSlice(goSlice(GO_WORKFLOW_TASK)), startDelay: "int32", joinOn: goSlice("string"), sink: "string", optional: "bool", taskDefinition: GO_TASK_DEF,
  subWorkflowParam: goStruct(() => ({ name: "string", version: "int32", taskToDomain: goMap("string"), workflowDefinition: "any", idempotencyKey: "string", idempotencyStrategy: "string", priority: "any" })),
  rateLimited: "bool", defaultExclusiveJoinTask: goSlice("string"), asyncComplete: "bool", loopCondition: "string", loopOver: goSlice(GO_WORKFLOW_TASK),
  retryCount: "int32", evaluatorType: "string", expression: "string", workflowTaskType: "string", cacheConfig: goStruct(() => ({ key: "string", ttlInSecond: "int64" })),
}));
const GO_TAG = goStruct(() => ({ key: "string", type: "string", value: "string" }));
const GO_WORKFLOW_DEF = goStruct(() => ({
  ownerApp: "string", createTime: "int64", updateTime: "int64", createdBy: "string", updatedBy: "string", name: "string", description: "string", version: "int32",
  tasks: goSlice(GO_WORKFLOW_TASK), inputParameters: goSlice("string"), outputParameters: "object", failureWorkflow: "string", schemaVersion: "int32",
  restartable: "bool", workflowStatusListenerEnabled: "bool", ownerEmail: "string", timeoutPolicy: "string", timeoutSeconds: "int64", variables: "object",
  metadata: "object", inputTemplate: "object", tags: goSlice(GO_TAG), overwriteTags: "bool", rateLimitConfig: goStruct(() => ({ rateLimitKey: "string", concurrentExecLimit: "int32" })),
}));
const GO_TASK = goStruct(() => ({
  taskType: "string", status: "string", inputData: "object", referenceTaskName: "string", retryCount: "int32", seq: "int32", correlationId: "string",
  pollCount: "int32", taskDefName: "string", scheduledTime: "int64", startTime: "int64", endTime: "int64", updateTime: "int64", startDelayInSeconds: "int32",
  retriedTaskId: "string", retried: "bool", executed: "bool", callbackFromWorker: "bool", responseTimeoutSeconds: "int64", workflowInstanceId: "string",
  workflowType: "string", taskId: "string", reasonForIncompletion: "string", callbackAfterSeconds: "int64", workerId: "string", outputData: "object",
  workflowTask: GO_WORKFLOW_TASK, domain: "string", rateLimitPerFrequency: "int32", rateLimitFrequencyInSeconds: "int32", externalInputPayloadStoragePath: "string",
  externalOutputPayloadStoragePath: "string", workflowPriority: "int32", executionNameSpace: "string", isolationGroupId: "string", iteration: "int32",
  subWorkflowId: "string", subworkflowChanged: "bool", firstStartTime: "int64", parentTaskId: "string", queueWaitTime: "int64", taskDefinition: GO_TASK_DEF, loopOverTask: "bool",
}));
const GO_WORKFLOW: GoType = goStruct(() => ({
  ownerApp: "string", createTime: "int64", updateTime: "int64", createdBy: "string", updatedBy: "string", status: "string", endTime: "int64", workflowId: "string",
  parentWorkflowId: "string", parentWorkflowTaskId: "string", tasks: goSlice(GO_TASK), input: "object", output: "object", correlationId: "string",
  reRunFromWorkflowId: "string", reasonForIncompletion: "string", event: "string", taskToDomain: goMap("string"), failedReferenceTaskNames: goSlice("string"),
  workflowDefinition: GO_WORKFLOW_DEF, externalInputPayloadStoragePath: "string", externalOutputPayloadStoragePath: "string", priority: "int32", variables: "object",
  lastRetriedTime: "int64", startTime: "int64", workflowName: "string", workflowVersion: "int32", failedTaskNames: goSlice("string"), history: goSlice(GO_WORKFLOW),
  idempotencyKey: "string", rateLimitKey: "string", rateLimited: "bool",
}));
const GO_WORKFLOW_SUMMARY = goStruct(() => ({
  correlationId: "string", createdBy: "string", endTime: "string", event: "string", executionTime: "int64", externalInputPayloadStoragePath: "string",
  externalOutputPayloadStoragePath: "string", failedReferenceTaskNames: "string", input: "string", inputSize: "int64", output: "string", outputSize: "int64",
  priority: "int32", reasonForIncompletion: "string", startTime: "string", status: "string", updateTime: "string", version: "int32", workflowId: "string", workflowType: "string",
}));
const GO_TASK_SUMMARY = goStruct(() => ({
  correlationId: "string", endTime: "string", executionTime: "int64", externalInputPayloadStoragePath: "string", externalOutputPayloadStoragePath: "string",
  input: "string", output: "string", queueWaitTime: "int64", reasonForIncompletion: "string", scheduledTime: "string", startTime: "string", status: "string",
  taskDefName: "string", taskId: "string", taskType: "string", updateTime: "string", workflowId: "string", workflowPriority: "int32", workflowType: "string",
}));
const goSearchResult = (of: GoType): GoType => goStruct(() => ({ totalHits: "int64", results: goSlice(of) }));
const GO_POLL_DATA = goStruct(() => ({ domain: "string", lastPollTime: "int64", queueName: "string", workerId: "string" }));
const GO_TASK_LOG = goStruct(() => ({ log: "string", taskId: "string", createdTime: "int64" }));
const GO_BULK_RESPONSE = goStruct(() => ({ bulkErrorResults: goMap("string"), bulkSuccessfulResults: goSlice("string") }));
const GO_WORKFLOW_STATUS = goStruct(() => ({ workflowId: "string", correlationId: "string", output: "object", variables: "object", status: "string" }));
const GO_EVENT_HANDLER = goStruct(() => ({ name: "string", event: "string", condition: "string", actions: goSlice("any"), active: "bool", evaluatorType: "string" }));

const INT_RANGE = { int32: 2 ** 31, int64: 2 ** 63 } as const;

/** What encoding/json reports decoding `value` into `type` at `path`: empty when it decodes. */
function goDecodeErrors(value: unknown, type: GoType, path: string): string[] {
  if (value === null || type === "any") return [];
  const fail = (goType: string) => [`${path}: cannot unmarshal ${JSON.stringify(value)?.slice(0, 60)} into Go value of type ${goType}`];
  if (type === "string") return typeof value === "string" ? [] : fail("string");
  if (type === "bool") return typeof value === "boolean" ? [] : fail("bool");
  if (type === "int32" || type === "int64") {
    const bound = INT_RANGE[type];
    return typeof value === "number" && Number.isInteger(value) && value >= -bound && value < bound ? [] : fail(type);
  }
  const isObject = typeof value === "object" && !Array.isArray(value);
  if (type === "object") return isObject ? [] : fail("map[string]interface {}");
  if ("slice" in type) return Array.isArray(value) ? value.flatMap((item, i) => goDecodeErrors(item, type.slice, `${path}[${i}]`)) : fail("[]…");
  if (!isObject) return fail("map or struct");
  const record = value as Record<string, unknown>;
  if ("map" in type) return Object.entries(record).flatMap(([key, item]) => goDecodeErrors(item, type.map, `${path}.${key}`));
  const fields = type.struct();
  // encoding/json takes a key for the field of that exact name, else for one whose name matches it case-insensitively.
  const fieldOf = (key: string): GoType | undefined =>
    Object.hasOwn(fields, key) ? fields[key] : Object.entries(fields).find(([name]) => name.toLowerCase() === key.toLowerCase())?.[1];
  return Object.entries(record).flatMap(([key, item]) => {
    const field = fieldOf(key);
    return field === undefined ? [] : goDecodeErrors(item, field, `${path}.${key}`);
  });
}

/** What the Go client reads an answer into: a JSON model (checked against its Go type when given), a string, nothing. */
type GoResult = { json: GoType | "unchecked" } | "string" | "none";

/** [Go method(s), HTTP method, path after /api, body (a string is sent raw), what Go reads the answer into]. */
type GoCall = readonly [string, string, string, unknown, GoResult];

const GO_TASK_NAME = "census_go_work";
const GO_FLOW = "census_go_flow";
const GO_QUICK = "census_go_quick";
/** The Go DSL's WorkflowDef as json.Marshal writes it: `tasks`, `timeoutSeconds` and `overwriteTags` always, empty fields left out. */
const goDefinition = {
  name: GO_FLOW, version: 1, schemaVersion: 2, restartable: true, timeoutPolicy: "ALERT_ONLY", timeoutSeconds: 0, overwriteTags: true, ownerEmail: "census@example.com",
  tags: [{ key: "team", type: "METADATA", value: "census" }],
  tasks: [
    { name: GO_TASK_NAME, taskReferenceName: "work", inputParameters: { order: "${workflow.input.order}" }, type: "SIMPLE" },
    { name: "pick", taskReferenceName: "pick", inputParameters: { switchCaseValue: "${workflow.input.route}" }, type: "SWITCH", evaluatorType: "value-param", expression: "switchCaseValue", decisionCases: { sub: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: GO_QUICK, version: 1 } }] } },
    { name: "hold", taskReferenceName: "hold", type: "WAIT" },
  ],
};
/** A definition that completes as it starts: the executes return at once. */
const goQuick = { name: GO_QUICK, version: 1, schemaVersion: 2, restartable: true, timeoutPolicy: "ALERT_ONLY", timeoutSeconds: 0, overwriteTags: true, tasks: [{ name: "note", taskReferenceName: "note", inputParameters: { done: true }, type: "SET_VARIABLE" }] };
/**
 * A definition as conductor-oss/go-sdk's toGeneratedWorkflowDef writes it (every WorkflowTask field it maps through
 * ToPointer written, unset text as "", 0 and false included) for tasks built as model.WorkflowTask literals: the
 * worker task without a Type_ (`"type": ""`, SIMPLE to Go's user), the WAIT with one.
 */
const goMappedTask = (task: Record<string, unknown>) => ({
  description: "", type: "", dynamicTaskNameParam: "", caseValueParam: "", caseExpression: "", scriptExpression: "", evaluatorType: "", expression: "",
  startDelay: 0, dynamicForkJoinTasksParam: "", dynamicForkTasksParam: "", dynamicForkTasksInputParamName: "", optional: false, sink: "", loopCondition: "", ...task,
});
const goMapped = {
  name: "census_go_mapped", version: 1, timeoutSeconds: 0, schemaVersion: 2, restartable: true, timeoutPolicy: "ALERT_ONLY",
  tasks: [goMappedTask({ name: GO_TASK_NAME, taskReferenceName: "work", inputParameters: { order: 1 } }), goMappedTask({ name: "hold", taskReferenceName: "hold", type: "WAIT" })],
};
/** StartWorkflowRequest as Go writes it (version 0 left out: the latest). */
const goStart = { name: GO_FLOW, correlationId: "census-go-c1", input: { order: 1, route: "sub" } };

/** The calls the Go client makes on one running workflow (`wf`), a second one the calls end (`other`), and `wf`'s polled task. */
function goCalls(wf: string, other: string, taskId: string): GoCall[] {
  return [
    // WorkflowResourceApiService / WorkflowExecutor
    ["StartWorkflow", "POST", `/workflow/${GO_FLOW}?correlationId=census-go-c1&priority=0&version=1`, { order: 2 }, "string"],
    ["StartWorkflowWithRequest / ConductorWorkflow.StartWorkflow", "POST", "/workflow", goStart, "string"],
    ["StartWorkflowWithRequest (definition inline)", "POST", "/workflow", { name: "census_go_inline", input: {}, workflowDef: { ...goQuick, name: "census_go_inline" } }, "string"],
    // conductor-oss/go-sdk's toGeneratedWorkflowDef: a WorkflowTask built by hand (no Type_) is written with every unset
    // text field "", the type among them.
    ["StartWorkflowWithRequest (definition inline, go-sdk's mapper)", "POST", "/workflow", { name: "census_go_mapped", input: {}, workflowDef: goMapped }, "string"],
    ["RegisterWorkflowDef (go-sdk's mapper)", "POST", "/metadata/workflow?overwrite=true", goMapped, "none"],
    ["ExecuteWorkflow", "POST", `/workflow/execute/${GO_QUICK}/1?requestId=census-go-e1`, { name: GO_QUICK, input: {} }, { json: GO_WORKFLOW }],
    ["ExecuteWorkflowWithReturnStrategy", "POST", `/workflow/execute/${GO_QUICK}/0?consistency=DURABLE&requestId=census-go-e2&returnStrategy=TARGET_WORKFLOW&waitForSeconds=10`, { name: GO_QUICK, input: {} }, { json: GO_WORKFLOW }],
    ["GetExecutionStatus / GetWorkflow", "GET", `/workflow/${wf}?includeTasks=true`, undefined, { json: GO_WORKFLOW }],
    ["GetWorkflowState", "GET", `/workflow/${wf}/status?includeOutput=true&includeVariables=true`, undefined, { json: GO_WORKFLOW_STATUS }],
    ["GetWorkflows (correlated)", "POST", `/workflow/${GO_FLOW}/correlated?includeClosed=true&includeTasks=true`, ["census-go-c1"], { json: goMap(goSlice(GO_WORKFLOW)) }],
    ["GetWorkflows1 (correlated)", "GET", `/workflow/${GO_FLOW}/correlated/census-go-c1?includeClosed=true&includeTasks=true`, undefined, { json: goSlice(GO_WORKFLOW) }],
    ["GetWorkflowsBatch", "POST", "/workflow/correlated/batch?includeClosed=true&includeTasks=false", { correlationIds: ["census-go-c1"], workflowNames: [GO_FLOW] }, { json: goMap(goSlice(GO_WORKFLOW)) }],
    ["GetRunningWorkflow", "GET", `/workflow/running/${GO_FLOW}?version=1`, undefined, { json: goSlice("string") }],
    ["Search", "GET", "/workflow/search?freeText=%2A&query=workflowType+%3D+census_go_flow&size=10&sort=startTime%3ADESC&start=0", undefined, { json: goSearchResult(GO_WORKFLOW_SUMMARY) }],
    ["SearchV2", "GET", "/workflow/search-v2?freeText=%2A&size=10&start=0", undefined, { json: goSearchResult(GO_WORKFLOW) }],
    ["SearchWorkflowsByTasks", "GET", "/workflow/search-by-tasks?freeText=%2A&size=10&start=0", undefined, { json: goSearchResult(GO_WORKFLOW_SUMMARY) }],
    ["SearchWorkflowsByTasksV2", "GET", "/workflow/search-by-tasks-v2?freeText=%2A&size=10&start=0", undefined, { json: goSearchResult(GO_WORKFLOW) }],
    ["UpdateVariables", "POST", `/workflow/${wf}/variables`, { census: true }, { json: GO_WORKFLOW }],
    ["Decide", "PUT", `/workflow/decide/${wf}`, undefined, "none"],
    ["ResetWorkflow", "POST", `/workflow/${wf}/resetcallbacks`, undefined, "none"],
    ["PauseWorkflow", "PUT", `/workflow/${other}/pause`, undefined, "none"],
    ["ResumeWorkflow", "PUT", `/workflow/${other}/resume`, undefined, "none"],
    ["SkipTaskFromWorkflow", "PUT", `/workflow/${other}/skiptask/hold`, {}, "none"],
    ["TestWorkflow", "POST", "/workflow/test", { name: GO_QUICK, version: 1, input: {}, taskRefToMockOutput: {} }, { json: GO_WORKFLOW }],
    ["PauseWorkflow (bulk)", "PUT", "/workflow/bulk/pause", [other], { json: GO_BULK_RESPONSE }],
    ["ResumeWorkflow (bulk)", "PUT", "/workflow/bulk/resume", [other], { json: GO_BULK_RESPONSE }],
    ["Retry (bulk)", "POST", "/workflow/bulk/retry", [other], { json: GO_BULK_RESPONSE }],
    ["Restart (bulk)", "POST", "/workflow/bulk/restart?useLatestDefinitions=false", [other], { json: GO_BULK_RESPONSE }],
    ["Terminate (bulk)", "POST", "/workflow/bulk/terminate?reason=census+go&triggerFailureWorkflow=false", [other], { json: GO_BULK_RESPONSE }],
    ["Retry", "POST", `/workflow/${other}/retry?resumeSubworkflowTasks=false`, undefined, "none"],
    ["Terminate", "DELETE", `/workflow/${other}?reason=census+go&triggerFailureWorkflow=false`, undefined, "none"],
    ["Rerun", "POST", `/workflow/${other}/rerun`, { reRunFromWorkflowId: other }, "string"],
    ["Terminate (the rerun)", "DELETE", `/workflow/${other}?reason=census+go`, undefined, "none"],
    ["Restart", "POST", `/workflow/${other}/restart?useLatestDefinitions=false`, undefined, "none"],
    ["Delete", "DELETE", `/workflow/${other}/remove?archiveWorkflow=false`, undefined, "none"],
    // TaskResourceApiService / TaskRunner
    ["BatchPoll (TaskRunner)", "GET", `/tasks/poll/batch/${GO_TASK_NAME}?count=1&timeout=100&workerid=census-go-host`, undefined, { json: goSlice(GO_TASK) }],
    ["Poll", "GET", `/tasks/poll/${GO_TASK_NAME}?workerid=census-go-host`, undefined, { json: GO_TASK }],
    ["Log (raw string, application/json)", "POST", `/tasks/${taskId}/log`, "a log line", "none"],
    ["GetTaskLogs", "GET", `/tasks/${taskId}/log`, undefined, { json: goSlice(GO_TASK_LOG) }],
    ["GetTask", "GET", `/tasks/${taskId}`, undefined, { json: GO_TASK }],
    ["GetPollData", "GET", `/tasks/queue/polldata?taskType=${GO_TASK_NAME}`, undefined, { json: goSlice(GO_POLL_DATA) }],
    ["GetAllPollData", "GET", "/tasks/queue/polldata/all", undefined, { json: goSlice(GO_POLL_DATA) }],
    ["All", "GET", "/tasks/queue/all", undefined, { json: goMap("int64") }],
    ["AllVerbose", "GET", "/tasks/queue/all/verbose", undefined, { json: goMap(goMap(goMap("int64"))) }],
    ["Size", "GET", `/tasks/queue/sizes?taskType=${GO_TASK_NAME}`, undefined, { json: goMap("int32") }],
    ["Search (tasks)", "GET", "/tasks/search?freeText=%2A&size=5&start=0", undefined, { json: goSearchResult(GO_TASK_SUMMARY) }],
    ["SearchV2 (tasks)", "GET", "/tasks/search-v2?freeText=%2A&size=5&start=0", undefined, { json: goSearchResult(GO_TASK) }],
    // TaskResult as the TaskRunner writes it: callbackAfterSeconds 0 left out, workerId the host name.
    ["UpdateTask (TaskRunner)", "POST", "/tasks", { workflowInstanceId: wf, taskId, workerId: "census-go-host", status: "IN_PROGRESS", outputData: { step: 1 } }, "string"],
    ["UpdateTaskByRefName", "POST", `/tasks/${wf}/work/IN_PROGRESS?workerid=census-go-host`, { step: 2 }, "string"],
    // MetadataResourceApiService / TagsResource / EventResource
    ["RegisterWorkflowDef (ConductorWorkflow.Register)", "POST", "/metadata/workflow?overwrite=true", { ...goQuick, name: "census_go_flow2" }, "none"],
    ["UpdateWorkflowDefs", "PUT", "/metadata/workflow?overwrite=true", [{ ...goQuick, name: "census_go_flow2" }], "none"],
    ["GetWorkflowDef", "GET", `/metadata/workflow/${GO_FLOW}?version=1`, undefined, { json: GO_WORKFLOW_DEF }],
    ["GetAllWorkflowDefs", "GET", "/metadata/workflow", undefined, { json: goSlice(GO_WORKFLOW_DEF) }],
    ["UnregisterWorkflowDef", "DELETE", "/metadata/workflow/census_go_flow2/1", undefined, "none"],
    // The DSL's ToTaskDef: name (and description) only, timeoutSeconds written as 0 (no omitempty).
    ["RegisterTaskDef", "POST", "/metadata/taskdefs", [{ name: "census_go_gone", timeoutSeconds: 0 }], "none"],
    ["UpdateTaskDef", "PUT", "/metadata/taskdefs", { name: "census_go_gone", retryCount: 1, timeoutSeconds: 0 }, "none"],
    ["GetTaskDef", "GET", `/metadata/taskdefs/${GO_TASK_NAME}`, undefined, { json: GO_TASK_DEF }],
    ["GetAllTaskDefs", "GET", "/metadata/taskdefs", undefined, { json: goSlice(GO_TASK_DEF) }],
    ["UnregisterTaskDef", "DELETE", "/metadata/taskdefs/census_go_gone", undefined, "none"],
    ["AddWorkflowTag", "POST", `/metadata/workflow/${GO_FLOW}/tags`, tag, "none"],
    ["GetWorkflowTags", "GET", `/metadata/workflow/${GO_FLOW}/tags`, undefined, { json: goSlice(GO_TAG) }],
    ["AddTaskTag", "POST", `/metadata/task/${GO_TASK_NAME}/tags`, tag, "none"],
    ["GetTaskTags", "GET", `/metadata/task/${GO_TASK_NAME}/tags`, undefined, { json: goSlice(GO_TAG) }],
    ["AddEventHandler", "POST", "/event", { name: "census_go_handler", event: `conductor:${GO_FLOW}:done`, actions: [{ action: "start_workflow", start_workflow: { name: GO_QUICK } }], active: true }, "none"],
    ["GetEventHandlers", "GET", "/event", undefined, { json: goSlice(GO_EVENT_HANDLER) }],
    ["GetEventHandlersForEvent", "GET", `/event/conductor:${GO_FLOW}:done?activeOnly=false`, undefined, { json: goSlice(GO_EVENT_HANDLER) }],
    ["RemoveEventHandler", "DELETE", "/event/census_go_handler", undefined, "none"],
    ["GetVersion", "GET", "/version", undefined, "string"],
    ["HealthCheck", "GET", "/health", undefined, { json: "unchecked" }],
  ];
}

/** Sends `call` as the Go client's APIClient does; answers the status, the Content-Type and the body's text. */
async function sendAsGo([, method, path, body]: GoCall): Promise<{ status: number; type: string; text: string }> {
  const headers: Record<string, string> = { "x-api-key": ADMIN_KEY, accept: "application/json" };
  let payload: string | undefined;
  if (body !== undefined) {
    // json.Encoder.Encode ends what it writes with a newline; a string is sent as it is.
    payload = typeof body === "string" ? body : `${JSON.stringify(body)}\n`;
    headers["content-type"] = "application/json";
  }
  const response = await SELF.fetch(`https://conductor.test/api${path}`, { method, headers, body: payload });
  return { status: response.status, type: response.headers.get("content-type") ?? "", text: await response.text() };
}

/**
 * What goes wrong reading `answer` as the Go client reads it for `result` (empty when nothing does). As
 * conductor-sdk/conductor-go's APIClient.decode, the stricter of the two: it decodes every 2xx answer but a 204 (which
 * its callers read as none), an empty one too, and a JSON answer through json.Unmarshal alone (go-sdk's skips an empty
 * body and sets a JSON answer that does not decode into a string result as its text).
 */
function goReadProblems(answer: { status: number; type: string; text: string }, result: GoResult): string[] {
  if (answer.status < 200 || answer.status >= 300 || answer.status === 204 || result === "none") return [];
  const json = answer.type.includes("application/json");
  if (!json) {
    if (result === "string") return answer.type.includes("text/plain") ? [] : [`undefined response type (${answer.type})`];
    return [answer.type.includes("text/plain") ? "text/plain set into a non-string result (a reflect panic)" : `undefined response type (${answer.type})`];
  }
  let value: unknown;
  try {
    value = JSON.parse(answer.text);
  } catch {
    return [`json.Unmarshal: not JSON (${JSON.stringify(answer.text.slice(0, 60))})`];
  }
  if (result === "string") return typeof value === "string" ? [] : [`json.Unmarshal: cannot unmarshal ${answer.text.slice(0, 60)} into Go value of type string`];
  if (result.json === "unchecked") return [];
  return goDecodeErrors(value, result.json, "answer");
}

/** True when a JSON answer holds nothing its Go type could be checked on: none (a 204, no body), null, [] or {}. */
function goAnswerEmpty(answer: { status: number; text: string }): boolean {
  if (answer.status === 204 || answer.text.trim().length === 0) return true;
  const value = JSON.parse(answer.text) as unknown;
  return value === null || (typeof value === "object" && Object.keys(value).length === 0);
}

describe("the Go client's calls", () => {
  it("each is served, and its answer decodes into the Go SDK's model", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: GO_TASK_NAME, timeoutSeconds: 0 }]);
    await apiOk("POST", "/api/metadata/workflow?overwrite=true", goQuick);
    await apiOk("POST", "/api/metadata/workflow?overwrite=true", goDefinition);
    const wf = await apiOk<string>("POST", "/api/workflow", goStart);
    const polled = await eventually(async () => (await api("GET", `/api/tasks/poll/batch/${GO_TASK_NAME}?count=1&workerid=census-go-host`)).text(), (text) => text.length > 2, "a task to poll");
    const taskId = (JSON.parse(polled) as { taskId: string }[])[0]!.taskId;
    const other = await apiOk<string>("POST", "/api/workflow", goStart);
    const problems: string[] = [];
    const empty: string[] = [];
    for (const call of goCalls(wf, other, taskId)) {
      const answer = await sendAsGo(call);
      // Each is made where it succeeds (the workflows in the states the calls need): a refusal is a Go user's error too.
      if (answer.status >= 400 || answer.text.includes("No route")) {
        problems.push(`${call[0]}: ${call[1]} ${call[2]} → ${answer.status} ${answer.text.slice(0, 200)}`);
      }
      const read = goReadProblems(answer, call[4]);
      problems.push(...read.map((problem) => `${call[0]}: ${problem}`));
      const result = call[4];
      if (answer.status < 300 && read.length === 0 && typeof result === "object" && result.json !== "unchecked" && goAnswerEmpty(answer)) empty.push(call[0]);
    }
    expect(problems).toEqual([]);
    // Nothing passed for want of content (a poll that found no task would leave the Task struct unchecked).
    expect(empty).toEqual([]);
  });

  it("the checker finds what encoding/json refuses", () => {
    // A guard on the check above: each of these fails a Go call whole.
    expect(goDecodeErrors({ retryCount: "3" }, GO_TASK_DEF, "a")).toHaveLength(1);
    expect(goDecodeErrors({ tasks: [{ startDelay: 1.5 }] }, GO_WORKFLOW_DEF, "a")).toHaveLength(1);
    expect(goDecodeErrors({ version: 2 ** 31 }, GO_WORKFLOW_DEF, "a")).toHaveLength(1);
    expect(goDecodeErrors({ taskToDomain: { x: 1 } }, GO_WORKFLOW, "a")).toHaveLength(1);
    expect(goDecodeErrors({ results: [{ startTime: 1 }] }, goSearchResult(GO_WORKFLOW_SUMMARY), "a")).toHaveLength(1);
    expect(goDecodeErrors({ inputData: [] }, GO_TASK, "a")).toHaveLength(1);
    expect(goReadProblems({ status: 200, type: "text/plain;charset=UTF-8", text: "x" }, { json: GO_TASK })).toHaveLength(1);
    expect(goReadProblems({ status: 200, type: "", text: "x" }, "string")).toHaveLength(1);
    expect(goDecodeErrors({ retryCount: 3, unknown: "x", domain: null }, GO_TASK, "a")).toEqual([]);
    // A key matches its field whatever its case, as encoding/json matches it.
    expect(goDecodeErrors({ RetryCount: "3" }, GO_TASK_DEF, "a")).toHaveLength(1);
    // A string result: a JSON answer must be a JSON string; an empty 2xx answer other than a 204 is decoded too, and fails.
    expect(goReadProblems({ status: 200, type: "application/json", text: "abc-123" }, "string")).toHaveLength(1);
    expect(goReadProblems({ status: 200, type: "application/json", text: "{}" }, "string")).toHaveLength(1);
    expect(goReadProblems({ status: 200, type: "application/json", text: '"abc-123"' }, "string")).toEqual([]);
    expect(goReadProblems({ status: 200, type: "application/json", text: "" }, { json: GO_TASK })).toHaveLength(1);
    expect(goReadProblems({ status: 204, type: "", text: "" }, { json: GO_TASK })).toEqual([]);
    expect([goAnswerEmpty({ status: 204, text: "" }), goAnswerEmpty({ status: 200, text: "[]" }), goAnswerEmpty({ status: 200, text: '[{"taskId":"t"}]' })]).toEqual([true, true, false]);
  });

  it("each call of a feature not served here is a 501 saying so", async () => {
    const calls: GoCall[] = [
      ["GetExternalStorageLocation1 (tasks)", "GET", "/tasks/externalstoragelocation?operation=READ&path=x&payloadType=TASK_INPUT", undefined, "none"],
      ["GetExternalStorageLocation (workflows)", "GET", "/workflow/externalstoragelocation?operation=READ&path=x&payloadType=WORKFLOW_INPUT", undefined, "none"],
      ["RequeuePendingTask", "POST", `/tasks/queue/requeue/${GO_TASK_NAME}`, undefined, "none"],
    ];
    for (const call of calls) {
      const { status, text } = await sendAsGo(call);
      expect({ call: call[0], status, error: (JSON.parse(text) as { error?: string }).error }).toEqual({ call: call[0], status: 501, error: "NOT_IMPLEMENTED" });
    }
  });
});
