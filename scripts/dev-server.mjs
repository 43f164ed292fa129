#!/usr/bin/env node
// @ts-check
/**
 * wrangler's local dev server without its devtools inspector: what `npm start` serves the API with (and what the
 * benchmark and the end-to-end tests run).
 *
 * The `wrangler dev` CLI always connects a devtools inspector to the Worker and enables its Network domain: every
 * outbound `fetch` (each HTTP task's call) then raises four inspector events, each relayed through wrangler's
 * InspectorProxyWorker to its Node process over loopback HTTP and appended to wrangler's debug log file. That costs
 * more CPU than the engine itself (BENCHMARKS.md, "wrangler dev's inspector"), and it piles up: the proxy keeps every
 * event in memory until a DevTools window attaches, and the log is never trimmed (about 65 MB of memory and 6 MB of
 * ~/.config/.wrangler/logs per 1,000 three-step workflows, measured). The CLI has no switch for it; wrangler's own dev
 * server API has (`unstable_startWorker` with `dev.inspector: false`), with everything else the same: the same
 * workerd, local D1, Durable Objects, assets and Worker console output.
 *
 * Nor does it print a line per request unless `--log-requests` asks: Miniflare's request log sends each line from
 * workerd to wrangler's Node process over loopback HTTP, a cost on every request, and polling task workers flood the
 * terminal with it. wrangler's dev server API has no switch for it, so this script hands wrangler a Miniflare that
 * sets `logRequests` (see {@link quietRequestLog}).
 *
 * When a workerd it runs stops without being asked to (killed, out of memory, crashed), wrangler notices nothing and
 * every request would hang: this script says so and starts the server again, on the same port with the same state
 * (a Durable Object's storage is on disk; what it was doing resumes from its alarms). It gives up, exit code 1, when
 * that happens three times within a minute. It learns of those processes by wrapping `child_process.spawn`, which
 * Miniflare calls to start each one: no polling, nothing sent to the server.
 *
 * Usage (from the project directory):
 *   node scripts/dev-server.mjs --port <port> [--ip <ip>] [--persist-to <dir>] [--env-file <file>]
 *                               [--var NAME:value]... [--log-level <level>] [--log-requests] [--no-watch]
 * Prints `ready <url>` on stderr once listening; stops on SIGTERM, SIGINT and SIGHUP (exit code 0).
 */
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const USAGE =
  "usage: node scripts/dev-server.mjs --port <port> [--ip <ip>] [--persist-to <dir>] [--env-file <file>] [--var NAME:value]... [--log-level <level>] [--log-requests] [--no-watch]";
const LOG_LEVELS = new Set(["debug", "info", "log", "warn", "error", "none"]);

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    ip: { type: "string", default: "127.0.0.1" },
    "persist-to": { type: "string" },
    "env-file": { type: "string" },
    var: { type: "string", multiple: true, default: [] },
    "log-level": { type: "string", default: "info" },
    "log-requests": { type: "boolean", default: false },
    "no-watch": { type: "boolean", default: false },
  },
  strict: true,
});
const port = Number(values.port);
const logLevel = values["log-level"] ?? "info";
if (!Number.isInteger(port) || port < 1 || port > 65535 || !LOG_LEVELS.has(logLevel)) {
  console.error(USAGE);
  process.exit(2);
}

/** @type {Record<string, { type: "plain_text", value: string }>} */
const bindings = {};
for (const pair of values.var ?? []) {
  const separator = pair.indexOf(":");
  if (separator <= 0) {
    console.error(`--var expects NAME:value, got ${pair.slice(0, 40)}`);
    process.exit(2);
  }
  bindings[pair.slice(0, separator)] = { type: "plain_text", value: pair.slice(separator + 1) };
}

quietRequestLog(values["log-requests"] ?? false);
// Loaded after quietRequestLog: wrangler takes its Miniflare from the module cache as it loads.
const { unstable_startWorker } = await import("wrangler");

/** The options of every start: the first, and each after a runtime was lost. */
const startOptions = {
  config: join(ROOT, "wrangler.toml"),
  bindings,
  // As the CLI's --env-file: this file instead of .dev.vars.
  ...(values["env-file"] === undefined ? {} : { envFiles: [resolve(values["env-file"])] }),
  dev: {
    server: { hostname: values.ip, port },
    inspector: /** @type {const} */ (false),
    // The CLI's default state directory, so switching between the two keeps the same data.
    persist: resolve(values["persist-to"] ?? join(ROOT, ".wrangler", "state")),
    logLevel: /** @type {"debug" | "info" | "log" | "warn" | "error" | "none"} */ (logLevel),
    watch: !values["no-watch"],
  },
};

/** Lost runtimes tolerated within {@link LOSS_WINDOW_MS} before giving up: a workerd that dies as it starts would loop. */
const MAX_LOSSES = 3;
const LOSS_WINDOW_MS = 60_000;
/** @type {number[]} when runtimes were lost, most recent last */
const losses = [];

