import { DOT_SEGMENT_MESSAGE, holdsLoneSurrogate, isDotSegment, LONE_SURROGATE_MESSAGE, LONE_SURROGATE_TEXT_MESSAGE, wellFormed } from "../engine/http-syntax";
import { START_IDEMPOTENCY_STRATEGIES } from "../engine/tasks/start-workflow/request";
import * as v from "valibot";
import { EXTERNAL_TASK_STATUSES } from "../engine/decider";
import { jacksonBooleanOf, describeValue, enumConstantAt, exceedsJsonDepth, holdsNonFiniteNumber, integerFromText, isJacksonNullText, issueMessage, likelyMeant, MAX_JAVA_INT, MAX_JSON_DEPTH, NON_FINITE_MESSAGE } from "../engine/definition/checks";
import { MAX_WORKFLOW_NAME_LENGTH } from "../engine/definition/validate";
import { TASK_STATUSES, type JsonObject } from "../engine/model";
import { MAX_CORRELATION_ID_LENGTH } from "../engine/limits";
import { hasLostDigits, LOST_DIGITS_MESSAGE } from "../engine/scalar-text";
import { DOMAIN_LENGTH_MESSAGE, overlongDomainOf } from "../engine/tasks/workflow-start-fields";
import { childPath, type ValidationIssue } from "../engine/validation-issue";
import { validationError } from "./http/errors";
import { BOOLEAN_PARAMETER_MESSAGE, booleanQuery, booleanWord } from "./http/params";

function isPlainObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON object (not an array, not null). */
const jsonObject = v.custom<JsonObject>(isPlainObject, "must be a JSON object");

/**
 * A request body of named fields: a JSON object first, since valibot's `v.object` alone takes an array (its
 * missing fields then read as absent, and `[…]` would act as `{}`).
 */
export function requestObject<const E extends v.ObjectEntries>(entries: E) {
  const fields = v.object(entries);
  return v.pipe(v.custom<v.InferInput<typeof fields>>(isPlainObject, "must be a JSON object"), fields);
}

/**
 * A {@link requestObject} whose fields given as `null` read as absent: the official clients send an unset field as
 * null (the JavaScript client's objects, a hand-built request), and Conductor's Jackson reads that as unset.
 */
export function clientRequestObject<const E extends v.ObjectEntries>(entries: E) {
  const fields = v.object(entries);
  return v.pipe(
    v.custom<v.InferInput<typeof fields>>(isPlainObject, "must be a JSON object"),
    v.transform((body) => Object.fromEntries(Object.entries(body as Record<string, unknown>).filter(([, value]) => value !== null)) as v.InferInput<typeof fields>),
    fields,
  );
}

/**
 * A JSON object that becomes workflow data (an input, an output). Bounded in depth: a small but deeply
 * nested value overflows the stack wherever it is copied, stored or walked, which would answer 500.
 * Finite: expressions would see Infinity where the stored (and shown) value is null.
 */
export const jsonData = v.pipe(
  jsonObject,
  v.check((value: JsonObject) => !exceedsJsonDepth(value), `must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels`),
  v.check((value: JsonObject) => !holdsNonFiniteNumber(value), NON_FINITE_MESSAGE),
);

/** Longest idempotency key a start takes, however it came (the API, a webhook's event, a SUB_WORKFLOW's expression). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 512;

/**
 * A String field of Conductor's or Orkes' models as Jackson reads it: a string, or a number or boolean taken as its
 * text (Jackson coerces a JSON scalar into a String; the Python client sends an int as it is), `42` as `"42"`. Objects
 * and arrays stay refused with `message`, as Jackson refuses them, and so does an integer beyond 2^53, whose digits
 * JSON.parse has lost (see {@link hasLostDigits}).
 */
export const jacksonText = (message = "must be a string") =>
  v.pipe(
    v.union([v.string(), v.pipe(v.number(), v.finite()), v.boolean()], message),
    v.check((value) => !hasLostDigits(value), LOST_DIGITS_MESSAGE),
    v.transform((value) => String(value)),
  );

/**
 * Free text kept in a text column (a correlation id, a reason, a log line, a name or description): without a lone
 * surrogate, which would be stored as U+FFFD ({@link LONE_SURROGATE_TEXT_MESSAGE}). A check of one short field; JSON
 * data (inputs, outputs) is kept exactly and not walked.
 */
export const wellFormedText = v.check((text: string) => !holdsLoneSurrogate(text), LONE_SURROGATE_TEXT_MESSAGE);

/**
 * Text a worker reports with its result (a reason, a log line, its id): a lone surrogate becomes U+FFFD, as it would be
 * stored, rather than refused. Conductor's own Java TaskResult cuts a reason at 500 UTF-16 units (an emoji at the cut
 * leaves half of it, which Jackson writes as `\ud83d`), and a refusal would lose the whole result: the client's retries
 * get the same 400, and the task runs again at its timeout.
 */
export const workerText = v.transform((text: string) => wellFormed(text));

/**
 * Conductor's `taskToDomain` (task name to domain, comma-separated fallbacks) as Jackson reads its `Map<String, String>`:
 * a domain given as a number or boolean is its text ({@link jacksonText}: a Python client keying domains by a shard or
 * region number sends `{"*": 7}`, which Conductor routes to domain "7"), and a null one is no mapping for that task
 * (Conductor's setTaskDomains skips it, so `*` applies): left out. An object or array is refused, as Jackson refuses it,
 * and so is a domain (of a comma-separated list) longer than a poll may name ({@link overlongDomainOf}): its tasks would
 * wait in a queue no worker can poll.
 */
