-- When each deleted task definition's deletion was told to its name's limit object (TaskLimit): a definition registered
-- again under the name takes an updateTime after it, so that its limits are the object's whatever the clock of the
-- isolate that saves it (the object keeps the limits of the latest updateTime it has seen). One row per name ever
-- deleted, replaced by each later deletion.
CREATE TABLE task_def_deletions (
  name TEXT NOT NULL PRIMARY KEY,
  deleted_time INTEGER NOT NULL
);
