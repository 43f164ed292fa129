import { executionLimitAt } from "../actors/execution-limit";

/** Most rate limit keys one change tells at once (each is a call to its object); the others learn it at their next entry. */
export const MAX_KEYS_TOLD = 500;

/** Names per D1 look-up: D1 binds at most 100 parameters to a statement. */
const NAMES_PER_LOOKUP = 90;

/** A workflow's limit as changed (null: none), and the updateTime D1 stored the change with. */
export interface LimitChange {
  limit: number | null;
  definedAt: number;
}

/**
 * Tells the rate limit keys the executions of these workflows have used (D1's `rate_limit_keys`, recorded by each key's
 * `ExecutionLimit`) each workflow's limit as changed at its `definedAt` (the stored updateTime, which executions started
 * under the definition enter with too), so that a higher limit, or none, admits the
 * executions waiting there now rather than at the next start or end under the key. The change itself is already
 * stored: a key not reached (unreachable, or beyond {@link MAX_KEYS_TOLD}) takes it at its next entry, as before, so a
 * failure here is logged, not answered.
 */
export async function tellLimitChanges(env: Env, limits: ReadonlyMap<string, LimitChange>): Promise<void> {
  const names = [...limits.keys()];
  const keys: Array<{ workflow_name: string; rate_limit_key: string }> = [];
  try {
    for (let start = 0; start < names.length && keys.length < MAX_KEYS_TOLD; start += NAMES_PER_LOOKUP) {
      const chunk = names.slice(start, start + NAMES_PER_LOOKUP);
      const rows = await env.DB.prepare(`SELECT workflow_name, rate_limit_key FROM rate_limit_keys WHERE workflow_name IN (${chunk.map(() => "?").join(", ")}) LIMIT ?`)
        .bind(...chunk, MAX_KEYS_TOLD - keys.length)
        .all<{ workflow_name: string; rate_limit_key: string }>();
      keys.push(...rows.results);
    }
  } catch (error) {
    console.error(JSON.stringify({ msg: "rate limit change not told to its keys; they take it at their next entry", workflows: names, error: String(error) }));
    return;
  }
  const told = await Promise.allSettled(
    keys.flatMap((row) => {
      // Each row is of a name in `limits` (the look-up asked for those only).
      const change = limits.get(row.workflow_name);
      return change === undefined ? [] : [executionLimitAt(env, row.rate_limit_key).resize(row.workflow_name, change.limit, change.definedAt)];
    }),
  );
  const failed = told.filter((outcome) => outcome.status === "rejected").length;
  if (failed > 0) console.error(JSON.stringify({ msg: "rate limit change not told to some keys; they take it at their next entry", workflows: names, keysNotTold: failed }));
}