export const TaskToDomain = v.pipe(
  v.record(
    v.string(),
    v.nullable(
      v.pipe(
        jacksonText("must map task names to domain strings"),
        v.check((domain) => overlongDomainOf(domain) === undefined, DOMAIN_LENGTH_MESSAGE),
        // A worker polls a domain by `?domain=`, which cannot carry half a character: its tasks would wait for ever.
        v.check((domain) => !holdsLoneSurrogate(domain), LONE_SURROGATE_MESSAGE),
      ),
    ),
  ),
  v.transform((domains) => Object.fromEntries(Object.entries(domains).filter((entry): entry is [string, string] => entry[1] !== null))),
);

/**
 * A start's idempotency key: {@link jacksonText}, as a SUB_WORKFLOW or START_WORKFLOW task reads one too
 * (`idempotencyKeyOf`), so the same order id keys both alike.
 */
const IdempotencyKey = v.pipe(
  jacksonText(),
  v.minLength(1, "must not be empty"),
  v.maxLength(MAX_IDEMPOTENCY_KEY_LENGTH, `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`),
);

/**
 * A workflow version a request asks for: 0 or more. 0 is version 0 when one is registered (the Java SDK registers and
 * starts its workflows as version 0 unless told otherwise), else the latest, as Orkes reads 0.
 */
export const WorkflowVersion = v.pipe(v.number("must be an integer"), v.integer("must be an integer"), v.minValue(0, "must be at least 0"), v.maxValue(MAX_JAVA_INT, `must be at most ${MAX_JAVA_INT}`));

/**
 * A number field of a body as Jackson reads it into Conductor's and Orkes' models (ALLOW_COERCION_OF_SCALARS): a string
 * of digits is the number ({@link integerFromText}: `"30"`, `" +5 "`), anything else reaches `schema` as given, and is
 * refused there with its own message. The number is what is kept, never the text.
 */
export const jacksonNumber = <S extends v.GenericSchema>(schema: S) => v.pipe(v.unknown(), v.transform(integerFromText), schema);

/**
 * A boolean field of a body as Jackson reads it: `"true"` and `"false"` (or `True`, `TRUE`...) are the boolean, and so
 * is a whole number (0 false, any other true: {@link jacksonBooleanOf}); anything else but a boolean is refused with
 * `message`.
 */
export const jacksonBoolean = (message: string) => v.pipe(v.unknown(), v.transform(jacksonBooleanOf), v.boolean(message));

/**
 * An Integer field as Jackson reads it into Conductor's and Orkes' models: a number, its digits as text (`"1"`, see
 * {@link jacksonNumber}), or none for null and the text Jackson reads as null (`""`, blank, `"null"`:
 * {@link isJacksonNullText}; Orkes' docs' examples write `"version": ""` for the latest), then held to `schema`.
 */
export const jacksonInteger = (schema: v.GenericSchema<number, number>) =>
  v.pipe(
    v.nullish(v.unknown()),
    v.transform((value) => (value === null || isJacksonNullText(value) ? undefined : integerFromText(value))),
    v.union([v.undefined(), schema], "must be an integer"),
  );

/** A workflow priority: 0 to 99. */
export const Priority = v.pipe(v.number("must be an integer"), v.integer("must be an integer"), v.minValue(0, "must be 0 to 99"), v.maxValue(99, "must be 0 to 99"));

/**
 * A correlation id looked up (the batch lookups' lists): as {@link CorrelationId}, but one holding a lone surrogate is
 * looked up rather than refused: it answers its own entry (none found) where a 400 failed the whole list, as it did
 * before starts refused such ids.
 */
const LookedUpCorrelationId = v.pipe(jacksonText(), v.maxLength(MAX_CORRELATION_ID_LENGTH, `must be at most ${MAX_CORRELATION_ID_LENGTH} characters`));

/**
 * A correlation id, wherever it is given (a body field or the `correlationId` query parameter): a number or boolean is
 * its text ({@link jacksonText}), as Jackson reads Conductor's String correlationId (clients keying by an order number).
 */
export const CorrelationId = v.pipe(LookedUpCorrelationId, wellFormedText);

/** The fields of Conductor's `StartWorkflowRequest` (see {@link StartWorkflowRequest}). */
/** Conductor's idempotency strategies of a start with an `idempotencyKey`. */
export const IDEMPOTENCY_STRATEGIES = START_IDEMPOTENCY_STRATEGIES;

const START_WORKFLOW_FIELDS = {
  name: v.optional(v.pipe(v.string("must be a string"), v.trim(), v.minLength(1, "must not be empty"))),
  // Digits and "" too, as Jackson reads them into Conductor's Integer fields: clients that carry the version as text
  // (realeyeeos/conductor-client's Go SDK sends "version": "1") start the workflow rather than get a 400.
  version: jacksonInteger(WorkflowVersion),
  input: v.optional(jsonData),
  correlationId: v.optional(CorrelationId),
  priority: jacksonInteger(Priority),
  taskToDomain: v.optional(TaskToDomain),
  idempotencyKey: v.optional(IdempotencyKey),
  idempotencyStrategy: v.optional(v.picklist(IDEMPOTENCY_STRATEGIES, "must be RETURN_EXISTING, FAIL or FAIL_ON_RUNNING")),
  // An inline definition, run instead of a registered one: validated as a registration is (see `inlineDefinition`).
  workflowDef: v.optional(v.unknown()),
};

