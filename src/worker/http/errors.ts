import type { EngineErrorKind } from "../../engine/errors";
import type { ValidationIssue } from "../../engine/validation-issue";

/** The contract's error codes (others may be added, these keep their meaning). */
export type ErrorCode =
  | "VALIDATION_ERROR"
  | "UNAUTHENTICATED"
  | "INVALID_TOKEN"
  | "EXPIRED_TOKEN"
  // An API key that is unknown, inactive, malformed or has the wrong secret (not a token: see throttle.ts).
  | "INVALID_CREDENTIALS"
  | "PERMISSION_DENIED"
  | "NOT_FOUND"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "METHOD_NOT_ALLOWED"
  | "RATE_LIMITED"
  | "NOT_IMPLEMENTED"
  // Part of the work could not be done now (an object that did not answer): the same request sent again finishes it.
  | "UNAVAILABLE"
  | "INTERNAL_ERROR";

/** A request refused with a status and the contract's error body. Thrown by handlers, turned into a response in one place. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly validationErrors: ValidationIssue[] | undefined;
  /** Headers the refusal needs (e.g. `Retry-After`). */
  readonly headers: Record<string, string> | undefined;

  constructor(status: number, code: ErrorCode, message: string, validationErrors?: ValidationIssue[], headers?: Record<string, string>) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.validationErrors = validationErrors;
    this.headers = headers;
  }
}

/** 429 with `Retry-After`, for a client that must wait before trying again. */
export function tooManyRequests(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError(429, "RATE_LIMITED", `${message}; try again in ${retryAfterSeconds} s`, undefined, { "Retry-After": String(retryAfterSeconds) });
}

/** Most problems one error response lists: a request may hold thousands (20,000 misspelt names made a 4.6 MB answer). */
const MAX_LISTED_ISSUES = 100;

/**
 * 400 with the problems found in the input. The message also names the first problem: Conductor's
 * SDKs surface only `message` (the TypeScript client drops `validationErrors`), and "Invalid workflow
 * definition" alone does not tell a client user what to fix.
 */
export function validationError(message: string, validationErrors: ValidationIssue[]): ApiError {
  const [first] = validationErrors;
  const others = validationErrors.length - 1;
  const more = others <= 0 ? "" : validationErrors.length <= MAX_LISTED_ISSUES ? ` (and ${others} more in validationErrors)` : ` (and ${others} more; validationErrors lists the first ${MAX_LISTED_ISSUES})`;
  return new ApiError(400, "VALIDATION_ERROR", first ? `${message}: ${first.path}: ${first.message}${more}` : message, validationErrors);
}

/** 404 for something that does not exist (or that the caller may not know exists). */
export function notFound(message: string): ApiError {
  return new ApiError(404, "NOT_FOUND", message);
}

const ENGINE_STATUS: Record<EngineErrorKind, [number, ErrorCode]> = {
  CONFLICT: [409, "CONFLICT"],
  NOT_FOUND: [404, "NOT_FOUND"],
  INVALID: [400, "VALIDATION_ERROR"],
  FORBIDDEN: [403, "PERMISSION_DENIED"],
};

/** The API error for an engine refusal. */
export function fromEngineRefusal(refusal: { kind: EngineErrorKind; message: string }): ApiError {
  const [status, code] = ENGINE_STATUS[refusal.kind];
  return new ApiError(status, code, refusal.message);
}

/**
 * The `validationErrors` an error response lists: the first {@link MAX_LISTED_ISSUES}, then, when there were more, one
 * more of the same shape saying how many were left out (a client reading each item's `path` and `message` reads it too).
 */
function listedIssues(issues: ValidationIssue[]): ValidationIssue[] {
  if (issues.length <= MAX_LISTED_ISSUES) return issues;
  const left = issues.length - MAX_LISTED_ISSUES;
  return [...issues.slice(0, MAX_LISTED_ISSUES), { path: "(more)", message: `${left} more problem${left === 1 ? "" : "s"} not listed (only the first ${MAX_LISTED_ISSUES} are); fix these and send again to see them` }];
}

/**
 * Builds every error response of the service: `{status, error, message, retryable, validationErrors?, requestId?}`.
 * `retryable` is Conductor's ErrorResponse flag: the same request may succeed later (a 503 or a 429, each with
 * `Retry-After`); every other refusal stands until the request or the state changes.
 */
export function errorResponse(
  status: number,
  code: ErrorCode,
  message: string,
  options: { validationErrors?: ValidationIssue[] | undefined; requestId?: string; headers?: HeadersInit } = {},
): Response {
  const body: Record<string, unknown> = { status, error: code, message, retryable: status === 503 || status === 429 };
  if (options.validationErrors && options.validationErrors.length > 0) body["validationErrors"] = listedIssues(options.validationErrors);
  if (options.requestId !== undefined) body["requestId"] = options.requestId;
  return Response.json(body, { status, headers: options.headers });
}

/**
 * Where a request went, as an error's log line names it so an operator can find the call: its method, its path (ids
 * and names only: no route takes a secret in its path, and the query, which may hold search text, is left out), and the
 * pattern of the route that took it, when one did.
 */
export interface RequestPlace {
  method: string;
  path: string;
  route?: string | undefined;
}

/**
 * An error as a log line quotes it: its stack for an `Error` (V8's begins with the name and message, so they are not
 * written twice), its name and message before a stack that lacks them, else its text.
 */
export function errorDetail(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const heading = `${error.name}: ${error.message}`;
  return error.stack?.startsWith(heading) ? error.stack : `${heading}\n${error.stack ?? ""}`;
}

/**
 * The response for anything a handler threw. Refusals keep their message; anything else is a bug:
 * logged with a request id and where the request went, answered with that id and nothing internal. A statement naming
 * a table the database lacks is no bug but a deployment whose D1 migrations were not applied (or not yet those of this
 * version): every request would meet it, so the answer says so, as the log does, naming no table.
 */
export function responseForError(error: unknown, requestId: string, place?: RequestPlace): Response {
  if (error instanceof ApiError) {
    return errorResponse(error.status, error.code, error.message, { validationErrors: error.validationErrors, headers: error.headers });
  }
  const unmigrated = error instanceof Error && /\bno such table\b/.test(error.message);
  const hint = unmigrated ? { hint: "a table is missing: the D1 migrations were not applied" } : {};
  console.error(JSON.stringify({ msg: "unhandled error", requestId, ...place, error: errorDetail(error), ...hint }));
  const message = unmigrated
    ? "Internal error: the service's database lacks tables this version reads (its operator must apply the D1 migrations: npx wrangler d1 migrations apply DB --remote); quote the request id when reporting it"
    : "Internal error; quote the request id when reporting it";
  return errorResponse(500, "INTERNAL_ERROR", message, { requestId });
}
