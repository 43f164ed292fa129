import { hexOf } from "../../engine/task-id";
import { boundedListing, MAX_LISTING_CHARS } from "../bounded-listing";
import { secretsEqual } from "../auth/constant-time";
import type { AccessRule } from "../auth/access-rules";
import type { Grant } from "../auth/permissions";
import { TtlCache } from "../ttl-cache";

/** A role (spec 2.5). */
export interface Role {
  name: string;
  description: string;
  permissions: Grant[];
}

/** What a user holds (spec 2.5). */
export interface UserAssignment {
  userId: string;
  roles: string[];
  directPermissions: Grant[];
}

/** How many of a role's holders a refused delete names (see {@link SecurityStore.deleteRole}). */
const ROLE_HOLDERS_NAMED = 5;

/** What {@link SecurityStore.deleteRole} did: deleted it, found none of that name, or kept it as still held. */
export type RoleDeletion =
  | { outcome: "deleted" | "missing" }
  | { outcome: "held"; holders: Array<{ kind: "user" | "group"; id: string }>; total: number };

/** An API key as listed with its state: whether it authenticates (Orkes' ACTIVE / INACTIVE). */
export interface ApiKeyState {
  keyId: string;
  createTime: number;
  active: boolean;
}

/** An access rule stored through the API, with its id. */
export interface StoredAccessRule extends AccessRule {
  id: string;
}

/** Most users one listing shows (see {@link SecurityStore.listUsers}). */
export const MAX_LISTED_USERS = 1000;

/**
 * The characters of a role as `GET /api/security/roles?short=true` answers it, but its name's and description's:
 * `{"name":"","description":""}` and the comma after it, counted toward the listing's bound with theirs.
 */
const ROLE_NAME_ENTRY_CHARS = 29;

/** How long grants, keys and rules read from D1 are reused by an isolate. */
const CACHE_TTL_MS = 1_000;
const grantsCache = new TtlCache<Grant[]>(CACHE_TTL_MS);
const keysCache = new TtlCache<{ userId: string; salt: string; hash: string; active: boolean } | null>(CACHE_TTL_MS);
const rulesCache = new TtlCache<StoredAccessRule[]>(CACHE_TTL_MS);

/**
 * Longest key id looked up. Ours are UUIDs (36 characters) and the security API's paths take ids of at most 128; a
 * longer one is unknown without reading D1 or taking a place in {@link keysCache}, which answers callers before they
 * are authenticated, with ids as long as a header (128 KB) or a token request's body allows.
 */
const MAX_KEY_ID_LENGTH = 128;

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function hmacHex(salt: string, secret: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(salt), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(secret)));
  return hexOf(mac);
}

/**
 * A condition on other rows that a write must still find true (SQL with `?` placeholders and their values): what the
 * caller's right to make the write was checked against, so that a change landing in between refuses the write.
 */
export interface WriteCondition {
  sql: string;
  binds: readonly string[];
}

/** The condition that always holds. */
export const ALWAYS: WriteCondition = { sql: "1", binds: [] };

/** All of `conditions` at once. */
export function allHold(...conditions: readonly WriteCondition[]): WriteCondition {
  const real = conditions.filter((condition) => condition !== ALWAYS);
  if (real.length === 0) return ALWAYS;
  return { sql: real.map((condition) => `(${condition.sql})`).join(" AND "), binds: real.flatMap((condition) => condition.binds) };
}

/**
 * The condition that every row `expected` lists (a JSON array of rows, each an array of `columns`' values) is still
 * in `table` as listed. One parameter however many rows: D1 takes at most 100 per statement, and a write may check
 * a hundred roles or groups besides its own parameters.
 */
export function rowsUnchanged(table: "roles" | "groups", columns: readonly string[], expected: ReadonlyArray<readonly string[]>): WriteCondition {
  if (expected.length === 0) return ALWAYS;
  const matches = columns.map((column, index) => `${column} = json_extract(expected.value, '$[${index}]')`).join(" AND ");
  return {
    sql: `NOT EXISTS (SELECT 1 FROM json_each(?) AS expected WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE ${matches}))`,
    binds: [JSON.stringify(expected)],
  };
}

