-- Orkes' task output cache (a task's cacheConfig): outputs of HTTP and SIMPLE tasks by task name and resolved key,
-- until they expire. Expired rows are never read, and are deleted a few at a time as new outputs are written.
CREATE TABLE task_output_cache (
  task_name TEXT NOT NULL,
  cache_key TEXT NOT NULL,
  output TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (task_name, cache_key)
);
CREATE INDEX task_output_cache_by_expiry ON task_output_cache (expires_at);
