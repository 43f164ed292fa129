-- Human tasks by state: an inbox search (POST /api/human/tasks/search, searchType INBOX, what a user's task list asks
-- for) finds its user's tasks by assignee and claimant (their indexes) or the open ones any reader may claim (state
-- ASSIGNED, no assignee, no claimant), and without an index for that last alternative SQLite read every human task row
-- ever written, completed ones of every user included, for each inbox page and its count. A search by states (ADMIN)
-- scanned the same way. Open and in-progress tasks are few beside those ended, so the state finds them quickly.
CREATE INDEX IF NOT EXISTS human_tasks_by_state ON human_tasks (state, updated_on);
