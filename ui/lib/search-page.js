// @ts-check
import { errorMessage } from "./api.js";
import { h, replaceChildren } from "./dom.js";

/**
 * The address of a search page with its filters (those with a value, in order), its page's start (when past the
 * first) and `trailing` parameters: a filtered list can be bookmarked.
 * @param {string} route e.g. `#/executions`
 * @param {Array<[string, string]>} filters
 * @param {number} pageStart
 * @param {Array<[string, string]>} [trailing]
 */
export function searchHash(route, filters, pageStart, trailing = []) {
  const query = new URLSearchParams();
  for (const [key, value] of filters) {
    if (value) query.set(key, value);
  }
  if (pageStart > 0) query.set("start", String(pageStart));
  for (const [key, value] of trailing) {
    if (value) query.set(key, value);
  }
  const text = query.toString();
  return `${route}${text ? `?${text}` : ""}`;
}

/**
 * A search form: each field a label and its control, then the Search button, which goes to `hashFor(0)`.
 * @param {import("../app.js").ViewContext} context
 * @param {(pageStart: number) => string} hashFor
 * @param {Array<[id: string, label: string, control: HTMLElement]>} fields
 * @param {HTMLElement[]} [more] what else the form holds (a datalist)
 */
export function searchForm(context, hashFor, fields, more = []) {
  return h("form", {
    className: "filters",
    role: "search",
    onsubmit: (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      context.go(hashFor(0));
    },
  },
    fields.map(([id, label, control]) => h("div", { className: "field" }, h("label", { for: id }, label), control)),
    h("div", { className: "field actions" }, h("button", { type: "submit" }, "Search")),
    more);
}

/**
 * The most hits the workflow, task and human task searches count (the server's `COUNTED_HITS`): a `totalHits` at or
 * past it may be a lower bound, the count having stopped there (or at the page's end plus one).
 */
export const COUNTED_HITS = 10_000;

/**
 * The pager's words: "1–50 of 120". A `total` at or past `countedUpTo` with hits after the page is a count that
 * stopped, not the number of hits: "1–50 of 10,000+", not "of 10000", which a reader would take for all there are.
 * @param {number} start the page's first result (0-based)
 * @param {number} shown how many the page holds
 * @param {number} total how many there are (at least, past `countedUpTo`)
 * @param {number} [countedUpTo] where the search stops counting; none: it counts every hit
 */
export function pagerText(start, shown, total, countedUpTo = Infinity) {
  const last = Math.min(total, start + shown);
  const more = total >= countedUpTo && last < total ? "+" : "";
  return `${count(start + 1)}–${count(last)} of ${count(total)}${more}`;
}

/** @param {number} n */
function count(n) {
  return n.toLocaleString("en-US");
}

/**
 * The pager under a page of results: which of them it shows, and links to the pages before and after.
 * @param {number} start the page's first result (0-based)
 * @param {number} shown how many the page holds
 * @param {number} total how many there are (at least, past `countedUpTo`)
 * @param {number} pageSize
 * @param {(pageStart: number) => string} hashFor
 * @param {number} [countedUpTo] where the search stops counting (see {@link pagerText}); none: it counts every hit
 */
export function pager(start, shown, total, pageSize, hashFor, countedUpTo = Infinity) {
  const last = Math.min(total, start + shown);
  return h("nav", { className: "pager", "aria-label": "Pages" },
    h("span", {}, pagerText(start, shown, total, countedUpTo)),
    start > 0 ? h("a", { href: hashFor(Math.max(0, start - pageSize)) }, "Previous") : null,
    last < total ? h("a", { href: hashFor(start + pageSize) }, "Next") : null);
}

/**
 * Reads a page of results into `results`: what `read` answers, drawn by `render` while the view is still shown, or
 * the error in its place; `results` is marked busy until then.
 * @template T
 * @param {HTMLElement} results
 * @param {import("../app.js").ViewContext} context
 * @param {() => Promise<T>} read
 * @param {(page: T) => void} render
 */
export async function loadResults(results, context, read, render) {
  try {
    const page = await read();
    if (context.active()) render(page);
  } catch (error) {
    if (context.active()) replaceChildren(results, h("p", { className: "error", role: "alert" }, errorMessage(error)));
  } finally {
    results.setAttribute("aria-busy", "false");
  }
}
