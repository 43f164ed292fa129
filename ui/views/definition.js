// @ts-check
import { ApiError, api, permissionsAnywhere, permissionsAt, errorMessage } from "../lib/api.js";
import { diagram, stepsOf } from "../lib/diagram.js";
import { openDialog } from "../lib/dialog.js";
import { readOnlyNote } from "../lib/entity-editor.js";
import { h, limitedInput, replaceChildren } from "../lib/dom.js";
import { jsonEditor, readObject } from "../lib/json-editor.js";
import { jsonBlock } from "../lib/json-view.js";

/** The longest correlation id the service accepts (CorrelationId in src/worker/schemas.ts). */
const MAX_CORRELATION_ID_LENGTH = 512;

/**
 * A starting point for a new definition, every required field present: an HTTP task, then a SWITCH on what it
 * answered, with one case and an empty default (the task types that need the most fields to get right).
 */
const TEMPLATE = {
  name: "my_workflow",
  description: "What this workflow does",
  version: 1,
  schemaVersion: 2,
  ownerEmail: "team@example.com",
  inputParameters: ["orderId"],
  tasks: [
    {
      name: "fetch_order",
      taskReferenceName: "fetch_order",
      type: "HTTP",
      inputParameters: { http_request: { uri: "https://example.com/orders/${workflow.input.orderId}", method: "GET" } },
    },
    {
      name: "route_by_status",
      taskReferenceName: "route_by_status",
      type: "SWITCH",
      evaluatorType: "value-param",
      expression: "status",
      inputParameters: { status: "${fetch_order.output.response.body.status}" },
      decisionCases: {
        cancelled: [
          {
            name: "notify_cancellation",
            taskReferenceName: "notify_cancellation",
            type: "HTTP",
            inputParameters: { http_request: { uri: "https://example.com/notifications", method: "POST", body: { orderId: "${workflow.input.orderId}", event: "cancelled" } } },
          },
        ],
      },
      defaultCase: [],
    },
  ],
  outputParameters: { order: "${fetch_order.output.response.body}" },
};

/**
 * Whether the caller may register or change a workflow definition, as the service decides (src/worker/auth/
 * metadata-access.ts): METADATA_ADMIN at `*` (the spec gives it only globally, so one granted at a narrower scope
 * writes nothing), or WORKFLOW_WRITE at the workflow's scope (for a new one, whose name is not typed yet, at some scope).
 * @param {Set<string>} atWorkflow what the caller holds at the workflow's scope (for a new one: at any scope)
 * @param {Set<string>} atAll what the caller holds at `*`
 */
export function mayWriteDefinition(atWorkflow, atAll) {
  return atAll.has("METADATA_ADMIN") || atWorkflow.has("WORKFLOW_WRITE");
}

/**
 * One definition version (the latest when none is named): its diagram and JSON, with Edit and Run for users allowed to.
 * @type {import("../app.js").View}
 */
export async function renderDefinition(container, _params, context, name = "", version = "") {
  const definition = /** @type {{name: string, version: number, description?: string, tasks: import("../lib/diagram.js").WorkflowTask[], inputParameters?: string[]}} */ (
    await api("GET", `/api/metadata/workflow/${encodeURIComponent(name)}${version === "" ? "" : `?version=${encodeURIComponent(version)}`}`));
  const [permissions, atAll] = await Promise.all([permissionsAt(`workflow:${definition.name}`), permissionsAt("*")]);
  if (!context.active()) return;
  const canEdit = mayWriteDefinition(permissions, atAll);
  const canRun = permissions.has("WORKFLOW_ADMIN");
  const path = `${encodeURIComponent(definition.name)}/${definition.version}`;
  replaceChildren(container,
    h("div", { className: "page-head" },
      h("h1", {}, definition.name, h("span", { className: "muted" }, ` v${definition.version}`)),
      h("div", { className: "actions" },
        canRun ? h("button", { type: "button", onclick: () => run(definition, context) }, "Run…") : null,
        canEdit ? h("a", { className: "button secondary", href: `#/definitions/${path}/edit` }, "Edit") : null,
        h("a", { className: "button secondary", href: `#/executions?workflowName=${encodeURIComponent(definition.name)}` }, "Executions"))),
    definition.description ? h("p", {}, definition.description) : null,
    h("div", { className: "split" },
      h("section", { className: "panel diagram-panel", "aria-labelledby": "definition-diagram" }, h("h2", { id: "definition-diagram" }, "Diagram"), diagram(stepsOf(definition.tasks))),
      h("section", { className: "panel", "aria-labelledby": "definition-json" }, h("h2", { id: "definition-json" }, "JSON"), jsonBlock(definition, "Definition JSON"))));
}

/**
 * Starts an execution of a definition with an input typed in a dialog, then shows it.
 * @param {{name: string, version: number, inputParameters?: string[]}} definition
 * @param {import("../app.js").ViewContext} context
 */
