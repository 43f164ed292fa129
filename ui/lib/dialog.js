// @ts-check
import { h } from "./dom.js";

/**
 * Opens a modal dialog (native `<dialog>`: focus is trapped and Escape cancels). `onConfirm` runs on submit;
 * when it throws, its message is shown in the dialog, which stays open so nothing typed is lost. Leaving the page
 * (the address changes) cancels it.
 * @param {{ title: string, body?: Array<Node | string>, confirmLabel: string, danger?: boolean, onConfirm: () => Promise<void> }} options
 * @returns {Promise<boolean>} whether the action was confirmed and succeeded
 */
export function openDialog({ title, body = [], confirmLabel, danger = false, onConfirm }) {
  return new Promise((resolve) => {
    const error = h("p", { className: "error", role: "alert" });
    const confirm = h("button", { type: "submit", className: danger ? "danger" : "" }, confirmLabel);
    const cancel = h("button", { type: "button", className: "secondary", onclick: () => dialog.close("cancel") }, "Cancel");
    const titleId = `dialog-title-${Math.random().toString(36).slice(2)}`;
    const dialog = h("dialog", { "aria-labelledby": titleId },
      h("form", {
        method: "dialog",
        onsubmit: async (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          confirm.disabled = true;
          error.textContent = "";
          try {
            await onConfirm();
            dialog.close("done");
          } catch (failure) {
            error.textContent = failure instanceof Error ? failure.message : String(failure);
          } finally {
            confirm.disabled = false;
          }
        },
      },
        h("h2", { id: titleId }, title),
        ...body,
        error,
        h("div", { className: "dialog-actions" }, cancel, confirm)));
    // The dialog belongs to the page that opened it, and most name their subject only by that page ("Terminate
    // workflow", "Delete this application?"): left open over the next page (the browser's Back, a session ending), it
    // would act on the page left. A dialog whose action navigates on success is closed ("done") before this runs.
    const leave = () => {
      if (dialog.open) dialog.close("cancel");
    };
    window.addEventListener("hashchange", leave);
    dialog.addEventListener("close", () => {
      window.removeEventListener("hashchange", leave);
      dialog.remove();
      resolve(dialog.returnValue === "done");
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
