// @ts-check
import { api, errorMessage, me } from "../lib/api.js";
import { fact, formatTime, h, replaceChildren, statusBadge } from "../lib/dom.js";
import { jsonEditor, readObject } from "../lib/json-editor.js";
import { jsonBlock } from "../lib/json-view.js";
import { COUNTED_HITS, loadResults, pager, searchForm, searchHash } from "../lib/search-page.js";

/**
 * @typedef {{ user: string, userType: string }} HumanUser
 * @typedef {{ taskId: string, workflowId: string, workflowName: string, taskRefName: string, displayName: string, state: string,
 *   assignee?: HumanUser, claimant?: HumanUser, input: Record<string, unknown>, output: Record<string, unknown>, updatedOn: number,
 *   humanTaskDef: { fullTemplate?: { name: string, version: number, jsonSchema: FormSchema } } }} HumanTaskEntry
 * @typedef {{ type?: string, title?: string, description?: string, enum?: unknown[], properties?: Record<string, FormSchema>, required?: string[] }} FormSchema
 */

const OPEN_STATES = ["ASSIGNED", "IN_PROGRESS"];
/** Tasks one page of the Inbox shows. */
const PAGE_SIZE = 50;

/** @param {HumanUser | undefined} user */
function who(user) {
  if (!user) return "";
  return `${user.user}${user.userType.endsWith("GROUP") ? " (group)" : ""}${user.userType.startsWith("EXTERNAL") ? " (external)" : ""}`;
}

/**
 * The human task inbox: HUMAN tasks assigned to the signed-in user or a group of theirs (or open to them), or, in the
 * "All" view, every one of the workflows they may read. Each opens its form.
 * @type {import("../app.js").View}
 */
export async function renderInbox(container, params, context) {
  const view = params.get("view") === "all" ? "ADMIN" : "INBOX";
  const states = params.get("states") === "all" ? [] : OPEN_STATES;
  const workflowName = params.get("workflowName") ?? "";
  const text = params.get("text") ?? "";
  const start = Math.max(0, Number(params.get("start") ?? 0) || 0);
  const results = h("div", { className: "results", "aria-live": "polite", "aria-busy": "true" });
  const link = (/** @type {string} */ label, /** @type {string} */ hash, /** @type {boolean} */ current) => h("a", { href: hash, "aria-current": current ? "page" : undefined }, label);
  const workflowInput = h("input", { id: "inbox-filter-workflow", name: "workflowName", value: workflowName });
  // As the service reads fullTextQuery: case (ASCII) ignored, texts joined by upper-case AND and OR.
  const textInput = h("input", { id: "inbox-filter-text", name: "text", value: text, type: "search", title: "Text anywhere in the task, case ignored; * matches anything; join texts with AND and OR" });
  // The tab's own parameters stay with the filters and the pages.
  const tab = /** @type {Array<[string, string]>} */ ([["view", view === "ADMIN" ? "all" : ""], ["states", view === "INBOX" && states.length === 0 ? "all" : ""]]);
  /** @param {number} pageStart */
  const hashFor = (pageStart) => searchHash("#/inbox", [["workflowName", workflowInput.value.trim()], ["text", textInput.value.trim()]], pageStart, tab);
  replaceChildren(container,
    h("div", { className: "page-head" }, h("h1", {}, "Inbox"), h("button", { type: "button", className: "secondary", onclick: () => void load() }, "Refresh")),
    h("p", { className: "help" }, "HUMAN tasks: those assigned to you or your groups, and open ones of workflows you may read. A change shows here within a second or two."),
    h("nav", { className: "tabs", "aria-label": "Which tasks" },
      link("Mine, waiting", "#/inbox", view === "INBOX" && states.length > 0),
      link("Mine, all states", "#/inbox?states=all", view === "INBOX" && states.length === 0),
      link("All I may read", "#/inbox?view=all", view === "ADMIN")),
    searchForm(context, hashFor, [
      ["inbox-filter-workflow", "Workflow name", workflowInput],
      ["inbox-filter-text", "Text", textInput],
    ]),
    results);

  const search = { searchType: view, states, start, size: PAGE_SIZE, ...(workflowName ? { workflowNames: [workflowName] } : {}), ...(text ? { fullTextQuery: text } : {}) };
  const load = () =>
    loadResults(results, context, async () => /** @type {{ totalHits: number, results: HumanTaskEntry[] }} */ (await api("POST", "/api/human/tasks/search", search)), renderList);

  /** @param {{ totalHits: number, results: HumanTaskEntry[] }} page */
  function renderList(page) {
    const entries = page.results;
    if (entries.length === 0) {
      replaceChildren(results, h("p", { className: "empty" }, workflowName || text ? "No task matches." : "Nothing waits for you here."));
      return;
    }
    const rows = entries.map((entry) =>
      h("tr", { "data-task-id": entry.taskId },
        h("td", {}, h("a", { href: `#/inbox/${entry.taskId}` }, entry.displayName)),
        h("td", {}, statusBadge(entry.state)),
        h("td", {}, who(entry.assignee) || h("span", { className: "muted" }, "open to anyone")),
        h("td", {}, who(entry.claimant)),
        h("td", {}, h("a", { href: `#/executions/${entry.workflowId}` }, entry.workflowName)),
        h("td", {}, formatTime(entry.updatedOn))));
    replaceChildren(results,
      h("div", { className: "table-wrap" },
        h("table", {},
          h("caption", { className: "visually-hidden" }, "Human tasks"),
          h("thead", {}, h("tr", {}, ["Task", "State", "Assigned to", "Claimed by", "Workflow", "Updated"].map((title) => h("th", { scope: "col" }, title)))),
          h("tbody", {}, rows))),
      pager(start, entries.length, page.totalHits, PAGE_SIZE, hashFor, COUNTED_HITS));
  }

  await load();
}

