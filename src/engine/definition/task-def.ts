/**
 * Validation and normalisation of task definitions (Conductor's `TaskDef`), registered on their own or
 * given inline as a workflow task's `taskDefinition`. Conductor's defaults fill what is left out (three
 * retries a minute apart, an hour's response timeout), so a definition behaves here as it does there.
 */
import { holdsLoneSurrogate, isDotSegment } from "../http-syntax";
import * as v from "valibot";
import { findTemplateErrors, referencedSecrets } from "../expressions";
import { RETRY_LOGICS, TIMEOUT_POLICIES, type JsonObject, type RetryLogic, type TaskDef, type TimeoutPolicy, type WorkflowDef, type WorkflowTaskDef } from "../model";
import { MAX_RETRY_COUNT, MAX_RETRY_DELAY_SECONDS } from "../retry";
import { allTasks, mapTasks } from "../plan";
import { childPath, type ValidationIssue } from "../validation-issue";
import { booleanRule, describeValue, enumOrItsPosition, type JacksonNulls, withJacksonNullText, exceedsJsonDepth, fieldsOf, isBoundedJsonObject, integerRule, isEmailAddress, isJsonObject, isOneOf, isRecord, isString, MAX_JAVA_INT, MAX_JSON_DEPTH, rule, schemaReference, toIssues } from "./checks";

/** Longest task definition name, as for workflow names. */
export const MAX_TASK_DEF_NAME_LENGTH = 255;

/** The outcome of {@link validateTaskDef}. */
export type TaskDefResult = { ok: true; value: TaskDef } | { ok: false; errors: ValidationIssue[] };

const MAX_SECONDS = Number.MAX_SAFE_INTEGER;

function seconds(field: string, min: number, max: number = MAX_SECONDS) {
  const expected = max === MAX_SECONDS ? `a whole number of seconds of at least ${min}` : `an integer from ${min} to ${max}`;
  return integerRule(field, expected, min, max);
}

/** An optional whole number of at least 0; at most `max` (Java's int, by default: Conductor's TaskDef holds these as Integer). */
function optionalCount(field: string, max = MAX_JAVA_INT) {
  return v.optional(integerRule(field, max === MAX_JAVA_INT ? `an integer from 0 to ${MAX_JAVA_INT}` : "an integer of at least 0", 0, max));
}

/** An object of JSON values, nested no deeper than {@link MAX_JSON_DEPTH}. */
function jsonObject(field: string) {
  return v.pipe(
    rule<JsonObject>(field, "an object of JSON values", isJsonObject),
    v.check((value: JsonObject) => !exceedsJsonDepth(value), `${field} must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels`),
  );
}

function names(field: string) {
  return v.optional(rule<string[]>(field, "an array of strings", (value) => Array.isArray(value) && value.every(isString)));
}

const TASK_DEF_NAME = rule<string>(
  "name",
  `a non-empty string of at most ${MAX_TASK_DEF_NAME_LENGTH} characters, not . or .., without a lone surrogate (half of a character, which no URL can name)`,
  (value) => typeof value === "string" && value.trim() !== "" && value.length <= MAX_TASK_DEF_NAME_LENGTH && !isDotSegment(value) && !holdsLoneSurrogate(value),
);

