/**
 * What a webhook delivery has done, kept in D1 (`webhook_delivery_seeds`) for its resend. A delivery answered 503 (its
 * count of calls spent, a task's execution unreachable) or cut short (an eviction, an error) is sent again by its
 * sender with the same body, and each resend did again what the attempts before it had done: the workflows of its
 * events started again, its events kept again in the history. A delivery is known by its webhook and the SHA-256 of its
 * query and verified body (every sender resends the same body; not all send a delivery id); what each of its events
 * does once is claimed in one statement before anything is done (one row: a random seed every id of its events is
 * derived from), so an attempt cut short anywhere leaves it for the next, and forgotten once the delivery is answered
 * 200: a sender's later resend of a delivery that was taken whole is a new delivery, as in Orkes, whose webhooks leave
 * such duplicates to the `idempotencyKey` of the workflows they start. Both statements ride in batches the delivery
 * makes anyway (its first look-ups, its last record), the claim with a bounded sweep of expired rows: every D1 round
 * trip goes to the primary database, and these are made on every delivery.
 */

import { hexOf, uuidFromDigest } from "../../engine/task-id";

/**
 * How long a delivery not answered 200 is remembered: the longest its sender resends it (Stripe resends an event for up
 * to three days, SendGrid for a day, Slack within the hour). A resend later than that is taken as a new delivery.
 */
export const DELIVERY_MEMORY_MS = 72 * 3_600_000;

/** What one event of a delivery does once, whichever attempt does it. */
export interface EventMemory {
  /** The id of its record in the webhook's history (the answer's `eventId`). */
  eventId: string;
  /** Each workflow it starts: the id its execution is started under (claimed before it is started). */
  workflowIds: Readonly<Record<string, string>>;
  /** What its starts say started them (see `WorkflowExecution.start`): a start made again finds its execution started. */
  starter: string;
}

/** A delivery's memory. */
export interface DeliveryMemory {
  digest: string;
  /** When the delivery first came: a task that began to wait after it never takes its events. */
  receivedAt: number;
  /**
   * Event `index`'s memory, its ids derived when asked: an attempt derives those of the events it reaches, which its
   * count of calls bounds, not those of the whole batch (SendGrid's 100 events to a webhook starting 50 workflows were
   * 5,100 HMACs on every attempt, about 20 ms of CPU, where Workers Free allows an invocation 10).
   */
  event(index: number): Promise<EventMemory>;
}

