/**
 * User forms (Orkes' human task templates) in D1 (`human_templates`): a JSON schema of the data a HUMAN task's form
 * collects (checked when the form is submitted) and the UI layout it is shown with, by name and version.
 */
import type { JsonObject } from "../engine/model";
import type { FormReference } from "../engine/tasks/human/settings";
import { validationError } from "./http/errors";
import { MAX_TEMPLATE_TAGS, type HumanTemplateBody } from "./human-schemas";
import { schemaProblem } from "./json-schemas";
import { boundedListing, MAX_LISTING_CHARS } from "./bounded-listing";

/** A saved user form (Orkes' HumanTaskTemplate). */
export interface HumanTemplate {
  name: string;
  version: number;
  jsonSchema: JsonObject;
  templateUI: JsonObject;
  tags: Array<{ key: string; value: string }>;
  createdBy?: string;
  updatedBy?: string;
  createTime: number;
  updateTime: number;
}

type TemplateRow = {
  name: string;
  version: number;
  json_schema: string;
  template_ui: string;
  tags: string;
  created_by: string | null;
  updated_by: string | null;
  create_time: number;
  update_time: number;
};

function fromRow(row: TemplateRow): HumanTemplate {
  const template: HumanTemplate = {
    name: row.name,
    version: row.version,
    jsonSchema: JSON.parse(row.json_schema) as JsonObject,
    templateUI: JSON.parse(row.template_ui) as JsonObject,
    tags: JSON.parse(row.tags) as HumanTemplate["tags"],
    createTime: row.create_time,
    updateTime: row.update_time,
  };
  if (row.created_by !== null) template.createdBy = row.created_by;
  if (row.updated_by !== null) template.updatedBy = row.updated_by;
  return template;
}

/** Most forms (all versions) one listing shows. */
const MAX_LISTED = 1000;

/** User forms in D1. */
export class HumanTemplateRepository {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /**
   * Every form (all versions), one form's versions (`name`), or one version; by name, then the latest version first (as
   * Orkes lists them); the first {@link MAX_LISTED}, within {@link MAX_LISTING_CHARS} (a 413 beyond, see {@link boundedListing}).
   */
  async list(name?: string, version?: number): Promise<HumanTemplate[]> {
    const where = name === undefined ? "" : version === undefined ? "WHERE name = ?1" : "WHERE name = ?1 AND version = ?2";
    const binds = name === undefined ? [] : version === undefined ? [name] : [name, version];
    const rows = await boundedListing<TemplateRow>(
      this.#db,
      `SELECT *, length(json_schema) + length(template_ui) + length(tags) AS listed_chars FROM human_templates ${where} ORDER BY name, version DESC LIMIT ${MAX_LISTED}`,
      "listed.name, listed.version DESC",
      binds,
      (chars) => `The user forms listed come to ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; ask for fewer: name= (one form's versions), or name= and version= (one version)`,
    );
    return rows.map(fromRow);
  }

  /** Version `version` of form `name`. */
  async get(name: string, version: number): Promise<HumanTemplate | undefined> {
    const row = await this.#db.prepare(`SELECT * FROM human_templates WHERE name = ? AND version = ?`).bind(name, version).first<TemplateRow>();
    return row === null ? undefined : fromRow(row);
  }

  /** The form a HUMAN task names: that version, or the latest when it names none (or 0). */
  async forForm(form: FormReference): Promise<HumanTemplate | undefined> {
    if (form.version !== undefined) return this.get(form.name, form.version);
    const row = await this.#db.prepare(`SELECT * FROM human_templates WHERE name = ? ORDER BY version DESC LIMIT 1`).bind(form.name).first<TemplateRow>();
    return row === null ? undefined : fromRow(row);
  }

  /**
   * Saves a form: with `newVersion`, as one more version than its latest, whatever version it names (the clients' form
   * type requires a version, so the JavaScript client's `registerTemplate(form, true)` always names one; a workflow
   * definition or schema saved with `newVersion` takes the next version alike); else as the version it names, created
   * or replaced; else in place of its latest (version 1 when there is none). 400 for a JSON schema this service cannot
   * check submissions against.
   */
  async save(body: HumanTemplateBody, newVersion: boolean, by: string): Promise<HumanTemplate> {
    return (await this.saveAll([body], newVersion, by))[0]!;
  }

  /** Saves `bodies` (see {@link save}) in one transaction: all of them, or none when one is refused. */
  async saveAll(bodies: readonly HumanTemplateBody[], newVersion: boolean, by: string): Promise<HumanTemplate[]> {
    const problems = bodies.flatMap((body, index) => {
      const problem = schemaProblem(body.jsonSchema);
      return problem === undefined ? [] : [{ path: bodies.length === 1 ? "jsonSchema" : `[${index}].jsonSchema`, message: problem }];
    });
    if (problems.length > 0) throw validationError("Invalid user form", problems);
    const now = Date.now();
    const statements = bodies.map((body) => {
      // The version is decided in the statement itself, so that two saves of a new version cannot take the same one.
      const version =
        !newVersion && body.version !== undefined && body.version !== null
          ? "?2"
          : `(SELECT COALESCE(MAX(version), 0) + ${newVersion ? 1 : 0} FROM human_templates WHERE name = ?1)`;
      return this.#db
        .prepare(
          `INSERT INTO human_templates (name, version, json_schema, template_ui, tags, created_by, updated_by, create_time, update_time)
           VALUES (?1, MAX(${version}, 1), ?3, ?4, ?5, ?6, ?6, ?7, ?7)
           ON CONFLICT (name, version) DO UPDATE SET json_schema = excluded.json_schema, template_ui = excluded.template_ui, tags = excluded.tags,
             updated_by = excluded.updated_by, update_time = excluded.update_time
           RETURNING *`,
        )
        .bind(body.name, body.version ?? 0, JSON.stringify(body.jsonSchema), JSON.stringify(body.templateUI ?? {}), JSON.stringify(body.tags ?? []), by, now);
    });
    const results = await this.#db.batch<TemplateRow>(statements);
    return results.map((result) => fromRow(result.results[0]!));
  }

