-- A group's defaultAccess is now applied: a member creating a workflow or task definition gives the group that access
-- to it (docs/api.md, Groups). Those stored before were kept as "not applied" and set without the check that whoever
-- sets one holds what it gives, so they are cleared rather than start giving access nobody checked; set again, they
-- apply. A plain update: safe on a live deployment, groups with none ('{}') untouched.
UPDATE groups SET default_access = '{}' WHERE default_access <> '{}';
