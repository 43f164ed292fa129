-- Token rows are pruned once past use, a few at each token issued (`issueTokens`, the pattern of task_output_cache's
-- bounded expiry delete): without these indexes each prune would scan the whole table for expired rows. Before, rows
-- were never deleted, so refresh_tokens grew by one row for every POST /api/token for good.
CREATE INDEX refresh_tokens_by_expiry ON refresh_tokens (expires_at);
CREATE INDEX revoked_tokens_by_expiry ON revoked_tokens (expires_at);
