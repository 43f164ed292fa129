-- The latest events each webhook received and verified (Orkes' webhookExecutionHistory): whether each completed a
-- waiting task or started a workflow, which executions it reached, and its payload (cut to a few KB). A webhook keeps
-- its latest 20; deleting it deletes them.
CREATE TABLE webhook_events (
  event_id TEXT NOT NULL PRIMARY KEY,
  webhook_id TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  matched INTEGER NOT NULL,
  workflow_ids TEXT NOT NULL,
  payload TEXT NOT NULL
);
CREATE INDEX webhook_events_by_webhook ON webhook_events (webhook_id, received_at);
