/// <reference types="node" />
/**
 * Harness of the end-to-end tests: runs wrangler's real dev server as `npm start` does (and `npm start` itself), as a
 * user would, and talks to it over HTTP with plain fetch.
 *
 * Every server runs in a copy of the project (node_modules linked) so that edits saved in the working tree while the
 * tests run do not hot-reload the Worker under them, and nothing is written to the developer's `.dev.vars` or
 * `.wrangler/state`. Every child is spawned detached (its own process group) and the whole group is killed
 * afterwards, so no workerd is ever left running.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { createTargetServer } from "../target-server";
import { freePort } from "./ports";

export { freePort };

export const PROJECT_ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const WRANGLER_BIN = join("node_modules", "wrangler", "bin", "wrangler.js");
const HEALTH_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 15_000;

/** Environment of every wrangler we start: no prompts, no telemetry, no Request.cf download. */
export function wranglerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
  delete env["PORT"];
  delete env["HOST"];
  return { ...env, ...extra };
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** A fresh `<keyId>:<keySecret>` like the one `npm start` generates. */
export function generateAdminKey(): string {
  return `admin-${randomBytes(4).toString("hex")}:${randomBytes(32).toString("base64url")}`;
}


const temporaryDirs = new Set<string>();

/** A new empty temporary directory, removed at exit at the latest. */
export function tempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `edge-conductor-e2e-${label}-`));
  temporaryDirs.add(dir);
  return dir;
}

const NOT_COPIED = new Set(["node_modules", ".git", ".wrangler", "test", "coverage", "dist", "bench"]);

/**
 * A copy of the project as a fresh clone has it (no `.dev.vars`, no `.wrangler`), with node_modules linked.
 * Remove it with {@link removeDir}.
 */
export function copyProject(): string {
  const dir = tempDir("project");
  cpSync(PROJECT_ROOT, dir, {
    recursive: true,
    filter: (source) => {
      const path = relative(PROJECT_ROOT, source);
      const top = path.split(sep)[0] ?? "";
      return !NOT_COPIED.has(top) && !top.startsWith(".dev.vars");
    },
  });
  symlinkSync(join(PROJECT_ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

/** Removes a temporary directory (a node_modules symlink is removed, not followed). */
export function removeDir(dir: string | undefined): void {
  if (!dir) return;
  rmSync(dir, { recursive: true, force: true });
  temporaryDirs.delete(dir);
}

const running = new Set<ProcessGroup>();
const killAll = () => {
  for (const group of running) group.killNow();
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
};
process.on("exit", killAll);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal); // then die of it as before
  });
}

/** A child process in its own process group, with its output captured. */
export class ProcessGroup {
  readonly child: ChildProcess;
  readonly pgid: number;
  /** Resolves with the leader's exit code (or signal name) once it exits. */
  readonly exited: Promise<number | string>;
  private buffer = "";

  constructor(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
    this.child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    if (this.child.pid === undefined) throw new Error(`could not start ${command} ${args.join(" ")}`);
    this.pgid = this.child.pid;
    running.add(this);
    this.child.stdout?.on("data", (chunk: Buffer) => (this.buffer += chunk.toString("utf8")));
    this.child.stderr?.on("data", (chunk: Buffer) => (this.buffer += chunk.toString("utf8")));
    this.exited = new Promise((done) => this.child.once("exit", (code, signal) => done(code ?? signal ?? "unknown")));
  }

  /** Everything printed so far (stdout and stderr interleaved). */
  get output(): string {
    return this.buffer;
  }