function run(definition, context) {
  const input = jsonEditor({ id: "run-input", label: "Input (JSON object)", value: Object.fromEntries((definition.inputParameters ?? []).map((key) => [key, ""])), rows: 8 });
  // The service refuses a longer correlation id (400); stopping the typing there says so before Start.
  const { input: correlation, hint: correlationHint } = limitedInput({
    id: "run-correlation", name: "correlationId", max: MAX_CORRELATION_ID_LENGTH, note: `At most ${MAX_CORRELATION_ID_LENGTH} characters.`,
  });
  /** @type {string | undefined} */
  let workflowId;
  void openDialog({
    title: `Run ${definition.name} v${definition.version}`,
    body: [input.element, h("label", { for: "run-correlation" }, "Correlation id (optional)"), correlation, correlationHint],
    confirmLabel: "Start",
    onConfirm: async () => {
      const value = readObject(input);
      /** @type {Record<string, unknown>} */
      const request = { name: definition.name, version: definition.version, input: value };
      if (correlation.value.trim()) request["correlationId"] = correlation.value.trim();
      try {
        workflowId = String(await api("POST", "/api/workflow", request)).trim();
      } catch (error) {
        if (error instanceof ApiError) input.showErrors(error.validationErrors.map((issue) => ({ ...issue, path: issue.path.replace(/^input\.?/, "") })));
        throw error;
      }
    },
  }).then((done) => {
    if (done && workflowId) context.go(`#/executions/${workflowId}`);
  });
}

/**
 * Registers a new definition or updates an existing version. Validation errors from the service are shown at
 * the offending field's line.
 * @type {import("../app.js").View}
 */
export async function renderDefinitionEditor(container, _params, context, name, version) {
  const [existing, permissions, atAll] = await Promise.all([
    name === undefined ? Promise.resolve(undefined) : /** @type {Promise<{ name: string, version: number }>} */ (api("GET", `/api/metadata/workflow/${encodeURIComponent(name)}?version=${encodeURIComponent(version ?? "")}`)),
    // A new definition's name is not known yet: the service decides by the name typed (WORKFLOW_WRITE at its scope), so
    // what counts here is holding the right at some scope.
    name === undefined ? permissionsAnywhere() : permissionsAt(`workflow:${name}`),
    permissionsAt("*"),
  ]);
  if (!context.active()) return;
  // The edit page is reached by its address too (a bookmark, a link shared): without the right it shows the text
  // read-only with no Save, as the definition's page offers no Edit, rather than a form whose save is refused.
  const canEdit = mayWriteDefinition(permissions, atAll);
  const editor = jsonEditor({ id: "definition-text", label: "Workflow definition (JSON)", value: existing ?? TEMPLATE, rows: 28, readOnly: !canEdit });
  const message = h("p", { className: "error", role: "alert" });
  const save = h("button", { type: "submit" }, existing ? "Save" : "Register");
  const form = h("form", {
    className: "definition-editor",
    onsubmit: async (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      if (!canEdit) return;
      message.textContent = "";
      /** @type {Record<string, unknown>} */
      let definition;
      try {
        definition = readObject(editor);
      } catch (error) {
        message.textContent = errorMessage(error);
        return;
      }
      save.disabled = true;
      const [savedName, savedVersion] = [definition["name"], definition["version"] ?? 1];
      try {
        // PUT registers or replaces whatever name and version the text holds (Conductor's update): only the version
        // opened is saved so. Under another name or version the text is a new definition, and POST refuses one taken
        // (409), which an edit of the name or version would otherwise replace without a word.
        if (existing && savedName === existing.name && savedVersion === existing.version) await api("PUT", "/api/metadata/workflow", [definition]);
        else await api("POST", "/api/metadata/workflow", definition);
        context.notify(`Saved ${String(savedName)} v${String(savedVersion)}`);
        context.go(`#/definitions/${encodeURIComponent(String(savedName))}/${String(savedVersion)}`);
      } catch (error) {
        message.textContent = error instanceof ApiError && error.status === 409
          ? `A workflow definition ${String(savedName)} v${String(savedVersion)} exists already: open it to change it, or choose another name or version.`
          : errorMessage(error);
        if (error instanceof ApiError && error.validationErrors.length > 0) {
          editor.showErrors(error.validationErrors.map((issue) => ({ ...issue, path: issue.path.replace(/^\[0\]\.?|^0\.?/, "") })));
        }
      } finally {
        save.disabled = false;
      }
    },
  },
    canEdit ? null : existing
      ? readOnlyNote("Saving this workflow definition", `METADATA_ADMIN on *, or WORKFLOW_WRITE on workflow:${String(name)}`)
      : readOnlyNote("Registering a new workflow definition", "METADATA_ADMIN on *, or WORKFLOW_WRITE on its workflow"),
    editor.element,
    message,
    h("div", { className: "actions" }, canEdit ? save : null, h("a", { className: "button secondary", href: existing ? `#/definitions/${encodeURIComponent(String(name))}/${String(version)}` : "#/definitions" }, canEdit ? "Cancel" : "Back")));
  replaceChildren(container, h("h1", {}, existing ? `${canEdit ? "Edit" : "View"} ${String(name)} v${String(version)}` : "New definition"), form);
}
