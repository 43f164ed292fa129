import type { IRequest, RouterType } from "itty-router";
import { ENVIRONMENT_VARIABLE_NAME, MAX_ENVIRONMENT_VALUE_BYTES } from "../../engine/environment";
import { serviceConfig } from "../config";
import { EnvironmentRepository } from "../environment";
import { principalOf } from "../guard";
import { readStringBody, textResponse } from "../http/body";
import { booleanQuery, decodedPathParam } from "../http/params";
import { notFound, validationError } from "../http/errors";

type Args = [Env, ExecutionContext];

/** The `{key}` path segment, checked against the name rule (400 otherwise). */
function variableName(request: IRequest): string {
  const name = decodedPathParam(request, "key");
  if (!ENVIRONMENT_VARIABLE_NAME.test(name)) {
    throw validationError("Invalid environment variable name", [{ path: "key", message: "must be 1 to 128 characters of A-Z, a-z, 0-9, '_' or '-'" }]);
  }
  return name;
}

/** A PUT's value: raw `text/plain` (Orkes' clients) or a JSON string. */
async function readValue(request: Request, maxBytes: number): Promise<string> {
  // Untyped as the JavaScript client's retry after a refreshed token sends it (its Content-Type lost); Orkes takes any type.
  const value = await readStringBody(request, maxBytes, { what: "environment variable's value", example: '"https://payments.example.com"', untypedAsJson: true });
  const size = new TextEncoder().encode(value).byteLength;
  if (size > MAX_ENVIRONMENT_VALUE_BYTES) {
    const message = `The value is ${size} bytes; at most ${MAX_ENVIRONMENT_VALUE_BYTES} are allowed`;
    throw validationError(message, [{ path: "(body)", message }]);
  }
  return value;
}

/**
 * Orkes' environment variables (EnvironmentResource): cluster-wide values workflows read as `${workflow.env.<name>}`
 * (their tags: routes/tags.ts). Access (reads: WORKFLOW_READ or METADATA_ADMIN; writes: SYSTEM_ADMIN, see access-rules.ts) is decided before a route runs.
 */
export function registerEnvironmentRoutes(router: RouterType<IRequest, Args>): void {
  // Orkes' current clients (the Java EnvironmentClient, the generated Python and JavaScript ones) read a list of
  // EnvironmentVariable {name, value, tags}; its first ones read a map of name to value. `short=true` (this service's,
  // as the schemas' listing has one) leaves the values out: the names to read one at a time past the listing's bound.
  router.get("/api/environment", async (request, env) => Response.json(await new EnvironmentRepository(env.DB).list(!booleanQuery(request, "short", false))));

  router.get("/api/environment/:key", async (request, env) => {
    const name = variableName(request);
    const value = await new EnvironmentRepository(env.DB).get(name);
    if (value === null) throw notFound(`No environment variable named ${name}`);
    return textResponse(value);
  });

  router.put("/api/environment/:key", async (request, env) => {
    const name = variableName(request);
    const value = await readValue(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    await new EnvironmentRepository(env.DB).put(name, value, principalOf(request).userId, Date.now());
    return new Response(null, { status: 200 });
  });

  router.delete("/api/environment/:key", async (request, env) => {
    const name = variableName(request);
    const value = await new EnvironmentRepository(env.DB).delete(name);
    if (value === null) throw notFound(`No environment variable named ${name}`);
    return textResponse(value);
  });
}
