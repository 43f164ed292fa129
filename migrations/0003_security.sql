-- Roles: named sets of permission grants ([{action, scope}] as JSON).
CREATE TABLE roles (
  name TEXT PRIMARY KEY,
  description TEXT NOT NULL DEFAULT '',
  permissions TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
);

-- What each user holds: role names and direct grants (JSON arrays).
CREATE TABLE user_assignments (
  user_id TEXT PRIMARY KEY,
  roles TEXT NOT NULL,
  direct_permissions TEXT NOT NULL,
  update_time INTEGER NOT NULL
);

-- API keys: the secret is never stored, only HMAC-SHA256(salt, secret).
CREATE TABLE api_keys (
  key_id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  salt TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  create_time INTEGER NOT NULL
);
CREATE INDEX api_keys_by_user ON api_keys (user_id);

-- Refresh tokens (stored as SHA-256 of the opaque token). Each exchange rotates the token within its
-- family; presenting a used one again revokes the whole family.
CREATE TABLE refresh_tokens (
  token_hash TEXT PRIMARY KEY,
  family_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used INTEGER NOT NULL DEFAULT 0,
  create_time INTEGER NOT NULL
);
CREATE INDEX refresh_tokens_by_family ON refresh_tokens (family_id);

-- Revocations of access tokens before they expire: by token id, or a whole family.
CREATE TABLE revoked_tokens (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('jti', 'family')),
  expires_at INTEGER NOT NULL
);

-- API access rules added through the API (the defaults live in code).
CREATE TABLE access_rules (
  id TEXT PRIMARY KEY,
  api_path TEXT NOT NULL,
  methods TEXT NOT NULL,
  required_permissions TEXT NOT NULL,
  create_time INTEGER NOT NULL
);
