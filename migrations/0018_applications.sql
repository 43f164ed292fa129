-- Orkes' applications: non-human identities (services, workers, CI jobs) with access keys and roles. An application
-- acts as the user `app:<id>`: its keys are rows of api_keys and its roles its user_assignments row, so everything
-- the security API says of users holds for it.
CREATE TABLE applications (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  created_by TEXT,
  updated_by TEXT,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
);

-- Orkes' access keys can be deactivated and activated again (toggleAccessKeyStatus); an inactive key authenticates
-- nothing, and the sessions obtained with it end.
ALTER TABLE api_keys ADD COLUMN active INTEGER NOT NULL DEFAULT 1;

-- Orkes' standard roles, so that its clients' addApplicationRole(id, "WORKER") and the like name a role here. Plain
-- roles: listed, changed and deleted like any other; a role of the same name defined before is kept as it was.
-- WORKER and USER grant nothing by themselves (in Orkes what they reach is granted per task or workflow): add the
-- scopes they may act on, e.g. TASK_EXECUTE on task:<name> for a worker.
INSERT OR IGNORE INTO roles (name, description, permissions, create_time, update_time) VALUES
  ('ADMIN', 'Orkes'' ADMIN: every permission on everything', '[{"action":"WORKFLOW_READ","scope":"*"},{"action":"WORKFLOW_WRITE","scope":"*"},{"action":"WORKFLOW_ADMIN","scope":"*"},{"action":"TASK_READ","scope":"*"},{"action":"TASK_WRITE","scope":"*"},{"action":"TASK_EXECUTE","scope":"*"},{"action":"SYSTEM_ADMIN","scope":"*"},{"action":"USER_ADMIN","scope":"*"},{"action":"METADATA_ADMIN","scope":"*"}]', 0, 0),
  ('METADATA_MANAGER', 'Orkes'' METADATA_MANAGER: manages every workflow and task definition', '[{"action":"METADATA_ADMIN","scope":"*"}]', 0, 0),
  ('WORKFLOW_MANAGER', 'Orkes'' WORKFLOW_MANAGER: reads, starts and manages every workflow execution', '[{"action":"WORKFLOW_READ","scope":"workflow:*"},{"action":"WORKFLOW_ADMIN","scope":"workflow:*"},{"action":"TASK_READ","scope":"*"}]', 0, 0),
  ('UNRESTRICTED_WORKER', 'Orkes'' UNRESTRICTED_WORKER: polls and executes every task', '[{"action":"TASK_EXECUTE","scope":"task:*"}]', 0, 0),
  ('USER_READ_ONLY', 'Orkes'' USER_READ_ONLY: reads every definition, execution and task', '[{"action":"WORKFLOW_READ","scope":"*"},{"action":"TASK_READ","scope":"*"}]', 0, 0),
  ('WORKER', 'Orkes'' WORKER: polls and executes the tasks added to this role (TASK_EXECUTE on task:<name>); none yet', '[]', 0, 0),
  ('USER', 'Orkes'' USER: acts on the workflows added to this role; none yet', '[]', 0, 0);
