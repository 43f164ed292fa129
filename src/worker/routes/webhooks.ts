import type { IRequest, RouterType } from "itty-router";
import { START_PERMISSION } from "../auth/access-rules";
import { grantsAllow } from "../auth/permissions";
import { clientAddress, clientNetwork } from "../auth/throttle";
import { serviceConfig } from "../config";
import { principalOf } from "../guard";
import { readBodyBytes, readJsonBody, textResponse } from "../http/body";
import { ApiError, notFound, tooManyRequests, validationError } from "../http/errors";
import { decodedPathParam } from "../http/params";
import { retryAfterSeconds } from "../rate-limit/window";
import { parseOrThrow } from "../schemas";
import { MAX_TAGS_PER_TARGET, TagListSchema } from "../tags";
import { requiredBody } from "./metadata";
import { callerStartScopes } from "../workflow-actions";
import { WebhookConfigRequest, type WebhookConfigBody, type WebhookSecrets } from "../webhooks/config";
import {
  completeLateWaitingTasks,
  completeWaitingTasks,
  eventPayloads,
  isSlackSslCheck,
  matchGroupQueries,
  matchGroupsOf,
  startWebhookWorkflows,
  type CompletedTask,
  type EventDelivery,
  type MatchGroup,
  type StartedWorkflow,
} from "../webhooks/deliver";
import { WebhookRepository, webhookJson, type Webhook } from "../webhooks/store";
import { basicChallenge, verifyEvent } from "../webhooks/verify";
import { CallBudget, countedEnv } from "../webhooks/call-budget";
import { deliveryDigest, forgetDelivery, rememberDelivery, type EventMemory } from "../webhooks/delivery-memory";
import { isSubrequestLimitError } from "../subrequest-limit";
import { isUuid } from "../../engine/task-id";
import { oversize, oversizeReason } from "../../engine/limits";
import type { JsonObject } from "../../engine/model";

type Args = [Env, ExecutionContext];

/**
 * The path events are sent to (`/webhook/{id}`, and `/api/webhook/{id}` where Conductor's Java client's
 * IncomingWebhookClient sends them, under its API base path); reached without a token, each event proves its sender by
 * the webhook's verifier.
 */
export const WEBHOOK_EVENT_PATH = /^(\/api)?\/webhook\/[^/]+$/;


/** The service's public base URL, else the request's origin: where the webhook's events are sent. */
function baseUrlOf(request: IRequest, env: Env): string {
  return serviceConfig(env).publicBaseUrl ?? new URL(request.url).origin;
}

/** Webhook `id`, or a 404 (an id that is no UUID names none). */
async function webhookAt(env: Env, id: string): Promise<Webhook> {
  const webhook = isUuid(id) ? await new WebhookRepository(env).get(id.toLowerCase()) : undefined;
  if (webhook === undefined) throw notFound(`No webhook ${id}`);
  return webhook;
}

/** Webhook `id` with its secrets, read at once, or a 404; a 409 when its secrets cannot be read with the key configured. */
async function webhookWithSecrets(env: Env, id: string): Promise<{ webhook: Webhook; secrets: WebhookSecrets }> {
  const found = isUuid(id) ? await new WebhookRepository(env).getWithSecrets(id.toLowerCase()) : undefined;
  if (found === undefined) throw notFound(`No webhook ${id}`);
  if (found.secrets === undefined) throw new ApiError(409, "CONFLICT", `Webhook ${found.webhook.id}'s secrets cannot be read with the configured SECRETS_ENCRYPTION_KEY: save it again with its secrets`);
  return { webhook: found.webhook, secrets: found.secrets };
}

/**
 * The body of a save, checked: its shape, then that the caller could do by hand what its events will do: complete the
 * receiver workflows' tasks (TASK_EXECUTE) and start the workflows it starts (the start permission), each at
 * `workflow:<name>`. The workflows it names need not be registered yet, as in Conductor (whose own docs save the webhook
 * before its workflow): an event's start of one still missing is answered as refused, and a receiver with no
 * execution waiting has no task to complete.
 */
