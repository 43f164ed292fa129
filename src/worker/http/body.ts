import { ApiError, validationError } from "./errors";

/**
 * True when a body with this Content-Type is read as JSON: a JSON type, or none at all. The Conductor
 * SDKs repeat a call after refreshing their token with the body but without its Content-Type, and with
 * credentials in headers (never cookies) an undeclared body opens no cross-site path. A body declared as
 * something else (text, a form) is refused: 415.
 */
function readsAsJson(contentType: string | null): boolean {
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
    const body: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The outcome of reading a JSON body: `present: false` when the request had no body at all. */
export type JsonBody = { present: false } | { present: true; value: unknown };

/**
 * Reads a JSON body: 413 over the size limit, 415 when a non-empty body is declared as something else,
 * 400 when it does not parse.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<JsonBody> {
  const bytes = await readBodyBytes(request, maxBytes);
  const text = new TextDecoder().decode(bytes);
  if (text.trim() === "") return { present: false };
  if (!readsAsJson(request.headers.get("content-type"))) {
    throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "Request body must be JSON: send it with Content-Type: application/json");
  }
  try {
    return { present: true, value: JSON.parse(text) as unknown };
  } catch {
    // Not the parser's message: it quotes the body, which may hold a credential.
    throw new ApiError(400, "VALIDATION_ERROR", "Request body is not valid JSON");
  }
}

/** {@link readJsonBody} for a request that must have one: no body is a 400. */
export async function readRequiredJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const body = await readJsonBody(request, maxBytes);
  if (!body.present) throw validationError("Request body is required", [{ path: "(body)", message: "is required" }]);
  return body.value;
}

/** A plain-text response, as Conductor answers starts and task updates with a bare id. */
export function textResponse(text: string, status = 200): Response {
  return new Response(text, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
}

/** A response whose body is JSON already serialised (by the execution's object). */
export function jsonTextResponse(json: string, status = 200): Response {
  return new Response(json, { status, headers: { "content-type": "application/json" } });
}
