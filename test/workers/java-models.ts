/**
 * The fields of the official Java client's response models and their Java types, and a checker that reads our JSON as
 * that client's Jackson mapper would: what it would throw on, field by field. The client ignores unknown properties and
 * nulls for primitives (conductor-oss/java-sdk conductor-client/.../common/config/ObjectMapperProvider.java disables
 * FAIL_ON_UNKNOWN_PROPERTIES and FAIL_ON_NULL_FOR_PRIMITIVES), and keeps Jackson's default scalar coercion: digits as
 * text read into a number, a number or boolean into a String, a whole number into an enum by its position. What it
 * cannot read fails the whole call: an object or array where a String or number is declared, other text in a number,
 * a number past an int's range, a constant not in the Java enum, a scalar where a Map or List is declared.
 *
 * Sources (conductor-oss/java-sdk unless said otherwise), each model's fields as declared there:
 * - conductor-client/src/main/java/com/netflix/conductor/common/metadata/tasks/Task.java, TaskDef.java
 * - conductor-client/src/main/java/com/netflix/conductor/common/run/Workflow.java, WorkflowSummary.java
 * - conductor-client/src/main/java/com/netflix/conductor/common/metadata/workflow/WorkflowDef.java, WorkflowTask.java,
 *   SubWorkflowParams.java, StartWorkflowRequest.java; .../common/metadata/SchemaDef.java;
 *   .../common/metadata/events/EventHandler.java
 * - conductor-oss/conductor common/src/main/java/com/netflix/conductor/common/run/TaskSummary.java, SearchResult.java;
 *   .../common/metadata/Auditable.java; .../metadata/tasks/TaskExecLog.java, PollData.java;
 *   .../metadata/workflow/RateLimitConfig.java, StateChangeEvent.java, IdempotencyStrategy.java
 * - orkes-client/src/main/java/io/orkes/conductor/client/model/WorkflowStatus.java, WorkflowSchedule.java,
 *   WorkflowScheduleExecutionModel.java, ConductorUser.java, Group.java, Role.java, Permission.java,
 *   ConductorApplication.java, TagObject.java, Tag.java, WebhookConfig.java, SecretWithTags.java,
 *   Subject.java, GrantedAccessResponse.java, GrantedAccess.java, TargetRef.java; conductor-client/.../common/model/BulkResponse.java
 */

/**
 * A Java type: a primitive or boxed scalar, a model of {@link JAVA_MODELS}, an enum's constants, a List or a Map. The
 * C# client's models (test/workers/csharp-models.ts) are written in the same terms: `int?` as "Integer", `int` as
 * "int", `Dictionary<string, Object>` as "Map", a non-nullable enum with `notNull`.
 */
export type JavaType =
  | "String"
  | "int"
  | "Integer"
  | "long"
  | "Long"
  | "boolean"
  | "Boolean"
  | "Object"
  | "Map"
  | { model: string }
  | { enum: readonly string[]; notNull?: true }
  | { list: JavaType }
  | { map: JavaType };

/**
 * How a client's JSON library reads a model: its models, and where it is stricter than Jackson as the Java client
 * configures it (see {@link JACKSON}). Newtonsoft.Json (the C# client) throws on a fraction read into an integer and
 * on a null read into a non-nullable value type; Jackson truncates the one and skips the other.
 */
export interface ModelReader {
  /** The library, named in what it reports. */
  readonly name: string;
  readonly models: Record<string, Record<string, JavaType>>;
  /** A fraction read into an integer fails (Jackson truncates it). */
  readonly fractionsFail: boolean;
  /** A null read into a primitive ("int", "long", "boolean") or a `notNull` enum fails (Jackson leaves the default). */
  readonly nullPrimitivesFail: boolean;
  /** The checks past the field types that a model's own code adds (the Java client's setters and getters). */
  readonly extraChecks?: (model: string, object: Record<string, unknown>, path: string) => string[];
}

