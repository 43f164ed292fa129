import { holdsLoneSurrogate, LONE_SURROGATE_TEXT_MESSAGE, wellFormed } from "../../engine/http-syntax";
import { ApiError, validationError } from "./errors";
import { findJsonSyntaxProblem } from "./json-syntax";

/**
 * True when a body with this Content-Type is read as JSON: a JSON type, or none at all. The Conductor
 * SDKs repeat a call after refreshing their token with the body but without its Content-Type, and with
 * credentials in headers (never cookies) an undeclared body opens no cross-site path. A body declared as
 * something else (text, a form) is refused: 415.
 */
export function readsAsJson(contentType: string | null): boolean {
  if (contentType === null || contentType.trim() === "") return true;
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || type.endsWith("+json");
}

/**
 * Reads a stream up to `limit` bytes; "too-large" (after canceling the stream) as soon as it goes
 * over, so an oversized body is never buffered whole.
 */
export async function readBounded(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array | "too-large"> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return "too-large";
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** Reads the raw request body, refusing (413) more than `maxBytes` whatever Content-Length claims. */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  const tooLarge = () => new ApiError(413, "PAYLOAD_TOO_LARGE", `Request body exceeds the limit of ${maxBytes} bytes`);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  const bytes = await readBounded(request.body, maxBytes);
  if (bytes === "too-large") throw tooLarge();
  return bytes;
}

/**
 * A JSON object request body, read from a clone so the route still gets the body; undefined for any other,
 * and for one over `maxBytes`, which is not read past the limit (the route answers it 413).
 */