/** Conductor's `StartWorkflowRequest` body of `POST /api/workflow` and the execute endpoint. */
export const StartWorkflowRequest = clientRequestObject(START_WORKFLOW_FIELDS);

/**
 * Whether `body`, sent to execute workflow `pathName` by name, is the workflow's input itself (Orkes'
 * executeWorkflowAsAPI) rather than a StartWorkflowRequest: any JSON object but one whose every key is a field of a
 * StartWorkflowRequest (those read here, and `externalInputPayloadStoragePath` and `createdBy`, which the Java client
 * writes and this service ignores) and whose `name`, if any, is `pathName`. An input holding one such key beside its
 * own (`{name, email}`) is an input: read as a request, its own keys would be dropped and the workflow start with none.
 */
export function isBareWorkflowInput(body: unknown, pathName: string): boolean {
  if (!isPlainObject(body)) return false;
  const fields = body as JsonObject;
  const keys = Object.keys(fields);
  if (keys.length === 0) return false;
  const requestShaped = keys.every((key) => Object.hasOwn(START_WORKFLOW_FIELDS, key) || key === "externalInputPayloadStoragePath" || key === "createdBy");
  const name = fields["name"];
  // Trimmed, as the request's reading trims it.
  return !requestShaped || (name !== undefined && (typeof name !== "string" || name.trim() !== pathName));
}
/** Parsed {@link StartWorkflowRequest}. */
export type StartWorkflowRequest = v.InferOutput<typeof StartWorkflowRequest>;

/** Longest time a mocked task may be shown to have waited or run: a year, in milliseconds. */
const MAX_MOCKED_MS = 365 * 24 * 3600 * 1000;
const mockedMs = jacksonNumber(v.pipe(v.number("must be a number of milliseconds"), v.integer("must be an integer"), v.minValue(0, "must not be negative"), v.maxValue(MAX_MOCKED_MS, `must be at most ${MAX_MOCKED_MS} (a year)`)));

/** Conductor's `WorkflowTestRequest.TaskMock`: one mocked task result; `status` defaults to COMPLETED, as Conductor's does. */
export const TaskMockBody = requestObject({
  status: v.optional(v.picklist(["COMPLETED", "FAILED", "FAILED_WITH_TERMINAL_ERROR", "IN_PROGRESS"], "must be COMPLETED, FAILED, FAILED_WITH_TERMINAL_ERROR or IN_PROGRESS"), "COMPLETED"),
  output: v.optional(jsonData, {}),
  executionTime: v.optional(mockedMs),
  queueWaitTime: v.optional(mockedMs),
});

/** The mocks of a test request: results by task reference name, and the children's test requests (each read as {@link SubWorkflowTestRequest}). */
const TEST_FIELDS = {
  taskRefToMockOutput: v.optional(v.record(v.string(), v.array(TaskMockBody, "must be a list of mocked task results"), "must map task reference names to lists of mocked results")),
  subWorkflowTestRequest: v.optional(v.record(v.string(), v.unknown(), "must map SUB_WORKFLOW task reference names to test requests")),
};

/** Conductor's `WorkflowTestRequest`, body of `POST /api/workflow/test`: a start request with mocked task results. */
export const WorkflowTestRequest = clientRequestObject({ ...START_WORKFLOW_FIELDS, ...TEST_FIELDS });
/** Parsed {@link WorkflowTestRequest}. */
export type WorkflowTestRequest = v.InferOutput<typeof WorkflowTestRequest>;

/** A child's test request inside a {@link WorkflowTestRequest}: only its mocks are used (its child is started by its parent). */
export const SubWorkflowTestRequest = requestObject(TEST_FIELDS);
/** Parsed {@link SubWorkflowTestRequest}. */
export type SubWorkflowTestRequest = v.InferOutput<typeof SubWorkflowTestRequest>;

/**
 * Conductor's `RerunWorkflowRequest`, body of `POST /api/workflow/{id}/rerun`. Without `reRunFromTaskId`
 * the whole workflow runs again (Conductor's behaviour, and what the clients send by default);
 * `reRunFromWorkflowId` is the path's id, so a body value is ignored as Conductor does.
 */
export const RerunRequest = clientRequestObject({
  reRunFromTaskId: v.optional(v.pipe(v.string("must be a string (a task id)"), v.minLength(1, "must not be empty"))),
  workflowInput: v.optional(jsonData),
  taskInput: v.optional(jsonData),
  correlationId: v.optional(CorrelationId),
});
/** Parsed {@link RerunRequest}. */
export type RerunRequest = v.InferOutput<typeof RerunRequest>;

/**
 * Conductor's `SkipTaskRequest`, body of `PUT /api/workflow/{id}/skiptask/{taskReferenceName}`: the skipped task's
 * input and output, each optional (an absent body is `{}`).
 */
export const SkipTaskRequest = clientRequestObject({
  taskInput: v.optional(jsonData),
  taskOutput: v.optional(jsonData),
});
/** Parsed {@link SkipTaskRequest}. */
export type SkipTaskRequest = v.InferOutput<typeof SkipTaskRequest>;

