/// <reference types="node" />
/**
 * What `wrangler deploy` would upload, built offline with `--dry-run` as an operator's deploy builds it: the Worker
 * bundles with every binding and Durable Object class the README's deploy steps rely on, within Cloudflare's size limit.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyProject, removeDir, runWrangler, tempDir } from "./dev-server";

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
});