const TASK_STATUS = { enum: ["IN_PROGRESS", "CANCELED", "FAILED", "FAILED_WITH_TERMINAL_ERROR", "COMPLETED", "COMPLETED_WITH_ERRORS", "SCHEDULED", "TIMED_OUT", "SKIPPED"] } as const;
const WORKFLOW_STATUS = { enum: ["RUNNING", "COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED", "PAUSED"] } as const;
const IDEMPOTENCY_STRATEGY = { enum: ["FAIL", "RETURN_EXISTING", "FAIL_ON_RUNNING"] } as const;
const STRINGS: JavaType = { list: "String" };
const STRING_MAP: JavaType = { map: "String" };

/** Auditable's fields, which WorkflowDef, TaskDef, SchemaDef and Workflow inherit. */
const AUDITABLE = { ownerApp: "String", createTime: "Long", updateTime: "Long", createdBy: "String", updatedBy: "String" } as const;

/** Each model's fields as the Java client declares them. */
export const JAVA_MODELS: Record<string, Record<string, JavaType>> = {
  Task: {
    taskType: "String", status: TASK_STATUS, inputData: "Map", referenceTaskName: "String", retryCount: "int", seq: "int",
    correlationId: "String", pollCount: "int", taskDefName: "String", scheduledTime: "long", startTime: "long", endTime: "long",
    updateTime: "long", startDelayInSeconds: "int", retriedTaskId: "String", retried: "boolean", executed: "boolean",
    callbackFromWorker: "boolean", responseTimeoutSeconds: "long", workflowInstanceId: "String", workflowType: "String",
    taskId: "String", reasonForIncompletion: "String", callbackAfterSeconds: "long", workerId: "String", outputData: "Map",
    workflowTask: { model: "WorkflowTask" }, domain: "String", rateLimitPerFrequency: "int", rateLimitFrequencyInSeconds: "int",
    externalInputPayloadStoragePath: "String", externalOutputPayloadStoragePath: "String", workflowPriority: "int",
    executionNameSpace: "String", isolationGroupId: "String", iteration: "int", subWorkflowId: "String", executionMetadata: "Map",
    subworkflowChanged: "boolean", parentTaskId: "String", firstStartTime: "long", runtimeMetadata: STRING_MAP,
  },
  Workflow: {
    ...AUDITABLE,
    status: WORKFLOW_STATUS, endTime: "long", workflowId: "String", parentWorkflowId: "String", parentWorkflowTaskId: "String",
    tasks: { list: { model: "Task" } }, input: "Map", output: "Map", correlationId: "String", reRunFromWorkflowId: "String",
    reasonForIncompletion: "String", event: "String", taskToDomain: STRING_MAP, failedReferenceTaskNames: STRINGS,
    workflowDefinition: { model: "WorkflowDef" }, externalInputPayloadStoragePath: "String", externalOutputPayloadStoragePath: "String",
    // setPriority throws IllegalArgumentException outside 0..99: checked in `readAs`.
    priority: "int", variables: "Map", lastRetriedTime: "long", failedTaskNames: STRINGS, history: { list: { model: "Workflow" } },
    idempotencyKey: "String", rateLimitKey: "String", rateLimited: "boolean", startTime: "long",
  },
  WorkflowDef: {
    ...AUDITABLE,
    name: "String", description: "String", version: "int", tasks: { list: { model: "WorkflowTask" } }, inputParameters: STRINGS,
    outputParameters: "Map", failureWorkflow: "String", schemaVersion: "int", restartable: "boolean", workflowStatusListenerEnabled: "boolean",
    ownerEmail: "String", timeoutPolicy: { enum: ["TIME_OUT_WF", "ALERT_ONLY"] }, timeoutSeconds: "long", variables: "Map",
    inputTemplate: "Map", workflowStatusListenerSink: "String", rateLimitConfig: { model: "RateLimitConfig" },
    inputSchema: { model: "SchemaDef" }, outputSchema: { model: "SchemaDef" }, enforceSchema: "boolean", metadata: "Map",
    cacheConfig: { model: "CacheConfig" }, maskedFields: STRINGS,
  },
  WorkflowTask: {
    name: "String", taskReferenceName: "String", description: "String", inputParameters: "Map", type: "String",
    dynamicTaskNameParam: "String", caseValueParam: "String", caseExpression: "String", scriptExpression: "String",
    decisionCases: { map: { list: { model: "WorkflowTask" } } }, dynamicForkJoinTasksParam: "String", dynamicForkTasksParam: "String",
    dynamicForkTasksInputParamName: "String", defaultCase: { list: { model: "WorkflowTask" } },
    forkTasks: { list: { list: { model: "WorkflowTask" } } }, startDelay: "int", subWorkflowParam: { model: "SubWorkflowParams" },
    joinOn: STRINGS, sink: "String", optional: "boolean", taskDefinition: { model: "TaskDef" }, rateLimited: "Boolean",
    defaultExclusiveJoinTask: STRINGS, asyncComplete: "Boolean", loopCondition: "String", loopOver: { list: { model: "WorkflowTask" } },
    retryCount: "Integer", evaluatorType: "String", expression: "String", onStateChange: { map: { list: { model: "StateChangeEvent" } } },
    joinStatus: "String", cacheConfig: { model: "CacheConfig" }, permissive: "boolean",
  },
  // workflowDefinition is an Object whose setter takes a map (read as a WorkflowDef) or a "${...}" text: checked in `readAs`.
  SubWorkflowParams: { name: "String", version: "Integer", taskToDomain: STRING_MAP, workflowDefinition: "Object", idempotencyKey: "String", idempotencyStrategy: IDEMPOTENCY_STRATEGY, priority: "Object" },
  TaskDef: {
    ...AUDITABLE,
    name: "String", description: "String", retryCount: "int", timeoutSeconds: "long", inputKeys: STRINGS, outputKeys: STRINGS,
    timeoutPolicy: { enum: ["RETRY", "TIME_OUT_WF", "ALERT_ONLY"] }, retryLogic: { enum: ["FIXED", "EXPONENTIAL_BACKOFF", "LINEAR_BACKOFF"] },
    retryDelaySeconds: "int", responseTimeoutSeconds: "long", concurrentExecLimit: "Integer", inputTemplate: "Map",
    rateLimitPerFrequency: "Integer", rateLimitFrequencyInSeconds: "Integer", isolationGroupId: "String", executionNameSpace: "String",
    ownerEmail: "String", pollTimeoutSeconds: "Integer", backoffScaleFactor: "Integer", baseType: "String",
    inputSchema: { model: "SchemaDef" }, outputSchema: { model: "SchemaDef" }, enforceSchema: "boolean", totalTimeoutSeconds: "long",
  },
  SchemaDef: { ...AUDITABLE, name: "String", version: "int", type: { enum: ["JSON", "AVRO", "PROTOBUF"] }, data: "Map", externalRef: "String" },
  RateLimitConfig: { rateLimitKey: "String", concurrentExecLimit: "int", policy: { enum: ["QUEUE", "REJECT"] } },
  CacheConfig: { key: "String", ttlInSecond: "int" },
  StateChangeEvent: { type: "String", payload: "Map" },
  WorkflowSummary: {
    workflowType: "String", version: "int", workflowId: "String", correlationId: "String", startTime: "String", updateTime: "String",
    endTime: "String", status: WORKFLOW_STATUS, input: "String", output: "String", reasonForIncompletion: "String",
    executionTime: "long", event: "String", failedReferenceTaskNames: "String", externalInputPayloadStoragePath: "String",
    externalOutputPayloadStoragePath: "String", priority: "int", failedTaskNames: STRINGS, createdBy: "String", taskToDomain: STRING_MAP,
  },
  TaskSummary: {
    workflowId: "String", workflowType: "String", correlationId: "String", scheduledTime: "String", startTime: "String",
    updateTime: "String", endTime: "String", status: TASK_STATUS, reasonForIncompletion: "String", executionTime: "long",
    queueWaitTime: "long", taskDefName: "String", taskType: "String", input: "String", output: "String", taskId: "String",
    externalInputPayloadStoragePath: "String", externalOutputPayloadStoragePath: "String", workflowPriority: "int",
  },
  "SearchResult<WorkflowSummary>": { totalHits: "long", results: { list: { model: "WorkflowSummary" } } },
  // searchV2's: the whole Workflow and Task (WorkflowClient.searchV2, TaskClient.searchV2).
  "SearchResult<Workflow>": { totalHits: "long", results: { list: { model: "Workflow" } } },
  "SearchResult<Task>": { totalHits: "long", results: { list: { model: "Task" } } },
  "SearchResult<TaskSummary>": { totalHits: "long", results: { list: { model: "TaskSummary" } } },
  TaskExecLog: { log: "String", taskId: "String", createdTime: "long" },
  PollData: { queueName: "String", domain: "String", workerId: "String", lastPollTime: "long" },
  EventHandler: { name: "String", description: "String", event: "String", condition: "String", actions: { list: { model: "EventHandler.Action" } }, active: "boolean", evaluatorType: "String" },
  "EventHandler.Action": {
    action: { enum: ["start_workflow", "complete_task", "fail_task", "terminate_workflow", "update_workflow_variables", "start_agent"] },
    start_workflow: { model: "EventHandler.StartWorkflow" }, complete_task: { model: "EventHandler.TaskDetails" },
    fail_task: { model: "EventHandler.TaskDetails" }, expandInlineJSON: "boolean", terminate_workflow: { model: "EventHandler.TerminateWorkflow" },
    update_workflow_variables: { model: "EventHandler.UpdateWorkflowVariables" },
  },
  "EventHandler.StartWorkflow": { name: "String", version: "Integer", correlationId: "String", input: "Map", taskToDomain: STRING_MAP },
  "EventHandler.TaskDetails": { workflowId: "String", taskRefName: "String", output: "Map", taskId: "String" },
  "EventHandler.TerminateWorkflow": { workflowId: "String", terminationReason: "String" },
  "EventHandler.UpdateWorkflowVariables": { workflowId: "String", variables: "Map", appendArray: "Boolean" },
  StartWorkflowRequest: {
    name: "String", version: "Integer", correlationId: "String", input: "Map", taskToDomain: STRING_MAP, workflowDef: { model: "WorkflowDef" },
    externalInputPayloadStoragePath: "String", priority: "Integer", createdBy: "String", idempotencyKey: "String", idempotencyStrategy: IDEMPOTENCY_STRATEGY,
  },
  // conductor-client/.../common/model/BulkResponse.java (WorkflowClient's bulk calls: BulkResponse<String>).
  BulkResponse: { bulkErrorResults: STRING_MAP, bulkSuccessfulResults: STRINGS, message: "String" },
  // conductor-client/src/main/java/org/conductoross/conductor/common/model/WorkflowRun.java, SignalResponse.java,
  // ReturnStrategy.java: executeWorkflow's and the signal and execute calls' answers. SignalResponse's getWorkflow() and
  // getBlockingTask() are checked in `readAs` too: they unbox `priority` and `retryCount` and valueOf `status`.
  WorkflowRun: {
    workflowId: "String", status: WORKFLOW_STATUS, correlationId: "String", requestId: "String", priority: "int", input: "Map", output: "Map",
    variables: "Map", tasks: { list: { model: "Task" } }, createdBy: "String", createTime: "long", updateTime: "long",
  },
  SignalResponse: {
    responseType: { enum: ["TARGET_WORKFLOW", "BLOCKING_WORKFLOW", "BLOCKING_TASK", "BLOCKING_TASK_INPUT", "BLOCKING_TASK_LIST"] },
    targetWorkflowId: "String", targetWorkflowStatus: "String", workflowId: "String", input: "Map", output: "Map", priority: "Integer",
    variables: "Map", signalTimeout: "boolean", targetWorkflowVariables: "Map", tasks: { list: { model: "Task" } }, createdBy: "String",
    createTime: "Long", status: "String", updateTime: "Long", blockingTaskId: "String", blockingTaskReferenceName: "String",
    taskType: "String", taskId: "String", referenceTaskName: "String", retryCount: "Integer", taskDefName: "String", workflowType: "String",
  },
  // conductor-client/.../common/metadata/workflow/WorkflowDefSummary.java (MetadataClient's names-and-versions).
  WorkflowDefSummary: { name: "String", version: "int", createTime: "Long" },
  // Orkes' models (orkes-client).
  WorkflowStatus: { correlationId: "String", output: "Map", status: WORKFLOW_STATUS, variables: "Map", workflowId: "String" },
  WorkflowSchedule: {
    createTime: "Long", createdBy: "String", cronExpression: "String", name: "String", paused: "Boolean", runCatchupScheduleInstances: "Boolean",
    scheduleEndTime: "Long", scheduleStartTime: "Long", startWorkflowRequest: { model: "StartWorkflowRequest" }, updatedBy: "String",
    updatedTime: "Long", zoneId: "String", tags: { list: { model: "Tag" } }, pausedReason: "String", description: "String",
  },
  WorkflowScheduleExecutionModel: {
    executionId: "String", executionTime: "Long", reason: "String", scheduleName: "String", scheduledTime: "Long", stackTrace: "String",
    startWorkflowRequest: { model: "StartWorkflowRequest" }, state: { enum: ["POLLED", "FAILED", "EXECUTED"] }, workflowId: "String",
    workflowName: "String", zoneId: "String", orgId: "String",
  },
  "SearchResult<WorkflowScheduleExecutionModel>": { totalHits: "long", results: { list: { model: "WorkflowScheduleExecutionModel" } } },
  ConductorUser: {
    applicationUser: "Boolean", groups: { list: { model: "Group" } }, id: "String", name: "String", roles: { list: { model: "Role" } },
    uuid: "String", encryptedId: "Boolean", encryptedIdDisplayValue: "String",
  },
  Group: { defaultAccess: { map: STRINGS }, description: "String", id: "String", roles: { list: { model: "Role" } } },
  Role: { name: "String", permissions: { list: { model: "Permission" } } },
  Permission: { name: "String" },
  ConductorApplication: { createdBy: "String", id: "String", name: "String", createTime: "Long", updateTime: "Long", updatedBy: "String" },
  TagObject: { key: "String", type: { enum: ["METADATA", "RATE_LIMIT"] }, value: "Object" },
  Tag: { key: "String", value: "String" },
  SecretWithTags: { name: "String", tags: { list: { model: "TagObject" } } },
  Subject: { id: "String", type: { enum: ["USER", "ROLE", "GROUP"] } },
  GrantedAccessResponse: { grantedAccess: { list: { model: "GrantedAccess" } } },
  GrantedAccess: { access: { list: { enum: ["CREATE", "READ", "UPDATE", "DELETE", "EXECUTE"] } }, target: { model: "TargetRef" }, tag: "String" },
  // Jackson reads TargetRef.TypeEnum by its constants' names: SECRET, not the SECRET_NAME it writes.
  TargetRef: { id: "String", type: { enum: ["WORKFLOW_DEF", "TASK_DEF", "APPLICATION", "USER", "SECRET", "TAG", "DOMAIN"] } },
  WebhookConfig: {
    name: "String", id: "String", receiverWorkflowNamesToVersions: { map: "Integer" }, workflowsToStart: "Map", urlVerified: "boolean",
    sourcePlatform: "String", verifier: { enum: ["SLACK_BASED", "SIGNATURE_BASED", "HEADER_BASED", "STRIPE", "TWITTER", "HMAC_BASED", "SENDGRID"] },
    headers: STRING_MAP, headerKey: "String", secretKey: "String", secretValue: "String", createdBy: "String", tags: { list: { model: "Tag" } },
    webhookExecutionHistory: { list: "Map" }, expression: "String", evaluatorType: "String",
  },
};

