-- Orkes' webhooks (/api/metadata/webhook): where outside systems send events (POST /webhook/{id}), how each event is
-- verified, which workflows' waiting WAIT_FOR_WEBHOOK tasks it may complete and which workflows it starts. `config` is
-- the WebhookConfig as saved without its secrets (header values, secretValue), which `secrets` holds encrypted.
CREATE TABLE webhooks (
  id TEXT NOT NULL PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  config TEXT NOT NULL,
  secrets TEXT NOT NULL,
  -- What the saver could start (as schedules keep theirs): the workflows an event starts are started with these.
  start_scopes TEXT NOT NULL,
  base_url TEXT,
  url_verified INTEGER NOT NULL DEFAULT 0,
  created_by TEXT,
  updated_by TEXT,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
);

-- The webhook routing table: one row per WAIT_FOR_WEBHOOK task waiting for webhook events, written with its
-- execution's task rows (task_index) by the same writer and replaced with them. An event's values at `paths` (a JSON
-- list) make `match_key` for the tasks it matches (src/engine/tasks/wait-for-webhook/matches.ts).
CREATE TABLE webhook_waits (
  task_id TEXT NOT NULL PRIMARY KEY,
  workflow_id TEXT NOT NULL,
  workflow_name TEXT NOT NULL,
  workflow_version INTEGER NOT NULL,
  task_ref_name TEXT NOT NULL,
  paths TEXT NOT NULL,
  match_key TEXT NOT NULL,
  created_on INTEGER NOT NULL
);
CREATE INDEX webhook_waits_by_workflow ON webhook_waits (workflow_id);
CREATE INDEX webhook_waits_by_key ON webhook_waits (match_key);
CREATE INDEX webhook_waits_by_definition ON webhook_waits (workflow_name, workflow_version, task_ref_name, paths);