async function saveBody(request: IRequest, env: Env): Promise<WebhookConfigBody> {
  const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
  const parsed = parseOrThrow(WebhookConfigRequest, body.present ? body.value : undefined, "webhook");
  const grants = principalOf(request).grants;
  for (const name of Object.keys(parsed.receiverWorkflowNamesToVersions)) {
    if (!grantsAllow(grants, "TASK_EXECUTE", `workflow:${name}`)) throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: a webhook completing tasks of workflow ${name} needs TASK_EXECUTE on workflow:${name}`);
  }
  for (const name of Object.keys(parsed.workflowsToStart.workflows)) {
    if (!grantsAllow(grants, START_PERMISSION, `workflow:${name}`)) throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: a webhook starting workflow ${name} needs ${START_PERMISSION} on workflow:${name}`);
  }
  return parsed;
}

/** What a save records besides its body. */
function saveOf(request: IRequest, env: Env, body: WebhookConfigBody) {
  return { body, by: principalOf(request).userId, startScopes: callerStartScopes(request), baseUrl: baseUrlOf(request, env), now: Date.now() };
}

/**
 * The brute-force limit of an event's verification, per webhook and client network (as API keys are limited): once
 * reached, every event from there is answered 429 until the window has passed, a correctly signed one too.
 */
function verificationLimiter(env: Env, id: string, request: Request) {
  const name = `webhook:${id}@${clientNetwork(clientAddress(request))}`;
  return { stub: env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name)), rule: serviceConfig(env).credentialLimits.perKeyAndAddress };
}

const LIMITED = "Too many events to this webhook failed verification from this address";

/** Orkes' webhooks: their configs (`/api/metadata/webhook`), and the events sent to them (`POST /webhook/{id}`). */
export function registerWebhookRoutes(router: RouterType<IRequest, Args>): void {
  router.get("/api/metadata/webhook", async (request, env) => {
    const origin = baseUrlOf(request, env);
    return Response.json((await new WebhookRepository(env).list()).map((webhook) => webhookJson(webhook, origin)));
  });

  router.post("/api/metadata/webhook", async (request, env) => {
    const body = await saveBody(request, env);
    return Response.json(webhookJson(await new WebhookRepository(env).create(saveOf(request, env, body)), baseUrlOf(request, env)));
  });

  router.get("/api/metadata/webhook/:id", async (request, env) => {
    const webhook = await webhookAt(env, decodedPathParam(request, "id"));
    return Response.json(webhookJson(webhook, baseUrlOf(request, env), await new WebhookRepository(env).events(webhook.id)));
  });

  // Orkes' webhook tags: PUT adds (a key given again takes the new value), DELETE removes those given.
  router.get("/api/metadata/webhook/:id/tags", async (request, env) => Response.json((await webhookAt(env, decodedPathParam(request, "id"))).settings.tags));
  router.put("/api/metadata/webhook/:id/tags", async (request, env) => {
    const webhook = await webhookAt(env, decodedPathParam(request, "id"));
    const added = parseOrThrow(TagListSchema, await requiredBody(request, env), "tags");
    const keys = new Set(added.map((tag) => tag.key));
    const changed = await new WebhookRepository(env).changeTags(webhook.id, (held) => {
      const tags = [...held.filter((tag) => !keys.has(tag.key)), ...added];
      if (tags.length > MAX_TAGS_PER_TARGET) throw validationError("Too many tags", [{ path: "(body)", message: `a webhook holds at most ${MAX_TAGS_PER_TARGET} tags; this would make ${tags.length}` }]);
      return tags;
    });
    if (!changed) throw notFound(`No webhook ${webhook.id}`);
    return new Response(null, { status: 200 });
  });
  router.delete("/api/metadata/webhook/:id/tags", async (request, env) => {
    const webhook = await webhookAt(env, decodedPathParam(request, "id"));
    const removed = parseOrThrow(TagListSchema, await requiredBody(request, env), "tags");
    const gone = (tag: { key: string; value: string }) => removed.some((other) => other.key === tag.key && other.value === tag.value);
    if (!(await new WebhookRepository(env).changeTags(webhook.id, (held) => held.filter((tag) => !gone(tag))))) throw notFound(`No webhook ${webhook.id}`);
    return new Response(null, { status: 200 });
  });

  router.put("/api/metadata/webhook/:id", async (request, env) => {
    const { id } = await webhookAt(env, decodedPathParam(request, "id"));
    const body = await saveBody(request, env);
    return Response.json(webhookJson(await new WebhookRepository(env).update(id, saveOf(request, env, body)), baseUrlOf(request, env)));
  });

  router.delete("/api/metadata/webhook/:id", async (request, env) => {
    const { id } = await webhookAt(env, decodedPathParam(request, "id"));
    await new WebhookRepository(env).delete(id);
    return new Response(null, { status: 200 });
  });

  // A ping (the client's handlePing; some senders check a URL with a GET before they send to it): 200 while the webhook
  // exists, saying nothing else.
  for (const path of ["/webhook/:id", "/api/webhook/:id"]) {
    router.get(path, async (request, env) => {
      await webhookAt(env, decodedPathParam(request, "id"));
      return textResponse("OK");
    });
    router.post(path, receiveEvent);
  }
}

