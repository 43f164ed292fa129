-- The task names of an execution's failed tasks, as a JSON array of strings, for search results
-- (Conductor's WorkflowSummary.failedTaskNames, a set its JSON always holds). NULL when none failed (most rows), and
-- for rows indexed before this column existed: search shows [] for both.
ALTER TABLE executions ADD COLUMN failed_task_names TEXT;
