#!/usr/bin/env node
/**
 * Deploy over running executions (docs/reliability.md, "Upgrades over live state"): an older revision's dev server
 * leaves executions mid-way in many shapes (queued, polled and called-back SIMPLE tasks, WAITs for a time and for a
 * signal, HUMAN, a webhook wait, a DO_WHILE with keepLastN, a half-done FORK/JOIN, a parent with a running child, a
 * PAUSED workflow, a pending retry, workflow and task rate limits, a stored workflow message, a task log line, an HTTP
 * task's cached output, a schedule, an event handler, tags, secrets, users, applications and tokens, finished
 * executions) and is then killed (SIGKILL) right after more starts and mid HTTP call; this checkout's dev server then
 * runs over the same state, its D1 migrations
 * applied as `npm start` applies them, and finishes every one of them, reads, searches, retries and reruns them,
 * lets timers and the schedule fire and signs in with the old credentials; it also acts on the old state through what
 * later sessions changed (a HUMAN task's bulk delete, a webhook saved back with its secret masked, tags added under
 * the cap, the parent's subWorkflowId, the output cache sealed by migration 0041, a stored definition reading a task it
 * lacks and a webhook header value ending in a space, both refused at registration since). Loopback only; every wait is
 * bounded.
 *
 *   node bench/deploy-upgrade.mjs [--rev <commit>]...    each revision in a throwaway git worktree (npm ci there)
 *   node bench/deploy-upgrade.mjs seed|kill|old-over-new|check <projectRoot> <stateDir>    one phase, by hand
 *
 * Between the kill and the check, this checkout's migrations are applied to the old state and the OLD revision's dev
 * server runs once more over it (old-over-new): an upgrade applies the migrations before it deploys (README), and a
 * gradual deployment keeps the previous version serving, so the old code must still start and finish a workflow with
 * an HTTP task (and one whose output is cached), take a webhook delivery, hand out a SIMPLE task and sign in over the
 * migrated schema. A new router calling an object still on the old code (or the reverse) is not run here: the tests
 * of faults.test.ts and its neighbours delete a method an old object lacks.
 *
 * Exit code 0 when every step held (a step the older revision could not seed is skipped), 1 otherwise.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PHASES = ["seed", "kill", "old-over-new", "check"];
/** Revisions of main whose state is upgraded by default: about 1, 8, 21 and 33 sessions before this check was written. */
const DEFAULT_REVISIONS = ["01915ec", "22d5ea1", "6be8200", "87ea0df"];
const PROJECT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

if (!PHASES.includes(process.argv[2] ?? "")) process.exit(await runRevisions());

const [phase, root, state] = process.argv.slice(2);
if (!root || !state) {
  console.error("usage: deploy-upgrade.mjs [--rev <commit>]... | seed|kill|old-over-new|check <projectRoot> <stateDir>");
  process.exit(2);
}
const PORT = Number(process.env.DU_PORT ?? 8791);
const TARGET_PORT = Number(process.env.DU_TARGET_PORT ?? 18931);
const API = `http://127.0.0.1:${PORT}`;
const TARGET = `http://127.0.0.1:${TARGET_PORT}`;
const VARS = `${state}.vars`;
const MANIFEST = `${state}.manifest.json`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A port nobody listens on right now. */
async function freePort() {
  const server = createNetServer();
  await new Promise((done, fail) => server.once("error", fail).listen(0, "127.0.0.1", done));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * This checkout's D1 migrations applied to the state (as `npm start` and `wrangler d1 migrations apply` apply them),
 * without starting its server: the old revision's server is to run over them first.
 */
function applyMigrations(rev, stateDir) {
  console.error(`[${rev}] this checkout's migrations over the old state`);
  const wrangler = join(PROJECT, "node_modules", "wrangler", "bin", "wrangler.js");
  const run = spawnSync(process.execPath, [wrangler, "d1", "migrations", "apply", "DB", "--local", "--persist-to", stateDir], {
    cwd: PROJECT,
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
    timeout: 300_000,
  });
  if (run.status !== 0) throw new Error(`migrations failed (${run.status ?? run.signal}): ${(run.stderr ?? "").slice(-500)}`);
}

/** Each revision: a worktree, npm ci, then seed and kill with its code and check with this checkout's; 0 when all held. */
async function runRevisions() {
  const args = process.argv.slice(2);
  const revisions = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--rev" && args[i + 1]) revisions.push(args[++i]);
    else {
      console.error(`unknown argument ${args[i]}; usage: deploy-upgrade.mjs [--rev <commit>]...`);
      return 2;
    }
  }
  const failed = [];
  for (const rev of revisions.length ? revisions : DEFAULT_REVISIONS) {
    const dir = mkdtempSync(join(tmpdir(), "deploy-upgrade-"));
    const old = join(dir, "old");
    const stateDir = join(dir, "state");
    const env = { ...process.env, DU_PORT: String(await freePort()), DU_TARGET_PORT: String(await freePort()) };
    let ok = false;
    try {
      execFileSync("git", ["worktree", "add", "--detach", old, rev], { cwd: PROJECT, stdio: "ignore" });
      console.error(`[${rev}] npm ci in ${old}`);
      const ci = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: old, stdio: "ignore", timeout: 900_000 });
      if (ci.status !== 0) throw new Error(`npm ci failed (${ci.status ?? ci.signal})`);
      const phaseRun = (name, projectRoot, timeout) => {
        console.error(`[${rev}] ${name}`);
        const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), name, projectRoot, stateDir], { env, stdio: ["ignore", "pipe", "inherit"], timeout, encoding: "utf8" });
        const lines = (run.stdout ?? "").split("\n").filter((line) => /^(ok|FAIL|skip) |steps ok/.test(line));
        // What an older revision could not seed (a feature it lacked) is no failure: its check is skipped.
        for (const line of lines) console.log(`[${rev}] ${name}: ${name === "seed" ? line.replace(/^FAIL /, "not seeded: ") : line}`);
        return run.status;
      };
      // The seed's failures are the older revision's missing features; what it could not seed, check skips.
      phaseRun("seed", old, 600_000);
      phaseRun("kill", old, 300_000);
      applyMigrations(rev, stateDir);
      const oldOverNew = phaseRun("old-over-new", old, 300_000) === 0;
      ok = phaseRun("check", PROJECT, 900_000) === 0 && oldOverNew;
    } catch (error) {
      console.log(`[${rev}] FAIL ${error instanceof Error ? error.message : error}`);
    } finally {
      spawnSync("git", ["worktree", "remove", "--force", old], { cwd: PROJECT, stdio: "ignore" });
      // The state and the servers' logs are kept when something failed, to look into.
      if (ok) rmSync(dir, { recursive: true, force: true });
      else console.log(`[${rev}] state and logs kept in ${dir}`);
    }
    if (!ok) failed.push(rev);
  }
  console.log(failed.length ? `state of ${failed.join(", ")} did not upgrade cleanly` : "every revision's state upgraded cleanly");
  return failed.length ? 1 : 0;
}

