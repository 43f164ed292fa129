/**
 * The periodic check of the places a limit object (`ExecutionLimit`, `TaskLimit`) holds: now and then its alarm asks
 * the execution of each place held whether it still holds it, and frees those it does not, so that a place whose
 * leave was lost (an entry delivered after its leave, an execution's storage gone, a bug) is never kept for good.
 */
import type { NoticeAnswer, OwedNotice } from "./owed-notices";
import { failedAgain } from "./retry-log";

/** How long a place is held before its execution is asked again whether it still holds it. */
export const PLACE_CHECK_MS = 5 * 60_000;

/**
 * A limit object's `places` table, as the check reads it: keyed by `idColumn` (a task's place id, or the execution's
 * id), each row with `workflow_id`, `told` (0 while a notice is owed, which its delivery settles instead) and
 * `checked_at` (when its execution last said, or the place was given or taken again, that it is held).
 */
export interface HeldPlaces {
  sql: SqlStorage;
  idColumn: "place_id" | "workflow_id";
  /** Most executions one check asks before it leaves the rest to the next alarm. */
  max: number;
  /** Asks the execution whether it still holds the place; throws when it cannot be reached. */
  ask(place: Omit<OwedNotice, "givenAt">): Promise<NoticeAnswer>;
  /**
   * Held by the limit object across checks: by place id, how many checks in a row could not reach its execution, so
   * that a place kept because its execution never answers is logged (at its 1st, 2nd, 4th… check: see
   * {@link failedAgain}), and not every five minutes for good.
   */
  failures: Map<string, number>;
}

/**
 * Indexes a limit object's `places` table by what the alarm reads on every entry and leave (is a notice owed, which
 * place is checked next) and what the check selects, so those stay lookups when a key holds thousands of places
 * rather than a scan of them all. Idempotent: run by each constructor, it also indexes objects created before it.
 */
export function indexHeldPlaces(sql: SqlStorage): void {
  sql.exec(`CREATE INDEX IF NOT EXISTS places_by_check ON places (told, checked_at)`);
}

/**
 * Asks the executions of the places not checked for {@link PLACE_CHECK_MS} whether they still hold them, and frees
 * those that do not. True when it asked about any (the caller then gives what was freed to those waiting).
 */
export async function checkHeldPlaces(places: HeldPlaces, now: number): Promise<boolean> {
  const { sql, idColumn } = places;
  const dueBy = now - PLACE_CHECK_MS;
  const due = sql
    .exec<{ id: string; workflow_id: string }>(`SELECT ${idColumn} AS id, workflow_id FROM places WHERE told = 1 AND checked_at <= ? ORDER BY checked_at LIMIT ?`, dueBy, places.max)
    .toArray();
  for (const place of due) {
    let answer: NoticeAnswer;
    try {
      answer = await places.ask({ id: place.id, workflowId: place.workflow_id });
    } catch (error) {
      // Asked again at the next check (not at once: an unreachable execution must not keep the alarm busy). Kept
      // meanwhile, so logged: a place its execution never answers for is one the limit never gives to another.
      const attempt = failedAgain(places.failures, place.id);
      if (attempt !== undefined) {
        console.error(JSON.stringify({ msg: "held place not checked; kept, and asked again at the next check", id: place.id, workflowId: place.workflow_id, attempt, error: String(error) }));
      }
      sql.exec(`UPDATE places SET checked_at = ? WHERE ${idColumn} = ?`, Date.now(), place.id);
      continue;
    }
    places.failures.delete(place.id);
    if (answer === "taken") {
      sql.exec(`UPDATE places SET checked_at = ? WHERE ${idColumn} = ?`, Date.now(), place.id);
      continue;
    }
    // Only while still due: the answer was given before the await ended, and the place may have been taken again
    // meanwhile (other calls come in while the execution is asked; each taking marks the place checked then).
    sql.exec(`DELETE FROM places WHERE ${idColumn} = ? AND checked_at <= ?`, place.id, dueBy);
  }
  return due.length > 0;
}

/**
 * When the next place held is due for its check (not before `now`), or undefined when none is. Only places whose
 * execution was told count, as {@link checkHeldPlaces} asks only about those: a notice still owed is retried on its own
 * schedule, and one failing for longer than {@link PLACE_CHECK_MS} would otherwise keep this at `now`, the alarm firing
 * back to back with nothing to check.
 */
export function nextPlaceCheckAt(sql: SqlStorage, now: number): number | undefined {
  const oldest = sql.exec<{ at: number | null }>(`SELECT MIN(checked_at) AS at FROM places WHERE told = 1`).one().at;
  return oldest === null ? undefined : Math.max(oldest + PLACE_CHECK_MS, now + 1);
}

/**
 * Keeps a limit object's alarm at the earliest of `candidates` (none: no alarm, so an idle object costs nothing),
 * moving it only when it is later than that, or already past.
 */
export async function keepAlarm(storage: DurableObjectStorage, candidates: readonly number[], now: number): Promise<void> {
  if (candidates.length === 0) {
    await storage.deleteAlarm();
    return;
  }
  const at = Math.min(...candidates);
  const current = await storage.getAlarm();
  if (current === null || current > at || current < now) await storage.setAlarm(at);
}
