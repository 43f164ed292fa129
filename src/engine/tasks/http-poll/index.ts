/**
 * HTTP_POLL (Conductor's and Orkes'): an HTTP request made again and again, `pollingInterval` seconds apart (growing
 * with `pollingStrategy`), until `terminationCondition`, JavaScript with `$` bound to the task's input and `$.output`
 * to the latest response's output, holds. The request and its settings are the HTTP task's, flat in `inputParameters`
 * or nested in `http_request` (nested winning, field by field). Between polls the task is SCHEDULED for its next call,
 * holding nothing open; each call is an attempt like an HTTP task's, retried by the task's retry settings when it fails.
 */
import type { DecideEnv } from "../../config";
import type { JsonObject, JsonValue, TaskExecution } from "../../model";
import { httpTask } from "../http";
import type { TaskTypeModule } from "../task-type";
import { isJsonObjectValue } from "../workflow-start-fields";

/**
 * The polling strategies: the wait after poll n (1 for the first) is the interval, n times it, or 2^n times it, as
 * Orkes' server waits (its Java client's HttpPollWorkerTests: 60, then 120 for LINEAR_BACKOFF; 120, then 240 for
 * EXPONENTIAL_BACKOFF, with an interval of 60).
 */
export const POLLING_STRATEGIES = ["FIXED", "LINEAR_BACKOFF", "EXPONENTIAL_BACKOFF"] as const;

/** The polling interval when none is given (seconds), as Conductor's. */
export const DEFAULT_POLLING_INTERVAL_SECONDS = 60;

/** Longest wait between two polls, whatever the strategy makes of the interval: a day. */
export const MAX_POLL_WAIT_SECONDS = 24 * 60 * 60;

/** What an HTTP_POLL's resolved input says about polling. */
export interface PollSettings {
  /** JavaScript; absent: true (the first answer ends the task). */
  terminationCondition?: string;
  intervalSeconds: number;
  strategy: (typeof POLLING_STRATEGIES)[number];
  /** Most polls before the task fails; 0: no limit (the task's timeouts bound it). */
  maxPollCount: number;
}

/** A poll setting as given: nested in `http_request` or flat, nested winning (as the request's fields do). */
export function pollSetting(input: JsonObject, name: string): JsonValue | undefined {
  const nested = input["http_request"];
  if (isJsonObjectValue(nested) && Object.hasOwn(nested, name)) return nested[name];
  return Object.hasOwn(input, name) ? input[name] : undefined;
}

/** A whole number of at least `min` from a number or its digits (Conductor's examples send "60"), else undefined. */
export function wholeNumber(value: JsonValue | undefined, min: number): number | undefined {
  const number = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  return typeof number === "number" && Number.isSafeInteger(number) && number >= min ? number : undefined;
}

/** The poll settings of a resolved input (validated at registration; a value resolved at run time falls back to the default). */
export function pollSettings(input: JsonObject): PollSettings {
  const condition = pollSetting(input, "terminationCondition");
  const strategy = pollSetting(input, "pollingStrategy");
  const settings: PollSettings = {
    intervalSeconds: wholeNumber(pollSetting(input, "pollingInterval"), 1) ?? DEFAULT_POLLING_INTERVAL_SECONDS,
    strategy: POLLING_STRATEGIES.find((known) => known === strategy) ?? "FIXED",
    maxPollCount: wholeNumber(pollSetting(input, "maxPollCount"), 0) ?? 0,
  };
  if (typeof condition === "string" && condition.trim() !== "") settings.terminationCondition = condition;
  return settings;
}

/** The wait (ms) after poll number `polls` (1 for the first) before the next, by `settings`. */
export function pollWaitMs(settings: PollSettings, polls: number): number {
  const factor = settings.strategy === "LINEAR_BACKOFF" ? polls : settings.strategy === "EXPONENTIAL_BACKOFF" ? 2 ** Math.min(polls, 30) : 1;
  return Math.min(settings.intervalSeconds * factor, MAX_POLL_WAIT_SECONDS) * 1000;
}

