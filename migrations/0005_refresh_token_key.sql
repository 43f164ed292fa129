-- The API key a session (refresh token family) was obtained with, so deleting the key ends the session.
-- NULL for sessions of the bootstrap admin's key (configuration, never deleted) and for those issued
-- before this column existed.
ALTER TABLE refresh_tokens ADD COLUMN key_id TEXT;
CREATE INDEX refresh_tokens_by_key ON refresh_tokens (key_id);
