// The web UI's Worker queues page: how it puts queue sizes and workers' polls together (plain ES modules of ui/, run
// in Node: only pure helpers).
import { describe, expect, it } from "vitest";

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

// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const { ACTIVE_WORKER_MS, polledQueueName, queueRows } = (await import(/* @vite-ignore */ new URL("../../ui/views/queues.js", import.meta.url).href)) as QueuesModule;

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
});
