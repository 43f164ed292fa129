// The web UI's credential handling (ui/lib/api.js) against a fake server, in Node: sessionStorage and fetch are stand-ins.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

/** The part of ui/lib/api.js these tests drive (the module is plain JavaScript without type declarations). */
interface UiApi {
  api(method: string, path: string, body?: unknown): Promise<unknown>;
  logIn(credential: string): Promise<unknown>;
  isLoggedIn(): boolean;
  logOut(): void;
  setSessionEndHandler(handler: () => void): void;
}

const TOKEN_KEY = "edge-conductor.token";
const REFRESH_KEY = "edge-conductor.refresh";
const MODULE_URL = new URL("../../ui/lib/api.js", import.meta.url).href;

/** sessionStorage in memory, remembering every value ever written. */
class MemoryStorage {
  readonly map = new Map<string, string>();
  readonly writes: Array<[string, string]> = [];
  getItem(key: string): string | null {
    return this.map.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.writes.push([key, String(value)]);
    this.map.set(key, String(value));
  }
  removeItem(key: string): void {
    this.map.delete(key);
  }
}

interface Seen {
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}
type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
/** Lets the other pending requests start before this one is answered, as on a network. */
const aTurnLater = () => new Promise((resolve) => setTimeout(resolve, 1));

/** A server with the Worker's rotation rule: a refresh token exchanged twice revokes every token of the session. */
function fakeServer() {
  const live = new Set<string>();
  const refreshTokens = new Map<string, "unused" | "used">();
  const revoked: string[] = [];
  const seen: Seen[] = [];
  let sessionRevoked = false;
  let counter = 1;
  const exchangeRefresh = (refreshToken: string): Response => {
    const state = refreshTokens.get(refreshToken);
    if (state === undefined || sessionRevoked) return json(401, { error: "INVALID_TOKEN", message: "Invalid refresh token" });
    if (state === "used") {
      sessionRevoked = true;
      live.clear();
      return json(401, { error: "INVALID_TOKEN", message: "Refresh token was already used" });
    }
    refreshTokens.set(refreshToken, "used");
    counter++;
    live.add(`A${counter}`);
    refreshTokens.set(`R${counter}`, "unused");
    return json(200, { token: `A${counter}`, refresh_token: `R${counter}` });
  };
  const fetch: Fetch = async (input, init = {}) => {
    const headers = Object.fromEntries(Object.entries((init.headers ?? {}) as Record<string, string>).map(([key, value]) => [key.toLowerCase(), value]));
    const body = typeof init.body === "string" ? init.body : undefined;
    seen.push({ url: input, headers, body });
    await aTurnLater();
    if (input === "/api/security/token/refresh") return exchangeRefresh(String(JSON.parse(body ?? "{}").refreshToken));
    if (input === "/api/security/token/revoke") {
      revoked.push(String(JSON.parse(body ?? "{}").token));
      return new Response(null, { status: 200 });
    }
    if (input === "/api/token") {
      live.add("A-key");
      refreshTokens.set("R-key", "unused");
      return json(200, { token: "A-key", refresh_token: "R-key" });
    }
    if (sessionRevoked || !live.has(headers["x-authorization"] ?? "")) return json(401, { error: "UNAUTHENTICATED", message: "expired" });
    if (input.startsWith("/api/security/permissions")) return json(200, { userId: "alice", scope: "*", permissions: [] });
    return json(200, { ok: true });
  };
  return { fetch, seen, live, refreshTokens, revoked };
}

let storage: MemoryStorage;
let sessionEnds: number;

/** A fresh copy of the module (its refresh state is module-level), with its session-end handler counting. */
async function loadUiApi(fetch: Fetch): Promise<UiApi> {
  vi.stubGlobal("fetch", fetch);
  const module = (await import(/* @vite-ignore */ MODULE_URL)) as UiApi;
  module.setSessionEndHandler(() => {
    sessionEnds++;
  });
  return module;
}

/** A session whose access token A1 has expired and whose refresh token R1 is still good. */
function expiredSession(server: ReturnType<typeof fakeServer>): void {
  server.refreshTokens.set("R1", "unused");
  storage.setItem(TOKEN_KEY, "A1");
  storage.setItem(REFRESH_KEY, "R1");
}

/** base64url of a JSON value, as in a JWT's parts. */
const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