const INT_RANGE = [-(2 ** 31), 2 ** 31 - 1] as const;
const LONG_RANGE = [-(2 ** 63), 2 ** 63 - 1] as const;

function kind(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : `the ${typeof value} ${JSON.stringify(value)}`;
}

/**
 * Why Jackson cannot read `value` as a number of `range`, or undefined when it can (a float truncated, digits as text);
 * with `fractionsFail`, as Newtonsoft.Json, a fraction is refused instead of truncated.
 */
function numberProblem(value: unknown, range: readonly [number, number], java: string, fractionsFail = false): string | undefined {
  let number: number;
  if (typeof value === "number") {
    if (fractionsFail && !Number.isInteger(value)) return `Input string '${String(value)}' is not a valid integer (${java})`;
    number = Math.trunc(value);
  } else if (typeof value === "string") {
    if (value.trim() === "") return undefined;
    if (!/^\s*[+-]?\d+\s*$/.test(value)) return `Cannot deserialize value of type \`${java}\` from String ${JSON.stringify(value)}: not a valid \`${java}\` value`;
    number = Number(value.trim());
  } else return `Cannot deserialize value of type \`${java}\` from ${kind(value)}`;
  if (!Number.isFinite(number) || number < range[0] || number > range[1]) return `Numeric value (${String(value)}) out of range of ${java}`;
  return undefined;
}

