import { DurableObject } from "cloudflare:workers";
import { ACTIVE_WORKER_POLL_MS, chooseWorkerDomain, workerQueueKey, type HandOutLimits, type WorkerQueueEntry } from "../engine/tasks/simple";
import { admitted, HandOutLedger } from "./hand-out-ledger";
import { PollLog, type PollData } from "./poll-log";
import { WakeSignal } from "./wake-signal";
import { retryFailureLogged } from "./retry-log";

/** A task a poll took from the queue for a while (see {@link TaskQueue.lease}). */
export interface LeasedTask {
  taskId: string;
  workflowId: string;
  /** When the lease ends: the entry's `visible_at` as the lease set it, until a push of the task moves it. */
  leasedUntil: number;
  /** When it was visible from before the lease: where {@link TaskQueue.giveBack} puts it back in the queue's order. */
  visibleAt?: number;
  /** True when its task has limits, so the poll's answer is recorded in the queue's {@link HandOutLedger}. */
  limited?: true;
  /**
   * True when the queue counts it among the tasks held at once (its limits, as pushed, have a `maxHeld`): its
   * execution must release it, whatever limits its definition holds by then (an upgrade may have dropped them).
   */
  holdsPlace?: true;
}

/**
 * A leased task its execution answered for (see `PollAnswer`): handed out to the poll's worker ("polled"), found no
 * longer waiting ("gone"), or kept for later (its workflow is paused: the entry stays hidden until its lease ends).
 */
export interface AnsweredTask extends LeasedTask {
  outcome: "polled" | "gone" | "later";
}

/**
 * A row's turn by its `priority` column (its workflow's priority), as SQL: a lower turn goes first, so 1 first, 99 last
 * of 1 to 99, then 0 (none). {@link QUEUE_ORDER}'s first key, and the order of the tasks waiting for a place under a
 * task definition's limits (`TaskLimit`).
 */
export const PRIORITY_TURN = `CASE WHEN priority = 0 THEN 100 ELSE priority END`;

/**
 * The order entries are handed out in: Orkes' workflow priority (https://orkes.io/content/workflow-priority), a lower
 * number first, so 1 is the highest and 99 the lowest, and 0 (the default: no priority) after all of 1 to 99; within
 * one priority the oldest first (the earliest visible, then the first queued). Computed at each lease from the stored
 * priority, which is the workflow's as given, so the entries of queues written before need no migration.
 * (conductor-oss's SQL queues order by priority descending; Orkes' own queues and its documentation go this way.)
 */
