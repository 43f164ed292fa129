// @ts-check
import { ApiError, forgetPermissions, isLoggedIn, logOut, me, setSessionEndHandler, errorMessage } from "./lib/api.js";
import { h, replaceChildren } from "./lib/dom.js";
import { failureNotice } from "./lib/failure.js";
import { decodePart, formerCreateHash, readHash } from "./lib/hash.js";
import { renderApplication, renderApplications, renderGroup, renderGroups, renderRoleEditor, renderRoles, renderUser, renderUsers } from "./views/access.js";
import { renderDefinition, renderDefinitionEditor } from "./views/definition.js";
import { renderDefinitions } from "./views/definitions.js";
import { renderEnvironment } from "./views/environment.js";
import { renderEventHandlerEditor, renderEventHandlers } from "./views/event-handlers.js";
import { renderExecution } from "./views/execution.js";
import { renderExecutions } from "./views/executions.js";
import { renderHumanTask, renderInbox } from "./views/inbox.js";
import { renderLogin } from "./views/login.js";
import { renderMetrics } from "./views/metrics.js";
import { renderQueues } from "./views/queues.js";
import { renderScheduleEditor, renderSchedules } from "./views/schedules.js";
import { renderSecret, renderSecrets } from "./views/secrets.js";
import { renderTaskDefEditor, renderTaskDefs } from "./views/task-defs.js";
import { renderTasks } from "./views/tasks.js";
import { renderWebhookEditor, renderWebhooks } from "./views/webhooks.js";

/**
 * @typedef {object} ViewContext
 * @property {(message: string, kind?: "info" | "error") => void} notify shows a message in the status line
 * @property {(hash: string) => void} go navigates
 * @property {() => boolean} active false once the user has left the view (stop polling, drop late answers)
 */
/** @typedef {(container: HTMLElement, params: URLSearchParams, context: ViewContext, ...parts: string[]) => void | Promise<void>} View */

const main = /** @type {HTMLElement} */ (document.getElementById("view"));
const statusLine = /** @type {HTMLElement} */ (document.getElementById("status-line"));
const userBox = /** @type {HTMLElement} */ (document.getElementById("user"));
const nav = /** @type {HTMLElement} */ (document.getElementById("nav"));

/**
 * Each page's address pattern, matched in order against the still-encoded path. A create page is `<section>/+new`
 * (NEW_SEGMENT in lib/hash.js), which no name's address can be, so `<section>/new` opens the one named `new`.
 * @type {Array<[RegExp, View]>}
 */
const ROUTES = [
  [/^executions$/, renderExecutions],
  [/^executions\/([^/]+)$/, renderExecution],
  [/^definitions$/, renderDefinitions],
  [/^definitions\/\+new$/, (container, params, context) => renderDefinitionEditor(container, params, context)],
  [/^definitions\/([^/]+)\/(\d+)\/edit$/, renderDefinitionEditor],
  [/^definitions\/([^/]+)\/(\d+)$/, renderDefinition],
  // The latest version, as Conductor's UI shows `/workflowDef/{name}` (see _redirects).
  [/^definitions\/([^/]+)$/, renderDefinition],
  [/^taskdefs$/, renderTaskDefs],
  [/^taskdefs\/\+new$/, (container, params, context) => renderTaskDefEditor(container, params, context)],
  [/^taskdefs\/(.+)$/, renderTaskDefEditor],
  [/^tasks$/, renderTasks],
  [/^inbox$/, renderInbox],
  [/^inbox\/([^/]+)$/, renderHumanTask],
  [/^queues$/, renderQueues],
  [/^metrics$/, renderMetrics],
  [/^schedules$/, renderSchedules],
  [/^schedules\/\+new$/, (container, params, context) => renderScheduleEditor(container, params, context)],
  [/^schedules\/([^/]+)$/, renderScheduleEditor],
  [/^events$/, renderEventHandlers],
  [/^events\/\+new$/, (container, params, context) => renderEventHandlerEditor(container, params, context)],
  [/^events\/(.+)$/, renderEventHandlerEditor],
  [/^webhooks$/, renderWebhooks],
  [/^webhooks\/\+new$/, (container, params, context) => renderWebhookEditor(container, params, context)],
  [/^webhooks\/([^/]+)$/, renderWebhookEditor],
  [/^secrets$/, renderSecrets],
  [/^environment$/, renderEnvironment],
  [/^secrets\/([^/]+)$/, renderSecret],
  [/^access$/, (container, params, context) => context.go("#/access/roles")],
  [/^access\/roles$/, renderRoles],
  [/^access\/roles\/\+new$/, (container, params, context) => renderRoleEditor(container, params, context)],
  [/^access\/roles\/(.+)$/, renderRoleEditor],
  [/^access\/users$/, renderUsers],
  [/^access\/users\/(.+)$/, renderUser],
  [/^access\/groups$/, renderGroups],
  [/^access\/groups\/(.+)$/, renderGroup],
  [/^access\/applications$/, renderApplications],
  [/^access\/applications\/(.+)$/, renderApplication],
];