/**
 * What the Java client's Jackson (or, given `reader`, another client's JSON library) would throw reading `value` as
 * `type` at `path`, each as `path: message`; none when it reads. Unknown properties are skipped, as the clients'
 * mappers skip them.
 */
export function readAs(type: JavaType, value: unknown, path = "$", reader: ModelReader = JACKSON): string[] {
  if (value === undefined) return [];
  if (value === null) {
    const primitive = type === "int" || type === "long" || type === "boolean" || (typeof type === "object" && "enum" in type && type.notNull === true);
    return reader.nullPrimitivesFail && primitive ? [`${path}: Error converting value {null} to a non-nullable type (${reader.name})`] : [];
  }
  if (typeof type === "string") {
    switch (type) {
      case "Object":
        return [];
      case "String":
        return typeof value === "object" ? [`${path}: Cannot deserialize value of type \`java.lang.String\` from ${kind(value)}`] : [];
      case "int":
      case "Integer": {
        const problem = numberProblem(value, INT_RANGE, "int", reader.fractionsFail);
        return problem === undefined ? [] : [`${path}: ${problem}`];
      }
      case "long":
      case "Long": {
        const problem = numberProblem(value, LONG_RANGE, "long", reader.fractionsFail);
        return problem === undefined ? [] : [`${path}: ${problem}`];
      }
      case "boolean":
      case "Boolean":
        if (typeof value === "boolean" || (typeof value === "number" && Number.isInteger(value))) return [];
        if (typeof value === "string" && /^(true|false|)$/i.test(value.trim())) return [];
        return [`${path}: Cannot deserialize value of type \`boolean\` from ${kind(value)}`];
      case "Map":
        return typeof value === "object" && !Array.isArray(value) ? [] : [`${path}: Cannot deserialize value of type \`java.util.Map\` from ${kind(value)}`];
    }
  }
  if ("enum" in type) {
    if (typeof value === "string" && type.enum.includes(value)) return [];
    if (typeof value === "number" && Number.isInteger(value) && value >= 0 && value < type.enum.length) return [];
    return [`${path}: Cannot deserialize value of type enum from ${kind(value)}: not one of the values accepted for Enum class: [${type.enum.join(", ")}]`];
  }
  if ("list" in type) {
    if (!Array.isArray(value)) return [`${path}: Cannot deserialize value of type \`java.util.List\` from ${kind(value)}`];
    return value.flatMap((item, index) => readAs(type.list, item, `${path}[${index}]`, reader));
  }
  if ("map" in type) {
    if (typeof value !== "object" || Array.isArray(value)) return [`${path}: Cannot deserialize value of type \`java.util.Map\` from ${kind(value)}`];
    return Object.entries(value).flatMap(([key, item]) => readAs(type.map, item, `${path}.${key}`, reader));
  }
  const fields = reader.models[type.model];
  if (fields === undefined) throw new Error(`no ${reader.name} model ${type.model}`);
  if (typeof value !== "object" || Array.isArray(value)) return [`${path}: Cannot construct instance of \`${type.model}\` from ${kind(value)}`];
  const object = value as Record<string, unknown>;
  const problems = Object.entries(fields).flatMap(([field, fieldType]) => readAs(fieldType, object[field], `${path}.${field}`, reader));
  problems.push(...(reader.extraChecks?.(type.model, object, path) ?? []));
  return problems;
}

