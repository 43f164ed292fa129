import type { JsonObject, TaskExecution, WorkflowDef, WorkflowExecution } from "../engine/model";

/**
 * Workflow-level fields as stored: everything but the task list and the (rarely changing) definition. `variables`
 * is absent from executions stored before they were kept.
 */
type StoredHeader = Omit<WorkflowExecution, "tasks" | "definition" | "variables"> & { variables?: JsonObject };

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

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    this.#hasTables = sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).toArray().length > 0;
  }

  /** The object's storage was wiped (`deleteAll`): the tables are gone with it. */
  forgetTables(): void {
    this.#hasTables = false;
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
    for (const removed of before.keys()) this.#sql.exec(`DELETE FROM tasks WHERE task_id = ?`, removed);
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
