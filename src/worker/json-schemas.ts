/**
 * Orkes' schema registry in D1 (`json_schemas`, `/api/schema`): the schemas definitions name, what a start reads of
 * them, and whether a schema saved is one this service can check (the checking itself is the engine's:
 * `src/engine/json-schema.ts`).
 */
import { Validator } from "@cfworker/json-schema";
import { keptSchemaReferences, schemaKey } from "../engine/json-schema";
import type { JsonObject, JsonValue, SchemaReference, WorkflowDef } from "../engine/model";
import { ApiError } from "./http/errors";
import { TtlCache, NAME_CACHE_MAX_KEY_LENGTH } from "./ttl-cache";
import { boundedListing, MAX_LISTING_CHARS } from "./bounded-listing";
import { valuesByPlace, type PlacedRow } from "./rows-by-place";

/** A registered schema (Orkes' SchemaDef): a JSON schema (`data`) by name and version. */
export interface SchemaDef {
  name: string;
  version: number;
  type: "JSON";
  data: JsonObject;
  externalRef?: string;
  createTime: number;
  updateTime: number;
  createdBy?: string;
  updatedBy?: string;
}

interface SchemaRow {
  name: string;
  version: number;
  type: string;
  data: string;
  external_ref: string | null;
  create_time: number;
  update_time: number;
  created_by: string | null;
  updated_by: string | null;
}

function fromRow(row: SchemaRow): SchemaDef {
  const schema: SchemaDef = { name: row.name, version: row.version, type: "JSON", data: JSON.parse(row.data) as JsonObject, createTime: row.create_time, updateTime: row.update_time };
  if (row.external_ref !== null) schema.externalRef = row.external_ref;
  if (row.created_by !== null) schema.createdBy = row.created_by;
  if (row.updated_by !== null) schema.updatedBy = row.updated_by;
  return schema;
}

/** How long a schema read for a start is reused by this isolate (as definitions are). */
const CACHE_TTL_MS = 2_000;

