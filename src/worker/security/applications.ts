import { boundedListing, MAX_LISTING_CHARS } from "../bounded-listing";
import type { Tag } from "../tags";
import { ALWAYS, type WriteCondition } from "./store";

/**
 * Orkes' application: a non-human identity (a service, a task worker, a CI job) with access keys and roles. It acts as
 * the user {@link applicationUserId}: its keys and roles are that user's (`api_keys`, `user_assignments`).
 */
export interface Application {
  id: string;
  name: string;
  tags: Tag[];
  createdBy?: string;
  updatedBy?: string;
  createTime: number;
  updateTime: number;
}

/** The user an application acts as: `app:<id>`. */
export function applicationUserId(applicationId: string): string {
  return `${APPLICATION_USER_PREFIX}${applicationId}`;
}

/** The prefix of the user ids of applications. */
export const APPLICATION_USER_PREFIX = "app:";

/**
 * The condition that the application whose user is `userId` (`app:<id>`) exists, for a write that gives that user a
 * credential, roles or grants: an application deleted meanwhile (or never created) gets none. Undefined for a user id of no application.
 */
export function applicationExists(userId: string): WriteCondition | undefined {
  if (!userId.startsWith(APPLICATION_USER_PREFIX)) return undefined;
  return { sql: `EXISTS (SELECT 1 FROM applications WHERE id = ?)`, binds: [userId.slice(APPLICATION_USER_PREFIX.length)] };
}

/**
 * The condition that the application of every application's user (`app:<id>`) among `userIds` exists, for a write that
 * makes them members of a group (one parameter however many: D1 takes at most 100 per statement). ALWAYS when none is.
 */
export function applicationsExist(userIds: readonly string[]): WriteCondition {
  const ids = applicationIdsOf(userIds);
  if (ids.length === 0) return ALWAYS;
  return { sql: `NOT EXISTS (SELECT 1 FROM json_each(?) AS wanted WHERE NOT EXISTS (SELECT 1 FROM applications WHERE id = wanted.value))`, binds: [JSON.stringify(ids)] };
}

/** The ids of the applications whose users (`app:<id>`) are among `userIds`, each once. */
export function applicationIdsOf(userIds: readonly string[]): string[] {
  return [...new Set(userIds.filter((userId) => userId.startsWith(APPLICATION_USER_PREFIX)).map((userId) => userId.slice(APPLICATION_USER_PREFIX.length)))];
}

interface ApplicationRow {
  id: string;
  name: string;
  tags: string;
  created_by: string | null;
  updated_by: string | null;
  create_time: number;
  update_time: number;
}

function fromRow(row: ApplicationRow): Application {
  const application: Application = { id: row.id, name: row.name, tags: JSON.parse(row.tags) as Tag[], createTime: row.create_time, updateTime: row.update_time };
  if (row.created_by !== null) application.createdBy = row.created_by;
  if (row.updated_by !== null) application.updatedBy = row.updated_by;
  return application;
}

const COLUMNS = `id, name, tags, created_by, updated_by, create_time, update_time`;

/** Applications in D1 (their keys and roles are the security store's, under {@link applicationUserId}). */
export class ApplicationRepository {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /** Every application, oldest first: at most {@link MAX_LISTING_CHARS} of them (a 413 beyond, see {@link boundedListing}). */
  async list(): Promise<Application[]> {
    // Their count is not capped, and each may hold 100 tags of 256-character keys and values (about 50 KB).
    const results = await boundedListing<ApplicationRow>(
      this.#db,
      `SELECT ${COLUMNS}, length(id) + length(name) + length(tags) + COALESCE(length(created_by), 0) + COALESCE(length(updated_by), 0) AS listed_chars FROM applications`,
      "listed.create_time, listed.id",
      [],
      (chars) => `The applications with their tags come to ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; read them one at a time: GET /api/applications/{id}`,
    );
    return results.map(fromRow);
  }

  /** Whether application `id` exists (read alone, without its tags). */
  async exists(id: string): Promise<boolean> {
    return (await this.#db.prepare(`SELECT 1 FROM applications WHERE id = ?`).bind(id).first()) !== null;
  }

  /**
   * The ids among `ids` whose application does not exist, in their order: one query however many (a refused bulk
   * addition to a group names up to 100, and Workers Free allows an invocation 50 D1 queries).
   */
  async missing(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const { results } = await this.#db
      .prepare(`SELECT wanted.value AS id FROM json_each(?) AS wanted WHERE NOT EXISTS (SELECT 1 FROM applications WHERE id = wanted.value) ORDER BY wanted.key`)
      .bind(JSON.stringify(ids))
      .all<{ id: string }>();
    return results.map((row) => row.id);
  }

  async get(id: string): Promise<Application | null> {
    const row = await this.#db.prepare(`SELECT ${COLUMNS} FROM applications WHERE id = ?`).bind(id).first<ApplicationRow>();
    return row ? fromRow(row) : null;
  }

  /** A new application named `name`, under a random id. */
  async create(name: string, by: string): Promise<Application> {
    const now = Date.now();
    const application: Application = { id: crypto.randomUUID(), name, tags: [], createdBy: by, updatedBy: by, createTime: now, updateTime: now };
    await this.#db
      .prepare(`INSERT INTO applications (${COLUMNS}) VALUES (?, ?, '[]', ?, ?, ?, ?)`)
      .bind(application.id, name, by, by, now, now)
      .run();
    return application;
  }

  /** Renames an application; null when there is none with that id. */
  async rename(id: string, name: string, by: string): Promise<Application | null> {
    const row = await this.#db
      .prepare(`UPDATE applications SET name = ?, updated_by = ?, update_time = ? WHERE id = ? RETURNING ${COLUMNS}`)
      .bind(name, by, Date.now(), id)
      .first<ApplicationRow>();
    return row ? fromRow(row) : null;
  }

  /**
   * Replaces an application's tags, only while they are still `previous` (what the change was computed from); false
   * when the application is gone or its tags changed meanwhile.
   */
  async replaceTags(id: string, tags: readonly Tag[], previous: readonly Tag[]): Promise<boolean> {
    const result = await this.#db.prepare(`UPDATE applications SET tags = ? WHERE id = ? AND tags = ?`).bind(JSON.stringify(tags), id, JSON.stringify(previous)).run();
    return result.meta.changes > 0;
  }

  /** The statement deleting the application `id`, for the batch that also deletes what its user holds. */
  deleteStatement(id: string): D1PreparedStatement {
    return this.#db.prepare(`DELETE FROM applications WHERE id = ?`).bind(id);
  }
}
