-- Which workflow rate limit keys (rateLimitConfig) each workflow's executions have used, recorded by each key's
-- ExecutionLimit object the first time an execution of that workflow enters it: a change of the workflow's limit
-- (its endpoint, or a definition registered anew) is told to these keys at once, so a higher limit (or none) admits
-- the executions waiting there without waiting for the next start or end under the key.
CREATE TABLE rate_limit_keys (
  workflow_name TEXT NOT NULL,
  rate_limit_key TEXT NOT NULL,
  PRIMARY KEY (workflow_name, rate_limit_key)
);
