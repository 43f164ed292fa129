import { createRemoteJWKSet, decodeJwt, errors, jwtVerify, type JWTPayload } from "jose";
import { ApiError } from "../http/errors";
import { bearerToken } from "./bearer";
import { grantsFor } from "./grants";
import type { Principal } from "./principal";
import type { AuthProvider } from "./provider";

/** Algorithms accepted from an external issuer: asymmetric only, so a public key can never act as an HMAC secret. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];

const jwksByUrl = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function jwks(url: string): ReturnType<typeof createRemoteJWKSet> {
  let set = jwksByUrl.get(url);
  if (!set) {
    // jose caches the keys and refetches on an unknown kid (rotation), with a cooldown against floods.
    set = createRemoteJWKSet(new URL(url));
    jwksByUrl.set(url, set);
  }
  return set;
}

/** Reads a claim by dotted path (`realm_access.roles`). */
function claim(payload: JWTPayload, path: string): unknown {
  let value: unknown = payload;
  for (const part of path.split(".")) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * Access tokens of an external OAuth 2.0 / OIDC issuer, when configured (`OAUTH_ISSUER`,
 * `OAUTH_AUDIENCE`, `OAUTH_JWKS_URL`). The user is the `OAUTH_USER_CLAIM` claim (default `sub`);
 * role names in `OAUTH_ROLES_CLAIM` add the permissions of the roles of those names. A token must name the audience
 * and expire: an issuer mints tokens for many clients (ID tokens too), and one for another client, or one that never
 * expires, is not a key to this service. Without `OAUTH_AUDIENCE` the issuer's tokens are refused, saying why.
 */
export const oauthProvider: AuthProvider = {
  name: "oauth",
  async authenticate(request, env): Promise<Principal | undefined> {
    const issuer = env.OAUTH_ISSUER;
    const jwksUrl = env.OAUTH_JWKS_URL;
    if (!issuer || !jwksUrl) return undefined;
    const token = bearerToken(request);
    if (token === undefined) return undefined;
    try {
      if (decodeJwt(token).iss !== issuer) return undefined;
    } catch {
      return undefined;
    }
    const audience = env.OAUTH_AUDIENCE;
    if (!audience) throw new ApiError(401, "INVALID_TOKEN", `Tokens of ${issuer} are refused: the service is configured without OAUTH_AUDIENCE, so it cannot tell a token meant for it from one the issuer made for another client`);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks(jwksUrl), { issuer, audience, algorithms: ALGORITHMS, requiredClaims: ["exp"] }));
    } catch (error) {
      if (error instanceof errors.JWTExpired) throw new ApiError(401, "EXPIRED_TOKEN", `Token expired: get a new one from ${issuer}`);
      throw new ApiError(401, "INVALID_TOKEN", `Invalid token: signature, algorithm, audience or expiry check failed against ${issuer}; check the token's audience and expiry and that the issuer's keys are reachable`);
    }
    const userId = claim(payload, env.OAUTH_USER_CLAIM || "sub");
    if (typeof userId !== "string" || userId === "") throw new ApiError(401, "INVALID_TOKEN", `Invalid token: no ${env.OAUTH_USER_CLAIM || "sub"} claim naming the user`);
    const roles = env.OAUTH_ROLES_CLAIM ? claim(payload, env.OAUTH_ROLES_CLAIM) : undefined;
    const roleNames = Array.isArray(roles) ? roles.filter((role): role is string => typeof role === "string") : [];
    return { userId, grants: await grantsFor(env, userId, roleNames, true), method: "oauth" };
  },
};
