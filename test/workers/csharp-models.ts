/**
 * The fields of the official C# client's response models and their C# types, read as its ApiClient reads them:
 * Newtonsoft.Json's JsonConvert.DeserializeObject with default settings (conductor-oss/csharp-sdk
 * Conductor/Client/ApiClient.cs `Deserialize`, its `serializerSettings` setting only ConstructorHandling). Unknown
 * properties are skipped (MissingMemberHandling.Ignore); a model's enum carries a StringEnumConverter and is read by its
 * EnumMember names, so a name it does not list throws; a fraction read into an `int?` or `long?` throws ("Input string
 * '1.5' is not a valid integer"); a null read into a non-nullable value type throws; an object or array where a string
 * or number is declared throws. Any of these fails the whole call (ApiClient rethrows it as an ApiException 500). The
 * checker is {@link readAs} of java-models.ts with {@link NEWTONSOFT}: the types are written in its terms (`int?` as
 * "Integer", `long?` as "Long", `bool?` as "Boolean", `Dictionary<string, Object>` as "Map").
 *
 * Sources, each model's fields as its constructor and DataMember names declare them:
 * - conductor-oss/csharp-sdk Conductor/Client/Models/Task.cs, TaskDef.cs, WorkflowTask.cs, EventHandler.cs, Action.cs,
 *   StateChangeEvent.cs (the newer models; Action and StateChangeEvent carry no [DataContract], so Newtonsoft matches
 *   their C# property names, ActionType and ExpandInlineJSON, Type and Payload, case-insensitively)
 * - conductor-sdk/conductor-csharp Conductor/Client/Models/Workflow.cs, WorkflowDef.cs, WorkflowSummary.cs,
 *   TaskSummary.cs, TaskExecLog.cs, PollData.cs, SearchResultTask.cs (and SearchResultWorkflow.cs,
 *   SearchResultTaskSummary.cs, SearchResultWorkflowSummary.cs, SearchResultWorkflowScheduleExecutionModel.cs, of the
 *   same shape), ScrollableSearchResultWorkflowSummary.cs, TaskListSearchResultSummary.cs, WorkflowStatus.cs,
 *   WorkflowRun.cs, BulkResponse.cs, SubWorkflowParams.cs, StartWorkflowRequest.cs, IdempotencyStrategy.cs,
 *   WorkflowSchedule.cs, WorkflowScheduleExecutionModel.cs, TagObject.cs, SubjectRef.cs, ConductorUser.cs, Group.cs,
 *   Role.cs
 * Which call reads which model: conductor-oss/csharp-sdk Conductor/Api/*ResourceApi.cs (each method's `Execute<T>`).
 */
import type { JavaType, ModelReader } from "./java-models";

const TASK_STATUS = { enum: ["IN_PROGRESS", "CANCELED", "FAILED", "FAILED_WITH_TERMINAL_ERROR", "COMPLETED", "COMPLETED_WITH_ERRORS", "SCHEDULED", "TIMED_OUT", "SKIPPED"] } as const;
const WORKFLOW_STATUS = { enum: ["RUNNING", "COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED", "PAUSED"] } as const;
const STRINGS: JavaType = { list: "String" };
const STRING_MAP: JavaType = { map: "String" };
const searchResult = (of: string): Record<string, JavaType> => ({ totalHits: "Long", results: { list: { model: of } } });

