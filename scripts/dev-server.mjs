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
 * workerd, local D1, Durable Objects, assets, proxy Worker, request log and Worker console output.
 *
 * Usage (from the project directory):
 *   node scripts/dev-server.mjs --port <port> [--ip <ip>] [--persist-to <dir>] [--env-file <file>]
 *                               [--var NAME:value]... [--log-level <level>] [--no-watch]
 * Prints `ready <url>` on stderr once listening; stops on SIGTERM, SIGINT and SIGHUP (exit code 0).
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { unstable_startWorker } from "wrangler";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const USAGE =
  "usage: node scripts/dev-server.mjs --port <port> [--ip <ip>] [--persist-to <dir>] [--env-file <file>] [--var NAME:value]... [--log-level <level>] [--no-watch]";
const LOG_LEVELS = new Set(["debug", "info", "log", "warn", "error", "none"]);

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    ip: { type: "string", default: "127.0.0.1" },
    "persist-to": { type: "string" },
    "env-file": { type: "string" },
    var: { type: "string", multiple: true, default: [] },
    "log-level": { type: "string", default: "info" },
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

const worker = await unstable_startWorker({
  config: join(ROOT, "wrangler.toml"),
  bindings,
  // As the CLI's --env-file: this file instead of .dev.vars.
  ...(values["env-file"] === undefined ? {} : { envFiles: [resolve(values["env-file"])] }),
  dev: {
    server: { hostname: values.ip, port },
    inspector: false,
    // The CLI's default state directory, so switching between the two keeps the same data.
    persist: resolve(values["persist-to"] ?? join(ROOT, ".wrangler", "state")),
    logLevel: /** @type {"debug" | "info" | "log" | "warn" | "error" | "none"} */ (logLevel),
    watch: !values["no-watch"],
  },
});
await worker.ready;
console.error(`ready ${String(await worker.url)}`);

let stopping = false;
for (const signal of /** @type {const} */ (["SIGTERM", "SIGINT", "SIGHUP"])) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    worker.dispose().finally(() => process.exit(0));
  });
}
