-- The last revision of each deleted schedule's name: a schedule created again under the name takes the revisions after
-- it, so that an alarm armed for the deleted one (its disarm lost, or running while the name was deleted and created
-- again) finds the revision changed and re-arms from the new schedule, rather than taking it for the schedule it was
-- armed from and starting its workflow at the deleted schedule's fire. One row per name ever deleted, replaced by each
-- later deletion.
CREATE TABLE schedule_deletions (
  name TEXT NOT NULL PRIMARY KEY,
  revision INTEGER NOT NULL
);