/**
 * One form field for property `name` of a user form's schema: a choice (a yes/no for a boolean, so that leaving it
 * unanswered is not a "no"), a number or a text box. Each reads undefined while left empty.
 * @param {string} name
 * @param {FormSchema} schema
 * @param {unknown} value
 * @param {boolean} required
 * @param {boolean} disabled
 * @returns {{ element: HTMLElement, read: () => unknown }}
 */
function formField(name, schema, value, required, disabled) {
  const id = `form-field-${name}`;
  const label = h("label", { for: id }, schema.title ?? name, required ? " *" : "");
  const hint = schema.description ? h("span", { className: "help" }, schema.description) : undefined;
  const choices = schema.type === "boolean" ? [[true, "Yes"], [false, "No"]] : Array.isArray(schema.enum) ? schema.enum.map((option) => [option, String(option)]) : undefined;
  if (choices) {
    const options = choices.map(([option, text]) => h("option", { value: JSON.stringify(option), selected: option === value }, String(text)));
    const select = h("select", { id, disabled, required }, h("option", { value: "" }, "choose…"), options);
    return { element: h("div", { className: "field" }, label, select, hint), read: () => (select.value === "" ? undefined : JSON.parse(select.value)) };
  }
  if (schema.type === "number" || schema.type === "integer") {
    const input = h("input", { id, type: "number", step: schema.type === "integer" ? "1" : "any", value: typeof value === "number" ? String(value) : "", disabled, required });
    return { element: h("div", { className: "field" }, label, input, hint), read: () => (input.value === "" ? undefined : Number(input.value)) };
  }
  const input = h("textarea", { id, rows: "2", disabled, required }, typeof value === "string" ? value : "");
  return { element: h("div", { className: "field" }, label, input, hint), read: () => (input.value === "" ? undefined : input.value) };
}

/** True when a user form's schema can be shown as fields (an object of booleans, numbers, strings and choices). */
function fieldsFit(/** @type {FormSchema | undefined} */ schema) {
  if (!schema || schema.type !== "object" || !schema.properties) return false;
  return Object.values(schema.properties).every((property) => Array.isArray(property.enum) || ["boolean", "number", "integer", "string"].includes(property.type ?? ""));
}

/**
 * One human task: what it is about (its input), who has it, and its form: claim, save, submit, release.
 * @type {import("../app.js").View}
 */
