-- Definitions registered before a workflow's timeoutPolicy was kept have none, and time out as TIME_OUT_WF (the
-- engine's reading of none). Written into them, so that clients, which read no policy as Conductor's default
-- (ALERT_ONLY), are told what happens. Registrations since store the policy they were given or ALERT_ONLY.
UPDATE workflow_defs SET definition = json_set(definition, '$.timeoutPolicy', 'TIME_OUT_WF')
WHERE json_extract(definition, '$.timeoutPolicy') IS NULL;
