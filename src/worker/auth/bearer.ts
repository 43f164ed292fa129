import { ApiError } from "../http/errors";
import { grantsFor } from "./grants";
import type { Principal } from "./principal";
import type { AuthProvider } from "./provider";
import { isOwnToken, verifyAccessToken } from "./tokens";

/**
 * The bearer token of a request: `X-Authorization: <token>` (Orkes, `Bearer ` before it allowed) or
 * `Authorization: Bearer <token>`. A header holding no token (empty, or the word `Bearer` alone) is no credential
 * (401 UNAUTHENTICATED, as without the header), not a token to refuse as invalid.
 */
export function bearerToken(request: Request): string | undefined {
  const orkes = request.headers.get("x-authorization")?.trim().replace(/^Bearer(?:\s+|$)/i, "");
  if (orkes !== undefined && orkes !== "") return orkes;
  const standard = request.headers.get("authorization");
  const match = standard === null ? null : /^Bearer\s+(.+)$/i.exec(standard.trim());
  return match ? match[1]!.trim() : undefined;
}

/** Access tokens issued by this service (see tokens.ts). */
export const ownTokenProvider: AuthProvider = {
  name: "jwt",
  async authenticate(request, env): Promise<Principal | undefined> {
    const token = bearerToken(request);
    if (token === undefined || !isOwnToken(token)) return undefined;
    const { userId } = await verifyAccessToken(env, token);
    return { userId, grants: await grantsFor(env, userId), method: "jwt" };
  },
};

/** Last in line: a bearer token no provider took is refused rather than ignored. */
export const unrecognisedTokenProvider: AuthProvider = {
  name: "unrecognised-token",
  async authenticate(request): Promise<Principal | undefined> {
    const token = bearerToken(request);
    if (token === undefined) return undefined;
    // A JWT never holds ':', an API key (<keyId>:<keySecret>) always does: sent as a bearer token, it is a wrong header,
    // and saying so (without echoing it) spares a newcomer looking for a fault in a token they never had.
    if (token.includes(":")) {
      throw new ApiError(401, "INVALID_TOKEN", "Invalid token: this looks like an API key (<keyId>:<keySecret>), which is sent as X-API-Key: <keyId>:<keySecret>, or exchanged for a token at POST /api/token");
    }
    throw new ApiError(401, "INVALID_TOKEN", "Invalid token: not issued by this service nor by a configured OAuth issuer; check its issuer and signature");
  },
};
