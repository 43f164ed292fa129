-- Orkes' human tasks. The human task list (POST /api/human/tasks/search): one row per HUMAN task instance of an
-- execution's latest tasks, written with the execution's task rows (task_index) by the same writer and replaced with
-- them; `entry` is the task's HumanTaskEntry JSON as it stood then (input and output left out when large).
CREATE TABLE human_tasks (
  task_id TEXT NOT NULL PRIMARY KEY,
  workflow_id TEXT NOT NULL,
  workflow_name TEXT NOT NULL,
  task_ref_name TEXT NOT NULL,
  definition_name TEXT NOT NULL,
  display_name TEXT NOT NULL,
  state TEXT NOT NULL,
  assignee_type TEXT,
  assignee TEXT,
  claimant_type TEXT,
  claimant TEXT,
  created_on INTEGER NOT NULL,
  updated_on INTEGER NOT NULL,
  entry TEXT NOT NULL
);
CREATE INDEX human_tasks_by_workflow ON human_tasks (workflow_id);
CREATE INDEX human_tasks_by_update ON human_tasks (updated_on);
CREATE INDEX human_tasks_by_assignee ON human_tasks (assignee_type, assignee, updated_on);
CREATE INDEX human_tasks_by_claimant ON human_tasks (claimant_type, claimant, updated_on);

-- User forms (Orkes' human task templates): a JSON schema of the form's data and the UI layout it is shown with, by
-- name and version.
CREATE TABLE human_templates (
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  json_schema TEXT NOT NULL,
  template_ui TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  created_by TEXT,
  updated_by TEXT,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL,
  PRIMARY KEY (name, version)
);
