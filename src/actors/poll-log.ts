/** A worker's latest poll of a task name (Conductor's `PollData`, less its queue name, which the caller knows). */
export interface PollData {
  workerId: string;
  /** The domain it polled; absent for the default one. */
  domain?: string;
  lastPollTime: number;
}

/**
 * How stale a stored poll time may be: a worker polling all the time writes its row at most this often, and an
 * eviction forgets at most this much of its latest polls (the ones since are in memory).
 */
export const POLL_WRITE_INTERVAL_MS = 10_000;

/** Most workers remembered per task name: the ones that polled longest ago go first. */
export const MAX_POLLERS = 1_000;

/**
 * The latest poll of each worker (and domain) of one task name, in the queue object's SQLite. Polls come many times
 * a second; each is kept in memory and written only when the stored one is {@link POLL_WRITE_INTERVAL_MS} old.
 */
export class PollLog {
  readonly #sql: SqlStorage;
  /** Latest polls not necessarily written yet, by {@link pollKey}. */
  readonly #recent = new Map<string, PollData>();
  /** When each key's row was last written, as far as this isolate knows. */
  readonly #written = new Map<string, number>();

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS polls (
      worker_id TEXT NOT NULL,
      domain TEXT NOT NULL,
      last_poll INTEGER NOT NULL,
      PRIMARY KEY (worker_id, domain)
    )`);
  }

  /** Worker `workerId` polled the queue of `domain` at `at`. */
  record(workerId: string, domain: string | undefined, at: number): void {
    const key = pollKey(workerId, domain);
    const poll: PollData = domain === undefined ? { workerId, lastPollTime: at } : { workerId, domain, lastPollTime: at };
    this.#recent.set(key, poll);
    const written = this.#written.get(key);
    if (written !== undefined && at - written < POLL_WRITE_INTERVAL_MS) return;
    this.#sql.exec(
      `INSERT INTO polls (worker_id, domain, last_poll) VALUES (?1, ?2, ?3) ON CONFLICT (worker_id, domain) DO UPDATE SET last_poll = ?3`,
      workerId,
      domain ?? "",
      at,
    );
    this.#written.set(key, at);
    if (written === undefined) this.#forgetOldest();
  }

  /** Every worker's latest poll, the most recent first. */
  latest(): PollData[] {
    const polls = new Map<string, PollData>();
    for (const row of this.#sql.exec<{ worker_id: string; domain: string; last_poll: number }>(`SELECT worker_id, domain, last_poll FROM polls`)) {
      const domain = row.domain === "" ? undefined : row.domain;
      polls.set(pollKey(row.worker_id, domain), domain === undefined ? { workerId: row.worker_id, lastPollTime: row.last_poll } : { workerId: row.worker_id, domain, lastPollTime: row.last_poll });
    }
    for (const [key, poll] of this.#recent) {
      const stored = polls.get(key);
      // A key forgotten as one of the oldest is not brought back by a stale memory of it.
      if (stored !== undefined && poll.lastPollTime > stored.lastPollTime) polls.set(key, poll);
    }
    return [...polls.values()].sort((a, b) => b.lastPollTime - a.lastPollTime);
  }

  /**
   * Forgets every worker's poll of `domain` (a test run's own domain, see `TaskQueue.delist`): no worker will poll it
   * again, and its rows would only crowd the poll data of the task name.
   */
  forgetDomain(domain: string): void {
    this.#sql.exec(`DELETE FROM polls WHERE domain = ?`, domain);
    for (const [key, poll] of this.#recent) {
      if (poll.domain !== domain) continue;
      this.#recent.delete(key);
      this.#written.delete(key);
    }
  }

  /** Keeps the table (and memory) to {@link MAX_POLLERS} workers: many short-lived worker ids would grow it forever. */
  #forgetOldest(): void {
    const over = this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM polls`).one().n - MAX_POLLERS;
    if (over <= 0) return;
    const oldest = this.#sql
      .exec<{ worker_id: string; domain: string }>(`SELECT worker_id, domain FROM polls ORDER BY last_poll LIMIT ?`, over)
      .toArray();
    for (const row of oldest) {
      this.#sql.exec(`DELETE FROM polls WHERE worker_id = ? AND domain = ?`, row.worker_id, row.domain);
      const key = pollKey(row.worker_id, row.domain === "" ? undefined : row.domain);
      this.#recent.delete(key);
      this.#written.delete(key);
    }
  }
}

function pollKey(workerId: string, domain: string | undefined): string {
  return JSON.stringify([domain ?? null, workerId]);
}
