-- Orkes' environment variables (`/api/environment`): cluster-wide values workflows read as `${workflow.env.<name>}`.
-- Each execution keeps the values of those its definition names as they were when it started.
CREATE TABLE environment_variables (
  name TEXT NOT NULL PRIMARY KEY,
  value TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL,
  updated_by TEXT
);
