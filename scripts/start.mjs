#!/usr/bin/env node
// @ts-check
/**
 * `npm start`: serves the API locally with wrangler's dev server, the way docs/api-contract.md ("Running locally") says.
 *
 *  1. applies the local D1 migrations (non-interactive, offline);
 *  2. makes sure the dev-vars file holds `BOOTSTRAP_ADMIN_KEY=<keyId>:<keySecret>`, generating one when missing;
 *  3. runs wrangler's dev server on `PORT` (default 8787) and `HOST` (default 127.0.0.1), state under
 *     `.wrangler/state`: without its devtools inspector (scripts/dev-server.mjs says why), or, with `--inspect`
 *     (`npm run dev`), the `wrangler dev` CLI with it, for debugging the Worker itself;
 *  4. once `GET /health` answers, prints the URL, the admin key and a ready-to-paste curl command.
 *
 * SIGINT/SIGTERM/SIGHUP are forwarded to the dev server; the script exits with its exit code.
 * The key is printed only in that banner, never in any other message.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { constants } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const DEV_SERVER = join(ROOT, "scripts", "dev-server.mjs");
const KEY_VAR = "BOOTSTRAP_ADMIN_KEY";
const HEALTH_TIMEOUT_MS = 120_000;
/** Marks the banner so tooling (and the e2e test) can find it. */
export const BANNER_START = "==== edge-conductor is running ====";
export const BANNER_END = "===================================";

const HELP = `Usage: npm start [-- options]      (or: node scripts/start.mjs [options])

Applies the local D1 migrations, makes sure an admin API key exists, and serves the API with wrangler's
dev server (the same workerd, local D1 and Durable Objects as \`wrangler dev\`, without its devtools inspector).

Options:
  --persist-to <dir>   where wrangler keeps local D1 and Durable Object state (default: .wrangler/state)
  --dev-vars <file>    file holding BOOTSTRAP_ADMIN_KEY=<keyId>:<keySecret> (default: .dev.vars);
                       the key is generated and appended when the file has none
  --log-requests       print a line for every request (method, path, status, time); off by default: it
                       costs time on every request, and polling task workers would flood the terminal
  --inspect            run the \`wrangler dev\` CLI instead, with its devtools inspector, to debug the Worker
                       (npm run dev); it relays every outbound request to the inspector: slower, and its
                       memory and wrangler's log in ~/.config/.wrangler/logs grow with each one
  -h, --help           show this help

Environment:
  PORT                 port to listen on (default: 8787)
  HOST                 address to listen on (default: 127.0.0.1)
`;

/**
 * @typedef {object} Options
 * @property {number} port
 * @property {string} host
 * @property {string | undefined} persistTo absolute path, or undefined for wrangler's default
 * @property {string} devVars absolute path of the dev-vars file
 * @property {boolean} customDevVars whether --dev-vars was given
 * @property {boolean} inspect whether to run the `wrangler dev` CLI with its devtools inspector
 * @property {boolean} logRequests whether to print a line for every request (the CLI always does)
 * @property {boolean} help
 */

/**
 * Reads the command line and the environment.
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 * @returns {Options}
 */
export function parseOptions(argv, env) {
  const { values } = parseArgs({
    args: argv,
    options: {
      "persist-to": { type: "string" },
      "dev-vars": { type: "string" },
      inspect: { type: "boolean" },
      "log-requests": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  const port = Number(env.PORT || 8787);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`PORT must be an integer from 1 to 65535, got "${env.PORT}"`);
  return {
    port,
    host: env.HOST || "127.0.0.1",
    persistTo: values["persist-to"] === undefined ? undefined : resolve(values["persist-to"]),
    devVars: resolve(values["dev-vars"] ?? join(ROOT, ".dev.vars")),
    customDevVars: values["dev-vars"] !== undefined,
    inspect: values.inspect ?? false,
    logRequests: values["log-requests"] ?? false,
    help: values.help ?? false,
  };
}

/**
 * The environment wrangler runs with: no prompts, no telemetry, no Request.cf download.
 * @param {Record<string, string>} [extra]
 * @returns {NodeJS.ProcessEnv}
 */
function wranglerEnv(extra = {}) {
  return { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", ...extra };
}

/**
 * Runs wrangler with the given arguments, its output going to ours.
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @returns {import("node:child_process").ChildProcess}
 */
function spawnWrangler(args, env) {
  return spawnNode([WRANGLER, ...args], env);
}

/**
 * Runs a Node script of the project's with the given arguments, its output going to ours.
 * @param {string[]} args the script and its arguments
 * @param {NodeJS.ProcessEnv} env
 * @returns {import("node:child_process").ChildProcess}
 */
function spawnNode(args, env) {
  return spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "inherit", "inherit"] });
}