beforeEach(() => {
  vi.resetModules();
  storage = new MemoryStorage();
  sessionEnds = 0;
  vi.stubGlobal("sessionStorage", storage);
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe("ui/lib/api.js: refreshing the access token", () => {
  it("exchanges the refresh token once when several requests meet an expired access token at once, and keeps the session", async () => {
    const server = fakeServer();
    expiredSession(server);
    const ui = await loadUiApi(server.fetch);
    const results = await Promise.allSettled([ui.api("GET", "/api/metadata/workflow"), ui.api("GET", "/api/workflow/search?start=0"), ui.api("GET", "/api/metadata/taskdefs")]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    expect(server.seen.filter((request) => request.url === "/api/security/token/refresh")).toHaveLength(1);
    expect(sessionEnds).toBe(0);
    expect(storage.getItem(TOKEN_KEY)).toBe("A2");
    expect(storage.getItem(REFRESH_KEY)).toBe("R2");
  });

  it("retries with the token stored meanwhile when its own refresh is refused, instead of ending the session", async () => {
    const server = fakeServer();
    server.live.add("A9");
    storage.setItem(TOKEN_KEY, "A1");
    storage.setItem(REFRESH_KEY, "R-stale");
    // While the refused exchange is under way, a good token of the same login is stored (one a refresh got).
    const ui = await loadUiApi(async (input, init) => {
      if (input === "/api/security/token/refresh") storage.setItem(TOKEN_KEY, "A9");
      return server.fetch(input, init);
    });
    await expect(ui.api("GET", "/api/metadata/workflow")).resolves.toEqual({ ok: true });
    expect(server.seen.at(-1)?.headers["x-authorization"]).toBe("A9");
    expect(sessionEnds).toBe(0);
  });
});

describe("ui/lib/api.js: ending a session", () => {
  it("forgets and revokes the refresh token when the server refuses the refresh", async () => {
    const server = fakeServer();
    storage.setItem(TOKEN_KEY, "A1");
    storage.setItem(REFRESH_KEY, "R-unknown");
    const ui = await loadUiApi(server.fetch);
    await expect(ui.api("GET", "/api/metadata/workflow")).rejects.toMatchObject({ status: 401 });
    await aTurnLater();
    expect(sessionEnds).toBe(1);
    expect(storage.getItem(TOKEN_KEY)).toBeNull();
    expect(storage.getItem(REFRESH_KEY)).toBeNull();
    expect(server.revoked).toContain("R-unknown");
  });

  it("forgets and revokes the refresh token when a request is still refused after a refresh", async () => {
    const server = fakeServer();
    expiredSession(server);
    // The refreshed token is refused too (say, the user lost access meanwhile).
    const ui = await loadUiApi(async (input, init) => {
      const response = await server.fetch(input, init);
      if (input === "/api/security/token/refresh") server.live.clear();
      return response;
    });
    await expect(ui.api("GET", "/api/metadata/workflow")).rejects.toMatchObject({ status: 401 });
    await aTurnLater();
    expect(sessionEnds).toBe(1);
    expect(storage.getItem(REFRESH_KEY)).toBeNull();
    expect(server.revoked).toContain("R2");
  });

  it("keeps the session and reports the error when the refresh fails for a reason other than a refusal (503)", async () => {
    const server = fakeServer();
    expiredSession(server);
    const ui = await loadUiApi(async (input, init) =>
      input === "/api/security/token/refresh" ? json(503, { error: "UNAVAILABLE", message: "try later" }) : server.fetch(input, init),
    );
    await expect(ui.api("GET", "/api/metadata/workflow")).rejects.toMatchObject({ status: 503, code: "UNAVAILABLE" });
    expect(sessionEnds).toBe(0);
    expect(storage.getItem(TOKEN_KEY)).toBe("A1");
    expect(storage.getItem(REFRESH_KEY)).toBe("R1");
    expect(server.revoked).toEqual([]);
  });

  it("keeps the session when the refresh cannot reach the server", async () => {
    const server = fakeServer();
    expiredSession(server);
    const ui = await loadUiApi(async (input, init) => {
      if (input === "/api/security/token/refresh") throw new TypeError("Failed to fetch");
      return server.fetch(input, init);
    });
    await expect(ui.api("GET", "/api/metadata/workflow")).rejects.toThrow("Failed to fetch");
    expect(sessionEnds).toBe(0);
    expect(storage.getItem(REFRESH_KEY)).toBe("R1");
  });
  it("keeps a session ended by a logout ended when a refresh sent before it is answered after it", async () => {
    const server = fakeServer();
    expiredSession(server);
    // The user logs out while the refresh is on its way: the server answers it with a new pair all the same.
    let ui: UiApi | undefined;
    ui = await loadUiApi(async (input, init) => {
      if (input === "/api/security/token/refresh") ui?.logOut();
      return server.fetch(input, init);
    });
    await expect(ui.api("GET", "/api/metadata/workflow")).rejects.toMatchObject({ status: 401 });
    await aTurnLater();
    expect(ui.isLoggedIn()).toBe(false);
    expect(storage.getItem(TOKEN_KEY)).toBeNull();
    expect(storage.getItem(REFRESH_KEY)).toBeNull();
    // The pair that arrived too late is revoked too: the logout's own revocation may not have reached the server.
    expect(server.revoked).toEqual(expect.arrayContaining(["R1", "A1", "R2"]));
    // Ended by the user: not reported as a session that ended by itself.
    expect(sessionEnds).toBe(0);
  });

  it("sends nothing again, and reports no ended session, when a request sent before a logout is refused after it", async () => {
    const server = fakeServer();
    server.live.add("A1");
    storage.setItem(TOKEN_KEY, "A1");
    storage.setItem(REFRESH_KEY, "R1");
    server.refreshTokens.set("R1", "unused");
    let ui: UiApi | undefined;
    ui = await loadUiApi(async (input, init) => {
      if (input === "/api/metadata/workflow") {
        // The user logs out while the request is on its way; the server has revoked the session when it arrives.
        ui?.logOut();
        server.live.clear();
      }
      return server.fetch(input, init);
    });
    await expect(ui.api("GET", "/api/metadata/workflow")).rejects.toMatchObject({ status: 401 });
    await aTurnLater();
    expect(server.seen.filter((request) => request.url === "/api/metadata/workflow")).toHaveLength(1);
    expect(server.seen.some((request) => request.url === "/api/security/token/refresh")).toBe(false);
    expect(sessionEnds).toBe(0);
  });

  it("keeps the session of a login made while an earlier session's refresh was on its way, and sends the earlier session's request nowhere with it", async () => {
    const server = fakeServer();
    expiredSession(server);
    let ui: UiApi | undefined;
    ui = await loadUiApi(async (input, init) => {
      if (input === "/api/security/token/refresh" && init?.body === JSON.stringify({ refreshToken: "R1" })) {
        // Another user logs in in this tab (the first logged out) before the first session's refresh is answered.
        ui?.logOut();
        await ui?.logIn("bob:secret");
      }
      return server.fetch(input, init);
    });
    await expect(ui.api("DELETE", "/api/workflow/w1")).rejects.toMatchObject({ status: 401, code: "SESSION_REPLACED" });
    await aTurnLater();
    expect(storage.getItem(TOKEN_KEY)).toBe("A-key");
    expect(storage.getItem(REFRESH_KEY)).toBe("R-key");
    expect(server.revoked).toContain("R2");
    // Refused to the first login, the delete is not sent again as the second.
    expect(server.seen.filter((request) => request.url === "/api/workflow/w1").map((request) => request.headers["x-authorization"])).toEqual(["A1"]);
    expect(sessionEnds).toBe(0);
  });

  it("does not send a request refused to one login again with the token of a login made since, and keeps that login", async () => {
    const server = fakeServer();
    storage.setItem(TOKEN_KEY, "A1");
    storage.setItem(REFRESH_KEY, "R1");
    let ui: UiApi | undefined;
    ui = await loadUiApi(async (input, init) => {
      if (input === "/api/workflow/w1/terminate") {
        // The first session ends (A1 is refused, R1 unknown) and another user logs in before the refusal arrives.
        ui?.logOut();
        await ui?.logIn("bob:secret");
      }
      return server.fetch(input, init);
    });
    await expect(ui.api("DELETE", "/api/workflow/w1/terminate")).rejects.toMatchObject({ status: 401, code: "SESSION_REPLACED" });
    await aTurnLater();
    expect(server.seen.filter((request) => request.url === "/api/workflow/w1/terminate").map((request) => request.headers["x-authorization"])).toEqual(["A1"]);
    expect(server.seen.some((request) => request.url === "/api/security/token/refresh")).toBe(false);
    expect(storage.getItem(TOKEN_KEY)).toBe("A-key");
    expect(sessionEnds).toBe(0);
  });

  it("sends requests refused with an expired token again within the same login, after one refresh", async () => {
    const server = fakeServer();
    expiredSession(server);
    const ui = await loadUiApi(server.fetch);
    await ui.logIn("alice:secret");
    server.live.delete("A-key");
    // Both refused with the login's token: one refresh renews it for both, which are sent again.
    await expect(Promise.all([ui.api("GET", "/api/metadata/workflow"), ui.api("GET", "/api/metadata/taskdefs")])).resolves.toEqual([{ ok: true }, { ok: true }]);
    expect(server.seen.filter((request) => request.url === "/api/security/token/refresh")).toHaveLength(1);
    expect(sessionEnds).toBe(0);
  });
});

describe("ui/lib/api.js: logging in", () => {
  it("exchanges an API key whose secret has two dots at /api/token, never storing or sending the secret as a token", async () => {
    const server = fakeServer();
    const ui = await loadUiApi(server.fetch);
    await expect(ui.logIn("admin:pa.ss.wd")).resolves.toMatchObject({ userId: "alice" });
    expect(storage.writes.filter(([, value]) => value.includes("pa.ss.wd"))).toEqual([]);
    expect(server.seen.filter((request) => (request.headers["x-authorization"] ?? "").includes("pa.ss.wd"))).toEqual([]);
    expect(server.seen[0]?.url).toBe("/api/token");
    expect(JSON.parse(server.seen[0]?.body ?? "{}")).toEqual({ keyId: "admin", keySecret: "pa.ss.wd" });
  });

  it("uses a JWT as it is, without exchanging it", async () => {
    const server = fakeServer();
    const jwt = `${part({ alg: "HS256", typ: "JWT" })}.${part({ sub: "alice" })}.c2ln`;
    server.live.add(jwt);
    const ui = await loadUiApi(server.fetch);
    await expect(ui.logIn(jwt)).resolves.toMatchObject({ userId: "alice" });
    expect(server.seen.some((request) => request.url === "/api/token")).toBe(false);
    expect(storage.getItem(TOKEN_KEY)).toBe(jwt);
  });
});
