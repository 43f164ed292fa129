// @ts-check
import { errorMessage } from "./api.js";
import { h } from "./dom.js";

/**
 * A form of labelled fields with one button: `act` runs with the fields' values on submit, its refusal shown below.
 * @param {{ fields: HTMLInputElement[], labels: string[], button: string, act: (values: string[]) => Promise<void> }} options
 * @returns {HTMLElement[]}
 */
export function actionForm({ fields, labels, button, act }) {
  const message = h("p", { className: "error", role: "alert" });
  const submit = h("button", { type: "submit" }, button);
  const form = h("form", {
    className: "filters",
    onsubmit: async (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      message.textContent = "";
      submit.disabled = true;
      try {
        await act(fields.map((field) => field.value));
      } catch (error) {
        message.textContent = errorMessage(error);
      } finally {
        submit.disabled = false;
      }
    },
  }, ...fields.map((field, index) => h("div", { className: "field" }, h("label", { for: field.id }, labels[index] ?? ""), field)), submit);
  return [form, message];
}

