-- Orkes' group defaultAccess (the access its members are to get to what they create, by target type), kept and shown
-- as given, as the clients send and read it back; not applied (see docs/api.md, Groups).
ALTER TABLE groups ADD COLUMN default_access TEXT NOT NULL DEFAULT '{}';
