// @ts-check
import { actionForm } from "../lib/action-form.js";
import { api, ApiError, permissionsAt } from "../lib/api.js";
import { openDialog } from "../lib/dialog.js";
import { copyButton, h, replaceChildren, tagList } from "../lib/dom.js";

/**
 * A variable as `GET /api/environment` lists it (Orkes' EnvironmentVariable).
 * @typedef {{ name: string, value: string, tags: Array<{ key: string, value: string }> }} Variable
 */

/** The service's rule for a variable's name (see src/engine/environment.ts). */
const NAME_PATTERN = "[A-Za-z0-9_\\-]{1,128}";

/** @param {string} name */
const variablePath = (name) => `/api/environment/${encodeURIComponent(name)}`;
/** @param {string} name */
const reference = (name) => `\${workflow.env.${name}}`;

/**
 * Every environment variable with its value and how a definition names it; system admins add, replace and delete them.
 * @type {import("../app.js").View}
 */
export async function renderEnvironment(container, _params, context) {
  /** @type {Variable[]} */
  let variables;
  try {
    variables = /** @type {Variable[]} */ (await api("GET", "/api/environment"));
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 403)) throw error;
    if (context.active()) replaceChildren(container, h("h1", {}, "Environment variables"), h("p", { className: "empty" }, "Environment variables are shown to users who may read workflows (WORKFLOW_READ) or metadata (METADATA_ADMIN)."));
    return;
  }
  const mayWrite = (await permissionsAt("*")).has("SYSTEM_ADMIN");
  if (!context.active()) return;
  const reload = () => renderEnvironment(container, _params, context);
  const remove = (/** @type {string} */ name) => () => openDialog({
    title: `Delete environment variable ${name}?`,
    body: [h("p", {}, "Executions started from then on read it as null; those already running keep the value they started with.")],
    confirmLabel: "Delete",
    danger: true,
    onConfirm: async () => {
      await api("DELETE", variablePath(name));
      context.notify(`Deleted environment variable ${name}`);
      await reload();
    },
  });
  /** @type {HTMLElement[]} */
  let form = [];
  if (mayWrite) {
    const name = /** @type {HTMLInputElement} */ (h("input", { id: "env-name", required: true, pattern: NAME_PATTERN, maxlength: "128", autocomplete: "off", placeholder: "payments_url" }));
    const value = /** @type {HTMLInputElement} */ (h("input", { id: "env-value", autocomplete: "off", placeholder: "https://payments.example.com" }));
    form = [h("section", { className: "panel", "aria-labelledby": "env-add" }, h("h2", { id: "env-add" }, "Add or replace a variable"), ...actionForm({
      fields: [name, value],
      labels: ["Name", "Value"],
      button: "Save variable",
      act: async ([variableName = "", text = ""]) => {
        await api("PUT", variablePath(variableName), text);
        context.notify(`Saved environment variable ${variableName}: executions started from now on read the new value`);
        await reload();
      },
    }))];
  }
  replaceChildren(container,
    h("h1", {}, "Environment variables"),
    h("p", { className: "help" }, "Values every workflow can read, such as a service's base URL: ${workflow.env.<name>} is the text, ${workflow.env.<name>.$} the text read as JSON. An execution keeps the values its definition names as they were when it started; a retry, restart or rerun reads them again. Only system admins change them, since a value can decide where a workflow sends what it holds."),
    ...form,
    variables.length === 0
      ? h("p", { className: "empty" }, "No environment variable is set yet.")
      : h("div", { className: "table-wrap" }, h("table", {},
        h("caption", { className: "visually-hidden" }, "Environment variables"),
        h("thead", {}, h("tr", {}, ["Name", "Value", "Tags", "In a definition", ...(mayWrite ? [""] : [])].map((title) => h("th", { scope: "col" }, title)))),
        h("tbody", {}, variables.map(({ name, value, tags }) => h("tr", {},
          h("td", {}, name),
          h("td", {}, h("code", {}, value)),
          h("td", {}, tagList(tags)),
          h("td", {}, h("code", {}, reference(name)), " ", copyButton(reference(name))),
          ...(mayWrite ? [h("td", {}, h("button", { type: "button", className: "secondary small", "aria-label": `Delete ${name}`, onclick: remove(name) }, "Delete…"))] : [])))))));
}