// ---- results
const results = [];
function record(ok, what, detail = "") {
  results.push({ ok, what, detail });
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${detail ? `: ${detail}` : ""}`);
}
const serverErrors = [];

// ---- target server (HTTP tasks call it; it remembers the headers it saw)
const seen = [];
let smokeCalls = 0;
const target = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    seen.push({ url: req.url, headers: req.headers, body });
    if (req.url.startsWith("/smoke")) smokeCalls++;
    if (req.url.startsWith("/slow")) return void setTimeout(() => res.end(JSON.stringify({ slow: true })), 3000);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ path: req.url, ok: true }));
  });
});
await new Promise((r) => target.listen(TARGET_PORT, "127.0.0.1", r));

// ---- dev server
let adminKey;
function startServer() {
  const child = spawn(process.execPath, ["scripts/start.mjs", "--persist-to", state, "--dev-vars", VARS], {
    cwd: root,
    detached: true,
    env: { ...process.env, PORT: String(PORT), HOST: "127.0.0.1", CI: "true", WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (c) => (out += c));
  child.stderr.on("data", (c) => (out += c));
  return { child, output: () => out };
}
async function stopServer(server) {
  try {
    process.kill(-server.child.pid, "SIGTERM");
  } catch {}
  for (let i = 0; i < 100 && server.child.exitCode === null && server.child.signalCode === null; i++) await sleep(100);
  try {
    process.kill(-server.child.pid, "SIGKILL");
  } catch {}
}

async function call(method, path, body, headers = {}) {
  const init = { method, headers: { "x-api-key": adminKey, ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers["content-type"] ??= "application/json";
  }
  const response = await fetch(`${API}${path}`, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  if (response.status >= 500) {
    serverErrors.push(`${method} ${path} -> ${response.status} ${text.slice(0, 300)}`);
    console.log(`  !! ${method} ${path} -> ${response.status} ${text.slice(0, 300)}`);
  }
  return { status: response.status, json, text };
}
async function ok(method, path, body, headers) {
  const r = await call(method, path, body, headers);
  if (r.status >= 300) throw new Error(`${method} ${path} -> ${r.status} ${r.text.slice(0, 300)}`);
  return r.json;
}
async function until(read, accept, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await read();
    if (accept(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out (${timeoutMs} ms) waiting for ${what}; last: ${JSON.stringify(last)?.slice(0, 400)}`);
    await sleep(500);
  }
}
const wf = (id) => ok("GET", `/api/workflow/${id}?includeTasks=true`);
const waitStatus = (id, status, ms = 30_000) => until(() => wf(id), (w) => w.status === status, `${id} ${status}`, ms);
async function poll(type, ms = 15_000) {
  return until(async () => (await call("GET", `/api/tasks/poll/${type}?workerid=du`)).json, (t) => t && t.taskId, `a ${type} task`, ms);
}
/** Polls `type` until a task of execution `id` comes; any other task polled is a stray (reported, left in progress). */
const strays = [];
async function pollFor(type, id, ms = 20_000) {
  return until(
    async () => {
      const t = (await call("GET", `/api/tasks/poll/${type}?workerid=du`)).json;
      if (t && t.taskId && t.workflowInstanceId !== id) {
        strays.push(`${type} ${t.workflowInstanceId}`);
        record(false, `stray ${type} task of ${t.workflowInstanceId} polled while waiting for ${id}`);
      }
      return t;
    },
    (t) => t && t.workflowInstanceId === id,
    `${type} task of ${id}`,
    ms,
  );
}
const report = (task, status, output = {}, extra = {}) =>
  ok("POST", "/api/tasks", { workflowInstanceId: task.workflowInstanceId, taskId: task.taskId, status, outputData: output, ...extra });
const start = async (name, input = {}, extra = {}) => {
  const r = await call("POST", "/api/workflow", { name, input, ...extra });
  if (r.status !== 200) throw new Error(`start ${name}: ${r.status} ${r.text}`);
  return typeof r.json === "string" ? r.json : r.text;
};
const skip = (what) => console.log(`skip ${what} (not seeded)`);
/** Seed steps that succeeded (saved in the manifest): a check step whose seed failed on an old revision is skipped. */
const seeded = {};
/**
 * A HEADER_BASED webhook `name` checking `X-Du-Token: token` for du_webhook, and a du_webhook execution waiting for
 * order `orderId`'s event: their ids.
 */
async function seedTokenWebhook(name, token, orderId) {
  const hook = await ok("POST", "/api/metadata/webhook", {
    name,
    verifier: "HEADER_BASED",
    headers: { "X-Du-Token": token },
    receiverWorkflowNamesToVersions: { du_webhook: 1 },
    sourcePlatform: "Custom",
  });
  return [hook.id, await start("du_webhook", { orderId })];
}

async function step(what, fn) {
  try {
    const detail = await fn();
    seeded[what] = true;
    record(true, what, typeof detail === "string" ? detail : "");
  } catch (error) {
    record(false, what, String(error?.message ?? error));
  }
}

// ---- definitions
const simple = (ref, name = ref) => ({ name, taskReferenceName: ref, type: "SIMPLE" });
const DEFS = [
  { name: "du_simple", version: 1, tasks: [simple("a", "du_task_a")], ownerEmail: "du@example.com" },
  { name: "du_cb", version: 1, tasks: [simple("cb", "du_task_cb")] },
  { name: "du_failing", version: 1, tasks: [simple("f", "du_task_fail")] },
  { name: "du_wait_duration", version: 1, tasks: [{ name: "w", taskReferenceName: "w", type: "WAIT", inputParameters: { duration: "40 seconds" } }] },
  { name: "du_wait_signal", version: 1, tasks: [{ name: "w", taskReferenceName: "w", type: "WAIT" }] },
  { name: "du_human", version: 1, tasks: [{ name: "approve", taskReferenceName: "approve", type: "HUMAN" }] },
  { name: "du_webhook", version: 1, tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: { matches: { "$['orderId']": "${workflow.input.orderId}" } } }] },
  {
    name: "du_loop",
    version: 1,
    tasks: [
      {
        name: "loop",
        taskReferenceName: "loop",
        type: "DO_WHILE",
        inputParameters: { keepLastN: 2 },
        loopCondition: "$.loop['iteration'] < 5",
        loopOver: [simple("body", "du_task_loop")],
      },
    ],
  },
  {
    name: "du_fork",
    version: 1,
    tasks: [
      { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[simple("left", "du_task_left")], [simple("right", "du_task_right")]] },
      { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["left", "right"] },
    ],
  },
  { name: "du_child", version: 1, tasks: [simple("c", "du_task_child")] },
  { name: "du_parent", version: 1, tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "du_child", version: 1 } }] },
  { name: "du_retry", version: 1, tasks: [simple("r", "du_task_retry")] },
  { name: "du_rl", version: 1, tasks: [simple("l", "du_task_rl")] },
  { name: "du_wrl", version: 1, rateLimitConfig: { rateLimitKey: "du-wrl", concurrentExecLimit: 1 }, tasks: [simple("w", "du_task_wrl")] },
  {
    name: "du_http_lim",
    version: 1,
    tasks: [{ name: "du_http_limited", taskReferenceName: "call", type: "HTTP", asyncComplete: true, inputParameters: { http_request: { uri: `${TARGET}/lim`, method: "GET" } } }],
  },
  { name: "du_msgs", version: 1, tasks: [simple("m", "du_task_msg"), { name: "pull", taskReferenceName: "pull", type: "PULL_WORKFLOW_MESSAGES", inputParameters: { batchSize: 1 } }] },
  {
    name: "du_sink",
    version: 1,
    tasks: [
      simple("gate", "du_task_gate"),
      {
        name: "sw",
        taskReferenceName: "sw",
        type: "SWITCH",
        evaluatorType: "javascript",
        expression: "$.x > 1 ? 'big' : 'small'",
        inputParameters: { x: "${workflow.input.x}" },
        decisionCases: {
          big: [{ name: "big", taskReferenceName: "big", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "'big ' + $.x", x: "${workflow.input.x}" } }],
          small: [{ name: "small", taskReferenceName: "small", type: "SET_VARIABLE", inputParameters: { small: true } }],
        },
      },
      { name: "vp", taskReferenceName: "vp", type: "SWITCH", evaluatorType: "value-param", expression: "k", inputParameters: { k: "${gate.output.kind}" }, decisionCases: { a: [{ name: "seta", taskReferenceName: "seta", type: "SET_VARIABLE", inputParameters: { kind: "a" } }] }, defaultCase: [] },
      { name: "inline", taskReferenceName: "inline", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "(function(){ return $.a + 1; })()", a: "${workflow.input.x}" } },
      { name: "jq", taskReferenceName: "jq", type: "JSON_JQ_TRANSFORM", inputParameters: { queryExpression: ".a * 2", a: "${inline.output.result}" } },
      {
        name: "prep",
        taskReferenceName: "prep",
        type: "INLINE",
        inputParameters: {
          evaluatorType: "javascript",
          expression: "(function(){ var t = [], i = {}; for (var n = 0; n < 3; n++) { t.push({ name: 'd' + n, taskReferenceName: 'd' + n, type: 'INLINE' }); i['d' + n] = { evaluatorType: 'javascript', expression: '$.n * 10', n: n }; } return { tasks: t, inputs: i }; })()",
        },
      },
      { name: "dyn", taskReferenceName: "dyn", type: "FORK_JOIN_DYNAMIC", inputParameters: { tasks: "${prep.output.result.tasks}", inputs: "${prep.output.result.inputs}" }, dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs" },
      { name: "dyn_join", taskReferenceName: "dyn_join", type: "JOIN" },
      {
        name: "loop2",
        taskReferenceName: "loop2",
        type: "DO_WHILE",
        loopCondition: "$.loop2['iteration'] < 3",
        loopOver: [{ name: "step", taskReferenceName: "step", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "$.i * 2", i: "${loop2.output.iteration}" } }],
      },
      { name: "vars", taskReferenceName: "vars", type: "SET_VARIABLE", inputParameters: { done: "${jq.output.result}" } },
    ],
    outputParameters: { gate: "${gate.output}", sw: "${sw.output}", big: "${big.output.result}", vp: "${vp.output}", inline: "${inline.output.result}", jq: "${jq.output.result}", join: "${dyn_join.output}", loop: "${loop2.output}", vars: "${workflow.variables}" },
  },
  { name: "du_http_slow", version: 1, tasks: [{ name: "slow", taskReferenceName: "slow", type: "HTTP", inputParameters: { http_request: { uri: `${TARGET}/slow`, method: "GET" } } }] },
  { name: "du_kill", version: 1, tasks: [{ name: "i", taskReferenceName: "i", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "1" } }, simple("k", "du_task_kill")] },
  { name: "du_noop", version: 1, tasks: [{ name: "set", taskReferenceName: "set", type: "SET_VARIABLE", inputParameters: { seen: "${workflow.input.marker}" } }] },
  { name: "du_event", version: 1, tasks: [{ name: "announce", taskReferenceName: "announce", type: "EVENT", sink: "conductor", inputParameters: { marker: "${workflow.input.marker}" } }] },
  {
    name: "du_cached",
    version: 1,
    tasks: [{ name: "cached", taskReferenceName: "cached", type: "HTTP", cacheConfig: { key: "du-${workflow.input.k}", ttlInSecond: 3600 }, inputParameters: { http_request: { uri: `${TARGET}/cached`, method: "GET" } } }],
  },
  // Read tasks the definition does not hold (${nosuch...}): accepted before registration refused them (a6cfd48f);
  // stored so, they must still start, restart, rerun and upgrade (not checked again as they run). Version 2 to upgrade to.
  ...[1, 2].map((version) => ({
    name: "du_uref",
    version,
    tasks: [simple("gate", "du_task_uref"), { name: "set", taskReferenceName: "set", type: "SET_VARIABLE", inputParameters: { missing: "${nosuch.output.x}" } }],
    outputParameters: { missing: "${nosuch.output.x}", gate: "${gate.output.v}", version },
  })),
  // A parent holding, written in it, a child reading a task it lacks: checked (without registration's lints) as it starts.
  {
    name: "du_uref_inline",
    version: 1,
    tasks: [
      {
        name: "sub",
        taskReferenceName: "sub",
        type: "SUB_WORKFLOW",
        subWorkflowParam: {
          name: "du_uref_inline_child",
          version: 1,
          workflowDefinition: {
            name: "du_uref_inline_child",
            version: 1,
            tasks: [simple("gate", "du_task_uref"), { name: "set", taskReferenceName: "set", type: "SET_VARIABLE", inputParameters: { missing: "${nosuch.output.x}" } }],
            outputParameters: { missing: "${nosuch.output.x}", gate: "${gate.output.v}" },
          },
        },
      },
    ],
  },
  {
    name: "du_secret_http",
    version: 1,
    tasks: [{ name: "h", taskReferenceName: "h", type: "HTTP", inputParameters: { http_request: { uri: `${TARGET}/secret`, method: "GET", headers: { "x-du-secret": "${workflow.secrets.du_secret}" } } } }],
  },
];
const TASKDEFS = [
  { name: "du_task_retry", retryCount: 2, retryLogic: "FIXED", retryDelaySeconds: 30, responseTimeoutSeconds: 3600, timeoutSeconds: 0, ownerEmail: "du@example.com" },
  { name: "du_task_rl", retryCount: 0, rateLimitPerFrequency: 2, rateLimitFrequencyInSeconds: 5, concurrentExecLimit: 1, responseTimeoutSeconds: 3600, timeoutSeconds: 0, ownerEmail: "du@example.com" },
  { name: "du_http_limited", retryCount: 0, concurrentExecLimit: 1, responseTimeoutSeconds: 3600, timeoutSeconds: 0, ownerEmail: "du@example.com" },
  { name: "du_task_a", retryCount: 0, responseTimeoutSeconds: 3600, timeoutSeconds: 0, ownerEmail: "du@example.com" },
];

