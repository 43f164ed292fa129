// @ts-check
import { api, ApiError, permissionsAt } from "../lib/api.js";
import { formatTime, h, replaceChildren } from "../lib/dom.js";
import { createHash } from "../lib/hash.js";
import { entityEditor } from "../lib/entity-editor.js";

/**
 * Conductor's EventHandler, as `/api/event` answers it.
 * @typedef {{ name: string, event: string, active: boolean, condition?: string, description?: string,
 *   actions: Array<{ action: string } & Record<string, unknown>> }} EventHandler
 * What one action of a handler did with one message (Orkes' event execution).
 * @typedef {{ id: string, messageId: string, action: string, status: "COMPLETED" | "FAILED" | "SKIPPED",
 *   statusDescription?: string, output: Record<string, unknown>, created: number }} EventExecution
 */

/** What "New event handler" starts from: complete a waiting task of the workflow the payload names. */
const TEMPLATE = {
  name: "my_handler",
  event: "conductor:my_workflow:my_queue",
  condition: "$.approved === true",
  active: true,
  actions: [{ action: "complete_task", complete_task: { workflowId: "${waiterId}", taskRefName: "approval", output: { approvedBy: "${workflowInstanceId}" } } }],
};

/** @param {string} name */
const editPath = (name) => `#/events/${encodeURIComponent(name)}`;

/**
 * What a handler does, in words: each action and what it acts on, in order.
 * @param {Pick<EventHandler, "actions">} handler
 */
export function actionsText(handler) {
  return handler.actions.map((action) => {
    const params = /** @type {Record<string, unknown> | undefined} */ (action[action.action]);
    const target = action.action === "start_workflow" ? params?.["name"] : params?.["taskRefName"] ?? params?.["workflowId"];
    return typeof target === "string" ? `${action.action} ${target}` : action.action;
  }).join(", ");
}

/**
 * Whether the caller may register, change and delete event handlers: `SYSTEM_ADMIN` at `*`, as the default access rules
 * ask for every `/api/event` request. A rule added through the API may let others read them (it decides first), and
 * they then see the handlers read-only rather than an editor whose save is refused.
 */
async function mayWriteHandlers() {
  return (await permissionsAt("*")).has("SYSTEM_ADMIN");
}

/**
 * A refused read of the handlers: they are for system admins. Their listing over what one answers (a 413, naming what
 * to ask for instead) in the service's words, in the page rather than a blank one; any other refusal is the app's (a
 * 404 of a name there may open the create page).
 * @param {unknown} error
 */
function refusal(error) {
  if (error instanceof ApiError && error.status === 403) return h("p", { className: "empty" }, "Event handlers are for system admins.");
  if (error instanceof ApiError && error.status === 413) return h("p", { className: "error", role: "alert" }, error.message);
  throw error;
}

/**
 * Every event handler: its event, whether it is active, its condition and what it does.
 * @type {import("../app.js").View}
 */
export async function renderEventHandlers(container, _params, context) {
  /** @type {EventHandler[]} */
  let handlers;
  /** @type {boolean} */
  let canEdit;
  try {
    [handlers, canEdit] = await Promise.all([/** @type {Promise<EventHandler[]>} */ (api("GET", "/api/event")), mayWriteHandlers()]);
  } catch (error) {
    if (context.active()) replaceChildren(container, h("h1", {}, "Event handlers"), refusal(error));
    return;
  }
  if (!context.active()) return;
  replaceChildren(container,
    h("div", { className: "page-head" }, h("h1", {}, "Event handlers"), canEdit ? h("a", { className: "button", href: createHash("events") }, "New event handler") : null),
    h("p", { className: "help" }, "What to do when an EVENT task publishes (conductor:<workflow>:<queue>), or a workflow with a status listener ends (conductor:_callbackSuccessQueue, conductor:_callbackFailureQueue): the active handlers of that event whose condition holds run their actions, with ${…} taken from the event's payload."),
    handlers.length === 0
      ? h("p", { className: "empty" }, "No event handler is registered yet.")
      : h("div", { className: "table-wrap" }, h("table", {},
        h("caption", { className: "visually-hidden" }, "Event handlers"),
        h("thead", {}, h("tr", {}, ["Name", "Event", "State", "Condition", "Actions"].map((title) => h("th", { scope: "col" }, title)))),
        h("tbody", {}, handlers.map((handler) => h("tr", {},
          h("td", {}, h("a", { href: editPath(handler.name) }, handler.name)),
          h("td", {}, h("code", {}, handler.event)),
          h("td", {}, handler.active ? "active" : "inactive"),
          h("td", {}, handler.condition ? h("code", {}, handler.condition) : "always"),
          h("td", {}, actionsText(handler))))))));
}

