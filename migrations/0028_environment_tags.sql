-- Environment variables carry tags too (Orkes' EnvironmentResource: GET, PUT and DELETE /environment/{name}/tags, and
-- each variable's tags in GET /environment). SQLite cannot change a CHECK constraint in place: the table is rebuilt with
-- 'ENV_VARIABLE' allowed, its rows and index as they were.
CREATE TABLE metadata_tags_new (
  target_type TEXT NOT NULL CHECK (target_type IN ('WORKFLOW_DEF', 'TASK_DEF', 'SCHEDULE', 'EVENT_HANDLER', 'SECRET', 'ENV_VARIABLE')),
  target_name TEXT NOT NULL,
  tag_key TEXT NOT NULL,
  tag_value TEXT NOT NULL,
  PRIMARY KEY (target_type, target_name, tag_key)
);
INSERT INTO metadata_tags_new (target_type, target_name, tag_key, tag_value) SELECT target_type, target_name, tag_key, tag_value FROM metadata_tags;
DROP TABLE metadata_tags;
ALTER TABLE metadata_tags_new RENAME TO metadata_tags;
CREATE INDEX metadata_tags_by_tag ON metadata_tags (target_type, tag_key, tag_value);