/** Orkes' schema registry in D1 (`json_schemas`). */
export class SchemaRepository {
  static readonly #cache = new TtlCache<SchemaDef | null>(CACHE_TTL_MS, { maxKeyLength: NAME_CACHE_MAX_KEY_LENGTH });
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /** The schema of that name and version (the latest without one), or null; cached briefly for starts. */
  async find(name: string, version?: number): Promise<SchemaDef | null> {
    return SchemaRepository.#cache.getOrLoad(`${name}\u0000${version ?? "latest"}`, async () => {
      const row =
        version === undefined
          ? await this.#db.prepare(`SELECT * FROM json_schemas WHERE name = ? ORDER BY version DESC LIMIT 1`).bind(name).first<SchemaRow>()
          : await this.#db.prepare(`SELECT * FROM json_schemas WHERE name = ? AND version = ?`).bind(name, version).first<SchemaRow>();
      return row === null ? null : fromRow(row);
    });
  }

  /**
   * The schemas `references` name, by {@link schemaKey}, each as {@link find} gives it (and cached with it): null for
   * one not registered. Those not cached are read by one D1 statement, whatever their number (the list is one bound
   * parameter, read by json_each), where a start read each with a statement of its own (Workers Free allows 50 an
   * invocation).
   */
  async findMany(references: readonly SchemaReference[]): Promise<Map<string, SchemaDef | null>> {
    const byCacheKey = new Map(references.map((reference) => [`${reference.name}\u0000${reference.version ?? "latest"}`, reference]));
    const cached = await SchemaRepository.#cache.getOrLoadMany([...byCacheKey.keys()], async (keys) => {
      const wanted = keys.map((key) => byCacheKey.get(key)!);
      // Each wanted one's row: its version, or the latest of its name without one (as find).
      return valuesByPlace(
        this.#db,
        `SELECT stored.*, wanted.key AS place FROM json_each(?) AS wanted JOIN json_schemas AS stored ON stored.name = json_extract(wanted.value, '$[0]') ` +
          `AND stored.version = COALESCE(json_extract(wanted.value, '$[1]'), (SELECT MAX(version) FROM json_schemas WHERE name = json_extract(wanted.value, '$[0]')))`,
        wanted.map((reference) => [reference.name, reference.version ?? null]),
        keys,
        (row: SchemaRow & PlacedRow) => fromRow(row),
      );
    });
    return new Map([...byCacheKey].map(([key, reference]) => [schemaKey(reference), cached.get(key) ?? null]));
  }

  /**
   * The schema, or a 404 naming what was asked for, as D1 holds it now (what it reads is cached for the starts after
   * it): its GET answers a version saved or deleted through another isolate at once, as a workflow definition's does
   * (see `DefinitionRepository.findCurrent`), where {@link find} may answer what this isolate read two seconds before.
   */
  async get(name: string, version?: number): Promise<SchemaDef> {
    SchemaRepository.#cache.delete(`${name}\u0000${version ?? "latest"}`);
    const schema = await this.find(name, version);
    if (schema === null) throw new ApiError(404, "NOT_FOUND", version === undefined ? `No schema named ${name}` : `No schema ${name} version ${version}`);
    return schema;
  }

  /**
   * Every schema, every version, by name then version: at most {@link MAX_LISTING_CHARS} of their bodies (a 413 beyond,
   * see {@link boundedListing}); `withoutData`, each with an empty body, which is then not read.
   */
  async list(withoutData = false): Promise<SchemaDef[]> {
    const data = withoutData ? "'{}'" : "data";
    const rows = await boundedListing<SchemaRow>(
      this.#db,
      `SELECT name, version, type, ${data} AS data, external_ref, create_time, update_time, created_by, updated_by, length(${data}) AS listed_chars FROM json_schemas`,
      "listed.name, listed.version",
      [],
      (chars) => `The schemas come to ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; ask for fewer: short=true (without their bodies), or GET /api/schema/{name} (one schema)`,
    );
    return rows.map(fromRow);
  }

  /**
   * Stores schemas in one batch: each under its version, or (`newVersion`) under the one after the latest of its
   * name. One stored again keeps its createTime.
   */
  async save(schemas: ReadonlyArray<{ name: string; version: number; data: JsonObject; externalRef?: string }>, newVersion: boolean, by: string | undefined): Promise<void> {
    const now = Date.now();
    try {
      await this.#db.batch(
        schemas.map((schema) =>
          this.#db
            .prepare(
              `INSERT INTO json_schemas (name, version, type, data, external_ref, create_time, update_time, created_by, updated_by)
               VALUES (?1, CASE WHEN ?6 THEN COALESCE((SELECT MAX(version) FROM json_schemas WHERE name = ?1), 0) + 1 ELSE ?7 END, 'JSON', ?2, ?3, ?4, ?4, ?5, ?5)
               ON CONFLICT (name, version) DO UPDATE SET data = excluded.data, external_ref = excluded.external_ref, update_time = excluded.update_time, updated_by = excluded.updated_by`,
            )
            .bind(schema.name, JSON.stringify(schema.data), schema.externalRef ?? null, now, by ?? null, newVersion ? 1 : 0, schema.version),
        ),
      );
    } finally {
      // Forgotten once the write is done (the reads under way too): cleared before it only, a read made while it ran
      // (a start's, a GET's) kept what it replaced for the cache's time.
      SchemaRepository.#cache.clear();
    }
  }

  /** Deletes one version, or every version of the name; a 404 when there was none. */
  async delete(name: string, version?: number): Promise<void> {
    const statement =
      version === undefined
        ? this.#db.prepare(`DELETE FROM json_schemas WHERE name = ?`).bind(name)
        : this.#db.prepare(`DELETE FROM json_schemas WHERE name = ? AND version = ?`).bind(name, version);
    // Forgotten once the deletion is done, as after a save.
    const result = await statement.run().finally(() => SchemaRepository.#cache.clear());
    if (result.meta.changes === 0) throw new ApiError(404, "NOT_FOUND", version === undefined ? `No schema named ${name}` : `No schema ${name} version ${version}`);
  }
}

const JSON_TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
/** Keywords holding one subschema, a map of them, or a list of them. */
const SUBSCHEMA_KEYWORDS = ["not", "if", "then", "else", "additionalProperties", "propertyNames", "contains", "unevaluatedProperties", "unevaluatedItems"];
const SUBSCHEMA_MAP_KEYWORDS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SUBSCHEMA_LIST_KEYWORDS = ["allOf", "anyOf", "oneOf", "prefixItems"];

/** Keywords holding a number bound: the validator compares with whatever they hold (`exclusiveMinimum: true` as 1). */
const NUMBER_KEYWORDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];

