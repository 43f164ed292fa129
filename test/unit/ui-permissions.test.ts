// The web UI's look-up of the caller's permissions (ui/lib/api.js, permissionsAt), against a fake server in Node:
// pages decide which actions to offer from it.
import { describe, expect, it, vi } from "vitest";

interface UiApi {
  permissionsAt(scope: string): Promise<Set<string>>;
}

vi.stubGlobal("sessionStorage", { getItem: () => "a-token", setItem: () => {}, removeItem: () => {} });
let answers: Response[] = [];
const asked: string[] = [];
vi.stubGlobal("fetch", async (path: string) => {
  asked.push(path);
  return answers.shift() ?? new Response(null, { status: 500 });
});
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

// By URL: the module is plain JavaScript without type declarations, so TypeScript must not resolve it.
const { permissionsAt } = (await import(/* @vite-ignore */ new URL("../../ui/lib/api.js", import.meta.url).href)) as UiApi;

describe("the UI's permissions look-up", () => {
  it("keeps what the service said for the page's life, but asks again after a failure instead of keeping none", async () => {
    answers = [json(503, { error: "UNAVAILABLE", message: "busy" })];
    expect([...(await permissionsAt("workflow:orders"))]).toEqual([]);
    answers = [json(200, { userId: "ann", scope: "workflow:orders", permissions: ["WORKFLOW_READ", "WORKFLOW_ADMIN"] })];
    expect([...(await permissionsAt("workflow:orders"))]).toEqual(["WORKFLOW_READ", "WORKFLOW_ADMIN"]);
    // Known now: not asked again.
    expect([...(await permissionsAt("workflow:orders"))]).toEqual(["WORKFLOW_READ", "WORKFLOW_ADMIN"]);
    expect(asked).toEqual(["/api/security/permissions?scope=workflow%3Aorders", "/api/security/permissions?scope=workflow%3Aorders"]);
  });
});
