#!/usr/bin/env node
// @ts-check
/**
 * `npm run bench [-- --quick] [--n N] [--callbacks N] [--search N] [--preload COUNT [--restart]] [--inspector] [--json FILE] [--timeout SECONDS]`
 *
 * Runs the standard workload (/work/shared/docs/benchmarks.md) against a fresh `wrangler dev` of this
 * project and prints one markdown table. See bench/README.md.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { cpus, totalmem, release } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ROOT, exitOnSignals, startEngine } from "./engine.mjs";
import { createClient, expectOk } from "./http.mjs";
import { busiestOthers, busyMs, cpuSnapshot, otherCores } from "./cpu.mjs";
import { startPssSampler, treePids } from "./memory.mjs";
import { measureTransitions } from "./transitions.mjs";
import { fmt, percentile } from "./stats.mjs";
import { forkTarget } from "./target-process.mjs";
import { SEARCH_POLL_MS, callbackPhase, checkHits, register, runPhase, searchVisibilityPhase, threeStepDef, threeStepRunner } from "./workload.mjs";

const HELP = `Usage: npm run bench -- [options]

  --quick            short run (under a minute): N=50, 20 callback workflows, 5 search probes
  --n <N>            workflows per measured phase (default 200)
  --callbacks <N>    callback workflows (default 100)
  --search <N>       running workflows whose appearance in search is timed (default 20)
  --warmup <N>       warm-up workflows (default 5)
  --preload <COUNT>  first create COUNT finished executions (concurrency 20, not measured)
  --restart          after the preload, restart the dev server on the same stored state before measuring,
                     so the figures show what the stored executions cost apart from the process's own growth
  --inspector        run the wrangler dev CLI (npm run dev) instead of what npm start runs (wrangler's dev server
                     without the devtools inspector, scripts/dev-server.mjs); the CLI relays four inspector
                     events per outbound fetch
  --no-inspector     the default (kept for the commands in BENCHMARKS.md)
  --json <file>      also write the results as JSON
  --timeout <s>      overall deadline in seconds (default: 600 + preload/10)
  -h, --help
`;

const log = (/** @type {string} */ line) => console.error(`[bench] ${line}`);

