import type { LeasedTask } from "../actors/task-queue";
import type { PollAnswer, PollShare } from "../actors/workflow-execution";

/**
 * An entry whose own call failed while others of its execution were answered (an object still on the code before
 * `pollTasks` is asked task by task: see the router's poll): answered as an execution that could not be asked, left
 * leased, its reservation counting until the lease ends, as that code's router left it.
 */
export interface UnreachedEntry {
  outcome: "unreached";
  reason: unknown;
}

/**
 * Asks execution `workflowId` for the tasks of its `entries` (a call to its object: see `WorkflowExecution.pollTasks`),
 * within `share` of the poll's answer; none: no bound beyond the execution's own.
 */
export type AskExecution = (workflowId: string, entries: readonly LeasedTask[], share: PollShare | undefined) => Promise<ReadonlyArray<PollAnswer | UnreachedEntry>>;

/** The answer to each leased entry of a poll: its execution's, or why its execution could not be asked. */
export type EntryAnswer = PromiseSettledResult<PollAnswer>;

/**
 * Offers the `leased` entries to their executions, one call per execution however many of its tasks were taken (a wide
 * fork's tasks come by the hundred), all executions at once: the answer to each entry, in the entries' order. An
 * execution that could not be asked rejects the answers of its entries only (an entry answered "unreached", its own).
 * The tasks handed out hold at most `budget` bytes of inputs (and one task whatever its size): each execution is given a
 * share by its number of entries, the first's first task going out anyway. The entries past an execution's share answer
 * "unsent" with their size; those that fit in what is left of the budget, in the entries' order, are offered once more,
 * all at once, each execution's share the sizes of its entries offered. So a poll makes two rounds of calls at most,
 * each one call per execution at once, however the sizes fall. The entries left answer "unsent": nobody's, to give back.
 * A single entry is offered with no share: it goes out anyway, and its execution need not measure its input.
 */
export async function offerAll(leased: readonly LeasedTask[], budget: number, ask: AskExecution): Promise<EntryAnswer[]> {
  const answers: EntryAnswer[] = [];
  const askGroups = async (groups: ReadonlyArray<{ workflowId: string; indexes: number[]; share: PollShare | undefined }>): Promise<void> => {
    const settled = await Promise.allSettled(groups.map(({ workflowId, indexes, share }) => ask(workflowId, indexes.map((index) => leased[index]!), share)));
    settled.forEach((result, group) => {
      groups[group]!.indexes.forEach((index, position) => {
        if (result.status === "rejected") {
          answers[index] = result;
          return;
        }
        const answer = result.value[position] ?? { outcome: "gone" };
        answers[index] = answer.outcome === "unreached" ? { status: "rejected", reason: answer.reason } : { status: "fulfilled", value: answer };
      });
    });
  };
  // One task (a single poll, update-v2's next task) goes out whatever its size: no share to keep, so its execution
  // does not write its input out once more to measure it.
  if (leased.length === 1) {
    await askGroups([{ workflowId: leased[0]!.workflowId, indexes: [0], share: undefined }]);
    return answers;
  }
  await askGroups(
    byExecution(leased, leased.map((_, index) => index)).map(([workflowId, indexes], group) => ({
      workflowId,
      indexes,
      share: { bytes: Math.floor((budget * indexes.length) / leased.length), oneAnyway: group === 0 },
    })),
  );
  const again = fittingUnsent(answers, budget);
  if (again.indexes.length === 0) return answers;
  const sizes = new Map(again.indexes.map((index) => [index, unsentBytes(answers[index])]));
  await askGroups(
    byExecution(leased, again.indexes).map(([workflowId, indexes]) => ({
      workflowId,
      indexes,
      share: { bytes: indexes.reduce((sum, index) => sum + sizes.get(index)!, 0), oneAnyway: indexes.includes(again.oneAnyway ?? -1) },
    })),
  );
  return answers;
}

/**
 * The entries answered "unsent" that fit together in what the tasks handed out left of `budget`, in the entries' order
 * (a larger one passed over, a smaller one after it may fit); when none was handed out, the first unsent goes anyway
 * (`oneAnyway`), so that a poll moves on.
 */
function fittingUnsent(answers: readonly EntryAnswer[], budget: number): { indexes: number[]; oneAnyway?: number } {
  let left = budget - answers.reduce((sum, answer) => sum + (answer.status === "fulfilled" && answer.value.outcome === "polled" ? answer.value.task.length : 0), 0);
  let anyGoes = !answers.some((answer) => answer.status === "fulfilled" && answer.value.outcome === "polled");
  const chosen: { indexes: number[]; oneAnyway?: number } = { indexes: [] };
  answers.forEach((answer, index) => {
    const bytes = unsentBytes(answer);
    if (bytes === undefined || (!anyGoes && bytes > left)) return;
    if (anyGoes) chosen.oneAnyway = index;
    anyGoes = false;
    chosen.indexes.push(index);
    left -= bytes;
  });
  return chosen;
}

/** The size of the input of an entry its execution answered "unsent" for (undefined: another answer). */
function unsentBytes(answer: EntryAnswer | undefined): number | undefined {
  return answer?.status === "fulfilled" && answer.value.outcome === "unsent" ? answer.value.bytes : undefined;
}

/** Of the `leased` entries at `indexes`, the indexes by execution, the executions in the order of their first entry. */
function byExecution(leased: readonly LeasedTask[], indexes: readonly number[]): Array<[string, number[]]> {
  const groups = new Map<string, number[]>();
  for (const index of indexes) {
    const workflowId = leased[index]!.workflowId;
    const group = groups.get(workflowId);
    if (group === undefined) groups.set(workflowId, [index]);
    else group.push(index);
  }
  return [...groups.entries()];
}
