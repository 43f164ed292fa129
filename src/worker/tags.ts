import { boundedListing, MAX_LISTING_CHARS, namesLetThrough, whereEvery, type ListingCondition } from "./bounded-listing";
import type { NameFilter } from "./auth/permissions";
import { forgetTaggedDefinitions } from "./auth/tag-grants";
import * as v from "valibot";
import { parseOrThrow, requestObject } from "./schemas";
import { validationError } from "./http/errors";
import { holdsLoneSurrogate, LONE_SURROGATE_MESSAGE } from "../engine/http-syntax";

/** Most tags one thing (a definition, a schedule, an event handler) holds. */
export const MAX_TAGS_PER_TARGET = 100;
/** Longest tag key or value, in characters. */
export const MAX_TAG_LENGTH = 256;

/**
 * What tags are put on, by name: a workflow definition (all its versions), a task definition, a schedule, an event
 * handler, a secret, an environment variable.
 */
export interface TagTarget {
  type: "WORKFLOW_DEF" | "TASK_DEF" | "SCHEDULE" | "EVENT_HANDLER" | "SECRET" | "ENV_VARIABLE";
  name: string;
}

/** The table holding what each kind of target names (by its `name` column). */
const TARGET_TABLES: Record<TagTarget["type"], string> = {
  WORKFLOW_DEF: "workflow_defs",
  TASK_DEF: "task_defs",
  SCHEDULE: "schedules",
  EVENT_HANDLER: "event_handlers",
  SECRET: "secrets",
  ENV_VARIABLE: "environment_variables",
};

/** Orkes' resource types of `GET /api/metadata/tags/resources` (its ResourceType names). */
export const TAGGED_RESOURCE_TYPES = [
  "WORKFLOW_DEF",
  "TASK_DEF",
  "WORKFLOW_SCHEDULE",
  "EVENT_HANDLER",
  "APPLICATION",
  "SECRET_NAME",
  "ENV_VARIABLE",
  "INTEGRATION_PROVIDER",
  "PROMPT",
  "USER_FORM_TEMPLATE",
  "WEBHOOK",
  "API_GATEWAY_SERVICE",
  "AUTH_CONFIG",
] as const;
/** One of {@link TAGGED_RESOURCE_TYPES}. */
export type TaggedResourceType = (typeof TAGGED_RESOURCE_TYPES)[number];

/** Those of Orkes' resource types whose tags `metadata_tags` holds, by the target type it holds them under. */
const METADATA_TAG_TYPES: Partial<Record<TaggedResourceType, TagTarget["type"]>> = {
  WORKFLOW_DEF: "WORKFLOW_DEF",
  TASK_DEF: "TASK_DEF",
  WORKFLOW_SCHEDULE: "SCHEDULE",
  EVENT_HANDLER: "EVENT_HANDLER",
  SECRET_NAME: "SECRET",
  ENV_VARIABLE: "ENV_VARIABLE",
};

/** Most things one `GET /api/metadata/tags/resources` answers (as the schedule and webhook listings). */
export const MAX_TAGGED_RESOURCES = 1000;

/** A thing holding a tag, as Orkes' `GET /api/metadata/tags/resources` shows it. */
export interface TaggedResource {
  id: string;
  displayName: string;
}

/** A tag as stored. */
export interface Tag {
  key: string;
  value: string;
}

/**
 * A tag's key or value: a string, or a number or boolean taken as its text, as Jackson reads a JSON scalar into the
 * String fields of Orkes' Tag. The Python client's `set_workflow_rate_limit` sends its `RATE_LIMIT` tag's value as a
 * number, which a string-only schema refused. Objects, arrays and null stay refused, as Jackson refuses them.
 */
const tagText = v.pipe(
  v.union([v.string(), v.pipe(v.number(), v.finite()), v.boolean()], "must be a string"),
  v.transform((value) => String(value)),
);

/** A tag's text must be well-formed: a tag is looked up by its key and value in a query (`?tagKey=`), which cannot carry half a character. */
const wellFormed = v.check((text: string) => !holdsLoneSurrogate(text), LONE_SURROGATE_MESSAGE);

/** Orkes' Tag (`{key, value}`; its deprecated `type` is accepted and ignored). */
export const TagSchema = requestObject({
  key: v.pipe(tagText, v.minLength(1, "must not be empty"), v.maxLength(MAX_TAG_LENGTH, `must be at most ${MAX_TAG_LENGTH} characters`), wellFormed),
  value: v.pipe(tagText, v.maxLength(MAX_TAG_LENGTH, `must be at most ${MAX_TAG_LENGTH} characters`), wellFormed),
});

