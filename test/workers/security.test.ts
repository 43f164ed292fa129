import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { SignJWT, decodeJwt, decodeProtectedHeader, generateKeyPair, jwtVerify } from "jose";
import { describe, expect, it, vi } from "vitest";
import { matchApiPath } from "../../src/worker/auth/access-rules";
import { verifyAccessToken } from "../../src/worker/auth/tokens";
import type { IRequest } from "itty-router";
import { DefinitionRepository } from "../../src/worker/definitions";
import { checkedTaskName, guard } from "../../src/worker/guard";
import { GroupRepository } from "../../src/worker/security/groups";
import { SecurityStore, rolesUnchanged } from "../../src/worker/security/store";
import { authorizeRoles } from "../../src/worker/security/users";
import { PERMISSIONS } from "../../src/worker/auth/permissions";
import { peekJsonObject } from "../../src/worker/http/body";
import worker from "../../src/worker/index";
import { WorkflowExecution } from "../../src/actors/workflow-execution";
import { call, createUser, orkes, tokenFor, type Tokens } from "./auth-helpers";
import { ADMIN_KEY, api, apiOk, eventually, getWorkflow, hits, httpTask, register, rowCount, startWorkflow, storedByExecutionObject, target, waitFor, waitForIndexRow } from "./helpers";

/** The current signing key of the tests (see TEST_JWT_SIGNING_KEYS in vitest.config.ts). */
const TEST_KEY = new Uint8Array(32).fill(7);
const OLD_KEY = new Uint8Array(32).fill(9);

/** Calls the Worker directly with another configuration, as after `wrangler secret put`. */
async function callWithEnv(configured: Env, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] = "application/json";
  }
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(`https://conductor.test${path}`, init) as Parameters<typeof worker.fetch>[0], configured, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

const [adminKeyId, adminSecret] = ADMIN_KEY.split(":") as [string, string];

/**
 * The admin key as the service stretches it: PBKDF2-SHA256, 20,000 rounds (a change of either logs everyone out). The
 * signing key without JWT_SIGNING_KEYS, and the key of the bootstrap admin's session marker.
 */
async function stretchedKey(adminKey: string): Promise<Uint8Array> {
  const encoder = new TextEncoder();
  const material = await crypto.subtle.importKey("raw", encoder.encode(adminKey), "PBKDF2", false, ["deriveBits"]);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: encoder.encode("edge-conductor/jwt-signing-key"), iterations: 20_000 }, material, 256));
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * `env.DB` with `from` replaced by `to` in every statement prepared: a table that is not there makes D1 refuse the
 * statement, and with it its batch, as it refuses a write at a fault.
 */
