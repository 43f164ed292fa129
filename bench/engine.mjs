// @ts-check
/**
 * Starts the engine under test, wrangler's dev server as `npm start` runs it (or, with `inspector: true`, the
 * `wrangler dev` CLI), on a free 127.0.0.1 port with fresh state, and stops its whole process tree.
 *
 * 0. The project (without node_modules, .git, .wrangler, .dev.vars) is copied into a temp dir, with
 *    node_modules symlinked, and wrangler runs there: the CLI rebuilds and restarts the Worker whenever a
 *    source file changes, which would break a run while the project is being edited.
 * 1. `wrangler d1 migrations apply DB --local --persist-to <fresh temp dir>`
 * 2. `node scripts/dev-server.mjs --port <free> --ip 127.0.0.1 --persist-to <same dir> --log-level warn --no-watch
 *     --var BOOTSTRAP_ADMIN_KEY:<keyId>:<keySecret>` with a key generated for this run (with `inspector: true`:
 *     `wrangler dev` with the same options but --no-watch).
 *
 * Both run as `node <script> ...` (the CLI as `node node_modules/wrangler/bin/wrangler.js`, what `npx wrangler`
 * ends up running), so no npm process sits in the measured tree. It is spawned detached, i.e. as the leader of
 * its own process group; stopping sends SIGTERM to that group, then SIGKILL to the group and to every
 * descendant found via /proc, so no wrangler/workerd outlives the run. `registerCleanup()` does the
 * same (SIGKILL) from a process "exit" listener, so even an uncaught error or process.exit() cleans up;
 * `exitOnSignals()` makes SIGINT/SIGTERM/SIGHUP go through process.exit.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { treePids } from "./memory.mjs";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const WRANGLER_BIN = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

/** @returns {Promise<number>} a TCP port free on 127.0.0.1 right now */
export function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen({ port: 0, host: "127.0.0.1", exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port ? done(port) : fail(new Error("no free port"))));
    });
  });
}

/** @returns {string} a fresh `<keyId>:<keySecret>` (no ':' inside either part) */
export function generateKey() {
  return `bench-${randomBytes(4).toString("hex")}:${randomBytes(24).toString("base64url")}`;
}

/** Top-level entries of the project not copied into the snapshot. */
const NOT_COPIED = new Set(["node_modules", ".git", ".wrangler", "coverage", "dist", ".dev.vars"]);

/**
 * Copies the project as it is now into `dir` (node_modules symlinked), so edits made during the run do
 * not reload the Worker under test.
 * @param {string} dir
 */
export function snapshotProject(dir) {
  cpSync(ROOT, dir, {
    recursive: true,
    filter: (source) => {
      const rel = relative(ROOT, source);
      if (rel === "") return true;
      const top = rel.split(sep)[0] ?? "";
      return !NOT_COPIED.has(top) && !top.startsWith(".dev.vars") && !rel.startsWith(join("bench", "results"));
    },
  });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
}

/**
 * @param {string} workDir the run's temp dir: wrangler's debug log (which grows by ~2 KB per outbound
 *   request of the Worker under the inspector) goes there and is removed with it, not into ~/.config
 * @returns {NodeJS.ProcessEnv}
 */
function wranglerEnv(workDir) {
  return {
    ...process.env,
    WRANGLER_LOG_PATH: join(workDir, "wrangler-logs"),
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_SEND_METRICS: "false",
    CI: "true", // never prompt (the migrations confirmation)
    NO_COLOR: "1",
  };
}

/**
 * Keeps the last `max` characters of a stream for error messages.
 * @param {NodeJS.ReadableStream | null} stream
 * @param {number} [max]
 */
function tail(stream, max = 8000) {
  const box = { text: "" };
  stream?.setEncoding?.("utf8");
  stream?.on("data", (/** @type {string} */ chunk) => {
    box.text = (box.text + chunk).slice(-max);
  });
  return box;
}

