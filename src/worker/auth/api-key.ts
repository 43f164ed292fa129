import { ApiError } from "../http/errors";
import { SecurityStore } from "../security/store";
import { parseApiKey, type ApiKeyCredential } from "./api-key-format";
import { secretsEqual } from "./constant-time";
import { grantsFor } from "./grants";
import { BOOTSTRAP_ADMIN_USER, type Principal } from "./principal";
import type { AuthProvider } from "./provider";
import { clientAddress, throttledCredentialCheck } from "./throttle";

/**
 * The user an API key belongs to, or 401 (429 while the key or address is limited for failed attempts, see
 * {@link throttledCredentialCheck}). The bootstrap key (configuration) is checked first, then keys created
 * through the API. The same answer for an unknown key and a wrong secret, so the response never tells
 * whether a key exists.
 */
export async function userForApiKey(env: Env, credential: ApiKeyCredential, address: string): Promise<string> {
  return throttledCredentialCheck(env, { ...credential, address }, async () => {
    const bootstrap = env.BOOTSTRAP_ADMIN_KEY ? parseApiKey(env.BOOTSTRAP_ADMIN_KEY) : undefined;
    if (bootstrap) {
      // Compare both parts every time so timing says nothing about which part was wrong.
      const idMatches = await secretsEqual(credential.keyId, bootstrap.keyId);
      const secretMatches = await secretsEqual(credential.keySecret, bootstrap.keySecret);
      if (idMatches && secretMatches) return BOOTSTRAP_ADMIN_USER;
    }
    return new SecurityStore(env.DB).verifyApiKey(credential.keyId, credential.keySecret);
  });
}

/** API keys used directly: `X-API-Key: <keyId>:<keySecret>`. */
export const apiKeyProvider: AuthProvider = {
  name: "api-key",
  async authenticate(request, env): Promise<Principal | undefined> {
    const header = request.headers.get("x-api-key");
    if (header === null) return undefined;
    // A scheme before the key (as Authorization takes one) makes "Bearer <keyId>" the key id: say so rather than
    // answer it as an unknown key, which leaves the newcomer doubting a key that is right.
    const scheme = /^(Bearer|Basic)\s/i.exec(header.trim())?.[1];
    if (scheme !== undefined) throw new ApiError(401, "INVALID_CREDENTIALS", `X-API-Key must be <keyId>:<keySecret> alone, with no "${scheme}" before it`);
    const credential = parseApiKey(header);
    if (!credential) throw new ApiError(401, "INVALID_CREDENTIALS", "X-API-Key must be <keyId>:<keySecret>");
    const userId = await userForApiKey(env, credential, clientAddress(request));
    return { userId, grants: await grantsFor(env, userId), method: "api-key" };
  },
};
