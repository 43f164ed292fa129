// @ts-check
import { ApiError, api } from "../lib/api.js";
import { formatDuration, formatTime, h, replaceChildren, statusBadge, toMillis } from "../lib/dom.js";
import { COUNTED_HITS, loadResults, pager, searchForm, searchHash } from "../lib/search-page.js";

export const TASK_STATUSES = ["SCHEDULED", "IN_PROGRESS", "COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED", "FAILED_WITH_TERMINAL_ERROR", "TIMED_OUT", "CANCELED", "SKIPPED"];
const PAGE_SIZE = 25;

/**
 * @typedef {{ taskId: string, workflowId: string, workflowType: string, taskType: string, taskDefName: string, referenceTaskName: string,
 *   status: string, domain?: string, workerId?: string, scheduledTime?: string, startTime?: string, updateTime?: string, endTime?: string,
 *   executionTime: number, reasonForIncompletion?: string }} TaskSummary
 */

/**
 * The task search's `query` for the filters given: each one that is set, joined by AND. A value is quoted, so that a
 * name holding spaces stays one value, with a backslash before each quote or backslash it holds, as the service reads
 * a quoted value (`'O\'Brien'` is O'Brien): a name may hold any character but ':'.
 * @param {{ status?: string, taskType?: string, workflowType?: string }} filters
 * @returns {string}
 */
export function taskQuery(filters) {
  /** @type {string[]} */
  const clauses = [];
  for (const [field, value] of /** @type {Array<[string, string | undefined]>} */ ([["status", filters.status], ["taskType", filters.taskType], ["workflowType", filters.workflowType]])) {
    if (value) clauses.push(`${field} = '${value.replace(/[\\']/g, (character) => `\\${character}`)}'`);
  }
  return clauses.join(" AND ");
}

/**
 * Task search: every execution's latest tasks by status, task type, workflow and text, newest update first; each
 * row links to its execution. Filters are kept in the address, so a search can be bookmarked.
 * @type {import("../app.js").View}
 */
export async function renderTasks(container, params, context) {
  const status = params.get("status") ?? "";
  const taskType = params.get("taskType") ?? "";
  const workflowType = params.get("workflowType") ?? "";
  const freeText = params.get("freeText") ?? "";
  const start = Math.max(0, Number(params.get("start") ?? 0) || 0);

  // Whoever may read some workflow or some task searches (each finds those it may read): a 403 says who may.
  const head = h("div", { className: "page-head" }, h("h1", {}, "Tasks"));

  const statusSelect = h("select", { id: "task-filter-status", name: "status" },
    h("option", { value: "" }, "any"),
    TASK_STATUSES.map((value) => h("option", { value, selected: value === status }, value)));
  const typeInput = h("input", { id: "task-filter-type", name: "taskType", value: taskType });
  const workflowInput = h("input", { id: "task-filter-workflow", name: "workflowType", value: workflowType });
  const textInput = h("input", { id: "task-filter-text", name: "freeText", value: freeText, type: "search" });

  /** @param {number} pageStart */
  const hashFor = (pageStart) =>
    searchHash("#/tasks", [["status", statusSelect.value], ["taskType", typeInput.value.trim()], ["workflowType", workflowInput.value.trim()], ["freeText", textInput.value.trim()]], pageStart);

  const form = searchForm(context, hashFor, [
    ["task-filter-status", "Status", statusSelect],
    ["task-filter-type", "Task type", typeInput],
    ["task-filter-workflow", "Workflow name", workflowInput],
    ["task-filter-text", "Text", textInput],
  ]);

  const results = h("div", { className: "results", "aria-live": "polite", "aria-busy": "true" });
  head.append(h("button", { type: "button", className: "secondary", onclick: () => void load() }, "Refresh"));
  replaceChildren(container,
    head,
    h("p", { className: "help" }, "Each execution's latest 500 tasks, a running one's within a second or two of a change. A worker's task is found by its task name."),
    form,
    results);

  const searchQuery = new URLSearchParams({ start: String(start), size: String(PAGE_SIZE), sort: "updateTime:DESC" });
  const query = taskQuery({ status, taskType, workflowType });
  if (query) searchQuery.set("query", query);
  if (freeText) searchQuery.set("freeText", freeText);

  const search = async () => {
    try {
      return /** @type {{ totalHits: number, results: TaskSummary[] }} */ (await api("GET", `/api/tasks/search?${searchQuery}`));
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) throw new Error("Task search is shown to users who may read tasks or workflows (TASK_READ or WORKFLOW_READ, on some of them).");
      throw error;
    }
  };
  const load = () => loadResults(results, context, search, renderPage);

  /** @param {{ totalHits: number, results: TaskSummary[] }} page */
  function renderPage(page) {
    if (page.results.length === 0) {
      replaceChildren(results, h("p", { className: "empty" }, "No tasks match."));
      return;
    }
    const rows = page.results.map((task) => {
      const started = toMillis(task.startTime ?? null);
      return h("tr", { "data-task-id": task.taskId },
        h("td", {}, h("a", { href: `#/executions/${task.workflowId}` }, task.referenceTaskName), h("span", { className: "muted" }, ` ${task.taskType}`)),
        h("td", {}, statusBadge(task.status)),
        h("td", {}, h("a", { href: `#/executions/${task.workflowId}` }, task.workflowType), h("div", { className: "mono muted" }, task.workflowId)),
        h("td", {}, [task.workerId, task.domain ? `domain ${task.domain}` : undefined].filter(Boolean).join(", ")),
        h("td", {}, formatTime(toMillis(task.updateTime ?? null))),
        h("td", {}, started ? formatDuration(task.endTime ? task.executionTime : Date.now() - started) : ""),
        h("td", {}, task.reasonForIncompletion ?? ""));
    });
    replaceChildren(results,
      h("div", { className: "table-wrap" },
        h("table", {},
          h("caption", { className: "visually-hidden" }, "Tasks"),
          h("thead", {}, h("tr", {}, ["Task", "Status", "Workflow", "Worker", "Updated", "Ran for", "Reason"].map((title) => h("th", { scope: "col" }, title)))),
          h("tbody", {}, rows))),
      pager(start, page.results.length, page.totalHits, PAGE_SIZE, hashFor, COUNTED_HITS));
  }

  await load();
}