/** The most ids one bulk workflow operation takes: Conductor's cap (WorkflowBulkResource refuses more with 400). */
export const MAX_BULK_WORKFLOW_IDS = 1000;
/** The longest id a bulk body may carry. */
const MAX_BULK_ID_LENGTH = 100;

/**
 * The body of a bulk workflow operation (`/api/workflow/bulk/…`): a JSON array of 1 to 1000 workflow ids, as
 * Conductor takes it. The count is checked before the items, so an oversized list is one problem, not one per id.
 * An empty id is refused: it would name no single-id path to authorize it as.
 */
export const BulkWorkflowIds = v.pipe(
  v.array(v.unknown(), "must be a JSON array of workflow ids"),
  v.minLength(1, "must list at least one workflow id"),
  v.maxLength(MAX_BULK_WORKFLOW_IDS, `must list at most ${MAX_BULK_WORKFLOW_IDS} workflow ids; send more in several requests`),
  v.array(
    v.pipe(
      v.string("must be a string (a workflow id)"),
      v.minLength(1, "must not be empty"),
      // Ids are 36-character UUIDs: a longer one names nothing, and would only be echoed back in the answer.
      v.maxLength(MAX_BULK_ID_LENGTH, `must be at most ${MAX_BULK_ID_LENGTH} characters (a workflow id)`),
    ),
  ),
);

/**
 * Longest delay before a task reported IN_PROGRESS is polled again: a longer one is taken as this (Conductor takes any,
 * and the official runners drop a result refused for it, leaving the task to its timeout).
 */
const MAX_CALLBACK_AFTER_SECONDS = 30 * 24 * 3600;

/** Longest task log line, in UTF-8 bytes (a TaskResult's `logs` entry, the body of `POST /api/tasks/{taskId}/log`). */
export const MAX_TASK_LOG_BYTES = 8 * 1024;
/**
 * Most log lines of one TaskResult kept: as many as a task keeps (`TASK_LOG_LINES_KEPT`); of more, the latest (a
 * chatty run is not refused, and with it its result). The request size limit bounds them too.
 */
export const MAX_TASK_LOGS_PER_RESULT = 1000;
/** Latest `createdTime` taken (the largest valid Date), so that every stored time is one. */
const MAX_EPOCH_MILLIS = 8.64e15;
/**
 * A log line's `createdTime` below this is in epoch seconds, not milliseconds: in milliseconds it would be before
 * March 1973, in seconds it is before the year 5138. The Python SDK's TaskRunner stamps the traceback of every task its
 * worker failed with `int(time.time())`; stored as given, the line showed a moment of January 1970.
 */
const SECONDS_NOT_MILLIS_BELOW = 1e11;

/** A log line posted on its own (`POST /api/tasks/{taskId}/log`): one too long is refused. */
export const TaskLogLine = v.pipe(v.string("must be a string"), v.maxBytes(MAX_TASK_LOG_BYTES, `must be at most ${MAX_TASK_LOG_BYTES} bytes (UTF-8)`));

/**
 * An entry of a TaskResult's `logs`. A line too long is cut when stored (after its secrets are masked), not refused:
 * refusing it would refuse the worker's result with it (a thrown error's stack is sent as a line), and the task would
 * be lost to its timeout. For the same reason a lone surrogate in it (text cut between the two halves of a character)
 * becomes U+FFFD, as it would be stored ({@link workerText}), rather than refused.
 */
const TaskExecLog = requestObject({
  /**
   * None (null, absent) is an entry without a line, dropped: the C# SDK's `InProgress(callbackAfterSeconds: n)` sends one.
   * A number or boolean is its text, as Jackson reads TaskExecLog's String `log` (a worker logging a count as it is).
   */
  log: v.nullish(v.pipe(jacksonText(), workerText)),
  /** Ignored, as Conductor ignores it: the line belongs to the task the TaskResult reports. */
  taskId: v.nullish(jacksonText()),
  /**
   * When the worker logged it (epoch milliseconds, a fraction dropped; epoch seconds taken as such, see
   * {@link SECONDS_NOT_MILLIS_BELOW}); when it is stored unless given.
   */
  createdTime: v.nullish(
    jacksonNumber(
      v.pipe(
        v.number("must be a number (epoch milliseconds)"),
        v.minValue(0, "must not be negative"),
        v.maxValue(MAX_EPOCH_MILLIS, `must be at most ${MAX_EPOCH_MILLIS} (epoch milliseconds)`),
        v.transform((time) => (time < SECONDS_NOT_MILLIS_BELOW ? Math.trunc(time * 1000) : Math.trunc(time))),
      ),
    ),
  ),
});

const nonEmptyString = v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"));

/**
 * The status a worker most likely meant by a status Conductor has no such name for: the words other systems use for
 * the same outcome (`SUCCESS`, `DONE`, `ERROR`, `RUNNING`), else a near miss (`completed`, `COMPLETE`, `FAILD`).
 */
const STATUS_SYNONYMS: ReadonlyMap<string, (typeof EXTERNAL_TASK_STATUSES)[number]> = new Map([
  ["SUCCESS", "COMPLETED"],
  ["SUCCEEDED", "COMPLETED"],
  ["SUCCESSFUL", "COMPLETED"],
  ["DONE", "COMPLETED"],
  ["OK", "COMPLETED"],
  ["FAILURE", "FAILED"],
  ["ERROR", "FAILED"],
  ["RUNNING", "IN_PROGRESS"],
]);

