import type { JsonObject } from "../engine/model";
import { cacheKeySecrets, type TaskCacheWrite } from "../engine/task-cache";
import { hexOf } from "../engine/task-id";
import { decryptSecret, encryptSecret, loadKeyring, type SecretsKeyring } from "./secrets/crypto";
import { readEncryptedSecrets } from "./secrets/store";

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

/** Between a key carrying secrets and the digest of their versions (see {@link versionedKeys}). */
const VERSIONS_MARK = "\u001e";

/**
 * The key each look-up whose task sends secrets is made finer with: its key, then the SHA-256 of those secrets' stored
 * (encrypted) values, by task id. A value is encrypted afresh (a random IV) each time it is put, so a secret given a new
 * value (`PUT /api/secrets/{name}`, an UPDATE_SECRET) misses what was cached with the old one, where the names alone
 * found it until it expired; the digest of a ciphertext D1 already holds says nothing of the value. A secret missing
 * counts as empty (its task fails, caching nothing). One D1 read for all the look-ups, none when no task sends a secret.
 */
async function versionedKeys(db: D1Database, lookups: readonly TaskCacheLookup[]): Promise<Record<string, string>> {
  const named = lookups.map((lookup) => ({ lookup, secrets: cacheKeySecrets(lookup.key) })).filter((entry) => entry.secrets.length > 0);
  if (named.length === 0) return {};
  const stored = await readEncryptedSecrets(db, [...new Set(named.flatMap((entry) => entry.secrets))]);
  const keys: Record<string, string> = {};
  for (const { lookup, secrets } of named) {
    const versions = await storedCacheKey(secrets.map((name) => stored.get(name) ?? "").join("\n"));
    keys[lookup.taskId] = `${lookup.key}${VERSIONS_MARK}${versions}`;
  }
  return keys;
}

/** What a look-up found: the output for each task (null: none), and the finer keys of those sending secrets (see {@link versionedKeys}). */
export interface TaskCacheFound {
  outputs: Record<string, JsonObject | null>;
  keys: Record<string, string>;
}

/**
 * How outputs are kept: sealed with the secrets store's keyring (`SECRETS_ENCRYPTION_KEY` configured), in plain (none
 * configured), or not at all (a key that is set but unusable: its operator meant outputs to be sealed).
 */
type OutputSealing = { kind: "sealed"; keyring: SecretsKeyring } | { kind: "plain" } | { kind: "none" };

/** The sealing `SECRETS_ENCRYPTION_KEY` (`encryptionKey`) gives; the keyring is imported once per isolate (see loadKeyring). */
async function outputSealing(encryptionKey: string | undefined): Promise<OutputSealing> {
  const loaded = await loadKeyring(encryptionKey);
  if (loaded.ok) return { kind: "sealed", keyring: loaded.keyring };
  return loaded.problem === "missing" ? { kind: "plain" } : { kind: "none" };
}

/**
 * The additional authenticated data of a sealed output: its row's task name and stored key, so that a ciphertext moved
 * to another row (or another table) fails authentication and is a miss. The NUL can be in no secret's name, so no
 * secret's ciphertext opens as an output, nor an output's as a secret.
 */
export function sealedOutputContext(taskName: string, storedKey: string): string {
  return `task_output_cache\u0000${taskName}\u0000${storedKey}`;
}

/**
 * What `output` holds in a row whose output is sealed (in `sealed_output`): JSON `null`, which the code before sealing
 * (it reads `output` only, and parses it) takes for nothing cached, running the task, where a ciphertext there would
 * fail its look-up (a gradual deployment serves both).
 */
const SEALED_ROW_OUTPUT = "null";

/** A row as a look-up reads it: `output` in plain (JSON), `sealed_output` the sealed form, when sealed. */
interface CachedRow {
  output: string;
  sealed_output: string | null;
}

/**
 * Whether a row's `sealed_output` is the output it was last cached with: its `output` is still what a sealed write
 * puts there. The code before sealing replaces a row's `output` and `expires_at` only (its upsert names no other
 * column), so a row it wrote over during a gradual deployment keeps the earlier sealed output, which would otherwise
 * be found past the time to live it was cached for, under the later write's expiry.
 */
function sealedIsCurrent(row: CachedRow): row is CachedRow & { sealed_output: string } {
  return row.sealed_output !== null && row.output === SEALED_ROW_OUTPUT;
}

/**
 * The output a row holds, or null when it is none to trust: sealed, only what the keyring opens, and only while no
 * write that does not seal came after (see {@link sealedIsCurrent}) (a row in plain, from before outputs were sealed or
 * from a Worker without the key, or sealed by a key since removed, is a miss, never an error: a D1 writer cannot put
 * an output in a sealed cache's place); in plain, only plain JSON.
 */
