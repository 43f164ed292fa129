// @ts-check
/**
 * The standard workload (/work/shared/docs/benchmarks.md) against the engine's public API:
 * definitions, the three-step phases, the callback part, and the hit-count check.
 */
import { expectOk } from "./http.mjs";
import { percentile } from "./stats.mjs";

export const THREE_STEP = "bench_three_step";
export const CALLBACK = "bench_callback";
export const SEARCH_WAIT = "bench_search_wait";
const OWNER = "bench@example.com";
const TERMINAL = new Set(["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"]);

const now = () => performance.timeOrigin + performance.now();
const sleep = (/** @type {number} */ ms) => new Promise((next) => setTimeout(next, ms));

/**
 * An HTTP task that GETs the target.
 * @param {string} ref
 * @param {number} port
 * @param {string} path
 */
function httpTask(ref, port, path) {
  return {
    name: ref,
    taskReferenceName: ref,
    type: "HTTP",
    inputParameters: { http_request: { uri: `http://127.0.0.1:${port}${path}?wf=\${workflow.workflowId}`, method: "GET" } },
  };
}

/** @param {number} port the target's port */
export function threeStepDef(port) {
  return {
    name: THREE_STEP,
    description: "benchmark: three sequential HTTP GETs to the target",
    version: 1,
    schemaVersion: 2,
    ownerEmail: OWNER,
    tasks: [httpTask("step1", port, "/step1"), httpTask("step2", port, "/step2"), httpTask("step3", port, "/step3")],
    outputParameters: {
      n1: "${step1.output.response.body.n}",
      n2: "${step2.output.response.body.n}",
      n3: "${step3.output.response.body.n}",
    },
  };
}

/** @param {number} port the target's port */
export function callbackDef(port) {
  return {
    name: CALLBACK,
    description: "benchmark: HTTP ready, wait for a webhook callback, HTTP resumed",
    version: 1,
    schemaVersion: 2,
    ownerEmail: OWNER,
    tasks: [
      httpTask("ready", port, "/ready"),
      { name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: { timeoutSeconds: 120 } },
      httpTask("resumed", port, "/resumed"),
    ],
    outputParameters: { hook: "${hook.output.ok}" },
  };
}

/**
 * Registers (or overwrites) a definition.
 * @param {import("./http.mjs").Client} client
 * @param {object} def
 */
export function register(client, def) {
  return client.call("POST", "/api/metadata/workflow?overwrite=true", def);
}

/**
 * The workflow id from a start reply (text/plain, tolerating a JSON string).
 * @param {import("./http.mjs").Reply} reply
 */
function workflowIdOf(reply) {
  const id = typeof reply.json === "string" ? reply.json : reply.text.trim();
  if (!id || id.includes(" ") || id.length > 200) throw new Error(`start: unexpected reply ${reply.text.slice(0, 200)}`);
  return id;
}

/**
 * Polls a workflow until it reaches a terminal status.
 * @param {import("./http.mjs").Client} client
 * @param {string} id
 * @param {number} timeoutMs
 * @param {number} [everyMs]
 * @returns {Promise<any>} the Workflow JSON
 */
