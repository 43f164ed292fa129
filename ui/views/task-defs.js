// @ts-check
import { ApiError, api, errorMessage, permissionsAnywhere, permissionsAt } from "../lib/api.js";
import { h, matchesFilter, replaceChildren, tagList } from "../lib/dom.js";
import { createHash } from "../lib/hash.js";
import { entityEditor } from "../lib/entity-editor.js";

/**
 * @typedef {{ name: string, description?: string, retryCount: number, retryLogic: string, retryDelaySeconds: number,
 *   timeoutSeconds: number, timeoutPolicy: string, concurrentExecLimit?: number, rateLimitPerFrequency?: number,
 *   rateLimitFrequencyInSeconds?: number, tags?: Array<{ key: string, value: string }> }} TaskDef
 * @typedef {{ queueName: string, domain?: string, workerId: string, lastPollTime: number }} PollData `queueName` is the task name in every domain; the default domain's has no domain
 */

/** Most task types one queue-size request names (the service's limit). */
const SIZES_PER_REQUEST = 100;

/**
 * How many of its tasks a task definition lets workers hold at once and be handed per window, in words.
 * @param {Pick<TaskDef, "concurrentExecLimit" | "rateLimitPerFrequency" | "rateLimitFrequencyInSeconds">} taskDef
 */
export function limitsText(taskDef) {
  const parts = [];
  if ((taskDef.concurrentExecLimit ?? 0) > 0) parts.push(`${taskDef.concurrentExecLimit} at once`);
  // As the service applies it: a window of 1 s when none is given, none at all (so no rate limit) when it is 0.
  const windowSeconds = taskDef.rateLimitFrequencyInSeconds ?? 1;
  if ((taskDef.rateLimitPerFrequency ?? 0) > 0 && windowSeconds > 0) parts.push(`${taskDef.rateLimitPerFrequency} per ${windowSeconds} s`);
  return parts.length === 0 ? "none" : parts.join(", ");
}

/**
 * How long ago a worker last polled, at `now`, in words: seconds, minutes, hours, then days.
 * @param {number} lastPollTime epoch ms
 * @param {number} now epoch ms
 */
