/** The fields a task that starts a workflow (SUB_WORKFLOW, START_WORKFLOW) reads from its resolved input. */
import type { JsonObject, JsonValue } from "../model";
import { hasLostDigits, isTextScalar } from "../scalar-text";
import { wrapperIntegerOf } from "../definition/checks";
import { hasExpression } from "../expressions/template";
import { holdsLoneSurrogate, LONE_SURROGATE_RULE } from "../http-syntax";

/** True for a JSON object (not an array or null). */
export function isJsonObjectValue(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The version `value` asks for (`field` names it in the message): undefined when none is given (absent, null, ""), the
 * number for an integer of at least 0 or its digits as text (0: version 0 when one is registered, else the latest, as
 * Orkes documents it for a task's child), or why it is neither.
 */
export function workflowVersionOf(value: JsonValue | undefined, field: string): number | undefined | { invalid: string } {
  const number = startedIntegerOf(value);
  if (number === undefined) return undefined;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 0) return { invalid: `${field} resolved to ${JSON.stringify(value)}, not a positive integer` };
  return number;
}

/** `value` as Jackson reads it into the Integer version or priority of Conductor's SubWorkflowParams and StartWorkflowRequest. */
const startedIntegerOf = wrapperIntegerOf;

/**
 * True for what a definition may give as the version of a workflow a task starts: an integer of at least 0 (0: version 0
 * when one is registered, else the latest), its digits as text, "" or null (none: the latest); an expression is read as it resolves (see
 * {@link workflowVersionOf}).
 */
export function isStartedVersion(value: unknown): boolean {
  const number = startedIntegerOf(value);
  return number === undefined || (typeof number === "number" && Number.isSafeInteger(number) && number >= 0);
}

/** True for a priority a definition may give a started workflow: an integer from 0 to 99, or its digits as text; none ("", "null"). */
export function isStartedPriority(value: unknown): boolean {
  const number = startedIntegerOf(value);
  return number === undefined || (typeof number === "number" && Number.isInteger(number) && number >= 0 && number <= MAX_STARTED_PRIORITY);
}

/**
 * Longest domain a task may be queued in: the longest a poll may name (its `domain` query), so that every queue a start
 * can fill is one a worker can poll. Conductor's SQL stores hold no longer one either (`poll_data.domain` and the
 * `domain:taskType` queue name are varchar(255) in its Postgres and MySQL schemas).
 */
export const MAX_DOMAIN_LENGTH = 256;

/** Why a `taskToDomain` value naming a longer domain than {@link MAX_DOMAIN_LENGTH} is refused. */
export const DOMAIN_LENGTH_MESSAGE = `must name domains of at most ${MAX_DOMAIN_LENGTH} characters each (the longest a poll's domain may be: a task queued in a longer one is one no worker could poll)`;

/**
 * The first domain of a `taskToDomain` value longer than {@link MAX_DOMAIN_LENGTH}, read as a task is placed: comma-separated
 * fallbacks, each trimmed (as Conductor's getActiveDomain trims them); undefined when none is.
 */
export function overlongDomainOf(value: string): string | undefined {
  if (value.length <= MAX_DOMAIN_LENGTH) return undefined;
  return value.split(",").map((domain) => domain.trim()).find((domain) => domain.length > MAX_DOMAIN_LENGTH);
}

/**
 * Why a resolved `taskToDomain` (`field` names it in the message) gives a started workflow a domain holding a lone
 * surrogate (half of a character, as an expression may copy one from an input), undefined when none does: a worker
 * names the domain it polls in the poll's `?domain=`, which cannot carry half a character (a URL is UTF-8), so that
 * task would wait in a queue no worker can poll. The API's starts refuse such a domain with a 400 (`TaskToDomain` in
 * src/worker/schemas.ts); a task starting a workflow fails instead, naming the entry, not its value.
 */
export function loneSurrogateDomainProblem(domains: Readonly<Record<string, unknown>>, field: string): string | undefined {
  const task = Object.keys(domains).find((name) => {
    const domain = domains[name];
    return typeof domain === "string" && holdsLoneSurrogate(domain);
  });
  if (task === undefined) return undefined;
  return `${field}.${task} resolved to a domain that ${LONE_SURROGATE_RULE}: a worker names the domain it polls in the poll's query, which cannot carry it, so no worker could poll that queue`;
}

/** What a definition may write as a domain of a `taskToDomain` it gives a started workflow (see {@link isDomainValue}). */
export const DOMAIN_RULE = `a domain: a string (an expression is allowed), a number or a boolean (its text), or null (no domain for that task); each domain of a comma-separated list at most ${MAX_DOMAIN_LENGTH} characters`;

/**
 * True for a domain a definition may write in a `taskToDomain` (see {@link taskToDomainOf}): text, or null for none. A
 * written domain longer than a poll may name is refused; one an expression gives is checked as it resolves.
 */
export function isDomainValue(value: unknown): boolean {
  if (value === null) return true;
  if (!isTextScalar(value)) return false;
  return typeof value !== "string" || hasExpression(value) || overlongDomainOf(value) === undefined;
}

/** True for a resolved domain a started workflow's tasks can be queued in: text naming no domain too long to poll. */
function isQueueableDomain(value: JsonValue): value is string | number | boolean {
  return isTextScalar(value) && (typeof value !== "string" || overlongDomainOf(value) === undefined);
}

/**
 * The domains of a resolved `taskToDomain` object, read as Jackson reads Conductor's `Map<String, String>`: a number or
 * boolean domain is its text (`3` is domain `"3"`, as an expression giving a region or shard number resolves), a null
 * one is no mapping for that task (its `*` applies). Other values (objects, arrays, integers beyond 2^53, text naming a
 * domain longer than {@link MAX_DOMAIN_LENGTH}) are no domain: dropped. Undefined when `value` is no object (a SUB_WORKFLOW
 * refuses one that is given but no map before it gets here: see `childStartRequest`).
 */
export function taskToDomainOf(value: JsonValue | undefined): Record<string, string> | undefined {
  if (!isJsonObjectValue(value)) return undefined;
  return Object.fromEntries(Object.entries(value).flatMap(([task, domain]) => (isQueueableDomain(domain) ? [[task, String(domain)]] : [])));
}

/**
 * A START_WORKFLOW's `taskToDomain` (`field` names it in the messages) as Conductor's StartWorkflow reads it (Jackson's
 * convertValue into its StartWorkflowRequest's `Map<String, String>`): undefined when none is given (absent, null, "");
 * the map of {@link taskToDomainOf} otherwise, with `given` telling whether it named any task (a null domain included:
 * Conductor's `isEmpty()` counts it, so such a map is the started workflow's, not its starter's); or why it is none,
 * which fails the task as Jackson's refusal does: a value that is no object, or a domain that is an object or array (or
 * an integer beyond 2^53, or longer than {@link MAX_DOMAIN_LENGTH} or holding a lone surrogate: a queue no poll reaches),
 * rather than sending that task to another queue than the one meant.
 */
export function startedTaskToDomainOf(value: JsonValue | undefined, field: string): { map: Record<string, string>; given: boolean } | undefined | { invalid: string } {
  if (value === undefined || value === null || value === "") return undefined;
  if (!isJsonObjectValue(value)) return { invalid: `${field} resolved to ${Array.isArray(value) ? "an array" : JSON.stringify(value)}, not an object of task names to domains` };
  for (const [task, domain] of Object.entries(value)) {
    const overlong = typeof domain === "string" ? overlongDomainOf(domain) : undefined;
    if (overlong !== undefined) return { invalid: `${field}.${task} resolved to a domain of ${overlong.length} characters, over the ${MAX_DOMAIN_LENGTH} a poll's domain may have (no worker could poll its queue)` };
    if (domain === null || isTextScalar(domain)) continue;
    const problem = startTextOf(domain, `${field}.${task}`, "a domain (a string)");
    if (problem !== undefined && typeof problem === "object") return problem;
  }
  const halfCharacter = loneSurrogateDomainProblem(value, field);
  if (halfCharacter !== undefined) return { invalid: halfCharacter };
  return { map: taskToDomainOf(value)!, given: Object.keys(value).length > 0 };
}

/**
 * `value` as text, as Jackson reads a JSON scalar into a String field of Conductor's StartWorkflowRequest (a number or
 * boolean is its text: see {@link isTextScalar}); undefined when none is given (absent, null, ""), or why it is no text
 * (`field` names it, `what` says what it should be): an object or array, or an integer beyond 2^53 whose digits were
 * lost before it got here (two order ids would read as one).
 */
function startTextOf(value: JsonValue | undefined, field: string, what: string): string | undefined | { invalid: string } {
  if (value === undefined || value === null || value === "") return undefined;
  if (isTextScalar(value)) return String(value);
  const kind = Array.isArray(value)
    ? "an array"
    : hasLostDigits(value)
      ? "an integer beyond 2^53, whose digits a JSON number loses (give it as text)"
      : typeof value === "number"
        ? "a non-finite number"
        : "an object";
  return { invalid: `${field} resolved to ${kind}, not ${what}` };
}

/**
 * An idempotency key as text (`field` names it in the message). A key expression often resolves to a number (an order
 * id) or a boolean: dropping it would start a new workflow each time, so it becomes its text (42 and "42" are one key),
 * as the API reads a start's key. Null and "" are "not given"; an object or array cannot be a key and is refused rather
 * than dropped, and so is an integer beyond 2^53 (merged with its neighbours, it would return another order's workflow).
 */
export function idempotencyKeyOf(value: JsonValue | undefined, field: string): string | undefined | { invalid: string } {
  return startTextOf(value, field, "a key (a string, number or boolean)");
}

/**
 * A started workflow's correlation id as text, as Conductor's START_WORKFLOW reads it (Jackson's convertValue into its
 * StartWorkflowRequest: a number is its text, an object fails the task); undefined when none is given.
 */
export function correlationIdOf(value: JsonValue | undefined, field: string): string | undefined | { invalid: string } {
  return startTextOf(value, field, "a correlation id (a string, number or boolean)");
}

/** Highest priority of a workflow started by a task, as in Conductor. */
export const MAX_STARTED_PRIORITY = 99;

/** The priority `value` gives (an integer from 0 to 99, or its digits as text); undefined when none is given. */
export function priorityOf(value: JsonValue | undefined, field: string): number | undefined | { invalid: string } {
  const number = startedIntegerOf(value);
  if (number === undefined) return undefined;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 0 || number > MAX_STARTED_PRIORITY) {
    return { invalid: `${field} resolved to ${JSON.stringify(value)}, not an integer from 0 to ${MAX_STARTED_PRIORITY}` };
  }
  return number;
}
