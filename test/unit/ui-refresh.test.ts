// The web UI's pages with a Refresh button of their own (Worker queues, Metrics, a task definition's Workers): a read
// that fails, first or on a Refresh, says so in the page. Views run in Node on a stand-in document, sessionStorage and fetch.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { FakeElement, installFakeDocument } from "./ui-document";

installFakeDocument();
vi.stubGlobal("sessionStorage", { getItem: () => "a-token", setItem: () => {}, removeItem: () => {} });

type View = (container: FakeElement, params: URLSearchParams, context: { notify: (message: string, kind?: string) => void; go: (hash: string) => void; active: () => boolean }) => Promise<void>;
// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const { renderQueues } = (await import(/* @vite-ignore */ new URL("../../ui/views/queues.js", import.meta.url).href)) as { renderQueues: View };
const { renderMetrics } = (await import(/* @vite-ignore */ new URL("../../ui/views/metrics.js", import.meta.url).href)) as { renderMetrics: View };
const { renderTaskDefEditor } = (await import(/* @vite-ignore */ new URL("../../ui/views/task-defs.js", import.meta.url).href)) as {
  renderTaskDefEditor: (...args: [...Parameters<View>, string]) => Promise<void>;
};

/** What the fake server answers, by path; `failing` makes every answer a 503 from then on. */
let failing = false;
const answers: Record<string, Response | (() => Response)> = {};
const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
beforeEach(() => {
  failing = false;
  vi.stubGlobal("fetch", async (path: string) => {
    if (failing) return new Response(JSON.stringify({ error: "UNAVAILABLE", message: "The service is busy: try again" }), { status: 503, headers: { "content-type": "application/json" } });
    const answer = answers[path.split("?")[0]!];
    if (answer === undefined) return new Response(JSON.stringify({ error: "NOT_FOUND", message: `No route ${path}` }), { status: 404, headers: { "content-type": "application/json" } });
    return typeof answer === "function" ? answer() : answer.clone();
  });
});

/** Shows `view`, then fails the service and clicks its Refresh; answers the page's alerts saying something, before and after. */
async function refreshFailing(view: View): Promise<{ before: string[]; alerts: string[] }> {
  const container = new FakeElement("main");
  await view(container, new URLSearchParams(), { notify: () => {}, go: () => {}, active: () => true });
  const alertsOf = () => container.descendants().filter((element) => element.getAttribute("role") === "alert").map((element) => element.textContent).filter((text) => text !== "");
  const before = alertsOf();
  failing = true;
  const refresh = container.descendants().find((element) => element.tagName === "button" && element.textContent === "Refresh");
  refresh!.click();
  await vi.waitFor(() => expect(alertsOf().length).toBeGreaterThan(0));
  return { before, alerts: alertsOf() };
}

describe("the UI's pages with a Refresh button", () => {
  it("Worker queues: a Refresh the service refuses shows its message in the page", async () => {
    answers["/api/tasks/queue/all"] = () => json({ encode: 2 });
    answers["/api/tasks/queue/polldata/all"] = () => json([]);
    answers["/api/metadata/taskdefs"] = () => json([]);
    const { before, alerts } = await refreshFailing(renderQueues);
    expect(before).toEqual([]);
    expect(alerts).toEqual(["The service is busy: try again"]);
  });

  it("Metrics: a Refresh the service refuses shows its message in the page", async () => {
    answers["/api/metrics"] = () => new Response("# TYPE workflow_start_request counter\n", { status: 200, headers: { "content-type": "text/plain; version=0.0.4" } });
    const { before, alerts } = await refreshFailing(renderMetrics);
    expect(before).toEqual([]);
    expect(alerts).toEqual(["The service is busy: try again"]);
  });

  it("a task definition's Workers panel: a Refresh the service refuses shows its message in the panel", async () => {
    answers["/api/metadata/taskdefs/encode"] = () => json({ name: "encode", retryCount: 3 });
    answers["/api/security/permissions"] = () => json({ userId: "ops", scope: "task:encode", permissions: ["TASK_READ"] });
    answers["/api/tasks/queue/sizes"] = () => json({ encode: 1 });
    answers["/api/tasks/queue/polldata"] = () => json([{ queueName: "encode", workerId: "w1", lastPollTime: 1 }]);
    const { before, alerts } = await refreshFailing((container, params, context) => renderTaskDefEditor(container, params, context, "encode"));
    expect(before).toEqual([]);
    expect(alerts).toEqual(["The service is busy: try again"]);
  });
});
