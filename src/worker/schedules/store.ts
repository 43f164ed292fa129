import type { Filter } from "../search";
import type { ScheduleConfig } from "./validate";

/** A schedule as stored in D1 (`schedules`). */
export interface StoredSchedule {
  name: string;
  workflowName: string;
  config: ScheduleConfig;
  paused: boolean;
  pausedReason?: string;
  revision: number;
  startScopes: string[];
  baseUrl: string;
  createTime: number;
  updatedTime: number;
  createdBy: string;
  updatedBy: string;
}

interface Row {
  name: string;
  workflow_name: string;
  schedule: string;
  paused: number;
  paused_reason: string | null;
  revision: number;
  start_scopes: string;
  base_url: string;
  create_time: number;
  updated_time: number;
  created_by: string;
  updated_by: string;
}

function fromRow(row: Row): StoredSchedule {
  const stored: StoredSchedule = {
    name: row.name,
    workflowName: row.workflow_name,
    config: JSON.parse(row.schedule) as ScheduleConfig,
    paused: row.paused === 1,
    revision: row.revision,
    startScopes: JSON.parse(row.start_scopes) as string[],
    baseUrl: row.base_url,
    createTime: row.create_time,
    updatedTime: row.updated_time,
    createdBy: row.created_by,
    updatedBy: row.updated_by,
  };
  if (row.paused_reason !== null) stored.pausedReason = row.paused_reason;
  return stored;
}

/** What a save writes (the rest is kept from the row it replaces, or set at creation). */
export interface ScheduleWrite {
  name: string;
  config: ScheduleConfig;
  paused: boolean;
  startScopes: string[];
  baseUrl: string;
  by: string;
  now: number;
}

/** Schedules in D1. Every write is one statement, conditional on what the caller checked its rights against. */
export class ScheduleRepository {
  constructor(private readonly db: D1Database) {}

  /** The schedule named `name`, or undefined. */
  async get(name: string): Promise<StoredSchedule | undefined> {
    const row = await this.db.prepare(`SELECT * FROM schedules WHERE name = ?`).bind(name).first<Row>();
    return row === null ? undefined : fromRow(row);
  }

  /** One page of schedules in name order after `afterName`, optionally of one workflow. */
  async page(afterName: string, limit: number, workflowName?: string): Promise<StoredSchedule[]> {
    const statement =
      workflowName === undefined
        ? this.db.prepare(`SELECT * FROM schedules WHERE name > ? ORDER BY name LIMIT ?`).bind(afterName, limit)
        : this.db.prepare(`SELECT * FROM schedules WHERE workflow_name = ? AND name > ? ORDER BY name LIMIT ?`).bind(workflowName, afterName, limit);
    return (await statement.all<Row>()).results.map(fromRow);
  }

  /** Every schedule in name order (optionally of one workflow), read `pageSize` at a time as the caller goes on. */
  async *each(pageSize: number, workflowName?: string): AsyncGenerator<StoredSchedule> {
    let after = "";
    for (;;) {
      const page = await this.page(after, pageSize, workflowName);
      yield* page;
      if (page.length < pageSize) return;
      after = page[page.length - 1]!.name;
    }
  }

  /** The schedules of those names that exist, in name order. */
  async named(names: readonly string[]): Promise<StoredSchedule[]> {
    if (names.length === 0) return [];
    const { results } = await this.db.prepare(`SELECT * FROM schedules WHERE name IN (SELECT value FROM json_each(?)) ORDER BY name`).bind(JSON.stringify(names)).all<Row>();
    return results.map(fromRow);
  }

  /** The schedules `filter` keeps (its clauses on `schedules`' columns): how many, and those of one page in `order`. */
  async search(filter: Filter, order: string, start: number, size: number): Promise<{ totalHits: number; schedules: StoredSchedule[] }> {
    const where = filter.clauses.length > 0 ? `WHERE ${filter.clauses.join(" AND ")}` : "";
    const [count, page] = await this.db.batch([
      this.db.prepare(`SELECT COUNT(*) AS total FROM schedules ${where}`).bind(...filter.bindings),
      // By name last: a page boundary falls in the same place on every request.
      this.db.prepare(`SELECT * FROM schedules ${where} ORDER BY ${order}, name LIMIT ? OFFSET ?`).bind(...filter.bindings, size, start),
    ]);
    const totalHits = (count!.results[0] as { total: number } | undefined)?.total ?? 0;
    return { totalHits, schedules: (page!.results as unknown as Row[]).map(fromRow) };
  }