/** An event sent to a webhook: verified, then the tasks waiting for it completed and the workflows it starts started. */
async function receiveEvent(request: IRequest, rawEnv: Env, ctx: ExecutionContext): Promise<Response> {
  const receivedAt = Date.now();
  // Every call the delivery makes to D1 and to objects, its late looks' too, counts against one budget: the invocation's.
  const budget = new CallBudget(serviceConfig(rawEnv).webhookCallsPerDelivery);
  const env = countedEnv(rawEnv, budget);
  const incoming = request as unknown as Request;
  const { webhook, secrets } = await webhookWithSecrets(env, decodedPathParam(request, "id"));
  const body = await readBodyBytes(incoming, serviceConfig(env).maxRequestBytes);
  const repository = new WebhookRepository(env);
  // Not an event: nothing is done, nor any verification failure counted, whether Slack signed it or not.
  if (webhook.settings.verifier === "SLACK_BASED" && isSlackSslCheck(incoming, body)) return new Response(null, { status: 200 });
  const limiter = verificationLimiter(env, webhook.id, incoming);
  const failure = await verifyEvent(webhook.settings, secrets, incoming.headers, body);
  if (failure !== undefined) {
    const basic = await basicChallenge(webhook.settings, secrets, incoming.headers, body);
    const refused = new ApiError(401, "UNAUTHENTICATED", `Webhook event refused: ${failure}`, undefined, basic === undefined ? undefined : { "WWW-Authenticate": basic.challenge });
    // Asked for the credentials it did not send (as Twilio must be): no guess was made, none is counted.
    if (basic?.unasked === true) throw refused;
    const verdict = await limiter.stub.recordFailure(limiter.rule);
    if (verdict.limited) throw tooManyRequests(LIMITED, retryAfterSeconds(verdict));
    throw refused;
  }
  // Only a header's value can be guessed: a signature verifier's lockout refuses failed events, never one that verified
  // (the provider's addresses, shared by all its customers, would be locked out by anyone sending to this URL).
  if (webhook.settings.verifier === "HEADER_BASED") {
    const verdict = await limiter.stub.check(limiter.rule);
    if (verdict.limited) throw tooManyRequests(LIMITED, retryAfterSeconds(verdict));
  }
  const payloads = eventPayloads(incoming, body);
  // Refused whole, before anything is done: no waiting task could take one as its output, nor a start as its input.
  const maxPayloadBytes = serviceConfig(env).engine.maxPayloadBytes;
  for (const payload of payloads) {
    const bytes = oversize(payload, maxPayloadBytes);
    if (bytes !== undefined) throw new ApiError(413, "PAYLOAD_TOO_LARGE", oversizeReason("The webhook event", bytes, maxPayloadBytes));
  }
  if (!webhook.urlVerified) await repository.markVerified(webhook.id);
  // Slack's URL verification: answered with its challenge, as Slack requires before it sends events.
  const only = payloads.length === 1 ? payloads[0]! : undefined;
  if (webhook.settings.verifier === "SLACK_BASED" && only?.["type"] === "url_verification" && typeof only["challenge"] === "string") {
    return Response.json({ challenge: only["challenge"] });
  }
  const origin = new URL(incoming.url).origin;
  // Before anything is done: what the delivery's events do once (their records, their starts), claimed by its first
  // attempt, so that the sender's resend of it (after a 503, or an attempt cut short) does nothing twice. Claimed in one
  // batch with the first event's look-ups: no round trip to D1's primary more than before the delivery was remembered.
  const lookups = matchGroupQueries(env.DB, webhook.settings);
  const digest = await deliveryDigest(incoming.url, body);
  const remembered = await rememberDelivery(env.DB, webhook.id, digest, Object.keys(webhook.settings.workflowsToStart), receivedAt, lookups);
  const { memory } = remembered;
  const outcomes: EventOutcome[] = [];
  // One after the other: each may start workflows whose idempotency keys a later one in the batch repeats. Only the
  // asking of tasks stops for the count of calls, leaving room for the starts and records of this event and the later
  // ones: the retry passes over the tasks that took the event and gets further, where stopping before an event's
  // look-ups or starts would make the retry, which sends the batch's events again, stop there again, every time.
  for (const [index, payload] of payloads.entries()) {
    const kept = callsAfterTasks(webhook) + (payloads.length - 1 - index) * (lookupCalls(webhook) + callsAfterTasks(webhook)) + FORGET_CALLS;
    // The delivery's first arrival, not this attempt's: a task that began to wait since (a loop's next iteration) never takes it.
    // The last event forgets the delivery with its record when the delivery is taken whole (answered 200).
    const taken = index === payloads.length - 1 && outcomes.every((outcome) => outcome.unreached === 0);
    const shared = {
      ...(index === 0 ? { groups: matchGroupsOf(remembered.alongside) } : {}),
      ...(taken ? { forgetWhenTaken: forgetDelivery(env.DB, webhook.id, digest) } : {}),
    };
    const outcome = await deliverEvent(env, ctx, webhook, payload, memory.receivedAt, origin, { calls: budget, kept, assured: true }, await memory.event(index), shared);
    outcomes.push(outcome);
    if (outcome.stopped) break;
  }
  const completedTasks = outcomes.flatMap((outcome) => outcome.completedTasks);
  const startedWorkflows = outcomes.flatMap((outcome) => outcome.startedWorkflows);
  const unreached = outcomes.reduce((sum, outcome) => sum + outcome.unreached, 0);
  const done = outcomes.filter((outcome) => !outcome.stopped).length;
  if (done < payloads.length) {
    const deferred = outcomes.reduce((sum, outcome) => sum + outcome.deferred, 0);
    const events = payloads.length === 1 ? "" : ` ${done} of its ${payloads.length} events were handled;`;
    const message =
      `This delivery reached the most calls to Cloudflare's services one request makes (${budget.limit}, WEBHOOK_CALLS_PER_DELIVERY, or the runtime's own count) and stopped:${events} ` +
      `${completedTasks.length} of the tasks it matches took it${deferred > 0 ? `, ${deferred} were not asked` : ""}${unreached > 0 ? `, ${unreached} could not be reached` : ""}; ` +
      `send it again: the tasks that took it wait no more, and what it started is not started again`;
    throw new ApiError(503, "UNAVAILABLE", message, undefined, { "Retry-After": String(UNREACHED_RETRY_AFTER_SECONDS) });
  }
  if (unreached > 0) {
    const message = `${unreached} of the tasks waiting for this event could not be reached (${completedTasks.length} took it); send it again: the tasks that took it wait no more, and what it started is not started again`;
    throw new ApiError(503, "UNAVAILABLE", message, undefined, { "Retry-After": String(UNREACHED_RETRY_AFTER_SECONDS) });
  }
  const eventIds = outcomes.map((outcome) => outcome.eventId);
  return Response.json({ webhookId: webhook.id, eventId: eventIds[0] ?? null, ...(eventIds.length > 1 ? { eventIds } : {}), completedTasks, startedWorkflows });
}