/** The SHA-256 (hex) of a delivery's query and body: what its sender sends again. */
export async function deliveryDigest(url: string, body: Uint8Array): Promise<string> {
  const query = new TextEncoder().encode(new URL(url).search);
  const bytes = new Uint8Array(query.length + 1 + body.length);
  bytes.set(query);
  bytes.set(body, query.length + 1);
  return hexOf(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/** The name a delivery's event's record id is derived under (no workflow's name is empty). */
const EVENT_RECORD = "";

/** Most expired deliveries one claim deletes with it: the table is swept as it is used, never all at once. */
export const EXPIRED_DELIVERIES_SWEPT_PER_CLAIM = 20;

/** A fresh delivery's seed: 32 random bytes (hex), the secret every id of its events is derived from. */
function freshSeed(): string {
  return hexOf(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * The id of what event `index` does once under `name` (a workflow's, or {@link EVENT_RECORD} for its record), derived
 * from the delivery's seed: the HMAC-SHA256 of the two, its first 16 bytes as a version-4 UUID. The same on every
 * attempt (the seed is the delivery's), and as unpredictable as a random one to anyone without the seed.
 */
async function derivedId(key: CryptoKey, index: number, name: string): Promise<string> {
  return uuidFromDigest(new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${index}:${name}`))), 4);
}

/**
 * The memory of the delivery `digest` to webhook `webhookId`, whose events each start `workflowNames`: what an
 * earlier attempt within {@link DELIVERY_MEMORY_MS} claimed, else a fresh delivery claimed now (one D1 row, one
 * statement): a random seed, from which every id of its events is derived (see {@link derivedId}), so that a delivery
 * writes one row however many events and workflows it has (D1 bills rows written; Workers Free allows 100,000 a day),
 * and a workflow added to the webhook since the first attempt gets its id the same way. Concurrent attempts get the
 * same seed (the claim is one upsert). The claim is run in one batch with a bounded sweep of any webhook's expired
 * deliveries and with `alongside` (the delivery's first reads: each D1 round trip goes to the primary database, on
 * every delivery), whose results are answered after them.
 */
export async function rememberDelivery(
  db: D1Database,
  webhookId: string,
  digest: string,
  workflowNames: readonly string[],
  now: number,
  alongside: readonly D1PreparedStatement[] = [],
): Promise<{ memory: DeliveryMemory; alongside: D1Result[] }> {
  // An expired row (a delivery never resent in time) is taken over as new, seed and first arrival; a live one is answered
  // as it is. The sweep comes after it: it never deletes the row just claimed (its time is then at most 72 h old).
  const claim = db
    .prepare(
      `INSERT INTO webhook_delivery_seeds (webhook_id, digest, seed, received_at) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (webhook_id, digest) DO UPDATE SET
         seed = CASE WHEN webhook_delivery_seeds.received_at < ?5 THEN excluded.seed ELSE webhook_delivery_seeds.seed END,
         received_at = CASE WHEN webhook_delivery_seeds.received_at < ?5 THEN excluded.received_at ELSE webhook_delivery_seeds.received_at END
       RETURNING seed, received_at`,
    )
    .bind(webhookId, digest, freshSeed(), now, now - DELIVERY_MEMORY_MS);
  const sweep = sweepExpiredDeliveries(db, now);
  const [claimed, , ...others] = await db.batch([claim, sweep, ...alongside]);
  const row = (claimed!.results as Array<{ seed: string; received_at: number }>)[0]!;
  const key = await crypto.subtle.importKey("raw", hexBytes(row.seed), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const memory: DeliveryMemory = {
    digest,
    receivedAt: Math.min(now, row.received_at),
    event: (index) => eventMemory(key, `webhook:${webhookId}/${digest}/${index}`, index, workflowNames),
  };
  return { memory, alongside: others };
}

/** Event `index`'s memory: its record's id and each of `workflowNames`' start ids, derived under the delivery's `key`. */
async function eventMemory(key: CryptoKey, starter: string, index: number, workflowNames: readonly string[]): Promise<EventMemory> {
  const ids = await Promise.all([EVENT_RECORD, ...workflowNames].map((name) => derivedId(key, index, name)));
  return { eventId: ids[0]!, workflowIds: Object.fromEntries(workflowNames.map((name, at) => [name, ids[at + 1]!])), starter };
}

/** The bytes of a seed's hex. */
function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/**
 * The statement deleting a few deliveries past their time, any webhook's (at most
 * {@link EXPIRED_DELIVERIES_SWEPT_PER_CLAIM}, oldest first by the `received_at` index): run with every claim, so a
 * webhook that is never answered 200 again leaves no rows for good, and each claim, adding at most one row, deletes more.
 */
export function sweepExpiredDeliveries(db: D1Database, now: number): D1PreparedStatement {
  return db
    .prepare(`DELETE FROM webhook_delivery_seeds WHERE rowid IN (SELECT rowid FROM webhook_delivery_seeds WHERE received_at < ? ORDER BY received_at LIMIT ?)`)
    .bind(now - DELIVERY_MEMORY_MS, EXPIRED_DELIVERIES_SWEPT_PER_CLAIM);
}

/**
 * The statement forgetting the delivery `digest` to webhook `webhookId` (answered 200): run in the batch that records the
 * delivery's last event (a round trip fewer on every delivery). Expired deliveries are swept by the claims.
 */
export function forgetDelivery(db: D1Database, webhookId: string, digest: string): D1PreparedStatement {
  return db.prepare(`DELETE FROM webhook_delivery_seeds WHERE webhook_id = ?1 AND digest = ?2`).bind(webhookId, digest);
}
