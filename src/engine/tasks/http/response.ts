import { deepEqual } from "../../expressions/values";
import { overdeepReason } from "../../limits";
import type { JsonObject, JsonValue, TaskStatus } from "../../model";

/** What the actor read from the remote service, before the engine interprets it. */
export interface HttpResponseData {
  statusCode: number;
  /** The status line's phrase; empty when the server sent none (HTTP/2). */
  statusText: string;
  /** Header name (lower case) and value pairs, repeated names kept. */
  headers: Array<[string, string]>;
  /** The body as received. */
  body: Uint8Array;
}

/** How the task ends (or, with asyncComplete, goes on) after a response. */
export interface HttpOutcome {
  status: TaskStatus;
  output: JsonObject;
  reason?: string;
}

/** Reason phrases of RFC 9110, for responses (e.g. over HTTP/2) that carry none. */
const REASON_PHRASES: Readonly<Record<number, string>> = {
  200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
  205: "Reset Content", 206: "Partial Content", 300: "Multiple Choices", 301: "Moved Permanently", 302: "Found",
  303: "See Other", 304: "Not Modified", 307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request",
  401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
  406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout", 409: "Conflict", 410: "Gone",
  411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large", 414: "URI Too Long",
  415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed", 421: "Misdirected Request",
  422: "Unprocessable Content", 425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required",
  429: "Too Many Requests", 431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
  500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
  504: "Gateway Timeout", 505: "HTTP Version Not Supported",
};

/** The reason phrase for a status, preferring what the server sent. */
export function reasonPhrase(statusCode: number, sent: string): string {
  return sent.trim() !== "" ? sent : (REASON_PHRASES[statusCode] ?? "");
}

/** True for media types whose bodies are text, whatever their bytes (read as UTF-8 unless a charset or a byte order mark says otherwise). */
export function isTextualContentType(contentType: string | null): boolean {
  if (contentType === null || contentType.trim() === "") return true;
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return (
    type.startsWith("text/") ||
    type.endsWith("+json") ||
    type.endsWith("+xml") ||
    ["application/json", "application/xml", "application/javascript", "application/x-www-form-urlencoded", "application/edi-x12", "application/edifact"].includes(type)
  );
}

/** Media types whose bodies are bytes, kept as base64 whatever they hold. */
function isBinaryContentType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return /^(image|audio|video|font)\//.test(type) || BINARY_TYPES.has(type);
}

const BINARY_TYPES: ReadonlySet<string> = new Set([
  "application/octet-stream",
  "application/pdf",
  "application/zip",
  "application/gzip",
  "application/x-gzip",
  "application/x-tar",
  "application/x-protobuf",
  "application/protobuf",
  "application/wasm",
  "application/msword",
]);

/**
 * The encoding a Content-Type's `charset` parameter names (`text/plain; charset=ISO-8859-1` → `windows-1252`, as the
 * WHATWG encoding standard maps the label), when it names one other than UTF-8 that a TextDecoder knows; undefined for
 * none, UTF-8, or a label no decoder knows (the body is then read as UTF-8).
 */
function declaredCharset(contentType: string | null): string | undefined {
  if (contentType === null) return undefined;
  const label = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
  // UTF-8, by far the most common label, needs no decoder made to learn that it is UTF-8: no cost on the common path.
  if (label === undefined || /^utf-?8$/i.test(label)) return undefined;
  try {
    const encoding = new TextDecoder(label).encoding;
    return encoding === "utf-8" ? undefined : encoding;
  } catch {
    return undefined;
  }
}

/**
 * The encoding a byte order mark at the start of `body` names, which the WHATWG decode algorithm (and Java's UTF-16
 * decoder) trusts over any label: a body labelled `utf-16`, little-endian to the standard, may be big-endian, as its
 * mark says. Undefined when it starts with none.
 */
function byteOrderMarkEncoding(body: Uint8Array): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return "utf-8";
  if (body[0] === 0xfe && body[1] === 0xff) return "utf-16be";
  if (body[0] === 0xff && body[1] === 0xfe) return "utf-16le";
  return undefined;
}

/**
 * The body as text: in the encoding its byte order mark names, else the charset its Content-Type declares (as
 * Conductor's RestTemplate reads a String body, so a Latin-1 or UTF-16 answer is not mangled into U+FFFD), else as
 * UTF-8: any body of a textual type, and one of any other type not known to be binary whose bytes are UTF-8 (AWS's
 * `application/x-amz-json-1.1`, `application/x-ndjson`, `application/yaml`, `application/jwt`…); undefined for bytes,
 * which are kept as base64 so that none is lost.
 */
function bodyText(body: Uint8Array, contentType: string | null): string | undefined {
  if (isBinaryContentType(contentType)) return undefined;
  const charset = declaredCharset(contentType);
  // The decoder drops the mark it is made for.
  if (charset !== undefined || isTextualContentType(contentType)) return new TextDecoder(byteOrderMarkEncoding(body) ?? charset ?? "utf-8").decode(body);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    return undefined;
  }
}

/** Bytes as standard base64. */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  return btoa(binary);
}

