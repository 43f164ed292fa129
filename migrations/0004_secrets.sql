-- Secrets referenced as ${workflow.secrets.<name>}. `value` is only ever the encrypted form
-- `v1:<base64 iv>:<base64 ciphertext>` (AES-256-GCM, the name as additional data); the plaintext
-- is never stored, and no endpoint returns it.
CREATE TABLE secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
);