/**
 * A task status a worker or a completion path gives: one of {@link EXTERNAL_TASK_STATUSES}. Refused, the message
 * quotes what was given and names the status likely meant, as a misspelt task type's does: `SUCCESS` and `completed`
 * are the mistakes workers make, and a bare list left them to guess which one was wrong.
 */
function taskStatusPicklist(prefix: string) {
  return v.picklist(EXTERNAL_TASK_STATUSES, (issue) => {
    const given = issue.input;
    const meant = typeof given === "string" ? (STATUS_SYNONYMS.get(given.trim().toUpperCase()) ?? likelyMeant(given, EXTERNAL_TASK_STATUSES)) : undefined;
    return `${prefix}must be one of ${EXTERNAL_TASK_STATUSES.join(", ")}, but received ${describeValue(given)}${meant === undefined ? "" : `; did you mean ${meant}?`}`;
  });
}

/** Conductor's TaskResult.Status constants in their Java order, whose positions Jackson takes for them (`"status": 3`). */
const JAVA_TASK_RESULT_STATUSES = ["IN_PROGRESS", "FAILED", "FAILED_WITH_TERMINAL_ERROR", "COMPLETED"] as const;

const TASK_RESULT_STATUS = v.pipe(
  v.unknown(),
  v.transform((status) => enumConstantAt(status, JAVA_TASK_RESULT_STATUSES)),
  taskStatusPicklist(""),
);

/**
 * What a TaskResult says of its task, besides the ids of the task and its workflow. Null is absent, as Jackson reads a
 * TaskResult (generated and hand-written clients send null for fields they leave unset).
 */
const taskResultFields = {
  status: TASK_RESULT_STATUS,
  outputData: v.nullish(jsonData),
  // A number (an error code) or boolean is its text, as Jackson reads TaskResult's String field.
  reasonForIncompletion: v.nullish(v.pipe(jacksonText(), workerText)),
  /**
   * A SIMPLE task reported IN_PROGRESS (SCHEDULED again in its queue) is polled again after this many seconds. A fraction is dropped, not refused:
   * Conductor's TaskResult holds a `long`, which Jackson reads 0.012 into as 0 (its ACCEPT_FLOAT_AS_INT is on), and
   * netflix-conductor-utilities' Node worker, in its releases before RunningTask, sends the seconds its work took
   * (`0.012`) with every result.
   */
  callbackAfterSeconds: v.nullish(
    jacksonNumber(
      v.pipe(
        v.number("must be a number of seconds"),
        v.finite("must be a number of seconds"),
        v.minValue(0, "must not be negative"),
        v.transform((seconds) => Math.min(Math.trunc(seconds), MAX_CALLBACK_AFTER_SECONDS)),
      ),
    ),
  ),
  /**
   * Lines the worker logged while it ran the task, stored with the result (the latest ones, each cut to its limit). An
   * entry given as bare text is that line: Conductor's TaskExecLog has a constructor taking the line, which Jackson
   * reads a JSON string with, and the Ruby SDK's `TaskResult#log` (and so its TaskRunner, with a failed task's error
   * and stack) sends its lines so.
   */
  logs: v.nullish(
    v.pipe(
      v.array(v.unknown(), "must be an array of log entries (text, or {log, createdTime})"),
      v.transform((entries: unknown[]) => entries.slice(-MAX_TASK_LOGS_PER_RESULT).map((entry) => (typeof entry === "string" ? { log: entry } : entry))),
      v.array(TaskExecLog),
    ),
  ),
};

/**
 * Conductor's TaskResult (`POST /api/tasks`, `/api/tasks/update-v2`). A heartbeat (`extendLease: true`) needs no
 * `status`: the Python client's sends none, and Conductor reads nothing else of it.
 */
export const TaskResultRequest = v.pipe(
  requestObject({
    workflowInstanceId: nonEmptyString,
    taskId: nonEmptyString,
    ...taskResultFields,
    status: v.optional(TASK_RESULT_STATUS),
    /** The reporting worker; `update-v2` hands its next task to it. A numbered worker's number is its text (Jackson's String). */
    workerId: v.nullish(v.pipe(jacksonText(), v.maxLength(256, "must be at most 256 characters"), workerText)),
    /** A heartbeat of the worker that holds the task, not a result: the rest of the TaskResult is ignored, as Conductor does. */
    extendLease: v.nullish(jacksonBoolean("must be true or false")),
  }),
  v.forward(
    v.check((result) => result.extendLease === true || result.status !== undefined, `is required (one of ${EXTERNAL_TASK_STATUSES.join(", ")}) unless extendLease is true`),
    ["status"],
  ),
);
/** Parsed {@link TaskResultRequest}. */
export type TaskResultRequest = v.InferOutput<typeof TaskResultRequest>;

/** An id that may be given empty, which means absent. */
const optionalId = v.pipe(
  v.string("must be a string"),
  v.transform((id: string) => (id === "" ? undefined : id)),
);

/**
 * Orkes' `WorkflowStateUpdate` (`POST /api/workflow/{workflowId}/state`): variables to merge in, and a TaskResult for
 * the task its `taskId` names or, without one, the task with reference name `taskReferenceName`.
 */
