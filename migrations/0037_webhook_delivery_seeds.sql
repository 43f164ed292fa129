-- A remembered webhook delivery is one row, where it was one per event and workflow it starts (0036): a batch of 100
-- events whose webhook starts 50 workflows wrote 5,100 rows on every attempt, and D1 bills rows written (Workers Free
-- allows 100,000 a day). The row holds a random secret `seed` (32 bytes, hex) from which every id the delivery's events
-- use (their records', their starts') is derived (src/worker/webhooks/delivery-memory.ts: an HMAC-SHA256 of the event's
-- index and the workflow's name, as a version-4 UUID), the same on every attempt and unguessable without the seed.
-- `received_at`: when the delivery first came (a task that began to wait later never takes it); an index on it lets
-- each claim delete a few expired rows of any webhook.
--
-- The rows of the old shape are dropped, not converted: they are a resend memory of at most 72 hours, and one
-- delivery's ids (random, one per row) cannot be derived from a seed. What a deploy with rows in flight loses: a
-- delivery answered 503 (or cut short) before the deploy and resent after it is taken as a new one, as before
-- deliveries were remembered: its events are kept again in the history, the workflows it started are started again
-- under fresh ids (unless the webhook's idempotencyKey finds them), and tasks that began to wait since its first
-- arrival may take it.
DROP TABLE webhook_deliveries;
CREATE TABLE webhook_deliveries (
  webhook_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  seed TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (webhook_id, digest)
);
CREATE INDEX webhook_deliveries_by_age ON webhook_deliveries (received_at);
