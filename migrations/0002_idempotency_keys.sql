-- Idempotency keys of starts (API and SUB_WORKFLOW): one execution per workflow name and key.
-- The row is claimed atomically before the execution starts; a start that finds the key claimed by
-- another id returns that id (RETURN_EXISTING) or refuses (FAIL).
CREATE TABLE idempotency_keys (
  workflow_name TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  PRIMARY KEY (workflow_name, idempotency_key)
);
