// The web UI's Worker queues page: how it puts queue sizes and workers' polls together, and what it says of the queues
// the listings left out (plain ES modules of ui/, run in Node on a stand-in document, sessionStorage and fetch).
import { describe, expect, it, vi } from "vitest";
import { FakeElement, installFakeDocument } from "./ui-document";

installFakeDocument();
vi.stubGlobal("sessionStorage", { getItem: () => "a-token", setItem: () => {}, removeItem: () => {} });

interface PollData {
  queueName: string;
  domain?: string;
  workerId: string;
  lastPollTime: number;
}
interface QueuesModule {
  ACTIVE_WORKER_MS: number;
  polledQueueName(poll: PollData): string;
  queueRows(sizes: Record<string, number>, polls: PollData[], now: number): Array<{ queueName: string; taskName: string; domain: string | null; waiting: number; activeWorkers: number; lastPollTime?: number }>;
}

type View = (container: FakeElement, params: URLSearchParams, context: { notify: (message: string, kind?: string) => void; go: (hash: string) => void; active: () => boolean }) => Promise<void>;

// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const { ACTIVE_WORKER_MS, polledQueueName, queueRows, renderQueues } = (await import(/* @vite-ignore */ new URL("../../ui/views/queues.js", import.meta.url).href)) as QueuesModule & { renderQueues: View };

/** The Worker queues page's text of its notices (role status), the service answering the listings with `leftOut` headers. */
async function noticesWith(leftOut: { sizes?: string; polls?: string }): Promise<string[]> {
  const json = (body: unknown, count?: string) => new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json", ...(count === undefined ? {} : { "X-Queues-Left-Out": count }) } });
  const answers: Record<string, () => Response> = {
    "/api/tasks/queue/all": () => json({ encode: 2 }, leftOut.sizes),
    "/api/tasks/queue/polldata/all": () => json([{ queueName: "encode", workerId: "w1", lastPollTime: 1 }], leftOut.polls),
    "/api/metadata/taskdefs?short=true": () => json([]),
  };
  vi.stubGlobal("fetch", async (path: string) => answers[path]!());
  const container = new FakeElement("main");
  await renderQueues(container, new URLSearchParams(), { notify: () => {}, go: () => {}, active: () => true });
  // The page read what it was given: its queue is listed.
  expect(container.textContent).toContain("encode");
  return container.descendants().filter((element) => element.getAttribute("role") === "status").map((element) => element.textContent);
}

describe("the UI's Worker queues page", () => {
  const now = Date.UTC(2027, 0, 1);

  it("gives each queue its waiting tasks, its workers active within 10 s and its latest poll, by task name then domain", () => {
    const rows = queueRows(
      { encode: 3, "gpu:encode": 1, resize: 0 },
      [
        { queueName: "encode", workerId: "w1", lastPollTime: now - 2_000 },
        { queueName: "encode", workerId: "w2", lastPollTime: now - ACTIVE_WORKER_MS - 1 },
        // A poll's queueName is its task name in every domain, as Conductor's PollData names it.
        { queueName: "encode", domain: "gpu", workerId: "g1", lastPollTime: now - ACTIVE_WORKER_MS },
      ],
      now,
    );
    expect(rows).toEqual([
      { queueName: "encode", taskName: "encode", domain: null, waiting: 3, activeWorkers: 1, lastPollTime: now - 2_000 },
      { queueName: "gpu:encode", taskName: "encode", domain: "gpu", waiting: 1, activeWorkers: 1, lastPollTime: now - ACTIVE_WORKER_MS },
      { queueName: "resize", taskName: "resize", domain: null, waiting: 0, activeWorkers: 0, lastPollTime: undefined },
    ]);
  });

  it("keeps a queue known only from a poll, and reads a task name holding a colon by the poll's domain", () => {
    const rows = queueRows({}, [{ queueName: "ns:task", domain: "eu", workerId: "w", lastPollTime: now - 60_000 }], now);
    expect(rows).toEqual([{ queueName: "eu:ns:task", taskName: "ns:task", domain: "eu", waiting: 0, activeWorkers: 0, lastPollTime: now - 60_000 }]);
    expect(queueRows({}, [], now)).toEqual([]);
  });

  it("shows a worker's queue by Conductor's queue name, the domain before its task name", () => {
    expect(polledQueueName({ queueName: "encode", domain: "gpu", workerId: "g1", lastPollTime: now })).toBe("gpu:encode");
    expect(polledQueueName({ queueName: "encode", workerId: "w1", lastPollTime: now })).toBe("encode");
  });

  it("says how many queues the listings left out (their X-Queues-Left-Out header), where a partial list would pass for every queue", async () => {
    expect(await noticesWith({ sizes: "3" })).toEqual([
      "3 queues not shown: the service reads a limited number of queues a request. A task definition's page shows its queue and workers.",
    ]);
    expect(await noticesWith({ sizes: "1", polls: "2" })).toEqual([
      "1 queue not shown: the service reads a limited number of queues a request. A task definition's page shows its queue and workers.",
      "2 task names' workers not shown: the service reads a limited number of queues a request. A task definition's page shows its queue and workers.",
    ]);
    expect(await noticesWith({})).toEqual([]);
  });
});
