-- The event whose handler's start_workflow action started an execution (Conductor's WorkflowSummary.event, a keyword of
-- its index, which a search shows, queries and sorts by). NULL for any other start, and for rows indexed before this
-- column existed. Adding a column rewrites no row.
ALTER TABLE executions ADD COLUMN event TEXT;
