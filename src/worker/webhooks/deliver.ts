/**
 * What an event sent to a webhook does once verified: its payload (the body, with the query's parameters) completes
 * every WAIT_FOR_WEBHOOK task of the webhook's receiver workflows whose matches it meets, found by key in the routing
 * table (`webhook_waits`, see `engine/tasks/wait-for-webhook/matches.ts`), and starts the webhook's workflows with the
 * payload as their input.
 */
import * as v from "valibot";
import type { JsonObject } from "../../engine/model";
import { eventMatchKey, parseWebhookKey, valueAt, type WebhookKeyPart } from "../../engine/tasks/wait-for-webhook/matches";
import { executionStub } from "../executions";
import { ApiError, validationError } from "../http/errors";
import { jsonData, issuesToValidationErrors } from "../schemas";
import { startExecution } from "../start-execution";
import type { CallBudget } from "./call-budget";
import { isSubrequestLimitError } from "../subrequest-limit";
import type { WebhookSettings } from "./config";
import type { EventMemory } from "./delivery-memory";
import type { Webhook } from "./store";

/** Most waiting tasks one event completes (each is a request to its execution). */
export const MAX_TASKS_PER_EVENT = 500;
/** Executions told of one event at a time. */
const CONCURRENT_DELIVERIES = 10;
/** Most distinct (workflow, version, task, paths) groups of waiting tasks one event is matched against. */
const MAX_MATCH_GROUPS = 500;
/** D1 binds at most 100 parameters per statement. */
const KEYS_PER_QUERY = 90;

/** Most events one delivery may carry as a JSON array (SendGrid's batches): each is matched and starts on its own. */
export const MAX_EVENTS_PER_DELIVERY = 100;

/**
 * The events a delivery carries, each over the query's parameters: a JSON object body is one; a JSON array of objects,
 * as SendGrid always posts its events, one each (at most {@link MAX_EVENTS_PER_DELIVERY}); form fields, as Slack's
 * commands and Twilio send them, are one, with the JSON object of a `payload` field (GitHub's form deliveries, Slack's
 * interactive messages) read in its place; an empty body is one, `{}`. A JSON object or array is read as such whatever
 * its Content-Type says (Amazon SNS labels its notifications text/plain). Anything else is a 400, 413 or 415 (nothing
 * is done).
 */
export function eventPayloads(request: Request, body: Uint8Array): JsonObject[] {
  const query = Object.fromEntries(new URL(request.url).searchParams);
  const text = new TextDecoder().decode(body);
  if (text.trim() === "") return [query];
  const type = mediaType(request);
  if (type === FORM) return [{ ...query, ...formPayload(new URLSearchParams(text)) }];
  const labelledJson = type === "" || type === "application/json" || type.endsWith("+json");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    if (!labelledJson) throw unsupportedEventType();
    throw validationError("Invalid webhook event", [{ path: "(body)", message: "must be JSON" }]);
  }
  // A JSON object or array under another label is read as JSON: Amazon SNS posts its notifications as text/plain
  // (docs.aws.amazon.com/sns/latest/dg/http-header.html), and Orkes' endpoint reads any body as JSON (it takes the body
  // as a string, whatever its Content-Type). A bare JSON value under another label is no event of either kind.
  if (!labelledJson && (typeof parsed !== "object" || parsed === null)) throw unsupportedEventType();
  if (!Array.isArray(parsed)) {
    const checked = v.safeParse(jsonData, parsed);
    if (!checked.success) throw validationError("Invalid webhook event", issuesToValidationErrors(checked.issues, "(body)"));
    return [{ ...query, ...checked.output }];
  }
  if (parsed.length > MAX_EVENTS_PER_DELIVERY) {
    throw new ApiError(413, "PAYLOAD_TOO_LARGE", `A webhook delivery carries at most ${MAX_EVENTS_PER_DELIVERY} events; this one has ${parsed.length}`);
  }
  return parsed.map((event: unknown, index) => {
    const one = v.safeParse(jsonData, event);
    if (!one.success) throw validationError("Invalid webhook event", issuesToValidationErrors(one.issues, `(body)[${index}]`));
    return { ...query, ...one.output };
  });
}

const FORM = "application/x-www-form-urlencoded";