export async function renderHumanTask(container, params, context, taskId) {
  const [entry, identity] = await Promise.all([
    /** @type {Promise<HumanTaskEntry>} */ (api("GET", `/api/human/tasks/${encodeURIComponent(taskId)}?withTemplate=true`)),
    me(),
  ]);
  if (!context.active()) return;
  const claimedByMe = entry.claimant?.userType === "CONDUCTOR_USER" && entry.claimant.user === identity.userId;
  const open = OPEN_STATES.includes(entry.state);
  const schema = entry.humanTaskDef.fullTemplate?.jsonSchema;
  const editable = open && claimedByMe;

  /** @type {() => Record<string, unknown>} */
  let readForm;
  /** @type {HTMLElement} */
  let formBody;
  if (fieldsFit(schema)) {
    const required = new Set(schema?.required ?? []);
    const fields = Object.entries(schema?.properties ?? {}).map(([name, property]) => ({ name, ...formField(name, property, entry.output[name], required.has(name), !editable) }));
    formBody = h("div", {}, fields.map((field) => field.element));
    readForm = () => Object.fromEntries(fields.map((field) => [field.name, field.read()]).filter(([, value]) => value !== undefined));
  } else {
    const editor = jsonEditor({ label: "Result", value: entry.output, rows: 8, id: "human-output", readOnly: !editable });
    formBody = h("div", { className: "field" }, h("label", { for: "human-output" }, "Result (JSON)"), editor.element);
    readForm = () => readObject(editor);
  }

  /** @param {string} path @param {unknown} body @param {string} done */
  const send = async (path, body, done) => {
    try {
      await api("POST", path, body);
      // Shown anew as it now stands; the message after, since a page change clears the status line.
      context.go(`#/inbox/${taskId}`);
      context.notify(done);
    } catch (error) {
      context.notify(errorMessage(error), "error");
    }
  };
  const base = `/api/human/tasks/${encodeURIComponent(taskId)}`;
  /** @type {HTMLElement[]} */
  const actions = [];
  if (open && !entry.claimant) actions.push(h("button", { type: "button", onclick: () => void send(`${base}/claim`, undefined, "Claimed: the task is yours to fill in.") }, "Claim"));
  if (editable) {
    const withForm = (/** @type {boolean} */ complete) => {
      try {
        return readForm();
      } catch (error) {
        context.notify(errorMessage(error), "error");
        return undefined;
      }
    };
    actions.push(
      h("button", { type: "button", onclick: () => { const form = withForm(true); if (form) void send(`${base}/update?complete=true`, form, "Submitted: the workflow goes on."); } }, "Submit"),
      h("button", { type: "button", className: "secondary", onclick: () => { const form = withForm(false); if (form) void send(`${base}/update`, form, "Saved."); } }, "Save"),
      h("button", { type: "button", className: "secondary", onclick: () => void send(`${base}/release`, undefined, "Released: others can claim it now.") }, "Release"));
  }

  replaceChildren(container,
    h("p", {}, h("a", { href: "#/inbox" }, "← Inbox")),
    h("div", { className: "page-head" }, h("h1", {}, entry.displayName), statusBadge(entry.state)),
    h("dl", { className: "facts" },
      fact("Assigned to", who(entry.assignee) || "anyone who may see it"),
      fact("Claimed by", who(entry.claimant) || "no one yet"),
      fact("Workflow", h("a", { href: `#/executions/${entry.workflowId}` }, entry.workflowName), " ", h("span", { className: "mono muted" }, entry.workflowId)),
      fact("Form", entry.humanTaskDef.fullTemplate ? `${entry.humanTaskDef.fullTemplate.name} v${entry.humanTaskDef.fullTemplate.version}` : "none (a JSON result)")),
    h("section", { className: "panel", "aria-labelledby": "human-input" }, h("h2", { id: "human-input" }, "Details"), jsonBlock(withoutSettings(entry.input), "Task input")),
    h("section", { className: "panel", "aria-labelledby": "human-form" },
      h("h2", { id: "human-form" }, "Your answer"),
      open && !editable ? h("p", { className: "help" }, entry.claimant ? "Claimed by someone else." : "Claim the task to fill it in.") : undefined,
      formBody,
      h("div", { className: "actions" }, actions)));
}

/** A task's input without Orkes' settings key (shown as the facts above). */
function withoutSettings(/** @type {Record<string, unknown>} */ input) {
  const { __humanTaskDefinition: _settings, ...rest } = input;
  return rest;
}