let generation = 0;
/** @type {number | undefined} */
let statusTimer;

/** @type {ViewContext["notify"]} */
function notify(message, kind = "info") {
  statusLine.textContent = message;
  statusLine.className = `status-line ${kind}`;
  clearTimeout(statusTimer);
  if (kind === "info") statusTimer = window.setTimeout(() => (statusLine.textContent = ""), 6000);
}

/**
 * Whether the next page keeps the status line: a view's go() follows what it did ("Saved role ops") to the page that
 * shows the result, which would otherwise clear the message as it opens. A page the user opens clears it.
 */
let keepStatus = false;

/** @param {string} hash */
function go(hash) {
  keepStatus = true;
  if (location.hash === hash) void route();
  else location.hash = hash;
}

async function route() {
  const current = ++generation;
  /** @type {ViewContext} */
  const context = { notify, go, active: () => current === generation };
  const { raw, path, params } = readHash(location.hash);
  if (!keepStatus) statusLine.textContent = "";
  keepStatus = false;
  replaceChildren(main);
  if (!isLoggedIn()) {
    showUser(undefined);
    await renderLogin(main, params, context, async () => {
      forgetPermissions();
      // What brought the user to the login ("Your session ended") is not news on the page it leads to.
      statusLine.textContent = "";
      go(path === "login" || path === "" ? "#/executions" : `#/${raw}`);
    });
    return;
  }
  if (path === "" || path === "login") {
    go("#/executions");
    return;
  }
  for (const [pattern, view] of ROUTES) {
    const match = pattern.exec(path);
    if (!match) continue;
    markNav(path);
    void ensureUser();
    try {
      await view(main, params, context, ...match.slice(1).map(decodePart));
    } catch (error) {
      if (!context.active()) return;
      // An address the New buttons used to write (`#/taskdefs/new`, bookmarked) names nothing of that name: it still
      // opens the create page, in place of the address that found nothing.
      const formerCreate = error instanceof ApiError && error.status === 404 ? formerCreateHash(path) : undefined;
      if (formerCreate !== undefined) {
        location.replace(formerCreate);
        return;
      }
      notify(errorMessage(error), "error");
      // A view that failed before showing anything (its first read refused: 404, 403, a 400 naming the path's fields)
      // would leave a blank page, the reason only in the status line, which clears: the page says it instead.
      if (main.childNodes.length === 0) replaceChildren(main, h("h1", {}, "This page could not be shown"), failureNotice(error));
    }
    return;
  }
  replaceChildren(main, h("h1", {}, "Not found"), h("p", {}, "No page at ", h("code", {}, location.hash), "."));
}

/** @param {string} path */
function markNav(path) {
  for (const link of nav.querySelectorAll("a")) {
    const section = link.getAttribute("href")?.replace("#/", "") ?? "";
    if (path.startsWith(section)) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

/** @type {string | undefined} */
let userId;
async function ensureUser() {
  if (userId) return;
  try {
    userId = (await me()).userId;
    showUser(userId);
  } catch {
    // A failing identity look-up is reported by the view's own requests.
  }
}

/** @param {string | undefined} id */
function showUser(id) {
  userId = id;
  nav.hidden = id === undefined && !isLoggedIn();
  replaceChildren(userBox, id === undefined ? [] : [
    h("span", { className: "user-id" }, id),
    h("button", { type: "button", className: "secondary", onclick: () => { logOut(); forgetPermissions(); showUser(undefined); statusLine.textContent = ""; go("#/login"); } }, "Log out"),
  ]);
}

// The tokens are forgotten and revoked already (ui/lib/api.js ends a session the way logOut does).
setSessionEndHandler(() => {
  forgetPermissions();
  showUser(undefined);
  notify("Your session ended; log in again.", "error");
  go("#/login");
});
window.addEventListener("hashchange", () => void route());
void route();

// The skip link must not change the hash: the hash is the page's route.
document.querySelector(".skip")?.addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});
