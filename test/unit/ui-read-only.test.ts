// The web UI's editors for a user whose permissions do not let them write (plain ES modules of ui/, run in Node on a
// stand-in document, sessionStorage and fetch): the text is shown read-only, with no Register, Save or Delete and a note
// saying what they need, where the form used to open editable and only the save's 403 said no.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { FakeElement, installFakeDocument } from "./ui-document";

installFakeDocument();
vi.stubGlobal("sessionStorage", { getItem: () => "a-token", setItem: () => {}, removeItem: () => {} });

type Context = { notify: (message: string, kind?: string) => void; go: (hash: string) => void; active: () => boolean };
type Editor = (container: FakeElement, params: URLSearchParams, context: Context, name?: string, version?: string) => Promise<void>;
type View = (container: FakeElement, params: URLSearchParams, context: Context) => Promise<void>;

// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const load = async <T>(path: string): Promise<T> => (await import(/* @vite-ignore */ new URL(path, import.meta.url).href)) as T;
const { forgetPermissions } = await load<{ forgetPermissions(): void }>("../../ui/lib/api.js");
const { renderWebhookEditor, renderWebhooks } = await load<{ renderWebhookEditor: Editor; renderWebhooks: View }>("../../ui/views/webhooks.js");
const { renderEventHandlerEditor, renderEventHandlers } = await load<{ renderEventHandlerEditor: Editor; renderEventHandlers: View }>("../../ui/views/event-handlers.js");
const { renderTaskDefEditor, renderTaskDefs } = await load<{ renderTaskDefEditor: Editor; renderTaskDefs: View }>("../../ui/views/task-defs.js");
const { renderDefinitionEditor } = await load<{ renderDefinitionEditor: Editor }>("../../ui/views/definition.js");
const { renderDefinitions } = await load<{ renderDefinitions: View }>("../../ui/views/definitions.js");

const webhook = { id: "w-1", name: "github", verifier: "HEADER_BASED", url: "https://x/webhook/w-1", urlVerified: false, headers: { "X-Secret": "***" }, receiverWorkflowNamesToVersions: { orders: 1 } };
const handler = { name: "approve", event: "conductor:orders:done", active: true, actions: [{ action: "complete_task", complete_task: { workflowId: "x", taskRefName: "wait" } }] };

/**
 * The service's answers to the pages' reads; the caller holds `held` at every scope asked, or what `held` answers for
 * the scope asked (`anywhere`: at some scope).
 */
function serve(held: string[] | ((scope: string) => string[]), anywhere: Array<{ action: string; scope: string }> = typeof held === "function" ? [] : held.map((action) => ({ action, scope: "*" }))): void {
  const answers: Record<string, unknown> = {
    "/api/metadata/webhook": [webhook],
    "/api/metadata/webhook/w-1": webhook,
    "/api/event": [handler],
    "/api/event/handler/approve": handler,
    "/api/event/execution/approve": [],
    "/api/metadata/taskdefs/encode": { name: "encode", retryCount: 3 },
    "/api/tasks/queue/sizes?taskType=encode": { encode: 0 },
    "/api/metadata/taskdefs?metadata=true": [{ name: "encode", retryCount: 3, retryLogic: "FIXED", retryDelaySeconds: 60, timeoutSeconds: 0 }],
    "/api/metadata/workflow/orders?version=1": { name: "orders", version: 1, tasks: [] },
    "/api/metadata/workflow?short=true&metadata=true": [{ name: "orders", version: 1, tasks: [] }],
    "/api/token/userInfo": { id: "u", permissions: anywhere },
  };
  vi.stubGlobal("fetch", async (path: string) => {
    const scope = decodeURIComponent(path.slice(path.indexOf("=") + 1));
    const body = path.startsWith("/api/security/permissions?scope=")
      ? { userId: "u", scope, permissions: typeof held === "function" ? held(scope) : held }
      : answers[path];
    if (body === undefined) return new Response(JSON.stringify({ error: "NOT_FOUND", message: path }), { status: 404, headers: { "content-type": "application/json" } });
    return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
  });
}

