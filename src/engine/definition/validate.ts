/**
 * Validation and normalisation of workflow definitions received over the API.
 *
 * Structure is checked with valibot, then each task by its type's validator (see `registry.ts`),
 * then cross-task rules (unique reference names, the task names expressions read) and `${...}` syntax. Every problem is reported,
 * so an author can fix a definition in one round trip.
 */
import { DOT_SEGMENT_MESSAGE, holdsLoneSurrogate, isDotSegment, LONE_SURROGATE_MESSAGE, LONE_SURROGATE_RULE } from "../http-syntax";
import * as v from "valibot";
import { findTemplateErrors, hasExpression, referencedSecrets, taskReferencesIn, WORKFLOW_FIELDS, workflowFieldsIn, type TaskReference } from "../expressions";
import {
  isLoopType,
  RETRY_LOGICS,
  TASK_TYPES,
  WORKFLOW_TIMEOUT_POLICIES,
  type ConditionalBranch,
  type JsonObject,
  type JsonValue,
  type RetryLogic,
  type JoinEvaluatorType,
  type SwitchEvaluatorType,
  type TaskType,
  type WorkflowDef,
  type WorkflowTaskDef,
  type WorkflowTimeoutPolicy,
} from "../model";
import { MAX_RETRY_COUNT, MAX_RETRY_DELAY_SECONDS } from "../retry";
import { MAX_MASKED_FIELD_LENGTH, MAX_MASKED_FIELDS } from "../masking";
import { MAX_RETENTION_SECONDS } from "../retention";
import { cutText } from "../limits";
import { taskScript } from "../scripts";
import { childPath, isRegistrationOnly, type ValidationIssue } from "../validation-issue";
import { isTextScalar } from "../scalar-text";
import {
  describeValue,
  exceedsJsonDepth,
  expecting,
  jacksonBooleanOf,
  integerFromText,
  isJacksonNullText,
  type JacksonNulls,
  withJacksonNullText,
  booleanRule,
  enumOrItsPosition,
  integerOrItsDigits,
  integerRule,
  fieldsOf,
  isBoolean,
  isBoundedJsonObject,
  isEmailAddress,
  isExpression,
  isJsonObject,
  isNonEmptyString,
  isOneOf,
  isRecord,
  isString,
  likelyMeant,
  MAX_JAVA_INT,
  MAX_JSON_DEPTH,
  objectOf,
  oneOfRule,
  rule,
  schemaReference,
  toIssues,
  type UnknownRecord,
} from "./checks";
import { setOwn } from "../own-property";
import { isStatusListenerSink } from "../status-listener";
import { RATE_LIMIT_CONFIG, rateLimitConfigOf, rateLimitKeyIssues } from "./rate-limit-config";
import { TASK_VALIDATORS } from "./registry";
import { validateTaskDef } from "./task-def";
import { forksEachInput } from "../tasks/fork-join-dynamic/validate";
import { isNoCondition } from "../tasks/conditional-fork/validate";
import { SUB_WORKFLOW_DEFINITION_PARAM, SUB_WORKFLOW_NAME_PARAM } from "../tasks/dynamic/concrete";
import { START_WORKFLOW_PARAMETER } from "../tasks/start-workflow/request";

/** The outcome of {@link validateWorkflowDef}. */
export type DefinitionResult = { ok: true; value: WorkflowDef } | { ok: false; errors: ValidationIssue[] };

/** What a registration knows beyond the definition itself. */
export interface ValidationContext {
  /** The registered task definitions' `inputTemplate`s, by task name: a task runs with its own laid over its template. */
  registeredInputTemplates?: ReadonlyMap<string, JsonObject>;
  /**
   * The tasks are those a dynamic fork was given as the workflow runs (see {@link validateForkedTasks}), at any depth
   * (not an inline child definition, checked as a definition of its own): their reference names may hold dots.
   */
  forked?: boolean;
  /**
   * The definition was accepted by an earlier registration and is checked again as it runs (a START_WORKFLOW's
   * definition written in a registered one, a DYNAMIC's chosen task): rules that only catch mistakes at registration
   * (see `registrationOnly`) are not applied, so a rule added since does not fail what registered and ran before it.
   * Rules protecting the run (what the engine cannot run, sizes) still are.
   */
  accepted?: boolean;
}

/** The context of a definition written inside one being checked: its own, but accepted (or not) as the outer one is. */
function nestedContext(context: ValidationContext): ValidationContext {
  return context.accepted === true ? { accepted: true } : {};
}

/**
 * The task types whose required input (HTTP's and HTTP_SYNC's request, JSON_JQ_TRANSFORM's filter) may come from a task
 * definition's inputTemplate.
 */
export const TEMPLATE_COMPLETED_TYPES: ReadonlySet<unknown> = new Set(["HTTP", "HTTP_SYNC", "JSON_JQ_TRANSFORM"]);

/** Most tasks one definition may hold; longer flows are split into sub workflows. */
export const MAX_TASKS_PER_DEFINITION = 200;

/** Longest `cacheConfig.key` of a task, as written. */
export const MAX_CACHE_KEY_TEMPLATE_LENGTH = 255;

/** Longest `startDelay` of a SIMPLE task: a day (a longer wait is a WAIT task's). */
export const MAX_START_DELAY_SECONDS = 24 * 60 * 60;

/** Longest a task output stays cached (`cacheConfig.ttlInSecond`): 30 days. */
export const MAX_CACHE_TTL_SECONDS = 30 * 24 * 60 * 60;

/** Longest workflow name, as in Conductor. */
export const MAX_WORKFLOW_NAME_LENGTH = 255;

/**
 * Reference names appear in `${ref.output...}` expressions and in callback URL paths, so they stay URL- and
 * parser-safe. They start like a path does, after any digits (Conductor takes `8XILG`, its e2e tests' random names, and
 * `1st_step`): `${-ref.output}` is a negation, and `${12.output}` or `${12-ab.output}` would read a number.
 */
