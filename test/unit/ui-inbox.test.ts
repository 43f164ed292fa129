// The web UI's human task page: who may fill in a task's form there (plain ES modules of ui/, run in Node: only pure
// helpers).
import { describe, expect, it } from "vitest";

interface InboxModule {
  claimedByCaller(claimant: { user: string; userType: string } | undefined, userId: string, groupIds: readonly string[]): boolean;
}

// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const { claimedByCaller } = (await import(/* @vite-ignore */ new URL("../../ui/views/inbox.js", import.meta.url).href)) as InboxModule;

describe("the UI's human task page", () => {
  it("lets the user who claimed a task fill it in, and any member of a group that claimed it (autoClaim); no one else", () => {
    expect(claimedByCaller({ user: "ada", userType: "CONDUCTOR_USER" }, "ada", [])).toBe(true);
    expect(claimedByCaller({ user: "ada", userType: "CONDUCTOR_USER" }, "bob", ["ada"])).toBe(false);
    expect(claimedByCaller({ user: "finance", userType: "CONDUCTOR_GROUP" }, "bob", ["finance"])).toBe(true);
    expect(claimedByCaller({ user: "finance", userType: "CONDUCTOR_GROUP" }, "eve", ["sales"])).toBe(false);
    // An external system's user or group is that system's to serve, not this UI's.
    expect(claimedByCaller({ user: "ada", userType: "EXTERNAL_USER" }, "ada", [])).toBe(false);
    expect(claimedByCaller(undefined, "ada", [])).toBe(false);
  });
});