const context: Context = { notify: () => {}, go: () => {}, active: () => true };

/** What an editor page offers: its buttons and links by text, whether its text can be typed into, and its note. */
async function editorPage(render: (container: FakeElement) => Promise<void>) {
  const container = new FakeElement("main");
  await render(container);
  const elements = container.descendants();
  const textarea = elements.find((element) => element.tagName === "textarea");
  return {
    controls: elements.filter((element) => element.tagName === "button" || element.tagName === "a").map((element) => element.textContent),
    readOnly: textarea?.getAttribute("readonly") !== null,
    note: elements.find((element) => element.hasClass("read-only-note"))?.textContent,
  };
}

describe("the UI's editors for a user who may not write", () => {
  beforeEach(() => forgetPermissions());

  it("show a webhook read-only to a reader of every workflow, with no New, Save or Delete, saying what writing needs", async () => {
    serve(["WORKFLOW_READ"]);
    const page = await editorPage((container) => renderWebhookEditor(container, new URLSearchParams(), context, "w-1"));
    expect(page.readOnly).toBe(true);
    expect(page.controls).not.toContain("Save");
    expect(page.controls).not.toContain("Delete…");
    expect(page.note).toBe("Read only: Saving or deleting this webhook needs METADATA_ADMIN or WORKFLOW_WRITE on every workflow.");
    const list = await editorPage((container) => renderWebhooks(container, new URLSearchParams(), context));
    expect(list.controls).toContain("github");
    expect(list.controls).not.toContain("New webhook");
    const fresh = await editorPage((container) => renderWebhookEditor(container, new URLSearchParams(), context));
    expect(fresh.controls).not.toContain("Register");
    expect(fresh.note).toBe("Read only: Registering a new webhook needs METADATA_ADMIN or WORKFLOW_WRITE on every workflow.");
  });

  it("keep the webhook editor for a holder of METADATA_ADMIN", async () => {
    serve(["METADATA_ADMIN"]);
    const page = await editorPage((container) => renderWebhookEditor(container, new URLSearchParams(), context, "w-1"));
    expect(page.readOnly).toBe(false);
    expect(page.controls).toEqual(expect.arrayContaining(["Save", "Delete…"]));
    expect(page.note).toBeUndefined();
    expect((await editorPage((container) => renderWebhooks(container, new URLSearchParams(), context))).controls).toContain("New webhook");
  });

  it("show an event handler read-only to a caller an added access rule lets read them without SYSTEM_ADMIN", async () => {
    serve(["WORKFLOW_READ"]);
    const page = await editorPage((container) => renderEventHandlerEditor(container, new URLSearchParams(), context, "approve"));
    expect(page.readOnly).toBe(true);
    expect(page.controls).not.toContain("Save");
    expect(page.controls).not.toContain("Delete…");
    expect(page.note).toBe("Read only: Saving or deleting this event handler needs SYSTEM_ADMIN.");
    expect((await editorPage((container) => renderEventHandlers(container, new URLSearchParams(), context))).controls).not.toContain("New event handler");
    serve(["SYSTEM_ADMIN"]);
    forgetPermissions();
    const admin = await editorPage((container) => renderEventHandlerEditor(container, new URLSearchParams(), context, "approve"));
    expect(admin.readOnly).toBe(false);
    expect(admin.controls).toEqual(expect.arrayContaining(["Save", "Delete…"]));
  });

  it("make a task definition's text read-only, not only its buttons, for a reader", async () => {
    serve(["TASK_READ"]);
    const page = await editorPage((container) => renderTaskDefEditor(container, new URLSearchParams(), context, "encode"));
    expect(page.readOnly).toBe(true);
    expect(page.controls).not.toContain("Save");
    expect(page.note).toBe("Read only: Saving or deleting this task definition needs METADATA_ADMIN or WORKFLOW_WRITE on *, or TASK_WRITE on task:encode.");
  });

  it("offer New task definition, and an editable new one, to a holder of TASK_WRITE on a prefix, not to a reader", async () => {
    serve(["TASK_READ"]);
    const list = await editorPage((container) => renderTaskDefs(container, new URLSearchParams(), context));
    expect(list.controls).toContain("encode");
    expect(list.controls).not.toContain("New task definition");
    const fresh = await editorPage((container) => renderTaskDefEditor(container, new URLSearchParams(), context));
    expect(fresh.readOnly).toBe(true);
    expect(fresh.controls).not.toContain("Register");
    expect(fresh.note).toBe("Read only: Registering a new task definition needs METADATA_ADMIN or WORKFLOW_WRITE on *, or TASK_WRITE on its name.");
    // TASK_WRITE on task:orders_* registers orders_x (docs/api.md, Task definitions): the name typed decides, not `*`.
    serve([], [{ action: "TASK_WRITE", scope: "task:orders_*" }]);
    forgetPermissions();
    expect((await editorPage((container) => renderTaskDefs(container, new URLSearchParams(), context))).controls).toContain("New task definition");
    const writer = await editorPage((container) => renderTaskDefEditor(container, new URLSearchParams(), context));
    expect(writer.readOnly).toBe(false);
    expect(writer.controls).toContain("Register");
  });

  it("show a workflow definition's edit page, reached by its address, read-only without WORKFLOW_WRITE or METADATA_ADMIN", async () => {
    serve(["WORKFLOW_READ", "WORKFLOW_ADMIN"]);
    const page = await editorPage((container) => renderDefinitionEditor(container, new URLSearchParams(), context, "orders", "1"));
    expect(page.readOnly).toBe(true);
    expect(page.controls).not.toContain("Save");
    expect(page.controls).toContain("Back");
    expect(page.note).toBe("Read only: Saving this workflow definition needs METADATA_ADMIN on *, or WORKFLOW_WRITE on workflow:orders.");
    serve(["WORKFLOW_WRITE"]);
    forgetPermissions();
    const writer = await editorPage((container) => renderDefinitionEditor(container, new URLSearchParams(), context, "orders", "1"));
    expect(writer.readOnly).toBe(false);
    expect(writer.controls).toContain("Save");
  });

  it("offer New definition, and an editable new one, only to a holder of METADATA_ADMIN or of WORKFLOW_WRITE at some scope", async () => {
    serve(["WORKFLOW_READ", "WORKFLOW_ADMIN"]);
    const list = await editorPage((container) => renderDefinitions(container, new URLSearchParams(), context));
    expect(list.controls).toContain("orders");
    expect(list.controls).not.toContain("New definition");
    const fresh = await editorPage((container) => renderDefinitionEditor(container, new URLSearchParams(), context));
    expect(fresh.readOnly).toBe(true);
    expect(fresh.controls).not.toContain("Register");
    expect(fresh.note).toBe("Read only: Registering a new workflow definition needs METADATA_ADMIN on *, or WORKFLOW_WRITE on its workflow.");
    // WORKFLOW_WRITE on a prefix lets its holder register a definition named with it: the service decides by the name.
    serve([], [{ action: "WORKFLOW_WRITE", scope: "workflow:orders_*" }]);
    forgetPermissions();
    expect((await editorPage((container) => renderDefinitions(container, new URLSearchParams(), context))).controls).toContain("New definition");
    const writer = await editorPage((container) => renderDefinitionEditor(container, new URLSearchParams(), context));
    expect(writer.readOnly).toBe(false);
    expect(writer.controls).toContain("Register");
  });

  it("offer no New, Edit or Save to a holder of METADATA_ADMIN (or WORKFLOW_WRITE, for task definitions) below `*`, which the service takes only at `*`", async () => {
    // Granted at workflow:orders and task:encode: /api/security/permissions lists it at those scopes, not at `*`; the
    // service's rules (and the spec's 5.2: METADATA_ADMIN is global) take it at `*` only, and WORKFLOW_WRITE at `*` only
    // for task definitions (at task:encode it is listed there, but it writes no task definition).
    const narrow = [{ action: "METADATA_ADMIN", scope: "workflow:orders" }, { action: "METADATA_ADMIN", scope: "task:encode" }];
    serve((scope) => (scope === "workflow:orders" ? ["METADATA_ADMIN"] : scope === "task:encode" ? ["METADATA_ADMIN", "WORKFLOW_WRITE"] : []), narrow);
    expect((await editorPage((container) => renderDefinitions(container, new URLSearchParams(), context))).controls).not.toContain("New definition");
    const fresh = await editorPage((container) => renderDefinitionEditor(container, new URLSearchParams(), context));
    expect(fresh.readOnly).toBe(true);
    expect(fresh.controls).not.toContain("Register");
    const existing = await editorPage((container) => renderDefinitionEditor(container, new URLSearchParams(), context, "orders", "1"));
    expect(existing.readOnly).toBe(true);
    expect(existing.controls).not.toContain("Save");
    // The note names the scope the service asks, not the permission its holder holds elsewhere.
    expect(existing.note).toBe("Read only: Saving this workflow definition needs METADATA_ADMIN on *, or WORKFLOW_WRITE on workflow:orders.");
    expect((await editorPage((container) => renderTaskDefs(container, new URLSearchParams(), context))).controls).not.toContain("New task definition");
    expect((await editorPage((container) => renderTaskDefEditor(container, new URLSearchParams(), context))).controls).not.toContain("Register");
    const taskDef = await editorPage((container) => renderTaskDefEditor(container, new URLSearchParams(), context, "encode"));
    expect(taskDef.readOnly).toBe(true);
    expect(taskDef.controls).not.toContain("Save");
    expect(taskDef.note).toBe("Read only: Saving or deleting this task definition needs METADATA_ADMIN or WORKFLOW_WRITE on *, or TASK_WRITE on task:encode.");
    // At `*` it writes both.
    serve((scope) => (scope === "*" ? ["METADATA_ADMIN"] : []), [{ action: "METADATA_ADMIN", scope: "*" }]);
    forgetPermissions();
    expect((await editorPage((container) => renderDefinitions(container, new URLSearchParams(), context))).controls).toContain("New definition");
    expect((await editorPage((container) => renderDefinitionEditor(container, new URLSearchParams(), context, "orders", "1"))).controls).toContain("Save");
    expect((await editorPage((container) => renderTaskDefs(container, new URLSearchParams(), context))).controls).toContain("New task definition");
    expect((await editorPage((container) => renderTaskDefEditor(container, new URLSearchParams(), context, "encode"))).controls).toContain("Save");
  });

  // Access rules added through the API decide before the defaults, and no endpoint tells a caller what they allow it
  // (the rules and checkPermissions are for USER_ADMIN, and read grants only): the editors follow the caller's
  // permissions, so a stored rule that asks more makes a save the UI offered a 403, which the editor must show.
  it("show a save an added access rule refuses as the service's 403, in the editor, the text kept for another try", async () => {
    serve(["WORKFLOW_WRITE", "TASK_WRITE"]);
    const refusal = "Permission denied: PUT /api/metadata/workflow needs SYSTEM_ADMIN at *";
    const answer = globalThis.fetch;
    vi.stubGlobal("fetch", async (path: string, init?: RequestInit) =>
      init?.method === "PUT" ? new Response(JSON.stringify({ error: "PERMISSION_DENIED", message: refusal }), { status: 403, headers: { "content-type": "application/json" } }) : answer(path, init));
    for (const render of [
      (container: FakeElement) => renderDefinitionEditor(container, new URLSearchParams(), context, "orders", "1"),
      (container: FakeElement) => renderTaskDefEditor(container, new URLSearchParams(), context, "encode"),
    ]) {
      const container = new FakeElement("main");
      await render(container);
      const form = container.descendants().find((element) => element.tagName === "form");
      const save = container.descendants().find((element) => element.tagName === "button" && element.textContent === "Save");
      expect(save).toBeDefined();
      await form?.submit();
      expect(container.descendants().find((element) => element.getAttribute("role") === "alert")?.textContent).toBe(refusal);
      expect(container.descendants().find((element) => element.tagName === "textarea")?.getAttribute("readonly")).toBeNull();
      expect(save?.getAttribute("disabled") ?? (save as unknown as { disabled?: boolean }).disabled).toBeFalsy();
    }
  });
});