/**
 * Starts the dev server: scripts/dev-server.mjs, or with `--inspect` the `wrangler dev` CLI. Both read .dev.vars by
 * themselves; another file is passed as an env file (which then replaces .dev.vars).
 * @param {Options} options
 * @returns {import("node:child_process").ChildProcess}
 */
function spawnDevServer(options) {
  const args = ["--port", String(options.port), "--ip", options.host];
  if (options.persistTo) args.push("--persist-to", options.persistTo);
  if (options.customDevVars) args.push("--env-file", options.devVars);
  if (options.inspect) return spawnWrangler(["dev", ...args, "--show-interactive-dev-session=false"], wranglerEnv());
  return spawnNode([DEV_SERVER, ...args, ...(options.logRequests ? ["--log-requests"] : [])], wranglerEnv());
}

/**
 * Resolves with the exit code of a child process (128 + signal number when killed by a signal).
 * @param {import("node:child_process").ChildProcess} child
 * @returns {Promise<number>}
 */
function exitCode(child) {
  return new Promise((done) => {
    child.once("error", (error) => {
      console.error(`[start] could not run wrangler: ${error.message}`);
      done(1);
    });
    child.once("exit", (code, signal) => done(code ?? 128 + (signal ? constants.signals[signal] ?? 0 : 0)));
  });
}

/**
 * `wrangler d1 migrations apply DB --local`, never prompting (CI=true answers the confirmation). Its output is kept
 * back and summed up in a line: without a terminal wrangler prints its table of migrations again after each one it
 * applies (some 2,300 lines on a first start). Printed whole when it fails.
 * @param {string | undefined} persistTo
 * @returns {Promise<number>}
 */
async function applyMigrations(persistTo) {
  const args = ["d1", "migrations", "apply", "DB", "--local", ...(persistTo ? ["--persist-to", persistTo] : [])];
  const child = spawn(process.execPath, [WRANGLER, ...args], { cwd: ROOT, env: wranglerEnv({ CI: "true" }), stdio: ["ignore", "pipe", "pipe"] });
  /** @type {Buffer[]} */
  const output = [];
  child.stdout?.on("data", (chunk) => output.push(chunk));
  child.stderr?.on("data", (chunk) => output.push(chunk));
  const code = await new Promise((done) => {
    child.once("error", (error) => {
      console.error(`[start] could not run wrangler: ${error.message}`);
      done(1);
    });
    // "close", not "exit": the output is whole only once its pipes are.
    child.once("close", (exit, signal) => done(exit ?? 128 + (signal ? constants.signals[signal] ?? 0 : 0)));
  });
  const text = Buffer.concat(output).toString("utf8");
  if (code === 0) console.log(`[start] ${migrationsSummary(text)}`);
  else process.stderr.write(text);
  return code;
}

/**
 * One line saying what `wrangler d1 migrations apply` did, from its output.
 * @param {string} output
 * @returns {string}
 */
export function migrationsSummary(output) {
  if (output.includes("No migrations to apply")) return "the local database is up to date";
  const applied = new Set([...output.matchAll(/^│\s*(\S+\.sql)\s*│\s*✅/gmu)].map((match) => match[1]));
  return applied.size > 0 ? `applied ${applied.size} migration${applied.size === 1 ? "" : "s"} to the local database` : "applied the migrations to the local database";
}

