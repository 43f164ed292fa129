import { afterEach, describe, expect, it, vi } from "vitest";
import { deliverOwedNotices, type NoticeRound } from "../../src/actors/owed-notices";

afterEach(() => vi.restoreAllMocks());

/** A round over one owed place whose execution cannot be reached until `reachable` says so. */
function roundOf(failures: Map<string, number>, reachable: () => boolean, told: string[]): NoticeRound {
  return {
    max: 10,
    untold: () => (told.length > 0 ? [] : [{ id: "place-1", workflowId: "wf-1" }]),
    tell: async () => {
      if (!reachable()) throw new Error("the test cannot reach it");
      return "taken";
    },
    taken: (notice) => told.push(notice.id),
    gone: () => undefined,
    failure: "admission notice failed; will retry",
    failures,
  };
}

describe("deliverOwedNotices", () => {
  it("logs an execution unreachable round after round at its 1st, 2nd, 4th and 8th round, and counts afresh once it answered", async () => {
    const logged: Array<{ attempt: number; workflowId: string }> = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => void logged.push(JSON.parse(String(line)) as { attempt: number; workflowId: string }));
    const failures = new Map<string, number>();
    const told: string[] = [];
    let reachable = false;
    for (let round = 0; round < 10; round++) await deliverOwedNotices(roundOf(failures, () => reachable, told));
    expect(logged.map((line) => line.attempt)).toEqual([1, 2, 4, 8]);
    expect(logged[0]).toMatchObject({ msg: "admission notice failed; will retry", id: "place-1", workflowId: "wf-1" });
    reachable = true;
    await deliverOwedNotices(roundOf(failures, () => reachable, told));
    expect(told).toEqual(["place-1"]);
    expect(failures.size).toBe(0);
  });
});
