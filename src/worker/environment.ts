import { boundedListing, MAX_LISTING_CHARS } from "./bounded-listing";
import { TagRepository, type Tag } from "./tags";
import { TtlCache, NAME_CACHE_MAX_KEY_LENGTH } from "./ttl-cache";

/** How long an isolate trusts what it read of a variable (as definitions: a write elsewhere is seen within it). */
const CACHE_TTL_MS = 2_000;

/**
 * Orkes' environment variables in D1 (`environment_variables`). Starts read the ones their definition names through a
 * short in-isolate cache, absent names included, so a start whose definition names none reads nothing and one that
 * names some reads D1 at most once per name every two seconds; a write in this isolate clears its entry at once.
 */
export class EnvironmentRepository {
  static readonly #cache = new TtlCache<string | null>(CACHE_TTL_MS, { maxKeyLength: NAME_CACHE_MAX_KEY_LENGTH });
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /**
   * Every variable with its tags, by name (Orkes' EnvironmentVariable): at most {@link MAX_LISTING_CHARS} of names,
   * values and tags (a 413 beyond, see {@link boundedListing}). Their count is not capped, and each value may hold
   * 16 KiB: a thousand full ones are past what one isolate should read, parse and answer at once. `withValues` false:
   * each without its value, which is then not read (the names a client reads one at a time past the bound).
   */
  async list(withValues = true): Promise<Array<{ name: string; value?: string; tags: Tag[] }>> {
    const rows = await boundedListing<{ name: string; value: string | null }>(
      this.#db,
      `SELECT name, ${withValues ? "value" : "NULL AS value"}, length(name) + ${withValues ? "length(value)" : "0"} + COALESCE((SELECT SUM(length(tag_key) + length(tag_value)) FROM metadata_tags
         WHERE target_type = 'ENV_VARIABLE' AND target_name = environment_variables.name), 0) AS listed_chars FROM environment_variables`,
      "listed.name",
      [],
      (chars) =>
        `The environment variables come to ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; ask for their names (GET /api/environment?short=true), then read them one at a time: GET /api/environment/{name}`,
    );
    // After the bound is known to hold: their tags are counted in it.
    const tags = await new TagRepository(this.#db).byName("ENV_VARIABLE");
    return rows.map((row) => ({ name: row.name, ...(row.value === null ? {} : { value: row.value }), tags: tags.get(row.name) ?? [] }));
  }

  /** A variable's value, or null when there is none (read from D1, not the cache). */
  async get(name: string): Promise<string | null> {
    return (await this.#db.prepare(`SELECT value FROM environment_variables WHERE name = ?`).bind(name).first<{ value: string }>())?.value ?? null;
  }

  /** Creates or replaces a variable. */
  async put(name: string, value: string, by: string, now: number): Promise<void> {
    await this.#db
      .prepare(
        `INSERT INTO environment_variables (name, value, create_time, update_time, updated_by) VALUES (?1, ?2, ?3, ?3, ?4)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value, update_time = excluded.update_time, updated_by = excluded.updated_by`,
      )
      .bind(name, value, now, by)
      .run();
    EnvironmentRepository.#cache.delete(name);
  }

  /** Deletes a variable and its tags; its value, or null when there was none. */
  async delete(name: string): Promise<string | null> {
    const [deleted] = await this.#db.batch<{ value: string }>([
      this.#db.prepare(`DELETE FROM environment_variables WHERE name = ? RETURNING value`).bind(name),
      new TagRepository(this.#db).deleteStatement({ type: "ENV_VARIABLE", name }),
    ]);
    EnvironmentRepository.#cache.delete(name);
    return deleted?.results[0]?.value ?? null;
  }

  /** The values of those of `names` that exist (what a start keeps), read through the cache. */
  async valuesOf(names: readonly string[]): Promise<Record<string, string>> {
    // Entries, not assignments: a variable may be named `__proto__`.
    const values: Array<[string, string]> = [];
    const missing: string[] = [];
    for (const name of names) {
      const cached = EnvironmentRepository.#cache.get(name);
      if (cached === undefined) missing.push(name);
      else if (cached !== null) values.push([name, cached]);
    }
    if (missing.length > 0) values.push(...Object.entries(await this.currentValuesOf(missing)));
    return Object.fromEntries(values);
  }

  /**
   * The values of those of `names` that exist, read from D1 past the cache (which takes them): what a retry, restart,
   * rerun, upgrade or jump runs with, so that a variable just fixed (in any isolate) is what the tasks run again read.
   */
  async currentValuesOf(names: readonly string[]): Promise<Record<string, string>> {
    const { results } = await this.#db
      .prepare(`SELECT name, value FROM environment_variables WHERE name IN (SELECT value FROM json_each(?))`)
      .bind(JSON.stringify(names))
      .all<{ name: string; value: string }>();
    const found = new Map(results.map((row) => [row.name, row.value]));
    const values: Array<[string, string]> = [];
    for (const name of names) {
      const value = found.get(name) ?? null;
      EnvironmentRepository.#cache.set(name, value);
      if (value !== null) values.push([name, value]);
    }
    return Object.fromEntries(values);
  }
}