/** What one event of a delivery did. */
interface EventOutcome {
  eventId: string;
  completedTasks: CompletedTask[];
  startedWorkflows: StartedWorkflow[];
  /** Tasks it matches whose executions could not be asked. */
  unreached: number;
  /** Tasks it matches left unasked for the delivery's count of calls. */
  deferred: number;
  /** True when it stopped before it was done: tasks left unasked for the count of calls, or a call the runtime refused. */
  stopped: boolean;
}

/** What one event of a delivery is given of the delivery's own D1 statements. */
interface EventShare {
  /** The groups of waiting tasks, read with the delivery's claim (its first event's). */
  groups?: readonly MatchGroup[];
  /** The statement forgetting the delivery, run with the event's record when the delivery is taken whole (its last event's). */
  forgetWhenTaken?: D1PreparedStatement;
}

/** About the calls an event's look-ups take: a D1 batch of a statement per receiver workflow, and a query or two. */
function lookupCalls(webhook: Webhook): number {
  return Object.keys(webhook.settings.receiverWorkflowNamesToVersions).length + 2;
}
/**
 * The calls kept for one workflow start: D1 reads of its definition, task definitions and idempotency key, and a call to
 * its object (one or two were counted with the definition cached; more are kept for a cold isolate).
 */
const CALLS_PER_START = 8;
/** The calls an event's record takes (a D1 batch of two statements). */
const RECORD_CALLS = 2;
/** The statement a delivery answered 200 runs to forget it, with its last event's record (see `forgetDelivery`). */
const FORGET_CALLS = 1;

