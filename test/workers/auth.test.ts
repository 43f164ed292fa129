import { SELF, env } from "cloudflare:test";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { authenticate } from "../../src/worker/auth/authenticate";
import { ApiError } from "../../src/worker/http/errors";
import { ADMIN_KEY, api, apiOk, rowCount } from "./helpers";

const id = "6f1c4a8e-2b7d-4c1e-9a3f-0d5e8b7c6a41";
/** Every route of the service, as method and path. */
const ROUTES: Array<[string, string]> = [
  ["GET", "/api/metadata/workflow"],
  ["POST", "/api/metadata/workflow"],
  ["PUT", "/api/metadata/workflow"],
  ["GET", "/api/metadata/workflow/some_name"],
  ["DELETE", "/api/metadata/workflow/some_name/1"],
  ["POST", "/api/workflow"],
  ["POST", "/api/workflow/some_name"],
  ["POST", "/api/workflow/execute/some_name"],
  ["POST", "/api/workflow/execute/some_name/1"],
  ["GET", "/api/workflow/search"],
  ["GET", `/api/workflow/${id}`],
  ["DELETE", `/api/workflow/${id}`],
  ["PUT", `/api/workflow/${id}/pause`],
  ["PUT", `/api/workflow/${id}/resume`],
  ["POST", `/api/workflow/${id}/retry`],
  ["POST", `/api/workflow/${id}/restart`],
  ["POST", `/api/workflow/${id}/rerun`],
  ["DELETE", `/api/workflow/${id}/remove`],
  ["POST", `/api/tasks/${id}/ref/COMPLETED`],
  ["POST", "/api/tasks"],
  ["GET", "/api/nothing-here"],
];

