-- The executions of one workflow name in one status, newest first: the Conductor UI's list filtered by name and status
-- (`workflowType IN (x) AND status IN (FAILED)`, sorted by startTime) and a client's search by both. Through the status
-- index it read every execution in that status of every name, and through the name's index every execution the name
-- ever had; this one finds the page's rows in order and stops after them, and counts the hits from the index alone.
-- IF NOT EXISTS: a rerun over a table already holding it does nothing.
CREATE INDEX IF NOT EXISTS executions_by_name_status ON executions (workflow_name, status, start_time DESC);