export function pollAgeText(lastPollTime, now) {
  const seconds = Math.max(0, Math.round((now - lastPollTime) / 1000));
  if (seconds < 2) return "just now";
  if (seconds < 120) return `${seconds} s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

/**
 * The tasks waiting in the default domain's queue of each name, a request per hundred names; an empty map when the
 * caller may not read queues.
 * @param {string[]} names
 * @returns {Promise<Map<string, number>>}
 */
async function queueSizes(names) {
  /** @type {Map<string, number>} */
  const sizes = new Map();
  for (let start = 0; start < names.length; start += SIZES_PER_REQUEST) {
    const query = names.slice(start, start + SIZES_PER_REQUEST).map((name) => `taskType=${encodeURIComponent(name)}`).join("&");
    const answer = /** @type {Record<string, number>} */ (await api("GET", `/api/tasks/queue/sizes?${query}`));
    for (const [name, size] of Object.entries(answer)) sizes.set(name, size);
  }
  return sizes;
}

/** What "New task definition" starts from: Conductor's defaults written out, so each can be seen and changed. */
const TEMPLATE = {
  name: "my_task",
  description: "",
  retryCount: 3,
  retryLogic: "FIXED",
  retryDelaySeconds: 60,
  timeoutSeconds: 0,
  timeoutPolicy: "TIME_OUT_WF",
  inputTemplate: {},
};

/** @param {string} name */
const editPath = (name) => `#/taskdefs/${encodeURIComponent(name)}`;

/**
 * Whether the caller may register or change a task definition, as the service decides (src/worker/auth/
 * metadata-access.ts): METADATA_ADMIN or WORKFLOW_WRITE at `*` (the rights on all metadata; held at a narrower scope
 * they write no task definition), or TASK_WRITE at the task's scope (for a new one, whose name is not typed yet, at
 * some scope).
 * @param {Set<string>} atTask what the caller holds at `task:<name>` (for a new one: at any scope)
 * @param {Set<string>} atAll what the caller holds at `*`
 */
function mayWriteTaskDefs(atTask, atAll) {
  return atAll.has("METADATA_ADMIN") || atAll.has("WORKFLOW_WRITE") || atTask.has("TASK_WRITE");
}

/**
 * Every registered task definition, with its retry and timeout settings at a glance.
 * @type {import("../app.js").View}
 */
export async function renderTaskDefs(container, _params, context) {
  const filter = h("input", { id: "taskdef-filter", type: "search", placeholder: "name or key=value…" });
  const list = h("div", { className: "results", "aria-live": "polite" });
  // New task definition: offered on the rights held at any scope, as a new one's name is not known yet and TASK_WRITE
  // on task:orders_* lets its holder register orders_x (the service decides by the name typed).
  // Whole: the list shows most of each one's settings (the lighter listing, short=true, has their names alone). Past
  // what one listing answers it is a 413, shown in the page (with what to ask for instead) as any refusal of the list is.
  const [read, permissions, anywhere] = await Promise.all([
    /** @type {Promise<TaskDef[]>} */ (api("GET", "/api/metadata/taskdefs?metadata=true")).catch((/** @type {unknown} */ error) => error instanceof Error ? error : new Error(String(error))),
    permissionsAt("*"),
    permissionsAnywhere(),
  ]);
  if (!context.active()) return;
  const canRegister = mayWriteTaskDefs(anywhere, permissions);
  const sizes = permissions.has("TASK_READ") && Array.isArray(read) ? await queueSizes(read.map((taskDef) => taskDef.name)) : undefined;
  if (!context.active()) return;
  replaceChildren(container,
    h("div", { className: "page-head" }, h("h1", {}, "Task definitions"), canRegister ? h("a", { className: "button", href: createHash("taskdefs") }, "New task definition") : null),
    h("p", { className: "help" }, "Shared by every workflow task of the same name: retries, timeout, default input and, for workers' tasks, how many are handed out. An execution keeps the copy it started with."),
    h("div", { className: "filters" }, h("div", { className: "field" }, h("label", { for: "taskdef-filter" }, "Filter"), filter)),
    list);
  if (!Array.isArray(read)) {
    replaceChildren(list, h("p", { className: "error", role: "alert" }, errorMessage(read)));
    return;
  }
  const taskDefs = read;

  function render() {
    const needle = filter.value.trim().toLowerCase();
    const shown = taskDefs.filter((taskDef) => matchesFilter(taskDef.name, taskDef.tags, needle));
    if (shown.length === 0) {
      replaceChildren(list, h("p", { className: "empty" }, taskDefs.length === 0 ? "No task definition is registered yet." : "No task definition matches."));
      return;
    }
    replaceChildren(list, h("div", { className: "table-wrap" }, h("table", {},
      h("caption", { className: "visually-hidden" }, "Task definitions"),
      h("thead", {}, h("tr", {}, ["Name", "Retries", "Timeout", "Limits", ...(sizes ? ["Waiting for a worker"] : []), "Tags", "Description"].map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, shown.map((taskDef) => h("tr", {},
        h("td", {}, h("a", { href: editPath(taskDef.name) }, taskDef.name)),
        h("td", {}, taskDef.retryCount === 0 ? "none" : `${taskDef.retryCount} × ${taskDef.retryLogic}, ${taskDef.retryDelaySeconds} s`),
        h("td", {}, taskDef.timeoutSeconds > 0 ? `${taskDef.timeoutSeconds} s, ${taskDef.timeoutPolicy}` : "none"),
        h("td", {}, limitsText(taskDef)),
        sizes ? h("td", {}, String(sizes.get(taskDef.name) ?? 0)) : null,
        h("td", {}, tagList(taskDef.tags)),
        h("td", {}, taskDef.description ?? "")))))));
  }
  filter.addEventListener("input", render);
  render();
}

/**
 * Whether a task definition named `name` exists, as far as the caller may read: from the list, or, when the list is over
 * what one listing answers (a 413), by its name (a 404: none), which is then the one way left to know.
 * @param {string} name
 */
async function isTaken(name) {
  try {
    const taskDefs = /** @type {Array<{ name: string }>} */ (await api("GET", "/api/metadata/taskdefs?short=true"));
    return taskDefs.some((taskDef) => taskDef.name === name);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 413)) throw error;
  }
  try {
    await api("GET", `/api/metadata/taskdefs/${encodeURIComponent(name)}`);
    return true;
  } catch (error) {
    // None, or one the caller may not read, which is left to the service as the list leaves it.
    if (error instanceof ApiError && (error.status === 404 || error.status === 403)) return false;
    throw error;
  }
}

/**
 * Throws when a task definition named `name` exists: the service's save replaces one of the same name (Conductor's
 * upsert), so a new one registered under a name in use would overwrite another silently. Looked up in the list (one the
 * caller may not read is left to the service, as before), not by name, whose 404 would be a console error on every
 * registration.
 * @param {string} name
 */
