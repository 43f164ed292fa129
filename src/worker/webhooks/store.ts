/**
 * Webhooks in D1 (`webhooks`): each one's settings as JSON, its secrets encrypted with the secrets' keyring (bound to
 * the webhook's id, so a ciphertext copied to another webhook does not decrypt), and what its saver could start.
 */
import { cutToBytes } from "../../engine/limits";
import { ApiError, validationError } from "../http/errors";
import { requireKeyring } from "../secrets/config";
import { decryptSecret, encryptSecret } from "../secrets/crypto";
import { MASKED, webhookOf, type WebhookConfigBody, type WebhookSecrets, type WebhookSettings } from "./config";

/** A saved webhook. */
export interface Webhook {
  id: string;
  settings: WebhookSettings;
  /** The saver's start scopes: the workflows its events start are started with these (see `WorkflowExecution.startScopes`). */
  startScopes: string[];
  /** The service's public base URL when it was saved (for the URL shown, and the callback URLs of what it starts). */
  baseUrl?: string;
  urlVerified: boolean;
  createdBy?: string;
  updatedBy?: string;
  createTime: number;
  updateTime: number;
}

type WebhookRow = {
  id: string;
  config: string;
  secrets: string;
  start_scopes: string;
  base_url: string | null;
  url_verified: number;
  created_by: string | null;
  updated_by: string | null;
  create_time: number;
  update_time: number;
};

function fromRow(row: WebhookRow): Webhook {
  const webhook: Webhook = {
    id: row.id,
    settings: JSON.parse(row.config) as WebhookSettings,
    startScopes: JSON.parse(row.start_scopes) as string[],
    urlVerified: row.url_verified === 1,
    createTime: row.create_time,
    updateTime: row.update_time,
  };
  if (row.base_url !== null) webhook.baseUrl = row.base_url;
  if (row.created_by !== null) webhook.createdBy = row.created_by;
  if (row.updated_by !== null) webhook.updatedBy = row.updated_by;
  return webhook;
}

/** The additional data a webhook's secrets are encrypted with: its id. */
const secretsName = (id: string) => `webhook:${id}`;

/** How many of its latest events a webhook keeps. */
export const EVENTS_KEPT = 20;
/** Longest payload an event's record keeps (longer ones are cut, saying so). */
const MAX_EVENT_PAYLOAD_BYTES = 4 * 1024;

/**
 * An event a webhook received and verified (Orkes' WebhookExecutionHistory): whether it completed a waiting task or
 * started a workflow, the executions it reached, its payload as JSON (cut to a few KB) and when it came.
 */
export interface WebhookEvent {
  eventId: string;
  matched: boolean;
  workflowIds: string[];
  payload: string;
  timeStamp: number;
}

/** How often a tag change (or an update keeping secrets) is made again over an edit that landed meanwhile before it gives up (409). */
const EDIT_ATTEMPTS = 5;

/** A webhook's tag. */
type Tag = { key: string; value: string };

/** Most webhooks one listing shows. */
const MAX_LISTED = 1000;

/** What a save records besides the body: who saves, what they may start, the base URL, when. */
export interface WebhookSave {
  body: WebhookConfigBody;
  by: string;
  startScopes: string[];
  baseUrl: string;
  now: number;
}

/** Webhooks in D1. */
export class WebhookRepository {
  readonly #env: Env;

  constructor(env: Env) {
    this.#env = env;
  }

  /** Every webhook, by name. */
  async list(): Promise<Webhook[]> {
    const { results } = await this.#env.DB.prepare(`SELECT * FROM webhooks ORDER BY name LIMIT ${MAX_LISTED}`).all<WebhookRow>();
    return results.map(fromRow);
  }

  /** The webhook `id`, if there is one. */
  async get(id: string): Promise<Webhook | undefined> {
    const row = await this.#env.DB.prepare(`SELECT * FROM webhooks WHERE id = ?`).bind(id).first<WebhookRow>();
    return row === null ? undefined : fromRow(row);
  }

