// The web UI's execution page (ui/views/execution.js, run in Node on a stand-in document, sessionStorage and fetch):
// the workflow actions it offers follow the caller's permissions as the service says them, also when they change while
// the page is open (read once, at the first load, a grant showed only after the user left the page).
import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeElement, installFakeDocument } from "./ui-document";

installFakeDocument();
vi.stubGlobal("sessionStorage", { getItem: () => "a-token", setItem: () => {}, removeItem: () => {} });
/** The page's refresh: its interval's function, run by the test instead of a timer. */
let refresh: () => void = () => {};
vi.stubGlobal("HTMLElement", class {});
vi.stubGlobal("window", { setInterval: (run: () => void) => ((refresh = run), 1), clearInterval: () => {} });

type View = (container: FakeElement, params: URLSearchParams, context: { notify: (message: string, kind?: string) => void; go: (hash: string) => void; active: () => boolean }, workflowId: string) => Promise<void>;
const load = async <T>(path: string): Promise<T> => (await import(/* @vite-ignore */ new URL(path, import.meta.url).href)) as T;
const { renderExecution } = await load<{ renderExecution: View }>("../../ui/views/execution.js");
const { forgetPermissions, HELD_PERMISSIONS_KEPT_MS } = await load<{ forgetPermissions(): void; HELD_PERMISSIONS_KEPT_MS: number }>("../../ui/lib/api.js");

const workflow = { workflowId: "wf-1", workflowName: "orders", workflowVersion: 1, status: "RUNNING", startTime: 1, tasks: [], input: {}, output: {}, variables: {}, workflowDefinition: { name: "orders", version: 1, tasks: [] } };
let held: string[] = [];
vi.stubGlobal("fetch", async (path: string) => {
  const body = path.startsWith("/api/security/permissions?scope=") ? { userId: "u", scope: "workflow:orders", permissions: held } : path.startsWith("/api/workflow/wf-1") ? workflow : undefined;
  if (body === undefined) return new Response(JSON.stringify({ error: "NOT_FOUND", message: path }), { status: 404, headers: { "content-type": "application/json" } });
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
});

afterEach(() => {
  vi.useRealTimers();
  forgetPermissions();
});

describe("the UI's execution page", () => {
  it("offers the workflow actions a grant made while the page is open allows, once the permissions are asked again", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.stubGlobal("document", { ...(globalThis as unknown as { document: object }).document, visibilityState: "visible", querySelector: () => null, activeElement: null });
    const container = new FakeElement("main");
    const buttons = () => container.descendants().filter((element) => element.tagName === "button").map((element) => element.textContent);
    held = ["WORKFLOW_READ"];
    await renderExecution(container, new URLSearchParams(), { notify: () => {}, go: () => {}, active: () => true }, "wf-1");
    expect(buttons()).not.toContain("Pause");
    // An admin grants WORKFLOW_ADMIN; the page refreshes past the look-up's keep time, and again once it is answered.
    held = ["WORKFLOW_READ", "WORKFLOW_ADMIN"];
    vi.advanceTimersByTime(HELD_PERMISSIONS_KEPT_MS);
    refresh();
    await vi.waitFor(async () => {
      refresh();
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(buttons()).toContain("Pause");
    });
  });

  it("offers Restart to a grant made while the page of a settled execution is open, which is not read again otherwise", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.stubGlobal("document", { ...(globalThis as unknown as { document: object }).document, visibilityState: "visible", querySelector: () => null, activeElement: null });
    workflow.status = "FAILED";
    try {
      const container = new FakeElement("main");
      const buttons = () => container.descendants().filter((element) => element.tagName === "button").map((element) => element.textContent);
      held = ["WORKFLOW_READ"];
      await renderExecution(container, new URLSearchParams(), { notify: () => {}, go: () => {}, active: () => true }, "wf-1");
      expect(buttons()).not.toContain("Restart");
      held = ["WORKFLOW_READ", "WORKFLOW_ADMIN"];
      vi.advanceTimersByTime(HELD_PERMISSIONS_KEPT_MS);
      refresh();
      await vi.waitFor(async () => {
        refresh();
        await new Promise((resolve) => setTimeout(resolve, 10));
        expect(buttons()).toContain("Restart");
      });
    } finally {
      workflow.status = "RUNNING";
    }
  });
});
