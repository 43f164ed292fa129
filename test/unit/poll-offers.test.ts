import { describe, expect, it } from "vitest";
import type { LeasedTask } from "../../src/actors/task-queue";
import type { PollAnswer, PollShare } from "../../src/actors/workflow-execution";
import { offerAll, type AskExecution } from "../../src/worker/poll-offers";

/** Task JSON beyond the input: the task's other fields. */
const OTHER_FIELDS = 1_000;

/**
 * Executions as `WorkflowExecution.pollTasks` answers a share: each task's input of `sizes[taskId]` bytes goes out while
 * it fits what is left of the share (the first anyway when `oneAnyway`), the others "unsent" with their size; "gone"
 * for the tasks in `gone`. Each call's round: one more than the latest round of the calls answered before it was made.
 */
function executions(sizes: ReadonlyMap<string, number>, gone: ReadonlySet<string> = new Set()) {
  const calls: Array<{ workflowId: string; round: number; share: PollShare | undefined }> = [];
  let answeredRound = 0;
  const ask: AskExecution = async (workflowId, entries, share) => {
    const round = answeredRound + 1;
    calls.push({ workflowId, round, share });
    await Promise.resolve();
    let room = share?.bytes ?? Number.POSITIVE_INFINITY;
    let sentAny = share !== undefined && !share.oneAnyway;
    const answers = entries.map((entry): PollAnswer => {
      if (gone.has(entry.taskId)) return { outcome: "gone" };
      const bytes = sizes.get(entry.taskId)!;
      if (sentAny && bytes > room) return { outcome: "unsent", bytes };
      room -= bytes;
      sentAny = true;
      return { outcome: "polled", task: "t".repeat(bytes + OTHER_FIELDS) };
    });
    answeredRound = Math.max(answeredRound, round);
    return answers;
  };
  return { ask, calls };
}

/** One leased entry a task, `perWorkflow` of them a workflow. */
function leasedOf(count: number, perWorkflow = 1): LeasedTask[] {
  return Array.from({ length: count }, (_, index) => ({ taskId: `t${index}`, workflowId: `w${Math.floor(index / perWorkflow)}`, leasedUntil: 1 }));
}

function polledBytes(answers: ReadonlyArray<PromiseSettledResult<PollAnswer>>): number {
  return answers.reduce((sum, answer) => sum + (answer.status === "fulfilled" && answer.value.outcome === "polled" ? answer.value.task.length - OTHER_FIELDS : 0), 0);
}

const BUDGET = 12 * 1024 * 1024;

describe("a batch poll's offers (src/worker/poll-offers.ts)", () => {
  it("100 tasks from 100 workflows, each input just over its share: two rounds of calls, the second filling the budget", async () => {
    const leased = leasedOf(100);
    const { ask, calls } = executions(new Map(leased.map((entry) => [entry.taskId, 130 * 1024])));
    const answers = await offerAll(leased, BUDGET, ask);
    expect(Math.max(...calls.map((call) => call.round))).toBe(2);
    const polled = answers.filter((answer) => answer.status === "fulfilled" && answer.value.outcome === "polled").length;
    expect(polled).toBe(Math.floor((BUDGET - OTHER_FIELDS) / (130 * 1024)));
    expect(polledBytes(answers)).toBeLessThanOrEqual(BUDGET);
    expect(answers.filter((answer) => answer.status === "fulfilled" && answer.value.outcome === "unsent")).toHaveLength(100 - polled);
  });

  it("small tasks: one round, every task out", async () => {
    const leased = leasedOf(100, 10);
    const { ask, calls } = executions(new Map(leased.map((entry) => [entry.taskId, 1024])));
    const answers = await offerAll(leased, BUDGET, ask);
    expect(calls).toHaveLength(10);
    expect(answers.map((answer) => (answer.status === "fulfilled" ? answer.value.outcome : answer.status))).toEqual(Array(100).fill("polled"));
  });

  it("one entry is offered with no share", async () => {
    const leased = leasedOf(1);
    const { ask, calls } = executions(new Map([["t0", BUDGET * 2]]));
    const answers = await offerAll(leased, BUDGET, ask);
    expect(calls).toEqual([{ workflowId: "w0", round: 1, share: undefined }]);
    expect(answers[0]).toMatchObject({ status: "fulfilled", value: { outcome: "polled" } });
  });

  it("when the first workflow's tasks are gone and the others' past their shares, the second round hands one out whatever its size", async () => {
    const leased = leasedOf(3);
    const { ask } = executions(new Map([["t0", 10], ["t1", BUDGET], ["t2", BUDGET]]), new Set(["t0"]));
    const answers = await offerAll(leased, BUDGET, ask);
    expect(answers.map((answer) => (answer.status === "fulfilled" ? answer.value.outcome : "rejected"))).toEqual(["gone", "polled", "unsent"]);
  });

  it("a larger task past what is left is passed over for a smaller one after it, and an execution that cannot be asked rejects its entries only", async () => {
    const leased = leasedOf(4);
    // Shares of a quarter each: t0 goes anyway, t1 and t2 are past theirs, t3 fits; what is left then holds t2, not t1.
    const { ask, calls } = executions(new Map([["t0", BUDGET / 2], ["t1", BUDGET], ["t2", BUDGET / 3], ["t3", BUDGET / 8]]));
    const answers = await offerAll(leased, BUDGET, ask);
    expect(answers.map((answer) => (answer.status === "fulfilled" ? answer.value.outcome : "rejected"))).toEqual(["polled", "unsent", "polled", "polled"]);
    expect(calls.filter((call) => call.round === 2)).toEqual([{ workflowId: "w2", round: 2, share: { bytes: Math.floor(BUDGET / 3), oneAnyway: false } }]);
    const rejected = await offerAll(leased, BUDGET, (workflowId, entries, share) => (workflowId === "w2" ? Promise.reject(new Error("unreachable")) : ask(workflowId, entries, share)));
    expect(rejected.map((answer) => (answer.status === "fulfilled" ? answer.value.outcome : "rejected"))).toEqual(["polled", "unsent", "rejected", "polled"]);
  });
});
