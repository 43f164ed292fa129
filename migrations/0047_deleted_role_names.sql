-- Role names left on users' (applications' too) and groups' lists by a role deleted while they held it, which deleting
-- one did until it was refused for a role still held: they granted nothing, yet showed on GET /api/users/{id} and the
-- groups, and a role made later under the same name would have given its grants to them unasked. Each list keeps its
-- other names in their order; a list naming no deleted role is not rewritten.
UPDATE user_assignments
SET roles = (SELECT json_group_array(value) FROM (SELECT value FROM json_each(user_assignments.roles) WHERE value IN (SELECT name FROM roles) ORDER BY key))
WHERE EXISTS (SELECT 1 FROM json_each(user_assignments.roles) WHERE value NOT IN (SELECT name FROM roles));

UPDATE groups
SET roles = (SELECT json_group_array(value) FROM (SELECT value FROM json_each(groups.roles) WHERE value IN (SELECT name FROM roles) ORDER BY key))
WHERE EXISTS (SELECT 1 FROM json_each(groups.roles) WHERE value NOT IN (SELECT name FROM roles));
