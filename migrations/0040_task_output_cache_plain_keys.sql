-- Outputs cached before keys were stored as their SHA-256 (64 lowercase hex digits) hold the key's text, which may
-- read a value Orkes masks (a `_secrets` token, a signed JWT in a header the key names). No look-up reaches them any
-- more (keys are looked up by digest), so deleting them loses nothing and takes that text out of D1 now rather than
-- at their expiry (up to 30 days). Rows an older Worker writes between this migration and the deploy are unreachable
-- in the same way and expire.
DELETE FROM task_output_cache WHERE length(cache_key) <> 64 OR cache_key GLOB '*[^0-9a-f]*';
