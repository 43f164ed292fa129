import { SELF, env } from "cloudflare:test";
import { SignJWT, generateKeyPair, importJWK, type JWK } from "jose";
import { describe, expect, it, vi } from "vitest";
import { apiOk, register, startWorkflow, waitFor, waitForIndexRow } from "./helpers";
import { customProvider } from "../../src/worker/auth/custom";
import { isOutsideApplicationName, isOutsideReservedName } from "../../src/worker/auth/grants";
import { MAX_KEYS_TRIED_WITHOUT_KID, OAUTH_CLOCK_SKEW_SECONDS, oauthProvider } from "../../src/worker/auth/oauth";

/** Signs an access token as the local OAuth issuer of the tests (its JWKS is served by the target). */
async function issuerToken(claims: Record<string, unknown>, options: { issuer?: string; audience?: string; expiresIn?: string | number; key?: CryptoKey | Uint8Array; alg?: string; kid?: string } = {}): Promise<string> {
  const jwk = JSON.parse(env.OAUTH_TEST_PRIVATE_JWK) as JWK;
  const key = options.key ?? ((await importJWK(jwk, "RS256")) as CryptoKey);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? "RS256", kid: options.kid ?? "issuer-key-1" })
    .setIssuer(options.issuer ?? "https://issuer.test")
    .setAudience(options.audience ?? "edge-conductor-api")
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? "5m")
    .sign(key);
}

async function get(path: string, headers: Record<string, string>): Promise<{ status: number; body: { error?: string; message?: string; userId?: string; permissions?: string[] } }> {
  const response = await SELF.fetch(`https://conductor.test${path}`, { headers });
  return { status: response.status, body: (await response.json()) as { error?: string; message?: string } };
}

