-- Orkes' metadata tags ({key, value}, one value per key) on workflow definitions (by name, every version), task
-- definitions, schedules and event handlers. They go with what they tag: deleting it (a workflow definition's last
-- version) deletes them.
CREATE TABLE metadata_tags (
  target_type TEXT NOT NULL CHECK (target_type IN ('WORKFLOW_DEF', 'TASK_DEF', 'SCHEDULE', 'EVENT_HANDLER')),
  target_name TEXT NOT NULL,
  tag_key TEXT NOT NULL,
  tag_value TEXT NOT NULL,
  PRIMARY KEY (target_type, target_name, tag_key)
);
CREATE INDEX metadata_tags_by_tag ON metadata_tags (target_type, tag_key, tag_value);