/**
 * Runs a wrangler command to completion (bounded).
 * @param {string} cwd
 * @param {string[]} args
 * @param {number} timeoutMs
 * @returns {Promise<{ code: number | null, output: string }>}
 */
function runWrangler(cwd, args, timeoutMs) {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [WRANGLER_BIN, ...args], {
      cwd,
      env: wranglerEnv(dirname(cwd)),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const out = tail(child.stdout);
    const err = tail(child.stderr);
    const onExit = () => killGroup(child.pid, "SIGKILL");
    process.on("exit", onExit);
    const timer = setTimeout(() => {
      killGroup(child.pid, "SIGKILL");
      fail(new Error(`wrangler ${args.slice(0, 3).join(" ")} took longer than ${timeoutMs / 1000}s`));
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      fail(error);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      process.off("exit", onExit);
      done({ code, output: `${out.text}${err.text}` });
    });
  });
}

/**
 * Signals a process group, ignoring "no such process".
 * @param {number | undefined} pgid
 * @param {NodeJS.Signals} signal
 */
function killGroup(pgid, signal) {
  if (!pgid) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (/** @type {number} */ ms) => new Promise((next) => setTimeout(next, ms));

/**
 * @typedef {object} Engine
 * @property {string} url base URL, e.g. http://127.0.0.1:41234
 * @property {string} key the admin API key (`X-API-Key` value)
 * @property {number} pid wrangler's pid (root of the engine's process tree; also its process group id); changes with `restart`
 * @property {string} persistDir the fresh state directory
 * @property {string} projectDir the snapshot of the project wrangler runs from
 * @property {() => string} output the last lines wrangler printed
 * @property {() => Promise<void>} restart stops the whole tree, keeping the state directory, and starts it again on the same port
 * @property {() => Promise<void>} stop stops the whole tree and removes the state directory
 * @property {() => void} stopSync SIGKILLs the whole tree (also run by a process "exit" listener)
 */

/**
 * Applies the migrations and starts `wrangler dev`; resolves once `GET /health` answers 200.
 * By default the dev server runs as `npm start` runs it: through wrangler's API with the devtools inspector off
 * (`scripts/dev-server.mjs`), without wrangler's per-request inspector relay or request log; with `inspector: true`, the
 * `wrangler dev` CLI (what `npm run dev` runs).
 * @param {{ healthTimeoutMs?: number, log?: (line: string) => void, inspector?: boolean }} [options]
 * @returns {Promise<Engine>}
 */
export async function startEngine(options = {}) {
  const healthTimeoutMs = options.healthTimeoutMs ?? 60_000;
  const log = options.log ?? (() => {});
  if (!existsSync(WRANGLER_BIN)) throw new Error(`wrangler is not installed (${WRANGLER_BIN}); run npm ci`);
  const workDir = mkdtempSync(join(tmpdir(), "edge-conductor-bench-"));
  const removeState = () => rmSync(workDir, { recursive: true, force: true });
  const projectDir = join(workDir, "project");
  const persistDir = join(workDir, "state");
  try {
    snapshotProject(projectDir);
  } catch (error) {
    removeState();
    throw error;
  }
  log(`project copied to ${projectDir}`);

  log(`applying D1 migrations into ${persistDir}`);
  const migrated = await runWrangler(projectDir, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistDir], 120_000).catch((error) => {
    removeState();
    throw error;
  });
  if (migrated.code !== 0) {
    removeState();
    throw new Error(`wrangler d1 migrations apply failed (exit ${migrated.code}):\n${migrated.output}`);
  }

  const port = await freePort();
  const key = generateKey();
  const vars = [
    "--var", `BOOTSTRAP_ADMIN_KEY:${key}`,
    // The target is on 127.0.0.1, as in local development (npm start sets the same).
    "--var", "EGRESS_ALLOW_PRIVATE:true",
  ];
  const listen = ["--port", String(port), "--ip", "127.0.0.1", "--persist-to", persistDir];
  const inspector = options.inspector ?? false;
  const args = inspector
    ? [WRANGLER_BIN, "dev", ...listen, "--log-level", "warn", "--show-interactive-dev-session=false", ...vars]
    : [join(projectDir, "scripts", "dev-server.mjs"), ...listen, "--log-level", "warn", "--no-watch", ...vars];

  /** @type {Set<number>} every pid ever seen in the trees, to SIGKILL stragglers that left the group */
  const known = new Set();
  /** The running tree: wrangler's process and what it printed last. */
  let current = /** @type {{ child: import("node:child_process").ChildProcess, pid: number, out: { text: string }, err: { text: string }, exited: () => boolean, watcher: NodeJS.Timeout } | undefined} */ (undefined);
  const remember = () => {
    if (current) for (const p of treePids(current.pid)) known.add(p);
  };
  const output = () => (current ? `${current.out.text}${current.err.text}` : "");

  /** Kills the running tree (SIGTERM, then SIGKILL) and waits (bounded) until the kernel has reaped it. */
  const killTree = async () => {
    if (!current) return;
    clearInterval(current.watcher);
    remember();
    killGroup(current.pid, "SIGTERM");
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && [...known].some(alive)) await sleep(50);
    killAll();
    const reaped = Date.now() + 3000;
    while (Date.now() < reaped && [...known].some(alive)) await sleep(50);
    known.clear();
    current.child.stdout?.destroy();
    current.child.stderr?.destroy();
  };
  const killAll = () => {
    if (current) killGroup(current.pid, "SIGKILL");
    for (const p of known) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // gone
      }
    }
  };
  const stopSync = () => {
    if (current) clearInterval(current.watcher);
    remember();
    killAll();
    try {
      removeState();
    } catch {
      // best effort
    }
  };
  process.on("exit", stopSync);
  const stop = async () => {
    process.off("exit", stopSync);
    await killTree();
    removeState();
  };

  /** Spawns wrangler and resolves once `GET /health` answers 200; stops everything and throws otherwise. */
  const launch = async () => {
    log(`starting ${inspector ? "the wrangler dev CLI" : "wrangler's dev server (devtools inspector off)"} on 127.0.0.1:${port}`);
    const child = spawn(process.execPath, args, { cwd: projectDir, env: wranglerEnv(workDir), stdio: ["ignore", "pipe", "pipe"], detached: true });
    let exited = false;
    child.once("exit", () => {
      exited = true;
    });
    const watcher = setInterval(remember, 1000);
    watcher.unref();
    current = { child, pid: /** @type {number} */ (child.pid), out: tail(child.stdout), err: tail(child.stderr), exited: () => exited, watcher };
    known.add(current.pid);
    const deadline = Date.now() + healthTimeoutMs;
    for (;;) {
      if (current.exited()) {
        const said = output();
        await stop();
        throw new Error(`wrangler dev exited before answering /health:\n${said}`);
      }
      if (Date.now() > deadline) {
        const said = output();
        await stop();
        throw new Error(`GET /health did not answer 200 within ${healthTimeoutMs / 1000}s:\n${said}`);
      }
      try {
        const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
        await response.arrayBuffer();
        if (response.status === 200) break;
      } catch {
        // not listening yet
      }
      await sleep(200);
    }
    remember();
  };

  await launch();
  /** @type {Engine} */
  const engine = {
    url: `http://127.0.0.1:${port}`,
    key,
    get pid() {
      return /** @type {NonNullable<typeof current>} */ (current).pid;
    },
    persistDir,
    projectDir,
    output,
    restart: async () => {
      await killTree();
      await launch();
    },
    stop,
    stopSync,
  };
  return engine;
}

/**
 * Turns SIGINT / SIGTERM / SIGHUP into a normal `process.exit`, so the "exit" listeners that stop the
 * engine's process group (registered by startEngine) and the target run. Call once, first thing.
 */
export function exitOnSignals() {
  for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM", "SIGHUP"])) {
    process.once(signal, () => {
      console.error(`\n[bench] ${signal}: stopping the engine and the target`);
      process.exit(130);
    });
  }
}