/**
 * Shows one event handler as editable JSON, or a new one. Saving adds it or replaces it.
 * @type {import("../app.js").View}
 */
export async function renderEventHandlerEditor(container, _params, context, name) {
  /** @type {EventHandler | undefined} */
  let existing;
  /** @type {boolean} */
  let canEdit;
  try {
    [existing, canEdit] = await Promise.all([
      name === undefined ? Promise.resolve(undefined) : /** @type {Promise<EventHandler>} */ (api("GET", `/api/event/handler/${encodeURIComponent(name)}`)),
      mayWriteHandlers(),
    ]);
  } catch (error) {
    if (context.active()) replaceChildren(container, h("h1", {}, "Event handler"), refusal(error));
    return;
  }
  if (!context.active()) return;
  replaceChildren(container, ...entityEditor({
    kind: "event handler",
    name: existing ? name : undefined,
    value: existing ?? TEMPLATE,
    editorId: "event-handler-text",
    listHref: "#/events",
    canEdit,
    missing: "SYSTEM_ADMIN",
    save: async (handler) => void (await api(existing ? "PUT" : "POST", "/api/event", handler)),
    remove: async () => void (await api("DELETE", `/api/event/${encodeURIComponent(String(name))}`)),
    removalNote: "Events published from now on no longer run its actions.",
    help: h("p", { className: "help" },
      "Actions: start_workflow {name, version?, input?, correlationId?}, complete_task and fail_task {workflowId, taskRefName or taskId, output?}, ",
      "terminate_workflow {workflowId, terminationReason?}, update_workflow_variables {workflowId, variables}. A handler sent without active is inactive."),
  }, context));
  if (existing && name !== undefined) {
    const history = await recentActions(name);
    if (context.active()) container.append(history);
  }
}

/** How many of a handler's latest actions its page shows. */
const RECENT_ACTIONS = 10;

/**
 * What handler `name` did with the latest events: each action taken (a started workflow linked), failed and why, or
 * skipped by the condition.
 * @param {string} name
 * @returns {Promise<HTMLElement>}
 */
async function recentActions(name) {
  const executions = /** @type {EventExecution[]} */ (await api("GET", `/api/event/execution/${encodeURIComponent(name)}`)).slice(0, RECENT_ACTIONS);
  const body = executions.length === 0
    ? h("p", { className: "empty" }, "No event has reached it yet.")
    : h("div", { className: "table-wrap" }, h("table", { "aria-labelledby": "handler-history" },
      h("thead", {}, h("tr", {}, ["When", "Message", "Action", "Outcome"].map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, executions.map((execution) => h("tr", {},
        h("td", {}, formatTime(execution.created)),
        h("td", {}, h("code", {}, execution.messageId)),
        h("td", {}, execution.action),
        h("td", {}, actionOutcome(execution)))))));
  return h("section", { className: "panel", "aria-labelledby": "handler-history" }, h("h2", { id: "handler-history" }, "Recent actions"), body);
}

/**
 * An action's outcome: taken (with the workflow it started, or whose task it completed or failed, linked), failed and why, or skipped and why.
 * @param {EventExecution} execution
 */
function actionOutcome(execution) {
  const badge = h("span", { className: `badge status-${execution.status}` }, execution.status.toLowerCase());
  const started = typeof execution.output["workflowId"] === "string" ? execution.output["workflowId"] : undefined;
  if (started !== undefined) return [badge, " ", h("a", { href: `#/executions/${encodeURIComponent(started)}` }, started)];
  return [badge, " ", execution.statusDescription ?? ""];
}
