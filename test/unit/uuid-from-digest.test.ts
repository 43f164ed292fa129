import { describe, expect, it } from "vitest";
import { uuidFromDigest } from "../../src/engine/task-id";

// Ids derived from digests are stored (a schedule fire's execution id, an event action's workflow id, a webhook
// delivery's ids) and derived again by every later run: the same digest must keep giving the same id across versions.
describe("uuidFromDigest", () => {
  it("shapes the first 16 bytes of a digest as a version 4 or 8 UUID, the same for the same digest", async () => {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode("edge-conductor")));
    expect(uuidFromDigest(digest, 4)).toBe("c1de2c06-771c-4500-97f8-e1464f09451c");
    expect(uuidFromDigest(digest, 8)).toBe("c1de2c06-771c-8500-97f8-e1464f09451c");
    // The digest itself is left as it was.
    expect(uuidFromDigest(digest, 4)).toBe("c1de2c06-771c-4500-97f8-e1464f09451c");
  });
});
