import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

/** The admin key every workerd test authenticates with. */
export const TEST_ADMIN_KEY = "test-admin:test-secret-0123456789";
/** Token signing keys of the workerd tests (kid:base64 of 32 bytes), so tests can forge and tamper. */
export const TEST_JWT_SIGNING_KEYS = `test-1:${Buffer.alloc(32, 7).toString("base64")},old-1:${Buffer.alloc(32, 9).toString("base64")}`;

const migrations = await readD1Migrations("./migrations");

export default defineConfig({
  test: {
    // Three files at a time, also on a 2-core machine (vitest's default there is one): much of a workerd test file's
    // time is spent waiting on timers, alarms and loopback requests, not computing. With two the suite took 772-857 s
    // against .ci/run's 900 s cut-off (one run was cut); with three 669 s, the CPU still 14% idle, and the slowest test
    // under the default timeout at 11.5 s of its 20 (the fuzzers and route walks set their own, 90-120 s).
    maxWorkers: 3,
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          environment: "node",
          // Pure computation: some property and long-loop cases take 3-4 s alone, and beside an e2e file and a workerd
          // file on 2 cores they passed vitest's default 5 s (do-while's 5,000-iteration loop did). A hang still fails.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          // Forks (vitest's default, pinned): the shared migrated state of a run (test/e2e/dev-server.ts) is named by
          // the forks' parent, vitest's main process.
          pool: "forks",
          testTimeout: 180_000,
          hookTimeout: 180_000,
          // No `fileParallelism: false`: vitest runs such a project's files after every other project's, one at a
          // time, leaving the other workers idle for minutes. Each file starts its own servers on free ports (each
          // worker's from a range of its own, below the kernel's ephemeral ports: test/e2e/ports.ts), in its own copy
          // of the project, so they run beside the workerd files (and beside each other). The default
          // sequencer starts them first (projects in name order; with no cached durations, the larger files first),
          // so the longest files do not finish last.
        },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // The example custom authentication provider, run as the Worker behind AUTH_SERVICE.
              serviceBindings: { AUTH_SERVICE: "custom-auth" },
              workers: [
                {
                  name: "custom-auth",
                  modules: true,
                  scriptPath: "./examples/custom-auth-worker/index.js",
                  compatibilityDate: "2026-04-20",
                  bindings: { TEAM_TOKENS: JSON.stringify({ "team-token-1": { userId: "build-bot", roles: ["deployers"] } }) },
                },
              ],
              bindings: {
                TEST_MIGRATIONS: migrations,
                TARGET_URL: `http://127.0.0.1:${inject("targetPort")}`,
                BOOTSTRAP_ADMIN_KEY: TEST_ADMIN_KEY,
                // Test-only AES-256-GCM key of the secrets store (base64 of 32 bytes); never used outside tests.
                SECRETS_ENCRYPTION_KEY: "beIjElhD0UJuXbj9PI5RBPMJMgaAMdQBUuSSQn2xrHQ=",
                JWT_SIGNING_KEYS: TEST_JWT_SIGNING_KEYS,
                // A local OAuth issuer: the target server serves its JWKS; tests sign with its private key.
                OAUTH_ISSUER: "https://issuer.test",
                OAUTH_AUDIENCE: "edge-conductor-api",
                OAUTH_JWKS_URL: `http://127.0.0.1:${inject("targetPort")}/jwks.json`,
                OAUTH_ROLES_CLAIM: "groups",
                OAUTH_TEST_PRIVATE_JWK: inject("oauthPrivateJwk"),
                CORS_ALLOWED_ORIGINS: "https://app.example.com, https://ops.example.com/",
                // Every test but the brute-force ones comes from one address; those send their own CF-Connecting-IP.
                AUTH_FAILURES_PER_ADDRESS: "100000",
                AUTH_FAILURES_PER_KEY: "5",
                CALLBACKS_PER_TASK: "20",
                // Small enough that a test's delivery passes it with a few dozen waiting tasks.
                WEBHOOK_CALLS_PER_DELIVERY: "40",
                // The target server is on 127.0.0.1, as in local development; "localhost" reaches it too and is denied.
                EGRESS_ALLOW_PRIVATE: "true",
                EGRESS_DENY: "localhost, 192.0.2.0/24",
              },
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          // Above the tests' own bounded polling (10 s), so a stuck workflow reports its state.
          testTimeout: 20_000,
          globalSetup: ["test/global-setup.ts"],
          setupFiles: ["test/workers/setup.ts"],
        },
      },
    ],
  },
});
