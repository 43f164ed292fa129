// What a refused request says, shown in the page (plain ES module, no build step).
import { ApiError, errorMessage } from "./api.js";
import { h } from "./dom.js";

/**
 * A failure as an alert in the page: the service's message and, when its `validationErrors` name more than one field,
 * each of them under it (`path` and what is wrong there; the message names the first only, and says how many more),
 * for a page that has nothing else to show in its place. The status line says it too, but only for a while.
 * @param {unknown} error
 * @returns {HTMLElement}
 */
export function failureNotice(error) {
  const issues = error instanceof ApiError ? error.validationErrors : [];
  return h("div", { className: "error", role: "alert" },
    h("p", {}, errorMessage(error)),
    issues.length < 2 ? null : h("ul", {}, issues.map(({ path, message }) => h("li", {}, path ? [h("code", {}, path), " "] : null, message))));
}