/** What the Java client's models throw on past their fields' types: their setters' and getters' own checks. */
function javaModelChecks(model: string, object: Record<string, unknown>, path: string): string[] {
  const problems: string[] = [];
  if (model === "Workflow" && typeof object["priority"] === "number" && (object["priority"] < 0 || object["priority"] > 99)) {
    problems.push(`${path}.priority: IllegalArgumentException: priority MUST be between 0 and 99 (inclusive)`);
  }
  if (model === "SignalResponse") problems.push(...signalResponseProblems(object, path));
  if (model === "SubWorkflowParams") problems.push(...inlineDefinitionProblems(object["workflowDefinition"], `${path}.workflowDefinition`));
  return problems;
}

/** Jackson as the Java client's ObjectMapperProvider configures it, reading {@link JAVA_MODELS}. */
export const JACKSON: ModelReader = { name: "Jackson", models: JAVA_MODELS, fractionsFail: false, nullPrimitivesFail: false, extraChecks: javaModelChecks };

/**
 * What SignalResponse's getWorkflow() and getBlockingTask() throw on: Workflow.WorkflowStatus.valueOf(status) and
 * Task.Status.valueOf(status) on a constant that is not there (or null, for the workflow), and setPriority(int) and
 * setRetryCount(int) unboxing a null Integer.
 */
