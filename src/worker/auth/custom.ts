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
