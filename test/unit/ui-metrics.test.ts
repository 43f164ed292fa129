// The web UI's Metrics page: how it reads the service's Prometheus text into its tables (plain ES modules of ui/, run
// in Node: only pure helpers), against the text the service itself writes.
import { describe, expect, it } from "vitest";
import { durationHistogram, renderExposition, type MetricFamily } from "../../src/worker/metrics/exposition";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface MetricsModule {
  parseExposition(text: string): Sample[];
  histogramQuantile(q: number, buckets: Array<[number, number]>): number | undefined;
  metricsTables(samples: Sample[]): { workflows: Array<Record<string, unknown>>; tasks: Array<Record<string, unknown>>; leftOut: { workflows: number; tasks: number } };
  durationText(seconds: number | undefined): string;
}

// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const { parseExposition, histogramQuantile, metricsTables, durationText } = (await import(/* @vite-ignore */ new URL("../../ui/views/metrics.js", import.meta.url).href)) as MetricsModule;

describe("the UI's Metrics page", () => {
  it("reads back what the service writes, escaped label values included", () => {
    const text = renderExposition([{ name: "workflow_started_total", help: "Started.", type: "counter", samples: [{ labels: { workflowName: 'odd "name" \\ here' }, value: 4 }] }]);
    expect(parseExposition(text)).toEqual([{ name: "workflow_started_total", labels: { workflowName: 'odd "name" \\ here' }, value: 4 }]);
  });

  it("estimates a quantile within the bucket its rank falls in, as Prometheus does", () => {
    // 10 observations: 4 up to 0.1 s, 6 more up to 0.5 s.
    const buckets: Array<[number, number]> = [[0.1, 4], [0.5, 10], [Infinity, 10]];
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(0.1 + 0.4 * (1 / 6));
    expect(histogramQuantile(0.2, buckets)).toBeCloseTo(0.05);
    // Past the last finite bound: that bound.
    expect(histogramQuantile(0.95, [[1, 1], [Infinity, 10]])).toBe(1);
    expect(histogramQuantile(0.5, [[1, 0], [Infinity, 0]])).toBeUndefined();
  });

  it("puts a scrape into one row per workflow and per task type", () => {
    const families: MetricFamily[] = [
      { name: "workflow_started_total", help: "", type: "counter", samples: [{ labels: { workflowName: "orders" }, value: 7 }] },
      { name: "workflow_running", help: "", type: "gauge", samples: [{ labels: { workflowName: "orders", version: "1" }, value: 1 }, { labels: { workflowName: "orders", version: "2" }, value: 2 }] },
      {
        name: "workflow_completed_seconds",
        help: "",
        type: "histogram",
        samples: [
          // Three completed in the 0.25–0.5 s bucket (index 4), one failed.
          ...durationHistogram({ workflowName: "orders", status: "COMPLETED" }, new Map([[4, 3]]), 1200),
          ...durationHistogram({ workflowName: "orders", status: "FAILED" }, new Map([[0, 1]]), 5),
        ],
      },
      {
        name: "task_completed_seconds",
        help: "",
        type: "histogram",
        samples: [
          ...durationHistogram({ taskType: "charge", status: "COMPLETED" }, new Map([[1, 2]]), 60),
          ...durationHistogram({ taskType: "charge", status: "FAILED_WITH_TERMINAL_ERROR" }, new Map([[1, 1]]), 30),
          ...durationHistogram({ taskType: "charge", status: "CANCELED" }, new Map([[0, 1]]), 0),
        ],
      },
      { name: "task_queue_depth", help: "", type: "gauge", samples: [{ labels: { taskType: "charge" }, value: 3 }] },
      { name: "task_queue_wait_seconds", help: "", type: "histogram", samples: durationHistogram({ taskType: "charge" }, new Map([[1, 4]]), 4) },
    ];
    const { workflows, tasks } = metricsTables(parseExposition(renderExposition(families)));
    expect(workflows).toEqual([{ workflowName: "orders", started: 7, running: 3, paused: 0, completed: 3, unsuccessful: 1, p50: expect.closeTo(0.375), p95: expect.closeTo(0.4875) }]);
    expect(tasks).toEqual([{ taskType: "charge", ended: 4, failed: 1, p50: expect.closeTo(0.03), p95: expect.closeTo(0.048), waitP50: expect.any(Number), waiting: 3 }]);
  });

  it("leaves a task type's waiting count unknown when the scrape has no queue depth for it, not 0", () => {
    // task_queue_depth has a series only for the default domain's queue of a registered task definition: a task type
    // without a definition (or whose tasks wait in a domain's queue) may have tasks waiting that the page cannot count.
    const families: MetricFamily[] = [
      { name: "task_completed_seconds", help: "", type: "histogram", samples: [...durationHistogram({ taskType: "adhoc", status: "COMPLETED" }, new Map([[1, 1]]), 30), ...durationHistogram({ taskType: "idle", status: "COMPLETED" }, new Map([[1, 1]]), 30)] },
      { name: "task_queue_depth", help: "", type: "gauge", samples: [{ labels: { taskType: "idle" }, value: 0 }] },
    ];
    const { tasks } = metricsTables(parseExposition(renderExposition(families)));
    expect(tasks.map((row) => [row["taskType"], row["waiting"]])).toEqual([["adhoc", undefined], ["idle", 0]]);
  });

  it("tells how many workflow names and task types the scrape left out, and makes no row of that count", () => {
    const families: MetricFamily[] = [
      { name: "workflow_started_total", help: "", type: "counter", samples: [{ labels: { workflowName: "orders" }, value: 7 }] },
      { name: "metrics_names_left_out", help: "", type: "gauge", samples: [{ labels: { label: "workflowName" }, value: 12 }, { labels: { label: "taskType" }, value: 0 }] },
    ];
    const { workflows, tasks, leftOut } = metricsTables(parseExposition(renderExposition(families)));
    expect(leftOut).toEqual({ workflows: 12, tasks: 0 });
    expect(workflows.map((row) => row["workflowName"])).toEqual(["orders"]);
    expect(tasks).toEqual([]);
  });

  it("says a duration in the unit that reads best", () => {
    expect([durationText(undefined), durationText(0.0123), durationText(4.26), durationText(600), durationText(36_000)]).toEqual(["—", "12 ms", "4.3 s", "10 min", "10 h"]);
  });
});
