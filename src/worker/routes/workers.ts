import type { IRequest, RouterType } from "itty-router";
import type { PollAnswer, PollShare } from "../../actors/workflow-execution";
import { taskQueueAt, MAX_POLL_WAIT_MS, type AnsweredTask, type LeasedTask, type TaskQueue } from "../../actors/task-queue";
import type { PollData } from "../../actors/poll-log";
import { workerQueueKey } from "../../engine/tasks/simple";
import { MAX_DOMAIN_LENGTH } from "../../engine/tasks/workflow-start-fields";
import { serviceConfig } from "../config";
import { executionStub, orOnOlderCode } from "../executions";
import { jsonTextResponse, readJsonBody } from "../http/body";
import { ApiError, validationError } from "../http/errors";
import { authorizeRead, principalOf } from "../guard";
import { mayReadTasksNamed } from "../auth/metadata-access";
import { isObjectUnavailable, retryingObjectCall } from "../object-retry";
import { isSubrequestLimitError } from "../subrequest-limit";
import { MAX_QUERY_NAME_LENGTH, decodedPathParam, integerQuery, nameQuery, queryParams, queryValue } from "../http/params";
import { TaskResultRequest, parseOrThrow } from "../schemas";
import { applyTaskResult, taskResultMaxBytes } from "./tasks";
import { offerAll, type UnreachedEntry } from "../poll-offers";

/**
 * A read of the worker queue of `taskName` in `domain` (none: the default queue), made again on a fresh stub when it
 * meets a transient failure of the queue's object (see {@link retryingObjectCall}), while `mayRepeat` allows: sizes
 * and poll data only.
 */
function readQueue<T>(env: Env, taskName: string, domain: string | undefined, read: (queue: DurableObjectStub<TaskQueue>) => Promise<T>, mayRepeat?: () => boolean): Promise<T> {
  return retryingObjectCall(() => taskQueueAt(env, workerQueueKey(taskName, domain)), read, mayRepeat);
}

type Args = [Env, ExecutionContext];

/** Most tasks one batch poll may ask for. */
export const MAX_POLL_COUNT = 100;
/** Conductor's default batch poll wait (ms). */
const DEFAULT_POLL_WAIT_MS = 100;
/**
 * How long a polled entry stays hidden while its execution is asked for the task. Only a poll that dies between
 * taking an entry and dropping it (or finding its workflow paused) leaves it hidden that long.
 */
const POLL_LEASE_MS = 30_000;
/** Rounds of entries a poll goes through when each one it took turned out to be stale (bounded, like every loop here). */
const MAX_POLL_ROUNDS = 5;
/**
 * A batch poll's answer, in tasks of inputs as large as MAX_PAYLOAD_BYTES allows: at the default (768 KiB) 12 MiB of
 * inputs, which a router isolate holds a few times over (the executions' answers, the joined array, its UTF-8 bytes)
 * within the 128 MB of memory Cloudflare gives it; a hundred such tasks would be 75 MB each time.
 */
