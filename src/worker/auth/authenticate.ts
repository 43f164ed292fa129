import { ApiError } from "../http/errors";
import { apiKeyProvider } from "./api-key";
import { ownTokenProvider, unrecognisedTokenProvider } from "./bearer";
import { customProvider } from "./custom";
import { oauthProvider } from "./oauth";
import type { Principal } from "./principal";
import type { AuthProvider } from "./provider";

/** Providers asked in order; the first that recognises credentials decides. */
const PROVIDERS: readonly AuthProvider[] = [apiKeyProvider, ownTokenProvider, oauthProvider, customProvider, unrecognisedTokenProvider];

/** Authenticates a request or throws 401. */
export async function authenticate(request: Request, env: Env): Promise<Principal> {
  for (const provider of PROVIDERS) {
    const principal = await provider.authenticate(request, env);
    if (principal) return principal;
  }
  throw new ApiError(401, "UNAUTHENTICATED", "Authentication required: send X-API-Key: <keyId>:<keySecret>, or a token as X-Authorization: <token> or Authorization: Bearer <token>");
}
