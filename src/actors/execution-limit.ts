import { DurableObject } from "cloudflare:workers";
import { currentLimitOf, currentLimitStatement } from "../worker/definitions";
import { executionStub } from "../worker/executions";
import { deliverOwedNotices, type NoticeAnswer } from "./owed-notices";
import { checkHeldPlaces, indexHeldPlaces, keepAlarm, nextPlaceCheckAt } from "./place-checks";

/** What {@link ExecutionLimit.enter} answers: the execution may run now, or waits to be admitted. */
export type Entry = "admitted" | "queued";

/** What an execution answers the limit's notice that it was admitted (see `WorkflowExecution.admit`). */
export type AdmissionAnswer = NoticeAnswer;

/** What one limit holds, for reading (see {@link ExecutionLimit.snapshot}). */
export interface LimitSnapshot {
  limit: number;
  running: string[];
  waiting: string[];
}

/** How long after a notice that failed (the execution unreachable) the alarm tries again. */
const NOTICE_RETRY_MS = 2_000;

/** Most notices (or checks) one round sends before it yields to the alarm (a limit freed by many ends at once). */
const CALLS_PER_ROUND = 100;

/** The limit of a key whose workflow's limit was removed: every execution waiting there is admitted. */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * How long a key stays idle (no place held, none waiting) before its object forgets it (see
 * {@link ExecutionLimit.alarm}): long enough that a key in steady use is not forgotten and recorded again between
 * its executions, each time a D1 write.
 */
export const IDLE_KEY_FORGET_MS = 60 * 60_000;

/** The limit object of `key` (one per rate limit key; see `rate-limit.ts`). */
export function executionLimitAt(env: Env, key: string): DurableObjectStub<ExecutionLimit> {
  return env.EXECUTION_LIMIT.get(env.EXECUTION_LIMIT.idFromName(key));
}

/**
 * One workflow rate limit key (Orkes' `rateLimitConfig`): which executions hold its places and which wait, in the
 * order they came, in its own SQLite. An execution enters when it starts (or is reopened) and leaves when it ends,
 * each call repeated harmlessly (an execution asks again after an eviction). A place freed by a leave goes to the
 * longest-waiting execution, which is told so by a notice this object owes until the execution has answered (the
 * alarm retries it): an execution never waits for a place that was given to it. The alarm also asks, now and then,
 * the execution of each place held whether it still holds it (`checkHeldPlaces`), so that a place whose leave was lost
 * is freed, not kept for good. A key idle for {@link IDLE_KEY_FORGET_MS} is forgotten: its storage and its D1
 * records go, as a key an execution's input names (Orkes' example is `${workflow.correlationId}`) may be used once and
 * never again, and kept, each would stay stored for good. Its next entry starts it afresh, with the limit the
 * entering workflow's stored definitions set now (see {@link #recordWorkflow}).
 */