const REFERENCE_NAME = /^[0-9]*[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Reference names of the tasks a dynamic fork is given as the workflow runs: {@link REFERENCE_NAME} with dots too after
 * the first character. Workers build them from data: Orkes' sample prefork workers (orkes-io/orkesworkers
 * VideoRecipesPreForkWorker, ImageEffectsPreForkWorker) name each task `<task>_<file name>_<recipe>_<n>`, as
 * `video_recipes_v1.mp4_transcode_0`, and Conductor takes any non-empty name. A dot is harmless beyond `${...}`, which
 * cannot address such a task (nor can Conductor's JsonPath): the JOIN's output keys it as it is, and in a URL path it is
 * an ordinary character (the first-character rule keeps out the `.` and `..` segments a URL would resolve away). Other
 * characters stay refused: `/` would split callback paths, and spaces or quotes need escaping in URLs and search queries.
 */
const FORKED_REFERENCE_NAME = /^[0-9]*[A-Za-z_][A-Za-z0-9_.-]*$/;

const isTaskType = isOneOf(TASK_TYPES);

/** An object of JSON values, nested no deeper than {@link MAX_JSON_DEPTH}. */
function jsonObject(field: string) {
  return v.pipe(
    rule<JsonObject>(field, "an object of JSON values", isJsonObject),
    v.check((value: JsonObject) => !exceedsJsonDepth(value), `${field} must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels`),
  );
}

const WORKFLOW_NAME = expecting(
  v.pipe(
    rule<string>("name", "a string", isString),
    v.check((name: string) => name.trim() !== "", "name must not be empty or only whitespace"),
    // Starts trim the name they are given (the API body, a SUB_WORKFLOW's name): such a definition could never be started.
    v.check(
      (name: string) => name.trim() === "" || name === name.trim(),
      "name must not start or end with whitespace (starts look the name up without it, so the definition could not be started)",
    ),
    v.check(
      (name: string) => name.length <= MAX_WORKFLOW_NAME_LENGTH,
      (issue) => `name must be at most ${MAX_WORKFLOW_NAME_LENGTH} characters long, but has ${String(issue.input).length}`,
    ),
    // Conductor's own validation rejects ':' in names; the same rule keeps definitions portable both ways.
    v.check((name: string) => !name.includes(":"), "name must not contain ':' (Conductor does not allow it in workflow names)"),
    v.check((name: string) => !isDotSegment(name), `name ${DOT_SEGMENT_MESSAGE}`),
    v.check((name: string) => !holdsLoneSurrogate(name), `name ${LONE_SURROGATE_MESSAGE}`),
  ),
  `a non-empty string of at most ${MAX_WORKFLOW_NAME_LENGTH} characters without ':' or surrounding whitespace`,
);

const OWNER_EMAIL = expecting(
  v.pipe(
    rule<string>("ownerEmail", "an e-mail address such as owner@example.com", isString),
    v.check(isEmailAddress, (issue) => `ownerEmail must be an e-mail address such as owner@example.com, but received ${describeValue(issue.input)}`),
  ),
  "an e-mail address such as owner@example.com",
);

const WORKFLOW = fieldsOf({
  name: WORKFLOW_NAME,
  description: v.optional(rule<string>("description", "a string", isString)),
  // 0 too: the Java SDK's ConductorWorkflow registers version 0 unless one is set, and Conductor stores it.
  version: v.optional(integerRule("version", `an integer from 0 to ${MAX_JAVA_INT}`, 0, MAX_JAVA_INT), 1),
  schemaVersion: v.optional(integerOrItsDigits(rule<number>("schemaVersion", "2 (the only schema version, as in Conductor)", (value) => value === 2)), 2),
  ownerEmail: v.optional(OWNER_EMAIL),
  // Conductor's Auditable field, kept and shown as given.
  ownerApp: v.optional(rule<string>("ownerApp", "a string", isString)),
  // Their number, counting those inside SWITCH branches, is checked with the tasks themselves (see taskCountIssues).
  tasks: expecting(rule<unknown[]>("tasks", "a non-empty array of task definitions", (value) => Array.isArray(value) && value.length > 0), "a non-empty array of task definitions"),
  inputParameters: v.optional(
    v.pipe(
      rule<unknown[]>("inputParameters", "an array of input names (strings)", Array.isArray),
      v.array(rule<string>("each inputParameters entry", "a string (an input name)", isString)),
    ),
  ),
  outputParameters: v.optional(jsonObject("outputParameters")),
  timeoutSeconds: v.optional(
    integerRule("timeoutSeconds", "a whole number of seconds of at least 0 (0 means no timeout)", 0, Number.MAX_SAFE_INTEGER),
    0,
  ),
  failureWorkflow: v.optional(
    rule<string>(
      "failureWorkflow",
      "the name of a workflow to start when this one fails or times out, or a ${...} expression giving one (such as ${workflow.input.onFailure})",
      (value) => isNonEmptyString(value) && value.length <= MAX_WORKFLOW_NAME_LENGTH,
    ),
  ),
  // Null is what clients send for "none", the default too.
  timeoutPolicy: v.nullish(
    // WorkflowDef.TimeoutPolicy's Java order: Jackson takes a constant's position too.
    enumOrItsPosition(rule<WorkflowTimeoutPolicy>("timeoutPolicy", `one of ${WORKFLOW_TIMEOUT_POLICIES.join(", ")}`, isOneOf(WORKFLOW_TIMEOUT_POLICIES)), ["TIME_OUT_WF", "ALERT_ONLY"]),
    // Conductor's WorkflowDef default: clients such as the Python SDK send a timeoutSeconds (60) without a policy,
    // and expect it to raise an alert, not to end a workflow that runs longer.
    "ALERT_ONLY",
  ),
  restartable: v.optional(booleanRule("restartable"), true),
  // Data, taken as is into the input: its `${...}` are not expressions, so they are not checked.
  inputTemplate: v.optional(jsonObject("inputTemplate")),
  // Data too: an execution's variables start as a copy, never resolved.
  variables: v.optional(jsonObject("variables")),
  // Orkes' input schema: a registered schema's name (its existence is checked by the worker, which reads the registry).
  // Clients send the whole SchemaDef; only the reference is kept.
  inputSchema: v.optional(schemaReference("inputSchema")),
  outputSchema: v.optional(schemaReference("outputSchema")),
  enforceSchema: v.optional(booleanRule("enforceSchema")),
  workflowStatusListenerEnabled: v.optional(booleanRule("workflowStatusListenerEnabled")),
  // Null is what clients send for "none" (the Python SDK's None).
  workflowStatusListenerSink: v.nullish(
    rule<string>("workflowStatusListenerSink", "conductor or conductor:<queue>: this service publishes Conductor's internal events only, which event handlers (/api/event) act on", isStatusListenerSink),
  ),
  // Null is what clients send for "none"; a limit of 0 is none too (see rateLimitConfigOf).
  rateLimitConfig: v.nullish(RATE_LIMIT_CONFIG),
  // Orkes' free-form metadata: data, kept as given (never resolved).
  metadata: v.optional(jsonObject("metadata")),
  // Null is what clients send for "none"; an empty list is kept as none too (see validateWorkflowDef).
  maskedFields: v.nullish(
    v.pipe(
      rule<unknown[]>("maskedFields", `an array of at most ${MAX_MASKED_FIELDS} field names`, (value) => Array.isArray(value) && value.length <= MAX_MASKED_FIELDS),
      v.array(rule<string>("each maskedFields entry", `a field name: a non-empty string of at most ${MAX_MASKED_FIELD_LENGTH} characters`, (value) => isNonEmptyString(value) && value.length <= MAX_MASKED_FIELD_LENGTH)),
    ),
  ),
  retentionSeconds: v.optional(
    integerRule(
      "retentionSeconds",
      `a whole number of seconds from 0 to ${MAX_RETENTION_SECONDS} (how long each execution is kept after it ends; 0 keeps them for good)`,
      0,
      MAX_RETENTION_SECONDS,
    ),
  ),
  // Conductor clients also send createTime, updateTime, createdBy and updatedBy. Like any unknown key they are accepted
  // and left out of the result: the server keeps its own times and authors.
});

const TASK_FIELDS = {
  name: rule<string>("name", "a non-empty string", isNonEmptyString),
  taskReferenceName: rule<string>(
    "taskReferenceName",
    "a non-empty string of letters, digits, _ and - only, whose first character after any leading digits is a letter or _, because it appears in expressions and URL paths",
    (value) => typeof value === "string" && REFERENCE_NAME.test(value),
  ),
  type: oneOfRule<TaskType>("type", `one of the supported task types: ${TASK_TYPES.join(", ")}`, TASK_TYPES),
  description: v.optional(rule<string>("description", "a string", isString)),
  // A function default, so normalised definitions never share one mutable object.
  inputParameters: v.optional(jsonObject("inputParameters"), () => ({})),
  asyncComplete: v.optional(booleanRule("asyncComplete")),
  optional: v.optional(booleanRule("optional")),
  permissive: v.optional(booleanRule("permissive")),
  retryCount: v.optional(integerRule("retryCount", `an integer from 0 to ${MAX_RETRY_COUNT}`, 0, MAX_RETRY_COUNT)),
  retryLogic: v.optional(rule<RetryLogic>("retryLogic", `one of ${RETRY_LOGICS.join(", ")}`, isOneOf(RETRY_LOGICS))),
  retryDelaySeconds: v.optional(
    integerRule("retryDelaySeconds", `an integer from 0 to ${MAX_RETRY_DELAY_SECONDS}`, 0, MAX_RETRY_DELAY_SECONDS),
  ),
  // Conductor's delay before a SIMPLE task can be polled; other types ignore it here (see validateTask and docs/api.md).
  startDelay: v.optional(integerRule("startDelay", `a whole number of seconds from 0 to ${MAX_START_DELAY_SECONDS}`, 0, MAX_START_DELAY_SECONDS)),
  // Orkes' TERMINATE_WORKFLOW may give it beside its inputParameters; other types ignore it.
  triggerFailureWorkflow: v.optional(booleanRule("triggerFailureWorkflow")),
  // Null is what clients send for "none". Which types may cache, and the key's `${...}`, are checked in validateTask.
  cacheConfig: v.nullish(
    objectOf("cacheConfig", "Orkes' task output cache: {key, ttlInSecond}", {
      key: rule<string>(
        "key",
        `a non-empty string of at most ${MAX_CACHE_KEY_TEMPLATE_LENGTH} characters: text and \${...} naming the task's input, such as \${uri}-\${method}`,
        (value) => isNonEmptyString(value) && value.length <= MAX_CACHE_KEY_TEMPLATE_LENGTH,
      ),
      // Orkes' docs write it as text too (`"ttlInSecond": "2500"`), which its Jackson reads as the number.
      ttlInSecond: integerRule("ttlInSecond", `a whole number of seconds from 1 to ${MAX_CACHE_TTL_SECONDS} (30 days)`, 1, MAX_CACHE_TTL_SECONDS),
    }),
  ),
};

const TASK = fieldsOf(TASK_FIELDS);

/** A task a dynamic fork is given as the workflow runs: its reference name may hold dots (see FORKED_REFERENCE_NAME). */
const FORKED_TASK = fieldsOf({
  ...TASK_FIELDS,
  taskReferenceName: rule<string>(
    "taskReferenceName",
    "a non-empty string of letters, digits, _, - and . only, whose first character after any leading digits is a letter or _, because it appears in URL paths",
    (value) => typeof value === "string" && FORKED_REFERENCE_NAME.test(value),
  ),
});

/** The task types whose output `cacheConfig` caches (of Orkes' list, those this service runs; HTTP_SYNC is an HTTP task). */
const CACHEABLE_TYPES: ReadonlySet<string> = new Set(["HTTP", "HTTP_SYNC", "HTTP_POLL", "SIMPLE"]);

/** Issues of a task's `cacheConfig` beyond its shape: a type that caches, and a key whose `${...}` parse and use no secret. */
function cacheConfigIssues(raw: UnknownRecord, path: string): ValidationIssue[] {
  const config = raw["cacheConfig"];
  if (!isRecord(config)) return [];
  const at = childPath(path, "cacheConfig");
  if (typeof raw["type"] === "string" && !CACHEABLE_TYPES.has(raw["type"])) {
    return [{ path: at, message: `cacheConfig caches the output of HTTP, HTTP_SYNC, HTTP_POLL and SIMPLE tasks only, not of a ${raw["type"]} task` }];
  }
  const key = config["key"];
  if (typeof key !== "string" || !hasExpression(key)) return [];
  const issues = findTemplateErrors(key, childPath(at, "key"));
  const secrets = issues.length === 0 ? referencedSecrets(key) : [];
  if (secrets.length > 0) issues.push({ path: childPath(at, "key"), message: `key must not use secrets (${secrets.join(", ")}): cache keys are stored` });
  return issues;
}

/** How deep SWITCH and FORK_JOIN tasks may nest inside one another's branches. */
export const MAX_BRANCH_DEPTH = 10;

/**
 * The problems of `raw` as a task of its `type`. An HTTP or JSON_JQ_TRANSFORM task whose required input is in its task
 * definition's `inputTemplate` (its own `taskDefinition`'s, else the registered one's), as Conductor's
 * WorkflowTaskTypeConstraint reads it, is accepted: it runs with its input laid over that template. Whatever else is
 * wrong is reported as of the task itself.
 */
function typeIssues(type: TaskType, raw: UnknownRecord, path: string, context: ValidationContext): ValidationIssue[] {
  // An accepted definition is not refused for what only a registration's lint rules catch (see `accepted`).
  const check = (task: UnknownRecord) => TASK_VALIDATORS[type](task, path).filter((issue) => context.accepted !== true || !isRegistrationOnly(issue));
  const issues = check(raw);
  if (issues.length === 0 || !TEMPLATE_COMPLETED_TYPES.has(type)) return issues;
  const inline = raw["taskDefinition"];
  const template = isRecord(inline) ? inline["inputTemplate"] : typeof raw["name"] === "string" ? context.registeredInputTemplates?.get(raw["name"]) : undefined;
  if (!isRecord(template)) return issues;
  const input = raw["inputParameters"];
  const { taskDefinition: _inline, ...task } = raw;
  const completed = { ...task, inputParameters: { ...template, ...(isRecord(input) ? input : {}) } };
  return check(completed).length === 0 ? [] : issues;
}

/** Problems in one task and, when it has none, its normalised form. `depth` counts the SWITCH and fork branches it is in. */
function validateTask(raw: unknown, path: string, depth: number, context: ValidationContext): { issues: ValidationIssue[]; task?: WorkflowTaskDef } {
  if (!isRecord(raw)) {
    return { issues: [{ path, message: `each task must be an object, but received ${describeValue(raw)}` }] };
  }
  const issues: ValidationIssue[] = [];
  const common = v.safeParse(context.forked === true ? FORKED_TASK : TASK, raw);
  if (!common.success) issues.push(...toIssues(common.issues, path));

  const type = raw["type"];
  if (isTaskType(type)) issues.push(...typeIssues(type, raw, path, context));
  // A SIMPLE task's name is the task type its workers poll by, in a path (`/api/tasks/poll/{taskType}`) that cannot carry
  // half a character: no worker could ever poll it. A lint, as the definition names' rule is one (checked at registration).
  if (type === "SIMPLE" && context.accepted !== true && typeof raw["name"] === "string" && holdsLoneSurrogate(raw["name"])) {
    issues.push({ path: childPath(path, "name"), message: `name ${LONE_SURROGATE_RULE}: a SIMPLE task's name is the task type its workers poll by in a URL path, which cannot carry it, so no worker could poll it` });
  }
  issues.push(...cacheConfigIssues(raw, path));

  const input = raw["inputParameters"];
  const dynamicChild = type === "DYNAMIC" ? validateDynamicInlineChild(raw, childPath(path, "inputParameters"), nestedContext(context)) : undefined;
  if (dynamicChild !== undefined) issues.push(...dynamicChild.issues);
  // A DYNAMIC's child written in place is checked above as its own definition: its expressions are never the parent's.
  if (isBoundedJsonObject(input)) issues.push(...findTemplateErrors(dynamicChild === undefined ? input : withoutDynamicInlineChild(input), childPath(path, "inputParameters")));

  const subWorkflowParam = raw["subWorkflowParam"];
  const inlineChild = type === "SUB_WORKFLOW" ? validateInlineChild(subWorkflowParam, childPath(path, "subWorkflowParam"), nestedContext(context)) : undefined;
  if (inlineChild !== undefined) issues.push(...inlineChild.issues);
  if (type === "SUB_WORKFLOW" && isRecord(subWorkflowParam)) {
    // The inline child's own expressions are its own (checked above as its definition's), never resolved by the parent.
    if (isBoundedJsonObject(subWorkflowParam)) issues.push(...findTemplateErrors(withoutInlineChild(subWorkflowParam), childPath(path, "subWorkflowParam")));
    else {
      issues.push({
        path: childPath(path, "subWorkflowParam"),
        message: `subWorkflowParam must hold only JSON values, nested no deeper than ${MAX_JSON_DEPTH} levels`,
      });
    }
  }

  // A START_WORKFLOW's definition written in place is checked as a definition of its own: it runs as written.
  if (type === "START_WORKFLOW") issues.push(...startedDefinitionIssues(input, childPath(path, "inputParameters"), nestedContext(context)));

  const rawTaskDefinition = raw["taskDefinition"];
  const taskName = typeof raw["name"] === "string" ? raw["name"] : "";
  const taskDefinition =
    rawTaskDefinition === undefined || rawTaskDefinition === null
      ? undefined
      : validateTaskDef(rawTaskDefinition, { path: childPath(path, "taskDefinition"), inline: { taskName } });
  if (taskDefinition && !taskDefinition.ok) issues.push(...taskDefinition.errors);

  // Checked even when the SWITCH's or fork's own fields are wrong, so that every problem is reported in one round trip.
  const branches = type === "SWITCH" || type === "DECISION" ? validateBranches(raw, path, depth, context) : undefined;
  if (branches !== undefined) issues.push(...branches.issues);
  const forkTasks = type === "FORK_JOIN" ? validateForkBranches(raw, path, depth, context) : undefined;
  if (forkTasks !== undefined) issues.push(...forkTasks.issues);
  const conditional = type === "CONDITIONAL_FORK" ? validateConditionalBranches(raw, path, depth, context) : undefined;
  if (conditional !== undefined) issues.push(...conditional.issues);
  const loopOver = isLoopType(type) ? validateLoopOver(raw, path, depth, context) : undefined;
  if (loopOver !== undefined) issues.push(...loopOver.issues);

  if (issues.length > 0 || !common.success) return { issues };
  const { cacheConfig, startDelay, ...fields } = common.output;
  const task: WorkflowTaskDef = { ...fields };
  if (cacheConfig != null) task.cacheConfig = cacheConfig;
  // Only a worker's task waits it out (Conductor's SimpleTaskMapper); 0, the clients' default, is none.
  if (startDelay !== undefined && startDelay > 0 && task.type === "SIMPLE") task.startDelay = startDelay;
  if (branches !== undefined) {
    if (task.type === "SWITCH") {
      task.evaluatorType = raw["evaluatorType"] as SwitchEvaluatorType;
      task.expression = raw["expression"] as string;
    } else {
      // Checked by validateDecisionTask: each a string when given, one of them not blank.
      const { caseValueParam, caseExpression } = raw as { caseValueParam?: string | null; caseExpression?: string | null };
      if (typeof caseValueParam === "string") task.caseValueParam = caseValueParam;
      if (typeof caseExpression === "string") task.caseExpression = caseExpression;
    }
    task.decisionCases = branches.decisionCases;
    task.defaultCase = branches.defaultCase;
  }
  if (forkTasks !== undefined) task.forkTasks = forkTasks.branches;
  if (conditional !== undefined) {
    task.conditionalBranches = conditional.branches;
    task.defaultCase = conditional.defaultCase;
  }
  if (loopOver !== undefined) {
    task.loopOver = loopOver.tasks;
    const condition = raw["loopCondition"];
    if (typeof condition === "string" && condition !== "") task.loopCondition = condition;
    const evaluatorType = raw["evaluatorType"];
    if (typeof evaluatorType === "string") task.evaluatorType = evaluatorType as SwitchEvaluatorType;
  }
  if (task.type === "JOIN") {
    task.joinOn = Array.isArray(raw["joinOn"]) ? (raw["joinOn"] as string[]) : [];
    // Checked by validateJoinTask: a string, with a JavaScript evaluatorType or none. Kept as given (a blank one too,
    // which Orkes' UI writes): only a non-blank one runs (see joinScript).
    const { expression, evaluatorType } = raw as { expression?: unknown; evaluatorType?: unknown };
    if (typeof expression === "string") {
      task.expression = expression;
      if (typeof evaluatorType === "string") task.evaluatorType = evaluatorType as JoinEvaluatorType;
    }
  }
  if (task.type === "EXCLUSIVE_JOIN") {
    // Checked by validateExclusiveJoinTask: lists of reference names, or none (null is how clients write none).
    const { joinOn, defaultExclusiveJoinTask } = raw as { joinOn?: string[] | null; defaultExclusiveJoinTask?: string[] | null };
    task.joinOn = joinOn ?? [];
    if (defaultExclusiveJoinTask !== undefined && defaultExclusiveJoinTask !== null) task.defaultExclusiveJoinTask = defaultExclusiveJoinTask;
  }
  if (task.type === "FORK_JOIN_DYNAMIC" && !forksEachInput(raw)) {
    // Checked by validateForkJoinDynamicTask: both names given, or dynamicForkJoinTasksParam alone, or none (then
    // inputParameters.forkTaskInputs).
    const { dynamicForkTasksParam, dynamicForkTasksInputParamName, dynamicForkJoinTasksParam } = raw as Pick<WorkflowTaskDef, "dynamicForkTasksParam" | "dynamicForkTasksInputParamName" | "dynamicForkJoinTasksParam">;
    if (dynamicForkTasksParam !== undefined) task.dynamicForkTasksParam = dynamicForkTasksParam;
    if (dynamicForkTasksInputParamName !== undefined) task.dynamicForkTasksInputParamName = dynamicForkTasksInputParamName;
    if (dynamicForkJoinTasksParam !== undefined) task.dynamicForkJoinTasksParam = dynamicForkJoinTasksParam;
  }
  // Checked by validateDynamicTask: a non-empty string.
  if (task.type === "DYNAMIC") task.dynamicTaskNameParam = raw["dynamicTaskNameParam"] as string;
  // Kept normalised, as a SUB_WORKFLOW's inline child: the child starts with the defaults a registration fills in.
  if (dynamicChild?.definition !== undefined) task.inputParameters = { ...task.inputParameters, [SUB_WORKFLOW_DEFINITION_PARAM]: dynamicChild.definition as unknown as JsonObject };
  // Checked by validateEventTask: a string.
  if (task.type === "EVENT") task.sink = raw["sink"] as string;
  if (taskDefinition?.ok) task.taskDefinition = taskDefinition.value;
  if (task.type === "SUB_WORKFLOW") {
    // Only this type reads the task-level placements; for others they are dropped like other unknown keys.
    if (isJsonObject(subWorkflowParam)) {
      const typed = withTextIdempotencyKey(withTextDomains(withTypedVersion(subWorkflowParam)));
      task.subWorkflowParam = inlineChild?.definition === undefined ? typed : { ...typed, workflowDefinition: inlineChild.definition as unknown as JsonObject };
    }
    // Checked by the SUB_WORKFLOW's validator: a boolean, or its text, stored as the boolean.
    const waitForCompletion = jacksonBooleanOf(raw["waitForCompletion"]);
    if (isBoolean(waitForCompletion)) task.waitForCompletion = waitForCompletion;
  }
  return { issues, task };
}

/** `subWorkflowParam` without its inline child definition. */
function withoutInlineChild(subWorkflowParam: JsonObject): JsonObject {
  // An expression giving the child is the parent's, resolved as it runs: checked as any.
  if (!isRecord(subWorkflowParam["workflowDefinition"])) return subWorkflowParam;
  const { workflowDefinition: _child, ...rest } = subWorkflowParam;
  return rest;
}

/** The definition a START_WORKFLOW's input (`startWorkflow.workflowDef`) writes in place, if any (as received). */
export function startedDefinitionOf(input: unknown): UnknownRecord | undefined {
  const request = isRecord(input) ? input["startWorkflow"] : undefined;
  const written = isRecord(request) ? request["workflowDef"] : undefined;
  return isRecord(written) ? written : undefined;
}

/** Problems of the definition a START_WORKFLOW's `startWorkflow.workflowDef` writes in place, with paths inside it. */
function startedDefinitionIssues(input: unknown, path: string, context: ValidationContext): ValidationIssue[] {
  const written = startedDefinitionOf(input);
  if (written === undefined) return [];
  const at = childPath(childPath(path, "startWorkflow"), "workflowDef");
  const checked = validateWorkflowDef(written, context);
  return checked.ok ? [] : checked.errors.map((issue) => ({ ...issue, path: issue.path === "" ? at : issue.path.startsWith("[") ? `${at}${issue.path}` : childPath(at, issue.path) }));
}

/**
 * A SUB_WORKFLOW's inline child (`subWorkflowParam.workflowDefinition`, what the SDK's `toSubWorkflowTask()` writes),
 * checked as a definition of its own, with its paths under `path`; undefined when the task has none. Its name is
 * the child's: a `subWorkflowParam.name` naming another is refused (Conductor takes the definition's).
 */
function validateInlineChild(subWorkflowParam: unknown, path: string, context: ValidationContext): { issues: ValidationIssue[]; definition?: WorkflowDef } | undefined {
  if (!isRecord(subWorkflowParam) || !isRecord(subWorkflowParam["workflowDefinition"])) return undefined;
  return inlineChildIssues(subWorkflowParam["workflowDefinition"], childPath(path, "workflowDefinition"), subWorkflowParam["name"], childPath(path, "name"), context);
}

/**
 * A child definition `given` in place at `at`, checked as a definition of its own (its problems at paths inside it), and
 * its normalised form; `name` (at `nameAt`), when given, must be its name.
 */
function inlineChildIssues(given: UnknownRecord, at: string, name: unknown, nameAt: string, context: ValidationContext): { issues: ValidationIssue[]; definition?: WorkflowDef } {
  const child = validateWorkflowDef(given, context);
  if (!child.ok) return { issues: child.errors.map((issue) => ({ ...issue, path: issue.path === "" ? at : issue.path.startsWith("[") ? `${at}${issue.path}` : childPath(at, issue.path) })) };
  if (typeof name === "string" && name.trim() !== child.value.name) {
    return { issues: [{ path: nameAt, message: `must be the inline child's name (${JSON.stringify(child.value.name)})` }] };
  }
  return { issues: [], definition: child.value };
}

/**
 * A DYNAMIC's child definition written in place in its input (Orkes' `subWorkflowDefinition`), checked as a
 * SUB_WORKFLOW's inline child is when the DYNAMIC may run a SUB_WORKFLOW (its name written so, or an expression):
 * undefined when it has none. `inputPath` is the DYNAMIC's `inputParameters`.
 */
function validateDynamicInlineChild(raw: UnknownRecord, inputPath: string, context: ValidationContext): { issues: ValidationIssue[]; definition?: WorkflowDef } | undefined {
  const child = dynamicInlineChildOf(raw);
  if (child === undefined) return undefined;
  const input = raw["inputParameters"] as UnknownRecord;
  return inlineChildIssues(child, childPath(inputPath, SUB_WORKFLOW_DEFINITION_PARAM), input[SUB_WORKFLOW_NAME_PARAM], childPath(inputPath, SUB_WORKFLOW_NAME_PARAM), context);
}

/**
 * A DYNAMIC's child definition written in place (`inputParameters.subWorkflowDefinition`, as received) when the DYNAMIC
 * may run a SUB_WORKFLOW (its task name written so, or an expression); undefined otherwise.
 */
export function dynamicInlineChildOf(raw: UnknownRecord): UnknownRecord | undefined {
  const input = raw["inputParameters"];
  const param = raw["dynamicTaskNameParam"];
  if (!isRecord(input) || !isRecord(input[SUB_WORKFLOW_DEFINITION_PARAM]) || typeof param !== "string") return undefined;
  const chosen = input[param];
  // Named as another task, the key is that task's input like any other.
  if (chosen !== "SUB_WORKFLOW" && !isExpression(chosen)) return undefined;
  return input[SUB_WORKFLOW_DEFINITION_PARAM];
}

/** A DYNAMIC's `inputParameters` without the child definition written in place. */
function withoutDynamicInlineChild(input: JsonObject): JsonObject {
  const { [SUB_WORKFLOW_DEFINITION_PARAM]: _child, ...rest } = input;
  return rest;
}

/**
 * The tasks of a SWITCH's branches (its own fields already checked), each checked as a task; the normalised
 * branches when none has a problem. The defaultCase is `[]` when absent, as Conductor shows it.
 */
function validateBranches(
  raw: UnknownRecord,
  path: string,
  depth: number,
  context: ValidationContext,
): { issues: ValidationIssue[]; decisionCases: Record<string, WorkflowTaskDef[]>; defaultCase: WorkflowTaskDef[] } {
  const issues: ValidationIssue[] = [];
  const decisionCases: Record<string, WorkflowTaskDef[]> = {};
  if (depth >= MAX_BRANCH_DEPTH) {
    issues.push(tooDeep(childPath(path, "decisionCases")));
    return { issues, decisionCases, defaultCase: [] };
  }
  const validateList = (list: readonly unknown[], listPath: string): WorkflowTaskDef[] => validateTaskList(list, listPath, depth + 1, issues, context);
  const cases = raw["decisionCases"];
  for (const [value, branch] of Object.entries(isRecord(cases) ? cases : {})) {
    // A case that is no list is the SWITCH validator's to report.
    if (Array.isArray(branch)) setOwn(decisionCases, value, validateList(branch, childPath(childPath(path, "decisionCases"), value)));
  }
  const defaultCase = Array.isArray(raw["defaultCase"]) ? validateList(raw["defaultCase"], childPath(path, "defaultCase")) : [];
  return { issues, decisionCases, defaultCase };
}

/**
 * The tasks of a FORK_JOIN's branches (its own fields already checked), each checked as a task; the normalised
 * branches when none has a problem.
 */
function validateForkBranches(raw: UnknownRecord, path: string, depth: number, context: ValidationContext): { issues: ValidationIssue[]; branches: WorkflowTaskDef[][] } {
  const issues: ValidationIssue[] = [];
  const forkTasks = raw["forkTasks"];
  if (!Array.isArray(forkTasks)) return { issues, branches: [] };
  if (depth >= MAX_BRANCH_DEPTH) return { issues: [tooDeep(childPath(path, "forkTasks"))], branches: [] };
  const branches = forkTasks.map((branch: unknown, index) =>
    // A branch that is no list is the FORK_JOIN validator's to report.
    Array.isArray(branch) ? validateTaskList(branch, childPath(childPath(path, "forkTasks"), index), depth + 1, issues, context) : [],
  );
  return { issues, branches };
}

/**
 * The branches of a CONDITIONAL_FORK (its own fields already checked: see `validateConditionalForkTask`), each branch's
 * tasks and its defaultCase's checked as tasks; the normalised branches (a condition given by neither field is none,
 * as Conductor reads it) and defaultCase when none has a problem.
 */
function validateConditionalBranches(
  raw: UnknownRecord,
  path: string,
  depth: number,
  context: ValidationContext,
): { issues: ValidationIssue[]; branches: ConditionalBranch[]; defaultCase: WorkflowTaskDef[] } {
  const issues: ValidationIssue[] = [];
  const given = raw["conditionalBranches"];
  const at = childPath(path, "conditionalBranches");
  if (depth >= MAX_BRANCH_DEPTH) return { issues: [tooDeep(at)], branches: [], defaultCase: [] };
  const validateList = (list: unknown, listPath: string): WorkflowTaskDef[] => (Array.isArray(list) ? validateTaskList(list, listPath, depth + 1, issues, context) : []);
  const branches = (Array.isArray(given) ? given : []).map((branch: unknown, position): ConditionalBranch => {
    // A branch that is no object, or a condition or tasks of the wrong shape, is the CONDITIONAL_FORK validator's to report.
    if (!isRecord(branch)) return { tasks: [] };
    const normalised: ConditionalBranch = { tasks: validateList(branch["tasks"], childPath(childPath(at, position), "tasks")) };
    const condition = branch["condition"];
    if (isRecord(condition) && !isNoCondition(condition)) {
      const { evaluatorType, expression, input, query } = condition as { evaluatorType: SwitchEvaluatorType; expression: string; input?: JsonObject | null; query?: JsonObject | null };
      normalised.condition = { evaluatorType, expression, ...(input == null ? {} : { input }), ...(query == null ? {} : { query }) };
    }
    if (typeof branch["failWorkflowOnFailure"] === "boolean") normalised.failWorkflowOnFailure = branch["failWorkflowOnFailure"];
    return normalised;
  });
  const defaultCase = validateList(raw["defaultCase"], childPath(path, "defaultCase"));
  return { issues, branches, defaultCase };
}

/**
 * The tasks of a DO_WHILE's loopOver (its own fields already checked), each checked as a task; the normalised list
 * when none has a problem. Loops nest (as in Orkes Conductor; a DO_WHILE in a loop runs afresh in each iteration of
 * it); a dynamic fork in a loop forks afresh in each iteration, and may not fork a loop (its fork fails then: see
 * `fork-join-dynamic`).
 */
function validateLoopOver(raw: UnknownRecord, path: string, depth: number, context: ValidationContext): { issues: ValidationIssue[]; tasks: WorkflowTaskDef[] } {
  const issues: ValidationIssue[] = [];
  const loopOver = raw["loopOver"];
  const at = childPath(path, "loopOver");
  // A loopOver that is no list is the DO_WHILE validator's to report.
  if (!Array.isArray(loopOver)) return { issues, tasks: [] };
  if (depth >= MAX_BRANCH_DEPTH) return { issues: [tooDeep(at)], tasks: [] };
  const tasks = validateTaskList(loopOver, at, depth + 1, issues, context);
  return { issues, tasks };
}

function tooDeep(path: string): ValidationIssue {
  return { path, message: `SWITCH, FORK_JOIN, CONDITIONAL_FORK and loop (DO_WHILE, WHILE) tasks may nest at most ${MAX_BRANCH_DEPTH} deep inside one another; move the inner ones into a sub workflow` };
}

/**
 * Checks each task of a list (the definition's, or a branch's) at nesting depth `depth`, and how its FORK_JOIN and JOIN
 * tasks pair up, adding every problem to `issues`; the normalised tasks.
 */
/**
 * A task's fields whose empty text means unset: the Go SDK's client writes every one of them, as "" when not set (a DO_WHILE
 * with `"evaluatorType": ""`, every task with `"dynamicForkJoinTasksParam": ""`), where Conductor reads them as absent.
 */
const BLANK_MEANS_UNSET = [
  "description",
  "dynamicTaskNameParam",
  "caseValueParam",
  "caseExpression",
  "scriptExpression",
  "evaluatorType",
  "expression",
  "dynamicForkJoinTasksParam",
  "dynamicForkTasksParam",
  "dynamicForkTasksInputParamName",
  "sink",
  "loopCondition",
];

/**
 * `tasks` in the forms this service reads, at any depth (branches, cases, loops), from the older forms Conductor reads
 * too: a task without a `type` (or with a null one, or an empty one: the Go SDK's client writes a WorkflowTask built
 * without one as `"type": ""`, as it writes all its unset text, see BLANK_MEANS_UNSET) takes its `workflowTaskType`, the
 * setter Conductor keeps for older clients and the only one the C# SDK's task builders write, else SIMPLE, the field's
 * default; a DO_WHILE's `items`
 * given beside its `inputParameters` (Conductor OSS's form; Orkes' is inside them) goes inside them, unless they give
 * their own. What is no task object is left as it is.
 */
export function withConductorForms(tasks: readonly unknown[]): unknown[] {
  return tasks.map((task) => {
    if (!isRecord(task)) return task;
    const { workflowTaskType, ...rest } = task;
    const out: Record<string, unknown> = rest;
    if (rest["type"] === undefined || rest["type"] === null || rest["type"] === "") out["type"] = typeof workflowTaskType === "string" && workflowTaskType !== "" ? workflowTaskType : "SIMPLE";
    if (isLoopType(out["type"]) && "items" in out) moveLoopItems(out);
    const lists = (value: unknown): unknown => (Array.isArray(value) ? withConductorForms(value) : value);
    if (Array.isArray(rest["forkTasks"])) out["forkTasks"] = rest["forkTasks"].map(lists);
    const conditionalBranches = rest["conditionalBranches"];
    if (Array.isArray(conditionalBranches)) out["conditionalBranches"] = conditionalBranches.map((branch: unknown) => (isRecord(branch) ? { ...branch, tasks: lists(branch["tasks"]) } : branch));
    if (Array.isArray(rest["loopOver"])) out["loopOver"] = withConductorForms(rest["loopOver"]);
    if (Array.isArray(rest["defaultCase"])) out["defaultCase"] = withConductorForms(rest["defaultCase"]);
    const cases = rest["decisionCases"];
    if (isRecord(cases)) out["decisionCases"] = Object.fromEntries(Object.entries(cases).map(([value, branch]) => [value, lists(branch)]));
    return out;
  });
}

/** Moves a DO_WHILE's own `items` (a copy of the task, changed in place) into its `inputParameters`, unless they give theirs. */
function moveLoopItems(loop: Record<string, unknown>): void {
  const items = loop["items"];
  delete loop["items"];
  const inputParameters = loop["inputParameters"];
  if (items === null || items === undefined || (isRecord(inputParameters) && "items" in inputParameters)) return;
  // Not an object (a mistake the checks name): left for them, the items not added to it.
  if (inputParameters !== undefined && inputParameters !== null && !isRecord(inputParameters)) return;
  loop["inputParameters"] = { ...(isRecord(inputParameters) ? inputParameters : {}), items };
}

/**
 * What `""` or `"null"` in a number or boolean field of a workflow task is, as Jackson reads Conductor's WorkflowTask:
 * its int and boolean fields (`startDelay`, `optional`, `permissive`) take 0 or false, its Integer and Boolean ones
 * (`retryCount`, `asyncComplete`) none, and so do the fields Orkes adds.
 */
const TASK_NULLS: JacksonNulls = {
  startDelay: 0,
  optional: false,
  permissive: false,
  retryCount: "unset",
  asyncComplete: "unset",
  retryDelaySeconds: "unset",
  triggerFailureWorkflow: "unset",
  waitForCompletion: "unset",
};

/**
 * What `""` or `"null"` in a number or boolean field of a workflow definition is, as Jackson reads Conductor's
 * WorkflowDef, whose are all primitives: 0 or false (`"version": ""` is version 0, `"restartable": ""` false; a
 * `schemaVersion` of 0 is refused, as Conductor's @Min(2) refuses it). Orkes' `retentionSeconds` none.
 */
const WORKFLOW_NULLS: JacksonNulls = {
  version: 0,
  schemaVersion: 0,
  timeoutSeconds: 0,
  restartable: false,
  workflowStatusListenerEnabled: false,
  enforceSchema: false,
  retentionSeconds: "unset",
};

/**
 * `item` without its null fields (unset, as Conductor reads them: Java and C# clients and Orkes' exports write
 * `"retryCount": null`, `"description": null`) and those {@link BLANK_MEANS_UNSET} names that are "": the same object
 * when it has none.
 */
function withoutUnsetFields(given: unknown): unknown {
  if (!isRecord(given)) return given;
  const item = withJacksonNullText(given, TASK_NULLS);
  const unset = (key: string, value: unknown) => value === null || (value === "" && BLANK_MEANS_UNSET.includes(key));
  if (!Object.entries(item).some(([key, value]) => unset(key, value))) return item;
  return Object.fromEntries(Object.entries(item).filter(([key, value]) => !unset(key, value)));
}

function validateTaskList(given: readonly unknown[], listPath: string, depth: number, issues: ValidationIssue[], context: ValidationContext = {}): WorkflowTaskDef[] {
  const list = given.map(withoutUnsetFields);
  const tasks = list.flatMap((item, index) => {
    const result = validateTask(item, childPath(listPath, index), depth, context);
    issues.push(...result.issues);
    return result.task === undefined ? [] : [result.task];
  });
  issues.push(...forkPairingIssues(list, listPath));
  return tasks;
}

/**
 * What is wrong with how the FORK_JOIN and JOIN tasks of a list pair up. As in Conductor, a FORK_JOIN is followed
 * directly by the JOIN that waits for its branches, and a JOIN follows a FORK_JOIN; its `joinOn` names tasks in that
 * fork's branches (anything else it could never see end). So does a CONDITIONAL_FORK's JOIN follow it, which
 * Conductor's fork asks for as it runs (failing the workflow without one: refused here, as nothing could run it); its
 * `joinOn` is not read, the fork giving it the branches it chose as it runs, as Conductor's does.
 */
function forkPairingIssues(list: readonly unknown[], listPath: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const typeAt = (index: number): unknown => {
    const item = list[index];
    return isRecord(item) ? item["type"] : undefined;
  };
  list.forEach((task, index) => {
    if (!isRecord(task)) return;
    const path = childPath(listPath, index);
    const type = task["type"];
    if ((type === "FORK_JOIN" || type === "FORK_JOIN_DYNAMIC" || type === "CONDITIONAL_FORK") && typeAt(index + 1) !== "JOIN") {
      issues.push({ path, message: `a ${type} must be followed directly by a JOIN task (in the same list), which waits for its branches` });
    }
    if (type !== "JOIN") return;
    const fork = list[index - 1];
    if (!isRecord(fork) || (fork["type"] !== "FORK_JOIN" && fork["type"] !== "FORK_JOIN_DYNAMIC" && fork["type"] !== "CONDITIONAL_FORK")) {
      issues.push({ path, message: "a JOIN must come directly after the FORK_JOIN (or FORK_JOIN_DYNAMIC, or CONDITIONAL_FORK) whose branches it waits for" });
      return;
    }
    const joinOn = task["joinOn"];
    // Only a FORK_JOIN's JOIN reads its joinOn: a CONDITIONAL_FORK's waits for what its fork chose, a FORK_JOIN_DYNAMIC's
    // for what its fork forked. Their forkTasks, empty as the Java client sends every task's, are no branches to check it against.
    if (!Array.isArray(joinOn) || fork["type"] !== "FORK_JOIN" || !Array.isArray(fork["forkTasks"])) return;
    const branchTasks = rawTaskEntries((fork["forkTasks"] as unknown[]).flatMap((branch) => (Array.isArray(branch) ? branch : [])), "");
    const referenceOf = (inner: unknown): unknown => (isRecord(inner) ? inner["taskReferenceName"] : undefined);
    const inBranches = new Set(branchTasks.map(({ task: inner }) => referenceOf(inner)));
    // Read from the loops themselves, not their paths: a SWITCH case may be called "loopOver" too.
    const inLoops = new Set(
      branchTasks.flatMap(({ task: inner }) => (isRecord(inner) && isLoopType(inner["type"]) && Array.isArray(inner["loopOver"]) ? rawTaskEntries(inner["loopOver"], "") : [])).map(({ task: inner }) => referenceOf(inner)),
    );
    joinOn.forEach((reference: unknown, position) => {
      const at = childPath(childPath(path, "joinOn"), position);
      if (typeof reference !== "string" || reference === "") return;
      if (!inBranches.has(reference)) issues.push({ path: at, message: `joinOn names ${JSON.stringify(reference)}, which is not a task in the branches of the FORK_JOIN before this JOIN` });
      // Such a task runs once per iteration: the JOIN would not know which run to wait for.
      else if (inLoops.has(reference)) issues.push({ path: at, message: `joinOn names ${JSON.stringify(reference)}, a task inside a DO_WHILE's (or WHILE's) loopOver; name the DO_WHILE instead, which ends with its loop` });
    });
  });
  return issues;
}

/**
 * Every task of a definition as received, those inside SWITCH and fork branches and DO_WHILE loops included (as deep as
 * they may nest), in plan order, with its path.
 */
export function rawTaskEntries(tasks: readonly unknown[], path: string, depth = 0): Array<{ task: unknown; path: string }> {
  return tasks.flatMap((task, index) => {
    const own = childPath(path, index);
    const entries = [{ task, path: own }];
    if (!isRecord(task) || depth >= MAX_BRANCH_DEPTH) return entries;
    const forkTasks = task["forkTasks"];
    if (task["type"] === "FORK_JOIN" && Array.isArray(forkTasks)) {
      forkTasks.forEach((branch: unknown, index) => {
        if (Array.isArray(branch)) entries.push(...rawTaskEntries(branch, childPath(childPath(own, "forkTasks"), index), depth + 1));
      });
    }
    const branches = task["conditionalBranches"];
    if (task["type"] === "CONDITIONAL_FORK" && Array.isArray(branches)) {
      branches.forEach((branch: unknown, index) => {
        const tasks = isRecord(branch) ? branch["tasks"] : undefined;
        if (Array.isArray(tasks)) entries.push(...rawTaskEntries(tasks, childPath(childPath(childPath(own, "conditionalBranches"), index), "tasks"), depth + 1));
      });
    }
    const loopOver = task["loopOver"];
    if (isLoopType(task["type"]) && Array.isArray(loopOver)) entries.push(...rawTaskEntries(loopOver, childPath(own, "loopOver"), depth + 1));
    if (task["type"] !== "SWITCH" && task["type"] !== "DECISION" && task["type"] !== "CONDITIONAL_FORK") return entries;
    const cases = task["decisionCases"];
    if (isRecord(cases)) {
      for (const [value, branch] of Object.entries(cases)) {
        if (Array.isArray(branch)) entries.push(...rawTaskEntries(branch, childPath(childPath(own, "decisionCases"), value), depth + 1));
      }
    }
    const defaultCase = task["defaultCase"];
    if (Array.isArray(defaultCase)) entries.push(...rawTaskEntries(defaultCase, childPath(own, "defaultCase"), depth + 1));
    return entries;
  });
}

/** The issue of a definition holding more tasks, branches included, than {@link MAX_TASKS_PER_DEFINITION}. */
function taskCountIssues(count: number): ValidationIssue[] {
  if (count <= MAX_TASKS_PER_DEFINITION) return [];
  return [
    {
      path: "tasks",
      message: `a workflow definition may hold at most ${MAX_TASKS_PER_DEFINITION} tasks (counting those inside SWITCH and FORK_JOIN branches and DO_WHILE loops), but this one has ${count}; move groups of tasks into sub workflows`,
    },
  ];
}

/** One issue on each later task reusing a reference name (anywhere, branches included), naming where it was first used. */
function duplicateReferenceNames(entries: ReadonlyArray<{ task: unknown; path: string }>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const firstPath = new Map<string, string>();
  for (const { task, path } of entries) {
    const ref = isRecord(task) ? task["taskReferenceName"] : undefined;
    if (typeof ref !== "string" || ref === "") continue;
    const first = firstPath.get(ref);
    if (first === undefined) {
      firstPath.set(ref, path);
      continue;
    }
    issues.push({
      path: childPath(path, "taskReferenceName"),
      message: `taskReferenceName ${JSON.stringify(ref)} is already used by ${first}; reference names must be unique within a workflow`,
    });
  }
  return issues;
}

/**
 * The reference names of the tasks inside the loops (DO_WHILE, WHILE) of a definition as received, at any depth, each
 * with the path where it is first used: in iteration n such a task runs as `<name>__<n>` too.
 */
function loopTaskReferences(entries: ReadonlyArray<{ task: unknown; path: string }>): Map<string, string> {
  const loopTasks = new Map<string, string>();
  for (const { task, path } of entries) {
    if (!isRecord(task) || !isLoopType(task["type"]) || !Array.isArray(task["loopOver"])) continue;
    for (const inner of rawTaskEntries(task["loopOver"], childPath(path, "loopOver"))) {
      const ref = isRecord(inner.task) ? inner.task["taskReferenceName"] : undefined;
      if (typeof ref === "string" && !loopTasks.has(ref)) loopTasks.set(ref, inner.path);
    }
  }
  return loopTasks;
}

/**
 * The loop task of `loopTasks` (see {@link loopTaskReferences}) whose run `reference` names, and in which iterations
 * (`a__2` is loop task `a`'s in iteration 2, `a__2__3` a task of a nested loop's), or undefined when it names none.
 */
function loopRunOf(reference: string, loopTasks: ReadonlyMap<string, string>): { name: string; path: string; iterations: string[] } | undefined {
  if (loopTasks.size === 0) return undefined;
  // Each `__<n>` at its end may be an iteration of one more loop around the task: `a__1__2` is `a`'s, or `a__1`'s. Read
  // once from the end, looking up only a name as long as a loop task's: a name of many `__1`s (its text is the
  // author's) costs its length, not its length squared.
  const lengths = nameLengthsOf(loopTasks);
  const iterations: string[] = [];
  for (let end = reference.length; ; ) {
    let start = end;
    while (start > 0 && isAsciiDigit(reference.charCodeAt(start - 1))) start--;
    // A run is `<name>__<n>`, its name not empty and `n` without a leading 0.
    if (start === end || reference.charCodeAt(start) === ZERO || start < 3 || !reference.startsWith("__", start - 2)) return undefined;
    iterations.push(reference.slice(start, end));
    end = start - 2;
    const path = lengths.has(end) ? loopTasks.get(reference.slice(0, end)) : undefined;
    if (path !== undefined) return { name: reference.slice(0, end), path, iterations: iterations.reverse() };
  }
}

/** The lengths of the names of each map of loop tasks {@link loopRunOf} was given, found once per map. */
const loopNameLengths = new WeakMap<ReadonlyMap<string, string>, ReadonlySet<number>>();

/** The lengths of the names of `loopTasks` (see {@link loopRunOf}). */
function nameLengthsOf(loopTasks: ReadonlyMap<string, string>): ReadonlySet<number> {
  let lengths = loopNameLengths.get(loopTasks);
  if (lengths === undefined) loopNameLengths.set(loopTasks, (lengths = new Set([...loopTasks.keys()].map((name) => name.length))));
  return lengths;
}

/** The character code of `0`. */
const ZERO = 48;

/** Whether `code` is the character code of an ASCII digit. */
function isAsciiDigit(code: number): boolean {
  return code >= ZERO && code <= ZERO + 9;
}

/**
 * One issue on each task whose reference name is one a loop task's run takes (`a__2` is loop task `a`'s in iteration
 * 2, `a__2__3` a task of a nested loop's): expressions, completions by name and the task list could not tell them apart.
 */
function loopRunNameClashes(entries: ReadonlyArray<{ task: unknown; path: string }>): ValidationIssue[] {
  const loopTasks = loopTaskReferences(entries);
  if (loopTasks.size === 0) return [];
  return entries.flatMap(({ task, path }) => {
    const ref = isRecord(task) ? task["taskReferenceName"] : undefined;
    const run = typeof ref === "string" ? loopRunOf(ref, loopTasks) : undefined;
    if (run === undefined) return [];
    const which = run.iterations.length === 1 ? `iteration ${run.iterations[0]}` : `iterations ${run.iterations.join(", ")} of its loops`;
    return [{ path: childPath(path, "taskReferenceName"), message: `taskReferenceName ${JSON.stringify(ref)} is the name loop task ${JSON.stringify(run.name)} (${run.path}) takes in ${which}; choose another` }];
  });
}

/**
 * What of a task as received its workflow resolves as `${…}` templates when it schedules the task, each with its path:
 * its `inputParameters`, a SUB_WORKFLOW's `subWorkflowParam`, an EVENT's `sink`, its own `taskDefinition`'s
 * `inputTemplate`. A definition written in place there (a
 * SUB_WORKFLOW's inline child, a START_WORKFLOW's `workflowDef`, a DYNAMIC's `subWorkflowDefinition`) is left out: its
 * expressions are its own, checked with it as a definition of its own.
 */
function resolvedTemplates(task: UnknownRecord, path: string): Array<{ value: JsonValue; path: string }> {
  const templates: Array<{ value: JsonValue; path: string }> = [];
  const input = task["inputParameters"];
  if (isBoundedJsonObject(input)) {
    let resolved = task["type"] === "DYNAMIC" && dynamicInlineChildOf(task) !== undefined ? withoutDynamicInlineChild(input) : input;
    const request = resolved[START_WORKFLOW_PARAMETER];
    if (task["type"] === "START_WORKFLOW" && isJsonObject(request) && startedDefinitionOf(resolved) !== undefined) {
      const { workflowDef: _written, ...rest } = request;
      resolved = { ...resolved, [START_WORKFLOW_PARAMETER]: rest };
    }
    templates.push({ value: resolved, path: childPath(path, "inputParameters") });
  }
  const subWorkflowParam = task["subWorkflowParam"];
  if (task["type"] === "SUB_WORKFLOW" && isBoundedJsonObject(subWorkflowParam)) templates.push({ value: withoutInlineChild(subWorkflowParam), path: childPath(path, "subWorkflowParam") });
  const sink = task["sink"];
  if (task["type"] === "EVENT" && typeof sink === "string") templates.push({ value: sink, path: childPath(path, "sink") });
  // Its own task definition's inputTemplate is written with it, for this workflow: its defaults are resolved as the
  // input is (see `resolvedTaskInput`). A registered one's is shared by every workflow with a task of its name, and not read.
  const inline = task["taskDefinition"];
  const inputTemplate = isRecord(inline) ? inline["inputTemplate"] : undefined;
  if (isBoundedJsonObject(inputTemplate)) templates.push({ value: inputTemplate, path: childPath(childPath(path, "taskDefinition"), "inputTemplate") });
  return templates;
}

/** How much of an expression, or of a name, a message about it quotes. */
const MAX_QUOTED_EXPRESSION = 80;

/** How many of the unknown names a definition's expressions read get a "did you mean" hint (see {@link undefinedReferenceIssues}). */
const MAX_HINTED_REFERENCES = 20;

/**
 * What of a workflow definition as received its executions resolve as `${…}` templates, besides its tasks', each with
 * who reads it and its path: its `outputParameters` (as it ends), its `failureWorkflow` (as it fails, naming the
 * workflow to start) and its rate limit's `rateLimitKey` (as it starts or reopens).
 */
function workflowTemplates(given: UnknownRecord): Array<{ reader: string; value: JsonValue; path: string }> {
  const templates: Array<{ reader: string; value: JsonValue; path: string }> = [];
  const outputParameters = given["outputParameters"];
  if (isBoundedJsonObject(outputParameters)) templates.push({ reader: "the workflow's outputParameters", value: outputParameters, path: "outputParameters" });
  const failureWorkflow = given["failureWorkflow"];
  if (typeof failureWorkflow === "string") templates.push({ reader: "the workflow's failureWorkflow", value: failureWorkflow, path: "failureWorkflow" });
  const rateLimit = given["rateLimitConfig"];
  const rateLimitKey = isRecord(rateLimit) ? rateLimit["rateLimitKey"] : undefined;
  if (typeof rateLimitKey === "string") templates.push({ reader: "the workflow's rateLimitKey", value: rateLimitKey, path: "rateLimitConfig.rateLimitKey" });
  return templates;
}

/**
 * One issue for each task reference name that an expression of the definition's tasks (see {@link resolvedTemplates},
 * in branches and loops too) or of the workflow's own templates (see {@link workflowTemplates}) reads and no task of it has (in any branch or loop; a loop
 * task's run, `<name>__<n>`, counts as its task's): such an expression can only resolve to null, as a misspelt name
 * (`${get_usr.output.body}`) would. Conductor OSS refuses the same at registration (ConstraintParamUtil: "... is not
 * defined in workflow definition"), though only for its top-level tasks' inputs. Nothing is refused in a definition
 * holding a FORK_JOIN_DYNAMIC: the tasks it forks are named as it runs (by a prefork task's output), and may be read by
 * those names.
 */
function undefinedReferenceIssues(entries: ReadonlyArray<{ task: unknown; path: string }>, workflowLevel: ReadonlyArray<{ reader: string; value: JsonValue; path: string }>): ValidationIssue[] {
  if (entries.some(({ task }) => isRecord(task) && task["type"] === "FORK_JOIN_DYNAMIC")) return [];
  const referenceOf = (task: unknown): string | undefined => {
    const ref = isRecord(task) ? task["taskReferenceName"] : undefined;
    return typeof ref === "string" ? ref : undefined;
  };
  const defined = new Set(entries.flatMap(({ task }) => referenceOf(task) ?? []));
  const loopTasks = loopTaskReferences(entries);
  // Each hint compares the name with every task's: one per name, for the first few names only, so that thousands of
  // unknown names in one request cost no more than those few (a human fixes a few misspellings at a time).
  const options = [...defined];
  const hints = new Map<string, string | undefined>();
  const hintFor = (reference: string): string | undefined => {
    if (!hints.has(reference) && hints.size < MAX_HINTED_REFERENCES) hints.set(reference, likelyMeant(reference, options));
    return hints.get(reference);
  };
  const issuesOf = (reader: string, value: JsonValue, path: string, scriptPath?: string): ValidationIssue[] =>
    taskReferencesIn(value, path).flatMap((found) =>
      defined.has(found.reference) || loopRunOf(found.reference, loopTasks) !== undefined ? [] : [undefinedReferenceIssue(reader, found, hintFor(found.reference), found.path === scriptPath)],
    );
  const issues = entries.flatMap(({ task, path }) => {
    if (!isRecord(task)) return [];
    const ref = referenceOf(task);
    const reader = ref === undefined ? "the task" : `task ${JSON.stringify(ref)}`;
    const script = taskScript(task);
    return resolvedTemplates(task, path).flatMap(({ value, path: at }) => issuesOf(reader, value, at, script === undefined ? undefined : `${path}.${script.field}`));
  });
  for (const { reader, value, path } of workflowLevel) issues.push(...issuesOf(reader, value, path));
  return issues;
}

/**
 * One issue for each expression of the definition (where {@link undefinedReferenceIssues} looks) that reads a field of
 * the workflow it has not, by a near miss of one it has: `${workflow.inputs.x}`, `${workflow.Input.x}`,
 * `${workflow.varaibles.n}`. Conductor accepts these, and they resolve to null as it runs; a name near none (Orkes may
 * show fields this service does not) is left alone.
 */
function misspeltWorkflowFieldIssues(entries: ReadonlyArray<{ task: unknown; path: string }>, workflowLevel: ReadonlyArray<{ reader: string; value: JsonValue; path: string }>): ValidationIssue[] {
  const readers = entries.flatMap(({ task, path }) => {
    if (!isRecord(task)) return [];
    const ref = task["taskReferenceName"];
    const reader = typeof ref === "string" ? `task ${JSON.stringify(ref)}` : "the task";
    return resolvedTemplates(task, path).map(({ value, path: at }) => ({ reader, value, path: at }));
  });
  const known: readonly string[] = WORKFLOW_FIELDS;
  // One comparison with the fields per name, however many strings read it.
  const meantBy = new Map<string, string | undefined>();
  const meantFor = (field: string): string | undefined => {
    if (!meantBy.has(field)) meantBy.set(field, known.includes(field) ? undefined : likelyMeant(field, known));
    return meantBy.get(field);
  };
  return [...readers, ...workflowLevel].flatMap(({ reader, value, path }) =>
    workflowFieldsIn(value, path).flatMap(({ field, path: at, expression }) => {
      const meant = meantFor(field);
      if (meant === undefined) return [];
      const shown = expression.length <= MAX_QUOTED_EXPRESSION ? expression : `${cutText(expression, MAX_QUOTED_EXPRESSION - 1)}…`;
      return [{ path: at, message: `${reader} reads workflow.${field} in ${shown}, a field the workflow does not have, so it would resolve to null; did you mean workflow.${meant}?` }];
    }),
  );
}

/**
 * The issue of `reader` reading a task reference name the definition does not hold (see {@link undefinedReferenceIssues}),
 * with the name it likely `meant`, if any; `inScript` when the expression is in a script's text (an INLINE's
 * `expression`), where it is most likely JavaScript's own template literal, which `$${…}` writes.
 */
function undefinedReferenceIssue(reader: string, { reference, path, expression }: TaskReference, meant: string | undefined, inScript: boolean): ValidationIssue {
  // A name is as long as its author made it: quoted, as the expression, by its start.
  const quoted = (text: string): string => (text.length <= MAX_QUOTED_EXPRESSION ? text : `${cutText(text, MAX_QUOTED_EXPRESSION - 1)}…`);
  return {
    path,
    message: `${reader} reads ${JSON.stringify(quoted(reference))} in ${quoted(expression)}, a taskReferenceName not defined in this workflow definition (no task has it, in any branch or loop), so it would resolve to null${meant === undefined ? "" : `; did you mean ${JSON.stringify(meant)}?`}${inScript ? "; in a script, JavaScript's own ${…} is written $${…}" : ""}`,
  };
}

/**
 * A task's own `subWorkflowParam` with its version stored as Conductor reads it into its Integer: digits given as text
 * (a sign and spaces around allowed) as their number, "", blank or "null" as none. Kept as text, it failed the Java and Go clients' reads of the definition and of every
 * execution showing it.
 */
function withTypedVersion(param: JsonObject): JsonObject {
  const version = param["version"];
  if (typeof version !== "string") return param;
  const { version: _text, ...rest } = param;
  if (isJacksonNullText(version)) return rest;
  // Read as the registration's check read it (isStartedVersion): a sign, spaces and control characters around too.
  const number = integerFromText(version);
  return typeof number === "number" ? { ...rest, version: number } : param;
}

/**
 * A task's own `subWorkflowParam` with the domains of its `taskToDomain` stored as Conductor reads them into
 * SubWorkflowParams' `Map<String, String>`: a number or boolean as its text (`7` as `"7"`, as Jackson coerces it). Kept
 * as a number, it failed the Go client's read of the definition and of every execution showing it (its `map[string]string`
 * takes no number). Null domains (none for that task) stay as they are.
 */
function withTextDomains(param: JsonObject): JsonObject {
  const domains = param["taskToDomain"];
  if (!isJsonObject(domains)) return param;
  const entries = Object.entries(domains);
  if (!entries.some(([, domain]) => typeof domain === "number" || typeof domain === "boolean")) return param;
  return { ...param, taskToDomain: Object.fromEntries(entries.map(([task, domain]) => [task, typeof domain === "number" || typeof domain === "boolean" ? String(domain) : domain])) };
}

/**
 * A task's own `subWorkflowParam` with its `idempotencyKey` stored as Conductor reads it into SubWorkflowParams'
 * String: a number or boolean as its text (`42` as `"42"`, as Jackson coerces it, and as the child is keyed when it
 * starts: idempotencyKeyOf). Kept as a number, it failed the Go client's read of the definition and of every execution
 * showing it (its SubWorkflowParams.IdempotencyKey is a string).
 */
function withTextIdempotencyKey(param: JsonObject): JsonObject {
  const key = param["idempotencyKey"];
  return typeof key !== "string" && isTextScalar(key) ? { ...param, idempotencyKey: String(key) } : param;
}

/**
 * The definition without its null fields, which Conductor reads as unset (Java and C# clients, and definitions exported
 * from Orkes, write every unset field as null: `"description": null`, `"timeoutSeconds": null`; the Go SDK its unset
 * maps), nor a blank `failureWorkflow`, `ownerEmail` or `timeoutPolicy` ("" or only spaces), which some clients and forms
 * send for "none" and Conductor reads so (`StringUtils.isBlank`; its @Email check passes ""; the Go SDK's unset
 * `timeoutPolicy`).
 */
function withoutBlankFields(given: Record<string, unknown>): Record<string, unknown> {
  const input = withJacksonNullText(given, WORKFLOW_NULLS);
  const blankText = ["failureWorkflow", "ownerEmail", "timeoutPolicy"];
  const blank = (field: string, value: unknown) => value === null || (blankText.includes(field) && typeof value === "string" && value.trim() === "");
  const fields = Object.keys(input).filter((field) => blank(field, input[field]));
  if (fields.length === 0) return input;
  return Object.fromEntries(Object.entries(input).filter(([key]) => !fields.includes(key)));
}

/**
 * Conductor's older `failureWorkflow` form, `$workflow.input.<key>`: Conductor splits the text on `.` and reads the input
 * key after `input` (WorkflowExecutor.terminate), so the key may hold anything but a dot (`on-failure`, `größe`, `$ref`).
 */
const LEGACY_FAILURE_WORKFLOW = /^\s*\$workflow\.input\.([^.]+?)\s*$/;

/** A key a dotted step writes as it is: any other is written as a bracket's quoted key, which reads any text. */
const PLAIN_INPUT_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The definition with Conductor's older `failureWorkflow` form, `$workflow.input.<key>` (the name the input gives,
 * which Conductor's own integration tests use), written as the expression it stands for: `${workflow.input.<key>}`, or
 * `${workflow.input['<key>']}` for a key that is not a plain name.
 */
function withFailureWorkflowExpression(input: Record<string, unknown>): Record<string, unknown> {
  const failureWorkflow = input["failureWorkflow"];
  // A `${` makes it a template (`$workflow.input.${…}`), resolved as one, as before this form was read more widely.
  const key = typeof failureWorkflow === "string" && !hasExpression(failureWorkflow) ? LEGACY_FAILURE_WORKFLOW.exec(failureWorkflow)?.[1] : undefined;
  if (key === undefined) return input;
  const step = PLAIN_INPUT_KEY.test(key) ? `.${key}` : `['${key.replace(/[\\']/g, "\\$&")}']`;
  return { ...input, failureWorkflow: `\${workflow.input${step}}` };
}

/**
 * What is wrong with a `failureWorkflow` beyond its type: bad `${...}` syntax, a secret (a workflow name is stored
 * and shown), or, given literally, a name no definition can have.
 */
function failureWorkflowIssues(value: unknown): ValidationIssue[] {
  if (typeof value !== "string" || value.trim() === "") return [];
  if (hasExpression(value)) {
    const issues = findTemplateErrors(value, "failureWorkflow");
    const secrets = issues.length === 0 ? referencedSecrets(value) : [];
    if (secrets.length > 0) issues.push({ path: "failureWorkflow", message: `failureWorkflow must not use secrets (${secrets.join(", ")}): the name it gives is stored and shown` });
    return issues;
  }
  if (value.includes(":")) return [{ path: "failureWorkflow", message: "failureWorkflow must not contain ':' (no workflow name can)" }];
  return [];
}

/** Most tasks one run of a FORK_JOIN_DYNAMIC may fork, counting those inside forked SWITCH branches and loops. */
export const MAX_FORKED_TASKS = 1_000;

/**
 * Checks the tasks a FORK_JOIN_DYNAMIC is about to fork (one branch each), as received at run time, at paths under
 * `path`: each as a task of a definition, of a type that can be forked (see `FORKABLE_TYPES`), no FORK_JOIN_DYNAMIC
 * inside, no reference name used twice or already used by one of `taken` (the execution's other tasks). Returns every
 * problem, or the normalised tasks.
 */
export function validateForkedTasks(given: readonly unknown[], path: string, taken: ReadonlySet<string>): { ok: true; tasks: WorkflowTaskDef[] } | { ok: false; errors: ValidationIssue[] } {
  const raw = withConductorForms(given);
  const issues: ValidationIssue[] = [];
  // Accepted: a rule that only catches an author's mistake at registration (a uri of another scheme) does not fail the
  // fork; the task fails as it runs, as Conductor's forked task does, so an optional one lets the fork go on. Rules
  // protecting the run (what the engine cannot run, secrets, sizes) still fail it.
  const tasks = validateTaskList(raw, path, 1, issues, { forked: true, accepted: true });
  const entries = rawTaskEntries(raw, path, 1);
  if (entries.length > MAX_FORKED_TASKS) issues.push({ path, message: `a FORK_JOIN_DYNAMIC may fork at most ${MAX_FORKED_TASKS} tasks (counting those inside forked SWITCH branches and loops), but was given ${entries.length}; fork sub workflows over batches instead` });
  issues.push(...duplicateReferenceNames(entries), ...loopRunNameClashes(entries));
  raw.forEach((task, index) => {
    const type = isRecord(task) ? task["type"] : undefined;
    if (type === "FORK_JOIN" || type === "CONDITIONAL_FORK" || type === "JOIN") issues.push({ path: childPath(childPath(path, index), "type"), message: `a ${type} cannot be forked by a FORK_JOIN_DYNAMIC (each branch is one task); fork a SUB_WORKFLOW whose definition holds it` });
  });
  for (const { task, path: at } of entries) {
    if (!isRecord(task)) continue;
    if (task["type"] === "FORK_JOIN_DYNAMIC") issues.push({ path: childPath(at, "type"), message: "a FORK_JOIN_DYNAMIC cannot be forked by another (at any depth); fork a SUB_WORKFLOW whose definition holds it" });
    const ref = task["taskReferenceName"];
    if (typeof ref === "string" && taken.has(ref)) issues.push({ path: childPath(at, "taskReferenceName"), message: `taskReferenceName ${JSON.stringify(ref)} is already used by a task of this workflow; reference names must be unique within a workflow` });
  }
  return issues.length > 0 ? { ok: false, errors: issues } : { ok: true, tasks };
}

/**
 * Every problem with the task a DYNAMIC chose to run (see `chooseDynamicTask`), checked as a registration checks a task
 * of its type, with paths from the task itself (`inputParameters.http_request`). Written in a registered definition, it
 * is not refused for what only a registration's lint rules catch (see `ValidationContext.accepted`).
 */
export function concreteTaskIssues(task: WorkflowTaskDef): ValidationIssue[] {
  return validateTask(task, "", 0, { accepted: true }).issues;
}

/** Validates a workflow definition as received over the API (unknown JSON) and returns it normalised (defaults filled) or every problem found. */
export function validateWorkflowDef(input: unknown, context: ValidationContext = {}): DefinitionResult {
  if (!isRecord(input)) {
    return { ok: false, errors: [{ path: "", message: `a workflow definition must be a JSON object, but received ${describeValue(input)}` }] };
  }
  const issues: ValidationIssue[] = [];
  const given = withFailureWorkflowExpression(withoutBlankFields(input));
  const root = v.safeParse(WORKFLOW, given);
  if (!root.success) issues.push(...toIssues(root.issues, ""));

  const rawTasks = Array.isArray(given["tasks"]) ? withConductorForms(given["tasks"]) : given["tasks"];
  const tasks: WorkflowTaskDef[] = [];
  if (Array.isArray(rawTasks)) {
    // Tasks are checked even beyond the limit, so fixing the count does not reveal a second round of errors.
    tasks.push(...validateTaskList(rawTasks, "tasks", 0, issues, context));
    const entries = rawTaskEntries(rawTasks, "tasks");
    issues.push(...taskCountIssues(entries.length), ...duplicateReferenceNames(entries), ...loopRunNameClashes(entries));
    // A lint: a definition accepted before this rule, and run since, is not refused for it as it runs again.
    if (context.accepted !== true) {
      const workflowLevel = workflowTemplates(given);
      issues.push(...undefinedReferenceIssues(entries, workflowLevel), ...misspeltWorkflowFieldIssues(entries, workflowLevel));
    }
  }

  const outputParameters = given["outputParameters"];
  if (isBoundedJsonObject(outputParameters)) issues.push(...findTemplateErrors(outputParameters, "outputParameters"));
  issues.push(...failureWorkflowIssues(given["failureWorkflow"]));
  issues.push(...rateLimitKeyIssues(given["rateLimitConfig"], "rateLimitConfig"));

  if (issues.length > 0 || !root.success) return { ok: false, errors: issues };
  const { rateLimitConfig, maskedFields, ...fields } = root.output;
  const value: WorkflowDef = { ...fields, tasks };
  const limit = rateLimitConfigOf(rateLimitConfig);
  if (limit !== undefined) value.rateLimitConfig = limit;
  if (maskedFields !== undefined && maskedFields !== null && maskedFields.length > 0) value.maskedFields = [...new Set(maskedFields)];
  return { ok: true, value };
}
