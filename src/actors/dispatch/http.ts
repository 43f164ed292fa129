import type { EngineConfig } from "../../engine/config";
import type { ExecutionEvent } from "../../engine/decider";
import { deliveryKey, type JsonObject, type TaskExecution } from "../../engine/model";
import { buildHttpRequest, httpOutcome, type HttpRequestSpec } from "../../engine/tasks/http";
import { admitsEverything, checkEgress, type EgressPolicy } from "../../engine/tasks/http/egress";
import { readBounded } from "../../worker/http/body";
import { isSubrequestLimitError } from "../../worker/subrequest-limit";

/** What the HTTP dispatcher needs besides the task. */
export interface HttpDispatchOptions {
  engine: EngineConfig;
  maxResponseBytes: number;
  /** Whether the task waits to be completed from outside after its answer (see `isAsyncComplete`; never for a poll). */
  asyncComplete: boolean;
  /** Aborted when the task is canceled while its request is in flight. */
  cancel: AbortSignal;
  /** Which hosts may be called; a configuration error fails every HTTP task with its message. */
  egress: EgressPolicy | { error: string };
}

/** Redirects followed before the task fails (browsers allow 20; a task has no reason to need more than a few). */
const MAX_REDIRECTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Headers carrying credentials that a redirect to another origin must not carry there: those undici's fetch drops
 * (its RedirectHandler). The runtime's own redirect following drops Authorization but sends Cookie on.
 */
const CROSS_ORIGIN_DROPPED = ["authorization", "cookie", "proxy-authorization"] as const;

/**
 * Headers describing the body, dropped with it when a redirect turns the request into a GET: the fetch standard's
 * request-body-header names (HTTP-redirect fetch, step 12; undici drops every `content-*` there).
 */
const REQUEST_BODY_HEADERS = ["content-encoding", "content-language", "content-location", "content-type"] as const;

/**
 * Whether the runtime may follow the request's redirects itself: only when no hop could be refused, the request
 * carries no credential the runtime would take to another origin (it keeps Cookie and Proxy-Authorization), and no
 * body header it would keep on a GET made of the request (it keeps them all after a 303). A GET or HEAD, the common
 * case, never changes method.
 */
function runtimeMayFollow(policy: EgressPolicy, method: string, headers: Headers): boolean {
  const keepsCredential = CROSS_ORIGIN_DROPPED.some((name) => name !== "authorization" && headers.has(name));
  const keepsBodyHeader = method !== "GET" && method !== "HEAD" && REQUEST_BODY_HEADERS.some((name) => headers.has(name));
  return admitsEverything(policy) && !keepsCredential && !keepsBodyHeader;
}

/** The scheme and host of a task's URL as stored (see `shownRequest`), or words for them when it is no URL (a secret's `***`). */
function shownHost(url: string): Pick<URL, "protocol" | "hostname"> {
  try {
    return new URL(url);
  } catch {
    return { protocol: "its scheme's", hostname: "the task's host" };
  }
}

/** Refused by the egress policy: the task fails without retrying (the same URL will be refused again). */
class EgressDenied extends Error {}

/**
 * Sends the request and follows redirects by hand, so that every hop is checked against the egress policy
 * before anything is sent to it. Method and body change as fetch would change them (303, and 301/302 after a
 * POST, become a GET without body or body headers); credentials are not carried to another origin. Reasons quote `shown`,
 * never the live URL.
 */
async function fetchWithinPolicy(request: HttpRequestSpec, shown: { text: string; url: string }, policy: EgressPolicy, signal: AbortSignal): Promise<Response> {
  let url = new URL(request.url);
  let method = request.method;
  let body = request.body;
  const headers = new Headers(request.headers);
  const redirect = runtimeMayFollow(policy, method, headers) ? "follow" : "manual";
  for (let hop = 0; ; hop++) {
    // The first hop is the task's own URL, which a refusal names as stored (see checkEgress); a redirect's, as it came.
    const verdict = hop === 0 ? checkEgress(url, policy, shownHost(shown.url)) : checkEgress(url, policy);
    if (!verdict.allowed) throw new EgressDenied(hop === 0 ? verdict.reason : `${verdict.reason} (redirected there from ${shown.url})`);
    // Following redirects by hand costs throughput (about a tenth at concurrency 20 locally, BENCHMARKS.md), so
    // the runtime follows them when no hop could be refused anyway and no header it keeps must be dropped.
    const init: RequestInit = { method, headers, signal, redirect };
    if (body !== undefined) init.body = body;
    const response = await fetch(url, init);
    const location = response.headers.get("location");
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
    await response.body?.cancel();
    if (hop === MAX_REDIRECTS) throw new EgressDenied(`${shown.text} redirected more than ${MAX_REDIRECTS} times`);
    const next = new URL(location, url);
    if (next.origin !== url.origin) {
      for (const name of CROSS_ORIGIN_DROPPED) headers.delete(name);
    }
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
      if (method !== "HEAD") method = "GET";
      body = undefined;
      for (const name of REQUEST_BODY_HEADERS) headers.delete(name);
    }
    url = next;
  }
}

type DispatchResult = Extract<ExecutionEvent, { type: "dispatchResult" }>;

/**
 * The task's request as reasons quote it (`METHOD url`, and the URL alone), built from its stored input, where secrets are
 * `***`: the live URL may hold a secret's value in a shape no scrubbing recognises (a URL parser escapes
 * some characters and not others). Without secrets the live input is the stored one, already built.
 */
