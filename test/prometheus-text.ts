/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), as Prometheus' own parsers read it
 * (github.com/prometheus/common expfmt's TextParser, prometheus/model/textparse), stricter where a scraper would drop
 * or misread a sample rather than fail: each family's HELP and TYPE at most once and before its samples, its samples
 * together, no series twice, label values escaped only as `\\`, `\"` and `\n`, histograms with cumulative `le`
 * buckets ending at `+Inf` and a `_count` equal to it, counters never negative nor NaN. Throws naming the line.
 */

/** One sample as read: its metric name (with a histogram's suffix), labels and value. */
export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** One family as read. */
export interface ParsedFamily {
  name: string;
  help?: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  samples: ParsedSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
// What Go's strconv.ParseFloat takes that a Prometheus text writer would write.
const FLOAT = /^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)$/;

/** The families of `text`, in order; throws on anything a strict scraper would refuse. */
export function parsePrometheusText(text: string): ParsedFamily[] {
  if (text !== "" && !text.endsWith("\n")) throw new Error("the text does not end with a line break");
  const families: ParsedFamily[] = [];
  const byName = new Map<string, ParsedFamily>();
  const seenSeries = new Set<string>();
  const typed = new Set<string>();
  let current: ParsedFamily | undefined;
  const lines = text.split("\n").slice(0, -1);
  const familyFor = (name: string, at: string): ParsedFamily => {
    let family = byName.get(name);
    if (family === undefined) {
      family = { name, type: "untyped", samples: [] };
      byName.set(name, family);
      families.push(family);
    } else if (family !== current) {
      throw new Error(`${at}: family ${name} seen before, with another family between`);
    }
    current = family;
    return family;
  };
  lines.forEach((line, index) => {
    const at = `line ${index + 1} (${JSON.stringify(line)})`;
    if (line.trim() === "") return;
    if (line.startsWith("#")) {
      const match = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t](.*))?$/.exec(line);
      if (match === null) return; // a comment
      const [, keyword, name, rest = ""] = match as unknown as [string, "HELP" | "TYPE", string, string | undefined];
      if (!METRIC_NAME.test(name)) throw new Error(`${at}: invalid metric name ${name}`);
      const family = familyFor(name, at);
      if (keyword === "HELP") {
        if (family.help !== undefined) throw new Error(`${at}: second HELP for ${name}`);
        family.help = unescapeHelp(rest, at);
      } else {
        if (family.samples.length > 0 || typed.has(name)) throw new Error(`${at}: TYPE for ${name} after its samples or twice`);
        const type = rest.trim();
        if (!TYPES.has(type)) throw new Error(`${at}: unknown type ${type}`);
        family.type = type as ParsedFamily["type"];
        typed.add(name);
      }
      return;
    }
    const sample = parseSampleLine(line, at);
    const familyName = familyNameOf(sample.name, current);
    const family = familyFor(familyName, at);
    if (family.type !== "histogram" && family.type !== "summary" && sample.name !== familyName) throw new Error(`${at}: ${sample.name} in family ${familyName}`);
    const series = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
    if (seenSeries.has(series)) throw new Error(`${at}: series written twice`);
    seenSeries.add(series);
    if (family.type === "counter" && !(sample.value >= 0)) throw new Error(`${at}: a counter of ${sample.value}`);
    family.samples.push(sample);
  });
  for (const family of families) if (family.type === "histogram") checkHistogram(family);
  return families;
}

/** The family a sample belongs to: the current histogram's when the name is its with a suffix of one. */
function familyNameOf(name: string, current: ParsedFamily | undefined): string {
  if (current?.type === "histogram") {
    for (const suffix of ["_bucket", "_sum", "_count"]) if (name === `${current.name}${suffix}`) return current.name;
  }
  return name;
}

