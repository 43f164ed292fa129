import { TtlCache } from "../ttl-cache";
import type { Grant, Permission } from "./permissions";
import { SECRET_USE_PERMISSION, secretScope } from "./secret-use";

/**
 * Orkes' grants on a TAG (`tag:<key>:<value>` scopes, see `security/resource-grants.ts`): a workflow permission there
 * applies to every workflow definition holding that tag, a task permission to every task definition holding it, and
 * the right to use secrets (SYSTEM_ADMIN, see `secret-use.ts`) to every secret holding it, as Orkes' tags share
 * whatever resource carries them. They are expanded as a caller's grants are read, into the grants at
 * `workflow:<name>`, `task:<name>` and `secret:<name>` they stand for, so every check and every filtered listing treats
 * a tagged definition or secret as one granted by name. A tag added or removed counts from the next read of the tagged
 * names: at once in the isolate that changed it, within a second elsewhere.
 */

/** The prefix of a tag's scope. */
export const TAG_SCOPE_PREFIX = "tag:";

/** What a tag's grant of each permission reaches: the tagged resources of one kind, at their scopes. */
const KIND_OF_ACTION: Partial<Record<Permission, { targetType: TaggedDefinition["targetType"]; scope: (name: string) => string }>> = {
  WORKFLOW_READ: { targetType: "WORKFLOW_DEF", scope: (name) => `workflow:${name}` },
  WORKFLOW_WRITE: { targetType: "WORKFLOW_DEF", scope: (name) => `workflow:${name}` },
  WORKFLOW_ADMIN: { targetType: "WORKFLOW_DEF", scope: (name) => `workflow:${name}` },
  TASK_READ: { targetType: "TASK_DEF", scope: (name) => `task:${name}` },
  TASK_WRITE: { targetType: "TASK_DEF", scope: (name) => `task:${name}` },
  TASK_EXECUTE: { targetType: "TASK_DEF", scope: (name) => `task:${name}` },
  // Only SYSTEM_ADMIN at the tag's scope, which a tag's READ or EXECUTE carries and only a holder of it there (or on *)
  // hands out: a tag's workflow or task permissions, which a holder of them on * hands out, never reach a secret.
  [SECRET_USE_PERMISSION]: { targetType: "SECRET", scope: secretScope },
};

/** A definition (or secret) holding a tag: its kind, its name, and the tag as `key:value`. */
interface TaggedDefinition {
  targetType: "WORKFLOW_DEF" | "TASK_DEF" | "SECRET";
  name: string;
  tag: string;
}

/** The definitions holding each set of tags asked for, by the tags (sorted, as JSON), for a second. */
const taggedCache = new TtlCache<TaggedDefinition[]>(1_000);

/** Forgets the tagged names read in this isolate: a tag of a definition or secret was added or removed here. */
export function forgetTaggedDefinitions(): void {
  taggedCache.clear();
}

/**
 * `grants` with each workflow or task permission at a tag's scope also given at the scope of every workflow or task
 * definition holding that tag, and the right to use secrets there at every secret holding it (one D1 read per set of
 * tags, shared for a second); `grants` themselves when none is at a tag's scope.
 */
export async function withTagGrantsExpanded(db: D1Database, grants: Grant[]): Promise<Grant[]> {
  const tagGrants = grants.filter((grant) => grant.scope.startsWith(TAG_SCOPE_PREFIX) && KIND_OF_ACTION[grant.action] !== undefined);
  if (tagGrants.length === 0) return grants;
  const tags = [...new Set(tagGrants.map((grant) => grant.scope.slice(TAG_SCOPE_PREFIX.length)))].sort();
  const tagged = await taggedCache.getOrLoad(JSON.stringify(tags), () => taggedDefinitions(db, tags));
  const expanded = tagGrants.flatMap((grant) => {
    const kind = KIND_OF_ACTION[grant.action]!;
    const tag = grant.scope.slice(TAG_SCOPE_PREFIX.length);
    // A name ending in `*` would read as a prefix of names: the grant is for that one definition, so such names are left out.
    return tagged
      .filter((row) => row.tag === tag && row.targetType === kind.targetType && !row.name.includes("*"))
      .map((row): Grant => ({ action: grant.action, scope: kind.scope(row.name) }));
  });
  return expanded.length === 0 ? grants : [...grants, ...expanded];
}

/** The workflow and task definitions and the secrets holding any of `tags` (each `key:value`). */
async function taggedDefinitions(db: D1Database, tags: readonly string[]): Promise<TaggedDefinition[]> {
  // Compared whole, so a key holding a ':' is not split at the wrong place.
  const { results } = await db
    .prepare(
      `SELECT target_type AS targetType, target_name AS name, tag_key || ':' || tag_value AS tag FROM metadata_tags
       WHERE target_type IN ('WORKFLOW_DEF', 'TASK_DEF', 'SECRET') AND tag_key || ':' || tag_value IN (SELECT value FROM json_each(?))`,
    )
    .bind(JSON.stringify(tags))
    .all<TaggedDefinition>();
  return results;
}