describe("authentication", () => {
  it("GET /health is open", async () => {
    const response = await SELF.fetch("https://conductor.test/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });

  it.each(ROUTES)("%s %s needs credentials", async (method, path) => {
    const response = await SELF.fetch(`https://conductor.test${path}`, { method, headers: { "content-type": "application/json" }, body: method === "GET" ? null : "{}" });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ status: 401, error: "UNAUTHENTICATED" });
  });

  it.each([
    ["X-Authorization: Bearer", { "x-authorization": "Bearer" }],
    ["X-Authorization: Bearer and spaces", { "x-authorization": "Bearer   " }],
    ["X-Authorization empty", { "x-authorization": "" }],
    ["Authorization: Bearer", { authorization: "Bearer" }],
    ["Authorization: Bearer and spaces", { authorization: "Bearer   " }],
  ])("a token header holding no token (%s) is no credentials: 401 UNAUTHENTICATED, not INVALID_TOKEN", async (_label, headers: Record<string, string>) => {
    const response = await SELF.fetch("https://conductor.test/api/metadata/workflow", { headers });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ status: 401, error: "UNAUTHENTICATED" });
  });

  it.each([
    ["the API key", ADMIN_KEY, "the Authorization header holds what looks like an API key (<keyId>:<keySecret>), which goes in X-API-Key instead; "],
    ["a token without Bearer", "eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl", 'the Authorization header holds no "Bearer <token>" (write Bearer before the token); '],
    ["Basic credentials", `Basic ${btoa(ADMIN_KEY)}`, "Authorization: Basic is read only by the token endpoint (POST /api/security/token); "],
  ])("an Authorization header holding %s, which no provider reads, is a 401 saying what is wrong with it, without echoing it", async (_label, authorization, hint) => {
    // This pool binds the example custom provider, whose own scheme could use the header: the hint is for a service without one.
    const withoutCustomProvider = { ...env, AUTH_SERVICE: undefined };
    const refusal = await authenticate(new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization } }), withoutCustomProvider).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(ApiError);
    const { status, code, message } = refusal as ApiError;
    expect({ status, code, message }).toEqual({
      status: 401,
      code: "UNAUTHENTICATED",
      message: `Authentication required: ${hint}send X-API-Key: <keyId>:<keySecret>, or a token as X-Authorization: <token> or Authorization: Bearer <token>`,
    });
    expect(message).not.toContain(ADMIN_KEY.split(":")[1]);
  });

  it("with a custom provider bound, an Authorization header it did not know is answered without the hint, which its own scheme could make wrong", async () => {
    const response = await SELF.fetch("https://conductor.test/api/metadata/workflow", { headers: { authorization: "Token abc" } });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({
      error: "UNAUTHENTICATED",
      message: "Authentication required: send X-API-Key: <keyId>:<keySecret>, or a token as X-Authorization: <token> or Authorization: Bearer <token>",
    });
  });

  it.each(["Bearer", "basic"])("an X-API-Key with %s before the key is refused saying to send the key alone", async (scheme) => {
    const response = await SELF.fetch("https://conductor.test/api/metadata/workflow", { headers: { "x-api-key": `${scheme} ${ADMIN_KEY}` } });
    expect(response.status).toBe(401);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ status: 401, error: "INVALID_CREDENTIALS", message: `X-API-Key must be <keyId>:<keySecret> alone, with no "${scheme}" before it` });
    expect(text).not.toContain(ADMIN_KEY.split(":")[1]);
  });

  it.each([
    ["wrong secret", `${ADMIN_KEY.split(":")[0]}:wrong`],
    ["wrong key id", `someone:${ADMIN_KEY.split(":")[1]}`],
    ["no separator", "justakey"],
    ["empty secret", "test-admin:"],
  ])("refuses an API key with %s, without echoing it", async (_label, key) => {
    const before = await rowCount("workflow_defs");
    const response = await api("POST", "/api/metadata/workflow", { name: "x", tasks: [] }, { "x-api-key": key });
    expect(response.status).toBe(401);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ status: 401, error: "INVALID_CREDENTIALS" });
    expect(text).not.toContain(ADMIN_KEY.split(":")[1]);
    expect(await rowCount("workflow_defs")).toBe(before);
  });

  it.each([
    ["Authorization: Bearer", (key: string) => ({ authorization: `Bearer ${key}` })],
    ["X-Authorization", (key: string) => ({ "x-authorization": key })],
  ])("an API key sent as a token (%s) is refused with a message naming X-API-Key, without echoing it", async (_label, headers) => {
    const before = await rowCount("workflow_defs");
    const response = await SELF.fetch("https://conductor.test/api/metadata/workflow", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers(ADMIN_KEY) },
      body: JSON.stringify({ name: "x", tasks: [] }),
    });
    expect(response.status).toBe(401);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ status: 401, error: "INVALID_TOKEN", message: expect.stringContaining("sent as X-API-Key: <keyId>:<keySecret>") });
    expect(text).not.toContain(ADMIN_KEY.split(":")[1]);
    expect(await rowCount("workflow_defs")).toBe(before);
  });

  it("a token that is not an API key keeps the message about its issuer", async () => {
    const response = await SELF.fetch("https://conductor.test/api/metadata/workflow", { headers: { authorization: "Bearer aaa.bbb.ccc" } });
    expect(await response.json()).toMatchObject({ status: 401, error: "INVALID_TOKEN", message: expect.stringContaining("not issued by this service") });
  });

  it("every 401 of authentication carries a Bearer challenge (WWW-Authenticate), with error=\"invalid_token\" for a token refused or expired; a 403 carries none", async () => {
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256", kid: "test-1", typ: "JWT" })
      .setSubject("admin")
      .setIssuer("edge-conductor")
      .setAudience("edge-conductor")
      .setJti(crypto.randomUUID())
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new Uint8Array(32).fill(7));
    const cases: Array<[Record<string, string>, string, string]> = [
      [{}, "UNAUTHENTICATED", 'Bearer realm="edge-conductor"'],
      [{ "x-api-key": `${ADMIN_KEY.split(":")[0]}:wrong` }, "INVALID_CREDENTIALS", 'Bearer realm="edge-conductor"'],
      [{ authorization: "Bearer aaa.bbb.ccc" }, "INVALID_TOKEN", 'Bearer realm="edge-conductor", error="invalid_token"'],
      [{ "x-authorization": expired }, "EXPIRED_TOKEN", 'Bearer realm="edge-conductor", error="invalid_token"'],
    ];
    for (const [headers, error, challenge] of cases) {
      const response = await SELF.fetch("https://conductor.test/api/metadata/workflow", { headers });
      expect(await response.json()).toMatchObject({ status: 401, error });
      expect(response.headers.get("www-authenticate"), error).toBe(challenge);
    }
    // Authenticated but not permitted: no challenge (other credentials are no answer to a 403).
    const user = await apiOk<{ keyId: string; keySecret: string }>("POST", "/api/security/users/challenge-nobody/api-keys", undefined, 201);
    const forbidden = await SELF.fetch("https://conductor.test/api/metadata/workflow", { headers: { "x-api-key": `${user.keyId}:${user.keySecret}` } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get("www-authenticate")).toBeNull();
  });

  it("the bootstrap admin key works, and unknown routes are 404 once authenticated", async () => {
    expect((await api("GET", "/api/metadata/workflow")).status).toBe(200);
    const response = await api("GET", "/api/nothing-here");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ status: 404, error: "NOT_FOUND" });
  });
});