function parseSampleLine(line: string, at: string): ParsedSample {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (nameMatch === null) throw new Error(`${at}: no metric name`);
  const name = nameMatch[0];
  let position = name.length;
  const labels: Record<string, string> = {};
  if (line[position] === "{") {
    position += 1;
    while (line[position] !== "}") {
      const labelMatch = /^[ \t]*([^=\s]+)[ \t]*=[ \t]*"/.exec(line.slice(position));
      if (labelMatch === null) throw new Error(`${at}: bad label at ${position}`);
      const labelName = labelMatch[1]!;
      if (!LABEL_NAME.test(labelName) || labelName.startsWith("__")) throw new Error(`${at}: invalid label name ${labelName}`);
      if (labelName in labels) throw new Error(`${at}: label ${labelName} twice`);
      position += labelMatch[0].length;
      let value = "";
      for (;;) {
        const char = line[position];
        if (char === undefined) throw new Error(`${at}: label value not closed (an unescaped line break?)`);
        position += 1;
        if (char === '"') break;
        if (char === "\\") {
          const escaped = line[position];
          position += 1;
          if (escaped === "\\" || escaped === '"') value += escaped;
          else if (escaped === "n") value += "\n";
          else throw new Error(`${at}: invalid escape \\${escaped ?? ""} in a label value`);
        } else {
          value += char;
        }
      }
      labels[labelName] = value;
      const after = /^[ \t]*(,?)[ \t]*/.exec(line.slice(position))!;
      position += after[0].length;
      if (after[1] === "" && line[position] !== "}") throw new Error(`${at}: expected , or } at ${position}`);
    }
    position += 1;
  }
  const rest = line.slice(position);
  const valueMatch = /^[ \t]+(\S+)(?:[ \t]+(-?\d+))?[ \t]*$/.exec(rest);
  if (valueMatch === null) throw new Error(`${at}: no value`);
  if (!FLOAT.test(valueMatch[1]!)) throw new Error(`${at}: invalid value ${valueMatch[1]}`);
  const text = valueMatch[1]!;
  const value = text === "NaN" ? Number.NaN : /Inf$/.test(text) ? (text.startsWith("-") ? -Infinity : Infinity) : Number(text);
  return { name, labels, value };
}

function unescapeHelp(text: string, at: string): string {
  return text.replace(/\\(.?)/g, (_match, escaped: string) => {
    if (escaped === "\\") return "\\";
    if (escaped === "n") return "\n";
    throw new Error(`${at}: invalid escape \\${escaped} in HELP`);
  });
}

/** Each series of a histogram: `le` buckets cumulative in order of their bounds, ending at `+Inf`, `_count` equal to it, a `_sum`. */
function checkHistogram(family: ParsedFamily): void {
  const series = new Map<string, { buckets: Array<[number, number]>; sum?: number; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1)));
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    const suffix = sample.name.slice(family.name.length);
    if (Number.isNaN(sample.value) || sample.value < 0) throw new Error(`${family.name}: ${sample.name} ${key} is ${sample.value}`);
    if (suffix === "_bucket") {
      if (le === undefined || !FLOAT.test(le) || le === "NaN") throw new Error(`${family.name}: a bucket of ${key} without a valid le (${le})`);
      entry.buckets.push([le === "+Inf" ? Infinity : Number(le), sample.value]);
    } else if (le !== undefined) {
      throw new Error(`${family.name}: ${sample.name} of ${key} with an le label`);
    } else if (suffix === "_sum") {
      entry.sum = sample.value;
    } else if (suffix === "_count") {
      entry.count = sample.value;
    } else {
      throw new Error(`${family.name}: sample ${sample.name} is no histogram's`);
    }
  }
  for (const [key, { buckets, sum, count }] of series) {
    const sorted = [...buckets].sort(([a], [b]) => a - b);
    if (new Set(sorted.map(([bound]) => bound)).size !== sorted.length) throw new Error(`${family.name} ${key}: an le twice`);
    if (sorted.at(-1)?.[0] !== Infinity) throw new Error(`${family.name} ${key}: no +Inf bucket`);
    sorted.forEach(([bound, value], index) => {
      if (index > 0 && value < sorted[index - 1]![1]) throw new Error(`${family.name} ${key}: bucket le=${bound} below the one before`);
    });
    if (sum === undefined || count === undefined) throw new Error(`${family.name} ${key}: no _sum or _count`);
    if (count !== sorted.at(-1)![1]) throw new Error(`${family.name} ${key}: _count ${count} is not the +Inf bucket's ${sorted.at(-1)![1]}`);
  }
}
