-- The search index of tasks (Conductor's GET /api/tasks/search): one row per task instance of an execution's latest
-- tasks, written with the execution's own search row (executions) by the same writer, and replaced as a whole when
-- the execution's tasks change (at most once a second while it runs). Texts are cut as the execution row's are.
CREATE TABLE task_index (
  task_id TEXT NOT NULL PRIMARY KEY,
  workflow_id TEXT NOT NULL,
  workflow_name TEXT NOT NULL,
  correlation_id TEXT,
  workflow_priority INTEGER NOT NULL,
  task_type TEXT NOT NULL,
  task_def_name TEXT NOT NULL,
  reference_task_name TEXT NOT NULL,
  status TEXT NOT NULL,
  domain TEXT,
  worker_id TEXT,
  reason TEXT,
  scheduled_time INTEGER NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL,
  input TEXT NOT NULL,
  output TEXT NOT NULL
);
CREATE INDEX task_index_by_workflow ON task_index (workflow_id);
CREATE INDEX task_index_by_update ON task_index (update_time);
CREATE INDEX task_index_by_status ON task_index (status, update_time);
CREATE INDEX task_index_by_type ON task_index (task_type, update_time);
