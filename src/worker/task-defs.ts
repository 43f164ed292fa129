import { forgetTaggedDefinitions } from "./auth/tag-grants";
import { registeredTaskDefNames, withRegisteredTaskDefs } from "../engine/definition/task-def";
import type { TaskDef, WorkflowDef } from "../engine/model";
import { withKeptSchemas } from "./json-schemas";
import { DefinitionRepository } from "./definitions";
import { TtlCache, NAME_CACHE_MAX_KEY_LENGTH } from "./ttl-cache";
import { boundedListing, MAX_LISTING_CHARS, namesLetThrough, whereEvery } from "./bounded-listing";
import type { NameFilter } from "./auth/permissions";
import { TagRepository } from "./tags";
import { valuesByPlace, type PlacedRow } from "./rows-by-place";
import { unversionedChildNames, withChildVersions } from "../engine/tasks/sub-workflow/versions";

/** How long a task definition read is reused by this isolate. Writes in the same isolate invalidate at once. */
const CACHE_TTL_MS = 2_000;

/**
 * Task definitions in D1, with a short in-isolate cache like the workflow definitions': every start looks up
 * the ones its tasks follow, and must not pay a D1 read for each.
 */
export class TaskDefRepository {
  /**
   * Read definitions by name, null for a name none is registered under. Bounded like the other isolate caches: the
   * names looked up include those a DYNAMIC task's input chooses, so a plain map would grow with every name ever asked.
   */
  static readonly #cache = new TtlCache<TaskDef | null>(CACHE_TTL_MS, { maxKeyLength: NAME_CACHE_MAX_KEY_LENGTH });
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /**
   * The registered task definitions among `names`, by name (absent names are left out). Those not cached are read by one
   * D1 statement, whatever their number (the list is one bound parameter, read by json_each): Workers Free allows 50
   * statements an invocation, and D1 100 bound parameters a statement.
   */
  async findMany(names: readonly string[]): Promise<Map<string, TaskDef>> {
    const loaded = await TaskDefRepository.#cache.getOrLoadMany(names, (missing) =>
      valuesByPlace(
        this.#db,
        `SELECT wanted.key AS place, task_defs.definition FROM json_each(?) AS wanted JOIN task_defs ON task_defs.name = wanted.value`,
        missing,
        missing,
        (row: PlacedRow & { definition: string }) => JSON.parse(row.definition) as TaskDef,
      ),
    );
    const found = new Map<string, TaskDef>();
    for (const name of names) {
      const taskDef = loaded.get(name);
      if (taskDef) found.set(name, taskDef);
    }
    return found;
  }

  /**
   * What this isolate knows now of the task definition named `name`, without reading D1: it, null when none is
   * registered, undefined when it has not been read within the cache's time (or was changed here since).
   */
  static known(name: string): TaskDef | null | undefined {
    return TaskDefRepository.#cache.get(name);
  }

  /** The task definition of that name, or null. */
  async find(name: string): Promise<TaskDef | null> {
    return (await this.findMany([name])).get(name) ?? null;
  }

  /**
   * As {@link find}, but as D1 holds it now (cached for the starts after it), as `DefinitionRepository.findCurrent`
   * reads a workflow definition: its GET answers a definition saved or deleted through another isolate at once.
   */
  async findCurrent(name: string): Promise<TaskDef | null> {
    TaskDefRepository.#cache.delete(name);
    return this.find(name);
  }

  /**
   * Every task definition (of those holding tag `tagged`, when given; of the names `visible` lets through, see
   * `listedDefinitionNames`), by name: at most {@link MAX_LISTING_CHARS} of them (a 413 beyond, see {@link boundedListing}).
   * `namesOnly`: each as `{name}` alone, the definitions not read (the names a client reads one at a time past the bound).
   */
  async list(tagged?: { key: string; value?: string | undefined }, visible?: readonly NameFilter[], namesOnly?: false): Promise<TaskDef[]>;
  async list(tagged: { key: string; value?: string | undefined } | undefined, visible: readonly NameFilter[], namesOnly: true): Promise<Array<{ name: string }>>;
  async list(tagged?: { key: string; value?: string | undefined }, visible: readonly NameFilter[] = [], namesOnly = false): Promise<Array<TaskDef | { name: string }>> {
    const where = whereEvery([...(tagged === undefined ? [] : [TagRepository.holdingCondition("TASK_DEF", tagged)]), ...namesLetThrough("name", visible)]);
    const listed = namesOnly ? "json_object('name', name)" : "definition";
    const rows = await boundedListing<{ definition: string }>(
      this.#db,
      `SELECT name, ${listed} AS definition, length(${listed}) AS listed_chars FROM task_defs ${where.sql}`,
      "listed.name",
      where.binds,
      (chars) =>
        `The task definitions come to ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; ask for fewer: tagKey= (those holding a tag), or their names (short=true) and read them one at a time (GET /api/metadata/taskdefs/{name})`,
    );
    return rows.map((row) => JSON.parse(row.definition) as TaskDef | { name: string });
  }

  /**
   * Creates or replaces task definitions in one atomic batch, `alongside` statements included (their tags). A replaced one keeps its createTime
   * and createdBy (as a replaced workflow definition does); its updateTime and updatedBy change. `by`: the user saving them.
   * Answers each one's stored updateTime, by name: later than the one it replaced, whatever the saving isolate's clock
   * (see `TaskLimit.resize`, which keeps the limits of the latest updateTime it has seen).
   */
  async save(taskDefs: readonly TaskDef[], alongside: readonly D1PreparedStatement[] = [], by?: string): Promise<Map<string, number>> {
    const now = Date.now();
    const author = by === undefined ? {} : { createdBy: by, updatedBy: by };
    // A replaced definition keeps when and by whom (when that was recorded) it was created. Its updateTime follows the
    // one it replaced even when this isolate's clock is behind the one that saved that (or this save's time was taken
    // before the other's but committed after): the order of updateTimes is the order in which D1 stored them.
    const updated = `MAX(excluded.update_time, task_defs.update_time + 1)`;
    // A new one (none of the name stored) follows the deletion of the name's last one, which its limit object was told.
    const first = `MAX(?3, COALESCE((SELECT deleted_time FROM task_def_deletions WHERE name = ?1), 0) + 1)`;
    const statement = `INSERT INTO task_defs (name, definition, create_time, update_time) VALUES (?1, json_set(?2, '$.updateTime', ${first}), ?3, ${first})
      ON CONFLICT (name) DO UPDATE SET
        definition = json_set(excluded.definition, '$.createTime', task_defs.create_time,
          '$.createdBy', COALESCE(json_extract(task_defs.definition, '$.createdBy'), json_extract(excluded.definition, '$.createdBy')),
          '$.updateTime', ${updated}),
        update_time = ${updated}
      RETURNING name, update_time`;
    try {
      const results = await this.#db.batch<{ name: string; update_time: number }>([
        ...taskDefs.map((taskDef) => this.#db.prepare(statement).bind(taskDef.name, JSON.stringify({ ...taskDef, ...author, createTime: now, updateTime: now }), now)),
        ...alongside,
      ]);
      return new Map(results.slice(0, taskDefs.length).flatMap((result) => result.results.map((row) => [row.name, row.update_time] as const)));
    } finally {
      TaskDefRepository.#invalidate(taskDefs.map((taskDef) => taskDef.name));
    }
  }

  /**
   * Deletes one, and its tags; answers the time of the deletion, or undefined when it did not exist: `deletedAt` (taken
   * before the call), or just after the deleted definition's updateTime when that is later (see `TaskLimit.resize`).
   * Recorded with the name, so that a definition registered again under it takes an updateTime after it (see {@link save}).
   */
  async delete(name: string, deletedAt: number): Promise<number | undefined> {
    const [recorded] = await this.#db.batch<{ deleted_time: number }>([
      this.#db
        .prepare(
          `INSERT INTO task_def_deletions (name, deleted_time) SELECT name, MAX(?2, update_time + 1) FROM task_defs WHERE name = ?1
           ON CONFLICT (name) DO UPDATE SET deleted_time = excluded.deleted_time RETURNING deleted_time`,
        )
        .bind(name, deletedAt),
      this.#db.prepare(`DELETE FROM task_defs WHERE name = ?`).bind(name),
      this.#db.prepare(`DELETE FROM metadata_tags WHERE target_type = 'TASK_DEF' AND target_name = ?`).bind(name),
    ]);
    TaskDefRepository.#invalidate([name]);
    return recorded!.results[0]?.deleted_time;
  }

  static #invalidate(names: readonly string[]): void {
    // A registration may bring tags, a deletion take them away: what tag grants cover changed too.
    forgetTaggedDefinitions();
    for (const name of names) TaskDefRepository.#cache.delete(name);
  }
}

