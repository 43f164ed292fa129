-- Counters behind GET /api/metrics (Prometheus): executions started; executions and tasks ended, with how long they
-- ran; tasks started, with how long they waited to (for a worker, its poll); in duration buckets, per workflow or task
-- type. The search-row writer counts in the transaction that writes an execution's row, and only what that row shows
-- for the first time (a row sent again counts nothing). Counters only grow: an execution removed later stays counted.
CREATE TABLE workflow_starts (
  workflow_name TEXT NOT NULL PRIMARY KEY,
  count INTEGER NOT NULL
);
CREATE TABLE workflow_ends (
  workflow_name TEXT NOT NULL,
  status TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  count INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  PRIMARY KEY (workflow_name, status, bucket)
);
CREATE TABLE task_ends (
  task_type TEXT NOT NULL,
  status TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  count INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  PRIMARY KEY (task_type, status, bucket)
);
CREATE TABLE task_waits (
  task_type TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  count INTEGER NOT NULL,
  wait_ms INTEGER NOT NULL,
  PRIMARY KEY (task_type, bucket)
);