/** A list of tags (`PUT …/tags`, a definition's `tags`); a key given twice keeps its last value. */
export const TagListSchema = v.pipe(
  v.array(TagSchema, "must be an array of tags ({key, value})"),
  v.maxLength(MAX_TAGS_PER_TARGET, `must hold at most ${MAX_TAGS_PER_TARGET} tags`),
  v.transform((tags: Tag[]) => distinctTags(tags)),
);

/** `tags` with one value per key, the last given (as Orkes keeps them: adding a key it has replaces its value). */
function distinctTags(tags: readonly Tag[]): Tag[] {
  const byKey = new Map<string, Tag>();
  for (const tag of tags) byKey.set(tag.key, { key: tag.key, value: tag.value });
  return [...byKey.values()];
}

/**
 * The `tags` a definition is registered with (Orkes' ExtendedWorkflowDef and ExtendedTaskDef) and whether they replace
 * the stored ones (`overwriteTags`, true unless false) or are added to them; undefined when it gives none. `path` is
 * where the definition sits in the body, for the error.
 */
export function registeredTags(input: unknown, path: string): { tags: Tag[]; overwrite: boolean } | undefined {
  if (typeof input !== "object" || input === null || !("tags" in input) || input.tags === undefined || input.tags === null) return undefined;
  const tags = parseOrThrow(TagListSchema, input.tags, "definition tags", path === "" ? "tags" : `${path}.tags`);
  const overwrite = !("overwriteTags" in input) || input.overwriteTags !== false;
  return { tags, overwrite };
}

/**
 * Tags of workflow and task definitions, schedules and event handlers, in D1. Writes that go with a definition's own
 * are statements the definition's repository adds to its batch, so a definition and its tags are stored, or refused,
 * together.
 */
export class TagRepository {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /** The tags of `target`, by key. */
  async list(target: TagTarget): Promise<Tag[]> {
    const { results } = await this.#db
      .prepare(`SELECT tag_key, tag_value FROM metadata_tags WHERE target_type = ? AND target_name = ? ORDER BY tag_key, tag_value`)
      .bind(target.type, target.name)
      .all<{ tag_key: string; tag_value: string }>();
    return results.map((row) => ({ key: row.tag_key, value: row.tag_value }));
  }

  /**
   * Every tag a definition, schedule, event handler or webhook holds (a webhook keeps its own in its config), each once,
   * by key then value; not secrets' (those are for their admins) nor environment variables' (read with the variables).
   */
  async all(): Promise<Tag[]> {
    // Bounded (a 413 beyond, see boundedListing): each target holds at most 100 tags, but nothing caps how many targets
    // a writer of definitions under a prefix of names registers and tags.
    const results = await boundedListing<{ tag_key: string; tag_value: string }>(
      this.#db,
      `SELECT tag_key, tag_value, length(tag_key) + length(tag_value) AS listed_chars FROM (
         SELECT tag_key, tag_value FROM metadata_tags WHERE target_type NOT IN ('SECRET', 'ENV_VARIABLE')
         UNION SELECT json_extract(tag.value, '$.key') AS tag_key, json_extract(tag.value, '$.value') AS tag_value FROM webhooks, json_each(webhooks.config, '$.tags') AS tag)`,
      "listed.tag_key, listed.tag_value",
      [],
      (chars) => `The tags in use come to ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; read a definition's own: GET /api/metadata/workflow/{name}/tags, GET /api/metadata/task/{taskName}/tags`,
    );
    return results.map((row) => ({ key: row.tag_key, value: row.tag_value }));
  }

  /** Adds `tags` to those of `target` (refused past {@link MAX_TAGS_PER_TARGET}); true unless `target` is gone. */
  async add(target: TagTarget, tags: readonly Tag[]): Promise<boolean> {
    return this.#run(target, await this.#addStatements(target, tags), tags);
  }

