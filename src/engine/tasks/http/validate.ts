/**
 * Registration-time checks of an HTTP task's inputs (spec 2.2). Values holding a `${...}`
 * expression are only known at run time, so their type and allowed values are not checked here.
 */
import * as v from "valibot";
import {
  HEADER_NAME_KEY,
  describeValue,
  fieldsOf,
  isBoolean,
  isExpression,
  isNonEmptyString,
  isOneOf,
  isRecord,
  mapOf,
  toIssues,
  orExpression,
  rule,
  validateWith,
  type UnknownRecord,
} from "../../definition/checks";
import { hasExpression, parseTemplate } from "../../expressions";
import { childPath, registrationOnly, type ValidationIssue } from "../../validation-issue";
import { headerValueProblem, isHeaderValueText } from "../../http-syntax";

/** HTTP methods the spec allows, spelled exactly as it lists them. */
export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"] as const;

/**
 * Values the spec lists for `accept` (section 2.2), in its order: Orkes' documented list for both `accept` and
 * `contentType` (orkes.io reference-docs/system-tasks/http).
 */
const ORKES_MEDIA_TYPES = [
  "application/java-archive",
  "application/EDI-X12",
  "application/EDIFACT",
  "application/javascript",
  "application/octet-stream",
  "application/ogg",
  "application/pdf",
  "application/xhtml+xml",
  "application/x-shockwave-flash",
  "application/json",
  "application/ld+json",
  "application/xml",
  "application/zip",
  "application/x-www-form-urlencoded",
  "audio/mpeg",
  "audio/x-ms-wma",
  "audio/vnd.rn-realaudio",
  "audio/x-wav",
  "image/gif",
  "image/jpeg",
  "image/png",
  "image/tiff",
  "image/vnd.microsoft.icon",
  "image/x-icon",
  "image/vnd.djvu",
  "image/svg+xml",
  // Not in the spec's accept table, but its `headers` row names text/plain as a supported Accept value.
  "text/plain",
] as const;

/**
 * Values `accept` takes: Orkes' documented list, and text/html and text/xml, which Conductor's HTTP task docs list among
 * its accept values (conductor-oss/conductor docs/.../systemtasks/http-task.md): a task asking for an HTML page or an
 * XML feed as those docs allow was refused at registration. Conductor's HttpTask sends any value.
 */
export const HTTP_ACCEPT_TYPES = [...ORKES_MEDIA_TYPES, "text/html", "text/xml"] as const;

/**
 * Values `contentType` takes: Orkes' documented list, the same as its accept list (orkes.io reference-docs/system-tasks/http),
 * which holds the spec's four (application/json, text/plain, application/xml, image/svg+xml), and text/html, which
 * Conductor's HTTP task docs also list (conductor-oss/conductor docs/.../systemtasks/http-task.md). Conductor's
 * HttpTask sends any media type; the spec's four alone refused `application/x-www-form-urlencoded`, which Orkes'
 * templates post to Twilio with a string body (orkes-io/orkes-templates Notify-Channels), though the same value given
 * by an expression was sent.
 */
export const HTTP_CONTENT_TYPES = [...ORKES_MEDIA_TYPES, "text/html"] as const;

/**
 * Upper bound a definition may give `connectionTimeOut` and `readTimeOut` (milliseconds, a day). What a request is
 * actually held to is capped again as it runs by `HTTP_MAX_TIMEOUT_MS` (10 minutes unless configured), so that an
 * operator raising that cap can register the longer timeouts it allows.
 */
export const MAX_HTTP_TIMEOUT_MS = 86_400_000;

/** Methods whose request must say what it sends (spec: body required for POST, PUT, PATCH). */
const BODY_METHODS: ReadonlySet<unknown> = new Set(["POST", "PUT", "PATCH"]);

/**
 * Most parallel requests Orkes' `hedgingConfig.maxAttempts` may ask for. Orkes sets no bound; each attempt holds a
 * connection of the execution's Durable Object while the task runs, so a few are plenty to cut a tail latency.
 */
export const MAX_HEDGING_ATTEMPTS = 5;

/**
 * A `hedgingConfig.maxAttempts` as this service reads it: an integer (or its digits as text, as this service takes the timeouts)
 * from 0 to {@link MAX_HEDGING_ATTEMPTS}, 0 and 1 meaning one request. Anything else is `undefined`.
 */
export function hedgingAttemptsOf(value: unknown): number | undefined {
  const number = typeof value === "string" && /^\d{1,3}$/.test(value.trim()) ? Number(value.trim()) : value;
  return typeof number === "number" && Number.isInteger(number) && number >= 0 && number <= MAX_HEDGING_ATTEMPTS ? number : undefined;
}

