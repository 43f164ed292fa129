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
/** The intervals the page cleared. */
const cleared: number[] = [];
vi.stubGlobal("window", { setInterval: (run: () => void) => ((refresh = run), 1), clearInterval: (timer: number) => void cleared.push(timer) });

type View = (container: FakeElement, params: URLSearchParams, context: { notify: (message: string, kind?: string) => void; go: (hash: string) => void; active: () => boolean }, workflowId: string) => Promise<void>;
const load = async <T>(path: string): Promise<T> => (await import(/* @vite-ignore */ new URL(path, import.meta.url).href)) as T;
const { renderExecution } = await load<{ renderExecution: View }>("../../ui/views/execution.js");
const { forgetPermissions, HELD_PERMISSIONS_KEPT_MS } = await load<{ forgetPermissions(): void; HELD_PERMISSIONS_KEPT_MS: number }>("../../ui/lib/api.js");

const workflow = { workflowId: "wf-1", workflowName: "orders", workflowVersion: 1, status: "RUNNING", startTime: 1, tasks: [], input: {}, output: {}, variables: {}, workflowDefinition: { name: "orders", version: 1, tasks: [] } };
let held: string[] = [];
/** Every path the page asked, in order; and whether the permissions look-up fails (a 503) for now. */
const requested: string[] = [];
let permissionsFail = false;
vi.stubGlobal("fetch", async (path: string) => {
  requested.push(path);
  if (permissionsFail && path.startsWith("/api/security/permissions?")) {
    return new Response(JSON.stringify({ error: "UNAVAILABLE", message: "try later" }), { status: 503, headers: { "content-type": "application/json" } });
  }
  const body = path.startsWith("/api/security/permissions?scope=") ? { userId: "u", scope: "workflow:orders", permissions: held } : path.startsWith("/api/workflow/wf-1") ? workflow : undefined;
  if (body === undefined) return new Response(JSON.stringify({ error: "NOT_FOUND", message: path }), { status: 404, headers: { "content-type": "application/json" } });
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
});

afterEach(() => {
  permissionsFail = false;
  workflow.status = "RUNNING";
  vi.useRealTimers();
  forgetPermissions();
});

/** What a browser tab showing the page has: a clock (Date, faked to be moved on) and a visible document. */
function showPage(): void {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.stubGlobal("document", { ...(globalThis as unknown as { document: object }).document, visibilityState: "visible", querySelector: () => null, activeElement: null });
}

/** The texts of the buttons `container` shows. */
function buttonsOf(container: FakeElement): string[] {
  return container.descendants().filter((element) => element.tagName === "button").map((element) => element.textContent);
}

describe("the UI's execution page", () => {
  // A running execution's page refreshes anyway; a settled one's (FAILED) only asks its permissions again on its ticks.
  it.each([
    ["a running", "RUNNING", "Pause"],
    ["a settled", "FAILED", "Restart"],
  ])("offers the actions a grant made while the page of %s execution is open allows (%s: %s), once the permissions are asked again", async (_kind, status, action) => {
    showPage();
    workflow.status = status;
    const container = new FakeElement("main");
    held = ["WORKFLOW_READ"];
    await renderExecution(container, new URLSearchParams(), { notify: () => {}, go: () => {}, active: () => true }, "wf-1");
    expect(buttonsOf(container)).not.toContain(action);
    // An admin grants WORKFLOW_ADMIN; the page refreshes past the look-up's keep time, and again once it is answered.
    held = ["WORKFLOW_READ", "WORKFLOW_ADMIN"];
    vi.advanceTimersByTime(HELD_PERMISSIONS_KEPT_MS);
    refresh();
    await vi.waitFor(async () => {
      refresh();
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(buttonsOf(container)).toContain(action);
    });
  });

  /** Runs the page's refresh `ticks` times, 2 s apart as its interval would, letting each tick's answers arrive. */
  async function tick(ticks: number): Promise<void> {
    for (let done = 0; done < ticks; done++) {
      vi.advanceTimersByTime(2_000);
      refresh();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  it("asks nothing on the ticks of a settled execution's page while the permissions it was drawn with are kept", async () => {
    showPage();
    workflow.status = "COMPLETED";
    held = ["WORKFLOW_READ", "WORKFLOW_ADMIN"];
    await renderExecution(new FakeElement("main"), new URLSearchParams(), { notify: () => {}, go: () => {}, active: () => true }, "wf-1");
    requested.length = 0;
    await tick(20);
    expect(requested).toEqual([]);
  });

  it("keeps a settled execution's actions, and does not read it again, while the permissions look-up fails", async () => {
    showPage();
    workflow.status = "FAILED";
    const container = new FakeElement("main");
    const buttons = () => buttonsOf(container);
    held = ["WORKFLOW_READ", "WORKFLOW_ADMIN"];
    await renderExecution(container, new URLSearchParams(), { notify: () => {}, go: () => {}, active: () => true }, "wf-1");
    expect(buttons()).toContain("Restart");
    // The service fails every look-up from now on, past the answer's keep time and several failure retries.
    permissionsFail = true;
    requested.length = 0;
    vi.advanceTimersByTime(HELD_PERMISSIONS_KEPT_MS);
    for (let round = 0; round < 4; round++) {
      await tick(16);
      expect(buttons()).toContain("Restart");
    }
    // Asked again once per 30 s a failure is kept (128 s of ticks: at most 5 times), never read or drawn again.
    expect(requested.filter((path) => path.startsWith("/api/workflow/"))).toEqual([]);
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.length).toBeLessThanOrEqual(5);
  });

  it("draws a settled execution again only once a failed permissions look-up is answered", async () => {
    showPage();
    workflow.status = "FAILED";
    const container = new FakeElement("main");
    const buttons = () => buttonsOf(container);
    held = ["WORKFLOW_READ", "WORKFLOW_ADMIN"];
    permissionsFail = true;
    await renderExecution(container, new URLSearchParams(), { notify: () => {}, go: () => {}, active: () => true }, "wf-1");
    expect(buttons()).not.toContain("Restart");
    requested.length = 0;
    await tick(40);
    // Asked again after each 30 s a failure is kept, never read or drawn again while it fails.
    expect(requested.filter((path) => path.startsWith("/api/workflow/"))).toEqual([]);
    expect(requested.length).toBeLessThanOrEqual(3);
    permissionsFail = false;
    await tick(16);
    expect(buttons()).toContain("Restart");
  });

  it("stops a settled execution's ticks once the page is left, asking nothing more", async () => {
    showPage();
    workflow.status = "TERMINATED";
    let active = true;
    held = ["WORKFLOW_READ"];
    await renderExecution(new FakeElement("main"), new URLSearchParams(), { notify: () => {}, go: () => {}, active: () => active }, "wf-1");
    active = false;
    cleared.length = 0;
    requested.length = 0;
    held = ["WORKFLOW_READ", "WORKFLOW_ADMIN"];
    vi.advanceTimersByTime(HELD_PERMISSIONS_KEPT_MS);
    await tick(1);
    expect(cleared).toEqual([1]);
    expect(requested).toEqual([]);
  });
});