  /**
   * The statements adding `tags` to those `target` holds now; refused (400) when that would make more than
   * {@link MAX_TAGS_PER_TARGET}. The count read here answers most refusals before anything is written; the statements
   * count again as they insert (see {@link #cappedInsertStatements}), since another addition may land in between.
   */
  async #addStatements(target: TagTarget, tags: readonly Tag[]): Promise<D1PreparedStatement[]> {
    const after = distinctTags([...(await this.list(target)), ...tags]);
    if (after.length > MAX_TAGS_PER_TARGET) throw tooMany(after.length);
    return this.#cappedInsertStatements(target, tags);
  }

  /**
   * Like {@link insertStatements}, but each insert counts the tags `target` would hold with all of `tags` (those it holds
   * under other keys, plus these) and, past {@link MAX_TAGS_PER_TARGET}, writes a NULL value, which the column refuses:
   * the batch fails as a whole (D1 runs a batch as one SQL transaction) and {@link tagLimitRefusal} makes that a 400.
   * A count read before the batch is no guard: D1 has no transaction across requests, so two additions each finding
   * room for theirs both got in. Every insert of the batch counts the same (the keys it adds are left out of the
   * count), so they are all written or none.
   */
  #cappedInsertStatements(target: TagTarget, tags: readonly Tag[]): D1PreparedStatement[] {
    const distinct = distinctTags(tags);
    const keys = JSON.stringify(distinct.map((tag) => tag.key));
    const exists = `EXISTS (SELECT 1 FROM ${TARGET_TABLES[target.type]} WHERE name = ?2)`;
    const held = `(SELECT COUNT(*) FROM metadata_tags WHERE target_type = ?1 AND target_name = ?2 AND tag_key NOT IN (SELECT value FROM json_each(?5)))`;
    return distinct.map((tag) =>
      this.#db
        .prepare(
          `INSERT INTO metadata_tags (target_type, target_name, tag_key, tag_value)
           SELECT ?1, ?2, ?3, CASE WHEN ${held} + json_array_length(?5) <= ${MAX_TAGS_PER_TARGET} THEN ?4 END WHERE ${exists}
           ON CONFLICT (target_type, target_name, tag_key) DO UPDATE SET tag_value = excluded.tag_value`,
        )
        .bind(target.type, target.name, tag.key, tag.value, keys),
    );
  }

  /** Replaces the tags of `target` by `tags`; true unless `target` is gone. */
  async set(target: TagTarget, tags: readonly Tag[]): Promise<boolean> {
    return this.#run(target, [this.deleteStatement(target), ...this.insertStatements(target, tags)]);
  }

  /** Removes each of `tags` that `target` holds (key and value); how many it held, or undefined when `target` is gone. */
  async remove(target: TagTarget, tags: readonly Tag[]): Promise<number | undefined> {
    if (!(await this.exists(target))) return undefined;
    if (tags.length === 0) return 0;
    const results = await this.#db.batch(
      tags.map((tag) =>
        this.#db.prepare(`DELETE FROM metadata_tags WHERE target_type = ? AND target_name = ? AND tag_key = ? AND tag_value = ?`).bind(target.type, target.name, tag.key, tag.value),
      ),
    );
    forgetTaggedDefinitions();
    return results.reduce((removed, result) => removed + result.meta.changes, 0);
  }

  /** The names of the targets of `type` holding tag `tag` (any value of its key when `value` is undefined), by name. */
  async holders(type: TagTarget["type"], tag: { key: string; value?: string | undefined }): Promise<string[]> {
    const holding = TagRepository.#holdingRows(type, tag);
    const statement = this.#db.prepare(`SELECT target_name FROM metadata_tags WHERE ${holding.sql} ORDER BY target_name`).bind(...holding.binds);
    return (await statement.all<{ target_name: string }>()).results.map((row) => row.target_name);
  }

  /**
   * The SQL condition (on a table's `name` column) keeping the targets of `type` holding `tag` (any value when it has
   * none), with its parameters: for a listing filtered by tag to read only those targets.
   */
  static holdingCondition(type: TagTarget["type"], tag: { key: string; value?: string | undefined }): { sql: string; binds: string[] } {
    const holding = TagRepository.#holdingRows(type, tag);
    return { sql: `name IN (SELECT target_name FROM metadata_tags WHERE ${holding.sql})`, binds: holding.binds };
  }

  /** The condition on `metadata_tags` rows of the targets of `type` holding `tag` (any value when it has none). */
  static #holdingRows(type: TagTarget["type"], tag: { key: string; value?: string | undefined }): { sql: string; binds: string[] } {
    return tag.value === undefined
      ? { sql: "target_type = ? AND tag_key = ?", binds: [type, tag.key] }
      : { sql: "target_type = ? AND tag_key = ? AND tag_value = ?", binds: [type, tag.key, tag.value] };
  }

  /**
   * The things of Orkes' `resourceType` holding tag `key`=`value` (`GET /api/metadata/tags/resources`), by name, at most
   * {@link MAX_TAGGED_RESOURCES} of those every one of `visible` lets through: `id` names each as its routes do (a
   * webhook by its id, an application by its id, a form by `name/version`), `displayName` is its name. `visible` is on
   * the name a read right goes by: a schedule's workflow's (see `schedulesReadable`), anything else's own. Filtered
   * before the bound, in D1, so that the things a caller may not read neither take the page nor are read. Kinds this
   * service has none of answer none.
   */
  async resources(resourceType: TaggedResourceType, tag: Tag, visible: readonly NameFilter[] = []): Promise<TaggedResource[]> {
    const type = METADATA_TAG_TYPES[resourceType];
    const holding = (tags: string) => `EXISTS (SELECT 1 FROM json_each(${tags}) AS tag WHERE json_extract(tag.value, '$.key') = ? AND json_extract(tag.value, '$.value') = ?)`;
    let select: ListingCondition;
    if (resourceType === "WORKFLOW_SCHEDULE") {
      // The join reads the workflow each schedule starts: its read right goes by that name.
      const readable = whereEvery([{ sql: "held.target_type = 'SCHEDULE' AND held.tag_key = ? AND held.tag_value = ?", binds: [tag.key, tag.value] }, ...namesLetThrough("schedules.workflow_name", visible)]);
      select = { sql: `SELECT held.target_name AS id, held.target_name AS displayName FROM metadata_tags AS held JOIN schedules ON schedules.name = held.target_name ${readable.sql} ORDER BY held.target_name`, binds: readable.binds };
    } else if (type !== undefined) {
      const readable = whereEvery([{ sql: "target_type = ? AND tag_key = ? AND tag_value = ?", binds: [type, tag.key, tag.value] }, ...namesLetThrough("target_name", visible)]);
      select = { sql: `SELECT target_name AS id, target_name AS displayName FROM metadata_tags ${readable.sql} ORDER BY target_name`, binds: readable.binds };
    } else {
      const table = resourceType === "WEBHOOK" ? { id: "id", tags: "webhooks.config, '$.tags'", from: "webhooks", order: "name, id" }
        : resourceType === "APPLICATION" ? { id: "id", tags: "applications.tags", from: "applications", order: "name, id" }
        : resourceType === "USER_FORM_TEMPLATE" ? { id: "name || '/' || version", tags: "human_templates.tags", from: "human_templates", order: "name, version" }
        : undefined;
      if (table === undefined) return [];
      const readable = whereEvery([{ sql: holding(table.tags), binds: [tag.key, tag.value] }, ...namesLetThrough("name", visible)]);
      select = { sql: `SELECT ${table.id} AS id, name AS displayName FROM ${table.from} ${readable.sql} ORDER BY ${table.order}`, binds: readable.binds };
    }
    return (await this.#db.prepare(`${select.sql} LIMIT ${MAX_TAGGED_RESOURCES}`).bind(...select.binds).all<TaggedResource>()).results;
  }

  /** Every tag of every target of `type` (or of those `names`), by target name. */
  async byName(type: TagTarget["type"], names?: readonly string[]): Promise<Map<string, Tag[]>> {
    const statement =
      names === undefined
        ? this.#db.prepare(`SELECT target_name, tag_key, tag_value FROM metadata_tags WHERE target_type = ? ORDER BY target_name, tag_key`).bind(type)
        : this.#db
            .prepare(`SELECT target_name, tag_key, tag_value FROM metadata_tags WHERE target_type = ? AND target_name IN (SELECT value FROM json_each(?)) ORDER BY target_name, tag_key`)
            .bind(type, JSON.stringify(names));
    const { results } = await statement.all<{ target_name: string; tag_key: string; tag_value: string }>();
    const tags = new Map<string, Tag[]>();
    for (const row of results) {
      const list = tags.get(row.target_name) ?? [];
      list.push({ key: row.tag_key, value: row.tag_value });
      tags.set(row.target_name, list);
    }
    return tags;
  }

  /**
   * The statements that store the `tags` a definition of `target` is registered with (see {@link registeredTags}), to
   * run in the batch that stores the definition: they replace its tags, or are added to them (refused past
   * {@link MAX_TAGS_PER_TARGET}).
   */
  async registrationStatements(target: TagTarget, registered: { tags: Tag[]; overwrite: boolean } | undefined): Promise<D1PreparedStatement[]> {
    if (registered === undefined) return [];
    if (registered.overwrite) return [this.deleteStatement(target), ...this.insertStatements(target, registered.tags)];
    return this.#addStatements(target, registered.tags);
  }

  /**
   * Statements that add `tags` to `target`, each only while the definition exists: a definition deleted meanwhile leaves
   * no tags behind.
   */
  insertStatements(target: TagTarget, tags: readonly Tag[]): D1PreparedStatement[] {
    const exists = `EXISTS (SELECT 1 FROM ${TARGET_TABLES[target.type]} WHERE name = ?2)`;
    return distinctTags(tags).map((tag) =>
      this.#db
        .prepare(
          `INSERT INTO metadata_tags (target_type, target_name, tag_key, tag_value) SELECT ?1, ?2, ?3, ?4 WHERE ${exists}
           ON CONFLICT (target_type, target_name, tag_key) DO UPDATE SET tag_value = excluded.tag_value`,
        )
        .bind(target.type, target.name, tag.key, tag.value),
    );
  }

  /** The statement that removes every tag of `target`. */
  deleteStatement(target: TagTarget): D1PreparedStatement {
    return this.#db.prepare(`DELETE FROM metadata_tags WHERE target_type = ? AND target_name = ?`).bind(target.type, target.name);
  }

  /** True while a definition of `target` is registered (for a workflow, any version of its name). */
  async exists(target: TagTarget): Promise<boolean> {
    return (await this.#db.prepare(`SELECT 1 AS found FROM ${TARGET_TABLES[target.type]} WHERE name = ? LIMIT 1`).bind(target.name).first<{ found: number }>()) !== null;
  }

  /**
   * Checks that `target` exists, then runs `statements` in one batch; false when it does not exist. An addition refused
   * by its capped inserts (see {@link #cappedInsertStatements}) is a 400 counting what it would have made.
   */
  async #run(target: TagTarget, statements: D1PreparedStatement[], adding: readonly Tag[] = []): Promise<boolean> {
    if (!(await this.exists(target))) return false;
    try {
      if (statements.length > 0) await this.#db.batch(statements);
    } catch (error) {
      if (!isOverTagLimit(error)) throw error;
      throw tooMany(distinctTags([...(await this.list(target)), ...adding]).length);
    }
    forgetTaggedDefinitions();
    return true;
  }
}