// ---- phases
async function seed() {
  const m = { ids: {}, finished: {}, keys: {}, started: Date.now() };
  // Code holding migration 0041 caches outputs sealed (in sealed_output), which the new code reads as hits; older code
  // cached them in plain, rows 0041 deletes and the new code reads as misses.
  m.oldSealsOutputs = existsSync(join(root, "migrations", "0041_task_output_cache_sealed_outputs.sql"));
  await step("register task defs", () => ok("POST", "/api/metadata/taskdefs", TASKDEFS));
  for (const def of DEFS) await step(`register ${def.name}`, () => ok("POST", "/api/metadata/workflow", def));
  await step("secret du_secret", () => ok("PUT", "/api/secrets/du_secret", JSON.stringify("s3cr3t-from-old")));

  // SIMPLE: scheduled, polled, polled + callbackAfterSeconds
  await step("simple scheduled / in progress / callback", async () => {
    const first = await start("du_simple", { n: 1 });
    const a = await pollFor("du_task_a", first);
    m.ids.simplePolled = first;
    m.ids.simplePolledTask = a.taskId;
    m.ids.simpleScheduled = await start("du_simple", { n: 2 });
    m.ids.simpleCallback = await start("du_cb", { n: 3 });
    const b = await pollFor("du_task_cb", m.ids.simpleCallback);
    await report(b, "IN_PROGRESS", { progress: 1 }, { callbackAfterSeconds: 20 });
  });
  await step("task log line on the polled SIMPLE task", async () => {
    if (m.ids.simplePolledTask === undefined) throw new Error("no polled task");
    // Older code found a task by id only once its execution's search row was written (404 until then): sent again.
    await until(() => call("POST", `/api/tasks/${m.ids.simplePolledTask}/log`, JSON.stringify("old log line")), (r) => r.status !== 404, "the task found by its id", 10_000).then((r) => {
      if (r.status >= 300) throw new Error(`log: ${r.status} ${r.text.slice(0, 200)}`);
    });
    m.ids.loggedTask = m.ids.simplePolledTask;
  });
  await step("wait duration / signal", async () => {
    m.ids.waitDuration = await start("du_wait_duration");
    m.ids.waitSignal = await start("du_wait_signal");
  });
  await step("human", async () => {
    m.ids.human = await start("du_human");
    m.ids.humanBulk = await start("du_human");
  });
  await step("webhook", async () => {
    [m.webhookId, m.ids.webhook] = await seedTokenWebhook("du-hook", "tok-1", "o-1");
  });
  await step("do_while mid-iteration (keepLastN 2, 3 of 5 done)", async () => {
    m.ids.loop = await start("du_loop");
    for (let i = 0; i < 3; i++) await report(await poll("du_task_loop"), "COMPLETED", { i });
    await until(() => wf(m.ids.loop), (w) => w.tasks.some((t) => t.referenceTaskName.startsWith("body") && t.status === "SCHEDULED"), "4th iteration scheduled");
  });
  await step("fork half done", async () => {
    m.ids.fork = await start("du_fork");
    await report(await poll("du_task_left"), "COMPLETED", { side: "left" });
  });
  await step("sub workflow with running child", async () => {
    m.ids.parent = await start("du_parent");
    const w = await until(() => wf(m.ids.parent), (w) => w.tasks[0]?.subWorkflowId, "child started");
    m.ids.child = w.tasks[0].subWorkflowId;
  });
  await step("paused workflow", async () => {
    m.ids.paused = await start("du_simple", { n: "paused" });
    await ok("PUT", `/api/workflow/${m.ids.paused}/pause`);
  });
  await step("retry pending (fixed 30 s delay)", async () => {
    m.ids.retry = await start("du_retry");
    await report(await poll("du_task_retry"), "FAILED", {}, { reasonForIncompletion: "first try fails" });
    const w = await until(() => wf(m.ids.retry), (w) => w.tasks.length === 2, "retry task");
    m.retryScheduledAt = Date.now();
    return `tasks ${w.tasks.map((t) => t.status).join(",")}`;
  });
  await step("rate-limited task def: 3 executions, 1 polled", async () => {
    m.ids.rl = [await start("du_rl"), await start("du_rl"), await start("du_rl")];
    const t = await poll("du_task_rl");
    m.ids.rlPolled = t.workflowInstanceId;
    m.ids.rlPolledTask = t.taskId;
  });
  await step("workflow rate limit: 2 executions, 1 holds the place", async () => {
    m.ids.wrlFirst = await start("du_wrl");
    m.ids.wrlSecond = await start("du_wrl");
    await pollFor("du_task_wrl", m.ids.wrlFirst).then((t) => (m.ids.wrlFirstTask = t.taskId));
    const second = await wf(m.ids.wrlSecond);
    return `second: ${second.status}, ${second.tasks.length} tasks`;
  });
  await step("HTTP task limit: 2 executions, 1 async call holds the place", async () => {
    m.ids.httpLimFirst = await start("du_http_lim");
    await until(() => wf(m.ids.httpLimFirst), (w) => w.tasks[0]?.status === "IN_PROGRESS", "first call in progress");
    m.ids.httpLimSecond = await start("du_http_lim");
    await sleep(1000);
    const second = await wf(m.ids.httpLimSecond);
    return `second's call: ${second.tasks[0]?.status}`;
  });
  await step("workflow message stored while a task runs; task log line", async () => {
    m.ids.msgs = await start("du_msgs");
    const t = await pollFor("du_task_msg", m.ids.msgs);
    m.ids.msgsTask = t.taskId;
    await ok("POST", `/api/workflow/${m.ids.msgs}/messages`, { hello: "from old" });
    await ok("POST", `/api/tasks/${t.taskId}/log`, JSON.stringify("old log line"));
  });
  await step("tags on a definition, a secret and a schedule; a group", async () => {
    await ok("PUT", "/api/metadata/workflow/du_simple/tags", [{ key: "team", value: "du" }]);
    await ok("PUT", "/api/secrets/du_secret/tags", [{ key: "team", value: "du" }]);
    await ok("PUT", "/api/groups/du-group", { description: "du group", roles: ["USER"] });
    m.tagged = true;
  });
  await step("kitchen sink: one run to the end, one parked at its gate", async () => {
    const full = await start("du_sink", { x: 5 });
    await report(await pollFor("du_task_gate", full), "COMPLETED", { kind: "a" });
    const w = await waitStatus(full, "COMPLETED");
    m.sinkOutput = w.output;
    m.finished.sink = full;
    m.ids.sinkParked = await start("du_sink", { x: 5 });
    await until(() => wf(m.ids.sinkParked), (w) => w.tasks[0]?.status === "SCHEDULED", "parked gate");
  });
  await step("task output cache: an HTTP task's output cached", async () => {
    if (!seeded["register du_cached"]) throw new Error("du_cached not registered");
    m.finished.cached = await start("du_cached", { k: "old" });
    await waitStatus(m.finished.cached, "COMPLETED");
    if (!seen.some((hit) => hit.url === "/cached")) throw new Error("the cached task's call never came");
    // A revision before the task output cache stored the definition without its cacheConfig: nothing to upgrade.
    const stored = await ok("GET", "/api/metadata/workflow/du_cached");
    if (stored.tasks?.[0]?.cacheConfig === undefined) throw new Error("stored without its cacheConfig (no task output cache in this revision)");
  });
  await step("unknown task ref: a stored definition reading a task it lacks, one finished, one terminated, two parked", async () => {
    if (!seeded["register du_uref"]) throw new Error("du_uref not registered");
    m.finished.urefCompleted = await start("du_uref", { n: "done" }, { version: 1 });
    await report(await pollFor("du_task_uref", m.finished.urefCompleted), "COMPLETED", { v: "old" });
    await waitStatus(m.finished.urefCompleted, "COMPLETED");
    m.finished.urefTerminated = await start("du_uref", { n: "terminated" }, { version: 1 });
    await ok("DELETE", `/api/workflow/${m.finished.urefTerminated}?reason=stop`);
    m.ids.urefParked = await start("du_uref", { n: "parked" }, { version: 1 });
    m.ids.urefToUpgrade = await start("du_uref", { n: "to upgrade" }, { version: 1 });
    for (const id of [m.ids.urefParked, m.ids.urefToUpgrade]) await until(() => wf(id), (w) => w.tasks[0]?.status === "SCHEDULED", "parked gate");
  });
  await step("webhook with a header value ending in a space (saved before such values were refused)", async () => {
    [m.webhookSpaceId, m.ids.webhookSpace] = await seedTokenWebhook("du-hook-space", "tok-space ", "o-space");
  });
  await step("schedule every 10 s", () =>
    ok("POST", "/api/scheduler/schedules", { name: "du-sched", cronExpression: "*/10 * * * * ?", startWorkflowRequest: { name: "du_noop", input: { marker: "sched" } } }),
  );
  await step("event handler", () =>
    ok("POST", "/api/event", {
      name: "du_handler",
      event: "conductor:du_event:announce",
      active: true,
      actions: [{ action: "start_workflow", start_workflow: { name: "du_noop", input: { marker: "${marker}" }, correlationId: "${marker}" } }],
    }),
  );
  await step("finished executions: completed, failed, terminated", async () => {
    m.finished.completed = await start("du_noop", { marker: "done" });
    await waitStatus(m.finished.completed, "COMPLETED");
    m.finished.failed = await start("du_failing", { n: "fails" });
    const t = await pollFor("du_task_fail", m.finished.failed);
    await report(t, "FAILED", {}, { reasonForIncompletion: "boom" });
    await waitStatus(m.finished.failed, "FAILED");
    m.finished.terminated = await start("du_wait_signal");
    await ok("DELETE", `/api/workflow/${m.finished.terminated}?reason=stop`);
    if (seeded["register du_event"]) {
      m.finished.eventRun = await start("du_event", { marker: "old-event" });
      await waitStatus(m.finished.eventRun, "COMPLETED");
    }
  });
  await step("security: role, user with key", async () => {
    await ok("POST", "/api/security/roles", { name: "du-readers", description: "read all", permissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    const key = await ok("POST", "/api/security/users/du-alice@example.com/api-keys");
    await ok("PUT", "/api/security/users/du-alice@example.com/roles", { roles: ["du-readers"] });
    m.keys.alice = `${key.keyId}:${key.keySecret}`;
  });
  await step("security: admin token", async () => {
    const [keyId, keySecret] = [adminKey.slice(0, adminKey.indexOf(":")), adminKey.slice(adminKey.indexOf(":") + 1)];
    const token = await ok("POST", "/api/security/token", { keyId, keySecret });
    m.keys.adminToken = token.token;
    m.keys.adminRefresh = token.refresh_token ?? token.refreshToken;
  });
  await step("security: application with key and token", async () => {
    const app = await ok("POST", "/api/applications", { name: "du-app" });
    m.appId = app.id;
    await ok("POST", `/api/applications/${app.id}/roles/ADMIN`);
    const appKey = await ok("POST", `/api/applications/${app.id}/accessKeys`);
    m.keys.app = `${appKey.id}:${appKey.secret}`;
    const appToken = await ok("POST", "/api/token", { keyId: appKey.id, keySecret: appKey.secret });
    m.keys.appToken = appToken.token;
  });
  m.done = seeded;
  // let search rows settle
  await sleep(3000);
  writeFileSync(MANIFEST, JSON.stringify(m, null, 2));
  console.log(JSON.stringify(m, null, 2));
}

/** Starts executions as fast as it can and SIGKILLs the server right after the last answer (an abrupt deploy). */
async function kill() {
  const slow = await start("du_http_slow");
  await until(() => seen.length, (n) => seen.some((h) => h.url === "/slow"), "the slow call made", 10_000);
  const ids = await Promise.all([...Array(12)].map((_, i) => start(i % 2 ? "du_noop" : "du_kill", { marker: `kill-${i}` })));
  writeFileSync(`${state}.kill.json`, JSON.stringify({ noop: ids.filter((_, i) => i % 2), kill: ids.filter((_, i) => !(i % 2)), slow }));
  record(true, `started ${ids.length} executions; killing the server now`);
}

/**
 * The old revision's code over this checkout's migrations (the window between `wrangler d1 migrations apply` and the
 * deploy, and a gradual deployment's old version): with definitions, a webhook and executions of its own (names
 * du_smoke_*, none the check looks at), it starts and finishes a workflow with an HTTP task, takes a webhook delivery
 * that completes a waiting task, hands out a SIMPLE task and takes its result, and signs in with the admin key.
 */
async function oldOverNew() {
  await step("old code, migrated schema: register definitions", async () => {
    await ok("POST", "/api/metadata/taskdefs", [{ name: "du_smoke_task", retryCount: 0, responseTimeoutSeconds: 3600, timeoutSeconds: 0, ownerEmail: "du@example.com" }]);
    for (const def of [
      { name: "du_smoke_http", version: 1, tasks: [{ name: "h", taskReferenceName: "h", type: "HTTP", inputParameters: { http_request: { uri: `${TARGET}/smoke`, method: "GET" } } }] },
      { name: "du_smoke_simple", version: 1, tasks: [simple("s", "du_smoke_task")] },
      { name: "du_smoke_wait", version: 1, tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: { matches: { "$['orderId']": "${workflow.input.orderId}" } } }] },
    ])
      await ok("POST", "/api/metadata/workflow", def);
  });
  await step("old code, migrated schema: a workflow with an HTTP task runs to COMPLETED", async () => {
    const id = await start("du_smoke_http");
    await waitStatus(id, "COMPLETED");
    if (smokeCalls < 1) throw new Error("the HTTP task's call never came");
  });
  // A revision from before webhooks (the route unknown: 404) has none to take: skipped, as the seed's are.
  const webhooksKnown = (await call("GET", "/api/metadata/webhook")).status !== 404;
  await (webhooksKnown ? step : skip)("old code, migrated schema: a webhook delivery completes the waiting task", async () => {
    const hook = await ok("POST", "/api/metadata/webhook", {
      name: "du-smoke-hook",
      verifier: "HEADER_BASED",
      headers: { "X-Du-Token": "tok-smoke" },
      receiverWorkflowNamesToVersions: { du_smoke_wait: 1 },
      sourcePlatform: "Custom",
    });
    const id = await start("du_smoke_wait", { orderId: "smoke-1" });
    // Sent again until it completes the task: the task's wait row reaches D1 a moment after its start.
    await until(
      async () => {
        const r = await fetch(`${API}/webhook/${hook.id}`, { method: "POST", headers: { "content-type": "application/json", "X-Du-Token": "tok-smoke" }, body: JSON.stringify({ orderId: "smoke-1" }) });
        if (r.status >= 500) {
          // Counted with the other answers' 5xx (this request goes past `api`, the webhook route takes no credentials).
          const error = `webhook POST ${r.status} ${(await r.text()).slice(0, 300)}`;
          serverErrors.push(`POST /webhook/${hook.id} -> ${error}`);
          throw new Error(error);
        }
        return (await wf(id)).status;
      },
      (status) => status === "COMPLETED",
      "the waiting workflow completed by the delivery",
      20_000,
    );
  });
  await step("old code, migrated schema: a SIMPLE task polled and completed", async () => {
    const id = await start("du_smoke_simple");
    await report(await pollFor("du_smoke_task", id), "COMPLETED", { done: true });
    await waitStatus(id, "COMPLETED");
  });
  const manifest = existsSync(MANIFEST) ? JSON.parse(readFileSync(MANIFEST, "utf8")) : {};
  if (manifest.done?.["task output cache: an HTTP task's output cached"])
    await step("old code, migrated schema: a cached HTTP task runs (its output cached in plain beside sealed_output)", async () => {
      const id = await start("du_cached", { k: "smoke" });
      await waitStatus(id, "COMPLETED");
    });
  await step("old code, migrated schema: sign in with the admin key, the token reads", async () => {
    const [keyId, keySecret] = [adminKey.slice(0, adminKey.indexOf(":")), adminKey.slice(adminKey.indexOf(":") + 1)];
    const token = await ok("POST", "/api/security/token", { keyId, keySecret });
    const r = await fetch(`${API}/api/metadata/workflow/du_smoke_http`, { headers: { "x-authorization": token.token } });
    if (r.status !== 200) throw new Error(`GET with the token: ${r.status} ${(await r.text()).slice(0, 200)}`);
  });
}

