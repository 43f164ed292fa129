import type { IRequest, RouterType } from "itty-router";
import { forgetTaggedDefinitions } from "../auth/tag-grants";
import { serviceConfig } from "../config";
import { readStringBody } from "../http/body";
import { ApiError, notFound, validationError } from "../http/errors";
import { requireKeyring } from "../secrets/config";
import { encryptSecret } from "../secrets/crypto";
import { TagRepository } from "../tags";
import { MAX_SECRET_VALUE_BYTES, deleteSecret, isValidSecretName, listSecretNames, putEncryptedSecret, secretExists } from "../secrets/store";

type Args = [Env, ExecutionContext];

/** The `{name}` path segment, decoded and checked against the name rule (400 otherwise). */
function secretName(request: IRequest): string {
  const raw = request.params["name"] ?? "";
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    name = raw;
  }
  if (!isValidSecretName(name)) {
    throw validationError("Invalid secret name", [{ path: "name", message: "must be 1 to 128 characters of A-Z, a-z, 0-9, '_', '.' or '-'" }]);
  }
  return name;
}

const bodyError = (message: string) => validationError(message, [{ path: "(body)", message }]);

/** The secret value of a PUT body: a JSON string (Orkes style) or raw `text/plain`, never quoted back in a refusal. */
async function readSecretValue(request: Request, maxBytes: number): Promise<string> {
  // Untyped as the JavaScript client's retry after a refreshed token sends it (its Content-Type lost); Orkes takes any type.
  const secret = await readStringBody(request, maxBytes, { what: "secret value", example: '"s3cr3t"', untypedAsJson: true });
  if (secret === "") throw bodyError("The secret value must not be empty");
  const size = new TextEncoder().encode(secret).byteLength;
  if (size > MAX_SECRET_VALUE_BYTES) throw bodyError(`The secret value is ${size} bytes; at most ${MAX_SECRET_VALUE_BYTES} are allowed`);
  return secret;
}

/**
 * The secrets API. Values go in and never come out: Orkes' `GET /api/secrets/{name}`, which returns
 * one, is a 501 that says so (a 404 would read as "no such secret"). Access (SYSTEM_ADMIN by the
 * default rules) is enforced before any route runs.
 */
export function registerSecretRoutes(router: RouterType<IRequest, Args>): void {
  // Orkes lists the names twice (GET: those the caller can grant access to; POST: all of them): here both are every name.
  router.get("/api/secrets", async (_request, env) => Response.json(await listSecretNames(env.DB)));
  router.post("/api/secrets", async (_request, env) => Response.json(await listSecretNames(env.DB)));
  // Orkes' ExtendedSecret: each name with its tags.
  router.get("/api/secrets-v2", async (_request, env) => {
    const tags = await new TagRepository(env.DB).byName("SECRET");
    return Response.json((await listSecretNames(env.DB)).map((name) => ({ name, tags: tags.get(name) ?? [] })));
  });

  // SecretClient's clearLocalCache and clearRedisCache: nothing to clear, each use reads the secret from D1 (and no
  // secret's value is ever answered, so these names cannot hide one). An empty map: the Python client reads one.
  for (const cache of ["clearLocalCache", "clearRedisCache"]) router.get(`/api/secrets/${cache}`, () => Response.json({}));

  router.get("/api/secrets/:name", () => {
    throw new ApiError(501, "NOT_IMPLEMENTED", "Secret values are write-only here: no endpoint returns one (check that a secret is set with GET /api/secrets/{name}/exists)");
  });

  router.get("/api/secrets/:name/exists", async (request, env) => Response.json(await secretExists(env.DB, secretName(request))));

  router.put("/api/secrets/:name", async (request, env) => {
    const name = secretName(request);
    // Before reading the body: without a key nothing can be stored, whatever was sent.
    const keyring = await requireKeyring(env);
    const value = await readSecretValue(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    await putEncryptedSecret(env.DB, name, await encryptSecret(keyring, name, value), Date.now());
    return new Response(null, { status: 200 });
  });

  router.delete("/api/secrets/:name", async (request, env) => {
    const name = secretName(request);
    if (!(await deleteSecret(env.DB, name))) throw notFound(`No secret named ${name}`);
    // Its tags went with it: a tag's grant no longer reaches the name (a secret made under it later is not tagged).
    forgetTaggedDefinitions();
    return new Response(null, { status: 200 });
  });
}