/** @param {string | undefined} value @param {number} fallback @param {string} name */
function count(value, fallback, name) {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, got "${value}"`);
  return n;
}

function options() {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean" },
      n: { type: "string" },
      callbacks: { type: "string" },
      search: { type: "string" },
      warmup: { type: "string" },
      preload: { type: "string" },
      restart: { type: "boolean" },
      inspector: { type: "boolean" },
      "no-inspector": { type: "boolean" },
      json: { type: "string" },
      timeout: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  const quick = values.quick ?? false;
  const n = count(values.n, quick ? 50 : 200, "n");
  const preload = count(values.preload, 0, "preload");
  if (values.restart && preload === 0) throw new Error("--restart needs --preload <COUNT>: it restarts the dev server after the preload");
  return {
    help: values.help ?? false,
    quick,
    n,
    callbacks: count(values.callbacks, quick ? 20 : 100, "callbacks"),
    search: count(values.search, quick ? 5 : 20, "search"),
    warmup: count(values.warmup, 5, "warmup"),
    preload,
    restart: values.restart ?? false,
    inspector: (values.inspector ?? false) && !(values["no-inspector"] ?? false),
    json: values.json ? resolve(values.json) : undefined,
    timeoutSec: count(values.timeout, 600 + Math.ceil(preload / 10), "timeout"),
  };
}

/** @returns {string} the measured source: commit, and whether tracked files differ from it (read-only git) */
function sourceVersion() {
  try {
    const git = (/** @type {string[]} */ args) =>
      execFileSync("git", ["--no-optional-locks", ...args], { cwd: ROOT, encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] }).trim();
    const commit = git(["rev-parse", "--short", "HEAD"]);
    const dirty = git(["status", "--porcelain", "--untracked-files=no"]) !== "";
    return dirty ? `${commit} + uncommitted changes` : commit;
  } catch {
    return "unknown";
  }
}

function machine() {
  const list = cpus();
  let wrangler = "?";
  try {
    wrangler = JSON.parse(readFileSync(join(ROOT, "node_modules", "wrangler", "package.json"), "utf8")).version;
  } catch {
    // not installed: startEngine reports it
  }
  return {
    cpu: list[0]?.model ?? "?",
    cores: list.length,
    memoryGB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    wrangler,
  };
}

/**
 * @param {any} r results
 * @returns {string} the markdown table
 */
function table(r) {
  const c1 = r.phases.conc1;
  const c20 = r.phases.conc20;
  const cb = r.callback;
  const m = r.machine;
  const rows = [
    ["workflows/s, concurrency 1", fmt(c1.workflowsPerSec)],
    ["ms per step, concurrency 1", fmt(c1.msPerStep, 2)],
    ["workflow latency p50 / p99, concurrency 1", `${fmt(c1.p50Ms)} / ${fmt(c1.p99Ms)} ms`],
    ["workflows/s, concurrency 20", fmt(c20.workflowsPerSec)],
    ["ms per step, concurrency 20", fmt(c20.msPerStep, 2)],
    ["workflow latency p50 / p99, concurrency 20", `${fmt(c20.p50Ms)} / ${fmt(c20.p99Ms)} ms`],
    ["CPU of the engine's process tree per workflow, concurrency 1 / 20", `${fmt(r.engineCpuMs.conc1, 2)} / ${fmt(r.engineCpuMs.conc20, 2)} ms`],
    cb.supported
      ? ["callback → resume p50 / p99", `${fmt(cb.resumeP50Ms)} / ${fmt(cb.resumeP99Ms)} ms`]
      : ["callback → resume", "not supported by this build"],
    cb.supported
      ? ["callback → complete p50 / p99", `${fmt(cb.completeP50Ms)} / ${fmt(cb.completeP99Ms)} ms`]
      : ["callback → complete", "not supported by this build"],
    r.search.count > 0
      ? ["search lists a running execution: start → found p50 / max", `${fmt(r.search.p50Ms, 0)} / ${fmt(r.search.maxMs, 0)} ms (${r.search.count} polled every ${SEARCH_POLL_MS} ms)`]
      : ["search lists a running execution", "not measured (--search 0)"],
    ["engine alone per task transition (decide + serialisation, in Node)", `${fmt(r.transitions.microsPerTransition)} µs`],
    ["peak PSS of the engine's process tree", `${fmt(r.memory.peakMB, 0)} MB`],
    [
      "workflows (warm-up / per phase / callback / preloaded)",
      `${r.config.restart ? `${r.config.warmup} + ${r.config.warmup}` : r.config.warmup} / ${r.config.n} / ${cb.count} / ${r.config.preload}${r.config.restart ? ", then restarted" : ""}`,
    ],
    ["check: target hits (expected = actual)", `${r.check.expected} = ${r.check.hits}`],
    ["CPU used by other processes while measuring", `${fmt(r.otherCpuCores, 2)} cores`],
    ["API mode", r.mode],
    ["engine", r.config.inspector ? "wrangler dev CLI, devtools inspector on (--inspector; npm run dev)" : "wrangler's dev server, devtools inspector and request log off (npm start)"],
    ["machine", `${m.cpu}, ${m.cores} cores, ${m.memoryGB} GB, Linux ${m.kernel}`],
    ["versions", `Node ${m.node}, wrangler ${m.wrangler}, source ${r.source}`],
  ];
  return ["| metric | value |", "|---|---|", ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join("\n");
}

async function main() {
  const opts = options();
  if (opts.help) {
    process.stdout.write(HELP);
    return 0;
  }
  exitOnSignals();
  const deadline = Date.now() + opts.timeoutSec * 1000;
  const overall = setTimeout(() => {
    log(`overall deadline of ${opts.timeoutSec} s passed; stopping. No figures are reported for this run.`);
    process.exit(2); // the exit handlers stop the engine and the target
  }, opts.timeoutSec * 1000);
  overall.unref();

  const source = sourceVersion(); // before the engine copies the project
  // The engine's own cost per transition, measured before anything else runs on the cores.
  const transitions = await measureTransitions(opts.quick ? 1000 : 5000);
  log(`engine alone: ${fmt(transitions.microsPerTransition)} µs per transition (${transitions.transitions} transitions, in Node)`);
  const target = await forkTarget();
  log(`target listening on 127.0.0.1:${target.port} (pid ${target.pid})`);
  const engine = await startEngine({ log, inspector: opts.inspector }).catch((error) => {
    target.stop();
    throw error;
  });
  log(`engine up at ${engine.url} (wrangler pid ${engine.pid})`);
  let sampler = startPssSampler(engine.pid, 250);
  const client = createClient(engine.url, { "X-API-Key": engine.key }, { maxSockets: 64 });

  try {
    await target.reset();
    expectOk(await register(client, threeStepDef(target.port)), "register bench_three_step");
    const runner = threeStepRunner(client, log);

    log(`warm-up: ${opts.warmup} workflows`);
    await runPhase(runner.runOne, opts.warmup, 1, deadline);

    let preloadSec = 0;
    if (opts.preload > 0) {
      log(`preload: ${opts.preload} workflows at concurrency 20 (not measured)`);
      const t0 = performance.now();
      let done = 0;
      const progress = setInterval(() => log(`preload: ${done}/${opts.preload}`), 10_000);
      try {
        await runPhase(async () => {
          await runner.runOne();
          done += 1;
        }, opts.preload, 20, deadline);
      } finally {
        clearInterval(progress);
      }
      preloadSec = (performance.now() - t0) / 1000;
      log(`preload: ${opts.preload} workflows took ${fmt(preloadSec)} s (${fmt(opts.preload / preloadSec)} wf/s)`);
    }
    /** Peak memory of the tree before a restart, if any (the peak reported is the larger of the two trees'). */
    let beforeRestart;
    if (opts.restart) {
      beforeRestart = sampler.stop();
      log("restarting the dev server on the same state");
      await engine.restart();
      sampler = startPssSampler(engine.pid, 250);
      await runPhase(runner.runOne, opts.warmup, 1, deadline);
    }

    const ourPids = () => [process.pid, target.pid, ...treePids(engine.pid)];
    const cpuBefore = cpuSnapshot(ourPids);
    const engineBusy = () => busyMs(treePids(engine.pid));
    const engineAtStart = engineBusy();
    log(`concurrency 1: ${opts.n} workflows`);
    const conc1 = await runPhase(runner.runOne, opts.n, 1, deadline);
    log(`concurrency 1: ${fmt(conc1.workflowsPerSec)} wf/s`);
    const engineAfterConc1 = engineBusy();
    log(`concurrency 20: ${opts.n} workflows`);
    const conc20 = await runPhase(runner.runOne, opts.n, 20, deadline);
    log(`concurrency 20: ${fmt(conc20.workflowsPerSec)} wf/s`);
    const engineCpuMs = { conc1: (engineAfterConc1 - engineAtStart) / opts.n, conc20: (engineBusy() - engineAfterConc1) / opts.n };

    log(`callback: ${opts.callbacks} workflows`);
    const cb = await callbackPhase({ client, target, count: opts.callbacks, deadline, log });
    if (!cb.supported) {
      console.log("callback: not supported by this build");
      log(cb.reason ?? "");
    }

    const cpuAfter = cpuSnapshot(ourPids);
    // After the measured phases (its polling would disturb them) and outside the CPU window.
    log(`search: ${opts.search} running workflows`);
    const searchMs = await searchVisibilityPhase({ client, count: opts.search, deadline });
    const otherCpu = otherCores(cpuBefore, cpuAfter);
    if (otherCpu > 0.2) {
      const busiest = busiestOthers(cpuBefore, cpuAfter).map((p) => `${p.comm}(${p.pid}) ${fmt(p.cores, 2)}`).join(", ");
      log(`warning: other processes used ${fmt(otherCpu, 2)} cores while measuring (${busiest || "short-lived ones"}); the figures are disturbed`);
    }
    const warmups = opts.restart ? 2 * opts.warmup : opts.warmup;
    const expected = (warmups + opts.preload + 2 * opts.n) * 3 + (cb.supported ? 2 * cb.count : 0);
    const check = await checkHits(target, expected);
    const afterStart = sampler.stop();
    const memory = beforeRestart && beforeRestart.peakKb > afterStart.peakKb ? beforeRestart : afterStart;
    const results = {
      date: new Date().toISOString(),
      machine: machine(),
      source,
      config: { warmup: opts.warmup, n: opts.n, callbacks: opts.callbacks, search: opts.search, preload: opts.preload, restart: opts.restart, quick: opts.quick, inspector: opts.inspector },
      mode: runner.mode(),
      preloadSec,
      transitions,
      phases: { conc1, conc20 },
      engineCpuMs,
      callback: {
        supported: cb.supported,
        count: cb.count,
        resumeP50Ms: percentile(cb.resumeMs, 50),
        resumeP99Ms: percentile(cb.resumeMs, 99),
        completeP50Ms: percentile(cb.completeMs, 50),
        completeP99Ms: percentile(cb.completeMs, 99),
      },
      search: { count: searchMs.length, p50Ms: percentile(searchMs, 50), maxMs: searchMs.length ? Math.max(...searchMs) : Number.NaN },
      memory: {
        peakMB: memory.peakKb / 1024,
        samples: memory.samples,
        peakParts: memory.peakParts.map((p) => ({ pid: p.pid, comm: p.comm, MB: Math.round(p.pssKb / 102.4) / 10 })),
      },
      otherCpuCores: otherCpu,
      check,
    };

    if (!check.ok) {
      console.log(`CHECK FAILED: the target saw ${check.hits} hits, expected ${check.expected}`);
      if (check.repeated.length) console.log(`URLs hit more than once (${check.repeated.length}): ${JSON.stringify(check.repeated.slice(0, 20))}`);
      console.log("No figures are reported for this run.");
      return 1;
    }
    log(`peak PSS by process: ${results.memory.peakParts.map((p) => `${p.comm}(${p.pid}) ${p.MB} MB`).join(", ")}`);
    if (opts.preload > 0) {
      const restarted = opts.restart ? `; the dev server was then restarted on that state (and warmed up with ${opts.warmup} more)` : "";
      console.log(`preload: ${opts.preload} finished executions stored in ${fmt(preloadSec)} s before measuring${restarted}`);
    }
    console.log(table(results));
    if (opts.json) {
      mkdirSync(dirname(opts.json), { recursive: true });
      writeFileSync(opts.json, `${JSON.stringify(results, null, 2)}\n`);
      log(`results written to ${opts.json}`);
    }
    return 0;
  } catch (error) {
    // What wrangler and workerd said last is the only clue to a failure inside the engine.
    log(`engine output (last 4000 characters):\n${engine.output().slice(-4000)}`);
    throw error;
  } finally {
    sampler.stop();
    client.close();
    await engine.stop();
    target.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`[bench] failed: ${error instanceof Error ? error.message : String(error)}`);
    console.error("No figures are reported for this run.");
    process.exit(1);
  },
);
