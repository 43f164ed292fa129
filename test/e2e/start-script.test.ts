/// <reference types="node" />
/**
 * `npm start` (scripts/start.mjs) end to end, in a copy of the project as a fresh clone has it: no TTY, no stdin.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, callOk, copyProject, freePort, ProcessGroup, removeDir, sleep, tempDir, wranglerEnv } from "./dev-server";

const BANNER = /==== edge-conductor is running ====\n[\s\S]*?\n=+\n/;
const KEY_FORMAT = /^admin-[0-9a-f]{8}:[A-Za-z0-9_-]{43}$/;
const BANNER_TIMEOUT_MS = 120_000;

let project: string;
const started: ProcessGroup[] = [];
const temporary: string[] = [];

beforeAll(() => {
  project = copyProject();
});

afterEach(async () => {
  for (const group of started.splice(0)) await group.stop();
});

afterAll(() => {
  removeDir(project);
  for (const dir of temporary.splice(0)) removeDir(dir);
});

/**
 * `node scripts/start.mjs [args]` with PORT set, in its own process group, with none of the CI/wrangler variables
 * the harness sets elsewhere: the script alone must keep wrangler from prompting.
 */
function runStart(port: number, args: string[] = [], extraEnv: Record<string, string> = {}): ProcessGroup {
  const env = wranglerEnv({ PORT: String(port), ...extraEnv });
  for (const name of ["CI", "WRANGLER_SEND_METRICS", "CLOUDFLARE_CF_FETCH_ENABLED"]) delete env[name];
  const group = new ProcessGroup(process.execPath, [join(project, "scripts", "start.mjs"), ...args], { cwd: project, env });
  started.push(group);
  return group;
}

interface Banner {
  block: string;
  url: string;
  key: string;
  curl: string;
}

/** Waits for the banner and reads the URL, the key and the curl example out of it. */
async function readBanner(group: ProcessGroup): Promise<Banner> {
  const [block] = await group.waitForOutput(BANNER, BANNER_TIMEOUT_MS);
  const url = /URL:\s+(\S+)/.exec(block)?.[1] ?? "";
  const key = /Admin key:\s+(\S+)/.exec(block)?.[1] ?? "";
  const curl = /^\s*(curl .*)$/m.exec(block)?.[1] ?? "";
  return { block, url, key, curl };
}

/** The secret is printed nowhere but in the banner (wrangler's own output included). */
function expectSecretOnlyInBanner(group: ProcessGroup, banner: Banner) {
  const secret = banner.key.split(":")[1] ?? "";
  expect(secret.length).toBeGreaterThan(0);
  expect(group.output.replace(banner.block, "")).not.toContain(secret);
}

