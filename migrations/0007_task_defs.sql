-- Task definitions (Conductor's TaskDef), by name: shared settings (retries, input defaults) for every
-- workflow task of that name. An execution copies the ones it uses when it starts.
CREATE TABLE task_defs (
  name TEXT NOT NULL PRIMARY KEY,
  definition TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
);
