import { DOT_SEGMENT_MESSAGE, isDotSegment } from "../../engine/http-syntax";
import type { IRequest, RouterType } from "itty-router";
import * as v from "valibot";
import type { JsonObject } from "../../engine/model";
import { childPath, type ValidationIssue } from "../../engine/validation-issue";
import { principalOf } from "../guard";
import { validationError } from "../http/errors";
import { booleanQuery, decodedPathParam } from "../http/params";
import { SchemaRepository, schemaProblem } from "../json-schemas";
import { issuesToValidationErrors, jacksonNumber, jsonData, requestObject } from "../schemas";
import { requiredBody } from "./metadata";

type Args = [Env, ExecutionContext];

/** Most schemas one request saves: they are written in one atomic D1 batch. */
export const MAX_SCHEMAS_PER_REQUEST = 100;

/** Orkes' SchemaDef as a save sends it; read-only fields (times, authors) are ignored. */
const SchemaDefBody = requestObject({
  name: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(255, "must be at most 255 characters"), v.regex(/^[A-Za-z0-9_.-]+$/, "may hold only letters, digits, '_', '-' and '.'"), v.check((name: string) => !isDotSegment(name), DOT_SEGMENT_MESSAGE)),
  version: v.optional(jacksonNumber(v.pipe(v.number("must be an integer"), v.integer("must be an integer"), v.minValue(1, "must be at least 1"))), 1),
  type: v.optional(v.picklist(["JSON"], "must be JSON: this service checks JSON schemas only (AVRO and PROTOBUF are not supported)"), "JSON"),
  data: jsonData,
  // Conductor's SchemaDef.externalRef is a String, which Jackson also fills from a number or boolean (as its text). The
  // Rust SDK's SchemaDef sends `externalRef: false` for "none" (a bool there), which was a 400: false names no schema in
  // a registry, so it is left out (and reads back absent, as that client expects); true or a number is its text.
  externalRef: v.optional(
    v.pipe(
      v.union([v.string(), v.number(), v.boolean()], "must be a string"),
      v.transform((value: string | number | boolean) => (value === false ? undefined : String(value))),
    ),
  ),
});

/** The schemas of a save's body (one SchemaDef or a list), each checked: every problem of every one is reported. */
function validSchemas(body: unknown): Array<v.InferOutput<typeof SchemaDefBody>> {
  const list = Array.isArray(body) ? body : [body];
  const indexed = Array.isArray(body);
  if (list.length === 0 || list.length > MAX_SCHEMAS_PER_REQUEST) {
    throw validationError("Invalid schemas", [{ path: "(body)", message: `must be a schema or a non-empty list of at most ${MAX_SCHEMAS_PER_REQUEST}` }]);
  }
  const schemas: Array<v.InferOutput<typeof SchemaDefBody>> = [];
  const problems: ValidationIssue[] = [];
  list.forEach((item, index) => {
    const at = indexed ? childPath("", index) : "";
    const parsed = v.safeParse(SchemaDefBody, item);
    if (!parsed.success) {
      problems.push(...issuesToValidationErrors(parsed.issues, at));
      return;
    }
    const problem = schemaProblem(parsed.output.data as JsonObject);
    if (problem !== undefined) problems.push({ path: childPath(at, "data"), message: `is not a JSON schema this service can check: ${problem}` });
    else schemas.push(parsed.output);
  });
  if (problems.length > 0) throw validationError("Invalid schemas", problems);
  return schemas;
}

/** A version in the path: a positive integer. */
function pathVersion(request: IRequest): number {
  const version = Number(request.params["version"]);
  if (!Number.isInteger(version) || version < 1) throw validationError("Invalid schema version", [{ path: "version", message: "must be a positive integer" }]);
  return version;
}

/**
 * Orkes' schema registry (SchemaResource): JSON schemas by name and version, which a workflow definition's
 * `inputSchema` names (see start-execution.ts).
 */
export function registerJsonSchemaRoutes(router: RouterType<IRequest, Args>): void {
  router.get("/api/schema", async (request, env) => {
    // `short=true` leaves out each schema's body and type, as Conductor's SchemaResource does (Orkes' docs: name, version,
    // createTime and updateTime): the bodies are then not read.
    const short = booleanQuery(request, "short", false);
    const schemas = await new SchemaRepository(env.DB).list(short);
    return Response.json(short ? schemas.map(({ name, version, createTime, updateTime }) => ({ name, version, createTime, updateTime })) : schemas);
  });

  router.post("/api/schema", async (request, env) => {
    const schemas = validSchemas(await requiredBody(request, env));
    await new SchemaRepository(env.DB).save(schemas, booleanQuery(request, "newVersion", false), principalOf(request).userId);
    return new Response(null, { status: 200 });
  });

  router.get("/api/schema/:name", async (request, env) => Response.json(await new SchemaRepository(env.DB).get(decodedPathParam(request, "name"))));
  router.get("/api/schema/:name/:version", async (request, env) => Response.json(await new SchemaRepository(env.DB).get(decodedPathParam(request, "name"), pathVersion(request))));
  router.delete("/api/schema/:name", async (request, env) => {
    await new SchemaRepository(env.DB).delete(decodedPathParam(request, "name"));
    return new Response(null, { status: 200 });
  });
  router.delete("/api/schema/:name/:version", async (request, env) => {
    await new SchemaRepository(env.DB).delete(decodedPathParam(request, "name"), pathVersion(request));
    return new Response(null, { status: 200 });
  });
}
