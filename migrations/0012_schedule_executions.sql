-- What each fire of a schedule did (Orkes' WorkflowScheduleExecutionModel): the execution it started (EXECUTED) or
-- why none started (FAILED). One row per schedule and fire time, written by the schedule's trigger object after the
-- fire's start (a repeated alarm rewrites it); a schedule keeps its latest 1,000, and deleting it deletes them.
CREATE TABLE schedule_executions (
  execution_id TEXT NOT NULL PRIMARY KEY,
  schedule_name TEXT NOT NULL,
  workflow_name TEXT NOT NULL,
  scheduled_time INTEGER NOT NULL,
  execution_time INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('EXECUTED', 'FAILED')),
  workflow_id TEXT,
  reason TEXT,
  zone_id TEXT NOT NULL,
  start_workflow_request TEXT NOT NULL,
  UNIQUE (schedule_name, scheduled_time)
);
CREATE INDEX schedule_executions_by_time ON schedule_executions (execution_time);
