import { SELF, env } from "cloudflare:test";
import { expect, it } from "vitest";
it("works", async () => {
  const res = await SELF.fetch("http://x/health");
  expect(await res.json()).toEqual({ status: "ok" });
  const port = (env as unknown as {TARGET_PORT: string}).TARGET_PORT;
  const r = await fetch(`http://127.0.0.1:${port}/hello?x=1`);
  expect(await r.json()).toEqual({ path: "/hello?x=1" });
});