async function openedOutput(sealing: OutputSealing, taskName: string, storedKey: string, row: CachedRow): Promise<JsonObject | null> {
  let json: string | undefined = row.output;
  if (sealing.kind === "sealed") json = sealedIsCurrent(row) ? await decryptSecret(sealing.keyring, sealedOutputContext(taskName, storedKey), row.sealed_output) : undefined;
  if (json === undefined || !json.startsWith("{")) return null;
  try {
    return JSON.parse(json) as JsonObject;
  } catch {
    return null;
  }
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
  readonly #encryptionKey: string | undefined;

  /**
   * `encryptionKey`: the service's `SECRETS_ENCRYPTION_KEY`, with which outputs are sealed at rest (AES-256-GCM, as
   * secrets are): an output may hold a credential (a token endpoint's answer, a `maskedFields` value, a worker's
   * result), and D1 is read by anyone with the account's access and shows in its exports. Not needed to clear.
   */
  constructor(db: D1Database, encryptionKey?: string) {
    this.#db = db;
    this.#encryptionKey = encryptionKey;
  }

  /**
   * The unexpired output cached for each look-up, by task id (null: none), found by its key made finer with the
   * versions of the secrets its task sends, the key its output is to be cached under.
   */
  async lookup(lookups: readonly TaskCacheLookup[], now: number): Promise<TaskCacheFound> {
    const outputs: Record<string, JsonObject | null> = {};
    const sealing = await outputSealing(this.#encryptionKey);
    if (sealing.kind === "none") {
      for (const lookup of lookups) outputs[lookup.taskId] = null;
      return { outputs, keys: {} };
    }
    const versioned = await versionedKeys(this.#db, lookups);
    for (let start = 0; start < lookups.length; start += LOOKUPS_PER_BATCH) {
      const chunk = lookups.slice(start, start + LOOKUPS_PER_BATCH);
      const keys = await Promise.all(chunk.map((lookup) => storedCacheKey(versioned[lookup.taskId] ?? lookup.key)));
      const statement = this.#db.prepare(`SELECT output, sealed_output FROM task_output_cache WHERE task_name = ? AND cache_key = ? AND expires_at > ?`);
      const results = await this.#db.batch<CachedRow>(chunk.map((lookup, index) => statement.bind(lookup.taskName, keys[index], now)));
      await Promise.all(
        chunk.map(async (lookup, index) => {
          const row = results[index]?.results[0];
          outputs[lookup.taskId] = row === undefined ? null : await openedOutput(sealing, lookup.taskName, keys[index]!, row);
        }),
      );
    }
    return { outputs, keys: versioned };
  }

  /**
   * Deletes every output cached under `taskName`, whatever its key or expiry (Orkes' `POST /api/admin/cache/clear/{taskDefName}`).
   * An output whose write is on its way (owed by a decision that completed its task) may still be cached after.
   */
  async clear(taskName: string): Promise<void> {
    await this.#db.prepare(`DELETE FROM task_output_cache WHERE task_name = ?`).bind(taskName).run();
  }

  /**
   * Caches `write`'s output (under its key's digest; sealed when a key is configured) until its time to live has passed
   * (replacing any under its name and key), deleting a few expired ones. Nothing with a key set but unusable.
   */
  async store(write: TaskCacheWrite, now: number): Promise<void> {
    const sealing = await outputSealing(this.#encryptionKey);
    if (sealing.kind === "none") return;
    const key = await storedCacheKey(write.key);
    const text = JSON.stringify(write.output);
    const sealed = sealing.kind === "sealed" ? await encryptSecret(sealing.keyring, sealedOutputContext(write.taskName, key), text) : null;
    await this.#db.batch([
      this.#db
        .prepare(
          `INSERT INTO task_output_cache (task_name, cache_key, output, sealed_output, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)
           ON CONFLICT (task_name, cache_key) DO UPDATE SET output = excluded.output, sealed_output = excluded.sealed_output, expires_at = excluded.expires_at`,
        )
        .bind(write.taskName, key, sealed === null ? text : SEALED_ROW_OUTPUT, sealed, now + write.ttlSeconds * 1000),
      this.#db
        .prepare(`DELETE FROM task_output_cache WHERE rowid IN (SELECT rowid FROM task_output_cache WHERE expires_at <= ? LIMIT ?)`)
        .bind(now, EXPIRED_DELETED_PER_WRITE),
    ]);
  }
}