export const WorkflowStateUpdateBody = v.pipe(
  clientRequestObject({
    taskReferenceName: v.optional(nonEmptyString),
    // The official client's TaskResult type requires both ids: an empty one is taken as absent.
    // A result without a status completes its task: the Java client's TaskResult leaves it null unless set, and Conductor's
    // e2e WorkflowUpdateAndUpdateTaskTests sends one so, expecting the task completed.
    taskResult: v.optional(clientRequestObject({ workflowInstanceId: v.optional(optionalId), taskId: v.optional(optionalId), ...taskResultFields, status: v.nullish(TASK_RESULT_STATUS, "COMPLETED") })),
    variables: v.optional(jsonData),
  }),
  v.forward(
    v.check((update) => update.taskResult === undefined || update.taskResult.taskId !== undefined || update.taskReferenceName !== undefined, "is required to name the task of taskResult (or taskResult.taskId)"),
    ["taskReferenceName"],
  ),
);
/** Parsed {@link WorkflowStateUpdateBody}. */
export type WorkflowStateUpdateBody = v.InferOutput<typeof WorkflowStateUpdateBody>;

/** A task status given in a completion path. */
export const ExternalStatus = taskStatusPicklist("status ");

const CONSISTENCY_LEVELS = ["SYNCHRONOUS", "DURABLE", "REGION_DURABLE"] as const;
/**
 * Orkes' `consistency` of a synchronous execute, as the official client names the levels (its `Consistency`). Only
 * checked: every start here is stored by the execution's Durable Object before anything runs, so all act as DURABLE.
 */
export const ConsistencyQuery = v.picklist(CONSISTENCY_LEVELS, `consistency must be one of ${CONSISTENCY_LEVELS.join(", ")}`);

/** Any JSON object (a workflow input, a task output). */
export const JsonObjectBody = jsonData;

/**
 * Body of Orkes' `POST /api/workflow/{workflowId}/variables`: the variables to merge in, a JSON object of any keys
 * (an array, which `requestObject` would also refuse, is a 400 like any other non-object).
 */
export const WorkflowVariablesBody = jsonData;

/** A workflow (definition) name a lookup names: what a definition may be called. */
export const WorkflowName = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.maxLength(MAX_WORKFLOW_NAME_LENGTH, `must be at most ${MAX_WORKFLOW_NAME_LENGTH} characters`),
);

/**
 * Orkes' `UpgradeWorkflowRequest`, body of `POST /api/workflow/{id}/upgrade`: the workflow (the execution's own) and
 * version to run from now on (the latest when absent or null), the skipped tasks' outputs by reference name, and a
 * new workflow input. Null stands for absent, as Orkes' clients send unset fields.
 */
export const UpgradeWorkflowRequest = requestObject({
  name: WorkflowName,
  version: jacksonInteger(WorkflowVersion),
  taskOutput: v.optional(v.nullable(v.pipe(jsonData, v.check((value) => Object.values(value).every(isPlainObject), "must map task reference names to output objects")))),
  workflowInput: v.optional(v.nullable(jsonData)),
});
/** Parsed {@link UpgradeWorkflowRequest}. */
export type UpgradeWorkflowRequest = v.InferOutput<typeof UpgradeWorkflowRequest>;

/**
 * A boolean query parameter read as {@link booleanQuery} reads one (Spring's words, any case), `fallback` when
 * absent (`queryParams` in http/params.ts leaves empty values out, so empty is absent too).
 */
export function booleanParam(fallback: boolean) {
  return v.optional(
    v.pipe(
      v.string(),
      v.check((text) => booleanWord(text) !== undefined, BOOLEAN_PARAMETER_MESSAGE),
      v.transform((text) => booleanWord(text) === true),
    ),
    String(fallback),
  );
}

/** An integer query parameter from `min` to `max`, written in decimal digits. */
export function integerParam(min: number, max: number) {
  const message = `must be an integer from ${min} to ${max}`;
  return v.pipe(v.string(), v.regex(/^-?\d+$/, message), v.transform(Number), v.minValue(min, message), v.maxValue(max, message));
}

/** Most correlation ids one lookup may name. */
export const MAX_LOOKUP_CORRELATION_IDS = 1000;
/** Most workflow names one batch lookup may name. */
export const MAX_LOOKUP_WORKFLOW_NAMES = 100;

const CorrelationIdList = v.pipe(
  v.array(LookedUpCorrelationId, "must be an array of correlation ids"),
  v.maxLength(MAX_LOOKUP_CORRELATION_IDS, `must hold at most ${MAX_LOOKUP_CORRELATION_IDS} correlation ids`),
);

/** The query of the correlation id lookups (`includeClosed`, `includeTasks`: both false unless given, as in Conductor). */
export const CorrelatedQuery = v.object({ includeClosed: booleanParam(false), includeTasks: booleanParam(false) });

/** Body of `POST /api/workflow/{name}/correlated`: the correlation ids (Conductor's `List<String>`). */
export const CorrelationIdsBody = CorrelationIdList;

/** Conductor's `CorrelationIdsSearchRequest`, body of `POST /api/workflow/correlated/batch`. */
export const CorrelationIdsSearchRequest = requestObject({
  workflowNames: v.pipe(
    v.array(WorkflowName, "must be an array of workflow names"),
    v.maxLength(MAX_LOOKUP_WORKFLOW_NAMES, `must hold at most ${MAX_LOOKUP_WORKFLOW_NAMES} workflow names`),
  ),
  correlationIds: CorrelationIdList,
});