  get hasExited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Waits until the output matches, failing when the process exits first or the time is up. */
  async waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = this.buffer.match(pattern);
      if (match) return match;
      if (this.hasExited) throw new Error(`process exited (${this.child.exitCode ?? this.child.signalCode}) before printing ${pattern}:\n${this.tail()}`);
      if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${this.tail()}`);
      await sleep(100);
    }
  }

  /** The last lines of output, for error messages. */
  tail(chars = 4000): string {
    return this.buffer.slice(-chars);
  }

  /** Processes of the group that are still alive (zombies excluded). */
  liveMembers(): number[] {
    return liveMembersOf(this.pgid);
  }

  /** Sends a signal to the leader only (as `kill <pid>` would). */
  signalLeader(signal: NodeJS.Signals): void {
    if (!this.hasExited) this.child.kill(signal);
  }

  /** Sends a signal to every process of the group. */
  signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pgid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  }

  /** Waits until no process of the group is alive; false when the time is up. */
  async waitUntilGone(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.liveMembers().length > 0) {
      if (Date.now() > deadline) return false;
      await sleep(50);
    }
    return true;
  }

  /**
   * Stops the whole group: `signal` first (SIGTERM by default), SIGKILL when it lingers.
   * Throws when a process of the group survives even that.
   */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    this.signalGroup(signal);
    if (!(await this.waitUntilGone(STOP_TIMEOUT_MS))) {
      this.signalGroup("SIGKILL");
      if (!(await this.waitUntilGone(STOP_TIMEOUT_MS))) throw new Error(`process group ${this.pgid} survived SIGKILL: ${this.liveMembers().join(", ")}`);
    }
    running.delete(this);
  }

  /** Last resort at exit: SIGKILL to the group, synchronously. */
  killNow(): void {
    this.signalGroup("SIGKILL");
  }
}

/** Live (non-zombie) processes whose process group is `pgid`; uses /proc, else a signal-0 probe. */
export function liveMembersOf(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  const members: number[] = [];
  for (const pid of entries) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid pgrp ..." — comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") members.push(Number(pid));
  }
  return members;
}

/** Runs wrangler to completion in `root`; throws with its output when it fails. */
export async function runWrangler(root: string, args: string[], timeoutMs = 120_000): Promise<string> {
  const group = new ProcessGroup(process.execPath, [join(root, WRANGLER_BIN), ...args], { cwd: root, env: wranglerEnv() });
  const timer = setTimeout(() => group.signalGroup("SIGKILL"), timeoutMs);
  const code = await group.exited;
  clearTimeout(timer);
  await group.stop();
  if (code !== 0) throw new Error(`wrangler ${args.join(" ")} → ${code}:\n${group.tail()}`);
  return group.output;
}

/** How long a caller waits for the migrated state another process is making before it gives up. */
const MIGRATED_STATE_TIMEOUT_MS = 180_000;
/** A lock directory without its owner's pid this long after it was made is one whose owner died making it. */
const UNOWNED_LOCK_MS = 10_000;

/** What a migrated state depends on: the migrations, wrangler.toml (its D1 database) and wrangler's version. */
function migrationsFingerprint(root: string): string {
  const hash = createHash("sha256");
  const dir = join(root, "migrations");
  for (const file of readdirSync(dir).sort()) hash.update(`${file}\0`).update(readFileSync(join(dir, file))).update("\0");
  hash.update(readFileSync(join(root, "wrangler.toml"))).update("\0");
  hash.update(readFileSync(join(root, "node_modules", "wrangler", "package.json")));
  return hash.digest("hex").slice(0, 16);
}

/** Whether a process of that id is alive (EPERM: another user's, alive). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the lock `lock` when the process that took it is gone without removing it. */
function removeIfAbandoned(lock: string): void {
  let owner: number;
  try {
    owner = Number(readFileSync(join(lock, "pid"), "utf8"));
  } catch {
    try {
      if (Date.now() - statSync(lock).mtimeMs > UNOWNED_LOCK_MS) rmSync(lock, { recursive: true, force: true });
    } catch {
      // removed meanwhile
    }
    return;
  }
  if (Number.isInteger(owner) && owner > 0 && !isAlive(owner)) rmSync(lock, { recursive: true, force: true });
}

const MIGRATED_STATE_PREFIX = "edge-conductor-e2e-migrated-";

/** Removes the shared migrated states (and their locks) of runs that have ended. */
function removeEndedRunsStates(): void {
  for (const name of readdirSync(tmpdir())) {
    const run = name.startsWith(MIGRATED_STATE_PREFIX) ? Number(name.slice(MIGRATED_STATE_PREFIX.length).split("-")[0]) : NaN;
    if (Number.isInteger(run) && run > 0 && !isAlive(run)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

/**
 * A state directory `wrangler d1 migrations apply DB --local` migrated and nothing has served from, shared by the e2e
 * files of a run: named by the run (vitest's main process, whose forks run the files) and by what makes it. One
 * process makes it, holding a lock directory beside it, and renames it into place once wrangler succeeded; the others
 * wait for it. Never written to: each server gets a copy ({@link applyMigrations}). The next run's maker removes it.
 */
async function migratedState(root: string): Promise<string> {
  const shared = join(tmpdir(), `${MIGRATED_STATE_PREFIX}${process.ppid}-${migrationsFingerprint(root)}`);
  const lock = `${shared}.lock`;
  const deadline = Date.now() + MIGRATED_STATE_TIMEOUT_MS;
  for (;;) {
    if (existsSync(shared)) return shared;
    let locked = false;
    try {
      mkdirSync(lock);
      locked = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (locked) {
      try {
        writeFileSync(join(lock, "pid"), String(process.pid));
        if (existsSync(shared)) return shared; // made between the look above and the lock
        removeEndedRunsStates();
        const dir = tempDir("migrating");
        await runWrangler(root, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", dir]);
        try {
          renameSync(dir, shared);
          temporaryDirs.delete(dir);
        } catch (error) {
          // Only another process that took an abandoned lock at the same moment can have put it there first.
          if (!existsSync(shared)) throw error;
          removeDir(dir);
        }
        return shared;
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    }
    removeIfAbandoned(lock);
    if (Date.now() > deadline) throw new Error(`no migrated state at ${shared} within ${MIGRATED_STATE_TIMEOUT_MS} ms (the process holding ${lock} is still at it)`);
    await sleep(250);
  }
}

/** This process's look for the shared migrated state, per project copy. */
const migratedStates = new Map<string, Promise<string>>();

/**
 * Gives the new, empty state directory `persistTo` the local database `wrangler d1 migrations apply DB --local` makes:
 * a copy of the files such a run writes. wrangler applies each migration in a workerd of its own (some fifty starts:
 * 15 s to a minute of a busy machine, for each server of each file), so it runs once for all ({@link migratedState}).
 */
export async function applyMigrations(root: string, persistTo: string): Promise<void> {
  let migrated = migratedStates.get(root);
  if (migrated === undefined) {
    migrated = migratedState(root);
    migratedStates.set(root, migrated);
    // A failure is not kept: the next caller tries again (and reports its own failure).
    migrated.catch(() => migratedStates.delete(root));
  }
  cpSync(await migrated, persistTo, { recursive: true });
}

/** Polls `GET /health` until 200; fails when the process exits first or after `timeoutMs`. */
export async function waitForHealth(url: string, group: ProcessGroup, timeoutMs = HEALTH_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (group.hasExited) throw new Error(`server exited (${group.child.exitCode ?? group.child.signalCode}) before ${url}/health answered:\n${group.tail()}`);
    try {
      const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url}/health did not answer 200 within ${timeoutMs} ms:\n${group.tail()}`);
    await sleep(200);
  }
}

