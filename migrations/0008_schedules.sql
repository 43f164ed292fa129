-- Workflow schedules (Orkes' scheduler): one row per schedule name. `schedule` is its definition as JSON (cron
-- expression, zone, start request, window, catch-up, description); each schedule's ScheduleTrigger object reads
-- the row when its alarm runs, so this row is the one truth about a schedule. `revision` grows with every change
-- (save, pause, resume): an alarm armed for an older revision starts nothing and re-arms from the row as it is.
-- `start_scopes` are the start permissions of whoever last saved it, which every start it makes carries.
CREATE TABLE schedules (
  name TEXT NOT NULL PRIMARY KEY,
  workflow_name TEXT NOT NULL,
  schedule TEXT NOT NULL,
  paused INTEGER NOT NULL DEFAULT 0,
  paused_reason TEXT,
  revision INTEGER NOT NULL,
  start_scopes TEXT NOT NULL,
  base_url TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  updated_time INTEGER NOT NULL,
  created_by TEXT NOT NULL,
  updated_by TEXT NOT NULL
);
CREATE INDEX schedules_by_workflow ON schedules (workflow_name, name);