let stopping = false;
let restarting = false;
/** Whether the server has answered ready: a workerd that fails to start is wrangler's to report, not a loss. */
let serving = false;

watchRuntimes((pid, how) => {
  if (stopping || !serving) return;
  console.error(`[dev-server] the local runtime (workerd, pid ${pid}) stopped unexpectedly (${how}); requests would hang, so the server starts again (the state in ${startOptions.dev.persist} is kept)`);
  void restart();
});

let worker = await unstable_startWorker(startOptions);
await announce();

for (const signal of /** @type {const} */ (["SIGTERM", "SIGINT", "SIGHUP"])) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    worker.dispose().finally(() => process.exit(0));
  });
}

/** Waits for the server and prints `ready <url>`. */
async function announce() {
  await worker.ready;
  serving = true;
  console.error(`ready ${String(await worker.url)}`);
}

/** Starts the server again after a runtime was lost (once at a time), or gives up after too many losses. */
async function restart() {
  const now = Date.now();
  losses.push(now);
  while (losses.length > 0 && losses[0] < now - LOSS_WINDOW_MS) losses.shift();
  if (restarting) return;
  restarting = true;
  serving = false;
  await worker.dispose().catch(() => {});
  if (losses.length >= MAX_LOSSES) {
    console.error(`[dev-server] the local runtime stopped ${losses.length} times within a minute; giving up`);
    process.exit(1);
  }
  if (stopping) return;
  try {
    worker = await unstable_startWorker(startOptions);
    await announce();
  } catch (error) {
    console.error(`[dev-server] the server could not be started again: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  restarting = false;
}

/**
 * Makes the Miniflare of wrangler's dev proxy, which receives every request and logs it, log requests only when
 * `logRequests` says so (the Worker's own Miniflare never does: wrangler turns it off there, or each request would be
 * logged twice). wrangler builds both with `new miniflare.Miniflare(options)` and changes them with `setOptions`,
 * reading `Miniflare` from the module it required, so the module's cached exports get a subclass before wrangler is
 * loaded; the Worker's options are the ones carrying `unsafeProxySharedSecret` (what the proxy proves itself with).
 * wrangler 4.86.0 is pinned; the e2e tests (test/e2e/start-script.test.ts) show the lines printed only when asked.
 * @param {boolean} logRequests
 */
function quietRequestLog(logRequests) {
  // The miniflare wrangler itself requires: resolved from wrangler's own file, whatever the node_modules layout.
  const require = createRequire(createRequire(import.meta.url).resolve("wrangler"));
  const path = require.resolve("miniflare");
  /** @type {typeof import("miniflare")} */
  const miniflare = require("miniflare");
  /** @param {import("miniflare").MiniflareOptions} options */
  const adjusted = (options) => (options.unsafeProxySharedSecret === undefined ? { ...options, logRequests } : options);
  class QuietMiniflare extends miniflare.Miniflare {
    /** @param {import("miniflare").MiniflareOptions} options */
    constructor(options) {
      super(adjusted(options));
    }
    /** @param {import("miniflare").MiniflareOptions} options */
    setOptions(options) {
      return super.setOptions(adjusted(options));
    }
  }
  const cached = require.cache[path];
  if (cached === undefined) throw new Error(`miniflare is not in the module cache under ${path}`);
  cached.exports = { ...miniflare, Miniflare: QuietMiniflare };
}

/**
 * Calls `lost(pid, how)` when a workerd process stops without having been told to. Miniflare starts each one with
 * `child_process.spawn` (looked up on the module at each call) and stops it with its `kill`; a stop that did not come
 * through `kill` is a loss.
 * @param {(pid: number | undefined, how: string) => void} lost
 */
function watchRuntimes(lost) {
  /** @type {typeof import("node:child_process")} */
  const childProcess = createRequire(import.meta.url)("node:child_process");
  const spawnProcess = childProcess.spawn;
  /** @type {(...args: Parameters<typeof spawnProcess>) => ReturnType<typeof spawnProcess>} */
  const spawnWatched = function (...args) {
    const child = /** @type {import("node:child_process").ChildProcess} */ (Reflect.apply(spawnProcess, childProcess, args));
    const command = args[0];
    if (typeof command !== "string" || !/^workerd(\.exe)?$/.test(basename(command))) return child;
    let told = false;
    const kill = child.kill.bind(child);
    child.kill = (signal) => {
      told = true;
      return kill(signal);
    };
    child.once("exit", (code, signal) => {
      if (!told) lost(child.pid, signal === null ? `exit code ${code}` : signal);
    });
    return child;
  };
  childProcess.spawn = /** @type {typeof spawnProcess} */ (spawnWatched);
}
