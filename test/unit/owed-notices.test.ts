import { afterEach, describe, expect, it, vi } from "vitest";
import { deliverOwedNotices, type NoticeRound } from "../../src/actors/owed-notices";

afterEach(() => vi.restoreAllMocks());

/** A round over one owed place whose execution cannot be reached until `reachable` says so. */
function roundOf(failures: Map<string, number>, reachable: () => boolean, told: string[]): NoticeRound {
  return {
    max: 10,
    untold: () => (told.length > 0 ? [] : [{ id: "place-1", workflowId: "wf-1", givenAt: 1 }]),
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

  it("forgets the count of a place no longer owed, so the same id given again logs its next failure as the first", async () => {
    const logged: number[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => void logged.push((JSON.parse(String(line)) as { attempt: number }).attempt));
    const failures = new Map<string, number>();
    let owed = true;
    const round = (): NoticeRound => ({ ...roundOf(failures, () => false, []), untold: () => (owed ? [{ id: "place-1", workflowId: "wf-1", givenAt: 1 }] : []) });
    for (let attempt = 0; attempt < 3; attempt++) await deliverOwedNotices(round());
    expect(logged).toEqual([1, 2]);
    // The execution left (a retry, a restart): nothing owed; then it enters again under the same id and is unreachable.
    owed = false;
    await deliverOwedNotices(round());
    expect(failures.size).toBe(0);
    owed = true;
    await deliverOwedNotices(round());
    expect(logged).toEqual([1, 2, 1]);
  });
});
