/// <reference types="node" />
/**
 * What `wrangler deploy` would upload, built offline with `--dry-run` as an operator's deploy builds it: the Worker
 * bundles with every binding and Durable Object class the README's deploy steps rely on, within Cloudflare's size limit,
 * and its Durable Object migrations create each class, those already deployed kept as they were.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { copyProject, removeDir, runWrangler, tempDir } from "./dev-server";

/**
 * The Durable Object migrations deployments have applied, in order. Cloudflare keeps a Worker's last migration tag and
 * applies only the ones after it, so these stay as they are: a new class is a new migration at the end (a tag edited,
 * removed or moved would have the next deploy over an older one refused, or skip a class). `wrangler deploy --dry-run`
 * checks that every bound class is exported, but none of this, nor that a bound class has a migration at all: only
 * the upload to Cloudflare would refuse it.
 */
const DEPLOYED_MIGRATIONS = [
  { tag: "v1", new_sqlite_classes: ["WorkflowExecution"] },
  { tag: "v2", new_sqlite_classes: ["RateLimiter"] },
  { tag: "v3", new_sqlite_classes: ["ExecutionIndexWriter"] },
  { tag: "v4", new_sqlite_classes: ["TaskQueue"] },
  { tag: "v5", new_sqlite_classes: ["ScheduleTrigger"] },
  { tag: "v6", new_sqlite_classes: ["ExecutionLimit"] },
  { tag: "v7", new_sqlite_classes: ["TaskLimit"] },
];

/** What the test reads of wrangler's parsed configuration (its declared type resolves to `any` here). */
interface DurableObjectSetup {
  migrations: Array<{ tag: string; new_sqlite_classes?: string[]; new_classes?: string[]; deleted_classes?: string[] }>;
  durable_objects: { bindings: Array<{ class_name: string }> };
}

/** The Workers Free plan's limit on a Worker's compressed size (the paid plans allow 10 MiB). */
const FREE_PLAN_COMPRESSED_LIMIT = 3 * 1024 * 1024;

let project: string;
let outDir: string;
let output: string;

beforeAll(async () => {
  project = copyProject();
  outDir = tempDir("deploy-out");
  output = await runWrangler(project, ["deploy", "--dry-run", "--outdir", outDir]);
});

afterAll(() => {
  removeDir(project);
  removeDir(outDir);
});

describe("wrangler deploy --dry-run", () => {
  it("builds the Worker with its D1 database and every Durable Object class the deploy steps name", () => {
    expect(output).toContain("--dry-run: exiting now.");
    expect(output).toMatch(/env\.DB \(edge-conductor\)\s+D1 Database/);
    for (const [binding, className] of [
      ["WORKFLOW_EXECUTION", "WorkflowExecution"],
      ["RATE_LIMITER", "RateLimiter"],
      ["INDEX_WRITER", "ExecutionIndexWriter"],
      ["TASK_QUEUE", "TaskQueue"],
      ["SCHEDULE_TRIGGER", "ScheduleTrigger"],
      ["EXECUTION_LIMIT", "ExecutionLimit"],
      ["TASK_LIMIT", "TaskLimit"],
    ]) {
      expect(output).toMatch(new RegExp(`env\\.${binding} \\(${className}\\)\\s+Durable Object`));
    }
    expect(output).toMatch(/Read \d+ files from the assets directory/);
  });

  it("fits within the Workers Free plan's 3 MiB compressed limit, modules included", () => {
    const files = readdirSync(outDir).filter((name) => !name.endsWith(".map") && !name.endsWith(".md"));
    expect(files).toContain("index.js");
    const compressed = files.reduce((total, name) => total + gzipSync(readFileSync(join(outDir, name))).length, 0);
    const raw = files.reduce((total, name) => total + statSync(join(outDir, name)).size, 0);
    expect(compressed, `${files.join(", ")}: ${raw} bytes, ${compressed} compressed`).toBeLessThan(FREE_PLAN_COMPRESSED_LIMIT);
  });

  it("creates every bound Durable Object class by a SQLite migration of its own, and keeps the deployed migrations as they were", () => {
    const config: DurableObjectSetup = unstable_readConfig({ config: join(project, "wrangler.toml") });
    const { migrations } = config;
    expect(migrations.slice(0, DEPLOYED_MIGRATIONS.length), "the deployed migrations, unchanged and first").toEqual(DEPLOYED_MIGRATIONS);
    expect(new Set(migrations.map((migration) => migration.tag)).size, "tags").toBe(migrations.length);
    // A first deploy applies every migration: each bound class must be created by exactly one (as SQLite-backed: Workers
    // Free has no other kind), and nothing created may go unbound without a deleted_classes migration.
    const created = migrations.flatMap((migration) => migration.new_sqlite_classes ?? []);
    const deleted = migrations.flatMap((migration) => migration.deleted_classes ?? []);
    expect(migrations.flatMap((migration) => migration.new_classes ?? []), "key-value backed classes").toEqual([]);
    const bound = config.durable_objects.bindings.map((binding) => binding.class_name);
    expect([...bound].sort()).toEqual([...created.filter((name) => !deleted.includes(name))].sort());
    expect(created.length, "each class created once").toBe(new Set(created).size);
  });
});