function dbRewriting(from: string, to: string): D1Database {
  return new Proxy(env.DB, {
    get: (target, property) => {
      if (property === "prepare") return (sql: string) => target.prepare(sql.replace(from, to));
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * `env.DB` whose statements holding `sql` run `meanwhile` once their `first()` has read, before answering what it read:
 * a change landing between a request's read and what it does next.
 */
function dbActingAfterRead(sql: string, meanwhile: () => Promise<void>): D1Database {
  const actingAfterRead = (statement: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(statement, {
      get: (target, property) =>
        property === "bind"
          ? (...values: unknown[]) =>
              new Proxy(target.bind(...values), {
                get: (bound, name) =>
                  name === "first"
                    ? async () => {
                        const row = await bound.first();
                        await meanwhile();
                        return row;
                      }
                    : Reflect.get(bound, name, bound),
              })
          : Reflect.get(target, property, target),
    });
  return new Proxy(env.DB, {
    get: (target, property) => {
      if (property === "prepare") return (text: string) => (text.includes(sql) ? actingAfterRead(target.prepare(text)) : target.prepare(text));
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** POSTs `body` to `path` with D1 refusing the statement holding `from` (see {@link dbRewriting}): a 500, its log muted. */
async function expectServerErrorWhenRefused(from: string, to: string, path: string, body: unknown): Promise<void> {
  const errors = vi.spyOn(console, "error").mockImplementation(() => {});
  try {
    await expectStatus(await callWithEnv({ ...env, DB: dbRewriting(from, to) } as Env, "POST", path, {}, body), 500);
  } finally {
    errors.mockRestore();
  }
}

async function expectStatus(response: Response, status: number, error?: string) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  if (error) expect(JSON.parse(text)).toMatchObject({ status, error });
  return text;
}

describe("tokens", () => {
  it("the token endpoint exchanges an API key (JSON, /api/token alias, OAuth form, Basic) for tokens usable in either header", async () => {
    const tokens = await tokenFor(adminKeyId, adminSecret);
    expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    expect(tokens.token).toBe(tokens.access_token);
    await expectStatus(await call("GET", "/api/metadata/workflow", orkes(tokens.token)), 200);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(tokens.token)), 200);

    const alias = (await (await call("POST", "/api/token", {}, { keyId: adminKeyId, keySecret: adminSecret })).json()) as Tokens;
    await expectStatus(await call("GET", "/api/metadata/workflow", orkes(alias.token)), 200);

    const form = await call("POST", "/api/security/token", { "content-type": "application/x-www-form-urlencoded" }, `grant_type=client_credentials&client_id=${encodeURIComponent(adminKeyId)}&client_secret=${encodeURIComponent(adminSecret)}`);
    expect(((await form.json()) as Tokens).access_token).toMatch(/^ey/);
    const basic = await call("POST", "/api/security/token", { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`${adminKeyId}:${adminSecret}`)}` }, "grant_type=client_credentials");
    expect(basic.status).toBe(200);
    // Credentials, not a token: not INVALID_TOKEN, which a client takes from its token request as "ask again".
    await expectStatus(await call("POST", "/api/security/token", { "content-type": "application/x-www-form-urlencoded", authorization: "Basic %%%" }, "grant_type=client_credentials"), 401, "INVALID_CREDENTIALS");
  });

  it("refuses wrong credentials the same way whether the key exists or not", async () => {
    const user = await createUser("tok-user");
    const wrongSecret = await expectStatus(await call("POST", "/api/security/token", {}, { keyId: user.keyId, keySecret: "nope" }), 401, "INVALID_CREDENTIALS");
    const unknownKey = await expectStatus(await call("POST", "/api/security/token", {}, { keyId: crypto.randomUUID(), keySecret: "nope" }), 401, "INVALID_CREDENTIALS");
    expect(JSON.parse(wrongSecret).message).toBe(JSON.parse(unknownKey).message);
    await expectStatus(await call("POST", "/api/security/token", {}, { keyId: "only" }), 400, "VALIDATION_ERROR");
    await expectStatus(await call("POST", "/api/security/token", { "content-type": "application/x-www-form-urlencoded" }, "grant_type=password&username=a"), 400, "VALIDATION_ERROR");
  });

  it("refuses alg none, an HS/RS swap, expired, wrong issuer or audience, unknown kid and tampered tokens", async () => {
    // The bootstrap admin's tokens carry the marker of the key they were obtained with: copied from a real one.
    const { bak } = decodeJwt((await tokenFor(adminKeyId, adminSecret)).token);
    const good = await new SignJWT({ fam: "f", bak }).setProtectedHeader({ alg: "HS256", kid: "test-1" }).setSubject("admin").setIssuer("edge-conductor").setAudience("edge-conductor").setIssuedAt().setExpirationTime("5m").setJti(crypto.randomUUID()).sign(TEST_KEY);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(good)), 200);
    // Tokens signed with the older key of JWT_SIGNING_KEYS still verify (rotation without logging everyone out).
    const old = await new SignJWT({ bak }).setProtectedHeader({ alg: "HS256", kid: "old-1" }).setSubject("admin").setIssuer("edge-conductor").setAudience("edge-conductor").setExpirationTime("5m").setJti(crypto.randomUUID()).sign(OLD_KEY);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(old)), 200);

    const [header, payload] = good.split(".");
    const none = `${btoa(JSON.stringify({ alg: "none", kid: "test-1" })).replace(/=+$/, "")}.${payload}.`;
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(none)), 401, "INVALID_TOKEN");

    const { privateKey } = await generateKeyPair("RS256");
    const rs = await new SignJWT({}).setProtectedHeader({ alg: "RS256", kid: "test-1" }).setSubject("admin").setIssuer("edge-conductor").setAudience("edge-conductor").setExpirationTime("5m").setJti("x").sign(privateKey);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(rs)), 401, "INVALID_TOKEN");

    const sign = (build: (jwt: SignJWT) => SignJWT, key = TEST_KEY) => build(new SignJWT({}).setProtectedHeader({ alg: "HS256", kid: "test-1" }).setSubject("admin").setJti(crypto.randomUUID())).sign(key);
    const expired = await sign((jwt) => jwt.setIssuer("edge-conductor").setAudience("edge-conductor").setIssuedAt(Math.floor(Date.now() / 1000) - 7200).setExpirationTime(Math.floor(Date.now() / 1000) - 3600));
    const expiredBody = await expectStatus(await call("GET", "/api/metadata/workflow", bearer(expired)), 401, "EXPIRED_TOKEN");
    expect(JSON.parse(expiredBody).message).toMatch(/refresh/);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(await sign((jwt) => jwt.setIssuer("someone-else").setAudience("edge-conductor").setExpirationTime("5m")))), 401, "INVALID_TOKEN");
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(await sign((jwt) => jwt.setIssuer("edge-conductor").setAudience("other").setExpirationTime("5m")))), 401, "INVALID_TOKEN");
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(await sign((jwt) => jwt.setIssuer("edge-conductor").setAudience("edge-conductor").setExpirationTime("5m"), new Uint8Array(32).fill(1)))), 401, "INVALID_TOKEN");
    const unknownKid = await new SignJWT({}).setProtectedHeader({ alg: "HS256", kid: "nope" }).setSubject("admin").setIssuer("edge-conductor").setAudience("edge-conductor").setExpirationTime("5m").setJti("y").sign(TEST_KEY);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(unknownKid)), 401, "INVALID_TOKEN");
    // Tampered: another subject with the original signature.
    const tamperedPayload = btoa(JSON.stringify({ ...JSON.parse(atob(payload!.replace(/-/g, "+").replace(/_/g, "/"))), sub: "someone" })).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(`${header}.${tamperedPayload}.${good.split(".")[2]}`)), 401, "INVALID_TOKEN");
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer("not-a-jwt")), 401, "INVALID_TOKEN");
  });

  it("a token verified in its last second is not taken from the isolate's cache after its exp", async () => {
    const exp = Math.floor(Date.now() / 1000) + 60;
    const token = await new SignJWT({ fam: crypto.randomUUID() }).setProtectedHeader({ alg: "HS256", kid: "test-1" }).setSubject("cache-expiry-user").setIssuer("edge-conductor").setAudience("edge-conductor").setExpirationTime(exp).setJti(crypto.randomUUID()).sign(TEST_KEY);
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(exp * 1000 - 400);
      expect(await verifyAccessToken(env, token)).toMatchObject({ userId: "cache-expiry-user" });
      // Within the cache's second from that check, but past exp.
      vi.setSystemTime(exp * 1000 + 100);
      await expect(verifyAccessToken(env, token)).rejects.toMatchObject({ status: 401, code: "EXPIRED_TOKEN" });
    } finally {
      vi.useRealTimers();
    }
  });

  it("refresh rotates the refresh token; reusing an old one revokes the whole session", async () => {
    const first = await tokenFor(adminKeyId, adminSecret);
    const second = (await (await call("POST", "/api/security/token/refresh", {}, { refreshToken: first.refresh_token })).json()) as Tokens;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(second.token)), 200);
    // The OAuth form on the token endpoint works too.
    const third = await call("POST", "/api/security/token", { "content-type": "application/x-www-form-urlencoded" }, `grant_type=refresh_token&refresh_token=${encodeURIComponent(second.refresh_token)}`);
    const thirdTokens = (await third.json()) as Tokens;
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(thirdTokens.token)), 200);

    // Reuse of the first (already rotated) refresh token: refused, and every token of the session dies.
    await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken: first.refresh_token }), 401, "INVALID_TOKEN");
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(thirdTokens.token)), 401, "INVALID_TOKEN");
    await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken: thirdTokens.refresh_token }), 401, "INVALID_TOKEN");
    // Another session is unaffected.
    const other = await tokenFor(adminKeyId, adminSecret);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(other.token)), 200);
  });

  it("a refresh whose new token D1 refuses to write uses nothing up: the same refresh again rotates it, and the session lives on (it was claimed first, and the retry revoked the session as a reuse)", async () => {
    const session = await tokenFor(adminKeyId, adminSecret);
    // D1 refuses the new refresh token's insert, and with it its batch.
    await expectServerErrorWhenRefused("INSERT INTO refresh_tokens", "INSERT INTO no_such_table", "/api/security/token/refresh", { refreshToken: session.refresh_token });
    // The client sends the same refresh again: it is rotated, and the session's tokens, old and new, work.
    const rotated = JSON.parse(await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken: session.refresh_token }), 200)) as Tokens;
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(session.token)), 200);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(rotated.token)), 200);
    await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken: rotated.refresh_token }), 200);
  });

  describe("a refresh sent again within REFRESH_TOKEN_REUSE_GRACE_SECONDS (30 s by default)", () => {
    const refresh = (refreshToken: string, configured: Env = env) => callWithEnv(configured, "POST", "/api/security/token/refresh", {}, { refreshToken });
    /** The session's refresh rows and its revocation, as a refused request must leave them. */
    const sessionRows = async (family: string) => ({
      tokens: (await env.DB.prepare(`SELECT token_hash, used, create_time FROM refresh_tokens WHERE family_id = ? ORDER BY token_hash`).bind(family).all()).results,
      revoked: await rowCount(`revoked_tokens WHERE id = '${family}'`),
    });
    /** Moves the session's unused refresh token's write `ms` into the past, as the clock finds it that much later. */
    const writtenEarlier = (family: string, ms: number) => env.DB.prepare(`UPDATE refresh_tokens SET create_time = create_time - ? WHERE family_id = ? AND used = 0`).bind(ms, family).run();

    it("after its answer was lost is answered the same pair, writing nothing, and the session lives on; past the window the same resend revokes the session", async () => {
      const user = await createUser("grace-lost", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
      const family = decodeJwt(user.token).fam as string;
      // The exchange lands, but its answer never reaches the client (a timeout, a dropped connection, a proxy's 502): the
      // test reads it only to compare.
      const lost = JSON.parse(await expectStatus(await refresh(user.tokens.refresh_token), 200)) as Tokens;
      const written = await sessionRows(family);
      // The client sends the same refresh token again: the same pair, not a reuse (it revoked the session).
      const again = JSON.parse(await expectStatus(await refresh(user.tokens.refresh_token), 200)) as Tokens;
      expect({ token: again.token, refresh_token: again.refresh_token }).toEqual({ token: lost.token, refresh_token: lost.refresh_token });
      expect(again.expires_in).toBeGreaterThan(0);
      expect(await sessionRows(family)).toEqual(written);
      await expectStatus(await call("GET", "/api/metadata/workflow", bearer(again.token)), 200);
      await expectStatus(await call("GET", "/api/metadata/workflow", bearer(user.token)), 200);
      const next = JSON.parse(await expectStatus(await refresh(again.refresh_token), 200)) as Tokens;
      await expectStatus(await call("GET", "/api/metadata/workflow", bearer(next.token)), 200);

      // The same resend 31 s after the exchange it repeats: a reuse, and every token of the session stops working.
      await writtenEarlier(family, 31_000);
      const reuse = JSON.parse(await expectStatus(await refresh(again.refresh_token), 401, "INVALID_TOKEN")) as { message: string };
      expect(reuse.message).toMatch(/already used/);
      await expectStatus(await call("GET", "/api/metadata/workflow", bearer(next.token)), 401, "INVALID_TOKEN");
      await expectStatus(await refresh(next.refresh_token), 401, "INVALID_TOKEN");
      await expectStatus(await refresh(again.refresh_token), 401, "INVALID_TOKEN");
    });

    it("two at once with one refresh token (the second reading it unused, the first landing before its batch) are both answered the same pair, leaving one live refresh token", async () => {
      const user = await createUser("grace-concurrent", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
      const family = decodeJwt(user.token).fam as string;
      let first: Tokens | undefined;
      // The other exchange lands between this one's read of the token and its batch.
      const racing = dbActingAfterRead("SELECT family_id, user_id, key_id, expires_at, used FROM refresh_tokens", async () => {
        first ??= JSON.parse(await expectStatus(await refresh(user.tokens.refresh_token), 200)) as Tokens;
      });
      const second = JSON.parse(await expectStatus(await refresh(user.tokens.refresh_token, { ...env, DB: racing } as Env), 200)) as Tokens;
      expect(first).toBeDefined();
      expect({ token: second.token, refresh_token: second.refresh_token }).toEqual({ token: first!.token, refresh_token: first!.refresh_token });
      expect(await rowCount(`refresh_tokens WHERE family_id = '${family}' AND used = 0`)).toBe(1);
      await expectStatus(await call("GET", "/api/metadata/workflow", bearer(second.token)), 200);
      await expectStatus(await refresh(second.refresh_token), 200);
    });

    it("is refused, changing nothing, once the session was revoked (a logout) or with the bootstrap admin key rotated; after a signing key rotation it is the same pair; a session whose key stopped is refused for that; with 0 it is a reuse", async () => {
      // A logout after the exchange: the resend is refused as revoked, not answered.
      const loggedOut = await createUser("grace-logged-out");
      const loggedOutFamily = decodeJwt(loggedOut.token).fam as string;
      const lost = JSON.parse(await expectStatus(await refresh(loggedOut.tokens.refresh_token), 200)) as Tokens;
      await expectStatus(await call("POST", "/api/security/token/revoke", {}, { token: lost.refresh_token }), 200);
      const revoked = await sessionRows(loggedOutFamily);
      const refusal = JSON.parse(await expectStatus(await refresh(loggedOut.tokens.refresh_token), 401, "INVALID_TOKEN")) as { message: string };
      expect(refusal.message).toMatch(/revoked/);
      expect(await sessionRows(loggedOutFamily)).toEqual(revoked);

      // The bootstrap admin's session, its key rotated after the exchange: refused, and nothing changed (back on the key, it is answered).
      const admin = await tokenFor(adminKeyId, adminSecret);
      const adminFamily = decodeJwt(admin.token).fam as string;
      const adminLost = JSON.parse(await expectStatus(await refresh(admin.refresh_token), 200)) as Tokens;
      const adminRows = await sessionRows(adminFamily);
      await expectStatus(await refresh(admin.refresh_token, { ...env, BOOTSTRAP_ADMIN_KEY: "rotated-admin:a-brand-new-secret-0987654321" } as Env), 401, "INVALID_TOKEN");
      expect(await sessionRows(adminFamily)).toEqual(adminRows);
      expect((JSON.parse(await expectStatus(await refresh(admin.refresh_token), 200)) as Tokens).refresh_token).toBe(adminLost.refresh_token);

      // A new signing key put in front after the exchange: the resend is the same pair, its access token signed as it was.
      const rotatedKeys = { ...env, JWT_SIGNING_KEYS: `new-1:${Buffer.alloc(32, 5).toString("base64")},${env.JWT_SIGNING_KEYS}` } as Env;
      const keyed = await createUser("grace-key-rotated", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
      const keyedLost = JSON.parse(await expectStatus(await refresh(keyed.tokens.refresh_token), 200)) as Tokens;
      const keyedAgain = JSON.parse(await expectStatus(await refresh(keyed.tokens.refresh_token, rotatedKeys), 200)) as Tokens;
      expect({ token: keyedAgain.token, refresh_token: keyedAgain.refresh_token }).toEqual({ token: keyedLost.token, refresh_token: keyedLost.refresh_token });
      await expectStatus(await callWithEnv(rotatedKeys, "GET", "/api/metadata/workflow", bearer(keyedAgain.token)), 200);
      // The new key derives another successor: not written beside the first, which would fork the session in two.
      expect(await rowCount(`refresh_tokens WHERE family_id = '${decodeJwt(keyed.token).fam as string}' AND used = 0`)).toBe(1);

      // A session whose key stopped without its sessions revoked with it (a deactivation always revokes them; this is the
      // state a missed revocation would leave): refused for the key, nothing claimed nor written, not taken for a reuse.
      const stopped = await createUser("grace-key-stopped");
      const stoppedFamily = decodeJwt(stopped.token).fam as string;
      await env.DB.prepare(`UPDATE api_keys SET active = 0 WHERE key_id = ?`).bind(stopped.keyId).run();
      const stoppedRows = await sessionRows(stoppedFamily);
      const keyRefusal = JSON.parse(await expectStatus(await refresh(stopped.tokens.refresh_token), 401, "INVALID_TOKEN")) as { message: string };
      expect(keyRefusal.message).toMatch(/deleted or deactivated/);
      expect(await sessionRows(stoppedFamily)).toEqual(stoppedRows);

      // With the grace turned off, the resend is a reuse, as before it was added.
      const strict = await createUser("grace-off");
      await expectStatus(await refresh(strict.tokens.refresh_token), 200);
      await expectStatus(await refresh(strict.tokens.refresh_token, { ...env, REFRESH_TOKEN_REUSE_GRACE_SECONDS: "0" } as Env), 401, "INVALID_TOKEN");
      await expectStatus(await call("GET", "/api/metadata/workflow", bearer(strict.token)), 401, "INVALID_TOKEN");
    });

    it("gives a thief holding the exchanged token nothing live once the owner's key or user was deleted, and only the revoked access token once that was revoked; the owner's next exchange makes a later resend a reuse", async () => {
      const resendRefused = async (userId: string, end: (keyId: string) => Promise<unknown>) => {
        const owner = await createUser(userId, { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
        const family = decodeJwt(owner.token).fam as string;
        await expectStatus(await refresh(owner.tokens.refresh_token), 200);
        await end(owner.keyId);
        const rows = await sessionRows(family);
        const refusal = JSON.parse(await expectStatus(await refresh(owner.tokens.refresh_token), 401, "INVALID_TOKEN")) as { message: string };
        expect(refusal.message).toMatch(/revoked/);
        expect(await sessionRows(family)).toEqual(rows);
      };
      await resendRefused("grace-key-deleted", (keyId) => apiOk("DELETE", `/api/security/users/grace-key-deleted/api-keys/${keyId}`));
      await resendRefused("grace-user-deleted", () => apiOk("DELETE", "/api/users/grace-user-deleted"));

      // The access token the exchange gave, revoked alone: the resend answers that same token, which stays refused.
      const owner = await createUser("grace-access-revoked", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
      const given = JSON.parse(await expectStatus(await refresh(owner.tokens.refresh_token), 200)) as Tokens;
      await expectStatus(await call("POST", "/api/security/token/revoke", {}, { token: given.token }), 200);
      const replayed = JSON.parse(await expectStatus(await refresh(owner.tokens.refresh_token), 200)) as Tokens;
      expect(replayed.token).toBe(given.token);
      await expectStatus(await call("GET", "/api/metadata/workflow", bearer(replayed.token)), 401, "INVALID_TOKEN");
      // The owner refreshes on: the first token sent again within the window is now a reuse, not the used pair revived.
      const next = JSON.parse(await expectStatus(await refresh(given.refresh_token), 200)) as Tokens;
      const reuse = JSON.parse(await expectStatus(await refresh(owner.tokens.refresh_token), 401, "INVALID_TOKEN")) as { message: string };
      expect(reuse.message).toMatch(/already used/);
      await expectStatus(await call("GET", "/api/metadata/workflow", bearer(next.token)), 401, "INVALID_TOKEN");
    });
  });

  it("revoke takes effect immediately for access and refresh tokens, and answers 200 for unknown ones", async () => {
    const session = await tokenFor(adminKeyId, adminSecret);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(session.token)), 200);
    await expectStatus(await call("POST", "/api/security/token/revoke", {}, { token: session.token }), 200);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(session.token)), 401, "INVALID_TOKEN");

    const other = await tokenFor(adminKeyId, adminSecret);
    await expectStatus(await call("POST", "/api/security/token/revoke", { "content-type": "application/x-www-form-urlencoded" }, `token=${encodeURIComponent(other.refresh_token)}`), 200);
    await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken: other.refresh_token }), 401, "INVALID_TOKEN");
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(other.token)), 401, "INVALID_TOKEN");
    await expectStatus(await call("POST", "/api/security/token/revoke", {}, { token: "whatever" }), 200);
  });

  it("an access token's revocation D1 refuses is a 500, not a 200 with the token still working; sent again, it revokes it", async () => {
    const session = await tokenFor(adminKeyId, adminSecret);
    // D1 refuses the revocation's insert.
    const revocation = "INSERT OR REPLACE INTO revoked_tokens (id, kind, expires_at) VALUES (?, 'jti'";
    await expectServerErrorWhenRefused(revocation, revocation.replace("revoked_tokens", "no_such_table"), "/api/security/token/revoke", { token: session.token });
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(session.token)), 200);
    await expectStatus(await call("POST", "/api/security/token/revoke", {}, { token: session.token }), 200);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(session.token)), 401, "INVALID_TOKEN");
  });

  it("rotating or removing BOOTSTRAP_ADMIN_KEY ends the admin sessions obtained with the old key: refresh and access tokens are refused", async () => {
    const old = await tokenFor(adminKeyId, adminSecret);
    const rotatedKey = "rotated-admin:a-brand-new-secret-0987654321";
    const rotated = { ...env, BOOTSTRAP_ADMIN_KEY: rotatedKey } as Env;
    const removed = { ...env, BOOTSTRAP_ADMIN_KEY: "" } as Env;
    await expectStatus(await callWithEnv(rotated, "GET", "/api/metadata/workflow", { "x-api-key": ADMIN_KEY }), 401, "INVALID_CREDENTIALS");
    for (const configured of [rotated, removed]) {
      await expectStatus(await callWithEnv(configured, "POST", "/api/security/token/refresh", {}, { refreshToken: old.refresh_token }), 401, "INVALID_TOKEN");
      await expectStatus(await callWithEnv(configured, "GET", "/api/metadata/workflow", bearer(old.token)), 401, "INVALID_TOKEN");
    }
    // The new key's sessions work, refresh included; the old session was refused, not consumed: back on the old key it goes on.
    const [newId, newSecret] = rotatedKey.split(":") as [string, string];
    const fresh = await callWithEnv(rotated, "POST", "/api/security/token", {}, { keyId: newId, keySecret: newSecret });
    const freshTokens = JSON.parse(await expectStatus(fresh, 200)) as Tokens;
    await expectStatus(await callWithEnv(rotated, "GET", "/api/metadata/workflow", bearer(freshTokens.token)), 200);
    const refreshed = JSON.parse(await expectStatus(await callWithEnv(rotated, "POST", "/api/security/token/refresh", {}, { refreshToken: freshTokens.refresh_token }), 200)) as Tokens;
    await expectStatus(await callWithEnv(rotated, "GET", "/api/metadata/workflow", bearer(refreshed.token)), 200);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(refreshed.token)), 401, "INVALID_TOKEN");
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(old.token)), 200);
    await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken: old.refresh_token }), 200);
  });

  describe("the bootstrap admin's session marker (`bak`, and the key_id of its refresh tokens' rows)", () => {
    const encoder = new TextEncoder();
    const hexOf = (bytes: ArrayBuffer) => Buffer.from(bytes).toString("hex");
    /** What the service records now: 128 bits of an HMAC under the admin key stretched by PBKDF2 (as the derived signing key). */
    const stretchedMarker = async (adminKey: string) => {
      const macKey = await crypto.subtle.importKey("raw", await stretchedKey(adminKey), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      return `bootstrap:2:${hexOf(await crypto.subtle.sign("HMAC", macKey, encoder.encode("edge-conductor/bootstrap-session\u0000"))).slice(0, 32)}`;
    };
    /** What it recorded before: 64 bits of a plain SHA-256 of the admin key, a guess of which costs one hash to test. */
    const legacyMarker = async (adminKey: string) =>
      `bootstrap:${hexOf(await crypto.subtle.digest("SHA-256", encoder.encode(`edge-conductor/bootstrap-session\u0000${adminKey}`))).slice(0, 16)}`;
    const sha256Hex = async (text: string) => hexOf(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
    const recordedKeyId = async (refreshToken: string) =>
      (await env.DB.prepare(`SELECT key_id FROM refresh_tokens WHERE token_hash = ?`).bind(await sha256Hex(refreshToken)).first<{ key_id: string }>())?.key_id;
    const rotatedAdmin = { ...env, BOOTSTRAP_ADMIN_KEY: "rotated-admin:a-brand-new-secret-0987654321" } as Env;
    /** What a session started before the upgrade holds: a refresh token whose row records the old marker, unused. */
    const legacyRefreshToken = async (family: string) => {
      const refreshToken = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
      await env.DB.prepare(`INSERT INTO refresh_tokens (token_hash, family_id, user_id, expires_at, used, create_time, key_id) VALUES (?, ?, 'admin', ?, 0, ?, ?)`)
        .bind(await sha256Hex(refreshToken), family, Date.now() + 3_600_000, Date.now(), await legacyMarker(ADMIN_KEY))
        .run();
      return refreshToken;
    };

    it("is an HMAC under the PBKDF2-stretched admin key, not a SHA-256 of it, in the access token and the refresh token's row, the same with JWT_SIGNING_KEYS, without, and across its rotation", async () => {
      const expected = await stretchedMarker(ADMIN_KEY);
      const signingRotated = { ...env, JWT_SIGNING_KEYS: `new-1:${Buffer.alloc(32, 5).toString("base64")},${env.JWT_SIGNING_KEYS}` } as Env;
      for (const configured of [env, { ...env, JWT_SIGNING_KEYS: "" } as Env, signingRotated]) {
        const issued = JSON.parse(await expectStatus(await callWithEnv(configured, "POST", "/api/security/token", {}, { keyId: adminKeyId, keySecret: adminSecret }), 200)) as Tokens;
        const refreshed = JSON.parse(await expectStatus(await callWithEnv(configured, "POST", "/api/security/token/refresh", {}, { refreshToken: issued.refresh_token }), 200)) as Tokens;
        for (const tokens of [issued, refreshed]) {
          expect(decodeJwt(tokens.token).bak).toBe(expected);
          expect(await recordedKeyId(tokens.refresh_token)).toBe(expected);
        }
      }
      expect(expected).not.toBe(await legacyMarker(ADMIN_KEY));
    });

    it("a session from before it (the SHA-256 marker) goes on, continued under the new marker; rotating the admin key ends old and new sessions alike; no response or log line holds the key or the old marker", async () => {
      const logged = [vi.spyOn(console, "log"), vi.spyOn(console, "warn"), vi.spyOn(console, "error")];
      const bodies: string[] = [];
      const answered = async (response: Response, status: number, code?: string) => {
        const body = await expectStatus(response, status, code);
        bodies.push(body);
        return body;
      };
      try {
        const legacy = await legacyMarker(ADMIN_KEY);
        // What a session started before the upgrade holds: a refresh token whose row records the old marker, and an access token carrying it.
        const family = crypto.randomUUID();
        const refreshToken = await legacyRefreshToken(family);
        const accessToken = await new SignJWT({ fam: family, bak: legacy }).setProtectedHeader({ alg: "HS256", kid: "test-1" }).setSubject("admin").setIssuer("edge-conductor").setAudience("edge-conductor").setIssuedAt().setExpirationTime("5m").setJti(crypto.randomUUID()).sign(TEST_KEY);
        const current = await tokenFor(adminKeyId, adminSecret);
        // The admin key rotated: every one of them is refused, nothing consumed.
        for (const token of [accessToken, current.token]) await answered(await callWithEnv(rotatedAdmin, "GET", "/api/metadata/workflow", bearer(token)), 401, "INVALID_TOKEN");
        for (const token of [refreshToken, current.refresh_token]) await answered(await callWithEnv(rotatedAdmin, "POST", "/api/security/token/refresh", {}, { refreshToken: token }), 401, "INVALID_TOKEN");
        // On the key they were obtained with, the old session goes on, and its refresh records the new marker.
        await answered(await call("GET", "/api/metadata/workflow", bearer(accessToken)), 200);
        const continued = JSON.parse(await answered(await call("POST", "/api/security/token/refresh", {}, { refreshToken }), 200)) as Tokens;
        expect(decodeJwt(continued.token).bak).toBe(await stretchedMarker(ADMIN_KEY));
        expect(await recordedKeyId(continued.refresh_token)).toBe(await stretchedMarker(ADMIN_KEY));
        await answered(await call("GET", "/api/metadata/workflow", bearer(continued.token)), 200);
        // Which a rotation ends too.
        await answered(await callWithEnv(rotatedAdmin, "GET", "/api/metadata/workflow", bearer(continued.token)), 401, "INVALID_TOKEN");
        await answered(await callWithEnv(rotatedAdmin, "POST", "/api/security/token/refresh", {}, { refreshToken: continued.refresh_token }), 401, "INVALID_TOKEN");
        const lines = logged.flatMap((spy) => spy.mock.calls.map((args) => args.map(String).join(" ")));
        const tokenPayloads = bodies.flatMap((body) => (body.startsWith("{") && "token" in JSON.parse(body) ? [JSON.stringify(decodeJwt((JSON.parse(body) as Tokens).token))] : []));
        for (const text of [...bodies, ...tokenPayloads, ...lines]) {
          expect(text).not.toContain(adminSecret);
          expect(text).not.toContain(legacy.slice("bootstrap:".length));
        }
      } finally {
        for (const spy of logged) spy.mockRestore();
      }
    });

    it("an exchange of a refresh token holding the old marker, sent again within the grace window, is answered the same pair, under the new marker", async () => {
      const refreshToken = await legacyRefreshToken(crypto.randomUUID());
      const first = JSON.parse(await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken }), 200)) as Tokens;
      // Its answer lost, the client sends the same token again.
      const again = JSON.parse(await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken }), 200)) as Tokens;
      expect(again.refresh_token).toBe(first.refresh_token);
      expect(again.token).toBe(first.token);
      expect(decodeJwt(again.token).bak).toBe(await stretchedMarker(ADMIN_KEY));
      await expectStatus(await call("GET", "/api/metadata/workflow", bearer(again.token)), 200);
    });
  });

  it("reads ACCESS_TOKEN_TTL_SECONDS as digits only: \"1e3\" or \"0x10\" leaves the hour, as any value that is no whole number", async () => {
    const expiresIn = async (ttl: string) => {
      const configured = { ...env, ACCESS_TOKEN_TTL_SECONDS: ttl } as Env;
      return (JSON.parse(await expectStatus(await callWithEnv(configured, "POST", "/api/security/token", {}, { keyId: adminKeyId, keySecret: adminSecret }), 200)) as Tokens).expires_in;
    };
    expect(await expiresIn("900")).toBe(900);
    expect(await expiresIn("1e3")).toBe(3600);
    expect(await expiresIn("0x10")).toBe(3600);
    expect(await expiresIn("soon")).toBe(3600);
  });

  it("a malformed JWT_SIGNING_KEYS refuses the requests that need a signing key with a 409 saying what to fix, never a 500", async () => {
    const session = await tokenFor(adminKeyId, adminSecret);
    const secret = Buffer.alloc(16, 3).toString("base64");
    for (const [keys, problem] of [["no-separator", /entry 1 of JWT_SIGNING_KEYS is not kid:base64secret/], [`test-1:${Buffer.alloc(32, 7).toString("base64")},k2:${secret}`, /entry 2 is shorter than 32 bytes/], ["k1:not*base64", /entry 1 is not base64/]] as const) {
      const configured = { ...env, JWT_SIGNING_KEYS: keys } as Env;
      for (const response of [
        await callWithEnv(configured, "POST", "/api/security/token", {}, { keyId: adminKeyId, keySecret: adminSecret }),
        await callWithEnv(configured, "POST", "/api/security/token/refresh", {}, { refreshToken: session.refresh_token }),
        await callWithEnv(configured, "GET", "/api/metadata/workflow", bearer(session.token)),
      ]) {
        const body = JSON.parse(await expectStatus(response, 409, "CONFLICT")) as { message: string };
        expect(body.message).toMatch(problem);
        expect(body.message).not.toContain(secret);
      }
      // API keys need no signing key: they still work.
      await expectStatus(await callWithEnv(configured, "GET", "/api/metadata/workflow", { "x-api-key": ADMIN_KEY }), 200);
    }
    // The session was refused, not consumed: with the keys fixed it goes on.
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(session.token)), 200);
    await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken: session.refresh_token }), 200);
  });

  it("a rotation that keeps the kid (the new key in front of the old one under one kid) keeps the old key's tokens working and signs new ones with the new key", async () => {
    const session = await tokenFor(adminKeyId, adminSecret);
    const newKey = new Uint8Array(32).fill(5);
    const configured = { ...env, JWT_SIGNING_KEYS: `test-1:${Buffer.from(newKey).toString("base64")},test-1:${Buffer.from(TEST_KEY).toString("base64")}` } as Env;
    // Signed with the old key (test-1 of the tests' configuration) before the rotation: still a session.
    await expectStatus(await callWithEnv(configured, "GET", "/api/metadata/workflow", bearer(session.token)), 200);
    const rotated = JSON.parse(await expectStatus(await callWithEnv(configured, "POST", "/api/security/token/refresh", {}, { refreshToken: session.refresh_token }), 200)) as Tokens;
    await expect(jwtVerify(rotated.token, newKey)).resolves.toBeDefined();
    await expectStatus(await callWithEnv(configured, "GET", "/api/metadata/workflow", bearer(rotated.token)), 200);
    // A key of that kid that is not configured signs nothing valid.
    const { bak } = decodeJwt(session.token);
    const foreign = await new SignJWT({ bak }).setProtectedHeader({ alg: "HS256", kid: "test-1" }).setSubject("admin").setIssuer("edge-conductor").setAudience("edge-conductor").setExpirationTime("5m").setJti(crypto.randomUUID()).sign(new Uint8Array(32).fill(1));
    await expectStatus(await callWithEnv(configured, "GET", "/api/metadata/workflow", bearer(foreign)), 401, "INVALID_TOKEN");
    // Revoking one signed with the second key of the kid finds it too (a token it cannot verify is ignored, RFC 7009).
    await expectStatus(await callWithEnv(configured, "POST", "/api/security/token/revoke", {}, { token: session.token }), 200);
    await expectStatus(await callWithEnv(configured, "GET", "/api/metadata/workflow", bearer(session.token)), 401, "INVALID_TOKEN");
  });

  it("deleting an API key ends the sessions obtained with it (access and refresh tokens); the user's other keys keep theirs", async () => {
    const user = await createUser("rbac-leaked", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    const rotated = (await (await call("POST", "/api/security/token/refresh", {}, { refreshToken: user.tokens.refresh_token })).json()) as Tokens;
    const otherKey = await apiOk<{ keyId: string; keySecret: string }>("POST", "/api/security/users/rbac-leaked/api-keys", undefined, 201);
    const other = await tokenFor(otherKey.keyId, otherKey.keySecret);
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(rotated.token)), 200);

    await apiOk("DELETE", `/api/security/users/rbac-leaked/api-keys/${user.keyId}`);
    await expectStatus(await call("GET", "/api/metadata/workflow", { "x-api-key": user.apiKey }), 401, "INVALID_CREDENTIALS");
    await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken: rotated.refresh_token }), 401, "INVALID_TOKEN");
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(user.token)), 401, "INVALID_TOKEN");
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(rotated.token)), 401, "INVALID_TOKEN");
    // The session of the key that still exists goes on, refresh included.
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(other.token)), 200);
    const refreshed = (await (await call("POST", "/api/security/token/refresh", {}, { refreshToken: other.refresh_token })).json()) as Tokens;
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(refreshed.token)), 200);
  });

  it("a token found valid while its session was being revoked in this isolate is not kept as valid: the next request is refused", async () => {
    const user = await createUser("rbac-raced", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    // The revocation (the key deleted, its sessions ended, this isolate's verified tokens forgotten) lands between a
    // request's read of revoked_tokens, which found none, and the end of its check.
    const racingDb = dbActingAfterRead("FROM revoked_tokens WHERE id IN", async () => {
      await apiOk("DELETE", `/api/security/users/rbac-raced/api-keys/${user.keyId}`);
    });
    // The request that read before the revocation goes on with what it read.
    expect((await verifyAccessToken({ ...env, DB: racingDb }, user.token)).userId).toBe("rbac-raced");
    await expectStatus(await call("GET", "/api/metadata/workflow", bearer(user.token)), 401, "INVALID_TOKEN");
  });

  it("each token issued prunes a few token rows past use (refresh rows once their access token has expired too, revocations past their expiry), keeping the rest", async () => {
    const now = Date.now();
    const hour = 3_600_000;
    const rows: D1PreparedStatement[] = [];
    // 25 refresh rows expired a day ago (their access tokens, an hour long, long gone), as many revocations two hours past
    // theirs (past the hour of grace).
    for (let i = 0; i < 25; i++) {
      rows.push(env.DB.prepare(`INSERT INTO refresh_tokens (token_hash, family_id, user_id, expires_at, used, create_time, key_id) VALUES (?, ?, 'pruned', ?, 1, ?, NULL)`).bind(`old-${i}`, `old-family-${i}`, now - 24 * hour, now - 25 * hour));
      rows.push(env.DB.prepare(`INSERT INTO revoked_tokens (id, kind, expires_at) VALUES (?, 'jti', ?)`).bind(`old-jti-${i}`, now - 2 * hour));
    }
    // Kept: a refresh row expired a minute ago (an access token issued with it may live on), live rows, a live revocation.
    rows.push(env.DB.prepare(`INSERT INTO refresh_tokens (token_hash, family_id, user_id, expires_at, used, create_time, key_id) VALUES ('recent', 'recent-family', 'pruned', ?, 0, ?, NULL)`).bind(now - 60_000, now - hour));
    rows.push(env.DB.prepare(`INSERT INTO revoked_tokens (id, kind, expires_at) VALUES ('live-jti', 'jti', ?)`).bind(now + hour));
    await env.DB.batch(rows);

    await tokenFor(adminKeyId, adminSecret);
    const count = async (sql: string) => (await env.DB.prepare(sql).first<{ n: number }>())!.n;
    // At most 20 of each per token: a backlog goes over the next ones.
    expect(await count(`SELECT COUNT(*) AS n FROM refresh_tokens WHERE token_hash LIKE 'old-%'`)).toBe(5);
    expect(await count(`SELECT COUNT(*) AS n FROM revoked_tokens WHERE id LIKE 'old-jti-%'`)).toBe(5);
    const second = await tokenFor(adminKeyId, adminSecret);
    expect(await count(`SELECT COUNT(*) AS n FROM refresh_tokens WHERE token_hash LIKE 'old-%'`)).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM revoked_tokens WHERE id LIKE 'old-jti-%'`)).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM refresh_tokens WHERE token_hash = 'recent'`)).toBe(1);
    expect(await count(`SELECT COUNT(*) AS n FROM revoked_tokens WHERE id = 'live-jti'`)).toBe(1);
    // The two sessions just issued are there and work.
    expect(await count(`SELECT COUNT(*) AS n FROM refresh_tokens WHERE user_id = 'admin' AND create_time >= ${now}`)).toBe(2);
    await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken: second.refresh_token }), 200);
  });

  it("a revocation just past its expiry is not pruned: a refresh that raced it (its row written after) stays refused", async () => {
    const user = await createUser("prune-raced");
    const family = decodeJwt(user.token).fam as string;
    // As such a race leaves it, the revocation's time run out a second ago: the session's refresh row, written just after
    // the revocation marked the others used, is unused and outlives it by the race's length.
    await env.DB.prepare(`INSERT INTO revoked_tokens (id, kind, expires_at) VALUES (?, 'family', ?)`).bind(family, Date.now() - 1000).run();
    await tokenFor(adminKeyId, adminSecret);
    expect(await rowCount(`revoked_tokens WHERE id = '${family}'`)).toBe(1);
    await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken: user.tokens.refresh_token }), 401, "INVALID_TOKEN");
  });

  it("a token request whose pruning of token rows fails still issues its session", async () => {
    // D1 refuses the revocations' delete, and with it its batch.
    const failingPrune = dbRewriting("DELETE FROM revoked_tokens", "DELETE FROM no_such_table");
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const configured = { ...env, DB: failingPrune } as Env;
      const tokens = JSON.parse(await expectStatus(await callWithEnv(configured, "POST", "/api/security/token", {}, { keyId: adminKeyId, keySecret: adminSecret }), 200)) as Tokens;
      expect(errors).toHaveBeenCalledWith(expect.stringContaining("token rows not pruned"));
      await expectStatus(await call("GET", "/api/metadata/workflow", bearer(tokens.token)), 200);
      await expectStatus(await call("POST", "/api/security/token/refresh", {}, { refreshToken: tokens.refresh_token }), 200);
    } finally {
      errors.mockRestore();
    }
  });

  it("an API key id longer than any key's is unknown without a lookup: nothing read from D1 nor cached for it, from a header or a token request", async () => {
    let keyReads = 0;
    const counting = new Proxy(env.DB, {
      get: (target, property) =>
        property === "prepare"
          ? (sql: string) => {
              if (sql.includes("FROM api_keys WHERE key_id")) keyReads++;
              return target.prepare(sql);
            }
          : Reflect.get(target, property, target),
    });
    // As long as a header allows (128 KB on Cloudflare), or a token request's body: each would have been an entry of
    // the isolate's key cache, asked for before any authentication.
    const long = "k".repeat(100_000);
    expect(await new SecurityStore(counting).verifyApiKey(long, "secret")).toBeUndefined();
    expect(keyReads).toBe(0);
    // An unknown id of a key's length is looked up (and its absence kept for a second) as before.
    expect(await new SecurityStore(counting).verifyApiKey(crypto.randomUUID(), "secret")).toBeUndefined();
    expect(keyReads).toBe(1);
    await expectStatus(await call("GET", "/api/metadata/workflow", { "x-api-key": `${long}:secret` }), 401, "INVALID_CREDENTIALS");
    await expectStatus(await call("POST", "/api/security/token", {}, { keyId: long, keySecret: "secret" }), 401, "INVALID_CREDENTIALS");
  });
});

describe("tokens signed with a key derived from BOOTSTRAP_ADMIN_KEY (no JWT_SIGNING_KEYS)", () => {
  const derived = () => ({ ...env, JWT_SIGNING_KEYS: "" }) as Env;
  const encoder = new TextEncoder();
  /** The key derived before (HKDF, two HMACs a guess), which signed the tokens issued until the upgrade. */
  const legacyKey = async (adminKey: string) => {
    const material = await crypto.subtle.importKey("raw", encoder.encode(adminKey), "HKDF", false, ["deriveBits"]);
    return new Uint8Array(await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt: encoder.encode("edge-conductor"), info: encoder.encode("jwt-signing-key") }, material, 256));
  };
  const issued = async (configured: Env, keyId: string, keySecret: string) =>
    JSON.parse(await expectStatus(await callWithEnv(configured, "POST", "/api/security/token", {}, { keyId, keySecret }), 200)) as Tokens;
  const sha256Hex = async (text: string) => Buffer.from(await crypto.subtle.digest("SHA-256", encoder.encode(text))).toString("hex");

  it("new tokens are signed with the admin key stretched by PBKDF2, not with the fast HKDF derivation a user's token let anyone test guesses of the admin key against", async () => {
    const configured = derived();
    const user = await createUser("derived-signer", { roles: ["ADMIN"] });
    for (const tokens of [await issued(configured, adminKeyId, adminSecret), await issued(configured, user.keyId, user.keySecret)]) {
      expect(decodeProtectedHeader(tokens.token).kid).toBe("derived-2");
      await jwtVerify(tokens.token, await stretchedKey(ADMIN_KEY), { algorithms: ["HS256"] });
      await expect(jwtVerify(tokens.token, await legacyKey(ADMIN_KEY), { algorithms: ["HS256"] })).rejects.toThrow();
      await expectStatus(await callWithEnv(configured, "GET", "/api/metadata/workflow", bearer(tokens.token)), 200);
      // A refresh signs with it too.
      const refreshed = JSON.parse(await expectStatus(await callWithEnv(configured, "POST", "/api/security/token/refresh", {}, { refreshToken: tokens.refresh_token }), 200)) as Tokens;
      expect(decodeProtectedHeader(refreshed.token).kid).toBe("derived-2");
      await jwtVerify(refreshed.token, await stretchedKey(ADMIN_KEY), { algorithms: ["HS256"] });
    }
  });

  it("an access token signed with the HKDF-derived key before the upgrade still verifies until its exp, then is EXPIRED_TOKEN; its refresh token refreshes into a token of the new key", async () => {
    const configured = derived();
    const user = await createUser("derived-legacy", { roles: ["ADMIN"] });
    const tokens = await issued(configured, user.keyId, user.keySecret);
    // The same claims, as the service signed them before: kid derived-1 under the HKDF key.
    const claims = decodeJwt(tokens.token);
    const signedBefore = async (changed: Record<string, number>) => new SignJWT({ ...claims, ...changed }).setProtectedHeader({ alg: "HS256", kid: "derived-1", typ: "JWT" }).sign(await legacyKey(ADMIN_KEY));
    const legacy = await signedBefore({});
    await expectStatus(await callWithEnv(configured, "GET", "/api/metadata/workflow", bearer(legacy)), 200);
    const expired = await signedBefore({ exp: Math.floor(Date.now() / 1000) - 10 });
    await expectStatus(await callWithEnv(configured, "GET", "/api/metadata/workflow", bearer(expired)), 401, "EXPIRED_TOKEN");
    // Under another admin key the old derivation is another key: the token is refused, as any of a rotated admin key.
    // (Another token of the same claims: a verified one is kept for a second, whatever the configuration.)
    const otherAdmin = { ...configured, BOOTSTRAP_ADMIN_KEY: "other-admin:another-secret-of-32-characters-at-least" } as Env;
    const underOld = await signedBefore({ iat: claims.iat! - 1 });
    await expectStatus(await callWithEnv(otherAdmin, "GET", "/api/metadata/workflow", bearer(underOld)), 401, "INVALID_TOKEN");
    const refreshed = JSON.parse(await expectStatus(await callWithEnv(configured, "POST", "/api/security/token/refresh", {}, { refreshToken: tokens.refresh_token }), 200)) as Tokens;
    expect(decodeProtectedHeader(refreshed.token).kid).toBe("derived-2");
  });

  it("an exchange made before the upgrade (its successor a MAC under the HKDF-derived key) sent again within the grace window is answered that successor, not revoked as a reuse", async () => {
    const configured = derived();
    const user = await createUser("derived-replay", { roles: ["ADMIN"] });
    const exchanged = (await issued(configured, user.keyId, user.keySecret)).refresh_token;
    const row = await env.DB.prepare(`SELECT family_id, key_id, expires_at FROM refresh_tokens WHERE token_hash = ?`).bind(await sha256Hex(exchanged)).first<{ family_id: string; key_id: string; expires_at: number }>();
    // What the exchange before the upgrade wrote: the exchanged token used, its successor (HMAC under the HKDF key) unused.
    const macKey = await crypto.subtle.importKey("raw", await legacyKey(ADMIN_KEY), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", macKey, encoder.encode(`edge-conductor/refresh-token-successor\u0000${exchanged}`)));
    const successor = Buffer.from(mac).toString("base64url");
    await env.DB.batch([
      env.DB.prepare(`UPDATE refresh_tokens SET used = 1 WHERE token_hash = ?`).bind(await sha256Hex(exchanged)),
      env.DB.prepare(`INSERT INTO refresh_tokens (token_hash, family_id, user_id, expires_at, used, create_time, key_id) VALUES (?, ?, ?, ?, 0, ?, ?)`).bind(
        await sha256Hex(successor),
        row!.family_id,
        "derived-replay",
        row!.expires_at,
        Date.now(),
        row!.key_id,
      ),
    ]);
    const replayed = JSON.parse(await expectStatus(await callWithEnv(configured, "POST", "/api/security/token/refresh", {}, { refreshToken: exchanged }), 200)) as Tokens;
    expect(replayed.refresh_token).toBe(successor);
    expect(await rowCount(`revoked_tokens WHERE id = '${row!.family_id}'`)).toBe(0);
    // The successor goes on, into tokens of the new key.
    const next = JSON.parse(await expectStatus(await callWithEnv(configured, "POST", "/api/security/token/refresh", {}, { refreshToken: successor }), 200)) as Tokens;
    expect(decodeProtectedHeader(next.token).kid).toBe("derived-2");
  });

  it("a short admin key secret is logged once, never its value, while it signs the tokens; a long one, or one beside JWT_SIGNING_KEYS, is not", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const warnings = () => logged.mock.calls.map(([line]) => String(line)).filter((line) => line.includes("BOOTSTRAP_ADMIN_KEY is short"));
      const weak = { ...derived(), BOOTSTRAP_ADMIN_KEY: "ops:changeme" } as Env;
      await expectStatus(await callWithEnv(weak, "GET", "/api/metadata/workflow", { "x-api-key": "ops:changeme" }), 200);
      await expectStatus(await callWithEnv(weak, "GET", "/api/metadata/workflow", { "x-api-key": "ops:changeme" }), 200);
      expect(warnings()).toHaveLength(1);
      expect(JSON.parse(warnings()[0]!)).toMatchObject({ msg: expect.stringContaining("BOOTSTRAP_ADMIN_KEY is short and signs the tokens"), keySecretLength: 8 });
      expect(warnings()[0]).not.toContain("changeme");
      logged.mockClear();
      const strong = { ...derived(), BOOTSTRAP_ADMIN_KEY: `ops:${"k".repeat(32)}` } as Env;
      await expectStatus(await callWithEnv(strong, "GET", "/api/metadata/workflow", { "x-api-key": `ops:${"k".repeat(32)}` }), 200);
      const signedApart = { ...env, BOOTSTRAP_ADMIN_KEY: "ops:changeme" } as Env;
      await expectStatus(await callWithEnv(signedApart, "GET", "/api/metadata/workflow", { "x-api-key": "ops:changeme" }), 200);
      expect(warnings()).toEqual([]);
    } finally {
      logged.mockRestore();
    }
  });

  it("a webhook delivery, whose calls are counted through an env of its own, logs the short admin key no more than once per isolate", async () => {
    // It only starts a workflow: a webhook completing waiting tasks looks for them again for 5 s after each event.
    await register({ name: "bootkey_started", tasks: [{ name: "s", taskReferenceName: "s", type: "SET_VARIABLE", inputParameters: { seen: true } }] });
    const webhook = await apiOk<{ id: string }>("POST", "/api/metadata/webhook", { name: "bootkey-hook", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: {}, workflowsToStart: { bootkey_started: 1 } });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const warnings = () => logged.mock.calls.map(([line]) => String(line)).filter((line) => line.includes("BOOTSTRAP_ADMIN_KEY is short"));
      const weak = { ...derived(), BOOTSTRAP_ADMIN_KEY: "ops:changeme" } as Env;
      for (let delivery = 0; delivery < 2; delivery++) await expectStatus(await callWithEnv(weak, "POST", `/webhook/${webhook.id}`, { "X-Token": "t" }, {}), 200);
      expect(warnings()).toHaveLength(1);
    } finally {
      logged.mockRestore();
    }
  });
});

describe("RBAC", () => {
  it("a user's permissions come from roles plus direct grants, and a change applies on the next request", async () => {
    const user = await createUser("rbac-alice");
    const denied = await expectStatus(await call("GET", "/api/metadata/workflow", orkes(user.token)), 403, "PERMISSION_DENIED");
    expect(JSON.parse(denied).message).toContain("WORKFLOW_READ");
    await apiOk("POST", "/api/security/roles", { name: "rbac-reader", description: "reads", permissions: [{ action: "WORKFLOW_READ", scope: "*" }] }, 201);
    await apiOk("PUT", "/api/security/users/rbac-alice/roles", { roles: ["rbac-reader"] });
    await expectStatus(await call("GET", "/api/metadata/workflow", orkes(user.token)), 200);
    await expectStatus(await call("POST", "/api/metadata/workflow", { "x-api-key": user.apiKey }, { name: "x", tasks: [] }), 403, "PERMISSION_DENIED");
    // Changing the role changes what its holders may do.
    await apiOk("PUT", "/api/security/roles/rbac-reader", { permissions: [{ action: "METADATA_ADMIN", scope: "*" }] });
    await expectStatus(await call("GET", "/api/metadata/workflow", orkes(user.token)), 200);
    await expectStatus(await call("POST", "/api/metadata/workflow", { "x-api-key": user.apiKey }, { name: "rbac_ok", tasks: [httpTask("a", { uri: target("/echo/a"), method: "GET" })] }), 200);
    await apiOk("PUT", "/api/security/users/rbac-alice/roles", { roles: [], directPermissions: [] });
    await expectStatus(await call("GET", "/api/metadata/workflow", orkes(user.token)), 403, "PERMISSION_DENIED");
    // Deleting the key stops it at once.
    await apiOk("DELETE", `/api/security/users/rbac-alice/api-keys/${user.keyId}`);
    await expectStatus(await call("GET", "/api/metadata/workflow", { "x-api-key": user.apiKey }), 401, "INVALID_CREDENTIALS");
  });

  it("WORKFLOW_READ on one workflow's scope: only those executions are readable and searchable", async () => {
    await register({ name: "scoped_orders", tasks: [httpTask("a", { uri: target("/echo/o"), method: "GET" })] });
    await register({ name: "scoped_payroll", tasks: [httpTask("a", { uri: target("/echo/p"), method: "GET" })] });
    const orders = await startWorkflow("scoped_orders");
    const payroll = await startWorkflow("scoped_payroll");
    const user = await createUser("rbac-bob", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:scoped_orders" }] });
    await expectStatus(await call("GET", `/api/workflow/${orders}`, orkes(user.token)), 200);
    const denied = await expectStatus(await call("GET", `/api/workflow/${payroll}`, orkes(user.token)), 403, "PERMISSION_DENIED");
    await expectStatus(await call("DELETE", `/api/workflow/${orders}`, orkes(user.token)), 403, "PERMISSION_DENIED");
    // Unknown executions are as forbidden as foreign ones (nothing reveals what exists), in the same words: the refusal
    // names neither the foreign execution's workflow nor, by naming none, that the unknown id holds nothing.
    const unknown = crypto.randomUUID();
    const unknownDenied = await expectStatus(await call("GET", `/api/workflow/${unknown}`, orkes(user.token)), 403, "PERMISSION_DENIED");
    expect(JSON.parse(denied).message).toBe(`Permission denied: GET /api/workflow/${payroll} needs WORKFLOW_READ on workflow:<workflow>`);
    expect(JSON.parse(unknownDenied).message).toBe(`Permission denied: GET /api/workflow/${unknown} needs WORKFLOW_READ on workflow:<workflow>`);
    const tasksDenied = await expectStatus(await call("GET", `/api/workflow/${payroll}/tasks`, orkes(user.token)), 403, "PERMISSION_DENIED");
    expect(tasksDenied).not.toContain("scoped_payroll");
    const found = await eventually(
      async () => ((await (await call("GET", "/api/workflow/search?freeText=*", orkes(user.token))).json()) as { results: Array<{ workflowId: string }> }).results.map((row) => row.workflowId),
      (ids) => ids.includes(orders),
      "the readable execution in the user's search",
      10_000,
    );
    expect(found).toContain(orders);
    expect(found).not.toContain(payroll);
    // A prefix scope covers every matching name.
    const carol = await createUser("rbac-carol", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:scoped_*" }] });
    await expectStatus(await call("GET", `/api/workflow/${payroll}`, orkes(carol.token)), 200);
    // Someone without WORKFLOW_READ anywhere may not search.
    const dave = await createUser("rbac-dave", { directPermissions: [{ action: "TASK_READ", scope: "*" }] });
    await expectStatus(await call("GET", "/api/workflow/search", orkes(dave.token)), 403, "PERMISSION_DENIED");
  });

  it("search matches a prefix scope exactly as reads do: case-sensitive, with GLOB and LIKE metacharacters literal", async () => {
    const names = ["rbcase_orders", "RBCASE_PAYROLL", "rbmeta[1]?%_ok", "rbmeta1x%_no", "rbmeta[1]?%Xno"];
    const ids = new Map<string, string>();
    for (const name of names) {
      await register({ name, tasks: [httpTask("a", { uri: target("/echo/case"), method: "GET" })] });
      ids.set(name, await startWorkflow(name));
    }
    const user = await createUser("rbac-case", {
      directPermissions: [
        { action: "WORKFLOW_READ", scope: "workflow:rbcase_*" },
        { action: "WORKFLOW_READ", scope: "workflow:rbmeta[1]?%_*" },
      ],
    });
    const readable = ["rbcase_orders", "rbmeta[1]?%_ok"];
    for (const name of names) {
      await expectStatus(await call("GET", `/api/workflow/${ids.get(name)}`, orkes(user.token)), readable.includes(name) ? 200 : 403);
    }
    // The admin's search shows the rows are indexed, so what the user does not see is filtered out.
    const all = [...ids.values()];
    await eventually(
      async () => (await apiOk<{ results: Array<{ workflowId: string }> }>("GET", "/api/workflow/search?freeText=*&size=1000")).results,
      (rows) => all.every((id) => rows.some((row) => row.workflowId === id)),
      "every execution in the admin's search",
      10_000,
    );
    const result = (await (await call("GET", "/api/workflow/search?freeText=*&size=1000", orkes(user.token))).json()) as { results: Array<{ workflowType: string }> };
    expect(result.results.map((row) => row.workflowType).sort()).toEqual([...readable].sort());
  });

  it("correlation lookups, running lists and task lists show only executions the caller may read, and nothing of the others", async () => {
    const gate = [httpTask("gate", { uri: target("/echo/lk"), method: "GET" }, { asyncComplete: true })];
    await register({ name: "lk_orders", tasks: gate });
    await register({ name: "lk_payroll", tasks: gate });
    const orders = await startWorkflow("lk_orders", {}, "?correlationId=lk-c");
    const payroll = await startWorkflow("lk_payroll", {}, "?correlationId=lk-c");
    for (const id of [orders, payroll]) await waitForIndexRow(id, "RUNNING", 10_000);
    const user = await createUser("rbac-lookup", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:lk_orders" }] });
    const h = orkes(user.token);
    const json = async <T>(response: Response, status = 200): Promise<T> => JSON.parse(await expectStatus(response, status)) as T;
    const ids = (workflows: Array<{ workflowId: string }>) => workflows.map((workflow) => workflow.workflowId);
    const batch = { workflowNames: ["lk_orders", "lk_payroll"], correlationIds: ["lk-c"] };

    // The admin sees both, so what the user does not see is filtered out, not missing from the index.
    expect(ids((await apiOk<Record<string, Array<{ workflowId: string }>>>("POST", "/api/workflow/correlated/batch", batch))["lk-c"]!).sort()).toEqual([orders, payroll].sort());
    expect(ids(await json(await call("GET", "/api/workflow/lk_orders/correlated/lk-c", h)))).toEqual([orders]);
    expect(ids((await json<Record<string, Array<{ workflowId: string }>>>(await call("POST", "/api/workflow/lk_orders/correlated", h, ["lk-c"])))["lk-c"]!)).toEqual([orders]);
    expect(ids((await json<Record<string, Array<{ workflowId: string }>>>(await call("POST", "/api/workflow/correlated/batch", h, batch)))["lk-c"]!)).toEqual([orders]);
    expect(await json(await call("GET", "/api/workflow/running/lk_orders", h))).toEqual([orders]);
    expect((await json<{ totalHits: number }>(await call("GET", `/api/workflow/${orders}/tasks`, h))).totalHits).toBe(1);

    const denied = await expectStatus(await call("GET", "/api/workflow/lk_payroll/correlated/lk-c", h), 403, "PERMISSION_DENIED");
    expect(denied).not.toContain(payroll);
    await expectStatus(await call("POST", "/api/workflow/lk_payroll/correlated", h, ["lk-c"]), 403, "PERMISSION_DENIED");
    await expectStatus(await call("GET", "/api/workflow/running/lk_payroll", h), 403, "PERMISSION_DENIED");
    await expectStatus(await call("GET", `/api/workflow/${payroll}/tasks`, h), 403, "PERMISSION_DENIED");
    // Unknown executions are as forbidden as foreign ones, as for GET /api/workflow/{id}.
    await expectStatus(await call("GET", `/api/workflow/${crypto.randomUUID()}/tasks`, h), 403, "PERMISSION_DENIED");
    // Whoever may read no workflow may not look up any (as search).
    const reader = await createUser("rbac-lookup-none", { directPermissions: [{ action: "TASK_READ", scope: "*" }] });
    await expectStatus(await call("POST", "/api/workflow/correlated/batch", orkes(reader.token), batch), 403, "PERMISSION_DENIED");

    // An execution a stored rule hides from GET /api/workflow/{id} stays hidden from the lookups too.
    const everything = await createUser("rbac-lookup-all", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    const all = orkes(everything.token);
    const rule = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: `/api/workflow/${payroll}`, methods: ["GET"], requiredPermissions: [{ action: "SYSTEM_ADMIN", scope: "*" }] }, 201);
    try {
      await expectStatus(await call("GET", `/api/workflow/${payroll}`, all), 403, "PERMISSION_DENIED");
      await expectStatus(await call("GET", `/api/workflow/${payroll}/tasks`, all), 403, "PERMISSION_DENIED");
      expect(ids(await json(await call("GET", "/api/workflow/lk_payroll/correlated/lk-c", all)))).toEqual([]);
      expect(ids((await json<Record<string, Array<{ workflowId: string }>>>(await call("POST", "/api/workflow/correlated/batch", all, batch)))["lk-c"]!)).toEqual([orders]);
    } finally {
      await apiOk("DELETE", `/api/security/rules/${rule.id}`);
    }
    expect(ids(await json(await call("GET", "/api/workflow/lk_payroll/correlated/lk-c", all)))).toEqual([payroll]);
  });

  it("TASK_EXECUTE on workflow:<name> updates a task through POST /api/tasks as by reference, only in that workflow", async () => {
    const gates = [httpTask("gate", { uri: target("/echo/g"), method: "GET" }, { asyncComplete: true }), httpTask("gate2", { uri: target("/echo/g"), method: "GET" }, { asyncComplete: true })];
    await register({ name: "exec_orders", tasks: gates });
    await register({ name: "exec_payroll", tasks: gates });
    const orders = await startWorkflow("exec_orders");
    const payroll = await startWorkflow("exec_payroll");
    const user = await createUser("rbac-exec", { directPermissions: [{ action: "TASK_EXECUTE", scope: "workflow:exec_orders" }] });
    const h = orkes(user.token);
    await waitFor(orders, (w) => w.tasks[0]?.status === "IN_PROGRESS");
    await expectStatus(await call("POST", `/api/tasks/${orders}/gate/COMPLETED`, h, {}), 200);
    const next = await waitFor(orders, (w) => w.tasks[1]?.status === "IN_PROGRESS");
    const result = { workflowInstanceId: orders, taskId: next.tasks[1]!.taskId, status: "COMPLETED", outputData: {} };
    await expectStatus(await call("POST", "/api/tasks", h, result), 200);
    expect((await waitFor(orders, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");

    // Another workflow's task stays refused both ways, whatever `name` the body claims.
    const foreign = await waitFor(payroll, (w) => w.tasks[0]?.status === "IN_PROGRESS");
    await expectStatus(await call("POST", `/api/tasks/${payroll}/gate/COMPLETED`, h, {}), 403, "PERMISSION_DENIED");
    const claim = { name: "exec_orders", workflowInstanceId: payroll, taskId: foreign.tasks[0]!.taskId, status: "COMPLETED", outputData: {} };
    await expectStatus(await call("POST", "/api/tasks", h, claim), 403, "PERMISSION_DENIED");
    expect((await waitFor(payroll, () => true)).tasks[0]!.status).toBe("IN_PROGRESS");
  });

  it("TASK_EXECUTE on task:<ref> updates that task through POST /api/tasks as by reference, and no task of another reference name", async () => {
    const gate = (ref: string) => httpTask(ref, { uri: target("/echo/t"), method: "GET" }, { asyncComplete: true });
    await register({ name: "exec_by_ref", tasks: [gate("rbref_first"), gate("rbref_approve")] });
    const mine = await startWorkflow("exec_by_ref");
    const other = await startWorkflow("exec_by_ref");
    const user = await createUser("rbac-ref", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:rbref_approve" }] });
    const h = orkes(user.token);
    const update = (workflowInstanceId: string, taskId: string, extra: Record<string, unknown> = {}) => ({ workflowInstanceId, taskId, status: "COMPLETED", outputData: {}, ...extra });

    // Another reference name in the same workflow: refused, whatever the body claims about the task.
    const first = (await waitFor(mine, (w) => w.tasks[0]?.status === "IN_PROGRESS")).tasks[0]!;
    await expectStatus(await call("POST", "/api/tasks", h, update(mine, first.taskId)), 403, "PERMISSION_DENIED");
    await expectStatus(await call("POST", "/api/tasks", h, update(mine, first.taskId, { referenceTaskName: "rbref_approve", taskRefName: "rbref_approve" })), 403, "PERMISSION_DENIED");
    // No task id (or none of that execution's) grants anything through the task scope; the admin gets the route's own answer.
    await expectStatus(await call("POST", "/api/tasks", h, { workflowInstanceId: mine, status: "COMPLETED" }), 403, "PERMISSION_DENIED");
    await expectStatus(await api("POST", "/api/tasks", { workflowInstanceId: mine, status: "COMPLETED" }), 400, "VALIDATION_ERROR");
    await expectStatus(await call("POST", "/api/tasks", h, update(mine, crypto.randomUUID())), 403, "PERMISSION_DENIED");
    expect((await waitFor(mine, () => true)).tasks.map((task) => task.status)).toEqual(["IN_PROGRESS"]);

    await apiOk("POST", `/api/tasks/${mine}/rbref_first/COMPLETED`, {});
    const approve = (await waitFor(mine, (w) => w.tasks[1]?.status === "IN_PROGRESS")).tasks[1]!;
    // The allowed task's execution named with a task id of another execution's other-ref task, and the other way round.
    const foreign = (await waitFor(other, (w) => w.tasks[0]?.status === "IN_PROGRESS")).tasks[0]!;
    await expectStatus(await call("POST", "/api/tasks", h, update(mine, foreign.taskId)), 403, "PERMISSION_DENIED");
    await expectStatus(await call("POST", "/api/tasks", h, update(other, approve.taskId)), 403, "PERMISSION_DENIED");
    expect((await waitFor(other, () => true)).tasks.map((task) => task.status)).toEqual(["IN_PROGRESS"]);
    expect((await waitFor(mine, () => true)).tasks[1]!.status).toBe("IN_PROGRESS");

    await expectStatus(await call("POST", "/api/tasks", h, update(mine, approve.taskId, { outputData: { approved: true } })), 200);
    const done = await waitFor(mine, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.tasks[1]).toMatchObject({ status: "COMPLETED", outputData: { approved: true } });
  });

  it("TASK_EXECUTE on task:<name> lets a worker poll tasks of that name and report them (update-v2 too), and nothing else", async () => {
    const simple = (name: string) => ({ name, taskReferenceName: `${name}_step`, type: "SIMPLE" });
    await register({ name: "rbw_flow", tasks: [simple("rbw_encode"), simple("rbw_publish")] });
    const workflowId = await startWorkflow("rbw_flow");
    const worker = await createUser("rbac-worker", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:rbw_encode" }] });
    const h = orkes(worker.token);
    const queued = async (name: string) => (await apiOk<Record<string, number>>("GET", `/api/tasks/queue/sizes?taskType=${name}`))[name]!;
    await eventually(() => queued("rbw_encode"), (size) => size === 1, "the task queued");

    // Another task name: refused before anything is taken from its queue.
    const denied = await expectStatus(await call("GET", "/api/tasks/poll/batch/rbw_publish?count=1&timeout=0", h), 403, "PERMISSION_DENIED");
    expect(JSON.parse(denied).message).toContain("TASK_EXECUTE on task:rbw_publish");
    await expectStatus(await call("GET", "/api/tasks/poll/rbw_publish", h), 403, "PERMISSION_DENIED");
    // Reading queue sizes needs TASK_READ, which a worker key need not hold.
    await expectStatus(await call("GET", "/api/tasks/queue/sizes?taskType=rbw_encode", h), 403, "PERMISSION_DENIED");

    const polled = await call("GET", "/api/tasks/poll/batch/rbw_encode?workerid=w1&count=1&timeout=0", h);
    const [task] = JSON.parse(await expectStatus(polled, 200)) as Array<{ taskId: string }>;
    expect(task).toBeDefined();
    // Reported by the task's name (its reference name differs): the worker's grant covers it, through update-v2 as well.
    const result = { workflowInstanceId: workflowId, taskId: task!.taskId, status: "COMPLETED", outputData: { ok: true } };
    await expectStatus(await call("POST", "/api/tasks/update-v2", h, result), 204);
    const next = (await waitFor(workflowId, (w) => w.tasks[1]?.status === "SCHEDULED")).tasks[1]!;
    // The next task is another name's: neither reported nor completed by this worker.
    const other = { workflowInstanceId: workflowId, taskId: next.taskId, status: "COMPLETED", outputData: {} };
    await expectStatus(await call("POST", "/api/tasks", h, other), 403, "PERMISSION_DENIED");
    await expectStatus(await call("POST", "/api/tasks/update-v2", h, other), 403, "PERMISSION_DENIED");
    expect((await getWorkflow(workflowId)).tasks.map((t) => t.status)).toEqual(["COMPLETED", "SCHEDULED"]);
  });

  it("TASK_EXECUTE on task:<name> also completes that task by reference name (and QueueAdmin's updates), only while the reference's task is of that name", async () => {
    const simple = (name: string, ref: string) => ({ name, taskReferenceName: ref, type: "SIMPLE" });
    await register({ name: "rbn_flow", tasks: [simple("rbn_encode", "encode_step"), simple("rbn_publish", "publish_step")] });
    const [first, second, third] = [await startWorkflow("rbn_flow"), await startWorkflow("rbn_flow"), await startWorkflow("rbn_flow")];
    const worker = await createUser("rbac-by-name-ref", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:rbn_encode" }] });
    const h = orkes(worker.token);
    const statuses = async (workflowId: string) => (await getWorkflow(workflowId)).tasks.map((task) => `${task.referenceTaskName}:${task.status}`);

    // A reference the workflow does not hold yet, or holds for another task name: refused, nothing changed.
    await waitFor(first, (w) => w.tasks[0]?.status === "SCHEDULED");
    const refused = await expectStatus(await call("POST", `/api/tasks/${first}/publish_step/COMPLETED`, h, {}), 403, "PERMISSION_DENIED");
    expect(JSON.parse(refused).message).toContain("TASK_EXECUTE on task:publish_step");
    await expectStatus(await call("POST", `/api/tasks/${first}/encode_step/COMPLETED`, h, { encoded: 1 }), 200);
    await waitFor(first, (w) => w.tasks[1]?.status === "SCHEDULED");
    const publish = (await getWorkflow(first)).tasks[1]!;
    const denied = await expectStatus(await call("POST", `/api/tasks/${first}/publish_step/COMPLETED`, h, {}), 403, "PERMISSION_DENIED");
    // What the workflow runs there is not told to a caller refused (its task name stays a marker).
    expect(JSON.parse(denied).message).toContain("TASK_EXECUTE on task:<task name>");
    expect(JSON.parse(denied).message).not.toContain("rbn_publish");
    await expectStatus(await call("POST", `/api/queue/update/${first}/publish_step/COMPLETED`, h, {}), 403, "PERMISSION_DENIED");
    await expectStatus(await call("POST", `/api/queue/update/${first}/task/${publish.taskId}/COMPLETED`, h, {}), 403, "PERMISSION_DENIED");
    expect(await statuses(first)).toEqual(["encode_step:COMPLETED", "publish_step:SCHEDULED"]);
    expect((await getWorkflow(first)).tasks[0]!.outputData).toEqual({ encoded: 1 });

    // QueueAdminResource's updates, by reference name and by task id.
    await waitFor(second, (w) => w.tasks[0]?.status === "SCHEDULED");
    await expectStatus(await call("POST", `/api/queue/update/${second}/encode_step/COMPLETED`, h, { via: "queue" }), 200);
    const encode = (await waitFor(third, (w) => w.tasks[0]?.status === "SCHEDULED")).tasks[0]!;
    await expectStatus(await call("POST", `/api/queue/update/${third}/task/${encode.taskId}/COMPLETED`, h, { via: "id" }), 200);
    for (const workflowId of [second, third]) {
      await waitFor(workflowId, (w) => w.tasks.length === 2);
      expect(await statuses(workflowId)).toEqual(["encode_step:COMPLETED", "publish_step:SCHEDULED"]);
    }
    expect((await getWorkflow(third)).tasks[0]!.outputData).toEqual({ via: "id" });
  });

  it("an update by reference name checked against a task name is refused by the execution when the reference's task is no longer of that name", async () => {
    await register({ name: "rbn_recheck", tasks: [{ name: "rbn_encode", taskReferenceName: "encode_step", type: "SIMPLE" }] });
    const workflowId = await startWorkflow("rbn_recheck");
    await waitFor(workflowId, (w) => w.tasks[0]?.status === "SCHEDULED");
    // The guard remembers the task name it let the request in for only when a grant on that name did.
    const byName = await createUser("rbac-recheck-name", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:rbn_encode" }] });
    const byWorkflow = await createUser("rbac-recheck-wf", { directPermissions: [{ action: "TASK_EXECUTE", scope: "workflow:rbn_recheck" }] });
    const checked = async (token: string) => {
      const request = new Request(`https://conductor.test/api/tasks/${workflowId}/encode_step/COMPLETED`, { method: "POST", headers: orkes(token) }) as unknown as IRequest;
      await guard(request, env);
      return checkedTaskName(request);
    };
    expect(await checked(byName.token)).toBe("rbn_encode");
    expect(await checked(byWorkflow.token)).toBeUndefined();

    const stub = env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(workflowId));
    const refused = await stub.updateTaskByRef("encode_step", "COMPLETED", {}, undefined, "rbn_publish");
    expect(refused).toMatchObject({ ok: false, error: { kind: "FORBIDDEN" } });
    expect((await getWorkflow(workflowId)).tasks.map((task) => task.status)).toEqual(["SCHEDULED"]);
    expect(await stub.updateTaskByRef("encode_step", "COMPLETED", {}, undefined, "rbn_encode")).toMatchObject({ ok: true });
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("update-v2 hands the next task only to a caller who may poll that task name: TASK_EXECUTE on its workflow reports, but takes no one else's task", async () => {
    const shared = { name: "rbv_shared", taskReferenceName: "shared_step", type: "SIMPLE", inputParameters: { who: "${workflow.input.who}" } };
    await register({ name: "rbv_mine", tasks: [shared] });
    await register({ name: "rbv_theirs", tasks: [shared] });
    const theirs = await startWorkflow("rbv_theirs", { who: "them" });
    const mine = await startWorkflow("rbv_mine", { who: "me" });
    const queued = async () => (await apiOk<Record<string, number>>("GET", "/api/tasks/queue/sizes?taskType=rbv_shared"))["rbv_shared"]!;
    await eventually(queued, (size) => size === 2, "both tasks queued");
    // Reporting on its own workflow's task is this caller's right; taking tasks of that name from others is not.
    const owner = await createUser("rbac-v2-owner", { directPermissions: [{ action: "TASK_EXECUTE", scope: "workflow:rbv_mine" }] });
    await expectStatus(await call("GET", "/api/tasks/poll/batch/rbv_shared?count=1&timeout=0", orkes(owner.token)), 403, "PERMISSION_DENIED");
    const myTask = (await getWorkflow(mine)).tasks[0]!;
    const result = { workflowInstanceId: mine, taskId: myTask.taskId, status: "COMPLETED", outputData: {}, workerId: "owner" };
    await expectStatus(await call("POST", "/api/tasks/update-v2", orkes(owner.token), result), 204);
    expect((await waitFor(mine, ["COMPLETED"])).status).toBe("COMPLETED");
    expect((await getWorkflow(theirs)).tasks[0]).toMatchObject({ status: "SCHEDULED", pollCount: 0 });
  });

  it("a path segment spelling a scope placeholder is taken literally: ${workflow.name} as a taskRefName is not filled in", async () => {
    await register({ name: "rbplace_flow", tasks: [httpTask("rbplace_gate", { uri: target("/echo/p"), method: "GET" }, { asyncComplete: true })] });
    const id = await startWorkflow("rbplace_flow");
    // A grant on a task whose reference name happens to equal the workflow's name.
    const user = await createUser("rbac-placeholder", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:rbplace_flow" }] });
    const denied = await expectStatus(await call("POST", `/api/tasks/${id}/${encodeURIComponent("${workflow.name}")}/COMPLETED`, orkes(user.token), {}), 403, "PERMISSION_DENIED");
    expect(JSON.parse(denied).message).toContain("TASK_EXECUTE on task:${workflow.name}");
  });

  it("GET /api/token/userInfo (Orkes' getUserInfo) tells the caller who they are, their roles with their permissions, and what they hold in all", async () => {
    await apiOk("POST", "/api/security/roles", { name: "userinfo-readers", description: "reads billing", permissions: [{ action: "WORKFLOW_READ", scope: "workflow:billing_*" }] }, 201);
    const user = await createUser("rbac-userinfo", { roles: ["userinfo-readers"], directPermissions: [{ action: "TASK_EXECUTE", scope: "task:ship" }] });
    const info = (await (await call("GET", "/api/token/userInfo", orkes(user.token))).json()) as Record<string, unknown>;
    expect(info).toEqual({
      id: "rbac-userinfo",
      name: "rbac-userinfo",
      uuid: "rbac-userinfo",
      applicationUser: false,
      roles: [{ name: "userinfo-readers", permissions: [{ name: "WORKFLOW_READ", scope: "workflow:billing_*" }] }],
      groups: [],
      permissions: expect.arrayContaining([{ action: "WORKFLOW_READ", scope: "workflow:billing_*" }, { action: "TASK_EXECUTE", scope: "task:ship" }]),
    });
    expect((info["permissions"] as unknown[]).length).toBe(2);
    // With an API key sent as it is too; without credentials, nothing.
    expect(((await (await call("GET", "/api/token/userInfo", { "x-api-key": user.apiKey })).json()) as { id: string }).id).toBe("rbac-userinfo");
    await expectStatus(await call("GET", "/api/token/userInfo", {}), 401, "UNAUTHENTICATED");
  });

  it("GET /api/security/permissions reports effective permissions at a scope; other users need USER_ADMIN", async () => {
    const user = await createUser("rbac-erin", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:app_*" }, { action: "TASK_EXECUTE", scope: "*" }] });
    const own = (await (await call("GET", "/api/security/permissions?scope=workflow:app_billing", orkes(user.token))).json()) as { userId: string; permissions: string[] };
    expect(own).toEqual({ userId: "rbac-erin", scope: "workflow:app_billing", permissions: ["WORKFLOW_READ", "TASK_EXECUTE"] });
    const other = (await (await call("GET", "/api/security/permissions?scope=workflow:other", orkes(user.token))).json()) as { permissions: string[] };
    expect(other.permissions).toEqual(["TASK_EXECUTE"]);
    await expectStatus(await call("GET", "/api/security/permissions?userId=admin", orkes(user.token)), 403, "PERMISSION_DENIED");
    expect(await apiOk("GET", "/api/security/permissions?userId=rbac-erin&scope=workflow:app_x")).toMatchObject({ userId: "rbac-erin", permissions: ["WORKFLOW_READ", "TASK_EXECUTE"] });
  });

  it("a stored rule's ${workflow.name} is what the request acts on, never a name in its body: a wildcard rule cannot be talked into another workflow's scope", async () => {
    await register({ name: "billing_named", tasks: [httpTask("a", { uri: target("/status/500"), method: "GET" })] });
    await register({ name: "secret_named", tasks: [httpTask("a", { uri: target("/status/500"), method: "GET" })] });
    const billing = await startWorkflow("billing_named");
    const secret = await startWorkflow("secret_named");
    await waitFor(billing, ["FAILED"]);
    const secretBefore = await waitFor(secret, ["FAILED"]);
    const rule = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: "/api/workflow/*", methods: ["POST"], requiredPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:${workflow.name}" }] }, 201);
    try {
      const user = await createUser("rbac-wildcard", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:billing_*" }] });
      // Another workflow's execution, with a body naming one the caller holds: refused, and left as it was.
      await expectStatus(await call("POST", `/api/workflow/${secret}/retry`, orkes(user.token), { name: "billing_named" }), 403, "PERMISSION_DENIED");
      await expectStatus(await call("POST", `/api/workflow/${secret}/restart`, orkes(user.token), { name: "billing_named" }), 403, "PERMISSION_DENIED");
      expect(await getWorkflow(secret)).toMatchObject({ status: "FAILED", endTime: secretBefore.endTime });
      // A start by the name in the path: the input's "name" is data, not the workflow started.
      await expectStatus(await call("POST", "/api/workflow/secret_named", orkes(user.token), { name: "billing_named" }), 403, "PERMISSION_DENIED");
      await expectStatus(await call("POST", "/api/workflow/execute/secret_named/1", orkes(user.token), { name: "billing_named" }), 403, "PERMISSION_DENIED");
      // The same rule lets the caller act on what it holds, wherever the request names it.
      await expectStatus(await call("POST", `/api/workflow/${billing}/retry`, orkes(user.token)), 204);
      await expectStatus(await call("POST", "/api/workflow/billing_named", orkes(user.token), {}), 200);
      await expectStatus(await call("POST", "/api/workflow", orkes(user.token), { name: "billing_named" }), 200);
      await expectStatus(await call("POST", "/api/workflow", orkes(user.token), { name: "secret_named" }), 403, "PERMISSION_DENIED");
    } finally {
      await apiOk("DELETE", `/api/security/rules/${rule.id}`);
    }
  });

  it("a stored rule's ${workflow.name} on POST /api/admin/cache/clear/{taskDefName} names no workflow, even when the task name is an execution's id", async () => {
    await register({ name: "cache_clear_named", tasks: [httpTask("a", { uri: target("/status/500"), method: "GET" })] });
    const execution = await startWorkflow("cache_clear_named");
    const rule = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: "/api/admin/*", methods: ["POST"], requiredPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:${workflow.name}" }] }, 201);
    try {
      const user = await createUser("rbac-cache-clear", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:cache_clear_named" }] });
      // The path names a task definition: the execution whose id it happens to spell is not what the request acts on.
      await expectStatus(await call("POST", `/api/admin/cache/clear/${execution}`, orkes(user.token)), 403, "PERMISSION_DENIED");
      // The AdminResource routes that take an execution's id are still scoped by its workflow.
      await expectStatus(await call("POST", `/api/admin/consistency/verifyAndRepair/${execution}`, orkes(user.token)), 200);
    } finally {
      await apiOk("DELETE", `/api/security/rules/${rule.id}`);
    }
  });

  it("access rules added through the API take precedence, with ${path.workflowId} scopes; deleting one restores the default", async () => {
    await register({ name: "ruled", tasks: [httpTask("a", { uri: target("/echo/r"), method: "GET" })] });
    const mine = await startWorkflow("ruled");
    const theirs = await startWorkflow("ruled");
    const rule = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: "/api/workflow/{workflowId}", methods: ["GET"], requiredPermissions: [{ action: "WORKFLOW_READ", scope: "execution:${path.workflowId}" }] }, 201);
    const user = await createUser("rbac-frank", { directPermissions: [{ action: "WORKFLOW_READ", scope: `execution:${mine}` }] });
    await expectStatus(await call("GET", `/api/workflow/${mine}`, orkes(user.token)), 200);
    await expectStatus(await call("GET", `/api/workflow/${theirs}`, orkes(user.token)), 403, "PERMISSION_DENIED");
    const listed = await apiOk<{ rules: Array<{ id: string }>; defaults: unknown[] }>("GET", "/api/security/rules");
    expect(listed.rules.map((stored) => stored.id)).toContain(rule.id);
    expect(listed.defaults.length).toBeGreaterThan(10);
    await apiOk("DELETE", `/api/security/rules/${rule.id}`);
    await expectStatus(await call("GET", `/api/workflow/${mine}`, orkes(user.token)), 403, "PERMISSION_DENIED");
    const before = await rowCount("access_rules");
    await expectStatus(await api("POST", "/api/security/rules", { apiPath: "/elsewhere", methods: ["GET"], requiredPermissions: [] }), 400, "VALIDATION_ERROR");
    await expectStatus(await api("POST", "/api/security/rules", { apiPath: "/api/x", methods: ["FETCH"], requiredPermissions: [] }), 400, "VALIDATION_ERROR");
    // A * inside a segment would read as that segment and anything under it, not as a prefix: the rule would not apply
    // where its writer meant it to.
    for (const apiPath of ["/api/metadata/workflow/payroll*", "/api/*/workflow", "/api/work*/x"]) {
      await expectStatus(await api("POST", "/api/security/rules", { apiPath, methods: ["GET"], requiredPermissions: [] }), 400, "VALIDATION_ERROR");
    }
    expect(await rowCount("access_rules")).toBe(before);
  });

  it("a stored rule on a literal path is not bypassed by percent-encoding a character of it; %2F never changes a path's shape", async () => {
    await register({ name: "rule_payroll", tasks: [httpTask("a", { uri: target("/echo/p"), method: "GET" })] });
    const rule = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: "/api/metadata/workflow/rule_payroll", methods: ["GET"], requiredPermissions: [{ action: "SYSTEM_ADMIN", scope: "*" }] }, 201);
    const user = await createUser("rbac-percent", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    const statuses: number[] = [];
    for (const spelling of ["rule_payroll", "rule%5Fpayroll", "rule%5fpayroll", "%72ule_payroll"]) statuses.push((await call("GET", `/api/metadata/workflow/${spelling}`, orkes(user.token))).status);
    await apiOk("DELETE", `/api/security/rules/${rule.id}`);
    expect(statuses).toEqual([403, 403, 403, 403]);
    // Segments are split where the router splits them (raw slashes) and compared decoded.
    expect(matchApiPath("/api/x/a_b", "/api/x/a%5Fb")).toEqual({});
    expect(matchApiPath("/api/x/a%5Fb", "/api/x/a_b")).toEqual({});
    expect(matchApiPath("/api/x/a/b", "/api/x/a%2Fb")).toBeUndefined();
    expect(matchApiPath("/api/x/{name}/{version}", "/api/x/a%2F1")).toBeUndefined();
    expect(matchApiPath("/api/x/{name}", "/api/x/a%2F1")).toEqual({ name: "a/1" });
    expect(matchApiPath("/api/x/a_b", "/api/x/a%5")).toBeUndefined();
  });

  it("a start's body name is checked as the route reads it, trimmed: a caller allowed to start billing may send \" billing \"", async () => {
    const wait = { name: "w", taskReferenceName: "w", type: "WAIT", inputParameters: {} };
    await register({ name: "trim_mine", tasks: [wait] });
    await register({ name: "trim_other", tasks: [wait] });
    const user = await createUser("rbac-trimmed", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:trim_mine" }] });
    // The route starts trim_mine for the admin; the guard read "workflow: trim_mine\n" and refused the caller allowed to.
    const started = await call("POST", "/api/workflow", orkes(user.token), { name: " trim_mine\n" });
    expect(started.status).toBe(200);
    expect((await getWorkflow(await started.text())).workflowName).toBe("trim_mine");
    const tested = await call("POST", "/api/workflow/test", orkes(user.token), { name: "trim_mine " });
    expect(tested.status).toBe(200);
    expect(await tested.json()).toMatchObject({ workflowName: "trim_mine" });
    // Trimming widens nothing: another workflow, spaced or not, is still refused.
    await expectStatus(await call("POST", "/api/workflow", orkes(user.token), { name: " trim_other " }), 403, "PERMISSION_DENIED");
    await expectStatus(await call("POST", "/api/workflow/test", orkes(user.token), { name: "trim_other" }), 403, "PERMISSION_DENIED");
  });

  it("a path percent-encoding a character of a route's literal segment is that route, as the rules read it: /api/workflow/%74est is the test endpoint, not the start of workflow test", async () => {
    const wait = { name: "w", taskReferenceName: "w", type: "WAIT", inputParameters: {} };
    await register({ name: "test", tasks: [wait] });
    await register({ name: "list", tasks: [wait] });
    await register({ name: "enc_mine", tasks: [wait] });
    const user = await createUser("rbac-encoded", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:enc_mine" }, { action: "WORKFLOW_READ", scope: "workflow:enc_mine" }] });
    // Authorized as the test run of the workflow the body names (enc_mine, allowed): that is what runs, not workflow "test".
    const started = await call("POST", "/api/workflow/%74est", orkes(user.token), { name: "enc_mine" });
    expect(started.status).toBe(200);
    expect(await started.json()).toMatchObject({ workflowName: "enc_mine" });
    await expectStatus(await call("POST", "/api/workflow/test", orkes(user.token), {}), 403, "PERMISSION_DENIED");
    // Authorized as the listing of definitions the caller may read: that is what answers, not definition "list".
    const listed = await call("GET", "/api/metadata/workflow/%6Cist", orkes(user.token));
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as Array<{ name: string }>).map((definition) => definition.name)).toEqual(["enc_mine"]);
    // Hex digits in either case (RFC 3986 2.1): %6c is %6C.
    const lower = await call("GET", "/api/metadata/workflow/%6cist", orkes(user.token));
    expect(lower.status).toBe(200);
    expect(((await lower.json()) as Array<{ name: string }>).map((definition) => definition.name)).toEqual(["enc_mine"]);
    // A query's escapes change nothing: the path before it is still decoded.
    const queried = await call("GET", "/api/metadata/workflow/%6Cist?q=%41", orkes(user.token));
    expect(queried.status).toBe(200);
    expect(((await queried.json()) as Array<{ name: string }>).map((definition) => definition.name)).toEqual(["enc_mine"]);
    // Decoded once, never twice: an escaped escape is the name `%74est` (the start of that workflow), not the test endpoint.
    await expectStatus(await call("POST", "/api/workflow/%2574est", orkes(user.token), { name: "enc_mine" }), 403, "PERMISSION_DENIED");
  });

  it("a stored rule naming one execution is not bypassed by writing its id in upper case", async () => {
    await register({ name: "rule_payroll2", tasks: [httpTask("a", { uri: target("/echo/p"), method: "GET" })] });
    const id = await startWorkflow("rule_payroll2");
    const rule = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: `/api/workflow/${id}`, methods: ["GET"], requiredPermissions: [{ action: "SYSTEM_ADMIN", scope: "*" }] }, 201);
    const upperRule = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: `/api/workflow/${id.toUpperCase()}/*`, methods: ["DELETE"], requiredPermissions: [{ action: "SYSTEM_ADMIN", scope: "*" }] }, 201);
    const user = await createUser("rbac-upper", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }, { action: "WORKFLOW_ADMIN", scope: "*" }] });
    const read = (await call("GET", `/api/workflow/${id}`, orkes(user.token))).status;
    const readUpper = (await call("GET", `/api/workflow/${id.toUpperCase()}`, orkes(user.token))).status;
    const readMixed = (await call("GET", `/api/workflow/${id.slice(0, 4).toUpperCase()}${id.slice(4)}`, orkes(user.token))).status;
    // A rule written in upper case covers the id as the service writes it.
    const remove = (await call("DELETE", `/api/workflow/${id}/remove`, orkes(user.token))).status;
    await apiOk("DELETE", `/api/security/rules/${rule.id}`);
    await apiOk("DELETE", `/api/security/rules/${upperRule.id}`);
    expect({ read, readUpper, readMixed, remove }).toEqual({ read: 403, readUpper: 403, readMixed: 403, remove: 403 });
    expect((await getWorkflow(id)).workflowId).toBe(id);
  });

  it("the guard reads a body for its scopes only up to the size limit, in bytes, and leaves the body to the route", async () => {
    const chunk = new TextEncoder().encode(" ".repeat(1024));
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.byteLength;
        if (pulled > 64 * 1024) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const oversized = new Request("https://conductor.test/api/workflow", { method: "POST", body: endless, duplex: "half" } as RequestInit);
    expect(await peekJsonObject(oversized, 4096)).toBeUndefined();
    expect(pulled).toBeLessThanOrEqual(8 * 1024);
    // Multi-byte characters count as their bytes: 2,000 characters of 3 bytes are over a 4,096-byte limit.
    const wide = JSON.stringify({ name: "\u20ac".repeat(2000) });
    expect(await peekJsonObject(new Request("https://conductor.test/api/workflow", { method: "POST", body: wide }), 4096)).toBeUndefined();
    const request = new Request("https://conductor.test/api/workflow", { method: "POST", body: JSON.stringify({ name: "peeked" }) });
    expect(await peekJsonObject(request, 4096)).toEqual({ name: "peeked" });
    expect(await request.json()).toEqual({ name: "peeked" });
  });

  it("a failure workflow starts only if its starter may start it; otherwise the output says why and nothing runs", async () => {
    await register({ name: "rbfail_payroll", tasks: [httpTask("pay", { uri: target("/count/rbfail-payroll"), method: "GET" })] });
    await register({ name: "rbfail_mine_handler", tasks: [httpTask("note", { uri: target("/count/rbfail-mine-handler"), method: "GET" })] });
    const user = await createUser("rbac-failer", {
      directPermissions: ["WORKFLOW_WRITE", "WORKFLOW_ADMIN", "WORKFLOW_READ"].map((action) => ({ action, scope: "workflow:rbfail_mine*" })),
    });
    const asUser = orkes(user.token);
    const failing = (name: string, failureWorkflow: string) => ({
      name,
      version: 1,
      schemaVersion: 2,
      ownerEmail: "u@example.com",
      failureWorkflow,
      tasks: [httpTask("boom", { uri: target("/status/500"), method: "GET" }, { retryCount: 0 })],
    });
    await expectStatus(await call("POST", "/api/metadata/workflow?overwrite=true", asUser, failing("rbfail_mine", "rbfail_payroll")), 200);
    await expectStatus(await call("POST", "/api/metadata/workflow?overwrite=true", asUser, failing("rbfail_mine_ok", "rbfail_mine_handler")), 200);

    const deniedId = await expectStatus(await call("POST", "/api/workflow/rbfail_mine", asUser, {}), 200);
    const denied = await eventually(() => getWorkflow(deniedId), (workflow) => String(workflow.output["conductor.failure_workflow"]).startsWith("Error workflow"), "the refusal in the output");
    expect(denied.output["conductor.failure_workflow"]).toContain("may not start workflow rbfail_payroll");
    const allowedId = await expectStatus(await call("POST", "/api/workflow/rbfail_mine_ok", asUser, {}), 200);
    const allowed = await eventually(() => getWorkflow(allowedId), (workflow) => typeof workflow.output["conductor.failure_workflow"] === "string", "the failure workflow's id");
    expect((await waitFor(String(allowed.output["conductor.failure_workflow"]), ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    expect(await hits("rbfail-mine-handler")).toBe(1);
    expect(await hits("rbfail-payroll")).toBe(0);
  });

  it("a SUB_WORKFLOW starts only workflows its starter may start; a foreign child fails the task terminally and starts nothing", async () => {
    await register({ name: "rbsub_payroll", tasks: [httpTask("pay", { uri: target("/echo/pay"), method: "GET" })], outputParameters: { salaries: "TOP-SECRET-SALARIES" } });
    await register({ name: "rbsub_mine_leaf", tasks: [httpTask("leaf", { uri: target("/echo/leaf"), method: "GET" })], outputParameters: { leaf: "ok" } });
    const mallory = await createUser("rbac-mallory", {
      directPermissions: ["WORKFLOW_WRITE", "WORKFLOW_ADMIN", "WORKFLOW_READ"].map((action) => ({ action, scope: "workflow:rbsub_mine*" })),
    });
    const asMallory = orkes(mallory.token);
    await expectStatus(await call("POST", "/api/workflow/rbsub_payroll", asMallory, {}), 403, "PERMISSION_DENIED");
    const subTask = (child: string) => ({ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: child } } });
    const definition = (name: string, child: string) => ({ name, version: 1, schemaVersion: 2, ownerEmail: "m@example.com", tasks: [subTask(child)] });
    await expectStatus(await call("POST", "/api/metadata/workflow?overwrite=true", asMallory, definition("rbsub_mine", "rbsub_payroll")), 200);
    await expectStatus(await call("POST", "/api/metadata/workflow?overwrite=true", asMallory, definition("rbsub_mine_ok", "rbsub_mine_leaf")), 200);

    const parentId = await expectStatus(await call("POST", "/api/workflow/rbsub_mine", asMallory, {}), 200);
    const parent = await waitFor(parentId, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"]);
    expect(parent.status).toBe("FAILED");
    const task = parent.tasks[0]!;
    expect(task.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(task["reasonForIncompletion"]).toContain("may not start workflow rbsub_payroll");
    expect(JSON.stringify(parent)).not.toContain("TOP-SECRET-SALARIES");
    // No child was started under the planned id.
    await expectStatus(await api("GET", `/api/workflow/${String(task["subWorkflowId"])}`), 404, "NOT_FOUND");
    // The synchronous execute endpoint takes the same snapshot.
    const executed = JSON.parse(await expectStatus(await call("POST", "/api/workflow/execute/rbsub_mine?waitForSeconds=5", asMallory, {}), 200)) as { status: string; tasks: Array<{ status: string }> };
    expect(executed.status).toBe("FAILED");
    expect(executed.tasks[0]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    // A child she may start runs, and its output reaches her.
    const allowed = await waitFor(await expectStatus(await call("POST", "/api/workflow/rbsub_mine_ok", asMallory, {}), 200), ["COMPLETED", "FAILED"]);
    expect(allowed.status).toBe("COMPLETED");
    expect(allowed.tasks[0]!.outputData).toMatchObject({ leaf: "ok" });

    // A retry re-checks and replaces the snapshot: hers fails again, the admin's starts the child.
    await expectStatus(await call("POST", `/api/workflow/${parentId}/retry`, asMallory), 204);
    const retried = await waitFor(parentId, (workflow) => workflow.status === "FAILED" && workflow.tasks.length === 2);
    expect(retried.tasks[1]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    await apiOk("POST", `/api/workflow/${parentId}/retry`, undefined, 204);
    const completed = await waitFor(parentId, ["COMPLETED", "FAILED"]);
    expect(completed.status).toBe("COMPLETED");
    // Rerunning from a task inside that child would run it again for her: refused, nothing changes.
    const childTaskId = (await waitFor(String(completed.tasks.at(-1)!["subWorkflowId"]), ["COMPLETED"])).tasks[0]!.taskId;
    await expectStatus(await call("POST", `/api/workflow/${parentId}/rerun`, asMallory, { reRunFromTaskId: childTaskId }), 403, "PERMISSION_DENIED");
    expect((await waitFor(parentId, ["COMPLETED", "FAILED"])).updateTime).toBe(completed.updateTime);
    // So does a restart: hers fails at the SUB_WORKFLOW task again.
    await expectStatus(await call("POST", `/api/workflow/${parentId}/restart`, asMallory), 204);
    const restarted = await waitFor(parentId, ["COMPLETED", "FAILED"]);
    expect(restarted.status).toBe("FAILED");
    expect(restarted.tasks[0]!["reasonForIncompletion"]).toContain("may not start workflow rbsub_payroll");

    // An execution stored before starters' rights were recorded (none recorded) starts its child as before.
    const legacyId = crypto.randomUUID();
    const legacyDefinition = await new DefinitionRepository(env.DB).find("rbsub_mine");
    const legacy = await env.WORKFLOW_EXECUTION.get(env.WORKFLOW_EXECUTION.idFromName(legacyId)).start({ workflowId: legacyId, definition: legacyDefinition!, input: {}, baseUrl: "" });
    expect(legacy.ok).toBe(true);
    expect((await waitFor(legacyId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("retry with resumeSubworkflowTasks replaces the reopened parent's starter rights with the retrier's: a later SUB_WORKFLOW she may not start fails and starts nothing", async () => {
    const waitTask = httpTask("rbres_gate", { uri: target("/echo/rbres-gate"), method: "GET" }, { asyncComplete: true });
    const subTask = (ref: string, child: string) => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: child } } });
    await register({ name: "rbres_mine_child", tasks: [waitTask] });
    await register({ name: "rbres_payroll", tasks: [httpTask("pay", { uri: target("/count/rbres-payroll"), method: "GET" })], outputParameters: { salaries: "TOP-SECRET-SALARIES" } });
    await register({ name: "rbres_mine", tasks: [subTask("sub", "rbres_mine_child"), subTask("later", "rbres_payroll")] });
    // The admin (every scope) starts the parent; its child fails.
    const parentId = await startWorkflow("rbres_mine");
    const first = await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined);
    const childId = String(first.tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/rbres_gate/FAILED`, {});
    expect((await waitFor(parentId, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"])).status).toBe("FAILED");

    // Mallory may run rbres_mine* (parent and child) but not rbres_payroll.
    const mallory = await createUser("rbres-mallory", {
      directPermissions: ["WORKFLOW_ADMIN", "WORKFLOW_READ", "TASK_EXECUTE"].map((action) => ({ action, scope: "workflow:rbres_mine*" })),
    });
    const asMallory = orkes(mallory.token);
    await expectStatus(await call("POST", "/api/workflow/rbres_payroll", asMallory, {}), 403, "PERMISSION_DENIED");
    await expectStatus(await call("POST", `/api/workflow/${parentId}/retry?resumeSubworkflowTasks=true`, asMallory), 204);
    await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    await expectStatus(await call("POST", `/api/tasks/${childId}/rbres_gate/COMPLETED`, asMallory, {}), 200);

    const done = await waitFor(parentId, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"]);
    expect(done.tasks[0]!.status).toBe("COMPLETED");
    expect(done.tasks[1]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(done.tasks[1]!["reasonForIncompletion"]).toContain("may not start workflow rbres_payroll");
    expect(await hits("rbres-payroll")).toBe(0);
    expect(JSON.stringify(done)).not.toContain("TOP-SECRET-SALARIES");
  });

  it("decide, resetcallbacks and state updates need WORKFLOW_ADMIN on the execution's workflow (state updates, answered with the execution, WORKFLOW_READ too): granted on one name, another's are refused and unchanged", async () => {
    const gate = httpTask("rbkick_gate", { uri: target("/echo/rbkick-gate"), method: "GET" }, { asyncComplete: true });
    await register({ name: "rbkick_mine", tasks: [gate] });
    await register({ name: "rbkick_other", tasks: [gate] });
    const mine = await startWorkflow("rbkick_mine");
    const other = await startWorkflow("rbkick_other");
    for (const workflowId of [mine, other]) await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    // Orkes' EXECUTE alone (WORKFLOW_ADMIN) changes the execution but may not read it: the updates answered with it are
    // refused before they change anything.
    const executor = await createUser("rbkick-executor", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:rbkick_mine" }] });
    const asExecutor = orkes(executor.token);
    await expectStatus(await call("PUT", `/api/workflow/decide/${mine}`, asExecutor), 200);
    await expectStatus(await call("POST", `/api/workflow/${mine}/resetcallbacks`, asExecutor), 204);
    await expectStatus(await call("POST", `/api/workflow/${mine}/state`, asExecutor, { variables: { peeked: true } }), 403, "PERMISSION_DENIED");
    await expectStatus(await call("POST", `/api/workflow/${mine}/variables`, asExecutor, { peeked: true }), 403, "PERMISSION_DENIED");
    expect((await getWorkflow(mine)).variables).toEqual({});
    const operator = await createUser("rbkick-operator", {
      directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:rbkick_mine" }, { action: "WORKFLOW_READ", scope: "workflow:rbkick_mine" }],
    });
    const asOperator = orkes(operator.token);
    await expectStatus(await call("POST", `/api/workflow/${mine}/state`, asOperator, { variables: { seen: true } }), 200);
    await expectStatus(await call("PUT", `/api/workflow/decide/${other}`, asOperator), 403, "PERMISSION_DENIED");
    await expectStatus(await call("POST", `/api/workflow/${other}/resetcallbacks`, asOperator), 403, "PERMISSION_DENIED");
    await expectStatus(await call("POST", `/api/workflow/${other}/state`, asOperator, { taskReferenceName: "rbkick_gate", taskResult: { status: "COMPLETED" }, variables: { seen: true } }), 403, "PERMISSION_DENIED");
    expect((await getWorkflow(mine)).variables).toEqual({ seen: true });
    expect(await getWorkflow(other)).toMatchObject({ status: "RUNNING", variables: {}, tasks: [{ status: "IN_PROGRESS" }] });
  });

  it("a child retried on its own twice before its parent heard reopens the parent with the rights of the later retrier, as if the parent had heard in between", async () => {
    const waitTask = httpTask("rbtwice_gate", { uri: target("/echo/rbtwice-gate"), method: "GET" }, { asyncComplete: true });
    const subTask = (ref: string, child: string) => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: child } } });
    await register({ name: "rbtwice_mine_child", tasks: [waitTask] });
    await register({ name: "rbtwice_payroll", tasks: [httpTask("pay", { uri: target("/count/rbtwice-payroll"), method: "GET" })] });
    await register({ name: "rbtwice_mine", tasks: [subTask("sub", "rbtwice_mine_child"), subTask("later", "rbtwice_payroll")] });
    const parentId = await startWorkflow("rbtwice_mine");
    const childId = String((await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/rbtwice_gate/FAILED`, {});
    expect((await waitFor(parentId, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"])).status).toBe("FAILED");
    const mallory = await createUser("rbtwice-mallory", {
      directPermissions: ["WORKFLOW_ADMIN", "WORKFLOW_READ", "TASK_EXECUTE"].map((action) => ({ action, scope: "workflow:rbtwice_mine*" })),
    });
    const asMallory = orkes(mallory.token);

    // The parent cannot be reached while the admin, then Mallory, retry the child.
    const { childReopened } = WorkflowExecution.prototype;
    let reachable = false;
    WorkflowExecution.prototype.childReopened = async function (this: WorkflowExecution, notice) {
      if (notice.subWorkflowId === childId && !reachable) throw new Error("Network connection lost (test)");
      return childReopened.call(this, notice);
    };
    try {
      await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
      await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
      await apiOk("POST", `/api/tasks/${childId}/rbtwice_gate/FAILED`, {});
      await waitFor(childId, ["FAILED"]);
      await expectStatus(await call("POST", `/api/workflow/${childId}/retry`, asMallory), 204);
      await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
      reachable = true;
      await eventually(async () => (await storedByExecutionObject(childId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the parent's answer to the reopen", 10_000);
    } finally {
      WorkflowExecution.prototype.childReopened = childReopened;
    }
    await expectStatus(await call("POST", `/api/tasks/${childId}/rbtwice_gate/COMPLETED`, asMallory, {}), 200);
    const done = await waitFor(parentId, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"]);
    expect(done.tasks[0]!.status).toBe("COMPLETED");
    expect(done.tasks[1]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(done.tasks[1]!["reasonForIncompletion"]).toContain("may not start workflow rbtwice_payroll");
    expect(await hits("rbtwice-payroll")).toBe(0);
  });

  it("a child retried on its own by someone who may not start its parent's workflow runs detached: the parent stays as it is", async () => {
    const waitTask = httpTask("rbdetach_gate", { uri: target("/echo/rbdetach-gate"), method: "GET" }, { asyncComplete: true });
    await register({ name: "rbdetach_child", tasks: [waitTask] });
    await register({
      name: "rbdetach_parent",
      tasks: [
        { name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "rbdetach_child" } } },
        httpTask("after", { uri: target("/count/rbdetach-after"), method: "GET" }),
      ],
    });
    const parentId = await startWorkflow("rbdetach_parent");
    const childId = String((await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
    await waitFor(childId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${childId}/rbdetach_gate/FAILED`, {});
    expect((await waitFor(parentId, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"])).status).toBe("FAILED");
    const eve = await createUser("rbdetach-eve", {
      directPermissions: ["WORKFLOW_ADMIN", "WORKFLOW_READ", "TASK_EXECUTE"].map((action) => ({ action, scope: "workflow:rbdetach_child" })),
    });
    const asEve = orkes(eve.token);
    await expectStatus(await call("POST", `/api/workflow/${childId}/retry`, asEve), 204);
    await waitFor(childId, (workflow) => workflow.status === "RUNNING" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    await eventually(async () => (await storedByExecutionObject(childId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the parent's answer to the reopen", 10_000);
    await expectStatus(await call("POST", `/api/tasks/${childId}/rbdetach_gate/COMPLETED`, asEve, {}), 200);
    expect((await waitFor(childId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    const parent = await getWorkflow(parentId);
    expect({ status: parent.status, sub: parent.tasks[0]!.status, tasks: parent.tasks.length }).toEqual({ status: "FAILED", sub: "FAILED", tasks: 1 });
    expect(await hits("rbdetach-after")).toBe(0);
  });

  it("POST /api/tasks/{id}/{ref}/{status}/sync needs WORKFLOW_READ too (it answers the Workflow JSON): without it 403, and the task is not updated", async () => {
    await register({ name: "rbsync_private", tasks: [httpTask("rbsync_gate", { uri: target("/echo/g"), method: "GET" }, { asyncComplete: true })] });
    const id = await startWorkflow("rbsync_private", { ssn: "987-65-4321" });
    await waitFor(id, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    const worker = await createUser("rbac-sync-worker", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:rbsync_gate" }] });
    const denied = await expectStatus(await call("POST", `/api/tasks/${id}/rbsync_gate/COMPLETED/sync`, orkes(worker.token), { done: true }), 403, "PERMISSION_DENIED");
    expect(denied).not.toContain("987-65-4321");
    // The worker holds nothing on the workflow: the refusal does not name it.
    expect(JSON.parse(denied).message).toContain("WORKFLOW_READ on workflow:<workflow>");
    expect(denied).not.toContain("rbsync_private");
    expect((await waitFor(id, () => true)).tasks[0]!.status).toBe("IN_PROGRESS");
    // With WORKFLOW_READ as well, /sync applies the update and answers the Workflow JSON.
    const reader = await createUser("rbac-sync-reader", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:rbsync_gate" }, { action: "WORKFLOW_READ", scope: "workflow:rbsync_private" }] });
    const answered = JSON.parse(await expectStatus(await call("POST", `/api/tasks/${id}/rbsync_gate/COMPLETED/sync`, orkes(reader.token), { done: true }), 200)) as { workflowId: string; tasks: Array<{ status: string }> };
    expect(answered.workflowId).toBe(id);
    expect(answered.tasks[0]!.status).toBe("COMPLETED");
  });

  it("using a secret is a right: registering a definition that references one needs SYSTEM_ADMIN on secret:<name>; refused registrations write nothing and send nothing", async () => {
    const value = `rbac-prod-${crypto.randomUUID()}`;
    await expectStatus(await api("PUT", "/api/secrets/rbac_prod_token", JSON.stringify(value)), 200);
    await expectStatus(await api("PUT", "/api/secrets/rbsec_eve_token", JSON.stringify(`rbac-eve-${crypto.randomUUID()}`)), 200);
    const author = ["WORKFLOW_WRITE", "WORKFLOW_ADMIN", "WORKFLOW_READ"].map((action) => ({ action, scope: "workflow:rbsec_*" }));
    const eve = await createUser("rbac-eve", { directPermissions: author });
    const leaking = (name: string, secret: string) => ({
      name,
      version: 1,
      schemaVersion: 2,
      ownerEmail: "eve@example.com",
      tasks: [httpTask("leak", { uri: target(`/count/\${workflow.secrets.${secret}}`), method: "GET" })],
    });
    const plain = { ...leaking("rbsec_plain", "x"), tasks: [httpTask("ok", { uri: target("/echo/plain"), method: "GET" })] };

    const definitions = await rowCount("workflow_defs");
    const refused = JSON.parse(await expectStatus(await call("POST", "/api/metadata/workflow?overwrite=true", orkes(eve.token), leaking("rbsec_exfil", "rbac_prod_token")), 403, "PERMISSION_DENIED")) as { message: string };
    expect(refused.message).toContain("rbac_prod_token");
    // A metadata admin may write every definition, but not use every secret: one definition of a batch using one refuses the batch.
    const metadataAdmin = await createUser("rbac-metadata-admin", { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }] });
    await expectStatus(await call("PUT", "/api/metadata/workflow", orkes(metadataAdmin.token), [plain, leaking("rbsec_exfil2", "rbac_prod_token")]), 403, "PERMISSION_DENIED");
    // A secret reached through bracket syntax or inside a branch counts as well.
    const bracketed = { ...leaking("rbsec_exfil3", "x"), tasks: [httpTask("leak", { uri: target("/count/${true ? workflow['secrets']['rbac_prod_token'] : ''}"), method: "GET" })] };
    await expectStatus(await call("POST", "/api/metadata/workflow?overwrite=true", orkes(eve.token), bracketed), 403, "PERMISSION_DENIED");
    expect(await rowCount("workflow_defs")).toBe(definitions);
    await expectStatus(await call("POST", "/api/workflow/rbsec_exfil", orkes(eve.token), {}), 404, "NOT_FOUND");
    expect(await hits(value)).toBe(0);

    // SYSTEM_ADMIN on a secret scope lets her use those secrets, and only those.
    await apiOk("PUT", "/api/security/users/rbac-eve/roles", { roles: [], directPermissions: [...author, { action: "SYSTEM_ADMIN", scope: "secret:rbsec_*" }] });
    await expectStatus(await call("POST", "/api/metadata/workflow?overwrite=true", orkes(eve.token), leaking("rbsec_own", "rbsec_eve_token")), 200);
    await expectStatus(await call("PUT", "/api/metadata/workflow", orkes(metadataAdmin.token), [plain]), 200);
    await expectStatus(await call("POST", "/api/metadata/workflow?overwrite=true", orkes(eve.token), leaking("rbsec_exfil", "rbac_prod_token")), 403, "PERMISSION_DENIED");
    // ...and she still cannot read the secrets API with it.
    await expectStatus(await call("GET", "/api/secrets", orkes(eve.token)), 403, "PERMISSION_DENIED");

    // A definition the admin stored keeps working when she starts it: she chose none of it.
    await register(leaking("rbsec_admin_made", "rbac_prod_token"));
    const started = await call("POST", "/api/workflow/rbsec_admin_made", orkes(eve.token), {});
    const workflowId = await expectStatus(started, 200);
    expect((await waitFor(workflowId, ["COMPLETED"])).status).toBe("COMPLETED");
    expect(await hits(value)).toBe(1);
  });

  it("a USER_ADMIN hands out only grants it holds: no role, assignment, role update, API key or access rule raises anyone to SYSTEM_ADMIN, and refusals change nothing", async () => {
    const userAdmin = [{ action: "USER_ADMIN", scope: "*" }];
    const mallory = await createUser("rbac-user-admin", { directPermissions: userAdmin });
    const asMallory = orkes(mallory.token);
    const counts = async () => ({ roles: await rowCount("roles"), rules: await rowCount("access_rules"), keys: await rowCount("api_keys") });
    await apiOk("POST", "/api/security/roles", { name: "rbac-sysadmins", permissions: [{ action: "SYSTEM_ADMIN", scope: "*" }] }, 201);
    await apiOk("POST", "/api/security/roles", { name: "rbac-readers", permissions: [{ action: "WORKFLOW_READ", scope: "workflow:team_*" }] }, 201);
    await createUser("rbac-root", { roles: ["rbac-sysadmins"] });
    await createUser("rbac-teammate", { roles: ["rbac-readers"] });
    const rule = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: "/api/workflow/{workflowId}/pause", methods: ["PUT"], requiredPermissions: [{ action: "SYSTEM_ADMIN", scope: "*" }] }, 201);
    const before = await counts();

    const sysAdmin = [{ action: "SYSTEM_ADMIN", scope: "*" }];
    const refusals = [
      await call("POST", "/api/security/roles", asMallory, { name: "rbac-escalate", permissions: sysAdmin }),
      await call("POST", "/api/security/roles", asMallory, { name: "rbac-escalate", permissions: [{ action: "WORKFLOW_READ", scope: "*" }] }),
      await call("PUT", "/api/security/users/rbac-user-admin/roles", asMallory, { roles: ["rbac-sysadmins"], directPermissions: userAdmin }),
      await call("PUT", "/api/security/users/rbac-user-admin/roles", asMallory, { roles: [], directPermissions: [...userAdmin, ...sysAdmin] }),
      // A role already assigned to others cannot be widened to what she does not hold.
      await call("PUT", "/api/security/roles/rbac-readers", asMallory, { permissions: [{ action: "WORKFLOW_READ", scope: "workflow:team_*" }, ...sysAdmin] }),
      // A key for a user holding more than she does would let her act as that user.
      await call("POST", "/api/security/users/rbac-root/api-keys", asMallory),
      await call("POST", "/api/security/users/rbac-teammate/api-keys", asMallory),
      await call("POST", "/api/security/rules", asMallory, { apiPath: "/api/secrets", methods: ["GET"], requiredPermissions: [] }),
      await call("DELETE", `/api/security/rules/${rule.id}`, asMallory),
    ];
    for (const refused of refusals) await expectStatus(refused, 403, "PERMISSION_DENIED");
    expect(await counts()).toEqual(before);
    expect(await apiOk("GET", "/api/security/users/rbac-user-admin")).toEqual({ userId: "rbac-user-admin", roles: [], directPermissions: userAdmin, groups: [] });
    expect(await apiOk("GET", "/api/security/roles/rbac-readers")).toMatchObject({ permissions: [{ action: "WORKFLOW_READ", scope: "workflow:team_*" }] });
    expect((await apiOk<{ rules: Array<{ id: string }> }>("GET", "/api/security/rules")).rules.map((stored) => stored.id)).toContain(rule.id);
    await expectStatus(await call("GET", "/api/secrets", asMallory), 403, "PERMISSION_DENIED");

    // What she holds she may hand out, and keeping a role a user already has is not handing it out.
    await expectStatus(await call("POST", "/api/security/roles", asMallory, { name: "rbac-team-admins", permissions: [{ action: "USER_ADMIN", scope: "team:a" }] }), 201);
    await expectStatus(await call("PUT", "/api/security/users/rbac-teammate/roles", asMallory, { roles: ["rbac-readers", "rbac-team-admins"] }), 200);
    await expectStatus(await call("PUT", "/api/security/users/rbac-root/roles", asMallory, { roles: ["rbac-sysadmins"], directPermissions: userAdmin }), 200);
    await expectStatus(await call("POST", "/api/security/users/rbac-newcomer/api-keys", asMallory), 201);
    // The admin (SYSTEM_ADMIN on *) hands out anything.
    await apiOk("PUT", "/api/security/roles/rbac-readers", { permissions: [{ action: "WORKFLOW_READ", scope: "*" }, ...sysAdmin] });
    await apiOk("DELETE", `/api/security/rules/${rule.id}`);
  });

  it("an assignment checked against many roles binds them as one parameter (D1 takes 100 a statement), and is refused when one changed meanwhile", async () => {
    const store = new SecurityStore(env.DB);
    const names = Array.from({ length: 60 }, (_, index) => `bulk-role-${index}`);
    for (const name of names) expect(await store.createRole({ name, description: "", permissions: [{ action: "WORKFLOW_READ", scope: `workflow:${name}` }] })).toBe(true);
    const asRead = await store.rolesAsRead(names);
    const condition = rolesUnchanged(asRead);
    expect(condition.binds).toHaveLength(1);
    const groups = Array.from({ length: 40 }, (_, index) => ({ id: `rbac-bulk-group-${index}`, description: "", roles: [], permissions: [], defaultAccess: {} }));
    for (const group of groups) {
      await env.DB.prepare("INSERT INTO groups (id, description, roles, permissions, create_time, update_time) VALUES (?, '', '[]', '[]', 0, 0)").bind(group.id).run();
    }
    const groupsAsRead = GroupRepository.unchangedCondition(groups);
    expect(groupsAsRead.binds).toHaveLength(1);
    const holds = async (check: { sql: string; binds: readonly string[] }) => (await env.DB.prepare(`SELECT 1 AS ok WHERE ${check.sql}`).bind(...check.binds).all()).results.length === 1;
    expect(await holds(groupsAsRead)).toBe(true);
    await env.DB.prepare("UPDATE groups SET roles = ? WHERE id = ?").bind(JSON.stringify(["ADMIN"]), groups[39]!.id).run();
    expect(await holds(groupsAsRead)).toBe(false);

    const assignment = { userId: "rbac-many-roles", roles: names, directPermissions: [] };
    expect(await store.putAssignment(assignment, null, [], condition)).toBe(true);
    expect((await store.getAssignment("rbac-many-roles"))?.roles).toEqual(names);
    // One role changed since it was read: a write checked against the old one is refused, and nothing is written.
    await env.DB.prepare("UPDATE roles SET permissions = ? WHERE name = ?").bind(JSON.stringify([{ action: "WORKFLOW_ADMIN", scope: "*" }]), names[30]).run();
    const fewer = { ...assignment, roles: names.slice(0, 59) };
    expect(await store.putAssignment(fewer, assignment, [], condition)).toBe(false);
    expect((await store.getAssignment("rbac-many-roles"))?.roles).toEqual(names);
    expect(await store.putAssignment(fewer, assignment, [], rolesUnchanged(await store.rolesAsRead(names)))).toBe(true);
  });

  it("roles and users refuse bad input with the contract's errors and write nothing", async () => {
    const roles = await rowCount("roles");
    await expectStatus(await api("POST", "/api/security/roles", { name: "bad", permissions: [{ action: "FLY", scope: "*" }] }), 400, "VALIDATION_ERROR");
    await expectStatus(await api("POST", "/api/security/roles", { name: "bad name!", permissions: [] }), 400, "VALIDATION_ERROR");
    await expectStatus(await api("POST", "/api/security/roles", { name: "bad", permissions: [{ action: "WORKFLOW_READ", scope: "" }] }), 400, "VALIDATION_ERROR");
    expect(await rowCount("roles")).toBe(roles);
    await apiOk("POST", "/api/security/roles", { name: "dup-role", permissions: [] }, 201);
    await expectStatus(await api("POST", "/api/security/roles", { name: "dup-role", permissions: [] }), 409, "CONFLICT");
    await expectStatus(await api("GET", "/api/security/roles/no-such-role"), 404, "NOT_FOUND");
    await expectStatus(await api("PUT", "/api/security/roles/no-such-role", { permissions: [] }), 404, "NOT_FOUND");
    await expectStatus(await api("DELETE", "/api/security/roles/no-such-role"), 404, "NOT_FOUND");
    const users = await rowCount("user_assignments");
    await expectStatus(await api("PUT", "/api/security/users/ghost/roles", { roles: ["no-such-role"] }), 400, "VALIDATION_ERROR");
    expect(await rowCount("user_assignments")).toBe(users);
    // A body that is not an object (or none) replaces nothing: it was read as "no roles, no permissions".
    await apiOk("PUT", "/api/security/users/rbac-kept/roles", { roles: ["USER_READ_ONLY"], directPermissions: [{ action: "TASK_READ", scope: "task:kept" }] });
    const kept = await apiOk("GET", "/api/security/users/rbac-kept");
    for (const body of ["null", "[]", "[1,2]", '"roles"', undefined]) {
      await expectStatus(await api("PUT", "/api/security/users/rbac-kept/roles", body), 400, "VALIDATION_ERROR");
    }
    for (const [method, path, body] of [["POST", "/api/security/roles", "[]"], ["PUT", "/api/security/roles/USER_READ_ONLY", "null"], ["POST", "/api/security/rules", "[]"]] as const) {
      await expectStatus(await api(method, path, body), 400, "VALIDATION_ERROR");
    }
    expect(await apiOk("GET", "/api/security/users/rbac-kept")).toEqual(kept);
    expect(await apiOk("GET", "/api/security/users/never-seen")).toEqual({ userId: "never-seen", roles: [], directPermissions: [], groups: [] });
    expect(await apiOk<Array<{ name: string }>>("GET", "/api/security/roles")).toEqual(expect.arrayContaining([expect.objectContaining({ name: "dup-role" })]));
    await apiOk("DELETE", "/api/security/roles/dup-role");
    // A malformed percent escape in a path is the caller's mistake (400), on every DELETE route too.
    await expectStatus(await api("DELETE", "/api/security/rules/%E0%A4%A"), 400, "VALIDATION_ERROR");
    await expectStatus(await api("DELETE", "/api/security/users/ghost/api-keys/%E0%A4%A"), 400, "VALIDATION_ERROR");
    await expectStatus(await api("DELETE", "/api/security/roles/%E0%A4%A"), 400, "VALIDATION_ERROR");
    // The bootstrap admin's id is reserved: no keys or roles can be attached to it.
    await expectStatus(await api("POST", "/api/security/users/admin/api-keys"), 400, "VALIDATION_ERROR");
    await expectStatus(await api("PUT", "/api/security/users/admin/roles", { roles: [] }), 400, "VALIDATION_ERROR");
  });
});

describe("deleting a role someone holds", () => {
  it("a hand-out whose role was deleted after the request checked it exists is a 409, where its condition covered only the roles found and let the name of a role that is gone be written", async () => {
    const store = new SecurityStore(env.DB);
    const role = "rbac-deleted-meanwhile";
    await apiOk("POST", "/api/security/roles", { name: role, permissions: [{ action: "WORKFLOW_READ", scope: "workflow:meanwhile_*" }] }, 201);
    expect(await store.unknownRoles([role])).toEqual([]);
    // Deleted between the request's check that it exists and the hand-out's read of what it grants.
    await apiOk("DELETE", `/api/security/roles/${role}`);
    const admin = PERMISSIONS.map((action) => ({ action, scope: "*" }));
    await expect(authorizeRoles(admin, store, [role, "USER"], `assigning ${role}`)).rejects.toMatchObject({ status: 409, code: "CONFLICT" });
    // Roles that all exist are checked as before: the condition they are written under.
    expect((await authorizeRoles(admin, store, ["USER"], "assigning USER")).binds).toHaveLength(1);
  });

  it("is a 409 naming its holders (users, applications, groups), nothing deleted; once taken from them all it deletes, and a role made later under its name gives them nothing", async () => {
    const role = "rbac-held-role";
    await apiOk("POST", "/api/security/roles", { name: role, permissions: [{ action: "WORKFLOW_READ", scope: "workflow:held_*" }] }, 201);
    await apiOk("PUT", "/api/security/users/rbac-holder/roles", { roles: [role] });
    const application = await apiOk<{ id: string }>("POST", "/api/applications", { name: "rbac-held-app" });
    await apiOk("POST", `/api/applications/${application.id}/roles/${role}`);
    await apiOk("PUT", "/api/groups/rbac-held-group", { description: "g", roles: [role] });
    const roles = await rowCount("roles");

    const refused = JSON.parse(await expectStatus(await api("DELETE", `/api/security/roles/${role}`), 409, "CONFLICT")) as { message: string };
    expect(refused.message).toContain(`Role ${role} is still held by application ${application.id}, user rbac-holder, group rbac-held-group;`);
    expect(await rowCount("roles")).toBe(roles);
    expect(await apiOk("GET", `/api/security/roles/${role}`)).toMatchObject({ name: role });
    expect(await apiOk("GET", "/api/security/users/rbac-holder")).toMatchObject({ roles: [role] });

    // Taken from two of three: still refused, naming the one left.
    await apiOk("PUT", "/api/security/users/rbac-holder/roles", { roles: [] });
    await apiOk("DELETE", `/api/applications/${application.id}/roles/${role}`);
    const left = JSON.parse(await expectStatus(await api("DELETE", `/api/security/roles/${role}`), 409, "CONFLICT")) as { message: string };
    expect(left.message).toContain(`still held by group rbac-held-group;`);
    await apiOk("PUT", "/api/groups/rbac-held-group", { description: "g", roles: [] });
    await apiOk("DELETE", `/api/security/roles/${role}`);
    await expectStatus(await api("GET", `/api/security/roles/${role}`), 404, "NOT_FOUND");

    // The name comes back as a new role: nobody who held the old one holds it.
    await apiOk("POST", "/api/security/roles", { name: role, permissions: [{ action: "WORKFLOW_READ", scope: "*" }] }, 201);
    expect(await apiOk("GET", "/api/security/users/rbac-holder")).toMatchObject({ roles: [] });
    expect(await apiOk("GET", "/api/groups/rbac-held-group")).toMatchObject({ roles: [] });
    await apiOk("DELETE", `/api/security/roles/${role}`);
  });

  it("migration 0047 takes the names of roles deleted before this off users' and groups' lists, keeping the others in their order", async () => {
    const migration = env.TEST_MIGRATIONS.find((candidate) => candidate.name.startsWith("0047_"));
    expect(migration?.name).toBe("0047_deleted_role_names.sql");
    await apiOk("POST", "/api/security/roles", { name: "rbac-kept-b", permissions: [] }, 201);
    await apiOk("POST", "/api/security/roles", { name: "rbac-kept-a", permissions: [] }, 201);
    // As a delete left them before it was refused for a role still held: the role's row gone, its name on the lists.
    await apiOk("PUT", "/api/security/users/rbac-leftover/roles", { roles: ["rbac-kept-b", "USER", "rbac-kept-a"] });
    await apiOk("PUT", "/api/security/users/rbac-untouched/roles", { roles: ["rbac-kept-a"] });
    await apiOk("PUT", "/api/groups/rbac-leftover-group", { description: "g", roles: ["rbac-kept-b"] });
    await env.DB.prepare(`UPDATE user_assignments SET roles = '["rbac-gone","rbac-kept-b","USER","rbac-gone-too","rbac-kept-a"]' WHERE user_id = 'rbac-leftover'`).run();
    await env.DB.prepare(`UPDATE groups SET roles = '["rbac-gone"]' WHERE id = 'rbac-leftover-group'`).run();
    await env.DB.prepare(`UPDATE user_assignments SET update_time = 1 WHERE user_id = 'rbac-untouched'`).run();

    for (const query of migration!.queries) await env.DB.prepare(query).run();
    expect(await apiOk("GET", "/api/security/users/rbac-leftover")).toMatchObject({ roles: ["rbac-kept-b", "USER", "rbac-kept-a"] });
    expect(await apiOk("GET", "/api/groups/rbac-leftover-group")).toMatchObject({ roles: [] });
    const untouched = await env.DB.prepare(`SELECT roles, update_time FROM user_assignments WHERE user_id = 'rbac-untouched'`).first();
    expect(untouched).toEqual({ roles: '["rbac-kept-a"]', update_time: 1 });
    // The rewritten list is stored as the service writes one, so a change checked against it as read still applies.
    await apiOk("PUT", "/api/security/users/rbac-leftover/roles", { roles: ["USER"] });
    expect(await apiOk("GET", "/api/security/users/rbac-leftover")).toMatchObject({ roles: ["USER"] });
    await apiOk("PUT", "/api/security/users/rbac-untouched/roles", { roles: [] });
    await apiOk("PUT", "/api/security/users/rbac-leftover/roles", { roles: [] });
    await apiOk("DELETE", "/api/groups/rbac-leftover-group");
    for (const role of ["rbac-kept-a", "rbac-kept-b"]) await apiOk("DELETE", `/api/security/roles/${role}`);
  });

  it("names at most five holders, with how many more", async () => {
    const role = "rbac-many-holders";
    await apiOk("POST", "/api/security/roles", { name: role, permissions: [] }, 201);
    const users = Array.from({ length: 7 }, (_, index) => `rbac-many-holder-${index}`);
    for (const user of users) await apiOk("PUT", `/api/security/users/${user}/roles`, { roles: [role] });
    const refused = JSON.parse(await expectStatus(await api("DELETE", `/api/security/roles/${role}`), 409, "CONFLICT")) as { message: string };
    expect(refused.message).toContain(`still held by ${users.slice(0, 5).map((user) => `user ${user}`).join(", ")} and 2 more;`);
    for (const user of users) await apiOk("PUT", `/api/security/users/${user}/roles`, { roles: [] });
    await apiOk("DELETE", `/api/security/roles/${role}`);
  });
});

type BulkResponse = { bulkErrorResults: Record<string, string>; bulkSuccessfulResults: string[] };

/** A bulk operation as the caller whose headers are given; fails the test unless it answers 200. */
async function bulkAs(headers: Record<string, string>, method: string, operation: string, ids: string[], query = ""): Promise<BulkResponse> {
  return JSON.parse(await expectStatus(await call(method, `/api/workflow/bulk/${operation}${query}`, headers, ids), 200)) as BulkResponse;
}

/** The error message the single-id route answers this caller. */
async function refusalAs(headers: Record<string, string>, method: string, path: string, status = 403): Promise<string> {
  return (JSON.parse(await expectStatus(await call(method, path, headers), status)) as { message: string }).message;
}

/** A workflow whose first task waits for the completion API; started by the admin, returned once that task waits. */
async function startWaitingAs(name: string): Promise<string> {
  await register({ name, tasks: [httpTask("gate", { uri: target("/echo/bulk-gate"), method: "GET" }, { asyncComplete: true })] });
  const workflowId = await startWorkflow(name);
  await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
  return workflowId;
}

describe("bulk operations", () => {
  it("authorize each id as its single-id route: WORKFLOW_ADMIN on workflow A's name pauses A but not B, which gets the single route's 403; the bulk route itself takes any authenticated caller", async () => {
    const mine = await startWaitingAs("bulkauth_a");
    const theirs = await startWaitingAs("bulkauth_b");
    const unknown = crypto.randomUUID();
    const alice = await createUser("bulk-alice", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:bulkauth_a" }] });
    const asAlice = orkes(alice.token);

    const paused = await bulkAs(asAlice, "PUT", "pause", [mine, theirs, unknown]);
    expect(paused.bulkSuccessfulResults).toEqual([mine]);
    expect(paused.bulkErrorResults).toEqual({
      [theirs]: await refusalAs(asAlice, "PUT", `/api/workflow/${theirs}/pause`),
      [unknown]: await refusalAs(asAlice, "PUT", `/api/workflow/${unknown}/pause`),
    });
    // Alice holds nothing on bulkauth_b: its refusal does not name it, and reads as the unknown id's.
    expect(paused.bulkErrorResults[theirs]).toBe(`Permission denied: PUT /api/workflow/${theirs}/pause needs WORKFLOW_ADMIN on workflow:<workflow>`);
    expect(paused.bulkErrorResults[unknown]).toBe(`Permission denied: PUT /api/workflow/${unknown}/pause needs WORKFLOW_ADMIN on workflow:<workflow>`);
    expect((await getWorkflow(mine)).status).toBe("PAUSED");
    expect((await getWorkflow(theirs)).status).toBe("RUNNING");
    const terminated = await bulkAs(asAlice, "POST", "terminate", [theirs, mine]);
    expect(terminated).toEqual({ bulkErrorResults: { [theirs]: await refusalAs(asAlice, "DELETE", `/api/workflow/${theirs}`) }, bulkSuccessfulResults: [mine] });
    expect((await getWorkflow(theirs)).status).toBe("RUNNING");

    // A caller holding nothing reaches the route, and every id is refused; without credentials it is a 401.
    const nobody = await createUser("bulk-nobody");
    const refused = await bulkAs(orkes(nobody.token), "POST", "terminate", [theirs]);
    expect(refused).toEqual({ bulkErrorResults: { [theirs]: await refusalAs(orkes(nobody.token), "DELETE", `/api/workflow/${theirs}`) }, bulkSuccessfulResults: [] });
    await expectStatus(await call("POST", "/api/workflow/bulk/terminate", {}, [theirs]), 401);
    expect((await getWorkflow(theirs)).status).toBe("RUNNING");
  });

  it("apply access rules added through the API to each id exactly as to its single-id route, in both directions", async () => {
    const first = await startWaitingAs("bulkrule_ops");
    const second = await startWaitingAs("bulkrule_ops");
    // Whoever may complete the workflow's tasks may also pause it (the README's example rule).
    const widening = await apiOk<{ id: string }>("POST", "/api/security/rules", {
      apiPath: "/api/workflow/{workflowId}/pause",
      methods: ["PUT"],
      requiredPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:${workflow.name}" }, { action: "TASK_EXECUTE", scope: "workflow:${workflow.name}" }],
    }, 201);
    // And nobody but a system admin may resume the second one.
    const narrowing = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: `/api/workflow/${second}/resume`, methods: ["PUT"], requiredPermissions: [{ action: "SYSTEM_ADMIN", scope: "*" }] }, 201);
    const operator = await createUser("bulk-operator", { directPermissions: [{ action: "TASK_EXECUTE", scope: "workflow:bulkrule_ops" }] });
    const admin = await createUser("bulk-wfadmin", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:bulkrule_ops" }] });
    let paused: BulkResponse;
    let resumed: BulkResponse;
    let resumeRefusal: string;
    try {
      paused = await bulkAs(orkes(operator.token), "PUT", "pause", [first, second]);
      resumed = await bulkAs(orkes(admin.token), "PUT", "resume", [first, second]);
      resumeRefusal = await refusalAs(orkes(admin.token), "PUT", `/api/workflow/${second}/resume`);
    } finally {
      await apiOk("DELETE", `/api/security/rules/${widening.id}`);
      await apiOk("DELETE", `/api/security/rules/${narrowing.id}`);
    }
    expect(paused).toEqual({ bulkErrorResults: {}, bulkSuccessfulResults: [first, second] });
    expect(resumed).toEqual({ bulkErrorResults: { [second]: resumeRefusal }, bulkSuccessfulResults: [first] });
    expect(resumeRefusal).toContain("SYSTEM_ADMIN");
    expect((await getWorkflow(first)).status).toBe("RUNNING");
    expect((await getWorkflow(second)).status).toBe("PAUSED");
    // With the rule gone, the default rule decides again: the operator no longer pauses.
    const afterwards = await bulkAs(orkes(operator.token), "PUT", "pause", [first]);
    expect(afterwards.bulkSuccessfulResults).toEqual([]);
    expect((await getWorkflow(first)).status).toBe("RUNNING");
  });

  it("retry and restart record the caller's start scopes, as the single routes do: a SUB_WORKFLOW she may not start fails and starts nothing", async () => {
    await register({ name: "bulksc_payroll", tasks: [httpTask("pay", { uri: target("/count/bulksc-payroll"), method: "GET" })] });
    await register({
      name: "bulksc_mine",
      tasks: [
        httpTask("flaky", { uri: target("/flaky/bulksc-flaky?fail=1"), method: "GET" }),
        { name: "later", taskReferenceName: "later", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "bulksc_payroll" } } },
      ],
    });
    const workflowId = await startWorkflow("bulksc_mine");
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("FAILED");
    const mallory = await createUser("bulksc-mallory", { directPermissions: ["WORKFLOW_ADMIN", "WORKFLOW_READ"].map((action) => ({ action, scope: "workflow:bulksc_mine" })) });
    const asMallory = orkes(mallory.token);
    const terminal = (workflow: { status: string; tasks: Array<{ referenceTaskName: string }> }) => workflow.status !== "RUNNING" && workflow.tasks.some((task) => task.referenceTaskName === "later");

    expect(await bulkAs(asMallory, "POST", "retry", [workflowId])).toEqual({ bulkErrorResults: {}, bulkSuccessfulResults: [workflowId] });
    const retried = await waitFor(workflowId, terminal);
    expect(retried.tasks.at(-1)!["reasonForIncompletion"]).toContain("may not start workflow bulksc_payroll");
    expect(await hits("bulksc-payroll")).toBe(0);

    // The admin's restart records every scope again, and the child runs.
    await apiOk("POST", `/api/workflow/${workflowId}/restart`, undefined, 204);
    expect((await waitFor(workflowId, (workflow) => workflow.status === "COMPLETED")).tasks.at(-1)!.status).toBe("COMPLETED");
    expect(await hits("bulksc-payroll")).toBe(1);

    expect(await bulkAs(asMallory, "POST", "restart", [workflowId])).toEqual({ bulkErrorResults: {}, bulkSuccessfulResults: [workflowId] });
    const restarted = await waitFor(workflowId, (workflow) => workflow.status === "FAILED" && terminal(workflow));
    expect(restarted.tasks.at(-1)!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(restarted.tasks.at(-1)!["reasonForIncompletion"]).toContain("may not start workflow bulksc_payroll");
    expect(await hits("bulksc-payroll")).toBe(1);
  });
});

describe("skipping a task (PUT /api/workflow/{id}/skiptask/{ref})", () => {
  /** A running execution whose asyncComplete task has its response and waits for its completion. */
  async function startGated(name: string): Promise<string> {
    await register({ name, tasks: [httpTask("gate", { uri: target("/echo/skip-gate"), method: "GET" }, { asyncComplete: true }), httpTask("after", { uri: target(`/count/${name}-after`), method: "GET" })] });
    const workflowId = await startWorkflow(name);
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS" && (workflow.tasks[0]!.outputData as { statusCode?: number }).statusCode === 200);
    return workflowId;
  }

  it("needs WORKFLOW_ADMIN on the workflow, as pause and terminate do: a reader or an admin of another workflow gets 403 and nothing changes; a stored rule on the route decides first", async () => {
    const workflowId = await startGated("skipauth_orders");
    const before = await getWorkflow(workflowId);
    const reader = await createUser("skip-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    const elsewhere = await createUser("skip-elsewhere", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:skipauth_other" }] });
    const path = `/api/workflow/${workflowId}/skiptask/gate`;
    // The workflow is named to the reader, who may read it, not to the admin of another one.
    for (const [user, shown] of [[reader, "skipauth_orders"], [elsewhere, "<workflow>"]] as const) {
      const text = await expectStatus(await call("PUT", path, orkes(user.token), { taskOutput: { by: "nobody" } }), 403, "PERMISSION_DENIED");
      expect(JSON.parse(text).message).toBe(`Permission denied: PUT ${path} needs WORKFLOW_ADMIN on workflow:${shown}`);
    }
    expect(await getWorkflow(workflowId)).toEqual(before);

    // A stored rule lets whoever may execute the task skip it.
    const rule = await apiOk<{ id: string }>("POST", "/api/security/rules", {
      apiPath: "/api/workflow/{workflowId}/skiptask/{taskRefName}",
      methods: ["PUT"],
      requiredPermissions: [{ action: "TASK_EXECUTE", scope: "task:${path.taskRefName}" }],
    }, 201);
    const operator = await createUser("skip-operator", { directPermissions: [{ action: "TASK_EXECUTE", scope: "task:gate" }] });
    try {
      await expectStatus(await call("PUT", `/api/workflow/${workflowId}/skiptask/after`, orkes(operator.token)), 403, "PERMISSION_DENIED");
      await expectStatus(await call("PUT", path, orkes(operator.token), { taskOutput: { by: "operator" } }), 200);
    } finally {
      await apiOk("DELETE", `/api/security/rules/${rule.id}`);
    }
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.tasks[0]).toMatchObject({ status: "SKIPPED", outputData: { by: "operator" } });

    const owner = await startGated("skipauth_mine");
    const admin = await createUser("skip-admin", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:skipauth_mine" }] });
    await expectStatus(await call("PUT", `/api/workflow/${owner}/skiptask/gate`, orkes(admin.token)), 200);
    expect((await waitFor(owner, ["COMPLETED", "FAILED"])).tasks[0]!.status).toBe("SKIPPED");
  });
});

describe("updating workflow variables (POST /api/workflow/{id}/variables)", () => {
  it("needs WORKFLOW_ADMIN on the workflow, as pause and skiptask do, and WORKFLOW_READ for its answer: a reader, an admin of another workflow or one who may not read it gets 403 and nothing changes", async () => {
    await register({ name: "varsauth_orders", variables: { stage: "initial" }, tasks: [httpTask("gate", { uri: target("/echo/vars-gate"), method: "GET" }, { asyncComplete: true })] });
    const workflowId = await startWorkflow("varsauth_orders");
    await waitFor(workflowId, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    const before = await getWorkflow(workflowId);
    const reader = await createUser("vars-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    const elsewhere = await createUser("vars-elsewhere", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:varsauth_other" }] });
    const path = `/api/workflow/${workflowId}/variables`;
    for (const [user, shown] of [[reader, "varsauth_orders"], [elsewhere, "<workflow>"]] as const) {
      const text = await expectStatus(await call("POST", path, orkes(user.token), { stage: "by nobody" }), 403, "PERMISSION_DENIED");
      expect(JSON.parse(text).message).toBe(`Permission denied: POST ${path} needs WORKFLOW_ADMIN on workflow:${shown}`);
    }
    expect(await getWorkflow(workflowId)).toEqual(before);

    // Answered with the execution: an admin who may not read it is refused before anything changes.
    const blind = await createUser("vars-blind-admin", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:varsauth_orders" }] });
    const refusal = await expectStatus(await call("POST", path, orkes(blind.token), { stage: "unseen" }), 403, "PERMISSION_DENIED");
    expect(JSON.parse(refusal).message).toBe(`Permission denied: GET /api/workflow/${workflowId} needs WORKFLOW_READ on workflow:varsauth_orders`);
    expect(await getWorkflow(workflowId)).toEqual(before);

    const admin = await createUser("vars-admin", {
      directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:varsauth_orders" }, { action: "WORKFLOW_READ", scope: "workflow:varsauth_orders" }],
    });
    const text = await expectStatus(await call("POST", path, orkes(admin.token), { stage: "by its admin" }), 200);
    expect(JSON.parse(text)).toMatchObject({ workflowId, variables: { stage: "by its admin" } });
  });
});

describe("the user listing", () => {
  it("lists everyone assigned something or holding a key, with what they are assigned and how many keys they hold, to user admins only", async () => {
    await apiOk("PUT", "/api/security/users/listed-assigned/roles", { roles: ["USER_READ_ONLY"], directPermissions: [{ action: "TASK_READ", scope: "task:x" }] });
    await apiOk("POST", "/api/security/users/listed-keyed/api-keys", undefined, 201);
    await apiOk("POST", "/api/security/users/listed-keyed/api-keys", undefined, 201);
    const users = await apiOk<Array<{ userId: string; roles: string[]; directPermissions: unknown[]; keys: number }>>("GET", "/api/security/users");
    expect(users.find((user) => user.userId === "listed-assigned")).toEqual({ userId: "listed-assigned", roles: ["USER_READ_ONLY"], directPermissions: [{ action: "TASK_READ", scope: "task:x" }], keys: 0, groups: [] });
    expect(users.find((user) => user.userId === "listed-keyed")).toEqual({ userId: "listed-keyed", roles: [], directPermissions: [], keys: 2, groups: [] });
    expect(users.map((user) => user.userId)).toEqual([...users.map((user) => user.userId)].sort());
    // A member of groups: listed with them (by id, in order), and so is their own read.
    await apiOk("PUT", "/api/groups/listed-z", { description: "z", roles: [] });
    await apiOk("PUT", "/api/groups/listed-a", { description: "a", roles: [] });
    for (const group of ["listed-z", "listed-a"]) expect((await api("POST", `/api/groups/${group}/users/listed-member`)).status).toBe(200);
    const member = (await apiOk<Array<{ userId: string }>>("GET", "/api/security/users")).find((user) => user.userId === "listed-member");
    expect(member).toEqual({ userId: "listed-member", roles: [], directPermissions: [], keys: 0, groups: ["listed-a", "listed-z"] });
    expect(await apiOk("GET", "/api/security/users/listed-member")).toEqual({ userId: "listed-member", roles: [], directPermissions: [], groups: ["listed-a", "listed-z"] });
    const reader = await createUser("listed-reader", { roles: ["USER_READ_ONLY"] });
    await expectStatus(await call("GET", "/api/security/users", orkes(reader.token)), 403, "PERMISSION_DENIED");
  });
});
