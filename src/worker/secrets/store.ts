/**
 * The `secrets` table: one row per name, the value only ever in its encrypted form
 * (see {@link ./crypto}). Plaintext never reaches D1, so neither D1 backups nor a D1 console
 * nor a logged query can show it.
 */

export { MAX_SECRET_VALUE_BYTES, SECRET_NAME_PATTERN, isValidSecretName } from "../../engine/secret-rules";

/** Names of every secret, sorted (byte order, as SQLite's default collation sorts). */
export async function listSecretNames(db: D1Database): Promise<string[]> {
  const { results } = await db.prepare("SELECT name FROM secrets ORDER BY name").all<{ name: string }>();
  return results.map((row) => row.name);
}

/** Whether a secret with that name exists. */
export async function secretExists(db: D1Database, name: string): Promise<boolean> {
  return (await db.prepare("SELECT 1 AS found FROM secrets WHERE name = ?1").bind(name).first<{ found: number }>()) !== null;
}

/** Creates or replaces a secret's encrypted value; `create_time` survives a replacement. */
export async function putEncryptedSecret(db: D1Database, name: string, encrypted: string, now: number): Promise<void> {
  await db
    .prepare(
      "INSERT INTO secrets (name, value, create_time, update_time) VALUES (?1, ?2, ?3, ?3) " +
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value, update_time = excluded.update_time",
    )
    .bind(name, encrypted, now)
    .run();
}

/** Deletes a secret; false when there was none. */
export async function deleteSecret(db: D1Database, name: string): Promise<boolean> {
  const [result] = await db.batch([db.prepare("DELETE FROM secrets WHERE name = ?1").bind(name), db.prepare("DELETE FROM metadata_tags WHERE target_type = 'SECRET' AND target_name = ?1").bind(name)]);
  return result!.meta.changes > 0;
}

/**
 * The encrypted values of exactly these names, in one query. The names travel as one JSON array
 * parameter (`json_each`) rather than one `?` each, so no count of names can exceed D1's limit on
 * bound parameters.
 */
export async function readEncryptedSecrets(db: D1Database, names: readonly string[]): Promise<Map<string, string>> {
  if (names.length === 0) return new Map();
  const { results } = await db
    .prepare("SELECT name, value FROM secrets WHERE name IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(names))
    .all<{ name: string; value: string }>();
  return new Map(results.map((row) => [row.name, row.value]));
}