describe("npm start", () => {
  it("--help documents PORT, HOST, --persist-to, --dev-vars, --log-requests and --inspect", () => {
    const result = spawnSync(process.execPath, [join(project, "scripts", "start.mjs"), "--help"], { cwd: project, encoding: "utf8", timeout: 30_000 });
    expect(result.status).toBe(0);
    for (const word of ["PORT", "HOST", "--persist-to", "--dev-vars", "--log-requests", "--inspect"]) expect(result.stdout).toContain(word);
  });

  it("on a fresh clone: generates the key into .dev.vars (0600), serves on PORT, prints a working key and curl example", async () => {
    const port = await freePort();
    const devVars = join(project, ".dev.vars");
    expect(existsSync(devVars)).toBe(false);
    const start = runStart(port);
    const banner = await readBanner(start);

    expect(banner.url).toBe(`http://127.0.0.1:${port}`);
    expect(banner.key).toMatch(KEY_FORMAT);
    expect(banner.curl).toBe(`curl -H "X-API-Key: ${banner.key}" http://127.0.0.1:${port}/api/metadata/workflow`);
    const vars = readFileSync(devVars, "utf8");
    const encryptionKey = /^SECRETS_ENCRYPTION_KEY=([A-Za-z0-9+/]{43}=)$/m.exec(vars)?.[1];
    // Local HTTP tasks may call services on this machine; a deployed Worker keeps the egress default (off).
    expect(vars).toBe(`BOOTSTRAP_ADMIN_KEY=${banner.key}\nSECRETS_ENCRYPTION_KEY=${encryptionKey}\nEGRESS_ALLOW_PRIVATE=true\n`);
    expect(statSync(devVars).mode & 0o777).toBe(0o600);
    expect(existsSync(join(project, ".wrangler", "state", "v3", "d1"))).toBe(true);
    // The migrations in one line, not wrangler's table again after each one; no advice about the UI's redirect rules.
    const migrations = readdirSync(join(project, "migrations")).filter((file) => file.endsWith(".sql")).length;
    expect(start.output).toContain(`[start] applied ${migrations} migrations to the local database`);
    expect(start.output).not.toContain("Migrations to be applied");
    expect(start.output).not.toContain("could be made more performant");

    expect((await call(banner.url, "GET", "/health")).status).toBe(200);
    expect((await call(banner.url, "GET", "/api/metadata/workflow")).status).toBe(401);
    const listed = await call(banner.url, "GET", "/api/metadata/workflow", { key: banner.key });
    expect(listed.status, listed.text).toBe(200);
    await callOk(banner.url, "POST", "/api/metadata/workflow", {
      key: banner.key,
      body: { name: "kept_across_restarts", version: 1, schemaVersion: 2, ownerEmail: "e2e@example.com", tasks: [{ name: "h", taskReferenceName: "h", type: "HTTP", inputParameters: { http_request: { uri: "http://127.0.0.1:9/", method: "GET" } } }] },
    });
    expectSecretOnlyInBanner(start, banner);
    // The generated encryption key makes the secrets API work out of the box, and is never printed.
    const put = await fetch(`${banner.url}/api/secrets/e2e_secret`, { method: "PUT", headers: { "x-api-key": banner.key, "content-type": "application/json" }, body: '"value"' });
    expect(put.status, await put.text()).toBe(200);
    expect(start.output).not.toContain(encryptionKey!);

    // SIGTERM to the script alone (not its group) must reach wrangler and workerd too.
    start.signalLeader("SIGTERM");
    const code = await Promise.race([start.exited, new Promise((done) => setTimeout(() => done("still running"), 30_000))]);
    expect(typeof code, `start.mjs after SIGTERM: ${String(code)}\n${start.tail()}`).toBe("number");
    expect(await start.waitUntilGone(15_000), `left running: ${start.liveMembers().join(", ")}`).toBe(true);
  });

  it("a second start reuses the key in .dev.vars and the state in .wrangler/state", async () => {
    const devVars = join(project, ".dev.vars");
    const before = readFileSync(devVars, "utf8");
    const port = await freePort();
    const start = runStart(port);
    const banner = await readBanner(start);
    expect(before.startsWith(`BOOTSTRAP_ADMIN_KEY=${banner.key}\n`)).toBe(true);
    expect(readFileSync(devVars, "utf8")).toBe(before);
    expect(start.output).toContain("[start] the local database is up to date");
    const kept = await call(banner.url, "GET", "/api/metadata/workflow/kept_across_restarts", { key: banner.key });
    expect(kept.status, kept.text).toBe(200);
    // No line per request without --log-requests (the run with it, below, shows one within milliseconds).
    await sleep(1_000);
    expect(start.output).not.toContain("GET /api/metadata/workflow/kept_across_restarts");
    expectSecretOnlyInBanner(start, banner);
  });

  it("--persist-to and --dev-vars put the state and the key where they say, keeping the file's other lines; --log-requests prints a line per request", async () => {
    const dir = tempDir("start-overrides");
    temporary.push(dir);
    const devVars = join(dir, "vars.env");
    const persistTo = join(dir, "state");
    const original = 'OTHER_SETTING=1\n# a comment\nQUOTED="a b"';
    writeFileSync(devVars, original, { mode: 0o644 });
    const projectKey = readFileSync(join(project, ".dev.vars"), "utf8");

    const port = await freePort();
    const start = runStart(port, ["--persist-to", persistTo, "--dev-vars", devVars, "--log-requests"]);
    const banner = await readBanner(start);
    expect(banner.key).toMatch(KEY_FORMAT);
    expect(readFileSync(devVars, "utf8")).toMatch(new RegExp(`^${original.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\nBOOTSTRAP_ADMIN_KEY=${banner.key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\nSECRETS_ENCRYPTION_KEY=[A-Za-z0-9+/]{43}=\nEGRESS_ALLOW_PRIVATE=true\n$`));
    expect(statSync(devVars).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(project, ".dev.vars"), "utf8")).toBe(projectKey);
    expect(existsSync(join(persistTo, "v3", "d1"))).toBe(true);

    const listed = await call(banner.url, "GET", "/api/metadata/workflow", { key: banner.key });
    expect(listed.status, listed.text).toBe(200);
    await start.waitForOutput(/GET \/api\/metadata\/workflow 200 OK \(\d+ms\)/, 10_000);
    // The state is the new directory's: the definition saved under .wrangler/state is not there.
    const other = await call(banner.url, "GET", "/api/metadata/workflow/kept_across_restarts", { key: banner.key });
    expect(other.status, other.text).toBe(404);
    // The project's own key is not the one in use.
    const projectSecret = /^BOOTSTRAP_ADMIN_KEY=(.*)$/m.exec(projectKey)?.[1] ?? "";
    expect((await call(banner.url, "GET", "/api/metadata/workflow", { key: projectSecret })).status).toBe(401);
    expectSecretOnlyInBanner(start, banner);
  });

  it("serves without wrangler's devtools inspector, so HTTP tasks' calls are not relayed to it; --inspect runs the wrangler dev CLI, which relays them", async () => {
    const dir = tempDir("start-inspector");
    temporary.push(dir);
    const devVars = join(dir, "vars.env");
    /**
     * Runs a one-HTTP-task workflow (calling the service's own /health) and returns wrangler's debug log text. In the
     * project's own state, which the tests before have migrated: a new directory would take the fifty-odd workerd
     * starts of applying every migration first, and the state has nothing to do with the inspector.
     */
    const runWorkflow = async (args: string[], logs: string): Promise<string> => {
      const start = runStart(await freePort(), ["--dev-vars", devVars, ...args], { WRANGLER_LOG_PATH: logs });
      const banner = await readBanner(start);
      const definition = { name: "calls_itself", version: 1, schemaVersion: 2, ownerEmail: "e2e@example.com", tasks: [{ name: "h", taskReferenceName: "h", type: "HTTP", inputParameters: { uri: `${banner.url}/health`, method: "GET" } }] };
      await callOk(banner.url, "PUT", "/api/metadata/workflow", { key: banner.key, body: [definition] });
      const run = await callOk(banner.url, "POST", "/api/workflow/execute/calls_itself/1", { key: banner.key, body: {} });
      expect(run.json()).toMatchObject({ status: "COMPLETED", output: { response: { statusCode: 200, body: { status: "ok" } } } });
      // The CLI relays inspector events asynchronously: give them time to reach the log before reading it.
      const deadline = Date.now() + 10_000;
      let log = "";
      do {
        await sleep(250);
        log = existsSync(logs) ? readdirSync(logs).map((file) => readFileSync(join(logs, file), "utf8")).join("") : "";
      } while (!log.includes("Network.requestWillBeSent") && Date.now() < deadline && args.includes("--inspect"));
      await start.stop();
      return log;
    };

    const quiet = await runWorkflow([], join(dir, "logs-default"));
    expect(quiet).not.toContain("Network.");
    const relayed = await runWorkflow(["--inspect"], join(dir, "logs-inspect"));
    expect(relayed).toContain("Network.requestWillBeSent");
  });

  it("refuses a PORT that is already in use, before touching anything", async () => {
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, "127.0.0.1", done));
    try {
      const dir = tempDir("start-busy");
      temporary.push(dir);
      const start = runStart((busy.address() as AddressInfo).port, ["--persist-to", join(dir, "state"), "--dev-vars", join(dir, "vars.env")]);
      expect(await start.exited).toBe(1);
      expect(start.output).toContain("already in use");
      // It says how to start anyway, on a port it found free, rather than leave a newcomer to find one.
      const suggested = /start on a free port instead: PORT=(\d+) npm start/.exec(start.output);
      expect(suggested).not.toBeNull();
      expect(Number(suggested![1])).toBeGreaterThan((busy.address() as AddressInfo).port);
      expect(existsSync(join(dir, "vars.env"))).toBe(false);
      expect(existsSync(join(dir, "state"))).toBe(false);
    } finally {
      await new Promise((done) => busy.close(done));
    }
  });

  it("refuses a malformed BOOTSTRAP_ADMIN_KEY without printing it", async () => {
    const dir = tempDir("start-malformed");
    temporary.push(dir);
    const devVars = join(dir, "vars.env");
    writeFileSync(devVars, "BOOTSTRAP_ADMIN_KEY=no-colon-secret-value\n");
    const start = runStart(await freePort(), ["--persist-to", join(dir, "state"), "--dev-vars", devVars]);
    expect(await start.exited).not.toBe(0);
    expect(start.output).toContain("BOOTSTRAP_ADMIN_KEY");
    expect(start.output).not.toContain("no-colon-secret-value");
    expect(readFileSync(devVars, "utf8")).toBe("BOOTSTRAP_ADMIN_KEY=no-colon-secret-value\n");
  });
});
