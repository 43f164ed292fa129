-- Outputs cached before they were sealed (AES-256-GCM with SECRETS_ENCRYPTION_KEY, as secrets are) hold their text in
-- plain, which may be a credential (a token endpoint's answer, a maskedFields value, a worker's result). With a key
-- configured no look-up trusts them any more (only what the key opens is a hit), so deleting them loses nothing and
-- takes that text out of D1 now rather than at their expiry (up to 30 days); without one, the next run of each task
-- caches its output again. Sealed outputs read `v1:<iv>:<ciphertext>`, plain ones are JSON objects. Rows an older
-- Worker writes between this migration and the deploy are misses in the same way (with a key), and expire.
DELETE FROM task_output_cache WHERE substr(output, 1, 1) = '{';
