import { DurableObject } from "cloudflare:workers";
import type { HandOutLimits } from "../engine/tasks/simple";
import { executionStub } from "../worker/executions";
import { deliverOwedNotices, type NoticeAnswer } from "./owed-notices";
import { checkHeldPlaces, indexHeldPlaces, keepAlarm, nextPlaceCheckAt } from "./place-checks";
import { PRIORITY_TURN } from "./task-queue";

/** What {@link TaskLimit.enter} answers: the task may run now, or waits for a place. */
export type PlaceEntry = "admitted" | "queued";

/** What an execution answers about one of its places (see `WorkflowExecution.givePlace` and `placeState`). */
export type PlaceAnswer = NoticeAnswer;

/** What one task name's limit holds, for reading (see {@link TaskLimit.snapshot}). */
export interface TaskLimitSnapshot {
  limits: HandOutLimits | null;
  running: string[];
  waiting: string[];
}

/** How long after a notice that failed (the execution unreachable) the alarm tries again. */
const NOTICE_RETRY_MS = 2_000;

/** Most notices (or checks) one round sends before it yields to the alarm. */
const CALLS_PER_ROUND = 100;

/**
 * The order tasks get places in: their workflow's priority as worker queues hand tasks out (Orkes' order, see
 * `PRIORITY_TURN`), then the order they asked in. Also the key of the `waiting_in_turn` index, which only an ORDER BY
 * written exactly so uses.
 */
export const WAITING_ORDER = `${PRIORITY_TURN}, seq`;

/** The limit object of the tasks named `taskName` (HTTP, HTTP_POLL and SUB_WORKFLOW tasks whose task definition has limits; see `task-places.ts`). */
export function taskLimitAt(env: Env, taskName: string): DurableObjectStub<TaskLimit> {
  return env.TASK_LIMIT.get(env.TASK_LIMIT.idFromName(taskName));
}

/** `limits` with their concurrentExecLimit only when `only` (null when they have none): for a task the rate does not hold back. */
function heldOnly(limits: HandOutLimits | null, only: boolean): HandOutLimits | null {
  if (!only || limits === null) return limits;
  return limits.maxHeld === undefined ? null : { maxHeld: limits.maxHeld };
}

/**
 * The places of one task name under its task definition's limits, as Conductor's AsyncSystemTaskExecutor applies them
 * to async system tasks (`exceedsInProgressLimit`, `exceedsRateLimitPerFrequency`): at most `concurrentExecLimit` of
 * its tasks hold a place at once, and at most `rateLimitPerFrequency` are given one per window, by the registered
 * definition's limits or, for a task with its own `taskDefinition`, by that one's (see {@link enter}). Tasks wait for a place
 * by their workflow's priority, then in the order they asked, in this object's SQLite ({@link WAITING_ORDER}). A task's
 * execution asks (`enter`) and gives the place back (`leave`) by place id, each call repeated harmlessly after an
 * eviction; a place freed goes to the first task in that order, whose execution is told by a notice this object owes
 * until it is answered (the alarm retries it), as `ExecutionLimit` tells executions of a workflow rate limit. The alarm also asks, now and then, whether each place
 * held is still held, so that none leaks.
 */
