#!/usr/bin/env node
// @ts-check
/**
 * `npm run soak`: the load test of the reliability work. N workflows (default 1,000), each waiting on a
 * webhook, are started at once; when all wait, every callback is posted at the same time, each one twice
 * (duplicates racing their original). Every workflow must complete exactly once: of each pair of
 * callbacks exactly one is accepted (200) and the other refused (409), and the target sees exactly one
 * final hit per workflow. Loopback only, bounded in time, stops everything it started.
 *
 *   npm run soak [-- --n 1000] [-- --concurrency 100] [-- --json file]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { exitOnSignals, startEngine } from "./engine.mjs";
import { createClient, expectOk } from "./http.mjs";
import { startPssSampler } from "./memory.mjs";
import { fmt, percentile } from "./stats.mjs";
import { forkTarget } from "./target-process.mjs";

const { values } = parseArgs({
  options: {
    n: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "100" },
    json: { type: "string" },
    timeout: { type: "string", default: "900" },
  },
});
const N = Number(values.n);
const CONCURRENCY = Number(values.concurrency);
const deadline = Date.now() + Number(values.timeout) * 1000;

/** Runs `task(i)` for i in [0, count) with at most `limit` at once; results in order. */
async function pool(count, limit, task) {
  const results = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      if (Date.now() > deadline) throw new Error("soak deadline passed");
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return results;
}

async function main() {
  exitOnSignals();
  const target = await forkTarget();
  const engine = await startEngine({ log: (line) => process.stderr.write(`[soak] ${line}\n`) });
  const memory = startPssSampler(engine.pid);
  try {
    const api = createClient(engine.url, { "x-api-key": engine.key }, { maxSockets: CONCURRENCY * 2 });
    expectOk(
      await api.call("POST", "/api/metadata/workflow?overwrite=true", {
        name: "soak_webhook",
        version: 1,
        schemaVersion: 2,
        tasks: [
          { name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} },
          { name: "done", taskReferenceName: "done", type: "HTTP", inputParameters: { uri: `http://127.0.0.1:${target.port}/done?wf=\${workflow.workflowId}&v=\${hook.output.v}`, method: "GET" } },
        ],
      }),
      "register soak_webhook",
    );

    process.stderr.write(`[soak] starting ${N} workflows\n`);
    const startedAt = performance.now();
    const ids = await pool(N, CONCURRENCY, async () => expectOk(await api.call("POST", "/api/workflow/soak_webhook", {}), "start").text);
    const startSeconds = (performance.now() - startedAt) / 1000;

    process.stderr.write("[soak] waiting for every webhook task to wait\n");
    const urls = await pool(N, CONCURRENCY, async (i) => {
      for (;;) {
        const workflow = expectOk(await api.call("GET", `/api/workflow/${ids[i]}`), "get").json;
        const hook = workflow.tasks?.[0];
        if (hook?.status === "IN_PROGRESS" && hook.callbackUrl) return new URL(hook.callbackUrl).pathname;
        if (Date.now() > deadline) throw new Error(`workflow ${ids[i]} never waited`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });

    process.stderr.write(`[soak] posting ${N} callbacks, each twice, at once\n`);
    const sentAt = new Array(N);
    const statuses = await pool(N * 2, CONCURRENCY * 2, async (j) => {
      const i = j % N;
      sentAt[i] ??= performance.now();
      const reply = await api.call("POST", urls[i], { status: "COMPLETED", output: { v: j < N ? "first" : "second" } });
      return reply.status;
    });

    process.stderr.write("[soak] waiting for every workflow to complete\n");
    const completeMs = await pool(N, CONCURRENCY, async (i) => {
      for (;;) {
        const workflow = expectOk(await api.call("GET", `/api/workflow/${ids[i]}?includeTasks=false`), "get").json;
        if (workflow.status === "COMPLETED") return performance.now() - sentAt[i];
        if (workflow.status !== "RUNNING") throw new Error(`workflow ${ids[i]} ended ${workflow.status}`);
        if (Date.now() > deadline) throw new Error(`workflow ${ids[i]} never completed`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    const totalSeconds = (performance.now() - startedAt) / 1000;
    const peak = memory.stop();

    const accepted = statuses.filter((status) => status === 200).length;
    const conflicts = statuses.filter((status) => status === 409).length;
    const stats = await target.stats();
    const failures = [];
    if (accepted !== N) failures.push(`accepted callbacks ${accepted}, expected ${N}`);
    if (conflicts !== N) failures.push(`409 answers ${conflicts}, expected ${N}`);
    if (stats.hits !== N) failures.push(`target hits ${stats.hits}, expected ${N}`);
    if (stats.repeated.length > 0) failures.push(`repeated hits: ${JSON.stringify(stats.repeated.slice(0, 5))}`);
    if (failures.length > 0) {
      console.error(`[soak] FAILED:\n  ${failures.join("\n  ")}`);
      process.exitCode = 1;
      return;
    }
    const result = {
      workflows: N,
      startRate: N / startSeconds,
      callbackToCompleteP50: percentile(completeMs, 50),
      callbackToCompleteP99: percentile(completeMs, 99),
      totalSeconds,
      peakPssMb: peak.peakKb / 1024,
    };
    console.log(
      [
        "| metric | value |",
        "|---|---|",
        `| workflows waiting on a webhook at once | ${N} |`,
        `| callbacks posted at once (each twice) | ${N * 2}: ${accepted} accepted, ${conflicts} refused as duplicates |`,
        `| target hits (expected = actual), repeated | ${N} = ${stats.hits}, none |`,
        `| starts/s (concurrency ${CONCURRENCY}) | ${fmt(result.startRate)} |`,
        `| callback sent → COMPLETED seen (polled once all callbacks are sent) p50 / p99 | ${fmt(result.callbackToCompleteP50)} / ${fmt(result.callbackToCompleteP99)} ms |`,
        `| whole run | ${fmt(totalSeconds)} s |`,
        `| peak PSS of the engine's process tree | ${fmt(result.peakPssMb, 0)} MB |`,
      ].join("\n"),
    );
    if (values.json) writeFileSync(values.json, JSON.stringify(result, null, 2));
  } finally {
    memory.stop();
    await engine.stop();
    target.stop();
  }
}

main().catch((error) => {
  console.error(`[soak] ${error instanceof Error ? error.stack : String(error)}`);
  process.exit(1);
});
