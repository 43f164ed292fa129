import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

/** The admin key every workerd test authenticates with. */
export const TEST_ADMIN_KEY = "test-admin:test-secret-0123456789";

const migrations = await readD1Migrations("./migrations");

export default defineConfig({
  test: {
    projects: [
      { test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node" } },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          testTimeout: 180_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                TEST_MIGRATIONS: migrations,
                TARGET_URL: `http://127.0.0.1:${inject("targetPort")}`,
                BOOTSTRAP_ADMIN_KEY: TEST_ADMIN_KEY,
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
