/**
 * The actions an owed event publication has taken, kept in its execution's meta rows so that a run refused partway
 * (past its invocation's subrequests on Cloudflare, say) is not taken again from the first action by the next run (see
 * `ActionProgress` in dispatch/event.ts).
 */
import type { ActionRecord } from "../worker/event-executions";
import type { ActionProgress } from "./dispatch/event";
import type { ExecutionStore } from "./execution-store";

/** Prefix of the meta keys of the actions an owed publication has taken, then its message id. */
const EVENT_ACTION_META = "eventAction:";

/**
 * One run of publication `messageId`: what earlier runs kept, and what this one takes. Each record kept is a row
 * written and one deleted, so a publication done in one run, the usual case, writes none: its records are written when
 * a run fails ({@link KeptActionProgress.keepTaken}) and, once one has, as each action is taken (an eviction then loses
 * nothing; one during a first run makes the next take its actions again, which they bear).
 */
export class KeptActionProgress implements ActionProgress {
  readonly #store: Pick<ExecutionStore, "loadMeta" | "setMeta" | "deleteMeta">;
  readonly #prefix: string;
  readonly #kept: Map<string, string>;
  readonly #written: Set<string>;
  readonly #unwritten = new Map<string, string>();
  readonly #alive: () => boolean;

  /** `alive`: false once the execution was removed, after which nothing of it is written. */
  constructor(store: Pick<ExecutionStore, "loadMeta" | "setMeta" | "deleteMeta">, messageId: string, alive: () => boolean) {
    this.#store = store;
    this.#prefix = `${EVENT_ACTION_META}${messageId}\u0000`;
    this.#kept = new Map([...store.loadMeta()].filter(([key]) => key.startsWith(this.#prefix)));
    this.#written = new Set(this.#kept.keys());
    this.#alive = alive;
  }

  taken(handler: string, key: string): ActionRecord | undefined {
    const record = this.#kept.get(this.#keyOf(handler, key));
    return record === undefined ? undefined : (JSON.parse(record) as ActionRecord);
  }

  keep(record: ActionRecord, key: string): void {
    if (!this.#alive()) return;
    const metaKey = this.#keyOf(record.handler, key);
    const value = JSON.stringify(record);
    this.#kept.set(metaKey, value);
    if (this.#written.size === 0) {
      this.#unwritten.set(metaKey, value);
      return;
    }
    this.#write(metaKey, value);
  }

  /** This run failed: what it took is written, so the next run goes on from the first action not taken. */
  keepTaken(): void {
    if (!this.#alive()) return;
    for (const [key, value] of this.#unwritten) this.#write(key, value);
  }

  /** The publication is done: its kept records go. */
  forget(): void {
    for (const key of this.#written) this.#store.deleteMeta(key);
  }

  #write(key: string, value: string): void {
    this.#store.setMeta(key, value);
    this.#written.add(key);
  }

  /**
   * The meta key of `handler`'s action keyed `key`: its place for a publication owed before actions were keyed by content
   * (the key its kept records were written under then, read as they were), `<digest>:<occurrence>` since.
   */
  #keyOf(handler: string, key: string): string {
    return `${this.#prefix}${handler}\u0000${key}`;
  }
}