const HEDGING_EXPECTED = `Orkes' hedging settings: {maxAttempts}, a whole number of parallel requests from 1 to ${MAX_HEDGING_ATTEMPTS} (0 or null: one), or a \${...} giving one`;

/** `hedgingConfig`: an object whose `maxAttempts` is absent, null, an expression or a count {@link hedgingAttemptsOf} takes. */
function isHedgingConfig(value: unknown): boolean {
  if (!isRecord(value)) return false;
  const attempts = value["maxAttempts"];
  return attempts === undefined || attempts === null || isExpression(attempts) || hedgingAttemptsOf(attempts) !== undefined;
}

/** A number or a string of digits, as the spec's examples give `connectionTimeOut` and `readTimeOut`. */
function isTimeout(value: unknown): boolean {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 && value <= MAX_HTTP_TIMEOUT_MS;
  if (typeof value !== "string" || !/^\d+$/.test(value.trim())) return false;
  return Number(value.trim()) <= MAX_HTTP_TIMEOUT_MS;
}

/** A header value's scalar: text, a number or a boolean (what text a header can carry is {@link headerTextIssues}'). */
function isHeaderScalar(value: unknown): boolean {
  return typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value));
}

/**
 * A header's value: text, a number or a boolean; a list of them, sent joined with ", " (the Go and Python SDKs type
 * headers as lists of values); or null, no header (Conductor skips a null value).
 */
function isHeaderValue(value: unknown): boolean {
  return value === null || isHeaderScalar(value) || (Array.isArray(value) && value.every(isHeaderScalar));
}

const TIMEOUT_EXPECTED = `a whole number of milliseconds from 0 to ${MAX_HTTP_TIMEOUT_MS} (a number or a string of digits)`;

/**
 * True for one of `types`, in any case and with parameters (`application/json; charset=utf-8`): a MIME type's name is
 * case-insensitive, and a charset is how clients commonly write it. Sent as written.
 */
function isMediaTypeOf(types: readonly string[]): (value: unknown) => boolean {
  const names = new Set(types.map((type) => type.toLowerCase()));
  return (value) => typeof value === "string" && isHeaderValueText(value) && names.has(value.split(";")[0]!.trim().toLowerCase());
}

// An optional field given as null is one left out, as Jackson reads it into Conductor's HttpTask.Input (whose null
// vipAddress, timeouts, accept… mean "not given", as they do when this service sends the request): the .NET SDK's
// HttpTaskSettings writes every field it holds, `"vipAddress": null` among them.
const REQUEST = fieldsOf({
  // An expression is non-empty text, so it passes as it is.
  uri: rule<string>("uri", "a non-empty string (the URL to call)", isNonEmptyString),
  method: rule<string>(
    "method",
    `one of ${HTTP_METHODS.join(", ")}, in upper case as the spec lists them`,
    orExpression(isOneOf(HTTP_METHODS)),
  ),
  accept: v.nullish(rule<string>("accept", `one of the supported MIME types: ${HTTP_ACCEPT_TYPES.join(", ")}`, orExpression(isMediaTypeOf(HTTP_ACCEPT_TYPES)))),
  contentType: v.nullish(
    rule<string>("contentType", `one of the supported MIME types: ${HTTP_CONTENT_TYPES.join(", ")}`, orExpression(isMediaTypeOf(HTTP_CONTENT_TYPES))),
  ),
  headers: v.nullish(mapOf("headers", "a string, a number or a boolean, a list of them, or null", isHeaderValue, { wholeExpression: true, key: HEADER_NAME_KEY })),
  encode: v.nullish(rule<boolean>("encode", "a boolean", orExpression(isBoolean))),
  connectionTimeOut: v.nullish(rule<unknown>("connectionTimeOut", TIMEOUT_EXPECTED, orExpression(isTimeout))),
  readTimeOut: v.nullish(rule<unknown>("readTimeOut", TIMEOUT_EXPECTED, orExpression(isTimeout))),
  asyncComplete: v.nullish(rule<boolean>("asyncComplete", "a boolean", orExpression(isBoolean))),
  // Orkes' hedging: that many identical requests at once, the first successful answer taken (see dispatchHttp).
  hedgingConfig: v.nullish(rule<unknown>("hedgingConfig", HEDGING_EXPECTED, orExpression(isHedgingConfig))),
  vipAddress: v.nullish(
    rule<string>("vipAddress", "the address of the service a partial uri (a path) is sent to: host[:port], or an http or https URL", orExpression(isVipAddress)),
  ),
});

