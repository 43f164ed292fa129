import type { EngineConfig } from "../../config";
import { headerValueProblem, isHeaderName, TOKEN_DESCRIPTION } from "../../http-syntax";
import type { JsonObject, JsonValue } from "../../model";
import { setOwn } from "../../own-property";
import { toBase64 } from "./response";
import { hedgingAttemptsOf, HTTP_METHODS, isFormContentType, isPlainObjectOrList, MAX_HEDGING_ATTEMPTS } from "./validate";

/** A fully resolved outbound request, ready for `fetch`. */
export interface HttpRequestSpec {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** Absent for methods that carry no body. */
  body?: string;
  /** Time allowed until response headers arrive, on top of the read timeout (ms). */
  connectTimeoutMs: number;
  /** Time allowed to read the response (ms). */
  readTimeoutMs: number;
  /**
   * Orkes' `hedgingConfig.maxAttempts` when above 1: how many identical requests to send at once, the first
   * successful answer being the task's. Absent: one request.
   */
  hedgingAttempts?: number;
}

/** Either a request or the reason none can be made; the reason becomes the task's failure reason. */
/**
 * The request, or why there is none: `missing` when the input gives no uri or method at all (Conductor's "Missing HTTP
 * URI": the task FAILED, for its retries, which resolve the input again), else a value no retry can make valid.
 */
export type HttpRequestBuild = { ok: true; request: HttpRequestSpec } | { ok: false; reason: string; missing?: true };

const METHODS: ReadonlySet<string> = new Set(HTTP_METHODS);

/** Methods whose requests carry no body: fetch refuses one, so it is dropped rather than failing the task. */
const BODYLESS_METHODS = new Set(["GET", "HEAD"]);

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The request fields of an HTTP task's input. Both placements of the spec are honoured: flat in
 * `inputParameters` and nested in `inputParameters.http_request`; the nested one wins field by field,
 * because it is the form of the worked examples and the more specific of the two.
 */
export function httpRequestFields(input: JsonObject): JsonObject {
  const nested = input["http_request"];
  if (!isObject(nested)) return input;
  const { http_request: _ignored, ...flat } = input;
  return { ...flat, ...nested };
}

/**
 * Whether the task completes asynchronously: the task-level flag or the input one (the spec shows both). A task-level
 * `true` wins over an input `false` (the spec leaves precedence open; task level is where Conductor's own examples put
 * it), but a task-level `false` does not turn an input `true` off: it is the default every Conductor WorkflowTask
 * carries (a field that defaults to false and is always written, as this service's read-back writes it too), so it
 * cannot tell "given false" from "not given", and a definition read back and registered again must not change.
 */
export function isAsyncComplete(taskLevel: boolean | undefined, input: JsonObject): boolean {
  return taskLevel === true || httpRequestFields(input)["asyncComplete"] === true;
}

/**
 * The requests Orkes' `hedgingConfig` asks for (1 when it is absent or null, or its `maxAttempts` is, or 0), or why
 * it cannot be served: registration checks literal values, one from an expression is only known now.
 */
function hedgingAttempts(config: JsonValue | undefined): number | string {
  if (config === undefined || config === null) return 1;
  if (!isObject(config)) return `HTTP task hedgingConfig must be an object {maxAttempts}, but it resolved to ${JSON.stringify(config).slice(0, 40)}`;
  const asked = config["maxAttempts"];
  if (asked === undefined || asked === null) return 1;
  const attempts = hedgingAttemptsOf(asked);
  if (attempts === undefined) return `HTTP task hedgingConfig.maxAttempts must be a whole number from 1 to ${MAX_HEDGING_ATTEMPTS}, but it resolved to ${JSON.stringify(asked).slice(0, 40)}`;
  return Math.max(attempts, 1);
}

/**
 * How many requests one attempt of an HTTP task whose (stored) input is `input` sends at once: its hedging attempts, or
 * 1 (a hedgingConfig that cannot be served sends none, but is counted as one). Each is a subrequest of the invocation
 * that sends it, as is each redirect followed, which cannot be known before the answers come.
 */
export function requestsPerAttempt(input: JsonObject): number {
  const attempts = hedgingAttempts(httpRequestFields(input)["hedgingConfig"]);
  return typeof attempts === "number" ? attempts : 1;
}

