// @ts-check
import { api, ApiError, permissionsAt } from "../lib/api.js";
import { openDialog } from "../lib/dialog.js";
import { h, replaceChildren } from "../lib/dom.js";
import { jsonEditor, readObject } from "../lib/json-editor.js";

/**
 * @typedef {{ name: string, description?: string, retryCount: number, retryLogic: string, retryDelaySeconds: number,
 *   timeoutSeconds: number, timeoutPolicy: string }} TaskDef
 */

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
 * Every registered task definition, with its retry and timeout settings at a glance.
 * @type {import("../app.js").View}
 */
export async function renderTaskDefs(container, _params, context) {
  const filter = h("input", { id: "taskdef-filter", type: "search", placeholder: "name contains…" });
  const list = h("div", { className: "results", "aria-live": "polite" });
  const [taskDefs, permissions] = await Promise.all([/** @type {Promise<TaskDef[]>} */ (api("GET", "/api/metadata/taskdefs")), permissionsAt("*")]);
  if (!context.active()) return;
  const canEdit = permissions.has("METADATA_ADMIN") || permissions.has("WORKFLOW_WRITE");
  replaceChildren(container,
    h("div", { className: "page-head" }, h("h1", {}, "Task definitions"), canEdit ? h("a", { className: "button", href: "#/taskdefs/new" }, "New task definition") : null),
    h("p", { className: "help" }, "Shared by every workflow task of the same name: retries, timeout and default input. An execution keeps the copy it started with."),
    h("div", { className: "filters" }, h("div", { className: "field" }, h("label", { for: "taskdef-filter" }, "Filter"), filter)),
    list);

  function render() {
    const needle = filter.value.trim().toLowerCase();
    const shown = taskDefs.filter((taskDef) => taskDef.name.toLowerCase().includes(needle));
    if (shown.length === 0) {
      replaceChildren(list, h("p", { className: "empty" }, taskDefs.length === 0 ? "No task definition is registered yet." : "No task definition matches."));
      return;
    }
    replaceChildren(list, h("div", { className: "table-wrap" }, h("table", {},
      h("caption", { className: "visually-hidden" }, "Task definitions"),
      h("thead", {}, h("tr", {}, ["Name", "Retries", "Timeout", "Description"].map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, shown.map((taskDef) => h("tr", {},
        h("td", {}, h("a", { href: editPath(taskDef.name) }, taskDef.name)),
        h("td", {}, taskDef.retryCount === 0 ? "none" : `${taskDef.retryCount} × ${taskDef.retryLogic}, ${taskDef.retryDelaySeconds} s`),
        h("td", {}, taskDef.timeoutSeconds > 0 ? `${taskDef.timeoutSeconds} s, ${taskDef.timeoutPolicy}` : "none"),
        h("td", {}, taskDef.description ?? "")))))));
  }
  filter.addEventListener("input", render);
  render();
}

/**
 * Shows one task definition as editable JSON (read-only without a metadata right), or a new one. Saving creates
 * or replaces it; the service's validation errors are marked at their lines.
 * @type {import("../app.js").View}
 */
export async function renderTaskDefEditor(container, _params, context, name) {
  const [existing, permissions] = await Promise.all([
    name === undefined ? Promise.resolve(undefined) : api("GET", `/api/metadata/taskdefs/${encodeURIComponent(name)}`),
    permissionsAt("*"),
  ]);
  if (!context.active()) return;
  const canEdit = permissions.has("METADATA_ADMIN") || permissions.has("WORKFLOW_WRITE");
  const editor = jsonEditor({ id: "taskdef-text", label: "Task definition (JSON)", value: existing ?? TEMPLATE, rows: 24 });
  const message = h("p", { className: "error", role: "alert" });
  const save = h("button", { type: "submit" }, existing ? "Save" : "Register");
  const remove = existing && canEdit ? h("button", { type: "button", className: "danger", onclick: () => confirmRemoval(String(name), context) }, "Delete…") : null;
  const form = h("form", {
    className: "definition-editor",
    onsubmit: async (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      message.textContent = "";
      /** @type {Record<string, unknown>} */
      let taskDef;
      try {
        taskDef = readObject(editor);
      } catch (error) {
        message.textContent = error instanceof Error ? error.message : String(error);
        return;
      }
      if (existing && taskDef["name"] !== name) {
        // Renaming would register a second one and leave this one in place.
        message.textContent = `The name is ${JSON.stringify(name)}: register a new task definition to use another name.`;
        return;
      }
      save.disabled = true;
      try {
        await api("PUT", "/api/metadata/taskdefs", taskDef);
        context.notify(`Saved task definition ${String(taskDef["name"])}`);
        context.go("#/taskdefs");
      } catch (error) {
        message.textContent = error instanceof Error ? error.message : String(error);
        if (error instanceof ApiError && error.validationErrors.length > 0) editor.showErrors(error.validationErrors);
      } finally {
        save.disabled = false;
      }
    },
  },
    editor.element,
    message,
    h("div", { className: "actions" }, canEdit ? save : null, remove, h("a", { className: "button secondary", href: "#/taskdefs" }, canEdit ? "Cancel" : "Back")));
  replaceChildren(container, h("h1", {}, existing ? `Task definition ${String(name)}` : "New task definition"), form);
}

/**
 * @param {string} name
 * @param {import("../app.js").ViewContext} context
 */
function confirmRemoval(name, context) {
  void openDialog({
    title: `Delete task definition ${name}?`,
    body: [h("p", {}, "Tasks of this name in executions started later run without it (no retries unless their workflow task sets them). Running executions keep their copy.")],
    confirmLabel: "Delete",
    danger: true,
    onConfirm: async () => {
      await api("DELETE", `/api/metadata/taskdefs/${encodeURIComponent(name)}`);
    },
  }).then((done) => {
    if (!done) return;
    context.notify(`Deleted task definition ${name}`);
    context.go("#/taskdefs");
  });
}
