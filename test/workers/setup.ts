import { applyD1Migrations, env } from "cloudflare:test";

// Each test file gets its own storage; bring its D1 to the current schema first.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// Durable Objects run in the test runner's isolate, so what they log goes through Vitest's console, which sends it to
// the pool from the object's own I/O context. When that object is aborted or evicted while the message is on its way
// (abortAllDurableObjects, the eviction tests, a background job failing because another object was aborted), the
// message is never delivered, and Vitest waits for it at the end of the file for ever: the run hangs with every test
// passed (cloudflare/workers-sdk#14180; fixed in @cloudflare/vitest-pool-workers 0.18.6, which needs Node 22). So the
// workerd tests write the console straight to workerd's own, whose output the pool prints as it comes.
const workerdConsole = (globalThis as { __console?: Console }).__console;
if (workerdConsole !== undefined) {
  for (const method of ["debug", "info", "log", "warn", "error"] as const) console[method] = workerdConsole[method].bind(workerdConsole);
}
