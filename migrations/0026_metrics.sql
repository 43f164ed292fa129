-- Counters behind GET /api/metrics (Prometheus), one row per metric, name (a workflow's or a task type), status and
-- duration bucket: executions started; executions and tasks ended, with how long they ran; tasks started, with how
-- long they waited to (for a worker, its poll). The search-row writer counts in the transaction that writes an
-- execution's row, and only what that row shows for the first time (a row sent again counts nothing). Counters only
-- grow: an execution removed later stays counted.
CREATE TABLE metric_counts (
  metric TEXT NOT NULL,
  name TEXT NOT NULL,
  -- '' for a metric without one (starts, waits).
  status TEXT NOT NULL,
  -- 0 for a metric without durations (starts).
  bucket INTEGER NOT NULL,
  count INTEGER NOT NULL,
  sum_ms INTEGER NOT NULL,
  PRIMARY KEY (metric, name, status, bucket)
);
