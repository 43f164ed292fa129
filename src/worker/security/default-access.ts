import { addedGrants } from "../auth/delegation";
import { isOutsideReservedName } from "../auth/grants";
import type { Grant } from "../auth/permissions";
import { BOOTSTRAP_ADMIN_USER, type Principal } from "../auth/principal";
import { forgetAllGrants } from "./store";
import { GroupRepository, type Group } from "./groups";
import * as v from "valibot";
import { ACCESS, grantsOf, targetId, type Access } from "./resource-grants";

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
 * every definition of the type (see {@link defaultAccessHandedOut}), as they could have given it to the group directly;
 * so must whoever adds a member (`routes/groups.ts` `authorizeJoining`).
 */

/**
 * The target types `defaultAccess` is applied to here. Orkes also names WORKFLOW_SCHEDULE; a schedule has no access of
 * its own here (it is its workflow's, `schedules/access.ts`), so there is nothing per schedule to give.
 */
export const DEFAULT_ACCESS_TYPES = ["WORKFLOW_DEF", "TASK_DEF"] as const;
/**
 * The target types a `defaultAccess` may name: those applied, and WORKFLOW_SCHEDULE, which Orkes' models list (a UI
 * sends all three), kept and answered back but giving nothing here (a schedule's access is its workflow's).
 */
export const DEFAULT_ACCESS_KEYS = [...DEFAULT_ACCESS_TYPES, "WORKFLOW_SCHEDULE"] as const;
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
 * How long (in characters, as stored) a group's grants may grow through `defaultAccess`: past it, members' creations give
 * the group nothing more (logged), so the group's row never grows past what D1 stores and a member's registration never
 * fails for it. Grants given through the API are bounded to 200 anyway; this bounds the ones creations add.
 */
export const MAX_DEFAULT_GIVEN_CHARS = 500_000;

/**
 * Appends to the permissions of each group user `?1` is a member of when the statement runs, and whose `defaultAccess`
 * then lists the type (`?5`, a JSON path such as `$.WORKFLOW_DEF`), the grants of `?2` (a JSON array of `{kind, action,
 * scope}`: every access kind's grants on each definition created) of the kinds it lists: as stored at the write, not as
 * read before, so a change of `defaultAccess` or of membership meanwhile gives what is in force then. Only those a group
 * does not hold yet, and only while its grants with `?2` stay within `?4` characters ({@link MAX_DEFAULT_GIVEN_CHARS}).
 * One statement for all the creator's groups (a member of fifty would otherwise pass the 50 D1 statements Workers Free
 * allows an invocation), each row's change in it, so a concurrent change of a group's permissions is neither lost nor
 * overwritten.
 */
const APPEND_GRANTS = `
  UPDATE groups SET permissions = (
    SELECT json_group_array(json(given)) FROM (
      SELECT held.value AS given FROM json_each(groups.permissions) AS held
      UNION ALL
      SELECT json_object('action', fresh.action, 'scope', fresh.scope) AS given FROM (
        SELECT DISTINCT json_extract(added.value, '$.action') AS action, json_extract(added.value, '$.scope') AS scope
        FROM json_each(?2) AS added
        WHERE json_extract(added.value, '$.kind') IN (SELECT listed.value FROM json_each(groups.default_access, ?5) AS listed)
      ) AS fresh WHERE NOT EXISTS (
        SELECT 1 FROM json_each(groups.permissions) AS held
        WHERE json_extract(held.value, '$.action') = fresh.action AND json_extract(held.value, '$.scope') = fresh.scope
      )
    )
  ), update_time = ?3
  WHERE id IN (SELECT group_id FROM group_members WHERE user_id = ?1) AND EXISTS (SELECT 1 FROM json_each(groups.default_access, ?5))
    AND length(permissions) + length(?2) <= ?4`;

/**
 * Every access kind's grants on each of `names` of `type`, marked with its kind, for {@link APPEND_GRANTS} to keep those
 * the group's `defaultAccess` lists when it runs.
 */
function offeredOn(type: DefaultAccessType, names: readonly string[]): Array<{ kind: Access } & Grant> {
  return names.flatMap((name) => ACCESS.flatMap((kind) => grantsOf({ type, id: name }, [kind]).map((grant) => ({ kind, ...grant }))));
}

/**
 * The statements giving the groups of `creator` what their `defaultAccess` lists for `type` on the definitions named
 * `names` that the request creates (those `stored` does not find: a new version of a workflow, or a definition
 * replaced, is no creation), for the batch that stores them: given with the definitions or not at all. `stored` is read
 * only when one of the creator's groups lists `type`. None for a creator who is no member of anything (the bootstrap
 * admin, an outside identity named like one of this service's own users).
 *
 * A name the authorization routes cannot name as one resource (`resource-grants.ts` `targetId`) gets nothing: one
 * holding `*` would be a wildcard scope (`workflow:*`, `workflow:pz_*`) giving the group every definition matching it,
 * and one over 250 characters (a definition's may have 255) a grant nobody could look up or take away.
 */
export async function defaultAccessStatements(
  db: D1Database,
  creator: Principal,
  type: DefaultAccessType,
  names: readonly string[],
  stored: (names: string[]) => Promise<ReadonlyMap<string, unknown>>,
): Promise<D1PreparedStatement[]> {
  const named = [...new Set(names)].filter((name) => v.is(targetId, name));
  if (named.length === 0 || creator.userId === BOOTSTRAP_ADMIN_USER || isOutsideReservedName(creator)) return [];
  const groups = await new GroupRepository(db).groupsOf(creator.userId);
  // Every group of the creator gets the statement, which gives what its defaultAccess lists when it runs; none listing
  // the type as read, the definitions are not read (one listing it only meanwhile gives nothing, as if set after).
  if (!groups.some((group) => listedAccess(group.defaultAccess, type).length > 0)) return [];
  const existing = await stored(named);
  const created = named.filter((name) => !existing.has(name));
  if (created.length === 0) return [];
  const offered = JSON.stringify(offeredOn(type, created));
  // The statement passes such a group over by itself; said here, as read, for the operator to see why.
  for (const group of groups) {
    if (listedAccess(group.defaultAccess, type).length > 0 && JSON.stringify(group.permissions).length + offered.length > MAX_DEFAULT_GIVEN_CHARS) {
      console.warn(JSON.stringify({ msg: "group defaultAccess not given: the group's grants are at their bound", group: group.id, type, definitions: created.length }));
    }
  }
  return [db.prepare(APPEND_GRANTS).bind(creator.userId, offered, Date.now(), MAX_DEFAULT_GIVEN_CHARS, `$.${type}`)];
}

/** After a batch holding {@link defaultAccessStatements}: the members' grants cached in this isolate are read again. */
export function defaultAccessGiven(statements: readonly D1PreparedStatement[]): void {
  if (statements.length > 0) forgetAllGrants();
}