export class TaskLimit extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  #delivering: Promise<void> | undefined;
  /** By place id, the delivery rounds in a row that could not reach its execution (see `NoticeRound.failures`). */
  readonly #noticeFailures = new Map<string, number>();
  /** By place id, the checks in a row that could not reach its execution (see `HeldPlaces.failures`). */
  readonly #checkFailures = new Map<string, number>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    // `told` is 0 for a place given from the queue whose execution has not been told yet; `checked_at` is when its
    // execution last said (or the place was given) that it is held.
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS places (place_id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, told INTEGER NOT NULL, checked_at INTEGER NOT NULL)`);
    indexHeldPlaces(this.#sql);
    // `limits` (JSON) are those of a waiting task's own taskDefinition, which hold for it whatever is registered; NULL
    // for a task following the registered definition's (see {@link enter}).
    // `no_rate` is 1 for a task held to the concurrentExecLimit only (a SUB_WORKFLOW: see `countsRate`).
    // `priority` is the waiting task's workflow's (see WAITING_ORDER).
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS waiting (seq INTEGER PRIMARY KEY AUTOINCREMENT, place_id TEXT NOT NULL UNIQUE, workflow_id TEXT NOT NULL, limits TEXT, no_rate INTEGER NOT NULL DEFAULT 0, priority INTEGER NOT NULL DEFAULT 0)`,
    );
    // Objects created before waiting tasks kept their own limits (or whether the rate counts) lack the columns.
    const created = this.#sql.exec<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'waiting'`).one().sql;
    if (!created.includes("limits")) this.#sql.exec(`ALTER TABLE waiting ADD COLUMN limits TEXT`);
    if (!created.includes("no_rate")) this.#sql.exec(`ALTER TABLE waiting ADD COLUMN no_rate INTEGER NOT NULL DEFAULT 0`);
    // Nor their workflow's priority: those rows wait as priority 0 (none), in the order they asked.
    if (!created.includes("priority")) this.#sql.exec(`ALTER TABLE waiting ADD COLUMN priority INTEGER NOT NULL DEFAULT 0`);
    // The first in turn found without reading the whole table: SQLite uses an index on an expression only for an ORDER
    // BY naming the same expression, so this is WAITING_ORDER's, word for word. Without it every entry, leave and fill
    // scanned and sorted every task waiting, quadratic in a fan-out of thousands of throttled tasks.
    this.#sql.exec(`CREATE INDEX IF NOT EXISTS waiting_in_turn ON waiting (${WAITING_ORDER})`);
    // Each place given, for the rate window: a start counts there for the window's length, ended or not.
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS starts (place_id TEXT PRIMARY KEY, started_at INTEGER NOT NULL)`);
  }

  /**
   * Place `placeId` (a task of execution `workflowId`) is asked for: given at once while its limits allow one more and
   * none waits before it, else queued. `limits` (null: none) are its task definition's as the execution knows it,
   * registered at `definedAt`: a copy of a registered definition follows the most recently registered one seen here
   * (by an entry or by {@link resize}), so an execution started under an older one does not bring its limits back, and
   * a definition registered anew, or deleted, reaches the tasks waiting under it. A `definedAt` of 0 is a task's own
   * `taskDefinition` (never registered): its limits hold for that task whatever is registered or deleted under its
   * name, as Conductor checks each task against its own copy; every place of the name counts against them. With
   * `rate` false (a SUB_WORKFLOW) only the concurrentExecLimit of whichever limits apply holds the task back.
   * `priority` is the task's workflow's: a queued task waits ahead of those of a lower priority (see {@link WAITING_ORDER}).
   */
  async enter(placeId: string, workflowId: string, limits: HandOutLimits | null, definedAt: number, rate = true, priority = 0): Promise<PlaceEntry> {
    const now = Date.now();
    const own = definedAt === 0;
    if (own) this.#noteWindow(limits);
    else this.#setLimits(limits, definedAt);
    let admittedOthers = this.#fill(now);
    let entry: PlaceEntry;
    if (this.#holds(placeId)) {
      // Given already (a repeated call, or given from the queue just now): it knows now.
      this.#sql.exec(`UPDATE places SET told = 1 WHERE place_id = ?`, placeId);
      entry = "admitted";
    } else if (this.#waits(placeId)) {
      entry = "queued";
    } else if (!this.#anyWaiting() && this.#room(now, heldOnly(own ? limits : this.#limits(), !rate))) {
      this.#give(placeId, workflowId, 1, now);
      entry = "admitted";
    } else {
      this.#sql.exec(
        `INSERT INTO waiting (place_id, workflow_id, limits, no_rate, priority) VALUES (?, ?, ?, ?, ?)`,
        placeId,
        workflowId,
        own ? JSON.stringify(limits) : null,
        rate ? 0 : 1,
        priority,
      );
      // Ahead of every task waiting (a higher priority), it may find room under its own limits where the one first in
      // turn before it, held to another task definition's, found none: then it runs now.
      if (this.#fill(now)) admittedOthers = true;
      if (this.#holds(placeId)) {
        this.#sql.exec(`UPDATE places SET told = 1 WHERE place_id = ?`, placeId);
        entry = "admitted";
      } else entry = "queued";
    }
    if (admittedOthers) this.#deliverSoon();
    await this.#armAlarm(now);
    return entry;
  }

  /** Place `placeId` is no longer held nor asked for (its task ended, or runs again under another id): it goes to the next. */
  async leave(placeId: string): Promise<void> {
    const now = Date.now();
    this.#sql.exec(`DELETE FROM places WHERE place_id = ?`, placeId);
    this.#sql.exec(`DELETE FROM waiting WHERE place_id = ?`, placeId);
    // Its checks' count goes with its place (the notices' go at their next round, see deliverOwedNotices).
    this.#checkFailures.delete(placeId);
    if (this.#fill(now)) this.#deliverSoon();
    await this.#armAlarm(now);
  }

  /**
   * Place `placeId` (a task of execution `workflowId`) is held again at once, whatever the limits: its SUB_WORKFLOW
   * task's child runs again in place (see `retakenPlaces`), as Conductor counts the reopened IN_PROGRESS task without
   * holding it back. Not a new start in the rate window (the task started once). Repeated harmlessly.
   */
  async take(placeId: string, workflowId: string): Promise<void> {
    const now = Date.now();
    this.#sql.exec(`DELETE FROM waiting WHERE place_id = ?`, placeId);
    // Held as of now, also when the row is still there (the leave it replaced never sent): a check's "gone" answered
    // before this take, still on its way, must find the place checked since and leave it (see `checkHeldPlaces`), and an
    // owed notice's "gone" must find it told (a delivery's `gone` frees only an untold place).
    this.#sql.exec(
      `INSERT INTO places (place_id, workflow_id, told, checked_at) VALUES (?, ?, 1, ?) ON CONFLICT (place_id) DO UPDATE SET told = 1, checked_at = excluded.checked_at`,
      placeId,
      workflowId,
      now,
    );
    await this.#armAlarm(now);
  }

  /**
   * The task definition of this name was registered anew at `definedAt` with `limits` (null: none, or deleted then):
   * kept as an entry's are, when no later one has been seen. Higher limits, or none, give tasks waiting under the
   * registered definition their places now (not those waiting under their own `taskDefinition`'s); lower ones let
   * those running finish.
   */
  async resize(limits: HandOutLimits | null, definedAt: number): Promise<void> {
    const now = Date.now();
    this.#setLimits(limits, definedAt);
    if (this.#fill(now)) this.#deliverSoon();
    await this.#armAlarm(now);
  }

  /** The registered definition's limits, the places held and those asked for (in turn). */
  async snapshot(): Promise<TaskLimitSnapshot> {
    return {
      limits: this.#limits(),
      running: this.#sql.exec<{ place_id: string }>(`SELECT place_id FROM places ORDER BY place_id`).toArray().map((row) => row.place_id),
      waiting: this.#sql.exec<{ place_id: string }>(`SELECT place_id FROM waiting ORDER BY ${WAITING_ORDER}`).toArray().map((row) => row.place_id),
    };
  }

  override async alarm(): Promise<void> {
    // Asks the executions of the places held longest whether their tasks still hold them, freeing those that do not.
    // Before the delivery round, not after: that round arms the alarm as it ends, and with places still due for this
    // check it would arm it at once, a second alarm run right after this one for nothing.
    await checkHeldPlaces({ sql: this.#sql, idColumn: "place_id", max: CALLS_PER_ROUND, ask: (place) => executionStub(this.env, place.workflowId).givePlace(place.id), failures: this.#checkFailures }, Date.now());
    // Places freed by the check, or by a rate window that reopened (what this alarm was set for), go to those waiting.
    if (this.#fill(Date.now())) this.#deliverSoon();
    await this.#deliver();
    await this.#armAlarm(Date.now());
  }

  /** The registered definition's limits kept (null: none, every task following it runs at once). */
  #limits(): HandOutLimits | null {
    const stored = this.ctx.storage.kv.get<string>("limits");
    return stored === undefined ? null : (JSON.parse(stored) as HandOutLimits | null);
  }

  /** Keeps `limits` when they come from the most recently registered definition seen here (see {@link enter}). */
  #setLimits(limits: HandOutLimits | null, definedAt: number): void {
    this.#noteWindow(limits);
    if (definedAt < (this.ctx.storage.kv.get<number>("definedAt") ?? Number.NEGATIVE_INFINITY)) return;
    this.ctx.storage.kv.put("limits", JSON.stringify(limits));
    this.ctx.storage.kv.put("definedAt", definedAt);
  }

  /**
   * Remembers the longest rate window any limits seen here set: starts are kept that long, as a task waiting under its
   * own `taskDefinition` may count them over a longer window than the registered one's.
   */
  #noteWindow(limits: HandOutLimits | null): void {
    const windowMs = limits?.windowMs;
    if (windowMs !== undefined && windowMs > (this.ctx.storage.kv.get<number>("longestWindowMs") ?? 0)) this.ctx.storage.kv.put("longestWindowMs", windowMs);
  }

  /** The limits the task first in turn must find room under (see {@link #waiterLimits}); the registered ones when none waits. */
  #headLimits(): HandOutLimits | null {
    const head = this.#sql.exec<{ limits: string | null; no_rate: number }>(`SELECT limits, no_rate FROM waiting ORDER BY ${WAITING_ORDER} LIMIT 1`).toArray()[0];
    return head === undefined ? this.#limits() : this.#waiterLimits(head.limits, head.no_rate);
  }

  /** A waiting task's limits, from its row's `limits`: its own `taskDefinition`'s, or (NULL) the registered ones; their concurrentExecLimit only when `noRate` is 1. */
  #waiterLimits(own: string | null, noRate: number): HandOutLimits | null {
    return heldOnly(own === null ? this.#limits() : (JSON.parse(own) as HandOutLimits | null), noRate === 1);
  }

  /** True when one more place may be given at `now` under `limits` (null: none). */
  #room(now: number, limits: HandOutLimits | null): boolean {
    if (limits === null) return true;
    if (limits.maxHeld !== undefined && this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM places`).one().n >= limits.maxHeld) return false;
    if (limits.maxPerWindow !== undefined && limits.windowMs !== undefined) {
      const started = this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM starts WHERE started_at > ?`, now - limits.windowMs).one().n;
      if (started >= limits.maxPerWindow) return false;
    }
    return true;
  }

  /** When the rate window of `limits` next lets one more start (undefined: it does not hold anything back). */
  #windowReopensAt(now: number, limits: HandOutLimits | null): number | undefined {
    if (limits?.maxPerWindow === undefined || limits.windowMs === undefined) return undefined;
    const inWindow = this.#sql
      .exec<{ started_at: number }>(`SELECT started_at FROM starts WHERE started_at > ? ORDER BY started_at DESC LIMIT 1 OFFSET ?`, now - limits.windowMs, limits.maxPerWindow - 1)
      .toArray();
    return inWindow.length === 0 ? undefined : inWindow[0]!.started_at + limits.windowMs;
  }

  #give(placeId: string, workflowId: string, told: 0 | 1, now: number): void {
    this.#sql.exec(`INSERT INTO places (place_id, workflow_id, told, checked_at) VALUES (?, ?, ?, ?)`, placeId, workflowId, told, now);
    this.#sql.exec(`INSERT OR REPLACE INTO starts (place_id, started_at) VALUES (?, ?)`, placeId, now);
  }

  #holds(placeId: string): boolean {
    return this.#sql.exec(`SELECT 1 FROM places WHERE place_id = ?`, placeId).toArray().length > 0;
  }

  #waits(placeId: string): boolean {
    return this.#sql.exec(`SELECT 1 FROM waiting WHERE place_id = ?`, placeId).toArray().length > 0;
  }

  /** True when a task waits (not COUNT(*), which reads every row: it is asked on every call). */
  #anyWaiting(): boolean {
    return this.#sql.exec(`SELECT 1 FROM waiting LIMIT 1`).toArray().length > 0;
  }

  /** Gives free places to the tasks first in turn (to be told: see {@link #deliver}); true when it gave any. */
  #fill(now: number): boolean {
    // Starts older than the longest window count for nothing.
    const longest = this.ctx.storage.kv.get<number>("longestWindowMs");
    this.#sql.exec(`DELETE FROM starts WHERE started_at <= ?`, longest === undefined ? Number.MAX_SAFE_INTEGER : now - longest);
    let gave = false;
    for (;;) {
      const next = this.#sql
        .exec<{ seq: number; place_id: string; workflow_id: string; limits: string | null; no_rate: number }>(`SELECT seq, place_id, workflow_id, limits, no_rate FROM waiting ORDER BY ${WAITING_ORDER} LIMIT 1`)
        .toArray()[0];
      if (next === undefined || !this.#room(now, this.#waiterLimits(next.limits, next.no_rate))) return gave;
      this.#sql.exec(`DELETE FROM waiting WHERE seq = ?`, next.seq);
      this.#give(next.place_id, next.workflow_id, 0, now);
      gave = true;
    }
  }

  /**
   * Keeps the alarm at the earliest of: a notice owed (retried), a rate window that lets a waiting task start, the next
   * check of a place held. None when nothing is held or waits.
   */
  async #armAlarm(now: number): Promise<void> {
    const candidates: number[] = [];
    if (this.#sql.exec(`SELECT 1 FROM places WHERE told = 0 LIMIT 1`).toArray().length > 0) candidates.push(now + NOTICE_RETRY_MS);
    if (this.#anyWaiting()) {
      const reopens = this.#windowReopensAt(now, this.#headLimits());
      if (reopens !== undefined) candidates.push(Math.max(reopens, now + 1));
    }
    const check = nextPlaceCheckAt(this.#sql, now);
    if (check !== undefined) candidates.push(check);
    await keepAlarm(this.ctx.storage, candidates, now);
  }

  /** Tells the tasks given a place now (not waited for), the alarm standing by should this isolate go first. */
  #deliverSoon(): void {
    void this.#deliver().catch(() => undefined);
  }

  /** Tells each task given a place and not told yet, one round at a time; what is left (failed, or beyond the round) is the alarm's. */
  #deliver(): Promise<void> {
    this.#delivering ??= this.#deliverRound().finally(() => {
      this.#delivering = undefined;
    });
    return this.#delivering;
  }

  async #deliverRound(): Promise<void> {
    await deliverOwedNotices({
      max: CALLS_PER_ROUND,
      // As ExecutionLimit's: an answer settles the giving it was asked about only (its checked_at while untold). A place
      // id comes back when its task's workflow, paused, gave the place up and asks again once resumed: a "gone" of the
      // paused task, on its way while the place was given again, must not free that later giving.
      untold: (limit) =>
        this.#sql
          .exec<{ place_id: string; workflow_id: string; checked_at: number }>(`SELECT place_id, workflow_id, checked_at FROM places WHERE told = 0 LIMIT ?`, limit)
          .toArray()
          .map((row) => ({ id: row.place_id, workflowId: row.workflow_id, givenAt: row.checked_at })),
      tell: (notice) => executionStub(this.env, notice.workflowId).givePlace(notice.id),
      taken: (notice) => this.#sql.exec(`UPDATE places SET told = 1, checked_at = ? WHERE place_id = ? AND told = 0 AND checked_at = ?`, Date.now(), notice.id, notice.givenAt),
      gone: (notice) => {
        // Its task ended, ran again, or its execution is gone: the place goes to the next.
        this.#sql.exec(`DELETE FROM places WHERE place_id = ? AND told = 0 AND checked_at = ?`, notice.id, notice.givenAt);
        this.#fill(Date.now());
      },
      failure: "task place notice failed; will retry",
      failures: this.#noticeFailures,
    });
    await this.#armAlarm(Date.now());
  }
}
