-- Orkes' metadata tags ({key, value}) on workflow definitions (by name, every version) and task definitions.
-- They go with their definition: deleting a task definition, or a workflow definition's last version, deletes them.
CREATE TABLE metadata_tags (
  target_type TEXT NOT NULL CHECK (target_type IN ('WORKFLOW_DEF', 'TASK_DEF')),
  target_name TEXT NOT NULL,
  tag_key TEXT NOT NULL,
  tag_value TEXT NOT NULL,
  PRIMARY KEY (target_type, target_name, tag_key, tag_value)
);