function tooMany(count?: number) {
  const made = count === undefined ? `more than ${MAX_TAGS_PER_TARGET}` : String(count);
  return validationError("Too many tags", [{ path: "(body)", message: `one thing holds at most ${MAX_TAGS_PER_TARGET} tags; this would make ${made}` }]);
}

/** Whether `error` is D1 refusing the NULL a capped tag insert writes past the limit (see `cappedInsertStatements`). */
function isOverTagLimit(error: unknown): boolean {
  return String(error).includes("NOT NULL constraint failed: metadata_tags.tag_value");
}

/**
 * The 400 of a batch refused by capped tag inserts (a definition registered with `overwriteTags: false` while another
 * addition of tags landed); undefined for any other error. Tag values are checked to be strings before any write, so
 * only the cap writes a NULL one.
 */
export function tagLimitRefusal(error: unknown): ReturnType<typeof validationError> | undefined {
  return isOverTagLimit(error) ? tooMany() : undefined;
}

/**
 * Orkes' listing options of definitions (`getAllWorkflows`, `getTaskDefs`): `tagKey` (with `tagValue`, that value
 * only) keeps the definitions holding that tag, and `metadata=true` shows each one's `tags`. A listing filtered by tag
 * shows them too, `metadata=true` or not, as Orkes answers one (its docs' examples of
 * `GET /api/metadata/workflow?metadata=false&tagKey=api&tagValue=doc` and of `/api/metadata/taskdefs` carry `tags`).
 * Applied to `definitions` of `type`, named by their `name`.
 */
export async function withTagOptions<T extends { name: string }>(db: D1Database, type: TagTarget["type"], definitions: T[], options: { tagKey?: string | undefined; tagValue?: string | undefined; metadata: boolean }): Promise<Array<T & { tags?: Tag[] }>> {
  if (options.tagKey === undefined && !options.metadata) return definitions;
  const repository = new TagRepository(db);
  const holding = options.tagKey === undefined ? undefined : new Set(await repository.holders(type, { key: options.tagKey, value: options.tagValue }));
  const kept = holding === undefined ? definitions : definitions.filter((definition) => holding.has(definition.name));
  // Filtered by tag, only the tags of the names holding it are read.
  const tags = await repository.byName(type, holding === undefined ? undefined : [...holding]);
  return kept.map((definition) => ({ ...definition, tags: tags.get(definition.name) ?? [] }));
}
