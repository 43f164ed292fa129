import type { JsonObject } from "../engine/model";
import type { TaskCacheWrite } from "../engine/task-cache";
import { hexOf } from "../engine/task-id";

/** Most look-ups one D1 batch makes (one statement each). */
const LOOKUPS_PER_BATCH = 50;

/** Most expired outputs one write deletes with it: the table is cleaned as it is used, never all at once. */
const EXPIRED_DELETED_PER_WRITE = 20;

/**
 * The key as D1 holds it: the hex SHA-256 of the resolved key, never its text. A key may read a value Orkes masks
 * (`${workflow.input._secrets.token}`, a signed JWT in a header the key names), and masked values are never stored in
 * plain; the digest tells values apart as the text did. One per cached task looked up or written, none for others.
 */
export async function storedCacheKey(key: string): Promise<string> {
  return hexOf(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key))));
}

/** What one task waiting for its look-up asks: its task name and resolved key. */
export interface TaskCacheLookup {
  taskId: string;
  taskName: string;
  key: string;
}

/**
 * Orkes' task output cache in D1 (`task_output_cache`): shared by every execution, so that a task with the same name
 * and key in any workflow finds an output another cached (as Orkes caches by task definition name).
 */
export class TaskOutputCache {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /** The unexpired output cached for each look-up, by task id (null: none). */
  async lookup(lookups: readonly TaskCacheLookup[], now: number): Promise<Record<string, JsonObject | null>> {
    const outputs: Record<string, JsonObject | null> = {};
    for (let start = 0; start < lookups.length; start += LOOKUPS_PER_BATCH) {
      const chunk = lookups.slice(start, start + LOOKUPS_PER_BATCH);
      const keys = await Promise.all(chunk.map((lookup) => storedCacheKey(lookup.key)));
      const statement = this.#db.prepare(`SELECT output FROM task_output_cache WHERE task_name = ? AND cache_key = ? AND expires_at > ?`);
      const results = await this.#db.batch<{ output: string }>(chunk.map((lookup, index) => statement.bind(lookup.taskName, keys[index], now)));
      chunk.forEach((lookup, index) => {
        const row = results[index]?.results[0];
        outputs[lookup.taskId] = row === undefined ? null : (JSON.parse(row.output) as JsonObject);
      });
    }
    return outputs;
  }

  /**
   * Deletes every output cached under `taskName`, whatever its key or expiry (Orkes' `POST /api/admin/cache/clear/{taskDefName}`).
   * An output whose write is on its way (owed by a decision that completed its task) may still be cached after.
   */
  async clear(taskName: string): Promise<void> {
    await this.#db.prepare(`DELETE FROM task_output_cache WHERE task_name = ?`).bind(taskName).run();
  }

  /** Caches `write`'s output (under its key's digest) until its time to live has passed (replacing any under its name and key), deleting a few expired ones. */
  async store(write: TaskCacheWrite, now: number): Promise<void> {
    const key = await storedCacheKey(write.key);
    await this.#db.batch([
      this.#db
        .prepare(
          `INSERT INTO task_output_cache (task_name, cache_key, output, expires_at) VALUES (?1, ?2, ?3, ?4)
           ON CONFLICT (task_name, cache_key) DO UPDATE SET output = excluded.output, expires_at = excluded.expires_at`,
        )
        .bind(write.taskName, key, JSON.stringify(write.output), now + write.ttlSeconds * 1000),
      this.#db
        .prepare(`DELETE FROM task_output_cache WHERE rowid IN (SELECT rowid FROM task_output_cache WHERE expires_at <= ? LIMIT ?)`)
        .bind(now, EXPIRED_DELETED_PER_WRITE),
    ]);
  }
}
