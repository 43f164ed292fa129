-- The reference names of an execution's failed tasks, comma-separated, for search results
-- (Conductor's WorkflowSummary.failedReferenceTaskNames). NULL for rows indexed before this column
-- existed: search shows "" for them until the execution's row is next written.
ALTER TABLE executions ADD COLUMN failed_reference_task_names TEXT;
