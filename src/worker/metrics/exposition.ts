import { DURATION_BUCKETS_SECONDS } from "./histogram";

/** Labels of one sample, by name (label names are the code's own; values are data and escaped when written). */
export type Labels = Readonly<Record<string, string>>;

/** One line of a metric family: `<family name><suffix>{labels} value`. */
export interface Sample {
  /** Appended to the family's name: `_bucket`, `_sum`, `_count` for a histogram, none otherwise. */
  suffix?: string;
  labels: Labels;
  value: number;
}

/** A metric family of the Prometheus text format (version 0.0.4): its help, its type, its samples. */
export interface MetricFamily {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  samples: Sample[];
}

/** The content type of {@link renderExposition}'s text, which Prometheus' scrapers ask for. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The families as the Prometheus text format writes them, each with its HELP and TYPE lines, families without samples too. */
export function renderExposition(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${family.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) lines.push(`${family.name}${sample.suffix ?? ""}${labelText(sample.labels)} ${valueText(sample.value)}`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The samples of one histogram series: a cumulative `_bucket` per bound of {@link DURATION_BUCKETS_SECONDS} and `+Inf`,
 * `_sum` (seconds) and `_count`, from the counts per bucket (index = bucket, as counted; missing ones are 0).
 */
export function durationHistogram(labels: Labels, countsByBucket: ReadonlyMap<number, number>, sumMs: number): Sample[] {
  const samples: Sample[] = [];
  let cumulative = 0;
  DURATION_BUCKETS_SECONDS.forEach((bound, index) => {
    cumulative += countsByBucket.get(index) ?? 0;
    samples.push({ suffix: "_bucket", labels: { ...labels, le: String(bound) }, value: cumulative });
  });
  cumulative += countsByBucket.get(DURATION_BUCKETS_SECONDS.length) ?? 0;
  samples.push({ suffix: "_bucket", labels: { ...labels, le: "+Inf" }, value: cumulative });
  samples.push({ suffix: "_sum", labels, value: sumMs / 1000 });
  samples.push({ suffix: "_count", labels, value: cumulative });
  return samples;
}

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

function valueText(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "+Inf" : "-Inf";
  return String(value);
}
