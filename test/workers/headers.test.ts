import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, api, rowCount } from "./helpers";

/** CORS_ALLOWED_ORIGINS of the test Worker (vitest.config.ts): two origins, one written with a trailing slash. */
const ALLOWED = "https://app.example.com";
const ALSO_ALLOWED = "https://ops.example.com";
const OTHER = "https://evil.example.net";

function preflight(origin: string, method = "POST", headers = "x-authorization, content-type") {
  return SELF.fetch("https://conductor.test/api/workflow", {
    method: "OPTIONS",
    headers: { Origin: origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers },
  });
}

describe("security headers", () => {
  it("are on successful answers, errors and unknown routes alike", async () => {
    const answers = [
      await api("GET", "/api/metadata/workflow"),
      await SELF.fetch("https://conductor.test/api/metadata/workflow"),
      await api("GET", "/api/workflow/not-a-uuid"),
      await api("GET", "/api/no/such/route"),
      await SELF.fetch("https://conductor.test/health"),
    ];
    expect(answers.map((response) => response.status)).toEqual([200, 401, 404, 404, 200]);
    for (const response of answers) {
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("strict-transport-security")).toContain("max-age=");
      await response.body?.cancel();
    }
  });

  it("leave Strict-Transport-Security off plain-HTTP answers (local development)", async () => {
    const response = await SELF.fetch("http://127.0.0.1:8787/health");
    expect(response.headers.get("strict-transport-security")).toBeNull();
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

describe("CORS", () => {
  it("answers a preflight from an allowed origin without credentials", async () => {
    for (const origin of [ALLOWED, ALSO_ALLOWED]) {
      const response = await preflight(origin);
      expect(response.status).toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBe(origin);
      expect(response.headers.get("access-control-allow-methods")).toContain("POST");
      expect(response.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("x-authorization");
      expect(response.headers.get("access-control-max-age")).toBe("600");
      expect(response.headers.get("access-control-allow-credentials")).toBeNull();
      expect(response.headers.get("vary")).toContain("Origin");
    }
  });

  it("refuses a preflight from any other origin, in the contract's error shape", async () => {
    const response = await preflight(OTHER);
    expect(response.status).toBe(403);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(await response.json()).toMatchObject({ status: 403, error: "PERMISSION_DENIED" });
  });

  it("lets an allowed origin read answers, refusals included, and gives others nothing", async () => {
    const allowed = await api("GET", "/api/metadata/workflow", undefined, { Origin: ALLOWED });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(allowed.headers.get("access-control-expose-headers")).toContain("Retry-After");

    const refused = await SELF.fetch("https://conductor.test/api/metadata/workflow", { headers: { Origin: ALLOWED } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    // Its challenge is readable too.
    expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="edge-conductor"');
    expect(refused.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate");
    // A 405's Allow (the methods its path takes) is readable too.
    const wrongMethod = await api("DELETE", "/api/metadata/workflow", undefined, { Origin: ALLOWED });
    expect([wrongMethod.status, wrongMethod.headers.get("allow"), wrongMethod.headers.get("access-control-allow-origin")]).toEqual([405, "GET, POST, PUT", ALLOWED]);
    expect(wrongMethod.headers.get("access-control-expose-headers")).toContain("Allow");

    const other = await api("GET", "/api/metadata/workflow", undefined, { Origin: OTHER });
    expect(other.status).toBe(200);
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    expect(other.headers.get("vary")).toContain("Origin");
  });

  it("does not let a preflight-shaped request skip authentication or change anything", async () => {
    const before = await rowCount("workflow_defs");
    const response = await SELF.fetch("https://conductor.test/api/metadata/workflow", {
      method: "OPTIONS",
      headers: { Origin: ALLOWED, "Access-Control-Request-Method": "POST" },
      body: null,
    });
    expect(response.status).toBe(204);
    expect(await rowCount("workflow_defs")).toBe(before);
    // A real OPTIONS request without the preflight headers is an ordinary, authenticated request.
    const plain = await SELF.fetch("https://conductor.test/api/metadata/workflow", { method: "OPTIONS" });
    expect(plain.status).toBe(401);
    const admin = await SELF.fetch("https://conductor.test/api/metadata/workflow", { method: "OPTIONS", headers: { "x-api-key": ADMIN_KEY }, body: null });
    // Answered with the path's methods (route-coverage.test.ts), not routed to any of them.
    expect([admin.status, admin.headers.get("allow")]).toEqual([200, "GET, HEAD, POST, PUT, OPTIONS"]);
    expect(await rowCount("workflow_defs")).toBe(before);
  });
});
