import type { RateLimitConfig, WorkflowDef } from "../engine/model";
import { ApiError } from "./http/errors";
import { TtlCache, NAME_CACHE_MAX_KEY_LENGTH } from "./ttl-cache";
import { valuesByPlace, type PlacedRow } from "./rows-by-place";
import { forgetTaggedDefinitions } from "./auth/tag-grants";
import type { NameFilter } from "./auth/permissions";
import { boundedListing, MAX_LISTING_CHARS, namesLetThrough, whereEvery, type ListingCondition } from "./bounded-listing";
import { TagRepository } from "./tags";

/** How long a definition read is reused by this isolate. Writes in the same isolate invalidate at once. */
const CACHE_TTL_MS = 2_000;

/** A stored definition's name, version and the updateTime D1 stored it with. */
export interface StoredUpdateTime {
  name: string;
  version: number;
  updateTime: number;
  /** Whether it is its name's latest version once stored (what new starts take, and whose limit governs). */
  latest: boolean;
}

/**
 * How a listing reads each definition: whole; without its tasks (`"tasks": []`, Orkes' `short=true`); or with only each
 * task's `type` (what Conductor's WorkflowDefListItem counts), so that a listing that shows no task does not read
 * them, which make most of a large definition.
 */
export type ListedShape = "whole" | "withoutTasks" | "taskTypes";

/** The SQL of a definition read in each {@link ListedShape}. */
const LISTED_SHAPES: Record<ListedShape, string> = {
  whole: "definition",
  withoutTasks: "json_set(definition, '$.tasks', json('[]'))",
  taskTypes: "json_set(definition, '$.tasks', (SELECT json_group_array(json_object('type', json_extract(task.value, '$.type'))) FROM json_each(definition, '$.tasks') AS task))",
};

/** A version of a workflow as Conductor's WorkflowDefSummary lists it (`names-and-versions`, `{name}/versions`). */
export interface VersionSummary {
  name: string;
  version: number;
  createTime: number;
}

/** The characters of a {@link VersionSummary} as answered, but its name's (twice): its keys, version and createTime. */
const VERSION_SUMMARY_CHARS = 48;

/** What {@link DefinitionRepository.delete} answers of a version deleted. */
export interface DeletedVersion {
  /** The time the deletion is told to the rate limit objects with: after every updateTime of the name so far. */
  deletedAt: number;
  /** The name's latest version left, which new starts take now, with its `concurrentExecLimit` (null: none). */
  latest: { version: number; limit: number | null } | undefined;
}

/** The latest version left of a name, as the deletion's batch reads it. */
interface LatestRow {
  version: number;
  rate_limit: number | null;
}

/**
 * The SQL of a workflow definition's new updateTime: the time `nowParam` the saving isolate took, or just after the
 * latest updateTime of any version of the name `nameParam` when that is later. The rate limit objects keep the limit of
 * the latest updateTime they have been told or entered with (`ExecutionLimit`), so updateTimes must follow the order in
 * which D1 stored the definitions: a time taken before the write could be earlier than one a registration stored before
 * it took (taken first and stored last, or in an isolate whose clock is ahead), and the object then kept that earlier
 * registration's limit for good, passing over what D1 holds.
 */
function laterUpdateTime(nowParam: string, nameParam: string): string {
  // Deletions count too (workflow_def_deletions, the time the latest was told with, after the deleted version's own):
  // the objects may have been told it, and with every version deleted a registration would otherwise take the saving
  // isolate's clock, behind a deleted one stored by a clock ahead.
  return `MAX(${nowParam}, COALESCE((SELECT MAX(update_time) FROM workflow_defs WHERE name = ${nameParam}), 0) + 1,
    COALESCE((SELECT deleted_time FROM workflow_def_deletions WHERE name = ${nameParam}), 0) + 1)`;
}

/** A workflow's limit as its stored definitions set it now (null: none), and the time a key takes it with. */
export interface CurrentLimit {
  limit: number | null;
  definedAt: number;
}

