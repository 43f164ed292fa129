// @ts-check
import { api, errorMessage, permissionsAnywhere, permissionsAt } from "../lib/api.js";
import { mayWriteDefinition } from "./definition.js";
import { h, matchesFilter, replaceChildren, tagList } from "../lib/dom.js";
import { createHash } from "../lib/hash.js";

/**
 * @typedef {{ name: string, version: number, description?: string, ownerEmail?: string, updateTime?: number, createTime?: number,
 *   tags?: Array<{ key: string, value: string }> }} Definition a definition as the list reads it: without its tasks
 */

/**
 * Every registered definition, latest version first within a name, with a link to register a new one.
 * @type {import("../app.js").View}
 */
export async function renderDefinitions(container, _params, context) {
  const filter = h("input", { id: "definition-filter", type: "search", placeholder: "name or key=value…" });
  const list = h("div", { className: "results", "aria-live": "polite" });
  // Registering one takes METADATA_ADMIN at `*`, or WORKFLOW_WRITE at the new one's scope (some scope, before its name is
  // typed).
  // Without their tasks (short=true), which the list does not show and which make most of a large definition: the
  // whole listing of a large tenant is over what one listing answers, a 413 (shown in the page) that this one stays under.
  const reading = /** @type {Promise<Definition[]>} */ (api("GET", "/api/metadata/workflow?short=true&metadata=true"));
  // Awaited below (a refusal is the page's error there), not reported as unhandled while the permissions are read.
  reading.catch(() => {});
  const [held, atAll] = await Promise.all([permissionsAnywhere(), permissionsAt("*")]);
  if (!context.active()) return;
  const canRegister = mayWriteDefinition(held, atAll);
  replaceChildren(container,
    h("div", { className: "page-head" }, h("h1", {}, "Definitions"), canRegister ? h("a", { className: "button", href: createHash("definitions") }, "New definition") : null),
    h("div", { className: "filters" }, h("div", { className: "field" }, h("label", { for: "definition-filter" }, "Filter"), filter)),
    list);
  /** @type {Definition[]} */
  let definitions;
  try {
    definitions = await reading;
  } catch (error) {
    // In the page, where the list would be (a 413 names what to ask for instead), not only in the status line.
    if (context.active()) replaceChildren(list, h("p", { className: "error", role: "alert" }, errorMessage(error)));
    return;
  }
  if (!context.active()) return;
  definitions.sort((a, b) => a.name.localeCompare(b.name) || b.version - a.version);

  function render() {
    const needle = filter.value.trim().toLowerCase();
    const shown = definitions.filter((definition) => matchesFilter(definition.name, definition.tags, needle));
    if (shown.length === 0) {
      replaceChildren(list, h("p", { className: "empty" }, definitions.length === 0 ? "No definition is registered yet." : "No definition matches."));
      return;
    }
    replaceChildren(list, h("div", { className: "table-wrap" }, h("table", {},
      h("caption", { className: "visually-hidden" }, "Definitions"),
      h("thead", {}, h("tr", {}, ["Name", "Version", "Tags", "Description", "Owner"].map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, shown.map((definition) => h("tr", {},
        h("td", {}, h("a", { href: `#/definitions/${encodeURIComponent(definition.name)}/${definition.version}` }, definition.name)),
        h("td", {}, String(definition.version)),
        h("td", {}, tagList(definition.tags)),
        h("td", {}, definition.description ?? ""),
        h("td", {}, definition.ownerEmail ?? "")))))));
  }
  filter.addEventListener("input", render);
  render();
}