/**
 * The response body as later tasks see it, as Conductor's HTTP task reads every body (`objectMapper.readTree`):
 * parsed JSON whenever the text parses, whatever its media type says (many servers send JSON as text/plain or under
 * their own types; `42` is a number), else the text (a sloppy JSON server does not lose its answer); base64 for bytes
 * (see {@link bodyText}); null when empty.
 */
export function decodeBody(body: Uint8Array, contentType: string | null): JsonValue {
  if (body.length === 0) return null;
  const text = bodyText(body, contentType);
  if (text === undefined) return toBase64(body);
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/**
 * Response headers in Conductor's shape: each name maps to the list of its values. The server chooses
 * the names, so each is defined as an own property: assignment would find `constructor` on the prototype
 * or replace the prototype for `__proto__`. The object stays a plain one, as RPC cannot send an object
 * without a prototype (a child's output goes to its parent that way).
 */
export function headersObject(headers: Array<[string, string]>): JsonObject {
  const lists = new Map<string, string[]>();
  for (const [name, value] of headers) {
    const list = lists.get(name);
    if (list) list.push(value);
    else lists.set(name, [value]);
  }
  const result: JsonObject = {};
  for (const [name, values] of lists) Object.defineProperty(result, name, { value: values, enumerable: true, writable: true, configurable: true });
  return result;
}

/** The fields of an HTTP task's `response` that its output repeats at the top level (see {@link httpOutput}). */
const RESPONSE_FIELDS = ["body", "headers", "statusCode", "reasonPhrase"] as const;

/**
 * The task output for a response: the spec's `response {body, headers, statusCode, reasonPhrase}`,
 * with the same four fields repeated at the top level for `${ref.output.body}`-style expressions.
 */
export function httpOutput(response: HttpResponseData): JsonObject {
  const contentType = response.headers.find(([name]) => name === "content-type")?.[1] ?? null;
  const fields = {
    body: decodeBody(response.body, contentType),
    headers: headersObject(response.headers),
    statusCode: response.statusCode,
    reasonPhrase: reasonPhrase(response.statusCode, response.statusText),
  } satisfies Record<(typeof RESPONSE_FIELDS)[number], JsonValue>;
  return { response: { ...fields }, ...fields };
}

/**
 * An HTTP task's output as Conductor's has it, `{response}`: without the top-level copies {@link httpOutput} adds (each
 * dropped only while it still equals `response`'s own: an output a caller set otherwise is left whole). What a JSONPath
 * query over the whole output sees, so that `${ref.output..status}` (Conductor's kitchensink) finds each value once.
 */
export function outputWithoutResponseCopies(output: JsonValue): JsonValue {
  if (output === null || typeof output !== "object" || Array.isArray(output)) return output;
  const response = output["response"];
  if (response === null || typeof response !== "object" || Array.isArray(response)) return output;
  const copies = RESPONSE_FIELDS.filter((field) => Object.hasOwn(output, field) && Object.hasOwn(response, field) && deepEqual(output[field]!, response[field]!));
  if (copies.length === 0) return output;
  // fromEntries: a `__proto__` key stays a key.
  return Object.fromEntries(Object.entries(output).filter(([key]) => !(copies as readonly string[]).includes(key))) as JsonObject;
}

/**
 * Interprets a response. 2xx completes the task (or keeps it IN_PROGRESS with the response recorded,
 * when it completes asynchronously); anything else fails it, keeping statusCode and body for diagnosis.
 */
export function httpOutcome(response: HttpResponseData, asyncComplete: boolean): HttpOutcome {
  const output = httpOutput(response);
  const deep = overdeepReason("The response body", output["body"]!);
  if (deep !== undefined) {
    // Kept, it would overflow the stack wherever it is stored, copied or resolved; retrying brings the same answer.
    const fields: JsonObject = { body: null, headers: output["headers"]!, statusCode: response.statusCode, reasonPhrase: output["reasonPhrase"]! };
    return { status: "FAILED_WITH_TERMINAL_ERROR", output: { response: { ...fields }, ...fields }, reason: deep };
  }
  if (response.statusCode >= 200 && response.statusCode < 300) {
    return { status: asyncComplete ? "IN_PROGRESS" : "COMPLETED", output };
  }
  const phrase = reasonPhrase(response.statusCode, response.statusText);
  const said = failureText(output["body"]!, response.body, response.headers.find(([name]) => name === "content-type")?.[1] ?? null);
  return {
    status: "FAILED",
    output,
    // What the service said, as Conductor's reason is the body: whole here, since the reason is cut to its limit only
    // once the actor has masked the secrets in it (a cut before could leave part of one).
    reason: `HTTP ${response.statusCode}${phrase ? ` ${phrase}` : ""} from the remote service${said === "" ? "" : `: ${said}`}`,
  };
}

/** A failed response's body as one line of text for its reason; empty for none, or for a binary one (base64 says nothing). */
function failureText(body: JsonValue, raw: Uint8Array, contentType: string | null): string {
  if (body === null || bodyText(raw, contentType) === undefined) return "";
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return text.replace(/\s+/g, " ").trim();
}
