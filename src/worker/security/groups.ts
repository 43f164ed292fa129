import type { Grant } from "../auth/permissions";
import { ALWAYS, ASSIGNMENT_WRITTEN, forgetAllGrants, rowsUnchanged, type SecurityStore, type UserAssignment, type WriteCondition } from "./store";

/**
 * Orkes' group: users sharing roles; a member holds the group's roles as if assigned them, and the permissions given
 * to the group itself (Orkes' per-resource grants to a GROUP subject) as if given directly.
 */
export interface Group {
  id: string;
  description: string;
  roles: string[];
  permissions: Grant[];
  /** Orkes' `defaultAccess` (access kinds by target type), kept and shown as given, not applied. */
  defaultAccess: Record<string, string[]>;
}

/** The columns a {@link Group} is read from. */
const GROUP_COLUMNS = `groups.id, groups.description, groups.roles, groups.permissions, groups.default_access`;
type GroupRow = { id: string; description: string; roles: string; permissions: string; default_access: string };
const groupOf = (row: GroupRow): Group => ({
  id: row.id,
  description: row.description,
  roles: JSON.parse(row.roles) as string[],
  permissions: JSON.parse(row.permissions) as Grant[],
  defaultAccess: JSON.parse(row.default_access) as Record<string, string[]>,
});

/** Groups and their members in D1 (a member's grants are read with theirs: `SecurityStore.effectiveGrants`). */
export class GroupRepository {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  async list(): Promise<Group[]> {
    const { results } = await this.#db.prepare(`SELECT ${GROUP_COLUMNS} FROM groups ORDER BY id`).all<GroupRow>();
    return results.map(groupOf);
  }

  async get(id: string): Promise<Group | null> {
    const row = await this.#db.prepare(`SELECT ${GROUP_COLUMNS} FROM groups WHERE id = ?`).bind(id).first<GroupRow>();
    return row ? groupOf(row) : null;
  }

  /**
   * Stores a group's description and roles (a new one's permissions too), only while the stored one is still
   * `previous` (null: none), the one the caller's right to make the change was checked against, and while `unchanged`
   * holds (the roles added still grant what was checked); false when either changed meanwhile.
   */
  async put(group: Group, previous: Group | null, unchanged: WriteCondition = ALWAYS): Promise<boolean> {
    const now = Date.now();
    const statement = previous
      ? this.#db
          .prepare(`UPDATE groups SET description = ?, roles = ?, default_access = ?, update_time = ? WHERE id = ? AND roles = ? AND ${unchanged.sql}`)
          .bind(group.description, JSON.stringify(group.roles), JSON.stringify(group.defaultAccess), now, group.id, JSON.stringify(previous.roles), ...unchanged.binds)
      : this.#db
          .prepare(`INSERT INTO groups (id, description, roles, permissions, default_access, create_time, update_time) SELECT ?, ?, ?, ?, ?, ?, ? WHERE ${unchanged.sql} ON CONFLICT (id) DO NOTHING`)
          .bind(group.id, group.description, JSON.stringify(group.roles), JSON.stringify(group.permissions), JSON.stringify(group.defaultAccess), now, now, ...unchanged.binds);
    const result = await statement.run();
    forgetAllGrants();
    return result.meta.changes > 0;
  }

  /**
   * Replaces the permissions given to group `id`, only while they are still `previous` (what the caller's right to
   * change them was checked against); false when it is gone or they changed meanwhile.
   */
  async setPermissions(id: string, permissions: readonly Grant[], previous: readonly Grant[]): Promise<boolean> {
    const result = await this.#db
      .prepare(`UPDATE groups SET permissions = ?, update_time = ? WHERE id = ? AND permissions = ?`)
      .bind(JSON.stringify(permissions), Date.now(), id, JSON.stringify(previous))
      .run();
    forgetAllGrants();
    return result.meta.changes > 0;
  }

  /** Deletes a group and its memberships; false when there was none. */
  async delete(id: string): Promise<boolean> {
    const [result] = await this.#db.batch([this.#db.prepare(`DELETE FROM groups WHERE id = ?`).bind(id), this.#db.prepare(`DELETE FROM group_members WHERE group_id = ?`).bind(id)]);
    forgetAllGrants();
    return result!.meta.changes > 0;
  }