/** Parses a timeout given as a number or a string of digits; anything else means "not given". */
function timeoutMs(value: JsonValue | undefined): number | undefined {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return Math.floor(value);
  if (typeof value === "string" && /^\d+$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

/**
 * The connect and read timeouts a task asked for, defaulted and capped by configuration. 0 means no
 * timeout of the task's own, as in Conductor: the request may then take as long as the cap allows.
 */
export function httpTimeouts(input: JsonObject, config: EngineConfig): { connectTimeoutMs: number; readTimeoutMs: number } {
  const fields = httpRequestFields(input);
  const effective = (asked: number | undefined, fallback: number) => (asked === 0 ? config.httpMaxTimeoutMs : Math.min(asked ?? fallback, config.httpMaxTimeoutMs));
  return {
    connectTimeoutMs: effective(timeoutMs(fields["connectionTimeOut"]), config.httpConnectTimeoutMs),
    readTimeoutMs: effective(timeoutMs(fields["readTimeOut"]), config.httpReadTimeoutMs),
  };
}

/**
 * Percent-encodes each query parameter name and value of a URI (the spec's `encode: true`).
 * The rest of the URI is left alone; `=` inside a value is part of the value.
 */
export function encodeQuery(uri: string): string {
  const queryStart = uri.indexOf("?");
  if (queryStart < 0) return uri;
  const hashStart = uri.indexOf("#", queryStart);
  const query = uri.slice(queryStart + 1, hashStart < 0 ? undefined : hashStart);
  const fragment = hashStart < 0 ? "" : uri.slice(hashStart);
  const encoded = query
    .split("&")
    .map((pair) => {
      if (pair === "") return pair;
      const eq = pair.indexOf("=");
      if (eq < 0) return encodeURIComponent(pair);
      return `${encodeURIComponent(pair.slice(0, eq))}=${encodeURIComponent(pair.slice(eq + 1))}`;
    })
    .join("&");
  return `${uri.slice(0, queryStart)}?${encoded}${fragment}`;
}

/**
 * A header's value as sent: without leading and trailing HTTP whitespace, which fetch strips anyway (a value may end in
 * a newline that a secret or an input was stored with: `echo token | wrangler secret put`), so only a line break or
 * NUL inside the value is refused.
 */
function headerValue(value: JsonValue | undefined): string | undefined {
  if (typeof value === "string") return value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  // A list of values (the Go and Python SDKs' headers) is one header, its values joined as HTTP joins repeated ones.
  if (Array.isArray(value)) {
    const values = value.map(headerValue);
    return values.length > 0 && values.every((each) => each !== undefined) ? values.join(", ") : undefined;
  }
  return undefined;
}

/** True for an object, or a list holding one at any depth: what {@link headerValue} cannot send (a null it skips). */
function holdsObject(value: JsonValue | undefined): boolean {
  if (Array.isArray(value)) return value.some(holdsObject);
  return isObject(value);
}

/**
 * Why a header cannot be sent, or undefined when it can. Names are checked at registration, but a whole
 * `headers` expression is only known now; fetch would refuse either with an opaque TypeError. The value is
 * never quoted: it may hold a secret.
 */
function headerProblem(name: string, value: string): string | undefined {
  if (!isHeaderName(name)) return `HTTP task header name ${JSON.stringify(name.slice(0, 60))} must be ${TOKEN_DESCRIPTION}`;
  const problem = headerValueProblem(value);
  if (problem !== undefined) return `HTTP task header ${name} is not a valid header value: ${problem}`;
  return undefined;
}

/** The value of the header `name` (in any case), or undefined when there is none. */
function headerNamed(headers: Record<string, string>, name: string): string | undefined {
  const lower = name.toLowerCase();
  const key = Object.keys(headers).find((each) => each.toLowerCase() === lower);
  return key === undefined ? undefined : headers[key];
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return headerNamed(headers, name) !== undefined;
}

/**
 * An object body as the form fields a `application/x-www-form-urlencoded` request carries (`{To: "+1555", Body: "hi"}`
 * → `To=%2B1555&Body=hi`), where its JSON text under that type reads to any server as one field named after all of it:
 * a text, number or boolean is a field, a list of them the field repeated (as Spring's FormHttpMessageConverter writes
 * a MultiValueMap), a null none. A nested object has no one form encoding (`a[b]=1`, `a.b=1`…): the reason says to
 * write the body as that text.
 */
function formBody(body: JsonObject): string | { problem: string } {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) {
    for (const each of Array.isArray(value) ? value : [value]) {
      if (each === null) continue;
      if (isPlainObjectOrList(each)) {
        return { problem: `HTTP task body field ${JSON.stringify(name.slice(0, 60))} holds an object (or a list in its list), which has no one application/x-www-form-urlencoded encoding: give the body as the form's text (a=1&b=2), or its fields as texts, numbers, booleans or lists of them` };
      }
      form.append(name, String(each));
    }
  }
  return form.toString();
}

function setHeader(headers: Record<string, string>, name: string, value: string): void {
  const lower = name.toLowerCase();
  for (const key of Object.keys(headers)) if (key.toLowerCase() === lower) delete headers[key];
  setOwn(headers, name, value);
}

/**
 * The URI a task's `uri` names: as it is when absolute (a server address), else (a partial value, as the spec allows
 * with a vipAddress) a path on the service at `vipAddress`: `host[:port]`, reached over http as Conductor's discovery
 * lookup gave it, or a URL with its scheme and base path (`https://orders.example.com/v2`).
 */
export function locatedUri(uri: string, vipAddress: JsonValue | undefined): string {
  if (typeof vipAddress !== "string" || vipAddress.trim() === "" || /^[a-z][a-z0-9+.-]*:/i.test(uri)) return uri;
  const vip = vipAddress.trim();
  const base = /^https?:\/\//i.test(vip) ? vip : `http://${vip}`;
  return `${base.replace(/\/+$/, "")}${uri.startsWith("/") ? uri : `/${uri}`}`;
}

/** A URL component's percent-decoding, or the text as it is when it holds a `%` that starts no escape. */
function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Takes the credentials out of a uri written `https://user:password@host/…` and returns them as an `Authorization:
 * Basic` value (of their UTF-8 bytes, as curl and Apache HttpClient send them), or undefined when it holds none. The
 * runtime's fetch would drop them without a word, the service answering 401 to a request that looks right; and left in
 * the URL they would be quoted in every reason naming the request.
 */
function takeUserinfo(url: URL): string | undefined {
  if (url.username === "" && url.password === "") return undefined;
  const pair = `${percentDecoded(url.username)}:${percentDecoded(url.password)}`;
  url.username = "";
  url.password = "";
  return `Basic ${toBase64(new TextEncoder().encode(pair))}`;
}

/**
 * Builds the outbound request from an HTTP task's resolved input.
 * `idempotencyKey` is sent as `Idempotency-Key` (unless the task sets that header itself) so a
 * receiver can recognise the same step delivered twice after an eviction.
 */
export function buildHttpRequest(input: JsonObject, config: EngineConfig, idempotencyKey: string): HttpRequestBuild {
  const fields = httpRequestFields(input);
  const uri = fields["uri"];
  const method = fields["method"];
  if (typeof uri !== "string" || uri.trim() === "") return { ok: false, reason: "HTTP task input has no uri", missing: true };
  if (typeof method !== "string" || method.trim() === "") return { ok: false, reason: "HTTP task input has no method", missing: true };
  const upperMethod = method.trim().toUpperCase();
  // Registration checks literal values; one from an expression is only known now.
  if (!METHODS.has(upperMethod)) {
    return { ok: false, reason: `HTTP task method must be one of ${HTTP_METHODS.join(", ")}, but it resolved to ${JSON.stringify(method.slice(0, 40))}` };
  }

  const located = locatedUri(uri.trim(), fields["vipAddress"]);
  const target = fields["encode"] === false ? located : encodeQuery(located);
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { ok: false, reason: `HTTP task uri is not an absolute URL${typeof fields["vipAddress"] === "string" ? ` (nor a path on its vipAddress)` : " (give a vipAddress to send a path to)"}: ${uri}` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: `HTTP task uri must use http or https, not ${url.protocol.replace(":", "")}` };
  }

  const credentials = takeUserinfo(url);
  const headers: Record<string, string> = {};
  const extra = fields["headers"];
  if (isObject(extra)) {
    for (const [name, value] of Object.entries(extra)) {
      const text = headerValue(value);
      if (text === undefined) {
        // Registration refuses such a value written out; one from an expression dropped without a word sent a request
        // that looked right but lacked the header (an API key read from the wrong field of an object).
        if (holdsObject(value)) return { ok: false, reason: `HTTP task header ${JSON.stringify(name.slice(0, 60))} resolved to an object (or a list holding one), which has no header form: give a text, a number, a boolean or a list of them` };
        continue;
      }
      const problem = headerProblem(name, text);
      if (problem !== undefined) return { ok: false, reason: problem };
      setOwn(headers, name, text);
    }
  }
  const accept = headerValue(fields["accept"]);
  const contentType = headerValue(fields["contentType"]);
  for (const [field, value] of [["accept", accept], ["contentType", contentType]] as const) {
    const problem = value === undefined ? undefined : headerValueProblem(value);
    if (problem !== undefined) return { ok: false, reason: `HTTP task ${field} is not a valid header value: ${problem}` };
  }
  if (accept !== undefined) setHeader(headers, "Accept", accept);
  else if (!hasHeader(headers, "Accept")) headers["Accept"] = "application/json";
  if (!hasHeader(headers, "Idempotency-Key")) headers["Idempotency-Key"] = idempotencyKey;
  if (credentials !== undefined && !hasHeader(headers, "Authorization")) headers["Authorization"] = credentials;

  let body: string | undefined;
  const rawBody = fields["body"];
  // Null is no body, as in Conductor (an expression naming what is not there), rather than the text "null".
  if (!BODYLESS_METHODS.has(upperMethod) && rawBody !== undefined && rawBody !== null) {
    if (contentType !== undefined) setHeader(headers, "Content-Type", contentType);
    else if (!hasHeader(headers, "Content-Type")) headers["Content-Type"] = "application/json";
    if (typeof rawBody === "string") body = rawBody;
    else if (isObject(rawBody) && isFormContentType(headerNamed(headers, "Content-Type"))) {
      const form = formBody(rawBody);
      if (typeof form !== "string") return { ok: false, reason: form.problem };
      body = form;
    } else body = JSON.stringify(rawBody);
  }

  const hedging = hedgingAttempts(fields["hedgingConfig"]);
  if (typeof hedging === "string") return { ok: false, reason: hedging };
  const { connectTimeoutMs, readTimeoutMs } = httpTimeouts(input, config);
  const request: HttpRequestSpec = { url: url.toString(), method: upperMethod, headers, connectTimeoutMs, readTimeoutMs };
  if (body !== undefined) request.body = body;
  if (hedging > 1) request.hedgingAttempts = hedging;
  return { ok: true, request };
}