/** `host[:port]`, or an http(s) URL (its path a base for the task's `uri`). */
function isVipAddress(value: unknown): boolean {
  if (!isNonEmptyString(value)) return false;
  const trimmed = value.trim();
  try {
    const url = new URL(/^https?:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`);
    return url.hostname !== "" && url.search === "" && url.hash === "" && url.username === "" && (/^https?:\/\//i.test(trimmed) || url.pathname === "/");
  } catch {
    return false;
  }
}

/**
 * Problems in an HTTP task's request. The request is what the task will send (see `httpRequestFields`):
 * the flat fields of `inputParameters` with those of `inputParameters.http_request`, when present, laid
 * over them field by field. Each problem is reported where the offending value is written; a missing
 * field where the request is written (`http_request` when present).
 * A non-object `inputParameters` is reported by the common task checks, not here.
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[0]`
 */
export function validateHttpTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const inputPath = childPath(path, "inputParameters");
  const input = task["inputParameters"] ?? {};
  if (!isRecord(input)) return [];

  const nested = input["http_request"];
  if (nested === undefined) return [...missingUriHint(validateWith(REQUEST, input, inputPath), input), ...uriIssues(input, inputPath), ...bodyIssues(input, inputPath), ...headerTextIssues(input, inputPath)];
  const requestPath = childPath(inputPath, "http_request");
  // The whole request from an expression (`"http_request": "${workflow.input.request}"`, as Conductor's docs start a
  // workflow): known only as the task runs, where a request without uri or method fails the task.
  if (isExpression(nested)) return [];
  if (!isRecord(nested)) {
    return [{ path: requestPath, message: `http_request must be an object holding the request (uri, method, ...), but received ${describeValue(nested)}` }];
  }
  const { http_request: _nested, ...flat } = input;
  const request: UnknownRecord = { ...flat, ...nested };
  const placeOf = (key: unknown) => (typeof key === "string" && Object.hasOwn(flat, key) && !Object.hasOwn(nested, key) ? inputPath : requestPath);
  const result = v.safeParse(REQUEST, request);
  const issues = result.success ? [] : result.issues.flatMap((issue) => toIssues([issue], placeOf(issue.path?.[0]?.key)));
  return [...missingUriHint(issues, request), ...uriIssues(request, placeOf("uri")), ...bodyIssues(request, requestPath), ...headerTextIssues(request, placeOf("headers"))];
}

/**
 * A literal header value (alone or in a list) a header cannot carry (see {@link headerValueProblem}): a line break, NUL
 * or a character beyond Latin-1. Every run would fail the task (`buildHttpRequest`, sending nothing), so it is refused
 * at registration, as a literal uri of another scheme is; only there (registration-only): a definition registered before
 * this rule, a forked task or a DYNAMIC's chosen one still runs, that task failing as it runs, and an optional one lets
 * a fork go on. A value holding an expression is only known as the task runs. The value is never quoted (a credential).
 */
function headerTextIssues(request: UnknownRecord, requestPath: string): ValidationIssue[] {
  const headers = request["headers"];
  if (!isRecord(headers)) return [];
  const issues: ValidationIssue[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const problem = (Array.isArray(value) ? value : [value]).map((text) => (typeof text === "string" && !hasExpression(text) ? headerValueProblem(text) : undefined)).find((found) => found !== undefined);
    if (problem === undefined) continue;
    issues.push(registrationOnly({ path: childPath(childPath(requestPath, "headers"), name), message: `headers value for ${JSON.stringify(name)} must be text without a line break, NUL or character beyond Latin-1 (U+00FF), but ${problem}` }));
  }
  return issues;
}

/**
 * `issues` with the missing `uri`'s message saying where the URL went when the request holds it under another name
 * (`url`, `URL`, `endpoint`), as a newcomer from other HTTP clients writes it: the field is Conductor's `uri`.
 */
function missingUriHint(issues: ValidationIssue[], request: UnknownRecord): ValidationIssue[] {
  if (request["uri"] !== undefined) return issues;
  const misnamed = ["url", "URL", "Url", "endpoint", "URI"].find((key) => Object.hasOwn(request, key));
  if (misnamed === undefined) return issues;
  return issues.map((issue) =>
    issue.path.endsWith("uri") && issue.message.startsWith("uri is required")
      ? { ...issue, message: `${issue.message}; this request has "${misnamed}", which the HTTP task does not read: name it "uri", as Conductor's HTTP task does` }
      : issue,
  );
}

/**
 * A literal `uri` no request can ever be sent to, whatever vipAddress a run gives it: one with a scheme other than http
 * or https (`localhost:8080/x` reads as the scheme `localhost`, `ftp://…`), or an http(s) one that does not parse
 * (`http://`). Conductor's HttpTask fails such a task at every run (its HTTP client refuses the URI); here it is
 * refused at registration, as a literal method or timeout is; only there (registration-only: a definition registered
 * before this rule still runs, the task failing at its request as before). A uri without a scheme (`/orders/42`, `example.com/x`) is
 * left to the run: it is a path on a vipAddress, which the task's registered task definition may give in its
 * inputTemplate, and a run without one fails saying to give one. An expression is only known at run time.
 */
function uriIssues(request: UnknownRecord, requestPath: string): ValidationIssue[] {
  const uri = request["uri"];
  if (typeof uri !== "string") return [];
  if (hasExpression(uri)) return templatedUriIssues(uri, childPath(requestPath, "uri"));
  const written = uri.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(written)?.[1];
  if (scheme === undefined) return [];
  const path = childPath(requestPath, "uri");
  // The query is percent-encoded as the task runs (encode); the URL parser takes any query as it is, so it changes nothing here.
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    return [registrationOnly({ path, message: `uri must be an absolute http or https URL (or a path on a vipAddress), but ${JSON.stringify(uri)} is not one` })];
  }
  if (url.protocol === "http:" || url.protocol === "https:") return [];
  return [registrationOnly({ path, message: `uri must be an http or https URL (or a path on a vipAddress), but ${JSON.stringify(uri)} reads as one of scheme ${scheme}: ${schemeAdvice(scheme, written)}` })];
}

/**
 * What to write instead of a uri of another `scheme`: a `host:port/…` read as a scheme (`localhost:8080/x`) wants
 * `https://` before it; one that really names another scheme (`ftp://…`, `mailto:…`) cannot be sent by an HTTP task.
 */
function schemeAdvice(scheme: string, written: string): string {
  const afterScheme = written.slice(scheme.length + 1);
  if (afterScheme.startsWith("//") || !/^(\d|\$\{)/.test(afterScheme)) return `an HTTP task sends http or https requests only`;
  return `write https://${written} for a server at that address`;
}

/**
 * A `uri` with expressions whose literal start already names a scheme other than http or https
 * (`localhost:8080/orders/${workflow.input.id}`): whatever the expressions give, the request goes to that scheme, which
 * fails the task at every run, as the literal uri does (see {@link uriIssues}). Whether an http(s) one parses, or what a
 * uri starting with an expression names, is known only as the task runs.
 */
function templatedUriIssues(uri: string, path: string): ValidationIssue[] {
  let first;
  try {
    first = parseTemplate(uri).parts[0];
  } catch {
    // A malformed expression is reported by the definition's template checks.
    return [];
  }
  if (first?.kind !== "text") return [];
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(first.text.trimStart())?.[1];
  if (scheme === undefined || /^https?$/i.test(scheme)) return [];
  return [registrationOnly({ path, message: `uri must be an http or https URL (or a path on a vipAddress), but ${JSON.stringify(uri)} starts with the scheme ${scheme}, whatever its expressions give: ${schemeAdvice(scheme, uri.trim())}` })];
}

/**
 * The Content-Type a request sends as written: its `contentType`, else a `Content-Type` among its `headers` (in any
 * case), as the request is built (`buildHttpRequest`).
 */
function writtenContentType(request: UnknownRecord): unknown {
  const contentType = request["contentType"];
  if (contentType !== undefined && contentType !== null) return contentType;
  const headers = request["headers"];
  if (!isRecord(headers)) return undefined;
  const name = Object.keys(headers).find((key) => key.toLowerCase() === "content-type");
  return name === undefined ? undefined : headers[name];
}

/**
 * The spec's one rule across fields: POST, PUT and PATCH must say what they send. And a literal body the task could not
 * send as the form its literal `contentType` (or `Content-Type` header) names: a field holding an object (see
 * `formBody` in request.ts, which fails such a task as it runs, whatever registered it).
 */
function bodyIssues(request: UnknownRecord, requestPath: string): ValidationIssue[] {
  const method = request["method"];
  const body = request["body"];
  const nested = isRecord(body) && isFormContentType(writtenContentType(request)) ? Object.entries(body).find(([, value]) => (Array.isArray(value) ? value : [value]).some(isPlainObjectOrList)) : undefined;
  if (nested !== undefined) {
    return [registrationOnly({ path: childPath(childPath(requestPath, "body"), nested[0]), message: `a field of an application/x-www-form-urlencoded body must be a text, number, boolean or list of them: an object has no one form encoding (write the body as the form's text, a=1&b=2)` })];
  }
  if (isExpression(method) || !BODY_METHODS.has(method) || body !== undefined) return [];
  return [
    {
      path: childPath(requestPath, "body"),
      message: `body is required for ${String(method)} requests (it may be null, but the key must be there)`,
    },
  ];
}

/** A value a form field cannot hold: an object, or a list (inside a field's list of values). */
export function isPlainObjectOrList(value: unknown): boolean {
  return typeof value === "object" && value !== null;
}

/** Whether a Content-Type is a form's, `application/x-www-form-urlencoded`, in any case and with parameters. */
export function isFormContentType(value: unknown): boolean {
  return typeof value === "string" && value.split(";")[0]!.trim().toLowerCase() === "application/x-www-form-urlencoded";
}
