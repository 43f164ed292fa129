/**
 * Reads many look-ups in one D1 statement: `wanted` is bound as one JSON list (read by the statement with
 * `json_each(?) AS wanted`, whatever its length: D1 allows 100 bound parameters a statement, and Workers Free 50
 * statements an invocation), and each row comes back with its look-up's place in the list as `place`.
 */

/** A row of a {@link valuesByPlace} statement: `wanted.key AS place` among its columns. */
export interface PlacedRow {
  readonly place: number;
}

/**
 * The value `read` makes of each of `keys`' rows (the key at the same place as the look-up in `wanted`), null for a key
 * without one. Rows are matched by place, not by a name read back: D1 keeps a lone surrogate's bytes, which match the
 * name asked for but read back as replacement characters.
 */
export async function valuesByPlace<K, Row extends PlacedRow, V>(
  db: D1Database,
  sql: string,
  wanted: readonly unknown[],
  keys: readonly K[],
  read: (row: Row) => V,
): Promise<Map<K, V | null>> {
  const { results } = await db.prepare(sql).bind(JSON.stringify(wanted)).all<Row>();
  const values = new Map<K, V | null>(keys.map((key) => [key, null]));
  for (const row of results) values.set(keys[row.place]!, read(row));
  return values;
}
