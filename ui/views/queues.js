// @ts-check
import { ApiError, api, apiWithHeaders, errorMessage } from "../lib/api.js";
import { h, replaceChildren } from "../lib/dom.js";
import { pollAgeText } from "./task-defs.js";

/**
 * @typedef {{ queueName: string, domain?: string, workerId: string, lastPollTime: number }} PollData `queueName` is the
 *   task name in every domain (Conductor's PollData); the default domain's has no domain
 * @typedef {{ queueName: string, taskName: string, domain: string | null, waiting: number, activeWorkers: number,
 *   lastPollTime: number | undefined }} QueueRow
 */

/** A worker is active when it polled this recently (the service's rule for fallback domains, Conductor's default). */
export const ACTIVE_WORKER_MS = 10_000;

/**
 * The queue a poll was of, by Conductor's queue name (`taskType`, `domain:taskType`, as `/api/tasks/queue/all` names
 * it): a poll's `queueName` is its task name whatever the domain.
 * @param {PollData} poll
 * @returns {string}
 */
export function polledQueueName(poll) {
  return poll.domain === undefined ? poll.queueName : `${poll.domain}:${poll.queueName}`;
}

/**
 * One row per queue: what waits in it, how many workers polled it within {@link ACTIVE_WORKER_MS} of `now`, and its
 * latest poll; queues known only from a poll (none was listed yet) are included. By task name, then domain (the
 * default first).
 * @param {Record<string, number>} sizes by Conductor's queue name (`taskType`, `domain:taskType`)
 * @param {PollData[]} polls
 * @param {number} now epoch ms
 * @returns {QueueRow[]}
 */
export function queueRows(sizes, polls, now) {
  /** @type {Map<string, QueueRow>} */
  const rows = new Map();
  /** @param {string} queueName @param {string | null} domain */
  const row = (queueName, domain) => {
    let found = rows.get(queueName);
    if (found === undefined) {
      // A task name may hold a colon too: the domain, when known, says where the name starts.
      const taskName = domain === null ? queueName : queueName.slice(domain.length + 1);
      found = { queueName, taskName, domain, waiting: 0, activeWorkers: 0, lastPollTime: undefined };
      rows.set(queueName, found);
    }
    return found;
  };
  for (const poll of polls) {
    const found = row(polledQueueName(poll), poll.domain ?? null);
    if (now - poll.lastPollTime <= ACTIVE_WORKER_MS) found.activeWorkers += 1;
    if (found.lastPollTime === undefined || poll.lastPollTime > found.lastPollTime) found.lastPollTime = poll.lastPollTime;
  }
  for (const [queueName, size] of Object.entries(sizes)) {
    const colon = queueName.indexOf(":");
    // Without a poll to say otherwise, the part before a colon is the domain (Conductor's own naming).
    const found = rows.get(queueName) ?? row(queueName, colon < 0 ? null : queueName.slice(0, colon));
    found.waiting = size;
  }
  return [...rows.values()].sort((a, b) => a.taskName.localeCompare(b.taskName) || (a.domain ?? "").localeCompare(b.domain ?? ""));
}

/**
 * The header by which `/api/tasks/queue/all` and `/api/tasks/queue/polldata/all` count the queues they left out to
 * stay within the request's calls to the service's objects (absent when none was).
 */
export const LEFT_OUT_HEADER = "X-Queues-Left-Out";

/**
 * How many queues an answer's {@link LEFT_OUT_HEADER} says it left out: 0 without it (or with a header that is not a
 * count).
 * @param {Headers} headers
 * @returns {number}
 */
export function leftOutCount(headers) {
  const text = headers.get(LEFT_OUT_HEADER);
  if (text === null || !/^\d+$/.test(text.trim())) return 0;
  return Number(text.trim());
}

/**
 * What the page says of the queues the listings left out, one line each, none when both are whole: without it a
 * partial list would look like every queue there is.
 * @param {number} sizesLeftOut queues `/api/tasks/queue/all` left out
 * @param {number} pollsLeftOut task names whose polls `/api/tasks/queue/polldata/all` left out
 * @returns {string[]}
 */
export function leftOutNotices(sizesLeftOut, pollsLeftOut) {
  /** @param {number} count @param {string} one @param {string} many */
  const plural = (count, one, many) => `${count} ${count === 1 ? one : many}`;
  const notices = [];
  if (sizesLeftOut > 0) {
    notices.push(`${plural(sizesLeftOut, "queue", "queues")} not shown: the service reads a limited number of queues a request. A task definition's page shows its queue and workers.`);
  }
  if (pollsLeftOut > 0) {
    notices.push(`${plural(pollsLeftOut, "task name's", "task names'")} workers not shown: the service reads a limited number of queues a request. A task definition's page shows its queue and workers.`);
  }
  return notices;
}

/**
 * Every worker queue (a task name in a domain): the tasks waiting in it and its workers, and each worker's latest poll.
 * @type {import("../app.js").View}
 */
