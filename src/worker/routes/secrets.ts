import type { IRequest, RouterType } from "itty-router";
import { serviceConfig } from "../config";
import { readBodyBytes } from "../http/body";
import { ApiError, notFound, validationError } from "../http/errors";
import { requireKeyring } from "../secrets/config";
import { encryptSecret } from "../secrets/crypto";
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

function mediaType(contentType: string | null): { type: string; charset: string | undefined } {
  const [type = "", ...parameters] = (contentType ?? "").split(";").map((part) => part.trim().toLowerCase());
  const charset = parameters.find((parameter) => parameter.startsWith("charset="))?.slice("charset=".length).replace(/^"|"$/g, "");
  return { type, charset };
}

const bodyError = (message: string) => validationError(message, [{ path: "(body)", message }]);

/**
 * The secret value of a PUT body: a JSON string (Orkes style) or raw `text/plain`. Refusals never
 * quote the body: a value sent the wrong way is still a secret (which is also why the shared JSON
 * reader is not used, as its parse errors quote the text).
 */
async function readSecretValue(request: Request, maxBytes: number): Promise<string> {
  const bytes = await readBodyBytes(request, maxBytes);
  const { type, charset } = mediaType(request.headers.get("content-type"));
  const isJson = type === "application/json" || type.endsWith("+json");
  if (!isJson && type !== "text/plain") {
    throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", 'Send the secret value as a JSON string (Content-Type: application/json, e.g. "s3cr3t") or as text/plain');
  }
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8" && charset !== "us-ascii") {
    throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "The secret value must be sent as UTF-8");
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw bodyError("The secret value is not valid UTF-8");
  }
  let value: unknown = text;
  if (isJson) {
    if (text.trim() === "") throw bodyError('The body must be the secret value as a JSON string, e.g. "s3cr3t"');
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      throw bodyError('The body is not valid JSON: send the secret value as a JSON string, e.g. "s3cr3t", or as text/plain');
    }
    if (typeof value !== "string") {
      const kind = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `a ${typeof value}`;
      throw bodyError(`The secret value must be a JSON string, not ${kind}`);
    }
  }
  const secret = value as string;
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
  router.get("/api/secrets", async (_request, env) => Response.json(await listSecretNames(env.DB)));

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
    return new Response(null, { status: 200 });
  });
}