async function check() {
  const m = JSON.parse(readFileSync(MANIFEST, "utf8"));
  /** A step needing what the seed recorded: skipped (not failed) when the old revision could not seed it. */
  const needSeed = (prefix, what, fn) => (Object.keys(m.done ?? {}).some((k) => k.startsWith(prefix)) ? step(what, fn) : (console.log(`skip ${what} (not seeded)`), undefined));
  const need = (keys, what, fn) => (keys.every((k) => m.ids[k] !== undefined || m[k] !== undefined) ? step(what, fn) : (console.log(`skip ${what} (not seeded)`), undefined));
  const allIds = [...Object.entries(m.ids).filter(([k]) => !k.endsWith("Task")).flatMap(([, v]) => v), ...Object.values(m.finished)];
  await step("every seeded execution GETs (200) after the deploy", async () => {
    const bad = [];
    for (const id of allIds) {
      const r = await call("GET", `/api/workflow/${id}?includeTasks=true`);
      if (r.status !== 200) bad.push(`${id} ${r.status}`);
    }
    if (bad.length) throw new Error(bad.join("; "));
    return `${allIds.length} executions`;
  });
  await step("search finds every seeded execution (before any change)", async () => {
    const r = await ok("GET", `/api/workflow/search?size=500&query=${encodeURIComponent("workflowType IN (du_simple,du_cb,du_failing,du_sink,du_wrl,du_http_lim,du_msgs,du_wait_duration,du_wait_signal,du_human,du_webhook,du_loop,du_fork,du_parent,du_child,du_retry,du_rl,du_noop,du_event,du_cached,du_uref)")}`);
    const found = new Set(r.results.map((x) => x.workflowId));
    const missing = allIds.filter((id) => !found.has(id));
    if (missing.length) throw new Error(`missing ${missing.join(",")}`);
    return `${r.totalHits} rows`;
  });
  // auth with old credentials
  for (const [what, headers, expect] of [
    ["admin key", { "x-api-key": adminKey }, 200],
    ["alice's old key (reader)", { "x-api-key": m.keys.alice }, 200],
    ["application's old access key", { "x-api-key": m.keys.app }, 200],
    ["old admin token", { "x-api-key": "", "x-authorization": m.keys.adminToken }, 200],
    ["old application token", { "x-api-key": "", "x-authorization": m.keys.appToken }, 200],
  ])
    await (Object.values(headers).every((v) => v !== undefined) ? step : skip)(`auth: ${what}`, async () => {
      const h = { ...headers };
      if (h["x-api-key"] === "") delete h["x-api-key"];
      const r = await fetch(`${API}/api/metadata/workflow/du_simple`, { headers: h });
      if (r.status !== expect) throw new Error(`${r.status} ${(await r.text()).slice(0, 200)}`);
    });
  await (m.keys.alice ? step : skip)("auth: alice (reader) still refused a write", async () => {
    const r = await fetch(`${API}/api/workflow/${m.ids.waitSignal}/pause`, { method: "PUT", headers: { "x-api-key": m.keys.alice } });
    if (r.status !== 403) throw new Error(`${r.status}`);
  });
  await needSeed("security: admin token", "auth: old refresh token refreshes", async () => {
    const r = await fetch(`${API}/api/security/token/refresh`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ refreshToken: m.keys.adminRefresh }) });
    if (r.status !== 200) throw new Error(`${r.status} ${(await r.text()).slice(0, 200)}`);
  });
  await needSeed("secret du_secret", "secret still decrypts into an HTTP task", async () => {
    const id = await start("du_secret_http");
    await waitStatus(id, "COMPLETED");
    const hit = seen.find((s) => s.url === "/secret");
    if (hit?.headers["x-du-secret"] !== "s3cr3t-from-old") throw new Error(`header ${hit?.headers["x-du-secret"]}`);
  });

  await needSeed("simple scheduled", "SIMPLE scheduled: polled and completed", async () => {
    const t = await pollFor("du_task_a", m.ids.simpleScheduled, 20_000);
    await report(t, "COMPLETED", { done: true });
    await waitStatus(m.ids.simpleScheduled, "COMPLETED");
  });
  await need(["loggedTask"], "old log line of a polled task read", async () => {
    const log = await ok("GET", `/api/tasks/${m.ids.loggedTask}/log`);
    if (!Array.isArray(log) || log[0]?.log !== "old log line") throw new Error(`log ${JSON.stringify(log)}`);
  });
  await needSeed("simple scheduled", "SIMPLE polled in old code: completed by its task id", async () => {
    await report({ workflowInstanceId: m.ids.simplePolled, taskId: m.ids.simplePolledTask }, "COMPLETED", { done: true });
    await waitStatus(m.ids.simplePolled, "COMPLETED");
  });
  await needSeed("simple scheduled", "SIMPLE with callbackAfterSeconds: comes back to the queue", async () => {
    const t = await pollFor("du_task_cb", m.ids.simpleCallback, 45_000);
    await report(t, "COMPLETED", { done: true });
    await waitStatus(m.ids.simpleCallback, "COMPLETED");
  });
  await needSeed("wait duration", "WAIT for a signal: signalled", async () => {
    await ok("POST", `/api/tasks/${m.ids.waitSignal}/COMPLETED/signal`, { by: "signal" });
    await waitStatus(m.ids.waitSignal, "COMPLETED");
  });
  await needSeed("human", "HUMAN: completed", async () => {
    const w = await wf(m.ids.human);
    const taskId = w.tasks[0].taskId;
    const r = await call("GET", `/api/human/tasks/${taskId}`);
    if (r.status !== 200) throw new Error(`GET human task ${r.status} ${r.text.slice(0, 200)}`);
    const done = await call("POST", `/api/human/tasks/${taskId}/update?complete=true`, { approved: true });
    let how = "by the human task API";
    if (done.status === 409 && /before assignments were kept/.test(done.text)) {
      // Deliberate: a HUMAN task started before assignments were kept has none; the answer says to use POST /api/tasks.
      await ok("POST", `/api/tasks/${m.ids.human}/approve/COMPLETED`, { approved: true });
      how = "by POST /api/tasks (started before assignments were kept: the human API answers 409 and says to)";
    } else if (done.status !== 200) throw new Error(`update ${done.status} ${done.text.slice(0, 200)}`);
    await waitStatus(m.ids.human, "COMPLETED");
    return how;
  });
  await needSeed("human", "HUMAN: the bulk delete finds an old task, its workflow still waits for it", async () => {
    if (m.ids.humanBulk === undefined) return "not seeded by this revision's manifest";
    const taskId = (await wf(m.ids.humanBulk)).tasks[0].taskId;
    const answer = await ok("DELETE", "/api/human/tasks/delete", [taskId]);
    const why = answer.failed?.[taskId];
    // As the update above: a task from before assignments were kept is refused (409), and says how to complete it.
    if (!answer.deleted?.includes(taskId) && !/before assignments were kept/.test(why ?? "")) throw new Error(`bulk delete ${JSON.stringify(answer)}`);
    if ((await wf(m.ids.humanBulk)).tasks[0].status !== "IN_PROGRESS") throw new Error("its task no longer waits");
    await ok("POST", `/api/tasks/${m.ids.humanBulk}/approve/COMPLETED`, { approved: true });
    await waitStatus(m.ids.humanBulk, "COMPLETED");
    return why === undefined ? "deleted" : `refused: ${why}`;
  });
  await needSeed("webhook", "webhook-waiting task: completed by an event after the webhook is saved back as read (its secret *** kept)", async () => {
    // A client's edit round-trips the masked secret: the new code keeps the one the old code sealed.
    const hook = await ok("GET", `/api/metadata/webhook/${m.webhookId}`);
    await ok("PUT", `/api/metadata/webhook/${m.webhookId}`, hook);
    const r = await fetch(`${API}/webhook/${m.webhookId}`, { method: "POST", headers: { "content-type": "application/json", "X-Du-Token": "tok-1" }, body: JSON.stringify({ orderId: "o-1" }) });
    if (r.status >= 300) throw new Error(`webhook POST ${r.status} ${(await r.text()).slice(0, 200)}`);
    await waitStatus(m.ids.webhook, "COMPLETED");
  });
  await needSeed("do_while", "DO_WHILE: remaining iterations, keepLastN kept", async () => {
    for (let i = 0; i < 2; i++) {
      const t = await pollFor("du_task_loop", m.ids.loop, 20_000);
      await report(t, "COMPLETED", { i: i + 3 });
    }
    const w = await waitStatus(m.ids.loop, "COMPLETED");
    const bodies = w.tasks.filter((t) => t.referenceTaskName.startsWith("body"));
    return `iteration ${w.tasks[0].iteration}, ${bodies.length} body tasks kept`;
  });
  await needSeed("fork half", "FORK/JOIN: other branch completed, JOIN done", async () => {
    const t = await pollFor("du_task_right", m.ids.fork, 20_000);
    await report(t, "COMPLETED", { side: "right" });
    const w = await waitStatus(m.ids.fork, "COMPLETED");
    return JSON.stringify(w.tasks.find((t) => t.referenceTaskName === "join")?.outputData);
  });
  await needSeed("sub workflow", "SUB_WORKFLOW: the parent shows its old child's id; child completed, parent follows", async () => {
    const shown = (await wf(m.ids.parent)).tasks[0]?.subWorkflowId;
    if (shown !== m.ids.child) throw new Error(`the parent's task shows subWorkflowId ${shown}, not ${m.ids.child}`);
    const t = await pollFor("du_task_child", m.ids.child, 20_000);
    await report(t, "COMPLETED", { child: true });
    await waitStatus(m.ids.child, "COMPLETED");
    await waitStatus(m.ids.parent, "COMPLETED");
  });
  await needSeed("paused", "PAUSED: still paused, resumes and completes", async () => {
    const w = await wf(m.ids.paused);
    if (w.status !== "PAUSED") throw new Error(`status ${w.status}`);
    await ok("PUT", `/api/workflow/${m.ids.paused}/resume`);
    const t = await pollFor("du_task_a", m.ids.paused, 20_000);
    await report(t, "COMPLETED", {});
    await waitStatus(m.ids.paused, "COMPLETED");
  });
  await needSeed("retry pending", "retry delay pending: the retry becomes pollable, completes", async () => {
    const t = await pollFor("du_task_retry", m.ids.retry, 60_000);
    await report(t, "COMPLETED", {});
    await waitStatus(m.ids.retry, "COMPLETED");
  });
  await needSeed("rate-limited", "rate-limited task def: the polled one completes, the others follow", async () => {
    await report({ workflowInstanceId: m.ids.rlPolled, taskId: m.ids.rlPolledTask }, "COMPLETED", {});
    for (const id of m.ids.rl.filter((id) => id !== m.ids.rlPolled)) {
      const t = await until(async () => (await call("GET", `/api/tasks/poll/du_task_rl?workerid=du2`)).json, (t) => t && t.taskId, "rate-limited task", 30_000);
      await report(t, "COMPLETED", {});
    }
    for (const id of m.ids.rl) await waitStatus(id, "COMPLETED");
    const def = await ok("GET", "/api/metadata/taskdefs/du_task_rl");
    return `limits ${def.rateLimitPerFrequency}/${def.rateLimitFrequencyInSeconds}s conc ${def.concurrentExecLimit}`;
  });
  await need(["wrlFirst"], "workflow rate limit: the first completes, the waiting one starts and completes", async () => {
    await report({ workflowInstanceId: m.ids.wrlFirst, taskId: m.ids.wrlFirstTask }, "COMPLETED", {});
    await waitStatus(m.ids.wrlFirst, "COMPLETED");
    await report(await pollFor("du_task_wrl", m.ids.wrlSecond, 30_000), "COMPLETED", {});
    await waitStatus(m.ids.wrlSecond, "COMPLETED");
  });
  await need(["httpLimFirst"], "HTTP task limit: the first completes, the waiting call runs, completes", async () => {
    await ok("POST", `/api/tasks/${m.ids.httpLimFirst}/call/COMPLETED`, { by: "check" });
    await waitStatus(m.ids.httpLimFirst, "COMPLETED");
    await until(() => wf(m.ids.httpLimSecond), (w) => w.tasks[0]?.status === "IN_PROGRESS" && w.tasks[0]?.outputData?.response, "second call made", 30_000);
    await ok("POST", `/api/tasks/${m.ids.httpLimSecond}/call/COMPLETED`, { by: "check" });
    await waitStatus(m.ids.httpLimSecond, "COMPLETED");
  });
  await need(["msgsTask"], "stored workflow message taken after the task; old log line read", async () => {
    const log = await ok("GET", `/api/tasks/${m.ids.msgsTask}/log`);
    if (!Array.isArray(log) || log[0]?.log !== "old log line") throw new Error(`log ${JSON.stringify(log)}`);
    await report({ workflowInstanceId: m.ids.msgs, taskId: m.ids.msgsTask }, "COMPLETED", {});
    const w = await waitStatus(m.ids.msgs, "COMPLETED");
    const pulled = w.tasks.find((t) => t.referenceTaskName === "pull")?.outputData;
    if (JSON.stringify(pulled).indexOf("from old") < 0) throw new Error(`pulled ${JSON.stringify(pulled)}`);
  });
  await need(["tagged"], "tags and group read back; definition shows a timeoutPolicy", async () => {
    const tags = await ok("GET", "/api/metadata/workflow/du_simple/tags");
    const secretTags = await ok("GET", "/api/secrets/du_secret/tags");
    const group = await ok("GET", "/api/groups/du-group");
    const def = await ok("GET", "/api/metadata/workflow/du_simple");
    if (JSON.stringify(tags).indexOf("du") < 0 || JSON.stringify(secretTags).indexOf("du") < 0) throw new Error(`tags ${JSON.stringify([tags, secretTags])}`);
    // An addition's insert counts the tags held (the cap of 100) over the rows the old code wrote.
    await ok("POST", "/api/metadata/workflow/du_simple/tags", { key: "added", value: "new" });
    await ok("PUT", "/api/secrets/du_secret/tags", [{ key: "added", value: "new" }]);
    for (const [what, path] of [["definition", "/api/metadata/workflow/du_simple/tags"], ["secret", "/api/secrets/du_secret/tags"]]) {
      const keys = (await ok("GET", path)).map((tag) => tag.key).sort().join(",");
      if (keys !== "added,team") throw new Error(`the ${what}'s tags after an addition: ${keys}`);
    }
    return `group ${group.id ?? group.name}, timeoutPolicy ${def.timeoutPolicy}`;
  });
  await need(["sinkParked"], "kitchen sink parked under old code ends with the same output as the old run", async () => {
    await report(await pollFor("du_task_gate", m.ids.sinkParked), "COMPLETED", { kind: "a" });
    const w = await waitStatus(m.ids.sinkParked, "COMPLETED");
    // SWITCH outputs gained selectedCase (Conductor's) after the oldest revisions: not a deploy difference.
    const strip = (o) => JSON.stringify(o, (k, v) => (k === "selectedCase" ? undefined : v));
    const a = strip(m.sinkOutput), b = strip(w.output);
    if (a !== b) throw new Error(`old ${a}\n     new ${b}`);
    return b.slice(0, 160);
  });
  if (existsSync(`${state}.kill.json`)) {
    const k = JSON.parse(readFileSync(`${state}.kill.json`, "utf8"));
    await step("abrupt kill: executions started just before it GET, finish, and search shows them", async () => {
      // In whatever order the queue hands them out: an execution whose push the kill cut off queues its task again as
      // it wakes under the new code, after others started later (pollFor, which wants one execution's, would call the
      // others strays and leave them polled).
      const owed = new Set(k.kill);
      await until(
        async () => {
          const t = (await call("GET", "/api/tasks/poll/du_task_kill?workerid=du")).json;
          if (t?.taskId && !owed.delete(t.workflowInstanceId)) record(false, `stray du_task_kill task of ${t.workflowInstanceId} (not one the kill left)`);
          if (t?.taskId) await report(t, "COMPLETED", {});
          return owed.size;
        },
        (left) => left === 0,
        "a du_task_kill task of each execution the kill left",
        40_000,
      ).catch(async (error) => {
        throw new Error(`${error.message}; not polled: ${JSON.stringify(await Promise.all([...owed].map(async (id) => (await wf(id)).tasks.map((t) => [id, t.referenceTaskName, t.status]))))}`);
      });
      for (const id of [...k.noop, ...k.kill]) await waitStatus(id, "COMPLETED", 20_000);
      if (k.slow) {
        const w = await until(() => wf(k.slow), (w) => !["RUNNING"].includes(w.status), "the killed HTTP call's execution to end", 90_000);
        if (w.status !== "COMPLETED") throw new Error(`slow HTTP execution ${w.status}: ${JSON.stringify(w.tasks.map((t) => [t.status, t.reasonForIncompletion]))}`);
        k.noop.push(k.slow);
      }
      await until(
        async () => {
          const r = await ok("GET", `/api/workflow/search?size=100&query=${encodeURIComponent("workflowType IN (du_kill,du_noop,du_http_slow)")}`);
          const byId = Object.fromEntries(r.results.map((x) => [x.workflowId, x.status]));
          return [...k.noop, ...k.kill].filter((id) => byId[id] !== "COMPLETED").map((id) => `${id}:${byId[id]}`);
        },
        (wrong) => wrong.length === 0,
        "search rows of the killed executions",
        30_000,
      );
    });
  }
  await needSeed("unknown task ref", "unknown task ref (stored by the old code): parked one finishes; it starts, starts as a child, upgrades, restarts and reruns", async () => {
    const finish = async (id, v) => {
      await report(await pollFor("du_task_uref", id, 20_000), "COMPLETED", { v });
      const w = await waitStatus(id, "COMPLETED");
      if (w.output?.gate !== v || (w.output?.missing ?? null) !== null) throw new Error(`${id} output ${JSON.stringify(w.output)}`);
      return w;
    };
    const def = await ok("GET", "/api/metadata/workflow/du_uref?version=1");
    if (JSON.stringify(def).indexOf("nosuch") < 0) throw new Error(`stored definition ${JSON.stringify(def).slice(0, 200)}`);
    // Upgraded before any poll: the old queue hands out the two parked runs' tasks in an order of its own.
    await ok("POST", `/api/workflow/${m.ids.urefToUpgrade}/upgrade`, { name: "du_uref", version: 2 });
    const owed = new Set([m.ids.urefParked, m.ids.urefToUpgrade]);
    await until(
      async () => {
        const t = (await call("GET", "/api/tasks/poll/du_task_uref?workerid=du")).json;
        if (t?.taskId && !owed.delete(t.workflowInstanceId)) record(false, `stray du_task_uref task of ${t.workflowInstanceId}`);
        if (t?.taskId) await report(t, "COMPLETED", { v: "parked" });
        return owed.size;
      },
      (left) => left === 0,
      "the gate tasks of the two parked runs",
      20_000,
    );
    for (const id of [m.ids.urefParked, m.ids.urefToUpgrade]) {
      const w = await waitStatus(id, "COMPLETED");
      if (w.output?.gate !== "parked" || (w.output?.missing ?? null) !== null) throw new Error(`${id} output ${JSON.stringify(w.output)}`);
    }
    const upgraded = await wf(m.ids.urefToUpgrade);
    if (upgraded.workflowVersion !== 2 || upgraded.output.version !== 2) throw new Error(`upgraded to ${upgraded.workflowVersion}, output ${JSON.stringify(upgraded.output)}`);
    await finish(await start("du_uref", { n: "new" }, { version: 1 }), "new");
    const latest = await finish(await start("du_uref", { n: "latest" }), "latest");
    if (latest.output.version !== 2) throw new Error(`latest ran version ${latest.output.version}`);
    // A parent registered by the new code (valid itself) whose child is the stored definition.
    await ok("POST", "/api/metadata/workflow", { name: "du_uref_parent", version: 1, tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "du_uref", version: 1 } }] });
    const parent = await start("du_uref_parent");
    const child = (await until(() => wf(parent), (w) => w.tasks[0]?.subWorkflowId, "child started")).tasks[0].subWorkflowId;
    await finish(child, "child");
    await waitStatus(parent, "COMPLETED");
    if (m.done?.["register du_uref_inline"]) {
      const holder = await start("du_uref_inline");
      const inlineChild = (await until(() => wf(holder), (w) => w.tasks[0]?.subWorkflowId, "inline child started")).tasks[0].subWorkflowId;
      await finish(inlineChild, "inline child");
      await waitStatus(holder, "COMPLETED");
    }
    await ok("POST", `/api/workflow/${m.finished.urefTerminated}/restart?useLatestDefinitions=true`);
    await finish(m.finished.urefTerminated, "restarted");
    await ok("POST", `/api/workflow/${m.finished.urefCompleted}/rerun`, { reRunFromWorkflowId: m.finished.urefCompleted });
    await finish(m.finished.urefCompleted, "rerun");
    // Saved again as read, the stored definition is refused now (a clear 400 naming the read), and left as it was.
    const again = await call("PUT", "/api/metadata/workflow", [def]);
    if (again.status !== 400 || again.text.indexOf("nosuch") < 0) throw new Error(`saved again: ${again.status} ${again.text.slice(0, 200)}`);
    if (JSON.stringify(await ok("GET", "/api/metadata/workflow/du_uref?version=1")) !== JSON.stringify(def)) throw new Error("the refused save changed the stored definition");
    return `refused save: ${again.text.slice(0, 160)}`;
  });
  await needSeed("webhook with a header value ending", "webhook whose header value ends in a space (old): reads, saves back as read (*** kept), then saved with the value fixed, an event completes its task", async () => {
    const hook = await ok("GET", `/api/metadata/webhook/${m.webhookSpaceId}`);
    if (JSON.stringify(hook).indexOf("tok-space") >= 0) throw new Error(`the secret shown: ${JSON.stringify(hook.headers)}`);
    await ok("PUT", `/api/metadata/webhook/${m.webhookSpaceId}`, hook);
    const fixed = await call("PUT", `/api/metadata/webhook/${m.webhookSpaceId}`, { ...hook, headers: { "X-Du-Token": "tok-space" } });
    if (fixed.status !== 200) throw new Error(`saved with the value fixed: ${fixed.status} ${fixed.text.slice(0, 200)}`);
    await until(
      async () => (await fetch(`${API}/webhook/${m.webhookSpaceId}`, { method: "POST", headers: { "content-type": "application/json", "X-Du-Token": "tok-space" }, body: JSON.stringify({ orderId: "o-space" }) })).status,
      (status) => status < 300,
      "the event taken",
      10_000,
    );
    await waitStatus(m.ids.webhookSpace, "COMPLETED");
  });
  await needSeed("wait duration", "WAIT with a duration: the timer fires", async () => {
    await waitStatus(m.ids.waitDuration, "COMPLETED", 60_000);
  });
  await needSeed("schedule every", "schedule fires under the new code", async () => {
    const count = async () => (await ok("GET", `/api/workflow/search?size=1&query=${encodeURIComponent("workflowType IN (du_noop)")}`)).totalHits;
    const before = await count();
    await until(count, (n) => n > before, "a scheduled start after the deploy", 30_000);
    const s = await ok("GET", "/api/scheduler/schedules/du-sched");
    return `paused=${s.paused}`;
  });
  await needSeed("event handler", "event handler (old) starts a workflow", async () => {
    const id = await start("du_event", { marker: "new-event" });
    await waitStatus(id, "COMPLETED");
    await until(async () => (await ok("GET", `/api/workflow/search?size=10&query=${encodeURIComponent("correlationId = 'new-event'")}`)).totalHits, (n) => n >= 1, "handler-started workflow", 20_000);
  });
  await needSeed("finished executions", "finished: GET, retry the failed, rerun the completed, restart the terminated", async () => {
    for (const id of Object.values(m.finished)) await wf(id);
    await ok("POST", `/api/workflow/${m.finished.failed}/retry`);
    const t = await pollFor("du_task_fail", m.finished.failed, 20_000);
    await report(t, "COMPLETED", {});
    await waitStatus(m.finished.failed, "COMPLETED");
    await ok("POST", `/api/workflow/${m.finished.completed}/rerun`, { reRunFromWorkflowId: m.finished.completed, workflowInput: { marker: "rerun" } });
    await waitStatus(m.finished.completed, "COMPLETED");
    await ok("POST", `/api/workflow/${m.finished.terminated}/restart`);
    await ok("POST", `/api/tasks/${m.finished.terminated}/COMPLETED/signal`, {});
    await waitStatus(m.finished.terminated, "COMPLETED");
  });
  await needSeed("task output cache", "task output cache: outputs cached in plain (before 0041, or by the old code over it) are misses, then a hit once cached sealed", async () => {
    const run = async (k) => (await waitStatus(await start("du_cached", { k }), "COMPLETED")).tasks[0].outputData;
    const calls = () => seen.filter((hit) => hit.url === "/cached").length;
    if (m.oldSealsOutputs === true) {
      // The old code had 0041 and sealed what it cached (before the kill and over the migrated schema): hits at once.
      for (const k of ["old", "smoke"]) {
        const before = calls();
        const output = await run(k);
        if (output._cachedResponse !== true || calls() !== before) throw new Error(`key ${k}: a miss (${calls() - before} calls) on an output the old code cached sealed`);
      }
      return "the old code sealed its outputs (0041 was its): hits";
    }
    for (const k of ["old", "smoke"]) {
      const before = calls();
      const output = await run(k);
      if (output._cachedResponse === true || calls() !== before + 1) throw new Error(`key ${k}: a hit (${calls() - before} calls) on an output cached in plain`);
    }
    // Cached as the task completed, by a job of its own: found once D1 has it.
    const hit = await until(() => run("old"), (output) => output._cachedResponse === true, "a hit on the output cached under the new code", 15_000);
    return JSON.stringify(hit).slice(0, 120);
  });
  await step("search rows follow (every seeded execution COMPLETED in search)", async () => {
    await until(
      async () => {
        const r = await ok("GET", `/api/workflow/search?size=500&query=${encodeURIComponent("workflowType IN (du_simple,du_cb,du_failing,du_sink,du_wrl,du_http_lim,du_msgs,du_wait_duration,du_wait_signal,du_human,du_webhook,du_loop,du_fork,du_parent,du_child,du_retry,du_rl,du_noop,du_event,du_cached,du_uref)")}`);
        const byId = Object.fromEntries(r.results.map((x) => [x.workflowId, x.status]));
        return allIds.filter((id) => byId[id] !== "COMPLETED").map((id) => `${id}:${byId[id]}`);
      },
      (wrong) => wrong.length === 0,
      "search rows COMPLETED",
      20_000,
    );
  });
  await step("task search finds old tasks", async () => {
    const r = await ok("GET", `/api/tasks/search?size=200&query=${encodeURIComponent("taskType IN (du_task_a)")}`);
    return `${r.totalHits} du_task_a tasks`;
  });
  await step("queues empty", async () => {
    const sizes = await ok("GET", "/api/tasks/queue/sizes?taskType=du_task_a&taskType=du_task_cb&taskType=du_task_fail&taskType=du_task_loop&taskType=du_task_left&taskType=du_task_right&taskType=du_task_child&taskType=du_task_retry&taskType=du_task_rl&taskType=du_task_wrl&taskType=du_task_msg&taskType=du_task_gate&taskType=du_task_kill&taskType=du_task_uref");
    if (Object.values(sizes).some((n) => n !== 0)) throw new Error(JSON.stringify(sizes));
  });
  await needSeed("schedule every", "pause the schedule", () => ok("PUT", "/api/scheduler/schedules/du-sched/pause"));
}

