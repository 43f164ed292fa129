import type { HandOutLimits } from "../engine/tasks/simple";

/** What the ledger says about handing out one more task at some moment. */
export interface HandOutRoom {
  /** Tasks held by workers now (handed out and not released), reservations whose answer is still owed included. */
  held: number;
  /** Tasks handed out within the window ending now, per window length asked about. */
  inWindow: (windowMs: number) => number;
  /**
   * When `toStop` of the hand-outs counted in the window of that length have stopped counting there (undefined: fewer
   * count), each at the first of: leaving the window, the end of its own shorter window, (a reservation) its answer
   * falling due. A poll held back by the window waits for as many as free the place it needs, not for the first.
   */
  windowFreesAt: (windowMs: number, toStop: number) => number | undefined;
}

/**
 * The hand-outs of one worker queue whose tasks have limits (see {@link HandOutLimits}), in the queue's SQLite. A
 * limited task taken by a poll is reserved here at once, in the same turn as its lease; the poll's answer then
 * confirms the reservation (its execution handed the task out) or drops it (the task no longer waited). A
 * confirmed hand-out counts as held until its execution releases it, which it does once the task is no longer
 * with a worker (ended, timed out, canceled, queued again). A reservation whose answer never came (the poll died)
 * stops counting when its lease ends: that may let one task too many through, never stop the queue for good.
 * Hand-outs stay recorded for the longest rate window of the queue's tasks, to count what that window saw: a task
 * handed out again (put back in its queue by an IN_PROGRESS report, then polled anew) keeps its earlier hand-out
 * counting in the windows beside the new one, as Conductor's Redis rate limit adds an entry for every task a poll admits.
 */
export class HandOutLedger {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS hand_outs (
      task_id TEXT PRIMARY KEY,
      handed_out_at INTEGER NOT NULL,
      held INTEGER NOT NULL,
      answer_due INTEGER,
      keep_until INTEGER NOT NULL
    )`);
    // Confirmed hand-outs of a task that was handed out again since: they count in the rate windows only.
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS earlier_hand_outs (handed_out_at INTEGER NOT NULL, keep_until INTEGER NOT NULL)`);
  }

  /** How the queue stands at `now` (reservations past their due answer no longer count). */
  room(now: number): HandOutRoom {
    // A reservation counts until its answer is due; a confirmed hand-out (no answer due) until it is released.
    const live = `(answer_due IS NULL OR answer_due > ?1)`;
    // A hand-out counts in the rate windows only within its own (kept until its end): one of a task without a rate limit
    // (kept until its own hand-out) in none, held or not, as Conductor's poll checks, and so records, a task against the
    // rate limit only when the task has one.
    const inOwnWindow = `keep_until > ?1`;
    const held = this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM hand_outs WHERE held = 1 AND ${live}`, now).one().n;
    // Each hand-out counted in a window (bindings: now, the window's start, its length) and when it stops counting
    // there, at the first of: leaving this window, the end of its own window (a shorter one's ends first: waking at the
    // oldest's exit from this window alone overslept it, up to the poll's whole wait), and, for a reservation, its
    // answer falling due. All are after `now`, so a wait is never zero.
    const counted = `SELECT MIN(handed_out_at + ?3, keep_until, COALESCE(answer_due, keep_until)) AS stops_at FROM hand_outs WHERE ${live} AND ${inOwnWindow} AND handed_out_at > ?2
      UNION ALL SELECT MIN(handed_out_at + ?3, keep_until) AS stops_at FROM earlier_hand_outs WHERE handed_out_at > ?2 AND keep_until > ?1`;
    const counts = new Map<number, number>();
    const inWindow = (windowMs: number) => {
      let n = counts.get(windowMs);
      if (n === undefined) {
        n = this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM (${counted})`, now, now - windowMs, windowMs).one().n;
        counts.set(windowMs, n);
      }
      return n;
    };
    return {
      held,
      inWindow,
      windowFreesAt: (windowMs, toStop) => {
        const [row] = this.#sql
          .exec<{ stops_at: number }>(`SELECT stops_at FROM (${counted}) ORDER BY stops_at LIMIT 1 OFFSET ?4`, now, now - windowMs, windowMs, Math.max(toStop, 1) - 1)
          .toArray();
        return row?.stops_at;
      },
    };
  }

  /**
   * Records limited tasks just taken by a poll at `now`, counted until `answerDue` unless the poll's answer comes
   * first: as held when their limits bound the tasks held (their executions will release them), and in the rate
   * windows up to their own (a task without a rate limit in none).
   */
  reserve(tasks: ReadonlyArray<{ taskId: string; limits: HandOutLimits }>, now: number, answerDue: number): void {
    for (const { taskId, limits } of tasks) {
      // The task's earlier hand-out, confirmed, still counts in its windows; an earlier reservation never answered (its
      // poll died: the entry is visible again only once its lease ended) counts for nothing, and is simply replaced.
      this.#sql.exec(
        `INSERT INTO earlier_hand_outs (handed_out_at, keep_until) SELECT handed_out_at, keep_until FROM hand_outs WHERE task_id = ? AND answer_due IS NULL AND keep_until > ?`,
        taskId,
        now,
      );
      this.#sql.exec(
        `INSERT INTO hand_outs (task_id, handed_out_at, held, answer_due, keep_until) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (task_id) DO UPDATE SET handed_out_at = ?2, held = ?3, answer_due = ?4, keep_until = ?5`,
        taskId,
        now,
        limits.maxHeld === undefined ? 0 : 1,
        answerDue,
        now + (limits.windowMs ?? 0),
      );
    }
  }

  /**
   * The poll's answers: a task handed out stays held until released; one that was not is forgotten. A task not handed
   * out forgets only the reservation its own poll made, the one due at `answerDue` (its lease's end): an answer that
   * comes after its lease ran out, when another poll has taken the task again, leaves that poll's reservation counting
   * until that poll's own answer. A task handed out is held whichever poll's reservation stands: it is with a worker.
   */
  settle(answers: ReadonlyArray<{ taskId: string; handedOut: boolean; answerDue: number }>): void {
    for (const { taskId, handedOut, answerDue } of answers) {
      if (handedOut) this.#sql.exec(`UPDATE hand_outs SET answer_due = NULL WHERE task_id = ? AND answer_due IS NOT NULL`, taskId);
      else this.#sql.exec(`DELETE FROM hand_outs WHERE task_id = ? AND answer_due = ?`, taskId, answerDue);
    }
  }

  /** Tasks no longer with their workers. Their hand-outs still count in rate windows. */
  release(taskIds: readonly string[]): void {
    for (const taskId of taskIds) this.#sql.exec(`UPDATE hand_outs SET held = 0 WHERE task_id = ?`, taskId);
  }

  /** Forgets hand-outs that count for nothing at `now`: not held (or never answered) and out of their rate window. */
  prune(now: number): void {
    this.#sql.exec(`DELETE FROM hand_outs WHERE (held = 0 OR answer_due <= ?1) AND keep_until <= ?1`, now);
    this.#sql.exec(`DELETE FROM earlier_hand_outs WHERE keep_until <= ?`, now);
  }
}