const EpochMillis = integerParam(0, Number.MAX_SAFE_INTEGER);

/**
 * A bound of the running lookup's start times: 0 is none, as Conductor's WorkflowServiceImpl.getRunningWorkflows takes
 * the range only when both bounds are other than 0 (`Optional.ofNullable(startTime).orElse(0L) != 0 && …`); a client
 * sending `startTime=0&endTime=0` for "no range" gets the running ones, not those started at the epoch (none).
 */
const RunningTimeBound = v.pipe(EpochMillis, v.transform((millis) => (millis === 0 ? undefined : millis)));

/**
 * The query of `GET /api/workflow/running/{name}`: every version unless `version` is given (Conductor's resource
 * defaults it to 1, but its stores list the pending executions of every version); a start time range only when both
 * bounds are given and not 0 (one alone is ignored, as in Conductor), inclusive.
 */
export const RunningQuery = v.pipe(
  v.object({ version: v.optional(integerParam(0, MAX_JAVA_INT)), startTime: v.optional(RunningTimeBound), endTime: v.optional(RunningTimeBound) }),
  v.forward(
    v.partialCheck(
      [["startTime"], ["endTime"]],
      (query) => query.startTime === undefined || query.endTime === undefined || query.startTime <= query.endTime,
      "must not be before startTime",
    ),
    ["endTime"],
  ),
);

/** Most tasks one page of `GET /api/workflow/{workflowId}/tasks` holds. */
export const MAX_TASK_PAGE = 1000;

/** The query of `GET /api/workflow/{workflowId}/tasks`: Orkes' defaults `start=0`, `count=15`; `status` any number of task statuses. */
export const TaskListQuery = v.object({
  start: v.optional(integerParam(0, 1_000_000), "0"),
  count: v.optional(integerParam(0, MAX_TASK_PAGE), "15"),
  status: v.optional(v.array(v.picklist(TASK_STATUSES, `must be one of ${TASK_STATUSES.join(", ")}`)), []),
});

/** Turns valibot issues into the contract's `validationErrors`, paths like `tasks[1].inputParameters.uri`. */
export function issuesToValidationErrors(issues: readonly v.BaseIssue<unknown>[], basePath = ""): ValidationIssue[] {
  return issues.map((issue) => {
    let path = basePath;
    for (const item of issue.path ?? []) {
      const key = item.key;
      path = childPath(path, typeof key === "number" ? key : String(key));
    }
    return { path: path === "" ? "(body)" : path, message: issueMessage(issue) };
  });
}

/** Parses `input` with `schema` or throws a 400 listing every problem. */
export function parseOrThrow<TSchema extends v.GenericSchema>(schema: TSchema, input: unknown, what: string, basePath = ""): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  throw validationError(`Invalid ${what}`, issuesToValidationErrors(result.issues, basePath));
}

/** Longest schedule name. */
export const MAX_SCHEDULE_NAME_LENGTH = 255;

/**
 * A schedule's name: letters, digits, `_`, `-` and `.` (it is a path segment of every schedule route and part of
 * each fire's idempotency key). "tags" and "search" are refused: `GET /api/scheduler/schedules/tags` is Orkes' lookup
 * by tag and `GET /api/scheduler/schedules/search` Conductor's search, so a schedule of either name could not be read.
 */
export const ScheduleName = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.maxLength(MAX_SCHEDULE_NAME_LENGTH, `must be at most ${MAX_SCHEDULE_NAME_LENGTH} characters`),
  v.regex(/^[A-Za-z0-9_.-]*$/, "may hold only letters, digits, '_', '-' and '.'"),
  v.check((name: string) => !isDotSegment(name), DOT_SEGMENT_MESSAGE),
  v.check((name: string) => name !== "tags", `must not be "tags" (GET /api/scheduler/schedules/tags is the lookup by tag)`),
  v.check((name: string) => name !== "search", `must not be "search" (GET /api/scheduler/schedules/search is the search of schedules)`),
);

/**
 * The body of Orkes' bulk schedule pause or resume (`PUT /api/scheduler/bulk/pause|resume`): a JSON array of at most
 * 1000 schedule names, the count checked before the items (as {@link BulkWorkflowIds}); an empty one does nothing, as
 * Conductor's SchedulerBulkService answers it.
 */
export const BulkScheduleNames = v.pipe(
  v.array(v.unknown(), "must be a JSON array of schedule names"),
  v.maxLength(MAX_BULK_WORKFLOW_IDS, `must list at most ${MAX_BULK_WORKFLOW_IDS} schedule names; send more in several requests`),
  v.array(v.pipe(v.string("must be a string (a schedule name)"), v.minLength(1, "must not be empty"), v.maxLength(MAX_SCHEDULE_NAME_LENGTH, `must be at most ${MAX_SCHEDULE_NAME_LENGTH} characters (a schedule name)`))),
);

/**
 * The latest time a schedule's window or a look-ahead may name: the end of year 9999 (the cron library computes
 * fires in calendar dates, which end a little before JavaScript's last instant; later would fail every listing).
 */