describe("external OAuth 2.0 / OIDC access tokens", () => {
  it("accepts the configured issuer's tokens: the subject is the user, the groups claim adds roles", async () => {
    await apiOk("POST", "/api/security/roles", { name: "oauth-readers", permissions: [{ action: "WORKFLOW_READ", scope: "*" }] }, 201);
    await apiOk("PUT", "/api/security/users/oidc-user-1/roles", { directPermissions: [{ action: "TASK_READ", scope: "*" }] });
    const token = await issuerToken({ sub: "oidc-user-1", groups: ["oauth-readers", "not-a-role"] });
    const me = await get("/api/security/permissions", { authorization: `Bearer ${token}` });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ userId: "oidc-user-1", permissions: ["WORKFLOW_READ", "TASK_READ"] });
    expect((await get("/api/metadata/workflow", { "x-authorization": token })).status).toBe(200);
    // Without the group, only the D1 assignment applies.
    const plain = await issuerToken({ sub: "oidc-user-1" });
    expect((await get("/api/metadata/workflow", { authorization: `Bearer ${plain}` })).status).toBe(403);
  });

  it("never lets an external identity act as an application: a subject named app:<id> holds none of its grants", async () => {
    const application = await apiOk<{ id: string }>("POST", "/api/applications", { name: "not-for-the-idp" });
    await apiOk("POST", `/api/applications/${application.id}/roles/USER_READ_ONLY`);
    const token = await issuerToken({ sub: `app:${application.id}` });
    const me = await get("/api/security/permissions", { authorization: `Bearer ${token}` });
    expect(me.body).toMatchObject({ userId: `app:${application.id}`, permissions: [] });
    expect((await get("/api/metadata/workflow", { authorization: `Bearer ${token}` })).status).toBe(403);
    // Nor does it see the application's own: not its per-target grants as "its own" (403, as anyone else's), nor, in
    // userInfo, its name, roles or applicationUser: it is an outside user holding nothing here.
    const appUser = `app:${application.id}`;
    await apiOk("POST", "/api/auth/authorization", { subject: { type: "USER", id: appUser }, target: { type: "SECRET_NAME", id: "PROD_DB_PASSWORD" }, access: ["READ"] });
    expect(await get(`/api/auth/subjects/USER/${encodeURIComponent(appUser)}/grants`, { authorization: `Bearer ${token}` })).toMatchObject({ status: 403, body: { error: "PERMISSION_DENIED" } });
    const info = await SELF.fetch("https://conductor.test/api/token/userInfo", { headers: { authorization: `Bearer ${token}` } });
    expect(await info.json()).toEqual({ id: appUser, name: appUser, uuid: appUser, applicationUser: false, roles: [], groups: [], permissions: [] });
    expect(isOutsideApplicationName({ userId: appUser, method: "custom" })).toBe(true);
    expect(isOutsideApplicationName({ userId: appUser, method: "api-key" })).toBe(false);
  });

  it("never lets an external identity named app:<id> or admin take the human tasks of that application, its groups, or the bootstrap admin", async () => {
    const application = await apiOk<{ id: string }>("POST", "/api/applications", { name: "approver-app" });
    const appUser = `app:${application.id}`;
    const groupId = `app-approvers-${crypto.randomUUID().slice(0, 8)}`;
    await apiOk("PUT", `/api/groups/${groupId}`, { description: "the application approves", roles: [] });
    await apiOk("POST", `/api/groups/${groupId}/users/${encodeURIComponent(appUser)}`);
    // The last two the impostor may see, reading their workflows (a role its provider vouches for): one open to such a
    // reader, which it is still refused (the claim would be recorded in the application's name), one the application's.
    const tasks: Array<{ assignee?: { user: string; userType: string }; impostor: string; roles?: string[] }> = [
      { assignee: { user: appUser, userType: "CONDUCTOR_USER" }, impostor: appUser },
      { assignee: { user: groupId, userType: "CONDUCTOR_GROUP" }, impostor: appUser },
      { assignee: { user: "admin", userType: "CONDUCTOR_USER" }, impostor: "admin" },
      { impostor: appUser, roles: ["USER_READ_ONLY"] },
      { assignee: { user: appUser, userType: "CONDUCTOR_USER" }, impostor: appUser, roles: ["USER_READ_ONLY"] },
    ];
    const started = await Promise.all(
      tasks.map(async ({ assignee }) => {
        const name = `app-approval-${crypto.randomUUID().slice(0, 8)}`;
        const assignments = assignee === undefined ? [] : [{ assignee, slaMinutes: 0 }];
        await register({ name, tasks: [{ name: "approve", taskReferenceName: "approve", type: "HUMAN", inputParameters: { __humanTaskDefinition: { assignments } } }] });
        const workflowId = await startWorkflow(name);
        const workflow = await waitFor(workflowId, (wf) => wf.tasks.some((task) => task.referenceTaskName === "approve" && task.status === "IN_PROGRESS"));
        await waitForIndexRow(workflowId, "RUNNING");
        return { workflowId, taskId: workflow.tasks.find((task) => task.referenceTaskName === "approve")!.taskId };
      }),
    );
    for (const [index, { assignee, impostor, roles }] of tasks.entries()) {
      const { workflowId, taskId } = started[index]!;
      const what = assignee?.user ?? "open";
      const token = { authorization: `Bearer ${await issuerToken({ sub: impostor, ...(roles ? { groups: roles } : {}) })}` };
      const post = (path: string, body?: unknown) => SELF.fetch(`https://conductor.test${path}`, { method: "POST", headers: { ...token, "content-type": "application/json" }, body: JSON.stringify(body ?? {}) });
      if (roles === undefined) {
        expect(await get(`/api/human/tasks/${taskId}`, token), `${what} read`).toMatchObject({ status: 403, body: { error: "PERMISSION_DENIED" } });
        const inbox = (await (await post("/api/human/tasks/search", { searchType: "INBOX", workflowIds: [workflowId] })).json()) as { results: unknown[] };
        expect(inbox.results, `${what} inbox`).toEqual([]);
      }
      expect((await post(`/api/human/tasks/${taskId}/claim`)).status, `${what} claim`).toBe(403);
      expect((await post(`/api/human/tasks/${taskId}/skip`)).status, `${what} skip`).toBe(403);
      expect((await post(`/api/human/tasks/${taskId}/update?complete=true`, { approved: true })).status, `${what} complete`).not.toBe(200);
      // Refused, it is still the application's (or the admin's) to take: unclaimed, assigned.
      const after = await apiOk<{ state: string; claimant?: unknown }>("GET", `/api/human/tasks/${taskId}`);
      expect([after.state, after.claimant], `${what} untouched`).toEqual(["ASSIGNED", undefined]);
    }
    expect(isOutsideReservedName({ userId: "admin", method: "oauth" })).toBe(true);
    expect(isOutsideReservedName({ userId: "admin", method: "api-key" })).toBe(false);
  });

  it("lists an outside user's own grants whatever the provider names them (Auth0's auth0|abc): none given here, []", async () => {
    const token = await issuerToken({ sub: "auth0|abc" });
    expect(await get(`/api/auth/subjects/USER/${encodeURIComponent("auth0|abc")}/grants`, { authorization: `Bearer ${token}` })).toEqual({ status: 200, body: [] });
  });

  it("takes the issuer's token until its exp: revoking it here answers 200 (RFC 7009) and changes nothing, as documented", async () => {
    const token = await issuerToken({ sub: "oidc-revoked" });
    const revoke = await SELF.fetch("https://conductor.test/api/security/token/revoke", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) });
    expect(revoke.status).toBe(200);
    expect(await get("/api/security/permissions", { authorization: `Bearer ${token}` })).toMatchObject({ status: 200, body: { userId: "oidc-revoked" } });
  });

  it("refuses expired tokens, another audience, a foreign key, an HS256 token made with the public key, and alg none", async () => {
    const expired = await issuerToken({ sub: "u" }, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
    expect(await get("/api/metadata/workflow", { authorization: `Bearer ${expired}` })).toMatchObject({ status: 401, body: { error: "EXPIRED_TOKEN" } });
    const audience = await issuerToken({ sub: "u" }, { audience: "someone-else" });
    expect(await get("/api/metadata/workflow", { authorization: `Bearer ${audience}` })).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
    const { privateKey } = await generateKeyPair("RS256");
    const foreign = await issuerToken({ sub: "u" }, { key: privateKey });
    expect(await get("/api/metadata/workflow", { authorization: `Bearer ${foreign}` })).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
    // Algorithm confusion: HS256 keyed with the issuer's public key material.
    const publicJwk = (await (await fetch(`${env.TARGET_URL}/jwks.json`)).json()) as { keys: JWK[] };
    const confused = await issuerToken({ sub: "admin" }, { alg: "HS256", key: new TextEncoder().encode(JSON.stringify(publicJwk.keys[0])) });
    expect(await get("/api/metadata/workflow", { authorization: `Bearer ${confused}` })).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
    const valid = await issuerToken({ sub: "admin" });
    const none = `${btoa(JSON.stringify({ alg: "none", kid: "issuer-key-1" })).replace(/=+$/, "")}.${valid.split(".")[1]}.`;
    expect(await get("/api/metadata/workflow", { authorization: `Bearer ${none}` })).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
    // A token that never expires is no key either.
    const jwk = JSON.parse(env.OAUTH_TEST_PRIVATE_JWK) as JWK;
    const endless = await new SignJWT({ sub: "u" })
      .setProtectedHeader({ alg: "RS256", kid: "issuer-key-1" })
      .setIssuer("https://issuer.test")
      .setAudience("edge-conductor-api")
      .sign((await importJWK(jwk, "RS256")) as CryptoKey);
    expect(await get("/api/metadata/workflow", { authorization: `Bearer ${endless}` })).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
    // Without a configured audience, any token the issuer made for any client would do: the issuer's tokens are refused.
    const withoutAudience = { ...env, OAUTH_AUDIENCE: undefined } as unknown as Env;
    const request = new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${await issuerToken({ sub: "u" }, { audience: "another-client" })}` } });
    await expect(oauthProvider.authenticate(request, withoutAudience)).rejects.toMatchObject({ status: 401, message: expect.stringContaining("OAUTH_AUDIENCE") });
    // Without OAUTH_JWKS_URL the issuer's tokens cannot be checked: refused as a malformed one is (409 naming it), not as
    // a token of no configured issuer; tokens of another issuer are left to the other providers as before.
    const withoutKeys = { ...env, OAUTH_JWKS_URL: undefined } as unknown as Env;
    const ofIssuer = new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${await issuerToken({ sub: "u" })}` } });
    await expect(oauthProvider.authenticate(ofIssuer, withoutKeys)).rejects.toMatchObject({ status: 409, code: "CONFLICT", message: expect.stringContaining("OAUTH_JWKS_URL is not set") });
    const ofAnother = new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${await issuerToken({ sub: "u" }, { issuer: "https://other.test" })}` } });
    expect(await oauthProvider.authenticate(ofAnother, withoutKeys)).toBeUndefined();
    // An external subject named like the bootstrap admin is not the bootstrap admin.
    expect(await get("/api/metadata/workflow", { authorization: `Bearer ${valid}` })).toMatchObject({ status: 403, body: { error: "PERMISSION_DENIED" } });
  });
});

describe("the issuer's clock", () => {
  /** A token of the local issuer whose `nbf` is `nbfAheadSeconds` from now and `exp` `expInSeconds` from now. */
  async function tokenAt(nbfAheadSeconds: number, expInSeconds: number): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const jwk = JSON.parse(env.OAUTH_TEST_PRIVATE_JWK) as JWK;
    return new SignJWT({ sub: "oidc-skewed" })
      .setProtectedHeader({ alg: "RS256", kid: "issuer-key-1" })
      .setIssuer("https://issuer.test")
      .setAudience("edge-conductor-api")
      .setIssuedAt(now + nbfAheadSeconds)
      .setNotBefore(now + nbfAheadSeconds)
      .setExpirationTime(now + expInSeconds)
      .sign((await importJWK(jwk, "RS256")) as CryptoKey);
  }

  it("takes a token whose nbf is a little ahead (an issuer's clock running ahead), up to the skew allowed, and says why past it", async () => {
    const ahead = await tokenAt(5, 300);
    expect(await get("/api/security/permissions", { authorization: `Bearer ${ahead}` })).toMatchObject({ status: 200, body: { userId: "oidc-skewed" } });
    const tooFar = await tokenAt(OAUTH_CLOCK_SKEW_SECONDS + 60, 600);
    const refused = await get("/api/security/permissions", { authorization: `Bearer ${tooFar}` });
    expect(refused).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
    expect(refused.body.message).toContain("not valid yet");
  });

  it("allows no skew on exp: a token expired seconds ago is expired", async () => {
    const justExpired = await tokenAt(-600, -5);
    expect(await get("/api/security/permissions", { authorization: `Bearer ${justExpired}` })).toMatchObject({ status: 401, body: { error: "EXPIRED_TOKEN" } });
  });
});

/** The local issuer's env, its keys fetched from `jwksUrl` instead (each URL is a key set of its own in the isolate). */
function issuerEnvWithKeysAt(jwksUrl: string): Env {
  return { ...env, OAUTH_JWKS_URL: jwksUrl } as unknown as Env;
}

/** How many requests the target server saw under `key`. */
async function targetHits(key: string): Promise<number> {
  return ((await (await fetch(`${env.TARGET_URL}/hits/${key}`)).json()) as { hits: number }).hits;
}

describe("the issuer's keys (JWKS) fetched", () => {
  it("answers 503 with Retry-After while they cannot be fetched, fetching them once for many requests", async () => {
    const key = `jwks-down-${crypto.randomUUID()}`;
    const down = issuerEnvWithKeysAt(`${env.TARGET_URL}/flaky/${key}?fail=1000`);
    const token = await issuerToken({ sub: "u" });
    for (let i = 0; i < 4; i++) {
      const request = new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${token}` } });
      // The token was never checked: a client told 401 would drop a token that may be good.
      await expect(oauthProvider.authenticate(request, down)).rejects.toMatchObject({ status: 503, code: "UNAVAILABLE", headers: { "Retry-After": "5" }, message: expect.stringContaining("could not be fetched") });
    }
    // jose's cooldown counts only from a successful fetch: without one after a failure each request fetched again.
    expect(await targetHits(key)).toBe(1);
  });

  it("logs a key set that could not be fetched without its URL's query (an issuer's key may ride in it), once per hold", async () => {
    const key = `jwks-down-logged-${crypto.randomUUID()}`;
    const down = issuerEnvWithKeysAt(`${env.TARGET_URL}/flaky/${key}?fail=1000&api_key=jwks-s3cret-value`);
    const token = await issuerToken({ sub: "u" });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await expect(oauthProvider.authenticate(new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${token}` } }), down)).rejects.toMatchObject({ status: 503 });
      const lines = logged.mock.calls.map(([line]) => String(line)).filter((line) => line.includes("could not be fetched"));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`/flaky/${key}?***`);
      expect(lines[0]).not.toContain("jwks-s3cret-value");
    } finally {
      logged.mockRestore();
    }
  });

  it("shares a fetch under way between the requests needing the keys: a slow issuer is asked once, not once per request", async () => {
    const key = `jwks-slow-${crypto.randomUUID()}`;
    const slow = issuerEnvWithKeysAt(`${env.TARGET_URL}/hold/${key}`);
    const token = await issuerToken({ sub: "u" });
    const attempt = () => oauthProvider.authenticate(new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${token}` } }), slow).then(() => undefined, (error: unknown) => error);
    const first = attempt();
    await vi.waitFor(async () => expect(await targetHits(key)).toBe(1));
    // Two more while the first fetch is held by the issuer: nothing before the fetch waits on I/O, so a task's turn
    // brings each to it.
    const others = [attempt(), attempt()];
    await new Promise((resolve) => setTimeout(resolve, 0));
    await fetch(`${env.TARGET_URL}/release/${key}`);
    // The held answer is no key set: each request is a 503, and the issuer saw one fetch.
    for (const outcome of await Promise.all([first, ...others])) expect(outcome).toMatchObject({ status: 503, code: "UNAVAILABLE" });
    expect(await targetHits(key)).toBe(1);
  });

  it("holds fetches back after a 200 that is no key set ({keys: [1]}) too: 503s, fetched once for many requests", async () => {
    const key = `jwks-garbage-${crypto.randomUUID()}`;
    const garbage = issuerEnvWithKeysAt(`${env.TARGET_URL}/jwks.json?garbage=1&hit=${key}`);
    const token = await issuerToken({ sub: "u" });
    for (let i = 0; i < 4; i++) {
      const request = new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${token}` } });
      await expect(oauthProvider.authenticate(request, garbage)).rejects.toMatchObject({ status: 503, code: "UNAVAILABLE", headers: { "Retry-After": "5" } });
    }
    expect(await targetHits(key)).toBe(1);
  });

  it("reads a key set up to 256 KiB: a larger one is refused unread (503), as one that could not be fetched", async () => {
    const token = await issuerToken({ sub: "oidc-user-size" });
    const request = () => new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${token}` } });
    const padded = issuerEnvWithKeysAt(`${env.TARGET_URL}/jwks.json?pad=200000&set=${crypto.randomUUID()}`);
    expect(await oauthProvider.authenticate(request(), padded)).toMatchObject({ userId: "oidc-user-size", method: "oauth" });
    const huge = issuerEnvWithKeysAt(`${env.TARGET_URL}/jwks.json?pad=300000&set=${crypto.randomUUID()}`);
    await expect(oauthProvider.authenticate(request(), huge)).rejects.toMatchObject({ status: 503, code: "UNAVAILABLE" });
  });

  it("refuses to fetch them in the clear: OAUTH_JWKS_URL not https (but to localhost), or no URL, is a 409 saying what to fix", async () => {
    const token = await issuerToken({ sub: "u" });
    const request = () => new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${token}` } });
    for (const jwksUrl of ["http://issuer.example/jwks.json", "ftp://issuer.example/jwks.json", "issuer.example/jwks.json"]) {
      await expect(oauthProvider.authenticate(request(), issuerEnvWithKeysAt(jwksUrl))).rejects.toMatchObject({ status: 409, code: "CONFLICT", message: expect.stringContaining("OAUTH_JWKS_URL") });
    }
    // Logged for the operator once per value, not on every token: two more requests with one value log it once.
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const once = issuerEnvWithKeysAt(`http://issuer-${crypto.randomUUID()}.example/jwks.json`);
      for (let i = 0; i < 2; i++) await expect(oauthProvider.authenticate(request(), once)).rejects.toMatchObject({ status: 409 });
      expect(logged.mock.calls.filter(([line]) => String(line).includes("OAUTH_JWKS_URL refused"))).toHaveLength(1);
    } finally {
      logged.mockRestore();
    }
    // The tests' issuer is http://127.0.0.1 (a loopback host), as an issuer run locally may be.
    expect(await oauthProvider.authenticate(request(), env as unknown as Env)).toMatchObject({ userId: "u" });
  });

  it("takes a token without kid when the set holds several keys of its type: each is tried", async () => {
    const jwk = JSON.parse(env.OAUTH_TEST_PRIVATE_JWK) as JWK;
    const withoutKid = await new SignJWT({ sub: "oidc-no-kid" })
      .setProtectedHeader({ alg: "RS256" })
      .setIssuer("https://issuer.test")
      .setAudience("edge-conductor-api")
      .setExpirationTime("5m")
      .sign((await importJWK(jwk, "RS256")) as CryptoKey);
    const rotating = issuerEnvWithKeysAt(`${env.TARGET_URL}/jwks.json?decoy=1&set=${crypto.randomUUID()}`);
    const request = (token: string) => new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${token}` } });
    expect(await oauthProvider.authenticate(request(withoutKid), rotating)).toMatchObject({ userId: "oidc-no-kid" });
    // Signed by neither key: still refused.
    const { privateKey } = await generateKeyPair("RS256");
    const foreign = await new SignJWT({ sub: "u" }).setProtectedHeader({ alg: "RS256" }).setIssuer("https://issuer.test").setAudience("edge-conductor-api").setExpirationTime("5m").sign(privateKey);
    await expect(oauthProvider.authenticate(request(foreign), rotating)).rejects.toMatchObject({ status: 401, code: "INVALID_TOKEN" });
  });

  it("checks a token without kid against the first few keys of its type only, not every key a large set holds", async () => {
    const jwk = JSON.parse(env.OAUTH_TEST_PRIVATE_JWK) as JWK;
    const withoutKid = await new SignJWT({ sub: "oidc-no-kid-bounded" })
      .setProtectedHeader({ alg: "RS256" })
      .setIssuer("https://issuer.test")
      .setAudience("edge-conductor-api")
      .setExpirationTime("5m")
      .sign((await importJWK(jwk, "RS256")) as CryptoKey);
    const request = () => new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${withoutKid}` } });
    // The issuer's key after three others is among the first four tried.
    const three = issuerEnvWithKeysAt(`${env.TARGET_URL}/jwks.json?decoy=${MAX_KEYS_TRIED_WITHOUT_KID - 1}&set=${crypto.randomUUID()}`);
    expect(await oauthProvider.authenticate(request(), three)).toMatchObject({ userId: "oidc-no-kid-bounded" });
    // After four others it is not reached: each key tried is a signature check a made-up token costs.
    const four = issuerEnvWithKeysAt(`${env.TARGET_URL}/jwks.json?decoy=${MAX_KEYS_TRIED_WITHOUT_KID}&set=${crypto.randomUUID()}`);
    await expect(oauthProvider.authenticate(request(), four)).rejects.toMatchObject({ status: 401, code: "INVALID_TOKEN" });
  });

  it("with OAUTH_TOKEN_TYPE=at+jwt takes only tokens typed so (RFC 9068), telling an access token from an ID token", async () => {
    const jwk = JSON.parse(env.OAUTH_TEST_PRIVATE_JWK) as JWK;
    const typed = async (typ: string | undefined) =>
      new SignJWT({ sub: "oidc-typed" })
        .setProtectedHeader(typ === undefined ? { alg: "RS256", kid: "issuer-key-1" } : { alg: "RS256", kid: "issuer-key-1", typ })
        .setIssuer("https://issuer.test")
        .setAudience("edge-conductor-api")
        .setExpirationTime("5m")
        .sign((await importJWK(jwk, "RS256")) as CryptoKey);
    const request = (token: string) => new Request("https://conductor.test/api/metadata/workflow", { headers: { authorization: `Bearer ${token}` } });
    const strict = { ...env, OAUTH_TOKEN_TYPE: "at+jwt" } as unknown as Env;
    expect(await oauthProvider.authenticate(request(await typed("at+jwt")), strict)).toMatchObject({ userId: "oidc-typed" });
    expect(await oauthProvider.authenticate(request(await typed("application/at+jwt")), strict)).toMatchObject({ userId: "oidc-typed" });
    for (const typ of ["JWT", undefined]) {
      await expect(oauthProvider.authenticate(request(await typed(typ)), strict)).rejects.toMatchObject({ status: 401, code: "INVALID_TOKEN" });
    }
    // Unset (the default), the type is not read.
    expect(await oauthProvider.authenticate(request(await typed("JWT")), env as unknown as Env)).toMatchObject({ userId: "oidc-typed" });
  });

  it("still refuses with 401 a token whose key id the issuer's keys do not hold", async () => {
    const madeUp = await issuerToken({ sub: "u" }, { kid: `made-up-${crypto.randomUUID()}` });
    expect(await get("/api/metadata/workflow", { authorization: `Bearer ${madeUp}` })).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
  });
});