  /**
   * The webhook `id` with its secrets, read at once, if there is one; `secrets` undefined when they cannot be read (a
   * keyring without their key).
   */
  async getWithSecrets(id: string): Promise<{ webhook: Webhook; secrets: WebhookSecrets | undefined; sealed: string } | undefined> {
    const row = await this.#env.DB.prepare(`SELECT * FROM webhooks WHERE id = ?`).bind(id).first<WebhookRow>();
    if (row === null) return undefined;
    const plain = await decryptSecret(await requireKeyring(this.#env), secretsName(id), row.secrets);
    return { webhook: fromRow(row), secrets: plain === undefined ? undefined : (JSON.parse(plain) as WebhookSecrets), sealed: row.secrets };
  }

  /** Saves a new webhook under a fresh id; 409 when its name is taken. */
  async create(save: WebhookSave): Promise<Webhook> {
    const id = crypto.randomUUID();
    const { settings, secrets } = checked(save.body);
    const encrypted = await encryptSecret(await requireKeyring(this.#env), secretsName(id), JSON.stringify(secrets));
    try {
      await this.#env.DB.prepare(
        `INSERT INTO webhooks (id, name, config, secrets, start_scopes, base_url, url_verified, created_by, updated_by, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)`,
      )
        .bind(id, settings.name, JSON.stringify(settings), encrypted, JSON.stringify(save.startScopes), save.baseUrl, save.by, save.by, save.now, save.now)
        .run();
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(settings.name);
      throw error;
    }
    return (await this.get(id))!;
  }

  /**
   * Replaces webhook `id`'s settings and secrets (secrets given back as {@link MASKED} are kept); its id, creator and
   * whether its URL was verified stay. 404 when there is none, 409 when the new name is another's. A secret kept is
   * the one stored when the write lands: the write goes through only while the secrets are still those read (D1 has no
   * transaction across the read and the write), and is made again over a change of them that landed meanwhile (a
   * rotation), rather than put back the secret it replaced; 409 when they keep changing.
   */
  async update(id: string, save: WebhookSave): Promise<Webhook> {
    for (let attempt = 0; attempt < EDIT_ATTEMPTS; attempt++) {
      const found = await this.getWithSecrets(id);
      if (found === undefined) throw new ApiError(404, "NOT_FOUND", `No webhook ${id}`);
      const { settings, secrets } = checked(save.body, found.secrets);
      const encrypted = await encryptSecret(await requireKeyring(this.#env), secretsName(id), JSON.stringify(secrets));
      let changes: number;
      try {
        const result = await this.#env.DB.prepare(
          `UPDATE webhooks SET name = ?, config = ?, secrets = ?, start_scopes = ?, base_url = ?, updated_by = ?, update_time = ? WHERE id = ? AND secrets = ?`,
        )
          .bind(settings.name, JSON.stringify(settings), encrypted, JSON.stringify(save.startScopes), save.baseUrl, save.by, save.now, id, found.sealed)
          .run();
        changes = result.meta.changes;
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken(settings.name);
        throw error;
      }
      // Nothing changed: deleted meanwhile (404 when read again) or its secrets changed (made again over them).
      if (changes > 0) return (await this.get(id))!;
    }
    throw new ApiError(409, "CONFLICT", `Webhook ${id}'s secrets kept changing while this update was being made; try again`);
  }

  /** Removes webhook `id`, its event history and the memory of its deliveries; false when there was none. */
  async delete(id: string): Promise<boolean> {
    const db = this.#env.DB;
    const [result] = await db.batch([
      db.prepare(`DELETE FROM webhooks WHERE id = ?`).bind(id),
      db.prepare(`DELETE FROM webhook_events WHERE webhook_id = ?`).bind(id),
      db.prepare(`DELETE FROM webhook_delivery_seeds WHERE webhook_id = ?`).bind(id),
    ]);
    return result!.meta.changes > 0;
  }

  /**
   * Sets webhook `id`'s tags to what `change` makes of them (it may throw a refusal); false when there is no such
   * webhook. Two edits at once both land: the later one is made again over the first's tags.
   */
  async changeTags(id: string, change: (tags: readonly Tag[]) => Tag[]): Promise<boolean> {
    for (let attempt = 0; attempt < EDIT_ATTEMPTS; attempt++) {
      const webhook = await this.get(id);
      if (webhook === undefined) return false;
      const tags = change(webhook.settings.tags);
      // Only over the tags `change` saw: an edit that landed meanwhile is read again, not overwritten.
      const result = await this.#env.DB.prepare(`UPDATE webhooks SET config = json_set(config, '$.tags', json(?1)) WHERE id = ?2 AND COALESCE(json_extract(config, '$.tags'), '[]') = ?3`)
        .bind(JSON.stringify(tags), id, JSON.stringify(webhook.settings.tags))
        .run();
      if (result.meta.changes > 0) return true;
    }
    throw new ApiError(409, "CONFLICT", `Webhook ${id}'s tags kept changing while this change was being made; try again`);
  }

  /** Adds executions an event reached after it was recorded (see `completeLateWaitingTasks`): it matched. */
  async addEventReach(eventId: string, workflowIds: string[]): Promise<void> {
    await this.#env.DB.prepare(
      `UPDATE webhook_events SET matched = 1,
         workflow_ids = (SELECT json_group_array(value) FROM (SELECT value FROM json_each(webhook_events.workflow_ids) UNION SELECT value FROM json_each(?1)))
       WHERE event_id = ?2`,
    )
      .bind(JSON.stringify(workflowIds), eventId)
      .run();
  }

  /**
   * Records an event webhook `id` received and verified, keeping its latest {@link EVENTS_KEPT}. An event recorded
   * already (its delivery resent, see `delivery-memory.ts`) is kept once: what this attempt reached is added to it.
   * `alongside` are run in the same batch (the delivery's last event forgets its delivery: a round trip fewer). Nothing
   * is recorded for a webhook deleted meanwhile.
   */
  async recordEvent(id: string, event: WebhookEvent, alongside: readonly D1PreparedStatement[] = []): Promise<void> {
    const db = this.#env.DB;
    await db.batch([
      db.prepare(
        // Only while the webhook exists: one deleted while this event was delivered took its history with it, and a row
        // written after would be kept for good (no webhook is ever given its id again, so none would trim it).
        `INSERT INTO webhook_events (event_id, webhook_id, received_at, matched, workflow_ids, payload)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ?2)
         ON CONFLICT (event_id) DO UPDATE SET matched = max(webhook_events.matched, ?4),
           workflow_ids = (SELECT json_group_array(value) FROM (SELECT value FROM json_each(webhook_events.workflow_ids) UNION SELECT value FROM json_each(?5)))`,
      ).bind(event.eventId, id, event.timeStamp, event.matched ? 1 : 0, JSON.stringify(event.workflowIds), cutToBytes(event.payload, MAX_EVENT_PAYLOAD_BYTES)),
      db.prepare(`DELETE FROM webhook_events WHERE webhook_id = ?1 AND event_id NOT IN (SELECT event_id FROM webhook_events WHERE webhook_id = ?1 ORDER BY received_at DESC, event_id LIMIT ${EVENTS_KEPT})`).bind(id),
      ...alongside,
    ]);
  }

  /** The latest events webhook `id` received and verified, newest first. */
  async events(id: string): Promise<WebhookEvent[]> {
    type Row = { event_id: string; received_at: number; matched: number; workflow_ids: string; payload: string };
    const { results } = await this.#env.DB.prepare(`SELECT * FROM webhook_events WHERE webhook_id = ? ORDER BY received_at DESC, event_id LIMIT ${EVENTS_KEPT}`).bind(id).all<Row>();
    return results.map((row) => ({ eventId: row.event_id, matched: row.matched === 1, workflowIds: JSON.parse(row.workflow_ids) as string[], payload: row.payload, timeStamp: row.received_at }));
  }

  /** Records that an event to webhook `id` passed its verifier (Orkes' `urlVerified`). */
  async markVerified(id: string): Promise<void> {
    await this.#env.DB.prepare(`UPDATE webhooks SET url_verified = 1 WHERE id = ? AND url_verified = 0`).bind(id).run();
  }
}

/** Settings and secrets of a save's body, or a 400 naming every problem. */
function checked(body: WebhookConfigBody, kept?: WebhookSecrets): { settings: WebhookSettings; secrets: WebhookSecrets } {
  const made = webhookOf(body, kept);
  if ("problems" in made) throw validationError("Invalid webhook", made.problems);
  return made;
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && /UNIQUE constraint failed/i.test(error.message);
}

function nameTaken(name: string): ApiError {
  return new ApiError(409, "CONFLICT", `A webhook named ${name} already exists`);
}

/**
 * Orkes' WebhookConfig JSON of a saved webhook, secrets shown as {@link MASKED}, with the URL its events go to and,
 * when given, its latest events (`webhookExecutionHistory`).
 */
export function webhookJson(webhook: Webhook, origin: string, events?: WebhookEvent[]): Record<string, unknown> {
  const { headerNames, hasSecretValue, workflowsToStart, idempotencyKey, idempotencyStrategy, ...settings } = webhook.settings;
  const start: Record<string, unknown> = { ...workflowsToStart };
  if (idempotencyKey !== undefined) start["idempotencyKey"] = idempotencyKey;
  if (idempotencyStrategy !== undefined) start["idempotencyStrategy"] = idempotencyStrategy;
  const json: Record<string, unknown> = {
    id: webhook.id,
    ...settings,
    headers: Object.fromEntries(headerNames.map((name) => [name, MASKED])),
    workflowsToStart: start,
    urlVerified: webhook.urlVerified,
    url: `${webhook.baseUrl ?? origin}/webhook/${webhook.id}`,
    createTime: webhook.createTime,
    updateTime: webhook.updateTime,
  };
  if (hasSecretValue) json["secretValue"] = MASKED;
  if (events !== undefined) json["webhookExecutionHistory"] = events;
  if (webhook.createdBy !== undefined) json["createdBy"] = webhook.createdBy;
  if (webhook.updatedBy !== undefined) json["updatedBy"] = webhook.updatedBy;
  return json;
}