/** The calls an event owes after its tasks: its starts and its record, kept for them while its tasks are asked. */
function callsAfterTasks(webhook: Webhook): number {
  return Object.keys(webhook.settings.workflowsToStart).length * CALLS_PER_START + RECORD_CALLS;
}

/**
 * Hands one verified event to the tasks waiting for it and starts the webhook's workflows with it, records it in the
 * webhook's history, and looks again a moment later for tasks whose routing rows were on their way.
 */
async function deliverEvent(
  env: Env,
  ctx: ExecutionContext,
  webhook: Webhook,
  payload: JsonObject,
  receivedAt: number,
  origin: string,
  budget: { calls: CallBudget; kept: number; assured: boolean },
  once: EventMemory,
  shared: EventShare,
): Promise<EventOutcome> {
  const repository = new WebhookRepository(env);
  const { eventId } = once;
  let delivery: EventDelivery;
  try {
    delivery = await completeWaitingTasks(env, webhook.settings, payload, { waitingAt: receivedAt, budget, ...(shared.groups === undefined ? {} : { groups: shared.groups }) });
  } catch (error) {
    // Refused by the runtime before any task was asked (the look-ups come first): the retry does it all.
    if (!isSubrequestLimitError(error)) throw error;
    return { eventId, completedTasks: [], startedWorkflows: [], unreached: 0, deferred: 0, stopped: true };
  }
  const completedTasks = delivery.completed;
  // A task the event matches could not be reached, or was not asked for the delivery's count of calls: the sender is
  // asked to send it again (a 2xx it would never resend, and the task would wait for good). The workflows it starts are
  // started now all the same, under the ids the delivery claimed: the resent event finds them (a sender that never
  // resends loses none, one that does starts nothing twice).
  const stopped = delivery.deferred > 0;
  let startedWorkflows: StartedWorkflow[];
  try {
    startedWorkflows = await startWebhookWorkflows(env, webhook, payload, origin, once);
  } catch (error) {
    // A start refused by the runtime for its count: the resent event starts them (finding those started under their ids).
    if (!isSubrequestLimitError(error)) throw error;
    return { eventId, completedTasks, startedWorkflows: [], unreached: delivery.unreached, deferred: delivery.deferred, stopped: true };
  }
  const started = startedWorkflows.flatMap((start) => ("workflowId" in start ? [start.workflowId] : []));
  // Only the history: once tasks took the event, its failure must not turn the answer into an error that the sender
  // answers by sending the event again. Taken whole (the delivery's last event, nothing left for a resend), the delivery
  // is forgotten with it: a later resend of the same body is a new delivery (as in Orkes: its duplicates are the
  // idempotency key's to find). Failing to forget only leaves it remembered until it expires.
  const forget = shared.forgetWhenTaken !== undefined && delivery.unreached === 0 && !stopped ? [shared.forgetWhenTaken] : [];
  await repository
    .recordEvent(webhook.id, {
      eventId,
      matched: completedTasks.length > 0 || started.length > 0,
      workflowIds: [...new Set([...completedTasks.map((task) => task.workflowId), ...started])],
      payload: JSON.stringify(payload),
      timeStamp: Date.now(),
    }, forget)
    .catch((error: unknown) => console.error(JSON.stringify({ msg: "webhook event not recorded", webhook: webhook.id, eventId, error: String(error) })));
  // Tasks that began to wait just before the event, whose routing rows were still on their way, are found a moment later.
  // Not for an event stopped partway: its retry looks again.
  if (Object.keys(webhook.settings.receiverWorkflowNamesToVersions).length > 0 && !stopped) {
    const event = { receivedAt, delivery, startedWorkflows: started };
    const record = (late: CompletedTask[]) => repository.addEventReach(eventId, late.map((task) => task.workflowId));
    ctx.waitUntil(completeLateWaitingTasks(env, webhook.settings, payload, event, record, budget.calls).catch((error: unknown) => {
      console.error(JSON.stringify({ msg: "webhook event's late look failed", webhook: webhook.id, eventId, error: String(error) }));
    }));
  }
  return { eventId, completedTasks, startedWorkflows, unreached: delivery.unreached, deferred: delivery.deferred, stopped };
}

/** When the sender of an event that did not reach every task it matches is asked to send it again. */
const UNREACHED_RETRY_AFTER_SECONDS = 5;