/** Every field but the name; Conductor's defaults where one is left out. Unknown keys are dropped. */
const SETTINGS = {
  description: v.optional(rule<string>("description", "a string", isString)),
  retryCount: v.optional(integerRule("retryCount", `an integer from 0 to ${MAX_RETRY_COUNT}`, 0, MAX_RETRY_COUNT), 3),
  // Conductor's TaskDef.RetryLogic and TimeoutPolicy, in their Java order: Jackson takes a constant's position too.
  retryLogic: v.optional(enumOrItsPosition(rule<RetryLogic>("retryLogic", `one of ${RETRY_LOGICS.join(", ")}`, isOneOf(RETRY_LOGICS)), ["FIXED", "EXPONENTIAL_BACKOFF", "LINEAR_BACKOFF"]), "FIXED"),
  retryDelaySeconds: v.optional(seconds("retryDelaySeconds", 0, MAX_RETRY_DELAY_SECONDS), 60),
  backoffScaleFactor: v.optional(seconds("backoffScaleFactor", 1, MAX_RETRY_DELAY_SECONDS), 1),
  maxRetryDelaySeconds: v.optional(seconds("maxRetryDelaySeconds", 0, MAX_RETRY_DELAY_SECONDS)),
  backoffJitterMs: v.optional(integerRule("backoffJitterMs", `an integer from 0 to ${MAX_RETRY_DELAY_SECONDS * 1000}`, 0, MAX_RETRY_DELAY_SECONDS * 1000)),
  timeoutSeconds: v.optional(seconds("timeoutSeconds", 0), 0),
  timeoutPolicy: v.optional(enumOrItsPosition(rule<TimeoutPolicy>("timeoutPolicy", `one of ${TIMEOUT_POLICIES.join(", ")}`, isOneOf(TIMEOUT_POLICIES)), ["RETRY", "TIME_OUT_WF", "ALERT_ONLY"]), "TIME_OUT_WF"),
  responseTimeoutSeconds: v.optional(seconds("responseTimeoutSeconds", 1), 3600),
  inputTemplate: v.optional(jsonObject("inputTemplate")),
  inputKeys: names("inputKeys"),
  outputKeys: names("outputKeys"),
  // The official clients send "" when no owner is given (held to an address only when registered: see REGISTERED).
  ownerEmail: v.optional(rule<string>("ownerEmail", "a string", isString)),
  // Conductor's Auditable field, kept and shown as given.
  ownerApp: v.optional(rule<string>("ownerApp", "a string", isString)),
  // Conductor OSS's free-form metadata map (its TaskDef's, as a WorkflowDef's): data, kept as given (never resolved).
  metadata: v.optional(jsonObject("metadata")),
  concurrentExecLimit: optionalCount("concurrentExecLimit"),
  rateLimitPerFrequency: optionalCount("rateLimitPerFrequency"),
  rateLimitFrequencyInSeconds: optionalCount("rateLimitFrequencyInSeconds"),
  pollTimeoutSeconds: optionalCount("pollTimeoutSeconds"),
  // Orkes' is a long.
  totalTimeoutSeconds: optionalCount("totalTimeoutSeconds", Number.MAX_SAFE_INTEGER),
  // Orkes' schemas of the task's input and output (their existence is checked by the worker, which reads the registry).
  inputSchema: v.optional(schemaReference("inputSchema")),
  outputSchema: v.optional(schemaReference("outputSchema")),
  enforceSchema: v.optional(booleanRule("enforceSchema")),
};

/**
 * A registered definition's `ownerEmail`: an e-mail address, as Conductor's TaskDef holds it (`@Email`, "ownerEmail should
 * be valid email address"), or blank for none ("" passes `@Email`; the official clients send it when no owner is given).
 */
const REGISTERED_OWNER_EMAIL = v.optional(
  v.pipe(
    rule<string>("ownerEmail", "an e-mail address such as owner@example.com", isString),
    v.check(
      (value: string) => value.trim() === "" || isEmailAddress(value),
      (issue) => `ownerEmail must be an e-mail address such as owner@example.com, but received ${describeValue(issue.input)}`,
    ),
  ),
);

// A workflow task's own taskDefinition (INLINE) is not held to the address: Conductor validates none of its fields.
const REGISTERED = fieldsOf({ name: TASK_DEF_NAME, ...SETTINGS, ownerEmail: REGISTERED_OWNER_EMAIL });
const INLINE = fieldsOf({
  name: v.optional(TASK_DEF_NAME),
  ...SETTINGS,
  // Conductor validates a workflow task's own taskDefinition with none of TaskDef's constraints (WorkflowTask's field
  // has no @Valid), and its decider reads a responseTimeoutSeconds of 0 as no response timeout. The Rust SDK's
  // EmbeddedTaskDef sends 0 for what is not set (its task_status_change_audit example), which was a 400 here.
  responseTimeoutSeconds: v.optional(seconds("responseTimeoutSeconds", 0), 3600),
});

/**
 * Validates a task definition as received over the API and returns it normalised, or every problem found
 * at paths under `path`. `inline` is a workflow task's `taskDefinition`: its name may be left out and is then
 * the task's (`taskName`). A registered one may not use secrets in its `inputTemplate`: it would hand them to
 * every workflow with a task of that name, whoever registered that workflow (a workflow's own definition uses
 * secrets only when its registrant may).
 */