/**
 * The statement that reads workflow `name`'s {@link CurrentLimit} (no row: no version of it stored), for a D1 batch
 * (see {@link currentLimitOf}): its latest version's `concurrentExecLimit`, at the latest time a rate limit key may have
 * been told a change of it (that version's updateTime, or its latest deletion's when later, as a deletion tells it).
 */
export function currentLimitStatement(db: D1Database, name: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT json_extract(definition, '$.rateLimitConfig.concurrentExecLimit') AS rate_limit,
         MAX(update_time, COALESCE((SELECT deleted_time FROM workflow_def_deletions WHERE name = ?1), 0)) AS defined_at
       FROM workflow_defs WHERE name = ?1 ORDER BY version DESC LIMIT 1`,
    )
    .bind(name);
}

/** What {@link currentLimitStatement} read: undefined when no version of the workflow is stored. */
export function currentLimitOf(result: D1Result<{ rate_limit: number | null; defined_at: number }> | undefined): CurrentLimit | undefined {
  const row = result?.results[0];
  if (row === undefined) return undefined;
  return { limit: storedLimit(row.rate_limit), definedAt: row.defined_at };
}

/** A `concurrentExecLimit` as D1's json_extract read it from a stored definition (null: none). */
function storedLimit(value: number | null): number | null {
  return typeof value === "number" && value > 0 ? value : null;
}

/**
 * Conductor's words for a workflow definition not found, which its clients' and server's tests look for: MetadataServiceImpl's
 * getWorkflowDef (`"No such workflow found by name: %s, version: %d"`, a version not given written `null`), what its
 * `GET /api/metadata/workflow/{name}` and its start by name (`POST /api/workflow/{name}`, WorkflowServiceImpl) answer.
 */
export function workflowNotFoundMessage(name: string, version?: number): string {
  return `No such workflow found by name: ${name}, version: ${version ?? "null"}${colonNameHint(name)}`;
}

/**
 * Why a name with a `:` cannot be found, after Conductor's words: registration refuses the `:` in a name, and a version
 * written into the name (`orders:2`, as task and Docker tags are written) is a common way to miss the `version` field.
 */
function colonNameHint(name: string): string {
  if (!name.includes(":")) return "";
  const versioned = /^(.+):(\d{1,9})$/.exec(name);
  if (versioned === null) return " (a workflow name holds no ':')";
  return ` (a workflow name holds no ':'; for version ${Number(versioned[2])} of ${JSON.stringify(versioned[1])}, give the name ${JSON.stringify(versioned[1])} and version ${Number(versioned[2])})`;
}

/**
 * Workflow definitions in D1, with a short in-isolate cache: starting a workflow must not pay a D1
 * read per start for a definition that has not changed.
 */
export class DefinitionRepository {
  static readonly #cache = new TtlCache<WorkflowDef | null>(CACHE_TTL_MS, { maxKeyLength: NAME_CACHE_MAX_KEY_LENGTH });
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /**
   * The definition of that name and version (latest when version is omitted), or null. Version 0 is version 0 when one is
   * registered (the Java SDK registers and starts its workflows as version 0 unless told otherwise), else the latest,
   * as Orkes reads 0.
   */
  async find(name: string, version?: number): Promise<WorkflowDef | null> {
    return DefinitionRepository.#cache.getOrLoad(DefinitionRepository.#key(name, version), async () => {
      const row =
        version === undefined
          ? await this.#db.prepare(`SELECT definition FROM workflow_defs WHERE name = ? ORDER BY version DESC LIMIT 1`).bind(name).first<{ definition: string }>()
          : version === 0
            ? await this.#db.prepare(`SELECT definition FROM workflow_defs WHERE name = ? ORDER BY version = 0 DESC, version DESC LIMIT 1`).bind(name).first<{ definition: string }>()
            : await this.#db.prepare(`SELECT definition FROM workflow_defs WHERE name = ? AND version = ?`).bind(name, version).first<{ definition: string }>();
      return row ? (JSON.parse(row.definition) as WorkflowDef) : null;
    });
  }

  /**
   * The latest version of each of `names`, by name, as {@link find} without a version gives it (and cached with it);
   * names with none registered are left out. The names not cached are read by one D1 statement, whatever their number
   * (their list is one bound parameter, read by json_each): a start of a definition with many unversioned children
   * looked each up with a statement of its own, and past about 45 went over Workers Free's 50 queries an invocation.
   */
  async findLatestMany(names: readonly string[]): Promise<Map<string, WorkflowDef>> {
    const keyOf = (name: string) => `${name}\u0000latest`;
    const byKey = await DefinitionRepository.#cache.getOrLoadMany(names.map(keyOf), async (keys) => {
      const wanted = keys.map((key) => key.slice(0, -"\u0000latest".length));
      return valuesByPlace(
        this.#db,
        `SELECT wanted.key AS place, def.definition FROM json_each(?) AS wanted JOIN workflow_defs AS def ON def.name = wanted.value ` +
          `AND def.version = (SELECT MAX(version) FROM workflow_defs WHERE name = wanted.value)`,
        wanted,
        keys,
        (row: PlacedRow & { definition: string }) => JSON.parse(row.definition) as WorkflowDef,
      );
    });
    const found = new Map<string, WorkflowDef>();
    for (const name of names) {
      const definition = byKey.get(keyOf(name));
      if (definition) found.set(name, definition);
    }
    return found;
  }

  /**
   * As {@link find}, but as D1 holds it now, whatever this isolate read within the cache's time (what it reads is cached
   * for the starts after it). For what a client asks of one definition (its GET, its rate limit, an upgrade to it): a
   * version registered or deleted through another isolate is seen at once, where {@link find} may answer what this one
   * read up to two seconds before (a definition saved and read back showed as it was, a new version as not found, an
   * upgrade to the latest ran the one before). Starts keep to {@link find}: they must not pay a D1 read each.
   */
  async findCurrent(name: string, version?: number): Promise<WorkflowDef | null> {
    DefinitionRepository.#cache.delete(DefinitionRepository.#key(name, version));
    return this.find(name, version);
  }

  /**
   * As {@link find}, for a start: a definition this isolate read within the cache's time is taken (a start must not pay
   * a D1 read each), but its absence is read again from D1. A start refused as not found is final (a 404, a child's
   * SUB_WORKFLOW task failed, a fire recorded as failed), and a version registered through another isolate just after
   * this one found none was refused so for up to two seconds: the register-after-a-404 a client does, then the start
   * again, was refused once more. Only a start that fails pays the read.
   */
  async findToStart(name: string, version?: number): Promise<WorkflowDef | null> {
    const key = DefinitionRepository.#key(name, version);
    if (DefinitionRepository.#cache.get(key) === null) DefinitionRepository.#cache.delete(key);
    return this.find(name, version);
  }

  /** The definition, or 404 naming what was asked for (`current`: as D1 holds it now, see {@link findCurrent}). */
  async get(name: string, version?: number, current = false): Promise<WorkflowDef> {
    const definition = current ? await this.findCurrent(name, version) : await this.find(name, version);
    if (!definition) {
      throw new ApiError(404, "NOT_FOUND", workflowNotFoundMessage(name, version));
    }
    return definition;
  }

  /**
   * Every definition (of workflow `name` only, when given; of those holding tag `tagged`, when given; of the names
   * `visible` lets through, see {@link listedDefinitionNames}), every version, by name then version, read in `shape`; at
   * most {@link MAX_LISTING_CHARS} of them (a 413 beyond, see {@link boundedListing}).
   */
  async list(name?: string, shape: ListedShape = "whole", tagged?: { key: string; value?: string | undefined }, visible: readonly NameFilter[] = []): Promise<WorkflowDef[]> {
    const conditions: ListingCondition[] = [
      ...(name === undefined ? [] : [{ sql: "name = ?", binds: [name] }]),
      ...(tagged === undefined ? [] : [TagRepository.holdingCondition("WORKFLOW_DEF", tagged)]),
      ...namesLetThrough("def.name", visible),
    ];
    const narrower =
      name === undefined
        ? "ask for fewer: short=true (without their tasks), name= (one workflow's versions), tagKey= (those holding a tag), or GET /api/metadata/workflow/list (the latest versions without their tasks)"
        : "ask for fewer: short=true (without their tasks), or GET /api/metadata/workflow/{name}?version= (one version)";
    return this.#listed(conditions, shape, narrower);
  }

  /** The latest registered version of each of `names` that has one, read from D1 (not the cache). */
  async latestVersionNumbers(names: readonly string[]): Promise<Map<string, number>> {
    const { results } = await this.#db
      .prepare(`SELECT name, MAX(version) AS version FROM workflow_defs WHERE name IN (SELECT value FROM json_each(?)) GROUP BY name`)
      .bind(JSON.stringify([...new Set(names)]))
      .all<{ name: string; version: number }>();
    return new Map(results.map((row) => [row.name, row.version]));
  }

  /**
   * The latest version of every name (of those `visible` lets through), by name (Conductor's `latest-versions`), read in
   * `shape`; bounded as {@link list}.
   */
  async latestVersions(shape: ListedShape = "whole", visible: readonly NameFilter[] = []): Promise<WorkflowDef[]> {
    const narrower = "ask for fewer: GET /api/metadata/workflow/list (the same versions without their tasks), or GET /api/metadata/workflow/{name} (one workflow's)";
    return this.#listed([{ sql: "version = (SELECT MAX(version) FROM workflow_defs WHERE name = def.name)", binds: [] }, ...namesLetThrough("def.name", visible)], shape, narrower);
  }

  /**
   * The definitions meeting every one of `conditions` (on `workflow_defs AS def`), by name then version, in `shape`,
   * within the bound (past it a 413 ending with `narrower`, what to ask for instead).
   */
  async #listed(conditions: readonly ListingCondition[], shape: ListedShape, narrower: string): Promise<WorkflowDef[]> {
    const where = whereEvery(conditions);
    const rows = await boundedListing<{ definition: string }>(
      this.#db,
      `SELECT name, version, ${LISTED_SHAPES[shape]} AS definition, length(${LISTED_SHAPES[shape]}) AS listed_chars FROM workflow_defs AS def ${where.sql}`,
      "listed.name, listed.version",
      where.binds,
      (chars) => `The workflow definitions listed come to ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; ${narrower}`,
    );
    return rows.map((row) => JSON.parse(row.definition) as WorkflowDef);
  }

  /**
   * Every name (of those `visible` lets through, see {@link listedDefinitionNames}) with its versions, oldest first
   * (Conductor's `names-and-versions`: WorkflowDefSummary lists by name); at most {@link MAX_LISTING_CHARS} of them as
   * answered (a 413 beyond, see {@link boundedListing}): a large tenant's every version is over it, where its names alone
   * (`GET /api/metadata/workflow/names`) are not.
   */
  async namesAndVersions(visible: readonly NameFilter[] = []): Promise<Map<string, VersionSummary[]>> {
    const where = whereEvery(namesLetThrough("def.name", visible));
    // As answered, each version repeats its name: `{"name":…,"version":…,"createTime":…},` (the name's key once more).
    const rows = await boundedListing<{ name: string; version: number; create_time: number }>(
      this.#db,
      `SELECT name, version, create_time, 2 * length(name) + ${VERSION_SUMMARY_CHARS} AS listed_chars FROM workflow_defs AS def ${where.sql}`,
      "listed.name, listed.version",
      where.binds,
      (chars) =>
        `The workflow names with their versions come to about ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; ` +
        "ask for fewer: GET /api/metadata/workflow/names (the names alone), then GET /api/metadata/workflow/{name}/versions (one name's)",
    );
    // A Map: a workflow named `__proto__` or `constructor` is a name like any other.
    const byName = new Map<string, VersionSummary[]>();
    for (const row of rows) {
      const summary = { name: row.name, version: row.version, createTime: row.create_time };
      const versions = byName.get(row.name);
      if (versions === undefined) byName.set(row.name, [summary]);
      else versions.push(summary);
    }
    return byName;
  }

  /**
   * Every name (of those `visible` lets through) with a version registered, by name (Conductor's `names`); at most
   * {@link MAX_LISTING_CHARS} of them as answered (a 413 beyond: some 400,000 names of 40 characters).
   */
  async names(visible: readonly NameFilter[] = []): Promise<string[]> {
    const where = whereEvery(namesLetThrough("def.name", visible));
    const rows = await boundedListing<{ name: string }>(
      this.#db,
      // `"…",` each: the name's index alone is read, once a name.
      `SELECT name, length(name) + 3 AS listed_chars FROM workflow_defs AS def ${where.sql} GROUP BY name`,
      "listed.name",
      where.binds,
      (chars) => `The workflow names come to about ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; ask for fewer: GET /api/metadata/workflow?short=true&tagKey= (the definitions holding a tag, without their tasks)`,
    );
    return rows.map((row) => row.name);
  }

  /** The versions of workflow `name`, oldest first, as {@link namesAndVersions} lists them (none: an empty list). */
  async versionsOf(name: string): Promise<VersionSummary[]> {
    const { results } = await this.#db
      .prepare(`SELECT name, version, create_time FROM workflow_defs WHERE name = ? ORDER BY version`)
      .bind(name)
      .all<{ name: string; version: number; create_time: number }>();
    return results.map((row) => ({ name: row.name, version: row.version, createTime: row.create_time }));
  }

  /**
   * Stores definitions in one atomic batch, `alongside` statements included (their tags). Without `overwrite`, an existing name+version is a 409
   * and nothing is written. An overwritten version keeps its createTime (Conductor's behaviour) and its createdBy; only
   * its updateTime (and updatedBy) change. `by`: the user registering them (Orkes' createdBy and updatedBy). Answers
   * each one's stored updateTime: later than that of every version of its name stored before it (see {@link laterUpdateTime}),
   * and whether it is its name's latest version, read in the same batch.
   */
  async save(definitions: WorkflowDef[], overwrite: boolean, alongside: readonly D1PreparedStatement[] = [], by?: string): Promise<StoredUpdateTime[]> {
    const now = Date.now();
    const author = by === undefined ? {} : { createdBy: by, updatedBy: by };
    const stored = definitions.map((definition) => ({ ...definition, ...author, createTime: definition.createTime ?? now, updateTime: now }));
    const updated = laterUpdateTime("?4", "?1");
    const values = `INSERT INTO workflow_defs (name, version, definition, create_time, update_time) VALUES (?1, ?2, json_set(?3, '$.updateTime', ${updated}), ?4, ${updated})`;
    // An overwritten version keeps who created it (when that was recorded) as it keeps when.
    const statement = overwrite
      ? `${values}
         ON CONFLICT (name, version) DO UPDATE SET
           definition = json_set(excluded.definition, '$.createTime', workflow_defs.create_time,
             '$.createdBy', COALESCE(json_extract(workflow_defs.definition, '$.createdBy'), json_extract(excluded.definition, '$.createdBy'))),
           update_time = excluded.update_time
         RETURNING name, version, update_time`
      : `${values} RETURNING name, version, update_time`;
    try {
      const results = await this.#db.batch<{ name: string; version: number; update_time: number }>([
        ...stored.map((definition) => this.#db.prepare(statement).bind(definition.name, definition.version, JSON.stringify(definition), now)),
        ...alongside,
        // In the batch: a version registered meanwhile by another request is seen, or sees these.
        this.#db
          .prepare(`SELECT name, MAX(version) AS version FROM workflow_defs WHERE name IN (SELECT value FROM json_each(?)) GROUP BY name`)
          .bind(JSON.stringify([...new Set(stored.map((definition) => definition.name))])),
      ]);
      const latest = new Map(results.at(-1)!.results.map((row) => [row.name, row.version]));
      return results
        .slice(0, stored.length)
        .flatMap((result) => result.results.map((row) => ({ name: row.name, version: row.version, updateTime: row.update_time, latest: latest.get(row.name) === row.version })));
    } catch (error) {
      if (!overwrite && String(error).includes("UNIQUE constraint failed")) {
        const names = definitions.map((definition) => `${definition.name} version ${definition.version}`).join(", ");
        throw new ApiError(409, "CONFLICT", `Workflow definition already exists: ${names}; pass overwrite=true to replace it`);
      }
      throw error;
    } finally {
      DefinitionRepository.#invalidate(definitions.map((definition) => definition.name));
    }
  }

  /**
   * Sets (or, with undefined, removes) the rate limit of every version of workflow `name`, as one statement; answers
   * their new update time, or undefined when no definition has that name. The update time moves (later than every
   * version's before, see {@link laterUpdateTime}), which makes the limit the one the next start applies (see
   * `ExecutionLimit.enter`).
   */
  async setRateLimit(name: string, config: RateLimitConfig | undefined): Promise<number | undefined> {
    const updated = laterUpdateTime("?1", "?2");
    const statement =
      config === undefined
        ? this.#db.prepare(`UPDATE workflow_defs SET definition = json_set(json_remove(definition, '$.rateLimitConfig'), '$.updateTime', ${updated}), update_time = ${updated} WHERE name = ?2 RETURNING update_time`).bind(Date.now(), name)
        : this.#db
            .prepare(`UPDATE workflow_defs SET definition = json_set(definition, '$.rateLimitConfig', json(?3), '$.updateTime', ${updated}), update_time = ${updated} WHERE name = ?2 RETURNING update_time`)
            .bind(Date.now(), name, JSON.stringify(config));
    const { results } = await statement.all<{ update_time: number }>();
    DefinitionRepository.#invalidate([name]);
    return results.length > 0 ? Math.max(...results.map((row) => row.update_time)) : undefined;
  }

  /**
   * Deletes one version (and, with the last one, the name's tags); undefined when it did not exist. Answers the time of
   * the deletion (`deletedAt`, taken before the call, or just after the latest updateTime of the name's versions and
   * deletions when that is later), recorded with the name so that a version stored after it takes a later updateTime
   * (see {@link laterUpdateTime}), and the version of the name left latest with its limit (none: the last one went).
   */
  async delete(name: string, version: number, deletedAt: number): Promise<DeletedVersion | undefined> {
    const [recorded, , , latest] = await this.#db.batch<{ deleted_time: number } & LatestRow>([
      this.#db
        .prepare(
          `INSERT INTO workflow_def_deletions (name, deleted_time)
             SELECT name, MAX(?3, (SELECT MAX(update_time) FROM workflow_defs WHERE name = ?1) + 1,
               COALESCE((SELECT deleted_time FROM workflow_def_deletions WHERE name = ?1), 0) + 1)
             FROM workflow_defs WHERE name = ?1 AND version = ?2
           ON CONFLICT (name) DO UPDATE SET deleted_time = excluded.deleted_time RETURNING deleted_time`,
        )
        .bind(name, version, deletedAt),
      this.#db.prepare(`DELETE FROM workflow_defs WHERE name = ? AND version = ?`).bind(name, version),
      this.#db
        .prepare(`DELETE FROM metadata_tags WHERE target_type = 'WORKFLOW_DEF' AND target_name = ?1 AND NOT EXISTS (SELECT 1 FROM workflow_defs WHERE name = ?1)`)
        .bind(name),
      this.#db
        .prepare(`SELECT version, json_extract(definition, '$.rateLimitConfig.concurrentExecLimit') AS rate_limit FROM workflow_defs WHERE name = ? ORDER BY version DESC LIMIT 1`)
        .bind(name),
    ]);
    DefinitionRepository.#invalidate([name]);
    const deletedTime = recorded!.results[0]?.deleted_time;
    if (deletedTime === undefined) return undefined;
    const left = latest!.results[0];
    return {
      deletedAt: deletedTime,
      latest: left === undefined ? undefined : { version: left.version, limit: storedLimit(left.rate_limit) },
    };
  }

  /** The cache key of {@link find}'s answer for that name and version ("latest" for none). */
  static #key(name: string, version: number | undefined): string {
    return `${name}\u0000${version ?? "latest"}`;
  }

  static #invalidate(names: string[]): void {
    DefinitionRepository.#cache.clear((key) => names.some((name) => key.startsWith(`${name}\u0000`)));
    // A registration may bring tags, a deletion take them away: what tag grants cover changed too.
    forgetTaggedDefinitions();
  }
}
