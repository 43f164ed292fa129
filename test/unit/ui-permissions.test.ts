// The web UI's look-up of the caller's permissions (ui/lib/api.js, permissionsAt), against a fake server in Node:
// pages decide which actions to offer from it.
import { afterEach, describe, expect, it, vi } from "vitest";

interface UiApi {
  permissionsAt(scope: string): Promise<Set<string>>;
  forgetPermissions(): void;
  FAILED_PERMISSIONS_KEPT_MS: number;
  HELD_PERMISSIONS_KEPT_MS: number;
}

vi.stubGlobal("sessionStorage", { getItem: () => "a-token", setItem: () => {}, removeItem: () => {} });
// An answer may be a promise the test settles later: a look-up still on its way.
let answers: Array<Response | Promise<Response>> = [];
const asked: string[] = [];
vi.stubGlobal("fetch", async (path: string) => {
  asked.push(path);
  return await (answers.shift() ?? new Response(null, { status: 500 }));
});
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

// By URL: the module is plain JavaScript without type declarations, so TypeScript must not resolve it.
const { permissionsAt, forgetPermissions, FAILED_PERMISSIONS_KEPT_MS, HELD_PERMISSIONS_KEPT_MS } = (await import(/* @vite-ignore */ new URL("../../ui/lib/api.js", import.meta.url).href)) as UiApi;

describe("the UI's permissions look-up", () => {
  afterEach(() => {
    vi.useRealTimers();
    forgetPermissions();
    asked.length = 0;
  });

  it("keeps what the service said for a while, but asks again after a failure instead of keeping none", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    answers = [json(503, { error: "UNAVAILABLE", message: "busy" })];
    expect([...(await permissionsAt("workflow:orders"))]).toEqual([]);
    vi.advanceTimersByTime(FAILED_PERMISSIONS_KEPT_MS);
    answers = [json(200, { userId: "ann", scope: "workflow:orders", permissions: ["WORKFLOW_READ", "WORKFLOW_ADMIN"] })];
    expect([...(await permissionsAt("workflow:orders"))]).toEqual(["WORKFLOW_READ", "WORKFLOW_ADMIN"]);
    // Known now: not asked again.
    expect([...(await permissionsAt("workflow:orders"))]).toEqual(["WORKFLOW_READ", "WORKFLOW_ADMIN"]);
    expect(asked).toEqual(["/api/security/permissions?scope=workflow%3Aorders", "/api/security/permissions?scope=workflow%3Aorders"]);
  });

  it("does not ask again on every refresh while a look-up keeps failing", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    // The execution page looks its task's scopes up on every refresh (2 s): fifteen refreshes within the hold.
    for (let refresh = 0; refresh < 15; refresh++) {
      answers = [json(503, { error: "UNAVAILABLE", message: "busy" })];
      expect([...(await permissionsAt("task:approve"))]).toEqual([]);
      vi.advanceTimersByTime(1_900);
    }
    expect(asked).toEqual(["/api/security/permissions?scope=task%3Aapprove"]);
  });

  it("asks again once what the service said has been kept a while, so a grant made meanwhile unlocks the editors", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    answers = [json(200, { userId: "ann", scope: "workflow:orders", permissions: ["WORKFLOW_READ"] })];
    expect([...(await permissionsAt("workflow:orders"))]).toEqual(["WORKFLOW_READ"]);
    vi.advanceTimersByTime(HELD_PERMISSIONS_KEPT_MS - 1);
    expect([...(await permissionsAt("workflow:orders"))]).toEqual(["WORKFLOW_READ"]);
    vi.advanceTimersByTime(1);
    answers = [json(200, { userId: "ann", scope: "workflow:orders", permissions: ["WORKFLOW_READ", "WORKFLOW_WRITE"] })];
    // The old answer stands until the new one has arrived.
    expect([...(await permissionsAt("workflow:orders"))]).toEqual(["WORKFLOW_READ"]);
    await nextTask();
    expect([...(await permissionsAt("workflow:orders"))]).toEqual(["WORKFLOW_READ", "WORKFLOW_WRITE"]);
    expect(asked).toHaveLength(2);
  });

  it("keeps the old answer while a look-up made again is on its way, and after it fails, so a refresh drawn meanwhile keeps its actions", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const scope = "task:approve";
    answers = [json(200, { userId: "ann", scope, permissions: ["TASK_EXECUTE"] })];
    expect([...(await permissionsAt(scope))]).toEqual(["TASK_EXECUTE"]);
    vi.advanceTimersByTime(HELD_PERMISSIONS_KEPT_MS);
    let arrive: (answer: Response) => void = () => {};
    answers = [new Promise<Response>((resolve) => (arrive = resolve))];
    // The execution page draws its task panel and adds Complete and Fail once this answers: at once, not when the
    // service has answered (the buttons hidden meanwhile, on every refresh, for as long as the look-up takes).
    expect(await answeredAtOnce(permissionsAt(scope))).toEqual(["TASK_EXECUTE"]);
    expect(await answeredAtOnce(permissionsAt(scope))).toEqual(["TASK_EXECUTE"]);
    arrive(json(503, { error: "UNAVAILABLE", message: "busy" }));
    await nextTask();
    // A failed look-up made again leaves what the service said before, asked again after FAILED_PERMISSIONS_KEPT_MS.
    expect(await answeredAtOnce(permissionsAt(scope))).toEqual(["TASK_EXECUTE"]);
    expect(asked).toHaveLength(2);
    vi.advanceTimersByTime(FAILED_PERMISSIONS_KEPT_MS);
    answers = [json(200, { userId: "ann", scope, permissions: [] })];
    expect(await answeredAtOnce(permissionsAt(scope))).toEqual(["TASK_EXECUTE"]);
    await nextTask();
    expect(await answeredAtOnce(permissionsAt(scope))).toEqual([]);
    expect(asked).toHaveLength(3);
  });
});

/** Lets every answer already on its way (the fake fetch's, the look-up's own steps) arrive: one macrotask later. */
async function nextTask(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 0));
}

/** The permissions `answer` holds if it settles before the next macrotask (a kept answer), else "pending". */
async function answeredAtOnce(answer: Promise<Set<string>>): Promise<string[] | "pending"> {
  const settled = await Promise.race([answer, new Promise<"pending">((resolve) => setTimeout(() => resolve("pending"), 0))]);
  return settled === "pending" ? settled : [...settled];
}
