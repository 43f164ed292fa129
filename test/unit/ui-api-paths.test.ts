// The web UI's API calls (ui/lib/api.js) refuse a path the browser would resolve to another route: a name taken from the
// page's address (`#/access/groups/..`) is encoded with encodeURIComponent, which leaves dots alone, and the URL parser
// resolves `.` and `..` segments (also spelled `%2e`) before the request leaves (a client-side path traversal).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

/** The part of ui/lib/api.js these tests drive (the module is plain JavaScript without type declarations). */
interface UiApi {
  api(method: string, path: string, body?: unknown): Promise<unknown>;
}

const MODULE_URL = new URL("../../ui/lib/api.js", import.meta.url).href;

/** sessionStorage in memory, holding a token. */
class MemoryStorage {
  readonly map = new Map<string, string>([["edge-conductor.token", "a-token"]]);
  getItem(key: string): string | null {
    return this.map.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.map.set(key, String(value));
  }
  removeItem(key: string): void {
    this.map.delete(key);
  }
}

let sent: string[];
let ui: UiApi;

beforeEach(async () => {
  vi.resetModules();
  sent = [];
  vi.stubGlobal("sessionStorage", new MemoryStorage());
  vi.stubGlobal("fetch", async (input: string) => {
    // Where a browser would send it: the URL parser resolves dot segments.
    sent.push(new URL(input, "https://conductor.example").pathname);
    return new Response("{}", { status: 200, headers: { "content-type": "application/json" } });
  });
  ui = (await import(/* @vite-ignore */ MODULE_URL)) as UiApi;
});
afterEach(() => void vi.unstubAllGlobals());

/** The group page's member removal, for the group id the address names (ui/views/access.js). */
const removeMember = (groupId: string, userId: string) => `/api/groups/${encodeURIComponent(groupId)}/users/${encodeURIComponent(userId)}`;

describe("the UI's API paths", () => {
  it("sends no request whose path holds a . or .. segment (DELETE /api/groups/../users/bob would be sent as DELETE /api/users/bob)", async () => {
    expect(new URL(removeMember("..", "bob"), "https://conductor.example").pathname).toBe("/api/users/bob");
    await expect(ui.api("DELETE", removeMember("..", "bob"))).rejects.toThrow(/No request sent/);
    for (const path of [`/api/groups/${encodeURIComponent(".")}/users`, "/api/secrets/%2e%2e/tags", "/api/secrets/.%2E", "/api/groups/..\\users", "/api/roles/.\t.?x=1"]) {
      await expect(ui.api("GET", path), path).rejects.toThrow(/No request sent/);
    }
    expect(sent).toEqual([]);
  });

  it("sends names that only hold dots among other characters, and dots in the query", async () => {
    await ui.api("GET", `/api/metadata/taskdefs/${encodeURIComponent("v1.2")}`);
    await ui.api("GET", `/api/metadata/taskdefs/${encodeURIComponent("...")}`);
    await ui.api("GET", `/api/workflow/search?query=${encodeURIComponent("x = '..'")}&next=..`);
    expect(sent).toEqual(["/api/metadata/taskdefs/v1.2", "/api/metadata/taskdefs/...", "/api/workflow/search"]);
  });
});
