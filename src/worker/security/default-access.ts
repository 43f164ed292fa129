import { addedGrants } from "../auth/delegation";
import { isOutsideReservedName } from "../auth/grants";
import type { Grant } from "../auth/permissions";
import { BOOTSTRAP_ADMIN_USER, type Principal } from "../auth/principal";
import { forgetAllGrants } from "./store";
import { GroupRepository, type Group } from "./groups";
import { ACCESS, grantsOf, type Access } from "./resource-grants";

/**
 * Orkes' group `defaultAccess` (UpsertGroupRequest: "the default permissions automatically granted to the group when a
 * group member creates a workflow definition, task definition, or workflow schedule"), applied as Orkes applies it: when
 * a member creates a definition of a listed type, the group is given that access to it, as a per-resource grant to the
 * GROUP subject (`POST /api/auth/authorization`) would give it. So it reaches the group's members as every group grant
 * does (leaving the group, or its deletion, takes it away), and shows wherever grants are shown and checked. It is given
 * once, at the creation: a later change of `defaultAccess` gives or takes nothing on definitions created before, and a
 * definition created before its creator joined (or by a non-member) gets nothing.
 *
 * What it gives is handed out by whoever sets it: the caller setting a group's `defaultAccess` must hold that access on
 * every definition of the type (see {@link defaultAccessHandedOut}), as they could have given it to the group directly.
 */

/**
 * The target types `defaultAccess` is applied to here. Orkes also names WORKFLOW_SCHEDULE; a schedule has no access of
 * its own here (it is its workflow's, `schedules/access.ts`), so there is nothing per schedule to give.
 */
export const DEFAULT_ACCESS_TYPES = ["WORKFLOW_DEF", "TASK_DEF"] as const;
/** One of {@link DEFAULT_ACCESS_TYPES}. */
export type DefaultAccessType = (typeof DEFAULT_ACCESS_TYPES)[number];

/** The access `defaultAccess` lists for `type`, in {@link ACCESS} order (a stored type or kind unknown here gives nothing). */
function listedAccess(defaultAccess: Readonly<Record<string, readonly string[]>>, type: DefaultAccessType): Access[] {
  const listed = defaultAccess[type] ?? [];
  return ACCESS.filter((kind) => listed.includes(kind));
}

/**
 * The grants setting `next` as a group's `defaultAccess` in place of `previous` hands out anew: each access listed, at
 * the scope of every definition of its type (`workflow:*`, `task:*`), as members' creations will get it. The caller
 * must hold them (`authorizeHandingOut`): otherwise a USER_ADMIN could share with a group it joins whatever its members
 * create, which it could not give itself.
 */
export function defaultAccessHandedOut(previous: Readonly<Record<string, readonly string[]>>, next: Readonly<Record<string, readonly string[]>>): Grant[] {
  const grantsAt = (defaultAccess: Readonly<Record<string, readonly string[]>>) => DEFAULT_ACCESS_TYPES.flatMap((type) => grantsOf({ type, id: "*" }, listedAccess(defaultAccess, type)));
  return addedGrants(grantsAt(previous), grantsAt(next));
}

/**
 * Appends the grants of `?2` (a JSON array of grants) that group `?1` does not hold yet to its permissions, while its
 * `defaultAccess` is still `?4` (what they were computed from) and user `?5` is still a member: one statement, so a
 * concurrent change of the group's permissions is neither lost nor overwritten.
 */
const APPEND_GRANTS = `
  UPDATE groups SET permissions = (
    SELECT json_group_array(json(given)) FROM (
      SELECT held.value AS given FROM json_each(groups.permissions) AS held
      UNION ALL
      SELECT added.value AS given FROM json_each(?2) AS added WHERE NOT EXISTS (
        SELECT 1 FROM json_each(groups.permissions) AS held
        WHERE json_extract(held.value, '$.action') = json_extract(added.value, '$.action') AND json_extract(held.value, '$.scope') = json_extract(added.value, '$.scope')
      )
    )
  ), update_time = ?3
  WHERE id = ?1 AND default_access = ?4 AND EXISTS (SELECT 1 FROM group_members WHERE group_id = ?1 AND user_id = ?5)`;

/** The grants group `group` is given on the definitions `names` of `type` a member created. */
function givenOn(group: Group, type: DefaultAccessType, names: readonly string[]): Grant[] {
  const access = listedAccess(group.defaultAccess, type);
  return access.length === 0 ? [] : names.flatMap((name) => grantsOf({ type, id: name }, access));
}

/**
 * The statements giving the groups of `creator` what their `defaultAccess` lists for `type` on the definitions named
 * `names` that the request creates (those `stored` does not find: a new version of a workflow, or a definition
 * replaced, is no creation), for the batch that stores them: given with the definitions or not at all. `stored` is read
 * only when one of the creator's groups lists `type`. None for a creator who is no member of anything (the bootstrap
 * admin, an outside identity named like one of this service's own users).
 */
export async function defaultAccessStatements(
  db: D1Database,
  creator: Principal,
  type: DefaultAccessType,
  names: readonly string[],
  stored: (names: string[]) => Promise<ReadonlyMap<string, unknown>>,
): Promise<D1PreparedStatement[]> {
  if (names.length === 0 || creator.userId === BOOTSTRAP_ADMIN_USER || isOutsideReservedName(creator)) return [];
  const groups = (await new GroupRepository(db).groupsOf(creator.userId)).filter((group) => listedAccess(group.defaultAccess, type).length > 0);
  if (groups.length === 0) return [];
  const unique = [...new Set(names)];
  const existing = await stored(unique);
  const created = unique.filter((name) => !existing.has(name));
  if (created.length === 0) return [];
  const now = Date.now();
  return groups.map((group) => db.prepare(APPEND_GRANTS).bind(group.id, JSON.stringify(givenOn(group, type, created)), now, JSON.stringify(group.defaultAccess), creator.userId));
}

/** After a batch holding {@link defaultAccessStatements}: the members' grants cached in this isolate are read again. */
export function defaultAccessGiven(statements: readonly D1PreparedStatement[]): void {
  if (statements.length > 0) forgetAllGrants();
}