function shownRequest(task: TaskExecution, engine: EngineConfig, input: JsonObject, built: ReturnType<typeof buildHttpRequest>): { text: string; url: string; invalid?: string } {
  const stored = input === task.inputData ? built : buildHttpRequest(task.inputData, engine, deliveryKey(task));
  if (!stored.ok) return { text: "the task's request", url: "the task's uri", invalid: stored.reason };
  return { text: `${stored.request.method} ${stored.request.url}`, url: stored.request.url };
}

/**
 * Performs an HTTP task's request and turns whatever happens into the task's result. Connection errors, timeouts and
 * oversized answers become FAILED results with a clear reason; it throws only past the invocation's subrequest count.
 * `input` is the task input with secrets resolved; it exists only for the duration of this call.
 */
export async function dispatchHttp(task: TaskExecution, input: JsonObject, options: HttpDispatchOptions): Promise<DispatchResult> {
  const result = (status: DispatchResult["status"], output: JsonObject, reason?: string): DispatchResult => {
    const event: DispatchResult = { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status, output };
    if (reason !== undefined) event.reason = reason;
    return event;
  };
  const built = buildHttpRequest(input, options.engine, deliveryKey(task));
  const shown = shownRequest(task, options.engine, input, built);
  // The live input's reason may quote a resolved uri: prefer the stored input's, else say no more.
  if (!built.ok) return result(built.missing ? "FAILED" : "FAILED_WITH_TERMINAL_ERROR", {}, shown.invalid ?? "HTTP task input is invalid once its secrets are resolved");
  const request: HttpRequestSpec = built.request;
  if ("error" in options.egress) return result("FAILED_WITH_TERMINAL_ERROR", {}, `The egress policy is misconfigured: ${options.egress.error}`);
  const policy = options.egress;

  const send = (hedge: AbortSignal) => sendOnce(request, shown, policy, options, options.asyncComplete, hedge, result);
  const attempts = request.hedgingAttempts ?? 1;
  if (attempts === 1) return send(new AbortController().signal);
  return hedged(attempts, send);
}

/**
 * Orkes' hedging (`hedgingConfig.maxAttempts`): `attempts` identical requests at once, the first successful answer
 * (COMPLETED, or IN_PROGRESS for an asyncComplete task) taken and the others aborted, to cut a slow server's tail
 * latency. When none succeeds the first request's failure is the task's, so its reason reads as without hedging.
 */
async function hedged(attempts: number, send: (hedge: AbortSignal) => Promise<DispatchResult>): Promise<DispatchResult> {
  const losers = new AbortController();
  const runs = Array.from({ length: attempts }, () => send(losers.signal));
  const succeeded = (event: DispatchResult) => event.status === "COMPLETED" || event.status === "IN_PROGRESS";
  // Each run settles (sendOnce throws only past the subrequest count): the first that succeeds wins, else all fail and
  // the first one's stands (its throw too, so the task is sent again).
  const first = await Promise.any(runs.map((run) => run.then((event) => (succeeded(event) ? event : Promise.reject(event))))).catch(() => undefined);
  losers.abort();
  return first ?? runs[0]!;
}

/**
 * One request of the task and what it comes to. `hedge` aborts it when another hedged request has already answered
 * (its result is then dropped). Throws only the runtime's "Too many subrequests" (see `isSubrequestLimitError`): the
 * request was not sent, and the execution sends it again from a fresh invocation rather than fail the task.
 */
async function sendOnce(
  request: HttpRequestSpec,
  shown: { text: string; url: string },
  policy: EgressPolicy,
  options: HttpDispatchOptions,
  asyncComplete: boolean,
  hedge: AbortSignal,
  result: (status: DispatchResult["status"], output: JsonObject, reason?: string) => DispatchResult,
): Promise<DispatchResult> {
  // `controller` carries the timeouts. `any` also covers a cancel that was aborted before this line, which an
  // "abort" listener added now would never hear: fetch then sends nothing.
  const controller = new AbortController();
  const signal = AbortSignal.any([options.cancel, controller.signal, hedge]);
  let phase: "connect" | "read" = "connect";
  let timer = setTimeout(() => controller.abort(), request.connectTimeoutMs + request.readTimeoutMs);
  try {
    const response = await fetchWithinPolicy(request, shown, policy, signal);
    phase = "read";
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), request.readTimeoutMs);
    const body = await readBounded(response.body, options.maxResponseBytes);
    if (body === "too-large") {
      return result("FAILED", {}, `Response body from ${shown.text} exceeds ${options.maxResponseBytes} bytes (HTTP_MAX_RESPONSE_BYTES)`);
    }
    const outcome = httpOutcome({ statusCode: response.status, statusText: response.statusText, headers: [...response.headers], body }, asyncComplete);
    return result(outcome.status, outcome.output, outcome.reason);
  } catch (error) {
    if (error instanceof EgressDenied) return result("FAILED_WITH_TERMINAL_ERROR", {}, error.message);
    if (isSubrequestLimitError(error)) throw error;
    if (options.cancel.aborted) return result("CANCELED", {}, "Canceled while the request was in flight");
    if (controller.signal.aborted) {
      const limit = phase === "connect" ? `${request.connectTimeoutMs + request.readTimeoutMs} ms (connectionTimeOut + readTimeOut)` : `${request.readTimeoutMs} ms (readTimeOut)`;
      return result("FAILED", {}, `${shown.text} timed out: no ${phase === "connect" ? "response" : "complete body"} within ${limit}`);
    }
    const message = error instanceof Error ? error.message : String(error);
    // The runtime says "Network connection lost." for a refused connection too: say which side of the response it was.
    const when = phase === "connect" ? " before any response (connection refused, reset or unreachable)" : " while reading the response body";
    return result("FAILED", {}, `${shown.text} failed${when}: ${message}`);
  } finally {
    clearTimeout(timer);
  }
}
