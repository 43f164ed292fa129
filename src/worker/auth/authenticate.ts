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
  throw new ApiError(401, "UNAUTHENTICATED", `Authentication required: ${env.AUTH_SERVICE ? "" : authorizationHint(request.headers.get("authorization"))}send X-API-Key: <keyId>:<keySecret>, or a token as X-Authorization: <token> or Authorization: Bearer <token>`);
}

/**
 * Why an `Authorization` header no provider took is none of the credentials this service reads (without echoing it),
 * as the start of the 401's message; "" without one. A newcomer sends the API key there, or a token without `Bearer`.
 * Not given when a custom provider is bound: its own scheme may use the header, and it has just said it knows the request not.
 */
function authorizationHint(authorization: string | null): string {
  const value = authorization?.trim() ?? "";
  if (value === "" || /^Bearer(\s|$)/i.test(value)) return "";
  if (/^Basic\s/i.test(value)) return "Authorization: Basic is read only by the token endpoint (POST /api/security/token); ";
  if (value.includes(":")) return "the Authorization header holds what looks like an API key (<keyId>:<keySecret>), which goes in X-API-Key instead; ";
  return "the Authorization header holds no \"Bearer <token>\" (write Bearer before the token); ";
}
