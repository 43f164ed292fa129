// @ts-check
import { api, ApiError, permissionsAt } from "../lib/api.js";
import { formatTime, h, replaceChildren } from "../lib/dom.js";
import { createHash } from "../lib/hash.js";
import { entityEditor } from "../lib/entity-editor.js";

/**
 * Orkes' WebhookConfig, as `/api/metadata/webhook` answers it (secrets shown as ***).
 * @typedef {{ id: string, name: string, verifier: string, url: string, urlVerified: boolean, sourcePlatform?: string,
 *   headers?: Record<string, string>, receiverWorkflowNamesToVersions?: Record<string, number>,
 *   workflowsToStart?: Record<string, unknown>, webhookExecutionHistory?: WebhookEvent[] } & Record<string, unknown>} Webhook
 * An event the webhook received and verified (Orkes' WebhookExecutionHistory).
 * @typedef {{ eventId: string, matched: boolean, workflowIds: string[], payload: string, timeStamp: number }} WebhookEvent
 */

/** What "New webhook" starts from: a header-checked webhook completing the waiting tasks of one workflow. */
const TEMPLATE = {
  name: "my_webhook",
  verifier: "HEADER_BASED",
  headers: { "X-Webhook-Secret": "change-me" },
  receiverWorkflowNamesToVersions: { my_workflow: 1 },
  workflowsToStart: {},
  sourcePlatform: "Custom",
};

/** Fields of a webhook that a read shows and a save ignores. */
const READ_ONLY = new Set(["id", "url", "urlVerified", "createdBy", "updatedBy", "createTime", "updateTime", "webhookExecutionHistory"]);

/** Keys of `workflowsToStart` that are settings, not workflows. */
const START_SETTINGS = new Set(["idempotencyKey", "idempotencyStrategy"]);

/** @param {string} id */
const editPath = (id) => `#/webhooks/${encodeURIComponent(id)}`;

/**
 * Workflows a webhook names, in words: `name` (any version when 0) or `name v2`.
 * @param {Record<string, unknown> | undefined} versions
 * @param {string} none what to say when it names none
 */
export function workflowsText(versions, none) {
  const named = Object.entries(versions ?? {}).filter(([name]) => !START_SETTINGS.has(name));
  if (named.length === 0) return none;
  return named.map(([name, version]) => (typeof version === "number" && version > 0 ? `${name} v${version}` : name)).join(", ");
}

/** What saving and deleting a webhook need (as all metadata), in words for a caller without it. */
export const WEBHOOK_WRITE = "METADATA_ADMIN or WORKFLOW_WRITE on every workflow";

/**
 * Whether the caller may save and delete webhooks: `METADATA_ADMIN` or `WORKFLOW_WRITE` at `*` (docs/api.md, Webhooks).
 * Reading needs less (`WORKFLOW_READ` at `*`), so a reader reaches the pages without being able to write.
 */
async function mayWriteWebhooks() {
  const permissions = await permissionsAt("*");
  return permissions.has("METADATA_ADMIN") || permissions.has("WORKFLOW_WRITE");
}

/**
 * A refused read: webhooks are read as metadata is.
 * @param {unknown} error
 */
function refusal(error) {
  if (error instanceof ApiError && error.status === 403) return h("p", { className: "empty" }, "Webhooks need the right to read all workflows (or METADATA_ADMIN).");
  throw error;
}

/**
 * Every webhook: where its events are sent, how they are verified, whether one has been, and what they do.
 * @type {import("../app.js").View}
 */
export async function renderWebhooks(container, _params, context) {
  /** @type {Webhook[]} */
  let webhooks;
  /** @type {boolean} */
  let canEdit;
  try {
    [webhooks, canEdit] = await Promise.all([/** @type {Promise<Webhook[]>} */ (api("GET", "/api/metadata/webhook")), mayWriteWebhooks()]);
  } catch (error) {
    if (context.active()) replaceChildren(container, h("h1", {}, "Webhooks"), refusal(error));
    return;
  }
  if (!context.active()) return;
  replaceChildren(container,
    h("div", { className: "page-head" }, h("h1", {}, "Webhooks"), canEdit ? h("a", { className: "button", href: createHash("webhooks") }, "New webhook") : null),
    h("p", { className: "help" }, "One URL per sender (GitHub, Slack, Stripe, your own): each event is verified, completes the waiting WAIT_FOR_WEBHOOK tasks of the receiving workflows whose matches it meets, and starts the workflows to start with it as their input."),
    webhooks.length === 0
      ? h("p", { className: "empty" }, "No webhook is registered yet.")
      : h("div", { className: "table-wrap" }, h("table", {},
        h("caption", { className: "visually-hidden" }, "Webhooks"),
        h("thead", {}, h("tr", {}, ["Name", "Verifier", "URL", "Verified", "Completes tasks of", "Starts"].map((title) => h("th", { scope: "col" }, title)))),
        h("tbody", {}, webhooks.map((webhook) => h("tr", {},
          h("td", {}, h("a", { href: editPath(webhook.id) }, webhook.name)),
          h("td", {}, webhook.verifier),
          h("td", {}, h("code", {}, webhook.url)),
          h("td", {}, webhook.urlVerified ? "yes" : "not yet"),
          h("td", {}, workflowsText(webhook.receiverWorkflowNamesToVersions, "none")),
          h("td", {}, workflowsText(webhook.workflowsToStart, "none"))))))));
}

