import { ApiError } from "../http/errors";
import { grantsFor } from "./grants";
import type { Principal } from "./principal";
import type { AuthProvider } from "./provider";
import { isOwnToken, verifyAccessToken } from "./tokens";

/** The bearer token of a request: `X-Authorization: <token>` (Orkes) or `Authorization: Bearer <token>`. */
export function bearerToken(request: Request): string | undefined {
  const orkes = request.headers.get("x-authorization");
  if (orkes !== null && orkes.trim() !== "") return orkes.trim().replace(/^Bearer\s+/i, "");
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
    if (bearerToken(request) === undefined) return undefined;
    throw new ApiError(401, "INVALID_TOKEN", "Invalid token: not issued by this service nor by a configured OAuth issuer; check its issuer and signature");
  },
};
