/**
 * The notices a limit object (`ExecutionLimit`, `TaskLimit`) owes the executions it gave a place from its queue: each
 * is told by an RPC the object repeats (from its alarm) until the execution has answered, so that no execution waits
 * for a place already given to it.
 */
import { failedAgain } from "./retry-log";

/** A place given and not told yet: its id in the limit object, and the execution to tell. */
export interface OwedNotice {
  id: string;
  workflowId: string;
  /**
   * When the place was given (its untold row's checked_at): the answer settles that giving only, not a later one under
   * the same id made while the answer was on its way (an execution's id given again after it left and entered again,
   * a task's place given again after its paused workflow gave it up and asked again).
   */
  givenAt: number;
}

/** How an execution answers a notice: it takes the place, or no longer wants it (ended, removed, asks elsewhere). */
export type NoticeAnswer = "taken" | "gone";

/** What one round of deliveries needs from its limit object. */
export interface NoticeRound {
  /** Most notices one round sends before it leaves the rest to the alarm. */
  max: number;
  /** Up to `limit` places given and not told yet, from the object's storage. */
  untold(limit: number): OwedNotice[];
  /** Tells the execution; throws when it cannot be reached. */
  tell(notice: OwedNotice): Promise<NoticeAnswer>;
  /** The execution took the place: it is told. */
  taken(notice: OwedNotice): void;
  /** The execution no longer wants the place: it goes to the next. */
  gone(notice: OwedNotice): void;
  /** Logged (with the place's id and the error) when an execution could not be reached. */
  failure: string;
  /**
   * Held by the limit object across rounds: by place id, how many rounds in a row could not reach its execution, so
   * that one unreachable for long is logged at its 1st, 2nd, 4th… attempt (see {@link failedAgain}), not every round.
   */
  failures: Map<string, number>;
}

/**
 * Tells the executions of the places given and not told yet, one at a time, at most `round.max`; one that cannot be
 * reached is skipped for this round (the others are still told now) and left to the alarm.
 */
export async function deliverOwedNotices(round: NoticeRound): Promise<void> {
  const unreachable = new Set<string>();
  for (let sent = 0; sent < round.max; sent++) {
    const owed = round.untold(unreachable.size + 1);
    const notice = owed.find((candidate) => !unreachable.has(candidate.id));
    if (notice === undefined) {
      // Every notice still owed was tried: the count of one no longer owed (its place left, or was told by an entry)
      // goes, so that a place given again under that id later logs its first failure as the first.
      for (const id of round.failures.keys()) if (!owed.some((candidate) => candidate.id === id)) round.failures.delete(id);
      return;
    }
    let answer: NoticeAnswer;
    try {
      answer = await round.tell(notice);
    } catch (error) {
      const attempt = failedAgain(round.failures, notice.id);
      if (attempt !== undefined) console.error(JSON.stringify({ msg: round.failure, id: notice.id, workflowId: notice.workflowId, attempt, error: String(error) }));
      unreachable.add(notice.id);
      continue;
    }
    round.failures.delete(notice.id);
    if (answer === "taken") round.taken(notice);
    else round.gone(notice);
  }
}
