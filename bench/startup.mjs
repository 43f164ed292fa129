// @ts-check
/**
 * The Worker's startup cost: the CPU its global scope takes to evaluate (every module's top level, run once per
 * isolate), which Cloudflare caps in production ("Worker startup time", 1 s; a deploy over it fails with "Script
 * startup exceeded CPU time limit") and which no local dev server or test enforces.
 *
 * Does what `npx wrangler check startup` does (build with `wrangler deploy --dry-run`, import the main module in a
 * fresh local workerd under the devtools profiler), but samples every 50 µs instead of every 1 ms, repeats it in
 * several fresh isolates, and attributes the samples to source files through the bundle's source map, so it prints
 * a figure and the costliest files instead of a raw .cpuprofile. Everything is local; the build goes to a temp dir
 * that is removed at the end.
 *
 *   node bench/startup.mjs [--runs 7] [--top 15]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { SourceMap } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
// Node 20 has no WebSocket global; ws comes with miniflare (a dependency of wrangler and the workers test pool).
// @ts-ignore ws ships no type declarations
import WebSocket from "ws";

const args = process.argv.slice(2);
/** @param {string} name @param {number} fallback */
function option(name, fallback) {
  const at = args.indexOf(name);
  const value = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a positive integer`);
  return value;
}
const runs = option("--runs", 7);
const top = option("--top", 15);
/** The profiler's sampling interval in µs (V8's default, which `wrangler check startup` keeps, is 1,000). */
const samplingIntervalMicros = 50;

/** @typedef {{ id: number, callFrame: { functionName: string, url: string }, children?: number[], positionTicks?: { line: number, ticks: number }[] }} ProfileNode */

const MODULE_TYPE_BY_MIME = /** @type {const} */ ({
  "application/javascript+module": "ESModule",
  "application/javascript": "CommonJS",
  "application/wasm": "CompiledWasm",
  "text/plain": "Text",
  "application/octet-stream": "Data",
});

const dir = mkdtempSync(join(tmpdir(), "edge-conductor-startup-"));
try {
  process.stderr.write("building with wrangler deploy --dry-run ...\n");
  const build = spawnSync(
    process.execPath,
    ["node_modules/wrangler/bin/wrangler.js", "deploy", "--dry-run", "--outdir", join(dir, "out"), "--outfile", join(dir, "worker.bundle")],
    { encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_LOG_PATH: dir } },
  );
  if (build.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${build.stdout}${build.stderr}`);
  const { metadata, modules } = await readUploadForm(join(dir, "worker.bundle"));
  const sourceMap = new SourceMap(JSON.parse(readFileSync(join(dir, "out", "index.js.map"), "utf8")));
  const bundleLines = readFileSync(join(dir, "out", "index.js"), "utf8").split("\n");
  /**
   * The source file and line a 0-based bundle line came from (looked up at its first non-blank column).
   * @param {number} line
   */
  const originalPosition = (line) => {
    const column = Math.max(0, (bundleLines[line] ?? "").search(/\S/));
    const entry = sourceMap.findEntry(line, column);
    return entry && "originalSource" in entry ? { file: shortPath(entry.originalSource), line: entry.originalLine + 1 } : undefined;
  };

  /** @type {number[]} */
  const totals = [];
  /** @type {Map<string, number[]>} µs of self time per source file, one entry a run */
  const byFile = new Map();
  /** @type {Map<string, number[]>} µs of self time per function and source position, one entry a run */
  const byFunction = new Map();
  for (let run = 0; run < runs; run++) {
    const profile = await profileStartup(metadata, modules);
    let total = 0;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    /** @type {Map<number, number>} */
    const parentOf = new Map();
    for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
    /** @param {number} id whether the node is the bundle's code or something it called */
    const inBundle = (id) => {
      for (let at = /** @type {number | undefined} */ (id); at !== undefined; at = parentOf.get(at)) {
        if (nodes.get(at)?.callFrame.url.endsWith(`/${metadata.main_module}`)) return true;
      }
      return false;
    };
    // The window is from the first sample in the bundle's code to the last: the wrapper's request handling around
    // it is left out. Inside it the garbage collector's and V8's own ("(program)") samples count too: they are work
    // the startup caused.
    const inside = profile.samples.flatMap((id, i) => (inBundle(id) ? [i] : []));
    const first = inside[0] ?? 0;
    const last = inside.at(-1) ?? -1;
    /** @type {Map<number, number>} µs of self time per profile node */
    const selfTime = new Map();
    // timeDeltas[i] is the time from sample i-1 to sample i; the time up to the next sample is charged to this one
    // (to the last one, one sampling interval).
    for (let i = first; i <= last; i++) {
      const node = nodes.get(profile.samples[i]);
      if (!node || node.callFrame.functionName === "(idle)") continue;
      const micros = i < last ? (profile.timeDeltas[i + 1] ?? 0) : samplingIntervalMicros;
      selfTime.set(node.id, (selfTime.get(node.id) ?? 0) + micros);
    }
    for (const [id, micros] of selfTime) {
      const node = /** @type {ProfileNode} */ (nodes.get(id));
      total += micros;
      const ticks = node.positionTicks ?? [];
      const tickCount = ticks.reduce((sum, tick) => sum + tick.ticks, 0);
      // A node's time is split over the lines its samples were taken at (1-based bundle lines); a node without
      // them (a builtin, the garbage collector) is charged as a whole to its name.
      const shares = tickCount > 0 ? ticks.map((tick) => ({ line: tick.line - 1, micros: (micros * tick.ticks) / tickCount })) : [{ line: -1, micros }];
      for (const share of shares) {
        const at = share.line >= 0 ? originalPosition(share.line) : undefined;
        const file = at?.file ?? (node.callFrame.functionName || "(bundle top level, no line given)");
        addTo(byFile, file, run, share.micros);
        const name = `${node.callFrame.functionName || "(module top level)"} ${at ? `${at.file}:${at.line}` : ""}`.trim();
        addTo(byFunction, name, run, share.micros);
      }
    }
    totals.push(total);
    process.stderr.write(`run ${run + 1}/${runs}: ${(total / 1000).toFixed(1)} ms\n`);
  }
  const sorted = [...totals].sort((a, b) => a - b);
  const total = medianOf(totals);
  console.log(`startup CPU (global scope evaluation), ${runs} fresh isolates, ${samplingIntervalMicros} µs sampling: median ${(total / 1000).toFixed(1)} ms, min ${((sorted[0] ?? 0) / 1000).toFixed(1)}, max ${((sorted.at(-1) ?? 0) / 1000).toFixed(1)} (limit on Cloudflare: 1,000 ms)\n`);
  console.log(`V8 compiling the bundle, which workerd does before the profile starts, in Node for scale: median ${compileMillis(join(dir, "out", "index.js")).toFixed(1)} ms of CPU\n`);
  printTop("source file", byFile, total);
  printTop("function (self time)", byFunction, total);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * @param {Map<string, number[]>} costs
 * @param {string} name
 * @param {number} run
 * @param {number} micros
 */
