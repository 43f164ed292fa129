import { ApiError } from "../http/errors";
import { secretsEqual } from "./constant-time";
import { PERMISSIONS } from "./permissions";
import type { Principal } from "./principal";
import type { AuthProvider } from "./provider";

/** A parsed `X-API-Key: <keyId>:<keySecret>` header. */
export interface ApiKeyCredential {
  keyId: string;
  keySecret: string;
}

/** Splits `<keyId>:<keySecret>`; undefined when malformed. */
export function parseApiKey(value: string): ApiKeyCredential | undefined {
  const separator = value.indexOf(":");
  if (separator <= 0 || separator === value.length - 1) return undefined;
  return { keyId: value.slice(0, separator).trim(), keySecret: value.slice(separator + 1).trim() };
}

/** The user id the bootstrap admin acts as. */
export const BOOTSTRAP_ADMIN_USER = "admin";

/**
 * API keys. For now the one key is the bootstrap admin's from `BOOTSTRAP_ADMIN_KEY`, holding every
 * permission at scope `*`; per-user keys stored as salted hashes come with the security work.
 */
export const apiKeyProvider: AuthProvider = {
  name: "api-key",
  async authenticate(request, env): Promise<Principal | undefined> {
    const header = request.headers.get("x-api-key");
    if (header === null) return undefined;
    const credential = parseApiKey(header);
    if (!credential) throw new ApiError(401, "INVALID_TOKEN", "X-API-Key must be <keyId>:<keySecret>");
    const bootstrap = env.BOOTSTRAP_ADMIN_KEY ? parseApiKey(env.BOOTSTRAP_ADMIN_KEY) : undefined;
    // Compare both parts every time so timing says nothing about which part was wrong.
    const idMatches = await secretsEqual(credential.keyId, bootstrap?.keyId ?? "");
    const secretMatches = await secretsEqual(credential.keySecret, bootstrap?.keySecret ?? "");
    if (!bootstrap || !idMatches || !secretMatches) throw new ApiError(401, "INVALID_TOKEN", "Unknown API key or wrong secret");
    return {
      userId: BOOTSTRAP_ADMIN_USER,
      grants: PERMISSIONS.map((action) => ({ action, scope: "*" })),
      method: "api-key",
    };
  },
};
