declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    TARGET_URL: string;
    OAUTH_TEST_PRIVATE_JWK: string;
  }
}