/**
 * Finds `BOOTSTRAP_ADMIN_KEY` in dotenv text. Returns undefined when absent, null when present but malformed.
 * @param {string} text
 * @returns {string | null | undefined}
 */
export function findAdminKey(text) {
  let found;
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?BOOTSTRAP_ADMIN_KEY\s*=\s*(.*?)\s*$/.exec(line);
    if (!match) continue;
    const raw = match[1] ?? "";
    const value = /^(["'`])(.*)\1$/.exec(raw)?.[2] ?? raw.replace(/\s+#.*$/, "");
    found = /^[^:\s]+:\S+$/.test(value) ? value : null;
  }
  return found;
}

/** @returns {string} a fresh `<keyId>:<keySecret>` */
export function generateAdminKey() {
  return `admin-${randomBytes(4).toString("hex")}:${randomBytes(32).toString("base64url")}`;
}

/**
 * Returns the admin key from the dev-vars file, appending a generated one (file mode 0600) when it has none.
 * @param {string} path
 * @returns {{ key: string, created: boolean }}
 */
export function ensureAdminKey(path) {
  const text = existsSync(path) ? readFileSync(path, "utf8") : "";
  const existing = findAdminKey(text);
  if (existing === null) throw new Error(`${path} has a ${KEY_VAR} line that is not <keyId>:<keySecret>; fix or remove it`);
  if (existing !== undefined) {
    ensureEncryptionKey(path);
    return { key: existing, created: false };
  }
  const key = generateAdminKey();
  const separator = text === "" || text.endsWith("\n") ? "" : "\n";
  writeFileSync(path, `${text}${separator}${KEY_VAR}=${key}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  ensureEncryptionKey(path);
  return { key, created: true };
}

/** The var holding the AES-256-GCM key of the secrets store. */
const ENCRYPTION_KEY_VAR = "SECRETS_ENCRYPTION_KEY";

/**
 * Makes sure the dev-vars file has a secrets encryption key (base64 of 32 random bytes), so
 * `PUT /api/secrets/…` works locally out of the box. Never printed: losing it loses the secrets.
 * @param {string} path
 */
export function ensureEncryptionKey(path) {
  ensureDevVar(path, ENCRYPTION_KEY_VAR, () => randomBytes(32).toString("base64"));
}

/**
 * Makes sure the dev-vars file lets HTTP tasks call services on this machine (`EGRESS_ALLOW_PRIVATE=true`):
 * locally, the services a workflow calls usually run on localhost. Deployed Workers keep the default (off).
 * @param {string} path
 */
export function ensureLocalEgress(path) {
  ensureDevVar(path, "EGRESS_ALLOW_PRIVATE", () => "true");
}

/**
 * Appends `NAME=value` to the dev-vars file (mode 0600) unless it already sets NAME; an existing value wins.
 * @param {string} path
 * @param {string} name
 * @param {() => string} value
 */
function ensureDevVar(path, name, value) {
  const text = existsSync(path) ? readFileSync(path, "utf8") : "";
  if (new RegExp(`^\\s*${name}\\s*=`, "m").test(text)) return;
  const separator = text === "" || text.endsWith("\n") ? "" : "\n";
  writeFileSync(path, `${text}${separator}${name}=${value()}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/**
 * Fails early when something already listens on the port, so the banner never describes another server.
 * @param {number} port
 * @param {string} host
 * @returns {Promise<boolean>}
 */
function portIsFree(port, host) {
  return new Promise((done) => {
    const server = createServer();
    server.once("error", () => done(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => done(true)));
  });
}

/**
 * The first free port of the few above `port`, to suggest when `port` is taken (a newcomer need not know how to find one).
 * @param {number} port
 * @param {string} host
 * @returns {Promise<number | undefined>}
 */
async function nextFreePort(port, host) {
  for (let candidate = port + 1; candidate <= Math.min(port + 20, 65535); candidate++) {
    if (await portIsFree(candidate, host)) return candidate;
  }
  return undefined;
}

/**
 * The base URL a local client uses (a wildcard listen address is reached through loopback).
 * @param {string} host
 * @param {number} port
 */
export function baseUrl(host, port) {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * Polls `GET /health` until it answers 200, the child exits, or the time is up.
 * @param {string} url
 * @param {import("node:child_process").ChildProcess} child
 * @param {number} timeoutMs
 * @returns {Promise<boolean>}
 */
async function waitForHealth(url, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    try {
      const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((next) => setTimeout(next, 250));
  }
  return false;
}

/**
 * The only place the key is ever printed.
 * @param {{ url: string, key: string, created: boolean, devVars: string, persistTo: string | undefined }} info
 * @returns {string}
 */
export function banner({ url, key, created, devVars, persistTo }) {
  const shown = (/** @type {string} */ path) => (relative(ROOT, path).startsWith("..") ? path : relative(ROOT, path));
  return [
    "",
    BANNER_START,
    `  URL:        ${url}`,
    `  Web UI:     ${url}/  (log in with the admin key)`,
    `  Admin key:  ${key}`,
    `              (${created ? "generated and saved to" : "from"} ${shown(devVars)}; holds every permission)`,
    `  State:      ${persistTo ? shown(persistTo) : ".wrangler/state"}`,
    "",
    "  Try it:",
    `  curl -H "X-API-Key: ${key}" ${url}/api/metadata/workflow`,
    BANNER_END,
    "",
  ].join("\n");
}

/**
 * Forwards termination signals to the dev server (which stops workerd) instead of dying first.
 * @param {import("node:child_process").ChildProcess} child
 */
function forwardSignals(child) {
  for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM", "SIGHUP"])) {
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    });
  }
}

/** @returns {Promise<number>} the process exit code */
async function main() {
  const options = parseOptions(process.argv.slice(2), process.env);
  if (options.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (!existsSync(WRANGLER)) {
    console.error("[start] wrangler is not installed; run `npm ci` first");
    return 1;
  }
  const url = baseUrl(options.host, options.port);
  if (!(await portIsFree(options.port, options.host))) {
    const free = await nextFreePort(options.port, options.host);
    const suggestion = free === undefined ? "PORT=<a free port> npm start" : `PORT=${free} npm start`;
    console.error(`[start] ${options.host}:${options.port} is already in use (another npm start?); start on a free port instead: ${suggestion}`);
    return 1;
  }
  const { key, created } = ensureAdminKey(options.devVars);
  ensureLocalEgress(options.devVars);
  console.log(created ? `[start] generated an admin key into ${options.devVars}` : `[start] using the admin key in ${options.devVars}`);
  console.log("[start] applying local D1 migrations");
  let migrated = await applyMigrations(options.persistTo);
  if (migrated !== 0 && migrated < 128) {
    // wrangler runs them in a workerd of its own, whose start now and then fails on a busy machine (seen in CI as
    // "false == true"). Each migration is recorded as it is applied, so a second run goes on where the first stopped.
    console.error(`[start] applying the migrations failed (exit code ${migrated}); trying once more`);
    await new Promise((next) => setTimeout(next, 1_000));
    migrated = await applyMigrations(options.persistTo);
  }
  if (migrated !== 0) {
    console.error(`[start] applying the migrations failed (exit code ${migrated})`);
    return migrated;
  }

  const server = spawnDevServer(options);
  const exited = exitCode(server);
  forwardSignals(server);

  if (await waitForHealth(url, server, HEALTH_TIMEOUT_MS)) {
    process.stdout.write(banner({ url, key, created, devVars: options.devVars, persistTo: options.persistTo }));
  } else if (server.exitCode === null && server.signalCode === null) {
    console.error(`[start] ${url}/health did not answer within ${HEALTH_TIMEOUT_MS / 1000}s; see wrangler's output above (the admin key is in ${options.devVars})`);
  }
  return exited;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      console.error(`[start] ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