const LATEST_SCHEDULE_MILLIS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * An optional epoch-millisecond bound of a schedule's window: Orkes clients send 0 (or null) for "none". A string of
 * digits is read as the number, as Jackson reads a `Long` (Conductor's scheduler examples fill a template with `sed`).
 */
const ScheduleBound = v.pipe(
  v.nullish(
    jacksonNumber(
      v.pipe(
        v.number("must be epoch milliseconds"),
        v.integer("must be an integer (epoch milliseconds)"),
        v.minValue(0, "must not be negative"),
        v.maxValue(LATEST_SCHEDULE_MILLIS, `must be at most ${LATEST_SCHEDULE_MILLIS} (9999-12-31T23:59:59.999Z)`),
      ),
    ),
  ),
  v.transform((bound) => (bound === null || bound === undefined || bound === 0 ? undefined : bound)),
);

/** What a schedule's start request refuses (null is none): each fire uses its own key, and definitions are started by name. */
const notInSchedule = (why: string) => v.pipe(v.nullish(v.custom<never>(() => false, why)), v.transform(() => undefined));

/** An optional field of a schedule's start request, null meaning absent (as an exported or re-saved schedule has them). */
/** `schema`, or absent for null (what clients built on Gson send for every field left unset). */
export const absentWhenNull = <T extends v.GenericSchema>(schema: T) => v.pipe(v.nullish(schema), v.transform((value) => value ?? undefined));

/** The `startWorkflowRequest` of a schedule: Conductor's StartWorkflowRequest, less what a repeated start cannot use. */
export const ScheduleStartRequest = requestObject({
  name: v.pipe(WorkflowName, v.trim(), v.minLength(1, "must not be empty")),
  version: jacksonInteger(WorkflowVersion),
  input: absentWhenNull(jsonData),
  correlationId: absentWhenNull(CorrelationId),
  priority: jacksonInteger(Priority),
  taskToDomain: absentWhenNull(TaskToDomain),
  idempotencyKey: v.pipe(
    v.nullish(v.custom<never>(() => false, "is not supported in a schedule: each fire starts with its own key (schedule name and fire time)")),
    v.transform(() => undefined),
  ),
  // The Python client sends its default (FAIL) with every request: without a key it says nothing, and is dropped.
  idempotencyStrategy: v.pipe(v.nullish(v.picklist(IDEMPOTENCY_STRATEGIES, "must be RETURN_EXISTING, FAIL or FAIL_ON_RUNNING")), v.transform(() => undefined)),
  workflowDef: notInSchedule("is not supported: register the definition with POST /api/metadata/workflow and schedule it by name"),
});

/**
 * Orkes' `SaveScheduleRequest`, body of `POST /api/scheduler/schedules`. `createdBy` and `updatedBy` are the
 * caller's, whatever the body says; fields of a schedule read back (`createTime`, `nextRunTime`…) are ignored, so a
 * schedule read with GET can be saved again as it is. The cron expression, zone and window are checked after the
 * shape (src/worker/schedules/validate.ts).
 */
export const SaveScheduleRequest = requestObject({
  name: ScheduleName,
  cronExpression: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(256, "must be at most 256 characters")),
  startWorkflowRequest: ScheduleStartRequest,
  paused: v.optional(v.nullable(jacksonBoolean("must be true or false")), false),
  runCatchupScheduleInstances: v.optional(v.nullable(jacksonBoolean("must be true or false")), false),
  scheduleStartTime: v.optional(ScheduleBound),
  scheduleEndTime: v.optional(ScheduleBound),
  zoneId: v.optional(v.nullable(v.pipe(v.string("must be a string (an IANA time zone id or a UTC offset)"), v.maxLength(64, "must be at most 64 characters"))), "UTC"),
  description: v.optional(v.nullable(v.pipe(v.string("must be a string"), v.maxLength(2048, "must be at most 2048 characters")))),
  // Conductor's several crons per schedule, which take priority over `cronExpression` there: a non-empty list is
  // refused rather than dropped (the schedule would fire on other times than asked). Clients send the empty default.
  cronSchedules: v.pipe(
    v.nullish(
      v.pipe(
        v.array(v.unknown(), "must be a list of {cronExpression, zoneId}"),
        v.maxLength(0, "several crons per schedule are not supported here: save one schedule per cron, each with its cronExpression and zoneId"),
      ),
    ),
    v.transform(() => undefined),
  ),
});
/** Parsed {@link SaveScheduleRequest}. */
export type SaveScheduleRequest = v.InferOutput<typeof SaveScheduleRequest>;

/** A window bound in the query of `nextFewSchedules`: 0 is none, as in a schedule (see {@link ScheduleBound}). */
const ScheduleBoundParam = v.pipe(integerParam(0, LATEST_SCHEDULE_MILLIS), v.transform((bound) => (bound === 0 ? undefined : bound)));

/** The query of `GET /api/scheduler/nextFewSchedules` (Orkes: `limit` 3 unless given, more taken as 5). */
export const NextFewSchedulesQuery = v.object({
  cronExpression: v.pipe(v.string("is required"), v.minLength(1, "is required"), v.maxLength(256, "must be at most 256 characters")),
  scheduleStartTime: v.optional(ScheduleBoundParam),
  scheduleEndTime: v.optional(ScheduleBoundParam),
  // Orkes caps it (Math.min(5, limit)) rather than refusing more: the Python client documents limit=10.
  limit: v.pipe(v.optional(integerParam(0, Number.MAX_SAFE_INTEGER), "3"), v.transform((limit) => Math.min(5, limit))),
  zoneId: v.optional(v.pipe(v.string(), v.maxLength(64, "must be at most 64 characters")), "UTC"),
});
