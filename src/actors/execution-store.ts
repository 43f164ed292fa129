import type { JsonObject, TaskExecution, WorkflowDef, WorkflowExecution } from "../engine/model";

/**
 * Workflow-level fields as stored: everything but the task list and the (rarely changing) definition; the input, output
 * and variables are apart (see {@link PAYLOAD_PARTS}), except in executions stored before they were, whose header holds
 * them. `variables` is absent from executions stored before they were kept.
 */
type StoredHeader = Omit<WorkflowExecution, "tasks" | "definition" | "variables"> & { variables?: JsonObject };

/**
 * The workflow's payloads, each stored in a row of its own: each may be up to MAX_PAYLOAD_BYTES (768 KiB by default),
 * and together in one row they could pass the 2 MB SQLite lets a row hold, a write that failed every transition after
 * it (SQLITE_TOOBIG). Apart, a transition also rewrites only those that changed.
 */
const PAYLOAD_PARTS = ["input", "output", "variables"] as const;
type PayloadPart = (typeof PAYLOAD_PARTS)[number];

/** How many log lines a task keeps: its latest ones (Conductor keeps all, in its index; here they share the execution's storage). */
export const TASK_LOG_LINES_KEPT = 1000;

/**
 * How many log lines an execution keeps, all its tasks together: its latest ones. With lines of up to 8 KiB, at most
 * about 160 MiB, so that workers logging without end (a loop of many iterations, each logging its most) cannot fill
 * the object's storage, after which not even the workflow's state could be written.
 */
export const EXECUTION_LOG_LINES_KEPT = 20_000;

/**
 * How long an applied request is remembered (see {@link ExecutionStore.recordAppliedRequest}): by age, not by count,
 * because what must hold is that the router's repeat of a call comes while its record is kept, and that repeat comes
 * within the one request that made the call: after the first call's own time (an update by state waits up to
 * EXECUTE_MAX_WAIT_SECONDS, 60 s by default, after it applied) and two short backoffs. A count would instead lose a
 * record to a burst of other updates in between (a fork's branches completed at once). Fifteen minutes is far past
 * any such request; the rows it keeps are a few dozen bytes each.
 */
export const APPLIED_REQUEST_KEEP_MS = 15 * 60 * 1000;

/** How often at most the applied requests past {@link APPLIED_REQUEST_KEEP_MS} are dropped: each drop scans them all. */
const APPLIED_REQUEST_PRUNE_MS = 60 * 1000;

/** What an applied request changed: the task it updated, or null for one that updated none (variables alone). */
export interface AppliedRequest {
  taskId: string | null;
}

/** A task's log line (Conductor's `TaskExecLog`), as stored and answered. */
export interface TaskLogLine {
  log: string;
  taskId: string;
  /** Epoch milliseconds. */
  createdTime: number;
}

/**
 * True when `next` holds every task of `previous` at its position (the same object, or a replacement with its task id),
 * and maybe more after them: nothing was removed or moved, so a save writes the tasks that differ at each position.
 */
function keepsOrder(previous: readonly TaskExecution[], next: readonly TaskExecution[]): boolean {
  if (next.length < previous.length) return false;
  for (let position = 0; position < previous.length; position++) {
    const before = previous[position]!;
    const after = next[position]!;
    if (before !== after && before.taskId !== after.taskId) return false;
  }
  return true;
}

/**
 * An execution's durable form inside its Durable Object's SQLite: one row for the workflow, one each for
 * its input, output and variables, one for its definition, one per task instance. Every method is synchronous, so the writes of one
 * decision form a single implicit transaction and land before any side effect is let out.
 */
