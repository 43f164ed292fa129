-- The time of each workflow definition name's latest version deletion, later than every updateTime of the name then
-- (the time the deletion told the rate limit objects the limit of the version left latest with, since 5d29bf8; before
-- it, the deleted version's own updateTime): a version registered (or a limit changed) after it takes an updateTime
-- after it, so that its rate limit is the one its keys' objects keep whatever the clock of the isolate that saves it
-- (an ExecutionLimit keeps the limit of the latest updateTime it has seen, and may have seen a deleted version's or a
-- deletion's). One row per name with a version ever deleted.
CREATE TABLE workflow_def_deletions (
  name TEXT NOT NULL PRIMARY KEY,
  deleted_time INTEGER NOT NULL
);