/**
 * How many of `candidates` (in the queue's order) may be handed out now: each in turn while its own limits, with
 * those before it counted in as the ledger will count them, allow one more. The first that may not stops the rest, so
 * a limited task is not overtaken by later ones (the order is the queue's: priority as Orkes ranks it, then age).
 * `reopensAt` is when a rate window that stopped it frees a place (undefined: only a release or a push can).
 */
export function admitted(candidates: ReadonlyArray<HandOutLimits | undefined>, room: HandOutRoom): { count: number; reopensAt?: number } {
  let count = 0;
  // Those taken before, as {@link HandOutLedger.reserve} records them: one with a rate limit in the rate windows (it is in
  // all of them now), one bounding the tasks held among the held; a task without limits is recorded nowhere (as in
  // Conductor, which counts a task against a limit only when its own definition sets one), so it takes no place from
  // those behind it, nor does one with a concurrentExecLimit alone in a rate window.
  let held = 0;
  let inWindows = 0;
  for (const limits of candidates) {
    if (limits?.maxHeld !== undefined && room.held + held >= limits.maxHeld) return { count };
    if (limits?.maxPerWindow !== undefined && limits.windowMs !== undefined && room.inWindow(limits.windowMs) + inWindows >= limits.maxPerWindow) {
      // The window has room again once enough of those counted in it stop counting (those taken before in this poll
      // count too, but then this poll answers them and does not wait).
      const freesAt = room.windowFreesAt(limits.windowMs, room.inWindow(limits.windowMs) + inWindows - limits.maxPerWindow + 1);
      return freesAt === undefined ? { count } : { count, reopensAt: freesAt };
    }
    count++;
    if (limits?.windowMs !== undefined) inWindows++;
    if (limits?.maxHeld !== undefined) held++;
  }
  return { count };
}