async function refuseTaken(name) {
  if (await isTaken(name)) {
    throw new Error(`A task definition named ${JSON.stringify(name)} exists already: open it to change it, or choose another name.`);
  }
}

/**
 * Shows one task definition as editable JSON (read-only without a metadata right), or a new one. Saving creates
 * or replaces it; the service's validation errors are marked at their lines.
 * @type {import("../app.js").View}
 */
export async function renderTaskDefEditor(container, _params, context, name) {
  const [existing, permissions, atAll] = await Promise.all([
    name === undefined ? Promise.resolve(undefined) : api("GET", `/api/metadata/taskdefs/${encodeURIComponent(name)}`),
    // What the caller holds on this task (TASK_READ and TASK_WRITE may be given for it alone); for a new one, whose name
    // is not known yet, at any scope (TASK_WRITE on task:orders_* registers orders_x), as for a new workflow definition.
    name === undefined ? permissionsAnywhere() : permissionsAt(`task:${name}`),
    permissionsAt("*"),
  ]);
  if (!context.active()) return;
  replaceChildren(container, ...entityEditor({
    kind: "task definition",
    name: existing ? name : undefined,
    value: existing ?? TEMPLATE,
    editorId: "taskdef-text",
    listHref: "#/taskdefs",
    canEdit: mayWriteTaskDefs(permissions, atAll),
    missing: `METADATA_ADMIN or WORKFLOW_WRITE on *, or TASK_WRITE on ${name === undefined ? "its name" : `task:${name}`}`,
    save: async (taskDef) => {
      if (!existing) await refuseTaken(String(taskDef["name"]));
      await api("PUT", "/api/metadata/taskdefs", taskDef);
    },
    remove: async () => void (await api("DELETE", `/api/metadata/taskdefs/${encodeURIComponent(String(name))}`)),
    removalNote: "Tasks of this name in executions started later run without it (no retries unless their workflow task sets them). Running executions keep their copy.",
  }, context));
  if (existing && name !== undefined && permissions.has("TASK_READ")) {
    const workers = await workersPanel(name, context);
    // Left meanwhile, the container shows another page, which this panel is not part of.
    if (context.active()) container.append(workers);
  }
}

/**
 * The workers of a task name: how many of its tasks wait in the default domain's queue, and each worker's latest
 * poll (in any domain), with a button to look again.
 * @param {string} name
 * @param {import("../app.js").ViewContext} context
 * @returns {Promise<HTMLElement>}
 */
async function workersPanel(name, context) {
  const body = h("div", { "aria-live": "polite" });
  const refresh = h("button", { type: "button", className: "secondary", onclick: () => void load() }, "Refresh");
  async function load() {
    /** @type {[Map<string, number>, PollData[]]} */
    let answers;
    try {
      answers = await Promise.all([queueSizes([name]), /** @type {Promise<PollData[]>} */ (api("GET", `/api/tasks/queue/polldata?taskType=${encodeURIComponent(name)}`))]);
    } catch (error) {
      // Shown in the panel, whether it was its first read or a Refresh (whose click has no one else to tell).
      if (context.active()) replaceChildren(body, h("p", { className: "error", role: "alert" }, errorMessage(error)));
      return;
    }
    const [sizes, polls] = answers;
    if (!context.active()) return;
    const waiting = sizes.get(name) ?? 0;
    const now = Date.now();
    replaceChildren(body,
      h("p", {}, `${waiting} ${waiting === 1 ? "task waits" : "tasks wait"} for a worker (default domain).`),
      polls.length === 0
        ? h("p", { className: "empty" }, "No worker has polled for this task yet.")
        : h("div", { className: "table-wrap" }, h("table", {},
          h("caption", { className: "visually-hidden" }, `Workers polling ${name}`),
          h("thead", {}, h("tr", {}, ["Worker", "Domain", "Last poll"].map((title) => h("th", { scope: "col" }, title)))),
          h("tbody", {}, polls.map((poll) => h("tr", {},
            h("td", {}, poll.workerId),
            h("td", {}, poll.domain ?? "default"),
            h("td", { title: new Date(poll.lastPollTime).toISOString() }, pollAgeText(poll.lastPollTime, now))))))));
  }
  await load();
  return h("section", { className: "panel", "aria-labelledby": "taskdef-workers" }, h("div", { className: "page-head" }, h("h2", { id: "taskdef-workers" }, "Workers"), refresh), body);
}