/** The request's media type, lower-cased, without its parameters (`charset`); "" without a Content-Type. */
function mediaType(request: Request): string {
  return (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * True for Slack's check of a slash command's certificate: form fields with `ssl_check` (and the command's token),
 * sent now and then to the command's URL, which expects an empty 200 and is no event (Slack's own receivers answer it
 * so, its serverless ones before any signature check).
 */
export function isSlackSslCheck(request: Request, body: Uint8Array): boolean {
  return mediaType(request) === FORM && new URLSearchParams(new TextDecoder().decode(body)).has("ssl_check");
}

/** The refusal of a body that is neither JSON (under whatever Content-Type) nor form fields. */
function unsupportedEventType(): ApiError {
  return new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "A webhook event must be JSON (Content-Type: application/json, or a JSON object under another type) or form fields (application/x-www-form-urlencoded)");
}

/** Form fields as an event; a `payload` field holding a JSON object is read as that object, over the other fields. */
function formPayload(fields: URLSearchParams): JsonObject {
  const payload: JsonObject = Object.fromEntries(fields);
  const raw = fields.get("payload");
  if (raw === null) return payload;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return payload;
  }
  const checked = v.safeParse(jsonData, parsed);
  if (!checked.success || Array.isArray(checked.output)) return payload;
  const { payload: _raw, ...others } = payload;
  return { ...others, ...checked.output };
}

/** A task an event completed. */
export interface CompletedTask {
  workflowId: string;
  taskId: string;
}

/** What handing an event to the waiting tasks it matches did. */
export interface EventDelivery {
  completed: CompletedTask[];
  /** The tasks whose executions answered (took the event or not): a later look at the routing table passes them over. */
  answered: Set<string>;
  /** How many tasks the event matches whose executions could not be asked (overloaded, being moved, unreachable). */
  unreached: number;
  /**
   * How many tasks the event matches that were not asked for the delivery's count of calls (its budget, less what the
   * event still owes, or the runtime's refusal): left to the sender's retry.
   */
  deferred: number;
}

/** A (workflow, version, task, paths) group of waiting tasks an event is matched against (see {@link matchGroupQueries}). */
export interface MatchGroup {
  workflow_name: string;
  workflow_version: number;
  task_ref_name: string;
  paths: string;
}

/**
 * The statements reading the groups of waiting tasks of the webhook's receiver workflows (one per receiver, none
 * without any), to be run in one D1 batch: {@link completeWaitingTasks} runs them, unless given their rows (a delivery
 * runs them in the batch that claims its memory, see `delivery-memory.ts`, a round trip fewer).
 */
export function matchGroupQueries(db: D1Database, settings: WebhookSettings): D1PreparedStatement[] {
  return Object.entries(settings.receiverWorkflowNamesToVersions).map(([name, version]) =>
    version === 0
      ? db.prepare(`SELECT DISTINCT workflow_name, workflow_version, task_ref_name, paths FROM webhook_waits WHERE workflow_name = ? LIMIT ${MAX_MATCH_GROUPS}`).bind(name)
      : db.prepare(`SELECT DISTINCT workflow_name, workflow_version, task_ref_name, paths FROM webhook_waits WHERE workflow_name = ? AND workflow_version = ? LIMIT ${MAX_MATCH_GROUPS}`).bind(name, version),
  );
}

/** The groups the results of {@link matchGroupQueries} hold. */
export function matchGroupsOf(results: readonly D1Result[]): MatchGroup[] {
  return results.flatMap((result) => result.results as MatchGroup[]);
}

/** Which waiting tasks a look at the routing table is for. */
interface Look {
  /** Only tasks that were waiting when the event came: their rows' `created_on` (the task's start) is no later. */
  waitingAt: number;
  /** The groups of waiting tasks, read already by {@link matchGroupQueries} (else read now). */
  groups?: readonly MatchGroup[];
  /**
   * The delivery's count of calls (see `call-budget.ts`), and how many of them the delivery needs after this event's
   * tasks (its starts and record, and the later events'). `assured`: the delivery's first round of tasks is asked
   * whatever the count leaves, so that each retry of a delivery gets further than the one before.
   */
  budget?: { calls: CallBudget; kept: number; assured: boolean };
}

/** Which waiting tasks a later look at the routing table is for (see {@link completeLateWaitingTasks}). */
interface LateLook extends Look {
  /** Tasks passed over: those already reached. */
  answered: ReadonlySet<string>;
  /** Executions passed over: those the event itself started. */
  startedWorkflows: ReadonlySet<string>;
}