export async function pollUntilTerminal(client, id, timeoutMs, everyMs = 2) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = expectOk(await client.call("GET", `/api/workflow/${encodeURIComponent(id)}?includeTasks=false`), `GET workflow ${id}`);
    if (TERMINAL.has(reply.json?.status)) return reply.json;
    if (Date.now() > deadline) throw new Error(`workflow ${id} still ${reply.json?.status} after ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/**
 * Checks one finished three-step workflow: COMPLETED, three increasing numeric `n`s.
 * @param {any} workflow
 */
function checkThreeStep(workflow) {
  const out = workflow?.output ?? {};
  const ok =
    workflow?.status === "COMPLETED" &&
    [out.n1, out.n2, out.n3].every((n) => typeof n === "number") &&
    out.n1 < out.n2 &&
    out.n2 < out.n3;
  if (!ok) {
    throw new Error(
      `workflow ${workflow?.workflowId} ended ${workflow?.status} with output ${JSON.stringify(out)}` +
        (workflow?.reasonForIncompletion ? `: ${workflow.reasonForIncompletion}` : ""),
    );
  }
}

/**
 * Returns a function running one three-step workflow to its end through the public API: the synchronous
 * execute endpoint, or, when that route does not exist (404/405 on first use), start + polling.
 * @param {import("./http.mjs").Client} client
 * @param {(line: string) => void} log
 * @returns {{ runOne: () => Promise<void>, mode: () => string }}
 */
export function threeStepRunner(client, log) {
  /** @type {"execute" | "start+poll" | undefined} */
  let mode;
  const startAndPoll = async () => {
    const id = workflowIdOf(expectOk(await client.call("POST", `/api/workflow/${THREE_STEP}`, {}), "start workflow"));
    checkThreeStep(await pollUntilTerminal(client, id, 30_000));
  };
  const execute = async () => {
    const reply = await client.call("POST", `/api/workflow/execute/${THREE_STEP}/1?waitForSeconds=30`, {}, 35_000);
    if (mode !== "execute" && (reply.status === 404 || reply.status === 405)) {
      if (mode === "start+poll") return startAndPoll();
      mode = "start+poll";
      log(`POST /api/workflow/execute answered ${reply.status}; falling back to start + polling`);
      return startAndPoll();
    }
    expectOk(reply, "execute workflow");
    mode = "execute";
    let workflow = reply.json;
    if (workflow && !TERMINAL.has(workflow.status)) workflow = await pollUntilTerminal(client, workflow.workflowId, 30_000);
    checkThreeStep(workflow);
  };
  return {
    runOne: () => (mode === "start+poll" ? startAndPoll() : execute()),
    mode: () => mode ?? "unknown",
  };
}

/**
 * @typedef {object} PhaseResult
 * @property {number} n
 * @property {number} concurrency
 * @property {number} wallMs
 * @property {number} workflowsPerSec
 * @property {number} msPerStep wall / (n × 3)
 * @property {number} p50Ms workflow latency
 * @property {number} p99Ms
 */

/**
 * Runs `n` workflows with a pool of `concurrency` workers pulling from a shared counter.
 * @param {() => Promise<void>} runOne
 * @param {number} n
 * @param {number} concurrency
 * @param {number} deadline epoch ms after which the phase fails
 * @returns {Promise<PhaseResult>}
 */
export async function runPhase(runOne, n, concurrency, deadline) {
  let next = 0;
  let failed = false;
  /** @type {number[]} */
  const latencies = [];
  const started = performance.now();
  const worker = async () => {
    while (!failed) {
      const i = next++;
      if (i >= n) return;
      if (Date.now() > deadline) throw new Error("overall deadline passed");
      const t0 = performance.now();
      try {
        await runOne();
      } catch (error) {
        failed = true;
        throw error;
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  const wallMs = performance.now() - started;
  return {
    n,
    concurrency,
    wallMs,
    workflowsPerSec: n / (wallMs / 1000),
    msPerStep: wallMs / (n * 3),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

/**
 * @typedef {object} CallbackResult
 * @property {boolean} supported
 * @property {string} [reason] why it was skipped
 * @property {number} count
 * @property {number[]} resumeMs callback POST sent → target saw "resumed"
 * @property {number[]} completeMs callback POST sent → a GET showed COMPLETED
 */

/**
 * The callback part: `HTTP ready → WAIT_FOR_WEBHOOK → HTTP resumed`, `count` times one after the other.
 * @param {object} ctx
 * @param {import("./http.mjs").Client} ctx.client
 * @param {import("./target-process.mjs").TargetHandle} ctx.target
 * @param {number} ctx.count
 * @param {number} ctx.deadline
 * @param {(line: string) => void} ctx.log
 * @returns {Promise<CallbackResult>}
 */
export async function callbackPhase({ client, target, count, deadline, log }) {
  const registered = await register(client, callbackDef(target.port));
  if (registered.status < 200 || registered.status > 299) {
    return { supported: false, reason: `registration answered ${registered.status}: ${registered.text.slice(0, 300)}`, count: 0, resumeMs: [], completeMs: [] };
  }
  target.watch(["/ready", "/resumed"]);
  /** @type {number[]} */
  const resumeMs = [];
  /** @type {number[]} */
  const completeMs = [];
  for (let i = 0; i < count; i++) {
    if (Date.now() > deadline) throw new Error("overall deadline passed");
    const id = workflowIdOf(expectOk(await client.call("POST", `/api/workflow/${CALLBACK}`, {}), "start callback workflow"));
    await target.waitHit(`/ready?wf=${id}`, 15_000);
    // 50 ms as before (the figures of earlier runs compare), then asked again while a loaded machine has not committed
    // the "ready" step yet: the wait is before the measured window, so it only keeps a busy run from failing.
    await sleep(50);
    const hook = await waitingHook(client, id, Date.now() + HOOK_WAIT_TIMEOUT_MS);
    const resumed = target.waitHit(`/resumed?wf=${id}`, 15_000);
    resumed.catch(() => {}); // awaited below; avoid an unhandled rejection meanwhile

    const t0 = now();
    const callback = await client.call(
      "POST",
      `/api/tasks/webhook/${encodeURIComponent(id)}/hook/${encodeURIComponent(hook.taskId)}`,
      { status: "COMPLETED", output: { ok: true } },
    );
    expectOk(callback, `webhook callback for ${id}`);
    let completedAt = 0;
    const pollDeadline = Date.now() + 15_000;
    for (;;) {
      const reply = expectOk(await client.call("GET", `/api/workflow/${encodeURIComponent(id)}?includeTasks=false`), "GET callback workflow");
      const status = reply.json?.status;
      if (status === "COMPLETED") {
        completedAt = now();
        break;
      }
      if (TERMINAL.has(status)) throw new Error(`callback workflow ${id} ended ${status}: ${reply.json?.reasonForIncompletion ?? ""}`);
      if (Date.now() > pollDeadline) throw new Error(`callback workflow ${id} still ${status} 15 s after the callback`);
      await sleep(1);
    }
    resumeMs.push((await resumed) - t0);
    completeMs.push(completedAt - t0);
    if ((i + 1) % 25 === 0) log(`callback ${i + 1}/${count}`);
  }
  return { supported: true, count, resumeMs, completeMs };
}

/** How long after "ready" the callback workflow's "hook" task may take to show as waiting before the run fails. */
const HOOK_WAIT_TIMEOUT_MS = 5_000;

/**
 * The callback workflow `id`'s waiting "hook" task, asked for every 10 ms until `deadline`.
 * @param {import("./http.mjs").Client} client
 * @param {string} id
 * @param {number} deadline
 * @returns {Promise<{ taskId: string }>}
 */
async function waitingHook(client, id, deadline) {
  for (;;) {
    const view = expectOk(await client.call("GET", `/api/workflow/${encodeURIComponent(id)}?includeTasks=true`), "GET callback workflow");
    const hook = (view.json?.tasks ?? []).find((/** @type {any} */ t) => t.referenceTaskName === "hook" && !TERMINAL.has(t.status) && t.status !== "CANCELED");
    if (hook) return hook;
    if (TERMINAL.has(view.json?.status) || Date.now() > deadline) {
      throw new Error(`workflow ${id}: no waiting "hook" task ${HOOK_WAIT_TIMEOUT_MS} ms after "ready" (status ${view.json?.status})`);
    }
    await sleep(10);
  }
}

/** A workflow that only waits for a webhook: it stays RUNNING, and calls nothing. */
function searchWaitDef() {
  return {
    name: SEARCH_WAIT,
    description: "benchmark: stays RUNNING (waits for a webhook) until terminated",
    version: 1,
    schemaVersion: 2,
    ownerEmail: OWNER,
    tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }],
  };
}

/** How long one execution may take to show in search before the run fails. */
const SEARCH_VISIBLE_TIMEOUT_MS = 10_000;
/** How often the search phase asks search whether the execution shows yet. */
export const SEARCH_POLL_MS = 20;

/**
 * Search visibility (the "search must still find a running execution within a second"): `count`
 * times one after the other, start a workflow that stays RUNNING, then poll Conductor's search
 * (`query=workflowId = <id> AND status IN (RUNNING)`) every `everyMs` until it lists it, then terminate it.
 * No target hits, so the hit-count check is unchanged.
 * @param {object} ctx
 * @param {import("./http.mjs").Client} ctx.client
 * @param {number} ctx.count
 * @param {number} ctx.deadline
 * @param {number} [ctx.everyMs]
 * @returns {Promise<number[]>} start request sent → first search reply listing the execution, in ms
 */
export async function searchVisibilityPhase({ client, count, deadline, everyMs = SEARCH_POLL_MS }) {
  if (count === 0) return [];
  expectOk(await register(client, searchWaitDef()), `register ${SEARCH_WAIT}`);
  /** @type {number[]} */
  const visibleMs = [];
  for (let i = 0; i < count; i++) {
    if (Date.now() > deadline) throw new Error("overall deadline passed");
    const t0 = now();
    const id = workflowIdOf(expectOk(await client.call("POST", `/api/workflow/${SEARCH_WAIT}`, {}), "start search workflow"));
    const query = encodeURIComponent(`workflowId = ${id} AND status IN (RUNNING)`);
    for (;;) {
      const reply = expectOk(await client.call("GET", `/api/workflow/search?query=${query}`), "search");
      if ((reply.json?.results ?? []).some((/** @type {any} */ row) => row.workflowId === id)) break;
      if (now() - t0 > SEARCH_VISIBLE_TIMEOUT_MS) throw new Error(`running workflow ${id} not found by search ${SEARCH_VISIBLE_TIMEOUT_MS} ms after its start`);
      await sleep(everyMs);
    }
    visibleMs.push(now() - t0);
    expectOk(await client.call("DELETE", `/api/workflow/${encodeURIComponent(id)}?reason=benchmark`), `terminate ${id}`);
  }
  return visibleMs;
}

/**
 * The check: the target saw exactly the expected number of hits and no URL twice.
 * @param {import("./target-process.mjs").TargetHandle} target
 * @param {number} expected
 * @returns {Promise<{ ok: boolean, expected: number, hits: number, repeated: [string, number][] }>}
 */
export async function checkHits(target, expected) {
  await sleep(500); // let any late duplicate arrive
  const stats = await target.stats();
  return { ok: stats.hits === expected && stats.repeated.length === 0, expected, hits: stats.hits, repeated: stats.repeated };
}
