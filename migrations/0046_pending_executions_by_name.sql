-- The executions not ended (RUNNING, PAUSED) of each workflow name, newest first: GET /api/workflow/running/{name}
-- (Conductor's getRunningWorkflows) looks them up. Through the name's index it read every execution the name ever had
-- to find the few still running; through the status index, every execution not ended of every name (a tenant with many
-- waiting executions of other names). A partial index holds only the rows the lookup wants, and costs a write only
-- while an execution has not ended.
CREATE INDEX IF NOT EXISTS executions_pending_by_name ON executions (workflow_name, start_time DESC) WHERE status IN ('RUNNING', 'PAUSED');