  /** The tags of form `name` (its latest version's, as a HUMAN task naming no version shows); undefined when none is saved. */
  async tagsOf(name: string): Promise<HumanTemplate["tags"] | undefined> {
    return (await this.forForm({ name }))?.tags;
  }

  /**
   * Adds `tags` to every version of form `name` (Orkes keeps a form's tags by name): a key a version holds takes the
   * value given, as Orkes' PUT does, the last one given when a key is named twice. False when no version is saved; a
   * 400 when a version would hold more than {@link MAX_TEMPLATE_TAGS}, changing none. A version already holding every
   * tag given is not written (it keeps its updater and update time). One statement, so every version
   * is changed or none, whatever else writes meanwhile.
   */
  async addTags(name: string, tags: HumanTemplate["tags"], by: string): Promise<boolean> {
    // Nothing given changes nothing: no version is written, so none shows a new updater or update time.
    if (tags.length === 0) return (await this.tagsOf(name)) !== undefined;
    const added = JSON.stringify([...new Map(tags.map((tag) => [tag.key, tag])).values()]);
    // The tags of `held` kept: those of keys not given.
    const kept = (held: string) => `FROM json_each(${held}) WHERE json_extract(value, '$.key') NOT IN (SELECT json_extract(value, '$.key') FROM json_each(?2))`;
    // Whether the version holds every given tag already: then adding them changes nothing, and it is not written.
    const holdsAll = (held: string) =>
      `NOT EXISTS (SELECT 1 FROM json_each(?2) AS given WHERE NOT EXISTS (SELECT 1 FROM json_each(${held}) AS had WHERE json_extract(had.value, '$.key') = json_extract(given.value, '$.key') AND json_extract(had.value, '$.value') = json_extract(given.value, '$.value')))`;
    const result = await this.#db
      .prepare(
        `UPDATE human_templates SET tags = (SELECT json_group_array(json(value)) FROM (SELECT value ${kept("human_templates.tags")} UNION ALL SELECT value FROM json_each(?2))),
           updated_by = ?3, update_time = ?4
         WHERE name = ?1 AND NOT ${holdsAll("human_templates.tags")} AND NOT EXISTS (
           SELECT 1 FROM human_templates AS other WHERE other.name = ?1 AND (SELECT count(*) ${kept("other.tags")}) + json_array_length(?2) > ${MAX_TEMPLATE_TAGS})`,
      )
      .bind(name, added, by, Date.now())
      .run();
    if (result.meta.changes > 0) return true;
    if ((await this.tagsOf(name)) === undefined) return false;
    const lacking = await this.#db.prepare(`SELECT 1 FROM human_templates WHERE name = ?1 AND NOT ${holdsAll("human_templates.tags")} LIMIT 1`).bind(name, added).first();
    if (lacking === null) return true;
    throw validationError("Invalid tags", [{ path: "", message: `would give user form ${name} more than ${MAX_TEMPLATE_TAGS} tags (a version of it holds too many others): remove some first` }]);
  }

  /**
   * Removes `tags` (each by key and value) from every version of form `name`; false when no version is saved. Only the
   * versions holding one of them are written, so one that loses nothing keeps its updater and update time.
   */
  async removeTags(name: string, tags: HumanTemplate["tags"], by: string): Promise<boolean> {
    const gone = (held: string) =>
      `EXISTS (SELECT 1 FROM json_each(?2) AS gone WHERE json_extract(gone.value, '$.key') = json_extract(${held}.value, '$.key') AND json_extract(gone.value, '$.value') = json_extract(${held}.value, '$.value'))`;
    const result = await this.#db
      .prepare(
        `UPDATE human_templates SET tags = (
           SELECT json_group_array(json(held.value)) FROM json_each(human_templates.tags) AS held WHERE NOT ${gone("held")}),
           updated_by = ?3, update_time = ?4
         WHERE name = ?1 AND EXISTS (SELECT 1 FROM json_each(human_templates.tags) AS had WHERE ${gone("had")})`,
      )
      .bind(name, JSON.stringify(tags), by, Date.now())
      .run();
    return result.meta.changes > 0 || (await this.tagsOf(name)) !== undefined;
  }

  /** Deletes every version of form `name`; false when there was none. */
  async deleteAll(name: string): Promise<boolean> {
    const result = await this.#db.prepare(`DELETE FROM human_templates WHERE name = ?`).bind(name).run();
    return result.meta.changes > 0;
  }

  /** Deletes version `version` of form `name`; false when there was none. */
  async deleteVersion(name: string, version: number): Promise<boolean> {
    const result = await this.#db.prepare(`DELETE FROM human_templates WHERE name = ? AND version = ?`).bind(name, version).run();
    return result.meta.changes > 0;
  }
}
