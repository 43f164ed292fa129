-- What a webhook delivery the sender is to send again has done, so that its resend (the same body and query) does
-- nothing twice (src/worker/webhooks/delivery-memory.ts). One row per event of the delivery (`event_index`) and thing
-- it does once: `workflow_name` '' holds the id of the event's record in the history, any other the id of the
-- execution the event starts of that workflow, claimed before it is started. `received_at`: when the delivery first
-- came (a task that began to wait later never takes it). A delivery answered 200 forgets its rows; those of one never
-- resent count for 72 hours and are replaced after.
CREATE TABLE webhook_deliveries (
  webhook_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  event_index INTEGER NOT NULL,
  workflow_name TEXT NOT NULL,
  id TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (webhook_id, digest, event_index, workflow_name)
);
CREATE INDEX webhook_deliveries_by_age ON webhook_deliveries (webhook_id, received_at);