export interface DevServer {
  url: string;
  port: number;
  group: ProcessGroup;
  /** Stops the whole process group (SIGTERM, then SIGKILL). */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * wrangler's dev server in `root` as `npm start` runs it (scripts/dev-server.mjs: `wrangler dev` without its devtools
 * inspector) on a free (or the given) port, state in `persistTo`, the admin key and any other `vars` passed with
 * `--var`. Resolves once it says it is ready and `/health` answers, failing when that takes more than `timeoutMs`.
 */
export async function startDevServer(options: {
  root: string;
  persistTo: string;
  adminKey: string;
  port?: number;
  vars?: Record<string, string>;
  timeoutMs?: number;
}): Promise<DevServer> {
  const port = options.port ?? (await freePort());
  const args = [
    join(options.root, "scripts", "dev-server.mjs"),
    "--ip", "127.0.0.1",
    "--port", String(port),
    "--persist-to", options.persistTo,
    "--var", `BOOTSTRAP_ADMIN_KEY:${options.adminKey}`,
    // As `npm start` sets it: the target server is on 127.0.0.1.
    "--var", "EGRESS_ALLOW_PRIVATE:true",
    ...Object.entries(options.vars ?? {}).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
  const group = new ProcessGroup(process.execPath, args, { cwd: options.root, env: wranglerEnv() });
  const url = `http://127.0.0.1:${port}`;
  try {
    // Its own word that it listens, before asking /health: on a port something else holds, wrangler waits without a
    // word, and /health would be answered by that other server (another run of the suite's).
    const deadline = Date.now() + (options.timeoutMs ?? HEALTH_TIMEOUT_MS);
    await group.waitForOutput(new RegExp(`ready ${url.replace(/\./g, "\\.")}/`), deadline - Date.now());
    await waitForHealth(url, group, Math.max(deadline - Date.now(), 0));
  } catch (error) {
    await group.stop();
    throw error;
  }
  return { url, port, group, stop: (signal) => group.stop(signal) };
}

export interface Target {
  /** Absolute URL of a path on the target. */
  url(path: string): string;
  /** Method and path+query of every request received, in order. */
  requests: Array<{ method: string; url: string }>;
  /** Hits counted by `/count/<key>`. */
  hits(key: string): Promise<number>;
  close(): Promise<void>;
}

/** The loopback target server of test/target-server.ts on 127.0.0.1:0, recording the requests it receives. */
export async function startTarget(): Promise<Target> {
  const server = createTargetServer();
  const requests: Target["requests"] = [];
  server.on("request", (request) => requests.push({ method: request.method ?? "", url: request.url ?? "" }));
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path) => `${base}${path}`,
    requests,
    hits: async (key) => ((await (await fetch(`${base}/hits/${key}`)).json()) as { hits: number }).hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

/** A request to the service as a curl user would send it; JSON-encodes object bodies. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; contentType: string; text: string; json: () => any }> {
  const headers: Record<string, string> = { ...(options.key ? { "X-API-Key": options.key } : {}), ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body, signal: AbortSignal.timeout(60_000) });
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get("content-type") ?? "", text, json: () => JSON.parse(text) };
}

/** Like {@link call} but fails unless the status is `expected`, reporting the exchange. */
export async function callOk(baseUrl: string, method: string, path: string, options: { key?: string; body?: unknown } = {}, expected = 200) {
  const response = await call(baseUrl, method, path, options);
  if (response.status !== expected) {
    const sent = options.body === undefined ? "" : ` ${JSON.stringify(options.body).slice(0, 2000)}`;
    throw new Error(`${method} ${path}${sent} → ${response.status} (expected ${expected}): ${response.text.slice(0, 3000)}`);
  }
  return response;
}

/** Polls `GET /api/workflow/{id}` until its status is one of `statuses`; fails after `timeoutMs` with the last body. */
export async function waitForStatus(baseUrl: string, key: string, workflowId: string, statuses: string[], timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    try {
      const response = await call(baseUrl, "GET", `/api/workflow/${workflowId}`, { key });
      last = `${response.status} ${response.text}`;
      if (response.status === 200 && statuses.includes(response.json().status)) return response.json();
    } catch (error) {
      last = String(error);
    }
    if (Date.now() > deadline) throw new Error(`GET /api/workflow/${workflowId} did not reach ${statuses.join("|")} within ${timeoutMs} ms; last answer: ${last.slice(0, 4000)}`);
    await sleep(100);
  }
}
