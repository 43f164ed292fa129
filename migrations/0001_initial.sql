-- Workflow definitions: one row per name and version. The definition is stored as JSON as registered
-- (normalised), so a read returns exactly what was validated.
CREATE TABLE workflow_defs (
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  definition TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL,
  PRIMARY KEY (name, version)
);

-- The execution index behind search. Each execution's Durable Object is the source of truth; it
-- upserts its row off the hot path when its status changes, so rows may lag by a moment.
-- `update_time` orders writes: an older write arriving late never overwrites a newer one.
CREATE TABLE executions (
  workflow_id TEXT PRIMARY KEY,
  workflow_name TEXT NOT NULL,
  workflow_version INTEGER NOT NULL,
  status TEXT NOT NULL,
  correlation_id TEXT,
  parent_workflow_id TEXT,
  reason TEXT,
  priority INTEGER NOT NULL DEFAULT 0,
  create_time INTEGER NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL DEFAULT 0,
  update_time INTEGER NOT NULL,
  input TEXT,
  output TEXT
);
CREATE INDEX executions_by_start ON executions (start_time DESC);
CREATE INDEX executions_by_name ON executions (workflow_name, start_time DESC);
CREATE INDEX executions_by_status ON executions (status, start_time DESC);
CREATE INDEX executions_by_correlation ON executions (correlation_id);
