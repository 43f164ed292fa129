import type { JsonObject } from "../engine/model";

/** How many messages of one event, and executions of one handler, are kept: the latest. */
export const MAX_RECORDED_PER_EVENT = 1_000;
/** Most rows one read answers (Orkes pages these lists with `from`). */
export const EVENT_RECORDS_PAGE = 100;

/** What one action of a handler did with a message (Orkes' event execution). */
export interface ActionRecord {
  handler: string;
  /** The action's place in its handler: with the message and handler, what makes the record's id. */
  index: number;
  action: string;
  status: "COMPLETED" | "FAILED" | "SKIPPED";
  /** Why it failed, or was skipped. */
  statusDescription?: string;
  output: JsonObject;
}

/** One published event (Orkes' event message) and what its handlers' actions did with it. */
export interface MessageRecord {
  /** The message's id: the EVENT task's id, as in Conductor. */
  id: string;
  event: string;
  payload: JsonObject;
  actions: readonly ActionRecord[];
}

interface ExecutionRow {
  id: string;
  message_id: string;
  handler_name: string;
  event: string;
  action: string;
  status: string;
  status_description: string | null;
  output: string;
  created: number;
}

interface MessageRow {
  id: string;
  event: string;
  created: number;
  payload: string;
  status: string;
  status_description: string | null;
}

/** Orkes' ExtendedEventExecution of a stored row (the message's payload when it is known). */
function executionJson(row: ExecutionRow, payload?: JsonObject): JsonObject {
  const json: JsonObject = { id: row.id, messageId: row.message_id, name: row.handler_name, event: row.event, action: row.action, status: row.status, output: JSON.parse(row.output) as JsonObject, created: row.created };
  if (row.status_description !== null) json["statusDescription"] = row.status_description;
  if (payload !== undefined) json["payload"] = payload;
  return json;
}

/**
 * The record of published events and of what event handlers did with them (Orkes' event messages and executions), in
 * D1. Written once per publication, after its handlers ran; read by system admins to see why a handler did, or did
 * not, act.
 */
export class EventRecordRepository {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /**
   * Records `message` and its actions at `now` in one batch (a publication repeated after a failure rewrites its rows:
   * ids are the message's and the action's place, which a handler edited between the runs may give another action, so
   * the action is rewritten too), and drops the oldest past {@link MAX_RECORDED_PER_EVENT}. The actions of a handler
   * deleted meanwhile are not recorded (its deletion took what it did).
   */
  async record(message: MessageRecord, now: number): Promise<void> {
    const handled = message.actions.some((action) => action.status !== "SKIPPED");
    const statements = [
      this.#db
        .prepare(
          `INSERT INTO event_messages (id, event, created, payload, status, status_description) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
           ON CONFLICT (id) DO UPDATE SET status = excluded.status, status_description = excluded.status_description`,
        )
        .bind(message.id, message.event, now, JSON.stringify(message.payload), handled ? "HANDLED" : "RECEIVED", handled ? null : "no active handler acted on it"),
      ...message.actions.map((action) =>
        this.#db
          .prepare(
            // Only for a handler that still exists: one deleted while its actions ran took its record with it, and a row
            // written after would be kept for good, shown as what a handler created again under its name did.
            `INSERT INTO event_executions (id, message_id, handler_name, event, action, status, status_description, output, created)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 WHERE EXISTS (SELECT 1 FROM event_handlers WHERE name = ?3)
             ON CONFLICT (id) DO UPDATE SET action = excluded.action, status = excluded.status, status_description = excluded.status_description, output = excluded.output`,
          )
          .bind(`${message.id}/${action.handler}/${action.index}`, message.id, action.handler, message.event, action.action, action.status, action.statusDescription ?? null, JSON.stringify(action.output), now),
      ),
      this.#db
        .prepare(`DELETE FROM event_messages WHERE event = ?1 AND created < (SELECT created FROM event_messages WHERE event = ?1 ORDER BY created DESC LIMIT 1 OFFSET ?2)`)
        .bind(message.event, MAX_RECORDED_PER_EVENT - 1),
      ...[...new Set(message.actions.map((action) => action.handler))].map((handler) =>
        this.#db
          .prepare(`DELETE FROM event_executions WHERE handler_name = ?1 AND created < (SELECT created FROM event_executions WHERE handler_name = ?1 ORDER BY created DESC LIMIT 1 OFFSET ?2)`)
          .bind(handler, MAX_RECORDED_PER_EVENT - 1),
      ),
    ];
    await this.#db.batch(statements);
  }

  /** The latest executions of handler `name`, newest first, {@link EVENT_RECORDS_PAGE} from offset `from`. */
  async executionsOf(name: string, from: number): Promise<JsonObject[]> {
    const { results } = await this.#db
      .prepare(
        `SELECT e.*, m.payload AS payload FROM event_executions e LEFT JOIN event_messages m ON m.id = e.message_id
         WHERE e.handler_name = ? ORDER BY e.created DESC, e.id LIMIT ? OFFSET ?`,
      )
      .bind(name, EVENT_RECORDS_PAGE, from)
      .all<ExecutionRow & { payload: string | null }>();
    return results.map((row) => executionJson(row, row.payload === null ? undefined : (JSON.parse(row.payload) as JsonObject)));
  }

  /** The latest messages of event `event`, newest first, each with what the handlers' actions did with it. */
  async messagesOf(event: string, from: number): Promise<JsonObject[]> {
    const { results } = await this.#db.prepare(`SELECT * FROM event_messages WHERE event = ? ORDER BY created DESC, id LIMIT ? OFFSET ?`).bind(event, EVENT_RECORDS_PAGE, from).all<MessageRow>();
    if (results.length === 0) return [];
    const executions = await this.#db
      .prepare(`SELECT * FROM event_executions WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY handler_name, id`)
      .bind(JSON.stringify(results.map((row) => row.id)))
      .all<ExecutionRow>();
    return results.map((row) => {
      const json: JsonObject = {
        id: row.id,
        eventTarget: row.event,
        eventType: "MESSAGE",
        createdAt: row.created,
        payload: row.payload,
        fullPayload: JSON.parse(row.payload) as JsonObject,
        status: row.status,
        eventExecutions: executions.results.filter((execution) => execution.message_id === row.id).map((execution) => executionJson(execution)),
      };
      if (row.status_description !== null) json["statusDescription"] = row.status_description;
      return json;
    });
  }

  /**
   * Per event handler: its event, whether it is active, how many actions and messages are recorded for it (Orkes'
   * HandledEventResponse). Both counts from one walk of each handler's records (up to {@link MAX_RECORDED_PER_EVENT}):
   * a subquery for each walked them twice, and the listing reads every record there is.
   */
  async handlerStats(): Promise<JsonObject[]> {
    const { results } = await this.#db
      .prepare(
        `SELECT h.name AS name, h.event AS event, h.active AS active, COUNT(e.id) AS numberOfActions, COUNT(DISTINCT e.message_id) AS numberOfMessages
         FROM event_handlers h LEFT JOIN event_executions e ON e.handler_name = h.name GROUP BY h.name ORDER BY h.name`,
      )
      .all<{ name: string; event: string; active: number; numberOfActions: number; numberOfMessages: number }>();
    return results.map((row) => ({ ...row, active: row.active === 1 }));
  }
}