const POLL_ANSWER_TASKS_OF_MAX_PAYLOAD = 16;
/** The most a batch poll's answer holds in inputs, whatever MAX_PAYLOAD_BYTES says (see {@link pollAnswerBudget}). */
const MAX_POLL_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * How many bytes of inputs (as JSON, with their secrets' values) the tasks one poll hands out may hold together:
 * {@link POLL_ANSWER_TASKS_OF_MAX_PAYLOAD} inputs of the largest size allowed, at most {@link MAX_POLL_ANSWER_BYTES}.
 * One task is handed out whatever its size.
 */
export function pollAnswerBudget(maxPayloadBytes: number): number {
  return Math.min(MAX_POLL_ANSWER_BYTES, POLL_ANSWER_TASKS_OF_MAX_PAYLOAD * maxPayloadBytes);
}

/** Longest worker id, domain or task type a poll names. */
const MAX_NAME_LENGTH = MAX_QUERY_NAME_LENGTH;

/** What a poll asks for. */
interface PollRequest {
  taskType: string;
  domain?: string;
  workerId?: string;
  count: number;
  waitMs: number;
}

/** The poll a request asks for; 400 for a bad count, timeout or over-long name. */
function pollRequest(request: IRequest, batch: boolean): PollRequest {
  const taskType = decodedPathParam(request, "taskType");
  if (taskType.length > MAX_NAME_LENGTH) throw validationError("Invalid task type", [{ path: "taskType", message: `must be at most ${MAX_NAME_LENGTH} characters` }]);
  const poll: PollRequest = {
    taskType,
    // Capped rather than refused: a worker configured for more threads, or a longer wait, still polls (what it gets is
    // what one poll may hand out and wait).
    count: batch ? Math.min(integerQuery(request, "count", 1, Number.MAX_SAFE_INTEGER) ?? 1, MAX_POLL_COUNT) : 1,
    waitMs: batch ? Math.min(integerQuery(request, "timeout", 0, Number.MAX_SAFE_INTEGER) ?? DEFAULT_POLL_WAIT_MS, MAX_POLL_WAIT_MS) : 0,
  };
  // The same limit a start's taskToDomain is held to (TaskToDomain, schemas.ts), so every queue a start fills is pollable.
  const domain = nameQuery(request, "domain", MAX_DOMAIN_LENGTH);
  const workerId = nameQuery(request, "workerid");
  if (domain !== undefined && domain !== "NO_DOMAIN") poll.domain = domain;
  if (workerId !== undefined) poll.workerId = workerId;
  return poll;
}

/** Most queues `/api/tasks/queue/all` and `/api/tasks/queue/polldata/all` read from D1 (each is asked, a call per queue). */
export const MAX_LISTED_QUEUES = 1_000;
/** How many queues those lists ask at once. */
const LISTING_CONCURRENCY = 20;
/**
 * Most calls to queue objects one listing (`queue/all`, `polldata/all`) makes, first calls and repeats together. Each is
 * a subrequest, and Workers Free allows a request 1,000 to Cloudflare's services (developers.cloudflare.com/workers/
 * platform/limits/, "Subrequests"): past them every call throws, and the listing failed whole. The rest is left for
 * the listing's D1 read and the checks of the caller's credentials.
 */
export const LISTING_CALL_BUDGET = 900;
/** The header of a listing that left queues out: how many (see {@link readWithinBudget}). */
export const LEFT_OUT_HEADER = "X-Queues-Left-Out";

/** What {@link readWithinBudget} read, in the items' order, and how many items it left out. */
interface BudgetedReads<T, R> {
  read: Array<{ item: T; answer: R }>;
  leftOut: number;
}

/**
 * `ask` of each of `items`, {@link LISTING_CONCURRENCY} at a time, within {@link LISTING_CALL_BUDGET} calls: a first
 * call for each of the first items the budget holds, then repeats after transient failures from what it has left, so
 * that no item goes unasked for another's repeat. An item past the budget, one whose repeat found the budget spent, and
 * one whose call the runtime refused past the request's subrequests anyway are left out (counted, not thrown); any
 * other failure is thrown, as before.
 */
async function readWithinBudget<T, R>(items: readonly T[], ask: (item: T, mayRepeat: () => boolean) => Promise<R>): Promise<BudgetedReads<T, R>> {
  const asked = items.slice(0, LISTING_CALL_BUDGET);
  let repeatsLeft = LISTING_CALL_BUDGET - asked.length;
  const answers = await inBatches(asked, async (item): Promise<{ item: T; answer: R } | undefined> => {
    let outOfBudget = false;
    const mayRepeat = (): boolean => {
      if (repeatsLeft <= 0) return !(outOfBudget = true);
      repeatsLeft--;
      return true;
    };
    try {
      return { item, answer: await ask(item, mayRepeat) };
    } catch (error) {
      if (outOfBudget || isSubrequestLimitError(error)) return undefined;
      throw error;
    }
  });
  const read = answers.filter((answer): answer is { item: T; answer: R } => answer !== undefined);
  return { read, leftOut: items.length - read.length };
}

/** `body` as JSON, with {@link LEFT_OUT_HEADER} when the listing left `leftOut` queues out. */
function listingResponse(body: unknown, leftOut: number): Response {
  return Response.json(body, leftOut > 0 ? { headers: { [LEFT_OUT_HEADER]: String(leftOut) } } : undefined);
}

/** Conductor's queue name: the task type, prefixed with the domain and a colon for a domain's queue. */
function conductorQueueName(taskName: string, domain: string | undefined): string {
  return domain === undefined ? taskName : `${domain}:${taskName}`;
}

/**
 * Conductor's PollData of a poll of task type `taskName`. Its `queueName` is the task type whatever the domain, as
 * every Conductor store writes it (`new PollData(taskDefName, domain, workerId, now)` in updateLastPollData) and Orkes
 * documents it ("the task definition name"): the domain is in `domain` only, so a client matching rows by task type
 * finds a domain's workers too. The default domain's has no `domain` key, as Conductor's JSON leaves nulls out: its UI
 * finds a task's worker by `task.domain ? row.domain === task.domain : row.domain === undefined`.
 */
function pollDataView(taskName: string, poll: PollData): { queueName: string; domain?: string; workerId: string; lastPollTime: number } {
  const view: { queueName: string; domain?: string; workerId: string; lastPollTime: number } = { queueName: taskName, workerId: poll.workerId, lastPollTime: poll.lastPollTime };
  if (poll.domain !== undefined) view.domain = poll.domain;
  return view;
}

/** The worker queues that listed themselves (see `TaskQueue`), by task name then domain, at most {@link MAX_LISTED_QUEUES}. */
async function listedQueues(env: Env): Promise<Array<{ taskName: string; domain: string | undefined }>> {
  const { results } = await env.DB.prepare(`SELECT task_name, domain FROM worker_queues ORDER BY task_name, domain LIMIT ?`).bind(MAX_LISTED_QUEUES).all<{ task_name: string; domain: string }>();
  return results.map((row) => ({ taskName: row.task_name, domain: row.domain === "" ? undefined : row.domain }));
}

/**
 * The size of each worker queue that listed itself (see {@link listedQueues}): the tasks waiting in it, and how many
 * queues were left out to stay within {@link LISTING_CALL_BUDGET}.
 */
export async function listedQueueSizes(env: Env, readable: (taskName: string) => boolean): Promise<{ queues: Array<{ taskName: string; domain: string | undefined; size: number }>; leftOut: number }> {
  const queues = (await listedQueues(env)).filter((queue) => readable(queue.taskName));
  const { read, leftOut } = await readWithinBudget(queues, (queue, mayRepeat) => readQueue(env, queue.taskName, queue.domain, async (stub) => await stub.size(), mayRepeat));
  return { queues: read.map(({ item, answer }) => ({ ...item, size: answer })), leftOut };
}

/**
 * The size of the default domain's queue of each of `taskNames`, in their order, {@link LISTING_CONCURRENCY} at a time;
 * undefined for one that could not answer now (its object reset or overloaded past the repeats, or the runtime refusing
 * the call past the request's subrequests), so that one busy queue leaves out its own size, not every other's. Any other
 * failure is thrown.
 */
export async function defaultQueueSizes(env: Env, taskNames: readonly string[]): Promise<Array<number | undefined>> {
  return await inBatches(taskNames, async (taskName) => {
    try {
      return await readQueue(env, taskName, undefined, async (stub) => await stub.size());
    } catch (error) {
      if (isObjectUnavailable(error) || isSubrequestLimitError(error)) return undefined;
      throw error;
    }
  });
}

/** `ask` of each item, {@link LISTING_CONCURRENCY} at a time, in the items' order. */
async function inBatches<T, R>(items: readonly T[], ask: (item: T) => Promise<R>): Promise<R[]> {
  const answers: R[] = [];
  for (let start = 0; start < items.length; start += LISTING_CONCURRENCY) answers.push(...(await Promise.all(items.slice(start, start + LISTING_CONCURRENCY).map(ask))));
  return answers;
}

/**
 * Takes up to `poll.count` tasks from the worker queue of `poll.taskType` in `poll.domain`, waiting up to
 * `poll.waitMs` for one. The entries taken are offered to their executions (one call per execution), each of which hands
 * the task out or says it no longer waits; both drop the entry. An execution that could not be asked (an error) leaves
 * its entries leased, to come back. The tasks handed out hold at most {@link pollAnswerBudget} of inputs together (one
 * at least): the entries that did not fit go back to the queue at once, for the next poll.
 * Answers the Task JSON of each task handed out. The poll of a named worker is recorded (Conductor's poll data) by the
 * default domain's queue of the task name: in the lease itself when that is the queue polled, else beside the poll.
 */
async function pollWorkerQueue(env: Env, ctx: ExecutionContext, poll: PollRequest): Promise<string[]> {
  const stub = taskQueueAt(env, workerQueueKey(poll.taskType, poll.domain));
  const poller = poll.workerId === undefined ? undefined : { workerId: poll.workerId };
  if (poller !== undefined && poll.domain !== undefined) {
    const recorded = taskQueueAt(env, workerQueueKey(poll.taskType, undefined)).recordPoll(poller.workerId, poll.domain);
    ctx.waitUntil(recorded.catch((error: unknown) => console.error(JSON.stringify({ msg: "could not record a poll", error: String(error) }))));
  }
  const deadline = Date.now() + poll.waitMs;
  const tasks: string[] = [];
  for (let round = 0; round < MAX_POLL_ROUNDS && tasks.length === 0; round++) {
    const recordHere = round === 0 && poll.domain === undefined ? poller : undefined;
    const leased = await stub.lease(poll.count, Math.max(0, deadline - Date.now()), POLL_LEASE_MS, recordHere);
    if (leased.length === 0) break;
    const answers = await offerAll(leased, pollAnswerBudget(serviceConfig(env).engine.maxPayloadBytes), (workflowId, entries, share) => offer(env, workflowId, entries, poll.workerId, share));
    const answered: AnsweredTask[] = [];
    const unsent: LeasedTask[] = [];
    answers.forEach((answer, index) => {
      if (answer.status === "rejected") {
        console.error(JSON.stringify({ msg: "poll could not reach an execution; its task comes back after the lease", taskId: leased[index]!.taskId, error: String(answer.reason) }));
        return;
      }
      if (answer.value.outcome === "unsent") {
        unsent.push(leased[index]!);
        return;
      }
      // A paused workflow's entry stays hidden until its lease ends; only a limited one's reservation needs dropping.
      if (answer.value.outcome === "later" && leased[index]!.limited !== true) return;
      answered.push({ ...leased[index]!, outcome: answer.value.outcome });
      if (answer.value.outcome === "polled") tasks.push(answer.value.task);
    });
    // The tasks are the workers' now: a failed drop must not lose them; their entries come back after the lease, and
    // the next poll finds them no longer waiting and drops them then.
    if (answered.length > 0) await stub.ack(answered).catch((error: unknown) => console.error(JSON.stringify({ msg: "poll could not drop its queue entries; they come back after the lease", error: String(error) })));
    // Not handed out, so nobody's: visible again now rather than after the lease (a failure only makes them wait for it).
    if (unsent.length > 0) await stub.giveBack(unsent).catch((error: unknown) => console.error(JSON.stringify({ msg: "poll could not give back the entries its answer had no room for; they come back after the lease", error: String(error) })));
  }
  return tasks;
}

/**
 * Asks execution `workflowId` for the tasks of its `entries`; async, so that any failure (a stub that cannot be made too)
 * is a rejection. An object still on the code before `pollTasks` (a deploy's first moments, a gradual deployment's
 * previous version: see `isUnimplementedRpcMethod`) is asked task by task through its `pollTask`, as that code's router
 * asked it; rejected, its tasks came back after each lease and went to no worker polling through this router until the
 * object took the new code. That code bounds no batch's `share` of the answer: its tasks are answered whole.
 */
async function offer(env: Env, workflowId: string, entries: readonly LeasedTask[], workerId: string | undefined, share: PollShare | undefined): Promise<ReadonlyArray<PollAnswer | UnreachedEntry>> {
  const stub = executionStub(env, workflowId);
  const asked = entries.map((entry) => ({ taskId: entry.taskId, holdsPlace: entry.holdsPlace === true }));
  return await orOnOlderCode("pollTasks", async () => await stub.pollTasks(asked, workerId, share), async () => {
    // Each call on its own, as that code's router made them: one that fails leaves its entry leased (a "later" would
    // drop a limited task's reservation at once, though the call may have handed the task out before its answer was lost).
    const answers: Array<PollAnswer | UnreachedEntry> = [];
    for (const entry of asked) {
      try {
        answers.push(await stub.pollTask(entry.taskId, workerId, entry.holdsPlace));
      } catch (failure) {
        answers.push({ outcome: "unreached", reason: failure });
      }
    }
    return answers;
  });
}

/** Whether the caller may poll tasks named `taskName`, by the rules that decide `GET /api/tasks/poll/{taskType}`. */
async function mayPoll(request: IRequest, env: Env, taskName: string): Promise<boolean> {
  try {
    await authorizeRead(request, env, `/api/tasks/poll/${encodeURIComponent(taskName)}`);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return false;
    throw error;
  }
}

/**
 * The latest poll of each named worker of every task type the caller may read tasks of, in any domain, the most recent
 * first (Conductor's polldata/all); task types past {@link LISTING_CALL_BUDGET} left out, counted in {@link LEFT_OUT_HEADER}.
 */
async function allPollData(request: IRequest, env: Env): Promise<Response> {
  const { grants } = principalOf(request);
  const names = [...new Set((await listedQueues(env)).map((queue) => queue.taskName))].filter((name) => mayReadTasksNamed(grants, name));
  const { read, leftOut } = await readWithinBudget(names, (name, mayRepeat) => readQueue(env, name, undefined, async (stub) => await stub.pollData(), mayRepeat));
  const polls = read.flatMap(({ item, answer }) => answer.map((poll) => pollDataView(item, poll)));
  return listingResponse(polls.sort((a, b) => b.lastPollTime - a.lastPollTime), leftOut);
}

/**
 * Throws 403 unless the caller may read tasks of each of `taskNames` (the access rules let a reader of any task type
 * reach the queue routes), naming those it may not.
 */
function requireReadableQueues(request: IRequest, taskNames: readonly string[]): void {
  const { grants } = principalOf(request);
  const denied = taskNames.filter((name) => !mayReadTasksNamed(grants, name));
  if (denied.length > 0) throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: reading a task type's queue needs TASK_READ on task:<name>; not held for ${denied.join(", ")}`);
}

/**
 * Every listed worker queue of a task type the caller may read tasks of, by Conductor's queue name, each size as `view`
 * shows it (see {@link listedQueueSizes}); the queues left out counted in {@link LEFT_OUT_HEADER}.
 */
async function queueListing(request: IRequest, env: Env, view: (size: number) => unknown): Promise<Response> {
  const { grants } = principalOf(request);
  const { queues, leftOut } = await listedQueueSizes(env, (name) => mayReadTasksNamed(grants, name));
  // fromEntries defines each name as data, `__proto__` too.
  return listingResponse(Object.fromEntries(queues.map((queue) => [conductorQueueName(queue.taskName, queue.domain), view(queue.size)])), leftOut);
}

/** Routes of task workers: polling for SIMPLE tasks, reporting results with the next task, and queue sizes. */
export function registerWorkerRoutes(router: RouterType<IRequest, Args>): void {
  router.get("/api/tasks/poll/batch/:taskType", async (request, env, ctx) => {
    const poll = pollRequest(request, true);
    const tasks = await pollWorkerQueue(env, ctx, poll);
    return jsonTextResponse(`[${tasks.join(",")}]`);
  });

  // Conductor answers a poll that found nothing with 204 No Content.
  router.get("/api/tasks/poll/:taskType", async (request, env, ctx) => {
    const poll = pollRequest(request, false);
    const [task] = await pollWorkerQueue(env, ctx, poll);
    return task === undefined ? new Response(null, { status: 204 }) : jsonTextResponse(task);
  });

  // Orkes' update that answers the worker's next task of the same type and domain (the official clients' TaskRunner
  // uses it when the server has it), or 204 when there is none right now.
  router.post("/api/tasks/update-v2", async (request, env, ctx) => {
    const body = await readJsonBody(request as unknown as Request, taskResultMaxBytes(serviceConfig(env)));
    const result = parseOrThrow(TaskResultRequest, body.present ? body.value : undefined, "task result");
    const updated = await applyTaskResult(env, result);
    // Reporting may rest on a grant for the task's workflow or reference name; taking the next task of that name
    // (any workflow's) is a poll, and needs what a poll needs.
    if (updated.worker === undefined || !(await mayPoll(request, env, updated.worker.taskName))) return new Response(null, { status: 204 });
    const poll: PollRequest = { taskType: updated.worker.taskName, count: 1, waitMs: 0 };
    if (updated.worker.domain !== undefined) poll.domain = updated.worker.domain;
    if (result.workerId !== undefined && result.workerId !== null) poll.workerId = result.workerId;
    const [next] = await pollWorkerQueue(env, ctx, poll);
    return next === undefined ? new Response(null, { status: 204 }) : jsonTextResponse(next);
  });

  // Conductor's poll data of a task type: each worker's latest poll, in any domain, the most recent first. Without a
  // task type, every task type's (as polldata/all): Conductor's Java client's getAllPollData asks for it so.
  router.get("/api/tasks/queue/polldata", async (request, env) => {
    const { taskType } = queryParams(request, ["taskType"], []);
    const name = typeof taskType === "string" ? taskType : "";
    if (name === "") return allPollData(request, env);
    if (name.length > MAX_NAME_LENGTH) throw validationError("Invalid query parameter taskType", [{ path: "taskType", message: `must name a task type of at most ${MAX_NAME_LENGTH} characters` }]);
    requireReadableQueues(request, [name]);
    const polls = await readQueue(env, name, undefined, async (stub) => await stub.pollData());
    return Response.json(polls.map((poll) => pollDataView(name, poll)));
  });

  // Conductor's queue/all: every worker queue that was ever pushed to or polled, by Conductor's queue name, with its size.
  router.get("/api/tasks/queue/all", async (request, env) => await queueListing(request, env, (size) => size));

  // Conductor's queue/all/verbose (the generated clients' allVerbose): the same queues, each as Conductor's SQL queues
  // answer it, one shard "a" with its size and its unacknowledged entries. A poll hands a task out for good here (the
  // ack route changes nothing), so none is ever waiting for an ack: `uacked` is 0, and the size is queue/all's.
  router.get("/api/tasks/queue/all/verbose", async (request, env) => await queueListing(request, env, (size) => ({ a: { size, uacked: 0 } })));

  // Conductor's polldata/all: the latest poll of each named worker of every task type, in any domain, the most recent first.
  router.get("/api/tasks/queue/polldata/all", async (request, env) => allPollData(request, env));

  // Conductor's taskDepth (the Java client's getQueueSizeForTask): the size of one task type's queue in `domain` (the
  // default domain's without one), as a bare number.
  router.get("/api/tasks/queue/size", async (request, env) => {
    const name = nameQuery(request, "taskType");
    if (name === undefined) throw validationError("Missing query parameter taskType", [{ path: "taskType", message: "is required: the task type whose queue to size" }]);
    const domain = nameQuery(request, "domain", MAX_DOMAIN_LENGTH);
    requireReadableQueues(request, [name]);
    return Response.json(await readQueue(env, name, domain === "NO_DOMAIN" ? undefined : domain, async (stub) => await stub.size()));
  });

  // Conductor's queue sizes of the default domain, by task type (`?taskType=a&taskType=b`, or comma-separated).
  router.get("/api/tasks/queue/sizes", async (request, env) => {
    const { taskType } = queryParams(request, [], ["taskType"]);
    const names = Array.isArray(taskType) ? taskType : [];
    if (names.length > MAX_POLL_COUNT) throw validationError("Too many task types", [{ path: "taskType", message: `must name at most ${MAX_POLL_COUNT} task types` }]);
    requireReadableQueues(request, names);
    const sizes = await Promise.all(names.map((name) => readQueue(env, name, undefined, async (stub) => await stub.size())));
    // fromEntries defines each name as data, `__proto__` too.
    return Response.json(Object.fromEntries(names.map((name, index) => [name, sizes[index]!])));
  });
}
