import { describe, expect, it } from "vitest";
import { durationHistogram, renderExposition } from "../../src/worker/metrics/exposition";
import { DURATION_BUCKETS_SECONDS, durationBucket } from "../../src/worker/metrics/histogram";
import { parsePrometheusText } from "../prometheus-text";

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

  it("reads back, with a strict parser, the label values it was given, whatever a user put in a name", () => {
    const names = ['a"b', "back\\slash\\n", "line\nbreak", "cr\rtab\t", "{x=\"1\"} 2", "☃ \u{1F600}", " ", "#"];
    const samples = names.flatMap((name, index) => durationHistogram({ workflowName: name, status: "COMPLETED" }, new Map([[index, index + 1]]), 10 * index));
    const text = renderExposition([
      { name: "workflow_started_total", help: "Started \\ with\na break.", type: "counter", samples: names.map((name) => ({ labels: { workflowName: name }, value: 1 })) },
      { name: "workflow_completed_seconds", help: "Ended.", type: "histogram", samples },
    ]);
    const [started, completed] = parsePrometheusText(text);
    expect(started).toMatchObject({ name: "workflow_started_total", type: "counter", help: "Started \\ with\na break." });
    expect(started!.samples.map((sample) => sample.labels["workflowName"])).toEqual(names);
    expect(completed!.type).toBe("histogram");
    expect(completed!.samples.filter((sample) => sample.name === "workflow_completed_seconds_count").map((sample) => [sample.labels["workflowName"], sample.value])).toEqual(names.map((name, index) => [name, index + 1]));
  });

  it("has a parser that refuses what a strict scraper refuses (so that reading a scrape with it checks something)", () => {
    const histogram = (buckets: string) => `# TYPE h histogram\n${buckets}h_sum 1\nh_count 2\n`;
    const refused = [
      'c{a="x\ny"} 1\n', // an unescaped line break in a label value
      'c{a="x\\ty"} 1\n', // an escape the format has not
      "# TYPE c counter\n# TYPE c counter\nc 1\n",
      "# HELP c one\n# HELP c two\nc 1\n",
      "c 1\nc 2\n",
      "# TYPE c counter\nc -1\n",
      "c 1\nd 1\nc{a=\"1\"} 1\n", // a family's samples apart
      histogram('h_bucket{le="1"} 2\nh_bucket{le="2"} 1\nh_bucket{le="+Inf"} 2\n'), // not cumulative
      histogram('h_bucket{le="1"} 2\n'), // no +Inf
      histogram('h_bucket{le="1"} 1\nh_bucket{le="+Inf"} 1\n'), // _count is not +Inf's
      "c 1",
    ];
    for (const text of refused) expect(() => parsePrometheusText(text), text).toThrow();
    expect(parsePrometheusText(histogram('h_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\n'))[0]!.samples).toHaveLength(4);
  });
});