/**
 * After a COMPLETED call: the task ends COMPLETED when the condition holds for the response (its output kept), FAILED
 * when the condition cannot be evaluated, answers a negative number or the polls are used up, and otherwise waits,
 * SCHEDULED, for its next call. A failed call is the HTTP task's failure (retried by the retry settings).
 */
function afterPoll(task: TaskExecution, result: Partial<TaskExecution>, env: DecideEnv): Partial<TaskExecution> {
  if (result.status !== "COMPLETED") return result;
  const polls = (task.pollCount ?? 0) + 1;
  const settings = pollSettings(task.inputData);
  const output = result.outputData ?? {};
  const counted = { ...result, pollCount: polls };
  if (settings.terminationCondition === undefined) return counted;
  // `$` holds the task's input, also as `$.input` (Conductor's docs; an input key of that name wins), and the response as
  // `$.output`, with its status code also as `$.output.status`, as Orkes' docs write the condition ("$.output.status")
  // and its server answers it (its Java client's HttpPollWorkerTests: `$.output.status === 200` holds for a 200).
  const outcome = env.scripts.run(settings.terminationCondition, { input: task.inputData, ...task.inputData, output: conditionOutput(output) });
  // FAILED, retried by the task's retry settings, as Orkes' server fails it ("Failed to invoke …", its Java client's
  // HttpPollWorkerTests): a condition may throw on one answer's shape (an error page's body) and not on the next.
  if (!outcome.ok) return { ...counted, status: "FAILED", reasonForIncompletion: `Failed to invoke the terminationCondition: ${outcome.error}` };
  if (isTrue(outcome.value)) return counted;
  // Conductor's docs' three-way answer: 1 completes, 0 polls again, -1 (any negative number) fails the task.
  if (isNegative(outcome.value)) return { ...counted, status: "FAILED", reasonForIncompletion: `terminationCondition answered ${JSON.stringify(outcome.value)}: the task fails` };
  if (settings.maxPollCount > 0 && polls >= settings.maxPollCount) {
    return { ...counted, status: "FAILED", reasonForIncompletion: `terminationCondition did not hold within maxPollCount (${settings.maxPollCount}) polls` };
  }
  // Waits for its next call: SCHEDULED again, its latest response as its output; the alarm starts the next attempt. The
  // wait shows as its callbackAfterSeconds, as Orkes' task shows it between polls (clients read it so); nothing else
  // reads it for a system task: resetcallbacks releases only tasks in a worker's queue.
  const waitMs = pollWaitMs(settings, polls);
  return { ...counted, status: "SCHEDULED", endTime: 0, scheduledTime: env.now + waitMs, callbackAfterSeconds: waitMs / 1000, awaitingExternal: false };
}

/** The response as the condition reads it: the task's output, and its status code as `status` unless it has one. */
function conditionOutput(output: JsonObject): JsonObject {
  const response = output["response"];
  const statusCode = output["statusCode"] ?? (isJsonObjectValue(response) ? response["statusCode"] : undefined);
  return Object.hasOwn(output, "status") || statusCode === undefined ? output : { ...output, status: statusCode };
}

/** A negative number, or the text of one: the condition's "fail" answer. */
function isNegative(value: JsonValue): boolean {
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof number === "number" && number < 0;
}

/** As Conductor's evaluator reads a condition: true, or a positive number (or text of one). */
function isTrue(value: JsonValue): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value > 0;
  if (typeof value === "string") return value.trim() === "true" || Number(value) > 0;
  return false;
}

/** The HTTP_POLL task: each call is dispatched as an HTTP task's; {@link afterPoll} decides what follows it. */
export const httpPollTask: TaskTypeModule = {
  type: "HTTP_POLL",
  start(task, definition, execution, env) {
    const started = httpTask.start(task, definition, execution, env);
    // Timed from its first call: a later poll keeps that start time (the task definition's timeoutSeconds covers them all).
    return { ...started, task: { ...started.task, startTime: task.startTime || env.now } };
  },
  attemptDeadline(task, env) {
    return httpTask.attemptDeadline(task, env);
  },
  afterResult: afterPoll,
};
