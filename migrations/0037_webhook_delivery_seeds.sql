-- A remembered webhook delivery is one row, where it was one per event and workflow it starts (0036): a batch of 100
-- events whose webhook starts 50 workflows wrote 5,100 rows on every attempt, and D1 bills rows written (Workers Free
-- allows 100,000 a day). The row holds a random secret `seed` (32 bytes, hex) from which every id the delivery's events
-- use (their records', their starts') is derived (src/worker/webhooks/delivery-memory.ts: an HMAC-SHA256 of the event's
-- index and the workflow's name, as a version-4 UUID), the same on every attempt and unguessable without the seed.
-- `received_at`: when the delivery first came (a task that began to wait later never takes it); an index on it lets
-- each claim delete a few expired rows of any webhook.
--
-- A new table, added beside 0036's `webhook_deliveries`, which is left as it is: an upgrade applies the migrations
-- before it deploys (README), so the code of the revision before runs over them until the deploy, and an isolate of it
-- may serve a while after; it claims every delivery in `webhook_deliveries` (its columns event_index, workflow_name,
-- id), and a table reshaped under it would answer each of its deliveries with an error. A later migration drops
-- `webhook_deliveries` once no code of that revision runs; until then its rows (at most 72 hours' resend memory of the
-- old code, which deletes them itself) are only left. What an upgrade with deliveries in flight loses: a delivery
-- answered 503 (or cut short) by the old code and resent to the new one is taken as a new one, as before deliveries
-- were remembered: its events are kept again in the history, the workflows it started are started again under fresh
-- ids (unless the webhook's idempotencyKey finds them), and tasks that began to wait since its first arrival may take it.
CREATE TABLE webhook_delivery_seeds (
  webhook_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  seed TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (webhook_id, digest)
);
CREATE INDEX webhook_delivery_seeds_by_age ON webhook_delivery_seeds (received_at);