function addTo(costs, name, run, micros) {
  const perRun = costs.get(name) ?? Array(runs).fill(0);
  perRun[run] += micros;
  costs.set(name, perRun);
}

/** @param {number[]} values */
function medianOf(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
}

/**
 * Each entry's median over the runs (a run the machine stalled in, which the profiler charges to whatever was
 * sampled last, moves it less than a sum would), against the median total.
 * @param {string} heading
 * @param {Map<string, number[]>} costs
 * @param {number} total
 */
function printTop(heading, costs, total) {
  console.log(`| ${heading} | share | ms per startup (median) |\n|---|---|---|`);
  const medians = [...costs].map(([name, perRun]) => /** @type {const} */ ([name, medianOf(perRun)]));
  for (const [name, micros] of medians.sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`| ${name} | ${((100 * micros) / total).toFixed(1)} % | ${(micros / 1000).toFixed(2)} |`);
  }
  console.log();
}

/**
 * The CPU Node's V8 takes to compile the bundle as a module (no linking, no evaluation), median of 5 fresh
 * compiles (a comment appended to each, so no code cache is hit).
 * @param {string} file
 */
function compileMillis(file) {
  const script = `
    const { SourceTextModule } = require("node:vm");
    const source = require("node:fs").readFileSync(process.argv[1], "utf8");
    const times = [];
    for (let i = 0; i < 5; i++) {
      const before = process.cpuUsage();
      new SourceTextModule(source + "\\n// " + i);
      const used = process.cpuUsage(before);
      times.push((used.user + used.system) / 1000);
    }
    console.log(times.sort((a, b) => a - b)[2]);`;
  const run = spawnSync(process.execPath, ["--experimental-vm-modules", "--no-warnings", "-e", script, file], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`compiling the bundle in Node failed:\n${run.stderr}`);
  return Number(run.stdout.trim());
}

