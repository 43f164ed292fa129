// @ts-check
import { ApiError, errorMessage } from "./api.js";
import { openDialog } from "./dialog.js";
import { h } from "./dom.js";
import { jsonEditor, readObject } from "./json-editor.js";

/**
 * @typedef {object} EntityEditor
 * @property {string} kind what it edits, in words ("task definition")
 * @property {string | undefined} name the stored one's name, when editing one; undefined for a new one
 * @property {unknown} value what the editor starts from (the stored one, or a template)
 * @property {string} editorId
 * @property {string} listHref where Save, Cancel and Delete lead
 * @property {boolean} canEdit whether the caller's permissions let it save and delete (the service still decides: a 403 is shown)
 * @property {string} [missing] what saving and deleting need, in words, said to a caller without it ("METADATA_ADMIN")
 * @property {(entity: Record<string, unknown>) => Promise<void>} save stores it (creating or replacing)
 * @property {() => Promise<void>} remove deletes the stored one
 * @property {string} removalNote what deleting it means, for the confirmation
 * @property {HTMLElement} [help] shown above the editor
 */

/**
 * A stored JSON document (a task definition, an event handler) as an editable form, read-only without the right:
 * Save stores it, the service's validation errors are marked at their lines, Delete asks first. Its name cannot be
 * changed: that would store a second one and leave this one in place. Without the right the text cannot be typed into
 * (it can be read and copied), there is no Register, Save or Delete, and a note says what they need: otherwise a user
 * edits for nothing and learns only from the 403 of the save.
 * @param {EntityEditor} options
 * @param {import("../app.js").ViewContext} context
 * @returns {HTMLElement[]} the heading and the form
 */
export function entityEditor(options, context) {
  const { kind, name, canEdit, listHref } = options;
  const editor = jsonEditor({ id: options.editorId, label: `${kind[0]?.toUpperCase()}${kind.slice(1)} (JSON)`, value: options.value, rows: 24, readOnly: !canEdit });
  const message = h("p", { className: "error", role: "alert" });
  const save = h("button", { type: "submit" }, name === undefined ? "Register" : "Save");
  const remove = name !== undefined && canEdit ? h("button", { type: "button", className: "danger", onclick: () => confirmRemoval(options, context) }, "Delete…") : null;
  const form = h("form", {
    className: "definition-editor",
    onsubmit: async (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      if (!canEdit) return;
      message.textContent = "";
      /** @type {Record<string, unknown>} */
      let entity;
      try {
        entity = readObject(editor);
      } catch (error) {
        message.textContent = errorMessage(error);
        return;
      }
      if (name !== undefined && entity["name"] !== name) {
        message.textContent = `The name is ${JSON.stringify(name)}: register a new ${kind} to use another name.`;
        return;
      }
      save.disabled = true;
      try {
        await options.save(entity);
        context.notify(`Saved ${kind} ${String(entity["name"])}`);
        context.go(listHref);
      } catch (error) {
        message.textContent = errorMessage(error);
        if (error instanceof ApiError && error.validationErrors.length > 0) editor.showErrors(error.validationErrors);
      } finally {
        save.disabled = false;
      }
    },
  },
    options.help ?? null,
    canEdit ? null : readOnlyNote(name === undefined ? `Registering a new ${kind}` : `Saving or deleting this ${kind}`, options.missing),
    editor.element,
    message,
    h("div", { className: "actions" }, canEdit ? save : null, remove, h("a", { className: "button secondary", href: listHref }, canEdit ? "Cancel" : "Back")));
  return [h("h1", {}, name === undefined ? `New ${kind}` : `${kind[0]?.toUpperCase()}${kind.slice(1)} ${name}`), form];
}

/**
 * What a caller who may not write is told above the read-only text: what the action it cannot take needs.
 * @param {string} action what is refused, in words ("Saving this workflow definition")
 * @param {string} [missing] the permissions that would allow it, in words
 */
export function readOnlyNote(action, missing = "a permission you do not hold") {
  return h("p", { className: "help read-only-note", role: "note" }, `Read only: ${action} needs ${missing}.`);
}

/**
 * @param {EntityEditor} options
 * @param {import("../app.js").ViewContext} context
 */
function confirmRemoval(options, context) {
  const { kind, name } = options;
  void openDialog({
    title: `Delete ${kind} ${String(name)}?`,
    body: [h("p", {}, options.removalNote)],
    confirmLabel: "Delete",
    danger: true,
    onConfirm: options.remove,
  }).then((done) => {
    if (!done) return;
    context.notify(`Deleted ${kind} ${String(name)}`);
    context.go(options.listHref);
  });
}
