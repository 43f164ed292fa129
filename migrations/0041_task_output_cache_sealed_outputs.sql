-- Cached outputs are sealed (AES-256-GCM with SECRETS_ENCRYPTION_KEY, as secrets are) in a column of their own; such a
-- row's `output` is JSON null, which the code before this reads as nothing cached (a ciphertext there would fail its
-- look-up while a gradual deployment serves it). Outputs cached before hold their text in plain, which may be a
-- credential (a token endpoint's answer, a maskedFields value, a worker's result). With a key configured no look-up
-- trusts them any more (only what the key opens is a hit), so deleting them loses nothing and takes that text out of
-- D1 now rather than at their expiry (up to 30 days); without one, the next run of each task caches its output again.
-- Rows an older Worker writes between this migration and the deploy are misses in the same way (with a key), and expire.
ALTER TABLE task_output_cache ADD COLUMN sealed_output TEXT;
DELETE FROM task_output_cache WHERE sealed_output IS NULL;
