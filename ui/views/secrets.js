// @ts-check
import { actionForm } from "../lib/action-form.js";
import { api, ApiError, errorMessage } from "../lib/api.js";
import { openDialog } from "../lib/dialog.js";
import { copyButton, h, matchesFilter, replaceChildren, tagList } from "../lib/dom.js";

/**
 * A secret as `/api/secrets-v2` lists it (Orkes' ExtendedSecret): its name and tags, never its value.
 * @typedef {{ name: string, tags: Array<{ key: string, value: string }> }} Secret
 */

/** The service's rule for a secret's name (see src/worker/secrets/store.ts). */
const NAME_PATTERN = "[A-Za-z0-9_.\\-]{1,128}";

/** @param {string} name */
const secretPath = (name) => `/api/secrets/${encodeURIComponent(name)}`;
/** @param {string} name */
const reference = (name) => `\${workflow.secrets.${name}}`;

/**
 * A refused read: the secrets API is SYSTEM_ADMIN's.
 * @param {unknown} error
 */
function refusal(error) {
  if (error instanceof ApiError && error.status === 403) return h("p", { className: "empty" }, "Secrets need SYSTEM_ADMIN.");
  throw error;
}

/** @param {string} id */
const valueField = (id) => /** @type {HTMLInputElement} */ (h("input", { id, type: "password", autocomplete: "new-password", required: true }));

/**
 * Every secret by name with its tags and how a definition names it; a form adds one (or replaces a value).
 * @type {import("../app.js").View}
 */