/** The condition that `roles` still grant what they did when read (see {@link SecurityStore.rolesAsRead}). */
export function rolesUnchanged(roles: readonly Role[]): WriteCondition {
  return rowsUnchanged("roles", ["name", "permissions"], roles.map((role) => [role.name, JSON.stringify(role.permissions)]));
}

/** True once the assignment bound by {@link SecurityStore.withAssignment} is the one stored. */
export const ASSIGNMENT_WRITTEN = `EXISTS (SELECT 1 FROM user_assignments WHERE user_id = ?1 AND roles = ?2 AND direct_permissions = ?3)`;

/** Forgets this isolate's effective grants of every user: a change of a group reaches all its members. */
export function forgetAllGrants(): void {
  grantsCache.clear();
}

/** A role as a row of `roles` holds it. */
function roleOf(row: { name: string; description: string; permissions: string }): Role {
  return { name: row.name, description: row.description, permissions: JSON.parse(row.permissions) as Grant[] };
}

/** Roles, user assignments, API keys and access rules in D1. */
export class SecurityStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  // ---- roles ----

  /**
   * Every role, by name, as `GET /api/security/roles` answers them: at most {@link MAX_LISTING_CHARS} of names,
   * descriptions and grants (a 413 beyond, see {@link boundedListing}). Their count is not capped, and each may hold
   * 200 grants of long scopes (tens of KB).
   */
  async listRoles(): Promise<Role[]> {
    const results = await boundedListing<{ name: string; description: string; permissions: string }>(
      this.#db,
      `SELECT name, description, permissions, length(name) + length(description) + length(permissions) AS listed_chars FROM roles`,
      "listed.name",
      [],
      (chars) => `The roles with their grants come to ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; read them one at a time: GET /api/security/roles/{name}, or their names: GET /api/security/roles?short=true`,
    );
    return results.map(roleOf);
  }

  /**
   * Every role's name and description, by name, their grants not read (`GET /api/security/roles?short=true`): bounded as
   * {@link listRoles} (each counted with the JSON around it, {@link ROLE_NAME_ENTRY_CHARS}), a few hundred bytes a role
   * where a role's grants may be tens of KB.
   */
  async listRoleNames(): Promise<Array<{ name: string; description: string }>> {
    return boundedListing<{ name: string; description: string }>(
      this.#db,
      `SELECT name, description, length(name) + length(description) + ${ROLE_NAME_ENTRY_CHARS} AS listed_chars FROM roles`,
      "listed.name",
      [],
      (chars) => `The roles' names and descriptions come to ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; read them one at a time: GET /api/security/roles/{name}`,
    ).then((rows) => rows.map((row) => ({ name: row.name, description: row.description })));
  }

  async getRole(name: string): Promise<Role | null> {
    const row = await this.#db.prepare(`SELECT name, description, permissions FROM roles WHERE name = ?`).bind(name).first<{ name: string; description: string; permissions: string }>();
    return row ? roleOf(row) : null;
  }

  /** Creates a role; false when one of that name exists. */
  async createRole(role: Role): Promise<boolean> {
    const now = Date.now();
    const result = await this.#db
      .prepare(`INSERT INTO roles (name, description, permissions, create_time, update_time) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
      .bind(role.name, role.description, JSON.stringify(role.permissions), now, now)
      .run();
    grantsCache.clear();
    return result.meta.changes > 0;
  }

  /**
   * Replaces a role's description and permissions, only while its permissions are still `previous` (the
   * ones the caller's right to make the change was checked against); false when the role is gone or
   * its permissions changed meanwhile.
   */
  async updateRole(role: Role, previous: Role): Promise<boolean> {
    const result = await this.#db
      .prepare(`UPDATE roles SET description = ?, permissions = ?, update_time = ? WHERE name = ? AND permissions = ?`)
      .bind(role.description, JSON.stringify(role.permissions), Date.now(), role.name, JSON.stringify(previous.permissions))
      .run();
    grantsCache.clear();
    return result.meta.changes > 0;
  }

  /**
   * Deletes a role nobody holds. One held by a user (an application's user too) or a group is kept, and a few of its
   * holders are answered: deleting it would leave its name on their lists, granting nothing until a role made later
   * under that name gave them its grants unasked. The check and the delete are one transaction, and a write handing
   * the role out is held to the role still being there ({@link rolesUnchanged}), so neither can slip past the other.
   */
  async deleteRole(name: string): Promise<RoleDeletion> {
    const held = (column: string) => `EXISTS (SELECT 1 FROM json_each(${column}) WHERE json_each.value = ?1)`;
    const [deleted, found, holders, count] = await this.#db.batch<{ kind?: string; id?: string; holders?: number }>([
      this.#db
        .prepare(`DELETE FROM roles WHERE name = ?1 AND NOT EXISTS (SELECT 1 FROM user_assignments WHERE ${held("user_assignments.roles")}) AND NOT EXISTS (SELECT 1 FROM groups WHERE ${held("groups.roles")})`)
        .bind(name),
      this.#db.prepare(`SELECT 1 AS holders FROM roles WHERE name = ?1`).bind(name),
      this.#db
        .prepare(
          `SELECT 'user' AS kind, user_id AS id FROM user_assignments WHERE ${held("user_assignments.roles")}
           UNION ALL SELECT 'group' AS kind, id FROM groups WHERE ${held("groups.roles")} ORDER BY kind DESC, id LIMIT ${ROLE_HOLDERS_NAMED}`,
        )
        .bind(name),
      this.#db
        .prepare(`SELECT (SELECT COUNT(*) FROM user_assignments WHERE ${held("user_assignments.roles")}) + (SELECT COUNT(*) FROM groups WHERE ${held("groups.roles")}) AS holders`)
        .bind(name),
    ]);
    if ((deleted?.meta.changes ?? 0) > 0) {
      grantsCache.clear();
      return { outcome: "deleted" };
    }
    if ((found?.results.length ?? 0) === 0) return { outcome: "missing" };
    const named = (holders?.results ?? []).map((row) => ({ kind: row.kind === "group" ? ("group" as const) : ("user" as const), id: String(row.id) }));
    return { outcome: "held", holders: named, total: Number(count?.results[0]?.holders ?? named.length) };
  }

  /** The roles named, as stored now (unknown names left out): what a hand-out of them is checked against. */
  async rolesAsRead(names: readonly string[]): Promise<Role[]> {
    if (names.length === 0) return [];
    // One JSON parameter however many names (a user's roles with those of all their groups, an identity provider's
    // claim): D1 binds at most 100 a statement.
    const { results } = await this.#db
      .prepare(`SELECT name, description, permissions FROM roles WHERE name IN (SELECT value FROM json_each(?))`)
      .bind(JSON.stringify([...new Set(names)]))
      .all<{ name: string; description: string; permissions: string }>();
    return results.map(roleOf);
  }

  /**
   * The roles named, by name (unknown names left out): those the users or groups a listing answers hold, read once
   * each, where every role defined was read, held or not (a tenant's roles are not capped, each up to tens of KB).
   */
  async rolesByName(names: readonly string[]): Promise<Map<string, Role>> {
    return new Map((await this.rolesAsRead(names)).map((role) => [role.name, role]));
  }

  /**
   * The users (their direct permissions), roles and groups holding a grant at exactly `scope`, each with its grants, by
   * id within each kind: who holds access to one target. Filtered in D1, one round trip: the grants of those holding
   * none there are neither sent nor parsed (every user, role and group was read for it, the users only up to
   * {@link MAX_LISTED_USERS}, so that one past them holding access was never named).
   */
  async grantHoldersAt(scope: string): Promise<Array<{ kind: "USER" | "ROLE" | "GROUP"; id: string; grants: Grant[] }>> {
    // No index serves a grant's scope inside a JSON list: every row is still read, in D1, not in the isolate.
    const holding = (table: string, id: string, grants: string) =>
      this.#db
        .prepare(`SELECT ${id} AS id, ${grants} AS grants FROM ${table} WHERE EXISTS (SELECT 1 FROM json_each(${table}.${grants}) AS held WHERE json_extract(held.value, '$.scope') = ?1) ORDER BY ${id}`)
        .bind(scope);
    const kinds = ["USER", "ROLE", "GROUP"] as const;
    const results = await this.#db.batch<{ id: string; grants: string }>([
      holding("user_assignments", "user_id", "direct_permissions"),
      holding("roles", "name", "permissions"),
      holding("groups", "id", "permissions"),
    ]);
    return results.flatMap((result, index) => result.results.map((row) => ({ kind: kinds[index]!, id: row.id, grants: JSON.parse(row.grants) as Grant[] })));
  }

  /** Names among `names` that are not roles. */
  async unknownRoles(names: string[]): Promise<string[]> {
    const known = new Set((await this.rolesAsRead(names)).map((role) => role.name));
    return names.filter((name) => !known.has(name));
  }

  // ---- users ----

  async getAssignment(userId: string): Promise<UserAssignment | null> {
    return (await this.getNamedAssignment(userId)).assignment;
  }

  /** A user's assignment (null: none) and the name Orkes' `upsertUser` gave them (kept on the same row), in one read. */
  async getNamedAssignment(userId: string): Promise<{ assignment: UserAssignment | null; name: string | undefined }> {
    const row = await this.#db
      .prepare(`SELECT roles, direct_permissions, name FROM user_assignments WHERE user_id = ?`)
      .bind(userId)
      .first<{ roles: string; direct_permissions: string; name: string | null }>();
    if (!row) return { assignment: null, name: undefined };
    return { assignment: { userId, roles: JSON.parse(row.roles) as string[], directPermissions: JSON.parse(row.direct_permissions) as Grant[] }, name: row.name ?? undefined };
  }

  /**
   * Stores a user's assignment, only while the stored one is still `previous` (null: none), the one the
   * caller's right to make the change was checked against, and while `unchanged` holds (a condition on other rows the
   * check read, bound from `unchangedBinds`); false when either changed meanwhile, and then nothing of
   * `alsoInTransaction` acts either when its statements are guarded by {@link ASSIGNMENT_WRITTEN}.
   */
  async putAssignment(
    assignment: UserAssignment,
    previous: UserAssignment | null,
    alsoInTransaction: readonly D1PreparedStatement[] = [],
    unchanged: WriteCondition = ALWAYS,
  ): Promise<boolean> {
    const roles = JSON.stringify(assignment.roles);
    const direct = JSON.stringify(assignment.directPermissions);
    const statement = previous
      ? this.#db
          .prepare(`UPDATE user_assignments SET roles = ?, direct_permissions = ?, update_time = ? WHERE user_id = ? AND roles = ? AND direct_permissions = ? AND ${unchanged.sql}`)
          .bind(roles, direct, Date.now(), assignment.userId, JSON.stringify(previous.roles), JSON.stringify(previous.directPermissions), ...unchanged.binds)
      : this.#db
          .prepare(`INSERT INTO user_assignments (user_id, roles, direct_permissions, update_time) SELECT ?, ?, ?, ? WHERE ${unchanged.sql} ON CONFLICT (user_id) DO NOTHING`)
          .bind(assignment.userId, roles, direct, Date.now(), ...unchanged.binds);
    const [result] = await this.#db.batch([statement, ...alsoInTransaction]);
    if (alsoInTransaction.length > 0) grantsCache.clear();
    else grantsCache.delete(assignment.userId);
    return result!.meta.changes > 0;
  }

  /**
   * `sql` (a statement ending in its WHERE clause) bound for {@link putAssignment}'s transaction: `?1` is the user, `?2`
   * and `?3` the assignment's roles and direct permissions as {@link ASSIGNMENT_WRITTEN} reads them, and `more` binds
   * from `?4` on; `unchanged`, the condition given to that `putAssignment`, is added to the WHERE clause (its own
   * parameters bound after `more`). A statement guarded by both is written with the assignment, or not at all when the
   * assignment's own write was refused: the assignment may already be stored as it would be written, so its condition
   * must hold too.
   */
  withAssignment(assignment: UserAssignment, unchanged: WriteCondition, sql: string, ...more: Array<string | number>): D1PreparedStatement {
    return this.#db
      .prepare(`${sql} AND (${unchanged.sql})`)
      .bind(assignment.userId, JSON.stringify(assignment.roles), JSON.stringify(assignment.directPermissions), ...more, ...unchanged.binds);
  }

  /**
   * Deletes everything user `userId` holds, its keys, its assignment and its group memberships, in one D1 transaction with
   * `alsoInTransaction`, which runs after (ending the sessions of the keys it held, so none outlives them).
   */
  async deleteUser(userId: string, alsoInTransaction: D1PreparedStatement[] = []): Promise<void> {
    await this.#db.batch([
      this.#db.prepare(`DELETE FROM api_keys WHERE user_id = ?`).bind(userId),
      this.#db.prepare(`DELETE FROM user_assignments WHERE user_id = ?`).bind(userId),
      this.#db.prepare(`DELETE FROM group_members WHERE user_id = ?`).bind(userId),
      ...alsoInTransaction,
    ]);
    // Every key, not those listed before: the delete went by user, and took a key made after any listing too (one this
    // isolate may have verified meanwhile). A user's deletion is rare; the keys still valid are read again once.
    keysCache.clear();
    grantsCache.delete(userId);
  }

  /** The user's effective grants: those of their roles and their groups' roles, plus their direct permissions (spec 5.3 rule 2). */
  async effectiveGrants(userId: string): Promise<Grant[]> {
    return grantsCache.getOrLoad(userId, async () => {
      // One round trip: the assignment, and the roles and permissions of the user's groups (a member holds them as if
      // assigned and given).
      const [assigned, grouped] = await this.#db.batch<{ roles: string; direct_permissions?: string; permissions?: string }>([
        this.#db.prepare(`SELECT roles, direct_permissions FROM user_assignments WHERE user_id = ?`).bind(userId),
        this.#db.prepare(`SELECT groups.roles, groups.permissions FROM group_members JOIN groups ON groups.id = group_members.group_id WHERE group_members.user_id = ?`).bind(userId),
      ]);
      const assignment = assigned!.results[0];
      const roles = new Set<string>(assignment === undefined ? [] : (JSON.parse(assignment.roles) as string[]));
      const direct = assignment?.direct_permissions === undefined ? [] : (JSON.parse(assignment.direct_permissions) as Grant[]);
      for (const row of grouped!.results) {
        for (const role of JSON.parse(row.roles) as string[]) roles.add(role);
        direct.push(...(JSON.parse(row.permissions ?? "[]") as Grant[]));
      }
      return [...direct, ...(await this.roleGrants([...roles]))];
    });
  }

  /** The permissions of the named roles (unknown names grant nothing). */
  async roleGrants(names: readonly string[]): Promise<Grant[]> {
    return (await this.rolesAsRead(names)).flatMap((role) => role.permissions);
  }


  /**
   * Everyone something is assigned to, who holds a key or belongs to a group, by user id (at most {@link MAX_LISTED_USERS}): what each is
   * assigned, the name each was given (Orkes'), how many keys each holds and the groups each belongs to (by id). With
   * `membersOf`, the members of that group, every one (whether anything is assigned to them or not), selected in D1 by
   * the group's id: their ids bound as one list were a value over D1's 2 MB for a group of some 50,000 members.
   */
  async listUsers(membersOf?: string): Promise<Array<UserAssignment & { keys: number; groups: string[]; name?: string }>> {
    const known =
      membersOf === undefined
        ? `(SELECT user_id FROM user_assignments UNION SELECT user_id FROM api_keys UNION SELECT user_id FROM group_members)`
        : `(SELECT user_id FROM group_members WHERE group_id = ?2)`;
    const { results } = await this.#db
      .prepare(
        `SELECT known.user_id, assigned.roles, assigned.direct_permissions, assigned.name, (SELECT COUNT(*) FROM api_keys WHERE api_keys.user_id = known.user_id) AS keys,
           (SELECT json_group_array(group_id) FROM (SELECT group_id FROM group_members WHERE group_members.user_id = known.user_id ORDER BY group_id)) AS groups
         FROM ${known} AS known
         LEFT JOIN user_assignments AS assigned ON assigned.user_id = known.user_id
         ORDER BY known.user_id LIMIT ?1`,
      )
      // A negative LIMIT is none: a group's members are listed whole (their answer bounded by conductorUserListing).
      .bind(...(membersOf === undefined ? [MAX_LISTED_USERS] : [-1, membersOf]))
      .all<{ user_id: string; roles: string | null; direct_permissions: string | null; name: string | null; keys: number; groups: string }>();
    return results.map((row) => ({
      userId: row.user_id,
      roles: row.roles === null ? [] : (JSON.parse(row.roles) as string[]),
      directPermissions: row.direct_permissions === null ? [] : (JSON.parse(row.direct_permissions) as Grant[]),
      keys: row.keys,
      groups: JSON.parse(row.groups) as string[],
      ...(row.name === null ? {} : { name: row.name }),
    }));
  }

  // ---- API keys ----

  /**
   * Creates a key for a user, only while `requiring` holds (checked by the insert itself: for an application's user, that
   * the application still exists, so a key made as it is deleted is not left behind acting as it); undefined when it did
   * not. The secret is returned once and stored only as a salted hash.
   */
  async createApiKey(userId: string, requiring: WriteCondition = ALWAYS): Promise<{ keyId: string; keySecret: string } | undefined> {
    const keyId = crypto.randomUUID();
    const keySecret = base64url(crypto.getRandomValues(new Uint8Array(32)));
    const salt = base64url(crypto.getRandomValues(new Uint8Array(16)));
    const result = await this.#db
      .prepare(`INSERT INTO api_keys (key_id, user_id, salt, secret_hash, create_time) SELECT ?, ?, ?, ?, ? WHERE ${requiring.sql}`)
      .bind(keyId, userId, salt, await hmacHex(salt, keySecret), Date.now(), ...requiring.binds)
      .run();
    return result.meta.changes > 0 ? { keyId, keySecret } : undefined;
  }

  async listApiKeys(userId: string): Promise<Array<{ keyId: string; createTime: number }>> {
    return (await this.listApiKeyStates(userId)).map(({ keyId, createTime }) => ({ keyId, createTime }));
  }

  /** A user's keys with whether each authenticates (see {@link setApiKeyActive}), oldest first. */
  async listApiKeyStates(userId: string): Promise<ApiKeyState[]> {
    const { results } = await this.#db
      .prepare(`SELECT key_id, create_time, active FROM api_keys WHERE user_id = ? ORDER BY create_time, key_id`)
      .bind(userId)
      .all<{ key_id: string; create_time: number; active: number }>();
    return results.map((row) => ({ keyId: row.key_id, createTime: row.create_time, active: row.active === 1 }));
  }

  /** The user a key belongs to, whether its secret is right or not; undefined for an unknown key. */
  async apiKeyOwner(keyId: string): Promise<string | undefined> {
    return (await this.#db.prepare(`SELECT user_id FROM api_keys WHERE key_id = ?`).bind(keyId).first<{ user_id: string }>())?.user_id;
  }

  /**
   * Lets a key authenticate (`active`) or stops it; false when the user has no such key. `alsoInTransaction` runs in the
   * same D1 transaction, after the change (ending the sessions obtained with a key stopped).
   */
  async setApiKeyActive(userId: string, keyId: string, active: boolean, alsoInTransaction: D1PreparedStatement[] = []): Promise<boolean> {
    const [result] = await this.#db.batch([this.#db.prepare(`UPDATE api_keys SET active = ? WHERE user_id = ? AND key_id = ?`).bind(active ? 1 : 0, userId, keyId), ...alsoInTransaction]);
    keysCache.delete(keyId);
    return result!.meta.changes > 0;
  }

  /**
   * Revokes a key; false when the user has no such key. `alsoInTransaction` runs in the same D1
   * transaction, after the delete (ending the sessions obtained with the key, so none outlives it).
   */
  async deleteApiKey(userId: string, keyId: string, alsoInTransaction: D1PreparedStatement[] = []): Promise<boolean> {
    const [result] = await this.#db.batch([this.#db.prepare(`DELETE FROM api_keys WHERE user_id = ? AND key_id = ?`).bind(userId, keyId), ...alsoInTransaction]);
    keysCache.delete(keyId);
    return result!.meta.changes > 0;
  }

  /**
   * The user a key belongs to, when the secret matches and the key is active; undefined otherwise (whichever was wrong:
   * an inactive key is answered as an unknown one).
   */
  async verifyApiKey(keyId: string, keySecret: string): Promise<string | undefined> {
    // Unknown ids are cached too (a client retrying a deleted key reads D1 once a second): each entry must stay small.
    const stored =
      keyId.length > MAX_KEY_ID_LENGTH
        ? null
        : await keysCache.getOrLoad(keyId, async () => {
            const row = await this.#db
              .prepare(`SELECT user_id, salt, secret_hash, active FROM api_keys WHERE key_id = ?`)
              .bind(keyId)
              .first<{ user_id: string; salt: string; secret_hash: string; active: number }>();
            return row ? { userId: row.user_id, salt: row.salt, hash: row.secret_hash, active: row.active === 1 } : null;
          });
    // Hash and compare even for an unknown or inactive key, so timing does not tell whether the key exists.
    const hash = await hmacHex(stored?.salt ?? "no-such-key", keySecret);
    const matches = await secretsEqual(hash, stored?.hash ?? "");
    return stored && stored.active && matches ? stored.userId : undefined;
  }

  // ---- access rules ----

  async listRules(): Promise<StoredAccessRule[]> {
    return rulesCache.getOrLoad("all", async () => {
      const { results } = await this.#db
        .prepare(`SELECT id, api_path, methods, required_permissions FROM access_rules ORDER BY create_time, id`)
        .all<{ id: string; api_path: string; methods: string; required_permissions: string }>();
      return results.map((row) => ({ id: row.id, apiPath: row.api_path, methods: JSON.parse(row.methods) as string[], requiredPermissions: JSON.parse(row.required_permissions) as Grant[] }));
    });
  }

  async createRule(rule: AccessRule): Promise<StoredAccessRule> {
    const stored: StoredAccessRule = { id: crypto.randomUUID(), ...rule };
    await this.#db
      .prepare(`INSERT INTO access_rules (id, api_path, methods, required_permissions, create_time) VALUES (?, ?, ?, ?, ?)`)
      .bind(stored.id, rule.apiPath, JSON.stringify(rule.methods), JSON.stringify(rule.requiredPermissions), Date.now())
      .run();
    rulesCache.clear();
    return stored;
  }

  async deleteRule(id: string): Promise<boolean> {
    const result = await this.#db.prepare(`DELETE FROM access_rules WHERE id = ?`).bind(id).run();
    rulesCache.clear();
    return result.meta.changes > 0;
  }
}
