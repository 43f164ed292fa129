import { MAX_PAYLOAD_BYTES_CEILING } from "./config";
import { QueryBudget, WORKFLOW_FIELDS, type EvaluationContext } from "./expressions";
import { isHttpFamilyType, type JsonObject, type JsonValue, type TaskExecution, type WorkflowExecution } from "./model";
import { maskedKeysOf } from "./masking";
import { latestInstanceNamed } from "./lanes";
import { definitionReferenceName } from "./plan";
import { outputWithoutResponseCopies } from "./tasks/http/response";
import { shownCallbackAfterSeconds, shownTaskDefName, shownTaskType } from "./view";

/** What `${<ref>.…}` sees of a task: its latest instance's visible fields (those Conductor's ParametersUtils gives it). */
function taskRecord(task: TaskExecution, execution: WorkflowExecution): JsonObject {
  const record: JsonObject = {
    taskId: task.taskId,
    // As the Task JSON shows them (Conductor's task model): a worker's task's type is its name, a fork's FORK.
    taskType: shownTaskType(task),
    taskDefName: shownTaskDefName(task),
    referenceTaskName: task.referenceTaskName,
    status: task.status,
    input: task.inputData,
    output: task.outputData,
    retryCount: task.retryCount,
    pollCount: task.pollCount ?? 0,
    callbackAfterSeconds: shownCallbackAfterSeconds(task),
    iteration: task.iteration ?? 0,
    scheduledTime: task.scheduledTime,
    startTime: task.startTime,
    endTime: task.endTime,
    workflowInstanceId: execution.workflowId,
    correlationId: execution.correlationId ?? null,
  };
  if (task.workerId !== undefined) record["workerId"] = task.workerId;
  if (task.reasonForIncompletion !== undefined) record["reasonForIncompletion"] = task.reasonForIncompletion;
  if (task.subWorkflowId !== undefined) record["subWorkflowId"] = task.subWorkflowId;
  if (task.callbackUrl !== undefined) record["callbackUrl"] = task.callbackUrl;
  return record;
}

/** What `${workflow.…}` sees of the execution. */
export function workflowRecord(execution: WorkflowExecution): JsonObject {
  // `satisfies` keeps WORKFLOW_FIELDS and the record's fields the same, but for `secrets`.
  const record = {
    workflowId: execution.workflowId,
    workflowType: execution.workflowName,
    workflowName: execution.workflowName,
    version: execution.workflowVersion,
    correlationId: execution.correlationId ?? null,
    reasonForIncompletion: execution.reasonForIncompletion ?? null,
    schemaVersion: execution.definition.schemaVersion ?? 2,
    input: execution.input,
    output: execution.output,
    variables: execution.variables,
    status: execution.status,
    parentWorkflowId: execution.parentWorkflowId ?? null,
    parentWorkflowTaskId: execution.parentWorkflowTaskId ?? null,
    priority: execution.priority,
    taskToDomain: execution.taskToDomain,
    // Orkes': the key the execution was started with (null without one).
    idempotencyKey: execution.idempotencyKey ?? null,
    createTime: execution.createTime,
    startTime: execution.startTime,
    env: execution.environment ?? {},
  } satisfies Record<Exclude<(typeof WORKFLOW_FIELDS)[number], "secrets">, JsonValue | undefined>;
  return record;
}

/**
 * The context expressions are evaluated in. Later instances of a reference (retries, iterations) shadow
 * earlier ones, so `${ref.output}` is always the latest attempt's output; a task of a DO_WHILE's loop is also seen
 * under its definition's name, as its latest iteration (as in Conductor). Records are made for the references an
 * expression names, once each. Its query budget is shared by all it resolves (see MAX_QUERY_VALUES): make one per
 * resolution (a task's input, a workflow's output), never keep one for the next. `maxBytes` bounds the text its
 * interpolations build (the deployment's MAX_PAYLOAD_BYTES; by default the most any deployment may set).
 */
export function evaluationContext(
  execution: WorkflowExecution,
  now: number,
  taskId?: string,
  secret?: (name: string) => string | undefined,
  maxBytes = MAX_PAYLOAD_BYTES_CEILING,
): EvaluationContext {
  const records = new Map<string, JsonObject | undefined>();
  const task = (reference: string): JsonObject | undefined => {
    if (records.has(reference)) return records.get(reference);
    const latest = latestInstanceNamed(execution, reference, (candidate) => candidate.referenceTaskName === reference || (candidate.iteration !== undefined && definitionReferenceName(execution.definition, candidate) === reference));
    const record = latest === undefined ? undefined : taskRecord(latest, execution);
    records.set(reference, record);
    return record;
  };
  // Made once per reference too: telling the copies from the response compares bodies.
  const queriedRecords = new Map<string, JsonObject | undefined>();
  const queriedTask = (reference: string): JsonObject | undefined => {
    if (queriedRecords.has(reference)) return queriedRecords.get(reference);
    const record = task(reference);
    const queried = record === undefined || !isHttpFamilyType(record["taskType"]) ? record : { ...record, output: outputWithoutResponseCopies(record["output"] ?? null) };
    queriedRecords.set(reference, queried);
    return queried;
  };
  // One budget for everything resolved with this context: a caller makes one context per resolution.
  const context: EvaluationContext = { workflow: workflowRecord(execution), task, queriedTask, now, maskedKeys: maskedKeysOf(execution.definition), queryBudget: new QueryBudget(), maxBytes };
  if (taskId !== undefined) context.taskId = taskId;
  if (secret !== undefined) context.secret = secret;
  return context;
}

/** The stand-in for every secret in what is stored and shown; real values exist only during a dispatch. */
export const MASKED_SECRET = "***";

/** A secret lookup that masks every value. */
export const maskedSecrets = (): string => MASKED_SECRET;