export class ExecutionStore {
  readonly #sql: SqlStorage;
  /**
   * Whether the tables exist. A new object creates them with its first write rather than when it is
   * constructed, so that they land in the same transaction (one commit, one fsync) as the start, and
   * reading an object that holds nothing writes nothing.
   */
  #hasTables: boolean;
  /**
   * Whether the task log table exists. Created with the first log line rather than with the others: executions
   * stored before logs were kept have the other tables and not this one, and most executions never log.
   */
  #hasLogTable: boolean;
  /** Whether the payload table exists: executions stored before payloads were kept apart have the others and not it. */
  #hasPartsTable: boolean;
  /** Whether the table of secrets handed out exists: created with the first task handed a secret's value. */
  #hasGivenTable: boolean;
  /** Whether the table of applied requests exists: created with the first request recorded (see recordAppliedRequest). */
  #hasRequestTable: boolean;
  /** When the table of applied requests was last pruned (see recordAppliedRequest); 0: not since the object woke. */
  #requestsPrunedAt = 0;
  /**
   * The tasks the table of secrets handed out has rows for, read from it once, when first needed (undefined until
   * then): every report asks for its task's, and most tasks were handed none, so those are answered without a statement.
   */
  #givenTasks: Set<string> | undefined;
  /**
   * Whether the stored execution's payloads are in the payload table, so a save writes those that changed only. False
   * until the first save of an execution stored with its payloads in its header: that save moves them all.
   */
  #partsApart = false;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    const tables = new Set(sql.exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'task_logs', 'workflow_parts', 'given_secrets', 'applied_requests')`).toArray().map((row) => row.name));
    this.#hasTables = tables.has("meta");
    this.#hasLogTable = tables.has("task_logs");
    this.#hasPartsTable = tables.has("workflow_parts");
    this.#hasGivenTable = tables.has("given_secrets");
    this.#hasRequestTable = tables.has("applied_requests");
  }

  /** The object's storage was wiped (`deleteAll`): the tables are gone with it. */
  forgetTables(): void {
    this.#hasTables = false;
    this.#hasLogTable = false;
    this.#hasPartsTable = false;
    this.#hasGivenTable = false;
    this.#hasRequestTable = false;
    this.#givenTasks = undefined;
    this.#partsApart = false;
  }

  #ensureTables(): void {
    if (this.#hasTables) return;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS workflow (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL)`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS definition (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL)`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS tasks (task_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, data TEXT NOT NULL)`);
    this.#ensurePartsTable();
    // Created last: its presence tells the constructor that all four exist.
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    this.#hasTables = true;
  }

  #ensurePartsTable(): void {
    if (this.#hasPartsTable) return;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS workflow_parts (part TEXT PRIMARY KEY, data TEXT NOT NULL)`);
    this.#hasPartsTable = true;
  }

  /** The stored execution, or null when this object holds none. */
  load(): WorkflowExecution | null {
    if (!this.#hasTables) return null;
    const header = this.#sql.exec<{ data: string }>(`SELECT data FROM workflow WHERE id = 1`).toArray()[0];
    if (!header) return null;
    const definition = this.#sql.exec<{ data: string }>(`SELECT data FROM definition WHERE id = 1`).one();
    const tasks = this.#sql
      .exec<{ data: string }>(`SELECT data FROM tasks ORDER BY seq`)
      .toArray()
      .map((row) => JSON.parse(row.data) as TaskExecution);
    const stored = JSON.parse(header.data) as StoredHeader;
    const parts = this.#hasPartsTable ? this.#sql.exec<{ part: PayloadPart; data: string }>(`SELECT part, data FROM workflow_parts`).toArray() : [];
    this.#partsApart = parts.length > 0;
    for (const { part, data } of parts) stored[part] = JSON.parse(data) as JsonObject;
    // Executions stored before variables were kept had none.
    return { ...stored, variables: stored.variables ?? {}, definition: JSON.parse(definition.data) as WorkflowDef, tasks };
  }

  /**
   * Writes what differs between `previous` and `next`. Tasks are compared by object identity:
   * the decider replaces exactly the task objects it changes.
   */
  save(previous: WorkflowExecution | null, next: WorkflowExecution): void {
    this.#ensureTables();
    this.#ensurePartsTable();
    const { tasks, definition, input, output, variables, ...header } = next;
    this.#sql.exec(`INSERT OR REPLACE INTO workflow (id, data) VALUES (1, ?)`, JSON.stringify(header));
    const payloads: Record<PayloadPart, JsonObject> = { input, output, variables };
    for (const part of PAYLOAD_PARTS) {
      // The decider keeps the object of a payload it does not change, as it keeps a task's.
      if (this.#partsApart && previous !== null && previous[part] === payloads[part]) continue;
      this.#sql.exec(`INSERT OR REPLACE INTO workflow_parts (part, data) VALUES (?, ?)`, part, JSON.stringify(payloads[part]));
    }
    this.#partsApart = true;
    if (previous?.definition !== definition) {
      this.#sql.exec(`INSERT OR REPLACE INTO definition (id, data) VALUES (1, ?)`, JSON.stringify(definition));
    }
    const writeTask = (task: TaskExecution) => this.#sql.exec(`INSERT OR REPLACE INTO tasks (task_id, seq, data) VALUES (?, ?, ?)`, task.taskId, task.seq, JSON.stringify(task));
    const kept = previous === null ? [] : previous.tasks;
    if (keepsOrder(kept, tasks)) {
      // The usual decision: tasks replaced in place and new ones appended. Compared position by position, by identity,
      // without a map of every task the execution holds built at each save (a long loop's thousands).
      for (let position = 0; position < tasks.length; position++) {
        const task = tasks[position]!;
        if (kept[position] !== task) writeTask(task);
      }
      return;
    }
    const before = new Map(kept.map((task) => [task.taskId, task]));
    for (const task of tasks) {
      if (before.get(task.taskId) !== task) writeTask(task);
      before.delete(task.taskId);
    }
    let droppedGiven = false;
    for (const removed of before.keys()) {
      this.#sql.exec(`DELETE FROM tasks WHERE task_id = ?`, removed);
      // A task instance dropped from the execution (a restart, a rerun) takes its log with it.
      if (this.#hasLogTable) this.#sql.exec(`DELETE FROM task_logs WHERE task_id = ?`, removed);
      if (this.#hasGiven(removed)) {
        this.#sql.exec(`DELETE FROM given_secrets WHERE task_id = ?`, removed);
        this.#givenTasks!.delete(removed);
        droppedGiven = true;
      }
    }
    // And the values no task it keeps was handed.
    if (droppedGiven) this.#sql.exec(`DELETE FROM given_values WHERE id NOT IN (SELECT value_id FROM given_secrets)`);
  }

  /**
   * Records that task `taskId`'s side effect (a worker's poll, a call completed from outside) was handed these secrets'
   * values, each kept as the secrets table holds it, encrypted (never the plaintext): whoever was handed one may quote it
   * back after the secret was replaced or deleted. Kept while the task is (see {@link save}); a value handed again adds nothing.
   * Each value is stored once however many tasks were handed it (a loop's every iteration is, the secret's one stored
   * form until it is put again): a task adds a reference to it, so the table grows by the values, up to 64 KiB each, not
   * by the tasks times the values.
   */
  addGivenSecrets(taskId: string, sealed: ReadonlyMap<string, string>): void {
    if (sealed.size === 0) return;
    if (!this.#hasGivenTable) {
      this.#sql.exec(`CREATE TABLE IF NOT EXISTS given_values (id INTEGER PRIMARY KEY, name TEXT NOT NULL, sealed TEXT NOT NULL)`);
      // Created last: its presence tells the constructor that both exist.
      this.#sql.exec(`CREATE TABLE IF NOT EXISTS given_secrets (task_id TEXT NOT NULL, value_id INTEGER NOT NULL, PRIMARY KEY (task_id, value_id)) WITHOUT ROWID`);
      this.#hasGivenTable = true;
      this.#givenTasks = new Set();
    }
    for (const [name, value] of sealed) {
      // Looked up without an index (one would hold each value a second time): the table holds this execution's distinct values only.
      const found = this.#sql.exec<{ id: number }>(`SELECT id FROM given_values WHERE name = ? AND sealed = ?`, name, value).toArray()[0];
      const id = found?.id ?? this.#sql.exec<{ id: number }>(`INSERT INTO given_values (name, sealed) VALUES (?, ?) RETURNING id`, name, value).one().id;
      this.#sql.exec(`INSERT OR IGNORE INTO given_secrets (task_id, value_id) VALUES (?, ?)`, taskId, id);
    }
    this.#givenTaskIds().add(taskId);
  }

  /** The encrypted values task `taskId` was handed (see {@link addGivenSecrets}); no statement for a task handed none. */
  givenSecrets(taskId: string): Array<{ name: string; sealed: string }> {
    if (!this.#hasGiven(taskId)) return [];
    return this.#sql
      .exec<{ name: string; sealed: string }>(`SELECT name, sealed FROM given_secrets JOIN given_values ON given_values.id = given_secrets.value_id WHERE task_id = ?`, taskId)
      .toArray();
  }

  /** Whether task `taskId` was handed any secret's value (see {@link addGivenSecrets}). */
  #hasGiven(taskId: string): boolean {
    return this.#hasGivenTable && this.#givenTaskIds().has(taskId);
  }

  /** The tasks with rows in the table of secrets handed out, which exists (see {@link ExecutionStore.#givenTasks}). */
  #givenTaskIds(): Set<string> {
    this.#givenTasks ??= new Set(this.#sql.exec<{ task_id: string }>(`SELECT DISTINCT task_id FROM given_secrets`).toArray().map((row) => row.task_id));
    return this.#givenTasks;
  }

  /**
   * Appends `lines` to task `taskId`'s log, in order, keeping only its latest `keep` lines and the execution's latest
   * `keepInAll` (the oldest go). Only for a task of the stored execution: the log goes with the task (see {@link save})
   * and with the object's storage.
   */
  appendTaskLog(taskId: string, lines: ReadonlyArray<{ log: string; createdTime: number }>, keep: number, keepInAll: number): void {
    if (!this.#hasLogTable) {
      // A new row's id (the row id) is one more than the largest present: ordered by it, a task's lines read as appended.
      this.#sql.exec(`CREATE TABLE IF NOT EXISTS task_logs (id INTEGER PRIMARY KEY, task_id TEXT NOT NULL, created_time INTEGER NOT NULL, log TEXT NOT NULL)`);
      this.#sql.exec(`CREATE INDEX IF NOT EXISTS task_logs_by_task ON task_logs (task_id, id)`);
      this.#hasLogTable = true;
    }
    for (const line of lines.slice(-keep)) {
      this.#sql.exec(`INSERT INTO task_logs (task_id, created_time, log) VALUES (?, ?, ?)`, taskId, line.createdTime, line.log);
    }
    // Everything up to the newest line past the `keep` latest (none when the task has no more than `keep`).
    this.#sql.exec(
      `DELETE FROM task_logs WHERE task_id = ? AND id <= (SELECT id FROM task_logs WHERE task_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
      taskId,
      taskId,
      keep,
    );
    // Ids only grow, so the span of ids bounds the count: the offset scan runs only when the cap may be passed.
    const span = this.#sql.exec<{ span: number | null }>(`SELECT MAX(id) - MIN(id) + 1 AS span FROM task_logs`).one().span ?? 0;
    if (span > keepInAll) {
      this.#sql.exec(`DELETE FROM task_logs WHERE id <= (SELECT id FROM task_logs ORDER BY id DESC LIMIT 1 OFFSET ?)`, keepInAll);
    }
  }

  /** Task `taskId`'s log lines, oldest first. */
  taskLog(taskId: string): TaskLogLine[] {
    if (!this.#hasLogTable) return [];
    return this.#sql
      .exec<{ log: string; created_time: number }>(`SELECT log, created_time FROM task_logs WHERE task_id = ? ORDER BY id`, taskId)
      .toArray()
      .map((row) => ({ log: row.log, taskId, createdTime: row.created_time }));
  }

  /**
   * Records that the router's request `requestId` was applied here, updating task `taskId` (null: none). Called in the
   * same synchronous turn as the update, so it lands in the same transaction: a reset that cuts the call's answer off
   * leaves both or neither, and the router's repeat of the call (on a fresh stub) finds the record exactly when the
   * update landed. Records older than {@link APPLIED_REQUEST_KEEP_MS} are dropped with a new one, at most once a minute.
   */
  recordAppliedRequest(requestId: string, taskId: string | null, now: number): void {
    if (!this.#hasRequestTable) {
      this.#sql.exec(`CREATE TABLE IF NOT EXISTS applied_requests (request_id TEXT PRIMARY KEY, task_id TEXT, at INTEGER NOT NULL) WITHOUT ROWID`);
      this.#hasRequestTable = true;
    }
    // A scan of the table: made at most once a minute while the object is awake, not with every record.
    if (now - this.#requestsPrunedAt >= APPLIED_REQUEST_PRUNE_MS) {
      this.#sql.exec(`DELETE FROM applied_requests WHERE at < ?`, now - APPLIED_REQUEST_KEEP_MS);
      this.#requestsPrunedAt = now;
    }
    this.#sql.exec(`INSERT OR REPLACE INTO applied_requests (request_id, task_id, at) VALUES (?, ?, ?)`, requestId, taskId, now);
  }

  /** The record of request `requestId` (see {@link recordAppliedRequest}), or undefined when it was not applied here. */
  appliedRequest(requestId: string): AppliedRequest | undefined {
    if (!this.#hasRequestTable) return undefined;
    const row = this.#sql.exec<{ task_id: string | null }>(`SELECT task_id FROM applied_requests WHERE request_id = ?`, requestId).toArray()[0];
    return row === undefined ? undefined : { taskId: row.task_id };
  }

  /** The actor's bookkeeping values (not part of the execution), by key; read once, when the object wakes. */
  loadMeta(): Map<string, string> {
    if (!this.#hasTables) return new Map();
    return new Map(this.#sql.exec<{ key: string; value: string }>(`SELECT key, value FROM meta`).toArray().map((row) => [row.key, row.value]));
  }

  /** Drops a bookkeeping value. */
  deleteMeta(key: string): void {
    if (this.#hasTables) this.#sql.exec(`DELETE FROM meta WHERE key = ?`, key);
  }

  /** Sets a bookkeeping value. */
  setMeta(key: string, value: string): void {
    this.#ensureTables();
    this.#sql.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`, key, value);
  }
}
