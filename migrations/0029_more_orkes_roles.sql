-- The rest of the role names Orkes' clients offer (the JavaScript client's ApplicationRole), so that
-- addApplicationRole(id, "METADATA_API") and the like name a role here. Plain roles, as those of 0018: a role of the
-- same name defined before is kept as it was. APPLICATION_MANAGER, APPLICATION_CREATOR and PROMPT_MANAGER grant nothing
-- by themselves: applications are managed here with USER_ADMIN, which manages users too (add it to the role where that
-- is meant), and prompts are not served.
INSERT OR IGNORE INTO roles (name, description, permissions, create_time, update_time) VALUES
  ('METADATA_API', 'Orkes'' METADATA_API: uses the metadata API (every workflow and task definition)', '[{"action":"METADATA_ADMIN","scope":"*"}]', 0, 0),
  ('APPLICATION_MANAGER', 'Orkes'' APPLICATION_MANAGER: applications are managed here with USER_ADMIN (which manages users too); none yet', '[]', 0, 0),
  ('APPLICATION_CREATOR', 'Orkes'' APPLICATION_CREATOR: applications are created here with USER_ADMIN (which manages users too); none yet', '[]', 0, 0),
  ('PROMPT_MANAGER', 'Orkes'' PROMPT_MANAGER: AI prompts are not served here; none', '[]', 0, 0);