export async function renderSecrets(container, _params, context) {
  /** @type {Secret[]} */
  let secrets;
  try {
    secrets = /** @type {Secret[]} */ (await api("GET", "/api/secrets-v2"));
  } catch (error) {
    if (context.active()) replaceChildren(container, h("h1", {}, "Secrets"), refusal(error));
    return;
  }
  if (!context.active()) return;
  const name = /** @type {HTMLInputElement} */ (h("input", { id: "secret-name", required: true, pattern: NAME_PATTERN, maxlength: "128", autocomplete: "off", placeholder: "stripe_key" }));
  const added = actionForm({
    fields: [name, valueField("secret-value")],
    labels: ["Name", "Value"],
    button: "Save secret",
    act: async ([secretName = "", value = ""]) => {
      await api("PUT", secretPath(secretName), value);
      context.notify(`Saved secret ${secretName}`);
      context.go(`#/secrets/${encodeURIComponent(secretName)}`);
    },
  });
  const filter = h("input", { id: "secret-filter", type: "search", placeholder: "name or key=value…" });
  const list = h("div", { className: "results", "aria-live": "polite" });
  replaceChildren(container,
    h("h1", {}, "Secrets"),
    h("p", { className: "help" }, "Definitions use a secret as ${workflow.secrets.<name>}: its value is sent when a task runs and shown as *** everywhere else. Values are write-only: no page or request shows one again. Saving a name that exists replaces its value."),
    h("section", { className: "panel", "aria-labelledby": "secret-add" }, h("h2", { id: "secret-add" }, "Add or replace a secret"), ...added),
    h("div", { className: "filters" }, h("div", { className: "field" }, h("label", { for: "secret-filter" }, "Filter"), filter)),
    list);

  function render() {
    const needle = filter.value.trim().toLowerCase();
    const shown = secrets.filter((secret) => matchesFilter(secret.name, secret.tags, needle));
    if (shown.length === 0) {
      replaceChildren(list, h("p", { className: "empty" }, secrets.length === 0 ? "No secret is stored yet." : "No secret matches."));
      return;
    }
    replaceChildren(list, h("div", { className: "table-wrap" }, h("table", {},
      h("caption", { className: "visually-hidden" }, "Secrets"),
      h("thead", {}, h("tr", {}, ["Name", "Tags", "In a definition"].map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, shown.map((secret) => h("tr", {},
        h("td", {}, h("a", { href: `#/secrets/${encodeURIComponent(secret.name)}` }, secret.name)),
        h("td", {}, tagList(secret.tags)),
        h("td", {}, h("code", {}, reference(secret.name)), " ", copyButton(reference(secret.name)))))))));
  }
  filter.addEventListener("input", render);
  render();
}

/**
 * One secret: its tags (removed one by one, added by key and value), a new value, or its deletion.
 * @type {import("../app.js").View}
 */
export async function renderSecret(container, params, context, name = "") {
  /** @type {Array<{ key: string, value: string }>} */
  let tags;
  try {
    tags = /** @type {Array<{ key: string, value: string }>} */ (await api("GET", `${secretPath(name)}/tags`));
  } catch (error) {
    if (!context.active()) return;
    if (error instanceof ApiError && error.status === 404) {
      replaceChildren(container, h("h1", {}, name), h("p", { className: "empty" }, "No secret of that name is stored."), h("p", {}, h("a", { href: "#/secrets" }, "All secrets")));
      return;
    }
    replaceChildren(container, h("h1", {}, name), refusal(error));
    return;
  }
  if (!context.active()) return;
  const reload = () => renderSecret(container, params, context, name);
  const tagKey = /** @type {HTMLInputElement} */ (h("input", { id: "secret-tag-key", required: true, maxlength: "256" }));
  const tagValue = /** @type {HTMLInputElement} */ (h("input", { id: "secret-tag-value", maxlength: "256" }));
  const addTag = actionForm({
    fields: [tagKey, tagValue],
    labels: ["Key", "Value"],
    button: "Add tag",
    act: async ([key = "", value = ""]) => {
      await api("PUT", `${secretPath(name)}/tags`, [{ key, value }]);
      context.notify(`Tagged ${name} ${key}=${value}`);
      await reload();
    },
  });
  const replace = actionForm({
    fields: [valueField("secret-new-value")],
    labels: ["New value"],
    button: "Replace value",
    act: async ([value = ""]) => {
      await api("PUT", secretPath(name), value);
      context.notify(`Replaced the value of ${name}: tasks started from now on send the new one`);
      await reload();
    },
  });
  const removeTag = (/** @type {{ key: string, value: string }} */ tag) => async () => {
    try {
      await api("DELETE", `${secretPath(name)}/tags`, [tag]);
      context.notify(`Removed tag ${tag.key}=${tag.value}`);
      await reload();
    } catch (error) {
      context.notify(errorMessage(error), "error");
    }
  };
  const remove = () => openDialog({
    title: `Delete secret ${name}?`,
    body: [h("p", {}, "Tasks that use it fail from then on, naming it; the definitions that name it stay as they are.")],
    confirmLabel: "Delete",
    danger: true,
    onConfirm: async () => {
      await api("DELETE", secretPath(name));
      context.notify(`Deleted secret ${name}`);
      context.go("#/secrets");
    },
  });
  replaceChildren(container,
    h("div", { className: "page-head" }, h("h1", {}, `Secret ${name}`), h("button", { type: "button", className: "danger", onclick: remove }, "Delete…")),
    h("p", {}, "In a definition: ", h("code", {}, reference(name)), " ", copyButton(reference(name))),
    h("section", { className: "panel", "aria-labelledby": "secret-tags" },
      h("h2", { id: "secret-tags" }, "Tags"),
      tags.length === 0
        ? h("p", { className: "empty" }, "No tags.")
        : h("ul", { className: "plain-list" }, tags.map((tag) => h("li", {}, tagList([tag]),
          h("button", { type: "button", className: "secondary small", "aria-label": `Remove tag ${tag.key}=${tag.value}`, onclick: removeTag(tag) }, "Remove")))),
      ...addTag),
    h("section", { className: "panel", "aria-labelledby": "secret-replace" }, h("h2", { id: "secret-replace" }, "Replace its value"), ...replace),
    h("p", {}, h("a", { href: "#/secrets" }, "All secrets")));
}