  /**
   * Creates the schedule, or replaces the one at `expectedRevision` (what the caller's rights were checked against).
   * False when the row is not as expected (created, changed or deleted meanwhile): nothing was written. A new schedule's
   * revision is 1, or the one after that of the last schedule deleted under its name (see {@link delete}).
   */
  async save(write: ScheduleWrite, expectedRevision: number | undefined): Promise<boolean> {
    const values = [write.config.startWorkflowRequest.name, JSON.stringify(write.config), write.paused ? 1 : 0, JSON.stringify(write.startScopes), write.baseUrl, write.now, write.by];
    if (expectedRevision === undefined) {
      const inserted = await this.db
        .prepare(
          `INSERT INTO schedules (workflow_name, schedule, paused, start_scopes, base_url, updated_time, updated_by, name, revision, create_time, created_by)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, COALESCE((SELECT revision FROM schedule_deletions WHERE name = ?), 0) + 1, ?, ?) ON CONFLICT (name) DO NOTHING`,
        )
        .bind(...values, write.name, write.name, write.now, write.by)
        .run();
      return inserted.meta.changes === 1;
    }
    const updated = await this.db
      .prepare(
        `UPDATE schedules SET workflow_name = ?, schedule = ?, paused = ?, paused_reason = NULL, start_scopes = ?, base_url = ?, updated_time = ?, updated_by = ?,
         revision = revision + 1 WHERE name = ? AND revision = ?`,
      )
      .bind(...values, write.name, expectedRevision)
      .run();
    return updated.meta.changes === 1;
  }

  /** Pauses (with a reason) or resumes the schedule at `expectedRevision`; false when it is not as expected. */
  async setPaused(name: string, expectedRevision: number, paused: boolean, reason: string | undefined, by: string, now: number): Promise<boolean> {
    const updated = await this.db
      .prepare(`UPDATE schedules SET paused = ?, paused_reason = ?, updated_time = ?, updated_by = ?, revision = revision + 1 WHERE name = ? AND revision = ?`)
      .bind(paused ? 1 : 0, paused ? (reason ?? null) : null, now, by, name, expectedRevision)
      .run();
    return updated.meta.changes === 1;
  }

  /**
   * Deletes the schedule at `expectedRevision`, its tags and the record of its fires; false when it is not as expected.
   * Its revision is kept with the name (`schedule_deletions`): one created again under it goes on from there (see
   * {@link save}), so no revision of a name is ever given twice, and an alarm armed for the deleted schedule finds the
   * new one changed rather than takes it for its own.
   */
  async delete(name: string, expectedRevision: number): Promise<boolean> {
    const gone = `NOT EXISTS (SELECT 1 FROM schedules WHERE name = ?1)`;
    const [, deleted] = await this.db.batch([
      this.db
        .prepare(
          `INSERT INTO schedule_deletions (name, revision) SELECT name, revision FROM schedules WHERE name = ?1 AND revision = ?2
           ON CONFLICT (name) DO UPDATE SET revision = MAX(revision, excluded.revision)`,
        )
        .bind(name, expectedRevision),
      this.db.prepare(`DELETE FROM schedules WHERE name = ? AND revision = ?`).bind(name, expectedRevision),
      this.db.prepare(`DELETE FROM metadata_tags WHERE target_type = 'SCHEDULE' AND target_name = ?1 AND ${gone}`).bind(name),
      this.db.prepare(`DELETE FROM schedule_executions WHERE schedule_name = ?1 AND ${gone}`).bind(name),
    ]);
    return deleted!.meta.changes === 1;
  }
}