describe("custom provider (service binding to examples/custom-auth-worker)", () => {
  it("asks the auth Worker who the request is; its roles apply; unknown requests are refused", async () => {
    await apiOk("POST", "/api/security/roles", { name: "deployers", permissions: [{ action: "METADATA_ADMIN", scope: "*" }] }, 201);
    const known = await get("/api/security/permissions", { "x-team-token": "team-token-1" });
    expect(known).toMatchObject({ status: 200, body: { userId: "build-bot", permissions: ["METADATA_ADMIN"] } });
    expect((await get("/api/metadata/workflow", { "x-team-token": "team-token-1" })).status).toBe(200);
    expect(await get("/api/metadata/workflow", { "x-team-token": "wrong" })).toMatchObject({ status: 401, body: { error: "UNAUTHENTICATED" } });
    expect(await get("/api/metadata/workflow", {})).toMatchObject({ status: 401, body: { error: "UNAUTHENTICATED" } });
  });

  it("answers 503 with Retry-After when the auth Worker fails (5xx) or does not answer in time: the request was not checked", async () => {
    // The binding stubbed at the network boundary: each call goes to the loopback target's route instead.
    const providerAt = (path: string) => ({ ...env, AUTH_SERVICE: { fetch: (_input: RequestInfo, init?: RequestInit) => fetch(`${env.TARGET_URL}${path}`, { signal: init?.signal ?? null }) } }) as unknown as Env;
    const request = () => new Request("https://conductor.test/api/metadata/workflow", { headers: { "x-team-token": "team-token-1" } });
    const unavailable = { status: 503, code: "UNAVAILABLE", headers: { "Retry-After": "5" }, message: expect.stringContaining("did not answer") };
    await expect(customProvider.authenticate(request(), providerAt("/status/502"))).rejects.toMatchObject(unavailable);
    // A provider that hangs held the request for as long as the client waited.
    await expect(customProvider.authenticate(request(), providerAt("/hang"))).rejects.toMatchObject(unavailable);
    // A 4xx other than 401 is a refusal, as before.
    await expect(customProvider.authenticate(request(), providerAt("/status/403"))).rejects.toMatchObject({ status: 401, code: "INVALID_TOKEN" });
  });

  it("logs a provider's own exception by its kind only: its message may quote the credential it was asked about", async () => {
    const credential = `session-${crypto.randomUUID()}`;
    // The binding stubbed at the network boundary as workerd delivers a callee's exception through a service binding:
    // its message kept and marked `remote` (seen with a real throwing Worker bound in a throwaway config).
    const throwing = (error: Error) => ({ ...env, AUTH_SERVICE: { fetch: async () => Promise.reject(error) } }) as unknown as Env;
    const remote = Object.assign(new Error(`session lookup failed for ${credential}`), { remote: true });
    const request = () => new Request("https://conductor.test/api/metadata/workflow", { headers: { "x-team-token": credential, cookie: `sid=${credential}` } });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await expect(customProvider.authenticate(request(), throwing(remote))).rejects.toMatchObject({ status: 503, code: "UNAVAILABLE" });
      // The runtime's own failure quotes nothing of the request: its message stays, for the operator.
      await expect(customProvider.authenticate(request(), throwing(new Error("Network connection lost.")))).rejects.toMatchObject({ status: 503 });
      const lines = logged.mock.calls.map((args) => args.map(String).join(" "));
      expect(lines).toHaveLength(2);
      for (const line of lines) expect(line).not.toContain(credential);
      expect(JSON.parse(lines[0]!)).toMatchObject({ msg: "custom auth provider unavailable", reason: expect.stringContaining("Error thrown by the provider") });
      expect(JSON.parse(lines[1]!)).toMatchObject({ msg: "custom auth provider unavailable", reason: "Error: Network connection lost." });
    } finally {
      logged.mockRestore();
    }
  });

  it("reads at most 64 KiB of the auth Worker's answer: a larger one names no one (401)", async () => {
    const answering = (body: unknown) => ({ ...env, AUTH_SERVICE: { fetch: async () => Response.json(body) } }) as unknown as Env;
    const request = () => new Request("https://conductor.test/api/metadata/workflow", { headers: { "x-team-token": "team-token-1" } });
    expect(await customProvider.authenticate(request(), answering({ userId: "sized-bot", pad: "x".repeat(60_000) }))).toMatchObject({ userId: "sized-bot", method: "custom" });
    await expect(customProvider.authenticate(request(), answering({ userId: "sized-bot", pad: "x".repeat(70_000) }))).rejects.toMatchObject({ status: 401, code: "INVALID_TOKEN" });
  });

  it("does not take a browser's request from another site to it (its credentials may be the user's cookies: CSRF)", async () => {
    const crossSite = await get("/api/metadata/workflow", { "x-team-token": "team-token-1", "sec-fetch-site": "cross-site" });
    expect(crossSite).toMatchObject({ status: 401, body: { error: "UNAUTHENTICATED", message: expect.stringContaining("another site") } });
    expect((await get("/api/metadata/workflow", { "x-team-token": "team-token-1", origin: "https://evil.example" })).status).toBe(401);
    // The service's own pages, and clients that are no browsers, are asked about as before.
    expect((await get("/api/metadata/workflow", { "x-team-token": "team-token-1", origin: "https://conductor.test", "sec-fetch-site": "same-origin" })).status).toBe(200);
    expect((await get("/api/metadata/workflow", { "x-team-token": "team-token-1" })).status).toBe(200);
  });
});
