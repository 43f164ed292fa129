import { ApiError, type ErrorCode } from "../http/errors";
import { apiKeyProvider } from "./api-key";
import { ownTokenProvider, unrecognisedTokenProvider } from "./bearer";
import { customProvider } from "./custom";
import { oauthProvider } from "./oauth";
import { TOKEN_ISSUER } from "./tokens";
import type { Principal } from "./principal";
import type { AuthProvider } from "./provider";

/** Providers asked in order; the first that recognises credentials decides. */
const PROVIDERS: readonly AuthProvider[] = [apiKeyProvider, ownTokenProvider, oauthProvider, customProvider, unrecognisedTokenProvider];

/** The realm every authentication challenge names. */
const REALM = TOKEN_ISSUER;

/**
 * The challenge a 401 of authentication carries (RFC 9110 11.6.1: a 401 MUST send `WWW-Authenticate`; RFC 6750 3: a
 * bearer token's resource server names the `Bearer` scheme, with `error="invalid_token"` for a token refused, and no error
 * code for a request that sent none). API keys have no registered scheme: a request refused for one is told of tokens.
 */
function challenge(code: ErrorCode): string {
  return code === "INVALID_TOKEN" || code === "EXPIRED_TOKEN" ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`;
}

/** `error` with the authentication challenge when it is a 401 without one; anything else as it is. */
function withChallenge(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.status !== 401 || error.headers?.["WWW-Authenticate"] !== undefined) return error;
  return new ApiError(error.status, error.code, error.message, error.validationErrors, { ...error.headers, "WWW-Authenticate": challenge(error.code) });
}

/** Authenticates a request or throws 401, with `WWW-Authenticate` (see {@link challenge}). */
export async function authenticate(request: Request, env: Env): Promise<Principal> {
  try {
    return await authenticatedPrincipal(request, env);
  } catch (error) {
    throw withChallenge(error);
  }
}

async function authenticatedPrincipal(request: Request, env: Env): Promise<Principal> {
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