export async function renderQueues(container, _params, context) {
  // Whoever may read tasks of some names sees those names' queues and workers: a 403 says who may.
  const head = h("div", { className: "page-head" }, h("h1", {}, "Worker queues"));
  const body = h("div", { "aria-live": "polite" });
  head.append(h("button", { type: "button", className: "secondary", onclick: () => void load() }, "Refresh"));
  replaceChildren(container,
    head,
    h("p", { className: "help" }, `Each task name's queue in each domain: the tasks waiting for a worker, and the workers that poll it. A worker is active while it has polled within the last ${ACTIVE_WORKER_MS / 1000} s, which is what fallback domains ("gpu,NO_DOMAIN") look at.`),
    body);

  /** @returns {Promise<[{ body: Record<string, number>, headers: Headers }, { body: PollData[], headers: Headers }, Array<{ name: string }> | ApiError] | undefined>} */
  async function read() {
    try {
      return await Promise.all([
        // With their headers: each says in X-Queues-Left-Out how many queues it left out.
        apiWithHeaders("GET", "/api/tasks/queue/all"),
        apiWithHeaders("GET", "/api/tasks/queue/polldata/all"),
        // Task names with a task definition link to it: whoever reads a name's queue may read its definition. Their
        // names alone (short=true), not the definitions; past what one listing answers (a 413) the queues are still
        // shown, their names unlinked, saying why.
        /** @type {Promise<Array<{ name: string }>>} */ (api("GET", "/api/metadata/taskdefs?short=true")).catch((/** @type {unknown} */ error) => {
          if (error instanceof ApiError && error.status === 413) return error;
          throw error;
        }),
      ]);
    } catch (error) {
      // Shown in the page, whether it was its first read or a Refresh (whose click has no one else to tell).
      if (context.active()) replaceChildren(body, error instanceof ApiError && error.status === 403
        ? h("p", { className: "empty" }, "Worker queues are shown to users who may read tasks (TASK_READ, on some task names).")
        : h("p", { className: "error", role: "alert" }, errorMessage(error)));
      return undefined;
    }
  }

  async function load() {
    const answers = await read();
    if (answers === undefined) return;
    const [sizesAnswer, pollsAnswer, taskDefs] = answers;
    /** @type {Record<string, number>} */
    const sizes = sizesAnswer.body;
    /** @type {PollData[]} */
    const polls = pollsAnswer.body;
    const notices = leftOutNotices(leftOutCount(sizesAnswer.headers), leftOutCount(pollsAnswer.headers));
    const defined = new Set(Array.isArray(taskDefs) ? taskDefs.map((taskDef) => taskDef.name) : []);
    if (!Array.isArray(taskDefs)) notices.push(`Task names are not linked to their definitions: ${taskDefs.message}`);
    if (!context.active()) return;
    const now = Date.now();
    const rows = queueRows(sizes, polls, now);
    replaceChildren(body,
      ...notices.map((notice) => h("p", { className: "warning", role: "status" }, notice)),
      h("h2", { id: "queues-heading" }, "Queues"),
      rows.length === 0
        ? h("p", { className: "empty" }, "No worker queue yet: one appears when a workflow schedules a worker's (SIMPLE) task or a worker polls.")
        : h("div", { className: "table-wrap" }, h("table", { "aria-labelledby": "queues-heading" },
          h("thead", {}, h("tr", {}, ["Queue", "Task name", "Domain", "Waiting", "Active workers", "Last poll"].map((title) => h("th", { scope: "col" }, title)))),
          h("tbody", {}, rows.map((row) => h("tr", {},
            h("td", {}, h("code", {}, row.queueName)),
            h("td", {}, defined.has(row.taskName) ? h("a", { href: `#/taskdefs/${encodeURIComponent(row.taskName)}` }, row.taskName) : row.taskName),
            h("td", {}, row.domain ?? "default"),
            h("td", {}, String(row.waiting)),
            h("td", {}, String(row.activeWorkers)),
            h("td", row.lastPollTime === undefined ? {} : { title: new Date(row.lastPollTime).toISOString() }, row.lastPollTime === undefined ? "never" : pollAgeText(row.lastPollTime, now))))))),
      h("h2", { id: "workers-heading" }, "Workers"),
      polls.length === 0
        ? h("p", { className: "empty" }, "No worker has polled yet (a poll counts when it gives its workerid, as the official clients' do).")
        : h("div", { className: "table-wrap" }, h("table", { "aria-labelledby": "workers-heading" },
          h("thead", {}, h("tr", {}, ["Worker", "Queue", "Last poll", "State"].map((title) => h("th", { scope: "col" }, title)))),
          h("tbody", {}, polls.map((poll) => h("tr", {},
            h("td", {}, poll.workerId),
            h("td", {}, h("code", {}, polledQueueName(poll))),
            h("td", { title: new Date(poll.lastPollTime).toISOString() }, pollAgeText(poll.lastPollTime, now)),
            h("td", {}, now - poll.lastPollTime <= ACTIVE_WORKER_MS ? "active" : "idle")))))));
  }
  await load();
}
