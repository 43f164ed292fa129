import type { JsonObject, TaskExecution, WorkflowDef, WorkflowExecution } from "../engine/model";

/**
 * Workflow-level fields as stored: everything but the task list and the (rarely changing) definition. `variables`
 * is absent from executions stored before they were kept.
 */
type StoredHeader = Omit<WorkflowExecution, "tasks" | "definition" | "variables"> & { variables?: JsonObject };

/** How many log lines a task keeps: its latest ones (Conductor keeps all, in its index; here they share the execution's storage). */
export const TASK_LOG_LINES_KEPT = 1000;

/**
 * How many log lines an execution keeps, all its tasks together: its latest ones. With lines of up to 8 KiB, at most
 * about 160 MiB, so that workers logging without end (a loop of many iterations, each logging its most) cannot fill
 * the object's storage, after which not even the workflow's state could be written.
 */
export const EXECUTION_LOG_LINES_KEPT = 20_000;

/** A task's log line (Conductor's `TaskExecLog`), as stored and answered. */
export interface TaskLogLine {
  log: string;
  taskId: string;
  /** Epoch milliseconds. */
  createdTime: number;
}

/**
 * An execution's durable form inside its Durable Object's SQLite: one row for the workflow, one for
 * its definition, one per task instance. Every method is synchronous, so the writes of one
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

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    const tables = new Set(sql.exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'task_logs')`).toArray().map((row) => row.name));
    this.#hasTables = tables.has("meta");
    this.#hasLogTable = tables.has("task_logs");
  }

  /** The object's storage was wiped (`deleteAll`): the tables are gone with it. */
  forgetTables(): void {
    this.#hasTables = false;
    this.#hasLogTable = false;
  }

  #ensureTables(): void {
    if (this.#hasTables) return;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS workflow (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL)`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS definition (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL)`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS tasks (task_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, data TEXT NOT NULL)`);
    // Created last: its presence tells the constructor that all four exist.
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    this.#hasTables = true;
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
    // Executions stored before variables were kept had none.
    return { ...stored, variables: stored.variables ?? {}, definition: JSON.parse(definition.data) as WorkflowDef, tasks };
  }

  /**
   * Writes what differs between `previous` and `next`. Tasks are compared by object identity:
   * the decider replaces exactly the task objects it changes.
   */
  save(previous: WorkflowExecution | null, next: WorkflowExecution): void {
    this.#ensureTables();
    const { tasks, definition, ...header } = next;
    this.#sql.exec(`INSERT OR REPLACE INTO workflow (id, data) VALUES (1, ?)`, JSON.stringify(header));
    if (previous?.definition !== definition) {
      this.#sql.exec(`INSERT OR REPLACE INTO definition (id, data) VALUES (1, ?)`, JSON.stringify(definition));
    }
    const before = new Map(previous?.tasks.map((task) => [task.taskId, task]));
    for (const task of tasks) {
      if (before.get(task.taskId) !== task) {
        this.#sql.exec(`INSERT OR REPLACE INTO tasks (task_id, seq, data) VALUES (?, ?, ?)`, task.taskId, task.seq, JSON.stringify(task));
      }
      before.delete(task.taskId);
    }
    for (const removed of before.keys()) {
      this.#sql.exec(`DELETE FROM tasks WHERE task_id = ?`, removed);
      // A task instance dropped from the execution (a restart, a rerun) takes its log with it.
      if (this.#hasLogTable) this.#sql.exec(`DELETE FROM task_logs WHERE task_id = ?`, removed);
    }
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
