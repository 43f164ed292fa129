declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    TARGET_URL: string;
    OAUTH_TEST_PRIVATE_JWK: string;
  }
}

/** A file imported as text (Vite's `?raw`, which the workerd test pool bundles): the docs the doc tests read. */
declare module "*?raw" {
  const text: string;
  export default text;
}