const QUEUE_ORDER = `${PRIORITY_TURN}, visible_at, rowid`;

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
  /** Polls waiting here for an entry to become visible, woken by every push, give-back, release and dropped reservation. */
  readonly #pushed = new WakeSignal();
  readonly #handOuts: HandOutLedger;
  readonly #polls: PollLog;
  /** Set once this queue is in D1's `worker_queues` (see {@link TaskQueue.#list}): remembered in its SQLite too. */
  #listed: boolean;
  /** The listing (or delisting, see {@link TaskQueue.delist}) of this queue in D1 on its way. */
  #listing: Promise<void> | undefined;
  /** Listings in a row that failed in this instance (their log lines thinned out by {@link retryFailureLogged}). */
  #listFailures = 0;
  /**
   * Set while a delisting is on its way (see {@link TaskQueue.delist}): true once the queue was used meanwhile, when
   * it is listed again as soon as the deletion is done (sent before that, the listing could arrive first and be lost).
   */
  #usedWhileDelisting: boolean | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS entries (
      task_id TEXT PRIMARY KEY,
      workflow_id TEXT NOT NULL,
      priority INTEGER NOT NULL,
      visible_at INTEGER NOT NULL,
      limits TEXT
    )`);
    // Queues created before tasks had limits lack the column.
    const created = this.#sql.exec<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'entries'`).one().sql;
    if (!created.includes("limits")) this.#sql.exec(`ALTER TABLE entries ADD COLUMN limits TEXT`);
    this.#sql.exec(`CREATE INDEX IF NOT EXISTS entries_by_turn ON entries (visible_at, priority)`);
    this.#handOuts = new HandOutLedger(this.#sql);
    this.#polls = new PollLog(this.#sql);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS listing (listed INTEGER NOT NULL)`);
    this.#listed = this.#sql.exec(`SELECT 1 FROM listing LIMIT 1`).toArray().length > 0;
  }

  /**
   * Lists this queue in D1's `worker_queues` the first time it is used (pushed to, leased from, or told of a poll), in
   * the background: the call that uses it does not wait for D1. A failure (or an eviction) leaves it to the next use.
   */
  #list(): void {
    if (this.#listed) return;
    if (this.#listing !== undefined) {
      if (this.#usedWhileDelisting !== undefined) this.#usedWhileDelisting = true;
      return;
    }
    const queue = this.#queue();
    if (queue === undefined) return;
    this.#listing = this.env.DB.prepare(`INSERT OR IGNORE INTO worker_queues (task_name, domain) VALUES (?, ?)`)
      .bind(queue.taskName, queue.domain ?? "")
      .run()
      .then(
        () => {
          this.#sql.exec(`INSERT INTO listing (listed) VALUES (1)`);
          this.#listed = true;
          this.#listFailures = 0;
        },
        (error: unknown) => {
          // Tried again at each use, a poll's too (workers poll many times a second while D1 fails): thinned out.
          const attempt = ++this.#listFailures;
          if (retryFailureLogged(attempt)) console.error(JSON.stringify({ msg: "could not list a worker queue; will try again on its next use", queue: this.ctx.id.name, attempt, error: String(error) }));
        },
      )
      .catch(ignoreResetObject)
      .finally(() => {
        this.#listing = undefined;
      });
  }

  /** This queue's task name and domain (null: the default one), from its object's name (see `workerQueueKey`). */
  #queue(): { taskName: string; domain: string | null } | undefined {
    const key = this.ctx.id.name;
    if (key === undefined) return undefined;
    const [domain, taskName] = JSON.parse(key) as [string | null, string];
    return { taskName, domain };
  }

  /**
   * Takes this queue out of D1's `worker_queues` once test run `workflowId`, which ended, no longer needs it: the queue
   * is one of the run's own random domain (see `WorkflowTestPlan.domain`), which no real worker polls, so left listed it
   * would crowd the listings (`/api/tasks/queue/all`, the metrics) forever. Any entry of the run still here goes (an
   * ended run has no task waiting). A queue still holding another execution's entries (a child sharing the domain)
   * stays listed: that execution's own ending delists it. The poll data of the domain, held by the task name's default
   * queue, is forgotten too. Its next use (a later run of the execution: a retry, a rerun) lists it again. Never acts
   * on a default queue. Throws when D1 or the default queue could not be reached: the execution tries again.
   */
  async delist(workflowId: string): Promise<void> {
    const queue = this.#queue();
    if (queue === undefined || queue.domain === null) return;
    this.#sql.exec(`DELETE FROM entries WHERE workflow_id = ?`, workflowId);
    // A listing on its way would put the row back after the deletion.
    while (this.#listing !== undefined) await this.#listing;
    if (this.#sql.exec(`SELECT 1 FROM entries LIMIT 1`).toArray().length > 0) return;
    // Forgotten here first: should the deletion fail, the next use lists the queue again (INSERT OR IGNORE).
    this.#listed = false;
    this.#sql.exec(`DELETE FROM listing`);
    this.#usedWhileDelisting = false;
    const deletion = this.env.DB.prepare(`DELETE FROM worker_queues WHERE task_name = ? AND domain = ?`).bind(queue.taskName, queue.domain).run();
    this.#listing = deletion.then(
      () => undefined,
      () => undefined,
    );
    try {
      await deletion;
    } finally {
      const used = this.#usedWhileDelisting;
      this.#usedWhileDelisting = undefined;
      this.#listing = undefined;
      if (used) this.#list();
    }
    await taskQueueAt(this.env, workerQueueKey(queue.taskName, undefined)).forgetPolls(queue.domain);
  }

  /** Forgets the workers' polls of `domain` (this is a task name's default queue: see {@link TaskQueue.delist}). */
  async forgetPolls(domain: string): Promise<void> {
    this.#polls.forgetDomain(domain);
  }

  /** Adds tasks, or moves a task already here to its new `visibleAt` (a pushed entry replaces a lease). */
  async push(entries: readonly WorkerQueueEntry[]): Promise<void> {
    this.#list();
    for (const entry of entries) {
      this.#sql.exec(
        `INSERT INTO entries (task_id, workflow_id, priority, visible_at, limits) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (task_id) DO UPDATE SET workflow_id = excluded.workflow_id, priority = excluded.priority, visible_at = excluded.visible_at, limits = excluded.limits`,
        entry.taskId,
        entry.workflowId,
        entry.priority,
        entry.visibleAt,
        entry.limits === undefined ? null : JSON.stringify(entry.limits),
      );
    }
    this.#pushed.wakeAll();
  }

  /**
   * Takes up to `count` visible entries in {@link QUEUE_ORDER}, hiding them for `leaseMs`, as many as
   * their tasks' limits allow (see {@link admitted}). When none may be taken, waits up to `waitMs` (at most
   * {@link MAX_POLL_WAIT_MS}) for one to be pushed, to become visible, or to be allowed by a release or a rate window.
   */
  async lease(count: number, waitMs: number, leaseMs: number, poller?: { workerId: string }): Promise<LeasedTask[]> {
    this.#list();
    if (poller !== undefined) this.#polls.record(poller.workerId, undefined, Date.now());
    const deadline = Date.now() + Math.min(Math.max(waitMs, 0), MAX_POLL_WAIT_MS);
    for (;;) {
      const now = Date.now();
      const candidates = this.#sql
        .exec<{ task_id: string; workflow_id: string; visible_at: number; limits: string | null; turn: number }>(
          `SELECT task_id, workflow_id, visible_at, limits, ${PRIORITY_TURN} AS turn FROM entries WHERE visible_at <= ? ORDER BY ${QUEUE_ORDER} LIMIT ?`,
          now,
          count,
        )
        .toArray()
        .map((row) => ({ taskId: row.task_id, workflowId: row.workflow_id, visibleAt: row.visible_at, turn: row.turn, limits: row.limits === null ? undefined : (JSON.parse(row.limits) as HandOutLimits) }));
      let reopensAt: number | undefined;
      let taken = candidates;
      if (candidates.some((candidate) => candidate.limits !== undefined)) {
        this.#handOuts.prune(now);
        const allowed = admitted(
          candidates.map((candidate) => candidate.limits),
          this.#handOuts.room(now),
        );
        taken = candidates.slice(0, allowed.count);
        reopensAt = allowed.reopensAt;
      }
      if (taken.length > 0) {
        // In the same synchronous turn as the read, so no other poll takes them too.
        const leasedUntil = now + leaseMs;
        for (const task of taken) this.#sql.exec(`UPDATE entries SET visible_at = ? WHERE task_id = ?`, leasedUntil, task.taskId);
        const limited = taken.flatMap((task) => (task.limits === undefined ? [] : [{ taskId: task.taskId, limits: task.limits }]));
        if (limited.length > 0) this.#handOuts.reserve(limited, now, leasedUntil);
        return taken.map((task) => {
          const leased: LeasedTask = { taskId: task.taskId, workflowId: task.workflowId, leasedUntil, visibleAt: task.visibleAt };
          if (task.limits !== undefined) leased.limited = true;
          if (task.limits?.maxHeld !== undefined) leased.holdsPlace = true;
          return leased;
        });
      }
      const remaining = deadline - now;
      if (remaining <= 0) return [];
      // A release or a push wakes the poll; so do the rate window that held the candidates back and the next entry
      // to become visible (a callback's, a retry's, a lease's end) that may be taken then, whichever comes first.
      const next = earliest(reopensAt, this.#nextTurnVisibleAt(now, candidates[0]?.turn));
      await this.#pushed.next(next === undefined ? remaining : Math.min(remaining, Math.max(next - now, 1)));
    }
  }

  /**
   * When the next hidden entry that a poll could take once visible becomes visible (undefined: none). With the queue's
   * first visible entry held back by a limit (`heldTurn`, its priority's turn), only an entry of an earlier turn (a
   * higher priority) can: one of the same turn or later, visible later, comes after it in {@link QUEUE_ORDER}, and the
   * held entry stops those behind it (see `admitted`). Waking for those would wake every poll waiting here at each
   * of them (each callback's, each retry's, each lease's end), to find the same held entry first again.
   */
  #nextTurnVisibleAt(now: number, heldTurn: number | undefined): number | undefined {
    const query =
      heldTurn === undefined
        ? this.#sql.exec<{ at: number | null }>(`SELECT MIN(visible_at) AS at FROM entries WHERE visible_at > ?`, now)
        : this.#sql.exec<{ at: number | null }>(`SELECT MIN(visible_at) AS at FROM entries WHERE visible_at > ? AND ${PRIORITY_TURN} < ?`, now, heldTurn);
    return query.one().at ?? undefined;
  }

  /**
   * Drops entries whose executions answered the poll (the task was handed out, or no longer waits), and records the
   * answers for limited tasks (one kept for later no longer counts as handed out). An entry pushed again since it was
   * leased (the task was queued anew meanwhile: a rerun, an IN_PROGRESS report) is not the one the answer was about,
   * and stays. A limited task not handed out frees the place its reservation held, so polls waiting are woken (as by a
   * release): a poll held back only by that reservation gets the next task now, not at the end of its wait.
   */
  async ack(answered: readonly AnsweredTask[]): Promise<void> {
    for (const entry of answered) {
      if (entry.outcome !== "later") this.#sql.exec(`DELETE FROM entries WHERE task_id = ? AND visible_at = ?`, entry.taskId, entry.leasedUntil);
    }
    const limited = answered.filter((entry) => entry.limited === true);
    if (limited.length === 0) return;
    this.#handOuts.settle(limited.map((entry) => ({ taskId: entry.taskId, handedOut: entry.outcome === "polled", answerDue: entry.leasedUntil })));
    // Only a reservation dropped frees anything: a task handed out stays held, so a plain answer wakes no poll.
    if (limited.some((entry) => entry.outcome !== "polled")) this.#pushed.wakeAll();
  }

  /**
   * Gives back entries a poll leased but did not hand out, its answer being full (see the router's batch poll): visible
   * again at once, in their place (as visible as before the lease), and a limited one's reservation forgotten, as for an
   * entry kept for later. An entry pushed again since it was leased stays as the push left it. Polls waiting are woken.
   */
  async giveBack(entries: readonly LeasedTask[]): Promise<void> {
    const now = Date.now();
    for (const entry of entries) this.#sql.exec(`UPDATE entries SET visible_at = ? WHERE task_id = ? AND visible_at = ?`, Math.min(entry.visibleAt ?? now, now), entry.taskId, entry.leasedUntil);
    const limited = entries.filter((entry) => entry.limited === true);
    if (limited.length > 0) this.#handOuts.settle(limited.map((entry) => ({ taskId: entry.taskId, handedOut: false, answerDue: entry.leasedUntil })));
    this.#pushed.wakeAll();
  }

  /**
   * Takes out the entries of tasks that no longer wait for a worker (completed from outside, canceled, timed out: see
   * `leftWorkerQueues`), so that the queue's size no longer counts them. An entry a poll has leased meanwhile goes too;
   * that poll's execution answers "gone", and its drop finds nothing left. Polls waiting are woken: the entry gone may
   * have been the one held back by a limit that kept those behind it waiting.
   */
  async remove(taskIds: readonly string[]): Promise<void> {
    let removed = 0;
    for (const taskId of taskIds) removed += this.#sql.exec(`DELETE FROM entries WHERE task_id = ?`, taskId).rowsWritten;
    if (removed > 0) this.#pushed.wakeAll();
  }

  /**
   * Limited tasks that are no longer with their workers (their executions say so once, durably): each frees its
   * place among the tasks held at once, and a poll waiting for one is woken.
   */
  async release(taskIds: readonly string[]): Promise<void> {
    this.#handOuts.release(taskIds);
    this.#pushed.wakeAll();
  }

  /**
   * A worker polled this task name's queue of `domain` (this object holds the poll data of every domain of its task
   * name: it is the default domain's queue).
   */
  async recordPoll(workerId: string, domain: string | undefined): Promise<void> {
    this.#list();
    this.#polls.record(workerId, domain, Date.now());
  }

  /** The latest poll of each worker of this task name, in any domain (see {@link TaskQueue.recordPoll}). */
  async pollData(): Promise<PollData[]> {
    return this.#polls.latest();
  }

  /**
   * Conductor's choice among the fallback domains `choices` of a task of this name (see `chooseWorkerDomain`): the
   * first whose workers polled within {@link ACTIVE_WORKER_POLL_MS}, by the poll data this object holds; null for the
   * default queue.
   */
  async chooseDomain(choices: string[]): Promise<string | null> {
    const since = Date.now() - ACTIVE_WORKER_POLL_MS;
    const active = new Set(this.#polls.latest().flatMap((poll) => (poll.domain !== undefined && poll.lastPollTime >= since ? [poll.domain] : [])));
    return chooseWorkerDomain(choices, (domain) => active.has(domain)) ?? null;
  }

  /** How many entries the queue holds, leased ones included (Conductor's queue size). */
  async size(): Promise<number> {
    return this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM entries`).one().n;
  }
}

/** The earlier of two moments, either possibly unknown (undefined). */
function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** Storage throws once the runtime resets the object; its next instance lists the queue then. */
function ignoreResetObject(): void {}

/** The queue object holding key `queue` (see `workerQueueKey`). */
export function taskQueueAt(env: Env, queue: string): DurableObjectStub<TaskQueue> {
  return env.TASK_QUEUE.get(env.TASK_QUEUE.idFromName(queue));
}
