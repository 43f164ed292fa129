// @ts-check
import { ApiError, api, permissionsAt, errorMessage } from "../lib/api.js";
import { formatDuration, formatTime, h, keepingFocus, replaceChildren, statusBadge, toMillis } from "../lib/dom.js";
import { COUNTED_HITS, pager, searchForm, searchHash } from "../lib/search-page.js";
import { executionSelection } from "./execution-selection.js";

export const WORKFLOW_STATUSES = ["RUNNING", "PAUSED", "COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"];
const PAGE_SIZE = 25;
const REFRESH_MS = 3000;

/**
 * @typedef {{ workflowId: string, workflowType?: string, workflowName?: string, version?: number, workflowVersion?: number, status: string,
 *   correlationId: string | null, startTime: number | string, endTime: number | string | null, updateTime: number | string, reasonForIncompletion: string | null,
 *   parentWorkflowId?: string | null }} Summary
 */

/**
 * The executions list: filters (kept in the address, so a filtered list can be bookmarked), a page of results,
 * a live refresh that runs while the tab is visible, and actions on the executions selected on the page.
 * @type {import("../app.js").View}
 */
export async function renderExecutions(container, params, context) {
  const status = params.get("status") ?? "";
  const name = params.get("workflowName") ?? "";
  const correlationId = params.get("correlationId") ?? "";
  const freeText = params.get("freeText") ?? "";
  const since = params.get("since") ?? "";
  const start = Math.max(0, Number(params.get("start") ?? 0) || 0);
  const live = params.get("live") !== "off";

  const statusSelect = h("select", { id: "filter-status", name: "status" },
    h("option", { value: "" }, "any"),
    WORKFLOW_STATUSES.map((value) => h("option", { value, selected: value === status }, value)));
  const nameInput = h("input", { id: "filter-name", name: "workflowName", value: name, list: "workflow-names" });
  const correlationInput = h("input", { id: "filter-correlation", name: "correlationId", value: correlationId });
  const freeTextInput = h("input", { id: "filter-text", name: "freeText", value: freeText, type: "search" });
  const sinceInput = h("input", { id: "filter-since", name: "since", type: "datetime-local", value: since });
  const liveToggle = h("input", { id: "live", type: "checkbox", checked: live });
  const names = h("datalist", { id: "workflow-names" });

  /** @param {number} pageStart */
  const hashFor = (pageStart) =>
    searchHash(
      "#/executions",
      [["status", statusSelect.value], ["workflowName", nameInput.value.trim()], ["correlationId", correlationInput.value.trim()], ["freeText", freeTextInput.value.trim()], ["since", sinceInput.value]],
      pageStart,
      [["live", liveToggle.checked ? "" : "off"]],
    );

  const form = searchForm(context, hashFor, [
    ["filter-status", "Status", statusSelect],
    ["filter-name", "Workflow name", nameInput],
    ["filter-correlation", "Correlation id", correlationInput],
    ["filter-text", "Text", freeTextInput],
    ["filter-since", "Started after", sinceInput],
  ], [names]);

  const results = h("div", { className: "results", "aria-live": "polite", "aria-busy": "true" });
  const updated = h("span", { className: "help" });
  const selection = executionSelection({ context, reload: () => load() });
  liveToggle.addEventListener("change", () => {
    history.replaceState(null, "", hashFor(start));
    if (liveToggle.checked) void load();
  });

  replaceChildren(container,
    h("div", { className: "page-head" },
      h("h1", {}, "Executions"),
      h("div", { className: "live" }, liveToggle, h("label", { for: "live" }, "Live refresh"), " ", updated)),
    form,
    selection.toolbar,
    selection.outcome,
    results);

  const searchQuery = new URLSearchParams({ start: String(start), size: String(PAGE_SIZE), sort: "startTime:DESC" });
  if (status) searchQuery.set("status", status);
  if (name) searchQuery.set("workflowName", name);
  if (correlationId) searchQuery.set("correlationId", correlationId);
  if (freeText) searchQuery.set("freeText", freeText);
  if (since) {
    const from = new Date(since).getTime();
    if (Number.isFinite(from)) searchQuery.set("query", `startTime > ${from - 1}`);
  }

  let lastSeen = "";
  async function load() {
    try {
      const page = /** @type {{ totalHits: number, results: Summary[] }} */ (await api("GET", `/api/workflow/search?${searchQuery}`));
      const mayAct = await mayActOnSome(page.results);
      if (!context.active()) return;
      selection.setPage(page.results, mayAct);
      // Durations of running executions change on every refresh; a page of finished ones is only redrawn when
      // it changed. Either way the keyboard focus stays where it was.
      const seen = JSON.stringify(page);
      const finished = page.results.every((summary) => summary.endTime);
      if (seen !== lastSeen || !finished) keepingFocus(results, () => renderPage(page));
      selection.show();
      lastSeen = seen;
      updated.textContent = `updated ${formatTime(Date.now()).slice(11, 19)}`;
    } catch (error) {
      if (!context.active()) return;
      if (error instanceof ApiError && error.status === 403) {
        // Not for this user at all: say who may search, point to what a reader of tasks may use, and stop asking.
        liveToggle.checked = false;
        replaceChildren(results, h("p", { className: "empty" },
          "Executions are shown to users who may read workflows (WORKFLOW_READ, on some of them). A reader of tasks finds them on ",
          h("a", { href: "#/tasks" }, "Tasks"), " and ", h("a", { href: "#/queues" }, "Worker queues"), "."));
        return;
      }
      replaceChildren(results, h("p", { className: "error", role: "alert" }, errorMessage(error)));
    } finally {
      results.setAttribute("aria-busy", "false");
    }
  }

  /** @param {{ totalHits: number, results: Summary[] }} page */
  function renderPage(page) {
    if (page.results.length === 0) {
      replaceChildren(results, h("p", { className: "empty" }, "No executions match."));
      return;
    }
    const rows = page.results.map((summary) => {
      const workflowName = summary.workflowType ?? summary.workflowName ?? "";
      const version = summary.version ?? summary.workflowVersion;
      const startTime = toMillis(summary.startTime);
      const end = toMillis(summary.endTime) || (summary.status === "RUNNING" || summary.status === "PAUSED" ? Date.now() : toMillis(summary.updateTime));
      return h("tr", { "data-workflow-id": summary.workflowId },
        selection.rowCell(summary.workflowId),
        h("td", {}, h("a", { href: `#/executions/${summary.workflowId}` }, workflowName), version ? h("span", { className: "muted" }, ` v${version}`) : null),
        h("td", {}, statusBadge(summary.status)),
        h("td", { className: "mono" }, summary.workflowId),
        h("td", {}, summary.correlationId ?? ""),
        h("td", {}, formatTime(startTime)),
        h("td", {}, startTime ? formatDuration(end - startTime) : ""));
    });
    replaceChildren(results,
      h("div", { className: "table-wrap" },
        h("table", {},
          h("caption", { className: "visually-hidden" }, "Executions"),
          h("thead", {}, h("tr", {}, selection.headerCell(), ["Workflow", "Status", "Id", "Correlation id", "Started", "Duration"].map((title) => h("th", { scope: "col" }, title)))),
          h("tbody", {}, rows))),
      pager(start, page.results.length, page.totalHits, PAGE_SIZE, hashFor, COUNTED_HITS));
  }

  /**
   * Whether the user may act on some execution of the page, decided as an execution's page decides its actions
   * (WORKFLOW_ADMIN at its workflow's scope). The service still decides each id on its own and says which it refused.
   * @param {Summary[]} summaries
   */
  async function mayActOnSome(summaries) {
    const names = new Set(summaries.map((summary) => summary.workflowType ?? summary.workflowName ?? ""));
    const held = await Promise.all([...names].map((workflowName) => permissionsAt(`workflow:${workflowName}`)));
    return held.some((permissions) => permissions.has("WORKFLOW_ADMIN"));
  }

  // The names alone (Conductor's `names`, sorted), which is all the filter suggests: not every definition whole.
  api("GET", "/api/metadata/workflow/names").then(
    (/** @type {string[]} */ workflowNames) => {
      if (context.active()) replaceChildren(names, workflowNames.map((value) => h("option", { value })));
    },
    () => {},
  );
  await load();
  const timer = window.setInterval(() => {
    if (!context.active()) window.clearInterval(timer);
    // Not under an open dialog: the confirmation names the executions it acts on, which stay as they were shown.
    else if (liveToggle.checked && document.visibilityState === "visible" && !document.querySelector("dialog[open]")) void load();
  }, REFRESH_MS);
}