// ---- main
const server = startServer();
let code = 1;
try {
  await until(
    async () => {
      if (server.child.exitCode !== null) throw new Error(`server exited:\n${server.output().slice(-3000)}`);
      try {
        return (await fetch(`${API}/health`)).status;
      } catch {
        return 0;
      }
    },
    (s) => s === 200,
    "health",
    180_000,
  );
  adminKey = readFileSync(VARS, "utf8").match(/^BOOTSTRAP_ADMIN_KEY=(.*)$/m)[1].trim().replace(/^"|"$/g, "");
  console.log(`server up (${root}), phase ${phase}`);
  if (phase === "seed") await seed();
  else if (phase === "kill") await kill();
  else if (phase === "old-over-new") await oldOverNew();
  else await check();
  code = results.some((r) => !r.ok) || serverErrors.length ? 1 : 0;
} catch (error) {
  console.error(error);
} finally {
  const logFile = `${state}.${phase}.log`;
  writeFileSync(logFile, server.output());
  if (phase === "kill") {
    try {
      process.kill(-server.child.pid, "SIGKILL");
    } catch {}
  }
  await stopServer(server);
  target.close();
  console.log(`\n${results.filter((r) => r.ok).length}/${results.length} steps ok; ${serverErrors.length} 5xx; server log ${logFile}`);
  for (const e of serverErrors) console.log(`  5xx: ${e}`);
  process.exit(code);
}
