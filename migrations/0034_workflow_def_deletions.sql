-- The latest updateTime of each workflow definition name's deleted versions: a version registered (or a limit changed)
-- after them takes an updateTime after it, so that its rate limit is the one its keys' objects keep whatever the clock
-- of the isolate that saves it (an ExecutionLimit keeps the limit of the latest updateTime it has seen, and may have
-- seen a deleted version's). One row per name with a version ever deleted.
CREATE TABLE workflow_def_deletions (
  name TEXT NOT NULL PRIMARY KEY,
  deleted_time INTEGER NOT NULL
);