/**
 * Completes the waiting tasks of the webhook's receiver workflows that `payload` matches (at most
 * {@link MAX_TASKS_PER_EVENT}); each execution checks the match again against the task as it stands.
 */
export async function completeWaitingTasks(env: Env, settings: WebhookSettings, payload: JsonObject, look: Look | LateLook): Promise<EventDelivery> {
  const answered = new Set<string>();
  const receivers = Object.entries(settings.receiverWorkflowNamesToVersions);
  if (receivers.length === 0) return { completed: [], answered, unreached: 0, deferred: 0 };
  const late = "answered" in look ? look : undefined;
  const groups = look.groups ?? matchGroupsOf(await env.DB.batch(matchGroupQueries(env.DB, settings)));
  const keys = [...new Set(groups.flatMap((group) => eventMatchKey(payload, group.workflow_name, group.workflow_version, group.task_ref_name, JSON.parse(group.paths) as string[]) ?? []))];
  // A task that began to wait after the event came never takes it, on the first look as on the later ones.
  const waitingAt = ` AND created_on <= ${Math.floor(look.waitingAt)}`;
  const waiting: CompletedTask[] = [];
  for (let start = 0; start < keys.length && waiting.length < MAX_TASKS_PER_EVENT; start += KEYS_PER_QUERY) {
    const chunk = keys.slice(start, start + KEYS_PER_QUERY);
    const { results } = await env.DB.prepare(`SELECT workflow_id, task_id FROM webhook_waits WHERE match_key IN (${chunk.map(() => "?").join(", ")})${waitingAt} ORDER BY created_on LIMIT ${MAX_TASKS_PER_EVENT - waiting.length}`)
      .bind(...chunk)
      .all<{ workflow_id: string; task_id: string }>();
    const fresh = late === undefined ? results : results.filter((row) => !late.answered.has(row.task_id) && !late.startedWorkflows.has(row.workflow_id));
    waiting.push(...fresh.map((row) => ({ workflowId: row.workflow_id, taskId: row.task_id })));
  }
  const completed: CompletedTask[] = [];
  let unreached = 0;
  let deferred = 0;
  for (let start = 0; start < waiting.length; ) {
    // No more calls than the budget leaves the delivery (starts and records after): the others wait for the retry. Its
    // first round is asked all the same: the retry makes the batch's starts and records again, and would stop here too.
    const { budget } = look;
    const first = budget !== undefined && budget.assured && budget.calls.tasksAsked === 0;
    const room = budget === undefined || first ? CONCURRENT_DELIVERIES : Math.min(CONCURRENT_DELIVERIES, budget.calls.left - budget.kept);
    if (room <= 0) {
      deferred += waiting.length - start;
      break;
    }
    const batch = waiting.slice(start, start + room);
    start += batch.length;
    if (budget !== undefined) budget.calls.tasksAsked += batch.length;
    // One execution failing to answer (overloaded, being moved) does not refuse the event for the others it reached.
    const outcomes = await Promise.allSettled(batch.map((task) => executionStub(env, task.workflowId).webhookEvent(task.taskId, payload)));
    batch.forEach((task, index) => {
      const outcome = outcomes[index]!;
      if (outcome.status === "fulfilled") answered.add(task.taskId);
      if (outcome.status === "fulfilled" && outcome.value === "completed") completed.push(task);
      if (outcome.status === "rejected" && isSubrequestLimitError(outcome.reason)) deferred++;
      else if (outcome.status === "rejected") {
        unreached++;
        console.error(JSON.stringify({ msg: "webhook event not delivered", workflowId: task.workflowId, taskId: task.taskId, error: String(outcome.reason) }));
      }
    });
    // A call refused for the invocation's count: the next would be too.
    if (outcomes.some((outcome) => outcome.status === "rejected" && isSubrequestLimitError(outcome.reason))) {
      deferred += waiting.length - start;
      break;
    }
  }
  return { completed, answered, unreached, deferred };
}

/**
 * When an event is looked for again after it was answered: a task's routing row follows the task's start by a moment
 * (the execution's index write, about a tenth of a second; a failed write is tried again 2 s later), so an event sent
 * just after a task began to wait may not find it at first.
 */
export const LATE_LOOK_DELAYS_MS = [1_000, 5_000];