/**
 * Shows one webhook as editable JSON (its secrets as ***, which a save keeps), with the URL its events go to; or a
 * new one. Saving registers it or replaces it.
 * @type {import("../app.js").View}
 */
export async function renderWebhookEditor(container, _params, context, id) {
  /** @type {Webhook | undefined} */
  let existing;
  /** @type {boolean} */
  let canEdit;
  try {
    [existing, canEdit] = await Promise.all([
      id === undefined ? Promise.resolve(undefined) : /** @type {Promise<Webhook>} */ (api("GET", `/api/metadata/webhook/${encodeURIComponent(id)}`)),
      mayWriteWebhooks(),
    ]);
  } catch (error) {
    if (context.active()) replaceChildren(container, h("h1", {}, "Webhook"), refusal(error));
    return;
  }
  if (!context.active()) return;
  // What a read shows and a save ignores stays out of the editor.
  const editable = Object.fromEntries(Object.entries(existing ?? {}).filter(([key]) => !READ_ONLY.has(key)));
  const form = entityEditor({
    kind: "webhook",
    name: existing?.name,
    value: existing ? editable : TEMPLATE,
    editorId: "webhook-text",
    listHref: "#/webhooks",
    canEdit,
    missing: WEBHOOK_WRITE,
    save: async (webhook) => void (await api(existing ? "PUT" : "POST", existing ? `/api/metadata/webhook/${encodeURIComponent(existing.id)}` : "/api/metadata/webhook", webhook)),
    remove: async () => void (await api("DELETE", `/api/metadata/webhook/${encodeURIComponent(String(existing?.id))}`)),
    removalNote: "Events sent to its URL are refused from then on (404).",
    help: h("p", { className: "help" },
      "verifier: HEADER_BASED (headers), HMAC_BASED or SIGNATURE_BASED (headerKey, secretValue), SLACK_BASED, STRIPE or SENDGRID (secretValue). ",
      "receiverWorkflowNamesToVersions and workflowsToStart map workflow names to versions (0: any, or the latest). Secrets show as ***: leave them so to keep them."),
  }, context);
  replaceChildren(container, ...form);
  if (existing) {
    container.insertBefore(h("section", { className: "panel", "aria-labelledby": "webhook-url" },
      h("h2", { id: "webhook-url" }, "Where events are sent"),
      h("p", {}, h("code", {}, existing.url)),
      h("p", { className: "help" }, existing.urlVerified ? "An event has passed its verifier." : "No event has passed its verifier yet.")), form[1] ?? null);
    container.append(recentEvents(existing.webhookExecutionHistory ?? []));
  }
}

/** Longest payload a row of the recent events shows. */
const SHOWN_PAYLOAD = 200;

/**
 * The latest events the webhook received and verified: when, whether one matched (completed a waiting task or started
 * a workflow), the executions it reached (linked) and the start of its payload.
 * @param {WebhookEvent[]} events
 */
function recentEvents(events) {
  const body = events.length === 0
    ? h("p", { className: "empty" }, "No event has passed its verifier yet.")
    : h("div", { className: "table-wrap" }, h("table", { "aria-labelledby": "webhook-events" },
      h("thead", {}, h("tr", {}, ["When", "Matched", "Executions", "Payload"].map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, events.map((event) => h("tr", {},
        h("td", {}, formatTime(event.timeStamp)),
        h("td", {}, event.matched ? "yes" : "no"),
        h("td", {}, event.workflowIds.length === 0 ? "none" : event.workflowIds.flatMap((id, index) => [index > 0 ? ", " : "", h("a", { href: `#/executions/${encodeURIComponent(id)}` }, id)])),
        h("td", {}, h("code", {}, event.payload.length > SHOWN_PAYLOAD ? `${event.payload.slice(0, SHOWN_PAYLOAD)}…` : event.payload)))))));
  return h("section", { className: "panel", "aria-labelledby": "webhook-events" }, h("h2", { id: "webhook-events" }, "Recent events"), body);
}
