import type { TaskExecution, WorkflowDef, WorkflowExecution } from "../engine/model";

/** Workflow-level fields as stored: everything but the task list and the (rarely changing) definition. */
type StoredHeader = Omit<WorkflowExecution, "tasks" | "definition">;

/**
 * An execution's durable form inside its Durable Object's SQLite: one row for the workflow, one for
 * its definition, one per task instance. Every method is synchronous, so the writes of one
 * decision form a single implicit transaction and land before any side effect is let out.
 */
export class ExecutionStore {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS workflow (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS definition (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS tasks (task_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, data TEXT NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
  }

  /** The stored execution, or null when this object holds none. */
  load(): WorkflowExecution | null {
    const header = this.#sql.exec<{ data: string }>(`SELECT data FROM workflow WHERE id = 1`).toArray()[0];
    if (!header) return null;
    const definition = this.#sql.exec<{ data: string }>(`SELECT data FROM definition WHERE id = 1`).one();
    const tasks = this.#sql
      .exec<{ data: string }>(`SELECT data FROM tasks ORDER BY seq`)
      .toArray()
      .map((row) => JSON.parse(row.data) as TaskExecution);
    return { ...(JSON.parse(header.data) as StoredHeader), definition: JSON.parse(definition.data) as WorkflowDef, tasks };
  }

  /**
   * Writes what differs between `previous` and `next`. Tasks are compared by object identity:
   * the decider replaces exactly the task objects it changes.
   */
  save(previous: WorkflowExecution | null, next: WorkflowExecution): void {
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

  /** A bookkeeping value of the actor (not part of the execution). */
  getMeta(key: string): string | undefined {
    return this.#sql.exec<{ value: string }>(`SELECT value FROM meta WHERE key = ?`, key).toArray()[0]?.value;
  }

  /** Sets a bookkeeping value. */
  setMeta(key: string, value: string): void {
    this.#sql.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`, key, value);
  }
}
