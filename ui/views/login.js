// @ts-check
import { logIn } from "../lib/api.js";
import { h, replaceChildren } from "../lib/dom.js";

/**
 * The login form: an API key (`keyId:keySecret`) is exchanged for a token at once and never stored; a token
 * is used as it is. Both last for this browser tab only.
 * @param {HTMLElement} container
 * @param {URLSearchParams} _params
 * @param {import("../app.js").ViewContext} _context
 * @param {() => void | Promise<void>} onLoggedIn
 */
export function renderLogin(container, _params, _context, onLoggedIn) {
  const credential = h("input", { id: "credential", name: "credential", type: "password", required: true, autocomplete: "off", "aria-describedby": "credential-help" });
  const error = h("p", { className: "error", role: "alert" });
  const submit = h("button", { type: "submit" }, "Log in");
  const form = h("form", {
    className: "card login",
    onsubmit: async (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      submit.disabled = true;
      error.textContent = "";
      try {
        await logIn(credential.value);
        credential.value = "";
        await onLoggedIn();
      } catch (failure) {
        error.textContent = failure instanceof Error ? failure.message : String(failure);
        credential.focus();
      } finally {
        submit.disabled = false;
      }
    },
  },
    h("h1", {}, "Log in"),
    h("label", { for: "credential" }, "API key or token"),
    credential,
    h("p", { id: "credential-help", className: "help" },
      "An API key as ", h("code", {}, "keyId:keySecret"), " (the admin's is ", h("code", {}, "BOOTSTRAP_ADMIN_KEY"), ", which ", h("code", {}, "npm start"), " prints), or an access token. ",
      "It is kept for this tab only."),
    submit,
    error);
  replaceChildren(container, form);
  credential.focus();
}
