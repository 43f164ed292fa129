-- Orkes' per-resource grants given to a group (POST /api/auth/authorization with a GROUP subject): permissions at
-- scopes its members hold beside its roles', as a user's direct permissions are held beside their roles'.
ALTER TABLE groups ADD COLUMN permissions TEXT NOT NULL DEFAULT '[]';
