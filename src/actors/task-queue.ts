import { DurableObject } from "cloudflare:workers";
import type { WorkerQueueEntry } from "../engine/tasks/simple";
import { WakeSignal } from "./wake-signal";

/** A task a poll took from the queue for a while (see {@link TaskQueue.lease}). */
export interface LeasedTask {
  taskId: string;
  workflowId: string;
  /** When the lease ends: the entry's `visible_at` as the lease set it, until a push of the task moves it. */
  leasedUntil: number;
}

/** Longest a poll may wait for a task to arrive (ms): a poll is an open request, and workers poll again anyway. */
export const MAX_POLL_WAIT_MS = 10_000;

/**
 * One worker queue: the SIMPLE tasks of one task name in one domain that wait for a worker's poll (Conductor's
 * task queue), in its own SQLite. It only says which task to try next; each task's execution decides whether the
 * poll gets it (exactly one poll does). A poll leases the entries it takes, and drops them once their executions
 * have answered: a poll that dies in between leaves them to come back when the lease ends, and an entry whose task
 * no longer waits (it was completed from outside, canceled, retried) is dropped when a poll comes to it.
 */
export class TaskQueue extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  /** Polls waiting here for an entry to become visible, woken by every push. */
  readonly #pushed = new WakeSignal();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS entries (
      task_id TEXT PRIMARY KEY,
      workflow_id TEXT NOT NULL,
      priority INTEGER NOT NULL,
      visible_at INTEGER NOT NULL
    )`);
    this.#sql.exec(`CREATE INDEX IF NOT EXISTS entries_by_turn ON entries (visible_at, priority)`);
  }

  /** Adds tasks, or moves a task already here to its new `visibleAt` (a pushed entry replaces a lease). */
  async push(entries: readonly WorkerQueueEntry[]): Promise<void> {
    for (const entry of entries) {
      this.#sql.exec(
        `INSERT INTO entries (task_id, workflow_id, priority, visible_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (task_id) DO UPDATE SET workflow_id = excluded.workflow_id, priority = excluded.priority, visible_at = excluded.visible_at`,
        entry.taskId,
        entry.workflowId,
        entry.priority,
        entry.visibleAt,
      );
    }
    this.#pushed.wakeAll();
  }

  /**
   * Takes up to `count` visible entries, highest priority first and then oldest, hiding them for `leaseMs`. When none
   * is visible, waits up to `waitMs` (at most {@link MAX_POLL_WAIT_MS}) for one to be pushed or to become visible.
   */
  async lease(count: number, waitMs: number, leaseMs: number): Promise<LeasedTask[]> {
    const deadline = Date.now() + Math.min(Math.max(waitMs, 0), MAX_POLL_WAIT_MS);
    for (;;) {
      const now = Date.now();
      const leased = this.#sql
        .exec<{ task_id: string; workflow_id: string }>(
          `SELECT task_id, workflow_id FROM entries WHERE visible_at <= ? ORDER BY priority DESC, visible_at, rowid LIMIT ?`,
          now,
          count,
        )
        .toArray();
      if (leased.length > 0) {
        // In the same synchronous turn as the read, so no other poll takes them too.
        for (const row of leased) this.#sql.exec(`UPDATE entries SET visible_at = ? WHERE task_id = ?`, now + leaseMs, row.task_id);
        return leased.map((row) => ({ taskId: row.task_id, workflowId: row.workflow_id, leasedUntil: now + leaseMs }));
      }
      const remaining = deadline - now;
      if (remaining <= 0) return [];
      const next = this.#sql.exec<{ at: number | null }>(`SELECT MIN(visible_at) AS at FROM entries`).one().at;
      await this.#pushed.next(next === null ? remaining : Math.min(remaining, Math.max(next - now, 1)));
    }
  }

  /**
   * Drops entries whose executions answered the poll (the task was handed out, or no longer waits). An entry pushed
   * again since it was leased (the task was queued anew meanwhile: a rerun, an IN_PROGRESS report) is not the one
   * the answer was about, and stays.
   */
  async ack(leased: readonly LeasedTask[]): Promise<void> {
    for (const entry of leased) this.#sql.exec(`DELETE FROM entries WHERE task_id = ? AND visible_at = ?`, entry.taskId, entry.leasedUntil);
  }

  /** How many entries the queue holds, leased ones included (Conductor's queue size). */
  async size(): Promise<number> {
    return this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM entries`).one().n;
  }
}

/** The queue object holding key `queue` (see `workerQueueKey`). */
export function taskQueueAt(env: Env, queue: string): DurableObjectStub<TaskQueue> {
  return env.TASK_QUEUE.get(env.TASK_QUEUE.idFromName(queue));
}