/** Each model's fields as the C# client declares them (its `?` types nullable, as all but one here are). */
export const CSHARP_MODELS: Record<string, Record<string, JavaType>> = {
  Task: {
    callbackAfterSeconds: "Long", callbackFromWorker: "Boolean", correlationId: "String", domain: "String", endTime: "Long", executed: "Boolean",
    executionNameSpace: "String", externalInputPayloadStoragePath: "String", externalOutputPayloadStoragePath: "String", inputData: "Map",
    isolationGroupId: "String", iteration: "Integer", loopOverTask: "Boolean", outputData: "Map", runtimeMetadata: STRING_MAP, pollCount: "Integer",
    queueWaitTime: "Long", rateLimitFrequencyInSeconds: "Integer", rateLimitPerFrequency: "Integer", reasonForIncompletion: "String",
    referenceTaskName: "String", responseTimeoutSeconds: "Long", retried: "Boolean", retriedTaskId: "String", retryCount: "Integer",
    scheduledTime: "Long", seq: "Integer", startDelayInSeconds: "Integer", startTime: "Long", status: TASK_STATUS, subWorkflowId: "String",
    subworkflowChanged: "Boolean", taskDefName: "String", taskDefinition: { model: "TaskDef" }, taskId: "String", taskType: "String",
    updateTime: "Long", workerId: "String", workflowInstanceId: "String", workflowPriority: "Integer", workflowTask: { model: "WorkflowTask" },
    workflowType: "String",
  },
  Workflow: {
    correlationId: "String", createTime: "Long", createdBy: "String", endTime: "Long", event: "String", externalInputPayloadStoragePath: "String",
    externalOutputPayloadStoragePath: "String", failedReferenceTaskNames: STRINGS, input: "Map", lastRetriedTime: "Long", output: "Map",
    ownerApp: "String", parentWorkflowId: "String", parentWorkflowTaskId: "String", priority: "Integer", reRunFromWorkflowId: "String",
    reasonForIncompletion: "String", startTime: "Long", status: WORKFLOW_STATUS, taskToDomain: STRING_MAP, tasks: { list: { model: "Task" } },
    updateTime: "Long", updatedBy: "String", variables: "Map", workflowDefinition: { model: "WorkflowDef" }, workflowId: "String",
    workflowName: "String", workflowVersion: "Integer",
  },
  WorkflowDef: {
    createTime: "Long", createdBy: "String", description: "String", failureWorkflow: "String", inputParameters: STRINGS, inputTemplate: "Map",
    name: "String", outputParameters: "Map", ownerApp: "String", ownerEmail: "String", restartable: "Boolean", schemaVersion: "Integer",
    tasks: { list: { model: "WorkflowTask" } }, timeoutPolicy: { enum: ["TIME_OUT_WF", "ALERT_ONLY"] }, timeoutSeconds: "Long",
    updateTime: "Long", updatedBy: "String", variables: "Map", version: "Integer", workflowStatusListenerEnabled: "Boolean",
  },
  WorkflowTask: {
    asyncComplete: "Boolean", caseExpression: "String", caseValueParam: "String", decisionCases: { map: { list: { model: "WorkflowTask" } } },
    defaultCase: { list: { model: "WorkflowTask" } }, defaultExclusiveJoinTask: STRINGS, description: "String", dynamicForkJoinTasksParam: "String",
    dynamicForkTasksInputParamName: "String", dynamicForkTasksParam: "String", dynamicTaskNameParam: "String", evaluatorType: "String",
    expression: "String", forkTasks: { list: { list: { model: "WorkflowTask" } } }, inputParameters: "Map", joinOn: STRINGS, loopCondition: "String",
    loopOver: { list: { model: "WorkflowTask" } }, name: "String", optional: "Boolean", rateLimited: "Boolean", retryCount: "Integer",
    scriptExpression: "String", sink: "String", startDelay: "Integer", subWorkflowParam: { model: "SubWorkflowParams" },
    taskDefinition: { model: "TaskDef" }, taskReferenceName: "String", type: "String",
    workflowTaskType: {
      enum: [
        "SIMPLE", "DYNAMIC", "FORK_JOIN", "FORK_JOIN_DYNAMIC", "DECISION", "SWITCH", "JOIN", "DO_WHILE", "SUB_WORKFLOW", "START_WORKFLOW", "EVENT",
        "WAIT", "HUMAN", "USER_DEFINED", "HTTP", "LAMBDA", "INLINE", "EXCLUSIVE_JOIN", "TERMINATE", "KAFKA_PUBLISH", "JSON_JQ_TRANSFORM", "SET_VARIABLE",
        "LLM_CHAT_COMPLETE", "LLM_GENERATE_EMBEDDINGS", "LLM_INDEX_DOCUMENT", "LLM_INDEX_TEXT", "LLM_GET_EMBEDDINGS", "LLM_SEARCH_INDEX",
        "LLM_TEXT_COMPLETE", "WAIT_FOR_WEBHOOK",
      ],
    },
    onStateChange: { map: { list: { model: "StateChangeEvent" } } },
  },
  // A WorkflowDef, not Java's Object: an inline definition given as a "${...}" expression cannot be read (the text is
  // not an object), whatever the server.
  SubWorkflowParams: { name: "String", taskToDomain: STRING_MAP, version: "Integer", workflowDefinition: { model: "WorkflowDef" } },
  StateChangeEvent: { type: "String", payload: "Map" },
  TaskDef: {
    backoffScaleFactor: "Integer", concurrentExecLimit: "Integer", createTime: "Long", createdBy: "String", description: "String",
    executionNameSpace: "String", inputKeys: STRINGS, inputTemplate: "Map", isolationGroupId: "String", name: "String", outputKeys: STRINGS,
    runtimeMetadata: STRINGS, ownerApp: "String", ownerEmail: "String", pollTimeoutSeconds: "Integer", rateLimitFrequencyInSeconds: "Integer",
    rateLimitPerFrequency: "Integer", responseTimeoutSeconds: "Long", retryCount: "Integer", retryDelaySeconds: "Integer",
    retryLogic: { enum: ["FIXED", "EXPONENTIAL_BACKOFF", "LINEAR_BACKOFF"] }, timeoutPolicy: { enum: ["RETRY", "TIME_OUT_WF", "ALERT_ONLY"] },
    timeoutSeconds: "Long", updateTime: "Long", updatedBy: "String",
  },
  WorkflowSummary: {
    correlationId: "String", createdBy: "String", endTime: "String", event: "String", executionTime: "Long", externalInputPayloadStoragePath: "String",
    externalOutputPayloadStoragePath: "String", failedReferenceTaskNames: "String", input: "String", inputSize: "Long", output: "String",
    outputSize: "Long", priority: "Integer", reasonForIncompletion: "String", startTime: "String", status: WORKFLOW_STATUS, updateTime: "String",
    version: "Integer", workflowId: "String", workflowType: "String",
  },
  TaskSummary: {
    correlationId: "String", endTime: "String", executionTime: "Long", externalInputPayloadStoragePath: "String", externalOutputPayloadStoragePath: "String",
    input: "String", output: "String", queueWaitTime: "Long", reasonForIncompletion: "String", scheduledTime: "String", startTime: "String",
    status: TASK_STATUS, taskDefName: "String", taskId: "String", taskType: "String", updateTime: "String", workflowId: "String",
    workflowPriority: "Integer", workflowType: "String",
  },
  // WorkflowResourceApi.Search reads GET /workflow/search as this (queryId and results; no totalHits).
  ScrollableSearchResultWorkflowSummary: { queryId: "String", results: { list: { model: "WorkflowSummary" } } },
  "SearchResult<WorkflowSummary>": searchResult("WorkflowSummary"),
  "SearchResult<Workflow>": searchResult("Workflow"),
  "SearchResult<Task>": searchResult("Task"),
  "SearchResult<TaskSummary>": searchResult("TaskSummary"),
  "SearchResult<WorkflowScheduleExecutionModel>": searchResult("WorkflowScheduleExecutionModel"),
  // WorkflowResourceApi.GetExecutionStatusTaskList: GET /workflow/{id}/tasks.
  TaskListSearchResultSummary: { results: { list: { model: "Task" } }, summary: { map: "Long" }, totalHits: "Long" },
  TaskExecLog: { createdTime: "Long", log: "String", taskId: "String" },
  PollData: { domain: "String", lastPollTime: "Long", queueName: "String", workerId: "String" },
  EventHandler: { actions: { list: { model: "EventHandler.Action" } }, active: "Boolean", condition: "String", evaluatorType: "String", event: "String", name: "String", description: "String" },
  "EventHandler.Action": { actionType: { enum: ["start_workflow", "complete_task", "fail_task", "update_workflow_variables", "terminate_workflow"] }, expandInlineJSON: "Boolean" },
  WorkflowStatus: { correlationId: "String", output: "Map", status: WORKFLOW_STATUS, variables: "Map", workflowId: "String" },
  WorkflowRun: {
    correlationId: "String", createTime: "Long", createdBy: "String", input: "Map", output: "Map", priority: "Integer", requestId: "String",
    status: WORKFLOW_STATUS, tasks: { list: { model: "Task" } }, updateTime: "Long", variables: "Map", workflowId: "String",
  },
  BulkResponse: { bulkErrorResults: STRING_MAP, bulkSuccessfulResults: STRINGS },
  // idempotencyStrategy is a non-nullable enum of two constants (IdempotencyStrategy.cs): a null or FAIL_ON_RUNNING throws.
  StartWorkflowRequest: {
    idempotencyStrategy: { enum: ["FAIL", "RETURN_EXISTING"], notNull: true }, idempotencyKey: "String", correlationId: "String", createdBy: "String",
    externalInputPayloadStoragePath: "String", input: "Map", name: "String", priority: "Integer", taskToDomain: STRING_MAP, version: "Integer",
    workflowDef: { model: "WorkflowDef" },
  },
  WorkflowSchedule: {
    createTime: "Long", createdBy: "String", cronExpression: "String", name: "String", paused: "Boolean", pausedReason: "String",
    runCatchupScheduleInstances: "Boolean", scheduleEndTime: "Long", scheduleStartTime: "Long", startWorkflowRequest: { model: "StartWorkflowRequest" },
    tags: { list: { model: "TagObject" } }, updatedBy: "String", updatedTime: "Long",
  },
  WorkflowScheduleExecutionModel: {
    executionId: "String", executionTime: "Long", reason: "String", scheduleName: "String", scheduledTime: "Long", stackTrace: "String",
    startWorkflowRequest: { model: "StartWorkflowRequest" }, state: { enum: ["POLLED", "FAILED", "EXECUTED"] }, workflowId: "String", workflowName: "String",
  },
  TagObject: { key: "String", type: { enum: ["METADATA", "RATE_LIMIT"] }, value: "Object" },
  SubjectRef: { id: "String", type: { enum: ["USER", "ROLE", "GROUP"] } },
  ConductorUser: { applicationUser: "Boolean", groups: { list: { model: "Group" } }, id: "String", name: "String", roles: { list: { model: "Role" } }, uuid: "String" },
  Group: { defaultAccess: { map: STRINGS }, description: "String", id: "String", roles: { list: { model: "Role" } } },
  Role: { name: "String", permissions: { list: { model: "Permission" } } },
  Permission: { name: "String" },
};

/**
 * Newtonsoft.Json as the C# client's ApiClient uses it. Action's fields are matched by their C# names (no
 * [DataContract]): `actionType` stands for its ActionType, which Newtonsoft matches to a key "actionType" whatever its
 * case, not to "action", so Conductor's "action" is skipped.
 */
export const NEWTONSOFT: ModelReader = { name: "Newtonsoft.Json", models: CSHARP_MODELS, fractionsFail: true, nullPrimitivesFail: true };
