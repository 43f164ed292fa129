import { describe, expect, it } from "vitest";
import { durationHistogram, renderExposition } from "../../src/worker/metrics/exposition";
import { DURATION_BUCKETS_SECONDS, durationBucket } from "../../src/worker/metrics/histogram";

describe("the Prometheus text format", () => {
  it("writes HELP and TYPE for every family and escapes label values, whatever a name holds", () => {
    const text = renderExposition([
      { name: "workflow_started_total", help: "Started.\nAll of them.", type: "counter", samples: [{ labels: { workflowName: 'a"b\\c\nd' }, value: 3 }] },
      { name: "workflow_running", help: "Running.", type: "gauge", samples: [] },
    ]);
    expect(text).toBe(
      [
        "# HELP workflow_started_total Started.\\nAll of them.",
        "# TYPE workflow_started_total counter",
        'workflow_started_total{workflowName="a\\"b\\\\c\\nd"} 3',
        "# HELP workflow_running Running.",
        "# TYPE workflow_running gauge",
        "",
      ].join("\n"),
    );
  });

  it("sums bucket counts into cumulative le buckets ending at +Inf, with the sum in seconds", () => {
    const samples = durationHistogram({ status: "COMPLETED" }, new Map([[0, 2], [3, 1], [DURATION_BUCKETS_SECONDS.length, 4]]), 1500);
    const bucket = (le: string) => samples.find((sample) => sample.suffix === "_bucket" && sample.labels["le"] === le)?.value;
    expect(bucket(String(DURATION_BUCKETS_SECONDS[0]))).toBe(2);
    expect(bucket(String(DURATION_BUCKETS_SECONDS[2]))).toBe(2);
    expect(bucket(String(DURATION_BUCKETS_SECONDS[3]))).toBe(3);
    expect(bucket(String(DURATION_BUCKETS_SECONDS.at(-1)))).toBe(3);
    expect(bucket("+Inf")).toBe(7);
    expect(samples.find((sample) => sample.suffix === "_count")).toEqual({ suffix: "_count", labels: { status: "COMPLETED" }, value: 7 });
    expect(samples.find((sample) => sample.suffix === "_sum")).toEqual({ suffix: "_sum", labels: { status: "COMPLETED" }, value: 1.5 });
  });

  it("puts a duration in the first bucket it fits, bounds included, in whole milliseconds", () => {
    expect([0, 10, 11, 50, 51, 250, 86_400_000].map(durationBucket)).toEqual([0, 0, 1, 1, 2, 3, DURATION_BUCKETS_SECONDS.length - 1]);
    expect(durationBucket(86_400_001)).toBe(DURATION_BUCKETS_SECONDS.length);
  });
});