/**
 * The definition an execution runs: `definition` with the registered task definitions its tasks follow
 * copied in (see {@link withRegisteredTaskDefs}), the schemas those and its `outputSchema` enforce (see
 * `WorkflowDef.schemas`), and its SUB_WORKFLOW children named without a version pinned to their latest (see
 * `withChildVersions`).
 */
export async function withTaskDefs(db: D1Database, definition: WorkflowDef): Promise<WorkflowDef> {
  const names = registeredTaskDefNames(definition);
  // Read of the definition as given, which the repository's cache keeps: found once per definition.
  const children = unversionedChildNames(definition);
  const withDefs = names.length === 0 ? definition : withRegisteredTaskDefs(definition, await new TaskDefRepository(db).findMany(names));
  return withKeptSchemas(db, await withPinnedChildren(db, withDefs, children));
}

/**
 * `definition` with its unversioned `children`'s latest versions (a child not registered stays unversioned: its start
 * fails as it would).
 */
async function withPinnedChildren(db: D1Database, definition: WorkflowDef, children: readonly string[]): Promise<WorkflowDef> {
  if (children.length === 0) return definition;
  // One D1 statement for them all (those not cached), however many children there are.
  const found = await new DefinitionRepository(db).findLatestMany(children);
  return withChildVersions(definition, new Map([...found].map(([name, child]) => [name, child.version])));
}
