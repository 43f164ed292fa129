import { env } from "cloudflare:test";

// Each test file gets its own storage; bring its D1 to the current schema first. As applyD1Migrations from
// cloudflare:test does (the same d1_migrations table, one row per migration, in order), but in one batch: it sends one
// per migration, 48 round trips to D1 that took 0.5-1.6 s of each file's setup on a loaded machine where one batch took
// 0.1-0.3 s. A batch is one transaction, as each migration's was; the schema and rows it leaves are the same (compared
// through sqlite_master and d1_migrations).
// The table's statement is applyD1Migrations' own, to the whitespace, so that sqlite_master holds the same text.
await env.DB.prepare(`CREATE TABLE IF NOT EXISTS d1_migrations (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		name       TEXT UNIQUE,
		applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
	);`).run();
const appliedMigrations = new Set((await env.DB.prepare("SELECT name FROM d1_migrations").all<{ name: string }>()).results.map((row) => row.name));
const recordMigration = env.DB.prepare("INSERT INTO d1_migrations (name) VALUES (?)");
const migrationStatements = env.TEST_MIGRATIONS.filter((migration) => !appliedMigrations.has(migration.name)).flatMap((migration) => [
  ...migration.queries.map((query) => env.DB.prepare(query)),
  recordMigration.bind(migration.name),
]);
if (migrationStatements.length > 0) await env.DB.batch(migrationStatements);

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
