import { describe, expect, it, vi } from "vitest";
import { serviceConfig } from "../../src/worker/config";

/** wrangler.toml's `[vars]` passes TOML numbers and booleans through as they are, whatever Env's types say. */
const configOf = (vars: Record<string, unknown>) => serviceConfig(vars as unknown as Env);

describe("service configuration from vars", () => {
  it("reads TOML numbers and booleans as their text would be read (HTTP_READ_TIMEOUT_MS = 5000, EGRESS_ALLOW_PRIVATE = true)", () => {
    const config = configOf({
      HTTP_READ_TIMEOUT_MS: 5000,
      HTTP_MAX_TIMEOUT_MS: 900000,
      MAX_REQUEST_BYTES: 2097152,
      INDEX_WRITER_SHARDS: 4,
      EGRESS_ALLOW_PRIVATE: true,
      EXECUTION_RETENTION: 86400,
      CORS_ALLOWED_ORIGINS: "*",
    });
    expect(config.engine.httpReadTimeoutMs).toBe(5000);
    expect(config.engine.httpMaxTimeoutMs).toBe(900000);
    expect(config.maxRequestBytes).toBe(2097152);
    expect(config.indexWriterShards).toBe(4);
    expect(config.egress).toMatchObject({ allowPrivate: true });
    // A bare number is no duration ("30d" is): executions are kept, as for any other unreadable value.
    expect(config.executionRetentionMs).toBeUndefined();
  });

  it("keeps the defaults for values that are no positive whole number, and reads the same text the same way", () => {
    expect(configOf({ HTTP_READ_TIMEOUT_MS: false, MAX_REQUEST_BYTES: -1 })).toMatchObject({ engine: { httpReadTimeoutMs: serviceConfig({} as Env).engine.httpReadTimeoutMs }, maxRequestBytes: 1024 * 1024 });
    expect(configOf({ INDEX_WRITER_SHARDS: "4", EGRESS_ALLOW_PRIVATE: "true" })).toMatchObject({ indexWriterShards: 4, egress: { allowPrivate: true } });
    expect(configOf({ EGRESS_ALLOW_PRIVATE: false }).egress).toMatchObject({ allowPrivate: false });
  });

  it("refuses a count written as anything but digits (\"1e3\", \"0x10\", \"5.0\", \"+5\"), as the README's table asks for whole numbers: the default stays", () => {
    const defaults = configOf({});
    const config = configOf({ HTTP_READ_TIMEOUT_MS: "1e3", MAX_REQUEST_BYTES: "0x10", INDEX_WRITER_SHARDS: "5.0", CALLBACKS_PER_TASK: "+5", MAX_SUBWORKFLOW_DEPTH: "0b11", EXECUTE_MAX_WAIT_SECONDS: "1e1" });
    expect(config.engine.httpReadTimeoutMs).toBe(defaults.engine.httpReadTimeoutMs);
    expect(config.maxRequestBytes).toBe(defaults.maxRequestBytes);
    expect(config.indexWriterShards).toBe(defaults.indexWriterShards);
    expect(config.callbackLimit.limit).toBe(defaults.callbackLimit.limit);
    expect(config.maxSubWorkflowDepth).toBe(defaults.maxSubWorkflowDepth);
    expect(config.executeMaxWaitSeconds).toBe(defaults.executeMaxWaitSeconds);
    // Digits with spaces around them, and a TOML number however it was written (1e3 arrives as 1000), still read.
    expect(configOf({ HTTP_READ_TIMEOUT_MS: " 7000 ", MAX_REQUEST_BYTES: 1e3 })).toMatchObject({ engine: { httpReadTimeoutMs: 7000 }, maxRequestBytes: 1000 });
  });

  it("logs, once per configuration, each count var set but refused, naming it and the default kept; unset, blank or valid says nothing", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const config = configOf({ MAX_REQUEST_BYTES: "2MB", HTTP_READ_TIMEOUT_MS: "1e3", AUTH_FAILURE_WINDOW_SECONDS: "5m", ACCESS_TOKEN_TTL_SECONDS: "-1", INDEX_WRITER_SHARDS: 0 });
      expect(config).toMatchObject({ maxRequestBytes: 1024 * 1024, accessTokenTtlSeconds: 3600, indexWriterShards: 1 });
      const lines = logged.mock.calls.map((call) => JSON.parse(String(call[0])) as { msg: string; received: string });
      expect(lines.map((line) => line.msg).sort()).toEqual([
        "ACCESS_TOKEN_TTL_SECONDS ignored: the default 3600 stays",
        "AUTH_FAILURE_WINDOW_SECONDS ignored: the default 300 stays",
        "HTTP_READ_TIMEOUT_MS ignored: the default 30000 stays",
        "INDEX_WRITER_SHARDS ignored: the default 1 stays",
        "MAX_REQUEST_BYTES ignored: the default 1048576 stays",
      ]);
      expect(lines.find((line) => line.msg.startsWith("MAX_REQUEST_BYTES"))).toMatchObject({ received: "2MB" });
      logged.mockClear();
      configOf({ MAX_REQUEST_BYTES: " 2097152 ", HTTP_READ_TIMEOUT_MS: 7000, AUTH_FAILURE_WINDOW_SECONDS: "", REFRESH_TOKEN_TTL_SECONDS: "86400" });
      configOf({});
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });

  it("reads REFRESH_TOKEN_REUSE_GRACE_SECONDS with 0 as a setting (no grace), more than 300 as 300, and anything but digits as the default 30, logged", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      expect(configOf({}).refreshReuseGraceSeconds).toBe(30);
      expect(configOf({ REFRESH_TOKEN_REUSE_GRACE_SECONDS: "0" }).refreshReuseGraceSeconds).toBe(0);
      expect(configOf({ REFRESH_TOKEN_REUSE_GRACE_SECONDS: 0 }).refreshReuseGraceSeconds).toBe(0);
      expect(configOf({ REFRESH_TOKEN_REUSE_GRACE_SECONDS: " 60 " }).refreshReuseGraceSeconds).toBe(60);
      expect(configOf({ REFRESH_TOKEN_REUSE_GRACE_SECONDS: "86400" }).refreshReuseGraceSeconds).toBe(300);
      expect(logged).not.toHaveBeenCalled();
      expect(configOf({ REFRESH_TOKEN_REUSE_GRACE_SECONDS: "-1" }).refreshReuseGraceSeconds).toBe(30);
      expect(configOf({ REFRESH_TOKEN_REUSE_GRACE_SECONDS: "30s" }).refreshReuseGraceSeconds).toBe(30);
      const lines = logged.mock.calls.map((call) => JSON.parse(String(call[0])) as { msg: string; expected: string });
      expect(lines).toEqual([
        expect.objectContaining({ msg: "REFRESH_TOKEN_REUSE_GRACE_SECONDS ignored: the default 30 stays", expected: expect.stringContaining("0 or more") }),
        expect.objectContaining({ msg: "REFRESH_TOKEN_REUSE_GRACE_SECONDS ignored: the default 30 stays" }),
      ]);
    } finally {
      logged.mockRestore();
    }
  });

  it("keeps EGRESS_ALLOW_PRIVATE off for a value that is neither true nor false (\"1\", \"yes\"), saying so in the log; true in any case opens it, false or blank says nothing", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      for (const typo of ["1", "yes", "on"]) expect(configOf({ EGRESS_ALLOW_PRIVATE: typo }).egress).toMatchObject({ allowPrivate: false });
      const lines = logged.mock.calls.map((call) => JSON.parse(String(call[0])) as { msg: string; received: string });
      expect(lines).toEqual(["1", "yes", "on"].map((received) => ({ msg: "EGRESS_ALLOW_PRIVATE ignored: HTTP tasks may not call non-public addresses", expected: "true or false", received })));
      logged.mockClear();
      expect(configOf({ EGRESS_ALLOW_PRIVATE: " TRUE " }).egress).toMatchObject({ allowPrivate: true });
      for (const off of ["false", "False", "", false]) expect(configOf({ EGRESS_ALLOW_PRIVATE: off }).egress).toMatchObject({ allowPrivate: false });
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });

  it("reads CHILD_STARTS_PER_INVOCATION as a count of child starts (20 by default, under Free's 50 D1 queries), and keeps the default for a value that is no positive whole number", () => {
    expect(configOf({}).childStartsPerInvocation).toBe(20);
    expect(configOf({ CHILD_STARTS_PER_INVOCATION: 400 }).childStartsPerInvocation).toBe(400);
    expect(configOf({ CHILD_STARTS_PER_INVOCATION: "0" }).childStartsPerInvocation).toBe(20);
    expect(configOf({ CHILD_STARTS_PER_INVOCATION: "many" }).childStartsPerInvocation).toBe(20);
  });

  it("drops a trailing slash, or a PUBLIC_BASE_URL that is only one, rather than keeping an empty base", () => {
    expect(configOf({ PUBLIC_BASE_URL: " https://flows.example.com/ " }).publicBaseUrl).toBe("https://flows.example.com");
    expect(configOf({ PUBLIC_BASE_URL: "/" }).publicBaseUrl).toBeUndefined();
    expect(configOf({ PUBLIC_BASE_URL: "   " }).publicBaseUrl).toBeUndefined();
  });

  it("logs a refused PUBLIC_BASE_URL without its credentials, query or fragment: where such a value would hold a secret", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const cases: Array<[string, string]> = [
        ["https://deploy:hunter2-pw@flows.example.com", "https://***@flows.example.com"],
        ["https://flows.example.com/?token=tok-secret-1", "https://flows.example.com/?***"],
        ["https://flows.example.com/#tok-secret-2", "https://flows.example.com/#***"],
        ["flows.example.com?key=tok-secret-3", "flows.example.com?***"],
        ["https://deploy:pw/hunter2-pw@x@flows.example.com", "https://***@flows.example.com"],
        ["deploy:hunter2-pw@flows.example.com", "***@flows.example.com"],
        ["ftp://flows.example.com", "ftp://flows.example.com"],
      ];
      for (const [raw, shown] of cases) {
        logged.mockClear();
        expect(configOf({ PUBLIC_BASE_URL: raw }).publicBaseUrl).toBeUndefined();
        const line = String(logged.mock.calls[0]?.[0]);
        expect(JSON.parse(line)).toMatchObject({ msg: expect.stringContaining("PUBLIC_BASE_URL ignored"), received: shown });
        for (const secret of ["hunter2-pw", "tok-secret"]) expect(line).not.toContain(secret);
      }
    } finally {
      logged.mockRestore();
    }
  });

  it("ignores and logs a PUBLIC_BASE_URL that is no http(s) URL (no scheme, another scheme, a query): callback URLs keep the request's origin", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      for (const raw of ["flows.example.com", "ftp://flows.example.com", "https://flows.example.com/?x=1", "https://user:pw@flows.example.com"]) {
        logged.mockClear();
        expect(configOf({ PUBLIC_BASE_URL: raw }).publicBaseUrl).toBeUndefined();
        expect(logged).toHaveBeenCalledTimes(1);
        expect(String(logged.mock.calls[0]?.[0])).toContain("PUBLIC_BASE_URL ignored");
      }
      logged.mockClear();
      expect(configOf({ PUBLIC_BASE_URL: "http://localhost:8787/" }).publicBaseUrl).toBe("http://localhost:8787");
      expect(configOf({ PUBLIC_BASE_URL: "https://example.com/flows" }).publicBaseUrl).toBe("https://example.com/flows");
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });

  it("logs, never showing it, a BOOTSTRAP_ADMIN_KEY that is no <keyId>:<keySecret>: no request could match it", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      for (const raw of ["hunter2-no-colon-secret", "ops:", ":hunter2-secret", "ops:   ", "  :hunter2-secret"]) {
        logged.mockClear();
        configOf({ BOOTSTRAP_ADMIN_KEY: raw });
        expect(logged, raw).toHaveBeenCalledTimes(1);
        const line = String(logged.mock.calls[0]?.[0]);
        expect(JSON.parse(line)).toMatchObject({ msg: expect.stringContaining("BOOTSTRAP_ADMIN_KEY matches no API key") });
        expect(line).not.toContain("hunter2");
      }
      logged.mockClear();
      const signingKeys = { JWT_SIGNING_KEYS: `k1:${"A".repeat(43)}=` };
      configOf({ BOOTSTRAP_ADMIN_KEY: "ops:a-long-random-secret", ...signingKeys });
      configOf({ BOOTSTRAP_ADMIN_KEY: " ops:a:secret:with:colons ", ...signingKeys });
      configOf({ BOOTSTRAP_ADMIN_KEY: `ops:${"s".repeat(32)}` });
      configOf({});
      expect(logged).not.toHaveBeenCalled();
      // Short, while the token signing key is derived from it: logged, its length and never its value.
      configOf({ BOOTSTRAP_ADMIN_KEY: "ops:hunter2-secret" });
      expect(logged).toHaveBeenCalledTimes(1);
      const line = String(logged.mock.calls[0]?.[0]);
      expect(JSON.parse(line)).toMatchObject({ msg: expect.stringContaining("BOOTSTRAP_ADMIN_KEY is short and signs the tokens"), keySecretLength: 14 });
      expect(line).not.toContain("hunter2");
    } finally {
      logged.mockRestore();
    }
  });

  it("logs the CORS_ALLOWED_ORIGINS entries no browser's Origin can equal (no scheme, a path, a default port), and only those", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const config = configOf({ CORS_ALLOWED_ORIGINS: "app.example.com, https://ok.example.com/, https://x.example.com/app, https://y.example.com:443, localhost:5173, http://localhost:5173" });
      expect(logged).toHaveBeenCalledTimes(1);
      expect(JSON.parse(String(logged.mock.calls[0]?.[0]))).toMatchObject({
        msg: expect.stringContaining("CORS_ALLOWED_ORIGINS"),
        received: ["app.example.com", "https://x.example.com/app", "https://y.example.com:443", "localhost:5173"],
      });
      // The entries are kept as they were: the policy is unchanged, only now it says which entries match nothing.
      expect([...config.cors.origins]).toContain("https://ok.example.com");
      logged.mockClear();
      configOf({ CORS_ALLOWED_ORIGINS: "*" });
      configOf({ CORS_ALLOWED_ORIGINS: "https://App.Example.com, http://127.0.0.1:8080, null" });
      configOf({});
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });

  it("does not log a CORS_ALLOWED_ORIGINS entry of a scheme without a URL-standard origin that pages still send (a browser extension's, a Capacitor app's on iOS)", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      // Chrome sends Origin: chrome-extension://<id> from an extension, a Capacitor iOS web view capacitor://localhost.
      const config = configOf({ CORS_ALLOWED_ORIGINS: "chrome-extension://abcdefghijklmnopabcdefghijklmnop, capacitor://localhost, moz-extension://0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0" });
      expect(logged).not.toHaveBeenCalled();
      expect([...config.cors.origins]).toContain("capacitor://localhost");
      // One with a path, or with no host at all, still matches nothing, and is still logged.
      configOf({ CORS_ALLOWED_ORIGINS: "capacitor://localhost/app, capacitor:localhost" });
      expect(logged).toHaveBeenCalledTimes(1);
      expect(JSON.parse(String(logged.mock.calls[0]?.[0]))).toMatchObject({ received: ["capacitor://localhost/app", "capacitor:localhost"] });
    } finally {
      logged.mockRestore();
    }
  });

  it("bounds the default waits of execute and of a synchronous signal by EXECUTE_MAX_WAIT_SECONDS, which caps every wait", () => {
    expect(configOf({})).toMatchObject({ executeDefaultWaitSeconds: 10, executeMaxWaitSeconds: 60, signalDefaultWaitMs: 5_000 });
    expect(configOf({ EXECUTE_MAX_WAIT_SECONDS: 3 })).toMatchObject({ executeDefaultWaitSeconds: 3, executeMaxWaitSeconds: 3, signalDefaultWaitMs: 3_000 });
    expect(configOf({ EXECUTE_DEFAULT_WAIT_SECONDS: 90 })).toMatchObject({ executeDefaultWaitSeconds: 60, executeMaxWaitSeconds: 60 });
    expect(configOf({ EXECUTE_DEFAULT_WAIT_SECONDS: 90, EXECUTE_MAX_WAIT_SECONDS: 120 })).toMatchObject({ executeDefaultWaitSeconds: 90, executeMaxWaitSeconds: 120 });
  });

  it("counts a MAX_PAYLOAD_BYTES over 960 KiB as 960 KiB, saying so: a task's input and output, each up to it, share one stored row of at most 2 MB", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      expect(configOf({}).engine.maxPayloadBytes).toBe(768 * 1024);
      expect(configOf({ MAX_PAYLOAD_BYTES: 960 * 1024 }).engine.maxPayloadBytes).toBe(960 * 1024);
      expect(logged).not.toHaveBeenCalled();
      expect(configOf({ MAX_PAYLOAD_BYTES: "2097152" }).engine.maxPayloadBytes).toBe(960 * 1024);
      expect(logged).toHaveBeenCalledTimes(1);
      expect(String(logged.mock.calls[0]?.[0])).toContain("MAX_PAYLOAD_BYTES above 983040");
    } finally {
      logged.mockRestore();
    }
  });
});