/** JSON pointer escaping of one key (`a/b` as `a~1b`). */
function pointerKey(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * Why `pattern` is not a regular expression the validator can compile (ECMA-262 in unicode mode, as it compiles
 * `pattern` and `patternProperties`); undefined when it is one.
 */
function regexProblem(pattern: JsonValue): string | undefined {
  if (typeof pattern !== "string") return "must be a regular expression (a string)";
  try {
    new RegExp(pattern, "u");
    return undefined;
  } catch (error) {
    return `must be a regular expression (ECMA-262, unicode mode: an escape such as \\_ or \\- outside a class, or a class such as [\\w-.], is not one there): ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * What keeps `schema` (at `path`, a JSON pointer) from being a JSON schema, in the keywords a mistake most often
 * breaks (`type`, `required`, the number bounds, the patterns, the subschemas): the validator itself ignores what it
 * cannot read, which would accept every input, compares a bound with whatever it holds (draft 4's
 * `exclusiveMinimum: true` as the bound 1), and compiles a pattern only when a string meets it, which would refuse every
 * start that reaches it.
 */
function shapeProblem(schema: JsonValue, path: string): string | undefined {
  if (typeof schema === "boolean") return undefined;
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return `${path} must be a schema (an object or a boolean)`;
  const type = schema["type"];
  if (type !== undefined && !(typeof type === "string" ? JSON_TYPES.has(type) : Array.isArray(type) && type.every((each) => typeof each === "string" && JSON_TYPES.has(each)))) {
    return `${path}/type must be one of ${[...JSON_TYPES].join(", ")} (or a list of them)`;
  }
  const required = schema["required"];
  if (required !== undefined && !(Array.isArray(required) && required.every((each) => typeof each === "string"))) return `${path}/required must be a list of property names`;
  for (const keyword of NUMBER_KEYWORDS) {
    const bound = schema[keyword];
    if (bound === undefined || (typeof bound === "number" && (keyword !== "multipleOf" || bound > 0))) continue;
    if (keyword === "multipleOf") return `${path}/multipleOf must be a number greater than 0`;
    return typeof bound === "boolean" && keyword.startsWith("exclusive")
      ? `${path}/${keyword} must be a number, the bound itself (draft 4's boolean beside minimum or maximum is not read so)`
      : `${path}/${keyword} must be a number`;
  }
  if (schema["pattern"] !== undefined) {
    const problem = regexProblem(schema["pattern"]);
    if (problem !== undefined) return `${path}/pattern ${problem}`;
  }
  const patternProperties = schema["patternProperties"];
  if (patternProperties !== null && typeof patternProperties === "object" && !Array.isArray(patternProperties)) {
    for (const pattern of Object.keys(patternProperties)) {
      const problem = regexProblem(pattern);
      if (problem !== undefined) return `${path}/patternProperties/${pointerKey(pattern)} ${problem}`;
    }
  }
  for (const keyword of SUBSCHEMA_KEYWORDS) {
    if (schema[keyword] !== undefined) {
      const problem = shapeProblem(schema[keyword]!, `${path}/${keyword}`);
      if (problem !== undefined) return problem;
    }
  }
  for (const keyword of SUBSCHEMA_MAP_KEYWORDS) {
    const map = schema[keyword];
    if (map === undefined) continue;
    if (map === null || typeof map !== "object" || Array.isArray(map)) return `${path}/${keyword} must be an object of schemas`;
    for (const [name, sub] of Object.entries(map)) {
      const problem = shapeProblem(sub, `${path}/${keyword}/${name}`);
      if (problem !== undefined) return problem;
    }
  }
  for (const keyword of [...SUBSCHEMA_LIST_KEYWORDS, "items"]) {
    const list = schema[keyword];
    if (list === undefined || (keyword === "items" && !Array.isArray(list))) {
      if (list !== undefined) {
        const problem = shapeProblem(list, `${path}/${keyword}`);
        if (problem !== undefined) return problem;
      }
      continue;
    }
    if (!Array.isArray(list)) return `${path}/${keyword} must be a list of schemas`;
    for (const [index, sub] of list.entries()) {
      const problem = shapeProblem(sub, `${path}/${keyword}/${index}`);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

/** Keywords whose subschemas apply to the value their schema does (not to a part of it), one or a list of them. */
const IN_PLACE_KEYWORDS = ["not", "if", "then", "else", "allOf", "anyOf", "oneOf"];

/** The subschemas of `schema` (shaped as {@link shapeProblem} takes), each with the keys that lead to it. */
function subschemas(schema: JsonObject): Array<[string[], JsonValue]> {
  const found: Array<[string[], JsonValue]> = [];
  for (const keyword of [...SUBSCHEMA_KEYWORDS, ...SUBSCHEMA_MAP_KEYWORDS, ...SUBSCHEMA_LIST_KEYWORDS, "items"]) {
    const value = schema[keyword];
    if (value === undefined) continue;
    if (SUBSCHEMA_MAP_KEYWORDS.includes(keyword) || (SUBSCHEMA_LIST_KEYWORDS.includes(keyword) || keyword === "items") && Array.isArray(value)) {
      for (const [key, sub] of Object.entries(value as JsonObject)) found.push([[keyword, key], sub]);
    } else {
      found.push([[keyword], value]);
    }
  }
  return found;
}

/** The part of `root` a local `$ref` (`#`, `#/$defs/a%20b`) points at, or undefined (an anchor, a part that is not there). */
function localTarget(root: JsonObject, ref: string): JsonValue | undefined {
  if (ref !== "#" && !ref.startsWith("#/")) return undefined;
  let node: JsonValue | undefined = root;
  for (const raw of ref === "#" ? [] : ref.slice(2).split("/")) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    } catch {
      return undefined;
    }
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = Array.isArray(node) ? node[Number(key)] : (node as JsonObject)[key];
  }
  return node;
}

/**
 * A `$ref` of `root` that leads back to itself through references and in-place keywords alone (`allOf`, `not`, …),
 * never into a property or item of the value: checking a value against it never ends (the validator overflows its
 * stack, which refused every start that reached it). Undefined when there is none, or when a nested `$id` makes
 * `#/…` mean another root (not followed).
 */
function refCycle(root: JsonObject): string | undefined {
  const places = new Map<object, string>();
  let nestedId = false;
  const collect = (schema: JsonValue, pointer: string, top: boolean): void => {
    if (schema === null || typeof schema !== "object" || Array.isArray(schema) || places.has(schema)) return;
    if (!top && schema["$id"] !== undefined) nestedId = true;
    places.set(schema, pointer);
    for (const [keys, sub] of subschemas(schema)) collect(sub, `${pointer}/${keys.map(pointerKey).join("/")}`, false);
  };
  collect(root, "#", true);
  if (nestedId) return undefined;
  const finished = new Set<object>();
  const open = new Set<object>();
  const visit = (schema: JsonObject): string | undefined => {
    if (finished.has(schema)) return undefined;
    if (open.has(schema)) return places.get(schema) ?? "#";
    open.add(schema);
    const next: JsonValue[] = [];
    const ref = schema["$ref"];
    if (typeof ref === "string") {
      const target = localTarget(root, ref);
      if (target !== undefined) next.push(target);
    }
    for (const keyword of IN_PLACE_KEYWORDS) {
      const value = schema[keyword];
      if (value !== undefined) next.push(...(Array.isArray(value) ? value : [value]));
    }
    for (const sub of next) {
      if (sub === null || typeof sub !== "object" || Array.isArray(sub)) continue;
      const cycle = visit(sub);
      if (cycle !== undefined) return cycle;
    }
    open.delete(schema);
    finished.add(schema);
    return undefined;
  };
  for (const schema of places.keys()) {
    const back = visit(schema as JsonObject);
    if (back !== undefined) return `${back} refers back to itself through $ref without reaching into a property or item of the value (checking one would never end)`;
  }
  return undefined;
}

/**
 * Why `data` is not a JSON schema this service can check: a malformed keyword, or a `$ref` it cannot resolve (it holds
 * no remote schemas); undefined when it is one.
 */
export function schemaProblem(data: JsonObject): string | undefined {
  const shape = shapeProblem(data, "#");
  if (shape !== undefined) return shape;
  const refs = JSON.stringify(data).match(/"\$ref":"([^"]*)"/g) ?? [];
  const remote = refs.map((ref) => ref.slice(8, -1)).find((ref) => !ref.startsWith("#"));
  if (remote !== undefined) return `$ref ${JSON.stringify(remote)} names a schema outside this one, which this service cannot fetch`;
  const cycle = refCycle(data);
  if (cycle !== undefined) return cycle;
  try {
    const validator = new Validator(data as object, "2020-12", false);
    // Local references are resolved as they are met: meeting them with an empty object and null finds most dangling ones.
    validator.validate({});
    validator.validate(null);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message.split("\n")[0] : String(error);
  }
}


export { describeSchema, schemaIssues } from "../engine/json-schema";

/**
 * `definition` with the data of the schemas its tasks' definitions and its `outputSchema` enforce, read from the
 * registry now (see `WorkflowDef.schemas`); one no longer registered is kept as null, and a task (or the execution, as
 * it completes) that enforces it fails saying so. The same object when none is enforced.
 */
export async function withKeptSchemas(db: D1Database, definition: WorkflowDef): Promise<WorkflowDef> {
  const references = keptSchemaReferences(definition);
  if (references.length === 0) return definition;
  const found = await new SchemaRepository(db).findMany(references);
  const schemas = references.map((reference) => ({ key: schemaKey(reference), data: found.get(schemaKey(reference))?.data ?? null }));
  return { ...definition, schemas };
}

/** The schemas `references` name that are not registered, each as "its name (and version)". */
export async function unregisteredSchemas(db: D1Database, references: readonly SchemaReference[]): Promise<SchemaReference[]> {
  if (references.length === 0) return [];
  const found = await new SchemaRepository(db).findMany(references);
  return references.filter((reference) => found.get(schemaKey(reference)) === null);
}