export class ExecutionLimit extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  #delivering: Promise<void> | undefined;
  /**
   * Whether its tables exist. Made by the first entry, not by the constructor: every call starts the object, and a
   * forgotten key reached again by a call that enters nothing (a limit change that read its D1 record before it went, a
   * leave repeated after an eviction) must leave it as empty as the forget did, not a schema stored for good.
   */
  #tables: boolean;
  /** By place id, the delivery rounds in a row that could not reach its execution (see `NoticeRound.failures`). */
  readonly #noticeFailures = new Map<string, number>();
  /** By place id, the checks in a row that could not reach its execution (see `HeldPlaces.failures`). */
  readonly #checkFailures = new Map<string, number>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#tables = this.#sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'places'`).toArray().length > 0;
    // Made before their objects were forgotten: brought up to date as they start.
    if (this.#tables) this.#createTables();
  }

  /** Creates the tables (idempotent): at an entry into a key that has none (new, or forgotten), and for older objects as they start. */
  #createTables(): void {
    this.#tables = true;
    // `told` is 0 for a place given by a leave whose execution has not been told yet; `checked_at` is when its execution
    // last said (or the place was given or entered again) that it is held.
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS places (workflow_id TEXT PRIMARY KEY, told INTEGER NOT NULL, checked_at INTEGER NOT NULL DEFAULT 0)`);
    // Objects created before places were checked lack the column: their places are due for a check at the next alarm.
    const created = this.#sql.exec<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'places'`).one().sql;
    if (!created.includes("checked_at")) this.#sql.exec(`ALTER TABLE places ADD COLUMN checked_at INTEGER NOT NULL DEFAULT 0`);
    indexHeldPlaces(this.#sql);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS waiting (seq INTEGER PRIMARY KEY AUTOINCREMENT, workflow_id TEXT NOT NULL UNIQUE)`);
    // The workflows whose executions entered, once each recorded in D1's rate_limit_keys (see #recordWorkflow).
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS workflows (name TEXT PRIMARY KEY)`);
  }

  /**
   * Execution `workflowId` of workflow `workflowName` asks for a place under `key` (this object's): admitted at once while
   * one is free (and none waits before it), queued otherwise. `limit` is its definition's, registered at `definedAt`: the
   * limit kept is that of the most recently registered definition that entered (or changed it, see {@link resize}), so a
   * retried old execution does not bring its old limit back. A lower limit lets those already running finish; a higher
   * one admits waiting executions at once. The workflow is recorded (see {@link #recordWorkflow}) so that a change of its
   * limit reaches this key.
   */
  async enter(key: string, workflowId: string, limit: number, definedAt: number, workflowName?: string): Promise<Entry> {
    // Decided before the D1 record is awaited, not after: that await lets other calls in (only storage holds the input
    // gate), and a leave of this execution coming in then, applied first, would find nothing and the entry take its
    // place after it, for an execution that has left: a place nothing frees. Taken first, the leave frees it.
    const now = Date.now();
    const { entry, admittedOthers } = this.#enterNow(key, workflowId, limit, definedAt, now);
    if (admittedOthers) this.#deliverSoon();
    await this.#armAlarm(now);
    if (workflowName !== undefined) await this.#recordWorkflow(key, workflowName);
    return entry;
  }

  /**
   * The synchronous part of {@link enter}: one turn, so no other call comes in between its reads and writes. Says too
   * whether it gave places to executions that waited (to be told).
   */
  #enterNow(key: string, workflowId: string, limit: number, definedAt: number, now: number): { entry: Entry; admittedOthers: boolean } {
    if (!this.#tables) this.#createTables();
    this.ctx.storage.kv.put("key", key);
    this.#setLimit(limit, definedAt);
    const admittedOthers = this.#fill(now);
    let entry: Entry;
    if (this.#holds(workflowId)) {
      // Admitted already (a repeated call, or admitted from the queue just now): it knows now. Held as of now: a
      // check's "gone" answered before this entry, still on its way, must find the place checked since and leave it.
      this.#sql.exec(`UPDATE places SET told = 1, checked_at = ? WHERE workflow_id = ?`, now, workflowId);
      entry = "admitted";
    } else if (this.#waits(workflowId)) {
      entry = "queued";
    } else if (this.#placesTaken() < this.#limit()) {
      this.#sql.exec(`INSERT INTO places (workflow_id, told, checked_at) VALUES (?, 1, ?)`, workflowId, now);
      entry = "admitted";
    } else {
      this.#sql.exec(`INSERT INTO waiting (workflow_id) VALUES (?)`, workflowId);
      entry = "queued";
    }
    return { entry, admittedOthers };
  }

  /** Execution `workflowId` ended (or no longer counts here): its place, or its turn, goes; a place freed goes to the next. */
  async leave(workflowId: string): Promise<void> {
    // Nothing entered here (or all of it forgotten): nothing to give up, and nothing to store.
    if (!this.#tables) return;
    const now = Date.now();
    this.#sql.exec(`DELETE FROM places WHERE workflow_id = ?`, workflowId);
    this.#sql.exec(`DELETE FROM waiting WHERE workflow_id = ?`, workflowId);
    // Its checks' count goes with its place: a retry or restart entering again under the id counts afresh.
    this.#checkFailures.delete(workflowId);
    if (this.#fill(now)) this.#deliverSoon();
    await this.#armAlarm(now);
  }

  /**
   * Workflow `workflowName`, whose executions entered here, changed its limit at `definedAt` (its rate-limit endpoint,
   * a definition registered anew, or its latest version deleted) to `limit`, or none (null). Kept as an entry's limit is, when no definition registered
   * later has entered since: a higher limit admits waiting executions now, a lower one lets those running finish. None
   * admits everyone waiting, but only on a key no other workflow's executions entered: theirs still have a limit here,
   * which one workflow giving up its own must not lift.
   */
  async resize(workflowName: string, limit: number | null, definedAt: number): Promise<void> {
    // Forgotten since the caller read its D1 record (or never entered): nothing waits here, and the next entry reads the stored limit.
    if (!this.#tables || this.ctx.storage.kv.get<string>("key") === undefined) return;
    await this.#changeLimit(workflowName, limit, definedAt);
  }

  /** {@link resize}'s change, on a key entered (also by an entry that found the workflow's limit changed, see {@link #recordWorkflow}). */
  async #changeLimit(workflowName: string, limit: number | null, definedAt: number): Promise<void> {
    if (limit === null && this.#otherWorkflowEntered(workflowName)) return;
    const now = Date.now();
    this.#setLimit(limit ?? NO_LIMIT, definedAt);
    if (this.#fill(now)) this.#deliverSoon();
    await this.#armAlarm(now);
  }

  /**
   * Whether a workflow other than `workflowName` entered this key: recorded here, or unrecorded by a forget not yet done
   * (its D1 delete failed and the alarm retries it), whose names it keeps until then.
   */
  #otherWorkflowEntered(workflowName: string): boolean {
    if (this.#sql.exec(`SELECT 1 FROM workflows WHERE name != ? LIMIT 1`, workflowName).toArray().length > 0) return true;
    return (this.ctx.storage.kv.get<string[]>("forgetting") ?? []).some((name) => name !== workflowName);
  }

  /** The limit, the executions holding its places and those waiting (in turn). */
  async snapshot(): Promise<LimitSnapshot> {
    if (!this.#tables) return { limit: this.#limit(), running: [], waiting: [] };
    return {
      limit: this.#limit(),
      running: this.#sql.exec<{ workflow_id: string }>(`SELECT workflow_id FROM places ORDER BY workflow_id`).toArray().map((row) => row.workflow_id),
      waiting: this.#sql.exec<{ workflow_id: string }>(`SELECT workflow_id FROM waiting ORDER BY seq`).toArray().map((row) => row.workflow_id),
    };
  }

  override async alarm(): Promise<void> {
    if (!this.#tables) return;
    if (await this.#forgetIfIdle(Date.now())) return;
    // Asks the executions of the places held longest whether they still hold them, freeing those that do not. Before the
    // delivery round, not after: that round arms the alarm as it ends, and with places still due for this check it would
    // arm it at once, a second alarm run right after this one for nothing.
    const asked = await checkHeldPlaces({ sql: this.#sql, idColumn: "workflow_id", max: CALLS_PER_ROUND, ask: (place) => executionStub(this.env, place.workflowId).holdsPlace(this.#key()), failures: this.#checkFailures }, Date.now());
    if (asked && this.#fill(Date.now())) this.#deliverSoon();
    await this.#deliver();
    await this.#armAlarm(Date.now());
  }

  /**
   * Forgets the key when it has been idle for {@link IDLE_KEY_FORGET_MS}: its D1 records (by their primary key, the
   * workflows this object recorded), then its storage, alarm included. With no other call let in meanwhile, so an
   * entry is either before it (the key is not idle, and kept) or after it (recorded afresh). True when it forgot.
   * A D1 failure throws, and the alarm is retried.
   */
  async #forgetIfIdle(now: number): Promise<boolean> {
    const since = this.ctx.storage.kv.get<number>("idleSince");
    if (since === undefined || now < since + IDLE_KEY_FORGET_MS || !this.#idle()) return false;
    let failure: unknown;
    await this.ctx.blockConcurrencyWhile(async () => {
      const key = this.#key();
      const recorded = this.#sql.exec<{ name: string }>(`SELECT name FROM workflows`).toArray().map((row) => row.name);
      const names = [...new Set([...recorded, ...(this.ctx.storage.kv.get<string[]>("forgetting") ?? [])])];
      // Unrecorded here before D1 is asked, the names kept for the forget retried: should D1's answer be lost, or the
      // object stop before its own deletion, an entry meanwhile records its workflow afresh rather than trust a record
      // D1 may no longer hold.
      this.#sql.exec(`DELETE FROM workflows`);
      this.ctx.storage.kv.put("forgetting", names);
      try {
        if (names.length > 0) {
          await this.env.DB.batch(names.map((name) => this.env.DB.prepare(`DELETE FROM rate_limit_keys WHERE workflow_name = ? AND rate_limit_key = ?`).bind(name, key)));
        }
      } catch (error) {
        // Caught, not thrown from here: a callback that throws resets the object.
        failure = error;
        return;
      }
      await this.ctx.storage.deleteAll();
      this.#tables = false;
    });
    if (failure !== undefined) throw failure;
    return true;
  }

  /** No place held, none waiting. */
  #idle(): boolean {
    return this.#placesTaken() === 0 && this.#sql.exec(`SELECT 1 FROM waiting LIMIT 1`).toArray().length === 0;
  }

  /** This object's key (stored by the first entry). */
  #key(): string {
    return this.ctx.storage.kv.get<string>("key") ?? "";
  }

  #limit(): number {
    return this.ctx.storage.kv.get<number>("limit") ?? 0;
  }

  /** Keeps `limit` when it comes from the most recently registered definition seen here (see {@link enter}). */
  #setLimit(limit: number, definedAt: number): void {
    const kept = this.ctx.storage.kv.get<number>("definedAt") ?? Number.NEGATIVE_INFINITY;
    // The same as kept (every entry of a current execution, and the stored limit its key's first entry reads): no write.
    if (definedAt < kept || (definedAt === kept && limit === this.#limit())) return;
    this.ctx.storage.kv.put("limit", limit);
    this.ctx.storage.kv.put("definedAt", definedAt);
  }

  /**
   * Records in D1 that executions of `workflowName` use this key, once per workflow (a failure fails the entry, which the
   * execution asks again, finding its place or turn as the failed call left it): what a change of that workflow's limit
   * reads to reach this object. Read in the same round trip, that workflow's limit as its stored definitions set it now
   * is taken as a change told would be: a change made while this key was not recorded (new, or forgotten after an idle
   * hour) was told to none of it, and an execution of an older definition entering first (retried, restarted) would
   * otherwise set its own, higher perhaps, until one of a later definition entered.
   */
  async #recordWorkflow(key: string, workflowName: string): Promise<void> {
    if (this.#sql.exec(`SELECT 1 FROM workflows WHERE name = ?`, workflowName).toArray().length > 0) return;
    const [, current] = await this.env.DB.batch<{ rate_limit: number | null; defined_at: number }>([
      this.env.DB.prepare(`INSERT OR IGNORE INTO rate_limit_keys (workflow_name, rate_limit_key) VALUES (?, ?)`).bind(workflowName, key),
      currentLimitStatement(this.env.DB, workflowName),
    ]);
    this.#sql.exec(`INSERT OR IGNORE INTO workflows (name) VALUES (?)`, workflowName);
    const limit = currentLimitOf(current);
    if (limit !== undefined) await this.#changeLimit(workflowName, limit.limit, limit.definedAt);
  }

  #holds(workflowId: string): boolean {
    return this.#sql.exec(`SELECT 1 FROM places WHERE workflow_id = ?`, workflowId).toArray().length > 0;
  }

  #waits(workflowId: string): boolean {
    return this.#sql.exec(`SELECT 1 FROM waiting WHERE workflow_id = ?`, workflowId).toArray().length > 0;
  }

  #placesTaken(): number {
    return this.#sql.exec<{ taken: number }>(`SELECT COUNT(*) AS taken FROM places`).one().taken;
  }

  /** Gives free places to the executions that waited longest (to be told: see {@link #deliver}); true when it gave any. */
  #fill(now: number): boolean {
    const free = this.#limit() - this.#placesTaken();
    if (free <= 0) return false;
    const next = this.#sql.exec<{ seq: number; workflow_id: string }>(`SELECT seq, workflow_id FROM waiting ORDER BY seq LIMIT ?`, free).toArray();
    for (const row of next) {
      this.#sql.exec(`DELETE FROM waiting WHERE seq = ?`, row.seq);
      this.#sql.exec(`INSERT INTO places (workflow_id, told, checked_at) VALUES (?, 0, ?)`, row.workflow_id, now);
    }
    return next.length > 0;
  }

  /**
   * Keeps the alarm at the earliest of: a notice owed (retried), the next check of a place held, and, for an idle key,
   * when it is to be forgotten ({@link IDLE_KEY_FORGET_MS} after it became idle).
   */
  async #armAlarm(now: number): Promise<void> {
    // Forgotten meanwhile (a delivery round ending after it): no alarm, nothing stored.
    if (!this.#tables) return;
    const candidates: number[] = [];
    // Written only as the key turns idle or busy, not again by each call meanwhile (a write each).
    const since = this.ctx.storage.kv.get<number>("idleSince");
    if (this.#idle()) {
      if (since === undefined) this.ctx.storage.kv.put("idleSince", now);
      candidates.push((since ?? now) + IDLE_KEY_FORGET_MS);
    } else if (since !== undefined) {
      this.ctx.storage.kv.delete("idleSince");
    }
    if (this.#sql.exec(`SELECT 1 FROM places WHERE told = 0 LIMIT 1`).toArray().length > 0) candidates.push(now + NOTICE_RETRY_MS);
    const check = nextPlaceCheckAt(this.#sql, now);
    if (check !== undefined) candidates.push(check);
    await keepAlarm(this.ctx.storage, candidates, now);
  }

  /** Tells the admitted executions now (not waited for), the alarm (armed by the caller) standing by should this isolate go first. */
  #deliverSoon(): void {
    void this.#deliver().catch(() => undefined);
  }

  /** Tells each admitted execution not told yet, one delivery at a time; what is left (failed, or beyond this round) is the alarm's. */
  #deliver(): Promise<void> {
    this.#delivering ??= this.#deliverRound().finally(() => {
      this.#delivering = undefined;
    });
    return this.#delivering;
  }

  async #deliverRound(): Promise<void> {
    const key = this.#key();
    await deliverOwedNotices({
      max: CALLS_PER_ROUND,
      // A place not told yet keeps the time it was given as its checked_at: the answer settles that giving only. While
      // the answer is on its way the execution may leave, enter again and be given the place anew (its id is the
      // execution's): taken for that one, the execution was never told of it, and waited for good; gone, it lost it.
      untold: (limit) =>
        this.#sql
          .exec<{ workflow_id: string; checked_at: number }>(`SELECT workflow_id, checked_at FROM places WHERE told = 0 LIMIT ?`, limit)
          .toArray()
          .map((row) => ({ id: row.workflow_id, workflowId: row.workflow_id, givenAt: row.checked_at })),
      tell: (notice) => executionStub(this.env, notice.workflowId).admit(key),
      taken: (notice) => this.#sql.exec(`UPDATE places SET told = 1, checked_at = ? WHERE workflow_id = ? AND told = 0 AND checked_at = ?`, Date.now(), notice.workflowId, notice.givenAt),
      gone: (notice) => {
        // It ended, was removed, or counts under another key now: the place goes to the next.
        this.#sql.exec(`DELETE FROM places WHERE workflow_id = ? AND told = 0 AND checked_at = ?`, notice.workflowId, notice.givenAt);
        this.#fill(Date.now());
      },
      failure: "admission notice failed; will retry",
      failures: this.#noticeFailures,
    });
    await this.#armAlarm(Date.now());
  }
}
