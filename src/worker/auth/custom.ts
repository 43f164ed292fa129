import { serviceConfig } from "../config";
import type { CorsPolicy } from "../http/headers";
import { ApiError } from "../http/errors";
import { grantsFor } from "./grants";
import type { Principal } from "./principal";
import type { AuthProvider } from "./provider";

/** What the custom provider answers for a recognised request. */
interface CustomIdentity {
  userId?: unknown;
  roles?: unknown;
}

/**
 * True for a browser's request sent from another site (`Sec-Fetch-Site: cross-site`, or an `Origin` other than the
 * service's own), unless `CORS_ALLOWED_ORIGINS` names that origin. The custom provider may recognise a request by its
 * cookies (a session, Cloudflare Access), which a browser attaches to a request any page makes: taken to it, a link
 * or form on another site could act as the user (CSRF). Clients that are no browsers send neither header.
 */
function crossSiteBrowserRequest(request: Request, cors: CorsPolicy): boolean {
  const origin = request.headers.get("origin")?.toLowerCase();
  if (origin !== undefined && cors.origins.has(origin)) return false;
  if (request.headers.get("sec-fetch-site") === "cross-site") return true;
  return origin !== undefined && origin !== new URL(request.url).origin.toLowerCase();
}

/**
 * A custom authentication provider: another Worker bound as `AUTH_SERVICE` is asked who a request
 * is. It receives `POST /authenticate` with `{method, url, headers}` (never the body) and answers
 * 200 `{userId, roles?}`, 401 when it does not know the request, or anything else on failure.
 * It is asked only when no built-in credentials (API key, this service's or the OAuth issuer's
 * tokens) were recognised. See examples/custom-auth-worker.
 */
export const customProvider: AuthProvider = {
  name: "custom",
  async authenticate(request, env): Promise<Principal | undefined> {
    const service = env.AUTH_SERVICE;
    if (!service) return undefined;
    if (crossSiteBrowserRequest(request, serviceConfig(env).cors)) {
      throw new ApiError(401, "UNAUTHENTICATED", "A browser request from another site is not authenticated by the custom provider (it may carry the user's cookies without the user meaning it): send an API key or a token");
    }
    // fromEntries defines each name as its own key: assignment would drop one named __proto__.
    const headers = Object.fromEntries(request.headers) as Record<string, string>;
    const response = await service.fetch("https://auth-service/authenticate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ method: request.method, url: request.url, headers }),
    });
    if (response.status === 401) return undefined;
    if (!response.ok) {
      console.error(JSON.stringify({ msg: "custom auth provider failed", status: response.status }));
      throw new ApiError(401, "INVALID_TOKEN", "The authentication service could not identify this request; check the credentials it expects");
    }
    const identity = (await response.json().catch(() => ({}))) as CustomIdentity;
    if (typeof identity.userId !== "string" || identity.userId === "") {
      console.error(JSON.stringify({ msg: "custom auth provider answered without a userId" }));
      throw new ApiError(401, "INVALID_TOKEN", "The authentication service could not identify this request; check the credentials it expects");
    }
    const roles = Array.isArray(identity.roles) ? identity.roles.filter((role): role is string => typeof role === "string") : [];
    return { userId: identity.userId, grants: await grantsFor(env, identity.userId, roles, true), method: "custom" };
  },
};
