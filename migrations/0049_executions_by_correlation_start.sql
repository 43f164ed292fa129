-- The executions of each correlation id, newest first: Conductor's getWorkflows (GET /api/workflow/{name}/correlated/{id},
-- POST /api/workflow/{name}/correlated, POST /api/workflow/correlated/batch) answers with each id's newest 1,000.
-- Through an index of the id alone it read every execution of the id and sorted them: a customer's id used as the
-- correlation id of a million runs, a million rows read at every lookup. This one walks an id's rows in start order and
-- stops after the newest; the search's `correlationId = x` finds its rows through it as through the one it replaces.
-- It replaces executions_by_correlation rather than joining it, so each write of an execution's search row writes as
-- many index rows as before (the upsert sets correlation_id on every write: the entry was rewritten already); each entry
-- is wider (the start time and the execution's id). On a live database this is a one-off cost: the CREATE reads every
-- row of executions and writes an entry for each, the DROP frees the old index's pages. Created before the old one is
-- dropped, so a lookup or search running between the two statements still has an index. Neither is unique (no
-- INSERT ... ON CONFLICT targets them), and the code before this migration reads through the new one.
-- IF NOT EXISTS / IF EXISTS: a rerun does nothing.
CREATE INDEX IF NOT EXISTS executions_by_correlation_start ON executions (correlation_id, start_time DESC, workflow_id);
DROP INDEX IF EXISTS executions_by_correlation;
