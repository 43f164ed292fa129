// @ts-check
/**
 * What one script run costs by the size of its input: the production QuickJS runner (src/actors/scripts/quickjs-runner.ts,
 * its WebAssembly loaded the Node way) running a one-line script (`$.n + 1`) over inputs of about 20 B, 10 KB, 500 KB and
 * the 730 KB the unit tests call an input at its largest, in this Node process. Most of a short script's run over a
 * small input is the fresh runtime and context (~0.2 ms); over a large one, handing `$` in (JSON.stringify here,
 * copying the text into the interpreter, its JSON.parse there). Not part of `npm run bench`.
 *
 * Run alone: `node bench/script-input.mjs [--rounds=N] [--against=path/to/other-runner.ts]` (default 5 rounds). With
 * `--against`, a second runner (a copy of quickjs-runner.ts as it was, its imports pointed back into src/) runs in
 * turn with this one, the order alternating each round, and the medians are compared: the way to measure a change to
 * how a run hands its input in or its result out. The figures are this process's user and system CPU time per run
 * (the wall time counts whatever else the machine runs).
 */
import { build } from "esbuild";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * A script runner built from the runner module at `path` (relative to the project), bundled for Node.
 * @param {string} path
 * @param {string} name
 * @returns {Promise<{ run(source: string, input: object): { ok: boolean, error?: string } }>}
 */
async function loadRunner(path, name) {
  const entry = `
    import variant from "@jitl/quickjs-wasmfile-release-sync";
    import { newQuickJSWASMModuleFromVariant } from "quickjs-emscripten-core";
    import { quickJsScriptRunner } from ${JSON.stringify(path)};
    export const loadScripts = async () => quickJsScriptRunner(await newQuickJSWASMModuleFromVariant(variant));
  `;
  const result = await build({ stdin: { contents: entry, resolveDir: ROOT, loader: "ts" }, bundle: true, format: "esm", platform: "node", packages: "external", write: false, logLevel: "silent" });
  // Written under node_modules, not imported from a data: URL: the packages it leaves out (QuickJS's WebAssembly among
  // them) are resolved from there.
  const file = join(ROOT, "node_modules", ".cache", `bench-script-input-${name}.mjs`);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, result.outputFiles[0]?.text ?? "");
  return (await import(pathToFileURL(file).href)).loadScripts();
}

/** @param {number} index */
const item = (index) => ({ id: `item-${index}`, qty: index % 7, price: index * 1.25, tags: ["a", 'b"q'], note: "naïve – ünïcode", ok: index % 2 === 0 });

/** An input of at least `chars` characters of JSON: a list of small mixed records. @param {number} chars */
function sized(chars) {
  const items = [];
  let length = 2;
  while (length < chars) length += JSON.stringify(items[items.push(item(items.length)) - 1]).length + 1;
  return { n: 1, items };
}

const INPUTS = {
  small: { input: { n: 1, name: "x" }, runs: 2000 },
  "10 KB": { input: sized(10_000), runs: 1000 },
  "500 KB": { input: sized(500_000), runs: 40 },
  // The unit tests' input at its largest (test/unit/inline.test.ts, "counts the JSON a script is given").
  "730 KB": { input: { n: 1, big: Array.from({ length: 18_000 }, (_, index) => ({ k: `v${index}`, n: index, s: "abcdefghij" })) }, runs: 30 },
};
const SCRIPT = "$.n + 1";

/**
 * CPU microseconds per run of SCRIPT over `input`, over `runs` runs.
 * @param {{ run(source: string, input: object): { ok: boolean, error?: string } }} runner
 * @param {object} input
 * @param {number} runs
 */
function cpuPerRun(runner, input, runs) {
  const start = process.cpuUsage();
  for (let run = 0; run < runs; run++) {
    const outcome = runner.run(SCRIPT, input);
    if (!outcome.ok) throw new Error(`the script failed: ${outcome.error}`);
  }
  const spent = process.cpuUsage(start);
  return (spent.user + spent.system) / runs;
}

/** @param {number[]} values */
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;

const options = Object.fromEntries(process.argv.slice(2).map((arg) => /** @type {[string, string]} */ (arg.replace(/^--/, "").split("=", 2))));
const rounds = Number(options.rounds ?? 5);
/** @type {Record<string, Awaited<ReturnType<typeof loadRunner>>>} */
const runners = { current: await loadRunner("./src/actors/scripts/quickjs-runner.ts", "current") };
if (options.against) runners.against = await loadRunner(`./${resolve(options.against).slice(ROOT.length + 1)}`, "against");
const names = Object.keys(runners);

// Warm-up: a tenth of each measurement.
for (const name of names) for (const { input, runs } of Object.values(INPUTS)) cpuPerRun(runners[name], input, Math.ceil(runs / 10));
/** @type {Record<string, Record<string, number[]>>} */
const figures = {};
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? names : [...names].reverse();
  for (const [label, { input, runs }] of Object.entries(INPUTS)) {
    for (const name of order) ((figures[label] ??= {})[name] ??= []).push(cpuPerRun(runners[name], input, runs));
  }
}

console.log(`| input (JSON chars) | ${names.map((name) => `${name}: median µs per run (each round)`).join(" | ")}${options.against ? " | current against it" : ""} |`);
console.log(`|---|${names.map(() => "---|").join("")}${options.against ? "---|" : ""}`);
for (const [label, { input }] of Object.entries(INPUTS)) {
  const cells = names.map((name) => `${median(figures[label][name]).toFixed(0)} (${figures[label][name].map((value) => value.toFixed(0)).join(" / ")})`);
  const change = options.against ? ` | ${((median(figures[label].current) / median(figures[label].against) - 1) * 100).toFixed(1)} %` : "";
  console.log(`| ${label} (${JSON.stringify(input).length}) | ${cells.join(" | ")}${change} |`);
}
