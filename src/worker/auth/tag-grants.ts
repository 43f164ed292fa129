import { TtlCache } from "../ttl-cache";
import type { Grant, Permission } from "./permissions";

/**
 * Orkes' grants on a TAG (`tag:<key>:<value>` scopes, see `security/resource-grants.ts`): a workflow permission there
 * applies to every workflow definition holding that tag, a task permission to every task definition holding it. They
 * are expanded as a caller's grants are read, into the grants at `workflow:<name>` and `task:<name>` they stand for,
 * so every check and every filtered listing treats a tagged definition as one granted by name. A tag added or removed
 * counts from the next read of the tagged names: at once in the isolate that changed it, within a second elsewhere.
 */

/** The prefix of a tag's scope. */
export const TAG_SCOPE_PREFIX = "tag:";

const KIND_OF_ACTION: Partial<Record<Permission, { targetType: "WORKFLOW_DEF" | "TASK_DEF"; scopePrefix: string }>> = {
  WORKFLOW_READ: { targetType: "WORKFLOW_DEF", scopePrefix: "workflow:" },
  WORKFLOW_WRITE: { targetType: "WORKFLOW_DEF", scopePrefix: "workflow:" },
  WORKFLOW_ADMIN: { targetType: "WORKFLOW_DEF", scopePrefix: "workflow:" },
  TASK_READ: { targetType: "TASK_DEF", scopePrefix: "task:" },
  TASK_WRITE: { targetType: "TASK_DEF", scopePrefix: "task:" },
  TASK_EXECUTE: { targetType: "TASK_DEF", scopePrefix: "task:" },
};

/** A definition holding a tag: its kind, its name, and the tag as `key:value`. */
interface TaggedDefinition {
  targetType: "WORKFLOW_DEF" | "TASK_DEF";
  name: string;
  tag: string;
}

/** The definitions holding each set of tags asked for, by the tags (sorted, as JSON), for a second. */
const taggedCache = new TtlCache<TaggedDefinition[]>(1_000);

/** Forgets the tagged names read in this isolate: a tag of a definition was added or removed here. */
export function forgetTaggedDefinitions(): void {
  taggedCache.clear();
}

/**
 * `grants` with each workflow or task permission at a tag's scope also given at the scope of every workflow or task
 * definition holding that tag (one D1 read per set of tags, shared for a second); `grants` themselves when none is at a
 * tag's scope.
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
      .map((row): Grant => ({ action: grant.action, scope: `${kind.scopePrefix}${row.name}` }));
  });
  return expanded.length === 0 ? grants : [...grants, ...expanded];
}

/** The workflow and task definitions holding any of `tags` (each `key:value`). */
async function taggedDefinitions(db: D1Database, tags: readonly string[]): Promise<TaggedDefinition[]> {
  // Compared whole, so a key holding a ':' is not split at the wrong place.
  const { results } = await db
    .prepare(
      `SELECT target_type AS targetType, target_name AS name, tag_key || ':' || tag_value AS tag FROM metadata_tags
       WHERE target_type IN ('WORKFLOW_DEF', 'TASK_DEF') AND tag_key || ':' || tag_value IN (SELECT value FROM json_each(?))`,
    )
    .bind(JSON.stringify(tags))
    .all<TaggedDefinition>();
  return results;
}