/** @param {string} path */
function shortPath(path) {
  const at = path.lastIndexOf("node_modules/");
  if (at >= 0) return path.slice(at);
  const src = path.lastIndexOf("/src/");
  return src >= 0 ? path.slice(src + 1) : path;
}

/**
 * The multipart upload `wrangler deploy --outfile` writes: its metadata and modules, as `wrangler check startup` reads it.
 * @param {string} file
 */
async function readUploadForm(file) {
  const bundle = readFileSync(file);
  const boundary = bundle.subarray(2, bundle.indexOf(10)).toString().trim();
  const form = await new Response(bundle, { headers: { "Content-Type": `multipart/form-data; boundary=${boundary}` } }).formData();
  const metadata = JSON.parse(String(form.get("metadata")));
  /** @type {import("miniflare").ModuleDefinition[]} */
  const modules = [];
  for (const [path, entry] of form.entries()) {
    if (!(entry instanceof Blob) || entry.type === "application/source-map") continue;
    const type = MODULE_TYPE_BY_MIME[/** @type {keyof typeof MODULE_TYPE_BY_MIME} */ (entry.type)];
    if (!type) throw new Error(`unknown module type ${entry.type} of ${path}`);
    modules.push({ type, path, contents: new Uint8Array(await entry.arrayBuffer()) });
  }
  return { metadata, modules };
}

/**
 * One fresh isolate: a wrapper Worker imports the main module on its first request, under the profiler.
 * @param {{ main_module: string, compatibility_date: string, compatibility_flags?: string[] }} metadata
 * @param {import("miniflare").ModuleDefinition[]} modules
 * @returns {Promise<{ nodes: ProfileNode[], samples: number[], timeDeltas: number[] }>}
 */
async function profileStartup(metadata, modules) {
  const mf = new Miniflare({
    name: "startup",
    compatibilityDate: metadata.compatibility_date,
    compatibilityFlags: metadata.compatibility_flags ?? [],
    modulesRoot: "/",
    modules: [
      {
        type: "ESModule",
        path: "startup-wrapper-entry.mjs",
        contents: `export default { async fetch() { await import(${JSON.stringify(metadata.main_module)}); return new Response("ok"); } };`,
      },
      ...modules,
    ],
    inspectorPort: 0,
  });
  try {
    await mf.ready;
    const ws = new WebSocket(new URL("/core:user:startup", await mf.getInspectorURL()).href);
    await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
    /** @type {Map<number, (result: any) => void>} */
    const pending = new Map();
    ws.on("message", (/** @type {Buffer} */ data) => {
      const message = JSON.parse(String(data));
      pending.get(message.id)?.(message.result);
      pending.delete(message.id);
    });
    let nextId = 1;
    /** @param {string} method @param {object} [params] @returns {Promise<any>} */
    const send = (method, params = {}) =>
      new Promise((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        ws.send(JSON.stringify({ id, method, params }));
      });
    await send("Profiler.enable");
    await send("Profiler.setSamplingInterval", { interval: samplingIntervalMicros });
    await send("Profiler.start");
    const response = await mf.dispatchFetch("https://example.com/");
    if ((await response.text()) !== "ok") throw new Error(`importing ${metadata.main_module} failed (${response.status})`);
    const { profile } = await send("Profiler.stop");
    ws.close();
    return profile;
  } finally {
    await mf.dispose();
  }
}
