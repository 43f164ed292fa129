import type { WorkflowMessage } from "../engine/tasks/pull-workflow-messages";

const encoder = new TextEncoder();

/** A queued message with its place in the queue (the row to delete once a task has taken it). */
export interface QueuedMessage {
  seq: number;
  message: WorkflowMessage;
  /** Its JSON's size in UTF-8 bytes, as a task's output holds it. */
  bytes: number;
}

/**
 * A workflow's message queue (Conductor's Workflow Message Queue) in its Durable Object's SQLite, oldest first. Apart
 * from the execution's own rows: it may hold up to a thousand messages, each up to MAX_PAYLOAD_BYTES, which the
 * execution never loads whole; a PULL_WORKFLOW_MESSAGES task reads only its batch. Every method is synchronous, so a
 * push, or a batch's removal, lands in the transaction of the decision it goes with.
 */
export class MessageQueue {
  readonly #sql: SqlStorage;
  /**
   * Whether the table exists: created with the first push, so that executions that never get a message never have it.
   * Known without asking SQLite's catalog: the push that creates it writes down so (see the constructor), in the same
   * transaction, which keeps that read off the end of every execution.
   */
  #hasTable: boolean;
  /** Writes down, with the table's creation, that the object has one. */
  readonly #markCreated: () => void;
  /** How many messages are queued, once counted. */
  #size: number | undefined;

  /**
   * @param hasTable whether an earlier push created the table (what `markCreated` wrote down, read when the object woke)
   * @param markCreated writes that down, in the transaction of the push that creates the table
   */
  constructor(sql: SqlStorage, hasTable: boolean, markCreated: () => void) {
    this.#sql = sql;
    this.#hasTable = hasTable;
    this.#markCreated = markCreated;
  }

  /** The object's storage was wiped (`deleteAll`): the table is gone with it. */
  forgetTable(): void {
    this.#hasTable = false;
    this.#size = 0;
  }

  /** How many messages are queued. */
  size(): number {
    this.#size ??= this.#hasTable ? this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM workflow_messages`).one().n : 0;
    return this.#size;
  }

  /** Appends `message` at the tail. */
  push(message: WorkflowMessage): void {
    if (!this.#hasTable) {
      // AUTOINCREMENT: a seq is never reused, so the order of arrival holds even after the newest were taken.
      this.#sql.exec(`CREATE TABLE IF NOT EXISTS workflow_messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, data TEXT NOT NULL)`);
      this.#markCreated();
      this.#hasTable = true;
    }
    this.#sql.exec(`INSERT INTO workflow_messages (data) VALUES (?)`, JSON.stringify(message));
    this.#size = this.size() + 1;
  }

  /** Up to `count` messages from the head, oldest first, past the first `skip` (those taken already in this change), without taking them. */
  peek(count: number, skip = 0): QueuedMessage[] {
    if (count <= 0 || this.size() <= skip) return [];
    return this.#sql
      .exec<{ seq: number; data: string }>(`SELECT seq, data FROM workflow_messages ORDER BY seq LIMIT ? OFFSET ?`, count, skip)
      .toArray()
      .map((row) => ({ seq: row.seq, message: JSON.parse(row.data) as WorkflowMessage, bytes: encoder.encode(row.data).length }));
  }

  /** Takes the messages `seqs` off the queue (a batch some task completed with). */
  remove(seqs: readonly number[]): void {
    if (seqs.length === 0) return;
    // One statement per message: a batch is at most MAX_BATCH_SIZE, and bound parameters have a limit of their own.
    for (const seq of seqs) this.#sql.exec(`DELETE FROM workflow_messages WHERE seq = ?`, seq);
    this.#size = Math.max(0, this.size() - seqs.length);
  }

  /** Empties the queue (its workflow ended: nothing can take them any more, as Conductor's queue is deleted then). */
  clear(): void {
    if (this.size() === 0) return;
    this.#sql.exec(`DELETE FROM workflow_messages`);
    this.#size = 0;
  }
}

/**
 * The head of `queued` that one task's output can hold within `maxBytes` (MAX_PAYLOAD_BYTES): at least its first message,
 * which its push made sure fits alone.
 */
export function fittingBatch(queued: readonly QueuedMessage[], maxBytes: number): QueuedMessage[] {
  // `{"messages":[…],"count":100}`: the wrapping, a comma between messages.
  let bytes = 32;
  let count = 0;
  for (const entry of queued) {
    bytes += entry.bytes + 1;
    if (count > 0 && bytes > maxBytes) break;
    count++;
  }
  return queued.slice(0, count);
}