export async function peekJsonObject(request: Request, maxBytes: number): Promise<Record<string, unknown> | undefined> {
  try {
    const bytes = await readBounded(request.clone().body, maxBytes);
    if (bytes === "too-large") return undefined;
    // Read as the route reads it (jsonRequestText), so that the name the guard checks is the name the route acts on.
    const body: unknown = JSON.parse(jsonRequestText(bytes, request.headers.get("content-type")));
    return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A 400 about the body as a whole. */
const bodyError = (message: string) => validationError(message, [{ path: "(body)", message }]);

/**
 * `bytes` read as UTF-8 (a byte order mark at the start left out, as Jackson leaves it out); undefined for bytes that are
 * not UTF-8, which a lenient decoder would turn into U+FFFD and store so, silently changed (a client writing Latin-1).
 */
function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The outcome of reading a JSON body: `present: false` when the request had no body at all. */
export type JsonBody = { present: false } | { present: true; value: unknown };

/** Charset labels read as UTF-8 (US-ASCII is a subset). */
const UTF8_LABELS = new Set(["utf-8", "utf8", "unicode-1-1-utf-8", "us-ascii"]);

/**
 * A JSON body's text, read in the charset its Content-Type declares (UTF-8 without one, as RFC 8259 asks), as Spring's
 * Jackson converter reads Conductor's bodies: `application/json; charset=ISO-8859-1` with Latin-1 bytes is read so.
 * Undefined for bytes that are not text in that charset; a 415 for a charset no decoder knows.
 */
function jsonBodyText(bytes: Uint8Array, charset: string | undefined): string | undefined {
  if (charset === undefined || UTF8_LABELS.has(charset)) return utf8Text(bytes);
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true, ignoreBOM: false });
  } catch {
    throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", `Request body's charset ${JSON.stringify(charset.slice(0, 40))} is not one this service knows: send JSON as UTF-8`);
  }
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The text of a body {@link readsAsJson} takes, as every JSON body is read (a route's, the guard's peek at it, a
 * WAIT_FOR_WEBHOOK callback's): in the charset its Content-Type declares, UTF-8 without one, a byte order mark read
 * past. Throws a 415 for a charset no decoder knows and a 400 for bytes that are not text in it (UTF-8 unless declared:
 * Conductor's Jackson refuses such bytes too, where a lenient decoder would keep U+FFFD in their place).
 */
export function jsonRequestText(bytes: Uint8Array, contentType: string | null): string {
  const { charset } = mediaType(contentType);
  const text = jsonBodyText(bytes, charset);
  if (text === undefined) throw bodyError(`Request body is not valid ${charset === undefined ? "UTF-8" : charset.slice(0, 40)}: send JSON as UTF-8`);
  return text;
}

/**
 * Reads a JSON body: 413 over the size limit, 415 when a non-empty body is declared as something else, 415 or 400 when
 * its bytes are not text (see {@link jsonRequestText}), 400 when it does not parse.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<JsonBody> {
  const bytes = await readBodyBytes(request, maxBytes);
  if (bytes.byteLength === 0) return { present: false };
  const contentType = request.headers.get("content-type");
  if (!readsAsJson(contentType)) {
    if (new TextDecoder().decode(bytes).trim() === "") return { present: false };
    throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "Request body must be JSON: send it with Content-Type: application/json");
  }
  const text = jsonRequestText(bytes, contentType);
  if (text.trim() === "") return { present: false };
  try {
    return { present: true, value: JSON.parse(text) as unknown };
  } catch {
    // Not the parser's message: it quotes the body, which may hold a credential, and names no place for some mistakes.
    const found = findJsonSyntaxProblem(text);
    if (!found) throw new ApiError(400, "VALIDATION_ERROR", "Request body is not valid JSON");
    throw validationError("Request body is not valid JSON", [{ path: "(body)", message: `line ${found.line}, column ${found.column}: ${found.problem}` }]);
  }
}

/** {@link readJsonBody} for a request that must have one: no body is a 400. */
export async function readRequiredJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const body = await readJsonBody(request, maxBytes);
  if (!body.present) throw validationError("Request body is required", [{ path: "(body)", message: "is required" }]);
  return body.value;
}

function mediaType(contentType: string | null): { type: string; charset: string | undefined } {
  const [type = "", ...parameters] = (contentType ?? "").split(";").map((part) => part.trim().toLowerCase());
  const charset = parameters.find((parameter) => parameter.startsWith("charset="))?.slice("charset=".length).replace(/^"|"$/g, "");
  return { type, charset };
}

/** What {@link readStringBody} reads: the value's name in its messages and an example of it as a JSON string. */
export interface StringBody {
  /** e.g. "secret value". */
  what: string;
  /** e.g. `"s3cr3t"`. */
  example: string;
  /** Read a body declared with no Content-Type as JSON (as {@link readJsonBody} does), rather than refuse it (415). */
  untypedAsJson?: boolean;
  /**
   * A lone surrogate (only a JSON string's escape makes one) becomes U+FFFD, as it is stored, rather than a 400: for text a
   * worker reports (a log line; see `workerText` in schemas.ts), where a value (a secret's) is refused.
   */
  loneSurrogatesReplaced?: boolean;
}

/**
 * A body that is one string, as Conductor's `@RequestBody String` endpoints take it: a JSON string (Content-Type
 * `application/json`, as the Python and JavaScript clients send it) is its content; any other body under a JSON media
 * type is taken as the text itself, as Conductor's Java client sends a String (raw, labelled `application/json`) and as
 * Orkes' server reads it (so a value that is a JSON object, such as a service account's key, is kept as sent); raw
 * `text/plain` is the text. UTF-8 only: 415 for another media type or charset, 400 for bytes that are not UTF-8 and for
 * an empty JSON body, and for one holding a lone surrogate (a JSON string's `\ud83d` escape without its pair), which the
 * text it is kept as has no form for. Refusals never quote the body: a value sent the wrong way may still be a secret (which is also why
 * {@link readJsonBody}, whose parse errors name the place of a mistake in the text, is not used). Other empty and size checks are the caller's.
 */
export async function readStringBody(request: Request, maxBytes: number, body: StringBody): Promise<string> {
  const { what, example } = body;
  const bytes = await readBodyBytes(request, maxBytes);
  const { type, charset } = mediaType(request.headers.get("content-type"));
  const isJson = type === "application/json" || type.endsWith("+json") || (type === "" && body.untypedAsJson === true);
  if (!isJson && type !== "text/plain") {
    throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", `Send the ${what} as a JSON string (Content-Type: application/json, e.g. ${example}) or as text/plain`);
  }
  if (charset !== undefined && !UTF8_LABELS.has(charset)) {
    throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", `The ${what} must be sent as UTF-8`);
  }
  const text = utf8Text(bytes);
  if (text === undefined) throw bodyError(`The ${what} is not valid UTF-8`);
  if (!isJson) return text;
  if (text.trim() === "") throw bodyError(`The body must be the ${what} as a JSON string, e.g. ${example}, or as text/plain`);
  const content = jsonStringContent(text) ?? text;
  // Only a JSON string's escape can make one (UTF-8 bytes cannot): each such body (a log line, a secret's or an
  // environment variable's value) is kept as text, where it would be U+FFFD.
  if (!holdsLoneSurrogate(content)) return content;
  if (body.loneSurrogatesReplaced === true) return wellFormed(content);
  throw bodyError(`The ${what} ${LONE_SURROGATE_TEXT_MESSAGE}`);
}

/** The content of `text` when it is one JSON string; undefined for any other text, JSON or not. */
function jsonStringContent(text: string): string | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Content-Type of a plain-text answer, written as Conductor's Spring server writes it (`produces = TEXT_PLAIN_VALUE`
 * and the UTF-8 charset its StringHttpMessageConverter adds): clients generated from its spec look for this exact text,
 * such as swift-conductor's Go client, whose decode reads a string answer only when its Content-Type contains
 * `text/plain;charset=UTF-8` and otherwise returns an empty workflow or task id without an error.
 */
export const TEXT_CONTENT_TYPE = "text/plain;charset=UTF-8";

/** A plain-text response, as Conductor answers starts and task updates with a bare id. */
export function textResponse(text: string, status = 200): Response {
  return new Response(text, { status, headers: { "content-type": TEXT_CONTENT_TYPE } });
}

/** A response whose body is JSON already serialised (by the execution's object). */
export function jsonTextResponse(json: string, status = 200): Response {
  return new Response(json, { status, headers: { "content-type": "application/json" } });
}
