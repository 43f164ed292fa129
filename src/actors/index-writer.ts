import { DurableObject } from "cloudflare:workers";
import { serviceConfig } from "../worker/config";
import { deleteIndexRow, indexRowStatements, pruneRemovedTombstones, releaseIdempotencyKey, type HeldIdempotencyKey, type IndexRow } from "./execution-index";
import { metricCountStatement } from "./metric-counts";

/**
 * How long the first queued write waits for others before the batch goes to D1. The search row of a
 * running execution is due within a second of its start (it waits up to 500 ms itself), so this stays
 * well under what is left.
 */
export const INDEX_FLUSH_DELAY_MS = 100;

/** Most writes in one D1 batch (a write is several statements: a row with its task, human task and webhook rows; a removal its deletes). */
export const INDEX_MAX_BATCH = 40;

/**
 * One write the writer queues: a search row to upsert, or an execution's rows to delete (with its create time, see
 * `deleteIndexRow`; absent from a removal by code older than the tombstones, mid-deploy).
 */
export type IndexWrite = { kind: "upsert"; row: IndexRow } | { kind: "delete"; workflowId: string; idempotencyKey?: HeldIdempotencyKey; createTime?: number };

/**
 * How a write went: committed, with the number of writes of the D1 batch that carried it (1 when it went
 * alone), or refused by D1. A value rather than a thrown error, so the caller decides what to log.
 */
export type IndexWriteOutcome = { ok: true; batchSize: number } | { ok: false; error: string };

interface Queued {
  write: IndexWrite;
  settle: (outcome: IndexWriteOutcome) => void;
}

/**
 * Writes executions' search rows to D1 in batches: one D1 round trip (and one transaction) for every
 * write that arrived within {@link INDEX_FLUSH_DELAY_MS}, instead of one per execution. Holds nothing
 * durable: a caller hears back only once its write is in D1, and a caller that hears of a failure (or
 * loses this object to an eviction) keeps the write owed and tries again, as it did when it wrote to
 * D1 itself. Batches go out one at a time, in arrival order, so a later write of an execution
 * (its end, its removal) never lands before an earlier one; an execution always uses the same writer
 * (the shard it was given at its start).
 */
export class ExecutionIndexWriter extends DurableObject<Env> {
  readonly #queue: Queued[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #draining = false;

  /** Upserts a search row (the newest `updateTime` wins); answers once it is in D1 or refused. */
  async upsert(row: IndexRow): Promise<IndexWriteOutcome> {
    return this.#enqueue({ kind: "upsert", row }, false);
  }

  /**
   * Deletes a search row, leaving the removed execution's tombstone (`createTime`, its last start's: a row of it landing
   * later is refused, see `deleteIndexRow`) and, in the same transaction, releases the idempotency key it held: a later
   * start with that key is a new execution, never this one's id started again. Someone is waiting for this one, so it
   * goes out without waiting for others.
   */
  async delete(workflowId: string, idempotencyKey?: HeldIdempotencyKey, createTime?: number): Promise<IndexWriteOutcome> {
    return this.#enqueue(
      { kind: "delete", workflowId, ...(idempotencyKey === undefined ? {} : { idempotencyKey }), ...(createTime === undefined ? {} : { createTime }) },
      true,
    );
  }

  #enqueue(write: IndexWrite, urgent: boolean): Promise<IndexWriteOutcome> {
    return new Promise((settle) => {
      this.#queue.push({ write, settle });
      if (urgent || this.#queue.length >= INDEX_MAX_BATCH) {
        clearTimeout(this.#timer);
        this.#timer = undefined;
        void this.#drain();
      } else {
        this.#timer ??= setTimeout(() => {
          this.#timer = undefined;
          void this.#drain();
        }, INDEX_FLUSH_DELAY_MS);
      }
    });
  }

  /** Sends batches until the queue is empty; writes arriving meanwhile join the next batch. */
  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#queue.length > 0) await this.#send(this.#queue.splice(0, INDEX_MAX_BATCH));
    } finally {
      this.#draining = false;
    }
  }

  async #send(batch: Queued[]): Promise<void> {
    const db = this.env.DB;
    try {
      await db.batch(indexBatchStatements(db, batch.map((queued) => queued.write)));
      for (const queued of batch) queued.settle({ ok: true, batchSize: batch.length });
      return;
    } catch {
      // The batch is one transaction: one write D1 refuses must not hold back the others. One by one, in order.
    }
    for (const queued of batch) {
      try {
        await db.batch(indexBatchStatements(db, [queued.write]));
        queued.settle({ ok: true, batchSize: 1 });
      } catch (error) {
        queued.settle({ ok: false, error: error instanceof Error ? error.message : String(error) });
      }
    }
  }
}

/**
 * The statements of one D1 batch of `writes` (one transaction): the metrics' counting of every row first (it compares
 * the rows with what the index shows before they replace it), then each write's own, then, when the batch removes an
 * execution, the pruning of tombstones past their time (removals are rare next to row writes: no statement is added to
 * a batch of rows alone).
 */
export function indexBatchStatements(db: D1Database, writes: readonly IndexWrite[]): D1PreparedStatement[] {
  const now = Date.now();
  const rows = writes.flatMap((write) => (write.kind === "upsert" ? [write.row] : []));
  const counting = rows.length === 0 ? [] : [metricCountStatement(db, rows)];
  const removes = rows.length < writes.length;
  return [
    ...counting,
    ...writes.flatMap((write) => {
      if (write.kind === "upsert") return indexRowStatements(db, write.row);
      // A removal by older code (mid-deploy) names no create time: every row of its execution was created before now.
      const deleted = deleteIndexRow(db, write.workflowId, { createTime: write.createTime ?? now, removedAt: now });
      return write.idempotencyKey === undefined ? deleted : [...deleted, releaseIdempotencyKey(db, write.workflowId, write.idempotencyKey)];
    }),
    ...(removes ? [pruneRemovedTombstones(db, now)] : []),
  ];
}

/**
 * The writer shard the current `INDEX_WRITER_SHARDS` gives an execution. An execution pins the shard it
 * was given at its start (see `WorkflowExecution`), so a later change of the setting cannot send its removal
 * to another writer than a row of it still queued.
 */
export function indexShardFor(env: Env, workflowId: string): number {
  const shard = Number.parseInt(workflowId.slice(0, 8), 16) % serviceConfig(env).indexWriterShards;
  return Number.isNaN(shard) ? 0 : shard;
}

/** The writer object of a shard. */
export function indexWriterAt(env: Env, shard: number): DurableObjectStub<ExecutionIndexWriter> {
  return env.INDEX_WRITER.get(env.INDEX_WRITER.idFromName(`index-writer-${shard}`));
}

/** Throws unless the write was committed (so a background job fails and is tried again). */
export function expectIndexWritten(outcome: IndexWriteOutcome, what: string): void {
  if (!outcome.ok) throw new Error(`${what}: ${outcome.error}`);
}
