import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      { test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node" } },
      {
        plugins: [cloudflareTest(({ inject }) => ({ wrangler: { configPath: "./wrangler.toml" }, miniflare: { bindings: { TARGET_PORT: String(inject("targetPort")) } } }))],
        test: { name: "workers", include: ["test/workers/**/*.test.ts"], globalSetup: ["test/global-setup.ts"] },
      },
    ],
  },
});
