-- Orkes' schema registry (/api/schema): JSON schemas by name and version, which a workflow definition's inputSchema
-- names; a start whose input does not match is refused.
CREATE TABLE json_schemas (
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  external_ref TEXT,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL,
  created_by TEXT,
  updated_by TEXT,
  PRIMARY KEY (name, version)
);
