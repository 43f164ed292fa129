/**
 * An example custom authentication provider for edge-conductor: a Worker that the service asks
 * "who is this request?" through a service binding named AUTH_SERVICE.
 *
 * The service sends POST /authenticate with JSON {method, url, headers} (never the request body).
 * Answer 200 {userId, roles?} when you know the caller, 401 when you do not (the service then
 * refuses the request unless other credentials match). Roles must exist in edge-conductor
 * (POST /api/security/roles); they add to what the user is assigned there.
 *
 * This one recognises team tokens sent as `X-Team-Token: <token>`; TEAM_TOKENS (a secret) maps each
 * token to {userId, roles}, e.g. {"t-123": {"userId": "build-bot", "roles": ["deployers"]}}.
 * Replace the lookup with your own: a session cookie, mTLS headers, an internal SSO call.
 */
export default {
  async fetch(request, env) {
    if (request.method !== "POST" || new URL(request.url).pathname !== "/authenticate") {
      return new Response("not found", { status: 404 });
    }
    const { headers } = await request.json();
    const token = headers?.["x-team-token"];
    const teams = JSON.parse(env.TEAM_TOKENS || "{}");
    const identity = typeof token === "string" ? teams[token] : undefined;
    if (!identity) return Response.json({ message: "unknown team token" }, { status: 401 });
    return Response.json({ userId: identity.userId, roles: identity.roles ?? [] });
  },
};