  /** The groups user `userId` belongs to, by id. */
  async groupsOf(userId: string): Promise<Group[]> {
    const { results } = await this.#db
      .prepare(`SELECT ${GROUP_COLUMNS} FROM group_members JOIN groups ON groups.id = group_members.group_id WHERE group_members.user_id = ? ORDER BY groups.id`)
      .bind(userId)
      .all<GroupRow>();
    return results.map(groupOf);
  }

  /**
   * The groups of `ids` (one JSON parameter however many), by id; unknown ids left out: those the users a listing
   * answers belong to, each group read once however many of them belong to it.
   */
  async byIds(ids: readonly string[]): Promise<Map<string, Group>> {
    if (ids.length === 0) return new Map();
    const { results } = await this.#db
      .prepare(`SELECT ${GROUP_COLUMNS} FROM groups WHERE groups.id IN (SELECT value FROM json_each(?))`)
      .bind(JSON.stringify([...new Set(ids)]))
      .all<GroupRow>();
    return new Map(results.map((row) => [row.id, groupOf(row)]));
  }

  /** The members of group `id`, by user id. */
  async members(id: string): Promise<string[]> {
    const { results } = await this.#db.prepare(`SELECT user_id FROM group_members WHERE group_id = ? ORDER BY user_id`).bind(id).all<{ user_id: string }>();
    return results.map((row) => row.user_id);
  }

  /**
   * Adds `added` to group `group` and removes `removed` from it, in one transaction, only while the group's roles and
   * permissions are still those of `group` and `rolesChecked` holds (its roles still grant what was checked: what the
   * caller's right to hand them out was checked against; and whatever else the caller requires, such as the applications
   * of the `app:<id>` users added existing); false when it is gone or they changed.
   */
  async changeMembers(group: Group, added: readonly string[], removed: readonly string[], rolesChecked: WriteCondition = ALWAYS): Promise<boolean> {
    // Numbered parameters first; the condition's own `?`s take the numbers after them.
    const unchanged = `EXISTS (SELECT 1 FROM groups WHERE id = ?1 AND roles = ?2 AND permissions = ?3) AND ${rolesChecked.sql}`;
    const held = [group.id, JSON.stringify(group.roles), JSON.stringify(group.permissions)];
    const results = await this.#db.batch([
      this.#db.prepare(`SELECT 1 AS found WHERE ${unchanged}`).bind(...held, ...rolesChecked.binds),
      ...added.map((userId) => this.#db.prepare(`INSERT OR IGNORE INTO group_members (group_id, user_id) SELECT ?1, ?4 WHERE ${unchanged}`).bind(...held, userId, ...rolesChecked.binds)),
      // Removals too: a refused change (false) changes nothing.
      ...removed.map((userId) => this.#db.prepare(`DELETE FROM group_members WHERE group_id = ?1 AND user_id = ?4 AND ${unchanged}`).bind(...held, userId, ...rolesChecked.binds)),
    ]);
    forgetAllGrants();
    return results[0]!.results.length > 0;
  }

  /**
   * The condition that `groups` are still as read (roles and permissions), for a write that hands out what they give
   * (see `SecurityStore.putAssignment`): a group changed meanwhile refuses the write rather than hand out what was not checked.
   */
  static unchangedCondition(groups: readonly Group[]): { sql: string; binds: string[] } {
    const condition = rowsUnchanged("groups", ["id", "roles", "permissions"], groups.map((group) => [group.id, JSON.stringify(group.roles), JSON.stringify(group.permissions)]));
    return { sql: condition.sql, binds: [...condition.binds] };
  }

  /**
   * The statements that make the user of `assignment` a member of exactly `groupIds` (Orkes' upsertUser), for the
   * transaction that stores the assignment: they act only once it is stored (see `ASSIGNMENT_WRITTEN`) and while
   * `unchanged` (that write's condition) holds. A group deleted meanwhile gets no member.
   */
  membershipStatements(store: SecurityStore, assignment: UserAssignment, groupIds: readonly string[], unchanged: WriteCondition): D1PreparedStatement[] {
    return [
      store.withAssignment(assignment, unchanged, `DELETE FROM group_members WHERE user_id = ?1 AND ${ASSIGNMENT_WRITTEN}`),
      ...groupIds.map((groupId) =>
        store.withAssignment(assignment, unchanged, `INSERT OR IGNORE INTO group_members (group_id, user_id) SELECT ?4, ?1 WHERE ${ASSIGNMENT_WRITTEN} AND EXISTS (SELECT 1 FROM groups WHERE id = ?4)`, groupId),
      ),
    ];
  }
}