/**
 * Looks for the event's waiting tasks again (after each of {@link LATE_LOOK_DELAYS_MS} from `event.receivedAt`), for
 * those that were waiting when it came but whose rows were not written yet, or whose executions did not answer: each
 * is completed as the first look would have, and `record` hears of the executions reached. With the delivery's
 * `budget`, its tasks are asked while the count allows.
 */
export async function completeLateWaitingTasks(
  env: Env,
  settings: WebhookSettings,
  payload: JsonObject,
  event: { receivedAt: number; delivery: EventDelivery; startedWorkflows: readonly string[] },
  record: (completed: CompletedTask[]) => Promise<void>,
  budget?: CallBudget,
): Promise<void> {
  const answered = new Set(event.delivery.answered);
  const startedWorkflows = new Set(event.startedWorkflows);
  for (const delay of LATE_LOOK_DELAYS_MS) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, event.receivedAt + delay - Date.now())));
    const delivery = await completeWaitingTasks(env, settings, payload, {
      waitingAt: event.receivedAt,
      answered,
      startedWorkflows,
      // A late look asks tasks while the delivery's count allows (nobody resends for one it leaves).
      ...(budget === undefined ? {} : { budget: { calls: budget, kept: 0, assured: false } }),
    });
    for (const taskId of delivery.answered) answered.add(taskId);
    if (delivery.completed.length > 0) await record(delivery.completed);
  }
}

/**
 * The idempotency key the webhook's starts carry for `payload`: its `idempotencyKey` with each path read in the event,
 * as it is (not as matched: two ids differing in case are two events); undefined when a path holds no text or number
 * there (the starts are then made without a key).
 */
export function webhookStartKey(webhook: Webhook, payload: JsonObject): string | undefined {
  const { idempotencyKey } = webhook.settings;
  const parts = idempotencyKey === undefined ? undefined : parseWebhookKey(idempotencyKey);
  if (parts === undefined || parts instanceof Error) return undefined;
  let key = "";
  for (const part of parts) {
    const text = keyPartText(part, payload);
    if (text === undefined) return undefined;
    key += text;
  }
  return key.trim() === "" ? undefined : key;
}

/** What one part of an idempotency key reads in `payload`: its text, or the value at its path (text trimmed, a number as written). */
function keyPartText(part: WebhookKeyPart, payload: JsonObject): string | undefined {
  if ("text" in part) return part.text;
  const value = valueAt(payload, part.path);
  return typeof value === "string" ? value.trim() : typeof value === "number" ? String(value) : undefined;
}

/** A workflow an event started, or why it could not. */
export type StartedWorkflow = { name: string; workflowId: string } | { name: string; refused: string };

/**
 * Starts the webhook's `workflowsToStart` with `payload` as their input, as its saver could (their start scopes),
 * each keyed by the payload's value at the webhook's `idempotencyKey` path when it has one there, and each under the id
 * its delivery claimed for it (`once`): an attempt of the delivery made again finds what an earlier one started.
 */
export async function startWebhookWorkflows(env: Env, webhook: Webhook, payload: JsonObject, origin: string, once: EventMemory): Promise<StartedWorkflow[]> {
  const { workflowsToStart, idempotencyStrategy } = webhook.settings;
  const key = webhookStartKey(webhook, payload);
  const starts = Object.entries(workflowsToStart).map(async ([name, version]): Promise<StartedWorkflow> => {
    const claimed = once.workflowIds[name];
    const outcome = await startExecution(env, {
      name,
      ...(version > 0 ? { version } : {}),
      input: payload,
      baseUrl: webhook.baseUrl ?? origin,
      startScopes: webhook.startScopes,
      // The start is made again (an eviction, a resend) under the same id and starter, and finds its execution.
      ...(claimed === undefined ? {} : { workflowId: claimed, startedByTask: once.starter }),
      ...(webhook.createdBy === undefined ? {} : { createdBy: webhook.createdBy }),
      ...(key === undefined ? {} : { idempotencyKey: key, idempotencyStrategy: idempotencyStrategy ?? "RETURN_EXISTING" }),
    });
    if (outcome.ok) return { name, workflowId: outcome.workflowId };
    console.warn(JSON.stringify({ msg: "webhook start refused", webhook: webhook.id, workflow: name, code: outcome.code, reason: outcome.message }));
    return { name, refused: outcome.message };
  });
  return Promise.all(starts);
}