function signalResponseProblems(object: Record<string, unknown>, path: string): string[] {
  const problems: string[] = [];
  const strategy = object["responseType"];
  const status = object["status"];
  if (strategy === "TARGET_WORKFLOW" || strategy === "BLOCKING_WORKFLOW") {
    if (typeof status !== "string" || !WORKFLOW_STATUS.enum.includes(status as never)) problems.push(`${path}.status: getWorkflow(): No enum constant Workflow.WorkflowStatus.${String(status)}`);
    if (object["priority"] === undefined || object["priority"] === null) problems.push(`${path}.priority: getWorkflow(): NullPointerException unboxing a null priority`);
  }
  if ((strategy === "BLOCKING_TASK" || strategy === "BLOCKING_TASK_INPUT") && object["taskId"] !== undefined && object["taskId"] !== null) {
    if (status !== undefined && status !== null && !(typeof status === "string" && TASK_STATUS.enum.includes(status as never))) problems.push(`${path}.status: getBlockingTask(): No enum constant Task.Status.${String(status)}`);
    if (object["retryCount"] === undefined || object["retryCount"] === null) problems.push(`${path}.retryCount: getBlockingTask(): NullPointerException unboxing a null retryCount`);
  }
  return problems;
}

/**
 * What SubWorkflowParams.setWorkflowDefinition(Object) throws on: text that is not a whole "${...}" expression, and any
 * other non-map; a map it converts to a WorkflowDef (TaskUtils.convertToWorkflowDef), which fails as reading one does.
 */
function inlineDefinitionProblems(definition: unknown, path: string): string[] {
  if (definition === undefined || definition === null) return [];
  if (typeof definition === "string") {
    return definition.startsWith("${") && definition.endsWith("}") ? [] : [`${path}: IllegalArgumentException: workflowDefinition is a string, but not a valid DSL string`];
  }
  if (typeof definition !== "object" || Array.isArray(definition)) return [`${path}: IllegalArgumentException: workflowDefinition must be either null, or WorkflowDef, or a valid DSL string`];
  return readAs({ model: "WorkflowDef" }, definition, path);
}

/**
 * {@link readAs} for a model by name, as an answer holding one: an answer of none (null, or no body) is a problem, as
 * readAs would pass it with nothing checked (Jackson reads null into any model).
 */
export const readAsModel = (model: string, value: unknown, path = model, reader: ModelReader = JACKSON): string[] =>
  value === null || value === undefined ? [`${path}: no ${model} in the answer (${String(value)}), so nothing of it was checked`] : readAs({ model }, value, path, reader);
