/**
 * What a webhook delivery has done, kept in D1 (`webhook_deliveries`) for its resend. A delivery answered 503 (its count
 * of calls spent, a task's execution unreachable) or cut short (an eviction, an error) is sent again by its sender with
 * the same body, and each resend did again what the attempts before it had done: the workflows of its events started
 * again, its events kept again in the history. A delivery is known by its webhook and the SHA-256 of its query and
 * verified body (every sender resends the same body; not all send a delivery id); what each of its events does once is
 * claimed in one statement before anything is done, so an attempt cut short anywhere leaves it for the next, and
 * forgotten once the delivery is answered 200: a sender's later resend of a delivery that was taken whole is a new
 * delivery, as in Orkes, whose webhooks leave such duplicates to the `idempotencyKey` of the workflows they start.
 * Both statements ride in batches the delivery makes anyway (its first look-ups, its last record): every D1 round trip
 * goes to the primary database, and these are made on every delivery.
 */

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
  /** Its events', by index. */
  events: EventMemory[];
}

/** The SHA-256 (hex) of a delivery's query and body: what its sender sends again. */
export async function deliveryDigest(url: string, body: Uint8Array): Promise<string> {
  const query = new TextEncoder().encode(new URL(url).search);
  const bytes = new Uint8Array(query.length + 1 + body.length);
  bytes.set(query);
  bytes.set(body, query.length + 1);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The row a delivery's event's record id is kept in (no workflow's name is empty). */
const EVENT_RECORD = "";

/**
 * The memory of the delivery `digest` to webhook `webhookId` of `events` events, each starting `workflowNames`: what an
 * earlier attempt within {@link DELIVERY_MEMORY_MS} claimed, else fresh ids claimed now (one D1 statement). Concurrent
 * attempts get the same ids. The claim is run in one batch with `alongside` (the delivery's first reads: each D1 round
 * trip goes to the primary database, on every delivery), whose results are answered after it.
 */
export async function rememberDelivery(
  db: D1Database,
  webhookId: string,
  digest: string,
  events: number,
  workflowNames: readonly string[],
  now: number,
  alongside: readonly D1PreparedStatement[] = [],
): Promise<{ memory: DeliveryMemory; alongside: D1Result[] }> {
  const claims = Array.from({ length: events }, (_, index) => [EVENT_RECORD, ...workflowNames].map((name) => [index, name, crypto.randomUUID()]));
  // An expired row (a delivery never resent in time) is taken over as new; a live one is answered as it is. A row new to
  // a live delivery (a workflow added to the webhook's since its first attempt) counts from the delivery's first arrival
  // too: all of a delivery's rows expire together, never some taken over as a new delivery's and the others answered.
  const claim = db
    .prepare(
      `INSERT INTO webhook_deliveries (webhook_id, digest, event_index, workflow_name, id, received_at)
       SELECT ?1, ?2, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
         coalesce((SELECT min(received_at) FROM webhook_deliveries WHERE webhook_id = ?1 AND digest = ?2 AND received_at >= ?5), ?3)
       FROM json_each(?4) WHERE true
       ON CONFLICT (webhook_id, digest, event_index, workflow_name) DO UPDATE SET
         id = CASE WHEN webhook_deliveries.received_at < ?5 THEN excluded.id ELSE webhook_deliveries.id END,
         received_at = CASE WHEN webhook_deliveries.received_at < ?5 THEN excluded.received_at ELSE webhook_deliveries.received_at END
       RETURNING event_index, workflow_name, id, received_at`,
    )
    .bind(webhookId, digest, now, JSON.stringify(claims.flat()), now - DELIVERY_MEMORY_MS);
  const [claimed, ...others] = await db.batch([claim, ...alongside]);
  const rows = claimed!.results as Array<{ event_index: number; workflow_name: string; id: string; received_at: number }>;
  const memory: DeliveryMemory = {
    digest,
    receivedAt: Math.min(now, ...rows.map((row) => row.received_at)),
    events: Array.from({ length: events }, (_, index) => ({ eventId: "", workflowIds: {}, starter: `webhook:${webhookId}/${digest}/${index}` })),
  };
  for (const row of rows) {
    const event = memory.events[row.event_index]!;
    if (row.workflow_name === EVENT_RECORD) event.eventId = row.id;
    else event.workflowIds = { ...event.workflowIds, [row.workflow_name]: row.id };
  }
  return { memory, alongside: others };
}

/**
 * The statement forgetting the delivery `digest` to webhook `webhookId` (answered 200), and the webhook's deliveries
 * past their time: run in the batch that records the delivery's last event (a round trip fewer on every delivery).
 */
export function forgetDelivery(db: D1Database, webhookId: string, digest: string, now: number): D1PreparedStatement {
  return db.prepare(`DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND (digest = ?2 OR received_at < ?3)`).bind(webhookId, digest, now - DELIVERY_MEMORY_MS);
}
