-- Indexes for searches the Conductor UI makes that scanned the whole table: tasks by workflow name (the task search's
-- main filter) and by correlation id, and executions by their last change (`modifiedTime` queries, `sort=updateTime`).
CREATE INDEX IF NOT EXISTS task_index_by_workflow_name ON task_index (workflow_name, update_time);
CREATE INDEX IF NOT EXISTS task_index_by_correlation ON task_index (correlation_id);
CREATE INDEX IF NOT EXISTS executions_by_update ON executions (update_time DESC);