export function validateTaskDef(input: unknown, options: { path?: string; inline?: { taskName: string } } = {}): TaskDefResult {
  const path = options.path ?? "";
  if (!isRecord(input)) {
    return { ok: false, errors: [{ path, message: `a task definition must be a JSON object, but received ${describeValue(input)}` }] };
  }
  const parsed = v.safeParse(options.inline ? INLINE : REGISTERED, withoutNullFields(input));
  const issues: ValidationIssue[] = parsed.success ? [] : toIssues(parsed.issues, path);

  const template = input["inputTemplate"];
  if (isBoundedJsonObject(template)) {
    const templatePath = childPath(path, "inputTemplate");
    issues.push(...findTemplateErrors(template, templatePath));
    if (!options.inline) {
      const secrets = referencedSecrets(template);
      if (secrets.length > 0) {
        issues.push({
          path: templatePath,
          message: `inputTemplate must not use secrets (${secrets.join(", ")}): a registered task definition is shared by every workflow with a task of its name; use the secret in the workflow definition instead`,
        });
      }
    }
  }
  if (!parsed.success || issues.length > 0) return { ok: false, errors: issues };

  const value = parsed.output;
  if (value.timeoutSeconds > 0 && value.responseTimeoutSeconds > value.timeoutSeconds) {
    // A workflow task's own taskDefinition is not held to the rule in Conductor (it checks registered ones only; its
    // tests give an inline {timeoutSeconds: 120, responseTimeoutSeconds: 3600}): the task times out within
    // timeoutSeconds anyway, which is what its response timeout then is.
    if (options.inline) return { ok: true, value: { ...value, responseTimeoutSeconds: value.timeoutSeconds, name: value.name ?? options.inline.taskName } };
    // Conductor's own rule, so a definition accepted here is accepted there too.
    return {
      ok: false,
      errors: [
        {
          path: childPath(path, "responseTimeoutSeconds"),
          message: `responseTimeoutSeconds (${value.responseTimeoutSeconds}${input["responseTimeoutSeconds"] === undefined ? ", its default" : ""}) must not exceed timeoutSeconds (${value.timeoutSeconds}) when timeoutSeconds is set`,
        },
      ],
    };
  }
  const total = value.totalTimeoutSeconds ?? 0;
  // Conductor's TaskTimeoutConstraint, for registered definitions as the rule above.
  if (!options.inline && total > 0 && value.timeoutSeconds > total) {
    return { ok: false, errors: [{ path: childPath(path, "timeoutSeconds"), message: `timeoutSeconds (${value.timeoutSeconds}) must not exceed totalTimeoutSeconds (${total}) when both are set` }] };
  }
  return { ok: true, value: { ...value, name: value.name ?? options.inline?.taskName ?? "" } };
}

/**
 * `fields` as Jackson reads their nulls into Conductor's TaskDef: a null int, long or boolean field (`retryCount`,
 * `retryDelaySeconds`, `responseTimeoutSeconds`, …) is 0 or false, not its default (FAIL_ON_NULL_FOR_PRIMITIVES is off
 * there: `"retryCount": null` is no retry, as on Conductor, not three); any other null field is left out, its default
 * applying (an Integer limit, a text: exports carry those as null).
 */
function withoutNullFields(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(withJacksonNullText(fields, TASK_DEF_NULLS, { jsonNull: true })).filter(([, value]) => value !== null));
}

/**
 * What null (JSON null, `""` or `"null"`) in a number or boolean field of a task definition is, as Jackson reads
 * Conductor's TaskDef: its int, long and boolean fields take 0 or false (`"retryCount": ""` is no retry, as there, not
 * the default three), its Integer fields none.
 */
const TASK_DEF_NULLS: JacksonNulls = {
  retryCount: 0,
  timeoutSeconds: 0,
  retryDelaySeconds: 0,
  responseTimeoutSeconds: 0,
  maxRetryDelaySeconds: 0,
  backoffJitterMs: 0,
  totalTimeoutSeconds: 0,
  enforceSchema: false,
  concurrentExecLimit: "unset",
  rateLimitPerFrequency: "unset",
  rateLimitFrequencyInSeconds: "unset",
  pollTimeoutSeconds: "unset",
  backoffScaleFactor: "unset",
};

/**
 * Names of the tasks of `definition` (inside SWITCH branches too) that follow a registered task definition copied in at
 * the start: those without one inline, but a DYNAMIC, which runs as the task it chooses and follows that one's (looked
 * up when it chooses: see `instanceTask`).
 */
export function registeredTaskDefNames(definition: WorkflowDef): string[] {
  return [...new Set(allTasks(definition).filter(followsRegisteredTaskDef).map((task) => task.name))];
}

function followsRegisteredTaskDef(task: WorkflowTaskDef): boolean {
  return task.taskDefinition === undefined && task.type !== "DYNAMIC";
}

/**
 * `definition` with each task lacking an inline `taskDefinition` given the registered one of its name, as
 * Conductor copies task definitions into an execution's definition when it starts. The same object when no
 * task gains one.
 */
export function withRegisteredTaskDefs(definition: WorkflowDef, registered: ReadonlyMap<string, TaskDef>): WorkflowDef {
  if (registered.size === 0) return definition;
  const tasks = mapTasks(definition.tasks, (task) => {
    const shared = followsRegisteredTaskDef(task) ? registered.get(task.name) : undefined;
    return shared === undefined ? task : { ...task, taskDefinition: shared };
  });
  return tasks === definition.tasks ? definition : { ...definition, tasks };
}
