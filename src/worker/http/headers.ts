import { errorResponse } from "./errors";

/** Request headers a browser app may send across origins (everything this API reads). */
const CORS_REQUEST_HEADERS = ["Content-Type", "Authorization", "X-Authorization", "X-API-Key", "Idempotency-Key"];
const CORS_METHODS = ["GET", "POST", "PUT", "DELETE"];
/**
 * Response headers a cross-origin app may read besides the safelisted ones (`Allow`: the methods a 405's path takes;
 * `WWW-Authenticate`: a 401's challenge, whose `error="invalid_token"` tells a token to replace from no credentials).
 */
const CORS_EXPOSED_HEADERS = ["Retry-After", "Allow", "X-Queues-Left-Out", "WWW-Authenticate"];
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * Headers every answer of the Worker carries: nothing it says is a page to render, frame or cache, and no
 * referrer leaves with a link. (The UI's static files get theirs from `ui/_headers`.)
 */
const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ["X-Content-Type-Options", "nosniff"],
  ["X-Frame-Options", "DENY"],
  ["Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"],
  ["Referrer-Policy", "no-referrer"],
  ["Cache-Control", "no-store"],
];

/**
 * Which browser origins may call the API (`CORS_ALLOWED_ORIGINS`): none by default (same origin only, which is
 * how the built-in UI calls it), a list of exact origins, or `*` for any. Credentials travel in headers, never
 * cookies, so no origin is ever given `Access-Control-Allow-Credentials`.
 */
export interface CorsPolicy {
  anyOrigin: boolean;
  origins: ReadonlySet<string>;
}

/** Parses `CORS_ALLOWED_ORIGINS` (comma-separated origins such as `https://app.example.com`, or `*`). */
export function parseCorsPolicy(raw: string | undefined): CorsPolicy {
  const entries = (raw ?? "").split(",").map((entry) => entry.trim().replace(/\/+$/, "").toLowerCase()).filter(Boolean);
  return { anyOrigin: entries.includes("*"), origins: new Set(entries.filter((entry) => entry !== "*")) };
}

function allowedOrigin(policy: CorsPolicy, origin: string | null): string | undefined {
  if (origin === null) return undefined;
  if (policy.anyOrigin) return origin;
  return policy.origins.has(origin.toLowerCase()) ? origin : undefined;
}

/** True for a CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`. */
export function isPreflight(request: Request): boolean {
  return request.method === "OPTIONS" && request.headers.has("Origin") && request.headers.has("Access-Control-Request-Method");
}

/**
 * Answers a preflight without authentication (browsers send none): 204 with what may be sent for an allowed
 * origin, 403 in the contract's error shape for any other.
 */
export function preflightResponse(request: Request, policy: CorsPolicy): Response {
  const origin = allowedOrigin(policy, request.headers.get("Origin"));
  if (origin === undefined) {
    return errorResponse(403, "PERMISSION_DENIED", "Cross-origin requests from this origin are not allowed (CORS_ALLOWED_ORIGINS)", { headers: { Vary: "Origin" } });
  }
  return new Response(null, {
    status: 204,
    headers: {
      "Access-Control-Allow-Origin": origin,
      "Access-Control-Allow-Methods": CORS_METHODS.join(", "),
      "Access-Control-Allow-Headers": CORS_REQUEST_HEADERS.join(", "),
      "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_SECONDS),
      Vary: "Origin",
    },
  });
}

/**
 * The Worker's answer with its security headers and, for an allowed origin, the CORS headers that let the
 * calling page read it (errors included, so an app can show why it was refused).
 */
export function withResponseHeaders(response: Response, request: Request, policy: CorsPolicy): Response {
  const answer = withMutableHeaders(response);
  for (const [name, value] of SECURITY_HEADERS) {
    if (!answer.headers.has(name)) answer.headers.set(name, value);
  }
  // A request's URL is absolute with its scheme in lower case: a prefix test, not a parse per answer.
  if (request.url.startsWith("https:")) answer.headers.set("Strict-Transport-Security", "max-age=31536000; includeSubDomains");
  const origin = allowedOrigin(policy, request.headers.get("Origin"));
  if (origin !== undefined) {
    answer.headers.set("Access-Control-Allow-Origin", origin);
    answer.headers.set("Access-Control-Expose-Headers", CORS_EXPOSED_HEADERS.join(", "));
  }
  if (policy.anyOrigin || policy.origins.size > 0) answer.headers.append("Vary", "Origin");
  return answer;
}

/**
 * The response itself when its headers can be changed (every response the routes build), else a copy.
 * Copying costs a stream hop per answer, so it is kept for responses that need it (e.g. from `fetch`).
 */
function withMutableHeaders(response: Response): Response {
  try {
    response.headers.set("X-Content-Type-Options", "nosniff");
    return response;
  } catch {
    return new Response(response.body, response);
  }
}
