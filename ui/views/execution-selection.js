// @ts-check
import { api } from "../lib/api.js";
import { openDialog } from "../lib/dialog.js";
import { h, replaceChildren } from "../lib/dom.js";

/**
 * @typedef {{ bulkErrorResults: Record<string, string>, bulkSuccessfulResults: string[] }} BulkResponse
 * @typedef {{ workflowId: string, status?: string, parentWorkflowId?: string | null }} Selectable
 * @typedef {{ label: string, method: string, operation: string, question: (them: string) => string, danger?: boolean, reopens?: boolean }} BulkAction
 */

/**
 * The bulk operations (docs/api.md, "Bulk operations"), in the order the toolbar offers them. `question` is asked
 * of "the 3 selected executions".
 * @type {BulkAction[]}
 */
const BULK_ACTIONS = [
  { label: "Pause", method: "PUT", operation: "pause", question: (them) => `Pause ${them}?` },
  { label: "Resume", method: "PUT", operation: "resume", question: (them) => `Resume ${them}?` },
  { label: "Terminate", method: "POST", operation: "terminate", question: (them) => `Terminate ${them}? Running tasks are canceled and child workflows terminated.`, danger: true },
  { label: "Retry", method: "POST", operation: "retry", question: (them) => `Run ${them} again from their failed tasks?`, reopens: true },
  { label: "Restart", method: "POST", operation: "restart", question: (them) => `Run ${them} again from their first tasks, with the same input?`, reopens: true },
  // The service removes an execution whatever its status (docs/api.md, `DELETE /api/workflow/{id}/remove`): see bulkConfirmation.
  { label: "Remove", method: "POST", operation: "delete", question: (them) => `Delete ${them} for good, with their history?`, danger: true },
];

/** Statuses of an execution that has not ended: a removal terminates it first. */
const UNFINISHED = new Set(["RUNNING", "PAUSED"]);

/**
 * What the confirmation of bulk action `operation` says of the executions chosen: its question, then the warnings
 * that concern them. Running a sub workflow again reopens its parents (docs/api.md, "reopens its parents"); a removal
 * terminates an execution still running or paused first, its child workflows with it, then deletes it, as Conductor's
 * removeWorkflow deletes one whatever its status.
 * @param {string} operation a bulk operation (`pause`, `delete`…)
 * @param {Selectable[]} chosen
 * @returns {{ question: string, warnings: string[] }}
 */
export function bulkConfirmation(operation, chosen) {
  const action = BULK_ACTIONS.find((each) => each.operation === operation);
  if (!action) throw new Error(`No bulk action ${operation}`);
  const question = action.question(`the ${chosen.length} selected ${chosen.length === 1 ? "execution" : "executions"}`);
  /** @type {string[]} */
  const warnings = [];
  const children = chosen.filter((summary) => summary.parentWorkflowId).length;
  if (action.reopens && children > 0) {
    warnings.push(`${children} of them ${children === 1 ? "is a sub workflow" : "are sub workflows"}: running one again may also reopen its parent workflow and that one's parents, up the tree.`);
  }
  const unfinished = chosen.filter((summary) => UNFINISHED.has(summary.status ?? "")).length;
  if (operation === "delete" && unfinished > 0) {
    warnings.push(`${unfinished} of them ${unfinished === 1 ? "is" : "are"} still running or paused: each is terminated first (its running tasks canceled, its child workflows terminated), then deleted.`);
  }
  return { question, warnings };
}

/** @param {number} count */
const executions = (count) => `${count} ${count === 1 ? "execution" : "executions"}`;

/**
 * The executions list's selection and the actions on it: a checkbox per row and one for the whole page, a
 * toolbar shown while something is selected, and the outcome of the last action, id by id (the service decides
 * each id on its own, permissions included). The selection lives here, not in the rows, so a live refresh that
 * redraws the rows keeps it; it only ever holds ids of the page on screen, so an action never reaches an
 * execution the user cannot see.
 * @param {{ context: import("../app.js").ViewContext, reload: () => Promise<void> }} options
 */
