-- Orkes' groups: sets of users sharing roles. A member holds the group's roles as if assigned them.
CREATE TABLE groups (
  id TEXT PRIMARY KEY,
  description TEXT NOT NULL DEFAULT '',
  roles TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
);

CREATE TABLE group_members (
  group_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_by_user ON group_members (user_id);
