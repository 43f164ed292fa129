import type { EngineConfig } from "../../engine/config";
import type { ExecutionEvent } from "../../engine/decider";
import type { JsonObject, TaskExecution } from "../../engine/model";
import { buildHttpRequest, httpOutcome, isAsyncComplete, type HttpRequestSpec } from "../../engine/tasks/http";
import { readBounded } from "../../worker/http/body";

/** What the HTTP dispatcher needs besides the task. */
export interface HttpDispatchOptions {
  engine: EngineConfig;
  maxResponseBytes: number;
  /** Task-level asyncComplete flag from the definition. */
  asyncCompleteAtTaskLevel: boolean | undefined;
  /** Aborted when the task is canceled while its request is in flight. */
  cancel: AbortSignal;
}

type DispatchResult = Extract<ExecutionEvent, { type: "dispatchResult" }>;

/**
 * Performs an HTTP task's request and turns whatever happens into the task's result. Never throws:
 * connection errors, timeouts and oversized answers become FAILED results with a clear reason.
 * `input` is the task input with secrets resolved; it exists only for the duration of this call.
 */
export async function dispatchHttp(task: TaskExecution, input: JsonObject, options: HttpDispatchOptions): Promise<DispatchResult> {
  const result = (status: DispatchResult["status"], output: JsonObject, reason?: string): DispatchResult => {
    const event: DispatchResult = { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status, output };
    if (reason !== undefined) event.reason = reason;
    return event;
  };
  const built = buildHttpRequest(input, options.engine, task.taskId);
  if (!built.ok) return result("FAILED_WITH_TERMINAL_ERROR", {}, built.reason);
  const request: HttpRequestSpec = built.request;

  const controller = new AbortController();
  const onCancel = () => controller.abort();
  options.cancel.addEventListener("abort", onCancel);
  let phase: "connect" | "read" = "connect";
  let timer = setTimeout(() => controller.abort(), request.connectTimeoutMs + request.readTimeoutMs);
  try {
    const init: RequestInit = { method: request.method, headers: request.headers, signal: controller.signal, redirect: "follow" };
    if (request.body !== undefined) init.body = request.body;
    const response = await fetch(request.url, init);
    phase = "read";
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), request.readTimeoutMs);
    const body = await readBounded(response.body, options.maxResponseBytes);
    if (body === "too-large") {
      return result("FAILED", {}, `Response body from ${request.method} ${request.url} exceeds ${options.maxResponseBytes} bytes (HTTP_MAX_RESPONSE_BYTES)`);
    }
    const outcome = httpOutcome(
      { statusCode: response.status, statusText: response.statusText, headers: [...response.headers], body },
      isAsyncComplete(options.asyncCompleteAtTaskLevel, input),
    );
    return result(outcome.status, outcome.output, outcome.reason);
  } catch (error) {
    if (options.cancel.aborted) return result("CANCELED", {}, "Canceled while the request was in flight");
    if (controller.signal.aborted) {
      const limit = phase === "connect" ? `${request.connectTimeoutMs + request.readTimeoutMs} ms (connectionTimeOut + readTimeOut)` : `${request.readTimeoutMs} ms (readTimeOut)`;
      return result("FAILED", {}, `${request.method} ${request.url} timed out: no ${phase === "connect" ? "response" : "complete body"} within ${limit}`);
    }
    const message = error instanceof Error ? error.message : String(error);
    return result("FAILED", {}, `${request.method} ${request.url} failed: ${message}`);
  } finally {
    clearTimeout(timer);
    options.cancel.removeEventListener("abort", onCancel);
  }
}