export function executionSelection({ context, reload }) {
  /** @type {Set<string>} */
  const selected = new Set();
  /** @type {Map<string, Selectable>} the page on screen */
  let page = new Map();
  let enabled = false;
  /** @type {Map<string, HTMLInputElement>} the boxes on screen */
  const rowBoxes = new Map();
  /** @type {HTMLInputElement | undefined} */
  let pageBox;

  const count = h("span", { className: "selection-count" });
  const toolbar = h("div", { className: "actions bulk-actions", role: "toolbar", "aria-label": "Selected executions", hidden: true },
    count,
    BULK_ACTIONS.map((action) => h("button", { type: "button", className: action.danger ? "danger" : "", onclick: () => confirmAction(action) }, action.label)),
    h("button", { type: "button", className: "secondary", onclick: clear }, "Clear selection"));
  const outcome = h("section", { className: "panel bulk-outcome", "aria-labelledby": "bulk-outcome-title", hidden: true });

  /** Shows the selection in the checkboxes, the page's box (mixed when part of the page is selected) and the toolbar. */
  function show() {
    for (const [id, box] of rowBoxes) box.checked = selected.has(id);
    if (pageBox) {
      pageBox.checked = selected.size > 0 && selected.size === page.size;
      pageBox.indeterminate = selected.size > 0 && selected.size < page.size;
    }
    toolbar.hidden = !enabled || selected.size === 0;
    count.textContent = `${selected.size} selected`;
  }

  /** Nothing selected; the focus goes to the page's box, as the toolbar that had it is gone. */
  function clear() {
    selected.clear();
    show();
    pageBox?.focus();
  }

  /**
   * A new page (or a refresh of this one) is about to be drawn: what is no longer on it is no longer selected.
   * @param {Selectable[]} summaries
   * @param {boolean} mayAct whether the user may act on some execution of the page; no checkboxes otherwise
   */
  function setPage(summaries, mayAct) {
    page = new Map(summaries.map((summary) => [summary.workflowId, summary]));
    enabled = mayAct;
    for (const id of selected) if (!enabled || !page.has(id)) selected.delete(id);
    // A page of finished executions that did not change is not redrawn: its boxes stay the ones to update.
    for (const id of rowBoxes.keys()) if (!page.has(id)) rowBoxes.delete(id);
  }

  /** The header cell with the page's checkbox; null when there is nothing to select. */
  function headerCell() {
    if (!enabled) return null;
    pageBox = h("input", {
      type: "checkbox",
      "aria-label": "Select all executions on this page",
      // keepingFocus finds a redrawn control again by its data-ref.
      "data-ref": "select-page",
      onchange: () => {
        const all = selected.size < page.size;
        selected.clear();
        if (all) for (const id of page.keys()) selected.add(id);
        show();
      },
    });
    return h("th", { scope: "col", className: "select" }, pageBox);
  }

  /** @param {string} workflowId @returns the row's cell with its checkbox; null when there is nothing to select */
  function rowCell(workflowId) {
    if (!enabled) return null;
    const box = h("input", {
      type: "checkbox",
      "aria-label": `Select execution ${workflowId}`,
      "data-ref": `select:${workflowId}`,
      onchange: () => {
        if (box.checked) selected.add(workflowId);
        else selected.delete(workflowId);
        show();
      },
    });
    rowBoxes.set(workflowId, box);
    return h("td", { className: "select" }, box);
  }

  /** @param {BulkAction} action */
  function confirmAction(action) {
    const ids = [...selected];
    const reason = h("input", { id: "bulk-reason", name: "reason" });
    // As the page on screen shows them: their status and parent decide the warnings.
    const { question, warnings } = bulkConfirmation(action.operation, ids.map((id) => page.get(id) ?? { workflowId: id }));
    /** @type {HTMLElement[]} */
    const body = [h("p", {}, question)];
    if (action.operation === "terminate") body.push(h("label", { for: "bulk-reason" }, "Reason (optional)"), reason);
    for (const warning of warnings) body.push(h("p", { className: action.reopens ? "warning reopen-warning" : "warning" }, warning));
    /** @type {BulkResponse | undefined} */
    let answer;
    void openDialog({
      title: `${action.label} ${executions(ids.length)}`,
      body,
      confirmLabel: action.label,
      danger: action.danger ?? false,
      onConfirm: async () => {
        const query = action.operation === "terminate" && reason.value.trim() ? `?reason=${encodeURIComponent(reason.value.trim())}` : "";
        answer = /** @type {BulkResponse} */ (await api(action.method, `/api/workflow/bulk/${action.operation}${query}`, ids));
      },
    }).then(async (done) => {
      if (!done || !answer) return;
      showOutcome(action.label, answer);
      await reload().catch(() => {});
    });
  }

  /**
   * What the service did with each id; the failed ones stay selected (to try again or look at), the rest are not.
   * @param {string} label @param {BulkResponse} answer
   */
  function showOutcome(label, answer) {
    const failures = Object.entries(answer.bulkErrorResults);
    const summary = `${label}: ${answer.bulkSuccessfulResults.length} succeeded${failures.length > 0 ? `, ${failures.length} failed` : ""}`;
    context.notify(failures.length > 0 ? `${summary} (listed below)` : summary, failures.length > 0 ? "error" : "info");
    selected.clear();
    for (const [id] of failures) if (page.has(id)) selected.add(id);
    const title = h("h2", { id: "bulk-outcome-title", tabindex: "-1" }, summary);
    replaceChildren(outcome,
      title,
      failures.length > 0 ? h("ul", { className: "bulk-failures" }, failures.map(([id, message]) =>
        h("li", {}, h("a", { href: `#/executions/${id}`, className: "mono" }, id), `: ${message}`))) : null,
      h("button", { type: "button", className: "secondary small", onclick: () => { outcome.hidden = true; } }, "Dismiss"));
    outcome.hidden = false;
    show();
    // The toolbar may just have gone (nothing left selected): the focus moves to what happened rather than to the page's top.
    title.focus();
  }

  return { toolbar, outcome, setPage, headerCell, rowCell, show };
}
