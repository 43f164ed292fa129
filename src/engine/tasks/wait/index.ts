import type { JsonObject, JsonValue, TaskExecution } from "../../model";
import type { TaskTypeModule } from "../task-type";
import { DURATION_FORMAT, isWaitInputGiven, MAX_WAKE_TIME, parseWaitDuration, parseWaitUntil, UNTIL_FORMAT } from "./schedule";

/** When a started WAIT wakes: at a moment, or only when completed from outside; or why its input cannot say. */
type WakeUp = { at: number } | { external: true } | { invalid: string };

/** A value for a message: its JSON, cut so that an expression resolving to a whole object stays readable. */
function shown(value: JsonValue): string {
  const json = JSON.stringify(value);
  return json.length <= 100 ? json : `${json.slice(0, 100)}…`;
}

/** Absent, null and blank text are "not given" (see {@link isWaitInputGiven}), as for an input an expression resolved to nothing. */
function given(value: JsonValue | undefined): value is JsonValue {
  return isWaitInputGiven(value);
}

/** When the WAIT whose resolved input is `input`, started at `now`, wakes up. */
export function wakeUp(input: JsonObject, now: number): WakeUp {
  const duration = input["duration"];
  const until = input["until"];
  if (given(duration) && given(until)) return { invalid: `WAIT was given both duration and until (${shown(duration)} and ${shown(until)}): give only one of them` };
  if (given(duration)) {
    const ms = typeof duration === "string" ? parseWaitDuration(duration) : undefined;
    if (ms === undefined || now + ms > MAX_WAKE_TIME) return { invalid: `WAIT duration ${shown(duration)} is not a duration: expected ${DURATION_FORMAT}` };
    return { at: now + ms };
  }
  if (given(until)) {
    const at = typeof until === "string" ? parseWaitUntil(until) : undefined;
    if (at === undefined) return { invalid: `WAIT until ${shown(until)} is not a date-time: expected ${UNTIL_FORMAT}` };
    return { at };
  }
  return { external: true };
}

/**
 * Conductor's WaitTaskMapper sets a waiting WAIT's `callbackAfterSeconds` (which its Task JSON shows): the whole seconds
 * from its start to its time (none below 0), or Java's Integer.MAX_VALUE for an untimed one, "waiting forever".
 */
export const UNTIMED_WAIT_CALLBACK_SECONDS = 2_147_483_647;

/** The `callbackAfterSeconds` of a WAIT started at `now` that wakes as `wake` says (see {@link UNTIMED_WAIT_CALLBACK_SECONDS}). */
function waitCallbackSeconds(wake: { at: number } | { external: true }, now: number): number {
  return "at" in wake ? Math.max(0, Math.floor((wake.at - now) / 1000)) : UNTIMED_WAIT_CALLBACK_SECONDS;
}

/**
 * The fields of a WAIT that has ended by itself (its time came), COMPLETED with an empty output as in Conductor, whose
 * system task executor sets its `callbackAfterSeconds` back to 0 as it runs it.
 */
function woken(now: number): Partial<TaskExecution> {
  return { status: "COMPLETED", outputData: {}, endTime: now, updateTime: now, awaitingExternal: false, timeoutAt: undefined, callbackAfterSeconds: undefined };
}

/**
 * WAIT (Conductor's): no side effect; it waits until `duration` has passed or `until` has come (its `timeoutAt`, which
 * the execution's alarm keeps, so the wait outlives evictions), then completes. Without either it waits until
 * completed or failed from outside (`POST /api/tasks`), which may also end a timed one early. While it waits, its
 * `callbackAfterSeconds` shows the wait as Conductor's shows it (the alarm, not that field, wakes it).
 */
export const waitTask: TaskTypeModule = {
  type: "WAIT",
  start(task, _definition, _execution, env) {
    const wake = wakeUp(task.inputData, env.now);
    const begun = { ...task, startTime: env.now, updateTime: env.now };
    if ("invalid" in wake) return { task: { ...begun, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: wake.invalid, endTime: env.now }, dispatch: false };
    if ("at" in wake && wake.at <= env.now) return { task: { ...begun, ...woken(env.now) }, dispatch: false };
    const waiting: TaskExecution = { ...begun, status: "IN_PROGRESS", awaitingExternal: true, callbackAfterSeconds: waitCallbackSeconds(wake, env.now) };
    if ("at" in wake) waiting.timeoutAt = wake.at;
    return { task: waiting, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
  onTimeout(_task, env) {
    return woken(env.now);
  },
};
