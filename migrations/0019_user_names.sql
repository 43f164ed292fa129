-- Orkes' users have a name (AuthorizationClient.upsertUser): kept with the user's assignment.
ALTER TABLE user_assignments ADD COLUMN name TEXT;
