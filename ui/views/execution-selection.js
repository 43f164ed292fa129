// @ts-check
import { api } from "../lib/api.js";
import { openDialog } from "../lib/dialog.js";
import { h, replaceChildren } from "../lib/dom.js";

/**
 * @typedef {{ bulkErrorResults: Record<string, string>, bulkSuccessfulResults: string[] }} BulkResponse
 * @typedef {{ workflowId: string, parentWorkflowId?: string | null }} Selectable
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
  { label: "Remove", method: "POST", operation: "delete", question: (them) => `Delete ${them} for good, with their history? Only finished executions can be removed.`, danger: true },
];

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
    /** @type {HTMLElement[]} */
    const body = [h("p", {}, action.question(`the ${ids.length} selected ${ids.length === 1 ? "execution" : "executions"}`))];
    if (action.operation === "terminate") body.push(h("label", { for: "bulk-reason" }, "Reason (optional)"), reason);
    // As on an execution's own page: running a sub workflow again reaches beyond it (docs/api.md, "reopens its parents").
    const children = ids.filter((id) => page.get(id)?.parentWorkflowId).length;
    if (action.reopens && children > 0) {
      body.push(h("p", { className: "warning reopen-warning" },
        `${children} of them ${children === 1 ? "is a sub workflow" : "are sub workflows"}: running one again may also reopen its parent workflow and that one's parents, up the tree.`));
    }
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
